//! Library dependencies, as DTrace handles them: `#pragma D depends_on library NAME` in a
//! library directory's file orders the files (each after those it depends on); a
//! dependency on a file that is not there, or a cycle, is an error. A file depending on a
//! kernel module that is not loaded is left out, and so is every file depending on it. A
//! program (not a library) may not depend on a library (D_PRAGMA_DEPEND).

use std::collections::HashMap;

use dtrace_frontend::ast::Item;
use dtrace_frontend::span::Origin;
use dtrace_frontend::{CompileError, Source};

use crate::Failure;

/// What a file's `#pragma D depends_on` lines name: libraries and modules.
#[derive(Default)]
struct Needs<'a> {
    libraries: Vec<&'a str>,
    modules: Vec<&'a str>,
}

fn needs(text: &str) -> Needs<'_> {
    let mut n = Needs::default();
    for line in text.lines() {
        let words: Vec<&str> = line
            .trim_start()
            .strip_prefix('#')
            .map_or(Vec::new(), |l| l.split_whitespace().collect());
        match words.as_slice() {
            ["pragma", "D", "depends_on", "library", name] => n.libraries.push(name),
            ["pragma", "D", "depends_on", "module", name] => n.modules.push(name),
            _ => {}
        }
    }
    n
}

/// Whether a kernel module is there: the kernel itself, or a module the kernel knows.
fn module_present(name: &str) -> bool {
    name == "vmlinux" || std::path::Path::new("/sys/module").join(name).is_dir()
}

/// A library directory's files (file name, source) in dependency order, without those
/// whose modules are missing; why not, in DTrace's words.
pub fn order(files: Vec<(String, Source)>) -> Result<Vec<(String, Source)>, String> {
    let path = |i: usize| match &files[i].1.origin {
        Origin::Script(p) | Origin::Library(p) => p.clone(),
        Origin::Description => files[i].0.clone(),
    };
    let index: HashMap<&str, usize> = files
        .iter()
        .enumerate()
        .map(|(i, (name, _))| (name.as_str(), i))
        .collect();
    let mut deps: Vec<Vec<usize>> = Vec::new();
    let mut usable: Vec<bool> = Vec::new();
    for (i, (_, src)) in files.iter().enumerate() {
        let n = needs(&src.text);
        let mut d = Vec::new();
        for lib in n.libraries {
            let Some(&j) = index.get(lib) else {
                let dir = path(i);
                let dir = std::path::Path::new(&dir)
                    .parent()
                    .map(|p| p.join(lib).display().to_string())
                    .unwrap_or_else(|| lib.to_string());
                return Err(format!("Invalid library dependency in {}: {dir}", path(i)));
            };
            d.push(j);
        }
        deps.push(d);
        usable.push(n.modules.iter().all(|m| module_present(m)));
    }
    // Depth-first, each file after its dependencies; a file met again while its own
    // dependencies are being visited closes a cycle.
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Visiting,
        Done,
    }
    let mut marks = vec![Mark::New; files.len()];
    let mut sorted = Vec::new();
    fn visit(
        i: usize,
        deps: &[Vec<usize>],
        marks: &mut [Mark],
        sorted: &mut Vec<usize>,
    ) -> Result<(), (usize, usize)> {
        marks[i] = Mark::Visiting;
        for &j in &deps[i] {
            match marks[j] {
                Mark::Visiting => return Err((i, j)),
                Mark::New => visit(j, deps, marks, sorted)?,
                Mark::Done => {}
            }
        }
        marks[i] = Mark::Done;
        sorted.push(i);
        Ok(())
    }
    for i in 0..files.len() {
        if marks[i] == Mark::New {
            visit(i, &deps, &mut marks, &mut sorted).map_err(|(a, b)| {
                format!("Cyclic dependency detected: {} => {}", path(b), path(a))
            })?;
        }
    }
    // In order, a file is usable if its modules are and its dependencies were.
    for &i in &sorted {
        usable[i] = usable[i] && deps[i].iter().all(|&j| usable[j]);
    }
    let mut slots: Vec<Option<(String, Source)>> = files.into_iter().map(Some).collect();
    Ok(sorted
        .into_iter()
        .filter(|&i| usable[i])
        .filter_map(|i| slots[i].take())
        .collect())
}

/// DTrace's D_PRAGMA_DEPEND for a program naming a library it depends on, or a kernel
/// module that is not there.
pub fn check_program(items: &[Vec<Item>], sources: &[Source]) -> Result<(), Failure> {
    for item in items.iter().take(sources.len()).flatten() {
        let Item::Pragma(p) = item else { continue };
        let words: Vec<&str> = p.words.iter().map(String::as_str).collect();
        let message = match words.as_slice() {
            ["D", "depends_on", "library", ..] => {
                "main program may not explicitly depend on a library".to_string()
            }
            ["D", "depends_on", "module", name, ..] if !module_present(name) => {
                format!("program requires module {name}")
            }
            _ => continue,
        };
        return Err(Failure::Compile(
            CompileError::new("D_PRAGMA_DEPEND", message, p.span),
            sources.to_vec(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lib(name: &str, text: &str) -> (String, Source) {
        (
            name.to_string(),
            Source::new(Origin::Library(format!("/l/{name}")), text.to_string()),
        )
    }

    fn names(files: Vec<(String, Source)>) -> Vec<String> {
        files.into_iter().map(|(n, _)| n).collect()
    }

    #[test]
    fn dependencies_order_files() {
        let files = vec![
            lib("a.d", "#pragma D depends_on library b.d\n"),
            lib("b.d", "#pragma D depends_on library c.d\n"),
            lib("c.d", ""),
        ];
        assert_eq!(names(order(files).expect("ordered")), ["c.d", "b.d", "a.d"]);
    }

    #[test]
    fn missing_modules_leave_files_out() {
        let files = vec![
            lib("a.d", "#pragma D depends_on library b.d\n"),
            lib("b.d", "#pragma D depends_on module no_such_module_here\n"),
            lib("c.d", "#pragma D depends_on module vmlinux\n"),
        ];
        assert_eq!(names(order(files).expect("ordered")), ["c.d"]);
    }

    #[test]
    fn bad_dependencies_are_errors() {
        let missing = vec![lib("a.d", "#pragma D depends_on library nosuch.d\n")];
        assert_eq!(
            order(missing).err(),
            Some("Invalid library dependency in /l/a.d: /l/nosuch.d".into())
        );
        let cycle = vec![
            lib("a.d", "#pragma D depends_on library b.d\n"),
            lib("b.d", "#pragma D depends_on library a.d\n"),
        ];
        assert_eq!(
            order(cycle).err(),
            Some("Cyclic dependency detected: /l/a.d => /l/b.d".into())
        );
    }
}

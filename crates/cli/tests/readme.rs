//! The README's examples (and docs/JSON.md's) run as shown. The rule, also stated in the
//! README's tour:
//!
//! - Only code blocks without a language tag are read. In them, a *command* is a line
//!   starting with `dtrace ` or `./target/release/dtrace `, after an optional `$ ` prompt and
//!   an optional `sudo `; a line ending inside a single-quoted string goes on to the next
//!   line, as in the shell. Other lines without a prompt (`cargo build`) are not run.
//! - After a command written with a `$ ` prompt, the lines up to the next prompt or the end
//!   of the block are exactly what it prints on stdout; a line `...` stands for any number
//!   of lines (output that varies: samples, timestamps, pids). A command without a prompt
//!   shows no output.
//! - A block whose first line is `/* NAME.d */` is a script file named `NAME.d`, there for
//!   a later `dtrace -s NAME.d`.
//! - A block whose first line is `/* NAME.c */` is a C program, built into `NAME` before
//!   any command runs, the DTrace way when a `/* NAME_provider.d */` block gives its
//!   provider file (`dtrace -h -s NAME_provider.d`, `gcc -c NAME.c`, `dtrace -G -s
//!   NAME_provider.d NAME.o`, `gcc -o NAME NAME.o NAME_provider.o`), else by `gcc -o NAME
//!   NAME.c`.
//!
//! Every command runs (with the test binary's `dtrace`, in a directory holding those script
//! files, with a timeout) and must exit with status 0 and, where its output is shown, print
//! it. A `$ ` line running anything else fails the test: the README says nothing it cannot
//! show.

mod common;

use std::path::Path;

/// One command of a document, what it must print, where it is.
struct Example {
    file: &'static str,
    line: usize,
    words: Vec<String>,
    /// The stdout lines shown (`...` matching any lines); `None` when not shown.
    output: Option<Vec<String>>,
}

/// The documents whose examples run, relative to the repository.
const DOCUMENTS: &[&str] = &["README.md", "docs/JSON.md", "docs/PROMETHEUS.md"];

/// The blocks of untagged code in `text`: each line with its 1-based number.
fn code_blocks(text: &str) -> Vec<Vec<(usize, &str)>> {
    let mut blocks = Vec::new();
    let mut current: Option<(bool, Vec<(usize, &str)>)> = None;
    for (i, line) in text.lines().enumerate() {
        if let Some(tag) = line.strip_prefix("```") {
            match current.take() {
                Some((untagged, lines)) => {
                    if untagged {
                        blocks.push(lines);
                    }
                }
                None => current = Some((tag.trim().is_empty(), Vec::new())),
            }
            continue;
        }
        if let Some((_, lines)) = &mut current {
            lines.push((i + 1, line));
        }
    }
    assert!(current.is_none(), "a code block is not closed");
    blocks
}

/// A line's command text, if it is one: without the prompt and `sudo`, and whether it had
/// a prompt.
fn command(line: &str) -> Option<(&str, bool)> {
    let (rest, prompted) = match line.strip_prefix("$ ") {
        Some(rest) => (rest, true),
        None => (line, false),
    };
    let rest = rest.strip_prefix("sudo ").unwrap_or(rest);
    let is_dtrace = rest.starts_with("dtrace ") || rest.starts_with("./target/release/dtrace ");
    match (is_dtrace, prompted) {
        (true, _) => Some((rest, prompted)),
        (false, true) => panic!("only dtrace commands may be shown with a prompt: {line}"),
        (false, false) => None,
    }
}

/// Split a command into words as a POSIX shell does for plain words and quotes (no
/// expansions); `None` while a quote is still open.
fn shell_words(text: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\' | '$' | '`') => w.push(c),
                            c => {
                                w.push('\\');
                                w.push(c);
                            }
                        },
                        c => w.push(c),
                    }
                }
            }
            '\\' => word.get_or_insert_with(String::new).push(chars.next()?),
            c if c.is_whitespace() => words.extend(word.take()),
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

/// The examples and script files of document `file`.
fn examples(file: &'static str, text: &str) -> (Vec<Example>, Vec<(String, String)>) {
    let mut examples = Vec::new();
    let mut scripts = Vec::new();
    for block in code_blocks(text) {
        if let Some(name) = block.first().and_then(|(_, l)| {
            l.strip_prefix("/* ")
                .and_then(|l| l.strip_suffix(" */"))
                .filter(|n| (n.ends_with(".d") || n.ends_with(".c")) && !n.contains(' '))
        }) {
            let body: Vec<&str> = block.iter().map(|(_, l)| *l).collect();
            scripts.push((name.to_string(), body.join("\n") + "\n"));
            continue;
        }
        let mut i = 0;
        while i < block.len() {
            let (line, first) = block[i];
            i += 1;
            let Some((mut text, prompted)) = command(first) else {
                continue;
            };
            let mut joined = String::new();
            let words = loop {
                joined.push_str(text);
                if let Some(words) = shell_words(&joined) {
                    break words;
                }
                let Some(&(_, next)) = block.get(i) else {
                    panic!("{file}:{line}: a quote is not closed");
                };
                joined.push('\n');
                text = next;
                i += 1;
            };
            let output = prompted.then(|| {
                let start = i;
                while i < block.len() && !block[i].1.starts_with("$ ") {
                    i += 1;
                }
                block[start..i].iter().map(|(_, l)| l.to_string()).collect()
            });
            examples.push(Example {
                file,
                line,
                words,
                output,
            });
        }
    }
    (examples, scripts)
}

/// Whether `actual` lines are the `expected` ones, a `...` line matching any lines.
fn lines_match(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|skip| lines_match(rest, &actual[skip..]))
        }
        Some((first, rest)) => {
            actual.first() == Some(&first.as_str()) && lines_match(rest, &actual[1..])
        }
    }
}

#[test]
fn shell_words_split_as_the_shell_does() {
    let words = shell_words(r#"dtrace -qn 'BEGIN { printf("%d\n", 1); }' -x "a b" c\ d"#);
    assert_eq!(
        words.unwrap(),
        [
            "dtrace",
            "-qn",
            "BEGIN { printf(\"%d\\n\", 1); }",
            "-x",
            "a b",
            "c d"
        ]
    );
    assert_eq!(shell_words("dtrace -n 'BEGIN {"), None);
    let any = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(lines_match(&any(&["a", "...", "c"]), &["a", "b", "b", "c"]));
    assert!(lines_match(&any(&["..."]), &[]));
    assert!(!lines_match(&any(&["a", "..."]), &["b"]));
}

#[test]
fn every_documented_command_runs_as_shown() {
    common::require_root();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = common::scratch("readme", "examples");
    let mut all = Vec::new();
    for file in DOCUMENTS {
        let text = std::fs::read_to_string(root.join(file)).expect("read the document");
        let (examples, scripts) = examples(file, &text);
        for (name, body) in &scripts {
            std::fs::write(dir.join(name), body).expect("write a script of the document");
        }
        for (name, _) in &scripts {
            if let Some(program) = name.strip_suffix(".c") {
                build_program(&dir, program);
            }
        }
        all.extend(examples);
    }
    let readme = all.iter().filter(|e| e.file == "README.md").count();
    assert!(readme >= 15, "only {readme} commands found in README.md");
    // Each runs on a thread of its own: the tour's tick-Ns waits overlap.
    let failures: Vec<String> = std::thread::scope(|s| {
        let runs: Vec<_> = all.iter().map(|e| s.spawn(|| check(e, &dir))).collect();
        runs.into_iter()
            .filter_map(|r| match r.join() {
                Ok(result) => result.err(),
                // A timeout (common::finish panics): its message is the failure.
                Err(panic) => Some(
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .unwrap_or_else(|| "an example panicked".into()),
                ),
            })
            .collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Build the C program `NAME.c` of a document in `dir` into `NAME` (see the rule above).
fn build_program(dir: &Path, name: &str) {
    let provider = format!("{name}_provider");
    let steps: Vec<Vec<String>> = if dir.join(format!("{provider}.d")).exists() {
        let dtrace = env!("CARGO_BIN_EXE_dtrace").to_string();
        vec![
            vec![
                dtrace.clone(),
                "-h".into(),
                "-s".into(),
                format!("{provider}.d"),
            ],
            vec!["gcc".into(), "-c".into(), format!("{name}.c")],
            vec![
                dtrace,
                "-G".into(),
                "-s".into(),
                format!("{provider}.d"),
                format!("{name}.o"),
            ],
            vec![
                "gcc".into(),
                "-o".into(),
                name.into(),
                format!("{name}.o"),
                format!("{provider}.o"),
            ],
        ]
    } else {
        vec![vec![
            "gcc".into(),
            "-o".into(),
            name.into(),
            format!("{name}.c"),
        ]]
    };
    for step in steps {
        let out = std::process::Command::new(&step[0])
            .args(&step[1..])
            .current_dir(dir)
            .output()
            .expect("run a build step");
        assert!(
            out.status.success(),
            "building {name}.c of the document: {step:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Run one example in `dir`; what went wrong.
fn check(example: &Example, dir: &Path) -> Result<(), String> {
    let child = common::command(&[])
        .args(&example.words[1..])
        .current_dir(dir)
        .spawn()
        .expect("start dtrace");
    let where_ = format!(
        "{}:{}: {}",
        example.file,
        example.line,
        example.words.join(" ")
    );
    let run = common::finish(child, &where_);
    if run.status != 0 {
        return Err(format!(
            "{where_}\nexited with {}:\n{}",
            run.status, run.stderr
        ));
    }
    let Some(expected) = &example.output else {
        return Ok(());
    };
    let actual: Vec<&str> = match run.stdout.strip_suffix('\n') {
        Some(text) => text.split('\n').collect(),
        None => run.stdout.lines().collect(),
    };
    let ends_well = run.stdout.is_empty() || run.stdout.ends_with('\n');
    if ends_well && lines_match(expected, &actual) {
        Ok(())
    } else {
        Err(format!(
            "{where_}\nprinted:\n{}\nwhere the document shows:\n{}\n",
            run.stdout,
            expected.join("\n")
        ))
    }
}

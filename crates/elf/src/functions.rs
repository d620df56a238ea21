//! Every function symbol of an object, in one place for the `pid` provider's functions and
//! the user-stack symbolizer: the object's own symbol table (`.symtab`, else `.dynsym`)
//! and, for a stripped object, the static functions it lost: the `.symtab` of its separate
//! debug file ([`debug_file`]) when one is installed, else its MiniDebugInfo
//! (`.gnu_debugdata`). Both hold the object's own link-time addresses.
//!
//! A debug file found by `.gnu_debuglink` is used only if it carries the object's build ID
//! (when the object has one): a stale one would put probes in the middle of instructions.
//! The object's own symbols come first; an added symbol the object already has at the same
//! address (`.dynsym`'s `memcpy` is the debug file's `memcpy@GLIBC_2.2.5`) is left out. Of
//! the names of one address, [`Symbol::alias_rank`] says which names it.

use std::collections::HashSet;
use std::path::Path;

use crate::{debug_file, Elf, Symbol};

/// The defined function symbols (at a non-zero address) of the object at `path`, parsed
/// as `elf`.
pub fn function_symbols(path: &Path, elf: &Elf) -> Vec<Symbol> {
    let mut out: Vec<Symbol> = elf
        .symbols()
        .unwrap_or_default()
        .into_iter()
        .filter(is_function)
        .collect();
    if elf.has_symtab() {
        return out;
    }
    let lost = match debug_file(path, elf).and_then(|p| debug_symbols(&p, elf)) {
        Some(symbols) => symbols,
        None => elf.mini_debuginfo_symbols(),
    };
    let mut known: HashSet<(u64, String)> = out
        .iter()
        .map(|s| (s.value, unversioned(&s.name).to_string()))
        .collect();
    for s in lost.into_iter().filter(is_function) {
        if known.insert((s.value, unversioned(&s.name).to_string())) {
            out.push(s);
        }
    }
    out
}

/// A symbol's place among the names of its address, lowest first: what names a function
/// ([`Symbol::alias_rank`]).
pub type AliasRank<'a> = (bool, bool, usize, u64, &'a str);

impl Symbol {
    /// Where DTrace puts this name among those of its address (libproc orders them so,
    /// lowest first, and names the address by the first): a global or weak symbol before a
    /// local one, then a name not starting with `$`, then fewer leading underscores, then
    /// the smaller symbol, then the name in byte order. `memcpy` before `__GI_memcpy`,
    /// `qsort_r` before `__qsort_r`; and the choice does not depend on the order of the
    /// tables the names came from.
    pub fn alias_rank(&self) -> AliasRank<'_> {
        let underscores = self.name.len() - self.name.trim_start_matches('_').len();
        (
            self.is_local,
            self.name.starts_with('$'),
            underscores,
            self.size,
            &self.name,
        )
    }
}

fn is_function(s: &Symbol) -> bool {
    s.is_func && s.value != 0 && !s.name.is_empty()
}

/// A symbol's name without its version (`memcpy@GLIBC_2.2.5`, `memcpy@@GLIBC_2.14`).
fn unversioned(name: &str) -> &str {
    name.split('@').next().unwrap_or(name)
}

/// The `.symtab` symbols of the debug file at `path`, if it has one and is `object`'s.
fn debug_symbols(path: &Path, object: &Elf) -> Option<Vec<Symbol>> {
    let data = std::fs::read(path).ok()?;
    let debug = Elf::parse(&data).ok()?;
    if !debug.has_symtab() {
        return None;
    }
    if let Some(id) = object.build_id() {
        if debug.build_id() != Some(id) {
            return None;
        }
    }
    debug.symbols().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sym(name: &str, size: u64, is_local: bool) -> Symbol {
        Symbol {
            name: name.to_string(),
            value: 0x1000,
            size,
            is_func: true,
            is_local,
        }
    }

    /// The names of one address in DTrace's order, whatever the order of the tables.
    #[test]
    fn aliases_are_ranked_as_dtrace_ranks_them() {
        let mut names = [
            sym("__GI___qsort_r", 834, true),
            sym("_nl_make.localalias", 8, true),
            sym("$x", 8, false),
            sym("__qsort_r", 834, true),
            sym("_nl_make", 8, true),
            sym("qsort_r", 834, false),
            sym("_qsort_r", 834, false),
            sym("qsort_r", 16, false),
        ];
        names.sort_by(|a, b| a.alias_rank().cmp(&b.alias_rank()));
        let order: Vec<(&str, u64)> = names.iter().map(|s| (s.name.as_str(), s.size)).collect();
        assert_eq!(
            order,
            [
                ("qsort_r", 16),
                ("qsort_r", 834),
                ("_qsort_r", 834),
                ("$x", 8),
                ("_nl_make", 8),
                ("_nl_make.localalias", 8),
                // Two leading underscores each: then by name, as libproc's strcmp.
                ("__GI___qsort_r", 834),
                ("__qsort_r", 834),
            ]
        );
    }

    #[test]
    fn versions_are_not_part_of_the_name() {
        assert_eq!(unversioned("memcpy@GLIBC_2.2.5"), "memcpy");
        assert_eq!(unversioned("memcpy@@GLIBC_2.14"), "memcpy");
        assert_eq!(unversioned("memcpy"), "memcpy");
    }
}

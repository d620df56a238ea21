//! What the clauses of a description waiting for processes that do not run yet are typed
//! for (`UserProbes::placeholder`): a `pid*:PROG:FUNC:entry` (or `return`) description's
//! arguments are typed from the DWARF of the program `$PATH` finds by the module's name, as
//! a shell would run it (docs/USER-TYPES.md), so `args[0]->member` compiles before `PROG`
//! runs; the probes found later are typed from their own binary's DWARF. Any other
//! description's placeholder has no arguments known.

use std::path::{Path, PathBuf};

use dtrace_backend::program::{UprobeContext, UprobeKind};

use super::{function_offsets, is_glob, scope, Scope};
use crate::glob::glob_match;
use crate::Description;

/// The context of `desc`'s placeholder probe.
pub(super) fn context(desc: &Description) -> UprobeContext {
    let mut context = UprobeContext {
        kind: UprobeKind::Usdt(Vec::new()),
        functions: Vec::new(),
        ids: Vec::new(),
        family: None,
        kernel: Vec::new(),
        object: None,
    };
    let pid = matches!(scope(&desc.provider), Some(Scope::Binaries { pattern }) if glob_match(&pattern, "pid"));
    let kind = match desc.name.as_str() {
        "entry" => UprobeKind::Entry,
        "return" => UprobeKind::Return,
        _ => return context,
    };
    if !pid || desc.module.is_empty() || is_glob(&desc.module) {
        return context;
    }
    let Some(path) = on_path(&desc.module) else {
        return context;
    };
    if is_glob(&desc.function) {
        context.functions = function_offsets(&path)
            .into_iter()
            .filter(|f| f.named_by(&desc.function))
            .filter_map(|f| Some(f.names.first()?.1.clone()))
            .collect();
    }
    context.kind = kind;
    context.object = Some(path);
    context
}

/// The executable file named `name` in a `$PATH` directory, the first one.
fn on_path(name: &str) -> Option<PathBuf> {
    let search = std::env::var_os("PATH")?;
    std::env::split_paths(&search)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|p| is_executable(p))
}

/// Whether `path` is a file someone may execute.
fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

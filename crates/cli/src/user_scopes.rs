//! The scopes a script names user types by (`struct a.out`point`, `libc.so.6`FILE`,
//! docs/USER-TYPES.md): each `-c`/`-p` process's executable is `a.out` and its file name,
//! and each library it needs (a `-c` command, not started yet) or maps (a `-p` process)
//! its file name, as the `pid` provider's module field names them; found only when a
//! script names a scope. A clause on a `pid` probe also reaches its own object's types
//! by that probe's module name (the typing pass).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use dtrace_backend::types::user;

use crate::target::Target;

/// A process whose objects scopes name.
struct Process {
    pid: i32,
    /// A `-c` command held before it runs: the program it will run.
    held: Option<PathBuf>,
}

/// Give the targets' objects their scopes.
pub fn register(targets: &[Target]) {
    let processes: Vec<Process> = targets
        .iter()
        .map(|t| Process {
            pid: t.pid(),
            held: t.exec_path(),
        })
        .collect();
    let names: OnceLock<Vec<(String, PathBuf)>> = OnceLock::new();
    user::set_scopes(move |scope| {
        names
            .get_or_init(|| scopes(&processes))
            .iter()
            .find(|(name, _)| name == scope)
            .map(|(_, path)| path.clone())
    });
}

/// Each scope and its object, the first object given a name keeping it.
fn scopes(processes: &[Process]) -> Vec<(String, PathBuf)> {
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    let mut add = |name: &str, path: &Path| {
        if !out.iter().any(|(n, _)| n == name) {
            out.push((name.to_string(), path.to_path_buf()));
        }
    };
    for p in processes {
        let exe = p
            .held
            .clone()
            .or_else(|| std::fs::read_link(format!("/proc/{}/exe", p.pid)).ok());
        let Some(exe) = exe else { continue };
        add("a.out", &exe);
        let libraries = match p.held {
            Some(_) => dtrace_probes::user::needed_libraries(&exe),
            None => dtrace_probes::user::mapped_files(p.pid),
        };
        for path in std::iter::once(exe).chain(libraries) {
            if let Some(file) = path.file_name().and_then(|f| f.to_str()) {
                add(file, &path);
            }
        }
    }
    out
}

/// Whether scoped name `name` (`a.out`tag_t`) is a typedef of the object its scope names.
pub fn is_typedef(name: &str) -> bool {
    let Some((scope, bare)) = name.rsplit_once('`') else {
        return false;
    };
    user::scope(scope).is_some_and(|object| {
        user::named(&object, dtrace_backend::types::kernel::Tag::Typedef, bare).is_some()
    })
}

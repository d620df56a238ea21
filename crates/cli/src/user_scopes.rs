//! The scopes a script names user types by (`struct a.out`point`, `libc.so.6`FILE`,
//! docs/USER-TYPES.md): before the program is parsed, each `-c`/`-p` process's executable
//! is `a.out` and its file name, and each library it needs (a `-c` command, not started
//! yet) or maps (a `-p` process) its file name, as the `pid` provider's module field names
//! them. A clause on a `pid` probe also reaches its own object's types by that probe's
//! module name (the typing pass).

use std::path::Path;

use dtrace_backend::types::user;

use crate::target::Target;

/// Give the targets' objects their scopes.
pub fn register(targets: &[Target]) {
    for t in targets {
        let held = t.exec_path();
        let exe = held
            .clone()
            .or_else(|| std::fs::read_link(format!("/proc/{}/exe", t.pid())).ok());
        let Some(exe) = exe else { continue };
        user::add_scope("a.out", &exe);
        name(&exe);
        let libraries = match held {
            Some(_) => dtrace_probes::user::needed_libraries(&exe),
            None => dtrace_probes::user::mapped_files(t.pid()),
        };
        for lib in libraries {
            name(&lib);
        }
    }
}

/// Scope `path` by its file name.
fn name(path: &Path) {
    if let Some(file) = path.file_name().and_then(|f| f.to_str()) {
        user::add_scope(file, path);
    }
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

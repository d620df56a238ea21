//! The postmortem of a traced process (`-x bufpolicy=ring` with `-c` or `-p`): when the
//! process dies of a fatal signal, the records the rings kept are printed in the order they
//! were recorded, then `dtrace: pid N terminated by SIG...`, then the run's end as usual,
//! and the same text is written to a file: `-x postmortem=PATH`, or `dtrace-postmortem.PID`
//! beside the process's core (the directory of `/proc/sys/kernel/core_pattern` when it
//! names one, else the process's working directory as last seen while it ran).
//!
//! A fatal signal is one whose default action dumps core (`SIGSEGV`, `SIGABRT`, `SIGBUS`,
//! `SIGILL`, `SIGFPE`, `SIGQUIT`, `SIGTRAP`, `SIGSYS`, `SIGXCPU`, `SIGXFSZ`), whether or
//! not a core was written; a process ended by `SIGTERM`, `SIGINT` or `SIGKILL` has none.

use std::collections::HashMap;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use dtrace_consumer::policy::BufPolicy;

use crate::options::Options;
use crate::target::Target;

/// Signals whose default action is to dump core (signal(7)).
const FATAL: &[i32] = &[
    libc::SIGQUIT,
    libc::SIGILL,
    libc::SIGTRAP,
    libc::SIGABRT,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGSEGV,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGSYS,
];

/// The name of `sig` if it is a fatal signal.
pub fn fatal(sig: i32) -> Option<&'static str> {
    FATAL
        .contains(&sig)
        .then(|| dtrace_typing::signals::name(sig))
        .flatten()
}

/// Where the postmortems of a run go.
pub struct Postmortem {
    /// `-x postmortem=PATH`.
    path: Option<PathBuf>,
    /// The working directory of each traced process, as last seen.
    cwds: HashMap<i32, PathBuf>,
}

impl Postmortem {
    /// The postmortems of a run with `options` tracing `targets`: none without
    /// `bufpolicy=ring` or a target; `-x postmortem` needs both.
    pub fn for_run(options: &Options, targets: &[Target]) -> Result<Option<Postmortem>, String> {
        let ring = options.bufpolicy == BufPolicy::Ring;
        if options.postmortem.is_some() && !ring {
            return Err("dtrace: -x postmortem needs -x bufpolicy=ring\n".into());
        }
        if options.postmortem.is_some() && targets.is_empty() {
            return Err("dtrace: -x postmortem needs a -c or -p process\n".into());
        }
        Ok((ring && !targets.is_empty()).then(|| Postmortem::new(options.postmortem.as_deref())))
    }

    fn new(path: Option<&str>) -> Postmortem {
        Postmortem {
            path: path.map(PathBuf::from),
            cwds: HashMap::new(),
        }
    }

    /// Note where `pid` runs now (its core goes there when `core_pattern` is relative).
    pub fn watch(&mut self, pid: i32) {
        if let Ok(cwd) = std::fs::read_link(format!("/proc/{pid}/cwd")) {
            self.cwds.insert(pid, cwd);
        }
    }

    /// The file the postmortem of `pid` is written to.
    pub fn path(&self, pid: i32) -> PathBuf {
        if let Some(path) = &self.path {
            return path.clone();
        }
        let cwd = self
            .cwds
            .get(&pid)
            .cloned()
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"));
        let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap_or_default();
        core_dir(pattern.trim_end(), &cwd).join(format!("dtrace-postmortem.{pid}"))
    }

    /// Write `text`, the postmortem of `pid`, to its file (replaced if it exists; created
    /// readable by its owner only, as the kernel creates cores); the path, or why not.
    pub fn write(&self, pid: i32, text: &[u8]) -> Result<PathBuf, String> {
        let path = self.path(pid);
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .and_then(|mut f| f.write_all(text))
            .map_err(|e| {
                format!(
                    "dtrace: failed to write postmortem file '{}': {}\n",
                    path.display(),
                    crate::errno_text(&e)
                )
            })?;
        Ok(path)
    }
}

/// The directory a core goes to under `pattern` (`core_pattern`) for a process working in
/// `cwd`: the pattern's directory when it names one without `%` specifiers, else `cwd`
/// (also for a pipe to a program, `|...`, which keeps cores out of reach).
fn core_dir(pattern: &str, cwd: &Path) -> PathBuf {
    if pattern.starts_with('|') {
        return cwd.to_path_buf();
    }
    match Path::new(pattern).parent() {
        Some(dir) if !dir.as_os_str().is_empty() && !dir.to_string_lossy().contains('%') => {
            cwd.join(dir)
        }
        _ => cwd.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fatal_signals_are_those_that_dump_core() {
        assert_eq!(fatal(libc::SIGSEGV), Some("SIGSEGV"));
        assert_eq!(fatal(libc::SIGABRT), Some("SIGABRT"));
        assert_eq!(fatal(libc::SIGKILL), None);
        assert_eq!(fatal(libc::SIGTERM), None);
    }

    #[test]
    fn the_file_goes_where_the_core_goes() {
        let cwd = Path::new("/home/u/app");
        assert_eq!(core_dir("core.%e", cwd), cwd);
        assert_eq!(core_dir("core", cwd), cwd);
        assert_eq!(core_dir("/var/cores/core.%p", cwd), Path::new("/var/cores"));
        assert_eq!(
            core_dir("cores/core.%p", cwd),
            Path::new("/home/u/app/cores")
        );
        assert_eq!(core_dir("/var/%u/core", cwd), cwd);
        assert_eq!(core_dir("|/usr/lib/systemd/systemd-coredump %P", cwd), cwd);
        let chosen = Postmortem::new(Some("/tmp/pm.txt"));
        assert_eq!(chosen.path(7), Path::new("/tmp/pm.txt"));
    }
}

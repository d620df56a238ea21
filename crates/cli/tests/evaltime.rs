//! Where tracing of a `-c` command starts (`-x evaltime`), on the live kernel: by default,
//! as in DTrace, at the program's `main()` (the dynamic linker's system calls and library
//! constructors are not seen), found by symbol or, in a stripped program, through libc's
//! `__libc_start_main`; `preinit` at the entry point (a constructor's calls are seen, the
//! dynamic linker's are not); `exec` right after the exec.

mod common;

use std::path::{Path, PathBuf};

use common::{build_c, dtrace, scratch};

/// A program that calls `getppid()` once in a constructor and twice in `main()`, and
/// opens `/dev/null` in `main()` only.
const PROGRAM: &str = r#"
#include <fcntl.h>
#include <unistd.h>

__attribute__((constructor)) static void early(void) { getppid(); }

int main(void) {
    getppid();
    getppid();
    close(open("/dev/null", O_RDONLY));
    return 0;
}
"#;

fn program(name: &str, flags: &[&str]) -> PathBuf {
    build_c(&scratch("evaltime", name), "prog", PROGRAM, flags)
}

/// What `-c prog` shows with `-x evaltime=...` (`None`: the default): its getppid()
/// calls, and the first file it opened (read at the return, once the kernel has read it).
fn seen(prog: &Path, evaltime: Option<&str>) -> (u64, String) {
    let script = "syscall::getppid:entry /pid == $target/ { n++; }
         syscall::openat:entry /pid == $target/ { self->path = arg1; }
         syscall::openat:return /self->path && first == \"\"/ { first = copyinstr(self->path); }
         END { printf(\"%d %s\\n\", n, first); }";
    let option = evaltime.map(|e| format!("evaltime={e}"));
    let mut args = vec!["-q", "-c", prog.to_str().unwrap(), "-n", script];
    if let Some(o) = &option {
        args.extend(["-x", o]);
    }
    let run = dtrace(&args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let line = run.stdout.trim();
    let (n, first) = line.split_once(' ').unwrap_or((line, ""));
    (n.parse().expect("a count"), first.to_string())
}

#[test]
fn default_starts_at_main() {
    common::require_root();
    let prog = program("main", &[]);
    assert_eq!(seen(&prog, None), (2, "/dev/null".to_string()));
}

#[test]
fn stripped_program_starts_at_main_through_libc() {
    common::require_root();
    let prog = program("stripped", &["-s"]);
    assert_eq!(seen(&prog, None), (2, "/dev/null".to_string()));
}

#[test]
fn preinit_sees_constructors_not_the_dynamic_linker() {
    common::require_root();
    let prog = program("preinit", &[]);
    assert_eq!(seen(&prog, Some("preinit")), (3, "/dev/null".to_string()));
}

#[test]
fn exec_sees_the_dynamic_linker() {
    common::require_root();
    let prog = program("exec", &[]);
    // The dynamic linker's first file: its cache, or libc found on a library path.
    let (n, first) = seen(&prog, Some("exec"));
    assert_eq!(n, 3);
    assert!(
        first.ends_with("ld.so.cache") || first.contains("libc"),
        "{first}"
    );
}

#[test]
fn unknown_evaltime_is_refused() {
    let run = dtrace(&["-x", "evaltime=later", "-n", "BEGIN { exit(0); }"]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr
            .contains("failed to set -x evaltime: Invalid value for specified option"),
        "{}",
        run.stderr
    );
}

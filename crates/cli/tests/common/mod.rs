//! Shared by the integration tests: they load real programs into the running kernel, so they
//! need root and say so plainly instead of skipping; and they run `dtrace` with a timeout so
//! a hang fails the test instead of blocking CI.
//!
//! Each test binary compiles this module on its own and uses a subset of it.
#![allow(dead_code)]

pub mod rng;

use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The longest one `dtrace` run may take.
pub const TIMEOUT: Duration = Duration::from_secs(60);

/// Fail the test with a clear message unless running as root.
pub fn require_root() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "these tests load BPF programs into the running kernel and must run as root"
    );
}

/// How a `dtrace` run ended.
pub struct Run {
    /// The exit status; 128 + the signal's number for a run a signal ended, as shells say.
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
}

/// A `dtrace` command with `args` (stdin empty, output captured), to adjust and start.
pub fn command(args: &[&str]) -> Command {
    require_root();
    let mut command = Command::new(env!("CARGO_BIN_EXE_dtrace"));
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Run a tool (binutils, xz) in `dir`; fail the test unless it succeeds. Its stdout.
pub fn run_tool(dir: &Path, cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Strip the program `exe` (a file in `dir`) of its symbol tables and give it a
/// MiniDebugInfo (`.gnu_debugdata`: the xz-compressed symbol table of `keep`'s functions,
/// as Fedora, RHEL and Oracle Linux build their binaries).
pub fn strip_to_mini_debuginfo(dir: &Path, exe: &str, keep: &[&str]) {
    std::fs::write(dir.join("keep"), keep.join("\n") + "\n").expect("write the keep list");
    run_tool(dir, "objcopy", &["--only-keep-debug", exe, "full.debug"]);
    run_tool(
        dir,
        "objcopy",
        &["-S", "--keep-symbols=keep", "full.debug", "mini.debug"],
    );
    run_tool(dir, "xz", &["-f", "mini.debug"]);
    run_tool(dir, "strip", &["--strip-all", exe]);
    run_tool(
        dir,
        "objcopy",
        &["--add-section", ".gnu_debugdata=mini.debug.xz", exe],
    );
}

/// Run `dtrace` with `args` in the directory `dir`.
pub fn dtrace_in(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = command(args);
    cmd.current_dir(dir);
    finish(cmd.spawn().expect("start dtrace"), &format!("{args:?}"))
}

/// Assert a run's exit status and whole output.
pub fn assert_output(run: &Run, status: i32, stdout: &str, stderr: &str) {
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (status, stdout, stderr)
    );
}

/// Start `dtrace` with `args` (stdin empty, output captured).
pub fn spawn(args: &[&str]) -> Child {
    command(args).spawn().expect("start dtrace")
}

/// Wait for a started `dtrace`; kill it (and fail) after [`TIMEOUT`]. Its stdout is empty
/// unless it was piped.
pub fn finish(child: Child, what: &str) -> Run {
    finish_within(child, what, TIMEOUT)
}

/// [`finish`], for a run meant to last longer than [`TIMEOUT`].
pub fn finish_within(mut child: Child, what: &str, timeout: Duration) -> Run {
    let out = child.stdout.take();
    let mut err = child.stderr.take().expect("piped stderr");
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut out) = out {
            out.read_to_string(&mut s).expect("read stdout");
        }
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).expect("read stderr");
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for dtrace") {
            break status;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            panic!("dtrace {what} did not finish within {timeout:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Run {
        status: status
            .code()
            .or_else(|| status.signal().map(|sig| 128 + sig))
            .unwrap_or(-1),
        stdout: reader.join().expect("stdout reader"),
        stderr: err_reader.join().expect("stderr reader"),
    }
}

/// A shell script that execs `/bin/true`, for tests of the exec a `-c` command makes:
/// the command itself is held after its own exec (as DTrace holds it), the script's
/// `exec` is seen. Returns its path.
pub fn exec_true_script() -> String {
    let dir = scratch_root().join("exec-true");
    std::fs::create_dir_all(&dir).expect("create scratch directory");
    let path = dir.join("exec-true.sh");
    if !path.exists() {
        let tmp = dir.join(format!("exec-true.{:?}", std::thread::current().id()));
        std::fs::write(&tmp, "#!/bin/sh\nexec /bin/true\n").expect("write the script");
        std::fs::set_permissions(&tmp, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .expect("make it executable");
        let _ = std::fs::rename(&tmp, &path);
    }
    path.display().to_string()
}

/// Run `dtrace` with `args` to its end.
pub fn dtrace(args: &[&str]) -> Run {
    finish(spawn(args), &format!("{args:?}"))
}

/// This test process's scratch directory, `$TMPDIR/dtrace-tests/PID`. No hook runs when a test
/// binary exits, so the first call removes the directories of test processes that have ended:
/// runs do not pile up in the temporary directory, and a running test keeps its files.
pub fn scratch_root() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        let base = std::env::temp_dir().join("dtrace-tests");
        for entry in std::fs::read_dir(&base).into_iter().flatten().flatten() {
            let name = entry.file_name();
            let alive = name
                .to_str()
                .and_then(|pid| pid.parse::<u32>().ok())
                .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
            if !alive {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
        let root = base.join(std::process::id().to_string());
        std::fs::create_dir_all(&root).expect("create the scratch root");
        root
    })
    .clone()
}

/// A fresh, empty scratch directory for one test: `PREFIX-NAME` under [`scratch_root`].
pub fn scratch(prefix: &str, name: &str) -> PathBuf {
    let dir = scratch_root().join(format!("{prefix}-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create scratch directory");
    dir
}

/// Compile the C program `source` with gcc and `flags` into `dir/exe`; its path. Fails the
/// test with gcc's messages if it does not build (sys/sdt.h comes from systemtap-sdt-dev).
pub fn build_c(dir: &Path, exe: &str, source: &str, flags: &[&str]) -> PathBuf {
    let src = dir.join(format!("{exe}.c"));
    std::fs::write(&src, source).expect("write the C source");
    let out_path = dir.join(exe);
    let out = Command::new("gcc")
        .args(flags)
        .arg("-o")
        .arg(&out_path)
        .arg(&src)
        .output()
        .expect("run gcc");
    assert!(
        out.status.success(),
        "gcc failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out_path
}

/// Run `dtrace -q -c cmd -n program`; must succeed.
pub fn trace(cmd: &str, program: &str) -> Run {
    let run = dtrace(&["-q", "-c", cmd, "-n", program]);
    assert_eq!(
        run.status, 0,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    run
}

/// The value of the aggregation row whose key words are `key` (an `@[k1, k2] = count()`
/// line as dtrace prints it).
pub fn row(stdout: &str, key: &[&str]) -> Option<u64> {
    stdout.lines().find_map(|l| {
        let words: Vec<&str> = l.split_whitespace().collect();
        (words.len() == key.len() + 1 && words[..key.len()] == *key)
            .then(|| words[key.len()].parse().ok())
            .flatten()
    })
}

/// Lines of `out` starting with `prefix ` (the prefix removed).
pub fn tagged<'a>(out: &'a str, prefix: &str) -> Vec<&'a str> {
    out.lines()
        .filter_map(|l| l.strip_prefix(prefix)?.strip_prefix(' '))
        .collect()
}

//! Lifecycle tests: the `dtrace` binary on the live kernel, started, signalled and killed.
//!
//! * Nothing is left behind: after `exit()`, SIGINT, SIGTERM or SIGKILL, the programs, maps
//!   and perf-event links the run created are gone (`bpftool prog/map/link list`).
//! * SIGINT and SIGTERM run END and print the aggregations, exit status 0; a second SIGINT
//!   exits at once.
//! * Exit statuses: 1 on compile errors, the `exit(N)` value, 2 on bad usage.
//! * `-c cmd`: the command runs only once every probe is attached (held after its exec),
//!   `$target` is its pid,
//!   tracing ends when it exits; a held command never runs when dtrace fails or dies first.
//! * `-p pid`: tracing ends when the process exits; a missing pid is an error.
//! * `-o file` appends.
//!
//! The tests run in parallel with each other and with other processes that load BPF
//! programs, so each run's kernel objects are identified by the ids in the dtrace process's
//! `/proc/PID/fdinfo` (program ids, map ids, link ids), and its main program by a probe name
//! unique to the test (`tick-NNNNNms` loads as `dt_tick_NNNNNms`). Every wait has a timeout,
//! so a hang fails the test. They need root and `bpftool`; as another user they are skipped.

mod common;

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The longest any single wait may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// A tick period in ms unique to this test process and the test (`idx`), five digits so that
/// `dt_tick_NNNNNms` fits the 15 characters of a program name.
fn unique_ms(idx: u32) -> u32 {
    10_000 + (std::process::id() % 4000) * 20 + idx
}

/// A scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    common::scratch("lifecycle", name)
}

/// The `dtrace` binary, with SIGINT and SIGTERM at their default actions whatever this test
/// inherited (dtrace keeps them ignored if they were, as DTrace does).
fn dtrace_command(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dtrace"));
    cmd.args(args).stdin(Stdio::null());
    // SAFETY: only signal(2), which is async-signal-safe, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGTERM, libc::SIG_DFL);
            Ok(())
        });
    }
    cmd
}

/// `dtrace` with stdout and stderr going to files in `dir`.
fn dtrace(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = dtrace_command(args);
    cmd.stdout(File::create(dir.join("stdout")).unwrap())
        .stderr(File::create(dir.join("stderr")).unwrap());
    cmd
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn stdout_of(dir: &Path) -> String {
    read(&dir.join("stdout"))
}

fn stderr_of(dir: &Path) -> String {
    read(&dir.join("stderr"))
}

/// A child process killed (and reaped) when dropped, so a failing test leaves nothing running.
struct Guard(Child);

impl std::ops::Deref for Guard {
    type Target = Child;
    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

fn spawn(cmd: &mut Command) -> Guard {
    Guard(cmd.spawn().expect("spawn"))
}

/// Kill the processes `pids` (children of a dtrace under test) if still alive.
fn kill_all(pids: &[u32]) {
    for &pid in pids {
        if alive(pid) {
            // SAFETY: kill with a pid and a signal.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }
}

/// Poll `cond` every 10 ms for up to `limit`; whether it became true.
fn poll(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    loop {
        if cond() {
            return true;
        }
        if start.elapsed() >= limit {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Wait for `child` to exit, killing it and failing the test after `limit`.
fn wait(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if start.elapsed() >= limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Run to completion (with the timeout); the exit status.
fn run(dir: &Path, args: &[&str]) -> ExitStatus {
    let mut child = spawn(&mut dtrace(dir, args));
    wait(&mut child, TIMEOUT, &format!("dtrace {args:?}"))
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: kill on our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

/// `bpftool <kind> list` as (id, line) pairs, one per object.
fn bpftool_list(kind: &str) -> Vec<(u32, String)> {
    let out = Command::new("bpftool")
        .args([kind, "list"])
        .output()
        .expect("bpftool is installed (apt-get install bpftool)");
    assert!(out.status.success(), "bpftool {kind} list failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let (id, _) = line.split_once(':')?;
            Some((id.trim().parse().ok()?, line.to_string()))
        })
        .collect()
}

/// The value after `key` in a bpftool line (`name dt_x`, `prog 12`).
fn field<'a>(line: &'a str, key: &str) -> Option<&'a str> {
    let mut words = line.split_whitespace();
    words.by_ref().find(|w| *w == key)?;
    words.next()
}

/// The BPF objects a process holds, from its fdinfo.
#[derive(Debug, Default, Clone)]
struct Held {
    progs: BTreeSet<u32>,
    maps: BTreeSet<u32>,
    links: BTreeSet<u32>,
}

fn held_by(pid: u32) -> Held {
    let mut held = Held::default();
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/fdinfo")) else {
        return held;
    };
    for entry in dir.flatten() {
        for line in read(&entry.path()).lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let Ok(id) = value.trim().parse() else {
                continue;
            };
            match key {
                "prog_id" => held.progs.insert(id),
                "map_id" => held.maps.insert(id),
                "link_id" => held.links.insert(id),
                _ => false,
            };
        }
    }
    held
}

/// Wait until `pid` holds a program named `prog_name`, attached by a link it also holds;
/// everything it holds then.
fn wait_attached(child: &mut Child, prog_name: &str) -> Held {
    let mut held = Held::default();
    let mut why = String::new();
    let mut exited = None;
    let attached = poll(TIMEOUT, || {
        if let Ok(Some(status)) = child.try_wait() {
            exited = Some(status);
            return true;
        }
        held = held_by(child.id());
        let progs = bpftool_list("prog");
        let Some((prog, _)) = progs
            .iter()
            .find(|(id, line)| held.progs.contains(id) && field(line, "name") == Some(prog_name))
        else {
            why = format!("no program {prog_name} held by dtrace: {held:?}");
            return false;
        };
        why = format!("program {prog_name} (id {prog}) is not attached by a link of dtrace");
        let prog = prog.to_string();
        bpftool_list("link")
            .iter()
            .any(|(id, line)| held.links.contains(id) && field(line, "prog") == Some(&prog))
            && !held.maps.is_empty()
    });
    assert!(exited.is_none(), "dtrace exited early: {exited:?}");
    assert!(attached, "timed out: {why}");
    held
}

/// Wait until none of `held` exists any more.
fn assert_released(held: &Held, what: &str) {
    let mut left = String::new();
    let ok = poll(Duration::from_secs(5), || {
        left.clear();
        for (kind, ids) in [
            ("prog", &held.progs),
            ("map", &held.maps),
            ("link", &held.links),
        ] {
            for (id, line) in bpftool_list(kind) {
                if ids.contains(&id) {
                    left.push_str(&format!("{kind} {line}\n"));
                }
            }
        }
        left.is_empty()
    });
    assert!(ok, "{what}: kernel objects left behind:\n{left}");
}

/// A line holding only a positive number: an aggregation's value.
fn has_count(stdout: &str) -> bool {
    stdout
        .lines()
        .any(|l| l.trim().parse::<u64>().is_ok_and(|n| n > 0))
}

/// Processes (not zombies) whose command line contains `needle`, except ourselves.
fn processes_with(needle: &str) -> Vec<u32> {
    let me = std::process::id();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if pid == me {
            continue;
        }
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(needle) {
            found.push(pid);
        }
    }
    found
}

/// Children of `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut found = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            found.extend(
                read(&task.path().join("children"))
                    .split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    found
}

/// Whether `pid` is alive and not a zombie.
fn alive(pid: u32) -> bool {
    let stat = read(Path::new(&format!("/proc/{pid}/stat")));
    let state = stat
        .rfind(')')
        .and_then(|i| stat[i + 1..].split_whitespace().next());
    !matches!(state, None | Some("Z") | Some("X"))
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo reads the NUL-terminated path only.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Start dtrace on a long-running unique tick probe, wait until it is attached, send `sig`,
/// and check that it exits as expected and leaves nothing behind.
fn leaves_nothing_after(sig: libc::c_int, idx: u32, name: &str) {
    let dir = scratch(name);
    let ms = unique_ms(idx);
    let probe = format!("tick-{ms}ms {{ @n = count(); }} END {{ printf(\"end\\n\"); }}");
    let mut child = spawn(&mut dtrace(&dir, &["-qn", &probe]));
    let held = wait_attached(&mut child, &format!("dt_tick_{ms}ms"));
    signal(&child, sig);
    let status = wait(&mut child, TIMEOUT, name);
    if sig == libc::SIGKILL {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL));
    } else {
        assert_eq!(status.code(), Some(0), "{name}: {}", stderr_of(&dir));
        assert!(stdout_of(&dir).contains("end"), "{name}: END did not run");
    }
    assert_released(&held, name);
}

#[test]
fn sigint_leaves_nothing() {
    common::require_root();
    leaves_nothing_after(libc::SIGINT, 0, "sigint_leaves_nothing");
}

#[test]
fn sigterm_leaves_nothing() {
    common::require_root();
    leaves_nothing_after(libc::SIGTERM, 1, "sigterm_leaves_nothing");
}

#[test]
fn sigkill_leaves_nothing() {
    common::require_root();
    leaves_nothing_after(libc::SIGKILL, 2, "sigkill_leaves_nothing");
}

#[test]
fn exit_leaves_nothing() {
    common::require_root();
    let dir = scratch("exit_leaves_nothing");
    let ms = unique_ms(3);
    let probe = format!("tick-{ms}ms {{ }} tick-3s {{ exit(0); }}");
    let mut child = spawn(&mut dtrace(&dir, &["-qn", &probe]));
    let held = wait_attached(&mut child, &format!("dt_tick_{ms}ms"));
    let status = wait(&mut child, TIMEOUT, "exit(0) from tick-3s");
    assert_eq!(status.code(), Some(0), "{}", stderr_of(&dir));
    assert_released(&held, "exit(0)");
}

/// SIGINT/SIGTERM: END runs, the aggregation prints, status 0.
fn signal_runs_end(sig: libc::c_int, name: &str) {
    let dir = scratch(name);
    let mut child = spawn(&mut dtrace(
        &dir,
        &[
            "-qn",
            "tick-10ms { @n = count(); } END { printf(\"end\\n\"); }",
        ],
    ));
    // Wait until tracing has begun (the ring buffer map exists), then let it count.
    assert!(
        poll(TIMEOUT, || !held_by(child.id()).links.is_empty()),
        "{name}: never attached"
    );
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, sig);
    let status = wait(&mut child, TIMEOUT, name);
    let out = stdout_of(&dir);
    assert_eq!(status.code(), Some(0), "{name}: {}", stderr_of(&dir));
    assert!(out.contains("end\n"), "{name}: END did not run: {out:?}");
    assert!(has_count(&out), "{name}: no aggregation printed: {out:?}");
    let end = out.find("end\n").unwrap();
    assert!(
        has_count(&out[end..]),
        "{name}: aggregations must print after END: {out:?}"
    );
}

#[test]
fn sigint_runs_end_and_prints_aggregations() {
    common::require_root();
    signal_runs_end(libc::SIGINT, "sigint_runs_end");
}

#[test]
fn sigterm_runs_end_and_prints_aggregations() {
    common::require_root();
    signal_runs_end(libc::SIGTERM, "sigterm_runs_end");
}

/// With its stdout a full pipe nobody reads, dtrace cannot finish after the first SIGINT;
/// the second must end it at once, leaving nothing behind.
#[test]
fn second_sigint_exits_at_once() {
    common::require_root();
    let dir = scratch("second_sigint");
    let ms = unique_ms(4);
    let probe = format!(
        "tick-{ms}ms {{ }} tick-1ms {{ printf(\"%s\\n\", \"0123456789012345678901234567890123456789012345678901234567890123456789\"); }}"
    );
    let mut child = spawn(
        dtrace_command(&["-qn", &probe])
            .stdout(Stdio::piped())
            .stderr(File::create(dir.join("stderr")).unwrap()),
    );
    let unread = child.stdout.take().unwrap();
    let held = wait_attached(&mut child, &format!("dt_tick_{ms}ms"));
    // Let the pipe fill (64 KiB at ~70 bytes a millisecond) until dtrace blocks writing.
    let queued = || {
        let mut n: libc::c_int = 0;
        // SAFETY: FIONREAD stores the byte count in the valid int.
        unsafe { libc::ioctl(unread.as_raw_fd(), libc::FIONREAD, &mut n) };
        n
    };
    // Blocked: sleeping in pipe_write, or (where wchan says nothing, as it does for a running
    // task or without kallsyms) the pipe has stopped filling for 300 ms.
    let wchan = format!("/proc/{}/wchan", child.id());
    let mut last = (0, Instant::now());
    assert!(
        poll(TIMEOUT, || {
            let n = queued();
            if n != last.0 {
                last = (n, Instant::now());
            }
            read(Path::new(&wchan)).contains("pipe_write")
                || (n > 0 && last.1.elapsed() >= Duration::from_millis(300))
        }),
        "dtrace never blocked on its stdout: {} bytes queued",
        queued()
    );
    signal(&child, libc::SIGINT);
    std::thread::sleep(Duration::from_millis(300));
    if let Some(status) = child.try_wait().unwrap() {
        panic!(
            "dtrace should be blocked on its full stdout, but exited ({status}): {}",
            stderr_of(&dir)
        );
    }
    signal(&child, libc::SIGINT);
    let status = wait(&mut child, Duration::from_secs(3), "second SIGINT");
    assert_ne!(status.code(), Some(0));
    assert_released(&held, "second SIGINT");
}

/// A reader that goes away ends dtrace (SIGPIPE), instead of tracing on, writing nowhere.
#[test]
fn closed_stdout_ends_dtrace() {
    common::require_root();
    let dir = scratch("closed_stdout");
    let ms = unique_ms(7);
    let probe = format!("tick-{ms}ms {{ }} tick-1ms {{ printf(\"line\\n\"); }}");
    let mut child = spawn(
        dtrace_command(&["-qn", &probe])
            .stdout(Stdio::piped())
            .stderr(File::create(dir.join("stderr")).unwrap()),
    );
    let mut out = child.stdout.take().unwrap();
    let held = wait_attached(&mut child, &format!("dt_tick_{ms}ms"));
    let mut first = [0u8; 5];
    std::io::Read::read_exact(&mut out, &mut first).unwrap();
    assert_eq!(&first, b"line\n");
    drop(out);
    wait(&mut child, TIMEOUT, "dtrace writing to a closed pipe");
    assert_released(&held, "closed stdout");
}

#[test]
fn exit_status_compile_error_is_1() {
    common::require_root();
    let dir = scratch("status_compile");
    let status = run(&dir, &["-n", "BEGIN { x = ; }"]);
    assert_eq!(status.code(), Some(1));
    assert!(!stderr_of(&dir).is_empty());
}

#[test]
fn exit_status_is_exit_value() {
    common::require_root();
    let dir = scratch("status_exit");
    assert_eq!(run(&dir, &["-qn", "BEGIN { exit(3); }"]).code(), Some(3));
    assert_eq!(run(&dir, &["-qn", "BEGIN { exit(0); }"]).code(), Some(0));
}

#[test]
fn exit_status_bad_usage_is_2() {
    common::require_root();
    let dir = scratch("status_usage");
    assert_eq!(run(&dir, &[]).code(), Some(2), "no program");
    assert_eq!(
        run(&dir, &["-n"]).code(),
        Some(2),
        "-n without its argument"
    );
}

#[test]
fn exit_from_tick_stops_tracing() {
    common::require_root();
    let dir = scratch("exit_from_tick");
    let status = run(
        &dir,
        &[
            "-qn",
            "tick-10ms { @n = count(); } tick-200ms { exit(0); } END { printf(\"end\\n\"); }",
        ],
    );
    assert_eq!(status.code(), Some(0), "{}", stderr_of(&dir));
    let out = stdout_of(&dir);
    assert!(out.contains("end\n") && has_count(&out), "{out:?}");
}

#[test]
fn dash_c_target_is_the_command_pid() {
    common::require_root();
    let dir = scratch("c_target");
    let script = dir.join("pid.sh");
    std::fs::write(&script, "echo \"child=$$\"\n").unwrap();
    let cmd = format!("/bin/sh {}", script.display());
    let status = run(
        &dir,
        &[
            "-qn",
            "BEGIN { printf(\"target=%d\\n\", $target); } tick-10ms { @n = count(); }",
            "-c",
            &cmd,
        ],
    );
    let (out, err) = (stdout_of(&dir), stderr_of(&dir));
    assert_eq!(status.code(), Some(0), "{err}");
    let value = |key: &str| -> i64 {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in {out:?}"))
            .trim()
            .parse()
            .unwrap()
    };
    let pid = value("target=");
    assert!(pid > 0);
    assert_eq!(pid, value("child="), "$target is not the command's pid");
    // As Oracle's dtrace, nothing is said when the command exits.
    assert!(!err.contains("exited"), "{err:?}");
}

#[test]
fn dash_c_ends_tracing_and_prints_aggregations() {
    common::require_root();
    let dir = scratch("c_ends");
    let start = Instant::now();
    let status = run(
        &dir,
        &["-qn", "tick-10ms { @n = count(); }", "-c", "/bin/sleep 0.5"],
    );
    assert_eq!(status.code(), Some(0), "{}", stderr_of(&dir));
    assert!(start.elapsed() >= Duration::from_millis(500));
    let out = stdout_of(&dir);
    assert!(has_count(&out), "no aggregation: {out:?}");
}

/// The command sees our program already attached: it lists the kernel's programs and links.
#[test]
fn dash_c_command_starts_after_attach() {
    common::require_root();
    let dir = scratch("c_after_attach");
    let ms = unique_ms(5);
    let script = dir.join("list.sh");
    std::fs::write(
        &script,
        format!(
            "bpftool prog list > {0}/progs\nbpftool link list > {0}/links\n",
            dir.display()
        ),
    )
    .unwrap();
    let cmd = format!("/bin/sh {}", script.display());
    let probe = format!("tick-{ms}ms {{ }} tick-1ms {{ }} tick-2ms {{ }}");
    let status = run(&dir, &["-qn", &probe, "-c", &cmd]);
    assert_eq!(status.code(), Some(0), "{}", stderr_of(&dir));
    let progs = read(&dir.join("progs"));
    let links = read(&dir.join("links"));
    let name = format!("dt_tick_{ms}ms");
    let prog = progs
        .lines()
        .find(|l| field(l, "name") == Some(name.as_str()))
        .unwrap_or_else(|| panic!("{name} not loaded when the command ran:\n{progs}"));
    let id = prog.split(':').next().unwrap();
    assert!(
        links.lines().any(|l| field(l, "prog") == Some(id)),
        "{name} (prog {id}) not attached when the command ran:\n{links}"
    );
}

#[test]
fn dash_c_missing_command_fails() {
    common::require_root();
    let dir = scratch("c_missing");
    let status = run(
        &dir,
        &[
            "-qn",
            "tick-10ms { }",
            "-c",
            "/nonexistent/dtrace-lifecycle-cmd",
        ],
    );
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr_of(&dir).contains("failed to execute /nonexistent/dtrace-lifecycle-cmd"),
        "{}",
        stderr_of(&dir)
    );
    let status = run(
        &dir,
        &["-qn", "tick-10ms { }", "-c", "dtrace-lifecycle-nope"],
    );
    assert_eq!(status.code(), Some(1), "not on $PATH");
}

/// A held command is killed, never run, when compilation fails after it was spawned.
#[test]
fn dash_c_held_command_killed_on_compile_error() {
    common::require_root();
    let dir = scratch("c_compile_error");
    let marker = dir.join("ran");
    let cmd = format!("/bin/touch {}", marker.display());
    let status = run(&dir, &["-n", "BEGIN { x = ; }", "-c", &cmd]);
    assert_eq!(status.code(), Some(1));
    std::thread::sleep(Duration::from_millis(300));
    assert!(!marker.exists(), "the command ran although dtrace failed");
    let left = processes_with(&marker.display().to_string());
    kill_all(&left);
    assert!(left.is_empty(), "held command left running: {left:?}");
}

/// A held command is not released when dtrace is killed while holding it: dtrace is parked
/// opening `-o` on a FIFO (after loading, before attaching), then SIGKILLed.
#[test]
fn dash_c_held_command_dies_with_dtrace() {
    common::require_root();
    let dir = scratch("c_sigkill_held");
    let fifo = dir.join("fifo");
    mkfifo(&fifo);
    let marker = dir.join("ran");
    let cmd = format!("/bin/touch {}", marker.display());
    let ms = unique_ms(6);
    let probe = format!("tick-{ms}ms {{ }}");
    let mut child = spawn(&mut dtrace(
        &dir,
        &["-qn", &probe, "-c", &cmd, "-o", fifo.to_str().unwrap()],
    ));
    let mut held = Held::default();
    let mut kids = Vec::new();
    assert!(
        poll(TIMEOUT, || {
            held = held_by(child.id());
            kids = children_of(child.id());
            !held.progs.is_empty() && !kids.is_empty()
        }),
        "dtrace never loaded its programs and forked the command"
    );
    std::thread::sleep(Duration::from_millis(200));
    assert!(!marker.exists(), "the command ran before tracing started");
    signal(&child, libc::SIGKILL);
    wait(&mut child, TIMEOUT, "SIGKILLed dtrace");
    let gone = poll(Duration::from_secs(5), || !kids.iter().any(|&k| alive(k)));
    kill_all(&kids);
    assert!(gone, "held command {kids:?} outlived dtrace");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!marker.exists(), "the command ran after dtrace was killed");
    assert_released(&held, "SIGKILL while holding the command");
}

/// A command still running when tracing ends is killed, as DTrace kills what it created:
/// when dtrace stops on SIGINT and when dtrace itself is SIGKILLed.
#[test]
fn dash_c_command_does_not_outlive_dtrace() {
    common::require_root();
    for (sig, idx) in [(libc::SIGINT, 8), (libc::SIGKILL, 9)] {
        let dir = scratch(&format!("c_outlive_{sig}"));
        // A duration unique to this run identifies the command among all processes.
        let arg = format!("30.{}{idx}", std::process::id());
        let cmd = format!("/bin/sleep {arg}");
        let ms = unique_ms(idx);
        let probe = format!("tick-{ms}ms {{ }}");
        let mut child = spawn(&mut dtrace(&dir, &["-qn", &probe, "-c", &cmd]));
        let held = wait_attached(&mut child, &format!("dt_tick_{ms}ms"));
        let mut kids = Vec::new();
        assert!(
            poll(TIMEOUT, || {
                kids = children_of(child.id());
                kids.iter()
                    .any(|&k| read(Path::new(&format!("/proc/{k}/comm"))) == "sleep\n")
            }),
            "the command never started"
        );
        signal(&child, sig);
        wait(&mut child, TIMEOUT, "signalled dtrace");
        let gone = poll(Duration::from_secs(5), || !kids.iter().any(|&k| alive(k)));
        let left = processes_with(&arg);
        kill_all(&kids);
        assert!(
            gone,
            "signal {sig}: the command {kids:?} outlived dtrace: {left:?}"
        );
        assert_released(&held, "dtrace with a command");
    }
}

#[test]
fn dash_p_ends_when_process_exits() {
    common::require_root();
    let dir = scratch("p_exits");
    // Not reaped until dtrace is done: dtrace must notice the exit of a zombie too.
    let mut sleeper = spawn(Command::new("/bin/sleep").arg("0.5"));
    let pid = sleeper.id().to_string();
    let status = run(
        &dir,
        &[
            "-qn",
            "BEGIN { printf(\"target=%d\\n\", $target); } tick-10ms { @n = count(); }",
            "-p",
            &pid,
        ],
    );
    wait(&mut sleeper, TIMEOUT, "sleep");
    let (out, err) = (stdout_of(&dir), stderr_of(&dir));
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(out.contains(&format!("target={pid}\n")), "{out:?}");
    assert!(has_count(&out), "no aggregation: {out:?}");
    assert!(!err.contains("exited"), "{err:?}");
}

#[test]
fn dash_p_missing_pid_fails() {
    common::require_root();
    let dir = scratch("p_missing");
    let mut gone = Command::new("/bin/true").spawn().unwrap();
    wait(&mut gone, TIMEOUT, "true");
    let pid = gone.id().to_string();
    let status = run(&dir, &["-qn", "tick-10ms { }", "-p", &pid]);
    assert_eq!(status.code(), Some(1));
    assert!(
        stderr_of(&dir).contains(&format!("failed to grab pid {pid}")),
        "{}",
        stderr_of(&dir)
    );
}

#[test]
fn dash_o_appends() {
    common::require_root();
    let dir = scratch("o_appends");
    let file = dir.join("out");
    File::create(&file).unwrap().write_all(b"before\n").unwrap();
    let path = file.to_str().unwrap();
    for _ in 0..2 {
        let status = run(
            &dir,
            &["-qn", "BEGIN { printf(\"one\\n\"); exit(0); }", "-o", path],
        );
        assert_eq!(status.code(), Some(0), "{}", stderr_of(&dir));
        assert_eq!(stdout_of(&dir), "", "-o output went to stdout");
    }
    let text = read(&file);
    assert!(text.starts_with("before\none\n"), "{text:?}");
    assert_eq!(text.matches("one\n").count(), 2, "{text:?}");
}

/// A `-c` command is held as DTrace holds it, right after its exec: none of the child's
/// events before the exec (its `execve`, running as `dtrace`) reaches the script.
#[test]
fn c_command_is_held_after_its_exec() {
    let run = common::dtrace(&[
        "-q",
        "-n",
        "syscall::execve:entry /pid == $target/ { printf(\"execve seen\\n\"); }
         syscall:::entry /pid == $target/ { @[execname] = count(); }",
        "-c",
        "/bin/true",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(!run.stdout.contains("execve seen"), "{}", run.stdout);
    let names: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["true"], "{}", run.stdout);
}

/// exit() from several CPUs at once prints once: the firings racing the first exit() on
/// other CPUs are not shown.
#[test]
fn exit_on_every_cpu_at_once_prints_once() {
    for _ in 0..3 {
        let run = common::dtrace(&["-n", "profile-4999 { exit(0); }"]);
        assert_eq!(run.status, 0, "{}", run.stderr);
        assert_eq!(
            run.stdout.matches(":profile-4999").count(),
            1,
            "{}",
            run.stdout
        );
    }
}

/// chill(ns) spins in the probe for about that long (destructive: with -w).
#[test]
fn chill_spins_for_the_time_asked() {
    let start = Instant::now();
    let run = common::dtrace(&["-wqn", "BEGIN { chill(100000000); exit(0); }"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        start.elapsed() >= Duration::from_millis(90),
        "{:?}",
        start.elapsed()
    );
    let refused = common::dtrace(&["-qn", "BEGIN { chill(1); exit(0); }"]);
    assert_eq!(refused.status, 1);
    assert_eq!(
        refused.stderr,
        "dtrace: could not enable tracing: Destructive actions not allowed\n"
    );
}

/// copyout() and copyoutstr() need bpf_probe_write_user, which a kernel in lockdown
/// refuses: where it is refused, dtrace says so in words, not as a verifier bug.
#[test]
fn copyout_where_the_kernel_forbids_it_is_refused_in_words() {
    let run = common::dtrace(&[
        "-wqn",
        "BEGIN { this->p = alloca(8); copyout(this->p, 4096, 8); copyoutstr(\"x\", 4096, 8); exit(0); }",
    ]);
    if run
        .stderr
        .contains("copyout( ) and copyoutstr( ) cannot run on this kernel")
    {
        assert_eq!(run.status, 1, "{}", run.stderr);
    } else {
        // Address 4096 is never mapped: the write faults, and the script goes on.
        assert_eq!(run.status, 0, "{}", run.stderr);
        assert!(run.stderr.contains("invalid address"), "{}", run.stderr);
    }
    assert!(!run.stderr.contains("verifier"), "{}", run.stderr);
}

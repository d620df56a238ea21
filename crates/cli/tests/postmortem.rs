//! The postmortem flight recorder on the real kernel: `-x bufpolicy=ring` with a `-c` or
//! `-p` process that fires USDT probes and then dies of SIGSEGV or SIGABRT prints the last
//! records, the fatal signal and the aggregations, and writes the same to a file; with
//! `-x ringpin`, the ring survives `kill -9` of `dtrace` as two pinned maps (no program, no
//! link), which `-x ringread` prints and `-x ringclear` removes.
//!
//! They need root and `bpftool`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `crashy MODE N`: once traced (its probe's semaphore set), fires `crashy:::step(i)` for
/// i = 1..N, then dies of SIGSEGV (`segv`) or SIGABRT (`abort`), returns 0 (`exit`), or
/// writes the file `fired` and waits to be killed (`hang`). `slowsegv` waits 20 ms before
/// each step: a `-p` process's semaphore is set as its probe is attached, before tracing
/// starts, so only its later steps are seen. It runs on CPU 0 only: each CPU keeps its
/// own latest records, and a process that moved would leave some on another.
const PROGRAM: &str = r#"
#define _GNU_SOURCE
#define _SDT_HAS_SEMAPHORES 1
#include <sched.h>
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned short crashy_step_semaphore __attribute__((unused)) __attribute__((section(".probes")));

int main(int argc, char **argv) {
    const char *mode = argv[1];
    int n = atoi(argv[2]);
    cpu_set_t cpu0;
    CPU_ZERO(&cpu0);
    CPU_SET(0, &cpu0);
    sched_setaffinity(0, sizeof cpu0, &cpu0);
    while (!crashy_step_semaphore)
        usleep(1000);
    for (int i = 1; i <= n; i++) {
        if (strcmp(mode, "slowsegv") == 0)
            usleep(20000);
        DTRACE_PROBE1(crashy, step, i);
    }
    if (strcmp(mode, "segv") == 0 || strcmp(mode, "slowsegv") == 0)
        *(volatile int *)0 = 1;
    if (strcmp(mode, "abort") == 0)
        abort();
    if (strcmp(mode, "hang") == 0) {
        fclose(fopen("fired", "w"));
        for (;;)
            pause();
    }
    return 0;
}
"#;

/// Each step's record counts 16 bytes as DTrace counts them (its 4-byte id, then the
/// 8-byte `arg0` at its alignment): an 80-byte buffer keeps the last five.
const SCRIPT: &str =
    "crashy$target:::step { printf(\"step %d\\n\", arg0); @steps = count(); @last = max(arg0); }";

/// What the ring shows of 50 steps.
const LAST_FIVE: &str = "step 46\nstep 47\nstep 48\nstep 49\nstep 50\n";

/// The aggregations after 50 steps.
const AGGREGATIONS: &str = "\n               50\n               50\n";

/// A scratch directory with `crashy` built in it.
fn setup(name: &str) -> (PathBuf, String) {
    let dir = common::scratch("postmortem", name);
    let exe = common::build_c(&dir, "crashy", PROGRAM, &["-O1"]);
    (dir, exe.display().to_string())
}

/// `dtrace -q -x bufpolicy=ring -x bufsize=80 EXTRA... -n SCRIPT`, run in `dir`.
fn ring_dtrace(dir: &Path, extra: &[&str]) -> Command {
    let mut args = vec!["-q", "-x", "bufpolicy=ring", "-x", "bufsize=80"];
    args.extend(extra);
    args.extend(["-n", SCRIPT]);
    let mut cmd = common::command(&args);
    cmd.current_dir(dir);
    cmd
}

/// The pid and path of `dtrace: postmortem of pid N written to PATH`, the only line of
/// `stderr`.
fn written(stderr: &str) -> (i32, PathBuf) {
    let rest = stderr
        .strip_prefix("dtrace: postmortem of pid ")
        .and_then(|r| r.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("stderr: {stderr:?}"));
    let (pid, path) = rest.split_once(" written to ").expect("a path");
    (pid.parse().expect("a pid"), PathBuf::from(path))
}

#[test]
fn a_segfault_prints_the_last_records_the_signal_and_the_aggregations_and_saves_them() {
    let (dir, exe) = setup("segv");
    let cmd = format!("{exe} segv 50");
    let run = common::finish(ring_dtrace(&dir, &["-c", &cmd]).spawn().unwrap(), "segv");
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    let (pid, path) = written(&run.stderr);
    assert_eq!(
        run.stdout,
        format!("{LAST_FIVE}dtrace: pid {pid} terminated by SIGSEGV\n{AGGREGATIONS}")
    );
    // Beside the core: this machine's core_pattern names no directory (`core.%e` here),
    // so the core goes to the process's working directory, which is `dir`.
    let pattern = std::fs::read_to_string("/proc/sys/kernel/core_pattern").unwrap();
    if !pattern.contains('/') {
        assert_eq!(path, dir.join(format!("dtrace-postmortem.{pid}")));
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), run.stdout);
    // Readable by its owner only, as a core is.
    let mode = std::fs::metadata(&path).unwrap().permissions();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
        0o600
    );
}

#[test]
fn an_abort_goes_to_the_postmortem_file_named() {
    let (dir, exe) = setup("abort");
    let cmd = format!("{exe} abort 50");
    let file = dir.join("flight.txt");
    let option = format!("postmortem={}", file.display());
    let run = common::finish(
        ring_dtrace(&dir, &["-x", &option, "-c", &cmd])
            .spawn()
            .unwrap(),
        "abort",
    );
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    let (pid, path) = written(&run.stderr);
    assert_eq!(path, file);
    let want = format!("{LAST_FIVE}dtrace: pid {pid} terminated by SIGABRT\n{AGGREGATIONS}");
    assert_eq!(run.stdout, want);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), want);

    // A file that cannot be written is an error, after the postmortem was printed.
    let run = common::finish(
        ring_dtrace(&dir, &["-x", "postmortem=/nonexistent/pm", "-c", &cmd])
            .spawn()
            .unwrap(),
        "abort, no file",
    );
    assert_eq!(run.status, 1);
    assert!(run.stdout.starts_with(LAST_FIVE), "{}", run.stdout);
    assert_eq!(
        run.stderr,
        "dtrace: failed to write postmortem file '/nonexistent/pm': No such file or directory\n"
    );
}

#[test]
fn a_process_followed_with_p_gets_its_postmortem() {
    let (dir, exe) = setup("pid");
    let mut target = Command::new(&exe)
        .args(["slowsegv", "100"])
        .current_dir(&dir)
        .spawn()
        .unwrap();
    let pid = target.id().to_string();
    let mut dtrace = common::command(&[
        "-q",
        "-x",
        "bufpolicy=ring",
        "-x",
        "bufsize=80",
        "-p",
        &pid,
        "-n",
        "crashy$target:::step { printf(\"step %d\\n\", arg0); @last = max(arg0); }",
    ]);
    let run = common::finish(dtrace.current_dir(&dir).spawn().unwrap(), "-p");
    // Reaped only now: dtrace read its status while it was a zombie.
    let status = target.wait().unwrap();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGSEGV)
    );
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    let last_five = "step 96\nstep 97\nstep 98\nstep 99\nstep 100\n";
    assert_eq!(
        run.stdout,
        format!("{last_five}dtrace: pid {pid} terminated by SIGSEGV\n\n              100\n")
    );
    let (_, path) = written(&run.stderr);
    assert_eq!(std::fs::read_to_string(path).unwrap(), run.stdout);
}

#[test]
fn a_normal_exit_has_no_postmortem() {
    let (dir, exe) = setup("exit");
    let cmd = format!("{exe} exit 50");
    let run = common::finish(ring_dtrace(&dir, &["-c", &cmd]).spawn().unwrap(), "exit");
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    assert_eq!(run.stderr, "");
    // The ring's records at the end, as bufpolicy=ring always showed them.
    assert_eq!(run.stdout, format!("{LAST_FIVE}{AGGREGATIONS}"));
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("dtrace-postmortem"))
        .collect();
    assert!(files.is_empty(), "{files:?}");
}

/// Where pin `name` lives.
fn pin_dir(name: &str) -> PathBuf {
    Path::new("/sys/fs/bpf/dtrace").join(name)
}

/// A pin name of this test process.
fn pin_name(test: &str) -> String {
    format!("pmtest-{}-{test}", std::process::id())
}

/// The BPF objects a process holds, as `(kind, id)` from its fdinfo.
fn bpf_objects(pid: u32) -> Vec<(&'static str, u32)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .unwrap()
        .flatten()
    {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        // A link's fdinfo also names its program: the link is what the fd holds.
        let kind = ["link_id", "prog_id", "map_id"]
            .into_iter()
            .find(|k| text.lines().any(|l| l.starts_with(&format!("{k}:"))));
        let Some(kind) = kind else { continue };
        let id = text
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{kind}:")))
            .and_then(|v| v.trim().parse().ok())
            .expect("an id");
        out.push((kind.trim_end_matches("_id"), id));
    }
    out
}

/// Whether BPF object `kind` `id` exists.
fn exists(kind: &str, id: u32) -> bool {
    Command::new("bpftool")
        .args([kind, "show", "id", &id.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("bpftool is installed")
        .success()
}

/// The id of the map pinned at `path`.
fn pinned_id(path: &Path) -> u32 {
    let out = Command::new("bpftool")
        .args(["map", "show", "pinned"])
        .arg(path)
        .output()
        .expect("bpftool is installed");
    let text = String::from_utf8_lossy(&out.stdout);
    text.split(':')
        .next()
        .and_then(|id| id.trim().parse().ok())
        .unwrap_or_else(|| panic!("no map pinned at {}: {text}", path.display()))
}

/// Poll `cond` every 20 ms for up to 10 s.
fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(start.elapsed() < Duration::from_secs(10), "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Start a pinning `dtrace -c "crashy hang 50"`, wait until every step fired, `kill -9` it,
/// and check that only the two pinned maps are left of what it held.
fn killed_with_a_pinned_ring(dir: &Path, exe: &str, name: &str) -> (u32, Vec<u32>) {
    let cmd = format!("{exe} hang 50");
    let pin = format!("ringpin={name}");
    let mut dtrace: Child = ring_dtrace(dir, &["-x", &pin, "-c", &cmd]).spawn().unwrap();
    let dtrace_pid = dtrace.id();
    eventually("the steps were never fired", || dir.join("fired").exists());
    let held = bpf_objects(dtrace_pid);
    assert!(held.iter().any(|(k, _)| *k == "link"), "{held:?}");
    dtrace.kill().unwrap();
    dtrace.wait().unwrap();
    let pinned: Vec<u32> = ["ring", "desc"]
        .iter()
        .map(|f| pinned_id(&pin_dir(name).join(f)))
        .collect();
    eventually("programs, links or maps were left behind", || {
        held.iter()
            .all(|&(kind, id)| exists(kind, id) == (kind == "map" && pinned.contains(&id)))
    });
    (dtrace_pid, pinned)
}

#[test]
fn the_ring_survives_kill_9_and_a_later_dtrace_reads_it_once() {
    let (dir, exe) = setup("ringread");
    let name = pin_name("read");
    let (dtrace_pid, pinned) = killed_with_a_pinned_ring(&dir, &exe, &name);
    let option = format!("ringread={name}");
    let run = common::dtrace(&["-x", &option]);
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    // The message names the killed dtrace and its target (which died with it).
    let prefix = format!(
        "dtrace: read the ring pinned as '{name}' by dtrace pid {dtrace_pid}, tracing pid "
    );
    let target = run
        .stderr
        .strip_prefix(&prefix)
        .and_then(|r| r.split_once(';'))
        .map(|(pid, _)| pid)
        .unwrap_or_else(|| panic!("stderr: {}", run.stderr));
    assert_eq!(
        run.stderr,
        format!("{prefix}{target}; removed {}\n", pin_dir(&name).display())
    );
    // Quiet, as the run that pinned it; no aggregations (their maps went with it).
    assert_eq!(run.stdout, LAST_FIVE);
    assert!(!pin_dir(&name).exists());
    eventually("the pinned maps were not freed", || {
        pinned.iter().all(|&id| !exists("map", id))
    });
    let again = common::dtrace(&["-x", &option]);
    assert_eq!(again.status, 1);
    assert_eq!(
        again.stderr,
        format!(
            "dtrace: no ring is pinned as '{name}' ({})\n",
            pin_dir(&name).display()
        )
    );
}

#[test]
fn ringclear_removes_a_pinned_ring_unread() {
    let (dir, exe) = setup("ringclear");
    let name = pin_name("clear");
    let (_, pinned) = killed_with_a_pinned_ring(&dir, &exe, &name);
    let run = common::dtrace(&["-x", &format!("ringclear={name}")]);
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (0, "", "")
    );
    assert!(!pin_dir(&name).exists());
    eventually("the pinned maps were not freed", || {
        pinned.iter().all(|&id| !exists("map", id))
    });
}

#[test]
fn an_orderly_end_removes_the_pin_and_a_pin_in_use_is_refused() {
    let (dir, exe) = setup("orderly");
    let name = pin_name("orderly");
    let pin = format!("ringpin={name}");
    let cmd = format!("{exe} segv 50");
    let run = common::finish(
        ring_dtrace(&dir, &["-x", &pin, "-c", &cmd])
            .spawn()
            .unwrap(),
        "orderly",
    );
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    let (pid, _) = written(&run.stderr);
    assert_eq!(
        run.stdout,
        format!("{LAST_FIVE}dtrace: pid {pid} terminated by SIGSEGV\n{AGGREGATIONS}")
    );
    assert!(!pin_dir(&name).exists());

    // SIGTERM ends tracing in order too: the ring is shown (no crash: no signal line).
    let hang = format!("{exe} hang 50");
    let dtrace = ring_dtrace(&dir, &["-x", &pin, "-c", &hang])
        .spawn()
        .unwrap();
    eventually("the steps were never fired", || dir.join("fired").exists());
    assert!(pin_dir(&name).exists());
    // SAFETY: kill on our own child, not yet reaped.
    assert_eq!(unsafe { libc::kill(dtrace.id() as i32, libc::SIGTERM) }, 0);
    let run = common::finish(dtrace, "SIGTERM");
    assert_eq!((run.status, run.stderr.as_str()), (0, ""));
    assert_eq!(run.stdout, format!("{LAST_FIVE}{AGGREGATIONS}"));
    assert!(!pin_dir(&name).exists());

    std::fs::create_dir_all(pin_dir(&name)).unwrap();
    let run = common::finish(
        ring_dtrace(&dir, &["-x", &pin, "-c", &cmd])
            .spawn()
            .unwrap(),
        "in use",
    );
    std::fs::remove_dir(pin_dir(&name)).unwrap();
    let _ = std::fs::remove_dir("/sys/fs/bpf/dtrace");
    assert_eq!(run.status, 1);
    assert_eq!(
        run.stderr,
        format!(
            "dtrace: failed to pin the ring as '{name}': a ring is pinned there already \
             (read it with -x ringread={name}, or remove it with -x ringclear={name})\n"
        )
    );
}

#[test]
fn options_that_cannot_apply_are_clear_errors() {
    for (args, want) in [
        (
            &["-x", "postmortem=/tmp/pm", "-n", "BEGIN { exit(0); }"][..],
            "dtrace: -x postmortem needs -x bufpolicy=ring\n",
        ),
        (
            &[
                "-x",
                "bufpolicy=ring",
                "-x",
                "postmortem=/tmp/pm",
                "-n",
                "BEGIN { exit(0); }",
            ],
            "dtrace: -x postmortem needs a -c or -p process\n",
        ),
        (
            &["-x", "ringpin", "-n", "BEGIN { exit(0); }"],
            "dtrace: -x ringpin needs -x bufpolicy=ring\n",
        ),
        (
            &["-x", "ringread", "-n", "BEGIN { exit(0); }"],
            "dtrace: -x ringread and -x ringclear take no program, -c or -p\n",
        ),
        (
            &["-x", "ringread=../etc"],
            "dtrace: failed to set -x ringread: Invalid value for specified option\n",
        ),
    ] {
        let mut full = vec!["-q"];
        full.extend(args);
        let run = common::dtrace(&full);
        assert_ne!(run.status, 0, "{args:?}");
        assert_eq!(run.stderr, want, "{args:?}");
        assert_eq!(run.stdout, "", "{args:?}");
    }
}

#[test]
fn json_output_names_the_fatal_signal_between_records_and_aggregations() {
    let (dir, exe) = setup("json");
    let cmd = format!("{exe} segv 50");
    let run = common::finish(
        ring_dtrace(&dir, &["-x", "oformat=json", "-c", &cmd])
            .spawn()
            .unwrap(),
        "json",
    );
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    let (pid, path) = written(&run.stderr);
    let kind = |line: &str| {
        let rest = line.strip_prefix("{\"type\":\"")?;
        Some(rest[..rest.find('"')?].to_string())
    };
    let kinds: Vec<String> = run.stdout.lines().filter_map(kind).collect();
    assert_eq!(
        kinds,
        [
            "printf",
            "printf",
            "printf",
            "printf",
            "printf",
            "fatal-signal"
        ]
        .into_iter()
        .chain(["aggregation", "aggregation", "exit"])
        .collect::<Vec<_>>()
    );
    let signal = format!("{{\"type\":\"fatal-signal\",\"pid\":{pid},\"signal\":\"SIGSEGV\"}}");
    assert!(run.stdout.lines().any(|l| l == signal), "{}", run.stdout);
    assert_eq!(std::fs::read_to_string(path).unwrap(), run.stdout);
}

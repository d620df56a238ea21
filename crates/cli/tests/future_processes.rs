//! Probes of binaries that nothing runs when tracing starts: a provider glob
//! (`myprov*:::tick`) or a `pid` glob naming a module (`pid*:prog:work:entry`) waits for
//! processes that start later; the first exec of each new binary is held while its probes
//! are attached, so every firing is counted, exactly, and the program's own results do
//! not change.

mod common;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use common::Run;

/// `prog N`: fires `PROV:::tick(i)` N times and calls `work(i)` N times, then prints the
/// sum of `work`'s results. Each test builds it under a name and provider of its own, as
/// the probes are system-wide: tests running at once must not see each other's.
const PROGRAM: &str = r#"
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long work(long x) { __asm__ volatile(""); return x * 3 + 1; }

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 3;
    long s = 0;
    for (int i = 0; i < n; i++) {
        DTRACE_PROBE1(PROV, tick, i);
        s += work(i);
    }
    printf("%ld\n", s);
    return 0;
}
"#;

/// One watching dtrace at a time: a process that two sessions hold is let go by whichever
/// finishes first (see `exec_watch`), so tests running at once would lose firings.
static WATCHING: Mutex<()> = Mutex::new(());

fn program(name: &str, provider: &str) -> PathBuf {
    let dir = common::scratch("future", name);
    common::build_c(&dir, name, PROGRAM, &["-O1", &format!("-DPROV={provider}")])
}

/// A shell script running `prog 3` `runs` times, checking each run's output.
fn loop_script(prog: &Path, runs: u32) -> String {
    let script = prog.with_extension("sh");
    std::fs::write(
        &script,
        format!(
            "i=0\nwhile [ $i -lt {runs} ]; do\n  out=$({} 3)\n  [ \"$out\" = 12 ] || echo \"bad output $out\"\n  i=$((i+1))\ndone\necho loop done\n",
            prog.display()
        ),
    )
    .unwrap();
    format!("/bin/sh {}", script.display())
}

fn assert_ok(r: &Run) {
    assert_eq!(r.status, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
    assert!(!r.stdout.contains("bad output"), "{}", r.stdout);
    assert!(r.stdout.contains("loop done"), "{}", r.stdout);
}

#[test]
fn provider_glob_traces_a_binary_nothing_ran_at_start() {
    let _one = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    let prog = program("laterusdt", "laterprov");
    let run = common::dtrace(&[
        "-q",
        "-n",
        "laterprov*:::tick { @[probeprov, probemod, probefunc] = count(); @s = sum(arg0); }",
        "-c",
        &loop_script(&prog, 200),
    ]);
    assert_ok(&run);
    assert_eq!(
        common::row(&run.stdout, &["laterprov", "laterusdt", "main"]),
        Some(600),
        "{}",
        run.stdout
    );
    // arg0 is 0, 1, 2 in each run.
    assert!(
        run.stdout.lines().any(|l| l.trim() == "600"),
        "{}",
        run.stdout
    );
}

#[test]
fn pid_glob_naming_a_module_traces_later_processes() {
    let _one = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    let prog = program("laterpid", "laterpidprov");
    let run = common::dtrace(&[
        "-q",
        "-n",
        "pid*:laterpid:work:entry { @[probefunc, probename] = count(); }
         pid*:laterpid:work:return { @r = sum(arg1); }",
        "-c",
        &loop_script(&prog, 200),
    ]);
    assert_ok(&run);
    assert_eq!(
        common::row(&run.stdout, &["work", "entry"]),
        Some(600),
        "{}",
        run.stdout
    );
    // work(0) + work(1) + work(2) = 12 per run.
    assert!(
        run.stdout.lines().any(|l| l.trim() == "2400"),
        "{}",
        run.stdout
    );
}

#[test]
fn a_glob_matching_nothing_yet_is_not_an_error() {
    common::require_root();
    let _one = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    let run = common::dtrace(&["-n", "nosuchprov*:::x { @ = count(); }", "-c", "/bin/true"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stderr.contains("matched 0 probes"), "{}", run.stderr);
}

/// `dtrace` killed (`SIGKILL`) while new binaries start: a process it had stopped to attach
/// probes is continued all the same (by its guardian), so every run of the loop finishes
/// with the program's own output.
#[test]
fn sigkill_leaves_no_process_stopped() {
    let _one = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    let prog = program("killheld", "killprov");
    // Distinct files, so each one's first exec is stopped while it is examined.
    let copies: Vec<PathBuf> = (0..40)
        .map(|i| {
            let copy = prog.with_file_name(format!("killheld{i}"));
            std::fs::copy(&prog, &copy).unwrap();
            copy
        })
        .collect();
    let script = prog.with_extension("sh");
    let mut text = String::new();
    for _ in 0..5 {
        for copy in &copies {
            text += &format!(
                "out=$({} 3); [ \"$out\" = 12 ] || echo \"bad output $out\"\n",
                copy.display()
            );
        }
    }
    text += "echo loop done\n";
    std::fs::write(&script, text).unwrap();
    for delay_ms in [30u64, 120, 300] {
        let mut tracer = common::spawn(&[
            "-q",
            "-n",
            "BEGIN { printf(\"ready\\n\"); } killprov*:::tick { @ = count(); }",
        ]);
        let mut ready = [0u8; 6];
        std::io::Read::read_exact(tracer.stdout.as_mut().unwrap(), &mut ready).unwrap();
        assert_eq!(&ready, b"ready\n");
        let looping = std::process::Command::new("/bin/sh")
            .arg(&script)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        tracer.kill().unwrap();
        tracer.wait().unwrap();
        // The loop finishes (a process left stopped would hang it; the harness's
        // timeout fails the test then).
        let waited = std::thread::spawn(move || looping.wait_with_output().unwrap());
        let start = std::time::Instant::now();
        while !waited.is_finished() {
            assert!(
                start.elapsed() < std::time::Duration::from_secs(60),
                "a process stayed stopped after dtrace was killed ({delay_ms} ms in)"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = String::from_utf8_lossy(&waited.join().unwrap().stdout).into_owned();
        assert!(!out.contains("bad output"), "{out}");
        assert!(out.ends_with("loop done\n"), "{out}");
    }
}

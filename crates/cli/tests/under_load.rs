//! Exact results under load: probes whose programs interrupt each other on one CPU (a
//! `profile` perf-event program firing inside a raw `sys_enter` program or a uprobe
//! program) must not corrupt each other's records, keys or counts. Every count is checked
//! exactly and every key against the names that can occur.

mod common;

use std::path::PathBuf;

use common::{build_c, dtrace, scratch};

/// A program that makes `argv[1]` `getpid()` system calls, each through a call of `work`
/// (a function the pid provider can trace), then prints how many it made.
/// The test program, built once for every test of this file (tests run at once: one
/// rebuilding it while another runs it would fail that one with ETXTBSY).
fn load_program() -> PathBuf {
    static BUILT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    BUILT.get_or_init(build_load_program).clone()
}

fn build_load_program() -> PathBuf {
    let dir = scratch("load", "prog");
    build_c(
        &dir,
        "load",
        r#"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <time.h>
__attribute__((noinline)) long work(long i) { return syscall(SYS_getpid) + i; }
int main(int argc, char **argv) {
    long n = atol(argv[1]), sum = 0;
    /* "for S" runs for S seconds instead of n calls, and says how many it made. */
    if (argc > 2) {
        time_t end = time(0) + atol(argv[2]);
        for (n = 0; (n & 4095) || time(0) < end; n++) sum += work(n);
    } else {
        for (long i = 0; i < n; i++) sum += work(i);
    }
    printf("done %ld\n", n);
    return sum == 0;
}
"#,
        &["-O1"],
    )
}

/// `(key, count)` rows of a default-format aggregation print.
fn rows(stdout: &str) -> Vec<(String, u64)> {
    stdout
        .lines()
        .filter_map(|l| {
            let (key, count) = l.trim().rsplit_once(' ')?;
            Some((key.trim().to_string(), count.parse().ok()?))
        })
        .collect()
}

#[test]
fn syscall_counts_stay_exact_beside_a_profile_probe() {
    let prog = load_program();
    let n = 3_000_000u64;
    let cmd = format!("{} {n}", prog.display());
    let run = dtrace(&[
        "-qn",
        "profile-4999 { @s[stack()] = count(); }
         syscall:::entry /pid == $target/ { @c[probefunc] = count(); }
         END { printa(@c); exit(0); }",
        "-c",
        &cmd,
    ]);
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    assert!(!run.stderr.contains("drop"), "stderr: {}", run.stderr);
    // The printa of @c comes first; stack rows follow and have no probefunc keys.
    let counts: Vec<(String, u64)> = rows(&run.stdout)
        .into_iter()
        .filter(|(k, _)| k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let getpid: u64 = counts
        .iter()
        .filter(|(k, _)| k == "getpid")
        .map(|(_, c)| c)
        .sum();
    assert_eq!(getpid, n, "getpid count: {counts:?}");
    for line in run.stdout.lines() {
        assert!(
            line.chars().all(|c| c.is_ascii_graphic() || c == ' '),
            "a corrupted key: {line:?}"
        );
    }
}

#[test]
fn records_stay_clean_beside_a_profile_probe() {
    let prog = load_program();
    let n = 300_000u64;
    let cmd = format!("{} {n}", prog.display());
    let args = [
        "-qn",
        "profile-4999 { @s[stack()] = count(); }
         syscall::getpid:entry /pid == $target/ { printf(\"%s %s %d\\n\", probefunc, execname, pid == $target); }
         END { exit(0); }",
        "-x",
        "bufsize=64m",
        "-c",
        &cmd,
    ];
    let run = common::finish_within(
        common::spawn(&args),
        "a minute under load",
        std::time::Duration::from_secs(180),
    );
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    let records = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("getpid "))
        .collect::<Vec<_>>();
    let dropped = run.stderr.contains("drop");
    assert!(
        dropped || records.len() as u64 == n,
        "{} records, no drops reported",
        records.len()
    );
    for r in &records {
        assert_eq!(*r, "getpid load 1", "a corrupted record");
    }
}

#[test]
fn uprobe_counts_stay_exact_beside_a_profile_probe() {
    let prog = load_program();
    let n = 1_000_000u64;
    let cmd = format!("{} {n}", prog.display());
    let run = dtrace(&[
        "-qn",
        "profile-4999 { @s[execname, stack()] = count(); }
         pid$target:a.out:work:entry { @u[probefunc, execname] = count(); @v = sum(arg0); }
         END { printa(\"%s %s %@d\\n\", @u); printa(\"sum %@d\\n\", @v); exit(0); }",
        "-c",
        &cmd,
    ]);
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    assert!(!run.stderr.contains("drop"), "stderr: {}", run.stderr);
    assert!(
        run.stdout.contains(&format!("work load {n}\n")),
        "stdout: {}",
        &run.stdout[..run.stdout.len().min(2000)]
    );
    let sum: u64 = (0..n).sum();
    assert!(
        run.stdout.contains(&format!("sum {sum}\n")),
        "sum of arg0 should be {sum}"
    );
}

/// A minute of every kind of program at once (issue 16's load test): a perf-event program
/// at 4999 Hz on every CPU, a raw `sys_enter` program and a uprobe program, each firing
/// inside the others, and every count still exact. The program says how many calls it
/// made in its minute; each made one `getpid` and one call of `work`.
#[test]
fn a_minute_of_profile_syscall_and_uprobe_clauses_counts_exactly() {
    let prog = load_program();
    let cmd = format!("{} 0 60", prog.display());
    let start = std::time::Instant::now();
    let args = [
        "-qn",
        "profile-4999 { @s[stack()] = count(); }
         syscall::getpid:entry /pid == $target/ { @c[probefunc] = count(); }
         pid$target:a.out:work:entry { @u[probefunc] = count(); }
         END { printa(\"%s %@d\\n\", @c); printa(\"%s %@d\\n\", @u); exit(0); }",
        "-c",
        &cmd,
    ];
    let run = common::finish_within(
        common::spawn(&args),
        "a minute under load",
        std::time::Duration::from_secs(180),
    );
    let seconds = start.elapsed().as_secs_f64();
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    assert!(!run.stderr.contains("drop"), "stderr: {}", run.stderr);
    let n: u64 = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("done "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "no count from the program: {}",
                &run.stdout[..run.stdout.len().min(500)]
            )
        });
    assert!(n > 0);
    assert!(
        run.stdout.contains(&format!("\ngetpid {n}\n")),
        "getpid should count {n}"
    );
    assert!(
        run.stdout.contains(&format!("\nwork {n}\n")),
        "work should count {n}"
    );
    println!(
        "{n} calls in {seconds:.1} s: {:.0} probe firings a second beside profile-4999",
        2.0 * n as f64 / seconds
    );
}

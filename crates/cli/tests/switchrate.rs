//! `switchrate`: the consumer reads the trace buffer on a timer, as DTrace's does, and is
//! not woken for each record; yet `exit()` ends tracing at once, and a burst that would
//! fill the buffer before the next read wakes the consumer instead of being dropped.

mod common;

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

#[test]
fn exit_ends_tracing_at_once_whatever_the_switchrate() {
    let start = Instant::now();
    let run = common::finish_within(
        common::spawn(&[
            "-x",
            "switchrate=60sec",
            "-qn",
            r#"tick-10ms /i++ == 10/ { printf("done\n"); exit(0); }"#,
        ]),
        "with a 60 s switchrate",
        Duration::from_secs(30),
    );
    assert_eq!((run.status, run.stderr.as_str()), (0, ""));
    assert_eq!(run.stdout, "done\n\n");
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "exit() waited {:?} for the switchrate",
        start.elapsed()
    );
}

#[test]
fn a_burst_wakes_the_reader_before_it_fills_the_buffer() {
    // The smallest buffer (one page) holds 128 of these 32-byte records; 1,000 are written
    // within a 60 s switchrate, all read, none dropped.
    let run = common::finish_within(
        common::spawn(&[
            "-x",
            "bufsize=4k",
            "-x",
            "switchrate=60sec",
            "-qn",
            r#"tick-1ms /i < 1000/ { printf("%d\n", i++); } tick-1ms /i == 1000/ { exit(0); }"#,
        ]),
        "writing 1,000 records into a 4 KiB buffer",
        Duration::from_secs(30),
    );
    assert_eq!((run.status, run.stderr.as_str()), (0, ""));
    let want: String = (0..1000).map(|i| format!("{i}\n")).collect::<String>() + "\n";
    assert!(run.stdout == want, "stdout: {}", run.stdout);
}

#[test]
fn records_wait_for_the_next_read() {
    let start = Instant::now();
    let mut child = common::spawn(&[
        "-x",
        "switchrate=2sec",
        "-qn",
        r#"tick-10ms { printf("tick\n"); }"#,
    ]);
    let mut out = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut line = String::new();
    out.read_line(&mut line).expect("read the first line");
    let first = start.elapsed();
    // SAFETY: kill has no memory effects; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let run = common::finish(child, "with a 2 s switchrate");
    assert_eq!((run.status, line.as_str()), (0, "tick\n"), "{}", run.stderr);
    assert!(
        first >= Duration::from_millis(1500),
        "the first record was shown after {first:?}, before the first read (2 s)"
    );
}

#[test]
#[allow(
    clippy::zombie_processes,
    reason = "reaped by wait4, which also says what CPU time it used"
)]
fn waiting_for_the_next_read_costs_no_cpu() {
    // A deadline between two whole milliseconds must not be waited for by spinning.
    let child = common::spawn(&["-x", "switchrate=1500us", "-qn", "tick-2s { exit(0); }"]);
    let mut status = 0;
    // SAFETY: rusage is plain data the kernel fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child, with valid pointers to the status and usage we own.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{status:#x}"
    );
    let ms = |t: libc::timeval| t.tv_sec as u64 * 1000 + t.tv_usec as u64 / 1000;
    let cpu = ms(usage.ru_utime) + ms(usage.ru_stime);
    assert!(cpu < 200, "dtrace used {cpu} ms of CPU in 2 s of waiting");
}

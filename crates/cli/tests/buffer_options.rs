//! The options that size buffers and pace the consumer, on real programs: each buffer must
//! hold one of what goes in it (counted as DTrace counts it) or tracing is not enabled;
//! `-e` stops before that check, as DTrace's does; a set
//! `statusrate` delays END after `exit()` to the next status check; an `aggrate` keeps
//! `printa()` on a copy of the aggregations taken at most that often. Buffer policies count
//! records as DTrace lays them out.

mod common;

use std::time::Duration;

const TOO_SMALL: &str = "dtrace: could not enable tracing: Enabling exceeds size of buffer\n";

#[test]
fn buffers_too_small_for_one_entry_are_refused() {
    // count() takes 16 bytes of data and an 8-byte key tuple: 8 bytes hold none.
    let run = common::dtrace(&["-x", "aggsize=8", "-qn", "BEGIN { @ = count(); exit(0); }"]);
    assert_eq!((run.status, run.stderr.as_str()), (1, TOO_SMALL));
    // a[1] = 1: a 12-byte key tuple and a 4-byte value, more than 15 bytes.
    let run = common::dtrace(&["-x", "dynvarsize=15", "-qn", "BEGIN { a[1] = 1; exit(0); }"]);
    assert_eq!((run.status, run.stderr.as_str()), (1, TOO_SMALL));
    // Three int thread-local variables fit 15 bytes; one fits 5.
    let run = common::dtrace(&[
        "-x",
        "dynvarsize=5",
        "-qn",
        "BEGIN { self->a = 7; printf(\"%d\", self->a); exit(0); }",
    ]);
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (0, "7\n", "")
    );
    let run = common::dtrace(&["-x", "bufsize=0", "-qn", "BEGIN { exit(0); }"]);
    assert_eq!((run.status, run.stderr.as_str()), (1, TOO_SMALL));
}

#[test]
fn compiling_only_does_not_size_the_buffers() {
    let run = common::dtrace(&[
        "-e",
        "-x",
        "bufsize=0",
        "-x",
        "aggsize=8",
        "-qn",
        "BEGIN { @ = count(); }",
    ]);
    assert_eq!((run.status, run.stderr.as_str()), (0, ""));
}

/// How long after `exit()` END ran, in milliseconds, with `flags`.
fn exit_to_end_ms(flags: &[&str]) -> u64 {
    let program = "tick-100ms { ts = timestamp; exit(0); } END { printf(\"%d\", (timestamp - ts) / 1000000); }";
    let mut args = flags.to_vec();
    args.extend(["-qn", program]);
    let run = common::finish_within(common::spawn(&args), "exit()", Duration::from_secs(30));
    assert_eq!((run.status, run.stderr.as_str()), (0, ""));
    run.stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("stdout: {}", run.stdout))
}

#[test]
fn a_statusrate_set_delays_end_to_the_next_status_check() {
    // The first status check comes 2 s after tracing starts, 1.9 s after exit().
    let delayed = exit_to_end_ms(&["-x", "statusrate=2s"]);
    assert!(
        (1500..10_000).contains(&delayed),
        "END {delayed} ms after exit()"
    );
    let prompt = exit_to_end_ms(&[]);
    assert!(
        prompt < 500,
        "END {prompt} ms after exit() without a statusrate"
    );
}

#[test]
fn printa_shows_the_copy_of_the_aggregations_aggrate_took() {
    // The first copy is taken when the first records come (the count is 1); the next
    // would be 10 s later, after tracing ended. After tracing, aggregations are read afresh.
    let program =
        "tick-100ms { @ = count(); printa(\"%@d \", @); } tick-100ms /++i == 5/ { exit(0); } \
                   END { printa(\"end %@d\", @); }";
    let run = common::dtrace(&["-x", "aggrate=10s", "-qn", program]);
    assert_eq!((run.status, run.stderr.as_str()), (0, ""));
    assert_eq!(run.stdout, "1 1 1 1 1 end 5\n");
    let run = common::dtrace(&["-qn", program]);
    assert_eq!(run.stdout, "1 2 3 4 5 end 5\n");
}

#[test]
fn records_waiting_past_a_status_check_read_the_aggregations_when_exit_is_seen() {
    // After the setopt()s a read is due only 5 s later: the records of the ten clauses
    // after it wait for the status check that sees exit(), which reads them with the
    // counts as they are then (as DTrace's misc/tst.dynopt.d shows), not with the copy
    // taken while the rates were fast.
    let program = "tick-50ms { i++; @ = count(); } \
                   tick-50ms /i == 2/ { setopt(\"switchrate\", \"5sec\"); setopt(\"aggrate\", \"5sec\"); } \
                   tick-50ms /i > 2/ { printa(\"%@d \", @); } tick-50ms /i == 12/ { exit(0); }";
    let run = common::dtrace(&[
        "-x",
        "switchrate=10ms",
        "-x",
        "aggrate=10ms",
        "-qn",
        program,
    ]);
    assert_eq!((run.status, run.stderr.as_str()), (0, ""));
    assert_eq!(run.stdout, format!("{}\n", "12 ".repeat(10)));
}

#[test]
fn a_ring_counts_records_as_dtrace_lays_them_out() {
    // A trace() of a 64-bit value counts 16 bytes (the 4-byte id, then the value at its
    // alignment), exit()'s record 8: 16 bytes keep only the last record, exit()'s.
    let run = common::dtrace(&[
        "-x",
        "bufpolicy=ring",
        "-x",
        "bufsize=16",
        "-n",
        "tick-10ms { trace(0xbadbaddefec8d); } tick-10ms /i++ > 3/ { exit(0); }",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().map(str::trim_end).collect();
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    assert!(lines[1].ends_with(":tick-10ms"), "{}", run.stdout);
    // With room for 24 bytes, the last trace() is kept too.
    let run = common::dtrace(&[
        "-q",
        "-x",
        "bufpolicy=ring",
        "-x",
        "bufsize=24",
        "-n",
        "tick-10ms { printf(\"%x\\n\", 0xbadbaddefec8d); } tick-10ms /i++ > 3/ { exit(0); }",
    ]);
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (0, "badbaddefec8d\n\n"),
        "{}",
        run.stderr
    );
}

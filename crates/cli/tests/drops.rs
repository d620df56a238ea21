//! Drops, reported in DTrace's words: an aggregation that cannot take a new key counts
//! aggregation drops on its CPU (not dynamic variable drops), and `-x droptags` puts the
//! kind's tag in front of each message. Aggregations share the `aggsize` space as DTrace 2
//! counts it, and `trunc()` gives the places of the keys it deletes back. An `exit()` whose
//! record was dropped still ends tracing. Dynamic variables share the `dynvarsize` space as
//! DTrace counts it: one past it is a dynamic variable drop that ends its clause, and
//! deleting one makes room.

mod common;

#[test]
fn a_full_aggregation_counts_aggregation_drops_with_their_tag() {
    // A key of @[int] = count() counts 12 bytes of tuple and 16 of data: 28,672 bytes hold
    // 1,024 keys, and 1,100 distinct keys drop 76.
    let run = common::dtrace(&[
        "-x",
        "droptags",
        "-x",
        "aggsize=28k",
        "-qn",
        "BEGIN { i = 0; } tick-1ms /i++ < 1100/ { @[i] = count(); } tick-1ms /i > 1100/ { exit(0); }",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("drop"))
        .unwrap_or_default();
    let cpu = line
        .strip_prefix("dtrace: [DTRACEDROP_AGGREGATION] 76 aggregation drops on CPU ")
        .unwrap_or_else(|| panic!("stderr: {}", run.stderr));
    assert!(cpu.parse::<u32>().is_ok(), "{line}");
    assert_eq!(
        run.stdout.lines().filter(|l| !l.trim().is_empty()).count(),
        1024
    );
}

#[test]
fn untagged_drops_read_as_dtrace_prints_them() {
    let run = common::dtrace(&[
        "-x",
        "nspec=1",
        "-qn",
        "BEGIN { a = speculation(); b = speculation(); exit(0); }",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "dtrace: 1 failed speculation (no speculative buffer available)\n"
    );
}

#[test]
fn a_tagged_drop_message_is_cut_at_79_bytes_as_dtrace_cuts_it() {
    let run = common::dtrace(&[
        "-x",
        "nspec=1",
        "-x",
        "droptags",
        "-qn",
        "BEGIN { a = speculation(); b = speculation(); c = speculation(); exit(0); }",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "dtrace: [DTRACEDROP_SPECUNAVAIL] 2 failed speculations (no speculative buffer available\n"
    );
}

#[test]
fn an_exit_whose_record_was_dropped_still_ends_tracing() {
    // Two 2 KiB records fill the smallest buffer (4 KiB) in one firing, so the third, with
    // exit(), is dropped: tracing ends all the same (the tracing state word says exit()
    // ran), with status 0 as its value was lost, and the drop reported.
    let run = common::finish_within(
        common::spawn(&[
            "-x",
            "bufsize=4k",
            "-x",
            "strsize=2000",
            "-qn",
            "string s; tick-1ms { trace(s); } tick-1ms { trace(s); } tick-1ms { trace(s); exit(3); }",
        ]),
        "whose exit() record was dropped",
        std::time::Duration::from_secs(20),
    );
    assert_eq!(
        (run.status, run.stdout.as_str()),
        (0, "\n"),
        "{}",
        run.stderr
    );
    let cpu = run
        .stderr
        .strip_prefix("dtrace: 1 drop on CPU ")
        .and_then(|rest| rest.strip_suffix('\n'))
        .unwrap_or_else(|| panic!("stderr: {}", run.stderr));
    assert!(cpu.parse::<u32>().is_ok(), "{}", run.stderr);
}

/// `dynvarsize=15` holds three `int` thread-local variables (DTrace counts 4 bytes each,
/// with no key tuple): a fourth is one dynamic variable drop, reported once, and it is not
/// stored.
#[test]
fn dynamic_variables_past_the_dynvarsize_space_are_dropped() {
    let run = common::dtrace(&[
        "-x",
        "dynvarsize=15",
        "-x",
        "droptags",
        "-qn",
        "BEGIN { self->a = 1; self->b = 2; self->c = 3; self->d = 4; } \
         BEGIN { printf(\"%d %d %d %d\\n\", self->a, self->b, self->c, self->d); exit(0); }",
    ]);
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (
            0,
            "1 2 3 0\n\n",
            "dtrace: [DTRACEDROP_DYNAMIC] 1 dynamic variable drop\n"
        )
    );
}

/// Storing 0 deletes a dynamic variable and gives its place back: in a space of one
/// associative array element, a second element fits once the first is deleted, and only
/// an element created while the space is full is dropped.
#[test]
fn deleting_a_dynamic_variable_makes_room_for_another() {
    // An element of a[int] counts 12 bytes of key tuple and 4 of value: 20 bytes hold one.
    let run = common::dtrace(&[
        "-x",
        "dynvarsize=20",
        "-qn",
        "BEGIN { a[1] = 1; a[2] = 2; } \
         BEGIN { a[1] = 0; a[3] = 3; a[3] = 33; printf(\"%d %d %d\\n\", a[1], a[2], a[3]); exit(0); }",
    ]);
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (0, "0 0 33\n\n", "dtrace: 1 dynamic variable drop\n")
    );
}

/// A dynamic variable that cannot be made ends its clause, as in DTrace: the statements
/// after it do not run (one drop, not one per store), what the clause recorded before it
/// is not sent, and the probe's next clause runs.
#[test]
fn a_dynamic_variable_drop_ends_its_clause() {
    let run = common::dtrace(&[
        "-x",
        "dynvarsize=12",
        "-qn",
        "BEGIN { self->a = 1; self->b = 2; self->c = 3; printf(\"before\\n\"); \
         self->d = 4; self->e = 5; printf(\"after\\n\"); } \
         BEGIN { printf(\"%d %d %d\\n\", self->c, self->d, self->e); exit(0); }",
    ]);
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (0, "3 0 0\n\n", "dtrace: 1 dynamic variable drop\n")
    );
}

/// Aggregations share one space, as in DTrace 2: 28,000 bytes hold 1,000 keys of
/// `@[int] = count()` among all of them, so two aggregations of 600 keys each keep 1,000
/// and drop 200.
#[test]
fn aggregations_share_the_aggsize_space() {
    let run = common::dtrace(&[
        "-x",
        "aggsize=28000",
        "-qn",
        "BEGIN { i = 0; } tick-1ms /i++ < 600/ { @a[i] = count(); @b[i] = count(); } \
         tick-1ms /i > 600/ { exit(0); }",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let dropped: u64 = run
        .stderr
        .lines()
        .map(|l| {
            l.strip_prefix("dtrace: ")
                .and_then(|l| l.split_once(" aggregation drop"))
                .and_then(|(n, _)| n.parse::<u64>().ok())
                .unwrap_or_else(|| panic!("stderr: {}", run.stderr))
        })
        .sum();
    assert_eq!(dropped, 200, "{}", run.stderr);
    assert_eq!(
        run.stdout.lines().filter(|l| !l.trim().is_empty()).count(),
        1000
    );
}

/// `trunc()` deletes keys and gives their places back: in a shared space of 100 keys, 50
/// ticks of 11 new keys each (550 in all) fit when each tick's keys are truncated (by the
/// consumer, reading every 10 ms) before the next ones come.
#[test]
fn truncated_keys_give_their_places_back() {
    // The largest key, (int, int), counts 16 bytes of tuple and 16 of data: 3,200 bytes
    // hold 100.
    let run = common::dtrace(&[
        "-x",
        "aggsize=3200",
        "-x",
        "switchrate=10ms",
        "-qn",
        "BEGIN { n = 0; } \
         tick-20ms /n < 50/ { @a[n, 0] = count(); @a[n, 1] = count(); @a[n, 2] = count(); \
           @a[n, 3] = count(); @a[n, 4] = count(); @a[n, 5] = count(); @a[n, 6] = count(); \
           @a[n, 7] = count(); @a[n, 8] = count(); @a[n, 9] = count(); @b[n] = count(); \
           trunc(@a); trunc(@b); n++; } \
         tick-2s { @a[n, 0] = count(); @b[n] = count(); exit(0); }",
    ]);
    assert_eq!(
        (run.status, run.stderr.as_str()),
        (0, ""),
        "stdout: {}",
        run.stdout
    );
    let lines: Vec<&str> = run.stdout.split_whitespace().collect();
    assert_eq!(lines, ["50", "0", "1", "50", "1"], "{}", run.stdout);
}

/// A thread's thread-local variables leave the dynamic variable space when it exits (the
/// kernel frees their storage): 100 short-lived threads, one after another, each setting
/// `self->x` and never clearing it, fit without a drop in a space that holds eight of
/// them (a thread's exit may be seen a little after the next thread starts).
#[test]
fn an_exiting_thread_gives_its_thread_local_variables_back() {
    let dir = common::scratch("drops", "thread-exit");
    let prog = common::build_c(
        &dir,
        "threads",
        r#"
#include <pthread.h>
#include <unistd.h>
#include <sys/syscall.h>
static void *body(void *arg) { (void)arg; syscall(SYS_getppid); return 0; }
int main(void) {
    for (int i = 0; i < 100; i++) {
        pthread_t t;
        if (pthread_create(&t, 0, body, 0) != 0 || pthread_join(t, 0) != 0)
            return 1;
    }
    return 0;
}
"#,
        &["-O2", "-pthread"],
    );
    let run = common::dtrace(&[
        "-x",
        "dynvarsize=100",
        "-q",
        "-c",
        prog.to_str().unwrap(),
        "-n",
        "syscall::getppid:entry /pid == $target/ { self->x = 1; @ = count(); } \
         END { printa(\"%@d\\n\", @); }",
    ]);
    assert_eq!(
        (run.status, run.stdout.as_str(), run.stderr.as_str()),
        (0, "100\n\n", "")
    );
}

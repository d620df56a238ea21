//! `entry->` on the live kernel: a return probe reads its own entry's arguments and
//! timestamps, at every depth of a recursion, in every thread, at a system call's return;
//! latencies from `entry->timestamp` (and on-CPU times from `entry->vtimestamp`) equal the
//! `self->` idiom's on the same events; a
//! return whose entry was not seen skips the clause; `entry->` outside a return probe is a
//! compile error.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{build_c, dtrace, scratch, tagged, trace};

/// `fact(n)` recursing down to 1; `main` calls `fact(argv[1])` and `twice(x)` for x in
/// 1..=4 (whose latency the tests measure), then prints its results.
const RECURSE: &str = r#"
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
__attribute__((noipa)) long fact(long n) { return n <= 1 ? 1 : n * fact(n - 1); }
__attribute__((noipa)) long twice(long x) {
    struct timespec ts = { 0, 2000000 * x };
    nanosleep(&ts, NULL);
    return 2 * x;
}
int main(int argc, char **argv) {
    long f = fact(atol(argv[1]));
    long t = 0;
    for (long x = 1; x <= 4; x++)
        t += twice(x);
    printf("result %ld %ld\n", f, t);
    return 0;
}
"#;

#[test]
fn recursion_sees_its_own_entry_at_every_depth() {
    let dir = scratch("entryargs", "recursion");
    // At -O2 gcc turns the recursion into a loop.
    let exe = build_c(&dir, "recurse", RECURSE, &["-O0"]);
    let run = trace(
        &format!("{} 6", exe.display()),
        "pid$target::fact:return { printf(\"fact %d = %d\\n\", entry->arg0, arg1); }",
    );
    assert_eq!(
        tagged(&run.stdout, "fact"),
        ["1 = 1", "2 = 2", "3 = 6", "4 = 24", "5 = 120", "6 = 720"],
        "{}",
        run.stderr
    );
    assert_eq!(tagged(&run.stdout, "result"), ["720 20"]);
}

#[test]
fn latency_equals_the_self_idiom_on_the_same_events() {
    let dir = scratch("entryargs", "latency");
    let exe = build_c(&dir, "recurse", RECURSE, &["-O2"]);
    let run = trace(
        &format!("{} 3", exe.display()),
        "pid$target::twice:entry { self->ts = timestamp; self->vts = vtimestamp; }
         pid$target::twice:return {
             printf(\"lat %d %d %d\\n\", entry->arg0, timestamp - self->ts, timestamp - entry->timestamp);
             printf(\"cpu %d %d\\n\", vtimestamp - self->vts, vtimestamp - entry->vtimestamp);
             @idiom = quantize(timestamp - self->ts);
             @entry = quantize(timestamp - entry->timestamp);
             self->ts = 0;
         }
         END { printa(\"idiom%@d\\n\", @idiom); printa(\"entry%@d\\n\", @entry); }",
    );
    // vtimestamp is read anew by each clause, so the two differ by the clauses between.
    let cpu = tagged(&run.stdout, "cpu");
    assert_eq!(cpu.len(), 4, "{}", run.stdout);
    for line in cpu {
        let v: Vec<i64> = line.split(' ').map(|w| w.parse().unwrap()).collect();
        assert!((v[0] - v[1]).abs() < 50_000, "{line}");
        // Sleeping is off CPU: far less than the 2x ms of wall time.
        assert!(v[1] > 0 && v[1] < 1_000_000, "{line}");
    }
    let lines = tagged(&run.stdout, "lat");
    assert_eq!(lines.len(), 4, "{}\n{}", run.stdout, run.stderr);
    for (x, line) in (1..=4).zip(&lines) {
        let v: Vec<u64> = line.split(' ').map(|w| w.parse().unwrap()).collect();
        assert_eq!(v[0], x, "{line}");
        assert_eq!(v[1], v[2], "the same latency both ways: {line}");
        // twice(x) sleeps 2x ms.
        assert!(v[2] >= x * 2_000_000, "{line}");
    }
    let histogram = |tag: &str| {
        let start = run.stdout.find(&format!("{tag}\n")).expect(tag);
        run.stdout[start + tag.len()..]
            .lines()
            .skip(1)
            .take_while(|l| !l.is_empty() && !l.starts_with("entry"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(histogram("idiom"), histogram("entry"), "{}", run.stdout);
}

/// Threads each recursing through `depth(tag, n)`, which returns `tag * 1000 + n`.
const THREADS: &str = r#"
#include <pthread.h>
#include <stdio.h>
__attribute__((noipa)) long depth(long tag, long n) {
    long r = n > 0 ? depth(tag, n - 1) : 0;
    return r >= 0 ? tag * 1000 + n : r;
}
static void *run(void *arg) {
    long tag = (long)arg;
    for (int i = 0; i < 2000; i++)
        depth(tag, 5);
    return NULL;
}
int main(void) {
    pthread_t t[4];
    for (long i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, run, (void *)(i + 1));
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    puts("done");
    return 0;
}
"#;

#[test]
fn threads_each_see_their_own_entries() {
    let dir = scratch("entryargs", "threads");
    let exe = build_c(&dir, "threads", THREADS, &["-O0", "-pthread"]);
    let run = trace(
        &exe.display().to_string(),
        "pid$target::depth:return {
             @calls[entry->arg0] = count();
             @wrong = sum(entry->arg0 * 1000 + entry->arg1 != arg1);
         }
         END { printa(\"calls %d %@d\\n\", @calls); printa(\"wrong %@d\\n\", @wrong); }",
    );
    // 2000 calls of depth 5 are 12000 returns per thread.
    assert_eq!(
        tagged(&run.stdout, "calls"),
        ["1 12000", "2 12000", "3 12000", "4 12000"],
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    assert_eq!(tagged(&run.stdout, "wrong"), ["0"]);
}

#[test]
fn system_call_return_reads_typed_entry_arguments() {
    let dir = scratch("entryargs", "syscall");
    let file = dir.join("hello.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let run = trace(
        &format!("/bin/cat {}", file.display()),
        "syscall::openat:return /pid == $target/ {
             printf(\"open %s %s\\n\", copyinstr(entry->args[1]), arg1 >= 0 ? \"ok\" : \"failed\");
         }
         syscall::openat:return /pid == $target && basename(copyinstr(entry->args[1])) == \"hello.txt\"/ {
             self->fd = arg1;
         }
         syscall::read:return /self->fd && entry->arg0 == self->fd/ {
             printf(\"read %d %d\\n\", entry->args[2] > 6, arg1);
         }",
    );
    let opened = tagged(&run.stdout, "open");
    assert_eq!(
        opened.last().copied(),
        Some(format!("{} ok", file.display()).as_str()),
        "{}",
        run.stdout
    );
    // cat reads the file (fd 3): its 6 bytes, then the end of it.
    assert_eq!(
        tagged(&run.stdout, "read"),
        ["1 6", "1 0"],
        "{}",
        run.stdout
    );
}

/// Sleeps 3 s twice, telling the test when it is in the first sleep.
const SLOW: &str = r#"
#include <stdio.h>
#include <time.h>
int main(void) {
    struct timespec ts = { 3, 0 };
    printf("started\n");
    fflush(stdout);
    for (int i = 0; i < 2; i++)
        clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL);
    return 0;
}
"#;

#[test]
fn a_return_whose_entry_was_not_seen_skips_the_clause() {
    let dir = scratch("entryargs", "unseen");
    let exe = build_c(&dir, "slow", SLOW, &["-O2"]);
    let mut child = Command::new(&exe)
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the program");
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line, "started\n");
    // The first sleep is running: its entry is past.
    std::thread::sleep(Duration::from_millis(300));
    let pid = child.id().to_string();
    let run = dtrace(&[
        "-q",
        "-p",
        &pid,
        "-n",
        "syscall::clock_nanosleep:return /pid == $target/ { printf(\"return %d\\n\", arg1); }
         syscall::clock_nanosleep:return /pid == $target/ { printf(\"entry %d\\n\", entry->arg0); }",
    ]);
    child.wait().unwrap();
    assert_eq!(run.status, 0, "{}", run.stderr);
    // CLOCK_MONOTONIC is 1.
    assert_eq!(
        run.stdout, "return 0\nreturn 0\nentry 1\n\n",
        "{}",
        run.stderr
    );
}

#[test]
fn entry_outside_a_return_probe_is_an_error() {
    let dir = scratch("entryargs", "errors");
    let script = dir.join("bad.d");
    std::fs::write(
        &script,
        "syscall::read:return { trace(entry->arg0); }\n\nsyscall::read:entry\n{\n\ttrace(entry->arg0);\n}\n",
    )
    .unwrap();
    let run = dtrace(&["-xerrtags", "-s", script.to_str().unwrap()]);
    assert_eq!(run.status, 1);
    assert_eq!(
        run.stderr,
        format!(
            "dtrace: failed to compile script {}: [D_ENTRY_PROBE] line 5: entry-> may only be used in the return probe of a function or a system call, not in syscall:vmlinux:read:entry\n",
            script.display()
        )
    );
    let run = dtrace(&["-n", "syscall::read:return { trace(entry->argv); }"]);
    assert_eq!(run.status, 1);
    assert_eq!(
        run.stderr,
        "dtrace: invalid probe specifier syscall::read:return { trace(entry->argv); }: entry has no member named argv (entry->arg0 .. entry->arg9, entry->args[N], entry->timestamp, entry->vtimestamp)\n"
    );
}

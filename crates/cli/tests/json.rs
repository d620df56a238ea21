//! JSON lines output (`-x oformat=json`) on the live kernel: every line parses (with
//! Python's `json`, a parser of its own), and each kind of object carries what
//! `docs/JSON.md` says: probe firings, `trace()`, `printf()`, stacks with their frames,
//! aggregations with histogram buckets and their bounds, run-time errors, drops, and the
//! exit status; lines are written as they happen.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{dtrace, Run};

fn assert_ok(run: &Run) {
    assert_eq!(
        run.status, 0,
        "status {}\nstdout:\n{}\nstderr:\n{}",
        run.status, run.stdout, run.stderr
    );
}

/// Parse every line of `stdout` as JSON (into the list `L`, one object per line) and
/// evaluate the Python expression `expr` over it; its value, as sorted-key JSON.
fn query(stdout: &str, expr: &str) -> String {
    let script = format!(
        "import sys, json\nL = [json.loads(l) for l in sys.stdin]\nprint(json.dumps({expr}, sort_keys=True))"
    );
    let mut child = Command::new("python3")
        .arg("-c")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run python3");
    child
        .stdin
        .take()
        .expect("piped stdin")
        .write_all(stdout.as_bytes())
        .expect("write to python3");
    let out = child.wait_with_output().expect("wait for python3");
    assert!(
        out.status.success(),
        "python3 failed on {expr}: {}\ninput:\n{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .trim()
        .to_string()
}

/// Make `read` system calls from this process until the returned flag is set.
fn keep_reading() -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let reader = std::thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            let _ = std::fs::read("/proc/self/stat");
            std::thread::sleep(Duration::from_millis(2));
        }
    });
    (stop, reader)
}

const SYSCALL_SCRIPT: &str = r#"syscall::read:entry { @[execname] = count(); @q = quantize(arg2); printf("%s %d\n", execname, pid); } tick-1s { exit(0); }"#;

#[test]
fn syscall_script_output_parses_line_by_line() {
    common::require_root();
    let (stop, reader) = keep_reading();
    // The pipeline as a user types it.
    let pipeline = format!(
        "{} -x oformat=json -n '{SYSCALL_SCRIPT}' | python3 -c 'import sys,json; [json.loads(l) for l in sys.stdin]'",
        env!("CARGO_BIN_EXE_dtrace")
    );
    let piped = Command::new("bash")
        .args(["-o", "pipefail", "-c", &pipeline])
        .output()
        .expect("run the pipeline");
    assert!(
        piped.status.success(),
        "{}",
        String::from_utf8_lossy(&piped.stderr)
    );
    let run = dtrace(&["-x", "oformat=json", "-n", SYSCALL_SCRIPT]);
    stop.store(true, Ordering::Relaxed);
    reader.join().expect("reader thread");
    assert_ok(&run);
    assert_eq!(run.stderr, "", "JSON mode writes everything to stdout");
    assert_eq!(
        query(&run.stdout, "L[0]"),
        r#"{"kind": "description", "name": "syscall::read:entry ", "probes": 2, "type": "matched"}"#
    );
    assert_eq!(
        query(&run.stdout, "L[-1]"),
        r#"{"status": 0, "type": "exit"}"#
    );
    // Every firing: its probe, then its printf, whose text is its arguments formatted.
    let printfs =
        "[o for o in L if o['type'] == 'printf' and o['probe'] == 'syscall:vmlinux:read:entry']";
    assert_eq!(
        query(&run.stdout, &format!("all(o['text'] == '%s %d\\n' % tuple(o['args']) and isinstance(o['args'][1], int) for o in {printfs})")),
        "true"
    );
    assert_eq!(
        query(
            &run.stdout,
            &format!(
                "{} in [o['args'][1] for o in {printfs}]",
                std::process::id()
            )
        ),
        "true",
        "this test's own reads were traced"
    );
    assert_eq!(
        query(
            &run.stdout,
            "sorted(set(tuple(sorted(o)) for o in L if o['type'] == 'probe'))"
        ),
        r#"[["cpu", "epid", "function", "id", "module", "name", "probe", "provider", "type"]]"#
    );
    assert_eq!(
        query(
            &run.stdout,
            "[(o['name'], o['function']) for o in L if o['type'] == 'aggregation']"
        ),
        r#"[["", "count"], ["q", "quantize"]]"#
    );
    // The count rows: one per process name; their total is the histogram's.
    let count = "[o for o in L if o['type'] == 'aggregation' and o['name'] == ''][0]['rows']";
    let buckets = "[o for o in L if o['type'] == 'aggregation' and o['name'] == 'q'][0]['rows'][0]['buckets']";
    assert_eq!(
        query(
            &run.stdout,
            &format!("sum(r['value'] for r in {count}) == sum(b['count'] for b in {buckets}) > 0")
        ),
        "true"
    );
    assert_eq!(
        query(
            &run.stdout,
            &format!("all(len(r['keys']) == 1 and isinstance(r['keys'][0], str) for r in {count})")
        ),
        "true"
    );
    // quantize buckets are powers of two: [0, 0], or [2^n, 2^(n+1) - 1].
    assert_eq!(
        query(
            &run.stdout,
            &format!("all(b['count'] > 0 and ((b['min'], b['max']) == (0, 0) or (b['min'] > 0 and b['min'] & (b['min'] - 1) == 0 and b['max'] == 2 * b['min'] - 1)) for b in {buckets})")
        ),
        "true"
    );
}

#[test]
fn aggregations_carry_their_values() {
    common::require_root();
    let run = dtrace(&[
        "-x",
        "oformat=json",
        "-qn",
        r#"BEGIN { @c = count(); @s = sum(-5); @a = avg(4); @a = avg(6); @sd = stddev(2);
           @sd = stddev(4); @mn = min(3); @mx = max(9); @l = lquantize(3, 0, 10, 2);
           @ll = llquantize(1500, 10, 0, 6, 20); @k[probename, 7] = sum(1);
           printa("%@d\n", @c); exit(0); }"#,
    ]);
    assert_ok(&run);
    let printa = "[o for o in L if o['type'] == 'printa'][0]";
    assert_eq!(
        query(
            &run.stdout,
            &format!("({printa}['format'], {printa}['name'], {printa}['rows'], {printa}['probe'])")
        ),
        r#"["%@d\n", "c", [{"keys": [], "value": 1}], "dtrace:::BEGIN"]"#
    );
    let rows = "{o['name']: o['rows'] for o in L if o['type'] == 'aggregation'}";
    assert_eq!(
        query(&run.stdout, rows),
        concat!(
            r#"{"a": [{"count": 2, "keys": [], "sum": 10, "value": 5}], "#,
            r#""k": [{"keys": ["BEGIN", 7], "value": 1}], "#,
            r#""l": [{"buckets": [{"count": 1, "max": 3, "min": 2}], "keys": []}], "#,
            r#""ll": [{"buckets": [{"count": 1, "max": 1999, "min": 1500}], "keys": []}], "#,
            r#""mn": [{"keys": [], "value": 3}], "mx": [{"keys": [], "value": 9}], "#,
            r#""s": [{"keys": [], "value": -5}], "#,
            r#""sd": [{"count": 2, "keys": [], "sum": 6, "value": 1}]}"#
        ),
        "@c was printed by printa() and is not repeated at the end"
    );
}

#[test]
fn stacks_have_frames() {
    common::require_root();
    // In a system call of a traced command (BEGIN has no kernel stack of its own).
    let run = dtrace(&[
        "-x",
        "oformat=json",
        "-qn",
        r#"syscall::write:entry /pid == $target/ { stack(); ustack(); printf("%d", pid); exit(0); }"#,
        "-c",
        "/bin/ls /nonexistent-dtrace-json",
    ]);
    assert_ok(&run);
    let stacks = "[o for o in L if o['type'] == 'stack']";
    assert_eq!(
        query(&run.stdout, &format!("[(o['kind'], o.get('pid') == [p for p in L if p['type'] == 'printf'][0]['args'][0]) for o in {stacks}]")),
        r#"[["kernel", false], ["user", true]]"#
    );
    // Every frame: a hexadecimal address and its text; where a symbol is known, the text
    // is module`symbol+0xoffset.
    let well_formed = format!(
        "all(f['address'].startswith('0x') and int(f['address'], 16) > 0 and \
         ('symbol' not in f or f['text'] == f['module'] + '`' + f['symbol'] + ('+0x%x' % f['offset'] if f['offset'] else '')) \
         for o in {stacks} for f in o['frames'])"
    );
    assert_eq!(query(&run.stdout, &well_formed), "true");
    assert_eq!(
        query(&run.stdout, &format!("any(f.get('module') == 'vmlinux' and 'symbol' in f for f in {stacks}[0]['frames'])")),
        "true"
    );
    assert_eq!(
        query(&run.stdout, &format!("len({stacks}[1]['frames']) > 0")),
        "true"
    );
}

#[test]
fn faults_are_error_records() {
    common::require_root();
    let run = dtrace(&[
        "-x",
        "oformat=json",
        "-qn",
        "BEGIN { *(int *)0; } BEGIN { y = 0; x = 1 / y; } BEGIN { exit(0); }",
    ]);
    assert_ok(&run);
    assert_eq!(run.stderr, "");
    assert_eq!(
        query(&run.stdout, "[{k: v for k, v in o.items() if k not in ('cpu', 'offset')} for o in L if o['type'] == 'error']"),
        concat!(
            r#"[{"action": 1, "address": "0x0", "code": 1, "epid": 1, "fault": "DTRACEFLT_BADADDR", "id": 1, "#,
            r#""message": "invalid address (0x0)", "probe": "dtrace:::BEGIN", "type": "error"}, "#,
            r#"{"action": 2, "code": 4, "epid": 2, "fault": "DTRACEFLT_DIVZERO", "id": 1, "#,
            r#""message": "divide-by-zero", "probe": "dtrace:::BEGIN", "type": "error"}]"#
        )
    );
    assert_eq!(
        query(&run.stdout, "all(isinstance(o['offset'], int) and isinstance(o['cpu'], int) for o in L if o['type'] == 'error')"),
        "true"
    );
}

#[test]
fn drops_are_reported() {
    common::require_root();
    // 40 records of 272 bytes from one firing of BEGIN into a 4 KiB buffer.
    let mut script: String = (0..40)
        .map(|_| "BEGIN { printf(\"%s\\n\", \"x\"); }\n")
        .collect();
    script.push_str("tick-100ms { exit(0); }\n");
    let dir = common::scratch("json", "drops");
    let path = dir.join("drops.d");
    std::fs::write(&path, script).expect("write the script");
    let run = dtrace(&[
        "-x",
        "oformat=json",
        "-q",
        "-x",
        "bufsize=4k",
        "-s",
        path.to_str().expect("UTF-8 path"),
    ]);
    assert_ok(&run);
    assert_eq!(
        query(
            &run.stdout,
            "[(o['kind'], o['count'] + len([p for p in L if p['type'] == 'printf'])) for o in L if o['type'] == 'drops']"
        ),
        r#"[["record", 40]]"#,
        "every record is either printed or counted as dropped"
    );
    // Dynamic variables beyond the space of 1024: counted over all CPUs.
    let run = dtrace(&[
        "-x",
        "oformat=json",
        "-q",
        "-x",
        "dynvarsize=64k",
        "-n",
        "profile-4999 { a[timestamp, cpu] = 1; } tick-1s { exit(0); }",
    ]);
    assert_ok(&run);
    assert_eq!(
        query(&run.stdout, "sum(o['count'] for o in L if o['type'] == 'drops' and o['kind'] == 'dynamic' and 'cpu' not in o) > 0"),
        "true"
    );
}

#[test]
fn exit_status_trace_and_quiet() {
    common::require_root();
    let run = dtrace(&[
        "-x",
        "oformat=json",
        "-n",
        r#"BEGIN { trace(7); trace((char)-1); trace("caf\xe9"); exit(3); }"#,
    ]);
    assert_eq!(run.status, 3, "{}", run.stderr);
    assert_eq!(
        query(
            &run.stdout,
            "[(o['type'], o.get('datatype'), o.get('value')) for o in L[1:]]"
        ),
        r#"[["probe", null, null], ["trace", "int", 7], ["trace", "char", -1], ["trace", "string", "caf\ufffd"], ["exit", null, null]]"#,
        "a byte that is not UTF-8 reads as U+FFFD"
    );
    assert_eq!(query(&run.stdout, "L[-1]['status']"), "3");
    let quiet = dtrace(&["-x", "oformat=json", "-qn", "BEGIN { trace(1); exit(0); }"]);
    assert_ok(&quiet);
    assert_eq!(
        query(&quiet.stdout, "[o['type'] for o in L]"),
        r#"["trace", "exit"]"#,
        "quiet mode: no matched or probe lines"
    );
}

#[test]
fn lines_are_written_as_they_happen() {
    common::require_root();
    let mut child = common::spawn(&[
        "-x",
        "oformat=json",
        "-qn",
        r#"tick-50ms { printf("tick\n"); }"#,
    ]);
    let out = child.stdout.take().expect("piped stdout");
    let (send, lines) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            if send.send(line.expect("read")).is_err() {
                break;
            }
        }
    });
    let first = match lines.recv_timeout(Duration::from_secs(10)) {
        Ok(line) => line,
        Err(e) => {
            let _ = child.kill();
            panic!("no line within 10 s while dtrace runs ({e}): output is not flushed per line");
        }
    };
    assert_eq!(
        query(&first, "(L[0]['type'], L[0]['text'])"),
        r#"["printf", "tick\n"]"#
    );
    // SAFETY: kill has no memory effects; the pid is our child's.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().expect("wait for dtrace");
    reader.join().expect("reader thread");
    let rest: Vec<String> = lines.try_iter().collect();
    assert!(status.success(), "{status:?}");
    assert_eq!(
        query(rest.last().expect("an exit line"), "L[0]"),
        r#"{"status": 0, "type": "exit"}"#
    );
}

#[test]
fn other_output_formats_are_refused() {
    common::require_root();
    let run = dtrace(&["-x", "oformat=xml", "-n", "BEGIN { exit(0); }"]);
    assert_eq!(run.status, 1);
    assert_eq!(
        run.stderr,
        "dtrace: failed to set -x oformat: Invalid value for specified option\n"
    );
    let text = dtrace(&["-x", "oformat=text", "-qn", "BEGIN { trace(1); exit(0); }"]);
    assert_ok(&text);
    assert_eq!(text.stdout, "1\n");
}

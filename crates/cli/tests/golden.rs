//! Golden-output tests: real D scripts run by the `dtrace` binary on the live kernel, their
//! stdout (and, where a case says so, stderr and exit status) compared byte for byte with
//! what DTrace prints.
//!
//! Each case in `tests/golden/` is a script `NAME.d` and its expected stdout `NAME.out`,
//! optionally with `NAME.err` (expected stderr; not checked when absent) and
//! `NAME.status` (expected exit status; 0 when absent).  The expected outputs come from
//! DTrace itself (the Dynamic Tracing Guide, the illumos and Oracle test suites) or were
//! derived by hand from DTrace's rules, never blessed unchecked.
//!
//! A case runs as `dtrace -q -s NAME.d` in the case directory.  Comments anywhere in the
//! script's leading comment lines change that:
//!
//! * `/* flags: -x errtags -q */` replaces the default `-q` (an empty list runs the
//!   script non-quiet); words are split on blanks, single quotes group.
//!   When the flags include `-n`, the script file is not passed (it only documents the case).
//! * `/* args: foo 42 */` appends `--` and operands (the macro arguments `$1 $2 ...`).
//!
//! In stderr, the number after `BPF pc ` is masked on both sides: ours cannot match
//! Oracle DTrace's program counters.
//!
//! `DTRACE_GOLDEN_BLESS=1` rewrites the `.out` files (and existing `.err`/`.status`
//! files) from the actual output; check every change against DTrace before committing.
//! `DTRACE_GOLDEN_FILTER=substr` runs only the cases whose name contains `substr`.
//!
//! The cases need root (they load BPF programs); as another user the test is skipped.

use std::collections::VecDeque;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Cases that fail because of bugs outside the consumer (parser, code generator), with the
/// reason.  They still run; their mismatch is printed but does not fail the suite.
const KNOWN_FAILURES: &[(&str, &str)] = &[];

/// How long one case may run.
const TIMEOUT: Duration = Duration::from_secs(60);

struct Case {
    name: String,
    dir: PathBuf,
}

struct Outcome {
    name: String,
    /// Mismatch report; empty when the case passed.
    report: String,
}

fn cases(dir: &Path) -> Vec<Case> {
    let filter = std::env::var("DTRACE_GOLDEN_FILTER").unwrap_or_default();
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("tests/golden exists")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".d").map(str::to_string)
        })
        .filter(|n| n.contains(&filter))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|name| Case {
            name,
            dir: dir.to_path_buf(),
        })
        .collect()
}

/// Split a directive's words on blanks; single quotes group.
fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in text.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            c if c.is_whitespace() && !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            c => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// The value of `/* KEY: ... */` in the script, if present.
fn directive(script: &str, key: &str) -> Option<Vec<String>> {
    let open = format!("/* {key}:");
    script.lines().find_map(|l| {
        let rest = l.trim().strip_prefix(&open)?;
        let body = rest.trim_end().strip_suffix("*/")?;
        Some(words(body))
    })
}

/// Mask the number after each `BPF pc `.
fn mask(text: &str) -> String {
    const KEY: &str = "BPF pc ";
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find(KEY) {
        out.push_str(&rest[..i + KEY.len()]);
        rest = &rest[i + KEY.len()..];
        let digits = rest
            .bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'-')
            .count();
        if digits > 0 {
            out.push('N');
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

/// Run the binary with a time limit; returns stdout, stderr and the exit status.
fn run(case: &Case, args: &[String]) -> (Vec<u8>, Vec<u8>, Option<i32>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_dtrace"));
    // BEGIN and END fire on the CPU dtrace runs on: pin it to CPU 0, so the CPU column
    // of non-quiet output is deterministic.
    // SAFETY: the closure only calls sched_setaffinity, which is async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut set);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            Ok(())
        });
    }
    // Times (`%Y`, `%T`) print in a fixed zone, one with daylight saving time.
    let mut child = command
        .env("TZ", "US/Pacific")
        .args(args)
        .current_dir(&case.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run dtrace");
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s.code();
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stdout = reader.join().unwrap_or_default();
    let stderr = err_reader.join().unwrap_or_default();
    (stdout, stderr, status)
}

/// Make trailing blanks and control characters visible in a diff line.
fn visible(line: &str) -> String {
    let body = line.trim_end_matches(' ');
    let mut out: String = body
        .chars()
        .map(|c| match c {
            '\t' => "\\t".to_string(),
            c if c.is_control() => format!("\\x{:02x}", c as u32),
            c => c.to_string(),
        })
        .collect();
    let blanks = line.len() - body.len();
    if blanks > 0 {
        out.push_str(&"·".repeat(blanks));
    }
    out
}

/// A line diff (longest common subsequence), unified-diff-like: ` ` common, `-` expected
/// only, `+` actual only.  Lines without a final newline are marked.
fn diff(expected: &str, actual: &str) -> String {
    let split = |s: &str| -> Vec<String> {
        let mut v: Vec<String> = s.split_inclusive('\n').map(str::to_string).collect();
        if let Some(last) = v.last_mut() {
            if !last.ends_with('\n') {
                last.push_str("\\ (no newline)");
            }
        }
        v
    };
    let (a, b) = (split(expected), split(actual));
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut out = String::from("    --- expected\n    +++ actual\n");
    let (mut i, mut j) = (0, 0);
    let line = |out: &mut String, tag: char, text: &str| {
        out.push_str(&format!(
            "    {tag}{}\n",
            visible(text.strip_suffix('\n').unwrap_or(text))
        ));
    };
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            line(&mut out, ' ', &a[i]);
            i += 1;
            j += 1;
        } else if j < m && (i == n || lcs[i][j + 1] >= lcs[i + 1][j]) {
            line(&mut out, '+', &b[j]);
            j += 1;
        } else {
            line(&mut out, '-', &a[i]);
            i += 1;
        }
    }
    out
}

/// `bytes` as text for a diff: UTF-8 as it is, other bytes as `\xNN`.
fn utf8_or_hex(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out
}

fn check(case: &Case, bless: bool) -> Outcome {
    let path = |ext: &str| case.dir.join(format!("{}.{ext}", case.name));
    // (A script may hold bytes that are not UTF-8; its directives are ASCII.)
    let script =
        String::from_utf8_lossy(&std::fs::read(path("d")).unwrap_or_default()).into_owned();
    let mut args = directive(&script, "flags").unwrap_or_else(|| vec!["-q".to_string()]);
    if !args.iter().any(|a| a == "-n") {
        args.push("-s".to_string());
        args.push(format!("{}.d", case.name));
    }
    let operands = directive(&script, "args").unwrap_or_default();
    if !operands.is_empty() {
        // After `--`, so that an operand such as `-7` is not read as an option.
        args.push("--".to_string());
        args.extend(operands);
    }
    let (stdout, stderr, status) = run(case, &args);
    let stderr = mask(&String::from_utf8_lossy(&stderr));
    let mut report = String::new();
    // Compared as bytes: D strings need not be UTF-8.
    let expected_out = std::fs::read(path("out")).unwrap_or_default();
    if stdout != expected_out {
        report.push_str(&format!(
            "  stdout differs:\n{}",
            diff(&utf8_or_hex(&expected_out), &utf8_or_hex(&stdout))
        ));
    }
    let expected_err = std::fs::read_to_string(path("err")).ok();
    if let Some(e) = &expected_err {
        let e = mask(e);
        if stderr != e {
            report.push_str(&format!("  stderr differs:\n{}", diff(&e, &stderr)));
        }
    } else if !report.is_empty() && !stderr.is_empty() {
        report.push_str(&format!("  (stderr was: {:?})\n", stderr));
    }
    let expected_status: Option<i32> = std::fs::read_to_string(path("status"))
        .ok()
        .and_then(|s| s.trim().parse().ok());
    if status != Some(expected_status.unwrap_or(0)) {
        report.push_str(&format!(
            "  exit status: expected {}, actual {}\n",
            expected_status.unwrap_or(0),
            status.map_or("none (timed out or killed)".to_string(), |s| s.to_string())
        ));
    }
    if bless && !report.is_empty() {
        let _ = std::fs::write(path("out"), &stdout);
        if expected_err.is_some() {
            let _ = std::fs::write(path("err"), &stderr);
        }
        if expected_status.is_some() || status.unwrap_or(0) != 0 {
            let _ = std::fs::write(path("status"), format!("{}\n", status.unwrap_or(-1)));
        }
        report = format!("  blessed\n{report}");
    }
    Outcome {
        name: case.name.clone(),
        report,
    }
}

#[test]
fn golden() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("golden: skipped (loading BPF programs needs root)");
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var("DTRACE_GOLDEN_BLESS").is_ok_and(|v| v == "1");
    let all = cases(&dir);
    let total = all.len();
    let queue = Arc::new(Mutex::new(VecDeque::from(all)));
    let results = Arc::new(Mutex::new(Vec::new()));
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get().clamp(2, 8));
    let workers: Vec<_> = (0..threads)
        .map(|_| {
            let queue = Arc::clone(&queue);
            let results = Arc::clone(&results);
            std::thread::spawn(move || loop {
                let Some(case) = queue.lock().expect("queue").pop_front() else {
                    break;
                };
                let outcome = check(&case, bless);
                results.lock().expect("results").push(outcome);
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let mut results = std::mem::take(&mut *results.lock().expect("results"));
    results.sort_by(|a, b| a.name.cmp(&b.name));
    let known = |name: &str| KNOWN_FAILURES.iter().find(|(n, _)| *n == name);
    let mut failed = Vec::new();
    let mut known_failed = 0;
    for r in &results {
        match (r.report.is_empty(), known(&r.name)) {
            (true, Some(_)) => eprintln!(
                "golden: {} now passes: remove it from KNOWN_FAILURES",
                r.name
            ),
            (true, None) => {}
            (false, Some((_, why))) => {
                known_failed += 1;
                eprintln!("golden: {} (known failure: {why})\n{}", r.name, r.report);
            }
            (false, None) => {
                eprintln!("golden: {} FAILED\n{}", r.name, r.report);
                failed.push(r.name.clone());
            }
        }
    }
    eprintln!(
        "golden: {total} cases, {} passed, {known_failed} known failures, {} failed",
        total - known_failed - failed.len(),
        failed.len()
    );
    assert!(
        failed.is_empty() || bless,
        "golden cases failed: {}",
        failed.join(", ")
    );
}

//! User-level providers on the live kernel: USDT probes (sys/sdt.h in C programs built here
//! with gcc, and the `dtrace-usdt` crate's `ticker` and `leaf` examples) and the `pid` provider, with
//! and without follow-fork (`-x followfork`), and `copyin`/`copyinto`/`alloca`.
//!
//! Each test builds its own copy of the C program, so probes attached system-wide (by
//! binary) by one test never see another test's processes. `-c` holds the command until
//! every probe is attached, so exact counts do not depend on timing.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{dtrace, Run};

fn assert_ok(run: &Run) {
    assert_eq!(
        run.status, 0,
        "status {}\nstdout:\n{}\nstderr:\n{}",
        run.status, run.stdout, run.stderr
    );
}

/// A scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    common::scratch("user", name)
}

/// The test program: `prog N` fires `myprov:::tick(i, name)` N times (the name a string
/// the program has already read, so its page is mapped), calls `square(i)` N times, fires the
/// semaphore-guarded `myprov:::guarded(i)` and prints `enabled` or `disabled` each time,
/// then fires `myprov:::file-done(sum of squares)`. `prog wait` waits for stdin first.
const PROGRAM: &str = r#"
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEM(n) unsigned short myprov_##n##_semaphore __attribute__((unused)) __attribute__((section(".probes")));
SEM(tick) SEM(guarded) SEM(file__done)

__attribute__((noinline)) int square(int x) { __asm__ volatile(""); return x * x; }

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "wait") == 0) {
        char line[16];
        if (!fgets(line, sizeof line, stdin)) return 0;
        argv[1] = "1";
    }
    int n = argc > 1 ? atoi(argv[1]) : 3;
    const char *names[] = {"alpha", "beta", "gamma"};
    volatile size_t touched = 0;
    long s = 0;
    for (int i = 0; i < n; i++) {
        touched += strlen(names[i % 3]);
        DTRACE_PROBE2(myprov, tick, i, names[i % 3]);
        s += square(i);
        if (myprov_guarded_semaphore) {
            DTRACE_PROBE1(myprov, guarded, i);
            printf("enabled\n");
        } else {
            printf("disabled\n");
        }
    }
    DTRACE_PROBE1(myprov, file__done, s);
    return 0;
}
"#;

/// Build the test program into a directory of its own; returns its path.
fn program(name: &str) -> PathBuf {
    common::build_c(&scratch(name), name, PROGRAM, &["-O1"])
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The value of aggregation row `key` in default output (`key value` lines).
fn agg_value(stdout: &str, key: &str) -> Option<u64> {
    stdout.lines().find_map(|l| {
        let mut w = l.split_whitespace();
        (w.next()? == key).then_some(())?;
        w.next()?.parse().ok()
    })
}

#[test]
fn usdt_exact_counts_with_c() {
    let prog = program("counts");
    let cmd = format!("{} 7", path_str(&prog));
    let run = dtrace(&[
        "-q",
        "-n",
        "myprov$target:::tick { @[\"tick\"] = count(); } myprov$target:::file-done { @[\"done\"] = count(); }",
        "-c",
        &cmd,
    ]);
    assert_ok(&run);
    assert_eq!(agg_value(&run.stdout, "tick"), Some(7), "{}", run.stdout);
    assert_eq!(agg_value(&run.stdout, "done"), Some(1), "{}", run.stdout);
}

#[test]
fn usdt_integer_and_string_arguments() {
    let prog = program("args");
    let cmd = format!("{} 4", path_str(&prog));
    let run = dtrace(&[
        "-q",
        "-n",
        "BEGIN { printf(\"target %d\\n\", $target); }
         myprov$target:::tick { printf(\"tick %d %s\\n\", arg0, copyinstr(arg1)); }
         myprov$target:::file-done { printf(\"done %d %s %s %s\\n\", arg0, probeprov, probemod, probename); }",
        "-c",
        &cmd,
    ]);
    assert_ok(&run);
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("tick") || l.starts_with("done"))
        .collect();
    let pid = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("target "))
        .unwrap_or("?")
        .to_string();
    assert_eq!(
        lines,
        [
            "tick 0 alpha".to_string(),
            "tick 1 beta".into(),
            "tick 2 gamma".into(),
            "tick 3 alpha".into(),
            format!("done 14 myprov{pid} args file-done"),
        ],
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
}

#[test]
fn semaphore_is_enabled_only_while_traced() {
    let prog = program("sema");
    let untraced = Command::new(&prog).arg("3").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&untraced.stdout),
        "disabled\ndisabled\ndisabled\n"
    );
    let cmd = format!("{} 3", path_str(&prog));
    // Tracing another probe of the program does not enable `guarded`.
    let other = dtrace(&["-n", "myprov$target:::tick { }", "-c", &cmd]);
    assert_ok(&other);
    assert_eq!(
        other.stdout.matches("disabled").count(),
        3,
        "{}",
        other.stdout
    );
    let traced = dtrace(&[
        "-q",
        "-n",
        "myprov$target:::guarded { @[\"guarded\"] = count(); }",
        "-c",
        &cmd,
    ]);
    assert_ok(&traced);
    assert_eq!(
        traced.stdout.matches("enabled").count() - traced.stdout.matches("disabled").count(),
        3,
        "{}",
        traced.stdout
    );
    assert_eq!(
        agg_value(&traced.stdout, "guarded"),
        Some(3),
        "{}",
        traced.stdout
    );
    // Detached again: the kernel dropped the semaphore count.
    let after = Command::new(&prog).arg("2").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&after.stdout),
        "disabled\ndisabled\n"
    );
}

/// A shell script running `prog 3` `runs` times.
fn loop_script(prog: &Path, runs: u32) -> PathBuf {
    let script = prog.with_extension("sh");
    std::fs::write(
        &script,
        format!(
            "i=0\nwhile [ $i -lt {runs} ]; do {} 3 >/dev/null; i=$((i+1)); done\n",
            path_str(prog)
        ),
    )
    .unwrap();
    script
}

#[test]
fn provider_glob_traces_processes_started_later() {
    // A waiting instance maps the binary, so `myprov*:::tick` finds it without a path; it
    // never fires a probe while dtrace runs. The loop's 50 processes start after attaching.
    let prog = program("globloop");
    let mut holder = Command::new(&prog)
        .arg("wait")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let script = loop_script(&prog, 50);
    let cmd = format!("/bin/sh {}", path_str(&script));
    let run = dtrace(&[
        "-q",
        "-n",
        // Other tests' programs have the same provider, and the glob traces them too
        // if they start meanwhile: count this one's.
        "myprov*:::tick /probemod == \"globloop\"/ { @[probeprov, probemod] = count(); }
         myprov*:::file-done /probemod == \"globloop\"/ { @d = count(); }",
        "-c",
        &cmd,
    ]);
    drop(holder.stdin.take());
    let _ = holder.wait();
    assert_ok(&run);
    let row = run
        .stdout
        .lines()
        .find(|l| l.contains("myprov"))
        .unwrap_or_default()
        .to_string();
    let words: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(words, ["myprov", "globloop", "150"], "{}", run.stdout);
    assert!(
        run.stdout.lines().any(|l| l.trim() == "50"),
        "{}",
        run.stdout
    );
}

#[test]
fn module_path_names_a_binary_nothing_runs() {
    let prog = program("bypath");
    let script = loop_script(&prog, 50);
    let cmd = format!("/bin/sh {}", path_str(&script));
    let desc = format!(
        "myprov*:{p}::tick {{ @t = count(); }} pid*:{p}:square:entry {{ @s = count(); }}",
        p = path_str(&prog)
    );
    let run = dtrace(&["-q", "-n", &desc, "-c", &cmd]);
    assert_ok(&run);
    let values: Vec<&str> = run.stdout.split_whitespace().collect();
    assert_eq!(values, ["150", "150"], "{}", run.stdout);
}

#[test]
fn pid_entry_and_return() {
    let prog = program("pidfn");
    let cmd = format!("{} 6", path_str(&prog));
    let run = dtrace(&[
        "-q",
        "-n",
        "pid$target:a.out:square:entry { @e = count(); @a = sum(arg0); }
         pid$target:a.out:square:return { @r = count(); @v = sum(arg1); @f[probefunc] = count(); }",
        "-c",
        &cmd,
    ]);
    assert_ok(&run);
    // 6 entries with arguments 0..5 (sum 15), 6 returns of squares (sum 55).
    let values: Vec<&str> = run
        .stdout
        .split_whitespace()
        .filter(|w| *w != "disabled")
        .collect();
    assert_eq!(
        values,
        ["6", "15", "6", "55", "square", "6"],
        "{}",
        run.stdout
    );
}

#[test]
fn pid_glob_over_libc_attaches_quickly() {
    let prog = program("libcglob");
    let cmd = format!("{} 3", path_str(&prog));
    let start = Instant::now();
    let run = dtrace(&[
        "-n",
        "pid$target:libc.so.6::entry /probefunc == \"puts\"/ { @[probefunc] = count(); }",
        "-c",
        &cmd,
    ]);
    let elapsed = start.elapsed();
    assert_ok(&run);
    let matched: u32 = run
        .stderr
        .split_whitespace()
        .skip_while(|w| *w != "matched")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(matched > 1000, "matched {matched}: {}", run.stderr);
    assert!(
        run.stdout
            .lines()
            .any(|l| l.split_whitespace().next() == Some("puts")),
        "{}",
        run.stdout
    );
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
}

#[test]
fn list_usdt_probes_of_a_command() {
    let prog = program("listing");
    let cmd = format!("{} 1", path_str(&prog));
    let run = dtrace(&["-l", "-n", "myprov$target:::", "-c", &cmd]);
    assert_ok(&run);
    let names: Vec<&str> = run
        .stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    assert_eq!(names, ["file-done", "guarded", "tick"], "{}", run.stdout);
    assert!(run.stdout.contains(" listing "), "{}", run.stdout);
}

/// An example of the `dtrace-usdt` crate (`ticker`, `leaf`), built with cargo, optimized
/// (as programs are shipped: `leaf` is a leaf function only when optimized).
fn usdt_example(name: &str) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "-q", "--release", "-p", "dtrace-usdt"])
        .args(["--example", name])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo");
    assert!(status.success(), "building the {name} example failed");
    let profile_dir = Path::new(env!("CARGO_BIN_EXE_dtrace")).parent().unwrap();
    let exe = profile_dir
        .parent()
        .unwrap()
        .join("release/examples")
        .join(name);
    assert!(exe.exists(), "{}", exe.display());
    exe
}

#[test]
fn rust_usdt_crate_probes() {
    let exe = usdt_example("ticker");
    let cmd = format!("{} 5", path_str(&exe));
    let run = dtrace(&[
        "-q",
        "-n",
        "ticker$target:::tick { printf(\"%d %s\\n\", arg0, copyinstr(arg1)); }
         ticker$target:::item-done { @d = count(); @n = sum(arg1); }",
        "-c",
        &cmd,
    ]);
    assert_ok(&run);
    for i in 0..5 {
        assert!(
            run.stdout.contains(&format!("{i} item-{i}\n")),
            "{}",
            run.stdout
        );
        assert!(run.stdout.contains(&format!("{i} tick enabled")));
    }
    // item-done fires while enabled: 5 times, with -(0+1+2+3+4).
    let tail: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| !l.contains("item") && !l.contains("tick"))
        .flat_map(|l| l.split_whitespace())
        .collect();
    assert_eq!(tail, ["5", "-10"], "{}", run.stdout);
}

/// The crate's sites are 5-byte nops, which this kernel's optimized uprobes turn into a
/// call pushing below the stack pointer: a leaf function keeping twelve words there around
/// a site (`examples/leaf.rs`) still sums them right on every traced call.
#[test]
fn rust_usdt_sites_are_five_byte_nops_that_leave_the_red_zone_alone() {
    let exe = usdt_example("leaf");
    let dis = Command::new("objdump")
        .arg("-d")
        .arg(&exe)
        .output()
        .expect("run objdump");
    let dis = String::from_utf8_lossy(&dis.stdout);
    let leaf = dis
        .split("\n\n")
        .find(|f| {
            f.lines()
                .next()
                .is_some_and(|l| l.contains("<_ZN4leaf4leaf"))
        })
        .expect("leaf::leaf disassembled");
    // A leaf (it calls nothing) whose site is a 5-byte nop.
    assert!(!leaf.contains("call"), "{leaf}");
    assert!(leaf.contains("0f 1f 44 00 00"), "{leaf}");
    let cmd = format!("{} 20000", path_str(&exe));
    let run = dtrace(&["-q", "-n", "leaf$target:::go { @ = count(); }", "-c", &cmd]);
    assert_ok(&run);
    assert_eq!(run.stdout, "bad 0\n\n            20000\n", "{}", run.stderr);
}

/// A second program for attach modes, per-site arguments and `copyin`: `copy N` calls
/// `site_a(10 i)` and `site_b(100 i + 7)` (both fire `cp:::mixed`, whose second argument is
/// the constant 1 at one site and 2 at the other, so the two sites have different operand
/// specs), fires `cp:::data(&v, &w, s)` with `v = -42 + i`, `w = 0x1122334455667788` and
/// `s = "hello"`, then `cp:::data` once with the bad address 8, and `cp:::last(N)`.
/// `copy wait N` waits for a line on stdin first.
const COPY_PROGRAM: &str = r#"
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void site_a(int x) { DTRACE_PROBE2(cp, mixed, x, 1); }
__attribute__((noinline)) void site_b(long x) { DTRACE_PROBE2(cp, mixed, x, 2); }

int main(int argc, char **argv) {
    int at = 1;
    if (argc > 2 && strcmp(argv[1], "wait") == 0) {
        char line[16];
        if (!fgets(line, sizeof line, stdin)) return 0;
        at = 2;
    }
    int n = argc > at ? atoi(argv[at]) : 3;
    int v = -42;
    long long w = 0x1122334455667788LL;
    char s[] = "hello";
    for (int i = 0; i < n; i++) {
        site_a(10 * i);
        site_b(100 * i + 7);
        DTRACE_PROBE3(cp, data, &v, &w, s);
        v++;
    }
    DTRACE_PROBE3(cp, data, (int *)8, &w, s);
    DTRACE_PROBE1(cp, last, n);
    return 0;
}
"#;

fn copy_program(name: &str) -> PathBuf {
    common::build_c(&scratch(name), name, COPY_PROGRAM, &["-O2"])
}

/// The `link_type` of every BPF link process `pid` holds (from /proc/PID/fdinfo).
fn link_types(pid: u32) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .unwrap()
        .flatten()
    {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        if let Some(t) = text.lines().find_map(|l| l.strip_prefix("link_type:")) {
            out.push(t.trim().to_string());
        }
    }
    out.sort();
    out
}

/// Runs dtrace with `script` on `prog wait N`, returns the link types it holds once the
/// command is started (before it fires anything), then lets it run to the end.
fn run_holding(prog: &Path, script: &str, n: u32) -> (Vec<String>, Run) {
    let cmd = format!("{} wait {n}", path_str(prog));
    let mut child = Command::new(env!("CARGO_BIN_EXE_dtrace"))
        .args(["-q", "-n", script, "-c", &cmd])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Attached once the links are there; they are all made before the command starts.
    let start = Instant::now();
    let mut types = Vec::new();
    let mut last_len = usize::MAX;
    while start.elapsed() < Duration::from_secs(20) {
        types = link_types(child.id());
        if !types.is_empty() && types.len() == last_len {
            break;
        }
        last_len = types.len();
        std::thread::sleep(Duration::from_millis(300));
    }
    use std::io::Write;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"go\n").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let run = Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    (types, run)
}

#[test]
fn few_sites_of_a_process_get_perf_uprobes_with_site_arguments() {
    let prog = copy_program("perfmode");
    // cp:::mixed has two sites with different operand specs: the per-site decoder is chosen
    // by the perf event's cookie.
    // The module is named: a description naming no module also watches the libraries the
    // process loads later, with a link of its own.
    let script = "cp$target:perfmode::mixed { @[arg1, arg0] = count(); }
                  cp$target:perfmode::last { @[0, arg0] = count(); }";
    let (types, run) = run_holding(&prog, script, 4);
    assert_ok(&run);
    assert_eq!(types, ["perf", "perf", "perf"], "{}", run.stderr);
    let rows: Vec<Vec<&str>> = run
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| !w.is_empty())
        .collect();
    let mut expect: Vec<Vec<String>> = Vec::new();
    for i in 0..4 {
        expect.push(vec!["1".into(), (10 * i).to_string(), "1".into()]);
        expect.push(vec!["2".into(), (100 * i + 7).to_string(), "1".into()]);
    }
    expect.push(vec!["0".into(), "4".into(), "1".into()]);
    let mut got: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|s| s.to_string()).collect())
        .collect();
    got.sort();
    expect.sort();
    assert_eq!(got, expect, "{}", run.stdout);
}

#[test]
fn many_sites_fall_back_to_uprobe_multi_with_exact_counts() {
    let prog = copy_program("multimode");
    // 2 + 2 + 1 sites: the first probes use up the perf-uprobe budget (4 sites), the rest
    // get uprobe_multi links; every fire is still counted once, with the right arguments.
    let script = "cp$target:::mixed { @m[arg1] = sum(arg0); } cp$target:::data { @d = count(); }
                  cp$target:::last { @l = sum(arg0); } pid$target:a.out:site_a:entry { @e = count(); }";
    let (types, run) = run_holding(&prog, script, 5);
    assert_ok(&run);
    assert!(types.iter().any(|t| t == "perf"), "{types:?}");
    assert!(types.iter().any(|t| t == "uprobe_multi"), "{types:?}");
    let words: Vec<&str> = run.stdout.split_whitespace().collect();
    // @m: arg1 1 -> 0+10+20+30+40 = 100, arg1 2 -> 7+107+...+407 = 1035; @d: 5 + 1 (the bad
    // address fires too); @l: 5; @e: 5.
    assert_eq!(
        words,
        ["1", "100", "2", "1035", "6", "5", "5"],
        "{}",
        run.stdout
    );
}

#[test]
fn copyin_values_and_bad_addresses() {
    let prog = copy_program("copyin");
    let cmd = format!("{} 3", path_str(&prog));
    let run = dtrace(&[
        "-q",
        "-n",
        "cp$target:::data {
             this->p = (int *)copyin(arg0, 4);
             printf(\"v %d w %x s %s c %c\\n\", *this->p, *(uint64_t *)copyin(arg1, 8),
                 copyinstr(arg2), *(char *)copyin(arg2, 1));
         }
         cp$target:::data { printf(\"next %d\\n\", *(short *)copyin(arg1, 2)); }
         cp$target:::last { printf(\"last %d\\n\", arg0); }",
        "-c",
        &cmd,
    ]);
    assert_ok(&run);
    let lines: Vec<&str> = run.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(
        lines,
        [
            "v -42 w 1122334455667788 s hello c h",
            "next 30600",
            "v -41 w 1122334455667788 s hello c h",
            "next 30600",
            "v -40 w 1122334455667788 s hello c h",
            "next 30600",
            // The bad address: the first clause faults, the second still runs.
            "next 30600",
            "last 3",
        ],
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("invalid address"))
        .collect();
    assert_eq!(errors.len(), 1, "{}", run.stderr);
    assert!(
        errors[0].contains("invalid address (0x8)"),
        "{}",
        run.stderr
    );
}

#[test]
fn copyin_and_dereference_errors_at_compile_time() {
    for (script, message) in [
        ("BEGIN { x = copyin(0, 0); }", "size 0 is out of range"),
        ("BEGIN { x = *1; }", "cannot dereference non-pointer type"),
        (
            "BEGIN { x = *copyin(0, 4); }",
            "cannot dereference pointer to void",
        ),
        ("BEGIN { copyinto(0, 4); }", "prototype mismatch"),
        (
            "BEGIN { x = alloca(257); }",
            "size larger than scratchsize 256",
        ),
        ("BEGIN { y = 4; x = alloca(y); }", "not a constant"),
        (
            "BEGIN { copyinto(0, 4, \"s\"); }",
            "argument #3 is incompatible",
        ),
    ] {
        let run = dtrace(&["-q", "-n", script]);
        assert_ne!(run.status, 0, "{script}");
        assert!(run.stderr.contains(message), "{script}: {}", run.stderr);
    }
    // A kernel-side dereference of a bad pointer faults at run time and the script goes on.
    let run = dtrace(&[
        "-q",
        "-n",
        "BEGIN { x = *(int *)8; } BEGIN { printf(\"on\\n\"); exit(0); }",
    ]);
    assert_ok(&run);
    assert_eq!(run.stdout.trim(), "on");
    assert!(
        run.stderr.contains("invalid address (0x8)"),
        "{}",
        run.stderr
    );
}

#[test]
fn copyinto_alloca_values_and_bad_addresses() {
    let prog = copy_program("copyinto");
    let cmd = format!("{} 2", path_str(&prog));
    let run = dtrace(&[
        "-q",
        "-n",
        "cp$target:::data {
             this->p = (int *)alloca(8);
             copyinto(arg0, 4, this->p);
             printf(\"v %d %d\\n\", *this->p, this->p[1]);
         }
         cp$target:::data {
             this->w = (uint64_t *)alloca(8);
             copyinto(arg1, 8, this->w);
             this->s = (char *)alloca(6);
             copyinto(arg2, 6, this->s);
             printf(\"w %x s %s\\n\", *this->w, stringof(this->s));
         }
         cp$target:::data /arg0 == 8/ { copyinto(arg1, 8, (void *)16); printf(\"unreached\\n\"); }
         cp$target:::data /arg0 == 8/ {
             this->q = (char *)alloca(4);
             copyinto(arg1, 8, this->q);
             printf(\"unreached\\n\");
         }
         cp$target:::last { printf(\"last %d\\n\", arg0); }",
        "-c",
        &cmd,
    ]);
    assert_ok(&run);
    let lines: Vec<&str> = run.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(
        lines,
        [
            "v -42 0",
            "w 1122334455667788 s hello",
            "v -41 0",
            "w 1122334455667788 s hello",
            // The bad source address faults the first clause; the others go on.
            "w 1122334455667788 s hello",
            "last 2",
        ],
        "stdout:\n{}\nstderr:\n{}",
        run.stdout,
        run.stderr
    );
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("invalid address"))
        .collect();
    assert_eq!(errors.len(), 2, "{}", run.stderr);
    assert!(
        errors[0].contains("invalid address (0x8)"),
        "{}",
        run.stderr
    );
    // A destination outside scratch memory is refused too.
    assert!(
        errors[1].contains("invalid address (0x10)"),
        "{}",
        run.stderr
    );
    // More than the allocation holds is an invalid size.
    assert!(run.stderr.contains("invalid size (0x8)"), "{}", run.stderr);
}

/// `fork N M [grand|thread]`: the parent fires `forkprov:::item(0)` and calls `work()` M
/// times, then forks N children that each do so M times with 1; with `grand` every child
/// forks a grandchild that does so with 2, with `thread` every child also does so from a
/// second thread with 3. The parent waits for all of them.
const FORK_PROGRAM: &str = r#"
#include <sys/sdt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <pthread.h>

__attribute__((noinline)) int work(int x) { __asm__ volatile(""); return x + 1; }

static int m;
static void fire(int who) {
    for (int i = 0; i < m; i++) {
        DTRACE_PROBE1(forkprov, item, who);
        work(i);
    }
}
static void *thread_main(void *arg) { fire(3); return arg; }

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2;
    m = argc > 2 ? atoi(argv[2]) : 3;
    const char *mode = argc > 3 ? argv[3] : "";
    fire(0);
    for (int c = 0; c < n; c++) {
        if (fork() == 0) {
            fire(1);
            if (strcmp(mode, "grand") == 0) {
                pid_t g = fork();
                if (g == 0) { fire(2); _exit(0); }
                waitpid(g, NULL, 0);
            } else if (strcmp(mode, "thread") == 0) {
                pthread_t t;
                pthread_create(&t, NULL, thread_main, NULL);
                pthread_join(t, NULL);
            }
            _exit(0);
        }
    }
    while (wait(NULL) > 0) {}
    return 0;
}
"#;

fn fork_program(name: &str) -> PathBuf {
    common::build_c(&scratch(name), name, FORK_PROGRAM, &["-O1", "-pthread"])
}

const FORK_SCRIPT: &str = "forkprov$target:::item { @[arg0] = count(); }
     pid$target:a.out:work:entry { @w[\"work\"] = count(); }";

/// Aggregation rows of `run` as (key, value) text pairs, sorted.
fn rows(run: &Run) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = run
        .stdout
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let k = w.next()?.to_string();
            Some((k, w.next()?.parse().ok()?))
        })
        .collect();
    out.sort();
    out
}

fn expect(pairs: &[(&str, u64)]) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = pairs.iter().map(|(k, n)| (k.to_string(), *n)).collect();
    v.sort();
    v
}

#[test]
fn follow_fork_counts_every_child() {
    let prog = fork_program("followfork");
    let cmd = format!("{} 5 7", path_str(&prog));
    // Without follow-fork only the parent's firings count.
    let run = dtrace(&["-q", "-n", FORK_SCRIPT, "-c", &cmd]);
    assert_ok(&run);
    assert_eq!(
        rows(&run),
        expect(&[("0", 7), ("work", 7)]),
        "{}",
        run.stdout
    );
    // With it, every child's too (5 x 7), from USDT and pid probes alike.
    let run = dtrace(&["-q", "-x", "followfork", "-n", FORK_SCRIPT, "-c", &cmd]);
    assert_ok(&run);
    assert_eq!(
        rows(&run),
        expect(&[("0", 7), ("1", 35), ("work", 42)]),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    // The pragma says the same.
    let script = format!("#pragma D option followfork\n{FORK_SCRIPT}");
    let run = dtrace(&["-q", "-n", &script, "-c", &cmd]);
    assert_ok(&run);
    assert_eq!(
        rows(&run),
        expect(&[("0", 7), ("1", 35), ("work", 42)]),
        "{}",
        run.stdout
    );
}

#[test]
fn follow_fork_grandchildren_threads_and_exec() {
    let prog = fork_program("followgrand");
    let cmd = format!("{} 3 4 grand", path_str(&prog));
    let run = dtrace(&["-q", "-x", "followfork", "-n", FORK_SCRIPT, "-c", &cmd]);
    assert_ok(&run);
    assert_eq!(
        rows(&run),
        expect(&[("0", 4), ("1", 12), ("2", 12), ("work", 28)]),
        "{}",
        run.stdout
    );
    let cmd = format!("{} 3 4 thread", path_str(&prog));
    let run = dtrace(&["-q", "-x", "followfork", "-n", FORK_SCRIPT, "-c", &cmd]);
    assert_ok(&run);
    assert_eq!(
        rows(&run),
        expect(&[("0", 4), ("1", 12), ("3", 12), ("work", 28)]),
        "{}",
        run.stdout
    );
    // A shell script as $target: the program runs in exec'd children, whose probes are
    // named by path. Only follow-fork sees them.
    let dir = prog.parent().unwrap();
    let sh = dir.join("run.sh");
    std::fs::write(
        &sh,
        format!("#!/bin/sh\n{0} 2 3\n{0} 1 1\n", path_str(&prog)),
    )
    .unwrap();
    std::fs::set_permissions(&sh, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let script = format!(
        "forkprov$target:{0}::item {{ @[arg0] = count(); }}
         pid$target:{0}:work:entry {{ @w[\"work\"] = count(); }}",
        path_str(&prog)
    );
    let run = dtrace(&["-q", "-x", "followfork", "-n", &script, "-c", path_str(&sh)]);
    assert_ok(&run);
    assert_eq!(
        rows(&run),
        expect(&[("0", 4), ("1", 7), ("work", 11)]),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
    let run = dtrace(&["-q", "-n", &script, "-c", path_str(&sh)]);
    assert_ok(&run);
    assert_eq!(rows(&run), expect(&[]), "{}", run.stdout);
}

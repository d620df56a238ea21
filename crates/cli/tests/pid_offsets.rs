//! `pid` probes at instruction offsets on the live kernel: an offset fires only at an
//! instruction boundary of its function; one inside an instruction or past the function's
//! end is refused with the reason, before the program runs; and tracing every instruction of
//! several functions (`pid$target:a.out:FUNC:`) leaves what the program computes unchanged.
//!
//! The instruction boundaries the tests expect come from `objdump -d`, not from dtrace.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{dtrace, Run};

fn assert_ok(run: &Run) {
    assert_eq!(
        run.status, 0,
        "status {}\nstdout:\n{}\nstderr:\n{}",
        run.status, run.stdout, run.stderr
    );
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `add(a, b)` called three times: `5 + 1`, `2 + 3`, `10 + 20`.
const ADD: &str = r#"
#include <stdio.h>
__attribute__((noipa)) int add(int a, int b) { return a + b; }
int main(void) {
    printf("%d %d %d\n", add(5, 1), add(2, 3), add(10, 20));
    return 0;
}
"#;

/// What the untraced `ADD` program prints.
const ADD_OUTPUT: &str = "6 5 30\n";

/// Several functions with loops, calls, a switch and arithmetic, and `leaf`, a leaf function
/// keeping values in the stack's red zone across a 5-byte nop (the kernel would turn a
/// uprobe there into a call that overwrites them). `main` prints every result.
const WORK: &str = r#"
#include <stdio.h>
#include <stdlib.h>

__attribute__((noipa)) long mix(long a, long b) { return (a * 31 + b) ^ (a >> 3); }

__attribute__((noipa)) int classify(int x) {
    switch (x % 7) {
    case 0: return x * 3;
    case 1: return x - 11;
    case 2: return x << 2;
    case 3: return -x;
    case 4: return x / 3;
    case 5: return x % 5 + 100;
    default: return 42;
    }
}

__attribute__((noipa)) unsigned long fib(unsigned n) {
    unsigned long a = 0, b = 1;
    while (n--) { unsigned long t = a + b; a = b; b = t; }
    return a;
}

__attribute__((noipa)) double average(const int *v, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += v[i];
    return n ? s / n : 0;
}

__attribute__((noipa)) unsigned checksum(const char *s) {
    unsigned h = 5381;
    while (*s) h = h * 33 + (unsigned char)*s++;
    return h;
}

long leaf(long x);
__asm__(".globl leaf\n.type leaf, @function\nleaf:\n"
        "  mov %rdi, -8(%rsp)\n  mov %rdi, -16(%rsp)\n"
        "  mov %rdi, -24(%rsp)\n  mov %rdi, -32(%rsp)\n"
        "  .byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"
        "  mov -8(%rsp), %rax\n  add -16(%rsp), %rax\n"
        "  add -24(%rsp), %rax\n  add -32(%rsp), %rax\n"
        "  ret\n.size leaf, .-leaf\n");

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20;
    long acc = 0;
    int v[64];
    for (int i = 0; i < n; i++) {
        v[i % 64] = classify(i);
        acc = mix(acc, v[i % 64]);
    }
    printf("acc %ld\n", acc);
    printf("fib %lu %lu\n", fib(10), fib(n + 30));
    printf("avg %.3f\n", average(v, n < 64 ? n : 64));
    printf("sum %u\n", checksum("the quick brown fox"));
    long l = 0;
    for (int i = 1; i <= 3; i++) l += leaf(i);
    printf("leaf %ld\n", l);
    return 0;
}
"#;

/// The functions of `WORK` and how often each is called with argument 25.
const WORK_CALLS: &[(&str, u64)] = &[
    ("main", 1),
    ("mix", 25),
    ("classify", 25),
    ("fib", 2),
    ("average", 1),
    ("checksum", 1),
    ("leaf", 3),
];

fn build(name: &str, source: &str, flags: &[&str]) -> PathBuf {
    common::build_c(&common::scratch("pidoff", name), name, source, flags)
}

/// The offsets of `function`'s instructions in `exe`, and their mnemonics, from objdump.
fn instructions(exe: &Path, function: &str) -> Vec<(u64, String)> {
    let out = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(format!("--disassemble={function}"))
        .arg(exe)
        .output()
        .expect("run objdump");
    assert!(out.status.success(), "objdump failed");
    let text = String::from_utf8_lossy(&out.stdout);
    let header = format!("<{function}>:");
    let mut start = None;
    let mut insns = Vec::new();
    for line in text.lines() {
        if line.ends_with(&header) {
            start = u64::from_str_radix(line.split_whitespace().next().unwrap(), 16).ok();
            continue;
        }
        let Some(start) = start else { continue };
        let mut fields = line.trim_start().splitn(2, ":\t");
        let (Some(addr), Some(insn)) = (fields.next(), fields.next()) else {
            continue;
        };
        let Ok(addr) = u64::from_str_radix(addr, 16) else {
            continue;
        };
        let mnemonic = insn.split_whitespace().next().unwrap_or("").to_string();
        insns.push((addr - start, mnemonic));
    }
    assert!(!insns.is_empty(), "no instructions of {function}:\n{text}");
    insns
}

/// The `(function, name)` of every probe line of a `dtrace -l` listing.
fn listed(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .skip(1)
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 5).then(|| (w[3].to_string(), w[4].to_string()))
        })
        .collect()
}

#[test]
fn an_instruction_offset_fires() {
    let exe = build("fires", ADD, &["-O0"]);
    // The `add` instruction itself, past the prologue.
    let insns = instructions(&exe, "add");
    let (offset, _) = insns
        .iter()
        .find(|(off, m)| *off > 0 && m == "add")
        .unwrap_or_else(|| panic!("no add instruction: {insns:?}"));
    let desc = format!("pid$target:a.out:add:{offset:x} {{ @c = count(); @s = sum(arg0); }}");
    let run = dtrace(&["-q", "-n", &desc, "-c", path_str(&exe)]);
    assert_ok(&run);
    // The program's results are untouched; three calls, first arguments 5 + 2 + 10.
    let aggs = run.stdout.strip_prefix(ADD_OUTPUT).unwrap_or_else(|| {
        panic!("program output changed:\n{}", run.stdout);
    });
    let words: Vec<&str> = aggs.split_whitespace().collect();
    assert_eq!(words, ["3", "17"], "{}", run.stdout);
}

#[test]
fn an_offset_inside_an_instruction_is_refused() {
    let exe = build("inside", ADD, &["-O0"]);
    let insns = instructions(&exe, "add");
    // The first instruction longer than one byte (the next one starts past its first byte).
    let (at, next) = insns
        .windows(2)
        .map(|w| (w[0].0, w[1].0))
        .find(|(at, next)| next - at > 1)
        .unwrap_or_else(|| panic!("no multi-byte instruction: {insns:?}"));
    let inside = at + 1;
    let desc = format!("pid$target:a.out:add:{inside:x} {{ trace(arg0); }}");
    let run = dtrace(&["-q", "-n", &desc, "-c", path_str(&exe)]);
    assert_eq!(run.status, 1, "{}\n{}", run.stdout, run.stderr);
    let expected = format!(
        "does not match any probes: offset {inside:#x} of add is inside an instruction \
         (nearest instruction boundaries: {at:#x}, {next:#x})\n"
    );
    assert!(
        run.stderr
            .starts_with("dtrace: invalid probe specifier pid$target:a.out:add:")
            && run.stderr.ends_with(&expected)
            && run.stderr.lines().count() == 1,
        "{}",
        run.stderr
    );
    // Nothing ran: the program's output never appeared.
    assert_eq!(run.stdout, "", "{}", run.stderr);
}

#[test]
fn an_offset_past_the_end_is_refused() {
    let exe = build("beyond", ADD, &["-O0"]);
    let run = dtrace(&[
        "-q",
        "-n",
        "pid$target:a.out:add:100 { trace(arg0); }",
        "-c",
        path_str(&exe),
    ]);
    assert_eq!(run.status, 1, "{}\n{}", run.stdout, run.stderr);
    // DTrace's tag for an offset outside the function, with our reason.
    assert!(
        run.stderr.contains(
            "pid$target:a.out:add:100 { trace(arg0); }: offset 0x100 is beyond the end of add (size 0x"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(run.stdout, "");
}

#[test]
fn entry_arguments_past_the_sixth_come_from_the_stack() {
    let exe = build(
        "args10",
        r#"
#include <stdio.h>
__attribute__((noipa)) long ten(long a0, long a1, long a2, long a3, long a4, long a5,
                                long a6, long a7, long a8, long a9) {
    return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9;
}
int main(void) { printf("%ld\n", ten(10, 11, 12, 13, 14, 15, 16, 17, 18, 19)); return 0; }
"#,
        &["-O0"],
    );
    let run = dtrace(&[
        "-q",
        "-n",
        r#"pid$target:a.out:ten:entry { printf("%d %d %d %d %d %d %d %d %d %d\n", arg0, arg1,
            arg2, arg3, arg4, arg5, arg6, arg7, arg8, arg9); }"#,
        "-c",
        path_str(&exe),
    ]);
    assert_ok(&run);
    // The program's line and dtrace's come in either order.
    let mut lines: Vec<&str> = run.stdout.lines().filter(|l| !l.is_empty()).collect();
    lines.sort();
    assert_eq!(
        lines,
        ["10 11 12 13 14 15 16 17 18 19", "145"],
        "{}",
        run.stdout
    );
}

#[test]
fn every_probe_of_a_function_is_listed() {
    let exe = build("listed", ADD, &["-O0"]);
    let offsets: Vec<String> = instructions(&exe, "add")
        .iter()
        .map(|(off, _)| format!("{off:x}"))
        .collect();
    let run = dtrace(&["-l", "-n", "pid$target:a.out:add:", "-c", path_str(&exe)]);
    assert_ok(&run);
    let names: Vec<String> = listed(&run.stdout).into_iter().map(|(_, n)| n).collect();
    let mut expected = vec!["entry".to_string(), "return".to_string()];
    expected.extend(offsets.iter().cloned());
    assert_eq!(names, expected, "{}", run.stdout);
    // A glob over offset names.
    let run = dtrace(&["-l", "-n", "pid$target:a.out:add:1*", "-c", path_str(&exe)]);
    assert_ok(&run);
    let names: Vec<String> = listed(&run.stdout).into_iter().map(|(_, n)| n).collect();
    let ones: Vec<String> = offsets.into_iter().filter(|o| o.starts_with('1')).collect();
    assert!(!ones.is_empty());
    assert_eq!(names, ones, "{}", run.stdout);
}

#[test]
fn an_offset_over_many_functions_matches_where_it_is_a_boundary() {
    let exe = build("glob", WORK, &["-O2"]);
    let boundaries: BTreeMap<&str, BTreeSet<u64>> = WORK_CALLS
        .iter()
        .map(|(f, _)| (*f, instructions(&exe, f).iter().map(|(o, _)| *o).collect()))
        .collect();
    // An offset that starts an instruction in some of the functions and not in others.
    let offset = (1..64u64)
        .find(|o| {
            let n = boundaries.values().filter(|b| b.contains(o)).count();
            n > 0 && n < boundaries.len()
        })
        .expect("an offset that is a boundary in some functions only");
    let desc = format!("pid$target:a.out::{offset:x}");
    let run = dtrace(&["-l", "-n", &desc, "-c", path_str(&exe)]);
    assert_ok(&run);
    let functions: BTreeSet<String> = listed(&run.stdout).into_iter().map(|(f, _)| f).collect();
    for (f, b) in &boundaries {
        if !b.contains(&offset) {
            assert!(
                !functions.contains(*f),
                "{f} at {offset:#x}:\n{}",
                run.stdout
            );
        }
    }
    assert!(
        functions
            .iter()
            .any(|f| boundaries.contains_key(f.as_str())),
        "{offset:#x}:\n{}",
        run.stdout
    );
}

/// Trace every instruction of every function of `WORK` built with `flags`: the program's
/// output must be byte for byte its untraced output, and the counts plausible.
fn trace_every_instruction(name: &str, flags: &[&str]) {
    let exe = build(name, WORK, flags);
    let untraced = Command::new(&exe)
        .arg("25")
        .output()
        .expect("run the program");
    assert!(untraced.status.success());
    let descs: Vec<String> = WORK_CALLS
        .iter()
        .map(|(f, _)| format!("pid$target:a.out:{f}:"))
        .collect();
    let script = format!(
        "{} {{ @[probefunc, probename] = count(); }} END {{ printa(\"%s %s %@d\\n\", @); }}",
        descs.join(",")
    );
    let counts_file = exe.with_extension("counts");
    let cmd = format!("{} 25", path_str(&exe));
    let run = dtrace(&[
        "-q",
        "-n",
        &script,
        "-c",
        &cmd,
        "-o",
        path_str(&counts_file),
    ]);
    assert_ok(&run);
    // The program's own output (dtrace's went to the file).
    assert_eq!(
        run.stdout,
        String::from_utf8_lossy(&untraced.stdout),
        "{}",
        run.stderr
    );
    let text = std::fs::read_to_string(&counts_file).expect("read the counts");
    let mut counts: BTreeMap<(String, String), u64> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        let w: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(w.len(), 3, "{line}");
        counts.insert((w[0].into(), w[1].into()), w[2].parse().unwrap());
    }
    let count = |f: &str, n: &str| counts.get(&(f.to_string(), n.to_string())).copied();
    for &(f, calls) in WORK_CALLS {
        assert_eq!(count(f, "entry"), Some(calls), "{f} entry:\n{text}");
        assert_eq!(count(f, "return"), Some(calls), "{f} return:\n{text}");
        // Offset 0 is its own probe, and fires with entry.
        assert_eq!(count(f, "0"), Some(calls), "{f} 0:\n{text}");
        // Every offset that fired is an instruction boundary, and most instructions fired.
        let insns: BTreeSet<String> = instructions(&exe, f)
            .iter()
            .map(|(o, _)| format!("{o:x}"))
            .collect();
        let fired: Vec<&String> = counts
            .keys()
            .filter(|(func, n)| func == f && n != "entry" && n != "return")
            .map(|(_, n)| n)
            .collect();
        for n in &fired {
            assert!(insns.contains(*n), "{f}:{n} is no instruction: {insns:?}");
        }
        assert!(
            fired.len() * 2 >= insns.len(),
            "{f}: {fired:?} of {insns:?}"
        );
    }
    // Loops run their bodies many times: fib(10) and fib(55) run 65 iterations.
    let fib_max = counts
        .iter()
        .filter(|((f, _), _)| f == "fib")
        .map(|(_, c)| *c)
        .max();
    assert!(fib_max >= Some(65), "{text}");
    // The red-zone leaf's 5-byte nop (at 0x14) has no probe.
    assert_eq!(count("leaf", "14"), None, "{text}");
}

#[test]
fn tracing_every_instruction_changes_nothing_at_o0() {
    trace_every_instruction("every0", &["-O0"]);
}

#[test]
fn tracing_every_instruction_changes_nothing_at_o2() {
    trace_every_instruction("every2", &["-O2"]);
}

#[test]
fn a_library_is_named_by_the_start_of_its_basename() {
    // As DTrace resolves a module: `libc` and `libc.so` name `libc.so.6`, and the probes
    // carry the library's own name.
    let exe = build("libcname", ADD, &["-O0"]);
    for module in ["libc", "libc.so", "libc.so.6"] {
        let desc = format!("pid$target:{module}:printf:entry {{ @[probemod] = count(); }}");
        let run = dtrace(&["-q", "-n", &desc, "-c", path_str(&exe)]);
        assert_ok(&run);
        let aggs = run.stdout.replace(ADD_OUTPUT, "");
        let words: Vec<&str> = aggs.split_whitespace().collect();
        assert_eq!(words, ["libc.so.6", "1"], "{module}: {}", run.stdout);
    }
}

/// `main(argc, argv)` returns `argc + 4` through a function of its own.
const STRIPPED: &str = r#"
__attribute__((noinline)) int plus(int a, int b) { __asm__ volatile(""); return a + b; }
int main(int argc, char **argv) { return plus(argc, 4); }
"#;

#[test]
fn main_of_a_stripped_program_has_entry_return_and_offset_probes() {
    common::require_root();
    // `_start` passes `main` in `rdi`: `lea main(%rip)` in a PIE, `mov $main` without.
    for (name, flags) in [
        ("stripped-pie", &["-O1"][..]),
        ("stripped-nopie", &["-O1", "-no-pie"]),
    ] {
        let exe = build(name, STRIPPED, flags);
        let strip = Command::new("strip").arg(&exe).status().expect("run strip");
        assert!(strip.success());
        let cmd = format!("{} x y", path_str(&exe));
        let run = dtrace(&[
            "-qn",
            "pid$target::main:entry { printf(\"entry %s %d\\n\", probefunc, arg0); }
             pid$target:a.out:main:return { printf(\"return %d\\n\", arg1); }",
            "-c",
            &cmd,
        ]);
        assert_ok(&run);
        assert_eq!(run.stdout.trim(), "entry main 3\nreturn 7", "{name}");
        // Its extent comes from its call-frame information: every instruction is offered.
        let first = instructions_of_main(&cmd);
        assert!(first.len() > 2, "{name}: {first:?}");
        assert_eq!(
            first[..2],
            ["entry".to_string(), "return".to_string()],
            "{name}"
        );
        assert!(
            first[2..]
                .iter()
                .all(|o| u64::from_str_radix(o, 16).is_ok()),
            "{first:?}"
        );
    }
}

/// The probe names `dtrace -l` lists for `main` of the `-c` command, entry and return first.
fn instructions_of_main(cmd: &str) -> Vec<String> {
    let run = dtrace(&["-l", "-n", "pid$target:a.out:main:", "-c", cmd]);
    assert_ok(&run);
    let mut names: Vec<String> = run
        .stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().last().map(str::to_string))
        .collect();
    names.sort_by_key(|n| (n != "entry", n != "return", n.len(), n.clone()));
    names
}

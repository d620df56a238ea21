//! `ustack()` of code built without frame pointers, unwound by its call frame information
//! on the live kernel: a C program built here with `-O2 -fomit-frame-pointer`, whose
//! `main` calls a chain of functions down to `leaf`, then sorts with libc's `qsort` (Debian's
//! libc keeps no frame pointers either) through a comparator, recurses deeper than the
//! stack window, and sleeps (a system call, whose user registers are the task's, not a
//! uprobe's). The expected return offsets
//! are read from the program's own disassembly (`objdump`), so the stacks are checked line
//! by line.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use common::Run;

const PROGRAM: &str = r#"
#include <stdlib.h>
#include <time.h>

volatile int sink;

__attribute__((noinline)) int leaf(int x) { sink += x; return sink * 3; }
__attribute__((noinline)) int f4(int x) {
    char buf[64];
    buf[x & 63] = x;
    sink += buf[(x + 1) & 63];
    return leaf(x + 1) + 1;
}
__attribute__((noinline)) int f3(int x) { return f4(x * 2) + 2; }
/* A frame of 3000 bytes: the stack window holds more than return addresses. */
__attribute__((noinline)) int f2(int x) {
    volatile char big[3000];
    big[x % 3000] = 1;
    return f3(x + big[7]) + 3;
}
__attribute__((noinline)) int f1(int x) { return f2(x - 1) * 5; }

/* Recursion 24 deep in frames of 512 bytes: deeper than the stack window. */
__attribute__((noinline)) int deep(int n) {
    volatile char pad[500];
    pad[n] = n;
    return (n == 0 ? leaf(pad[0]) : deep(n - 1)) + pad[n];
}

static int cmp(const void *a, const void *b) {
    return *(const int *)a - *(const int *)b;
}

int main(int argc, char **argv) {
    int v[8] = {5, 3, 8, 1, 9, 2, 7, 4};
    sink += f1(argc);
    qsort(v, 8, sizeof v[0], cmp);
    sink += deep(24);
    /* Stay a while: long enough for dtrace to read the process's mappings. */
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, 0);
    return v[0];
}
"#;

/// Build the test program into a directory of its own.
fn program(name: &str) -> std::path::PathBuf {
    common::build_c(
        &common::scratch("cfi", name),
        "cfiprog",
        PROGRAM,
        &["-O2", "-fomit-frame-pointer"],
    )
}

/// For each `(caller, callee)` call in `exe`'s disassembly, the return address as an offset
/// in the caller (`callee` as objdump names it: `leaf`, `qsort@plt`).
fn return_offsets(exe: &Path) -> HashMap<(String, String), u64> {
    let out = Command::new("objdump")
        .args(["-d", "--no-show-raw-insn"])
        .arg(exe)
        .output()
        .expect("run objdump");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut offsets = HashMap::new();
    let mut func: Option<(String, u64)> = None;
    let mut pending: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some(head) = line.strip_suffix(">:") {
            let (addr, name) = head.split_once(" <").expect("a function header");
            func = Some((name.to_string(), u64::from_str_radix(addr, 16).unwrap()));
            continue;
        }
        let Some((addr, insn)) = line.trim_start().split_once(":\t") else {
            continue;
        };
        let (Ok(addr), Some((name, start))) = (u64::from_str_radix(addr, 16), &func) else {
            continue;
        };
        if let Some(key) = pending.take() {
            offsets.insert(key, addr - start);
        }
        if insn.starts_with("call") {
            if let Some(callee) = insn.split_once('<').and_then(|(_, c)| c.strip_suffix('>')) {
                pending = Some((name.clone(), callee.to_string()));
            }
        }
    }
    offsets
}

/// The frames of stack output: lines indented by exactly 14 spaces.
fn frames(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with("              ") && !l[14..].starts_with(' '))
        .map(|l| &l[14..])
        .collect()
}

fn run(exe: &Path, script: &str) -> Run {
    common::trace(exe.to_str().unwrap(), script)
}

/// Below `main`: libc's start-up frames, ending in the program's `_start`.
fn assert_start_up(below_main: &[&str], out: &str) {
    assert!(
        below_main
            .first()
            .is_some_and(|f| f.starts_with("libc.so.6`__libc_start_call_main+0x")),
        "{out}"
    );
    assert!(
        below_main
            .last()
            .is_some_and(|f| f.starts_with("cfiprog`_start+0x")),
        "{out}"
    );
    assert!(below_main.len() <= 3, "{out}");
}

/// A pid probe in the innermost function: every function of the chain with the offset of
/// its call, in order, then `main` and libc's start; `ustack(3)` and `jstack()` in other
/// clauses are the same stack (first three frames, and all of it; the `ustack(3)` after an
/// `if` that skipped the clause's first copy of the stack window), and `ustackdepth`
/// counts its frames (the frame-pointer walk finds one).
#[test]
fn ustack_of_a_chain_without_frame_pointers() {
    let exe = program("chain");
    let ret = return_offsets(&exe);
    let at = |caller: &str, callee: &str| {
        let off = ret[&(caller.to_string(), callee.to_string())];
        format!("cfiprog`{caller}+{off:#x}")
    };
    let chain = [
        "cfiprog`leaf".to_string(),
        at("f4", "leaf"),
        at("f3", "f4"),
        at("f2", "f3"),
        at("f1", "f2"),
        at("main", "f1"),
    ];
    let run = run(
        &exe,
        "pid$target:a.out:leaf:entry /n++ == 0/ { ustack(); } \
         pid$target:a.out:leaf:entry /n == 1/ { if (n == 5) { ustack(); } ustack(3); } \
         pid$target:a.out:leaf:entry /n == 1/ { jstack(); } \
         pid$target:a.out:leaf:entry /n == 1/ { printf(\"depth %d %d\\n\", ustackdepth, ustackdepth + 0); }",
    );
    let shown = frames(&run.stdout);
    assert_eq!(shown[..6], chain, "{}", run.stdout);
    let whole = shown.len() - 3;
    assert_eq!(whole % 2, 0, "{}", run.stdout);
    let depth = whole / 2;
    assert_start_up(&shown[6..depth], &run.stdout);
    assert_eq!(shown[depth..depth + 3], chain[..3], "{}", run.stdout);
    assert_eq!(shown[depth + 3..], shown[..depth], "{}", run.stdout);
    // DTrace's layout: a blank line, then each frame on a line of its own.
    let text: String = shown[..depth]
        .iter()
        .map(|f| format!("              {f}\n"))
        .collect();
    assert!(
        run.stdout.starts_with(&format!("\n{text}\n")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains(&format!("\ndepth {depth} 1\n")),
        "{}",
        run.stdout
    );
}

/// A probe in a callback that libc calls: `qsort`'s frames (libc keeps no frame pointers)
/// between the comparator and `main`.
#[test]
fn ustack_through_libc_without_frame_pointers() {
    let exe = program("qsort");
    let ret = return_offsets(&exe);
    let main = format!(
        "cfiprog`main+{:#x}",
        ret[&("main".into(), "qsort@plt".into())]
    );
    let run = run(&exe, "pid$target:a.out:cmp:entry /n++ == 0/ { ustack(); }");
    let shown = frames(&run.stdout);
    assert_eq!(shown.first(), Some(&"cfiprog`cmp"), "{}", run.stdout);
    let m = shown
        .iter()
        .position(|f| *f == main)
        .unwrap_or_else(|| panic!("no {main} frame:\n{}", run.stdout));
    let libc = &shown[1..m];
    assert!(
        !libc.is_empty() && libc.iter().all(|f| f.starts_with("libc.so.6`")),
        "{}",
        run.stdout
    );
    assert!(
        libc.last()
            .is_some_and(|f| f.starts_with("libc.so.6`qsort")),
        "{}",
        run.stdout
    );
    assert_start_up(&shown[m + 1..], &run.stdout);
}

/// A stack deeper than the window: the walk shows the frames the window holds, all of them
/// real (`deep` calling itself), and stops there (the frame-pointer stack has nothing to
/// add in code without frame pointers).
#[test]
fn ustack_deeper_than_the_window_stops_cleanly() {
    let exe = program("deep");
    let ret = return_offsets(&exe);
    let deep = format!("cfiprog`deep+{:#x}", ret[&("deep".into(), "deep".into())]);
    let into_leaf = format!("cfiprog`deep+{:#x}", ret[&("deep".into(), "leaf".into())]);
    let run = run(&exe, "pid$target:a.out:leaf:entry /++n == 2/ { ustack(); }");
    let shown = frames(&run.stdout);
    assert_eq!(shown.first(), Some(&"cfiprog`leaf"), "{}", run.stdout);
    assert_eq!(shown.get(1), Some(&into_leaf.as_str()), "{}", run.stdout);
    let rest = &shown[2..];
    assert!(
        rest.len() >= 4 && rest.len() < 24 && rest.iter().all(|f| *f == deep),
        "{}",
        run.stdout
    );
}

/// A system call's probe: the user registers are those the task entered the kernel with
/// (libc's `clock_nanosleep`, called by `nanosleep`, called by `main`).
#[test]
fn ustack_in_a_system_call_probe() {
    let exe = program("syscall");
    let ret = return_offsets(&exe);
    let main = format!(
        "cfiprog`main+{:#x}",
        ret[&("main".into(), "nanosleep@plt".into())]
    );
    let run = run(
        &exe,
        "syscall::clock_nanosleep:entry /pid == $target/ { ustack(); }",
    );
    let shown = frames(&run.stdout);
    let m = shown
        .iter()
        .position(|f| *f == main)
        .unwrap_or_else(|| panic!("no {main} frame:\n{}", run.stdout));
    assert!(
        m >= 1 && shown[..m].iter().all(|f| f.starts_with("libc.so.6`")),
        "{}",
        run.stdout
    );
    assert_start_up(&shown[m + 1..], &run.stdout);
}

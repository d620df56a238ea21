//! Stacks and symbols on the live kernel: `stack()`, `ustack()` (as actions and as
//! aggregation keys), `func()`/`mod()`, `ufunc()`/`umod()`, and `%a`/`%A`, checked against
//! `/proc/kallsyms` and a small C program built here with frame pointers, whose `main`
//! calls `f1`, which calls `f2`, which makes the `getppid` system call itself (libc's
//! wrapper is a leaf without a frame, which would hide its caller from the unwinder), then
//! `leaf`, which keeps no frame pointer.

mod common;

use std::collections::HashSet;
use std::path::PathBuf;

use common::{dtrace, Run};

fn assert_ok(run: &Run) {
    assert_eq!(
        run.status, 0,
        "status {}\nstdout:\n{}\nstderr:\n{}",
        run.status, run.stdout, run.stderr
    );
}

const PROGRAM: &str = r#"
#include <sys/syscall.h>
#include <time.h>

__attribute__((noinline)) long f2(void (*cb)(void)) {
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "0"((long)SYS_getppid) : "rcx", "r11", "memory");
    return r + (cb != 0);
}

/* Keeps no frame pointer: at its entry only the return address names its caller. */
__attribute__((noinline, optimize("omit-frame-pointer"))) int leaf(int x) {
    __asm__ volatile("");
    return x + 1;
}

__attribute__((noinline)) void f1(void) { f2(f1); leaf(1); __asm__ volatile(""); }

int main(void) {
    f1();
    /* Stay a while: long enough for dtrace to see the process. */
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, 0);
    return 0;
}
"#;

/// Build the test program (frame pointers everywhere) into a directory of its own.
fn program(name: &str) -> PathBuf {
    common::build_c(
        &common::scratch("stacks", name),
        "stackprog",
        PROGRAM,
        &["-O0", "-fno-omit-frame-pointer"],
    )
}

/// Kernel symbol names and module names of `/proc/kallsyms`.
fn kallsyms() -> (HashSet<String>, HashSet<String>) {
    let text = std::fs::read_to_string("/proc/kallsyms").unwrap();
    let mut names = HashSet::new();
    let mut modules: HashSet<String> = ["vmlinux".to_string()].into();
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        let _ = parts.next();
        let _ = parts.next();
        if let Some(n) = parts.next() {
            names.insert(n.to_string());
        }
        if let Some(m) = parts.next() {
            modules.insert(m.trim_matches(['[', ']']).to_string());
        }
    }
    (names, modules)
}

/// The frames of stack output: lines indented by exactly 14 spaces.
fn frames(out: &str) -> Vec<&str> {
    out.lines()
        .filter(|l| l.starts_with(&" ".repeat(14)) && !l[14..].starts_with(' '))
        .map(|l| &l[14..])
        .collect()
}

/// `module`name[+0xoff]` into (module, name); None for raw addresses.
fn split_frame(f: &str) -> Option<(&str, &str)> {
    let (module, rest) = f.split_once('`')?;
    let name = match rest.split_once("+0x") {
        Some((name, off)) => {
            assert!(off.chars().all(|c| c.is_ascii_hexdigit()), "offset of {f}");
            name
        }
        None => rest,
    };
    Some((module, name))
}

#[test]
fn kernel_stacks_as_aggregation_keys() {
    let run = dtrace(&[
        "-n",
        "profile-997 { @[stack()] = count(); } tick-1s { exit(0); }",
    ]);
    assert_ok(&run);
    let (names, modules) = kallsyms();
    let frames = frames(&run.stdout);
    assert!(frames.len() >= 3, "too few frames:\n{}", run.stdout);
    let mut known = 0;
    for f in &frames {
        if let Some((module, name)) = split_frame(f) {
            // JIT-compiled BPF programs (other tests' probes firing under the sample) leave
            // /proc/kallsyms when their program is unloaded, possibly before we read it.
            if name.starts_with("bpf_prog_") {
                continue;
            }
            assert!(modules.contains(module), "module of {f}");
            assert!(names.contains(name), "{f} is not in /proc/kallsyms");
            known += 1;
        }
    }
    assert!(
        known * 2 > frames.len(),
        "most frames are symbols:\n{}",
        run.stdout
    );
    // Each stack is followed by its count, ` %16lld`, and starts after an empty line.
    let lines: Vec<&str> = run.stdout.lines().collect();
    let counts: Vec<&&str> = lines
        .iter()
        .filter(|l| l.len() == 17 && l.trim().parse::<u64>().is_ok())
        .collect();
    assert!(!counts.is_empty(), "no counts:\n{}", run.stdout);
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with(&" ".repeat(14)) && !l[14..].starts_with(' ') {
            let prev = lines[i - 1];
            assert!(
                prev.is_empty() || (prev.starts_with(&" ".repeat(14)) && !prev.ends_with(' ')),
                "a stack starts on a line of its own:\n{}",
                run.stdout
            );
        }
    }
}

#[test]
fn stack_and_ustack_actions_in_a_syscall_probe() {
    let exe = program("actions");
    let run = dtrace(&[
        "-n",
        "syscall::getppid:entry /pid == $target/ { stack(); ustack(); }",
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_ok(&run);
    let (names, _) = kallsyms();
    let frames = frames(&run.stdout);
    let kernel: Vec<&str> = frames
        .iter()
        .filter(|f| f.starts_with("vmlinux`"))
        .copied()
        .collect();
    assert!(!kernel.is_empty(), "no kernel frames:\n{}", run.stdout);
    for f in &kernel {
        let (_, name) = split_frame(f).unwrap();
        if name.starts_with("bpf_prog_") {
            continue; // transient: see kernel_stacks_as_aggregation_keys
        }
        assert!(names.contains(name), "{f} is not in /proc/kallsyms");
    }
    let user: Vec<&str> = frames
        .iter()
        .filter_map(|f| f.strip_prefix("stackprog`"))
        .collect();
    assert!(
        user.len() >= 3
            && user[0].starts_with("f2+0x")
            && user[1].starts_with("f1+0x")
            && user[2].starts_with("main+0x"),
        "user stack f2, f1, main:\n{}",
        run.stdout
    );
    // The probe line, then an empty line opening each stack.
    assert!(
        run.stdout
            .contains("getppid:entry \n              vmlinux`"),
        "{}",
        run.stdout
    );
}

#[test]
fn ustack_aggregation_keys_resolve_after_exit() {
    let exe = program("aggregation");
    let run = dtrace(&[
        "-q",
        "-n",
        "syscall::getppid:entry /pid == $target/ { @[ustack()] = count(); @d[ustack(2)] = count(); }",
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_ok(&run);
    // Printed once the program has exited: its mappings were read while it ran.
    let f2 = "              stackprog`f2+0x";
    let at = run
        .stdout
        .find(f2)
        .unwrap_or_else(|| panic!("{}", run.stdout));
    let rest: Vec<&str> = run.stdout[at..].lines().collect();
    assert!(
        rest[1].starts_with("              stackprog`f1+0x"),
        "{}",
        run.stdout
    );
    assert!(
        rest[2].starts_with("              stackprog`main+0x"),
        "{}",
        run.stdout
    );
    // After the frames, the count (` %16lld`).
    let count = rest
        .iter()
        .find(|l| l.len() <= 14 || l[14..].starts_with(' '));
    assert_eq!(
        count,
        Some(&format!("{:>17}", 1).as_str()),
        "{}",
        run.stdout
    );
    // Both aggregations have the stack.
    assert_eq!(
        run.stdout.matches(&format!("\n{f2}")).count(),
        2,
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.starts_with("\n\n              stackprog`"),
        "{:?}",
        run.stdout
    );
}

#[test]
fn user_symbols_and_percent_a() {
    let exe = program("symbols");
    // f2's argument is the address of f1.
    let run = dtrace(&[
        "-q",
        "-n",
        r#"pid$target:a.out:f2:entry {
            printf("[%A] [%-20A] [%a]\n", arg0, arg0 + 1, arg0);
            trace(ufunc(arg0 + 2)); printf("\n");
            trace(umod(arg0)); printf("\n");
            @u[ufunc(arg0), umod(arg0)] = count();
            @u[ufunc(arg0 + 1), umod(arg0)] = count();
        }"#,
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_ok(&run);
    let lines: Vec<&str> = run.stdout.lines().collect();
    let first = lines.first().copied().unwrap_or_default();
    assert!(
        first.starts_with("[stackprog`f1] [stackprog`f1+0x1    ] [0x"),
        "{}",
        run.stdout
    );
    assert_eq!(
        lines[1],
        format!("  {:<50}", "stackprog`f1"),
        "{}",
        run.stdout
    );
    assert_eq!(lines[2], format!("  {:<50}", "stackprog"), "{}", run.stdout);
    // Two addresses of one function: one row.
    let row = format!("  {:<50}  {:<50} {:>16}", "stackprog`f1", "stackprog", 2);
    assert!(run.stdout.contains(&row), "{}", run.stdout);
}

#[test]
fn kernel_symbols_and_percent_a() {
    let run = dtrace(&[
        "-q",
        "-n",
        r#"profile-997 /arg0 != 0/ {
            printf("%a\n", arg0); trace(func(arg0)); printf("\n"); trace(mod(arg0)); printf("\n");
            exit(0);
        }"#,
    ]);
    assert_ok(&run);
    let (names, modules) = kallsyms();
    let lines: Vec<&str> = run.stdout.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(lines.len(), 3, "{}", run.stdout);
    let (module, name) = split_frame(lines[0]).unwrap_or_else(|| panic!("{}", run.stdout));
    assert!(
        modules.contains(module) && names.contains(name),
        "{}",
        run.stdout
    );
    assert_eq!(lines[1], format!("  {:<50}", format!("{module}`{name}")));
    assert_eq!(lines[2], format!("  {module:<50}"));
}

#[test]
fn stack_sizes_must_be_positive_constants() {
    let run = dtrace(&["-n", "BEGIN { stack(0); }"]);
    assert_ne!(run.status, 0);
    assert!(
        run.stderr
            .contains("stack( ) argument #1 must be a non-zero positive integer constant"),
        "{}",
        run.stderr
    );
    let run = dtrace(&["-n", "BEGIN { ustack(-1); }"]);
    assert_ne!(run.status, 0);
}

#[test]
fn stack_depths_in_a_syscall_probe() {
    let exe = program("depth");
    let run = dtrace(&[
        "-q",
        "-n",
        "syscall::getppid:entry /pid == $target/ { printf(\"%d %d\\n\", stackdepth >= 1, ustackdepth >= 3); }",
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_ok(&run);
    // DTrace ends its output with a blank line.
    assert_eq!(run.stdout, "1 1\n\n");
}

/// A default `ustack()` runs down to libc's frame below `main` (Oracle's default of 100
/// frames), and that frame is named although Debian's libc is stripped: its symbol table
/// comes from the separate debug file of libc6-dbg (found by build ID), which `.ci/run`
/// installs.
#[test]
fn ustack_reaches_libc_with_its_separate_debug_symbols() {
    assert!(
        std::path::Path::new("/usr/lib/debug/.build-id").is_dir(),
        "libc6-dbg is not installed (.ci/run installs it)"
    );
    let exe = program("debugfile");
    let run = ustack_at_getppid(&exe);
    let user: Vec<&str> = frames(&run.stdout)
        .into_iter()
        .filter(|f| !f.starts_with("vmlinux`"))
        .collect();
    let main = user
        .iter()
        .position(|f| f.starts_with("stackprog`main+0x"))
        .unwrap_or_else(|| panic!("no main frame:\n{}", run.stdout));
    let below = user.get(main + 1).copied().unwrap_or_default();
    assert!(
        below.starts_with("libc.so.6`__libc_start_call_main+0x"),
        "the frame below main is {below:?}:\n{}",
        run.stdout
    );
}

/// `ustack()` at each of `exe`'s `getppid()` calls, quietly; the run must succeed.
fn ustack_at_getppid(exe: &std::path::Path) -> Run {
    let run = dtrace(&[
        "-q",
        "-n",
        "syscall::getppid:entry /pid == $target/ { ustack(); }",
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_ok(&run);
    run
}

/// A stripped program's functions are named from its MiniDebugInfo (`.gnu_debugdata`, the
/// xz-compressed symbol table Fedora, RHEL and Oracle Linux keep in their binaries).
#[test]
fn ustack_names_functions_from_mini_debuginfo() {
    let exe = program("minidebuginfo");
    common::strip_to_mini_debuginfo(
        exe.parent().unwrap(),
        "stackprog",
        &["main", "f1", "f2", "leaf"],
    );
    let run = ustack_at_getppid(&exe);
    let user: Vec<&str> = frames(&run.stdout)
        .into_iter()
        .filter(|f| f.starts_with("stackprog`"))
        .collect();
    for f in ["f2", "f1", "main"] {
        assert!(
            user.iter()
                .any(|u| u.starts_with(&format!("stackprog`{f}+0x"))),
            "no {f} frame:\n{}",
            run.stdout
        );
    }
}

/// `maxframes` caps every stack and the depth `ustackdepth` counts, silently, as in DTrace.
#[test]
fn maxframes_caps_stacks_and_depths() {
    let exe = program("maxframes");
    let run = dtrace(&[
        "-q",
        "-x",
        "maxframes=2",
        "-n",
        "syscall::getppid:entry /pid == $target/ { printf(\"%d\", ustackdepth); ustack(50); }",
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_ok(&run);
    let user: Vec<&str> = frames(&run.stdout);
    assert_eq!(user.len(), 2, "{}", run.stdout);
    assert!(
        user[0].starts_with("stackprog`f2+0x") && user[1].starts_with("stackprog`f1+0x"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.starts_with("2\n"), "{:?}", run.stdout);
}

/// At a function's entry `ucaller` is the return address on top of the stack: the function
/// has not saved a frame pointer (and `leaf` saves none), so the frame-pointer walk would
/// skip its caller.
#[test]
fn ucaller_at_pid_entry_is_the_calling_function() {
    let exe = program("ucaller");
    let run = dtrace(&[
        "-q",
        "-n",
        "pid$target:a.out:leaf:entry { @[ufunc(ucaller)] = count(); }",
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_ok(&run);
    assert_eq!(
        run.stdout, "\n  stackprog`f1                                                      1\n",
        "{}",
        run.stdout
    );
}

/// `name`'s offset in `exe` from the start of the mapping that holds it: its link-time
/// address less its loadable segment's page-aligned start (`nm`, `readelf -l`).
fn mapping_offset(exe: &std::path::Path, name: &str) -> u64 {
    let run = |cmd: &str, args: &[&str]| {
        let out = std::process::Command::new(cmd)
            .args(args)
            .arg(exe)
            .output()
            .expect(cmd);
        String::from_utf8(out.stdout).unwrap()
    };
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap();
    let nm = run("nm", &[]);
    let value = nm
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 3 && f[2] == name).then(|| hex(f[0]))
        })
        .expect("symbol in nm");
    let segments = run("readelf", &["-lW"]);
    segments
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.first() != Some(&"LOAD") {
                return None;
            }
            let (vaddr, memsz) = (hex(f[2]), hex(f[5]));
            (value >= vaddr && value < vaddr + memsz).then(|| value - (vaddr & !0xfff))
        })
        .expect("segment of the symbol")
}

#[test]
fn noresolve_shows_user_addresses_as_mapping_offsets() {
    let exe = program("noresolve");
    // f2's argument is the address of f1; f2's entry is the stack's first frame.
    let run = dtrace(&[
        "-x",
        "noresolve",
        "-q",
        "-n",
        r#"pid$target:a.out:f2:entry {
            printf("[%A]\n", arg0 + 1);
            trace(uaddr(arg0 + 1)); trace(usym(arg0 + 2)); trace(umod(arg0));
            ustack(2);
        }"#,
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_ok(&run);
    let (f1, f2) = (mapping_offset(&exe, "f1"), mapping_offset(&exe, "f2"));
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[..3],
        [
            format!("[stackprog:0x{:x}]", f1 + 1).as_str(),
            format!(
                "  {:<50}  {:<50}  {:<50}",
                format!("stackprog:0x{:x}", f1 + 1),
                format!("stackprog:0x{f1:x}"),
                "stackprog"
            )
            .as_str(),
            format!("              stackprog:0x{f2:x}").as_str(),
        ],
        "{}",
        run.stdout
    );
    assert!(
        lines[3].starts_with("              stackprog:0x"),
        "{}",
        run.stdout
    );
}

#[test]
fn umod_is_one_row_per_object_however_many_segments() {
    // `far_fn` is in a second executable segment of its own (a second mapping).
    let dir = common::scratch("stacks", "segments");
    let exe = common::build_c(
        &dir,
        "segprog",
        r#"
#include <time.h>
__attribute__((noinline)) int near_fn(int x) { return x + 1; }
__attribute__((noinline, section(".fartext"))) int far_fn(int x) { return x * 2; }
int main(void) {
    int r = near_fn(1) + far_fn(2);
    struct timespec ts = {0, 300 * 1000 * 1000};
    nanosleep(&ts, 0);
    return r == 5 ? 0 : 1;
}
"#,
        &["-O0", "-Wl,--section-start=.fartext=0x400000"],
    );
    let run = dtrace(&[
        "-q",
        "-n",
        "pid$target:a.out:near_fn:entry, pid$target:a.out:far_fn:entry {
            @[umod(uregs[R_PC])] = count(); }",
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_ok(&run);
    assert_eq!(
        run.stdout,
        format!("\n  {:<50} {:>16}\n", "segprog", 2),
        "{}",
        run.stdout
    );
}

#[test]
fn stackindent_sets_the_indentation_of_every_stack() {
    // stack() and ustack() records and stack keys of aggregations, printed with printa()
    // and at exit; setopt() changes it while tracing, as DTrace allows.
    let exe = program("indent");
    let run = dtrace(&[
        "-q",
        "-x",
        "stackindent=3",
        "-n",
        "syscall::getppid:entry /pid == $target/ {
             printf(\"records\"); stack(); ustack(); @a[ustack()] = count(); @b[stack()] = count();
             printa(@a); setopt(\"stackindent\", \"7\"); printf(\"exit\"); }",
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_ok(&run);
    let frame_indents = |part: &str| -> Vec<usize> {
        part.lines()
            .filter(|l| l.contains('`'))
            .map(|l| l.len() - l.trim_start().len())
            .collect()
    };
    let (records, at_exit) = run.stdout.split_once("exit").expect("both parts");
    let indents = frame_indents(records);
    assert!(indents.len() >= 6, "{}", run.stdout);
    assert!(
        indents.iter().all(|&n| n == 3),
        "{indents:?}\n{}",
        run.stdout
    );
    let indents = frame_indents(at_exit);
    assert!(indents.len() >= 3, "{}", run.stdout);
    assert!(
        indents.iter().all(|&n| n == 7),
        "{indents:?}\n{}",
        run.stdout
    );
}

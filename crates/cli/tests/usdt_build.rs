//! C programs built the DTrace way: `dtrace -h` writes the header, gcc compiles, `dtrace -G`
//! writes the link's object (and rewrites `__dtrace_*` calls in the program's objects),
//! gcc links, and the probes are traced on the real kernel: is-enabled probes flipping,
//! translated arguments, typed `args[]`, static functions, sites in leaf functions that
//! keep data in the red zone, 32-bit programs (and objects of both kinds refused together).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::Run;

fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run a build step");
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn dtrace_cmd(dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dtrace"));
    c.current_dir(dir);
    c
}

fn gcc(dir: &Path, args: &[&str]) {
    run(Command::new("gcc").current_dir(dir).args(args));
}

/// Build `test` in a scratch directory from `prov.d` and `test.c` the DTrace way.
fn build(name: &str, provider: &str, source: &str, cflags: &[&str]) -> PathBuf {
    common::require_root();
    let dir = common::scratch("usdt-build", name);
    std::fs::write(dir.join("prov.d"), provider).unwrap();
    std::fs::write(dir.join("test.c"), source).unwrap();
    run(dtrace_cmd(&dir).args(["-h", "-s", "prov.d"]));
    assert!(dir.join("prov.h").is_file(), "-h wrote no prov.h");
    let mut compile = vec!["-c", "test.c"];
    compile.extend_from_slice(cflags);
    gcc(&dir, &compile);
    run(dtrace_cmd(&dir).args(["-G", "-s", "prov.d", "test.o"]));
    assert!(dir.join("prov.o").is_file(), "-G wrote no prov.o");
    let mut link = vec!["-o", "test", "test.o", "prov.o"];
    link.extend_from_slice(cflags);
    gcc(&dir, &link);
    dir.join("test")
}

fn assert_ok(r: &Run) {
    assert_eq!(r.status, 0, "stdout:\n{}\nstderr:\n{}", r.stdout, r.stderr);
}

const PROVIDER: &str = "provider test_prov {
	probe go();
	probe place(int i, char *s) : (char *s, int i, int i);
	probe total(long);
};
";

const PROGRAM: &str = r#"#include <stdio.h>
#include "prov.h"

static long sum;

static void place(int i) { TEST_PROV_PLACE(i, "x"); }

int main(void) {
	int enabled = 0;
	for (int i = 0; i < 5; i++) {
		if (TEST_PROV_GO_ENABLED()) {
			enabled++;
			TEST_PROV_GO();
		}
		place(i);
		sum += i;
	}
	TEST_PROV_TOTAL(sum);
	printf("enabled %d\n", enabled);
	return 0;
}
"#;

#[test]
fn header_and_link_build_a_program_whose_is_enabled_probes_flip() {
    let exe = build("flip", PROVIDER, PROGRAM, &["-O2"]);
    is_enabled_probes_flip(&exe);
}

#[test]
fn a_32bit_program_is_built_and_traced_the_same_way() {
    // -G sees 32-bit objects and writes a 32-bit provider object; the notes' addresses
    // are 4 bytes; the arguments are read from the i386 registers and stack.
    let exe = build("flip32", PROVIDER, PROGRAM, &["-O2", "-m32"]);
    let file = run(Command::new("file").arg(&exe));
    assert!(file.contains("ELF 32-bit"), "{file}");
    is_enabled_probes_flip(&exe);
}

#[test]
fn link_refuses_to_mix_32_and_64bit_objects() {
    common::require_root();
    let dir = common::scratch("usdt-build", "mixed");
    std::fs::write(dir.join("prov.d"), PROVIDER).unwrap();
    std::fs::write(dir.join("test.c"), PROGRAM).unwrap();
    run(dtrace_cmd(&dir).args(["-h", "-s", "prov.d"]));
    gcc(&dir, &["-c", "-o", "test64.o", "test.c"]);
    gcc(&dir, &["-m32", "-c", "-o", "test32.o", "test.c"]);
    let out = dtrace_cmd(&dir)
        .args(["-G", "-s", "prov.d", "test32.o", "test64.o"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "dtrace: can't mix 32-bit and 64-bit object files\n"
    );
    assert!(!dir.join("prov.o").exists());
}

/// `exe` (built from [`PROGRAM`]) untraced and traced: its is-enabled probe flips and its
/// probes' arguments, translated and typed, are right.
fn is_enabled_probes_flip(exe: &Path) {
    // Untraced, the semaphore is 0 and the is-enabled branch never runs.
    let out = run(&mut Command::new(exe));
    assert_eq!(out, "enabled 0\n");
    let r = common::dtrace(&[
        "-q",
        "-c",
        exe.to_str().unwrap(),
        "-n",
        "test_prov$target:::go { @go = count(); }
         test_prov$target:::place { printf(\"place %d %d %d\\n\", arg1, args[1], args[2]); }
         test_prov$target:::total { printf(\"total %d %s\\n\", args[0], probefunc); }",
    ]);
    assert_ok(&r);
    assert!(r.stdout.contains("enabled 5\n"), "{}", r.stdout);
    for i in 0..5 {
        assert!(
            r.stdout.contains(&format!("place {i} {i} {i}\n")),
            "{}",
            r.stdout
        );
    }
    assert!(r.stdout.contains("total 10 main\n"), "{}", r.stdout);
    assert!(r.stdout.contains("        5\n"), "{}", r.stdout);
}

#[test]
fn declared_types_are_listed() {
    let exe = build("types", PROVIDER, PROGRAM, &["-O2"]);
    let r = common::dtrace(&[
        "-lv",
        "-c",
        exe.to_str().unwrap(),
        "-n",
        "test_prov$target:::place",
    ]);
    assert_ok(&r);
    assert!(
        r.stdout
            .contains("args[0]: char *\n\t\targs[1]: int\n\t\targs[2]: int\n"),
        "{}",
        r.stdout
    );
}

/// Calls of DTrace's probe functions, as `DTRACE_PROBEn` of DTrace's own `sys/sdt.h`
/// emits them, in `main` and in a static function, with arguments in registers and on
/// the stack.
const CALLS: &str = r#"#include <stdio.h>
extern void __dtrace_test_prov___two(unsigned long, unsigned long);
extern void __dtrace_test_prov___eight(unsigned long, unsigned long, unsigned long,
    unsigned long, unsigned long, unsigned long, unsigned long, unsigned long);

static void __attribute__((noinline, noclone)) foo(int k) {
	__dtrace_test_prov___two(k, 20);
	printf("foo %d\n", k);
}

int main(void) {
	__dtrace_test_prov___two(1, 2);
	foo(3);
	__dtrace_test_prov___eight(11, 12, 13, 14, 15, 16, 17, 18);
	return 0;
}
"#;

const CALLS_PROVIDER: &str = "provider test_prov {
	probe two(int, uintptr_t);
	probe eight(long, long, long, long, long, long, long, long);
};
";

#[test]
fn dtrace_probe_calls_are_rewritten_into_sites() {
    common::require_root();
    let dir = common::scratch("usdt-build", "calls");
    std::fs::write(dir.join("prov.d"), CALLS_PROVIDER).unwrap();
    std::fs::write(dir.join("test.c"), CALLS).unwrap();
    gcc(&dir, &["-O2", "-c", "test.c"]);
    run(dtrace_cmd(&dir).args(["-G", "-s", "prov.d", "test.o"]));
    let before = std::fs::metadata(dir.join("test.o"))
        .unwrap()
        .modified()
        .unwrap();
    // A second -G finds nothing left to rewrite and leaves the object alone.
    run(dtrace_cmd(&dir).args(["-G", "-s", "prov.d", "test.o"]));
    let after = std::fs::metadata(dir.join("test.o"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(before, after, "a second -G rewrote the object");
    gcc(&dir, &["-o", "test", "test.o", "prov.o"]);
    let exe = dir.join("test");
    assert_eq!(run(&mut Command::new(&exe)), "foo 3\n");
    let r = common::dtrace(&[
        "-q",
        "-c",
        exe.to_str().unwrap(),
        "-n",
        "test_prov$target:::two { printf(\"two %s %d %d\\n\", probefunc, arg0, arg1); }
         test_prov$target:::eight { printf(\"eight %d %d %d %d\\n\", arg0, arg5, arg6, arg7); }",
    ]);
    assert_ok(&r);
    for line in [
        "two main 1 2\n",
        "two foo 3 20\n",
        "foo 3\n",
        "eight 11 16 17 18\n",
    ] {
        assert!(r.stdout.contains(line), "{line:?} in {}", r.stdout);
    }
}

#[test]
fn probe_of_an_undeclared_provider_is_refused() {
    common::require_root();
    let dir = common::scratch("usdt-build", "undeclared");
    std::fs::write(dir.join("prov.d"), "provider other { probe x(); };").unwrap();
    std::fs::write(dir.join("test.c"), CALLS).unwrap();
    gcc(&dir, &["-c", "test.c"]);
    let out = dtrace_cmd(&dir)
        .args(["-G", "-s", "prov.d", "test.o"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no such provider test_prov"), "{err}");
}

/// A leaf function keeping twelve `volatile long`s in the red zone, with a site in the
/// middle: the header's site must keep it from using the red zone, since an optimized
/// uprobe on the 5-byte nop pushes below the stack pointer.
const LEAF: &str = r#"#include <stdio.h>
#include "prov.h"

__attribute__((noinline)) long leaf(long a) {
	volatile long buf[12];
	for (int i = 0; i < 12; i++)
		buf[i] = a + i;
	TEST_PROV_GO();
	long s = 0;
	for (int i = 0; i < 12; i++)
		s += buf[i];
	return s;
}

int main(void) {
	long bad = 0;
	for (long k = 0; k < 20000; k++)
		if (leaf(k) != 12 * k + 66)
			bad++;
	printf("bad %ld\n", bad);
	return 0;
}
"#;

#[test]
fn five_byte_sites_in_leaf_functions_leave_the_red_zone_alone() {
    for opt in ["-O0", "-O2"] {
        let exe = build(&format!("leaf{opt}"), PROVIDER, LEAF, &[opt]);
        // The site is a 5-byte nop (the optimized-uprobe form).
        let dis = run(Command::new("objdump").args(["-d", exe.to_str().unwrap()]));
        let leaf = dis.split("<leaf>:").nth(1).expect("leaf disassembled");
        let leaf = leaf.split("\n\n").next().unwrap();
        assert!(leaf.contains("0f 1f 44 00 00"), "{leaf}");
        let r = common::dtrace(&[
            "-q",
            "-c",
            exe.to_str().unwrap(),
            "-n",
            "test_prov$target:::go { @ = count(); }",
        ]);
        assert_ok(&r);
        assert!(r.stdout.contains("bad 0\n"), "{opt}: {}", r.stdout);
        assert!(r.stdout.contains("20000\n"), "{opt}: {}", r.stdout);
    }
}

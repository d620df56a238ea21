//! `pid` probes on the functions a stripped object's symbol table lost: a C program built
//! here with a `static` function, stripped of `.symtab`, traced by that function's name
//! once its separate debug file is installed under `/usr/lib/debug/.build-id` and, built
//! again, with the function in its MiniDebugInfo (`.gnu_debugdata`); and glibc's static
//! `_int_malloc`, whose name only Debian's `libc6-dbg` (which CI installs) holds.

mod common;

use std::path::{Path, PathBuf};

use common::{run_tool, Run};

/// `tally` is static, so `strip` removes its only symbol; the large `malloc`s are served by
/// `_int_malloc` (past the tcache, below the mmap threshold).
const PROGRAM: &str = r#"
#include <stdlib.h>
static volatile long sink;
__attribute__((noinline)) static void tally(long n) { sink += n; }
int main(void) {
    for (long i = 0; i < 7; i++)
        tally(i);
    for (int i = 0; i < 5; i++) {
        char *p = malloc(77777);
        p[0] = 1;
        sink += p[0];
        free(p);
    }
    return 0;
}
"#;

/// Counts `tally`'s entries, by the name the probe has.
const TALLY: &str = "pid$target:a.out:tally:entry { @[probefunc] = count(); }";

fn program(name: &str, flags: &[&str]) -> PathBuf {
    common::build_c(
        &common::scratch("strippedpid", name),
        "tallyprog",
        PROGRAM,
        flags,
    )
}

/// Strip `exe` of its symbol table, checking `tally` is gone from it.
fn strip(exe: &Path) {
    run_tool(
        exe.parent().unwrap(),
        "strip",
        &["--strip-all", exe.to_str().unwrap()],
    );
    assert_stripped(exe);
}

/// `tally` is in none of `exe`'s symbol tables.
fn assert_stripped(exe: &Path) {
    let symbols = run_tool(
        exe.parent().unwrap(),
        "readelf",
        &["-sW", exe.to_str().unwrap()],
    );
    assert!(!symbols.contains("tally"), "not stripped:\n{symbols}");
}

/// The run counted `tally`'s seven calls.
fn assert_tallied(run: &Run) {
    assert_eq!(
        common::row(&run.stdout, &["tally"]),
        Some(7),
        "{}",
        run.stdout
    );
}

/// The run failed as naming a function the module does not have fails.
fn assert_unmatched(run: &Run) {
    assert_eq!(run.status, 1, "{}", run.stdout);
    assert!(
        run.stderr
            .contains("failed to lookup 'tally' in module 'a.out'"),
        "stderr: {}",
        run.stderr
    );
}

fn trace(exe: &Path, script: &str) -> Run {
    common::trace(exe.to_str().unwrap(), script)
}

/// Without its debug file a stripped program's static function has no probe; with it
/// installed (found by build ID), the function is traced by its name, every call.
#[test]
fn a_static_function_is_traced_from_the_debug_file() {
    // A build ID of this run's own, so the file under /usr/lib/debug is this test's.
    let id = format!("{:08x}{:08x}", std::process::id(), 0x7a11_u32);
    let exe = program("buildid", &["-O1", &format!("-Wl,--build-id=0x{id}")]);
    let dir = exe.parent().unwrap();
    let debug = dir.join("tallyprog.debug");
    run_tool(
        dir,
        "objcopy",
        &["--only-keep-debug", "tallyprog", "tallyprog.debug"],
    );
    strip(&exe);
    let e = exe.to_str().unwrap();
    assert_unmatched(&common::dtrace(&["-q", "-c", e, "-n", TALLY]));

    let build_ids = PathBuf::from(format!("/usr/lib/debug/.build-id/{}", &id[..2]));
    std::fs::create_dir_all(&build_ids).expect("create the build-id directory");
    let installed = build_ids.join(format!("{}.debug", &id[2..]));
    std::fs::copy(&debug, &installed).expect("install the debug file");
    let listed = common::dtrace(&["-l", "-n", "pid$target:a.out:tally:entry", "-c", e]);
    let run = common::dtrace(&["-q", "-c", e, "-n", TALLY]);
    let _ = std::fs::remove_file(&installed);
    let probes: Vec<String> = listed
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().skip(2).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(probes, ["tallyprog tally entry"], "{}", listed.stdout);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_tallied(&run);
}

/// A debug file found by `.gnu_debuglink` that belongs to another build of the program is
/// not used: its addresses are not the program's.
#[test]
fn a_debug_file_of_another_build_is_not_used() {
    let exe = program("stale", &["-O1", "-Wl,--build-id=0x1111111111111111"]);
    let other = common::build_c(
        exe.parent().unwrap(),
        "otherprog",
        &PROGRAM.replace("sink += n;", "sink += n * 3 + 1;"),
        &["-O1", "-Wl,--build-id=0x2222222222222222"],
    );
    let dir = exe.parent().unwrap();
    run_tool(
        dir,
        "objcopy",
        &["--only-keep-debug", "otherprog", "tallyprog.debug"],
    );
    std::fs::remove_file(&other).unwrap();
    strip(&exe);
    run_tool(
        dir,
        "objcopy",
        &["--add-gnu-debuglink=tallyprog.debug", "tallyprog"],
    );
    let e = exe.to_str().unwrap();
    assert_unmatched(&common::dtrace(&["-q", "-c", e, "-n", TALLY]));

    // The same with the program's own debug file traces it.
    let own = program("own", &["-O1", "-Wl,--build-id=0x1111111111111111"]);
    let dir = own.parent().unwrap();
    run_tool(
        dir,
        "objcopy",
        &["--only-keep-debug", "tallyprog", "tallyprog.debug"],
    );
    strip(&own);
    run_tool(
        dir,
        "objcopy",
        &["--add-gnu-debuglink=tallyprog.debug", "tallyprog"],
    );
    assert_tallied(&trace(&own, TALLY));
}

/// A stripped program whose static functions are kept in its MiniDebugInfo (as Fedora, RHEL
/// and Oracle Linux build theirs) has `pid` probes on them.
#[test]
fn a_static_function_is_traced_from_mini_debuginfo() {
    let exe = program("minidebuginfo", &["-O1"]);
    common::strip_to_mini_debuginfo(exe.parent().unwrap(), "tallyprog", &["tally"]);
    assert_stripped(&exe);
    assert_tallied(&trace(&exe, TALLY));
}

/// glibc's allocator proper, static in a stripped libc: named by `libc6-dbg`'s debug file.
#[test]
fn int_malloc_of_a_stripped_libc_fires() {
    let exe = program("intmalloc", &["-O1"]);
    let run = trace(
        &exe,
        "pid$target:libc.so.6:_int_malloc:entry /arg1 == 77777/ { @[probemod, probefunc] = count(); }",
    );
    assert_eq!(
        common::row(&run.stdout, &["libc.so.6", "_int_malloc"]),
        Some(5),
        "{}",
        run.stdout
    );
}

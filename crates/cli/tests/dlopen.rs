//! Libraries loaded with `dlopen` after tracing began: their USDT and `pid` probes are
//! attached when the dynamic linker has mapped them and before their code runs, in a
//! `-c` target (descriptions naming no module, and those that match nothing at start, with
//! `-Z`) and in every process of a glob; counts are exact.

mod common;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

/// One watching dtrace at a time (see `exec_watch`: a process two sessions hold is let go
/// by the first to finish).
static WATCHING: Mutex<()> = Mutex::new(());

const LIBRARY: &str = r#"
#include <sys/sdt.h>
__attribute__((noinline)) int plug_work(int x) { __asm__ volatile(""); return x + 1; }
int plug(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) {
        DTRACE_PROBE1(PROV, hit, i);
        s += plug_work(i);
    }
    return s;
}
"#;

/// `main LIB N`: dlopens LIB (the library is not a `DT_NEEDED` one), calls `plug(N)`.
const MAIN: &str = r#"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) { printf("dlopen: %s\n", dlerror()); return 1; }
    int (*plug)(int) = (int (*)(int))dlsym(h, "plug");
    printf("sum %d\n", plug(atoi(argv[2])));
    return 0;
}
"#;

/// `main LIB N` as [`MAIN`], with a `plug_work` of its own that it calls once first.
const MAIN_WITH_PLUG_WORK: &str = r#"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) int plug_work(int x) { __asm__ volatile(""); return x; }
int main(int argc, char **argv) {
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) { printf("dlopen: %s\n", dlerror()); return 1; }
    int (*plug)(int) = (int (*)(int))dlsym(h, "plug");
    printf("sum %d\n", plug(atoi(argv[2])) + plug_work(0));
    return 0;
}
"#;

/// The library (named `lib{name}.so`, provider `name`) and the main program.
fn build(name: &str) -> (PathBuf, PathBuf) {
    build_with(name, MAIN)
}

/// The library (named `lib{name}.so`, provider `name`) and the main program `main`.
fn build_with(name: &str, main: &str) -> (PathBuf, PathBuf) {
    common::require_root();
    let dir = common::scratch("dlopen", name);
    let src = dir.join("plug.c");
    std::fs::write(&src, LIBRARY).unwrap();
    let lib = dir.join(format!("lib{name}.so"));
    let out = Command::new("gcc")
        .args(["-O1", "-shared", "-fPIC", &format!("-DPROV={name}"), "-o"])
        .arg(&lib)
        .arg(&src)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let main = common::build_c(&dir, "main", main, &["-O1", "-ldl"]);
    (main, lib)
}

fn counts(stdout: &str) -> Vec<u64> {
    stdout
        .lines()
        .filter_map(|l| l.trim().parse().ok())
        .collect()
}

#[test]
fn dlopened_library_probes_in_the_target() {
    let _one = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    let (main, lib) = build("dltarget");
    let cmd = format!("{} {} 7", main.display(), lib.display());
    let run = common::dtrace(&[
        "-Zq",
        "-n",
        "dltarget$target:::hit { @h = count(); @s = sum(arg0); }
         pid$target:libdltarget.so:plug_work:entry { @w = count(); }",
        "-c",
        &cmd,
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("sum 28\n"), "{}", run.stdout);
    // 7 hits, arg0 summing to 0+1+...+6 = 21, 7 calls.
    let mut c = counts(&run.stdout);
    c.sort();
    assert_eq!(c, [7, 7, 21], "{}", run.stdout);
}

#[test]
fn a_provider_glob_naming_the_target_follows_its_dlopens() {
    // `p*d$target` is the `pid` provider and the library's USDT provider `plugd` in the
    // target; with no module named, the library loaded later is searched too, without -Z.
    let _one = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    let (main, lib) = build("plugd");
    let cmd = format!("{} {} 5", main.display(), lib.display());
    let run = common::dtrace(&[
        "-q",
        "-n",
        "p*d$target:::hit { @[probeprov, probemod, probefunc] = count(); }
         p*d$target::plug_work:entry { @[probeprov, probemod, probefunc] = count(); }
         END { printa(\"%s %s %s %@u\\n\", @); }",
        "-c",
        &cmd,
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let pid = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("plugd")?.split_whitespace().next())
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        run.stdout
            .lines()
            .filter(|l| l.contains("libplugd.so"))
            .collect::<Vec<_>>(),
        [
            format!("pid{pid} libplugd.so plug_work 5"),
            format!("plugd{pid} libplugd.so plug 5")
        ],
        "{}",
        run.stdout
    );
}

#[test]
fn a_pid_description_with_no_module_follows_the_targets_dlopens() {
    // As DTrace's pid provider: `pid$target::plug_work:entry` matches the main program's
    // `plug_work` at start and the library's once it is loaded.
    let _one = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    let (main, lib) = build_with("dlplain", MAIN_WITH_PLUG_WORK);
    let cmd = format!("{} {} 4", main.display(), lib.display());
    let run = common::dtrace(&[
        "-q",
        "-n",
        "pid$target::plug_work:entry { @[probemod, probefunc] = count(); }
         END { printa(\"%s %s %@u\\n\", @); }",
        "-c",
        &cmd,
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let mut lines: Vec<&str> = run.stdout.lines().filter(|l| !l.is_empty()).collect();
    lines.sort();
    assert_eq!(
        lines,
        ["libdlplain.so plug_work 4", "main plug_work 1", "sum 10"],
        "{}",
        run.stdout
    );
}

#[test]
fn dlopened_library_probes_in_a_globs_processes() {
    let _one = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    let (main, lib) = build("dlglob");
    let script = main.with_extension("sh");
    std::fs::write(
        &script,
        format!(
            "i=0\nwhile [ $i -lt 50 ]; do {} {} 3 >/dev/null; i=$((i+1)); done\n",
            main.display(),
            lib.display()
        ),
    )
    .unwrap();
    let cmd = format!("/bin/sh {}", script.display());
    let run = common::dtrace(&[
        "-q",
        "-n",
        "dlglob*:::hit { @h = count(); }
         pid*:libdlglob.so:plug_work:entry { @w = count(); }",
        "-c",
        &cmd,
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(counts(&run.stdout), [150, 150], "{}", run.stdout);
}

#[test]
fn a_glob_found_in_a_dlopened_library_names_each_function_by_its_own_id() {
    // `plug*` matches the library's `plug` and `plug_work`, attached together once it is
    // loaded: each firing's line shows its function's own probe id, the one `id` reads.
    let _one = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    let (main, lib) = build("dlids");
    let cmd = format!("{} {} 2", main.display(), lib.display());
    let run = common::dtrace(&[
        "-Z",
        "-n",
        "pid$target:libdlids.so:plug*:entry { trace(id); }",
        "-c",
        &cmd,
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    // CPU, ID, FUNCTION:NAME, then the traced id.
    let firings: Vec<(&str, &str, &str)> = run
        .stdout
        .lines()
        .filter_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [_, id, probe, traced] if probe.ends_with(":entry") => Some((id, probe, traced)),
            _ => None,
        })
        .collect();
    assert_eq!(firings.len(), 3, "{}", run.stdout);
    for (id, _, traced) in &firings {
        assert_eq!(id, traced, "{}", run.stdout);
    }
    let id_of = |probe: &str| {
        firings
            .iter()
            .find(|f| f.1 == probe)
            .map(|f| f.0)
            .unwrap_or_else(|| panic!("no {probe} in {}", run.stdout))
    };
    assert_ne!(
        id_of("plug:entry"),
        id_of("plug_work:entry"),
        "{}",
        run.stdout
    );
}

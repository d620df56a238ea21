//! A Rust program whose probes are declared in a DTrace provider file
//! (`crates/usdt-example/src/myapp.d`, turned into macros by `dtrace-usdt-build`): its
//! probes fire with their arguments, the declared types (a translated argument list
//! included) type `args[]` and show in `-lv`, and is-enabled follows tracing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The example program, built with cargo.
fn example() -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "-q", "-p", "dtrace-usdt-example"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo");
    assert!(status.success(), "building dtrace-usdt-example failed");
    let exe = Path::new(env!("CARGO_BIN_EXE_dtrace"))
        .parent()
        .unwrap()
        .join("dtrace-usdt-example");
    assert!(exe.exists(), "{}", exe.display());
    exe
}

#[test]
fn probes_declared_in_a_provider_file() {
    common::require_root();
    let exe = example();
    let untraced = Command::new(&exe).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&untraced.stdout),
        "start not traced\n"
    );
    let cmd = format!("{} 4", exe.display());
    let run = common::dtrace(&[
        "-q",
        "-n",
        "myapp$target:::start { printf(\"start %d %s\\n\", args[0], copyinstr(arg1)); }
         myapp$target:::item-done { printf(\"done %d %d\\n\", args[0], args[1]); }
         myapp$target:::stop { printf(\"stop\\n\"); }",
        "-c",
        &cmd,
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let mut expected = String::new();
    for i in 0..4 {
        expected.push_str(&format!("start {i} item-{i}\ndone {} {i}\n", 100 * i));
    }
    expected.push_str("stop\nstart traced\n");
    // The program's line and dtrace's may come in either order.
    let sorted = |s: &str| {
        let mut l: Vec<String> = s
            .lines()
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        l.sort();
        l
    };
    assert_eq!(sorted(&run.stdout), sorted(&expected), "{}", run.stderr);
}

#[test]
fn declared_types_are_listed() {
    common::require_root();
    let exe = example();
    let run = common::dtrace(&[
        "-lv",
        "-c",
        exe.to_str().unwrap(),
        "-n",
        "myapp$target:::item-done",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("args[0]: uint64_t\n\t\targs[1]: int\n"),
        "{}",
        run.stdout
    );
}

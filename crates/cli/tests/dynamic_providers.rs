//! Providers defined at run time (`dtrace-dynprov`), from Rust and from C: dtrace sees
//! their probes like any USDT probe, by pid (`-l -p`, `PROV$target`) and by glob, whether
//! the provider was created before dtrace started or after; counts and arguments exact.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// One watching dtrace at a time (see `exec_watch`).
static WATCHING: Mutex<()> = Mutex::new(());

fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_dtrace"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn cargo_build(args: &[&str]) {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .arg("build")
        .arg("-q")
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("run cargo");
    assert!(status.success(), "cargo build {args:?} failed");
}

/// The Rust example (`crates/dynprov/examples/dynamic.rs`).
fn rust_example() -> PathBuf {
    cargo_build(&["-p", "dtrace-dynprov", "--example", "dynamic"]);
    target_dir().join("examples/dynamic")
}

/// The C example (`crates/dynprov/examples/dynprov.c`) linked with `libdtrace_dynprov.so`.
fn c_example() -> PathBuf {
    cargo_build(&["-p", "dtrace-dynprov"]);
    let lib = target_dir();
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dynprov");
    let dir = common::scratch("dynprov", "c");
    let exe = dir.join("dynprov");
    let out = Command::new("gcc")
        .arg("-O2")
        .arg(format!("-I{}", crate_dir.join("include").display()))
        .arg("-o")
        .arg(&exe)
        .arg(crate_dir.join("examples/dynprov.c"))
        .arg(format!("-L{}", lib.display()))
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-ldtrace_dynprov")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    exe
}

#[test]
fn rust_provider_created_after_dtrace_started() {
    common::require_root();
    let _one = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    let exe = rust_example();
    let cmd = format!("{} dynlater 5", exe.display());
    let run = common::dtrace(&[
        "-q",
        "-n",
        "dynlater*:::fire { @[probemod, probefunc] = count(); @s = sum(args[0]); }
         dynlater*:::done { @d = sum(arg0); }",
        "-c",
        &cmd,
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("enabled 5\n"), "{}", run.stdout);
    let words: Vec<&str> = run.stdout.split_whitespace().collect();
    // fire: 5 times, sum of i = 10; done(5).
    assert!(
        words.windows(3).any(|w| w == ["dynlater.so", "fire", "5"]),
        "{}",
        run.stdout
    );
    let mut numbers: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| w.parse::<u64>().is_ok())
        .collect();
    numbers.sort();
    assert_eq!(numbers, ["10", "5", "5", "5"], "{}", run.stdout);
}

#[test]
fn rust_provider_created_before_dtrace_started() {
    common::require_root();
    let exe = rust_example();
    let mut child = Command::new(&exe)
        .args(["dynbefore", "3", "wait"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line, "ready\n");
    let pid = child.id().to_string();
    let list = common::dtrace(&["-l", "-p", &pid]);
    assert!(
        list.stdout
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()[1..]
                == [
                    format!("dynbefore{pid}").as_str(),
                    "dynbefore.so",
                    "fire",
                    "fire"
                ]),
        "{}",
        list.stdout
    );
    let tracer = common::spawn(&[
        "-q",
        "-n",
        &format!("dynbefore{pid}:::fire {{ printf(\"%d %s\\n\", args[0], copyinstr(args[1])); }}"),
        "-p",
        &pid,
    ]);
    // Let the program go once dtrace has surely attached (it fires only while enabled, so
    // an early start would show as fewer than 3).
    std::thread::sleep(std::time::Duration::from_secs(2));
    child.stdin.take().unwrap().write_all(b"\n").unwrap();
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    child.wait().unwrap();
    assert_eq!(rest, "enabled 3\n");
    let run = common::finish(tracer, "dtrace -p");
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("0 item-0\n1 item-1\n2 item-2\n"),
        "{}",
        run.stdout
    );
}

#[test]
fn c_provider_traced_by_glob_and_by_pid() {
    common::require_root();
    let _one = WATCHING.lock().unwrap_or_else(|e| e.into_inner());
    let exe = c_example();
    let cmd = format!("{} dync 6", exe.display());
    let run = common::dtrace(&[
        "-q",
        "-n",
        "dync*:::tick { @n = count(); @s = sum(arg0); } dync*:::tick /arg0 == 5/ { printf(\"%s\\n\", copyinstr(arg1)); }",
        "-c",
        &cmd,
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("label\n"), "{}", run.stdout);
    assert!(run.stdout.contains("fired 6\n"), "{}", run.stdout);
    let numbers: Vec<&str> = run
        .stdout
        .split_whitespace()
        .filter(|w| w.parse::<u64>().is_ok())
        .collect();
    assert_eq!(numbers, ["6", "6", "15"], "{}", run.stdout);
    // Untraced: never enabled.
    let out = Command::new(&exe).args(["dync", "6"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "fired 0\n");
}

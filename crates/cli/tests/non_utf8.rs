//! Bytes that are not UTF-8 (D strings are bytes): a `system()` command or a `freopen()`
//! path made from a format with such bytes has those bytes unchanged, and a command-line
//! argument that is not UTF-8 is refused in words, never a panic.

mod common;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

#[test]
fn system_gets_the_format_bytes() {
    let run = common::dtrace(&[
        "-qw",
        "-n",
        r#"BEGIN { system("printf '\xc0\250%%s' '%s' | od -An -tx1", "\351"); exit(0); }"#,
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "c0 a8 e9");
}

#[test]
fn freopen_opens_the_path_of_the_format_bytes() {
    let dir = common::scratch("non-utf8", "freopen");
    let program = format!(
        r#"BEGIN {{ freopen("{}/caf\351.txt"); printf("there\n"); freopen(""); printf("back\n"); exit(0); }}"#,
        dir.display()
    );
    let run = common::dtrace(&["-qw", "-n", &program]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "back\n\n");
    let file = dir.join(OsStr::from_bytes(b"caf\xe9.txt"));
    assert_eq!(
        std::fs::read(file).expect("the file freopen() made"),
        b"there\n"
    );
}

#[test]
fn an_argument_that_is_not_utf8_is_refused() {
    common::require_root();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dtrace"))
        .arg("-n")
        .arg(OsStr::from_bytes(b"BEGIN { printf(\"\xe9\"); }"))
        .output()
        .expect("run dtrace");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "dtrace: argument is not UTF-8 text: BEGIN { printf(\"\u{fffd}\"); }\n"
    );
}

//! Keys sized by what they can hold change no output: each script runs as written (its
//! string keys in slots of their bound, probe names kept as numbers) and again with a
//! clause that never fires storing a string of any length in the same key positions
//! (which makes every one of them a `strsize` slot, the layout before sizing); the outputs
//! must be the same bytes, and are checked against what DTrace prints.
//!
//! Cases: literals at and around every 8-byte slot edge and at and over `strsize`, in
//! default and `printa` layouts, sorted by key, and as JSON lines; `execname` exactly at
//! its bound (a 15-character command) and over a smaller `strsize`; `strjoin` and
//! `copyinstr(p, n)` keys; a system call group's `probefunc` and `probename` with the same
//! names from single probes; associative arrays read with keys of other bounds.

mod common;

use common::{build_c, dtrace, scratch};

/// Declares `wide_`, a string of any length, for [`widened`].
const WIDE: &str = "string wide_;\n";

/// Run `dtrace args... -n script` as written and with `widen` (clauses that never fire,
/// using [`WIDE`]'s `wide_` as keys) appended; the outputs must be the same. Returns it.
fn same_output(args: &[&str], script: &str, widen: &str) -> String {
    let run = |text: &str| {
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["-n", text]);
        let r = dtrace(&all);
        assert_eq!(
            r.status, 0,
            "{text}\nstdout: {}\nstderr: {}",
            r.stdout, r.stderr
        );
        without_cpu(&r.stdout)
    };
    let sized = run(&format!("{WIDE}{script}"));
    let wide = run(&format!("{WIDE}{script}\n{widen}"));
    assert_eq!(sized, wide, "sized keys changed the output of:\n{script}");
    sized
}

/// `text` with the CPU of JSON objects masked (END fires on any CPU).
fn without_cpu(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\"cpu\":") {
        let (head, tail) = rest.split_at(at + 6);
        out.push_str(head);
        out.push('_');
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

/// Literal keys of 0 to 40 characters under `strsize=16`: slots of 8, 16 and 24 bytes,
/// strings exactly at `strsize` and over it (cut at 16, as DTrace cuts them).
const LITERALS: &str = r#"
BEGIN {
    @a[""] = count(); @a["a"] = count(); @a["abcdefg"] = count();
    @a["abcdefgh"] = count(); @a["abcdefghijklmno"] = count();
    @a["abcdefghijklmnop"] = count(); @a["abcdefghijklmnopq"] = count();
    @a["abcdefghijklmnopqrstuvwxyzabcdefghijklmn"] = count();
    @b["zz", 7, "x"] = sum(3); @b["abcdefgh", 7, "xy"] = sum(4); @b["abcdefgh", 8, "xy"] = sum(5);
    @b["abcdefgh", 7, "xy"] = sum(1);
    printa("%s|%@d\n", @a);
    printa("%-10s %d %s %@d\n", @b);
    printa(@b);
    exit(0);
}
"#;

const LITERALS_WIDE: &str = r#"
END /0/ { @a[wide_] = count(); @b[wide_, 1, wide_] = sum(1); }
"#;

#[test]
fn literal_keys_at_every_bound() {
    let out = same_output(&["-q", "-x", "strsize=16"], LITERALS, LITERALS_WIDE);
    let expected = "\
|1
a|1
abcdefg|1
abcdefgh|1
abcdefghijklmno|1
abcdefghijklmnop|3
zz         7 x 3
abcdefgh   7 xy 5
abcdefgh   8 xy 5

  zz                                                        7  x                                                                 3
  abcdefgh                                                  7  xy                                                                5
  abcdefgh                                                  8  xy                                                                5

";
    assert_eq!(out, expected);
    let sorted = same_output(
        &[
            "-q",
            "-x",
            "strsize=16",
            "-x",
            "aggsortkey",
            "-x",
            "aggsortrev",
        ],
        LITERALS,
        LITERALS_WIDE,
    );
    assert!(
        sorted.starts_with("abcdefghijklmnop|3\nabcdefghijklmno|1\nabcdefgh|1\n"),
        "{sorted}"
    );
    let json = same_output(
        &["-q", "-x", "strsize=16", "-x", "oformat=json"],
        LITERALS,
        LITERALS_WIDE,
    );
    assert!(
        json.contains(r#"{"keys":["abcdefghijklmnop"],"value":3}"#),
        "{json}"
    );
}

/// A program whose command name is 15 characters, `execname`'s longest: it calls
/// `getppid` 3 times, `getpgid` twice and `getsid` once, and opens /dev/null.
const PROGRAM: &str = r#"
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(void)
{
    for (int i = 0; i < 3; i++)
        syscall(SYS_getppid);
    syscall(SYS_getpgid, 0);
    syscall(SYS_getpgid, 0);
    syscall(SYS_getsid, 0);
    /* On the stack, so the page is there when the probe reads it. */
    char path[16];
    memcpy(path, "/dev/null", 10);
    return open(path, O_RDONLY) < 0;
}
"#;

/// The path of [`PROGRAM`], built as `fifteen_chars_x`.
fn program(name: &str) -> String {
    let dir = scratch("keysize", name);
    build_c(&dir, "fifteen_chars_x", PROGRAM, &["-O2"])
        .display()
        .to_string()
}

#[test]
fn execname_at_and_over_its_bound() {
    let cmd = program("execname");
    let script = r#"
syscall::getppid:entry /pid == $target/ {
    @[execname, 1, strjoin(execname, "!")] = count();
    @n[execname] = count();
}
syscall::getsid:entry /pid == $target/ { @n["fifteen_chars_x"] = count(); }
END { printa("%s %d %s %@d\n", @); printa("[%s] %@d\n", @n); }
"#;
    let widen = "END /0/ { @[wide_, 0, wide_] = count(); @n[wide_] = count(); }";
    let out = same_output(&["-q", "-c", &cmd], script, widen);
    assert_eq!(
        out,
        "fifteen_chars_x 1 fifteen_chars_x! 3\n[fifteen_chars_x] 4\n\n"
    );
    // Over a smaller strsize, execname is cut at it.
    let out = same_output(&["-q", "-x", "strsize=8", "-c", &cmd], script, widen);
    assert_eq!(out, "fifteen_ 1 fifteen_ 3\n[fifteen_] 4\n\n");
}

#[test]
fn copyinstr_keys_cut_at_their_size() {
    let cmd = program("copyinstr");
    let script = r#"
syscall::openat:entry /pid == $target && copyinstr(arg1) == "/dev/null"/ {
    @[copyinstr(arg1, 6), copyinstr(arg1)] = count();
}
END { printa("%s %s %@d\n", @); }
"#;
    let widen = "END /0/ { @[wide_, wide_] = count(); }";
    let out = same_output(&["-q", "-c", &cmd], script, widen);
    assert_eq!(out, "/dev/ /dev/null 1\n\n");
}

/// `probefunc` in a system call group (kept as the call's number) and the same names from
/// single probes and from `profile`'s fixed names, in one aggregation.
const NAMES: &str = r#"
syscall:::entry, syscall:::return
/pid == $target && (probefunc == "getppid" || probefunc == "getpgid" || probefunc == "getsid")/
{
    @[probefunc, probename] = count();
}
syscall::getppid:entry /pid == $target/ { @[probefunc, probename] = count(); }
syscall::getsid:return /pid == $target/ { @[probefunc, probename] = count(); @p[probeprov, probemod] = count(); }
END { printa("%s:%s %@d\n", @); printa(@p); }
"#;

const NAMES_WIDE: &str = "END /0/ { @[wide_, wide_] = count(); @p[wide_, wide_] = count(); }";

#[test]
fn probe_names_kept_as_numbers_print_as_names() {
    let cmd = program("names");
    let out = same_output(&["-q", "-c", &cmd], NAMES, NAMES_WIDE);
    assert_eq!(
        out,
        "\
getsid:entry 1
getpgid:entry 2
getpgid:return 2
getsid:return 2
getppid:return 3
getppid:entry 6

  syscall                                             vmlinux                                                           1

"
    );
    let sorted = same_output(&["-q", "-x", "aggsortkey", "-c", &cmd], NAMES, NAMES_WIDE);
    assert!(
        sorted.starts_with(
            "getpgid:entry 2\ngetpgid:return 2\ngetppid:entry 6\ngetppid:return 3\ngetsid:entry 1\ngetsid:return 2\n"
        ),
        "{sorted}"
    );
    let json = same_output(&["-q", "-x", "oformat=json", "-c", &cmd], NAMES, NAMES_WIDE);
    assert!(
        json.contains(r#"{"keys":["getppid","entry"],"value":6}"#),
        "{json}"
    );
}

/// An associative array keyed by `probefunc` only: in the group program the key is the
/// call's number, in the single probe the number of the name "getppid" in the same table;
/// both must name one element.
#[test]
fn associative_arrays_keyed_by_probe_names() {
    let cmd = program("assoc-names");
    let script = r#"
syscall:::entry /pid == $target/ { calls[probefunc]++; }
syscall::getppid:return /pid == $target/ { printf("%s %d\n", probefunc, calls[probefunc]); }
syscall::getsid:return /pid == $target/ { printf("%s %d\n", probefunc, calls[probefunc]); }
"#;
    let widen = "END /0/ { calls[wide_] = 0; }";
    let out = same_output(&["-q", "-c", &cmd], script, widen);
    assert_eq!(out, "getppid 1\ngetppid 2\ngetppid 3\ngetsid 1\n\n");
}

#[test]
fn associative_arrays_meet_keys_of_other_bounds() {
    let script = r#"
BEGIN {
    a[execname, "k"] = 1;
    a["abcdefghijklmnopqrstuvwxyz", "k"] = 2;
    n[probename] = 5;
    printf("%d %d %d %d\n", a["dtrace", "k"], a[strjoin("dtr", "ace"), "k"],
        a["abcdefghijklmnopqrstuvwxyz", "k"], n["BEGIN"]);
    exit(0);
}
"#;
    let widen = "END /0/ { a[wide_, wide_] = 3; n[wide_] = 4; }";
    let out = same_output(&["-q"], script, widen);
    assert_eq!(out, "1 1 2 5\n\n");
}

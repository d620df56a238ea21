//! Inputs that must neither crash nor exhaust `dtrace`, and failures it must not hide:
//! deep operator chains, huge printf widths, unbounded script files, failed writes, missing
//! privileges, undefined macro arguments in probe descriptions, CRLF scripts, buffer sizes it
//! cannot honour, and programs that enable nothing (issue 16). Each test runs the real
//! binary against the running kernel.

mod common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{command, dtrace, finish, scratch, Run};

/// Write `text` to `name` in a fresh scratch directory for test `test`; its path.
fn script(test: &str, name: &str, text: &str) -> PathBuf {
    let path = scratch("robust", test).join(name);
    std::fs::write(&path, text).expect("write the script");
    path
}

/// `dtrace` ended by itself (no signal, no Rust panic or stack overflow) with `status`.
fn assert_clean_exit(run: &Run, status: i32, what: &str) {
    assert!(
        !run.stderr.contains("panicked") && !run.stderr.contains("overflowed its stack"),
        "{what}: dtrace crashed:\n{}",
        run.stderr
    );
    assert_eq!(run.status, status, "{what}: stderr:\n{}", run.stderr);
}

/// `terms` ones joined by `op`.
fn chain(op: &str, terms: usize) -> String {
    vec!["1"; terms].join(op)
}

#[test]
fn long_operator_chains_compile() {
    for (op, value) in [("+", "10000"), ("*", "1"), (",", "1"), ("&&", "1")] {
        let text = format!(
            "BEGIN {{ x = ({}); printf(\"%d\\n\", x); exit(0); }}",
            chain(op, 10_000)
        );
        let path = script("chains", "chain.d", &text);
        let run = dtrace(&["-qs", path.to_str().unwrap()]);
        assert_clean_exit(&run, 0, op);
        assert_eq!(run.stdout, format!("{value}\n\n"), "{op}");
    }
}

#[test]
fn long_chains_that_do_not_type_check_are_d_errors() {
    // A D error naming the script, never a crash.
    let text = format!(
        "BEGIN {{ x = \"a\"{}; exit(0); }}",
        " == \"a\"".repeat(9_999)
    );
    let path = script("chains-refused", "chain.d", &text);
    let run = dtrace(&["-qs", path.to_str().unwrap()]);
    assert_clean_exit(&run, 1, &text[..40]);
    assert!(
        run.stderr.starts_with(&format!(
            "dtrace: failed to compile script {}: ",
            path.display()
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn deep_member_chains_load() {
    // 5,000 `->` deep (60 MiB of stack unoptimised, far past the main thread's 8; typing
    // takes time quadratic in it): 80,000 instructions, whose far jumps are relaxed so that
    // the verifier's own rewriting cannot overflow them. The chain ends at the idle task,
    // its own parent.
    let text = format!(
        "BEGIN {{ x = curthread{}->pid; printf(\"%d\\n\", x); exit(0); }}",
        "->real_parent".repeat(5_000)
    );
    let path = script("chains-deep", "chain.d", &text);
    let run = dtrace(&["-qs", path.to_str().unwrap()]);
    assert_clean_exit(&run, 0, "->real_parent chain");
    assert_eq!(run.stdout, "0\n\n");
}

#[test]
fn chains_deeper_than_the_compiler_holds_are_refused_by_the_parser() {
    for op in ["+", "*", "&&", ","] {
        let text = format!("BEGIN {{ x = ({}); }}", chain(op, 20_001));
        let path = script("too-deep", "deep.d", &text);
        let run = dtrace(&["-qs", path.to_str().unwrap()]);
        assert_clean_exit(&run, 1, op);
        assert_eq!(
            run.stderr,
            format!(
                "dtrace: failed to compile script {}: line 1: expression too deeply nested (more than 20000 levels)\n",
                path.display()
            )
        );
    }
    let text = format!(
        "BEGIN {{ x = curthread{}->pid; }}",
        "->real_parent".repeat(20_000)
    );
    let path = script("too-deep-members", "deep.d", &text);
    let run = dtrace(&["-qs", path.to_str().unwrap()]);
    assert_clean_exit(&run, 1, "->");
    assert!(
        run.stderr
            .ends_with("expression too deeply nested (more than 20000 levels)\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn printf_widths_are_bounded() {
    for (format, conversion) in [
        ("%99999999999999999999d", "width"),
        ("%4294967297d", "width"),
        ("%.4294967297d", "precision"),
    ] {
        let program = format!("BEGIN {{ printf(\"{format}\\n\", 1); exit(0); }}");
        let run = dtrace(&["-qn", &program]);
        assert_clean_exit(&run, 1, format);
        assert_eq!(
            run.stderr,
            format!(
                "dtrace: invalid probe specifier {program}: format conversion #1 has a {conversion} larger than 16777216\n"
            )
        );
    }
    // A `*` width from the program beyond the bound gets the bound: 16 MiB of padding.
    let run = dtrace(&[
        "-qn",
        "BEGIN { w = 2147483647; printf(\"%*d|\\n\", w, 7); printf(\"%-*d|\\n\", w, 7); exit(0); }",
    ]);
    assert_clean_exit(&run, 0, "*");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "two lines and DTrace's closing blank line");
    assert_eq!(lines[0].len(), (1 << 24) + 1);
    assert!(lines[0].ends_with(" 7|"));
    assert!(lines[1].starts_with("7 "));
}

/// A small tmpfs mounted for one test, unmounted when dropped.
struct SmallFs(PathBuf);

impl SmallFs {
    fn mount(test: &str, size: &str) -> SmallFs {
        let dir = scratch("robust", test);
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .expect("run mount");
        assert!(status.success(), "mount a tmpfs on {}", dir.display());
        SmallFs(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

const NO_SPACE: &str = "dtrace: failed to write output: No space left on device\n";

#[test]
fn failed_writes_are_errors() {
    let begin = "BEGIN { printf(\"hello\\n\"); exit(0); }";
    // -o /dev/full, text and JSON lines.
    for format in ["text", "json"] {
        let oformat = format!("oformat={format}");
        let run = dtrace(&["-q", "-x", &oformat, "-o", "/dev/full", "-n", begin]);
        assert_clean_exit(&run, 1, format);
        assert!(run.stderr.ends_with(NO_SPACE), "{format}: {}", run.stderr);
    }
    // Standard output on /dev/full, tracing or compiling only.
    for extra in [None, Some("-e")] {
        let mut args = vec!["-qn", begin];
        args.extend(extra);
        let mut cmd = command(&args);
        cmd.stdout(std::fs::File::create("/dev/full").expect("open /dev/full"));
        let run = finish(cmd.spawn().expect("start dtrace"), "stdout on /dev/full");
        // -e writes nothing but the (empty) output's flush.
        let status = if extra.is_some() { 0 } else { 1 };
        assert_clean_exit(&run, status, &format!("{args:?}"));
        assert_eq!(
            run.stderr.ends_with(NO_SPACE),
            status == 1,
            "{}",
            run.stderr
        );
    }
    // A listing.
    let mut cmd = command(&["-l", "-n", "BEGIN"]);
    cmd.stdout(std::fs::File::create("/dev/full").expect("open /dev/full"));
    let run = finish(cmd.spawn().expect("start dtrace"), "-l on /dev/full");
    assert_clean_exit(&run, 1, "-l");
    assert_eq!(run.stderr, NO_SPACE);
}

#[test]
fn a_full_filesystem_stops_tracing_with_an_error() {
    let fs = SmallFs::mount("full-fs", "64k");
    let out = fs.path().join("trace.out");
    let run = dtrace(&[
        "-q",
        "-o",
        out.to_str().unwrap(),
        "-n",
        "tick-1ms { printf(\"%s\\n\", \"0123456789012345678901234567890123456789\"); }",
    ]);
    assert_clean_exit(&run, 1, "full tmpfs");
    assert_eq!(run.stderr, NO_SPACE);
    let written = std::fs::metadata(&out).expect("the output file").len();
    assert_eq!(written, 64 << 10, "the file system was filled");
}

#[test]
fn a_closed_pipe_ends_dtrace_by_sigpipe() {
    // As DTrace: SIGPIPE has its default action, so `dtrace ... | head` ends quietly.
    let mut child = common::spawn(&["-qn", "tick-1ms { printf(\"line\\n\"); }"]);
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut first = String::new();
    lines.read_line(&mut first).expect("read a line");
    assert_eq!(first, "line\n");
    drop(lines);
    let run = finish(child, "a closed pipe");
    assert!(
        !run.stderr.contains("failed to write"),
        "not an output error: {}",
        run.stderr
    );
    assert_eq!(run.status, 128 + libc::SIGPIPE, "ended by SIGPIPE");
    // `dtrace -l | head -1`, too.
    let mut child = command(&["-l"]).spawn().expect("start dtrace -l");
    let mut lines = BufReader::new(child.stdout.take().expect("piped stdout"));
    lines.read_line(&mut first).expect("read the heading");
    drop(lines);
    let status = child.wait().expect("wait for dtrace -l");
    assert_eq!(status.signal(), Some(libc::SIGPIPE));
}

/// A copy of `dtrace` anyone may run, in a fresh scratch directory.
fn dtrace_for_anyone(test: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("robust", test);
    let exe = dir.join("dtrace");
    std::fs::copy(env!("CARGO_BIN_EXE_dtrace"), &exe).expect("copy dtrace");
    for path in [&dir, &exe] {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
            .expect("make it runnable by anyone");
    }
    exe
}

/// Run `exe` with `args` as user and group `nobody` (65534), with no capabilities but
/// `caps` (`+bpf,+perfmon`: ambient, so they survive the exec).
fn as_nobody(exe: &Path, caps: Option<&str>, args: &[&str]) -> Run {
    common::require_root();
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
    if let Some(caps) = caps {
        cmd.arg(format!("--inh-caps={caps}"))
            .arg(format!("--ambient-caps={caps}"));
    }
    cmd.arg(exe)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().expect("run setpriv (util-linux)");
    finish(child, &format!("as nobody: {args:?}"))
}

const NEEDED: &str = "dtrace: this needs root, or CAP_BPF and CAP_PERFMON (and read access to tracefs for syscall and sdt probes)\n";

/// Whether user `nobody` may read tracefs's list of events here (it is root's alone on
/// most systems).
fn nobody_reads_tracefs() -> bool {
    Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "test",
            "-r",
        ])
        .arg("/sys/kernel/tracing/available_events")
        .status()
        .expect("run setpriv")
        .success()
}

const NO_TRACEFS: &str = "the syscall and sdt providers need read access to tracefs (/sys/kernel/tracing/available_events: Permission denied)";

#[test]
fn without_privileges_dtrace_says_what_it_lacks() {
    let exe = dtrace_for_anyone("unprivileged");
    for args in [
        &["-n", "BEGIN { exit(0); }"][..],
        &["-n", "syscall::read:entry"],
        &["-e", "-n", "tick-1s"],
        &["-c", "/bin/true", "-n", "BEGIN"],
    ] {
        let run = as_nobody(&exe, None, args);
        assert_clean_exit(&run, 1, &format!("{args:?}"));
        // Before anything touches the kernel: no "matched" line, no map creation failure.
        assert_eq!(run.stderr, NEEDED, "{args:?}");
        assert_eq!(run.stdout, "");
    }
}

#[test]
fn an_unprivileged_listing_says_which_providers_it_could_not_list() {
    let exe = dtrace_for_anyone("unprivileged-list");
    let run = as_nobody(&exe, None, &["-l"]);
    assert!(run
        .stdout
        .contains("dtrace                                                     BEGIN"));
    assert!(run.stdout.contains(" profile "));
    if nobody_reads_tracefs() {
        assert_clean_exit(&run, 0, "-l");
        assert!(run.stdout.contains(" syscall "));
    } else {
        assert_clean_exit(&run, 1, "-l");
        assert_eq!(
            run.stderr,
            format!("dtrace: could not list every provider: {NO_TRACEFS}\n")
        );
        assert!(!run.stdout.contains(" syscall "));
    }
    // A listing that needs no tracefs is complete.
    let run = as_nobody(&exe, None, &["-l", "-n", "BEGIN"]);
    assert_clean_exit(&run, 0, "-l -n BEGIN");
    assert_eq!(run.stderr, "");
}

#[test]
fn cap_bpf_and_cap_perfmon_suffice_but_tracefs_access_is_named() {
    let exe = dtrace_for_anyone("capabilities");
    let caps = Some("+bpf,+perfmon");
    let run = as_nobody(
        &exe,
        caps,
        &["-qn", "BEGIN { printf(\"traced\\n\"); exit(0); }"],
    );
    assert_clean_exit(&run, 0, "BEGIN with CAP_BPF and CAP_PERFMON");
    assert_eq!(run.stdout, "traced\n\n");
    let program = "syscall::read:entry { exit(0); }";
    let run = as_nobody(&exe, caps, &["-n", program]);
    if nobody_reads_tracefs() {
        assert_clean_exit(&run, 0, program);
    } else {
        assert_clean_exit(&run, 1, program);
        assert_eq!(
            run.stderr,
            format!(
                "dtrace: invalid probe specifier {program}: probe description syscall::read:entry does not match any probes: {NO_TRACEFS}\n"
            )
        );
    }
}

#[test]
fn undefined_macro_arguments_in_probe_descriptions_are_errors() {
    // As Oracle's DTrace: whether or not -x defaultargs is set (it gives 0 and "" to
    // expressions, not to descriptions).
    let program = "syscall::$1:entry { exit(0); }";
    let undefined = |spec: &str, desc: &str| {
        format!(
            "dtrace: invalid probe specifier {spec}: invalid probe description \"{desc}\": Undefined macro variable in probe description\n"
        )
    };
    for extra in [&[][..], &["-x", "defaultargs"]] {
        let mut args = extra.to_vec();
        args.extend(["-n", program]);
        let run = dtrace(&args);
        assert_clean_exit(&run, 1, &format!("{args:?}"));
        assert_eq!(run.stderr, undefined(program, "syscall::$1:entry"));
    }
    for desc in ["syscall::$1:entry", "syscall::$nosuchmacro:entry"] {
        let run = dtrace(&["-l", "-n", desc]);
        assert_clean_exit(&run, 1, desc);
        assert_eq!(run.stderr, undefined(desc, desc));
        assert_eq!(run.stdout, "", "nothing listed");
    }
    // Defined, as $1 or $$1, in part of a field too (the last operand must be used).
    for (desc, operands) in [
        ("syscall::$1:entry", &["getpid"][..]),
        ("syscall::$$1:entry", &["getpid"]),
        ("syscall::get$2:entry", &["getpid", "pid"]),
    ] {
        let mut args = vec!["-l", "-n", desc];
        args.extend(operands);
        let run = dtrace(&args);
        assert_clean_exit(&run, 0, desc);
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert_eq!(lines.len(), 2, "{desc}: {}", run.stdout);
        assert!(lines[1].ends_with(" getpid entry"), "{desc}: {}", lines[1]);
    }
}

#[test]
fn crlf_scripts_run() {
    // Carriage returns are blanks, in control lines too (a CRLF pragma used to set option
    // "quiet\r" and fail with "Invalid option name").
    let text = "#!/usr/sbin/dtrace -s\r\n#pragma D option quiet\r\n\r\nBEGIN\r\n/1/\r\n{\r\n\tprintf(\"%s\\n\", \"crlf\");\r\n\texit(0);\r\n}\r\n";
    let path = script("crlf", "crlf.d", text);
    let run = dtrace(&["-s", path.to_str().unwrap()]);
    assert_clean_exit(&run, 0, "CRLF script");
    assert_eq!(run.stdout, "crlf\n\n");
}

#[test]
fn scripts_are_read_with_a_bound() {
    let run = dtrace(&["-s", "/dev/zero"]);
    assert_clean_exit(&run, 1, "-s /dev/zero");
    assert_eq!(
        run.stderr,
        "dtrace: failed to open /dev/zero: larger than 16 MiB, the most a D script may be\n"
    );
    // Just under the bound is read (and compiled: comments).
    let mut text = "/*".to_string();
    text.push_str(&" ".repeat((16 << 20) - 64));
    text.push_str("*/ BEGIN { exit(0); }\n");
    let path = script("bound", "big.d", &text);
    let run = dtrace(&["-qs", path.to_str().unwrap()]);
    assert_clean_exit(&run, 0, "a 16 MiB script");
    // A library directory's files too.
    let lib = scratch("robust", "big-library");
    let huge = std::fs::File::create(lib.join("zero.d")).expect("a library file");
    huge.set_len(1 << 30).expect("a sparse GiB of zeros");
    let run = dtrace(&["-L", lib.to_str().unwrap(), "-n", "BEGIN { exit(0); }"]);
    assert_clean_exit(&run, 1, "-L with a GiB file");
    assert_eq!(
        run.stderr,
        format!(
            "dtrace: failed to open library {}: larger than 16 MiB, the most a D script may be\n",
            lib.join("zero.d").display()
        )
    );
}

#[test]
fn sizes_that_cannot_be_honoured_are_lowered_aloud_or_refused() {
    let program = "BEGIN { printf(\"traced\\n\"); exit(0); }";
    // bufresize=auto (the default): lowered, and said, as DTrace says it.
    for (option, notice) in [
        ("bufsize=10g", "buffer size lowered to 1g"),
        ("dynvarsize=1g", "dynamic variable size lowered to 64m"),
    ] {
        let run = dtrace(&["-q", "-x", option, "-n", program]);
        assert_clean_exit(&run, 0, option);
        assert_eq!(run.stderr, format!("dtrace: {notice}\n"));
        assert_eq!(run.stdout, "traced\n\n");
    }
    let run = dtrace(&[
        "-q",
        "-x",
        "dynvarsize=1g",
        "-x",
        "quietresize",
        "-n",
        program,
    ]);
    assert_clean_exit(&run, 0, "quietresize");
    assert_eq!(run.stderr, "");
    // bufresize=manual: refused before anything is enabled.
    let run = dtrace(&["-x", "bufsize=10g", "-x", "bufresize=manual", "-n", program]);
    assert_clean_exit(&run, 1, "bufresize=manual");
    assert_eq!(
        run.stderr,
        "dtrace: description 'BEGIN ' matched 1 probe\ndtrace: could not enable tracing: buffer size 10g is more than the largest possible, 1g (bufresize=manual)\n"
    );
    assert_eq!(run.stdout, "");
}

/// The ring buffer is made from the command line's `bufsize` while the script compiles; a
/// script's `#pragma D option bufsize` still decides its size, larger or smaller: forty
/// records of BEGIN (each with a string) fit in 64k, not in 4k (the kernel drops the rest).
#[test]
fn a_scripts_bufsize_pragma_sizes_the_ring_made_while_it_compiles() {
    let clauses: String = (1..=40)
        .map(|i| format!("BEGIN {{ printf(\"%d %s\\n\", {i}, \"abc\"); }}\n"))
        .collect();
    let lines: String = (1..=40).map(|i| format!("{i} abc\n")).collect();
    let larger = script(
        "ring-pragma",
        "larger.d",
        &format!("#pragma D option bufsize=64k\n{clauses}BEGIN {{ exit(0); }}\n"),
    );
    let run = dtrace(&["-q", "-x", "bufsize=4k", "-s", larger.to_str().unwrap()]);
    assert_clean_exit(&run, 0, "a larger bufsize pragma");
    assert_eq!(run.stderr, "");
    assert_eq!(run.stdout, format!("{lines}\n"));
    let smaller = script(
        "ring-pragma",
        "smaller.d",
        &format!("#pragma D option bufsize=4k\n{clauses}BEGIN {{ exit(0); }}\n"),
    );
    let run = dtrace(&["-q", "-s", smaller.to_str().unwrap()]);
    assert_clean_exit(&run, 0, "a smaller bufsize pragma");
    assert!(run.stderr.contains(" drops on CPU "), "{}", run.stderr);
    assert!(!run.stdout.contains("40 abc"), "{}", run.stdout);
}

#[test]
fn a_program_enabling_nothing_is_an_error_unless_z() {
    // No clauses at all.
    let path = script(
        "empty",
        "empty.d",
        "/* nothing */\ninline int unused = 1;\n",
    );
    let run = dtrace(&["-s", path.to_str().unwrap()]);
    assert_clean_exit(&run, 1, "an empty script");
    assert_eq!(
        run.stderr,
        format!(
            "dtrace: script '{}' matched 0 probes\ndtrace: no probes matched\n",
            path.display()
        )
    );
    // -e only compiles: nothing to enable is no error there.
    let run = dtrace(&["-e", "-s", path.to_str().unwrap()]);
    assert_clean_exit(&run, 0, "-e");
    // With -Z, DTrace traces on: until the -c command ends...
    let run = dtrace(&["-Z", "-n", "nosuch:::probe", "-c", "/bin/true"]);
    assert_clean_exit(&run, 0, "-Z -c");
    assert_eq!(
        run.stderr,
        "dtrace: description 'nosuch:::probe' matched 0 probes\n"
    );
    // ... or a signal.
    let mut child = common::spawn(&["-Z", "-n", "nosuch:::probe"]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert!(
        child.try_wait().expect("poll dtrace").is_none(),
        "-Z with nothing enabled traces until stopped"
    );
    // SAFETY: kill sends SIGINT to the dtrace process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let run = finish(child, "-Z, interrupted");
    assert_clean_exit(&run, 0, "-Z, interrupted");
}

#[test]
fn large_strsize_runs_or_is_a_d_error() {
    // 2k runs; larger ones may be refused by code generation (string temporaries overflow
    // its 16-bit scratch offsets), in words: the verifier must never be the one to say no.
    let programs = [
        ("BEGIN { exit(0); }", ""),
        (
            "BEGIN { s = strjoin(execname, \"x\"); printf(\"%s\\n\", s); exit(0); }",
            "dtracex\n",
        ),
    ];
    for strsize in ["2k", "4k", "8k", "1m"] {
        for (program, output) in programs {
            let option = format!("strsize={strsize}");
            let run = dtrace(&["-q", "-x", &option, "-n", program]);
            let what = format!("{option} {program}");
            if run.status == 0 || strsize == "2k" {
                assert_eq!(run.status, 0, "{what}: {}", run.stderr);
                assert_eq!(run.stdout, format!("{output}\n"), "{what}");
            } else {
                assert_clean_exit(&run, 1, &what);
                let prefix = format!("dtrace: invalid probe specifier {program}: ");
                assert!(run.stderr.starts_with(&prefix), "{what}: {}", run.stderr);
                assert_eq!(run.stderr.lines().count(), 1, "{what}: {}", run.stderr);
                assert!(!run.stderr.contains("verifier"), "{what}: {}", run.stderr);
            }
        }
    }
}

#[test]
fn a_clause_too_long_for_one_program_is_a_d_error() {
    // 300,000 statements: more instructions than the kernel loads in one program. The
    // compiler says so itself (the verifier used to refuse it with E2BIG).
    let text: String = (0..300_000)
        .map(|i| format!("x{} = {i};\n", i % 50))
        .collect();
    let path = script(
        "toolong",
        "long.d",
        &format!("BEGIN\n{{\n{text}exit(0);\n}}\n"),
    );
    let run = dtrace(&["-e", "-s", path.to_str().unwrap()]);
    assert_clean_exit(&run, 1, "300,000 statements");
    assert!(
        run.stderr.contains("needs a program of")
            && run.stderr.contains("the kernel loads at most 1000000"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("verifier"), "{}", run.stderr);
}

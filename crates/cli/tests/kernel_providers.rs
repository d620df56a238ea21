//! Kernel providers on the live kernel: `syscall` (entry arguments, return values, `errno`,
//! exact counts), `sdt` tracepoints (typed arguments, strings from the record), `copyinstr`
//! (user strings, and the ERROR message for a bad address while the script goes on), `fbt`
//! (one clear sentence where the kernel refuses fentry), and `dtrace -l`.
//!
//! Every event is made by a process the test starts with `-c`, and every clause filters on
//! `$target` (or the target's pid), so other activity on the machine cannot change the
//! results, and nothing depends on timing: `-c` holds the command until every probe is
//! attached, and tracing ends when it exits. Every run has a timeout.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::{dtrace, Run};

/// A scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    common::scratch("kprov", name)
}

/// A C program: `getppid N` calls getppid(2) N times (through syscall(2), so no library
/// can cache it), then exits.
fn getppid_program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        common::build_c(
            &scratch("getppid"),
            "getppid",
            "#include <stdlib.h>\n#include <unistd.h>\n#include <sys/syscall.h>\n\
             int main(int argc, char **argv) {\n\
               int n = argc > 1 ? atoi(argv[1]) : 1;\n\
               for (int i = 0; i < n; i++) syscall(SYS_getppid);\n\
               return 0;\n}\n",
            &["-O0"],
        )
    })
}

/// The pid a `BEGIN { printf("target=%d\n", $target); }` clause printed.
fn target_pid(stdout: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("target="))
        .unwrap_or_else(|| panic!("no target pid in {stdout:?}"))
        .to_string()
}

fn assert_ok(run: &Run) {
    assert_eq!(
        run.status, 0,
        "status {}\nstdout:\n{}\nstderr:\n{}",
        run.status, run.stdout, run.stderr
    );
}

#[test]
fn openat_entry_shows_the_path_the_target_opened() {
    let dir = scratch("openat");
    let file = dir.join("known-file.txt");
    std::fs::write(&file, "hello\n").unwrap();
    let file = file.to_str().unwrap();
    let run = dtrace(&[
        "-q",
        "-n",
        r#"syscall::openat:entry /pid == $target/ { printf("path=%s dfd=%d\n", copyinstr(arg1), args[0]); }"#,
        "-c",
        &format!("/bin/cat {file}"),
    ]);
    assert_ok(&run);
    // args[0] is the int dfd: AT_FDCWD prints as -100 whatever the upper register bits.
    let expected = format!("path={file} dfd=-100");
    assert!(
        run.stdout.lines().any(|l| l == expected),
        "no {expected:?} in:\n{}",
        run.stdout
    );
    assert!(run.stdout.contains("hello"), "cat's own output is missing");
}

#[test]
fn syscall_return_values_and_errno() {
    let run = dtrace(&[
        "-q",
        "-n",
        r#"syscall::openat:return /pid == $target/ { printf("ret %d %d errno %d\n", arg0, arg1, errno); }
           syscall::openat:entry /pid == $target/ { printf("entry errno %d\n", errno); }"#,
        "-c",
        "/bin/cat /nonexistent-dtrace-test-file",
    ]);
    assert_ok(&run);
    assert!(
        run.stdout.lines().any(|l| l == "ret -2 -2 errno 2"),
        "no failing openat (ENOENT) in:\n{}",
        run.stdout
    );
    for line in run.stdout.lines().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("ret ") {
            let f: Vec<i64> = rest.split(' ').filter_map(|w| w.parse().ok()).collect();
            assert_eq!(f[0], f[1], "arg0 and arg1 differ: {line}");
            let errno = if f[0] < 0 { -f[0] } else { 0 };
            assert_eq!(f[2], errno, "errno does not match the return value: {line}");
        } else {
            assert_eq!(line, "entry errno 0", "errno is not 0 at entry");
        }
    }
}

#[test]
fn getppid_is_counted_exactly() {
    let exe = getppid_program().to_str().unwrap();
    let run = dtrace(&[
        "-q",
        "-n",
        r#"syscall::getppid:entry /pid == $target/ { @calls = count(); }
           syscall::getppid:* /pid == $target/ { @both[probename] = count(); }
           END { printa("calls %@d\n", @calls); printa("%s %@d\n", @both); }"#,
        "-c",
        &format!("{exe} 37"),
    ]);
    assert_ok(&run);
    assert!(run.stdout.contains("calls 37\n"), "{}", run.stdout);
    assert!(run.stdout.contains("entry 37\n"), "{}", run.stdout);
    assert!(run.stdout.contains("return 37\n"), "{}", run.stdout);
}

#[test]
fn tracepoints_have_typed_arguments() {
    let run = dtrace(&[
        "-q",
        "-n",
        r#"BEGIN { printf("target=%d\n", $target); }
           sdt:sched::sched_process_exec /args[1] == $target/ {
               printf("exec %s %d %d %d\n", args[0], args[1], arg1, args[2]);
           }
           sdt:sched::sched_process_exit /pid == $target/ {
               printf("exit [%s] %d %s\n", args[0], args[1], probename);
           }"#,
        "-c",
        &common::exec_true_script(),
    ]);
    assert_ok(&run);
    let pid = target_pid(&run.stdout);
    let exec = format!("exec /bin/true {pid} {pid} {pid}\n");
    assert!(
        run.stdout.contains(&exec),
        "no {exec:?} in:\n{}",
        run.stdout
    );
    let exit = format!("exit [true] {pid} sched_process_exit\n");
    assert!(
        run.stdout.contains(&exit),
        "no {exit:?} in:\n{}",
        run.stdout
    );
}

#[test]
fn copyinstr_of_a_bad_address_is_an_error_and_the_script_goes_on() {
    let exe = getppid_program().to_str().unwrap();
    let run = dtrace(&[
        "-q",
        "-n",
        r#"syscall::getppid:entry /pid == $target/ { printf("%s\n", copyinstr(8)); printf("not reached\n"); }
           syscall::getppid:entry /pid == $target/ { printf("continued\n"); }"#,
        "-c",
        &format!("{exe} 3"),
    ]);
    assert_ok(&run);
    assert_eq!(
        run.stdout.matches("continued\n").count(),
        3,
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("not reached"), "{}", run.stdout);
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("dtrace: error in dt_clause_0 "))
        .collect();
    assert_eq!(errors.len(), 3, "{}", run.stderr);
    assert!(
        errors[0].contains("syscall:vmlinux:getppid:entry): invalid address (0x8) at BPF pc "),
        "{}",
        errors[0]
    );
}

/// As DTrace, `copyinstr(addr, size)` copies at most `size` bytes, the NUL included.
#[test]
fn copyinstr_stops_at_maxlen() {
    let run = dtrace(&[
        "-q",
        "-n",
        r#"syscall::openat:entry /pid == $target/ { printf("[%s]\n", copyinstr(arg1, 4)); }"#,
        "-c",
        "/bin/cat /nonexistent-dtrace-maxlen",
    ]);
    assert_ok(&run);
    assert!(run.stdout.contains("[/no]\n"), "{}", run.stdout);
}

#[test]
fn fbt_fails_with_one_clear_sentence() {
    let run = dtrace(&[
        "-n",
        "fbt::vfs_read:entry { trace(arg0); }",
        "-n",
        "BEGIN { exit(0); }",
    ]);
    match dtrace_probes::fbt::kernel_refusal() {
        Some(why) => {
            assert_eq!(run.status, 1, "{}", run.stderr);
            let failures: Vec<&str> = run
                .stderr
                .lines()
                .filter(|l| l.contains("fbt:vmlinux:vfs_read:entry"))
                .collect();
            assert_eq!(failures.len(), 1, "{}", run.stderr);
            assert!(
                failures[0].contains("this kernel refuses the fentry/fexit BPF programs")
                    && failures[0].contains(&why),
                "{}",
                failures[0]
            );
            assert!(!run.stderr.contains("verifier"), "{}", run.stderr);
        }
        None => assert_ok(&run),
    }
}

#[test]
fn listing_shows_kernel_probes() {
    let run = dtrace(&["-l"]);
    assert_ok(&run);
    let lines: Vec<Vec<&str>> = run
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(lines.len() > 1000, "only {} probes listed", lines.len());
    let has = |fields: &[&str]| lines.iter().any(|l| l.get(1..) == Some(fields));
    assert!(has(&["syscall", "vmlinux", "openat", "entry"]));
    assert!(has(&["syscall", "vmlinux", "openat", "return"]));
    assert!(has(&["sdt", "sched", "sched_process_exec"]));
    let ids: std::collections::HashSet<&str> = lines.iter().skip(1).map(|l| l[0]).collect();
    assert_eq!(ids.len(), lines.len() - 1, "probe ids are not unique");

    let run = dtrace(&["-l", "-n", "syscall::read*:entry"]);
    assert_ok(&run);
    let funcs: Vec<&str> = run
        .stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().nth(3))
        .collect();
    assert!(
        funcs.contains(&"read") && funcs.contains(&"readv"),
        "{funcs:?}"
    );
    assert!(funcs.iter().all(|f| f.starts_with("read")), "{funcs:?}");
}

#[test]
fn descriptions_matching_nothing_are_errors() {
    let run = dtrace(&["-n", "syscall::no_such_call:entry { trace(arg0); }"]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr
            .contains("probe description syscall::no_such_call:entry does not match any probes"),
        "{}",
        run.stderr
    );
    let run = dtrace(&["-n", "sdt:sched::no_such_event { trace(arg0); }"]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr.contains("does not match any probes"),
        "{}",
        run.stderr
    );
    let run = dtrace(&[
        "-Z",
        "-q",
        "-n",
        "syscall::no_such_call:entry { trace(arg0); }",
        "-n",
        "BEGIN { printf(\"begun\\n\"); exit(0); }",
    ]);
    assert_ok(&run);
    assert_eq!(run.stdout.trim_end(), "begun");
}

#[test]
fn solaris_providers_say_why_they_match_nothing() {
    let run = dtrace(&["-n", "sysinfo:::readch { @[execname] = sum(arg0); }"]);
    assert_eq!(run.status, 1);
    assert_eq!(
        run.stderr,
        "dtrace: invalid probe specifier sysinfo:::readch { @[execname] = sum(arg0); }: \
         probe description sysinfo:::readch does not match any probes: sysinfo is a Solaris \
         provider (its probes count the Solaris kernel's cpu_sysinfo statistics, which Linux \
         does not keep); Linux has no sysinfo probes\n"
    );
    // Under -Z the description matches nothing and the script runs.
    let run = dtrace(&[
        "-Z",
        "-q",
        "-n",
        "fsinfo::: { trace(1); }",
        "-n",
        "BEGIN { printf(\"begun\\n\"); exit(0); }",
    ]);
    assert_ok(&run);
    assert_eq!(run.stdout.trim_end(), "begun");
}

#[test]
fn args_out_of_range_is_a_compile_error() {
    let run = dtrace(&["-n", "syscall::getppid:entry { trace(args[0]); }"]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr
            .contains("index 0 is out of range for syscall:vmlinux:getppid:entry args[ ]"),
        "{}",
        run.stderr
    );
}

/// A C program making known system calls: getppid 7 times, getpid 5 times and dup(12345)
/// (failing with EBADF) 3 times, through syscall(2). With the argument `time` it first
/// prints CLOCK_REALTIME in nanoseconds: under `-c`, the moment every probe was attached.
fn known_calls_program() -> &'static Path {
    static PROGRAM: OnceLock<PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        common::build_c(
            &scratch("known-calls"),
            "calls",
            "#include <stdio.h>\n#include <string.h>\n#include <time.h>\n#include <unistd.h>\n\
             #include <sys/syscall.h>\n\
             int main(int argc, char **argv) {\n\
               if (argc > 1 && strcmp(argv[1], \"time\") == 0) {\n\
                 struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts);\n\
                 printf(\"%lld\\n\", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);\n\
                 fflush(stdout);\n\
               }\n\
               for (int i = 0; i < 7; i++) syscall(SYS_getppid);\n\
               for (int i = 0; i < 5; i++) syscall(SYS_getpid);\n\
               for (int i = 0; i < 3; i++) syscall(SYS_dup, 12345);\n\
               return 0;\n}\n",
            &["-O0"],
        )
    })
}

/// The id `dtrace -l` gives probe `desc`.
fn probe_id(desc: &str) -> String {
    let run = dtrace(&["-l", "-n", desc]);
    assert_ok(&run);
    let line = run
        .stdout
        .lines()
        .nth(1)
        .unwrap_or_else(|| panic!("{desc}"));
    line.split_whitespace().next().unwrap().to_string()
}

#[test]
fn syscall_entry_of_every_call_counts_by_name() {
    let exe = known_calls_program().to_str().unwrap();
    let run = dtrace(&[
        "-n",
        r#"syscall:::entry /pid == $target/ { @[probefunc] = count(); }
           END { printa("%s %@d\n", @); }"#,
        "-c",
        exe,
    ]);
    assert_ok(&run);
    // Every call's entry matches (one group program runs them all).
    let matched: u32 = run
        .stderr
        .split("matched ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no match count in {:?}", run.stderr));
    assert!(matched > 300, "matched only {matched}");
    for line in ["getppid 7", "getpid 5", "dup 3"] {
        assert!(
            run.stdout.lines().any(|l| l == line),
            "no {line:?} in:\n{}",
            run.stdout
        );
    }
    // The command is held right after its exec, as DTrace holds it: its execve is not seen.
    assert!(
        !run.stdout.lines().any(|l| l.starts_with("execve ")),
        "{}",
        run.stdout
    );
}

/// A 64-bit program making 32-bit system calls (`int $0x80`): ia32 `getppid` is 64, the
/// native `semget`. A group program reads the task's `TS_COMPAT` status and leaves such
/// calls out, as the per-call tracepoints do: only the native getppid(2) calls count.
#[test]
fn group_programs_leave_ia32_system_calls_out() {
    let exe = common::build_c(
        &scratch("ia32"),
        "ia32",
        "#include <unistd.h>\n#include <sys/syscall.h>\n\
         int main(void) {\n\
           long r;\n\
           for (int i = 0; i < 4; i++)\n\
             __asm__ volatile (\"int $0x80\" : \"=a\"(r) : \"a\"(64L) : \"memory\");\n\
           for (int i = 0; i < 2; i++) syscall(SYS_getppid);\n\
           return r < 0;\n}\n",
        &["-O0"],
    );
    let run = dtrace(&[
        "-q",
        "-n",
        r#"syscall:::entry /pid == $target && (probefunc == "getppid" || probefunc == "semget")/
           { @[probefunc] = count(); }
           END { printa("%s %@d\n", @); }"#,
        "-c",
        exe.to_str().unwrap(),
    ]);
    assert_ok(&run);
    assert_eq!(run.stdout, "getppid 2\n\n");
}

#[test]
fn syscall_return_of_every_call_has_errno() {
    let exe = known_calls_program().to_str().unwrap();
    let run = dtrace(&[
        "-q",
        "-n",
        r#"syscall:::return /pid == $target/ { @[probefunc, errno, arg0 == arg1, probename] = count(); }
           END { printa("%s %d %d %s %@d\n", @); }"#,
        "-c",
        exe,
    ]);
    assert_ok(&run);
    for line in [
        "dup 9 1 return 3",
        "getppid 0 1 return 7",
        "getpid 0 1 return 5",
    ] {
        assert!(
            run.stdout.lines().any(|l| l == line),
            "no {line:?} in:\n{}",
            run.stdout
        );
    }
}

#[test]
fn group_probes_print_their_own_id_and_name() {
    let exe = known_calls_program().to_str().unwrap();
    let getppid = probe_id("syscall::getppid:entry");
    let dup = probe_id("syscall::dup:entry");
    let run = dtrace(&[
        "-n",
        r#"syscall:::entry /pid == $target && probefunc == "getppid"/ { trace(id); }
           syscall:::entry /pid == $target && probefunc == "dup"/ { x = 1 / (arg0 - 12345); }"#,
        "-c",
        exe,
    ]);
    assert_ok(&run);
    // CPU ID FUNCTION:NAME, then the traced id.
    let fired: Vec<Vec<&str>> = run
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.get(2) == Some(&"getppid:entry"))
        .collect();
    assert_eq!(fired.len(), 7, "{}", run.stdout);
    for w in &fired {
        assert_eq!(
            w[1..],
            [getppid.as_str(), "getppid:entry", &getppid],
            "{w:?}"
        );
    }
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("dtrace: error in dt_clause_"))
        .collect();
    assert_eq!(errors.len(), 3, "{}", run.stderr);
    let named = format!("probe ID {dup} (syscall:vmlinux:dup:entry): divide-by-zero at BPF pc ");
    assert!(errors.iter().all(|e| e.contains(&named)), "{}", run.stderr);
}

#[test]
fn typed_args_over_every_call_are_a_compile_error() {
    let run = dtrace(&["-n", "syscall:::entry { trace(args[0]); }"]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr
            .contains("args[ ] needs a specific system call; use arg0"),
        "{}",
        run.stderr
    );
}

/// A description matching every kernel function (tens of thousands of probes) is compiled
/// in seconds, or, where the kernel takes no fbt program, refused in as little: matching,
/// typing and code generation take each probe once (the code generator's part is also
/// checked without a kernel, in the back end's tests).
#[test]
fn every_kernel_function_compiles_in_seconds() {
    let start = std::time::Instant::now();
    let run = dtrace(&[
        "-e",
        "-n",
        "fbt:::entry { @[probefunc] = count(); self->x[probefunc] = 1; a[probefunc, probemod] = 2; }",
    ]);
    let took = start.elapsed();
    match dtrace_probes::fbt::kernel_refusal() {
        Some(why) => {
            assert_eq!(run.status, 1, "{}", run.stderr);
            assert!(run.stderr.contains(&why), "{}", run.stderr);
        }
        None => assert_eq!(run.status, 0, "{}", run.stderr),
    }
    assert!(
        !run.stderr.contains("panicked") && !run.stderr.contains("verifier"),
        "{}",
        run.stderr
    );
    assert!(took.as_secs() < 15, "took {took:?}: {}", run.stderr);
}

#[test]
fn syscall_entry_of_every_call_attaches_and_exits_fast() {
    let exe = known_calls_program().to_str().unwrap();
    let now_ns = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as i128
    };
    for probe in ["entry", "return"] {
        let start = now_ns();
        let run = dtrace(&[
            "-q",
            "-n",
            &format!("syscall:::{probe} {{ @ = count(); }}"),
            "-c",
            &format!("{exe} time"),
        ]);
        let end = now_ns();
        assert_ok(&run);
        let released: i128 = run
            .stdout
            .lines()
            .find_map(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("no time in {:?}", run.stdout));
        let (attach, exit) = (
            (released - start) as f64 / 1e9,
            (end - released) as f64 / 1e9,
        );
        eprintln!("syscall:::{probe}: attach {attach:.3} s, exit {exit:.3} s");
        assert!(
            attach < 1.0,
            "syscall:::{probe} took {attach:.3} s to attach"
        );
        assert!(exit < 1.0, "syscall:::{probe} took {exit:.3} s to exit");
    }
}

/// The BPF object ids a process holds (`prog_id`, `map_id`, `link_id` of its fdinfo), and
/// the tracepoints of its raw tracepoint links.
fn held_by(pid: u32) -> (Vec<(&'static str, u32)>, Vec<String>) {
    let mut ids = Vec::new();
    let mut raw = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{pid}/fdinfo"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        for line in text.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            let kind = match key {
                "prog_id" => "prog",
                "map_id" => "map",
                "link_id" => "link",
                "tp_name" => {
                    raw.push(value.to_string());
                    continue;
                }
                _ => continue,
            };
            if let Ok(id) = value.parse() {
                ids.push((kind, id));
            }
        }
    }
    (ids, raw)
}

/// Which of `ids` still exist, per `bpftool prog/map/link show id N`.
fn still_there(ids: &[(&str, u32)]) -> Vec<String> {
    ids.iter()
        .filter(|(kind, id)| {
            Command::new("bpftool")
                .args([kind, "show", "id", &id.to_string()])
                .output()
                .expect("bpftool is installed (apt-get install bpftool)")
                .status
                .success()
        })
        .map(|(kind, id)| format!("{kind} {id}"))
        .collect()
}

/// Start `dtrace` with `args`, wait until it holds a raw tracepoint link on `sys_enter`,
/// then return it with what it holds.
fn attached_raw(args: &[&str]) -> (std::process::Child, Vec<(&'static str, u32)>) {
    let mut child = common::spawn(args);
    let start = std::time::Instant::now();
    let ids = loop {
        let (ids, raw) = held_by(child.id());
        if raw.iter().any(|t| t == "sys_enter") {
            break Some(ids);
        }
        if start.elapsed() > std::time::Duration::from_secs(10) {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    match ids {
        Some(ids) => (child, ids),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("dtrace {args:?} never attached to sys_enter");
        }
    }
}

/// Wait (at most 5 s) until none of `ids` exists.
fn assert_released(ids: &[(&str, u32)], what: &str) {
    let start = std::time::Instant::now();
    loop {
        let left = still_there(ids);
        if left.is_empty() {
            return;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(5),
            "{what}: left behind {left:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn group_raw_tracepoint_links_leave_nothing_behind() {
    // exit() from a tick.
    let (child, ids) = attached_raw(&[
        "-q",
        "-n",
        "syscall:::entry { @ = count(); } tick-300ms { exit(0); }",
    ]);
    assert!(ids.iter().any(|(k, _)| *k == "link"), "{ids:?}");
    let run = common::finish(child, "syscall:::entry until exit()");
    assert_ok(&run);
    assert_released(&ids, "after exit()");
    // SIGKILL.
    let (mut child, ids) = attached_raw(&["-q", "-n", "syscall:::entry { @ = count(); }"]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_released(&ids, "after SIGKILL");
}

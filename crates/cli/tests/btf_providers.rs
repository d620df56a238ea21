//! BTF-typed probes on the live kernel: the `rawtp` provider (BTF raw tracepoints, `tp_btf`)
//! with `args[N]` typed from the tracepoint's prototype (`args[0]->comm`), `sdt` arguments
//! that point to kernel structs, `dtrace -l -P rawtp` (and how fast it is), `dtrace -lv`
//! (stability attributes and argument types, formatted as DTrace formats them), and `fbt`
//! with typed arguments still refused in one sentence where the kernel refuses fentry.
//!
//! Events come from a command the test starts with `-c`, and clauses filter on `$target`,
//! so the results do not depend on what else runs on the machine.

mod common;

use std::time::{Duration, Instant};

use common::{dtrace, Run};

fn assert_ok(run: &Run) {
    assert_eq!(
        run.status, 0,
        "dtrace failed\nstdout:\n{}\nstderr:\n{}",
        run.stdout, run.stderr
    );
}

/// The pid a `BEGIN { printf("target=%d\n", $target); }` clause printed.
fn target_pid(stdout: &str) -> String {
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("target="))
        .unwrap_or_else(|| panic!("no target pid in {stdout}"))
        .to_string()
}

#[test]
fn rawtp_exec_shows_the_commands_task_and_file_once() {
    // sched_process_exec(struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
    let run = dtrace(&[
        "-q",
        "-n",
        "BEGIN { printf(\"target=%d\\n\", $target); }
        rawtp:sched::sched_process_exec /args[0]->tgid == $target/ {
            printf(\"exec %s %s %d %d %d\\n\", args[0]->comm, stringof(args[2]->filename),
                args[1], args[0]->pid, arg1 == args[1]);
        }",
        "-c",
        &common::exec_true_script(),
    ]);
    assert_ok(&run);
    let pid = target_pid(&run.stdout);
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with("target="))
        .collect();
    assert_eq!(
        lines,
        [format!("exec true /bin/true {pid} {pid} 1")],
        "{}",
        run.stderr
    );
}

#[test]
fn rawtp_sched_switch_reads_both_tasks() {
    // sched_switch(bool preempt, struct task_struct *prev, struct task_struct *next,
    // unsigned int prev_state): the target sleeps, so it goes off CPU as prev, and the
    // task replacing it is another one.
    let run = dtrace(&[
        "-q",
        "-n",
        "rawtp:sched::sched_switch /args[1]->tgid == $target && args[1]->comm == \"sleep\"/ {
            @switches[stringof(args[1]->comm), args[2]->pid != args[1]->pid] = count();
        }",
        "-c",
        "sleep 0.1",
    ]);
    assert_ok(&run);
    let rows: Vec<Vec<&str>> = run
        .stdout
        .lines()
        .map(|l| l.split_whitespace().collect())
        .filter(|r: &Vec<&str>| !r.is_empty())
        .collect();
    assert_eq!(rows.len(), 1, "{}", run.stdout);
    assert_eq!(&rows[0][..2], ["sleep", "1"], "{}", run.stdout);
    assert!(rows[0][2].parse::<u64>().unwrap() >= 1, "{}", run.stdout);
}

#[test]
fn rawtp_arguments_are_typed_and_checked() {
    // argN are plain 64-bit values (arithmetic on a pointer argument loads); args[N] past
    // the prototype is a compile-time error naming the probe.
    let run = dtrace(&[
        "-q",
        "-n",
        "rawtp:sched::sched_switch { x = arg1 & 0xfff; y = (int)arg2; z = args[3]; exit(0); }",
    ]);
    assert_ok(&run);
    let run = dtrace(&["-n", "rawtp:sched::sched_switch { trace(args[4]); }"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("index 4 is out of range for rawtp:sched::sched_switch args[ ]"),
        "{}",
        run.stderr
    );
}

#[test]
fn sdt_pointer_to_kernel_struct_is_typed() {
    // mmap_lock_start_locking(struct mm_struct *mm, ...): the format file's pointer to a
    // kernel struct is typed from BTF, so its members can be read.
    let list = dtrace(&["-lv", "-n", "sdt:mmap_lock::mmap_lock_start_locking"]);
    if list.status != 0 {
        return; // no mmap_lock tracepoints in this kernel
    }
    assert!(
        list.stdout.contains("\t\targs[0]: struct mm_struct *\n"),
        "{}",
        list.stdout
    );
    let run = dtrace(&[
        "-q",
        "-n",
        "BEGIN { mapped = 0; }
        sdt:mmap_lock::mmap_lock_start_locking /pid == $target && args[0] == curthread->mm/ {
            n++; mapped += args[0]->map_count > 0;
        }
        END { printf(\"%d %d\\n\", n > 0, n == mapped); }",
        "-c",
        "/bin/true",
    ]);
    assert_ok(&run);
    assert_eq!(run.stdout.trim(), "1 1", "{}", run.stderr);
}

#[test]
fn listing_rawtp_is_quick() {
    let start = Instant::now();
    let run = dtrace(&["-l", "-P", "rawtp"]);
    let took = start.elapsed();
    assert_ok(&run);
    let lines: Vec<Vec<&str>> = run
        .stdout
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert!(lines.len() > 500, "only {} rawtp probes", lines.len());
    assert!(lines.iter().all(|l| l[1] == "rawtp"), "{}", run.stdout);
    assert!(
        lines
            .iter()
            .any(|l| l[1..] == ["rawtp", "sched", "sched_switch"]),
        "no rawtp:sched::sched_switch"
    );
    // A debug build on a busy machine: still well under a second or two.
    assert!(
        took < Duration::from_secs(3),
        "dtrace -l -P rawtp took {took:?}"
    );
}

/// The `-lv` block of the probe whose line ends with `" {name}"` and contains `provider`.
fn block<'a>(out: &'a str, provider: &str, name: &str) -> &'a str {
    let start = out
        .find(&format!(" {name}\n"))
        .filter(|&i| out[..i].rsplit('\n').next().unwrap().contains(provider))
        .unwrap_or_else(|| panic!("no {provider} {name} in {out}"));
    let rest = &out[start..];
    // The block ends at the first empty line not followed by a tab-indented section.
    let end = rest
        .match_indices("\n\n")
        .map(|(i, _)| i)
        .find(|&i| !rest[i + 2..].starts_with('\t'))
        .map_or(rest.len(), |i| i + 2);
    &rest[..end]
}

#[test]
fn verbose_listing_shows_attributes_and_argument_types_like_dtrace() {
    let run = dtrace(&[
        "-lv",
        "-n",
        "syscall::read:entry",
        "-n",
        "sdt:sched::sched_process_exec",
        "-n",
        "rawtp:sched::sched_switch",
        "-n",
        "BEGIN",
    ]);
    assert_ok(&run);
    let out = &run.stdout;
    assert_eq!(out.matches("\tProbe Description Attributes\n").count(), 4);
    let syscall = block(out, "syscall", "entry");
    assert!(
        syscall.ends_with(
            " entry\n\n\tProbe Description Attributes\n\
             \t\tIdentifier Names: Private\n\t\tData Semantics:   Private\n\t\tDependency Class: Unknown\n\
             \n\tArgument Attributes\n\
             \t\tIdentifier Names: Private\n\t\tData Semantics:   Private\n\t\tDependency Class: ISA\n\
             \n\tArgument Types\n\
             \t\targs[0]: unsigned int\n\t\targs[1]: uintptr_t\n\t\targs[2]: size_t\n\n"
        ),
        "{syscall:?}"
    );
    let sdt = block(out, "sdt", "sched_process_exec");
    assert!(
        sdt.contains("\t\targs[0]: string\n\t\targs[1]: pid_t\n\t\targs[2]: pid_t\n"),
        "{sdt}"
    );
    let rawtp = block(out, "rawtp", "sched_switch");
    assert!(
        rawtp.contains(
            "\tArgument Types\n\t\targs[0]: bool\n\t\targs[1]: struct task_struct *\n\
             \t\targs[2]: struct task_struct *\n"
        ),
        "{rawtp}"
    );
    let begin = block(out, "dtrace", "BEGIN");
    assert!(
        begin.contains("\t\tIdentifier Names: Stable\n")
            && begin.ends_with("\tArgument Types\n\t\tNone\n\n"),
        "{begin}"
    );
}

#[test]
fn fbt_returns_have_the_offset_then_a_value_unless_void() {
    // As Oracle's DTrace: args[0] is the return offset (a uint64_t, -1: unknown), args[1]
    // the return value, which a void function does not have.
    let types = |function: &str| {
        let list = dtrace(&["-lv", "-n", &format!("fbt::{function}:return")]);
        assert_ok(&list);
        block(&list.stdout, "fbt", "return").to_string()
    };
    let read = types("vfs_read");
    assert!(
        read.ends_with("\tArgument Types\n\t\targs[0]: uint64_t\n\t\targs[1]: ssize_t\n\n"),
        "{read}"
    );
    let exit = types("exit_creds");
    assert!(
        exit.ends_with("\tArgument Types\n\t\targs[0]: uint64_t\n\n"),
        "{exit}"
    );
    let run = dtrace(&["-n", "fbt:vmlinux:exit_creds:return { trace(args[1]); }"]);
    assert_eq!(run.status, 1, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("index 1 is out of range for fbt:vmlinux:exit_creds:return args[ ]"),
        "{}",
        run.stderr
    );
}

#[test]
fn fbt_arguments_are_typed_but_refused_clearly() {
    let list = dtrace(&["-lv", "-n", "fbt::vfs_read:entry"]);
    assert_ok(&list);
    assert!(
        list.stdout.contains("\t\targs[0]: struct file *\n"),
        "{}",
        list.stdout
    );
    // Member access on a typed argument compiles; the kernel's refusal is the only error.
    let run = dtrace(&[
        "-n",
        "fbt::vfs_read:entry { trace(args[0]->f_flags); }",
        "-n",
        "fbt::vfs_read:return { trace(args[1]); }",
        "-n",
        "BEGIN { exit(0); }",
    ]);
    match dtrace_probes::fbt::kernel_refusal() {
        Some(why) => {
            assert_eq!(run.status, 1, "{}", run.stderr);
            let failures: Vec<&str> = run
                .stderr
                .lines()
                .filter(|l| l.starts_with("dtrace: failed"))
                .collect();
            assert_eq!(failures.len(), 1, "{}", run.stderr);
            assert!(
                failures[0].contains("this kernel refuses the fentry/fexit BPF programs")
                    && failures[0].contains(&why),
                "{}",
                failures[0]
            );
        }
        None => assert_ok(&run),
    }
}

#[test]
fn every_fbt_probe_is_refused_at_once_where_none_can_be_enabled() {
    // `fbt:::entry` names some 56,000 functions; on a kernel that has no kprobes and refuses
    // fentry programs, the refusal comes before a program is compiled for each.
    let start = Instant::now();
    let run = dtrace(&["-e", "-n", "fbt:::entry { @[probefunc] = count(); }"]);
    match dtrace_probes::fbt::kernel_refusal() {
        Some(why) => {
            assert_eq!(run.status, 1, "{}", run.stderr);
            assert!(
                run.stderr
                    .contains("this kernel refuses the fentry/fexit BPF programs")
                    && run.stderr.contains(&why),
                "{}",
                run.stderr
            );
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "refused after {:?}",
                start.elapsed()
            );
            // A compile error still comes first.
            let bad = dtrace(&["-e", "-n", "fbt:::entry { trace(args[9]); }"]);
            assert_eq!(bad.status, 1, "{}", bad.stderr);
            assert!(
                bad.stderr.contains("index 9 is out of range"),
                "{}",
                bad.stderr
            );
        }
        None => assert_ok(&run),
    }
}

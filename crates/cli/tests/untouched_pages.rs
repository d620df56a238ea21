//! User memory the traced process has not touched yet (issue 17): a USDT probe passing
//! string literals that each live in a page-aligned section of their own, which the program
//! never reads, so no page of theirs is mapped when the probe fires. Its programs are
//! sleepable on this kernel and fault the pages in: every string is read, in every one of
//! 200 short runs, and by `pid` probes too; an address that is not mapped at all still
//! fires ERROR; the rest of a clause works as ever; `-S` shows the sleepable reads. System
//! call probes cannot sleep here, and `-v` says so.

mod common;

use std::path::PathBuf;

/// Three USDT probes passing a string each, and a function taking a fourth (for `pid`
/// probes); every string in a 64 KiB-aligned section of its own,
/// 64 KiB long, so that the kernel's fault-around (which maps the page-cache pages of the
/// 64 KiB around a faulting address) never maps one while the process runs other code.
const PROGRAM: &str = r#"
#include <sys/sdt.h>

#define UNTOUCHED(name, text) \
    __attribute__((section(".untouched_" #name), aligned(65536))) \
    static const char name[65536] = text;

UNTOUCHED(first, "alpha.h")
UNTOUCHED(second, "beta.h")
UNTOUCHED(third, "gamma.h")
UNTOUCHED(fourth, "delta.h")

/* Takes a string it does not read: the pid provider's probes read it. */
__attribute__((noinline)) void take(const char *s) { __asm__ volatile("" :: "r"(s)); }

int main(void) {
    DTRACE_PROBE2(untouchedprov, file__start, 1, first);
    DTRACE_PROBE2(untouchedprov, file__start, 2, second);
    DTRACE_PROBE2(untouchedprov, file__done, 3, third);
    take(fourth);
    return 0;
}
"#;

fn program(name: &str) -> PathBuf {
    let dir = common::scratch("untouched", name);
    common::build_c(&dir, name, PROGRAM, &["-O1"])
}

/// `dtrace` started first, then 200 runs of the program (the seeds' case): every string
/// is read by `copyinstr`, and `copyin`'s bytes too, with no error.
#[test]
fn strings_in_untouched_pages_are_read_in_every_run() {
    let prog = program("untouched");
    let script = prog.with_extension("sh");
    std::fs::write(
        &script,
        format!(
            "i=0\nwhile [ $i -lt 200 ]; do\n  {} || echo failed\n  i=$((i+1))\ndone\necho loop done\n",
            prog.display()
        ),
    )
    .unwrap();
    // The glob names this test's binary: the file's other tests run copies of the same
    // provider meanwhile.
    let program = format!(
        "untouchedprov*:{0}::file-start, untouchedprov*:{0}::file-done {{ @s[copyinstr(arg1)] = count(); }}
         untouchedprov*:{0}::file-done {{ @c[*(char *)copyin(arg1, 1)] = count(); }}",
        prog.display()
    );
    let run = common::dtrace(&[
        "-v",
        "-q",
        "-n",
        &program,
        "-c",
        &format!("/bin/sh {}", script.display()),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("loop done"), "{}", run.stdout);
    assert!(!run.stdout.contains("failed"), "{}", run.stdout);
    for key in ["alpha.h", "beta.h", "gamma.h"] {
        assert_eq!(
            common::row(&run.stdout, &[key]),
            Some(200),
            "{}",
            run.stdout
        );
    }
    // 'g' of gamma.h.
    assert_eq!(
        common::row(&run.stdout, &["103"]),
        Some(200),
        "{}",
        run.stdout
    );
    assert!(!run.stderr.contains("error"), "{}", run.stderr);
    assert!(
        run.stderr.contains(&format!(
            "dtrace: untouchedprov:{}:main:file-done: user memory read by a sleepable program (untouched pages are faulted in)\n",
            prog.display()
        )),
        "{}",
        run.stderr
    );
}

/// A per-process probe (`-c`, attached by perf uprobes): untouched strings are read, and
/// reads of addresses that are not mapped (the probes' first arguments, 1 to 3) still
/// fire ERROR with DTrace's message and abandon the clause.
#[test]
fn unmapped_addresses_still_fault() {
    let prog = program("unmapped");
    let run = common::dtrace(&[
        "-q",
        "-n",
        "untouchedprov$target:::file-start, untouchedprov$target:::file-done
         { printf(\"%s\\n\", copyinstr(arg1)); }
         untouchedprov$target:::file-done { printf(\"%s\\n\", copyinstr(arg0)); printf(\"not reached\\n\"); }
         untouchedprov$target:::file-done { trace(*(int *)copyin(arg0, 4)); }
         ERROR { printf(\"ERROR %d 0x%x\\n\", arg4, arg5); }",
        "-c",
        prog.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout, "alpha.h\nbeta.h\ngamma.h\nERROR 1 0x3\nERROR 1 0x3\n\n",
        "{}",
        run.stderr
    );
    let errors: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(errors.len(), 2, "{}", run.stderr);
    for (line, clause) in errors.iter().zip(["dt_clause_2", "dt_clause_3"]) {
        assert!(
            line.starts_with(&format!("dtrace: error in {clause} for probe ID "))
                && line.contains(":unmapped:main:file-done): invalid address (0x3) at BPF pc "),
            "{}",
            run.stderr
        );
    }
}

/// A `pid` probe reads a string argument the function never touched, by `copyinstr` and
/// by `copyinto` into `alloca`'d memory.
#[test]
fn pid_probes_read_untouched_arguments() {
    let prog = program("untouchedpid");
    let run = common::dtrace(&[
        "-q",
        "-n",
        "pid$target:a.out:take:entry
         {
             this->p = (char *)alloca(8);
             copyinto(arg0, 8, this->p);
             printf(\"%s %s\\n\", copyinstr(arg0), stringof(this->p));
         }",
        "-c",
        prog.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "delta.h delta.h\n\n", "{}", run.stderr);
    assert_eq!(run.stderr, "");
}

/// A system call probe cannot sleep on this kernel (it refuses sleepable tracepoint
/// programs, and fentry altogether, which sleepable system call probes would be): `-v`
/// says its reads fail on untouched pages, and why.
#[test]
fn verbose_says_why_system_call_reads_cannot_sleep() {
    let run = common::dtrace(&[
        "-v",
        "-q",
        "-n",
        "syscall::openat:entry /pid == $target/ { trace(copyinstr(arg1)); }",
        "-c",
        "/bin/true",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "dtrace: syscall:vmlinux:openat:entry: user memory read with bpf_probe_read_user, which fails on pages not touched yet: the kernel refuses fentry programs, which system calls would need to sleep (BPF_PROG_LOAD of an fentry program fails with EPERM (Operation not permitted))\n"
        ),
        "{}",
        run.stderr
    );
}

/// `-S -x disasm=8` shows a program as it is loaded: one that reads user memory is
/// sleepable and calls `bpf_copy_from_user_str` (a kfunc) and `bpf_copy_from_user`; one
/// that does not reads none.
#[test]
fn disassembly_shows_the_sleepable_reads() {
    let prog = program("untoucheddis");
    let run = common::dtrace(&[
        "-S",
        "-xdisasm=8",
        "-q",
        "-n",
        "untouchedprov$target:::file-start { trace(copyinstr(arg1)); trace(*(char *)copyin(arg1, 1)); }
         untouchedprov$target:::file-done { trace(arg0); }",
        "-c",
        prog.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let programs: Vec<&str> = run
        .stderr
        .split("Disassembly of final program ")
        .skip(1)
        .collect();
    assert_eq!(programs.len(), 2, "{}", run.stderr);
    let (start, done) = match programs[0].contains(":file-start") {
        true => (programs[0], programs[1]),
        false => (programs[1], programs[0]),
    };
    assert!(start.contains(":main:file-start:\n"), "{start}");
    assert!(
        start.contains("    call bpf_copy_from_user_str\n"),
        "{start}"
    );
    assert!(start.contains("    call bpf_copy_from_user\n"), "{start}");
    assert!(!start.contains("probe_read_user"), "{start}");
    assert!(done.contains(":main:file-done:\n"), "{done}");
    assert!(!done.contains("copy_from_user"), "{done}");
}

/// Everything else a clause does works in a sleepable program: thread-local variables,
/// associative arrays, aggregations, string subroutines (searches by a `bpf_loop`
/// callback, `strtok`'s state), speculations, the ring buffer.
#[test]
fn clauses_keep_working_in_sleepable_programs() {
    let prog = program("untouchedall");
    let script = prog.with_extension("d");
    std::fs::write(
        &script,
        r#"int spec;
untouchedprov$target:::file-start
{
  this->s = copyinstr(arg1);
  self->n++;
  names[this->s] = strlen(this->s);
  @len[this->s] = sum(names[this->s]);
  @q = quantize(arg0);
  printf("%s %d %s %d %s\n", toupper(this->s), self->n, strstr(this->s, "h"), index(this->s, "."), strtok(this->s, "."));
}
untouchedprov$target:::file-start
/arg0 == 1/
{
  spec = speculation();
}
untouchedprov$target:::file-start
/spec/
{
  speculate(spec);
  printf("speculated %s\n", copyinstr(arg1));
}
untouchedprov$target:::file-done
{
  printf("%s %d\n", copyinstr(arg1), self->n);
}
untouchedprov$target:::file-done { commit(spec); }
"#,
    )
    .unwrap();
    let run = common::dtrace(&[
        "-q",
        "-s",
        script.to_str().unwrap(),
        "-c",
        prog.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.stdout,
        "ALPHA.H 1 ha.h 5 alpha\n\
         BETA.H 2 h 4 beta\n\
         gamma.h 2\n\
         speculated alpha.h\n\
         speculated beta.h\n\
         \n\
         \x20 beta.h                                                            6\n\
         \x20 alpha.h                                                           7\n\
         \n\
         \x20          value  ------------- Distribution ------------- count    \n\
         \x20              0 |                                         0        \n\
         \x20              1 |@@@@@@@@@@@@@@@@@@@@                     1        \n\
         \x20              2 |@@@@@@@@@@@@@@@@@@@@                     1        \n\
         \x20              4 |                                         0        \n\
         \n"
    );
}

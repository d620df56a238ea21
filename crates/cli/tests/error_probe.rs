//! The ERROR probe fires in the faulting context: its clauses run in the same program
//! invocation as the clause that faulted, so `pid`, `execname` and `arg0..arg5` describe
//! the faulting probe and thread, and the faulting probe's later clauses still run.

mod common;

use common::{build_c, dtrace, scratch};

#[test]
fn error_clauses_see_the_faulting_thread_of_a_pid_probe() {
    let dir = scratch("errprobe", "pid");
    let prog = build_c(
        &dir,
        "faulter",
        r#"
#include <stdio.h>
__attribute__((noinline)) int work(int i) { return i * 2; }
int main(void) {
    int sum = 0;
    for (int i = 0; i < 3; i++) sum += work(i);
    printf("sum %d\n", sum);
    return 0;
}
"#,
        &["-O1"],
    );
    let run = dtrace(&[
        "-qn",
        r#"pid$target:a.out:work:entry { x = *(int *)8; }
           pid$target:a.out:work:entry { printf("after %d\n", arg0); }
           ERROR { printf("error %d %s %d %x\n", pid == $target, execname, arg4, arg5); }"#,
        "-c",
        prog.to_str().unwrap(),
    ]);
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    let errors: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with("error "))
        .collect();
    assert_eq!(errors, ["error 1 faulter 1 8"; 3], "stdout: {}", run.stdout);
    // The faulting clause is abandoned; the probe's next clause runs.
    for i in 0..3 {
        assert!(
            run.stdout.contains(&format!("after {i}\n")),
            "{}",
            run.stdout
        );
    }
    assert!(run.stdout.contains("sum 6\n"), "{}", run.stdout);
    assert_eq!(
        run.stderr.matches("invalid address (0x8)").count(),
        3,
        "stderr: {}",
        run.stderr
    );
}

#[test]
fn a_fault_in_an_error_clause_is_counted_not_repeated() {
    let run = dtrace(&[
        "-qn",
        r#"BEGIN { x = 1; y = x / (x - 1); }
           ERROR { z = *(int *)16; }
           BEGIN { exit(0); }"#,
    ]);
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
    assert!(run.stderr.contains("divide-by-zero"), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("dtrace: 1 error in ERROR probe enabling"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("invalid address"), "{}", run.stderr);
}

/// A member read through a NULL pointer faults at address 0, as DTrace checks the pointer
/// `->` follows; through any other bad pointer, at the member's address.
#[test]
fn a_member_through_a_null_pointer_faults_at_address_zero() {
    let run = dtrace(&[
        "-qn",
        "BEGIN { trace(((struct task_struct *)NULL)->pid); }
         BEGIN { trace(((struct task_struct *)8)->pid); }
         ERROR { printf(\"%d %d 0x%x\\n\", arg2, arg4, arg5); }
         BEGIN { exit(0); }",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let pid_offset = run
        .stdout
        .lines()
        .nth(1)
        .and_then(|l| l.strip_prefix("1 1 0x"))
        .and_then(|hex| u64::from_str_radix(hex, 16).ok())
        .unwrap_or_else(|| panic!("stdout: {}", run.stdout));
    assert_eq!(run.stdout.lines().next(), Some("0 1 0x0"), "{}", run.stdout);
    assert!(pid_offset > 8, "{}", run.stdout);
}

/// `d_path()` of a `struct path *` that cannot be read faults at that pointer (as the other
/// subroutines fault on a bad argument), while a real file's path is still named.
#[test]
fn d_path_of_a_bad_pointer_faults_at_the_pointer() {
    let run = dtrace(&[
        "-qn",
        r#"BEGIN { trace(d_path((struct path *)0x18)); }
           BEGIN { trace(d_path((struct path *)NULL)); }
           ERROR { printf("%d %d 0x%x\n", arg2, arg4, arg5); }
           BEGIN { printf("[%s]\n", d_path(&curthread->fs->pwd)); exit(0); }"#,
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let cwd = std::env::current_dir().unwrap();
    assert_eq!(
        run.stdout,
        format!("0 1 0x18\n1 1 0x0\n[{}]\n\n", cwd.display()),
        "{}",
        run.stderr
    );
}

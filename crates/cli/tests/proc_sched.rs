//! The `proc` and `sched` providers on the live kernel: a `-c` program (a shell script, or
//! a small C program built with gcc) makes the events happen and prints what it knows
//! (its children's pids, its threads' ids); the tests check that the probes fired in the
//! right process with the right arguments (`psinfo_t`/`lwpsinfo_t` from the D library's
//! translators, signal numbers, exit reasons), and that `sched:::off-cpu` pairs with
//! `sched:::on-cpu` per thread.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

use common::{dtrace, tagged, trace};

/// A fresh directory for one test's files.
fn temp_dir(name: &str) -> PathBuf {
    common::scratch("procsched", name)
}

/// Write an executable shell script; its path.
fn script(name: &str, body: &str) -> String {
    let path = temp_dir(name).join(format!("{name}.sh"));
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).expect("write script");
    let status = Command::new("chmod")
        .arg("+x")
        .arg(&path)
        .status()
        .expect("chmod");
    assert!(status.success());
    path.to_string_lossy().into_owned()
}

/// The one value a `prefix N` line of the traced program gives.
fn printed(out: &str, prefix: &str) -> i64 {
    let v = tagged(out, prefix);
    assert_eq!(v.len(), 1, "one '{prefix}' line expected in:\n{out}");
    v[0].trim().parse().expect("a number")
}

#[test]
fn exec_names_the_path_and_exec_success_the_new_image() {
    let cmd = script("exec", "/bin/true\n/bin/echo hi >/dev/null\n");
    let run = trace(
        &cmd,
        r#"proc:::exec /ppid == $target/ { printf("exec %s %s\n", execname, args[0]); }
           proc:::exec-success /ppid == $target/ {
               printf("success %s %s\n", execname, curpsinfo->pr_fname); }"#,
    );
    let script_name = "exec.sh";
    assert_eq!(
        tagged(&run.stdout, "exec"),
        [
            format!("{script_name} /bin/true"),
            format!("{script_name} /bin/echo")
        ],
        "{}",
        run.stdout
    );
    assert_eq!(
        tagged(&run.stdout, "success"),
        ["true true", "echo echo"],
        "{}",
        run.stdout
    );
}

#[test]
fn exec_failure_gives_the_return_value() {
    let cmd = script("execfail", "/nonexistent/program 2>/dev/null\n/bin/true\n");
    let run = trace(
        &cmd,
        r#"proc:::exec-failure /ppid == $target/ { printf("failure %d %d %s\n", args[0], arg0, execname); }
           proc:::exec-success /ppid == $target/ { printf("success %s\n", execname); }"#,
    );
    // -ENOENT (the system call's return value, as DTrace gives it), in the shell's child
    // that tried (still named as the script).
    assert_eq!(
        tagged(&run.stdout, "failure"),
        ["-2 -2 execfail.sh"],
        "{}",
        run.stdout
    );
    assert_eq!(tagged(&run.stdout, "success"), ["true"], "{}", run.stdout);
}

#[test]
fn exit_gives_dtrace_exit_reasons() {
    let cmd = script(
        "exit",
        "sh -c 'exit 3'\nsh -c 'kill -KILL $$'\nsh -c 'kill -TERM $$'\nexit 0\n",
    );
    let run = trace(
        &cmd,
        r#"proc:::exit /ppid == $target || pid == $target/ {
               printf("exit %s %d %d %d %d\n", pid == $target ? "target" : "child", args[0],
                   args[0] == CLD_EXITED, args[0] == CLD_KILLED, curpsinfo->pr_wstat); }"#,
    );
    assert_eq!(
        tagged(&run.stdout, "exit"),
        [
            "child 1 1 0 768", // exit(3): status 3 << 8
            "child 2 0 1 9",   // SIGKILL
            "child 2 0 1 15",  // SIGTERM
            "target 1 1 0 0",
        ],
        "{}",
        run.stdout
    );
}

#[test]
fn create_gives_the_child_and_start_fires_in_it() {
    let cmd = script("create", "sleep 0.1 &\necho child $!\nwait\n");
    let run = trace(
        &cmd,
        r#"BEGIN { printf("target %d\n", $target); }
           proc:::create /pid == $target/ {
               printf("create %d %d %s\n", args[0]->pr_pid, args[0]->pr_ppid, execname); }
           proc:::start /ppid == $target/ { printf("start %d %d\n", pid, tid); }
           proc:::lwp-start /ppid == $target/ { printf("lwpstart %d\n", tid); }"#,
    );
    let child = printed(&run.stdout, "child");
    let target = printed(&run.stdout, "target");
    assert_eq!(
        tagged(&run.stdout, "create"),
        [format!("{child} {target} create.sh")],
        "{}",
        run.stdout
    );
    assert_eq!(
        tagged(&run.stdout, "start"),
        [format!("{child} {child}")],
        "{}",
        run.stdout
    );
    assert_eq!(
        tagged(&run.stdout, "lwpstart"),
        [child.to_string()],
        "{}",
        run.stdout
    );
}

#[test]
fn signal_send_and_handle_give_the_signal() {
    // The child traps USR2 and then waits; the script sends it USR2, then TERM.
    let cmd = script(
        "signal",
        "sh -c 'trap \"echo handled\" USR2; sleep 0.3 & wait; wait' &\nchild=$!\necho child $child\nsleep 0.1\nkill -USR2 $child\nwait\n",
    );
    let run = trace(
        &cmd,
        r#"proc:::signal-send /pid == $target && args[2] == SIGUSR2/ {
               printf("send %d %d %d %d\n", args[1]->pr_pid, args[0]->pr_lwpid, args[2],
                   args[1]->pr_ppid == $target); }
           proc:::signal-handle /ppid == $target && args[0] == SIGUSR2/ {
               printf("handle %d %d %d\n", pid, args[0], args[2] != 0); }"#,
    );
    let child = printed(&run.stdout, "child");
    assert_eq!(
        tagged(&run.stdout, "send"),
        [format!("{child} {child} 12 1")],
        "{}",
        run.stdout
    );
    assert_eq!(
        tagged(&run.stdout, "handle"),
        [format!("{child} 12 1")],
        "{}",
        run.stdout
    );
}

#[test]
fn signal_handle_gives_a_fatal_signal_not_sigkill() {
    // USR1's default action ends the child: the kernel delivers it as SIGKILL, DTrace shows
    // USR1. A KILL stays KILL.
    let cmd = script(
        "fatal",
        "sleep 5 &\nchild=$!\necho child $child\nsleep 0.2\nkill -USR1 $child\nwait\n\
         sleep 5 &\nchild=$!\necho child $child\nsleep 0.2\nkill -KILL $child\nwait\n",
    );
    let run = trace(
        &cmd,
        r#"proc:::signal-handle /ppid == $target/ { printf("handle %d %d\n", pid, args[0]); }"#,
    );
    let children = tagged(&run.stdout, "child");
    assert_eq!(children.len(), 2, "{}", run.stdout);
    assert_eq!(
        tagged(&run.stdout, "handle"),
        [format!("{} 10", children[0]), format!("{} 9", children[1])],
        "{}",
        run.stdout
    );
}

#[test]
fn signal_discard_fires_for_an_ignored_signal_only() {
    // The child ignores HUP: the first HUP is discarded; TERM then ends it, not discarded.
    let cmd = script(
        "discard",
        "sh -c 'trap \"\" HUP; exec sleep 5' &\nchild=$!\necho child $child\nsleep 0.2\n\
         kill -HUP $child\nkill -TERM $child\nwait\n",
    );
    let run = trace(
        &cmd,
        r#"proc:::signal-discard /pid == $target && args[1]->pr_ppid == $target/ {
               printf("discard %d %s %d\n", args[1]->pr_pid, args[1]->pr_fname, args[2]); }"#,
    );
    let child = printed(&run.stdout, "child");
    assert_eq!(
        tagged(&run.stdout, "discard"),
        [format!("{child} sleep 1")],
        "{}",
        run.stdout
    );
}

/// A C program whose main thread starts two threads, prints their ids (`lwp N`) and joins
/// them.
fn threads_program() -> &'static str {
    static EXE: OnceLock<String> = OnceLock::new();
    EXE.get_or_init(|| {
        common::build_c(
            &temp_dir("threads"),
            "threads",
            r#"#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *run(void *arg) {
    (void)arg;
    pthread_mutex_lock(&m);
    printf("lwp %d\n", gettid());
    fflush(stdout);
    pthread_mutex_unlock(&m);
    usleep(20000);
    return NULL;
}
int main(void) {
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run, NULL);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    return 0;
}
"#,
            &["-O0", "-pthread"],
        )
        .to_string_lossy()
        .into_owned()
    })
}

#[test]
fn lwp_create_start_and_exit_fire_for_threads() {
    let run = trace(
        threads_program(),
        r#"proc:::lwp-create /pid == $target/ {
               printf("create %d %d\n", args[0]->pr_lwpid, args[1]->pr_pid == $target); }
           proc:::lwp-start /pid == $target/ { printf("start %d\n", tid); }
           proc:::start /pid == $target/ { printf("procstart %d\n", tid); }
           proc:::lwp-exit /pid == $target && tid != pid/ { printf("exit %d\n", tid); }"#,
    );
    let lwps: BTreeSet<String> = tagged(&run.stdout, "lwp")
        .into_iter()
        .map(String::from)
        .collect();
    assert_eq!(lwps.len(), 2, "{}", run.stdout);
    let set = |prefix: &str| -> BTreeSet<String> {
        tagged(&run.stdout, prefix)
            .into_iter()
            .map(String::from)
            .collect()
    };
    let created: BTreeSet<String> = lwps.iter().map(|t| format!("{t} 1")).collect();
    assert_eq!(set("create"), created, "{}", run.stdout);
    assert_eq!(set("start"), lwps, "{}", run.stdout);
    assert_eq!(set("exit"), lwps, "{}", run.stdout);
    // Threads are not processes.
    assert!(set("procstart").is_empty(), "{}", run.stdout);
}

/// `@name[tid] = count()` rows printed as `name tid count`.
fn counts(out: &str, name: &str) -> BTreeMap<i64, i64> {
    tagged(out, name)
        .into_iter()
        .map(|l| {
            let mut w = l.split_whitespace().map(|x| x.parse::<i64>().unwrap());
            (w.next().unwrap(), w.next().unwrap())
        })
        .collect()
}

#[test]
fn off_cpu_pairs_with_on_cpu_per_thread() {
    let cmd = script("oncpu", "for i in 1 2 3 4 5 6; do sleep 0.02; done\n");
    let run = trace(
        &cmd,
        r#"sched:::on-cpu /pid == $target/ { @on[tid] = count(); self->on = 1; }
           sched:::off-cpu /pid == $target/ { @off[tid] = count(); }
           sched:::off-cpu /args[1]->pr_pid == $target/ { @next[args[0]->pr_lwpid] = count(); }
           sched:::on-cpu /pid == $target && curlwpsinfo->pr_lwpid != tid/ { @bad = count(); }
           END { printa("on %d %@d\n", @on); printa("off %d %@d\n", @off);
                 printa("next %d %@d\n", @next); printa("bad %@d\n", @bad); }"#,
    );
    let on = counts(&run.stdout, "on");
    let off = counts(&run.stdout, "off");
    let next = counts(&run.stdout, "next");
    assert_eq!(on.len(), 1, "{}", run.stdout);
    for (tid, n_off) in &off {
        let n_on = on.get(tid).copied().unwrap_or(0);
        // The shell waits for six sleeps: it goes off CPU at least six times.
        assert!(*n_off >= 6, "{}", run.stdout);
        assert!((n_off - n_on).abs() <= 1, "{}", run.stdout);
        // off-cpu's args[0] of the thread going on CPU: the switches to it.
        let n_next = next.get(tid).copied().unwrap_or(0);
        assert!((n_next - n_on).abs() <= 1, "{}", run.stdout);
    }
    assert!(tagged(&run.stdout, "bad").iter().all(|b| b.trim() == "0"));
}

#[test]
fn wakeup_names_the_sleeping_child() {
    let cmd = script("wakeup", "sleep 0.1 &\necho child $!\nwait\n");
    let run = trace(
        &cmd,
        r#"sched:::wakeup /args[1]->pr_ppid == $target && args[1]->pr_fname == "sleep"/ {
               @w[args[1]->pr_pid, args[0]->pr_lwpid] = count(); }
           sched:::sleep /ppid == $target && execname == "sleep"/ { @s[pid] = count(); }
           END { printa("wakeup %d %d %@d\n", @w); printa("sleep %d %@d\n", @s); }"#,
    );
    let child = printed(&run.stdout, "child");
    let woken = tagged(&run.stdout, "wakeup");
    assert_eq!(woken.len(), 1, "{}", run.stdout);
    let w: Vec<i64> = woken[0]
        .split_whitespace()
        .map(|x| x.parse().unwrap())
        .collect();
    // The sleeping child, woken at least once (by its timer), as a process and a thread.
    assert_eq!((w[0], w[1]), (child, child), "{}", run.stdout);
    assert!(w[2] >= 1, "{}", run.stdout);
    let slept = counts(&run.stdout, "sleep");
    assert!(
        slept.get(&child).copied().unwrap_or(0) >= 1,
        "{}",
        run.stdout
    );
}

#[test]
fn surrender_fires_for_each_sched_yield() {
    let cmd = script(
        "yield",
        "exec python3 -c 'import os\nfor _ in range(3): os.sched_yield()'\n",
    );
    let run = trace(
        &cmd,
        r#"sched:::surrender /pid == $target/ {
               @[args[1]->pr_fname, args[0]->pr_lwpid == tid] = count(); }
           END { printa("yield %s %d %@d\n", @); }"#,
    );
    assert_eq!(
        tagged(&run.stdout, "yield"),
        ["python3 1 3"],
        "{}",
        run.stdout
    );
}

#[test]
fn probes_are_listed_with_translated_argument_types() {
    let run = dtrace(&["-lv", "-n", "proc:::signal-send", "-n", "sched:::dequeue"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    for want in [
        "proc           vmlinux                                   signal-send",
        "\t\targs[0]: lwpsinfo_t *\n\t\targs[1]: psinfo_t *\n\t\targs[2]: int\n",
        "\t\targs[2]: cpuinfo_t *\n\t\targs[3]: int\n",
    ] {
        assert!(run.stdout.contains(want), "{want:?} in:\n{}", run.stdout);
    }
    let all = dtrace(&["-l", "-P", "proc", "-P", "sched"]);
    let names: BTreeSet<&str> = all
        .stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().last())
        .collect();
    for n in [
        "create",
        "exec",
        "exec-failure",
        "exec-success",
        "exit",
        "lwp-create",
        "lwp-exit",
        "lwp-start",
        "signal-clear",
        "signal-discard",
        "signal-handle",
        "signal-send",
        "start",
        "change-pri",
        "dequeue",
        "enqueue",
        "off-cpu",
        "on-cpu",
        "preempt",
        "remain-cpu",
        "sleep",
        "surrender",
        "tick",
        "wakeup",
    ] {
        assert!(names.contains(n), "{n} missing from:\n{}", all.stdout);
    }
}

#[test]
fn without_the_library_a_translated_argument_is_an_error() {
    let run = dtrace(&[
        "-xnolibs",
        "-n",
        "proc:::create { trace(args[0]->pr_pid); }",
    ]);
    assert_eq!(run.status, 1);
    assert!(
        run.stderr
            .contains("proc:vmlinux::create args[0] = xlate <psinfo_t *> (args[1])"),
        "{}",
        run.stderr
    );
}

//! The `proc` provider: process and thread life cycle and signals, as DTrace's `proc`
//! probes, mapped onto Linux's BTF raw tracepoints (see [`crate::mapped`]). Arguments are
//! translated by the D library's translators (`psinfo_t`, `lwpsinfo_t` in `procfs.d`) and
//! use its constants (`CLD_*` in `signal.d`).
//!
//! | probe | fires on | in whose context |
//! |---|---|---|
//! | `exec` | `sys_enter` of `execve`/`execveat` | the caller, before the new image |
//! | `exec-success` | `sched_process_exec` | the new image |
//! | `exec-failure` | `sys_exit` of `execve`/`execveat` returning an error | the caller |
//! | `exit` | `sched_process_exit` of a process's last thread (`group_dead`) | the exiting thread |
//! | `create` | `sched_process_fork` of a new process (tid = tgid) | the parent |
//! | `start`, `lwp-start` | `sys_exit` of `clone`/`clone3`/`fork`/`vfork` returning 0 | the new process / thread |
//! | `lwp-create` | `sched_process_fork` | the creating thread |
//! | `lwp-exit` | `sched_process_exit` | the exiting thread |
//! | `signal-send` | `signal_generate` | the sender |
//! | `signal-discard` | `signal_generate` of a signal the target ignores | the sender |
//! | `signal-handle` | `signal_deliver` | the receiving thread |
//! | `signal-clear` | `sys_exit` of `rt_sigtimedwait` returning a signal | the waiting thread |

use crate::mapped::{Base, Def};
use crate::Probe;

/// The provider's name.
pub const PROVIDER: &str = "proc";

/// `sys_exit` of `execve` (59) or `execveat` (322), x86_64 numbers, with an error.
const EXEC_FAILURE: &str = "(args[0]->orig_ax == 59 || args[0]->orig_ax == 322) && args[1] < 0";
/// A new task's first return to user space: `clone`, `fork`, `vfork`, `clone3` returning 0
/// in the child (the child's registers are a copy of the parent's, `orig_ax` included).
const CHILD_RETURN: &str = "args[1] == 0 && (args[0]->orig_ax == 56 || args[0]->orig_ax == 57 || args[0]->orig_ax == 58 || args[0]->orig_ax == 435)";
/// The same, in a new process (its first thread).
const START: &str = "args[1] == 0 && (args[0]->orig_ax == 56 || args[0]->orig_ax == 57 || args[0]->orig_ax == 58 || args[0]->orig_ax == 435) && pid == tid";

/// The signal `signal_deliver` delivers: a signal whose default action ends the process
/// arrives as `SIGKILL` (the kernel turns it into a group exit), the signal itself kept in
/// the process's `group_exit_code` (its low 7 bits; an `exit_group` leaves them 0).
const SIGNAL_HANDLED: &str = "args[0] == 9 && (curthread->signal->group_exit_code & 0x7f) != 0 ? curthread->signal->group_exit_code & 0x7f : args[0]";

const DEFS: &[Def] = &[
    Def {
        name: "create",
        base: Base::Raw("sched_process_fork"),
        filter: Some("args[1]->pid == args[1]->tgid"),
        fewer_args: None,
        args: &[("psinfo_t *", "xlate <psinfo_t *> (args[1])")],
    },
    Def {
        name: "exec",
        base: Base::Raw("sys_enter"),
        filter: Some("args[1] == 59 || args[1] == 322"),
        fewer_args: None,
        args: &[(
            "string",
            "copyinstr(args[1] == 59 ? args[0]->di : args[0]->si)",
        )],
    },
    Def {
        name: "exec-failure",
        base: Base::Raw("sys_exit"),
        filter: Some(EXEC_FAILURE),
        fewer_args: None,
        // The system call's return value, `-errno`, as DTrace gives it.
        args: &[("int", "(int)args[1]")],
    },
    Def {
        name: "exec-success",
        base: Base::Raw("sched_process_exec"),
        filter: None,
        fewer_args: None,
        args: &[],
    },
    Def {
        name: "exit",
        base: Base::Raw("sched_process_exit"),
        filter: Some("args[1]"),
        // Before `group_dead` was passed (6.12 and older), the count of the process's live
        // threads has already dropped to 0 when its last thread gets here.
        fewer_args: Some((1, "args[0]->signal->live.counter == 0")),
        args: &[(
            "int",
            "(args[0]->exit_code & 0x7f) == 0 ? CLD_EXITED : (args[0]->exit_code & 0x80) ? CLD_DUMPED : CLD_KILLED",
        )],
    },
    Def {
        name: "lwp-create",
        base: Base::Raw("sched_process_fork"),
        filter: None,
        fewer_args: None,
        args: &[
            ("lwpsinfo_t *", "xlate <lwpsinfo_t *> (args[1])"),
            ("psinfo_t *", "xlate <psinfo_t *> (args[1])"),
        ],
    },
    Def {
        name: "lwp-exit",
        base: Base::Raw("sched_process_exit"),
        filter: None,
        fewer_args: None,
        args: &[],
    },
    Def {
        name: "lwp-start",
        base: Base::Raw("sys_exit"),
        filter: Some(CHILD_RETURN),
        fewer_args: None,
        args: &[],
    },
    Def {
        name: "signal-clear",
        base: Base::Raw("sys_exit"),
        filter: Some("args[0]->orig_ax == 128 && args[1] > 0"),
        fewer_args: None,
        args: &[("int", "(int)args[1]")],
    },
    Def {
        name: "signal-discard",
        base: Base::Raw("signal_generate"),
        // `result` is `TRACE_SIGNAL_IGNORED`.
        filter: Some("args[4] == 1"),
        fewer_args: None,
        args: &[
            ("lwpsinfo_t *", "xlate <lwpsinfo_t *> (args[2])"),
            ("psinfo_t *", "xlate <psinfo_t *> (args[2])"),
            ("int", "args[0]"),
        ],
    },
    Def {
        name: "signal-handle",
        base: Base::Raw("signal_deliver"),
        filter: None,
        fewer_args: None,
        args: &[
            ("int", SIGNAL_HANDLED),
            ("struct kernel_siginfo *", "args[1]"),
            ("uintptr_t", "(uintptr_t)args[2]->sa.sa_handler"),
        ],
    },
    Def {
        name: "signal-send",
        base: Base::Raw("signal_generate"),
        filter: None,
        fewer_args: None,
        args: &[
            ("lwpsinfo_t *", "xlate <lwpsinfo_t *> (args[2])"),
            ("psinfo_t *", "xlate <psinfo_t *> (args[2])"),
            ("int", "args[0]"),
        ],
    },
    Def {
        name: "start",
        base: Base::Raw("sys_exit"),
        filter: Some(START),
        fewer_args: None,
        args: &[],
    },
];

/// The `proc` probes this kernel can supply, numbered from `first_id`.
pub fn probes(first_id: u32) -> Vec<Probe> {
    crate::mapped::probes(PROVIDER, DEFS, first_id)
}

/// The probes this kernel cannot have (their tracepoint is missing).
pub fn missing() -> Vec<crate::mapped::Missing> {
    crate::mapped::missing(PROVIDER, DEFS)
}

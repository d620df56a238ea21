//! The `sched` provider: CPU scheduling, as DTrace's `sched` probes, mapped onto Linux's
//! BTF raw tracepoints (see [`crate::mapped`]), with arguments translated by the D
//! library (`lwpsinfo_t`, `psinfo_t` in `procfs.d`, `cpuinfo_t` in `sched.d`).
//!
//! Linux's `sched_switch` fires in the outgoing thread, before the switch: `off-cpu`,
//! `sleep`, `preempt` and `dequeue` fire there. `on-cpu` and `remain-cpu` fire at the
//! `sched_exit_tp` tracepoint at the end of `__schedule()`, which runs in the thread that
//! now has the CPU (its `is_switch` argument says whether the CPU changed threads), so
//! `curthread`, `pid`, `execname` and `curpsinfo` there are the incoming thread's. A new
//! thread's very first run starts in `ret_from_fork`, not at the end of `__schedule()`,
//! so `on-cpu` does not fire for it (`proc:::lwp-start` does, right after). Kernels without
//! `sched_exit_tp` (6.12 and older) fire `on-cpu` by a kprobe on `finish_task_switch`, which
//! also runs in the incoming thread; they have no `remain-cpu`.

use crate::mapped::{Base, Def};
use crate::Probe;

/// The provider's name.
pub const PROVIDER: &str = "sched";

/// `sched_switch (bool preempt, prev, next, unsigned int prev_state)`: the outgoing thread
/// blocks (it is not preempted and its state is not `TASK_RUNNING`).
const BLOCKS: &str = "!args[0] && args[3] != 0";

/// `sched:::tick`: 100 times a second on every CPU, like Solaris's clock.
const TICK_NS: u64 = 10_000_000;

const DEFS: &[Def] = &[
    Def {
        name: "change-pri",
        base: Base::Raw("sched_pi_setprio"),
        filter: None,
        fewer_args: None,
        args: &[
            ("lwpsinfo_t *", "xlate <lwpsinfo_t *> (args[0])"),
            ("psinfo_t *", "xlate <psinfo_t *> (args[0])"),
            (
                "int",
                "(int)((uintptr_t)args[1] != 0 && args[1]->prio < args[0]->normal_prio ? args[1]->prio : args[0]->normal_prio)",
            ),
        ],
    },
    Def {
        name: "dequeue",
        base: Base::Raw("sched_switch"),
        filter: Some(BLOCKS),
        fewer_args: None,
        args: &[
            ("lwpsinfo_t *", "xlate <lwpsinfo_t *> (args[1])"),
            ("psinfo_t *", "xlate <psinfo_t *> (args[1])"),
            ("cpuinfo_t *", "xlate <cpuinfo_t *> (cpu)"),
            // Oracle's `dequeue_task` flags: a thread blocking is DEQUEUE_SLEEP.
            ("int", "1"),
        ],
    },
    Def {
        name: "enqueue",
        base: Base::Raw("sched_wakeup"),
        filter: None,
        fewer_args: None,
        args: &[
            ("lwpsinfo_t *", "xlate <lwpsinfo_t *> (args[0])"),
            ("psinfo_t *", "xlate <psinfo_t *> (args[0])"),
            (
                "cpuinfo_t *",
                "xlate <cpuinfo_t *> ((int)args[0]->thread_info.cpu)",
            ),
        ],
    },
    Def {
        name: "off-cpu",
        base: Base::Raw("sched_switch"),
        filter: None,
        fewer_args: None,
        args: &[
            ("lwpsinfo_t *", "xlate <lwpsinfo_t *> (args[2])"),
            ("psinfo_t *", "xlate <psinfo_t *> (args[2])"),
        ],
    },
    Def {
        name: "on-cpu",
        base: Base::Raw("sched_exit_tp"),
        filter: Some("args[0]"),
        fewer_args: None,
        args: &[],
    },
    Def {
        name: "preempt",
        base: Base::Raw("sched_switch"),
        filter: Some("args[0] || args[3] == 0"),
        fewer_args: None,
        args: &[],
    },
    Def {
        name: "remain-cpu",
        base: Base::Raw("sched_exit_tp"),
        filter: Some("!args[0]"),
        fewer_args: None,
        args: &[],
    },
    Def {
        name: "sleep",
        base: Base::Raw("sched_switch"),
        // Not a thread that is dying (TASK_DEAD).
        filter: Some("!args[0] && args[3] != 0 && (args[3] & 0x80) == 0"),
        fewer_args: None,
        args: &[],
    },
    Def {
        name: "surrender",
        base: Base::Raw("sys_enter"),
        // `sys_enter (struct pt_regs *regs, long id)`: x86_64's sched_yield.
        filter: Some("args[1] == 24"),
        fewer_args: None,
        args: &[
            ("lwpsinfo_t *", "xlate <lwpsinfo_t *> (curthread)"),
            ("psinfo_t *", "xlate <psinfo_t *> (curthread)"),
        ],
    },
    Def {
        name: "tick",
        base: Base::Timer { period_ns: TICK_NS },
        filter: Some("tid != 0"),
        fewer_args: None,
        args: &[
            ("lwpsinfo_t *", "xlate <lwpsinfo_t *> (curthread)"),
            ("psinfo_t *", "xlate <psinfo_t *> (curthread)"),
        ],
    },
    Def {
        name: "wakeup",
        base: Base::Raw("sched_waking"),
        filter: None,
        fewer_args: None,
        args: &[
            ("lwpsinfo_t *", "xlate <lwpsinfo_t *> (args[0])"),
            ("psinfo_t *", "xlate <psinfo_t *> (args[0])"),
        ],
    },
];

/// The `sched` probes this kernel can supply, numbered from `first_id`.
pub fn probes(first_id: u32) -> Vec<Probe> {
    let mut probes = crate::mapped::probes(PROVIDER, DEFS, first_id);
    if !probes.iter().any(|p| p.site.name == "on-cpu") {
        let id = first_id + probes.len() as u32;
        probes.extend(crate::mapped::kprobe_probe(
            PROVIDER,
            "on-cpu",
            ON_CPU_FUNCTION,
            id,
        ));
    }
    probes
}

/// Where `on-cpu` fires on kernels without `sched_exit_tp` (6.12 and older): the function
/// that ends a context switch, in the incoming thread (not after its very first run, as at
/// `sched_exit_tp`), by kprobe.
const ON_CPU_FUNCTION: &str = "finish_task_switch";

/// The probes this kernel cannot have (their tracepoint is missing, and no kprobe stands in).
pub fn missing() -> Vec<crate::mapped::Missing> {
    let on_cpu_kprobe = crate::mapped::kprobe_symbol(ON_CPU_FUNCTION).is_some();
    crate::mapped::missing(PROVIDER, DEFS)
        .into_iter()
        .filter(|m| !(m.name == "on-cpu" && on_cpu_kprobe))
        .collect()
}

//! Helper programs the probes' programs rely on, loaded only when a script needs them: a
//! `sched_switch` program keeping per-CPU on-CPU bases for `vtimestamp`, and
//! `sched_process_fork`/`sched_process_exit` programs keeping the follow-fork family map.

use dtrace_ebpf::*;

use crate::emit::{Code, Emitter};
use crate::program::{MapId, VtimeSlot};

/// The `tp_btf` program on `sched_switch` (`ctx` = `[preempt, prev, next, prev_state]`)
/// that fills this CPU's [`VtimeSlot`] for the thread going on CPU: its thread id, the time
/// and its `se.sum_exec_runtime`, exact at this point (the scheduler brought it up to date
/// when the thread last went off CPU). `pid` and `sum` are the members' offsets in
/// `struct task_struct`; `next` is a trusted BTF pointer, so they are read directly.
pub(crate) fn sched_switch_helper(
    map: MapId,
    pid: u32,
    sum: u32,
) -> std::result::Result<Code, String> {
    let offset = |o: u32| i16::try_from(o).map_err(|_| format!("task_struct offset {o} too large"));
    let (pid, sum) = (offset(pid)?, offset(sum)?);
    let mut e = Emitter::new();
    let out = e.label();
    e.emit(Insn::ldx(Size::DW, R6, R1, 16));
    e.emit(Insn::st(Size::W, R10, -8, 0));
    e.ld_map(R1, map);
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -8));
    e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
    e.jmp_imm(BPF_JEQ, R0, 0, out);
    e.emit(Insn::mov64_reg(R7, R0));
    e.emit(Insn::ldx(Size::W, R1, R6, pid));
    e.emit(Insn::stx(Size::W, R7, VtimeSlot::TID, R1));
    e.emit(Insn::ldx(Size::DW, R1, R6, sum));
    e.emit(Insn::stx(Size::DW, R7, VtimeSlot::SUM, R1));
    e.emit(Insn::call(helpers::KTIME_GET_NS));
    e.emit(Insn::stx(Size::DW, R7, VtimeSlot::SINCE, R0));
    e.bind(out);
    e.emit(Insn::mov64_imm(R0, 0));
    e.emit(Insn::exit());
    e.finish()
}

/// The `tp_btf` program on `sched_process_fork` (`ctx` = `[parent, child]`, trusted task
/// pointers): when the parent's tgid is in the follow map, the child's tgid joins with the
/// same family. `tgid` is the offset of `task_struct.tgid`.
pub(crate) fn process_fork_helper(map: MapId, tgid: i16) -> Emitter {
    let mut e = Emitter::new();
    let out = e.label();
    e.emit(Insn::ldx(Size::DW, R6, R1, 0));
    e.emit(Insn::ldx(Size::DW, R7, R1, 8));
    e.emit(Insn::ldx(Size::W, R1, R6, tgid));
    e.emit(Insn::stx(Size::W, R10, -8, R1));
    e.ld_map(R1, map);
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -8));
    e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
    e.jmp_imm(BPF_JEQ, R0, 0, out);
    e.emit(Insn::ldx(Size::W, R1, R0, 0));
    e.emit(Insn::stx(Size::W, R10, -16, R1));
    e.emit(Insn::ldx(Size::W, R1, R7, tgid));
    e.emit(Insn::stx(Size::W, R10, -8, R1));
    e.ld_map(R1, map);
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -8));
    e.emit(Insn::mov64_reg(R3, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R3, -16));
    e.emit(Insn::mov64_imm(R4, 0));
    e.emit(Insn::call(helpers::MAP_UPDATE_ELEM));
    e.bind(out);
    e.emit(Insn::mov64_imm(R0, 0));
    e.emit(Insn::exit());
    e
}

/// Offsets the exit helper reads: `task_struct.tgid`, `task_struct.signal` and
/// `signal_struct.live`.
#[derive(Clone, Copy)]
pub(crate) struct ExitOffsets {
    pub tgid: i16,
    pub signal: i16,
    pub live: i16,
}

/// The `tp_btf` program on `sched_process_exit` (`ctx[0]` the task): when the process's last
/// thread exits (its `signal->live` count is already 0 there; the tracepoint's own
/// `group_dead` argument exists only in newer kernels than 6.12), its tgid leaves the follow
/// map. Two threads of a process exiting at once may both see 0: the second delete finds
/// nothing, and no process leaves the map while a thread of it lives.
pub(crate) fn process_exit_helper(map: MapId, offsets: ExitOffsets) -> Emitter {
    let mut e = Emitter::new();
    let out = e.label();
    e.emit(Insn::ldx(Size::DW, R6, R1, 0));
    e.emit(Insn::ldx(Size::DW, R2, R6, offsets.signal));
    e.emit(Insn::ldx(Size::W, R2, R2, offsets.live));
    e.jmp_imm(BPF_JNE, R2, 0, out);
    e.emit(Insn::ldx(Size::W, R1, R6, offsets.tgid));
    e.emit(Insn::stx(Size::W, R10, -8, R1));
    e.ld_map(R1, map);
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -8));
    e.emit(Insn::call(helpers::MAP_DELETE_ELEM));
    e.bind(out);
    e.emit(Insn::mov64_imm(R0, 0));
    e.emit(Insn::exit());
    e
}

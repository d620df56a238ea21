//! What the probe context gives: built-in variables (`timestamp pid tid execname
//! probefunc ...`, read from helpers, the probe context, the current task through BTF
//! offsets, or constants of the probe), `argN` and `args[N]` as each kind of probe holds
//! them. In a system call group program `probefunc`, `id` and `epid` are looked up by the
//! call's number, and the arguments come from the call's registers.
//!
//! `proc` and `sched` probes run their definitions' expressions ([`ExprKind::InBase`]) with
//! the probe's context set to the base probe ([`Gen::in_base`]), so their `args[1]` is the
//! raw tracepoint's.
//!
//! [`ExprKind::InBase`]: dtrace_typing::ir::ExprKind::InBase

use dtrace_ebpf::*;
use dtrace_frontend::{CompileError, Result, Span};
use dtrace_typing::ir::Builtin;

use super::regs::{self, CTX_SLOT, KEY_SLOT, SCRATCH};
use super::{Gen, Val};
use crate::program::{
    FieldKind, OperandLocation, ProbeContext, SyscallGroup, TracepointField, UprobeKind,
    UsdtOperand,
};
use crate::types::{self, kernel, Type};

/// `x86_64` `struct pt_regs` offsets inside `struct bpf_perf_event_data`.
pub(super) const PT_REGS_IP: i16 = 16 * 8;
const PT_REGS_CS: i16 = 17 * 8;
/// `struct pt_regs` offsets of the x86_64 calling convention's argument registers
/// (`rdi rsi rdx rcx r8 r9`) and of the return value (`rax`).
const PT_REGS_ARGS: [i16; 6] = [112, 104, 96, 88, 72, 64];
const PT_REGS_AX: i16 = 80;
pub(super) const PT_REGS_SP: i16 = 19 * 8;
/// `struct pt_regs` offset of `rbp`.
pub(super) const PT_REGS_BP: i16 = 4 * 8;
/// `struct pt_regs` offsets of the x86_64 system call arguments (`rdi rsi rdx r10 r8 r9`).
const PT_REGS_SYSCALL_ARGS: [i32; 6] = [112, 104, 96, 56, 72, 64];

/// The most generations `progenyof()` climbs.
const PROGENY_DEPTH: i32 = 64;

impl Gen<'_, '_> {
    /// `caller` / `ucaller` (`user`): the second frame of the kernel or user stack, 0 when
    /// the stack has fewer frames. At a `pid` function entry `ucaller` is the return
    /// address on top of the user stack: the function has not saved its frame pointer
    /// yet, so a frame-pointer walk would name the caller's caller (or garbage, in code
    /// built without frame pointers).
    pub(crate) fn caller(&mut self, user: bool, ty: &Type, span: Span) -> Result<Val> {
        let at_entry = matches!(&self.probe.context, ProbeContext::Uprobe(u) if u.kind == UprobeKind::Entry)
            && self.probe.name == "entry";
        if user && at_entry {
            self.e.emit(Insn::ldx(Size::DW, R1, R10, regs::CTX_SLOT));
            self.e.emit(Insn::ldx(Size::DW, R3, R1, PT_REGS_SP));
            self.read_user_operand(8);
            let v = self.push(span)?;
            regs::write(&mut self.e, v, R0);
            return Ok(Val {
                reg: v,
                ty: ty.clone(),
            });
        }
        let buf = self.scratch(16);
        self.e.emit(Insn::ldx(Size::DW, R1, R10, regs::CTX_SLOT));
        self.scratch_addr(R2, buf);
        self.e.emit(Insn::mov64_imm(R3, 16));
        self.e.emit(Insn::mov64_imm(
            R4,
            if user {
                super::actions::BPF_F_USER_STACK
            } else {
                0
            },
        ));
        self.e.emit(Insn::call(helpers::GET_STACK));
        let at = self.small(buf + 8);
        self.e.emit(Insn::ldx(Size::DW, R1, SCRATCH, at));
        self.e.emit(Insn::jmp_imm(BPF_JSGE, R0, 16, 1));
        self.e.emit(Insn::mov64_imm(R1, 0));
        let v = self.push(span)?;
        regs::write(&mut self.e, v, R1);
        Ok(Val {
            reg: v,
            ty: ty.clone(),
        })
    }

    /// `progenyof(pid)`: 1 if the current process or one of its ancestors (by
    /// `real_parent`, at most [`PROGENY_DEPTH`] generations) has process id `pid`.
    pub(crate) fn progenyof(&mut self, pid: &dtrace_typing::ir::Expr, span: Span) -> Result<Val> {
        let tgid = self.member_offset("task_struct", "tgid", span)?;
        let parent = self.member_offset("task_struct", "real_parent", span)?;
        let v = self.expr(pid)?;
        let count = self.push(span)?;
        let task = self.push(span)?;
        let (top, yes, no, done) = (
            self.e.label(),
            self.e.label(),
            self.e.label(),
            self.e.label(),
        );
        self.e.emit(Insn::mov64_imm(R1, 0));
        regs::write(&mut self.e, count, R1);
        self.e.emit(Insn::call(helpers::GET_CURRENT_TASK));
        regs::write(&mut self.e, task, R0);
        self.e.bind(top);
        let c = regs::read(&mut self.e, count, R1);
        self.e.jmp_imm(BPF_JGE, c, PROGENY_DEPTH, no);
        let t = regs::read(&mut self.e, task, R3);
        self.e.jmp_imm(BPF_JEQ, t, 0, no);
        self.read_kernel(t, tgid, 4);
        regs::read_into(&mut self.e, v.reg, R1);
        self.e.emit(Insn::alu32_reg(BPF_MOV, R1, R1));
        self.e.jmp_reg(BPF_JEQ, R0, R1, yes);
        let t = regs::read(&mut self.e, task, R3);
        self.read_kernel(t, parent, 8);
        let t = regs::read(&mut self.e, task, R1);
        self.e.jmp_reg(BPF_JEQ, R0, t, no);
        regs::write(&mut self.e, task, R0);
        let c = regs::read(&mut self.e, count, R1);
        self.e.emit(Insn::alu64_imm(BPF_ADD, c, 1));
        regs::write(&mut self.e, count, c);
        self.e.goto(top);
        self.e.bind(yes);
        self.e.emit(Insn::mov64_imm(R0, 1));
        self.e.goto(done);
        self.e.bind(no);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.bind(done);
        self.pop(task);
        self.pop(count);
        regs::write(&mut self.e, v.reg, R0);
        Ok(v)
    }

    /// `timestamp` into r0: read once per firing, then the same value.
    fn timestamp(&mut self) {
        let slot = self.small(
            self.timestamp
                .expect("the prologue made the timestamp slot"),
        );
        let done = self.e.label();
        self.e.emit(Insn::ldx(Size::DW, R0, SCRATCH, slot));
        self.e.jmp_imm(BPF_JNE, R0, 0, done);
        self.e.emit(Insn::call(helpers::KTIME_GET_NS));
        self.e.emit(Insn::stx(Size::DW, SCRATCH, slot, R0));
        self.e.bind(done);
    }

    /// The value of built-in variable `b`, of type `ty`.
    pub(crate) fn builtin(&mut self, b: Builtin, ty: &Type, span: Span) -> Result<Val> {
        match b {
            Builtin::Stackdepth | Builtin::Ustackdepth => {
                return self.stack_depth(b == Builtin::Ustackdepth, span)
            }
            Builtin::Caller | Builtin::Ucaller => {
                return self.caller(b == Builtin::Ucaller, ty, span)
            }
            Builtin::Probeprov | Builtin::Probemod | Builtin::Probefunc | Builtin::Probename => {
                if b == Builtin::Probefunc {
                    if let ProbeContext::Uprobe(u) = &self.probe.context {
                        if !u.functions.is_empty() {
                            let functions = u.functions.clone();
                            return self.function_by_cookie(&functions, span);
                        }
                    }
                    if let ProbeContext::SyscallGroup(g) = &self.probe.context {
                        let g = g.clone();
                        return self.function_by_nr(&g, span);
                    }
                }
                let text = match b {
                    Builtin::Probeprov => self.probe.provider.clone(),
                    Builtin::Probemod => self.probe.module.clone(),
                    Builtin::Probefunc => self.probe.function.clone(),
                    _ => self.probe.name.clone(),
                };
                return self.string_literal(text.as_bytes(), span);
            }
            Builtin::Id => match &self.probe.context {
                ProbeContext::SyscallGroup(g) => {
                    let mut ids = vec![0u32; g.table_len() as usize];
                    for (nr, id, _) in &g.calls {
                        ids[*nr as usize] = *id;
                    }
                    self.by_nr_table(&ids);
                }
                ProbeContext::Uprobe(u) if u.ids.len() > 1 => {
                    let ids = u.ids.clone();
                    self.by_cookie_table(&ids);
                }
                _ => return self.constant(self.probe.id as u64, ty.clone(), span),
            },
            Builtin::Epid => self.load_epid(R0),
            Builtin::Errno => return self.errno(span),
            Builtin::Execname => return self.execname(span),
            Builtin::Execargs => return self.execargs(span),
            Builtin::Timestamp => self.timestamp(),
            Builtin::Walltimestamp => {
                self.e.emit(Insn::call(helpers::KTIME_GET_NS));
                self.e.mov_const(R1, self.c.opts.wall_offset);
                self.e.emit(Insn::alu64_reg(BPF_ADD, R0, R1));
            }
            Builtin::Vtimestamp => self.vtimestamp(span)?,
            Builtin::Pid => {
                self.e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
                self.e.emit(Insn::alu64_imm(BPF_RSH, R0, 32));
            }
            Builtin::Tid => {
                self.e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
                self.e.emit(Insn::alu32_reg(BPF_MOV, R0, R0));
            }
            Builtin::Ppid => {
                self.task_member("task_struct", "real_parent", 8, span)?;
                let off = self.member_offset("task_struct", "tgid", span)?;
                self.read_kernel(R0, off, 4);
                super::expr::normalize(&mut self.e, R0, ty);
            }
            Builtin::Uid | Builtin::Gid => {
                self.e.emit(Insn::call(helpers::GET_CURRENT_UID_GID));
                if b == Builtin::Gid {
                    self.e.emit(Insn::alu64_imm(BPF_RSH, R0, 32));
                } else {
                    self.e.emit(Insn::alu32_reg(BPF_MOV, R0, R0));
                }
            }
            Builtin::Cpu => self.e.emit(Insn::call(helpers::GET_SMP_PROCESSOR_ID)),
            Builtin::Curthread => self.e.emit(Insn::call(helpers::GET_CURRENT_TASK)),
            Builtin::UserRegs => {
                self.e.emit(Insn::call(helpers::GET_CURRENT_TASK_BTF));
                self.e.emit(Insn::mov64_reg(R1, R0));
                self.e.emit(Insn::call(helpers::TASK_PT_REGS));
            }
            Builtin::StackPointer => {
                self.e.emit(Insn::ldx(Size::DW, R1, R10, CTX_SLOT));
                self.e.emit(Insn::ldx(Size::DW, R0, R1, PT_REGS_SP));
            }
            // The context pointer itself, kept as a number (dtrace runs with CAP_PERFMON,
            // under which the verifier lets a pointer be stored in a map).
            Builtin::TrampolineFrame => self.e.emit(Insn::ldx(Size::DW, R0, R10, CTX_SLOT)),
        }
        let v = self.push(span)?;
        regs::write(&mut self.e, v, R0);
        Ok(Val {
            reg: v,
            ty: ty.clone(),
        })
    }

    /// The address of this CPU's instance of the per-CPU kernel variable with BTF id `id`:
    /// the kernel resolves the id (`bpf_this_cpu_ptr`), and the pointer is made a number
    /// ([`Gen::as_number`]), so member offsets and indexes add to it as to any kernel
    /// address.
    pub(super) fn percpu_variable(&mut self, id: u32, ty: &Type, span: Span) -> Result<Val> {
        self.e
            .emit_all(Insn::ld_map(R1, BPF_PSEUDO_BTF_ID, id as i32, 0));
        self.e.emit(Insn::call(helpers::THIS_CPU_PTR));
        self.as_number(R0);
        let v = self.push(span)?;
        regs::write(&mut self.e, v, R0);
        Ok(Val {
            reg: v,
            ty: ty.clone(),
        })
    }

    /// The byte offset of member `path` of kernel struct `strukt`, or an error at `span`.
    pub(super) fn member_offset(&self, strukt: &str, path: &str, span: Span) -> Result<i32> {
        self.c
            .kernel
            .member_offset(strukt, path)
            .map(|o| o as i32)
            .ok_or_else(|| {
                CompileError::new(
                    "D_UNKNOWN",
                    format!("kernel type information lacks struct {strukt} member {path}"),
                    span,
                )
            })
    }

    /// `vtimestamp` into r0: the thread's on-CPU time when first read in this firing,
    /// then the same value (DTrace does not count a probe's own time).
    fn vtimestamp(&mut self, span: Span) -> Result<()> {
        let slot = self.small(
            self.timestamp
                .expect("the prologue made the timestamp slot")
                + 8,
        );
        let cached = self.e.label();
        self.e.emit(Insn::ldx(Size::DW, R0, SCRATCH, slot));
        self.e.jmp_imm(BPF_JNE, R0, 0, cached);
        self.thread_vtime(span)?;
        self.e.emit(Insn::stx(Size::DW, SCRATCH, slot, R0));
        self.e.bind(cached);
        Ok(())
    }

    /// r0 = the current thread's on-CPU time in nanoseconds, from this CPU's
    /// [`VtimeSlot`], which the `sched_switch` helper fills as a thread goes on CPU:
    /// `sum + (now - since)` while the slot names the current thread.
    ///
    /// The slot is read as `since`, `sum`, `tid`, then `now`, then `since` again: user probe
    /// programs can be preempted (they run with migration disabled only), and an unchanged
    /// `since` shows that no switch rewrote the slot meanwhile, so the values belong
    /// together and `now` lies in the thread's current stretch on CPU. A changed one is
    /// read once more, then given up for `se.sum_exec_runtime`.
    ///
    /// A slot never written (no switch on this CPU since tracing began: the thread has been
    /// running since before) is filled here with `se.sum_exec_runtime` and now — "first
    /// sight". That base misses the time the thread ran since the scheduler last updated
    /// its runtime (at most a tick); differences are exact until the thread next goes off
    /// CPU, and a difference that spans that switch counts the missed time (under a tick),
    /// once per thread running when tracing began. A slot naming another thread (only
    /// inside the scheduler, between the switch tracepoint and the switch) reads
    /// `se.sum_exec_runtime` as it is, without touching the slot.
    fn thread_vtime(&mut self, span: Span) -> Result<()> {
        use crate::program::VtimeSlot;
        let map = self.c.vtime_map(span)?;
        let slot = self.push(span)?;
        let since = self.push(span)?;
        let done = self.e.label();
        let first_sight = self.e.label();
        let fallback = self.e.label();
        self.e.emit(Insn::st(Size::W, R10, KEY_SLOT, 0));
        self.e.ld_map(R1, map);
        self.e.emit(Insn::mov64_reg(R2, R10));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R2, KEY_SLOT as i32));
        self.e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
        self.e.jmp_imm(BPF_JEQ, R0, 0, fallback);
        regs::write(&mut self.e, slot, R0);
        for attempt in 0..2 {
            let retry = if attempt == 0 {
                self.e.label()
            } else {
                fallback
            };
            // since; then KEY_SLOT = sum - since.
            regs::read_into(&mut self.e, slot, R1);
            self.e.emit(Insn::ldx(Size::DW, R2, R1, VtimeSlot::SINCE));
            self.e.jmp_imm(BPF_JEQ, R2, 0, first_sight);
            regs::write(&mut self.e, since, R2);
            self.e.emit(Insn::ldx(Size::DW, R3, R1, VtimeSlot::SUM));
            self.e.emit(Insn::alu64_reg(BPF_SUB, R3, R2));
            self.e.emit(Insn::stx(Size::DW, R10, KEY_SLOT, R3));
            // The slot must name this thread.
            self.e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
            regs::read_into(&mut self.e, slot, R1);
            self.e.emit(Insn::ldx(Size::W, R2, R1, VtimeSlot::TID));
            self.e.emit(Insn::alu32_reg(BPF_MOV, R0, R0));
            self.e.jmp_reg(BPF_JNE, R0, R2, fallback);
            self.e.emit(Insn::call(helpers::KTIME_GET_NS));
            regs::read_into(&mut self.e, slot, R1);
            self.e.emit(Insn::ldx(Size::DW, R2, R1, VtimeSlot::SINCE));
            let r = regs::read(&mut self.e, since, R3);
            self.e.jmp_reg(BPF_JNE, R2, r, retry);
            self.e.emit(Insn::ldx(Size::DW, R1, R10, KEY_SLOT));
            self.e.emit(Insn::alu64_reg(BPF_ADD, R0, R1));
            self.e.goto(done);
            if attempt == 0 {
                self.e.bind(retry);
            }
        }
        // First sight: the slot gets this thread, now and its runtime as the scheduler
        // last updated it.
        self.e.bind(first_sight);
        self.e.emit(Insn::call(helpers::KTIME_GET_NS));
        regs::write(&mut self.e, since, R0);
        self.task_member("task_struct", "se.sum_exec_runtime", 8, span)?;
        regs::read_into(&mut self.e, slot, R1);
        self.e.emit(Insn::stx(Size::DW, R1, VtimeSlot::SUM, R0));
        let r = regs::read(&mut self.e, since, R2);
        self.e.emit(Insn::stx(Size::DW, R1, VtimeSlot::SINCE, r));
        self.e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
        regs::read_into(&mut self.e, slot, R1);
        self.e.emit(Insn::stx(Size::W, R1, VtimeSlot::TID, R0));
        self.e.emit(Insn::ldx(Size::DW, R0, R1, VtimeSlot::SUM));
        self.e.goto(done);
        self.e.bind(fallback);
        self.task_member("task_struct", "se.sum_exec_runtime", 8, span)?;
        self.e.bind(done);
        self.pop(since);
        self.pop(slot);
        Ok(())
    }

    /// r0 = `size` bytes of the current task at member `path`.
    fn task_member(&mut self, strukt: &str, path: &str, size: i32, span: Span) -> Result<()> {
        let off = self.member_offset(strukt, path, span)?;
        self.e.emit(Insn::call(helpers::GET_CURRENT_TASK));
        self.read_kernel(R0, off, size);
        Ok(())
    }

    /// r0 = `size` bytes of kernel memory at `base + off` (0 if unreadable).
    fn read_kernel(&mut self, base: Reg, off: i32, size: i32) {
        self.e.emit(Insn::mov64_reg(R3, base));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R3, off));
        self.e.emit(Insn::st(Size::DW, R10, KEY_SLOT, 0));
        self.e.emit(Insn::mov64_reg(R1, R10));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, KEY_SLOT as i32));
        self.e.emit(Insn::mov64_imm(R2, size));
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
        self.e.emit(Insn::ldx(
            Size::from_bytes(size as usize),
            R0,
            R10,
            KEY_SLOT,
        ));
    }

    fn execname(&mut self, span: Span) -> Result<Val> {
        let buf = self.string_buffer(false);
        self.scratch_addr(R1, buf);
        self.e.emit(Insn::mov64_imm(R2, 16));
        self.e.emit(Insn::call(helpers::GET_CURRENT_COMM));
        let v = self.push(span)?;
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, v, R1);
        Ok(Val {
            reg: v,
            ty: Type::String,
        })
    }

    /// `execargs`: the current process's arguments as `ps` shows them, read from its
    /// memory (`mm->arg_start` to `arg_end`) with the NULs between them made blanks, cut
    /// at `strsize`; "" for a kernel thread or memory that cannot be read.
    fn execargs(&mut self, span: Span) -> Result<Val> {
        let size = self.strsize() as i32;
        let start_off = self.member_offset("mm_struct", "arg_start", span)?;
        let end_off = self.member_offset("mm_struct", "arg_end", span)?;
        let buf = self.string_buffer(false);
        self.st_byte(buf, 0);
        let done = self.e.label();
        self.task_member("task_struct", "mm", 8, span)?;
        self.e.jmp_imm(BPF_JEQ, R0, 0, done);
        let mm = self.push(span)?;
        regs::write(&mut self.e, mm, R0);
        self.read_kernel(R0, end_off, 8);
        let len = self.push(span)?;
        regs::write(&mut self.e, len, R0);
        regs::read_into(&mut self.e, mm, R0);
        self.read_kernel(R0, start_off, 8);
        // mm = arg_start; len = arg_end - arg_start, at most strsize characters.
        regs::write(&mut self.e, mm, R0);
        regs::read_into(&mut self.e, len, R2);
        self.e.emit(Insn::alu64_reg(BPF_SUB, R2, R0));
        let fits = self.e.label();
        let popped = self.e.label();
        self.e.jmp_imm(BPF_JSLE, R2, 0, popped);
        self.e.jmp_imm(BPF_JLE, R2, size - 1, fits);
        self.e.emit(Insn::mov64_imm(R2, size - 1));
        self.e.bind(fits);
        regs::write(&mut self.e, len, R2);
        self.scratch_addr(R1, buf);
        regs::read_into(&mut self.e, mm, R3);
        self.e.emit(Insn::call(helpers::PROBE_READ_USER));
        let read = self.e.label();
        self.e.jmp_imm(BPF_JEQ, R0, 0, read);
        self.st_byte(buf, 0);
        self.e.goto(popped);
        self.e.bind(read);
        // r4 = len, bounded again for the verifier; the NULs before the last byte become
        // blanks, and a NUL ends the copy.
        regs::read_into(&mut self.e, len, R4);
        self.e.jmp_imm(BPF_JGT, R4, size - 1, popped);
        let off = self.small(buf);
        self.e.emit(Insn::mov64_reg(R2, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R4));
        self.e.emit(Insn::st(Size::B, R2, off, 0));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R4, 1));
        let top = self.e.label();
        let next = self.e.label();
        self.e.emit(Insn::mov64_imm(R1, 0));
        self.e.bind(top);
        self.e.jmp_imm(BPF_JGE, R1, size - 1, popped);
        self.e.jmp_reg(BPF_JGE, R1, R4, popped);
        self.e.emit(Insn::mov64_reg(R2, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R1));
        self.e.emit(Insn::ldx(Size::B, R3, R2, off));
        self.e.jmp_imm(BPF_JNE, R3, 0, next);
        self.e.emit(Insn::st(Size::B, R2, off, b' ' as i32));
        self.e.bind(next);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.e.goto(top);
        self.e.bind(popped);
        self.pop(len);
        self.pop(mm);
        self.e.bind(done);
        let v = self.push(span)?;
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, v, R1);
        Ok(Val {
            reg: v,
            ty: Type::String,
        })
    }

    /// `argN` of the probe.
    pub(crate) fn arg(&mut self, n: u8, span: Span) -> Result<Val> {
        let n = n as i16;
        self.e.emit(Insn::ldx(Size::DW, R1, R10, CTX_SLOT));
        match &self.probe.context {
            ProbeContext::ArgArray if self.in_error_clauses => {
                // ERROR's arguments, which the fault tail put in scratch.
                let args = self.error_args.unwrap_or(0) as i16;
                self.e.emit(Insn::ldx(Size::DW, R0, SCRATCH, args + n * 8));
            }
            ProbeContext::ArgArray => {
                self.e.emit(Insn::ldx(Size::DW, R0, R1, n * 8));
            }
            ProbeContext::PerfEvent => {
                // arg0: the kernel PC when the sample hit the kernel; arg1: the user PC.
                self.e.emit(Insn::mov64_imm(R0, 0));
                if n <= 1 {
                    self.e.emit(Insn::ldx(Size::DW, R2, R1, PT_REGS_CS));
                    self.e.emit(Insn::alu64_imm(BPF_AND, R2, 3));
                    let skip_if = if n == 0 { BPF_JNE } else { BPF_JEQ };
                    self.e.emit(Insn::jmp_imm(skip_if, R2, 0, 1));
                    self.e.emit(Insn::ldx(Size::DW, R0, R1, PT_REGS_IP));
                }
            }
            ProbeContext::Tracepoint(layout) => {
                // A system call's return: arg0 and arg1 are both the return value.
                let index = if layout.syscall_return {
                    (n <= 1).then_some(0)
                } else {
                    Some(n as usize)
                };
                match index.and_then(|i| layout.args.get(i)).cloned() {
                    Some(f)
                        if matches!(
                            f.kind,
                            FieldKind::Int(_)
                                | FieldKind::Pointer
                                | FieldKind::KernelPointer { .. }
                        ) =>
                    {
                        self.load_field(&f)
                    }
                    // Strings and other non-scalar fields have no argN value: use args[N].
                    _ => self.e.emit(Insn::mov64_imm(R0, 0)),
                }
            }
            &ProbeContext::Function { btf_id, nargs, ret } => {
                // fbt: the arguments at entry; arg1 is the return value at return, and arg0
                // the return offset, which BTF trampolines do not know: -1, as Oracle's
                // DTrace says so.
                let slot = match (ret, n) {
                    (false, n) if (n as u32) < nargs => Some(n),
                    (true, 1) => Some(nargs as i16),
                    _ => None,
                };
                match slot {
                    Some(slot) => {
                        let ty = function_arg_type(btf_id, ret, n as usize);
                        self.btf_context_arg(slot, ty);
                    }
                    None if ret && n == 0 => self.e.emit(Insn::mov64_imm(R0, -1)),
                    None => self.e.emit(Insn::mov64_imm(R0, 0)),
                }
            }
            ProbeContext::BtfTracepoint(tp) => match tp.args.get(n as usize).copied() {
                Some(ty) => self.btf_context_arg(n, Some(ty)),
                // Past the prototype: the verifier refuses the read, and there is nothing.
                None => self.e.emit(Insn::mov64_imm(R0, 0)),
            },
            ProbeContext::Uprobe(u) => {
                let kind = u.kind.clone();
                let kernel = !u.kernel.is_empty();
                self.uprobe_arg(&kind, kernel, n);
            }
            // Handled above.
            ProbeContext::Mapped(_) => self.e.emit(Insn::mov64_imm(R0, 0)),
            ProbeContext::SyscallGroup(g) => {
                // Entry: the call's registers (args[0] of the context); return: arg0 and
                // arg1 are both the return value (args[1]).
                match (g.ret, PT_REGS_SYSCALL_ARGS.get(n as usize)) {
                    (false, Some(&off)) => {
                        self.e.emit(Insn::ldx(Size::DW, R1, R1, 0));
                        self.read_kernel(R1, off, 8);
                    }
                    (true, _) if n <= 1 => self.e.emit(Insn::ldx(Size::DW, R0, R1, 8)),
                    _ => self.e.emit(Insn::mov64_imm(R0, 0)),
                }
            }
        }
        let v = self.push(span)?;
        regs::write(&mut self.e, v, R0);
        Ok(Val {
            reg: v,
            ty: types::INT64,
        })
    }

    /// r0 = the u64 at `slot` of a tracing program's argument array (r1 = the context), an
    /// argument of BTF type `ty`. Pointers are copied out with `bpf_probe_read_kernel`
    /// rather than loaded: a direct load gives the verifier's trusted (possibly NULL) BTF
    /// pointer, on which D's integer arithmetic (`arg1 & 0xfff`, casts) is refused; the
    /// copy is a plain 64-bit value, and member access reads through it safely anyway.
    fn btf_context_arg(&mut self, slot: i16, ty: Option<u32>) {
        let pointer = match (kernel::vmlinux(), ty) {
            (Some(btf), Some(ty)) => btf.kind(btf.resolve(ty)) == dtrace_btf::Kind::Ptr,
            _ => true,
        };
        if pointer {
            self.e.emit(Insn::mov64_reg(R3, R1));
            self.e.emit(Insn::alu64_imm(BPF_ADD, R3, slot as i32 * 8));
            self.e.emit(Insn::st(Size::DW, R10, KEY_SLOT, 0));
            self.e.emit(Insn::mov64_reg(R1, R10));
            self.e.emit(Insn::alu64_imm(BPF_ADD, R1, KEY_SLOT as i32));
            self.e.emit(Insn::mov64_imm(R2, 8));
            self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
            self.e.emit(Insn::ldx(Size::DW, R0, R10, KEY_SLOT));
        } else {
            self.e.emit(Insn::ldx(Size::DW, R0, R1, slot * 8));
        }
    }

    /// r0 = argument `n` of a user-level probe, or of an fbt kprobe (`kernel`; r1 = the
    /// context, a `struct pt_regs`). Clobbers r1..r5.
    fn uprobe_arg(&mut self, kind: &UprobeKind, kernel: bool, n: i16) {
        match kind {
            UprobeKind::Entry => match PT_REGS_ARGS.get(n as usize) {
                Some(&off) => self.e.emit(Insn::ldx(Size::DW, R0, R1, off)),
                None => {
                    // The seventh argument on is on the stack, above the return address:
                    // `*(sp + 8 * (n - 5))` at the function's first instruction; 0 if the
                    // stack cannot be read.
                    self.e.emit(Insn::ldx(Size::DW, R3, R1, PT_REGS_SP));
                    self.e
                        .emit(Insn::alu64_imm(BPF_ADD, R3, 8 * (i32::from(n) - 5)));
                    self.e.emit(Insn::st(Size::DW, R10, KEY_SLOT, 0));
                    self.e.emit(Insn::mov64_reg(R1, R10));
                    self.e.emit(Insn::alu64_imm(BPF_ADD, R1, KEY_SLOT as i32));
                    self.e.emit(Insn::mov64_imm(R2, 8));
                    self.e.emit(Insn::call(if kernel {
                        helpers::PROBE_READ_KERNEL
                    } else {
                        helpers::PROBE_READ_USER
                    }));
                    self.e.emit(Insn::ldx(Size::DW, R0, R10, KEY_SLOT));
                }
            },
            UprobeKind::Return => match n {
                1 => self.e.emit(Insn::ldx(Size::DW, R0, R1, PT_REGS_AX)),
                // The return offset, which return probes do not know: -1 in the kernel, as
                // Oracle's DTrace says for fbt, 0 for pid.
                0 if kernel => self.e.emit(Insn::mov64_imm(R0, -1)),
                _ => self.e.emit(Insn::mov64_imm(R0, 0)),
            },
            UprobeKind::Usdt(specs) => {
                let operands: Vec<Option<&UsdtOperand>> =
                    specs.iter().map(|s| s.get(n as usize)).collect();
                match operands.as_slice() {
                    [] => self.e.emit(Insn::mov64_imm(R0, 0)),
                    [only] => self.usdt_operand(*only),
                    _ if operands.iter().all(|o| *o == operands[0]) => {
                        self.usdt_operand(operands[0])
                    }
                    _ => {
                        // Sites differ: the attach cookie is the index of the site's specs.
                        self.e.emit(Insn::call(helpers::GET_ATTACH_COOKIE));
                        let done = self.e.label();
                        let last = operands.len() - 1;
                        for (i, op) in operands.iter().enumerate() {
                            let next = self.e.label();
                            if i < last {
                                self.e.jmp_imm(BPF_JNE, R0, i as i32, next);
                            }
                            self.e.emit(Insn::ldx(Size::DW, R1, R10, CTX_SLOT));
                            self.usdt_operand(*op);
                            if i < last {
                                self.e.goto(done);
                            }
                            self.e.bind(next);
                        }
                        self.e.bind(done);
                    }
                }
            }
        }
    }

    /// r0 = one USDT operand (r1 = the context); 0 if the site has no such argument.
    fn usdt_operand(&mut self, op: Option<&UsdtOperand>) {
        let Some(op) = op else {
            self.e.emit(Insn::mov64_imm(R0, 0));
            return;
        };
        match &op.location {
            OperandLocation::Register { offset, high_byte } => {
                self.e.emit(Insn::ldx(Size::DW, R0, R1, *offset));
                if *high_byte {
                    self.e.emit(Insn::alu64_imm(BPF_RSH, R0, 8));
                }
            }
            OperandLocation::Immediate(v) => {
                self.e.mov_const(R0, *v as u64);
                return;
            }
            OperandLocation::Unknown => {
                self.e.emit(Insn::mov64_imm(R0, 0));
                return;
            }
            OperandLocation::Memory {
                base,
                index,
                scale,
                displacement,
            } => {
                self.e.emit(Insn::mov64_imm(R3, 0));
                if let Some(base) = base {
                    self.e.emit(Insn::ldx(Size::DW, R3, R1, *base));
                }
                if let Some(index) = index {
                    self.e.emit(Insn::ldx(Size::DW, R4, R1, *index));
                    self.e
                        .emit(Insn::alu64_imm(BPF_MUL, R4, (*scale).max(1) as i32));
                    self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R4));
                }
                self.e.mov_const(R4, *displacement as u64);
                self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R4));
                self.read_user_operand(op.size);
            }
            OperandLocation::PcRelative { delta } => {
                self.e.emit(Insn::ldx(Size::DW, R3, R1, PT_REGS_IP));
                self.e.mov_const(R4, *delta as u64);
                self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R4));
                self.read_user_operand(op.size);
            }
        }
        match (op.size, op.signed) {
            (8, _) => {}
            (size, true) => super::expr::sign_extend(&mut self.e, R0, size as i32),
            (4, false) => self.e.emit(Insn::alu32_reg(BPF_MOV, R0, R0)),
            (size, false) => self
                .e
                .emit(Insn::alu64_imm(BPF_AND, R0, (1i32 << (size * 8)) - 1)),
        }
    }

    /// r0 = `size` bytes of user memory at r3 (0 if unreadable).
    fn read_user_operand(&mut self, size: u8) {
        let size = size.clamp(1, 8);
        self.e.emit(Insn::st(Size::DW, R10, KEY_SLOT, 0));
        self.e.emit(Insn::mov64_reg(R1, R10));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, KEY_SLOT as i32));
        self.e.emit(Insn::mov64_imm(R2, size as i32));
        self.e.emit(Insn::call(helpers::PROBE_READ_USER));
        self.e.emit(Insn::ldx(
            Size::from_bytes(size as usize),
            R0,
            R10,
            KEY_SLOT,
        ));
    }

    /// `probefunc` of a probe standing for many functions: the name at index
    /// `bpf_get_attach_cookie()` of a table of string offsets in the read-only data.
    fn function_by_cookie(&mut self, functions: &[String], span: Span) -> Result<Val> {
        let offsets: Vec<u32> = functions
            .iter()
            .map(|f| self.c.rodata_bytes(f.as_bytes()))
            .collect();
        self.by_cookie_table(&offsets);
        self.rodata_string_at_r0(&offsets, span)
    }

    /// r0 = the u32 at index `bpf_get_attach_cookie()` of `table`, stored in the read-only
    /// data (`id` and `probefunc` of a probe standing for many functions).
    fn by_cookie_table(&mut self, table: &[u32]) {
        let off = self.rodata_u32_table(table);
        self.attach_cookie_below(table.len());
        self.e.emit(Insn::alu64_imm(BPF_LSH, R0, 2));
        self.e.ld_map_value(R1, self.c.core.rodata, off);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, R0));
        self.e.emit(Insn::ldx(Size::W, R0, R1, 0));
    }

    /// r0 = `bpf_get_attach_cookie(ctx)`, the index of the site that fired among `n` (0 for
    /// a cookie out of range, so tables indexed by it stay in bounds).
    pub(crate) fn attach_cookie_below(&mut self, n: usize) {
        self.e.emit(Insn::ldx(Size::DW, R1, R10, CTX_SLOT));
        self.e.emit(Insn::call(helpers::GET_ATTACH_COOKIE));
        let in_range = self.e.label();
        self.e.jmp_imm(BPF_JLT, R0, n.max(1) as i32, in_range);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.bind(in_range);
    }

    /// A u32 table stored in the read-only data; its offset there. (Stored through
    /// `rodata_string`, which copies the bytes whole, zero bytes included.)
    fn rodata_u32_table(&mut self, table: &[u32]) -> u32 {
        let bytes: Vec<u8> = table.iter().flat_map(|o| o.to_le_bytes()).collect();
        self.c.rodata_bytes(&bytes)
    }

    /// With r0 = one of `offsets` (string offsets in the read-only data), that string as a
    /// new value; an offset the verifier cannot bound by the largest reads as "".
    fn rodata_string_at_r0(&mut self, offsets: &[u32], span: Span) -> Result<Val> {
        let max = offsets.iter().copied().max().unwrap_or(0);
        let bounded = self.e.label();
        self.e.jmp_imm(BPF_JLE, R0, max as i32, bounded);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.bind(bounded);
        self.e.ld_map_value(R1, self.c.core.rodata, 0);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, R0));
        let v = self.push(span)?;
        regs::write(&mut self.e, v, R1);
        Ok(Val {
            reg: v,
            ty: Type::String,
        })
    }

    /// r0 = `table[nr]`, a u32 table by system call number in the read-only data (a group
    /// program).
    fn by_nr_table(&mut self, table: &[u32]) {
        let off = self.rodata_u32_table(table);
        self.by_syscall_nr(R0, table.len() as u32);
        self.e.ld_map_value(R1, self.c.core.rodata, off);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, R0));
        self.e.emit(Insn::ldx(Size::W, R0, R1, 0));
    }

    /// `probefunc` of a group program: the call's name, from a table by number of string
    /// offsets in the read-only data.
    fn function_by_nr(&mut self, g: &SyscallGroup, span: Span) -> Result<Val> {
        let mut offsets = vec![0u32; g.table_len() as usize];
        for (nr, _, name) in &g.calls {
            offsets[*nr as usize] = self.c.rodata_bytes(name.as_bytes());
        }
        self.by_nr_table(&offsets);
        self.rodata_string_at_r0(&offsets, span)
    }

    /// r0 = the integer or pointer field `f` of the tracepoint record (r1 = the context),
    /// sign-extended to 64 bits when the format says it is signed. A system call's entry
    /// loaded as fentry has the record's arguments in its `struct pt_regs`.
    fn load_field(&mut self, f: &TracepointField) {
        if let ProbeContext::Tracepoint(layout) = &self.probe.context {
            if layout.fentry.is_some() {
                let n = layout.args.iter().position(|a| a == f);
                match n.and_then(|n| PT_REGS_SYSCALL_ARGS.get(n)) {
                    Some(&off) => {
                        self.e.emit(Insn::ldx(Size::DW, R1, R1, 0));
                        self.read_kernel(R1, off, 8);
                    }
                    None => self.e.emit(Insn::mov64_imm(R0, 0)),
                }
                return;
            }
        }
        let size = match f.size {
            1 | 2 | 4 | 8 => f.size,
            _ => 8,
        };
        self.e.emit(Insn::ldx(
            Size::from_bytes(size as usize),
            R0,
            R1,
            f.offset as i16,
        ));
        if f.signed && size < 8 {
            super::expr::sign_extend(&mut self.e, R0, size as i32);
        }
    }

    /// `errno`: at a system call's return, `-ret` when the call failed; 0 everywhere else.
    fn errno(&mut self, span: Span) -> Result<Val> {
        let ret = match &self.probe.context {
            ProbeContext::Tracepoint(layout) if layout.syscall_return => layout.args.first(),
            _ => None,
        };
        let ret = ret.cloned();
        let group_return = matches!(&self.probe.context, ProbeContext::SyscallGroup(g) if g.ret);
        if ret.is_none() && !group_return {
            return self.constant(0, types::INT, span);
        }
        self.e.emit(Insn::ldx(Size::DW, R1, R10, CTX_SLOT));
        match ret {
            Some(f) => self.load_field(&f),
            // A group program at return: the return value is args[1] of the context.
            None => self.e.emit(Insn::ldx(Size::DW, R0, R1, 8)),
        }
        // r0 = ret < 0 ? -ret : 0
        self.e.emit(Insn::jmp_imm(BPF_JSLT, R0, 0, 2));
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.emit(Insn::ja(1));
        self.e.emit(Insn::alu64_imm(BPF_NEG, R0, 0));
        let v = self.push(span)?;
        regs::write(&mut self.e, v, R0);
        Ok(Val {
            reg: v,
            ty: types::INT,
        })
    }

    /// `args[n]` of the probe, of type `ty` as the typing pass found it: the field, BTF
    /// argument or USDT operand read natively (integers as 64-bit values, strings copied
    /// into scratch).
    pub(crate) fn probe_arg(&mut self, n: u8, ty: &Type, span: Span) -> Result<Val> {
        if let ProbeContext::Tracepoint(layout) = &self.probe.context {
            let index = if layout.syscall_return { 0 } else { n as usize };
            if let Some(f) = layout.args.get(index).cloned() {
                return self.field_value(&f, ty, span);
            }
        }
        let v = self.arg(n, span)?;
        Ok(Val {
            reg: v.reg,
            ty: ty.clone(),
        })
    }

    /// Run `f` with the probe's context set to the base probe of a `proc`/`sched` probe
    /// (a no-op for other probes): `args[]`, `argN` and the context pointer are then the
    /// base's.
    pub(crate) fn in_base<R>(&mut self, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        let ProbeContext::Mapped(m) = &self.probe.context else {
            return f(self);
        };
        let base = (*m.base).clone();
        let saved = std::mem::replace(&mut self.probe.context, base);
        let r = f(self);
        self.probe.context = saved;
        r
    }

    /// The value of tracepoint field `f`, of type `ty`: an integer or pointer as its
    /// native 64-bit value (which the typing pass converts), a string copied into scratch.
    fn field_value(&mut self, f: &TracepointField, ty: &Type, span: Span) -> Result<Val> {
        self.e.emit(Insn::ldx(Size::DW, R1, R10, CTX_SLOT));
        if matches!(f.kind, FieldKind::CharArray | FieldKind::DataLocString) {
            let buf = self.string_buffer(false);
            let strsize = self.strsize();
            if f.kind == FieldKind::CharArray {
                self.e.emit(Insn::mov64_reg(R3, R1));
                self.e.emit(Insn::alu64_imm(BPF_ADD, R3, f.offset as i32));
                self.e
                    .emit(Insn::mov64_imm(R2, f.size.clamp(1, strsize) as i32));
            } else {
                // The low 16 bits locate the string in the record.
                self.e.emit(Insn::ldx(Size::W, R3, R1, f.offset as i16));
                self.e.emit(Insn::alu64_imm(BPF_AND, R3, 0xffff));
                self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R1));
                self.e.emit(Insn::mov64_imm(R2, strsize as i32));
            }
            self.scratch_addr(R1, buf);
            self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
            let v = self.push(span)?;
            self.scratch_addr(R1, buf);
            regs::write(&mut self.e, v, R1);
            return Ok(Val {
                reg: v,
                ty: Type::String,
            });
        }
        self.load_field(f);
        let v = self.push(span)?;
        regs::write(&mut self.e, v, R0);
        Ok(Val {
            reg: v,
            ty: ty.clone(),
        })
    }
}

/// The BTF type of an fbt probe's `args[n]`: parameter `n` of function `btf_id` at entry,
/// its return type as `args[1]` at return; None when unknown (or `args[0]` at return).
fn function_arg_type(btf_id: u32, ret: bool, n: usize) -> Option<u32> {
    let proto = kernel::vmlinux()?.func_proto(btf_id)?;
    match (ret, n) {
        (false, n) => proto.params.get(n).map(|p| p.ty),
        (true, 1) => Some(proto.ret),
        _ => None,
    }
}

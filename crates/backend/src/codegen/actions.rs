//! Actions: what a clause records for the consumer (`trace`, `printf`, `exit`, `stack`,
//! `ustack`, symbols) and asks of it (`printa`, `clear`, `trunc`, `normalize`,
//! `denormalize`, `setopt`), and the record layout they fill.
//!
//! Stacks are taken with `bpf_get_stack` straight into the record (or the aggregation key):
//! a fixed `frames × 8` bytes, zero past the last frame; a user stack is preceded by the
//! process id, which the consumer needs to symbolize it. (`bpf_get_stackid` and a stack
//! map would make keys smaller, but its hash buckets are shared: colliding stacks are
//! dropped or overwrite each other.) A user stack is what the kernel's frame-pointer
//! unwinder finds, and in a record (not a key) the record also holds, once per clause, the
//! user registers and a window of the user stack ([`Datum::UStack`]'s `window`), from which
//! the consumer unwinds code built without frame pointers by its call frame information.
//! Each user stack datum copies the window again (an `if` may have skipped an earlier
//! copy); a clause whose record would then leave less than [`CFI_HEADROOM`] bytes of the
//! record limit has no window, its user stacks being frame-pointer stacks alone. The
//! window is read whole, or, when that faults (the stack ends closer to `rsp`), in halves
//! down to [`WINDOW_SMALLEST`] bytes. `ustackdepth` recorded whole by `trace()` or
//! `printf()` is such a stack too ([`Datum::UStackDepth`]), whose frames the consumer
//! counts as `ustack()` shows them, where the record has room for it; in any other
//! expression it is the frame-pointer depth.
//! `func()`, `sym()`, `mod()`, `ufunc()`, `usym()`, `umod()` and `uaddr()`
//! record an address (a user one with the process id) for `trace()` or an aggregation key,
//! and the consumer prints the symbol.

use dtrace_abi::datum::{ValueType, USTACK_REGS, USTACK_WINDOW};
use dtrace_ebpf::*;
use dtrace_frontend::{CompileError, Result, Span};
use dtrace_typing::ir::{self, Builtin, Expr, ExprKind};

use super::regs::{self, SCRATCH};
use super::{Gen, Val};
use crate::program::{Action, ActionKind, Datum, Fault, Field, SetoptArg, MAX_STACK_FRAMES};
use crate::types::{self, Type};

/// The most bytes one `copyout()` writes.
const COPYOUT_MAX: u32 = 4096;

/// The longest `chill()`: DTrace allows 500 ms of chill per second on a CPU.
const CHILL_MAX_NS: u64 = 500_000_000;

/// The most iterations one `bpf_loop` call may make (the kernel's `BPF_MAX_LOOPS`).
const BPF_LOOP_MAX: i32 = 1 << 23;

/// How many `bpf_loop` calls a `chill()` makes at most (each ends once the deadline passed).
const CHILL_LOOPS: usize = 3;

/// `SIGSTOP`, which `stop()` sends.
const SIGSTOP: i32 = 19;

/// `BPF_F_USER_STACK`: `bpf_get_stack` walks the user stack.
pub(super) const BPF_F_USER_STACK: i32 = 1 << 8;

/// Record bytes a `ustack()` with its stack window must leave for the clause's other data.
const CFI_HEADROOM: u32 = 1024;

/// The smallest part of the stack window read when the whole faults.
const WINDOW_SMALLEST: u32 = 256;

impl Gen<'_, '_> {
    /// Take the stack `datum` (a [`Datum::Stack`], [`Datum::UStack`] or
    /// [`Datum::UStackDepth`]) into scratch at `offset`: for a user stack the process id,
    /// then the frames.
    pub(crate) fn emit_stack(&mut self, offset: u32, datum: Datum) {
        let (frames, user) = match datum {
            Datum::Stack { frames } => (frames, false),
            Datum::UStack { frames, .. } | Datum::UStackDepth { frames, .. } => (frames, true),
            _ => return,
        };
        let mut pcs = offset;
        if user {
            self.store_pid(offset);
            pcs += 8;
        }
        if !user && !self.has_kernel_stack() {
            self.zero_scratch(pcs, frames * 8);
            return;
        }
        self.e.emit(Insn::ldx(Size::DW, R1, R10, regs::CTX_SLOT));
        self.scratch_addr(R2, pcs);
        self.e.emit(Insn::mov64_imm(R3, (frames * 8) as i32));
        self.e
            .emit(Insn::mov64_imm(R4, if user { BPF_F_USER_STACK } else { 0 }));
        // On failure the helper zeroes the buffer: an empty stack.
        self.e.emit(Insn::call(helpers::GET_STACK));
    }

    /// `ustack()` as a record holds it: with the clause's stack window.
    fn recorded_stack(&mut self, datum: Datum) -> Datum {
        match datum {
            Datum::UStack { frames, .. } => Datum::UStack {
                frames,
                window: self.stack_window(),
            },
            _ => datum,
        }
    }

    /// Evaluate `e` into the record: `ustackdepth` as a stack whose frames the consumer
    /// counts when the record has room for it, anything else as its value.
    fn record_expr(&mut self, e: &Expr) -> Result<Field> {
        if let ExprKind::Builtin(Builtin::Ustackdepth) = e.kind {
            if let Some(field) = self.record_ustackdepth() {
                return Ok(field);
            }
        }
        let mut v = self.expr(e)?;
        if let Type::Array(..) = e.ty {
            // An array taken whole (`%ls`): its address, whatever made it (a copyin).
            v.ty = e.ty.clone();
        }
        let field = self.record_value(&v);
        self.pop(v.reg);
        Ok(field)
    }

    /// `ustackdepth` recorded whole (`trace()`, `printf()`): the user stack of `maxframes`
    /// with the clause's stack window, the consumer counting its frames, one for the
    /// clause; none when the record would then leave less than [`CFI_HEADROOM`] bytes (the
    /// frame-pointer depth is recorded instead).
    fn record_ustackdepth(&mut self) -> Option<Field> {
        let frames = self.c.opts.max_frames.clamp(1, MAX_STACK_FRAMES);
        if let Some(field) = self.clause_state().ustackdepth.clone() {
            // Taken again (an `if` may have skipped the first), in the same place.
            if let Some(datum) = field.datum {
                self.stack_window();
                self.emit_stack(field.offset, datum);
            }
            return Some(field);
        }
        let size = Datum::UStackDepth { frames, window: 0 }.size();
        let window = match self.clause_state().stack_window {
            Some(_) => 0,
            None => USTACK_REGS + USTACK_WINDOW,
        };
        let end = self.clause_state().record_len + window + size;
        if end + CFI_HEADROOM > super::record_limit(self.strsize()) {
            return None;
        }
        let datum = Datum::UStackDepth {
            frames,
            window: self.stack_window(),
        };
        if let Datum::UStackDepth { window: 0, .. } = datum {
            return None;
        }
        let offset = self.clause_state().record_len;
        self.clause_state().record_len += size;
        self.emit_stack(offset, datum);
        let field = Field {
            offset,
            ty: types::UINT32,
            datum: Some(datum),
        };
        self.clause_state().ustackdepth = Some(field.clone());
        Some(field)
    }

    /// Copy the clause's stack window into its record, placing it on first use: its record
    /// offset, or 0 when the record has no room for it (see the module documentation).
    fn stack_window(&mut self) -> u32 {
        let at = match self.clause_state().stack_window {
            Some(at) => at,
            None => {
                let at = self.clause_state().record_len;
                let end = at + USTACK_REGS + USTACK_WINDOW;
                let at = if end + CFI_HEADROOM <= super::record_limit(self.strsize()) {
                    self.clause_state().record_len = end;
                    at
                } else {
                    0
                };
                self.clause_state().stack_window = Some(at);
                at
            }
        };
        if at != 0 {
            self.emit_stack_window(at);
        }
        at
    }

    /// Record at scratch `at` the user `rip`, `rsp` and `rbp`, then the length and bytes
    /// of the stack window from `rsp` (the layout of [`Datum::UStack`]).
    fn emit_stack_window(&mut self, at: u32) {
        use super::context::{PT_REGS_BP, PT_REGS_IP, PT_REGS_SP};
        self.e.emit(Insn::call(helpers::GET_CURRENT_TASK_BTF));
        self.e.emit(Insn::mov64_reg(R1, R0));
        self.e.emit(Insn::call(helpers::TASK_PT_REGS));
        for (i, reg) in [PT_REGS_IP, PT_REGS_SP, PT_REGS_BP].into_iter().enumerate() {
            self.e.emit(Insn::ldx(Size::DW, R1, R0, reg));
            let slot = self.small(at + 8 * i as u32);
            self.e.emit(Insn::stx(Size::DW, SCRATCH, slot, R1));
        }
        let sp = self.small(at + 8);
        let done = self.e.label();
        let mut len = USTACK_WINDOW;
        while len >= WINDOW_SMALLEST {
            self.scratch_addr(R1, at + USTACK_REGS);
            self.e.emit(Insn::mov64_imm(R2, len as i32));
            self.e.emit(Insn::ldx(Size::DW, R3, SCRATCH, sp));
            self.e.emit(Insn::call(helpers::PROBE_READ_USER));
            self.e.emit(Insn::mov64_imm(R1, len as i32));
            self.e.jmp_imm(BPF_JEQ, R0, 0, done);
            len /= 2;
        }
        self.e.emit(Insn::mov64_imm(R1, 0));
        self.e.bind(done);
        let copied = self.small(at + 24);
        self.e.emit(Insn::stx(Size::DW, SCRATCH, copied, R1));
    }

    /// Whether the probe fires with a kernel stack of its own: not `dtrace:::BEGIN`, `END`
    /// or `ERROR`, which `dtrace` runs itself (their kernel stack would be the system call
    /// that ran them), so that `stack()` there is empty and `stackdepth` 0, as in DTrace.
    fn has_kernel_stack(&self) -> bool {
        self.probe.provider != "dtrace"
    }

    /// Store the current process id (the thread group id) as a u64 at scratch `offset`.
    fn store_pid(&mut self, offset: u32) {
        self.e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
        self.e.emit(Insn::alu64_imm(BPF_RSH, R0, 32));
        self.e
            .emit(Insn::stx(Size::DW, SCRATCH, self.small(offset), R0));
    }

    /// Store the evaluated address `v` of a symbol datum at scratch `offset` (after the
    /// process id for user symbols).
    pub(crate) fn store_symbol(&mut self, v: &Val, datum: Datum, offset: u32) {
        let mut at = offset;
        if datum.user() {
            self.store_pid(offset);
            at += 8;
        }
        let r = regs::read(&mut self.e, v.reg, R1);
        self.e.emit(Insn::stx(Size::DW, SCRATCH, self.small(at), r));
    }

    /// `stackdepth` (or `ustackdepth` with `user`): the number of frames the kernel's
    /// unwinder finds, at most `maxframes`; 0 when it finds none.
    pub(crate) fn stack_depth(&mut self, user: bool, span: Span) -> Result<Val> {
        if !user && !self.has_kernel_stack() {
            let v = self.push(span)?;
            self.e.emit(Insn::mov64_imm(R0, 0));
            regs::write(&mut self.e, v, R0);
            return Ok(Val {
                reg: v,
                ty: types::UINT32,
            });
        }
        let frames = self.c.opts.max_frames.clamp(1, MAX_STACK_FRAMES);
        let buf = self.scratch(frames * 8);
        self.e.emit(Insn::ldx(Size::DW, R1, R10, regs::CTX_SLOT));
        self.scratch_addr(R2, buf);
        self.e.emit(Insn::mov64_imm(R3, (frames * 8) as i32));
        self.e
            .emit(Insn::mov64_imm(R4, if user { BPF_F_USER_STACK } else { 0 }));
        self.e.emit(Insn::call(helpers::GET_STACK));
        self.e.emit(Insn::jmp_imm(BPF_JSGE, R0, 0, 1));
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.emit(Insn::alu64_imm(BPF_RSH, R0, 3));
        let v = self.push(span)?;
        regs::write(&mut self.e, v, R0);
        Ok(Val {
            reg: v,
            ty: types::UINT32,
        })
    }

    /// Compile an action statement.
    pub(crate) fn action(&mut self, a: &ir::Action) -> Result<()> {
        let kind = match &a.kind {
            ir::ActionKind::Trace(e) => match &e.kind {
                ExprKind::Datum(datum, Some(pc)) => {
                    let offset = self.clause_state().record_len;
                    self.clause_state().record_len += datum.size();
                    let v = self.expr(pc)?;
                    self.store_symbol(&v, *datum, offset);
                    self.pop(v.reg);
                    ActionKind::Datum {
                        offset,
                        datum: *datum,
                    }
                }
                _ => ActionKind::Trace(self.record_expr(e)?),
            },
            ir::ActionKind::Tracemem {
                addr,
                size,
                dynsize,
            } => self.tracemem(addr, *size, dynsize.as_ref())?,
            ir::ActionKind::Print {
                addr,
                size,
                layout,
                user,
            } => self.print(addr, *size, layout, *user)?,
            ir::ActionKind::Stack(datum) => {
                let datum = self.recorded_stack(*datum);
                let offset = self.clause_state().record_len;
                self.clause_state().record_len += datum.size();
                self.emit_stack(offset, datum);
                ActionKind::Datum { offset, datum }
            }
            ir::ActionKind::Printf { format, args } => ActionKind::Printf {
                format: format.clone(),
                args: self.record_values(args)?,
            },
            ir::ActionKind::System { format, args } => {
                self.c.destructive = true;
                ActionKind::System {
                    format: format.clone(),
                    args: self.record_values(args)?,
                }
            }
            ir::ActionKind::Freopen { format, args } => {
                self.c.destructive = true;
                ActionKind::Freopen {
                    format: format.clone(),
                    args: self.record_values(args)?,
                }
            }
            ir::ActionKind::Ftruncate => ActionKind::Ftruncate,
            ir::ActionKind::Raise(signal) => {
                let v = self.expr(signal)?;
                regs::read_into(&mut self.e, v.reg, R1);
                self.pop(v.reg);
                self.signal_current_process();
                return Ok(());
            }
            ir::ActionKind::Chill(ns) => {
                let v = self.expr(ns)?;
                regs::read_into(&mut self.e, v.reg, R1);
                self.pop(v.reg);
                self.chill();
                return Ok(());
            }
            ir::ActionKind::Copyout {
                src,
                addr,
                size,
                string,
            } => {
                self.copyout(src, addr, size, *string)?;
                return Ok(());
            }
            ir::ActionKind::Stop => {
                self.e.emit(Insn::mov64_imm(R1, SIGSTOP));
                self.signal_current_process();
                return Ok(());
            }
            ir::ActionKind::Printa {
                format,
                aggregations,
            } => ActionKind::Printa {
                format: format.clone(),
                aggregations: aggregations.clone(),
            },
            ir::ActionKind::Exit(status) => {
                let v = self.expr(status)?;
                let field = self.record_value(&v);
                self.pop(v.reg);
                // Stop every probe but END and ERROR in the kernel at once, as DTrace does,
                // rather than when the consumer reads this record.
                self.e
                    .ld_map_value(R1, self.c.core.globals, super::vars::STATE_OFFSET);
                self.e.emit(Insn::st(
                    Size::DW,
                    R1,
                    0,
                    crate::program::TracingState::Exited as i32,
                ));
                ActionKind::Exit(field)
            }
            ir::ActionKind::Clear(agg) => ActionKind::Clear(*agg),
            ir::ActionKind::Denormalize(agg) => ActionKind::Denormalize(*agg),
            ir::ActionKind::Trunc { aggregation, count } => {
                let count = match count {
                    Some(n) => {
                        let v = self.expr(n)?;
                        let field = self.record_value(&v);
                        self.pop(v.reg);
                        Some(field)
                    }
                    None => None,
                };
                ActionKind::Trunc {
                    aggregation: *aggregation,
                    count,
                }
            }
            ir::ActionKind::Normalize {
                aggregation,
                factor,
            } => {
                let v = self.expr(factor)?;
                let field = self.record_value(&v);
                self.pop(v.reg);
                ActionKind::Normalize {
                    aggregation: *aggregation,
                    factor: field,
                }
            }
            ir::ActionKind::Setopt { option, value } => {
                let option = self.setopt_arg(option)?;
                let value = match value {
                    Some(v) => Some(self.setopt_arg(v)?),
                    None => None,
                };
                ActionKind::Setopt { option, value }
            }
            ir::ActionKind::Speculate(id) => {
                let offset = self
                    .clause_state()
                    .spec_field
                    .expect("a speculating clause");
                self.speculate(id, offset)?;
                ActionKind::Speculate(Field {
                    offset,
                    ty: types::INT64,
                    datum: None,
                })
            }
            ir::ActionKind::Commit(id) | ir::ActionKind::Discard(id) => {
                let offset = self.clause_state().record_len;
                self.clause_state().record_len += dtrace_abi::datum::SCALAR_SLOT;
                self.commit(id, offset)?;
                let field = Field {
                    offset,
                    ty: types::INT64,
                    datum: None,
                };
                match a.kind {
                    ir::ActionKind::Commit(_) => ActionKind::Commit(field),
                    _ => ActionKind::Discard(field),
                }
            }
            ir::ActionKind::Aggregate {
                aggregation,
                keys,
                args,
            } => return self.aggregate(*aggregation, keys, args),
        };
        let len = self.clause_state().record_len;
        self.spec_size_check(len);
        let presence = self.mark_presence(a.span)?;
        self.clause_state().actions.push(Action { kind, presence });
        Ok(())
    }

    /// Append the values of `args` to the clause's record.
    /// An argument of `setopt()`: a string constant kept in the description, any other
    /// string recorded.
    fn setopt_arg(&mut self, arg: &Expr) -> Result<SetoptArg> {
        Ok(match &arg.kind {
            ExprKind::Str(s) => SetoptArg::Text(String::from_utf8_lossy(s).into_owned()),
            _ => SetoptArg::Recorded(self.record_expr(arg)?),
        })
    }

    fn record_values(&mut self, args: &[ir::Expr]) -> Result<Vec<Field>> {
        let mut fields = Vec::new();
        for a in args {
            fields.push(self.record_expr(a)?);
        }
        Ok(fields)
    }

    /// `chill(r1)`: spin until r1 nanoseconds (at most [`CHILL_MAX_NS`]; a negative count
    /// is none) have passed (destructive). The spin is `bpf_loop` calls of a callback that
    /// stops once the deadline has passed (every kernel this dtrace supports has
    /// `bpf_loop`; `may_goto` came with 6.9): [`CHILL_LOOPS`] calls of the most iterations
    /// the kernel allows, whose budget may end a long chill early.
    fn chill(&mut self) {
        self.c.destructive = true;
        let (top, counted) = (self.e.label(), self.e.label());
        self.e.jmp_imm(BPF_JSGE, R1, 0, counted);
        self.e.emit(Insn::mov64_imm(R1, 0));
        self.e.bind(counted);
        self.e.mov_const(R2, CHILL_MAX_NS);
        self.e.jmp_reg(BPF_JLE, R1, R2, top);
        self.e.emit(Insn::mov64_reg(R1, R2));
        self.e.bind(top);
        // fp-16 = the deadline, which the callback reads through its context pointer.
        self.e.emit(Insn::stx(Size::DW, R10, regs::KEY_SLOT, R1));
        self.e.emit(Insn::call(helpers::KTIME_GET_NS));
        self.e.emit(Insn::ldx(Size::DW, R1, R10, regs::KEY_SLOT));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, R0));
        self.e.emit(Insn::stx(Size::DW, R10, regs::KEY_SLOT, R1));
        let callback = *self.chill.get_or_insert_with(|| self.e.label());
        for _ in 0..CHILL_LOOPS {
            self.loop_on_key_slot(BPF_LOOP_MAX, callback);
        }
        self.e.emit(Insn::st(Size::DW, R10, regs::KEY_SLOT, 0));
    }

    /// The `chill()` callback, if the program chills: `bpf_loop` calls it with r2 = the
    /// caller's stack slot holding the deadline; it stops the loop (returns 1) once the
    /// deadline has passed. Emitted once, after the program's functions.
    pub(crate) fn chill_callback(&mut self) {
        let Some(callback) = self.chill else {
            return;
        };
        let stop = self.e.label();
        self.e.bind(callback);
        self.e.emit(Insn::ldx(Size::DW, R6, R2, 0));
        self.e.emit(Insn::call(helpers::KTIME_GET_NS));
        self.e.jmp_reg(BPF_JGE, R0, R6, stop);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.emit(Insn::exit());
        self.e.bind(stop);
        self.e.emit(Insn::mov64_imm(R0, 1));
        self.e.emit(Insn::exit());
    }

    /// `copyout(buf, addr, size)` and `copyoutstr(str, addr, maxlen)` (destructive; the
    /// string with its NUL, or its first `maxlen` bytes without one): the
    /// bytes are first copied into scratch (so the helper writes from memory the verifier
    /// knows, at most [`COPYOUT_MAX`] of them; a larger size is an invalid size), then
    /// written to the user address; an address that cannot be written faults.
    fn copyout(
        &mut self,
        src: &ir::Expr,
        addr: &ir::Expr,
        size: &ir::Expr,
        string: bool,
    ) -> Result<()> {
        self.c.destructive = true;
        let max = if string { self.strsize() } else { COPYOUT_MAX };
        let buf = self.scratch(max);
        let vals = [self.expr(src)?, self.expr(addr)?, self.expr(size)?];
        let (src, addr, size) = (vals[0].reg, vals[1].reg, vals[2].reg);
        // r6.. hold the values; r2 = the byte count, checked.
        regs::read_into(&mut self.e, size, R2);
        let sized = self.e.label();
        if string {
            // The string is read with room for one byte past maxlen (within strsize, NUL
            // included), so a string longer than maxlen shows its own byte there, not a NUL.
            self.e.mov_const(R3, u64::from(max - 1));
            let room = self.e.label();
            self.e.jmp_reg(BPF_JLT, R2, R3, room);
            self.e.emit(Insn::mov64_reg(R2, R3));
            self.e.bind(room);
            self.e.emit(Insn::alu64_imm(BPF_ADD, R2, 1));
        } else {
            self.e.mov_const(R3, u64::from(max));
            self.e.jmp_reg(BPF_JLE, R2, R3, sized);
            let bad = regs::read(&mut self.e, size, R1);
            self.fault(Fault::BadSize, Some(bad));
        }
        self.e.bind(sized);
        let done = self.e.label();
        self.e.jmp_imm(BPF_JEQ, R2, 0, done);
        self.scratch_addr(R1, buf);
        regs::read_into(&mut self.e, src, R3);
        self.e.emit(Insn::call(if string {
            helpers::PROBE_READ_KERNEL_STR
        } else {
            helpers::PROBE_READ_KERNEL
        }));
        if string {
            // r0 = the bytes copied with the NUL (negative: unreadable).
            let read = self.e.label();
            self.e.jmp_imm(BPF_JSGT, R0, 0, read);
            let bad = regs::read(&mut self.e, src, R1);
            self.fault(Fault::BadAddr, Some(bad));
            self.e.bind(read);
            // As DTrace: the string and its NUL, or its first maxlen bytes if longer.
            self.e.emit(Insn::mov64_reg(R3, R0));
            regs::read_into(&mut self.e, size, R1);
            let within = self.e.label();
            self.e.jmp_reg(BPF_JLE, R3, R1, within);
            self.e.emit(Insn::mov64_reg(R3, R1));
            self.e.bind(within);
        } else {
            self.fault_if_negative(src);
            regs::read_into(&mut self.e, size, R3);
        }
        // r3 = the count again, bounded for the verifier (a mask of all ones above `max`:
        // strsize + 1 is seldom a power of two).
        let mask = (max + 1).next_power_of_two() - 1;
        self.e.emit(Insn::alu64_imm(BPF_AND, R3, mask as i32));
        let bounded = self.e.label();
        self.e.jmp_imm(BPF_JLE, R3, max as i32, bounded);
        self.e.emit(Insn::mov64_imm(R3, max as i32));
        self.e.bind(bounded);
        // `< 1`, not `== 0`: older verifiers (6.1) learn no lower bound from `!= 0`.
        self.e.jmp_imm(BPF_JLT, R3, 1, done);
        regs::read_into(&mut self.e, addr, R1);
        self.scratch_addr(R2, buf);
        self.e.emit(Insn::call(helpers::PROBE_WRITE_USER));
        self.fault_if_negative(addr);
        self.e.bind(done);
        for v in vals.iter().rev() {
            self.pop(v.reg);
        }
        Ok(())
    }

    /// `bpf_send_signal(r1)`: the signal goes to the current process (destructive).
    fn signal_current_process(&mut self) {
        self.c.destructive = true;
        self.e.emit(Insn::call(helpers::SEND_SIGNAL));
    }

    /// Append `v` to the clause's record: integers take 8 bytes (narrowed to their type),
    /// strings `strsize`, structs their size (8-aligned).
    fn record_value(&mut self, v: &Val) -> Field {
        let size = match &v.ty {
            Type::String => self.strsize(),
            Type::Struct(_) | Type::Array(..) => v.ty.size() as u32,
            _ => dtrace_abi::datum::SCALAR_SLOT,
        };
        let offset = self.clause_state().record_len;
        self.clause_state().record_len += size.next_multiple_of(8);
        match &v.ty {
            Type::String => {
                self.fault_if_null(v);
                self.scratch_addr(R1, offset);
                self.e.emit(Insn::mov64_imm(R2, size as i32));
                regs::read_into(&mut self.e, v.reg, R3);
                self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
                self.fault_if_negative(v.reg);
            }
            Type::Struct(_) | Type::Array(..) => {
                self.scratch_addr(R1, offset);
                self.e.emit(Insn::mov64_imm(R2, size as i32));
                regs::read_into(&mut self.e, v.reg, R3);
                self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
            }
            _ => {
                // Narrowed to its type: the record holds the value DTrace records.
                let r = regs::read(&mut self.e, v.reg, R1);
                super::expr::normalize(&mut self.e, r, &v.ty);
                self.e
                    .emit(Insn::stx(Size::DW, SCRATCH, self.small(offset), r));
            }
        }
        Field {
            offset,
            ty: v.ty.clone(),
            datum: None,
        }
    }

    /// `tracemem(addr, size[, dynsize])`: the count (when given) then `size` bytes of kernel
    /// memory at `addr` in the record; an address that cannot be read faults.
    fn tracemem(&mut self, addr: &Expr, size: u32, dynsize: Option<&Expr>) -> Result<ActionKind> {
        let offset = self.clause_state().record_len;
        let data = offset + if dynsize.is_some() { 8 } else { 0 };
        self.clause_state().record_len = data + size.next_multiple_of(8);
        if let Some(n) = dynsize {
            let v = self.expr(n)?;
            let r = regs::read(&mut self.e, v.reg, R1);
            self.e
                .emit(Insn::stx(Size::DW, SCRATCH, self.small(offset), r));
            self.pop(v.reg);
        }
        let v = self.expr(addr)?;
        self.scratch_addr(R1, data);
        self.e.emit(Insn::mov64_imm(R2, size as i32));
        regs::read_into(&mut self.e, v.reg, R3);
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
        self.fault_if_negative(v.reg);
        self.pop(v.reg);
        Ok(ActionKind::Memory {
            offset,
            size,
            dynamic: dynsize.is_some(),
        })
    }

    /// `print(addr)`: the address, then `size` bytes of the object it points to (in the
    /// traced process if `user`).
    fn print(
        &mut self,
        addr: &Expr,
        size: u32,
        layout: &ValueType,
        user: bool,
    ) -> Result<ActionKind> {
        let offset = self.clause_state().record_len;
        self.clause_state().record_len = offset + 8 + size.next_multiple_of(8);
        let v = self.expr(addr)?;
        let r = regs::read(&mut self.e, v.reg, R3);
        self.e
            .emit(Insn::stx(Size::DW, SCRATCH, self.small(offset), r));
        self.scratch_addr(R1, offset + 8);
        self.e.emit(Insn::mov64_imm(R2, size as i32));
        regs::read_into(&mut self.e, v.reg, R3);
        self.e.emit(Insn::call(if user {
            helpers::PROBE_READ_USER
        } else {
            helpers::PROBE_READ_KERNEL
        }));
        self.fault_if_negative(v.reg);
        self.pop(v.reg);
        Ok(ActionKind::Print {
            offset,
            size,
            layout: layout.clone(),
        })
    }

    /// For an action under a condition, set and return its presence bit.
    fn mark_presence(&mut self, span: Span) -> Result<Option<u32>> {
        if self.clause_state().conditional == 0 {
            return Ok(None);
        }
        let bit = self.clause_state().presence_bits;
        if bit >= 64 {
            return Err(CompileError::new(
                "D_DIF_TOOBIG",
                "too many actions under conditions in one clause (at most 64)",
                span,
            ));
        }
        self.clause_state().presence_bits += 1;
        let presence = dtrace_abi::record::PRESENCE as i16;
        self.e.emit(Insn::ldx(Size::DW, R1, SCRATCH, presence));
        self.e.mov_const(R2, 1u64 << bit);
        self.e.emit(Insn::alu64_reg(BPF_OR, R1, R2));
        self.e.emit(Insn::stx(Size::DW, SCRATCH, presence, R1));
        Ok(Some(bit))
    }
}

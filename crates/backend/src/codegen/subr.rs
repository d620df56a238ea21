//! Subroutines called in expressions (`strlen`, `strjoin`, `copyin`, `copyinstr`,
//! `alloca`, `copyinto`, `rand`, the byte-order swaps `htons`...`ntohll`, `getmajor`,
//! `getminor`; the string subroutines are in `strsubr`, `d_path` in `dpath`).
//!
//! `copyin(addr, size)` copies `size` bytes (a constant, at most 4096, or a value
//! computed at run time, at most `scratchsize`) of user memory into the clause's scratch space and returns a `void *` to them, valid until the probe's
//! clauses are done; `*p` reads through it with `bpf_probe_read_kernel` (D pointers are
//! kernel addresses: a copyin buffer, not a user address), so a bad pointer fires the ERROR
//! probe ("invalid address") like a failed copy.
//!
//! `alloca(size)` hands out zeroed scratch memory the same way, and `copyinto(addr, size,
//! dest)` (like `bcopy(src, dest, size)` for kernel memory) copies user memory into it:
//! `dest` and `size` are run-time values, so they are checked against the scratch memory
//! handed out before the copy, as DTrace checks them ("invalid address" for a `dest`
//! outside it, "invalid size" for a copy running past its end).

use dtrace_frontend::{Result, Span};
use dtrace_typing::cook::COPYIN_MAX;
use dtrace_typing::ir::{Expr, ExprKind, Subr};

use dtrace_ebpf::*;

use super::regs::{VReg, SCRATCH};
use super::strtok;
use super::{regs, Gen, Val};
use crate::program::Fault;
use crate::types::Type;

impl Gen<'_, '_> {
    /// A subroutine call; the result is of type `ty`.
    pub(crate) fn call(&mut self, subr: Subr, args: &[Expr], ty: &Type, span: Span) -> Result<Val> {
        // A null string faults, as in DTrace (but for strtok's first argument, which goes on
        // with the last string).
        let null = args
            .iter()
            .enumerate()
            .any(|(i, a)| strtok::is_null_string(a) && !(subr == Subr::Strtok && i == 0));
        if null {
            let ok = self.e.label();
            self.e.emit(Insn::mov64_imm(R0, 0));
            self.e.jmp_imm(BPF_JNE, R0, 0, ok);
            self.fault(Fault::BadAddr, None);
            self.e.bind(ok);
        }
        let v = match subr {
            Subr::Strlen => {
                let s = self.expr(&args[0])?;
                self.strlen(&s)?
            }
            Subr::Rand => {
                self.e.emit(Insn::call(helpers::GET_PRANDOM_U32));
                let v = self.push(span)?;
                regs::write(&mut self.e, v, R0);
                Val {
                    reg: v,
                    ty: ty.clone(),
                }
            }
            Subr::Strjoin => {
                let a = self.expr(&args[0])?;
                let b = self.expr(&args[1])?;
                let v = self.strjoin(&a, &b)?;
                self.pop(b.reg);
                v
            }
            Subr::Copyinstr => self.copyinstr(args)?,
            Subr::Copyin => self.copyin(args)?,
            Subr::Copyinto => self.copyinto(args)?,
            Subr::Bcopy => self.bcopy(args)?,
            Subr::Progenyof => self.progenyof(&args[0], span)?,
            Subr::DPath => self.d_path(args, span)?,
            Subr::Alloca => self.alloca(args, span)?,
            Subr::Speculation => self.speculation(span)?,
            Subr::InetNtoa | Subr::InetNtoa6 | Subr::InetNtop | Subr::LinkNtop => {
                self.inet(subr, args, span)?
            }
            Subr::Htons | Subr::Ntohs => self.byte_swap(&args[0], 16)?,
            Subr::Htonl | Subr::Ntohl => self.byte_swap(&args[0], 32)?,
            Subr::Htonll | Subr::Ntohll => self.byte_swap(&args[0], 64)?,
            Subr::Getmajor | Subr::Getminor => {
                let v = self.expr(&args[0])?;
                regs::read_into(&mut self.e, v.reg, R0);
                // A Linux dev_t: 32 bits, the major number above the 20-bit minor.
                self.e.emit(Insn::alu32_reg(BPF_MOV, R0, R0));
                if subr == Subr::Getmajor {
                    self.e.emit(Insn::alu64_imm(BPF_RSH, R0, 20));
                } else {
                    self.e.emit(Insn::alu64_imm(BPF_AND, R0, 0xfffff));
                }
                regs::write(&mut self.e, v.reg, R0);
                v
            }
            _ => self.string_subroutine(subr, args)?,
        };
        Ok(Val {
            reg: v.reg,
            ty: ty.clone(),
        })
    }

    /// `htons`/`ntohs` (16 bits), `htonl`/`ntohl` (32), `htonll`/`ntohll` (64): the value's
    /// low `bits` bits in network (big-endian) byte order.
    fn byte_swap(&mut self, arg: &Expr, bits: i32) -> Result<Val> {
        let v = self.expr(arg)?;
        regs::read_into(&mut self.e, v.reg, R0);
        self.e.emit(Insn::to_be(R0, bits));
        regs::write(&mut self.e, v.reg, R0);
        Ok(v)
    }

    /// `copyinstr(addr[, size])`: the NUL-terminated string at user address `addr`, copied
    /// into a scratch string, as DTrace copies it: at most `size` bytes and at most `strsize`
    /// bytes, the NUL included. An address that cannot be read raises DTrace's "invalid
    /// address" fault and abandons the clause.
    fn copyinstr(&mut self, args: &[Expr]) -> Result<Val> {
        let mut vals = Vec::with_capacity(2);
        for a in args {
            vals.push(self.expr(a)?);
        }
        // The buffer holds strsize characters and a NUL; a copy takes one byte less.
        let limit = self.strsize() as i32 - 1;
        // r2 = min(size, limit), the size taken unsigned as DTrace takes it. A size of 0
        // copies nothing, which DTrace reports as an invalid address.
        if let Some(max) = vals.get(1) {
            let sized = self.e.label();
            regs::read_into(&mut self.e, max.reg, R2);
            self.e.jmp_imm(BPF_JNE, R2, 0, sized);
            let addr = regs::read(&mut self.e, vals[0].reg, R1);
            self.fault(Fault::BadAddr, Some(addr));
            self.e.bind(sized);
            self.e.emit(Insn::jmp_imm(BPF_JLE, R2, limit, 1));
            self.e.emit(Insn::mov64_imm(R2, limit));
            // (Never 0 here, but the verifier does not know it.)
            self.e.emit(Insn::jmp_imm(BPF_JSGE, R2, 1, 1));
            self.e.emit(Insn::mov64_imm(R2, 1));
            self.pop(max.reg);
        } else {
            self.e.emit(Insn::mov64_imm(R2, limit));
        }
        let addr = &vals[0];
        let buf = self.string_buffer(false);
        self.scratch_addr(R1, buf);
        regs::read_into(&mut self.e, addr.reg, R3);
        crate::sleepable::read_user_str(&mut self.e);
        self.fault_if_negative(addr.reg);
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, addr.reg, R1);
        Ok(Val {
            reg: addr.reg,
            ty: Type::String,
        })
    }

    /// `copyin(addr, size)`: `size` bytes at user address `addr` copied into scratch; a
    /// `void *` to them. An address that cannot be read raises the "invalid address" fault
    /// and abandons the clause.
    fn copyin(&mut self, args: &[Expr]) -> Result<Val> {
        if !matches!(args[1].kind, ExprKind::Int(_)) {
            return self.copyin_computed(args);
        }
        let size = constant_size(&args[1]);
        let addr = self.expr(&args[0])?;
        let buf = self.allocate(size);
        self.scratch_addr(R1, buf);
        self.e.emit(Insn::mov64_imm(R2, size as i32));
        regs::read_into(&mut self.e, addr.reg, R3);
        self.e.emit(Insn::call(helpers::PROBE_READ_USER));
        self.fault_if_negative(addr.reg);
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, addr.reg, R1);
        Ok(Val {
            reg: addr.reg,
            ty: Type::Ptr(Box::new(Type::Void)),
        })
    }

    /// `copyin(addr, size)` with a size computed at run time: a zeroed buffer of
    /// `scratchsize` bytes (at most 4096) and a NUL after it, of which the first `size`
    /// bytes are copied, so the copy reads as a string too. A size outside 0 to
    /// `scratchsize` raises the "invalid size" fault, as in DTrace.
    fn copyin_computed(&mut self, args: &[Expr]) -> Result<Val> {
        let cap = self.c.opts.scratchsize.clamp(1, COPYIN_MAX);
        let addr = self.expr(&args[0])?;
        let size = self.expr(&args[1])?;
        let len = cap.next_multiple_of(8) + 8;
        let buf = self.allocate(len);
        for at in (buf..buf + len).step_by(8) {
            let at = self.small(at);
            self.e.emit(Insn::st(Size::DW, SCRATCH, at, 0));
        }
        let (bad_size, copied) = (self.e.label(), self.e.label());
        regs::read_into(&mut self.e, size.reg, R2);
        self.e.jmp_imm(BPF_JGT, R2, cap as i32, bad_size);
        self.scratch_addr(R1, buf);
        regs::read_into(&mut self.e, addr.reg, R3);
        self.e.emit(Insn::call(helpers::PROBE_READ_USER));
        self.fault_if_negative(addr.reg);
        self.e.goto(copied);
        self.e.bind(bad_size);
        let r = regs::read(&mut self.e, size.reg, R1);
        self.fault(Fault::BadSize, Some(r));
        self.e.bind(copied);
        self.pop(size.reg);
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, addr.reg, R1);
        Ok(Val {
            reg: addr.reg,
            ty: Type::Ptr(Box::new(Type::Void)),
        })
    }

    /// `alloca(size)`: `size` bytes (a constant, at most 4096) of zeroed scratch
    /// memory from the clause's arena, valid for the rest of the clause; a `void *` to
    /// them.
    fn alloca(&mut self, args: &[Expr], span: Span) -> Result<Val> {
        let size = constant_size(&args[0]);
        let buf = self.arena_allocate(size);
        for at in (buf..buf + size.next_multiple_of(8)).step_by(8) {
            let at = self.small(at);
            self.e.emit(Insn::st(Size::DW, SCRATCH, at, 0));
        }
        let v = self.push(span)?;
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, v, R1);
        Ok(Val {
            reg: v,
            ty: Type::Ptr(Box::new(Type::Void)),
        })
    }

    /// Reserve `size` bytes of scratch that stores through pointers may write (what
    /// `copyin` returns); their offset.
    fn allocate(&mut self, size: u32) -> u32 {
        let buf = self.scratch(size);
        self.allocations.push((buf, size));
        buf
    }

    /// `copyinto(addr, size, dest)`: the arguments evaluated left to right, as DTrace
    /// evaluates them, then `size` bytes of user memory at `addr` copied to `dest` (see
    /// [`Gen::copy_to_scratch`]).
    fn copyinto(&mut self, args: &[Expr]) -> Result<Val> {
        let addr = self.expr(&args[0])?;
        let size = self.expr(&args[1])?;
        let dest = self.expr(&args[2])?;
        self.copy_to_scratch(addr.reg, dest.reg, size.reg, CopyFrom::User);
        self.pop(dest.reg);
        self.pop(size.reg);
        Ok(Val {
            reg: addr.reg,
            ty: Type::Void,
        })
    }

    /// `bcopy(src, dest, size)`: `size` bytes of kernel memory at `src` copied to `dest`
    /// (see [`Gen::copy_to_scratch`]).
    fn bcopy(&mut self, args: &[Expr]) -> Result<Val> {
        let src = self.expr(&args[0])?;
        let dest = self.expr(&args[1])?;
        let size = self.expr(&args[2])?;
        self.copy_to_scratch(src.reg, dest.reg, size.reg, CopyFrom::Kernel);
        self.pop(size.reg);
        self.pop(dest.reg);
        Ok(Val {
            reg: src.reg,
            ty: Type::Void,
        })
    }

    /// Copy `size` bytes (a run-time value) at `src` to `dest`, which must point into this
    /// firing's scratch memory: into what the clause has allocated with `alloca`, or into
    /// the other scratch handed out so far, and lie there whole. The checks are DTrace's,
    /// in its order: a size larger than scratch (or negative) is an invalid size; then a
    /// `dest` outside that memory an invalid address, one running past its end an invalid
    /// size; then a `src` that cannot be read an invalid address. A kernel `src` in
    /// `alloca` memory must lie in what the clause allocated, whole, too.
    fn copy_to_scratch(&mut self, src: VReg, dest: VReg, size: VReg, from: CopyFrom) {
        let low = super::record_limit(self.strsize());
        let top = self.scratch_top;
        // The verifier bounds `dest` and `size` apart, so the scratch area must hold the
        // largest of both (and the word `offset_from` takes for a moment).
        self.c.scratch_size = self.c.scratch_size.max(2 * top - low + 8);
        let (bad_addr, bad_size) = (self.e.label(), self.e.label());
        let (source, inside) = (self.e.label(), self.e.label());
        // r2 = the size, bounded from here on: at most `scratchsize`, as in DTrace.
        let most = (top - low).min(self.c.opts.scratchsize);
        regs::read_into(&mut self.e, size, R2);
        self.e.jmp_imm(BPF_JGT, R2, most as i32, bad_size);
        // r1 = dest's offset in scratch, r3 = where the copy would end. Both addresses as
        // plain numbers: stored through a map value, a pointer reads back as a scalar.
        self.offset_from(R1, dest, SCRATCH, R4);
        // r3 = size + offset, in that order: `r3 = r1; r3 += <constant size>` would link r3
        // to r1, and 6.12's verifier derives bounds from that link that make `scratch + r1`
        // an unknown scalar.
        self.e.emit(Insn::mov64_reg(R3, R2));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R1));
        if let Some(arena) = self.arena {
            // Into the alloca arena: what this clause allocated, whole.
            let whole = super::arena::arena_size(self.c);
            let allocated = self.clause_state().alloca_top;
            let elsewhere = self.e.label();
            self.e
                .jmp_imm(BPF_JGE, R1, (arena + whole) as i32, elsewhere);
            self.e.jmp_imm(BPF_JLT, R1, arena as i32, bad_addr);
            self.e
                .jmp_imm(BPF_JGE, R1, (arena + allocated) as i32, bad_addr);
            self.e
                .jmp_imm(BPF_JGT, R3, (arena + allocated) as i32, bad_size);
            self.e.goto(source);
            self.e.bind(elsewhere);
        }
        self.e.jmp_imm(BPF_JLT, R1, low as i32, bad_addr);
        self.e.jmp_imm(BPF_JGE, R1, top as i32, bad_addr);
        self.e.jmp_imm(BPF_JGT, R3, top as i32, bad_size);
        self.e.bind(source);
        if from == CopyFrom::Kernel {
            // (In the arena: within what this clause allocated.)
            let end = match self.arena {
                Some(arena) => arena + self.clause_state().alloca_top,
                None => top,
            };
            self.offset_from(R3, src, SCRATCH, R4);
            self.e.jmp_imm(BPF_JLT, R3, low as i32, inside);
            self.e.jmp_imm(BPF_JGE, R3, top as i32, inside);
            self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R2));
            self.e.jmp_imm(BPF_JGT, R3, end as i32, bad_size);
        }
        self.e.goto(inside);
        self.e.bind(bad_addr);
        let r = regs::read(&mut self.e, dest, R1);
        self.fault(Fault::BadAddr, Some(r));
        self.e.bind(bad_size);
        let r = regs::read(&mut self.e, size, R1);
        self.fault(Fault::BadSize, Some(r));
        self.e.bind(inside);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, SCRATCH));
        regs::read_into(&mut self.e, src, R3);
        self.e.emit(Insn::call(match from {
            CopyFrom::Kernel => helpers::PROBE_READ_KERNEL,
            CopyFrom::User => helpers::PROBE_READ_USER,
        }));
        self.fault_if_negative(src);
    }
}

/// The memory [`Gen::copy_to_scratch`] reads: `bcopy`'s or `copyinto`'s.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CopyFrom {
    Kernel,
    User,
}

/// A size argument the typing pass checked to be a constant (1 to 4096).
fn constant_size(e: &Expr) -> u32 {
    match e.kind {
        ExprKind::Int(n) => n as u32,
        _ => 1,
    }
}

//! Subroutines called in expressions (`strlen`, `strjoin`, `copyin`, `copyinstr`, ...), the
//! errors for actions and aggregating functions used where a value is needed.
//!
//! `copyin(addr, size)` copies `size` bytes (a constant, at most [`COPYIN_MAX`]) of user
//! memory into the clause's scratch space and returns a `void *` to them, valid until the
//! probe's clauses are done; `*p` (in `expr/member.rs`) reads through it with
//! `bpf_probe_read_kernel` (D pointers are kernel addresses: a copyin buffer, not a user
//! address), so a bad pointer fires the ERROR probe ("invalid address") like a failed copy.
//! Pointer arithmetic is not scaled by the pointee's size (`p + 1` is one byte further);
//! indexing is (`p[1]` is the second element).
//!
//! `alloca(size)` hands out zeroed scratch memory the same way, and `copyinto(addr, size,
//! dest)` copies user memory into it: `dest` is a run-time value, so it is checked against
//! the scratch area before the copy (outside it: "invalid address", as DTrace refuses
//! stores outside its scratch and variables).

use dtrace_frontend::ast::Expr;
use dtrace_frontend::{CompileError, Result, Span};

use dtrace_ebpf::*;

use super::fault::FaultSite;
use super::regs::SCRATCH;
use super::{actions, aggregate, expr, regs, strsubr, Gen, Val};
use crate::program::Fault;
use crate::types::Type;
use expr::unsupported;

/// The most bytes one `copyin` copies (they live in the program's scratch space, at most
/// 32 KiB for everything).
pub const COPYIN_MAX: u32 = 4096;

impl Gen<'_, '_> {
    pub(crate) fn subroutine(
        &mut self,
        name: &str,
        args: &[Expr],
        name_span: Span,
        span: Span,
    ) -> Result<Val> {
        match name {
            "strlen" => {
                let [s] = self.string_args::<1>(name, args, span)?;
                self.strlen(&s)
            }
            "rand" => {
                if !args.is_empty() {
                    return Err(CompileError::new(
                        "D_PROTO_LEN",
                        format!(
                            "rand( ) prototype mismatch: {} arg{} passed, 0 expected",
                            args.len(),
                            if args.len() == 1 { "" } else { "s" }
                        ),
                        span,
                    ));
                }
                self.e.emit(dtrace_ebpf::Insn::call(
                    dtrace_ebpf::helpers::GET_PRANDOM_U32,
                ));
                let v = self.push(span)?;
                super::regs::write(&mut self.e, v, dtrace_ebpf::R0);
                Ok(Val {
                    reg: v,
                    ty: crate::types::INT,
                })
            }
            "copyinstr" => self.copyinstr(args, span),
            "copyin" => self.copyin(args, span),
            "copyinto" => self.copyinto(args, span),
            "alloca" => self.alloca(args, span),
            "strjoin" => {
                let [a, b] = self.string_args::<2>(name, args, span)?;
                let v = self.strjoin(&a, &b)?;
                self.pop(b.reg);
                Ok(v)
            }
            _ if strsubr::is_string_subroutine(name) => self.string_subroutine(name, args, span),
            _ if actions::is_action(name) => Err(CompileError::new(
                "D_ACT_SPEC",
                format!("{name}( ) may not be used in an expression"),
                name_span,
            )),
            _ if aggregate::is_function(name) => Err(CompileError::new(
                "D_AGG_FUNC",
                format!("{name}( ) may only be used as the value of an aggregation"),
                name_span,
            )),
            _ => Err(CompileError::new(
                "D_FUNC_UNDEF",
                format!("failed to resolve {name}: Unknown function name"),
                name_span,
            )),
        }
    }

    /// `copyinstr(addr[, maxlen])`: the NUL-terminated string at user address `addr` (at most
    /// `maxlen` bytes, and at most strsize - 1), copied into a scratch string. An address that
    /// cannot be read raises DTrace's "invalid address" fault and abandons the clause.
    fn copyinstr(&mut self, args: &[Expr], span: Span) -> Result<Val> {
        if args.is_empty() || args.len() > 2 {
            return Err(CompileError::new(
                "D_PROTO_LEN",
                format!(
                    "copyinstr( ) prototype mismatch: {} arg{} passed, 1 or 2 expected",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" }
                ),
                span,
            ));
        }
        let mut vals = Vec::with_capacity(2);
        for (i, a) in args.iter().enumerate() {
            let v = self.expr(a)?;
            if !v.ty.is_scalar() {
                let proto = if i == 0 { "uintptr_t" } else { "size_t" };
                return Err(CompileError::new(
                    "D_PROTO_ARG",
                    format!(
                        "copyinstr( ) argument #{} is incompatible with prototype:\n\tprototype: {proto}\n\t argument: {}",
                        i + 1,
                        v.ty
                    ),
                    a.span,
                ));
            }
            vals.push(v);
        }
        let strsize = self.strsize() as i32;
        // r2 = the buffer size: min(maxlen + 1, strsize), at least 1.
        if let Some(max) = vals.get(1) {
            regs::read_into(&mut self.e, max.reg, R2);
            self.e.emit(Insn::alu64_imm(BPF_ADD, R2, 1));
            self.e.emit(Insn::jmp_imm(BPF_JSLE, R2, strsize, 1));
            self.e.emit(Insn::mov64_imm(R2, strsize));
            self.e.emit(Insn::jmp_imm(BPF_JSGE, R2, 1, 1));
            self.e.emit(Insn::mov64_imm(R2, 1));
            self.pop(max.reg);
        } else {
            self.e.emit(Insn::mov64_imm(R2, strsize));
        }
        let addr = &vals[0];
        let buf = self.string_buffer(false);
        self.scratch_addr(R1, buf);
        regs::read_into(&mut self.e, addr.reg, R3);
        self.e.emit(Insn::call(helpers::PROBE_READ_USER_STR));
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
    fn copyin(&mut self, args: &[Expr], span: Span) -> Result<Val> {
        if args.len() != 2 {
            return Err(CompileError::new(
                "D_PROTO_LEN",
                format!(
                    "copyin( ) prototype mismatch: {} arg{} passed, 2 expected",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" }
                ),
                span,
            ));
        }
        let size = constant_size("copyin", &args[1])?;
        let addr = self.expr(&args[0])?;
        if !addr.ty.is_scalar() {
            return Err(CompileError::new(
                "D_PROTO_ARG",
                format!(
                    "copyin( ) argument #1 is incompatible with prototype:\n\tprototype: uintptr_t\n\t argument: {}",
                    addr.ty
                ),
                args[0].span,
            ));
        }
        let buf = self.scratch(size);
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

    /// `alloca(size)`: `size` bytes (a constant, at most [`COPYIN_MAX`]) of zeroed scratch
    /// memory, valid for the rest of the probe's firing (later clauses of the same probe
    /// included); a `void *` to them.
    fn alloca(&mut self, args: &[Expr], span: Span) -> Result<Val> {
        if args.len() != 1 {
            return Err(prototype_len("alloca", args.len(), 1, span));
        }
        let size = constant_size("alloca", &args[0])?;
        let buf = self.scratch(size);
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

    /// `copyinto(addr, size, dest)`: copy `size` bytes (a constant, at most [`COPYIN_MAX`])
    /// at user address `addr` to `dest`, which must point into this probe's scratch memory
    /// (`alloca`): the verifier only lets a program write where it can prove the bounds, so
    /// `dest` is checked against the scratch area at run time. A `dest` outside it, or an
    /// `addr` that cannot be read, raises the "invalid address" fault and abandons the
    /// clause.
    fn copyinto(&mut self, args: &[Expr], span: Span) -> Result<Val> {
        if args.len() != 3 {
            return Err(prototype_len("copyinto", args.len(), 3, span));
        }
        let size = constant_size("copyinto", &args[1])?;
        let mut vals = Vec::with_capacity(2);
        for (i, a) in [(0, &args[0]), (2, &args[2])] {
            let v = self.expr(a)?;
            let ok = if i == 0 {
                v.ty.is_scalar()
            } else {
                v.ty.is_scalar() || matches!(v.ty, Type::Ptr(_))
            };
            if !ok {
                let proto = if i == 0 { "uintptr_t" } else { "void *" };
                return Err(CompileError::new(
                    "D_PROTO_ARG",
                    format!(
                        "copyinto( ) argument #{} is incompatible with prototype:\n\tprototype: {proto}\n\t argument: {}",
                        i + 1,
                        v.ty
                    ),
                    a.span,
                ));
            }
            vals.push(v);
        }
        let (addr, dest) = (&vals[0], &vals[1]);
        // The scratch area's address as a plain number: stored through a map value, a
        // pointer reads back as a scalar.
        let base = self.scratch(8);
        let base = self.small(base);
        let low = super::record_limit(self.strsize());
        let high = self.scratch_top - size.min(self.scratch_top);
        self.e.emit(Insn::stx(Size::DW, SCRATCH, base, SCRATCH));
        regs::read_into(&mut self.e, dest.reg, R1);
        self.e.emit(Insn::ldx(Size::DW, R2, SCRATCH, base));
        self.e.emit(Insn::alu64_reg(BPF_SUB, R1, R2));
        let (bad_dest, inside) = (self.e.label(), self.e.label());
        self.e.jmp_imm(BPF_JLT, R1, low as i32, bad_dest);
        self.e.jmp_imm(BPF_JGT, R1, high as i32, bad_dest);
        self.e.goto(inside);
        self.e.bind(bad_dest);
        let bad = regs::read(&mut self.e, dest.reg, R1);
        self.fault(Fault::BadAddr, Some(bad), FaultSite::Here);
        self.e.bind(inside);
        self.e.emit(Insn::mov64_reg(R3, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R1));
        self.e.emit(Insn::mov64_reg(R1, R3));
        self.e.emit(Insn::mov64_imm(R2, size as i32));
        regs::read_into(&mut self.e, addr.reg, R3);
        self.e.emit(Insn::call(helpers::PROBE_READ_USER));
        self.fault_if_negative(addr.reg);
        let (addr, dest) = (vals[0].reg, vals[1].reg);
        self.pop(dest);
        Ok(Val {
            reg: addr,
            ty: Type::Void,
        })
    }

    /// Evaluate exactly `N` string arguments of `name`.
    fn string_args<const N: usize>(
        &mut self,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<[Val; N]> {
        if args.len() != N {
            return Err(CompileError::new(
                "D_PROTO_LEN",
                format!(
                    "{name}( ) prototype mismatch: {} arg{} passed, {N} expected",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" }
                ),
                span,
            ));
        }
        let mut vals = Vec::with_capacity(N);
        for (i, a) in args.iter().enumerate() {
            let v = self.expr(a)?;
            if !v.ty.is_string() {
                return Err(CompileError::new(
                    "D_PROTO_ARG",
                    format!(
                        "{name}( ) argument #{} is incompatible with prototype:\n\tprototype: string\n\t argument: {}",
                        i + 1,
                        v.ty
                    ),
                    a.span,
                ));
            }
            vals.push(v);
        }
        Ok(vals.try_into().unwrap_or_else(|_| unreachable!("N values")))
    }
}

/// D_PROTO_LEN for `name` called with `got` arguments instead of `want`.
fn prototype_len(name: &str, got: usize, want: usize, span: Span) -> CompileError {
    CompileError::new(
        "D_PROTO_LEN",
        format!(
            "{name}( ) prototype mismatch: {got} arg{} passed, {want} expected",
            if got == 1 { "" } else { "s" }
        ),
        span,
    )
}

/// The size argument of `copyin`, `copyinto` and `alloca`: a constant from 1 to
/// [`COPYIN_MAX`].
fn constant_size(name: &str, arg: &Expr) -> Result<u32> {
    match aggregate::constant(arg) {
        Some(n) if (1..=COPYIN_MAX as i64).contains(&n) => Ok(n as u32),
        Some(n) => Err(CompileError::new(
            "D_PROTO_ARG",
            format!("{name}( ) size {n} is out of range: 1 to {COPYIN_MAX} bytes"),
            arg.span,
        )),
        None => Err(unsupported(
            &format!("{name}( ) with a size that is not a constant"),
            arg.span,
        )),
    }
}

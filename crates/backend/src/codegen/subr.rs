//! Subroutines called in expressions (`strlen`, `strjoin`, `copyinstr`, ...), and the errors
//! for actions and aggregating functions used where a value is needed.

use dtrace_frontend::ast::Expr;
use dtrace_frontend::{CompileError, Result, Span};

use dtrace_ebpf::*;

use super::fault::FaultSite;
use super::{actions, aggregate, regs, strsubr, Gen, Val};
use crate::program::Fault;
use crate::types::Type;

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
        let ok = self.e.label();
        self.e.jmp_imm(BPF_JSGE, R0, 0, ok);
        let bad = regs::read(&mut self.e, addr.reg, R1);
        self.fault(Fault::BadAddr, Some(bad), FaultSite::Here);
        self.e.bind(ok);
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, addr.reg, R1);
        Ok(Val {
            reg: addr.reg,
            ty: Type::String,
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

//! Subroutines called in expressions (`strlen`, `strjoin`, ...), and the errors for actions
//! and aggregating functions used where a value is needed.

use dtrace_frontend::ast::Expr;
use dtrace_frontend::{CompileError, Result, Span};

use super::{actions, aggregate, strsubr, Gen, Val};

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

//! Actions: what a clause records for the consumer (`trace`, `printf`, `printa`, `exit`,
//! `clear`, `trunc`, `normalize`, `denormalize`, `setopt`) and the record layout they fill.

use dtrace_ebpf::*;
use dtrace_frontend::ast::{Expr, ExprKind};
use dtrace_frontend::{CompileError, Result, Span};

use super::expr::unsupported;
use super::regs::{self, SCRATCH};
use super::{Gen, Val};
use crate::program::{Action, ActionKind, Field};
use crate::types::{self, Type};

const ACTIONS: &[&str] = &[
    "trace",
    "printf",
    "printa",
    "exit",
    "clear",
    "trunc",
    "normalize",
    "denormalize",
    "setopt",
    "stack",
    "ustack",
    "jstack",
    "tracemem",
    "system",
    "raise",
    "stop",
    "panic",
    "chill",
    "breakpoint",
    "copyout",
    "copyoutstr",
    "speculate",
    "commit",
    "discard",
    "ftruncate",
    "freopen",
    "print",
];

pub(crate) fn is_action(name: &str) -> bool {
    ACTIONS.contains(&name)
}

/// An argument of a printf-style action, as the format check sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatArg {
    /// A value of this type (`void` for an action used as a value).
    Value(Type),
    /// A bare aggregation reference (`@a`), which no conversion accepts.
    Aggregation,
}

impl std::fmt::Display for FormatArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatArg::Value(t) => write!(f, "{t}"),
            FormatArg::Aggregation => write!(f, "aggregation"),
        }
    }
}

/// Checks a printf-style format against its argument types, at compile time.
pub trait FormatCheck {
    /// `Err((tag, message))` when the format is malformed or an argument does not fit.
    fn check(
        &self,
        format: &str,
        args: &[Type],
        printa: bool,
    ) -> std::result::Result<(), (&'static str, String)>;

    /// [`FormatCheck::check`] for arguments that may also be aggregations; by default an
    /// aggregation is checked as `void`, which no conversion accepts either.
    fn check_args(
        &self,
        format: &str,
        args: &[FormatArg],
        printa: bool,
    ) -> std::result::Result<(), (&'static str, String)> {
        let types: Vec<Type> = args
            .iter()
            .map(|a| match a {
                FormatArg::Value(t) => t.clone(),
                FormatArg::Aggregation => Type::Void,
            })
            .collect();
        self.check(format, &types, printa)
    }
}

/// The argument count check, worded as DTrace words it for `name`: the generic prototype
/// check (`1 arg passed`) for most actions, the action's own check for the aggregation
/// actions (`1 args passed`, with their own tags).
fn arg_count(name: &str, args: &[Expr], min: usize, max: usize, span: Span) -> Result<()> {
    let n = args.len();
    if n >= min && n <= max {
        return Ok(());
    }
    let (tag, message) = match name {
        "clear" => (
            "D_CLEAR_PROTO",
            format!("{name}( ) prototype mismatch: {n} args passed, 1 expected"),
        ),
        "normalize" | "denormalize" => (
            "D_NORMALIZE_PROTO",
            format!("{name}( ) prototype mismatch: {n} args passed, {min} expected"),
        ),
        "trunc" => (
            "D_TRUNC_PROTO",
            format!(
                "{name}( ) prototype mismatch: {n} args passed, {} expected",
                if n < min {
                    "at least 1"
                } else {
                    "no more than 2"
                }
            ),
        ),
        _ => {
            let expected = if max == usize::MAX || min == max {
                format!("{min}")
            } else {
                format!("at least {min}")
            };
            (
                "D_PROTO_LEN",
                format!(
                    "{name}( ) prototype mismatch: {n} arg{}passed, {expected} expected",
                    if n == 1 { " " } else { "s " }
                ),
            )
        }
    };
    Err(CompileError::new(tag, message, span))
}

fn string_literal<'e>(e: &'e Expr, what: &str) -> Result<&'e [u8]> {
    match &e.kind {
        ExprKind::Str(s) => Ok(s),
        _ => Err(CompileError::new(
            "D_PRINTF_FMT",
            format!("{what} must be a string constant"),
            e.span,
        )),
    }
}

impl Gen<'_, '_> {
    /// Compile `name(args)` if `name` is an action; `Ok(None)` if it is not one.
    pub(crate) fn action(
        &mut self,
        name: &str,
        args: &[Expr],
        name_span: Span,
        span: Span,
    ) -> Result<Option<()>> {
        if !is_action(name) {
            return Ok(None);
        }
        let kind = match name {
            "trace" => {
                arg_count(name, args, 1, 1, span)?;
                let v = self.expr(&args[0])?;
                let field = self.record_value(&v);
                self.pop(v.reg);
                ActionKind::Trace(field)
            }
            "printf" => {
                arg_count(name, args, 1, usize::MAX, span)?;
                let format = match &args[0].kind {
                    ExprKind::Str(s) => String::from_utf8_lossy(s).into_owned(),
                    _ => {
                        let ty = self.type_of(&args[0])?;
                        return Err(CompileError::new(
                            "D_PRINTF_ARG_FMT",
                            format!("printf( ) argument #1 is incompatible with prototype:\n\tprototype: string constant\n\t argument: {ty}"),
                            span,
                        ));
                    }
                };
                // Aggregations and actions have no value to print; the format check
                // reports them (as DTrace does) against the conversion they meet.
                let kinds: Vec<FormatArg> = args[1..]
                    .iter()
                    .map(|a| match &a.kind {
                        ExprKind::Aggregation(_) => Ok(FormatArg::Aggregation),
                        ExprKind::Call { name, .. } if is_action(name) => {
                            Ok(FormatArg::Value(Type::Void))
                        }
                        _ => self.type_of(a).map(FormatArg::Value),
                    })
                    .collect::<Result<_>>()?;
                self.check_format(&format, &kinds, false, span)?;
                let mut fields = Vec::new();
                for a in &args[1..] {
                    let v = self.expr(a)?;
                    fields.push(self.record_value(&v));
                    self.pop(v.reg);
                }
                ActionKind::Printf {
                    format,
                    args: fields,
                }
            }
            "printa" => {
                arg_count(name, args, 1, usize::MAX, span)?;
                let (format, aggs) = match &args[0].kind {
                    ExprKind::Str(s) => (Some(String::from_utf8_lossy(s).into_owned()), &args[1..]),
                    _ => (None, args),
                };
                if aggs.is_empty() {
                    return Err(CompileError::new(
                        "D_PRINTA_PROTO",
                        format!(
                            "printa( ) prototype mismatch: {} args passed, {} expected",
                            args.len(),
                            args.len() + 1
                        ),
                        span,
                    ));
                }
                let first = args.len() - aggs.len();
                let mut indices = Vec::new();
                for (i, a) in aggs.iter().enumerate() {
                    indices.push(self.aggregation_arg(a, "printa", first + i + 1)?);
                }
                if let Some(f) = &format {
                    let keys: Vec<FormatArg> = self.c.aggregations[indices[0]]
                        .keys
                        .iter()
                        .map(|k| FormatArg::Value(k.ty.clone()))
                        .collect();
                    self.check_format(f, &keys, true, span)?;
                }
                ActionKind::Printa {
                    format,
                    aggregations: indices,
                }
            }
            "exit" => {
                arg_count(name, args, 1, 1, span)?;
                let field = self.record_int(&args[0], name)?;
                // Stop every probe but END and ERROR in the kernel at once, as DTrace does,
                // rather than when the consumer reads this record.
                self.e
                    .ld_map_value(R1, self.c.core.globals, super::vars::STATE_OFFSET);
                self.e.emit(Insn::st(Size::DW, R1, 0, 1));
                ActionKind::Exit(field)
            }
            "clear" | "denormalize" => {
                arg_count(name, args, 1, 1, span)?;
                let agg = self.aggregation_arg(&args[0], name, 1)?;
                if name == "clear" {
                    ActionKind::Clear(agg)
                } else {
                    ActionKind::Denormalize(agg)
                }
            }
            "trunc" => {
                arg_count(name, args, 1, 2, span)?;
                let aggregation = self.aggregation_arg(&args[0], name, 1)?;
                let count = match args.get(1) {
                    Some(n) => Some(self.record_int(n, name)?),
                    None => None,
                };
                ActionKind::Trunc { aggregation, count }
            }
            "normalize" => {
                arg_count(name, args, 2, 2, span)?;
                let aggregation = self.aggregation_arg(&args[0], name, 1)?;
                let factor = self.record_int(&args[1], name)?;
                ActionKind::Normalize {
                    aggregation,
                    factor,
                }
            }
            "setopt" => {
                arg_count(name, args, 1, 2, span)?;
                let option = String::from_utf8_lossy(string_literal(&args[0], "setopt( ) option")?)
                    .into_owned();
                let value = match args.get(1) {
                    Some(v) => Some(
                        String::from_utf8_lossy(string_literal(v, "setopt( ) value")?).into_owned(),
                    ),
                    None => None,
                };
                ActionKind::Setopt { option, value }
            }
            _ => return Err(unsupported(&format!("the {name}( ) action"), name_span)),
        };
        let presence = self.mark_presence(span)?;
        self.clause_state().actions.push(Action { kind, presence });
        Ok(Some(()))
    }

    fn check_format(
        &self,
        format: &str,
        args: &[FormatArg],
        printa: bool,
        span: Span,
    ) -> Result<()> {
        self.c
            .formats
            .check_args(format, args, printa)
            .map_err(|(tag, message)| CompileError::new(tag, message, span))
    }

    /// Evaluate an integer argument and record it.
    fn record_int(&mut self, e: &Expr, action: &str) -> Result<Field> {
        let v = self.expr(e)?;
        if !v.ty.is_scalar() {
            return Err(CompileError::new(
                "D_PROTO_ARG",
                format!(
                    "{action}( ) argument #1 is incompatible with prototype:\n\tprototype: int\n\t argument: {}",
                    v.ty
                ),
                e.span,
            ));
        }
        let field = self.record_value(&Val {
            reg: v.reg,
            ty: if v.ty.scalar_size() == 8 {
                v.ty.clone()
            } else {
                types::INT
            },
        });
        self.pop(v.reg);
        Ok(field)
    }

    /// The index of the aggregation `e` names (`@a`), argument `argno` (1-based) of `action`.
    fn aggregation_arg(&mut self, e: &Expr, action: &str, argno: usize) -> Result<usize> {
        let ExprKind::Aggregation(name) = &e.kind else {
            let tag = match action {
                "printa" => "D_PRINTA_AGGARG",
                "clear" => "D_CLEAR_AGGARG",
                "trunc" => "D_TRUNC_AGGARG",
                "normalize" => "D_NORMALIZE_AGGARG",
                _ => "D_PROTO_ARG",
            };
            let ty = self
                .type_of(e)
                .map_or_else(|_| "non-aggregation".to_string(), |t| t.to_string());
            return Err(CompileError::new(
                tag,
                format!("{action}( ) argument #{argno} is incompatible with prototype:\n\tprototype: aggregation\n\t argument: {ty}"),
                e.span,
            ));
        };
        self.c
            .aggregations
            .iter()
            .position(|a| &a.name == name)
            .ok_or_else(|| {
                // As in DTrace, an aggregation must be assigned earlier in the program
                // text than the action that names it.
                let tag = match action {
                    "printa" => "D_PRINTA_AGGBAD",
                    "clear" => "D_CLEAR_AGGBAD",
                    "trunc" => "D_TRUNC_AGGBAD",
                    "normalize" | "denormalize" => "D_NORMALIZE_AGGBAD",
                    _ => "D_PROTO_ARG",
                };
                CompileError::new(tag, format!("undefined aggregation: @{name}"), e.span)
            })
    }

    /// Append `v` to the clause's record; integers take 8 bytes, strings `strsize`.
    fn record_value(&mut self, v: &Val) -> Field {
        let size = if v.ty.is_string() {
            self.strsize().next_multiple_of(8)
        } else {
            8
        };
        let offset = self.clause_state().record_len;
        self.clause_state().record_len += size;
        if v.ty.is_string() {
            self.scratch_addr(R1, offset);
            self.e.emit(Insn::mov64_imm(R2, self.strsize() as i32));
            regs::read_into(&mut self.e, v.reg, R3);
            self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
        } else {
            let r = regs::read(&mut self.e, v.reg, R1);
            self.e
                .emit(Insn::stx(Size::DW, SCRATCH, self.small(offset), r));
        }
        Field {
            offset,
            ty: v.ty.clone(),
        }
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
        self.e.emit(Insn::ldx(Size::DW, R1, SCRATCH, 8));
        self.e.mov_const(R2, 1u64 << bit);
        self.e.emit(Insn::alu64_reg(BPF_OR, R1, R2));
        self.e.emit(Insn::stx(Size::DW, SCRATCH, 8, R1));
        Ok(Some(bit))
    }
}

//! Actions: what a clause records for the consumer (`trace`, `printf`, `printa`, `exit`,
//! `clear`, `trunc`, `normalize`, `denormalize`, `setopt`, `stack`, `ustack`) and the
//! record layout they fill.
//!
//! Stacks are taken with `bpf_get_stack` straight into the record (or the aggregation key):
//! a fixed `frames × 8` bytes, zero past the last frame; a user stack is preceded by the
//! process id, which the consumer needs to symbolize it. (`bpf_get_stackid` and a stack
//! map would make keys smaller, but its hash buckets are shared: colliding stacks are
//! dropped or overwrite each other.) User stacks are what the kernel's frame-pointer
//! unwinder finds. `func()`, `sym()`, `mod()`, `ufunc()`, `usym()`, `umod()` and `uaddr()`
//! are, as in DTrace, action functions: they record an address (a user one with the process
//! id) for `trace()` or an aggregation key, and the consumer prints the symbol.

use dtrace_ebpf::*;
use dtrace_frontend::ast::{Expr, ExprKind};
use dtrace_frontend::{CompileError, Result, Span};

use super::expr::unsupported;
use super::regs::{self, SCRATCH};
use super::{Gen, Val};
use crate::program::{Action, ActionKind, Datum, Field, MAX_STACK_FRAMES};
use crate::types::{self, Type};

/// `BPF_F_USER_STACK`: `bpf_get_stack` walks the user stack.
const BPF_F_USER_STACK: i32 = 1 << 8;

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

/// A positive integer constant argument of `stack()`/`ustack()` (a frame count).
fn frames_arg(e: &Expr, tag: &'static str, what: &str) -> Result<u32> {
    match super::aggregate::constant(e) {
        Some(n) if n > 0 => Ok((n as u64).min(MAX_STACK_FRAMES as u64) as u32),
        _ => Err(CompileError::new(
            tag,
            format!("{what} must be a non-zero positive integer constant"),
            e.span,
        )),
    }
}

/// The stack `stack(n)` or `ustack(n[, strsize])` records (`name` is one of them).
/// `defaults` are the frame counts of `stack()` and `ustack()` without an argument.
pub(crate) fn stack_datum(
    name: &str,
    args: &[Expr],
    span: Span,
    defaults: (u32, u32),
) -> Result<Datum> {
    if name == "stack" {
        arg_count(name, args, 0, 1, span)?;
        let frames = match args.first() {
            Some(a) => frames_arg(a, "D_STACK_SIZE", "stack( ) argument #1")?,
            None => defaults.0,
        };
        Ok(Datum::Stack { frames })
    } else {
        arg_count(name, args, 0, 2, span)?;
        let frames = match args.first() {
            Some(a) => frames_arg(a, "D_USTACK_FRAMES", "ustack( ) argument #1")?,
            None => defaults.1,
        };
        // The string space of ustack helpers (argument #2) has no use on Linux: checked,
        // then ignored.
        if let Some(a) = args.get(1) {
            if super::aggregate::constant(a).is_none_or(|n| n < 0) {
                return Err(CompileError::new(
                    "D_USTACK_STRSIZE",
                    "ustack( ) argument #2 must be a positive integer constant",
                    a.span,
                ));
            }
        }
        Ok(Datum::UStack { frames })
    }
}

/// `func(pc)`, `ufunc(pc)`, ...: the datum such a call records and its address argument.
pub(crate) fn symbol_call(e: &Expr) -> Result<Option<(Datum, &Expr)>> {
    let ExprKind::Call { name, args, .. } = &e.kind else {
        return Ok(None);
    };
    let Some(datum) = Datum::symbol_function(name) else {
        return Ok(None);
    };
    arg_count(name, args, 1, 1, e.span)?;
    Ok(Some((datum, &args[0])))
}

/// The datum an aggregation key records when it is a stack or a symbol; `defaults` as for
/// [`stack_datum`].
pub(crate) fn key_datum(e: &Expr, defaults: (u32, u32)) -> Result<Option<Datum>> {
    if let ExprKind::Call { name, args, .. } = &e.kind {
        if name == "stack" || name == "ustack" {
            return stack_datum(name, args, e.span, defaults).map(Some);
        }
    }
    Ok(symbol_call(e)?.map(|(d, _)| d))
}

impl Gen<'_, '_> {
    /// Frames of `stack()` and `ustack()` without an argument, from the options.
    pub(crate) fn stack_defaults(&self) -> (u32, u32) {
        (self.c.opts.stack_frames, self.c.opts.ustack_frames)
    }

    /// Take the stack `datum` (a [`Datum::Stack`] or [`Datum::UStack`]) into scratch at
    /// `offset`: for a user stack the process id, then the frames.
    pub(crate) fn emit_stack(&mut self, offset: u32, datum: Datum) {
        let (frames, user) = match datum {
            Datum::Stack { frames } => (frames, false),
            Datum::UStack { frames } => (frames, true),
            _ => return,
        };
        let mut pcs = offset;
        if user {
            self.store_pid(offset);
            pcs += 8;
        }
        self.e.emit(Insn::ldx(Size::DW, R1, R10, regs::CTX_SLOT));
        self.scratch_addr(R2, pcs);
        self.e.emit(Insn::mov64_imm(R3, (frames * 8) as i32));
        self.e
            .emit(Insn::mov64_imm(R4, if user { BPF_F_USER_STACK } else { 0 }));
        // On failure the helper zeroes the buffer: an empty stack.
        self.e.emit(Insn::call(helpers::GET_STACK));
    }

    /// Store the current process id (the thread group id) as a u64 at scratch `offset`.
    fn store_pid(&mut self, offset: u32) {
        self.e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
        self.e.emit(Insn::alu64_imm(BPF_RSH, R0, 32));
        self.e
            .emit(Insn::stx(Size::DW, SCRATCH, self.small(offset), R0));
    }

    /// Evaluate the address `pc` of a symbol datum and store it at scratch `offset` (after
    /// the process id for user symbols).
    pub(crate) fn record_symbol(&mut self, pc: &Expr, datum: Datum, offset: u32) -> Result<()> {
        let v = self.expr(pc)?;
        if !v.ty.is_scalar() {
            return Err(CompileError::new(
                "D_PROTO_ARG",
                format!(
                    "argument #1 is incompatible with prototype:\n\tprototype: uintptr_t\n\t argument: {}",
                    v.ty
                ),
                pc.span,
            ));
        }
        self.store_symbol(&v, datum, offset);
        self.pop(v.reg);
        Ok(())
    }

    /// Store the evaluated address `v` of a symbol datum at scratch `offset`.
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
    /// unwinder finds, at most [`MAX_STACK_FRAMES`]; 0 when it finds none.
    // The built-in variables are dispatched by `builtins.rs`, which calls this for them.
    pub(crate) fn stack_depth(&mut self, user: bool, span: Span) -> Result<Val> {
        let frames = MAX_STACK_FRAMES;
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
                if let Some((datum, pc)) = symbol_call(&args[0])? {
                    let offset = self.clause_state().record_len;
                    self.clause_state().record_len += datum.size();
                    self.record_symbol(pc, datum, offset)?;
                    ActionKind::Datum { offset, datum }
                } else {
                    let v = self.expr(&args[0])?;
                    let field = self.record_value(&v);
                    self.pop(v.reg);
                    ActionKind::Trace(field)
                }
            }
            "stack" | "ustack" => {
                let datum = stack_datum(name, args, span, self.stack_defaults())?;
                let offset = self.clause_state().record_len;
                self.clause_state().record_len += datum.size();
                self.emit_stack(offset, datum);
                ActionKind::Datum { offset, datum }
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
            dtrace_abi::datum::SCALAR_SLOT
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
        let presence = dtrace_abi::record::PRESENCE as i16;
        self.e.emit(Insn::ldx(Size::DW, R1, SCRATCH, presence));
        self.e.mov_const(R2, 1u64 << bit);
        self.e.emit(Insn::alu64_reg(BPF_OR, R1, R2));
        self.e.emit(Insn::stx(Size::DW, SCRATCH, presence, R1));
        Ok(Some(bit))
    }
}

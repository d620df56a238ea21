//! Expressions: constants, operators with C's conversions on 64-bit registers, assignment,
//! casts and `sizeof`. Every integer value is kept normalized to its type (sign- or
//! zero-extended from its width), so 64-bit operations give C's results.

mod library;
mod member;

use dtrace_ebpf::*;
use dtrace_frontend::ast::{BinaryOp, Expr, ExprKind, MacroVar, UnaryOp};
use dtrace_frontend::{CompileError, Result, Span};

use super::fault::FaultSite;
use super::regs::{self, VReg};
use super::vars::VarRef;
use super::{Gen, Val};
use crate::program::Fault;
use crate::types::{self, Type};

/// The C type of an integer constant, from its value, suffix and base.
pub fn int_constant_type(value: u64, unsigned: bool, longs: u8, decimal: bool) -> Type {
    let candidates: &[Type] = match (unsigned, longs, decimal) {
        (false, 0, true) => &[types::INT, types::LONG, types::ULONG],
        (false, 0, false) => &[types::INT, types::UINT, types::LONG, types::ULONG],
        (true, 0, _) => &[types::UINT, types::ULONG],
        (false, 1, true) => &[types::LONG, types::ULONG],
        (false, 1, false) => &[types::LONG, types::ULONG],
        (true, 1, _) => &[types::ULONG],
        (false, _, _) => &[types::LLONG, types::ULLONG],
        (true, _, _) => &[types::ULLONG],
    };
    candidates
        .iter()
        .find(|t| fits(value, t))
        .cloned()
        .unwrap_or(types::ULLONG)
}

fn fits(value: u64, ty: &Type) -> bool {
    match ty {
        Type::Int {
            size: 4, signed, ..
        } => {
            value
                <= if *signed {
                    i32::MAX as u64
                } else {
                    u32::MAX as u64
                }
        }
        Type::Int { signed: true, .. } => value <= i64::MAX as u64,
        _ => true,
    }
}

/// Emit code that truncates `r` to `ty`'s width and extends it back to 64 bits.
pub fn normalize(e: &mut crate::emit::Emitter, r: Reg, ty: &Type) {
    if let Type::Int { size, signed, .. } = ty {
        match (size, signed) {
            (8, _) => {}
            (4, false) => e.emit(Insn::alu32_reg(BPF_MOV, r, r)),
            (s, true) => e.emit(Insn::movsx64(r, r, *s as i16 * 8)),
            (s, false) => e.emit(Insn::alu64_imm(BPF_AND, r, (1i32 << (*s as i32 * 8)) - 1)),
        }
    }
}

fn arith_error(op: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_OP_ARITH",
        format!("operator {op} requires operands of arithmetic type"),
        span,
    )
}

/// DTrace names an unknown function `undefined function name: NAME` (D_FUNC_UNDEF).
fn undefined_function(err: CompileError, name: &str) -> CompileError {
    if err.tag == "D_FUNC_UNDEF" && err.message.starts_with("failed to resolve") {
        CompileError {
            message: format!("undefined function name: {name}"),
            ..err
        }
    } else {
        err
    }
}

pub fn binary_op_text(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::Mod => "%",
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Shl => "<<",
        BinaryOp::Shr => ">>",
        BinaryOp::Lt => "<",
        BinaryOp::Le => "<=",
        BinaryOp::Gt => ">",
        BinaryOp::Ge => ">=",
        BinaryOp::Eq => "==",
        BinaryOp::Ne => "!=",
        BinaryOp::BitAnd => "&",
        BinaryOp::BitXor => "^",
        BinaryOp::BitOr => "|",
        BinaryOp::LogAnd => "&&",
        BinaryOp::LogXor => "^^",
        BinaryOp::LogOr => "||",
    }
}

impl Gen<'_, '_> {
    /// Evaluate `e` into a new virtual register.
    pub(crate) fn expr(&mut self, e: &Expr) -> Result<Val> {
        self.load_translators()?;
        match &e.kind {
            ExprKind::Int {
                value,
                unsigned,
                longs,
                decimal,
            } => {
                let ty = int_constant_type(*value, *unsigned, *longs, *decimal);
                self.constant(*value, ty, e.span)
            }
            ExprKind::Char(c) => self.constant(*c as i8 as i64 as u64, types::CHAR, e.span),
            ExprKind::Str(s) => self.string_literal(s, e.span),
            ExprKind::Ident(name) => {
                if let Some(v) = self.bound_input(name, e.span)? {
                    return Ok(v);
                }
                if self.c.is_global(name) {
                    return self.load_var(VarRef::Global(name), e.span);
                }
                if let Some(v) = self.builtin(name, e.span)? {
                    return Ok(v);
                }
                if name == "NULL" {
                    // DTrace's built-in NULL: the integer constant 0 (sizeof 4).
                    return self.constant(0, types::INT, e.span);
                }
                if let Some(v) = library::constant(name) {
                    return self.constant(v as u64, types::INT, e.span);
                }
                Err(CompileError::new(
                    "D_IDENT_UNDEF",
                    format!("failed to resolve {name}: Unknown variable name"),
                    e.span,
                ))
            }
            ExprKind::Macro(m) => self.macro_var(m, e.span),
            ExprKind::SelfVar(_) | ExprKind::ThisVar(_) => {
                let var = VarRef::of(e).expect("a variable");
                self.load_var(var, e.span)
            }
            ExprKind::Index { base, args } => match &base.kind {
                ExprKind::Ident(name) if self.c.is_assoc(name) => {
                    self.load_var(VarRef::of(e).expect("an array"), e.span)
                }
                ExprKind::Ident(name) if name == "args" => self.typed_arg(args, e.span),
                ExprKind::SelfVar(_) => self.load_var(VarRef::of(e).expect("an array"), e.span),
                _ if self.is_place(e) => self.place_value(e),
                ExprKind::Ident(name) => Err(CompileError::new(
                    "D_IDENT_UNDEF",
                    format!("failed to resolve {name}: Unknown variable name"),
                    base.span,
                )),
                ExprKind::Aggregation(name) => Err(self.aggregation_in_expr(name, e.span)),
                ExprKind::Index { base: inner, .. }
                    if matches!(inner.kind, ExprKind::Aggregation(_)) =>
                {
                    let ExprKind::Aggregation(name) = &inner.kind else {
                        unreachable!()
                    };
                    Err(multi_dimensional(name, e.span))
                }
                _ => Err(unsupported("indexing of this expression", e.span)),
            },
            ExprKind::Aggregation(name) => Err(self.aggregation_in_expr(name, e.span)),
            ExprKind::Unary { op, operand } => self.unary(*op, operand, e.span),
            ExprKind::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, e.span),
            ExprKind::Assign { op, lhs, rhs } => self.assign(*op, lhs, rhs, e.span),
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
            } => self.ternary(cond, then, otherwise, e.span),
            ExprKind::Comma(a, b) => {
                let v = self.expr(a)?;
                self.pop(v.reg);
                self.expr(b)
            }
            ExprKind::Call {
                name,
                args,
                name_span,
            } => self
                .subroutine(name, args, *name_span, e.span)
                .map_err(|err| undefined_function(err, name)),
            ExprKind::Cast { ty, operand } => {
                let target = self.c.resolve_type(&ty.spec, &ty.declarator, ty.span)?;
                let v = self.expr(operand)?;
                if matches!(target, Type::Struct(_) | Type::Array(..) | Type::Opaque(_)) {
                    return Err(CompileError::new(
                        "D_CAST_INVAL",
                        format!("invalid cast expression: \"{}\" to \"{target}\"", v.ty),
                        e.span,
                    ));
                }
                if target.is_string() || v.ty.is_string() {
                    if target.is_string() && v.ty.is_string() {
                        return Ok(v);
                    }
                    return Err(CompileError::new(
                        "D_CAST_INVAL",
                        format!("invalid cast expression: \"{}\" to \"{target}\"", v.ty),
                        e.span,
                    ));
                }
                // Convert from the operand's type: `convert` compares against the value's
                // current type, so it must run before the value is retyped (retyping first
                // made every integer cast a no-op, leaving `(char)300` as 300).
                self.convert(&v, &target);
                Ok(Val { ty: target, ..v })
            }
            ExprKind::SizeofType(tn) => {
                let ty = self.c.resolve_type(&tn.spec, &tn.declarator, tn.span)?;
                let size = self.size_of(&ty, e.span)?;
                self.constant(size, types::ULONG, e.span)
            }
            ExprKind::SizeofExpr(inner) => self.sizeof_expr(inner, e.span),
            ExprKind::Stringof(inner) => self.stringof(inner, e.span),
            ExprKind::Member { base, name, arrow } => {
                match self.translated_member(base, name, *arrow, e.span)? {
                    Some(v) => Ok(v),
                    None => self.place_value(e),
                }
            }
            ExprKind::Symbol { .. } => Err(unsupported("kernel symbols", e.span)),
            ExprKind::Offsetof { ty, member } => self.offsetof(ty, member, e.span),
            ExprKind::Xlate { ty, operand } => self.xlate_value(ty, operand, e.span),
        }
    }

    /// The type of `e`, without keeping any code for it.
    pub(crate) fn type_of(&mut self, e: &Expr) -> Result<Type> {
        let checkpoint = self.e.checkpoint();
        let scratch = self.scratch_top;
        let this_count = self.this_offsets.len();
        let v = self.expr(e)?;
        self.pop(v.reg);
        self.e.rollback(checkpoint);
        self.scratch_top = scratch;
        if self.this_offsets.len() != this_count {
            // Slots placed while typing lie above the restored top: forget them.
            self.this_offsets.retain(|_, off| *off < scratch);
        }
        Ok(v.ty)
    }

    pub(crate) fn constant(&mut self, value: u64, ty: Type, span: Span) -> Result<Val> {
        let v = self.push(span)?;
        let value = types::normalize(value, &ty);
        self.e.mov_const(R1, value);
        regs::write(&mut self.e, v, R1);
        Ok(Val { reg: v, ty })
    }

    pub(crate) fn string_literal(&mut self, s: &[u8], span: Span) -> Result<Val> {
        let off = self.c.rodata_string(s);
        let v = self.push(span)?;
        self.e.ld_map_value(R1, self.c.core.rodata, off);
        regs::write(&mut self.e, v, R1);
        Ok(Val {
            reg: v,
            ty: Type::String,
        })
    }

    fn macro_var(&mut self, m: &MacroVar, span: Span) -> Result<Val> {
        let macros = self.c.macros;
        match m {
            MacroVar::Named(name) => match macros.named.get(name.as_str()) {
                Some(&v) => self.constant(v as u64, types::INT, span),
                None => Err(CompileError::new(
                    "D_MACRO_UNDEF",
                    format!("macro argument ${name} is not defined"),
                    span,
                )),
            },
            MacroVar::Arg(n) | MacroVar::StrArg(n) => {
                let text = macros.args.get(*n as usize).cloned();
                let text = match text {
                    Some(t) => t,
                    None if macros.defaultargs => String::new(),
                    None => {
                        let dollars = if matches!(m, MacroVar::StrArg(_)) {
                            "$$"
                        } else {
                            "$"
                        };
                        return Err(CompileError::new(
                            "D_MACRO_UNDEF",
                            format!("macro argument {dollars}{n} is not defined"),
                            span,
                        ));
                    }
                };
                if matches!(m, MacroVar::StrArg(_)) {
                    return self.string_literal(text.as_bytes(), span);
                }
                if text.is_empty() {
                    return self.constant(0, types::INT, span);
                }
                // A negative argument is the negation of its magnitude, typed as the
                // magnitude's constant would be (`-7` is an int).
                let digits = text.strip_prefix('-').unwrap_or(&text);
                match parse_int(digits).filter(|_| !digits.starts_with(['-', '+'])) {
                    Some(v) => {
                        let ty = int_constant_type(v, false, 0, !digits.starts_with('0'));
                        let v = if digits.len() < text.len() {
                            v.wrapping_neg()
                        } else {
                            v
                        };
                        self.constant(v, ty, span)
                    }
                    None => Err(CompileError::new(
                        "D_IDENT_UNDEF",
                        format!("failed to resolve {text}: Unknown variable name"),
                        span,
                    )),
                }
            }
        }
    }

    /// Convert the value in `v` to `to` in place (integers are re-normalized).
    pub(crate) fn convert(&mut self, v: &Val, to: &Type) {
        if to.is_integer() && to != &v.ty {
            let r = regs::read(&mut self.e, v.reg, R1);
            normalize(&mut self.e, r, to);
            regs::write(&mut self.e, v.reg, r);
        }
    }

    fn scalar_operand(&mut self, e: &Expr, op: &str) -> Result<Val> {
        let v = self.expr(e)?;
        if !v.ty.is_scalar() {
            return Err(arith_error(op, e.span));
        }
        Ok(v)
    }

    fn unary(&mut self, op: UnaryOp, operand: &Expr, span: Span) -> Result<Val> {
        match op {
            UnaryOp::Neg | UnaryOp::Plus | UnaryOp::BitNot => {
                let text = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Plus => "+",
                    _ => "~",
                };
                let v = self.scalar_operand(operand, text)?;
                let ty = v.ty.promoted();
                let r = regs::read(&mut self.e, v.reg, R1);
                match op {
                    UnaryOp::Neg => self.e.emit(Insn::alu64_imm(BPF_NEG, r, 0)),
                    UnaryOp::BitNot => self.e.emit(Insn::alu64_imm(BPF_XOR, r, -1)),
                    _ => {}
                }
                normalize(&mut self.e, r, &ty);
                regs::write(&mut self.e, v.reg, r);
                Ok(Val { reg: v.reg, ty })
            }
            UnaryOp::Not => {
                let v = self.expr(operand)?;
                let r = if v.ty.is_string() {
                    // A string is true when it is not empty.
                    let p = regs::read(&mut self.e, v.reg, R1);
                    self.e.emit(Insn::ldx(Size::B, R1, p, 0));
                    R1
                } else {
                    regs::read(&mut self.e, v.reg, R1)
                };
                self.set_bool(v.reg, BPF_JEQ, r, None);
                Ok(Val {
                    reg: v.reg,
                    ty: types::INT,
                })
            }
            UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec => {
                let text = if matches!(op, UnaryOp::PreInc | UnaryOp::PostInc) {
                    "++"
                } else {
                    "--"
                };
                let Some(var) = VarRef::of(operand) else {
                    return Err(CompileError::new(
                        "D_OP_LVAL",
                        format!("operator {text} requires modifiable lvalue as an operand"),
                        span,
                    ));
                };
                let old =
                    self.load_var_or_zero(VarRef::of(operand).expect("a variable"), operand.span)?;
                if !old.ty.is_scalar() {
                    return Err(arith_error(text, span));
                }
                let new = self.push(span)?;
                let r = regs::read(&mut self.e, old.reg, R1);
                self.e.emit(Insn::mov64_reg(R2, r));
                let delta = if text == "++" { 1 } else { -1 };
                self.e.emit(Insn::alu64_imm(BPF_ADD, R2, delta));
                normalize(&mut self.e, R2, &old.ty);
                regs::write(&mut self.e, new, R2);
                let newv = Val {
                    reg: new,
                    ty: old.ty.clone(),
                };
                self.store_var(var, &newv, span)?;
                if matches!(op, UnaryOp::PreInc | UnaryOp::PreDec) {
                    regs::read_into(&mut self.e, new, R1);
                    regs::write(&mut self.e, old.reg, R1);
                }
                self.pop(new);
                Ok(old)
            }
            UnaryOp::Deref => {
                let p = self.deref_place(operand, span)?;
                self.load_place(p, span)
            }
            UnaryOp::AddrOf => Err(unsupported("taking an address", span)),
        }
    }

    /// Load a variable, creating an unset global as an int 0 so `x++` works before `x = ...`.
    fn load_var_or_zero(&mut self, var: VarRef<'_>, span: Span) -> Result<Val> {
        match var {
            VarRef::Global(name) if !self.c.is_global(name) && !self.is_builtin(name) => {
                // The first use creates the variable; later firings read what was stored.
                self.c.new_global(name, types::INT);
                self.load_var(VarRef::Global(name), span)
            }
            other => self.load_var(other, span),
        }
    }

    /// Write 1 to `dst` if `a op b` (or `a op 0` when `b` is None), else 0.
    fn set_bool(&mut self, dst: VReg, op: u8, a: Reg, b: Option<Reg>) {
        let yes = self.e.label();
        let done = self.e.label();
        match b {
            Some(b) => self.e.jmp_reg(op, a, b, yes),
            None => self.e.jmp_imm(op, a, 0, yes),
        }
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.goto(done);
        self.e.bind(yes);
        self.e.emit(Insn::mov64_imm(R0, 1));
        self.e.bind(done);
        regs::write(&mut self.e, dst, R0);
    }

    fn binary(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr, span: Span) -> Result<Val> {
        match op {
            BinaryOp::LogAnd | BinaryOp::LogOr => return self.logical(op, lhs, rhs, span),
            _ => {}
        }
        if matches!(op, BinaryOp::Div | BinaryOp::Mod)
            && fold(lhs).is_some()
            && fold(rhs) == Some(0)
        {
            return Err(CompileError::new(
                "D_DIV_ZERO",
                "expression contains division by zero",
                span,
            ));
        }
        let a = self.expr(lhs)?;
        let b = self.expr(rhs)?;
        if matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
            // A string against the null pointer constant (0 or NULL), as DTrace allows. A
            // string that is "not found" (strchr, strstr, ...) is empty here, so NULL is
            // taken to mean the empty string.
            let null_const = |e: &Expr| {
                fold(e) == Some(0) || matches!(&e.kind, ExprKind::Ident(n) if n == "NULL")
            };
            let string_side = if a.ty.is_string() && !b.ty.is_string() && null_const(rhs) {
                Some(a.reg)
            } else if b.ty.is_string() && !a.ty.is_string() && null_const(lhs) {
                Some(b.reg)
            } else {
                None
            };
            if let Some(sreg) = string_side {
                regs::read_into(&mut self.e, sreg, R1);
                self.e.emit(Insn::ldx(Size::B, R1, R1, 0));
                let jop = if op == BinaryOp::Eq { BPF_JEQ } else { BPF_JNE };
                self.set_bool(a.reg, jop, R1, None);
                self.pop(b.reg);
                return Ok(Val {
                    reg: a.reg,
                    ty: types::INT,
                });
            }
        }
        let result = self.binary_values(op, &a, &b, span)?;
        self.pop(b.reg);
        Ok(result)
    }

    /// `a op b` on two evaluated values; the result replaces `a`.
    pub(crate) fn binary_values(
        &mut self,
        op: BinaryOp,
        a: &Val,
        b: &Val,
        span: Span,
    ) -> Result<Val> {
        let text = binary_op_text(op);
        let comparison = matches!(
            op,
            BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne
        );
        if a.ty.is_string() || b.ty.is_string() {
            if comparison && a.ty.is_string() && b.ty.is_string() {
                return self.string_compare(op, a, b);
            }
            match op {
                BinaryOp::Mul | BinaryOp::Div => return Err(arith_error(text, span)),
                BinaryOp::Mod
                | BinaryOp::Shl
                | BinaryOp::Shr
                | BinaryOp::BitAnd
                | BinaryOp::BitXor
                | BinaryOp::BitOr => {
                    return Err(CompileError::new(
                        "D_OP_INT",
                        format!("operator {text} requires operands of integral type"),
                        span,
                    ))
                }
                _ => {}
            }
            return Err(CompileError::new(
                "D_OP_INCOMPAT",
                format!(
                    "operands have incompatible types: \"{}\" {text} \"{}\"",
                    a.ty, b.ty
                ),
                span,
            ));
        }
        if !a.ty.is_scalar() || !b.ty.is_scalar() {
            return Err(arith_error(text, span));
        }
        let ty = match op {
            BinaryOp::Shl | BinaryOp::Shr => a.ty.promoted(),
            _ => Type::common(&a.ty, &b.ty),
        };
        regs::read_into(&mut self.e, a.reg, R1);
        regs::read_into(&mut self.e, b.reg, R2);
        if !matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
            normalize(&mut self.e, R1, &ty);
            normalize(&mut self.e, R2, &ty);
        }
        let signed = ty.is_signed();
        if comparison {
            let jop = match (op, signed) {
                (BinaryOp::Eq, _) => BPF_JEQ,
                (BinaryOp::Ne, _) => BPF_JNE,
                (BinaryOp::Lt, true) => BPF_JSLT,
                (BinaryOp::Lt, false) => BPF_JLT,
                (BinaryOp::Le, true) => BPF_JSLE,
                (BinaryOp::Le, false) => BPF_JLE,
                (BinaryOp::Gt, true) => BPF_JSGT,
                (BinaryOp::Gt, false) => BPF_JGT,
                (BinaryOp::Ge, true) => BPF_JSGE,
                _ => BPF_JGE,
            };
            self.set_bool(a.reg, jop, R1, Some(R2));
            return Ok(Val {
                reg: a.reg,
                ty: types::INT,
            });
        }
        if op == BinaryOp::LogXor {
            // (a != 0) ^ (b != 0)
            self.e.emit(Insn::mov64_imm(R3, 0));
            self.e.emit(Insn::jmp_imm(BPF_JEQ, R1, 0, 1));
            self.e.emit(Insn::mov64_imm(R3, 1));
            self.e.emit(Insn::mov64_imm(R4, 0));
            self.e.emit(Insn::jmp_imm(BPF_JEQ, R2, 0, 1));
            self.e.emit(Insn::mov64_imm(R4, 1));
            self.e.emit(Insn::alu64_reg(BPF_XOR, R3, R4));
            regs::write(&mut self.e, a.reg, R3);
            return Ok(Val {
                reg: a.reg,
                ty: types::INT,
            });
        }
        let alu = match op {
            BinaryOp::Add => BPF_ADD,
            BinaryOp::Sub => BPF_SUB,
            BinaryOp::Mul => BPF_MUL,
            BinaryOp::Div => BPF_DIV,
            BinaryOp::Mod => BPF_MOD,
            BinaryOp::BitAnd => BPF_AND,
            BinaryOp::BitOr => BPF_OR,
            BinaryOp::BitXor => BPF_XOR,
            BinaryOp::Shl => BPF_LSH,
            BinaryOp::Shr if signed => BPF_ARSH,
            _ => BPF_RSH,
        };
        if matches!(op, BinaryOp::Div | BinaryOp::Mod) {
            let ok = self.e.label();
            self.e.jmp_imm(BPF_JNE, R2, 0, ok);
            self.fault(Fault::DivZero, None, FaultSite::Here);
            self.e.bind(ok);
            if signed {
                self.e.emit(Insn::alu64_sdiv_reg(alu, R1, R2));
                if op == BinaryOp::Mod {
                    // DTrace's signed remainder takes the sign of the quotient: negative
                    // when exactly one operand is (Oracle's tst.moddiv: -19 % -5 is 4,
                    // 19 % -5 is -4); the kernel's takes the dividend's.
                    let done = self.e.label();
                    self.e.jmp_imm(BPF_JSGE, R2, 0, done);
                    self.e.emit(Insn::alu64_imm(BPF_NEG, R1, 0));
                    self.e.bind(done);
                }
            } else {
                self.e.emit(Insn::alu64_reg(alu, R1, R2));
            }
        } else {
            self.e.emit(Insn::alu64_reg(alu, R1, R2));
        }
        normalize(&mut self.e, R1, &ty);
        regs::write(&mut self.e, a.reg, R1);
        Ok(Val { reg: a.reg, ty })
    }

    fn logical(&mut self, op: BinaryOp, lhs: &Expr, rhs: &Expr, _span: Span) -> Result<Val> {
        let a = self.truth(lhs)?;
        let short = self.e.label();
        let done = self.e.label();
        let ra = regs::read(&mut self.e, a, R1);
        let short_op = if op == BinaryOp::LogAnd {
            BPF_JEQ
        } else {
            BPF_JNE
        };
        self.e.jmp_imm(short_op, ra, 0, short);
        let b = self.truth(rhs)?;
        let rb = regs::read(&mut self.e, b, R1);
        self.pop(b);
        self.e.jmp_imm(short_op, rb, 0, short);
        let (full, cut) = if op == BinaryOp::LogAnd {
            (1, 0)
        } else {
            (0, 1)
        };
        self.e.emit(Insn::mov64_imm(R0, full));
        self.e.goto(done);
        self.e.bind(short);
        self.e.emit(Insn::mov64_imm(R0, cut));
        self.e.bind(done);
        regs::write(&mut self.e, a, R0);
        Ok(Val {
            reg: a,
            ty: types::INT,
        })
    }

    /// Evaluate `e` as a truth value (scalars as they are, strings by non-emptiness).
    fn truth(&mut self, e: &Expr) -> Result<VReg> {
        let v = self.expr(e)?;
        if v.ty.is_string() {
            let p = regs::read(&mut self.e, v.reg, R1);
            self.e.emit(Insn::ldx(Size::B, R1, p, 0));
            regs::write(&mut self.e, v.reg, R1);
        }
        Ok(v.reg)
    }

    fn ternary(&mut self, cond: &Expr, then: &Expr, otherwise: &Expr, span: Span) -> Result<Val> {
        let c = self.truth(cond)?;
        let rc = regs::read(&mut self.e, c, R1);
        self.pop(c);
        let else_label = self.e.label();
        let done = self.e.label();
        self.e.jmp_imm(BPF_JEQ, rc, 0, else_label);
        let a = self.expr(then)?;
        self.e.goto(done);
        self.e.bind(else_label);
        self.pop(a.reg);
        let b = self.expr(otherwise)?;
        debug_assert_eq!(a.reg, b.reg);
        if a.ty.is_string() != b.ty.is_string() {
            return Err(CompileError::new(
                "D_OP_INCOMPAT",
                format!(
                    "operands have incompatible types: \"{}\" : \"{}\"",
                    a.ty, b.ty
                ),
                span,
            ));
        }
        let ty = if a.ty.is_string() {
            Type::String
        } else {
            Type::common(&a.ty, &b.ty)
        };
        // Convert the else value here; the then value is converted on its own path below.
        self.convert(&b, &ty);
        let join = self.e.label();
        self.e.goto(join);
        self.e.bind(done);
        self.convert(&a, &ty);
        self.e.bind(join);
        Ok(Val { reg: b.reg, ty })
    }

    fn assign(&mut self, op: Option<BinaryOp>, lhs: &Expr, rhs: &Expr, span: Span) -> Result<Val> {
        let Some(var) = VarRef::of(lhs) else {
            if let ExprKind::Index { base, .. } = &lhs.kind {
                if let ExprKind::Index { base: inner, .. } = &base.kind {
                    if let ExprKind::Aggregation(name) = &inner.kind {
                        return Err(multi_dimensional(name, lhs.span));
                    }
                }
            }
            if matches!(lhs.kind, ExprKind::Aggregation(_))
                || matches!(&lhs.kind, ExprKind::Index { base, .. } if matches!(base.kind, ExprKind::Aggregation(_)))
            {
                return Err(CompileError::new(
                    "D_AGG_FUNC",
                    "aggregating function required to the right of an aggregation assignment"
                        .to_string(),
                    rhs.span,
                ));
            }
            let text = op.map_or("=".to_string(), |o| format!("{}=", binary_op_text(o)));
            return Err(CompileError::new(
                "D_OP_LVAL",
                format!("operator {text} requires modifiable lvalue as an operand"),
                span,
            ));
        };
        let value = match op {
            None => self.expr(rhs)?,
            Some(op) => {
                let cur = self.load_var_or_zero(VarRef::of(lhs).expect("a variable"), lhs.span)?;
                let b = self.expr(rhs)?;
                let result = self.binary_values(op, &cur, &b, span)?;
                self.pop(b.reg);
                result
            }
        };
        self.store_var(var, &value, span)?;
        // As in C, the assignment has the type of its left operand: `store_var` converted
        // the value to it in place, so retype it too (keeping the right operand's type gave
        // `(u = -1) < 0` true for an unsigned int `u`, and `sizeof (c = 300)` 4 for a char).
        let ty = self.type_of(lhs)?;
        Ok(Val { ty, ..value })
    }
}

/// The value of an integer constant expression (constants and operators on them), in 64
/// bits; used to reject division by a constant zero at compile time, as DTrace does.
fn fold(e: &Expr) -> Option<i64> {
    Some(match &e.kind {
        ExprKind::Int { value, .. } => *value as i64,
        ExprKind::Char(c) => *c as i8 as i64,
        ExprKind::Unary { op, operand } => {
            let v = fold(operand)?;
            match op {
                UnaryOp::Neg => v.wrapping_neg(),
                UnaryOp::Plus => v,
                UnaryOp::BitNot => !v,
                UnaryOp::Not => (v == 0) as i64,
                _ => return None,
            }
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (fold(lhs)?, fold(rhs)?);
            match op {
                BinaryOp::Add => a.wrapping_add(b),
                BinaryOp::Sub => a.wrapping_sub(b),
                BinaryOp::Mul => a.wrapping_mul(b),
                BinaryOp::Div if b != 0 => a.wrapping_div(b),
                BinaryOp::Mod if b < 0 => a.wrapping_rem(b).wrapping_neg(),
                BinaryOp::Mod if b != 0 => a.wrapping_rem(b),
                BinaryOp::BitAnd => a & b,
                BinaryOp::BitOr => a | b,
                BinaryOp::BitXor => a ^ b,
                BinaryOp::Shl => a.wrapping_shl(b as u32),
                BinaryOp::Shr => a.wrapping_shr(b as u32),
                _ => return None,
            }
        }
        ExprKind::Cast { operand, .. } => fold(operand)?,
        _ => return None,
    })
}

/// Parse a macro argument as a C integer (decimal, 0x hex, 0 octal, optional sign).
fn parse_int(text: &str) -> Option<u64> {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let value = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16).ok()?
    } else if digits.len() > 1 && digits.starts_with('0') {
        u64::from_str_radix(&digits[1..], 8).ok()?
    } else {
        digits.parse::<u64>().ok()?
    };
    Some(if neg { value.wrapping_neg() } else { value })
}

pub(crate) fn unsupported(what: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_UNSUPPORTED",
        format!("{what} is not supported yet"),
        span,
    )
}

fn multi_dimensional(name: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_AGG_MDIM",
        format!("improper attempt to reference @{name} as a multi-dimensional array"),
        span,
    )
}

impl Gen<'_, '_> {
    /// An aggregation read as a value: unknown names do not resolve, as in DTrace.
    fn aggregation_in_expr(&self, name: &str, span: Span) -> CompileError {
        if !self.c.aggregations.iter().any(|a| a.name == name) {
            return CompileError::new(
                "D_IDENT_UNDEF",
                format!("failed to resolve @{name}: Unknown variable name"),
                span,
            );
        }
        CompileError::new(
            "D_AGG_SCALAR",
            "aggregations may not be used in an expression; use printa()",
            span,
        )
    }
}

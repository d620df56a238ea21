//! Expressions: constants, names, operators typed as DTrace types them, pointer arithmetic
//! (scaled by the pointee's size), assignment, casts (the conversions that change a value
//! made explicit as [`ExprKind::Convert`]), and the uses DTrace gives actions and
//! aggregations in expressions (typed `void`, refused by whatever uses them, with the words
//! of that use).
//!
//! D's integers (as Oracle's DTrace computes them): an operator's value is computed in 64
//! bits and is not narrowed to the operator's type; values are narrowed only by casts
//! ([`convert`]), by stores to typed storage and by records. Constant operands are folded
//! the same way, in 64 bits (`fold_arith`, `fold_compare`).

use dtrace_frontend::ast::{self, BinaryOp, ExprKind as A, MacroVar, UnaryOp};
use dtrace_frontend::{CompileError, Result, Span};

use super::consts;
use super::Cook;
use crate::builtins::{self, Kind};
use crate::ir::{self, ArithOp, CmpOp, Comparison, Expr, ExprKind, LogicalOp, Place, PlaceBase};
use crate::types::{self, kernel, Type};

/// The C type of an integer constant, from its value, suffix and base.
pub fn int_constant_type(value: u64, unsigned: bool, longs: u8, decimal: bool) -> Type {
    let candidates: &[Type] = match (unsigned, longs, decimal) {
        (false, 0, true) => &[types::INT, types::LONG, types::ULONG],
        (false, 0, false) => &[types::INT, types::UINT, types::LONG, types::ULONG],
        (true, 0, _) => &[types::UINT, types::ULONG],
        (false, 1, _) => &[types::LONG, types::ULONG],
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

fn arith_op(op: BinaryOp) -> Option<ArithOp> {
    Some(match op {
        BinaryOp::Mul => ArithOp::Mul,
        BinaryOp::Div => ArithOp::Div,
        BinaryOp::Mod => ArithOp::Mod,
        BinaryOp::Add => ArithOp::Add,
        BinaryOp::Sub => ArithOp::Sub,
        BinaryOp::Shl => ArithOp::Shl,
        BinaryOp::Shr => ArithOp::Shr,
        BinaryOp::BitAnd => ArithOp::And,
        BinaryOp::BitXor => ArithOp::Xor,
        BinaryOp::BitOr => ArithOp::Or,
        _ => return None,
    })
}

/// For `s + i`, `i + s` or `s - i` (a string and an integer): the string, the integer
/// and the step.
fn string_offset(op: BinaryOp, a: &Expr, b: &Expr) -> Option<(Expr, Expr, ArithOp)> {
    match op {
        BinaryOp::Add if a.ty.is_string() && b.ty.is_integer() => {
            Some((a.clone(), b.clone(), ArithOp::Add))
        }
        BinaryOp::Add if b.ty.is_string() && a.ty.is_integer() => {
            Some((b.clone(), a.clone(), ArithOp::Add))
        }
        BinaryOp::Sub if a.ty.is_string() && b.ty.is_integer() => {
            Some((a.clone(), b.clone(), ArithOp::Sub))
        }
        _ => None,
    }
}

fn cmp_op(op: BinaryOp) -> Option<CmpOp> {
    Some(match op {
        BinaryOp::Lt => CmpOp::Lt,
        BinaryOp::Le => CmpOp::Le,
        BinaryOp::Gt => CmpOp::Gt,
        BinaryOp::Ge => CmpOp::Ge,
        BinaryOp::Eq => CmpOp::Eq,
        BinaryOp::Ne => CmpOp::Ne,
        _ => return None,
    })
}

pub(crate) fn arith_error(op: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_OP_ARITH",
        format!("operator {op} requires operands of arithmetic type"),
        span,
    )
}

fn int_error(op: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_OP_INT",
        format!("operator {op} requires operands of integral type"),
        span,
    )
}

pub(crate) fn incompatible(a: &Type, op: &str, b: &Type, span: Span) -> CompileError {
    CompileError::new(
        "D_OP_INCOMPAT",
        format!("operands have incompatible types: \"{a}\" {op} \"{b}\""),
        span,
    )
}

pub(crate) fn unsupported(what: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_UNSUPPORTED",
        format!("{what} is not supported yet"),
        span,
    )
}

pub(crate) fn undefined(name: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_IDENT_UNDEF",
        format!("failed to resolve {name}: Unknown variable name"),
        span,
    )
}

/// A `self->`, `this->` or associative-array variable read before anything declares or
/// assigns it: DTrace creates such a name when it sees it and then refuses the read.
pub(crate) fn unassigned(name: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_VAR_UNDEF",
        format!("{name} has not yet been declared or assigned"),
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

/// An expression of `ty`.
pub(crate) fn mk(kind: ExprKind, ty: Type, span: Span) -> Expr {
    Expr { kind, ty, span }
}

/// The integer constant `value` of `ty` (its 64 bits as computed: not narrowed to `ty`).
pub(crate) fn int(value: u64, ty: Type, span: Span) -> Expr {
    mk(ExprKind::Int(value), ty, span)
}

/// `e` converted to `to` as DTrace casts: truncated and extended when
/// [`Type::cast_changes`] says so (constants at once); otherwise only retyped.
pub(crate) fn convert(e: Expr, to: &Type) -> Expr {
    let changes = e.ty.cast_changes(to);
    // Retyping an integer to another width or signedness would change how its operator
    // computes (a division, a cast): such a conversion keeps a node, which emits nothing.
    let same_kind = match (&e.ty, to) {
        (
            Type::Int {
                size: a, signed: x, ..
            },
            Type::Int {
                size: b, signed: y, ..
            },
        ) => a == b && x == y,
        _ => true,
    };
    if !changes && (same_kind || matches!(e.kind, ExprKind::Int(_))) {
        return Expr {
            ty: to.clone(),
            ..e
        };
    }
    if let ExprKind::Int(v) = e.kind {
        return int(types::normalize(v, to), to.clone(), e.span);
    }
    let span = e.span;
    mk(ExprKind::Convert(Box::new(e)), to.clone(), span)
}

/// Whether a pointer value may be an address of D's own storage (scratch: `alloca`,
/// `copyin`, a translated struct; a variable's address), which the verifier tracks as a
/// pointer, rather than a number read from somewhere.
fn storage_address(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Build { .. } | ExprKind::AddrOf(_) | ExprKind::Call(..) | ExprKind::Bound(_) => {
            true
        }
        ExprKind::Let { body: inner, .. }
        | ExprKind::Convert(inner)
        | ExprKind::Comma(_, inner)
        | ExprKind::InBase(inner) => storage_address(inner),
        ExprKind::Cond {
            then, otherwise, ..
        } => storage_address(then) || storage_address(otherwise),
        ExprKind::Arith { lhs, rhs, .. } => storage_address(lhs) || storage_address(rhs),
        _ => false,
    }
}

/// Whether `text` is written as a D integer constant (decimal, octal or hexadecimal
/// digits; no suffix).
fn is_integer_syntax(text: &str) -> bool {
    let hex = text.strip_prefix("0x").or_else(|| text.strip_prefix("0X"));
    match hex {
        Some(h) => !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()),
        None => !text.is_empty() && text.chars().all(|c| c.is_ascii_digit()),
    }
}

/// Whether `text` is a D identifier (scoped ones, `vmlinux`max_pfn`, included).
fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '`')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '`')
}

/// Whether storing `value` into `place` deletes a dynamic variable that 0 is no value of
/// (DTrace allows the integer constant 0 there for that).
fn is_deletion(place: &Place, value: &Expr) -> bool {
    let dynamic = matches!(place.base, PlaceBase::Thread(_) | PlaceBase::Assoc { .. })
        && place.offset == 0
        && place.index.is_none();
    dynamic
        && !place.ty.is_scalar()
        && value.ty.is_integer()
        && matches!(value.kind, ExprKind::Int(0))
}

/// Whether `e` is an action used as a value or an aggregation reference: DTrace types
/// them `void`, and whatever uses them says why it cannot.
pub(crate) fn is_void(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Void(_) | ExprKind::AggRef(_))
}

/// Whether `e` is an aggregation, `@a` or `@a[...]`, or a plain assignment to one.
fn is_aggregation_operand(e: &ast::Expr) -> bool {
    let is_agg = |e: &ast::Expr| match &e.kind {
        A::Aggregation(_) => true,
        A::Index { base, .. } => matches!(base.kind, A::Aggregation(_)),
        _ => false,
    };
    match &e.kind {
        A::Assign { op: None, lhs, .. } => is_agg(lhs),
        _ => is_agg(e),
    }
}

impl Cook<'_> {
    /// Type an expression.
    pub(crate) fn expr(&mut self, e: &ast::Expr) -> Result<Expr> {
        let span = e.span;
        match &e.kind {
            A::Int {
                value,
                unsigned,
                longs,
                decimal,
            } => {
                let ty = int_constant_type(*value, *unsigned, *longs, *decimal);
                Ok(int(*value, ty, span))
            }
            // As in DTrace, a character constant is an `int` (of the byte's value).
            A::Char(c) => Ok(int(u64::from(*c), types::INT, span)),
            A::Str(s) => Ok(mk(ExprKind::Str(s.clone()), Type::String, span)),
            A::Ident(name) => self.ident(name, span),
            A::Macro(m) => self.macro_var(m, span),
            A::SelfVar(name) => match self.thread_var(name) {
                Some(id) => {
                    let ty = self.prog.thread_vars[id].ty.clone();
                    self.place_value(Place::whole(PlaceBase::Thread(id), ty), span)
                }
                None => Err(unassigned(&format!("self->{name}"), span)),
            },
            A::ThisVar(name) => match self.this_var(name) {
                Some(id) => {
                    let ty = self.prog.this_vars[id].ty.clone();
                    self.place_value(Place::whole(PlaceBase::This(id), ty), span)
                }
                None => Err(unassigned(&format!("this->{name}"), span)),
            },
            A::Index { base, args } => self.index_value(e, base, args),
            A::Aggregation(name) => self.aggregation_ref(name, span),
            A::Unary { op, operand } => self.unary(*op, operand, span),
            A::Binary { op, lhs, rhs } => self.binary(*op, lhs, rhs, span),
            A::Assign { op, lhs, rhs } => self.assign(*op, lhs, rhs, span),
            A::Ternary {
                cond,
                then,
                otherwise,
            } => self.ternary(cond, then, otherwise, span),
            A::Comma(a, b) => {
                let a = self.expr(a)?;
                let b = self.expr(b)?;
                let ty = b.ty.clone();
                Ok(mk(ExprKind::Comma(Box::new(a), Box::new(b)), ty, span))
            }
            A::Call {
                name,
                args,
                name_span,
            } => self.call(name, args, *name_span, span),
            A::Cast { ty, operand } => self.cast(ty, operand, span),
            A::SizeofType(tn) => {
                let ty = self.resolve_type(&tn.spec, &tn.declarator, tn.span)?;
                let size = self.size_of(&ty, span)?;
                Ok(int(size, types::ULONG, span))
            }
            A::SizeofExpr(inner) => self.sizeof_expr(inner, span),
            A::Stringof(inner) => self.stringof(inner, span),
            A::Member { name, .. } if self.is_entry_ref(e) => self.entry_member(name, span),
            A::Member { base, name, arrow } => {
                match self.translated_member(base, name, *arrow, span)? {
                    Some(v) => Ok(v),
                    None => {
                        let p = self.member_place(base, name, *arrow, span)?;
                        self.place_value(p, span)
                    }
                }
            }
            A::Symbol { .. } => {
                let place = self.place_of(e)?.expect("a symbol's place");
                let ty = place.ty.clone();
                Ok(mk(ExprKind::Load(Box::new(place)), ty, span))
            }
            A::Offsetof { ty, member } => self.offsetof(ty, member, span),
            A::CallOf { callee, .. } => Err(CompileError::new(
                "D_FUNC_IDENT",
                "function designator is not of function type",
                callee.span,
            )),
            A::Xlate { ty, operand } => self.xlate_value(ty, operand, span),
        }
    }

    /// A plain identifier: a translator's input, a variable, an enumerator, an inline, a
    /// built-in variable, a kernel enumerator or a D library constant.
    fn ident(&mut self, name: &str, span: Span) -> Result<Expr> {
        if let Some(v) = self.bound_input(name, span) {
            return Ok(v);
        }
        if let Some(id) = self.global(name) {
            let ty = self.prog.globals[id].ty.clone();
            return self.place_value(Place::whole(PlaceBase::Global(id), ty), span);
        }
        if let Some(&value) = self.scope.enum_constants.get(name) {
            return Ok(int(value as u64, types::INT, span));
        }
        if let Some((ty, value)) = self.scope.inlines.get(name).cloned() {
            return self.inline(name, &ty, &value, span);
        }
        if let Some(Kind::Variable(v)) = self.predefined(name) {
            return self.builtin(v, span);
        }
        if let Some((ty, value)) = crate::types::user::enum_constant(name) {
            let ty = if ty.is_integer() { ty } else { types::LONG };
            return Ok(int(value as u64, ty, span));
        }
        if let Some(c) = kernel_enum_constant(name, span) {
            return Ok(c);
        }
        if name == "NULL" {
            // DTrace's built-in NULL: the integer constant 0 (sizeof 4).
            return Ok(int(0, types::INT, span));
        }
        if let Some(v) = builtins::library_constant(name) {
            return Ok(int(v as u64, types::INT, span));
        }
        if self.assoc(name, false).is_some() {
            return Err(CompileError::new(
                "D_IDENT_BADREF",
                format!("associative array '{name}' may not be referenced as scalar"),
                span,
            ));
        }
        Err(undefined(name, span))
    }

    /// `f[args]` of an inline with parameters: each argument evaluated once, converted to
    /// its parameter's type and bound to its name for the inline's value.
    fn inline_array(&mut self, name: &str, args: &[ast::Expr], span: Span) -> Result<Expr> {
        let array = self.scope.inline_arrays[name].clone();
        self.with_inline_args(name, args, span, |c| {
            c.inline(name, &array.ty, &array.value, span)
        })
    }

    /// Type `f` (an inline with parameters' value, or a member of its translation) with
    /// `args` bound to the parameters of inline `name`: each argument evaluated once,
    /// converted to its parameter's type.
    pub(crate) fn with_inline_args(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        f: impl FnOnce(&mut Self) -> Result<Expr>,
    ) -> Result<Expr> {
        let array = self.scope.inline_arrays[name].clone();
        if args.len() != array.keys.len() {
            return Err(CompileError::new(
                "D_PROTO_LEN",
                format!(
                    "{name}[ ] prototype mismatch: {} arg{}passed, {} expected",
                    args.len(),
                    if args.len() == 1 { " " } else { "s " },
                    array.keys.len()
                ),
                span,
            ));
        }
        let mut frame = Vec::new();
        let mut values = Vec::new();
        for ((key, ty), arg) in array.keys.iter().zip(args) {
            let v = self.expr(arg)?;
            let v = if ty.is_scalar() { convert(v, ty) } else { v };
            let id = self.bind_id();
            frame.push((key.clone(), id, v.ty.clone()));
            values.push((id, v));
        }
        let mut body = self.with_bindings(frame, f)?;
        for (id, value) in values.into_iter().rev() {
            let ty = body.ty.clone();
            body = mk(
                ExprKind::Let {
                    id,
                    value: Box::new(value),
                    body: Box::new(body),
                },
                ty,
                span,
            );
        }
        Ok(body)
    }

    /// The value of an `inline`, converted to its declared type.
    fn inline(&mut self, name: &str, ty: &Type, value: &ast::Expr, span: Span) -> Result<Expr> {
        if self.scope.expanding.iter().any(|n| n == name) {
            return Err(CompileError::new(
                "D_IDENT_UNDEF",
                format!("inline {name} is defined in terms of itself"),
                span,
            ));
        }
        self.scope.expanding.push(name.to_string());
        let v = self.expr(value);
        self.scope.expanding.pop();
        // An inline of another source (the D library's `fds`, `curpsinfo`) used in a way
        // its value does not allow is an error where the program uses it.
        let v = v.map_err(|err| match err.span {
            Some(s) if s.source != span.source && value.span.source != span.source => {
                CompileError::new(err.tag, err.message, span)
            }
            _ => err,
        })?;
        if v.ty.is_string() != ty.is_string() {
            return Err(CompileError::new(
                "D_OP_INCOMPAT",
                format!(
                    "inline {name} is declared {ty} but its value has type {}",
                    v.ty
                ),
                span,
            ));
        }
        Ok(convert(v, ty))
    }

    fn macro_var(&mut self, m: &MacroVar, span: Span) -> Result<Expr> {
        let macros = self.macros;
        match m {
            MacroVar::Named(name) => match macros.named.get(name.as_str()) {
                Some(&v) => Ok(int(v as u64, types::INT, span)),
                None => Err(CompileError::new(
                    "D_MACRO_UNDEF",
                    format!("macro argument ${name} is not defined"),
                    span,
                )),
            },
            MacroVar::Arg(n) | MacroVar::StrArg(n) => {
                let strarg = matches!(m, MacroVar::StrArg(_));
                let text = match macros.args.get(*n as usize).cloned() {
                    Some(t) => t,
                    // As DTrace: an unset `$N` under defaultargs is 0, `$$N` "".
                    None if macros.defaultargs => (if strarg { "" } else { "0" }).to_string(),
                    None => {
                        let dollars = if strarg { "$$" } else { "$" };
                        return Err(CompileError::new(
                            "D_MACRO_UNDEF",
                            format!("macro argument {dollars}{n} is not defined"),
                            span,
                        ));
                    }
                };
                if strarg {
                    let s = dtrace_frontend::unescape(text.as_bytes());
                    return Ok(mk(ExprKind::Str(s), Type::String, span));
                }
                // As DTrace: text that is neither an integer nor an identifier is a string
                // (in quotes or not); an identifier names what it would in the script.
                let digits = text.strip_prefix('-').unwrap_or(&text);
                let integer = parse_int(digits).filter(|_| !digits.starts_with(['-', '+']));
                let identifier = is_identifier(&text);
                match integer {
                    // A negative argument is the negation of its magnitude, typed as the
                    // magnitude's constant would be (`-7` is an int).
                    Some(v) => {
                        let ty = int_constant_type(v, false, 0, !digits.starts_with('0'));
                        let v = if digits.len() < text.len() {
                            v.wrapping_neg()
                        } else {
                            v
                        };
                        Ok(int(v, ty, span))
                    }
                    // Integer syntax, but too large for 64 bits.
                    None if is_integer_syntax(digits) => Err(CompileError::new(
                        "D_MACRO_OFLOW",
                        format!("macro argument ${n} constant {text} results in integer overflow"),
                        span,
                    )),
                    // As DTrace: an identifier names what it names; any other text is a
                    // string (its quotes, if it has them, taken off).
                    None if identifier => self.expr(&ast::Expr {
                        kind: A::Ident(text),
                        span,
                    }),
                    None => {
                        let body = match text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
                            Some(inner) if text.len() > 1 => inner,
                            _ => &text,
                        };
                        let s = dtrace_frontend::unescape(body.as_bytes());
                        Ok(mk(ExprKind::Str(s), Type::String, span))
                    }
                }
            }
        }
    }

    /// `@name` used as a value: typed `void`, refused by its user (unknown names do not
    /// resolve, as in DTrace).
    /// How DTrace names an operand in an error: its type, or what it is when it has none.
    fn operand_name(&self, e: &Expr) -> String {
        match &e.kind {
            ExprKind::AggRef(id) => format!("aggregation @{}", self.prog.aggregations[*id].name),
            _ => e.ty.to_string(),
        }
    }

    fn aggregation_ref(&mut self, name: &str, span: Span) -> Result<Expr> {
        match self.aggregation(name) {
            Some(id) => Ok(mk(ExprKind::AggRef(id), Type::Void, span)),
            None => Err(undefined(&format!("@{name}"), span)),
        }
    }

    /// `base[args]` as a value: an associative array element, `args[i]`, or an element of
    /// an array or pointer.
    fn index_value(&mut self, e: &ast::Expr, base: &ast::Expr, args: &[ast::Expr]) -> Result<Expr> {
        let span = e.span;
        match &base.kind {
            A::Ident(name) if name == "args" && self.bound_input(name, span).is_none() => {
                self.probe_args(args, span)
            }
            A::Ident(name) if name == "uregs" && self.bound_input(name, span).is_none() => {
                self.uregs(args, span)
            }
            A::Member { name, .. } if name == "args" && self.is_entry_ref(base) => {
                self.entry_args(args, span)
            }
            A::Ident(name)
                if self.bound_input(name, span).is_none()
                    && self.scope.inline_arrays.contains_key(name) =>
            {
                self.inline_array(name, args, span)
            }
            A::Ident(name) => match self.assoc(name, false) {
                Some(id) => {
                    let keys = self.keys(id, args, span)?;
                    let ty = self.prog.assocs[id].value.clone();
                    self.place_value(Place::whole(PlaceBase::Assoc { var: id, keys }, ty), span)
                }
                None if self.global(name).is_some() => {
                    let p = self.index_place(base, args, span)?;
                    self.place_value(p, span)
                }
                None if builtins::is_variable(name) => {
                    let p = self.index_place(base, args, span)?;
                    self.place_value(p, span)
                }
                None => {
                    // DTrace cooks the keys before the array: an undefined key is named first.
                    for a in args {
                        self.expr(a)?;
                    }
                    Err(unassigned(name, base.span))
                }
            },
            A::SelfVar(name) => match self.assoc(name, true) {
                Some(id) => {
                    let keys = self.keys(id, args, span)?;
                    let ty = self.prog.assocs[id].value.clone();
                    self.place_value(Place::whole(PlaceBase::Assoc { var: id, keys }, ty), span)
                }
                // An element of a thread-local string, array or pointer.
                None if self.thread_var(name).is_some() => {
                    let p = self.index_place(base, args, span)?;
                    self.place_value(p, span)
                }
                None => Err(unassigned(&format!("self->{name}"), span)),
            },
            A::Aggregation(name) => {
                self.aggregation_ref(name, span)?;
                Err(CompileError::new(
                    "D_AGG_SCALAR",
                    "aggregations may not be used in an expression; use printa()",
                    span,
                ))
            }
            A::Index { base: inner, .. } if matches!(inner.kind, A::Aggregation(_)) => {
                let A::Aggregation(name) = &inner.kind else {
                    unreachable!()
                };
                Err(multi_dimensional(name, span))
            }
            _ => {
                let p = self.index_place(base, args, span)?;
                self.place_value(p, span)
            }
        }
    }

    /// Type the key tuple `args` of associative array `id` against its key types.
    pub(crate) fn keys(
        &mut self,
        id: ir::VarId,
        args: &[ast::Expr],
        span: Span,
    ) -> Result<Vec<Expr>> {
        let types = self.prog.assocs[id].keys.clone();
        if args.len() != types.len() {
            let n = args.len();
            return Err(CompileError::new(
                "D_PROTO_LEN",
                format!(
                    "{}[ ] prototype mismatch: {n} key{}passed, {} expected",
                    self.prog.assocs[id].name,
                    if n == 1 { " " } else { "s " },
                    types.len()
                ),
                span,
            ));
        }
        let mut out = Vec::new();
        for (i, (a, want)) in args.iter().zip(&types).enumerate() {
            let v = self.expr(a)?;
            let ok = if want.is_string() {
                v.ty.is_string()
            } else if let Type::Struct(r) = want {
                matches!(&v.ty, Type::Struct(x) if x.id == r.id)
            } else {
                v.ty.is_scalar()
            };
            if !ok {
                return Err(CompileError::new(
                    "D_PROTO_ARG",
                    format!(
                        "{}[ ] key #{} is incompatible with prototype:\n\tprototype: {want}\n\t      key: {}",
                        self.prog.assocs[id].name,
                        i + 1,
                        v.ty
                    ),
                    a.span,
                ));
            }
            out.push(if want.is_integer() {
                convert(v, want)
            } else {
                v
            });
        }
        self.note_keys(super::keys::KeyOwner::Assoc(id), &out)?;
        Ok(out)
    }

    fn unary(&mut self, op: UnaryOp, operand: &ast::Expr, span: Span) -> Result<Expr> {
        match op {
            UnaryOp::Neg | UnaryOp::Plus | UnaryOp::BitNot => {
                let text = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Plus => "+",
                    _ => "~",
                };
                self.declare_unary_operand(operand, span)?;
                let v = self.expr(operand)?;
                let ok = if op == UnaryOp::BitNot {
                    v.ty.is_integer()
                } else {
                    v.ty.is_integer() || matches!(v.ty, Type::Ptr(_))
                };
                if !ok {
                    let (tag, what) = if op == UnaryOp::BitNot {
                        ("D_OP_INT", "integral")
                    } else {
                        ("D_OP_ARITH", "arithmetic")
                    };
                    return Err(CompileError::new(
                        tag,
                        format!("operator {text} requires an operand of {what} type"),
                        span,
                    ));
                }
                // The operand's type; a constant is folded as DTrace folds it (a negated
                // unsigned constant is cut to its width, a complemented one is not).
                let ty = v.ty.clone();
                Ok(match op {
                    UnaryOp::Neg => match v.kind {
                        ExprKind::Int(c) if ty.is_signed() || !ty.is_integer() => {
                            int(c.wrapping_neg(), ty, span)
                        }
                        ExprKind::Int(c) => int(
                            c.wrapping_neg() & (u64::MAX >> (64 - 8 * ty.scalar_size())),
                            ty,
                            span,
                        ),
                        _ => mk(ExprKind::Neg(Box::new(v)), ty, span),
                    },
                    UnaryOp::BitNot => match v.kind {
                        ExprKind::Int(c) => int(!c, ty, span),
                        _ => mk(ExprKind::BitNot(Box::new(v)), ty, span),
                    },
                    _ => Expr { span, ..v },
                })
            }
            UnaryOp::Not => {
                self.declare_unary_operand(operand, span)?;
                let v = self.expr(operand)?;
                if !v.ty.is_scalar() && !v.ty.is_string() {
                    return Err(CompileError::new(
                        "D_OP_SCALAR",
                        "operator ! requires an operand of scalar type",
                        span,
                    ));
                }
                Ok(match v.kind {
                    // As DTrace folds it: the constant keeps its type.
                    ExprKind::Int(c) if v.ty.is_integer() => int(u64::from(c == 0), v.ty, span),
                    _ => mk(ExprKind::Not(Box::new(v)), types::INT, span),
                })
            }
            UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec => {
                let text = if matches!(op, UnaryOp::PreInc | UnaryOp::PostInc) {
                    "++"
                } else {
                    "--"
                };
                let place = self.lvalue(operand, text, span, true)?;
                if !place.ty.is_scalar() {
                    return Err(CompileError::new(
                        "D_OP_SCALAR",
                        format!("operator {text} requires operand of scalar type"),
                        span,
                    ));
                }
                let step = match &place.ty {
                    Type::Ptr(inner) => inner.size().max(1),
                    _ => 1,
                };
                let op_kind = if text == "++" {
                    ArithOp::Add
                } else {
                    ArithOp::Sub
                };
                let ty = place.ty.clone();
                let step_ty = if ty.is_integer() {
                    ty.clone()
                } else {
                    types::ULONG
                };
                Ok(mk(
                    ExprKind::Update {
                        place: Box::new(place),
                        op: op_kind,
                        value: Box::new(int(step, step_ty, span)),
                        post: matches!(op, UnaryOp::PostInc | UnaryOp::PostDec),
                    },
                    ty,
                    span,
                ))
            }
            UnaryOp::Deref => {
                let p = self.deref_place(operand, span)?;
                self.place_value(p, span)
            }
            UnaryOp::AddrOf => self.address_of(operand, span),
        }
    }

    fn binary(
        &mut self,
        op: BinaryOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
    ) -> Result<Expr> {
        if matches!(op, BinaryOp::LogAnd | BinaryOp::LogOr | BinaryOp::LogXor) {
            return self.logical(op, lhs, rhs, span);
        }
        let a = self.expr(lhs)?;
        let b = self.expr(rhs)?;
        if matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
            // A string against the null pointer constant (0 or NULL), as DTrace allows:
            // whether the string is NULL (unset, or "not found" by strchr, strstr, ...).
            let string = if a.ty.is_string() && !b.ty.is_string() && consts::is_null(rhs) {
                Some(a.clone())
            } else if b.ty.is_string() && !a.ty.is_string() && consts::is_null(lhs) {
                Some(b.clone())
            } else {
                None
            };
            if let Some(s) = string {
                let op = if op == BinaryOp::Eq {
                    CmpOp::Eq
                } else {
                    CmpOp::Ne
                };
                let null = int(0, types::INT, span);
                return Ok(mk(
                    ExprKind::Compare {
                        op,
                        how: Comparison::StringNull,
                        lhs: Box::new(s),
                        rhs: Box::new(null),
                    },
                    types::INT,
                    span,
                ));
            }
        }
        self.binary_values(op, a, b, span)
    }

    /// `a op b` on two typed operands (also the arithmetic of compound assignments).
    pub(crate) fn binary_values(
        &mut self,
        op: BinaryOp,
        a: Expr,
        b: Expr,
        span: Span,
    ) -> Result<Expr> {
        let text = binary_op_text(op);
        // `s + i`, `i + s` and `s - i`: the string at that offset (an address, as in C;
        // NULL plus an offset is an address that faults when read).
        if let Some(step) = string_offset(op, &a, &b) {
            let (s, i, arith) = step;
            let p = Expr {
                ty: Type::Ptr(Box::new(types::CHAR)),
                ..s
            };
            let stepped = self.pointer_step(arith, p, i, span)?;
            return Ok(Expr {
                ty: Type::String,
                ..stepped
            });
        }
        if a.ty.is_string() || b.ty.is_string() {
            if let (Some(cmp), true, true) = (cmp_op(op), a.ty.is_string(), b.ty.is_string()) {
                return Ok(mk(
                    ExprKind::Compare {
                        op: cmp,
                        how: Comparison::Strings,
                        lhs: Box::new(a),
                        rhs: Box::new(b),
                    },
                    types::INT,
                    span,
                ));
            }
            return Err(match op {
                BinaryOp::Mul | BinaryOp::Div => arith_error(text, span),
                BinaryOp::Mod
                | BinaryOp::Shl
                | BinaryOp::Shr
                | BinaryOp::BitAnd
                | BinaryOp::BitXor
                | BinaryOp::BitOr => int_error(text, span),
                _ => incompatible(&a.ty, text, &b.ty, span),
            });
        }
        if !a.ty.is_scalar() || !b.ty.is_scalar() {
            return Err(match op {
                BinaryOp::Mod
                | BinaryOp::Shl
                | BinaryOp::Shr
                | BinaryOp::BitAnd
                | BinaryOp::BitXor
                | BinaryOp::BitOr => int_error(text, span),
                // As in C, `+` and `-` also take pointers, so DTrace words a bad pair of
                // their operands as an incompatible pair.
                BinaryOp::Add | BinaryOp::Sub => CompileError::new(
                    "D_OP_INCOMPAT",
                    format!(
                        "operands have incompatible types: \"{}\" {text} \"{}\"",
                        self.operand_name(&a),
                        self.operand_name(&b)
                    ),
                    span,
                ),
                _ => arith_error(text, span),
            });
        }
        if let Some(cmp) = cmp_op(op) {
            // The 64-bit values, compared signed or not as the operands' common type is.
            let how = if Type::common(&a.ty, &b.ty).is_signed() {
                Comparison::Signed
            } else {
                Comparison::Unsigned
            };
            if let (ExprKind::Int(x), ExprKind::Int(y)) = (&a.kind, &b.kind) {
                return Ok(int(fold_compare(cmp, how, *x, *y), types::INT, span));
            }
            return Ok(mk(
                ExprKind::Compare {
                    op: cmp,
                    how,
                    lhs: Box::new(a),
                    rhs: Box::new(b),
                },
                types::INT,
                span,
            ));
        }
        let arith = arith_op(op).expect("an arithmetic operator");
        let pointers = (matches!(a.ty, Type::Ptr(_)), matches!(b.ty, Type::Ptr(_)));
        if pointers != (false, false) {
            return self.pointer_arith(op, arith, a, b, pointers, span);
        }
        if matches!(op, BinaryOp::Div | BinaryOp::Mod) && matches!(b.kind, ExprKind::Int(0)) {
            return Err(CompileError::new(
                "D_DIV_ZERO",
                "expression contains division by zero",
                span,
            ));
        }
        // A shift has its left operand's type; other operators their operands' common one.
        let ty = if matches!(op, BinaryOp::Shl | BinaryOp::Shr) {
            a.ty.clone()
        } else {
            Type::common(&a.ty, &b.ty)
        };
        Ok(fold_arith(arith, a, b, ty, span))
    }

    /// Arithmetic with a pointer operand: `p + i`, `i + p` and `p - i` step by elements,
    /// `p - q` counts them; other operators are refused as DTrace refuses them.
    fn pointer_arith(
        &mut self,
        op: BinaryOp,
        arith: ArithOp,
        a: Expr,
        b: Expr,
        pointers: (bool, bool),
        span: Span,
    ) -> Result<Expr> {
        let text = binary_op_text(op);
        match (op, pointers) {
            (BinaryOp::Add, (true, false)) | (BinaryOp::Sub, (true, false)) => {
                self.pointer_step(arith, a, b, span)
            }
            (BinaryOp::Add, (false, true)) => self.pointer_step(arith, b, a, span),
            (BinaryOp::Sub, (true, true)) => {
                let size = pointee_size(&a.ty);
                if size == 0 {
                    return Err(incompatible(&a.ty, text, &b.ty, span));
                }
                let diff = fold_arith(
                    ArithOp::Sub,
                    convert(a, &types::LONG),
                    convert(b, &types::LONG),
                    types::LONG,
                    span,
                );
                Ok(fold_arith(
                    ArithOp::Div,
                    diff,
                    int(size, types::LONG, span),
                    types::LONG,
                    span,
                ))
            }
            (BinaryOp::Mul | BinaryOp::Div | BinaryOp::Add | BinaryOp::Sub, _) => {
                Err(arith_error(text, span))
            }
            _ => Err(int_error(text, span)),
        }
    }

    /// `p + i` / `p - i`: `i` elements of `p`'s pointee.
    fn pointer_step(&mut self, arith: ArithOp, p: Expr, i: Expr, span: Span) -> Result<Expr> {
        let size = pointee_size(&p.ty);
        if size == 0 {
            let text = if arith == ArithOp::Add { "+" } else { "-" };
            return Err(incompatible(&p.ty, text, &i.ty, span));
        }
        let ty = p.ty.clone();
        let i = convert(i, &types::LONG);
        let scaled = if size == 1 {
            i
        } else {
            fold_arith(
                ArithOp::Mul,
                i,
                int(size, types::LONG, span),
                types::LONG,
                span,
            )
        };
        let scaled = Expr {
            ty: ty.clone(),
            ..scaled
        };
        Ok(fold_arith(arith, p, scaled, ty, span))
    }

    fn logical(
        &mut self,
        op: BinaryOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
    ) -> Result<Expr> {
        let a = self.expr(lhs)?;
        let b = self.expr(rhs)?;
        if !a.ty.is_scalar() || !b.ty.is_scalar() {
            return Err(CompileError::new(
                "D_OP_SCALAR",
                format!(
                    "operator {} requires operands of scalar type",
                    binary_op_text(op)
                ),
                span,
            ));
        }
        let op = match op {
            BinaryOp::LogAnd => LogicalOp::And,
            BinaryOp::LogOr => LogicalOp::Or,
            _ => LogicalOp::Xor,
        };
        if let (ExprKind::Int(x), ExprKind::Int(y)) = (&a.kind, &b.kind) {
            let (x, y) = (*x != 0, *y != 0);
            let v = match op {
                LogicalOp::And => x && y,
                LogicalOp::Or => x || y,
                LogicalOp::Xor => x != y,
            };
            return Ok(int(u64::from(v), types::INT, span));
        }
        Ok(mk(
            ExprKind::Logical {
                op,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            types::INT,
            span,
        ))
    }

    fn ternary(
        &mut self,
        cond: &ast::Expr,
        then: &ast::Expr,
        otherwise: &ast::Expr,
        span: Span,
    ) -> Result<Expr> {
        let c = self.expr(cond)?;
        let a = self.ternary_arm(then)?;
        let b = self.ternary_arm(otherwise)?;
        if !c.ty.is_scalar() {
            return Err(CompileError::new(
                "D_OP_SCALAR",
                "operator ?: expression must be of scalar type",
                span,
            ));
        }
        let (Some(a), Some(b)) = (a, b) else {
            return Err(CompileError::new(
                "D_OP_DYN",
                "operator ?: operands cannot be of dynamic type",
                span,
            ));
        };
        let incompatible_arms = || {
            CompileError::new(
                "D_OP_INCOMPAT",
                "operator ?: operands must have compatible types",
                span,
            )
        };
        // Two actions have the same (void) type, and are refused as actions; an action
        // beside a value is refused first for the types, as DTrace checks them in that order.
        match (is_void(&a), is_void(&b)) {
            (true, true) => {
                return Err(CompileError::new(
                    "D_OP_ACT",
                    "action cannot be used in a conditional context",
                    span,
                ))
            }
            (true, false) | (false, true) => return Err(incompatible_arms()),
            (false, false) => {}
        }
        let ty = if a.ty.is_string() && b.ty.is_string() {
            Type::String
        } else if a.ty.is_scalar() && b.ty.is_scalar() {
            Type::common(&a.ty, &b.ty)
        } else if a.ty == b.ty {
            a.ty.clone()
        } else {
            return Err(incompatible_arms());
        };
        // As DTrace folds it: a constant condition is the arm it chooses, with its own type.
        if let ExprKind::Int(v) = c.kind {
            return Ok(if v != 0 { a } else { b });
        }
        // Each arm's value as it is: not converted to the common type.
        Ok(mk(
            ExprKind::Cond {
                cond: Box::new(c),
                then: Box::new(a),
                otherwise: Box::new(b),
            },
            ty,
            span,
        ))
    }

    /// An arm of `?:` typed, or None for an aggregation (or an aggregation assignment,
    /// whose value is the aggregation): it has DTrace's dynamic type, which no arm may have.
    fn ternary_arm(&mut self, e: &ast::Expr) -> Result<Option<Expr>> {
        if is_aggregation_operand(e) {
            return Ok(None);
        }
        self.expr(e).map(Some)
    }

    fn assign(
        &mut self,
        op: Option<BinaryOp>,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
    ) -> Result<Expr> {
        let text = op.map_or("=".to_string(), |o| format!("{}=", binary_op_text(o)));
        if let A::Index { base, .. } = &lhs.kind {
            if let A::Index { base: inner, .. } = &base.kind {
                if let A::Aggregation(name) = &inner.kind {
                    return Err(multi_dimensional(name, lhs.span));
                }
            }
        }
        let is_agg = matches!(lhs.kind, A::Aggregation(_))
            || matches!(&lhs.kind, A::Index { base, .. } if matches!(base.kind, A::Aggregation(_)));
        if is_agg {
            return Err(CompileError::new(
                "D_AGG_FUNC",
                "aggregating function required to the right of an aggregation assignment",
                rhs.span,
            ));
        }
        if op.is_some() {
            // `x op= v` reads x first: it must exist.
            let undefined = match &lhs.kind {
                A::Ident(n) => (self.global(n).is_none()
                    && !builtins::is_variable(n)
                    && self.bound_input(n, span).is_none()
                    && !self.scope.inlines.contains_key(n)
                    && !self.scope.enum_constants.contains_key(n)
                    && self.assoc(n, false).is_none())
                .then(|| n.clone()),
                A::SelfVar(n) if self.thread_var(n).is_none() => Some(format!("self->{n}")),
                A::ThisVar(n) if self.this_var(n).is_none() => Some(format!("this->{n}")),
                _ => None,
            };
            if let Some(name) = undefined {
                return Err(unassigned(&name, lhs.span));
            }
        }
        let value = self.expr(rhs)?;
        if is_void(&value) {
            if let ExprKind::AggRef(_) = value.kind {
                return Err(CompileError::new(
                    "D_AGG_SCALAR",
                    "aggregations may not be used in an expression; use printa()",
                    rhs.span,
                ));
            }
            let ExprKind::Void(name) = &value.kind else {
                unreachable!("a void expression")
            };
            return Err(CompileError::new(
                "D_ACT_SPEC",
                format!("{name}( ) may not be used in an expression"),
                rhs.span,
            ));
        }
        match op {
            None => {
                let place = self.assign_target(lhs, &value, span)?;
                if is_deletion(&place, &value) {
                    return Ok(mk(ExprKind::Delete(Box::new(place)), types::INT, span));
                }
                // A string variable may hold NULL; a `char *` may hold a string's address.
                let value = if place.ty.is_string() && !value.ty.is_string() && consts::is_null(rhs)
                {
                    mk(ExprKind::Int(0), Type::String, value.span)
                } else if value.ty.is_string() && super::call::is_char_pointer(&place.ty) {
                    Expr {
                        ty: place.ty.clone(),
                        ..value
                    }
                } else {
                    value
                };
                self.check_assignable(&place.ty, &value.ty, &text, span)?;
                // As DTrace: integers and pointers do not mix without a cast (but for the
                // null pointer constant).
                let pointer = |t: &Type| matches!(t, Type::Ptr(_));
                if (pointer(&place.ty) && value.ty.is_integer() && !consts::is_null(rhs))
                    || (place.ty.is_integer() && pointer(&value.ty))
                {
                    return Err(incompatible(&place.ty, &text, &value.ty, span));
                }
                // The value is stored narrowed to the place's type, and is the assignment's
                // value as computed (an integer is not converted: DTrace's value in a register).
                let ty = place.ty.clone();
                let value = if ty.is_scalar() && !(ty.is_integer() && value.ty.is_integer()) {
                    convert(value, &ty)
                } else {
                    value
                };
                let ty = if matches!(ty, Type::Array(ref e, _) if e.is_char()) {
                    Type::String
                } else {
                    ty
                };
                if place.offset == 0 && place.index.is_none() && self.user_space(&value) {
                    if let Some(key) = super::place::var_key(&place.base) {
                        self.user_vars.insert(key);
                    }
                }
                Ok(mk(
                    ExprKind::Assign {
                        place: Box::new(place),
                        value: Box::new(value),
                    },
                    ty,
                    span,
                ))
            }
            Some(bop) => {
                let place = self.lvalue(lhs, &text, span, true)?;
                let current = mk(
                    ExprKind::Load(Box::new(place.clone())),
                    place.ty.clone(),
                    span,
                );
                if place.ty.is_string() || value.ty.is_string() {
                    return Err(incompatible(&place.ty, &text, &value.ty, span));
                }
                // `+=` and `-=` with a pointer need a left-hand pointer to something of
                // known size (DTrace's rule for the assignment operators).
                let sized_pointer = |t: &Type| matches!(t, Type::Ptr(to) if !matches!(**to, Type::Void | Type::Opaque(_)));
                if matches!(bop, BinaryOp::Add | BinaryOp::Sub)
                    && !(place.ty.is_integer() && value.ty.is_integer())
                    && !sized_pointer(&place.ty)
                {
                    return Err(CompileError::new(
                        "D_OP_VFPTR",
                        format!("operator {text} requires left-hand scalar operand of known size"),
                        span,
                    ));
                }
                // Type the combination as `place op value`, then store it back converted.
                let combined = self.binary_values(bop, current, value, span)?;
                let ty = place.ty.clone();
                let (arith, rhs) = match combined.kind {
                    ExprKind::Arith { op, rhs, .. } => (op, *rhs),
                    _ => return Err(arith_error(&text, span)),
                };
                Ok(mk(
                    ExprKind::Update {
                        place: Box::new(place),
                        op: arith,
                        value: Box::new(rhs),
                        post: false,
                    },
                    ty,
                    span,
                ))
            }
        }
    }

    /// Whether a value of `value` may be stored where `target` lives.
    fn check_assignable(&self, target: &Type, value: &Type, op: &str, span: Span) -> Result<()> {
        let char_array = matches!(target, Type::Array(e, _) if e.is_char());
        let ok = match target {
            _ if target.is_string() || char_array => value.is_string(),
            Type::Array(..) => false,
            Type::Struct(r) => matches!(value, Type::Struct(v) if v.id == r.id),
            _ if target.is_scalar() => value.is_scalar(),
            _ => false,
        };
        if ok {
            return Ok(());
        }
        if let Type::Array(..) = target {
            if !char_array {
                return Err(CompileError::new(
                    "D_OP_ARRFUN",
                    format!("operator {op} may not be applied to operand of type \"{target}\""),
                    span,
                ));
            }
        }
        Err(incompatible(target, op, value, span))
    }

    /// For a cast to a pointer of an operand naming an array (a `char` array included,
    /// which otherwise reads as a string): the address of its first element, as C's arrays
    /// decay to pointers.
    fn array_address(&mut self, target: &Type, operand: &ast::Expr) -> Result<Option<Expr>> {
        let place_like = matches!(
            operand.kind,
            A::Member { .. } | A::Index { .. } | A::Ident(_) | A::ThisVar(_)
        );
        if !matches!(target, Type::Ptr(_)) || !place_like {
            return Ok(None);
        }
        match self.place_of(operand)? {
            Some(p) if matches!(p.ty, Type::Array(..)) => {
                let Type::Array(elem, _) = &p.ty else {
                    unreachable!()
                };
                let ty = Type::Ptr(elem.clone());
                Ok(Some(mk(ExprKind::AddrOf(Box::new(p)), ty, operand.span)))
            }
            _ => Ok(None),
        }
    }

    fn cast(&mut self, tn: &ast::TypeName, operand: &ast::Expr, span: Span) -> Result<Expr> {
        let target = self.resolve_type(&tn.spec, &tn.declarator, tn.span)?;
        if target != Type::Void {
            if let Some(what) = self.translated_data(operand)? {
                return Err(CompileError::new(
                    "D_CAST_INVAL",
                    format!("invalid cast expression: \"{what}\" to \"{target}\""),
                    span,
                ));
            }
        }
        let v = match self.array_address(&target, operand)? {
            Some(address) => address,
            None => self.expr(operand)?,
        };
        let invalid = || {
            CompileError::new(
                "D_CAST_INVAL",
                format!("invalid cast expression: \"{}\" to \"{target}\"", v.ty),
                span,
            )
        };
        if let (Type::Struct(to), Type::Struct(from)) = (&target, &v.ty) {
            // A struct or union cast to its own type (as C allows): the same value.
            if to.id == from.id {
                return Ok(Expr {
                    ty: target,
                    span,
                    ..v
                });
            }
        }
        if matches!(target, Type::Struct(_) | Type::Array(..) | Type::Opaque(_)) {
            return Err(invalid());
        }
        if target == Type::Void {
            return Ok(Expr {
                ty: Type::Void,
                span,
                ..v
            });
        }
        if target.is_string() || v.ty.is_string() {
            if target.is_string() && v.ty.is_string() {
                return Ok(v);
            }
            if target.is_string() && v.ty.is_scalar() && !is_void(&v) {
                // As DTrace: the string at that address (alloca memory, kernel memory).
                return Ok(Expr {
                    ty: Type::String,
                    span,
                    ..v
                });
            }
            return Err(invalid());
        }
        if !v.ty.is_scalar() {
            return Err(invalid());
        }
        if matches!(v.ty, Type::Ptr(_)) && target.is_integer() && storage_address(&v) {
            // An address of D's storage made a number: converted (code generation makes
            // it a number the verifier computes with).
            return Ok(mk(ExprKind::Convert(Box::new(v)), target, span));
        }
        if v.ty.is_integer() && super::place::points_to_user_type(&target) {
            // A number made a pointer to a user type is an address in the traced process:
            // the node keeps the cast for `Cook::user_space`.
            return Ok(mk(ExprKind::Convert(Box::new(v)), target, span));
        }
        let v = convert(v, &target);
        Ok(Expr { span, ..v })
    }
}

/// Why a symbol reference `` module`name `` cannot be resolved: an empty name, or one a
/// complete kernel symbol table does not list, is no symbol; one whose address the table
/// hides from this user cannot be read; otherwise the table does not list it and the
/// kernel's BTF describes only per-CPU variables.
pub(super) fn symbol_error(module: Option<&str>, name: &str, span: Span) -> CompileError {
    let text = format!("{}`{name}", module.unwrap_or(""));
    let table = crate::types::kallsyms::table();
    let (tag, why) = match table.lists(name) {
        _ if name.is_empty() => ("D_IDENT_UNDEF", "Unknown symbol name"),
        Some(false) => ("D_IDENT_UNDEF", "Unknown symbol name"),
        _ if table.hides(name) => (
            "D_UNSUPPORTED",
            "the kernel's symbol table hides its address from this user (kptr_restrict)",
        ),
        _ => (
            "D_UNSUPPORTED",
            "only per-CPU kernel variables and symbols the kernel's symbol table lists can be read (the kernel's BTF gives the types of no others, and data symbols are listed only in kernels built with CONFIG_KALLSYMS_ALL)",
        ),
    };
    CompileError::new(tag, format!("failed to resolve {text}: {why}"), span)
}

/// `a op b` of type `ty`, folded in 64 bits when both are constants, as DTrace's parser
/// folds them: `/` and `%` as C divides (signed when `ty` is), `>>` shifting in zeros
/// whatever the type (a divisor of 0 is refused before).
fn fold_arith(op: ArithOp, a: Expr, b: Expr, ty: Type, span: Span) -> Expr {
    if let (ExprKind::Int(x), ExprKind::Int(y)) = (&a.kind, &b.kind) {
        let (x, y) = (*x, *y);
        let signed = ty.is_signed();
        let v = match op {
            ArithOp::Add => Some(x.wrapping_add(y)),
            ArithOp::Sub => Some(x.wrapping_sub(y)),
            ArithOp::Mul => Some(x.wrapping_mul(y)),
            ArithOp::And => Some(x & y),
            ArithOp::Or => Some(x | y),
            ArithOp::Xor => Some(x ^ y),
            ArithOp::Shl => Some(x.wrapping_shl(y as u32)),
            ArithOp::Shr => Some(x.wrapping_shr(y as u32)),
            ArithOp::Div | ArithOp::Mod if y == 0 || matches!(ty, Type::Ptr(_)) => None,
            ArithOp::Div if signed => Some((x as i64).wrapping_div(y as i64) as u64),
            ArithOp::Mod if signed => Some((x as i64).wrapping_rem(y as i64) as u64),
            ArithOp::Div => Some(x / y),
            ArithOp::Mod => Some(x % y),
        };
        if let Some(v) = v {
            return int(v, ty, span);
        }
    }
    mk(
        ExprKind::Arith {
            op,
            lhs: Box::new(a),
            rhs: Box::new(b),
        },
        ty,
        span,
    )
}

/// `x op y` of two constants, compared signed or not: 1 or 0.
fn fold_compare(op: CmpOp, how: Comparison, x: u64, y: u64) -> u64 {
    let ord = if how == Comparison::Signed {
        (x as i64).cmp(&(y as i64))
    } else {
        x.cmp(&y)
    };
    let holds = match op {
        CmpOp::Lt => ord.is_lt(),
        CmpOp::Le => ord.is_le(),
        CmpOp::Gt => ord.is_gt(),
        CmpOp::Ge => ord.is_ge(),
        CmpOp::Eq => ord.is_eq(),
        CmpOp::Ne => ord.is_ne(),
    };
    u64::from(holds)
}

/// The size of what a pointer type points to (0: void or unknown).
fn pointee_size(ty: &Type) -> u64 {
    match ty {
        Type::Ptr(inner) => match &**inner {
            Type::Void => 0,
            other => other.size(),
        },
        _ => 0,
    }
}

/// A kernel enum constant (`TASK_COMM_LEN`, `PIDTYPE_PID`), typed as its enum.
fn kernel_enum_constant(name: &str, span: Span) -> Option<Expr> {
    let btf = kernel::vmlinux()?;
    let c = btf.enum_value(name)?;
    let ty = match kernel::from_btf(btf, c.ty) {
        ty @ Type::Int { .. } => ty,
        _ => types::LONG,
    };
    Some(int(c.value as u64, ty, span))
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

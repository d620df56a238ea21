//! Statements, actions and aggregations: what a clause records (`trace`, `printf`,
//! `printa`, `exit`, `stack`, ...), what it asks of the consumer (`clear`, `trunc`,
//! `normalize`, `setopt`), and `@a[keys] = func(args)`.

use dtrace_frontend::ast::{self, ExprKind as A, Stmt};
use dtrace_frontend::{CompileError, Result, Span};

use super::aggfunc::{parameter_mismatch, parse_function};
use super::call::{prototype_arg, prototype_len};
use super::clause_flags::ActionClass;
use super::expr::{convert, is_void, mk};
use super::Cook;
use crate::builtins::{self, ActionName, Kind};
use crate::format::FormatArg;
use crate::ir::{self, Action, ActionKind, Datum, Expr, ExprKind, PlaceBase};
use crate::types::{self, Type};

/// Whether a clause writes a record, as DTrace decides: an empty clause does (the probe
/// line is its default action), and so does one with an action other than aggregating
/// ones; a clause of assignments and aggregations alone records nothing.
pub(crate) fn clause_records(stmts: &[ir::Stmt]) -> bool {
    fn acts(stmts: &[ir::Stmt]) -> bool {
        stmts.iter().any(|s| match s {
            ir::Stmt::Action(a) => !matches!(a.kind, ActionKind::Aggregate { .. }),
            ir::Stmt::If {
                then, otherwise, ..
            } => acts(then) || acts(otherwise),
            ir::Stmt::Block(b) => acts(b),
            ir::Stmt::Eval(_) | ir::Stmt::SaveEntry { .. } => false,
        })
    }
    stmts.is_empty() || acts(stmts)
}

/// The aggregation name and key expressions of an assignment target, if it is one.
fn aggregation_target(lhs: &ast::Expr) -> Option<(&str, &[ast::Expr])> {
    match &lhs.kind {
        A::Aggregation(name) => Some((name, &[])),
        A::Index { base, args } => match &base.kind {
            A::Aggregation(name) => Some((name, args)),
            _ => None,
        },
        _ => None,
    }
}

/// A positive integer constant argument of `stack()`/`ustack()` (a frame count), given
/// `value`, its value if it is an integer constant.
fn frames_arg(e: &ast::Expr, value: Option<i64>, tag: &'static str, what: &str) -> Result<u32> {
    match value {
        Some(n) if n > 0 => Ok((n as u64).min(ir::MAX_STACK_FRAMES as u64) as u32),
        _ => Err(CompileError::new(
            tag,
            format!("{what} must be a non-zero positive integer constant"),
            e.span,
        )),
    }
}

/// DTrace's argument-count check of the actions (their prototypes, as DTrace checks them).
fn action_args(name: &str, args: &[ast::Expr], min: usize, max: usize, span: Span) -> Result<()> {
    let n = args.len();
    if n >= min && n <= max {
        return Ok(());
    }
    Err(prototype_len(name, n, min, max, span))
}

/// The `freopen()` argument DTrace reserves (its own mark for "restore the output").
const FREOPEN_RESTORE: &str = ".";

/// How many arguments each action takes (`usize::MAX`: any number).
fn action_arity(action: ActionName) -> (usize, usize) {
    use ActionName::*;
    match action {
        Trace | Exit | Clear | Denormalize | Symbol | Raise | Chill | Speculate | Commit
        | Discard | Print | Symaddr => (1, 1),
        Printf | Printa | System | Freopen => (1, usize::MAX),
        Trunc | Setopt => (1, 2),
        Normalize => (2, 2),
        Copyout | Copyoutstr => (3, 3),
        Stack => (0, 1),
        Ustack | Jstack => (0, 2),
        Tracemem => (2, 3),
        Stop | Breakpoint | Panic | Ftruncate => (0, 0),
    }
}

impl Cook<'_> {
    /// Check an action's argument count (for an action called where a value is expected).
    pub(crate) fn action_call_check(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Result<()> {
        let Some(Kind::Action(a)) = self.predefined(name) else {
            return Ok(());
        };
        let (min, max) = action_arity(a);
        action_args(name, args, min, max, span)
    }

    pub(crate) fn stmt(&mut self, stmt: &Stmt) -> Result<ir::Stmt> {
        match stmt {
            Stmt::Expr(e, after) => self
                .expr_stmt(e)
                .map_err(|err| super::at_token_after(err, e, *after)),
            Stmt::Block(stmts, _) => Ok(ir::Stmt::Block(
                stmts.iter().map(|s| self.stmt(s)).collect::<Result<_>>()?,
            )),
            Stmt::If {
                cond,
                then,
                otherwise,
                ..
            } => {
                let c = self.expr(cond)?;
                if !c.ty.is_scalar() && !c.ty.is_string() {
                    return Err(CompileError::new(
                        "D_OP_SCALAR",
                        "if condition must be of scalar type",
                        cond.span,
                    ));
                }
                let then = then.iter().map(|s| self.stmt(s)).collect::<Result<_>>()?;
                let otherwise = otherwise
                    .iter()
                    .flatten()
                    .map(|s| self.stmt(s))
                    .collect::<Result<_>>()?;
                Ok(ir::Stmt::If {
                    cond: c,
                    then,
                    otherwise,
                })
            }
        }
    }

    /// A statement: an action call, an aggregation, or an expression evaluated for its
    /// effect.
    fn expr_stmt(&mut self, e: &ast::Expr) -> Result<ir::Stmt> {
        if let A::Call {
            name,
            args,
            name_span,
        } = &e.kind
        {
            if let Some(Kind::Action(a)) = self.predefined(name) {
                let kind = self.action(a, name, args, *name_span, e.span)?;
                return Ok(ir::Stmt::Action(Action { kind, span: e.span }));
            }
        }
        if let A::Assign { op: None, lhs, rhs } = &e.kind {
            if let Some(target) = aggregation_target(lhs) {
                let kind = self.aggregate(target, rhs, e.span)?;
                self.order(ActionClass::Aggregation, e.span)?;
                return Ok(ir::Stmt::Action(Action { kind, span: e.span }));
            }
        }
        // `@a[1];` and `@a;` alone do nothing: DTrace refuses them.
        if let Some((name, _)) = aggregation_target(e) {
            if self.aggregation(name).is_some() || matches!(e.kind, A::Index { .. }) {
                return Err(CompileError::new(
                    "D_AGG_NULL",
                    format!("expression has null effect: @{name}"),
                    e.span,
                ));
            }
        }
        let v = self.expr(e)?;
        if let ExprKind::Void(name) = &v.kind {
            return Err(CompileError::new(
                "D_ACT_SPEC",
                format!("{name}( ) may not be used in an expression"),
                e.span,
            ));
        }
        if matches!(e.kind, A::Xlate { .. }) {
            // A translation has a value only through its members.
            return Err(CompileError::new(
                "D_CG_DYN",
                "expression cannot evaluate to result of dynamic type",
                e.span,
            ));
        }
        Ok(ir::Stmt::Eval(v))
    }

    /// An action statement.
    fn action(
        &mut self,
        action: ActionName,
        name: &str,
        args: &[ast::Expr],
        name_span: Span,
        span: Span,
    ) -> Result<ActionKind> {
        let (min, max) = action_arity(action);
        action_args(name, args, min, max, span)?;
        self.order(ActionClass::of(action), span)?;
        self.action_kind(action, name, args, name_span, span)
    }

    /// Check DTrace's ordering rules for an action of `class` here.
    fn order(&mut self, class: ActionClass, span: Span) -> Result<()> {
        match self.ctx.as_mut() {
            Some(ctx) => ctx.flags.add(class, span),
            None => Ok(()),
        }
    }

    /// The typed action statement.
    fn action_kind(
        &mut self,
        action: ActionName,
        name: &str,
        args: &[ast::Expr],
        name_span: Span,
        span: Span,
    ) -> Result<ActionKind> {
        Ok(match action {
            ActionName::Trace => {
                if let Some(d) = self.symbol_datum(&args[0])? {
                    ActionKind::Trace(d)
                } else {
                    let v = self.expr(&args[0])?;
                    match v.kind {
                        ExprKind::AggRef(_) => {
                            return Err(CompileError::new(
                                "D_TRACE_DYN",
                                "trace( ) may not be applied to a dynamic expression",
                                span,
                            ))
                        }
                        ExprKind::Void(_) => {
                            return Err(CompileError::new(
                                "D_TRACE_VOID",
                                "trace( ) may not be applied to a void expression",
                                span,
                            ))
                        }
                        _ => {}
                    }
                    // (`stringof()` or a cast makes a string of a char array.)
                    let converted = matches!(&args[0].kind, A::Stringof(_) | A::Cast { .. });
                    let array = match &v.kind {
                        _ if converted => None,
                        ExprKind::Load(p) | ExprKind::AddrOf(p) => {
                            matches!(p.ty, Type::Array(..)).then(|| p.ty.size() as u32)
                        }
                        _ => None,
                    };
                    if let Some(size) = array {
                        // An array (`char comm[16]` too: a D string is no array) is shown
                        // as its bytes, as DTrace's trace() shows data by reference.
                        ActionKind::Tracemem {
                            addr: v,
                            size,
                            dynsize: None,
                        }
                    } else if !v.ty.is_scalar()
                        && !v.ty.is_string()
                        && !matches!(v.ty, Type::Struct(_))
                    {
                        return Err(CompileError::new(
                            "D_UNSUPPORTED",
                            format!("trace( ) of a value of type {} is not supported yet", v.ty),
                            span,
                        ));
                    } else {
                        ActionKind::Trace(v)
                    }
                }
            }
            ActionName::Symbol => {
                let d = self
                    .symbol_datum(&ast::Expr {
                        kind: A::Call {
                            name: name.to_string(),
                            name_span,
                            args: args.to_vec(),
                        },
                        span,
                    })?
                    .expect("a symbol function");
                ActionKind::Trace(d)
            }
            ActionName::Stack | ActionName::Ustack | ActionName::Jstack => {
                ActionKind::Stack(self.stack_datum(name, args)?)
            }
            ActionName::Printf | ActionName::System | ActionName::Freopen => {
                let (format, args) = self.printf_args(name, args, span)?;
                match action {
                    ActionName::Printf => ActionKind::Printf { format, args },
                    ActionName::System => ActionKind::System { format, args },
                    _ => {
                        if format == FREOPEN_RESTORE.as_bytes() {
                            return Err(CompileError::new(
                                "D_FREOPEN_INVALID",
                                format!("{name}( ) argument #1 cannot be \"{FREOPEN_RESTORE}\""),
                                span,
                            ));
                        }
                        ActionKind::Freopen { format, args }
                    }
                }
            }
            ActionName::Raise => ActionKind::Raise(self.int_arg(&args[0], name, 1)?),
            ActionName::Stop => ActionKind::Stop,
            ActionName::Chill => ActionKind::Chill(self.int_arg(&args[0], name, 1)?),
            ActionName::Copyout | ActionName::Copyoutstr => {
                // DTrace's prototypes first: (void *, uintptr_t, size_t) and
                // (char *, uintptr_t, size_t).
                self.check_action_prototype(action, name, args)?;
                let string = action == ActionName::Copyoutstr;
                let src = self.expr(&args[0])?;
                let src = if string {
                    src
                } else {
                    convert(src, &types::UINT64)
                };
                ActionKind::Copyout {
                    src,
                    addr: convert(self.expr(&args[1])?, &types::UINT64),
                    size: convert(self.expr(&args[2])?, &types::UINT64),
                    string,
                }
            }
            ActionName::Ftruncate => ActionKind::Ftruncate,
            ActionName::Panic | ActionName::Breakpoint => {
                let why = match action {
                    ActionName::Panic => "an eBPF program cannot panic the kernel",
                    _ => "an eBPF program cannot stop the kernel in a debugger",
                };
                return Err(CompileError::new(
                    "D_UNSUPPORTED",
                    format!("the {name}( ) action is not available on Linux: {why}"),
                    name_span,
                ));
            }
            ActionName::Printa => {
                let (format, aggs) = match &args[0].kind {
                    A::Str(s) => (Some(s.clone()), &args[1..]),
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
                let mut ids = Vec::new();
                for (i, a) in aggs.iter().enumerate() {
                    ids.push(self.aggregation_arg(a, "printa", first + i + 1)?);
                }
                self.check_printa_keys(&ids, span)?;
                if let Some(f) = &format {
                    let keys: Vec<FormatArg> = self.prog.aggregations[ids[0]]
                        .keys
                        .iter()
                        .map(|(t, d)| match d {
                            Some(Datum::Stack { .. } | Datum::UStack { .. }) => FormatArg::Stack,
                            _ => FormatArg::Value(t.clone()),
                        })
                        .collect();
                    self.check_format(f, &keys, "printa", span)?;
                }
                ActionKind::Printa {
                    format,
                    aggregations: ids,
                }
            }
            ActionName::Exit => ActionKind::Exit(self.int_arg(&args[0], name, 1)?),
            ActionName::Speculate => ActionKind::Speculate(self.int_arg(&args[0], name, 1)?),
            ActionName::Commit => ActionKind::Commit(self.int_arg(&args[0], name, 1)?),
            ActionName::Discard => ActionKind::Discard(self.int_arg(&args[0], name, 1)?),
            ActionName::Clear => ActionKind::Clear(self.aggregation_arg(&args[0], name, 1)?),
            ActionName::Denormalize => {
                ActionKind::Denormalize(self.aggregation_arg(&args[0], name, 1)?)
            }
            ActionName::Trunc => {
                let aggregation = self.aggregation_arg(&args[0], name, 1)?;
                let count = match args.get(1) {
                    Some(n) => Some(self.int_arg(n, name, 2)?),
                    None => None,
                };
                ActionKind::Trunc { aggregation, count }
            }
            ActionName::Normalize => {
                let aggregation = self.aggregation_arg(&args[0], name, 1)?;
                let factor = self.int_arg(&args[1], name, 2)?;
                ActionKind::Normalize {
                    aggregation,
                    factor,
                }
            }
            ActionName::Setopt => {
                self.check_action_prototype(action, name, args)?;
                // Recorded as strings (a `char *` as the string it points to), as DTrace
                // records them; the consumer sets the option when it reads the record.
                let option = convert(self.expr(&args[0])?, &Type::String);
                let value = match args.get(1) {
                    Some(v) => Some(convert(self.expr(v)?, &Type::String)),
                    None => None,
                };
                ActionKind::Setopt { option, value }
            }
            ActionName::Tracemem => self.tracemem(args)?,
            ActionName::Print => self.print(&args[0])?,
            _ => {
                self.check_action_prototype(action, name, args)?;
                return Err(CompileError::new(
                    "D_UNSUPPORTED",
                    format!("the {name}( ) action is not supported yet"),
                    name_span,
                ));
            }
        })
    }

    /// The format string and the arguments of `printf()`, `system()` and `freopen()`.
    fn printf_args(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
    ) -> Result<(Vec<u8>, Vec<Expr>)> {
        let format = match &args[0].kind {
            A::Str(s) => s.clone(),
            _ => {
                let v = self.expr(&args[0])?;
                if !v.ty.is_string() {
                    return Err(prototype_arg(name, 1, "string", &v.ty, args[0].span));
                }
                return Err(CompileError::new(
                    "D_PRINTF_ARG_FMT",
                    format!("{name}( ) argument #1 is incompatible with prototype:\n\tprototype: string constant\n\t argument: {}", v.ty),
                    span,
                ));
            }
        };
        let mut values = Vec::new();
        let mut kinds = Vec::new();
        let wide = self.formats.wide_strings(&format);
        for (i, a) in args[1..].iter().enumerate() {
            let mut v = self.expr(a)?;
            if wide.contains(&i) {
                v = self.whole_array(v, name, i + 2)?;
            }
            kinds.push(match v.kind {
                ExprKind::AggRef(_) => FormatArg::Aggregation,
                _ => FormatArg::Value(v.ty.clone()),
            });
            values.push(v);
        }
        // An empty freopen() format restores the output: not a format to check.
        if !(name == "freopen" && format.is_empty()) {
            self.check_format(&format, &kinds, name, span)?;
        }
        Ok((format, values))
    }

    /// Argument `argno` of `action` when a conversion takes an array by value (`%ls`): an
    /// array, which D otherwise passes as its address, typed as itself so that its bytes
    /// are recorded; one in the traced process's memory is copied in first. Any other
    /// value is left for the format check to refuse.
    fn whole_array(&self, v: Expr, action: &str, argno: usize) -> Result<Expr> {
        let place = match &v.kind {
            ExprKind::AddrOf(p) | ExprKind::Load(p) if matches!(p.ty, Type::Array(..)) => p,
            _ => return Ok(v),
        };
        let (ty, span) = (place.ty.clone(), v.span);
        if !matches!(place.base, PlaceBase::User(_)) {
            return Ok(Expr { ty, ..v });
        }
        let size = ty.size();
        if size > u64::from(self.opts.scratchsize) {
            return Err(CompileError::new(
                "D_UNSUPPORTED",
                format!(
                    "{action}( ) argument #{argno} is an array of {size} bytes, more than scratchsize ({}) can copy in",
                    self.opts.scratchsize
                ),
                span,
            ));
        }
        let addr = Expr {
            ty: Type::Ptr(Box::new(Type::Void)),
            ..v
        };
        let size = mk(ExprKind::Int(size), types::UINT64, span);
        Ok(mk(
            ExprKind::Call(ir::Subr::Copyin, vec![addr, size]),
            ty,
            span,
        ))
    }

    /// `print(p)`: the address, and the whole object it points to, laid out for the
    /// consumer. The argument is checked as DTrace checks it: a pointer to an object of
    /// known, non-zero size. A struct or union in memory (`print(*p)`, as illumos DTrace
    /// takes it) is printed as a pointer to it would be.
    fn print(&mut self, arg: &ast::Expr) -> Result<ActionKind> {
        let addr = match self.place_of(arg)? {
            Some(p)
                if matches!(p.ty, Type::Struct(_))
                    && matches!(p.base, PlaceBase::Kernel(_) | PlaceBase::User(_)) =>
            {
                let ty = Type::Ptr(Box::new(p.ty.clone()));
                mk(ExprKind::AddrOf(Box::new(p)), ty, arg.span)
            }
            _ => self.expr(arg)?,
        };
        let Type::Ptr(target) = &addr.ty else {
            return Err(prototype_arg("print", 1, "void *", &addr.ty, arg.span));
        };
        let size = match &**target {
            Type::Void | Type::Opaque(_) => 0,
            t => t.size(),
        };
        if size == 0 {
            return Err(CompileError::new(
                "D_PRINT_SIZE",
                format!(
                    "print( ) argument #1 reference has type '{target}' with size 0; cannot print( ) it."
                ),
                arg.span,
            ));
        }
        let layout = self.layout(target);
        Ok(ActionKind::Print {
            user: self.user_space(&addr),
            addr,
            size: (size as u32).min(super::layout::PRINT_MAX),
            layout,
        })
    }

    /// `tracemem(addr, size[, dynsize])`'s arguments, checked as DTrace checks them: the
    /// prototype's integer types, then an address (a pointer, an integer, or an array or
    /// string, which are addresses of their bytes) and a positive constant size.
    fn tracemem(&mut self, args: &[ast::Expr]) -> Result<ActionKind> {
        let addr = self.expr(&args[0])?;
        let size = self.expr(&args[1])?;
        if !size.ty.is_integer() {
            return Err(prototype_arg(
                "tracemem",
                2,
                "size_t",
                &size.ty,
                args[1].span,
            ));
        }
        let dynsize = match args.get(2) {
            Some(a) => {
                let v = self.expr(a)?;
                if !v.ty.is_integer() {
                    return Err(prototype_arg("tracemem", 3, "ssize_t", &v.ty, a.span));
                }
                Some(convert(v, &types::INT64))
            }
            None => None,
        };
        if !addr.ty.is_scalar() && !addr.ty.is_string() && !matches!(addr.ty, Type::Array(..)) {
            return Err(CompileError::new(
                "D_TRACEMEM_ADDR",
                format!(
                    "tracemem( ) argument #1 is incompatible with prototype:\n\tprototype: pointer or integer\n\t argument: {}",
                    addr.ty
                ),
                args[0].span,
            ));
        }
        let bytes = match size.kind {
            ExprKind::Int(n) if size.ty.is_signed() && (n as i64) <= 0 => None,
            ExprKind::Int(n) => u32::try_from(n).ok().filter(|&n| n > 0),
            _ => None,
        };
        let Some(size) = bytes else {
            return Err(CompileError::new(
                "D_TRACEMEM_SIZE",
                "tracemem( ) argument #2 must be a non-zero positive integral constant expression",
                args[1].span,
            ));
        };
        Ok(ActionKind::Tracemem {
            addr,
            size,
            dynsize,
        })
    }

    fn check_format(
        &self,
        format: &[u8],
        args: &[FormatArg],
        func: &str,
        span: Span,
    ) -> Result<()> {
        self.formats
            .check_args(format, args, func)
            .map_err(|(tag, message)| CompileError::new(tag, message, span))
    }

    /// An integer argument `argno` (1-based) of `action`: 64-bit values stay so, narrower
    /// ones become `int`.
    fn int_arg(&mut self, e: &ast::Expr, action: &str, argno: usize) -> Result<Expr> {
        let v = self.expr(e)?;
        if !v.ty.is_scalar() || is_void(&v) {
            return Err(prototype_arg(action, argno, "int", &v.ty, e.span));
        }
        if v.ty.scalar_size() == 8 {
            Ok(v)
        } else {
            Ok(convert(v, &types::INT))
        }
    }

    /// The aggregation `e` names (`@a`), argument `argno` (1-based) of `action`.
    fn aggregation_arg(&mut self, e: &ast::Expr, action: &str, argno: usize) -> Result<ir::AggId> {
        let A::Aggregation(name) = &e.kind else {
            let tag = match action {
                "printa" => "D_PRINTA_AGGARG",
                "clear" => "D_CLEAR_AGGARG",
                "trunc" => "D_TRUNC_AGGARG",
                "normalize" | "denormalize" => "D_NORMALIZE_AGGARG",
                _ => "D_PROTO_ARG",
            };
            let ty = self
                .expr(e)
                .map_or_else(|_| "non-aggregation".to_string(), |v| v.ty.to_string());
            return Err(CompileError::new(
                tag,
                format!("{action}( ) argument #{argno} is incompatible with prototype:\n\tprototype: aggregation\n\t argument: {ty}"),
                e.span,
            ));
        };
        self.aggregation(name).ok_or_else(|| {
            // As in DTrace, an aggregation must be assigned earlier in the program text
            // than the action that names it.
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

    /// The stack `stack(n)` or `ustack(n[, strsize])` records.
    fn stack_datum(&mut self, name: &str, args: &[ast::Expr]) -> Result<Datum> {
        // An argument that is not an integer at all is a prototype mismatch, as DTrace
        // words it; an integer that is not a positive constant gets the action's own error.
        let variable: Vec<_> = args
            .iter()
            .enumerate()
            .filter(|(_, a)| self.int_constant(a).is_none())
            .collect();
        for (i, a) in variable {
            let ty = self.expr(a)?.ty;
            if !ty.is_integer() {
                return Err(super::call::prototype_arg(
                    name,
                    i + 1,
                    "uint32_t",
                    &ty,
                    a.span,
                ));
            }
        }
        if name == "stack" {
            let frames = match args.first() {
                Some(a) => frames_arg(
                    a,
                    self.int_constant(a),
                    "D_STACK_SIZE",
                    "stack( ) argument #1",
                )?,
                None => self.opts.stack_frames,
            };
            Ok(Datum::Stack {
                frames: frames.min(self.opts.max_frames),
            })
        } else {
            // jstack() is ustack() with its own default depth: Linux has no Java
            // stack helpers to give it more.
            let frames = match args.first() {
                Some(a) => frames_arg(
                    a,
                    self.int_constant(a),
                    "D_USTACK_FRAMES",
                    &format!("{name}( ) argument #1"),
                )?,
                None if name == "jstack" => self.opts.jstack_frames,
                None => self.opts.ustack_frames,
            };
            // The string space of ustack helpers (argument #2) has no use on Linux:
            // checked, then ignored.
            if let Some(a) = args.get(1) {
                if self.int_constant(a).is_none_or(|n| n < 0) {
                    return Err(CompileError::new(
                        "D_USTACK_STRSIZE",
                        "ustack( ) argument #2 must be a positive integer constant",
                        a.span,
                    ));
                }
            }
            Ok(Datum::UStack {
                frames: frames.min(self.opts.max_frames),
                window: 0,
            })
        }
    }

    /// `func(pc)`, `ufunc(pc)`, ... as a [`ExprKind::Datum`]: the address, typed.
    fn symbol_datum(&mut self, e: &ast::Expr) -> Result<Option<Expr>> {
        let A::Call { name, args, .. } = &e.kind else {
            return Ok(None);
        };
        let Some(datum) = Datum::symbol_function(name) else {
            return Ok(None);
        };
        action_args(name, args, 1, 1, e.span)?;
        let pc = self.expr(&args[0])?;
        if !pc.ty.is_scalar() || is_void(&pc) {
            return Err(CompileError::new(
                "D_PROTO_ARG",
                format!(
                    "argument #1 is incompatible with prototype:\n\tprototype: uintptr_t\n\t argument: {}",
                    pc.ty
                ),
                args[0].span,
            ));
        }
        let pc = convert(pc, &types::UINT64);
        Ok(Some(mk(
            ExprKind::Datum(datum, Some(Box::new(pc))),
            types::UINT64,
            e.span,
        )))
    }

    /// A key of an aggregation: a stack or symbol datum, or a value.
    fn agg_key(&mut self, k: &ast::Expr, index: usize) -> Result<Expr> {
        if let A::Call { name, args, .. } = &k.kind {
            if matches!(name.as_str(), "stack" | "ustack" | "jstack") {
                action_args(name, args, 0, if name == "stack" { 1 } else { 2 }, k.span)?;
                let d = self.stack_datum(name, args)?;
                return Ok(mk(ExprKind::Datum(d, None), types::UINT64, k.span));
            }
        }
        if let Some(d) = self.symbol_datum(k)? {
            return Ok(d);
        }
        if self.is_translation(k) {
            return Err(CompileError::new(
                "D_KEY_TYPE",
                format!(
                    "pointer to translated data expression may not be used as aggregation index: key #{}",
                    index + 1
                ),
                k.span,
            ));
        }
        let v = self.expr(k)?;
        if is_void(&v) || v.ty == Type::Void {
            return Err(CompileError::new(
                "D_KEY_TYPE",
                format!(
                    "void expression may not be used as aggregation index: key #{}",
                    index + 1
                ),
                k.span,
            ));
        }
        Ok(v)
    }

    /// `@name[keys] = func(args)`.
    fn aggregate(
        &mut self,
        (name, keys): (&str, &[ast::Expr]),
        rhs: &ast::Expr,
        span: Span,
    ) -> Result<ActionKind> {
        let A::Call {
            name: func,
            args,
            name_span,
        } = &rhs.kind
        else {
            if let Some(call) = rhs.call_of_non_name() {
                // Its D_FUNC_IDENT error.
                self.expr(call)?;
            }
            return Err(CompileError::new(
                "D_AGG_FUNC",
                format!("@{name} must be assigned the result of an aggregating function"),
                rhs.span,
            ));
        };
        if !builtins::is_aggregating(func) {
            if self.predefined(func).is_none() {
                return Err(CompileError::new(
                    "D_FUNC_UNDEF",
                    format!("undefined function name: {func}"),
                    *name_span,
                ));
            }
            return Err(CompileError::new(
                "D_AGG_FUNC",
                format!("@{name} must be assigned the result of an aggregating function"),
                rhs.span,
            ));
        }
        let constant = |e: &ast::Expr| self.int_constant(e);
        let (func_kind, value_args) = parse_function(&constant, func, args, rhs.span)?;
        let mut typed_keys = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            typed_keys.push(self.agg_key(k, i)?);
        }
        let signature: Vec<(Type, Option<Datum>)> = typed_keys
            .iter()
            .map(|k| match &k.kind {
                ExprKind::Datum(d, _) => (types::UINT64, Some(*d)),
                _ => (k.ty.clone(), None),
            })
            .collect();
        let id = self.aggregation_for(name, func_kind, signature, &typed_keys, span)?;
        self.note_keys(super::keys::KeyOwner::Aggregation(id), &typed_keys)?;
        let mut values = Vec::new();
        for (i, a) in args.iter().take(value_args).enumerate() {
            // lquantize/llquantize's increment is their last argument.
            let a = if i == 1 && !matches!(func_kind, dtrace_abi::slots::AggFunc::Quantize) {
                args.last().expect("args")
            } else {
                a
            };
            let v = self.expr(a)?;
            if i == 0 && (!v.ty.is_scalar() || is_void(&v)) {
                return Err(CompileError::new(
                    "D_AGG_SCALAR",
                    format!("{func}( ) argument #1 must be of scalar type"),
                    rhs.span,
                ));
            }
            if !v.ty.is_scalar() || is_void(&v) {
                return Err(prototype_arg(func, i + 1, "int64_t", &v.ty, a.span));
            }
            values.push(convert(v, &types::INT64));
        }
        Ok(ActionKind::Aggregate {
            aggregation: id,
            keys: typed_keys,
            args: values,
        })
    }

    /// The aggregation called `name`, created on first use; later uses must agree.
    fn aggregation_for(
        &mut self,
        name: &str,
        func: dtrace_abi::slots::AggFunc,
        keys: Vec<(Type, Option<Datum>)>,
        typed: &[Expr],
        span: Span,
    ) -> Result<ir::AggId> {
        let Some(id) = self.aggregation(name) else {
            return Ok(self.new_aggregation(
                ir::Aggregation {
                    name: name.to_string(),
                    func,
                    keys,
                    uses: Vec::new(),
                },
                span,
            ));
        };
        let a = &self.prog.aggregations[id];
        if let Some(err) = parameter_mismatch(&a.func, &func, span) {
            return Err(err);
        }
        if a.func != func {
            let first = self.scope.agg_spans.get(name).copied().unwrap_or(span);
            return Err(CompileError::new(
                "D_AGG_REDEF",
                format!(
                    "aggregation redefined: @{name}\n\t current: @{name} = {}( )\n\tprevious: @{name} = {}( ) : line {}",
                    func.name(),
                    a.func.name(),
                    dtrace_frontend::line_marker(first)
                ),
                span,
            ));
        }
        let same = a.keys.len() == keys.len()
            && a.keys
                .iter()
                .zip(&keys)
                .all(|((t, d), (u, e))| t.is_string() == u.is_string() && d == e);
        if !same {
            if a.keys.len() == keys.len() {
                for (i, ((t, _), k)) in a.keys.iter().zip(typed).enumerate() {
                    if t.is_string() != k.ty.is_string() {
                        return Err(CompileError::new(
                            "D_ARR_BADREF",
                            format!("key expression has type {}; {t} expected", k.ty),
                            typed[i].span,
                        ));
                    }
                }
            }
            return Err(CompileError::new(
                "D_AGG_REDEF",
                format!("aggregation @{name} used with a different key signature"),
                span,
            ));
        }
        Ok(id)
    }
}

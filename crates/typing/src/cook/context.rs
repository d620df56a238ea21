//! What the probe context gives: built-in variables, `argN` and `args[N]`, typed as each
//! probe presents them (tracepoint fields by their format, `rawtp` and `fbt` arguments by
//! their BTF prototype, USDT arguments by their operand size).
//!
//! `proc` and `sched` probes ([`ProbeContext::Mapped`]) define each `args[N]` as a D
//! expression over the probe they fire on; it is parsed and typed here in that base probe's
//! context and wrapped in [`ExprKind::InBase`], so its `args[1]` is the raw tracepoint's
//! and its `xlate` uses the D library's translators. The probe's filter is typed the same
//! way. `argN` is the argument's native value: for `xlate <T *> (e)`, the value of `e`.

use dtrace_frontend::ast::{self, ExprKind as A, Item};
use dtrace_frontend::{CompileError, Origin, Result, Source, Span};

use super::expr::{convert, int, mk};
use super::{Cook, SYSCALL_GROUP_MIN};
use crate::builtins::Variable;
use crate::ir::{Builtin, Expr, ExprKind, Place, PlaceBase};
use crate::probe::{usdt_arg_type, user_arg_types, FieldKind, ProbeContext, UprobeKind};
use crate::regs;
use crate::types::{self, kernel, Type};

impl Cook<'_> {
    /// The built-in variable `name`.
    pub(crate) fn builtin(&mut self, v: Variable, span: Span) -> Result<Expr> {
        match v {
            Variable::Arg(n) => self.arg(n, span),
            Variable::Args => Err(CompileError::new(
                "D_IDENT_BADREF",
                "associative array 'args' may not be referenced as scalar",
                span,
            )),
            Variable::Uregs => Err(CompileError::new(
                "D_IDENT_BADREF",
                "associative array 'uregs' may not be referenced as scalar",
                span,
            )),
            Variable::Ipl => self.ipl(span),
            Variable::Unavailable(why) => Err(CompileError::new("D_UNSUPPORTED", why, span)),
            Variable::Value(b) => {
                let ty = match b {
                    Builtin::Timestamp | Builtin::Vtimestamp => types::UINT64,
                    Builtin::Walltimestamp => types::INT64,
                    Builtin::Pid | Builtin::Ppid => typedef("pid_t"),
                    Builtin::Tid => typedef("id_t"),
                    Builtin::Uid => typedef("uid_t"),
                    Builtin::Gid => typedef("gid_t"),
                    Builtin::Cpu => typedef("processorid_t"),
                    Builtin::Execname
                    | Builtin::Execargs
                    | Builtin::Probeprov
                    | Builtin::Probemod
                    | Builtin::Probefunc
                    | Builtin::Probename => Type::String,
                    Builtin::Id | Builtin::Epid => types::UINT,
                    Builtin::Errno => types::INT,
                    Builtin::Stackdepth | Builtin::Ustackdepth => types::UINT32,
                    Builtin::Caller => typedef("uintptr_t"),
                    Builtin::Ucaller => types::UINT64,
                    Builtin::Curthread => kernel_struct_pointer("task_struct"),
                    Builtin::UserRegs => kernel_struct_pointer("pt_regs"),
                    Builtin::StackPointer | Builtin::TrampolineFrame => types::UINT64,
                };
                if matches!(b, Builtin::Timestamp | Builtin::Vtimestamp) {
                    self.prog.timestamp = true;
                }
                Ok(mk(ExprKind::Builtin(b), ty, span))
            }
        }
    }

    /// `uregs[index]`: a user-mode register of the current thread, as a `uint64_t`. The
    /// index is an integer constant ([`crate::regs`] says what each one reads).
    pub(crate) fn uregs(&mut self, index: &[ast::Expr], span: Span) -> Result<Expr> {
        let [index] = index else {
            let n = index.len();
            return Err(CompileError::new(
                "D_PROTO_LEN",
                format!(
                    "uregs[ ] prototype mismatch: {n} arg{}passed, 1 expected",
                    if n == 1 { " " } else { "s " }
                ),
                span,
            ));
        };
        let i = self.expr(index)?;
        let ExprKind::Int(value) = i.kind else {
            return Err(CompileError::new(
                "D_PROTO_ARG",
                format!(
                    "uregs[ ] argument #1 is incompatible with prototype:\n\tprototype: integer constant\n\t argument: {}",
                    i.ty
                ),
                span,
            ));
        };
        if i.ty.is_signed() && (value as i64) < 0 {
            return Err(CompileError::new(
                "D_REGS_IDX",
                format!("index {} is out of range for array uregs", value as i64),
                span,
            ));
        }
        if value >= regs::LIMIT {
            return Err(CompileError::new(
                "D_UNKNOWN",
                format!("uregs[]: index out of bounds ({})", value as i64),
                span,
            ));
        }
        let place = if value < regs::PT_REGS_SLOTS {
            let frame = mk(
                ExprKind::Builtin(Builtin::UserRegs),
                kernel_struct_pointer("pt_regs"),
                span,
            );
            let mut p = Place::whole(PlaceBase::Kernel(Box::new(frame)), types::UINT64);
            p.offset = value * 8;
            p
        } else {
            let (_, member) = regs::THREAD_MEMBERS[(value - regs::PT_REGS_SLOTS) as usize];
            let task = self.builtin(Variable::Value(Builtin::Curthread), span)?;
            let missing = || {
                CompileError::new(
                    "D_UNKNOWN",
                    format!("kernel type information lacks struct thread_struct member {member}"),
                    span,
                )
            };
            let Type::Ptr(task_ty) = &task.ty else {
                return Err(missing());
            };
            let Type::Struct(task_record) = &**task_ty else {
                return Err(missing());
            };
            let thread = self.member(task_record, "thread").ok_or_else(missing)?;
            let Type::Struct(thread_record) = &thread.ty else {
                return Err(missing());
            };
            let m = self.member(thread_record, member).ok_or_else(missing)?;
            let mut p = Place::whole(PlaceBase::Kernel(Box::new(task)), m.ty);
            p.offset = thread.offset + m.offset;
            p
        };
        let v = self.place_value(place, span)?;
        Ok(convert(v, &types::UINT64))
    }

    /// `argN` of the probe: a 64-bit integer.
    fn arg(&mut self, n: u8, span: Span) -> Result<Expr> {
        if let (ProbeContext::Mapped(m), true) = (self.context().clone(), self.in_mapped()) {
            let Some(arg) = m.args.get(n as usize) else {
                return Ok(int(0, types::INT64, span));
            };
            let what = format!("{} arg{n} = {}", self.site().full_name(), arg.expr);
            let mut e = self.mapped_expr(&arg.expr, &what, span)?;
            if let A::Xlate { operand, .. } = e.kind {
                e = *operand;
            }
            let v = self
                .in_base(|c| c.expr(&e))
                .map_err(|err| mapped_error(err, &what, span))?;
            if !v.ty.is_scalar() {
                return Ok(int(0, types::INT64, span));
            }
            let v = convert(v, &types::INT64);
            return Ok(mk(ExprKind::InBase(Box::new(v)), types::INT64, span));
        }
        Ok(mk(ExprKind::Arg(n), types::INT64, span))
    }

    /// Whether the context is a `proc`/`sched` probe's own (not its base's, inside one of
    /// its definitions).
    fn in_mapped(&self) -> bool {
        matches!(self.site().context, ProbeContext::Mapped(_))
            && self.ctx.as_ref().is_some_and(|c| c.in_base == 0)
    }

    /// `args[i]`: argument `i` typed as the probe describes it; `index` is what is between
    /// the brackets, an integer constant.
    pub(crate) fn probe_args(&mut self, index: &[ast::Expr], span: Span) -> Result<Expr> {
        // As DTrace: one index, an integer constant, in the probe's range.
        let [e] = index else {
            return Err(CompileError::new(
                "D_PROTO_LEN",
                format!(
                    "args[ ] prototype mismatch: {} args passed, 1 expected",
                    index.len()
                ),
                span,
            ));
        };
        let Some(i) = self.int_constant(e) else {
            let ty = self.expr(e)?.ty;
            return Err(CompileError::new(
                "D_PROTO_ARG",
                format!(
                    "args[ ] argument #1 is incompatible with prototype:\n\tprototype: integer constant\n\t argument: {ty}"
                ),
                span,
            ));
        };
        if let Some(desc) = self.ctx.as_ref().and_then(|c| c.unmatched.clone()) {
            return Err(CompileError::new(
                "D_ARGS_MULTI",
                format!(
                    "args[ ] may not be referenced because probe description {desc} matches an unstable set of probes"
                ),
                span,
            ));
        }
        let probe = self.site().full_name();
        let out_of_range = || {
            CompileError::new(
                "D_ARGS_IDX",
                format!("index {i} is out of range for {probe} args[ ]"),
                span,
            )
        };
        if !(0..=255).contains(&i) {
            return Err(out_of_range());
        }
        let n = i as u8;
        let raw = |ty: Type| mk(ExprKind::ProbeArg(n), ty, span);
        if self.in_mapped() {
            let ProbeContext::Mapped(m) = self.site().context.clone() else {
                unreachable!("a mapped probe")
            };
            // An argument without a type is only for the D library's translators (`argN`).
            let arg = m
                .args
                .get(i as usize)
                .filter(|a| !a.ty.is_empty())
                .ok_or_else(out_of_range)?;
            let what = format!("{probe} args[{i}] = {}", arg.expr);
            let e = self.mapped_expr(&arg.expr, &what, span)?;
            let v = self
                .in_base(|c| c.expr(&e))
                .map_err(|err| mapped_error(err, &what, span))?;
            let ty = v.ty.clone();
            return Ok(mk(ExprKind::InBase(Box::new(v)), ty, span));
        }
        match self.context().clone() {
            ProbeContext::Tracepoint(layout) => {
                let field = if layout.syscall_return {
                    (i <= 1).then(|| layout.args.first()).flatten()
                } else {
                    layout.args.get(i as usize)
                };
                let f = field.cloned().ok_or_else(out_of_range)?;
                match &f.kind {
                    FieldKind::Int(ty) => {
                        let native = if f.signed {
                            types::INT64
                        } else {
                            types::UINT64
                        };
                        Ok(convert(raw(native), ty))
                    }
                    FieldKind::Pointer => Ok(raw(typedef("uintptr_t"))),
                    FieldKind::KernelPointer { pointee } => Ok(raw(match kernel::vmlinux() {
                        Some(btf) => Type::Ptr(Box::new(kernel::from_btf(btf, *pointee))),
                        None => typedef("uintptr_t"),
                    })),
                    FieldKind::CharArray | FieldKind::DataLocString => Ok(raw(Type::String)),
                    FieldKind::Other => Err(CompileError::new(
                        "D_ARGS_TYPE",
                        format!(
                            "{probe} argument {} ({} {}) has a type D cannot read yet",
                            f.name, f.ctype, f.name
                        ),
                        span,
                    )),
                }
            }
            ProbeContext::Function { btf_id, nargs, ret } => {
                // A void function's return has args[0] alone, as in DTrace.
                let void_return = ret && function_arg_type(btf_id, true, 1) == Some(0);
                if (ret && i > 1) || (void_return && i == 1) || (!ret && i as u32 >= nargs) {
                    return Err(out_of_range());
                }
                match function_arg_type(btf_id, ret, i as usize) {
                    Some(ty) => self.btf_arg(raw(types::INT64), ty, i, span),
                    // args[0] at return: the return offset, unknown (-1) as in Oracle's
                    // DTrace, a uint64_t there.
                    None if ret => Ok(raw(types::UINT64)),
                    None => Ok(raw(types::INT64)),
                }
            }
            ProbeContext::BtfTracepoint(tp) => {
                let ty = *tp.args.get(i as usize).ok_or_else(out_of_range)?;
                self.btf_arg(raw(types::INT64), ty, i, span)
            }
            ProbeContext::Uprobe(u) => match &u.kind {
                // The operand is read at its size and sign-extended (or not) already.
                UprobeKind::Usdt(specs) => Ok(raw(usdt_arg_type(specs, i as usize))),
                UprobeKind::Entry | UprobeKind::Return
                    if !u.kernel.is_empty() || u.object.is_some() =>
                {
                    let ret = u.kind == UprobeKind::Return;
                    let signatures: Vec<(String, Option<Vec<Type>>)> = match &u.object {
                        None => u
                            .kernel
                            .iter()
                            .map(|f| (f.function.clone(), f.arg_types(ret)))
                            .collect(),
                        Some(object) => {
                            let functions = if u.functions.is_empty() {
                                std::slice::from_ref(&self.site().function)
                            } else {
                                &u.functions[..]
                            };
                            functions
                                .iter()
                                .map(|f| (f.clone(), user_arg_types(object, f, ret)))
                                .collect()
                        }
                    };
                    match agreed_arg_type(&signatures, i as usize) {
                        KernelArg::Typed(ty) => self.typed_arg(raw(types::INT64), ty, i, span),
                        KernelArg::Untyped => Ok(raw(types::INT64)),
                        KernelArg::OutOfRange(f) if signatures.len() > 1 => {
                            let mut e = out_of_range();
                            e.message = format!("{} ({f} has no args[{i}])", e.message);
                            Err(e)
                        }
                        KernelArg::OutOfRange(_) => Err(out_of_range()),
                        KernelArg::Differs(a, b) => Err(CompileError::new(
                            "D_ARGS_TYPE",
                            format!(
                                "{probe} args[{i}] has different types in the functions it stands for ({} in {}, {} in {}); use arg{i}, or a description whose functions agree",
                                a.1, a.0, b.1, b.0
                            ),
                            span,
                        )),
                    }
                }
                // As in DTrace, an instruction offset has no arguments.
                UprobeKind::Entry if self.site().name != "entry" => {
                    let mut e = out_of_range();
                    e.message = format!(
                        "{} (a pid probe at an instruction offset has no args[ ]; arg0 to arg5 are the argument registers there)",
                        e.message
                    );
                    Err(e)
                }
                UprobeKind::Entry | UprobeKind::Return => Ok(raw(types::INT64)),
            },
            ProbeContext::Mapped(_) => Err(out_of_range()),
            ProbeContext::SyscallGroup(g) => Err(CompileError::new(
                "D_ARGS_TYPE",
                format!(
                    "args[ ] needs a specific system call; use arg{i}: this clause is enabled on more than {} system calls ({} of them, one program for all), and args[ ] is typed per call",
                    SYSCALL_GROUP_MIN,
                    g.calls.len()
                ),
                span,
            )),
            ProbeContext::ArgArray | ProbeContext::PerfEvent => Err(out_of_range()),
        }
    }

    /// Argument `i`, read as a 64-bit value `raw`, as a value of BTF type `ty`: integers
    /// and enums converted to their type, pointers typed (so `args[1]->comm` works);
    /// anything else (a struct passed by value) is refused.
    fn btf_arg(&mut self, raw: Expr, ty: u32, i: i64, span: Span) -> Result<Expr> {
        let Some(btf) = kernel::vmlinux() else {
            return Ok(raw);
        };
        self.typed_arg(raw, kernel::from_btf(btf, ty), i, span)
    }

    /// Argument `i`, read as a 64-bit value `raw`, as a value of the kernel's type `ty`
    /// (see [`Self::btf_arg`]).
    fn typed_arg(&mut self, raw: Expr, ty: Type, i: i64, span: Span) -> Result<Expr> {
        match &ty {
            Type::Int { .. } => Ok(convert(raw, &ty)),
            Type::Ptr(_) => Ok(Expr { ty, ..raw }),
            _ => Err(CompileError::new(
                "D_ARGS_TYPE",
                format!(
                    "{} args[{i}] has type {ty}, which D cannot read yet; use arg{i}",
                    self.site().full_name()
                ),
                span,
            )),
        }
    }

    /// `ipl`, as Oracle's DTrace for Linux has it (`in_interrupt()`): this CPU's preempt
    /// count's softirq, hardirq and NMI bits, 0 in a thread's own context. The count is a
    /// per-CPU variable, `__preempt_count` or (x86, 6.2 to 6.14) `pcpu_hot.preempt_count`.
    fn ipl(&mut self, span: Span) -> Result<Expr> {
        let btf = kernel::vmlinux();
        let has = |name: &str| btf.is_some_and(|b| kernel::percpu_variable(b, name).is_some());
        let count = if has("__preempt_count") {
            "`__preempt_count"
        } else if has("pcpu_hot") {
            "`pcpu_hot.preempt_count"
        } else {
            return Err(CompileError::new(
                "D_UNSUPPORTED",
                "ipl cannot be read on this kernel: its BTF describes no per-CPU preempt count",
                span,
            ));
        };
        // SOFTIRQ_MASK | HARDIRQ_MASK | NMI_MASK.
        let text = format!("(uint_t)({count} & 0xffff00)");
        let what = "ipl cannot be read on this kernel";
        let e = self.mapped_expr(&text, what, span)?;
        self.expr(&e).map_err(|err| mapped_error(err, what, span))
    }

    /// Parse a D expression of a `proc`/`sched` probe's definition (`what` names it for
    /// messages); its errors are placed at `span`, where the script uses it.
    pub(crate) fn mapped_expr(&self, text: &str, what: &str, span: Span) -> Result<ast::Expr> {
        let source = Source::new(
            Origin::Script("<provider>".to_string()),
            format!("BEGIN /{text}/ {{}}"),
        );
        let known = |name: &str| {
            types::builtin_typedef(name).is_some()
                || self.is_d_typedef(name)
                || kernel::is_typedef(name)
        };
        let program = dtrace_frontend::parse(&source, u16::MAX, &known)
            .map_err(|err| mapped_error(err, what, span))?;
        match program.items.into_iter().next() {
            Some(Item::Clause(c)) if c.predicate.is_some() => Ok(c.predicate.expect("a predicate")),
            _ => Err(CompileError::new(
                "D_SYNTAX",
                format!("{what}: not an expression"),
                span,
            )),
        }
    }

    /// Run `f` with the context set to the base probe of a `proc`/`sched` probe: `args[]`,
    /// `argN` and built-in variables are then the base's.
    pub(crate) fn in_base<R>(&mut self, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        if let Some(ctx) = self.ctx.as_mut() {
            ctx.in_base += 1;
        }
        let r = f(self);
        if let Some(ctx) = self.ctx.as_mut() {
            ctx.in_base -= 1;
        }
        r
    }

    /// The filter of a `proc`/`sched` probe, if it has one: a value that is zero when the
    /// probe must not fire.
    pub(crate) fn mapped_filter(&mut self, span: Span) -> Result<Option<Expr>> {
        let ProbeContext::Mapped(m) = self.site().context.clone() else {
            return Ok(None);
        };
        let Some(text) = m.filter.clone() else {
            return Ok(None);
        };
        let what = format!("the filter of {} ({text})", self.site().full_name());
        let e = self.mapped_expr(&text, &what, span)?;
        let v = self
            .in_base(|c| c.expr(&e))
            .map_err(|err| mapped_error(err, &what, span))?;
        let ty = v.ty.clone();
        Ok(Some(mk(ExprKind::InBase(Box::new(v)), ty, span)))
    }

    /// `args[N]` of a `proc`/`sched` probe whose definition is an `xlate`: that `xlate`'s
    /// type name and operand.
    pub(crate) fn mapped_xlate(&self, e: &ast::Expr) -> Option<(ast::TypeName, ast::Expr)> {
        if !self.in_mapped() {
            return None;
        }
        let ProbeContext::Mapped(m) = &self.site().context else {
            return None;
        };
        let A::Index { base, args } = &e.kind else {
            return None;
        };
        if !matches!(&base.kind, A::Ident(n) if n == "args") {
            return None;
        }
        let i = match args.as_slice() {
            [a] => self.int_constant(a)?,
            _ => return None,
        };
        let arg = m.args.get(usize::try_from(i).ok()?)?;
        let parsed = self.mapped_expr(&arg.expr, "", e.span).ok()?;
        match parsed.kind {
            A::Xlate { ty, operand } => Some((ty, *operand)),
            _ => None,
        }
    }
}

/// `struct name *` from BTF (an integer-sized pointer without).
fn kernel_struct_pointer(name: &str) -> Type {
    let record = kernel::vmlinux()
        .and_then(|btf| kernel::named(btf, kernel::Tag::Struct, name))
        .unwrap_or_else(|| typedef("uintptr_t"));
    Type::Ptr(Box::new(record))
}

/// One of D's built-in integer typedefs.
fn typedef(name: &str) -> Type {
    types::builtin_typedef(name).expect("a built-in typedef")
}

/// What `args[n]` of a kprobe or `pid` probe standing for some functions is.
enum KernelArg {
    /// Every function typed has it, with this type.
    Typed(Type),
    /// No function is typed (BTF or DWARF describes none): a 64-bit value.
    Untyped,
    /// This function has no such argument.
    OutOfRange(String),
    /// Two functions disagree: (function, type) of each.
    Differs((String, Type), (String, Type)),
}

/// `args[n]` of a probe on functions given with their `args[]` types (None: not typed;
/// such functions are read as the others are).
fn agreed_arg_type(signatures: &[(String, Option<Vec<Type>>)], n: usize) -> KernelArg {
    let mut first: Option<(String, Type)> = None;
    for (function, types) in signatures {
        let Some(types) = types else {
            continue;
        };
        let Some(ty) = types.get(n).cloned() else {
            return KernelArg::OutOfRange(function.clone());
        };
        match &first {
            None => first = Some((function.clone(), ty)),
            Some((_, t)) if *t == ty => {}
            Some(a) => return KernelArg::Differs(a.clone(), (function.clone(), ty)),
        }
    }
    first.map_or(KernelArg::Untyped, |(_, ty)| KernelArg::Typed(ty))
}

/// The BTF type of an fbt probe's `args[n]`: parameter `n` of function `btf_id` at entry,
/// its return type as `args[1]` at return; None when unknown (or `args[0]` at return).
fn function_arg_type(btf_id: u32, ret: bool, n: usize) -> Option<u32> {
    let proto = kernel::vmlinux()?.func_proto(btf_id)?;
    match (ret, n) {
        (false, n) => proto.params.get(n).map(|p| p.ty),
        (true, 1) => Some(proto.ret),
        _ => None,
    }
}

/// An error in a `proc`/`sched` probe's definition (`what`), placed at `span` in the
/// script unless it already has a place in a source the script's diagnostics know.
pub(crate) fn mapped_error(err: CompileError, what: &str, span: Span) -> CompileError {
    if err.span.is_some_and(|s| s.source != u16::MAX) {
        return err;
    }
    CompileError::new(err.tag, format!("{what}: {}", err.message), span)
}

//! Calls in expressions: subroutines, checked against their prototypes in the built-in
//! table; actions and aggregating functions called where a value is expected.

use dtrace_frontend::ast;
use dtrace_frontend::{CompileError, Result, Span};

use super::expr::{convert, is_void, mk};
use super::Cook;
use crate::builtins::{self, Accepts, ActionName, Kind, Param, Subroutine};
use crate::ir::{Expr, ExprKind, Subr};
use crate::types::{self, Type};

/// The most bytes one `copyin`, `copyinto` or `alloca` takes (they live in the probe's
/// scratch space, at most 32 KiB for everything).
pub const COPYIN_MAX: u32 = 4096;

/// DTrace's prototype-length error for `name`, which takes `min` to `max` arguments.
pub(crate) fn prototype_len(
    name: &str,
    got: usize,
    min: usize,
    max: usize,
    span: Span,
) -> CompileError {
    let expected = if got < min {
        if min == max {
            format!("{min}")
        } else {
            format!("at least {min}")
        }
    } else if min == max {
        format!("{max}")
    } else {
        format!("at most {max}")
    };
    CompileError::new(
        "D_PROTO_LEN",
        format!(
            "{name}( ) prototype mismatch: {got} arg{}passed, {expected} expected",
            if got == 1 { " " } else { "s " }
        ),
        span,
    )
}

/// DTrace's prototype-argument error: argument `n` (1-based) of `name` has type `got`.
pub(crate) fn prototype_arg(
    name: &str,
    n: usize,
    want: &str,
    got: &Type,
    span: Span,
) -> CompileError {
    CompileError::new(
        "D_PROTO_ARG",
        format!(
            "{name}( ) argument #{n} is incompatible with prototype:\n\tprototype: {want}\n\t argument: {got}"
        ),
        span,
    )
}

impl Cook<'_> {
    /// `printa()` of several aggregations: their keys must match the first's in number
    /// (`D_PRINTA_AGGKEY`) and type (`D_PRINTA_AGGPROTO`), as DTrace checks them.
    pub(crate) fn check_printa_keys(&self, ids: &[crate::ir::AggId], span: Span) -> Result<()> {
        let aggs = &self.prog.aggregations;
        let first = &aggs[ids[0]];
        for &id in &ids[1..] {
            let other = &aggs[id];
            let (l, r) = (first.keys.len(), other.keys.len());
            if l != r {
                let keys = |n: usize| if n == 1 { "key" } else { "keys" };
                return Err(CompileError::new(
                    "D_PRINTA_AGGKEY",
                    format!(
                        "printa( ): @{a} and @{b} do not have matching key signatures: @{a} has {l} {}, @{b} has {r} {}",
                        keys(l),
                        keys(r),
                        a = first.name,
                        b = other.name
                    ),
                    span,
                ));
            }
            for (n, ((lt, ld), (rt, rd))) in first.keys.iter().zip(&other.keys).enumerate() {
                let ints = lt.is_integer() && rt.is_integer() && ld.is_none() && rd.is_none();
                if !ints && (lt != rt || ld != rd) {
                    return Err(CompileError::new(
                        "D_PRINTA_AGGPROTO",
                        format!(
                            "printa( ): @{b}[ ] key #{n} is incompatible with @{a}:\n{:>9} key #{n}: {lt}\n{:>9} key #{n}: {rt}",
                            first.name,
                            other.name,
                            a = first.name,
                            b = other.name,
                            n = n + 1
                        ),
                        span,
                    ));
                }
            }
        }
        Ok(())
    }

    /// The arguments of an action with a prototype of DTrace's (`copyout`, `copyoutstr`,
    /// ...) checked against it, so wrong calls get DTrace's words.
    pub(crate) fn check_action_prototype(
        &mut self,
        action: ActionName,
        name: &str,
        args: &[ast::Expr],
    ) -> Result<()> {
        let params: &[Param] = match action {
            ActionName::Chill => &[builtins::INT],
            ActionName::Copyout => &[builtins::VOIDP, builtins::ADDR, builtins::SIZE],
            ActionName::Copyoutstr => &[builtins::CSTR, builtins::ADDR, builtins::SIZE],
            ActionName::Setopt => &[builtins::CSTR, builtins::CSTR],
            _ => &[],
        };
        for (i, (a, p)) in args.iter().zip(params).enumerate() {
            let v = self.expr(a)?;
            let ok = !is_void(&v)
                && match p.accepts {
                    Accepts::String => v.ty.is_string() || is_char_pointer(&v.ty),
                    Accepts::Integer => v.ty.is_integer(),
                    Accepts::Scalar => v.ty.is_scalar(),
                    Accepts::Pointer | Accepts::Destination => {
                        matches!(v.ty, Type::Ptr(_) | Type::Array(..)) || v.ty.is_string()
                    }
                };
            if !ok {
                return Err(prototype_arg(name, i + 1, p.shown, &v.ty, a.span));
            }
        }
        Ok(())
    }

    /// `name(args)` where a value is expected.
    pub(crate) fn call(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        name_span: Span,
        span: Span,
    ) -> Result<Expr> {
        match self.predefined(name) {
            Some(Kind::Subroutine(s)) => self.subroutine(name, s, args, span),
            Some(Kind::Action(_)) => {
                // Typed `void`: its user says why it cannot take it. The call itself is
                // checked first, as DTrace cooks it.
                self.action_call_check(name, args, span)?;
                Ok(mk(ExprKind::Void(name.to_string()), Type::Void, span))
            }
            Some(Kind::Aggregating) => Err(CompileError::new(
                "D_CG_EXPR",
                format!(
                    "aggregating function {name}( ) may not be called from a D expression (D program context required)"
                ),
                name_span,
            )),
            _ => Err(CompileError::new(
                "D_FUNC_UNDEF",
                format!("undefined function name: {name}"),
                name_span,
            )),
        }
    }

    /// A subroutine call: arguments checked against the prototype.
    fn subroutine(
        &mut self,
        name: &str,
        s: Subroutine,
        args: &[ast::Expr],
        span: Span,
    ) -> Result<Expr> {
        let (min, max) = (s.required, s.params.len());
        if args.len() < min || args.len() > max {
            return Err(prototype_len(name, args.len(), min, max, span));
        }
        let mut typed = Vec::with_capacity(args.len());
        for (i, (a, p)) in args.iter().zip(s.params).enumerate() {
            let v = self.expr(a)?;
            if p.accepts == Accepts::String && !v.ty.is_string() && super::consts::is_null(a) {
                // The null pointer as a string: strtok's "go on with the last string"; any
                // other subroutine faults on it at run time, as DTrace does.
                typed.push(mk(ExprKind::Int(0), Type::String, a.span));
                continue;
            }
            let ok = !is_void(&v)
                && match p.accepts {
                    Accepts::String => v.ty.is_string() || is_char_pointer(&v.ty),
                    Accepts::Integer => v.ty.is_integer(),
                    Accepts::Scalar => v.ty.is_scalar(),
                    Accepts::Pointer | Accepts::Destination => {
                        matches!(v.ty, Type::Ptr(_) | Type::Array(..))
                            || super::consts::is_null(a)
                            || (p.accepts == Accepts::Pointer && v.ty.is_string())
                    }
                };
            if !ok {
                return Err(prototype_arg(name, i + 1, p.shown, &v.ty, a.span));
            }
            if s.subr.is_none() {
                continue;
            }
            typed.push(match p.accepts {
                Accepts::Integer if p.shown == "int" || p.shown == "char" => {
                    convert(v, &types::INT)
                }
                Accepts::Integer | Accepts::Scalar => convert(v, &types::INT64),
                _ => v,
            });
        }
        // Arguments are checked first, as DTrace checks the prototype.
        let Some(subr) = s.subr else {
            return Err(CompileError::new(
                "D_UNSUPPORTED",
                format!(
                    "{name}( ) measures a Solaris STREAMS message (mblk_t); Linux has no STREAMS"
                ),
                span,
            ));
        };
        if let Some(arg) = typed.first() {
            if let Some(lowered) = super::locks::lower(name, subr, arg, span)? {
                return Ok(lowered);
            }
        }
        if subr == Subr::Strtok {
            self.prog.strtok = true;
        }
        if subr == Subr::InetNtoa6 {
            inet_ntoa6_args(name, args, &mut typed)?;
        }
        if let Some(i) = constant_size_arg(subr) {
            // copyin's and copyinto's sizes may be computed: code generation checks them
            // at run time.
            if subr == Subr::Alloca || matches!(typed[i].kind, ExprKind::Int(_)) {
                let size =
                    constant_size(name, &typed[i], subr == Subr::Alloca, self.opts.scratchsize)?;
                if let (Subr::Alloca, Some(ctx)) = (subr, self.ctx.as_mut()) {
                    ctx.alloca_bytes += size.next_multiple_of(8);
                    // Even `alloca(0)` points into the arena.
                    self.prog.alloca_arena = self.prog.alloca_arena.max(8);
                }
            }
        }
        let ty = match subr {
            Subr::Strlen => types::builtin_typedef("size_t").expect("size_t"),
            Subr::Index | Subr::Rindex | Subr::Rand | Subr::Speculation | Subr::Progenyof => {
                types::INT
            }
            Subr::Strtoll => types::INT64,
            Subr::Copyin | Subr::Alloca => Type::Ptr(Box::new(Type::Void)),
            Subr::Copyinto | Subr::Bcopy => Type::Void,
            Subr::Htons | Subr::Ntohs => types::sized_int(2, false),
            Subr::Htonl | Subr::Ntohl | Subr::Getmajor | Subr::Getminor => types::UINT32,
            Subr::Htonll | Subr::Ntohll => types::UINT64,
            _ => Type::String,
        };
        Ok(mk(ExprKind::Call(subr, typed), ty, span))
    }
}

/// `inet_ntoa6(addr[, strict])`: `addr` points to a `struct in6_addr` (or is a `void *`, or
/// the null pointer, which faults at run time), and `strict` is an integer constant, left
/// as an [`ExprKind::Int`] for code generation.
fn inet_ntoa6_args(name: &str, args: &[ast::Expr], typed: &mut [Expr]) -> Result<()> {
    let in6 = match &typed[0].ty {
        Type::Ptr(inner) => match &**inner {
            Type::Void => true,
            Type::Struct(r) => r.name == "struct in6_addr" || r.name == "in6_addr_t",
            _ => false,
        },
        _ => super::consts::is_null(&args[0]),
    };
    if !in6 {
        return Err(prototype_arg(
            name,
            1,
            "struct in6_addr *",
            &typed[0].ty,
            args[0].span,
        ));
    }
    if let Some(strict) = args.get(1) {
        let Some(n) = super::consts::constant(strict) else {
            return Err(CompileError::new(
                "D_PROTO_ARG",
                format!("{name}( ) argument #2 must be an integer constant"),
                strict.span,
            ));
        };
        typed[1] = mk(ExprKind::Int(n as u64), types::INT, strict.span);
    }
    Ok(())
}

/// Whether `ty` is a pointer to `char`, which DTrace takes for a string.
pub(crate) fn is_char_pointer(ty: &Type) -> bool {
    matches!(ty, Type::Ptr(e) if e.is_char())
}

/// The size argument of `subr`, if it has one: `alloca`'s must be a constant, a constant
/// one of `copyin` or `copyinto` is checked here.
fn constant_size_arg(subr: Subr) -> Option<usize> {
    match subr {
        Subr::Copyin | Subr::Copyinto => Some(1),
        Subr::Alloca => Some(0),
        _ => None,
    }
}

/// A size argument of `copyin`, `copyinto` and `alloca`: a constant from 1 (0 for
/// `alloca`, which then gives where the next allocation goes) to `scratchsize`, and at most
/// [`COPYIN_MAX`].
fn constant_size(name: &str, arg: &Expr, alloca: bool, scratchsize: u32) -> Result<u32> {
    match arg.kind {
        ExprKind::Int(n) if n > scratchsize as u64 => Err(CompileError::new(
            "D_ALLOCA_SIZE",
            format!("alloca({n}) size larger than scratchsize {scratchsize}"),
            arg.span,
        )),
        ExprKind::Int(0) if alloca => Ok(0),
        ExprKind::Int(n) if (1..=COPYIN_MAX as u64).contains(&n) => Ok(n as u32),
        ExprKind::Int(n) => Err(CompileError::new(
            "D_PROTO_ARG",
            format!(
                "{name}( ) size {} is out of range: 1 to {COPYIN_MAX} bytes",
                n as i64
            ),
            arg.span,
        )),
        _ => Err(super::expr::unsupported(
            &format!("{name}( ) with a size that is not a constant"),
            arg.span,
        )),
    }
}

//! The kernel lock subroutines, with the meanings Oracle's Linux DTrace gives them on
//! Linux's `struct mutex` and `rwlock_t`: `mutex_owned` (the current task holds it),
//! `mutex_owner` (the holding task, or NULL), `mutex_type_adaptive` (always 1: a Linux
//! mutex spins while its owner runs, then sleeps), `mutex_type_spin` (always 0),
//! `rw_read_held` (the reader count bits of the lock word, non-zero when readers hold it),
//! `rw_write_held` (the writer-locked byte) and `rw_iswriter` (the writer bits, a waiting
//! writer's included).
//!
//! Each is lowered here to a load of the lock word, located in the kernel's BTF
//! (`struct mutex`'s `owner`, `rwlock_t`'s `raw_lock.cnts`), and arithmetic on it, so code
//! generation has nothing of its own to do. A kernel whose locks are built otherwise
//! (PREEMPT_RT's) is told so in words.

use dtrace_frontend::{CompileError, Result, Span};

use super::expr::{int, mk};
use crate::ir::{ArithOp, Builtin, CmpOp, Comparison, Expr, ExprKind, Place, PlaceBase, Subr};
use crate::types::{self, kernel, Type};

/// The low bits of `struct mutex`'s owner word that are flags, not the task pointer.
const MUTEX_FLAGS: u64 = 0x07;
/// `rwlock_t`'s lock word: the writer-locked byte, and with the waiting-writer bit.
const QW_LOCKED: u64 = 0xff;
const QW_WMASK: u64 = 0x1ff;

/// The call of lock subroutine `subr` on `arg` (its checked argument), lowered; `None`
/// for any other subroutine.
pub(crate) fn lower(name: &str, subr: Subr, arg: &Expr, span: Span) -> Result<Option<Expr>> {
    let owner = || lock_word(name, arg, "mutex", &["owner"], types::UINT64, span);
    let cnts = || {
        lock_word(
            name,
            arg,
            "rwlock_t",
            &["raw_lock", "cnts"],
            types::UINT32,
            span,
        )
    };
    let masked = |word: Expr, mask: u64, ty: Type| {
        arith(ArithOp::And, word, int(mask, types::UINT64, span), ty, span)
    };
    Ok(Some(match subr {
        Subr::MutexOwned => {
            let task = masked(owner()?, !MUTEX_FLAGS, types::UINT64);
            let current = mk(ExprKind::Builtin(Builtin::Curthread), types::UINT64, span);
            mk(
                ExprKind::Compare {
                    op: CmpOp::Eq,
                    how: Comparison::Unsigned,
                    lhs: Box::new(task),
                    rhs: Box::new(current),
                },
                types::INT,
                span,
            )
        }
        Subr::MutexOwner => {
            let task = masked(owner()?, !MUTEX_FLAGS, types::UINT64);
            let ty = kernel::vmlinux()
                .and_then(|btf| kernel::named(btf, kernel::Tag::Struct, "task_struct"))
                .map_or(Type::Ptr(Box::new(Type::Void)), |t| Type::Ptr(Box::new(t)));
            Expr { ty, ..task }
        }
        Subr::MutexTypeAdaptive | Subr::MutexTypeSpin => {
            let answer = int(
                u64::from(subr == Subr::MutexTypeAdaptive),
                types::UINT64,
                span,
            );
            mk(
                ExprKind::Comma(Box::new(arg.clone()), Box::new(answer)),
                types::INT,
                span,
            )
        }
        Subr::RwReadHeld => masked(cnts()?, !QW_WMASK, types::INT),
        Subr::RwWriteHeld => masked(cnts()?, QW_LOCKED, types::INT),
        Subr::RwIswriter => masked(cnts()?, QW_WMASK, types::INT),
        _ => return Ok(None),
    }))
}

/// The lock word of the kernel type `record` at the address `arg`: the member reached by
/// `path` from it, read as `ty`.
fn lock_word(
    name: &str,
    arg: &Expr,
    record: &str,
    path: &[&str],
    ty: Type,
    span: Span,
) -> Result<Expr> {
    let unknown = || {
        CompileError::new(
            "D_UNSUPPORTED",
            format!(
                "{name}( ) cannot read this kernel's {record}: its BTF has no {} member (a PREEMPT_RT kernel's locks are built otherwise)",
                path.join(".")
            ),
            span,
        )
    };
    let btf = kernel::vmlinux().ok_or_else(unknown)?;
    let tag = if record.ends_with("_t") {
        kernel::Tag::Typedef
    } else {
        kernel::Tag::Struct
    };
    let mut at = kernel::named(btf, tag, record).ok_or_else(unknown)?;
    let mut offset = 0u64;
    for member in path {
        let Type::Struct(r) = &at else {
            return Err(unknown());
        };
        let m = kernel::member(btf, r, member).ok_or_else(unknown)?;
        offset += u64::from(m.offset);
        at = m.ty;
    }
    let place = Place {
        offset,
        ..Place::whole(PlaceBase::Kernel(Box::new(arg.clone())), ty.clone())
    };
    Ok(mk(ExprKind::Load(Box::new(place)), ty, span))
}

fn arith(op: ArithOp, lhs: Expr, rhs: Expr, ty: Type, span: Span) -> Expr {
    mk(
        ExprKind::Arith {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        },
        ty,
        span,
    )
}

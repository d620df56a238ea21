//! What string keys can hold: the bound of a string value (the most bytes, NUL included,
//! it can take: `execname` the kernel's 16, a probe name the longest of the clause's
//! probes, a literal its length, `copyinstr(p, n)` n, `strjoin` the sum, `strsize`
//! otherwise), and whether it is a name of the probe, noted for each key position of an
//! aggregation or associative array over all its uses ([`ir::KeyUses`]), so that code
//! generation sizes the key's slot to what it can hold.
//!
//! Names of user-level probes are left at `strsize`: their clauses are compiled again when
//! processes start, with the same maps, for probes whose names are not known yet.

use super::Cook;
use crate::ir::{self, Builtin, Expr, ExprKind, KeyUses, ProbeNames, Subr};
use crate::probe::{ProbeContext, ProbeSite};

/// DTrace's tuple registers (`DIF_DTR_NREGS`), the default of the `tregs` option.
pub const TUPLE_REGS: u32 = 8;

/// `execname`: the kernel's `comm`, 16 bytes with its NUL.
const COMM_SIZE: u32 = 16;

/// Whose keys a use names.
pub(crate) enum KeyOwner {
    Aggregation(ir::AggId),
    Assoc(ir::VarId),
}

impl Cook<'_> {
    /// Whether a key tuple of `len` elements fits the tuple registers (`tregs`). DTrace
    /// refuses an element whose index (from 0) is past their number, so it takes one more.
    pub(crate) fn check_tuple_len(&self, len: usize) -> dtrace_frontend::Result<()> {
        if len > self.opts.tuple_regs as usize + 1 {
            return Err(dtrace_frontend::CompileError::unplaced(
                "",
                "Insufficient tuple registers to generate code",
            ));
        }
        Ok(())
    }

    /// Note what the key tuple `keys` of `owner` stores.
    pub(crate) fn note_keys(&mut self, owner: KeyOwner, keys: &[Expr]) {
        let strsize = self.strsize();
        let site = self.ctx.as_ref().map(|c| &c.site);
        let noted: Vec<Option<(u32, Option<NameUse>)>> = keys
            .iter()
            .map(|k| {
                k.ty.is_string()
                    .then(|| (bound(k, site, strsize), site.and_then(|s| name_use(k, s))))
            })
            .collect();
        let uses = match owner {
            KeyOwner::Aggregation(id) => &mut self.prog.aggregations[id].uses,
            KeyOwner::Assoc(id) => &mut self.prog.assocs[id].uses,
        };
        if uses.is_empty() {
            *uses = noted
                .iter()
                .map(|n| KeyUses {
                    bound: 0,
                    names: n.as_ref().map(|_| ProbeNames::default()),
                })
                .collect();
        }
        for (slot, n) in uses.iter_mut().zip(noted) {
            let Some((bound, name)) = n else { continue };
            slot.bound = slot.bound.max(bound);
            match (name, &mut slot.names) {
                (Some(NameUse::Fixed(text)), Some(names)) => {
                    names.fixed.insert(text);
                }
                (Some(NameUse::BySyscall(calls)), Some(names)) => {
                    names.by_nr.extend(calls);
                }
                _ => slot.names = None,
            }
        }
    }
}

/// A probe name a key stores.
enum NameUse {
    /// Known when compiling.
    Fixed(String),
    /// A group program's `probefunc`: the system call's name, by its number.
    BySyscall(Vec<(u32, String)>),
}

/// The probe name `e` is, in a clause on `site` (not a user-level probe).
fn name_use(e: &Expr, site: &ProbeSite) -> Option<NameUse> {
    let ExprKind::Builtin(b) = e.kind else {
        return None;
    };
    if matches!(site.context, ProbeContext::Uprobe(_)) {
        return None;
    }
    Some(NameUse::Fixed(match b {
        Builtin::Probefunc => match &site.context {
            ProbeContext::SyscallGroup(g) => {
                let calls = g.calls.iter().map(|(nr, _, name)| (*nr, name.clone()));
                return Some(NameUse::BySyscall(calls.collect()));
            }
            _ => site.function.clone(),
        },
        Builtin::Probeprov => site.provider.clone(),
        Builtin::Probemod => site.module.clone(),
        Builtin::Probename => site.name.clone(),
        _ => return None,
    }))
}

/// The most bytes, NUL included, the string `e` can take in a clause on `site` (at most
/// `strsize`).
fn bound(e: &Expr, site: Option<&ProbeSite>, strsize: u32) -> u32 {
    let text = |s: &str| s.len() as u32 + 1;
    let b = match &e.kind {
        ExprKind::Str(bytes) => bytes.len() as u32 + 1,
        ExprKind::Builtin(Builtin::Execname) => COMM_SIZE,
        ExprKind::Builtin(_) => match site.and_then(|s| name_use(e, s)) {
            Some(NameUse::Fixed(name)) => text(&name),
            Some(NameUse::BySyscall(calls)) => {
                calls.iter().map(|(_, n)| text(n)).max().unwrap_or(1)
            }
            None => strsize,
        },
        ExprKind::Cond {
            then, otherwise, ..
        } => bound(then, site, strsize).max(bound(otherwise, site, strsize)),
        ExprKind::Comma(_, value) => bound(value, site, strsize),
        ExprKind::Call(Subr::Strjoin, args) => args
            .iter()
            .map(|a| bound(a, site, strsize))
            .sum::<u32>()
            .saturating_sub(1),
        ExprKind::Call(Subr::Copyinstr, args) => match args.get(1).and_then(constant) {
            Some(n) => n.clamp(1, u64::from(strsize)) as u32,
            None => strsize,
        },
        _ => strsize,
    };
    b.clamp(1, strsize)
}

/// The value of a constant integer expression.
fn constant(e: &Expr) -> Option<u64> {
    match &e.kind {
        ExprKind::Int(v) => Some(*v),
        ExprKind::Convert(inner) => constant(inner),
        _ => None,
    }
}

//! `entry->`: what a return probe sees of its function's entry (our extension of D).
//!
//! In the return probe of a `pid` function, of a system call or of a kernel function (`fbt`,
//! by a kretprobe or fexit), `entry->arg0`..`arg9`,
//! `entry->args[N]` (typed as the entry probe's `args[N]`), `entry->timestamp` and
//! `entry->vtimestamp` are the values they had when the function was entered. The entry
//! probes of such clauses ([`Input::entry_sites`](super::Input)) get a hidden clause that
//! saves them ([`ir::Stmt::SaveEntry`]) keyed by the thread and the stack pointer at entry,
//! which the return finds again (its stack pointer less the return address), or, for fentry
//! and fexit, the address of their context on the BPF trampoline's frame, which both
//! programs of one call share; so recursion and threads each find their own entry. A clause reading `entry->` looks the saved state
//! up before its predicate ([`ir::Body::entry`]); when the entry was not seen (the function
//! was running when tracing started), the clause is skipped.

use dtrace_frontend::ast;
use dtrace_frontend::{CompileError, Result, Span};

use super::expr::{int, mk};
use super::Cook;
use crate::builtins::Variable;
use crate::ir::{self, ArithOp, Builtin, EntryField, Expr, ExprKind};
use crate::probe::{ProbeContext, ProbeSite, UprobeKind};
use crate::types;

impl Cook<'_> {
    /// Whether `e` is `entry->NAME` (no variable, inline or translator input is named
    /// `entry`).
    pub(crate) fn is_entry_ref(&self, e: &ast::Expr) -> bool {
        e.is_entry_member()
            && self.global(ast::ENTRY).is_none()
            && self.bound_input(ast::ENTRY, e.span).is_none()
            && !self.scope.inlines.contains_key(ast::ENTRY)
    }

    /// `entry->name`.
    pub(crate) fn entry_member(&mut self, name: &str, span: Span) -> Result<Expr> {
        let field = match name {
            "timestamp" => EntryField::Timestamp,
            "vtimestamp" => EntryField::Vtimestamp,
            _ => match name.strip_prefix("arg").and_then(|n| n.parse::<u8>().ok()) {
                Some(n) if n < EntryField::ARGS && name.len() == 4 => EntryField::Arg(n),
                _ if name == "args" => {
                    return Err(CompileError::new(
                        "D_ENTRY_MEMBER",
                        "entry->args must be indexed: entry->args[N]",
                        span,
                    ))
                }
                _ => {
                    return Err(CompileError::new(
                        "D_ENTRY_MEMBER",
                        format!(
                            "entry has no member named {name} (entry->arg0 .. entry->arg9, entry->args[N], entry->timestamp, entry->vtimestamp)"
                        ),
                        span,
                    ))
                }
            },
        };
        self.entry_lookup(span)?;
        if field == EntryField::Vtimestamp {
            self.entry_vtimestamp = true;
        }
        let ty = match field {
            EntryField::Arg(_) => types::INT64,
            _ => types::UINT64,
        };
        Ok(mk(ExprKind::Entry(field), ty, span))
    }

    /// `entry->args[index]`: the entry's argument typed as its probe's `args[]`.
    pub(crate) fn entry_args(&mut self, index: &[ast::Expr], span: Span) -> Result<Expr> {
        self.entry_lookup(span)?;
        let site = self.site().clone();
        let entry = self
            .entry_sites
            .iter()
            .find(|e| {
                (e.provider.as_str(), e.module.as_str(), e.function.as_str())
                    == (&site.provider, &site.module, &site.function)
            })
            .cloned();
        if let ProbeContext::SyscallGroup(g) = &site.context {
            return Err(CompileError::new(
                "D_ARGS_TYPE",
                format!(
                    "entry->args[ ] needs a specific system call; use entry->argN: this clause is enabled on more than {} system calls ({} of them, one program for all), and args[ ] is typed per call",
                    super::SYSCALL_GROUP_MIN,
                    g.calls.len()
                ),
                span,
            ));
        }
        let Some(entry) = entry else {
            // No entry probe to type it by (a probe found while tracing): `entry->argN`.
            let n = match index {
                [i] => {
                    super::consts::constant(i).filter(|n| (0..EntryField::ARGS as i64).contains(n))
                }
                _ => None,
            };
            let n = n.ok_or_else(|| {
                CompileError::new(
                    "D_ARGS_IDX",
                    format!(
                        "entry->args[ ] of {} takes an index from 0 to 9",
                        site.full_name()
                    ),
                    span,
                )
            })?;
            return Ok(mk(
                ExprKind::Entry(EntryField::Arg(n as u8)),
                types::INT64,
                span,
            ));
        };
        // Typed in the entry probe's context, then read from what the entry saved.
        let ctx = self.ctx.as_mut().expect("inside a clause");
        let own = std::mem::replace(&mut ctx.site, entry);
        let typed = self.probe_args(index, span);
        if let Some(ctx) = self.ctx.as_mut() {
            ctx.site = own;
        }
        let typed = typed?;
        if !typed.ty.is_scalar() {
            return Err(CompileError::new(
                "D_ARGS_TYPE",
                format!(
                    "entry->args[ ] of type {} is not saved at entry; only integers and pointers are",
                    typed.ty
                ),
                span,
            ));
        }
        Ok(saved(typed))
    }

    /// Note that the clause reads its entry's state: check that it runs in a return probe
    /// and give its body the stack pointer its entry had.
    fn entry_lookup(&mut self, span: Span) -> Result<()> {
        let site = self.site().clone();
        if site.provider.is_empty() {
            // A clause matching no probe (-Z) is typed for its variables only.
            return Ok(());
        }
        let frame = match &site.context {
            ProbeContext::Uprobe(u) if u.kind == UprobeKind::Return => {
                let sp = self.stack_pointer(span);
                let size = int(8, types::UINT64, span);
                mk(
                    ExprKind::Arith {
                        op: ArithOp::Sub,
                        lhs: Box::new(sp),
                        rhs: Box::new(size),
                    },
                    types::UINT64,
                    span,
                )
            }
            ProbeContext::Tracepoint(l) if l.syscall_return => int(0, types::UINT64, span),
            ProbeContext::SyscallGroup(g) if g.ret => int(0, types::UINT64, span),
            ProbeContext::Function { ret: true, .. } => self.trampoline_frame(span),
            _ => {
                return Err(CompileError::new(
                    "D_ENTRY_PROBE",
                    format!(
                        "entry-> may only be used in the return probe of a function or a system call, not in {}",
                        site.full_name()
                    ),
                    span,
                ))
            }
        };
        if let Some(ctx) = self.ctx.as_mut() {
            ctx.entry = Some(frame);
        }
        Ok(())
    }

    /// The stack pointer of the probe's registers (a uprobe's or a kprobe's).
    fn stack_pointer(&self, span: Span) -> Expr {
        mk(
            ExprKind::Builtin(Builtin::StackPointer),
            types::UINT64,
            span,
        )
    }

    /// The address of an fentry/fexit program's context, on the trampoline frame its
    /// call's fentry and fexit programs share.
    fn trampoline_frame(&self, span: Span) -> Expr {
        mk(
            ExprKind::Builtin(Builtin::TrampolineFrame),
            types::UINT64,
            span,
        )
    }

    /// The hidden clause saving the entry state on `sites` (the entry probes of the
    /// clauses reading `entry->`), typed in each context they run in.
    pub(crate) fn entry_savers(&mut self, sites: &[ProbeSite]) -> Result<()> {
        let statements = vec![0; sites.len()];
        let mut bodies = Vec::new();
        for (sites, statements, context) in super::contexts(sites, &statements) {
            let span = Span::default();
            self.ctx = Some(super::Ctx::new(context.clone()));
            let frame = match &context.context {
                ProbeContext::Uprobe(_) => self.stack_pointer(span),
                ProbeContext::Function { .. } => self.trampoline_frame(span),
                _ => int(0, types::UINT64, span),
            };
            let mut values = vec![(
                EntryField::Timestamp,
                self.builtin(Variable::Value(Builtin::Timestamp), span)?,
            )];
            if self.entry_vtimestamp {
                values.push((
                    EntryField::Vtimestamp,
                    self.builtin(Variable::Value(Builtin::Vtimestamp), span)?,
                ));
            }
            for n in 0..EntryField::ARGS {
                values.push((EntryField::Arg(n), self.builtin(Variable::Arg(n), span)?));
            }
            self.ctx = None;
            bodies.push(ir::Body {
                sites,
                statements,
                context,
                filter: None,
                predicate: None,
                stmts: vec![ir::Stmt::SaveEntry { frame, values }],
                records: false,
                entry: None,
            });
        }
        self.prog.clauses.push(ir::Clause { bodies });
        Ok(())
    }
}

/// `args[N]` typed in the entry's context (reading `ProbeArg(N)`) as the saved `argN`.
fn saved(e: Expr) -> Expr {
    let kind = match e.kind {
        ExprKind::ProbeArg(n) => ExprKind::Entry(EntryField::Arg(n)),
        ExprKind::Convert(inner) => ExprKind::Convert(Box::new(saved(*inner))),
        other => other,
    };
    Expr { kind, ..e }
}

//! The typing pass: D's "cooking". It walks the program in order — declarations, inlines,
//! translators and clauses — resolves every name and type, raises every semantic error with
//! DTrace's tag and message, and produces the typed [`ir::Program`] code generation
//! consumes.
//!
//! A clause is typed once per context it runs in ([`ir::Body`]): each probe it is enabled
//! on, except that system call probes of one direction (entry or return), when a clause is
//! enabled on more than [`SYSCALL_GROUP_MIN`] of them, share one group context (one raw
//! `sys_enter`/`sys_exit` program, [`ProbeContext::SyscallGroup`]). The context decides what
//! `args[]` and `argN` are; everything else is typed the same in each. As in DTrace,
//! variables take the type of their declaration or first assignment in program order, and
//! aggregations the function and key signature of their first use.
//!
//! The submodules each own a part of the language: [`scope`] variables, aggregations,
//! inlines and enumerators; [`decl`] declarations and type names; [`expr`] operators,
//! constants and conversions; [`place`] memory (members, indexing, dereference) and
//! `sizeof`/`offsetof`/`stringof`; [`call`] subroutines; [`action`] statements, actions and
//! aggregations; [`context`] built-in variables and probe arguments; [`xlate`] translators;
//! [`consts`] constant expressions.

mod action;
mod aggfunc;
mod binary;
mod call;
mod clause_flags;
mod consts;
mod context;
mod decl;
mod entry;
mod expr;
mod keys;
mod layout;
mod locks;
mod place;
mod scope;
mod user_scope;
mod xlate;

use std::collections::HashSet;

use dtrace_frontend::ast::{self, Item};
use dtrace_frontend::{CompileError, Result, Span};

use crate::format::FormatCheck;
use crate::ir::{self, ExprKind};
use crate::macros::MacroArgs;
use crate::probe::{ProbeContext, ProbeSite, SyscallGroup};
use crate::types::translators::Provided;

pub use aggfunc::MAX_SLOTS;
pub use binary::BinaryDefs;
pub use call::COPYIN_MAX;
pub use consts::constant;

/// Options that change typing.
#[derive(Clone, Debug)]
pub struct Options {
    /// The size of a string's buffer: the `strsize` option's characters and a NUL.
    pub strsize: u32,
    /// The most bytes one `alloca` or `copyin` takes (`scratchsize`).
    pub scratchsize: u32,
    /// Frames of `stack()`, `ustack()` and `jstack()` without an argument
    /// (`stackframes`, `ustackframes`, `jstackframes`).
    pub stack_frames: u32,
    pub ustack_frames: u32,
    pub jstack_frames: u32,
    /// The most frames a stack records (`maxframes`): more are silently reduced to it.
    pub max_frames: u32,
    /// The tuple registers (`tregs`): a key tuple holds at most one more element.
    pub tuple_registers: u32,
    /// The D version the program is written to (`version`, [`builtins::d_version`]):
    /// identifiers added later are not predefined.
    pub version: u32,
}

/// DTrace's tuple registers when `tregs` is not set.
pub const TUPLE_REGISTERS: u32 = 8;

impl Default for Options {
    fn default() -> Self {
        Options {
            strsize: 257,
            scratchsize: 256,
            stack_frames: dtrace_abi::datum::STACK_FRAMES,
            ustack_frames: dtrace_abi::datum::USTACK_FRAMES,
            jstack_frames: dtrace_abi::datum::JSTACK_FRAMES,
            max_frames: dtrace_abi::datum::MAX_STACK_FRAMES,
            tuple_registers: TUPLE_REGISTERS,
            version: crate::builtins::CURRENT_VERSION,
        }
    }
}

/// Everything the typing pass needs.
pub struct Input<'a> {
    pub program: &'a ast::Program,
    /// For each clause of `program`, in order, the probes it is enabled on.
    pub probes: &'a [Vec<ProbeSite>],
    /// For each clause, for each of its probes: DTrace's statement number (`dt_clause_N`:
    /// the clause with the probe description that matched, counted in program order).
    pub statements: &'a [Vec<u32>],
    pub options: Options,
    pub macros: &'a MacroArgs,
    pub formats: &'a dyn FormatCheck,
    /// Translator definitions (the D library's and the program's), in definition order.
    pub translators: &'a [Provided],
    /// The entry probes of the return probes whose clauses read `entry->`: a hidden clause
    /// saves their state there (see [`entry`]).
    pub entry_sites: &'a [ProbeSite],
    /// The D definitions the traced binaries carry, each for the clause bodies on its
    /// probes (see [`binary`]).
    pub binaries: &'a [BinaryDefs],
}

/// A clause enabled on more than this many system calls in one direction is typed (and
/// runs) in the direction's [`ProbeContext::SyscallGroup`]; fewer keep a context per call,
/// which gives them typed `args[]`.
pub const SYSCALL_GROUP_MIN: usize = 8;

/// Type `input.program`.
pub fn cook(input: &Input<'_>) -> Result<ir::Program> {
    let mut c = Cook::new(input);
    c.load_binaries(input.binaries)?;
    let mut clause = 0;
    for item in &input.program.items {
        match item {
            Item::Decl(d) => c.declare(d)?,
            Item::Inline(i) => c.define_inline(i)?,
            Item::Translator(t) => c.check_translator(t)?,
            Item::Clause(cl) => {
                let sites = input.probes.get(clause).map_or(&[][..], Vec::as_slice);
                let statements = input.statements.get(clause).map_or(&[][..], Vec::as_slice);
                c.clause(cl, sites, statements)?;
                clause += 1;
            }
            Item::Pragma(_) | Item::Provider(_) => {}
        }
    }
    if !input.entry_sites.is_empty() {
        c.entry_savers(input.entry_sites)?;
    }
    Ok(c.prog)
}

/// The typing pass's state: the program typed so far and the names it defines.
pub(crate) struct Cook<'a> {
    opts: Options,
    macros: &'a MacroArgs,
    formats: &'a dyn FormatCheck,
    prog: ir::Program,
    scope: scope::Scope,
    defs: decl::Defs,
    xlators: xlate::Translators,
    /// The context of the body being typed.
    ctx: Option<Ctx>,
    /// Next [`ir::BindId`].
    next_bind: usize,
    /// The context of what is typed outside clauses (translators' members): no probe.
    nowhere: ProbeSite,
    /// [`Input::entry_sites`].
    entry_sites: &'a [ProbeSite],
    /// Whether a clause reads `entry->vtimestamp`: entries then save it.
    entry_vtimestamp: bool,
    /// The traced binaries' own definitions.
    layers: binary::Layers,
    /// The variables assigned a pointer into the traced process (`place::var_key`): as
    /// DTrace's identifiers, they hold user addresses from then on.
    user_vars: std::collections::HashSet<(u8, ir::VarId)>,
}

/// What a clause body is typed for.
struct Ctx {
    /// The probe (or a group program's stand-in) whose context the body runs in.
    site: ProbeSite,
    /// Nesting of `InBase` (a `proc`/`sched` probe's definition being typed in its base
    /// probe's context).
    in_base: usize,
    /// The actions typed so far, for DTrace's ordering rules.
    flags: clause_flags::ClauseFlags,
    /// Bytes the body's `alloca()` calls take, each rounded up to 8.
    alloca_bytes: u32,
    /// The stack pointer at the function's entry, once the body reads `entry->`.
    entry: Option<ir::Expr>,
    /// For a clause whose descriptions match no probe (-Z): its first description, as
    /// `provider:module:function:name`; such a body has no probe to type `args[]` by.
    unmatched: Option<String>,
}

impl Ctx {
    fn new(site: ProbeSite) -> Ctx {
        Ctx {
            site,
            in_base: 0,
            flags: Default::default(),
            alloca_bytes: 0,
            entry: None,
            unmatched: None,
        }
    }
}

impl<'a> Cook<'a> {
    fn new(input: &Input<'a>) -> Cook<'a> {
        Cook {
            opts: input.options.clone(),
            macros: input.macros,
            formats: input.formats,
            prog: ir::Program::default(),
            scope: scope::Scope::default(),
            defs: decl::Defs::default(),
            xlators: xlate::Translators::new(input.translators),
            ctx: None,
            next_bind: 0,
            nowhere: nowhere(),
            entry_sites: input.entry_sites,
            entry_vtimestamp: false,
            layers: Default::default(),
            user_vars: Default::default(),
        }
    }

    /// What the predefined identifier `name` is, in the program's D version.
    fn predefined(&self, name: &str) -> Option<crate::builtins::Kind> {
        crate::builtins::lookup_at(name, self.opts.version)
    }

    fn strsize(&self) -> u32 {
        self.opts.strsize
    }

    /// The probe the body being typed runs in (its base probe inside a `proc`/`sched`
    /// definition).
    fn site(&self) -> &ProbeSite {
        self.ctx.as_ref().map_or(&self.nowhere, |c| &c.site)
    }

    /// The context the body being typed reads: the base probe's inside a `proc`/`sched`
    /// probe's definition.
    fn context(&self) -> &ProbeContext {
        let Some(ctx) = self.ctx.as_ref() else {
            return &self.nowhere.context;
        };
        match (&ctx.site.context, ctx.in_base) {
            (ProbeContext::Mapped(m), n) if n > 0 => &m.base,
            (c, _) => c,
        }
    }

    /// Type one clause for each context it runs in (`statements[i]` is `sites[i]`'s
    /// statement number).
    fn clause(
        &mut self,
        clause: &ast::Clause,
        sites: &[ProbeSite],
        statements: &[u32],
    ) -> Result<()> {
        let mut typed = Vec::new();
        for (sites, statements, context) in contexts(sites, statements) {
            typed.push(self.body(clause, sites, statements, context, None)?);
        }
        if sites.is_empty() {
            // A clause matching nothing (-Z) is still typed, so the variables and
            // aggregations it defines exist for the rest of the program.
            let described = clause.probes.first().map(|d| four_fields(&d.text));
            self.body(clause, Vec::new(), Vec::new(), nowhere(), described)?;
        }
        self.prog.clauses.push(ir::Clause { bodies: typed });
        Ok(())
    }

    /// Type `clause` in the context of `context`, for `sites`.
    fn body(
        &mut self,
        clause: &ast::Clause,
        sites: Vec<ProbeSite>,
        statements: Vec<u32>,
        context: ProbeSite,
        unmatched: Option<String>,
    ) -> Result<ir::Body> {
        self.ctx = Some(Ctx {
            unmatched,
            ..Ctx::new(context.clone())
        });
        let result = self.with_binary(context.id, |c| c.body_in_context(clause));
        let ctx = self.ctx.take();
        if let Some(ctx) = &ctx {
            self.prog.alloca_arena = self.prog.alloca_arena.max(ctx.alloca_bytes);
        }
        let entry = ctx.and_then(|c| c.entry);
        let (filter, predicate, stmts) = result?;
        let records = action::clause_records(&stmts);
        Ok(ir::Body {
            sites,
            statements,
            context,
            filter,
            predicate,
            stmts,
            records,
            entry,
        })
    }

    #[allow(clippy::type_complexity)]
    fn body_in_context(
        &mut self,
        clause: &ast::Clause,
    ) -> Result<(Option<ir::Expr>, Option<ir::Expr>, Vec<ir::Stmt>)> {
        let filter = self.mapped_filter(clause.span)?;
        // As DTrace does, the actions are typed before the predicate, so that a variable
        // the actions assign may be read by the predicate; when the actions name what
        // only the predicate defines (a `this->` variable, say), the predicate goes first.
        let flags = self.ctx.as_ref().map(|c| c.flags);
        let (predicate, stmts) = match self.statements(clause) {
            Ok(stmts) => (self.predicate(clause)?, stmts),
            Err(e)
                if clause.predicate.is_some()
                    && matches!(e.tag, "D_IDENT_UNDEF" | "D_VAR_UNDEF") =>
            {
                if let (Some(ctx), Some(flags)) = (self.ctx.as_mut(), flags) {
                    ctx.flags = flags;
                }
                let predicate = self.predicate(clause)?;
                (predicate, self.statements(clause)?)
            }
            Err(e) => return Err(e),
        };
        Ok((filter, predicate, stmts))
    }

    /// The typed predicate of `clause`, if it has one.
    fn predicate(&mut self, clause: &ast::Clause) -> Result<Option<ir::Expr>> {
        let Some(p) = &clause.predicate else {
            return Ok(None);
        };
        let v = self.expr(p).map_err(|e| match clause.after_predicate {
            Some(after) => at_token_after(e, p, after),
            None => e,
        })?;
        let array = matches!(&v.kind, ExprKind::AddrOf(place) if matches!(place.ty, crate::types::Type::Array(..)));
        if !v.ty.is_scalar() || array {
            // Where DTrace checks it: at the clause's end.
            let end = dtrace_frontend::Span {
                start: clause.span.end.saturating_sub(1),
                ..clause.span
            };
            return Err(CompileError::new(
                "D_PRED_SCALAR",
                "predicate result must be of scalar type",
                end,
            ));
        }
        Ok(Some(v))
    }

    /// The typed statements of `clause`'s body.
    fn statements(&mut self, clause: &ast::Clause) -> Result<Vec<ir::Stmt>> {
        clause.body.iter().flatten().map(|s| self.stmt(s)).collect()
    }

    /// A fresh [`ir::BindId`].
    fn bind_id(&mut self) -> ir::BindId {
        self.next_bind += 1;
        self.next_bind - 1
    }
}

/// The contexts a clause enabled on `sites` is typed in (`statements[i]` is `sites[i]`'s
/// statement number): each with its probes, their statement numbers and the context.
fn contexts(sites: &[ProbeSite], statements: &[u32]) -> Vec<(Vec<ProbeSite>, Vec<u32>, ProbeSite)> {
    let statement = |i: usize| statements.get(i).copied().unwrap_or(0);
    // Indices into `sites`: those typed one by one, and each syscall group's members.
    let mut singles: Vec<usize> = Vec::new();
    let mut groups: [Vec<usize>; 2] = Default::default();
    // What is in them already (a glob's thousands of functions must not cost a scan each).
    let mut single_seen = HashSet::new();
    let mut group_seen: [HashSet<u32>; 2] = Default::default();
    for (i, site) in sites.iter().enumerate() {
        match group_direction(site) {
            Some(ret) => {
                if group_seen[ret as usize].insert(site.id) {
                    groups[ret as usize].push(i);
                }
            }
            // A probe that several of the clause's descriptions name runs the clause
            // once for each, as DTrace does.
            None => {
                if single_seen.insert((site.id, statement(i))) {
                    singles.push(i);
                }
            }
        }
    }
    let mut grouped = Vec::new();
    for (ret, members) in groups.into_iter().enumerate() {
        if members.len() > SYSCALL_GROUP_MIN {
            let member_sites: Vec<ProbeSite> = members.iter().map(|&i| sites[i].clone()).collect();
            let context = group_site(&member_sites, ret == 1);
            let stmts = members.iter().map(|&i| statement(i)).collect();
            grouped.push((member_sites, stmts, context));
        } else {
            singles.extend(members);
        }
    }
    // Single probes first, in the order the clause names them, then the groups.
    singles.sort_unstable();
    let mut all: Vec<(Vec<ProbeSite>, Vec<u32>, ProbeSite)> = singles
        .into_iter()
        .map(|i| (vec![sites[i].clone()], vec![statement(i)], sites[i].clone()))
        .collect();
    all.extend(grouped);
    all
}

/// A probe description written with fewer than four fields, as DTrace prints it: the
/// fields given are the last ones (`read:entry` is `::read:entry`).
fn four_fields(text: &str) -> String {
    let given = text.split(':').count();
    format!("{}{text}", ":".repeat(4usize.saturating_sub(given)))
}

/// The stand-in probe of what is typed where no probe is: translators' members, and
/// clauses matching no probe.
fn nowhere() -> ProbeSite {
    ProbeSite {
        id: 0,
        provider: String::new(),
        module: String::new(),
        function: String::new(),
        name: String::new(),
        context: ProbeContext::ArgArray,
    }
}

/// The direction of a system call probe that can join a group: `Some(true)` at return.
fn group_direction(site: &ProbeSite) -> Option<bool> {
    match &site.context {
        ProbeContext::Tracepoint(l) if site.provider == "syscall" => {
            l.syscall_nr.map(|_| l.syscall_return)
        }
        _ => None,
    }
}

/// The stand-in probe of a group context: one direction's system calls among `members`.
fn group_site(members: &[ProbeSite], ret: bool) -> ProbeSite {
    let mut calls: Vec<(u32, u32, String)> = Vec::new();
    for site in members {
        if let ProbeContext::Tracepoint(l) = &site.context {
            let nr = l.syscall_nr.expect("grouped calls have numbers");
            if !calls.iter().any(|c| c.0 == nr) {
                calls.push((nr, site.id, site.function.clone()));
            }
        }
    }
    calls.sort();
    ProbeSite {
        id: 0,
        provider: "syscall".into(),
        module: "vmlinux".into(),
        function: String::new(),
        name: if ret { "return" } else { "entry" }.into(),
        context: ProbeContext::SyscallGroup(SyscallGroup { ret, calls }),
    }
}

/// An error of a node of `expr` that DTrace's parser makes once it has read the token
/// after the expression ([`ast::Expr::made_after`]), placed at `after`, that token (a
/// statement's `;`, the `{` after a predicate): DTrace reports it at that token's line.
/// Other errors stay where they are.
pub(crate) fn at_token_after(mut e: CompileError, expr: &ast::Expr, after: Span) -> CompileError {
    if let Some(at) = e.span.as_mut() {
        if expr.made_after().contains(at) {
            *at = after;
        }
    }
    e
}

//! D's own types and translators.
//!
//! Types: a program or library may define structs and unions (`struct psinfo { int pr_pid;
//! char pr_fname[16]; };`) and typedefs (`typedef struct psinfo psinfo_t;`). A D struct is
//! a [`Record`] whose id is [`D_RECORD_BASE`] plus its index here; its members are laid
//! out as C lays them out (LP64). D's definitions are found before the kernel's, and a
//! typedef is resolved only when used, so naming a kernel type in a library costs nothing
//! until a script needs it.
//!
//! Translators (`translator psinfo_t < struct task_struct *T > { pr_pid = T->tgid; };`)
//! come from [`crate::types::translators`]. `xlate <psinfo_t *> (e)` and
//! `xlate <psinfo_t> (e)` translate lazily, as DTrace does: `xlate <psinfo_t *> (e)->pr_pid`
//! evaluates `e` once, binds it to the translator's input name and evaluates only the
//! `pr_pid` member's expression, converted to the member's type (a `char` array member
//! takes a string). Used any other way, a translated pointer is materialized: every member
//! the translator defines is stored into a zeroed struct in scratch memory and the value
//! is its address, so `p = curpsinfo; p->pr_pid` and `sizeof (curpsinfo->pr_fname)` work.

use std::collections::HashMap;

use dtrace_ebpf::*;
use dtrace_frontend::ast::{self, DeclaratorPart, Expr, ExprKind, TypeName, TypeSpec};
use dtrace_frontend::{CompileError, Result, Span};

use super::regs::{self, VReg, SCRATCH};
use super::{Compiler, Gen, Val};
use crate::program::ProbeContext;
use crate::types::kernel;
use crate::types::translators::Provided;
use crate::types::{Record, Type, D_RECORD_BASE};

/// A struct or union defined in D.
struct DStruct {
    members: Vec<DMember>,
}

/// A member of a D struct: name, type and byte offset.
#[derive(Clone)]
pub(crate) struct DMember {
    pub name: String,
    pub ty: Type,
    pub offset: u32,
}

/// A typedef, resolved when used.
struct Typedef {
    spec: TypeSpec,
    parts: Vec<DeclaratorPart>,
    span: Span,
}

/// A translator definition, with its types once resolved.
struct Xlator {
    def: ast::Translator,
    eager: bool,
    /// Output and input types, resolved on first need.
    types: Option<(Record, Type)>,
}

/// The input of a translation in progress: the translator's input name bound to the
/// value in `reg`.
struct Binding {
    name: String,
    reg: VReg,
    ty: Type,
}

/// D's own types and the translators of one compilation.
#[derive(Default)]
pub(crate) struct Defs {
    structs: Vec<DStruct>,
    /// `(union?, tag)` -> the record.
    tags: HashMap<(bool, String), Record>,
    typedefs: HashMap<String, Typedef>,
    /// `None` until the first expression is compiled.
    translators: Option<Vec<Xlator>>,
    /// Nested translations; a translator's members see only the innermost input.
    bindings: Vec<Binding>,
    anonymous: u32,
}

/// How deep inlines may nest around an `xlate` found through them.
const MAX_INLINE_DEPTH: usize = 16;

fn struct_word(union: bool) -> &'static str {
    if union {
        "union"
    } else {
        "struct"
    }
}

/// Whether two types are the same for matching a translator's input.
fn same_type(a: &Type, b: &Type) -> bool {
    match (a, b) {
        (
            Type::Int {
                size: sa,
                signed: ga,
                ..
            },
            Type::Int {
                size: sb,
                signed: gb,
                ..
            },
        ) => sa == sb && ga == gb,
        (Type::Ptr(x), Type::Ptr(y)) => {
            matches!(**x, Type::Void) || matches!(**y, Type::Void) || same_type(x, y)
        }
        (Type::Struct(x), Type::Struct(y)) => x.id == y.id,
        (Type::Array(x, n), Type::Array(y, m)) => n == m && same_type(x, y),
        _ => a == b,
    }
}

/// Whether a value of type `operand` may be translated by a translator taking `input`.
fn input_matches(input: &Type, operand: &Type) -> bool {
    same_type(input, operand) || (input.is_integer() && operand.is_integer())
}

/// Whether a translator member of type `member` may take a value of type `value`.
fn member_accepts(member: &Type, value: &Type) -> bool {
    match member {
        Type::Int { .. } => value.is_integer(),
        Type::Ptr(_) => matches!(value, Type::Ptr(_)),
        Type::Array(elem, _) if elem.is_char() => value.is_string(),
        Type::String => value.is_string(),
        _ => false,
    }
}

impl Compiler<'_> {
    /// Define the struct or union a specifier gives with a body, if it does; returns the
    /// specifier naming it (or the specifier itself).
    pub(crate) fn define_struct(&mut self, spec: &TypeSpec, span: Span) -> Result<TypeSpec> {
        let TypeSpec::Struct {
            union,
            name,
            members: Some(members),
            qualifiers,
        } = spec
        else {
            return Ok(spec.clone());
        };
        let tag = match name {
            Some(n) => n.clone(),
            None => {
                self.vars.defs.anonymous += 1;
                format!("<anon{}>", self.vars.defs.anonymous)
            }
        };
        let key = (*union, tag.clone());
        if self.vars.defs.tags.contains_key(&key) {
            return Err(CompileError::new(
                "D_DECL_TYPERED",
                format!("type redeclared: {} {tag}", struct_word(*union)),
                span,
            ));
        }
        let mut laid = Vec::new();
        let (mut size, mut align) = (0u32, 1u32);
        for decl in members {
            let spec = self.define_struct(&decl.spec, decl.span)?;
            for d in &decl.declarators {
                if d.bitfield.is_some() {
                    return Err(CompileError::new(
                        "D_DECL_BFTYPE",
                        "bit-fields are not supported in D structs yet",
                        d.span,
                    ));
                }
                let ty = self.resolve_type(&spec, &d.parts, d.span)?;
                if matches!(ty, Type::Void | Type::Opaque(_)) || ty.size() == 0 && !ty.is_string() {
                    return Err(CompileError::new(
                        "D_DECL_INCOMPLETE",
                        format!("declaration of member {} has incomplete type {ty}", d.name),
                        d.span,
                    ));
                }
                if laid.iter().any(|m: &DMember| m.name == d.name) {
                    return Err(CompileError::new(
                        "D_DECL_MEMBER",
                        format!("member {} is already defined", d.name),
                        d.span,
                    ));
                }
                let (msize, malign) = if ty.is_string() {
                    (self.opts.strsize, 1)
                } else {
                    (ty.size() as u32, ty.align().max(1))
                };
                let offset = if *union {
                    0
                } else {
                    size.next_multiple_of(malign)
                };
                size = if *union {
                    size.max(msize)
                } else {
                    offset + msize
                };
                align = align.max(malign);
                laid.push(DMember {
                    name: d.name.clone(),
                    ty,
                    offset,
                });
            }
        }
        let index = self.vars.defs.structs.len() as u32;
        let display = match name {
            Some(n) => format!("{} {n}", struct_word(*union)),
            None => format!("{} {{...}}", struct_word(*union)),
        };
        let record = Record {
            id: D_RECORD_BASE + index,
            name: kernel::intern(&display),
            size: size.next_multiple_of(align),
        };
        self.vars.defs.structs.push(DStruct { members: laid });
        self.vars.defs.tags.insert(key, record);
        Ok(TypeSpec::Struct {
            union: *union,
            name: Some(tag),
            members: None,
            qualifiers: qualifiers.clone(),
        })
    }

    /// Record `typedef spec declarators;` (each resolved when used).
    pub(crate) fn define_typedefs(&mut self, decl: &ast::Decl) -> Result<()> {
        let spec = self.define_struct(&decl.spec, decl.span)?;
        for d in &decl.declarators {
            if self.vars.defs.typedefs.contains_key(&d.name) {
                return Err(CompileError::new(
                    "D_DECL_TYPERED",
                    format!("type redeclared: {}", d.name),
                    d.span,
                ));
            }
            self.vars.defs.typedefs.insert(
                d.name.clone(),
                Typedef {
                    spec: spec.clone(),
                    parts: d.parts.clone(),
                    span: d.span,
                },
            );
        }
        Ok(())
    }

    /// The D struct or union of this tag, if D defines one.
    pub(crate) fn d_struct(&self, union: bool, name: &str) -> Option<Type> {
        self.vars
            .defs
            .tags
            .get(&(union, name.to_string()))
            .map(|r| Type::Struct(r.clone()))
    }

    /// Whether D (the program or its library) defines typedef `name`.
    pub(crate) fn is_d_typedef(&self, name: &str) -> bool {
        self.vars.defs.typedefs.contains_key(name)
    }

    /// The type a D typedef names, if D defines `name`.
    pub(crate) fn d_typedef(&self, name: &str) -> Option<Result<Type>> {
        let t = self.vars.defs.typedefs.get(name)?;
        Some(self.resolve_type(&t.spec, &t.parts, t.span))
    }

    /// Member `name` of a D record.
    pub(crate) fn d_member(&self, record: &Record, name: &str) -> Option<DMember> {
        let s = self
            .vars
            .defs
            .structs
            .get((record.id - D_RECORD_BASE) as usize)?;
        s.members.iter().find(|m| m.name == name).cloned()
    }

    /// A member of a D or kernel record: its type and offset.
    fn record_member(&self, record: &Record, name: &str) -> Option<(Type, u32)> {
        if record.is_d() {
            return self.d_member(record, name).map(|m| (m.ty, m.offset));
        }
        let btf = kernel::vmlinux()?;
        kernel::member(btf, record, name)
            .filter(|m| m.bitfield.is_none())
            .map(|m| (m.ty, m.offset))
    }

    /// The output record of a translator's output type, or DTrace's D_XLATE_SOU error.
    fn translator_output(&self, t: &ast::Translator) -> Result<Record> {
        let out = self.resolve_type(&t.output.spec, &t.output.declarator, t.output.span)?;
        match out {
            Type::Struct(r) => Ok(r),
            Type::Opaque(name) if name.starts_with("struct ") || name.starts_with("union ") => {
                Err(CompileError::new(
                    "D_XLATE_SOU",
                    format!("incomplete struct/union/enum {name}"),
                    t.output.span,
                ))
            }
            _ => Err(CompileError::new(
                "D_XLATE_SOU",
                "translator output type must be a struct or union",
                t.output.span,
            )),
        }
    }

    /// Resolve translator `i`'s output and input types (once).
    fn translator_types(&mut self, i: usize) -> Result<(Record, Type)> {
        let list = self
            .vars
            .defs
            .translators
            .as_ref()
            .expect("translators loaded");
        if let Some(t) = &list[i].types {
            return Ok(t.clone());
        }
        let def = list[i].def.clone();
        let out = self.translator_output(&def)?;
        let input = self.resolve_type(&def.input.spec, &def.input.declarator, def.input.span)?;
        let list = self
            .vars
            .defs
            .translators
            .as_mut()
            .expect("translators loaded");
        list[i].types = Some((out.clone(), input.clone()));
        Ok((out, input))
    }
}

impl Gen<'_, '_> {
    /// Take the compilation's translators, checking the program's own (once, before the
    /// first expression is compiled).
    pub(crate) fn load_translators(&mut self) -> Result<()> {
        if self.c.vars.defs.translators.is_some() {
            return Ok(());
        }
        let provided = self.c.translators.to_vec();
        self.c.vars.defs.translators = Some(
            provided
                .into_iter()
                .map(|Provided { def, eager }| Xlator {
                    def,
                    eager,
                    types: None,
                })
                .collect(),
        );
        let count = self.c.vars.defs.translators.as_ref().map_or(0, Vec::len);
        for i in 0..count {
            let list = self.c.vars.defs.translators.as_ref().expect("loaded");
            if !list[i].eager {
                continue;
            }
            let def = list[i].def.clone();
            let (out, input) = self.c.translator_types(i)?;
            for j in 0..i {
                let list = self.c.vars.defs.translators.as_ref().expect("loaded");
                let same = match &list[j].types {
                    Some((o, inp)) => o.id == out.id && same_type(inp, &input),
                    None => false,
                };
                if same {
                    return Err(CompileError::new(
                        "D_XLATE_REDECL",
                        format!(
                            "translator from {input} to {} has already been declared",
                            out.name
                        ),
                        def.span,
                    ));
                }
            }
            for (name, value, span) in &def.members {
                let Some((member_ty, _)) = self.c.record_member(&out, name) else {
                    return Err(CompileError::new(
                        "D_XLATE_MEMB",
                        format!("translator member {name} is not a member of {}", out.name),
                        *span,
                    ));
                };
                // Type the member's expression with the input bound to a stand-in value.
                let checkpoint = self.e.checkpoint();
                let scratch = self.scratch_top;
                let stand_in = self.constant(0, input.clone(), *span)?;
                let ty = self.with_binding(&def.input_name, stand_in.clone(), |g| g.type_of(value));
                self.pop(stand_in.reg);
                self.e.rollback(checkpoint);
                self.scratch_top = scratch;
                self.this_offsets.retain(|_, off| *off < scratch);
                let ty = ty?;
                if !member_accepts(&member_ty, &ty) {
                    return Err(incompatible(name, &member_ty, &ty, value.span));
                }
            }
        }
        Ok(())
    }

    /// Evaluate `f` with `name` bound to the value `v` (a translator's input).
    fn with_binding<R>(&mut self, name: &str, v: Val, f: impl FnOnce(&mut Self) -> R) -> R {
        self.c.vars.defs.bindings.push(Binding {
            name: name.to_string(),
            reg: v.reg,
            ty: v.ty,
        });
        let r = f(self);
        self.c.vars.defs.bindings.pop();
        r
    }

    /// A translator's input name, inside one of its member expressions: a copy of the
    /// bound value.
    pub(crate) fn bound_input(&mut self, name: &str, span: Span) -> Result<Option<Val>> {
        let Some(b) = self.c.vars.defs.bindings.last() else {
            return Ok(None);
        };
        if b.name != name {
            return Ok(None);
        }
        let (from, ty) = (b.reg, b.ty.clone());
        let v = self.push(span)?;
        let r = regs::read(&mut self.e, from, R1);
        regs::write(&mut self.e, v, r);
        Ok(Some(Val { reg: v, ty }))
    }

    /// Whether `name` is a translator's input inside one of its member expressions.
    pub(crate) fn is_bound_input(&self, name: &str) -> bool {
        self.c
            .vars
            .defs
            .bindings
            .last()
            .is_some_and(|b| b.name == name)
    }

    /// The `xlate` an expression stands for, directly or through inlines, and whether its
    /// operand is to be evaluated in the base probe's context (a `proc`/`sched` probe's
    /// translated `args[N]`).
    fn xlate_source(&self, e: &Expr) -> Option<(TypeName, Expr, bool)> {
        let mut e = e.clone();
        if let Some(x) = self.mapped_xlate(&e) {
            return Some(x);
        }
        for _ in 0..MAX_INLINE_DEPTH {
            match &e.kind {
                ExprKind::Xlate { ty, operand } => {
                    return Some((ty.clone(), (**operand).clone(), false))
                }
                ExprKind::Ident(name)
                    if !self.is_bound_input(name)
                        && !self.c.is_global(name)
                        && self.c.inlines.contains_key(name) =>
                {
                    e = self.c.inlines[name].1.clone();
                }
                _ => return None,
            }
        }
        None
    }

    /// `args[N]` of a `proc`/`sched` probe whose mapping is an `xlate`: that `xlate`.
    fn mapped_xlate(&self, e: &Expr) -> Option<(TypeName, Expr, bool)> {
        let ProbeContext::Mapped(m) = &self.probe.context else {
            return None;
        };
        let ExprKind::Index { base, args } = &e.kind else {
            return None;
        };
        if !matches!(&base.kind, ExprKind::Ident(n) if n == "args") {
            return None;
        }
        let i = match args.as_slice() {
            [a] => super::aggregate::constant(a)?,
            _ => return None,
        };
        let arg = m.args.get(usize::try_from(i).ok()?)?;
        let parsed = self.mapped_expr(&arg.expr, "", e.span).ok()?;
        match parsed.kind {
            ExprKind::Xlate { ty, operand } => Some((ty, *operand, true)),
            _ => None,
        }
    }

    /// `xlate <T *> (e)->m` and `xlate <T> (e).m` (also through inlines such as
    /// `curpsinfo->pr_pid`): only member `m`'s translation. None if `base` is no `xlate`.
    pub(crate) fn translated_member(
        &mut self,
        base: &Expr,
        name: &str,
        arrow: bool,
        span: Span,
    ) -> Result<Option<Val>> {
        let Some((ty, operand, in_base)) = self.xlate_source(base) else {
            return Ok(None);
        };
        let (record, pointer) = self
            .xlate_target(&ty)
            .map_err(|err| placed(err, &self.probe.full_name(), span))?;
        if arrow != pointer {
            let shown = if pointer {
                Type::Ptr(Box::new(Type::Struct(record)))
            } else {
                Type::Struct(record)
            };
            let message = if arrow {
                "operator -> must be applied to a pointer".to_string()
            } else {
                format!(
                    "operator . cannot be applied to type \"{shown}\"; must be applied to a struct or union"
                )
            };
            let tag = if arrow { "D_OP_PTR" } else { "D_OP_SOU" };
            return Err(CompileError::new(tag, message, span));
        }
        let v = if in_base {
            let what = format!("{} {}", self.probe.full_name(), "args[ ]");
            self.in_base(|g| g.expr(&operand))
                .map_err(|err| placed(err, &what, span))?
        } else {
            self.expr(&operand)?
        };
        // A mapped argument's type spans are in its own text: report at the use.
        let type_span = if in_base { span } else { ty.span };
        let index = self.find_translator(&record, &v.ty, type_span)?;
        let def = self.c.vars.defs.translators.as_ref().expect("loaded")[index]
            .def
            .clone();
        let Some((member_ty, _)) = self.c.record_member(&record, name) else {
            return Err(CompileError::new(
                "D_TYPE_MEMBER",
                format!("{name} is not a member of {}", record.name),
                span,
            ));
        };
        let Some((_, value, _)) = def.members.iter().find(|(m, _, _)| m == name) else {
            return Err(CompileError::new(
                "D_XLATE_NOCONV",
                format!("translator does not define conversion for member: {name}"),
                span,
            ));
        };
        let r = self.translate_one(index, v.clone(), name, value, &member_ty)?;
        let x = regs::read(&mut self.e, r.reg, R1);
        regs::write(&mut self.e, v.reg, x);
        self.pop(r.reg);
        Ok(Some(Val {
            reg: v.reg,
            ty: r.ty,
        }))
    }

    /// The record an `xlate` type names and whether it is a pointer to it.
    fn xlate_target(&mut self, ty: &TypeName) -> Result<(Record, bool)> {
        let target = self.c.resolve_type(&ty.spec, &ty.declarator, ty.span)?;
        match target {
            Type::Struct(r) => Ok((r, false)),
            Type::Ptr(inner) => match *inner {
                Type::Struct(r) => Ok((r, true)),
                other => Err(xlate_sou(&other, ty.span)),
            },
            other => Err(xlate_sou(&other, ty.span)),
        }
    }

    /// The translator from `operand` to `record`, or DTrace's D_XLATE_NONE.
    fn find_translator(&mut self, record: &Record, operand: &Type, span: Span) -> Result<usize> {
        self.load_translators()?;
        let count = self.c.vars.defs.translators.as_ref().map_or(0, Vec::len);
        // The newest definition wins, as a program's own may refine a library's.
        for i in (0..count).rev() {
            let (out, input) = self.c.translator_types(i)?;
            if out.id == record.id && input_matches(&input, operand) {
                return Ok(i);
            }
        }
        let from = match operand {
            Type::Ptr(inner) if matches!(**inner, Type::Struct(_)) => (**inner).to_string(),
            other => other.to_string(),
        };
        Err(CompileError::new(
            "D_XLATE_NONE",
            format!("cannot translate from \"{from}\" to \"{}\"", record.name),
            span,
        ))
    }

    /// Evaluate translator `index`'s expression `value` for `member` with its input bound to
    /// (a copy of) `v`; the result, of the member's type, is a new register.
    fn translate_one(
        &mut self,
        index: usize,
        v: Val,
        member: &str,
        value: &Expr,
        member_ty: &Type,
    ) -> Result<Val> {
        let (_, input) = self.c.translator_types(index)?;
        let input_name = self.c.vars.defs.translators.as_ref().expect("loaded")[index]
            .def
            .input_name
            .clone();
        self.convert(&v, &input);
        let bound = Val {
            reg: v.reg,
            ty: input,
        };
        let r = self.with_binding(&input_name, bound, |g| g.expr(value))?;
        if !member_accepts(member_ty, &r.ty) {
            return Err(incompatible(member, member_ty, &r.ty, value.span));
        }
        let ty = match member_ty {
            Type::Array(..) | Type::String => Type::String,
            other => {
                self.convert(&r, other);
                other.clone()
            }
        };
        Ok(Val { reg: r.reg, ty })
    }

    /// `xlate <T *> (e)` as a value: the translated struct, stored in scratch memory.
    pub(crate) fn xlate_value(&mut self, ty: &TypeName, operand: &Expr, span: Span) -> Result<Val> {
        let (record, pointer) = self.xlate_target(ty)?;
        if !pointer {
            return Err(CompileError::new(
                "D_UNSUPPORTED",
                format!(
                    "a translated {} is only supported with a member (xlate <{0}> (e).member) or as a pointer",
                    record.name
                ),
                span,
            ));
        }
        let v = self.expr(operand)?;
        self.materialize(record, v, ty.span)
    }

    /// For providers' typed arguments: the value `v` translated to the D struct type
    /// named `output` (a typedef such as `psinfo_t`, or `struct psinfo`) by the library's
    /// translator, as a pointer to the translated struct in scratch memory (as
    /// `xlate <psinfo_t *> (v)` gives). Errors if the library does not define the type.
    #[allow(dead_code)]
    pub(crate) fn translate_value(&mut self, output: &str, v: Val, span: Span) -> Result<Val> {
        let ty = match output.strip_prefix("struct ") {
            Some(tag) => self.c.d_struct(false, tag).map(Ok),
            None => self.c.d_typedef(output),
        };
        let record = match ty.transpose()? {
            Some(Type::Struct(r)) => r,
            _ => {
                return Err(CompileError::new(
                    "D_XLATE_NONE",
                    format!(
                        "translator output type {output} is not defined (is the D library loaded?)"
                    ),
                    span,
                ))
            }
        };
        self.materialize(record, v, span)
    }

    /// Translate `v` to `record` into zeroed scratch memory; the value is its address.
    fn materialize(&mut self, record: Record, v: Val, span: Span) -> Result<Val> {
        let index = self.find_translator(&record, &v.ty, span)?;
        let def = self.c.vars.defs.translators.as_ref().expect("loaded")[index]
            .def
            .clone();
        let size = record.size.next_multiple_of(8).max(8);
        let buf = self.scratch(size);
        for at in (0..size).step_by(8) {
            let off = self.small(buf + at);
            self.e.emit(Insn::st(Size::DW, SCRATCH, off, 0));
        }
        for (name, value, mspan) in &def.members {
            let Some((member_ty, offset)) = self.c.record_member(&record, name) else {
                return Err(CompileError::new(
                    "D_XLATE_MEMB",
                    format!(
                        "translator member {name} is not a member of {}",
                        record.name
                    ),
                    *mspan,
                ));
            };
            let r = self.translate_one(index, v.clone(), name, value, &member_ty)?;
            match &member_ty {
                Type::Array(_, len) => {
                    self.scratch_addr(R1, buf + offset);
                    self.e.emit(Insn::mov64_imm(R2, (*len).max(1) as i32));
                    regs::read_into(&mut self.e, r.reg, R3);
                    self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
                }
                other => {
                    let x = regs::read(&mut self.e, r.reg, R1);
                    let off = self.small(buf + offset);
                    let width = Size::from_bytes(other.scalar_size().max(1));
                    self.e.emit(Insn::stx(width, SCRATCH, off, x));
                }
            }
            self.pop(r.reg);
        }
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, v.reg, R1);
        Ok(Val {
            reg: v.reg,
            ty: Type::Ptr(Box::new(Type::Struct(record))),
        })
    }
}

fn xlate_sou(ty: &Type, span: Span) -> CompileError {
    CompileError::new(
        "D_XLATE_SOU",
        format!("translation to type \"{ty}\" is not allowed: xlate needs a struct or union, or a pointer to one"),
        span,
    )
}

fn incompatible(member: &str, member_ty: &Type, value: &Type, span: Span) -> CompileError {
    CompileError::new(
        "D_XLATE_INCOMPAT",
        format!(
            "translator member {member} definition uses incompatible types: \"{member_ty}\" = \"{value}\""
        ),
        span,
    )
}

/// An error evaluating a `proc`/`sched` probe's mapping, placed at `span` in the script
/// unless it already has a place in a source the script's diagnostics know.
fn placed(err: CompileError, what: &str, span: Span) -> CompileError {
    if err.span.is_some_and(|s| s.source != u16::MAX) {
        return err;
    }
    CompileError::new(err.tag, format!("{what}: {}", err.message), span)
}

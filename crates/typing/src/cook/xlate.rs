//! Translators: `translator psinfo_t < struct task_struct *T > { pr_pid = T->tgid; };` and
//! `xlate <T *> (e)`.
//!
//! A program's translators are checked where they are defined, as DTrace checks a
//! definition (its output a struct, its members members of it, no duplicate); the D
//! library's only when an `xlate` uses them, so a library translating `struct task_struct`
//! does not make every script read kernel BTF.
//!
//! Translation is lazy, as in DTrace: `xlate <psinfo_t *> (e)->pr_pid` (also through
//! inlines such as `curpsinfo->pr_pid`) binds `e` once ([`ExprKind::Let`]) and types only
//! the `pr_pid` member's expression, converted to the member's type (a `char` array member
//! gives a string). Used any other way, a translated pointer is built in scratch memory
//! ([`ExprKind::Build`]), so `p = curpsinfo; p->pr_pid` works.

use dtrace_frontend::ast::{self, ExprKind as A, TypeName};
use dtrace_frontend::{CompileError, Result, Span};

use super::context::mapped_error;
use super::expr::{convert, mk};
use super::Cook;
use crate::ir::{BindId, Expr, ExprKind};
use crate::types::translators::Provided;
use crate::types::{Record, Type};

/// How deep inlines may nest around an `xlate` found through them.
const MAX_INLINE_DEPTH: usize = 16;

/// One translator definition, with its types once resolved.
pub(crate) struct Xlator {
    def: ast::Translator,
    eager: bool,
    /// Output and input types, resolved on first need.
    types: Option<(Record, Type)>,
    checked: bool,
}

/// The compilation's translators and the translation being typed.
pub(crate) struct Translators {
    list: Vec<Xlator>,
    /// Nested translations' inputs (name, binding, type); a translator's members see only
    /// the innermost.
    bindings: Vec<Vec<(String, BindId, Type)>>,
}

impl Translators {
    /// Add `layer` (a traced binary's translators) after the others, for a clause body on
    /// its probes; the length to give [`Translators::pop_layer`].
    pub(crate) fn push_layer(&mut self, layer: Vec<Xlator>) -> usize {
        let base = self.list.len();
        self.list.extend(layer);
        base
    }

    /// Take back the translators [`Translators::push_layer`] added (with what was resolved
    /// of them).
    pub(crate) fn pop_layer(&mut self, base: usize) -> Vec<Xlator> {
        self.list.split_off(base)
    }

    /// The translators, to keep aside (see [`Translators::push_layer`]).
    pub(crate) fn take(&mut self) -> Vec<Xlator> {
        std::mem::take(&mut self.list)
    }

    pub(crate) fn new(provided: &[Provided]) -> Translators {
        Translators {
            list: provided
                .iter()
                .map(|p| Xlator {
                    def: p.def.clone(),
                    eager: p.eager,
                    types: None,
                    checked: false,
                })
                .collect(),
            bindings: Vec::new(),
        }
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

/// Where DTrace reports what is wrong with a translator definition as a whole (its output
/// type, a member, a redeclaration): at its end, the `};` it is complete at.
fn closing(def: &ast::Translator) -> Span {
    Span {
        start: def.span.end.saturating_sub(1),
        ..def.span
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

impl Cook<'_> {
    /// The output record of a translator's output type, or DTrace's D_XLATE_SOU error.
    fn translator_output(&self, t: &ast::Translator) -> Result<Record> {
        let out = self.resolve_type(&t.output.spec, &t.output.declarator, t.output.span)?;
        match out {
            Type::Struct(r) => Ok(r),
            Type::Opaque(name) if name.starts_with("struct ") || name.starts_with("union ") => {
                Err(CompileError::new(
                    "D_XLATE_SOU",
                    format!("incomplete struct/union/enum {name}"),
                    closing(t),
                ))
            }
            _ => Err(CompileError::new(
                "D_XLATE_SOU",
                "translator output type must be a struct or union",
                closing(t),
            )),
        }
    }

    /// Translator `i`'s output and input types (resolved once).
    fn translator_types(&mut self, i: usize) -> Result<(Record, Type)> {
        if let Some(t) = &self.xlators.list[i].types {
            return Ok(t.clone());
        }
        let def = self.xlators.list[i].def.clone();
        let out = self.translator_output(&def)?;
        let input = self.resolve_type(&def.input.spec, &def.input.declarator, def.input.span)?;
        self.xlators.list[i].types = Some((out.clone(), input.clone()));
        Ok((out, input))
    }

    /// Check a program's translator definition where it appears (the D library's are
    /// checked only when used).
    pub(crate) fn check_translator(&mut self, t: &ast::Translator) -> Result<()> {
        let Some(i) = self
            .xlators
            .list
            .iter()
            .position(|x| x.eager && !x.checked && x.def.span == t.span)
        else {
            return Ok(());
        };
        self.xlators.list[i].checked = true;
        let def = self.xlators.list[i].def.clone();
        let (out, input) = self.translator_types(i)?;
        for j in 0..i {
            // The D library's translators are resolved here if not used yet (one whose
            // types this kernel lacks cannot be the same).
            let same = match self.translator_types(j) {
                Ok((o, inp)) => o.id == out.id && same_type(&inp, &input),
                Err(_) => false,
            };
            if same {
                return Err(CompileError::new(
                    "D_XLATE_REDECL",
                    format!(
                        "translator from {input} to {} has already been declared",
                        out.name
                    ),
                    closing(&def),
                ));
            }
        }
        for (name, value, _) in &def.members {
            let Some(member) = self.member(&out, name) else {
                return Err(CompileError::new(
                    "D_XLATE_MEMB",
                    format!("translator member {name} is not a member of {}", out.name),
                    closing(&def),
                ));
            };
            let id = self.bind_id();
            let ty = self
                .with_binding(&def.input_name, id, input.clone(), |c| c.expr(value))?
                .ty;
            if !member_accepts(&member.ty, &ty) {
                return Err(incompatible(name, &member.ty, &ty, closing(&def)));
            }
        }
        Ok(())
    }

    /// Type `f` with `name` bound to binding `id` of type `ty` (a translator's input).
    fn with_binding<R>(
        &mut self,
        name: &str,
        id: BindId,
        ty: Type,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        self.with_bindings(vec![(name.to_string(), id, ty)], f)
    }

    /// Type `f` with the names of `frame` bound (a translator's input, an inline's
    /// parameters); only the innermost frame's names are visible.
    pub(crate) fn with_bindings<R>(
        &mut self,
        frame: Vec<(String, BindId, Type)>,
        f: impl FnOnce(&mut Self) -> R,
    ) -> R {
        self.xlators.bindings.push(frame);
        let r = f(self);
        self.xlators.bindings.pop();
        r
    }

    /// A name bound by the innermost frame (a translator's input inside one of its member
    /// expressions, an inline's parameter inside its value).
    pub(crate) fn bound_input(&self, name: &str, span: Span) -> Option<Expr> {
        let frame = self.xlators.bindings.last()?;
        let (_, id, ty) = frame.iter().find(|(n, _, _)| n == name)?;
        Some(mk(ExprKind::Bound(*id), ty.clone(), span))
    }

    /// The `xlate` an expression stands for, directly or through inlines, and whether its
    /// operand is to be typed in the base probe's context (a `proc`/`sched` probe's
    /// translated `args[N]`).
    fn xlate_source(&self, e: &ast::Expr) -> Option<(TypeName, ast::Expr, bool)> {
        if let Some((ty, operand)) = self.mapped_xlate(e) {
            return Some((ty, operand, true));
        }
        let mut e = e.clone();
        for _ in 0..MAX_INLINE_DEPTH {
            match &e.kind {
                A::Xlate { ty, operand } => return Some((ty.clone(), (**operand).clone(), false)),
                A::Ident(name)
                    if self.bound_input(name, e.span).is_none()
                        && self.global(name).is_none()
                        && self.scope.inlines.contains_key(name) =>
                {
                    e = self.scope.inlines[name].1.clone();
                }
                _ => return None,
            }
        }
        None
    }

    /// Whether `e` stands for an `xlate` (directly or through inlines, as `curpsinfo`):
    /// translated data exists only while the clause runs, so it is no aggregation key.
    pub(crate) fn is_translation(&self, e: &ast::Expr) -> bool {
        self.xlate_source(e).is_some()
    }

    /// How DTrace names the type of an `xlate` expression, which no cast may change:
    /// "pointer to translated data" or "translated data". None if `e` is no `xlate` (an
    /// inline standing for one, as `curcpu`, is a pointer like any other).
    pub(crate) fn translated_data(&mut self, e: &ast::Expr) -> Result<Option<&'static str>> {
        let A::Xlate { ty, .. } = &e.kind else {
            return Ok(None);
        };
        let (_, pointer) = self.xlate_target(ty)?;
        Ok(Some(if pointer {
            "pointer to translated data"
        } else {
            "translated data"
        }))
    }

    /// `xlate <T *> (e)->m` and `xlate <T> (e).m` (also through inlines such as
    /// `curpsinfo->pr_pid`): only member `m`'s translation. None if `base` is no `xlate`.
    pub(crate) fn translated_member(
        &mut self,
        base: &ast::Expr,
        name: &str,
        arrow: bool,
        span: Span,
    ) -> Result<Option<Expr>> {
        // `fds[fd].fi_name`: the member of an inline with parameters whose value is an
        // `xlate`, typed with its arguments bound.
        if let A::Index { base: array, args } = &base.kind {
            if let A::Ident(array) = &array.kind {
                let source = self
                    .scope
                    .inline_arrays
                    .get(array)
                    .filter(|_| self.bound_input(array, span).is_none())
                    .and_then(|a| self.xlate_source(&a.value));
                if let Some(source) = source {
                    return self
                        .with_inline_args(array, args, span, |c| {
                            c.member_of_translation(source, name, arrow, span)
                        })
                        .map(Some);
                }
            }
        }
        match self.xlate_source(base) {
            Some(source) => self
                .member_of_translation(source, name, arrow, span)
                .map(Some),
            None => Ok(None),
        }
    }

    /// Member `name` of the translation [`Cook::xlate_source`] found: `(type, operand,
    /// whether the operand is in a mapped probe's base)`.
    fn member_of_translation(
        &mut self,
        (ty, operand, in_base): (TypeName, ast::Expr, bool),
        name: &str,
        arrow: bool,
        span: Span,
    ) -> Result<Expr> {
        let probe = self.site().full_name();
        let (record, pointer) = self
            .xlate_target(&ty)
            .map_err(|err| mapped_error(err, &probe, span))?;
        let v = if in_base {
            let what = format!("{probe} args[ ]");
            let v = self
                .in_base(|c| c.expr(&operand))
                .map_err(|err| mapped_error(err, &what, span))?;
            let ty = v.ty.clone();
            mk(ExprKind::InBase(Box::new(v)), ty, span)
        } else {
            self.expr(&operand)?
        };
        // A mapped argument's type spans are in its own text: report at the use.
        let type_span = if in_base { span } else { ty.span };
        let index = self.find_translator(&record, &v.ty, type_span)?;
        if arrow != pointer {
            let shown = if pointer {
                Type::Ptr(Box::new(Type::Struct(record)))
            } else {
                Type::Struct(record)
            };
            let (tag, message) = if arrow {
                (
                    "D_OP_PTR",
                    "operator -> must be applied to a pointer".to_string(),
                )
            } else {
                (
                    "D_OP_SOU",
                    format!(
                        "operator . cannot be applied to type \"{shown}\"; must be applied to a struct or union"
                    ),
                )
            };
            return Err(CompileError::new(tag, message, span));
        }
        let def = self.xlators.list[index].def.clone();
        let Some(member) = self.member(&record, name) else {
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
        let (id, input, body) = self.translate_member(index, name, value, &member.ty)?;
        let ty = body.ty.clone();
        Ok(mk(
            ExprKind::Let {
                id,
                value: Box::new(convert(v, &input)),
                body: Box::new(body),
            },
            ty,
            span,
        ))
    }

    /// The declared type of member `name` of the translation `base` stands for (for
    /// `sizeof`: `sizeof (curpsinfo->pr_fname)` is the array's size); None if `base` is no
    /// `xlate`.
    pub(crate) fn translated_member_type(
        &mut self,
        base: &ast::Expr,
        name: &str,
    ) -> Result<Option<Type>> {
        let Some((ty, _, _)) = self.xlate_source(base) else {
            return Ok(None);
        };
        let (record, _) = self.xlate_target(&ty)?;
        Ok(self.member(&record, name).map(|m| m.ty))
    }

    /// Type translator `index`'s expression `value` for `member` (of type `member_ty`) with
    /// the input bound; returns the binding, the input type and the member's value.
    fn translate_member(
        &mut self,
        index: usize,
        member: &str,
        value: &ast::Expr,
        member_ty: &Type,
    ) -> Result<(BindId, Type, Expr)> {
        let (_, input) = self.translator_types(index)?;
        let input_name = self.xlators.list[index].def.input_name.clone();
        let id = self.bind_id();
        let r = self.with_binding(&input_name, id, input.clone(), |c| c.expr(value))?;
        if !member_accepts(member_ty, &r.ty) {
            return Err(incompatible(member, member_ty, &r.ty, value.span));
        }
        let r = match member_ty {
            Type::Array(..) | Type::String => r,
            other => convert(r, other),
        };
        Ok((id, input, r))
    }

    /// The record an `xlate` type names and whether it is a pointer to it.
    fn xlate_target(&mut self, ty: &TypeName) -> Result<(Record, bool)> {
        let target = self.resolve_type(&ty.spec, &ty.declarator, ty.span)?;
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
        // The newest definition wins, as a program's own may refine a library's.
        for i in (0..self.xlators.list.len()).rev() {
            let (out, input) = self.translator_types(i)?;
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

    /// `xlate <T *> (e)` and `xlate <T> (e)` as a value: the translated struct, built in
    /// scratch memory.
    pub(crate) fn xlate_value(
        &mut self,
        ty: &TypeName,
        operand: &ast::Expr,
        span: Span,
    ) -> Result<Expr> {
        let (record, pointer) = self.xlate_target(ty)?;
        let v = self.expr(operand)?;
        let index = self.find_translator(&record, &v.ty, ty.span)?;
        let def = self.xlators.list[index].def.clone();
        let (_, input) = self.translator_types(index)?;
        let input_name = def.input_name.clone();
        let id = self.bind_id();
        let mut members = Vec::new();
        for (name, value, mspan) in &def.members {
            let Some(member) = self.member(&record, name) else {
                return Err(CompileError::new(
                    "D_XLATE_MEMB",
                    format!(
                        "translator member {name} is not a member of {}",
                        record.name
                    ),
                    *mspan,
                ));
            };
            let r = self.with_binding(&input_name, id, input.clone(), |c| c.expr(value))?;
            if !member_accepts(&member.ty, &r.ty) {
                return Err(incompatible(name, &member.ty, &r.ty, value.span));
            }
            let r = match &member.ty {
                Type::Array(..) | Type::String => r,
                other => convert(r, other),
            };
            members.push((member.offset as u32, member.ty, r));
        }
        // A struct value is held by reference, so the built struct's address is both.
        let ty = if pointer {
            Type::Ptr(Box::new(Type::Struct(record.clone())))
        } else {
            Type::Struct(record.clone())
        };
        let build = mk(
            ExprKind::Build {
                size: record.size,
                members,
            },
            ty.clone(),
            span,
        );
        Ok(mk(
            ExprKind::Let {
                id,
                value: Box::new(convert(v, &input)),
                body: Box::new(build),
            },
            ty,
            span,
        ))
    }
}

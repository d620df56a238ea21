//! Memory in expressions: variables as storage, members (`s.m`, `p->m`), indexing of
//! arrays and pointers, dereference, the address operator, assignment targets, and
//! `sizeof`, `offsetof` and `stringof`.
//!
//! An expression naming storage becomes a [`Place`]; it becomes a value only where it is
//! used ([`Cook::place_value`]): integers, pointers, strings and structs are loaded (strings
//! and structs by reference), a `char` array reads as a string (so `comm` works with
//! `printf("%s")`, `==` and as a key), and other arrays decay to a pointer to their first
//! element, as in C. Indexing a D array with a constant is checked at compile time; with a
//! run-time index it is checked when it runs ([`ExprKind::CheckIndex`]). Kernel memory
//! is read through the helpers that fault safely: a bad address fires ERROR.

use dtrace_frontend::ast::{self, ExprKind as A, TypeName, UnaryOp};
use dtrace_frontend::{CompileError, Result, Span};

use super::expr::{convert, int, mk, unassigned};
use super::Cook;
use crate::builtins;
use crate::ir::{ArithOp, Expr, ExprKind, Place, PlaceBase};
use crate::probe::{ProbeContext, UprobeKind};
use crate::types::{self, kallsyms, kernel, Type};

/// DTrace's error for `.` or `->` on something that is not a struct or union.
fn not_record(op: &str, ty: &Type, span: Span) -> CompileError {
    let message = if op == "->" {
        format!(
            "operator -> cannot be applied to pointer to type \"{ty}\"; must be applied to a struct or union pointer"
        )
    } else {
        format!(
            "operator {op} cannot be applied to type \"{ty}\"; must be applied to a struct or union"
        )
    };
    CompileError::new("D_OP_SOU", message, span)
}

fn lvalue_error(op: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_OP_LVAL",
        format!("operator {op} requires modifiable lvalue as an operand"),
        span,
    )
}

impl Cook<'_> {
    /// The value of the storage `p` names (see the module documentation).
    pub(crate) fn place_value(&mut self, p: Place, span: Span) -> Result<Expr> {
        let ty = p.ty.clone();
        match &ty {
            Type::Int { .. } | Type::Ptr(_) | Type::String | Type::Struct(_) => {
                Ok(mk(ExprKind::Load(Box::new(p)), ty, span))
            }
            Type::Array(elem, _) if elem.is_char() => {
                Ok(mk(ExprKind::Load(Box::new(p)), Type::String, span))
            }
            Type::Array(elem, _) => Ok(mk(
                ExprKind::AddrOf(Box::new(p)),
                Type::Ptr(elem.clone()),
                span,
            )),
            // A `float` or `double` is its bits: it can be stored and printed (`%e %f %g`),
            // not computed with.
            Type::Opaque(_) if ty.is_float() => {
                Ok(mk(ExprKind::Load(Box::new(p)), ty, span))
            }
            Type::Void => Err(CompileError::new(
                "D_DEREF_VOID",
                "cannot dereference pointer to void",
                span,
            )),
            other => Err(CompileError::new(
                "D_UNSUPPORTED",
                format!(
                    "a value of type {other} is not supported yet: use its members, or stringof( ) for text"
                ),
                span,
            )),
        }
    }

    /// The storage `e` names, if it names storage: a variable, a member, an element or a
    /// dereference. Undefined variables are errors.
    pub(crate) fn place_of(&mut self, e: &ast::Expr) -> Result<Option<Place>> {
        let span = e.span;
        Ok(Some(match &e.kind {
            A::Ident(name) => match self.global(name) {
                Some(id) if self.bound_input(name, span).is_none() => {
                    Place::whole(PlaceBase::Global(id), self.prog.globals[id].ty.clone())
                }
                _ => return Ok(None),
            },
            A::SelfVar(name) => match self.thread_var(name) {
                Some(id) => {
                    Place::whole(PlaceBase::Thread(id), self.prog.thread_vars[id].ty.clone())
                }
                None => return Err(unassigned(&format!("self->{name}"), span)),
            },
            A::ThisVar(name) => match self.this_var(name) {
                Some(id) => Place::whole(PlaceBase::This(id), self.prog.this_vars[id].ty.clone()),
                None => return Err(unassigned(&format!("this->{name}"), span)),
            },
            A::Symbol { module, name } => symbol_place(module.as_deref(), name, span)?,
            A::Member { .. } if self.is_entry_ref(e) => return Ok(None),
            A::Index { base, .. } if self.is_entry_ref(base) => return Ok(None),
            A::Member { base, name, arrow } => {
                // A translated member is a value, unless it is an array or struct: then
                // the translation is built and the member named in it.
                if let Some(ty) = self.translated_member_type(base, name)? {
                    if !matches!(ty, Type::Array(..) | Type::Struct(_)) {
                        return Ok(None);
                    }
                }
                self.member_place(base, name, *arrow, span)?
            }
            A::Unary {
                op: UnaryOp::Deref,
                operand,
            } => self.deref_place(operand, span)?,
            A::Index { base, args } => match &base.kind {
                A::Ident(name) if name == "args" => return Ok(None),
                A::Ident(name) if self.assoc(name, false).is_some() => {
                    let id = self.assoc(name, false).expect("an array");
                    let keys = self.keys(id, args, span)?;
                    let ty = self.prog.assocs[id].value.clone();
                    Place::whole(PlaceBase::Assoc { var: id, keys }, ty)
                }
                A::SelfVar(name) if self.assoc(name, true).is_none() => {
                    if self.thread_var(name).is_none() {
                        return Err(unassigned(&format!("self->{name}"), span));
                    }
                    // An element of a thread-local string, array or pointer.
                    self.index_place(base, args, span)?
                }
                A::SelfVar(name) => {
                    let id = self.assoc(name, true).expect("an array");
                    let keys = self.keys(id, args, span)?;
                    let ty = self.prog.assocs[id].value.clone();
                    Place::whole(PlaceBase::Assoc { var: id, keys }, ty)
                }
                A::Ident(name) if self.global(name).is_none() && !builtins::is_variable(name) => {
                    // DTrace cooks the keys before the array: an undefined key is named first.
                    for a in args {
                        self.expr(a)?;
                    }
                    return Err(unassigned(name, base.span));
                }
                A::Aggregation(_) => return Ok(None),
                _ => self.index_place(base, args, span)?,
            },
            _ => return Ok(None),
        }))
    }

    /// `*operand`: the object a pointer points to.
    pub(crate) fn deref_place(&mut self, operand: &ast::Expr, span: Span) -> Result<Place> {
        let p = self.expr(operand)?;
        let inner = match &p.ty {
            Type::Ptr(inner) => (**inner).clone(),
            _ => {
                return Err(CompileError::new(
                    "D_DEREF_NONPTR",
                    "cannot dereference non-pointer type",
                    span,
                ))
            }
        };
        if inner == Type::Void {
            return Err(CompileError::new(
                "D_DEREF_VOID",
                "cannot dereference pointer to void",
                span,
            ));
        }
        Ok(Place::whole(self.memory(p), inner))
    }

    /// `base->name` or `base.name`.
    pub(crate) fn member_place(
        &mut self,
        base: &ast::Expr,
        name: &str,
        arrow: bool,
        span: Span,
    ) -> Result<Place> {
        let op = if arrow { "->" } else { "." };
        let mut place = if arrow {
            let v = self.expr(base)?;
            match &v.ty {
                Type::Ptr(inner) => {
                    let inner = (**inner).clone();
                    if !matches!(inner, Type::Struct(_)) && !is_forward(&inner) {
                        return Err(not_record(op, &inner, span));
                    }
                    Place {
                        checked_base: true,
                        ..Place::whole(self.memory(v), inner)
                    }
                }
                _ => {
                    return Err(CompileError::new(
                        "D_OP_PTR",
                        "operator -> must be applied to a pointer",
                        span,
                    ))
                }
            }
        } else {
            match self.place_of(base)? {
                Some(p) => p,
                None => {
                    // A struct value that is no storage (a cast, a translator's input) is
                    // held by reference: its members are at that address.
                    let v = self.expr(base)?;
                    if !matches!(v.ty, Type::Struct(_)) {
                        return Err(not_record(op, &v.ty, span));
                    }
                    let ty = v.ty.clone();
                    Place::whole(PlaceBase::Kernel(Box::new(v)), ty)
                }
            }
        };
        let record = match &place.ty {
            Type::Struct(r) => r.clone(),
            t if is_forward(t) => {
                return Err(CompileError::new(
                    "D_OP_INCOMPLETE",
                    format!(
                        "operator {op} cannot be applied to a forward declaration: no {t} definition is available"
                    ),
                    span,
                ))
            }
            other => return Err(not_record(op, other, span)),
        };
        let Some(m) = self.member(&record, name) else {
            return Err(CompileError::new(
                "D_TYPE_MEMBER",
                format!("{name} is not a member of {}", record.name),
                span,
            ));
        };
        place.offset += m.offset;
        place.ty = m.ty;
        place.bitfield = m.bitfield;
        Ok(place)
    }

    /// `base[i]` on an array or a pointer.
    pub(crate) fn index_place(
        &mut self,
        base: &ast::Expr,
        args: &[ast::Expr],
        span: Span,
    ) -> Result<Place> {
        let [index] = args else {
            if let A::Ident(name) = &base.kind {
                return Err(CompileError::new(
                    "D_ARR_BADREF",
                    format!("cannot access scalar {name} as an associative array"),
                    span,
                ));
            }
            return Err(CompileError::new(
                "D_ARR_BADREF",
                format!("tuple has {} elements; 1 expected", args.len()),
                span,
            ));
        };
        if let Some(mut place) = self.place_of(base)? {
            if let Type::Array(elem, len) = place.ty.clone() {
                let size = elem.size();
                if let Some(i) = self.int_constant(index) {
                    // Arrays of 0 or 1 elements end structs of variable length: unchecked.
                    if len > 1 && (i < 0 || i as u64 >= len as u64) {
                        return Err(CompileError::new(
                            "D_ARR_BOUNDS",
                            format!("index outside array bounds: {i}, max is {len}"),
                            index.span,
                        ));
                    }
                    place.offset = place.offset.wrapping_add((i as u64).wrapping_mul(size));
                } else {
                    let i = self.expr(index)?;
                    if !i.ty.is_integer() {
                        return Err(CompileError::new(
                            "D_OP_INT",
                            "operator [ ] requires an index of integral type",
                            index.span,
                        ));
                    }
                    let i = convert(i, &types::LONG);
                    let checked = if len > 1 {
                        mk(
                            ExprKind::CheckIndex {
                                index: Box::new(i),
                                len: len as u64,
                            },
                            types::LONG,
                            span,
                        )
                    } else {
                        i
                    };
                    let bytes = scale(checked, size, span);
                    place.index = Some(Box::new(match place.index.take() {
                        Some(prev) => add(*prev, bytes, span),
                        None => bytes,
                    }));
                }
                place.ty = *elem;
                place.bitfield = None;
                return Ok(place);
            }
            let v = self.place_value(place, base.span)?;
            return self.pointer_element(v, index, span);
        }
        let v = self.expr(base)?;
        self.pointer_element(v, index, span)
    }

    /// `p[i]` for a pointer value `p`.
    fn pointer_element(&mut self, p: Expr, index: &ast::Expr, span: Span) -> Result<Place> {
        // A string is indexed as the address of its first char. That address lies in a
        // variable's storage, which the verifier follows and would refuse to move by an
        // index it cannot bound: it is taken as a plain number first (the load or store
        // through it is checked instead).
        let p = if p.ty.is_string() {
            let chars = Expr {
                ty: Type::Ptr(Box::new(types::CHAR)),
                ..p
            };
            if self.int_constant(index).is_some() {
                chars
            } else {
                let span = chars.span;
                let number = mk(ExprKind::Convert(Box::new(chars)), types::ULONG, span);
                let ty = Type::Ptr(Box::new(types::CHAR));
                mk(ExprKind::Convert(Box::new(number)), ty, span)
            }
        } else {
            p
        };
        let elem = match &p.ty {
            Type::Ptr(elem) => (**elem).clone(),
            other => {
                return Err(CompileError::new(
                    "D_OP_PTR",
                    format!("operator [ ] must be applied to an array or a pointer; found {other}"),
                    span,
                ))
            }
        };
        let size = elem.size();
        if size == 0 {
            return Err(CompileError::new(
                "D_OP_INCOMPLETE",
                format!("cannot index a pointer to {elem}: its size is not known"),
                span,
            ));
        }
        let i = self.expr(index)?;
        if !i.ty.is_integer() {
            return Err(CompileError::new(
                "D_OP_INT",
                "operator [ ] requires an index of integral type",
                index.span,
            ));
        }
        let ty = p.ty.clone();
        let bytes = scale(convert(i, &types::LONG), size, span);
        let addr = mk(
            ExprKind::Arith {
                op: ArithOp::Add,
                lhs: Box::new(p),
                rhs: Box::new(Expr {
                    ty: ty.clone(),
                    ..bytes
                }),
            },
            ty,
            span,
        );
        Ok(Place::whole(self.memory(addr), elem))
    }

    /// The memory pointer `p` points into: the traced process's when [`Self::user_space`]
    /// says so, else the kernel's (D's scratch memory included).
    pub(crate) fn memory(&self, p: Expr) -> PlaceBase {
        if self.user_space(&p) {
            PlaceBase::User(Box::new(p))
        } else {
            PlaceBase::Kernel(Box::new(p))
        }
    }

    /// Whether the pointer `p` is an address in the traced process: an argument of a
    /// `pid` probe typed from DWARF, a pointer read from (or an address taken of) the
    /// process's memory, a variable once assigned one (from then on in program order), and
    /// what casts and pointer arithmetic make of one, an integer cast to a pointer to a
    /// user type (`(struct a.out`point *)arg0`), and a translator's input of such a type;
    /// as DTrace
    /// marks such values "userland", so that dereferences read them with copyin.
    pub(crate) fn user_space(&self, p: &Expr) -> bool {
        match &p.kind {
            ExprKind::ProbeArg(_) => {
                matches!(self.context(), ProbeContext::Uprobe(u) if u.object.is_some() && !matches!(u.kind, UprobeKind::Usdt(_)))
            }
            ExprKind::Load(place) => {
                p.ty.is_scalar()
                    && (matches!(place.base, PlaceBase::User(_))
                        || place.offset == 0
                            && var_key(&place.base).is_some_and(|k| self.user_vars.contains(&k)))
            }
            ExprKind::AddrOf(place) => matches!(place.base, PlaceBase::User(_)),
            // A translator's input (or an inline's parameter) declared as a pointer to a
            // user type (`translator T < struct a.out`rec *r >`).
            ExprKind::Bound(_) => points_to_user_type(&p.ty),
            ExprKind::Convert(inner) => {
                self.user_space(inner) || (inner.ty.is_integer() && points_to_user_type(&p.ty))
            }
            ExprKind::Arith { lhs, rhs, .. } => self.user_space(lhs) || self.user_space(rhs),
            ExprKind::Cond {
                then, otherwise, ..
            } => self.user_space(then) || self.user_space(otherwise),
            ExprKind::Comma(_, value)
            | ExprKind::Let { body: value, .. }
            | ExprKind::InBase(value) => self.user_space(value),
            _ => false,
        }
    }

    /// `&operand`.
    pub(crate) fn address_of(&mut self, operand: &ast::Expr, span: Span) -> Result<Expr> {
        let dynamic = || {
            CompileError::new(
                "D_ADDROF_VAR",
                "cannot take address of dynamic variable",
                span,
            )
        };
        match &operand.kind {
            A::Ident(_) | A::SelfVar(_) | A::ThisVar(_) | A::Aggregation(_) => {
                return Err(dynamic())
            }
            A::Index { base, .. }
                if matches!(base.kind, A::Aggregation(_) | A::SelfVar(_))
                    || matches!(&base.kind, A::Ident(n) if self.assoc(n, false).is_some()) =>
            {
                return Err(dynamic())
            }
            _ => {}
        }
        let Some(place) = self.place_of(operand)? else {
            return Err(CompileError::new(
                "D_ADDROF_LVAL",
                "unacceptable operand for unary & operator",
                span,
            ));
        };
        if place.bitfield.is_some() {
            return Err(CompileError::new(
                "D_ADDROF_BITFIELD",
                "cannot take address of bit-field",
                span,
            ));
        }
        let ty = Type::Ptr(Box::new(place.ty.clone()));
        if let (PlaceBase::Kernel(base), None) = (&place.base, &place.index) {
            if let ExprKind::Int(address) = base.kind {
                // Memory at a known address (a kernel symbol's): a constant.
                return Ok(int(address.wrapping_add(place.offset), ty, span));
            }
        }
        Ok(mk(ExprKind::AddrOf(Box::new(place)), ty, span))
    }

    /// The storage `e` names, for an operator that modifies it (`++`, `op=`): it must be a
    /// variable or D memory. With `create`, an undefined variable (`x`, `self->x`,
    /// `this->x`) becomes an `int64_t`, as in DTrace (so `x++` works before `x = ...`).
    pub(crate) fn lvalue(
        &mut self,
        e: &ast::Expr,
        op: &str,
        span: Span,
        create: bool,
    ) -> Result<Place> {
        if let A::Ident(name) = &e.kind {
            if self.global(name).is_none() && self.bound_input(name, span).is_none() {
                if builtins::is_variable(name) {
                    return Err(read_only(op, span));
                }
                if create {
                    self.new_global(name, types::INT64);
                }
            }
        }
        if create {
            match &e.kind {
                A::SelfVar(name) if self.thread_var(name).is_none() => {
                    self.new_thread(name, types::INT64);
                }
                A::ThisVar(name) if self.this_var(name).is_none() => {
                    self.new_this(name, types::INT64);
                }
                A::Index { base, args } => {
                    if let Some(p) = self.new_assoc_place(base, args, &types::INT64, op, span)? {
                        return Ok(p);
                    }
                }
                _ => {}
            }
        }
        match self.place_of(e)? {
            Some(_) if is_kernel_symbol(e) => Err(read_only(op, span)),
            Some(p) if !matches!(p.ty, Type::Array(..)) => Ok(p),
            _ => Err(lvalue_error(op, span)),
        }
    }

    /// The storage `lhs = value` writes, creating the variable (or associative array) with
    /// the value's type on first assignment.
    pub(crate) fn assign_target(
        &mut self,
        lhs: &ast::Expr,
        value: &Expr,
        span: Span,
    ) -> Result<Place> {
        let ty = value.ty.clone();
        match &lhs.kind {
            A::Ident(name) if self.global(name).is_none() => {
                if builtins::is_variable(name)
                    || self.scope.inlines.contains_key(name)
                    || self.scope.enum_constants.contains_key(name)
                {
                    return Err(read_only("=", span));
                }
                if self.assoc(name, false).is_some() {
                    return Err(CompileError::new(
                        "D_IDENT_BADREF",
                        format!("{name} is an associative array; it needs a key"),
                        span,
                    ));
                }
                let id = self.new_global(name, ty.clone());
                return Ok(Place::whole(PlaceBase::Global(id), ty));
            }
            A::SelfVar(name) if self.thread_var(name).is_none() => {
                let id = self.new_thread(name, ty.clone());
                return Ok(Place::whole(PlaceBase::Thread(id), ty));
            }
            A::ThisVar(name) if self.this_var(name).is_none() => {
                let id = self.new_this(name, ty.clone());
                return Ok(Place::whole(PlaceBase::This(id), ty));
            }
            A::Index { base, args } => {
                if let A::ThisVar(n) = &base.kind {
                    if self.this_var(n).is_none() {
                        return Err(CompileError::new(
                            "D_ARR_LOCAL",
                            format!("local variables may not be used as associative arrays: {n}"),
                            span,
                        ));
                    }
                }
                if let Some(p) = self.new_assoc_place(base, args, &ty, "=", span)? {
                    return Ok(p);
                }
                if let A::Ident(name) = &base.kind {
                    if let Some(id) = self.global(name) {
                        if !matches!(self.prog.globals[id].ty, Type::Array(..) | Type::Ptr(_)) {
                            return Err(CompileError::new(
                                "D_IDENT_BADREF",
                                format!("{name} is not an associative array"),
                                span,
                            ));
                        }
                    }
                }
            }
            A::Ident(name) if self.bound_input(name, span).is_some() => {
                return Err(lvalue_error("=", span));
            }
            _ => {}
        }
        match self.place_of(lhs)? {
            Some(_) if is_kernel_symbol(lhs) => Err(read_only("=", span)),
            Some(p) => Ok(p),
            None => Err(lvalue_error("=", span)),
        }
    }

    /// The operand of `!`, `-`, `+` or `~` when it names a `self->`, `this->` or
    /// associative-array variable nothing has declared or assigned yet: DTrace types a
    /// unary operator's operand before it marks it read, and gives such a new variable
    /// `int64_t` there (so `/!seen[pid]/` may come before the clause that sets `seen`).
    pub(crate) fn declare_unary_operand(&mut self, e: &ast::Expr, span: Span) -> Result<()> {
        match &e.kind {
            A::SelfVar(name)
                if self.thread_var(name).is_none() && self.assoc(name, true).is_none() =>
            {
                self.new_thread(name, types::INT64);
            }
            A::ThisVar(name) if self.this_var(name).is_none() => {
                self.new_this(name, types::INT64);
            }
            A::Index { base, args } => {
                let plain = match &base.kind {
                    A::Ident(name) => {
                        !builtins::is_variable(name)
                            && self.bound_input(name, span).is_none()
                            && !self.scope.inline_arrays.contains_key(name)
                    }
                    A::SelfVar(name) => self.thread_var(name).is_none(),
                    _ => false,
                };
                if plain {
                    self.new_assoc_place(base, args, &types::INT64, "", span)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// `name[keys]` (or `self->name[keys]`) as a new associative array of `ty` when no
    /// variable has that name yet: DTrace creates one on its first assignment, and on
    /// a first `++` or `--` (then of `int64_t`). `None` when the name exists.
    fn new_assoc_place(
        &mut self,
        base: &ast::Expr,
        args: &[ast::Expr],
        ty: &Type,
        op: &str,
        span: Span,
    ) -> Result<Option<Place>> {
        let (name, thread) = match &base.kind {
            A::Ident(n) => (n.as_str(), false),
            A::SelfVar(n) => (n.as_str(), true),
            _ => return Ok(None),
        };
        let exists = self.assoc(name, thread).is_some()
            || (!thread && (self.global(name).is_some() || name == "args"));
        if exists {
            return Ok(None);
        }
        if !thread && builtins::is_variable(name) {
            return Err(read_only(op, span));
        }
        let mut keys = Vec::new();
        for a in args {
            let k = self.expr(a)?;
            if super::expr::is_void(&k) {
                return Err(CompileError::new(
                    "D_KEY_TYPE",
                    "void expression may not be used as an associative array key",
                    a.span,
                ));
            }
            keys.push(k.ty);
        }
        let id = self.new_assoc(name, keys, ty.clone(), thread);
        let keys = self.keys(id, args, span)?;
        Ok(Some(Place::whole(
            PlaceBase::Assoc { var: id, keys },
            ty.clone(),
        )))
    }

    /// `sizeof expr`: the size of the expression's type (of the storage it names:
    /// `sizeof (curthread->comm)` is 16; of a string literal, its length and NUL).
    pub(crate) fn sizeof_expr(&mut self, inner: &ast::Expr, span: Span) -> Result<Expr> {
        // A string literal's size is its bytes and NUL, as in DTrace (`sizeof "hi"` is 3).
        if let A::Str(text) = &inner.kind {
            return Ok(int(text.len() as u64 + 1, types::ULONG, span));
        }
        if let A::Member { base, name, .. } = &inner.kind {
            if let Some(ty) = self.translated_member_type(base, name)? {
                let size = self.size_of(&ty, span)?;
                return Ok(int(size, types::ULONG, span));
            }
        }
        let ty = match self.place_of(inner)? {
            Some(p) => {
                if p.bitfield.is_some() {
                    return Err(CompileError::new(
                        "D_SIZEOF_BITFIELD",
                        "cannot apply sizeof to a bit-field",
                        span,
                    ));
                }
                p.ty
            }
            None => self.expr(inner)?.ty,
        };
        let size = self.size_of(&ty, span)?;
        Ok(int(size, types::ULONG, span))
    }

    /// The size of a value of `ty` (the `strsize` option for strings, as in DTrace).
    pub(crate) fn size_of(&self, ty: &Type, span: Span) -> Result<u64> {
        match ty {
            Type::String => Ok(self.strsize() as u64 - 1),
            Type::Opaque(name) if types::float_size(name).is_some() => Ok(ty.size()),
            Type::Opaque(_) | Type::Void => Err(CompileError::new(
                "D_SIZEOF_TYPE",
                "cannot apply sizeof to an operand of unknown size",
                span,
            )),
            other => Ok(other.size()),
        }
    }

    /// `offsetof(struct s, member)`: the byte offset of a member (a dotted path reaches
    /// into nested members).
    pub(crate) fn offsetof(&mut self, ty: &TypeName, member: &str, span: Span) -> Result<Expr> {
        let target = self.resolve_type(&ty.spec, &ty.declarator, ty.span)?;
        let Type::Struct(mut record) = target else {
            return Err(CompileError::new(
                "D_OFFSETOF_TYPE",
                "offsetof operand must be a struct or union type",
                span,
            ));
        };
        let not_found = || {
            CompileError::new(
                "D_UNKNOWN",
                format!("failed to determine offset of {member}: Member name not found"),
                span,
            )
        };
        let parts: Vec<&str> = member.split('.').collect();
        let mut offset = 0u64;
        for (i, part) in parts.iter().enumerate() {
            let m = self.member(&record, part).ok_or_else(not_found)?;
            if m.bitfield.is_some() {
                return Err(CompileError::new(
                    "D_OFFSETOF_BITFIELD",
                    format!("cannot take offset of a bit-field: {member}"),
                    span,
                ));
            }
            offset += m.offset;
            match m.ty {
                Type::Struct(r) => record = r,
                _ if i + 1 < parts.len() => return Err(not_found()),
                _ => {}
            }
        }
        let ty = super::expr::int_constant_type(offset, false, 0, true);
        Ok(int(offset, ty, span))
    }

    /// `stringof(e)`: a string as it is; a `char` array as its text; an integer or pointer
    /// as the address of a kernel string, or of a string in the traced process for a user
    /// address (`stringof(args[0]->label)`).
    pub(crate) fn stringof(&mut self, inner: &ast::Expr, span: Span) -> Result<Expr> {
        let v = self.expr(inner)?;
        if v.ty.is_string() {
            return Ok(v);
        }
        if !v.ty.is_scalar() {
            return Err(CompileError::new(
                "D_STRINGOF_TYPE",
                format!("cannot apply stringof to a value of type {}", v.ty),
                span,
            ));
        }
        if self.user_space(&v) {
            // A string in the traced process: read as copyinstr( ) reads it.
            let addr = convert(v, &types::builtin_typedef("uintptr_t").expect("uintptr_t"));
            return Ok(mk(
                ExprKind::Call(crate::ir::Subr::Copyinstr, vec![addr]),
                Type::String,
                span,
            ));
        }
        Ok(mk(ExprKind::Stringof(Box::new(v)), Type::String, span))
    }
}

/// Whether `e` names a kernel symbol or a member within one (`` `max_pfn ``,
/// `` `runqueues.nr_running ``): the kernel's variables are read, never written, as in
/// DTrace.
fn is_kernel_symbol(e: &ast::Expr) -> bool {
    match &e.kind {
        A::Symbol { .. } => true,
        A::Member {
            base, arrow: false, ..
        } => is_kernel_symbol(base),
        _ => false,
    }
}

/// `op` applied to a variable the program cannot write (DTrace does not name it).
fn read_only(op: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_OP_WRITE",
        format!("operator {op} can only be applied to a writable variable"),
        span,
    )
}

/// Whether `ty` is a struct or union known only by name.
fn is_forward(ty: &Type) -> bool {
    matches!(ty, Type::Opaque(n) if n.starts_with("struct ") || n.starts_with("union "))
}

/// `index * size` as a `long` (folded for constants).
fn scale(index: Expr, size: u64, span: Span) -> Expr {
    if size == 1 {
        return index;
    }
    if let ExprKind::Int(v) = index.kind {
        return int(v.wrapping_mul(size), types::LONG, span);
    }
    mk(
        ExprKind::Arith {
            op: ArithOp::Mul,
            lhs: Box::new(index),
            rhs: Box::new(int(size, types::LONG, span)),
        },
        types::LONG,
        span,
    )
}

/// `a + b` as a `long`.
fn add(a: Expr, b: Expr, span: Span) -> Expr {
    mk(
        ExprKind::Arith {
            op: ArithOp::Add,
            lhs: Box::new(a),
            rhs: Box::new(b),
        },
        types::LONG,
        span,
    )
}

/// A D variable's identity, for the set of those holding user addresses: its kind and id
/// (an associative array's, for its elements); None for memory.
pub(crate) fn var_key(base: &PlaceBase) -> Option<(u8, crate::ir::VarId)> {
    match base {
        PlaceBase::Global(id) => Some((0, *id)),
        PlaceBase::This(id) => Some((1, *id)),
        PlaceBase::Thread(id) => Some((2, *id)),
        PlaceBase::Assoc { var, .. } => Some((3, *var)),
        PlaceBase::Kernel(_) | PlaceBase::User(_) => None,
    }
}

/// What an untyped kernel symbol holds, as DTrace types a symbol its kernel's type data
/// does not describe: an address-sized integer (`*(T *)&`sym` reads it as a `T`).
const UNTYPED_SYMBOL: Type = Type::Int {
    size: 8,
    signed: false,
    name: "uintptr_t",
};

/// The place of the kernel symbol `` module`name ``: this CPU's instance of a per-CPU
/// variable (the only variables the kernel's BTF describes, and the kernel finds their
/// address itself); else, where the kernel's symbol table gives its address, the
/// [`UNTYPED_SYMBOL`] there; any other is refused in words.
fn symbol_place(module: Option<&str>, name: &str, span: Span) -> Result<Place> {
    let percpu = match module {
        None | Some("vmlinux") => {
            kernel::vmlinux().and_then(|btf| kernel::percpu_variable(btf, name))
        }
        Some(_) => None,
    };
    let table = kallsyms::table();
    let Some((id, ty)) = percpu else {
        return match table.address(module, name) {
            Some(address) => {
                let address = int(address, Type::Ptr(Box::new(UNTYPED_SYMBOL)), span);
                Ok(Place::whole(
                    PlaceBase::Kernel(Box::new(address)),
                    UNTYPED_SYMBOL,
                ))
            }
            None => Err(super::expr::symbol_error(module, name, span)),
        };
    };
    if !table.lists_data(name) {
        return Err(CompileError::new(
            "D_UNSUPPORTED",
            format!(
                "failed to resolve `{name}: this kernel's symbol table does not list it (data symbols are listed only in kernels built with CONFIG_KALLSYMS_ALL), so the kernel cannot find it for a program"
            ),
            span,
        ));
    }
    let address = mk(
        ExprKind::PercpuVariable(id),
        Type::Ptr(Box::new(ty.clone())),
        span,
    );
    Ok(Place::whole(PlaceBase::Kernel(Box::new(address)), ty))
}

/// Whether `ty` is a pointer to a struct or union of a user object's DWARF, directly or
/// through further pointers and arrays.
pub(super) fn points_to_user_type(ty: &Type) -> bool {
    let Type::Ptr(mut t) = ty.clone() else {
        return false;
    };
    loop {
        match *t {
            Type::Struct(r) => return crate::types::user::is_user(&r),
            Type::Ptr(inner) | Type::Array(inner, _) => t = inner,
            _ => return false,
        }
    }
}

//! Declarations and type names: variables (`int x;`, `self string s;`, `int a[string];`,
//! `this int t;`), D's own structs, unions, enums and typedefs, and `inline` definitions.
//!
//! D lays out structs and unions as CTF does (and so DTrace): members in order, each at
//! the end of the previous one rounded up to a byte and then to the member's alignment,
//! with no padding after the last member; a bit-field is an integer of its width, stored in
//! the smallest power-of-two number of bytes holding it, at the next byte (bit-fields are
//! not packed together). A struct's members live in [`ir::Program::records`], indexed by
//! its [`Record`] id minus [`D_RECORD_BASE`].

use std::collections::HashMap;

use dtrace_frontend::ast::{self, DeclaratorPart, ExprKind, StorageClass, TypeSpec};
use dtrace_frontend::{CompileError, Result, Span};

use super::scope::InlineArray;
use super::Cook;
use crate::builtins;
use crate::ir::{self, Member};
use crate::types::kernel::{self, Tag};
use crate::types::user;
use crate::types::{self, Record, Type, D_RECORD_BASE};

/// A typedef, resolved when used (so naming a kernel type in a library costs nothing until
/// a script needs it).
struct Typedef {
    spec: TypeSpec,
    parts: Vec<DeclaratorPart>,
    span: Span,
}

/// D's own type names.
#[derive(Default)]
pub(crate) struct Defs {
    /// `(union?, tag)` -> the record.
    tags: HashMap<(bool, String), Record>,
    typedefs: HashMap<String, Typedef>,
    anonymous: u32,
}

/// The largest array D declares (elements).
const ARRAY_MAX: u64 = u32::MAX as u64;

pub(super) fn struct_word(union: bool) -> &'static str {
    if union {
        "union"
    } else {
        "struct"
    }
}

/// A struct, union or enum tag without its module scope (`D`s`, `vmlinux`task_struct`).
fn unscoped(name: &str) -> &str {
    name.rsplit('`').next().unwrap_or(name)
}

/// Whether a scoped tag names the kernel's type (any module scope but D's own, `D`).
fn kernel_scope(name: &str) -> bool {
    name.split_once('`').is_some_and(|(scope, _)| scope != "D")
}

/// A member of a D or kernel struct or union, located.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct MemberAt {
    pub ty: Type,
    /// Byte offset from the start of the record.
    pub offset: u64,
    /// For a bit-field: its first bit (from that byte) and width.
    pub bitfield: Option<(u8, u8)>,
}

impl Cook<'_> {
    /// Resolve the type a specifier and declarator name.
    pub(crate) fn resolve_type(
        &self,
        spec: &TypeSpec,
        parts: &[DeclaratorPart],
        span: Span,
    ) -> Result<Type> {
        if let Some(err) = self.unknown_user_scope(spec, span) {
            return Err(err);
        }
        let base = match spec {
            TypeSpec::Builtin { words, .. } => types::from_words(words),
            TypeSpec::Named { name, .. } => match self.user_scoped(name) {
                Some(object) => user::named(&object, Tag::Typedef, unscoped(name)),
                None => {
                    // `vmlinux`pid_t`: the module scope names the kernel's types.
                    let name = unscoped(name);
                    if let Some(t) = self.d_typedef(name) {
                        return self.with_declarator(t?, parts, span);
                    }
                    types::builtin_typedef(name)
                        .or_else(|| {
                            kernel::vmlinux().and_then(|btf| kernel::named(btf, Tag::Typedef, name))
                        })
                        .or_else(|| self.clause_user_type(Tag::Typedef, name))
                }
            },
            // An enum the program defines is an int by its name; a kernel enum has its own
            // width.
            TypeSpec::Enum {
                name: Some(name), ..
            } if self.scope.enums.contains_key(name) => Some(Type::Int {
                size: 4,
                signed: true,
                name: kernel::intern(&format!("enum {name}")),
            }),
            TypeSpec::Enum {
                name: Some(name),
                variants: None,
                ..
            } => match self.user_scoped(name) {
                Some(object) => user::named(&object, Tag::Enum, unscoped(name)),
                None => Some(
                    kernel::vmlinux()
                        .and_then(|btf| kernel::named(btf, Tag::Enum, unscoped(name)))
                        .or_else(|| self.clause_user_type(Tag::Enum, unscoped(name)))
                        .unwrap_or(types::INT),
                ),
            },
            TypeSpec::Enum { .. } => Some(types::INT),
            TypeSpec::Struct {
                union,
                name: Some(name),
                ..
            } if self.d_struct(*union, unscoped(name)).is_some() && !kernel_scope(name) => {
                self.d_struct(*union, unscoped(name))
            }
            TypeSpec::Struct {
                union,
                name: Some(name),
                members: None,
                ..
            } if !name.starts_with("D`") => {
                let tag = if *union { Tag::Union } else { Tag::Struct };
                match self.user_scoped(name) {
                    Some(object) => user::named(&object, tag, unscoped(name)),
                    None => {
                        let name = unscoped(name);
                        // As in DTrace, a struct the kernel does not define is a forward
                        // declaration: pointers to it are fine, its members are not.
                        Some(
                            kernel::vmlinux()
                                .and_then(|btf| kernel::named(btf, tag, name))
                                .or_else(|| self.clause_user_type(tag, name))
                                .unwrap_or_else(|| {
                                    Type::Opaque(kernel::intern(&format!(
                                        "{} {name}",
                                        struct_word(*union)
                                    )))
                                }),
                        )
                    }
                }
            }
            _ => None,
        };
        let Some(ty) = base else {
            let shown = match spec {
                TypeSpec::Named { name, .. } => name.clone(),
                TypeSpec::Builtin { words, .. } => words.join(" "),
                TypeSpec::Struct {
                    union,
                    name: Some(name),
                    ..
                } => format!("{} {name}", struct_word(*union)),
                _ => "type".into(),
            };
            // A user object's type its DWARF lacks: why, when the object has none.
            let why = super::user_scope::scoped_name(spec)
                .and_then(|name| self.user_scoped(name))
                .and_then(|object| user::untyped(&object))
                .map_or_else(String::new, |why| format!(" ({why})"));
            return Err(CompileError::new(
                "D_UNKNOWN",
                format!("failed to resolve type {shown} : Unknown type name{why}"),
                span,
            ));
        };
        self.with_declarator(ty, parts, span)
    }

    /// `ty` with declarator parts applied, in their order from the base type outwards
    /// (`int m[3][4]` is three arrays of four, `int *a[2]` two pointers, `int (*p)[2]` a
    /// pointer to an array).
    fn with_declarator(&self, mut ty: Type, parts: &[DeclaratorPart], span: Span) -> Result<Type> {
        for part in parts {
            ty = match part {
                DeclaratorPart::Pointer { .. } => Type::Ptr(Box::new(ty)),
                DeclaratorPart::Array(Some(n)) => {
                    Type::Array(Box::new(ty), self.array_dimension(n)?)
                }
                DeclaratorPart::Array(None) => ty,
                DeclaratorPart::Function(_) => Type::Opaque(kernel::intern(&format!("{ty} ()"))),
                DeclaratorPart::AssocArray(_) => {
                    return Err(CompileError::new(
                        "D_DECL_DYNOBJ",
                        "associative arrays may only be declared as variables",
                        span,
                    ))
                }
            };
        }
        Ok(ty)
    }

    /// An array dimension: a positive integral constant expression.
    fn array_dimension(&self, n: &ast::Expr) -> Result<u32> {
        match self.int_constant(n) {
            Some(v) if v > 0 && v as u64 <= ARRAY_MAX => Ok(v as u32),
            Some(v) if v > 0 => Err(CompileError::new(
                "D_DECL_ARRBIG",
                "array dimension too big",
                n.span,
            )),
            _ => Err(CompileError::new(
                "D_DECL_ARRSUB",
                "positive integral constant expression or tuple signature expected as array declaration subscript",
                n.span,
            )),
        }
    }

    /// The D struct or union of this tag, if D defines one.
    pub(crate) fn d_struct(&self, union: bool, name: &str) -> Option<Type> {
        let key = (union, name.to_string());
        self.binary_defs()
            .and_then(|d| d.tags.get(&key))
            .or_else(|| self.defs.tags.get(&key))
            .map(|r| Type::Struct(r.clone()))
    }

    /// Whether D (the program or its library) defines typedef `name`.
    pub(crate) fn is_d_typedef(&self, name: &str) -> bool {
        self.binary_defs()
            .is_some_and(|d| d.typedefs.contains_key(name))
            || self.defs.typedefs.contains_key(name)
    }

    /// The type a D typedef names, if D defines `name`.
    pub(crate) fn d_typedef(&self, name: &str) -> Option<Result<Type>> {
        let t = self
            .binary_defs()
            .and_then(|d| d.typedefs.get(name))
            .or_else(|| self.defs.typedefs.get(name))?;
        Some(self.resolve_type(&t.spec, &t.parts, t.span))
    }

    /// Member `name` of a D, kernel or user struct or union.
    pub(crate) fn member(&self, record: &Record, name: &str) -> Option<MemberAt> {
        if record.is_d() {
            let r = self
                .prog
                .records
                .get((record.id - D_RECORD_BASE) as usize)?;
            return r.members.iter().find(|m| m.name == name).map(|m| MemberAt {
                ty: m.ty.clone(),
                offset: m.offset as u64,
                bitfield: m.bits.map(|w| (0, w)),
            });
        }
        let m = if crate::types::user::is_user(record) {
            crate::types::user::member(record, name)
        } else {
            kernel::member(kernel::vmlinux()?, record, name)
        };
        m.map(|m| MemberAt {
            ty: m.ty,
            offset: m.offset as u64,
            bitfield: m.bitfield,
        })
    }

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
                self.defs.anonymous += 1;
                format!("<anon{}>", self.defs.anonymous)
            }
        };
        let key = (*union, tag.clone());
        if self.defs.tags.contains_key(&key) {
            return Err(CompileError::new(
                "D_DECL_TYPERED",
                format!("type redeclared: {} {tag}", struct_word(*union)),
                span,
            ));
        }
        let mut laid: Vec<Member> = Vec::new();
        let mut end = 0u64;
        let mut size = 0u64;
        for decl in members {
            let spec = self.define_struct(&decl.spec, decl.span)?;
            self.define_enum(&spec)?;
            for d in &decl.declarators {
                let ty = self.resolve_type(&spec, &d.parts, d.span)?;
                let shown = if d.name.is_empty() {
                    "(anon)"
                } else {
                    d.name.as_str()
                };
                let bits = match &d.bitfield {
                    Some(width) => Some(self.bitfield_width(&ty, width, shown, d.span)?),
                    None => None,
                };
                if matches!(ty, Type::Void) || matches!(&ty, Type::Opaque(n) if n.ends_with("()")) {
                    return Err(CompileError::new(
                        "D_DECL_VOIDOBJ",
                        format!("cannot have void member: {}", d.name),
                        d.span,
                    ));
                }
                if let Type::Opaque(n) = &ty {
                    if types::float_size(n).is_none() {
                        return Err(incomplete(n, &d.name, d.span));
                    }
                }
                if !d.name.is_empty() && laid.iter().any(|m| m.name == d.name) {
                    return Err(CompileError::new(
                        "D_UNKNOWN",
                        format!(
                            "failed to define member '{}': Duplicate member or variable name",
                            d.name
                        ),
                        d.span,
                    ));
                }
                let (msize, malign) = match bits {
                    Some(w) => {
                        let bytes = (w as u64).div_ceil(8).next_power_of_two();
                        (bytes, bytes)
                    }
                    None if ty.is_string() => (self.strsize() as u64, 1),
                    None => (ty.size(), ty.align().max(1) as u64),
                };
                let offset = if *union {
                    0
                } else {
                    end.next_multiple_of(malign)
                };
                end = if *union {
                    0
                } else {
                    match bits {
                        // The next member starts after the bits used, rounded to a byte.
                        Some(w) => offset + (w as u64).div_ceil(8),
                        None => offset + msize,
                    }
                };
                size = size.max(offset + msize);
                laid.push(Member {
                    name: d.name.clone(),
                    ty,
                    offset: offset as u32,
                    bits,
                });
            }
        }
        let index = self.prog.records.len() as u32;
        let display = match name {
            Some(n) => format!("{} {n}", struct_word(*union)),
            None => format!("{} {{...}}", struct_word(*union)),
        };
        let record = Record {
            id: D_RECORD_BASE + index,
            name: kernel::intern(&display),
            size: size as u32,
        };
        self.prog.records.push(ir::DRecord {
            name: record.name,
            union: *union,
            size: record.size,
            members: laid,
        });
        self.defs.tags.insert(key, record);
        Ok(TypeSpec::Struct {
            union: *union,
            name: Some(tag),
            members: None,
            qualifiers: qualifiers.clone(),
        })
    }

    /// The width of a bit-field of type `ty`: a positive constant, at most the type's bits.
    fn bitfield_width(&self, ty: &Type, width: &ast::Expr, name: &str, span: Span) -> Result<u8> {
        let Type::Int { size, .. } = ty else {
            return Err(CompileError::new(
                "D_DECL_BFTYPE",
                format!("invalid type for bit-field: {name}"),
                span,
            ));
        };
        match self.int_constant(width) {
            Some(w) if w > 0 && w <= *size as i64 * 8 => Ok(w as u8),
            Some(w) if w > 0 => Err(CompileError::new(
                "D_DECL_BFSIZE",
                format!("bit-field too big for type: {name}"),
                span,
            )),
            _ => Err(CompileError::new(
                "D_DECL_BFCONST",
                "positive integral constant expression expected as bit-field size",
                width.span,
            )),
        }
    }

    /// Record `typedef spec declarators;` (each resolved when used).
    fn define_typedefs(&mut self, decl: &ast::Decl) -> Result<()> {
        let spec = self.define_struct(&decl.spec, decl.span)?;
        for d in &decl.declarators {
            if self.defs.typedefs.contains_key(&d.name) {
                return Err(CompileError::new(
                    "D_DECL_IDRED",
                    format!("typedef redeclared: {}", d.name),
                    d.span,
                ));
            }
            self.defs.typedefs.insert(
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

    /// Record the constants of an enum definition (`enum e { A, B = 5, C };`).
    fn define_enum(&mut self, spec: &TypeSpec) -> Result<()> {
        let TypeSpec::Enum {
            name: tag,
            variants: Some(variants),
            ..
        } = spec
        else {
            return Ok(());
        };
        let mut constants = Vec::new();
        let mut next = 0i64;
        let mut defined: Vec<&str> = Vec::new();
        for (name, value, span) in variants {
            // DTrace reports an enumerator's errors where the token after it is.
            let span = &Span::new(
                span.source,
                span.end.saturating_sub(1) as usize,
                span.end as usize,
            );
            if defined.contains(&name.as_str()) {
                return Err(CompileError::new(
                    "D_UNKNOWN",
                    format!(
                        "failed to define enumerator '{name}': Duplicate member or variable name"
                    ),
                    *span,
                ));
            }
            if self.scope.enum_constants.contains_key(name) {
                return Err(CompileError::new(
                    "D_DECL_IDRED",
                    format!("identifier redeclared: {name}"),
                    *span,
                ));
            }
            if let Some(v) = value {
                next = self.int_constant(v).ok_or_else(
                    || {
                        CompileError::new(
                            "D_DECL_ENCONST",
                            format!(
                                "enumerator '{name}' must be assigned to an integral constant expression"
                            ),
                            *span,
                        )
                    },
                )?;
            }
            if next > i32::MAX as i64 || next < i32::MIN as i64 {
                return Err(CompileError::new(
                    "D_DECL_ENOFLOW",
                    format!("enumerator '{name}' value overflows INT_MAX (2147483647)"),
                    *span,
                ));
            }
            self.scope.enum_constants.insert(name.clone(), next);
            constants.push((name.clone(), next));
            defined.push(name);
            next = next.wrapping_add(1);
        }
        if let Some(tag) = tag {
            self.scope.enums.insert(tag.clone(), constants);
        }
        Ok(())
    }

    /// A top-level declaration (`int x;`, `self string s;`, `int a[string, int];`,
    /// `struct s { ... };`, `typedef ...`).
    pub(crate) fn declare(&mut self, decl: &ast::Decl) -> Result<()> {
        self.define_enum(&decl.spec)?;
        if decl.class == Some(StorageClass::Typedef) {
            return self.define_typedefs(decl);
        }
        let spec = self.define_struct(&decl.spec, decl.span)?;
        if decl.declarators.is_empty()
            && !matches!(spec, TypeSpec::Struct { .. } | TypeSpec::Enum { .. })
        {
            return Err(CompileError::new(
                "D_DECL_USELESS",
                "useless declaration",
                decl.span,
            ));
        }
        if matches!(
            decl.class,
            Some(StorageClass::Register | StorageClass::Static)
        ) && decl.declarators.iter().any(|d| {
            !d.parts
                .iter()
                .any(|p| matches!(p, DeclaratorPart::Function(_)))
        }) {
            // A function declared `static` is an external one, as in C; objects live where
            // D puts them.
            return Err(CompileError::new(
                "D_DECL_BADCLASS",
                "specified storage class not appropriate in D",
                decl.span,
            ));
        }
        if decl.class == Some(StorageClass::Extern) {
            // `extern int x;` declares a kernel symbol's type: nothing to store in D.
            for d in &decl.declarators {
                let plain: Vec<DeclaratorPart> = d
                    .parts
                    .iter()
                    .filter(|p| !matches!(p, DeclaratorPart::Array(None)))
                    .cloned()
                    .collect();
                self.resolve_type(&spec, &plain, d.span)?;
            }
            return Ok(());
        }
        for d in &decl.declarators {
            if d.name.starts_with('`') || d.name.contains('`') {
                return Err(CompileError::new(
                    "D_DECL_SCOPE",
                    format!(
                        "D scoping operator may not be used in a declaration name ({})",
                        d.name
                    ),
                    d.span,
                ));
            }
            let assoc = d.parts.iter().find_map(|p| match p {
                DeclaratorPart::AssocArray(keys) => Some(keys),
                _ => None,
            });
            let plain: Vec<DeclaratorPart> = d
                .parts
                .iter()
                .filter(|p| !matches!(p, DeclaratorPart::AssocArray(_)))
                .cloned()
                .collect();
            if plain
                .iter()
                .any(|p| matches!(p, DeclaratorPart::Array(None)))
            {
                return Err(CompileError::new(
                    "D_DECL_ARRNULL",
                    format!(
                        "array declaration requires array dimension or tuple signature: {}",
                        d.name
                    ),
                    d.span,
                ));
            }
            let ty = self.resolve_type(&spec, &plain, d.span)?;
            if let Type::Opaque(n) = &ty {
                if n.starts_with("struct ") || n.starts_with("union ") {
                    return Err(incomplete(n, &d.name, d.span));
                }
            }
            match (decl.class, assoc) {
                (Some(StorageClass::This), Some(_)) => {
                    return Err(CompileError::new(
                        "D_DECL_LOCASSC",
                        format!(
                            "associative arrays may not be declared as local variables: {}",
                            d.name
                        ),
                        d.span,
                    ))
                }
                (Some(StorageClass::Self_), Some(keys)) => {
                    let keys = self.key_types(keys)?;
                    self.new_assoc(&d.name, keys, ty, true);
                }
                (Some(StorageClass::Self_), None) => {
                    self.new_thread(&d.name, ty);
                }
                (Some(StorageClass::This), None) => {
                    self.new_this(&d.name, ty);
                }
                (_, Some(keys)) => {
                    self.not_predefined(d)?;
                    let keys = self.key_types(keys)?;
                    self.new_assoc(&d.name, keys, ty, false);
                }
                _ => {
                    self.not_predefined(d)?;
                    if self.global(&d.name).is_some() {
                        return Err(CompileError::new(
                            "D_DECL_IDRED",
                            format!("identifier redeclared: {}", d.name),
                            d.span,
                        ));
                    }
                    self.new_global(&d.name, ty);
                }
            }
        }
        Ok(())
    }

    /// A global declaration may not name a predefined identifier of the program's D version.
    fn not_predefined(&self, d: &ast::Declarator) -> Result<()> {
        match self.predefined(&d.name) {
            Some(_) => Err(CompileError::new(
                "D_DECL_IDRED",
                format!("built-in identifier redeclared: {}", d.name),
                d.span,
            )),
            None => Ok(()),
        }
    }

    /// The key types of an associative array declaration.
    fn key_types(&self, keys: &[ast::TypeName]) -> Result<Vec<Type>> {
        keys.iter()
            .enumerate()
            .map(|(i, k)| {
                let ty = self.resolve_type(&k.spec, &k.declarator, k.span)?;
                if ty == Type::Void {
                    return Err(CompileError::new(
                        "D_DECL_PROTO_TYPE",
                        format!(
                            "array prototype may not use parameter of type void: (anonymous), parameter #{}",
                            i + 1
                        ),
                        k.span,
                    ));
                }
                Ok(ty)
            })
            .collect()
    }

    /// Record `inline type name = value;`.
    pub(crate) fn define_inline(&mut self, inline: &ast::Inline) -> Result<()> {
        // An inline with parameters: its value's type, and its keys' names and types.
        let (declarator, keys) = match inline.ty.declarator.split_last() {
            Some((DeclaratorPart::AssocArray(keys), rest)) if !inline.params.is_empty() => {
                let keys = keys
                    .iter()
                    .zip(&inline.params)
                    .map(|(k, name)| {
                        let ty = self.resolve_type(&k.spec, &k.declarator, k.span)?;
                        Ok((name.clone(), ty))
                    })
                    .collect::<Result<Vec<_>>>()?;
                (rest, Some(keys))
            }
            _ => (inline.ty.declarator.as_slice(), None),
        };
        let ty = self.resolve_type(&inline.ty.spec, declarator, inline.ty.span)?;
        let name = &inline.name;
        let previous = if self.scope.inlines.contains_key(name)
            || self.scope.inline_arrays.contains_key(name)
        {
            Some("scalar inline")
        } else if self.scope.enum_constants.contains_key(name) {
            Some("enumerator ")
        } else if self.global(name).is_some() || builtins::is_variable(name) {
            Some("scalar ")
        } else if self.assoc(name, false).is_some() {
            Some("associative array ")
        } else {
            builtins::identifier_kind(name)
        };
        if let Some(previous) = previous {
            return Err(CompileError::new(
                "D_DECL_IDRED",
                format!(
                    "identifier redefined: {name}\n\t current: inline definition\n\tprevious: {previous}"
                ),
                inline.span,
            ));
        }
        self.check_inline_idents(&inline.value, &inline.params)?;
        let value_type = match &inline.value.kind {
            ExprKind::Str(_) => Some("string"),
            ExprKind::Int { .. } | ExprKind::Char(_) => Some("int"),
            _ => None,
        };
        if let Some(value_type) = value_type {
            if ty.is_string() != (value_type == "string") {
                return Err(CompileError::new(
                    "D_OP_INCOMPAT",
                    format!(
                        "inline {name} definition uses incompatible types: \"{ty}\" = \"{value_type}\""
                    ),
                    inline.value.span,
                ));
            }
        }
        match keys {
            Some(keys) => {
                let array = InlineArray {
                    ty,
                    keys,
                    value: inline.value.clone(),
                };
                self.scope.inline_arrays.insert(name.clone(), array);
            }
            None => {
                self.scope
                    .inlines
                    .insert(name.clone(), (ty, inline.value.clone()));
            }
        }
        Ok(())
    }

    /// Every plain identifier in an inline's value must already name something: an inline,
    /// an enumerator, a declared variable, a built-in variable or `NULL`.
    fn check_inline_idents(&self, e: &ast::Expr, params: &[String]) -> Result<()> {
        let mut subexprs: Vec<&ast::Expr> = Vec::new();
        match &e.kind {
            ExprKind::Ident(name) => {
                let known = self.scope.inlines.contains_key(name)
                    || params.contains(name)
                    || self.scope.inline_arrays.contains_key(name)
                    || self.scope.enum_constants.contains_key(name)
                    || self.global(name).is_some()
                    || self.assoc(name, false).is_some()
                    || builtins::is_variable(name)
                    || name == "NULL";
                if !known {
                    return Err(CompileError::new(
                        "D_IDENT_UNDEF",
                        format!("failed to resolve {name}: Unknown variable name"),
                        e.span,
                    ));
                }
            }
            ExprKind::Unary { operand, .. }
            | ExprKind::Cast { operand, .. }
            | ExprKind::SizeofExpr(operand)
            | ExprKind::Stringof(operand) => subexprs.push(operand),
            ExprKind::Binary { lhs, rhs, .. }
            | ExprKind::Assign { lhs, rhs, .. }
            | ExprKind::Comma(lhs, rhs) => subexprs.extend([&**lhs, &**rhs]),
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
            } => subexprs.extend([&**cond, &**then, &**otherwise]),
            ExprKind::Call { args, .. } => subexprs.extend(args),
            _ => {}
        }
        subexprs
            .into_iter()
            .try_for_each(|sub| self.check_inline_idents(sub, params))
    }
}

/// DTrace's error for a member or variable of a struct or union type it has no definition
/// of.
fn incomplete(type_name: &str, name: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_DECL_INCOMPLETE",
        format!("incomplete struct/union/enum {type_name}: {name}"),
        span,
    )
}

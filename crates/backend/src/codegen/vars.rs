//! Variables of every scope: globals (one array map read by direct address), thread-locals
//! `self->` (a hash map per variable keyed by thread), clause-locals `this->` (per-CPU
//! scratch), associative arrays (a hash map per array keyed by the tuple), plus the
//! read-only data pool for string literals and macro arguments (`$1`, `$target`).
//!
//! As in DTrace, a variable takes the type of its declaration or first assignment, unset
//! values read as 0 or "", and storing 0 (or "") into a dynamic variable deletes it.

use std::collections::HashMap;

use dtrace_ebpf::*;
use dtrace_frontend::ast::{self, DeclaratorPart, ExprKind, StorageClass};
use dtrace_frontend::{CompileError, Result, Span};

use super::regs::{self, KEY_SLOT, SCRATCH};
use super::{Compiler, Gen, Val};
use crate::program::{MapId, MapKind, MapSpec};
use crate::types::{self, Type};

pub use dtrace_typing::macros::MacroArgs;

/// The read-only data map: a zero block (used to initialise map values and as ""), then
/// string literals, then `strsize` zero bytes so any literal can be read as a whole string.
#[derive(Default)]
pub struct Rodata {
    bytes: Vec<u8>,
    index: HashMap<Vec<u8>, u32>,
    zero_block: usize,
}

impl Rodata {
    /// Offset of the all-zero block at the start (also the empty string).
    pub const ZEROS: u32 = 0;

    fn ensure_zero_block(&mut self, size: usize) {
        if self.bytes.is_empty() {
            self.zero_block = size;
            self.bytes = vec![0; size];
        }
    }

    /// Offset of a NUL-terminated copy of `s`.
    pub fn string(&mut self, s: &[u8], zero_block: usize) -> u32 {
        self.ensure_zero_block(zero_block);
        if s.is_empty() {
            return Self::ZEROS;
        }
        if let Some(&off) = self.index.get(s) {
            return off;
        }
        let off = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s);
        self.bytes.push(0);
        self.index.insert(s.to_vec(), off);
        off
    }

    /// The map's contents, with `tail` zero bytes after the last literal.
    pub fn finish(mut self, tail: usize) -> Vec<u8> {
        self.ensure_zero_block(tail);
        self.bytes.resize(self.bytes.len() + tail, 0);
        self.bytes.resize(self.bytes.len().next_multiple_of(8), 0);
        self.bytes
    }
}

struct Global {
    ty: Type,
    offset: u32,
}

struct Assoc {
    keys: Vec<Type>,
    value: Type,
    map: MapId,
}

struct ThreadLocal {
    ty: Type,
    map: Option<MapId>,
}

/// All variables the program has declared or assigned.
pub struct Variables {
    globals: HashMap<String, Global>,
    globals_size: u32,
    assocs: HashMap<String, Assoc>,
    tlocals: HashMap<String, ThreadLocal>,
    this_types: HashMap<String, Type>,
    /// D's own structs, typedefs and translators.
    pub(crate) defs: super::translate::Defs,
}

/// Offset in the globals map of the tracing state word: 0 while active, 1 once `exit()` ran
/// (DTrace's draining state: from then on only END and ERROR clauses run).
pub const STATE_OFFSET: u32 = 0;

impl Default for Variables {
    fn default() -> Self {
        Variables {
            globals: HashMap::new(),
            // The state word comes first; user globals follow it.
            globals_size: STATE_OFFSET + 8,
            assocs: HashMap::new(),
            tlocals: HashMap::new(),
            this_types: HashMap::new(),
            defs: Default::default(),
        }
    }
}

impl Variables {
    pub fn globals_size(&self) -> u32 {
        self.globals_size
    }
}

/// Which variable an lvalue names.
pub(crate) enum VarRef<'e> {
    Global(&'e str),
    This(&'e str),
    SelfVar(&'e str),
    Assoc(&'e str, &'e [ast::Expr]),
    /// A thread-local associative array, `self->name[...]`.
    SelfAssoc(&'e str, &'e [ast::Expr]),
}

impl<'e> VarRef<'e> {
    /// The variable an expression names, if it names one.
    pub fn of(e: &'e ast::Expr) -> Option<VarRef<'e>> {
        match &e.kind {
            ExprKind::Ident(name) => Some(VarRef::Global(name)),
            ExprKind::ThisVar(name) => Some(VarRef::This(name)),
            ExprKind::SelfVar(name) => Some(VarRef::SelfVar(name)),
            ExprKind::Index { base, args } => match &base.kind {
                ExprKind::Ident(name) => Some(VarRef::Assoc(name, args)),
                ExprKind::SelfVar(name) => Some(VarRef::SelfAssoc(name, args)),
                _ => None,
            },
            _ => None,
        }
    }
}

impl Compiler<'_> {
    fn value_size(&self, ty: &Type) -> u32 {
        if ty.is_string() {
            self.opts.strsize
        } else {
            8
        }
    }

    pub(crate) fn rodata_string(&mut self, s: &[u8]) -> u32 {
        let zero = (self.opts.strsize as usize).max(super::aggregate::MAX_SLOTS * 8);
        self.rodata.string(s, zero)
    }

    pub(crate) fn new_global(&mut self, name: &str, ty: Type) {
        let size = self.value_size(&ty);
        let offset = self.vars.globals_size;
        self.vars.globals_size += size.next_multiple_of(8);
        self.vars
            .globals
            .insert(name.to_string(), Global { ty, offset });
    }

    fn dynamic_map(&mut self, name: String, key_size: u32, value: &Type) -> MapId {
        let value_size = self.value_size(value);
        let max_entries = self.opts.dynvar_entries;
        self.add_map(MapSpec {
            name,
            kind: MapKind::Hash,
            key_size,
            value_size,
            max_entries,
            initial: None,
            entries_per_cpu: 0,
        })
    }

    pub(crate) fn key_size(&self, keys: &[Type]) -> u32 {
        keys.iter().map(|t| self.value_size(t)).sum::<u32>().max(8)
    }

    /// Resolve the type a declaration names.
    pub(crate) fn resolve_type(
        &self,
        spec: &ast::TypeSpec,
        parts: &[DeclaratorPart],
        span: Span,
    ) -> Result<Type> {
        use types::kernel::{self, Tag};
        let base = match spec {
            ast::TypeSpec::Builtin { words, .. } => types::from_words(words),
            ast::TypeSpec::Named { name, .. } => {
                // `vmlinux`pid_t`: the module scope names the kernel's types.
                let name = name.rsplit('`').next().unwrap_or(name);
                if let Some(t) = self.d_typedef(name) {
                    return self.with_declarator(t?, parts);
                }
                types::builtin_typedef(name).or_else(|| {
                    kernel::vmlinux().and_then(|btf| kernel::named(btf, Tag::Typedef, name))
                })
            }
            // An enum the program defines is an int; a kernel enum has its own width.
            ast::TypeSpec::Enum {
                name: Some(name),
                variants: None,
                ..
            } => Some(
                kernel::vmlinux()
                    .and_then(|btf| kernel::named(btf, Tag::Enum, name))
                    .unwrap_or(types::INT),
            ),
            ast::TypeSpec::Enum { .. } => Some(types::INT),
            ast::TypeSpec::Struct {
                union,
                name: Some(name),
                ..
            } if self.d_struct(*union, name).is_some() => self.d_struct(*union, name),
            ast::TypeSpec::Struct {
                union,
                name: Some(name),
                members: None,
                ..
            } => {
                let tag = if *union { Tag::Union } else { Tag::Struct };
                // As in DTrace, a struct the kernel does not define is a forward
                // declaration: pointers to it are fine, its members are not.
                Some(
                    kernel::vmlinux()
                        .and_then(|btf| kernel::named(btf, tag, name))
                        .unwrap_or_else(|| {
                            let word = if *union { "union" } else { "struct" };
                            Type::Opaque(kernel::intern(&format!("{word} {name}")))
                        }),
                )
            }
            _ => None,
        };
        let Some(ty) = base else {
            return Err(CompileError::new(
                "D_TYPE_ERR",
                "type is not supported here yet",
                span,
            ));
        };
        self.with_declarator(ty, parts)
    }

    /// `ty` with declarator parts applied (pointers, then array dimensions).
    fn with_declarator(&self, mut ty: Type, parts: &[DeclaratorPart]) -> Result<Type> {
        // Array dimensions apply innermost last: `int a[2][3]` is two arrays of three.
        let mut dims = Vec::new();
        for part in parts {
            match part {
                DeclaratorPart::Pointer { .. } => ty = Type::Ptr(Box::new(ty)),
                DeclaratorPart::Array(Some(n)) => {
                    if let ExprKind::Int { value, .. } = n.kind {
                        dims.push(value as u32);
                    }
                }
                _ => {}
            }
        }
        for n in dims.into_iter().rev() {
            ty = Type::Array(Box::new(ty), n);
        }
        Ok(ty)
    }

    /// Record `inline type name = value;`.
    pub(crate) fn define_inline(&mut self, inline: &ast::Inline) -> Result<()> {
        let ty = self.resolve_type(&inline.ty.spec, &inline.ty.declarator, inline.ty.span)?;
        let previous = if self.inlines.contains_key(&inline.name) {
            Some("scalar inline")
        } else if self.enum_constants.contains_key(&inline.name) {
            Some("enumerator ")
        } else if self.vars.globals.contains_key(&inline.name)
            || BUILTIN_VARIABLES.contains(&inline.name.as_str())
            || (inline.name.starts_with("arg")
                && inline.name[3..].parse::<u8>().is_ok_and(|n| n < 10))
        {
            Some("scalar ")
        } else if self.vars.assocs.contains_key(&inline.name) {
            Some("associative array ")
        } else {
            identifier_kind(&inline.name)
        };
        if let Some(previous) = previous {
            return Err(CompileError::new(
                "D_DECL_IDRED",
                format!(
                    "identifier redefined: {}\n\t current: inline definition\n\tprevious: {previous}",
                    inline.name
                ),
                inline.span,
            ));
        }
        self.check_inline_idents(&inline.value)?;
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
                        "inline {} definition uses incompatible types: \"{ty}\" = \"{value_type}\"",
                        inline.name
                    ),
                    inline.value.span,
                ));
            }
        }
        self.inlines
            .insert(inline.name.clone(), (ty, inline.value.clone()));
        Ok(())
    }

    /// Every plain identifier in an inline's value must already name something: an inline,
    /// an enumerator, a declared variable or a built-in variable.
    fn check_inline_idents(&self, e: &ast::Expr) -> Result<()> {
        let mut subexprs: Vec<&ast::Expr> = Vec::new();
        match &e.kind {
            ExprKind::Ident(name) => {
                let known = self.inlines.contains_key(name)
                    || self.enum_constants.contains_key(name)
                    || self.vars.globals.contains_key(name)
                    || self.vars.assocs.contains_key(name)
                    || BUILTIN_VARIABLES.contains(&name.as_str())
                    || (name.starts_with("arg") && name[3..].parse::<u8>().is_ok_and(|n| n < 10));
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
            .try_for_each(|sub| self.check_inline_idents(sub))
    }

    /// Record the constants of an enum definition (`enum e { A, B = 5, C };`).
    fn define_enum(&mut self, spec: &ast::TypeSpec) -> Result<()> {
        let ast::TypeSpec::Enum {
            variants: Some(variants),
            ..
        } = spec
        else {
            return Ok(());
        };
        let mut next = 0i64;
        for (name, value, span) in variants {
            if self.enum_constants.contains_key(name) {
                return Err(CompileError::new(
                    "D_DECL_IDRED",
                    format!("identifier redeclared: {name}"),
                    *span,
                ));
            }
            if let Some(v) = value {
                next = self.enum_value(v).ok_or_else(|| {
                    CompileError::new(
                        "D_DECL_ENCONST",
                        format!(
                            "enumerator '{name}' must be assigned an integral constant expression"
                        ),
                        *span,
                    )
                })?;
            }
            self.enum_constants.insert(name.clone(), next);
            next = next.wrapping_add(1);
        }
        Ok(())
    }

    /// The value of an enumerator's integral constant expression: integer and character
    /// constants, enumerators defined before it, and the arithmetic, bitwise, relational
    /// and logical operators on them.
    fn enum_value(&self, e: &ast::Expr) -> Option<i64> {
        use ast::{BinaryOp as B, UnaryOp as U};
        match &e.kind {
            ExprKind::Ident(name) => self.enum_constants.get(name).copied(),
            ExprKind::Unary { op, operand } => {
                let v = self.enum_value(operand)?;
                match op {
                    U::Neg => Some(v.wrapping_neg()),
                    U::Plus => Some(v),
                    U::BitNot => Some(!v),
                    U::Not => Some((v == 0) as i64),
                    _ => None,
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (a, b) = (self.enum_value(lhs)?, self.enum_value(rhs)?);
                Some(match op {
                    B::Mul => a.wrapping_mul(b),
                    B::Div => a.checked_div(b)?,
                    B::Mod => a.checked_rem(b)?,
                    B::Add => a.wrapping_add(b),
                    B::Sub => a.wrapping_sub(b),
                    B::Shl => a.wrapping_shl(b as u32),
                    B::Shr => a.wrapping_shr(b as u32),
                    B::Lt => (a < b) as i64,
                    B::Le => (a <= b) as i64,
                    B::Gt => (a > b) as i64,
                    B::Ge => (a >= b) as i64,
                    B::Eq => (a == b) as i64,
                    B::Ne => (a != b) as i64,
                    B::BitAnd => a & b,
                    B::BitXor => a ^ b,
                    B::BitOr => a | b,
                    B::LogAnd => (a != 0 && b != 0) as i64,
                    B::LogXor => ((a != 0) != (b != 0)) as i64,
                    B::LogOr => (a != 0 || b != 0) as i64,
                })
            }
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
            } => {
                if self.enum_value(cond)? != 0 {
                    self.enum_value(then)
                } else {
                    self.enum_value(otherwise)
                }
            }
            _ => super::aggregate::constant(e),
        }
    }

    /// Record a top-level declaration (`int x;`, `self string s;`, `int a[string, int];`).
    pub(crate) fn declare(&mut self, decl: &ast::Decl) -> Result<()> {
        self.define_enum(&decl.spec)?;
        if decl.class == Some(StorageClass::Typedef) {
            return self.define_typedefs(decl);
        }
        let spec = self.define_struct(&decl.spec, decl.span)?;
        let decl = &ast::Decl {
            spec,
            ..decl.clone()
        };
        for d in &decl.declarators {
            let plain: Vec<DeclaratorPart> = d
                .parts
                .iter()
                .filter(|p| !matches!(p, DeclaratorPart::AssocArray(_)))
                .cloned()
                .collect();
            let ty = self.resolve_type(&decl.spec, &plain, d.span)?;
            let assoc = d.parts.iter().find_map(|p| match p {
                DeclaratorPart::AssocArray(keys) => Some(keys),
                _ => None,
            });
            match (decl.class, assoc) {
                (Some(StorageClass::Self_), _) => {
                    self.vars
                        .tlocals
                        .insert(d.name.clone(), ThreadLocal { ty, map: None });
                }
                (Some(StorageClass::This), _) => {
                    self.vars.this_types.insert(d.name.clone(), ty);
                }
                (_, Some(keys)) => {
                    let keys = keys
                        .iter()
                        .map(|k| self.resolve_type(&k.spec, &k.declarator, k.span))
                        .collect::<Result<Vec<_>>>()?;
                    let key_size = self.key_size(&keys);
                    let map = self.dynamic_map(format!("dt_a_{}", d.name), key_size, &ty);
                    self.vars.assocs.insert(
                        d.name.clone(),
                        Assoc {
                            keys,
                            value: ty,
                            map,
                        },
                    );
                }
                _ => {
                    if self.vars.globals.contains_key(&d.name) {
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

    pub(crate) fn is_global(&self, name: &str) -> bool {
        self.vars.globals.contains_key(name)
    }

    pub(crate) fn is_assoc(&self, name: &str) -> bool {
        self.vars.assocs.contains_key(name)
    }
}

fn incompatible(op: &str, want: &Type, got: &Type, span: Span) -> CompileError {
    CompileError::new(
        "D_OP_INCOMPAT",
        format!("operands have incompatible types: \"{want}\" {op} \"{got}\""),
        span,
    )
}

/// The table name of the thread-local associative array `self->name[...]`.
fn self_assoc_name(name: &str) -> String {
    format!("self->{name}")
}

fn undefined(name: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_IDENT_UNDEF",
        format!("failed to resolve {name}: Unknown variable name"),
        span,
    )
}

impl Gen<'_, '_> {
    /// Read a variable; unset dynamic variables read as 0 or "".
    pub(crate) fn load_var(&mut self, var: VarRef<'_>, span: Span) -> Result<Val> {
        match var {
            VarRef::Global(name) => {
                let Some(g) = self.c.vars.globals.get(name) else {
                    return Err(undefined(name, span));
                };
                let (ty, offset) = (g.ty.clone(), g.offset);
                let v = self.push(span)?;
                self.e.ld_map_value(R1, self.c.core.globals, offset);
                if !ty.is_string() {
                    self.e.emit(Insn::ldx(Size::DW, R1, R1, 0));
                }
                regs::write(&mut self.e, v, R1);
                Ok(Val { reg: v, ty })
            }
            VarRef::This(name) => {
                let Some(ty) = self.c.vars.this_types.get(name).cloned() else {
                    return Err(undefined(&format!("this->{name}"), span));
                };
                let off = self.this_offset(name, &ty);
                let v = self.push(span)?;
                self.scratch_addr(R1, off);
                if !ty.is_string() {
                    self.e.emit(Insn::ldx(Size::DW, R1, R1, 0));
                }
                regs::write(&mut self.e, v, R1);
                Ok(Val { reg: v, ty })
            }
            VarRef::SelfVar(name) => {
                let Some(t) = self.c.vars.tlocals.get(name) else {
                    return Err(undefined(&format!("self->{name}"), span));
                };
                let ty = t.ty.clone();
                let map = self.tlocal_map(name);
                self.thread_key();
                self.e.emit(Insn::mov64_reg(R2, R10));
                self.e.emit(Insn::alu64_imm(BPF_ADD, R2, KEY_SLOT as i32));
                self.lookup_value(map, ty, span)
            }
            VarRef::Assoc(name, args) => {
                let Some(a) = self.c.vars.assocs.get(name) else {
                    return Err(undefined(name, span));
                };
                let (keys, ty, map) = (a.keys.clone(), a.value.clone(), a.map);
                let key = self.build_key(args, &keys, span)?;
                self.scratch_addr(R2, key);
                self.lookup_value(map, ty, span)
            }
            VarRef::SelfAssoc(name, args) => {
                let Some(a) = self.c.vars.assocs.get(&self_assoc_name(name)) else {
                    return Err(undefined(&format!("self->{name}"), span));
                };
                let (keys, ty, map) = (a.keys.clone(), a.value.clone(), a.map);
                let key = self.build_key_for(args, &keys, span, true)?;
                self.scratch_addr(R2, key);
                self.lookup_value(map, ty, span)
            }
        }
    }

    /// `lookup(map, r2)`: the value (or 0 / "" when absent) in a new virtual register.
    fn lookup_value(&mut self, map: MapId, ty: Type, span: Span) -> Result<Val> {
        self.e.ld_map(R1, map);
        self.e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
        let v = self.push(span)?;
        let found = self.e.label();
        let done = self.e.label();
        self.e.jmp_imm(BPF_JNE, R0, 0, found);
        if ty.is_string() {
            self.e
                .ld_map_value(R0, self.c.core.rodata, super::vars::Rodata::ZEROS);
        }
        self.e.goto(done);
        self.e.bind(found);
        if !ty.is_string() {
            self.e.emit(Insn::ldx(Size::DW, R0, R0, 0));
        }
        self.e.bind(done);
        regs::write(&mut self.e, v, R0);
        Ok(Val { reg: v, ty })
    }

    /// Store `val` into a variable, converting it to the variable's type; `val` keeps the
    /// stored value.
    pub(crate) fn store_var(&mut self, var: VarRef<'_>, val: &Val, span: Span) -> Result<()> {
        match var {
            VarRef::Global(name) => {
                if !self.c.vars.globals.contains_key(name) {
                    if self.is_builtin(name) {
                        return Err(CompileError::new(
                            "D_OP_WRITE",
                            format!("operator = can only be applied to a writable variable: {name} is read-only"),
                            span,
                        ));
                    }
                    self.c.new_global(name, val.ty.clone());
                }
                let g = &self.c.vars.globals[name];
                let (ty, offset) = (g.ty.clone(), g.offset);
                self.check_assignable(&ty, &val.ty, span)?;
                self.convert(val, &ty);
                self.e.ld_map_value(R1, self.c.core.globals, offset);
                self.store_at(R1, val, &ty);
                Ok(())
            }
            VarRef::This(name) => {
                let ty = self
                    .c
                    .vars
                    .this_types
                    .entry(name.to_string())
                    .or_insert_with(|| val.ty.clone())
                    .clone();
                self.check_assignable(&ty, &val.ty, span)?;
                self.convert(val, &ty);
                let off = self.this_offset(name, &ty);
                self.scratch_addr(R1, off);
                self.store_at(R1, val, &ty);
                Ok(())
            }
            VarRef::SelfVar(name) => {
                let ty = self
                    .c
                    .vars
                    .tlocals
                    .entry(name.to_string())
                    .or_insert_with(|| ThreadLocal {
                        ty: val.ty.clone(),
                        map: None,
                    })
                    .ty
                    .clone();
                self.check_assignable(&ty, &val.ty, span)?;
                self.convert(val, &ty);
                let map = self.tlocal_map(name);
                self.thread_key();
                self.e.emit(Insn::mov64_reg(R2, R10));
                self.e.emit(Insn::alu64_imm(BPF_ADD, R2, KEY_SLOT as i32));
                self.update_or_delete(map, val, &ty);
                Ok(())
            }
            VarRef::SelfAssoc(name, args) => {
                let full = self_assoc_name(name);
                if !self.c.vars.assocs.contains_key(&full) {
                    let mut keys = Vec::new();
                    for a in args {
                        keys.push(self.type_of(a)?);
                    }
                    let key_size = self.c.key_size(&keys) + 8;
                    let map = self
                        .c
                        .dynamic_map(format!("dt_ta_{name}"), key_size, &val.ty);
                    self.c.vars.assocs.insert(
                        full.clone(),
                        Assoc {
                            keys,
                            value: val.ty.clone(),
                            map,
                        },
                    );
                }
                let a = &self.c.vars.assocs[&full];
                let (keys, ty, map) = (a.keys.clone(), a.value.clone(), a.map);
                self.check_assignable(&ty, &val.ty, span)?;
                self.convert(val, &ty);
                let key = self.build_key_for(args, &keys, span, true)?;
                self.scratch_addr(R2, key);
                self.update_or_delete(map, val, &ty);
                Ok(())
            }
            VarRef::Assoc(name, args) => {
                if !self.c.vars.assocs.contains_key(name) {
                    if self.c.vars.globals.contains_key(name) {
                        return Err(CompileError::new(
                            "D_IDENT_BADREF",
                            format!("{name} is not an associative array"),
                            span,
                        ));
                    }
                    let mut keys = Vec::new();
                    for a in args {
                        keys.push(self.type_of(a)?);
                    }
                    let key_size = self.c.key_size(&keys);
                    let map = self
                        .c
                        .dynamic_map(format!("dt_a_{name}"), key_size, &val.ty);
                    self.c.vars.assocs.insert(
                        name.to_string(),
                        Assoc {
                            keys,
                            value: val.ty.clone(),
                            map,
                        },
                    );
                }
                let a = &self.c.vars.assocs[name];
                let (keys, ty, map) = (a.keys.clone(), a.value.clone(), a.map);
                self.check_assignable(&ty, &val.ty, span)?;
                self.convert(val, &ty);
                let key = self.build_key(args, &keys, span)?;
                self.scratch_addr(R2, key);
                self.update_or_delete(map, val, &ty);
                Ok(())
            }
        }
    }

    fn check_assignable(&self, var: &Type, val: &Type, span: Span) -> Result<()> {
        if var.is_string() != val.is_string() {
            return Err(incompatible("=", var, val, span));
        }
        Ok(())
    }

    /// Write a scalar (8 bytes) or copy a string to `[dst]`.
    fn store_at(&mut self, dst: Reg, val: &Val, ty: &Type) {
        if ty.is_string() {
            if dst != R1 {
                self.e.emit(Insn::mov64_reg(R1, dst));
            }
            regs::read_into(&mut self.e, val.reg, R3);
            self.e.emit(Insn::mov64_imm(R2, self.strsize() as i32));
            self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
        } else {
            let r = regs::read(&mut self.e, val.reg, R2);
            self.e.emit(Insn::stx(Size::DW, dst, 0, r));
        }
    }

    /// With the key pointer in r2: delete the entry if the value is 0 / "", else update it.
    fn update_or_delete(&mut self, map: MapId, val: &Val, ty: &Type) {
        let delete = self.e.label();
        let done = self.e.label();
        self.e.emit(Insn::mov64_reg(R5, R2));
        if ty.is_string() {
            let p = regs::read(&mut self.e, val.reg, R3);
            self.e.emit(Insn::ldx(Size::B, R0, p, 0));
            self.e.jmp_imm(BPF_JEQ, R0, 0, delete);
            regs::read_into(&mut self.e, val.reg, R3);
        } else {
            let r = regs::read(&mut self.e, val.reg, R3);
            self.e.jmp_imm(BPF_JEQ, r, 0, delete);
            let tmp = self.scratch(8);
            self.e
                .emit(Insn::stx(Size::DW, SCRATCH, self.small(tmp), r));
            self.scratch_addr(R3, tmp);
        }
        self.e.ld_map(R1, map);
        self.e.emit(Insn::mov64_reg(R2, R5));
        self.e.emit(Insn::mov64_imm(R4, 0));
        self.e.emit(Insn::call(helpers::MAP_UPDATE_ELEM));
        self.e.jmp_imm(BPF_JEQ, R0, 0, done);
        self.count_drop(crate::program::DropKind::Dynamic);
        self.e.goto(done);
        self.e.bind(delete);
        self.e.ld_map(R1, map);
        self.e.emit(Insn::mov64_reg(R2, R5));
        self.e.emit(Insn::call(helpers::MAP_DELETE_ELEM));
        self.e.bind(done);
    }

    /// Store the current thread id at `fp + KEY_SLOT`.
    fn thread_key(&mut self) {
        self.e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
        self.e.emit(Insn::stx(Size::DW, R10, KEY_SLOT, R0));
    }

    fn tlocal_map(&mut self, name: &str) -> MapId {
        let t = &self.c.vars.tlocals[name];
        if let Some(map) = t.map {
            return map;
        }
        let ty = t.ty.clone();
        let map = self.c.dynamic_map(format!("dt_s_{name}"), 8, &ty);
        self.c.vars.tlocals.get_mut(name).expect("declared").map = Some(map);
        map
    }

    fn this_offset(&mut self, name: &str, ty: &Type) -> u32 {
        if let Some(&off) = self.this_offsets.get(name) {
            return off;
        }
        let size = self.c.value_size(ty);
        let off = self.scratch(size);
        self.this_offsets.insert(name.to_string(), off);
        off
    }

    /// `dst = scratch + off`
    pub(crate) fn scratch_addr(&mut self, dst: Reg, off: u32) {
        self.e.emit(Insn::mov64_reg(dst, SCRATCH));
        if off != 0 {
            self.e.emit(Insn::alu64_imm(BPF_ADD, dst, off as i32));
        }
    }

    /// A scratch offset as an instruction's 16-bit displacement. Programs whose scratch
    /// grows past 32 KiB are refused when they are finished, so truncation never reaches
    /// the kernel.
    pub(crate) fn small(&self, off: u32) -> i16 {
        off as i16
    }

    /// Evaluate `args` into a key tuple of `types` in scratch; returns its offset.
    pub(crate) fn build_key(
        &mut self,
        args: &[ast::Expr],
        types: &[Type],
        span: Span,
    ) -> Result<u32> {
        self.build_key_for(args, types, span, false)
    }

    /// [`Gen::build_key`]; with `thread`, the key starts with the current thread's id (the
    /// key of a thread-local associative array).
    fn build_key_for(
        &mut self,
        args: &[ast::Expr],
        types: &[Type],
        span: Span,
        thread: bool,
    ) -> Result<u32> {
        if args.len() != types.len() {
            return Err(CompileError::new(
                "D_ARR_BADREF",
                format!(
                    "tuple has {} elements; {} expected",
                    args.len(),
                    types.len()
                ),
                span,
            ));
        }
        let mut vals = Vec::new();
        for (a, want) in args.iter().zip(types) {
            let v = self.expr(a)?;
            if v.ty.is_string() != want.is_string() {
                return Err(CompileError::new(
                    "D_ARR_BADREF",
                    format!("key expression has type {}; {want} expected", v.ty),
                    a.span,
                ));
            }
            vals.push(v);
        }
        let size = self.c.key_size(types) + if thread { 8 } else { 0 };
        let key = self.scratch(size);
        if args.is_empty() {
            self.e.emit(Insn::st(Size::DW, SCRATCH, self.small(key), 0));
        }
        let mut off = key;
        if thread {
            self.e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
            self.e
                .emit(Insn::stx(Size::DW, SCRATCH, self.small(off), R0));
            off += 8;
        }
        for v in &vals {
            if v.ty.is_string() {
                self.zero_scratch(off, self.strsize());
                self.scratch_addr(R1, off);
                self.store_at(R1, v, &Type::String);
                off += self.strsize();
            } else {
                let r = regs::read(&mut self.e, v.reg, R1);
                self.e
                    .emit(Insn::stx(Size::DW, SCRATCH, self.small(off), r));
                off += 8;
            }
        }
        for v in vals.iter().rev() {
            self.pop(v.reg);
        }
        Ok(key)
    }

    /// Zero `len` bytes (a multiple of 8) of scratch at `off`.
    pub(crate) fn zero_scratch(&mut self, off: u32, len: u32) {
        for i in (0..len).step_by(8) {
            self.e
                .emit(Insn::st(Size::DW, SCRATCH, self.small(off + i), 0));
        }
    }
}

/// DTrace's built-in variables (besides `arg0`..`arg9`), which an inline cannot redefine.
const BUILTIN_VARIABLES: &[&str] = &[
    "args",
    "caller",
    "chip",
    "cpu",
    "curcpu",
    "curthread",
    "cwd",
    "epid",
    "errno",
    "execargs",
    "execname",
    "gid",
    "id",
    "ipl",
    "lgrp",
    "pid",
    "ppid",
    "probefunc",
    "probemod",
    "probename",
    "probeprov",
    "pset",
    "root",
    "stackdepth",
    "tid",
    "timestamp",
    "ucaller",
    "uid",
    "uregs",
    "ustackdepth",
    "vtimestamp",
    "walltimestamp",
];

/// How DTrace describes a predefined function identifier in a redefinition message: its
/// kind followed by a blank (the blank stands for "not an inline").
fn identifier_kind(name: &str) -> Option<&'static str> {
    const SUBROUTINES: &[&str] = &[
        "alloca",
        "basename",
        "bcopy",
        "cleanpath",
        "copyin",
        "copyinstr",
        "copyinto",
        "copyout",
        "copyoutstr",
        "d_path",
        "dirname",
        "getmajor",
        "getminor",
        "htonl",
        "htonll",
        "htons",
        "index",
        "inet_ntoa",
        "inet_ntoa6",
        "inet_ntop",
        "link_ntop",
        "lltostr",
        "msgdsize",
        "msgsize",
        "mutex_owned",
        "mutex_owner",
        "mutex_type_adaptive",
        "mutex_type_spin",
        "ntohl",
        "ntohll",
        "ntohs",
        "progenyof",
        "rand",
        "rindex",
        "rw_iswriter",
        "rw_read_held",
        "rw_write_held",
        "speculation",
        "strchr",
        "strjoin",
        "strlen",
        "strrchr",
        "strstr",
        "strtok",
        "strtoll",
        "substr",
        "tolower",
        "toupper",
    ];
    const ACTIONS: &[&str] = &[
        "breakpoint",
        "chill",
        "clear",
        "commit",
        "denormalize",
        "discard",
        "exit",
        "freopen",
        "ftruncate",
        "func",
        "jstack",
        "mod",
        "normalize",
        "panic",
        "print",
        "printa",
        "printf",
        "raise",
        "setopt",
        "speculate",
        "stack",
        "stop",
        "sym",
        "symaddr",
        "system",
        "trace",
        "tracemem",
        "trunc",
        "uaddr",
        "ufunc",
        "umod",
        "usym",
        "ustack",
    ];
    const AGGREGATING: &[&str] = &[
        "avg",
        "count",
        "llquantize",
        "lquantize",
        "max",
        "min",
        "quantize",
        "stddev",
        "sum",
    ];
    if SUBROUTINES.contains(&name) {
        Some("function ")
    } else if ACTIONS.contains(&name) {
        Some("tracing function ")
    } else if AGGREGATING.contains(&name) {
        Some("aggregating function ")
    } else {
        None
    }
}

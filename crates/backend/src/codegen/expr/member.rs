//! Kernel memory in expressions: member access (`p->m`, `s.m`), array and pointer indexing
//! (`curthread->comm[0]`, `p[i]`), dereference (`*p`), `stringof`, and `sizeof`/`offsetof`
//! of kernel types.
//!
//! An expression naming kernel memory is first compiled to a [`Place`]: a register holding
//! the address plus the object's type; member offsets and element sizes are constants from
//! BTF, so a chain like `curthread->real_parent->comm` is one address computation per `->`.
//! A place becomes a value only when it is used ([`Gen::load_place`]): integers, enums and
//! pointers are read with `bpf_probe_read_kernel` (a bitfield is shifted and masked), a
//! `char` array is copied as a string with `bpf_probe_read_kernel_str` (so `comm` works
//! with `printf("%s")`, `trace`, `==` and as a key), other arrays decay to a pointer to
//! their first element, as in C. A read that fails (a bad or NULL pointer) raises DTrace's
//! "invalid address" fault: the ERROR probe fires and the clause is abandoned, and the
//! script goes on.
//!
//! Structs D defines (see `translate`) are places too: their members come from the D
//! definition instead of BTF, and they are read the same way (a translated struct lives
//! in scratch memory, which `bpf_probe_read_kernel` reads like any kernel memory).

use dtrace_ebpf::*;
use dtrace_frontend::ast::{Expr, ExprKind, TypeName, UnaryOp};
use dtrace_frontend::{CompileError, Result, Span};

use super::super::fault::FaultSite;
use super::super::regs::{self, VReg, KEY_SLOT};
use super::super::{Gen, Val};
use crate::program::Fault;
use crate::types::kernel;
use crate::types::{self, Type};

/// An object in kernel memory: its address (in `reg`) and type; a bitfield also has its
/// first bit (from the addressed byte) and width.
pub(crate) struct Place {
    pub reg: VReg,
    pub ty: Type,
    pub bitfield: Option<(u8, u8)>,
}

impl Gen<'_, '_> {
    /// Whether `e` names kernel memory: a member, an element of a kernel array or pointer,
    /// or a dereference.
    pub(crate) fn is_place(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Member { .. } => true,
            ExprKind::Unary {
                op: UnaryOp::Deref, ..
            } => true,
            ExprKind::Index { base, .. } => match &base.kind {
                ExprKind::Ident(name) => {
                    name != "args" && !self.c.is_assoc(name) && self.c.is_global(name)
                }
                ExprKind::SelfVar(_) | ExprKind::Aggregation(_) => false,
                ExprKind::Index { base: inner, .. } => {
                    !matches!(inner.kind, ExprKind::Aggregation(_))
                }
                _ => true,
            },
            _ => false,
        }
    }

    /// The value of the kernel memory `e` names (see [`Gen::is_place`]).
    pub(crate) fn place_value(&mut self, e: &Expr) -> Result<Val> {
        let p = self.place(e)?;
        self.load_place(p, e.span)
    }

    /// Compile `e`, which names kernel memory, to its address and type.
    pub(crate) fn place(&mut self, e: &Expr) -> Result<Place> {
        match &e.kind {
            ExprKind::Member { base, name, arrow } => self.member_place(base, name, *arrow, e.span),
            ExprKind::Index { base, args } => self.index_place(base, args, e.span),
            ExprKind::Unary {
                op: UnaryOp::Deref,
                operand,
            } => self.deref_place(operand, e.span),
            _ => Err(super::unsupported("this expression as an object", e.span)),
        }
    }

    /// `*operand`: the object a pointer points to.
    pub(crate) fn deref_place(&mut self, operand: &Expr, span: Span) -> Result<Place> {
        let p = self.expr(operand)?;
        let Type::Ptr(inner) = &p.ty else {
            return Err(CompileError::new(
                "D_DEREF_NONPTR",
                format!(
                    "operator * requires an operand of pointer type; found {}",
                    p.ty
                ),
                span,
            ));
        };
        Ok(Place {
            reg: p.reg,
            ty: (**inner).clone(),
            bitfield: None,
        })
    }

    /// `base->name` or `base.name`.
    fn member_place(&mut self, base: &Expr, name: &str, arrow: bool, span: Span) -> Result<Place> {
        let op = if arrow { "->" } else { "." };
        let (reg, container) = if arrow {
            let v = self.expr(base)?;
            match v.ty {
                Type::Ptr(inner) => (v.reg, *inner),
                _ => {
                    return Err(CompileError::new(
                        "D_OP_PTR",
                        "operator -> must be applied to a pointer",
                        span,
                    ))
                }
            }
        } else if self.is_place(base) {
            let p = self.place(base)?;
            (p.reg, p.ty)
        } else {
            let ty = self.type_of(base)?;
            return Err(not_record(op, &ty, span));
        };
        let record = match container {
            Type::Struct(r) => r,
            Type::Opaque(tag) if tag.starts_with("struct ") || tag.starts_with("union ") => {
                return Err(CompileError::new(
                    "D_OP_INCOMPLETE",
                    format!(
                        "operator {op} cannot be applied to a forward declaration: no {tag} definition is available"
                    ),
                    span,
                ))
            }
            other => return Err(not_record(op, &other, span)),
        };
        if record.is_d() {
            let Some(m) = self.c.d_member(&record, name) else {
                return Err(CompileError::new(
                    "D_TYPE_MEMBER",
                    format!("{name} is not a member of {}", record.name),
                    span,
                ));
            };
            self.add_offset(reg, m.offset as i64);
            return Ok(Place {
                reg,
                ty: m.ty,
                bitfield: None,
            });
        }
        let btf = kernel::vmlinux().expect("kernel struct types come from BTF");
        let Some(m) = kernel::member(btf, &record, name) else {
            return Err(CompileError::new(
                "D_TYPE_MEMBER",
                format!("{name} is not a member of {}", record.name),
                span,
            ));
        };
        self.add_offset(reg, m.offset as i64);
        Ok(Place {
            reg,
            ty: m.ty,
            bitfield: m.bitfield,
        })
    }

    /// `base[i]` on a kernel array or a pointer.
    fn index_place(&mut self, base: &Expr, args: &[Expr], span: Span) -> Result<Place> {
        let [index] = args else {
            return Err(CompileError::new(
                "D_ARR_BADREF",
                format!("tuple has {} elements; 1 expected", args.len()),
                span,
            ));
        };
        let base_val = if self.is_place(base) {
            let p = self.place(base)?;
            match p.ty {
                Type::Array(elem, len) => {
                    if let Some(i) = super::super::aggregate::constant(index) {
                        if len > 0 && (i < 0 || i >= len as i64) {
                            return Err(CompileError::new(
                                "D_ARR_BOUNDS",
                                format!("index {i} is out of range for array of {len} elements"),
                                index.span,
                            ));
                        }
                    }
                    Val {
                        reg: p.reg,
                        ty: Type::Ptr(elem),
                    }
                }
                _ => self.load_place(p, base.span)?,
            }
        } else {
            self.expr(base)?
        };
        let Type::Ptr(elem) = &base_val.ty else {
            return Err(CompileError::new(
                "D_OP_PTR",
                format!(
                    "operator [ ] must be applied to an array or a pointer; found {}",
                    base_val.ty
                ),
                span,
            ));
        };
        let elem = (**elem).clone();
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
        let ri = regs::read(&mut self.e, i.reg, R2);
        if ri != R2 {
            self.e.emit(Insn::mov64_reg(R2, ri));
        }
        self.e.mov_const(R3, size);
        self.e.emit(Insn::alu64_reg(BPF_MUL, R2, R3));
        let ra = regs::read(&mut self.e, base_val.reg, R1);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, ra));
        self.pop(i.reg);
        regs::write(&mut self.e, base_val.reg, R2);
        Ok(Place {
            reg: base_val.reg,
            ty: elem,
            bitfield: None,
        })
    }

    /// Add a constant to the address in `reg`.
    fn add_offset(&mut self, reg: VReg, offset: i64) {
        if offset == 0 {
            return;
        }
        let r = regs::read(&mut self.e, reg, R1);
        if let Ok(imm) = i32::try_from(offset) {
            self.e.emit(Insn::alu64_imm(BPF_ADD, r, imm));
        } else {
            self.e.mov_const(R2, offset as u64);
            self.e.emit(Insn::alu64_reg(BPF_ADD, r, R2));
        }
        regs::write(&mut self.e, reg, r);
    }

    /// Read the object at `p` as a D value (see the module documentation).
    pub(crate) fn load_place(&mut self, p: Place, span: Span) -> Result<Val> {
        match &p.ty {
            Type::Int { .. } | Type::Ptr(_) => {
                self.load_scalar(&p);
                Ok(Val {
                    reg: p.reg,
                    ty: p.ty,
                })
            }
            Type::Array(elem, len) if elem.is_char() => {
                let len = if *len == 0 { self.strsize() } else { *len };
                self.kernel_string(p.reg, len.min(self.strsize()));
                Ok(Val {
                    reg: p.reg,
                    ty: Type::String,
                })
            }
            Type::Array(elem, _) => Ok(Val {
                reg: p.reg,
                ty: Type::Ptr(elem.clone()),
            }),
            Type::Void => Err(CompileError::new(
                "D_DEREF_VOID",
                "dereferencing a void * is not allowed: cast the pointer to a pointer to a sized type",
                span,
            )),
            Type::String => Ok(Val {
                reg: p.reg,
                ty: Type::String,
            }),
            other => Err(CompileError::new(
                "D_UNSUPPORTED",
                format!(
                    "a value of type {other} is not supported yet: use its members, or stringof( ) for text"
                ),
                span,
            )),
        }
    }

    /// Replace the address in `p.reg` by the integer or pointer stored there.
    fn load_scalar(&mut self, p: &Place) {
        let size = p.ty.scalar_size();
        let (read, shift_width) = match p.bitfield {
            // A bitfield: read the bytes holding it (at most 8) and shift and mask.
            Some((bit, width)) => {
                let bytes = (bit as usize + width as usize).div_ceil(8).clamp(1, 8);
                (bytes, Some((bit, width)))
            }
            None => (size, None),
        };
        self.e.emit(Insn::st(Size::DW, R10, KEY_SLOT, 0));
        self.e.emit(Insn::mov64_reg(R1, R10));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, KEY_SLOT as i32));
        self.e.emit(Insn::mov64_imm(R2, read as i32));
        regs::read_into(&mut self.e, p.reg, R3);
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
        self.fault_if_negative(p.reg);
        match shift_width {
            Some((bit, width)) => {
                self.e.emit(Insn::ldx(Size::DW, R1, R10, KEY_SLOT));
                // Move the field to the top, then back down with its sign if signed.
                let up = 64 - bit as i32 - width as i32;
                if up > 0 {
                    self.e.emit(Insn::alu64_imm(BPF_LSH, R1, up));
                }
                let down = if p.ty.is_signed() { BPF_ARSH } else { BPF_RSH };
                if width < 64 {
                    self.e.emit(Insn::alu64_imm(down, R1, 64 - width as i32));
                }
            }
            None => {
                self.e
                    .emit(Insn::ldx(Size::from_bytes(size), R1, R10, KEY_SLOT));
                super::normalize(&mut self.e, R1, &p.ty);
            }
        }
        regs::write(&mut self.e, p.reg, R1);
    }

    /// After a read helper (r0 = its result): fault with the address in `addr` unless the
    /// read succeeded.
    pub(crate) fn fault_if_negative(&mut self, addr: VReg) {
        let ok = self.e.label();
        self.e.jmp_imm(BPF_JSGE, R0, 0, ok);
        let bad = regs::read(&mut self.e, addr, R1);
        self.fault(Fault::BadAddr, Some(bad), FaultSite::Here);
        self.e.bind(ok);
    }

    /// Replace the kernel address in `reg` by a scratch string holding the NUL-terminated
    /// string there (at most `len` bytes with the NUL).
    fn kernel_string(&mut self, reg: VReg, len: u32) {
        let buf = self.string_buffer(false);
        self.scratch_addr(R1, buf);
        self.e.emit(Insn::mov64_imm(R2, len.max(1) as i32));
        regs::read_into(&mut self.e, reg, R3);
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
        self.fault_if_negative(reg);
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, reg, R1);
    }

    /// `stringof(e)`: a string as it is; a `char` array of kernel memory as its text; an
    /// integer or pointer as the address of a kernel string.
    pub(crate) fn stringof(&mut self, inner: &Expr, span: Span) -> Result<Val> {
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
        let size = self.strsize();
        self.kernel_string(v.reg, size);
        Ok(Val {
            reg: v.reg,
            ty: Type::String,
        })
    }

    /// The type of the object `e` names and whether it is a bitfield, without keeping code.
    fn place_type(&mut self, e: &Expr) -> Result<(Type, bool)> {
        let checkpoint = self.e.checkpoint();
        let scratch = self.scratch_top;
        let p = self.place(e)?;
        self.pop(p.reg);
        self.e.rollback(checkpoint);
        self.scratch_top = scratch;
        // Slots placed while typing lie above the restored top: forget them.
        self.this_offsets.retain(|_, off| *off < scratch);
        Ok((p.ty, p.bitfield.is_some()))
    }

    /// `sizeof expr`: the size of the expression's type (for kernel memory, of the object:
    /// `sizeof (curthread->comm)` is 16).
    pub(crate) fn sizeof_expr(&mut self, inner: &Expr, span: Span) -> Result<Val> {
        let ty = if self.is_place(inner) {
            let (ty, bitfield) = self.place_type(inner)?;
            if bitfield {
                return Err(CompileError::new(
                    "D_SIZEOF_BITFIELD",
                    "cannot apply sizeof to a bit-field",
                    span,
                ));
            }
            ty
        } else {
            self.type_of(inner)?
        };
        let size = self.size_of(&ty, span)?;
        self.constant(size, types::ULONG, span)
    }

    /// The size of a value of `ty` (`strsize` for strings).
    pub(crate) fn size_of(&self, ty: &Type, span: Span) -> Result<u64> {
        match ty {
            Type::String => Ok(self.strsize() as u64),
            Type::Opaque(name) if types::float_size(name).is_some() => Ok(ty.size()),
            Type::Opaque(name) => Err(CompileError::new(
                "D_SIZEOF_TYPE",
                format!("cannot apply sizeof to an incomplete or function type: {name}"),
                span,
            )),
            other => Ok(other.size()),
        }
    }

    /// `offsetof(struct s, member)`: the byte offset of a member (a dotted path reaches
    /// into nested members).
    pub(crate) fn offsetof(&mut self, ty: &TypeName, member: &str, span: Span) -> Result<Val> {
        let target = self.c.resolve_type(&ty.spec, &ty.declarator, ty.span)?;
        let Type::Struct(record) = target else {
            return Err(CompileError::new(
                "D_OFFSETOF_TYPE",
                "offsetof operand must be a struct or union type",
                span,
            ));
        };
        if record.is_d() {
            let mut offset = 0u64;
            let mut current = record;
            let parts: Vec<&str> = member.split('.').collect();
            for (i, part) in parts.iter().enumerate() {
                let Some(m) = self.c.d_member(&current, part) else {
                    return Err(CompileError::new(
                        "D_UNKNOWN",
                        format!("failed to determine offset of {member}: Member name not found"),
                        span,
                    ));
                };
                offset += m.offset as u64;
                match m.ty {
                    Type::Struct(r) if r.is_d() => current = r,
                    _ if i + 1 < parts.len() => {
                        return Err(CompileError::new(
                            "D_UNKNOWN",
                            format!(
                                "failed to determine offset of {member}: Member name not found"
                            ),
                            span,
                        ))
                    }
                    _ => {}
                }
            }
            let ty = super::int_constant_type(offset, false, 0, true);
            return self.constant(offset, ty, span);
        }
        let btf = kernel::vmlinux().expect("kernel struct types come from BTF");
        let field = btf.member_path(record.id, member).map_err(|_| {
            CompileError::new(
                "D_UNKNOWN",
                format!("failed to determine offset of {member}: Member name not found"),
                span,
            )
        })?;
        if field.is_bitfield() {
            return Err(CompileError::new(
                "D_OFFSETOF_BITFIELD",
                format!("cannot take offset of a bit-field: {member}"),
                span,
            ));
        }
        let offset = field.byte_offset();
        let ty = super::int_constant_type(offset, false, 0, true);
        self.constant(offset, ty, span)
    }
}

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

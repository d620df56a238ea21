//! What `print()` shows of an object: its type's whole layout in the record ABI's terms
//! ([`ValueType`]): the members of D, kernel and user (DWARF) structs and unions in order (anonymous
//! ones too, as C nests them), bit-fields, arrays, and the constants of D and kernel
//! enums. The consumer lays the object's bytes out from it, without the kernel's BTF.

use dtrace_abi::datum::{Member, ValueType};

use super::Cook;
use crate::types::{kernel, user, Record, Type};

/// The most bytes of an object `print()` records (DTrace's default `printsize`).
pub(crate) const PRINT_MAX: u32 = 8192;

/// Nesting deeper than this is not described (the consumer shows ten levels).
const MAX_DEPTH: usize = 12;

impl Cook<'_> {
    /// The layout of a value of type `ty`.
    pub(crate) fn layout(&self, ty: &Type) -> ValueType {
        self.layout_at(ty, 0)
    }

    fn layout_at(&self, ty: &Type, depth: usize) -> ValueType {
        match ty {
            Type::Int { size, signed, name } => {
                crate::types::integer_value_type(*size, *signed, name, |tag| {
                    self.scope
                        .enums
                        .get(tag)
                        .cloned()
                        .or_else(|| user::enum_constants(tag))
                        .unwrap_or_else(|| kernel::enum_constants(tag))
                })
            }
            Type::Ptr(_) => ValueType::Pointer {
                name: ty.to_string(),
            },
            Type::Array(element, len) => ValueType::Array {
                element: Box::new(self.layout_at(element, depth + 1)),
                len: *len,
            },
            Type::Struct(r) => self.record_layout(r, depth),
            Type::String | Type::Void | Type::Opaque(_) => ValueType::Bytes {
                size: ty.size() as u32,
            },
        }
    }

    fn record_layout(&self, r: &Record, depth: usize) -> ValueType {
        let (union, members) = if r.is_d() {
            match self
                .prog
                .records
                .get((r.id - crate::types::D_RECORD_BASE) as usize)
            {
                Some(d) => (
                    d.union,
                    d.members
                        .iter()
                        .map(|m| {
                            (
                                m.name.clone(),
                                m.ty.clone(),
                                m.offset,
                                m.bits.map(|w| (0, w)),
                            )
                        })
                        .collect(),
                ),
                None => (false, Vec::new()),
            }
        } else if user::is_user(r) {
            (
                user::is_union(r),
                user::members(r)
                    .into_iter()
                    .map(|(name, m)| (name, m.ty, m.offset, m.bitfield))
                    .collect(),
            )
        } else {
            match kernel::vmlinux() {
                Some(btf) => (
                    btf.kind(r.id) == dtrace_btf::Kind::Union,
                    kernel::members(btf, r)
                        .into_iter()
                        .map(|(name, m)| (name, m.ty, m.offset, m.bitfield))
                        .collect(),
                ),
                None => (false, Vec::new()),
            }
        };
        let members = if depth < MAX_DEPTH {
            members
                .into_iter()
                .map(|(name, ty, offset, bitfield)| Member {
                    name,
                    offset,
                    bitfield,
                    ty: self.layout_at(&ty, depth + 1),
                })
                .collect()
        } else {
            Vec::new()
        };
        // An anonymous struct or union is shown by its keyword alone.
        let name = r.name.strip_suffix(" {...}").unwrap_or(r.name);
        ValueType::Record {
            union,
            name: name.to_string(),
            size: r.size,
            members,
        }
    }
}

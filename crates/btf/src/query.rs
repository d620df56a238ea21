//! Type queries: resolving typedefs and qualifiers, sizes, struct/union
//! member lookup (through anonymous members, with bitfields) and member
//! paths, function prototypes. All walks are depth-limited, so a malformed
//! blob with reference cycles cannot hang or overflow the stack.

use crate::error::Error;
use crate::types::*;
use crate::Btf;

/// How many typedef/qualifier/array/anonymous-member levels a walk follows
/// before giving up (real kernels need far fewer).
pub(crate) const MAX_DEPTH: usize = 64;

/// Pointer size of the (64-bit) targets this reader serves.
const POINTER_SIZE: u64 = 8;

/// A located struct/union member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Field {
    /// The member's declared type (not resolved).
    pub ty: TypeId,
    /// Offset from the start of the outermost struct, in bits.
    pub bit_offset: u64,
    /// Bitfield width in bits, or 0 for an ordinary member.
    pub bitfield_size: u32,
}

impl Field {
    /// Offset in bytes (for a bitfield: of the byte holding its first bit).
    pub fn byte_offset(&self) -> u64 {
        self.bit_offset / 8
    }

    /// Whether the member is a bitfield.
    pub fn is_bitfield(&self) -> bool {
        self.bitfield_size != 0
    }
}

/// A kernel enum constant found by [`Btf::enum_value`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnumConst {
    /// The enum type defining it.
    pub ty: TypeId,
    /// Its value (bit pattern of a `u64` for large unsigned `ENUM64`s).
    pub value: i64,
    /// Whether the enum is signed.
    pub signed: bool,
}

impl Btf {
    /// Skips typedefs, `const`, `volatile`, `restrict` and type tags.
    pub fn resolve(&self, mut id: TypeId) -> TypeId {
        for _ in 0..MAX_DEPTH {
            match self.get(id).map(|t| &t.kind) {
                Some(
                    TypeKind::Typedef(t)
                    | TypeKind::Const(t)
                    | TypeKind::Volatile(t)
                    | TypeKind::Restrict(t)
                    | TypeKind::TypeTag { ty: t, .. },
                ) => id = *t,
                _ => break,
            }
        }
        id
    }

    /// Size in bytes of a value of type `id`: follows typedefs and
    /// qualifiers, arrays are `elem * len`, pointers are 8. `None` for
    /// `void`, functions, forward declarations and unknown ids.
    pub fn size_of(&self, id: TypeId) -> Option<u64> {
        self.size_of_depth(id, 0)
    }

    fn size_of_depth(&self, id: TypeId, depth: usize) -> Option<u64> {
        if depth > MAX_DEPTH {
            return None;
        }
        match &self.get(id)?.kind {
            TypeKind::Int(Int { size, .. })
            | TypeKind::Struct(Composite { size, .. })
            | TypeKind::Union(Composite { size, .. })
            | TypeKind::Enum(Enum { size, .. })
            | TypeKind::Enum64(Enum { size, .. })
            | TypeKind::Float { size }
            | TypeKind::Datasec(Datasec { size, .. }) => Some(u64::from(*size)),
            TypeKind::Ptr(_) => Some(POINTER_SIZE),
            TypeKind::Array(a) => self
                .size_of_depth(a.elem, depth + 1)?
                .checked_mul(u64::from(a.len)),
            TypeKind::Typedef(t)
            | TypeKind::Const(t)
            | TypeKind::Volatile(t)
            | TypeKind::Restrict(t)
            | TypeKind::TypeTag { ty: t, .. }
            | TypeKind::Var { ty: t, .. } => self.size_of_depth(*t, depth + 1),
            TypeKind::Void
            | TypeKind::Fwd { .. }
            | TypeKind::Func { .. }
            | TypeKind::FuncProto(_)
            | TypeKind::DeclTag { .. } => None,
        }
    }

    /// The struct or union that `id` resolves to, if any.
    pub fn composite(&self, id: TypeId) -> Option<&Composite> {
        match &self.get(self.resolve(id))?.kind {
            TypeKind::Struct(c) | TypeKind::Union(c) => Some(c),
            _ => None,
        }
    }

    /// The direct members of the struct/union `id` resolves to, in order, anonymous ones
    /// included (with empty names), located from the start of `id`.
    pub fn members(&self, id: TypeId) -> Vec<(&str, Field)> {
        self.composite(id)
            .map(|c| {
                c.members
                    .iter()
                    .map(|m| (self.str(m.name), self.field(m, u64::from(m.bit_offset))))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Looks up member `name` of the struct/union `id` resolves to,
    /// searching anonymous struct/union members recursively (as C does).
    /// The offset is relative to the start of `id`.
    pub fn member(&self, id: TypeId, name: &str) -> Option<Field> {
        self.find_member(self.composite(id)?, name, 0, 0)
    }

    fn find_member(&self, c: &Composite, name: &str, base: u64, depth: usize) -> Option<Field> {
        if depth > MAX_DEPTH {
            return None;
        }
        for m in &c.members {
            let bit_offset = base + u64::from(m.bit_offset);
            if m.name.is_empty() {
                let found = self
                    .composite(m.ty)
                    .and_then(|inner| self.find_member(inner, name, bit_offset, depth + 1));
                if found.is_some() {
                    return found;
                }
            } else if self.str(m.name) == name {
                return Some(self.field(m, bit_offset));
            }
        }
        None
    }

    /// Builds a [`Field`], also recognising legacy bitfields (no
    /// `kind_flag`; the width and bit offset live in the `Int` type).
    fn field(&self, m: &Member, bit_offset: u64) -> Field {
        let mut field = Field {
            ty: m.ty,
            bit_offset,
            bitfield_size: u32::from(m.bitfield_size),
        };
        if m.bitfield_size == 0 {
            if let Some(TypeKind::Int(int)) = self.get(self.resolve(m.ty)).map(|t| &t.kind) {
                if int.bit_offset != 0 || u32::from(int.bits) != int.size * 8 {
                    field.bit_offset += u64::from(int.bit_offset);
                    field.bitfield_size = u32::from(int.bits);
                }
            }
        }
        field
    }

    /// Follows a dotted member path such as `"se.sum_exec_runtime"` from
    /// the struct/union `id` resolves to; the result's offset is the total
    /// from the start of `id` and its type is the last member's type.
    pub fn member_path(&self, id: TypeId, path: &str) -> Result<Field, Error> {
        let mut cur = Field {
            ty: id,
            bit_offset: 0,
            bitfield_size: 0,
        };
        for name in path.split('.') {
            if self.composite(cur.ty).is_none() {
                return Err(Error::NotComposite {
                    ty: self.type_name(cur.ty),
                });
            }
            let f = self.member(cur.ty, name).ok_or_else(|| Error::NoMember {
                ty: self.type_name(cur.ty),
                member: name.to_string(),
            })?;
            cur = Field {
                bit_offset: cur.bit_offset + f.bit_offset,
                ..f
            };
        }
        Ok(cur)
    }

    /// The prototype of a `FUNC` (or of a `FUNC_PROTO` id itself).
    pub fn func_proto(&self, id: TypeId) -> Option<&FuncProto> {
        let id = match self.get(id)?.kind {
            TypeKind::Func { proto, .. } => proto,
            _ => id,
        };
        match &self.get(id)?.kind {
            TypeKind::FuncProto(p) => Some(p),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{fixture, Builder};
    use crate::{Btf, Error, Field, VOID};

    #[test]
    fn sizes_and_resolution() {
        let f = fixture();
        let btf = Btf::parse(&f.bytes).unwrap();
        assert_eq!(btf.size_of(f.task), Some(64));
        assert_eq!(btf.size_of(f.comm), Some(16));
        assert_eq!(btf.size_of(f.task_ptr), Some(8));
        assert_eq!(btf.size_of(f.pid_t), Some(4));
        assert_eq!(btf.size_of(f.const_char), Some(1));
        assert_eq!(btf.size_of(f.color), Some(4));
        assert_eq!(btf.size_of(VOID), None);
        assert_eq!(btf.size_of(f.func), None);
        assert_eq!(btf.size_of(u32::MAX), None);
        assert_eq!(btf.resolve(f.pid_t), f.int);
        assert_eq!(btf.resolve(f.const_char), f.char);
        assert_eq!(btf.resolve(f.task_ptr), f.task_ptr);
    }

    #[test]
    fn members_direct_anonymous_and_bitfields() {
        let f = fixture();
        let btf = Btf::parse(&f.bytes).unwrap();
        let pid = btf.member(f.task, "pid").unwrap();
        assert_eq!(
            (pid.ty, pid.byte_offset(), pid.is_bitfield()),
            (f.pid_t, 0, false)
        );
        let flags = btf.member(f.task, "flags").unwrap();
        assert_eq!((flags.bit_offset, flags.bitfield_size), (32, 3));
        let b = btf.member(f.task, "b").unwrap();
        assert_eq!((b.ty, b.bit_offset), (f.ulong, 64));
        assert_eq!(btf.member(f.task, "comm").unwrap().ty, f.comm);
        assert_eq!(btf.member(f.task, "nope"), None);
        assert_eq!(btf.member(f.int, "pid"), None);
        let x = btf.member(f.legacy, "x").unwrap();
        assert_eq!((x.bit_offset, x.bitfield_size), (11, 5));
    }

    #[test]
    fn member_paths() {
        let f = fixture();
        let btf = Btf::parse(&f.bytes).unwrap();
        let sum = btf.member_path(f.task, "se.sum").unwrap();
        let expect = Field {
            ty: f.ulong,
            bit_offset: 256 + 64,
            bitfield_size: 0,
        };
        assert_eq!(sum, expect);
        assert_eq!(sum.byte_offset(), 40);
        assert_eq!(btf.member_path(f.inner, "sum").unwrap().byte_offset(), 8);
        match btf.member_path(f.task, "se.nope") {
            Err(Error::NoMember { ty, member }) => {
                assert_eq!(
                    (ty.as_str(), member.as_str()),
                    ("struct sched_entity", "nope")
                );
            }
            other => panic!("{other:?}"),
        }
        let err = btf.member_path(f.task, "parent.pid").unwrap_err();
        assert_eq!(
            err.to_string(),
            "struct task_struct * is not a struct or union"
        );
    }

    #[test]
    fn function_prototypes() {
        let f = fixture();
        let btf = Btf::parse(&f.bytes).unwrap();
        let p = btf.func_proto(f.func).unwrap();
        let names: Vec<&str> = p.params.iter().map(|p| btf.str(p.name)).collect();
        assert_eq!(names, ["fd", "name"]);
        assert_eq!(p.ret, f.int);
        assert_eq!(btf.func_proto(f.proto), Some(p));
        assert!(!p.is_variadic());
        let v = btf.func_proto(f.variadic).unwrap();
        assert!(v.is_variadic());
        assert_eq!(v.fixed_params().len(), 1);
        assert_eq!(btf.func_proto(f.int), None);
    }

    #[test]
    fn reference_cycles_terminate() {
        let mut b = Builder::new();
        let a = b.raw("a", 8, false, 0, 2, &[]);
        b.raw("b", 8, false, 0, a, &[]);
        let btf = Btf::parse(&b.build()).unwrap();
        btf.resolve(a);
        assert_eq!(btf.size_of(a), None);
        assert_eq!(btf.member(a, "x"), None);
        assert_eq!(btf.type_name(a), "a");
    }
}

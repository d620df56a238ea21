//! The owned BTF type model: one [`Type`] per type id, with kind-specific
//! payloads in [`TypeKind`]. Names are kept as offsets ([`Name`]) into the
//! string section and turned into `&str` by [`crate::Btf::str`], which keeps
//! parsing allocation-light.

/// A BTF type id. Id 0 is `void`; real types start at 1.
pub type TypeId = u32;

/// The `void` type id.
pub const VOID: TypeId = 0;

/// A name: an offset into the BTF string section. `Name::default()` (offset
/// 0) is the empty name of anonymous types and members.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name(pub(crate) u32);

impl Name {
    /// The raw offset into the string section.
    pub fn offset(self) -> u32 {
        self.0
    }

    /// Whether this is the empty name (anonymous type or member).
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// One BTF type: its name and kind-specific data.
#[derive(Clone, Debug, PartialEq)]
pub struct Type {
    /// The type's name; empty for anonymous and unnamed kinds (pointers...).
    pub name: Name,
    /// What the type is.
    pub kind: TypeKind,
}

/// The kind of a type without its payload, used for by-name lookups.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Void,
    Int,
    Ptr,
    Array,
    Struct,
    Union,
    Enum,
    Fwd,
    Typedef,
    Volatile,
    Const,
    Restrict,
    Func,
    FuncProto,
    Var,
    Datasec,
    Float,
    DeclTag,
    TypeTag,
    Enum64,
}

/// Kind-specific data of a [`Type`].
#[derive(Clone, Debug, PartialEq)]
pub enum TypeKind {
    /// Id 0.
    Void,
    Int(Int),
    /// Pointer to the given type.
    Ptr(TypeId),
    Array(Array),
    Struct(Composite),
    Union(Composite),
    /// `BTF_KIND_ENUM` (32-bit values).
    Enum(Enum),
    /// `BTF_KIND_ENUM64` (64-bit values).
    Enum64(Enum),
    /// Forward declaration of a struct (or a union when `union` is set).
    Fwd {
        union: bool,
    },
    Typedef(TypeId),
    Volatile(TypeId),
    Const(TypeId),
    Restrict(TypeId),
    /// A function: its `FuncProto` and linkage.
    Func {
        proto: TypeId,
        linkage: Linkage,
    },
    FuncProto(FuncProto),
    /// A variable of type `ty`; `linkage` is the raw BTF linkage value.
    Var {
        ty: TypeId,
        linkage: u32,
    },
    Datasec(Datasec),
    /// Floating-point type of `size` bytes.
    Float {
        size: u32,
    },
    /// A declaration tag on `ty` (on member/param `component_idx`, or on the
    /// type itself when it is -1); `attribute`: the tag is a compiler
    /// attribute (`kind_flag` set) rather than a `btf_decl_tag` string.
    DeclTag {
        ty: TypeId,
        component_idx: i32,
        attribute: bool,
    },
    /// A type tag (e.g. `__user`) on `ty`; `attribute`: the tag is a compiler
    /// attribute such as `address_space(1)` (`kind_flag` set).
    TypeTag {
        ty: TypeId,
        attribute: bool,
    },
}

impl TypeKind {
    /// The payload-less kind.
    pub fn kind(&self) -> Kind {
        match self {
            TypeKind::Void => Kind::Void,
            TypeKind::Int(_) => Kind::Int,
            TypeKind::Ptr(_) => Kind::Ptr,
            TypeKind::Array(_) => Kind::Array,
            TypeKind::Struct(_) => Kind::Struct,
            TypeKind::Union(_) => Kind::Union,
            TypeKind::Enum(_) => Kind::Enum,
            TypeKind::Enum64(_) => Kind::Enum64,
            TypeKind::Fwd { .. } => Kind::Fwd,
            TypeKind::Typedef(_) => Kind::Typedef,
            TypeKind::Volatile(_) => Kind::Volatile,
            TypeKind::Const(_) => Kind::Const,
            TypeKind::Restrict(_) => Kind::Restrict,
            TypeKind::Func { .. } => Kind::Func,
            TypeKind::FuncProto(_) => Kind::FuncProto,
            TypeKind::Var { .. } => Kind::Var,
            TypeKind::Datasec(_) => Kind::Datasec,
            TypeKind::Float { .. } => Kind::Float,
            TypeKind::DeclTag { .. } => Kind::DeclTag,
            TypeKind::TypeTag { .. } => Kind::TypeTag,
        }
    }
}

/// Calls `$f` with a reference to every type id that `$kind` (a `&TypeKind`, or a
/// `&mut TypeKind` with `mut` given) refers to, in record order: one listing of the
/// references for both [`TypeKind::for_each_ref`] and [`TypeKind::for_each_ref_mut`].
macro_rules! each_ref {
    ($kind:expr, $f:expr $(, $m:tt)?) => {{
        let mut f = $f;
        match $kind {
            TypeKind::Void
            | TypeKind::Int(_)
            | TypeKind::Enum(_)
            | TypeKind::Enum64(_)
            | TypeKind::Fwd { .. }
            | TypeKind::Float { .. } => {}
            TypeKind::Ptr(ty)
            | TypeKind::Typedef(ty)
            | TypeKind::Volatile(ty)
            | TypeKind::Const(ty)
            | TypeKind::Restrict(ty)
            | TypeKind::TypeTag { ty, .. }
            | TypeKind::Func { proto: ty, .. }
            | TypeKind::Var { ty, .. }
            | TypeKind::DeclTag { ty, .. } => f(ty),
            TypeKind::Array(Array { elem, index, .. }) => {
                f(elem);
                f(index);
            }
            TypeKind::Struct(c) | TypeKind::Union(c) => {
                for m in & $($m)? c.members {
                    f(& $($m)? m.ty);
                }
            }
            TypeKind::FuncProto(p) => {
                f(& $($m)? p.ret);
                for param in & $($m)? p.params {
                    f(& $($m)? param.ty);
                }
            }
            TypeKind::Datasec(d) => {
                for v in & $($m)? d.vars {
                    f(& $($m)? v.ty);
                }
            }
        }
    }};
}

impl TypeKind {
    /// Calls `f` with every type id this type refers to (members, elements, targets,
    /// parameters...), in the order the record stores them.
    pub(crate) fn for_each_ref(&self, mut f: impl FnMut(TypeId)) {
        each_ref!(self, |ty: &TypeId| f(*ty))
    }

    /// Calls `f` on every type id this type refers to, which it may change.
    pub(crate) fn for_each_ref_mut(&mut self, f: impl FnMut(&mut TypeId)) {
        each_ref!(self, f, mut)
    }
}

/// `BTF_KIND_INT` data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Int {
    /// Storage size in bytes.
    pub size: u32,
    pub signed: bool,
    /// `BTF_INT_CHAR`: a C `char` type.
    pub char: bool,
    /// `BTF_INT_BOOL`: a C `_Bool`.
    pub bool: bool,
    /// Bit offset of the value within the storage (legacy bitfields).
    pub bit_offset: u8,
    /// Number of value bits.
    pub bits: u8,
}

/// `BTF_KIND_ARRAY` data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Array {
    pub elem: TypeId,
    pub index: TypeId,
    pub len: u32,
}

/// Struct or union data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Composite {
    /// Size in bytes.
    pub size: u32,
    pub members: Vec<Member>,
}

/// One struct/union member as stored in BTF.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member {
    /// Empty for anonymous struct/union members.
    pub name: Name,
    pub ty: TypeId,
    /// Offset from the start of the enclosing struct, in bits.
    pub bit_offset: u32,
    /// Bitfield width in bits when the struct uses the `kind_flag`
    /// encoding, else 0. (Legacy bitfields encode the width in the `Int`
    /// type instead; [`crate::Btf::member`] handles both.)
    pub bitfield_size: u8,
}

/// Enum data, shared by `ENUM` and `ENUM64`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enum {
    /// Size in bytes.
    pub size: u32,
    pub signed: bool,
    pub values: Vec<Enumerator>,
}

/// One enum constant. Its value is sign- or zero-extended to 64 bits per the
/// enum's signedness; an unsigned `ENUM64` value above `i64::MAX` keeps its
/// bit pattern (use `value as u64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enumerator {
    pub name: Name,
    pub value: i64,
}

/// Function linkage of a `FUNC`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linkage {
    Static,
    Global,
    Extern,
    /// A value this reader does not know.
    Other(u16),
}

/// `BTF_KIND_FUNC_PROTO` data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncProto {
    pub ret: TypeId,
    /// Parameters; a trailing unnamed `void` parameter means `...`.
    pub params: Vec<Param>,
}

impl FuncProto {
    /// Whether the prototype ends in `...`.
    pub fn is_variadic(&self) -> bool {
        self.params
            .last()
            .is_some_and(|p| p.ty == VOID && p.name.is_empty())
    }

    /// The parameters without the trailing `...` marker.
    pub fn fixed_params(&self) -> &[Param] {
        let n = self.params.len() - usize::from(self.is_variadic());
        &self.params[..n]
    }
}

/// One function parameter (names are present in vmlinux BTF).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: Name,
    pub ty: TypeId,
}

/// `BTF_KIND_DATASEC` data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datasec {
    pub size: u32,
    pub vars: Vec<VarSecInfo>,
}

/// One variable placed in a data section.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VarSecInfo {
    pub ty: TypeId,
    pub offset: u32,
    pub size: u32,
}

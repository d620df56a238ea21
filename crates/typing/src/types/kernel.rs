//! Kernel types for D, from the running kernel's BTF (`/sys/kernel/btf/vmlinux`).
//!
//! The back end depends on `dtrace-btf` directly: BTF is read once per process, on first
//! use ([`vmlinux`]), so scripts that name no kernel type never parse it, and the command
//! line's `KernelLayout` (in the back end) answers from the same copy. Everything is resolved at
//! compile time: a D [`Type`] carries the BTF id of a struct, so member offsets, bitfield
//! positions, array lengths and enum values become constants in the generated code.
//!
//! Mapping: BTF integers and enums become [`Type::Int`] (named as C spells them: `int`,
//! `enum pid_type`; a typedef of an integer keeps the typedef's name, `u64`, `pid_t`);
//! structs and unions [`Type::Struct`]; arrays [`Type::Array`]; pointers [`Type::Ptr`];
//! qualifiers are dropped; forward declarations resolve to the definition of the same
//! name; functions and floats are [`Type::Opaque`].

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, OnceLock};

use dtrace_btf::{Btf, Kind, TypeId, TypeKind};

use super::{Record, Type};

/// How many typedef/qualifier/array levels a conversion follows.
const MAX_DEPTH: usize = 32;

/// Where [`vmlinux`] keeps the kernel's BTF, and [`install`] puts a recorded one.
static BTF: OnceLock<Option<Btf>> = OnceLock::new();

/// The kernel's BTF: the [`install`]ed one, else the running kernel's, read on first use;
/// None if it cannot be read.
pub fn vmlinux() -> Option<&'static Btf> {
    BTF.get_or_init(|| Btf::vmlinux().ok()).as_ref()
}

/// The BTF of `module` (`vmlinux`'s, or a loaded module's split BTF on it), read on first
/// use; None if it cannot be read.
pub fn module(module: &str) -> Option<&'static Btf> {
    if module == "vmlinux" {
        return vmlinux();
    }
    static MODULES: OnceLock<Mutex<HashMap<String, Option<&'static Btf>>>> = OnceLock::new();
    let mut modules = MODULES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    *modules.entry(module.to_string()).or_insert_with(|| {
        let btf = Btf::module(module, vmlinux()?).ok()?;
        Some(Box::leak(Box::new(btf)))
    })
}

/// Installs `btf` as the kernel's BTF for the rest of the process, in place of the running
/// kernel's: for tests and tools that type against a recorded kernel (such as
/// `crates/typing/tests/data/vmlinux-subset.btf`). It must come before the first use of
/// [`vmlinux`]; false if too late (a BTF is in place already, which stays).
pub fn install(btf: Btf) -> bool {
    BTF.set(Some(btf)).is_ok()
}

/// A `'static` copy of `s`, shared by every caller asking for the same text. Type names
/// live as long as the compilation (the process): there are only as many as the program
/// names kernel types.
pub fn intern(s: &str) -> &'static str {
    static NAMES: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let mut names = NAMES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(&name) = names.get(s) {
        return name;
    }
    let name: &'static str = Box::leak(s.to_string().into_boxed_str());
    names.insert(name);
    name
}

/// Whether `name` is a kernel typedef (`u64`, `size_t`, `atomic_t`), usable as a type name
/// in D like one of D's own typedefs.
pub fn is_typedef(name: &str) -> bool {
    vmlinux().is_some_and(|btf| btf.find(Kind::Typedef, name).is_some())
}

/// What kind of tagged name a D type specifier uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Tag {
    Struct,
    Union,
    Enum,
    Typedef,
}

/// The D type of the kernel type `name` of this kind (`struct task_struct`, `pid_t`).
pub fn named(btf: &Btf, tag: Tag, name: &str) -> Option<Type> {
    let id = match tag {
        Tag::Struct => btf.find(Kind::Struct, name)?,
        Tag::Union => btf.find(Kind::Union, name)?,
        Tag::Enum => btf
            .find(Kind::Enum, name)
            .or_else(|| btf.find(Kind::Enum64, name))?,
        Tag::Typedef => btf.find(Kind::Typedef, name)?,
    };
    Some(from_btf(btf, id))
}

/// The D type of BTF type `id`.
pub fn from_btf(btf: &Btf, id: TypeId) -> Type {
    convert(btf, id, 0, Space::KERNEL)
}

/// The D type of BTF type `id` of a module's BTF ([`module`]): as [`from_btf`], but a
/// struct or union the module defines itself is opaque (`struct nft_ctx`), since D types
/// records by their `vmlinux` id.
pub fn from_module_btf(btf: &Btf, id: TypeId) -> Type {
    let own = vmlinux().map_or(0, |v| v.len() as u32);
    convert(btf, id, 0, Space { own, base: 0 })
}

/// The D type of type `id` of BTF made from a program's DWARF (`super::user`), whose
/// records take ids from `base` on.
pub(crate) fn from_user_btf(btf: &Btf, id: TypeId, base: u32) -> Type {
    convert(
        btf,
        id,
        0,
        Space {
            own: u32::MAX,
            base,
        },
    )
}

/// Where a BTF's records stand among D's record ids.
#[derive(Clone, Copy)]
struct Space {
    /// The first BTF id whose records are opaque (a module's own).
    own: u32,
    /// What a record's BTF id is offset by in its [`Record::id`] (user types').
    base: u32,
}

impl Space {
    const KERNEL: Space = Space {
        own: u32::MAX,
        base: 0,
    };
}

fn convert(btf: &Btf, id: TypeId, depth: usize, space: Space) -> Type {
    let own = space.own;
    let name = || intern(&btf.type_name(id));
    let Some(t) = btf.get(id).filter(|_| depth <= MAX_DEPTH) else {
        return Type::Opaque("?");
    };
    match &t.kind {
        TypeKind::Void => Type::Void,
        TypeKind::Int(i) => match i.size {
            1 | 2 | 4 | 8 => Type::Int {
                size: i.size as u8,
                signed: i.signed,
                name: name(),
            },
            _ => Type::Opaque(name()),
        },
        TypeKind::Enum(e) | TypeKind::Enum64(e) => match e.size {
            1 | 2 | 4 | 8 => Type::Int {
                size: e.size as u8,
                signed: e.signed,
                name: name(),
            },
            _ => Type::Opaque(name()),
        },
        TypeKind::Ptr(target) => {
            let resolved = btf.resolve(*target);
            if matches!(btf.kind(resolved), Kind::FuncProto | Kind::Func) {
                // A function pointer: opaque, spelled as C does (`void (*)(int)`).
                Type::Ptr(Box::new(Type::Opaque(name())))
            } else {
                Type::Ptr(Box::new(convert(btf, *target, depth + 1, space)))
            }
        }
        TypeKind::Array(a) => Type::Array(Box::new(convert(btf, a.elem, depth + 1, space)), a.len),
        TypeKind::Struct(_) | TypeKind::Union(_) if id >= own => Type::Opaque(name()),
        TypeKind::Struct(c) | TypeKind::Union(c) => Type::Struct(Record {
            id: space.base + id,
            name: name(),
            size: c.size,
        }),
        TypeKind::Fwd { union } => {
            let kind = if *union { Kind::Union } else { Kind::Struct };
            match btf.find(kind, btf.name_of(id)) {
                Some(def) => convert(btf, def, depth + 1, space),
                None => Type::Opaque(name()),
            }
        }
        TypeKind::Typedef(target) => match convert(btf, *target, depth + 1, space) {
            Type::Int { size, signed, .. } => Type::Int {
                size,
                signed,
                name: name(),
            },
            Type::Struct(r) => Type::Struct(Record { name: name(), ..r }),
            // A module's own typedef of its own record keeps its name (`Node`).
            Type::Opaque(_) if id >= own => Type::Opaque(name()),
            other => other,
        },
        TypeKind::Const(target)
        | TypeKind::Volatile(target)
        | TypeKind::Restrict(target)
        | TypeKind::TypeTag { ty: target, .. } => convert(btf, *target, depth + 1, space),
        TypeKind::Func { .. }
        | TypeKind::FuncProto(_)
        | TypeKind::Float { .. }
        | TypeKind::Var { .. }
        | TypeKind::Datasec(_)
        | TypeKind::DeclTag { .. } => Type::Opaque(name()),
    }
}

/// The constants of the kernel's `enum tag`, as BTF defines them (none if it does not).
pub fn enum_constants(tag: &str) -> Vec<(String, i64)> {
    let Some(btf) = vmlinux() else {
        return Vec::new();
    };
    let id = btf
        .find(Kind::Enum, tag)
        .or_else(|| btf.find(Kind::Enum64, tag));
    match id.and_then(|id| btf.get(id)).map(|t| &t.kind) {
        Some(TypeKind::Enum(e) | TypeKind::Enum64(e)) => e
            .values
            .iter()
            .map(|v| (btf.str(v.name).to_string(), v.value))
            .collect(),
        _ => Vec::new(),
    }
}

/// The per-CPU kernel variable `name` (in BTF's `.data..percpu` section, the only
/// variables the kernel's BTF describes): its BTF id, which a program hands the kernel to
/// find this CPU's instance, and its type.
pub fn percpu_variable(btf: &Btf, name: &str) -> Option<(u32, Type)> {
    let id = btf.find(Kind::Var, name)?;
    let TypeKind::Var { ty, .. } = btf.get(id)?.kind else {
        return None;
    };
    let percpu = btf.find(Kind::Datasec, ".data..percpu")?;
    match &btf.get(percpu)?.kind {
        TypeKind::Datasec(d) if d.vars.iter().any(|v| v.ty == id) => Some((id, from_btf(btf, ty))),
        _ => None,
    }
}

/// The members of the kernel struct or union `record`, in order (anonymous ones with
/// empty names), located as [`member`] locates one.
pub fn members(btf: &Btf, record: &Record) -> Vec<(String, MemberInfo)> {
    members_at(btf, record.id, 0)
}

/// The members of record `id` of a BTF whose records take ids from `base` on.
pub(crate) fn members_at(btf: &Btf, id: TypeId, base: u32) -> Vec<(String, MemberInfo)> {
    btf.members(id)
        .into_iter()
        .map(|(name, f)| (name.to_string(), located(btf, &f, base)))
        .collect()
}

/// A member of a kernel struct or union, located: its type, its byte offset from the start
/// of the struct, and, for a bitfield, its first bit (from that byte) and width.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberInfo {
    pub ty: Type,
    pub offset: u32,
    pub bitfield: Option<(u8, u8)>,
}

/// Member `name` of the struct or union `record` (through anonymous members, as C finds
/// them).
pub fn member(btf: &Btf, record: &Record, name: &str) -> Option<MemberInfo> {
    member_at(btf, record.id, name, 0)
}

/// Member `name` of record `id` of a BTF whose records take ids from `base` on.
pub(crate) fn member_at(btf: &Btf, id: TypeId, name: &str, base: u32) -> Option<MemberInfo> {
    Some(located(btf, &btf.member(id, name)?, base))
}

fn located(btf: &Btf, f: &dtrace_btf::Field, base: u32) -> MemberInfo {
    let bitfield = f
        .is_bitfield()
        .then(|| ((f.bit_offset % 8) as u8, f.bitfield_size.min(64) as u8));
    MemberInfo {
        ty: convert(
            btf,
            f.ty,
            0,
            Space {
                base,
                ..Space::KERNEL
            },
        ),
        offset: (f.bit_offset / 8) as u32,
        bitfield,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interned_names_are_shared() {
        let a = intern(&String::from("struct file"));
        let b = intern("struct file");
        assert!(std::ptr::eq(a, b));
    }

    #[test]
    fn kernel_types_convert() {
        let Some(btf) = vmlinux() else { return };
        let task = named(btf, Tag::Struct, "task_struct").expect("struct task_struct");
        let Type::Struct(r) = &task else {
            panic!("{task:?}")
        };
        assert_eq!(task.to_string(), "struct task_struct");
        let comm = member(btf, r, "comm").expect("comm");
        assert_eq!(comm.ty.to_string(), "char [16]");
        assert!(matches!(&comm.ty, Type::Array(e, 16) if e.is_char()));
        let parent = member(btf, r, "real_parent").expect("real_parent");
        assert_eq!(parent.ty.to_string(), "struct task_struct *");
        let pid = member(btf, r, "pid").expect("pid");
        assert_eq!(
            pid.ty,
            Type::Int {
                size: 4,
                signed: true,
                name: "pid_t"
            }
        );
        assert_eq!(named(btf, Tag::Typedef, "u64").map(|t| t.size()), Some(8));
        assert!(member(btf, r, "no_such_member").is_none());
    }
}

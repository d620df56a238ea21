//! User types: the C types a traced program's DWARF gives its functions, for `args[]` of
//! `pid` entry and return probes, and the types a script names in an object's scope
//! (`struct a.out`point`, docs/USER-TYPES.md).
//!
//! Each object (executable or library, by path) gets the DWARF-converted BTF of the
//! functions asked for ([`super::dwarf`]), and a range of record ids from
//! [`USER_RECORD_BASE`] on: a user struct's [`Record::id`] is its range's start plus its
//! id in that BTF, so its members, layout and enum constants are found as a kernel
//! record's are, through the same conversion (`kernel::from_user_btf`). Objects are read
//! once per process, on first use; an object without DWARF (stripped, no debug file)
//! types nothing, and its `args[]` stay 64-bit integers.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use dtrace_btf::{Btf, Kind, TypeKind};

use super::dwarf::Types;
use super::kernel::{self, MemberInfo, Tag};
use super::{Record, Type, D_RECORD_BASE};

/// Ids of records from user DWARF start here (kernel BTF ids are far smaller, D's own
/// records start at [`D_RECORD_BASE`]).
pub const USER_RECORD_BASE: u32 = 1 << 30;

/// Record ids each object's range holds (so 1024 objects fit below [`D_RECORD_BASE`]).
const OBJECT_IDS: u32 = 1 << 20;

/// One object's user types.
struct Object {
    path: PathBuf,
    /// Its DWARF, or why there is none (the arguments then stay integers, as they are
    /// without DWARF).
    types: Result<Types, String>,
    /// The BTF converted so far, as last handed out (types are only ever added, so ids
    /// stay valid in every later copy).
    btf: Option<&'static Btf>,
}

fn objects() -> std::sync::MutexGuard<'static, Vec<Object>> {
    static OBJECTS: OnceLock<Mutex<Vec<Object>>> = OnceLock::new();
    OBJECTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The types of a function's parameters and result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    pub params: Vec<Type>,
    /// `void` when it returns nothing.
    pub ret: Type,
}

/// The signature of `function` of the object at `path`, from its DWARF; None when the
/// object has no DWARF, or its DWARF does not describe the function.
pub fn signature(path: &Path, function: &str) -> Option<Signature> {
    let ((params, ret), btf, base) = converting(path, |types| types.signature(function))?;
    let ty = |id| kernel::from_user_btf(btf, id, base);
    Some(Signature {
        params: params.into_iter().map(ty).collect(),
        ret: ty(ret),
    })
}

/// The user type `name` of this kind (`struct point`, `tag_t`) of the object at `path`,
/// from its DWARF; None when the object has no DWARF or its DWARF does not define it.
pub fn named(path: &Path, tag: Tag, name: &str) -> Option<Type> {
    let (id, btf, base) = converting(path, |types| types.named(tag, name))?;
    Some(kernel::from_user_btf(btf, id, base))
}

/// `convert` run on the DWARF of the object at `path` (read on first use), with the BTF
/// holding what it converted and the object's first record id.
fn converting<T>(
    path: &Path,
    convert: impl FnOnce(&mut Types) -> Option<T>,
) -> Option<(T, &'static Btf, u32)> {
    let mut objects = objects();
    let index = match objects.iter().position(|o| o.path == path) {
        Some(i) => i,
        None => {
            objects.push(Object {
                path: path.to_path_buf(),
                types: Types::load(path),
                btf: None,
            });
            objects.len() - 1
        }
    };
    let base = USER_RECORD_BASE + OBJECT_IDS.checked_mul(u32::try_from(index).ok()?)?;
    if base >= D_RECORD_BASE {
        return None;
    }
    let object = &mut objects[index];
    let types = object.types.as_mut().ok()?;
    let found = convert(types)?;
    if types.btf.len() > OBJECT_IDS as usize {
        return None;
    }
    if object.btf.is_none_or(|b| b.len() != types.btf.len()) {
        object.btf = Some(Box::leak(Box::new(types.btf.snapshot())));
    }
    Some((found, object.btf?, base))
}

/// How the command line finds the object a scope names ([`set_scopes`]).
type ScopeFinder = Box<dyn Fn(&str) -> Option<PathBuf> + Send + Sync>;

static SCOPES: OnceLock<ScopeFinder> = OnceLock::new();

/// Let scripts name user types by scopes (`struct NAME`point`) that `find` turns into
/// objects: `a.out` for a process's executable, or an object's file name as the `pid`
/// provider's module field spells it (`libc.so.6`). Set before typing; the first finder
/// set stays.
pub fn set_scopes(find: impl Fn(&str) -> Option<PathBuf> + Send + Sync + 'static) {
    let _ = SCOPES.set(Box::new(find));
}

/// The object scope `name` names, as [`set_scopes`]' finder says.
pub fn scope(name: &str) -> Option<PathBuf> {
    SCOPES.get()?(name)
}

/// Why the object at `path` has no user types (no DWARF, unreadable), if it has none.
pub fn untyped(path: &Path) -> Option<String> {
    let _ = converting(path, |_| Some(()));
    let objects = objects();
    let object = objects.iter().find(|o| o.path == path)?;
    object.types.as_ref().err().cloned()
}

/// Whether `record` comes from user DWARF.
pub fn is_user(record: &Record) -> bool {
    (USER_RECORD_BASE..D_RECORD_BASE).contains(&record.id)
}

/// The BTF holding user record `record`, its range's start, and its id in that BTF.
fn locate(record: &Record) -> Option<(&'static Btf, u32, u32)> {
    let index = (record.id - USER_RECORD_BASE) / OBJECT_IDS;
    let base = USER_RECORD_BASE + index * OBJECT_IDS;
    let btf = objects().get(index as usize)?.btf?;
    Some((btf, base, record.id - base))
}

/// Whether user record `record` is a union.
pub fn is_union(record: &Record) -> bool {
    locate(record).is_some_and(|(btf, _, id)| btf.kind(id) == Kind::Union)
}

/// The members of user record `record`, in order.
pub fn members(record: &Record) -> Vec<(String, MemberInfo)> {
    locate(record).map_or_else(Vec::new, |(btf, base, id)| {
        kernel::members_at(btf, id, base)
    })
}

/// Member `name` of user record `record`.
pub fn member(record: &Record, name: &str) -> Option<MemberInfo> {
    let (btf, base, id) = locate(record)?;
    kernel::member_at(btf, id, name, base)
}

/// The constants of a user `enum tag`, from the first object whose converted types define
/// it.
pub fn enum_constants(tag: &str) -> Option<Vec<(String, i64)>> {
    let objects = objects();
    objects.iter().filter_map(|o| o.btf).find_map(|btf| {
        let id = btf.find(Kind::Enum, tag)?;
        match &btf.get(id)?.kind {
            TypeKind::Enum(e) => Some(
                e.values
                    .iter()
                    .map(|v| (btf.str(v.name).to_string(), v.value))
                    .collect(),
            ),
            _ => None,
        }
    })
}

/// The user enum constant `name` (of the types converted so far, the first object that has
/// it), typed as its enum, and its value.
pub fn enum_constant(name: &str) -> Option<(Type, i64)> {
    let objects = objects();
    objects.iter().enumerate().find_map(|(i, o)| {
        let btf = o.btf?;
        let c = btf.enum_value(name)?;
        let base = USER_RECORD_BASE + OBJECT_IDS * i as u32;
        Some((kernel::from_user_btf(btf, c.ty, base), c.value))
    })
}

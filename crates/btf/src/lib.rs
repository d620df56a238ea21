//! Reader for the kernel's BTF type information (`/sys/kernel/btf/vmlinux`, and modules'
//! split BTF on top of it, [`Btf::parse_split`]).
//!
//! [`Btf::parse`] decodes a raw BTF blob into an owned model, one [`Type`]
//! per type id (id 0 is `void`). Names stay offsets into the string section
//! until asked for ([`Btf::str`], [`Btf::name_of`]), so parsing stays
//! allocation-light: all of vmlinux BTF (5.5 MB, ~127k types, kernel 6.18)
//! parses in about 7 ms in a release build (`examples/parse_time.rs`). The
//! by-name index (~8 ms) and the enum-constant index (~2 ms) are built on
//! first use.
//!
//! On top of the model sit the queries the D compiler needs: sizes
//! ([`Btf::size_of`]), typedef/qualifier stripping ([`Btf::resolve`]), member
//! lookup through anonymous structs and unions ([`Btf::member`],
//! [`Btf::member_path`]), kernel enum constants ([`Btf::enum_value`]),
//! function prototypes ([`Btf::func_proto`]) and a C-like type printer
//! ([`Btf::type_name`], [`Btf::decl`], [`Btf::func_decl`]).
//!
//! BTF can also be made ([`Builder`]: the typing pass converts a traced program's DWARF
//! into it). It also writes BTF: [`Btf::subset`] encodes some root types and what they need as
//! a new, small blob (the typing pass's tests type against such a recording of a
//! kernel, `examples/record_subset.rs`).
//!
//! Why hand-written rather than a crates.io dependency: `libbpf-rs` and
//! `libbpf-sys` bind the C libbpf (a native build for a tool that only needs
//! to read bytes); `btf-rs` is LGPL-2.1-or-later, which does not fit this
//! project's MIT/Apache-2.0 licence; `btf` (0.5) and `btfparse` offer
//! type navigation but neither a C declarator printer nor a global
//! enum-constant index, and `btf` adds `byteorder` and `thiserror`. BTF is
//! a small, stable format; this reader is pure `std`, with no `unsafe`.

mod build;
mod error;
mod index;
mod parse;
mod print;
mod query;
mod subset;
#[cfg(test)]
mod testutil;
mod types;
mod write;

use std::path::Path;
use std::sync::OnceLock;

pub use build::Builder;
pub use error::Error;
pub use query::{EnumConst, Field};
pub use types::*;

/// Where the running kernel exposes its BTF.
pub const VMLINUX_PATH: &str = "/sys/kernel/btf/vmlinux";

/// Parsed BTF: all types, indexed by [`TypeId`], plus the string section.
#[derive(Debug)]
pub struct Btf {
    types: Vec<Type>,
    strings: Box<str>,
    /// Named types sorted by (name, kind); built on first by-name lookup.
    by_name: OnceLock<Vec<TypeId>>,
    /// Enum constants as (enum type id, index) sorted by name; built lazily.
    enumerators: OnceLock<Vec<(TypeId, u32)>>,
}

impl Btf {
    /// Parses a raw BTF blob (as found in `/sys/kernel/btf/*`).
    pub fn parse(bytes: &[u8]) -> Result<Btf, Error> {
        Ok(Btf::from_parsed(parse::parse(bytes, None)?))
    }

    /// Parses a split BTF blob on top of `base` (a module's, `/sys/kernel/btf/MODULE`, on
    /// vmlinux's): the result stands alone, with the base's types (same ids) and the
    /// module's after them.
    pub fn parse_split(bytes: &[u8], base: &Btf) -> Result<Btf, Error> {
        Ok(Btf::from_parsed(parse::parse(
            bytes,
            Some((&base.types, &base.strings)),
        )?))
    }

    fn from_parsed(parse::Parsed { types, strings }: parse::Parsed) -> Btf {
        Btf {
            types,
            strings,
            by_name: OnceLock::new(),
            enumerators: OnceLock::new(),
        }
    }

    /// Reads and parses a raw BTF file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Btf, Error> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Btf::parse(&bytes)
    }

    /// Reads and parses the running kernel's BTF ([`VMLINUX_PATH`]).
    pub fn vmlinux() -> Result<Btf, Error> {
        Btf::from_file(VMLINUX_PATH)
    }

    /// Reads and parses loaded module `name`'s BTF (`/sys/kernel/btf/NAME`), split on
    /// `vmlinux`.
    pub fn module(name: &str, vmlinux: &Btf) -> Result<Btf, Error> {
        let path = Path::new(VMLINUX_PATH).with_file_name(name);
        let bytes = std::fs::read(&path).map_err(|source| Error::Io { path, source })?;
        Btf::parse_split(&bytes, vmlinux)
    }

    /// All types; index `i` is type id `i`, index 0 is `void`.
    pub fn types(&self) -> &[Type] {
        &self.types
    }

    /// Number of type ids, including `void`.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Whether there are no types besides `void`.
    pub fn is_empty(&self) -> bool {
        self.types.len() <= 1
    }

    /// The type with this id, if it exists.
    pub fn get(&self, id: TypeId) -> Option<&Type> {
        self.types.get(id as usize)
    }

    /// The kind of type `id` (`Void` for an unknown id).
    pub fn kind(&self, id: TypeId) -> Kind {
        self.get(id).map_or(Kind::Void, |t| t.kind.kind())
    }

    /// The string a [`Name`] refers to ("" for anonymous).
    pub fn str(&self, name: Name) -> &str {
        let start = name.0 as usize;
        let rest = self.strings.get(start..).unwrap_or("");
        rest.split('\0').next().unwrap_or("")
    }

    /// The BTF name of type `id` ("" if anonymous or unknown).
    pub fn name_of(&self, id: TypeId) -> &str {
        self.get(id).map_or("", |t| self.str(t.name))
    }
}

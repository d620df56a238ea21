//! The crate's error type: reading and parsing failures, and failed member
//! lookups (which carry the names needed for a useful compiler message).

use std::fmt;
use std::path::PathBuf;

use crate::TypeId;

/// Errors from reading, parsing or querying BTF.
#[derive(Debug)]
pub enum Error {
    /// The file could not be read.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The blob ended before a structure that should be at `offset`.
    Truncated { what: &'static str, offset: usize },
    /// The first two bytes are not the BTF magic `0xeB9F`.
    BadMagic(u16),
    /// A BTF version other than 1.
    UnsupportedVersion(u8),
    /// A header field is inconsistent (section out of bounds...).
    BadHeader(&'static str),
    /// The string section is malformed (not NUL-framed or not UTF-8).
    BadStrings(&'static str),
    /// A name offset points outside the string section.
    BadName { id: TypeId, offset: u32 },
    /// A type record has a kind this reader does not know.
    UnknownKind { id: TypeId, kind: u8 },
    /// A type refers to a type id that does not exist.
    BadTypeRef { id: TypeId, target: u32 },
    /// More types than type ids can number.
    TooManyTypes,
    /// A member was looked up in something that is not a struct or union.
    NotComposite { ty: String },
    /// A struct or union has no member of that name.
    NoMember { ty: String, member: String },
    /// No type has this kind and name (as spelled to [`crate::Btf::subset`]).
    NoType(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "cannot read {}: {source}", path.display()),
            Error::Truncated { what, offset } => {
                write!(f, "BTF truncated: {what} at byte {offset} is incomplete")
            }
            Error::BadMagic(m) => write!(f, "not BTF: bad magic {m:#06x}"),
            Error::UnsupportedVersion(v) => write!(f, "unsupported BTF version {v}"),
            Error::BadHeader(why) => write!(f, "bad BTF header: {why}"),
            Error::BadStrings(why) => write!(f, "bad BTF string section: {why}"),
            Error::BadName { id, offset } => {
                write!(f, "BTF type {id}: name offset {offset} is out of bounds")
            }
            Error::UnknownKind { id, kind } => write!(f, "BTF type {id}: unknown kind {kind}"),
            Error::BadTypeRef { id, target } => {
                write!(f, "BTF type {id}: refers to missing type {target}")
            }
            Error::TooManyTypes => write!(f, "BTF has too many types"),
            Error::NotComposite { ty } => write!(f, "{ty} is not a struct or union"),
            Error::NoMember { ty, member } => write!(f, "{ty} has no member named '{member}'"),
            Error::NoType(name) => write!(f, "no type '{name}' in BTF"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

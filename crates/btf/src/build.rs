//! BTF made by a program rather than read from a blob: a [`Builder`] takes types one by
//! one (a placeholder first, for a struct that refers to itself) and hands out [`Btf`]s
//! of what it holds so far. The typing pass converts a traced program's DWARF into BTF
//! this way, so user types are queried and converted exactly as the kernel's are.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::types::{Name, Type, TypeId, TypeKind};
use crate::Btf;

/// Types and names being gathered; ids are given in order from 1 (0 is `void`).
#[derive(Clone, Debug)]
pub struct Builder {
    types: Vec<Type>,
    strings: String,
    names: HashMap<String, Name>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            types: vec![Type {
                name: Name::default(),
                kind: TypeKind::Void,
            }],
            strings: "\0".to_string(),
            names: HashMap::new(),
        }
    }
}

impl Builder {
    /// The name `s` (stored once; "" is the empty name).
    pub fn name(&mut self, s: &str) -> Name {
        if s.is_empty() || s.contains('\0') {
            return Name::default();
        }
        if let Some(&n) = self.names.get(s) {
            return n;
        }
        let n = Name(self.strings.len() as u32);
        self.strings.push_str(s);
        self.strings.push('\0');
        self.names.insert(s.to_string(), n);
        n
    }

    /// Adds a type, returning its id.
    pub fn push(&mut self, name: &str, kind: TypeKind) -> TypeId {
        let name = self.name(name);
        self.types.push(Type { name, kind });
        (self.types.len() - 1) as TypeId
    }

    /// Replaces the kind of type `id` (a placeholder given first); an unknown id is ignored.
    pub fn set(&mut self, id: TypeId, kind: TypeKind) {
        if let Some(t) = self.types.get_mut(id as usize).filter(|_| id != 0) {
            t.kind = kind;
        }
    }

    /// Number of type ids, `void` included.
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// Whether only `void` is there.
    pub fn is_empty(&self) -> bool {
        self.types.len() <= 1
    }

    /// The types gathered so far, as BTF to query. References to ids not given yet (or
    /// out of range) read as `void`.
    pub fn snapshot(&self) -> Btf {
        let n = self.types.len() as TypeId;
        let mut types = self.types.clone();
        for t in &mut types {
            t.kind.for_each_ref_mut(|id| {
                if *id >= n {
                    *id = 0;
                }
            });
        }
        Btf {
            types,
            strings: self.strings.clone().into_boxed_str(),
            by_name: OnceLock::new(),
            enumerators: OnceLock::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Composite, Int, Member};
    use crate::Kind;

    #[test]
    fn builds_a_self_referring_struct() {
        let mut b = Builder::default();
        let int = b.push(
            "int",
            TypeKind::Int(Int {
                size: 4,
                signed: true,
                char: false,
                bool: false,
                bit_offset: 0,
                bits: 32,
            }),
        );
        let rec = b.push("rec", TypeKind::Fwd { union: false });
        let ptr = b.push("", TypeKind::Ptr(rec));
        let id = b.name("id");
        let next = b.name("next");
        b.set(
            rec,
            TypeKind::Struct(Composite {
                size: 16,
                members: vec![
                    Member {
                        name: id,
                        ty: int,
                        bit_offset: 0,
                        bitfield_size: 0,
                    },
                    Member {
                        name: next,
                        ty: ptr,
                        bit_offset: 64,
                        bitfield_size: 0,
                    },
                ],
            }),
        );
        let btf = b.snapshot();
        assert_eq!(btf.find(Kind::Struct, "rec"), Some(rec));
        assert_eq!(btf.type_name(ptr), "struct rec *");
        assert_eq!(btf.member(rec, "next").map(|f| f.bit_offset), Some(64));
    }
}

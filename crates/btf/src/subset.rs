//! Subsets of a BTF: some root types and everything they need, written as a new, much
//! smaller blob ([`Btf::subset`]), such as a recording of a kernel's types for tests
//! that must run without that kernel.
//!
//! A subset is closed: every type a kept type refers to is kept. What keeps it small is
//! the depth limit: each type is as deep as the fewest pointers between a root and it,
//! and a named struct or union deeper than the limit that is only ever reached through
//! pointers (and typedefs and qualifiers of them) is kept as a forward declaration
//! (`BTF_KIND_FWD`), which ends the walk there. A struct or union held by value (a
//! member, an array element, a parameter or return value of a function prototype, a
//! variable) stays whole at any depth, as the kernel's BTF checks require, so every kept
//! struct keeps its layout and every member its size; anonymous structs and unions are
//! always kept whole (BTF has no anonymous forward declaration). Declaration tags on
//! kept types are kept too. Type ids are renumbered in their original order, so "the
//! first type of this name" stays the same type.

use std::collections::VecDeque;

use crate::error::Error;
use crate::types::*;
use crate::{write, Btf};

impl Btf {
    /// A BTF blob of the types `roots` name and everything they refer to, with the
    /// named structs and unions more than `max_depth` pointers away from every root
    /// written as forward declarations where BTF allows (see the module documentation).
    ///
    /// A root is spelled as C names the type, with BTF's kinds as keywords:
    /// `struct task_struct`, `union bpf_attr`, `enum pid_type` (32- or 64-bit),
    /// `typedef pid_t`, `func vfs_read`, `var runqueues`, `datasec .data..percpu`, or
    /// the bare name of an integer or floating-point type (`unsigned long`).
    /// [`Error::NoType`] names a root that no type matches.
    pub fn subset(&self, roots: &[&str], max_depth: u32) -> Result<Vec<u8>, Error> {
        let roots = roots
            .iter()
            .map(|root| {
                self.root(root)
                    .ok_or_else(|| Error::NoType(root.to_string()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let reach = self.reach(&roots, max_depth);
        let declared_only = |id: TypeId| self.declared_only(id, reach[id as usize], max_depth);
        let kept: Vec<TypeId> = (1..self.types.len() as TypeId)
            .filter(|&id| match self.types[id as usize].kind {
                // A tag is kept with its (whole) target.
                TypeKind::DeclTag { ty, .. } => {
                    reach[ty as usize].is_reached() && !declared_only(ty)
                }
                _ => reach[id as usize].is_reached(),
            })
            .collect();
        let mut new_id = vec![0; self.types.len()];
        for (i, &id) in kept.iter().enumerate() {
            new_id[id as usize] = i as TypeId + 1;
        }
        let mut types = Vec::with_capacity(kept.len() + 1);
        types.push(self.types[0].clone());
        for &id in &kept {
            let t = &self.types[id as usize];
            let mut t = if declared_only(id) {
                Type {
                    name: t.name,
                    kind: TypeKind::Fwd {
                        union: matches!(t.kind, TypeKind::Union(_)),
                    },
                }
            } else {
                t.clone()
            };
            t.kind.for_each_ref_mut(|ty| *ty = new_id[*ty as usize]);
            types.push(t);
        }
        Ok(write::write(&types, |name| self.str(name)))
    }

    /// The type a root spelling names (see [`Btf::subset`]).
    fn root(&self, spelling: &str) -> Option<TypeId> {
        let (keyword, name) = spelling.split_once(' ').unwrap_or(("", spelling));
        let kinds: &[Kind] = match keyword {
            "struct" => &[Kind::Struct],
            "union" => &[Kind::Union],
            "enum" => &[Kind::Enum, Kind::Enum64],
            "typedef" => &[Kind::Typedef],
            "func" => &[Kind::Func],
            "var" => &[Kind::Var],
            "datasec" => &[Kind::Datasec],
            _ => {
                return self
                    .find(Kind::Int, spelling)
                    .or(self.find(Kind::Float, spelling))
            }
        };
        kinds.iter().find_map(|&kind| self.find(kind, name))
    }

    /// How every type id is reached from `roots`, walking every reference except out
    /// of the structs and unions that become forward declarations. A worklist in
    /// breadth-first order: references through a pointer go to the back of the queue,
    /// one deeper; others to the front. A type goes back on the queue whenever it is
    /// reached better (less deep, or by value for the first time).
    fn reach(&self, roots: &[TypeId], max_depth: u32) -> Vec<Reach> {
        let mut reach = vec![Reach::NOT; self.types.len()];
        let mut queue = VecDeque::new();
        for &root in roots {
            reach[root as usize] = Reach {
                depth: 0,
                by_value: true,
            };
            queue.push_back(root);
        }
        while let Some(id) = queue.pop_front() {
            let from = reach[id as usize];
            if self.declared_only(id, from, max_depth) {
                continue;
            }
            let kind = &self.types[id as usize].kind;
            let pointer = matches!(kind, TypeKind::Ptr(_));
            let to = Reach {
                depth: from.depth + u32::from(pointer),
                by_value: match kind {
                    TypeKind::Ptr(_) => false,
                    TypeKind::Typedef(_)
                    | TypeKind::Const(_)
                    | TypeKind::Volatile(_)
                    | TypeKind::Restrict(_)
                    | TypeKind::TypeTag { .. } => from.by_value,
                    _ => true,
                },
            };
            kind.for_each_ref(|ty| {
                let old = reach[ty as usize];
                if to.depth < old.depth || (to.by_value && !old.by_value) {
                    reach[ty as usize] = Reach {
                        depth: to.depth.min(old.depth),
                        by_value: to.by_value || old.by_value,
                    };
                    if pointer {
                        queue.push_back(ty);
                    } else {
                        queue.push_front(ty);
                    }
                }
            });
        }
        reach
    }

    /// Whether type `id`, reached so, is written as a forward declaration: a named
    /// struct or union deeper than `max_depth`, only reached through pointers.
    fn declared_only(&self, id: TypeId, reach: Reach, max_depth: u32) -> bool {
        let t = &self.types[id as usize];
        reach.is_reached()
            && reach.depth > max_depth
            && !reach.by_value
            && !t.name.is_empty()
            && matches!(t.kind, TypeKind::Struct(_) | TypeKind::Union(_))
    }
}

/// How a type is reached from the roots.
#[derive(Clone, Copy, Debug)]
struct Reach {
    /// The fewest pointers between a root and the type.
    depth: u32,
    /// Whether some kept type holds it by value (through typedefs and qualifiers): a
    /// struct or union that must stay whole.
    by_value: bool,
}

impl Reach {
    /// Not reached (yet).
    const NOT: Reach = Reach {
        depth: u32::MAX,
        by_value: false,
    };

    fn is_reached(self) -> bool {
        self.depth != Reach::NOT.depth
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{fixture, Builder};
    use crate::write::tests::canonical;
    use crate::{Btf, Error, Kind, TypeKind};

    #[test]
    fn everything_reachable_at_full_depth_is_kept_as_is() {
        let f = fixture();
        let btf = Btf::parse(&f.bytes).unwrap();
        let sub = Btf::parse(&btf.subset(&["struct task_struct"], 10).unwrap()).unwrap();
        let names: Vec<String> = (1..sub.len() as u32).map(|id| sub.type_name(id)).collect();
        assert_eq!(
            names,
            [
                "int",
                "char",
                "unsigned long",
                "pid_t",
                "struct task_struct *",
                "struct task_struct",
                "union {...}",
                "char[16]",
                "struct sched_entity",
            ]
        );
        assert!(sub.types().iter().all(|t| t.kind.kind() != Kind::Fwd));
        let task = sub.find(Kind::Struct, "task_struct").unwrap();
        assert_eq!(sub.size_of(task), Some(64));
        for member in ["pid", "flags", "a", "b", "comm", "se", "parent"] {
            let (a, b) = (sub.member(task, member), btf.member(f.task, member));
            assert_eq!(
                a.map(|m| (m.bit_offset, m.bitfield_size)),
                b.map(|m| (m.bit_offset, m.bitfield_size))
            );
        }
        assert_eq!(sub.member_path(task, "se.sum").unwrap().byte_offset(), 40);
    }

    #[test]
    fn structs_beyond_the_depth_become_forward_declarations() {
        let mut b = Builder::new();
        let int = b.int("int", 4, true, false);
        // struct a { struct b *b; struct c c; }; struct b { struct d *d; };
        // struct c { int x; }; struct d { int y; }; union u { int z; };
        let a = b.composite(false, "a", 12, &[("b", 3, 0, 0), ("c", 5, 64, 0)]);
        let b_ptr = b.raw("", 2, false, 0, 4, &[]);
        let bb = b.composite(false, "b", 8, &[("d", 6, 0, 0)]);
        let c = b.composite(false, "c", 4, &[("x", int, 0, 0)]);
        let d_ptr = b.raw("", 2, false, 0, 7, &[]);
        let d = b.composite(false, "d", 4, &[("y", int, 0, 0)]);
        let u = b.composite(true, "u", 4, &[("z", int, 0, 0)]);
        let u_ptr = b.raw("", 2, false, 0, u, &[]);
        b.raw("tag_d", 17, false, 0, d, &[0]);
        b.raw("tag_u", 17, false, 0, u, &[u32::MAX]);
        b.raw("t", 8, false, 0, u_ptr, &[]);
        assert_eq!((a, b_ptr, bb, c, d_ptr, d), (2, 3, 4, 5, 6, 7));
        let btf = Btf::parse(&b.build()).unwrap();
        let kinds = |roots: &[&str], depth| {
            let sub = Btf::parse(&btf.subset(roots, depth).unwrap()).unwrap();
            (1..sub.len() as u32)
                .map(|id| format!("{:?} {}", sub.kind(id), sub.name_of(id)))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            kinds(&["struct a"], 0),
            ["Int int", "Struct a", "Ptr ", "Fwd b", "Struct c"]
        );
        assert_eq!(
            kinds(&["struct a"], 1),
            ["Int int", "Struct a", "Ptr ", "Struct b", "Struct c", "Ptr ", "Fwd d"]
        );
        assert_eq!(
            kinds(&["struct a"], 2),
            [
                "Int int",
                "Struct a",
                "Ptr ",
                "Struct b",
                "Struct c",
                "Ptr ",
                "Struct d",
                "DeclTag tag_d"
            ]
        );
        // A typedef of a pointer to a union; the union's tag goes with it when whole.
        assert_eq!(kinds(&["typedef t"], 0), ["Fwd u", "Ptr ", "Typedef t"]);
        assert_eq!(
            kinds(&["typedef t", "int"], 1),
            ["Int int", "Union u", "Ptr ", "DeclTag tag_u", "Typedef t"]
        );
        let sub = Btf::parse(&btf.subset(&["typedef t"], 0).unwrap()).unwrap();
        assert!(matches!(sub.types()[1].kind, TypeKind::Fwd { union: true }));
    }

    #[test]
    fn structs_held_by_value_stay_whole_at_any_depth() {
        // struct r { void (*f)(struct v); struct w (*a)[2]; zt *z; };
        // struct v { int x; }; struct w { int y; }; typedef struct z zt; struct z { int z; };
        let mut b = Builder::new();
        let int = b.int("int", 4, true, false);
        let r = b.composite(
            false,
            "r",
            24,
            &[("f", 3, 0, 0), ("a", 5, 64, 0), ("z", 9, 128, 0)],
        );
        b.raw("", 2, false, 0, 4, &[]);
        let x = b.str("x");
        b.raw("", 13, false, 1, 0, &[x, 7]);
        b.raw("", 2, false, 0, 6, &[]);
        b.raw("", 3, false, 0, 0, &[8, int, 2]);
        b.composite(false, "v", 4, &[("x", int, 0, 0)]);
        b.composite(false, "w", 4, &[("y", int, 0, 0)]);
        b.raw("", 2, false, 0, 10, &[]);
        b.raw("zt", 8, false, 0, 11, &[]);
        let z = b.composite(false, "z", 4, &[("z", int, 0, 0)]);
        assert_eq!((r, z), (2, 11));
        let btf = Btf::parse(&b.build()).unwrap();
        let sub = Btf::parse(&btf.subset(&["struct r"], 0).unwrap()).unwrap();
        let kinds: Vec<String> = (1..sub.len() as u32)
            .map(|id| format!("{:?} {}", sub.kind(id), sub.name_of(id)))
            .collect();
        assert_eq!(
            kinds,
            [
                "Int int",
                "Struct r",
                "Ptr ",
                "FuncProto ",
                "Ptr ",
                "Array ",
                "Struct v",
                "Struct w",
                "Ptr ",
                "Typedef zt",
                "Fwd z"
            ]
        );
    }

    #[test]
    fn a_pointer_nearer_to_a_root_wins() {
        // struct a { struct b *b; }; struct b { int x; }: with b also a root, b is whole
        // at depth 0 whatever a's pointer says.
        let mut b = Builder::new();
        let int = b.int("int", 4, true, false);
        b.composite(false, "a", 8, &[("b", 3, 0, 0)]);
        b.raw("", 2, false, 0, 4, &[]);
        b.composite(false, "b", 4, &[("x", int, 0, 0)]);
        let btf = Btf::parse(&b.build()).unwrap();
        let sub = Btf::parse(&btf.subset(&["struct a", "struct b"], 0).unwrap()).unwrap();
        assert_eq!(canonical(&sub), canonical(&btf));
    }

    #[test]
    fn roots_are_spelled_with_their_kind() {
        let f = fixture();
        let btf = Btf::parse(&f.bytes).unwrap();
        let one = |root: &str| {
            let sub = Btf::parse(&btf.subset(&[root], 0).unwrap()).unwrap();
            sub.types()
                .iter()
                .skip(1)
                .map(|t| t.kind.kind())
                .collect::<Vec<_>>()
        };
        assert_eq!(one("unsigned long"), [Kind::Int]);
        assert_eq!(one("typedef pid_t"), [Kind::Int, Kind::Typedef]);
        assert_eq!(one("enum color"), [Kind::Enum]);
        assert_eq!(one("enum big"), [Kind::Enum64]);
        assert_eq!(
            one("func do_open"),
            [
                Kind::Int,
                Kind::Int,
                Kind::Const,
                Kind::Ptr,
                Kind::FuncProto,
                Kind::Func
            ]
        );
        for missing in ["struct nope", "union task_struct", "enum pid_t", "float"] {
            match btf.subset(&[missing], 0) {
                Err(Error::NoType(name)) => assert_eq!(name, missing),
                other => panic!("{missing}: {other:?}"),
            }
        }
    }
}

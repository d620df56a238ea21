//! Lazily built lookup indexes: named types by (name, kind), and enum
//! constants by name. Both are sorted vectors of ids searched by binary
//! search, built once on first use (thread-safe via `OnceLock`).

use crate::query::EnumConst;
use crate::{Btf, Kind, TypeId, TypeKind};

impl Btf {
    /// The first type (lowest id) of exactly this kind and name, e.g.
    /// `find(Kind::Struct, "task_struct")`, `find(Kind::Typedef, "pid_t")`,
    /// `find(Kind::Func, "vfs_read")`. `Kind::Enum` does not match `ENUM64`.
    pub fn find(&self, kind: Kind, name: &str) -> Option<TypeId> {
        self.find_named(name)
            .iter()
            .copied()
            .find(|&id| self.kind(id) == kind)
    }

    /// All types with this name, of any kind, ordered by kind then id.
    pub fn find_named(&self, name: &str) -> &[TypeId] {
        let index = self.by_name.get_or_init(|| self.build_name_index());
        let start = index.partition_point(|&id| self.name_of(id) < name);
        let len = index[start..].partition_point(|&id| self.name_of(id) == name);
        &index[start..start + len]
    }

    /// The value of the kernel enum constant `name` (e.g. `TASK_COMM_LEN`),
    /// searched across all `ENUM` and `ENUM64` types. If several enums
    /// define it, the one with the lowest type id wins.
    pub fn enum_value(&self, name: &str) -> Option<EnumConst> {
        let index = self
            .enumerators
            .get_or_init(|| self.build_enumerator_index());
        let i = index.partition_point(|&(id, i)| self.enumerator_name(id, i) < name);
        let &(ty, idx) = index.get(i)?;
        if self.enumerator_name(ty, idx) != name {
            return None;
        }
        let e = self.enum_data(ty)?;
        let v = e.values.get(idx as usize)?;
        Some(EnumConst {
            ty,
            value: v.value,
            signed: e.signed,
        })
    }

    fn build_name_index(&self) -> Vec<TypeId> {
        let mut keyed: Vec<(&str, Kind, TypeId)> = (1..self.types.len())
            .filter_map(|i| {
                let t = &self.types[i];
                (!t.name.is_empty()).then(|| (self.str(t.name), t.kind.kind(), i as TypeId))
            })
            .collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, _, id)| id).collect()
    }

    fn build_enumerator_index(&self) -> Vec<(TypeId, u32)> {
        let mut keyed: Vec<(&str, TypeId, u32)> = Vec::new();
        for (id, t) in self.types.iter().enumerate() {
            if let TypeKind::Enum(e) | TypeKind::Enum64(e) = &t.kind {
                for (i, v) in e.values.iter().enumerate() {
                    keyed.push((self.str(v.name), id as TypeId, i as u32));
                }
            }
        }
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, id, i)| (id, i)).collect()
    }

    fn enum_data(&self, id: TypeId) -> Option<&crate::Enum> {
        match &self.get(id)?.kind {
            TypeKind::Enum(e) | TypeKind::Enum64(e) => Some(e),
            _ => None,
        }
    }

    fn enumerator_name(&self, id: TypeId, i: u32) -> &str {
        self.enum_data(id)
            .and_then(|e| e.values.get(i as usize))
            .map_or("", |v| self.str(v.name))
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::fixture;
    use crate::{Btf, Kind};

    #[test]
    fn finds_types_by_kind_and_name() {
        let f = fixture();
        let btf = Btf::parse(&f.bytes).unwrap();
        assert_eq!(btf.find(Kind::Struct, "task_struct"), Some(f.task));
        assert_eq!(btf.find(Kind::Fwd, "task_struct"), Some(f.task - 2));
        assert_eq!(btf.find(Kind::Typedef, "pid_t"), Some(f.pid_t));
        assert_eq!(btf.find(Kind::Func, "do_open"), Some(f.func));
        assert_eq!(btf.find(Kind::Int, "unsigned long"), Some(f.ulong));
        assert_eq!(btf.find(Kind::Union, "task_struct"), None);
        assert_eq!(btf.find(Kind::Struct, "nope"), None);
        assert_eq!(btf.find(Kind::Struct, ""), None);
        assert_eq!(btf.find_named("task_struct"), &[f.task, f.task - 2]);
    }

    #[test]
    fn finds_enum_constants() {
        let f = fixture();
        let btf = Btf::parse(&f.bytes).unwrap();
        let red = btf.enum_value("RED").unwrap();
        assert_eq!((red.ty, red.value, red.signed), (f.color, 0, true));
        assert_eq!(btf.enum_value("BLUE").unwrap().value, -3);
        let huge = btf.enum_value("HUGE").unwrap();
        assert_eq!((huge.ty, huge.value as u64), (f.big, 0x8000_0000_0000_0001));
        assert_eq!(btf.enum_value("GREEN"), None);
    }
}

//! Encoding of the owned model back into a raw BTF blob: the inverse of `parse`. The
//! blob is little-endian, version 1, with a 24-byte header, the type section, then a
//! string section holding each distinct name once (in order of first use).
//!
//! Every model `parse` produces is encodable: `kind_flag` is rebuilt from the payloads
//! (bitfield widths of structs and unions, signedness of enums, a union forward
//! declaration, attribute tags), and counts (`vlen`) and bitfield offsets stay within
//! the limits the blob they came from had.

use std::collections::HashMap;

use crate::types::*;

/// BTF magic, version 1, no flags, as the first little-endian word of the header.
const MAGIC_VERSION_FLAGS: u32 = 0x0001_eb9f;
/// Size of the version-1 header.
const HEADER_LEN: u32 = 24;

/// Encodes `types` (index `i` is type id `i`; index 0, `void`, is not written), whose
/// names are looked up with `name`.
pub(crate) fn write<'a>(types: &[Type], name: impl Fn(Name) -> &'a str) -> Vec<u8> {
    let mut out = Writer::default();
    for t in types.iter().skip(1) {
        let name_off = out.string(name(t.name));
        out.type_record(name_off, t, &name);
    }
    out.finish()
}

/// The type and string sections being built.
#[derive(Default)]
struct Writer<'a> {
    words: Vec<u32>,
    strings: Vec<u8>,
    offsets: HashMap<&'a str, u32>,
}

impl<'a> Writer<'a> {
    /// The offset of `s` in the string section, adding it on first use ("" is 0).
    fn string(&mut self, s: &'a str) -> u32 {
        if self.strings.is_empty() {
            self.strings.push(0);
        }
        if s.is_empty() {
            return 0;
        }
        if let Some(&off) = self.offsets.get(s) {
            return off;
        }
        let off = self.strings.len() as u32;
        self.strings.extend_from_slice(s.as_bytes());
        self.strings.push(0);
        self.offsets.insert(s, off);
        off
    }

    /// The common record: name, info word (`vlen`, kind, `kind_flag`), size or type.
    fn header(&mut self, name: u32, kind: u32, flag: bool, vlen: usize, size_or_type: u32) {
        let info = vlen as u32 | (kind << 24) | (u32::from(flag) << 31);
        self.words.extend_from_slice(&[name, info, size_or_type]);
    }

    fn type_record(&mut self, name_off: u32, t: &Type, name: &impl Fn(Name) -> &'a str) {
        match &t.kind {
            // Only id 0 is void, and it is not written.
            TypeKind::Void => {}
            TypeKind::Int(i) => {
                self.header(name_off, 1, false, 0, i.size);
                let enc = u32::from(i.signed) | u32::from(i.char) << 1 | u32::from(i.bool) << 2;
                let bits = (enc << 24) | u32::from(i.bit_offset) << 16 | u32::from(i.bits);
                self.words.push(bits);
            }
            TypeKind::Ptr(ty) => self.header(name_off, 2, false, 0, *ty),
            TypeKind::Array(a) => {
                self.header(name_off, 3, false, 0, 0);
                self.words.extend_from_slice(&[a.elem, a.index, a.len]);
            }
            TypeKind::Struct(c) | TypeKind::Union(c) => {
                let kind = if matches!(t.kind, TypeKind::Struct(_)) {
                    4
                } else {
                    5
                };
                let flag = c.members.iter().any(|m| m.bitfield_size != 0);
                self.header(name_off, kind, flag, c.members.len(), c.size);
                for m in &c.members {
                    let off = if flag {
                        u32::from(m.bitfield_size) << 24 | m.bit_offset
                    } else {
                        m.bit_offset
                    };
                    let member_name = self.string(name(m.name));
                    self.words.extend_from_slice(&[member_name, m.ty, off]);
                }
            }
            TypeKind::Enum(e) | TypeKind::Enum64(e) => {
                let wide = matches!(t.kind, TypeKind::Enum64(_));
                let kind = if wide { 19 } else { 6 };
                self.header(name_off, kind, e.signed, e.values.len(), e.size);
                for v in &e.values {
                    let value_name = self.string(name(v.name));
                    let bits = v.value as u64;
                    self.words.extend_from_slice(&[value_name, bits as u32]);
                    if wide {
                        self.words.push((bits >> 32) as u32);
                    }
                }
            }
            TypeKind::Fwd { union } => self.header(name_off, 7, *union, 0, 0),
            TypeKind::Typedef(ty) => self.header(name_off, 8, false, 0, *ty),
            TypeKind::Volatile(ty) => self.header(name_off, 9, false, 0, *ty),
            TypeKind::Const(ty) => self.header(name_off, 10, false, 0, *ty),
            TypeKind::Restrict(ty) => self.header(name_off, 11, false, 0, *ty),
            TypeKind::Func { proto, linkage } => {
                let linkage = match linkage {
                    Linkage::Static => 0,
                    Linkage::Global => 1,
                    Linkage::Extern => 2,
                    Linkage::Other(n) => usize::from(*n),
                };
                self.header(name_off, 12, false, linkage, *proto);
            }
            TypeKind::FuncProto(p) => {
                self.header(name_off, 13, false, p.params.len(), p.ret);
                for param in &p.params {
                    let param_name = self.string(name(param.name));
                    self.words.extend_from_slice(&[param_name, param.ty]);
                }
            }
            TypeKind::Var { ty, linkage } => {
                self.header(name_off, 14, false, 0, *ty);
                self.words.push(*linkage);
            }
            TypeKind::Datasec(d) => {
                self.header(name_off, 15, false, d.vars.len(), d.size);
                for v in &d.vars {
                    self.words.extend_from_slice(&[v.ty, v.offset, v.size]);
                }
            }
            TypeKind::Float { size } => self.header(name_off, 16, false, 0, *size),
            TypeKind::DeclTag {
                ty,
                component_idx,
                attribute,
            } => {
                self.header(name_off, 17, *attribute, 0, *ty);
                self.words.push(*component_idx as u32);
            }
            TypeKind::TypeTag { ty, attribute } => self.header(name_off, 18, *attribute, 0, *ty),
        }
    }

    /// The blob: header, type section, string section.
    fn finish(mut self) -> Vec<u8> {
        self.string("");
        let type_len = (self.words.len() * 4) as u32;
        let header = [
            MAGIC_VERSION_FLAGS,
            HEADER_LEN,
            0,
            type_len,
            type_len,
            self.strings.len() as u32,
        ];
        let mut out = Vec::with_capacity((HEADER_LEN + type_len) as usize + self.strings.len());
        for w in header.iter().chain(&self.words) {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out.extend_from_slice(&self.strings);
        out
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::HashMap;

    use super::write;
    use crate::testutil::{fixture, Builder};
    use crate::{Btf, Name, Type, TypeKind};

    /// `btf`'s types with every name offset replaced by the number of its text in order
    /// of first appearance: equal for blobs that differ only in their string sections.
    pub(crate) fn canonical(btf: &Btf) -> Vec<Type> {
        let mut numbers: HashMap<&str, u32> = HashMap::new();
        let mut rename = |n: &mut Name| {
            let next = numbers.len() as u32;
            n.0 = *numbers.entry(btf.str(*n)).or_insert(next);
        };
        let mut types = btf.types().to_vec();
        for t in &mut types {
            rename(&mut t.name);
            match &mut t.kind {
                TypeKind::Struct(c) | TypeKind::Union(c) => {
                    c.members.iter_mut().for_each(|m| rename(&mut m.name))
                }
                TypeKind::Enum(e) | TypeKind::Enum64(e) => {
                    e.values.iter_mut().for_each(|v| rename(&mut v.name))
                }
                TypeKind::FuncProto(p) => p.params.iter_mut().for_each(|p| rename(&mut p.name)),
                _ => {}
            }
        }
        types
    }

    fn round_trip(btf: &Btf) -> Btf {
        Btf::parse(&write(btf.types(), |n| btf.str(n))).expect("written blob parses")
    }

    #[test]
    fn the_fixture_round_trips() {
        let f = fixture();
        let btf = Btf::parse(&f.bytes).unwrap();
        let again = round_trip(&btf);
        assert_eq!(canonical(&again), canonical(&btf));
        // Up to the second `task_struct` (which the fixture's builder stores twice), even
        // the name offsets are the same.
        let n = f.task as usize;
        assert_eq!(again.types()[..n], btf.types()[..n]);
        assert_ne!(again.types()[n], btf.types()[n]);
    }

    #[test]
    fn flags_of_every_kind_survive() {
        let mut b = Builder::new();
        let int = b.int("int", 4, true, false);
        b.raw("user", 18, false, 0, int, &[]);
        let attr = b.raw("address_space(1)", 18, true, 0, 0, &[]);
        b.raw("u", 7, true, 0, 0, &[]);
        b.raw("x", 17, true, 0, int, &[u32::MAX]);
        let var = b.raw("k", 14, false, 0, int, &[2]);
        let bits = b.raw("bits", 1, false, 0, 4, &[(5 << 24) | (3 << 16) | 7]);
        b.composite(false, "s", 4, &[("a", bits, 0, 3), ("b", int, 3, 29)]);
        b.raw("sec", 15, false, 1, 4, &[var, 0, 4]);
        b.raw("half", 16, false, 0, 2, &[]);
        let neg = b.str("NEG");
        b.raw("e", 6, true, 1, 4, &[neg, (-1i32) as u32]);
        let btf = Btf::parse(&b.build()).unwrap();
        let again = round_trip(&btf);
        assert_eq!(canonical(&again), canonical(&btf));
        assert!(matches!(
            again.types()[attr as usize].kind,
            TypeKind::TypeTag {
                ty: 0,
                attribute: true
            }
        ));
    }

    #[test]
    fn names_are_stored_once() {
        let mut b = Builder::new();
        let int = b.int("int", 4, true, false);
        b.raw("int", 8, false, 0, int, &[]);
        let btf = Btf::parse(&b.build()).unwrap();
        let bytes = write(btf.types(), |n| btf.str(n));
        assert_eq!(&bytes[bytes.len() - 5..], b"\0int\0");
        assert_eq!(bytes.len(), 24 + 2 * 12 + 4 + 5);
    }

    #[test]
    fn the_running_kernels_btf_round_trips() {
        let Ok(btf) = Btf::vmlinux() else {
            eprintln!("skipped: no {}", crate::VMLINUX_PATH);
            return;
        };
        let again = round_trip(&btf);
        assert_eq!(again.len(), btf.len());
        assert_eq!(canonical(&again), canonical(&btf));
    }
}

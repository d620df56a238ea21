//! Decoding of the raw BTF blob (header, type section, string section) into
//! the owned model. Every read is bounds-checked, every name offset and type
//! reference is validated, so queries on the result never index out of range.
//! Both byte orders are accepted (the magic tells which).

use crate::error::Error;
use crate::types::*;

/// BTF magic, as read in the blob's own byte order.
const MAGIC: u16 = 0xeb9f;
/// Size of the version-1 header; newer headers may be longer.
const HEADER_LEN: usize = 24;

/// The decoded contents of a blob.
pub(crate) struct Parsed {
    pub types: Vec<Type>,
    pub strings: Box<str>,
}

/// A bounds-checked cursor over part of the blob.
struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    /// Offset of `data` within the whole blob, for error messages.
    base: usize,
    big_endian: bool,
}

impl Reader<'_> {
    fn u32(&mut self, what: &'static str) -> Result<u32, Error> {
        let bytes = self
            .data
            .get(self.pos..self.pos + 4)
            .ok_or(Error::Truncated {
                what,
                offset: self.base + self.pos,
            })?;
        self.pos += 4;
        let bytes = [bytes[0], bytes[1], bytes[2], bytes[3]];
        Ok(if self.big_endian {
            u32::from_be_bytes(bytes)
        } else {
            u32::from_le_bytes(bytes)
        })
    }

    /// Fails early when `count` records of `size` bytes cannot fit, so a
    /// garbage `vlen` never triggers a huge allocation.
    fn expect(&self, count: usize, size: usize, what: &'static str) -> Result<(), Error> {
        if count * size > self.data.len() - self.pos {
            return Err(Error::Truncated {
                what,
                offset: self.base + self.pos,
            });
        }
        Ok(())
    }
}

/// Parses a complete BTF blob; with `base`, a split blob on top of the base's types and
/// strings (a module's BTF on vmlinux's), whose ids and string offsets continue the base's:
/// the result holds the base's types and strings, then the blob's.
pub(crate) fn parse(data: &[u8], base: Option<(&[Type], &str)>) -> Result<Parsed, Error> {
    let magic = data.get(..2).ok_or(Error::Truncated {
        what: "header",
        offset: 0,
    })?;
    let big_endian = match u16::from_le_bytes([magic[0], magic[1]]) {
        MAGIC => false,
        m if m.swap_bytes() == MAGIC => true,
        m => return Err(Error::BadMagic(m)),
    };
    if data.len() < HEADER_LEN {
        return Err(Error::Truncated {
            what: "header",
            offset: 0,
        });
    }
    if data[2] != 1 {
        return Err(Error::UnsupportedVersion(data[2]));
    }
    let mut hdr = Reader {
        data,
        pos: 4,
        base: 0,
        big_endian,
    };
    let hdr_len = hdr.u32("header")? as usize;
    let type_off = hdr.u32("header")? as usize;
    let type_len = hdr.u32("header")? as usize;
    let str_off = hdr.u32("header")? as usize;
    let str_len = hdr.u32("header")? as usize;
    if hdr_len < HEADER_LEN || hdr_len > data.len() {
        return Err(Error::BadHeader("header length out of range"));
    }
    let body = &data[hdr_len..];
    let section = |off: usize, len: usize, what| {
        off.checked_add(len)
            .and_then(|end| body.get(off..end))
            .ok_or(Error::BadHeader(what))
    };
    let type_sec = section(type_off, type_len, "type section out of bounds")?;
    let str_sec = section(str_off, str_len, "string section out of bounds")?;

    let strings = match base {
        // A split blob's strings need not start with a NUL of their own.
        Some((_, base_strings)) => {
            let own =
                std::str::from_utf8(str_sec).map_err(|_| Error::BadStrings("not valid UTF-8"))?;
            if own.as_bytes().last().is_some_and(|&b| b != 0) {
                return Err(Error::BadStrings("must end with NUL"));
            }
            format!("{base_strings}{own}").into()
        }
        None => parse_strings(str_sec)?,
    };
    let mut reader = Reader {
        data: type_sec,
        pos: 0,
        base: hdr_len + type_off,
        big_endian,
    };
    // vmlinux averages ~30 bytes per type record; avoid regrowing.
    let mut types = Vec::with_capacity(type_len / 24 + 1 + base.map_or(0, |b| b.0.len()));
    match base {
        Some((base_types, _)) => types.extend_from_slice(base_types),
        None => types.push(Type {
            name: Name(0),
            kind: TypeKind::Void,
        }),
    }
    while reader.pos < type_sec.len() {
        let id = TypeId::try_from(types.len()).map_err(|_| Error::TooManyTypes)?;
        types.push(parse_type(&mut reader, id, strings.len())?);
    }
    validate_refs(&types)?;
    Ok(Parsed { types, strings })
}

/// Checks the string section framing (starts and ends with NUL) and UTF-8.
fn parse_strings(sec: &[u8]) -> Result<Box<str>, Error> {
    if let (Some(&first), Some(&last)) = (sec.first(), sec.last()) {
        if first != 0 || last != 0 {
            return Err(Error::BadStrings("must start and end with NUL"));
        }
    }
    let s = std::str::from_utf8(sec).map_err(|_| Error::BadStrings("not valid UTF-8"))?;
    Ok(s.into())
}

fn parse_type(r: &mut Reader<'_>, id: TypeId, str_len: usize) -> Result<Type, Error> {
    const WHAT: &str = "type record";
    let name_off = r.u32(WHAT)?;
    let info = r.u32(WHAT)?;
    let size_or_type = r.u32(WHAT)?;
    if name_off as usize >= str_len.max(1) {
        return Err(Error::BadName {
            id,
            offset: name_off,
        });
    }
    let check_name = |off: u32| {
        if off as usize >= str_len.max(1) {
            Err(Error::BadName { id, offset: off })
        } else {
            Ok(Name(off))
        }
    };
    let vlen = (info & 0xffff) as usize;
    let kind = ((info >> 24) & 0x1f) as u8;
    let kind_flag = info >> 31 == 1;
    let kind = match kind {
        1 => {
            let v = r.u32("int encoding")?;
            let enc = (v >> 24) & 0xf;
            TypeKind::Int(Int {
                size: size_or_type,
                signed: enc & 1 != 0,
                char: enc & 2 != 0,
                bool: enc & 4 != 0,
                bit_offset: (v >> 16) as u8,
                bits: v as u8,
            })
        }
        2 => TypeKind::Ptr(size_or_type),
        3 => TypeKind::Array(Array {
            elem: r.u32("array")?,
            index: r.u32("array")?,
            len: r.u32("array")?,
        }),
        4 | 5 => {
            r.expect(vlen, 12, "members")?;
            let mut members = Vec::with_capacity(vlen);
            for _ in 0..vlen {
                let name = check_name(r.u32("member")?)?;
                let ty = r.u32("member")?;
                let off = r.u32("member")?;
                let (bit_offset, bitfield_size) = if kind_flag {
                    (off & 0xff_ffff, (off >> 24) as u8)
                } else {
                    (off, 0)
                };
                members.push(Member {
                    name,
                    ty,
                    bit_offset,
                    bitfield_size,
                });
            }
            let c = Composite {
                size: size_or_type,
                members,
            };
            if kind == 4 {
                TypeKind::Struct(c)
            } else {
                TypeKind::Union(c)
            }
        }
        6 | 19 => {
            let rec = if kind == 6 { 8 } else { 12 };
            r.expect(vlen, rec, "enumerators")?;
            let mut values = Vec::with_capacity(vlen);
            for _ in 0..vlen {
                let name = check_name(r.u32("enumerator")?)?;
                let lo = r.u32("enumerator")?;
                let value = if kind == 6 {
                    if kind_flag {
                        i64::from(lo as i32)
                    } else {
                        i64::from(lo)
                    }
                } else {
                    let hi = r.u32("enumerator")?;
                    ((u64::from(hi) << 32) | u64::from(lo)) as i64
                };
                values.push(Enumerator { name, value });
            }
            let e = Enum {
                size: size_or_type,
                signed: kind_flag,
                values,
            };
            if kind == 6 {
                TypeKind::Enum(e)
            } else {
                TypeKind::Enum64(e)
            }
        }
        7 => TypeKind::Fwd { union: kind_flag },
        8 => TypeKind::Typedef(size_or_type),
        9 => TypeKind::Volatile(size_or_type),
        10 => TypeKind::Const(size_or_type),
        11 => TypeKind::Restrict(size_or_type),
        12 => TypeKind::Func {
            proto: size_or_type,
            linkage: match vlen {
                0 => Linkage::Static,
                1 => Linkage::Global,
                2 => Linkage::Extern,
                n => Linkage::Other(n as u16),
            },
        },
        13 => {
            r.expect(vlen, 8, "params")?;
            let mut params = Vec::with_capacity(vlen);
            for _ in 0..vlen {
                let name = check_name(r.u32("param")?)?;
                let ty = r.u32("param")?;
                params.push(Param { name, ty });
            }
            TypeKind::FuncProto(FuncProto {
                ret: size_or_type,
                params,
            })
        }
        14 => TypeKind::Var {
            ty: size_or_type,
            linkage: r.u32("var")?,
        },
        15 => {
            r.expect(vlen, 12, "datasec entries")?;
            let mut vars = Vec::with_capacity(vlen);
            for _ in 0..vlen {
                vars.push(VarSecInfo {
                    ty: r.u32("datasec entry")?,
                    offset: r.u32("datasec entry")?,
                    size: r.u32("datasec entry")?,
                });
            }
            TypeKind::Datasec(Datasec {
                size: size_or_type,
                vars,
            })
        }
        16 => TypeKind::Float { size: size_or_type },
        17 => TypeKind::DeclTag {
            ty: size_or_type,
            component_idx: r.u32("decl tag")? as i32,
            attribute: kind_flag,
        },
        18 => TypeKind::TypeTag {
            ty: size_or_type,
            attribute: kind_flag,
        },
        kind => return Err(Error::UnknownKind { id, kind }),
    };
    Ok(Type {
        name: Name(name_off),
        kind,
    })
}

/// Checks that every type reference names an existing type.
fn validate_refs(types: &[Type]) -> Result<(), Error> {
    for (id, t) in types.iter().enumerate() {
        let mut missing = None;
        t.kind.for_each_ref(|target| {
            if target as usize >= types.len() {
                missing.get_or_insert(target);
            }
        });
        if let Some(target) = missing {
            return Err(Error::BadTypeRef {
                id: id as TypeId,
                target,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::testutil::{fixture, Builder};
    use crate::{Btf, Error, Kind, TypeKind};

    #[test]
    fn split_blobs_continue_their_base() {
        let f = fixture();
        let base = Btf::parse(&f.bytes).unwrap();
        let base_str_len = u32::from_le_bytes(f.bytes[20..24].try_into().unwrap());
        let mut b = Builder::split(base.len() as u32, base_str_len);
        let thing = b.composite(false, "module_thing", 8, &[("task", f.task_ptr, 0, 0)]);
        let ptr = b.raw("", 2, false, 0, thing, &[]);
        let split = Btf::parse_split(&b.build(), &base).unwrap();
        assert_eq!(split.len(), base.len() + 2);
        assert_eq!(split.name_of(thing), "module_thing");
        assert_eq!(split.name_of(f.task), "task_struct");
        assert_eq!(split.find(Kind::Struct, "module_thing"), Some(thing));
        assert_eq!(split.type_name(ptr), "struct module_thing *");
        assert_eq!(split.member(thing, "task").unwrap().ty, f.task_ptr);
        // A reference past the blob's own types is refused as in a whole blob.
        let mut bad = Builder::split(base.len() as u32, base_str_len);
        bad.raw("", 2, false, 0, base.len() as u32 + 5, &[]);
        assert!(matches!(
            Btf::parse_split(&bad.build(), &base),
            Err(Error::BadTypeRef { .. })
        ));
    }

    #[test]
    fn parses_every_kind_of_the_fixture() {
        let f = fixture();
        let btf = Btf::parse(&f.bytes).unwrap();
        assert_eq!(btf.kind(0), Kind::Void);
        assert_eq!(btf.kind(f.task), Kind::Struct);
        assert_eq!(btf.kind(f.anon_union), Kind::Union);
        assert_eq!(btf.kind(f.big), Kind::Enum64);
        assert_eq!(btf.kind(f.fn_ptr), Kind::Ptr);
        assert_eq!(btf.name_of(f.task), "task_struct");
        assert_eq!(btf.name_of(f.ulong), "unsigned long");
        let TypeKind::Int(c) = btf.types()[f.char as usize].kind else {
            panic!("char is not an int");
        };
        assert!(c.char && c.signed && c.bits == 8 && c.size == 1);
        assert!(btf.get(btf.len() as u32).is_none());
    }

    #[test]
    fn big_endian_blobs_parse_the_same() {
        let mut b = Builder::new();
        let int = b.int("int", 4, true, false);
        b.raw("pid_t", 8, false, 0, int, &[]);
        let le = Btf::parse(&b.build()).unwrap();
        let be = Btf::parse(&b.build_endian(true)).unwrap();
        assert_eq!(le.types(), be.types());
        assert_eq!(be.name_of(2), "pid_t");
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = fixture().bytes;
        for len in 0..bytes.len() {
            assert!(Btf::parse(&bytes[..len]).is_err(), "len {len}");
        }
    }

    #[test]
    fn garbage_never_panics() {
        let good = fixture().bytes;
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..5000 {
            let mut bytes = good.clone();
            for _ in 0..1 + next() % 8 {
                let i = (next() as usize) % bytes.len();
                bytes[i] = next() as u8;
            }
            if let Ok(btf) = Btf::parse(&bytes) {
                // Queries on whatever parsed must not panic or hang either.
                for id in 0..btf.len() as u32 {
                    btf.size_of(id);
                    btf.type_name(id);
                    btf.member(id, "comm");
                    btf.func_decl(id);
                }
                btf.find(Kind::Struct, "task_struct");
                btf.enum_value("RED");
            }
        }
        let noise: Vec<u8> = (0..4096).map(|_| next() as u8).collect();
        assert!(Btf::parse(&noise).is_err());
    }

    #[test]
    fn malformed_inputs_get_specific_errors() {
        assert!(matches!(
            Btf::parse(b"\x01\x02\x01\x00"),
            Err(Error::BadMagic(_))
        ));
        let mut bytes = fixture().bytes;
        bytes[2] = 2;
        assert!(matches!(
            Btf::parse(&bytes),
            Err(Error::UnsupportedVersion(2))
        ));

        let mut b = Builder::new();
        b.raw("p", 2, false, 0, 7, &[]);
        assert!(matches!(
            Btf::parse(&b.build()),
            Err(Error::BadTypeRef { id: 1, target: 7 })
        ));

        let mut b = Builder::new();
        b.raw("x", 25, false, 0, 0, &[]);
        assert!(matches!(
            Btf::parse(&b.build()),
            Err(Error::UnknownKind { id: 1, kind: 25 })
        ));

        let mut b = Builder::new();
        b.raw("", 1, false, 0, 4, &[32]);
        let mut bytes = b.build();
        bytes[24] = 0xff; // name offset of type 1
        assert!(matches!(
            Btf::parse(&bytes),
            Err(Error::BadName { id: 1, .. })
        ));

        // A struct claiming 0xffff members in a tiny section.
        let mut b = Builder::new();
        b.raw("s", 4, false, 0xffff, 4, &[]);
        assert!(matches!(
            Btf::parse(&b.build()),
            Err(Error::Truncated { .. })
        ));
    }
}

//! A [`ProgramDesc`] as bytes and back, so that a program's records can be decoded by
//! another `dtrace` process: the one that reads a ring pinned by a `dtrace` that was
//! killed (`-x ringpin`, see the CLI's `pinned` module).
//!
//! The encoding is private to this crate's version: little-endian integers, a string or a
//! list as its u32 length then its items, an option or an enum as a one-byte tag then its
//! fields, all after [`MAGIC`]. [`decode`] checks every length against what is left and
//! answers `None` for bytes it did not write (another version, a damaged map).

use crate::datum::{Datum, Member, ValueType};
use crate::desc::{
    Action, ActionKind, Aggregation, EnabledProbe, Field, Probe, ProgramDesc, SetoptArg,
};
use crate::slots::AggFunc;

/// The first bytes of an encoded description, naming the encoding's version.
pub const MAGIC: &[u8; 8] = b"dtdesc02";

/// `desc` as bytes.
pub fn encode(desc: &ProgramDesc) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    desc.put(&mut out);
    out
}

/// The description `bytes` hold, if [`encode`] wrote them (and nothing follows).
pub fn decode(bytes: &[u8]) -> Option<ProgramDesc> {
    let mut r = Reader(bytes.strip_prefix(MAGIC.as_slice())?);
    let desc = ProgramDesc::take(&mut r)?;
    r.0.is_empty().then_some(desc)
}

/// The bytes not read yet.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn bytes(&mut self, n: usize) -> Option<&[u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn tag(&mut self) -> Option<u8> {
        u8::take(self)
    }
}

/// A value written to and read back from bytes.
trait Wire: Sized {
    fn put(&self, out: &mut Vec<u8>);
    fn take(r: &mut Reader<'_>) -> Option<Self>;
}

macro_rules! wire_int {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            fn put(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn take(r: &mut Reader<'_>) -> Option<Self> {
                Some(<$t>::from_le_bytes(r.bytes(size_of::<$t>())?.try_into().ok()?))
            }
        }
    )*};
}
wire_int!(u8, u32, u64, i64);

impl Wire for bool {
    fn put(&self, out: &mut Vec<u8>) {
        u8::from(*self).put(out);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        match r.tag()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }
}

impl Wire for usize {
    fn put(&self, out: &mut Vec<u8>) {
        (*self as u64).put(out);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        usize::try_from(u64::take(r)?).ok()
    }
}

impl Wire for String {
    fn put(&self, out: &mut Vec<u8>) {
        (self.len() as u32).put(out);
        out.extend_from_slice(self.as_bytes());
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        let len = u32::take(r)? as usize;
        String::from_utf8(r.bytes(len)?.to_vec()).ok()
    }
}

impl<T: Wire> Wire for Vec<T> {
    fn put(&self, out: &mut Vec<u8>) {
        (self.len() as u32).put(out);
        self.iter().for_each(|x| x.put(out));
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        let len = u32::take(r)?;
        // Each item takes at least one byte: a length beyond what is left is damage.
        if len as usize > r.0.len() {
            return None;
        }
        (0..len).map(|_| T::take(r)).collect()
    }
}

impl<T: Wire> Wire for Option<T> {
    fn put(&self, out: &mut Vec<u8>) {
        self.is_some().put(out);
        if let Some(x) = self {
            x.put(out);
        }
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        match bool::take(r)? {
            true => Some(Some(T::take(r)?)),
            false => Some(None),
        }
    }
}

impl<A: Wire, B: Wire> Wire for (A, B) {
    fn put(&self, out: &mut Vec<u8>) {
        self.0.put(out);
        self.1.put(out);
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some((A::take(r)?, B::take(r)?))
    }
}

/// Write each value in turn (a tag, then fields).
macro_rules! put {
    ($out:expr, $($x:expr),*) => {{ $($x.put($out);)* }};
}

/// `Wire` for a struct, field by field in the order given.
macro_rules! wire_struct {
    ($t:ident { $($f:ident),* }) => {
        impl Wire for $t {
            fn put(&self, out: &mut Vec<u8>) {
                $(self.$f.put(out);)*
            }
            fn take(r: &mut Reader<'_>) -> Option<Self> {
                Some($t { $($f: Wire::take(r)?),* })
            }
        }
    };
}
wire_struct!(ProgramDesc {
    probes,
    aggregations
});
wire_struct!(EnabledProbe {
    epid,
    probe,
    records,
    statement,
    actions
});
wire_struct!(Probe {
    id,
    provider,
    module,
    function,
    name
});
wire_struct!(Action { kind, presence });
wire_struct!(Field { offset, ty });
wire_struct!(Member {
    name,
    offset,
    bitfield,
    ty
});
wire_struct!(Aggregation {
    name,
    func,
    keys,
    key_size,
    slots
});

impl Wire for SetoptArg {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            SetoptArg::Text(s) => put!(out, 0u8, s),
            SetoptArg::Recorded(f) => put!(out, 1u8, f),
        }
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(match r.tag()? {
            0 => SetoptArg::Text(Wire::take(r)?),
            1 => SetoptArg::Recorded(Wire::take(r)?),
            _ => return None,
        })
    }
}

impl Wire for ActionKind {
    fn put(&self, out: &mut Vec<u8>) {
        use ActionKind::*;
        match self {
            Trace(f) => put!(out, 0u8, f),
            Printf { format, args } => put!(out, 1u8, format, args),
            Printa {
                format,
                aggregations,
            } => put!(out, 2u8, format, aggregations),
            Exit(f) => put!(out, 3u8, f),
            Clear(a) => put!(out, 4u8, a),
            Trunc { aggregation, count } => put!(out, 5u8, aggregation, count),
            Normalize {
                aggregation,
                factor,
            } => put!(out, 6u8, aggregation, factor),
            Denormalize(a) => put!(out, 7u8, a),
            Setopt { option, value } => put!(out, 8u8, option, value),
            Speculate(f) => put!(out, 9u8, f),
            Commit(f) => put!(out, 10u8, f),
            Discard(f) => put!(out, 11u8, f),
            System { format, args } => put!(out, 12u8, format, args),
            Freopen { format, args } => put!(out, 13u8, format, args),
            Ftruncate => 14u8.put(out),
            Print {
                offset,
                size,
                layout,
            } => put!(out, 15u8, offset, size, layout),
        }
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        use ActionKind::*;
        let format_args = |r: &mut Reader<'_>| <(Vec<u8>, Vec<Field>)>::take(r);
        Some(match r.tag()? {
            0 => Trace(Wire::take(r)?),
            1 => {
                let (format, args) = format_args(r)?;
                Printf { format, args }
            }
            2 => {
                let (format, aggregations) = Wire::take(r)?;
                Printa {
                    format,
                    aggregations,
                }
            }
            3 => Exit(Wire::take(r)?),
            4 => Clear(Wire::take(r)?),
            5 => {
                let (aggregation, count) = Wire::take(r)?;
                Trunc { aggregation, count }
            }
            6 => {
                let (aggregation, factor) = Wire::take(r)?;
                Normalize {
                    aggregation,
                    factor,
                }
            }
            7 => Denormalize(Wire::take(r)?),
            8 => {
                let (option, value) = Wire::take(r)?;
                Setopt { option, value }
            }
            9 => Speculate(Wire::take(r)?),
            10 => Commit(Wire::take(r)?),
            11 => Discard(Wire::take(r)?),
            12 => {
                let (format, args) = format_args(r)?;
                System { format, args }
            }
            13 => {
                let (format, args) = format_args(r)?;
                Freopen { format, args }
            }
            14 => Ftruncate,
            15 => {
                let ((offset, size), layout) = Wire::take(r)?;
                Print {
                    offset,
                    size,
                    layout,
                }
            }
            _ => return None,
        })
    }
}

impl Wire for ValueType {
    fn put(&self, out: &mut Vec<u8>) {
        use ValueType::*;
        match self {
            Integer { size, signed, name } => put!(out, 0u8, size, signed, name),
            Pointer { name } => put!(out, 1u8, name),
            Enum {
                size,
                signed,
                name,
                constants,
            } => put!(out, 2u8, size, signed, name, constants),
            String { size } => put!(out, 3u8, size),
            Record {
                union,
                name,
                size,
                members,
            } => put!(out, 4u8, union, name, size, members),
            Array { element, len } => put!(out, 5u8, element, len),
            Bytes { size } => put!(out, 6u8, size),
            Memory { size, dynamic } => put!(out, 7u8, size, dynamic),
            Symbolic(d) => put!(out, 8u8, d),
            Name { names } => put!(out, 9u8, names),
        }
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        use ValueType::*;
        Some(match r.tag()? {
            0 => {
                let (size, (signed, name)) = Wire::take(r)?;
                Integer { size, signed, name }
            }
            1 => Pointer {
                name: Wire::take(r)?,
            },
            2 => {
                let ((size, signed), (name, constants)) = Wire::take(r)?;
                Enum {
                    size,
                    signed,
                    name,
                    constants,
                }
            }
            3 => String {
                size: Wire::take(r)?,
            },
            4 => {
                let ((union, name), (size, members)) = Wire::take(r)?;
                Record {
                    union,
                    name,
                    size,
                    members,
                }
            }
            5 => {
                let (element, len) = <(ValueType, u32)>::take(r)?;
                Array {
                    element: Box::new(element),
                    len,
                }
            }
            6 => Bytes {
                size: Wire::take(r)?,
            },
            7 => {
                let (size, dynamic) = Wire::take(r)?;
                Memory { size, dynamic }
            }
            8 => Symbolic(Wire::take(r)?),
            9 => Name {
                names: Wire::take(r)?,
            },
            _ => return None,
        })
    }
}

impl Wire for Datum {
    fn put(&self, out: &mut Vec<u8>) {
        match self {
            Datum::Stack { frames } => put!(out, 0u8, frames),
            Datum::UStack { frames, window } => put!(out, 1u8, frames, window),
            Datum::Sym => 2u8.put(out),
            Datum::Mod => 3u8.put(out),
            Datum::USym => 4u8.put(out),
            Datum::UMod => 5u8.put(out),
            Datum::UAddr => 6u8.put(out),
            Datum::UStackDepth { frames, window } => put!(out, 7u8, frames, window),
        }
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        Some(match r.tag()? {
            0 => Datum::Stack {
                frames: Wire::take(r)?,
            },
            1 => Datum::UStack {
                frames: Wire::take(r)?,
                window: Wire::take(r)?,
            },
            2 => Datum::Sym,
            3 => Datum::Mod,
            4 => Datum::USym,
            5 => Datum::UMod,
            6 => Datum::UAddr,
            7 => Datum::UStackDepth {
                frames: Wire::take(r)?,
                window: Wire::take(r)?,
            },
            _ => return None,
        })
    }
}

impl Wire for AggFunc {
    fn put(&self, out: &mut Vec<u8>) {
        use AggFunc::*;
        match *self {
            Count => 0u8.put(out),
            Sum => 1u8.put(out),
            Avg => 2u8.put(out),
            Min => 3u8.put(out),
            Max => 4u8.put(out),
            Stddev => 5u8.put(out),
            Quantize => 6u8.put(out),
            Lquantize { base, limit, step } => put!(out, 7u8, base, limit, step),
            Llquantize {
                factor,
                low,
                high,
                nsteps,
            } => put!(out, 8u8, factor, low, high, nsteps),
        }
    }
    fn take(r: &mut Reader<'_>) -> Option<Self> {
        use AggFunc::*;
        Some(match r.tag()? {
            0 => Count,
            1 => Sum,
            2 => Avg,
            3 => Min,
            4 => Max,
            5 => Stddev,
            6 => Quantize,
            7 => {
                let (base, (limit, step)) = Wire::take(r)?;
                Lquantize { base, limit, step }
            }
            8 => {
                let ((factor, low), (high, nsteps)) = Wire::take(r)?;
                Llquantize {
                    factor,
                    low,
                    high,
                    nsteps,
                }
            }
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(offset: u32, ty: ValueType) -> Field {
        Field { offset, ty }
    }

    /// A description using every kind of action, type and aggregating function.
    fn everything() -> ProgramDesc {
        let int = ValueType::Integer {
            size: 4,
            signed: true,
            name: "int".into(),
        };
        let types = vec![
            int.clone(),
            ValueType::Pointer {
                name: "char *".into(),
            },
            ValueType::Enum {
                size: 4,
                signed: false,
                name: "enum e".into(),
                constants: vec![("A".into(), -1)],
            },
            ValueType::String { size: 257 },
            ValueType::Record {
                union: false,
                name: "struct s".into(),
                size: 8,
                members: vec![Member {
                    name: "b".into(),
                    offset: 4,
                    bitfield: Some((1, 3)),
                    ty: int.clone(),
                }],
            },
            ValueType::Array {
                element: Box::new(int.clone()),
                len: 3,
            },
            ValueType::Bytes { size: 5 },
            ValueType::Memory {
                size: 9,
                dynamic: true,
            },
            ValueType::Symbolic(Datum::UStack {
                frames: 7,
                window: 48,
            }),
            ValueType::Symbolic(Datum::UStackDepth {
                frames: 127,
                window: 16,
            }),
            ValueType::Symbolic(Datum::UAddr),
            ValueType::Name {
                names: vec!["read".into(), String::new()],
            },
        ];
        let f = |i: u32| field(16 + i, int.clone());
        let kinds = vec![
            ActionKind::Printf {
                format: b"%d\n".to_vec(),
                args: types.iter().map(|t| field(16, t.clone())).collect(),
            },
            ActionKind::Printa {
                format: None,
                aggregations: vec![0, 1],
            },
            ActionKind::Exit(f(1)),
            ActionKind::Clear(1),
            ActionKind::Trunc {
                aggregation: 0,
                count: Some(f(2)),
            },
            ActionKind::Normalize {
                aggregation: 1,
                factor: f(3),
            },
            ActionKind::Denormalize(0),
            ActionKind::Setopt {
                option: SetoptArg::Text("quiet".into()),
                value: None,
            },
            ActionKind::Setopt {
                option: SetoptArg::Text("aggsortpos".into()),
                value: Some(SetoptArg::Recorded(f(8))),
            },
            ActionKind::Speculate(f(4)),
            ActionKind::Commit(f(5)),
            ActionKind::Discard(f(6)),
            ActionKind::System {
                format: b"ls".to_vec(),
                args: vec![],
            },
            ActionKind::Freopen {
                format: Vec::new(),
                args: vec![f(7)],
            },
            ActionKind::Ftruncate,
            ActionKind::Trace(field(8, ValueType::Symbolic(Datum::Stack { frames: 2 }))),
        ];
        let funcs = [
            AggFunc::Count,
            AggFunc::Sum,
            AggFunc::Avg,
            AggFunc::Min,
            AggFunc::Max,
            AggFunc::Stddev,
            AggFunc::Quantize,
            AggFunc::Lquantize {
                base: -5,
                limit: 100,
                step: 10,
            },
            AggFunc::Llquantize {
                factor: 10,
                low: 0,
                high: 6,
                nsteps: 20,
            },
        ];
        ProgramDesc {
            probes: vec![EnabledProbe {
                epid: 1,
                probe: Probe {
                    id: 9,
                    provider: "crashy123".into(),
                    module: "crash".into(),
                    function: "main".into(),
                    name: "step".into(),
                },
                records: true,
                statement: 2,
                actions: kinds
                    .into_iter()
                    .enumerate()
                    .map(|(i, kind)| Action {
                        kind,
                        presence: (i % 2 == 0).then_some(i as u32),
                    })
                    .collect(),
            }],
            aggregations: funcs
                .into_iter()
                .map(|func| Aggregation {
                    name: "a".into(),
                    func,
                    keys: vec![field(0, ValueType::Symbolic(Datum::Sym))],
                    key_size: 8,
                    slots: 3,
                })
                .collect(),
        }
    }

    #[test]
    fn a_description_comes_back_whole() {
        let desc = everything();
        assert_eq!(decode(&encode(&desc)), Some(desc));
        assert_eq!(
            decode(&encode(&ProgramDesc::default())),
            Some(ProgramDesc::default())
        );
    }

    #[test]
    fn damaged_bytes_are_refused() {
        let bytes = encode(&everything());
        for cut in [0, 7, 8, 20, bytes.len() - 1] {
            assert_eq!(decode(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode(&longer), None);
        let mut other = bytes;
        other[7] = b'9';
        assert_eq!(decode(&other), None);
    }
}

//! The decoded data values handed to the formatters.
//!
//! [`crate::decode`] turns kernel bytes into [`Value`]s; every formatter in this crate
//! (printf, trace, aggregation keys, JSON) consumes them. Stacks and symbols are decoded
//! into [`Frame`]s: where an address is (module, symbol, offset), not only its text.

/// One traced datum, as decoded from a kernel record.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Value {
    /// An integer of `size` bytes (1, 2, 4 or 8).  Only the low `size` bytes
    /// of `value` are significant; `signed` is the signedness of the D type.
    Int { value: u64, size: u8, signed: bool },
    /// A string: the bytes up to (not including) the first NUL.
    Str(Vec<u8>),
    /// A symbolized stack (`stack()`, `ustack()`): `raw` identifies it (a user stack's
    /// process id, then the program counters), `frames` are innermost first.
    Stack { raw: Vec<u64>, frames: Vec<Frame> },
    /// A symbolized address (`func() sym() mod() ufunc() usym() umod() uaddr()`, `%a`,
    /// `%A`): `raw` identifies it (a user address's process id, then the address as the
    /// datum keeps it).
    /// (The frame is boxed: every key of a million-key aggregation is a `Value`.)
    Sym { raw: Vec<u64>, frame: Box<Frame> },
    /// The bytes of a value without a scalar form (a struct, union, array or opaque type),
    /// interpreted by its [`dtrace_abi::datum::ValueType`].
    Bytes(Vec<u8>),
}

/// A symbolized address: where `address` is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The address itself, or for a symbol (`func()`, `usym()`) the symbol's address.
    pub address: u64,
    pub place: Place,
}

/// What is known of an address.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Place {
    /// In `symbol` of `module` (a kernel module, or a user object's file name), `offset`
    /// bytes in: `module`symbol+0xoffset`, or `module`symbol` at offset 0.
    Symbol {
        module: String,
        symbol: String,
        offset: u64,
    },
    /// In a user object without a symbol there: `object`0xaddress`.
    Object(String),
    /// In a user object, not resolved (`-x noresolve`): `object:0xoffset`, the offset from
    /// the start of the object's mapping that holds the address.
    Unresolved { object: String, offset: u64 },
    /// A module or object itself (`mod()`, `umod()`): its name.
    Module(String),
    /// Nothing known: `0xaddress`.
    Unknown,
}

impl Frame {
    /// An address nothing is known of.
    pub fn unknown(address: u64) -> Frame {
        Frame {
            address,
            place: Place::Unknown,
        }
    }

    /// The text DTrace prints for it.
    pub fn text(&self) -> String {
        match &self.place {
            Place::Symbol {
                module,
                symbol,
                offset: 0,
            } => format!("{module}`{symbol}"),
            Place::Symbol {
                module,
                symbol,
                offset,
            } => format!("{module}`{symbol}+0x{offset:x}"),
            Place::Object(object) => format!("{object}`0x{:x}", self.address),
            Place::Unresolved { object, offset } => format!("{object}:0x{offset:x}"),
            Place::Module(module) => module.clone(),
            Place::Unknown => format!("0x{:x}", self.address),
        }
    }

    /// The module or object name, when known.
    pub fn module(&self) -> Option<&str> {
        match &self.place {
            Place::Symbol { module, .. }
            | Place::Object(module)
            | Place::Unresolved { object: module, .. }
            | Place::Module(module) => Some(module),
            Place::Unknown => None,
        }
    }

    /// The symbol and the offset into it, when known.
    pub fn symbol(&self) -> Option<(&str, u64)> {
        match &self.place {
            Place::Symbol { symbol, offset, .. } => Some((symbol, *offset)),
            _ => None,
        }
    }
}

impl Value {
    /// A signed 64-bit integer value.
    pub fn i64(v: i64) -> Value {
        Value::Int {
            value: v as u64,
            size: 8,
            signed: true,
        }
    }

    /// An unsigned 64-bit integer value.
    pub fn u64(v: u64) -> Value {
        Value::Int {
            value: v,
            size: 8,
            signed: false,
        }
    }

    /// A signed 32-bit (`int`) value.
    pub fn i32(v: i32) -> Value {
        Value::Int {
            value: v as u32 as u64,
            size: 4,
            signed: true,
        }
    }

    /// A string value (anything after an embedded NUL is dropped).
    pub fn str(s: impl AsRef<[u8]>) -> Value {
        let s = s.as_ref();
        let end = s.iter().position(|&b| b == 0).unwrap_or(s.len());
        Value::Str(s[..end].to_vec())
    }

    /// The low `size` bytes, zero-extended (strings, stacks and bytes read as 0, symbols
    /// as their address).
    pub fn zero_extended(&self) -> u64 {
        match *self {
            Value::Int { value, size, .. } => value & size_mask(size),
            Value::Sym { ref raw, .. } => raw.last().copied().unwrap_or(0),
            Value::Str(_) | Value::Stack { .. } | Value::Bytes(_) => 0,
        }
    }

    /// The low `size` bytes, sign-extended (strings and stacks read as 0, symbols as their
    /// address).
    pub(crate) fn sign_extended(&self) -> i64 {
        match *self {
            Value::Int { value, size, .. } if size < 8 => {
                let shift = 64 - 8 * u32::from(size.max(1));
                ((value << shift) as i64) >> shift
            }
            Value::Int { value, .. } => value as i64,
            Value::Sym { .. } => self.zero_extended() as i64,
            Value::Str(_) | Value::Stack { .. } | Value::Bytes(_) => 0,
        }
    }

    /// The byte size of an integer (8 for strings, which never ask).
    pub(crate) fn size(&self) -> u8 {
        match *self {
            Value::Int { size, .. } => size,
            Value::Str(_) | Value::Stack { .. } | Value::Sym { .. } | Value::Bytes(_) => 8,
        }
    }
}

/// Mask selecting the low `size` bytes of a u64.
fn size_mask(size: u8) -> u64 {
    if size >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * u32::from(size))) - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension() {
        let v = Value::Int {
            value: 0xfe,
            size: 1,
            signed: true,
        };
        assert_eq!(v.sign_extended(), -2);
        assert_eq!(v.zero_extended(), 254);
        assert_eq!(Value::i32(-1).zero_extended(), 0xffff_ffff);
        assert_eq!(Value::i32(-1).sign_extended(), -1);
        assert_eq!(Value::str(b"ab\0cd"), Value::Str(b"ab".to_vec()));
    }

    #[test]
    fn frame_texts() {
        let sym = |offset| Frame {
            address: 0x1000,
            place: Place::Symbol {
                module: "vmlinux".into(),
                symbol: "vfs_read".into(),
                offset,
            },
        };
        assert_eq!(sym(0).text(), "vmlinux`vfs_read");
        assert_eq!(sym(0x1a).text(), "vmlinux`vfs_read+0x1a");
        let object = Frame {
            address: 0x55aa,
            place: Place::Object("prog".into()),
        };
        assert_eq!(object.text(), "prog`0x55aa");
        assert_eq!(object.module(), Some("prog"));
        let module = Frame {
            address: 3,
            place: Place::Module("ext4".into()),
        };
        assert_eq!(module.text(), "ext4");
        assert_eq!(Frame::unknown(0xff).text(), "0xff");
        assert_eq!(sym(4).symbol(), Some(("vfs_read", 4)));
    }
}

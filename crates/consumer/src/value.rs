//! The decoded data values handed to the formatters.
//!
//! The runtime decodes kernel records into [`Value`]s; every formatter in this
//! crate (printf, trace, aggregation keys) consumes them.

/// One traced datum, as decoded from a kernel record.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Value {
    /// An integer of `size` bytes (1, 2, 4 or 8).  Only the low `size` bytes
    /// of `value` are significant; `signed` is the signedness of the D type.
    Int { value: u64, size: u8, signed: bool },
    /// A string: the bytes up to (not including) the first NUL.
    Str(Vec<u8>),
    /// A symbolized stack (`stack()`, `ustack()`): `raw` identifies it (a user stack's
    /// process id, then the program counters), `frames` are the lines printed, innermost
    /// first (`vmlinux`do_sys_open+0x1a`).
    Stack { raw: Vec<u64>, frames: Vec<String> },
    /// A symbolized address (`func() sym() mod() ufunc() usym() umod() uaddr()`, `%a`,
    /// `%A`): `raw` identifies it (a user address's process id, then the address as the
    /// datum keeps it), `text` is printed.
    Sym { raw: Vec<u64>, text: String },
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

    /// The low `size` bytes, zero-extended (strings and stacks read as 0, symbols as their
    /// address).
    pub fn zero_extended(&self) -> u64 {
        match *self {
            Value::Int { value, size, .. } => value & size_mask(size),
            Value::Sym { ref raw, .. } => raw.last().copied().unwrap_or(0),
            Value::Str(_) | Value::Stack { .. } => 0,
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
            Value::Str(_) | Value::Stack { .. } => 0,
        }
    }

    /// The byte size of an integer (8 for strings, which never ask).
    pub(crate) fn size(&self) -> u8 {
        match *self {
            Value::Int { size, .. } => size,
            Value::Str(_) | Value::Stack { .. } | Value::Sym { .. } => 8,
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
}

//! Decoding kernel bytes (records, aggregation keys and slots) into consumer values.

use dtrace_backend::program::Field;
use dtrace_backend::types::Type;
use dtrace_consumer::Value;

/// Little-endian u32 at `off` (0 if out of range).
pub fn u32_at(bytes: &[u8], off: usize) -> u32 {
    bytes
        .get(off..off + 4)
        .map_or(0, |b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
}

/// Little-endian u64 at `off` (0 if out of range).
pub fn u64_at(bytes: &[u8], off: usize) -> u64 {
    bytes
        .get(off..off + 8)
        .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

/// The value of `field` in `bytes`; strings stop at the first NUL or `strsize`.
pub fn value(bytes: &[u8], field: &Field, strsize: usize) -> Value {
    let off = field.offset as usize;
    match &field.ty {
        Type::String => {
            let end = (off + strsize).min(bytes.len());
            let s = bytes.get(off..end).unwrap_or(&[]);
            let len = s.iter().position(|&b| b == 0).unwrap_or(s.len());
            Value::Str(s[..len].to_vec())
        }
        ty => Value::Int {
            value: u64_at(bytes, off),
            size: ty.scalar_size().max(1) as u8,
            signed: ty.is_signed(),
        },
    }
}

/// Per-CPU map values as u64 slot arrays.
pub fn slots(percpu: &[Vec<u8>]) -> Vec<Vec<u64>> {
    percpu
        .iter()
        .map(|v| {
            v.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtrace_backend::types;

    #[test]
    fn decodes_fields() {
        let mut rec = vec![0u8; 24];
        rec[8..16].copy_from_slice(&(-5i64 as u64).to_le_bytes());
        rec[16..19].copy_from_slice(b"hi\0");
        let int = value(
            &rec,
            &Field {
                offset: 8,
                ty: types::INT,
            },
            8,
        );
        assert_eq!(
            int,
            Value::Int {
                value: -5i64 as u64,
                size: 4,
                signed: true
            }
        );
        let s = value(
            &rec,
            &Field {
                offset: 16,
                ty: Type::String,
            },
            8,
        );
        assert_eq!(s, Value::Str(b"hi".to_vec()));
    }
}

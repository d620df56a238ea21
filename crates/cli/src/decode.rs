//! Decoding kernel bytes (records, aggregation keys and slots) into consumer values.

use dtrace_backend::program::{Datum, Field};
use dtrace_backend::types::Type;
use dtrace_consumer::symbolize::Symbolizer;
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

/// The process id of a user datum at `off` (0 for kernel data).
pub fn datum_pid(bytes: &[u8], off: usize, datum: Datum) -> u32 {
    if datum.user() {
        u64_at(bytes, off) as u32
    } else {
        0
    }
}

/// A stack or symbol datum at `off`, symbolized. Symbols keep, as their identity, the
/// address of the symbol (or module) they name, so that aggregation keys of one function
/// merge as in DTrace; stacks keep every program counter.
pub fn datum(bytes: &[u8], off: usize, datum: Datum, symbols: &mut Symbolizer) -> Value {
    let pid = datum_pid(bytes, off, datum);
    let words = |at: usize, n: u32| -> Vec<u64> {
        (0..n as usize).map(|i| u64_at(bytes, at + i * 8)).collect()
    };
    let sym = |raw: Vec<u64>, text: String| Value::Sym { raw, text };
    match datum {
        Datum::Stack { frames } => {
            let pcs: Vec<u64> = words(off, frames);
            let shown = pcs.iter().take_while(|&&pc| pc != 0);
            let frames = shown.map(|&pc| symbols.kernel_frame(pc)).collect();
            Value::Stack { raw: pcs, frames }
        }
        Datum::UStack { frames } => {
            let pcs: Vec<u64> = words(off + 8, frames);
            let shown = pcs.iter().take_while(|&&pc| pc != 0);
            let frames = shown.map(|&pc| symbols.user_frame(pid, pc)).collect();
            let mut raw = vec![pid as u64];
            raw.extend(pcs);
            Value::Stack { raw, frames }
        }
        Datum::Sym => {
            let (addr, text) = symbols.kernel_sym(u64_at(bytes, off));
            sym(vec![addr], text)
        }
        Datum::Mod => {
            let (id, text) = symbols.kernel_mod(u64_at(bytes, off));
            sym(vec![id], text)
        }
        Datum::USym | Datum::UMod | Datum::UAddr => {
            let pc = u64_at(bytes, off + 8);
            let (id, text) = match datum {
                Datum::USym => symbols.user_sym(pid, pc),
                Datum::UMod => symbols.user_mod(pid, pc),
                _ => (pc, symbols.user_frame(pid, pc)),
            };
            sym(vec![pid as u64, id], text)
        }
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

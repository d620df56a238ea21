//! Decoding kernel bytes — records, fault records, aggregation keys and values, drop
//! counters — into consumer values, by the record ABI's layouts and descriptions alone.

use dtrace_abi::datum::{Datum, ValueType, USTACK_REGS, USTACK_WINDOW};
use dtrace_abi::desc::Field;
use dtrace_abi::record::{self, fault, DropKind};
use dtrace_abi::{u32_at, u64_at};

use crate::symbolize::Symbolizer;
use crate::unwind;
use crate::Value;

/// A record's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub epid: u32,
    pub cpu: u32,
    pub presence: u64,
}

/// The header of record `rec`.
pub fn header(rec: &[u8]) -> Header {
    Header {
        epid: u32_at(rec, record::EPID),
        cpu: u32_at(rec, record::CPU),
        presence: u64_at(rec, record::PRESENCE),
    }
}

/// A fault record (its header's epid is [`record::FAULT_EPID`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultRecord {
    /// The enabled probe whose clause faulted.
    pub epid: u32,
    pub cpu: u32,
    /// The `DTRACEFLT_*` number.
    pub kind: u32,
    /// 1-based action number; 0 for the predicate.
    pub action: u32,
    pub offset: i32,
    pub addr: u64,
}

/// The fault record `rec`.
pub fn fault(rec: &[u8]) -> FaultRecord {
    FaultRecord {
        epid: u32_at(rec, fault::EPID),
        cpu: u32_at(rec, record::CPU),
        kind: u32_at(rec, fault::KIND),
        action: u32_at(rec, fault::ACTION),
        offset: u32_at(rec, fault::OFFSET) as i32,
        addr: u64_at(rec, fault::ADDR),
    }
}

/// The value of `field` in `bytes` (a record or an aggregation key): top-level scalars are
/// read from their `u64` slot, strings stop at the first NUL, stacks and symbols are
/// symbolized.
pub fn value(bytes: &[u8], field: &Field, symbols: &mut Symbolizer) -> Value {
    let off = field.offset as usize;
    match &field.ty {
        ValueType::Symbolic(d) => datum(bytes, off, *d, symbols),
        ty => match ty.scalar() {
            Some((size, signed)) => Value::Int {
                value: u64_at(bytes, off),
                size,
                signed,
            },
            None => inner(bytes, off, ty, None),
        },
    }
}

/// A value of type `ty` at `off` inside a struct, union or array (scalars take their own
/// size; `bitfield` is `(first bit, width)`), or a string or raw value at any level.
pub fn inner(bytes: &[u8], off: usize, ty: &ValueType, bitfield: Option<(u8, u8)>) -> Value {
    let slice = |len: usize| bytes.get(off..off.saturating_add(len)).unwrap_or(&[]);
    if let Some((size, signed)) = ty.scalar() {
        let mut raw = [0u8; 8];
        let part = slice(usize::from(size).min(8));
        raw[..part.len()].copy_from_slice(part);
        let mut value = u64::from_le_bytes(raw);
        if let Some((bit, width)) = bitfield {
            value >>= bit;
            if width < 64 {
                value &= (1u64 << width) - 1;
            }
        }
        return Value::Int {
            value,
            size,
            signed,
        };
    }
    match ty {
        ValueType::String { size } => Value::str(slice(*size as usize)),
        ValueType::Name { names } => {
            let index = usize::try_from(u64_at(bytes, off)).unwrap_or(usize::MAX);
            Value::str(names.get(index).map_or(&b""[..], |n| n.as_bytes()))
        }
        ValueType::Memory {
            size,
            dynamic: true,
        } => {
            // The count before the bytes: how many to show (all when negative).
            let count = u64_at(bytes, off) as i64;
            let shown = if count < 0 {
                *size as usize
            } else {
                (count as usize).min(*size as usize)
            };
            let data = bytes.get(off + 8..).unwrap_or(&[]);
            Value::Bytes(data.get(..shown).unwrap_or(data).to_vec())
        }
        _ => Value::Bytes(slice(ty.size() as usize).to_vec()),
    }
}

/// The process id of a user datum at `off` (0 for kernel data).
pub fn datum_pid(bytes: &[u8], off: usize, datum: Datum) -> u32 {
    datum
        .pid_offset()
        .map_or(0, |at| u64_at(bytes, off + at) as u32)
}

/// A stack or symbol datum at `off`, symbolized. Symbols keep, as their identity, the
/// address of the symbol (or module) they name, so that aggregation keys of one function
/// merge as in DTrace; stacks keep every program counter.
fn datum(bytes: &[u8], off: usize, datum: Datum, symbols: &mut Symbolizer) -> Value {
    let pid = datum_pid(bytes, off, datum);
    let at = off + datum.address_offset();
    let words =
        |n: u32| -> Vec<u64> { (0..n as usize).map(|i| u64_at(bytes, at + i * 8)).collect() };
    match datum {
        Datum::Stack { frames } | Datum::UStack { frames, .. } => {
            let pcs = match datum {
                Datum::UStack { window, .. } => user_stack(bytes, at, frames, window, pid, symbols),
                _ => words(frames),
            };
            let shown = pcs.iter().take_while(|&&pc| pc != 0);
            let frames = if datum.user() {
                shown.map(|&pc| symbols.user_frame(pid, pc)).collect()
            } else {
                shown.map(|&pc| symbols.kernel_frame(pc)).collect()
            };
            let mut raw = Vec::new();
            if datum.user() {
                raw.push(u64::from(pid));
            }
            raw.extend(pcs);
            Value::Stack { raw, frames }
        }
        Datum::UStackDepth { frames, window } => {
            let pcs = user_stack(bytes, at, frames, window, pid, symbols);
            Value::Int {
                value: pcs.iter().take_while(|&&pc| pc != 0).count() as u64,
                size: 4,
                signed: false,
            }
        }
        Datum::Sym => {
            let frame = symbols.kernel_sym(u64_at(bytes, at));
            Value::Sym {
                raw: vec![frame.address],
                frame: Box::new(frame),
            }
        }
        Datum::Mod => {
            let (id, frame) = symbols.kernel_mod(u64_at(bytes, at));
            Value::Sym {
                raw: vec![id],
                frame: Box::new(frame),
            }
        }
        Datum::USym | Datum::UMod | Datum::UAddr => {
            let pc = u64_at(bytes, at);
            let frame = match datum {
                Datum::USym => symbols.user_sym(pid, pc),
                Datum::UMod => symbols.user_mod(pid, pc),
                _ => symbols.user_frame(pid, pc),
            };
            Value::Sym {
                raw: vec![u64::from(pid), frame.address],
                frame: Box::new(frame),
            }
        }
    }
}

/// The program counters of a user stack: the `frames` frame-pointer ones at `at`, or,
/// when the record has a stack window at `window` and that stack is not empty (a kernel
/// thread has none), those unwound from the window.
fn user_stack(
    bytes: &[u8],
    at: usize,
    frames: u32,
    window: u32,
    pid: u32,
    symbols: &mut Symbolizer,
) -> Vec<u64> {
    let pcs: Vec<u64> = (0..frames as usize)
        .map(|i| u64_at(bytes, at + i * 8))
        .collect();
    let fp: Vec<u64> = pcs.iter().copied().take_while(|&pc| pc != 0).collect();
    if window == 0 || fp.is_empty() {
        return pcs;
    }
    let w = window as usize;
    let copied = (u64_at(bytes, w + 24) as usize).min(USTACK_WINDOW as usize);
    let start = w + USTACK_REGS as usize;
    let window = unwind::Window {
        ip: u64_at(bytes, w),
        sp: u64_at(bytes, w + 8),
        bp: u64_at(bytes, w + 16),
        bytes: bytes.get(start..start + copied).unwrap_or(&[]),
    };
    unwind::user_stack(symbols, pid, &window, &fp, frames as usize)
}

/// Per-CPU map values as u64 slots, each CPU's in turn, in `out` (emptied first): one
/// buffer for every entry of a map, not arrays of each.
pub fn slots(percpu: &[&[u8]], out: &mut Vec<u64>) {
    out.clear();
    for v in percpu {
        out.extend(
            v.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))),
        );
    }
}

/// One CPU's drop counter of `kind`, from its value of the drop counter map.
pub fn drops(cpu_value: &[u8], kind: DropKind) -> u64 {
    u64_at(cpu_value, kind.offset())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Place;

    fn int(size: u8, signed: bool) -> ValueType {
        ValueType::Integer {
            size,
            signed,
            name: "t".into(),
        }
    }

    #[test]
    fn decodes_headers_and_faults() {
        let mut rec = vec![0u8; fault::SIZE as usize];
        rec[record::EPID..record::EPID + 4].copy_from_slice(&record::FAULT_EPID.to_le_bytes());
        rec[record::CPU..record::CPU + 4].copy_from_slice(&3u32.to_le_bytes());
        rec[fault::EPID..fault::EPID + 4].copy_from_slice(&7u32.to_le_bytes());
        rec[fault::KIND..fault::KIND + 4].copy_from_slice(&1u32.to_le_bytes());
        rec[fault::ACTION..fault::ACTION + 4].copy_from_slice(&2u32.to_le_bytes());
        rec[fault::OFFSET..fault::OFFSET + 4].copy_from_slice(&40u32.to_le_bytes());
        rec[fault::ADDR..fault::ADDR + 8].copy_from_slice(&0xdeadu64.to_le_bytes());
        assert_eq!(header(&rec).epid, record::FAULT_EPID);
        assert_eq!(
            fault(&rec),
            FaultRecord {
                epid: 7,
                cpu: 3,
                kind: 1,
                action: 2,
                offset: 40,
                addr: 0xdead
            }
        );
    }

    #[test]
    fn decodes_fields() {
        let mut symbols = Symbolizer::new();
        let h = record::HEADER_SIZE as usize;
        let mut rec = vec![0u8; h + 16];
        rec[record::PRESENCE] = 0b101;
        rec[h..h + 8].copy_from_slice(&(-5i64 as u64).to_le_bytes());
        rec[h + 8..h + 11].copy_from_slice(b"hi\0");
        assert_eq!(header(&rec).presence, 0b101);
        let field = |offset: usize, ty| Field {
            offset: offset as u32,
            ty,
        };
        assert_eq!(
            value(&rec, &field(h, int(4, true)), &mut symbols),
            Value::Int {
                value: -5i64 as u64,
                size: 4,
                signed: true
            }
        );
        let s = field(h + 8, ValueType::String { size: 8 });
        assert_eq!(value(&rec, &s, &mut symbols), Value::Str(b"hi".to_vec()));
        // A string filling its buffer stops at the buffer's end.
        let short = field(h + 8, ValueType::String { size: 1 });
        assert_eq!(value(&rec, &short, &mut symbols), Value::Str(b"h".to_vec()));
    }

    #[test]
    fn tracemem_shows_its_count_of_bytes() {
        let memory = |count: i64| {
            let mut bytes = count.to_le_bytes().to_vec();
            bytes.extend_from_slice(b"abcd");
            let ty = ValueType::Memory {
                size: 4,
                dynamic: true,
            };
            inner(&bytes, 0, &ty, None)
        };
        assert_eq!(memory(2), Value::Bytes(b"ab".to_vec()));
        assert_eq!(memory(-1), Value::Bytes(b"abcd".to_vec()));
        assert_eq!(memory(9), Value::Bytes(b"abcd".to_vec()));
        assert_eq!(memory(0), Value::Bytes(Vec::new()));
    }

    #[test]
    fn decodes_inner_values() {
        let bytes = [0x34u8, 0x12, 0b1011_0000, 0xff];
        assert_eq!(
            inner(&bytes, 0, &int(2, false), None).zero_extended(),
            0x1234
        );
        // Bits 4..8 of byte 2.
        assert_eq!(
            inner(&bytes, 2, &int(1, false), Some((4, 4))).zero_extended(),
            0b1011
        );
        assert_eq!(inner(&bytes, 3, &int(1, true), None).sign_extended(), -1);
        let arr = ValueType::Array {
            element: Box::new(int(1, false)),
            len: 3,
        };
        assert_eq!(
            inner(&bytes, 1, &arr, None),
            Value::Bytes(vec![0x12, 0xb0, 0xff])
        );
    }

    #[test]
    fn unknown_symbols_keep_their_address() {
        let mut symbols = Symbolizer::new();
        // A user symbol of a process that does not exist: pid, then the address.
        let mut key = vec![0u8; 16];
        key[..8].copy_from_slice(&(u32::MAX as u64).to_le_bytes());
        key[8..].copy_from_slice(&0x1234u64.to_le_bytes());
        let field = Field {
            offset: 0,
            ty: ValueType::Symbolic(Datum::UAddr),
        };
        let Value::Sym { raw, frame } = value(&key, &field, &mut symbols) else {
            panic!("not a symbol");
        };
        assert_eq!(raw, vec![u64::from(u32::MAX), 0x1234]);
        assert_eq!((frame.address, frame.place), (0x1234, Place::Unknown));
        assert_eq!(datum_pid(&key, 0, Datum::UAddr), u32::MAX);
        assert_eq!(datum_pid(&key, 0, Datum::Sym), 0);
    }

    #[test]
    fn decodes_slots_and_drops() {
        let cpu0: Vec<u8> = [1u64, 2, 3].iter().flat_map(|v| v.to_le_bytes()).collect();
        let cpu1: Vec<u8> = [4u64, 5, 6].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out = vec![9];
        slots(&[cpu0.as_slice(), cpu1.as_slice()], &mut out);
        assert_eq!(out, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(drops(&cpu0, DropKind::Record), 1);
        assert_eq!(drops(&cpu0, DropKind::Nested), 3);
    }
}

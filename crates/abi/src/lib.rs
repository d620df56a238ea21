//! The record ABI: everything code generation writes and the consumer reads, in one place,
//! so that no offset or numbering is a literal on two sides.
//!
//! - [`record`]: the ring-buffer record header, fault records and their DTRACEFLT_* kinds,
//!   the per-CPU drop counters and scratch levels.
//! - [`datum`]: what a recorded datum is: a D value described by a [`datum::ValueType`]
//!   (integers, strings, pointers, enums, structs, unions, arrays, raw bytes), or a stack or
//!   symbol the consumer symbolizes ([`datum::Datum`]).
//! - [`slots`]: the aggregating functions, the `u64` slot layout of their values, bucket
//!   functions of the quantize family and the merge of per-CPU values.
//! - [`desc`]: the description of a compiled program that the consumer decodes with:
//!   enabled probes, their actions and where each action's data is, aggregations, options.
//!
//! The crate has no dependencies and no kernel access: the back end produces a
//! [`desc::ProgramDesc`] and the consumer decodes bytes with it.

pub mod datum;
pub mod desc;
pub mod record;
pub mod slots;
pub mod wire;

/// Little-endian u32 at `off` of `bytes` (0 if out of range).
pub fn u32_at(bytes: &[u8], off: usize) -> u32 {
    bytes
        .get(off..off.saturating_add(4))
        .map_or(0, |b| u32::from_le_bytes(b.try_into().expect("4 bytes")))
}

/// Little-endian u64 at `off` of `bytes` (0 if out of range).
pub fn u64_at(bytes: &[u8], off: usize) -> u64 {
    bytes
        .get(off..off.saturating_add(8))
        .map_or(0, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_little_endian_or_zero() {
        let b = [1u8, 0, 0, 0, 2, 0, 0, 0, 3];
        assert_eq!(u32_at(&b, 0), 1);
        assert_eq!(u64_at(&b, 0), 1 | 2 << 32);
        assert_eq!(u32_at(&b, 7), 0);
        assert_eq!(u64_at(&b, usize::MAX), 0);
    }
}

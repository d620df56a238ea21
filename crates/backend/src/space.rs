//! The space one dynamic variable or one aggregation entry takes, counted as DTrace counts
//! it against `dynvarsize` and `aggsize` (`dt_maxtuplesize`, `dt_maxdvarsize`,
//! `dt_maxaggdsize`): these options must hold at least one entry of the largest key tuple
//! and the largest value, else tracing cannot be enabled.
//!
//! DTrace lays a key tuple out with each scalar at its natural alignment, a string as
//! `strsize` characters and a NUL, a struct at its size, and 8 bytes more for the thread
//! key; a dynamic variable's value takes its type's size; an aggregation's data, a
//! counter and its value. These are DTrace's sizes, not the maps' (whose keys hold only
//! the longest string their uses store): an option's meaning does not depend on them.

use dtrace_abi::slots::{bucket_count, slot_count};
use dtrace_typing::ir;
use dtrace_typing::types::Type;

/// The largest entries, in bytes as DTrace counts them; 0 where the program has none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Space {
    /// The largest key tuple of an associative array or aggregation.
    pub tuple: u64,
    /// The largest value of an associative array or thread-local variable.
    pub dynvar: u64,
    /// The largest aggregation data.
    pub aggdata: u64,
}

impl Space {
    /// The entries of `options_size` bytes for values of `value` bytes: `None` when the
    /// program has no such values, `Some(0)` when not even one fits.
    pub fn entries(&self, options_size: u64, value: u64) -> Option<u64> {
        (value > 0).then(|| options_size / (self.tuple + value))
    }
}

/// The largest entries of `prog`, whose strings hold `strsize` bytes with their NUL.
pub fn needs(prog: &ir::Program, strsize: u32) -> Space {
    let size = |ty: &Type| match ty {
        _ if ty.is_string() => u64::from(strsize),
        _ => ty.size(),
    };
    let assoc_tuples = prog.assocs.iter().map(|a| tuple(a.keys.iter(), strsize));
    let agg_tuples = prog
        .aggregations
        .iter()
        .map(|a| tuple(a.keys.iter().map(|(ty, _)| ty), strsize));
    let values = prog.assocs.iter().map(|a| &a.value);
    let thread = prog.thread_vars.iter().map(|v| &v.ty);
    Space {
        tuple: assoc_tuples.chain(agg_tuples).max().unwrap_or(0),
        dynvar: values.chain(thread).map(size).max().unwrap_or(0),
        aggdata: prog
            .aggregations
            .iter()
            .map(|a| 8 * (1 + dtrace_data_slots(&a.func) as u64))
            .max()
            .unwrap_or(0),
    }
}

/// The slots of an aggregation's data as DTrace has them: a histogram's buckets, without
/// the sum kept past them here.
fn dtrace_data_slots(func: &dtrace_abi::slots::AggFunc) -> usize {
    match func.is_histogram() {
        true => bucket_count(func),
        false => slot_count(func),
    }
}

/// A key tuple's bytes: each key aligned to its size, then the thread key's 8 bytes.
fn tuple<'a>(keys: impl Iterator<Item = &'a Type>, strsize: u32) -> u64 {
    let mut end = 0u64;
    for ty in keys {
        if ty.is_string() {
            end += u64::from(strsize);
        } else if ty.is_scalar() {
            let size = ty.scalar_size().max(1) as u64;
            end = end.next_multiple_of(size) + size;
        } else {
            end += ty.size();
        }
    }
    end + 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tuples_are_laid_out_as_dtrace_lays_them() {
        let int = dtrace_typing::types::INT;
        let char_ = Type::Int {
            size: 1,
            signed: true,
            name: "char",
        };
        assert_eq!(tuple([].iter(), 257), 8);
        assert_eq!(tuple([int.clone()].iter(), 257), 12);
        assert_eq!(tuple([char_, int].iter(), 257), 16);
        assert_eq!(tuple([Type::String].iter(), 513), 521);
        let space = Space {
            tuple: 12,
            dynvar: 4,
            aggdata: 0,
        };
        assert_eq!(space.entries(15, space.dynvar), Some(0));
        assert_eq!(space.entries(20, space.dynvar), Some(1));
        assert_eq!(space.entries(1 << 20, space.aggdata), None);
    }
}

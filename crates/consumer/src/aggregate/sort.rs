//! The order DTrace prints aggregation rows in.
//!
//! Values compare by function: count/sum/min/max as signed integers, avg by
//! its integer mean, stddev by its integer deviation, and the quantize
//! family by the sum of each bucket's count weighted by the value the bucket
//! stands for, then by the count of the bucket standing for zero.  Keys
//! compare column by column (starting at `aggsortkeypos`, cyclically):
//! integers as unsigned numbers of their size, strings bytewise.

use std::cmp::Ordering;

use super::{slot_count, AggFunc, AggRow, Aggregation, SortOptions};
use crate::Value;
use dtrace_abi::slots::{buckets, lquantize_levels, quantize_bucket_value, stddev, LlqShape};

/// A comparable summary of one value: the main measure, then the zero
/// bucket's count (0 for non-histograms).
type Measure = (i128, i64);

fn measure(func: &AggFunc, data: &[u64]) -> Measure {
    let slot = |i: usize| data.get(i).copied().unwrap_or(0) as i64;
    match *func {
        AggFunc::Count | AggFunc::Sum => (i128::from(slot(0)), 0),
        AggFunc::Min | AggFunc::Max => (i128::from(slot(1)), 0),
        AggFunc::Avg => (i128::from(slot(1).checked_div(slot(0)).unwrap_or(0)), 0),
        AggFunc::Stddev => (i128::from(stddev(data, 1)), 0),
        _ => weighted(buckets(func, data), |i| bucket_value(func, i)),
    }
}

/// Sum of counts weighted by bucket value, and the count at value zero.
fn weighted(data: &[u64], value: impl Fn(usize) -> i128) -> Measure {
    let mut total = 0i128;
    let mut zero = None;
    for (i, &c) in data.iter().enumerate() {
        let v = value(i);
        if v == 0 && zero.is_none() {
            zero = Some(c as i64);
        }
        total = total.saturating_add(v.saturating_mul(i128::from(c as i64)));
    }
    (total, zero.unwrap_or(0))
}

/// The value a histogram bucket stands for when sorting: quantize buckets
/// their power of two; lquantize `base - 1` below the range, the level's
/// lower bound, and `base + levels*step + 1` above it; llquantize the
/// bucket's lower bound (its magnitude, for negative buckets).
fn bucket_value(func: &AggFunc, i: usize) -> i128 {
    match *func {
        AggFunc::Lquantize { base, limit, step } => {
            let levels = i128::from(lquantize_levels(base, limit, step));
            let (base, step, i) = (i128::from(base), i128::from(step), i as i128);
            if i == 0 {
                base - 1
            } else if i == levels + 1 {
                base + levels * step + 1
            } else {
                base + (i - 1) * step
            }
        }
        AggFunc::Llquantize {
            factor,
            low,
            high,
            nsteps,
        } => {
            let shape = LlqShape::new(factor, low, high, nsteps);
            let bin0 = shape.bin0();
            let magnitude = |off: usize| -> i128 {
                let per = (shape.nsteps - shape.skipped()) as usize;
                if off == 0 {
                    0
                } else if off > shape.nbins() / 2 - 1 {
                    shape.pow(shape.high + 1) as i128
                } else {
                    let m = shape.low + ((off - 1) / per) as u32;
                    let s = ((off - 1) % per) as u128 + shape.skipped();
                    if s == 0 {
                        // Fewer steps than the factor: the first bucket starts the magnitude.
                        shape.pow(m) as i128
                    } else {
                        (s * shape.pow(m + 1) / shape.nsteps) as i128
                    }
                }
            };
            if i < bin0 {
                -magnitude(bin0 - i)
            } else {
                magnitude(i - bin0)
            }
        }
        _ => i128::from(quantize_bucket_value(i)),
    }
}

/// Compare keys column by column, starting at `start` (cyclically).
pub(crate) fn compare_keys(a: &[Value], b: &[Value], start: usize) -> Ordering {
    let n = a.len().min(b.len());
    let start = if start >= n { 0 } else { start };
    (0..n)
        .map(|i| (i + start) % n)
        .map(|i| compare_key(&a[i], &b[i]))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

fn compare_key(a: &Value, b: &Value) -> Ordering {
    // Kinds apart: integers, strings, symbols, stacks.
    let rank = |v: &Value| match v {
        Value::Int { .. } => 0,
        Value::Str(_) => 1,
        Value::Sym { .. } => 2,
        Value::Stack { .. } => 3,
        Value::Bytes(_) => 4,
    };
    match (a, b) {
        (Value::Stack { raw: x, .. }, Value::Stack { raw: y, .. })
        | (Value::Sym { raw: x, .. }, Value::Sym { raw: y, .. }) => x.cmp(y),
        _ if rank(a) != rank(b) => rank(a).cmp(&rank(b)),
        (Value::Str(x), Value::Str(y)) | (Value::Bytes(x), Value::Bytes(y)) => x.cmp(y),
        (Value::Str(_), Value::Int { .. }) => Ordering::Greater,
        (Value::Int { .. }, Value::Str(_)) => Ordering::Less,
        _ => a
            .size()
            .cmp(&b.size())
            .then(a.zero_extended().cmp(&b.zero_extended())),
    }
}

/// One printed row of one or more aggregations joined by key: the key and each
/// aggregation's slots (`None` where it has no such key). A row of one aggregation keeps
/// nothing on the heap.
#[derive(Clone)]
pub(crate) struct Bundle<'a> {
    pub key: &'a [Value],
    first: Option<&'a AggRow>,
    rest: Box<[Option<&'a AggRow>]>,
}

impl<'a> Bundle<'a> {
    fn new(key: &'a [Value], aggs: usize) -> Bundle<'a> {
        Bundle {
            key,
            first: None,
            rest: vec![None; aggs.saturating_sub(1)].into_boxed_slice(),
        }
    }

    /// The slots of the `i`th aggregation, if it has the key.
    pub fn data(&self, i: usize) -> Option<&'a [u64]> {
        self.row(i).map(|r| r.data.as_slice())
    }

    /// The row of the `i`th aggregation, if it has the key.
    pub fn row(&self, i: usize) -> Option<&'a AggRow> {
        match i {
            0 => self.first,
            _ => self.rest[i - 1],
        }
    }

    fn set(&mut self, i: usize, row: &'a AggRow) {
        match i {
            0 => self.first = Some(row),
            _ => self.rest[i - 1] = Some(row),
        }
    }
}

/// Join `aggs` by key and order the rows as DTrace prints them.
pub(crate) fn bundles<'a>(aggs: &[&'a Aggregation], opts: &SortOptions) -> Vec<Bundle<'a>> {
    let mut out: Vec<Bundle<'a>> = Vec::new();
    if let [agg] = aggs {
        // An aggregation's keys are distinct: nothing to join.
        out.extend(agg.rows().iter().map(|row| Bundle {
            first: Some(row),
            ..Bundle::new(&row.key, 1)
        }));
    } else {
        let mut seen = std::collections::HashMap::new();
        for (n, agg) in aggs.iter().enumerate() {
            for row in agg.rows() {
                let slot = *seen.entry(&row.key).or_insert_with(|| {
                    out.push(Bundle::new(&row.key, aggs.len()));
                    out.len() - 1
                });
                out[slot].set(n, row);
            }
        }
    }
    let pos = if opts.position < aggs.len() {
        opts.position
    } else {
        0
    };
    let m = aggs.len();
    let measures: Vec<Measure> = out
        .iter()
        .flat_map(|b| {
            (0..m).map(move |i| (i + pos) % m).map(move |i| {
                let zero = vec![0; slot_count(&aggs[i].func)];
                measure(&aggs[i].func, b.data(i).unwrap_or(&zero))
            })
        })
        .collect();
    let of = |k: usize| &measures[k * m..k * m + m];
    // Row numbers fit in 32 bits: a map holds at most 2^32 keys.
    let mut order: Vec<u32> = (0..out.len() as u32).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        let keys = || compare_keys(out[a].key, out[b].key, opts.key_position);
        if opts.by_key {
            keys().then_with(|| of(a).cmp(of(b)))
        } else {
            of(a).cmp(of(b)).then_with(keys)
        }
    });
    if opts.reverse {
        order.reverse();
    }
    permute(&mut out, &mut order);
    out
}

/// Reorder `items` so that the `k`th is the one that was at `order[k]`, in place (`order`
/// is used up).
fn permute<T>(items: &mut [T], order: &mut [u32]) {
    const DONE: u32 = u32::MAX;
    for start in 0..items.len() {
        let mut k = start;
        while order[k] != DONE {
            let from = order[k] as usize;
            order[k] = DONE;
            if from == start {
                break;
            }
            items.swap(k, from);
            k = from;
        }
    }
}

/// Row indices of `agg` ordered by value, ties by key (ignoring options).
pub(crate) fn by_value(agg: &Aggregation) -> Vec<usize> {
    let rows = agg.rows();
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| {
        measure(&agg.func, &rows[a].data)
            .cmp(&measure(&agg.func, &rows[b].data))
            .then_with(|| compare_keys(&rows[a].key, &rows[b].key, 0))
    });
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutes_in_place() {
        let mut items: Vec<char> = "abcdefg".chars().collect();
        let mut order = vec![3, 0, 6, 1, 2, 5, 4];
        permute(&mut items, &mut order);
        assert_eq!(items.iter().collect::<String>(), "dagbcfe");
    }

    #[test]
    fn keys_compare_unsigned_by_size() {
        let k = |v: i32| vec![Value::i32(v)];
        assert_eq!(compare_keys(&k(-1), &k(2), 0), Ordering::Greater);
        assert_eq!(compare_keys(&k(1), &k(2), 0), Ordering::Less);
        let s = |x: &str, y: i32| vec![Value::str(x), Value::i32(y)];
        assert_eq!(compare_keys(&s("a", 2), &s("b", 1), 0), Ordering::Less);
        assert_eq!(compare_keys(&s("a", 2), &s("b", 1), 1), Ordering::Greater);
        assert_eq!(compare_keys(&s("a", 2), &s("b", 1), 5), Ordering::Less);
        assert_eq!(
            compare_keys(&[Value::str("ab")], &[Value::str("abc")], 0),
            Ordering::Less
        );
    }

    #[test]
    fn histogram_measures() {
        let mut q = vec![0u64; 127];
        q[65] = 1; // value 2
        q[62] = 3; // value -1
        assert_eq!(measure(&AggFunc::Quantize, &q), (-1, 0));
        let lq = AggFunc::Lquantize {
            base: 0,
            limit: 10,
            step: 5,
        };
        assert_eq!(measure(&lq, &[1, 2, 0, 1]), (-1 + 11, 2));
        let llq = AggFunc::Llquantize {
            factor: 10,
            low: 0,
            high: 1,
            nsteps: 10,
        };
        // bin0 = 19; bucket 21 stands for 2, bucket 29 for 10, the last for 100.
        assert_eq!(
            [
                bucket_value(&llq, 19),
                bucket_value(&llq, 21),
                bucket_value(&llq, 29),
                bucket_value(&llq, 38)
            ],
            [0, 2, 10, 100]
        );
        assert_eq!([bucket_value(&llq, 17), bucket_value(&llq, 0)], [-2, -100]);
    }
}

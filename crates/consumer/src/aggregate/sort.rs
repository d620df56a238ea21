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

/// The rows to order: one aggregation's, or the bundles of several joined by key.
enum Table<'a> {
    One(&'a [AggRow]),
    Many(Vec<Bundle<'a>>),
}

impl<'a> Table<'a> {
    fn len(&self) -> usize {
        match self {
            Table::One(rows) => rows.len(),
            Table::Many(bundles) => bundles.len(),
        }
    }

    fn key(&self, r: usize) -> &'a [Value] {
        match self {
            Table::One(rows) => &rows[r].key,
            Table::Many(bundles) => bundles[r].key,
        }
    }

    /// The slots of the `i`th aggregation in row `r`, if it has the key.
    fn data(&self, r: usize, i: usize) -> Option<&'a [u64]> {
        match self {
            Table::One(rows) => Some(&rows[r].data),
            Table::Many(bundles) => bundles[r].data(i),
        }
    }
}

/// The rows of [`bundles`], in order, made as they are taken.
pub(crate) struct Bundles<'a> {
    table: Table<'a>,
    /// The rows' places, sorted (printed from the last with `reverse`).
    places: Vec<Place>,
    reverse: bool,
    /// How many rows were taken.
    at: usize,
}

impl Bundles<'_> {
    /// The number of the `n`th row to take.
    fn row(&self, n: usize) -> Option<usize> {
        let k = match self.reverse {
            true => self.places.len().checked_sub(n + 1)?,
            false => n,
        };
        self.places.get(k).map(|p| p.row as usize)
    }
}

/// How many rows ahead of the one taken [`Bundles`] reads a row's key and slots, and
/// twice as far its row: in sorted order a large aggregation's rows are all over memory,
/// and reading them one at a time waits for each in turn.
const AHEAD: usize = 8;

impl<'a> Iterator for Bundles<'a> {
    type Item = Bundle<'a>;

    fn next(&mut self) -> Option<Bundle<'a>> {
        let r = self.row(self.at)?;
        self.at += 1;
        if let Table::One(rows) = self.table {
            let ahead = |n: usize| self.row(self.at + n).map(|r| &rows[r]);
            if let Some(row) = ahead(2 * AHEAD) {
                std::hint::black_box(row.key.len());
            }
            if let Some(row) = ahead(AHEAD) {
                std::hint::black_box(row.key.first().map(std::mem::discriminant));
                std::hint::black_box(row.data.first().copied());
            }
        }
        Some(match &mut self.table {
            Table::One(rows) => Bundle {
                first: Some(&rows[r]),
                ..Bundle::new(&rows[r].key, 1)
            },
            Table::Many(bundles) => std::mem::replace(&mut bundles[r], Bundle::new(&[], 1)),
        })
    }
}

/// A row's place in the order, summarized so that most comparisons read nothing else:
/// `first` and `then` are alike in order to the first criteria DTrace compares rows by
/// (ties on both are settled by comparing the rows themselves), `row` the row's number.
#[derive(Clone, Copy)]
struct Place {
    first: u64,
    then: u64,
    row: u32,
}

/// Join `aggs` by key and order the rows as DTrace prints them.
pub(crate) fn bundles<'a>(aggs: &[&'a Aggregation], opts: &SortOptions) -> Bundles<'a> {
    let table = if let [agg] = aggs {
        // An aggregation's keys are distinct: nothing to join.
        Table::One(agg.rows())
    } else {
        let mut out: Vec<Bundle<'a>> = Vec::new();
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
        Table::Many(out)
    };
    let pos = if opts.position < aggs.len() {
        opts.position
    } else {
        0
    };
    let m = aggs.len();
    // The measure of row `r`'s `k`th aggregation in comparison order (zeros where absent).
    let measure_of = |r: usize, k: usize| {
        let i = (k + pos) % m;
        match table.data(r, i) {
            Some(data) => measure(&aggs[i].func, data),
            None => measure(&aggs[i].func, &vec![0; slot_count(&aggs[i].func)]),
        }
    };
    let column = KeyColumn::of(&table, opts.key_position);
    // By value, the first measure is compared first (clamped to 64 bits); the key's first
    // column next when nothing comes between (one aggregation whose measure is one
    // number, and that number not clamped).
    let key_next = m == 1 && !aggs[0].func.is_histogram();
    let place = |r: usize| {
        let (first, then) = if opts.by_key {
            (column.summary(table.key(r)), 0)
        } else {
            let (first, exact) = clamped(measure_of(r, 0).0);
            let then = if key_next && exact {
                column.summary(table.key(r))
            } else {
                0
            };
            (first, then)
        };
        // Row numbers fit in 32 bits: a map holds at most 2^32 keys.
        Place {
            first,
            then,
            row: r as u32,
        }
    };
    let mut places: Vec<Place> = (0..table.len()).map(place).collect();
    let measures = |r: usize| (0..m).map(move |k| measure_of(r, k));
    places.sort_unstable_by(|a, b| {
        let (ra, rb) = (a.row as usize, b.row as usize);
        let keys = || compare_keys(table.key(ra), table.key(rb), opts.key_position);
        let values = || measures(ra).cmp(measures(rb));
        (a.first, a.then)
            .cmp(&(b.first, b.then))
            .then_with(|| {
                if opts.by_key {
                    keys().then_with(values)
                } else {
                    values().then_with(keys)
                }
            })
            // Rows alike stay in the order they came in.
            .then(a.row.cmp(&b.row))
    });
    Bundles {
        table,
        places,
        reverse: opts.reverse,
        at: 0,
    }
}

/// A measure's main number as an unsigned 64-bit one in the same order, and whether it
/// is exact: numbers from `i64::MAX` up (and from `i64::MIN` down) are alike.
fn clamped(v: i128) -> (u64, bool) {
    let c = v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    ((c as u64) ^ (1 << 63), c != i64::MIN && c != i64::MAX)
}

/// The key column compared first, when every row's is of one kind, summarized as a number
/// in the same order as [`compare_key`] puts them (strings alike in their first 8 bytes
/// tie).
enum KeyColumn {
    /// Column `n`, integers of one size: their value.
    Int(usize),
    /// Column `n`, all strings or all byte arrays: their first 8 bytes.
    Bytes(usize),
    /// Not one kind: nothing.
    Mixed,
}

impl KeyColumn {
    fn of(table: &Table, key_position: usize) -> KeyColumn {
        let n = table.len();
        let width = if n > 0 { table.key(0).len() } else { 0 };
        if width == 0 || (0..n).any(|r| table.key(r).len() != width) {
            return KeyColumn::Mixed;
        }
        // As compare_keys starts.
        let col = if key_position >= width {
            0
        } else {
            key_position
        };
        let kind = |v: &Value| match v {
            Value::Int { size, .. } => Some((0, *size)),
            Value::Str(_) => Some((1, 0)),
            Value::Bytes(_) => Some((2, 0)),
            _ => None,
        };
        let first = kind(&table.key(0)[col]);
        if (1..n).any(|r| kind(&table.key(r)[col]) != first) {
            return KeyColumn::Mixed;
        }
        match first {
            Some((0, _)) => KeyColumn::Int(col),
            Some(_) => KeyColumn::Bytes(col),
            None => KeyColumn::Mixed,
        }
    }

    fn summary(&self, key: &[Value]) -> u64 {
        match *self {
            KeyColumn::Int(col) => key[col].zero_extended(),
            KeyColumn::Bytes(col) => match &key[col] {
                Value::Str(b) | Value::Bytes(b) => {
                    let mut head = [0u8; 8];
                    let n = b.len().min(8);
                    head[..n].copy_from_slice(&b[..n]);
                    u64::from_be_bytes(head)
                }
                _ => 0,
            },
            KeyColumn::Mixed => 0,
        }
    }
}

/// Row indices of `agg` ordered by value, ties by key (ignoring options).
pub(crate) fn by_value(agg: &Aggregation) -> Vec<usize> {
    let sorted = bundles(&[agg], &SortOptions::default());
    sorted.places.iter().map(|p| p.row as usize).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// Keys and each aggregation's slots, in the order of comparing whole rows (stably),
    /// as DTrace orders them: what the summarized places must agree with.
    fn compared_order(
        aggs: &[&Aggregation],
        opts: &SortOptions,
    ) -> Vec<(Vec<Value>, Vec<Vec<u64>>)> {
        let mut keys: Vec<&Vec<Value>> = Vec::new();
        for row in aggs.iter().flat_map(|a| a.rows()) {
            if !keys.contains(&&row.key) {
                keys.push(&row.key);
            }
        }
        let m = aggs.len();
        let pos = if opts.position < m { opts.position } else { 0 };
        let data = |key: &Vec<Value>, i: usize| {
            aggs[i]
                .rows()
                .iter()
                .find(|r| &r.key == key)
                .map_or_else(|| vec![0; slot_count(&aggs[i].func)], |r| r.data.clone())
        };
        let measures = |key: &Vec<Value>| {
            (0..m)
                .map(|k| (k + pos) % m)
                .map(|i| measure(&aggs[i].func, &data(key, i)))
                .collect::<Vec<_>>()
        };
        keys.sort_by(|a, b| {
            let by_keys = compare_keys(a, b, opts.key_position);
            let by_values = measures(a).cmp(&measures(b));
            match opts.by_key {
                true => by_keys.then(by_values),
                false => by_values.then(by_keys),
            }
        });
        if opts.reverse {
            keys.reverse();
        }
        keys.into_iter()
            .map(|k| (k.clone(), (0..m).map(|i| data(k, i)).collect()))
            .collect()
    }

    /// A pseudo-random sequence, the same every run.
    fn numbers(seed: u64) -> impl FnMut(u64) -> u64 {
        let mut x = seed;
        move |below| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % below
        }
    }

    fn aggregation(func: AggFunc, rows: Vec<(Vec<Value>, Vec<u64>)>) -> Aggregation {
        let mut agg = Aggregation::new("a", func);
        for (key, data) in rows {
            agg.set(key, data);
        }
        agg
    }

    #[test]
    fn summarized_places_order_rows_as_whole_rows_compare() {
        let mut n = numbers(7);
        let words = [
            "",
            "a",
            "kworker/0",
            "kworker/1",
            "kworker/0:1",
            "kworker",
            "z",
        ];
        let int_keys = |n: &mut dyn FnMut(u64) -> u64| {
            (0..400)
                .map(|i| {
                    let key = match n(3) {
                        _ if i % 2 == 0 => Value::u64(n(1 << 40)),
                        0 => Value::u64(n(1 << 40)),
                        1 => Value::i32(n(1 << 31) as i32 - (1 << 30)),
                        _ => Value::u64(u64::MAX - n(10)),
                    };
                    vec![key]
                })
                .collect::<Vec<_>>()
        };
        let one_size: Vec<Vec<Value>> = (0..400)
            .map(|i| vec![Value::u64(i * 7919 % 1000)])
            .collect();
        let mixed = int_keys(&mut n);
        let strings: Vec<Vec<Value>> = (0..300)
            .map(|i| vec![Value::str(words[i % words.len()]), Value::i32(i as i32 / 7)])
            .collect();
        let big = i64::MAX as u64;
        let mut cases: Vec<Vec<Aggregation>> = Vec::new();
        for keys in [&one_size, &mixed, &strings] {
            let mut dedup: Vec<Vec<Value>> = Vec::new();
            for k in keys {
                if !dedup.contains(k) {
                    dedup.push(k.clone());
                }
            }
            let counts: Vec<_> = dedup.iter().map(|k| (k.clone(), vec![1 + n(3)])).collect();
            let sums: Vec<_> = dedup
                .iter()
                .map(|k| {
                    let v = [big, big - 1, i64::MIN as u64, 5][n(4) as usize];
                    (k.clone(), vec![v])
                })
                .collect();
            let stddevs: Vec<_> = dedup
                .iter()
                .map(|k| {
                    (
                        k.clone(),
                        vec![1, 0, 0, [0, 1 << 63, 1 << 62][n(3) as usize]],
                    )
                })
                .collect();
            let quantized: Vec<_> = dedup
                .iter()
                .map(|k| {
                    let mut q = vec![0u64; super::super::QUANTIZE_BUCKETS];
                    q[60 + n(8) as usize] = n(3);
                    (k.clone(), q)
                })
                .collect();
            let some_sums: Vec<_> = sums.iter().filter(|_| n(2) == 0).cloned().collect();
            cases.push(vec![aggregation(AggFunc::Count, counts.clone())]);
            cases.push(vec![aggregation(AggFunc::Sum, sums)]);
            cases.push(vec![aggregation(AggFunc::Stddev, stddevs)]);
            cases.push(vec![aggregation(AggFunc::Quantize, quantized)]);
            cases.push(vec![
                aggregation(AggFunc::Count, counts),
                aggregation(AggFunc::Sum, some_sums),
            ]);
        }
        for aggs in &cases {
            let aggs: Vec<&Aggregation> = aggs.iter().collect();
            for (by_key, reverse, position, key_position) in [
                (false, false, 0, 0),
                (true, false, 0, 0),
                (false, true, 1, 1),
                (true, true, 1, 1),
                (false, false, 0, 5),
            ] {
                let opts = SortOptions {
                    by_key,
                    reverse,
                    position,
                    key_position,
                };
                let got: Vec<(Vec<Value>, Vec<Vec<u64>>)> = bundles(&aggs, &opts)
                    .map(|b| {
                        let data = (0..aggs.len())
                            .map(|i| {
                                b.data(i).map_or_else(
                                    || vec![0; slot_count(&aggs[i].func)],
                                    <[u64]>::to_vec,
                                )
                            })
                            .collect();
                        (b.key.to_vec(), data)
                    })
                    .collect();
                assert!(
                    got == compared_order(&aggs, &opts),
                    "{:?} {opts:?}",
                    aggs[0].func
                );
            }
        }
    }
}

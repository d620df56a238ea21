//! Aggregations: their functions, merged data, and DTrace's ways of printing
//! them (the default layout at exit, `printa()` with and without a format)
//! together with `normalize()`, `denormalize()`, `trunc()` and `clear()`.

pub mod folded;
mod histogram;
mod index;
mod print;
mod snapshot;
mod sort;
mod summary;

pub use dtrace_abi::slots::{
    llquantize_bucket, lquantize_bucket, merge, quantize_bucket, quantize_bucket_value, slot_count,
    AggFunc, QUANTIZE_BUCKETS, QUANTIZE_ZERO,
};
pub use print::{printa, printa_format, render_exit, write_exit, StackFormat};
pub(crate) use snapshot::Aggregations;
pub use snapshot::{AggregationMaps, EntryVisitor};
pub use summary::{summary, Bucket, Summary};

use crate::Value;
use index::RowIndex;

/// Options controlling the order of aggregation rows (DTrace's
/// `aggsortkey`, `aggsortrev`, `aggsortpos` and `aggsortkeypos`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SortOptions {
    /// Sort by key (then value) instead of by value (then key).
    pub by_key: bool,
    /// Reverse the whole order (including the order of aggregations).
    pub reverse: bool,
    /// In a multi-aggregation `printa()`, the aggregation whose value sorts
    /// first (0 when out of range).
    pub position: usize,
    /// The key column compared first (0 when out of range); the others
    /// follow cyclically.
    pub key_position: usize,
}

/// One key of an aggregation with its merged value slots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggRow {
    pub key: Vec<Value>,
    pub data: Vec<u64>,
    /// Each CPU's slots, by CPU number, when the aggregation keeps them (`aggpercpu`);
    /// else empty. (A boxed slice: a million-key aggregation's rows are 8 bytes smaller
    /// each than with a vector.)
    pub percpu: Box<[Vec<u64>]>,
}

/// An aggregation variable and its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aggregation {
    /// The name without `@` (empty for `@`).
    pub name: String,
    pub func: AggFunc,
    /// Set once `printa()` printed it: aggregations already printed are not
    /// printed again at exit (callers set this after a `printa()`).
    pub printed: bool,
    normal: u64,
    /// Whether each row also keeps every CPU's slots (`aggpercpu`).
    per_cpu: bool,
    rows: Vec<AggRow>,
    index: RowIndex,
}

impl Aggregation {
    pub fn new(name: impl Into<String>, func: AggFunc) -> Aggregation {
        Aggregation {
            name: name.into(),
            func,
            printed: false,
            normal: 1,
            per_cpu: false,
            rows: Vec::new(),
            index: RowIndex::default(),
        }
    }

    /// The aggregation keeping each CPU's slots beside the merged ones (`aggpercpu`).
    pub fn keeping_per_cpu(mut self) -> Aggregation {
        self.per_cpu = true;
        self
    }

    /// The rows, in insertion order.
    pub fn rows(&self) -> &[AggRow] {
        &self.rows
    }

    /// The rows in the order DTrace prints them: each key and its merged slots.
    pub fn sorted_rows(&self, opts: &SortOptions) -> Vec<(&[Value], &[u64])> {
        sort::bundles(&[self], opts)
            .filter_map(|b| Some((b.key, b.data(0)?)))
            .collect()
    }

    /// The row of `key` (indexing the rows again if [`Aggregation::merged`] let the index
    /// go), or else the key's hash, to push its row with.
    fn find(&mut self, key: &[Value]) -> Result<usize, u64> {
        if self.index.len() < self.rows.len() {
            self.index.clear();
            for row in &self.rows {
                self.index.push(index::hash(&row.key));
            }
        }
        let hash = index::hash(key);
        self.index
            .find(hash, key, |i| &self.rows[i].key)
            .ok_or(hash)
    }

    /// Done adding rows for now: the index goes (it is made again if needed), leaving its
    /// memory to what prints the rows.
    pub fn merged(&mut self) {
        self.index = RowIndex::default();
    }

    /// Add a row, whose key has hash `hash`.
    fn push(&mut self, hash: u64, row: AggRow) {
        self.index.push(hash);
        self.rows.push(row);
    }

    /// Set the merged slots of `key` (adding the key if new).
    pub fn set(&mut self, key: Vec<Value>, data: Vec<u64>) {
        match self.find(&key) {
            Ok(i) => self.rows[i].data = data,
            Err(hash) => self.push(
                hash,
                AggRow {
                    key,
                    data,
                    percpu: Box::default(),
                },
            ),
        }
    }

    /// Merge per-CPU slots (one slice per CPU, by CPU number) into those of `key` (adding
    /// the key if new): merged slots merge again as one more CPU's, and so do each CPU's
    /// when the aggregation keeps them.
    pub fn merge_percpu(&mut self, key: Vec<Value>, percpu: &[&[u64]]) {
        let data = merge(&self.func, percpu);
        let func = self.func;
        let kept = |cpus: &[&[u64]]| cpus.iter().map(|c| c.to_vec()).collect::<Box<[_]>>();
        match self.find(&key) {
            Ok(i) => {
                let row = &mut self.rows[i];
                row.data = merge(&func, &[&row.data, &data]);
                for (mine, more) in row.percpu.iter_mut().zip(percpu) {
                    *mine = merge(&func, &[mine, more]);
                }
            }
            Err(hash) => {
                let percpu = if self.per_cpu {
                    kept(percpu)
                } else {
                    Box::default()
                };
                self.push(hash, AggRow { key, data, percpu });
            }
        }
    }

    /// The normalization factor values are divided by when printed.
    pub fn normal(&self) -> u64 {
        self.normal
    }

    /// `normalize(@a, n)` (a factor of 0 is taken as 1).
    pub fn normalize(&mut self, n: u64) {
        self.normal = n.max(1);
    }

    /// `denormalize(@a)`.
    pub fn denormalize(&mut self) {
        self.normal = 1;
    }

    /// `clear(@a)`: zero every value but keep the keys (which then print
    /// with zero values).
    pub fn clear(&mut self) {
        let n = slot_count(&self.func);
        for row in &mut self.rows {
            row.data = vec![0; n];
            row.percpu.iter_mut().for_each(|cpu| *cpu = vec![0; n]);
        }
    }

    /// `trunc(@a, n)`: keep the `n` rows with the largest values when `n > 0`,
    /// the `-n` with the smallest when `n < 0`, none when `n == 0`.  Ties
    /// are settled by key, as DTrace's value sort does.
    pub fn trunc(&mut self, n: i64) {
        let mut order = sort::by_value(self);
        if n > 0 {
            order.reverse();
        }
        let keep: Vec<AggRow> = order
            .into_iter()
            .take(n.unsigned_abs() as usize)
            .map(|i| self.rows[i].clone())
            .collect();
        self.rows.clear();
        self.index.clear();
        for row in keep {
            self.push(index::hash(&row.key), row);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_merge_into_their_rows_before_and_after_the_index_goes() {
        let mut agg = Aggregation::new("a", AggFunc::Max);
        agg.merge_percpu(vec![Value::i32(1)], &[&[1, 5], &[0, 0]]);
        agg.merge_percpu(vec![Value::i32(2)], &[&[1, 3]]);
        agg.merge_percpu(vec![Value::i32(1)], &[&[1, 9]]);
        agg.merged();
        agg.merge_percpu(vec![Value::i32(2)], &[&[1, 2], &[1, 4]]);
        agg.set(vec![Value::i32(3)], vec![1, 1]);
        let rows: Vec<(Vec<Value>, Vec<u64>)> = agg
            .rows()
            .iter()
            .map(|r| (r.key.clone(), r.data.clone()))
            .collect();
        assert_eq!(
            rows,
            vec![
                (vec![Value::i32(1)], vec![1, 9]),
                (vec![Value::i32(2)], vec![1, 4]),
                (vec![Value::i32(3)], vec![1, 1]),
            ]
        );
    }

    #[test]
    fn kept_cpus_merge_cpu_by_cpu() {
        let mut agg = Aggregation::new("a", AggFunc::Sum).keeping_per_cpu();
        agg.merge_percpu(vec![Value::i32(1)], &[&[5], &[7]]);
        agg.merge_percpu(vec![Value::i32(1)], &[&[1], &[0]]);
        assert_eq!(agg.rows()[0].data, vec![13]);
        assert_eq!(*agg.rows()[0].percpu, [vec![6], vec![7]]);
        agg.clear();
        assert_eq!(*agg.rows()[0].percpu, [vec![0], vec![0]]);
        let mut merged_only = Aggregation::new("b", AggFunc::Sum);
        merged_only.merge_percpu(vec![Value::i32(1)], &[&[5], &[7]]);
        assert!(merged_only.rows()[0].percpu.is_empty());
    }
}

//! Aggregations as the consumer reads them: snapshots of the per-CPU maps (handed over as
//! bytes by whoever owns the maps, through [`AggregationMaps`]) decoded and merged into
//! [`Aggregation`]s, and the actions on them (`printa`, `clear`, `trunc`, `normalize`,
//! `denormalize`) with the state they leave (normalization, printed).

use std::collections::{HashMap, HashSet};

use dtrace_abi::desc;

use super::Aggregation;
use crate::decode;
use crate::symbolize::Symbolizer;
use crate::Value;

/// What [`AggregationMaps::entries`] hands each entry to: its key's bytes and its value's
/// bytes on each CPU.
pub type EntryVisitor<'a> = dyn FnMut(&[u8], &[&[u8]]) + 'a;

/// The aggregation maps, read and changed for the consumer by the side that owns them.
/// Aggregations are numbered as in [`desc::ProgramDesc::aggregations`].
pub trait AggregationMaps {
    /// Every entry of aggregation `agg`, each in turn (none is kept: a million-key
    /// aggregation is read without a second copy of it).
    fn entries(&self, agg: usize, each: &mut EntryVisitor);
    /// The keys of aggregation `agg`.
    fn keys(&self, agg: usize) -> Vec<Vec<u8>>;
    /// Set every value of aggregation `agg` to zero, keeping the keys (`clear()`).
    fn clear(&self, agg: usize);
    /// Remove `keys` from aggregation `agg` (`trunc()`): all at once, so an implementation
    /// does its bookkeeping once, not once a key.
    fn remove(&self, agg: usize, keys: &[&[u8]]);
}

/// Consumer-side state of one aggregation.
#[derive(Clone)]
struct State {
    normal: u64,
    printed: bool,
}

/// Every aggregation's description and consumer-side state.
pub(crate) struct Aggregations {
    descs: Vec<desc::Aggregation>,
    states: Vec<State>,
    /// Whether snapshots keep each CPU's slots (`aggpercpu`).
    pub per_cpu: bool,
}

/// A snapshot's rows by key, with the raw keys each row merged.
type RawKeys = HashMap<Vec<Value>, Vec<Vec<u8>>>;

impl Aggregations {
    pub fn new(descs: &[desc::Aggregation]) -> Aggregations {
        let state = State {
            normal: 1,
            printed: false,
        };
        Aggregations {
            descs: descs.to_vec(),
            states: vec![state; descs.len()],
            per_cpu: false,
        }
    }

    /// Read aggregation `i`; with `raw`, also each row's raw keys. Keys that print alike
    /// because they name one symbol (`ufunc(pc)` of two addresses of one function) are one
    /// row, as in DTrace: their slots merge as if from more CPUs.
    fn snapshot(
        &self,
        i: usize,
        maps: &dyn AggregationMaps,
        symbols: &mut Symbolizer,
        mut raw: Option<&mut RawKeys>,
    ) -> Aggregation {
        let desc = &self.descs[i];
        let mut agg = Aggregation::new(desc.name.clone(), desc.func);
        if self.per_cpu {
            agg = agg.keeping_per_cpu();
        }
        let mut slots = Vec::new();
        maps.entries(i, &mut |key, percpu| {
            decode::slots(percpu, &mut slots);
            let width = percpu.first().map_or(0, |v| v.len() / 8).max(1);
            let values: Vec<Value> = desc
                .keys
                .iter()
                .map(|f| decode::value(key, f, symbols))
                .collect();
            if let Some(raw) = raw.as_deref_mut() {
                raw.entry(values.clone()).or_default().push(key.to_vec());
            }
            let refs: Vec<&[u64]> = slots.chunks(width).collect();
            agg.merge_percpu(values, &refs);
        });
        agg.merged();
        let state = &self.states[i];
        if state.normal != 1 {
            agg.normalize(state.normal);
        }
        agg.printed = state.printed;
        agg
    }

    /// Read the mappings of every process named by a user stack or symbol key (the first
    /// time each is seen), so that they still resolve once the process has exited; the
    /// processes named.
    pub fn see_processes(
        &self,
        maps: &dyn AggregationMaps,
        symbols: &mut Symbolizer,
    ) -> HashSet<u32> {
        let mut named = HashSet::new();
        for (i, desc) in self.descs.iter().enumerate() {
            let user: Vec<(usize, desc::Field)> = desc
                .keys
                .iter()
                .filter(|f| f.ty.datum().is_some_and(|d| d.user()))
                .map(|f| (f.offset as usize, f.clone()))
                .collect();
            if user.is_empty() {
                continue;
            }
            for key in maps.keys(i) {
                for (off, f) in &user {
                    let datum = f.ty.datum().expect("a user datum");
                    let pid = decode::datum_pid(&key, *off, datum);
                    symbols.see_process(pid);
                    named.insert(pid);
                }
            }
        }
        named
    }

    /// The aggregations `indices` names, read for `printa()` (and marked printed).
    pub fn printa(
        &mut self,
        indices: &[usize],
        maps: &dyn AggregationMaps,
        symbols: &mut Symbolizer,
    ) -> Vec<Aggregation> {
        let aggs = indices
            .iter()
            .map(|&i| self.snapshot(i, maps, symbols, None))
            .collect();
        for &i in indices {
            self.states[i].printed = true;
        }
        aggs
    }

    /// `trunc(@a[, n])`: keep the n first rows in sort order (the last -n if negative).
    pub fn trunc(
        &self,
        i: usize,
        n: Option<i64>,
        maps: &dyn AggregationMaps,
        symbols: &mut Symbolizer,
    ) {
        let mut raw = RawKeys::new();
        let mut agg = self.snapshot(i, maps, symbols, Some(&mut raw));
        agg.trunc(n.unwrap_or(0));
        let kept: HashSet<&Vec<Value>> = agg.rows().iter().map(|r| &r.key).collect();
        let gone: Vec<&[u8]> = raw
            .iter()
            .filter(|(key, _)| !kept.contains(key))
            .flat_map(|(_, keys)| keys.iter().map(Vec::as_slice))
            .collect();
        maps.remove(i, &gone);
    }

    pub fn normalize(&mut self, i: usize, n: u64) {
        self.states[i].normal = n.max(1);
    }

    pub fn denormalize(&mut self, i: usize) {
        self.states[i].normal = 1;
    }

    /// Every aggregation, read when tracing ends.
    pub fn all(&self, maps: &dyn AggregationMaps, symbols: &mut Symbolizer) -> Vec<Aggregation> {
        (0..self.descs.len())
            .map(|i| self.snapshot(i, maps, symbols, None))
            .collect()
    }
}

//! Aggregations as the consumer sees them: snapshots of the per-CPU maps merged into
//! consumer aggregations, and the actions on them (`printa`, `clear`, `trunc`,
//! `normalize`, `denormalize`) with the state they leave (normalization, printed).

use std::collections::HashMap;

use dtrace_backend::program::{Aggregation as AggDesc, Compiled};
use dtrace_consumer::aggregate::{self, Aggregation, SortOptions};
use dtrace_consumer::printf;
use dtrace_consumer::symbolize::Symbolizer;
use dtrace_consumer::Value;
use dtrace_runtime::{Map, Update};

use crate::decode;

/// Consumer-side state of each aggregation.
#[derive(Clone, Default)]
struct State {
    normal: u64,
    printed: bool,
}

pub struct Aggregations {
    descs: Vec<AggDesc>,
    states: Vec<State>,
    strsize: usize,
}

impl Aggregations {
    pub fn new(compiled: &Compiled, strsize: usize) -> Aggregations {
        Aggregations {
            descs: compiled.aggregations.clone(),
            states: vec![
                State {
                    normal: 1,
                    printed: false
                };
                compiled.aggregations.len()
            ],
            strsize,
        }
    }

    /// Read aggregation `i` from its map; also returns each key's raw bytes. Keys that
    /// print alike because they name one symbol (`ufunc(pc)` of two addresses of one
    /// function) are one row, as in DTrace: their slots merge as if from more CPUs.
    fn snapshot(
        &self,
        i: usize,
        maps: &[Map],
        symbols: &mut Symbolizer,
    ) -> (Aggregation, HashMap<Vec<Value>, Vec<Vec<u8>>>) {
        let desc = &self.descs[i];
        let mut agg = Aggregation::new(desc.name.clone(), desc.kind);
        let mut raw: HashMap<Vec<Value>, Vec<Vec<u8>>> = HashMap::new();
        let mut rows: Vec<(Vec<Value>, Vec<Vec<u64>>)> = Vec::new();
        let mut index: HashMap<Vec<Value>, usize> = HashMap::new();
        let map = &maps[desc.map.0];
        for key in map.keys().flatten() {
            let Ok(Some(percpu)) = map.lookup_percpu(&key) else {
                continue;
            };
            let slots = decode::slots(&percpu);
            let values: Vec<Value> = desc
                .keys
                .iter()
                .zip(desc.datums.iter().chain(std::iter::repeat(&None)))
                .map(|(f, d)| match d {
                    Some(d) => decode::datum(&key, f.offset as usize, *d, symbols),
                    None => decode::value(&key, f, self.strsize),
                })
                .collect();
            match index.get(&values) {
                Some(&at) => rows[at].1.extend(slots),
                None => {
                    index.insert(values.clone(), rows.len());
                    rows.push((values.clone(), slots));
                }
            }
            raw.entry(values).or_default().push(key);
        }
        for (values, slots) in rows {
            let refs: Vec<&[u64]> = slots.iter().map(Vec::as_slice).collect();
            agg.set_percpu(values, &refs);
        }
        let state = &self.states[i];
        if state.normal != 1 {
            agg.normalize(state.normal);
        }
        agg.printed = state.printed;
        (agg, raw)
    }

    /// Read the mappings of every process named by a user stack or symbol key (the first
    /// time each is seen), so that they still resolve once the process has exited.
    pub fn see_processes(&self, maps: &[Map], symbols: &mut Symbolizer) {
        for desc in &self.descs {
            let user: Vec<(usize, dtrace_backend::program::Datum)> = desc
                .keys
                .iter()
                .zip(&desc.datums)
                .filter_map(|(f, d)| d.filter(|d| d.user()).map(|d| (f.offset as usize, d)))
                .collect();
            if user.is_empty() {
                continue;
            }
            for key in maps[desc.map.0].keys().flatten() {
                for &(off, d) in &user {
                    symbols.see_process(decode::datum_pid(&key, off, d));
                }
            }
        }
    }

    /// `printa([format,] @a, ...)`
    pub fn printa(
        &mut self,
        format: Option<&str>,
        indices: &[usize],
        maps: &[Map],
        sort: &SortOptions,
        symbols: &mut Symbolizer,
    ) -> String {
        let aggs: Vec<Aggregation> = indices
            .iter()
            .map(|&i| self.snapshot(i, maps, symbols).0)
            .collect();
        let refs: Vec<&Aggregation> = aggs.iter().collect();
        for &i in indices {
            self.states[i].printed = true;
        }
        match format.map(printf::parse) {
            Some(Ok(f)) => aggregate::printa_format(&f, &refs, sort),
            _ => aggregate::printa(&refs, sort),
        }
    }

    /// `clear(@a)`: zero every value, keeping the keys.
    pub fn clear(&self, i: usize, maps: &[Map]) {
        let desc = &self.descs[i];
        let map = &maps[desc.map.0];
        let zeros = vec![0u8; desc.slots * 8];
        for key in map.keys().flatten().collect::<Vec<_>>() {
            let _ = map.update_percpu(&key, &zeros, Update::Exist);
        }
    }

    /// `trunc(@a[, n])`: keep the n first rows in sort order (the last -n if negative).
    pub fn trunc(&self, i: usize, n: Option<i64>, maps: &[Map], symbols: &mut Symbolizer) {
        let (mut agg, raw) = self.snapshot(i, maps, symbols);
        agg.trunc(n.unwrap_or(0));
        let kept: Vec<&Vec<Value>> = agg.rows().iter().map(|r| &r.key).collect();
        let map = &maps[self.descs[i].map.0];
        for (key, keys) in &raw {
            if !kept.contains(&key) {
                for bytes in keys {
                    let _ = map.delete(bytes);
                }
            }
        }
    }

    pub fn normalize(&mut self, i: usize, n: u64) {
        self.states[i].normal = n.max(1);
    }

    pub fn denormalize(&mut self, i: usize) {
        self.states[i].normal = 1;
    }

    /// Everything printed at exit: the aggregations not printed by `printa()`.
    pub fn render_exit(
        &self,
        maps: &[Map],
        sort: &SortOptions,
        symbols: &mut Symbolizer,
    ) -> String {
        let aggs: Vec<Aggregation> = (0..self.descs.len())
            .map(|i| self.snapshot(i, maps, symbols).0)
            .collect();
        aggregate::render_exit(&aggs, sort)
    }
}

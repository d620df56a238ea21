//! Aggregations as the consumer sees them: snapshots of the per-CPU maps merged into
//! consumer aggregations, and the actions on them (`printa`, `clear`, `trunc`,
//! `normalize`, `denormalize`) with the state they leave (normalization, printed).

use std::collections::HashMap;

use dtrace_backend::program::{Aggregation as AggDesc, Compiled};
use dtrace_consumer::aggregate::{self, Aggregation, SortOptions};
use dtrace_consumer::printf;
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

    /// Read aggregation `i` from its map; also returns each key's raw bytes.
    fn snapshot(&self, i: usize, maps: &[Map]) -> (Aggregation, HashMap<Vec<Value>, Vec<u8>>) {
        let desc = &self.descs[i];
        let mut agg = Aggregation::new(desc.name.clone(), desc.kind);
        let mut raw = HashMap::new();
        let map = &maps[desc.map.0];
        for key in map.keys().flatten() {
            let Ok(Some(percpu)) = map.lookup_percpu(&key) else {
                continue;
            };
            let slots = decode::slots(&percpu);
            let refs: Vec<&[u64]> = slots.iter().map(Vec::as_slice).collect();
            let values: Vec<Value> = desc
                .keys
                .iter()
                .map(|f| decode::value(&key, f, self.strsize))
                .collect();
            agg.set_percpu(values.clone(), &refs);
            raw.insert(values, key);
        }
        let state = &self.states[i];
        if state.normal != 1 {
            agg.normalize(state.normal);
        }
        agg.printed = state.printed;
        (agg, raw)
    }

    /// `printa([format,] @a, ...)`
    pub fn printa(
        &mut self,
        format: Option<&str>,
        indices: &[usize],
        maps: &[Map],
        sort: &SortOptions,
    ) -> String {
        let aggs: Vec<Aggregation> = indices.iter().map(|&i| self.snapshot(i, maps).0).collect();
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
    pub fn trunc(&self, i: usize, n: Option<i64>, maps: &[Map]) {
        let (mut agg, raw) = self.snapshot(i, maps);
        agg.trunc(n.unwrap_or(0));
        let kept: Vec<&Vec<Value>> = agg.rows().iter().map(|r| &r.key).collect();
        let map = &maps[self.descs[i].map.0];
        for (key, bytes) in &raw {
            if !kept.contains(&key) {
                let _ = map.delete(bytes);
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
    pub fn render_exit(&self, maps: &[Map], sort: &SortOptions) -> String {
        let aggs: Vec<Aggregation> = (0..self.descs.len())
            .map(|i| self.snapshot(i, maps).0)
            .collect();
        aggregate::render_exit(&aggs, sort)
    }
}

//! The loaded aggregation maps as the consumer reads and changes them: each aggregation's
//! per-CPU hash map, found through the compiled program, as key and per-CPU value bytes.
//! The session reads them through its own map handles; the Prometheus endpoint's thread
//! through duplicates it owns (`AggMaps::duplicated`). A key deleted where aggregations
//! share the `aggsize` space gives its place back ([`Compiled::agg_freed`]).

use std::borrow::Borrow;

use dtrace_backend::program::Compiled;
use dtrace_consumer::{AggregationMaps, EntryVisitor};
use dtrace_runtime::{Map, Update};

/// The aggregation maps of a compiled program, numbered as its aggregations, the number
/// of slots of each one's values, and the count of keys given back to a shared space.
pub struct AggMaps<M> {
    maps: Vec<M>,
    slots: Vec<usize>,
    freed: Option<M>,
}

impl<'a> AggMaps<&'a Map> {
    /// The aggregations of `compiled`, in the maps `loaded` for it.
    pub fn new(compiled: &Compiled, maps: &'a [Map]) -> AggMaps<&'a Map> {
        AggMaps {
            maps: compiled
                .aggregations
                .iter()
                .map(|a| &maps[a.map.0])
                .collect(),
            slots: compiled.aggregations.iter().map(|a| a.slots).collect(),
            freed: compiled.agg_freed.map(|m| &maps[m.0]),
        }
    }
}

impl AggMaps<Map> {
    /// Handles of their own on the same maps, for another thread.
    pub fn duplicated(compiled: &Compiled, maps: &[Map]) -> Result<AggMaps<Map>, String> {
        let shared = AggMaps::new(compiled, maps);
        let dup = |m: &&Map| m.try_clone().map_err(|e| e.to_string());
        let maps = shared.maps.iter().map(dup).collect::<Result<_, _>>()?;
        let freed = shared.freed.as_ref().map(dup).transpose()?;
        Ok(AggMaps {
            maps,
            slots: shared.slots,
            freed,
        })
    }
}

impl<M: Borrow<Map>> AggMaps<M> {
    fn map(&self, agg: usize) -> &Map {
        self.maps[agg].borrow()
    }

    /// Count `n` more keys given back to the shared space (the consumer is the count's
    /// only writer; the programs read it).
    fn give_back_places(&self, n: u64) {
        let Some(freed) = self.freed.as_ref().filter(|_| n > 0) else {
            return;
        };
        let freed = freed.borrow();
        let zero = 0u32.to_ne_bytes();
        let given = match freed.lookup(&zero) {
            Ok(Some(value)) => value
                .first_chunk::<8>()
                .map_or(0, |b| u64::from_ne_bytes(*b)),
            _ => 0,
        };
        let _ = freed.update(&zero, &(given + n).to_ne_bytes(), Update::Any);
    }
}

impl<M: Borrow<Map>> AggregationMaps for AggMaps<M> {
    fn entries(&self, agg: usize, each: &mut EntryVisitor) {
        let _ = self.map(agg).for_each_percpu(each);
    }

    fn keys(&self, agg: usize) -> Vec<Vec<u8>> {
        self.map(agg).keys().flatten().collect()
    }

    fn clear(&self, agg: usize) {
        let map = self.map(agg);
        let zeros = vec![0u8; self.slots[agg] * 8];
        for key in self.keys(agg) {
            let _ = map.update_percpu(&key, &zeros, Update::Exist);
        }
    }

    fn remove(&self, agg: usize, keys: &[&[u8]]) {
        let map = self.map(agg);
        let deleted = keys
            .iter()
            .filter(|key| matches!(map.delete(key), Ok(true)))
            .count();
        self.give_back_places(deleted as u64);
    }
}

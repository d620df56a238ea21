//! The loaded aggregation maps as the consumer reads and changes them: each aggregation's
//! per-CPU hash map, found through the compiled program, as key and per-CPU value bytes.
//! The session reads them through its own map handles; the Prometheus endpoint's thread
//! through duplicates it owns (`AggMaps::duplicated`).

use std::borrow::Borrow;

use dtrace_backend::program::Compiled;
use dtrace_consumer::{AggregationMaps, EntryVisitor};
use dtrace_runtime::{Map, Update};

/// The aggregation maps of a compiled program, numbered as its aggregations, and the
/// number of slots of each one's values.
pub struct AggMaps<M> {
    maps: Vec<M>,
    slots: Vec<usize>,
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
        }
    }
}

impl AggMaps<Map> {
    /// Handles of their own on the same maps, for another thread.
    pub fn duplicated(compiled: &Compiled, maps: &[Map]) -> Result<AggMaps<Map>, String> {
        let shared = AggMaps::new(compiled, maps);
        let maps = shared
            .maps
            .iter()
            .map(|m| m.try_clone().map_err(|e| e.to_string()))
            .collect::<Result<_, _>>()?;
        Ok(AggMaps {
            maps,
            slots: shared.slots,
        })
    }
}

impl<M: Borrow<Map>> AggMaps<M> {
    fn map(&self, agg: usize) -> &Map {
        self.maps[agg].borrow()
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

    fn remove(&self, agg: usize, key: &[u8]) {
        let _ = self.map(agg).delete(key);
    }
}

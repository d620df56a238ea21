//! The loaded aggregation maps as the consumer reads and changes them: each aggregation's
//! per-CPU hash map, found through the compiled program, as key and per-CPU value bytes.

use dtrace_backend::program::Compiled;
use dtrace_consumer::AggregationMaps;
use dtrace_runtime::{Map, Update};

/// The aggregations of `compiled`, in the maps `loaded` for it.
pub struct AggMaps<'a> {
    compiled: &'a Compiled,
    maps: &'a [Map],
}

impl<'a> AggMaps<'a> {
    pub fn new(compiled: &'a Compiled, maps: &'a [Map]) -> AggMaps<'a> {
        AggMaps { compiled, maps }
    }

    fn map(&self, agg: usize) -> &Map {
        &self.maps[self.compiled.aggregations[agg].map.0]
    }
}

impl AggregationMaps for AggMaps<'_> {
    fn entries(&self, agg: usize) -> Vec<(Vec<u8>, Vec<Vec<u8>>)> {
        let map = self.map(agg);
        map.keys()
            .flatten()
            .filter_map(|key| {
                let percpu = map.lookup_percpu(&key).ok().flatten()?;
                Some((key, percpu))
            })
            .collect()
    }

    fn keys(&self, agg: usize) -> Vec<Vec<u8>> {
        self.map(agg).keys().flatten().collect()
    }

    fn clear(&self, agg: usize) {
        let map = self.map(agg);
        let zeros = vec![0u8; self.compiled.aggregations[agg].slots * 8];
        for key in self.keys(agg) {
            let _ = map.update_percpu(&key, &zeros, Update::Exist);
        }
    }

    fn remove(&self, agg: usize, key: &[u8]) {
        let _ = self.map(agg).delete(key);
    }
}

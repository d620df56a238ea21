//! `aggrate`: while tracing, the actions that read aggregations (`printa()`, and `clear()`
//! and `trunc()`, which change what it shows) see them as copied from the kernel's maps at
//! most once every `aggrate`, as DTrace's consumer does; so a `printa()` between two
//! copies shows the older counts. The first copy is taken when the first records come
//! after BEGIN's; after tracing, the aggregations are read afresh.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use dtrace_consumer::{AggregationMaps, EntryVisitor};

/// One aggregation's entries: each key's bytes and its value's bytes on each CPU.
type Entries = Vec<(Vec<u8>, Vec<Vec<u8>>)>;

/// A copy of the entries of aggregation `agg` of `maps`.
fn copy(maps: &impl AggregationMaps, agg: usize) -> Entries {
    let mut entries = Entries::new();
    maps.entries(agg, &mut |key, percpu| {
        entries.push((key.to_vec(), percpu.iter().map(|v| v.to_vec()).collect()));
    });
    entries
}

/// The copy of every aggregation and when it was taken.
#[derive(Default)]
pub struct AggSnapshot {
    taken: Option<Instant>,
    entries: RefCell<Vec<Entries>>,
}

impl AggSnapshot {
    /// Copy the `count` aggregations of `live` when `every` has passed since the last
    /// copy was due; the first copy only once `records` came.
    pub fn refresh(
        &mut self,
        live: &impl AggregationMaps,
        count: usize,
        every: Duration,
        records: bool,
    ) {
        // As DTrace's, the time of a copy advances by `every` from the first, so reads
        // further apart than `every` each take a copy.
        let taken = match self.taken {
            Some(taken) if taken.elapsed() >= every => taken + every,
            Some(_) => return,
            None if records => Instant::now(),
            None => return,
        };
        *self.entries.get_mut() = (0..count).map(|agg| copy(live, agg)).collect();
        self.taken = Some(taken);
    }

    /// The copy, read as aggregation maps; what changes them changes `live` too.
    pub fn over<'m, L: AggregationMaps>(&'m self, live: &'m L) -> Snapshot<'m, L> {
        Snapshot { snap: self, live }
    }
}

/// A copy of the aggregations, over the live maps that `clear()` and `trunc()` change.
pub struct Snapshot<'m, L> {
    snap: &'m AggSnapshot,
    live: &'m L,
}

impl<L: AggregationMaps> AggregationMaps for Snapshot<'_, L> {
    fn entries(&self, agg: usize, each: &mut EntryVisitor) {
        for (key, percpu) in self.snap.entries.borrow().get(agg).into_iter().flatten() {
            let values: Vec<&[u8]> = percpu.iter().map(Vec::as_slice).collect();
            each(key, &values);
        }
    }

    fn keys(&self, agg: usize) -> Vec<Vec<u8>> {
        let entries = self.snap.entries.borrow();
        let keys = entries.get(agg).into_iter().flatten();
        keys.map(|(key, _)| key.clone()).collect()
    }

    fn clear(&self, agg: usize) {
        self.live.clear(agg);
        if let Some(entries) = self.snap.entries.borrow_mut().get_mut(agg) {
            let values = entries.iter_mut().flat_map(|(_, percpu)| percpu);
            values.for_each(|v| v.fill(0));
        }
    }

    fn remove(&self, agg: usize, keys: &[&[u8]]) {
        self.live.remove(agg, keys);
        let gone: std::collections::HashSet<&[u8]> = keys.iter().copied().collect();
        if let Some(entries) = self.snap.entries.borrow_mut().get_mut(agg) {
            entries.retain(|(k, _)| !gone.contains(k.as_slice()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Maps of one aggregation whose one key counts the reads of its entries.
    #[derive(Default)]
    struct Counting(RefCell<u8>);

    impl AggregationMaps for Counting {
        fn entries(&self, _: usize, each: &mut EntryVisitor) {
            *self.0.borrow_mut() += 1;
            each(&[7], &[&[*self.0.borrow()]]);
        }
        fn keys(&self, _: usize) -> Vec<Vec<u8>> {
            vec![vec![7]]
        }
        fn clear(&self, _: usize) {}
        fn remove(&self, _: usize, _: &[&[u8]]) {}
    }

    #[test]
    fn copies_are_taken_at_most_every_aggrate() {
        let live = Counting::default();
        let mut snap = AggSnapshot::default();
        snap.refresh(&live, 1, Duration::ZERO, false);
        assert!(copy(&snap.over(&live), 0).is_empty());
        snap.refresh(&live, 1, Duration::from_secs(60), true);
        snap.refresh(&live, 1, Duration::from_secs(60), true);
        assert_eq!(copy(&snap.over(&live), 0)[0].1, vec![vec![1]]);
        snap.refresh(&live, 1, Duration::ZERO, false);
        assert_eq!(copy(&snap.over(&live), 0)[0].1, vec![vec![2]]);
        snap.over(&live).clear(0);
        assert_eq!(copy(&snap.over(&live), 0)[0].1, vec![vec![0]]);
        snap.over(&live).remove(0, &[&[7]]);
        assert!(snap.over(&live).keys(0).is_empty());
    }
}

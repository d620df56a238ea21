//! Speculative records, kept aside until their speculation is committed (then printed in
//! the order they were recorded) or discarded (then dropped).
//!
//! The kernel side frees a speculation's id only once it is told: a speculation that was
//! committed or discarded is *settled* once as many of its records were read as the
//! kernel counted written ([`Speculations::settled`] says how many were read; the side that
//! owns the kernel objects compares, frees the id and calls [`Speculations::forget`]).
//! Records still on their way when the commit or discard is read are printed or dropped as
//! they arrive.

use std::collections::HashMap;

/// What to do with a speculative record.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Kept {
    /// Kept aside (or dropped: over `specsize`, or its speculation was discarded).
    Aside,
    /// Its speculation was committed already: print it now.
    PrintNow,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Commit,
    Discard,
}

#[derive(Default)]
struct Speculation {
    records: Vec<Vec<u8>>,
    /// Bytes kept.
    size: u64,
    /// Records read (kept, printed or dropped).
    received: u64,
    verdict: Option<Verdict>,
}

/// Every active speculation's records.
pub(crate) struct Speculations {
    specs: HashMap<u64, Speculation>,
    /// Bytes one speculation may keep (`specsize`).
    pub(crate) specsize: u64,
    /// Records dropped for `specsize`.
    pub(crate) drops: u64,
}

impl Default for Speculations {
    fn default() -> Self {
        Speculations {
            specs: HashMap::new(),
            specsize: 4 << 20,
            drops: 0,
        }
    }
}

impl Speculations {
    /// A record of speculation `id`, `size` bytes as `specsize` counts them.
    pub(crate) fn record(&mut self, id: u64, rec: &[u8], size: u64) -> Kept {
        let spec = self.specs.entry(id).or_default();
        spec.received += 1;
        match spec.verdict {
            Some(Verdict::Commit) => return Kept::PrintNow,
            Some(Verdict::Discard) => return Kept::Aside,
            None => {}
        }
        if spec.size + size > self.specsize {
            self.drops += 1;
        } else {
            spec.size += size;
            spec.records.push(rec.to_vec());
        }
        Kept::Aside
    }

    /// `commit(id)`: the records to print now (none if it was committed or discarded
    /// before).
    pub(crate) fn commit(&mut self, id: u64) -> Vec<Vec<u8>> {
        self.settle(id, Verdict::Commit)
    }

    /// `discard(id)`.
    pub(crate) fn discard(&mut self, id: u64) {
        self.settle(id, Verdict::Discard);
    }

    fn settle(&mut self, id: u64, verdict: Verdict) -> Vec<Vec<u8>> {
        if id == 0 {
            return Vec::new();
        }
        let spec = self.specs.entry(id).or_default();
        if spec.verdict.is_some() {
            return Vec::new();
        }
        spec.verdict = Some(verdict);
        spec.size = 0;
        let records = std::mem::take(&mut spec.records);
        match verdict {
            Verdict::Commit => records,
            Verdict::Discard => Vec::new(),
        }
    }

    /// The speculations committed or discarded, with the number of their records read.
    pub(crate) fn settled(&self) -> Vec<(u32, u64)> {
        let mut out: Vec<(u32, u64)> = self
            .specs
            .iter()
            .filter(|(_, s)| s.verdict.is_some())
            .filter_map(|(&id, s)| Some((u32::try_from(id).ok()?, s.received)))
            .collect();
        out.sort_unstable();
        out
    }

    /// Whether no speculation holds records.
    pub(crate) fn is_empty(&self) -> bool {
        self.specs.is_empty()
    }

    /// The kernel freed `id`: a later record of it belongs to a new speculation.
    pub(crate) fn forget(&mut self, id: u32) {
        self.specs.remove(&u64::from(id));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_until_committed_or_discarded() {
        let mut s = Speculations::default();
        assert_eq!(s.record(1, b"a", 1), Kept::Aside);
        assert_eq!(s.record(1, b"b", 1), Kept::Aside);
        assert_eq!(s.record(2, b"c", 1), Kept::Aside);
        assert_eq!(s.commit(1), vec![b"a".to_vec(), b"b".to_vec()]);
        assert!(s.commit(1).is_empty());
        // A straggler of a committed speculation prints at once.
        assert_eq!(s.record(1, b"d", 1), Kept::PrintNow);
        s.discard(2);
        assert_eq!(s.record(2, b"e", 1), Kept::Aside);
        assert_eq!(s.settled(), vec![(1, 3), (2, 2)]);
        s.forget(1);
        assert_eq!(s.record(1, b"f", 1), Kept::Aside);
        assert_eq!(s.settled(), vec![(2, 2)]);
    }

    #[test]
    fn specsize_bounds_what_is_kept() {
        let mut s = Speculations {
            specsize: 3,
            ..Speculations::default()
        };
        s.record(1, b"ab", 2);
        s.record(1, b"cd", 2);
        s.record(1, b"e", 1);
        assert_eq!(s.drops, 1);
        assert_eq!(s.commit(1), vec![b"ab".to_vec(), b"e".to_vec()]);
        // Committing an id never speculated on settles it all the same.
        assert!(s.commit(5).is_empty());
        assert_eq!(s.settled(), vec![(1, 3), (5, 0)]);
    }
}

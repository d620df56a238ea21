//! Buffer policies (`bufpolicy`): what happens to records as the principal buffer of a
//! CPU fills, counted as DTrace counts `bufsize` ([`counted_size`]: a record's 4-byte
//! enabled probe id, then each datum it shows at its natural alignment; not our record's
//! header or padding).
//!
//! - `switch` (the default): every record is shown as it is read.
//! - `fill`: records are shown until a CPU's buffer is full; the record that does not fit
//!   is dropped and tracing stops as if `exit(0)` had been called (END still runs, and
//!   its records are shown).
//! - `ring`: each CPU keeps only its most recent records that fit; they are shown when
//!   tracing ends, CPU by CPU, in the order they were recorded — or, for a postmortem (the
//!   traced process died of a fatal signal), all CPUs together in the order they were read
//!   from the one BPF ring buffer, which is the order they were recorded in.

use std::collections::{HashMap, VecDeque};

use dtrace_abi::datum::ValueType;
use dtrace_abi::desc::Action;

/// `bufpolicy`'s values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufPolicy {
    #[default]
    Switch,
    Fill,
    Ring,
}

impl BufPolicy {
    /// The policy an option value names.
    pub fn parse(value: &str) -> Option<BufPolicy> {
        match value {
            "switch" => Some(BufPolicy::Switch),
            "fill" => Some(BufPolicy::Fill),
            "ring" => Some(BufPolicy::Ring),
            _ => None,
        }
    }
}

/// What to do with a record now.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Show it.
    Show,
    /// Kept in the ring, shown at the end.
    Kept,
    /// The CPU's buffer is full (`fill`): drop it; tracing stops.
    Full,
}

/// A record a ring keeps, with the bytes it counts and its place in the order of arrival.
type Kept = (Vec<u8>, u64, u64);

/// Per-CPU accounting of the principal buffers.
#[derive(Default)]
pub(crate) struct Buffers {
    pub(crate) policy: BufPolicy,
    pub(crate) bufsize: u64,
    /// Bytes used per CPU (`fill`), and the records kept per CPU (`ring`).
    used: HashMap<u32, u64>,
    /// `ring`: per CPU, the records kept and their total.
    rings: HashMap<u32, (VecDeque<Kept>, u64)>,
    /// `fill`: a buffer filled.
    filled: bool,
    /// `ring`: records admitted so far (the next one's place in the order of arrival).
    arrivals: u64,
}

/// The bytes a record whose `actions` ran counts against `bufsize`, as DTrace lays its
/// records out: the enabled probe id (4 bytes), then each datum aligned to its size (a
/// scalar), to 1 (a string) or to 8 (anything else).
pub(crate) fn counted_size<'a>(actions: impl Iterator<Item = &'a Action>) -> u64 {
    let mut end = 4u64;
    for field in actions.flat_map(Action::data) {
        let size = u64::from(field.ty.size());
        let align = match &field.ty {
            ty if ty.scalar().is_some() => size.max(1),
            ValueType::String { .. } => 1,
            _ => 8,
        };
        end = end.next_multiple_of(align) + size;
    }
    end
}

impl Buffers {
    /// A record read from CPU `cpu`, counting `size` bytes ([`counted_size`]); `end`: a
    /// record of END, which `fill` always shows.
    pub(crate) fn admit(&mut self, cpu: u32, rec: &[u8], size: u64, end: bool) -> Admit {
        match self.policy {
            BufPolicy::Switch => Admit::Show,
            BufPolicy::Fill => {
                if end {
                    return Admit::Show;
                }
                let used = self.used.entry(cpu).or_default();
                if self.filled || *used + size > self.bufsize {
                    self.filled = true;
                    return Admit::Full;
                }
                *used += size;
                Admit::Show
            }
            BufPolicy::Ring => {
                let (ring, bytes) = self.rings.entry(cpu).or_default();
                if size > self.bufsize {
                    return Admit::Kept;
                }
                ring.push_back((rec.to_vec(), size, self.arrivals));
                self.arrivals += 1;
                *bytes += size;
                while *bytes > self.bufsize {
                    if let Some((_, old, _)) = ring.pop_front() {
                        *bytes -= old;
                    }
                }
                Admit::Kept
            }
        }
    }

    /// The records the rings kept, CPU by CPU, each in recorded order (emptied).
    pub(crate) fn take_rings(&mut self) -> Vec<Vec<u8>> {
        let mut cpus: Vec<u32> = self.rings.keys().copied().collect();
        cpus.sort_unstable();
        cpus.into_iter()
            .flat_map(|cpu| self.rings.remove(&cpu).map(|(r, _)| r).unwrap_or_default())
            .map(|(rec, _, _)| rec)
            .collect()
    }

    /// The records the rings kept, every CPU's together in the order they arrived (emptied).
    pub(crate) fn take_rings_in_arrival_order(&mut self) -> Vec<Vec<u8>> {
        let mut kept: Vec<Kept> = self.rings.drain().flat_map(|(_, (r, _))| r).collect();
        kept.sort_unstable_by_key(|&(_, _, arrival)| arrival);
        kept.into_iter().map(|(rec, _, _)| rec).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER_SIZE: u32 = dtrace_abi::record::HEADER_SIZE;

    fn rec(data: usize) -> Vec<u8> {
        vec![0; HEADER_SIZE as usize + data]
    }

    #[test]
    fn records_count_as_dtrace_lays_them_out() {
        use dtrace_abi::desc::{ActionKind, Field};
        let action = |ty: ValueType| Action {
            kind: ActionKind::Trace(Field { offset: 16, ty }),
            presence: None,
        };
        let int = |size: u8| ValueType::Integer {
            size,
            signed: true,
            name: "int".into(),
        };
        // The enabled probe id, then an int: 8; then a 64-bit value, 8-aligned: 16.
        assert_eq!(counted_size([action(int(4))].iter()), 8);
        assert_eq!(counted_size([action(int(8))].iter()), 16);
        assert_eq!(counted_size([action(int(1)), action(int(2))].iter()), 8);
        let s = action(ValueType::String { size: 5 });
        assert_eq!(counted_size([action(int(4)), s].iter()), 13);
    }

    #[test]
    fn fill_stops_at_the_first_record_that_does_not_fit() {
        let mut b = Buffers {
            policy: BufPolicy::Fill,
            bufsize: 64,
            ..Buffers::default()
        };
        for _ in 0..8 {
            assert_eq!(b.admit(0, &rec(8), 8, false), Admit::Show);
        }
        assert_eq!(b.admit(0, &rec(8), 8, false), Admit::Full);
        assert_eq!(b.admit(1, &rec(8), 8, false), Admit::Full);
        assert_eq!(b.admit(0, &rec(8), 8, true), Admit::Show);
    }

    #[test]
    fn ring_keeps_the_latest_that_fit() {
        let mut b = Buffers {
            policy: BufPolicy::Ring,
            bufsize: 50,
            ..Buffers::default()
        };
        for i in 0..10u8 {
            let mut r = rec(8);
            r[HEADER_SIZE as usize] = i;
            b.admit(1, &r, 8, false);
        }
        b.admit(0, &rec(8), 8, false);
        let kept = b.take_rings();
        assert_eq!(kept.len(), 7);
        let firsts: Vec<u8> = kept[1..].iter().map(|r| r[HEADER_SIZE as usize]).collect();
        assert_eq!(firsts, [4, 5, 6, 7, 8, 9]);
    }

    #[test]
    fn a_postmortem_takes_every_cpu_in_arrival_order() {
        let mut b = Buffers {
            policy: BufPolicy::Ring,
            bufsize: 16,
            ..Buffers::default()
        };
        for (i, cpu) in [1, 0, 1, 0, 1].into_iter().enumerate() {
            let mut r = rec(8);
            r[HEADER_SIZE as usize] = i as u8;
            b.admit(cpu, &r, 8, false);
        }
        let kept = b.take_rings_in_arrival_order();
        let firsts: Vec<u8> = kept.iter().map(|r| r[HEADER_SIZE as usize]).collect();
        assert_eq!(firsts, [1, 2, 3, 4]);
        assert!(b.take_rings().is_empty());
    }
}

//! The ring buffer, made while the compiler runs. Creating the default 4 MiB ring buffer
//! map (the kernel allocates and charges its 1,024 pages) and mapping it (the kernel fills
//! in the page tables of its data area, twice) cost more than compiling a small script,
//! and neither needs the other: so once the compiler thread has parsed the program and
//! applied its pragmas, it says what ring the program wants ([`wanted`]), the main thread
//! creates and maps it while compilation goes on, and [`crate::load::load`] takes it when
//! the compiled program wants that size. A program on `BEGIN`, `END` and `ERROR` alone
//! wants none: its ring is sized by what it can send (`crate::buffers::fit_ring`), small
//! and quick to make once compiled. Neither is made larger than the default (a ring made
//! in vain should cost little).

use dtrace_backend::program::{MapKind, MapSpec};
use dtrace_frontend::ast::Item;
use dtrace_probes::Description;
use dtrace_runtime::{Map, RingBuf};

use crate::load::create_map;
use crate::options::Options;

/// The largest ring made early: the default `bufsize`.
const MOST: u32 = 4 << 20;
/// The ring's map name, as code generation names it.
const RING_NAME: &str = "dt_ringbuf";

/// The size of the ring to make early for the parsed program `items`, with `options` (its
/// pragmas applied): none when every clause is on `BEGIN`, `END` or `ERROR` alone. Only a
/// guess, from the descriptions' text: what loading takes is decided by the compiled
/// program.
pub fn wanted(items: &[Vec<Item>], options: &Options) -> Option<u32> {
    let session_probe = |text: &str| {
        Description::parse(text).is_ok_and(|d| {
            matches!(d.provider.as_str(), "" | "dtrace")
                && d.module.is_empty()
                && d.function.is_empty()
                && matches!(d.name.as_str(), "BEGIN" | "END" | "ERROR")
        })
    };
    let one_shot = items.iter().flatten().all(|item| match item {
        Item::Clause(c) => c.probes.iter().all(|p| session_probe(&p.text)),
        _ => true,
    });
    (!one_shot).then(|| crate::buffers::ring_size(options))
}

/// A ring buffer map made before the program that uses it was compiled, and its reader.
pub struct EarlyRing {
    map: Map,
    reader: RingBuf,
    size: u32,
}

impl EarlyRing {
    /// A ring of `size` bytes, if it is at most [`MOST`] and the kernel makes it (if not,
    /// loading makes it and reports why it cannot).
    pub fn make(size: u32) -> Option<EarlyRing> {
        if size > MOST {
            return None;
        }
        let map = create_map(&MapSpec {
            name: RING_NAME.into(),
            kind: MapKind::Ringbuf,
            key_size: 0,
            value_size: 0,
            max_entries: size,
            initial: None,
            entries_per_cpu: 0,
            members: Vec::new(),
        })
        .ok()?;
        let reader = RingBuf::new(&map).ok()?;
        Some(EarlyRing { map, reader, size })
    }

    /// The map and its reader, if `spec` is a ring of its size.
    pub fn take_for(slot: &mut Option<EarlyRing>, spec: &MapSpec) -> Option<(Map, RingBuf)> {
        match slot {
            Some(r)
                if spec.kind == MapKind::Ringbuf
                    && spec.name == RING_NAME
                    && spec.max_entries == r.size =>
            {
                slot.take().map(|r| (r.map, r.reader))
            }
            _ => None,
        }
    }
}

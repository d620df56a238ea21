//! The ring buffer, made while the compiler runs. Creating the default 4 MiB ring buffer
//! map (the kernel allocates and charges its 1,024 pages) and mapping it (the kernel fills
//! in the page tables of its data area, twice) cost about as much as compiling a small
//! script, and neither needs the other: so the main thread creates and maps a ring of the
//! size the command line asks for while the compiler thread works, and
//! [`crate::load::load`] takes it when the compiled program wants that size. A script's
//! `#pragma D option bufsize` may want another; its ring is then made as before, and so is
//! one larger than the default (a ring made in vain should cost little).

use dtrace_backend::program::{MapKind, MapSpec};
use dtrace_runtime::{Map, RingBuf};

use crate::load::create_map;

/// The largest ring made early: the default `bufsize`.
const MOST: u32 = 4 << 20;
/// The ring's map name, as code generation names it.
const RING_NAME: &str = "dt_ringbuf";

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

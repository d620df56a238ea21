//! The aggregation space (`aggsize`), as DTrace 2 sizes it: all aggregations together hold
//! `aggsize / (largest key tuple + largest aggregation data)` keys, counted as DTrace
//! counts them (`crate::space`); a new key past that is an aggregation drop on its CPU.
//!
//! Each aggregation's map holds that many keys, at most [`CodegenOptions::agg_entries`]
//! (the kernel preallocates per-CPU hash maps, and made without preallocation their values
//! come from an atomic per-CPU allocator that fails new keys under churn). A program of one
//! aggregation needs nothing more: its map refuses the key past the space. When several
//! share it and their maps hold more, a counter in the globals map ([`AGGKEYS_OFFSET`]) counts the keys made: a new
//! key takes a place atomically, and fails as a drop when the keys made, less those the
//! consumer deleted (`trunc()`, counted in the [`Compiled::agg_freed`] map that only the
//! consumer writes), fill the space.
//!
//! [`Compiled::agg_freed`]: crate::program::Compiled::agg_freed

use dtrace_ebpf::*;

use super::{CodegenOptions, Gen};
use crate::emit::Label;
use crate::program::{MapId, MapKind, MapSpec, AGGKEYS_OFFSET};
use crate::space::Space;

/// How many keys the aggregations hold, and how they share them.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AggSpace {
    /// Each aggregation map's entries.
    pub map_keys: u32,
    /// When several aggregations share the space and their maps hold more: the keys it
    /// holds and the map of keys the consumer gave back.
    shared: Option<(u32, MapId)>,
}

impl AggSpace {
    /// The space `opts.aggsize` makes for `count` aggregations whose largest entries are
    /// `space`'s; `add` makes the map of keys given back when they share it.
    pub fn new(
        space: &Space,
        opts: &CodegenOptions,
        count: usize,
        add: impl FnOnce(MapSpec) -> MapId,
    ) -> AggSpace {
        let places = space.entries(opts.aggsize, space.aggdata).unwrap_or(0);
        let keys = places.clamp(1, u64::from(opts.agg_entries));
        // Counting is needed only where the maps together hold more than the space.
        let binds = places < count as u64 * keys;
        let shared = (count > 1 && binds).then(|| {
            let freed = add(MapSpec {
                name: "dt_aggfreed".into(),
                kind: MapKind::Array,
                key_size: 4,
                value_size: 8,
                max_entries: 1,
                initial: None,
                entries_per_cpu: 0,
                members: Vec::new(),
            });
            (places.min(i32::MAX as u64) as u32, freed)
        });
        AggSpace {
            map_keys: keys as u32,
            shared,
        }
    }

    /// The map of keys the consumer gave back, when aggregations share the space.
    pub fn freed(&self) -> Option<MapId> {
        self.shared.map(|(_, freed)| freed)
    }
}

impl Gen<'_, '_> {
    /// Take a place for a new aggregation key, or jump to `full` (the count unchanged)
    /// when none is left. Uses r1 and r2.
    pub(crate) fn take_agg_place(&mut self, full: Label) {
        let Some((keys, freed)) = self.c.agg_space.shared else {
            return;
        };
        let taken = self.e.label();
        self.e.ld_map_value(R1, self.c.core.globals, AGGKEYS_OFFSET);
        self.e.emit(Insn::mov64_imm(R2, 1));
        self.e.emit(Insn::atomic_fetch_add(Size::DW, R1, 0, R2));
        self.e.ld_map_value(R1, freed, 0);
        self.e.emit(Insn::ldx(Size::DW, R1, R1, 0));
        self.e.emit(Insn::alu64_reg(BPF_SUB, R2, R1));
        self.e.jmp_imm(BPF_JLT, R2, keys as i32, taken);
        self.give_back_agg_place();
        self.e.goto(full);
        self.e.bind(taken);
    }

    /// After a map update (r0) that was to make a key with a place taken: give the place
    /// back if it failed (the map full, or another CPU made the key first). Uses r1 and r2.
    pub(crate) fn give_back_agg_place_unless_made(&mut self) {
        if self.c.agg_space.shared.is_none() {
            return;
        }
        let made = self.e.label();
        self.e.jmp_imm(BPF_JEQ, R0, 0, made);
        self.give_back_agg_place();
        self.e.bind(made);
    }

    fn give_back_agg_place(&mut self) {
        self.e.ld_map_value(R1, self.c.core.globals, AGGKEYS_OFFSET);
        self.e.emit(Insn::mov64_imm(R2, -1));
        self.e.emit(Insn::atomic_add(Size::DW, R1, 0, R2));
    }
}

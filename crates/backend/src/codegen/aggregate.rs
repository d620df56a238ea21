//! Aggregating functions: `@name[keys] = func(args)` updates u64 slots of the key's entry
//! in a per-CPU hash map. Slot layouts (shared with the consumer, which merges CPUs):
//! count `[n]`, sum `[sum]`, avg `[n, sum]`, min/max `[set, value]`, stddev
//! `[n, sum, sumsq_lo, sumsq_hi]`, quantize 127 power-of-two buckets (63 is zero),
//! lquantize `levels + 2` buckets, llquantize as [`slots::llquantize_bucket`] lays them out,
//! each histogram's buckets followed by the sum of its values.

use dtrace_ebpf::*;
use dtrace_frontend::Result;
use dtrace_typing::ir::{self, AggId, ExprKind};

use super::regs::{self, VReg};
use super::vars::Rodata;
use super::{Compiler, Gen};
use crate::program::{Aggregation, DropKind, Field, KeyStore, MapId, MapKind, MapSpec};
use crate::slots::{self, bucket_count, slot_count, AggFunc, QUANTIZE_ZERO};
use crate::types::Type;

pub use dtrace_typing::cook::MAX_SLOTS;

impl Compiler<'_> {
    /// The map and key layout of every aggregation of the program.
    pub(crate) fn declare_aggregations(&mut self) -> Result<()> {
        for a in &self.prog.aggregations {
            let mut fields = Vec::new();
            let mut stores = Vec::new();
            let mut offset = 0;
            for (i, (t, d)) in a.keys.iter().enumerate() {
                // Keys keep their C type: DTrace prints 1- and 2-byte keys unsigned, in
                // columns of their own width.
                fields.push(Field {
                    offset,
                    ty: t.clone(),
                    datum: None,
                });
                let store = KeyStore::of(t, *d, a.uses.get(i), self.opts.strsize);
                offset += store.size(t, self.opts.strsize);
                stores.push(store);
            }
            let key_size = offset.max(8);
            let slots = slot_count(&a.func);
            let map = {
                self.maps.push(MapSpec {
                    name: format!("dt_agg_{}", a.name),
                    kind: MapKind::PercpuHash,
                    key_size,
                    value_size: (slots * 8) as u32,
                    max_entries: self.agg_space.map_keys,
                    initial: None,
                    entries_per_cpu: 0,
                    members: Vec::new(),
                });
                crate::program::MapId(self.maps.len() - 1)
            };
            self.aggregations.push(Aggregation {
                name: a.name.clone(),
                kind: a.func,
                keys: fields,
                stores,
                key_size,
                slots,
                map,
                shared: None,
            });
        }
        if self.aggregations.len() > DIRECT_AGGREGATIONS {
            self.share_aggregation_maps();
        }
        Ok(())
    }

    /// Put the aggregations' maps into arrays of maps, one array per shape (key and value
    /// size), so that a program naming every aggregation names a few arrays instead.
    fn share_aggregation_maps(&mut self) {
        let mut arrays: Vec<((u32, u32), MapId)> = Vec::new();
        for i in 0..self.aggregations.len() {
            let map = self.aggregations[i].map;
            let shape = (self.maps[map.0].key_size, self.maps[map.0].value_size);
            let outer = match arrays.iter().find(|(s, _)| *s == shape) {
                Some((_, outer)) => *outer,
                None => {
                    self.maps.push(MapSpec {
                        name: format!("dt_aggs_{}", arrays.len()),
                        kind: MapKind::ArrayOfMaps,
                        key_size: 4,
                        value_size: 4,
                        max_entries: 0,
                        initial: None,
                        entries_per_cpu: 0,
                        members: Vec::new(),
                    });
                    let outer = MapId(self.maps.len() - 1);
                    arrays.push((shape, outer));
                    outer
                }
            };
            let spec = &mut self.maps[outer.0];
            spec.members.push(map);
            spec.max_entries = spec.members.len() as u32;
            self.aggregations[i].shared = Some((outer, spec.max_entries - 1));
        }
    }
}

/// Aggregations a program may have before their maps are reached through arrays of maps:
/// a program may name at most 64 maps (the verifier's `MAX_USED_MAPS`), and the ring
/// buffer, scratch, globals, read-only data, drop counters and dynamic variables need
/// their share.
const DIRECT_AGGREGATIONS: usize = 32;

impl Gen<'_, '_> {
    /// `@a[keys] = func(args)`: `args` are the value (and weight), already `int64_t`.
    pub(crate) fn aggregate(
        &mut self,
        id: AggId,
        keys: &[ir::Expr],
        args: &[ir::Expr],
    ) -> Result<()> {
        let agg = self.c.aggregations[id].clone();
        let mut values: Vec<VReg> = Vec::new();
        for a in args {
            values.push(self.expr(a)?.reg);
        }
        let key = self.agg_key(keys, &agg)?;
        self.entry_pointer(&agg, key);
        let done = self.e.label();
        self.e.jmp_imm(BPF_JEQ, R0, 0, done);
        if let Some(&v) = values.first() {
            regs::read_into(&mut self.e, v, R1);
        }
        let weight = values.get(1).copied();
        self.update_slots(&agg.kind, weight);
        self.e.bind(done);
        for v in values.into_iter().rev() {
            self.pop(v);
        }
        Ok(())
    }

    /// Evaluate `keys` into the key of `agg`; returns where it is. Values are evaluated
    /// first, in order; then the key is filled, stacks straight from `bpf_get_stack` and
    /// `execname` from the task's `comm`. A key of at most [`regs::STACK_KEY_SIZE`] bytes
    /// holding no stack is built in the frame, so that a clause needing no other scratch
    /// claims none; each word is zeroed first unless a value fills it whole.
    fn agg_key(&mut self, keys: &[ir::Expr], agg: &Aggregation) -> Result<KeyAt> {
        let mut vals = Vec::new();
        for (k, store) in keys.iter().zip(&agg.stores) {
            vals.push(match &k.kind {
                ExprKind::Datum(_, None) => None,
                _ if super::keys::written_in_place(k, store) => None,
                ExprKind::Datum(_, Some(pc)) => Some(self.expr(pc)?),
                _ => Some(self.key_value(k, store)?),
            });
        }
        let size = agg.key_size.next_multiple_of(8);
        let key = match agg.stores.iter().any(|s| matches!(s, KeyStore::Datum(_))) {
            false if size <= regs::STACK_KEY_SIZE => KeyAt::Stack,
            _ => KeyAt::Scratch(self.scratch(agg.key_size)),
        };
        // The words the values fill whole: a scalar's, and execname's two.
        let mut filled = Vec::new();
        for ((v, store), field) in vals.iter().zip(&agg.stores).zip(&agg.keys) {
            match (store, v) {
                (KeyStore::String(_), None) => filled.extend([field.offset, field.offset + 8]),
                (KeyStore::Datum(_) | KeyStore::String(_), _) => {}
                (KeyStore::Value, Some(_))
                    if matches!(field.ty, Type::Struct(_) | Type::Array(..)) => {}
                _ => filled.push(field.offset),
            }
        }
        for word in (0..size).step_by(8).filter(|w| !filled.contains(w)) {
            let (base, at) = key.at(word);
            self.e.emit(Insn::st(Size::DW, base, at, 0));
        }
        for ((v, store), field) in vals.iter().zip(&agg.stores).zip(&agg.keys) {
            let off = field.offset;
            let (base, at) = key.at(off);
            match (store, v, key) {
                (KeyStore::Datum(d), None, KeyAt::Scratch(key)) => self.emit_stack(key + off, *d),
                (KeyStore::Datum(d), Some(v), KeyAt::Scratch(key)) => {
                    self.store_symbol(v, *d, key + off)
                }
                (KeyStore::Datum(_), _, KeyAt::Stack) => unreachable!("stacks are kept in scratch"),
                (KeyStore::String(bound), Some(v), _) => {
                    self.fault_if_null(v);
                    self.copy_key_bytes(base, at, *bound, v, helpers::PROBE_READ_KERNEL_STR);
                }
                (KeyStore::Value, Some(v), _)
                    if matches!(field.ty, Type::Struct(_) | Type::Array(..)) =>
                {
                    let size = super::vars::storage_size(&field.ty, self.strsize());
                    self.copy_key_bytes(base, at, size, v, helpers::PROBE_READ_KERNEL);
                }
                (_, Some(v), _) => {
                    let r = regs::read(&mut self.e, v.reg, R1);
                    super::expr::normalize(&mut self.e, r, &field.ty);
                    self.e.emit(Insn::stx(Size::DW, base, at, r));
                }
                (KeyStore::String(_), None, _) => self.write_in_place(base, at),
                (_, None, _) => {}
            }
        }
        for v in vals.iter().rev().flatten() {
            self.pop(v.reg);
        }
        Ok(key)
    }

    /// Copy `size` bytes of the value `v` refers to into the key at `base + off` with
    /// `helper` (`bpf_probe_read_kernel` or its string form).
    fn copy_key_bytes(&mut self, base: Reg, off: i16, size: u32, v: &super::Val, helper: i32) {
        self.e.emit(Insn::mov64_reg(R1, base));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, off.into()));
        self.e.emit(Insn::mov64_imm(R2, size as i32));
        regs::read_into(&mut self.e, v.reg, R3);
        self.e.emit(Insn::call(helper));
    }

    /// r0 = this CPU's slots for the key at `key`, creating the entry; 0 if full.
    fn entry_pointer(&mut self, agg: &Aggregation, key: KeyAt) {
        let found = self.e.label();
        let full = self.e.label();
        let index_at = self.array_index(agg);
        self.agg_map_into_r1(agg, index_at, full);
        self.key_addr(R2, key);
        self.e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
        self.e.jmp_imm(BPF_JNE, R0, 0, found);
        self.take_agg_place(full);
        self.agg_map_into_r1(agg, index_at, full);
        self.key_addr(R2, key);
        self.e.ld_map_value(R3, self.c.core.rodata, Rodata::ZEROS);
        self.e.emit(Insn::mov64_imm(R4, 1)); // BPF_NOEXIST
        self.e.emit(Insn::call(helpers::MAP_UPDATE_ELEM));
        self.give_back_agg_place_unless_made();
        self.agg_map_into_r1(agg, index_at, full);
        self.key_addr(R2, key);
        self.e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
        self.e.jmp_imm(BPF_JNE, R0, 0, found);
        self.e.bind(full);
        self.count_drop(DropKind::Aggregation);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.bind(found);
    }

    /// `dst` = the address of the key at `key`.
    fn key_addr(&mut self, dst: Reg, key: KeyAt) {
        match key {
            KeyAt::Scratch(off) => self.scratch_addr(dst, off),
            KeyAt::Stack => {
                self.e.emit(Insn::mov64_reg(dst, R10));
                self.e
                    .emit(Insn::alu64_imm(BPF_ADD, dst, regs::STACK_KEY.into()));
            }
        }
    }

    /// For an aggregation reached through an array of maps: the scratch offset where its
    /// index in the array is stored (once, for every lookup of the firing's update).
    fn array_index(&mut self, agg: &Aggregation) -> Option<u32> {
        let (_, index) = agg.shared?;
        let at = self.scratch(8);
        self.e.emit(Insn::st(
            Size::W,
            super::regs::SCRATCH,
            self.small(at),
            index as i32,
        ));
        Some(at)
    }

    /// r1 = the map of `agg`: named directly, or looked up in its array of maps with the
    /// index stored at scratch `index_at` (jumping to `missing` should the lookup fail,
    /// which it cannot once the session filled the array).
    fn agg_map_into_r1(
        &mut self,
        agg: &Aggregation,
        index_at: Option<u32>,
        missing: crate::emit::Label,
    ) {
        let (Some((array, _)), Some(at)) = (agg.shared, index_at) else {
            self.e.ld_map(R1, agg.map);
            return;
        };
        self.e.ld_map(R1, array);
        self.scratch_addr(R2, at);
        self.e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
        self.e.jmp_imm(BPF_JEQ, R0, 0, missing);
        self.e.emit(Insn::mov64_reg(R1, R0));
    }

    /// With r0 = slots and r1 = value (and `weight` the increment), apply the function.
    /// Updates are atomic: a program that interrupts this one on the same CPU (a perf-event
    /// program, or another task's after a preemption) may update the same entry.
    fn update_slots(&mut self, kind: &AggFunc, weight: Option<VReg>) {
        let e = &mut self.e;
        let add_slot = |e: &mut crate::emit::Emitter, slot: i16, src: Reg| {
            e.emit(Insn::atomic_add(Size::DW, R0, slot * 8, src));
        };
        match kind {
            AggFunc::Count => {
                e.emit(Insn::mov64_imm(R1, 1));
                add_slot(e, 0, R1);
            }
            AggFunc::Sum => add_slot(e, 0, R1),
            AggFunc::Avg => {
                e.emit(Insn::mov64_imm(R2, 1));
                add_slot(e, 0, R2);
                add_slot(e, 1, R1);
            }
            AggFunc::Min | AggFunc::Max => min_max(e, matches!(kind, AggFunc::Min)),
            AggFunc::Stddev => {
                e.emit(Insn::mov64_imm(R2, 1));
                add_slot(e, 0, R2);
                add_slot(e, 1, R1);
                square_128(e);
                // (r4:r5) = value²; add to slots 2 (low) and 3 (high) with carry: the
                // carry comes from the low word's old value, fetched by the same atomic add.
                e.emit(Insn::mov64_reg(R2, R4));
                e.emit(Insn::atomic_fetch_add(Size::DW, R0, 16, R2));
                e.emit(Insn::mov64_reg(R3, R2));
                e.emit(Insn::alu64_reg(BPF_ADD, R3, R4));
                e.emit(Insn::jmp_reg(BPF_JGE, R3, R2, 1));
                e.emit(Insn::alu64_imm(BPF_ADD, R5, 1));
                add_slot(e, 3, R5);
            }
            AggFunc::Quantize | AggFunc::Lquantize { .. } | AggFunc::Llquantize { .. } => {
                bucket_index(e, kind);
                // The sum of the values, each times its weight, past the buckets.
                let sum = match weight {
                    Some(w) => {
                        regs::read_into(e, w, R3);
                        e.emit(Insn::alu64_reg(BPF_MUL, R3, R1));
                        R3
                    }
                    None => R1,
                };
                // At most MAX_SLOTS slots: the offset is below 32 KiB.
                let sum_at = 8 * bucket_count(kind) as i16;
                e.emit(Insn::atomic_add(Size::DW, R0, sum_at, sum));
                // r2 = bucket index, bounded; add the weight to that slot.
                let max = bucket_count(kind) as i32 - 1;
                e.emit(Insn::jmp_imm(BPF_JSGE, R2, 0, 1));
                e.emit(Insn::mov64_imm(R2, 0));
                e.emit(Insn::jmp_imm(BPF_JSLE, R2, max, 1));
                e.emit(Insn::mov64_imm(R2, max));
                e.emit(Insn::alu64_imm(BPF_LSH, R2, 3));
                e.emit(Insn::alu64_reg(BPF_ADD, R0, R2));
                match weight {
                    Some(w) => regs::read_into(e, w, R1),
                    None => e.emit(Insn::mov64_imm(R1, 1)),
                }
                add_slot(e, 0, R1);
            }
        }
    }
}

/// Where an aggregation key is built.
#[derive(Clone, Copy)]
enum KeyAt {
    /// In scratch, at this offset.
    Scratch(u32),
    /// In the frame, at [`regs::STACK_KEY`].
    Stack,
}

impl KeyAt {
    /// The base register and displacement of the key's byte `off`. (Scratch offsets
    /// past 32 KiB are refused when the program is finished.)
    fn at(self, off: u32) -> (Reg, i16) {
        match self {
            KeyAt::Scratch(key) => (regs::SCRATCH, (key + off) as i16),
            KeyAt::Stack => (R10, regs::STACK_KEY + off as i16),
        }
    }
}

/// Tries at replacing a min/max value that other firings keep changing meanwhile.
const MIN_MAX_TRIES: usize = 4;

/// With r0 = the `[set, value]` slots of min (or max) and r1 = the new value: replace the
/// value when it is unset or r1 is lower (higher), by compare-and-exchange, so a value
/// stored meanwhile by an interrupting firing is compared again rather than overwritten.
fn min_max(e: &mut crate::emit::Emitter, min: bool) {
    let done = e.label();
    let won = e.label();
    e.emit(Insn::mov64_reg(R4, R0));
    for _ in 0..MIN_MAX_TRIES {
        let exchange = e.label();
        e.emit(Insn::ldx(Size::DW, R2, R4, 0));
        e.emit(Insn::ldx(Size::DW, R3, R4, 8));
        e.jmp_imm(BPF_JEQ, R2, 0, exchange);
        let keep = if min { BPF_JSGE } else { BPF_JSLE };
        e.jmp_reg(keep, R1, R3, done);
        e.bind(exchange);
        e.emit(Insn::mov64_reg(R0, R3));
        e.emit(Insn::atomic_cmpxchg(Size::DW, R4, 8, R1));
        e.jmp_reg(BPF_JEQ, R0, R3, won);
    }
    e.goto(done);
    e.bind(won);
    e.emit(Insn::st(Size::DW, R4, 0, 1));
    e.bind(done);
}

/// (r4 low, r5 high) = r1 * r1 as a 128-bit unsigned square of |r1|. Clobbers r2, r3.
fn square_128(e: &mut crate::emit::Emitter) {
    // a = |v| = hi * 2^32 + lo; a² = hi²·2^64 + 2·hi·lo·2^32 + lo².
    e.emit(Insn::mov64_reg(R2, R1));
    e.emit(Insn::jmp_imm(BPF_JSGE, R2, 0, 1));
    e.emit(Insn::alu64_imm(BPF_NEG, R2, 0));
    e.emit(Insn::mov64_reg(R3, R2));
    e.emit(Insn::alu64_imm(BPF_RSH, R3, 32)); // r3 = hi
    e.emit(Insn::alu32_reg(BPF_MOV, R2, R2)); // r2 = lo
    e.emit(Insn::mov64_reg(R4, R2));
    e.emit(Insn::alu64_reg(BPF_MUL, R4, R2)); // r4 = lo²
    e.emit(Insn::mov64_reg(R5, R3));
    e.emit(Insn::alu64_reg(BPF_MUL, R5, R3)); // r5 = hi²
    e.emit(Insn::alu64_reg(BPF_MUL, R2, R3)); // r2 = mid = hi·lo
                                              // Add mid·2^33: low += mid << 33 (with carry), high += mid >> 31.
    e.emit(Insn::mov64_reg(R3, R2));
    e.emit(Insn::alu64_imm(BPF_RSH, R3, 31));
    e.emit(Insn::alu64_reg(BPF_ADD, R5, R3));
    e.emit(Insn::alu64_imm(BPF_LSH, R2, 33));
    e.emit(Insn::alu64_reg(BPF_ADD, R4, R2));
    e.emit(Insn::jmp_reg(BPF_JGE, R4, R2, 1));
    e.emit(Insn::alu64_imm(BPF_ADD, R5, 1));
}

/// r2 = floor(log2(r3)) for r3 > 0. Clobbers r3, r4.
fn log2(e: &mut crate::emit::Emitter) {
    e.emit(Insn::mov64_imm(R2, 0));
    for shift in [32, 16, 8, 4, 2, 1] {
        e.emit(Insn::mov64_reg(R4, R3));
        e.emit(Insn::alu64_imm(BPF_RSH, R4, shift));
        e.emit(Insn::jmp_imm(BPF_JEQ, R4, 0, 2));
        e.emit(Insn::mov64_reg(R3, R4));
        e.emit(Insn::alu64_imm(BPF_ADD, R2, shift));
    }
}

/// r2 = the bucket of value r1 for a quantizing function. Clobbers r3, r4, r5.
fn bucket_index(e: &mut crate::emit::Emitter, kind: &AggFunc) {
    let done = e.label();
    match kind {
        AggFunc::Quantize => {
            let negative = e.label();
            e.emit(Insn::mov64_imm(R2, QUANTIZE_ZERO as i32));
            e.jmp_imm(BPF_JEQ, R1, 0, done);
            e.jmp_imm(BPF_JSLT, R1, 0, negative);
            e.emit(Insn::mov64_reg(R3, R1));
            log2(e);
            e.emit(Insn::alu64_imm(BPF_ADD, R2, QUANTIZE_ZERO as i32 + 1));
            e.goto(done);
            e.bind(negative);
            e.emit(Insn::mov64_reg(R3, R1));
            e.emit(Insn::alu64_imm(BPF_NEG, R3, 0));
            log2(e);
            e.emit(Insn::mov64_reg(R3, R2));
            e.emit(Insn::mov64_imm(R2, QUANTIZE_ZERO as i32 - 1));
            e.emit(Insn::alu64_reg(BPF_SUB, R2, R3));
        }
        AggFunc::Lquantize { base, limit, step } => {
            let levels = (limit - base) / step;
            e.emit(Insn::mov64_imm(R2, 0));
            e.mov_const(R3, *base as u64);
            e.jmp_reg(BPF_JSLT, R1, R3, done);
            e.emit(Insn::mov64_imm(R2, levels as i32 + 1));
            e.mov_const(R3, *limit as u64);
            e.jmp_reg(BPF_JSGE, R1, R3, done);
            e.emit(Insn::mov64_reg(R2, R1));
            e.mov_const(R3, *base as u64);
            e.emit(Insn::alu64_reg(BPF_SUB, R2, R3));
            e.mov_const(R3, *step as u64);
            e.emit(Insn::alu64_reg(BPF_DIV, R2, R3));
            e.emit(Insn::alu64_imm(BPF_ADD, R2, 1));
        }
        AggFunc::Llquantize {
            factor,
            low,
            high,
            nsteps,
        } => {
            let bucket = |v| slots::llquantize_bucket(v, *factor, *low, *high, *nsteps);
            let thresholds = thresholds(bucket, bucket_count(kind));
            search(e, &thresholds, 0, thresholds.len(), bucket(i64::MIN), done);
        }
        _ => {}
    }
    e.bind(done);
}

/// For a monotonic bucket function, the least value of each bucket after the first that
/// any value reaches, with its bucket index, in increasing order.
fn thresholds(bucket: impl Fn(i64) -> usize, buckets: usize) -> Vec<(i64, usize)> {
    let mut out = Vec::new();
    for b in bucket(i64::MIN) + 1..buckets {
        if bucket(i64::MAX) < b {
            break;
        }
        // Least v with bucket(v) >= b.
        let (mut lo, mut hi) = (i64::MIN as i128, i64::MAX as i128);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if bucket(mid as i64) >= b {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let v = lo as i64;
        if bucket(v) == b && out.last().is_none_or(|&(last, _)| last < v) {
            out.push((v, b));
        }
    }
    out
}

/// r2 = the bucket of r1 by binary search over `t[lo..hi]`, given that r1 is below
/// `t[hi]` and at or above `t[lo - 1]` (whose bucket is `below`).
fn search(
    e: &mut crate::emit::Emitter,
    t: &[(i64, usize)],
    lo: usize,
    hi: usize,
    below: usize,
    done: crate::emit::Label,
) {
    if lo == hi {
        e.emit(Insn::mov64_imm(R2, below as i32));
        e.goto(done);
        return;
    }
    let mid = lo + (hi - lo) / 2;
    let upper = e.label();
    e.mov_const(R3, t[mid].0 as u64);
    e.jmp_reg(BPF_JSGE, R1, R3, upper);
    search(e, t, lo, mid, below, done);
    e.bind(upper);
    search(e, t, mid + 1, hi, t[mid].1, done);
}

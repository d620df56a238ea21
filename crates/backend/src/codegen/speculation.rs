//! Speculations: `speculation()`, `speculate()`, `commit()` and `discard()`.
//!
//! Active speculations are the entries of the [`Compiled::specs`] hash map, keyed by id
//! (1 to `nspec`), each a [`SpecState`]. `speculation()` creates the first free id's entry
//! (`BPF_NOEXIST`, so two CPUs never get the same id); none free counts a failed
//! speculation, "busy" when one of the ids it could not take is being committed or
//! discarded. `speculate(id)` abandons the clause unless `id` is active and not draining;
//! otherwise the clause's record carries the id in its first field, and the consumer keeps
//! it aside. Past `specsize` bytes a speculating clause counts a speculative drop and stops.
//! When the record is sent, `written` is counted before `draining` is read again, so the
//! consumer, which frees an id once it has read `written` records of a drained speculation,
//! never frees one a record is still on its way to. `commit(id)` and `discard(id)` mark the
//! entry draining and record the id; an id above `nspec` is an illegal operation.
//!
//! [`Compiled::specs`]: crate::program::Compiled::specs

use dtrace_abi::record;
use dtrace_ebpf::*;
use dtrace_frontend::{Result, Span};
use dtrace_typing::ir::{self, Expr};

use super::regs::{self, KEY_SLOT, SCRATCH};
use super::{Gen, Val};
use crate::program::{DropKind, Fault, MapId, MapKind, MapSpec, SpecState};
use crate::types;

/// `speculation()` looks at ids 1 to this many at most (the search is unrolled).
pub const SEARCH_MAX: u32 = 64;

/// `BPF_NOEXIST`
const NOEXIST: i32 = 1;

/// Whether `stmts` hold a `speculate()`.
pub(crate) fn speculates(stmts: &[ir::Stmt]) -> bool {
    stmts.iter().any(|s| match s {
        ir::Stmt::Action(a) => matches!(a.kind, ir::ActionKind::Speculate(_)),
        ir::Stmt::If {
            then, otherwise, ..
        } => speculates(then) || speculates(otherwise),
        ir::Stmt::Block(b) => speculates(b),
        ir::Stmt::Eval(_) | ir::Stmt::SaveEntry { .. } => false,
    })
}

impl Gen<'_, '_> {
    /// The speculations map, created on first use.
    fn specs_map(&mut self) -> MapId {
        if let Some(map) = self.c.specs {
            return map;
        }
        let map = self.c.add_map(MapSpec {
            name: "dt_specs".into(),
            kind: MapKind::Hash,
            key_size: 4,
            value_size: SpecState::SIZE,
            max_entries: self.searched().max(1),
            initial: None,
            entries_per_cpu: 0,
            members: Vec::new(),
        });
        self.c.specs = Some(map);
        map
    }

    /// How many ids `speculation()` can hand out.
    fn searched(&self) -> u32 {
        self.c.opts.nspec.min(SEARCH_MAX)
    }

    /// `speculation()`: the first free id, or 0 (counting why).
    pub(crate) fn speculation(&mut self, span: Span) -> Result<Val> {
        let map = self.specs_map();
        // Scratch: the key (u32) at `key`, whether an id was busy (u32) after it, a zero
        // state after them.
        let key = self.scratch(8 + SpecState::SIZE);
        let was_busy = key + 4;
        let zero = key + 8;
        for off in (0..SpecState::SIZE).step_by(8) {
            self.e
                .emit(Insn::st(Size::DW, SCRATCH, self.small(zero + off), 0));
        }
        self.e
            .emit(Insn::st(Size::W, SCRATCH, self.small(was_busy), 0));
        let found = self.e.label();
        let busy = self.e.label();
        let done = self.e.label();
        for id in 1..=self.searched() {
            let next = self.e.label();
            self.e
                .emit(Insn::st(Size::W, SCRATCH, self.small(key), id as i32));
            self.e.ld_map(R1, map);
            self.scratch_addr(R2, key);
            self.scratch_addr(R3, zero);
            self.e.emit(Insn::mov64_imm(R4, NOEXIST));
            self.e.emit(Insn::call(helpers::MAP_UPDATE_ELEM));
            self.e.jmp_imm(BPF_JEQ, R0, 0, found);
            self.e.ld_map(R1, map);
            self.scratch_addr(R2, key);
            self.e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
            self.e.jmp_imm(BPF_JEQ, R0, 0, next);
            // A draining id is busy: the search goes on, as Oracle's does.
            self.e
                .emit(Insn::ldx(Size::DW, R1, R0, SpecState::DRAINING));
            self.e.jmp_imm(BPF_JEQ, R1, 0, next);
            self.e
                .emit(Insn::st(Size::W, SCRATCH, self.small(was_busy), 1));
            self.e.bind(next);
        }
        self.e
            .emit(Insn::ldx(Size::W, R1, SCRATCH, self.small(was_busy)));
        self.e.jmp_imm(BPF_JNE, R1, 0, busy);
        self.count_drop(DropKind::SpecUnavail);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.goto(done);
        self.e.bind(busy);
        self.count_drop(DropKind::SpecBusy);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.goto(done);
        self.e.bind(found);
        self.e
            .emit(Insn::ldx(Size::W, R0, SCRATCH, self.small(key)));
        self.e.bind(done);
        let v = self.push(span)?;
        regs::write(&mut self.e, v, R0);
        Ok(Val {
            reg: v,
            ty: types::INT,
        })
    }

    /// `r0` = the entry of the speculation whose id is at `KEY_SLOT` (u32), or 0.
    fn lookup_spec(&mut self, map: MapId) {
        self.e.ld_map(R1, map);
        self.e.emit(Insn::mov64_reg(R2, R10));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R2, KEY_SLOT as i32));
        self.e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
    }

    /// `KEY_SLOT` = `id` as a map key, or to `inactive` if it cannot be one (0, negative,
    /// above `u32`).
    fn spec_key(&mut self, id: Reg, inactive: crate::emit::Label) {
        self.e.jmp_imm(BPF_JEQ, id, 0, inactive);
        self.e.mov_const(R2, u32::MAX as u64);
        self.e.jmp_reg(BPF_JGT, id, R2, inactive);
        self.e.emit(Insn::stx(Size::W, R10, KEY_SLOT, id));
    }

    /// `speculate(id)` into the record's speculation field at `field`: the clause goes on
    /// only if `id` is active and not draining.
    pub(crate) fn speculate(&mut self, id: &Expr, field: u32) -> Result<()> {
        let map = self.specs_map();
        let end = self.clause_state().end;
        let v = self.expr(id)?;
        regs::read_into(&mut self.e, v.reg, R1);
        self.pop(v.reg);
        self.e
            .emit(Insn::stx(Size::DW, SCRATCH, self.small(field), R1));
        self.spec_key(R1, end);
        self.lookup_spec(map);
        self.e.jmp_imm(BPF_JEQ, R0, 0, end);
        self.e
            .emit(Insn::ldx(Size::DW, R1, R0, SpecState::DRAINING));
        self.e.jmp_imm(BPF_JNE, R1, 0, end);
        Ok(())
    }

    /// After a data-recording action of a speculating clause whose record is now `len`
    /// bytes: past `specsize`, count a speculative drop and end the clause.
    pub(crate) fn spec_size_check(&mut self, len: u32) {
        let Some(field) = self.clause_state().spec_field else {
            return;
        };
        if u64::from(len - record::SPEC_ID_SIZE) <= self.c.opts.specsize {
            return;
        }
        let ok = self.e.label();
        let end = self.clause_state().end;
        self.e
            .emit(Insn::ldx(Size::DW, R1, SCRATCH, self.small(field)));
        self.e.jmp_imm(BPF_JEQ, R1, 0, ok);
        self.count_drop(DropKind::Speculative);
        self.e.goto(end);
        self.e.bind(ok);
    }

    /// `commit(id)` (`discard` the same): record the id at `field`, mark the speculation
    /// draining; an id above `nspec` faults.
    pub(crate) fn commit(&mut self, id: &Expr, field: u32) -> Result<()> {
        let map = self.specs_map();
        let v = self.expr(id)?;
        regs::read_into(&mut self.e, v.reg, R1);
        self.pop(v.reg);
        self.e
            .emit(Insn::stx(Size::DW, SCRATCH, self.small(field), R1));
        let valid = self.e.label();
        let done = self.e.label();
        self.e.mov_const(R2, u64::from(self.searched()));
        self.e.jmp_reg(BPF_JLE, R1, R2, valid);
        self.fault(Fault::IllegalOp, None);
        self.e.bind(valid);
        self.spec_key(R1, done);
        self.lookup_spec(map);
        self.e.jmp_imm(BPF_JEQ, R0, 0, done);
        self.e.emit(Insn::st(Size::DW, R0, SpecState::DRAINING, 1));
        self.e.bind(done);
        Ok(())
    }

    /// Send the record of a speculating clause (`len` bytes, speculation id at `field`):
    /// a record of no speculation goes out as any; one of an active speculation counts
    /// `written` first and goes out unless the speculation is draining by then.
    pub(crate) fn output_speculative(&mut self, len: u32, field: u32) {
        let map = self.specs_map();
        let (speculative, draining, unwritten, done) = (
            self.e.label(),
            self.e.label(),
            self.e.label(),
            self.e.label(),
        );
        self.e
            .emit(Insn::ldx(Size::DW, R1, SCRATCH, self.small(field)));
        self.e.jmp_imm(BPF_JNE, R1, 0, speculative);
        self.output_counted(len);
        self.e.goto(done);
        self.e.bind(speculative);
        self.e.emit(Insn::stx(Size::W, R10, KEY_SLOT, R1));
        self.lookup_spec(map);
        self.e.jmp_imm(BPF_JEQ, R0, 0, done);
        // No virtual register is live at the clause's end: r6 keeps the entry.
        self.e.emit(Insn::mov64_reg(R6, R0));
        self.add_written(1);
        self.e
            .emit(Insn::ldx(Size::DW, R1, R6, SpecState::DRAINING));
        self.e.jmp_imm(BPF_JNE, R1, 0, draining);
        self.ringbuf_output(len);
        self.e.jmp_imm(BPF_JEQ, R0, 0, done);
        self.count_drop(DropKind::Record);
        self.e.goto(unwritten);
        self.e.bind(draining);
        self.count_drop(DropKind::Speculative);
        // Not sent after all: the consumer must not wait for it.
        self.e.bind(unwritten);
        self.add_written(-1);
        self.e.bind(done);
    }

    /// Atomically add `delta` to `written` of the speculation entry in r6.
    fn add_written(&mut self, delta: i32) {
        self.e.emit(Insn::mov64_imm(R1, delta));
        self.e
            .emit(Insn::atomic_add(Size::DW, R6, SpecState::WRITTEN, R1));
    }
}

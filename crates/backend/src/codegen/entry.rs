//! `entry->` in eBPF: the state a function's entry saves for its return.
//!
//! One LRU hash map (`dt_entry`) holds, for each (thread, stack pointer at entry), the
//! [`EntryField`]s of the call in flight: `timestamp`, `vtimestamp` and `arg0..arg9` as u64
//! slots. The hidden clause on the entry probes writes it ([`ir::Stmt::SaveEntry`]); a
//! return clause reading `entry->` looks its key up before its predicate and copies the
//! state into scratch, where `entry->NAME` reads it, or skips the clause when there is
//! none. A call at the same depth of the same thread overwrites its predecessor's state,
//! and an LRU map cannot be filled by calls that never return (`longjmp`, `exit`).

use dtrace_ebpf::*;
use dtrace_frontend::{Result, Span};
use dtrace_typing::ir::{EntryField, Expr};

use super::regs::{self, SCRATCH};
use super::{Compiler, Gen, Val};
use crate::emit::Label;
use crate::program::{MapId, MapKind, MapSpec};

/// Bytes of the saved state.
const STATE_SIZE: u32 = EntryField::COUNT * 8;
/// Bytes of a key: the thread (`pid_tgid`) and the stack pointer at entry.
const KEY_SIZE: u32 = 16;

impl Compiler<'_> {
    /// The map of saved entry states, created on first use.
    fn entry_map(&mut self) -> MapId {
        if let Some(map) = self.entry {
            return map;
        }
        let map = self.add_map(MapSpec {
            name: "dt_entry".into(),
            kind: MapKind::LruHash,
            key_size: KEY_SIZE,
            value_size: STATE_SIZE,
            max_entries: self.opts.dynvar_entries.max(1024),
            initial: None,
            entries_per_cpu: 0,
            members: Vec::new(),
        });
        self.entry = Some(map);
        map
    }
}

impl Gen<'_, '_> {
    /// Write the key of this thread's call whose stack pointer at entry is `frame` to
    /// scratch at `key`.
    fn entry_key(&mut self, frame: &Expr, key: u32) -> Result<()> {
        let v = self.expr(frame)?;
        let r = regs::read(&mut self.e, v.reg, R1);
        self.e
            .emit(Insn::stx(Size::DW, SCRATCH, self.small(key + 8), r));
        self.pop(v.reg);
        self.e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
        self.e
            .emit(Insn::stx(Size::DW, SCRATCH, self.small(key), R0));
        Ok(())
    }

    /// `Stmt::SaveEntry`: save `values` for the return of this call.
    pub(crate) fn save_entry(&mut self, frame: &Expr, values: &[(EntryField, Expr)]) -> Result<()> {
        let map = self.c.entry_map();
        let mark = self.scratch_top;
        let key = self.scratch(KEY_SIZE);
        let state = self.scratch(STATE_SIZE);
        self.zero_scratch(state, STATE_SIZE);
        for (field, e) in values {
            let v = self.expr(e)?;
            let r = regs::read(&mut self.e, v.reg, R1);
            let at = self.small(state + field.slot() * 8);
            self.e.emit(Insn::stx(Size::DW, SCRATCH, at, r));
            self.pop(v.reg);
        }
        self.entry_key(frame, key)?;
        self.e.ld_map(R1, map);
        self.scratch_addr(R2, key);
        self.scratch_addr(R3, state);
        self.e.emit(Insn::mov64_imm(R4, 0));
        self.e.emit(Insn::call(helpers::MAP_UPDATE_ELEM));
        self.release_scratch(mark);
        Ok(())
    }

    /// Find what this call's entry saved (its stack pointer at entry is `frame`) and copy
    /// it to scratch for `entry->`; without one, go to `skip`. Returns the copy's offset.
    pub(crate) fn find_entry(&mut self, frame: &Expr, skip: Label) -> Result<u32> {
        let map = self.c.entry_map();
        let state = self.scratch(STATE_SIZE);
        let key = self.scratch(KEY_SIZE);
        self.entry_key(frame, key)?;
        self.e.ld_map(R1, map);
        self.scratch_addr(R2, key);
        self.e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
        self.e.jmp_imm(BPF_JEQ, R0, 0, skip);
        for i in 0..EntryField::COUNT {
            self.e.emit(Insn::ldx(Size::DW, R1, R0, (i * 8) as i16));
            let at = self.small(state + i * 8);
            self.e.emit(Insn::stx(Size::DW, SCRATCH, at, R1));
        }
        Ok(state)
    }

    /// `entry->NAME`: a field of the state the clause found.
    pub(crate) fn entry_value(&mut self, field: EntryField, e: &Expr, span: Span) -> Result<Val> {
        let state = self
            .clause_state()
            .entry_state
            .ok_or_else(|| super::expr::untyped("entry-> outside a return clause", span))?;
        let v = self.push(span)?;
        let at = self.small(state + field.slot() * 8);
        self.e.emit(Insn::ldx(Size::DW, R1, SCRATCH, at));
        super::expr::normalize(&mut self.e, R1, &e.ty);
        regs::write(&mut self.e, v, R1);
        Ok(Val {
            reg: v,
            ty: e.ty.clone(),
        })
    }
}

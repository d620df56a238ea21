//! `alloca()` memory, as DTrace scopes it: each clause allocates afresh from the start of
//! one arena in scratch (so two clauses' first allocations share an address), and an
//! access through a pointer into the arena must lie in what the current clause has
//! allocated so far: below its first allocation, past its last, or from an earlier
//! clause, it faults with "invalid address".
//!
//! The arena is as large as the most any one clause allocates (the typing pass adds the
//! constant sizes up) and a guard, placed by the program's prologue; what a clause has allocated at a
//! point is known when the code is generated, since allocations are constant in size and
//! laid out in the order of the text.

use dtrace_ebpf::*;

use super::regs::{self, VReg, SCRATCH};
use super::{Compiler, Gen};
use crate::program::Fault;

/// Bytes past the most a clause allocates that still belong to the arena, so that an
/// access just past an allocation faults rather than read the scratch that follows.
const GUARD: u32 = 64;

/// The arena's size in the scratch area of `c`'s programs; 0 when nothing allocates.
pub(crate) fn arena_size(c: &Compiler<'_>) -> u32 {
    match c.prog.alloca_arena {
        0 => 0,
        n => n + GUARD,
    }
}

impl Gen<'_, '_> {
    /// Allocate `size` bytes of the clause's arena; their scratch offset.
    pub(crate) fn arena_allocate(&mut self, size: u32) -> u32 {
        let arena = self
            .arena
            .expect("the prologue placed an arena: the program allocates");
        let state = self.clause_state();
        // Each allocation starts 8-byte aligned; what it allows ends at its last byte.
        let start = state.alloca_top.next_multiple_of(8);
        state.alloca_top = start + size;
        arena + start
    }

    /// The part of the arena the current clause has allocated so far: (offset, length).
    pub(crate) fn arena_allocated(&self) -> Option<(u32, u32)> {
        let arena = self.arena?;
        let top = self.clause.as_ref().map_or(0, |c| c.alloca_top);
        (top > 0).then_some((arena, top))
    }

    /// Fault unless the access of `size` bytes at the kernel address in `addr` either lies
    /// outside the scratch area up to the arena's end or inside what this clause
    /// allocated.
    pub(crate) fn check_arena_access(&mut self, addr: VReg, size: u32) {
        let Some(arena) = self.arena else {
            return;
        };
        let whole = arena_size(self.c);
        let top = self.clause.as_ref().map_or(0, |c| c.alloca_top);
        let (ok, bad) = (self.e.label(), self.e.label());
        self.offset_from(R1, addr, SCRATCH, R2);
        // Past the arena: scratch the program hands out otherwise (`copyin()`, `this->`
        // arrays), or not scratch at all (below it, the offset wraps around). Below the
        // arena lie the record being built and the prologue's slots: no D pointer's.
        self.e.jmp_imm(BPF_JGE, R1, (arena + whole) as i32, ok);
        if size <= top {
            self.e.jmp_imm(BPF_JLT, R1, arena as i32, bad);
            self.e
                .jmp_imm(BPF_JGT, R1, (arena + top - size) as i32, bad);
            self.e.goto(ok);
        }
        self.e.bind(bad);
        let r = regs::read(&mut self.e, addr, R1);
        self.fault(Fault::BadAddr, Some(r));
        self.e.bind(ok);
    }

    /// `dst` = the address in `addr` less the one in `base`, both as plain numbers (either
    /// may be a pointer the verifier follows, into a map value, which it would refuse to
    /// subtract). Uses `tmp` (which may be `base`).
    pub(super) fn offset_from(&mut self, dst: Reg, addr: VReg, base: Reg, tmp: Reg) {
        if tmp != base {
            self.e.emit(Insn::mov64_reg(tmp, base));
        }
        regs::read_into(&mut self.e, addr, dst);
        self.as_number(dst);
        self.as_number(tmp);
        self.e.emit(Insn::alu64_reg(BPF_SUB, dst, tmp));
    }

    /// `r` (a pointer the verifier follows) as a plain number: stored through a map value
    /// (CAP_PERFMON lets a program store a pointer there), a pointer reads back as a
    /// scalar. Takes one word of scratch for the moment.
    pub(super) fn as_number(&mut self, r: Reg) {
        let mark = self.scratch_top;
        let slot = self.scratch(8);
        self.st_slot(slot, r);
        self.ld_slot(r, slot);
        self.release_scratch(mark);
    }
}

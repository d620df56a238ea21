//! The dynamic variable space (`dynvarsize`), shared by every associative array element
//! and thread-local variable as in DTrace: it holds `dynvarsize / (largest key tuple +
//! largest value)` of them, counted as DTrace counts them (`crate::space`).
//!
//! Each variable lives in a map of its own, each map holding `dynvar_entries` (scalar
//! thread-locals in task storage, one value per thread: `tls.rs`); when the shared space
//! holds fewer (the option binds), a counter in the globals map
//! ([`DYNVARS_OFFSET`]) counts the variables that exist: creating one takes a place
//! (atomically) and fails as a dynamic variable drop when none is left, deleting one
//! (storing 0) gives its place back. When the option does not bind, no code counts.

use dtrace_ebpf::*;

use super::Gen;
use crate::emit::Label;
use crate::program::DYNVARS_OFFSET;

impl Gen<'_, '_> {
    /// Take a place for a new dynamic variable, or jump to `full` (the count unchanged)
    /// when none is left. Uses r1 and r2.
    pub(crate) fn take_dynvar(&mut self, full: Label) {
        let Some(places) = self.c.dynvar_places else {
            return;
        };
        let taken = self.e.label();
        self.e.ld_map_value(R1, self.c.core.globals, DYNVARS_OFFSET);
        self.e.emit(Insn::mov64_imm(R2, 1));
        self.e.emit(Insn::atomic_fetch_add(Size::DW, R1, 0, R2));
        self.e.jmp_imm(BPF_JLT, R2, places as i32, taken);
        self.give_back_dynvar();
        self.e.goto(full);
        self.e.bind(taken);
    }

    /// Give back the place of a dynamic variable not created after all, or deleted. Uses
    /// r1 and r2.
    pub(crate) fn give_back_dynvar(&mut self) {
        if self.c.dynvar_places.is_none() {
            return;
        }
        self.e.ld_map_value(R1, self.c.core.globals, DYNVARS_OFFSET);
        self.e.emit(Insn::mov64_imm(R2, -1));
        self.e.emit(Insn::atomic_add(Size::DW, R1, 0, R2));
    }

    /// After a map update (r0) that was to create a dynamic variable with a place taken:
    /// give the place back if it failed. Uses r1 and r2.
    pub(crate) fn give_back_unless_created(&mut self) {
        if self.c.dynvar_places.is_none() {
            return;
        }
        let created = self.e.label();
        self.e.jmp_imm(BPF_JEQ, R0, 0, created);
        self.give_back_dynvar();
        self.e.bind(created);
    }

    /// After a map delete (r0): give back the place of the variable it deleted. Uses r1
    /// and r2.
    pub(crate) fn give_back_if_deleted(&mut self) {
        if self.c.dynvar_places.is_none() {
            return;
        }
        let kept = self.e.label();
        self.e.jmp_imm(BPF_JNE, R0, 0, kept);
        self.give_back_dynvar();
        self.e.bind(kept);
    }
}

//! Runtime faults and the ERROR probe.
//!
//! A fault (a bad address, a division by zero, an index out of bounds) stores its kind,
//! value, action and code offset in the scratch record area and jumps to its clause's fault
//! tail. The tail sends a fault record (what the consumer prints as DTrace's error line) and
//! then runs the program's ERROR clauses in the same BPF program invocation, as a
//! BPF-to-BPF call: so `pid`, `tid`, `execname` and the stack in an ERROR clause are the
//! faulting thread's, and its `arg0..arg5` are Oracle's DTrace for Linux's (`0`, the
//! probe's id, the clause's statement number, offset, fault, address). The rest of the faulting clause is abandoned; the probe's later clauses run.
//!
//! The ERROR clauses are compiled into each program that can fault, after its exit, as a
//! function of two arguments: the probe's context (for stacks) and the firing's scratch
//! area, where the fault tail left ERROR's six arguments. A fault inside an ERROR clause
//! is only counted ([`DropKind::ErrorInError`]): DTrace does not fire ERROR for it.

use dtrace_abi::record::{self, fault as layout};
use dtrace_ebpf::*;
use dtrace_frontend::Result;

use super::regs::{self, CTX_SLOT, SCRATCH};
use super::{Gen, ERROR_ARGS};
use crate::program::{DropKind, Fault, FAULT_EPID};

/// A fault record field's offset as an instruction displacement.
fn at(offset: usize) -> i16 {
    offset as i16
}

impl Gen<'_, '_> {
    /// The fault path: note `fault` (with `value`, an address or index, in a register if
    /// it has one) and go to the clause's fault tail.
    pub(crate) fn fault(&mut self, fault: Fault, value: Option<Reg>) {
        let offset = self.e.len() as i32;
        let action = self.clause_state().action;
        match value {
            Some(r) => self
                .e
                .emit(Insn::stx(Size::DW, SCRATCH, at(layout::ADDR), r)),
            None => self
                .e
                .emit(Insn::st(Size::DW, SCRATCH, at(layout::ADDR), 0)),
        }
        self.e
            .emit(Insn::st(Size::W, SCRATCH, at(layout::KIND), fault as i32));
        self.e.emit(Insn::st(
            Size::W,
            SCRATCH,
            at(layout::ACTION),
            action as i32,
        ));
        self.e
            .emit(Insn::st(Size::W, SCRATCH, at(layout::OFFSET), offset));
        let tail = match self.clause_state().fault_tail {
            Some(t) => t,
            None => {
                let t = self.e.label();
                self.clause_state().fault_tail = Some(t);
                t
            }
        };
        self.e.goto(tail);
    }

    /// The clause's fault tail, if one of its faults jumps there: send the fault record and
    /// run the ERROR clauses (or, inside an ERROR clause, count the fault). Emitted at the
    /// clause's end, which normal execution jumps over.
    pub(crate) fn fault_tail(&mut self) {
        let Some(tail) = self.clause_state().fault_tail else {
            return;
        };
        let end = self.clause_state().end;
        self.e.goto(end);
        self.e.bind(tail);
        if self.in_error_clauses {
            self.count_drop(DropKind::ErrorInError);
            return;
        }
        self.e.emit(Insn::st(
            Size::W,
            SCRATCH,
            at(record::EPID),
            FAULT_EPID as i32,
        ));
        self.load_epid(R0);
        self.e
            .emit(Insn::stx(Size::W, SCRATCH, at(layout::EPID), R0));
        self.e.emit(Insn::call(helpers::GET_SMP_PROCESSOR_ID));
        self.e
            .emit(Insn::stx(Size::W, SCRATCH, at(record::CPU), R0));
        self.ringbuf_output(layout::SIZE);
        if self.c.error_bodies.is_empty() {
            return;
        }
        // ERROR's arguments, as Oracle's DTrace for Linux gives them: 0, the probe's id,
        // the clause's statement number, offset, fault, value.
        let args = self.error_args();
        let arg = |i: u32| (args + i * 8) as i16;
        self.e.emit(Insn::st(Size::DW, SCRATCH, arg(0), 0));
        self.error_origin(arg(1), arg(2));
        for (i, field, size) in [
            (3, layout::OFFSET, Size::W),
            (4, layout::KIND, Size::W),
            (5, layout::ADDR, Size::DW),
        ] {
            self.e.emit(Insn::ldx(size, R1, SCRATCH, at(field)));
            self.e.emit(Insn::stx(Size::DW, SCRATCH, arg(i), R1));
        }
        self.e.emit(Insn::ldx(Size::DW, R1, R10, CTX_SLOT));
        self.e.emit(Insn::mov64_reg(R2, SCRATCH));
        let label = self.error_function();
        self.e.call_label(label);
    }

    /// Store the faulting probe's id at scratch `id` and the clause's statement number at
    /// `statement` (u64 each): constants, or in a group program looked up by the epid of
    /// the call that fired.
    fn error_origin(&mut self, id: i16, statement: i16) {
        let epid = self.clause_state().epid;
        if self.clause_state().epid_slot.is_none() {
            let ep = &self.c.enabled[epid as usize - 1];
            let (probe, stmt) = (ep.probe.id as i32, ep.statement as i32);
            self.e.emit(Insn::st(Size::DW, SCRATCH, id, probe));
            self.e.emit(Insn::st(Size::DW, SCRATCH, statement, stmt));
            return;
        }
        let mut ids = vec![0u32; self.c.enabled.len() + 1];
        let mut statements = ids.clone();
        for ep in &self.c.enabled {
            ids[ep.epid as usize] = ep.probe.id;
            statements[ep.epid as usize] = ep.statement;
        }
        for (table, slot) in [(ids, id), (statements, statement)] {
            let off = self.c.rodata_bytes(
                &table
                    .iter()
                    .flat_map(|v| v.to_le_bytes())
                    .collect::<Vec<u8>>(),
            );
            let bounded = self.e.label();
            self.load_epid(R0);
            self.e.jmp_imm(BPF_JLT, R0, table.len() as i32, bounded);
            self.e.emit(Insn::mov64_imm(R0, 0));
            self.e.bind(bounded);
            self.e.emit(Insn::alu64_imm(BPF_LSH, R0, 2));
            self.e.ld_map_value(R1, self.c.core.rodata, off);
            self.e.emit(Insn::alu64_reg(BPF_ADD, R1, R0));
            self.e.emit(Insn::ldx(Size::W, R1, R1, 0));
            self.e.emit(Insn::stx(Size::DW, SCRATCH, slot, R1));
        }
    }

    /// Where in scratch this program keeps ERROR's six arguments.
    fn error_args(&mut self) -> u32 {
        if let Some(off) = self.error_args {
            return off;
        }
        let off = self.scratch(ERROR_ARGS * 8);
        self.error_args = Some(off);
        off
    }

    /// The label of this program's ERROR function (emitted when the program is finished).
    fn error_function(&mut self) -> crate::emit::Label {
        match self.error_label {
            Some(l) => l,
            None => {
                let l = self.e.label();
                self.error_label = Some(l);
                l
            }
        }
    }

    /// Emit the ERROR function if a fault tail calls it: the program's ERROR clauses, run
    /// with r1 = the probe's context and r2 = scratch (where ERROR's arguments are).
    pub(crate) fn error_clauses(&mut self) -> Result<()> {
        let Some(label) = self.error_label else {
            return Ok(());
        };
        self.e.bind(label);
        self.e.emit(Insn::mov64_reg(SCRATCH, R2));
        self.e.emit(Insn::stx(Size::DW, R10, CTX_SLOT, R1));
        self.regs = regs::VRegs::default();
        // The ERROR clauses run in the ERROR probe's context, with their own `this->`
        // variables above everything the probe's clauses use.
        let saved_this = std::mem::take(&mut self.this_offsets);
        self.in_error_clauses = true;
        let bodies = self.c.error_bodies.clone();
        for (body, epid) in &bodies {
            let site = body.sites[0].clone();
            let probe = std::mem::replace(&mut self.probe, site);
            let r = self.clause(body, *epid, None);
            self.probe = probe;
            r?;
        }
        self.in_error_clauses = false;
        self.this_offsets = saved_this;
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.emit(Insn::exit());
        Ok(())
    }
}

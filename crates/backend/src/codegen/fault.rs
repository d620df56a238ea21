//! Runtime faults: code that writes a fault record (what DTrace reports through the ERROR
//! probe) and abandons the rest of the clause, so the script goes on.

use dtrace_ebpf::*;

use super::regs::SCRATCH;
use super::Gen;
use crate::program::{Fault, FAULT_EPID};
use dtrace_abi::record::{self, fault as layout};

/// Where the faulting address comes from.
pub(crate) enum FaultSite {
    /// No address (divide-by-zero).
    Here,
}

impl Gen<'_, '_> {
    /// Emit the fault path: record `[FAULT_EPID][cpu][epid][fault][action][offset][addr]`,
    /// send it, and jump to the end of the clause. `addr` holds the bad address, if any.
    pub(crate) fn fault(&mut self, fault: Fault, addr: Option<Reg>, _site: FaultSite) {
        let offset = self.e.len() as i32;
        let (action, end) = {
            let s = self.clause_state();
            (s.action, s.end)
        };
        match addr {
            Some(r) => self
                .e
                .emit(Insn::stx(Size::DW, SCRATCH, at(layout::ADDR), r)),
            None => self
                .e
                .emit(Insn::st(Size::DW, SCRATCH, at(layout::ADDR), 0)),
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
        self.e.emit(Insn::call(helpers::GET_SMP_PROCESSOR_ID));
        self.e
            .emit(Insn::stx(Size::W, SCRATCH, at(record::CPU), R0));
        self.e.ld_map(R1, self.c.core.ringbuf);
        self.e.emit(Insn::mov64_reg(R2, SCRATCH));
        self.e.emit(Insn::mov64_imm(R3, layout::SIZE as i32));
        self.e.emit(Insn::mov64_imm(R4, 0));
        self.e.emit(Insn::call(helpers::RINGBUF_OUTPUT));
        self.e.goto(end);
    }
}

/// A record offset as an instruction's offset field.
fn at(offset: usize) -> i16 {
    offset as i16
}

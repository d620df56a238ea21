//! `link_ntop(type, addr)`, as DTrace's: a link-layer address as lowercase hex bytes
//! joined by ':', 6 bytes for `ARPHRD_ETHER` and 20 for `ARPHRD_INFINIBAND`; another type
//! is an illegal operation, an unreadable address an invalid address.
//!
//! The bytes are read into scratch, then formatted by a loop with a constant bound (the
//! longest address) that leaves at the address's length, into a buffer of its own, from
//! which the result takes at most `strsize` bytes.

use dtrace_ebpf::*;

use super::regs::{self, SCRATCH};
use super::{Gen, Val};
use crate::program::Fault;

/// `ARPHRD_ETHER` and its address length.
const ETHER: (i32, i32) = (1, 6);
/// `ARPHRD_INFINIBAND` and its address length.
const INFINIBAND: (i32, i32) = (32, 20);
/// The longest address, in bytes.
const MAX_LEN: i32 = 20;

impl Gen<'_, '_> {
    /// `link_ntop(a[0], a[1])` into the result buffer `res`.
    pub(super) fn link_ntop(&mut self, res: u32, a: &[Val]) {
        let bytes = self.scratch(MAX_LEN as u32);
        let text = self.scratch(3 * MAX_LEN as u32);
        let len_s = self.scratch(8);
        // The address length by type.
        let (known, infiniband) = (self.e.label(), self.e.label());
        let r = regs::read(&mut self.e, a[0].reg, R1);
        self.e.emit(Insn::mov64_imm(R2, ETHER.1));
        self.e.jmp_imm(BPF_JEQ, r, ETHER.0, known);
        self.e.jmp_imm(BPF_JEQ, r, INFINIBAND.0, infiniband);
        self.fault(Fault::IllegalOp, None);
        self.e.bind(infiniband);
        self.e.emit(Insn::mov64_imm(R2, INFINIBAND.1));
        self.e.bind(known);
        self.st_slot(len_s, R2);
        self.scratch_addr(R1, bytes);
        regs::read_into(&mut self.e, a[1].reg, R3);
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
        self.fault_if_negative(a[1].reg);
        // r5 = byte index; r0 = its text's offset (3 per byte).
        let (top, done) = (self.e.label(), self.e.label());
        self.e.emit(Insn::mov64_imm(R5, 0));
        self.e.bind(top);
        self.e.jmp_imm(BPF_JGE, R5, MAX_LEN, done);
        self.ld_slot(R2, len_s);
        self.exit_if_reg(BPF_JGE, R5, R2, done);
        self.ld_byte(R3, bytes, R5);
        self.e.emit(Insn::mov64_reg(R0, R5));
        self.e.emit(Insn::alu64_imm(BPF_MUL, R0, 3));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R0, SCRATCH));
        let at = self.small(text);
        self.e.emit(Insn::mov64_reg(R4, R3));
        self.e.emit(Insn::alu64_imm(BPF_RSH, R4, 4));
        hex_digit(&mut self.e, R4);
        self.e.emit(Insn::stx(Size::B, R0, at, R4));
        self.e.emit(Insn::mov64_reg(R4, R3));
        self.e.emit(Insn::alu64_imm(BPF_AND, R4, 15));
        hex_digit(&mut self.e, R4);
        self.e.emit(Insn::stx(Size::B, R0, at + 1, R4));
        self.e.emit(Insn::st(Size::B, R0, at + 2, b':' as i32));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R5, 1));
        self.e.goto(top);
        // The last ':' ends the text.
        self.e.bind(done);
        self.ld_slot(R4, len_s);
        self.e.emit(Insn::alu64_imm(BPF_MUL, R4, 3));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R4, 1));
        self.e.emit(Insn::jmp_imm(BPF_JLE, R4, 3 * MAX_LEN - 1, 1));
        self.e.emit(Insn::mov64_imm(R4, 3 * MAX_LEN - 1));
        self.e.emit(Insn::mov64_reg(R0, R4));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R0, SCRATCH));
        self.e.emit(Insn::st(Size::B, R0, at, 0));
        self.e.emit(Insn::mov64_imm(R4, 0));
        self.copy_tail(res, text, R4);
        self.string_result(&a[0], res);
    }
}

/// `r` (0-15) = its lowercase hex digit, without branches.
fn hex_digit(e: &mut crate::emit::Emitter, r: Reg) {
    // '0' + r, plus 39 more above 9 ('a' - '0' - 10).
    e.emit(Insn::mov64_imm(R1, 9));
    e.emit(Insn::alu64_reg(BPF_SUB, R1, r));
    e.emit(Insn::alu64_imm(BPF_ARSH, R1, 63));
    e.emit(Insn::alu64_imm(BPF_AND, R1, 39));
    e.emit(Insn::alu64_reg(BPF_ADD, r, R1));
    e.emit(Insn::alu64_imm(BPF_ADD, r, b'0' as i32));
}

//! `strtok(s, delim)`, as DTrace's: the first token of `s` (bytes up to a delimiter, after
//! skipping delimiters), and with `s` the null string (`strtok(NULL, delim)`) the next token
//! of the last string. No token is NULL.
//!
//! The state lives in the program's scratch for the probe's firing, so later clauses of
//! the same probe go on where earlier ones stopped: `[offset i64][copy of s, strsize]`.
//! The prologue stores offset -1 ("no string yet"), which `strtok(NULL, ...)` reports as
//! an invalid address, as DTrace does.
//!
//! Delimiters are a 256-bit table (32 bytes of scratch): byte `c >> 3`, bit `c & 7`. The
//! loops follow the shape `strsubr` describes for the verifier: constant counters and
//! bounds, data in scratch slots between steps.

use crate::program::Fault;
use dtrace_ebpf::*;
use dtrace_typing::ir::{Expr, ExprKind};

use super::regs::SCRATCH;
use super::{Gen, Val};
use crate::emit::Emitter;

/// Scratch bytes of the state: the offset, then the string.
pub(super) fn state_size(strsize: u32) -> u32 {
    8 + strsize.next_multiple_of(8)
}

/// The prologue's part: no string yet.
pub(super) fn init_state(e: &mut Emitter, slot: u32) {
    e.emit(Insn::st(Size::DW, SCRATCH, slot as i16, -1));
}

/// Whether `e` is the null string (`NULL` where a string is expected).
pub(super) fn is_null_string(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Int(0)) && e.ty.is_string()
}

impl Gen<'_, '_> {
    /// `strtok(a[0], a[1])` into the result buffer `res` (`args` are the typed operands).
    pub(super) fn strtok(&mut self, res: u32, args: &[Expr], a: &[Val]) {
        let strsize = self.strsize() as i32;
        let state = self.strtok.expect("the prologue made strtok's state");
        let buf = state + 8;
        if is_null_string(&args[0]) {
            let ok = self.e.label();
            self.ld_slot(R1, state);
            self.e.jmp_imm(BPF_JSGE, R1, 0, ok);
            self.fault(Fault::BadAddr, None);
            self.e.bind(ok);
        } else {
            self.copy_string(buf, &a[0]);
            self.st_slot_imm(state, 0);
        }
        let tab = self.scratch(32);
        let delims = self.scratch(strsize as u32);
        let start = self.scratch(8);
        self.zero_scratch(tab, 32);
        self.copy_string(delims, &a[1]);
        self.delimiter_table(tab, delims);

        // Skip delimiters: the token starts at the first other byte; none before the NUL
        // (or the end): no token.
        let none = self.e.label();
        let found = self.e.label();
        let top = self.e.label();
        self.e.emit(Insn::mov64_imm(R1, 0));
        self.e.bind(top);
        self.e.jmp_imm(BPF_JGE, R1, strsize, none);
        self.ld_slot(R2, state);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R1));
        self.exit_if(BPF_JGT, R2, strsize - 1, none);
        self.ld_byte(R3, buf, R2);
        self.exit_if(BPF_JEQ, R3, 0, none);
        self.is_delimiter(R4, tab, R3);
        self.exit_if(BPF_JEQ, R4, 0, found);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.e.goto(top);

        let out = self.e.label();

        // Copy the token: each step first ends the result and records where the next call
        // starts, then leaves at a delimiter or the NUL.
        self.e.bind(found);
        self.st_slot(start, R2);
        let copy = self.e.label();
        let full = self.e.label();
        self.e.emit(Insn::mov64_imm(R1, 0));
        self.e.bind(copy);
        self.e.jmp_imm(BPF_JGE, R1, strsize - 1, full);
        self.ld_slot(R2, start);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R1));
        self.exit_if(BPF_JGT, R2, strsize - 1, out);
        self.st_slot(state, R2);
        self.e.emit(Insn::mov64_reg(R5, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R5, R1));
        let res_at = self.small(res);
        self.e.emit(Insn::st(Size::B, R5, res_at, 0));
        self.ld_byte(R3, buf, R2);
        self.exit_if(BPF_JEQ, R3, 0, out);
        self.is_delimiter(R4, tab, R3);
        self.exit_if(BPF_JNE, R4, 0, out);
        self.e.emit(Insn::mov64_reg(R5, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R5, R1));
        self.e.emit(Insn::stx(Size::B, R5, res_at, R3));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.e.goto(copy);
        self.e.bind(full);
        self.st_byte(res + strsize as u32 - 1, 0);
        self.e.bind(out);
        self.string_result_or_null(&a[0], res, none);
    }

    /// Set the bit of each byte of the string at `delims` in the table at `tab`.
    fn delimiter_table(&mut self, tab: u32, delims: u32) {
        let strsize = self.strsize() as i32;
        let top = self.e.label();
        let done = self.e.label();
        self.e.emit(Insn::mov64_imm(R1, 0));
        self.e.bind(top);
        self.e.jmp_imm(BPF_JGE, R1, strsize, done);
        self.ld_byte(R2, delims, R1);
        self.exit_if(BPF_JEQ, R2, 0, done);
        self.e.emit(Insn::mov64_reg(R3, R2));
        self.e.emit(Insn::alu64_imm(BPF_RSH, R3, 3));
        self.e.emit(Insn::alu64_imm(BPF_AND, R2, 7));
        self.e.emit(Insn::mov64_imm(R4, 1));
        self.e.emit(Insn::alu64_reg(BPF_LSH, R4, R2));
        self.ld_byte(R0, tab, R3);
        self.e.emit(Insn::alu64_reg(BPF_OR, R0, R4));
        self.e.emit(Insn::mov64_reg(R5, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R5, R3));
        let off = self.small(tab);
        self.e.emit(Insn::stx(Size::B, R5, off, R0));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.e.goto(top);
        self.e.bind(done);
    }

    /// `dst` = 1 if the byte in `c` (0-255) is a delimiter of the table at `tab`, else 0.
    /// Clobbers r0.
    fn is_delimiter(&mut self, dst: Reg, tab: u32, c: Reg) {
        self.e.emit(Insn::mov64_reg(R0, c));
        self.e.emit(Insn::alu64_imm(BPF_RSH, R0, 3));
        self.ld_byte(dst, tab, R0);
        self.e.emit(Insn::mov64_reg(R0, c));
        self.e.emit(Insn::alu64_imm(BPF_AND, R0, 7));
        self.e.emit(Insn::alu64_reg(BPF_RSH, dst, R0));
        self.e.emit(Insn::alu64_imm(BPF_AND, dst, 1));
    }
}

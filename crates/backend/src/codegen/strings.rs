//! String values: comparison, copying and length. A string value is the address of a
//! NUL-terminated string (scratch, globals, rodata, a map value, or any of these plus an
//! offset), or 0: DTrace's NULL string, which faults wherever a string is read. Strings
//! are read with `bpf_probe_read_kernel_str`, which stops at the NUL.

use dtrace_ebpf::*;
use dtrace_frontend::Result;
use dtrace_typing::ir::CmpOp;

use super::regs;
use super::{Gen, Val};
use crate::program::Fault;
use crate::types::{self, Type};

impl Gen<'_, '_> {
    /// Compare two strings byte by byte (like strcmp); the result replaces `a`. A NULL
    /// string compares as its address, as in DTrace: below every other string, equal
    /// only to NULL.
    ///
    /// Both strings are copied into scratch first (a string may be any address: a
    /// variable's storage, a literal plus an offset). The loop over the bytes has no
    /// branch on their values, only on its counter: it walks from the last byte to the
    /// first, keeping the index of the earliest byte where the strings differ or the first
    /// one ends. A branch on the bytes would leave the verifier a state to explore per
    /// byte, and a clause of many comparisons beyond what it explores. When one string is
    /// known to end by byte `decided_by` (a literal), the walk starts there: at that byte
    /// at the latest the strings differ or both end, so no later byte can be the earliest
    /// stop.
    pub(crate) fn string_compare(
        &mut self,
        op: CmpOp,
        a: &Val,
        b: &Val,
        decided_by: Option<usize>,
    ) -> Result<Val> {
        let strsize = self.strsize() as i32;
        let last = decided_by.map_or(strsize - 1, |n| n.min(strsize as usize - 1) as i32);
        let mark = self.scratch_top;
        let (ta, tb) = (self.string_buffer(false), self.string_buffer(false));
        let null = self.e.label();
        let done = self.e.label();
        let r = regs::read(&mut self.e, a.reg, R1);
        self.e.jmp_imm(BPF_JEQ, r, 0, null);
        let r = regs::read(&mut self.e, b.reg, R1);
        self.e.jmp_imm(BPF_JEQ, r, 0, null);
        self.copy_string(ta, a);
        self.copy_string(tb, b);
        // r3 = index (down from `last`), r0 = the earliest stop (strsize: none).
        self.e.emit(Insn::mov64_imm(R3, last));
        self.e.emit(Insn::mov64_imm(R0, strsize));
        let top = self.e.label();
        let scanned = self.e.label();
        self.e.bind(top);
        self.e.jmp_imm(BPF_JSLT, R3, 0, scanned);
        self.ld_byte(R4, ta, R3);
        self.ld_byte(R5, tb, R3);
        // r5 = the bytes differ or the first is NUL (nonzero), as 0 or 1.
        self.e.emit(Insn::alu64_reg(BPF_XOR, R5, R4));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R4, 1));
        self.e.emit(Insn::alu64_imm(BPF_RSH, R4, 63));
        self.e.emit(Insn::alu64_reg(BPF_OR, R5, R4));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R5, 1));
        self.e.emit(Insn::alu64_imm(BPF_RSH, R5, 63));
        self.e.emit(Insn::alu64_imm(BPF_XOR, R5, 1));
        // r0 += stop * (index - r0): the index where the bytes stop us.
        self.e.emit(Insn::mov64_reg(R4, R3));
        self.e.emit(Insn::alu64_reg(BPF_SUB, R4, R0));
        self.e.emit(Insn::alu64_reg(BPF_MUL, R4, R5));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R0, R4));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R3, 1));
        self.e.goto(top);
        self.e.bind(scanned);
        // The bytes there decide: r0 = -1, 0 or 1.
        let equal = self.e.label();
        self.e.jmp_imm(BPF_JGE, R0, strsize, equal);
        self.ld_byte(R4, ta, R0);
        self.ld_byte(R5, tb, R0);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.jmp_reg(BPF_JEQ, R4, R5, done);
        self.e.emit(Insn::mov64_imm(R0, 1));
        self.e.jmp_reg(BPF_JGT, R4, R5, done);
        self.e.emit(Insn::mov64_imm(R0, -1));
        self.e.goto(done);
        self.e.bind(equal);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.goto(done);
        // A NULL operand: r0 = -1, 0 or 1 from the addresses.
        self.e.bind(null);
        regs::read_into(&mut self.e, a.reg, R1);
        regs::read_into(&mut self.e, b.reg, R2);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.jmp_reg(BPF_JEQ, R1, R2, done);
        self.e.emit(Insn::mov64_imm(R0, 1));
        self.e.jmp_reg(BPF_JGT, R1, R2, done);
        self.e.emit(Insn::mov64_imm(R0, -1));
        self.e.bind(done);
        self.release_scratch(mark);
        let jop = match op {
            CmpOp::Eq => BPF_JEQ,
            CmpOp::Ne => BPF_JNE,
            CmpOp::Lt => BPF_JSLT,
            CmpOp::Le => BPF_JSLE,
            CmpOp::Gt => BPF_JSGT,
            _ => BPF_JSGE,
        };
        self.e.emit(Insn::mov64_reg(R1, R0));
        self.bool_of(a.reg, jop, R1);
        Ok(Val {
            reg: a.reg,
            ty: types::INT,
        })
    }

    /// Write 1 to `dst` if `r op 0`, else 0.
    fn bool_of(&mut self, dst: regs::VReg, op: u8, r: Reg) {
        self.e.emit(Insn::mov64_imm(R0, 1));
        self.e.emit(Insn::jmp_imm(op, r, 0, 1));
        self.e.emit(Insn::mov64_imm(R0, 0));
        regs::write(&mut self.e, dst, R0);
    }

    /// A fresh scratch buffer for a string result: `strsize` bytes (twice that when `room`,
    /// so a copy may start anywhere in the first half).
    pub(crate) fn string_buffer(&mut self, room: bool) -> u32 {
        let size = self.strsize() * if room { 2 } else { 1 };
        self.scratch(size)
    }

    /// `strlen(s)`: the number of bytes before the NUL (at most strsize - 1).
    pub(crate) fn strlen(&mut self, s: &Val) -> Result<Val> {
        let tmp = self.string_buffer(false);
        self.copy_string(tmp, s);
        regs::write(&mut self.e, s.reg, R0);
        Ok(Val {
            reg: s.reg,
            ty: types::ULONG,
        })
    }

    /// Copy the string `v` into scratch at `off` (`strsize` bytes); r0 = its length, in
    /// `0..strsize`. A NULL string or an unreadable address faults (DTrace's "invalid
    /// address"). Clobbers r1-r5.
    pub(crate) fn copy_string(&mut self, off: u32, v: &Val) {
        let strsize = self.strsize() as i32;
        self.fault_if_null(v);
        self.scratch_addr(R1, off);
        self.e.emit(Insn::mov64_imm(R2, strsize));
        regs::read_into(&mut self.e, v.reg, R3);
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
        self.fault_if_negative(v.reg);
        self.e.emit(Insn::alu64_imm(BPF_SUB, R0, 1));
        self.e.emit(Insn::jmp_imm(BPF_JSGE, R0, 0, 1));
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.emit(Insn::jmp_imm(BPF_JLE, R0, strsize - 1, 1));
        self.e.emit(Insn::mov64_imm(R0, strsize - 1));
    }

    /// Fault (an invalid address, 0) if the string `v` is NULL: what DTrace does where a
    /// string is read.
    pub(crate) fn fault_if_null(&mut self, v: &Val) {
        let ok = self.e.label();
        let r = regs::read(&mut self.e, v.reg, R1);
        self.e.jmp_imm(BPF_JNE, r, 0, ok);
        self.fault(Fault::BadAddr, None);
        self.e.bind(ok);
    }

    /// Free the scratch temporaries allocated since `mark`, keeping their peak in the
    /// scratch size (checked when the program is finished).
    pub(crate) fn release_scratch(&mut self, mark: u32) {
        self.scratch_peak = self.scratch_peak.max(self.scratch_top);
        self.scratch_top = mark;
    }

    /// `strjoin(a, b)`: a new string, truncated to strsize - 1 bytes.
    pub(crate) fn strjoin(&mut self, a: &Val, b: &Val) -> Result<Val> {
        let strsize = self.strsize() as i32;
        let buf = self.string_buffer(true);
        // r0 = len(a), in [0, strsize - 1]; b goes right after it.
        self.fault_if_null(b);
        self.copy_string(buf, a);
        self.scratch_addr(R1, buf);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, R0));
        self.e.emit(Insn::mov64_imm(R2, strsize));
        self.e.emit(Insn::alu64_reg(BPF_SUB, R2, R0));
        regs::read_into(&mut self.e, b.reg, R3);
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
        self.fault_if_negative(b.reg);
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, a.reg, R1);
        Ok(Val {
            reg: a.reg,
            ty: Type::String,
        })
    }
}

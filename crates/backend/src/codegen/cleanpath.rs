//! `cleanpath(s)`, as DTrace's: the path with empty and `.` components dropped and each
//! `..` removing the component before it (at the root it is dropped; in a relative path
//! with nothing left to remove it stays), "." for a relative path left empty, "" for "".
//!
//! One pass over the bytes of a scratch copy: a component's bytes are written to the
//! result as they come (after a `/` when the result already holds something), and at its
//! end a `.` or `..` is undone by moving the result's end back. A stack of where each
//! kept component began (u16 result offsets) makes `..` a constant-time pop. The loop
//! follows the shape `strsubr` describes for the verifier: a constant counter and bound,
//! the state in scratch slots between steps.

use dtrace_ebpf::*;

use super::regs::SCRATCH;
use super::{Gen, Val};

impl Gen<'_, '_> {
    /// `cleanpath(a[0])` into the result buffer `res`.
    pub(super) fn cleanpath(&mut self, res: u32, a: &[Val]) {
        let strsize = self.strsize() as i32;
        let t = self.scratch(strsize as u32);
        let stack = self.scratch(strsize as u32);
        let v = self.scratch(56);
        // Result end, its end before the current component, where the component's bytes
        // start, stack depth, inside a component, rooted, input length.
        let (w_s, pre_s, comp_s, top_s, inside_s, root_s, len_s) =
            (v, v + 8, v + 16, v + 24, v + 32, v + 40, v + 48);
        let max_top = strsize / 2;
        self.copy_string(t, &a[0]);
        self.st_slot(len_s, R0);
        for slot in [w_s, top_s, inside_s, root_s] {
            self.st_slot_imm(slot, 0);
        }
        let body = self.e.label();
        self.e.emit(Insn::ldx(Size::B, R1, SCRATCH, self.small(t)));
        self.e.jmp_imm(BPF_JNE, R1, b'/' as i32, body);
        self.st_byte(res, b'/');
        self.st_slot_imm(w_s, 1);
        self.st_slot_imm(root_s, 1);
        self.e.bind(body);

        let (top, next, end) = (self.e.label(), self.e.label(), self.e.label());
        let (sep, put, no_slash, sep_done) = (
            self.e.label(),
            self.e.label(),
            self.e.label(),
            self.e.label(),
        );
        // r5 = input index; r1 = its byte, kept through the step.
        self.e.emit(Insn::mov64_imm(R5, 0));
        self.e.bind(top);
        self.e.jmp_imm(BPF_JGE, R5, strsize, end);
        self.ld_byte(R1, t, R5);
        self.e.jmp_imm(BPF_JEQ, R1, b'/' as i32, sep);
        self.e.jmp_imm(BPF_JEQ, R1, 0, sep);
        // A byte of a component: at its start, note where it begins (after a '/').
        self.ld_slot(R2, inside_s);
        self.e.jmp_imm(BPF_JNE, R2, 0, put);
        self.st_slot_imm(inside_s, 1);
        self.ld_slot(R3, w_s);
        self.st_slot(pre_s, R3);
        self.ld_slot(R4, root_s);
        self.e.jmp_reg(BPF_JSLE, R3, R4, no_slash);
        self.exit_if(BPF_JGT, R3, strsize - 2, end);
        self.put_byte(res, R3, Byte::Imm(b'/'));
        self.st_slot(w_s, R3);
        self.e.bind(no_slash);
        self.ld_slot(R3, w_s);
        self.st_slot(comp_s, R3);
        self.e.bind(put);
        self.ld_slot(R3, w_s);
        self.exit_if(BPF_JGT, R3, strsize - 2, end);
        self.put_byte(res, R3, Byte::Reg(R1));
        self.st_slot(w_s, R3);
        self.e.goto(next);

        // A separator (or the NUL) ends the component, if one was open.
        self.e.bind(sep);
        self.ld_slot(R2, inside_s);
        self.e.jmp_imm(BPF_JEQ, R2, 0, sep_done);
        self.st_slot_imm(inside_s, 0);
        let (dot, dotdot, push, keep) = (
            self.e.label(),
            self.e.label(),
            self.e.label(),
            self.e.label(),
        );
        self.ld_slot(R3, w_s);
        self.ld_slot(R4, comp_s);
        self.e.emit(Insn::alu64_reg(BPF_SUB, R3, R4));
        self.e.jmp_imm(BPF_JGT, R4, strsize - 3, push);
        self.e.jmp_imm(BPF_JGT, R3, 2, push);
        self.ld_byte(R2, res, R4);
        self.e.jmp_imm(BPF_JNE, R2, b'.' as i32, push);
        self.e.jmp_imm(BPF_JEQ, R3, 1, dot);
        self.ld_byte(R2, res + 1, R4);
        self.e.jmp_imm(BPF_JEQ, R2, b'.' as i32, dotdot);
        self.e.goto(push);
        // ".": undone.
        self.e.bind(dot);
        self.ld_slot(R3, pre_s);
        self.st_slot(w_s, R3);
        self.e.goto(sep_done);
        // "..": undoes it and the component before it, if there is one to undo.
        self.e.bind(dotdot);
        self.ld_slot(R3, top_s);
        self.e.jmp_imm(BPF_JSLE, R3, 0, keep);
        self.e.jmp_imm(BPF_JGT, R3, max_top, keep);
        self.e.emit(Insn::alu64_imm(BPF_SUB, R3, 1));
        self.st_slot(top_s, R3);
        self.e.emit(Insn::alu64_imm(BPF_LSH, R3, 1));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R3, SCRATCH));
        self.e.emit(Insn::ldx(Size::H, R2, R3, self.small(stack)));
        self.st_slot(w_s, R2);
        self.e.goto(sep_done);
        // Nothing to undo: at the root ".." is dropped; in a relative path it stays.
        self.e.bind(keep);
        self.ld_slot(R4, root_s);
        self.e.jmp_imm(BPF_JEQ, R4, 0, sep_done);
        self.ld_slot(R3, pre_s);
        self.st_slot(w_s, R3);
        self.e.goto(sep_done);
        // Any other component is kept: remember where it began.
        self.e.bind(push);
        self.ld_slot(R3, top_s);
        self.e.jmp_imm(BPF_JGE, R3, max_top, sep_done);
        self.ld_slot(R2, pre_s);
        self.e.emit(Insn::mov64_reg(R4, R3));
        self.e.emit(Insn::alu64_imm(BPF_LSH, R4, 1));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R4, SCRATCH));
        self.e.emit(Insn::stx(Size::H, R4, self.small(stack), R2));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R3, 1));
        self.st_slot(top_s, R3);
        self.e.bind(sep_done);
        self.exit_if(BPF_JEQ, R1, 0, end);
        self.e.bind(next);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R5, 1));
        self.e.goto(top);

        // End the result; an empty one is "." (or "" for an empty path).
        self.e.bind(end);
        let terminate = self.e.label();
        self.ld_slot(R3, w_s);
        self.e.jmp_imm(BPF_JNE, R3, 0, terminate);
        self.ld_slot(R2, len_s);
        self.e.jmp_imm(BPF_JEQ, R2, 0, terminate);
        self.st_byte(res, b'.');
        self.e.emit(Insn::mov64_imm(R3, 1));
        self.e.bind(terminate);
        self.e.emit(Insn::jmp_imm(BPF_JLE, R3, strsize - 1, 1));
        self.e.emit(Insn::mov64_imm(R3, strsize - 1));
        self.put_byte(res, R3, Byte::Imm(0));
        self.string_result(&a[0], res);
    }

    /// `res[at] = byte`, then `at += 1`; `at` must be bounded for the verifier.
    /// Clobbers r0.
    fn put_byte(&mut self, res: u32, at: Reg, byte: Byte) {
        self.e.emit(Insn::mov64_reg(R0, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R0, at));
        let off = self.small(res);
        match byte {
            Byte::Reg(b) => self.e.emit(Insn::stx(Size::B, R0, off, b)),
            Byte::Imm(b) => self.e.emit(Insn::st(Size::B, R0, off, b as i32)),
        }
        self.e.emit(Insn::alu64_imm(BPF_ADD, at, 1));
    }
}

/// A byte to write: in a register, or a constant.
enum Byte {
    Reg(Reg),
    Imm(u8),
}

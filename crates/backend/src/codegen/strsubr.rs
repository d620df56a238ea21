//! String subroutines beyond `strlen`/`strjoin`: `substr index rindex strstr strchr strrchr
//! toupper tolower lltostr basename dirname strtoll`, with the semantics of DTrace's
//! `dtrace_dif_subr` (Perl-like `substr`/`index`/`rindex`, POSIX-like `basename`/`dirname`).
//!
//! Each string operand is first copied into a scratch temporary with
//! `bpf_probe_read_kernel_str`, which also yields its length; string results go to a fresh
//! buffer from [`Gen::string_buffer`]. Temporaries are released when the subroutine is done
//! (the peak still sizes the scratch map).
//!
//! The code is shaped for the verifier, which simulates bounded loops iteration by
//! iteration:
//! - every loop runs on a counter that starts at a constant and is compared with a constant
//!   bound, so the verifier knows it exactly and the loop's cost is linear in `strsize`;
//! - values that depend on the data (positions, lengths, results) live in scratch memory
//!   between the steps, and registers holding them are dead wherever paths join, so the
//!   paths leaving a loop at different iterations join into one verifier state;
//! - a data-dependent branch that leaves a loop is the fall-through ([`Gen::exit_if`]), so
//!   the verifier follows the exit first and the branches it keeps pending stay few;
//! - the substring search tries its positions with `bpf_loop` calling one callback per
//!   program (emitted after the program's functions), which compares eight bytes at a
//!   time: the verifier checks the callback's word loop once per search instead of
//!   simulating every position, so any number of searches fits a clause.

use dtrace_ebpf::*;
use dtrace_frontend::{CompileError, Result, Span};
use dtrace_typing::ir::{Expr, ExprKind, Subr};

use super::regs::{self, KEY_SLOT, SCRATCH};
use super::{Gen, Val};
use crate::emit::Label;
use crate::types::{self, Type};

/// Which substring search.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Search {
    Index,
    Rindex,
    Strstr,
}

/// The jump taken when `op` is not.
fn invert(op: u8) -> u8 {
    match op {
        BPF_JEQ => BPF_JNE,
        BPF_JNE => BPF_JEQ,
        BPF_JGT => BPF_JLE,
        BPF_JLE => BPF_JGT,
        BPF_JGE => BPF_JLT,
        BPF_JLT => BPF_JGE,
        BPF_JSGT => BPF_JSLE,
        BPF_JSLE => BPF_JSGT,
        BPF_JSGE => BPF_JSLT,
        _ => BPF_JSGE,
    }
}

/// Where a program's substring searches work: copies of the haystack (with room for a
/// word read past any position) and of the needle, then five u64 slots (lengths,
/// position, result, step); and the label of the `bpf_loop` callback that tries one
/// position.
#[derive(Clone, Copy)]
pub(crate) struct SearchArea {
    haystack: u32,
    needle: u32,
    vars: u32,
    callback: Label,
}

impl SearchArea {
    /// Offsets of the slots: haystack length, needle length, position, result, step.
    fn slots(&self) -> (u32, u32, u32, u32, u32) {
        let v = self.vars;
        (v, v + 8, v + 16, v + 24, v + 32)
    }
}

impl Gen<'_, '_> {
    /// Compile a call of a string subroutine (`substr index rindex strstr strchr strrchr
    /// toupper tolower lltostr basename dirname strtoll`).
    pub(crate) fn string_subroutine(&mut self, subr: Subr, args: &[Expr]) -> Result<Val> {
        let mut a = Vec::with_capacity(args.len());
        for arg in args {
            a.push(self.expr(arg)?);
        }
        // Lengths of literal arguments, which bound the search loops tighter than strsize.
        let lits: Vec<Option<u32>> = args
            .iter()
            .map(|e| match &e.kind {
                ExprKind::Str(s) => Some(s.len() as u32),
                _ => None,
            })
            .collect();
        // The result buffer outlives the temporaries allocated after `mark`.
        let returns_string = !matches!(subr, Subr::Index | Subr::Rindex | Subr::Strtoll);
        let res = if returns_string {
            self.string_buffer(false)
        } else {
            0
        };
        if matches!(subr, Subr::Index | Subr::Rindex | Subr::Strstr) {
            self.search_area();
        }
        if subr == Subr::Json {
            self.json_area();
        }
        let mark = self.scratch_top;
        let ty = match subr {
            Subr::Substr => {
                self.substr(res, &a);
                Type::String
            }
            Subr::Index => {
                self.search(Search::Index, None, &a, &lits);
                types::INT
            }
            Subr::Rindex => {
                self.search(Search::Rindex, None, &a, &lits);
                types::INT
            }
            Subr::Strstr => {
                self.search(Search::Strstr, Some(res), &a, &lits);
                Type::String
            }
            Subr::Strchr => {
                self.strchr(false, res, &a);
                Type::String
            }
            Subr::Strrchr => {
                self.strchr(true, res, &a);
                Type::String
            }
            Subr::Toupper => {
                self.change_case(b'a', res, &a);
                Type::String
            }
            Subr::Tolower => {
                self.change_case(b'A', res, &a);
                Type::String
            }
            Subr::Lltostr => {
                self.lltostr(res, &a);
                Type::String
            }
            Subr::Basename => {
                self.path_part(false, res, &a);
                Type::String
            }
            Subr::Dirname => {
                self.path_part(true, res, &a);
                Type::String
            }
            Subr::Cleanpath => {
                self.cleanpath(res, &a);
                Type::String
            }
            Subr::Strtok => {
                self.strtok(res, args, &a);
                Type::String
            }
            Subr::Json => {
                self.json(res, &a);
                Type::String
            }
            _ => {
                self.strtoll(&a);
                types::INT64
            }
        };
        self.release_scratch(mark);
        for v in a[1..].iter().rev() {
            self.pop(v.reg);
        }
        Ok(Val { reg: a[0].reg, ty })
    }

    /// Free the temporaries allocated since `mark`, keeping their peak in the scratch size.
    pub(super) fn release_temps(&mut self, mark: u32, span: Span) -> Result<()> {
        let peak = self.scratch_top;
        if peak > i16::MAX as u32 {
            return Err(CompileError::new(
                "D_DIF_TOOBIG",
                format!(
                    "probe {} needs {peak} bytes of scratch space; at most 32767 fit (fewer string temporaries or a smaller strsize)",
                    self.probe.full_name()
                ),
                span,
            ));
        }
        self.c.scratch_size = self.c.scratch_size.max(peak);
        self.scratch_top = mark;
        Ok(())
    }

    /// `dst = *(u64 *)(scratch + off)`
    pub(super) fn ld_slot(&mut self, dst: Reg, off: u32) {
        let off = self.small(off);
        self.e.emit(Insn::ldx(Size::DW, dst, SCRATCH, off));
    }

    /// `*(u64 *)(scratch + off) = src`
    pub(super) fn st_slot(&mut self, off: u32, src: Reg) {
        let off = self.small(off);
        self.e.emit(Insn::stx(Size::DW, SCRATCH, off, src));
    }

    /// `*(u64 *)(scratch + off) = imm`
    pub(super) fn st_slot_imm(&mut self, off: u32, imm: i32) {
        let off = self.small(off);
        self.e.emit(Insn::st(Size::DW, SCRATCH, off, imm));
    }

    /// `*(u8 *)(scratch + off) = byte`
    pub(super) fn st_byte(&mut self, off: u32, byte: u8) {
        let off = self.small(off);
        self.e.emit(Insn::st(Size::B, SCRATCH, off, byte as i32));
    }

    /// `dst = *(u8 *)(scratch + base + idx)`; `idx` must be bounded for the verifier.
    pub(super) fn ld_byte(&mut self, dst: Reg, base: u32, idx: Reg) {
        self.e.emit(Insn::mov64_reg(dst, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, dst, idx));
        let off = self.small(base);
        self.e.emit(Insn::ldx(Size::B, dst, dst, off));
    }

    /// `*(u8 *)(scratch + base + at) = byte`; `at` must be bounded. Clobbers r0.
    pub(super) fn store_byte(&mut self, base: u32, at: Reg, byte: Reg) {
        self.e.emit(Insn::mov64_reg(R0, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R0, at));
        let off = self.small(base);
        self.e.emit(Insn::stx(Size::B, R0, off, byte));
    }

    /// `bpf_loop(n, callback, &scratch pointer, 0)`: `callback` runs up to `n` times,
    /// finding the scratch area through its second argument.
    pub(super) fn run_loop(&mut self, n: i32, callback: Label) {
        self.e.emit(Insn::stx(Size::DW, R10, KEY_SLOT, SCRATCH));
        self.loop_on_key_slot(n, callback);
    }

    /// `bpf_loop(n, callback, fp + KEY_SLOT, 0)`: `callback`'s second argument points at
    /// the 8 bytes the caller left at [`KEY_SLOT`].
    pub(super) fn loop_on_key_slot(&mut self, n: i32, callback: Label) {
        self.e.emit(Insn::mov64_imm(R1, n));
        self.e.ld_func(R2, callback);
        self.e.emit(Insn::mov64_reg(R3, R10));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R3, KEY_SLOT as i32));
        self.e.emit(Insn::mov64_imm(R4, 0));
        self.e.emit(Insn::call(helpers::LOOP));
    }

    /// `if dst op imm goto target`, with the jump to `target` as the fall-through path so
    /// the verifier explores it first (used for branches that leave a loop).
    pub(super) fn exit_if(&mut self, op: u8, dst: Reg, imm: i32, target: Label) {
        let stay = self.e.label();
        self.e.jmp_imm(invert(op), dst, imm, stay);
        self.e.goto(target);
        self.e.bind(stay);
    }

    /// [`Gen::exit_if`] comparing with a register.
    pub(super) fn exit_if_reg(&mut self, op: u8, dst: Reg, src: Reg, target: Label) {
        let stay = self.e.label();
        self.e.jmp_reg(invert(op), dst, src, stay);
        self.e.goto(target);
        self.e.bind(stay);
    }

    /// Copy the string at `scratch + base + r_idx` (NUL-terminated within scratch) into the
    /// result buffer `res`. Clobbers r0-r5.
    pub(super) fn copy_tail(&mut self, res: u32, base: u32, idx: Reg) {
        self.e.emit(Insn::mov64_reg(R3, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R3, idx));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R3, base as i32));
        self.scratch_addr(R1, res);
        self.e.emit(Insn::mov64_imm(R2, self.strsize() as i32));
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
    }

    /// Write the result string `res` into the first argument's register.
    pub(super) fn string_result(&mut self, first: &Val, res: u32) {
        self.scratch_addr(R1, res);
        regs::write(&mut self.e, first.reg, R1);
    }

    /// Write the result string `res` into the first argument's register, or NULL when
    /// the code jumps to `missing` (a search that found nothing).
    pub(super) fn string_result_or_null(&mut self, first: &Val, res: u32, missing: Label) {
        let done = self.e.label();
        self.string_result(first, res);
        self.e.goto(done);
        self.e.bind(missing);
        self.e.emit(Insn::mov64_imm(R1, 0));
        regs::write(&mut self.e, first.reg, R1);
        self.e.bind(done);
    }

    /// `substr(s, index[, length])`, as DTrace computes it:
    ///
    /// ```text
    /// if (index < 0) { index += len; if (index < 0 && index + rem > 0) { rem += index; index = 0; } }
    /// if (index >= len || index < 0) rem = 0;
    /// else if (rem < 0) rem += len - index;
    /// else if (index + rem > strsize) rem = strsize - index;
    /// ```
    /// then up to `rem` bytes from `index` (`rem` defaults to strsize).
    fn substr(&mut self, res: u32, a: &[Val]) {
        let strsize = self.strsize() as i32;
        let t = self.scratch(strsize as u32);
        let v = self.scratch(16);
        self.copy_string(t, &a[0]);
        self.e.emit(Insn::mov64_reg(R4, R0));
        regs::read_into(&mut self.e, a[1].reg, R1);
        match a.get(2) {
            Some(len) => regs::read_into(&mut self.e, len.reg, R2),
            None => self.e.emit(Insn::mov64_imm(R2, strsize)),
        }
        let empty = self.e.label();
        let copy = self.e.label();
        let out = self.e.label();
        // r1 = index, r2 = remaining, r4 = len.
        let nonneg = self.e.label();
        self.e.jmp_imm(BPF_JSGE, R1, 0, nonneg);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, R4));
        self.e.jmp_imm(BPF_JSGE, R1, 0, nonneg);
        self.e.emit(Insn::mov64_reg(R3, R1));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R2));
        self.e.jmp_imm(BPF_JSLE, R3, 0, nonneg);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R1));
        self.e.emit(Insn::mov64_imm(R1, 0));
        self.e.bind(nonneg);
        self.e.jmp_reg(BPF_JSGE, R1, R4, empty);
        self.e.jmp_imm(BPF_JSLT, R1, 0, empty);
        let positive = self.e.label();
        let adjusted = self.e.label();
        self.e.jmp_imm(BPF_JSGE, R2, 0, positive);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R4));
        self.e.emit(Insn::alu64_reg(BPF_SUB, R2, R1));
        self.e.goto(adjusted);
        self.e.bind(positive);
        self.e.emit(Insn::mov64_reg(R3, R1));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R2));
        self.e.jmp_imm(BPF_JSLE, R3, strsize, adjusted);
        self.e.emit(Insn::mov64_imm(R2, strsize));
        self.e.emit(Insn::alu64_reg(BPF_SUB, R2, R1));
        self.e.bind(adjusted);
        self.e.jmp_imm(BPF_JSLE, R2, 0, empty);
        self.st_slot(v, R1);
        self.st_slot(v + 8, R2);
        self.e.goto(copy);
        // One join: everything comes back from memory.
        self.e.bind(copy);
        self.ld_slot(R1, v);
        self.ld_slot(R2, v + 8);
        self.exit_if(BPF_JGT, R1, strsize - 1, empty);
        self.exit_if(BPF_JSLT, R2, 1, empty);
        self.e.emit(Insn::jmp_imm(BPF_JLE, R2, strsize - 1, 1));
        self.e.emit(Insn::mov64_imm(R2, strsize - 1));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R2, 1));
        self.e.emit(Insn::mov64_reg(R3, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R1));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R3, t as i32));
        self.scratch_addr(R1, res);
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
        self.e.goto(out);
        self.e.bind(empty);
        self.st_byte(res, 0);
        self.e.bind(out);
        self.string_result(&a[0], res);
    }

    /// The program's search area (allocated on its first search, before the caller's
    /// temporaries, and kept for the whole program) and its `bpf_loop` callback.
    fn search_area(&mut self) -> SearchArea {
        if let Some(area) = self.search {
            return area;
        }
        let strsize = self.strsize();
        let area = SearchArea {
            haystack: self.scratch(2 * strsize + 16),
            needle: self.scratch(strsize + 16),
            vars: self.scratch(40),
            callback: self.e.label(),
        };
        self.search = Some(area);
        area
    }

    /// `index(s, sub[, start])`, `rindex(s, sub[, start])` and `strstr(s, sub)`, with
    /// DTrace's (Perl's) rules for empty strings and out-of-range starts. The operands
    /// are copied into the program's search area and the positions are tried by
    /// `bpf_loop` calling the program's one search callback ([`Gen::search_callback`]),
    /// so the verifier's work per search stays small whatever the number of searches.
    fn search(&mut self, kind: Search, res: Option<u32>, a: &[Val], lits: &[Option<u32>]) {
        let strsize = self.strsize() as i32;
        let area = self.search_area();
        let (h, n) = (area.haystack, area.needle);
        let (len_s, m_s, p_s, r_s, step_s) = area.slots();
        self.copy_string(h, &a[0]);
        self.st_slot(len_s, R0);
        self.copy_string(n, &a[1]);
        self.st_slot(m_s, R0);
        self.st_slot_imm(r_s, -1);
        let done = self.e.label();
        self.ld_slot(R1, len_s);
        self.ld_slot(R2, m_s);
        // Both empty: position 0, whatever the start.
        let not_both = self.e.label();
        self.e.jmp_imm(BPF_JNE, R1, 0, not_both);
        self.e.jmp_imm(BPF_JNE, R2, 0, not_both);
        self.st_slot_imm(r_s, 0);
        self.e.goto(done);
        self.e.bind(not_both);
        // r3 = the first position tried.
        match (kind, a.get(2)) {
            (Search::Index, Some(pos)) => {
                regs::read_into(&mut self.e, pos.reg, R3);
                self.e.emit(Insn::jmp_imm(BPF_JSGE, R3, 0, 1));
                self.e.emit(Insn::mov64_imm(R3, 0));
                let ok = self.e.label();
                self.e.jmp_reg(BPF_JSLT, R3, R1, ok);
                // At or past the end: the length for an empty needle, else not found.
                self.e.jmp_imm(BPF_JNE, R2, 0, done);
                self.st_slot(r_s, R1);
                self.e.goto(done);
                self.e.bind(ok);
            }
            (Search::Rindex, Some(pos)) => {
                regs::read_into(&mut self.e, pos.reg, R3);
                let ok = self.e.label();
                self.e.jmp_imm(BPF_JSGE, R3, 0, ok);
                // Negative: 0 for an empty needle, else not found.
                self.e.jmp_imm(BPF_JNE, R2, 0, done);
                self.st_slot_imm(r_s, 0);
                self.e.goto(done);
                self.e.bind(ok);
                self.e.emit(Insn::jmp_reg(BPF_JSLE, R3, R1, 1));
                self.e.emit(Insn::mov64_reg(R3, R1));
            }
            (Search::Rindex, None) => self.e.emit(Insn::mov64_reg(R3, R1)),
            _ => self.e.emit(Insn::mov64_imm(R3, 0)),
        }
        self.st_slot(p_s, R3);
        let step = if kind == Search::Rindex { -1 } else { 1 };
        self.st_slot_imm(step_s, step);
        // Positions 0..=len(s) at most; a literal haystack bounds them tighter.
        let positions = lits[0].map_or(strsize - 1, |l| (l as i32).min(strsize - 1)) + 1;
        self.run_loop(positions, area.callback);
        self.e.bind(done);
        match res {
            None => {
                self.ld_slot(R0, r_s);
                regs::write(&mut self.e, a[0].reg, R0);
            }
            Some(res) => {
                let missing = self.e.label();
                self.ld_slot(R4, r_s);
                self.exit_if(BPF_JGT, R4, strsize - 1, missing);
                self.copy_tail(res, h, R4);
                self.string_result_or_null(&a[0], res, missing);
            }
        }
    }

    /// The search callback, if the program searches: `bpf_loop` calls it with r1 = the
    /// iteration and r2 = the caller's stack slot holding the scratch pointer. It tries
    /// the position in the search area's `p` slot: on a match it stores it as the result
    /// and stops the loop (returns 1); past the haystack it stops; otherwise it steps `p`
    /// and goes on (returns 0). Emitted once, after the program's functions.
    pub(crate) fn search_callback(&mut self) {
        let Some(area) = self.search else {
            return;
        };
        let strsize = self.strsize() as i32;
        let (h, n) = (area.haystack, area.needle);
        let (len_s, m_s, p_s, r_s, step_s) = area.slots();
        let stop = self.e.label();
        let next = self.e.label();
        let matched = self.e.label();
        self.e.bind(area.callback);
        self.e.emit(Insn::ldx(Size::DW, SCRATCH, R2, 0));
        self.ld_slot(R3, p_s);
        self.ld_slot(R1, len_s);
        self.exit_if(BPF_JSLT, R3, 0, stop);
        self.exit_if_reg(BPF_JSGT, R3, R1, stop);
        self.exit_if(BPF_JGT, R3, strsize, stop);
        self.ld_slot(R2, m_s);
        self.e.emit(Insn::mov64_reg(R0, R3));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R0, R2));
        self.e.jmp_reg(BPF_JSGT, R0, R1, next);
        // Compare 8 bytes at a time; r4 = byte offset, r2 = bytes left.
        let words = (strsize - 1 + 7) / 8;
        self.e.emit(Insn::mov64_imm(R4, 0));
        let inner = self.e.label();
        let partial = self.e.label();
        self.e.bind(inner);
        self.e.jmp_imm(BPF_JGE, R4, 8 * words, matched);
        self.ld_slot(R2, m_s);
        self.e.emit(Insn::alu64_reg(BPF_SUB, R2, R4));
        self.exit_if(BPF_JSLE, R2, 0, matched);
        self.e.emit(Insn::mov64_reg(R0, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R0, R3));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R0, R4));
        let hoff = self.small(h);
        self.e.emit(Insn::ldx(Size::DW, R0, R0, hoff));
        self.e.emit(Insn::mov64_reg(R1, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, R4));
        let noff = self.small(n);
        self.e.emit(Insn::ldx(Size::DW, R1, R1, noff));
        self.e.emit(Insn::alu64_reg(BPF_XOR, R0, R1));
        self.exit_if(BPF_JSLT, R2, 8, partial);
        self.exit_if(BPF_JNE, R0, 0, next);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R4, 8));
        self.e.goto(inner);
        // The last, partial word: compare only its first r2 bytes (little-endian).
        self.e.bind(partial);
        self.e.emit(Insn::alu64_imm(BPF_LSH, R2, 3));
        self.e.emit(Insn::mov64_imm(R1, 1));
        self.e.emit(Insn::alu64_reg(BPF_LSH, R1, R2));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R1, 1));
        self.e.emit(Insn::alu64_reg(BPF_AND, R0, R1));
        self.exit_if(BPF_JNE, R0, 0, next);
        self.e.bind(matched);
        self.st_slot(r_s, R3);
        self.e.bind(stop);
        self.e.emit(Insn::mov64_imm(R0, 1));
        self.e.emit(Insn::exit());
        self.e.bind(next);
        self.ld_slot(R3, p_s);
        self.ld_slot(R1, step_s);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R1));
        self.st_slot(p_s, R3);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.emit(Insn::exit());
    }

    /// `strchr(s, c)` / `strrchr(s, c)`: the rest of `s` from the first (last) `c`, or NULL.
    fn strchr(&mut self, last: bool, res: u32, a: &[Val]) {
        let strsize = self.strsize() as i32;
        let t = self.scratch(strsize as u32);
        let v = self.scratch(8);
        self.copy_string(t, &a[0]);
        self.st_slot_imm(v, -1);
        regs::read_into(&mut self.e, a[1].reg, R5);
        self.e.emit(Insn::alu64_imm(BPF_AND, R5, 0xff));
        let found = self.e.label();
        let done = self.e.label();
        let top = self.e.label();
        self.e.emit(Insn::mov64_imm(R1, 0));
        self.e.bind(top);
        self.e.jmp_imm(BPF_JGE, R1, strsize, done);
        self.ld_byte(R2, t, R1);
        if last {
            let skip = self.e.label();
            self.e.jmp_reg(BPF_JNE, R2, R5, skip);
            self.st_slot(v, R1);
            self.e.bind(skip);
        } else {
            self.exit_if_reg(BPF_JEQ, R2, R5, found);
        }
        self.exit_if(BPF_JEQ, R2, 0, done);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.e.goto(top);
        if !last {
            self.e.bind(found);
            self.st_slot(v, R1);
        }
        self.e.bind(done);
        let missing = self.e.label();
        self.ld_slot(R4, v);
        self.exit_if(BPF_JGT, R4, strsize - 1, missing);
        self.copy_tail(res, t, R4);
        self.string_result_or_null(&a[0], res, missing);
    }

    /// `toupper(s)` (`lo` = 'a') / `tolower(s)` (`lo` = 'A'): flip the case of letters in
    /// `lo..=lo+25`, without branches.
    fn change_case(&mut self, lo: u8, res: u32, a: &[Val]) {
        let strsize = self.strsize() as i32;
        self.copy_string(res, &a[0]);
        let top = self.e.label();
        let done = self.e.label();
        self.e.emit(Insn::mov64_imm(R1, 0));
        self.e.bind(top);
        self.e.jmp_imm(BPF_JGE, R1, strsize, done);
        self.e.emit(Insn::mov64_reg(R2, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R1));
        let off = self.small(res);
        self.e.emit(Insn::ldx(Size::B, R3, R2, off));
        self.exit_if(BPF_JEQ, R3, 0, done);
        // r4 = 32 if (c - lo) & 0xff < 26, else 0.
        self.e.emit(Insn::mov64_reg(R4, R3));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R4, lo as i32));
        self.e.emit(Insn::alu64_imm(BPF_AND, R4, 0xff));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R4, 26));
        self.e.emit(Insn::alu64_imm(BPF_RSH, R4, 63));
        self.e.emit(Insn::alu64_imm(BPF_LSH, R4, 5));
        self.e.emit(Insn::alu64_reg(BPF_XOR, R3, R4));
        self.e.emit(Insn::stx(Size::B, R2, off, R3));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.e.goto(top);
        self.e.bind(done);
        self.string_result(&a[0], res);
    }

    /// `lltostr(n[, base])`: digits of `n` in `base` (2-36; "0x" prefix for 16, "0" for 8,
    /// '-' for negative numbers in base 10; other bases show the 64-bit two's complement).
    /// An invalid base gives "" (DTrace reports an illegal operation).
    fn lltostr(&mut self, res: u32, a: &[Val]) {
        let d = self.scratch(80);
        let v = self.scratch(8);
        let empty = self.e.label();
        let out = self.e.label();
        regs::read_into(&mut self.e, a[0].reg, R1);
        match a.get(1) {
            Some(b) => regs::read_into(&mut self.e, b.reg, R2),
            None => self.e.emit(Insn::mov64_imm(R2, 10)),
        }
        self.e.jmp_imm(BPF_JSLT, R2, 2, empty);
        self.e.jmp_imm(BPF_JSGT, R2, 36, empty);
        self.st_slot(v, R1);
        // r3 = the magnitude to print.
        self.e.emit(Insn::mov64_reg(R3, R1));
        let unsigned = self.e.label();
        self.e.jmp_imm(BPF_JNE, R2, 10, unsigned);
        self.e.jmp_imm(BPF_JSGE, R3, 0, unsigned);
        self.e.emit(Insn::alu64_imm(BPF_NEG, R3, 0));
        self.e.bind(unsigned);
        self.st_byte(d + 71, 0);
        // Digits right to left, at d + 70 - r4.
        let top = self.e.label();
        let digits = self.e.label();
        self.e.emit(Insn::mov64_imm(R4, 0));
        self.e.bind(top);
        self.e.jmp_imm(BPF_JGE, R4, 64, digits);
        self.exit_if(BPF_JEQ, R3, 0, digits);
        self.e.emit(Insn::mov64_reg(R5, R3));
        self.e.emit(Insn::alu64_reg(BPF_MOD, R5, R2));
        self.e.emit(Insn::alu64_reg(BPF_DIV, R3, R2));
        // r0 = '0' + digit, plus 39 more for digits above 9 ('a' - '0' - 10).
        self.e.emit(Insn::mov64_imm(R0, 9));
        self.e.emit(Insn::alu64_reg(BPF_SUB, R0, R5));
        self.e.emit(Insn::alu64_imm(BPF_ARSH, R0, 63));
        self.e.emit(Insn::alu64_imm(BPF_AND, R0, 39));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R0, R5));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R0, b'0' as i32));
        self.e.emit(Insn::mov64_reg(R1, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_SUB, R1, R4));
        let off = self.small(d + 70);
        self.e.emit(Insn::stx(Size::B, R1, off, R0));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R4, 1));
        self.e.goto(top);
        self.e.bind(digits);
        // r0 = index of the first character; prefixes go before it.
        self.e.emit(Insn::mov64_imm(R0, 71));
        self.e.emit(Insn::alu64_reg(BPF_SUB, R0, R4));
        self.ld_slot(R1, v);
        let prefix = |g: &mut Self, ch: u8| {
            g.e.emit(Insn::alu64_imm(BPF_SUB, R0, 1));
            g.e.emit(Insn::mov64_reg(R3, SCRATCH));
            g.e.emit(Insn::alu64_reg(BPF_ADD, R3, R0));
            let off = g.small(d);
            g.e.emit(Insn::st(Size::B, R3, off, ch as i32));
        };
        let l1 = self.e.label();
        self.e.jmp_imm(BPF_JNE, R1, 0, l1);
        self.e.jmp_imm(BPF_JNE, R2, 16, l1);
        prefix(self, b'0');
        self.e.bind(l1);
        let l2 = self.e.label();
        self.e.jmp_imm(BPF_JNE, R2, 16, l2);
        prefix(self, b'x');
        self.e.bind(l2);
        let zero = self.e.label();
        let l3 = self.e.label();
        self.e.jmp_imm(BPF_JEQ, R1, 0, zero);
        self.e.jmp_imm(BPF_JEQ, R2, 8, zero);
        self.e.jmp_imm(BPF_JEQ, R2, 16, zero);
        self.e.goto(l3);
        self.e.bind(zero);
        prefix(self, b'0');
        self.e.bind(l3);
        let l4 = self.e.label();
        self.e.jmp_imm(BPF_JSGE, R1, 0, l4);
        self.e.jmp_imm(BPF_JNE, R2, 10, l4);
        prefix(self, b'-');
        self.e.bind(l4);
        self.e.emit(Insn::mov64_reg(R4, R0));
        self.copy_tail(res, d, R4);
        self.e.goto(out);
        self.e.bind(empty);
        self.st_byte(res, 0);
        self.e.bind(out);
        self.string_result(&a[0], res);
    }

    /// `basename(s)` / `dirname(s)` as DTrace computes them: trailing slashes ignored, "/"
    /// for a string of slashes, "." for "" (and for the dirname of a bare name).
    fn path_part(&mut self, dir: bool, res: u32, a: &[Val]) {
        let strsize = self.strsize() as i32;
        let t = self.scratch(strsize as u32);
        let v = self.scratch(32);
        // Start of the last component, last non-slash before it, last non-slash, length.
        let (start_s, dirend_s, last_s, len_s) = (v, v + 8, v + 16, v + 24);
        self.copy_string(t, &a[0]);
        self.st_slot(len_s, R0);
        self.st_slot_imm(start_s, 0);
        self.st_slot_imm(dirend_s, -1);
        self.st_slot_imm(last_s, -1);
        let top = self.e.label();
        let done = self.e.label();
        let cont = self.e.label();
        self.e.emit(Insn::mov64_imm(R1, 0));
        self.e.bind(top);
        self.e.jmp_imm(BPF_JGE, R1, strsize, done);
        self.e.emit(Insn::mov64_reg(R2, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R1));
        let off = self.small(t);
        self.e.emit(Insn::ldx(Size::B, R3, R2, off));
        self.exit_if(BPF_JEQ, R3, 0, done);
        self.e.jmp_imm(BPF_JEQ, R3, b'/' as i32, cont);
        // A non-slash after a slash starts a component.
        let not_start = self.e.label();
        self.e.jmp_imm(BPF_JEQ, R1, 0, not_start);
        self.e.emit(Insn::ldx(Size::B, R4, R2, off - 1));
        self.e.jmp_imm(BPF_JNE, R4, b'/' as i32, not_start);
        self.st_slot(start_s, R1);
        self.ld_slot(R4, last_s);
        self.st_slot(dirend_s, R4);
        self.e.bind(not_start);
        self.st_slot(last_s, R1);
        self.e.bind(cont);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.e.goto(top);
        self.e.bind(done);
        let dot = self.e.label();
        let slash = self.e.label();
        let out = self.e.label();
        self.ld_slot(R1, len_s);
        self.e.jmp_imm(BPF_JEQ, R1, 0, dot);
        self.ld_slot(R2, last_s);
        self.e.jmp_imm(BPF_JSLT, R2, 0, slash);
        // r1 = first byte, r2 = last byte of the result.
        self.ld_slot(R1, start_s);
        if dir {
            self.e.jmp_imm(BPF_JEQ, R1, 0, dot);
            self.ld_slot(R2, dirend_s);
            self.e.jmp_imm(BPF_JSLT, R2, 0, slash);
            self.e.emit(Insn::mov64_imm(R1, 0));
        }
        self.e.emit(Insn::mov64_reg(R3, R2));
        self.e.emit(Insn::alu64_reg(BPF_SUB, R3, R1));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R3, 1));
        self.exit_if(BPF_JGT, R1, strsize - 1, dot);
        self.exit_if(BPF_JSLT, R3, 1, dot);
        self.e.emit(Insn::jmp_imm(BPF_JLE, R3, strsize - 1, 1));
        self.e.emit(Insn::mov64_imm(R3, strsize - 1));
        self.st_slot(len_s, R3);
        self.e.emit(Insn::mov64_reg(R2, R3));
        self.e.emit(Insn::mov64_reg(R3, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R1));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R3, t as i32));
        self.scratch_addr(R1, res);
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
        self.ld_slot(R1, len_s);
        self.exit_if(BPF_JGT, R1, strsize - 1, dot);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, SCRATCH));
        let roff = self.small(res);
        self.e.emit(Insn::st(Size::B, R1, roff, 0));
        self.e.goto(out);
        self.e.bind(dot);
        self.st_byte(res, b'.');
        self.st_byte(res + 1, 0);
        self.e.goto(out);
        self.e.bind(slash);
        self.st_byte(res, b'/');
        self.st_byte(res + 1, 0);
        self.e.bind(out);
        self.string_result(&a[0], res);
    }

    /// `strtoll(s[, base])`: leading white space, an optional sign, "0x" when the base is
    /// 16, then the digits valid in `base` (2-36, default 10); 0 for an invalid base.
    fn strtoll(&mut self, a: &[Val]) {
        let strsize = self.strsize() as i32;
        let t = self.scratch(strsize as u32);
        let v = self.scratch(32);
        let (pos_s, neg_s, acc_s, base_s) = (v, v + 8, v + 16, v + 24);
        self.copy_string(t, &a[0]);
        match a.get(1) {
            Some(b) => regs::read_into(&mut self.e, b.reg, R2),
            None => self.e.emit(Insn::mov64_imm(R2, 10)),
        }
        self.st_slot(base_s, R2);
        self.st_slot_imm(acc_s, 0);
        self.st_slot_imm(neg_s, 0);
        let done = self.e.label();
        let conv_done = self.e.label();
        self.e.jmp_imm(BPF_JSLT, R2, 2, done);
        self.e.jmp_imm(BPF_JSGT, R2, 36, done);
        // Skip white space (' ', '\t'..'\r').
        let ws = self.e.label();
        let ws_next = self.e.label();
        let ws_done = self.e.label();
        self.e.emit(Insn::mov64_imm(R1, 0));
        self.e.bind(ws);
        self.e.jmp_imm(BPF_JGE, R1, strsize, ws_done);
        self.st_slot(pos_s, R1);
        self.ld_byte(R3, t, R1);
        self.e.emit(Insn::mov64_reg(R4, R3));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R4, 9));
        self.e.jmp_imm(BPF_JLT, R4, 5, ws_next);
        self.e.jmp_imm(BPF_JEQ, R3, b' ' as i32, ws_next);
        self.e.goto(ws_done);
        self.e.bind(ws_next);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.e.goto(ws);
        self.e.bind(ws_done);
        // Sign.
        self.ld_slot(R1, pos_s);
        self.exit_if(BPF_JGT, R1, strsize - 1, conv_done);
        self.ld_byte(R3, t, R1);
        let minus = self.e.label();
        let signed = self.e.label();
        let skip_sign = self.e.label();
        self.e.jmp_imm(BPF_JEQ, R3, b'-' as i32, minus);
        self.e.jmp_imm(BPF_JEQ, R3, b'+' as i32, skip_sign);
        self.e.goto(signed);
        self.e.bind(minus);
        self.st_slot_imm(neg_s, 1);
        self.e.bind(skip_sign);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.st_slot(pos_s, R1);
        self.e.bind(signed);
        // "0x" / "0X" in base 16.
        let digits = self.e.label();
        self.ld_slot(R4, base_s);
        self.e.jmp_imm(BPF_JNE, R4, 16, digits);
        self.ld_slot(R1, pos_s);
        self.exit_if(BPF_JGT, R1, strsize - 2, digits);
        self.ld_byte(R3, t, R1);
        self.e.jmp_imm(BPF_JNE, R3, b'0' as i32, digits);
        self.ld_byte(R3, t + 1, R1);
        self.e.emit(Insn::alu64_imm(BPF_OR, R3, 0x20));
        self.e.jmp_imm(BPF_JNE, R3, b'x' as i32, digits);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 2));
        self.st_slot(pos_s, R1);
        self.e.bind(digits);
        // Digits: r5 counts them.
        let top = self.e.label();
        let have = self.e.label();
        self.e.emit(Insn::mov64_imm(R5, 0));
        self.e.bind(top);
        self.e.jmp_imm(BPF_JGE, R5, strsize, conv_done);
        self.ld_slot(R1, pos_s);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, R5));
        self.exit_if(BPF_JGT, R1, strsize - 1, conv_done);
        self.ld_byte(R3, t, R1);
        self.e.emit(Insn::mov64_reg(R4, R3));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R4, b'0' as i32));
        self.e.jmp_imm(BPF_JLT, R4, 10, have);
        self.e.emit(Insn::mov64_reg(R4, R3));
        self.e.emit(Insn::alu64_imm(BPF_OR, R4, 0x20));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R4, b'a' as i32));
        self.exit_if(BPF_JGE, R4, 26, conv_done);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R4, 10));
        self.e.bind(have);
        self.ld_slot(R0, base_s);
        self.exit_if_reg(BPF_JGE, R4, R0, conv_done);
        self.ld_slot(R1, acc_s);
        self.e.emit(Insn::alu64_reg(BPF_MUL, R1, R0));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, R4));
        self.st_slot(acc_s, R1);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R5, 1));
        self.e.goto(top);
        self.e.bind(conv_done);
        self.ld_slot(R0, acc_s);
        self.ld_slot(R1, neg_s);
        self.e.emit(Insn::jmp_imm(BPF_JEQ, R1, 0, 1));
        self.e.emit(Insn::alu64_imm(BPF_NEG, R0, 0));
        self.st_slot(acc_s, R0);
        self.e.bind(done);
        self.ld_slot(R0, acc_s);
        regs::write(&mut self.e, a[0].reg, R0);
    }
}

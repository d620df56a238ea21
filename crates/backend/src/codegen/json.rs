//! `json(s, elemspec)`, illumos DTrace's subroutine: the value that `elemspec` selects in
//! the JSON text `s`, as a string, or NULL.
//!
//! The selector names object members and array elements: `a.b`, `list[2]`, `[0].name`.
//! It is first split into a packed list of NUL-terminated elements (`list[2]` becomes
//! `list\0` `2\0`; a leading `[` and every `]` are dropped). The text is then read once,
//! left to right, by the state machine DTrace's `dtrace_json()` runs, with its results: a
//! string value comes back as the bytes between its quotes (escapes left as written), a
//! number, `true`, `false` or `null` as written, an object or array whole; anything the
//! machine does not expect (a missing member, a value where an object was selected, text
//! that is not JSON) gives NULL. It is not a validator: the text past the selected value is
//! not read.
//!
//! The split and the machine run one byte per step, each step a `bpf_loop` callback (two
//! per program, emitted after the program's functions like the substring search's), so the
//! verifier checks a step once per call, whatever the text's length; the selector's
//! elements are found by index in small tables (their starts and numbers, filled by the
//! split), so no step loops. The state lives in the program's json area in scratch. A
//! selector of more than 64 elements gives NULL.

use dtrace_ebpf::*;

use super::regs::SCRATCH;
use super::{Gen, Val};
use crate::emit::Label;

/// The machine's states (DTrace's `DTRACE_JSON_*`).
const REST: i32 = 0;
const OBJECT: i32 = 1;
const STRING: i32 = 2;
const ESCAPE: i32 = 3;
const UNICODE: i32 = 4;
const COLON: i32 = 5;
const COMMA: i32 = 6;
const IDENT: i32 = 7;
const NUMBER: i32 = 8;
const FRACTION: i32 = 9;
const EXPONENT: i32 = 10;
const VALUE: i32 = 11;
const COLLECT: i32 = 12;

/// The machine's variables, a u64 slot each.
#[derive(Clone, Copy)]
enum Var {
    /// Offset of the byte the next step reads.
    Cur,
    State,
    /// The selected array position (from the element) and the position being read.
    ArrayElem,
    ArrayPos,
    /// Hex digits read of a `\u` escape.
    Unicount,
    /// The string being read is a member name.
    IsKey,
    /// The string being read is inside an object or array being collected.
    InCollect,
    /// The value being read is the selected one.
    Found,
    InArray,
    Braces,
    Brackets,
    /// Offset in the element list of the current element, and the elements left.
    Elem,
    Nelems,
    /// Length of what is in the value buffer.
    Dest,
    /// 1 once the selected value is in the value buffer.
    Result,
    /// The member name read so far equals the current element's start.
    KeyOk,
    /// Index of the current element (in the tables of their starts and numbers).
    ElemIdx,
    /// The selector's split: the selector byte it reads next; the element's number so
    /// far, its sign, and whether its bytes so far are a number; the element has no byte
    /// yet; the selector has more elements than the tables hold.
    SpecPos,
    Number,
    Negative,
    InNumber,
    AtStart,
    TooMany,
}

const VARS: u32 = 23;

/// The most elements a selector may have (more: `json()` gives NULL).
const MAX_ELEMS: u32 = 64;

/// Where a program's `json()` calls work: copies of the text and the selector (split in
/// place into the element list) with the element tables, the value buffer and the variables; and the labels of the
/// `bpf_loop` callbacks (one step of the machine, one byte of the selector's split).
#[derive(Clone, Copy)]
pub(crate) struct JsonArea {
    text: u32,
    /// The selector, split in place into the element list (an element is never longer
    /// than the selector bytes it comes from).
    elems: u32,
    /// Each element's start in `elems` (u16) and its number as `strtoll` reads it (i64).
    starts: u32,
    numbers: u32,
    dest: u32,
    vars: u32,
    callback: Label,
    split_callback: Label,
}

impl JsonArea {
    fn var(&self, v: Var) -> u32 {
        self.vars + 8 * v as u32
    }
}

impl Gen<'_, '_> {
    /// The program's json area (allocated on its first `json()`, before the caller's
    /// temporaries, and kept for the whole program).
    pub(super) fn json_area(&mut self) -> JsonArea {
        if let Some(area) = self.json {
            return area;
        }
        let strsize = self.strsize();
        let area = JsonArea {
            text: self.scratch(strsize),
            elems: self.scratch(strsize + 8),
            starts: self.scratch(2 * MAX_ELEMS),
            numbers: self.scratch(8 * MAX_ELEMS),
            dest: self.scratch(strsize),
            vars: self.scratch(8 * VARS),
            callback: self.e.label(),
            split_callback: self.e.label(),
        };
        self.json = Some(area);
        area
    }

    /// `json(a[0], a[1])` into the result buffer `res`.
    pub(super) fn json(&mut self, res: u32, a: &[Val]) {
        let strsize = self.strsize() as i32;
        let area = self.json_area();
        let var = |v| area.var(v);
        self.copy_string(area.text, &a[0]);
        self.copy_string(area.elems, &a[1]);

        // Split the selector into the element list and its tables.
        for v in [
            Var::SpecPos,
            Var::Dest,
            Var::ElemIdx,
            Var::Number,
            Var::Negative,
            Var::TooMany,
        ] {
            self.st_slot_imm(var(v), 0);
        }
        self.st_slot_imm(var(Var::InNumber), 1);
        self.st_slot_imm(var(Var::AtStart), 1);
        let starts = self.small(area.starts);
        self.e.emit(Insn::st(Size::H, SCRATCH, starts, 0));
        self.run_loop(strsize, area.split_callback);
        let missing = self.e.label();
        self.ld_slot(R1, var(Var::TooMany));
        self.exit_if(BPF_JNE, R1, 0, missing);
        self.end_element(area);
        self.ld_slot(R1, var(Var::ElemIdx));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.st_slot(var(Var::Nelems), R1);

        // Run the machine.
        for v in [
            Var::Cur,
            Var::State,
            Var::ArrayPos,
            Var::Unicount,
            Var::IsKey,
            Var::InCollect,
            Var::Found,
            Var::InArray,
            Var::Braces,
            Var::Brackets,
            Var::Elem,
            Var::Dest,
            Var::Result,
            Var::KeyOk,
            Var::ElemIdx,
        ] {
            self.st_slot_imm(var(v), 0);
        }
        self.e.emit(Insn::mov64_imm(R1, 1));
        self.e.emit(Insn::alu64_imm(BPF_LSH, R1, 63));
        self.st_slot(var(Var::ArrayElem), R1);
        // A step reads a byte, or (after a number or a literal) reads it again once.
        self.run_loop(2 * strsize, area.callback);

        self.ld_slot(R1, var(Var::Result));
        self.exit_if(BPF_JEQ, R1, 0, missing);
        self.e.emit(Insn::mov64_imm(R4, 0));
        self.copy_tail(res, area.dest, R4);
        self.string_result_or_null(&a[0], res, missing);
    }

    /// The json callback, if the program calls `json()`: `bpf_loop` calls it with r2 = the
    /// caller's stack slot holding the scratch pointer. It runs one step of the machine on
    /// the byte at `Cur` and returns 0 to go on, 1 when the machine is done (the value in
    /// the value buffer and `Result` set, or not found). Emitted once, after the program's
    /// functions.
    ///
    /// Registers: r6 = `Cur`, r7 = the byte; r0-r5 and r8 are temporaries.
    pub(crate) fn json_callback(&mut self) {
        let Some(area) = self.json else {
            return;
        };
        let strsize = self.strsize() as i32;
        let var = |v| area.var(v);
        let l = |g: &mut Self| g.e.label();
        let (advance, again, stop, found) = (l(self), l(self), l(self), l(self));
        let states: Vec<Label> = (0..=COLLECT).map(|_| self.e.label()).collect();

        self.e.bind(area.callback);
        self.e.emit(Insn::ldx(Size::DW, SCRATCH, R2, 0));
        self.ld_slot(R6, var(Var::Cur));
        self.exit_if(BPF_JGE, R6, strsize, stop);
        self.ld_byte(R7, area.text, R6);
        self.exit_if(BPF_JEQ, R7, 0, stop);
        self.ld_slot(R8, var(Var::State));
        for (s, &label) in states.iter().enumerate() {
            self.e.jmp_imm(BPF_JEQ, R8, s as i32, label);
        }
        self.e.goto(stop);

        // REST: the top-level object or array.
        self.e.bind(states[REST as usize]);
        self.if_space(advance);
        let array = l(self);
        self.if_byte(b'[', array);
        self.if_byte_not(b'{', stop);
        self.st_slot_imm(var(Var::State), OBJECT);
        self.e.goto(advance);
        self.e.bind(array);
        self.st_slot_imm(var(Var::InArray), 1);
        let enter_array = l(self);
        self.e.goto(enter_array);

        // OBJECT: a member's name starts, or the member was not there.
        self.e.bind(states[OBJECT as usize]);
        self.if_space(advance);
        self.if_byte_not(b'"', stop);
        self.st_slot_imm(var(Var::State), STRING);
        self.st_slot_imm(var(Var::IsKey), 1);
        self.st_slot_imm(var(Var::KeyOk), 1);
        self.e.goto(advance);

        // STRING: a name or a string value, up to its closing quote.
        self.e.bind(states[STRING as usize]);
        let (escape, close) = (l(self), l(self));
        self.if_byte(b'\\', escape);
        self.if_byte(b'"', close);
        self.put(area, stop);
        self.e.goto(advance);
        self.e.bind(escape);
        self.put(area, stop);
        self.st_slot_imm(var(Var::State), ESCAPE);
        self.e.goto(advance);
        self.e.bind(close);
        let (not_collect, not_key, not_found, key_done) = (l(self), l(self), l(self), l(self));
        self.ld_slot(R1, var(Var::InCollect));
        self.e.jmp_imm(BPF_JEQ, R1, 0, not_collect);
        self.put(area, stop);
        self.st_slot_imm(var(Var::InCollect), 0);
        self.st_slot_imm(var(Var::State), COLLECT);
        self.e.goto(advance);
        self.e.bind(not_collect);
        self.ld_slot(R1, var(Var::IsKey));
        self.e.jmp_imm(BPF_JEQ, R1, 0, not_key);
        // A name: the member is selected when it equals the whole element.
        self.ld_slot(R1, var(Var::KeyOk));
        self.e.jmp_imm(BPF_JEQ, R1, 0, key_done);
        self.ld_slot(R1, var(Var::Elem));
        self.ld_slot(R2, var(Var::Dest));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, R2));
        self.e.jmp_imm(BPF_JGT, R1, strsize, key_done);
        self.ld_byte(R2, area.elems, R1);
        self.e.jmp_imm(BPF_JNE, R2, 0, key_done);
        self.st_slot_imm(var(Var::Found), 1);
        self.e.bind(key_done);
        self.st_slot_imm(var(Var::Dest), 0);
        self.st_slot_imm(var(Var::IsKey), 0);
        self.st_slot_imm(var(Var::State), COLON);
        self.e.goto(advance);
        self.e.bind(not_key);
        self.ld_slot(R1, var(Var::Found));
        self.e.jmp_imm(BPF_JEQ, R1, 0, not_found);
        self.value_found(area, stop, found);
        self.e.bind(not_found);
        self.st_slot_imm(var(Var::Dest), 0);
        self.st_slot_imm(var(Var::State), COMMA);
        self.e.goto(advance);

        // ESCAPE: the byte after a backslash; UNICODE: the four hex digits of `\u`.
        self.e.bind(states[ESCAPE as usize]);
        self.put(area, stop);
        self.st_slot_imm(var(Var::State), STRING);
        self.if_byte_not(b'u', advance);
        self.st_slot_imm(var(Var::Unicount), 0);
        self.st_slot_imm(var(Var::State), UNICODE);
        self.e.goto(advance);
        self.e.bind(states[UNICODE as usize]);
        let (hex, digit) = (l(self), l(self));
        self.if_in(b'0', b'9', hex);
        self.e.emit(Insn::mov64_reg(R1, R7));
        self.e.emit(Insn::alu64_imm(BPF_OR, R1, 0x20));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R1, b'a' as i32));
        self.e.jmp_imm(BPF_JGT, R1, 5, stop);
        self.e.bind(hex);
        self.put(area, stop);
        self.ld_slot(R1, var(Var::Unicount));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.st_slot(var(Var::Unicount), R1);
        self.e.jmp_imm(BPF_JLT, R1, 4, advance);
        self.st_slot_imm(var(Var::State), STRING);
        self.e.goto(advance);

        // COLON: between a name and its value.
        self.e.bind(states[COLON as usize]);
        self.if_space(advance);
        self.if_byte_not(b':', stop);
        self.st_slot_imm(var(Var::State), VALUE);
        self.e.goto(advance);

        // COMMA: after a value, the next member or element (the end of the object or
        // array means the selected one is not there).
        self.e.bind(states[COMMA as usize]);
        self.if_space(advance);
        self.if_byte_not(b',', stop);
        self.st_slot_imm(var(Var::State), OBJECT);
        self.ld_slot(R1, var(Var::InArray));
        self.e.jmp_imm(BPF_JEQ, R1, 0, advance);
        self.st_slot_imm(var(Var::State), VALUE);
        self.ld_slot(R1, var(Var::ArrayPos));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.st_slot(var(Var::ArrayPos), R1);
        self.ld_slot(R2, var(Var::ArrayElem));
        self.e.jmp_reg(BPF_JNE, R1, R2, advance);
        self.st_slot_imm(var(Var::Found), 1);
        self.e.goto(advance);

        // IDENT: `true`, `false` or `null`; the byte after it is read again.
        self.e.bind(states[IDENT as usize]);
        self.if_in(b'a', b'z', digit);
        self.ld_slot(R1, var(Var::Dest));
        let word = self.small(area.dest);
        self.e.emit(Insn::ldx(Size::W, R2, SCRATCH, word));
        let (four, literal) = (l(self), l(self));
        self.e.jmp_imm(BPF_JEQ, R1, 4, four);
        self.e.jmp_imm(BPF_JNE, R1, 5, stop);
        self.e
            .jmp_imm(BPF_JNE, R2, u32::from_le_bytes(*b"fals") as i32, stop);
        let fifth = self.small(area.dest + 4);
        self.e.emit(Insn::ldx(Size::B, R2, SCRATCH, fifth));
        self.e.jmp_imm(BPF_JNE, R2, b'e' as i32, stop);
        self.e.goto(literal);
        self.e.bind(four);
        self.e
            .jmp_imm(BPF_JEQ, R2, u32::from_le_bytes(*b"true") as i32, literal);
        self.e
            .jmp_imm(BPF_JNE, R2, u32::from_le_bytes(*b"null") as i32, stop);
        self.e.bind(literal);
        self.scalar_done(area, stop, found, again);
        // A lower-case letter (and, below, a digit or sign of a number): kept.
        self.e.bind(digit);
        self.put(area, stop);
        self.e.goto(advance);

        // NUMBER, FRACTION, EXPONENT: a number, up to the first byte not of it, which is
        // read again.
        self.e.bind(states[NUMBER as usize]);
        let (to_fraction, to_exponent) = (l(self), l(self));
        self.if_byte(b'.', to_fraction);
        self.if_byte(b'x', stop);
        self.if_byte(b'X', stop);
        self.e.bind(states[FRACTION as usize]);
        self.if_byte(b'e', to_exponent);
        self.if_byte(b'E', to_exponent);
        self.if_byte(b'+', stop);
        self.if_byte(b'-', stop);
        self.e.bind(states[EXPONENT as usize]);
        self.if_byte(b'+', digit);
        self.if_byte(b'-', digit);
        self.if_in(b'0', b'9', digit);
        self.scalar_done(area, stop, found, again);
        self.e.bind(to_fraction);
        self.put(area, stop);
        self.st_slot_imm(var(Var::State), FRACTION);
        self.e.goto(advance);
        self.e.bind(to_exponent);
        self.put(area, stop);
        self.st_slot_imm(var(Var::State), EXPONENT);
        self.e.goto(advance);

        // VALUE: a value starts.
        self.e.bind(states[VALUE as usize]);
        self.if_space(advance);
        let (nested, skip_nested, quote, ident, number) =
            (l(self), l(self), l(self), l(self), l(self));
        self.if_byte(b'{', nested);
        self.if_byte(b'[', nested);
        self.if_byte(b'"', quote);
        self.if_in(b'a', b'z', ident);
        self.if_byte(b'-', number);
        self.if_in(b'0', b'9', number);
        self.e.goto(stop);
        self.e.bind(quote);
        self.st_slot_imm(var(Var::State), STRING);
        self.e.goto(advance);
        self.e.bind(ident);
        self.put(area, stop);
        self.st_slot_imm(var(Var::State), IDENT);
        self.e.goto(advance);
        self.e.bind(number);
        self.put(area, stop);
        self.st_slot_imm(var(Var::State), NUMBER);
        self.e.goto(advance);
        // An object or array: descend into it when it is selected and elements are left,
        // else collect it (to return it, or to skip it).
        self.e.bind(nested);
        self.ld_slot(R1, var(Var::Found));
        self.e.jmp_imm(BPF_JEQ, R1, 0, skip_nested);
        self.ld_slot(R1, var(Var::Nelems));
        self.e.jmp_imm(BPF_JSLE, R1, 1, skip_nested);
        self.e.emit(Insn::alu64_imm(BPF_SUB, R1, 1));
        self.st_slot(var(Var::Nelems), R1);
        self.st_slot_imm(var(Var::Dest), 0);
        self.next_element(area, stop);
        self.st_slot_imm(var(Var::InArray), 0);
        self.st_slot_imm(var(Var::Found), 0);
        self.st_slot_imm(var(Var::State), OBJECT);
        self.if_byte_not(b'[', advance);
        self.st_slot_imm(var(Var::InArray), 1);
        self.e.bind(enter_array);
        // An array's first element is selected when the element's number is 0.
        self.st_slot_imm(var(Var::State), VALUE);
        self.st_slot_imm(var(Var::ArrayPos), 0);
        self.element_number(area);
        self.st_slot(var(Var::ArrayElem), R3);
        self.e.jmp_imm(BPF_JNE, R3, 0, advance);
        self.st_slot_imm(var(Var::Found), 1);
        self.e.goto(advance);
        self.e.bind(skip_nested);
        self.st_slot_imm(var(Var::Brackets), 0);
        self.st_slot_imm(var(Var::Braces), 0);
        let brace = l(self);
        self.if_byte(b'{', brace);
        self.st_slot_imm(var(Var::Brackets), 1);
        let opened = l(self);
        self.e.goto(opened);
        self.e.bind(brace);
        self.st_slot_imm(var(Var::Braces), 1);
        self.e.bind(opened);
        self.put(area, stop);
        self.st_slot_imm(var(Var::State), COLLECT);
        self.e.goto(advance);

        // COLLECT: the bytes of an object or array, up to its balancing close.
        self.e.bind(states[COLLECT as usize]);
        self.put(area, stop);
        let (not_quote, counted) = (l(self), l(self));
        self.if_byte_not(b'"', not_quote);
        self.st_slot_imm(var(Var::InCollect), 1);
        self.st_slot_imm(var(Var::State), STRING);
        self.e.goto(advance);
        self.e.bind(not_quote);
        self.nesting(var(Var::Brackets), b'[', b']', stop, counted);
        self.nesting(var(Var::Braces), b'{', b'}', stop, counted);
        self.e.bind(counted);
        self.ld_slot(R1, var(Var::Brackets));
        self.ld_slot(R2, var(Var::Braces));
        self.e.emit(Insn::alu64_reg(BPF_OR, R1, R2));
        self.e.jmp_imm(BPF_JNE, R1, 0, advance);
        let skipped = l(self);
        self.ld_slot(R1, var(Var::Found));
        self.e.jmp_imm(BPF_JEQ, R1, 0, skipped);
        self.e.goto(found);
        self.e.bind(skipped);
        self.st_slot_imm(var(Var::Dest), 0);
        self.st_slot_imm(var(Var::State), COMMA);
        self.e.goto(advance);

        // The selected value is in the value buffer: end it and stop.
        self.e.bind(found);
        self.ld_slot(R1, var(Var::Dest));
        self.exit_if(BPF_JGT, R1, strsize - 1, stop);
        self.e.emit(Insn::mov64_imm(R2, 0));
        self.store_byte(area.dest, R1, R2);
        self.st_slot_imm(var(Var::Result), 1);
        self.e.bind(stop);
        self.e.emit(Insn::mov64_imm(R0, 1));
        self.e.emit(Insn::exit());
        self.e.bind(advance);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R6, 1));
        self.st_slot(var(Var::Cur), R6);
        self.e.bind(again);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.emit(Insn::exit());
    }

    /// Append the byte (r7) to the value buffer (stop when it is full), noting whether the
    /// name read so far still matches the current element. Clobbers r0-r3.
    fn put(&mut self, area: JsonArea, stop: Label) {
        let strsize = self.strsize() as i32;
        let (differs, done) = (self.e.label(), self.e.label());
        self.ld_slot(R1, area.var(Var::Dest));
        self.exit_if(BPF_JGT, R1, strsize - 2, stop);
        self.store_byte(area.dest, R1, R7);
        self.ld_slot(R2, area.var(Var::Elem));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R1));
        self.e.jmp_imm(BPF_JGT, R2, strsize, differs);
        self.ld_byte(R3, area.elems, R2);
        self.e.jmp_reg(BPF_JEQ, R3, R7, done);
        self.e.bind(differs);
        self.st_slot_imm(area.var(Var::KeyOk), 0);
        self.e.bind(done);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.st_slot(area.var(Var::Dest), R1);
    }

    /// A string value ended: if it is the selected one it is the result, unless elements
    /// are left (an object was selected, not a string): then there is none.
    fn value_found(&mut self, area: JsonArea, stop: Label, found: Label) {
        self.ld_slot(R1, area.var(Var::Nelems));
        self.e.jmp_imm(BPF_JSGT, R1, 1, stop);
        self.e.goto(found);
    }

    /// A number or literal ended (the byte in r7 is not part of it): the result if it is
    /// the selected value; else the machine reads the byte again after it.
    fn scalar_done(&mut self, area: JsonArea, stop: Label, found: Label, again: Label) {
        let skip = self.e.label();
        self.ld_slot(R1, area.var(Var::Found));
        self.e.jmp_imm(BPF_JEQ, R1, 0, skip);
        self.value_found(area, stop, found);
        self.e.bind(skip);
        self.st_slot_imm(area.var(Var::Dest), 0);
        self.st_slot_imm(area.var(Var::State), COMMA);
        self.e.goto(again);
    }

    /// End the current element of the split: its NUL in the element list and its number
    /// in the table. Clobbers r0-r3.
    fn end_element(&mut self, area: JsonArea) {
        let strsize = self.strsize() as i32;
        let var = |v| area.var(v);
        self.ld_slot(R1, var(Var::Dest));
        self.e.emit(Insn::jmp_imm(BPF_JLE, R1, strsize, 1));
        self.e.emit(Insn::mov64_imm(R1, strsize));
        self.e.emit(Insn::mov64_imm(R2, 0));
        self.store_byte(area.elems, R1, R2);
        self.ld_slot(R2, var(Var::Number));
        self.ld_slot(R3, var(Var::Negative));
        self.e.emit(Insn::jmp_imm(BPF_JEQ, R3, 0, 1));
        self.e.emit(Insn::alu64_imm(BPF_NEG, R2, 0));
        self.ld_slot(R1, var(Var::ElemIdx));
        self.e
            .emit(Insn::alu64_imm(BPF_AND, R1, MAX_ELEMS as i32 - 1));
        self.e.emit(Insn::alu64_imm(BPF_LSH, R1, 3));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, SCRATCH));
        let numbers = self.small(area.numbers);
        self.e.emit(Insn::stx(Size::DW, R1, numbers, R2));
    }

    /// The split callback: one byte of the selector (at `SpecPos`) into the element list.
    /// A leading `[` and every `]` are dropped; `.` and `[` end an element (a NUL, its
    /// number, the next one's start); other bytes are kept, and read as an optional sign
    /// and decimal digits for the element's number. Returns 1 at the selector's end.
    pub(crate) fn json_split_callback(&mut self) {
        let Some(area) = self.json else {
            return;
        };
        let strsize = self.strsize() as i32;
        let var = |v| area.var(v);
        let (stop, next, keep, split, too_many) = (
            self.e.label(),
            self.e.label(),
            self.e.label(),
            self.e.label(),
            self.e.label(),
        );
        self.e.bind(area.split_callback);
        self.e.emit(Insn::ldx(Size::DW, SCRATCH, R2, 0));
        self.ld_slot(R6, var(Var::SpecPos));
        self.exit_if(BPF_JGE, R6, strsize, stop);
        self.ld_byte(R7, area.elems, R6);
        self.exit_if(BPF_JEQ, R7, 0, stop);
        self.if_byte(b']', next);
        self.if_byte(b'.', split);
        self.if_byte_not(b'[', keep);
        self.e.jmp_imm(BPF_JEQ, R6, 0, next);
        self.e.bind(split);
        self.end_element(area);
        self.ld_slot(R1, var(Var::Dest));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.st_slot(var(Var::Dest), R1);
        self.ld_slot(R2, var(Var::ElemIdx));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R2, 1));
        self.exit_if(BPF_JGE, R2, MAX_ELEMS as i32, too_many);
        self.st_slot(var(Var::ElemIdx), R2);
        self.e.emit(Insn::alu64_imm(BPF_LSH, R2, 1));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, SCRATCH));
        let starts = self.small(area.starts);
        self.e.emit(Insn::stx(Size::H, R2, starts, R1));
        for v in [Var::Number, Var::Negative] {
            self.st_slot_imm(var(v), 0);
        }
        self.st_slot_imm(var(Var::InNumber), 1);
        self.st_slot_imm(var(Var::AtStart), 1);
        self.e.goto(next);

        self.e.bind(keep);
        self.ld_slot(R1, var(Var::Dest));
        self.exit_if(BPF_JGT, R1, strsize - 1, stop);
        self.store_byte(area.elems, R1, R7);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.st_slot(var(Var::Dest), R1);
        // The element's number: a sign first, then digits up to the first other byte.
        let (not_number, sign, minus, digit) = (
            self.e.label(),
            self.e.label(),
            self.e.label(),
            self.e.label(),
        );
        self.ld_slot(R1, var(Var::AtStart));
        self.st_slot_imm(var(Var::AtStart), 0);
        self.ld_slot(R2, var(Var::InNumber));
        self.e.jmp_imm(BPF_JEQ, R2, 0, next);
        self.e.jmp_imm(BPF_JEQ, R1, 0, digit);
        self.if_byte(b'+', sign);
        self.if_byte(b'-', minus);
        self.e.bind(digit);
        self.e.emit(Insn::mov64_reg(R1, R7));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R1, b'0' as i32));
        self.e.jmp_imm(BPF_JGT, R1, 9, not_number);
        self.ld_slot(R2, var(Var::Number));
        self.e.emit(Insn::alu64_imm(BPF_MUL, R2, 10));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R1));
        self.st_slot(var(Var::Number), R2);
        self.e.goto(next);
        self.e.bind(minus);
        self.st_slot_imm(var(Var::Negative), 1);
        self.e.bind(sign);
        self.e.goto(next);
        self.e.bind(not_number);
        self.st_slot_imm(var(Var::InNumber), 0);
        self.e.bind(next);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R6, 1));
        self.st_slot(var(Var::SpecPos), R6);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.emit(Insn::exit());
        self.e.bind(too_many);
        self.st_slot_imm(var(Var::TooMany), 1);
        self.e.bind(stop);
        self.e.emit(Insn::mov64_imm(R0, 1));
        self.e.emit(Insn::exit());
    }

    /// Make the next element the current one: `Elem` its start, r3 its number. Stops the
    /// machine past the last one.
    fn next_element(&mut self, area: JsonArea, stop: Label) {
        self.ld_slot(R1, area.var(Var::ElemIdx));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.exit_if(BPF_JGE, R1, MAX_ELEMS as i32, stop);
        self.st_slot(area.var(Var::ElemIdx), R1);
        self.e.emit(Insn::mov64_reg(R2, R1));
        self.e.emit(Insn::alu64_imm(BPF_LSH, R2, 1));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, SCRATCH));
        let starts = self.small(area.starts);
        self.e.emit(Insn::ldx(Size::H, R2, R2, starts));
        self.st_slot(area.var(Var::Elem), R2);
    }

    /// r3 = the current element's number, as DTrace's `strtoll` reads it.
    fn element_number(&mut self, area: JsonArea) {
        self.ld_slot(R1, area.var(Var::ElemIdx));
        self.e
            .emit(Insn::alu64_imm(BPF_AND, R1, MAX_ELEMS as i32 - 1));
        self.e.emit(Insn::alu64_imm(BPF_LSH, R1, 3));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, SCRATCH));
        let numbers = self.small(area.numbers);
        self.e.emit(Insn::ldx(Size::DW, R3, R1, numbers));
    }

    /// Count an opening or closing `open`/`close` byte (r7) in the nesting slot `slot`;
    /// a close with nothing open stops the machine. Goes to `counted` after a count.
    fn nesting(&mut self, slot: u32, open: u8, close: u8, stop: Label, counted: Label) {
        let (not_open, not_close) = (self.e.label(), self.e.label());
        self.if_byte_not(open, not_open);
        self.ld_slot(R1, slot);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, 1));
        self.st_slot(slot, R1);
        self.e.goto(counted);
        self.e.bind(not_open);
        self.if_byte_not(close, not_close);
        self.ld_slot(R1, slot);
        self.e.jmp_imm(BPF_JEQ, R1, 0, stop);
        self.e.emit(Insn::alu64_imm(BPF_SUB, R1, 1));
        self.st_slot(slot, R1);
        self.e.goto(counted);
        self.e.bind(not_close);
    }

    /// Go to `target` if the byte (r7) is `b`.
    fn if_byte(&mut self, b: u8, target: Label) {
        self.e.jmp_imm(BPF_JEQ, R7, b as i32, target);
    }

    /// Go to `target` if the byte (r7) is not `b`.
    fn if_byte_not(&mut self, b: u8, target: Label) {
        self.e.jmp_imm(BPF_JNE, R7, b as i32, target);
    }

    /// Go to `target` if the byte (r7) is white space (C's `isspace`). Clobbers r1.
    fn if_space(&mut self, target: Label) {
        self.if_byte(b' ', target);
        self.e.emit(Insn::mov64_reg(R1, R7));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R1, 9));
        self.e.jmp_imm(BPF_JLE, R1, 4, target);
    }

    /// Go to `target` if the byte (r7) is in `lo..=hi`. Clobbers r1.
    fn if_in(&mut self, lo: u8, hi: u8, target: Label) {
        self.e.emit(Insn::mov64_reg(R1, R7));
        self.e.emit(Insn::alu64_imm(BPF_SUB, R1, lo as i32));
        self.e.jmp_imm(BPF_JLE, R1, (hi - lo) as i32, target);
    }
}

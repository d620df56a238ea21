//! Network addresses as text: `inet_ntoa` (IPv4, dotted decimal), `inet_ntoa6` (IPv6, RFC
//! 5952 style), `inet_ntop` (either, by address family) and `link_ntop` (Ethernet's 6 or
//! InfiniBand's 20 bytes as two-digit hexadecimal joined by `:`; another link type is
//! DTrace's illegal operation), as DTrace formats them.
//!
//! The address is read with `bpf_probe_read_kernel` (an unreadable one is DTrace's "invalid
//! address" fault), then written character by character into a 64-byte scratch area and
//! copied into the result string, which cuts it at `strsize`. An IPv6 address:
//! - IPv4-mapped (`::ffff:a.b.c.d`) and IPv4-compatible ones (six zero words and then a
//!   non-zero word; or seven zero words and then any word but 0 and 1, which are `::` and
//!   `::1`) print as `a.b.c.d`, with their `::ffff:` or `::` prefix when strict (as
//!   `inet_ntop` prints them);
//! - otherwise eight words in lowercase hexadecimal without leading zeros, the first
//!   longest run of two or more zero words written `::`.
//!
//! The code is unrolled and keeps what it computes (the write position, the zero run) in
//! scratch memory between steps, so the paths of the data-dependent branches join into
//! one verifier state.

use dtrace_ebpf::*;
use dtrace_frontend::{Result, Span};
use dtrace_typing::ir::{Expr, ExprKind, Subr};

use super::regs::{self, SCRATCH};
use super::{Gen, Val};
use crate::emit::Label;
use crate::program::Fault;
use crate::types::Type;

/// `AF_INET6`, Linux's value.
const AF_INET6: i32 = 10;

/// `ARPHRD_ETHER` and `ARPHRD_INFINIBAND`, Linux's values, and their address lengths.
const LINKS: [(i32, u32); 2] = [(1, 6), (32, 20)];

/// Bytes of the text area; the longest text (`ffff:...:ffff`, 39 characters) and its NUL
/// fit, and positions are masked by `TEXT - 1`.
const TEXT: u32 = 64;

/// Scratch offsets of one conversion's work areas.
#[derive(Clone, Copy)]
struct Areas {
    /// The address's bytes (up to 20).
    input: u32,
    /// Slots: the write position, the zero run's start and end, the current run's start
    /// and length.
    pos: u32,
    run_start: u32,
    run_end: u32,
    cur_start: u32,
    cur_len: u32,
    /// The text.
    text: u32,
}

impl Gen<'_, '_> {
    /// `inet_ntoa`, `inet_ntoa6`, `inet_ntop`, `link_ntop`.
    pub(crate) fn inet(&mut self, subr: Subr, args: &[Expr], span: Span) -> Result<Val> {
        let mut vals = Vec::with_capacity(2);
        let addr_index = usize::from(matches!(subr, Subr::InetNtop | Subr::LinkNtop));
        for a in &args[..=addr_index] {
            vals.push(self.expr(a)?);
        }
        let strict = match subr {
            Subr::InetNtoa6 => {
                matches!(args.get(1).map(|a| &a.kind), Some(ExprKind::Int(n)) if *n != 0)
            }
            _ => true,
        };
        let res = self.string_buffer(false);
        let mark = self.scratch_top;
        let input = self.scratch(24);
        let slots = self.scratch(40);
        let text = self.scratch(TEXT);
        let at = Areas {
            input,
            pos: slots,
            run_start: slots + 8,
            run_end: slots + 16,
            cur_start: slots + 24,
            cur_len: slots + 32,
            text,
        };
        let addr = vals[addr_index].reg;
        self.st_slot_imm(at.pos, 0);
        let done = self.e.label();
        match subr {
            Subr::InetNtoa => self.inet_v4(addr, at),
            Subr::InetNtoa6 => self.inet_v6(addr, at, strict),
            Subr::LinkNtop => self.link(vals[0].reg, addr, at, done),
            _ => {
                let v4 = self.e.label();
                regs::read_into(&mut self.e, vals[0].reg, R0);
                self.e.jmp_imm(BPF_JNE, R0, AF_INET6, v4);
                self.inet_v6(addr, at, strict);
                self.e.goto(done);
                self.e.bind(v4);
                self.inet_v4(addr, at);
            }
        }
        self.e.bind(done);
        self.put_imm(at, 0);
        self.scratch_addr(R1, res);
        self.e.emit(Insn::mov64_imm(R2, self.strsize() as i32));
        self.scratch_addr(R3, at.text);
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
        self.release_temps(mark, span)?;
        let first = vals[0].reg;
        for v in vals[1..].iter().rev() {
            self.pop(v.reg);
        }
        self.scratch_addr(R1, res);
        regs::write(&mut self.e, first, R1);
        Ok(Val {
            reg: first,
            ty: Type::String,
        })
    }

    /// A hardware address of link type `ty` at `addr`; jumps to `done` when written.
    fn link(&mut self, ty: regs::VReg, addr: regs::VReg, at: Areas, done: Label) {
        for (link, len) in LINKS {
            let next = self.e.label();
            regs::read_into(&mut self.e, ty, R0);
            self.e.jmp_imm(BPF_JNE, R0, link, next);
            self.inet_read(addr, at, len as i32);
            for k in 0..len {
                if k > 0 {
                    self.put_imm(at, b':');
                }
                let byte = self.small(at.input + k);
                for shift in [4, 0] {
                    self.e.emit(Insn::ldx(Size::B, R2, SCRATCH, byte));
                    self.e.emit(Insn::alu64_imm(BPF_RSH, R2, shift));
                    self.hex_digit(at);
                }
            }
            self.e.goto(done);
            self.e.bind(next);
        }
        self.fault(Fault::IllegalOp, None);
    }

    /// Read `len` bytes at the address in `addr` into the input area; fault if unreadable.
    fn inet_read(&mut self, addr: regs::VReg, at: Areas, len: i32) {
        self.scratch_addr(R1, at.input);
        self.e.emit(Insn::mov64_imm(R2, len));
        regs::read_into(&mut self.e, addr, R3);
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
        self.fault_if_negative(addr);
    }

    /// An IPv4 address at `addr`.
    fn inet_v4(&mut self, addr: regs::VReg, at: Areas) {
        self.inet_read(addr, at, 4);
        self.dotted(at, 0);
    }

    /// The four bytes at `input + from` in dotted decimal.
    fn dotted(&mut self, at: Areas, from: u32) {
        for k in 0..4 {
            if k > 0 {
                self.put_imm(at, b'.');
            }
            let byte = self.small(at.input + from + k);
            let (tens, ones) = (self.e.label(), self.e.label());
            self.e.emit(Insn::ldx(Size::B, R1, SCRATCH, byte));
            self.e.jmp_imm(BPF_JLT, R1, 100, tens);
            self.e.emit(Insn::mov64_reg(R2, R1));
            self.e.emit(Insn::alu64_imm(BPF_DIV, R2, 100));
            self.put_digit(at);
            self.e.bind(tens);
            self.e.emit(Insn::ldx(Size::B, R1, SCRATCH, byte));
            self.e.jmp_imm(BPF_JLT, R1, 10, ones);
            self.e.emit(Insn::mov64_reg(R2, R1));
            self.e.emit(Insn::alu64_imm(BPF_DIV, R2, 10));
            self.e.emit(Insn::alu64_imm(BPF_MOD, R2, 10));
            self.put_digit(at);
            self.e.bind(ones);
            self.e.emit(Insn::ldx(Size::B, R2, SCRATCH, byte));
            self.e.emit(Insn::alu64_imm(BPF_MOD, R2, 10));
            self.put_digit(at);
        }
    }

    /// An IPv6 address at `addr`; `strict` keeps the prefixes of IPv4-mapped and
    /// IPv4-compatible addresses.
    fn inet_v6(&mut self, addr: regs::VReg, at: Areas, strict: bool) {
        self.inet_read(addr, at, 16);
        let (general, mapped, compat, done) = (
            self.e.label(),
            self.e.label(),
            self.e.label(),
            self.e.label(),
        );
        let word = |at: Areas, i: u32| (at.input + 2 * i) as i16;
        self.e.emit(Insn::ldx(Size::DW, R1, SCRATCH, word(at, 0)));
        self.e.jmp_imm(BPF_JNE, R1, 0, general);
        self.e.emit(Insn::ldx(Size::H, R1, SCRATCH, word(at, 4)));
        self.e.jmp_imm(BPF_JNE, R1, 0, general);
        self.e.emit(Insn::ldx(Size::H, R1, SCRATCH, word(at, 5)));
        self.e.jmp_imm(BPF_JEQ, R1, 0xffff, mapped);
        self.e.jmp_imm(BPF_JNE, R1, 0, general);
        self.e.emit(Insn::ldx(Size::H, R1, SCRATCH, word(at, 6)));
        self.e.jmp_imm(BPF_JNE, R1, 0, compat);
        self.e.emit(Insn::ldx(Size::H, R1, SCRATCH, word(at, 7)));
        self.e.emit(Insn::to_be(R1, 16));
        self.e.jmp_imm(BPF_JGT, R1, 1, compat);
        self.e.goto(general);
        self.e.bind(mapped);
        if strict {
            for &c in b"::ffff:" {
                self.put_imm(at, c);
            }
        }
        let v4 = self.e.label();
        self.e.goto(v4);
        self.e.bind(compat);
        if strict {
            self.put_imm(at, b':');
            self.put_imm(at, b':');
        }
        self.e.bind(v4);
        self.dotted(at, 12);
        self.e.goto(done);
        self.e.bind(general);
        self.zero_run(at);
        for i in 0..8u32 {
            let (normal, next) = (self.e.label(), self.e.label());
            self.ld_slot(R1, at.run_start);
            self.e.jmp_imm(BPF_JGT, R1, i as i32, normal);
            self.ld_slot(R1, at.run_end);
            self.e.jmp_imm(BPF_JLE, R1, i as i32, normal);
            // Inside the run: its first word writes the `:` that makes `::`.
            self.ld_slot(R1, at.run_start);
            self.e.jmp_imm(BPF_JNE, R1, i as i32, next);
            self.put_imm(at, b':');
            self.e.goto(next);
            self.e.bind(normal);
            if i > 0 {
                self.put_imm(at, b':');
            }
            self.hex_word(at, word(at, i));
            self.e.bind(next);
        }
        // A run up to the end needs the second `:` of its `::`.
        self.ld_slot(R1, at.run_end);
        self.e.jmp_imm(BPF_JNE, R1, 8, done);
        self.put_imm(at, b':');
        self.e.bind(done);
    }

    /// The first longest run of two or more zero words: `run_start` and `run_end` (past its
    /// last word); both 15 when there is none.
    fn zero_run(&mut self, at: Areas) {
        self.st_slot_imm(at.run_start, 15);
        self.st_slot_imm(at.run_end, 0);
        self.st_slot_imm(at.cur_len, 0);
        for i in 0..8i32 {
            let (nonzero, next) = (self.e.label(), self.e.label());
            let off = self.small(at.input + 2 * i as u32);
            self.e.emit(Insn::ldx(Size::H, R1, SCRATCH, off));
            self.e.jmp_imm(BPF_JNE, R1, 0, nonzero);
            let counted = self.e.label();
            self.ld_slot(R2, at.cur_len);
            self.e.emit(Insn::alu64_imm(BPF_ADD, R2, 1));
            self.st_slot(at.cur_len, R2);
            self.e.jmp_imm(BPF_JNE, R2, 1, counted);
            self.st_slot_imm(at.cur_start, i);
            self.e.bind(counted);
            // run_end holds the best run's length until the end.
            self.ld_slot(R2, at.cur_len);
            self.ld_slot(R3, at.run_end);
            self.e.jmp_reg(BPF_JLE, R2, R3, next);
            self.st_slot(at.run_end, R2);
            self.ld_slot(R3, at.cur_start);
            self.st_slot(at.run_start, R3);
            self.e.goto(next);
            self.e.bind(nonzero);
            self.st_slot_imm(at.cur_len, 0);
            self.e.bind(next);
        }
        let (found, done) = (self.e.label(), self.e.label());
        self.ld_slot(R2, at.run_end);
        self.e.jmp_imm(BPF_JGE, R2, 2, found);
        self.st_slot_imm(at.run_start, 15);
        self.st_slot_imm(at.run_end, 15);
        self.e.goto(done);
        self.e.bind(found);
        self.ld_slot(R3, at.run_start);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R3));
        self.st_slot(at.run_end, R2);
        self.e.bind(done);
    }

    /// The big-endian 16-bit word at scratch offset `off` in hexadecimal, no leading zeros.
    fn hex_word(&mut self, at: Areas, off: i16) {
        for shift in [12, 8, 4, 0] {
            let skip = self.e.label();
            self.e.emit(Insn::ldx(Size::H, R1, SCRATCH, off));
            self.e.emit(Insn::to_be(R1, 16));
            if shift > 0 {
                self.e.jmp_imm(BPF_JLT, R1, 1 << shift, skip);
                self.e.emit(Insn::alu64_imm(BPF_RSH, R1, shift));
            }
            self.e.emit(Insn::mov64_reg(R2, R1));
            self.hex_digit(at);
            self.e.bind(skip);
        }
    }

    /// Write the low four bits of r2 as a lowercase hexadecimal digit.
    fn hex_digit(&mut self, at: Areas) {
        self.e.emit(Insn::alu64_imm(BPF_AND, R2, 15));
        let digit = self.e.label();
        self.e.jmp_imm(BPF_JLT, R2, 10, digit);
        self.e
            .emit(Insn::alu64_imm(BPF_ADD, R2, i32::from(b'a' - b'0' - 10)));
        self.e.bind(digit);
        self.put_digit(at);
    }

    /// Write the digit value in r2 as its character (`'0' + r2`, r2 already offset for
    /// hexadecimal letters).
    fn put_digit(&mut self, at: Areas) {
        self.e.emit(Insn::alu64_imm(BPF_ADD, R2, i32::from(b'0')));
        self.put_reg(at, R2);
    }

    /// Write the low byte of `src` (not r4 or r5) at the text position, and advance it.
    fn put_reg(&mut self, at: Areas, src: Reg) {
        self.put_at(at);
        let text = self.small(at.text);
        self.e.emit(Insn::stx(Size::B, R4, text, src));
        self.advance(at);
    }

    /// Write `c` at the text position, and advance it.
    fn put_imm(&mut self, at: Areas, c: u8) {
        self.put_at(at);
        let text = self.small(at.text);
        self.e.emit(Insn::st(Size::B, R4, text, i32::from(c)));
        self.advance(at);
    }

    /// r5 = the text position (masked into the area), r4 = scratch + r5.
    fn put_at(&mut self, at: Areas) {
        self.ld_slot(R5, at.pos);
        self.e.emit(Insn::alu64_imm(BPF_AND, R5, (TEXT - 1) as i32));
        self.e.emit(Insn::mov64_reg(R4, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R4, R5));
    }

    /// The text position (in r5) plus one, stored.
    fn advance(&mut self, at: Areas) {
        self.e.emit(Insn::alu64_imm(BPF_ADD, R5, 1));
        self.st_slot(at.pos, R5);
    }
}

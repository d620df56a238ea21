//! Instruction offsets of `pid` probes (`pid123:a.out:add:4`): where the x86-64
//! instructions of a function start, which of them can take a uprobe without changing what
//! the program computes, and, for an offset that has no probe, why.
//!
//! A uprobe replaces the first byte at its address with `int3`. At an address inside an
//! instruction that byte is part of an operand, so the traced program silently computes
//! something else. The instruction boundaries must therefore be known, and x86 instructions
//! have variable lengths (1 to 15 bytes, prefixes, VEX/EVEX encodings): they are found by
//! decoding the function from its first byte to its symbol size with the `iced-x86` crate
//! (its decoder alone), a complete and tested decoder of the whole instruction set, rather
//! than a length table of our own. A function whose code does not decode as instructions
//! that end exactly at its size (data in text, hand-written assembly, instructions newer than
//! the decoder) offers no instruction offsets at all: a wrong guess would corrupt the program.
//!
//! Of the boundaries, two kinds have no probe:
//!
//! - instructions the kernel refuses to probe ([`uprobe_accepts`], the rules of
//!   `arch/x86/kernel/uprobes.c`), so a description never matches a probe that cannot be
//!   attached;
//! - 5-byte nops past the function's first instruction ([`rewritten_into_call`]): the kernel
//!   (6.18) turns a uprobe on one into a `call` to its `[uprobes-trampoline]`, which pushes
//!   a return address and three registers below the stack pointer, over the 128-byte red
//!   zone a leaf function may keep its locals in. Measured here: a leaf function summing
//!   four values it stored at `-8(%rsp)`..`-32(%rsp)` returned garbage once its 5-byte nop
//!   was traced. At a function's first instruction nothing lives there yet, so `entry` and
//!   offset `0` are safe.

use iced_x86::{Decoder, DecoderOptions, Instruction};

/// The instructions of one function, by offset from its first byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionCode {
    /// The function's size in bytes (its symbol's size).
    size: u64,
    /// Each instruction's offset, in order, and why it has no probe (`None`: it has one).
    insns: Vec<(u64, Option<Why>)>,
    /// Where decoding failed (no valid instruction there, or one running past the end).
    undecodable: Option<u64>,
}

impl FunctionCode {
    /// Decode `code`, a function's bytes (exactly its symbol's size).
    pub fn decode(code: &[u8]) -> FunctionCode {
        let mut decoder = Decoder::new(64, code, DecoderOptions::NONE);
        let mut insn = Instruction::default();
        let mut insns = Vec::new();
        let mut undecodable = None;
        while decoder.can_decode() {
            let at = decoder.position();
            decoder.decode_out(&mut insn);
            if insn.is_invalid() {
                undecodable = Some(at as u64);
                break;
            }
            let bytes = &code[at..at + insn.len()];
            let refused = if !uprobe_accepts(bytes) {
                Some(Why::Untraceable)
            } else if at > 0 && rewritten_into_call(bytes) {
                Some(Why::RedZone)
            } else {
                None
            };
            insns.push((at as u64, refused));
        }
        FunctionCode {
            size: code.len() as u64,
            insns,
            undecodable,
        }
    }

    /// A function of `size` bytes whose code could not be read: it has no instruction
    /// probes.
    pub fn unreadable(size: u64) -> FunctionCode {
        FunctionCode {
            size,
            insns: Vec::new(),
            undecodable: Some(0),
        }
    }

    /// The offsets that have a probe, in order; none when the code could not be decoded.
    pub fn probe_offsets(&self) -> impl Iterator<Item = u64> + '_ {
        let decoded = self.undecodable.is_none();
        self.insns
            .iter()
            .filter(move |(_, refused)| decoded && refused.is_none())
            .map(|&(at, _)| at)
    }

    /// Whether `offset` has a probe; if not, why ([`Refusal`] of `function`).
    pub fn check(&self, offset: u64, function: &str) -> Result<(), Refusal> {
        let why = if self.size == 0 {
            Why::NoSize
        } else if offset >= self.size {
            Why::Beyond { size: self.size }
        } else if let Some(at) = self.undecodable {
            Why::Undecodable { at }
        } else {
            match self.insns.binary_search_by_key(&offset, |&(at, _)| at) {
                Ok(i) => match self.insns[i].1 {
                    None => return Ok(()),
                    Some(why) => why,
                },
                Err(next) => Why::Inside {
                    before: self.insns[next - 1].0,
                    after: self.insns.get(next).map(|&(at, _)| at),
                },
            }
        };
        Err(Refusal {
            function: function.to_string(),
            offset,
            why,
        })
    }
}

/// Why a function has no probe at an instruction offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub function: String,
    pub offset: u64,
    pub why: Why,
}

/// Why a function has no probe at an offset, most telling first ([`Why::rank`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// Inside the instruction that starts at `before`; the next one starts at `after`.
    Inside { before: u64, after: Option<u64> },
    /// At an instruction uprobes refuse ([`uprobe_accepts`]).
    Untraceable,
    /// At a 5-byte nop the kernel would rewrite into a call ([`rewritten_into_call`]).
    RedZone,
    /// The function's code does not decode as instructions (from offset `at`).
    Undecodable { at: u64 },
    /// At or past the end of the function.
    Beyond { size: u64 },
    /// The function's symbol has no size.
    NoSize,
}

impl Why {
    /// Its place in the order above: when a glob names many functions, the reason shown is
    /// one of the lowest rank (an offset inside an instruction says more than one past the
    /// end of another function).
    pub fn rank(self) -> u8 {
        match self {
            Why::Inside { .. } => 0,
            Why::Untraceable => 1,
            Why::RedZone => 2,
            Why::Undecodable { .. } => 3,
            Why::Beyond { .. } => 4,
            Why::NoSize => 5,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (function, offset) = (&self.function, self.offset);
        match self.why {
            Why::Inside { before, after } => {
                write!(
                    f,
                    "offset {offset:#x} of {function} is inside an instruction (nearest instruction "
                )?;
                match after {
                    Some(after) => write!(f, "boundaries: {before:#x}, {after:#x})"),
                    None => write!(f, "boundary: {before:#x})"),
                }
            }
            Why::Untraceable => write!(
                f,
                "uprobes cannot trace the instruction at offset {offset:#x} of {function}"
            ),
            Why::RedZone => write!(
                f,
                "the kernel would turn a uprobe on the 5-byte nop at offset {offset:#x} of \
                 {function} into a call, which overwrites the stack below the stack pointer"
            ),
            Why::Undecodable { at } => write!(
                f,
                "the code of {function} does not decode as instructions (at offset {at:#x}), \
                 so it has no instruction probes"
            ),
            Why::Beyond { size } => write!(
                f,
                "offset {offset:#x} is beyond the end of {function} (size {size:#x})"
            ),
            Why::NoSize => write!(
                f,
                "{function} has no size in the symbol table, so its instructions are unknown"
            ),
        }
    }
}

/// Whether uprobes accept the first instruction of `code` (a function's bytes from its
/// start: `entry` and `return` probes put their uprobe there).
pub fn entry_accepted(code: &[u8]) -> bool {
    let code = &code[..code.len().min(15)];
    let insn = Decoder::new(64, code, DecoderOptions::NONE).decode();
    !insn.is_invalid() && uprobe_accepts(&code[..insn.len()])
}

/// Where the opcode of the x86-64 instruction `insn` (its bytes, as decoded) starts, as the
/// kernel's decoder sees it: after legacy prefixes and REX, or after a VEX or EVEX prefix
/// (`vex` true). `None` when a prefix makes uprobes refuse it (`es`, `cs`, `ss`, `ds`,
/// `lock`) or it is XOP-encoded (AMD only; refused here, to be safe).
fn opcode_at(insn: &[u8]) -> Option<(usize, bool)> {
    let mut i = 0;
    while let Some(&b) = insn.get(i) {
        match b {
            0x26 | 0x2e | 0x36 | 0x3e | 0xf0 => return None,
            0x64 | 0x65 | 0x66 | 0x67 | 0xf2 | 0xf3 => i += 1,
            _ => break,
        }
    }
    if insn.get(i).is_some_and(|b| (0x40..=0x4f).contains(b)) {
        i += 1;
    }
    match insn.get(i)? {
        0xc5 => Some((i + 2, true)),
        0xc4 => Some((i + 3, true)),
        0x62 => Some((i + 4, true)),
        // `pop r/m` is 8f /0; any other reg field is an XOP prefix.
        0x8f if insn.get(i + 1).is_some_and(|m| m & 0x38 != 0) => None,
        _ => Some((i, false)),
    }
}

/// Whether the kernel puts a uprobe on the x86-64 instruction `insn` (its bytes, as
/// decoded). `arch/x86/kernel/uprobes.c` refuses an instruction with an `es`, `cs`, `ss`,
/// `ds` or `lock` prefix, `mov ss`/`pop ss`, and one whose first opcode byte (after the
/// prefixes, REX, or VEX/EVEX prefix) is not in its table of good one-byte opcodes. `0x0f`
/// is in that table, so every two- and three-byte opcode passes.
pub fn uprobe_accepts(insn: &[u8]) -> bool {
    let Some((at, vex)) = opcode_at(insn) else {
        return false;
    };
    let Some(&opcode) = insn.get(at) else {
        return false;
    };
    // mov ss, r/m (8e /2) masks exceptions for one instruction.
    let mov_ss = !vex && opcode == 0x8e && insn.get(at + 1).is_some_and(|m| m & 0x38 == 0x10);
    !mov_ss && GOOD_OPCODES[opcode as usize / 64] >> (opcode % 64) & 1 == 1
}

/// Whether the kernel rewrites a uprobe on `insn` into a call to its trampoline (see the
/// module documentation): a 5-byte `nop` (opcode 90 after prefixes) or `nopl` (0f 1f /0).
/// Any 5-byte instruction with opcode 90 counts, to be safe.
pub fn rewritten_into_call(insn: &[u8]) -> bool {
    if insn.len() != 5 {
        return false;
    }
    match opcode_at(insn) {
        Some((at, false)) => match insn[at..] {
            [0x90, ..] => true,
            [0x0f, 0x1f, modrm, ..] => modrm & 0x38 == 0,
            _ => false,
        },
        _ => false,
    }
}

/// The kernel's `good_insns_64`: bit N set when one-byte opcode N may be probed. Refused:
/// 06 07 0e 16 17 1e 1f 27 2f 37 3f 60 61 62 6c-6f 82 9a cc-cf d4-d6 e4-e7 ea ec-ef f1 f4 fa
/// fb.
const GOOD_OPCODES: [u64; 4] = good_opcodes(&[
    0x06, 0x07, 0x0e, 0x16, 0x17, 0x1e, 0x1f, 0x27, 0x2f, 0x37, 0x3f, 0x60, 0x61, 0x62, 0x6c, 0x6d,
    0x6e, 0x6f, 0x82, 0x9a, 0xcc, 0xcd, 0xce, 0xcf, 0xd4, 0xd5, 0xd6, 0xe4, 0xe5, 0xe6, 0xe7, 0xea,
    0xec, 0xed, 0xee, 0xef, 0xf1, 0xf4, 0xfa, 0xfb,
]);

const fn good_opcodes(refused: &[u8]) -> [u64; 4] {
    let mut bits = [u64::MAX; 4];
    let mut i = 0;
    while i < refused.len() {
        let b = refused[i] as usize;
        bits[b / 64] &= !(1 << (b % 64));
        i += 1;
    }
    bits
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `int add(int a, int b) { return a + b; }` from `gcc -O0`.
    const ADD: &[u8] = &[
        0x55, // 0: push %rbp
        0x48, 0x89, 0xe5, // 1: mov %rsp,%rbp
        0x89, 0x7d, 0xfc, // 4: mov %edi,-0x4(%rbp)
        0x89, 0x75, 0xf8, // 7: mov %esi,-0x8(%rbp)
        0x8b, 0x55, 0xfc, // a: mov -0x4(%rbp),%edx
        0x8b, 0x45, 0xf8, // d: mov -0x8(%rbp),%eax
        0x01, 0xd0, // 10: add %edx,%eax
        0x5d, // 12: pop %rbp
        0xc3, // 13: ret
    ];

    #[test]
    fn boundaries_of_a_small_function() {
        let code = FunctionCode::decode(ADD);
        let offsets: Vec<u64> = code.probe_offsets().collect();
        assert_eq!(offsets, [0, 1, 4, 7, 0xa, 0xd, 0x10, 0x12, 0x13]);
        assert_eq!(code.check(0xa, "add"), Ok(()));
        assert_eq!(
            code.check(0xb, "add").map_err(|r| r.to_string()),
            Err("offset 0xb of add is inside an instruction \
                 (nearest instruction boundaries: 0xa, 0xd)"
                .into())
        );
        assert_eq!(
            code.check(0x100, "add").map_err(|r| r.to_string()),
            Err("offset 0x100 is beyond the end of add (size 0x14)".into())
        );
        assert_eq!(
            code.check(0x14, "add").map_err(|r| r.to_string()),
            Err("offset 0x14 is beyond the end of add (size 0x14)".into())
        );
    }

    #[test]
    fn inside_the_last_instruction() {
        // 0: nop; 1: mov $1,%eax (5 bytes)
        let code = FunctionCode::decode(&[0x90, 0xb8, 1, 0, 0, 0]);
        assert_eq!(
            code.check(3, "f").map_err(|r| r.to_string()),
            Err(
                "offset 0x3 of f is inside an instruction (nearest instruction boundary: 0x1)"
                    .into()
            )
        );
    }

    #[test]
    fn long_and_prefixed_instructions() {
        let code = [
            0xf3, 0x0f, 0x1e, 0xfa, // 0: endbr64
            0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00, // 4: nopw 0x0(%rax,%rax,1)
            0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, // a: cs nopw (refused: cs prefix)
            0xf0, 0x48, 0x0f, 0xb1, 0x17, // 14: lock cmpxchg %rdx,(%rdi) (refused: lock)
            0xc5, 0xfa, 0x6f, 0x06, // 19: vmovdqu (%rsi),%xmm0 (refused: opcode 6f)
            0xc5, 0xf8, 0x77, // 1d: vzeroupper
            0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8, // 20: movabs $..,%rax
            0x0f, 0x05, // 2a: syscall
            0xcc, // 2c: int3 (refused)
            0xc3, // 2d: ret
        ];
        let decoded = FunctionCode::decode(&code);
        let offsets: Vec<u64> = decoded.probe_offsets().collect();
        assert_eq!(offsets, [0, 4, 0x1d, 0x20, 0x2a, 0x2d]);
        assert_eq!(
            decoded.check(0xa, "f").map_err(|r| r.to_string()),
            Err("uprobes cannot trace the instruction at offset 0xa of f".into())
        );
        assert_eq!(
            decoded.check(0xb, "f").map_err(|r| r.to_string()),
            Err("offset 0xb of f is inside an instruction \
                 (nearest instruction boundaries: 0xa, 0x14)"
                .into())
        );
    }

    #[test]
    fn no_probe_on_a_5_byte_nop_past_the_entry() {
        let nop5 = [0x0f, 0x1f, 0x44, 0x00, 0x00];
        let code: Vec<u8> = [&nop5[..], &[0x90], &nop5[..], &[0xc3]].concat();
        let decoded = FunctionCode::decode(&code);
        let offsets: Vec<u64> = decoded.probe_offsets().collect();
        assert_eq!(offsets, [0, 5, 0xb]);
        assert_eq!(decoded.check(6, "f").unwrap_err().why, Why::RedZone);
        assert!(rewritten_into_call(&[0x66, 0x66, 0x66, 0x66, 0x90]));
        assert!(!rewritten_into_call(&[0x0f, 0x1f, 0x40, 0x00])); // 4 bytes
        assert!(!rewritten_into_call(&[0x48, 0x89, 0x7c, 0x24, 0xf8])); // mov %rdi,-8(%rsp)
    }

    #[test]
    fn undecodable_code_offers_no_offsets() {
        // nop, then an instruction cut short by the end of the function.
        let cut = FunctionCode::decode(&[0x90, 0xb8, 1, 0]);
        assert_eq!(cut.probe_offsets().count(), 0);
        assert_eq!(
            cut.check(0, "f").unwrap_err().why,
            Why::Undecodable { at: 1 }
        );
        // nop, then 06 (push es: invalid in 64-bit mode).
        let invalid = FunctionCode::decode(&[0x90, 0x06, 0xc3]);
        assert_eq!(invalid.probe_offsets().count(), 0);
        assert_eq!(
            FunctionCode::decode(&[]).check(0, "f").unwrap_err().why,
            Why::NoSize
        );
    }

    #[test]
    fn kernel_rules() {
        assert!(uprobe_accepts(&[0x55]));
        assert!(uprobe_accepts(&[
            0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0
        ])); // mov %fs:0x28,%rax
        assert!(!uprobe_accepts(&[0x8e, 0xd0])); // mov %eax,%ss
        assert!(uprobe_accepts(&[0x8e, 0xd8])); // mov %eax,%ds
        assert!(uprobe_accepts(&[0x8f, 0xc0])); // pop %rax (8f /0)
        assert!(!uprobe_accepts(&[0xcd, 0x80])); // int $0x80
        assert!(uprobe_accepts(&[0x62, 0xf1, 0x7c, 0x48, 0x10, 0x06])); // EVEX vmovups
        assert!(!uprobe_accepts(&[0x8f, 0xe8, 0x78, 0xc2, 0xc1, 0x01])); // XOP vprotb
    }
}

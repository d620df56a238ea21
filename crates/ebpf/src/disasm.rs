//! A disassembler printing instructions the way DTrace's `-S` lists them: per slot its
//! index, byte offset and raw fields, then the instruction in DTrace's mnemonic syntax
//! (`mov %r1, %fp`, `lddw %r0, [%fp-8]`, `jeq %r0, 0, 5`), with `! ...` comments for branch
//! targets, helper failures and the maps a 64-bit load names.

use crate::helpers;
use crate::insn::*;

/// Where a comment starts: after this many characters of instruction text (or right
/// after a longer text).
const TEXT_WIDTH: usize = 30;

/// What a listing names beside raw numbers.
#[derive(Clone, Debug, Default)]
pub struct Symbols<'a> {
    /// Map names by the number a map reference's `imm` holds.
    pub maps: Vec<&'a str>,
    /// Kernel functions (kfuncs) by vmlinux BTF id.
    pub kfuncs: Vec<(i32, &'a str)>,
}

/// One listing: a blank line, `Disassembly of TITLE:`, the column header, a line per
/// instruction slot of `insns` (numbered from 0) and a closing blank line.
pub fn listing(title: &str, insns: &[Insn], symbols: &Symbols) -> String {
    let mut out = format!(
        "\nDisassembly of {title}:\n{:<4} {:<5}  {:<20}    {}\n",
        "INS", "OFF", "OPCODE", "INSTRUCTION"
    );
    let mut i = 0;
    while i < insns.len() {
        out.push_str(&prefix(i, &insns[i]));
        let (text, comment) = instruction(insns, i, symbols);
        push_line(&mut out, &text, comment.as_deref());
        if insns[i].is_ld_imm64() {
            // The second slot of a 64-bit load: its own prefix, and what it names.
            if let Some(next) = insns.get(i + 1) {
                out.push_str(&prefix(i + 1, next));
                push_line(&mut out, "", ld_imm64_comment(insns, i, symbols).as_deref());
            }
            i += 1;
        }
        i += 1;
    }
    out.push('\n');
    out
}

/// `INS OFF: code dst src off imm`, the raw fields of the slot at `i`.
fn prefix(i: usize, insn: &Insn) -> String {
    format!(
        "{i:04} {:05}: {:02x} {:01x} {:01x} {:04x} {:08x}    ",
        i * 8,
        insn.code,
        insn.dst().0,
        insn.src().0,
        insn.off as u16,
        insn.imm as u32
    )
}

/// `text`, then its comment from column [`TEXT_WIDTH`] on.
fn push_line(out: &mut String, text: &str, comment: Option<&str>) {
    match comment {
        Some(c) => out.push_str(&format!("{text:<TEXT_WIDTH$}! {c}\n")),
        None => {
            out.push_str(text);
            out.push('\n');
        }
    }
}

fn reg(r: Reg) -> &'static str {
    const NAMES: [&str; 11] = [
        "%r0", "%r1", "%r2", "%r3", "%r4", "%r5", "%r6", "%r7", "%r8", "%r9", "%fp",
    ];
    NAMES.get(r.0 as usize).copied().unwrap_or("%r?")
}

/// The instruction text of the slot at `i`, and its comment.
fn instruction(insns: &[Insn], i: usize, symbols: &Symbols) -> (String, Option<String>) {
    let insn = &insns[i];
    let name = match mnemonic(insn) {
        Some(name) => name,
        None => return ("(illegal opcode)".into(), None),
    };
    let (d, s) = (reg(insn.dst()), reg(insn.src()));
    let target = |off: i64| Some(format!("-> {:03}", i as i64 + 1 + off));
    let op = insn.code & 0xf0;
    match insn.class() {
        BPF_ALU | BPF_ALU64 if op == BPF_NEG => (format!("{name:<4} {d}"), None),
        BPF_ALU | BPF_ALU64 if insn.code & BPF_X != 0 && op != BPF_END => {
            (format!("{name:<4} {d}, {s}"), None)
        }
        BPF_ALU | BPF_ALU64 => (format!("{name:<4} {d}, {}", insn.imm), None),
        BPF_LD => {
            let hi = insns.get(i + 1).map_or(0, |n| n.imm as u32);
            (
                format!("{name:<4} {d}, 0x{hi:08x}{:08x}", insn.imm as u32),
                None,
            )
        }
        BPF_LDX => (format!("{name:<4} {d}, [{s}{:+}]", insn.off), None),
        BPF_STX => (format!("{name:<4} [{d}{:+}], {s}", insn.off), None),
        BPF_ST => (format!("{name:<4} [{d}{:+}], {}", insn.off, insn.imm), None),
        _ => match op {
            BPF_EXIT => (name.into(), None),
            BPF_CALL => call(insn, i, symbols),
            BPF_JA if insn.class() == BPF_JMP32 => {
                (format!("{name:<4} {}", insn.imm), target(insn.imm.into()))
            }
            BPF_JA if insn.off == 0 => ("nop".into(), None),
            BPF_JA => (format!("{name:<4} {}", insn.off), target(insn.off.into())),
            _ if insn.code & BPF_X != 0 => (
                format!("{name:<4} {d}, {s}, {}", insn.off),
                target(insn.off.into()),
            ),
            BPF_JSGT | BPF_JSGE | BPF_JSLT | BPF_JSLE => (
                format!("{name:<4} {d}, {}, {}", insn.imm, insn.off),
                target(insn.off.into()),
            ),
            _ => (
                format!("{name:<4} {d}, {}, {}", insn.imm as u32, insn.off),
                target(insn.off.into()),
            ),
        },
    }
}

/// The mnemonic of `insn`, if it is an instruction this listing knows.
fn mnemonic(insn: &Insn) -> Option<&'static str> {
    let op = insn.code & 0xf0;
    let size = |names: [&'static str; 4]| match insn.code & 0x18 {
        BPF_B => names[0],
        BPF_H => names[1],
        BPF_W => names[2],
        _ => names[3],
    };
    let mode = insn.code & 0xe0;
    Some(match insn.class() {
        BPF_ALU | BPF_ALU64 => match op {
            BPF_END if insn.class() == BPF_ALU64 => "bswap",
            BPF_END if insn.code & BPF_X != 0 => "tobe",
            BPF_END => "tole",
            BPF_DIV if insn.off == 1 => "sdiv",
            BPF_MOD if insn.off == 1 => "smod",
            _ if insn.off != 0 => return None,
            BPF_ADD => "add",
            BPF_SUB => "sub",
            BPF_MUL => "mul",
            BPF_DIV => "div",
            BPF_OR => "or",
            BPF_AND => "and",
            BPF_LSH => "lsh",
            BPF_RSH => "rsh",
            BPF_NEG => "neg",
            BPF_MOD => "mod",
            BPF_XOR => "xor",
            BPF_MOV => "mov",
            BPF_ARSH => "arsh",
            _ => return None,
        },
        BPF_LD if insn.is_ld_imm64() => "lddw",
        BPF_LDX if mode == BPF_MEM => size(["ldb", "ldh", "ldw", "lddw"]),
        BPF_ST if mode == BPF_MEM => size(["stb", "sth", "stw", "stdw"]),
        BPF_STX if mode == BPF_MEM => size(["stb", "sth", "stw", "stdw"]),
        BPF_STX if mode == BPF_ATOMIC && matches!(insn.code & 0x18, BPF_W | BPF_DW) => {
            match insn.imm {
                imm if imm == BPF_ADD as i32 => "xadd",
                imm if imm == (BPF_ADD | BPF_FETCH) as i32 => "xfadd",
                BPF_CMPXCHG => "cmpxchg",
                _ => return None,
            }
        }
        BPF_JMP | BPF_JMP32 => match op {
            BPF_JA => "ja",
            BPF_CALL | BPF_EXIT if insn.class() == BPF_JMP32 => return None,
            BPF_CALL => "call",
            BPF_EXIT => "exit",
            BPF_JEQ => "jeq",
            BPF_JGT => "jgt",
            BPF_JGE => "jge",
            BPF_JSET => "jset",
            BPF_JNE => "jne",
            BPF_JSGT => "jsgt",
            BPF_JSGE => "jsge",
            BPF_JLT => "jlt",
            BPF_JLE => "jle",
            BPF_JSLT => "jslt",
            BPF_JSLE => "jsle",
            _ => return None,
        },
        _ => return None,
    })
}

/// A call: of a kernel helper by its name, of a kfunc by its name where `symbols` has it,
/// of a function of the program with its first instruction as the comment.
fn call(insn: &Insn, i: usize, symbols: &Symbols) -> (String, Option<String>) {
    match insn.src().0 {
        BPF_PSEUDO_CALL => (
            format!("call {}", insn.imm),
            Some(format!("-> {:03}", i as i64 + 1 + i64::from(insn.imm))),
        ),
        BPF_PSEUDO_KFUNC_CALL => match symbols.kfuncs.iter().find(|k| k.0 == insn.imm) {
            Some((_, name)) => (format!("call {name}"), None),
            None => (
                format!("call kfunc#{}", insn.imm),
                Some("unknown kfunc".into()),
            ),
        },
        _ => match helpers::name(insn.imm) {
            Some(name) => (format!("call bpf_{name}"), None),
            None => (
                format!("call helper#{}", insn.imm),
                Some("unknown helper".into()),
            ),
        },
    }
}

/// The comment of a 64-bit load's second slot: the map it names, or the function whose
/// address it loads.
fn ld_imm64_comment(insns: &[Insn], i: usize, symbols: &Symbols) -> Option<String> {
    let insn = &insns[i];
    match insn.src().0 {
        BPF_PSEUDO_MAP_FD | BPF_PSEUDO_MAP_VALUE => usize::try_from(insn.imm)
            .ok()
            .and_then(|m| symbols.maps.get(m))
            .map(|name| name.to_string()),
        BPF_PSEUDO_FUNC => Some(format!("-> {:03}", i as i64 + 1 + i64::from(insn.imm))),
        _ => None,
    }
}

#[cfg(test)]
mod tests;

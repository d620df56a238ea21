//! A disassembler printing instructions in the kernel verifier's syntax (`r1 = r2`, `if r1 > 0x3 goto +2`).

use crate::helpers;
use crate::insn::*;

fn alu_op(op: u8) -> &'static str {
    match op {
        BPF_ADD => "+=",
        BPF_SUB => "-=",
        BPF_MUL => "*=",
        BPF_DIV => "/=",
        BPF_OR => "|=",
        BPF_AND => "&=",
        BPF_LSH => "<<=",
        BPF_RSH => ">>=",
        BPF_MOD => "%=",
        BPF_XOR => "^=",
        BPF_MOV => "=",
        BPF_ARSH => "s>>=",
        _ => "?=",
    }
}

fn jmp_op(op: u8) -> &'static str {
    match op {
        BPF_JEQ => "==",
        BPF_JGT => ">",
        BPF_JGE => ">=",
        BPF_JSET => "&",
        BPF_JNE => "!=",
        BPF_JSGT => "s>",
        BPF_JSGE => "s>=",
        BPF_JLT => "<",
        BPF_JLE => "<=",
        BPF_JSLT => "s<",
        BPF_JSLE => "s<=",
        _ => "?",
    }
}

fn size_name(code: u8) -> &'static str {
    match code & 0x18 {
        BPF_B => "u8",
        BPF_H => "u16",
        BPF_W => "u32",
        _ => "u64",
    }
}

/// One line per instruction slot, `NNNN: text`; the second slot of a 64-bit load is folded into the first.
pub fn disassemble(insns: &[Insn]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < insns.len() {
        let (text, width) = describe(insns, i);
        out.push_str(&format!("{i:04}: {text}\n"));
        i += width;
    }
    out
}

/// The text of the instruction at `i` and how many slots it takes.
pub fn describe(insns: &[Insn], i: usize) -> (String, usize) {
    let insn = insns[i];
    let (d, s) = (insn.dst().0, insn.src().0);
    let class = insn.class();
    let text = match class {
        BPF_ALU | BPF_ALU64 => {
            let r = if class == BPF_ALU64 { "r" } else { "w" };
            let op = insn.code & 0xf0;
            let operand = if insn.code & BPF_X != 0 {
                format!("{r}{s}")
            } else {
                format!("{}", insn.imm)
            };
            match op {
                BPF_NEG => format!("{r}{d} = -{r}{d}"),
                BPF_END => format!("{r}{d} = bswap{}", insn.imm),
                BPF_MOV if insn.off != 0 => format!("{r}{d} = (s{}){r}{s}", insn.off),
                BPF_DIV | BPF_MOD if insn.off == 1 => {
                    format!("{r}{d} s{} {operand}", alu_op(op))
                }
                _ => format!("{r}{d} {} {operand}", alu_op(op)),
            }
        }
        BPF_LD if insn.is_ld_imm64() => {
            let hi = insns.get(i + 1).map_or(0, |n| n.imm as u32 as u64);
            let value = (hi << 32) | insn.imm as u32 as u64;
            let text = match s {
                BPF_PSEUDO_MAP_FD => format!("r{d} = map[fd {}]", insn.imm),
                BPF_PSEUDO_MAP_VALUE => format!("r{d} = &map[fd {}] + {hi}", insn.imm),
                BPF_PSEUDO_FUNC => format!("r{d} = func pc{:+}", insn.imm),
                BPF_PSEUDO_BTF_ID => format!("r{d} = kernel variable [btf {}]", insn.imm),
                _ => format!("r{d} = {value:#x} ll"),
            };
            return (text, 2);
        }
        BPF_LDX => format!("r{d} = *({} *)(r{s} {:+})", size_name(insn.code), insn.off),
        BPF_STX if insn.code & 0xe0 == BPF_ATOMIC => {
            let (size, off) = (size_name(insn.code), insn.off);
            match insn.imm {
                BPF_CMPXCHG => format!("r0 = cmpxchg(({size} *)(r{d} {off:+}), r0, r{s})"),
                imm if imm == (BPF_ADD | BPF_FETCH) as i32 => {
                    format!("r{s} = atomic_fetch_add(({size} *)(r{d} {off:+}), r{s})")
                }
                _ => format!("lock *({size} *)(r{d} {off:+}) += r{s}"),
            }
        }
        BPF_STX => format!("*({} *)(r{d} {:+}) = r{s}", size_name(insn.code), insn.off),
        BPF_ST => format!(
            "*({} *)(r{d} {:+}) = {}",
            size_name(insn.code),
            insn.off,
            insn.imm
        ),
        BPF_JMP | BPF_JMP32 => {
            let op = insn.code & 0xf0;
            let r = if class == BPF_JMP { "r" } else { "w" };
            match op {
                BPF_JA if class == BPF_JMP32 => format!("gotol {:+}", insn.imm),
                BPF_JA => format!("goto {:+}", insn.off),
                BPF_CALL if s == BPF_PSEUDO_CALL => format!("call pc{:+}", insn.imm),
                BPF_CALL if s == BPF_PSEUDO_KFUNC_CALL => format!("call kfunc#{}", insn.imm),
                BPF_CALL => match helpers::name(insn.imm) {
                    Some(name) => format!("call {name}#{}", insn.imm),
                    None => format!("call #{}", insn.imm),
                },
                BPF_EXIT => "exit".to_string(),
                _ => {
                    let operand = if insn.code & BPF_X != 0 {
                        format!("{r}{s}")
                    } else {
                        format!("{:#x}", insn.imm)
                    };
                    format!("if {r}{d} {} {operand} goto {:+}", jmp_op(op), insn.off)
                }
            }
        }
        _ => format!("<unknown opcode {:#04x}>", insn.code),
    };
    (text, 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_verifier_syntax() {
        let mut prog = vec![Insn::mov64_imm(R1, 7)];
        prog.extend(Insn::ld_imm64(R2, 0x100000000));
        prog.push(Insn::stx(Size::DW, R10, -8, R1));
        prog.push(Insn::jmp_imm(BPF_JGT, R1, 3, 1));
        prog.push(Insn::call(helpers::KTIME_GET_NS));
        prog.push(Insn::call_kfunc(63622));
        prog.push(Insn::exit());
        assert_eq!(
            disassemble(&prog),
            "0000: r1 = 7\n0001: r2 = 0x100000000 ll\n0003: *(u64 *)(r10 -8) = r1\n\
             0004: if r1 > 0x3 goto +1\n0005: call ktime_get_ns#5\n0006: call kfunc#63622\n\
             0007: exit\n"
        );
    }
}

//! `main` of a stripped executable. Distributions strip their programs (`ls`, `date`,
//! `awk` on Debian have no `.symtab`, and `.dynsym` holds only what they export), so
//! `pid$target::main:entry`, the first probe many DTrace users try, would match nothing.
//! glibc's `_start`, at the ELF entry point, hands `main` to `__libc_start_main` in `rdi`:
//! its address is in the few instructions before that call (`lea main(%rip), %rdi`, or
//! `mov $main, %rdi` without PIE). Its extent, which `return` and offset probes need, is
//! that of its call-frame information (the `.eh_frame` FDE that starts there), which
//! stripping keeps.

use dtrace_elf::Elf;
use gimli::{BaseAddresses, CieOrFde, EhFrame, LittleEndian, UnwindSection};
use iced_x86::{Code, Decoder, DecoderOptions, Mnemonic, OpKind, Register};

/// `(address, size)` of `main` of the x86-64 executable `elf` (whose bytes are `data`) as
/// its glibc `_start` names it; the size is 0 when no FDE starts there. `None` when the
/// entry point is not glibc's `_start`.
pub fn main_function(data: &[u8], elf: &Elf) -> Option<(u64, u64)> {
    if elf.is_32 || elf.entry == 0 {
        return None;
    }
    let at = elf.vaddr_to_offset(elf.entry)? as usize;
    let code = data.get(at..data.len().min(at + 96))?;
    let mut decoder = Decoder::with_ip(64, code, elf.entry, DecoderOptions::NONE);
    let mut main = None;
    let mut first = true;
    for (i, insn) in decoder.iter().enumerate() {
        // `_start` clears the frame pointer first (after an `endbr64`).
        if first {
            match insn.code() {
                Code::Endbr64 => continue,
                Code::Xor_r32_rm32 | Code::Xor_rm32_r32 => first = false,
                _ => return None,
            }
        }
        if i > 24 || insn.is_invalid() || insn.mnemonic() == Mnemonic::Hlt {
            return None;
        }
        if insn.mnemonic() == Mnemonic::Call {
            break;
        }
        if insn.op_count() > 0
            && insn.op0_kind() == OpKind::Register
            && matches!(insn.op0_register(), Register::RDI | Register::EDI)
        {
            main = match (insn.mnemonic(), insn.op1_kind()) {
                (Mnemonic::Lea, OpKind::Memory) if insn.is_ip_rel_memory_operand() => {
                    Some(insn.ip_rel_memory_address())
                }
                (Mnemonic::Mov, OpKind::Immediate32 | OpKind::Immediate32to64) => {
                    Some(insn.immediate(1))
                }
                _ => None,
            };
        }
    }
    let main = main.filter(|&a| a != 0)?;
    elf.vaddr_to_offset(main)?;
    Some((main, fde_size(elf, main).unwrap_or(0)))
}

/// The length of the code the `.eh_frame` FDE starting at `address` covers.
fn fde_size(elf: &Elf, address: u64) -> Option<u64> {
    let section = elf.section(".eh_frame")?;
    let eh_frame = EhFrame::new(elf.section_data(section).ok()?, LittleEndian);
    let mut bases = BaseAddresses::default().set_eh_frame(section.addr);
    if let Some(text) = elf.section(".text") {
        bases = bases.set_text(text.addr);
    }
    let mut entries = eh_frame.entries(&bases);
    while let Ok(Some(entry)) = entries.next() {
        if let CieOrFde::Fde(partial) = entry {
            let Ok(fde) = partial.parse(EhFrame::cie_from_offset) else {
                continue;
            };
            if fde.initial_address() == address {
                return Some(fde.len());
            }
        }
    }
    None
}

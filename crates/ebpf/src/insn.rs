//! Instruction layout (`struct bpf_insn`), opcode constants and constructors.

/// One 8-byte eBPF instruction, laid out as the kernel's `struct bpf_insn`.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Insn {
    pub code: u8,
    /// dst_reg in the low nibble, src_reg in the high nibble.
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

/// An eBPF register, r0..r10.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash, PartialOrd, Ord)]
pub struct Reg(pub u8);

pub const R0: Reg = Reg(0);
pub const R1: Reg = Reg(1);
pub const R2: Reg = Reg(2);
pub const R3: Reg = Reg(3);
pub const R4: Reg = Reg(4);
pub const R5: Reg = Reg(5);
pub const R6: Reg = Reg(6);
pub const R7: Reg = Reg(7);
pub const R8: Reg = Reg(8);
pub const R9: Reg = Reg(9);
/// The read-only frame pointer.
pub const R10: Reg = Reg(10);

// Instruction classes.
pub const BPF_LD: u8 = 0x00;
pub const BPF_LDX: u8 = 0x01;
pub const BPF_ST: u8 = 0x02;
pub const BPF_STX: u8 = 0x03;
pub const BPF_ALU: u8 = 0x04;
pub const BPF_JMP: u8 = 0x05;
pub const BPF_JMP32: u8 = 0x06;
pub const BPF_ALU64: u8 = 0x07;

// Sizes.
pub const BPF_W: u8 = 0x00;
pub const BPF_H: u8 = 0x08;
pub const BPF_B: u8 = 0x10;
pub const BPF_DW: u8 = 0x18;

// Modes.
pub const BPF_IMM: u8 = 0x00;
pub const BPF_MEM: u8 = 0x60;
pub const BPF_ATOMIC: u8 = 0xc0;
/// Atomic operation modifier: the old value is returned in the source register.
pub const BPF_FETCH: u8 = 0x01;
/// Atomic compare-and-exchange (with [`BPF_FETCH`]; the old value lands in r0).
pub const BPF_CMPXCHG: i32 = 0xf0 | BPF_FETCH as i32;

// Sources.
pub const BPF_K: u8 = 0x00;
pub const BPF_X: u8 = 0x08;

// ALU operations.
pub const BPF_ADD: u8 = 0x00;
pub const BPF_SUB: u8 = 0x10;
pub const BPF_MUL: u8 = 0x20;
pub const BPF_DIV: u8 = 0x30;
pub const BPF_OR: u8 = 0x40;
pub const BPF_AND: u8 = 0x50;
pub const BPF_LSH: u8 = 0x60;
pub const BPF_RSH: u8 = 0x70;
pub const BPF_NEG: u8 = 0x80;
pub const BPF_MOD: u8 = 0x90;
pub const BPF_XOR: u8 = 0xa0;
pub const BPF_MOV: u8 = 0xb0;
pub const BPF_ARSH: u8 = 0xc0;
pub const BPF_END: u8 = 0xd0;

// Jump operations.
pub const BPF_JA: u8 = 0x00;
pub const BPF_JEQ: u8 = 0x10;
pub const BPF_JGT: u8 = 0x20;
pub const BPF_JGE: u8 = 0x30;
pub const BPF_JSET: u8 = 0x40;
pub const BPF_JNE: u8 = 0x50;
pub const BPF_JSGT: u8 = 0x60;
pub const BPF_JSGE: u8 = 0x70;
pub const BPF_CALL: u8 = 0x80;
pub const BPF_EXIT: u8 = 0x90;
pub const BPF_JLT: u8 = 0xa0;
pub const BPF_JLE: u8 = 0xb0;
pub const BPF_JSLT: u8 = 0xc0;
pub const BPF_JSLE: u8 = 0xd0;

/// `src_reg` of a 64-bit immediate load that refers to a map by fd.
pub const BPF_PSEUDO_MAP_FD: u8 = 1;
/// `src_reg` of a 64-bit immediate load of a map value's address (map fd + offset).
pub const BPF_PSEUDO_MAP_VALUE: u8 = 2;
/// `src_reg` of a 64-bit immediate load of a kernel variable by its BTF id (imm; the
/// second imm is the BTF object's fd, 0 for vmlinux).
pub const BPF_PSEUDO_BTF_ID: u8 = 3;
/// `src_reg` of a call to a function inside the same program.
pub const BPF_PSEUDO_CALL: u8 = 1;
/// `src_reg` of a call to a kernel function (kfunc); imm = its BTF id in vmlinux.
pub const BPF_PSEUDO_KFUNC_CALL: u8 = 2;
/// `src_reg` of a 64-bit immediate load of a function's address (a callback, e.g. of
/// `bpf_loop`); imm = the function's first instruction relative to the next one.
pub const BPF_PSEUDO_FUNC: u8 = 4;

/// Memory access width.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Size {
    B,
    H,
    W,
    DW,
}

impl Size {
    pub fn code(self) -> u8 {
        match self {
            Size::B => BPF_B,
            Size::H => BPF_H,
            Size::W => BPF_W,
            Size::DW => BPF_DW,
        }
    }
    pub fn bytes(self) -> usize {
        match self {
            Size::B => 1,
            Size::H => 2,
            Size::W => 4,
            Size::DW => 8,
        }
    }
    /// The access width for a scalar of `bytes` bytes (1, 2, 4 or 8).
    pub fn from_bytes(bytes: usize) -> Size {
        match bytes {
            1 => Size::B,
            2 => Size::H,
            4 => Size::W,
            _ => Size::DW,
        }
    }
}

impl Insn {
    pub fn new(code: u8, dst: Reg, src: Reg, off: i16, imm: i32) -> Insn {
        Insn {
            code,
            regs: (src.0 << 4) | (dst.0 & 0x0f),
            off,
            imm,
        }
    }
    pub fn dst(&self) -> Reg {
        Reg(self.regs & 0x0f)
    }
    pub fn src(&self) -> Reg {
        Reg(self.regs >> 4)
    }
    pub fn class(&self) -> u8 {
        self.code & 0x07
    }
    /// True for the first half of a two-slot 64-bit immediate load.
    pub fn is_ld_imm64(&self) -> bool {
        self.code == BPF_LD | BPF_DW | BPF_IMM
    }
    /// True for any jump other than call and exit (those whose `off` is a branch target).
    pub fn is_branch(&self) -> bool {
        let class = self.class();
        (class == BPF_JMP || class == BPF_JMP32) && !matches!(self.code & 0xf0, BPF_CALL | BPF_EXIT)
    }

    /// `dst op= imm` on 64 bits.
    pub fn alu64_imm(op: u8, dst: Reg, imm: i32) -> Insn {
        Insn::new(BPF_ALU64 | op | BPF_K, dst, R0, 0, imm)
    }
    /// `dst op= src` on 64 bits.
    pub fn alu64_reg(op: u8, dst: Reg, src: Reg) -> Insn {
        Insn::new(BPF_ALU64 | op | BPF_X, dst, src, 0, 0)
    }
    /// `dst op= imm` on 32 bits (zero-extends the result).
    pub fn alu32_imm(op: u8, dst: Reg, imm: i32) -> Insn {
        Insn::new(BPF_ALU | op | BPF_K, dst, R0, 0, imm)
    }
    /// `dst op= src` on 32 bits (zero-extends the result).
    pub fn alu32_reg(op: u8, dst: Reg, src: Reg) -> Insn {
        Insn::new(BPF_ALU | op | BPF_X, dst, src, 0, 0)
    }
    /// Signed 64-bit division or modulo (`off` = 1, cpu v4).
    pub fn alu64_sdiv_reg(op: u8, dst: Reg, src: Reg) -> Insn {
        Insn::new(BPF_ALU64 | op | BPF_X, dst, src, 1, 0)
    }
    /// `dst` to big-endian byte order in its low `bits` bits (16, 32 or 64), the rest
    /// zeroed: a byte swap on a little-endian machine (`htons`, `htonl`, `htonll`).
    pub fn to_be(dst: Reg, bits: i32) -> Insn {
        Insn::new(BPF_ALU | BPF_END | BPF_X, dst, R0, 0, bits)
    }
    pub fn mov64_imm(dst: Reg, imm: i32) -> Insn {
        Insn::alu64_imm(BPF_MOV, dst, imm)
    }
    pub fn mov64_reg(dst: Reg, src: Reg) -> Insn {
        Insn::alu64_reg(BPF_MOV, dst, src)
    }
    /// Two-slot load of a 64-bit immediate.
    pub fn ld_imm64(dst: Reg, value: u64) -> [Insn; 2] {
        [
            Insn::new(BPF_LD | BPF_DW | BPF_IMM, dst, R0, 0, value as u32 as i32),
            Insn::new(0, R0, R0, 0, (value >> 32) as u32 as i32),
        ]
    }
    /// Two-slot load of a map reference (`src_reg` = `pseudo`, imm = fd, second imm = offset).
    pub fn ld_map(dst: Reg, pseudo: u8, fd: i32, offset: u32) -> [Insn; 2] {
        [
            Insn::new(BPF_LD | BPF_DW | BPF_IMM, dst, Reg(pseudo), 0, fd),
            Insn::new(0, R0, R0, 0, offset as i32),
        ]
    }
    /// `dst = *(size *)(src + off)`
    pub fn ldx(size: Size, dst: Reg, src: Reg, off: i16) -> Insn {
        Insn::new(BPF_LDX | size.code() | BPF_MEM, dst, src, off, 0)
    }
    /// `*(size *)(dst + off) = src`
    pub fn stx(size: Size, dst: Reg, off: i16, src: Reg) -> Insn {
        Insn::new(BPF_STX | size.code() | BPF_MEM, dst, src, off, 0)
    }
    /// `*(size *)(dst + off) = imm`
    pub fn st(size: Size, dst: Reg, off: i16, imm: i32) -> Insn {
        Insn::new(BPF_ST | size.code() | BPF_MEM, dst, R0, off, imm)
    }
    /// Atomic `*(size *)(dst + off) += src` (size W or DW).
    pub fn atomic_add(size: Size, dst: Reg, off: i16, src: Reg) -> Insn {
        Insn::new(
            BPF_STX | size.code() | BPF_ATOMIC,
            dst,
            src,
            off,
            BPF_ADD as i32,
        )
    }
    /// Atomic `*(size *)(dst + off) += src`, with `src` = the old value (size W or DW).
    pub fn atomic_fetch_add(size: Size, dst: Reg, off: i16, src: Reg) -> Insn {
        Insn::new(
            BPF_STX | size.code() | BPF_ATOMIC,
            dst,
            src,
            off,
            (BPF_ADD | BPF_FETCH) as i32,
        )
    }
    /// Atomic compare-and-exchange: if `*(size *)(dst + off) == r0` store `src` there; `r0`
    /// = the old value either way (size W or DW).
    pub fn atomic_cmpxchg(size: Size, dst: Reg, off: i16, src: Reg) -> Insn {
        Insn::new(
            BPF_STX | size.code() | BPF_ATOMIC,
            dst,
            src,
            off,
            BPF_CMPXCHG,
        )
    }
    /// Conditional jump comparing `dst` with an immediate; `off` is relative to the next insn.
    pub fn jmp_imm(op: u8, dst: Reg, imm: i32, off: i16) -> Insn {
        Insn::new(BPF_JMP | op | BPF_K, dst, R0, off, imm)
    }
    /// Conditional jump comparing `dst` with `src`.
    pub fn jmp_reg(op: u8, dst: Reg, src: Reg, off: i16) -> Insn {
        Insn::new(BPF_JMP | op | BPF_X, dst, src, off, 0)
    }
    pub fn ja(off: i16) -> Insn {
        Insn::new(BPF_JMP | BPF_JA, R0, R0, off, 0)
    }
    /// `gotol`: an unconditional jump with a 32-bit displacement (kernel 6.4 and later).
    pub fn ja_long(off: i32) -> Insn {
        Insn::new(BPF_JMP32 | BPF_JA, R0, R0, 0, off)
    }
    /// Call of kernel helper number `helper`.
    pub fn call(helper: i32) -> Insn {
        Insn::new(BPF_JMP | BPF_CALL, R0, R0, 0, helper)
    }
    /// Call of a function in this program, `off` instructions after the next one.
    pub fn call_local(off: i32) -> Insn {
        Insn::new(BPF_JMP | BPF_CALL, R0, Reg(BPF_PSEUDO_CALL), 0, off)
    }
    /// Call of the kernel function (kfunc) whose vmlinux BTF id is `btf_id`.
    pub fn call_kfunc(btf_id: i32) -> Insn {
        Insn::new(
            BPF_JMP | BPF_CALL,
            R0,
            Reg(BPF_PSEUDO_KFUNC_CALL),
            0,
            btf_id,
        )
    }
    pub fn exit() -> Insn {
        Insn::new(BPF_JMP | BPF_EXIT, R0, R0, 0, 0)
    }

    /// The instruction as the 8 bytes the kernel reads.
    pub fn to_bytes(&self) -> [u8; 8] {
        let mut out = [0u8; 8];
        out[0] = self.code;
        out[1] = self.regs;
        out[2..4].copy_from_slice(&self.off.to_le_bytes());
        out[4..8].copy_from_slice(&self.imm.to_le_bytes());
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_the_kernel() {
        // r0 = 0; exit  -- b7 00 00 00 00 00 00 00 / 95 00 ...
        assert_eq!(
            Insn::mov64_imm(R0, 0).to_bytes(),
            [0xb7, 0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(Insn::exit().to_bytes(), [0x95, 0, 0, 0, 0, 0, 0, 0]);
        // *(u64 *)(r10 - 8) = r1 -> 7b 1a f8 ff 00 00 00 00
        assert_eq!(
            Insn::stx(Size::DW, R10, -8, R1).to_bytes(),
            [0x7b, 0x1a, 0xf8, 0xff, 0, 0, 0, 0]
        );
        let [lo, hi] = Insn::ld_imm64(R1, 0x1122334455667788);
        assert_eq!(lo.imm as u32, 0x55667788);
        assert_eq!(hi.imm as u32, 0x11223344);
        assert!(lo.is_ld_imm64());
    }
}

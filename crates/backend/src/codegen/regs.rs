//! Virtual registers: the expression evaluation stack, kept in r6..r8 and spilled to the
//! BPF stack beyond that.
//!
//! Register conventions of generated code:
//! - r9: this CPU's scratch area (a map value pointer, checked non-null in the prologue)
//! - r6, r7, r8: the first three virtual registers (callee-saved, survive helper calls)
//! - r0..r5: temporaries inside one operation and helper arguments
//!
//! Stack frame: `fp-8` the context pointer, `fp-16` an 8-byte key temporary, `fp-24` the
//! address of the scratch claim word this firing holds (0: none), `fp-32` a group program's
//! system call number, `fp-48` a small aggregation key (16 bytes, [`STACK_KEY_SIZE`]), then
//! the spill slots of virtual registers 3 and up.

use dtrace_ebpf::*;

use crate::emit::Emitter;

pub const SCRATCH: Reg = R9;
pub const CTX_SLOT: i16 = -8;
pub const KEY_SLOT: i16 = -16;
pub const CLAIM_SLOT: i16 = -24;
pub const NR_SLOT: i16 = -32;
pub const STACK_KEY: i16 = -48;
/// The most bytes of an aggregation key kept at [`STACK_KEY`] rather than in scratch.
pub const STACK_KEY_SIZE: u32 = 16;
const SPILL_BASE: i16 = -56;
const PHYSICAL: [Reg; 3] = [R6, R7, R8];
/// Virtual registers that can be live at once.
pub const MAX_DEPTH: usize = 40;

/// A virtual register: an index on the evaluation stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VReg(pub usize);

impl VReg {
    fn home(self) -> Home {
        match PHYSICAL.get(self.0) {
            Some(&r) => Home::Reg(r),
            None => Home::Stack(SPILL_BASE - 8 * (self.0 - PHYSICAL.len()) as i16),
        }
    }
}

enum Home {
    Reg(Reg),
    Stack(i16),
}

/// The evaluation stack's depth.
#[derive(Default)]
pub struct VRegs {
    depth: usize,
}

impl VRegs {
    /// Push a new virtual register; `None` when the expression is too deep.
    pub fn push(&mut self) -> Option<VReg> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        Some(VReg(self.depth - 1))
    }

    /// Pop `v`, which must be the top of the stack.
    pub fn pop(&mut self, v: VReg) {
        debug_assert_eq!(v.0 + 1, self.depth, "virtual registers freed out of order");
        self.depth = v.0;
    }
}

/// The register holding `v`, loading a spilled value into `tmp` first.
pub fn read(e: &mut Emitter, v: VReg, tmp: Reg) -> Reg {
    match v.home() {
        Home::Reg(r) => r,
        Home::Stack(off) => {
            e.emit(Insn::ldx(Size::DW, tmp, R10, off));
            tmp
        }
    }
}

/// Load `v` into exactly `dst`.
pub fn read_into(e: &mut Emitter, v: VReg, dst: Reg) {
    let r = read(e, v, dst);
    if r != dst {
        e.emit(Insn::mov64_reg(dst, r));
    }
}

/// Store `src` as the value of `v`.
pub fn write(e: &mut Emitter, v: VReg, src: Reg) {
    match v.home() {
        Home::Reg(r) => {
            if r != src {
                e.emit(Insn::mov64_reg(r, src));
            }
        }
        Home::Stack(off) => e.emit(Insn::stx(Size::DW, R10, off, src)),
    }
}

//! An instruction buffer with forward labels and map references resolved at load time.

use dtrace_ebpf::*;

use crate::program::MapId;

/// A jump target, bound to an instruction index with [`Emitter::bind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label(usize);

#[derive(Default)]
pub struct Emitter {
    insns: Vec<Insn>,
    labels: Vec<Option<usize>>,
    fixups: Vec<(usize, Label)>,
    /// `call` instructions to a local function (a BPF-to-BPF call) and its label.
    calls: Vec<(usize, Label)>,
    /// Indices of `ld_imm64` instructions whose `imm` is a [`MapId`] to be replaced by a map fd.
    map_relocs: Vec<usize>,
}

/// Finished code: instructions plus the places that name maps.
#[derive(Clone, Debug, Default)]
pub struct Code {
    pub insns: Vec<Insn>,
    pub map_relocs: Vec<usize>,
}

impl Emitter {
    pub fn new() -> Emitter {
        Emitter::default()
    }

    pub fn emit(&mut self, insn: Insn) {
        self.insns.push(insn);
    }

    pub fn emit_all(&mut self, insns: impl IntoIterator<Item = Insn>) {
        self.insns.extend(insns);
    }

    pub fn len(&self) -> usize {
        self.insns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.insns.is_empty()
    }

    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }

    pub fn bind(&mut self, label: Label) {
        self.labels[label.0] = Some(self.insns.len());
    }

    /// `if dst op imm goto label`
    pub fn jmp_imm(&mut self, op: u8, dst: Reg, imm: i32, label: Label) {
        self.fixups.push((self.insns.len(), label));
        self.emit(Insn::jmp_imm(op, dst, imm, 0));
    }

    /// `if dst op src goto label`
    pub fn jmp_reg(&mut self, op: u8, dst: Reg, src: Reg, label: Label) {
        self.fixups.push((self.insns.len(), label));
        self.emit(Insn::jmp_reg(op, dst, src, 0));
    }

    pub fn goto(&mut self, label: Label) {
        self.fixups.push((self.insns.len(), label));
        self.emit(Insn::ja(0));
    }

    /// `call label`: a BPF-to-BPF call of the function starting at `label`.
    pub fn call_label(&mut self, label: Label) {
        self.calls.push((self.insns.len(), label));
        self.emit(Insn::call_local(0));
    }

    /// Load a 64-bit constant, in one instruction when it fits a sign-extended imm32.
    pub fn mov_const(&mut self, dst: Reg, value: u64) {
        if value as i64 >= i32::MIN as i64 && value as i64 <= i32::MAX as i64 {
            self.emit(Insn::mov64_imm(dst, value as i64 as i32));
        } else {
            self.emit_all(Insn::ld_imm64(dst, value));
        }
    }

    /// `dst = map` (for helper calls taking a map).
    pub fn ld_map(&mut self, dst: Reg, map: MapId) {
        self.map_relocs.push(self.insns.len());
        self.emit_all(Insn::ld_map(dst, BPF_PSEUDO_MAP_FD, map.0 as i32, 0));
    }

    /// `dst = &map[0] + offset` (direct value access of a single-element array map).
    pub fn ld_map_value(&mut self, dst: Reg, map: MapId, offset: u32) {
        self.map_relocs.push(self.insns.len());
        self.emit_all(Insn::ld_map(
            dst,
            BPF_PSEUDO_MAP_VALUE,
            map.0 as i32,
            offset,
        ));
    }

    /// Resolve labels; fails only if a jump does not fit in 16 bits.
    pub fn finish(self) -> Result<Code, String> {
        let mut insns = self.insns;
        for (at, label) in self.fixups {
            let target = self.labels[label.0].ok_or("jump to an unbound label")?;
            let off = target as i64 - at as i64 - 1;
            insns[at].off =
                i16::try_from(off).map_err(|_| "program too large: jump out of range")?;
        }
        for (at, label) in self.calls {
            let target = self.labels[label.0].ok_or("call of an unbound label")?;
            insns[at].imm = (target as i64 - at as i64 - 1) as i32;
        }
        Ok(Code {
            insns,
            map_relocs: self.map_relocs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_forward_and_backward_jumps() {
        let mut e = Emitter::new();
        let top = e.label();
        let end = e.label();
        e.bind(top);
        e.jmp_imm(BPF_JEQ, R1, 0, end);
        e.emit(Insn::mov64_imm(R0, 1));
        e.goto(top);
        e.bind(end);
        e.emit(Insn::exit());
        let code = e.finish().unwrap();
        assert_eq!(code.insns[0].off, 2);
        assert_eq!(code.insns[2].off, -3);
    }
}

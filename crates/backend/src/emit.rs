//! An instruction buffer with forward labels and map references resolved at load time.

use std::ops::Range;

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
    /// Instructions naming a local function (a BPF-to-BPF `call`, or the load of a
    /// callback's address) and the function's label.
    calls: Vec<(usize, Label)>,
    /// Indices of `ld_imm64` instructions whose `imm` is a [`MapId`] to be replaced by a map fd.
    map_relocs: Vec<usize>,
    /// Ranges of instructions left out of the finished code ([`Emitter::omit`]).
    omitted: Vec<Range<usize>>,
    /// Stretches of code from one label to another ([`Emitter::span`]).
    spans: Vec<(Label, Label)>,
}

/// The longest displacement a jump keeps in its 16-bit field. The verifier inserts
/// instructions of its own (inlined helpers, rewritten context loads) and fails to load a
/// program when a 16-bit jump over them overflows, so far jumps are relaxed well before
/// 32767.
const NEAR_JUMP: i64 = 8191;

/// Finished code: instructions plus the places that name maps.
#[derive(Clone, Debug, Default)]
pub struct Code {
    pub insns: Vec<Insn>,
    pub map_relocs: Vec<usize>,
    /// Where the functions after the first start (ascending): the targets of local calls
    /// and callback loads.
    pub functions: Vec<u32>,
    /// The instructions of each stretch marked with [`Emitter::span`], in marking order.
    pub spans: Vec<Range<usize>>,
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

    /// `dst = &function at label` (a callback for a helper such as `bpf_loop`).
    pub fn ld_func(&mut self, dst: Reg, label: Label) {
        self.calls.push((self.insns.len(), label));
        self.emit_all(Insn::ld_map(dst, BPF_PSEUDO_FUNC, 0, 0));
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

    /// Leave the instructions of `range` out of the finished code: a label bound inside or
    /// at the end of it lands on the next instruction kept. The caller makes sure no kept
    /// instruction jumps into the middle of it or needs what it computed.
    pub fn omit(&mut self, range: Range<usize>) {
        self.omitted.push(range);
    }

    /// Mark the code from `start` to `end` (both bound by the time the code is finished):
    /// the finished code tells which instructions it became ([`Code::spans`]), omitted and
    /// relaxed ones accounted for.
    pub fn span(&mut self, start: Label, end: Label) {
        self.spans.push((start, end));
    }

    /// Whether an instruction emitted so far and outside `ranges` satisfies `f`.
    pub fn any_outside(&self, ranges: &[Range<usize>], f: impl Fn(&Insn) -> bool) -> bool {
        self.insns
            .iter()
            .enumerate()
            .any(|(i, insn)| !ranges.iter().any(|r| r.contains(&i)) && f(insn))
    }

    /// Resolve labels. A jump whose displacement exceeds [`NEAR_JUMP`] is relaxed: `goto`
    /// becomes `gotol` (32-bit displacement), and `if cond goto L` becomes
    /// `if cond goto +1; goto +1; gotol L`. Jumps emitted with fixed displacements only
    /// ever skip straight-line instructions, so inserting instructions at label jumps
    /// keeps them right.
    pub fn finish(self) -> Result<Code, String> {
        let Emitter {
            insns: old,
            labels,
            fixups,
            calls,
            map_relocs,
            omitted,
            spans,
        } = self;
        let gone = |at: usize| omitted.iter().any(|r| r.contains(&at));
        let fixups: Vec<(usize, Label)> = fixups.into_iter().filter(|f| !gone(f.0)).collect();
        for &(_, label) in &fixups {
            labels[label.0].ok_or("jump to an unbound label")?;
        }
        for &(_, label) in &calls {
            labels[label.0].ok_or("call of an unbound label")?;
        }
        for &(start, end) in &spans {
            labels[start.0]
                .and(labels[end.0])
                .ok_or("span of an unbound label")?;
        }
        // Every label a jump or call names is bound; others are never read.
        let labels: Vec<usize> = labels.into_iter().map(|l| l.unwrap_or(0)).collect();
        let is_goto = |at: usize| old[at].code == BPF_JMP | BPF_JA;
        // The fixup of each instruction that jumps to a label (fixups come in emit order).
        let mut fixup_of = vec![None; old.len()];
        for (k, &(at, _)) in fixups.iter().enumerate() {
            fixup_of[at] = Some(k);
        }
        // Which fixups need the long form: grown until nothing more needs it (growing
        // the code only lengthens other jumps).
        let mut long = vec![false; fixups.len()];
        let mut start = Vec::with_capacity(old.len() + 1);
        loop {
            // start[i]: where old instruction i lands; start[old.len()]: the new length.
            start.clear();
            let mut n = 0;
            for (i, fixup) in fixup_of.iter().enumerate() {
                start.push(n);
                n += match fixup {
                    _ if gone(i) => 0,
                    Some(k) if long[*k] && !is_goto(i) => 3,
                    _ => 1,
                };
            }
            start.push(n);
            let mut changed = false;
            for (k, &(at, label)) in fixups.iter().enumerate() {
                let off = start[labels[label.0]] as i64 - start[at] as i64 - 1;
                if !long[k] && off.abs() > NEAR_JUMP {
                    long[k] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut insns = Vec::with_capacity(start[old.len()]);
        for (i, insn) in old.iter().enumerate() {
            if gone(i) {
                continue;
            }
            let Some(k) = fixup_of[i] else {
                insns.push(*insn);
                continue;
            };
            let target = start[labels[fixups[k].1 .0]] as i64;
            if !long[k] {
                let mut insn = *insn;
                insn.off = (target - start[i] as i64 - 1) as i16;
                insns.push(insn);
            } else if is_goto(i) {
                let off = i32::try_from(target - start[i] as i64 - 1)
                    .map_err(|_| "program too large: jump out of range")?;
                insns.push(Insn::ja_long(off));
            } else {
                let mut cond = *insn;
                cond.off = 1;
                insns.push(cond);
                insns.push(Insn::ja(1));
                let off = i32::try_from(target - start[i] as i64 - 3)
                    .map_err(|_| "program too large: jump out of range")?;
                insns.push(Insn::ja_long(off));
            }
        }
        let mut functions = Vec::new();
        for (at, label) in calls.into_iter().filter(|c| !gone(c.0)) {
            let (at, target) = (start[at], start[labels[label.0]]);
            insns[at].imm = (target as i64 - at as i64 - 1) as i32;
            functions.push(target as u32);
        }
        functions.sort_unstable();
        functions.dedup();
        Ok(Code {
            insns,
            map_relocs: map_relocs
                .into_iter()
                .filter(|&at| !gone(at))
                .map(|at| start[at])
                .collect(),
            functions,
            spans: spans
                .into_iter()
                .map(|(a, b)| start[labels[a.0]]..start[labels[b.0]])
                .collect(),
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

    #[test]
    fn callback_loads_name_their_function() {
        let mut e = Emitter::new();
        let f = e.label();
        e.ld_func(R2, f);
        e.emit(Insn::exit());
        e.bind(f);
        e.emit(Insn::exit());
        let code = e.finish().unwrap();
        assert_eq!(code.insns[0].regs >> 4, BPF_PSEUDO_FUNC);
        assert_eq!(code.insns[0].imm, 2);
        assert_eq!(code.functions, vec![3]);
    }

    #[test]
    fn spans_follow_omitted_and_relaxed_code() {
        let mut e = Emitter::new();
        let (first, second, end, far) = (e.label(), e.label(), e.label(), e.label());
        e.emit(Insn::mov64_imm(R0, 0));
        e.bind(first);
        e.emit(Insn::mov64_imm(R1, 1));
        e.omit(1..2);
        // Relaxed into three instructions: the jump is farther than a near one.
        e.jmp_imm(BPF_JEQ, R0, 0, far);
        e.bind(second);
        for _ in 0..9000 {
            e.emit(Insn::mov64_imm(R2, 2));
        }
        e.bind(far);
        e.emit(Insn::exit());
        e.bind(end);
        e.span(first, second);
        e.span(second, end);
        let code = e.finish().unwrap();
        assert_eq!(code.spans, vec![1..4, 4..9005]);
        assert_eq!(code.insns.len(), 9005);
    }

    #[test]
    fn omitted_ranges_leave_the_code_and_their_labels_land_after_them() {
        let mut e = Emitter::new();
        let after = e.label();
        let end = e.label();
        e.jmp_imm(BPF_JEQ, R1, 0, after);
        let from = e.len();
        e.ld_map(R2, MapId(3));
        e.goto(end);
        e.bind(after);
        e.emit(Insn::mov64_imm(R0, 1));
        e.omit(from..e.len());
        e.bind(end);
        e.ld_map(R3, MapId(4));
        e.emit(Insn::exit());
        let ld_and_goto = from..from + 3;
        assert!(!e.any_outside(std::slice::from_ref(&ld_and_goto), |i| i.dst() == R2));
        let code = e.finish().unwrap();
        assert_eq!(code.insns.len(), 4);
        assert_eq!(code.insns[0].off, 0);
        assert_eq!(code.map_relocs, vec![1]);
        assert_eq!(code.insns[1].dst(), R3);
    }

    #[test]
    fn relaxes_jumps_past_16_bits() {
        const FAR: usize = 40_000;
        let mut e = Emitter::new();
        let end = e.label();
        let func = e.label();
        e.jmp_imm(BPF_JEQ, R1, 0, end); // far: becomes three instructions
        e.goto(end); // far: becomes gotol
        e.call_label(func);
        e.ld_map(R1, MapId(7));
        let near = e.label();
        e.jmp_imm(BPF_JNE, R2, 0, near); // near: unchanged
        e.bind(near);
        for _ in 0..FAR {
            e.emit(Insn::mov64_imm(R0, 0));
        }
        e.bind(end);
        e.emit(Insn::exit());
        e.bind(func);
        e.emit(Insn::exit());
        let code = e.finish().unwrap();
        let i = &code.insns;
        // 0: if r1 == 0 goto +1; 1: goto +1; 2: gotol end; 3: gotol end; 4: call; 5-6: ld_map;
        // 7: if r2 != 0 goto +0; 8..: the block; then end, func.
        let end_at = 8 + FAR;
        assert_eq!((i[0].code, i[0].off), (BPF_JMP | BPF_JEQ | BPF_K, 1));
        assert_eq!((i[1].code, i[1].off), (BPF_JMP | BPF_JA, 1));
        assert_eq!(
            (i[2].code, i[2].imm),
            (BPF_JMP32 | BPF_JA, (end_at - 3) as i32)
        );
        assert_eq!(
            (i[3].code, i[3].imm),
            (BPF_JMP32 | BPF_JA, (end_at - 4) as i32)
        );
        assert_eq!(i[4].imm, (end_at + 1 - 5) as i32);
        assert_eq!(code.map_relocs, vec![5]);
        assert_eq!(code.functions, vec![end_at as u32 + 1]);
        assert_eq!(i[7].off, 0);
        assert_eq!(i.len(), end_at + 2);
    }
}

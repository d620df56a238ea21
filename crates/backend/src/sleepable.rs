//! A probe program's reads of user memory, made able to fault pages in.
//!
//! Generated code reads the traced process's memory with `bpf_probe_read_user` and
//! `bpf_probe_read_user_str`, which run where the kernel may not sleep: a page the
//! process has not touched yet (a string literal in `.rodata` of a process that just
//! started) cannot be faulted in, and the read fails ("invalid address"). A uprobe program
//! loaded with `BPF_F_SLEEPABLE` may call `bpf_copy_from_user` and the kfunc
//! `bpf_copy_from_user_str` (Linux 6.12) instead, which fault the page in. They take the
//! same arguments and give the same results (0, or the length with the NUL; a negative
//! errno on failure, which still raises DTrace's fault), so the rewrite is one call for
//! another: the kfunc's fourth argument (its flags, 0) is set, and its `int` result
//! sign-extended, by [`read_user_str`], the only way code generation reads a user string.

use dtrace_ebpf::*;

use crate::emit::Emitter;

/// `r0 = bpf_probe_read_user_str(r1, r2, r3)`, with r4 = 0 for the sleepable rewrite. The
/// kfunc returns a C `int`, whose upper 32 bits in r0 are undefined, so r0 is
/// sign-extended from its lower half (a no-op on the helper's result).
pub(crate) fn read_user_str(e: &mut Emitter) {
    e.emit(Insn::mov64_imm(R4, 0));
    e.emit(Insn::call(helpers::PROBE_READ_USER_STR));
    e.emit(Insn::alu64_imm(BPF_LSH, R0, 32));
    e.emit(Insn::alu64_imm(BPF_ARSH, R0, 32));
}

/// Whether the instruction calls helper `id`.
fn calls(insn: &Insn, id: i32) -> bool {
    insn.code == BPF_JMP | BPF_CALL && insn.regs >> 4 == 0 && insn.imm == id
}

/// Whether `insns` read user memory (and so would gain from being sleepable).
pub fn reads_user_memory(insns: &[Insn]) -> bool {
    insns
        .iter()
        .any(|i| calls(i, helpers::PROBE_READ_USER) || calls(i, helpers::PROBE_READ_USER_STR))
}

/// Rewrite the user-memory reads of `insns` into their sleepable forms, the string reads
/// calling the kfunc whose vmlinux BTF id is `copy_str_kfunc`. The program must then be
/// loaded sleepable.
pub fn make_sleepable(insns: &mut [Insn], copy_str_kfunc: i32) {
    for at in 0..insns.len() {
        if calls(&insns[at], helpers::PROBE_READ_USER) {
            insns[at] = Insn::call(helpers::COPY_FROM_USER);
        } else if calls(&insns[at], helpers::PROBE_READ_USER_STR)
            // Set up by read_user_str (a string read emitted otherwise stays as it is,
            // still correct in a sleepable program).
            && at > 0
            && insns[at - 1] == Insn::mov64_imm(R4, 0)
        {
            insns[at] = Insn::call_kfunc(copy_str_kfunc);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_reads_become_their_sleepable_forms() {
        let mut e = Emitter::new();
        e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
        assert!(!reads_user_memory(&e.finish().unwrap().insns));
        let mut e = Emitter::new();
        e.emit(Insn::call(helpers::PROBE_READ_USER));
        read_user_str(&mut e);
        e.emit(Insn::call(helpers::PROBE_READ_USER_STR));
        e.emit(Insn::call_local(0));
        let mut insns = e.finish().unwrap().insns;
        assert!(reads_user_memory(&insns));
        make_sleepable(&mut insns, 777);
        assert_eq!(
            insns,
            [
                Insn::call(helpers::COPY_FROM_USER),
                Insn::mov64_imm(R4, 0),
                Insn::call_kfunc(777),
                Insn::alu64_imm(BPF_LSH, R0, 32),
                Insn::alu64_imm(BPF_ARSH, R0, 32),
                Insn::call(helpers::PROBE_READ_USER_STR),
                Insn::call_local(0),
            ]
        );
    }
}

//! Whether a record wakes the consumer.
//!
//! The consumer reads the ring buffer on a timer, every `switchrate` (`cli/src/session.rs`),
//! as DTrace's consumer does, so records are written with `helpers::BPF_RB_NO_WAKEUP`: the kernel's
//! default wakes a reader that has caught up, which costs the probe's CPU an interrupt and
//! a context switch for nearly every record. Two kinds of record wake it at once
//! (`helpers::BPF_RB_FORCE_WAKEUP`): the record of a clause that calls `exit()`, so tracing ends
//! promptly rather than a switchrate later, and any record written while the ring holds
//! more than [`CodegenOptions::wakeup_at`](super::CodegenOptions) unread bytes, so a burst
//! is read before it can fill the buffer between two reads.

use dtrace_ebpf::*;

use super::Gen;
use crate::program::ActionKind;

impl Gen<'_, '_> {
    /// `r4` = the flags of the record about to be written: `helpers::BPF_RB_FORCE_WAKEUP` for a
    /// clause that calls `exit()` or when the ring's unread bytes pass the threshold, else
    /// `helpers::BPF_RB_NO_WAKEUP`. Clobbers r0–r5.
    pub(super) fn output_flags(&mut self) {
        let exits = self.clause.as_ref().is_some_and(|c| {
            c.actions
                .iter()
                .any(|a| matches!(a.kind, ActionKind::Exit(_)))
        });
        if exits {
            self.e
                .emit(Insn::mov64_imm(R4, helpers::BPF_RB_FORCE_WAKEUP));
            return;
        }
        self.e.ld_map(R1, self.c.core.ringbuf);
        self.e.emit(Insn::mov64_imm(R2, helpers::BPF_RB_AVAIL_DATA));
        self.e.emit(Insn::call(helpers::RINGBUF_QUERY));
        self.e.emit(Insn::mov64_imm(R4, helpers::BPF_RB_NO_WAKEUP));
        let quiet = self.e.label();
        self.e
            .jmp_imm(BPF_JLE, R0, self.c.opts.wakeup_at as i32, quiet);
        self.e
            .emit(Insn::mov64_imm(R4, helpers::BPF_RB_FORCE_WAKEUP));
        self.e.bind(quiet);
    }
}

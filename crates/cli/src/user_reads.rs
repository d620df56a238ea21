//! How a probe's program reads user memory: sleepable, faulting untouched pages in, where
//! the kernel allows it, else with the `bpf_probe_read_user` helpers, which fail on them.
//!
//! Only uprobe programs (USDT and `pid` probes) are made sleepable: the kernel refuses
//! `BPF_F_SLEEPABLE` for tracepoint, raw tracepoint and `tp_btf` programs, system calls'
//! included (6.18: "Only fentry/fexit/fmod_ret, lsm, iter, uprobe, and struct_ops programs
//! can be sleepable"), and sleepable kprobes and perf-event programs at attach; fentry may
//! sleep only on the functions of the kernel's error-injection list (system calls' among
//! them), but this kernel refuses fentry altogether, so `fbt` and system calls keep the
//! helpers. Whether sleepable uprobe programs can read strings (the kfunc
//! `bpf_copy_from_user_str`, Linux 6.12) is probed once, by loading a tiny one, the first
//! time a user probe's program reads user memory.

use std::sync::OnceLock;

use dtrace_backend::program::ProbeContext;
use dtrace_ebpf::{helpers, Insn, Size, R0, R1, R10, R2, R3, R4};
use dtrace_probes::Attach;
use dtrace_runtime::{Program, ProgramSpec, ProgramType};

/// The vmlinux BTF id of `bpf_copy_from_user_str` when this kernel runs sleepable uprobe
/// programs calling it, or why it does not (a sentence).
fn support() -> &'static Result<i32, String> {
    static SUPPORT: OnceLock<Result<i32, String>> = OnceLock::new();
    SUPPORT.get_or_init(probe)
}

fn probe() -> Result<i32, String> {
    let lacks =
        "the kernel lacks bpf_copy_from_user_str for sleepable uprobe programs (Linux 6.12 has it)";
    let id = dtrace_backend::types::kernel::vmlinux()
        .and_then(|btf| btf.find(dtrace_btf::Kind::Func, "bpf_copy_from_user_str"))
        .ok_or_else(|| lacks.to_string())?;
    let id = i32::try_from(id).map_err(|_| lacks.to_string())?;
    // Both reads, of 8 bytes at user address 0 into the stack.
    let mut insns = vec![Insn::st(Size::DW, R10, -8, 0)];
    for call in [Insn::call_kfunc(id), Insn::call(helpers::COPY_FROM_USER)] {
        insns.extend([
            Insn::mov64_reg(R1, R10),
            Insn::alu64_imm(dtrace_ebpf::BPF_ADD, R1, -8),
            Insn::mov64_imm(R2, 8),
            Insn::mov64_imm(R3, 0),
            Insn::mov64_imm(R4, 0),
            call,
        ]);
    }
    insns.extend([Insn::mov64_imm(R0, 0), Insn::exit()]);
    let spec = ProgramSpec {
        sleepable: true,
        ..ProgramSpec::new(ProgramType::Kprobe, "dt_sleepable", &insns)
    };
    Program::load(&spec).map(drop).map_err(|e| {
        let errno = e.errno().map_or_else(String::new, |n| format!(", errno {n}"));
        format!("the kernel refuses sleepable uprobe programs reading user memory (Linux 6.12 allows them{errno})")
    })?;
    Ok(id)
}

/// How a program reads user memory.
pub enum Reads {
    /// It does not.
    None,
    /// Sleepable: the kfunc id its string reads call (see `dtrace_backend::sleepable`).
    Sleepable(i32),
    /// With `bpf_probe_read_user`, for this reason.
    Helpers(String),
}

/// How the program `insns` of a probe of `context`, attached as `attach`, reads user
/// memory.
pub fn reads(insns: &[Insn], context: &ProbeContext, attach: Option<&Attach>) -> Reads {
    if !dtrace_backend::sleepable::reads_user_memory(insns) {
        return Reads::None;
    }
    let cannot = |what: &str| {
        Reads::Helpers(format!(
            "{what} programs cannot sleep to fault pages in; only uprobe programs can"
        ))
    };
    match (attach, context) {
        (Some(Attach::User(_)), _) => match support() {
            Ok(id) => Reads::Sleepable(*id),
            Err(why) => Reads::Helpers(why.clone()),
        },
        (Some(Attach::KernelMulti { .. }), _) => cannot("kprobe"),
        (_, ProbeContext::PerfEvent) => cannot("perf event"),
        (_, ProbeContext::Function { .. }) => Reads::Helpers(
            "dtrace does not load fentry programs sleepable (the kernel allows it only on the functions of its error-injection list)".into(),
        ),
        _ => cannot("tracepoint"),
    }
}

/// What `-v` says of a probe's user-memory reads.
pub fn describe(probe: &str, reads: &Reads) -> Option<String> {
    match reads {
        Reads::None => None,
        Reads::Sleepable(_) => Some(format!(
            "dtrace: {probe}: user memory read by a sleepable program (untouched pages are faulted in)\n"
        )),
        Reads::Helpers(why) => Some(format!(
            "dtrace: {probe}: user memory read with bpf_probe_read_user, which fails on pages not touched yet: {why}\n"
        )),
    }
}

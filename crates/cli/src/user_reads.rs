//! How a probe's program reads user memory: sleepable, faulting untouched pages in, where
//! the kernel allows it, else with the `bpf_probe_read_user` helpers, which fail on them.
//!
//! Uprobe programs (USDT and `pid` probes) are made sleepable in place. The kernel refuses
//! `BPF_F_SLEEPABLE` for tracepoint, raw tracepoint and `tp_btf` programs, system calls'
//! included (6.18: "Only fentry/fexit/fmod_ret, lsm, iter, uprobe, and struct_ops programs
//! can be sleepable"), and sleepable kprobes and perf-event programs at attach. fentry may
//! sleep on the functions of the kernel's error-injection list, which has every system
//! call's `__x64_sys_NAME`: so a system call's entry probe whose program reads user memory
//! is compiled again as a sleepable fentry program on that function where the kernel loads
//! one ([`syscall_fentry`], `crate::syscall_fentry`); `fbt` keeps the helpers. Whether
//! sleepable programs can read strings (the kfunc `bpf_copy_from_user_str`, Linux 6.12) is
//! probed once, by loading a tiny one, the first time a probe's program reads user memory.

use std::sync::OnceLock;

use dtrace_backend::program::{ProbeContext, ProbeSite};
use dtrace_ebpf::{helpers, Insn, Size, R0, R1, R10, R2, R3, R4};
use dtrace_probes::Attach;
use dtrace_runtime::{AttachType, Program, ProgramSpec, ProgramType};

/// The vmlinux BTF id of `bpf_copy_from_user_str` when this kernel runs sleepable uprobe
/// programs calling it, or why it does not (a sentence).
fn support() -> &'static Result<i32, String> {
    static SUPPORT: OnceLock<Result<i32, String>> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        let lacks = "the kernel lacks bpf_copy_from_user_str for sleepable uprobe programs (Linux 6.12 has it)";
        let id = copy_str_kfunc().ok_or_else(|| lacks.to_string())?;
        let spec = ProgramSpec::new(ProgramType::Kprobe, "dt_sleepable", &[]);
        probe(spec, id).map_err(|errno| {
            format!("the kernel refuses sleepable uprobe programs reading user memory (Linux 6.12 allows them{errno})")
        })
    })
}

/// The vmlinux BTF id of `bpf_copy_from_user_str` when this kernel loads sleepable fentry
/// programs on system calls' functions calling it, or why it does not (a sentence).
pub fn syscall_fentry() -> &'static Result<i32, String> {
    static SUPPORT: OnceLock<Result<i32, String>> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        let lacks = "the kernel lacks bpf_copy_from_user_str for sleepable fentry programs (Linux 6.12 has it)";
        let id = copy_str_kfunc().ok_or_else(|| lacks.to_string())?;
        let target = syscall_function("read").ok_or_else(|| {
            "kernel BTF does not describe the system calls' __x64_sys_ functions".to_string()
        })?;
        let spec = ProgramSpec {
            expected_attach_type: Some(AttachType::TraceFentry),
            attach_btf_id: target,
            ..ProgramSpec::new(ProgramType::Tracing, "dt_sleepable", &[])
        };
        probe(spec, id).map_err(|errno| {
            if let Some(why) = dtrace_probes::fbt::kernel_refusal() {
                format!("the kernel refuses fentry programs, which system calls would need to sleep ({why})")
            } else if btf_func("within_error_injection_list").is_none() {
                // fentry may sleep only on the functions of that list, which has every
                // system call's.
                "the kernel lets fentry programs sleep only on the functions of its error-injection list, and it was built without one (CONFIG_FUNCTION_ERROR_INJECTION)".into()
            } else {
                format!("the kernel refuses sleepable fentry programs on system calls (__x64_sys_read{errno})")
            }
        })
    })
}

/// The vmlinux BTF id of system call `name`'s function, `__x64_sys_NAME`.
pub fn syscall_function(name: &str) -> Option<u32> {
    btf_func(&format!("__x64_sys_{name}"))
}

/// The vmlinux BTF id of kernel function `name`.
fn btf_func(name: &str) -> Option<u32> {
    dtrace_backend::types::kernel::vmlinux().and_then(|btf| btf.find(dtrace_btf::Kind::Func, name))
}

/// The kfunc a sleepable program's string reads call ([`Reads::Sleepable`]'s).
pub const COPY_STR_KFUNC: &str = "bpf_copy_from_user_str";

/// The vmlinux BTF id of the kfunc [`COPY_STR_KFUNC`].
fn copy_str_kfunc() -> Option<i32> {
    btf_func(COPY_STR_KFUNC).and_then(|id| i32::try_from(id).ok())
}

/// Load `spec` sleepable with a body calling both reads (of 8 bytes at user address 0 into
/// the stack; the kfunc's id is `kfunc`): `kfunc` if it loads, else the kernel's errno as
/// ", errno N" (empty when it gave none).
fn probe(spec: ProgramSpec, kfunc: i32) -> Result<i32, String> {
    let mut insns = vec![Insn::st(Size::DW, R10, -8, 0)];
    for call in [Insn::call_kfunc(kfunc), Insn::call(helpers::COPY_FROM_USER)] {
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
        insns: &insns,
        ..spec
    };
    Program::load(&spec).map(|_| kfunc).map_err(|e| {
        e.errno()
            .map_or_else(String::new, |n| format!(", errno {n}"))
    })
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

/// How the program `insns` of `probe`, of `context`, attached as `attach`, reads user
/// memory.
pub fn reads(
    insns: &[Insn],
    probe: &ProbeSite,
    context: &ProbeContext,
    attach: Option<&Attach>,
) -> Reads {
    if !dtrace_backend::sleepable::reads_user_memory(insns) {
        return Reads::None;
    }
    let cannot = |what: &str| {
        Reads::Helpers(format!(
            "{what} programs cannot sleep to fault pages in; uprobe and system call fentry programs can"
        ))
    };
    match (attach, context) {
        (Some(Attach::User(_)), _) => match support() {
            Ok(id) => Reads::Sleepable(*id),
            Err(why) => Reads::Helpers(why.clone()),
        },
        // Compiled for fentry once the kernel loaded a sleepable one (see syscall_fentry).
        (_, ProbeContext::Tracepoint(l)) if l.fentry.is_some() => match syscall_fentry() {
            Ok(id) => Reads::Sleepable(*id),
            Err(why) => Reads::Helpers(why.clone()),
        },
        (_, ProbeContext::Tracepoint(_)) if crate::syscall_fentry::is_entry(probe) => {
            Reads::Helpers(match syscall_fentry() {
                Ok(_) => "the system call has no __x64_sys_ function in kernel BTF".into(),
                Err(why) => why.clone(),
            })
        }
        (Some(Attach::KernelMulti { .. }), _) => cannot("kprobe"),
        (_, ProbeContext::PerfEvent) => cannot("perf event"),
        (_, ProbeContext::Function { .. }) => Reads::Helpers(
            "dtrace does not load fentry programs sleepable (the kernel allows it only on the functions of its error-injection list)".into(),
        ),
        _ => cannot("tracepoint"),
    }
}

/// What `-v` says of `probe`'s user-memory reads.
pub fn describe(probe: &ProbeSite, reads: &Reads) -> Option<String> {
    let name = probe.full_name();
    match reads {
        Reads::None => None,
        Reads::Sleepable(_) => {
            let program = match &probe.context {
                ProbeContext::Tracepoint(l) if l.fentry.is_some() => {
                    format!("sleepable fentry program on __x64_sys_{}", probe.function)
                }
                _ => "sleepable program".into(),
            };
            Some(format!(
                "dtrace: {name}: user memory read by a {program} (untouched pages are faulted in)\n"
            ))
        }
        Reads::Helpers(why) => Some(format!(
            "dtrace: {name}: user memory read with bpf_probe_read_user, which fails on pages not touched yet: {why}\n"
        )),
    }
}

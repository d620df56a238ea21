//! Kernel function probes by kprobe_multi links: one `BPF_LINK_CREATE` of attach type
//! `BPF_TRACE_KPROBE_MULTI` puts a kprobe-type program (loaded with
//! [`crate::AttachType::TraceKprobeMulti`]) on many kernel functions at once, by name, each
//! with a cookie (the kernel's fprobe, `CONFIG_FPROBE`: ftrace under the hood, so only the
//! functions ftrace lists in `available_filter_functions` can be taken). The program's
//! context is the function's `struct pt_regs`, at entry or (with
//! `BPF_F_KPROBE_MULTI_RETURN`) at return. Dropping the link detaches every function.
//!
//! Kernels with kprobes but without fprobe (Debian 12's 6.1) take the same program on one
//! perf-event kprobe per function ([`attach_kprobe_perf`]), each with its cookie.

use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::prog::Program;
use crate::sys::{self, cmd, LinkCreateAttr, PerfEventAttr};

/// `BPF_LINK_CREATE`'s attr for kprobe_multi links.
#[repr(C)]
#[derive(Default)]
struct KprobeMultiAttr {
    prog_fd: u32,
    target_fd: u32,
    attach_type: u32,
    flags: u32,
    /// `BPF_F_KPROBE_MULTI_RETURN` for return probes.
    multi_flags: u32,
    cnt: u32,
    /// Pointer to `cnt` pointers to NUL-terminated function names.
    syms: u64,
    /// Pointer to `cnt` addresses (unused: names are given).
    addrs: u64,
    /// Pointer to `cnt` u64 cookies.
    cookies: u64,
}

/// `enum bpf_attach_type`: `BPF_TRACE_KPROBE_MULTI`.
const BPF_TRACE_KPROBE_MULTI: u32 = 42;
/// `BPF_F_KPROBE_MULTI_RETURN`.
const BPF_F_KPROBE_MULTI_RETURN: u32 = 1;

/// Attaches `prog` to the entry (or, `retprobe`, the return) of every function in
/// `functions` with one kprobe_multi link; function `i` fires with cookie `i`.
pub fn attach_kprobe_multi(
    prog: &Program,
    functions: &[String],
    retprobe: bool,
) -> Result<crate::Link> {
    let what = || {
        format!(
            "BPF_LINK_CREATE (kprobe_multi, {} kernel functions{}) for {:?}",
            functions.len(),
            if retprobe { ", return" } else { "" },
            prog.name()
        )
    };
    let names = functions
        .iter()
        .map(|f| CString::new(f.as_str()))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|_| Error::Invalid(format!("{}: a name contains NUL", what())))?;
    let cnt = u32::try_from(names.len())
        .map_err(|_| Error::Invalid(format!("{}: too many functions", what())))?;
    let syms: Vec<u64> = names.iter().map(|n| n.as_ptr() as u64).collect();
    let cookies: Vec<u64> = (0..names.len() as u64).collect();
    let mut attr = KprobeMultiAttr {
        prog_fd: prog.fd() as u32,
        attach_type: BPF_TRACE_KPROBE_MULTI,
        multi_flags: if retprobe {
            BPF_F_KPROBE_MULTI_RETURN
        } else {
            0
        },
        cnt,
        syms: syms.as_ptr() as u64,
        cookies: cookies.as_ptr() as u64,
        ..Default::default()
    };
    // SAFETY: syms points at `cnt` pointers to NUL-terminated strings and cookies at `cnt`
    // u64s, all outliving the call; the kernel only reads them.
    let fd = unsafe { sys::bpf_fd(cmd::LINK_CREATE, &mut attr) }.map_err(|errno| Error::Os {
        what: what(),
        errno,
    })?;
    Ok(crate::Link::from_bpf_link(fd))
}

/// Whether this kernel has kprobe_multi links (`CONFIG_FPROBE`, 5.18 and later). Asked once
/// per process: a two-instruction program loaded for them, and a link on a function that
/// does not exist, which such a kernel refuses with `ESRCH` (name not found) and others
/// with `EOPNOTSUPP` or `EINVAL`.
pub fn kprobe_multi_available() -> bool {
    static ANSWER: OnceLock<bool> = OnceLock::new();
    *ANSWER.get_or_init(|| {
        let insns = [
            dtrace_ebpf::Insn::mov64_imm(dtrace_ebpf::R0, 0),
            dtrace_ebpf::Insn::exit(),
        ];
        let mut spec =
            crate::ProgramSpec::new(crate::ProgramType::Kprobe, "dt_kprobe_multi", &insns);
        spec.expected_attach_type = Some(crate::AttachType::TraceKprobeMulti);
        let Ok(prog) = Program::load(&spec) else {
            return false;
        };
        match attach_kprobe_multi(&prog, &["dt_no_such_kernel_function".to_string()], false) {
            Ok(_) => true,
            Err(e) => e.errno() == Some(libc::ESRCH),
        }
    })
}

const PMU_DIR: &str = "/sys/bus/event_source/devices/kprobe";

/// The `kprobe` PMU's `perf_event_attr.type` and the `config` bit of return probes, read
/// from sysfs once; None on a kernel without kprobes (this project's test machine).
pub fn kprobe_pmu() -> Option<(u32, u32)> {
    static PMU: OnceLock<Option<(u32, u32)>> = OnceLock::new();
    *PMU.get_or_init(|| {
        let read = |file: &str| std::fs::read_to_string(format!("{PMU_DIR}/{file}")).ok();
        let type_ = read("type")?.trim().parse().ok()?;
        let bit = read("format/retprobe")?
            .trim()
            .strip_prefix("config:")?
            .parse()
            .ok()?;
        Some((type_, bit))
    })
}

/// Attaches `prog` (a kprobe-type program loaded without an expected attach type) to the
/// entry (or, `retprobe`, the return) of kernel function `function` through a perf event of
/// the `kprobe` PMU, with `cookie` for `bpf_get_attach_cookie()`. The BPF link keeps the
/// event; dropping it detaches.
pub fn attach_kprobe_perf(
    prog: &Program,
    function: &str,
    retprobe: bool,
    cookie: u64,
) -> Result<crate::Link> {
    let what = || {
        format!(
            "{} on {function} for {:?}",
            if retprobe { "kretprobe" } else { "kprobe" },
            prog.name()
        )
    };
    let (type_, retprobe_bit) = kprobe_pmu()
        .ok_or_else(|| Error::Invalid(format!("{}: this kernel has no kprobes", what())))?;
    let name = CString::new(function)
        .map_err(|_| Error::Invalid(format!("{}: the name contains NUL", what())))?;
    let attr = PerfEventAttr {
        type_,
        config: if retprobe { 1 << retprobe_bit } else { 0 },
        sample_period_or_freq: 1,
        flags: sys::PERF_ATTR_FLAG_DISABLED,
        // `kprobe_func`: read by the kernel during the call only.
        config1: name.as_ptr() as u64,
        // `probe_offset`.
        config2: 0,
        ..Default::default()
    };
    // Opened on CPU 0: the program runs wherever the function is called.
    let event = sys::perf_event_open(&attr, -1, 0, || format!("perf_event_open ({})", what()))?;
    let mut link_attr = LinkCreateAttr {
        prog_fd: prog.fd() as u32,
        target_fd: event.as_raw_fd() as u32,
        attach_type: sys::BPF_PERF_EVENT,
        bpf_cookie: cookie,
        ..Default::default()
    };
    // SAFETY: the attr holds no pointers.
    let link =
        unsafe { sys::bpf_fd(cmd::LINK_CREATE, &mut link_attr) }.map_err(|errno| Error::Os {
            what: format!("BPF_LINK_CREATE ({})", what()),
            errno,
        })?;
    sys::perf_ioctl(&event, sys::PERF_EVENT_IOC_ENABLE, 0, || {
        format!("PERF_EVENT_IOC_ENABLE ({})", what())
    })?;
    Ok(crate::Link::from_bpf_link(link))
}

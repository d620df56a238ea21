//! BPF programs: loading (with the verifier log on failure or on request) and test runs.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use dtrace_ebpf::Insn;

use crate::error::{Error, Result};
use crate::rlimit;
use crate::sys::{self, cmd, ProgLoadAttr, TestRunAttr};

/// The program types this crate loads (`enum bpf_prog_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProgramType {
    /// kprobes and uprobes.
    Kprobe,
    /// Tracepoints attached through a perf event.
    Tracepoint,
    /// Perf events such as the `profile` provider's cpu-clock timers.
    PerfEvent,
    /// Raw tracepoints (and test-run programs for BEGIN/END/ERROR).
    RawTracepoint,
    /// BTF-typed programs such as `tp_btf` (needs `attach_btf_id`).
    Tracing,
}

impl ProgramType {
    /// The kernel's number for this type.
    pub fn raw(self) -> u32 {
        match self {
            ProgramType::Kprobe => 2,
            ProgramType::Tracepoint => 5,
            ProgramType::PerfEvent => 7,
            ProgramType::RawTracepoint => 17,
            ProgramType::Tracing => 26,
        }
    }
}

/// The `expected_attach_type` values this crate uses (`enum bpf_attach_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttachType {
    /// `BPF_TRACE_RAW_TP`, for `tp_btf` tracing programs.
    TraceRawTp,
    /// `BPF_PERF_EVENT`.
    PerfEvent,
    /// `BPF_TRACE_UPROBE_MULTI`, for kprobe-type programs attached with uprobe_multi links.
    TraceUprobeMulti,
    /// `BPF_TRACE_KPROBE_MULTI`, for kprobe-type programs attached with kprobe_multi links.
    TraceKprobeMulti,
    /// `BPF_TRACE_FENTRY`: a tracing program run at a kernel function's entry.
    TraceFentry,
    /// `BPF_TRACE_FEXIT`: a tracing program run at a kernel function's return.
    TraceFexit,
}

impl AttachType {
    /// The kernel's number for this attach type.
    pub fn raw(self) -> u32 {
        match self {
            AttachType::TraceRawTp => 23,
            AttachType::PerfEvent => sys::BPF_PERF_EVENT,
            AttachType::TraceUprobeMulti => 48,
            AttachType::TraceKprobeMulti => 42,
            AttachType::TraceFentry => 24,
            AttachType::TraceFexit => 25,
        }
    }
}

/// What to load: [`Program::load`]'s argument.
#[derive(Clone, Copy, Debug)]
pub struct ProgramSpec<'a> {
    pub prog_type: ProgramType,
    pub expected_attach_type: Option<AttachType>,
    /// BTF type id of the attach target (`btf_trace_<tp>` for `tp_btf`); 0 if none.
    pub attach_btf_id: u32,
    /// Shown by `bpftool`; sanitised and cut to 15 characters.
    pub name: &'a str,
    pub insns: &'a [Insn],
    /// Where the program's functions after the first start (instruction indices,
    /// ascending): such a program is loaded with BTF describing each (see `funcs`).
    pub functions: &'a [u32],
    /// Fetch the verifier log even when loading succeeds (for `-v`, `-x bpflog`).
    pub always_log: bool,
    /// The verifier log buffer's size in bytes (`-x bpflogsize`, at least
    /// [`LOG_SIZE_MIN`]): exactly this; `None`: 64 KiB first, grown to [`LOG_MAX`] while
    /// the log does not fit.
    pub log_size: Option<u32>,
    /// Ask for the verifier's every step (the state before each instruction of each path)
    /// and its statistics, not only its account of the path it rejects.
    pub log_every_step: bool,
    /// Load with `BPF_F_SLEEPABLE` (uprobe programs may then fault user pages in).
    pub sleepable: bool,
}

impl<'a> ProgramSpec<'a> {
    /// A spec with no attach type or BTF id that fetches the log only on failure.
    pub fn new(prog_type: ProgramType, name: &'a str, insns: &'a [Insn]) -> Self {
        ProgramSpec {
            prog_type,
            expected_attach_type: None,
            attach_btf_id: 0,
            name,
            insns,
            functions: &[],
            always_log: false,
            log_size: None,
            log_every_step: false,
            sleepable: false,
        }
    }
}

/// Log buffer sizes: the first try, and the most we will grow to.
const LOG_START: usize = 64 * 1024;
pub const LOG_MAX: usize = 16 * 1024 * 1024;
/// The smallest and largest log buffers the kernel takes (`bpf_vlog_init`).
pub const LOG_SIZE_MIN: u32 = 128;
pub const LOG_SIZE_MAX: u32 = u32::MAX >> 2;
/// `log_level` 1: the verifier's instruction-by-instruction account (of a rejected path).
const LOG_LEVEL: u32 = 1;
/// `log_level` 2 and 4 (`BPF_LOG_LEVEL2`, `BPF_LOG_STATS`): every path, and statistics.
const LOG_EVERY_STEP: u32 = LOG_LEVEL | 2 | 4;
const LICENSE: &[u8] = b"GPL\0";

/// A loaded BPF program, owned through its file descriptor (closed on drop).
#[derive(Debug)]
pub struct Program {
    fd: OwnedFd,
    name: String,
    log: String,
    log_truncated: bool,
}

impl Program {
    /// Loads a program (`BPF_PROG_LOAD`). On failure, loads again with a verifier log
    /// (in a buffer of [`ProgramSpec::log_size`]) and returns [`Error::Verifier`] carrying it.
    pub fn load(spec: &ProgramSpec<'_>) -> Result<Program> {
        rlimit::raise_memlock_once();
        rlimit::raise_nofile_once();
        let first_errno = if spec.always_log {
            None
        } else {
            match try_load(spec, None) {
                Ok(fd) => return Ok(Program::new(spec, fd, String::new(), false)),
                Err(errno) => Some(errno),
            }
        };
        let (result, log) = load_with_log(spec);
        match result {
            Ok(fd) => Ok(Program::new(spec, fd, log, false)),
            // The log alone overflowed its buffer; the program itself may be fine.
            Err(libc::ENOSPC) if first_errno.is_none() => match try_load(spec, None) {
                Ok(fd) => Ok(Program::new(spec, fd, log, true)),
                Err(errno) => Err(verifier_error(spec, errno, log, true)),
            },
            Err(errno) => Err(verifier_error(
                spec,
                first_errno.unwrap_or(errno),
                log,
                errno == libc::ENOSPC,
            )),
        }
    }

    fn new(spec: &ProgramSpec<'_>, fd: OwnedFd, log: String, log_truncated: bool) -> Program {
        Program {
            fd,
            name: spec.name.to_string(),
            log,
            log_truncated,
        }
    }

    /// The program's file descriptor.
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// The name it was loaded with.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The verifier log, if [`ProgramSpec::always_log`] asked for it (else empty).
    pub fn log(&self) -> &str {
        &self.log
    }

    /// Whether the verifier log outgrew its buffer ([`Program::log`] is then its last part).
    pub fn log_truncated(&self) -> bool {
        self.log_truncated
    }

    /// Runs the program once on the current CPU (`BPF_PROG_TEST_RUN`) with `ctx_in` as its
    /// context and returns its r0. For a raw tracepoint program the context is its `u64` args.
    pub fn test_run(&self, ctx_in: &[u8]) -> Result<u32> {
        self.run(ctx_in, None)
    }

    /// Like [`Program::test_run`], on `cpu` (`BPF_F_TEST_RUN_ON_CPU`; raw tracepoints only).
    pub fn test_run_on_cpu(&self, ctx_in: &[u8], cpu: u32) -> Result<u32> {
        self.run(ctx_in, Some(cpu))
    }

    fn run(&self, ctx_in: &[u8], cpu: Option<u32>) -> Result<u32> {
        let mut attr = TestRunAttr {
            prog_fd: self.fd() as u32,
            ctx_size_in: ctx_in.len() as u32,
            ctx_in: if ctx_in.is_empty() {
                0
            } else {
                ctx_in.as_ptr() as u64
            },
            flags: cpu.map_or(0, |_| sys::BPF_F_TEST_RUN_ON_CPU),
            cpu: cpu.unwrap_or(0),
            ..Default::default()
        };
        // SAFETY: ctx_in points at ctx_size_in readable bytes that outlive the call; no
        // output buffers are given.
        match unsafe { sys::bpf(cmd::PROG_TEST_RUN, &mut attr) } {
            Ok(_) => Ok(attr.retval),
            Err(errno) => Err(Error::Os {
                what: format!("BPF_PROG_TEST_RUN of {:?}", self.name),
                errno,
            }),
        }
    }
}

impl AsFd for Program {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

fn verifier_error(spec: &ProgramSpec<'_>, errno: i32, log: String, truncated: bool) -> Error {
    Error::Verifier {
        prog: spec.name.to_string(),
        errno,
        log,
        truncated,
    }
}

/// Loads with a log: in a buffer of the size asked for, or one grown while the kernel says
/// it is too small.
fn load_with_log(spec: &ProgramSpec<'_>) -> (std::result::Result<OwnedFd, i32>, String) {
    let mut size = spec.log_size.map_or(LOG_START, |n| n as usize);
    let most = spec.log_size.map_or(LOG_MAX, |n| n as usize);
    loop {
        let mut buf = vec![0u8; size];
        let result = try_load(spec, Some(&mut buf));
        let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let log = String::from_utf8_lossy(&buf[..len]).into_owned();
        match result {
            Err(libc::ENOSPC) if size < most => size = (size * 4).min(most),
            _ => return (result, log),
        }
    }
}

/// One `BPF_PROG_LOAD`, with a log buffer if `log` is given.
fn try_load(spec: &ProgramSpec<'_>, log: Option<&mut [u8]>) -> std::result::Result<OwnedFd, i32> {
    let (log_level, log_size, log_buf) = match log {
        Some(buf) => {
            let level = if spec.log_every_step {
                LOG_EVERY_STEP
            } else {
                LOG_LEVEL
            };
            (level, buf.len() as u32, buf.as_mut_ptr() as u64)
        }
        None => (0, 0, 0),
    };
    let infos = crate::funcs::func_infos(spec.functions);
    let (prog_btf_fd, func_info_rec_size, func_info, func_info_cnt) = match spec.functions {
        [] => (0, 0, 0, 0),
        _ => (
            crate::funcs::btf_fd()? as u32,
            std::mem::size_of::<sys::FuncInfo>() as u32,
            infos.as_ptr() as u64,
            infos.len() as u32,
        ),
    };
    let mut attr = ProgLoadAttr {
        prog_btf_fd,
        func_info_rec_size,
        func_info,
        func_info_cnt,
        prog_type: spec.prog_type.raw(),
        insn_cnt: spec.insns.len() as u32,
        insns: spec.insns.as_ptr() as u64,
        license: LICENSE.as_ptr() as u64,
        log_level,
        log_size,
        log_buf,
        prog_name: sys::obj_name(spec.name),
        expected_attach_type: spec.expected_attach_type.map_or(0, AttachType::raw),
        attach_btf_id: spec.attach_btf_id,
        prog_flags: if spec.sleepable {
            sys::BPF_F_SLEEPABLE
        } else {
            0
        },
        ..Default::default()
    };
    // SAFETY: insns points at insn_cnt repr(C) bpf_insns, license at a NUL-terminated
    // string, func_info (if any) at func_info_cnt records, and log_buf (if any) at log_size writable bytes; all outlive the call.
    unsafe { sys::bpf_fd(cmd::PROG_LOAD, &mut attr) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{self, load};
    use dtrace_ebpf::{helpers, Size, BPF_ADD, R0, R1, R10, R2, R3};

    fn args(values: &[u64]) -> Vec<u8> {
        values.iter().flat_map(|v| v.to_ne_bytes()).collect()
    }

    #[test]
    fn test_run_returns_r0() {
        let p = load(
            ProgramType::RawTracepoint,
            &[Insn::mov64_imm(R0, 42), Insn::exit()],
        );
        assert_eq!(p.test_run(&[]).unwrap(), 42);
        assert_eq!(p.name(), "test");
        assert!(p.log().is_empty());
    }

    #[test]
    fn test_run_passes_u64_args() {
        let p = load(
            ProgramType::RawTracepoint,
            &[Insn::ldx(Size::DW, R0, R1, 8), Insn::exit()],
        );
        assert_eq!(p.test_run(&args(&[5, 99])).unwrap(), 99);
    }

    #[test]
    fn test_run_on_each_cpu() {
        let p = load(
            ProgramType::RawTracepoint,
            &[Insn::call(helpers::GET_SMP_PROCESSOR_ID), Insn::exit()],
        );
        for cpu in crate::cpus::online().unwrap() {
            assert_eq!(p.test_run_on_cpu(&[], cpu).unwrap(), cpu);
        }
        let err = p.test_run_on_cpu(&[], 1 << 20).unwrap_err();
        assert!(err.errno().is_some(), "{err}");
    }

    #[test]
    fn verifier_rejection_carries_the_log() {
        let insns = [Insn::mov64_reg(R0, R2), Insn::exit()];
        let err = Program::load(&ProgramSpec::new(ProgramType::RawTracepoint, "bad", &insns))
            .unwrap_err();
        match &err {
            Error::Verifier {
                prog, errno, log, ..
            } => {
                assert_eq!(prog, "bad");
                assert_eq!(*errno, libc::EACCES);
                assert!(log.contains("R2 !read_ok"), "{log}");
            }
            other => panic!("expected a verifier error, got {other:?}"),
        }
        assert!(err.to_string().contains("R2 !read_ok"));
    }

    #[test]
    fn always_log_fetches_the_log_on_success() {
        let insns = [Insn::mov64_imm(R0, 0), Insn::exit()];
        let spec = ProgramSpec {
            always_log: true,
            ..ProgramSpec::new(ProgramType::RawTracepoint, "verbose", &insns)
        };
        let p = Program::load(&spec).unwrap();
        assert!(p.log().contains("processed 2 insns"), "{}", p.log());
    }

    #[test]
    fn a_log_too_large_for_its_buffer_is_cut_and_the_program_still_loads() {
        let insns = vec![Insn::mov64_imm(R0, 0); 100];
        let insns = [insns.as_slice(), &[Insn::exit()]].concat();
        let spec = ProgramSpec {
            always_log: true,
            log_size: Some(LOG_SIZE_MIN),
            ..ProgramSpec::new(ProgramType::RawTracepoint, "cut", &insns)
        };
        let p = Program::load(&spec).unwrap();
        assert!(p.log_truncated());
        assert!(!p.log().is_empty() && p.log().len() < LOG_SIZE_MIN as usize);
        let whole = Program::load(&ProgramSpec {
            log_size: None,
            ..spec
        })
        .unwrap();
        assert!(!whole.log_truncated());
        assert!(
            whole.log().contains("processed 101 insns"),
            "{}",
            whole.log()
        );
        assert!(!whole.log().contains("r0 = 0"), "{}", whole.log());
        let every = Program::load(&ProgramSpec {
            log_size: None,
            log_every_step: true,
            ..spec
        })
        .unwrap();
        assert!(every.log().contains("r0 = 0"), "{}", every.log());
        assert!(every.log().contains("verification time"), "{}", every.log());
    }

    #[test]
    fn a_failure_with_a_log_too_large_for_its_buffer_says_so() {
        let mut insns = vec![Insn::mov64_imm(R0, 0); 100];
        insns.extend([Insn::mov64_reg(R0, R2), Insn::exit()]);
        let spec = ProgramSpec {
            log_size: Some(LOG_SIZE_MIN),
            ..ProgramSpec::new(ProgramType::RawTracepoint, "cut", &insns)
        };
        let Error::Verifier {
            errno, truncated, ..
        } = Program::load(&spec).unwrap_err()
        else {
            panic!("expected a verifier error")
        };
        assert_eq!(errno, libc::EACCES);
        assert!(truncated);
    }

    #[test]
    fn huge_failure_logs_are_fetched_whole() {
        // 20000 verified instructions before the error: the log outgrows the first buffer.
        let mut insns = vec![Insn::mov64_imm(R0, 0); 20000];
        insns.extend([Insn::mov64_reg(R0, R2), Insn::exit()]);
        let err = Program::load(&ProgramSpec::new(ProgramType::RawTracepoint, "big", &insns))
            .unwrap_err();
        let Error::Verifier { log, .. } = err else {
            panic!("expected a verifier error")
        };
        assert!(log.len() > LOG_START, "{}", log.len());
        assert!(log.contains("R2 !read_ok"));
    }

    #[test]
    fn sleepable_uprobe_programs_may_fault_user_pages_in() {
        // bpf_copy_from_user(stack, 8, 0): only a sleepable program may call it.
        let insns = [
            Insn::st(Size::DW, R10, -8, 0),
            Insn::mov64_reg(R1, R10),
            Insn::alu64_imm(BPF_ADD, R1, -8),
            Insn::mov64_imm(R2, 8),
            Insn::mov64_imm(R3, 0),
            Insn::call(helpers::COPY_FROM_USER),
            Insn::exit(),
        ];
        let spec = ProgramSpec::new(ProgramType::Kprobe, "copy", &insns);
        let err = Program::load(&spec).unwrap_err();
        assert!(err.to_string().contains("might sleep"), "{err}");
        Program::load(&ProgramSpec {
            sleepable: true,
            ..spec
        })
        .unwrap();
    }

    #[test]
    fn load_options_reach_the_kernel() {
        // A perf-event program may not read past its context; a map fd that is not a map fails.
        let insns = [Insn::ldx(Size::DW, R0, R1, 4096), Insn::exit()];
        assert!(Program::load(&ProgramSpec::new(ProgramType::PerfEvent, "ctx", &insns)).is_err());
        // (Tracepoint programs may not read the first 8 bytes, the common fields.)
        let insns = [Insn::ldx(Size::DW, R0, R1, 8), Insn::exit()];
        for t in [
            ProgramType::Kprobe,
            ProgramType::Tracepoint,
            ProgramType::PerfEvent,
            ProgramType::RawTracepoint,
        ] {
            load(t, &insns);
        }
        // A tracing program needs an attach target; without one the kernel refuses it.
        let spec = ProgramSpec {
            expected_attach_type: Some(AttachType::TraceRawTp),
            ..ProgramSpec::new(ProgramType::Tracing, "tp_btf", &insns)
        };
        assert!(Program::load(&spec).is_err());
        let m = testutil::map(crate::MapType::Array, 8, 1);
        assert_eq!(
            load(ProgramType::RawTracepoint, &testutil::counter(&m))
                .test_run(&[])
                .unwrap(),
            0
        );
        assert_eq!(testutil::read_key0(&m), 1);
    }
}

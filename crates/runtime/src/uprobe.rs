//! User-level probes: attaching a loaded kprobe-type program to uprobes and uretprobes.
//!
//! Two ways in, both owned through file descriptors so that dropping the [`UprobeLink`] —
//! or the process dying, even by SIGKILL — removes the probes:
//!
//! - [`attach_uprobe`]: one probe through a perf event of the dynamic `uprobe` PMU (its
//!   type from `/sys/bus/event_source/devices/uprobe/type`; the retprobe bit and the place
//!   of `ref_ctr_offset` in `config` from its `format/` files), with `config1` the binary's
//!   path and `config2` the file offset, then `BPF_LINK_CREATE` (falling back to
//!   `PERF_EVENT_IOC_SET_BPF`) as for [`crate::Link::perf_event`];
//! - [`attach_uprobe_multi`]: many offsets of one binary with one `BPF_LINK_CREATE` of
//!   attach type `BPF_TRACE_UPROBE_MULTI` (the program must be loaded with
//!   [`crate::AttachType::TraceUprobeMulti`]). Far faster for many probes (see the
//!   `attach_time_for_1000_offsets` test), and one descriptor instead of two per probe.
//!
//! Offsets are file offsets in the binary (what a symbol's address becomes through the
//! program headers), not virtual addresses. A nonzero `ref_ctr_offset` is the file offset
//! of a USDT is-enabled semaphore (a `u16`): the kernel increments it in every process the
//! probe is installed in while it is attached, and decrements it on detach.
//!
//! A `pid` limits the probe to one process (all its threads); without one the probe is
//! system-wide: it fires in every process that maps the binary, including ones started
//! after attaching.

use std::ffi::CString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::OnceLock;

use crate::error::{Error, Result};
use crate::prog::Program;
use crate::sys::{self, cmd, LinkCreateAttr, PerfEventAttr};

/// Where the `uprobe` PMU wants its parameters, from sysfs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UprobePmu {
    /// `perf_event_attr.type` of the uprobe PMU.
    pub type_: u32,
    /// The `config` bit that makes a uretprobe.
    pub retprobe_bit: u32,
    /// The first `config` bit of `ref_ctr_offset` and how many bits it has (`None` on
    /// kernels without semaphore support).
    pub ref_ctr: Option<(u32, u32)>,
}

const PMU_DIR: &str = "/sys/bus/event_source/devices/uprobe";

impl UprobePmu {
    /// The PMU's parameters, read from sysfs once per process.
    pub fn get() -> Result<UprobePmu> {
        static PMU: OnceLock<Result<UprobePmu>> = OnceLock::new();
        PMU.get_or_init(UprobePmu::read).clone()
    }

    fn read() -> Result<UprobePmu> {
        let read = |file: &str| {
            let path = format!("{PMU_DIR}/{file}");
            std::fs::read_to_string(&path).map_err(|e| Error::io(format!("reading {path}"), &e))
        };
        let type_ = read("type")?
            .trim()
            .parse()
            .map_err(|_| Error::Invalid(format!("{PMU_DIR}/type is not a number")))?;
        let retprobe_bit = parse_format(&read("format/retprobe")?)
            .map(|(first, _)| first)
            .ok_or_else(|| Error::Invalid(format!("unexpected {PMU_DIR}/format/retprobe")))?;
        let ref_ctr = read("format/ref_ctr_offset")
            .ok()
            .and_then(|f| parse_format(&f));
        Ok(UprobePmu {
            type_,
            retprobe_bit,
            ref_ctr,
        })
    }
}

/// Parses a PMU format file: `config:N` or `config:A-B` (bits of `config` only).
fn parse_format(text: &str) -> Option<(u32, u32)> {
    let bits = text.trim().strip_prefix("config:")?;
    let (lo, hi) = match bits.split_once('-') {
        Some((lo, hi)) => (lo.parse().ok()?, hi.parse().ok()?),
        None => {
            let bit = bits.parse().ok()?;
            (bit, bit)
        }
    };
    (lo <= hi && hi < 64).then(|| (lo, hi - lo + 1))
}

/// How to attach one uprobe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UprobeOptions {
    /// A uretprobe (fires on return from the function whose entry `offset` is).
    pub retprobe: bool,
    /// Only this process; `None` for every process that maps the binary.
    pub pid: Option<i32>,
    /// File offset of the USDT semaphore to keep counted; 0 for none.
    pub ref_ctr_offset: u64,
    /// What `bpf_get_attach_cookie()` returns in the program.
    pub cookie: u64,
}

/// One probe of a uprobe_multi link.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UprobeSite {
    /// File offset of the probed instruction.
    pub offset: u64,
    /// File offset of its USDT semaphore; 0 for none.
    pub ref_ctr_offset: u64,
    /// What `bpf_get_attach_cookie()` returns when this site fires.
    pub cookie: u64,
}

/// Attached uprobes: a perf event and its BPF link, or one uprobe_multi link.
/// Dropping it detaches.
#[derive(Debug)]
pub struct UprobeLink {
    bpf_link: Option<OwnedFd>,
    _event: Option<OwnedFd>,
}

/// Attaches `prog` to `sites` of `path` with one uprobe_multi link, as a [`crate::Link`]
/// (what the session keeps); see [`attach_uprobe_multi`].
pub fn attach_multi_link(
    prog: &Program,
    path: &Path,
    sites: &[UprobeSite],
    pid: Option<i32>,
    retprobe: bool,
) -> Result<crate::Link> {
    let link = attach_uprobe_multi(prog, path, sites, pid, retprobe)?;
    let fd = link.bpf_link.expect("uprobe_multi links are BPF links");
    Ok(crate::Link::from_bpf_link(fd))
}

/// Attaches `prog` to one uprobe at file `offset` of `path` through a perf event (see
/// [`attach_uprobe`]), as a [`crate::Link`]. The kernel must give a BPF link (it keeps the
/// perf event open itself, so only the link's descriptor is kept): with a `pid`, the uprobe
/// is installed in that process only and no per-hit filter runs, the cheapest way to fire
/// (the pid filter of a uprobe_multi link costs ≈ 190 ns per hit on 6.18; see
/// docs/BENCHMARKS.md). `prog` must be loaded without an expected attach type.
pub fn attach_uprobe_perf_link(
    prog: &Program,
    path: &Path,
    offset: u64,
    opts: &UprobeOptions,
) -> Result<crate::Link> {
    let link = attach_uprobe(prog, path, offset, opts)?;
    match link.bpf_link {
        Some(fd) => Ok(crate::Link::from_bpf_link(fd)),
        None => Err(Error::Invalid(format!(
            "attaching uprobe {}:{offset:#x}: this kernel has no BPF links for perf events",
            path.display()
        ))),
    }
}

impl UprobeLink {
    /// True if the kernel gave us a BPF link (rather than the perf-ioctl fallback).
    pub fn is_bpf_link(&self) -> bool {
        self.bpf_link.is_some()
    }
}

fn path_cstring(path: &Path) -> Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| Error::Invalid(format!("{}: path contains NUL", path.display())))
}

fn probe_kind(retprobe: bool) -> &'static str {
    if retprobe {
        "uretprobe"
    } else {
        "uprobe"
    }
}

/// Attaches `prog` (a [`crate::ProgramType::Kprobe`] program) to a uprobe at file `offset`
/// of the binary at `path`.
pub fn attach_uprobe(
    prog: &Program,
    path: &Path,
    offset: u64,
    opts: &UprobeOptions,
) -> Result<UprobeLink> {
    let what = || {
        format!(
            "attaching {} {}:{offset:#x} for {:?}",
            probe_kind(opts.retprobe),
            path.display(),
            prog.name()
        )
    };
    let pmu = UprobePmu::get()?;
    let cpath = path_cstring(path)?;
    let mut config = 0u64;
    if opts.retprobe {
        config |= 1 << pmu.retprobe_bit;
    }
    if opts.ref_ctr_offset != 0 {
        let (shift, bits) = pmu.ref_ctr.ok_or_else(|| {
            Error::Invalid(format!(
                "{}: this kernel's uprobes have no semaphore (ref_ctr_offset) support",
                what()
            ))
        })?;
        if bits < 64 && opts.ref_ctr_offset >> bits != 0 {
            return Err(Error::Invalid(format!(
                "{}: semaphore offset {:#x} does not fit in {bits} bits",
                what(),
                opts.ref_ctr_offset
            )));
        }
        config |= opts.ref_ctr_offset << shift;
    }
    let attr = PerfEventAttr {
        type_: pmu.type_,
        config,
        sample_period_or_freq: 1,
        flags: sys::PERF_ATTR_FLAG_DISABLED,
        // `uprobe_path`: read by the kernel during the call only.
        config1: cpath.as_ptr() as u64,
        // `probe_offset`.
        config2: offset,
        ..Default::default()
    };
    // A process's events follow it on every CPU; a system-wide one is opened on CPU 0, and
    // the BPF program runs wherever the probe fires.
    let (pid, cpu) = match opts.pid {
        Some(pid) => (pid, -1),
        None => (-1, 0),
    };
    let event = sys::perf_event_open(&attr, pid, cpu, || format!("perf_event_open ({})", what()))?;

    let mut link_attr = LinkCreateAttr {
        prog_fd: prog.fd() as u32,
        target_fd: event.as_raw_fd() as u32,
        attach_type: sys::BPF_PERF_EVENT,
        bpf_cookie: opts.cookie,
        ..Default::default()
    };
    // SAFETY: the attr holds no pointers.
    let bpf_link = match unsafe { sys::bpf_fd(cmd::LINK_CREATE, &mut link_attr) } {
        Ok(fd) => Some(fd),
        Err(_) if opts.cookie == 0 => {
            // Kernels before BPF links for perf events: the event holds the program.
            sys::perf_ioctl(&event, sys::PERF_EVENT_IOC_SET_BPF, prog.fd(), || {
                format!("PERF_EVENT_IOC_SET_BPF ({})", what())
            })?;
            None
        }
        Err(errno) => {
            return Err(Error::Os {
                what: format!("BPF_LINK_CREATE ({})", what()),
                errno,
            })
        }
    };
    sys::perf_ioctl(&event, sys::PERF_EVENT_IOC_ENABLE, 0, || {
        format!("PERF_EVENT_IOC_ENABLE ({})", what())
    })?;
    Ok(UprobeLink {
        bpf_link,
        _event: Some(event),
    })
}

/// The `BPF_LINK_CREATE` part of `union bpf_attr` with its `uprobe_multi` variant.
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
struct UprobeMultiAttr {
    prog_fd: u32,
    target_fd: u32,
    attach_type: u32,
    flags: u32,
    /// Pointer to the NUL-terminated path of the binary.
    path: u64,
    /// Pointer to `cnt` u64 file offsets.
    offsets: u64,
    /// Pointer to `cnt` u64 semaphore offsets, or 0.
    ref_ctr_offsets: u64,
    /// Pointer to `cnt` u64 cookies, or 0.
    cookies: u64,
    cnt: u32,
    /// `BPF_F_UPROBE_MULTI_RETURN` for uretprobes.
    multi_flags: u32,
    pid: u32,
    _pad: u32,
}

/// `enum bpf_attach_type`: `BPF_TRACE_UPROBE_MULTI`.
const BPF_TRACE_UPROBE_MULTI: u32 = 48;
/// `BPF_F_UPROBE_MULTI_RETURN`.
const BPF_F_UPROBE_MULTI_RETURN: u32 = 1;

/// Attaches `prog` to every site in `sites` of the binary at `path` with one uprobe_multi
/// link. `prog` must have been loaded with `expected_attach_type`
/// [`crate::AttachType::TraceUprobeMulti`].
pub fn attach_uprobe_multi(
    prog: &Program,
    path: &Path,
    sites: &[UprobeSite],
    pid: Option<i32>,
    retprobe: bool,
) -> Result<UprobeLink> {
    let what = || {
        format!(
            "BPF_LINK_CREATE (uprobe_multi, {} {} sites of {}) for {:?}",
            sites.len(),
            probe_kind(retprobe),
            path.display(),
            prog.name()
        )
    };
    if sites.is_empty() {
        return Err(Error::Invalid(format!("{}: no sites", what())));
    }
    let cnt = u32::try_from(sites.len())
        .map_err(|_| Error::Invalid(format!("{}: too many sites", what())))?;
    let cpath = path_cstring(path)?;
    let offsets: Vec<u64> = sites.iter().map(|s| s.offset).collect();
    let ref_ctrs: Vec<u64> = sites.iter().map(|s| s.ref_ctr_offset).collect();
    let cookies: Vec<u64> = sites.iter().map(|s| s.cookie).collect();
    let ptr_or_null = |v: &[u64]| {
        if v.iter().all(|&x| x == 0) {
            0
        } else {
            v.as_ptr() as u64
        }
    };
    let mut attr = UprobeMultiAttr {
        prog_fd: prog.fd() as u32,
        attach_type: BPF_TRACE_UPROBE_MULTI,
        path: cpath.as_ptr() as u64,
        offsets: offsets.as_ptr() as u64,
        ref_ctr_offsets: ptr_or_null(&ref_ctrs),
        cookies: ptr_or_null(&cookies),
        cnt,
        multi_flags: if retprobe {
            BPF_F_UPROBE_MULTI_RETURN
        } else {
            0
        },
        pid: pid.map_or(0, |p| p as u32),
        ..Default::default()
    };
    // SAFETY: path points at a NUL-terminated string and offsets/ref_ctr_offsets/cookies
    // at `cnt` u64s each (or are 0); all outlive the call, and the kernel only reads them.
    let fd = unsafe { sys::bpf_fd(cmd::LINK_CREATE, &mut attr) }.map_err(|errno| Error::Os {
        what: what(),
        errno,
    })?;
    Ok(UprobeLink {
        bpf_link: Some(fd),
        _event: None,
    })
}

/// Whether this kernel has uprobe_multi links (6.6 and later). Asked once per process: a
/// two-instruction program loaded for them, and a link on `/`, which such a kernel refuses
/// with `EBADF` (not a regular file) and an older one with `EINVAL` (unknown attach type).
pub fn uprobe_multi_available() -> bool {
    static ANSWER: OnceLock<bool> = OnceLock::new();
    *ANSWER.get_or_init(|| {
        let insns = [
            dtrace_ebpf::Insn::mov64_imm(dtrace_ebpf::R0, 0),
            dtrace_ebpf::Insn::exit(),
        ];
        let mut spec =
            crate::ProgramSpec::new(crate::ProgramType::Kprobe, "dt_uprobe_multi", &insns);
        spec.expected_attach_type = Some(crate::AttachType::TraceUprobeMulti);
        let Ok(prog) = Program::load(&spec) else {
            return false;
        };
        let offset = 0u64;
        let mut attr = UprobeMultiAttr {
            prog_fd: prog.fd() as u32,
            attach_type: BPF_TRACE_UPROBE_MULTI,
            path: c"/".as_ptr() as u64,
            offsets: &offset as *const u64 as u64,
            cnt: 1,
            ..Default::default()
        };
        // SAFETY: path points at a NUL-terminated string and offsets at one u64, both
        // outliving the call; the kernel only reads them.
        match unsafe { sys::bpf_fd(cmd::LINK_CREATE, &mut attr) } {
            Ok(_) => true,
            Err(errno) => errno == libc::EBADF,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil;
    use crate::{AttachType, Map, MapType, ProgramSpec, ProgramType};
    use dtrace_ebpf::{helpers, Insn, Size, BPF_ADD, BPF_JNE, BPF_PSEUDO_MAP_FD};
    use dtrace_ebpf::{R0, R1, R10, R2};
    use std::collections::HashMap;
    use std::io::{BufRead, BufReader, Write};
    use std::mem::{offset_of, size_of};
    use std::path::PathBuf;
    use std::process::{Command, Stdio};
    use std::time::Instant;

    /// A program that adds 1 to `map[cookie]`.
    fn count_by_cookie(map: &Map) -> Vec<Insn> {
        let mut v = vec![
            Insn::call(helpers::GET_ATTACH_COOKIE),
            Insn::stx(Size::W, R10, -4, R0),
        ];
        v.extend(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, map.fd(), 0));
        v.extend([
            Insn::mov64_reg(R2, R10),
            Insn::alu64_imm(BPF_ADD, R2, -4),
            Insn::call(helpers::MAP_LOOKUP_ELEM),
            Insn::jmp_imm(BPF_JNE, R0, 0, 2),
            Insn::mov64_imm(R0, 0),
            Insn::exit(),
            Insn::mov64_imm(R1, 1),
            Insn::atomic_add(Size::DW, R0, 0, R1),
            Insn::mov64_imm(R0, 0),
            Insn::exit(),
        ]);
        v
    }

    fn load(map: &Map, multi: bool) -> Program {
        let insns = count_by_cookie(map);
        let spec = ProgramSpec {
            expected_attach_type: multi.then_some(AttachType::TraceUprobeMulti),
            ..ProgramSpec::new(ProgramType::Kprobe, "uprobe_test", &insns)
        };
        Program::load(&spec).unwrap_or_else(|e| panic!("{e}"))
    }

    fn read(map: &Map, key: u32) -> u64 {
        let value = map.lookup(&key.to_ne_bytes()).unwrap().unwrap();
        u64::from_ne_bytes(value[..8].try_into().unwrap())
    }

    const PROGRAM: &str = r#"
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned short demo_ping_semaphore __attribute__((unused)) __attribute__((section(".probes")));

#define F(n) __attribute__((noinline)) int f##n(int x) { __asm__ volatile(""); return x + n; }
F(0) F(1) F(2) F(3) F(4)

__attribute__((noinline)) void ping(int i) { DTRACE_PROBE1(demo, ping, i); }

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "calls") == 0) {
        /* f0 n times, f1 2n times, ..., f4 5n times */
        int n = atoi(argv[2]);
        volatile int s = 0;
        for (int i = 0; i < n; i++) {
            s += f0(i);
            for (int j = 0; j < 2; j++) s += f1(i);
            for (int j = 0; j < 3; j++) s += f2(i);
            for (int j = 0; j < 4; j++) s += f3(i);
            for (int j = 0; j < 5; j++) s += f4(i);
        }
        return 0;
    }
    /* "wait": f0 once per line read from stdin; "sema": read the semaphore, ping, print it */
    char line[64];
    int i = 0;
    while (fgets(line, sizeof line, stdin)) {
        if (argc == 2 && strcmp(argv[1], "sema") == 0) {
            unsigned v = *(volatile unsigned short *)&demo_ping_semaphore;
            ping(i++);
            printf("%u\n", v);
        } else {
            f0(i++);
            printf("called\n");
        }
        fflush(stdout);
    }
    return 0;
}
"#;

    /// A scratch directory for this test, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir =
                std::env::temp_dir().join(format!("dtrace-uprobe-{name}-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            Scratch(dir)
        }

        /// Compiles C `source` to an executable here.
        fn gcc(&self, source: &str) -> PathBuf {
            let c = self.0.join("prog.c");
            let exe = self.0.join("prog");
            std::fs::write(&c, source).unwrap();
            let out = Command::new("gcc")
                .args(["-O1", "-o"])
                .arg(&exe)
                .arg(&c)
                .output()
                .expect("running gcc");
            assert!(
                out.status.success(),
                "gcc failed (is systemtap-sdt-dev installed?):\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            exe
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// File offsets of the symbols of an ELF64 little-endian executable (`.symtab`), from
    /// each symbol's section: `st_value - sh_addr + sh_offset`.
    fn symbol_offsets(path: &Path) -> HashMap<String, u64> {
        let elf = std::fs::read(path).unwrap();
        let u16_at = |o: usize| u16::from_le_bytes(elf[o..o + 2].try_into().unwrap()) as usize;
        let u32_at = |o: usize| u32::from_le_bytes(elf[o..o + 4].try_into().unwrap()) as usize;
        let u64_at = |o: usize| u64::from_le_bytes(elf[o..o + 8].try_into().unwrap());
        let (shoff, shnum) = (u64_at(0x28) as usize, u16_at(0x3c));
        let sh = |i: usize| shoff + i * 64;
        let mut out = HashMap::new();
        for i in 0..shnum {
            if u32_at(sh(i) + 4) != 2 {
                continue; // not SHT_SYMTAB
            }
            let (off, size) = (u64_at(sh(i) + 24) as usize, u64_at(sh(i) + 32) as usize);
            let strtab = u64_at(sh(u32_at(sh(i) + 40)) + 24) as usize;
            for sym in (off..off + size).step_by(24) {
                let (kind, shndx) = (elf[sym + 4] & 0xf, u16_at(sym + 6));
                // STT_OBJECT and STT_FUNC only, in a real section.
                if !(kind == 1 || kind == 2) || shndx == 0 || shndx >= shnum {
                    continue;
                }
                let name_at = strtab + u32_at(sym);
                let end = name_at + elf[name_at..].iter().position(|&b| b == 0).unwrap();
                let name = String::from_utf8_lossy(&elf[name_at..end]).into_owned();
                let value = u64_at(sym + 8);
                let (addr, offset) = (u64_at(sh(shndx) + 16), u64_at(sh(shndx) + 24));
                out.insert(name, value - addr + offset);
            }
        }
        out
    }

    fn run(exe: &Path, args: &[&str]) {
        let status = Command::new(exe).args(args).status().unwrap();
        assert!(status.success());
    }

    #[test]
    fn attr_layout_matches_the_kernel() {
        assert_eq!(offset_of!(UprobeMultiAttr, path), 16);
        assert_eq!(offset_of!(UprobeMultiAttr, cookies), 40);
        assert_eq!(offset_of!(UprobeMultiAttr, cnt), 48);
        assert_eq!(offset_of!(UprobeMultiAttr, pid), 56);
        assert_eq!(size_of::<UprobeMultiAttr>(), 64);
    }

    #[test]
    fn pmu_formats_are_parsed() {
        assert_eq!(parse_format("config:0\n"), Some((0, 1)));
        assert_eq!(parse_format("config:32-63\n"), Some((32, 32)));
        assert_eq!(parse_format("config1:0-63"), None);
        assert_eq!(parse_format("config:9-3"), None);
        let pmu = UprobePmu::get().unwrap();
        assert!(pmu.type_ > 0);
        assert!(pmu.ref_ctr.is_some(), "{pmu:?}");
    }

    #[test]
    fn uprobe_and_uretprobe_count_exactly() {
        let scratch = Scratch::new("single");
        let exe = scratch.gcc(PROGRAM);
        let f0 = symbol_offsets(&exe)["f0"];
        for retprobe in [false, true] {
            let map = testutil::map(MapType::Array, 8, 8);
            let prog = load(&map, false);
            let opts = UprobeOptions {
                retprobe,
                cookie: 3,
                ..Default::default()
            };
            let link = attach_uprobe(&prog, &exe, f0, &opts).unwrap();
            assert!(link.is_bpf_link());
            run(&exe, &["calls", "57"]);
            assert_eq!(read(&map, 3), 57, "retprobe: {retprobe}");
            drop(link);
            run(&exe, &["calls", "10"]);
            assert_eq!(read(&map, 3), 57, "still counting after detach");
        }
    }

    #[test]
    fn pid_filter_limits_to_one_process() {
        let scratch = Scratch::new("pid");
        let exe = scratch.gcc(PROGRAM);
        let f0 = symbol_offsets(&exe)["f0"];
        let mut child = Command::new(&exe)
            .arg("wait")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let map = testutil::map(MapType::Array, 8, 8);
        let prog = load(&map, false);
        let opts = UprobeOptions {
            pid: Some(child.id() as i32),
            ..Default::default()
        };
        let _link = attach_uprobe(&prog, &exe, f0, &opts).unwrap();
        // Another process running the same binary is not traced.
        run(&exe, &["calls", "20"]);
        assert_eq!(read(&map, 0), 0);
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        for _ in 0..7 {
            stdin.write_all(b"go\n").unwrap();
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            assert_eq!(line, "called\n");
        }
        drop(stdin);
        assert!(child.wait().unwrap().success());
        assert_eq!(read(&map, 0), 7);
    }

    #[test]
    fn uprobe_multi_counts_each_site() {
        let scratch = Scratch::new("multi");
        let exe = scratch.gcc(PROGRAM);
        let syms = symbol_offsets(&exe);
        let sites: Vec<UprobeSite> = (0..5)
            .map(|k| UprobeSite {
                offset: syms[&format!("f{k}")],
                ref_ctr_offset: 0,
                cookie: k,
            })
            .collect();
        for retprobe in [false, true] {
            let map = testutil::map(MapType::Array, 8, 8);
            let prog = load(&map, true);
            let link = attach_uprobe_multi(&prog, &exe, &sites, None, retprobe).unwrap();
            run(&exe, &["calls", "13"]);
            for k in 0..5 {
                assert_eq!(
                    read(&map, k),
                    13 * (k as u64 + 1),
                    "f{k} retprobe {retprobe}"
                );
            }
            drop(link);
            run(&exe, &["calls", "1"]);
            assert_eq!(read(&map, 0), 13, "still counting after detach");
        }
        // Errors name what was attempted.
        let map = testutil::map(MapType::Array, 8, 8);
        let prog = load(&map, true);
        let err = attach_uprobe_multi(&prog, Path::new("/no/such/binary"), &sites, None, false)
            .unwrap_err();
        assert_eq!(err.errno(), Some(libc::ENOENT), "{err}");
        assert!(err.to_string().contains("/no/such/binary"), "{err}");
        assert!(attach_uprobe_multi(&prog, &exe, &[], None, false).is_err());
    }

    /// Starts `exe sema`, and returns a closure that makes it print its semaphore and fire
    /// the probe once, returning the value printed.
    fn semaphore_reader(exe: &Path) -> (std::process::Child, impl FnMut() -> u32) {
        let mut child = Command::new(exe)
            .arg("sema")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let ask = move || {
            stdin.write_all(b"?\n").unwrap();
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            line.trim().parse().unwrap()
        };
        (child, ask)
    }

    #[test]
    fn semaphores_count_while_attached() {
        let scratch = Scratch::new("sema");
        let exe = scratch.gcc(PROGRAM);
        let syms = symbol_offsets(&exe);
        let (ping, sema) = (syms["ping"], syms["demo_ping_semaphore"]);
        for multi in [false, true] {
            let (mut child, mut ask) = semaphore_reader(&exe);
            let pid = Some(child.id() as i32);
            assert_eq!(ask(), 0);
            let map = testutil::map(MapType::Array, 8, 8);
            let prog = load(&map, multi);
            let link = if multi {
                let site = UprobeSite {
                    offset: ping,
                    ref_ctr_offset: sema,
                    cookie: 0,
                };
                attach_uprobe_multi(&prog, &exe, &[site], pid, false).unwrap()
            } else {
                let opts = UprobeOptions {
                    pid,
                    ref_ctr_offset: sema,
                    ..Default::default()
                };
                attach_uprobe(&prog, &exe, ping, &opts).unwrap()
            };
            assert_eq!(ask(), 1, "multi: {multi}");
            assert_eq!(ask(), 1, "multi: {multi}");
            // Fired once per question while attached.
            assert_eq!(read(&map, 0), 2);
            drop(link);
            // The kernel may finish unregistering (and decrement the semaphore) a moment
            // after the link's descriptor is closed.
            let mut after = ask();
            for _ in 0..100 {
                if after == 0 {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
                after = ask();
            }
            assert_eq!(after, 0, "multi: {multi}");
            child.kill().unwrap();
            child.wait().unwrap();
        }
    }

    /// Raises the soft open-file limit to the hard one (attaching 1000 probes one by one
    /// takes 2000 descriptors).
    fn raise_nofile() {
        // SAFETY: getrlimit/setrlimit only read and write the struct we own.
        unsafe {
            let mut lim: libc::rlimit = std::mem::zeroed();
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
                lim.rlim_cur = lim.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            }
        }
    }

    /// Attaches to 1000 functions with uprobe_multi and with 1000 perf events, checks each
    /// counts every call, and prints how long attaching and detaching took
    /// (`cargo test -p dtrace-runtime attach_time -- --nocapture`).
    /// Ignored by default: closing 1000 perf-event uprobes takes minutes on this kernel.
    #[test]
    #[ignore]
    fn attach_time_for_1000_offsets() {
        const N: usize = 1000;
        raise_nofile();
        let mut src = String::new();
        for i in 0..N {
            src += &format!(
                "__attribute__((noinline)) void g{i}(void) {{ __asm__ volatile(\"\"); }}\n"
            );
        }
        src += "int main(void) {\n";
        for i in 0..N {
            src += &format!("g{i}();\n");
        }
        src += "return 0; }\n";
        let scratch = Scratch::new("many");
        let exe = scratch.gcc(&src);
        let syms = symbol_offsets(&exe);
        let sites: Vec<UprobeSite> = (0..N)
            .map(|i| UprobeSite {
                offset: syms[&format!("g{i}")],
                ..Default::default()
            })
            .collect();

        let map = testutil::map(MapType::Array, 8, 1);
        let prog = load(&map, true);
        let start = Instant::now();
        let link = attach_uprobe_multi(&prog, &exe, &sites, None, false).unwrap();
        let multi_attach = start.elapsed();
        run(&exe, &[]);
        assert_eq!(read(&map, 0), N as u64);
        let start = Instant::now();
        drop(link);
        let multi_detach = start.elapsed();

        let map = testutil::map(MapType::Array, 8, 1);
        let prog = load(&map, false);
        let start = Instant::now();
        let links: Vec<UprobeLink> = sites
            .iter()
            .map(|s| attach_uprobe(&prog, &exe, s.offset, &UprobeOptions::default()).unwrap())
            .collect();
        let perf_attach = start.elapsed();
        run(&exe, &[]);
        assert_eq!(read(&map, 0), N as u64);
        let start = Instant::now();
        drop(links);
        let perf_detach = start.elapsed();
        eprintln!(
            "{N} offsets: uprobe_multi attach {multi_attach:?} detach {multi_detach:?}; \
             perf events attach {perf_attach:?} detach {perf_detach:?}"
        );
    }

    mod perf_link {
        //! [`attach_uprobe_perf_link`]: cookies, one process only, and what closing costs.
        use super::*;

        const WAITER: &str = r#"
    #include <stdio.h>
    __attribute__((noinline)) int f(int x) { __asm__ volatile(""); return x + 1; }
    __attribute__((noinline)) int g(int x) { __asm__ volatile(""); return x + 2; }
    int main(int argc, char **argv) {
        char line[64];
        int i = 0;
        if (argc > 1) { for (int k = 0; k < 5; k++) { f(k); g(k); } return 0; }
        while (fgets(line, sizeof line, stdin)) { f(i++); g(i); printf("ok\n"); fflush(stdout); }
        return 0;
    }
    "#;

        fn build(dir: &Path) -> (PathBuf, u64, u64) {
            std::fs::create_dir_all(dir).unwrap();
            let (c, exe) = (dir.join("w.c"), dir.join("w"));
            std::fs::write(&c, WAITER).unwrap();
            let st = Command::new("gcc")
                .args(["-O1", "-o"])
                .arg(&exe)
                .arg(&c)
                .status()
                .unwrap();
            assert!(st.success());
            let syms = symbol_offsets(&exe);
            (exe, syms["f"], syms["g"])
        }

        #[test]
        fn perf_links_carry_cookies_and_stay_in_their_process() {
            let dir = std::env::temp_dir().join(format!("dtrace-perflink-{}", std::process::id()));
            let (exe, f, g) = build(&dir);
            let mut child = Command::new(&exe)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let map = testutil::map(MapType::Array, 8, 8);
            let prog = load(&map, false);
            let pid = Some(child.id() as i32);
            let links: Vec<crate::Link> = [(f, 2), (g, 5)]
                .iter()
                .map(|&(offset, cookie)| {
                    let opts = UprobeOptions {
                        pid,
                        cookie,
                        ..Default::default()
                    };
                    attach_uprobe_perf_link(&prog, &exe, offset, &opts).unwrap()
                })
                .collect();
            // Another process running the binary is not traced.
            assert!(Command::new(&exe).arg("x").status().unwrap().success());
            let mut stdin = child.stdin.take().unwrap();
            let mut stdout = BufReader::new(child.stdout.take().unwrap());
            for _ in 0..3 {
                stdin.write_all(b"go\n").unwrap();
                let mut line = String::new();
                stdout.read_line(&mut line).unwrap();
            }
            assert_eq!(read(&map, 2), 3);
            assert_eq!(read(&map, 5), 3);
            assert_eq!(read(&map, 0), 0);
            let start = Instant::now();
            drop(links);
            eprintln!("closing 2 per-process perf uprobes: {:?}", start.elapsed());
            drop(stdin);
            child.wait().unwrap();
            let _ = std::fs::remove_dir_all(&dir);
        }

        /// How long closing N per-process perf uprobes takes, one after the other
        /// (`cargo test -p dtrace-runtime perf_close_time -- --ignored --nocapture`).
        #[test]
        #[ignore]
        fn perf_close_time() {
            let dir = std::env::temp_dir().join(format!("dtrace-perfclose-{}", std::process::id()));
            let (exe, f, g) = build(&dir);
            let mut child = Command::new(&exe)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let map = testutil::map(MapType::Array, 8, 8);
            let prog = load(&map, false);
            let pid = Some(child.id() as i32);
            for n in [1usize, 2, 4, 8] {
                let start = Instant::now();
                let links: Vec<crate::Link> = (0..n)
                    .map(|i| {
                        let opts = UprobeOptions {
                            pid,
                            ..Default::default()
                        };
                        let off = if i % 2 == 0 { f } else { g };
                        attach_uprobe_perf_link(&prog, &exe, off, &opts).unwrap()
                    })
                    .collect();
                let attach = start.elapsed();
                let start = Instant::now();
                drop(links);
                eprintln!(
                    "{n} perf uprobes: attach {attach:?} close {:?}",
                    start.elapsed()
                );
            }
            let links: Vec<crate::Link> = (0..8)
                .map(|_| {
                    let opts = UprobeOptions {
                        pid,
                        ..Default::default()
                    };
                    attach_uprobe_perf_link(&prog, &exe, f, &opts).unwrap()
                })
                .collect();
            let start = Instant::now();
            std::thread::scope(|s| {
                for link in links {
                    s.spawn(move || drop(link));
                }
            });
            eprintln!("8 perf uprobes closed in 8 threads: {:?}", start.elapsed());
            for n in [1usize, 8] {
                let sites: Vec<UprobeSite> = (0..n)
                    .map(|i| UprobeSite {
                        offset: if i % 2 == 0 { f } else { g },
                        ..Default::default()
                    })
                    .collect();
                let prog = load(&map, true);
                let start = Instant::now();
                let link = attach_uprobe_multi(&prog, &exe, &sites, pid, false).unwrap();
                let attach = start.elapsed();
                let start = Instant::now();
                drop(link);
                eprintln!(
                    "uprobe_multi {n} sites: attach {attach:?} close {:?}",
                    start.elapsed()
                );
            }
            child.kill().unwrap();
            child.wait().unwrap();
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}

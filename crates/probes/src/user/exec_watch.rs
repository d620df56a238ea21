//! Noticing binaries that start running after tracing began, so probes can be attached to
//! them before their first instruction: a `tp_btf` program on `sched_process_exec` looks
//! the new image's file up (device and inode) in a hash map of binaries already examined;
//! for one not examined yet it stops the process (`bpf_send_signal(SIGSTOP)`, delivered
//! before the exec returns to user space) and reports it in a ring buffer. The consumer
//! examines the file (and the libraries it needs), attaches what matches, marks them
//! examined, and continues the process ([`ExecWatch::resume`], `SIGCONT`, only to the
//! processes it stopped).
//!
//! Each binary costs one stop on the first exec after tracing began; every later exec of
//! it costs one hash lookup in the kernel. Binaries are keyed by their file, so a binary
//! replaced on disk (a new inode) is examined again.
//!
//! Limits, plainly: a process stopped here is seen as stopped by a parent waiting with
//! `WUNTRACED` (an interactive shell's job control) until it is continued; if `dtrace` is
//! killed between the stop and the continue, the process stays stopped (`kill -CONT`
//! resumes it); and when two `dtrace` sessions watch at once, both stop a new binary's
//! process and the first to finish lets it go, possibly before the other attached.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use dtrace_backend::emit::Emitter;
use dtrace_ebpf::helpers;
use dtrace_ebpf::*;
use dtrace_runtime::{
    AttachType, Link, Map, MapSpec, MapType, Program, ProgramSpec, ProgramType, RingBuf, Update,
};

/// Binaries remembered at once; past that, new ones are not noticed.
pub const KNOWN_MAX: u32 = 1 << 16;
/// `known` values: reported, not examined yet (later execs are stopped and reported too).
const PENDING: u8 = 0;
/// Examined.
const DONE: u8 = 1;
const SIGSTOP: i32 = 19;

/// A process that exec'd a binary not examined yet, now stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exec {
    pub pid: i32,
    /// The binary's key in the examined map (kernel device number and inode).
    pub key: [u8; 16],
}

/// The exec watcher in the kernel: its map of examined binaries, its event ring buffer,
/// and the attached program (all released when this is dropped).
pub struct ExecWatch {
    known: Map,
    events: RingBuf,
    _events_map: Map,
    _program: Program,
    _link: Link,
}

/// The examined-map key of the file at `path`: `[kernel dev_t u32, 0 u32, inode u64]`.
pub fn file_key(path: &Path) -> Option<[u8; 16]> {
    let m = std::fs::metadata(path).ok()?;
    let dev = m.dev();
    // The kernel's dev_t: major << 20 | minor.
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let kdev = (major << 20) | minor;
    let mut key = [0u8; 16];
    key[..4].copy_from_slice(&kdev.to_ne_bytes());
    key[8..].copy_from_slice(&m.ino().to_ne_bytes());
    Some(key)
}

impl ExecWatch {
    /// Load and attach the watcher. Nothing is examined yet: mark what was, with
    /// [`ExecWatch::examined`].
    pub fn start() -> Result<ExecWatch, String> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            format!("dtrace: failed to watch for new processes ({what}): {e}\n")
        };
        let btf = dtrace_backend::types::kernel::vmlinux()
            .ok_or_else(|| fail("kernel BTF", &"not readable"))?;
        let offset = |strukt: &str, path: &str| -> Result<i16, String> {
            let id = btf
                .find(dtrace_btf::Kind::Struct, strukt)
                .ok_or_else(|| fail("kernel BTF", &format!("no struct {strukt}")))?;
            let f = btf
                .member_path(id, path)
                .map_err(|e| fail("kernel BTF", &e))?;
            i16::try_from(f.bit_offset / 8).map_err(|e| fail("kernel BTF", &e))
        };
        let file = offset("linux_binprm", "file")?;
        let inode = offset("file", "f_inode")?;
        let ino = offset("inode", "i_ino")?;
        let sb = offset("inode", "i_sb")?;
        let dev = offset("super_block", "s_dev")?;
        let known = Map::create(&MapSpec {
            map_type: MapType::Hash,
            key_size: 16,
            value_size: 1,
            max_entries: KNOWN_MAX,
            flags: 0,
            name: "dt_exec_known".into(),
        })
        .map_err(|e| fail("map", &e))?;
        let events_map = Map::create(&MapSpec {
            map_type: MapType::RingBuf,
            key_size: 0,
            value_size: 0,
            max_entries: 1 << 16,
            flags: 0,
            name: "dt_exec_events".into(),
        })
        .map_err(|e| fail("ring buffer", &e))?;
        let code = program(known.fd(), events_map.fd(), [file, inode, ino, sb, dev])
            .map_err(|e| fail("program", &e))?;
        let tp_id = btf
            .find(dtrace_btf::Kind::Typedef, "btf_trace_sched_process_exec")
            .ok_or_else(|| fail("kernel BTF", &"no sched_process_exec tracepoint"))?;
        let mut spec = ProgramSpec::new(ProgramType::Tracing, "dt_exec_watch", &code);
        spec.expected_attach_type = Some(AttachType::TraceRawTp);
        spec.attach_btf_id = tp_id;
        let program = Program::load(&spec).map_err(|e| fail("program", &e))?;
        let link = Link::raw_tracepoint(&program, None).map_err(|e| fail("attach", &e))?;
        let events = RingBuf::new(&events_map).map_err(|e| fail("ring buffer", &e))?;
        Ok(ExecWatch {
            known,
            events,
            _events_map: events_map,
            _program: program,
            _link: link,
        })
    }

    /// Remember the file at `path` as examined: its execs are no longer stopped.
    pub fn examined(&self, path: &Path) {
        if let Some(key) = file_key(path) {
            self.examined_key(&key);
        }
    }

    /// Remember the binary with examined-map key `key` as examined.
    pub fn examined_key(&self, key: &[u8; 16]) {
        let _ = self.known.update(key, &[DONE], Update::Any);
    }

    /// Wait up to `timeout` for processes that exec'd binaries not examined yet.
    pub fn wait(&mut self, timeout: Duration) -> Vec<Exec> {
        let _ = self.events.wait(timeout);
        let mut out = Vec::new();
        self.events.consume(|r| {
            if r.len() >= 24 {
                let mut key = [0u8; 16];
                key.copy_from_slice(&r[8..24]);
                out.push(Exec {
                    pid: i32::from_ne_bytes([r[0], r[1], r[2], r[3]]),
                    key,
                });
            }
        });
        out
    }

    /// Continue a process this watcher stopped.
    pub fn resume(exec: &Exec) {
        // SAFETY: kill(2) with a pid and a signal number touches no memory.
        unsafe {
            libc::kill(exec.pid, libc::SIGCONT);
        }
    }
}

/// The watcher program (`ctx` = `[task, old_pid, bprm]`, trusted BTF pointers): the new
/// image's `bprm->file->f_inode` gives the key `[i_sb->s_dev, i_ino]`; a binary marked
/// [`DONE`] costs nothing more; otherwise it is marked [`PENDING`], the process gets
/// `SIGSTOP` and `[tgid u32, pad u32, key 16]` goes to the ring buffer.
/// `offsets`: `linux_binprm.file`, `file.f_inode`, `inode.i_ino`, `inode.i_sb`,
/// `super_block.s_dev`.
fn program(known: i32, events: i32, offsets: [i16; 5]) -> Result<Vec<Insn>, String> {
    let [file, inode, ino, sb, dev] = offsets;
    let mut e = Emitter::new();
    let out = e.label();
    let stop = e.label();
    // Key at fp-16: [dev u32, 0 u32, ino u64]; event at fp-40: [tgid, 0, key].
    e.emit(Insn::ldx(Size::DW, R6, R1, 16));
    e.emit(Insn::ldx(Size::DW, R6, R6, file));
    e.emit(Insn::ldx(Size::DW, R6, R6, inode));
    e.emit(Insn::ldx(Size::DW, R7, R6, ino));
    e.emit(Insn::ldx(Size::DW, R6, R6, sb));
    e.emit(Insn::ldx(Size::W, R6, R6, dev));
    e.emit(Insn::stx(Size::W, R10, -16, R6));
    e.emit(Insn::st(Size::W, R10, -12, 0));
    e.emit(Insn::stx(Size::DW, R10, -8, R7));
    e.emit_all(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, known, 0));
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -16));
    e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
    e.jmp_imm(BPF_JEQ, R0, 0, stop);
    e.emit(Insn::ldx(Size::B, R1, R0, 0));
    e.jmp_imm(BPF_JEQ, R1, DONE as i32, out);
    e.bind(stop);
    // Not examined: pending (if not already), stop, report.
    e.emit(Insn::st(Size::B, R10, -48, PENDING as i32));
    e.emit_all(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, known, 0));
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -16));
    e.emit(Insn::mov64_reg(R3, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R3, -48));
    e.emit(Insn::mov64_imm(R4, 1)); // BPF_NOEXIST
    e.emit(Insn::call(helpers::MAP_UPDATE_ELEM));
    e.emit(Insn::mov64_imm(R1, SIGSTOP));
    e.emit(Insn::call(helpers::SEND_SIGNAL));
    e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
    e.emit(Insn::alu64_imm(BPF_RSH, R0, 32));
    e.emit(Insn::stx(Size::W, R10, -40, R0));
    e.emit(Insn::st(Size::W, R10, -36, 0));
    e.emit(Insn::ldx(Size::DW, R1, R10, -16));
    e.emit(Insn::stx(Size::DW, R10, -32, R1));
    e.emit(Insn::ldx(Size::DW, R1, R10, -8));
    e.emit(Insn::stx(Size::DW, R10, -24, R1));
    e.emit_all(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, events, 0));
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -40));
    e.emit(Insn::mov64_imm(R3, 24));
    e.emit(Insn::mov64_imm(R4, 0));
    e.emit(Insn::call(helpers::RINGBUF_OUTPUT));
    e.bind(out);
    e.emit(Insn::mov64_imm(R0, 0));
    e.emit(Insn::exit());
    Ok(e.finish()?.insns)
}

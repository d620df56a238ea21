//! Noticing binaries that start running after tracing began, so probes can be attached to
//! them before their first instruction.
//!
//! **Execs**: a `tp_btf` program on `sched_process_exec` looks
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
//! **Libraries loaded later** (`dlopen`): glibc's dynamic linker calls `_dl_debug_state()`
//! (the debugger interface's `r_brk`) when its list of loaded objects changes, with
//! `_r_debug.r_state` `RT_CONSISTENT` once new objects are mapped and before their code
//! (constructors included) runs. A uprobe there ([`ExecWatch::watch_dlopen`], in the given
//! processes or in all) counts the objects of `_r_debug.r_map` in a consistent state; when
//! a process has more than the last time, it is stopped and reported
//! ([`Held::Dlopen`]), so its new libraries can be examined before they run. The first
//! consistent state of a process (its start-up libraries, examined with its exec) only
//! records the count (processes named to [`ExecWatch::watch_dlopen`] are examined at their
//! first change; processes of a glob already running when tracing began are only from
//! their second).
//!
//! Every process stopped is recorded in a map until continued, and a
//! [`Guardian`] process continues those still recorded once `dtrace` has exited, however
//! it ended (`SIGKILL` included).
//!
//! Limits, plainly: a process stopped here is seen as stopped by a parent waiting with
//! `WUNTRACED` (an interactive shell's job control) until it is continued; and when two `dtrace` sessions watch at once, both stop a new binary's
//! process and the first to finish lets it go, possibly before the other attached.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::Duration;

use dtrace_backend::emit::Emitter;
use dtrace_ebpf::helpers;
use dtrace_ebpf::*;
use dtrace_runtime::{
    AttachType, Guardian, Link, Map, MapSpec, MapType, Program, ProgramSpec, ProgramType, RingBuf,
    Update,
};

/// Processes held at once (stopped, not yet continued); past that, the guardian would not
/// know of the others.
const HELD_MAX: u32 = 4096;
/// Binaries remembered at once; past that, new ones are not noticed.
pub const KNOWN_MAX: u32 = 1 << 16;
/// Processes whose loaded-object count is remembered (least recently used ones are
/// forgotten, and then examined at their next library change).
const COUNTS_MAX: u32 = 1 << 13;
/// `known` values: reported, not examined yet (later execs are stopped and reported too).
const PENDING: u8 = 0;
/// Examined.
const DONE: u8 = 1;
const SIGSTOP: i32 = 19;

/// A process this watcher stopped, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Held {
    /// It exec'd a binary not examined yet, with this key in the examined map (kernel
    /// device number and inode).
    Exec { pid: i32, key: [u8; 16] },
    /// It mapped more libraries (`dlopen`).
    Dlopen { pid: i32 },
}

impl Held {
    pub fn pid(&self) -> i32 {
        match *self {
            Held::Exec { pid, .. } | Held::Dlopen { pid } => pid,
        }
    }
}

/// Event kinds in the ring buffer.
const EVENT_EXEC: i32 = 0;
const EVENT_DLOPEN: i32 = 1;
/// Objects of `_r_debug.r_map` counted at most.
const LINK_MAP_MAX: i32 = 128;

/// The exec watcher in the kernel: its map of examined binaries, its event ring buffer,
/// and the attached program (all released when this is dropped).
pub struct ExecWatch {
    known: Map,
    /// Processes stopped and not continued yet (tgid keys), for the guardian.
    held: Map,
    _guardian: Guardian,
    events: RingBuf,
    events_map: Map,
    /// The exec program and its link, when execs are watched.
    exec: Option<(Program, Link)>,
    /// The `_dl_debug_state` watcher, once started: its per-process object counts, program
    /// and links.
    dlopen: Option<(Map, Program, Vec<Link>)>,
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
    /// Load the watcher, and attach its exec program if `execs`. Nothing is examined yet:
    /// mark what was, with [`ExecWatch::examined`].
    pub fn start(execs: bool) -> Result<ExecWatch, String> {
        let fail = |what: &str, e: &dyn std::fmt::Display| {
            format!("dtrace: failed to watch for new processes ({what}): {e}\n")
        };
        let known = Map::create(&MapSpec {
            map_type: MapType::Hash,
            key_size: 16,
            value_size: 1,
            max_entries: KNOWN_MAX,
            flags: 1, // BPF_F_NO_PREALLOC: entries are few, and created slowly
            name: "dt_exec_known".into(),
        })
        .map_err(|e| fail("map", &e))?;
        let held = Map::create(&MapSpec {
            map_type: MapType::Hash,
            key_size: 4,
            value_size: 1,
            max_entries: HELD_MAX,
            flags: 0,
            name: "dt_exec_held".into(),
        })
        .map_err(|e| fail("map", &e))?;
        let guardian = Guardian::spawn(&held).map_err(|e| fail("guardian", &e))?;
        let events_map = Map::create(&MapSpec {
            map_type: MapType::RingBuf,
            key_size: 0,
            value_size: 0,
            max_entries: 1 << 16,
            flags: 0,
            name: "dt_exec_events".into(),
        })
        .map_err(|e| fail("ring buffer", &e))?;
        // The exec program needs kernel structure offsets from BTF (read only then).
        let exec = if execs {
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
            let maps = [known.fd(), held.fd(), events_map.fd()];
            let code =
                program(maps, [file, inode, ino, sb, dev]).map_err(|e| fail("program", &e))?;
            let tp_id = btf
                .find(dtrace_btf::Kind::Typedef, "btf_trace_sched_process_exec")
                .ok_or_else(|| fail("kernel BTF", &"no sched_process_exec tracepoint"))?;
            let mut spec = ProgramSpec::new(ProgramType::Tracing, "dt_exec_watch", &code);
            spec.expected_attach_type = Some(AttachType::TraceRawTp);
            spec.attach_btf_id = tp_id;
            let program = Program::load(&spec).map_err(|e| fail("program", &e))?;
            let link = Link::raw_tracepoint(&program, None).map_err(|e| fail("attach", &e))?;
            Some((program, link))
        } else {
            None
        };
        let events = RingBuf::new(&events_map).map_err(|e| fail("ring buffer", &e))?;
        Ok(ExecWatch {
            known,
            held,
            _guardian: guardian,
            events,
            events_map,
            exec,
            dlopen: None,
        })
    }

    /// Also stop processes that map more libraries: all of them (`pids` `None`) or those
    /// named. Needs the dynamic linker's `_dl_debug_state` and `_r_debug` symbols.
    pub fn watch_dlopen(&mut self, pids: Option<&[i32]>) -> Result<(), String> {
        let fail = |e: &dyn std::fmt::Display| {
            format!("dtrace: failed to watch for libraries loaded later: {e}\n")
        };
        let ld = dynamic_linker().ok_or_else(|| fail(&"no dynamic linker found"))?;
        let data = std::fs::read(&ld).map_err(|e| fail(&e))?;
        let elf = crate::usdt::elf::Elf::parse(&data).map_err(|e| fail(&e))?;
        let symbols = elf.symbols().map_err(|e| fail(&e))?;
        let value = |name: &str| symbols.iter().find(|s| s.name == name).map(|s| s.value);
        let (Some(brk), Some(rdebug)) = (value("_dl_debug_state"), value("_r_debug")) else {
            return Err(fail(&format!(
                "{} lacks _dl_debug_state or _r_debug",
                ld.display()
            )));
        };
        let offset = elf
            .vaddr_to_offset(brk)
            .ok_or_else(|| fail(&"_dl_debug_state is in no segment"))?;
        let delta = i32::try_from(rdebug as i64 - brk as i64).map_err(|e| fail(&e))?;
        let counts = Map::create(&MapSpec {
            map_type: MapType::LruHash,
            key_size: 4,
            value_size: 4,
            max_entries: COUNTS_MAX,
            flags: 0,
            name: "dt_dl_counts".into(),
        })
        .map_err(|e| fail(&e))?;
        let code = dlopen_program([counts.fd(), self.held.fd(), self.events_map.fd()], delta)
            .map_err(|e| fail(&e))?;
        // A uprobe_multi link, or a perf-event uprobe on kernels without them (before 6.6).
        let multi = dtrace_runtime::uprobe::uprobe_multi_available();
        let mut spec = ProgramSpec::new(ProgramType::Kprobe, "dt_dlopen_watch", &code);
        if multi {
            spec.expected_attach_type = Some(AttachType::TraceUprobeMulti);
        }
        let program = Program::load(&spec).map_err(|e| fail(&e))?;
        let site = [dtrace_runtime::uprobe::UprobeSite {
            offset,
            ref_ctr_offset: 0,
            cookie: 0,
        }];
        let attach = |pid: Option<i32>| {
            if multi {
                dtrace_runtime::uprobe::attach_multi_link(&program, &ld, &site, pid, false)
            } else {
                let opts = dtrace_runtime::uprobe::UprobeOptions {
                    pid,
                    ..Default::default()
                };
                dtrace_runtime::uprobe::attach_uprobe_perf_link(&program, &ld, offset, &opts)
            }
        };
        let links = match pids {
            None => vec![attach(None).map_err(|e| fail(&e))?],
            Some(pids) => pids
                .iter()
                .map(|&pid| attach(Some(pid)))
                .collect::<dtrace_runtime::Result<Vec<_>>>()
                .map_err(|e| fail(&e))?,
        };
        self.dlopen = Some((counts, program, links));
        // Named processes are examined at their next change, whatever they mapped before.
        for &pid in pids.unwrap_or_default() {
            self.examine_next_change(pid);
        }
        Ok(())
    }

    /// Examine process `pid` at its next library change, whatever it mapped before (a
    /// process whose start-up libraries were examined already, like a `-c` command run to
    /// its `main()` before watching began).
    pub fn examine_next_change(&self, pid: i32) {
        if let Some((counts, _, _)) = &self.dlopen {
            let _ = counts.update(&pid.to_ne_bytes(), &0u32.to_ne_bytes(), Update::Any);
        }
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

    /// Wait up to `timeout` for processes held: execs of binaries not examined yet, and
    /// (with [`ExecWatch::watch_dlopen`]) processes that mapped more libraries.
    pub fn wait(&mut self, timeout: Duration) -> Vec<Held> {
        let _ = self.events.wait(timeout);
        let mut out = Vec::new();
        self.events.consume(|r| {
            if r.len() >= 24 {
                let pid = i32::from_ne_bytes([r[0], r[1], r[2], r[3]]);
                let kind = i32::from_ne_bytes([r[4], r[5], r[6], r[7]]);
                let mut key = [0u8; 16];
                key.copy_from_slice(&r[8..24]);
                out.push(match kind {
                    EVENT_DLOPEN => Held::Dlopen { pid },
                    _ => Held::Exec { pid, key },
                });
            }
        });
        out
    }

    /// Stop noticing: detach the exec and `_dl_debug_state` programs (the kernel returns
    /// once none of them runs any more), so a final [`ExecWatch::wait`] sees every process
    /// they stopped. The two close at once: each waits for an RCU grace period.
    pub fn detach(&mut self) {
        let exec = self.exec.take();
        let dlopen = self.dlopen.take();
        std::thread::scope(|s| {
            s.spawn(move || drop(exec));
            drop(dlopen);
        });
    }

    /// Continue a process this watcher stopped.
    pub fn resume(&self, held: &Held) {
        // SAFETY: kill(2) with a pid and a signal number touches no memory.
        unsafe {
            libc::kill(held.pid(), libc::SIGCONT);
        }
        let _ = self.held.delete(&held.pid().to_ne_bytes());
    }
}

/// The watcher program (`ctx` = `[task, old_pid, bprm]`, trusted BTF pointers): the new
/// image's `bprm->file->f_inode` gives the key `[i_sb->s_dev, i_ino]`; a binary marked
/// [`DONE`] costs nothing more; otherwise it is marked [`PENDING`], the process gets
/// `SIGSTOP`, is recorded in `held` and `[tgid u32, pad u32, key 16]` goes to the ring
/// buffer. `maps`: `known`, `held`, the ring buffer. `offsets`: `linux_binprm.file`, `file.f_inode`, `inode.i_ino`, `inode.i_sb`,
/// `super_block.s_dev`.
fn program(maps: [i32; 3], offsets: [i16; 5]) -> Result<Vec<Insn>, String> {
    let [known, held, events] = maps;
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
    record_held(&mut e, held, -40, -48);
    e.emit(Insn::st(Size::W, R10, -36, EVENT_EXEC));
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

/// `held[*(u32 *)(fp + key)] = *(u8 *)(fp + value)`: the process is stopped (clobbers
/// r0-r5).
fn record_held(e: &mut Emitter, held: i32, key: i16, value: i16) {
    e.emit_all(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, held, 0));
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, key.into()));
    e.emit(Insn::mov64_reg(R3, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R3, value.into()));
    e.emit(Insn::mov64_imm(R4, 0));
    e.emit(Insn::call(helpers::MAP_UPDATE_ELEM));
}

/// The dynamic linker processes use: this process's own (`ld-linux-x86-64.so.2`).
fn dynamic_linker() -> Option<std::path::PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/ld-linux") || p.contains("/ld-musl"))
        .map(std::path::PathBuf::from)
}

/// The `_dl_debug_state` uprobe program (`ctx` = the process's `pt_regs`): `_r_debug` is
/// at the probed address plus `delta`. In a consistent state (`r_state` 0) it counts the
/// objects of `r_map` (`link_map.l_next` at 24); a process seen before with fewer gets
/// `SIGSTOP`, is recorded in `held` and `[tgid, EVENT_DLOPEN, 0...]` goes to the ring
/// buffer; the count is kept per process in `counts`.
fn dlopen_program(maps: [i32; 3], delta: i32) -> Result<Vec<Insn>, String> {
    let [counts, held, events] = maps;
    const PT_REGS_IP: i16 = 16 * 8;
    let mut e = Emitter::new();
    let out = e.label();
    let walk = e.label();
    let counted = e.label();
    // fp-8: r_debug; fp-16: scratch read; fp-24: count; fp-32: pid key; fp-56: event.
    e.emit(Insn::ldx(Size::DW, R6, R1, PT_REGS_IP));
    e.emit(Insn::alu64_imm(BPF_ADD, R6, delta));
    e.emit(Insn::st(Size::DW, R10, -16, 0));
    e.emit(Insn::mov64_reg(R1, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R1, -16));
    e.emit(Insn::mov64_imm(R2, 4));
    e.emit(Insn::mov64_reg(R3, R6));
    e.emit(Insn::alu64_imm(BPF_ADD, R3, 24));
    e.emit(Insn::call(helpers::PROBE_READ_USER));
    e.jmp_imm(BPF_JNE, R0, 0, out);
    e.emit(Insn::ldx(Size::W, R1, R10, -16));
    e.jmp_imm(BPF_JNE, R1, 0, out);
    // r7: the current object (r_map), r8: the count.
    e.emit(Insn::mov64_reg(R1, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R1, -16));
    e.emit(Insn::mov64_imm(R2, 8));
    e.emit(Insn::mov64_reg(R3, R6));
    e.emit(Insn::alu64_imm(BPF_ADD, R3, 8));
    e.emit(Insn::call(helpers::PROBE_READ_USER));
    e.jmp_imm(BPF_JNE, R0, 0, out);
    e.emit(Insn::ldx(Size::DW, R7, R10, -16));
    e.emit(Insn::mov64_imm(R8, 0));
    e.bind(walk);
    e.jmp_imm(BPF_JEQ, R7, 0, counted);
    e.jmp_imm(BPF_JGE, R8, LINK_MAP_MAX, counted);
    e.emit(Insn::alu64_imm(BPF_ADD, R8, 1));
    e.emit(Insn::mov64_reg(R1, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R1, -16));
    e.emit(Insn::mov64_imm(R2, 8));
    e.emit(Insn::mov64_reg(R3, R7));
    e.emit(Insn::alu64_imm(BPF_ADD, R3, 24));
    e.emit(Insn::call(helpers::PROBE_READ_USER));
    e.jmp_imm(BPF_JNE, R0, 0, counted);
    e.emit(Insn::ldx(Size::DW, R7, R10, -16));
    e.goto(walk);
    e.bind(counted);
    e.emit(Insn::stx(Size::W, R10, -24, R8));
    e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
    e.emit(Insn::alu64_imm(BPF_RSH, R0, 32));
    e.emit(Insn::stx(Size::W, R10, -32, R0));
    e.emit_all(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, counts, 0));
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -32));
    e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
    // r9: the count seen before (0 if none: only record).
    e.emit(Insn::mov64_imm(R9, -1));
    let record = e.label();
    e.jmp_imm(BPF_JEQ, R0, 0, record);
    e.emit(Insn::ldx(Size::W, R9, R0, 0));
    e.bind(record);
    e.emit_all(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, counts, 0));
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -32));
    e.emit(Insn::mov64_reg(R3, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R3, -24));
    e.emit(Insn::mov64_imm(R4, 0));
    e.emit(Insn::call(helpers::MAP_UPDATE_ELEM));
    // First time, or no more objects than before: nothing to examine.
    e.jmp_imm(BPF_JEQ, R9, -1, out);
    e.jmp_reg(BPF_JGE, R9, R8, out);
    e.emit(Insn::mov64_imm(R1, SIGSTOP));
    e.emit(Insn::call(helpers::SEND_SIGNAL));
    record_held(&mut e, held, -32, -24);
    e.emit(Insn::ldx(Size::W, R1, R10, -32));
    e.emit(Insn::stx(Size::W, R10, -56, R1));
    e.emit(Insn::st(Size::W, R10, -52, EVENT_DLOPEN));
    e.emit(Insn::st(Size::DW, R10, -48, 0));
    e.emit(Insn::st(Size::DW, R10, -40, 0));
    e.emit_all(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, events, 0));
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -56));
    e.emit(Insn::mov64_imm(R3, 24));
    e.emit(Insn::mov64_imm(R4, 0));
    e.emit(Insn::call(helpers::RINGBUF_OUTPUT));
    e.bind(out);
    e.emit(Insn::mov64_imm(R0, 0));
    e.emit(Insn::exit());
    Ok(e.finish()?.insns)
}

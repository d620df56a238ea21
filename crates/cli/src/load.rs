//! Putting a compiled program into the kernel: create its maps, patch map references, load
//! each program (a verifier rejection is our bug and is reported as one) and attach them.
//! Helper programs ([`Compiled::helpers`], e.g. the `sched_switch` program behind
//! `vtimestamp`, the fork and exit programs behind follow-fork) are loaded here too, as
//! BTF-typed raw tracepoints (`tp_btf`), as are the programs of `rawtp` probes. A user
//! probe's program that reads user memory is loaded sleepable where the kernel allows it
//! (see `user_reads`), and as it was compiled if that fails.

use crate::bpflog::BpfLog;
use crate::early_ring::EarlyRing;
use crate::user_reads;
use dtrace_backend::program::{Compiled, HelperKind, MapKind, ProbeContext, ProbeSite};
use dtrace_runtime::{
    cpus, AttachType, Link, Map, MapSpec, MapType, Program, ProgramSpec, ProgramType, RingBuf,
    Update,
};

/// Maps and programs living in the kernel; dropping this detaches and frees everything.
pub struct Loaded {
    pub maps: Vec<Map>,
    /// Parallel to [`Compiled::programs`]; None for an `fbt` probe whose function the
    /// kernel cannot trace (listed in `skipped`).
    pub programs: Vec<Option<Program>>,
    /// `fbt` probes left out, with the kernel's reason: a glob's functions that cannot be
    /// traced (returning a struct on 6.1, `__init` code, ...) are skipped, not fatal.
    pub skipped: Vec<Skipped>,
    pub links: Vec<Link>,
    /// Parallel to [`Compiled::helpers`].
    pub helpers: Vec<Program>,
    /// The helpers' attachments: made before BEGIN, kept until this is dropped (after END).
    pub helper_links: Vec<Link>,
    /// The ring buffer's reader, when the ring was made early ([`EarlyRing`]).
    pub ring: Option<RingBuf>,
}

fn map_type(kind: MapKind) -> MapType {
    match kind {
        MapKind::Hash => MapType::Hash,
        MapKind::LruHash => MapType::LruHash,
        MapKind::Array => MapType::Array,
        MapKind::PercpuHash => MapType::PercpuHash,
        MapKind::PercpuArray => MapType::PercpuArray,
        MapKind::Ringbuf => MapType::RingBuf,
        MapKind::ArrayOfMaps => MapType::ArrayOfMaps,
        MapKind::TaskStorage => MapType::TaskStorage,
    }
}

/// Number of possible CPUs (highest id + 1), for per-CPU arrays indexed by CPU id.
pub fn possible_cpus() -> u32 {
    cpus::possible()
        .ok()
        .and_then(|c| c.iter().max().map(|m| m + 1))
        .unwrap_or(1)
}

/// Create the maps (taking the ring buffer from `early` when it fits) and load every
/// program.
pub fn load(
    compiled: &Compiled,
    probes: &std::collections::HashMap<u32, dtrace_probes::Probe>,
    log: &BpfLog,
    mut early: Option<EarlyRing>,
) -> Result<Loaded, String> {
    let mut maps: Vec<Map> = Vec::with_capacity(compiled.maps.len());
    let mut ring = None;
    for spec in &compiled.maps {
        let map = match spec.kind {
            MapKind::ArrayOfMaps => create_array_of_maps(spec, &maps)?,
            _ => match EarlyRing::take_for(&mut early, spec) {
                Some((map, reader)) => {
                    ring = Some(reader);
                    map
                }
                None => create_map(spec)?,
            },
        };
        maps.push(map);
    }
    let fds: Vec<i32> = maps.iter().map(Map::fd).collect();
    let mut programs = Vec::with_capacity(compiled.programs.len());
    let mut skipped = Vec::new();
    for prog in &compiled.programs {
        match try_load(prog, &fds, probes, log) {
            Ok(p) => programs.push(Some(p)),
            Err(Failure::Untraceable(s)) => {
                skipped.push(s);
                programs.push(None);
            }
            Err(Failure::Message(msg)) => return Err(msg),
        }
    }
    if !skipped.is_empty() && skipped.len() == function_programs(compiled) {
        // Not one function could be traced: that is the script's failure, not a skip.
        return Err(skipped[0].message());
    }
    let mut helpers = Vec::new();
    for helper in &compiled.helpers {
        let mut insns = helper.code.insns.clone();
        for &at in &helper.code.map_relocs {
            insns[at].imm = maps[insns[at].imm as usize].fd();
        }
        helpers.push(load_helper(helper.kind, &insns, log)?);
    }
    Ok(Loaded {
        maps,
        programs,
        skipped,
        links: Vec::new(),
        helpers,
        helper_links: Vec::new(),
        ring,
    })
}

/// Create one map of a compiled program, with its initial contents.
pub fn create_map(spec: &dtrace_backend::program::MapSpec) -> Result<Map, String> {
    let max_entries = match spec.entries_per_cpu {
        0 => spec.max_entries,
        n => possible_cpus() * n,
    };
    let map = Map::create(&MapSpec {
        map_type: map_type(spec.kind),
        key_size: spec.key_size,
        value_size: spec.value_size,
        max_entries,
        // BPF_F_NO_PREALLOC (task local storage allocates per task, and requires it).
        flags: match spec.kind {
            MapKind::Hash | MapKind::TaskStorage => 1,
            _ => 0,
        },
        name: spec.name.clone(),
    })
    .map_err(|e| format!("dtrace: failed to create map {}: {e}\n", spec.name))?;
    if let Some(initial) = &spec.initial {
        map.update(&0u32.to_ne_bytes(), initial, Update::Any)
            .map_err(|e| format!("dtrace: failed to initialise map {}: {e}\n", spec.name))?;
    }
    Ok(map)
}

/// Create an array of maps and put its members in, which `created` already holds.
fn create_array_of_maps(
    spec: &dtrace_backend::program::MapSpec,
    created: &[Map],
) -> Result<Map, String> {
    let failed =
        |e: dtrace_runtime::Error| format!("dtrace: failed to create map {}: {e}\n", spec.name);
    let member = |i: usize| -> Result<&Map, String> {
        spec.members
            .get(i)
            .and_then(|id| created.get(id.0))
            .ok_or_else(|| {
                format!(
                    "dtrace: map {} names a map not created before it\n",
                    spec.name
                )
            })
    };
    let array =
        Map::create_array_of_maps(&spec.name, member(0)?, spec.max_entries).map_err(failed)?;
    for i in 0..spec.members.len() {
        let fd = member(i)?.fd() as u32;
        array
            .update(&(i as u32).to_ne_bytes(), &fd.to_ne_bytes(), Update::Any)
            .map_err(failed)?;
    }
    Ok(array)
}

/// An `fbt` probe left out: the kernel cannot trace its function.
#[derive(Debug)]
pub struct Skipped {
    pub probe: String,
    /// The kernel's reason (the verifier's last line, or the failed call and errno).
    pub why: String,
}

impl Skipped {
    pub fn message(&self) -> String {
        format!("dtrace: failed to enable {}: {}\n", self.probe, self.why)
    }
}

/// One line about the `fbt` probes left out: how many, and why (the commonest reasons,
/// each with an example).
pub fn skipped_notice(skipped: &[Skipped]) -> Option<String> {
    if skipped.is_empty() {
        return None;
    }
    let mut reasons: Vec<(&str, &str, usize)> = Vec::new();
    for s in skipped {
        match reasons.iter_mut().find(|r| r.0 == s.why) {
            Some(r) => r.2 += 1,
            None => reasons.push((&s.why, &s.probe, 1)),
        }
    }
    reasons.sort_by_key(|r| std::cmp::Reverse(r.2));
    let why: Vec<String> = reasons
        .iter()
        .take(3)
        .map(|(why, probe, n)| match n {
            1 => format!("{probe}: {why}"),
            n => format!("{probe} and {} more: {why}", n - 1),
        })
        .collect();
    let more = if reasons.len() > 3 { "; ..." } else { "" };
    let probes = if skipped.len() == 1 {
        "probe"
    } else {
        "probes"
    };
    Some(format!(
        "{} fbt {probes} skipped, the kernel cannot trace their functions ({}{more})",
        skipped.len(),
        why.join("; ")
    ))
}

/// Why `probe`, an fbt probe, cannot be enabled on a kernel that refuses fentry programs
/// (`why`) and has no kprobes.
pub fn fbt_refused(probe: &ProbeSite, why: &str) -> String {
    format!(
        "dtrace: failed to enable {}: this kernel refuses the fentry/fexit BPF programs the fbt provider needs ({why}), and no kprobes are available; use syscall or sdt probes instead\n",
        probe.full_name()
    )
}

/// How many programs are of `fbt` probes.
fn function_programs(compiled: &Compiled) -> usize {
    compiled
        .programs
        .iter()
        .filter(|p| matches!(p.probe.context, ProbeContext::Function { .. }))
        .count()
}

/// The verifier's closing statistics, which follow its reason in the log.
const VERIFIER_STATS: &[&str] = &["processed ", "verification time", "stack depth"];

/// Why the kernel would not attach to a function, in words.
pub fn attach_refusal(e: &dtrace_runtime::Error) -> String {
    match e.errno() {
        Some(errno) => format!(
            "the kernel refuses to attach ({})",
            dtrace_runtime::errno_text(&std::io::Error::from_raw_os_error(errno))
        ),
        None => e.to_string(),
    }
}

/// Why a program was not loaded.
enum Failure {
    /// An error to report as it is.
    Message(String),
    /// An `fbt` function the kernel refuses to trace.
    Untraceable(Skipped),
}

/// Load one probe's program, its map references patched with `maps` (file descriptors in
/// [`Compiled::maps`] order).
pub fn load_program(
    prog: &dtrace_backend::program::ProgramSpec,
    maps: &[i32],
    probes: &std::collections::HashMap<u32, dtrace_probes::Probe>,
    log: &BpfLog,
) -> Result<Program, String> {
    try_load(prog, maps, probes, log).map_err(|f| match f {
        Failure::Message(msg) => msg,
        Failure::Untraceable(s) => s.message(),
    })
}

fn try_load(
    prog: &dtrace_backend::program::ProgramSpec,
    maps: &[i32],
    probes: &std::collections::HashMap<u32, dtrace_probes::Probe>,
    log: &BpfLog,
) -> Result<Program, Failure> {
    let verbose = log.verbose;
    let mut insns = prog.code.insns.clone();
    for &at in &prog.code.map_relocs {
        insns[at].imm = maps[insns[at].imm as usize];
    }
    let context = base_context(prog);
    let attach = probes.get(&prog.probe.id).map(|p| &p.attach);
    let reads = program_reads(prog, probes);
    if verbose {
        if let Some(line) = user_reads::describe(&prog.probe, &reads) {
            eprint!("{line}");
        }
    }
    if let user_reads::Reads::Sleepable(kfunc) = reads {
        let mut sleepable = insns.clone();
        dtrace_backend::sleepable::make_sleepable(&mut sleepable, kfunc);
        match load_as(prog, &sleepable, context, attach, true, log) {
            Err(Failure::Message(msg)) if verbose => {
                eprintln!("{msg}dtrace: loading it without sleeping instead");
            }
            // Not expected: a kernel that loaded the probe program refused this one. The
            // reads that cannot sleep still work on pages the process touched.
            Err(_) => {}
            ok => return ok,
        }
    }
    let loaded = load_as(prog, &insns, context, attach, false, log);
    crate::debug::say(|| {
        format!(
            "loaded the program for {} ({} instructions): {}",
            prog.probe.full_name(),
            insns.len(),
            if loaded.is_ok() {
                "accepted"
            } else {
                "refused"
            }
        )
    });
    loaded
}

/// The context whose kind of program `prog` is: proc and sched probes' programs are of
/// the kind of the probe they fire on.
fn base_context(prog: &dtrace_backend::program::ProgramSpec) -> &ProbeContext {
    match &prog.probe.context {
        ProbeContext::Mapped(m) => &m.base,
        other => other,
    }
}

/// How `prog` reads user memory once loaded (sleepable or not, and why).
pub fn program_reads(
    prog: &dtrace_backend::program::ProgramSpec,
    probes: &std::collections::HashMap<u32, dtrace_probes::Probe>,
) -> user_reads::Reads {
    let attach = probes.get(&prog.probe.id).map(|p| &p.attach);
    user_reads::reads(&prog.code.insns, &prog.probe, base_context(prog), attach)
}

/// Load `insns`, the program of `prog` with its maps patched, as a program for `context`.
fn load_as(
    prog: &dtrace_backend::program::ProgramSpec,
    insns: &[dtrace_ebpf::Insn],
    context: &ProbeContext,
    attach: Option<&dtrace_probes::Attach>,
    sleepable: bool,
    log: &BpfLog,
) -> Result<Program, Failure> {
    let name = program_name(&prog.probe);
    let mut spec = ProgramSpec::new(ProgramType::RawTracepoint, &name, insns);
    spec.functions = &prog.code.functions;
    spec.sleepable = sleepable;
    match *context {
        // A system call group: a raw tracepoint program on sys_enter/sys_exit.
        ProbeContext::ArgArray | ProbeContext::SyscallGroup(_) | ProbeContext::Mapped(_) => {}
        ProbeContext::PerfEvent => spec.prog_type = ProgramType::PerfEvent,
        // A system call's entry compiled for fentry on its function (crate::syscall_fentry).
        ProbeContext::Tracepoint(ref l) => match l.fentry {
            Some(btf_id) => {
                spec.prog_type = ProgramType::Tracing;
                spec.expected_attach_type = Some(AttachType::TraceFentry);
                spec.attach_btf_id = btf_id;
            }
            None => spec.prog_type = ProgramType::Tracepoint,
        },
        // User probes: uprobe_multi links, or per-process perf events (see user.rs); a group
        // of fbt functions: a kprobe_multi link.
        ProbeContext::Uprobe(_) => {
            spec.prog_type = ProgramType::Kprobe;
            spec.expected_attach_type = match attach {
                Some(dtrace_probes::Attach::User(u)) if !u.multi() => None,
                Some(dtrace_probes::Attach::KernelMulti {
                    multi_link: true, ..
                }) => Some(AttachType::TraceKprobeMulti),
                Some(dtrace_probes::Attach::KernelMulti { .. }) => None,
                _ => Some(AttachType::TraceUprobeMulti),
            };
        }
        // rawtp: a tp_btf program, like the helpers.
        ProbeContext::BtfTracepoint(ref tp) => {
            spec.prog_type = ProgramType::Tracing;
            spec.expected_attach_type = Some(AttachType::TraceRawTp);
            spec.attach_btf_id = tp.btf_id;
        }
        ProbeContext::Function { btf_id, ret, .. } => {
            if let Some(why) = dtrace_probes::fbt::kernel_refusal() {
                return Err(Failure::Message(fbt_refused(&prog.probe, &why)));
            }
            spec.prog_type = ProgramType::Tracing;
            spec.attach_btf_id = btf_id;
            spec.expected_attach_type = Some(if ret {
                AttachType::TraceFexit
            } else {
                AttachType::TraceFentry
            });
        }
    }
    log.request(&mut spec);
    let (loaded, shown) = shown(Program::load(&spec), log);
    loaded.map_err(|e| match context {
        // The kernel refuses to trace this function (it returns a struct, is not in
        // ftrace's list...): the reason is the verifier's last line.
        ProbeContext::Function { .. } => Failure::Untraceable(Skipped {
            probe: prog.probe.full_name(),
            why: match &e {
                // Worded without the function's name ("The function F return type STRUCT
                // is unsupported."), so functions refused alike count together.
                dtrace_runtime::Error::Verifier { log, .. } => log
                    .lines()
                    .map(str::trim)
                    .rev()
                    .find(|l| !l.is_empty() && !VERIFIER_STATS.iter().any(|s| l.starts_with(s)))
                    .map_or_else(
                        || e.to_string(),
                        |l| match l.split_once(&format!("{} ", prog.probe.function)) {
                            Some((_, rest)) => rest.trim_end_matches('.').to_string(),
                            None => l.to_string(),
                        },
                    ),
                other => other.to_string(),
            },
        }),
        _ => Failure::Message(rejected(&prog.probe, &e, log.verbose, shown)),
    })
}

/// A load's outcome, its verifier log shown under `bpflog` (and whether it was).
fn shown(
    loaded: dtrace_runtime::Result<Program>,
    log: &BpfLog,
) -> (dtrace_runtime::Result<Program>, bool) {
    let shown = match &loaded {
        Ok(p) => log.show(p.log(), p.log_truncated()),
        Err(dtrace_runtime::Error::Verifier {
            log: text,
            truncated,
            ..
        }) => log.show(text, *truncated),
        Err(_) => false,
    };
    (loaded, shown)
}

/// Load a helper program: a `tp_btf` program on its tracepoint (`btf_trace_NAME` in the
/// kernel's BTF).
fn load_helper(
    kind: HelperKind,
    insns: &[dtrace_ebpf::Insn],
    log: &BpfLog,
) -> Result<Program, String> {
    // The log goes with the message under -v, unless bpflog showed it.
    let verbose = log.verbose && !log.every;
    let tracepoint = kind.tracepoint();
    let what = format!("the {tracepoint} helper program (for {})", kind.purpose());
    let btf_id = dtrace_backend::types::kernel::vmlinux()
        .and_then(|btf| btf.find(dtrace_btf::Kind::Typedef, &format!("btf_trace_{tracepoint}")))
        .ok_or_else(|| {
            format!("dtrace: failed to load {what}: kernel BTF does not describe tracepoint {tracepoint}\n")
        })?;
    let name = format!("dt_{tracepoint}");
    let mut spec = ProgramSpec::new(ProgramType::Tracing, &name, insns);
    spec.expected_attach_type = Some(AttachType::TraceRawTp);
    spec.attach_btf_id = btf_id;
    log.request(&mut spec);
    shown(Program::load(&spec), log).0.map_err(|e| match e {
        dtrace_runtime::Error::Verifier { log, errno, .. } => {
            let mut msg = format!(
                "dtrace: failed to load {what}: the kernel verifier rejected it (errno {errno}); this is a bug in dtrace, please report it\n"
            );
            if verbose {
                msg.push_str("dtrace: verifier log:\n");
                msg.push_str(&log);
                if !log.ends_with('\n') {
                    msg.push('\n');
                }
            }
            msg
        }
        other => format!("dtrace: failed to load {what}: {other}\n"),
    })
}

fn program_name(probe: &ProbeSite) -> String {
    let mut name: String = format!("dt_{}", probe.name)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    name.truncate(15);
    name
}

/// The message for a program the kernel refused.
/// (`verbose`: with its verifier log, or a hint that `-v` shows it, unless `bpflog` `shown`
/// the log already.)
fn rejected(probe: &ProbeSite, err: &dtrace_runtime::Error, verbose: bool, shown: bool) -> String {
    match err {
        // A kernel in lockdown (integrity or confidentiality) keeps eBPF from writing user
        // memory: copyout() and copyoutstr() cannot run there.
        dtrace_runtime::Error::Verifier { log, .. }
            if log.contains("cannot use helper bpf_probe_write_user") =>
        {
            format!(
                "dtrace: failed to enable {}: copyout( ) and copyoutstr( ) cannot run on this kernel: it forbids eBPF programs to write user memory (kernel lockdown, see /sys/kernel/security/lockdown)\n",
                probe.full_name()
            )
        }
        dtrace_runtime::Error::Verifier { log, errno, .. } => {
            let mut msg = format!(
                "dtrace: failed to enable {}: the kernel verifier rejected the generated program (errno {errno}); this is a bug in dtrace, please report it with the script\n",
                probe.full_name()
            );
            match (shown, verbose) {
                (true, _) => {}
                (false, true) => {
                    msg.push_str("dtrace: verifier log:\n");
                    msg.push_str(log);
                    if !log.ends_with('\n') {
                        msg.push('\n');
                    }
                }
                (false, false) => msg.push_str("dtrace: run with -v to see the verifier log\n"),
            }
            msg
        }
        other => format!(
            "dtrace: failed to load program for {}: {other}\n",
            probe.full_name()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skip(probe: &str, why: &str) -> Skipped {
        Skipped {
            probe: probe.into(),
            why: why.into(),
        }
    }

    #[test]
    fn skipped_functions_are_counted_by_reason_in_one_line() {
        assert_eq!(skipped_notice(&[]), None);
        assert_eq!(
            skipped_notice(&[skip("fbt:vmlinux:a:entry", "x")]).as_deref(),
            Some("1 fbt probe skipped, the kernel cannot trace their functions (fbt:vmlinux:a:entry: x)")
        );
        let many = [
            skip("fbt:vmlinux:a:entry", "x"),
            skip("fbt:vmlinux:b:entry", "y"),
            skip("fbt:vmlinux:c:entry", "y"),
            skip("fbt:vmlinux:d:entry", "z"),
            skip("fbt:vmlinux:e:entry", "w"),
        ];
        assert_eq!(
            skipped_notice(&many).as_deref(),
            Some("5 fbt probes skipped, the kernel cannot trace their functions (fbt:vmlinux:b:entry and 1 more: y; fbt:vmlinux:a:entry: x; fbt:vmlinux:d:entry: z; ...)")
        );
    }
}

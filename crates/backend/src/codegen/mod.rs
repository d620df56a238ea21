//! Code generation: one eBPF program per probe, holding the clauses enabled on it in
//! program order, each clause guarded by its predicate and ending in one ring-buffer record.
//!
//! System call probes are the exception: the probes a clause is enabled on in one direction
//! (entry or return), when there are more than [`SYSCALL_GROUP_MIN`] of them, go to one
//! program per direction on the raw `sys_enter`/`sys_exit` tracepoint
//! ([`ProbeContext::SyscallGroup`]). Its prologue finds the system call's number; each
//! clause looks its epid up by that number in a table of its own (0: not enabled on that
//! call), and `probefunc` and `id` come from tables by number.
//!
//! The submodules each own one part of the language: [`expr`] operators and constants,
//! [`vars`] variables of every scope, [`strings`] string values, [`builtins`] built-in
//! variables, [`actions`] actions and the record they fill, [`aggregate`] aggregating
//! functions, [`subr`] subroutines.
//!
//! Besides the probes' programs the output may hold helper programs
//! ([`Compiled::helpers`]): a script reading `vtimestamp` gets a `tp_btf` program on
//! `sched_switch` that records, per CPU, the thread going on CPU, when, and its exact
//! `se.sum_exec_runtime` then ([`VtimeSlot`]); scripts that don't read it get none.
//!
//! Follow-fork (user probes with a [`UprobeContext::family`]): the compiled program gets the
//! [`Compiled::follow`] map, a `sched_process_fork` helper that puts children of its members
//! into their parent's family and a `sched_process_exit` helper that takes processes out
//! when their last thread exits; each such probe's prologue looks the current tgid up and
//! leaves unless it belongs to the probe's family.

mod actions;
mod aggregate;
mod builtins;
mod expr;
mod fault;
mod regs;
mod strings;
mod strsubr;
mod subr;
mod translate;
mod vars;

use dtrace_abi::record;
use std::collections::HashMap;

use dtrace_ebpf::*;
use dtrace_frontend::ast::{self, Item, Stmt};
use dtrace_frontend::{CompileError, Result, Span};

use crate::emit::{Code, Emitter, Label};
use crate::program::*;
use crate::types::Type;
use regs::{VReg, VRegs, CLAIM_SLOT, CTX_SLOT, KEY_SLOT, SCRATCH};

pub use actions::{FormatArg, FormatCheck};
pub use vars::MacroArgs;

/// Kernel structure layout the generated code needs, answered from BTF by the caller.
pub trait KernelLayout {
    /// Byte offset of a member path (`se.sum_exec_runtime`) inside `struct name`.
    fn member_offset(&self, name: &str, path: &str) -> Option<u32>;
}

/// Tunables that change generated code.
#[derive(Clone, Debug)]
pub struct CodegenOptions {
    pub strsize: u32,
    /// Ring buffer size in bytes (a power of two, at least one page).
    pub bufsize: u32,
    /// Maximum entries of each dynamic variable map.
    pub dynvar_entries: u32,
    /// Maximum keys of each aggregation.
    pub agg_entries: u32,
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC, for `walltimestamp`.
    pub wall_offset: u64,
    /// Frames `stack()` and `ustack()` record without an argument (`stackframes`,
    /// `ustackframes`).
    pub stack_frames: u32,
    pub ustack_frames: u32,
}

impl Default for CodegenOptions {
    fn default() -> Self {
        CodegenOptions {
            strsize: 256,
            bufsize: 4 << 20,
            dynvar_entries: 16384,
            agg_entries: 16384,
            wall_offset: 0,
            stack_frames: crate::program::STACK_FRAMES,
            ustack_frames: crate::program::USTACK_FRAMES,
        }
    }
}

/// Everything the code generator needs.
pub struct Input<'a> {
    pub program: &'a ast::Program,
    /// For each clause of `program`, in order, the probes it is enabled on.
    pub probes: &'a [Vec<ProbeSite>],
    pub options: CodegenOptions,
    pub macros: &'a MacroArgs,
    pub kernel: &'a dyn KernelLayout,
    pub formats: &'a dyn FormatCheck,
    /// Translator definitions (the D library's and the program's), in definition order.
    pub translators: &'a [crate::types::translators::Provided],
}

/// A clause enabled on more than this many system calls in one direction runs in the
/// direction's [`ProbeContext::SyscallGroup`] program; fewer keep a program per call, which
/// gives them typed `args[]`.
pub const SYSCALL_GROUP_MIN: usize = 8;

/// The direction of a system call probe that can join a group: `Some(true)` at return.
fn group_direction(site: &ProbeSite) -> Option<bool> {
    match &site.context {
        ProbeContext::Tracepoint(l) if site.provider == "syscall" => {
            l.syscall_nr.map(|_| l.syscall_return)
        }
        _ => None,
    }
}

/// The system call probes of each clause that go to a group program, per direction.
fn grouped_sites(probes: &[Vec<ProbeSite>]) -> Vec<[Vec<ProbeSite>; 2]> {
    probes
        .iter()
        .map(|sites| {
            let mut dirs: [Vec<ProbeSite>; 2] = Default::default();
            for site in sites {
                if let Some(ret) = group_direction(site) {
                    let dir = &mut dirs[ret as usize];
                    if !dir.iter().any(|s| s.id == site.id) {
                        dir.push(site.clone());
                    }
                }
            }
            dirs.map(|d| {
                if d.len() > SYSCALL_GROUP_MIN {
                    d
                } else {
                    Vec::new()
                }
            })
        })
        .collect()
}

/// The group program's probe for one direction, standing for every grouped call.
fn group_site(grouped: &[[Vec<ProbeSite>; 2]], ret: bool) -> ProbeSite {
    let mut calls: Vec<(u32, u32, String)> = Vec::new();
    for site in grouped.iter().flat_map(|d| &d[ret as usize]) {
        let ProbeContext::Tracepoint(l) = &site.context else {
            continue;
        };
        let nr = l.syscall_nr.expect("grouped calls have numbers");
        if !calls.iter().any(|c| c.0 == nr) {
            calls.push((nr, site.id, site.function.clone()));
        }
    }
    calls.sort();
    ProbeSite {
        id: 0,
        provider: "syscall".into(),
        module: "vmlinux".into(),
        function: String::new(),
        name: if ret { "return" } else { "entry" }.into(),
        context: ProbeContext::SyscallGroup(SyscallGroup { ret, calls }),
    }
}

/// A clause in a group program: its epid table (u32 by system call number) in the
/// read-only data, and its epids.
struct ClauseGroup {
    table: u32,
    epids: Vec<u32>,
}

/// Compile a D program for the given probes.
pub fn compile(input: Input<'_>) -> Result<Compiled> {
    let mut c = Compiler::new(&input);
    let clauses: Vec<&ast::Clause> = input
        .program
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Clause(c) => Some(c),
            _ => None,
        })
        .collect();
    for item in &input.program.items {
        match item {
            Item::Decl(decl) => c.declare(decl)?,
            Item::Inline(inline) => c.define_inline(inline)?,
            _ => {}
        }
    }
    // One program per probe, in order of first mention; clauses are compiled in program
    // order (types and declarations follow the text, as in DTrace), each into the programs
    // of the probes it is enabled on.
    let follows = input
        .probes
        .iter()
        .flatten()
        .any(|s| matches!(&s.context, ProbeContext::Uprobe(u) if u.family.is_some()));
    if follows {
        c.follow_map()?;
    }
    let mut states: Vec<ProgState> = Vec::new();
    let mut index: HashMap<u32, usize> = HashMap::new();
    let grouped = grouped_sites(input.probes);
    let mut group_index: [Option<usize>; 2] = [None, None];
    for (ci, sites) in input.probes.iter().enumerate() {
        let mut seen = Vec::new();
        let in_group = |site: &ProbeSite| {
            group_direction(site)
                .is_some_and(|ret| grouped[ci][ret as usize].iter().any(|s| s.id == site.id))
        };
        for site in sites {
            if seen.contains(&site.id) || in_group(site) {
                continue;
            }
            seen.push(site.id);
            let epid = c.enabled.len() as u32 + 1;
            c.enabled.push(EnabledProbe {
                epid,
                probe: site.clone(),
                records: clause_records(clauses[ci]),
                actions: Vec::new(),
            });
            let slot = *index.entry(site.id).or_insert_with(|| {
                states.push(ProgState::new(&mut c, site.clone()));
                states.len() - 1
            });
            let state = std::mem::replace(&mut states[slot], ProgState::placeholder(site));
            let mut gen = Gen::resume(&mut c, state);
            let result = gen.clause(clauses[ci], epid, None);
            states[slot] = gen.suspend();
            result?;
        }
        for ret in [false, true] {
            let members = &grouped[ci][ret as usize];
            if members.is_empty() {
                continue;
            }
            let slot = *group_index[ret as usize].get_or_insert_with(|| {
                states.push(ProgState::new(&mut c, group_site(&grouped, ret)));
                states.len() - 1
            });
            let ProbeContext::SyscallGroup(g) = &states[slot].probe.context else {
                unreachable!("a group program");
            };
            let mut table = vec![0u8; g.table_len() as usize * 4];
            let first = c.enabled.len() as u32 + 1;
            let mut epids = Vec::new();
            for site in members {
                let epid = c.enabled.len() as u32 + 1;
                c.enabled.push(EnabledProbe {
                    epid,
                    probe: site.clone(),
                    records: clause_records(clauses[ci]),
                    actions: Vec::new(),
                });
                if let ProbeContext::Tracepoint(l) = &site.context {
                    let at = l.syscall_nr.expect("grouped calls have numbers") as usize * 4;
                    table[at..at + 4].copy_from_slice(&epid.to_le_bytes());
                }
                epids.push(epid);
            }
            let group = ClauseGroup {
                table: c.rodata_string(&table),
                epids,
            };
            let placeholder = ProgState::placeholder(&states[slot].probe);
            let state = std::mem::replace(&mut states[slot], placeholder);
            let mut gen = Gen::resume(&mut c, state);
            let result = gen.clause(clauses[ci], first, Some(&group));
            states[slot] = gen.suspend();
            result?;
        }
    }
    let mut programs = Vec::new();
    for state in states {
        let probe = state.probe.clone();
        let code = Gen::resume(&mut c, state).finish()?;
        programs.push(ProgramSpec { probe, code });
    }
    Ok(c.into_compiled(programs))
}

/// Whether a clause writes a record: all but clauses made only of aggregations do.
fn clause_records(clause: &ast::Clause) -> bool {
    let Some(body) = &clause.body else {
        return true;
    };
    body.is_empty() || !body.iter().all(is_aggregation_stmt)
}

fn is_aggregation_stmt(stmt: &Stmt) -> bool {
    let Stmt::Expr(e) = stmt else { return false };
    let ast::ExprKind::Assign { lhs, op: None, .. } = &e.kind else {
        return false;
    };
    match &lhs.kind {
        ast::ExprKind::Aggregation(_) => true,
        ast::ExprKind::Index { base, .. } => {
            matches!(base.kind, ast::ExprKind::Aggregation(_))
        }
        _ => false,
    }
}

/// Program-wide state: maps, variables and aggregations shared by all programs.
pub(crate) struct Compiler<'a> {
    opts: CodegenOptions,
    macros: &'a MacroArgs,
    kernel: &'a dyn KernelLayout,
    formats: &'a dyn FormatCheck,
    /// The compilation's translators, handed over by the caller.
    translators: &'a [crate::types::translators::Provided],
    maps: Vec<MapSpec>,
    core: CoreMaps,
    rodata: vars::Rodata,
    vars: vars::Variables,
    aggregations: Vec<Aggregation>,
    /// Where each aggregation was first assigned (for D_AGG_REDEF).
    agg_spans: HashMap<String, Span>,
    enabled: Vec<EnabledProbe>,
    /// `inline` definitions: name -> (type, value).
    inlines: HashMap<String, (Type, ast::Expr)>,
    /// Constants of enums the program defines.
    enum_constants: HashMap<String, i64>,
    /// Inlines being expanded (to refuse recursive definitions).
    expanding: Vec<String>,
    /// Largest scratch area any program needs.
    scratch_size: u32,
    /// The per-CPU [`VtimeSlot`] map, once a clause reads `vtimestamp`.
    vtime: Option<MapId>,
    helpers: Vec<HelperProgram>,
    /// The follow-fork map ([`Compiled::follow`]), when a probe follows a family.
    follow: Option<MapId>,
}

/// Size of the record area at the start of scratch (scratch offsets are 16-bit).
fn record_limit(strsize: u32) -> u32 {
    (16 * strsize).clamp(8192, i16::MAX as u32 - 7)
}

/// Scratch offset of the u64 holding the scratch level a firing claimed, after the record
/// area.
fn level_slot(strsize: u32) -> i16 {
    record_limit(strsize) as i16
}

impl<'a> Compiler<'a> {
    fn new(input: &Input<'a>) -> Compiler<'a> {
        let mut maps = Vec::new();
        let mut add = |spec: MapSpec| {
            maps.push(spec);
            MapId(maps.len() - 1)
        };
        let opts = input.options.clone();
        let core = CoreMaps {
            ringbuf: add(MapSpec {
                name: "dt_ringbuf".into(),
                kind: MapKind::Ringbuf,
                key_size: 0,
                value_size: 0,
                max_entries: opts.bufsize,
                initial: None,
                entries_per_cpu: 0,
            }),
            drops: add(MapSpec {
                name: "dt_drops".into(),
                kind: MapKind::PercpuArray,
                key_size: 4,
                value_size: DropKind::COUNT * 8,
                max_entries: 1,
                initial: None,
                entries_per_cpu: 0,
            }),
            scratch: add(MapSpec {
                name: "dt_scratch".into(),
                kind: MapKind::Array,
                key_size: 4,
                value_size: 0,
                max_entries: 0,
                initial: None,
                entries_per_cpu: SCRATCH_LEVELS,
            }),
            claims: add(MapSpec {
                name: "dt_claims".into(),
                kind: MapKind::Array,
                key_size: 4,
                value_size: SCRATCH_LEVELS * 8,
                max_entries: 0,
                initial: None,
                entries_per_cpu: 1,
            }),
            globals: add(MapSpec {
                name: "dt_globals".into(),
                kind: MapKind::Array,
                key_size: 4,
                value_size: 0,
                max_entries: 1,
                initial: None,
                entries_per_cpu: 0,
            }),
            rodata: add(MapSpec {
                name: "dt_rodata".into(),
                kind: MapKind::Array,
                key_size: 4,
                value_size: 0,
                max_entries: 1,
                initial: None,
                entries_per_cpu: 0,
            }),
        };
        Compiler {
            rodata: vars::Rodata::default(),
            vars: vars::Variables::default(),
            scratch_size: record_limit(opts.strsize),
            opts,
            macros: input.macros,
            kernel: input.kernel,
            formats: input.formats,
            translators: input.translators,
            maps,
            core,
            aggregations: Vec::new(),
            agg_spans: HashMap::new(),
            enabled: Vec::new(),
            inlines: HashMap::new(),
            enum_constants: HashMap::new(),
            expanding: Vec::new(),
            vtime: None,
            helpers: Vec::new(),
            follow: None,
        }
    }

    /// The follow-fork map, created with its `sched_process_fork` and `sched_process_exit`
    /// helpers on first use.
    fn follow_map(&mut self) -> Result<MapId> {
        if let Some(map) = self.follow {
            return Ok(map);
        }
        let tgid = self
            .kernel
            .member_offset("task_struct", "tgid")
            .and_then(|o| i16::try_from(o).ok())
            .ok_or_else(|| {
                CompileError::unplaced(
                    "D_UNKNOWN",
                    "kernel type information lacks struct task_struct member tgid (needed by followfork)",
                )
            })?;
        let map = self.add_map(MapSpec {
            name: "dt_follow".into(),
            kind: MapKind::Hash,
            key_size: 4,
            value_size: 4,
            max_entries: FOLLOW_MAX,
            initial: None,
            entries_per_cpu: 0,
        });
        let finish = |e: Emitter| {
            e.finish()
                .map_err(|msg| CompileError::unplaced("D_DIF_TOOBIG", msg))
        };
        self.helpers.push(HelperProgram {
            kind: HelperKind::ProcessFork,
            code: finish(process_fork_helper(map, tgid))?,
        });
        self.helpers.push(HelperProgram {
            kind: HelperKind::ProcessExit,
            code: finish(process_exit_helper(map, tgid))?,
        });
        self.follow = Some(map);
        Ok(map)
    }

    /// The map `vtimestamp` reads, created with the `sched_switch` helper program that
    /// fills it on first use.
    fn vtime_map(&mut self, span: Span) -> Result<MapId> {
        if let Some(map) = self.vtime {
            return Ok(map);
        }
        let offset = |path: &str| {
            self.kernel
                .member_offset("task_struct", path)
                .ok_or_else(|| {
                    CompileError::new(
                        "D_UNKNOWN",
                        format!("kernel type information lacks struct task_struct member {path}"),
                        span,
                    )
                })
        };
        let (pid, sum) = (offset("pid")?, offset("se.sum_exec_runtime")?);
        let map = self.add_map(MapSpec {
            name: "dt_vtime".into(),
            kind: MapKind::PercpuArray,
            key_size: 4,
            value_size: VtimeSlot::SIZE,
            max_entries: 1,
            initial: None,
            entries_per_cpu: 0,
        });
        let code = sched_switch_helper(map, pid, sum)
            .map_err(|msg| CompileError::new("D_DIF_TOOBIG", msg, span))?;
        self.helpers.push(HelperProgram {
            kind: HelperKind::SchedSwitch,
            code,
        });
        self.vtime = Some(map);
        Ok(map)
    }

    fn add_map(&mut self, spec: MapSpec) -> MapId {
        self.maps.push(spec);
        MapId(self.maps.len() - 1)
    }

    fn into_compiled(mut self, programs: Vec<ProgramSpec>) -> Compiled {
        let strsize = self.opts.strsize as usize;
        let rodata = self.rodata.finish(strsize.max(aggregate::MAX_SLOTS * 8));
        let scratch = &mut self.maps[self.core.scratch.0];
        scratch.value_size = self.scratch_size.next_multiple_of(8);
        let globals = &mut self.maps[self.core.globals.0];
        globals.value_size = self.vars.globals_size().max(8);
        let ro = &mut self.maps[self.core.rodata.0];
        ro.value_size = rodata.len() as u32;
        ro.initial = Some(rodata);
        Compiled {
            desc: crate::describe::describe(&self.enabled, &self.aggregations, strsize as u32),
            maps: self.maps,
            core: self.core,
            programs,
            enabled: self.enabled,
            aggregations: self.aggregations,
            options: Vec::new(),
            helpers: self.helpers,
            follow: self.follow,
        }
    }
}

/// The `tp_btf` program on `sched_switch` (`ctx` = `[preempt, prev, next, prev_state]`)
/// that fills this CPU's [`VtimeSlot`] for the thread going on CPU: its thread id, the time
/// and its `se.sum_exec_runtime`, exact at this point (the scheduler brought it up to date
/// when the thread last went off CPU). `pid` and `sum` are the members' offsets in
/// `struct task_struct`; `next` is a trusted BTF pointer, so they are read directly.
fn sched_switch_helper(map: MapId, pid: u32, sum: u32) -> std::result::Result<Code, String> {
    let offset = |o: u32| i16::try_from(o).map_err(|_| format!("task_struct offset {o} too large"));
    let (pid, sum) = (offset(pid)?, offset(sum)?);
    let mut e = Emitter::new();
    let out = e.label();
    e.emit(Insn::ldx(Size::DW, R6, R1, 16));
    e.emit(Insn::st(Size::W, R10, -8, 0));
    e.ld_map(R1, map);
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -8));
    e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
    e.jmp_imm(BPF_JEQ, R0, 0, out);
    e.emit(Insn::mov64_reg(R7, R0));
    e.emit(Insn::ldx(Size::W, R1, R6, pid));
    e.emit(Insn::stx(Size::W, R7, VtimeSlot::TID, R1));
    e.emit(Insn::ldx(Size::DW, R1, R6, sum));
    e.emit(Insn::stx(Size::DW, R7, VtimeSlot::SUM, R1));
    e.emit(Insn::call(helpers::KTIME_GET_NS));
    e.emit(Insn::stx(Size::DW, R7, VtimeSlot::SINCE, R0));
    e.bind(out);
    e.emit(Insn::mov64_imm(R0, 0));
    e.emit(Insn::exit());
    e.finish()
}

/// The `tp_btf` program on `sched_process_fork` (`ctx` = `[parent, child]`, trusted task
/// pointers): when the parent's tgid is in the follow map, the child's tgid joins with the
/// same family. `tgid` is the offset of `task_struct.tgid`.
fn process_fork_helper(map: MapId, tgid: i16) -> Emitter {
    let mut e = Emitter::new();
    let out = e.label();
    e.emit(Insn::ldx(Size::DW, R6, R1, 0));
    e.emit(Insn::ldx(Size::DW, R7, R1, 8));
    e.emit(Insn::ldx(Size::W, R1, R6, tgid));
    e.emit(Insn::stx(Size::W, R10, -8, R1));
    e.ld_map(R1, map);
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -8));
    e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
    e.jmp_imm(BPF_JEQ, R0, 0, out);
    e.emit(Insn::ldx(Size::W, R1, R0, 0));
    e.emit(Insn::stx(Size::W, R10, -16, R1));
    e.emit(Insn::ldx(Size::W, R1, R7, tgid));
    e.emit(Insn::stx(Size::W, R10, -8, R1));
    e.ld_map(R1, map);
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -8));
    e.emit(Insn::mov64_reg(R3, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R3, -16));
    e.emit(Insn::mov64_imm(R4, 0));
    e.emit(Insn::call(helpers::MAP_UPDATE_ELEM));
    e.bind(out);
    e.emit(Insn::mov64_imm(R0, 0));
    e.emit(Insn::exit());
    e
}

/// The `tp_btf` program on `sched_process_exit` (`ctx` = `[task, group_dead]`): when the
/// process's last thread exits, its tgid leaves the follow map.
fn process_exit_helper(map: MapId, tgid: i16) -> Emitter {
    let mut e = Emitter::new();
    let out = e.label();
    e.emit(Insn::ldx(Size::DW, R2, R1, 8));
    e.emit(Insn::alu64_imm(BPF_AND, R2, 0xff));
    e.jmp_imm(BPF_JEQ, R2, 0, out);
    e.emit(Insn::ldx(Size::DW, R6, R1, 0));
    e.emit(Insn::ldx(Size::W, R1, R6, tgid));
    e.emit(Insn::stx(Size::W, R10, -8, R1));
    e.ld_map(R1, map);
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, -8));
    e.emit(Insn::call(helpers::MAP_DELETE_ELEM));
    e.bind(out);
    e.emit(Insn::mov64_imm(R0, 0));
    e.emit(Insn::exit());
    e
}

/// Claim the first free scratch area of this CPU ([`SCRATCH_LEVELS`]) and point
/// [`SCRATCH`] at it; the level claimed goes to scratch offset `level_slot` and the claim
/// words' address to [`CLAIM_SLOT`], for [`release_scratch`]. A firing that finds every
/// area taken counts a [`DropKind::Nested`] drop and leaves.
///
/// The paths of the levels meet again right after the claim with the same verifier state
/// (the level lives only in memory), so the verifier checks the rest of the program once,
/// not once per level.
fn claim_scratch(e: &mut Emitter, core: &CoreMaps, level_slot: i16, exit: Label) {
    e.emit(Insn::call(helpers::GET_SMP_PROCESSOR_ID));
    e.emit(Insn::stx(Size::W, R10, KEY_SLOT, R0));
    e.ld_map(R1, core.claims);
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, KEY_SLOT as i32));
    e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
    e.jmp_imm(BPF_JEQ, R0, 0, exit);
    e.emit(Insn::mov64_reg(R6, R0));
    e.emit(Insn::mov64_imm(R7, 1));
    let claimed: Vec<Label> = (0..SCRATCH_LEVELS).map(|_| e.label()).collect();
    for (level, &label) in claimed.iter().enumerate() {
        e.emit(Insn::mov64_imm(R0, 0));
        e.emit(Insn::atomic_cmpxchg(Size::DW, R6, level as i16 * 8, R7));
        e.jmp_imm(BPF_JEQ, R0, 0, label);
    }
    count_drop(e, core, DropKind::Nested);
    e.goto(exit);
    let found = e.label();
    for (level, &label) in claimed.iter().enumerate() {
        e.bind(label);
        e.emit(Insn::mov64_imm(R1, level as i32));
        e.goto(found);
    }
    e.bind(found);
    e.emit(Insn::stx(Size::DW, R10, CLAIM_SLOT, R6));
    // The area of (cpu, level) is element cpu * SCRATCH_LEVELS + level.
    e.emit(Insn::ldx(Size::W, R0, R10, KEY_SLOT));
    e.emit(Insn::alu64_imm(BPF_MUL, R0, SCRATCH_LEVELS as i32));
    e.emit(Insn::alu64_reg(BPF_ADD, R0, R1));
    e.emit(Insn::stx(Size::DW, R10, KEY_SLOT, R0));
    e.ld_map(R1, core.scratch);
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, KEY_SLOT as i32));
    e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
    let missing = e.label();
    e.jmp_imm(BPF_JEQ, R0, 0, missing);
    e.emit(Insn::mov64_reg(SCRATCH, R0));
    e.emit(Insn::ldx(Size::DW, R1, R10, KEY_SLOT));
    e.emit(Insn::alu64_imm(BPF_AND, R1, SCRATCH_LEVELS as i32 - 1));
    e.emit(Insn::stx(Size::DW, SCRATCH, level_slot, R1));
    e.emit(Insn::st(Size::DW, R10, KEY_SLOT, 0));
    let claimed = e.label();
    e.goto(claimed);
    // No area for a CPU that has claim words cannot happen; free the claim and leave.
    e.bind(missing);
    e.emit(Insn::ldx(Size::DW, R1, R10, KEY_SLOT));
    e.emit(Insn::alu64_imm(BPF_AND, R1, SCRATCH_LEVELS as i32 - 1));
    e.emit(Insn::alu64_imm(BPF_LSH, R1, 3));
    e.emit(Insn::alu64_reg(BPF_ADD, R6, R1));
    e.emit(Insn::st(Size::DW, R6, 0, 0));
    e.emit(Insn::st(Size::DW, R10, CLAIM_SLOT, 0));
    e.goto(exit);
    e.bind(claimed);
}

/// Free the scratch area this firing claimed, if it claimed one (the program's last act).
fn release_scratch(e: &mut Emitter, level_slot: i16) {
    let none = e.label();
    e.emit(Insn::ldx(Size::DW, R1, R10, CLAIM_SLOT));
    e.jmp_imm(BPF_JEQ, R1, 0, none);
    e.emit(Insn::ldx(Size::DW, R2, SCRATCH, level_slot));
    e.emit(Insn::alu64_imm(BPF_AND, R2, SCRATCH_LEVELS as i32 - 1));
    e.emit(Insn::alu64_imm(BPF_LSH, R2, 3));
    e.emit(Insn::alu64_reg(BPF_ADD, R1, R2));
    e.emit(Insn::st(Size::DW, R1, 0, 0));
    e.bind(none);
}

/// Increment this CPU's drop counter of `kind` (atomically: a program interrupting this one
/// may count too).
fn count_drop(e: &mut Emitter, core: &CoreMaps, kind: DropKind) {
    e.emit(Insn::st(Size::W, R10, KEY_SLOT, 0));
    e.ld_map(R1, core.drops);
    e.emit(Insn::mov64_reg(R2, R10));
    e.emit(Insn::alu64_imm(BPF_ADD, R2, KEY_SLOT as i32));
    e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
    let done = e.label();
    e.jmp_imm(BPF_JEQ, R0, 0, done);
    e.emit(Insn::mov64_imm(R1, 1));
    e.emit(Insn::atomic_add(Size::DW, R0, kind as i16 * 8, R1));
    e.bind(done);
}

/// A value on the evaluation stack: its register and D type.
#[derive(Clone, Debug)]
pub(crate) struct Val {
    pub reg: VReg,
    pub ty: Type,
}

/// Per-clause state.
struct ClauseState {
    /// The clause's epid (its first, in a group program).
    epid: u32,
    /// In a group program: the epids of the clause, one per system call.
    group_epids: Vec<u32>,
    /// In a group program: the scratch offset holding the epid of the call that fired,
    /// looked up at run time (records and fault records take it from there).
    epid_slot: Option<u32>,
    /// Where the clause ends; faults jump here after writing their record.
    end: Label,
    /// Next free byte of the record.
    record_len: u32,
    /// Nesting of conditional statements around the current action.
    conditional: usize,
    /// Number of presence bits handed out.
    presence_bits: u32,
    /// DTrace's action number (1-based) of the statement being compiled.
    action: u32,
    actions: Vec<Action>,
}

/// The record header: `[epid u32][cpu u32][presence bits u64]`.
const RECORD_HEADER: u32 = record::HEADER_SIZE;

/// A program being generated, between the clauses compiled into it.
struct ProgState {
    e: Emitter,
    probe: ProbeSite,
    scratch_top: u32,
    this_offsets: HashMap<String, u32>,
    exit: Label,
    /// In a group program: where in scratch the prologue stored the system call number.
    nr_slot: Option<u32>,
}

/// `struct pt_regs` offset of `orig_ax`: the system call number, at return.
const PT_REGS_ORIG_AX: i32 = 120;
/// `TS_COMPAT` in `thread_info.status`: the task is in a 32-bit (ia32) system call, whose
/// numbers are not x86_64's; the kernel's own syscall tracepoints skip those too.
const TS_COMPAT: i32 = 2;

impl ProgState {
    /// A new program with its prologue: save the context, claim a scratch area of this CPU.
    fn new(c: &mut Compiler<'_>, probe: ProbeSite) -> ProgState {
        let mut e = Emitter::new();
        let exit = e.label();
        e.emit(Insn::stx(Size::DW, R10, CTX_SLOT, R1));
        e.emit(Insn::st(Size::DW, R10, CLAIM_SLOT, 0));
        // After exit(), only END and ERROR still run.
        let drains = probe.provider == "dtrace" && matches!(probe.name.as_str(), "END" | "ERROR");
        if !drains {
            e.ld_map_value(R2, c.core.globals, vars::STATE_OFFSET);
            e.emit(Insn::ldx(Size::DW, R2, R2, 0));
            e.jmp_imm(BPF_JNE, R2, 0, exit);
        }
        if let (ProbeContext::Uprobe(u), Some(map)) = (&probe.context, c.follow) {
            if let Some(family) = u.family {
                // Follow-fork: leave unless this process is in the probe's family.
                e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
                e.emit(Insn::alu64_imm(BPF_RSH, R0, 32));
                e.emit(Insn::stx(Size::W, R10, KEY_SLOT, R0));
                e.ld_map(R1, map);
                e.emit(Insn::mov64_reg(R2, R10));
                e.emit(Insn::alu64_imm(BPF_ADD, R2, KEY_SLOT as i32));
                e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
                e.jmp_imm(BPF_JEQ, R0, 0, exit);
                e.emit(Insn::ldx(Size::W, R1, R0, 0));
                e.jmp_imm(BPF_JNE, R1, family as i32, exit);
            }
        }
        let level_slot = level_slot(c.opts.strsize);
        claim_scratch(&mut e, &c.core, level_slot, exit);
        let mut scratch_top = level_slot as u32 + 8;
        let mut nr_slot = None;
        if let ProbeContext::SyscallGroup(g) = &probe.context {
            let slot = scratch_top;
            scratch_top += 8;
            nr_slot = Some(slot);
            Self::syscall_prologue(c, &mut e, g, slot as i16, exit);
        }
        ProgState {
            e,
            probe,
            scratch_top,
            this_offsets: HashMap::new(),
            exit,
            nr_slot,
        }
    }

    /// A group program's prologue: leave unless this is a native x86_64 system call of the
    /// group's tables, then store its number at `slot` of scratch.
    fn syscall_prologue(
        c: &Compiler<'_>,
        e: &mut Emitter,
        g: &SyscallGroup,
        slot: i16,
        exit: Label,
    ) {
        // r0 = *(size *)(r3), read with bpf_probe_read_kernel (0 if unreadable).
        let read_kernel = |e: &mut Emitter, size: i32| {
            e.emit(Insn::st(Size::DW, R10, KEY_SLOT, 0));
            e.emit(Insn::mov64_reg(R1, R10));
            e.emit(Insn::alu64_imm(BPF_ADD, R1, KEY_SLOT as i32));
            e.emit(Insn::mov64_imm(R2, size));
            e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
            e.emit(Insn::ldx(
                Size::from_bytes(size as usize),
                R0,
                R10,
                KEY_SLOT,
            ));
        };
        if let Some(off) = c.kernel.member_offset("task_struct", "thread_info.status") {
            e.emit(Insn::call(helpers::GET_CURRENT_TASK));
            e.emit(Insn::mov64_reg(R3, R0));
            e.emit(Insn::alu64_imm(BPF_ADD, R3, off as i32));
            read_kernel(e, 4);
            e.emit(Insn::alu64_imm(BPF_AND, R0, TS_COMPAT));
            e.jmp_imm(BPF_JNE, R0, 0, exit);
        }
        e.emit(Insn::ldx(Size::DW, R1, R10, CTX_SLOT));
        if g.ret {
            // The number is the registers' orig_ax (args[1] is the return value).
            e.emit(Insn::ldx(Size::DW, R3, R1, 0));
            e.emit(Insn::alu64_imm(BPF_ADD, R3, PT_REGS_ORIG_AX));
            read_kernel(e, 8);
        } else {
            e.emit(Insn::ldx(Size::DW, R0, R1, 8));
        }
        // Unsigned: -1 (no system call) and x32 numbers (bit 30) are out of range too.
        e.jmp_imm(BPF_JGE, R0, g.table_len() as i32, exit);
        e.emit(Insn::stx(Size::DW, SCRATCH, slot, R0));
    }

    /// An empty stand-in while the real state is lent to a [`Gen`].
    fn placeholder(probe: &ProbeSite) -> ProgState {
        let mut e = Emitter::new();
        let exit = e.label();
        ProgState {
            e,
            probe: probe.clone(),
            scratch_top: 0,
            this_offsets: HashMap::new(),
            exit,
            nr_slot: None,
        }
    }
}

/// Code generation for one program (one probe), with the program-wide state at hand.
pub(crate) struct Gen<'c, 'a> {
    c: &'c mut Compiler<'a>,
    e: Emitter,
    regs: VRegs,
    probe: ProbeSite,
    /// Next free scratch byte after the record area.
    scratch_top: u32,
    /// Offsets of `this->` variables in this program's scratch.
    this_offsets: HashMap<String, u32>,
    clause: Option<ClauseState>,
    exit: Label,
    /// In a group program: where in scratch the system call number is.
    nr_slot: Option<u32>,
}

impl<'c, 'a> Gen<'c, 'a> {
    fn resume(c: &'c mut Compiler<'a>, p: ProgState) -> Gen<'c, 'a> {
        Gen {
            c,
            e: p.e,
            regs: VRegs::default(),
            probe: p.probe,
            scratch_top: p.scratch_top,
            this_offsets: p.this_offsets,
            clause: None,
            exit: p.exit,
            nr_slot: p.nr_slot,
        }
    }

    fn suspend(self) -> ProgState {
        ProgState {
            e: self.e,
            probe: self.probe,
            scratch_top: self.scratch_top,
            this_offsets: self.this_offsets,
            exit: self.exit,
            nr_slot: self.nr_slot,
        }
    }

    fn finish(mut self) -> Result<crate::emit::Code> {
        let exit = self.exit;
        self.e.bind(exit);
        let level_slot = level_slot(self.strsize());
        release_scratch(&mut self.e, level_slot);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.emit(Insn::exit());
        let top = self.scratch_top;
        if top > i16::MAX as u32 {
            return Err(CompileError::unplaced(
                "D_DIF_TOOBIG",
                format!(
                    "probe {} needs {top} bytes of scratch space; at most 32767 fit (fewer string temporaries or a smaller strsize)",
                    self.probe.full_name()
                ),
            ));
        }
        self.c.scratch_size = self.c.scratch_size.max(top);
        self.e
            .finish()
            .map_err(|msg| CompileError::unplaced("D_DIF_TOOBIG", msg))
    }

    /// Reserve `size` bytes of scratch, 8-aligned; returns their offset.
    fn scratch(&mut self, size: u32) -> u32 {
        let off = self.scratch_top;
        self.scratch_top += size.next_multiple_of(8);
        off
    }

    fn strsize(&self) -> u32 {
        self.c.opts.strsize
    }

    fn push(&mut self, span: Span) -> Result<VReg> {
        self.regs
            .push()
            .ok_or_else(|| CompileError::new("D_DIF_TOOBIG", "expression too complex", span))
    }

    fn pop(&mut self, v: VReg) {
        self.regs.pop(v);
    }

    fn clause_state(&mut self) -> &mut ClauseState {
        self.clause.as_mut().expect("inside a clause")
    }

    /// Compile one clause for this program's probe (for the system calls of `group`, in a
    /// group program).
    fn clause(
        &mut self,
        clause: &ast::Clause,
        epid: u32,
        group: Option<&ClauseGroup>,
    ) -> Result<()> {
        let end = self.e.label();
        self.clause = Some(ClauseState {
            epid,
            group_epids: group.map_or_else(Vec::new, |g| g.epids.clone()),
            epid_slot: None,
            end,
            record_len: RECORD_HEADER,
            conditional: 0,
            presence_bits: 0,
            action: 1,
            actions: Vec::new(),
        });
        if let Some(g) = group {
            // The clause's epid for this call, or the end of the clause.
            let len = self.group_table_len();
            self.by_syscall_nr(R1, len);
            self.e.ld_map_value(R2, self.c.core.rodata, g.table);
            self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R1));
            self.e.emit(Insn::ldx(Size::W, R0, R2, 0));
            self.e.jmp_imm(BPF_JEQ, R0, 0, end);
            let slot = self.scratch(8);
            self.e
                .emit(Insn::stx(Size::W, SCRATCH, self.small(slot), R0));
            self.clause_state().epid_slot = Some(slot);
        }
        // A proc/sched probe fires only where its filter holds.
        if let Some(v) = self.mapped_filter(clause.span)? {
            let r = regs::read(&mut self.e, v.reg, R1);
            self.pop(v.reg);
            self.e.jmp_imm(BPF_JEQ, r, 0, end);
        }
        if let Some(pred) = &clause.predicate {
            let v = self.expr(pred)?;
            if !v.ty.is_scalar() {
                return Err(CompileError::new(
                    "D_PRED_SCALAR",
                    "predicate result must be of scalar type",
                    pred.span,
                ));
            }
            let r = regs::read(&mut self.e, v.reg, R1);
            self.pop(v.reg);
            self.e.jmp_imm(BPF_JEQ, r, 0, end);
        }
        let records = self.c.enabled[epid as usize - 1].records;
        if records {
            self.load_epid(R0);
            self.e
                .emit(Insn::stx(Size::W, SCRATCH, record::EPID as i16, R0));
            self.e.emit(Insn::call(helpers::GET_SMP_PROCESSOR_ID));
            self.e
                .emit(Insn::stx(Size::W, SCRATCH, record::CPU as i16, R0));
            self.e
                .emit(Insn::st(Size::DW, SCRATCH, record::PRESENCE as i16, 0));
        }
        if let Some(body) = &clause.body {
            for stmt in body {
                self.stmt(stmt)?;
                self.clause_state().action += 1;
            }
        }
        if records {
            self.output_record()?;
        }
        self.e.bind(end);
        let state = self.clause.take().expect("inside a clause");
        for e in &state.group_epids {
            self.c.enabled[*e as usize - 1].actions = state.actions.clone();
        }
        self.c.enabled[epid as usize - 1].actions = state.actions;
        Ok(())
    }

    /// `dst` = the epid of the clause being compiled: a constant, or in a group program the
    /// one of the call that fired.
    pub(crate) fn load_epid(&mut self, dst: Reg) {
        let state = self.clause_state();
        match state.epid_slot {
            Some(slot) => {
                let off = self.small(slot);
                self.e.emit(Insn::ldx(Size::W, dst, SCRATCH, off));
            }
            None => {
                let epid = state.epid as i32;
                self.e.emit(Insn::mov64_imm(dst, epid));
            }
        }
    }

    /// The length of this group program's tables by system call number.
    fn group_table_len(&self) -> u32 {
        match &self.probe.context {
            ProbeContext::SyscallGroup(g) => g.table_len(),
            _ => 1,
        }
    }

    /// `dst` = 4 * the system call number of a group program (0 outside the tables, for the
    /// verifier: the number was checked in the prologue), an offset into a u32 table.
    fn by_syscall_nr(&mut self, dst: Reg, len: u32) {
        let slot = self.nr_slot.expect("a group program") as i16;
        self.e.emit(Insn::ldx(Size::DW, dst, SCRATCH, slot));
        let ok = self.e.label();
        self.e.jmp_imm(BPF_JLT, dst, len as i32, ok);
        self.e.emit(Insn::mov64_imm(dst, 0));
        self.e.bind(ok);
        self.e.emit(Insn::alu64_imm(BPF_LSH, dst, 2));
    }

    /// Send the clause's record to the ring buffer, counting a drop if it is full.
    fn output_record(&mut self) -> Result<()> {
        let len = self.clause_state().record_len;
        if len > record_limit(self.strsize()) {
            return Err(CompileError::unplaced(
                "D_DIF_TOOBIG",
                format!("clause records {len} bytes, more than the limit (raise strsize less)"),
            ));
        }
        self.e.ld_map(R1, self.c.core.ringbuf);
        self.e.emit(Insn::mov64_reg(R2, SCRATCH));
        self.e.emit(Insn::mov64_imm(R3, len as i32));
        self.e.emit(Insn::mov64_imm(R4, 0));
        self.e.emit(Insn::call(helpers::RINGBUF_OUTPUT));
        let ok = self.e.label();
        self.e.jmp_imm(BPF_JEQ, R0, 0, ok);
        self.count_drop(DropKind::Record);
        self.e.bind(ok);
        Ok(())
    }

    /// Increment this CPU's drop counter of `kind`.
    fn count_drop(&mut self, kind: DropKind) {
        count_drop(&mut self.e, &self.c.core, kind);
    }

    fn stmt(&mut self, stmt: &Stmt) -> Result<()> {
        match stmt {
            Stmt::Expr(e) => self.expr_stmt(e),
            Stmt::Block(stmts, _) => {
                for s in stmts {
                    self.stmt(s)?;
                }
                Ok(())
            }
            Stmt::If {
                cond,
                then,
                otherwise,
                ..
            } => {
                let v = self.expr(cond)?;
                let r = regs::read(&mut self.e, v.reg, R1);
                self.pop(v.reg);
                let else_label = self.e.label();
                let done = self.e.label();
                self.e.jmp_imm(BPF_JEQ, r, 0, else_label);
                self.clause_state().conditional += 1;
                for s in then {
                    self.stmt(s)?;
                }
                self.e.goto(done);
                self.e.bind(else_label);
                for s in otherwise.iter().flatten() {
                    self.stmt(s)?;
                }
                self.clause_state().conditional -= 1;
                self.e.bind(done);
                Ok(())
            }
            Stmt::Decl(d) => Err(CompileError::new(
                "D_DECL_LOCASC",
                "declarations are not permitted in a clause body",
                d.span,
            )),
        }
    }

    /// A statement: an action call, or an expression evaluated for its side effects.
    fn expr_stmt(&mut self, e: &ast::Expr) -> Result<()> {
        if let ast::ExprKind::Call {
            name,
            args,
            name_span,
        } = &e.kind
        {
            if let Some(done) = self.action(name, args, *name_span, e.span)? {
                return Ok(done);
            }
        }
        if let ast::ExprKind::Assign { op: None, lhs, rhs } = &e.kind {
            if let Some(agg) = aggregate::target(lhs) {
                return self.aggregate(agg, rhs, e.span);
            }
        }
        // `@a[1];` and `@a;` alone do nothing: DTrace refuses them.
        if let Some((name, _)) = aggregate::target(e) {
            if self.c.aggregations.iter().any(|a| a.name == name)
                || matches!(e.kind, ast::ExprKind::Index { .. })
            {
                return Err(CompileError::new(
                    "D_AGG_NULL",
                    format!("expression has null effect: @{name}"),
                    e.span,
                ));
            }
        }
        let v = self.expr(e)?;
        self.pop(v.reg);
        Ok(())
    }
}

//! Code generation: the typed IR to eBPF. One program per probe, holding the clauses
//! enabled on it in program order, each clause guarded by its predicate and ending in one
//! ring-buffer record.
//!
//! System call probes are the exception: a clause typed in a system call group context
//! (see `dtrace_typing::cook`) runs in one program per direction on the raw
//! `sys_enter`/`sys_exit` tracepoint ([`ProbeContext::SyscallGroup`]). Its prologue finds
//! the system call's number; each clause looks its epid up by that number in a table of its
//! own (0: not enabled on that call), and `probefunc` and `id` come from tables by number.
//! A probe standing for many functions (a `pid` glob or fbt functions on one multi link)
//! has an epid per function, consecutive: its clauses add the attach cookie (the function's
//! index) to the first, so each record names the function that fired.
//!
//! The submodules each own one part: [`expr`] operators and conversions, [`place`] loads,
//! stores and addresses of variables and memory, [`vars`] where variables live (maps,
//! scratch, read-only data) and keys, [`strings`] string values, [`strsubr`] and [`subr`]
//! subroutines, [`context`] built-in variables and probe arguments, [`actions`] actions and
//! the record they fill, [`aggregate`] aggregating functions, [`fault`] run-time faults,
//! [`support`] helper programs.
//!
//! Besides the probes' programs the output may hold helper programs
//! ([`Compiled::helpers`]): a script reading `vtimestamp` gets a `tp_btf` program on
//! `sched_switch` that records, per CPU, the thread going on CPU, when, and its exact
//! `se.sum_exec_runtime` then ([`VtimeSlot`]); scripts that don't read it get none.
//!
//! Scratch: the prologue claims one of this CPU's scratch areas for the firing and the exit
//! releases it. A program whose finished code names the scratch register nowhere else
//! (its keys in the stack frame, no record, string or temporary in scratch: the counting
//! one-liners) leaves the claim, the release and the stores only scratch's users read out
//! (`Gen::omit_unused_scratch`), so it never holds a level and never counts a nested
//! drop.
//!
//! Follow-fork (user probes with a [`UprobeContext::family`]): the compiled program gets the
//! [`Compiled::follow`] map, a `sched_process_fork` helper that puts children of its members
//! into their parent's family and a `sched_process_exit` helper that takes processes out
//! when their last thread exits; each such probe's prologue looks the current tgid up and
//! leaves unless it belongs to the probe's family.

mod actions;
mod aggregate;
mod aggspace;
mod arena;
mod cleanpath;
mod context;
mod dpath;
mod dynvars;
mod entry;
mod expr;
mod fault;
mod inet;
mod json;
mod keys;
mod place;
mod regs;
mod speculation;
mod strings;
mod strsubr;
mod strtok;
mod subr;
mod support;
mod tls;
mod vars;
mod wakeup;

use dtrace_abi::record;
use std::collections::HashMap;

use dtrace_ebpf::*;
use dtrace_frontend::{CompileError, Result, Span};
use dtrace_typing::ir::{self, BindId, VarId};

use crate::emit::{Emitter, Label};
use crate::program::*;
use crate::types::Type;
use regs::{VReg, VRegs, CLAIM_SLOT, CTX_SLOT, KEY_SLOT, NR_SLOT, SCRATCH};
use std::ops::Range;

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
    /// Unread bytes in the ring buffer past which a record wakes the consumer at once
    /// (`wakeup.rs`); below it, records wait for the consumer's next read.
    pub wakeup_at: u32,
    /// Maximum entries of each dynamic variable map.
    pub dynvar_entries: u32,
    /// Bytes of dynamic variable space (`dynvarsize`), shared by them all as DTrace
    /// counts them (`dynvars.rs`).
    pub dynvarsize: u64,
    /// The most keys of each aggregation's map.
    pub agg_entries: u32,
    /// Bytes of aggregation space (`aggsize`), shared by all aggregations as DTrace 2
    /// counts it (`aggspace.rs`).
    pub aggsize: u64,
    /// CLOCK_REALTIME minus CLOCK_MONOTONIC, for `walltimestamp`.
    pub wall_offset: u64,
    /// The `cpu` option: probes do nothing unless they fire on this CPU.
    pub cpu: Option<u32>,
    /// Speculations active at once (`nspec`; at most [`speculation::SEARCH_MAX`] are
    /// used).
    pub nspec: u32,
    /// Bytes a speculating clause may record (`specsize`).
    pub specsize: u64,
    /// The most frames `stackdepth` and `ustackdepth` count (`maxframes`).
    pub max_frames: u32,
    /// The most bytes one `alloca` or `copyin` takes (`scratchsize`): the buffer of a
    /// `copyin` whose size is computed at run time.
    pub scratchsize: u32,
}

impl Default for CodegenOptions {
    fn default() -> Self {
        CodegenOptions {
            strsize: 257,
            bufsize: 4 << 20,
            wakeup_at: 2 << 20,
            dynvar_entries: 16384,
            dynvarsize: 1 << 20,
            agg_entries: 16384,
            aggsize: 4 << 20,
            wall_offset: 0,
            cpu: None,
            nspec: 1,
            specsize: 4 << 20,
            max_frames: MAX_STACK_FRAMES,
            scratchsize: 256,
        }
    }
}

/// Everything the code generator needs.
pub struct Input<'a> {
    /// The typed program.
    pub program: &'a ir::Program,
    pub options: CodegenOptions,
    pub kernel: &'a dyn KernelLayout,
}

/// The ERROR probe's arguments (`arg0..arg5`), which a fault hands to the ERROR clauses.
const ERROR_ARGS: u32 = 6;

/// A clause in a group program: its epids, one per system call or per function, and
/// how the program finds the one that fired.
struct ClauseGroup {
    by: GroupBy,
    epids: Vec<u32>,
}

/// How a group program's clause finds its epid.
enum GroupBy {
    /// A table (u32 by system call number) at this offset of the read-only data.
    SyscallTable(u32),
    /// The attach cookie: the index of the function that fired in a probe standing for
    /// many (`pid$target::f*:entry` by one uprobe_multi link), whose epids are consecutive.
    Cookie,
}

/// The functions a probe stands for when one program and link serve them all, told apart
/// by attach cookie (see `context.rs`'s `function_by_cookie`); empty for other probes.
fn cookie_functions(site: &ProbeSite) -> &[String] {
    match &site.context {
        ProbeContext::Uprobe(u) if u.functions.len() > 1 => &u.functions,
        _ => &[],
    }
}

/// The enabled probe of function `i` of `site`, a probe standing for many functions
/// ([`cookie_functions`]): that function's name and id (the probe's own where it has no
/// ids), in a context of that function alone. The lists stay with the program's probe: a
/// copy of them in each function's made compiling a glob of `n` functions take `n * n`
/// copies.
fn one_function(site: &ProbeSite, i: usize) -> ProbeSite {
    let ProbeContext::Uprobe(u) = &site.context else {
        unreachable!("only a uprobe context stands for many functions");
    };
    ProbeSite {
        id: u.ids.get(i).copied().unwrap_or(site.id),
        provider: site.provider.clone(),
        module: site.module.clone(),
        function: u.functions[i].clone(),
        name: site.name.clone(),
        context: ProbeContext::Uprobe(dtrace_typing::probe::UprobeContext {
            kind: u.kind.clone(),
            functions: Vec::new(),
            ids: Vec::new(),
            family: u.family,
            kernel: u.kernel.get(i).cloned().into_iter().collect(),
            object: u.object.clone(),
        }),
    }
}

/// Generate the programs of a typed program.
pub fn compile(input: Input<'_>) -> Result<Compiled> {
    let prog = input.program;
    let mut c = Compiler::new(&input);
    c.declare_aggregations()?;
    let bodies = || prog.clauses.iter().flat_map(|cl| &cl.bodies);
    let follows = bodies()
        .flat_map(|b| &b.sites)
        .any(|s| matches!(&s.context, ProbeContext::Uprobe(u) if u.family.is_some()));
    if follows {
        c.follow_map()?;
    }
    // A group program per direction stands for every system call any clause groups.
    let mut group_calls: [Vec<(u32, u32, String)>; 2] = Default::default();
    for b in bodies() {
        if let ProbeContext::SyscallGroup(g) = &b.context.context {
            let calls = &mut group_calls[g.ret as usize];
            for call in &g.calls {
                if !calls.iter().any(|c| c.0 == call.0) {
                    calls.push(call.clone());
                }
            }
        }
    }
    // Epids in program order; ERROR's clauses run inside every program that faults (see
    // `fault`), not on their own.
    // A probe standing for many functions has an epid per function, consecutive, so its
    // records name the function that fired, with its id; the first stands for them all
    // here.
    let epids: Vec<Vec<u32>> = bodies()
        .map(|b| {
            b.sites
                .iter()
                .zip(&b.statements)
                .map(|(site, stmt)| match cookie_functions(site) {
                    [] => c.enable(site, b.records, *stmt),
                    functions => (0..functions.len())
                        .map(|i| c.enable(&one_function(site, i), b.records, *stmt))
                        .collect::<Vec<u32>>()[0],
                })
                .collect()
        })
        .collect();
    for (b, e) in bodies().zip(&epids) {
        if !b.sites.is_empty() && b.sites.iter().all(is_error_probe) {
            c.error_bodies.push((b.clone(), e[0]));
        }
    }
    let mut states: Vec<ProgState> = Vec::new();
    let mut index: HashMap<u32, usize> = HashMap::new();
    let mut group_index: [Option<usize>; 2] = [None, None];
    for (b, epids) in bodies().zip(&epids) {
        if b.sites.iter().all(is_error_probe) {
            continue;
        }
        if let ProbeContext::SyscallGroup(g) = &b.context.context {
            let ret = g.ret;
            let slot = *group_index[ret as usize].get_or_insert_with(|| {
                let mut calls = group_calls[ret as usize].clone();
                calls.sort();
                let site = ProbeSite {
                    context: ProbeContext::SyscallGroup(SyscallGroup { ret, calls }),
                    ..b.context.clone()
                };
                states.push(ProgState::new(&mut c, site));
                states.len() - 1
            });
            let ProbeContext::SyscallGroup(all) = &states[slot].probe.context else {
                unreachable!("a group program");
            };
            let mut table = vec![0u8; all.table_len() as usize * 4];
            for (site, epid) in b.sites.iter().zip(epids) {
                if let ProbeContext::Tracepoint(l) = &site.context {
                    let at = l.syscall_nr.expect("grouped calls have numbers") as usize * 4;
                    table[at..at + 4].copy_from_slice(&epid.to_le_bytes());
                }
            }
            let group = ClauseGroup {
                by: GroupBy::SyscallTable(c.rodata_bytes(&table)),
                epids: epids.clone(),
            };
            c.generate(&mut states[slot], b, epids[0], Some(&group))?;
            continue;
        }
        for (site, epid) in b.sites.iter().zip(epids) {
            let slot = *index.entry(site.id).or_insert_with(|| {
                states.push(ProgState::new(&mut c, site.clone()));
                states.len() - 1
            });
            let n = cookie_functions(site).len() as u32;
            let group = (n > 1).then(|| ClauseGroup {
                by: GroupBy::Cookie,
                epids: (*epid..*epid + n).collect(),
            });
            c.generate(&mut states[slot], b, *epid, group.as_ref())?;
        }
    }
    let mut programs = Vec::new();
    for state in states {
        programs.push(Gen::resume(&mut c, state).finish()?);
    }
    c.thread_exit_helper()?;
    Ok(c.into_compiled(programs))
}

/// Whether `site` is `dtrace:::END` or `dtrace:::ERROR`, which still run after `exit()`.
fn drains(site: &ProbeSite) -> bool {
    site.provider == "dtrace" && matches!(site.name.as_str(), "END" | "ERROR")
}

/// Whether `site` is `dtrace:::BEGIN`, `END` or `ERROR`: a probe the session fires itself,
/// BEGIN and END once each (ERROR's clauses run inside the programs that fault).
fn drains_or_begins(site: &ProbeSite) -> bool {
    drains(site) || is_begin_probe(site)
}

/// Whether `site` is `dtrace:::BEGIN`, which runs while the other probes are enabled.
fn is_begin_probe(site: &ProbeSite) -> bool {
    site.provider == "dtrace" && site.name == "BEGIN"
}

/// Whether `site` is `dtrace:::ERROR`.
fn is_error_probe(site: &ProbeSite) -> bool {
    site.provider == "dtrace" && site.name == "ERROR"
}

/// Program-wide state: maps, variables and aggregations shared by all programs.
pub(crate) struct Compiler<'a> {
    opts: CodegenOptions,
    kernel: &'a dyn KernelLayout,
    prog: &'a ir::Program,
    maps: Vec<MapSpec>,
    core: CoreMaps,
    rodata: vars::Rodata,
    vars: vars::Storage,
    aggregations: Vec<Aggregation>,
    enabled: Vec<EnabledProbe>,
    /// Largest scratch area any program needs.
    scratch_size: u32,
    /// The per-CPU [`VtimeSlot`] map, once a clause reads `vtimestamp`.
    vtime: Option<MapId>,
    helpers: Vec<HelperProgram>,
    /// The follow-fork map ([`Compiled::follow`]), when a probe follows a family.
    follow: Option<MapId>,
    /// The speculations map ([`Compiled::specs`]), once a clause uses speculations.
    specs: Option<MapId>,
    /// The map of saved entry states (see [`entry`]), once a clause reads or saves one.
    entry: Option<MapId>,
    /// Whether a destructive action was compiled ([`Compiled::destructive`]).
    destructive: bool,
    /// The largest record's data ([`Compiled::max_record_data`]), and an END clause's.
    max_record_data: u32,
    max_end_record_data: u32,
    /// The ring buffer bytes of every place a record is sent from
    /// ([`Compiled::one_shot_output`]).
    output_bytes: u64,
    /// The ERROR probe's clause bodies and their epids, compiled into programs that fault.
    error_bodies: Vec<(ir::Body, u32)>,
    /// The largest entries as DTrace counts them ([`Compiled::space`]).
    space: crate::space::Space,
    /// The dynamic variables the shared space holds, when fewer than one map does
    /// (`dynvars.rs`).
    dynvar_places: Option<u64>,
    /// How many keys the aggregations hold (`aggspace.rs`).
    agg_space: aggspace::AggSpace,
}

/// The most instructions the kernel loads in one program (`BPF_COMPLEXITY_LIMIT_INSNS`).
const MAX_PROGRAM_INSNS: usize = 1_000_000;

/// Size of the record area at the start of scratch: room for 16 strings, at most half of
/// what 16-bit scratch offsets reach, so that a large `strsize` (2k, 4k) leaves the other
/// half to string temporaries.
fn record_limit(strsize: u32) -> u32 {
    (16 * strsize).clamp(8192, 16384)
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
        let space = crate::space::needs(input.program, opts.strsize);
        let dynvar_places = space
            .entries(opts.dynvarsize, space.dynvar)
            .filter(|&places| places < u64::from(opts.dynvar_entries));
        let array = |name: &str, value_size: u32, entries_per_cpu: u32| MapSpec {
            name: name.into(),
            kind: MapKind::Array,
            key_size: 4,
            value_size,
            max_entries: 1,
            initial: None,
            entries_per_cpu,
            members: Vec::new(),
        };
        let core = CoreMaps {
            ringbuf: add(MapSpec {
                name: "dt_ringbuf".into(),
                kind: MapKind::Ringbuf,
                key_size: 0,
                value_size: 0,
                max_entries: opts.bufsize,
                initial: None,
                entries_per_cpu: 0,
                members: Vec::new(),
            }),
            drops: add(MapSpec {
                kind: MapKind::PercpuArray,
                ..array("dt_drops", DropKind::COUNT * 8, 0)
            }),
            scratch: add(array("dt_scratch", 0, SCRATCH_LEVELS)),
            claims: add(array("dt_claims", SCRATCH_LEVELS * 8, 1)),
            globals: add(array("dt_globals", 0, 0)),
            rodata: add(array("dt_rodata", 0, 0)),
        };
        let aggregations = input.program.aggregations.len();
        let agg_space = aggspace::AggSpace::new(&space, &opts, aggregations, add);
        Compiler {
            rodata: vars::Rodata::default(),
            vars: vars::Storage::new(input.program, opts.strsize, dynvar_places.is_some()),
            space,
            dynvar_places,
            agg_space,
            scratch_size: record_limit(opts.strsize),
            opts,
            kernel: input.kernel,
            prog: input.program,
            maps,
            core,
            aggregations: Vec::new(),
            enabled: Vec::new(),
            vtime: None,
            helpers: Vec::new(),
            follow: None,
            specs: None,
            entry: None,
            destructive: false,
            max_record_data: 0,
            max_end_record_data: 0,
            output_bytes: 0,
            error_bodies: Vec::new(),
        }
    }

    /// A new enabled probe (a clause on `site`, from DTrace's statement `statement`); its
    /// epid.
    fn enable(&mut self, site: &ProbeSite, records: bool, statement: u32) -> u32 {
        let epid = self.enabled.len() as u32 + 1;
        self.enabled.push(EnabledProbe {
            epid,
            probe: site.clone(),
            records,
            statement,
            actions: Vec::new(),
        });
        epid
    }

    /// Generate `body` into the program of `state` (for the calls of `group` in a group
    /// program).
    fn generate(
        &mut self,
        state: &mut ProgState,
        body: &ir::Body,
        epid: u32,
        group: Option<&ClauseGroup>,
    ) -> Result<()> {
        let placeholder = ProgState::placeholder(&state.probe);
        let taken = std::mem::replace(state, placeholder);
        let mut gen = Gen::resume(self, taken);
        let result = gen.clause(body, epid, group);
        *state = gen.suspend();
        result
    }

    /// The follow-fork map, created with its `sched_process_fork` and `sched_process_exit`
    /// helpers on first use.
    fn follow_map(&mut self) -> Result<MapId> {
        if let Some(map) = self.follow {
            return Ok(map);
        }
        let offset = |strukt: &str, member: &str| {
            self.kernel
                .member_offset(strukt, member)
                .and_then(|o| i16::try_from(o).ok())
                .ok_or_else(|| {
                    CompileError::unplaced(
                        "D_UNKNOWN",
                        format!("kernel type information lacks struct {strukt} member {member} (needed by followfork)"),
                    )
                })
        };
        let exit = support::ExitOffsets {
            tgid: offset("task_struct", "tgid")?,
            signal: offset("task_struct", "signal")?,
            live: offset("signal_struct", "live")?,
        };
        let tgid = exit.tgid;
        let map = self.add_map(MapSpec {
            name: "dt_follow".into(),
            kind: MapKind::Hash,
            key_size: 4,
            value_size: 4,
            max_entries: FOLLOW_MAX,
            initial: None,
            entries_per_cpu: 0,
            members: Vec::new(),
        });
        let finish = |e: Emitter| {
            e.finish()
                .map_err(|msg| CompileError::unplaced("D_DIF_TOOBIG", msg))
        };
        self.helpers.push(HelperProgram {
            kind: HelperKind::ProcessFork,
            code: finish(support::process_fork_helper(map, tgid))?,
        });
        self.helpers.push(HelperProgram {
            kind: HelperKind::ProcessExit,
            code: finish(support::process_exit_helper(map, exit))?,
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
            members: Vec::new(),
        });
        let code = support::sched_switch_helper(map, pid, sum)
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
        let one_shot = programs
            .iter()
            .all(|p| p.probe.provider == "dtrace" && drains_or_begins(&p.probe));
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
            specs: self.specs,
            agg_freed: self.agg_space.freed(),
            destructive: self.destructive,
            max_record_data: self.max_record_data,
            max_end_record_data: self.max_end_record_data,
            space: self.space,
            one_shot_output: one_shot.then_some(self.output_bytes),
        }
    }
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
    /// Where the clause's faults go (see `fault`), once one does.
    fault_tail: Option<Label>,
    /// In a clause that speculates: the record field (u64) holding the speculation id,
    /// 0 until `speculate()` ran.
    spec_field: Option<u32>,
    /// Where in the arena the clause's last `alloca()` ends (0 before the first).
    alloca_top: u32,
    /// In a clause reading `entry->`: where in scratch the entry's state was copied.
    entry_state: Option<u32>,
    /// The record offset of the user stack window, once a user stack placed it (0: no
    /// room for it).
    stack_window: Option<u32>,
    /// The clause's recorded `ustackdepth`, once one placed it.
    ustackdepth: Option<Field>,
}

/// The record header: `[epid u32][cpu u32][presence bits u64]`.
const RECORD_HEADER: u32 = record::HEADER_SIZE;

/// A program being generated, between the clauses compiled into it.
struct ProgState {
    e: Emitter,
    probe: ProbeSite,
    scratch_top: u32,
    allocations: Vec<(u32, u32)>,
    this_offsets: HashMap<VarId, u32>,
    exit: Label,
    /// In a group program: where in the frame the prologue stored the system call number.
    nr_slot: Option<i16>,
    /// Code that claims or releases scratch, or stores there what only scratch's other
    /// users read (a group clause's epid): left out when nothing else uses scratch.
    scratch_only: Vec<Range<usize>>,
    /// Whether the tracing state was checked and no clause ran since (the prologue's
    /// check stands for the first clause's).
    state_checked: bool,
    /// The ERROR function, once a fault calls it, and where ERROR's arguments go.
    error_label: Option<Label>,
    error_args: Option<u32>,
    /// Where `strtok`'s state is in scratch, when the program calls it (see `strtok`).
    strtok: Option<u32>,
    /// Where the firing's `timestamp` and then `vtimestamp` are kept (0 until read), when
    /// the program reads either.
    timestamp: Option<u32>,
    /// Where each clause's `alloca()` memory starts, afresh (see `alloca`).
    arena: Option<u32>,
    /// The program's substring search area and callback, once it searches.
    search: Option<strsubr::SearchArea>,
    /// The program's `json()` area and callback, once it calls `json()`.
    json: Option<json::JsonArea>,
    /// The `chill()` loop's callback, once the program chills.
    chill: Option<Label>,
    /// The most scratch the program's released temporaries took.
    scratch_peak: u32,
    /// The statements of each clause compiled so far, in the order of the code's spans.
    clauses: Vec<Vec<u32>>,
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
        let no_claim = e.len();
        e.emit(Insn::st(Size::DW, R10, CLAIM_SLOT, 0));
        let mut scratch_only = Vec::new();
        scratch_only.push(no_claim..e.len());
        // Nothing runs before every probe is enabled but BEGIN, and after exit() only END
        // and ERROR.
        let state_checked = !drains(&probe) && !is_begin_probe(&probe);
        if state_checked {
            e.ld_map_value(R2, c.core.globals, vars::STATE_OFFSET);
            e.emit(Insn::ldx(Size::DW, R2, R2, 0));
            e.jmp_imm(BPF_JNE, R2, TracingState::Active as i32, exit);
        }
        if let Some(cpu) = c.opts.cpu {
            e.emit(Insn::call(helpers::GET_SMP_PROCESSOR_ID));
            e.jmp_imm(BPF_JNE, R0, cpu as i32, exit);
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
        let claim = e.len();
        claim_scratch(&mut e, &c.core, level_slot, exit);
        scratch_only.push(claim..e.len());
        let mut scratch_top = level_slot as u32 + 8;
        let mut nr_slot = None;
        if let ProbeContext::SyscallGroup(g) = &probe.context {
            nr_slot = Some(NR_SLOT);
            Self::syscall_prologue(c, &mut e, g, exit);
        }
        let strtok = c.prog.strtok.then(|| {
            let slot = scratch_top;
            scratch_top += strtok::state_size(c.opts.strsize);
            strtok::init_state(&mut e, slot);
            slot
        });
        let timestamp = c.prog.timestamp.then(|| {
            let slot = scratch_top;
            scratch_top += 16;
            e.emit(Insn::st(Size::DW, SCRATCH, slot as i16, 0));
            e.emit(Insn::st(Size::DW, SCRATCH, slot as i16 + 8, 0));
            slot
        });
        let arena = (arena::arena_size(c) > 0).then(|| {
            let at = scratch_top;
            scratch_top += arena::arena_size(c);
            at
        });
        ProgState {
            e,
            probe,
            scratch_top,
            allocations: Vec::new(),
            this_offsets: HashMap::new(),
            exit,
            nr_slot,
            scratch_only,
            state_checked,
            error_label: None,
            error_args: None,
            strtok,
            timestamp,
            arena,
            search: None,
            json: None,
            chill: None,
            scratch_peak: 0,
            clauses: Vec::new(),
        }
    }

    /// A group program's prologue: leave unless this is a native x86_64 system call of the
    /// group's tables, then store its number at [`NR_SLOT`] of the frame.
    fn syscall_prologue(c: &Compiler<'_>, e: &mut Emitter, g: &SyscallGroup, exit: Label) {
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
            // Loaded through the task's BTF pointer: no helper copying it.
            e.emit(Insn::call(helpers::GET_CURRENT_TASK_BTF));
            e.emit(Insn::ldx(Size::W, R0, R0, off as i16));
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
        e.emit(Insn::stx(Size::DW, R10, NR_SLOT, R0));
    }

    /// An empty stand-in while the real state is lent to a [`Gen`].
    fn placeholder(probe: &ProbeSite) -> ProgState {
        let mut e = Emitter::new();
        let exit = e.label();
        ProgState {
            e,
            probe: probe.clone(),
            scratch_top: 0,
            allocations: Vec::new(),
            this_offsets: HashMap::new(),
            exit,
            nr_slot: None,
            scratch_only: Vec::new(),
            state_checked: false,
            error_label: None,
            error_args: None,
            strtok: None,
            timestamp: None,
            arena: None,
            search: None,
            json: None,
            chill: None,
            scratch_peak: 0,
            clauses: Vec::new(),
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
    /// The scratch memory `alloca` and `copyin` hand out (offset, size): the only
    /// memory a store through a pointer may write.
    allocations: Vec<(u32, u32)>,
    /// Offsets of `this->` variables in this program's scratch.
    this_offsets: HashMap<VarId, u32>,
    clause: Option<ClauseState>,
    exit: Label,
    /// In a group program: where in the frame the system call number is.
    nr_slot: Option<i16>,
    /// Code left out when nothing else uses scratch (see [`ProgState`]).
    scratch_only: Vec<Range<usize>>,
    /// Whether the tracing state was checked and no clause ran since.
    state_checked: bool,
    /// Values bound by `Let` (translators' inputs) and the registers holding them.
    binds: HashMap<BindId, VReg>,
    /// The ERROR function, once a fault calls it, and where ERROR's arguments go.
    error_label: Option<Label>,
    error_args: Option<u32>,
    /// Whether the ERROR clauses are being compiled (into the ERROR function).
    in_error_clauses: bool,
    /// Where `strtok`'s state is in scratch, when the program calls it.
    strtok: Option<u32>,
    /// Where the firing's `timestamp` and `vtimestamp` are kept, when the program reads
    /// either.
    timestamp: Option<u32>,
    /// Where each clause's `alloca()` memory starts.
    arena: Option<u32>,
    /// The program's substring search area and callback, once it searches.
    search: Option<strsubr::SearchArea>,
    /// The program's `json()` area and callback, once it calls `json()`.
    json: Option<json::JsonArea>,
    /// The `chill()` loop's callback, once the program chills.
    chill: Option<Label>,
    /// The most scratch the program's released temporaries took.
    scratch_peak: u32,
    /// The statements of each clause compiled so far (see [`ProgState`]).
    clauses: Vec<Vec<u32>>,
}

impl<'c, 'a> Gen<'c, 'a> {
    fn resume(c: &'c mut Compiler<'a>, p: ProgState) -> Gen<'c, 'a> {
        Gen {
            c,
            e: p.e,
            regs: VRegs::default(),
            probe: p.probe,
            scratch_top: p.scratch_top,
            allocations: p.allocations,
            this_offsets: p.this_offsets,
            clause: None,
            exit: p.exit,
            nr_slot: p.nr_slot,
            scratch_only: p.scratch_only,
            state_checked: p.state_checked,
            binds: HashMap::new(),
            error_label: p.error_label,
            error_args: p.error_args,
            in_error_clauses: false,
            strtok: p.strtok,
            timestamp: p.timestamp,
            arena: p.arena,
            search: p.search,
            json: p.json,
            chill: p.chill,
            scratch_peak: p.scratch_peak,
            clauses: p.clauses,
        }
    }

    fn suspend(self) -> ProgState {
        ProgState {
            e: self.e,
            probe: self.probe,
            scratch_top: self.scratch_top,
            allocations: self.allocations,
            this_offsets: self.this_offsets,
            exit: self.exit,
            nr_slot: self.nr_slot,
            scratch_only: self.scratch_only,
            state_checked: self.state_checked,
            error_label: self.error_label,
            error_args: self.error_args,
            strtok: self.strtok,
            timestamp: self.timestamp,
            arena: self.arena,
            search: self.search,
            json: self.json,
            chill: self.chill,
            scratch_peak: self.scratch_peak,
            clauses: self.clauses,
        }
    }

    fn finish(mut self) -> Result<ProgramSpec> {
        let exit = self.exit;
        self.e.bind(exit);
        let level_slot = level_slot(self.strsize());
        let release = self.e.len();
        release_scratch(&mut self.e, level_slot);
        self.scratch_only.push(release..self.e.len());
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.emit(Insn::exit());
        self.error_clauses()?;
        self.search_callback();
        self.chill_callback();
        self.json_callback();
        self.json_split_callback();
        self.omit_unused_scratch();
        let top = self.scratch_top.max(self.scratch_peak);
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
        let probe = self.probe.full_name();
        let code = self
            .e
            .finish()
            .map_err(|msg| CompileError::unplaced("D_DIF_TOOBIG", msg))?;
        if code.insns.len() > MAX_PROGRAM_INSNS {
            return Err(CompileError::unplaced(
                "D_DIF_TOOBIG",
                format!(
                    "probe {probe} needs a program of {} instructions; the kernel loads at most {MAX_PROGRAM_INSNS} (fewer or smaller clauses on it)",
                    code.insns.len()
                ),
            ));
        }
        let clauses = self
            .clauses
            .into_iter()
            .zip(&code.spans)
            .map(|(statements, insns)| ClauseCode {
                statements,
                insns: insns.clone(),
            })
            .collect();
        Ok(ProgramSpec {
            probe: self.probe,
            code,
            clauses,
        })
    }

    /// A program that uses no scratch (no record, string, key or temporary there) claims
    /// none: its claim, release and the stores only scratch's users would read are left
    /// out, so nested firings never find it holding a level.
    fn omit_unused_scratch(&mut self) {
        let ranges = std::mem::take(&mut self.scratch_only);
        let uses = |i: &Insn| i.dst() == SCRATCH || i.src() == SCRATCH;
        if !self.e.any_outside(&ranges, uses) {
            for r in ranges {
                self.e.omit(r);
            }
        }
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

    /// Compile one typed clause body into this program (for the system calls of `group`, in
    /// a group program).
    fn clause(&mut self, body: &ir::Body, epid: u32, group: Option<&ClauseGroup>) -> Result<()> {
        let start = self.e.label();
        self.e.bind(start);
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
            fault_tail: None,
            spec_field: None,
            alloca_top: 0,
            entry_state: None,
            stack_window: None,
            ustackdepth: None,
        });
        if !self.drains() && !std::mem::take(&mut self.state_checked) {
            // After exit(), this firing's later clauses do nothing either.
            self.e
                .ld_map_value(R2, self.c.core.globals, vars::STATE_OFFSET);
            self.e.emit(Insn::ldx(Size::DW, R2, R2, 0));
            self.e
                .jmp_imm(BPF_JEQ, R2, TracingState::Exited as i32, end);
        }
        if let Some(g) = group {
            match g.by {
                // The clause's epid for this call, or the end of the clause.
                GroupBy::SyscallTable(table) => {
                    let len = self.group_table_len();
                    self.by_syscall_nr(R1, len);
                    self.e.ld_map_value(R2, self.c.core.rodata, table);
                    self.e.emit(Insn::alu64_reg(BPF_ADD, R2, R1));
                    self.e.emit(Insn::ldx(Size::W, R0, R2, 0));
                    self.e.jmp_imm(BPF_JEQ, R0, 0, end);
                }
                // The first epid plus the index of the function that fired.
                GroupBy::Cookie => {
                    self.attach_cookie_below(g.epids.len());
                    self.e.emit(Insn::alu64_imm(BPF_ADD, R0, epid as i32));
                }
            }
            let slot = self.scratch(8);
            let at = self.e.len();
            self.e
                .emit(Insn::stx(Size::W, SCRATCH, self.small(slot), R0));
            self.scratch_only.push(at..at + 1);
            self.clause_state().epid_slot = Some(slot);
        }
        let mark = self.scratch_top;
        if let Some(frame) = &body.entry {
            // A clause reading entry-> runs only where its entry saved its state.
            let state = self.find_entry(frame, end)?;
            self.clause_state().entry_state = Some(state);
        }
        // A proc/sched probe fires only where its filter holds; then the predicate.
        for test in body.filter.iter().chain(&body.predicate) {
            let v = self.expr(test)?;
            let r = self.truth(&v, R1);
            self.pop(v.reg);
            self.e.jmp_imm(BPF_JEQ, r, 0, end);
        }
        if body.records {
            self.load_epid(R0);
            self.e
                .emit(Insn::stx(Size::W, SCRATCH, record::EPID as i16, R0));
            self.e.emit(Insn::call(helpers::GET_SMP_PROCESSOR_ID));
            self.e
                .emit(Insn::stx(Size::W, SCRATCH, record::CPU as i16, R0));
            self.e
                .emit(Insn::st(Size::DW, SCRATCH, record::PRESENCE as i16, 0));
            if speculation::speculates(&body.stmts) {
                let field = self.clause_state().record_len;
                self.clause_state().record_len += record::SPEC_ID_SIZE;
                self.clause_state().spec_field = Some(field);
                self.e
                    .emit(Insn::st(Size::DW, SCRATCH, self.small(field), 0));
            }
        }
        for stmt in &body.stmts {
            self.stmt(stmt)?;
            self.clause_state().action += 1;
        }
        if body.records {
            self.output_record()?;
        }
        self.fault_tail();
        self.e.bind(end);
        if body.entry.is_some() {
            self.release_scratch(mark);
        }
        let done = self.e.label();
        self.e.bind(done);
        self.e.span(start, done);
        let state = self.clause.take().expect("inside a clause");
        let mut statements: Vec<u32> = Vec::new();
        for e in std::iter::once(&epid).chain(&state.group_epids) {
            let statement = self.c.enabled[*e as usize - 1].statement;
            if !statements.contains(&statement) {
                statements.push(statement);
            }
        }
        self.clauses.push(statements);
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
        let slot = self.nr_slot.expect("a group program");
        self.e.emit(Insn::ldx(Size::DW, dst, R10, slot));
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
        self.c.max_record_data = self.c.max_record_data.max(len - RECORD_HEADER);
        if self.probe.provider == "dtrace" && self.probe.name == "END" {
            self.c.max_end_record_data = self.c.max_end_record_data.max(len - RECORD_HEADER);
        }
        match self.clause_state().spec_field {
            Some(field) => self.output_speculative(len, field),
            None => self.output_counted(len),
        }
        Ok(())
    }

    /// Send the record (`len` bytes), counting a drop if the ring buffer is full.
    fn output_counted(&mut self, len: u32) {
        self.ringbuf_output(len);
        let ok = self.e.label();
        self.e.jmp_imm(BPF_JEQ, R0, 0, ok);
        self.count_drop(DropKind::Record);
        self.e.bind(ok);
    }

    /// `r0` = `bpf_ringbuf_output` of the first `len` bytes of scratch (the record), waking
    /// the consumer only when `wakeup.rs` says so.
    fn ringbuf_output(&mut self, len: u32) {
        // The ring buffer takes a record as an 8-byte header and the data, 8-byte aligned.
        self.c.output_bytes += u64::from(len.next_multiple_of(8) + 8);
        self.output_flags();
        self.e.ld_map(R1, self.c.core.ringbuf);
        self.e.emit(Insn::mov64_reg(R2, SCRATCH));
        self.e.emit(Insn::mov64_imm(R3, len as i32));
        self.e.emit(Insn::call(helpers::RINGBUF_OUTPUT));
    }

    /// Whether this program's probe is END or ERROR, which still run after `exit()`.
    fn drains(&self) -> bool {
        drains(&self.probe)
    }

    /// Increment this CPU's drop counter of `kind`.
    fn count_drop(&mut self, kind: DropKind) {
        count_drop(&mut self.e, &self.c.core, kind);
    }

    fn stmt(&mut self, stmt: &ir::Stmt) -> Result<()> {
        match stmt {
            ir::Stmt::Eval(e) => {
                let v = self.expr(e)?;
                self.pop(v.reg);
                Ok(())
            }
            ir::Stmt::Block(stmts) => stmts.iter().try_for_each(|s| self.stmt(s)),
            ir::Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let v = self.expr(cond)?;
                let r = self.truth(&v, R1);
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
                for s in otherwise {
                    self.stmt(s)?;
                }
                self.clause_state().conditional -= 1;
                self.e.bind(done);
                Ok(())
            }
            ir::Stmt::Action(a) => self.action(a),
            ir::Stmt::SaveEntry { frame, values } => self.save_entry(frame, values),
        }
    }
}

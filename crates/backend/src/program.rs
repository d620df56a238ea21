//! What the back end produces: maps to create, programs to load and attach, and the
//! descriptions the consumer needs to decode records and aggregations.
//!
//! The record layout (header, fault records, drop counters, data kinds) is the ABI crate's
//! (`dtrace_abi`); the definitions code generation uses are re-exported here. Code
//! generation describes each action's data with D [`Type`]s ([`Field`]); `describe.rs`
//! turns that into the consumer's [`ProgramDesc`] in one place.
//!
//! The epid names one clause on one probe, also for a [`SyscallGroup`] program, where one
//! program stands for many system calls: it looks the epid up by system call number at run
//! time, and its records and fault records carry that one.

use crate::emit::Code;
use crate::types::Type;
pub use dtrace_abi::datum::{Datum, JSTACK_FRAMES, MAX_STACK_FRAMES, STACK_FRAMES, USTACK_FRAMES};
pub use dtrace_abi::desc::ProgramDesc;
pub use dtrace_abi::record::{DropKind, Fault, FAULT_EPID, SCRATCH_LEVELS};
use dtrace_abi::slots::AggFunc;
pub use dtrace_typing::probe::*;

/// Index of a map in [`Compiled::maps`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MapId(pub usize);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapKind {
    Hash,
    /// A hash that evicts its least recently used entries when full.
    LruHash,
    Array,
    PercpuHash,
    PercpuArray,
    Ringbuf,
    /// An array of maps: element `i` is [`MapSpec::members`]`[i]` (all shaped alike).
    ArrayOfMaps,
    /// Task local storage: one value per thread, found through the thread, freed by the
    /// kernel when it exits (`max_entries` 0).
    TaskStorage,
}

#[derive(Clone, Debug)]
pub struct MapSpec {
    pub name: String,
    pub kind: MapKind,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    /// Contents of element 0 to write before loading (read-only data).
    pub initial: Option<Vec<u8>>,
    /// When not 0, the map has this many entries per possible CPU instead of
    /// `max_entries` (the scratch areas and their claim words).
    pub entries_per_cpu: u32,
    /// For [`MapKind::ArrayOfMaps`]: the maps it holds, by index (created before it).
    pub members: Vec<MapId>,
}

/// One loadable program: the clauses of one probe, in program order.
#[derive(Clone, Debug)]
pub struct ProgramSpec {
    pub probe: ProbeSite,
    pub code: Code,
    /// Where each clause compiled into the program is, in program order.
    pub clauses: Vec<ClauseCode>,
}

/// One clause's code inside a program: from its state check or predicate to its end,
/// without the probe's prologue and the program's exit, which every clause shares.
#[derive(Clone, Debug, PartialEq)]
pub struct ClauseCode {
    /// The DTrace statements the code stands for (`dt_clause_N`: the clause with one of
    /// its probe descriptions); several in a system call group program.
    pub statements: Vec<u32>,
    /// The instructions of [`ProgramSpec::code`] it occupies.
    pub insns: std::ops::Range<usize>,
}

/// How one recorded value is laid out and typed.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub offset: u32,
    pub ty: Type,
    /// What the consumer decodes instead of a value of `ty`: a recorded `ustackdepth`
    /// ([`Datum::UStackDepth`]), whose frames it counts.
    pub datum: Option<Datum>,
}

/// An action the consumer carries out when it reads a record.
#[derive(Clone, Debug, PartialEq)]
pub enum ActionKind {
    Trace(Field),
    /// `tracemem()`: `size` bytes at `offset`, after an 8-byte count when `dynamic`.
    Memory {
        offset: u32,
        size: u32,
        dynamic: bool,
    },
    /// `print()`: the address at `offset`, then `size` bytes of the object, shown as
    /// `layout` says.
    Print {
        offset: u32,
        size: u32,
        layout: dtrace_abi::datum::ValueType,
    },
    Printf {
        format: Vec<u8>,
        args: Vec<Field>,
    },
    /// `printa([format,] @a, ...)`: aggregation indices into [`Compiled::aggregations`].
    Printa {
        format: Option<Vec<u8>>,
        aggregations: Vec<usize>,
    },
    /// `exit(status)`: status is an int at `offset`.
    Exit(Field),
    Clear(usize),
    /// `trunc(@a)` (`count` None) or `trunc(@a, n)`.
    Trunc {
        aggregation: usize,
        count: Option<Field>,
    },
    Normalize {
        aggregation: usize,
        factor: Field,
    },
    Denormalize(usize),
    Setopt {
        option: SetoptArg,
        value: Option<SetoptArg>,
    },
    /// `system()` and `freopen()`: a format and its arguments, as `printf()`.
    System {
        format: Vec<u8>,
        args: Vec<Field>,
    },
    Freopen {
        format: Vec<u8>,
        args: Vec<Field>,
    },
    Ftruncate,
    /// `speculate(id)`, `commit(id)`, `discard(id)`: the id is an integer field.
    Speculate(Field),
    Commit(Field),
    Discard(Field),
    /// A datum the consumer symbolizes: `stack()`, `ustack()`, or `trace()` of `func()`,
    /// `sym()`, `mod()`, `ufunc()`, `usym()`, `umod()`, `uaddr()`; laid out at `offset` as
    /// [`Datum`] says.
    Datum {
        offset: u32,
        datum: Datum,
    },
}

/// An argument of `setopt()`: a string constant, or a string recorded at run time.
#[derive(Clone, Debug, PartialEq)]
pub enum SetoptArg {
    Text(String),
    Recorded(Field),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub kind: ActionKind,
    /// The bit of the record's presence word that says the action ran, for actions under a
    /// condition.
    pub presence: Option<u32>,
}

/// An enabled probe (a clause on one probe): what its records contain.
#[derive(Clone, Debug, PartialEq)]
pub struct EnabledProbe {
    pub epid: u32,
    pub probe: ProbeSite,
    /// Whether the clause writes a record at all (clauses of only aggregations write none).
    pub records: bool,
    /// DTrace's statement number of the clause (`dt_clause_N` in error messages): clauses
    /// numbered in program order, one per probe description.
    pub statement: u32,
    pub actions: Vec<Action>,
}

/// An aggregation: a per-CPU hash map from the key tuple to u64 slots.
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregation {
    /// Name without `@` (empty for `@`).
    pub name: String,
    pub kind: AggFunc,
    /// Key tuple fields, offsets within the map key.
    pub keys: Vec<Field>,
    /// Per key: how it is stored there.
    pub stores: Vec<KeyStore>,
    pub key_size: u32,
    pub slots: usize,
    pub map: MapId,
    /// When the program has more aggregations than a program may name maps: the array of
    /// maps holding [`Aggregation::map`], and its index there. Code reaches the map
    /// through the array, so each program names one map per array instead of one per
    /// aggregation.
    pub shared: Option<(MapId, u32)>,
}

/// How one key of an aggregation or associative array is stored in the map's key.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyStore {
    /// As its type says: a scalar in a u64 slot, a struct or array its bytes.
    Value,
    /// A string in a slot of this many bytes (NUL included): the longest string any use of
    /// the key stores.
    String(u32),
    /// A probe name (`probefunc`...) as its number in these names, in a u64 slot; shared,
    /// as a glob's clause is generated once per probe.
    Name(std::sync::Arc<NameTable>),
    /// A stack or symbol (the field's type is then meaningless).
    Datum(Datum),
}

/// The probe names a key keeps by number, and each name's number.
#[derive(Debug, PartialEq)]
pub struct NameTable {
    names: Vec<String>,
    numbers: std::collections::HashMap<String, u64>,
}

impl NameTable {
    /// The table of `names`, numbered in that order (the first of equal names counts).
    pub fn new(names: Vec<String>) -> NameTable {
        let mut numbers = std::collections::HashMap::new();
        for (i, n) in names.iter().enumerate() {
            numbers.entry(n.clone()).or_insert(i as u64);
        }
        NameTable { names, numbers }
    }

    /// The names, in order of their numbers.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// The number of `name`, if it is in the table.
    pub fn number(&self, name: &str) -> Option<u64> {
        self.numbers.get(name).copied()
    }
}

/// The maps' fixed roles.
#[derive(Clone, Copy, Debug)]
pub struct CoreMaps {
    pub ringbuf: MapId,
    /// Per-CPU `[u64; DropKind::COUNT]`, indexed by [`DropKind`].
    pub drops: MapId,
    /// `SCRATCH_LEVELS` areas per CPU: the area of level `l` on CPU `c` is element
    /// `c * SCRATCH_LEVELS + l`.
    pub scratch: MapId,
    /// Per CPU (element = CPU number), `SCRATCH_LEVELS` u64 claim words: non-zero while a
    /// firing holds that level's scratch.
    pub claims: MapId,
    pub globals: MapId,
    pub rodata: MapId,
}

/// Offset in the [`CoreMaps::globals`] map's value of the tracing state word, one of
/// [`TracingState`].
pub const STATE_OFFSET: u32 = 0;

/// Offset in the [`CoreMaps::globals`] map's value of the count of dynamic variables that
/// exist, kept when `dynvarsize` binds (`codegen/dynvars.rs`).
pub const DYNVARS_OFFSET: u32 = 8;

/// Offset in the [`CoreMaps::globals`] map's value of the count of aggregation keys made,
/// kept when aggregations share the `aggsize` space (`codegen/aggspace.rs`).
pub const AGGKEYS_OFFSET: u32 = 16;

/// The tracing state word's values. As in DTrace, no clause runs until every probe is
/// enabled (BEGIN runs first, while the session enables the rest), and once `exit()` ran
/// only END and ERROR clauses do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TracingState {
    /// Every probe is enabled: clauses run (the map's initial zero).
    Active = 0,
    /// `exit()` ran: DTrace's draining state.
    Exited = 1,
    /// The session is still enabling probes: only BEGIN runs.
    Enabling = 2,
}

/// The whole compiled D program.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub maps: Vec<MapSpec>,
    pub core: CoreMaps,
    pub programs: Vec<ProgramSpec>,
    pub enabled: Vec<EnabledProbe>,
    pub aggregations: Vec<Aggregation>,
    /// What the consumer decodes records and aggregations with: [`Compiled::enabled`] and
    /// [`Compiled::aggregations`] described in the record ABI's terms.
    pub desc: ProgramDesc,
    /// Options set by `#pragma D option` or `-x`, in order.
    pub options: Vec<(String, Option<String>)>,
    /// Programs the probes' code relies on, attached before BEGIN fires and before any
    /// traced command starts, detached when the session ends. Empty unless a feature
    /// needs one (`vtimestamp`, follow-fork).
    pub helpers: Vec<HelperProgram>,
    /// Follow-fork: the hash map from a traced process id (tgid, u32) to the pid of the
    /// `-c`/`-p` process whose family it belongs to (u32), read by the prologue of probes
    /// with a [`UprobeContext::family`]. The session seeds it with the targets (and the
    /// descendants a `-p` process already has); the [`HelperKind::ProcessFork`] helper adds
    /// children of members and [`HelperKind::ProcessExit`] removes processes that exit.
    pub follow: Option<MapId>,
    /// Speculations, once the program uses them: the hash map from an active
    /// speculation's id (u32) to its [`SpecState`]. The consumer's side deletes an entry
    /// (freeing the id) once the speculation was committed or discarded and every record
    /// written to it was read.
    pub specs: Option<MapId>,
    /// When aggregations share the `aggsize` space (a program of more than one): the array
    /// map of one `u64` counting the keys the consumer deleted (`trunc()`), each giving its
    /// place back (`codegen/aggspace.rs`). Only the consumer writes it, one more per key.
    pub agg_freed: Option<MapId>,
    /// The largest data a clause's record holds, in bytes after the record's header (what
    /// `bufsize` counts: the trace buffer must hold it).
    pub max_record_data: u32,
    /// The largest dynamic variable and aggregation entries, as DTrace counts them
    /// against `dynvarsize` and `aggsize`.
    pub space: crate::space::Space,
    /// The largest data an END clause's record holds (with `bufpolicy=fill`, the buffer
    /// keeps room for it).
    pub max_end_record_data: u32,
    /// When every program is one the session fires itself (`dtrace:::BEGIN`, `END`,
    /// `ERROR`: each runs at most once, ERROR's clauses inside them), the most bytes the
    /// programs can put in the ring buffer in a whole session: no record is sent from a
    /// loop, so each place that sends one does so at most once per run. `None` when a
    /// probe can fire any number of times.
    pub one_shot_output: Option<u64>,
    /// Whether a clause has a destructive action (`system`, `raise`, `stop`, `freopen`):
    /// the program runs only with the `destructive` option (`-w`).
    pub destructive: bool,
}

/// An active speculation in the [`Compiled::specs`] map: `[draining u64][written u64]`.
/// `draining` is set by `commit()`/`discard()`; `written` counts the records sent to the
/// speculation.
pub struct SpecState;

impl SpecState {
    pub const DRAINING: i16 = 0;
    pub const WRITTEN: i16 = 8;
    pub const SIZE: u32 = 16;
}

/// Most processes the follow-fork map holds at once; children forked while it is full are
/// not traced.
pub const FOLLOW_MAX: u32 = 1 << 16;

/// A program that no clause is enabled on but that keeps state the probes' programs read.
#[derive(Clone, Debug)]
pub struct HelperProgram {
    pub kind: HelperKind,
    pub code: Code,
}

/// What a [`HelperProgram`] is attached to, and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HelperKind {
    /// A BTF-typed raw tracepoint (`tp_btf`) on `sched_switch` keeping, per CPU, the thread
    /// that went on CPU last, when (`bpf_ktime_get_ns`), and its `se.sum_exec_runtime`
    /// then, for `vtimestamp`: see [`VtimeSlot`].
    SchedSwitch,
    /// A `tp_btf` program on `sched_process_fork` (`[parent, child]`): a child of a process
    /// in the [`Compiled::follow`] map joins its parent's family (threads are clones in the
    /// same tgid, already there).
    ProcessFork,
    /// A `tp_btf` program on `sched_process_exit` (`[task]`, `[task, group_dead]` after 6.12): when the last
    /// thread of a process exits, its tgid leaves the [`Compiled::follow`] map, so a reused
    /// pid is not traced.
    ProcessExit,
    /// A `tp_btf` program on `sched_process_exit`: the exiting thread's non-zero
    /// thread-local variables give their places in the dynamic variable space back (the
    /// kernel frees their storage without telling anyone), when `dynvarsize` binds
    /// (`codegen/tls.rs`).
    ThreadExit,
}

impl HelperKind {
    /// The kernel tracepoint the helper hangs off.
    pub fn tracepoint(&self) -> &'static str {
        match self {
            HelperKind::SchedSwitch => "sched_switch",
            HelperKind::ProcessFork => "sched_process_fork",
            HelperKind::ProcessExit | HelperKind::ThreadExit => "sched_process_exit",
        }
    }

    /// The feature the helper serves, for messages.
    pub fn purpose(&self) -> &'static str {
        match self {
            HelperKind::SchedSwitch => "vtimestamp",
            HelperKind::ProcessFork | HelperKind::ProcessExit => "follow-fork",
            HelperKind::ThreadExit => "thread-local variables",
        }
    }
}

/// Layout of the per-CPU value (a one-element per-CPU array, `dt_vtime`) the
/// [`HelperKind::SchedSwitch`] helper writes at every context switch and `vtimestamp`
/// reads: the running thread's on-CPU time is `sum + (now - since)` while `tid` is the
/// current thread.
///
/// `se.sum_exec_runtime` of a thread going on CPU is exact (the scheduler brought it up to
/// date when the thread last went off CPU and it has not run since), unlike the value read
/// while it runs, which the scheduler updates only at ticks and switches.
pub struct VtimeSlot;

impl VtimeSlot {
    /// u32: the thread id (global `task_struct.pid`) that went on CPU.
    pub const TID: i16 = 0;
    /// u64: `bpf_ktime_get_ns()` when it went on CPU (0: nothing recorded yet).
    pub const SINCE: i16 = 8;
    /// u64: its `se.sum_exec_runtime` then.
    pub const SUM: i16 = 16;
    pub const SIZE: u32 = 24;
}

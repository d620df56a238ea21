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
use crate::slots::AggFunc;
use crate::types::Type;
pub use dtrace_abi::datum::Datum;
pub use dtrace_abi::desc::ProgramDesc;
pub use dtrace_abi::record::{DropKind, Fault, FAULT_EPID, SCRATCH_LEVELS};

/// Index of a map in [`Compiled::maps`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MapId(pub usize);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapKind {
    Hash,
    Array,
    PercpuHash,
    PercpuArray,
    Ringbuf,
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
}

/// How a probe's context looks to its program; decides the program type and argument access.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProbeContext {
    /// Context is an array of u64 arguments: BEGIN/END/ERROR (run by the consumer) and raw
    /// tracepoints.
    ArgArray,
    /// A perf event (profile/tick): `arg0` is the kernel PC, `arg1` the user PC.
    PerfEvent,
    /// A tracepoint program (`BPF_PROG_TYPE_TRACEPOINT`): the context is the event's record,
    /// laid out as its tracefs `format` file says.
    Tracepoint(TracepointLayout),
    /// A kernel function's entry or return (fentry/fexit): the context is an array of `nargs`
    /// u64 arguments, followed at return by the return value.
    Function {
        /// BTF id of the function (`BTF_KIND_FUNC`).
        btf_id: u32,
        nargs: u32,
        ret: bool,
    },
    /// A BTF-typed raw tracepoint (`tp_btf`, the `rawtp` provider): a tracing program
    /// attached to the kernel tracepoint [`BtfTracepoint::name`]; the context is an array of
    /// u64 arguments typed by the tracepoint's prototype in BTF.
    BtfTracepoint(BtfTracepoint),
    /// A user-level probe (uprobe or uretprobe, a `BPF_PROG_TYPE_KPROBE` program attached
    /// with a uprobe_multi link): the context is the process's `struct pt_regs`.
    Uprobe(UprobeContext),
    /// Many system calls' entry (or return) in one raw tracepoint program on `sys_enter`
    /// (`sys_exit`): the context is `[struct pt_regs *, syscall nr]` at entry and
    /// `[struct pt_regs *, return value]` at return.
    SyscallGroup(SyscallGroup),
    /// A probe defined over another (the `proc` and `sched` providers): it fires where
    /// [`MappedProbe::base`] fires, when [`MappedProbe::filter`] holds, and its `args[]`
    /// are D expressions over the base probe's arguments.
    Mapped(MappedProbe),
}

/// A probe of a provider defined over a kernel probe, as DTrace's providers map their
/// arguments: each `args[N]` is a D expression evaluated as if in a clause of the base
/// probe (so `args[1]` in it is the base's `args[1]`), typically `xlate <psinfo_t *>
/// (args[1])` with a translator from the D library.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedProbe {
    /// The context of the probe it fires on (a [`ProbeContext::BtfTracepoint`], or
    /// [`ProbeContext::PerfEvent`] for a timer): decides the program type and attach.
    pub base: Box<ProbeContext>,
    /// A D expression over the base probe: the probe fires only when it is true (`None`:
    /// always).
    pub filter: Option<String>,
    /// `args[0]`, `args[1]`, ...
    pub args: Vec<MappedArg>,
}

/// One argument of a [`MappedProbe`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedArg {
    /// Its D type, as `dtrace -lv` shows it (`psinfo_t *`, `int`).
    pub ty: String,
    /// The D expression giving it, over the base probe's `args[]` (for a translated
    /// argument `xlate <T *> (e)`, whose `argN` is then `e`, the native value, as DTrace's).
    pub expr: String,
}

/// A raw tracepoint as BTF describes it: `typedef void (*btf_trace_NAME)(void *, ARGS...)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BtfTracepoint {
    /// The tracepoint (`sched_switch`).
    pub name: String,
    /// BTF id of the `btf_trace_NAME` typedef: the program's attach target.
    pub btf_id: u32,
    /// BTF type ids of the arguments after the leading `void *`: D's `args[N]` has the
    /// kernel type `args[N]` names (through `types::kernel::from_btf`), `argN` is its
    /// 64-bit value.
    pub args: Vec<u32>,
}

/// The system calls a [`ProbeContext::SyscallGroup`] program stands for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyscallGroup {
    /// Return (`sys_exit`) rather than entry (`sys_enter`).
    pub ret: bool,
    /// Every probe of the group: `(syscall number, probe id, function name)`.
    pub calls: Vec<(u32, u32, String)>,
}

impl SyscallGroup {
    /// One more than the highest system call number of the group: the length of the
    /// tables indexed by number.
    pub fn table_len(&self) -> u32 {
        self.calls.iter().map(|c| c.0 + 1).max().unwrap_or(1)
    }
}

/// How a user-level probe's arguments and function name are found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UprobeContext {
    pub kind: UprobeKind,
    /// Function names by attach cookie, when one probe stands for many functions (a `pid`
    /// glob attached with one uprobe_multi link): `probefunc` is read from this table at run
    /// time. Empty when [`ProbeSite::function`] is the function.
    pub functions: Vec<String>,
    /// Follow-fork (`-x followfork`): the probe is attached by binary, system-wide, and its
    /// program leaves at once unless the current process is in this pid's family in the
    /// [`Compiled::follow`] map (the pid itself and every process it forked, at any depth).
    /// `None`: no such test (the kernel filters by pid, or the probe is system-wide).
    pub family: Option<u32>,
}

/// What a user-level probe is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UprobeKind {
    /// A USDT probe: `arg0..argN` from the sites' operand specs. One spec list per distinct
    /// spec among the probe's sites; a site's attach cookie is the index of its list (a
    /// single list needs no cookie).
    Usdt(Vec<Vec<UsdtOperand>>),
    /// `pid` function entry (or an instruction offset): `arg0..arg5` are the x86_64
    /// calling-convention registers (`rdi rsi rdx rcx r8 r9`).
    Entry,
    /// `pid` function return: `arg0` is the return offset (not known under uretprobes: 0)
    /// and `arg1` the return value (`rax`).
    Return,
}

/// One USDT argument as the program reads it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsdtOperand {
    /// 1, 2, 4 or 8 bytes.
    pub size: u8,
    pub signed: bool,
    pub location: OperandLocation,
}

/// The D type of USDT argument `i` (`args[i]`): the integer type of the operands' size and
/// signedness (`int32_t`), when every site that has the argument agrees; else `int64_t`.
pub fn usdt_arg_type(specs: &[Vec<UsdtOperand>], i: usize) -> Type {
    let mut sizes = specs
        .iter()
        .filter_map(|s| s.get(i))
        .map(|o| (o.size, o.signed));
    match sizes.next() {
        Some(first) if sizes.all(|o| o == first) => {
            crate::types::sized_int(first.0 as u32, first.1)
        }
        _ => crate::types::sized_int(8, true),
    }
}

/// Where a USDT argument is (register operands by their `struct pt_regs` offset).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OperandLocation {
    /// A register (`high_byte`: bits 8-15, for `%ah`...).
    Register { offset: i16, high_byte: bool },
    /// User memory at `base + index * scale + displacement`.
    Memory {
        base: Option<i16>,
        index: Option<i16>,
        scale: u8,
        displacement: i64,
    },
    /// A constant.
    Immediate(i64),
    /// User memory at the run-time probe address plus `delta` (rip-relative operands: the
    /// link-time address of the data minus that of the probe site).
    PcRelative { delta: i64 },
    /// An operand that could not be decoded: reads as 0.
    Unknown,
}

/// Where a tracepoint probe's arguments are in its record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TracepointLayout {
    /// `args[0]`, `args[1]`, ... in order (also `arg0`, `arg1`, ... for scalar fields).
    pub args: Vec<TracepointField>,
    /// A system call's return: `errno` is `-args[0]` when `args[0]` is negative.
    pub syscall_return: bool,
    /// A system call's x86_64 number, when known: lets many system call probes share one
    /// [`ProbeContext::SyscallGroup`] program.
    pub syscall_nr: Option<u32>,
}

/// One field of a tracepoint record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracepointField {
    pub name: String,
    /// The C type as the format file spells it (`const char *`, `char[16]`).
    pub ctype: String,
    pub offset: u32,
    pub size: u32,
    pub signed: bool,
    pub kind: FieldKind,
}

/// How a tracepoint field is read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// An integer of `ty` stored in `size` bytes (system call arguments are 8 bytes whatever
    /// their C type).
    Int(Type),
    /// A pointer: a 64-bit address (`uintptr_t`), for `copyin`/`copyinstr`.
    Pointer,
    /// `char name[N]`: a string of at most N bytes in the record.
    CharArray,
    /// `__data_loc char[] name`: a u32 whose low 16 bits are the string's offset in the record.
    DataLocString,
    /// A pointer to a kernel type BTF describes (`struct mm_struct *` in a format file): a
    /// 64-bit address typed as a pointer to BTF type `pointee`, so `args[N]->member` reads
    /// kernel memory.
    KernelPointer { pointee: u32 },
    /// Anything else (other arrays, structs): not readable from D yet.
    Other,
}

/// One probe a clause is enabled on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProbeSite {
    pub id: u32,
    pub provider: String,
    pub module: String,
    pub function: String,
    pub name: String,
    pub context: ProbeContext,
}

impl ProbeSite {
    /// `provider:module:function:name`
    pub fn full_name(&self) -> String {
        format!(
            "{}:{}:{}:{}",
            self.provider, self.module, self.function, self.name
        )
    }
}

/// One loadable program: the clauses of one probe, in program order.
#[derive(Clone, Debug)]
pub struct ProgramSpec {
    pub probe: ProbeSite,
    pub code: Code,
}

/// How one recorded value is laid out and typed.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub offset: u32,
    pub ty: Type,
}

/// An action the consumer carries out when it reads a record.
#[derive(Clone, Debug, PartialEq)]
pub enum ActionKind {
    Trace(Field),
    Printf {
        format: String,
        args: Vec<Field>,
    },
    /// `printa([format,] @a, ...)`: aggregation indices into [`Compiled::aggregations`].
    Printa {
        format: Option<String>,
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
        option: String,
        value: Option<String>,
    },
    /// A datum the consumer symbolizes: `stack()`, `ustack()`, or `trace()` of `func()`,
    /// `sym()`, `mod()`, `ufunc()`, `usym()`, `umod()`, `uaddr()`; laid out at `offset` as
    /// [`Datum`] says.
    Datum {
        offset: u32,
        datum: Datum,
    },
}

/// Default `stack()` depth (DTrace's `stackframes` option).
pub const STACK_FRAMES: u32 = 20;
/// Default `ustack()` depth (DTrace's `ustackframes` option).
pub const USTACK_FRAMES: u32 = 20;
/// Deepest stack the kernel hands out (`kernel.perf_event_max_stack` defaults to 127);
/// `stackdepth` and `ustackdepth` count at most this many frames.
pub const MAX_STACK_FRAMES: u32 = 127;

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
    /// Per key: the [`Datum`] it holds when it is a stack or a symbol (its field's type is
    /// then meaningless); `None` for plain values.
    pub datums: Vec<Option<Datum>>,
    pub key_size: u32,
    pub slots: usize,
    pub map: MapId,
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
    /// A `tp_btf` program on `sched_process_exit` (`[task, group_dead]`): when the last
    /// thread of a process exits, its tgid leaves the [`Compiled::follow`] map, so a reused
    /// pid is not traced.
    ProcessExit,
}

impl HelperKind {
    /// The kernel tracepoint the helper hangs off.
    pub fn tracepoint(&self) -> &'static str {
        match self {
            HelperKind::SchedSwitch => "sched_switch",
            HelperKind::ProcessFork => "sched_process_fork",
            HelperKind::ProcessExit => "sched_process_exit",
        }
    }

    /// The feature the helper serves, for messages.
    pub fn purpose(&self) -> &'static str {
        match self {
            HelperKind::SchedSwitch => "vtimestamp",
            HelperKind::ProcessFork | HelperKind::ProcessExit => "follow-fork",
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

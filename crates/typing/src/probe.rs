//! What a probe looks like to the D program: how its program reads its context and
//! arguments ([`ProbeContext`]), so the typing pass can type `args[]` and code generation
//! can read them. The probes crate describes every probe it matches this way.

use crate::types::Type;

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
    /// Its D type, as `dtrace -lv` shows it (`psinfo_t *`, `int`); empty for an argument
    /// only the D library's translators read as `argN` (`tcp`'s `arg6`, `arg7`), which
    /// `args[]` and `-lv` do not show.
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
    /// The probe id of each of [`UprobeContext::functions`] (a `pid` glob's: the id its
    /// function's probe has alone, as `dtrace -l` lists it), which `id` and the records of
    /// the function that fired carry; empty where the probe's own id stands for them all.
    pub ids: Vec<u32>,
    /// Follow-fork (`-x followfork`): the probe is attached by binary, system-wide, and its
    /// program leaves at once unless the current process is in this pid's family in the
    /// follow-fork map (`Compiled::follow` of the back end) (the pid itself and every process it forked, at any depth).
    /// `None`: no such test (the kernel filters by pid, or the probe is system-wide).
    pub family: Option<u32>,
    /// An `fbt` kprobe's kernel functions (in the order of [`UprobeContext::functions`], or
    /// the one function), whose BTF prototypes type `args[]`; empty for a user probe.
    pub kernel: Vec<KernelFunction>,
    /// The object of a `pid` entry or return probe, whose DWARF (its own or its separate
    /// debug file's) types `args[]` where it describes the functions (`types::user`); of a
    /// USDT probe whose argument types a provider file declared, whose DWARF defines the
    /// types they name (`struct rec *`).
    pub object: Option<std::path::PathBuf>,
}

/// A kernel function traced by a kprobe: `vmlinux`'s or a loaded module's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelFunction {
    pub module: String,
    pub function: String,
}

impl KernelFunction {
    /// The D types of `args[]` at the function's entry (its parameters) or return (`ret`:
    /// the return offset, a `uint64_t`, then the return type unless it is `void`), from
    /// its BTF prototype (the module's split BTF for a module's function); None when BTF
    /// does not describe it.
    pub fn arg_types(&self, ret: bool) -> Option<Vec<Type>> {
        use crate::types::kernel;
        let btf = kernel::module(&self.module)?;
        let id = btf.find(dtrace_btf::Kind::Func, &self.function)?;
        let proto = btf.func_proto(id)?;
        let ty = |id| kernel::from_module_btf(btf, id);
        Some(if ret {
            let mut types = vec![crate::types::UINT64];
            if proto.ret != 0 {
                types.push(ty(proto.ret));
            }
            types
        } else {
            proto.params.iter().map(|p| ty(p.ty)).collect()
        })
    }
}

/// The `args[]` types of user function `function` of `object` from its DWARF, at entry
/// (its parameters) or return (`ret`: the return offset, a `uint64_t`, then the result
/// unless it is `void`). As `argN` is the Nth integer register, an argument is typed only
/// when it and every one before it are integers or pointers; after a floating-point or
/// struct parameter (passed elsewhere), arguments stay 64-bit values (`int64_t`).
pub fn user_arg_types(object: &std::path::Path, function: &str, ret: bool) -> Option<Vec<Type>> {
    let sig = crate::types::user::signature(object, function)?;
    let in_register = |t: &Type| t.is_scalar();
    Some(if ret {
        let mut types = vec![crate::types::UINT64];
        match sig.ret {
            Type::Void => {}
            t if in_register(&t) => types.push(t),
            _ => types.push(crate::types::INT64),
        }
        types
    } else {
        let mut integers = true;
        sig.params
            .into_iter()
            .map(|t| {
                integers &= in_register(&t);
                if integers {
                    t
                } else {
                    crate::types::INT64
                }
            })
            .collect()
    })
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
    /// A system call's entry whose program is loaded as a sleepable fentry program on the
    /// call's `__x64_sys_NAME` function, this vmlinux BTF id, so that its reads of user
    /// memory fault pages in: the context is then that function's one argument, the
    /// call's `struct pt_regs *`, from which the arguments [`TracepointLayout::args`]
    /// describe are read (the record's `args[N]` is the N-th argument register).
    pub fentry: Option<u32>,
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

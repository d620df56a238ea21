//! The typed IR: what the typing pass hands code generation.
//!
//! Every name is resolved (variables to ids in [`Program`]'s tables, built-in variables to
//! [`Builtin`], calls to [`Subr`] and [`ActionKind`]), every expression carries its D type,
//! casts that change a value are explicit ([`ExprKind::Convert`]), pointer arithmetic is
//! scaled, and every semantic error has been raised. Code generation neither looks names
//! up nor asks for a type: it reads them here.
//!
//! Memory is named by a [`Place`]: where a value lives (a D variable, or memory at an
//! address in the kernel's or the process's address space), a constant byte offset into it,
//! an optional run-time byte offset (indexing, already bounds-checked by the nodes that
//! compute it), its type and, for a bitfield, its bits. A place is read with
//! [`ExprKind::Load`], written by [`ExprKind::Assign`] and [`ExprKind::Update`], and its
//! address taken with [`ExprKind::AddrOf`].
//!
//! Values of scalar type (integers, pointers) are 64-bit numbers; as in Oracle's DTrace an
//! integer is the 64-bit result of its operators, narrowed to its type only by a
//! [`ExprKind::Convert`], a store, a record or a key (and read from storage at its width).
//! Values of string, struct, union and array type are held by reference: the number is the
//! address of their bytes (kernel memory, which includes D's own storage: variables, scratch
//! and read-only data), and consumers copy them ([`Type::size`] bytes, or up to the NUL for
//! strings).

use dtrace_frontend::Span;

use crate::probe::ProbeSite;
use crate::types::Type;

/// A typed expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub ty: Type,
    pub span: Span,
}

/// Index of a variable in one of [`Program`]'s tables.
pub type VarId = usize;
/// Index of an aggregation in [`Program::aggregations`].
pub type AggId = usize;
/// A value bound by [`ExprKind::Let`] (a translator's input), unique in the program.
pub type BindId = usize;

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// An integer constant: its 64 bits as folded (not narrowed to the expression's type).
    Int(u64),
    /// A string literal (without its NUL).
    Str(Vec<u8>),
    /// The value stored in a place.
    Load(Box<Place>),
    /// The address of a place (`&x`, and arrays decaying to a pointer to their first
    /// element).
    AddrOf(Box<Place>),
    /// A built-in variable.
    Builtin(Builtin),
    /// The address of this CPU's instance of the per-CPU kernel variable with this BTF id
    /// (`` `runqueues ``).
    PercpuVariable(u32),
    /// `argN`: the probe's raw argument as a 64-bit integer.
    Arg(u8),
    /// `args[N]` of a probe whose context types it (tracepoint fields, BTF prototypes, USDT
    /// operands); code generation reads it as the context says.
    ProbeArg(u8),
    /// `entry->timestamp`, `entry->arg0`...: a value the function's entry saved, read from
    /// what the clause looked up before its predicate ([`Body::entry`]).
    Entry(EntryField),
    /// An expression of a `proc`/`sched` probe's definition, evaluated in the context of
    /// the probe it fires on (its `args[]` and `argN` are that probe's).
    InBase(Box<Expr>),
    /// The operand converted to this expression's type as DTrace casts: truncated and
    /// extended where `Type::cast_changes` says so, else only retyped.
    Convert(Box<Expr>),
    /// `-e`, `~e`: on the operand's 64 bits (the operand's type).
    Neg(Box<Expr>),
    BitNot(Box<Expr>),
    /// `!e`: 1 when the operand is zero (an empty string), else 0.
    Not(Box<Expr>),
    /// Arithmetic on the operands' 64 bits, signed or not (`/`, `%`, `>>`) as the result
    /// type is: the operands' type of higher rank (shifts: the left one's).
    Arith {
        op: ArithOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// A comparison (result `int`, 0 or 1).
    Compare {
        op: CmpOp,
        how: Comparison,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `&&`, `||`, `^^` on truth values (scalars: non-zero; strings: non-empty); `&&` and
    /// `||` evaluate the right operand only when needed.
    Logical {
        op: LogicalOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `cond ? then : otherwise` (both branches of the result type).
    Cond {
        cond: Box<Expr>,
        then: Box<Expr>,
        otherwise: Box<Expr>,
    },
    /// `a, b`: evaluate `a`, then the value of `b`.
    Comma(Box<Expr>, Box<Expr>),
    /// Store the value (already of the place's type) into the place; the expression's value
    /// is the stored value.
    Assign {
        place: Box<Place>,
        value: Box<Expr>,
    },
    /// `place = 0` on a dynamic variable (a thread-local, an associative array element) of
    /// a type 0 is no value of (struct, union, array, string): as DTrace, the variable
    /// leaves storage. The expression's value is 0 (`int`).
    Delete(Box<Place>),
    /// `place op= value`, `++`, `--`: the place's value combined with `value` (pointer
    /// steps already scaled; signed or not as the place's type is) and stored back (narrowed
    /// to the place's type); the expression's value
    /// is the new value, or the old one when `post`.
    Update {
        place: Box<Place>,
        op: ArithOp,
        value: Box<Expr>,
        post: bool,
    },
    /// A subroutine call, arguments checked against its prototype and converted.
    Call(Subr, Vec<Expr>),
    /// The index (a value of the expression's type) checked against `len` elements: out of
    /// range, the clause faults (DTrace's "index out of bounds").
    CheckIndex {
        index: Box<Expr>,
        len: u64,
    },
    /// `stringof`: the NUL-terminated text at a kernel address (or the text of a `char`
    /// array place) as a string.
    Stringof(Box<Expr>),
    /// Evaluate `value` once, bind it to `id` for `body` (a translation's input).
    Let {
        id: BindId,
        value: Box<Expr>,
        body: Box<Expr>,
    },
    /// The value bound to `id` by an enclosing [`ExprKind::Let`].
    Bound(BindId),
    /// A struct built in scratch memory from member values (at their byte offsets, stored
    /// as their member type says: a `char` array member takes a string; members not given
    /// are zero): a translated struct. The expression is a pointer to it.
    Build {
        size: u32,
        members: Vec<(u32, Type, Expr)>,
    },
    /// An action's data used as a value where DTrace allows it (a symbol datum as an
    /// aggregation key or `trace` argument): never evaluated by itself.
    Datum(Datum, Option<Box<Expr>>),
    /// An action called where a value is expected (typed `void`): the typing pass refuses
    /// every use of it, so code generation never sees one.
    Void(String),
    /// An aggregation named where a value is expected (typed `void`): only actions taking
    /// aggregations accept one; code generation never sees one.
    AggRef(AggId),
}

/// Where a value lives and which part of it a place names.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    pub base: PlaceBase,
    /// Constant byte offset from the start of the base's storage.
    pub offset: u64,
    /// A run-time byte offset added to it (an index times the element size, checked).
    pub index: Option<Box<Expr>>,
    /// The type of the value the place names.
    pub ty: Type,
    /// For a bitfield: its first bit (from the byte at the offset) and width.
    pub bitfield: Option<(u8, u8)>,
    /// The base is a pointer `->` dereferences: when it is NULL the access faults at
    /// address 0, as DTrace checks it, not at the member's address.
    pub checked_base: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum PlaceBase {
    /// A global variable ([`Program::globals`]).
    Global(VarId),
    /// A clause-local variable `this->x` ([`Program::this_vars`]).
    This(VarId),
    /// A thread-local variable `self->x` ([`Program::thread_vars`]).
    Thread(VarId),
    /// An element of an associative array ([`Program::assocs`]), thread-local ones
    /// included, by its key tuple (of the array's key types).
    Assoc { var: VarId, keys: Vec<Expr> },
    /// Memory at an address in the kernel's address space (D scratch memory included).
    Kernel(Box<Expr>),
    /// Memory at an address in the traced process's address space.
    User(Box<Expr>),
}

impl Place {
    /// A whole variable or memory object of type `ty`.
    pub fn whole(base: PlaceBase, ty: Type) -> Place {
        Place {
            base,
            offset: 0,
            index: None,
            ty,
            bitfield: None,
            checked_base: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// How a comparison compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    Signed,
    Unsigned,
    /// Byte by byte, as `strcmp`.
    Strings,
    /// A string against the null pointer constant: true (`==`) when it is NULL.
    StringNull,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogicalOp {
    And,
    Or,
    Xor,
}

/// A built-in variable (other than `argN` and `args[]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    Timestamp,
    Vtimestamp,
    Walltimestamp,
    Pid,
    Tid,
    Ppid,
    Uid,
    Gid,
    Execname,
    /// The current process's arguments from its memory, blank-separated (`execargs`).
    Execargs,
    Cpu,
    Probeprov,
    Probemod,
    Probefunc,
    Probename,
    Id,
    Epid,
    Curthread,
    Errno,
    Stackdepth,
    Ustackdepth,
    /// `caller`, `ucaller`: the return address of the probed function, kernel or user (the
    /// second frame of the stack; 0 when there is none).
    Caller,
    Ucaller,
    /// The address of the current thread's user-mode register frame (`struct pt_regs`):
    /// what `uregs[]` reads.
    UserRegs,
    /// The stack pointer of the probe's register context (a uprobe's or kprobe's `struct
    /// pt_regs`): what keys the state an entry saves for `entry->` (no D name).
    StackPointer,
    /// The address of an fentry or fexit program's context: the argument array on its BPF
    /// trampoline's stack frame, which the fentry and the fexit programs of one call share
    /// and no other active call has (no D name; keys `entry->` in fbt returns traced by
    /// fexit).
    TrampolineFrame,
}

/// A subroutine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Subr {
    Strlen,
    Strjoin,
    Substr,
    Index,
    Rindex,
    Strstr,
    Strchr,
    Strrchr,
    Toupper,
    Tolower,
    Lltostr,
    Basename,
    Dirname,
    Cleanpath,
    Strtoll,
    /// `json(s, elemspec)`: the value `elemspec` selects in the JSON text `s`, or NULL.
    Json,
    /// The lock subroutines on a `struct mutex *` / `rwlock_t *`: lowered to loads and
    /// arithmetic by typing (`cook/locks.rs`), so no call of them reaches code generation.
    MutexOwned,
    MutexOwner,
    MutexTypeAdaptive,
    MutexTypeSpin,
    RwReadHeld,
    RwWriteHeld,
    RwIswriter,
    Rand,
    /// `copyin(addr, size)`: `size` is a constant ([`Expr`] of kind `Int`).
    Copyin,
    Copyinstr,
    /// `copyinto(addr, size, dest)`.
    Copyinto,
    /// `alloca(size)`: `size` is a constant.
    Alloca,
    /// `speculation()`: a free speculation's id, or 0.
    Speculation,
    /// `bcopy(src, dest, size)`: `dest` in `alloca` memory.
    Bcopy,
    /// `htons htonl htonll ntohs ntohl ntohll`: byte swaps of 16, 32 and 64 bits.
    Htons,
    Htonl,
    Htonll,
    Ntohs,
    Ntohl,
    Ntohll,
    /// `strtok(s, delim)`: `s` is the null string ([`ExprKind::Int`] 0 of type string) to go
    /// on with the string of the last call.
    Strtok,
    /// `d_path(struct path *)`: the file's pathname, for the current process.
    DPath,
    /// `progenyof(pid)`: 1 if the current process is `pid` or descends from it.
    Progenyof,
    /// `getmajor(dev)`, `getminor(dev)`: the parts of a Linux `dev_t` (12 and 20 bits).
    Getmajor,
    Getminor,
    /// `inet_ntoa(ipaddr_t *)`: an IPv4 address in dotted decimal.
    InetNtoa,
    /// `inet_ntoa6(struct in6_addr *[, strict])`: an IPv6 address as text; `strict` (a
    /// constant, [`ExprKind::Int`], absent for 0) keeps the `::` and `::ffff:` prefixes of
    /// IPv4-compatible and IPv4-mapped addresses.
    InetNtoa6,
    /// `inet_ntop(af, addr)`: `inet_ntoa6(addr, 1)` when `af` is `AF_INET6`, else
    /// `inet_ntoa(addr)`.
    InetNtop,
    /// `link_ntop(type, addr)`: an Ethernet or InfiniBand hardware address as text.
    LinkNtop,
}

/// Recorded data the consumer symbolizes, with its size in the record or key.
pub use dtrace_abi::datum::{Datum, MAX_STACK_FRAMES};

/// A statement of a clause body.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// An expression evaluated for its effect.
    Eval(Expr),
    If {
        cond: Expr,
        then: Vec<Stmt>,
        otherwise: Vec<Stmt>,
    },
    /// An action: DTrace numbers them in clause order (for error messages).
    Action(Action),
    /// `{ ... }`
    Block(Vec<Stmt>),
    /// Save what a return clause reads of this entry (`entry->...`), keyed by the thread
    /// and `frame`, the stack pointer at entry (0 for a system call: a thread is in one at
    /// a time); each value goes to its field's slot.
    SaveEntry {
        frame: Expr,
        values: Vec<(EntryField, Expr)>,
    },
}

/// A value a function's entry saves for its return (`entry->NAME`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryField {
    Timestamp,
    Vtimestamp,
    /// `entry->argN` (`entry->args[N]` is its typed form).
    Arg(u8),
}

impl EntryField {
    /// How many arguments an entry saves: `arg0`..`arg9`.
    pub const ARGS: u8 = 10;
    /// Fields in the saved state.
    pub const COUNT: u32 = 2 + Self::ARGS as u32;

    /// The field's u64 slot in the saved state.
    pub fn slot(self) -> u32 {
        match self {
            EntryField::Timestamp => 0,
            EntryField::Vtimestamp => 1,
            EntryField::Arg(n) => 2 + u32::from(n),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub kind: ActionKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ActionKind {
    /// `trace(e)`: a value, or a symbol datum.
    Trace(Expr),
    /// `tracemem(addr, size[, dynsize])`: `size` bytes of kernel memory at `addr` (an
    /// address, or a string or array by reference), and how many of them to show.
    Tracemem {
        addr: Expr,
        size: u32,
        dynsize: Option<Expr>,
    },
    /// `print(addr)`: the address, then the `size` bytes of kernel (or D) memory there
    /// (`user`: of the traced process's memory), shown as `layout` says.
    Print {
        addr: Expr,
        size: u32,
        layout: dtrace_abi::datum::ValueType,
        user: bool,
    },
    Printf {
        format: Vec<u8>,
        args: Vec<Expr>,
    },
    Printa {
        format: Option<Vec<u8>>,
        aggregations: Vec<AggId>,
    },
    /// `exit(status)`: the status converted to `int`.
    Exit(Expr),
    Clear(AggId),
    Denormalize(AggId),
    Trunc {
        aggregation: AggId,
        count: Option<Expr>,
    },
    Normalize {
        aggregation: AggId,
        factor: Expr,
    },
    /// `setopt(option[, value])`: strings, constant ([`ExprKind::Str`]) or computed.
    Setopt {
        option: Expr,
        value: Option<Expr>,
    },
    /// `stack()`, `ustack()`: a stack datum.
    Stack(Datum),
    /// `speculate(id)`: the clause's data goes to speculation `id` (an `int64_t`); an id
    /// not active abandons the clause.
    Speculate(Expr),
    /// `commit(id)`, `discard(id)` (an `int64_t`).
    Commit(Expr),
    Discard(Expr),
    /// `system(format, args...)`: the consumer runs the formatted command (destructive).
    System {
        format: Vec<u8>,
        args: Vec<Expr>,
    },
    /// `freopen(format, args...)`: output goes to the formatted path from now on; `""`
    /// restores the original output (destructive).
    Freopen {
        format: Vec<u8>,
        args: Vec<Expr>,
    },
    /// `ftruncate()`: empty the output file.
    Ftruncate,
    /// `raise(signal)` to the current process (destructive).
    Raise(Expr),
    /// `stop()` the current process (destructive).
    Stop,
    /// `chill(ns)`: spin for `ns` nanoseconds (an `int64_t`; destructive).
    Chill(Expr),
    /// `copyout(buf, addr, size)`: `size` bytes of D memory at `buf` written to user
    /// address `addr`; `copyoutstr(str, addr, maxlen)`: the string with its NUL, at most
    /// `maxlen` bytes (destructive). `addr` and `size` are `int64_t`.
    Copyout {
        src: Expr,
        addr: Expr,
        size: Expr,
        string: bool,
    },
    /// `@a[keys] = func(args)`: `args` are the value (and the weight) converted to
    /// `int64_t`; constant parameters (lquantize's bounds) are in the aggregation's function.
    Aggregate {
        aggregation: AggId,
        keys: Vec<Expr>,
        args: Vec<Expr>,
    },
}

/// A global, clause-local or thread-local variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Variable {
    pub name: String,
    pub ty: Type,
}

/// An associative array (global, or thread-local: `self->a[...]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Assoc {
    pub name: String,
    pub keys: Vec<Type>,
    pub value: Type,
    /// Thread-local: the key starts with the thread id.
    pub thread: bool,
    /// Per key, what its uses store there (see [`KeyUses`]).
    pub uses: Vec<KeyUses>,
}

/// An aggregation: its function and key signature, fixed by its first use.
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregation {
    /// Without `@` (empty for `@`).
    pub name: String,
    pub func: dtrace_abi::slots::AggFunc,
    /// Key types; a key that is a stack or symbol has its [`Datum`] (its type is then
    /// `uint64_t`, meaningless).
    pub keys: Vec<(Type, Option<Datum>)>,
    /// Per key, what its uses store there (see [`KeyUses`]).
    pub uses: Vec<KeyUses>,
}

/// What the uses of one key position of an aggregation or associative array (every
/// clause and statement naming it) store there, so its slot need hold no more: for a
/// string, the longest string any of them can be; and when every use is a name of the
/// probe (`probefunc`, `probename`, `probemod`, `probeprov`), those names, so that the key
/// can be kept as a number. Nothing for keys that are not strings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeyUses {
    /// The most bytes, NUL included, a string stored there takes (at most `strsize`); 0
    /// when no use stores a string.
    pub bound: u32,
    /// The probe names every use stores, if every use stores one.
    pub names: Option<ProbeNames>,
}

/// The probe names a key position can hold: the system calls of group programs by number
/// (their `probefunc`, known only at run time), and names known when compiling.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProbeNames {
    pub by_nr: std::collections::BTreeMap<u32, String>,
    pub fixed: std::collections::BTreeSet<String>,
}

impl ProbeNames {
    /// The names as the key numbers them: each system call's name at its number (the
    /// numbers between them unnamed), then the fixed names not among them.
    pub fn table(&self) -> Vec<String> {
        let len = self
            .by_nr
            .keys()
            .next_back()
            .map_or(0, |nr| *nr as usize + 1);
        let mut table = vec![String::new(); len];
        for (nr, name) in &self.by_nr {
            table[*nr as usize] = name.clone();
        }
        for name in &self.fixed {
            if !self.by_nr.values().any(|n| n == name) {
                table.push(name.clone());
            }
        }
        table
    }
}

/// A clause typed for one context: the probes it runs on there, its predicate and body.
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// The probes (one, or the system calls of a group program).
    pub sites: Vec<ProbeSite>,
    /// DTrace's statement number of the clause for each site (`dt_clause_N`): the clause
    /// with one of its probe descriptions, numbered in program order.
    pub statements: Vec<u32>,
    /// The context the body was typed in: `sites[0]`, or the group program's probe.
    pub context: ProbeSite,
    /// A `proc`/`sched` probe's filter (evaluated before the predicate).
    pub filter: Option<Expr>,
    pub predicate: Option<Expr>,
    pub stmts: Vec<Stmt>,
    /// Whether the clause writes a record (clauses of only aggregations write none).
    pub records: bool,
    /// The clause reads `entry->`: the stack pointer its function had at entry (0 at a
    /// system call's return), which with the thread finds what the entry saved
    /// ([`Stmt::SaveEntry`]). A firing whose entry saved nothing skips the clause.
    pub entry: Option<Expr>,
}

/// One clause of the program, typed once per context it runs in.
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub bodies: Vec<Body>,
}

/// A struct or union D defines: `records[id - D_RECORD_BASE]` of a [`crate::types::Record`].
#[derive(Clone, Debug, PartialEq)]
pub struct DRecord {
    /// `struct name`, `union name`, `struct {...}`.
    pub name: &'static str,
    pub union: bool,
    pub size: u32,
    pub members: Vec<Member>,
}

/// A member of a D struct or union.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// Empty for an unnamed bit-field.
    pub name: String,
    pub ty: Type,
    /// Byte offset.
    pub offset: u32,
    /// A bit-field's width (its bits start at the offset's first bit).
    pub bits: Option<u8>,
}

/// The typed program: every variable and aggregation the program uses, and its clauses in
/// program order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Program {
    /// The structs and unions D defines (the D library's and the program's).
    pub records: Vec<DRecord>,
    pub globals: Vec<Variable>,
    pub this_vars: Vec<Variable>,
    pub thread_vars: Vec<Variable>,
    pub assocs: Vec<Assoc>,
    pub aggregations: Vec<Aggregation>,
    pub clauses: Vec<Clause>,
    /// Whether a clause calls `strtok`: each program then keeps its state, for the
    /// firing, in scratch.
    pub strtok: bool,
    /// Whether a clause reads `timestamp` or `vtimestamp`: each program then keeps the
    /// values it read first, so a firing sees one of each (as in DTrace).
    pub timestamp: bool,
    /// The most bytes one clause body's `alloca()` calls take (each rounded up to 8): the
    /// size of the arena each clause allocates from, afresh.
    pub alloca_arena: u32,
}

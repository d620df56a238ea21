//! D's predefined identifiers, in one table: built-in variables, subroutines (with their
//! prototypes), actions and aggregating functions, as DTrace's global identifier table
//! lists them. The typing pass resolves names and checks calls against it; messages that
//! describe an identifier (`previous: function `, `tracing function `) come from it too.
//!
//! Also the constants of DTrace's D library (`DTRACEFLT_*` from `unistd.d`, `SIG*` from
//! `signal.d`, `E*` from `errno.d`, `R_*` from `regs.d`), with Linux values.

use crate::ir::{Builtin, Subr};

/// What a predefined name is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A built-in variable.
    Variable(Variable),
    /// A subroutine: a function with a value, callable in expressions.
    Subroutine(Subroutine),
    /// An action (DTrace's "tracing function"): a statement of its own.
    Action(ActionName),
    /// An aggregating function: only the value of an aggregation.
    Aggregating,
}

/// How a built-in variable is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variable {
    Value(Builtin),
    /// `argN`.
    Arg(u8),
    /// `args[]`.
    Args,
    /// `uregs[]`: the thread's user-mode registers ([`crate::regs`]).
    Uregs,
    /// `ipl`: the interrupt level, as Oracle's DTrace for Linux gives it (`cook::context`).
    Ipl,
    /// A variable DTrace has that Linux cannot give (message: why).
    Unavailable(&'static str),
}

/// A subroutine and its prototype.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subroutine {
    /// `None`: a Solaris subroutine for what Linux does not have (STREAMS messages),
    /// refused in words once its arguments check.
    pub subr: Option<Subr>,
    pub params: &'static [Param],
    /// Parameters from this index on are optional.
    pub required: usize,
}

/// A parameter of a prototype: what it accepts and how DTrace spells its type in
/// "argument #N is incompatible with prototype" messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param {
    pub accepts: Accepts,
    pub shown: &'static str,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accepts {
    String,
    /// An integer.
    Integer,
    /// An integer or a pointer (an address).
    Scalar,
    /// A pointer, a string (its bytes' address), or the null pointer constant.
    Pointer,
    /// A pointer or the null pointer constant, never a string: where a subroutine writes,
    /// or the kernel object it examines.
    Destination,
}

const fn param(accepts: Accepts, shown: &'static str) -> Param {
    Param { accepts, shown }
}

/// DTrace shows `const char *` parameters without the qualifier.
pub(crate) const CSTR: Param = param(Accepts::String, "char *");
pub(crate) const INT: Param = param(Accepts::Integer, "int");
/// The kernel mutex the `mutex_*` subroutines examine.
const MUTEXP: Param = param(Accepts::Destination, "struct mutex *");
const MBLKP: Param = param(Accepts::Pointer, "mblk_t *");
const RWLOCKP: Param = param(Accepts::Destination, "rwlock_t *");
const CHAR: Param = param(Accepts::Integer, "char");
const INT64: Param = param(Accepts::Integer, "int64_t");
pub(crate) const ADDR: Param = param(Accepts::Scalar, "uintptr_t");
pub(crate) const SIZE: Param = param(Accepts::Integer, "size_t");
pub(crate) const VOIDP: Param = param(Accepts::Pointer, "void *");
/// Where `bcopy` writes: `alloca` memory (checked at run time), never a string.
const ALLOCA: Param = param(Accepts::Destination, "alloca pointer");
const DEV: Param = param(Accepts::Integer, "dev_t");
const U16: Param = param(Accepts::Integer, "uint16_t");
const U32: Param = param(Accepts::Integer, "uint32_t");
const U64: Param = param(Accepts::Integer, "uint64_t");

/// The actions: statements that record data or act.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ActionName {
    Trace,
    Printf,
    Printa,
    Exit,
    Clear,
    Trunc,
    Normalize,
    Denormalize,
    Setopt,
    Stack,
    Ustack,
    Jstack,
    /// `func sym mod ufunc usym umod uaddr`: symbol data (values only for `trace` and
    /// aggregation keys).
    Symbol,
    Tracemem,
    System,
    Raise,
    Stop,
    Panic,
    Chill,
    Breakpoint,
    Copyout,
    Copyoutstr,
    Speculate,
    Commit,
    Discard,
    Ftruncate,
    Freopen,
    Print,
    Symaddr,
}

const fn subr(subr: Subr, params: &'static [Param], required: usize) -> Kind {
    Kind::Subroutine(Subroutine {
        subr: Some(subr),
        params,
        required,
    })
}

const fn streams_only(params: &'static [Param], required: usize) -> Kind {
    Kind::Subroutine(Subroutine {
        subr: None,
        params,
        required,
    })
}

const fn var(b: Builtin) -> Kind {
    Kind::Variable(Variable::Value(b))
}

/// Every predefined name, sorted by name.
const TABLE: &[(&str, Kind)] = &[
    ("alloca", subr(Subr::Alloca, &[SIZE], 1)),
    ("arg0", Kind::Variable(Variable::Arg(0))),
    ("arg1", Kind::Variable(Variable::Arg(1))),
    ("arg2", Kind::Variable(Variable::Arg(2))),
    ("arg3", Kind::Variable(Variable::Arg(3))),
    ("arg4", Kind::Variable(Variable::Arg(4))),
    ("arg5", Kind::Variable(Variable::Arg(5))),
    ("arg6", Kind::Variable(Variable::Arg(6))),
    ("arg7", Kind::Variable(Variable::Arg(7))),
    ("arg8", Kind::Variable(Variable::Arg(8))),
    ("arg9", Kind::Variable(Variable::Arg(9))),
    ("args", Kind::Variable(Variable::Args)),
    ("avg", Kind::Aggregating),
    ("basename", subr(Subr::Basename, &[CSTR], 1)),
    ("bcopy", subr(Subr::Bcopy, &[VOIDP, ALLOCA, SIZE], 3)),
    ("breakpoint", Kind::Action(ActionName::Breakpoint)),
    ("caller", var(Builtin::Caller)),
    ("chill", Kind::Action(ActionName::Chill)),
    ("cleanpath", subr(Subr::Cleanpath, &[CSTR], 1)),
    ("clear", Kind::Action(ActionName::Clear)),
    ("commit", Kind::Action(ActionName::Commit)),
    ("copyin", subr(Subr::Copyin, &[ADDR, SIZE], 2)),
    ("copyinstr", subr(Subr::Copyinstr, &[ADDR, SIZE], 1)),
    (
        "copyinto",
        subr(
            Subr::Copyinto,
            &[ADDR, SIZE, param(Accepts::Destination, "void *")],
            3,
        ),
    ),
    ("copyout", Kind::Action(ActionName::Copyout)),
    ("copyoutstr", Kind::Action(ActionName::Copyoutstr)),
    ("count", Kind::Aggregating),
    ("cpu", var(Builtin::Cpu)),
    ("curthread", var(Builtin::Curthread)),
    (
        "d_path",
        subr(Subr::DPath, &[param(Accepts::Pointer, "struct path *")], 1),
    ),
    ("denormalize", Kind::Action(ActionName::Denormalize)),
    ("dirname", subr(Subr::Dirname, &[CSTR], 1)),
    ("discard", Kind::Action(ActionName::Discard)),
    ("epid", var(Builtin::Epid)),
    ("errno", var(Builtin::Errno)),
    ("execargs", var(Builtin::Execargs)),
    ("execname", var(Builtin::Execname)),
    ("exit", Kind::Action(ActionName::Exit)),
    ("freopen", Kind::Action(ActionName::Freopen)),
    ("ftruncate", Kind::Action(ActionName::Ftruncate)),
    ("func", Kind::Action(ActionName::Symbol)),
    ("getmajor", subr(Subr::Getmajor, &[DEV], 1)),
    ("getminor", subr(Subr::Getminor, &[DEV], 1)),
    ("gid", var(Builtin::Gid)),
    ("htonl", subr(Subr::Htonl, &[U32], 1)),
    ("htonll", subr(Subr::Htonll, &[U64], 1)),
    ("htons", subr(Subr::Htons, &[U16], 1)),
    ("id", var(Builtin::Id)),
    ("index", subr(Subr::Index, &[CSTR, CSTR, INT], 2)),
    (
        "inet_ntoa",
        subr(Subr::InetNtoa, &[param(Accepts::Pointer, "ipaddr_t *")], 1),
    ),
    (
        "inet_ntoa6",
        subr(
            Subr::InetNtoa6,
            &[param(Accepts::Pointer, "struct in6_addr *"), INT],
            1,
        ),
    ),
    ("inet_ntop", subr(Subr::InetNtop, &[INT, VOIDP], 2)),
    ("ipl", Kind::Variable(Variable::Ipl)),
    ("json", subr(Subr::Json, &[CSTR, CSTR], 2)),
    ("jstack", Kind::Action(ActionName::Jstack)),
    ("link_ntop", subr(Subr::LinkNtop, &[INT, VOIDP], 2)),
    ("llquantize", Kind::Aggregating),
    ("lltostr", subr(Subr::Lltostr, &[INT64, INT], 1)),
    ("lquantize", Kind::Aggregating),
    ("max", Kind::Aggregating),
    ("min", Kind::Aggregating),
    ("mod", Kind::Action(ActionName::Symbol)),
    ("msgdsize", streams_only(&[MBLKP], 1)),
    ("msgsize", streams_only(&[MBLKP], 1)),
    ("mutex_owned", subr(Subr::MutexOwned, &[MUTEXP], 1)),
    ("mutex_owner", subr(Subr::MutexOwner, &[MUTEXP], 1)),
    (
        "mutex_type_adaptive",
        subr(Subr::MutexTypeAdaptive, &[MUTEXP], 1),
    ),
    ("mutex_type_spin", subr(Subr::MutexTypeSpin, &[MUTEXP], 1)),
    ("normalize", Kind::Action(ActionName::Normalize)),
    ("ntohl", subr(Subr::Ntohl, &[U32], 1)),
    ("ntohll", subr(Subr::Ntohll, &[U64], 1)),
    ("ntohs", subr(Subr::Ntohs, &[U16], 1)),
    ("panic", Kind::Action(ActionName::Panic)),
    ("pid", var(Builtin::Pid)),
    ("ppid", var(Builtin::Ppid)),
    ("print", Kind::Action(ActionName::Print)),
    ("printa", Kind::Action(ActionName::Printa)),
    ("printf", Kind::Action(ActionName::Printf)),
    ("probefunc", var(Builtin::Probefunc)),
    ("probemod", var(Builtin::Probemod)),
    ("probename", var(Builtin::Probename)),
    ("probeprov", var(Builtin::Probeprov)),
    (
        "progenyof",
        subr(Subr::Progenyof, &[param(Accepts::Integer, "pid_t")], 1),
    ),
    ("quantize", Kind::Aggregating),
    ("raise", Kind::Action(ActionName::Raise)),
    ("rand", subr(Subr::Rand, &[], 0)),
    ("rindex", subr(Subr::Rindex, &[CSTR, CSTR, INT], 2)),
    ("rw_iswriter", subr(Subr::RwIswriter, &[RWLOCKP], 1)),
    ("rw_read_held", subr(Subr::RwReadHeld, &[RWLOCKP], 1)),
    ("rw_write_held", subr(Subr::RwWriteHeld, &[RWLOCKP], 1)),
    ("setopt", Kind::Action(ActionName::Setopt)),
    ("speculate", Kind::Action(ActionName::Speculate)),
    ("speculation", subr(Subr::Speculation, &[], 0)),
    ("stack", Kind::Action(ActionName::Stack)),
    ("stackdepth", var(Builtin::Stackdepth)),
    ("stddev", Kind::Aggregating),
    ("stop", Kind::Action(ActionName::Stop)),
    ("strchr", subr(Subr::Strchr, &[CSTR, CHAR], 2)),
    ("strjoin", subr(Subr::Strjoin, &[CSTR, CSTR], 2)),
    ("strlen", subr(Subr::Strlen, &[CSTR], 1)),
    ("strrchr", subr(Subr::Strrchr, &[CSTR, CHAR], 2)),
    ("strstr", subr(Subr::Strstr, &[CSTR, CSTR], 2)),
    ("strtok", subr(Subr::Strtok, &[CSTR, CSTR], 2)),
    ("strtoll", subr(Subr::Strtoll, &[CSTR, INT], 1)),
    ("substr", subr(Subr::Substr, &[CSTR, INT, INT], 2)),
    ("sum", Kind::Aggregating),
    ("sym", Kind::Action(ActionName::Symbol)),
    ("symaddr", Kind::Action(ActionName::Symaddr)),
    ("system", Kind::Action(ActionName::System)),
    ("tid", var(Builtin::Tid)),
    ("timestamp", var(Builtin::Timestamp)),
    ("tolower", subr(Subr::Tolower, &[CSTR], 1)),
    ("toupper", subr(Subr::Toupper, &[CSTR], 1)),
    ("trace", Kind::Action(ActionName::Trace)),
    ("tracemem", Kind::Action(ActionName::Tracemem)),
    ("trunc", Kind::Action(ActionName::Trunc)),
    ("uaddr", Kind::Action(ActionName::Symbol)),
    ("ucaller", var(Builtin::Ucaller)),
    ("ufunc", Kind::Action(ActionName::Symbol)),
    ("uid", var(Builtin::Uid)),
    ("umod", Kind::Action(ActionName::Symbol)),
    ("uregs", Kind::Variable(Variable::Uregs)),
    ("ustack", Kind::Action(ActionName::Ustack)),
    ("ustackdepth", var(Builtin::Ustackdepth)),
    ("usym", Kind::Action(ActionName::Symbol)),
    ("vtimestamp", var(Builtin::Vtimestamp)),
    ("walltimestamp", var(Builtin::Walltimestamp)),
    (
        "zonename",
        Kind::Variable(Variable::Unavailable(
            "zonename is not available on Linux (it has no zones)",
        )),
    ),
];

/// What the predefined name `name` is, if it is one.
pub fn lookup(name: &str) -> Option<Kind> {
    TABLE
        .binary_search_by(|(n, _)| (*n).cmp(name))
        .ok()
        .map(|i| TABLE[i].1)
}

/// A D language version as DTrace encodes it: `major << 24 | minor << 12 | micro`.
pub const fn d_version(major: u32, minor: u32, micro: u32) -> u32 {
    major << 24 | minor << 12 | micro
}

/// The D version this compiler implements (the `version` option's default).
pub const CURRENT_VERSION: u32 = d_version(2, 0, 0);

/// The predefined identifiers added after D 1.0, with the version that added each, as
/// DTrace's global identifier table dates them (sorted by name).
const INTRODUCED: &[(&str, u32)] = &[
    ("freopen", d_version(1, 1, 0)),
    ("func", d_version(1, 2, 0)),
    ("htonl", d_version(1, 3, 0)),
    ("htonll", d_version(1, 3, 0)),
    ("htons", d_version(1, 3, 0)),
    ("index", d_version(1, 1, 0)),
    ("inet_ntoa", d_version(1, 5, 0)),
    ("inet_ntoa6", d_version(1, 5, 0)),
    ("inet_ntop", d_version(1, 5, 0)),
    ("link_ntop", d_version(1, 5, 0)),
    ("llquantize", d_version(1, 6, 4)),
    ("mod", d_version(1, 2, 0)),
    ("ntohl", d_version(1, 3, 0)),
    ("ntohll", d_version(1, 3, 0)),
    ("ntohs", d_version(1, 3, 0)),
    ("pcap", d_version(1, 6, 4)),
    ("print", d_version(2, 0, 0)),
    ("rindex", d_version(1, 1, 0)),
    ("setopt", d_version(1, 2, 0)),
    ("stddev", d_version(1, 6, 0)),
    ("strchr", d_version(1, 1, 0)),
    ("strrchr", d_version(1, 1, 0)),
    ("strstr", d_version(1, 1, 0)),
    ("strtok", d_version(1, 1, 0)),
    ("substr", d_version(1, 1, 0)),
    ("sym", d_version(1, 2, 0)),
    ("uaddr", d_version(1, 2, 0)),
    ("ucaller", d_version(1, 2, 0)),
    ("ufunc", d_version(1, 2, 0)),
    ("umod", d_version(1, 2, 0)),
    ("ustackdepth", d_version(1, 2, 0)),
    ("usym", d_version(1, 2, 0)),
];

/// [`lookup`] for a program written to D version `version` (the `version` option): an
/// identifier added in a later version is no predefined one there, so the program may
/// name its own variables so.
pub fn lookup_at(name: &str, version: u32) -> Option<Kind> {
    let added = INTRODUCED
        .binary_search_by(|(n, _)| (*n).cmp(name))
        .map_or(d_version(1, 0, 0), |i| INTRODUCED[i].1);
    (added <= version).then(|| lookup(name)).flatten()
}

/// Whether `name` is a built-in variable.
pub fn is_variable(name: &str) -> bool {
    matches!(lookup(name), Some(Kind::Variable(_)))
}

/// Whether `name` is an action.
pub fn is_action(name: &str) -> bool {
    matches!(lookup(name), Some(Kind::Action(_)))
}

/// Whether `name` is an aggregating function.
pub fn is_aggregating(name: &str) -> bool {
    matches!(lookup(name), Some(Kind::Aggregating))
}

/// How DTrace describes a predefined identifier in a redefinition message: its kind
/// followed by a blank (the blank stands for "not an inline").
pub fn identifier_kind(name: &str) -> Option<&'static str> {
    Some(match lookup(name)? {
        Kind::Variable(_) => "scalar ",
        Kind::Subroutine(_) => "function ",
        Kind::Action(_) => "tracing function ",
        Kind::Aggregating => "aggregating function ",
    })
}

/// The value of the D library constant `name` (`DTRACEFLT_*`, `SIG*`, `E*`), or None.
pub fn library_constant(name: &str) -> Option<i64> {
    let v = match name {
        // unistd.d: fault codes (the ERROR probe's arg4).
        "DTRACEFLT_UNKNOWN" => 0,
        "DTRACEFLT_BADADDR" => 1,
        "DTRACEFLT_BADALIGN" => 2,
        "DTRACEFLT_ILLOP" => 3,
        "DTRACEFLT_DIVZERO" => 4,
        "DTRACEFLT_NOSCRATCH" => 5,
        "DTRACEFLT_KPRIV" => 6,
        "DTRACEFLT_UPRIV" => 7,
        "DTRACEFLT_TUPOFLOW" => 8,
        "DTRACEFLT_BADSTACK" => 9,
        "DTRACEFLT_BADSIZE" => 10,
        "DTRACEFLT_BADINDEX" => 11,
        _ => {
            return crate::signals::number(name)
                .or_else(|| errno(name))
                .or_else(|| crate::regs::number(name))
        }
    };
    Some(v)
}

/// Linux's error numbers (`asm-generic/errno.h`), as Oracle's D library names them: the
/// name of `n` is `ERRNOS[n - 1]`; numbers 41 and 58 have none.
fn errno(name: &str) -> Option<i64> {
    const ERRNOS: &[&str] = &[
        "EPERM",
        "ENOENT",
        "ESRCH",
        "EINTR",
        "EIO",
        "ENXIO",
        "E2BIG",
        "ENOEXEC",
        "EBADF",
        "ECHILD",
        "EAGAIN",
        "ENOMEM",
        "EACCES",
        "EFAULT",
        "ENOTBLK",
        "EBUSY",
        "EEXIST",
        "EXDEV",
        "ENODEV",
        "ENOTDIR",
        "EISDIR",
        "EINVAL",
        "ENFILE",
        "EMFILE",
        "ENOTTY",
        "ETXTBSY",
        "EFBIG",
        "ENOSPC",
        "ESPIPE",
        "EROFS",
        "EMLINK",
        "EPIPE",
        "EDOM",
        "ERANGE",
        "EDEADLK",
        "ENAMETOOLONG",
        "ENOLCK",
        "ENOSYS",
        "ENOTEMPTY",
        "ELOOP",
        "",
        "ENOMSG",
        "EIDRM",
        "ECHRNG",
        "EL2NSYNC",
        "EL3HLT",
        "EL3RST",
        "ELNRNG",
        "EUNATCH",
        "ENOCSI",
        "EL2HLT",
        "EBADE",
        "EBADR",
        "EXFULL",
        "ENOANO",
        "EBADRQC",
        "EBADSLT",
        "",
        "EBFONT",
        "ENOSTR",
        "ENODATA",
        "ETIME",
        "ENOSR",
        "ENONET",
        "ENOPKG",
        "EREMOTE",
        "ENOLINK",
        "EADV",
        "ESRMNT",
        "ECOMM",
        "EPROTO",
        "EMULTIHOP",
        "EDOTDOT",
        "EBADMSG",
        "EOVERFLOW",
        "ENOTUNIQ",
        "EBADFD",
        "EREMCHG",
        "ELIBACC",
        "ELIBBAD",
        "ELIBSCN",
        "ELIBMAX",
        "ELIBEXEC",
        "EILSEQ",
        "ERESTART",
        "ESTRPIPE",
        "EUSERS",
        "ENOTSOCK",
        "EDESTADDRREQ",
        "EMSGSIZE",
        "EPROTOTYPE",
        "ENOPROTOOPT",
        "EPROTONOSUPPORT",
        "ESOCKTNOSUPPORT",
        "EOPNOTSUPP",
        "EPFNOSUPPORT",
        "EAFNOSUPPORT",
        "EADDRINUSE",
        "EADDRNOTAVAIL",
        "ENETDOWN",
        "ENETUNREACH",
        "ENETRESET",
        "ECONNABORTED",
        "ECONNRESET",
        "ENOBUFS",
        "EISCONN",
        "ENOTCONN",
        "ESHUTDOWN",
        "ETOOMANYREFS",
        "ETIMEDOUT",
        "ECONNREFUSED",
        "EHOSTDOWN",
        "EHOSTUNREACH",
        "EALREADY",
        "EINPROGRESS",
        "ESTALE",
        "EUCLEAN",
        "ENOTNAM",
        "ENAVAIL",
        "EISNAM",
        "EREMOTEIO",
        "EDQUOT",
        "ENOMEDIUM",
        "EMEDIUMTYPE",
        "ECANCELED",
        "ENOKEY",
        "EKEYEXPIRED",
        "EKEYREVOKED",
        "EKEYREJECTED",
        "EOWNERDEAD",
        "ENOTRECOVERABLE",
        "ERFKILL",
        "EHWPOISON",
    ];
    match name {
        "" => None,
        "EWOULDBLOCK" => Some(11),
        "EDEADLOCK" => Some(35),
        "ENOTSUP" => Some(95),
        _ => ERRNOS.iter().position(|&s| s == name).map(|i| i as i64 + 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_sorted_for_binary_search() {
        assert!(TABLE.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn kinds() {
        assert_eq!(lookup("pid"), Some(var(Builtin::Pid)));
        assert!(is_action("printf"));
        assert!(is_aggregating("lquantize"));
        assert_eq!(identifier_kind("strlen"), Some("function "));
        assert_eq!(identifier_kind("nope"), None);
    }

    #[test]
    fn constants() {
        assert_eq!(library_constant("DTRACEFLT_DIVZERO"), Some(4));
        assert_eq!(library_constant("SIGKILL"), Some(9));
        assert_eq!(library_constant("SIGSYS"), Some(31));
        assert_eq!(library_constant("EAGAIN"), Some(11));
        assert_eq!(library_constant("ELOOP"), Some(40));
        assert_eq!(library_constant("ENOMSG"), Some(42));
        assert_eq!(library_constant("EBFONT"), Some(59));
        assert_eq!(library_constant("ECONNABORTED"), Some(103));
        assert_eq!(library_constant("EHWPOISON"), Some(133));
        assert_eq!(library_constant("ENOTSUP"), Some(95));
        assert_eq!(library_constant("nope"), None);
    }
}

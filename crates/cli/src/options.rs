//! DTrace options (`-x name[=value]` and `#pragma D option`): their names, value syntax
//! (sizes like `4m`, rates like `10hz`) and the settings they produce. The output settings
//! (quiet mode, aggregation sorting) are the consumer's ([`Settings`]), which also owns
//! them at run time (`setopt()`).

use dtrace_consumer::aggregate::StackFormat;
use dtrace_consumer::policy::BufPolicy;
use dtrace_consumer::prometheus::Naming;
use dtrace_consumer::settings::{flag, number, INVALID_VALUE};
use dtrace_consumer::Settings;
use dtrace_runtime::{VERIFIER_LOG_SIZE_MAX, VERIFIER_LOG_SIZE_MIN};

use crate::refused_options as refused;

/// How records are written (`oformat`, FreeBSD DTrace's option name).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputFormat {
    /// DTrace's text (`oformat=text`, the default).
    #[default]
    Text,
    /// One JSON object per line (`oformat=json`).
    Json,
}

/// What to do with a buffer size larger than can be made (`bufresize`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BufResize {
    /// Lower it, and say so (DTrace's default).
    #[default]
    Auto,
    /// Refuse to trace.
    Manual,
}

/// The settings options control.
#[derive(Clone, Debug)]
pub struct Options {
    /// Quiet mode and the aggregation sort options.
    pub output: Settings,
    pub oformat: OutputFormat,
    pub bufsize: u64,
    pub bufresize: BufResize,
    /// `quietresize`: lower sizes without saying so.
    pub quietresize: bool,
    pub strsize: u64,
    /// `scratchsize`: the most one `alloca` (or `copyin`) may take.
    pub scratchsize: u64,
    pub dynvarsize: u64,
    pub aggsize: u64,
    /// Nanoseconds between buffer reads; `None` (Oracle's default, 0) reads as records come
    /// (`crate::session`).
    pub switchrate_ns: Option<u64>,
    /// Nanoseconds between the snapshots of the aggregations `printa()` shows (`aggrate`);
    /// `None` (Oracle's default, 0): each `printa()` reads them afresh.
    pub aggrate_ns: Option<u64>,
    /// Nanoseconds between status checks (`statusrate`): drop reports, and, when set, the
    /// moment an `exit()` ends tracing, as in DTrace. `None`: drops are reported every
    /// second and `exit()` ends tracing as soon as its record is read.
    pub statusrate_ns: Option<u64>,
    pub errtags: bool,
    /// `empty`: a script with no clause or declaration is no error.
    pub empty: bool,
    /// `argref`: macro arguments given need not be used.
    pub argref: bool,
    pub defaultargs: bool,
    pub destructive: bool,
    pub zdefs: bool,
    /// `version`: the D version the program is written to.
    pub version: u32,
    /// `tregs`: the tuple registers, which bound a key tuple's length.
    pub tregs: u32,
    /// `amin`: the least attributes a clause's probe description may have.
    pub amin: Option<dtrace_probes::attrs::Attr>,
    /// `pspec`: words at the outer scope are probe descriptions, never types.
    pub pspec: bool,
    /// `verbose`: list the generated eBPF code, as `-S` does.
    pub disassemble: bool,
    /// `disasm`: which listings `-S` prints (DTrace's bits, see `crate::disasm`).
    pub disasm: u32,
    /// `bpflog`: show the kernel verifier's log of every program loaded (`crate::bpflog`).
    pub bpflog: bool,
    /// `bpflogsize`: the size of the verifier log buffer given to the kernel.
    pub bpflogsize: Option<u32>,
    /// Default frames of `stack()` and `ustack()` (1..=127).
    pub stack_frames: u32,
    pub ustack_frames: u32,
    pub jstack_frames: u32,
    /// Where a `-c` command stands when tracing starts.
    pub evaltime: crate::evaltime::EvalTime,
    /// `maxframes`: the most frames any stack records or `stackdepth` counts (1..=127);
    /// larger requests are silently reduced, as in DTrace.
    pub max_frames: u32,
    /// `followfork`: probes named with a `-c`/`-p` pid (`pid$target`, `myapp$target`) also
    /// fire in that process's descendants (forks at any depth, their threads, and after
    /// `exec` wherever the new image maps a traced binary).
    pub followfork: bool,
    /// `cpu`: only probes firing on this CPU run their clauses (BEGIN, END and ERROR run on
    /// it too).
    pub cpu: Option<u32>,
    /// `bufpolicy`: what happens as a principal buffer fills.
    pub bufpolicy: BufPolicy,
    /// `postmortem`: where the postmortem of a traced process killed by a fatal signal is
    /// written (`bufpolicy=ring`; by default beside its core, see `crate::postmortem`).
    pub postmortem: Option<String>,
    /// `ringpin[=NAME]`: also keep the ring in a map pinned under the BPF file system, to
    /// outlive a `dtrace` that is killed (`crate::pinned`).
    pub ringpin: Option<String>,
    /// `ringread[=NAME]` / `ringclear[=NAME]`: print (or just remove) a pinned ring.
    pub ringread: Option<String>,
    pub ringclear: Option<String>,
    /// `nspec`: speculations active at once.
    pub nspec: u64,
    /// `specsize`: bytes one speculation may hold.
    pub specsize: u64,
    /// `stackformat`: how aggregations keyed by stacks print (`folded` for flame graphs).
    pub stackformat: StackFormat,
    /// `prometheus`: where to serve the aggregations to Prometheus while tracing.
    pub prometheus: Option<std::net::SocketAddr>,
    /// `promprefix` and `promlabels`: the names of what is served.
    pub naming: Naming,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            output: Settings::default(),
            oformat: OutputFormat::Text,
            bufsize: 4 << 20,
            bufresize: BufResize::Auto,
            quietresize: false,
            strsize: 256,
            scratchsize: 256,
            dynvarsize: 1 << 20,
            aggsize: 4 << 20,
            switchrate_ns: None,
            aggrate_ns: None,
            statusrate_ns: None,
            errtags: false,
            empty: false,
            argref: false,
            defaultargs: false,
            destructive: false,
            zdefs: false,
            disassemble: false,
            disasm: crate::disasm::CLAUSE,
            bpflog: false,
            bpflogsize: None,
            pspec: false,
            amin: None,
            tregs: dtrace_typing::cook::TUPLE_REGISTERS,
            version: dtrace_typing::builtins::CURRENT_VERSION,
            stack_frames: dtrace_backend::program::STACK_FRAMES,
            ustack_frames: dtrace_backend::program::USTACK_FRAMES,
            jstack_frames: dtrace_backend::program::JSTACK_FRAMES,
            evaltime: crate::evaltime::EvalTime::Main,
            max_frames: dtrace_backend::program::MAX_STACK_FRAMES,
            followfork: false,
            cpu: None,
            bufpolicy: BufPolicy::Switch,
            postmortem: None,
            ringpin: None,
            ringread: None,
            ringclear: None,
            nspec: 1,
            specsize: 4 << 20,
            stackformat: StackFormat::default(),
            prometheus: None,
            naming: Naming::default(),
        }
    }
}

/// Options that act where they are read from the command line's list: the preprocessor's
/// (`crate::preprocess`), the D library's (`crate::compile`) and `-G`'s linker
/// (`crate::provider_build`).
const READ_WHERE_THEY_ACT: &[&str] = &[
    "libdir", "ldpath", "cpp", "cpppath", "incdir", "define", "undef", "cppargs", "cpphdrs",
    "nolibs",
];

/// Options accepted with nothing to act on here: `temporal` (records come from one ring
/// shared by every CPU, in the order they were made), `lazyload` and `modpath` (no DOF
/// loader is linked, no module path is searched for types), and DTrace's own debugging
/// listing of parse trees (`tree`).
const NOTHING_TO_ACT_ON: &[&str] = &["temporal", "lazyload", "modpath", "tree"];

/// Options only the command line may set: they shape how the program is read.
const COMMAND_LINE_ONLY: &[&str] = &[
    "ringread",
    "ringclear",
    "cppargs",
    "cpphdrs",
    "cpppath",
    "define",
    "undef",
    "incdir",
    "ldpath",
    "ctfpath",
    "modpath",
    "procfspath",
    "stdc",
    "lockmem",
    // The D library is read before the program.
    "syslibdir",
];

/// DTrace's compile-time options (`dt_options.c`): `setopt()` may name them while tracing,
/// to no effect, the program being compiled.
const COMPILE_TIME: &[&str] = &[
    "aggpercpu",
    "amin",
    "argref",
    "core",
    "cpp",
    "cppargs",
    "cpphdrs",
    "cpppath",
    "ctypes",
    "ctfpath",
    "defaultargs",
    "debug",
    "debugassert",
    "define",
    "disasm",
    "dofstashpath",
    "droptags",
    "dtypes",
    "empty",
    "errtags",
    "evaltime",
    "incdir",
    "iregs",
    "kdefs",
    "knodefs",
    "late",
    "lazyload",
    "ldpath",
    "libdir",
    "linkmode",
    "linktype",
    "linknommap",
    "modpath",
    "nolibs",
    "pgmax",
    "preallocate",
    "procfspath",
    "pspec",
    "stdc",
    "strip",
    "syslibdir",
    "sysslice",
    "tree",
    "tregs",
    "udefs",
    "undef",
    "unodefs",
    "useruid",
    "verbose",
    "version",
    "zdefs",
];

/// Whether `name` is one of DTrace's compile-time options.
pub fn compile_time(name: &str) -> bool {
    COMPILE_TIME.contains(&name)
}

/// Why `linktype=dof` is refused.
const LINKTYPE_DOF: &str = "DOF objects are not made on Linux: -G writes ELF objects whose \
probes are stapsdt notes, which the kernel's uprobes fire without DTrace's DOF loader";

/// The integer registers DTrace's code generator was given (`iregs`).
const IREGS: i64 = 8;

/// The D language versions DTrace defines (`version`).
const VERSIONS: &[&str] = &[
    "1.0", "1.1", "1.2", "1.2.1", "1.2.2", "1.3", "1.4", "1.4.1", "1.5", "1.6", "1.6.1", "1.6.2",
    "1.6.3", "1.6.4", "1.7", "1.7.1", "1.8", "1.8.1", "1.9", "1.9.1", "1.10", "1.11", "1.12",
    "1.12.1", "1.13", "2.0",
];

/// A `version` value: a version DTrace defines, in `major.minor[.micro]` form; its code
/// ([`dtrace_typing::builtins::d_version`]).
fn version(value: Option<&str>) -> Result<u32, String> {
    let v = value.ok_or_else(|| INVALID_VALUE.to_string())?;
    let parts: Vec<&str> = v.split('.').collect();
    let numeric = |p: &&str| !p.is_empty() && p.len() <= 4 && p.bytes().all(|b| b.is_ascii_digit());
    if !(2..=3).contains(&parts.len()) || !parts.iter().all(numeric) {
        return Err("Version is not properly formatted or is too large".into());
    }
    if !VERSIONS.contains(&v) {
        return Err("Requested version is not supported by compiler".into());
    }
    let n = |i: usize| parts.get(i).map_or(0, |p| p.parse::<u32>().unwrap_or(0));
    Ok(dtrace_typing::builtins::d_version(n(0), n(1), n(2)))
}

impl Options {
    /// Apply `name[=value]` from a D program (`#pragma D option`): as [`Options::set`],
    /// except for the options only the command line may set.
    pub fn set_in_program(&mut self, name: &str, value: Option<&str>) -> Result<(), String> {
        if COMMAND_LINE_ONLY.contains(&name) {
            return Err("Option cannot be used from within a D program".into());
        }
        self.set(name, value)
    }

    /// Apply `name[=value]`; the error is DTrace's reason text.
    pub fn set(&mut self, name: &str, value: Option<&str>) -> Result<(), String> {
        if let Some(result) = self.output.set(name, value) {
            return result;
        }
        match name {
            "oformat" => {
                self.oformat = match value {
                    Some("text") => OutputFormat::Text,
                    Some("json") => OutputFormat::Json,
                    _ => return Err(INVALID_VALUE.into()),
                }
            }
            "bufresize" => {
                self.bufresize = match value {
                    Some("auto") => BufResize::Auto,
                    Some("manual") => BufResize::Manual,
                    _ => return Err(INVALID_VALUE.into()),
                }
            }
            "quietresize" => self.quietresize = flag(value)?,
            "errtags" => self.errtags = flag(value)?,
            "empty" => self.empty = flag(value)?,
            "argref" => self.argref = flag(value)?,
            "defaultargs" => self.defaultargs = flag(value)?,
            "destructive" => self.destructive = flag(value)?,
            "zdefs" => self.zdefs = flag(value)?,
            "verbose" => self.disassemble = compiler_flag(value)?,
            "disasm" => {
                self.disasm =
                    crate::disasm::parse(value).ok_or_else(|| INVALID_VALUE.to_string())?
            }
            "pspec" => self.pspec = compiler_flag(value)?,
            "grabanon" => return Err(crate::args::ANONYMOUS.into()),
            // Process-wide, as DTrace's.
            "debug" => {
                compiler_flag(value)?;
                crate::debug::enable();
            }
            "amin" => {
                let attr = value.and_then(dtrace_probes::attrs::Attr::parse);
                self.amin = Some(attr.ok_or_else(|| INVALID_VALUE.to_string())?);
            }
            "followfork" => self.followfork = flag(value)?,
            "cpu" => {
                let cpu = value.and_then(|v| v.parse::<u32>().ok());
                self.cpu = Some(cpu.ok_or_else(|| INVALID_VALUE.to_string())?);
            }
            "bufsize" => self.bufsize = size(value)?,
            "specsize" => self.specsize = size(value)?,
            "bufpolicy" => {
                self.bufpolicy = value
                    .and_then(BufPolicy::parse)
                    .ok_or_else(|| INVALID_VALUE.to_string())?
            }
            "postmortem" => match value {
                Some(path) if !path.is_empty() => self.postmortem = Some(path.to_string()),
                _ => return Err(INVALID_VALUE.into()),
            },
            "ringpin" | "ringread" | "ringclear" => {
                let pin = crate::pinned::name(value).ok_or_else(|| INVALID_VALUE.to_string())?;
                *match name {
                    "ringpin" => &mut self.ringpin,
                    "ringread" => &mut self.ringread,
                    _ => &mut self.ringclear,
                } = Some(pin);
            }
            "nspec" => self.nspec = count(value)?,
            "stackformat" => {
                self.stackformat = match value {
                    Some("folded") => StackFormat::Folded,
                    Some("lines") => StackFormat::default(),
                    _ => return Err(INVALID_VALUE.into()),
                }
            }
            "prometheus" => {
                let addr = crate::prometheus::address(value);
                self.prometheus = Some(addr.ok_or_else(|| INVALID_VALUE.to_string())?);
            }
            "promprefix" => self.naming.set_prefix(value.unwrap_or(""))?,
            "promlabels" => self.naming.set_labels(value.unwrap_or(""))?,
            "strsize" => {
                // At least room for an empty string's NUL and one character.
                self.strsize = size(value)?;
                if self.strsize < 2 {
                    self.strsize = 256;
                    return Err(INVALID_VALUE.into());
                }
            }
            "version" => self.version = version(value)?,
            "stdc" => match value {
                Some("a" | "c" | "t" | "s") => {}
                _ => return Err(INVALID_VALUE.into()),
            },
            // How kernel symbol references are bound: always when compiled here (from
            // kallsyms), as the program is loaded at once; no later link step exists.
            "linkmode" => match value {
                Some("kernel" | "dynamic" | "static") => {}
                _ => return Err(INVALID_VALUE.into()),
            },
            "linktype" => match value {
                Some("elf") => {}
                Some("dof") => return Err(LINKTYPE_DOF.into()),
                _ => return Err(INVALID_VALUE.into()),
            },
            "tregs" => match value.and_then(|v| v.parse::<u32>().ok()) {
                Some(n) if n > 0 => self.tregs = n,
                _ => return Err(INVALID_VALUE.into()),
            },
            "iregs" => match value.and_then(|v| v.parse::<i64>().ok()) {
                Some(IREGS) => {}
                Some(1..IREGS) => return Err("Insufficient registers to generate code".into()),
                _ => return Err(INVALID_VALUE.into()),
            },
            "bpflog" => self.bpflog = flag(value)?,
            "bpflogsize" => {
                let n = size(value)?;
                let kernel = VERIFIER_LOG_SIZE_MIN as u64..=VERIFIER_LOG_SIZE_MAX as u64;
                if !kernel.contains(&n) {
                    return Err(INVALID_VALUE.into());
                }
                self.bpflogsize = Some(n as u32);
            }
            // Read where it acts: the D library is read from it (`crate::compile`).
            "syslibdir" => {
                value.ok_or(INVALID_VALUE)?;
            }
            // -G reads and writes its objects, and maps none.
            "linknommap" => {}
            "late" => match value {
                Some("static") => {}
                Some("dynamic") => return Err(refused::LATE_DYNAMIC.into()),
                _ => return Err(INVALID_VALUE.into()),
            },
            "debugassert" => match value {
                Some("mutexes") => return Err(refused::DEBUGASSERT.into()),
                _ => return Err(INVALID_VALUE.into()),
            },
            "ctypes" | "dtypes" | "dofstashpath" | "sysslice" => {
                value.ok_or(INVALID_VALUE)?;
                return Err(match name {
                    "dofstashpath" => refused::DOF_STASH,
                    "sysslice" => refused::SYSTEM_DAEMONS,
                    _ => refused::CTF_FILES,
                }
                .into());
            }
            "pgmax" | "useruid" => {
                count(value)?;
                return Err(match name {
                    "pgmax" => refused::PGMAX,
                    _ => refused::SYSTEM_DAEMONS,
                }
                .into());
            }
            "preallocate" => {
                size(value)?;
                return Err(refused::PREALLOCATE.into());
            }
            // As DTrace, no value is its default.
            "pcapsize" => {
                if value.is_some() {
                    size(value)?;
                }
                return Err(refused::PCAPSIZE.into());
            }
            "scratchsize" => self.scratchsize = size(value)?,
            "dynvarsize" => self.dynvarsize = size(value)?,
            "aggsize" => self.aggsize = size(value)?,
            "switchrate" => self.switchrate_ns = Some(rate(value)?),
            "aggrate" => self.aggrate_ns = Some(rate(value)?),
            "statusrate" => self.statusrate_ns = Some(rate(value)?),
            "stackframes" => self.stack_frames = frames(value)?,
            "ustackframes" => self.ustack_frames = frames(value)?,
            "jstackframes" => self.jstack_frames = frames(value)?,
            "evaltime" => {
                self.evaltime = value
                    .and_then(crate::evaltime::EvalTime::parse)
                    .ok_or(INVALID_VALUE)?
            }
            "maxframes" => self.max_frames = frames(value)?,
            // How often DTrace's kernel cleans dirty dynamic variables and spent speculation
            // buffers: here nothing waits for a cleaner (a deleted element's space is free
            // at once; a speculation's id once the session has read its records), so any
            // rate holds. Checked as DTrace checks a rate.
            "cleanrate" => {
                rate(value)?;
            }
            // The size of the string table a Java VM's ustack helper fills in the kernel for
            // jstack(): Linux runs no ustack helpers, and the consumer names jstack()'s
            // frames from the process's symbols, unbounded. Checked as DTrace checks a size.
            "jstackstrsize" => {
                size(value)?;
            }
            // Compiler flags with nothing to act on: kernel and user symbol references
            // need not resolve (they are bound when compiled or refused), or must (`kdefs`,
            // `udefs`: as they always do here), and -G's object has no non-loadable
            // sections to strip.
            "knodefs" | "unodefs" | "kdefs" | "udefs" | "strip" => {
                compiler_flag(value)?;
            }
            "core" => {
                compiler_flag(value)?;
                crate::debug::dump_core_at_exit();
            }
            _ if READ_WHERE_THEY_ACT.contains(&name) || NOTHING_TO_ACT_ON.contains(&name) => {}
            _ => return Err("Invalid option name".into()),
        }
        Ok(())
    }
}

/// A compiler flag (`verbose`, `pspec`): set by naming it; it takes no value.
fn compiler_flag(value: Option<&str>) -> Result<bool, String> {
    match value {
        None => Ok(true),
        Some(_) => Err(INVALID_VALUE.into()),
    }
}

/// A frame count for `stackframes`/`ustackframes`: 1 to the most the kernel unwinds.
fn frames(value: Option<&str>) -> Result<u32, String> {
    match number(value)? {
        n @ 1..=127 => Ok(n as u32),
        _ => Err(INVALID_VALUE.into()),
    }
}

/// A count (`nspec`): a non-negative integer, decimal, octal (`0` prefix) or hexadecimal
/// (`0x`), that fits in 64 bits.
fn count(value: Option<&str>) -> Result<u64, String> {
    let bad = || INVALID_VALUE.to_string();
    let v = value.ok_or_else(bad)?;
    let parsed = if let Some(hex) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16)
    } else if v.len() > 1 && v.starts_with('0') {
        u64::from_str_radix(&v[1..], 8)
    } else {
        v.parse::<u64>()
    };
    parsed.map_err(|_| bad())
}

/// A size: bytes, or with a `k m g t` suffix.
fn size(value: Option<&str>) -> Result<u64, String> {
    let bad = || INVALID_VALUE.to_string();
    let v = value.ok_or_else(bad)?.to_ascii_lowercase();
    let (digits, mult) = match v.chars().last() {
        Some('k') => (&v[..v.len() - 1], 1u64 << 10),
        Some('m') => (&v[..v.len() - 1], 1 << 20),
        Some('g') => (&v[..v.len() - 1], 1 << 30),
        Some('t') => (&v[..v.len() - 1], 1 << 40),
        _ => (v.as_str(), 1),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(bad)
}

/// A rate: `N` or `Nhz` per second, or a period with a time unit (`10ms`, `1s`); the
/// unit's case does not matter (`10Hz`), as in DTrace.
fn rate(value: Option<&str>) -> Result<u64, String> {
    let bad = || INVALID_VALUE.to_string();
    let v = value.ok_or_else(bad)?;
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    let n: u64 = v[..digits].parse().map_err(|_| bad())?;
    if n == 0 {
        return Err(bad());
    }
    let unit: u64 = match v[digits..].to_ascii_lowercase().as_str() {
        "" | "hz" => return Ok(1_000_000_000 / n),
        "ns" | "nsec" => 1,
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" | "hour" => 3_600_000_000_000,
        "d" | "day" => 86_400_000_000_000,
        _ => return Err(bad()),
    };
    n.checked_mul(unit).ok_or_else(bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        let mut o = Options::default();
        o.set("bufsize", Some("16m")).unwrap();
        assert_eq!(o.bufsize, 16 << 20);
        o.set("switchrate", Some("10hz")).unwrap();
        assert_eq!(o.switchrate_ns, Some(100_000_000));
        o.set("switchrate", Some("4Hz")).unwrap();
        assert_eq!(o.switchrate_ns, Some(250_000_000));
        o.set("aggrate", Some("250ms")).unwrap();
        assert_eq!(o.aggrate_ns, Some(250_000_000));
        o.set("quiet", None).unwrap();
        assert!(o.output.quiet);
        o.set("aggsortkey", None).unwrap();
        assert!(o.output.sort.by_key);
        assert!(o.set("nonsense", None).is_err());
        assert!(o.set("strsize", Some("x")).is_err());
        assert_eq!(o.oformat, OutputFormat::Text);
        o.set("oformat", Some("json")).unwrap();
        assert_eq!(o.oformat, OutputFormat::Json);
        assert_eq!(o.set("oformat", Some("xml")), Err(INVALID_VALUE.into()));
        assert_eq!(o.set("oformat", None), Err(INVALID_VALUE.into()));
        o.set("stackformat", Some("folded")).unwrap();
        assert_eq!(o.stackformat, StackFormat::Folded);
        assert!(o.set("stackformat", Some("flame")).is_err());
        assert_eq!(o.prometheus, None);
        o.set("prometheus", None).unwrap();
        assert_eq!(o.prometheus.map(|a| a.port()), Some(9464));
        assert!(o.set("prometheus", Some("nowhere")).is_err());
        assert!(o.set("promlabels", Some("reads:fd")).is_ok());
        assert!(o.set("promprefix", Some("1")).is_err());
        assert!(o.set("cleanrate", Some("3000hz")).is_ok());
        assert!(o.set("cleanrate", Some("fast")).is_err());
        assert!(o.set("jstackstrsize", Some("2k")).is_ok());
        assert!(o.set("jstackstrsize", None).is_err());
    }

    #[test]
    fn verifier_log_options() {
        let mut o = Options::default();
        assert_eq!((o.bpflog, o.bpflogsize), (false, None));
        o.set("bpflog", None).unwrap();
        o.set("bpflogsize", Some("128")).unwrap();
        assert_eq!((o.bpflog, o.bpflogsize), (true, Some(128)));
        o.set("bpflogsize", Some("1g")).unwrap_err();
        o.set("bpflogsize", Some("127")).unwrap_err();
        o.set("bpflog", Some("off")).unwrap();
        assert!(!o.bpflog);
    }

    #[test]
    fn compile_time_options_are_dtraces() {
        for name in ["late", "useruid", "syslibdir", "zdefs", "version"] {
            assert!(compile_time(name), "{name}");
        }
        for name in ["bpflog", "bpflogsize", "pcapsize", "quiet", "switchrate"] {
            assert!(!compile_time(name), "{name}");
        }
    }
}

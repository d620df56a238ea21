//! What the tracing loop produces, as calls on an [`Output`]: one method per kind of output
//! (a probe firing's default line, `trace()`, stacks, `printf()`, `printa()`, aggregations
//! at the end, run-time errors, drops, the exit, "matched N probes" messages, warnings).
//!
//! Two implementations: [`Text`] writes what DTrace writes, byte for byte; [`Json`] writes
//! one JSON object per line (`-x oformat=json`, see `docs/JSON.md`).

mod json;
mod json_syntax;
mod text;

pub use json::Json;
pub use text::Text;

use dtrace_abi::datum::ValueType;
use dtrace_abi::desc::Probe;
use dtrace_abi::record::{DropKind, Fault};

use crate::aggregate::{Aggregation, SortOptions};
use crate::printf::Format;
use crate::value::{Frame, Value};

/// One firing of an enabled probe whose record is being output.
#[derive(Clone, Copy, Debug)]
pub struct Firing<'a> {
    pub epid: u32,
    pub cpu: u32,
    pub probe: &'a Probe,
    /// Quiet mode (`-q`): only explicitly traced data is shown, bare.
    pub quiet: bool,
    /// With flow indentation (`-F`): the function column (indentation, `->`, `<-` or
    /// `|`, the function).
    pub flow: Option<&'a str>,
    /// The columns stack frames are indented by (`stackindent`).
    pub stack_indent: usize,
}

/// A stack: `stack()`, `ustack()`, or `trace()` of one.
#[derive(Clone, Copy, Debug)]
pub struct Stack<'a> {
    /// Innermost first.
    pub frames: &'a [Frame],
    /// The process of a user stack; `None` for a kernel stack.
    pub pid: Option<u32>,
}

/// A `printa()`.
#[derive(Clone, Copy, Debug)]
pub struct Printa<'a> {
    /// The format as written, if any.
    pub format: Option<&'a [u8]>,
    /// The format parsed; `None` (the default layout) without one, or when it does not
    /// parse.
    pub parsed: Option<&'a Format>,
    /// The aggregations, in the order named.
    pub aggregations: &'a [Aggregation],
    pub sort: &'a SortOptions,
}

/// A run-time error in a clause (DTrace's ERROR).
#[derive(Clone, Copy, Debug)]
pub struct ProbeFault<'a> {
    pub epid: u32,
    /// The faulting clause's statement number (`dt_clause_N`).
    pub statement: u32,
    pub probe: &'a Probe,
    pub cpu: u32,
    /// The fault's kind; `None` for a number DTrace does not define.
    pub kind: Option<Fault>,
    /// The fault's `DTRACEFLT_*` number.
    pub code: u32,
    /// The faulting address (meaningful for address faults).
    pub addr: u64,
    /// 1-based action number; 0 for the predicate.
    pub action: u32,
    /// Offset of the faulting instruction in the probe's program.
    pub offset: i32,
}

/// Newly dropped data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Drops {
    pub kind: DropKind,
    /// The CPU, for per-CPU drops (records, nested firings); `None` for totals.
    pub cpu: Option<u32>,
    /// How many since the last report.
    pub count: u64,
    /// Whether the message carries the kind's tag (`droptags`).
    pub tagged: bool,
}

/// Where the consumer's output goes, one call per thing to show. Writes are best-effort:
/// a closed output (a pipe whose reader left) is the signal handler's business, not an
/// error here.
pub trait Output {
    /// `dtrace: description 'X' matched N probes` (`kind` is "description" or "script").
    fn matched(&mut self, kind: &str, name: &str, count: u32);
    /// A probe fired and quiet mode is off: DTrace's `CPU ID FUNCTION:NAME` line start.
    fn probe(&mut self, firing: &Firing<'_>);
    /// `trace()` of a value of type `ty` (symbols included; stacks go to [`Output::stack`]).
    fn trace(&mut self, firing: &Firing<'_>, value: &Value, ty: &ValueType);
    /// A stack.
    fn stack(&mut self, firing: &Firing<'_>, stack: &Stack<'_>);
    /// `printf()`: the formatted bytes, and the arguments as recorded.
    fn printf(&mut self, firing: &Firing<'_>, text: &[u8], args: &[Value]);
    /// `printa()`.
    fn printa(&mut self, firing: &Firing<'_>, printa: &Printa<'_>);
    /// The end of a firing's output.
    fn firing_end(&mut self, firing: &Firing<'_>);
    /// A run-time error.
    fn fault(&mut self, fault: &ProbeFault<'_>);
    /// Data dropped since the last report.
    fn drops(&mut self, drops: &Drops);
    /// The aggregations when tracing ends (those `printa()` did not print).
    fn aggregations(
        &mut self,
        aggregations: &[Aggregation],
        sort: &SortOptions,
        stack_indent: usize,
    );
    /// The traced process `pid` died of the fatal signal named `signal` (`SIGSEGV`), after
    /// the records a postmortem shows.
    fn fatal_signal(&mut self, pid: i32, signal: &str);
    /// The end of the run, with `dtrace`'s exit status.
    fn exit(&mut self, status: i32);
    /// A message about the run (a failed `setopt()`, a probe that could not fire), without
    /// DTrace's `dtrace: ` prefix and newline.
    fn warning(&mut self, message: &str);
    /// Push out what is buffered.
    fn flush(&mut self);
}

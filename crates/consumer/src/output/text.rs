//! DTrace's text output, byte for byte: traced data, `printf()`, `printa()` and the
//! aggregations on the output stream; errors, drops and other messages on stderr (after the
//! output stream is flushed, so they interleave as they happened).

use std::io::Write;

use dtrace_abi::datum::ValueType;
use dtrace_abi::record::{DropKind, SCRATCH_LEVELS};

use super::{Drops, Firing, Output, Printa, ProbeFault, Stack};
use crate::aggregate::{self, Aggregation, SortOptions, StackFormat};
use crate::value::Value;
use crate::{messages, trace};

/// DTrace's text.
pub struct Text {
    out: Box<dyn Write>,
    /// Whether the `CPU ID FUNCTION:NAME` heading was printed.
    heading_done: bool,
    /// How aggregations keyed by stacks print (`stackformat`).
    stacks: StackFormat,
}

impl Text {
    /// Text written to `out` (stdout or the `-o` file).
    pub fn new(out: Box<dyn Write>) -> Text {
        Text {
            out,
            heading_done: false,
            stacks: StackFormat::default(),
        }
    }

    /// Print aggregations keyed by stacks as `stacks` says (`-x stackformat`).
    pub fn with_stacks(mut self, stacks: StackFormat) -> Text {
        self.stacks = stacks;
        self
    }

    fn write(&mut self, bytes: &[u8]) {
        let _ = self.out.write_all(bytes);
    }

    /// A message on stderr, after what is already written.
    fn message(&mut self, text: &str) {
        let _ = self.out.flush();
        eprint!("{text}");
    }
}

impl Output for Text {
    fn matched(&mut self, kind: &str, name: &str, count: u32) {
        self.message(&messages::matched_probes(kind, name, count));
    }

    fn probe(&mut self, firing: &Firing<'_>) {
        if !self.heading_done {
            self.heading_done = true;
            let heading = match firing.flow {
                Some(_) => trace::flow_heading(),
                None => trace::heading(),
            };
            self.write(heading.as_bytes());
        }
        let probe = firing.probe;
        let prefix = match firing.flow {
            Some(column) => trace::flow_prefix(firing.cpu, column),
            None => trace::probe_prefix(firing.cpu, probe.id, &probe.function, &probe.name),
        };
        self.write(prefix.as_bytes());
    }

    fn trace(&mut self, firing: &Firing<'_>, value: &Value, ty: &ValueType) {
        match (value, ty) {
            // `tracemem()`: a hex dump, nothing when no bytes are shown.
            (Value::Bytes(bytes), ValueType::Memory { .. }) => {
                if !bytes.is_empty() {
                    self.write(trace::hex_dump(bytes).as_bytes())
                }
            }
            _ => self.write(&trace::trace_record(
                value,
                firing.quiet,
                firing.stack_indent,
            )),
        }
    }

    fn stack(&mut self, firing: &Firing<'_>, stack: &Stack<'_>) {
        self.write(trace::stack_text(stack.frames, firing.stack_indent).as_bytes());
    }

    fn printf(&mut self, _firing: &Firing<'_>, text: &[u8], _args: &[Value]) {
        self.write(text);
    }

    fn printa(&mut self, firing: &Firing<'_>, printa: &Printa<'_>) {
        let aggs: Vec<&Aggregation> = printa.aggregations.iter().collect();
        let text = match printa.parsed {
            Some(f) => aggregate::printa_format(f, &aggs, printa.sort),
            None => aggregate::printa(
                &aggs,
                printa.sort,
                self.stacks.indented(firing.stack_indent),
            ),
        };
        self.write(&text);
    }

    fn firing_end(&mut self, firing: &Firing<'_>) {
        self.write(trace::firing_end(firing.quiet).as_bytes());
    }

    fn fault(&mut self, fault: &ProbeFault<'_>) {
        let what = messages::fault_text(fault.kind, fault.addr);
        let text = messages::probe_error(fault.statement, fault.probe, &what, Some(fault.offset));
        self.message(&text);
    }

    fn drops(&mut self, drops: &Drops) {
        let cpu = drops.cpu.unwrap_or(0);
        let text = match drops.kind {
            DropKind::Record => messages::cpu_drops(drops.count, cpu),
            DropKind::Nested => messages::nested_drops(drops.count, cpu, SCRATCH_LEVELS),
            DropKind::Dynamic => messages::status_drops(messages::StatusDrop::Dynamic, drops.count),
            DropKind::ErrorInError => {
                messages::status_drops(messages::StatusDrop::ErrorInErrorProbe, drops.count)
            }
            DropKind::Aggregation => messages::aggregation_drops(drops.count, cpu),
            DropKind::Speculative => {
                messages::status_drops(messages::StatusDrop::Speculative, drops.count)
            }
            DropKind::SpecBusy => {
                messages::status_drops(messages::StatusDrop::SpeculationBusy, drops.count)
            }
            DropKind::SpecUnavail => {
                messages::status_drops(messages::StatusDrop::SpeculationUnavailable, drops.count)
            }
        };
        let tag = drops.tagged.then(|| messages::drop_tag(drops.kind));
        self.message(&messages::drop_line(&text, tag));
    }

    fn aggregations(
        &mut self,
        aggregations: &[Aggregation],
        sort: &SortOptions,
        stack_indent: usize,
    ) {
        let out = &mut self.out;
        let stacks = self.stacks.indented(stack_indent);
        aggregate::write_exit(aggregations, sort, stacks, &mut |piece| {
            let _ = out.write_all(piece);
        });
    }

    fn fatal_signal(&mut self, pid: i32, signal: &str) {
        let _ = self
            .out
            .write_all(messages::fatal_signal(pid, signal).as_bytes());
    }

    fn exit(&mut self, _status: i32) {
        self.flush();
    }

    fn warning(&mut self, message: &str) {
        self.message(&format!("dtrace: {message}\n"));
    }

    fn flush(&mut self) {
        let _ = self.out.flush();
    }
}

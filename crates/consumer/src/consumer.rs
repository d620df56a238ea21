//! The consumer proper: it takes the kernel's bytes — ring-buffer records, aggregation map
//! entries (through [`AggregationMaps`]), drop counters — decodes them with the program's
//! [`ProgramDesc`], keeps what DTrace's consumer keeps between records (aggregation
//! normalization, drops reported so far, the exit status, parsed formats, symbols), and
//! drives an [`Output`]. What records ask beyond the output (`system()`, `freopen()`,
//! options the consumer does not own) goes to its [`Effects`].

use std::collections::HashMap;
use std::rc::Rc;

use dtrace_abi::datum::ValueType;
use dtrace_abi::desc::{ActionKind, Field, ProgramDesc, SetoptArg};
use dtrace_abi::record::{DropKind, Fault, FAULT_EPID, SPEC_ID_SIZE};
use dtrace_abi::u64_at;

use crate::aggregate::{AggregationMaps, Aggregations};
use crate::decode;
use crate::flow::FlowIndent;
use crate::output::{Drops, Firing, Output, Printa, ProbeFault, Stack};
use crate::policy::{Admit, BufPolicy, Buffers};
use crate::printf::{self, Format};
use crate::settings::Settings;
use crate::speculations::{Kept, Speculations};
use crate::symbolize::Symbolizer;
use crate::value::Value;

/// What records ask of the world beyond the output, done when the record is read, in
/// the order of its actions (the output written before is flushed first).
pub trait Effects {
    /// `system()`: run `command` with `/bin/sh`, and wait for it. The command is bytes:
    /// a D string may hold any (`"\xc0"`), and the shell gets them as written.
    fn system(&mut self, command: &[u8]) -> Result<(), String>;
    /// `freopen()`: the output goes to `path` from now on (`""`: the original output).
    fn freopen(&mut self, path: &[u8]) -> Result<(), String>;
    /// `ftruncate()`: empty the output file.
    fn ftruncate(&mut self);
    /// `setopt()` of an option that is not an output setting, while tracing: DTrace's
    /// reason when it cannot be set then.
    fn setopt(&mut self, option: &str, value: Option<&str>) -> Result<(), String>;
}

/// The drop counts reported so far.
#[derive(Default)]
struct DropsSeen {
    /// Per CPU: record, nested-firing and aggregation drops.
    records: Vec<u64>,
    nested: Vec<u64>,
    aggregation: Vec<u64>,
    /// Dynamic variable drops, all CPUs together.
    dynamic: u64,
    /// Faults in ERROR clauses, all CPUs together.
    errors: u64,
    /// Speculative drops and failed speculations (busy, unavailable), all CPUs together.
    speculative: u64,
    busy: u64,
    unavailable: u64,
}

/// Records and aggregations in, output out.
pub struct Consumer {
    desc: Rc<ProgramDesc>,
    settings: Settings,
    output: Box<dyn Output>,
    symbols: Symbolizer,
    aggs: Aggregations,
    formats: HashMap<Vec<u8>, Option<Format>>,
    drops: DropsSeen,
    exit_status: Option<i32>,
    /// The first `-c`/`-p` process: whose addresses `%A` resolves (`$target`).
    target_pid: u32,
    specs: Speculations,
    buffers: Buffers,
    flow: FlowIndent,
    effects: Option<Box<dyn Effects>>,
}

impl Consumer {
    /// Decode with `desc` from now on: the program's description after probes were added
    /// while tracing (the same epids, aggregations and layouts, and more epids).
    pub fn set_desc(&mut self, desc: ProgramDesc) {
        self.desc = Rc::new(desc);
    }

    pub fn new(desc: ProgramDesc, settings: Settings, output: Box<dyn Output>) -> Consumer {
        let aggs = Aggregations::new(&desc.aggregations);
        let mut symbols = Symbolizer::new();
        symbols.set_noresolve(settings.noresolve);
        Consumer {
            desc: Rc::new(desc),
            settings,
            output,
            symbols,
            aggs,
            formats: HashMap::new(),
            drops: DropsSeen::default(),
            exit_status: None,
            target_pid: 0,
            specs: Speculations::default(),
            buffers: Buffers::default(),
            flow: FlowIndent::default(),
            effects: None,
        }
    }

    /// Read what decoding will need before tracing starts — kernel symbols, when records or
    /// keys hold kernel stacks or symbols — so that the first record is not held up by it.
    pub fn prepare(&mut self) {
        if self.desc.has_kernel_data() {
            self.symbols.load_kernel();
        }
    }

    /// The process whose addresses `%A` resolves.
    pub fn set_target(&mut self, pid: u32) {
        self.target_pid = pid;
    }

    /// The status of the first `exit()` seen, if any.
    pub fn exit_status(&self) -> Option<i32> {
        self.exit_status
    }

    /// `dtrace: description 'X' matched N probes`, unless quiet.
    pub fn matched(&mut self, kind: &str, name: &str, count: u32) {
        if !self.settings.quiet {
            self.output.matched(kind, name, count);
        }
    }

    /// A message about the run (without `dtrace: ` and the newline).
    pub fn warning(&mut self, message: &str) {
        self.output.warning(message);
    }

    pub fn flush(&mut self) {
        self.output.flush();
    }

    /// Read the mappings of the processes a record's user stacks and symbols name, while
    /// they may still run: symbolizing records can take longer than a process lives.
    pub fn see_processes(&mut self, rec: &[u8]) {
        let Some(ep) = self.desc.probe(decode::header(rec).epid) else {
            return;
        };
        for action in &ep.actions {
            if let ActionKind::Trace(f) = &action.kind {
                if let Some(d) = f.ty.datum().filter(|d| d.user()) {
                    let pid = decode::datum_pid(rec, f.offset as usize, d);
                    self.symbols.see_process(pid);
                }
            }
        }
    }

    /// The same for the processes of user stack and symbol aggregation keys.
    /// Processes no key names any more are forgotten, so that what is kept stays bounded
    /// however many come and go — unless records kept for later (`bufpolicy=ring`,
    /// speculations not settled) may still name them.
    pub fn see_aggregation_processes(&mut self, maps: &dyn AggregationMaps) {
        let named = self.aggs.see_processes(maps, &mut self.symbols);
        if self.buffers.policy != BufPolicy::Ring && self.specs.is_empty() {
            self.symbols.retain_processes(&named);
        }
    }

    /// Decode and output one ring-buffer record.
    pub fn record(&mut self, rec: &[u8], maps: &dyn AggregationMaps) {
        self.decode_record(rec, maps, false);
    }

    /// Decode and output `rec`; `admitted`: a record past speculations and the buffer
    /// policy already (being committed, or kept by a ring).
    fn decode_record(&mut self, rec: &[u8], maps: &dyn AggregationMaps, admitted: bool) {
        let header = decode::header(rec);
        if header.epid == FAULT_EPID {
            self.fault(rec);
            return;
        }
        let desc = Rc::clone(&self.desc);
        let Some(ep) = desc.probe(header.epid) else {
            return;
        };
        let ran = || ep.actions.iter().filter(|a| a.ran(header.presence));
        let dtrace_probe = |name: &str| ep.probe.provider == "dtrace" && ep.probe.name == name;
        let drains = dtrace_probe("END") || dtrace_probe("ERROR");
        // After exit(), records of other firings (on other CPUs at the same moment) are
        // not shown: exit() from several CPUs at once prints once, as in DTrace.
        if self.exit_status.is_some() && !drains && !admitted {
            return;
        }
        if !admitted {
            let spec = ran().find_map(|a| match &a.kind {
                ActionKind::Speculate(f) => Some(u64_at(rec, f.offset as usize)),
                _ => None,
            });
            if let Some(id) = spec.filter(|&id| id != 0) {
                // DTrace counts a record's bytes without the id, which it keeps in the
                // record's header.
                let size = rec.len().saturating_sub(SPEC_ID_SIZE as usize) as u64;
                if self.specs.record(id, rec, size) == Kept::Aside {
                    return;
                }
            }
            let size = crate::policy::counted_size(ran());
            match self
                .buffers
                .admit(header.cpu, rec, size, dtrace_probe("END"))
            {
                Admit::Show => {}
                Admit::Kept => {
                    // Shown at the end, but an exit() in it stops tracing now.
                    for a in ran() {
                        if let ActionKind::Exit(f) = &a.kind {
                            self.exit_status = Some(exit_status(rec, f));
                        }
                    }
                    return;
                }
                Admit::Full => {
                    self.exit_status.get_or_insert(0);
                    return;
                }
            }
        }
        // A clause of only commit() and discard() records nothing the user sees.
        let shown = !ran()
            .all(|a| matches!(a.kind, ActionKind::Commit(_) | ActionKind::Discard(_)))
            || ran().next().is_none();
        let flow =
            (shown && self.settings.flowindent).then(|| self.flow.column(&ep.probe, ep.statement));
        let stack_indent = self.settings.stack_indent();
        let firing = |quiet| Firing {
            epid: ep.epid,
            cpu: header.cpu,
            probe: &ep.probe,
            quiet,
            flow: flow.as_deref(),
            stack_indent,
        };
        // Flow indentation shows the function column even when quiet, as DTrace does.
        if shown && (!self.settings.quiet || flow.is_some()) {
            self.output.probe(&firing(false));
        }
        let mut committing = Vec::new();
        for action in ran() {
            let f = firing(self.settings.quiet);
            match &action.kind {
                ActionKind::Commit(f) => {
                    committing.extend(self.specs.commit(u64_at(rec, f.offset as usize)));
                }
                ActionKind::Discard(f) => self.specs.discard(u64_at(rec, f.offset as usize)),
                kind => self.action(&f, kind, rec, maps),
            }
        }
        if shown && !self.settings.quiet {
            self.output.firing_end(&firing(false));
        }
        for rec in committing {
            self.decode_record(&rec, maps, true);
        }
    }

    /// The speculations committed or discarded, with the number of their records read so
    /// far: once the kernel counted as many written, the id can be freed.
    pub fn settled_speculations(&self) -> Vec<(u32, u64)> {
        self.specs.settled()
    }

    /// The kernel freed speculation `id`.
    pub fn forget_speculation(&mut self, id: u32) {
        self.specs.forget(id);
    }

    /// Who runs `system()` commands and redirects the output; without one, those actions
    /// do nothing.
    pub fn set_effects(&mut self, effects: Box<dyn Effects>) {
        self.effects = Some(effects);
    }

    /// The buffer policy and the principal buffer's size (`bufpolicy`, `bufsize`).
    pub fn set_buffers(&mut self, policy: BufPolicy, bufsize: u64) {
        self.buffers.policy = policy;
        self.buffers.bufsize = bufsize;
    }

    /// A `setopt()` of the clause of `epid` failed: DTrace's error line.
    fn setopt_failed(&mut self, epid: u32, option: &str, value: Option<&str>, why: &str) {
        let desc = Rc::clone(&self.desc);
        let Some(ep) = desc.probe(epid) else {
            return;
        };
        let what = format!(
            "couldn't set option \"{option}\" to \"{}\": {why}",
            value.unwrap_or("1")
        );
        // DTrace's error line, and the empty line it prints after a library error.
        let text = crate::messages::probe_error(ep.statement, &ep.probe, &what, None);
        let text = text.strip_prefix("dtrace: ").unwrap_or(&text);
        self.output.warning(text);
    }

    /// Bytes one speculation may keep (`specsize`).
    pub fn set_specsize(&mut self, bytes: u64) {
        self.specs.specsize = bytes;
    }

    fn action(
        &mut self,
        firing: &Firing<'_>,
        kind: &ActionKind,
        rec: &[u8],
        maps: &dyn AggregationMaps,
    ) {
        let int_at = |f: &Field| u64_at(rec, f.offset as usize);
        match kind {
            ActionKind::Trace(field) => {
                let v = decode::value(rec, field, &mut self.symbols);
                match raw_bytes(&v, &field.ty).filter(|_| self.settings.rawbytes) {
                    Some(bytes) => {
                        let ty = ValueType::Memory {
                            size: bytes.len() as u32,
                            dynamic: false,
                        };
                        self.output.trace(firing, &Value::Bytes(bytes), &ty);
                    }
                    None => self.trace(firing, &v, &field.ty),
                }
            }
            ActionKind::Print {
                offset,
                size,
                layout,
            } => {
                let at = *offset as usize + 8;
                let bytes = rec.get(at..at + *size as usize).unwrap_or_default();
                let limit = self.settings.printsize.map_or(usize::MAX, |n| n as usize);
                let addr = u64_at(rec, *offset as usize);
                let text = crate::print::print(addr, layout, bytes, limit);
                let addr = Value::Int {
                    value: addr,
                    size: 8,
                    signed: false,
                };
                self.output.printf(firing, text.as_bytes(), &[addr]);
            }
            ActionKind::Printf { format, args } => {
                let values: Vec<Value> = args
                    .iter()
                    .map(|f| decode::value(rec, f, &mut self.symbols))
                    .collect();
                if let Some(text) = self.printf(format, &values) {
                    self.output.printf(firing, &text, &values);
                }
            }
            ActionKind::Printa {
                format,
                aggregations,
            } => {
                self.aggs.per_cpu = self.settings.aggpercpu && format.is_none();
                let aggs = self.aggs.printa(aggregations, maps, &mut self.symbols);
                let parsed = format.as_ref().and_then(|f| self.parsed(f).cloned());
                let sort = self.settings.sort;
                let printa = Printa {
                    format: format.as_deref(),
                    parsed: parsed.as_ref(),
                    aggregations: &aggs,
                    sort: &sort,
                };
                self.output.printa(firing, &printa);
            }
            // The last exit() seen sets the status (END's exit() overrides BEGIN's).
            ActionKind::Exit(field) => self.exit_status = Some(exit_status(rec, field)),
            ActionKind::Clear(i) => maps.clear(*i),
            ActionKind::Trunc { aggregation, count } => {
                let n = count.as_ref().map(|f| int_at(f) as i64);
                self.aggs.trunc(*aggregation, n, maps, &mut self.symbols);
            }
            ActionKind::Normalize {
                aggregation,
                factor,
            } => self.aggs.normalize(*aggregation, int_at(factor)),
            ActionKind::Denormalize(i) => self.aggs.denormalize(*i),
            ActionKind::Speculate(_) | ActionKind::Commit(_) | ActionKind::Discard(_) => {}
            ActionKind::System { format, args } | ActionKind::Freopen { format, args } => {
                let values: Vec<Value> = args
                    .iter()
                    .map(|f| decode::value(rec, f, &mut self.symbols))
                    .collect();
                let Some(text) = self.printf(format, &values) else {
                    return;
                };
                self.output.flush();
                let Some(effects) = self.effects.as_mut() else {
                    return;
                };
                let done = match kind {
                    ActionKind::System { .. } => effects.system(&text),
                    _ => effects.freopen(&text),
                };
                if let Err(why) = done {
                    self.output.warning(&why);
                }
            }
            ActionKind::Ftruncate => {
                self.output.flush();
                if let Some(effects) = self.effects.as_mut() {
                    effects.ftruncate();
                }
            }
            ActionKind::Setopt { option, value } => {
                let option = &setopt_text(rec, option);
                let value = value.as_ref().map(|v| setopt_text(rec, v));
                let value = value.as_deref();
                let result = match self.settings.set(option, value) {
                    Some(result) => result,
                    None => match self.effects.as_mut() {
                        Some(effects) => effects.setopt(option, value),
                        None => Err("Invalid option name".into()),
                    },
                };
                if let Err(why) = result {
                    self.setopt_failed(firing.epid, option, value, &why);
                }
                self.symbols.set_noresolve(self.settings.noresolve);
            }
        }
    }

    /// `trace()` of `v`: stacks as stacks, the rest as values.
    fn trace(&mut self, firing: &Firing<'_>, v: &Value, ty: &ValueType) {
        match v {
            Value::Stack { raw, frames } => {
                let pid = ty
                    .datum()
                    .filter(|d| d.user())
                    .map(|_| raw.first().copied().unwrap_or(0) as u32);
                self.output.stack(firing, &Stack { frames, pid });
            }
            _ => self.output.trace(firing, v, ty),
        }
    }

    /// The parsed form of `format` (`None` if it does not parse), parsed once.
    fn parsed(&mut self, format: &[u8]) -> Option<&Format> {
        self.formats
            .entry(format.to_vec())
            .or_insert_with(|| printf::parse(format).ok())
            .as_ref()
    }

    /// `printf(format, values...)` rendered; `%a` and `%A` print their address as a symbol
    /// (`%A`: of `$target`).
    fn printf(&mut self, format: &[u8], values: &[Value]) -> Option<Vec<u8>> {
        let specs = value_specs(self.parsed(format)?);
        let mut shown = values.to_vec();
        for (v, spec) in shown.iter_mut().zip(specs) {
            let pc = v.zero_extended();
            let frame = match spec {
                'a' => self.symbols.kernel_frame(pc),
                'A' if self.target_pid != 0 => self.symbols.user_frame(self.target_pid, pc),
                _ => continue,
            };
            *v = Value::Sym {
                raw: vec![pc],
                frame: Box::new(frame),
            };
        }
        Some(self.parsed(format)?.render_bytes(&shown))
    }

    /// A fault record: DTrace's error line (the program ran the ERROR clauses itself).
    fn fault(&mut self, rec: &[u8]) {
        let f = decode::fault(rec);
        let desc = Rc::clone(&self.desc);
        let Some(ep) = desc.probe(f.epid) else {
            return;
        };
        let fault = ProbeFault {
            epid: f.epid,
            statement: ep.statement,
            probe: &ep.probe,
            cpu: f.cpu,
            kind: Fault::from_code(f.kind),
            code: f.kind,
            addr: f.addr,
            action: f.action,
            offset: f.offset,
        };
        self.output.fault(&fault);
    }

    /// Report the drops counted since the last report, from the drop counter map's value on
    /// each CPU: record and nested-firing drops per CPU, dynamic variable drops overall.
    pub fn drops(&mut self, percpu: &[Vec<u8>]) {
        let seen = &mut self.drops;
        seen.records.resize(percpu.len(), 0);
        seen.nested.resize(percpu.len(), 0);
        seen.aggregation.resize(percpu.len(), 0);
        let mut reports = Vec::new();
        let (mut dynamic, mut errors) = (0, 0);
        let mut speculative = self.specs.drops;
        let (mut busy, mut unavailable) = (0, 0);
        for (cpu, value) in percpu.iter().enumerate() {
            for (kind, last) in [
                (DropKind::Record, &mut seen.records[cpu]),
                (DropKind::Nested, &mut seen.nested[cpu]),
                (DropKind::Aggregation, &mut seen.aggregation[cpu]),
            ] {
                let total = decode::drops(value, kind);
                if total > *last {
                    reports.push(Drops {
                        kind,
                        cpu: Some(cpu as u32),
                        count: total - *last,
                        tagged: self.settings.droptags,
                    });
                    *last = total;
                }
            }
            dynamic += decode::drops(value, DropKind::Dynamic);
            errors += decode::drops(value, DropKind::ErrorInError);
            speculative += decode::drops(value, DropKind::Speculative);
            busy += decode::drops(value, DropKind::SpecBusy);
            unavailable += decode::drops(value, DropKind::SpecUnavail);
        }
        for (kind, total, last) in [
            (DropKind::Dynamic, dynamic, &mut seen.dynamic),
            (DropKind::Speculative, speculative, &mut seen.speculative),
            (DropKind::SpecBusy, busy, &mut seen.busy),
            (DropKind::SpecUnavail, unavailable, &mut seen.unavailable),
            (DropKind::ErrorInError, errors, &mut seen.errors),
        ] {
            if total > *last {
                reports.push(Drops {
                    kind,
                    cpu: None,
                    count: total - *last,
                    tagged: self.settings.droptags,
                });
                *last = total;
            }
        }
        for d in &reports {
            self.output.drops(d);
        }
    }

    /// The records the rings kept so far, every CPU's together in the order they were
    /// recorded: a postmortem's, or those of a ring read back from the kernel.
    pub fn kept_records(&mut self, maps: &dyn AggregationMaps) {
        for rec in self.buffers.take_rings_in_arrival_order() {
            self.decode_record(&rec, maps, true);
        }
        self.output.flush();
    }

    /// The traced process `pid` died of `signal` (its name, `SIGSEGV`).
    pub fn fatal_signal(&mut self, pid: i32, signal: &str) {
        self.output.fatal_signal(pid, signal);
        self.output.flush();
    }

    /// Tracing ended with `status`: the aggregations not printed yet, then the end.
    pub fn finish(&mut self, maps: &dyn AggregationMaps, status: i32) {
        for rec in self.buffers.take_rings() {
            self.decode_record(&rec, maps, true);
        }
        self.aggs.per_cpu = self.settings.aggpercpu;
        let aggs = self.aggs.all(maps, &mut self.symbols);
        let sort = self.settings.sort;
        self.output
            .aggregations(&aggs, &sort, self.settings.stack_indent());
        self.output.exit(status);
        self.output.flush();
    }
}

/// The status an `exit()` record's integer field holds.
fn exit_status(rec: &[u8], field: &Field) -> i32 {
    u64_at(rec, field.offset as usize) as i64 as i32
}

/// The conversion character of each value argument of a format, in argument order (`*`
/// widths and precisions as `*`).
fn value_specs(f: &Format) -> Vec<char> {
    let specs: HashMap<usize, char> = f.conversions().map(|c| (c.number, c.spec)).collect();
    f.args()
        .iter()
        .map(|a| match a.role {
            printf::ArgRole::Value => specs.get(&a.conversion).copied().unwrap_or('?'),
            _ => '*',
        })
        .collect()
}

/// The bytes of a traced value as `rawbytes` shows them: an integer's `size` bytes in
/// memory order, a string's buffer (zero after its end), any other value's bytes; `None`
/// for stacks and symbols, which keep their own form.
fn raw_bytes(v: &Value, ty: &ValueType) -> Option<Vec<u8>> {
    match v {
        Value::Int { value, size, .. } => Some(value.to_le_bytes()[..usize::from(*size)].to_vec()),
        Value::Str(s) => {
            let mut bytes = s.clone();
            bytes.resize((ty.size() as usize).max(s.len() + 1), 0);
            Some(bytes)
        }
        Value::Bytes(b) => Some(b.clone()),
        Value::Stack { .. } | Value::Sym { .. } => None,
    }
}

/// A `setopt()` argument of record `rec`: its constant, or the string recorded.
fn setopt_text(rec: &[u8], arg: &SetoptArg) -> String {
    match arg {
        SetoptArg::Text(text) => text.clone(),
        SetoptArg::Recorded(field) => {
            match decode::inner(rec, field.offset as usize, &field.ty, None) {
                Value::Str(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                _ => String::new(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::Json;
    use dtrace_abi::desc::{Action, Aggregation as AggDesc, EnabledProbe, Probe};
    use dtrace_abi::record::{self, fault};
    use dtrace_abi::slots::AggFunc;
    use std::cell::RefCell;
    use std::io::Write;

    /// What the output wrote, shared with the test.
    #[derive(Clone, Default)]
    struct Buffer(Rc<RefCell<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.borrow_mut().write(buf)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// One aggregation `@n = count()` keyed by nothing, with one entry of 2 + 3 on two CPUs.
    struct Counts;

    impl AggregationMaps for Counts {
        fn entries(&self, _agg: usize, each: &mut crate::EntryVisitor) {
            each(&[0; 8], &[&2u64.to_le_bytes(), &3u64.to_le_bytes()]);
        }
        fn keys(&self, _agg: usize) -> Vec<Vec<u8>> {
            vec![vec![0; 8]]
        }
        fn clear(&self, _agg: usize) {}
        fn remove(&self, _agg: usize, _keys: &[&[u8]]) {}
    }

    fn int() -> ValueType {
        ValueType::Integer {
            size: 4,
            signed: true,
            name: "int".into(),
        }
    }

    fn field(offset: u32, ty: ValueType) -> Field {
        Field { offset, ty }
    }

    fn action(kind: ActionKind, presence: Option<u32>) -> Action {
        Action { kind, presence }
    }

    /// `BEGIN { printf("%d %s\n", 5, "ab"); if (0) trace(9); printa(@n); exit(3); }`
    fn program() -> ProgramDesc {
        let h = record::HEADER_SIZE;
        ProgramDesc {
            probes: vec![EnabledProbe {
                epid: 1,
                probe: Probe {
                    id: 1,
                    provider: "dtrace".into(),
                    name: "BEGIN".into(),
                    ..Probe::default()
                },
                records: true,
                statement: 0,
                actions: vec![
                    action(
                        ActionKind::Printf {
                            format: b"%d %s\n".to_vec(),
                            args: vec![
                                field(h, int()),
                                field(h + 8, ValueType::String { size: 8 }),
                            ],
                        },
                        None,
                    ),
                    action(ActionKind::Trace(field(h + 16, int())), Some(0)),
                    action(
                        ActionKind::Printa {
                            format: None,
                            aggregations: vec![0],
                        },
                        None,
                    ),
                    action(ActionKind::Exit(field(h + 24, int())), None),
                ],
            }],
            aggregations: vec![AggDesc {
                name: "n".into(),
                func: AggFunc::Count,
                keys: Vec::new(),
                key_size: 8,
                slots: 1,
            }],
        }
    }

    fn put(rec: &mut [u8], at: usize, bytes: &[u8]) {
        rec[at..at + bytes.len()].copy_from_slice(bytes);
    }

    #[test]
    fn records_drive_the_output() {
        let out = Buffer::default();
        let settings = Settings {
            quiet: true,
            ..Settings::default()
        };
        let mut c = Consumer::new(
            program(),
            settings,
            Box::new(Json::new(Box::new(out.clone()))),
        );
        let h = record::HEADER_SIZE as usize;
        let mut rec = vec![0u8; h + 32];
        put(&mut rec, record::EPID, &1u32.to_le_bytes());
        put(&mut rec, record::CPU, &1u32.to_le_bytes());
        put(&mut rec, h, &5u64.to_le_bytes());
        put(&mut rec, h + 8, b"ab\0");
        put(&mut rec, h + 16, &9u64.to_le_bytes());
        put(&mut rec, h + 24, &3u64.to_le_bytes());
        c.record(&rec, &Counts);
        assert_eq!(c.exit_status(), Some(3));

        let mut f = vec![0u8; fault::SIZE as usize];
        put(&mut f, record::EPID, &FAULT_EPID.to_le_bytes());
        put(&mut f, fault::EPID, &1u32.to_le_bytes());
        put(&mut f, fault::KIND, &(Fault::BadAddr as u32).to_le_bytes());
        put(&mut f, fault::ACTION, &2u32.to_le_bytes());
        put(&mut f, fault::OFFSET, &40u32.to_le_bytes());
        put(&mut f, fault::ADDR, &0xdeadu64.to_le_bytes());
        c.record(&f, &Counts);
        let mut drops = vec![0u8; DropKind::COUNT as usize * 8];
        put(&mut drops, DropKind::Record.offset(), &4u64.to_le_bytes());
        c.drops(&[drops.clone(), vec![0; drops.len()]]);
        c.drops(&[drops]);
        c.finish(&Counts, 3);

        let text = String::from_utf8(out.0.borrow().clone()).unwrap();
        let firing = r#""cpu":1,"epid":1,"id":1,"probe":"dtrace:::BEGIN""#;
        let expected = [
            format!(r#"{{"type":"printf",{firing},"text":"5 ab\n","args":[5,"ab"]}}"#),
            format!(r#"{{"type":"printa",{firing},"name":"n","function":"count","rows":[{{"keys":[],"value":5}}]}}"#),
            r#"{"type":"error","cpu":0,"epid":1,"id":1,"probe":"dtrace:::BEGIN","fault":"DTRACEFLT_BADADDR","code":1,"address":"0xdead","action":2,"offset":40,"message":"invalid address (0xdead)"}"#.to_string(),
            r#"{"type":"drops","kind":"record","cpu":0,"count":4}"#.to_string(),
            r#"{"type":"exit","status":3}"#.to_string(),
        ];
        assert_eq!(text.lines().collect::<Vec<_>>(), expected);
    }
}

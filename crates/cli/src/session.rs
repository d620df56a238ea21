//! A tracing session: run BEGIN, enable the probes, consume records until `exit()`, a
//! signal or the end of the traced process, then disable the probes, run END and print the
//! aggregations. Records are decoded here and printed with the consumer crate.
//!
//! A record's epid names the clause and the probe, also for a system call group program
//! (one program for many calls), which looks the epid up at run time.
//!
//! Helper programs (the `sched_switch` program behind `vtimestamp`, the fork and exit
//! programs behind follow-fork) are attached first, before BEGIN fires and before a `-c`
//! command is let go, and stay attached through END; like every attachment they are owned
//! by file descriptors, so they go with the process. Follow-fork's family map is seeded
//! with the targets right after.

use std::collections::HashMap;
use std::io::Write;
use std::time::{Duration, Instant};

use dtrace_backend::program::{
    ActionKind, Compiled, DropKind, EnabledProbe, ProbeContext, FAULT_EPID, SCRATCH_LEVELS,
};
use dtrace_consumer::symbolize::Symbolizer;
use dtrace_consumer::{messages, printf, trace, Value};
use dtrace_probes::{Attach, DtraceProbe};
use dtrace_runtime::RingBuf;

use crate::aggregations::Aggregations;
use crate::compile::Compilation;
use crate::decode::{self, u32_at, u64_at};
use crate::load::Loaded;
use crate::options::Options;
use crate::signals;
use crate::target::Target;

/// How the consumer loop ended.
pub struct Outcome {
    pub status: i32,
}

pub struct Session<'a> {
    comp: &'a Compilation,
    loaded: Loaded,
    options: Options,
    out: Box<dyn Write>,
    ring: RingBuf,
    aggs: Aggregations,
    heading_done: bool,
    exit_status: Option<i32>,
    formats: HashMap<String, Option<printf::Format>>,
    drops: Vec<u64>,
    /// Per CPU: firings dropped for lack of a free scratch area, reported so far.
    nested_drops: Vec<u64>,
    dynvar_drops: u64,
    /// Kernel and user symbols, for stacks, `func()`-style data and `%a`/`%A`.
    symbols: Symbolizer,
    /// The first `-c`/`-p` process: whose addresses `%A` resolves (`$target`).
    target_pid: u32,
    /// Probes of processes started while tracing, and their epids (`crate::watch`).
    watcher: Option<crate::watch::Watcher>,
}

impl<'a> Session<'a> {
    pub fn new(
        comp: &'a Compilation,
        loaded: Loaded,
        options: Options,
        out: Box<dyn Write>,
    ) -> Result<Session<'a>, String> {
        let ring = RingBuf::new(&loaded.maps[comp.compiled.core.ringbuf.0])
            .map_err(|e| format!("dtrace: failed to map the trace buffer: {e}\n"))?;
        let aggs = Aggregations::new(&comp.compiled, options.strsize as usize);
        Ok(Session {
            comp,
            loaded,
            options,
            out,
            ring,
            aggs,
            heading_done: false,
            exit_status: None,
            formats: HashMap::new(),
            drops: Vec::new(),
            nested_drops: Vec::new(),
            dynvar_drops: 0,
            symbols: Symbolizer::new(),
            target_pid: 0,
            watcher: None,
        })
    }

    fn compiled(&self) -> &'a Compiled {
        &self.comp.compiled
    }

    /// Watch for processes started while tracing (see `crate::watch`).
    pub fn set_watcher(&mut self, watcher: Option<crate::watch::Watcher>) {
        self.watcher = watcher;
    }

    /// The enabled probe of a record's epid: the program's, or one added while tracing.
    fn enabled(&mut self, epid: u32) -> Option<EnabledRef<'a>> {
        let i = (epid as usize).wrapping_sub(1);
        match self.compiled().enabled.get(i) {
            Some(ep) => Some(EnabledRef::Compiled(ep)),
            None => self.watcher.as_mut()?.enabled(epid).map(EnabledRef::Added),
        }
    }

    /// Index of the program for a dtrace-provider probe, if any clause uses it.
    fn dtrace_program(&self, which: DtraceProbe) -> Option<usize> {
        self.compiled().programs.iter().position(|p| {
            matches!(self.comp.probes.get(&p.probe.id).map(|p| &p.attach), Some(Attach::Dtrace(w)) if *w == which)
        })
    }

    /// Fire BEGIN, END or ERROR by test-running its program with `args`.
    fn fire(&mut self, which: DtraceProbe, args: [u64; 6]) {
        let Some(i) = self.dtrace_program(which) else {
            return;
        };
        let mut ctx = [0u8; 96];
        for (k, a) in args.iter().enumerate() {
            ctx[k * 8..k * 8 + 8].copy_from_slice(&a.to_le_bytes());
        }
        if let Err(e) = self.loaded.programs[i].test_run(&ctx) {
            self.warn(&format!("dtrace: failed to fire {which:?}: {e}\n"));
        }
        self.drain();
    }

    /// Run the session to its end.
    pub fn run(&mut self, mut targets: Vec<Target>) -> Result<Outcome, String> {
        self.target_pid = targets.first().map_or(0, |t| t.pid().max(0) as u32);
        // Kernel symbols are read before tracing starts when the program records kernel
        // stacks or symbols, so that the first record is not held up by it.
        let kernel_data = self.compiled().enabled.iter().any(|ep| {
            ep.actions
                .iter()
                .any(|a| matches!(&a.kind, ActionKind::Datum { datum, .. } if !datum.user()))
        }) || self
            .compiled()
            .aggregations
            .iter()
            .any(|a| a.datums.iter().flatten().any(|d| !d.user()));
        if kernel_data {
            self.symbols.load_kernel();
        }
        self.attach_helpers()?;
        self.seed_follow(&targets)?;
        self.fire(DtraceProbe::Begin, [0; 6]);
        if self.exit_status.is_none() {
            self.attach()?;
            for t in &mut targets {
                t.release();
            }
            self.consume_until_done(&mut targets);
        }
        detach(std::mem::take(&mut self.loaded.links));
        if let Some(w) = &mut self.watcher {
            w.stop();
        }
        self.drain();
        self.fire(DtraceProbe::End, [0; 6]);
        self.report_drops();
        let text = self
            .aggs
            .render_exit(&self.loaded.maps, &self.options.sort, &mut self.symbols);
        self.write(text.as_bytes());
        let _ = self.out.flush();
        Ok(Outcome {
            status: self.exit_status.unwrap_or(0),
        })
    }

    /// Attach the helper programs (each a `tp_btf` program on its tracepoint).
    fn attach_helpers(&mut self) -> Result<(), String> {
        for (helper, prog) in self.compiled().helpers.iter().zip(&self.loaded.helpers) {
            let link = dtrace_runtime::Link::raw_tracepoint(prog, None).map_err(|e| {
                format!(
                    "dtrace: failed to attach the {} helper program: {e}\n",
                    helper.kind.tracepoint()
                )
            })?;
            self.loaded.helper_links.push(link);
        }
        Ok(())
    }

    /// Follow-fork: put every target into the family map as the root of its own family,
    /// then the descendants a `-p` process already has. The fork helper is attached by now,
    /// so a child forked after its parent went in is added by the kernel, and one forked
    /// before is found in `/proc`.
    fn seed_follow(&mut self, targets: &[Target]) -> Result<(), String> {
        let Some(map) = self.compiled().follow else {
            return Ok(());
        };
        let map = &self.loaded.maps[map.0];
        let put = |pid: i32, family: i32| {
            map.update(
                &(pid as u32).to_ne_bytes(),
                &(family as u32).to_ne_bytes(),
                dtrace_runtime::Update::Any,
            )
            .map_err(|e| format!("dtrace: failed to follow process {pid}: {e}\n"))
        };
        for t in targets {
            put(t.pid(), t.pid())?;
        }
        for t in targets {
            for child in crate::target::descendants(t.pid()) {
                put(child, t.pid())?;
            }
        }
        Ok(())
    }

    fn attach(&mut self) -> Result<(), String> {
        for (i, prog) in self.compiled().programs.iter().enumerate() {
            let links = if let ProbeContext::SyscallGroup(g) = &prog.probe.context {
                dtrace_probes::attach_syscall_group(&self.loaded.programs[i], g.ret)
            } else {
                let Some(probe) = self.comp.probes.get(&prog.probe.id) else {
                    continue;
                };
                probe.attach(&self.loaded.programs[i])
            };
            let links = links.map_err(|e| {
                format!("dtrace: failed to enable {}: {e}\n", prog.probe.full_name())
            })?;
            self.loaded.links.extend(links);
        }
        Ok(())
    }

    /// Consume until exit(), a signal, or the end of every traced process.
    fn consume_until_done(&mut self, targets: &mut [Target]) {
        let mut running: Vec<bool> = vec![true; targets.len()];
        let period = Duration::from_nanos(self.options.switchrate_ns.clamp(1_000_000, 100_000_000));
        let mut last_drop_check = Instant::now();
        while self.exit_status.is_none() && !signals::stop_requested() {
            let _ = self.ring.wait(period);
            self.drain();
            // Processes in user stack and symbol keys: their mappings, while they run.
            self.aggs
                .see_processes(&self.loaded.maps, &mut self.symbols);
            if last_drop_check.elapsed() >= Duration::from_millis(500) {
                self.report_drops();
                last_drop_check = Instant::now();
            }
            for (t, alive) in targets.iter_mut().zip(running.iter_mut()) {
                if *alive && t.exited() {
                    *alive = false;
                    self.drain();
                    self.aggs
                        .see_processes(&self.loaded.maps, &mut self.symbols);
                    let _ = self.out.flush();
                }
            }
            if !targets.is_empty() && running.iter().all(|alive| !alive) {
                break;
            }
        }
    }

    /// Process every record waiting in the ring buffer.
    fn drain(&mut self) {
        let mut records = Vec::new();
        self.ring.consume(|r| records.push(r.to_vec()));
        // Processes named by user stacks and symbols first, while they may still run:
        // symbolizing the records can take longer than a short-lived process lives.
        for r in &records {
            self.see_processes(r);
        }
        for r in records {
            self.record(&r);
        }
        let _ = self.out.flush();
    }

    fn write(&mut self, bytes: &[u8]) {
        let _ = self.out.write_all(bytes);
    }

    fn warn(&mut self, text: &str) {
        let _ = self.out.flush();
        eprint!("{text}");
    }

    /// Read the mappings of the processes a record's user stacks and symbols name.
    fn see_processes(&mut self, rec: &[u8]) {
        let epid = u32_at(rec, 0);
        let Some(ep) = self.enabled(epid) else {
            return;
        };
        for action in &ep.actions {
            if let ActionKind::Datum { offset, datum } = &action.kind {
                if datum.user() {
                    let pid = decode::datum_pid(rec, *offset as usize, *datum);
                    self.symbols.see_process(pid);
                }
            }
        }
    }

    fn record(&mut self, rec: &[u8]) {
        let epid = u32_at(rec, 0);
        if epid == FAULT_EPID {
            return self.fault(rec);
        }
        let Some(ep) = self.enabled(epid) else {
            return;
        };
        let ep: &EnabledProbe = &ep;
        let cpu = u32_at(rec, 4);
        let presence = u64_at(rec, 8);
        if !self.options.quiet {
            if !self.heading_done {
                self.heading_done = true;
                self.write(trace::heading().as_bytes());
            }
            let prefix = trace::probe_prefix(cpu, ep.probe.id, &ep.probe.function, &ep.probe.name);
            self.write(prefix.as_bytes());
        }
        for action in &ep.actions {
            if let Some(bit) = action.presence {
                if presence & (1 << bit) == 0 {
                    continue;
                }
            }
            self.action(ep, &action.kind, rec);
        }
        if !self.options.quiet {
            self.write(trace::firing_end(false).as_bytes());
        }
    }

    fn action(&mut self, _ep: &EnabledProbe, kind: &ActionKind, rec: &[u8]) {
        let strsize = self.options.strsize as usize;
        match kind {
            ActionKind::Trace(field) => {
                let v = decode::value(rec, field, strsize);
                let bytes = trace::trace_record(&v, self.options.quiet);
                self.write(&bytes);
            }
            ActionKind::Printf { format, args } => {
                let mut values: Vec<Value> = args
                    .iter()
                    .map(|f| decode::value(rec, f, strsize))
                    .collect();
                let parsed = self
                    .formats
                    .entry(format.clone())
                    .or_insert_with(|| printf::parse(format).ok());
                if let Some(f) = parsed {
                    // %a and %A print their address as a symbol (%A: of $target).
                    let specs = value_specs(f);
                    for (v, spec) in values.iter_mut().zip(specs) {
                        let pc = v.zero_extended();
                        let text = match spec {
                            'a' => self.symbols.kernel_frame(pc),
                            'A' if self.target_pid != 0 => {
                                self.symbols.user_frame(self.target_pid, pc)
                            }
                            _ => continue,
                        };
                        *v = Value::Sym {
                            raw: vec![pc],
                            text,
                        };
                    }
                    let bytes = f.render_bytes(&values);
                    self.write(&bytes);
                }
            }
            ActionKind::Datum { offset, datum } => {
                let v = decode::datum(rec, *offset as usize, *datum, &mut self.symbols);
                let bytes = trace::trace_record(&v, self.options.quiet);
                self.write(&bytes);
            }
            ActionKind::Printa {
                format,
                aggregations,
            } => {
                let text = self.aggs.printa(
                    format.as_deref(),
                    aggregations,
                    &self.loaded.maps,
                    &self.options.sort,
                    &mut self.symbols,
                );
                self.write(text.as_bytes());
            }
            ActionKind::Exit(field) => {
                if self.exit_status.is_none() {
                    let v = decode::u64_at(rec, field.offset as usize) as i64;
                    self.exit_status = Some(v as i32);
                }
            }
            ActionKind::Clear(i) => self.aggs.clear(*i, &self.loaded.maps),
            ActionKind::Trunc { aggregation, count } => {
                let n = count
                    .as_ref()
                    .map(|f| decode::u64_at(rec, f.offset as usize) as i64);
                self.aggs
                    .trunc(*aggregation, n, &self.loaded.maps, &mut self.symbols);
            }
            ActionKind::Normalize {
                aggregation,
                factor,
            } => {
                let n = decode::u64_at(rec, factor.offset as usize);
                self.aggs.normalize(*aggregation, n);
            }
            ActionKind::Denormalize(i) => self.aggs.denormalize(*i),
            ActionKind::Setopt { option, value } => {
                if let Err(why) = self.options.set(option, value.as_deref()) {
                    self.warn(&format!("dtrace: failed to set option {option}: {why}\n"));
                }
            }
        }
    }

    /// A runtime fault: DTrace's error message, then the ERROR probe.
    fn fault(&mut self, rec: &[u8]) {
        let epid = u32_at(rec, 8);
        let code = u32_at(rec, 12);
        let action = u32_at(rec, 16);
        let offset = u32_at(rec, 20) as i32;
        let addr = u64_at(rec, 24);
        let Some(ep) = self.compiled().enabled.get((epid as usize).wrapping_sub(1)) else {
            return;
        };
        let probe = messages::ProbeDesc {
            id: ep.probe.id,
            provider: ep.probe.provider.clone(),
            module: ep.probe.module.clone(),
            function: ep.probe.function.clone(),
            name: ep.probe.name.clone(),
        };
        let fault = messages::Fault::from_code(code as u64, addr);
        let text = messages::probe_error(epid, &probe, fault, action, Some(offset));
        self.warn(&text);
        if ep.probe.name != "ERROR" {
            self.fire(
                DtraceProbe::Error,
                [
                    0,
                    epid as u64,
                    action as u64,
                    offset as u64,
                    code as u64,
                    addr,
                ],
            );
        }
    }

    /// Print new drop counts: record drops per CPU, dynamic variable drops overall.
    fn report_drops(&mut self) {
        let map = &self.loaded.maps[self.compiled().core.drops.0];
        let Ok(Some(percpu)) = map.lookup_percpu(&0u32.to_ne_bytes()) else {
            return;
        };
        let slots = decode::slots(&percpu);
        self.drops.resize(slots.len(), 0);
        self.nested_drops.resize(slots.len(), 0);
        let mut messages = String::new();
        let mut dynvar = 0;
        for (cpu, s) in slots.iter().enumerate() {
            let count = |kind: DropKind| s.get(kind as usize).copied().unwrap_or(0);
            let total = count(DropKind::Record);
            if total > self.drops[cpu] {
                messages.push_str(&messages::cpu_drops(total - self.drops[cpu], cpu as u32));
                self.drops[cpu] = total;
            }
            let nested = count(DropKind::Nested);
            if nested > self.nested_drops[cpu] {
                messages.push_str(&messages::nested_drops(
                    nested - self.nested_drops[cpu],
                    cpu as u32,
                    SCRATCH_LEVELS,
                ));
                self.nested_drops[cpu] = nested;
            }
            dynvar += count(DropKind::Dynamic);
        }
        if dynvar > self.dynvar_drops {
            messages.push_str(&messages::status_drops(
                messages::StatusDrop::Dynamic,
                dynvar - self.dynvar_drops,
            ));
            self.dynvar_drops = dynvar;
        }
        if !messages.is_empty() {
            self.warn(&messages);
        }
    }
}

/// The conversion character of each value argument of a format, in argument order (`*`
/// widths and precisions as `*`).
fn value_specs(f: &printf::Format) -> Vec<char> {
    let specs: HashMap<usize, char> = f.conversions().map(|c| (c.number, c.spec)).collect();
    f.args()
        .iter()
        .map(|a| match a.role {
            printf::ArgRole::Value => specs.get(&a.conversion).copied().unwrap_or('?'),
            _ => '*',
        })
        .collect()
}

/// Close `links`, several at a time. Closing a uprobe link waits for an RCU grace period
/// (≈ 20–30 ms for a uprobe_multi link, ≈ 110 ms for a perf-event uprobe); closed from
/// several threads at once, the waits overlap, so tracing every instruction of a few
/// functions (hundreds of links) ends in about a second instead of fifteen.
fn detach(mut links: Vec<dtrace_runtime::Link>) {
    const THREADS: usize = 32;
    let per_thread = links.len().div_ceil(THREADS).max(1);
    std::thread::scope(|s| {
        while links.len() > 1 {
            let chunk: Vec<dtrace_runtime::Link> =
                links.drain(..per_thread.min(links.len())).collect();
            // When no thread can be started, the closure (and so the chunk) is dropped
            // here: the links are closed all the same.
            let _ = std::thread::Builder::new().spawn_scoped(s, move || drop(chunk));
        }
    });
}

/// An enabled probe: one of the program's, or one added while tracing.
enum EnabledRef<'a> {
    Compiled(&'a EnabledProbe),
    Added(std::sync::Arc<EnabledProbe>),
}

impl std::ops::Deref for EnabledRef<'_> {
    type Target = EnabledProbe;
    fn deref(&self) -> &EnabledProbe {
        match self {
            EnabledRef::Compiled(ep) => ep,
            EnabledRef::Added(ep) => ep,
        }
    }
}

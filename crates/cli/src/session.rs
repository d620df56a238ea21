//! A tracing session: enable the probes (their clauses held back by the tracing state
//! word), run BEGIN, let the probes run, consume records until `exit()`, a signal or the
//! end of the traced process, then disable the probes, run END and print the aggregations. This is the kernel side: records, aggregation maps and drop counters are
//! read here and handed as bytes to the consumer, which decodes and prints them.
//!
//! Helper programs (the `sched_switch` program behind `vtimestamp`, the fork and exit
//! programs behind follow-fork) are attached first, before BEGIN fires and before a `-c`
//! command is let go, and stay attached through END; like every attachment they are owned
//! by file descriptors, so they go with the process. Follow-fork's family map is seeded
//! with the targets right after.

use std::time::{Duration, Instant};

use dtrace_backend::program::{Compiled, ProbeContext, SpecState, TracingState, STATE_OFFSET};
use dtrace_consumer::policy::BufPolicy;
use dtrace_consumer::Consumer;
use dtrace_probes::{Attach, DtraceProbe};
use dtrace_runtime::RingBuf;

use crate::agg_maps::AggMaps;
use crate::compile::Compilation;
use crate::load::Loaded;
use crate::options::Options;
use crate::output_file::OutputFile;
use crate::signals;
use crate::target::Target;

/// How often `bufpolicy=ring` reads the ring buffer (measured in docs/BENCHMARKS.md).
const RING_POLL: Duration = Duration::from_millis(5);

/// How often the ring buffer is read when `switchrate` is not set. Oracle's DTrace for
/// Linux (`switchrate` 0 by default, where illumos had 1 s) reads records as they come, the
/// kernel waking it for each; a read every 10 ms looks the same to a person and spares the
/// probes' CPUs that wakeup (records are written without one: `backend/src/codegen/wakeup.rs`).
const DEFAULT_SWITCH: Duration = Duration::from_millis(10);
/// The shortest `switchrate` honoured.
const MIN_SWITCH: Duration = Duration::from_millis(1);
/// Between reads, the loop looks this often at what ends tracing: a signal that went to
/// another thread, the end of a traced process.
const HOUSEKEEPING: Duration = Duration::from_millis(10);
/// How often drops are reported when `statusrate` is not set: DTrace's default.
const DEFAULT_STATUS: Duration = Duration::from_secs(1);

/// How the consumer loop ended.
pub struct Outcome {
    pub status: i32,
}

pub struct Session<'a> {
    comp: &'a Compilation,
    loaded: Loaded,
    options: Options,
    /// The rates `setopt()` may change while tracing.
    rates: std::rc::Rc<crate::effects::Rates>,
    ring: RingBuf,
    consumer: Consumer,
    /// Probes of processes started while tracing, and their epids (`crate::watch`).
    watcher: Option<crate::watch::Watcher>,
    /// Where the consumer writes: a failed write ends the session with an error.
    output: OutputFile,
    /// `bufpolicy=ring` with traced processes: where their postmortems go.
    postmortem: Option<crate::postmortem::Postmortem>,
    /// The first traced process that died of a fatal signal, and the signal's name.
    crashed: Option<(i32, &'static str)>,
    /// `-x ringpin`: the ring pinned to outlive this process (unpinned when dropped).
    pin: Option<crate::pinned::Pin>,
    /// While tracing, the aggregations as records see them under `aggrate`.
    agg_snapshot: Option<crate::agg_snapshot::AggSnapshot>,
}

impl<'a> Session<'a> {
    pub fn new(
        comp: &'a Compilation,
        mut loaded: Loaded,
        options: Options,
        consumer: Consumer,
        output: OutputFile,
        rates: std::rc::Rc<crate::effects::Rates>,
    ) -> Result<Session<'a>, String> {
        let ring = match loaded.ring.take() {
            Some(ring) => ring,
            None => RingBuf::new(&loaded.maps[comp.compiled.core.ringbuf.0])
                .map_err(|e| format!("dtrace: failed to map the trace buffer: {e}\n"))?,
        };
        Ok(Session {
            comp,
            loaded,
            options,
            rates,
            ring,
            consumer,
            watcher: None,
            output,
            postmortem: None,
            crashed: None,
            pin: None,
            agg_snapshot: None,
        })
    }

    /// Watch for processes started while tracing (see `crate::watch`).
    pub fn set_watcher(&mut self, watcher: Option<crate::watch::Watcher>) {
        self.watcher = watcher;
    }

    fn compiled(&self) -> &'a Compiled {
        &self.comp.compiled
    }

    /// Index of the program for a dtrace-provider probe, if any clause uses it.
    fn dtrace_program(&self, which: DtraceProbe) -> Option<usize> {
        self.compiled().programs.iter().position(|p| {
            matches!(self.comp.probes.get(&p.probe.id).map(|p| &p.attach), Some(Attach::Dtrace(w)) if *w == which)
        })
    }

    /// Fire BEGIN, END or ERROR by test-running its program with `args`.
    fn fire(&mut self, which: DtraceProbe, args: [u64; 6]) {
        self.run_probe(which, args);
        self.drain();
    }

    /// Run the program of `dtrace:::BEGIN`, `END` or `ERROR` once, in this thread.
    fn run_probe(&mut self, which: DtraceProbe, args: [u64; 6]) {
        let Some(i) = self.dtrace_program(which) else {
            return;
        };
        let mut ctx = [0u8; 96];
        for (k, a) in args.iter().enumerate() {
            ctx[k * 8..k * 8 + 8].copy_from_slice(&a.to_le_bytes());
        }
        let Some(program) = &self.loaded.programs[i] else {
            return;
        };
        if let Err(e) = program.test_run(&ctx) {
            self.consumer
                .warning(&format!("failed to fire {which:?}: {e}"));
        }
    }

    /// A notice about the run (`dtrace: ...` on stderr), unless quiet.
    pub fn notice(&mut self, message: &str) {
        if !self.options.output.quiet {
            self.consumer.warning(message);
        }
    }

    /// Run the session to its end. A failed write of the output ends it early, as an error.
    pub fn run(&mut self, mut targets: Vec<Target>) -> Result<Outcome, String> {
        if let Some(cpu) = self.options.cpu {
            // BEGIN, END and ERROR run where dtrace runs: on the `cpu` option's CPU.
            dtrace_runtime::cpus::pin(cpu)
                .map_err(|e| format!("dtrace: failed to set option -x cpu: {e}\n"))?;
        }
        self.postmortem = crate::postmortem::Postmortem::for_run(&self.options, &targets)?;
        if self.options.bufpolicy == BufPolicy::Ring {
            // Records are shown at the end: read them in batches, not woken for each.
            self.ring.poll(RING_POLL);
        }
        let target = targets.first().map_or(0, |t| t.pid().max(0) as u32);
        self.pin_ring(target)?;
        self.consumer.set_target(target);
        self.consumer.prepare();
        // As in DTrace, every probe is enabled before BEGIN fires, and none runs a clause
        // until BEGIN has: its records (a `system()` command, say) are acted on once
        // every probe can see what they cause.
        self.set_state(TracingState::Enabling)?;
        self.attach_helpers()?;
        self.seed_follow(&targets)?;
        self.attach()?;
        self.run_probe(DtraceProbe::Begin, [0; 6]);
        self.set_state(TracingState::Active)?;
        self.drain();
        if self.consumer.exit_status().is_none() && self.output.failure().is_none() {
            for t in &mut targets {
                t.release();
            }
            self.agg_snapshot = Some(Default::default());
            self.consume_until_done(&mut targets);
            self.agg_snapshot = None;
        }
        if let Some(w) = &self.watcher {
            w.request_stop();
        }
        detach(std::mem::take(&mut self.loaded.links));
        if let Some(w) = &mut self.watcher {
            w.stop();
        }
        if let Some(failure) = self.output.failure() {
            return Err(failure);
        }
        self.drain();
        if let Some((pid, signal)) = self.crashed {
            self.output.start_copy();
            let maps = AggMaps::new(&self.comp.compiled, &self.loaded.maps);
            self.consumer.kept_records(&maps);
            self.consumer.fatal_signal(pid, signal);
        }
        self.fire(DtraceProbe::End, [0; 6]);
        self.report_drops();
        let status = self.consumer.exit_status().unwrap_or(0);
        let maps = AggMaps::new(&self.comp.compiled, &self.loaded.maps);
        self.consumer.finish(&maps, status);
        if let Some(failure) = self.output.failure() {
            return Err(failure);
        }
        self.write_postmortem()?;
        Ok(Outcome { status })
    }

    /// `-x ringpin`: pin the ring buffer and what decodes it, and keep the newest records
    /// read in it (half the buffer at most, leaving the rest to the programs).
    fn pin_ring(&mut self, target: u32) -> Result<(), String> {
        let Some(name) = &self.options.ringpin else {
            return Ok(());
        };
        if self.options.bufpolicy != BufPolicy::Ring {
            return Err("dtrace: -x ringpin needs -x bufpolicy=ring\n".to_string());
        }
        let map = &self.loaded.maps[self.comp.compiled.core.ringbuf.0];
        let info = crate::pinned::RunInfo {
            bufsize: self.options.bufsize,
            quiet: self.options.output.quiet,
            dtrace_pid: std::process::id(),
            target_pid: target,
        };
        let pin = crate::pinned::Pin::create(name, map, &self.comp.compiled.desc, info)?;
        self.pin = Some(pin);
        self.ring
            .retain(map.spec().max_entries as usize / 2, RING_POLL);
        Ok(())
    }

    /// The postmortem's text (what was output since the crashed process's records) into
    /// its file.
    fn write_postmortem(&mut self) -> Result<(), String> {
        let (Some((pid, _)), Some(pm)) = (self.crashed, &self.postmortem) else {
            return Ok(());
        };
        let path = pm.write(pid, &self.output.take_copy())?;
        // On stderr in every output format: a JSON output has ended with its `exit` line.
        eprintln!(
            "dtrace: postmortem of pid {pid} written to {}",
            path.display()
        );
        Ok(())
    }

    /// Set the tracing state word at the start of the globals map's value, unless `exit()`
    /// ran. Only done while no clause but BEGIN (run by this thread) can run, so the
    /// read-modify-write keeps the global variables BEGIN set.
    fn set_state(&self, state: TracingState) -> Result<(), String> {
        let map = &self.loaded.maps[self.compiled().core.globals.0];
        let key = 0u32.to_ne_bytes();
        let fail = |e: dtrace_runtime::Error| format!("dtrace: failed to enable tracing: {e}\n");
        let mut value = map.lookup(&key).map_err(fail)?.unwrap_or_default();
        let at = STATE_OFFSET as usize;
        let word = &mut value[at..at + 8];
        if u64::from_ne_bytes(word.try_into().expect("8 bytes")) == TracingState::Exited as u64 {
            return Ok(());
        }
        word.copy_from_slice(&(state as u64).to_ne_bytes());
        map.update(&key, &value, dtrace_runtime::Update::Any)
            .map_err(fail)
    }

    /// Whether a program ran `exit()`: the tracing state word says so.
    fn exit_ran(&self) -> bool {
        let map = &self.loaded.maps[self.compiled().core.globals.0];
        let at = STATE_OFFSET as usize;
        let word = map
            .lookup(&0u32.to_ne_bytes())
            .ok()
            .flatten()
            .and_then(|v| v.get(at..at + 8)?.try_into().ok())
            .map(u64::from_ne_bytes);
        word == Some(TracingState::Exited as u64)
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

    /// Attach every loaded program. An `fbt` function the kernel will not attach to (an
    /// `__init` function already freed) is skipped like one it would not load, unless no
    /// `fbt` probe is left; the skipped ones are counted in one line.
    fn attach(&mut self) -> Result<(), String> {
        let mut functions = 0;
        for (i, prog) in self.compiled().programs.iter().enumerate() {
            let Some(program) = &self.loaded.programs[i] else {
                continue;
            };
            let links = if let ProbeContext::SyscallGroup(g) = &prog.probe.context {
                dtrace_probes::attach_syscall_group(program, g.ret)
            } else if let Some(dtrace_probes::Probe {
                attach:
                    dtrace_probes::Attach::KernelMulti {
                        functions: names,
                        retprobe,
                        multi_link: false,
                        ..
                    },
                site,
            }) = self.comp.probes.get(&prog.probe.id)
            {
                // A kprobe per function: the ones the kernel refuses are skipped.
                let (links, refused) = dtrace_probes::attach_kprobes(program, names, *retprobe);
                self.loaded
                    .skipped
                    .extend(refused.iter().map(|(f, e)| crate::load::Skipped {
                        probe: format!("{}:{}:{f}:{}", site.provider, site.module, site.name),
                        why: crate::load::attach_refusal(e),
                    }));
                match refused.into_iter().next() {
                    Some((_, e)) if links.is_empty() => Err(e),
                    _ => Ok(links),
                }
            } else {
                let Some(probe) = self.comp.probes.get(&prog.probe.id) else {
                    continue;
                };
                probe.attach(program, self.options.cpu)
            };
            let function = matches!(prog.probe.context, ProbeContext::Function { .. });
            let mut group = false;
            if let Some(dtrace_probes::Probe {
                attach: dtrace_probes::Attach::KernelMulti { untraceable, .. },
                site,
            }) = self.comp.probes.get(&prog.probe.id)
            {
                group = true;
                self.loaded
                    .skipped
                    .extend(untraceable.iter().map(|f| crate::load::Skipped {
                        probe: format!("{}:{}:{f}:{}", site.provider, site.module, site.name),
                        why: "ftrace cannot trace it (not in available_filter_functions)".into(),
                    }));
            }
            match links {
                Ok(links) => {
                    crate::debug::say(|| {
                        format!(
                            "attached {} ({} links)",
                            prog.probe.full_name(),
                            links.len()
                        )
                    });
                    functions += usize::from(function || group);
                    self.loaded.links.extend(links);
                }
                Err(e) if function => self.loaded.skipped.push(crate::load::Skipped {
                    probe: prog.probe.full_name(),
                    why: crate::load::attach_refusal(&e),
                }),
                Err(e) => {
                    return Err(format!(
                        "dtrace: failed to enable {}: {e}\n",
                        prog.probe.full_name()
                    ))
                }
            }
        }
        if functions == 0 {
            if let Some(first) = self.loaded.skipped.first() {
                return Err(first.message());
            }
        }
        if let Some(line) = crate::load::skipped_notice(&self.loaded.skipped) {
            self.consumer.warning(&line);
        }
        Ok(())
    }

    /// Consume until exit(), a signal, or the end of every traced process. The ring buffer
    /// is read every `switchrate` (which `setopt()` may change), and at once when a record
    /// wakes the loop: an `exit()`, or a ring filling up (`backend/src/codegen/wakeup.rs`).
    fn consume_until_done(&mut self, targets: &mut [Target]) {
        let mut running: Vec<bool> = vec![true; targets.len()];
        let rates = self.rates.clone();
        let period = || {
            rates.switchrate_ns.get().map_or(DEFAULT_SWITCH, |ns| {
                Duration::from_nanos(ns).max(MIN_SWITCH)
            })
        };
        let mut last_read = Instant::now();
        let mut last_drop_check = Instant::now();
        // With a statusrate set, exit() ends tracing at the next status check, as in
        // DTrace; without, as soon as its record is read.
        let status_period = || {
            rates
                .statusrate_ns
                .get()
                .map_or(DEFAULT_STATUS, Duration::from_nanos)
        };
        while (self.consumer.exit_status().is_none() || rates.statusrate_ns.get().is_some())
            && !signals::stop_requested()
            && self.output.failure().is_none()
        {
            let due = last_read + period();
            let wait = due.saturating_duration_since(Instant::now());
            let woken = self.ring.wait(wait.min(HOUSEKEEPING)).unwrap_or(false);
            // Under an aggrate, records exit() woke us for that are not due for longer than a
            // status period wait for the status check, as in DTrace (a switchrate longer than
            // the statusrate): the check that sees the exit reads them with the aggregations
            // as they are then.
            let exit_early = woken
                && due > Instant::now() + status_period()
                && rates.aggrate_ns.get().is_some()
                && self.exit_ran();
            if (woken && !exit_early) || Instant::now() >= due {
                self.drain();
                last_read = Instant::now();
            }
            // Processes in user stack and symbol keys: their mappings, while they run.
            self.see_aggregation_processes();
            if last_drop_check.elapsed() >= status_period() {
                self.report_drops();
                last_drop_check = Instant::now();
                // exit() ran but its record has not come: a full buffer dropped it. Tracing
                // ends all the same (Oracle's consumer looks at this word every statusrate
                // too); a record still being written is read by the final drain.
                if self.exit_ran() {
                    break;
                }
            }
            for (t, alive) in targets.iter_mut().zip(running.iter_mut()) {
                if *alive && t.exited() {
                    *alive = false;
                    self.drain();
                    self.see_aggregation_processes();
                    self.consumer.flush();
                    self.see_crash(t);
                } else if let Some(pm) = &mut self.postmortem {
                    pm.watch(t.pid());
                }
            }
            if !targets.is_empty() && running.iter().all(|alive| !alive) {
                break;
            }
        }
    }

    /// A postmortem is due when `target`, which exited, died of a fatal signal.
    fn see_crash(&mut self, target: &Target) {
        if self.postmortem.is_none() || self.crashed.is_some() {
            return;
        }
        let signal = target
            .terminating_signal()
            .and_then(crate::postmortem::fatal);
        if let Some(signal) = signal {
            self.crashed = Some((target.pid(), signal));
        }
    }

    fn see_aggregation_processes(&mut self) {
        let maps = AggMaps::new(&self.comp.compiled, &self.loaded.maps);
        self.consumer.see_aggregation_processes(&maps);
    }

    /// Hand every record waiting in the ring buffer to the consumer, and do what they ask.
    fn drain(&mut self) {
        let mut records = Vec::new();
        self.ring.consume(|r| records.push(r.to_vec()));
        // Records of probes the watcher added (their programs ran only after it published
        // their descriptions) need those descriptions.
        if let Some(desc) = self.watcher.as_mut().and_then(|w| w.news()) {
            if let Some(pin) = &self.pin {
                if let Err(e) = pin.update_desc(&desc) {
                    self.consumer.warning(&e);
                }
            }
            self.consumer.set_desc(desc);
        }
        // Processes named by user stacks and symbols first, while they may still run:
        // symbolizing the records can take longer than a short-lived process lives.
        for r in &records {
            self.consumer.see_processes(r);
        }
        let live = AggMaps::new(&self.comp.compiled, &self.loaded.maps);
        let snapshot = self.agg_snapshot.as_mut().zip(self.rates.aggrate_ns.get());
        if let Some((snap, every)) = snapshot {
            let count = self.comp.compiled.aggregations.len();
            snap.refresh(
                &live,
                count,
                Duration::from_nanos(every),
                !records.is_empty(),
            );
        }
        for r in records {
            match self
                .agg_snapshot
                .as_ref()
                .filter(|_| self.rates.aggrate_ns.get().is_some())
            {
                Some(snap) => self.consumer.record(&r, &snap.over(&live)),
                None => self.consumer.record(&r, &live),
            }
        }
        self.free_speculations();
        self.consumer.flush();
    }

    /// Free the ids of speculations committed or discarded whose every record was read
    /// (as many as the kernel counted written), so `speculation()` can hand them out again.
    fn free_speculations(&mut self) {
        let Some(map) = self.compiled().specs else {
            return;
        };
        let map = &self.loaded.maps[map.0];
        for (id, read) in self.consumer.settled_speculations() {
            let key = id.to_ne_bytes();
            let written = match map.lookup(&key) {
                Ok(Some(state)) => state
                    .get(SpecState::WRITTEN as usize..)
                    .and_then(|b| b.first_chunk::<8>())
                    .map_or(0, |b| u64::from_ne_bytes(*b)),
                _ => 0,
            };
            if written <= read {
                let _ = map.delete(&key);
                self.consumer.forget_speculation(id);
            }
        }
    }

    /// Hand the drop counters to the consumer, which reports what is new.
    fn report_drops(&mut self) {
        let map = &self.loaded.maps[self.compiled().core.drops.0];
        if let Ok(Some(percpu)) = map.lookup_percpu(&0u32.to_ne_bytes()) {
            self.consumer.drops(&percpu);
        }
    }
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

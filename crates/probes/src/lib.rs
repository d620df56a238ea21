//! Probe providers: probe descriptions, discovery, matching, listing and attaching.
//!
//! [`Catalog`] knows every probe of every provider (creating `profile-N` probes when a
//! description names them, as DTrace does), matches descriptions against them, and attaches
//! a loaded program to a probe. One module per provider: `dtrace` (BEGIN/END/ERROR),
//! `profile`, `cpc` (CPU performance counters, probes made when named), `syscall`, `sdt` (every tracepoint), `rawtp` (BTF-typed raw tracepoints),
//! `proc`, `sched`, and the network providers `ip`, `tcp`, `udp` (DTrace's probes mapped
//! onto raw tracepoints, [`mapped`]) and `fbt`
//! (kernel functions from BTF);
//! `user` holds the user-level providers, USDT and `pid` (discovered per description from
//! the processes and binaries it names).
//!
//! Kernel probes are discovered only when a description could name them (or for a full
//! listing), and a tracepoint's format file is read only when a probe on it is matched, so a
//! script that uses only BEGIN never touches tracefs, and `dtrace -l` reads one file (and
//! the kernel's BTF, for `rawtp` and `fbt`). `dtrace -lv` adds each probe's stability
//! attributes ([`attrs`]) and argument types ([`list_verbose`]).

pub mod attrs;

pub mod cpc;
mod desc;
mod dtrace;
pub mod fbt;
mod foreign;
mod glob;
pub mod io;
pub mod ip;
pub mod mapped;
mod net;
pub mod proc;
mod profile;
pub mod rawtp;
pub mod sched;
mod sdt;
mod syscall;
pub mod tcp;
pub mod tracepoint;
pub mod udp;
pub mod usdt;
pub mod user;

pub use desc::{Description, DescriptionError, ProbeSpec};
pub use dtrace::DtraceProbe;
pub use glob::glob_match;

use std::collections::HashSet;

use dtrace_backend::program::{ProbeContext, ProbeSite, UprobeContext, UprobeKind};
use dtrace_runtime::{tracefs, Link, PerfEvent, Program};

/// How a tracepoint's fields become a probe's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgStyle {
    /// Every field after the common ones (`sdt`).
    Plain,
    /// A system call's arguments: the fields after `__syscall_nr`.
    SyscallEntry,
    /// A system call's return value (`ret`), which also gives `errno`.
    SyscallReturn,
}

/// How a probe is made to fire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attach {
    /// BEGIN, END or ERROR: run by the consumer itself.
    Dtrace(DtraceProbe),
    /// A timer every `period_ns`, on every online CPU (`profile`) or on one (`tick`).
    Timer { period_ns: u64, every_cpu: bool },
    /// A performance counter sampled on every online CPU (`cpc`).
    Counter(dtrace_runtime::Counter),
    /// Tracepoint `category:event`, through a perf event (a `BPF_PROG_TYPE_TRACEPOINT`
    /// program).
    Tracepoint {
        category: String,
        event: String,
        style: ArgStyle,
    },
    /// A kernel function's entry or return: a tracing program whose target is fixed at load
    /// time (see [`ProbeContext::Function`]), attached with `BPF_RAW_TRACEPOINT_OPEN`.
    Function,
    /// A BTF-typed raw tracepoint (`rawtp`): a tracing program whose target (the
    /// `btf_trace_NAME` typedef, see [`ProbeContext::BtfTracepoint`]) is fixed at load time,
    /// attached with `BPF_RAW_TRACEPOINT_OPEN`.
    BtfTracepoint,
    /// A USDT or `pid` probe: uprobes on a binary, with one uprobe_multi link.
    User(user::UserAttach),
    /// Many `fbt` functions' entries (or returns) with one kprobe_multi link (or, without
    /// them, one perf-event kprobe each), function `i` with cookie `i` (see [`fbt::group`]).
    KernelMulti {
        functions: Vec<String>,
        retprobe: bool,
        /// The functions the description matched that ftrace cannot trace, left out.
        untraceable: Vec<String>,
        /// One kprobe_multi link; else a perf-event kprobe per function.
        multi_link: bool,
    },
}

/// A probe: where it is and how to attach to it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    pub site: ProbeSite,
    pub attach: Attach,
}

/// What tells `fbt` groups apart: (`module:function` globs, probe name, functions
/// matched, their signature).
type GroupKey = (String, &'static str, usize, Vec<Option<String>>);

/// The ids of `fbt` group probes ([`fbt::group`]): above the kernel's probes, below the
/// user probes' ([`user::USER_PROBE_IDS`]).
const FBT_GROUP_IDS: u32 = 1 << 19;

/// What a description matches.
#[derive(Debug, Default)]
pub struct Matches {
    pub probes: Vec<Probe>,
    /// Why each function the description names has no probe at the instruction offset it
    /// names exactly (inside an instruction, beyond the function's end, ...).
    pub refused: Vec<user::offsets::Refusal>,
    /// Why providers the description may name could not be read (no access to tracefs).
    pub unavailable: Option<String>,
}

impl Matches {
    /// Why the description names no probe, in words, when it names offsets that do not
    /// exist: the most telling function's reason (an offset inside an instruction before
    /// one past the end), and how many other functions lack the offset.
    pub fn why_none(&self) -> Option<String> {
        let Some(first) = self.refused.iter().min_by_key(|r| r.why.rank()) else {
            return self.unavailable.clone();
        };
        Some(match self.refused.len() - 1 {
            0 => first.to_string(),
            1 => format!("{first} (and 1 other function has no probe at that offset)"),
            n => format!("{first} (and {n} other functions have no probe at that offset)"),
        })
    }
}

/// All probes known so far.
#[derive(Debug)]
pub struct Catalog {
    probes: Vec<Probe>,
    /// Whether the tracepoint providers (`syscall`, `sdt`) have been discovered.
    tracepoints: bool,
    /// Whether `rawtp` has been discovered (it reads the kernel's BTF).
    raw_tracepoints: bool,
    /// Whether `proc`, `sched`, `io`, `ip`, `tcp` and `udp` have been discovered (they read
    /// the kernel's BTF).
    mapped: bool,
    /// Whether `fbt` has been discovered (it reads the kernel's BTF).
    functions: bool,
    /// Whether the listed `cpc` probes have been made (it opens each event once).
    counters: bool,
    /// Why tracefs could not be read, when the tracepoint providers were looked for.
    tracefs_error: Option<String>,
    /// Mapped probes this kernel cannot have (their tracepoint is missing, or none exists).
    missing: Vec<mapped::Missing>,
    /// `fbt` groups made so far: (`module:function` globs, probe name, functions matched,
    /// their argument types' signature) and the group probe.
    fbt_groups: Vec<(GroupKey, Probe)>,
    /// The `args[]` the program reads ([`Catalog::split_fbt_groups_by`]).
    fbt_args: Vec<Option<u64>>,
    /// Probes whose tracepoint format has been read.
    resolved: HashSet<u32>,
    /// USDT and `pid` probes.
    user: user::UserProbes,
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog::new()
    }
}

/// The probe names of `proc`, `sched`, `io`, `ip`, `tcp` and `udp`, for descriptions that
/// name no provider.
const MAPPED_NAMES: &[&str] = &[
    "create",
    "exec",
    "exec-failure",
    "exec-success",
    "exit",
    "lwp-create",
    "lwp-exit",
    "lwp-start",
    "signal-clear",
    "signal-discard",
    "signal-handle",
    "signal-send",
    "start",
    "change-pri",
    "dequeue",
    "enqueue",
    "off-cpu",
    "on-cpu",
    "preempt",
    "remain-cpu",
    "sleep",
    "surrender",
    "tick",
    "wakeup",
    "accept-established",
    "accept-refused",
    "connect-established",
    "connect-refused",
    "connect-request",
    "receive",
    "send",
    "state-change",
    "done",
    "wait-done",
    "wait-start",
];

/// Providers discovered from tracefs.
const TRACEPOINT_PROVIDERS: &[&str] = &["syscall", "sdt"];

/// Whether `desc` names only `dtrace` or `profile` probes by their bare names (`BEGIN`,
/// `tick-1s`), which no other provider is searched for.
fn names_dtrace_only(desc: &Description) -> bool {
    desc.provider.is_empty()
        && desc.module.is_empty()
        && desc.function.is_empty()
        && (matches!(desc.name.as_str(), "BEGIN" | "END" | "ERROR")
            || desc.name.starts_with("profile-")
            || desc.name.starts_with("tick-"))
}

/// Whether `desc` may name probes discovered from tracefs.
fn may_name_tracepoints(desc: &Description) -> bool {
    !names_dtrace_only(desc)
        && TRACEPOINT_PROVIDERS
            .iter()
            .any(|p| glob_match(&desc.provider, p))
}

impl Catalog {
    pub fn new() -> Catalog {
        let mut probes = dtrace::probes();
        let next = probes.len() as u32 + 1;
        probes.extend(profile::standard_probes(next));
        Catalog {
            probes,
            tracepoints: false,
            raw_tracepoints: false,
            mapped: false,
            functions: false,
            counters: false,
            tracefs_error: None,
            missing: Vec::new(),
            fbt_groups: Vec::new(),
            fbt_args: Vec::new(),
            resolved: HashSet::new(),
            user: user::UserProbes::default(),
        }
    }

    /// The processes `-c`/`-p` follow, for `providerPID` descriptions.
    pub fn set_targets(&mut self, targets: Vec<user::UserTarget>) {
        self.user.targets = targets;
    }

    /// Follow-fork: probes named with a pid also fire in that process's descendants (see
    /// [`user`]).
    pub fn set_follow_fork(&mut self, on: bool) {
        self.user.follow_fork = on;
    }

    /// The id of the next kernel probe (user probes have their own range,
    /// [`user::USER_PROBE_IDS`]).
    fn next_id(&self) -> u32 {
        self.probes
            .iter()
            .filter(|p| !matches!(p.attach, Attach::User(_)))
            .count() as u32
            + 1
    }

    fn discover_tracepoints(&mut self) {
        if std::mem::replace(&mut self.tracepoints, true) {
            return;
        }
        let events = tracepoint::events().unwrap_or_else(|why| {
            self.tracefs_error = Some(why);
            Vec::new()
        });
        let syscalls = syscall::probes(&events, self.next_id());
        self.probes.extend(syscalls);
        let sdt = sdt::probes(&events, self.next_id());
        self.probes.extend(sdt);
    }

    fn discover_raw_tracepoints(&mut self) {
        if std::mem::replace(&mut self.raw_tracepoints, true) {
            return;
        }
        // Tracepoints first, so probe ids do not depend on what was asked for.
        self.discover_tracepoints();
        let Some(btf) = dtrace_backend::types::kernel::vmlinux() else {
            return;
        };
        let events = tracepoint::events().unwrap_or_default();
        let raw = rawtp::probes(btf, &events, self.next_id());
        self.probes.extend(raw);
    }

    fn discover_mapped(&mut self) {
        if std::mem::replace(&mut self.mapped, true) {
            return;
        }
        // Tracepoints and raw tracepoints first, so probe ids do not depend on what was
        // asked for.
        self.discover_raw_tracepoints();
        let found = proc::probes(self.next_id());
        self.probes.extend(found);
        let found = sched::probes(self.next_id());
        self.probes.extend(found);
        for found in [io::probes, ip::probes, tcp::probes, udp::probes] {
            let found = found(self.next_id());
            self.probes.extend(found);
        }
        self.missing = proc::missing();
        self.missing.extend(sched::missing());
        self.missing.extend(io::missing());
        self.missing.extend(ip::missing());
        self.missing.extend(tcp::missing());
        self.missing.extend(udp::missing());
    }

    fn discover_functions(&mut self) {
        if std::mem::replace(&mut self.functions, true) {
            return;
        }
        // The other kernel providers first, so probe ids do not depend on what was asked
        // for.
        self.discover_counters();
        let first = self.next_id();
        fbt::for_each_probe(first, |p| self.probes.push(p));
    }

    fn discover_counters(&mut self) {
        if std::mem::replace(&mut self.counters, true) {
            return;
        }
        // The other kernel providers first (but `fbt`, listed last), so probe ids do not
        // depend on what was asked for.
        self.discover_mapped();
        let known = |name: &str| {
            self.probes
                .iter()
                .any(|p| p.site.provider == cpc::PROVIDER && p.site.name == name)
        };
        let found = cpc::listed_probes(self.next_id(), known);
        self.probes.extend(found);
    }

    /// Discover the kernel providers `desc` could name. `fbt` (tens of thousands of probes
    /// from BTF) and `rawtp` only when the description names their provider, so `:::entry`
    /// means system calls (and tracepoints named `entry`), not every kernel function, and
    /// `:::sched_switch` is the `sdt` probe alone, without reading BTF.
    fn discover_for(&mut self, desc: &Description) {
        let dtrace_only = names_dtrace_only(desc);
        if may_name_tracepoints(desc) {
            self.discover_tracepoints();
        }
        if !desc.provider.is_empty() && glob_match(&desc.provider, rawtp::PROVIDER) {
            self.discover_raw_tracepoints();
        }
        if cpc::lists(desc) {
            self.discover_counters();
        }
        if !desc.provider.is_empty() && glob_match(&desc.provider, "fbt") {
            self.discover_functions();
        }
        // The mapped providers: named by provider, or (`:::exec-success`) by a probe name they
        // have, without reading BTF for other descriptions.
        let mapped_provider = [
            proc::PROVIDER,
            sched::PROVIDER,
            io::PROVIDER,
            ip::PROVIDER,
            tcp::PROVIDER,
            udp::PROVIDER,
        ]
        .iter()
        .any(|p| glob_match(&desc.provider, p));
        if (!desc.provider.is_empty() && mapped_provider)
            || (desc.provider.is_empty()
                && !dtrace_only
                && MAPPED_NAMES.iter().any(|n| glob_match(&desc.name, n)))
        {
            self.discover_mapped();
        }
    }

    /// Probes matching `desc`, creating a `profile`/`tick` probe the description names
    /// exactly when it does not exist yet.
    pub fn matching(&mut self, desc: &Description) -> Vec<Probe> {
        self.matches(desc).probes
    }

    /// Why providers could not be listed (`dtrace -l` says so), once they were looked for.
    pub fn unavailable(&self) -> Option<String> {
        let why = self.tracefs_error.as_ref()?;
        Some(format!(
            "the {} providers need read access to tracefs ({why})",
            TRACEPOINT_PROVIDERS.join(" and ")
        ))
    }

    /// Probes matching `desc` (as [`Catalog::matching`]), why `pid` offsets it names
    /// exactly have no probe, and why providers it may name could not be read.
    pub fn matches(&mut self, desc: &Description) -> Matches {
        if let Some(probe) = profile::on_demand(desc, self.next_id()) {
            if !self
                .probes
                .iter()
                .any(|p| p.site.name == probe.site.name && p.site.provider == probe.site.provider)
            {
                self.probes.push(probe);
            }
        }
        // A listed `cpc` probe keeps the id `dtrace -l` gives it.
        if cpc::names_listed(desc) {
            self.discover_counters();
        }
        let refused_counter = match cpc::on_demand(desc, self.next_id()) {
            Some(Ok(probe)) => {
                if !self.probes.iter().any(|p| {
                    p.site.name == probe.site.name && p.site.provider == probe.site.provider
                }) {
                    self.probes.push(probe);
                }
                None
            }
            Some(Err(why)) => Some(why),
            None => None,
        };
        self.discover_for(desc);
        let mut found = Matches::default();
        if may_name_tracepoints(desc) {
            found.unavailable = self.unavailable();
        }
        for i in 0..self.probes.len() {
            if !matches!(self.probes[i].attach, Attach::User(_))
                && desc.matches(&self.probes[i].site)
            {
                self.resolve(i);
                found.probes.push(self.probes[i].clone());
            }
        }
        self.group_functions(desc, &mut found.probes);
        for i in self
            .user
            .discover(desc, &mut self.probes, &mut found.refused)
        {
            found.probes.push(self.probes[i].clone());
        }
        if found.probes.is_empty() {
            if let Some(m) = self.missing.iter().find(|m| m.named_by(desc)) {
                found.unavailable = Some(m.to_string());
            } else if let Some(why) = foreign::why(&desc.provider) {
                found.unavailable = Some(why.to_string());
            } else if let Some(why) = refused_counter {
                found.unavailable = Some(why);
            }
        }
        found
    }

    /// The `args[]` the program reads, by index (`None`: an index that is not a literal,
    /// so any): an `fbt` group's functions are split by their types there
    /// ([`fbt::signature`]), one group per signature, so that each group's `args[]` have
    /// one type, as each function's have in its own probe. Set before matching.
    pub fn split_fbt_groups_by(&mut self, args: Vec<Option<u64>>) {
        self.fbt_args = args;
    }

    /// More than [`fbt::GROUP_MIN`] `fbt` entry (or return) probes in `probes` (any number,
    /// on a kernel that refuses fentry) become kprobe probes ([`fbt::group`]), one per
    /// signature of the `args[]` the program reads, the same (same ids) each time a
    /// description with the same function glob matches the same functions.
    fn group_functions(&mut self, desc: &Description, probes: &mut Vec<Probe>) {
        for name in ["entry", "return"] {
            let is_member = |p: &Probe| fbt::groupable(p, name);
            let count = probes.iter().filter(|p| is_member(p)).count();
            // Where fentry is refused, kprobes are the only way, even for one function.
            if count == 0 || (count <= fbt::GROUP_MIN && fbt::kernel_refusal().is_none()) {
                continue;
            }
            // Functions ftrace cannot trace go with the first group, to be skipped there.
            let traceable =
                |p: &Probe| fbt::traceable().is_some_and(|t| t.contains(&p.site.function));
            let mut parts: Vec<(Vec<Option<String>>, Vec<Probe>)> = Vec::new();
            for p in probes.iter().filter(|p| is_member(p) && traceable(p)) {
                let sig = fbt::signature(p, &self.fbt_args);
                match parts.iter_mut().find(|(s, _)| *s == sig) {
                    Some((_, members)) => members.push(p.clone()),
                    None => parts.push((sig, vec![p.clone()])),
                }
            }
            let untraceable = probes.iter().filter(|p| is_member(p) && !traceable(p));
            match parts.first_mut() {
                Some((_, members)) => members.extend(untraceable.cloned()),
                None => parts.push((Vec::new(), untraceable.cloned().collect())),
            }
            for (sig, members) in parts {
                let key = (
                    format!("{}:{}", desc.module, desc.function),
                    name,
                    members.len(),
                    sig,
                );
                let known = self.fbt_groups.iter().find(|(k, _)| *k == key);
                let group = match known {
                    Some((_, g)) => g.clone(),
                    None => {
                        let id = FBT_GROUP_IDS + self.fbt_groups.len() as u32;
                        let Some(g) = fbt::group(id, &desc.module, &desc.function, &members) else {
                            continue;
                        };
                        self.fbt_groups.push((key, g.clone()));
                        g
                    }
                };
                let ids: HashSet<u32> = members.iter().map(|p| p.site.id).collect();
                probes.retain(|p| !ids.contains(&p.site.id));
                probes.push(group);
            }
        }
    }

    /// A site-less probe standing for a [`user::deferrable`] description that matches
    /// nothing yet (see [`user::UserProbes::placeholder`]).
    pub fn placeholder(&mut self, desc: &Description) -> Probe {
        let i = self.user.placeholder(desc, &mut self.probes);
        self.probes[i].clone()
    }

    /// The binaries whose user probes were looked for already (those running processes
    /// map, and `-c` commands'): a binary started later is examined afresh.
    pub fn examined_binaries(&self) -> Vec<std::path::PathBuf> {
        self.user.examined_binaries()
    }

    /// The `-c` and `-p` processes' pids.
    pub fn target_pids(&self) -> Vec<i32> {
        self.user.targets.iter().map(|t| t.pid).collect()
    }

    /// The probes a [`user::deferrable`] description names in the binary at `path`, which
    /// started running after tracing began (see [`user::UserProbes::discover_in`]).
    pub fn matches_in(&mut self, desc: &Description, path: &std::path::Path) -> Vec<Probe> {
        let mut refused = Vec::new();
        self.user
            .discover_in(desc, path, &mut self.probes, &mut refused)
            .into_iter()
            .map(|i| self.probes[i].clone())
            .collect()
    }

    /// Read the format of probe `i`'s tracepoint, once, into its context.
    fn resolve(&mut self, i: usize) {
        let probe = &mut self.probes[i];
        let Attach::Tracepoint {
            category,
            event,
            style,
        } = &probe.attach
        else {
            return;
        };
        if !self.resolved.insert(probe.site.id) {
            return;
        }
        let layout = match style {
            ArgStyle::Plain => sdt::layout(category, event),
            _ => syscall::layout(event, *style),
        };
        if let Ok(layout) = layout {
            probe.site.context = ProbeContext::Tracepoint(layout);
        }
    }

    /// The exact description of the probe whose id is `id` (`-i ID`, or an id written as a
    /// probe description), discovering the kernel's providers in id order until one has
    /// it; `None` when no probe has that id. A user probe's id is known once its process
    /// or binary was examined.
    pub fn description_of(&mut self, id: u32) -> Option<Description> {
        if id >= user::USER_PROBE_IDS {
            return self.user.description_of(id, &self.probes);
        }
        let find = |probes: &[Probe]| {
            probes
                .iter()
                .find(|p| p.site.id == id && !matches!(p.attach, Attach::User(_)))
                .map(|p| Description::exact(&p.site))
        };
        if let Some(d) = find(&self.probes) {
            return Some(d);
        }
        // An fbt group's id stands for no one probe.
        if id == 0 || id >= FBT_GROUP_IDS {
            return None;
        }
        self.discover_mapped();
        if let Some(d) = find(&self.probes) {
            return Some(d);
        }
        self.discover_functions();
        find(&self.probes)
    }

    /// What `dtrace -l` prints of `probe` (with `-v`, each line followed by its attributes
    /// and argument types): one entry per probe it stands for, each with that probe's id.
    /// A `pid` glob's probe stands for each of its functions, listed with the id the
    /// function's probe has alone.
    pub fn listing(&self, probe: &Probe, verbose: bool) -> Vec<(u32, String)> {
        let line = |one: &ProbeSite| {
            if verbose {
                list_line_verbose(one)
            } else {
                list_line(one)
            }
        };
        let site = &probe.site;
        match &site.context {
            ProbeContext::Uprobe(u) if !u.functions.is_empty() && u.kernel.is_empty() => {
                let alone = ProbeContext::Uprobe(UprobeContext {
                    kind: u.kind.clone(),
                    functions: Vec::new(),
                    ids: Vec::new(),
                    family: u.family,
                    kernel: Vec::new(),
                    object: u.object.clone(),
                });
                u.functions
                    .iter()
                    .enumerate()
                    .map(|(i, function)| {
                        let id = u.ids.get(i).copied().unwrap_or(site.id);
                        let one = ProbeSite {
                            id,
                            provider: site.provider.clone(),
                            module: site.module.clone(),
                            function: function.clone(),
                            name: site.name.clone(),
                            context: alone.clone(),
                        };
                        (id, line(&one))
                    })
                    .collect()
            }
            _ => vec![(site.id, line(site))],
        }
    }

    /// The USDT probes of process `pid` (`-l -p PID`).
    pub fn user_probes_of(&mut self, pid: i32) -> Vec<Probe> {
        let mut found = Vec::new();
        for provider in self.user.providers_of(pid) {
            let desc = Description {
                provider: format!("{provider}{pid}"),
                ..Description::default()
            };
            found.extend(self.matching(&desc));
        }
        found
    }

    /// Every probe of every provider (discovering the kernel's), in id order, passed to `f`;
    /// `resolved`: with the argument layout of every tracepoint read (`dtrace -lv`: one
    /// format file per tracepoint). Unless asked for before, `fbt`'s probes (more than
    /// 100,000) are made one at a time and not kept, so `dtrace -l` does not hold them all.
    pub fn for_each(&mut self, resolved: bool, mut f: impl FnMut(&Probe)) {
        self.discover_tracepoints();
        self.discover_mapped();
        self.discover_counters();
        if resolved {
            for i in 0..self.probes.len() {
                self.resolve(i);
            }
        }
        self.probes.iter().for_each(&mut f);
        if !self.functions {
            fbt::for_each_probe(self.next_id(), |p| f(&p));
        }
    }
}

impl Probe {
    /// Attach `prog` so it runs when the probe fires. Consumer-run probes need no links.
    /// `cpu` (the `cpu` option): a timer goes on that CPU only, as only its firings run.
    pub fn attach(&self, prog: &Program, cpu: Option<u32>) -> dtrace_runtime::Result<Vec<Link>> {
        match &self.attach {
            Attach::Dtrace(_) => Ok(Vec::new()),
            Attach::Timer {
                period_ns,
                every_cpu,
            } => profile::attach(prog, *period_ns, *every_cpu, cpu),
            Attach::Counter(counter) => cpc::attach(prog, *counter, cpu),
            Attach::Tracepoint {
                category, event, ..
            } => {
                let id = tracefs::tracepoint_id(category, event)?;
                Ok(vec![Link::perf_event(prog, PerfEvent::tracepoint(id)?)?])
            }
            Attach::Function | Attach::BtfTracepoint => Ok(vec![Link::raw_tracepoint(prog, None)?]),
            Attach::User(u) => {
                let mut links = Vec::new();
                user::attach(prog, u, &u.sites, &mut links)?;
                Ok(links)
            }
            Attach::KernelMulti {
                functions,
                retprobe,
                multi_link: true,
                ..
            } => Ok(vec![dtrace_runtime::kprobe::attach_kprobe_multi(
                prog, functions, *retprobe,
            )?]),
            Attach::KernelMulti {
                functions,
                retprobe,
                multi_link: false,
                ..
            } => match attach_kprobes(prog, functions, *retprobe) {
                (links, refused) if refused.is_empty() => Ok(links),
                (_, mut refused) => Err(refused.swap_remove(0).1),
            },
        }
    }
}

/// Attach `prog` with one perf-event kprobe per function of `functions` (function `i` with
/// cookie `i`): the links made, and the functions the kernel refused with its answer (a
/// function on the kprobe blacklist, a name several static functions share).
pub fn attach_kprobes(
    prog: &Program,
    functions: &[String],
    retprobe: bool,
) -> (Vec<Link>, Vec<(String, dtrace_runtime::Error)>) {
    let mut links = Vec::new();
    let mut refused = Vec::new();
    for (cookie, f) in functions.iter().enumerate() {
        match dtrace_runtime::kprobe::attach_kprobe_perf(prog, f, retprobe, cookie as u64) {
            Ok(link) => links.push(link),
            Err(e) => refused.push((f.clone(), e)),
        }
    }
    (links, refused)
}

/// Attach a `ProbeContext::SyscallGroup` program: one raw tracepoint link on `sys_enter`
/// (`sys_exit` for `ret`), whatever the number of system calls it stands for.
pub fn attach_syscall_group(prog: &Program, ret: bool) -> dtrace_runtime::Result<Vec<Link>> {
    let name = if ret { "sys_exit" } else { "sys_enter" };
    Ok(vec![Link::raw_tracepoint(prog, Some(name))?])
}

/// The `-l` listing header.
pub fn list_header() -> String {
    format!(
        "{:>5} {:>10} {:>17} {:>33} {}\n",
        "ID", "PROVIDER", "MODULE", "FUNCTION", "NAME"
    )
}

/// One `-l` line (one per function for a probe standing for many `pid` functions).
pub fn list_line(site: &ProbeSite) -> String {
    let line = |function: &str| {
        format!(
            "{:>5} {:>10} {:>17} {:>33} {}\n",
            site.id, site.provider, site.module, function, site.name
        )
    };
    match &site.context {
        ProbeContext::Uprobe(u) if !u.functions.is_empty() => {
            u.functions.iter().map(|f| line(f)).collect()
        }
        _ => line(&site.function),
    }
}

/// How many probes `site` stands for: the functions of a grouped `pid` probe, else 1.
pub fn probe_count(site: &ProbeSite) -> u32 {
    match &site.context {
        ProbeContext::Uprobe(u) if !u.functions.is_empty() => u.functions.len() as u32,
        _ => 1,
    }
}

/// The types of a probe's `args[]` as D types them, in order (empty when `args[]` has
/// none: `dtrace`, `profile`, `pid`).
pub fn arg_types(site: &ProbeSite) -> Vec<String> {
    let btf = dtrace_backend::types::kernel::vmlinux;
    let btf_name = |id: u32| match btf() {
        Some(btf) => dtrace_backend::types::kernel::from_btf(btf, id).to_string(),
        None => "uint64_t".to_string(),
    };
    match &site.context {
        ProbeContext::Tracepoint(layout) if layout.syscall_return => {
            // args[0] and args[1] are both the return value.
            let ret = layout.args.first().map(tracepoint::arg_type_name);
            ret.map(|t| vec![t.clone(), t]).unwrap_or_default()
        }
        ProbeContext::Tracepoint(layout) => {
            layout.args.iter().map(tracepoint::arg_type_name).collect()
        }
        ProbeContext::BtfTracepoint(tp) => tp.args.iter().map(|&id| btf_name(id)).collect(),
        &ProbeContext::Function { btf_id, ret, .. } => {
            let Some(proto) = btf().and_then(|b| b.func_proto(btf_id)) else {
                return Vec::new();
            };
            if ret {
                // args[0] is the return offset; a void function has no args[1].
                let mut types = vec!["uint64_t".to_string()];
                if proto.ret != 0 {
                    types.push(btf_name(proto.ret));
                }
                types
            } else {
                proto.params.iter().map(|p| btf_name(p.ty)).collect()
            }
        }
        ProbeContext::Uprobe(u) => match &u.kind {
            UprobeKind::Usdt(specs) => {
                let n = specs.iter().map(Vec::len).max().unwrap_or(0);
                (0..n)
                    .map(|i| dtrace_backend::program::usdt_arg_type(specs, i).to_string())
                    .collect()
            }
            // An fbt kprobe of one function: its BTF prototype's; a `pid` probe of one
            // function: its DWARF's.
            UprobeKind::Entry | UprobeKind::Return => {
                let ret = u.kind == UprobeKind::Return;
                let types = match (u.kernel.as_slice(), &u.object) {
                    ([f], _) => f.arg_types(ret),
                    ([], Some(object)) if u.functions.is_empty() => {
                        dtrace_backend::program::user_arg_types(object, &site.function, ret)
                    }
                    _ => None,
                };
                types
                    .unwrap_or_default()
                    .iter()
                    .map(ToString::to_string)
                    .collect()
            }
        },
        // Arguments without a type are only for the D library's translators (`tcp`'s
        // `arg6`, `arg7`): not listed.
        ProbeContext::Mapped(m) => m
            .args
            .iter()
            .filter(|a| !a.ty.is_empty())
            .map(|a| a.ty.clone())
            .collect(),
        ProbeContext::ArgArray | ProbeContext::PerfEvent | ProbeContext::SyscallGroup(_) => {
            Vec::new()
        }
    }
}

/// The `-lv` argument lines of a probe: `args[N]: TYPE` for each typed argument.
pub fn list_args(site: &ProbeSite) -> String {
    arg_types(site)
        .iter()
        .enumerate()
        .map(|(i, t)| format!("\t\targs[{i}]: {t}\n"))
        .collect()
}

/// What `dtrace -lv` prints of a probe: each of its lines ([`list_line`]) followed by
/// [`list_verbose`]; an `fbt` group's functions each with their own argument types.
pub fn list_line_verbose(site: &ProbeSite) -> String {
    match &site.context {
        ProbeContext::Uprobe(u) if u.kernel.len() > 1 => u
            .kernel
            .iter()
            .map(|f| {
                let one = ProbeSite {
                    module: f.module.clone(),
                    function: f.function.clone(),
                    context: ProbeContext::Uprobe(UprobeContext {
                        functions: Vec::new(),
                        ids: Vec::new(),
                        kernel: vec![f.clone()],
                        object: None,
                        ..u.clone()
                    }),
                    ..site.clone()
                };
                format!("{}{}", list_line(&one), list_verbose(&one))
            })
            .collect(),
        _ => list_line(site)
            .lines()
            .map(|l| format!("{l}\n{}", list_verbose(site)))
            .collect(),
    }
}

/// What `dtrace -lv` prints after a probe's line, as DTrace prints it: the probe
/// description attributes, the argument attributes, and the argument types (`None` when
/// there are none), then an empty line.
pub fn list_verbose(site: &ProbeSite) -> String {
    let mut out = attrs::sections(site);
    let args = list_args(site);
    if args.is_empty() {
        out.push_str("\t\tNone\n");
    } else {
        out.push_str(&args);
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_fbt_groups_functions_are_listed_with_their_own_argument_types() {
        let kernel = ["vfs_read", "vfs_fsync"].map(|f| dtrace_backend::program::KernelFunction {
            module: "vmlinux".into(),
            function: f.into(),
        });
        let site = ProbeSite {
            id: 7,
            provider: "fbt".into(),
            module: "vmlinux".into(),
            function: "vfs_*".into(),
            name: "entry".into(),
            context: ProbeContext::Uprobe(UprobeContext {
                kind: UprobeKind::Entry,
                functions: kernel.iter().map(|f| f.function.clone()).collect(),
                ids: Vec::new(),
                family: None,
                kernel: kernel.to_vec(),
                object: None,
            }),
        };
        let out = list_line_verbose(&site);
        let read = out.find(" vfs_read entry\n").expect("vfs_read's line");
        let fsync = out.find(" vfs_fsync entry\n").expect("vfs_fsync's line");
        assert!(
            out[read..fsync].contains("\t\targs[0]: struct file *\n\t\targs[1]: char *\n")
                && out[fsync..].contains("\t\targs[0]: struct file *\n\t\targs[1]: int\n\n"),
            "{out}"
        );
    }

    #[test]
    fn begin_alone_discovers_nothing() {
        let mut c = Catalog::new();
        let before = c.probes.len();
        assert_eq!(c.matching(&Description::parse("BEGIN").unwrap()).len(), 1);
        assert_eq!(c.probes.len(), before);
    }

    #[test]
    fn matches_and_types_kernel_probes() {
        let mut c = Catalog::new();
        let found = c.matching(&Description::parse("syscall::openat:entry").unwrap());
        assert_eq!(found.len(), 1);
        let ProbeContext::Tracepoint(layout) = &found[0].site.context else {
            panic!("not a tracepoint: {:?}", found[0].site.context);
        };
        assert_eq!(layout.args[1].name, "filename");
        assert_eq!(layout.syscall_nr, Some(257));
        let exec = c.matching(&Description::parse("sdt:sched::sched_process_exec").unwrap());
        assert_eq!(exec.len(), 1);
        assert!(list_args(&exec[0].site).contains("args[0]: string"));
        let all = c.matching(&Description::parse("syscall:::entry").unwrap());
        assert!(all.len() > 200, "{} syscalls", all.len());
        assert!(c
            .matching(&Description::parse("syscall::no_such_call:entry").unwrap())
            .is_empty());
        // Ids are unique.
        let (mut ids, mut count) = (HashSet::new(), 0);
        c.for_each(false, |p| {
            ids.insert(p.site.id);
            count += 1;
        });
        assert_eq!(ids.len(), count);
    }
}

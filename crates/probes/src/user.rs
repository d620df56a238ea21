//! User-level providers: USDT (`.note.stapsdt` probes) and `pid` (function entry, return
//! and instruction offsets), both on uprobes.
//!
//! # Naming
//!
//! - `providerPID:module:function:name` (`myapp$target:::tick`, `pid123:a.out:main:entry`):
//!   probes of the binaries process PID maps (read from `/proc/PID/maps`; for a `-c` command
//!   still held at its exec, from the program's file and the libraries its `DT_NEEDED`
//!   entries name, and what it maps already). They are attached in process PID only; the provider shown is the note's
//!   provider followed by the pid.
//! - `provider*:module:function:name` (any glob in the provider part): probes of binaries,
//!   attached system-wide by inode, so every process that runs the binary is traced, also
//!   ones started later, from their first instruction. Binaries are the ones running
//!   processes map (one pass over `/proc/*/maps`; only files whose section headers name a
//!   `.note.stapsdt` section are read further) or, when the module field is a path
//!   (`myapp*:/usr/bin/myapp::tick`, `pid*:/path/bin:func:entry`), that file whether or not
//!   anything runs it. The provider shown is the note's provider (no pid), and the module
//!   the path as written.
//! - Modules are basenames (`libc.so.6`); `a.out` is also the name of the main executable.
//!   `__` in a note's probe name is `-` in D.
//! - A `pid` function has the probes `entry`, `return` and one per instruction offset,
//!   named in hex without `0x` (`0`, `1`, `4`, ...; `entry` and `0` are distinct probes):
//!   an empty name or a glob selects every one it matches; an offset that is not the start
//!   of an instruction uprobes can safely take names no probe, and the reason is kept for
//!   the error ([`offsets`]).
//! - Function names are matched mangled or demangled (the nested-name part of Itanium C++
//!   and legacy Rust `_ZN...E` symbols: `_ZN4core3fmt5write17h..E` is `core::fmt::write`;
//!   no templates, arguments or Rust v0 symbols) and shown demangled.
//!
//! # Attaching
//!
//! Two ways, chosen per probe when it is discovered ([`UserAttach::per_process`]):
//!
//! - **Per-process perf-event uprobes**, one per site (`perf_event_open` with the pid, then
//!   `BPF_LINK_CREATE` with the site's cookie), when a pid is named and the session's first
//!   [`PERF_SITES_MAX`] such sites are not used up. The uprobe is installed in that process
//!   only and no filter runs per hit: on 6.18 a hit costs ≈ 190 ns less than through a
//!   uprobe_multi link with a pid (docs/BENCHMARKS.md). But each one takes ≈ 110 ms to close
//!   (the kernel waits for RCU grace periods per event, serialised), so they are kept few.
//! - **One uprobe_multi link per binary** otherwise (one `BPF_LINK_CREATE` whatever the
//!   number of sites; ≈ 30 ms to close), always for system-wide probes. A kernel without
//!   uprobe_multi links (before 6.6: Debian 12's 6.1) gets perf-event uprobes for every
//!   probe, system-wide ones included (opened without a pid).
//!
//! - **Follow-fork** (`-x followfork`): a named pid's probes are attached like
//!   system-wide ones (one uprobe_multi link per binary, no pid) and their programs test
//!   the current process against the session's family map ([`UprobeContext::family`]),
//!   which fork and exit helpers keep up to date; so the pid's children, grandchildren and
//!   threads are traced, also across `exec` for binaries the new image still maps (libc).
//!
//! The two need differently loaded programs (a uprobe_multi program cannot be attached to a
//! perf event): the loader asks [`UserAttach::multi`]. Either way the USDT semaphores are
//! `ref_ctr_offset`s, so is-enabled probes flip on while traced. A USDT probe whose sites
//! have different operand specs gets one argument decoder per distinct spec list in its
//! program; each site's attach cookie is the index of its list. A `pid` description
//! matching more than [`GROUP_MIN`] functions of one binary becomes one probe (one program,
//! one link) whose cookie indexes the functions' names, so `probefunc` is still right; `-l`
//! and the "matched" count show every function.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use dtrace_backend::program::{
    MappedArg, MappedProbe, OperandLocation, ProbeContext, ProbeSite, UprobeContext, UprobeKind,
    UsdtOperand,
};
use dtrace_runtime::uprobe::UprobeSite;

use crate::glob::glob_match;
use crate::usdt::elf::{Elf, Symbol};
use crate::usdt::{self, ArgLocation, UsdtArg, UsdtProbe};
use crate::user::offsets::{FunctionCode, Refusal};
use crate::{Attach, Description, Probe};

pub mod exec_watch;
pub mod offsets;
mod placeholder;
mod stripped_main;

/// A `pid` description matching more functions than this in one binary becomes one probe.
pub const GROUP_MIN: usize = 8;

/// A process the session follows (`-c`/`-p`): where its binaries are found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserTarget {
    pub pid: i32,
    /// For a `-c` command still held (at its exec or before it): the program it runs.
    pub exec: Option<PathBuf>,
}

/// At most this many sites per session are attached as per-process perf-event uprobes (each
/// costs ≈ 110 ms to close, one after the other; see the module documentation).
pub const PERF_SITES_MAX: usize = 4;

/// How a user probe is attached: one uprobe_multi link on `path`, or one per-process
/// perf-event uprobe per site.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserAttach {
    pub path: PathBuf,
    pub sites: Vec<UprobeSite>,
    /// `None`: system-wide.
    pub pid: Option<i32>,
    pub retprobe: bool,
    /// Perf-event uprobes, one per site (with a `pid`, or on a kernel without uprobe_multi
    /// links) rather than a uprobe_multi link.
    pub per_process: bool,
}

impl UserAttach {
    /// Whether the probe's program must be loaded for uprobe_multi links
    /// (`expected_attach_type` `BPF_TRACE_UPROBE_MULTI`) rather than for perf events.
    pub fn multi(&self) -> bool {
        !self.per_process
    }
}

/// `ENOTSUPP`: the kernel cannot put a uprobe on an instruction (some functions of libc
/// start with one).
const ENOTSUPP: i32 = 524;

/// Attaches `prog` to `sites` of `u.path`: with one uprobe_multi link, or with one
/// per-process perf-event uprobe per site when `u.per_process`. When the kernel refuses
/// some site's instruction, the others are still attached (uprobe_multi sites are split in
/// halves until the refused ones are found) and those are left out: a glob over a library
/// then attaches everything the kernel can probe; a single refused function is still an
/// error.
pub fn attach(
    prog: &dtrace_runtime::Program,
    u: &UserAttach,
    sites: &[UprobeSite],
    links: &mut Vec<dtrace_runtime::Link>,
) -> dtrace_runtime::Result<()> {
    if sites.is_empty() {
        // A placeholder (see [`UserProbes::placeholder`]).
        return Ok(());
    }
    if u.per_process {
        for site in sites {
            let opts = dtrace_runtime::uprobe::UprobeOptions {
                retprobe: u.retprobe,
                pid: u.pid,
                ref_ctr_offset: site.ref_ctr_offset,
                cookie: site.cookie,
            };
            match dtrace_runtime::uprobe::attach_uprobe_perf_link(prog, &u.path, site.offset, &opts)
            {
                Ok(link) => links.push(link),
                Err(dtrace_runtime::Error::Os { errno, .. })
                    if errno == ENOTSUPP && sites.len() > 1 => {}
                Err(e) => return Err(e),
            }
        }
        return Ok(());
    }
    let r = dtrace_runtime::uprobe::attach_multi_link(prog, &u.path, sites, u.pid, u.retprobe);
    match r {
        Ok(link) => {
            links.push(link);
            Ok(())
        }
        Err(dtrace_runtime::Error::Os { errno, .. }) if errno == ENOTSUPP && sites.len() > 1 => {
            let (a, b) = sites.split_at(sites.len() / 2);
            for half in [a, b] {
                match attach(prog, u, half, links) {
                    Err(dtrace_runtime::Error::Os { errno, .. })
                        if errno == ENOTSUPP && half.len() == 1 => {}
                    other => other?,
                }
            }
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// What the provider part of a description asks for.
#[derive(Debug, PartialEq, Eq)]
enum Scope {
    /// `myapp123`: the literal provider `myapp` in process 123.
    Pid { provider: String, pid: i32 },
    /// A glob over pids (`myapp*`): binaries, system-wide.
    Binaries { pattern: String },
}

/// The process a user description names (`pid123`, `myapp123`), if it names one.
pub fn named_pid(desc: &Description) -> Option<i32> {
    match scope(&desc.provider)? {
        Scope::Pid { pid, .. } => Some(pid),
        Scope::Binaries { .. } => None,
    }
}

/// DTrace's error (tag and message) for a `pid` description that named no probe, when
/// DTrace has a specific one: an invalid pid, the `-` function misused, a probe name that
/// is neither `entry`, `return` nor an offset, a function the module does not have, an
/// offset past the end of the function. `None`: the generic "does not match any probes".
pub fn pid_description_error(
    desc: &Description,
    refused: &[offsets::Refusal],
) -> Option<(&'static str, String)> {
    let digits = desc.provider.strip_prefix("pid")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if digits.parse::<i64>().map_or(true, |pid| pid <= 0) {
        return Some((
            "D_PROC_BADPID",
            format!("{} does not contain a valid pid", desc.provider),
        ));
    }
    let literal = |s: &str| !s.is_empty() && !is_glob(s);
    if desc.function == "-" {
        if !desc.module.is_empty() && desc.module != "a.out" {
            return Some((
                "D_PROC_LIB",
                "only the a.out module is valid with the '-' function".into(),
            ));
        }
        if !literal(&desc.name) {
            return Some((
                "D_PROC_NAME",
                "only individual addresses may be specified with the '-' function".into(),
            ));
        }
        return None;
    }
    if let Some(r) = refused
        .iter()
        .find(|r| matches!(r.why, offsets::Why::Beyond { .. }))
    {
        return Some(("D_PROC_OFF", r.to_string()));
    }
    if literal(&desc.name)
        && !matches!(desc.name.as_str(), "entry" | "return")
        && parse_offset(&desc.name).is_none()
    {
        return Some((
            "D_PROC_NAME",
            format!("'{}' is an invalid probe name", desc.name),
        ));
    }
    if refused.is_empty() && literal(&desc.module) && literal(&desc.function) {
        return Some((
            "D_PROC_FUNC",
            format!(
                "failed to lookup '{}' in module '{}'",
                desc.function, desc.module
            ),
        ));
    }
    None
}

/// The files process `pid` maps now (its main executable, libraries, `dlopen`ed ones).
pub fn mapped_files(pid: i32) -> Vec<PathBuf> {
    maps_files(pid)
}

/// Whether `desc` may name probes of binaries that start running after tracing began: a
/// glob over a user provider's pids (`myapp*:::tick`, `pid*:prog:main:entry`) whose module
/// is not a path (a path names its binary at once).
pub fn deferrable(desc: &Description) -> bool {
    matches!(scope(&desc.provider), Some(Scope::Binaries { .. })) && !desc.module.contains('/')
}

/// Whether `desc` names a process (`pid$target`, `p*d123`, `myapp$target`) and no literal
/// module: the libraries that process loads later (`dlopen`) may hold more of its probes,
/// as DTrace's pid provider looks in every object the process maps, so they are watched
/// for, as for a glob over processes.
pub fn follows_libraries(desc: &Description) -> bool {
    named_pid(desc).is_some() && (desc.module.is_empty() || is_glob(&desc.module))
}

/// Whether `desc` may match nothing when tracing starts: a provider glob naming a process
/// that follows its libraries (`p*d$target::run:entry`), whose probes may all be in a
/// library loaded later. A plain `pid$target::run:entry` must match at once, as in DTrace.
pub fn may_match_later(desc: &Description) -> bool {
    let provider = desc.provider.trim_end_matches(|c: char| c.is_ascii_digit());
    follows_libraries(desc) && is_glob(provider)
}

fn is_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Kernel and consumer providers, never user ones.
const KERNEL_PROVIDERS: &[&str] = &["dtrace", "profile", "tick", "cpc", "syscall", "sdt", "fbt"];

fn scope(provider: &str) -> Option<Scope> {
    if provider.is_empty() || KERNEL_PROVIDERS.contains(&provider) {
        return None;
    }
    // A pid ends the name, glob or not (`p*d123` is the `pid` provider and any USDT
    // provider its glob matches, in process 123), as DTrace splits it. A glob must start
    // with a literal character: `*:::` would scan every binary.
    let digits = provider.len()
        - provider
            .trim_end_matches(|c: char| c.is_ascii_digit())
            .len();
    let literal_start = provider.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    if is_glob(provider) && digits > 0 && literal_start {
        let (name, pid) = provider.split_at(provider.len() - digits);
        return Some(Scope::Pid {
            provider: name.to_string(),
            pid: pid.parse().ok()?,
        });
    }
    if is_glob(provider) {
        return literal_start.then(|| Scope::Binaries {
            pattern: provider.to_string(),
        });
    }
    if digits == 0 || digits == provider.len() {
        return None;
    }
    let (name, pid) = provider.split_at(provider.len() - digits);
    Some(Scope::Pid {
        provider: name.to_string(),
        pid: pid.parse().ok()?,
    })
}

/// User probes are numbered from here, after any number of kernel probes, as DTrace's
/// USDT and `pid` probes come after the kernel's (and so that kernel probe ids do not depend
/// on which user probes were discovered first).
pub const USER_PROBE_IDS: u32 = 1 << 20;

/// What identifies a user probe: (pid, binary, provider, module, function, name).
type ProbeKey = (Option<i32>, PathBuf, String, String, String, String);

/// User-probe discovery state of a [`crate::Catalog`].
#[derive(Debug, Default)]
pub struct UserProbes {
    pub targets: Vec<UserTarget>,
    /// Follow-fork (`-x followfork`): probes of a named pid also fire in its descendants.
    pub follow_fork: bool,
    /// Probe index in the catalog by (pid, path, provider, module, function, name).
    known: HashMap<ProbeKey, usize>,
    /// Binaries running processes map that have USDT notes (scanned once).
    usdt_binaries: Option<Vec<PathBuf>>,
    /// Parsed notes by path.
    notes: HashMap<PathBuf, Vec<UsdtProbe>>,
    /// Sites given per-process perf-event uprobes so far (at most [`PERF_SITES_MAX`]).
    perf_sites: usize,
    /// User probes created so far.
    created: u32,
    /// The id of each function's `pid` probe, by (pid, path, provider, module, function,
    /// name): the same whether the probe is enabled alone or as one of a glob's functions
    /// (a group probe, whose own id is never listed), so a probe's id is stable within a run.
    function_ids: HashMap<ProbeKey, u32>,
    /// The functions of each binary `pid` descriptions looked in ([`function_offsets`]:
    /// reading them can mean reading a debug file too), with the file's identity when read,
    /// so a file replaced since is read again.
    functions: HashMap<PathBuf, (Option<FileStamp>, Arc<Vec<FunctionSymbol>>)>,
}

/// What tells one version of a file from another: device, inode, modification time.
type FileStamp = (u64, u64, i64, i64);

impl UserProbes {
    /// The id of the next user probe.
    fn next_id(&mut self) -> u32 {
        self.created += 1;
        USER_PROBE_IDS + self.created
    }

    /// The id of the `pid` probe `key` names (its function exact), made the first time.
    fn function_id(&mut self, key: ProbeKey) -> u32 {
        if let Some(&id) = self.function_ids.get(&key) {
            return id;
        }
        let id = self.next_id();
        self.function_ids.insert(key, id);
        id
    }

    /// [`function_offsets`] of the binary at `path`, read once per version of the file.
    fn functions(&mut self, path: &Path) -> Arc<Vec<FunctionSymbol>> {
        use std::os::unix::fs::MetadataExt;
        let stamp = std::fs::metadata(path)
            .ok()
            .map(|m| (m.dev(), m.ino(), m.mtime(), m.mtime_nsec()));
        match self.functions.get(path) {
            Some((known, functions)) if known.is_some() && *known == stamp => functions.clone(),
            _ => {
                let functions = Arc::new(function_offsets(path));
                self.functions
                    .insert(path.to_path_buf(), (stamp, functions.clone()));
                functions
            }
        }
    }

    /// The exact description of the user probe whose id is `id`: a probe made so far, or a
    /// function of a `pid` glob's probe.
    pub fn description_of(&self, id: u32, probes: &[Probe]) -> Option<Description> {
        let exact = |provider: &str, module: &str, function: &str, name: &str| Description {
            provider: provider.to_string(),
            module: module.to_string(),
            function: function.to_string(),
            name: name.to_string(),
        };
        if let Some((key, _)) = self.function_ids.iter().find(|(_, &i)| i == id) {
            let (_, _, provider, module, function, name) = key;
            return Some(exact(provider, module, function, name));
        }
        let p = probes.iter().find(|p| {
            p.site.id == id
                && matches!(&p.site.context, ProbeContext::Uprobe(u) if u.functions.is_empty())
                && matches!(&p.attach, Attach::User(a) if !a.sites.is_empty())
        })?;
        Some(exact(
            &p.site.provider,
            &p.site.module,
            &p.site.function,
            &p.site.name,
        ))
    }

    /// Discover and add to `probes` the user probes `desc` names; returns the indices of the
    /// probes matching it. Why a `pid` offset it names exactly has no probe (inside an
    /// instruction, past the end of the function) is added to `refused`.
    pub fn discover(
        &mut self,
        desc: &Description,
        probes: &mut Vec<Probe>,
        refused: &mut Vec<Refusal>,
    ) -> Vec<usize> {
        let Some(scope) = scope(&desc.provider) else {
            return Vec::new();
        };
        // A path names its binary (`/usr/bin/myapp`, or relative to the working directory:
        // `./myapp`).
        let path_module = desc.module.contains('/').then(|| {
            let p = PathBuf::from(&desc.module);
            std::fs::canonicalize(&p).unwrap_or(p)
        });
        let mut found = Vec::new();
        match &scope {
            Scope::Pid { provider, pid } => {
                let binaries = match &path_module {
                    Some(p) => vec![(p.clone(), false)],
                    None => self.process_binaries(*pid),
                };
                for (path, main) in binaries {
                    let modules = module_names(
                        &path,
                        main,
                        path_module.as_ref().map(|_| desc.module.as_str()),
                    );
                    if !module_matches(&desc.module, &modules) {
                        continue;
                    }
                    let module = modules[0].clone();
                    if glob_match(provider, "pid") {
                        found.extend(self.pid_probes(
                            desc,
                            &path,
                            &module,
                            Some(*pid),
                            probes,
                            refused,
                        ));
                    }
                    if provider != "pid" {
                        found.extend(self.usdt_probes(
                            desc,
                            &path,
                            &module,
                            &|p| glob_match(provider, p),
                            Some(*pid),
                            probes,
                        ));
                    }
                }
            }
            Scope::Binaries { pattern } => {
                let binaries = match &path_module {
                    Some(p) => vec![p.clone()],
                    None => self.usdt_binaries().to_vec(),
                };
                for path in binaries {
                    let modules = module_names(
                        &path,
                        false,
                        path_module.as_ref().map(|_| desc.module.as_str()),
                    );
                    if !modules.iter().any(|m| glob_match(&desc.module, m)) {
                        continue;
                    }
                    let module = modules[0].clone();
                    found.extend(self.usdt_probes(
                        desc,
                        &path,
                        &module,
                        &|p| glob_match(pattern, p),
                        None,
                        probes,
                    ));
                    if path_module.is_some() && glob_match(pattern, "pid") {
                        found.extend(self.pid_probes(desc, &path, &module, None, probes, refused));
                    }
                }
            }
        }
        found
    }

    /// The probes `desc` (a [`deferrable`] description) names in the binary at `path`,
    /// which started running (or was mapped) after tracing began: its USDT probes whose
    /// provider the description's glob matches and, for a `pid` glob naming a module, its
    /// `pid` probes; all attached system-wide. The module is the binary's basename.
    pub fn discover_in(
        &mut self,
        desc: &Description,
        path: &Path,
        probes: &mut Vec<Probe>,
        refused: &mut Vec<Refusal>,
    ) -> Vec<usize> {
        let Some(Scope::Binaries { pattern }) = scope(&desc.provider) else {
            return Vec::new();
        };
        let modules = module_names(path, false, None);
        if !modules.iter().any(|m| glob_match(&desc.module, m)) {
            return Vec::new();
        }
        let module = modules[0].clone();
        let mut found = Vec::new();
        if has_stapsdt(path) {
            found.extend(self.usdt_probes(
                desc,
                path,
                &module,
                &|p| glob_match(&pattern, p),
                None,
                probes,
            ));
        }
        if glob_match(&pattern, "pid") && !desc.module.is_empty() {
            found.extend(self.pid_probes(desc, path, &module, None, probes, refused));
        }
        found
    }

    /// A probe with no site yet for a [`deferrable`] description that matches nothing now:
    /// its clause is compiled for it (so the clause's variables and aggregations exist
    /// from the start) and it is never attached; probes found later take its place.
    pub fn placeholder(&mut self, desc: &Description, probes: &mut Vec<Probe>) -> usize {
        let site = ProbeSite {
            id: self.next_id(),
            provider: desc.provider.clone(),
            module: desc.module.clone(),
            function: desc.function.clone(),
            name: desc.name.clone(),
            context: ProbeContext::Uprobe(placeholder::context(desc)),
        };
        probes.push(Probe {
            site,
            attach: Attach::User(UserAttach {
                path: PathBuf::new(),
                sites: Vec::new(),
                pid: None,
                retprobe: false,
                per_process: false,
            }),
        });
        probes.len() - 1
    }

    /// For a probe of process `pid`: the pid its uprobes are attached with and the family
    /// its program tests. Under follow-fork a named pid's probes are attached by binary,
    /// system-wide, and filtered by the program ([`UprobeContext::family`]), so that the
    /// process's descendants are traced too.
    fn follow(&self, pid: Option<i32>) -> (Option<i32>, Option<u32>) {
        match pid {
            Some(p) if self.follow_fork => (None, Some(p as u32)),
            _ => (pid, None),
        }
    }

    /// Whether a probe of process `pid` (`None`: system-wide) with `sites` sites gets
    /// per-process perf-event uprobes; counts them against [`PERF_SITES_MAX`].
    /// A kernel without uprobe_multi links (before 6.6) has only perf-event uprobes, per
    /// site (system-wide when no pid is named).
    fn per_process(&mut self, pid: Option<i32>, sites: usize) -> bool {
        if !dtrace_runtime::uprobe::uprobe_multi_available() {
            return true;
        }
        let yes = pid.is_some() && self.perf_sites + sites <= PERF_SITES_MAX;
        if yes {
            self.perf_sites += sites;
        }
        yes
    }

    /// The USDT providers in the binaries process `pid` maps (for `-l -p PID`).
    pub fn providers_of(&mut self, pid: i32) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (path, _) in self.process_binaries(pid) {
            if !has_stapsdt(&path) {
                continue;
            }
            for note in self.notes(&path) {
                if !out.contains(&note.provider) {
                    out.push(note.provider.clone());
                }
            }
        }
        out
    }

    /// The binaries with USDT notes found so far (see [`crate::Catalog::examined_binaries`]).
    pub fn examined_binaries(&self) -> Vec<PathBuf> {
        self.usdt_binaries.clone().unwrap_or_default()
    }

    /// The ELF files process `pid` maps, `true` for its main executable.
    fn process_binaries(&self, pid: i32) -> Vec<(PathBuf, bool)> {
        let mapped = maps_files(pid);
        // A `-c` command still held (at its exec, or before it): what it will map, its
        // program and the libraries it needs, besides what is mapped already (the dynamic
        // linker).
        if let Some(exec) = self
            .targets
            .iter()
            .find(|t| t.pid == pid)
            .and_then(|t| t.exec.clone())
        {
            let exec = std::fs::canonicalize(&exec).unwrap_or(exec);
            let mut out = vec![(exec.clone(), true)];
            out.extend(needed_libraries(&exec).into_iter().map(|p| (p, false)));
            for path in mapped {
                if !out.iter().any(|(p, _)| *p == path) {
                    out.push((path, false));
                }
            }
            return out;
        }
        let exe = std::fs::read_link(format!("/proc/{pid}/exe")).ok();
        let mut out: Vec<(PathBuf, bool)> = Vec::new();
        for path in mapped {
            if !out.iter().any(|(p, _)| *p == path) {
                let main = exe.as_ref() == Some(&path);
                out.push((path, main));
            }
        }
        out
    }

    /// Files with USDT notes mapped by any running process, or that a held `-c` command
    /// will map (its program and the libraries it needs).
    fn usdt_binaries(&mut self) -> &[PathBuf] {
        if self.usdt_binaries.is_none() {
            let mut seen = HashSet::new();
            let mut with_notes = Vec::new();
            let held: Vec<PathBuf> = self
                .targets
                .iter()
                .filter(|t| t.exec.is_some())
                .flat_map(|t| self.process_binaries(t.pid))
                .map(|(p, _)| p)
                .collect();
            for path in held {
                if seen.insert(path.clone()) && has_stapsdt(&path) {
                    with_notes.push(path);
                }
            }
            if let Ok(dir) = std::fs::read_dir("/proc") {
                for entry in dir.flatten() {
                    let name = entry.file_name();
                    let Some(pid) = name.to_str().and_then(|n| n.parse::<i32>().ok()) else {
                        continue;
                    };
                    for path in maps_files(pid) {
                        if seen.insert(path.clone()) && has_stapsdt(&path) {
                            with_notes.push(path);
                        }
                    }
                }
            }
            self.usdt_binaries = Some(with_notes);
        }
        self.usdt_binaries.as_deref().unwrap_or_default()
    }

    fn notes(&mut self, path: &Path) -> &[UsdtProbe] {
        self.notes
            .entry(path.to_path_buf())
            .or_insert_with(|| usdt::read_probes(path).unwrap_or_default())
    }

    #[allow(clippy::too_many_arguments)]
    fn usdt_probes(
        &mut self,
        desc: &Description,
        path: &Path,
        module: &str,
        provider_ok: &dyn Fn(&str) -> bool,
        pid: Option<i32>,
        probes: &mut Vec<Probe>,
    ) -> Vec<usize> {
        let (attach_pid, family) = self.follow(pid);
        // Sites grouped by (provider, function, name).
        let mut groups: BTreeMap<(String, String, String), Vec<UsdtProbe>> = BTreeMap::new();
        for note in self.notes(path) {
            if !provider_ok(&note.provider) {
                continue;
            }
            let provider = match pid {
                Some(pid) => format!("{}{pid}", note.provider),
                None => note.provider.clone(),
            };
            let function = note.function.as_deref().map(demangle).unwrap_or_default();
            let name = note.d_name();
            if !(glob_match(&desc.provider, &provider)
                && glob_match(&desc.function, &function)
                && glob_match(&desc.name, &name))
            {
                continue;
            }
            groups
                .entry((provider, function, name))
                .or_default()
                .push(note.clone());
        }
        let mut found = Vec::new();
        for ((provider, function, name), notes) in groups {
            let key = (
                pid,
                path.to_path_buf(),
                provider.clone(),
                module.to_string(),
                function.clone(),
                name.clone(),
            );
            if let Some(&i) = self.known.get(&key) {
                found.push(i);
                continue;
            }
            let mut specs: Vec<Vec<UsdtOperand>> = Vec::new();
            let mut sites = Vec::new();
            let declared = notes.iter().find_map(|n| n.declared.clone());
            for note in &notes {
                let spec = translated_operands(note);
                let cookie = match specs.iter().position(|s| *s == spec) {
                    Some(i) => i,
                    None => {
                        specs.push(spec);
                        specs.len() - 1
                    }
                };
                sites.push(UprobeSite {
                    offset: note.pc_offset,
                    ref_ctr_offset: note.semaphore_offset,
                    cookie: cookie as u64,
                });
            }
            let uprobe = ProbeContext::Uprobe(UprobeContext {
                kind: UprobeKind::Usdt(specs),
                functions: Vec::new(),
                ids: Vec::new(),
                family,
                kernel: Vec::new(),
                // Its DWARF defines the types its declared arguments name.
                object: declared.as_ref().map(|_| path.to_path_buf()),
            });
            let site = ProbeSite {
                id: self.next_id(),
                provider,
                module: module.to_string(),
                function,
                name,
                context: match &declared {
                    Some(d) if family.is_none() => typed(uprobe, d),
                    _ => uprobe,
                },
            };
            let per_process = self.per_process(attach_pid, sites.len());
            probes.push(Probe {
                site,
                attach: Attach::User(UserAttach {
                    path: path.to_path_buf(),
                    sites,
                    pid: attach_pid,
                    retprobe: false,
                    per_process,
                }),
            });
            self.known.insert(key, probes.len() - 1);
            found.push(probes.len() - 1);
        }
        found
    }

    /// The `pid` probes `desc` names in the binary at `path`: `entry`, `return` and
    /// instruction offsets ([`offsets`]) of the functions it names. Why a literal offset
    /// names no probe in a function is added to `refused`.
    fn pid_probes(
        &mut self,
        desc: &Description,
        path: &Path,
        module: &str,
        pid: Option<i32>,
        probes: &mut Vec<Probe>,
        refused: &mut Vec<Refusal>,
    ) -> Vec<usize> {
        let (attach_pid, family) = self.follow(pid);
        let provider = match pid {
            Some(pid) => format!("pid{pid}"),
            None => "pid".to_string(),
        };
        if !glob_match(&desc.provider, &provider) {
            return Vec::new();
        }
        let functions: Vec<(String, FunctionSymbol)> = self
            .functions(path)
            .iter()
            .filter_map(|f| {
                // A function the description names by any of its aliases is known by its
                // first name, as DTrace names a function by its address (`go` for `go`
                // and its weak alias `_go`).
                let named = f.named_by(&desc.function);
                let first = f.names.first()?.1.clone();
                named.then(|| (first, f.clone()))
            })
            .collect();
        if functions.is_empty() {
            return Vec::new();
        }
        // The functions (indices) each probe name is offered in, names in DTrace's order.
        let file = File::open(path).ok();
        let mut by_name: BTreeMap<PidName, Vec<usize>> = BTreeMap::new();
        for (i, (name, f)) in functions.iter().enumerate() {
            let code = || {
                let read = |file: &File| {
                    // A size no function has (a damaged symbol table) is not read.
                    let mut bytes =
                        vec![0u8; usize::try_from(f.size).ok().filter(|&n| n <= 1 << 24)?];
                    file.read_exact_at(&mut bytes, f.offset).ok()?;
                    Some(FunctionCode::decode(&bytes))
                };
                file.as_ref()
                    .and_then(read)
                    .unwrap_or_else(|| FunctionCode::unreadable(f.size))
            };
            for n in pid_names(&desc.name, name, code, refused) {
                by_name.entry(n).or_default().push(i);
            }
        }
        let mut found = Vec::new();
        for (pid_name, members) in by_name {
            let name = pid_name.to_string();
            let (retprobe, kind, offset) = match pid_name {
                PidName::Entry => (false, UprobeKind::Entry, 0),
                PidName::Return => (true, UprobeKind::Return, 0),
                PidName::Offset(off) => (false, UprobeKind::Entry, off),
            };
            // Functions of one name (static functions of two files) are one probe at each
            // of their addresses, as DTrace adds every address to the probe of the name.
            let mut units: Vec<Vec<usize>> = Vec::new();
            let mut unit_of: HashMap<&str, usize> = HashMap::new();
            for i in members {
                match unit_of.get(functions[i].0.as_str()) {
                    Some(&u) => units[u].push(i),
                    None => {
                        unit_of.insert(&functions[i].0, units.len());
                        units.push(vec![i]);
                    }
                }
            }
            let groups: Vec<Vec<Vec<usize>>> = if units.len() > GROUP_MIN {
                vec![units]
            } else {
                units.into_iter().map(|u| vec![u]).collect()
            };
            for group in groups {
                let grouped = group.len() > 1;
                let function = if grouped {
                    desc.function.clone()
                } else {
                    functions[group[0][0]].0.clone()
                };
                let key = (
                    pid,
                    path.to_path_buf(),
                    provider.clone(),
                    module.to_string(),
                    format!("{function}\0{}", group.len()),
                    name.clone(),
                );
                if let Some(&i) = self.known.get(&key) {
                    found.push(i);
                    continue;
                }
                let function_key = |f: &str| {
                    (
                        pid,
                        path.to_path_buf(),
                        provider.clone(),
                        module.to_string(),
                        f.to_string(),
                        name.clone(),
                    )
                };
                let (id, ids) = if grouped {
                    let ids: Vec<u32> = group
                        .iter()
                        .map(|unit| self.function_id(function_key(&functions[unit[0]].0)))
                        .collect();
                    (self.next_id(), ids)
                } else {
                    (self.function_id(function_key(&function)), Vec::new())
                };
                // The attach cookie is the function's place in the group.
                let sites: Vec<UprobeSite> = group
                    .iter()
                    .enumerate()
                    .flat_map(|(cookie, unit)| {
                        let functions = &functions;
                        unit.iter().map(move |&i| UprobeSite {
                            offset: functions[i].1.offset + offset,
                            ref_ctr_offset: 0,
                            cookie: cookie as u64,
                        })
                    })
                    .collect();
                let site = ProbeSite {
                    id,
                    provider: provider.clone(),
                    module: module.to_string(),
                    function,
                    name: name.clone(),
                    context: ProbeContext::Uprobe(UprobeContext {
                        kind: kind.clone(),
                        functions: if grouped {
                            group
                                .iter()
                                .map(|unit| functions[unit[0]].0.clone())
                                .collect()
                        } else {
                            Vec::new()
                        },
                        ids,
                        family,
                        kernel: Vec::new(),
                        // An instruction offset's arguments are not the parameters.
                        object: matches!(pid_name, PidName::Entry | PidName::Return)
                            .then(|| path.to_path_buf()),
                    }),
                };
                let per_process = self.per_process(attach_pid, sites.len());
                probes.push(Probe {
                    site,
                    attach: Attach::User(UserAttach {
                        path: path.to_path_buf(),
                        sites,
                        pid: attach_pid,
                        retprobe,
                        per_process,
                    }),
                });
                self.known.insert(key, probes.len() - 1);
                found.push(probes.len() - 1);
            }
        }
        found
    }
}

/// A `pid` probe of a function: in DTrace's order, `entry`, `return`, then each instruction
/// offset (named in hex without `0x`: `0`, `1`, `4`, ..., `1f`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum PidName {
    Entry,
    Return,
    Offset(u64),
}

impl std::fmt::Display for PidName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PidName::Entry => f.write_str("entry"),
            PidName::Return => f.write_str("return"),
            PidName::Offset(off) => write!(f, "{off:x}"),
        }
    }
}

/// The probes of `function` that `pattern` (a description's name field) selects. Its code
/// (`code()`, decoded only when `pattern` can name an offset) gives the instruction offsets:
/// a literal offset (`b`, `0x1f`) selects that probe if the function has it, else says why
/// in `refused`; a glob (or an empty name) selects every offset whose name it matches.
fn pid_names(
    pattern: &str,
    function: &str,
    code: impl FnOnce() -> FunctionCode,
    refused: &mut Vec<Refusal>,
) -> Vec<PidName> {
    let mut out: Vec<PidName> = [PidName::Entry, PidName::Return]
        .into_iter()
        .filter(|n| glob_match(pattern, &n.to_string()))
        .collect();
    if let Some(off) = parse_offset(pattern) {
        match code().check(off, function) {
            Ok(()) => out.push(PidName::Offset(off)),
            Err(why) => refused.push(why),
        }
    } else if pattern.is_empty() || is_glob(pattern) {
        out.extend(
            code()
                .probe_offsets()
                .map(PidName::Offset)
                .filter(|n| glob_match(pattern, &n.to_string())),
        );
    }
    out
}

/// `4`, `0x10`, `1f` (DTrace offsets are hex).
fn parse_offset(name: &str) -> Option<u64> {
    if name.is_empty() || is_glob(name) {
        return None;
    }
    let hex = name.strip_prefix("0x").unwrap_or(name);
    u64::from_str_radix(hex, 16).ok()
}

/// Whether a description's module field names a binary known by `modules`
/// ([`module_names`]): a glob matching one of them, or, as DTrace resolves a library's
/// name, a literal that is the start of its basename up to a `.` (`libc`, `libc.so` for
/// `libc.so.6`).
fn module_matches(pattern: &str, modules: &[String]) -> bool {
    modules.iter().any(|m| {
        glob_match(pattern, m)
            || (!pattern.is_empty()
                && !is_glob(pattern)
                && m.strip_prefix(pattern)
                    .is_some_and(|rest| rest.starts_with('.')))
    })
}

/// The names a binary answers to as a module: its basename (or the path as `written` when a
/// description named it), and `a.out` for a main executable.
fn module_names(path: &Path, main: bool, written: Option<&str>) -> Vec<String> {
    let mut names = vec![match written {
        Some(w) => w.to_string(),
        None => file_module(path),
    }];
    if main {
        names.push("a.out".to_string());
    }
    names
}

/// The files mapped by process `pid`, in map order. A file with no name on disk (a
/// `memfd`, as the objects of providers defined at run time are) is reached through
/// `/proc/PID/map_files/` (root can open those), once per file.
fn maps_files(pid: i32) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = Vec::new();
    let mut memfds: Vec<&str> = Vec::new();
    for line in text.lines() {
        // address perms offset dev inode path
        let mut fields = line.splitn(6, ' ');
        let range = fields.next().unwrap_or("");
        let inode = fields.nth(3).unwrap_or("0");
        let path = fields.next().unwrap_or("").trim_start();
        let path = if path.starts_with("/memfd:") {
            if memfds.contains(&inode) {
                continue;
            }
            memfds.push(inode);
            PathBuf::from(format!("/proc/{pid}/map_files/{range}"))
        } else if inode == "0" || !path.starts_with('/') || path.ends_with(" (deleted)") {
            continue;
        } else {
            PathBuf::from(path)
        };
        if out.last() != Some(&path) && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// A file's name as a module: its basename, or for a `memfd` reached through
/// `/proc/PID/map_files/`, the name it was created with (`/memfd:NAME (deleted)`).
fn file_module(path: &Path) -> String {
    if path.starts_with("/proc") && path.components().any(|c| c.as_os_str() == "map_files") {
        if let Ok(target) = std::fs::read_link(path) {
            let t = target.to_string_lossy();
            let t = t.strip_suffix(" (deleted)").unwrap_or(&t);
            return t.strip_prefix("/memfd:").unwrap_or(t).to_string();
        }
    }
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Whether the ELF file at `path` has a `.note.stapsdt` section, reading only its headers.
pub fn has_stapsdt(path: &Path) -> bool {
    fn check(path: &Path) -> Option<bool> {
        let file = File::open(path).ok()?;
        let mut header = [0u8; 64];
        file.read_exact_at(&mut header, 0).ok()?;
        if &header[..4] != b"\x7fELF" || header[4] != 2 || header[5] != 1 {
            return Some(false);
        }
        let u16_at = |b: &[u8], at: usize| u16::from_le_bytes([b[at], b[at + 1]]) as usize;
        let u64_at =
            |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap_or([0; 8]));
        let shoff = u64_at(&header, 0x28);
        let (entsize, count, strndx) = (
            u16_at(&header, 0x3a),
            u16_at(&header, 0x3c),
            u16_at(&header, 0x3e),
        );
        if entsize < 64 || count == 0 || strndx >= count || count > 4096 {
            return Some(false);
        }
        let mut headers = vec![0u8; entsize * count];
        file.read_exact_at(&mut headers, shoff).ok()?;
        let strtab = &headers[strndx * entsize..];
        let (str_off, str_size) = (u64_at(strtab, 0x18), u64_at(strtab, 0x20));
        if str_size > 1 << 20 {
            return Some(false);
        }
        let mut names = vec![0u8; str_size as usize];
        file.read_exact_at(&mut names, str_off).ok()?;
        let wanted = b".note.stapsdt\0";
        Some((0..count).any(|i| {
            let name = u32::from_le_bytes(
                headers[i * entsize..i * entsize + 4]
                    .try_into()
                    .unwrap_or([0; 4]),
            ) as usize;
            names.get(name..name + wanted.len()) == Some(&wanted[..])
        }))
    }
    check(path).unwrap_or(false)
}

/// The operands of `arg0..argN` at one site: the note's, in the order of the translated
/// arguments when the probe was declared with a mapping (`probe p(int i, int j) : (int j,
/// int i)`), so `argN` is the N-th translated argument as in DTrace.
fn translated_operands(note: &UsdtProbe) -> Vec<UsdtOperand> {
    let native = operands(note);
    match &note.declared {
        Some(d) => d
            .mapping
            .iter()
            .map(|&k| {
                native.get(k).cloned().unwrap_or(UsdtOperand {
                    size: 8,
                    signed: true,
                    location: OperandLocation::Unknown,
                })
            })
            .collect(),
        None => native,
    }
}

/// A USDT probe whose argument types were declared in a provider file: `args[N]` has the
/// N-th translated argument's type, `(T)argN`, or `xlate <T> ((N)argN)` when the declared
/// translation changes the type (the script must define that translator, as in DTrace);
/// `argN` stays the integer the site passes. D's `string` is a `char *` in the program:
/// read it with `copyinstr()`.
fn typed(uprobe: ProbeContext, declared: &dtrace_sdt::ProbeDef) -> ProbeContext {
    let args = declared
        .translated
        .iter()
        .zip(&declared.mapping)
        .enumerate()
        .map(|(i, (ty, &k))| {
            let cast = dtrace_sdt::ctype::c_spelling(ty);
            let native = declared
                .native
                .get(k)
                .map(|n| dtrace_sdt::ctype::c_spelling(n));
            let expr = match native {
                Some(n) if n != cast => format!("xlate <{cast}> (({n})arg{i})"),
                _ => format!("({cast})arg{i}"),
            };
            MappedArg {
                ty: ty.clone(),
                expr,
            }
        })
        .collect();
    ProbeContext::Mapped(MappedProbe {
        base: Box::new(uprobe),
        filter: None,
        args,
    })
}

/// The argument operands of one note, as the program reads them.
fn operands(note: &UsdtProbe) -> Vec<UsdtOperand> {
    let Ok(args) = &note.args else {
        return Vec::new();
    };
    args.iter().map(|a| operand(a, note.pc)).collect()
}

fn operand(arg: &UsdtArg, pc: u64) -> UsdtOperand {
    let location = match &arg.location {
        _ if arg.float => OperandLocation::Unknown,
        ArgLocation::Register { reg, high_byte } => OperandLocation::Register {
            offset: reg.pt_regs_offset(),
            high_byte: *high_byte,
        },
        ArgLocation::Memory {
            base,
            index,
            scale,
            offset,
            symbol: None,
        } => OperandLocation::Memory {
            base: base.map(|r| r.pt_regs_offset()),
            index: index.map(|r| r.pt_regs_offset()),
            scale: *scale,
            displacement: *offset,
        },
        ArgLocation::Memory { .. } => OperandLocation::Unknown,
        ArgLocation::Immediate(v) => OperandLocation::Immediate(*v),
        ArgLocation::RipRelative {
            address: Some(a), ..
        } => OperandLocation::PcRelative {
            delta: a.wrapping_sub(pc) as i64,
        },
        ArgLocation::Absolute {
            address: Some(a), ..
        } => OperandLocation::Memory {
            base: None,
            index: None,
            scale: 1,
            displacement: *a as i64,
        },
        ArgLocation::RipRelative { .. } | ArgLocation::Absolute { .. } => OperandLocation::Unknown,
    };
    UsdtOperand {
        size: arg.size,
        signed: arg.signed,
        location,
    }
}

/// A defined function of an ELF file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FunctionSymbol {
    /// Its file offset.
    pub offset: u64,
    /// Its size in bytes (the largest of its symbols').
    pub size: u64,
    /// The `(raw, shown)` names of every symbol at its address (aliases such as `_IO_puts`
    /// and `puts`), the one DTrace names the function by first
    /// ([`crate::usdt::elf::Symbol::alias_rank`]).
    pub names: Vec<(String, String)>,
}

impl FunctionSymbol {
    /// Whether a description's function field `pattern` names this function: by any of its
    /// names, raw or demangled. As in DTrace, a glob (an empty field too) passes over
    /// versioned (`memcpy@GLIBC_2.2.5`) and compiler-made (`foo.cold`, `bar.constprop.0`)
    /// names, which name a function only written out.
    pub fn named_by(&self, pattern: &str) -> bool {
        let glob = pattern.is_empty() || is_glob(pattern);
        self.names.iter().any(|(raw, name)| {
            !(glob && raw.contains(['.', '@']))
                && (glob_match(pattern, name) || glob_match(pattern, raw))
        })
    }
}

/// Every defined function of the ELF file at `path` (`.symtab`; for a stripped file its
/// `.dynsym` and the static functions of its separate debug file or its MiniDebugInfo:
/// [`crate::usdt::elf::function_symbols`]) whose first instruction takes a uprobe
/// ([`offsets::entry_accepted`]: some libc functions start with a `lock`ed instruction;
/// leaving them out saves the kernel's refusal, and a failed uprobe_multi attach costs
/// about 100 ms; [`attach`] still copes with others). The code is the file's own.
pub fn function_offsets(path: &Path) -> Vec<FunctionSymbol> {
    let Ok(data) = std::fs::read(path) else {
        return Vec::new();
    };
    let Ok(elf) = Elf::parse(&data) else {
        return Vec::new();
    };
    // Instructions are decoded as x86_64 code: a 32-bit program's functions have no
    // `pid` probes.
    if elf.is_32 {
        return Vec::new();
    }
    let symbols = crate::usdt::elf::function_symbols(path, &elf);
    // Each function's offset and symbols.
    let mut index: HashMap<u64, usize> = HashMap::new();
    let mut found: Vec<(u64, Vec<Symbol>)> = Vec::new();
    for s in symbols {
        let Some(offset) = elf.vaddr_to_offset(s.value) else {
            continue;
        };
        if !offsets::entry_accepted(data.get(offset as usize..).unwrap_or_default()) {
            continue;
        }
        match index.get(&offset) {
            Some(&i) => found[i].1.push(s),
            None => {
                index.insert(offset, found.len());
                found.push((offset, vec![s]));
            }
        }
    }
    let mut functions: Vec<FunctionSymbol> = found
        .into_iter()
        .map(|(offset, mut symbols)| {
            symbols.sort_by(|a, b| a.alias_rank().cmp(&b.alias_rank()));
            FunctionSymbol {
                offset,
                size: symbols.iter().map(|s| s.size).max().unwrap_or(0),
                names: symbols
                    .into_iter()
                    .map(|s| {
                        let shown = demangle(&s.name);
                        (s.name, shown)
                    })
                    .collect(),
            }
        })
        .collect();
    if !functions
        .iter()
        .any(|f| f.names.iter().any(|(raw, _)| raw == "main"))
    {
        if let Some(main) = stripped_main::main_function(&data, &elf).and_then(|(vaddr, size)| {
            let offset = elf.vaddr_to_offset(vaddr)?;
            offsets::entry_accepted(data.get(offset as usize..).unwrap_or_default()).then(|| {
                FunctionSymbol {
                    offset,
                    size,
                    names: vec![("main".to_string(), "main".to_string())],
                }
            })
        }) {
            functions.push(main);
        }
    }
    functions
}

/// The nested name of an Itanium C++ or legacy Rust symbol (`_ZN3foo3barE` is `foo::bar`,
/// dropping Rust's `17h<hash>E`), or the symbol itself. Templates and argument types are
/// not decoded.
pub fn demangle(symbol: &str) -> String {
    fn nested(s: &str) -> Option<String> {
        let mut rest = s.strip_prefix("_ZN")?;
        let mut parts: Vec<String> = Vec::new();
        while !rest.starts_with('E') {
            let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            if digits == 0 {
                return None;
            }
            let len: usize = rest[..digits].parse().ok()?;
            let part = rest.get(digits..digits + len)?;
            rest = &rest[digits + len..];
            parts.push(
                part.replace("$LT$", "<")
                    .replace("$GT$", ">")
                    .replace("..", "::"),
            );
        }
        if let Some(last) = parts.last() {
            if last.len() == 17
                && last.starts_with('h')
                && last[1..].bytes().all(|b| b.is_ascii_hexdigit())
            {
                parts.pop();
            }
        }
        (!parts.is_empty()).then(|| parts.join("::"))
    }
    let base = symbol.split('.').next().unwrap_or(symbol);
    nested(base).unwrap_or_else(|| symbol.to_string())
}

/// The shared libraries `exe` needs (`DT_NEEDED`, recursively), found as the dynamic linker
/// would: `DT_RPATH`/`DT_RUNPATH` (with `$ORIGIN`), `LD_LIBRARY_PATH`, `/etc/ld.so.conf`
/// directories, then the default ones.
pub fn needed_libraries(exe: &Path) -> Vec<PathBuf> {
    let mut dirs_default: Vec<PathBuf> = Vec::new();
    if let Ok(v) = std::env::var("LD_LIBRARY_PATH") {
        dirs_default.extend(v.split(':').filter(|d| !d.is_empty()).map(PathBuf::from));
    }
    dirs_default.extend(ld_so_conf_dirs(Path::new("/etc/ld.so.conf"), 0));
    for d in [
        "/lib/x86_64-linux-gnu",
        "/usr/lib/x86_64-linux-gnu",
        "/lib64",
        "/usr/lib64",
        "/lib",
        "/usr/lib",
    ] {
        dirs_default.push(PathBuf::from(d));
    }
    let mut out: Vec<PathBuf> = Vec::new();
    let mut queue = vec![exe.to_path_buf()];
    let mut seen_names = HashSet::new();
    while let Some(file) = queue.pop() {
        let Ok(data) = std::fs::read(&file) else {
            continue;
        };
        let Ok(elf) = Elf::parse(&data) else { continue };
        let (needed, paths) = dynamic_entries(&elf);
        let origin = file.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut dirs: Vec<PathBuf> = paths
            .iter()
            .flat_map(|p| p.split(':'))
            .filter(|d| !d.is_empty())
            .map(|d| PathBuf::from(d.replace("$ORIGIN", &origin.display().to_string())))
            .collect();
        dirs.extend(dirs_default.iter().cloned());
        for name in needed {
            if !seen_names.insert(name.clone()) {
                continue;
            }
            let found = if name.contains('/') {
                Some(PathBuf::from(&name))
            } else {
                dirs.iter().map(|d| d.join(&name)).find(|p| p.is_file())
            };
            if let Some(p) = found {
                let p = std::fs::canonicalize(&p).unwrap_or(p);
                if !out.contains(&p) {
                    out.push(p.clone());
                    queue.push(p);
                }
            }
        }
    }
    out
}

/// `DT_NEEDED` names and `DT_RPATH`/`DT_RUNPATH` values of a file.
fn dynamic_entries(elf: &Elf) -> (Vec<String>, Vec<String>) {
    let (Some(dynamic), Some(dynstr)) = (elf.section(".dynamic"), elf.section(".dynstr")) else {
        return (Vec::new(), Vec::new());
    };
    let (Ok(d), Ok(strings)) = (elf.section_data(dynamic), elf.section_data(dynstr)) else {
        return (Vec::new(), Vec::new());
    };
    let mut needed = Vec::new();
    let mut paths = Vec::new();
    // Each entry is a tag and a value, words of the file's class.
    let w = if elf.is_32 { 4 } else { 8 };
    let word = |b: &[u8]| match w {
        4 => u32::from_le_bytes(b.try_into().unwrap_or([0; 4])) as u64,
        _ => u64::from_le_bytes(b.try_into().unwrap_or([0; 8])),
    };
    for entry in d.chunks_exact(2 * w) {
        let tag = word(&entry[..w]);
        let val = word(&entry[w..]) as usize;
        let text = || {
            strings
                .get(val..)
                .and_then(|s| s.split(|&b| b == 0).next())
                .map(|s| String::from_utf8_lossy(s).into_owned())
        };
        match tag {
            0 => break,
            1 => needed.extend(text()),
            15 | 29 => paths.extend(text()),
            _ => {}
        }
    }
    (needed, paths)
}

fn ld_so_conf_dirs(path: &Path, depth: u32) -> Vec<PathBuf> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("").trim();
        if let Some(pattern) = line.strip_prefix("include") {
            let pattern = pattern.trim();
            // Only `dir/*.conf` patterns, as distributions write them.
            if let Some(dir) = pattern.strip_suffix("/*.conf") {
                if depth < 4 {
                    if let Ok(entries) = std::fs::read_dir(dir) {
                        let mut files: Vec<PathBuf> = entries
                            .flatten()
                            .map(|e| e.path())
                            .filter(|p| p.extension().is_some_and(|e| e == "conf"))
                            .collect();
                        files.sort();
                        for f in files {
                            out.extend(ld_so_conf_dirs(&f, depth + 1));
                        }
                    }
                }
            }
        } else if line.starts_with('/') {
            out.push(PathBuf::from(line));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes() {
        assert_eq!(
            scope("myapp123"),
            Some(Scope::Pid {
                provider: "myapp".into(),
                pid: 123
            })
        );
        assert_eq!(
            scope("myapp*"),
            Some(Scope::Binaries {
                pattern: "myapp*".into()
            })
        );
        assert_eq!(
            scope("p*d123"),
            Some(Scope::Pid {
                provider: "p*d".into(),
                pid: 123
            })
        );
        assert_eq!(scope("syscall"), None);
        assert_eq!(scope("*"), None);
        assert_eq!(scope("*123"), None);
        assert_eq!(scope("123"), None);
        assert_eq!(scope("myapp"), None);
    }

    #[test]
    fn demangles_nested_names() {
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE"),
            "core::fmt::write"
        );
        assert_eq!(demangle("_ZN3foo3barEv"), "foo::bar");
        assert_eq!(demangle("main"), "main");
        assert_eq!(parse_offset("4"), Some(4));
        assert_eq!(parse_offset("entry"), None);
    }

    #[test]
    fn pid_names_of_a_function() {
        // push %rbp; mov %rsp,%rbp; mov %edi,-0x4(%rbp); ...; pop %rbp; ret
        let code = || {
            FunctionCode::decode(&[
                0x55, 0x48, 0x89, 0xe5, 0x89, 0x7d, 0xfc, 0x89, 0x75, 0xf8, 0x8b, 0x55, 0xfc, 0x8b,
                0x45, 0xf8, 0x01, 0xd0, 0x5d, 0xc3,
            ])
        };
        let names = |pattern: &str, refused: &mut Vec<Refusal>| -> Vec<String> {
            pid_names(pattern, "add", code, refused)
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        let mut refused = Vec::new();
        assert_eq!(
            names("", &mut refused),
            ["entry", "return", "0", "1", "4", "7", "a", "d", "10", "12", "13"]
        );
        assert_eq!(names("1*", &mut refused), ["1", "10", "12", "13"]);
        assert_eq!(names("0x10", &mut refused), ["10"]);
        assert!(refused.is_empty());
        assert_eq!(names("b", &mut refused), Vec::<String>::new());
        assert_eq!(
            refused[0].to_string(),
            "offset 0xb of add is inside an instruction (nearest instruction boundaries: 0xa, 0xd)"
        );
        // Names that cannot be offsets do not decode the function.
        let entry = pid_names("entry", "add", || unreachable!(), &mut refused);
        assert_eq!(entry, [PidName::Entry]);
    }

    #[test]
    fn finds_libc_of_the_test_binary() {
        let exe = std::env::current_exe().unwrap();
        let libs = needed_libraries(&exe);
        assert!(
            libs.iter().any(|l| l.to_string_lossy().contains("libc.so")),
            "{libs:?}"
        );
        let me = std::process::id() as i32;
        assert!(maps_files(me).contains(&std::fs::canonicalize(&exe).unwrap()));
    }
}

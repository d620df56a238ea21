//! Probes of binaries that start running after tracing began (`myapp*:::tick` with no
//! `myapp` process yet, `pid*:prog:main:entry`) and of libraries loaded later (`dlopen`,
//! in a glob's processes or in a process named with `-Z`: `pid$target:libplugin.so::entry`).
//! When the program has such descriptions ([`Compilation::deferred`]), a thread of its own
//! watches execs and library loads ([`dtrace_probes::user::exec_watch`]): a process running
//! a binary not examined yet, or that just mapped more libraries, is stopped in the kernel
//! before their code runs; the thread looks for the descriptions' probes in the new files
//! (a binary and the libraries it needs, or what the process maps now), compiles the clauses
//! again for them ([`crate::compile::Inputs::extended`]: the same maps, the old epids
//! unchanged, new programs and epids after them), loads and attaches the new programs
//! (uprobe_multi links by file, so every later process of the binary is traced too), and
//! only then lets the process go. The session looks up epids it does not know here
//! ([`Watcher::enabled`]), once per record; the new probes' records can only come after the
//! thread published them.

use std::collections::{HashMap, HashSet};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use dtrace_backend::program::{Compiled, ProbeSite, ProgramDesc};
use dtrace_probes::user::exec_watch::{file_key, ExecWatch, Held};
use dtrace_probes::{Catalog, Description, Probe};

use crate::compile::{Compilation, Inputs};

/// The watching thread, seen from the session.
pub struct Watcher {
    /// The program's description each time the thread added probes.
    news: Receiver<ProgramDesc>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Give the scratch areas room for probes found later, before the maps are created: the
/// clauses compiled for a real probe (arguments decoded from its sites, several clauses in
/// one program) may need a little more than for the placeholder they were compiled for.
pub fn reserve_scratch(comp: &mut Compilation) {
    if !comp.deferred.is_empty() {
        let scratch = &mut comp.compiled.maps[comp.compiled.core.scratch.0];
        scratch.value_size *= 2;
    }
}

impl Watcher {
    /// Start watching for the deferred descriptions of `comp`, if it has any; the exec
    /// watcher is attached when this returns. `maps` are the session's maps, in
    /// [`Compiled::maps`] order.
    pub fn start(
        comp: &mut Compilation,
        catalog: Catalog,
        maps: &[i32],
        log: crate::bpflog::BpfLog,
    ) -> Result<Option<Watcher>, String> {
        if comp.deferred.is_empty() {
            return Ok(None);
        }
        // Globs watch every process; descriptions of named processes watch those alone.
        let pids: Vec<i32> = comp
            .deferred
            .iter()
            .map(|(_, d)| dtrace_probes::user::named_pid(d))
            .collect::<Option<Vec<_>>>()
            .unwrap_or_default();
        let mut watch = ExecWatch::start(pids.is_empty())?;
        watch.watch_dlopen(if pids.is_empty() { None } else { Some(&pids) })?;
        for pid in catalog.target_pids() {
            watch.examine_next_change(pid);
        }
        // Binaries examined already (those running now, and the -c commands') cost nothing.
        for path in catalog.examined_binaries() {
            watch.examined(&path);
        }
        let maps = maps
            .iter()
            .map(|&fd| {
                // SAFETY: `fd` is an open map descriptor of the session; the duplicate is
                // owned by the thread.
                let dup = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
                if dup < 0 {
                    return Err(format!(
                        "dtrace: failed to watch for new processes: {}\n",
                        std::io::Error::last_os_error()
                    ));
                }
                // SAFETY: `dup` was just returned by fcntl and is owned by nobody else.
                Ok(unsafe { <OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(dup) })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let (tx, news) = channel();
        let stop = Arc::new(AtomicBool::new(false));
        let state = Thread {
            watch,
            catalog,
            deferred: std::mem::take(&mut comp.deferred),
            inputs: comp.inputs.take().ok_or("dtrace: compiled twice")?,
            base: comp.compiled.clone(),
            maps,
            log,
            extra: Vec::new(),
            probes: HashMap::new(),
            enabled_ids: comp.probes.keys().copied().collect(),
            seen: HashSet::new(),
            published: comp.compiled.enabled.len(),
            links: Vec::new(),
            programs: Vec::new(),
            rodata: Vec::new(),
            tx,
        };
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("dtrace-exec-watch".into())
            .spawn(move || state.run(&flag))
            .map_err(|e| format!("dtrace: failed to watch for new processes: {e}\n"))?;
        Ok(Some(Watcher {
            news,
            stop,
            thread: Some(thread),
        }))
    }

    /// The program's latest description, if the thread added probes since the last call.
    pub fn news(&mut self) -> Option<ProgramDesc> {
        let mut latest = None;
        while let Ok(desc) = self.news.try_recv() {
            latest = Some(desc);
        }
        latest
    }

    /// Ask the thread to stop, without waiting: it detaches while the session detaches its
    /// own probes, so their waits for the kernel overlap.
    pub fn request_stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Stop watching: detach what the thread attached, continue any process it holds.
    pub fn stop(&mut self) {
        self.request_stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The watching thread's state.
struct Thread {
    watch: ExecWatch,
    catalog: Catalog,
    deferred: Vec<(usize, Description)>,
    inputs: Inputs,
    /// The program as first compiled: what a recompilation must reproduce.
    base: Compiled,
    maps: Vec<OwnedFd>,
    /// What is asked and shown of the verifier's log of each program loaded.
    log: crate::bpflog::BpfLog,
    /// Probes found so far, by clause, as compiled after the program's own clauses.
    extra: Vec<(usize, Vec<ProbeSite>)>,
    probes: HashMap<u32, Probe>,
    /// Probes with programs already (the first compilation's, then those added).
    enabled_ids: HashSet<u32>,
    /// Binaries examined (examined-map keys).
    seen: HashSet<[u8; 16]>,
    /// Enabled probes the session knows of (the first compilation's, then those sent).
    published: usize,
    links: Vec<dtrace_runtime::Link>,
    programs: Vec<dtrace_runtime::Program>,
    /// The read-only data of each compilation whose programs were loaded.
    rodata: Vec<dtrace_runtime::Map>,
    tx: Sender<ProgramDesc>,
}

impl Thread {
    fn run(mut self, stop: &AtomicBool) {
        while !stop.load(Ordering::Relaxed) {
            for held in self.watch.wait(Duration::from_millis(10)) {
                match held {
                    Held::Exec { pid, key } => {
                        self.examine(pid, key);
                        self.watch.examined_key(&key);
                    }
                    Held::Dlopen { pid } => self.examine_mapped(pid),
                }
                self.watch.resume(&held);
            }
        }
        // Any process stopped meanwhile, up to the detach: examined or not, it goes on.
        // A tracepoint's programs are unregistered without waiting for one running on
        // another CPU, hence a short grace for its event.
        // Each uprobe closed waits for an RCU grace period: the links close beside the
        // watcher's programs, not after them.
        let links = std::mem::take(&mut self.links);
        std::thread::scope(|s| {
            s.spawn(move || drop(links));
            self.watch.detach();
        });
        for held in self.watch.wait(Duration::from_millis(10)) {
            self.watch.resume(&held);
        }
    }

    /// Look for the deferred descriptions' probes in the binary process `pid` exec'd (with
    /// examined-map key `key`) and the libraries it needs; compile, load and attach any
    /// found.
    fn examine(&mut self, pid: i32, key: [u8; 16]) {
        if !self.seen.insert(key) {
            return;
        }
        let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) else {
            return;
        };
        let mut files: Vec<PathBuf> = vec![exe.clone()];
        files.extend(dtrace_probes::user::needed_libraries(&exe));
        let mut found: Vec<(usize, Vec<ProbeSite>)> = Vec::new();
        for file in files {
            if file != exe {
                match file_key(&file) {
                    Some(k) if self.seen.insert(k) => self.watch.examined_key(&k),
                    _ => continue,
                }
            }
            self.find(&file, &mut found);
        }
        if found.is_empty() {
            return;
        }
        if let Err(msg) = self.enable(found) {
            eprint!("{msg}");
        }
    }

    /// Process `pid` mapped more libraries: look for the probes of the descriptions naming
    /// it, and of the globs in the files no process mapped before.
    fn examine_mapped(&mut self, pid: i32) {
        let mut found: Vec<(usize, Vec<ProbeSite>)> = Vec::new();
        for file in dtrace_probes::user::mapped_files(pid) {
            if let Some(k) = file_key(&file) {
                if self.seen.insert(k) {
                    self.watch.examined_key(&k);
                    self.find(&file, &mut found);
                }
            }
        }
        for (ci, desc) in self.deferred.clone() {
            if dtrace_probes::user::named_pid(&desc) == Some(pid) {
                let probes = self.catalog.matching(&desc);
                self.add(ci, probes, &mut found);
            }
        }
        if found.is_empty() {
            return;
        }
        if let Err(msg) = self.enable(found) {
            eprint!("{msg}");
        }
    }

    /// The glob descriptions' probes in `file`, by clause, not enabled yet.
    fn find(&mut self, file: &Path, found: &mut Vec<(usize, Vec<ProbeSite>)>) {
        for (ci, desc) in self.deferred.clone() {
            if dtrace_probes::user::named_pid(&desc).is_none() {
                let probes = self.catalog.matches_in(&desc, file);
                self.add(ci, probes, found);
            }
        }
    }

    /// Add to `found`, under clause `ci`, those of `probes` that have no program yet.
    fn add(&mut self, ci: usize, probes: Vec<Probe>, found: &mut Vec<(usize, Vec<ProbeSite>)>) {
        for p in probes {
            let id = p.site.id;
            if self.enabled_ids.contains(&id) {
                continue;
            }
            let list = match found.iter_mut().find(|(c, _)| *c == ci) {
                Some((_, list)) => list,
                None => {
                    found.push((ci, Vec::new()));
                    &mut found.last_mut().expect("pushed").1
                }
            };
            if list.iter().any(|s| s.id == id) {
                continue;
            }
            list.push(p.site.clone());
            self.probes.insert(id, p);
        }
    }

    /// Compile the clauses for the probes `found`, load and attach their programs, and
    /// publish their epids to the session.
    fn enable(&mut self, found: Vec<(usize, Vec<ProbeSite>)>) -> Result<(), String> {
        let new: HashSet<u32> = found
            .iter()
            .flat_map(|(_, l)| l.iter().map(|s| s.id))
            .collect();
        self.extra.extend(found);
        let compiled = self.inputs.extended(&self.extra)?;
        if !same_layout(&self.base, &compiled, self.published) {
            return Err("dtrace: cannot enable probes of a new process: compiling them changed the program's variables or scratch space; name the binary by path instead\n".to_string());
        }
        // The new programs' strings (probe names...) are in a read-only data map of their own.
        let rodata = crate::load::create_map(&compiled.maps[compiled.core.rodata.0])?;
        let mut fds: Vec<i32> = self.maps.iter().map(AsRawFd::as_raw_fd).collect();
        fds[compiled.core.rodata.0] = rodata.fd();
        self.rodata.push(rodata);
        for prog in compiled
            .programs
            .iter()
            .filter(|p| new.contains(&p.probe.id))
        {
            let program = crate::load::load_program(prog, &fds, &self.probes, &self.log)?;
            if let Some(probe) = self.probes.get(&prog.probe.id) {
                // User probes: no timer to place on a CPU.
                let links = probe.attach(&program, None).map_err(|e| {
                    format!("dtrace: failed to enable {}: {e}\n", prog.probe.full_name())
                })?;
                self.links.extend(links);
            }
            self.programs.push(program);
        }
        let _ = self.tx.send(compiled.desc.clone());
        self.published = compiled.enabled.len();
        Ok(())
    }
}

/// Whether `new` keeps `base`'s maps (the read-only data aside: the new programs get their
/// own) and its first `known` enabled probes, so programs compiled into it work with the
/// session's maps and records. The deferred clauses were compiled at first for a probe
/// with no site yet, so their variables and aggregations exist; a new probe may need no
/// more scratch space than the session's.
fn same_layout(base: &Compiled, new: &Compiled, known: usize) -> bool {
    base.maps.len() == new.maps.len()
        && base
            .maps
            .iter()
            .zip(&new.maps)
            .enumerate()
            .all(|(i, (a, b))| {
                let scratch = i == base.core.scratch.0;
                i == base.core.rodata.0
                    || (a.name == b.name
                        && a.key_size == b.key_size
                        && (a.value_size == b.value_size
                            || (scratch && b.value_size <= a.value_size))
                        && a.max_entries == b.max_entries
                        && a.initial == b.initial
                        && a.entries_per_cpu == b.entries_per_cpu)
            })
        && base.aggregations == new.aggregations
        && new.enabled.len() >= known
        && base.enabled[..base.enabled.len().min(known)]
            == new.enabled[..base.enabled.len().min(known)]
}

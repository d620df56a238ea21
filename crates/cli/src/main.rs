//! The `dtrace` command: D to eBPF, run on the live kernel, printed as DTrace prints.
//!
//! The pipeline: [`args`] -> [`compile`] (front end, probe matching, back end) -> [`load`]
//! (maps and programs into the kernel) -> [`session`] (BEGIN, attach, consume, END).

mod agg_maps;
mod agg_snapshot;
mod args;
mod binary_defs;
mod bpflog;
mod buffers;
mod compile;
mod debug;
mod diagnostics;
mod disasm;
mod early_ring;
mod effects;
mod evaltime;
mod format_check;
mod kernel_types;
mod large_stack;
mod libdeps;
mod load;
mod options;
mod output_file;
mod pinned;
mod postmortem;
mod preprocess;
mod privileges;
mod prometheus;
mod provider_build;
mod refused_options;
mod session;
mod signals;
mod syscall_fentry;
mod target;
mod user_reads;
mod user_scopes;
mod watch;

use std::io::Write;
use std::ops::ControlFlow;

use dtrace_frontend::ast::Item;
use dtrace_probes::Catalog;
use dtrace_typing::macros::MacroArgs;

use dtrace_consumer::output::{Json, Text};
use dtrace_consumer::{Consumer, Output};

use args::Args;
use compile::Failure;
use early_ring::EarlyRing;
use options::{Options, OutputFormat};
use output_file::OutputFile;
use target::Target;

const USAGE: &str = "Usage: dtrace [-CeFGhHlqSvVwZ] [-b bufsz] [-c cmd] [-D name[=def]]
\t[-I path] [-L path] [-o output] [-p pid] [-s script] [-U name]
\t[-x opt[=val]] [-X a|c|s|t]

\t[-P provider [[ predicate ] action ]]
\t[-m [ provider: ] module [[ predicate ] action ]]
\t[-f [[ provider: ] module: ] func [[ predicate ] action ]]
\t[-n [[[ provider: ] module: ] func: ] name [[ predicate ] action ]]
\t[-i probe-id [[ predicate ] action ]] [ args ... ]

\tpredicate -> '/' D-expression '/'
\t   action -> '{' D-statements '}'

\t-b  set trace buffer size
\t-c  run specified command and exit upon its completion
\t-C  run cpp(1) preprocessor on script files
\t-D  define symbol when invoking preprocessor
\t-e  exit after compiling request but prior to enabling probes
\t-f  enable or list probes matching the specified function name
\t-h  generate a header file with definitions for static probes
\t-G  generate an ELF file containing embedded dtrace program
\t-H  print included files when invoking preprocessor
\t-i  enable or list probes matching the specified probe id
\t-I  add include directory to preprocessor search path
\t-l  list probes matching specified criteria
\t-L  add library directory to library search path
\t-m  enable or list probes matching the specified module name
\t-n  enable or list probes matching the specified probe name
\t-o  set output file
\t-p  grab specified process-ID and cache its symbol tables
\t-P  enable or list probes matching the specified provider name
\t-q  set quiet mode (only output explicitly traced data)
\t-s  enable or list probes according to the specified D script
\t-S  print D compiler intermediate code
\t-U  undefine symbol when invoking preprocessor
\t-v  set verbose mode (report stability attributes, arguments)
\t-V  report DTrace API version
\t-w  permit destructive actions
\t-x  enable or modify compiler and tracing options
\t-Z  permit probe descriptions that match zero probes
";

pub use dtrace_runtime::errno_text;

fn main() {
    let argv: Result<Vec<String>, _> = std::env::args_os()
        .skip(1)
        .map(std::ffi::OsString::into_string)
        .collect();
    let status = match argv {
        Ok(argv) => run(&argv),
        // A program text or file name in another encoding; refused in words, not a panic.
        Err(arg) => {
            eprintln!(
                "dtrace: argument is not UTF-8 text: {}",
                arg.to_string_lossy()
            );
            2
        }
    };
    debug::exit(status);
}

fn run(argv: &[String]) -> i32 {
    let mut args = match args::parse(argv) {
        Ok(a) => a,
        Err(e) => {
            eprint!("dtrace: {e}\n{USAGE}");
            return 2;
        }
    };
    args.fold_options();
    if let Some(flag) = args.anonymous {
        eprintln!("dtrace: -{flag}: {}", args::ANONYMOUS);
        return 1;
    }
    if args.version {
        println!("dtrace: Sun D 2.0");
        return 0;
    }
    let mut options = Options {
        destructive: args.destructive,
        ..Options::default()
    };
    options.output.quiet = args.quiet;
    for (name, value) in &args.options {
        if let Err(why) = options.set(name, value.as_deref()) {
            eprintln!("dtrace: failed to set -x {name}: {why}");
            return 1;
        }
        debug::say(|| match value {
            Some(v) => format!("set option {name} to {v}"),
            None => format!("set option {name}"),
        });
    }
    if args.header || args.object {
        return provider_build::run(&args, options.errtags);
    }
    let pinned_ring = args
        .options
        .iter()
        .any(|(n, _)| n == "ringread" || n == "ringclear");
    // `-e` alone loads the libraries, and only that (as DTrace).
    if args.sources.is_empty() && !args.list && !args.compile_only && !pinned_ring {
        eprint!("{USAGE}");
        return 2;
    }
    if !args.list {
        if let Err(needed) = privileges::check() {
            eprint!("{needed}");
            return 1;
        }
    }
    if pinned_ring {
        return pinned_ring_request(&args, options);
    }
    // Every -c and -p process is followed; $target is the first one's pid.
    let mut targets = Vec::new();
    for cmd in &args.commands {
        match Target::spawn(cmd, options.evaltime) {
            Ok(t) => targets.push(t),
            Err(msg) => {
                eprint!("{msg}");
                return 1;
            }
        }
    }
    for pid in &args.pids {
        match Target::attach(pid) {
            Ok(t) => targets.push(t),
            Err(msg) => {
                eprint!("{msg}");
                return 1;
            }
        }
    }
    let status = trace(&args, options, &mut targets);
    if status != 0 {
        for t in &mut targets {
            t.abandon();
        }
    }
    status
}

/// `-x ringread` or `-x ringclear`: a ring pinned by an earlier `dtrace`, on its own.
fn pinned_ring_request(args: &Args, options: Options) -> i32 {
    if !args.sources.is_empty() || !args.commands.is_empty() || !args.pids.is_empty() {
        eprintln!("dtrace: -x ringread and -x ringclear take no program, -c or -p");
        return 2;
    }
    if let Some(name) = &options.ringclear {
        return pinned::clear(name);
    }
    let Some(name) = &options.ringread else {
        return 0;
    };
    let out = OutputFile::new(args.output.as_deref());
    if let Err(msg) = out.open() {
        eprint!("{msg}");
        return 1;
    }
    let output = || make_output(&options, &out);
    let status = pinned::read(name, options.output, output);
    match out.failure() {
        Some(failure) => {
            eprint!("{failure}");
            1
        }
        None => status,
    }
}

/// The consumer's output, as `-x oformat` says, writing to `out`.
fn make_output(options: &Options, out: &OutputFile) -> Box<dyn Output> {
    match options.oformat {
        OutputFormat::Text => {
            Box::new(Text::new(Box::new(out.clone())).with_stacks(options.stackformat))
        }
        OutputFormat::Json => Box::new(Json::new(Box::new(out.clone()))),
    }
}

/// The macro variables: `$0..$N` and named ones.
fn macros(args: &Args, options: &Options, target: Option<&Target>) -> MacroArgs {
    let script = args.sources.iter().find_map(|s| match s {
        args::ProgramSource::Script(p) => Some(p.clone()),
        _ => None,
    });
    let mut list = vec![script.unwrap_or_else(|| "dtrace".to_string())];
    list.extend(args.operands.iter().cloned());
    let mut named = std::collections::HashMap::new();
    // SAFETY: these getters cannot fail and touch no memory.
    let (pid, ppid, uid, gid, pgid, sid) = unsafe {
        (
            libc::getpid(),
            libc::getppid(),
            libc::getuid(),
            libc::getgid(),
            libc::getpgid(0),
            libc::getsid(0),
        )
    };
    for (k, v) in [
        ("pid", pid as i64),
        ("ppid", ppid as i64),
        ("uid", uid as i64),
        ("gid", gid as i64),
        ("euid", uid as i64),
        ("egid", gid as i64),
        ("pgid", pgid as i64),
        ("sid", sid as i64),
        ("projid", 0),
        ("taskid", 0),
    ] {
        named.insert(k.to_string(), v);
    }
    named.insert("target".to_string(), target.map_or(0, |t| t.pid() as i64));
    MacroArgs {
        args: list,
        named,
        defaultargs: options.defaultargs,
    }
}

fn report(failure: Failure, errtags: bool, verbose: bool) -> i32 {
    match failure {
        Failure::Compile(err, sources) => {
            eprint!("{}", diagnostics::compile_error(&err, &sources, errtags));
            if verbose {
                if let Some(loc) = diagnostics::location(&err, &sources) {
                    eprint!("{loc}");
                }
            }
        }
        Failure::Message(msg) => eprint!("{msg}"),
    }
    1
}

/// The compiler's half of a run, on the large stack: read and parse the sources, apply
/// pragmas (then send `ring` the size of the ring buffer to make meanwhile, unless
/// listing), then list the probes (`-l`) or match and compile. `Break` is the exit status
/// of a run that ends here (a listing, or an error already reported).
fn front_end(
    args: &Args,
    options: &mut Options,
    targets: &[Target],
    ring: std::sync::mpsc::Sender<u32>,
) -> ControlFlow<i32, (compile::Compilation, Catalog)> {
    let fail = |f, options: &Options| ControlFlow::Break(report(f, options.errtags, args.verbose));
    let sources = match compile::read_sources(args) {
        Ok(s) => s,
        Err(f) => return fail(f, options),
    };
    user_scopes::register(targets);
    let items = match compile::parse_all(&sources, options.pspec) {
        Ok(i) => i,
        Err(f) => return fail(f, options),
    };
    if let Err(f) = compile::apply_pragmas(&items, options, &sources)
        .and_then(|()| libdeps::check_program(&items, &sources))
        .and_then(|()| compile::check_empty(&items, &sources, options))
    {
        return fail(f, options);
    }
    if !args.list {
        if let Some(size) = early_ring::wanted(&items, options) {
            // The receiver lives until the compiler returns: the send cannot fail.
            let _ = ring.send(size);
        }
    }
    drop(ring);
    let macros = macros(args, options, targets.first());
    let mut catalog = Catalog::new();
    catalog.set_targets(
        targets
            .iter()
            .map(|t| dtrace_probes::user::UserTarget {
                pid: t.pid(),
                exec: t.exec_path(),
            })
            .collect(),
    );
    catalog.set_follow_fork(options.followfork);
    // As DTrace reads them while parsing: probe ids and descriptions before the macro
    // arguments are checked.
    let specs = compile::specs(args);
    if let Err(f) = compile::check_descriptions(&items, &sources, &specs, &macros, &mut catalog)
        .and_then(|()| compile::check_macro_args(&items, &sources, &macros, options))
    {
        return fail(f, options);
    }
    if args.list {
        signals::default_sigpipe();
        let pids: Vec<i32> = targets.iter().map(Target::pid).collect();
        let zero_ok = args.zero_matches_ok;
        let listed = list(
            &items,
            &specs,
            &mut catalog,
            &macros,
            &pids,
            args.verbose,
            zero_ok,
        );
        return match listed {
            Ok(status) => ControlFlow::Break(status),
            Err(e) => fail(Failure::Compile(e, sources), options),
        };
    }
    match compile::compile(args, sources, items, options, &macros, &mut catalog) {
        Ok(c) => ControlFlow::Continue((c, catalog)),
        Err(f) => fail(f, options),
    }
}

fn trace(args: &Args, mut options: Options, targets: &mut Vec<Target>) -> i32 {
    // The ring buffer the parsed program wants is made while the compiler goes on.
    let (wanted, ring) = std::sync::mpsc::channel();
    let early = || ring.recv().ok().and_then(EarlyRing::make);
    let (front, early) =
        large_stack::run_beside(|| front_end(args, &mut options, targets, wanted), early);
    let (mut comp, catalog) = match front {
        ControlFlow::Continue(found) => found,
        ControlFlow::Break(status) => return status,
    };
    buffers::fit_ring(&mut comp, &options);
    let out = OutputFile::new(args.output.as_deref());
    let output = make_output(&options, &out);
    let resized = buffers::lowered(&options);
    let mut consumer = Consumer::new(comp.compiled.desc.clone(), options.output, output);
    consumer.set_specsize(options.specsize);
    consumer.set_buffers(options.bufpolicy, options.bufsize);
    let rates = effects::Rates::new(&options);
    consumer.set_effects(Box::new(effects::SessionEffects {
        output: out.clone(),
        rates: rates.clone(),
    }));
    // As DTrace: the clauses are listed once compiled, before the matches are reported;
    // the programs once made, before they are loaded.
    let listings = args.disassemble || options.disassemble;
    if listings {
        eprint!("{}", disasm::clauses(&comp, options.disasm));
    }
    // As DTrace, -e reports no matches: nothing is enabled.
    if !args.compile_only {
        for (kind, name, count) in &comp.matched {
            consumer.matched(kind, name, *count);
        }
    }
    // As DTrace: nothing to trace is an error, unless -Z allows it (then tracing waits for
    // a signal or the end of the -c/-p processes, as DTrace's does).
    let total: u32 = comp.matched.iter().map(|(_, _, count)| count).sum();
    let zero_ok = args.zero_matches_ok || options.zdefs;
    if total == 0 && comp.deferred.is_empty() && !zero_ok && !args.compile_only {
        consumer.flush();
        eprintln!("dtrace: no probes matched");
        return 1;
    }
    match resized {
        Ok(notices) => notices.iter().for_each(|n| consumer.warning(n)),
        Err(refused) => {
            eprint!("{refused}");
            return 1;
        }
    }
    if listings {
        eprint!("{}", disasm::programs(&comp, options.disasm));
    }
    if comp.compiled.destructive && !options.destructive {
        consumer.flush();
        eprintln!("dtrace: could not enable tracing: Destructive actions not allowed");
        return 1;
    }
    watch::reserve_scratch(&mut comp);
    let bpf_log = bpflog::BpfLog::new(&options, args.verbose);
    let loaded = match load::load(&comp.compiled, &comp.probes, &bpf_log, early) {
        Ok(l) => l,
        Err(msg) => {
            eprint!("{msg}");
            return 1;
        }
    };
    if let Err(msg) = out.open() {
        eprint!("{msg}");
        return 1;
    }
    if args.compile_only {
        consumer.flush();
        return match out.failure() {
            Some(failure) => {
                eprint!("{failure}");
                1
            }
            None => 0,
        };
    }
    // As DTrace, -e stops before the buffers are made, so their sizes are not checked.
    if let Err(why) = buffers::enabling_fits(&options, &comp.compiled) {
        consumer.flush();
        eprintln!("dtrace: could not enable tracing: {why}");
        return 1;
    }
    if let Some(addr) = options.prometheus {
        let naming = options.naming.clone();
        match prometheus::serve(addr, &comp.compiled, &loaded.maps, naming) {
            Ok(at) => eprintln!("dtrace: serving aggregations at http://{at}/metrics"),
            Err(msg) => {
                eprint!("{msg}");
                return 1;
            }
        }
    }
    signals::install();
    let fds: Vec<i32> = loaded.maps.iter().map(dtrace_runtime::Map::fd).collect();
    let watcher = match watch::Watcher::start(&mut comp, catalog, &fds, bpf_log) {
        Ok(w) => w,
        Err(msg) => {
            eprint!("{msg}");
            return 1;
        }
    };
    let options_destructive = options.destructive;
    let mut session = match session::Session::new(&comp, loaded, options, consumer, out, rates) {
        Ok(s) => s,
        Err(msg) => {
            eprint!("{msg}");
            return 1;
        }
    };
    session.set_watcher(watcher);
    if options_destructive {
        session.notice("allowing destructive actions");
    }
    match session.run(std::mem::take(targets)) {
        Ok(outcome) => outcome.status,
        Err(msg) => {
            eprint!("{msg}");
            1
        }
    }
}

/// `-l`: list the probes the descriptions match, or every probe, each once.
/// With `-p`/`-c` and no description, the USDT probes of those processes. With `-v`, each
/// probe's stability attributes and argument types follow its line, as in DTrace. A
/// description that matches nothing is reported and the rest listed; as in DTrace, that
/// does not change the exit status.
fn list(
    items: &[Vec<Item>],
    specs: &[dtrace_probes::ProbeSpec],
    catalog: &mut Catalog,
    macros: &MacroArgs,
    pids: &[i32],
    verbose: bool,
    zero_ok: bool,
) -> Result<i32, dtrace_frontend::CompileError> {
    let mut out = OutputFile::new(None);
    let line = |site: &dtrace_backend::program::ProbeSite| {
        if verbose {
            dtrace_probes::list_line_verbose(site)
        } else {
            dtrace_probes::list_line(site)
        }
    };
    let mut descs = Vec::new();
    for (si, source_items) in items.iter().enumerate() {
        let spec = specs.get(si).copied().unwrap_or_default();
        for item in source_items {
            let Item::Clause(c) = item else { continue };
            for d in &c.probes {
                descs.push(compile::description(d, macros, spec, catalog)?);
            }
        }
    }
    let _ = out.write_all(dtrace_probes::list_header().as_bytes());
    let mut seen = std::collections::HashSet::new();
    let write = |out: &mut OutputFile,
                 seen: &mut std::collections::HashSet<u32>,
                 catalog: &Catalog,
                 probe: &dtrace_probes::Probe| {
        for (id, text) in catalog.listing(probe, verbose) {
            if seen.insert(id) {
                let _ = out.write_all(text.as_bytes());
            }
        }
    };
    if descs.is_empty() && !pids.is_empty() {
        for &pid in pids {
            for p in catalog.user_probes_of(pid) {
                write(&mut out, &mut seen, catalog, &p);
            }
        }
    } else if descs.is_empty() {
        catalog.for_each(verbose, |p| {
            let _ = out.write_all(line(&p.site).as_bytes());
        });
    }
    for d in descs {
        let found = catalog.matching(&d);
        if found.is_empty() && !zero_ok {
            let _ = out.flush();
            eprintln!(
                "dtrace: failed to match {}:{}:{}:{}: No probe matches description",
                d.provider, d.module, d.function, d.name
            );
        }
        for p in found {
            write(&mut out, &mut seen, catalog, &p);
        }
    }
    let _ = out.flush();
    if let Some(failure) = out.failure() {
        eprint!("{failure}");
        return Ok(1);
    }
    match catalog.unavailable() {
        Some(why) => {
            eprintln!("dtrace: could not list every provider: {why}");
            Ok(1)
        }
        None => Ok(0),
    }
}

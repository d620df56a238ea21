//! From the command line's program sources to a compiled program: read and parse each
//! source, apply pragmas, match every clause's probe descriptions, and generate code.

use std::collections::HashMap;

use dtrace_backend::program::{Compiled, ProbeSite};
use dtrace_backend::{CodegenOptions, MacroArgs};
use dtrace_frontend::ast::{self, Item};
use dtrace_frontend::{CompileError, Origin, Source};
use dtrace_probes::{Catalog, Description, Probe};

use crate::args::{Args, ProgramSource};
use crate::format_check::PrintfCheck;
use crate::kernel_types::BtfLayout;
use crate::options::Options;

/// A compiled program with what the rest of the run needs to know about it.
pub struct Compilation {
    pub compiled: Compiled,
    /// `(kind, name, probes matched)` per command-line source, for the "matched" messages.
    pub matched: Vec<(&'static str, String, u32)>,
    /// Every probe enabled, by id.
    pub probes: HashMap<u32, Probe>,
}

/// Why compilation failed: a located D error, or a message already worded.
pub enum Failure {
    Compile(CompileError, Vec<Source>),
    Message(String),
}

/// Read the sources named on the command line.
pub fn read_sources(args: &Args) -> Result<Vec<Source>, Failure> {
    let mut sources = Vec::new();
    for src in &args.sources {
        let source = match src {
            ProgramSource::Description(text) => Source::new(Origin::Description, text.clone()),
            ProgramSource::Script(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    Failure::Message(format!(
                        "dtrace: failed to open {path}: {}\n",
                        crate::errno_text(&e)
                    ))
                })?;
                let text = if args.cpp {
                    preprocess(args, path, &text)?
                } else {
                    text
                };
                Source::new(Origin::Script(path.clone()), text)
            }
            ProgramSource::Provider(p) => Source::new(Origin::Description, format!("{p}:::")),
            ProgramSource::Module(m) => Source::new(Origin::Description, format!("{m}::")),
            ProgramSource::Function(f) => Source::new(Origin::Description, format!("{f}:")),
            ProgramSource::Id(i) => Source::new(Origin::Description, i.clone()),
        };
        sources.push(source);
    }
    Ok(sources)
}

/// `-C`: run the C preprocessor (`cpp`, from the system) over a script, with `-D -U -I`.
fn preprocess(args: &Args, path: &str, text: &str) -> Result<String, Failure> {
    use std::io::Write as _;
    let mut cmd = std::process::Command::new("cpp");
    cmd.args([
        "-E",
        "-P",
        "-undef",
        "-D__linux",
        "-D__linux__",
        "-D__unix",
        "-D__unix__",
        "-D__x86_64",
        // -undef drops the compiler's own target macros; system headers need these to
        // pick the 64-bit definitions.
        "-D__x86_64__",
        "-D__LP64__",
        "-D_LP64",
        "-D__CHAR_BIT__=8",
        "-D__SIZEOF_LONG__=8",
        "-D__SIZEOF_POINTER__=8",
        "-D__SUNW_D=1",
        "-D__SUNW_D_VERSION=0x02000000",
    ]);
    for d in &args.defines {
        cmd.arg(format!("-D{d}"));
    }
    for u in &args.undefines {
        cmd.arg(format!("-U{u}"));
    }
    for i in &args.includes {
        cmd.arg(format!("-I{i}"));
    }
    if let Some(dir) = std::path::Path::new(path).parent() {
        if !dir.as_os_str().is_empty() {
            cmd.arg(format!("-I{}", dir.display()));
        }
    }
    cmd.arg("-");
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().map_err(|e| {
        Failure::Message(format!(
            "dtrace: failed to run the C preprocessor (cpp) for -C: {}; install cpp (Debian package cpp) or drop -C\n",
            crate::errno_text(&e)
        ))
    })?;
    // A script starting with #! keeps its first line out of cpp's way.
    let body = match text.strip_prefix("#!") {
        Some(rest) => format!("\n{}", rest.split_once('\n').map_or("", |(_, b)| b)),
        None => text.to_string(),
    };
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(body.as_bytes());
    }
    let out = child.wait_with_output().map_err(|e| {
        Failure::Message(format!("dtrace: cpp failed: {}\n", crate::errno_text(&e)))
    })?;
    if !out.status.success() {
        return Err(Failure::Message(format!(
            "dtrace: failed to preprocess {path}:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Whether an identifier names a type outside the program: D's built-in typedefs, then the
/// kernel's typedefs from BTF (`u64`, `size_t`, `atomic_t`), read only if a script asks.
fn is_type_name(name: &str) -> bool {
    dtrace_backend::types::builtin_typedef(name).is_some()
        || dtrace_backend::types::kernel::is_typedef(name)
}

/// Parse every source; returns the items of each.
pub fn parse_all(sources: &[Source]) -> Result<Vec<Vec<Item>>, Failure> {
    sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            dtrace_frontend::parse(s, i as u16, &is_type_name)
                .map(|p| p.items)
                .map_err(|e| Failure::Compile(e, sources.to_vec()))
        })
        .collect()
}

/// Apply `#pragma D option` lines of the program.
pub fn apply_pragmas(
    items: &[Vec<Item>],
    options: &mut Options,
    sources: &[Source],
) -> Result<(), Failure> {
    for item in items.iter().flatten() {
        let Item::Pragma(p) = item else { continue };
        if p.words.len() >= 3 && p.words[0] == "D" && p.words[1] == "option" {
            let (name, value) = match p.words[2].split_once('=') {
                Some((n, v)) => (n, Some(v)),
                None => (p.words[2].as_str(), None),
            };
            options.set(name, value).map_err(|why| {
                Failure::Compile(
                    CompileError::new(
                        "D_PRAGMA_OPTSET",
                        format!(
                            "failed to set option '{name}' to '{}': {why}",
                            value.unwrap_or("")
                        ),
                        p.span,
                    ),
                    sources.to_vec(),
                )
            })?;
        }
    }
    Ok(())
}

/// Replace macro variables in a probe description (`pid$target`, `$1`).
fn expand_description(text: &str, macros: &MacroArgs) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let len = after
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        let name = &after[..len];
        match name.parse::<usize>() {
            Ok(n) => out.push_str(macros.args.get(n).map_or("", String::as_str)),
            Err(_) => match macros.named.get(name) {
                Some(v) => out.push_str(&v.to_string()),
                None => {
                    out.push('$');
                    out.push_str(name);
                }
            },
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    out
}

/// The text DTrace shows for a `-n` source in "matched" messages: the description part.
fn description_label(text: &str) -> String {
    // A `/` right after a `:` starts a module path (`myapp*:/usr/bin/myapp::tick`).
    let b = text.as_bytes();
    let end = (0..b.len())
        .find(|&i| b[i] == b'{' || (b[i] == b'/' && (i == 0 || b[i - 1] != b':')))
        .unwrap_or(text.len());
    text[..end].to_string()
}

/// Match descriptions, then compile; `options` must already hold every option.
pub fn compile(
    args: &Args,
    sources: Vec<Source>,
    items: Vec<Vec<Item>>,
    options: &Options,
    macros: &MacroArgs,
    catalog: &mut Catalog,
) -> Result<Compilation, Failure> {
    let fail = |e: CompileError, sources: &[Source]| Failure::Compile(e, sources.to_vec());
    let mut matched = Vec::new();
    let mut clause_probes: Vec<Vec<ProbeSite>> = Vec::new();
    let mut probes = HashMap::new();
    let mut program = ast::Program { items: Vec::new() };
    for (si, src_items) in items.into_iter().enumerate() {
        let mut count = 0u32;
        for item in &src_items {
            let Item::Clause(clause) = item else { continue };
            let mut sites = Vec::new();
            for desc in &clause.probes {
                let text = expand_description(&desc.text, macros);
                let d = Description::parse(&text).map_err(|e| {
                    fail(CompileError::new("D_PDESC_INVAL", e.0, desc.span), &sources)
                })?;
                let found = catalog.matching(&d);
                if found.is_empty() && !args.zero_matches_ok {
                    return Err(fail(
                        CompileError::new(
                            "D_PDESC_ZERO",
                            format!(
                                "probe description {} does not match any probes",
                                full_description(&d)
                            ),
                            desc.span,
                        ),
                        &sources,
                    ));
                }
                for p in found {
                    if !sites.iter().any(|s: &ProbeSite| s.id == p.site.id) {
                        count += dtrace_probes::probe_count(&p.site);
                        sites.push(p.site.clone());
                    }
                    probes.insert(p.site.id, p);
                }
            }
            clause_probes.push(sites);
        }
        let (kind, name) = match (&args.sources[si], &sources[si].origin) {
            (_, Origin::Script(path)) => ("script", path.clone()),
            (ProgramSource::Description(text), _) => ("description", description_label(text)),
            (_, _) => ("description", sources[si].text.clone()),
        };
        matched.push((kind, name, count));
        program.items.extend(src_items);
    }
    let codegen = CodegenOptions {
        strsize: options.strsize.clamp(8, 8192) as u32,
        bufsize: ringbuf_size(options.bufsize),
        dynvar_entries: (options.dynvarsize / 64).clamp(1024, 1 << 20) as u32,
        agg_entries: (options.aggsize / 128).clamp(1024, 1 << 20) as u32,
        wall_offset: wall_offset(),
        stack_frames: options.stack_frames,
        ustack_frames: options.ustack_frames,
    };
    let layout = BtfLayout;
    let compiled = dtrace_backend::compile(dtrace_backend::Input {
        program: &program,
        probes: &clause_probes,
        options: codegen,
        macros,
        kernel: &layout,
        formats: &PrintfCheck,
    })
    .map_err(|e| fail(e, &sources))?;
    Ok(Compilation {
        compiled,

        matched,
        probes,
    })
}

/// `prov:mod:func:name` as DTrace prints an unmatched description.
fn full_description(d: &Description) -> String {
    format!("{}:{}:{}:{}", d.provider, d.module, d.function, d.name)
}

/// The ring buffer size: a power of two of at least one page.
fn ringbuf_size(bufsize: u64) -> u32 {
    bufsize.clamp(4096, 1 << 30).next_power_of_two() as u32
}

/// CLOCK_REALTIME - CLOCK_MONOTONIC in ns, for `walltimestamp`.
fn wall_offset() -> u64 {
    let now = |clock| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec into the valid, owned `ts`.
        unsafe { libc::clock_gettime(clock, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    };
    now(libc::CLOCK_REALTIME).wrapping_sub(now(libc::CLOCK_MONOTONIC))
}

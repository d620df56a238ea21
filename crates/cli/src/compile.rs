//! From the command line's program sources to a compiled program: read and parse each
//! source, apply pragmas, match every clause's probe descriptions, and generate code.
//!
//! The D library comes first: the files built into the binary (`crates/cli/lib/*.d`:
//! `procfs.d` with `psinfo_t`, `lwpsinfo_t`, their translators and `curpsinfo`; `sched.d`
//! with `cpuinfo_t`; `signal.d` with `SIG*` and `CLD_*`), then every
//! `*.d` file of each `-L`/`-xlibdir` directory in command-line order (sorted by name; a
//! file named like a built-in one replaces it); `-xnolibs` loads none. `-xsyslibdir=DIR`
//! names the system library's directory: its `*.d` files come in place of the built-in ones. Library sources are
//! numbered after the program's, their typedef names are known when the program is parsed,
//! and their items precede the program's. Nothing in them is compiled until used: an
//! inline is expanded where it is named and a library translator is checked when an
//! `xlate` needs it, so a library naming `struct task_struct` costs a script that does not
//! use it no BTF.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use dtrace_backend::program::{Compiled, ProbeContext, ProbeSite};
use dtrace_backend::CodegenOptions;
use dtrace_frontend::ast::{self, Item};
use dtrace_frontend::{CompileError, Origin, Source, Span};
use dtrace_probes::{Catalog, Description, Probe, ProbeSpec};
use dtrace_typing::macros::MacroArgs;
use dtrace_typing::types::translators::Provided;

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
    /// Descriptions that may also match binaries that start running later
    /// ([`dtrace_probes::user::deferrable`]) or libraries a process loads later (a
    /// process's description matching nothing yet, with `-Z`), with their clause's index.
    pub deferred: Vec<(usize, Description)>,
    /// What compiled the program, to compile it again for probes found later (taken by
    /// the [`crate::watch::Watcher`]).
    pub inputs: Option<Inputs>,
    /// The probe description of each DTrace statement (`dt_clause_N`, by N), as DTrace
    /// names it (`:::BEGIN`).
    pub statements: Vec<String>,
}

/// What the typing pass and the code generator take, kept to compile clauses for probes
/// that appear while tracing ([`Inputs::extended`]).
pub struct Inputs {
    program: ast::Program,
    clause_probes: Vec<Vec<ProbeSite>>,
    clause_statements: Vec<Vec<u32>>,
    typing: dtrace_typing::cook::Options,
    codegen: CodegenOptions,
    macros: MacroArgs,
    translators: Vec<Provided>,
    sources: Vec<Source>,
    /// The entry probes of the return probes whose clauses read `entry->`.
    entry_sites: Vec<ProbeSite>,
    /// The D definitions the traced binaries carry.
    binaries: Vec<dtrace_typing::cook::BinaryDefs>,
}

impl Inputs {
    /// Type `program` with each clause enabled on its `clause_probes` (DTrace statement
    /// numbers in `clause_statements`), then generate its programs.
    fn compile(
        &self,
        program: &ast::Program,
        clause_probes: &[Vec<ProbeSite>],
        clause_statements: &[Vec<u32>],
    ) -> Result<Compiled, CompileError> {
        let typed = dtrace_typing::cook::cook(&dtrace_typing::cook::Input {
            program,
            probes: clause_probes,
            statements: clause_statements,
            options: self.typing.clone(),
            macros: &self.macros,
            formats: &PrintfCheck,
            translators: &self.translators,
            entry_sites: &self.entry_sites,
            binaries: &self.binaries,
        })?;
        dtrace_backend::compile(dtrace_backend::Input {
            program: &typed,
            options: self.codegen.clone(),
            kernel: &BtfLayout,
        })
    }

    /// The program compiled again with each `(clause, probes)` of `extra` as a copy of that
    /// clause appended after the others, enabled on those probes: the maps and the
    /// existing epids come out as before, and the new probes' programs and epids follow.
    pub fn extended(&self, extra: &[(usize, Vec<ProbeSite>)]) -> Result<Compiled, String> {
        let clauses: Vec<&ast::Clause> = self
            .program
            .items
            .iter()
            .filter_map(|i| match i {
                Item::Clause(c) => Some(c),
                _ => None,
            })
            .collect();
        let mut program = self.program.clone();
        let mut clause_probes = self.clause_probes.clone();
        let mut clause_statements = self.clause_statements.clone();
        for (ci, sites) in extra {
            let clause = clauses.get(*ci).ok_or("no such clause")?;
            program.items.push(Item::Clause((*clause).clone()));
            clause_probes.push(sites.clone());
            // The copy is the same DTrace statement as the clause it copies.
            let statement = self.clause_statements[*ci].first().copied().unwrap_or(0);
            clause_statements.push(vec![statement; sites.len()]);
        }
        self.compile(&program, &clause_probes, &clause_statements)
            .map_err(|e| crate::diagnostics::compile_error(&e, &self.sources, false))
    }
}

/// Why compilation failed: a located D error, or a message already worded.
pub enum Failure {
    Compile(CompileError, Vec<Source>),
    Message(String),
}

/// The D library built into the binary: file name and text.
/// `procfs.d` comes first: the others' translations produce its types.
const BUILTIN_LIBRARY: &[(&str, &str)] = &[
    ("procfs.d", include_str!("../lib/procfs.d")),
    ("io.d", include_str!("../lib/io.d")),
    ("sched.d", include_str!("../lib/sched.d")),
    ("signal.d", include_str!("../lib/signal.d")),
    ("net.d", include_str!("../lib/net.d")),
    ("ip.d", include_str!("../lib/ip.d")),
    ("tcp.d", include_str!("../lib/tcp.d")),
    ("udp.d", include_str!("../lib/udp.d")),
];

/// The library sources of this run, read by [`read_sources`], each with whether it is
/// built in (parsed only when the program needs it).
static LIBRARY: OnceLock<Vec<(Source, bool)>> = OnceLock::new();

/// The library sources: built-in files, then the library directories' `*.d` files in
/// dependency order (a file named as a built-in one replaces it).
fn read_library(args: &Args) -> Result<Vec<(Source, bool)>, Failure> {
    if args.options.iter().any(|(n, _)| n == "nolibs") {
        return Ok(Vec::new());
    }
    // `-xsyslibdir=DIR`: DIR's files are the system library, in place of the built-in one.
    let syslibdir = args
        .options
        .iter()
        .rev()
        .find(|(n, _)| n == "syslibdir")
        .and_then(|(_, v)| v.as_deref());
    let builtin = BUILTIN_LIBRARY.iter().filter(|_| syslibdir.is_none());
    let mut files: Vec<(String, Source, bool)> = builtin
        .map(|(name, text)| {
            (
                name.to_string(),
                Source::new(Origin::Library(name.to_string()), text.to_string()),
                true,
            )
        })
        .collect();
    let libdirs = args.options.iter().filter(|(n, _)| n == "libdir");
    let dirs = syslibdir
        .into_iter()
        .chain(libdirs.filter_map(|(_, v)| v.as_deref()));
    let mut found = Vec::new();
    for dir in dirs {
        let entries = std::fs::read_dir(dir).map_err(|e| {
            Failure::Message(format!(
                "dtrace: failed to open library directory {dir}: {}\n",
                crate::errno_text(&e)
            ))
        })?;
        let mut names: Vec<std::path::PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "d") && p.is_file())
            .collect();
        names.sort();
        for path in names {
            let shown = path.display().to_string();
            let text = read_script(&path).map_err(|why| {
                Failure::Message(format!("dtrace: failed to open library {shown}: {why}\n"))
            })?;
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            found.push((name, Source::new(Origin::Library(shown), text)));
        }
    }
    let ordered = crate::libdeps::order(found)
        .map_err(|why| Failure::Message(format!("dtrace: failed to initialize dtrace: {why}\n")))?;
    for (name, source) in ordered {
        files.retain(|(n, _, _)| *n != name);
        files.push((name, source, false));
    }
    Ok(files.into_iter().map(|(_, s, b)| (s, b)).collect())
}

/// The largest script or library file read: far beyond any real program, and a bound on
/// what `-s /dev/zero` (or a mistaken `-s` of a large file) can take.
const MAX_SCRIPT: u64 = 16 << 20;

/// The text of a script or library file, read up to [`MAX_SCRIPT`] bytes; why not.
fn read_script(path: &std::path::Path) -> Result<String, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|e| crate::errno_text(&e))?;
    let mut bytes = Vec::new();
    file.take(MAX_SCRIPT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| crate::errno_text(&e))?;
    if bytes.len() as u64 > MAX_SCRIPT {
        return Err(format!(
            "larger than {} MiB, the most a D script may be",
            MAX_SCRIPT >> 20
        ));
    }
    // D text is bytes: what is not UTF-8 is carried to the lexer's literals unchanged.
    Ok(dtrace_frontend::raw_bytes::decode(bytes))
}

/// Read the sources named on the command line (and the D library, kept aside).
pub fn read_sources(args: &Args) -> Result<Vec<Source>, Failure> {
    let library = read_library(args)?;
    let _ = LIBRARY.set(library);
    let mut sources = Vec::new();
    for src in &args.sources {
        let source = match src {
            ProgramSource::Description(text) => Source::new(Origin::Description, text.clone()),
            ProgramSource::Script(path) => {
                let text = read_script(std::path::Path::new(path)).map_err(|why| {
                    Failure::Message(format!("dtrace: failed to open {path}: {why}\n"))
                })?;
                let text = if args.cpp {
                    crate::preprocess::preprocess(args, path, &text)?
                } else {
                    text
                };
                Source::new(Origin::Script(path.clone()), text)
            }
            ProgramSource::Provider(text)
            | ProgramSource::Module(text)
            | ProgramSource::Function(text)
            | ProgramSource::Id(text) => Source::new(Origin::Description, text.clone()),
        };
        crate::debug::say(|| {
            format!(
                "read {} ({} bytes)",
                match &source.origin {
                    Origin::Script(path) => path.as_str(),
                    _ => source.text.as_str(),
                },
                source.text.len()
            )
        });
        sources.push(source);
    }
    Ok(sources)
}

/// Whether an identifier names a type outside the program: D's built-in typedefs, then the
/// kernel's typedefs from BTF (`u64`, `size_t`, `atomic_t`), read only if a script asks,
/// then a scoped user object's (`a.out`tag_t`, from its DWARF).
pub(crate) fn is_type_name(name: &str) -> bool {
    dtrace_backend::types::builtin_typedef(name).is_some()
        || dtrace_backend::types::kernel::is_typedef(name)
        || crate::user_scopes::is_typedef(name)
}

/// The library sources read for this run (none before [`read_sources`]).
fn library() -> &'static [(Source, bool)] {
    LIBRARY.get().map_or(&[], Vec::as_slice)
}

/// The program's sources followed by the library's, as spans number them.
fn with_library(sources: &[Source]) -> Vec<Source> {
    let mut all = sources.to_vec();
    all.extend(library().iter().map(|(s, _)| s.clone()));
    all
}

/// Every identifier-like word of a text (comments and strings included: a superset).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
}

/// The names a library file may define, found by a scan far cheaper than parsing: at the
/// outer level, each statement's words before its first `=` (so `inline T *name = ...`
/// gives `T` and `name`, `typedef struct s {...} s_t;` gives `s` and `s_t`); member names
/// in struct and union bodies (so `args[0]->pr_pid` of a provider's translated argument
/// counts); every word inside an `enum { ... }` body; and the providers named by
/// `#pragma D depends_on provider NAME` (a script using them may need the file's types).
/// Translators define no name of their own. A superset is fine: it only makes a script
/// that does not need the file parse it.
fn defined_names(text: &str) -> HashSet<&str> {
    let b = text.as_bytes();
    let mut names = HashSet::new();
    let (mut i, mut depth, mut enum_depth) = (0usize, 0usize, None::<usize>);
    let (mut after_eq, mut first_word, mut pending_enum) = (false, None::<&str>, false);
    let mut last_word: Option<&str> = None;
    while i < b.len() {
        let c = b[i];
        match c {
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = text[i + 2..].find("*/").map_or(b.len(), |e| i + 2 + e + 2);
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = text[i..].find('\n').map_or(b.len(), |e| i + e);
                continue;
            }
            b'#' => {
                let end = text[i..].find('\n').map_or(b.len(), |e| i + e);
                let line: Vec<&str> = text[i + 1..end].split_whitespace().collect();
                if let ["pragma", "D", "depends_on", "provider", name] = line.as_slice() {
                    names.insert(*name);
                }
                i = end;
                continue;
            }
            b'"' | b'\'' => {
                let mut j = i + 1;
                while j < b.len() && b[j] != c {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                i = j + 1;
                continue;
            }
            b'{' => {
                depth += 1;
                if pending_enum {
                    enum_depth.get_or_insert(depth);
                    pending_enum = false;
                }
            }
            b'}' => {
                if enum_depth == Some(depth) {
                    enum_depth = None;
                }
                depth = depth.saturating_sub(1);
            }
            b'=' if depth == 0 => after_eq = true,
            // A member's name ends its declarator.
            b';' | b'[' | b':' | b',' if depth > 0 && first_word != Some("translator") => {
                if let Some(word) = last_word.filter(|w| !is_type_word(w)) {
                    names.insert(word);
                }
                pending_enum &= c != b';';
            }
            b';' => {
                pending_enum = false;
                if depth == 0 {
                    after_eq = false;
                    first_word = None;
                }
            }
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &text[start..i];
                if depth == 0 && first_word.is_none() {
                    first_word = Some(word);
                }
                let in_enum = enum_depth.is_some_and(|d| depth >= d);
                if !is_type_word(word)
                    && (in_enum || (depth == 0 && !after_eq && first_word != Some("translator")))
                {
                    names.insert(word);
                }
                // The next `{` opens an enum body, whose words all count.
                pending_enum |= word == "enum";
                last_word = Some(word);
                continue;
            }
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            last_word = None;
        }
        i += 1;
    }
    names
}

/// Whether a word is a D keyword (which names nothing a library defines).
fn is_type_word(word: &str) -> bool {
    dtrace_frontend::token::Keyword::from_word(word).is_some()
}

/// Which library files to parse: every `-L` file, and each built-in file defining a name
/// that the program's text, or a file already chosen, mentions.
fn needed_libraries(sources: &[Source]) -> Vec<bool> {
    let lib = library();
    let mut needed: Vec<bool> = lib.iter().map(|(_, builtin)| !builtin).collect();
    let mut mentioned: HashSet<&str> = sources.iter().flat_map(|s| words(&s.text)).collect();
    for (k, (src, _)) in lib.iter().enumerate() {
        if needed[k] {
            mentioned.extend(words(&src.text));
        }
    }
    let defined: Vec<HashSet<&str>> = lib
        .iter()
        .map(|(src, builtin)| {
            if *builtin {
                defined_names(&src.text)
            } else {
                HashSet::new()
            }
        })
        .collect();
    loop {
        let next = (0..lib.len())
            .find(|&k| !needed[k] && defined[k].iter().any(|n| mentioned.contains(n)));
        let Some(k) = next else { break };
        needed[k] = true;
        mentioned.extend(words(&lib[k].0.text));
    }
    needed
}

/// Parse every source; returns the items of each, then those of each library file (none
/// for a built-in file the program does not need). `pspec`: the `pspec` option's reading
/// of the program's sources.
pub fn parse_all(sources: &[Source], pspec: bool) -> Result<Vec<Vec<Item>>, Failure> {
    let mut typedefs: HashSet<String> = HashSet::new();
    let mut library_items = Vec::new();
    let needed = needed_libraries(sources);
    for (k, (src, _)) in library().iter().enumerate() {
        if !needed[k] {
            library_items.push(Vec::new());
            continue;
        }
        // Library files see D's types and earlier libraries' typedefs, never BTF's: a
        // library must not make every script read kernel types.
        let known = |name: &str| {
            typedefs.contains(name) || dtrace_backend::types::builtin_typedef(name).is_some()
        };
        let items = dtrace_frontend::parse(src, (sources.len() + k) as u16, &known)
            .map_err(|e| Failure::Compile(e, with_library(sources)))?
            .items;
        typedefs.extend(typedef_names(&items));
        library_items.push(items);
    }
    let known = |name: &str| typedefs.contains(name) || is_type_name(name);
    let settings = dtrace_frontend::Settings {
        probe_specifiers: pspec,
        is_predefined: &|name| dtrace_typing::builtins::lookup(name).is_some(),
    };
    let mut all = sources
        .iter()
        .enumerate()
        .map(|(i, s)| {
            dtrace_frontend::parse_with(s, i as u16, &known, &settings)
                .map(|p| p.items)
                .map_err(|e| Failure::Compile(e, with_library(sources)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    all.extend(library_items);
    Ok(all)
}

/// The names `typedef` declarations among `items` define.
fn typedef_names(items: &[Item]) -> Vec<String> {
    items
        .iter()
        .filter_map(|item| match item {
            Item::Decl(d) if d.class == Some(ast::StorageClass::Typedef) => Some(d),
            _ => None,
        })
        .flat_map(|d| d.declarators.iter().map(|x| x.name.clone()))
        .collect()
}

/// DTrace's D_EMPTY: a script of nothing but comments and pragmas is an error (at its
/// end), unless `-x empty`.
pub fn check_empty(
    items: &[Vec<Item>],
    sources: &[Source],
    options: &Options,
) -> Result<(), Failure> {
    if options.empty {
        return Ok(());
    }
    for (i, (src, items)) in sources.iter().zip(items).enumerate() {
        if items.iter().all(|item| matches!(item, Item::Pragma(_))) {
            let end = src.text.len();
            return Err(Failure::Compile(
                CompileError::new(
                    "D_EMPTY",
                    "empty D program translation unit",
                    dtrace_frontend::Span::new(i as u16, end, end),
                ),
                sources.to_vec(),
            ));
        }
    }
    Ok(())
}

/// The macro arguments, checked as DTrace's lexer checks them: the first `$N` (or `$$N`)
/// beyond the arguments given is D_MACRO_UNDEF (unless `-x defaultargs`), and the last
/// argument given must be used (D_MACRO_UNUSED, unless `-x argref`).
pub fn check_macro_args(
    items: &[Vec<Item>],
    sources: &[Source],
    macros: &MacroArgs,
    options: &Options,
) -> Result<(), Failure> {
    let mut uses: Vec<ast::MacroArgUse> = items
        .iter()
        .take(sources.len())
        .flatten()
        .flat_map(Item::macro_args)
        .collect();
    uses.sort_by_key(|u| (u.span.source, u.span.start));
    let fail = |err: CompileError| Err(Failure::Compile(err, sources.to_vec()));
    let given = macros.args.len();
    if let Some(u) = uses
        .iter()
        .find(|u| !u.in_description && u.n as usize >= given && !options.defaultargs)
    {
        let dollars = if u.string { "$$" } else { "$" };
        return fail(CompileError::new(
            "D_MACRO_UNDEF",
            format!("macro argument {dollars}{} is not defined", u.n),
            u.span,
        ));
    }
    let last = given.saturating_sub(1);
    // DTrace compiles each source alone: the first not to use the last argument fails.
    let unused = (0..sources.len()).find(|&i| {
        !uses
            .iter()
            .any(|u| u.n as usize == last && usize::from(u.span.source) == i)
    });
    if let (true, Some(i)) = (last > 0 && !options.argref, unused) {
        let end = sources[i].text.len();
        return fail(CompileError::new(
            "D_MACRO_UNUSED",
            format!(
                "extraneous argument '{}' (${last} is not referenced)",
                macros.args[last]
            ),
            dtrace_frontend::Span::new(i as u16, end, end),
        ));
    }
    Ok(())
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
            options.set_in_program(name, value).map_err(|why| {
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

/// Replace macro variables in a probe description (`pid$target`, `$1`; `$$1` is `$1`
/// there). One that is not defined is DTrace's error, `-x defaultargs` or not: a
/// description must not silently match more than was meant (`syscall::$1:entry` would be
/// every system call).
fn expand_description(desc: &ast::ProbeDesc, macros: &MacroArgs) -> Result<String, CompileError> {
    let undefined = || {
        CompileError::new(
            "D_PDESC_INVAL",
            format!(
                "invalid probe description \"{}\": Undefined macro variable in probe description",
                desc.text
            ),
            desc.span,
        )
    };
    let mut out = String::new();
    let mut rest = desc.text.as_str();
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = rest[i + 1..].strip_prefix('$').unwrap_or(&rest[i + 1..]);
        let numbered = after.starts_with(|c: char| c.is_ascii_digit());
        let len = after
            .bytes()
            .take_while(|b| {
                b.is_ascii_digit() || (!numbered && (b.is_ascii_alphabetic() || *b == b'_'))
            })
            .count();
        let name = &after[..len];
        if numbered {
            let arg = name.parse::<usize>().ok().and_then(|n| macros.args.get(n));
            out.push_str(arg.ok_or_else(undefined)?);
        } else {
            let value = macros.named.get(name).ok_or_else(undefined)?;
            out.push_str(&value.to_string());
        }
        rest = &after[len..];
    }
    out.push_str(rest);
    Ok(out)
}

/// How the probe descriptions of each command-line source are read: `-P`, `-m`, `-f` name
/// a provider, module or function with their last part; `-n`, `-i` and scripts a name.
pub fn specs(args: &Args) -> Vec<ProbeSpec> {
    args.sources
        .iter()
        .map(|s| match s {
            ProgramSource::Provider(_) => ProbeSpec::Provider,
            ProgramSource::Module(_) => ProbeSpec::Module,
            ProgramSource::Function(_) => ProbeSpec::Function,
            _ => ProbeSpec::Name,
        })
        .collect()
}

/// A clause's probe description as the catalog matches it: macro variables replaced, its
/// last part the field `spec` says. A description written as an integer names the probe
/// with that id (`-i 4`, `4 { ... }`), as in DTrace.
pub fn description(
    desc: &ast::ProbeDesc,
    macros: &MacroArgs,
    spec: ProbeSpec,
    catalog: &mut Catalog,
) -> Result<Description, CompileError> {
    if let Some(id) = integer(&desc.text) {
        return by_id(desc, id, spec, catalog);
    }
    let text = expand_description(desc, macros)?;
    Description::parse_as(&text, spec)
        .map_err(|e| CompileError::new("D_PDESC_INVAL", e.0, desc.span))
}

/// Read every probe description of the command line's sources ([`description`]), for its
/// errors alone: an unknown probe id, an overspecified description, an undefined macro
/// variable in one.
pub fn check_descriptions(
    items: &[Vec<Item>],
    sources: &[Source],
    specs: &[ProbeSpec],
    macros: &MacroArgs,
    catalog: &mut Catalog,
) -> Result<(), Failure> {
    let clauses = || {
        items
            .iter()
            .take(sources.len())
            .enumerate()
            .flat_map(|(si, source_items)| source_items.iter().map(move |item| (si, item)))
            .filter_map(|(si, item)| match item {
                Item::Clause(clause) => Some((si, clause)),
                _ => None,
            })
    };
    // An id may name a probe a description before it found (one function of a `pid`
    // glob): then each description's probes are found in turn, as DTrace finds them.
    let ids = clauses().any(|(_, c)| c.probes.iter().any(|d| integer(&d.text).is_some()));
    for (si, clause) in clauses() {
        let spec = specs.get(si).copied().unwrap_or_default();
        for desc in &clause.probes {
            let d = description(desc, macros, spec, catalog)
                .map_err(|e| Failure::Compile(e, sources.to_vec()))?;
            if ids {
                catalog.matching(&d);
            }
        }
    }
    Ok(())
}

/// The value of a description written as a D integer constant (decimal, `0` octal, `0x`
/// hexadecimal); `u64::MAX` for one too large for that.
fn integer(text: &str) -> Option<u64> {
    let text = text.trim();
    let (digits, radix) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None if text.len() > 1 && text.starts_with('0') => (&text[1..], 8),
        None => (text, 10),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    Some(u64::from_str_radix(digits, radix).unwrap_or(u64::MAX))
}

/// The description of the probe whose id is `id`, or DTrace's error.
fn by_id(
    desc: &ast::ProbeDesc,
    id: u64,
    spec: ProbeSpec,
    catalog: &mut Catalog,
) -> Result<Description, CompileError> {
    let error = |message: String| CompileError::new("D_PDESC_INVAL", message, desc.span);
    let Ok(id) = u32::try_from(id) else {
        return Err(error(format!("identifier {id} exceeds maximum probe id")));
    };
    if spec != ProbeSpec::Name {
        return Err(error(format!(
            "probe identifier {id} not permitted when specifying {}",
            spec.what()
        )));
    }
    catalog.description_of(id).ok_or_else(|| {
        error(format!(
            "invalid probe identifier {id}: Unknown probe identifier"
        ))
    })
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
    // -Z, -x zdefs or #pragma D option zdefs.
    let zero_ok = args.zero_matches_ok || options.zdefs;
    let mut matched = Vec::new();
    let mut deferred = Vec::new();
    let mut clause_probes: Vec<Vec<ProbeSite>> = Vec::new();
    let mut probes = HashMap::new();
    let user_sources = sources.len();
    let mut sources = with_library(&sources);
    let mut items = items;
    let library_items: Vec<Item> = items
        .drain(user_sources.min(items.len())..)
        .flatten()
        .collect();
    let mut program = ast::Program {
        items: library_items,
    };
    let mut clause_statements: Vec<Vec<u32>> = Vec::new();
    let mut entry_sites: Vec<ProbeSite> = Vec::new();
    let mut next_statement = 0u32;
    let mut statement_descriptions = Vec::new();
    // An fbt glob's functions are grouped by the types of the args[] the clauses read.
    let mut args_read = Vec::new();
    for item in items.iter().flatten() {
        if let Item::Clause(clause) = item {
            for a in clause.args_read() {
                if !args_read.contains(&a) {
                    args_read.push(a);
                }
            }
        }
    }
    catalog.split_fbt_groups_by(args_read);
    let specs = specs(args);
    for (si, src_items) in items.into_iter().enumerate() {
        let spec = specs.get(si).copied().unwrap_or_default();
        let mut count = 0u32;
        for item in &src_items {
            let Item::Clause(clause) = item else { continue };
            let mut sites = Vec::new();
            let mut statements = Vec::new();
            // (probe id, statement) of each site, as `sites` and `statements` hold them.
            let mut enabled = HashSet::new();
            let first_statement = next_statement;
            for desc in &clause.probes {
                // DTrace makes a statement of each probe description of a clause.
                let statement = next_statement;
                next_statement += 1;
                let d = description(desc, macros, spec, catalog).map_err(|e| fail(e, &sources))?;
                statement_descriptions.push(full_description(&d));
                let found = catalog.matches(&d);
                crate::debug::say(|| {
                    format!(
                        "description {} matched {} probes",
                        full_description(&d),
                        found.probes.len()
                    )
                });
                if let Some(min) = &options.amin {
                    let attr = dtrace_probes::attrs::description_attrs(
                        &d,
                        found.probes.first().map(|p| &p.site),
                    );
                    if attr.below(min) {
                        // Where DTrace's clause node is: its end.
                        let end = clause.span.end as usize;
                        return Err(fail(
                            CompileError::new(
                                "D_ATTR_MIN",
                                format!(
                                    "attributes for clause ({attr}) are less than predefined minimum"
                                ),
                                Span::new(clause.span.source, end.saturating_sub(1), end),
                            ),
                            &sources,
                        ));
                    }
                }
                // Globs wait for binaries started later; a process's description that
                // matches nothing yet (-Z), or that names no literal module, waits for
                // the libraries it will load.
                if dtrace_probes::user::deferrable(&d)
                    || dtrace_probes::user::follows_libraries(&d)
                    || (found.probes.is_empty()
                        && zero_ok
                        && dtrace_probes::user::named_pid(&d).is_some())
                {
                    deferred.push((clause_probes.len(), d.clone()));
                }
                if found.probes.is_empty()
                    && !zero_ok
                    && !dtrace_probes::user::deferrable(&d)
                    && !dtrace_probes::user::may_match_later(&d)
                {
                    if let Some((tag, message)) =
                        dtrace_probes::user::pid_description_error(&d, &found.refused)
                    {
                        return Err(fail(CompileError::new(tag, message, desc.span), &sources));
                    }
                    // A `pid` offset that is no instruction of its function: say why.
                    let why = found
                        .why_none()
                        .map(|w| format!(": {w}"))
                        .unwrap_or_default();
                    return Err(fail(
                        CompileError::new(
                            "D_PDESC_ZERO",
                            format!(
                                "probe description {} does not match any probes{why}",
                                full_description(&d)
                            ),
                            desc.span,
                        ),
                        &sources,
                    ));
                }
                if clause.reads_entry() && d.name == "return" {
                    // Its return probes need their entry probes, to save what they read.
                    let entry = Description {
                        name: "entry".into(),
                        ..d.clone()
                    };
                    for p in catalog.matches(&entry).probes {
                        if !entry_sites.iter().any(|s: &ProbeSite| s.id == p.site.id) {
                            entry_sites.push(p.site.clone());
                        }
                        probes.insert(p.site.id, p);
                    }
                }
                for p in found.probes {
                    // A probe several descriptions name is enabled once for each.
                    if enabled.insert((p.site.id, statement)) {
                        count += dtrace_probes::probe_count(&p.site);
                        sites.push(p.site.clone());
                        statements.push(statement);
                    }
                    probes.insert(p.site.id, p);
                }
            }
            // A clause waiting for processes that do not run yet is compiled for a
            // site-less probe, so its variables and aggregations exist from the start.
            if sites.is_empty() {
                if let Some((_, d)) = deferred.iter().find(|(ci, _)| *ci == clause_probes.len()) {
                    let p = catalog.placeholder(d);
                    sites.push(p.site.clone());
                    statements.push(first_statement);
                    probes.insert(p.site.id, p);
                }
            }
            clause_probes.push(sites);
            clause_statements.push(statements);
        }
        let (kind, name) = match (&args.sources[si], &sources[si].origin) {
            (_, Origin::Script(path)) => ("script", path.clone()),
            (ProgramSource::Description(text), _) => ("description", description_label(text)),
            (_, _) => ("description", sources[si].text.clone()),
        };
        matched.push((kind, name, count));
        program.items.extend(src_items);
    }
    let binaries = crate::binary_defs::read(&probes, &mut sources)?;
    // Translators go to the typing pass aside from the items; the program's own are
    // checked where they are defined, the library's only when used.
    let translators: Vec<Provided> = program
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Translator(t) => Some(Provided {
                def: t.clone(),
                eager: (t.span.source as usize) < user_sources,
            }),
            _ => None,
        })
        .collect();
    // A string holds `strsize` characters and its NUL, as in DTrace.
    let strsize = (options.strsize.clamp(1, 8191) + 1) as u32;
    let mut inputs = Inputs {
        program,
        clause_probes,
        clause_statements,
        typing: dtrace_typing::cook::Options {
            strsize,
            scratchsize: options.scratchsize.min(u32::MAX as u64) as u32,
            stack_frames: options.stack_frames,
            ustack_frames: options.ustack_frames,
            jstack_frames: options.jstack_frames,
            max_frames: options.max_frames,
            tuple_registers: options.tregs,
            version: options.version,
        },
        codegen: CodegenOptions {
            strsize,
            bufsize: crate::buffers::ring_size(options),
            wakeup_at: crate::buffers::wakeup_at(options),
            dynvar_entries: crate::buffers::dynvar_entries(options),
            dynvarsize: options.dynvarsize,
            agg_entries: crate::buffers::agg_entries(options),
            aggsize: options.aggsize,
            wall_offset: wall_offset(),
            cpu: options.cpu,
            nspec: options.nspec.min(u64::from(u32::MAX)) as u32,
            specsize: options.specsize,
            max_frames: options.max_frames,
            scratchsize: options.scratchsize.min(u32::MAX as u64) as u32,
        },
        macros: macros.clone(),
        translators,
        sources: Vec::new(),
        entry_sites,
        binaries,
    };
    refuse_fbt_early(&inputs).map_err(|e| match e {
        Failure::Compile(e, _) => fail(e, &sources),
        other => other,
    })?;
    let mut compiled = inputs
        .compile(
            &inputs.program,
            &inputs.clause_probes,
            &inputs.clause_statements,
        )
        .map_err(|e| fail(e, &sources))?;
    let sites = inputs.clause_probes.iter_mut().flatten();
    if crate::syscall_fentry::move_to_fentry(
        &compiled,
        &mut probes,
        sites.chain(inputs.entry_sites.iter_mut()),
    ) {
        compiled = inputs
            .compile(
                &inputs.program,
                &inputs.clause_probes,
                &inputs.clause_statements,
            )
            .map_err(|e| fail(e, &sources))?;
    }
    crate::debug::say(|| {
        let insns: usize = compiled.programs.iter().map(|p| p.code.insns.len()).sum();
        format!(
            "compiled {} programs ({insns} instructions) and {} maps",
            compiled.programs.len(),
            compiled.maps.len()
        )
    });
    Ok(Compilation {
        compiled,
        matched,
        probes,
        deferred,
        inputs: Some(Inputs { sources, ..inputs }),
        statements: statement_descriptions,
    })
}

/// On a kernel without kprobes that refuses fentry programs no fbt probe can be enabled:
/// say so before compiling a program for each (`fbt:::entry` names some 56,000). The
/// program is compiled first with one fbt probe per clause, so its errors come first, as
/// they would.
fn refuse_fbt_early(inputs: &Inputs) -> Result<(), Failure> {
    let is_fbt = |s: &ProbeSite| matches!(s.context, ProbeContext::Function { .. });
    let Some(first) = inputs
        .clause_probes
        .iter()
        .flatten()
        .filter(|s| is_fbt(s))
        .min_by_key(|s| s.id)
    else {
        return Ok(());
    };
    let Some(why) = dtrace_probes::fbt::kernel_refusal() else {
        return Ok(());
    };
    let mut probes = Vec::new();
    let mut statements = Vec::new();
    for (sites, stmts) in inputs.clause_probes.iter().zip(&inputs.clause_statements) {
        let mut fbt_kept = false;
        let kept: Vec<(ProbeSite, u32)> = sites
            .iter()
            .zip(stmts)
            .filter(|(s, _)| !is_fbt(s) || !std::mem::replace(&mut fbt_kept, true))
            .map(|(s, st)| (s.clone(), *st))
            .collect();
        let (s, st): (Vec<ProbeSite>, Vec<u32>) = kept.into_iter().unzip();
        probes.push(s);
        statements.push(st);
    }
    inputs
        .compile(&inputs.program, &probes, &statements)
        .map_err(|e| Failure::Compile(e, Vec::new()))?;
    Err(Failure::Message(crate::load::fbt_refused(first, &why)))
}

/// `prov:mod:func:name` as DTrace prints an unmatched description.
fn full_description(d: &Description) -> String {
    format!("{}:{}:{}:{}", d.provider, d.module, d.function, d.name)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn library_defined_names() {
        let text = "/* inline int hidden = 1; */\n#pragma D depends_on library x.d\n\
            inline int answer = other + 1;\n\
            typedef struct pair { int a; } pair_t;\n\
            typedef enum color { RED, GREEN = 2 } color_t;\n\
            translator pair_t < struct task_struct *T > { a = T->pid; };\n\
            inline string s = \"quoted words\";\n\
            #pragma D depends_on provider proc\n\
            struct m { int m_one; char m_two[4]; int m_three : 3; };\n";
        let names = defined_names(text);
        for n in [
            "answer", "pair", "pair_t", "color", "RED", "GREEN", "color_t", "s", "a", "proc",
            "m_one", "m_two", "m_three",
        ] {
            assert!(names.contains(n), "{n} missing from {names:?}");
        }
        for n in [
            "hidden",
            "other",
            "T",
            "pid",
            "task_struct",
            "quoted",
            "depends_on",
            "int",
            "char",
            "inline",
            "typedef",
            "struct",
            "string",
        ] {
            assert!(!names.contains(n), "{n} wrongly in {names:?}");
        }
    }

    #[test]
    fn builtin_library_parses() {
        for (name, text) in BUILTIN_LIBRARY {
            let src = Source::new(Origin::Script(name.to_string()), text.to_string());
            let known = |n: &str| dtrace_backend::types::builtin_typedef(n).is_some();
            let items = dtrace_frontend::parse(&src, 0, &known).expect("library parses");
            let names = defined_names(text);
            let (typedefs, defined): (&[&str], &[&str]) = match *name {
                "procfs.d" => (
                    &["psinfo_t", "lwpsinfo_t"],
                    &["curpsinfo", "curlwpsinfo", "psinfo_t", "lwpsinfo_t", "SRUN"],
                ),
                "sched.d" => (&["cpuinfo_t"], &["cpuinfo_t", "cpu_id", "sched"]),
                "net.d" => (&["conninfo_t"], &["AF_INET6", "ip", "tcp", "udp"]),
                "ip.d" => (
                    &["ipaddr_t", "ipinfo_t", "void_ip_t"],
                    &["IPPROTO_TCP", "ip_saddr", "ipv6info_t", "tcp"],
                ),
                "tcp.d" => (
                    &["tcpsinfo_t", "tcplsinfo_t"],
                    &["tcp_state_string", "TH_SYN", "tcps_state", "tcp"],
                ),
                "udp.d" => (&["udpsinfo_t"], &["udpinfo_t", "udp_dport", "udp"]),
                "io.d" => (
                    &["bufinfo_t", "devinfo_t", "fileinfo_t"],
                    &[
                        "fds",
                        "B_WRITE",
                        "O_RDONLY",
                        "b_bcount",
                        "fi_pathname",
                        "io",
                    ],
                ),
                _ => (&[], &["SIGKILL", "CLD_EXITED", "proc"]),
            };
            for t in typedefs {
                assert!(typedef_names(&items.items).contains(&t.to_string()), "{t}");
            }
            for n in defined {
                assert!(names.contains(n), "{n} missing from {name}");
            }
        }
    }

    #[test]
    fn a_provider_loads_the_libraries_depending_on_it() {
        let sources = [Source::new(
            Origin::Description,
            "proc:::exit { trace(args[0]); }".to_string(),
        )];
        let _ = LIBRARY.set(
            BUILTIN_LIBRARY
                .iter()
                .map(|(name, text)| {
                    (
                        Source::new(Origin::Script(name.to_string()), text.to_string()),
                        true,
                    )
                })
                .collect(),
        );
        let needed = needed_libraries(&sources);
        let loaded: Vec<&str> = BUILTIN_LIBRARY
            .iter()
            .zip(&needed)
            .filter(|(_, n)| **n)
            .map(|((name, _), _)| *name)
            .collect();
        // procfs.d names the sched provider too: sched.d comes along (a superset is fine).
        assert!(loaded.contains(&"procfs.d") && loaded.contains(&"signal.d"));
        let begin = [Source::new(
            Origin::Description,
            "BEGIN { trace(1); }".to_string(),
        )];
        assert!(needed_libraries(&begin).iter().all(|n| !n));
    }
}

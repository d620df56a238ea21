//! The C preprocessor `dtrace -C` runs, built in: no C toolchain is needed at run time.
//!
//! It does what DTrace gets from `cpp`: `#define` and `#undef` (object-like and
//! function-like macros, `#`, `##`, `__VA_ARGS__`), `#if`/`#ifdef`/`#ifndef`/`#elif`/
//! `#else`/`#endif` with `defined` and `__has_include`, `#include` (quoted: the including
//! file's directory first; both forms: the `-I` directories, then the system ones) and
//! `#include_next`, `#error`, `#warning`; `#pragma`, `#line` and `#ident` lines are passed to
//! the D compiler. The predefined macros are GNU cpp's for x86-64 Linux without
//! `__GNUC__`, plus DTrace's (`__SUNW_D`, `__SUNW_D_64`, `__SUNW_D_VERSION`, `__linux`,
//! `__unix`, `__SVR4`, `__amd64`, `__Linux`).
//!
//! The output keeps every line of the script on its line, so the D compiler's line numbers
//! are the script's: an included file's text goes on its `#include` line. Errors are worded
//! and placed as GNU cpp words them (`FILE:LINE: error: unterminated #if`); processing goes
//! on after an error, as there, so all of them are reported, except after a missing include
//! (`fatal error`).
//!
//! Submodules: [`lex`] logical lines and tokens, [`expand`] macros, [`cond`] `#if`
//! expressions.

mod cond;
mod expand;
mod lex;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use expand::{Macro, Macros};
use lex::{Kind, Token};

/// How the preprocessor is run: the `-D`, `-U`, `-I` and `-H` of DTrace's command line.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// `-D name[=value]`, and `-U name`, in command-line order (`true`: define).
    pub macros: Vec<(bool, String)>,
    /// `-I` directories, searched first.
    pub include_dirs: Vec<PathBuf>,
    /// The system's directories, searched after them.
    pub system_dirs: Vec<PathBuf>,
    /// A file read before the script, as GNU cpp reads `stdc-predef.h` (None: none).
    pub pre_include: Option<PathBuf>,
    /// `-H`: list every file included, indented by depth (`. file`, `.. nested`).
    pub list_headers: bool,
    /// `-dM`: output the macros defined at the end instead of the text.
    pub dump_macros: bool,
    /// How the bytes of a file read (a header) become text; `None`: as UTF-8, a file that
    /// is not being an error.
    pub decode: Option<fn(Vec<u8>) -> String>,
}

impl Config {
    /// The text of the file at `path`, as [`Config::decode`] says.
    fn read_text(&self, path: &Path) -> std::io::Result<String> {
        let bytes = std::fs::read(path)?;
        match self.decode {
            Some(decode) => Ok(decode(bytes)),
            None => String::from_utf8(bytes).map_err(|_| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                )
            }),
        }
    }

    /// The configuration DTrace uses on this system: GNU cpp's system directories (those
    /// that exist: the newest installed GCC's own headers, `stddef.h` and the like, first)
    /// and its implicit `stdc-predef.h`.
    pub fn system() -> Config {
        let mut system_dirs: Vec<PathBuf> = gcc_include_dir().into_iter().collect();
        system_dirs.extend(
            [
                "/usr/local/include",
                "/usr/include/x86_64-linux-gnu",
                "/usr/include",
            ]
            .iter()
            .map(PathBuf::from)
            .filter(|d| d.is_dir()),
        );
        let predef = PathBuf::from("/usr/include/stdc-predef.h");
        Config {
            pre_include: predef.is_file().then_some(predef),
            system_dirs,
            ..Config::default()
        }
    }
}

/// The include directory of the newest GCC installed (`/usr/lib/gcc/x86_64-linux-gnu/N/
/// include`), if any.
fn gcc_include_dir() -> Option<PathBuf> {
    let base = Path::new("/usr/lib/gcc/x86_64-linux-gnu");
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(base)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let major = e.file_name().to_str()?.split('.').next()?.parse().ok()?;
            Some((major, e.path().join("include")))
        })
        .filter(|(_, p)| p.is_dir())
        .collect();
    versions.sort();
    versions.pop().map(|(_, p)| p)
}

/// What the preprocessor made of a script.
#[derive(Debug)]
pub struct Output {
    /// The text for the D compiler.
    pub text: String,
    /// What it says on standard error when it succeeds (`-H`'s list, warnings).
    pub messages: String,
}

/// The preprocessor's messages when it fails (GNU cpp's lines, each with its newline).
#[derive(Debug, PartialEq)]
pub struct Failure {
    pub messages: String,
}

/// Preprocess `text`, named `name` in messages; its quoted includes are looked for in
/// `dir` first.
pub fn preprocess(name: &str, dir: &Path, text: &str, config: &Config) -> Result<Output, Failure> {
    let mut pp = Pp {
        config,
        macros: Macros::default(),
        order: Vec::new(),
        errors: String::new(),
        messages: String::new(),
        fatal: false,
        once: HashSet::new(),
    };
    pp.predefine();
    if let Some(pre) = &config.pre_include {
        if let Ok(text) = config.read_text(pre) {
            let shown = pre.display().to_string();
            if config.list_headers {
                pp.messages.push_str(&format!(". {shown}\n"));
            }
            let _ = pp.file(&shown, &place_of(pre, None), &text, 1);
        }
    }
    let main = Place {
        dir: dir.to_path_buf(),
        index: None,
    };
    let out = pp.file(name, &main, text, 0);
    if !pp.errors.is_empty() {
        return Err(Failure {
            messages: pp.errors,
        });
    }
    let text = if config.dump_macros {
        pp.order
            .iter()
            .filter_map(|n| pp.macros.defs.get(n).map(|m| definition(n, m)))
            .collect()
    } else {
        out
    };
    Ok(Output {
        text,
        messages: pp.messages,
    })
}

/// Where a file was found: its directory, and which search directory it came from (for
/// `#include_next`).
struct Place {
    dir: PathBuf,
    index: Option<usize>,
}

fn place_of(path: &Path, index: Option<usize>) -> Place {
    Place {
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        index,
    }
}

/// `#define` lines for `-dM`.
fn definition(name: &str, m: &Macro) -> String {
    let mut s = format!("#define {name}");
    if let Some(params) = &m.params {
        let shown: Vec<String> = params
            .iter()
            .enumerate()
            .map(|(i, p)| match p.as_str() {
                "__VA_ARGS__" => "...".to_string(),
                _ if m.variadic && i + 1 == params.len() => format!("{p}..."),
                _ => p.clone(),
            })
            .collect();
        s.push_str(&format!("({})", shown.join(",")));
    }
    s.push(' ');
    s.push_str(&spell(&m.body));
    s.push('\n');
    s
}

/// Tokens as text on one line, spaced where they were (and where they would run together).
fn spell(toks: &[Token]) -> String {
    let mut s = String::new();
    let mut prev: Option<&Token> = None;
    for t in toks {
        if let Some(p) = prev {
            if t.space || runs_together(p, t) {
                s.push(' ');
            }
        }
        s.push_str(&t.text);
        prev = Some(t);
    }
    s
}

/// Whether two tokens written side by side would read as other tokens.
fn runs_together(a: &Token, b: &Token) -> bool {
    let word = |t: &Token| matches!(t.kind, Kind::Ident | Kind::Number);
    if word(a) && word(b) {
        return true;
    }
    a.kind == Kind::Punct && b.kind == Kind::Punct && {
        let joined = format!("{}{}", a.text, b.text);
        lex::tokens(&joined, 0).len() < 2 || joined.starts_with("//") || joined.starts_with("/*")
    }
}

/// One conditional group being read.
struct Cond {
    /// The line of its `#if`/`#ifdef`/`#ifndef`.
    line: usize,
    /// The directive of the branch being read (for "unterminated #else").
    branch: &'static str,
    /// Whether the group's text is read at all (the enclosing group is active).
    outer: bool,
    /// Whether a branch was taken already.
    taken: bool,
    /// Whether the current branch is read.
    active: bool,
    seen_else: bool,
}

/// The largest depth of nested includes (GNU cpp's).
const MAX_INCLUDE_DEPTH: usize = 200;

struct Pp<'a> {
    config: &'a Config,
    macros: Macros,
    /// Macro names in definition order (for `-dM`).
    order: Vec<String>,
    errors: String,
    messages: String,
    /// A fatal error happened: stop reading.
    fatal: bool,
    /// Files with `#pragma once` read already.
    once: HashSet<PathBuf>,
}

impl Pp<'_> {
    fn predefine(&mut self) {
        const PREDEFINED: &[&str] = &[
            "__STDC__=1",
            "__STDC_VERSION__=201710L",
            "__STDC_HOSTED__=1",
            "__x86_64__=1",
            "__x86_64=1",
            "__amd64__=1",
            "__amd64=1",
            "__linux__=1",
            "__linux=1",
            "linux=1",
            "__gnu_linux__=1",
            "__unix__=1",
            "__unix=1",
            "unix=1",
            "__ELF__=1",
            "__LP64__=1",
            "_LP64=1",
            "__CHAR_BIT__=8",
            "__SIZEOF_SHORT__=2",
            "__SIZEOF_INT__=4",
            "__SIZEOF_LONG__=8",
            "__SIZEOF_LONG_LONG__=8",
            "__SIZEOF_POINTER__=8",
            "__SIZEOF_FLOAT__=4",
            "__SIZEOF_DOUBLE__=8",
            "__SIZEOF_LONG_DOUBLE__=16",
            "__SIZEOF_SIZE_T__=8",
            "__SIZEOF_WCHAR_T__=4",
            "__SIZEOF_WINT_T__=4",
            "__SIZEOF_PTRDIFF_T__=8",
            "__SCHAR_MAX__=0x7f",
            "__SHRT_MAX__=0x7fff",
            "__INT_MAX__=0x7fffffff",
            "__LONG_MAX__=0x7fffffffffffffffL",
            "__LONG_LONG_MAX__=0x7fffffffffffffffLL",
            "__WCHAR_MAX__=0x7fffffff",
            "__WCHAR_MIN__=(-__WCHAR_MAX__ - 1)",
            "__INTMAX_MAX__=0x7fffffffffffffffL",
            "__UINTMAX_MAX__=0xffffffffffffffffUL",
            "__SIZE_MAX__=0xffffffffffffffffUL",
            "__PTRDIFF_MAX__=0x7fffffffffffffffL",
            "__INTPTR_MAX__=0x7fffffffffffffffL",
            "__UINTPTR_MAX__=0xffffffffffffffffUL",
            "__SIZE_TYPE__=long unsigned int",
            "__PTRDIFF_TYPE__=long int",
            "__WCHAR_TYPE__=int",
            "__INTMAX_TYPE__=long int",
            "__UINTMAX_TYPE__=long unsigned int",
            "__ORDER_LITTLE_ENDIAN__=1234",
            "__ORDER_BIG_ENDIAN__=4321",
            "__ORDER_PDP_ENDIAN__=3412",
            "__BYTE_ORDER__=__ORDER_LITTLE_ENDIAN__",
            "__USER_LABEL_PREFIX__=",
            "__REGISTER_PREFIX__=",
            // DTrace's own.
            "__SVR4=1",
            "__SUNW_D=1",
            "__SUNW_D_64=1",
            "__Linux=1",
            "__SUNW_D_VERSION=0x02000000",
        ];
        for d in PREDEFINED {
            self.command_line_define(d);
        }
        for (define, m) in &self.config.macros {
            if *define {
                self.command_line_define(m);
            } else {
                self.macros.defs.remove(m.as_str());
            }
        }
    }

    /// `-D name[=value]` (no value: 1).
    fn command_line_define(&mut self, d: &str) {
        let (name, value) = d.split_once('=').unwrap_or((d, "1"));
        let line = format!("{name} {value}");
        let toks = lex::tokens(&line, 0);
        let _ = self.define(&toks);
    }

    fn error(&mut self, file: &str, line: usize, message: &str) {
        self.errors
            .push_str(&format!("{file}:{line}: error: {message}\n"));
    }

    /// Read one file; its output, one line per line of it.
    fn file(&mut self, name: &str, place: &Place, text: &str, depth: usize) -> String {
        let (lines, unterminated) = lex::logical_lines(text);
        let mut out = String::new();
        let mut out_line = 1;
        let mut conds: Vec<Cond> = Vec::new();
        let mut block: Vec<Token> = Vec::new();
        for line in lines {
            if self.fatal {
                break;
            }
            let toks = lex::tokens(&line.text, line.number);
            let active = conds.last().is_none_or(|c| c.active);
            let directive = toks.first().is_some_and(|t| t.is("#") || t.is("%:"));
            if !directive {
                if active {
                    block.extend(toks);
                }
                continue;
            }
            self.flush(name, &mut block, &mut out, &mut out_line);
            let word = toks.get(1).map(|t| t.text.clone()).unwrap_or_default();
            let rest = toks.get(2..).unwrap_or_default();
            let n = line.number;
            match word.as_str() {
                "if" | "ifdef" | "ifndef" => {
                    let value = if !active {
                        false
                    } else {
                        match self.condition(&word, rest, place) {
                            Ok(v) => v,
                            Err(m) => {
                                self.error(name, n, &m);
                                false
                            }
                        }
                    };
                    conds.push(Cond {
                        line: n,
                        branch: match word.as_str() {
                            "if" => "#if",
                            "ifdef" => "#ifdef",
                            _ => "#ifndef",
                        },
                        outer: active,
                        taken: value,
                        active: value,
                        seen_else: false,
                    });
                }
                "elif" => {
                    let Some(c) = conds.last() else {
                        self.error(name, n, "#elif without #if");
                        continue;
                    };
                    if c.seen_else {
                        let began = c.line;
                        self.error(name, n, "#elif after #else");
                        self.error(name, began, "the conditional began here");
                        continue;
                    }
                    let (outer, taken) = (c.outer, c.taken);
                    let value = if !outer || taken {
                        false
                    } else {
                        match self.condition("if", rest, place) {
                            Ok(v) => v,
                            Err(m) => {
                                self.error(name, n, &m);
                                false
                            }
                        }
                    };
                    if let Some(c) = conds.last_mut() {
                        c.branch = "#elif";
                        c.active = value;
                        c.taken |= value;
                    }
                }
                "else" => {
                    let Some(c) = conds.last_mut() else {
                        self.error(name, n, "#else without #if");
                        continue;
                    };
                    if c.seen_else {
                        let began = c.line;
                        self.error(name, n, "#else after #else");
                        self.error(name, began, "the conditional began here");
                        continue;
                    }
                    c.seen_else = true;
                    c.branch = "#else";
                    c.active = c.outer && !c.taken;
                    c.taken = true;
                }
                "endif" => {
                    if conds.pop().is_none() {
                        self.error(name, n, "#endif without #if");
                    }
                }
                _ if !active => {}
                "" => {}
                "define" => {
                    if let Err(m) = self.define(rest) {
                        self.error(name, n, &m);
                    }
                }
                "undef" => match rest.first() {
                    None => self.error(name, n, "no macro name given in #undef directive"),
                    Some(t) if t.kind != Kind::Ident => {
                        self.error(name, n, "macro names must be identifiers")
                    }
                    Some(t) => {
                        self.macros.defs.remove(&t.text);
                    }
                },
                "include" | "include_next" => {
                    let text = self.include(name, place, n, rest, word == "include_next", depth);
                    pad_to(&mut out, &mut out_line, n);
                    out.push_str(&text);
                }
                "error" => self.error(name, n, &format!("#error {}", spell(rest))),
                "warning" => {
                    let m = format!("{name}:{n}: warning: #warning {}\n", spell(rest));
                    self.messages.push_str(&m);
                }
                "pragma" if rest.first().is_some_and(|t| t.text == "once") => {
                    self.once.insert(place.dir.join(name));
                }
                "pragma" | "line" | "ident" => {
                    pad_to(&mut out, &mut out_line, n);
                    out.push_str(line.text.trim());
                }
                _ if toks[1].kind == Kind::Number => {
                    pad_to(&mut out, &mut out_line, n);
                    out.push_str(line.text.trim());
                }
                other => self.error(
                    name,
                    n,
                    &format!("invalid preprocessing directive #{other}"),
                ),
            }
        }
        self.flush(name, &mut block, &mut out, &mut out_line);
        if !self.fatal {
            for c in conds.iter().rev() {
                self.error(name, c.line, &format!("unterminated {}", c.branch));
            }
            if let Some(l) = unterminated {
                self.error(name, l, "unterminated comment");
            }
        }
        out.push('\n');
        out
    }

    /// Expand the text lines gathered and write them at their lines.
    fn flush(
        &mut self,
        name: &str,
        block: &mut Vec<Token>,
        out: &mut String,
        out_line: &mut usize,
    ) {
        if block.is_empty() {
            return;
        }
        let first = block[0].line;
        let toks = match self.macros.expand(std::mem::take(block)) {
            Ok(t) => t,
            Err(m) => {
                self.error(name, first, &m);
                return;
            }
        };
        let mut prev: Option<Token> = None;
        for mut t in toks {
            if t.kind == Kind::Ident && t.text == "__LINE__" {
                t = Token::new(Kind::Number, t.line.to_string(), t.line, t.space);
            } else if t.kind == Kind::Ident && t.text == "__FILE__" {
                t = Token::new(Kind::Literal, format!("\"{name}\""), t.line, t.space);
            }
            let newline = t.line > *out_line;
            pad_to(out, out_line, t.line);
            if !newline {
                if let Some(p) = &prev {
                    if t.space || runs_together(p, &t) {
                        out.push(' ');
                    }
                }
            } else if t.space {
                out.push(' ');
            }
            out.push_str(&t.text);
            prev = Some(t);
        }
    }

    /// The value of `#if`, `#ifdef NAME` or `#ifndef NAME`.
    fn condition(&mut self, word: &str, rest: &[Token], place: &Place) -> Result<bool, String> {
        if word != "if" {
            let name = match rest.first() {
                None => return Err(format!("no macro name given in #{word} directive")),
                Some(t) if t.kind != Kind::Ident => {
                    return Err("macro names must be identifiers".into())
                }
                Some(t) => &t.text,
            };
            let defined = self.macros.defs.contains_key(name);
            return Ok(defined == (word == "ifdef"));
        }
        let toks = self.resolve_defined(rest, place)?;
        let toks = self.macros.expand(toks)?;
        let toks = self.resolve_defined(&toks, place)?;
        cond::evaluate(&toks)
    }

    /// Replace `defined NAME`, `defined (NAME)` and `__has_include (...)` by 1 or 0.
    fn resolve_defined(&self, toks: &[Token], place: &Place) -> Result<Vec<Token>, String> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < toks.len() {
            let t = &toks[i];
            let value = if t.kind == Kind::Ident && t.text == "defined" {
                let paren = toks.get(i + 1).is_some_and(|n| n.is("("));
                let at = if paren { i + 2 } else { i + 1 };
                let name = match toks.get(at) {
                    Some(n) if n.kind == Kind::Ident => n.text.clone(),
                    _ => return Err("operator \"defined\" requires an identifier".into()),
                };
                i = at + 1;
                if paren {
                    if !toks.get(i).is_some_and(|n| n.is(")")) {
                        return Err("missing ')' after \"defined\"".into());
                    }
                    i += 1;
                }
                self.macros.defs.contains_key(&name)
            } else if t.kind == Kind::Ident
                && (t.text == "__has_include" || t.text == "__has_include_next")
            {
                let close = toks[i..].iter().position(|n| n.is(")"));
                let (Some(open), Some(close)) = (toks.get(i + 1), close) else {
                    return Err(format!("missing '(' before \"{}\" operand", t.text));
                };
                if !open.is("(") {
                    return Err(format!("missing '(' before \"{}\" operand", t.text));
                }
                let inner = &toks[i + 2..i + close];
                let next = t.text == "__has_include_next";
                i += close + 1;
                match header_name(inner) {
                    Some((file, quoted)) => self.find(&file, quoted, next, place).is_some(),
                    None => return Err("operator \"__has_include\" requires a header-name".into()),
                }
            } else {
                out.push(t.clone());
                i += 1;
                continue;
            };
            out.push(Token::new(
                Kind::Number,
                if value { "1" } else { "0" },
                t.line,
                t.space,
            ));
        }
        Ok(out)
    }

    /// `#define`: record the macro, or say why not.
    fn define(&mut self, rest: &[Token]) -> Result<(), String> {
        let name = match rest.first() {
            None => return Err("no macro name given in #define directive".into()),
            Some(t) if t.kind != Kind::Ident => {
                return Err("macro names must be identifiers".into())
            }
            Some(t) if t.text == "defined" => {
                return Err("\"defined\" cannot be used as a macro name".into())
            }
            Some(t) => t.text.clone(),
        };
        let mut i = 1;
        let mut params = None;
        let mut variadic = false;
        // A function-like macro's '(' touches its name.
        if rest.get(1).is_some_and(|t| t.is("(") && !t.space) {
            let mut list = Vec::new();
            i = 2;
            loop {
                match rest.get(i) {
                    Some(t) if t.is(")") && list.is_empty() => break,
                    Some(t) if t.is("...") => {
                        variadic = true;
                        list.push("__VA_ARGS__".to_string());
                        i += 1;
                    }
                    Some(t) if t.kind == Kind::Ident => {
                        list.push(t.text.clone());
                        i += 1;
                        // GNU's named variable arguments: `args...`.
                        if rest.get(i).is_some_and(|t| t.is("...")) {
                            variadic = true;
                            i += 1;
                        }
                    }
                    Some(t) => {
                        return Err(format!("expected parameter name, found \"{}\"", t.text))
                    }
                    None => return Err("expected parameter name before end of line".into()),
                }
                match rest.get(i) {
                    Some(t) if t.is(")") => break,
                    Some(t) if t.is(",") && !variadic => i += 1,
                    Some(t) => return Err(format!("expected ',' or ')', found \"{}\"", t.text)),
                    None => return Err("expected ',' or ')', found end of line".into()),
                }
            }
            i += 1;
            params = Some(list);
        }
        let mut body: Vec<Token> = rest.get(i..).unwrap_or_default().to_vec();
        if let Some(first) = body.first_mut() {
            first.space = false;
        }
        if body.first().is_some_and(|t| t.is("##")) || body.last().is_some_and(|t| t.is("##")) {
            return Err("'##' cannot appear at either end of a macro expansion".into());
        }
        if !self.macros.defs.contains_key(&name) {
            self.order.push(name.clone());
        }
        self.macros.defs.insert(
            name,
            Macro {
                params,
                variadic,
                body,
            },
        );
        Ok(())
    }

    /// `#include` and `#include_next`: the included file's text, on one line.
    fn include(
        &mut self,
        name: &str,
        place: &Place,
        line: usize,
        rest: &[Token],
        next: bool,
        depth: usize,
    ) -> String {
        let expanded;
        let rest = if rest.first().is_some_and(|t| t.kind == Kind::Ident) {
            expanded = self.macros.expand(rest.to_vec()).unwrap_or_default();
            &expanded[..]
        } else {
            rest
        };
        let Some((file, quoted)) = header_name(rest) else {
            self.error(name, line, "#include expects \"FILENAME\" or <FILENAME>");
            return String::new();
        };
        if depth + 1 >= MAX_INCLUDE_DEPTH {
            self.error(
                name,
                line,
                &format!("#include nested depth {MAX_INCLUDE_DEPTH} exceeds maximum of {MAX_INCLUDE_DEPTH}"),
            );
            return String::new();
        }
        let Some((path, index)) = self.find(&file, quoted, next, place) else {
            self.errors.push_str(&format!(
                "{name}:{line}: fatal error: {file}: No such file or directory\ncompilation terminated.\n"
            ));
            self.fatal = true;
            return String::new();
        };
        if self.once.contains(&path) {
            return String::new();
        }
        let text = match self.config.read_text(&path) {
            Ok(t) => t,
            Err(e) => {
                self.errors.push_str(&format!(
                    "{name}:{line}: fatal error: {file}: {e}\ncompilation terminated.\n"
                ));
                self.fatal = true;
                return String::new();
            }
        };
        let shown = path.display().to_string();
        if self.config.list_headers {
            self.messages
                .push_str(&format!("{} {shown}\n", ".".repeat(depth + 1)));
        }
        let out = self.file(&shown, &place_of(&path, index), &text, depth + 1);
        flatten(&out)
    }

    /// Where an included file is: quoted, the including file's directory first; then the
    /// `-I` directories and the system's (after the including file's own for
    /// `#include_next`).
    fn find(
        &self,
        file: &str,
        quoted: bool,
        next: bool,
        place: &Place,
    ) -> Option<(PathBuf, Option<usize>)> {
        let path = Path::new(file);
        if path.is_absolute() {
            return path.is_file().then(|| (path.to_path_buf(), None));
        }
        if quoted && !next {
            let p = place.dir.join(file);
            if p.is_file() {
                return Some((p, place.index));
            }
        }
        let dirs = self
            .config
            .include_dirs
            .iter()
            .chain(&self.config.system_dirs);
        let start = match (next, place.index) {
            (true, Some(i)) => i + 1,
            _ => 0,
        };
        dirs.enumerate()
            .skip(start)
            .map(|(i, d)| (d.join(file), Some(i)))
            .find(|(p, _)| p.is_file())
    }
}

/// The file a `#include` names: `"file"` (quoted) or `<file>`.
fn header_name(toks: &[Token]) -> Option<(String, bool)> {
    let first = toks.first()?;
    if first.kind == Kind::Literal && first.text.starts_with('"') && first.text.len() >= 2 {
        return Some((first.text[1..first.text.len() - 1].to_string(), true));
    }
    if first.is("<") {
        let close = toks.iter().position(|t| t.is(">"))?;
        let mut s = String::new();
        for (i, t) in toks[1..close].iter().enumerate() {
            if i > 0 && t.space {
                s.push(' ');
            }
            s.push_str(&t.text);
        }
        return Some((s, false));
    }
    None
}

/// Write newlines until the output is at line `n`.
fn pad_to(out: &mut String, out_line: &mut usize, n: usize) {
    while *out_line < n {
        out.push('\n');
        *out_line += 1;
    }
}

/// An included file's text on one line, but for its control lines (`#pragma`), which keep
/// lines of their own.
fn flatten(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('#') {
            out.push('\n');
            out.push_str(line);
            out.push('\n');
        } else {
            out.push(' ');
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests;

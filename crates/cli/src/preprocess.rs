//! `-C`: a script through the C preprocessor before it is compiled. The built-in one
//! (`dtrace-cpp`) by default; the program `-x cpppath=PATH` names if given, run as DTrace
//! runs `cpp` (its predefined macros as arguments, the script on standard input). `-D`,
//! `-U`, `-I` (`-x define`, `undef`, `incdir`), `-H` (`-x cpphdrs`) and `-x cppargs` (of
//! which the built-in one takes `-D -U -I -H -dM`) shape it. As in DTrace, the
//! preprocessor names the script `/dev/stdin` in its messages.

use std::path::{Path, PathBuf};

use dtrace_cpp::Config;

use crate::args::Args;
use crate::Failure;

/// The macros DTrace hands an external `cpp` (the built-in one predefines them).
const DTRACE_CPP_ARGS: &[&str] = &[
    "-D__linux",
    "-D__unix",
    "-D__SVR4",
    "-D__SUNW_D=1",
    "-U__GNUC__",
    "-D__SUNW_D_64",
    "-D__Linux",
    "-D__amd64",
];

/// Preprocess the script `path` whose text is `text`.
pub fn preprocess(args: &Args, path: &str, text: &str) -> Result<String, Failure> {
    // A script starting with #! keeps its first line (as an empty one) out of the way.
    let body = match text.strip_prefix("#!") {
        Some(rest) => format!("\n{}", rest.split_once('\n').map_or("", |(_, b)| b)),
        None => text.to_string(),
    };
    let failed = |messages: &str| {
        Failure::Message(format!(
            "{messages}dtrace: failed to compile script {path}: Preprocessor failed to process input program\n"
        ))
    };
    let cppargs: Vec<String> = option(args, "cppargs")
        .filter_map(|(_, v)| v.as_deref())
        .flat_map(str::split_whitespace)
        .map(str::to_string)
        .collect();
    if let Some(program) = option(args, "cpppath")
        .filter_map(|(_, v)| v.clone())
        .last()
    {
        return external(args, &program, &cppargs, &body).map_err(|m| failed(&m));
    }
    let mut config = Config::system();
    // D text is bytes: a header's bytes that are not UTF-8 reach the lexer's literals.
    config.decode = Some(dtrace_frontend::raw_bytes::decode);
    config.list_headers = option(args, "cpphdrs").next().is_some();
    config.macros = match stdc_mode(args) {
        // `-Xs` runs `cpp -traditional-cpp`: K&R C, no `__STDC__`.
        "s" => vec![(false, "__STDC__"), (false, "__STDC_VERSION__")],
        // `-Xa` (the default), `-Xc` and `-Xt` run `cpp -std=c99`: strict ISO C, so
        // system headers leave out what is not (glibc's inline functions among them).
        _ => vec![
            (true, "__STRICT_ANSI__=1"),
            (false, "__STDC_VERSION__"),
            (true, "__STDC_VERSION__=199901L"),
        ],
    }
    .into_iter()
    .map(|(d, m)| (d, m.to_string()))
    .collect();
    config
        .macros
        .extend(args.defines.iter().map(|d| (true, d.clone())));
    config
        .macros
        .extend(args.undefines.iter().map(|u| (false, u.clone())));
    config.include_dirs = args.includes.iter().map(PathBuf::from).collect();
    for arg in &cppargs {
        apply_cpp_arg(&mut config, arg).map_err(|m| failed(&m))?;
    }
    let dir = Path::new(path)
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match dtrace_cpp::preprocess("/dev/stdin", dir, &body, &config) {
        Ok(out) => {
            eprint!("{}", out.messages);
            Ok(out.text)
        }
        Err(f) => Err(failed(&f.messages)),
    }
}

/// The `-X` mode (`stdc` option): `a` (the default), `c`, `s` or `t`.
fn stdc_mode(args: &Args) -> &str {
    option(args, "stdc")
        .filter_map(|(_, v)| v.as_deref())
        .last()
        .unwrap_or("a")
}

/// The values given to option `name`, in order.
fn option<'a>(
    args: &'a Args,
    name: &'a str,
) -> impl Iterator<Item = &'a (String, Option<String>)> + 'a {
    args.options.iter().filter(move |(n, _)| n == name)
}

/// One `-x cppargs` word, as the built-in preprocessor takes it.
fn apply_cpp_arg(config: &mut Config, arg: &str) -> Result<(), String> {
    if let Some(d) = arg.strip_prefix("-D").filter(|d| !d.is_empty()) {
        config.macros.push((true, d.to_string()));
    } else if let Some(u) = arg.strip_prefix("-U").filter(|u| !u.is_empty()) {
        config.macros.push((false, u.to_string()));
    } else if let Some(i) = arg.strip_prefix("-I").filter(|i| !i.is_empty()) {
        config.include_dirs.push(PathBuf::from(i));
    } else if arg == "-H" {
        config.list_headers = true;
    } else if arg == "-dM" {
        config.dump_macros = true;
    } else {
        return Err(format!(
            "dtrace: the built-in preprocessor does not take {arg} (-x cppargs takes -D, -U, -I, -H and -dM; -x cpppath runs another)\n"
        ));
    }
    Ok(())
}

/// Run the preprocessor `program` as DTrace runs `cpp`; its output, or what it said.
fn external(args: &Args, program: &str, cppargs: &[String], body: &str) -> Result<String, String> {
    use std::io::Write as _;
    use std::os::unix::process::CommandExt as _;
    let mut cmd = std::process::Command::new(program);
    // As DTrace: the program's own name is its base name.
    cmd.arg0(Path::new(program).file_name().unwrap_or_default());
    cmd.args(DTRACE_CPP_ARGS);
    cmd.args(args.defines.iter().map(|d| format!("-D{d}")));
    cmd.args(args.undefines.iter().map(|u| format!("-U{u}")));
    cmd.args(args.includes.iter().map(|i| format!("-I{i}")));
    if option(args, "cpphdrs").next().is_some() {
        cmd.arg("-H");
    }
    cmd.args(cppargs);
    cmd.arg("-D__SUNW_D_VERSION=0x02000000");
    cmd.arg(match stdc_mode(args) {
        "s" => "-traditional-cpp",
        _ => "-std=c99",
    });
    cmd.arg("/dev/stdin");
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit());
    let mut child = cmd.spawn().map_err(|e| {
        format!(
            "dtrace: failed to run {program}: {}\n",
            crate::errno_text(&e)
        )
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        // A preprocessor that stops reading early says why on its own.
        let _ = stdin.write_all(body.as_bytes());
    }
    let out = child
        .wait_with_output()
        .map_err(|e| format!("dtrace: {program} failed: {}\n", crate::errno_text(&e)))?;
    if !out.status.success() {
        return Err(String::new());
    }
    // Headers it included may hold bytes that are not UTF-8, which D takes as they are.
    Ok(dtrace_frontend::raw_bytes::decode(out.stdout))
}

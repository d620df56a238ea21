//! The command line, parsed getopt-style as dtrace(1) does on Linux (GNU getopt): flags may
//! be grouped (`-qn`), program sources (`-n -s -P -m -f -i`) keep their order, and options
//! may follow operands (`-i 12 10 -i 23` has the one operand `10`) until `--`; operands, in
//! order, become the macro arguments `$1 $2 ...`.
//!
//! Hand-written rather than clap: DTrace's interleaved, order-preserving options and its
//! exact usage errors do not fit a declarative parser.

/// One program source, in command-line order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProgramSource {
    /// `-n`: a probe description, optionally with predicate and actions.
    Description(String),
    /// `-s`: a script file.
    Script(String),
    /// `-P -m -f -i`: a provider, module, function or probe id to enable or list.
    Provider(String),
    Module(String),
    Function(String),
    Id(String),
}

#[derive(Clone, Debug, Default)]
pub struct Args {
    pub sources: Vec<ProgramSource>,
    pub quiet: bool,
    pub list: bool,
    pub compile_only: bool,
    pub disassemble: bool,
    pub verbose: bool,
    pub version: bool,
    pub destructive: bool,
    pub zero_matches_ok: bool,
    pub cpp: bool,
    pub header: bool,
    pub object: bool,
    pub options: Vec<(String, Option<String>)>,
    pub output: Option<String>,
    pub commands: Vec<String>,
    pub pids: Vec<String>,
    pub defines: Vec<String>,
    pub undefines: Vec<String>,
    pub includes: Vec<String>,
    pub operands: Vec<String>,
    /// `-a` or `-A`, which ask for anonymous tracing (refused: see [`ANONYMOUS`]).
    pub anonymous: Option<char>,
}

/// Why anonymous tracing (`-a`, `-A`, `-x grabanon`) is refused.
pub const ANONYMOUS: &str = "anonymous tracing is not available on Linux: there is no \
DTrace driver to hold an enabling made at boot (-A) for a later dtrace to claim (-a)";

/// Options that take an argument.
const WITH_ARG: &[u8] = b"nsPmfixoCcpDUIbLX";

impl Args {
    /// Apply the `-x` options that stand for flags: `zdefs` (`-Z`), `cpp` (`-C`),
    /// `define` (`-D`), `undef` (`-U`), `incdir` (`-I`).
    pub fn fold_options(&mut self) {
        for (name, value) in &self.options {
            let value = || value.clone().unwrap_or_default();
            match name.as_str() {
                "zdefs" => self.zero_matches_ok = true,
                "cpp" => self.cpp = true,
                "define" => self.defines.push(value()),
                "undef" => self.undefines.push(value()),
                "incdir" => self.includes.push(value()),
                _ => {}
            }
        }
    }
}

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut args = Args::default();
    let mut i = 0;
    while i < argv.len() {
        let arg = &argv[i];
        i += 1;
        if arg == "--" {
            args.operands.extend(argv[i..].iter().cloned());
            break;
        }
        if !arg.starts_with('-') || arg == "-" {
            args.operands.push(arg.clone());
            continue;
        }
        // The data model: LP64, the only one there is here.
        if arg == "-64" {
            continue;
        }
        if arg == "-32" {
            return Err(
                "-32: the ILP32 data model is not supported (x86-64 processes are LP64)".into(),
            );
        }
        let flags = arg.as_bytes();
        let mut j = 1;
        while j < flags.len() {
            let flag = flags[j];
            j += 1;
            let takes_arg = WITH_ARG.contains(&flag) && flag != b'C';
            let value = if takes_arg {
                let v = if j < flags.len() {
                    String::from_utf8_lossy(&flags[j..]).into_owned()
                } else if i < argv.len() {
                    i += 1;
                    argv[i - 1].clone()
                } else {
                    return Err(format!("option requires an argument -- '{}'", flag as char));
                };
                j = flags.len();
                v
            } else {
                String::new()
            };
            match flag {
                b'n' => args.sources.push(ProgramSource::Description(value)),
                b's' => args.sources.push(ProgramSource::Script(value)),
                b'P' => args.sources.push(ProgramSource::Provider(value)),
                b'm' => args.sources.push(ProgramSource::Module(value)),
                b'f' => args.sources.push(ProgramSource::Function(value)),
                b'i' => args.sources.push(ProgramSource::Id(value)),
                b'x' => {
                    let (name, v) = match value.split_once('=') {
                        Some((n, v)) => (n.to_string(), Some(v.to_string())),
                        None => (value, None),
                    };
                    args.options.push((name, v));
                }
                b'b' => args.options.push(("bufsize".into(), Some(value))),
                b'X' => args.options.push(("stdc".into(), Some(value))),
                b'L' => args.options.push(("libdir".into(), Some(value))),
                b'o' => args.output = Some(value),
                b'c' => args.commands.push(value),
                b'p' => args.pids.push(value),
                b'D' => args.defines.push(value),
                b'U' => args.undefines.push(value),
                b'I' => args.includes.push(value),
                b'q' => args.quiet = true,
                b'l' => args.list = true,
                b'e' => args.compile_only = true,
                b'S' => args.disassemble = true,
                b'v' => args.verbose = true,
                b'V' => args.version = true,
                b'w' => args.destructive = true,
                b'Z' => args.zero_matches_ok = true,
                b'C' => args.cpp = true,
                b'h' => args.header = true,
                b'G' => args.object = true,
                b'F' => args.options.push(("flowindent".into(), None)),
                b'H' => args.options.push(("cpphdrs".into(), None)),
                b'a' | b'A' => args.anonymous = Some(flag as char),
                other => return Err(format!("invalid option -- '{}'", other as char)),
            }
        }
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn data_model_flags() {
        let a = parse(&argv(&["-64", "-G", "-s", "p.d"])).unwrap();
        assert!(a.object);
        assert!(parse(&argv(&["-32", "-n", "BEGIN"]))
            .unwrap_err()
            .contains("ILP32"));
    }

    #[test]
    fn grouped_flags_and_order() {
        let a = parse(&argv(&[
            "-qn",
            "BEGIN",
            "-s",
            "x.d",
            "-xstrsize=32",
            "a",
            "-q",
            "b",
            "--",
            "-c",
        ]))
        .unwrap();
        assert!(a.quiet);
        assert_eq!(
            a.sources,
            vec![
                ProgramSource::Description("BEGIN".into()),
                ProgramSource::Script("x.d".into())
            ]
        );
        assert_eq!(a.options, vec![("strsize".into(), Some("32".into()))]);
        assert_eq!(a.operands, argv(&["a", "b", "-c"]));
    }

    #[test]
    fn missing_argument() {
        assert!(parse(&argv(&["-n"])).is_err());
        assert!(parse(&argv(&["-k"])).is_err());
    }
}

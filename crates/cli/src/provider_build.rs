//! `dtrace -h` and `dtrace -G`: building a C program's USDT probes the DTrace way. The
//! `-s` provider files are parsed like any D program, then the `dtrace-sdt` crate writes
//! the header (`-h`) or the link's object (`-G`, rewriting the program's objects given as
//! operands where they call DTrace's probe functions). Default output names follow
//! DTrace: the first script's basename with `.h` or `.o`, in the current directory.
//! `-x ldpath=LD` has the named linker make the object (`LD -r`) from the one written.

use std::path::{Path, PathBuf};

use crate::args::{Args, ProgramSource};
use crate::compile::{self, Failure};

/// Run `-h` or `-G`; the exit status.
pub fn run(args: &Args, errtags: bool) -> i32 {
    let flag = if args.header { "-h" } else { "-G" };
    let scripts: Vec<&str> = args
        .sources
        .iter()
        .filter_map(|s| match s {
            ProgramSource::Script(p) => Some(p.as_str()),
            _ => None,
        })
        .collect();
    if args.sources.is_empty() {
        eprintln!("dtrace: {flag} requires one or more scripts or enabling options");
        return 2;
    }
    let output = match (&args.output, scripts.first()) {
        (Some(o), _) => PathBuf::from(o),
        (None, Some(s)) if s.ends_with(".d") && scripts.len() == 1 => {
            let base = Path::new(s.trim_end_matches(".d"))
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            PathBuf::from(format!("{base}.{}", if args.header { "h" } else { "o" }))
        }
        (None, _) if args.header => {
            eprintln!("dtrace: -h requires an output file if no single script is specified");
            return 2;
        }
        (None, _) => PathBuf::from("d.out"),
    };
    let providers = match providers(args) {
        Ok(p) => p,
        Err(f) => return crate::report(f, errtags, args.verbose),
    };
    let script = scripts.first().copied().unwrap_or("program");
    if args.header {
        let text = dtrace_sdt::header::header(&providers, output.to_str());
        if let Err(e) = std::fs::write(&output, text) {
            eprintln!(
                "dtrace: failed to create header file {}: {}",
                output.display(),
                crate::errno_text(&e)
            );
            return 1;
        }
        return 0;
    }
    let objects: Vec<PathBuf> = args.operands.iter().map(PathBuf::from).collect();
    let is_32 = match dtrace_sdt::link::data_model(&objects) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("dtrace: {e}");
            return 1;
        }
    };
    // As DTrace: the script is named without its `.d` here.
    let script = script.strip_suffix(".d").unwrap_or(script);
    let linker = args
        .options
        .iter()
        .rev()
        .filter(|(n, _)| n == "ldpath")
        .find_map(|(_, v)| v.as_deref());
    let made = match linker {
        None => dtrace_sdt::link::link(&providers, &objects, &output, is_32).map(drop),
        Some(ld) => through_linker(ld, &output, |tmp| {
            dtrace_sdt::link::link(&providers, &objects, tmp, is_32).map(drop)
        }),
    };
    match made {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("dtrace: failed to link script {script}: {e}");
            1
        }
    }
}

/// `-x ldpath=LD`: the object is written beside `output`, then `LD -o OUTPUT -r OBJECT`
/// makes `output` from it, run by the shell as DTrace runs its linker (so `LD` may carry
/// arguments of its own).
fn through_linker(
    ld: &str,
    output: &Path,
    write: impl FnOnce(&Path) -> Result<(), String>,
) -> Result<(), String> {
    let mut tmp = output.as_os_str().to_owned();
    tmp.push(format!(".{}.tmp", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let linked = write(&tmp).and_then(|()| {
        let status = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(format!("{ld} -o \"$1\" -r \"$2\""))
            .arg("sh")
            .arg(output)
            .arg(&tmp)
            .status()
            .map_err(|e| format!("failed to run {ld}: {}", crate::errno_text(&e)))?;
        let file = output.display();
        match (
            status.code(),
            std::os::unix::process::ExitStatusExt::signal(&status),
        ) {
            (Some(0), _) => Ok(()),
            (Some(code), _) => Err(format!(
                "failed to link {file}: {ld} exited with status {code}"
            )),
            (None, signal) => Err(format!(
                "failed to link {file}: {ld} failed due to signal {}",
                signal.unwrap_or(0)
            )),
        }
    });
    let _ = std::fs::remove_file(&tmp);
    linked
}

/// The providers the program's sources define.
fn providers(args: &Args) -> Result<Vec<dtrace_sdt::ProviderDef>, Failure> {
    let sources = compile::read_sources(args)?;
    let items = compile::parse_all(&sources, false)?;
    let user: Vec<_> = items.into_iter().take(sources.len()).flatten().collect();
    Ok(dtrace_sdt::providers(&user))
}

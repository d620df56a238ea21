//! Control lines: `#pragma D ...` becomes a [`Pragma`] item; `#line`/`# N "file"`, `#ident`
//! and non-D pragmas are checked and dropped; `#error` and unknown directives are errors.

use crate::ast::Pragma;
use crate::error::{CompileError, Result};
use crate::lexer::{ControlLine, ControlWord, ControlWordKind};

/// Interprets one control line as DTrace does, returning the pragma to keep, if any.
pub fn interpret(line: &ControlLine) -> Result<Option<Pragma>> {
    let words = &line.words[..];
    let (directive, rest, d_pragma) = match words {
        [] => return Ok(None),
        [first, rest @ ..] if first.kind != ControlWordKind::Word => {
            return match first.kind {
                ControlWordKind::Int => check_line("line", words, line).map(|()| None),
                _ => Err(error(
                    "D_PRAGCTL_INVAL",
                    "invalid control directive".into(),
                    line,
                )),
            };
        }
        [pragma, d, name, rest @ ..] if pragma.text == "pragma" && d.text == "D" => {
            (name, rest, true)
        }
        [pragma, d] if pragma.text == "pragma" && d.text == "D" => return Ok(None),
        [pragma, name, rest @ ..] if pragma.text == "pragma" => (name, rest, false),
        [pragma] if pragma.text == "pragma" => return Ok(None),
        [name, rest @ ..] => (name, rest, false),
    };
    let in_pragma = d_pragma || words[0].text == "pragma";
    match directive.text.as_str() {
        "error" => {
            let text: String = rest
                .iter()
                .filter(|w| w.kind != ControlWordKind::Int)
                .map(|w| format!("{} ", w.text.trim_matches('"')))
                .collect();
            Err(error("D_PRAGERR", format!("#error: {text}"), line))
        }
        "ident" => Ok(None),
        "line" => check_line("line", rest, line).map(|()| None),
        name @ ("attributes" | "binding" | "depends_on" | "option") if d_pragma => {
            check_d_pragma(name, rest, line)?;
            Ok(Some(Pragma {
                words: words[1..].iter().map(|w| w.text.clone()).collect(),
                span: line.span,
            }))
        }
        // Unknown non-D pragmas are ignored, as in C.
        _ if in_pragma && !d_pragma => Ok(None),
        name if d_pragma => Err(error(
            "D_PRAGMA_INVAL",
            format!("invalid D pragma: {name}"),
            line,
        )),
        name => Err(error(
            "D_PRAGCTL_INVAL",
            format!("invalid control directive: #{name}"),
            line,
        )),
    }
}

fn error(tag: &'static str, message: String, line: &ControlLine) -> CompileError {
    CompileError::new(tag, message, line.span)
}

/// `#line N ["file" [state...]]` and cpp's `# N "file" flags...`.
fn check_line(name: &str, args: &[ControlWord], line: &ControlLine) -> Result<()> {
    use ControlWordKind::*;
    let well_formed = match args {
        [n, rest @ ..] if n.kind == Int => match rest {
            [] => true,
            [file, states @ ..] => file.kind == Str && states.iter().all(|w| w.kind == Int),
        },
        _ => false,
    };
    if well_formed {
        Ok(())
    } else {
        Err(error(
            "D_PRAGMA_MALFORM",
            format!("malformed #{name} <line> [ [\"file\"] state ]"),
            line,
        ))
    }
}

fn check_d_pragma(name: &str, args: &[ControlWord], line: &ControlLine) -> Result<()> {
    use ControlWordKind::*;
    let is = |w: &ControlWord, k| w.kind == k;
    let (ok, usage) = match name {
        "option" => {
            if args.len() > 1 && is(&args[0], Word) {
                return Err(error(
                    "D_PRAGMA_MALFORM",
                    format!("superfluous arguments specified for #pragma {name}"),
                    line,
                ));
            }
            (args.len() == 1 && is(&args[0], Word), "<option>=<val>")
        }
        "depends_on" => (
            args.len() >= 2 && is(&args[0], Word) && is(&args[1], Word),
            "<class> <name>",
        ),
        "attributes" => (
            args.len() >= 2 && is(&args[0], Word) && is(&args[1], Word),
            "<attributes> <ident>",
        ),
        _ => (
            args.len() >= 2 && is(&args[0], Str) && is(&args[1], Word),
            "\"version\" <ident>",
        ),
    };
    if ok && name == "attributes" {
        return check_attributes(&args[0].text, &args[1].text, line);
    }
    if ok
        && name == "depends_on"
        && !matches!(args[0].text.as_str(), "provider" | "module" | "library")
    {
        return Err(error(
            "D_PRAGMA_INVAL",
            format!("invalid class {} specified by #pragma {name}", args[0].text),
            line,
        ));
    }
    if ok {
        Ok(())
    } else {
        Err(error(
            "D_PRAGMA_MALFORM",
            format!("malformed #pragma {name} {usage}"),
            line,
        ))
    }
}

/// `#pragma D attributes NAME/DATA/CLASS ident`: the attributes must parse (each part
/// optional after the first, names case-insensitive), and the ident must name something.
/// Identifiers are not resolved here, so only a word that cannot be an identifier is unused.
fn check_attributes(attrs: &str, ident: &str, line: &ControlLine) -> Result<()> {
    const STABILITY: &[&str] = &[
        "internal", "private", "obsolete", "external", "unstable", "evolving", "stable", "standard",
    ];
    const CLASS: &[&str] = &["unknown", "cpu", "platform", "group", "isa", "common"];
    let parts: Vec<String> = attrs
        .split('/')
        .filter(|p| !p.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let valid = !parts.is_empty()
        && parts.len() <= 3
        && parts
            .iter()
            .enumerate()
            .all(|(i, p)| if i < 2 { STABILITY } else { CLASS }.contains(&p.as_str()));
    if !valid {
        return Err(error(
            "D_PRAGMA_INVAL",
            "invalid attributes specified by #pragma attributes".into(),
            line,
        ));
    }
    let is_ident = ident != "provider"
        && ident
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '`')
        && ident
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '`');
    if !is_ident && ident != "provider" {
        return Err(error(
            "D_PRAGMA_UNUSED",
            "unused #pragma attributes".into(),
            line,
        ));
    }
    Ok(())
}

//! Compile errors: a D error tag (`D_SYNTAX`, ...), a message and where it happened.

use crate::span::Span;

/// A D compile error. `tag` is DTrace's error tag name, e.g. `"D_SYNTAX"`; `message` is the
/// text DTrace prints after the location (`syntax error near "}"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    pub tag: &'static str,
    pub message: String,
    pub span: Option<Span>,
}

impl CompileError {
    pub fn new(tag: &'static str, message: impl Into<String>, span: Span) -> CompileError {
        CompileError {
            tag,
            message: message.into(),
            span: Some(span),
        }
    }
    /// An error that belongs to no place in the source (options, probe matching).
    pub fn unplaced(tag: &'static str, message: impl Into<String>) -> CompileError {
        CompileError {
            tag,
            message: message.into(),
            span: None,
        }
    }
}

pub type Result<T> = std::result::Result<T, CompileError>;

/// Text standing for the line number of `span` inside an error message (DTrace names a
/// second place in some messages: `previous: @a = count( ) : line 6`).  The message's
/// printer replaces it with the number; see [`expand_line_markers`].
pub fn line_marker(span: Span) -> String {
    format!("\u{1}{}:{}\u{1}", span.source, span.start)
}

/// Replace every [`line_marker`] in `message` by the line it names in `sources`.
pub fn expand_line_markers(message: &str, sources: &[crate::span::Source]) -> String {
    let mut out = String::new();
    let mut parts = message.split('\u{1}');
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    let mut marker = true;
    for part in parts {
        if marker {
            let line = part.split_once(':').and_then(|(s, o)| {
                let source = sources.get(s.parse::<usize>().ok()?)?;
                Some(source.line_col(o.parse().ok()?).0)
            });
            out.push_str(&line.map_or_else(|| part.to_string(), |l| l.to_string()));
        } else {
            out.push_str(part);
        }
        marker = !marker;
    }
    out
}

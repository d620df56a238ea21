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

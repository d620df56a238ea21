//! D front end: lexer, parser (spanned AST) and compile errors with D error tags.

pub mod ast;
pub mod error;
pub mod lexer;
mod literal;
mod parser;
mod pragma;
pub mod raw_bytes;
pub mod span;
pub mod token;

#[cfg(test)]
mod tests;

pub use error::{expand_line_markers, line_marker, CompileError, Result};
pub use literal::unescape;
pub use parser::{parse, parse_with, Settings, MAX_EXPR_HEIGHT};
pub use span::{Origin, Source, Span};

//! String subroutines beyond `strlen`/`strjoin`: `substr index rindex strstr strchr strrchr
//! toupper tolower lltostr basename dirname ...`.

use dtrace_frontend::ast::Expr;
use dtrace_frontend::{Result, Span};

use super::{Gen, Val};

/// Names handled here.
const NAMES: &[&str] = &[];

pub(crate) fn is_string_subroutine(name: &str) -> bool {
    NAMES.contains(&name)
}

impl Gen<'_, '_> {
    /// Compile a call of one of [`NAMES`].
    pub(crate) fn string_subroutine(
        &mut self,
        name: &str,
        args: &[Expr],
        span: Span,
    ) -> Result<Val> {
        let _ = (name, args);
        Err(super::expr::unsupported(name, span))
    }
}

//! The compile-time check of `printf`/`printa` formats against their arguments' types,
//! which the caller provides (it knows DTrace's conversions: the consumer formats them).

use crate::types::Type;

/// An argument of a printf-style action, as the format check sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FormatArg {
    /// A value of this type (`void` for an action used as a value).
    Value(Type),
    /// A bare aggregation reference (`@a`), which no conversion accepts.
    Aggregation,
    /// A stack (`stack()`, `ustack()`, `jstack()` as a printa key): only `%k` takes it.
    Stack,
}

impl std::fmt::Display for FormatArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FormatArg::Value(t) => write!(f, "{t}"),
            FormatArg::Aggregation => write!(f, "aggregation"),
            FormatArg::Stack => write!(f, "stack"),
        }
    }
}

/// Checks a printf-style format against its argument types, at compile time.
pub trait FormatCheck {
    /// `Err((tag, message))` when the format of action `func` (`printf`, `printa`,
    /// `system`, `freopen`: the name its messages give) is malformed or an argument does
    /// not fit; `printa`'s arguments are the aggregation's keys.
    fn check(
        &self,
        format: &[u8],
        args: &[Type],
        func: &str,
    ) -> std::result::Result<(), (&'static str, String)>;

    /// The arguments (0-based, after the format; `*` ones count) that a conversion of `format` takes
    /// as an array of wide characters (`%ls`, `%ws`): recorded whole, not as the address
    /// an array otherwise stands for. None by default.
    fn wide_strings(&self, _format: &[u8]) -> Vec<usize> {
        Vec::new()
    }

    /// [`FormatCheck::check`] for arguments that may also be aggregations; by default an
    /// aggregation is checked as `void`, which no conversion accepts either.
    fn check_args(
        &self,
        format: &[u8],
        args: &[FormatArg],
        func: &str,
    ) -> std::result::Result<(), (&'static str, String)> {
        let types: Vec<Type> = args
            .iter()
            .map(|a| match a {
                FormatArg::Value(t) => t.clone(),
                FormatArg::Aggregation | FormatArg::Stack => Type::Void,
            })
            .collect();
        self.check(format, &types, func)
    }
}

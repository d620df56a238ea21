//! Compile-time checking of `printf`/`printa` formats against argument types, with the
//! consumer's format parser (the one that later renders them), worded and tagged as DTrace
//! words its checks (`D_PRINTF_ARG_TYPE`, `D_PRINTF_ARG_PROTO`, ...).

use dtrace_backend::types::Type;
use dtrace_consumer::printf::{self, ArgKind, ArgRole, Conversion, Count, Length};
use dtrace_typing::format::FormatArg;
use dtrace_typing::format::FormatCheck;

pub struct PrintfCheck;

/// A conversion's name as DTrace spells it: length modifiers then the letter (`lld`).
fn name(c: &Conversion) -> String {
    let length = match c.length {
        None => "",
        Some(Length::Char) => "hh",
        Some(Length::Short) => "h",
        Some(Length::Long) => "l",
        Some(Length::LongLong) => "ll",
        Some(Length::LongDouble) => "L",
        Some(Length::Size) => "z",
        Some(Length::IntMax) => "j",
        Some(Length::PtrDiff) => "t",
        Some(Length::Wide) => "w",
    };
    format!("{length}{}", c.spec)
}

/// What the conversion accepts, as DTrace describes it, and whether `arg` fits (an
/// aggregation or a `void` action result fits nothing).
fn prototype(c: &Conversion, arg: &FormatArg) -> (&'static str, bool) {
    let ty = match arg {
        FormatArg::Value(ty) => ty,
        FormatArg::Aggregation | FormatArg::Stack => &Type::Void,
    };
    let int = ty.is_integer();
    let wide = Some(Length::Long) == c.length || Some(Length::Wide) == c.length;
    let (text, fits) = match (c.length, c.spec) {
        // An array of 32-bit integers: the wide characters themselves.
        (_, 's') if wide => ("wchar_t []", is_wide_string(ty)),
        (_, 'c') if wide => ("int", int && ty.scalar_size() <= 4),
        (_, 's' | 'S') => ("char [] or string (or use stringof)", ty.is_string()),
        (_, 'c' | 'C') => ("char, short, or int", int && ty.scalar_size() <= 4),
        (_, 'p') => ("pointer or integer", ty.is_scalar()),
        (_, 'e' | 'E' | 'f' | 'g' | 'G') => ("float, double, or long double", ty.is_float()),
        (Some(Length::Short), 'd' | 'i' | 'x' | 'X') => ("short", int),
        (Some(Length::Short), 'o' | 'u') => ("unsigned short", int),
        (Some(Length::Long), 'd' | 'i' | 'x' | 'X') => ("long", int),
        (Some(Length::Long), 'o' | 'u') => ("unsigned long", int),
        (Some(Length::LongLong), 'd' | 'i' | 'x' | 'X') => ("long long", int),
        (Some(Length::LongLong), 'o' | 'u') => ("unsigned long long", int),
        _ => ("char, short, int, long, or long long", ty.is_scalar()),
    };
    match arg {
        FormatArg::Stack => (text, c.spec == 'k'),
        _ => (text, fits),
    }
}

/// Whether `ty` is what `%ls` takes: an array of 32-bit integers.
fn is_wide_string(ty: &Type) -> bool {
    matches!(ty, Type::Array(elem, _) if matches!(**elem, Type::Int { size: 4, .. }))
}

impl FormatCheck for PrintfCheck {
    fn check(
        &self,
        format: &[u8],
        args: &[Type],
        func: &str,
    ) -> Result<(), (&'static str, String)> {
        let args: Vec<FormatArg> = args.iter().cloned().map(FormatArg::Value).collect();
        self.check_args(format, &args, func)
    }

    fn wide_strings(&self, format: &[u8]) -> Vec<usize> {
        let Ok(parsed) = printf::parse(format) else {
            return Vec::new();
        };
        // Widths and precisions taken from `*` arguments are arguments too.
        let args = parsed.args();
        let wide = |a: &printf::Arg| a.role == ArgRole::Value && a.kind == ArgKind::WideString;
        (0..args.len()).filter(|&i| wide(&args[i])).collect()
    }

    fn check_args(
        &self,
        format: &[u8],
        args: &[FormatArg],
        func: &str,
    ) -> Result<(), (&'static str, String)> {
        let printa = func == "printa";
        if format.is_empty() {
            return Err((
                "D_PRINTF_FMT_EMPTY",
                format!("{func}( ) format string is empty"),
            ));
        }
        let parsed = printf::parse(format).map_err(|e| ("D_SYNTAX", e.to_string()))?;
        // printa's values are the aggregation keys; its %@ takes the aggregation's value.
        // The format itself is argument #1 in DTrace's numbering.
        let mut args = args.iter();
        let mut used = 0;
        for c in parsed.conversions() {
            if c.spec == '%' {
                continue;
            }
            let dynamic = [
                (c.width == Count::Star, "*"),
                (c.precision == Count::Star, ".*"),
            ];
            for (is_star, star) in dynamic {
                if !is_star {
                    continue;
                }
                let Some(ty) = args.next() else {
                    return Err((
                        "D_PRINTF_DYN_PROTO",
                        format!(
                            "{func}( ) prototype mismatch: conversion #{} (%{}) is missing a corresponding \"{star}\" argument",
                            c.number,
                            name(c)
                        ),
                    ));
                };
                used += 1;
                if !matches!(ty, FormatArg::Value(t) if t.is_integer()) {
                    return Err((
                        "D_PRINTF_DYN_TYPE",
                        format!(
                            "{func}( ) argument #{} is incompatible with conversion #{} prototype:\n\tconversion: % {star} {}\n\t prototype: int\n\t  argument: {ty}",
                            used + 1,
                            c.number,
                            name(c)
                        ),
                    ));
                }
            }
            if c.aggregation {
                if !printa {
                    return Err((
                        "D_PRINTF_AGG_CONV",
                        format!("%@ conversion requires an aggregation and is not for use with {func}( )"),
                    ));
                }
                continue;
            }
            let Some(ty) = args.next() else {
                return Err((
                    "D_PRINTF_ARG_PROTO",
                    format!(
                        "{func}( ) prototype mismatch: conversion #{} (%{}) is missing a corresponding value argument",
                        c.number,
                        name(c)
                    ),
                ));
            };
            used += 1;
            let (proto, fits) = prototype(c, ty);
            if !fits {
                return Err((
                    "D_PRINTF_ARG_TYPE",
                    format!(
                        "{func}( ) argument #{} is incompatible with conversion #{} prototype:\n\tconversion: %{}\n\t prototype: {proto}\n\t  argument: {ty}",
                        used + 1,
                        c.number,
                        name(c)
                    ),
                ));
            }
        }
        if !printa && args.next().is_some() {
            return Err((
                "D_PRINTF_ARG_EXTRA",
                format!("{func}( ) prototype mismatch: only {used} arguments required by this format string"),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtrace_backend::types;

    fn check(fmt: &str, args: &[Type]) -> Result<(), (&'static str, String)> {
        PrintfCheck.check(fmt.as_bytes(), args, "printf")
    }

    #[test]
    fn dtrace_wording() {
        assert_eq!(
            check("%d\n", &[Type::String]).unwrap_err(),
            (
                "D_PRINTF_ARG_TYPE",
                "printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %d\n\t prototype: char, short, int, long, or long long\n\t  argument: string".to_string()
            )
        );
        assert_eq!(
            check("%s", &[]).unwrap_err().1,
            "printf( ) prototype mismatch: conversion #1 (%s) is missing a corresponding value argument"
        );
        assert_eq!(
            check("%d", &[types::INT, types::INT]).unwrap_err().1,
            "printf( ) prototype mismatch: only 1 arguments required by this format string"
        );
        assert_eq!(check("%Z", &[types::INT]).unwrap_err().0, "D_SYNTAX");
        assert_eq!(check("", &[]).unwrap_err().0, "D_PRINTF_FMT_EMPTY");
        assert!(check("%*d %s %%", &[types::INT, types::LONG, Type::String]).is_ok());
        assert_eq!(check("%@d", &[]).unwrap_err().0, "D_PRINTF_AGG_CONV");
    }
}

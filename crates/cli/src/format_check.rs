//! Compile-time checking of `printf`/`printa` formats against argument types, with the
//! consumer's format parser (the one that later renders them).

use dtrace_backend::types::Type;
use dtrace_backend::FormatCheck;
use dtrace_consumer::printf::{self, ArgKind, ArgRole};

pub struct PrintfCheck;

fn kind_name(kind: ArgKind) -> &'static str {
    match kind {
        ArgKind::Integer | ArgKind::Char => "integer",
        ArgKind::Pointer => "pointer",
        ArgKind::String => "char [] or string",
        ArgKind::Float => "float",
    }
}

impl FormatCheck for PrintfCheck {
    fn check(
        &self,
        format: &str,
        args: &[Type],
        printa: bool,
    ) -> Result<(), (&'static str, String)> {
        let parsed = printf::parse(format).map_err(|e| ("D_PRINTF_FMT", e.to_string()))?;
        // printa's %@ conversions take the aggregation value, the rest take the keys.
        let wanted: Vec<_> = parsed
            .args()
            .into_iter()
            .filter(|a| !(printa && parsed_is_aggregation(&parsed, a.conversion)))
            .collect();
        let action = if printa { "printa" } else { "printf" };
        if !printa && wanted.len() > args.len() {
            return Err((
                "D_PRINTF_ARG_PROTO",
                format!("{action}( ) prototype mismatch: conversion #{} is missing a corresponding value argument", wanted[args.len()].conversion),
            ));
        }
        if !printa && wanted.len() < args.len() {
            return Err((
                "D_PRINTF_ARG_EXTRA",
                format!("{action}( ) prototype mismatch: only {} arguments required by this format string", wanted.len()),
            ));
        }
        for (i, (want, ty)) in wanted.iter().zip(args).enumerate() {
            let fits = match want.kind {
                ArgKind::String => ty.is_string(),
                ArgKind::Float => false,
                _ => ty.is_scalar(),
            };
            if !fits || (want.role != ArgRole::Value && !ty.is_integer()) {
                return Err((
                    "D_PRINTF_ARG_TYPE",
                    format!(
                        "{action}( ) argument #{} is incompatible with conversion #{} prototype:\n\tconversion: %{}\n\t prototype: {}\n\t  argument: {ty}",
                        i + 2,
                        want.conversion,
                        conversion_text(&parsed, want.conversion),
                        kind_name(want.kind)
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn parsed_is_aggregation(format: &printf::Format, number: usize) -> bool {
    format
        .conversions()
        .any(|c| c.number == number && c.aggregation)
}

fn conversion_text(format: &printf::Format, number: usize) -> String {
    format
        .conversions()
        .find(|c| c.number == number)
        .map(|c| c.spec.to_string())
        .unwrap_or_default()
}

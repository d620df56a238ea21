//! Printing aggregations: DTrace's default layout (used at exit and by
//! `printa()` without a format) and `printa()` with a format.
//!
//! Default layout, one line per key: each key column (integers right-aligned
//! in 3, 5, 8 or 16 columns by size, printed as `unsigned char`, `unsigned
//! short`, `int` and `long long`; strings two spaces then left-justified in
//! 50 columns), then the value (` %16lld`; stddev ` %16llu`; histograms as a
//! table starting on the next line), each CPU's value on lines of its own under
//! `aggpercpu`, then a newline.  No blank lines
//! separate aggregations; histograms bring their own (the table starts with
//! one, and the row's newline follows its last line).

use std::borrow::Cow;

use super::folded::{folded, has_stack_key};
use super::sort::{bundles, Bundle};
use super::{histogram, slot_count, AggFunc, Aggregation, SortOptions};
use crate::printf::Format;
use crate::Value;
use dtrace_abi::slots;

/// Text gathered before [`write_exit`] hands it on, in bytes.
const PIECE: usize = 64 << 10;

/// Everything printed when tracing ends: dtrace(1)'s newline, then every
/// aggregation not already printed by `printa()`, in the given order (that
/// of first use; reversed with `aggsortrev`), each in the default layout. Bytes:
/// string keys print as they are, UTF-8 or not.
pub fn render_exit(aggs: &[Aggregation], opts: &SortOptions, stacks: StackFormat) -> Vec<u8> {
    let mut all = Vec::new();
    write_exit(aggs, opts, stacks, &mut |piece| {
        all.extend_from_slice(piece)
    });
    all
}

/// [`render_exit`]'s text handed to `write` in pieces of about [`PIECE`] bytes as it is
/// made, not kept whole: a million rows print without a copy of their text.
pub fn write_exit(
    aggs: &[Aggregation],
    opts: &SortOptions,
    stacks: StackFormat,
    write: &mut dyn FnMut(&[u8]),
) {
    let mut out = b"\n".to_vec();
    let mut order: Vec<&Aggregation> = aggs.iter().filter(|a| !a.printed).collect();
    if opts.reverse {
        order.reverse();
    }
    let mut piece = |out: &mut Vec<u8>| {
        if out.len() >= PIECE {
            write(out);
            out.clear();
        }
    };
    for agg in order {
        rows(&mut out, &[agg], opts, stacks, &mut piece);
    }
    write(&out);
}

/// How the default layout shows an aggregation keyed by a stack (`stackformat`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackFormat {
    /// DTrace's: the stack's frames on lines of their own, indented by `indent` columns
    /// (`stackindent`), then the value.
    Lines { indent: usize },
    /// Folded stacks, for flame graphs (see [`super::folded`]).
    Folded,
}

impl Default for StackFormat {
    fn default() -> StackFormat {
        StackFormat::Lines {
            indent: crate::trace::STACK_INDENT,
        }
    }
}

impl StackFormat {
    /// Lines indented by `indent` columns; folded stacks stay folded.
    pub fn indented(self, indent: usize) -> StackFormat {
        match self {
            StackFormat::Lines { .. } => StackFormat::Lines { indent },
            StackFormat::Folded => StackFormat::Folded,
        }
    }

    /// The columns stack keys printed as lines are indented by.
    fn indent(self) -> usize {
        match self {
            StackFormat::Lines { indent } => indent,
            StackFormat::Folded => crate::trace::STACK_INDENT,
        }
    }
}

/// The rows of `aggs` in the default layout, or folded when they are one aggregation keyed
/// by a stack and `stacks` asks for it; `row_done` sees `out` after each row.
fn rows(
    out: &mut Vec<u8>,
    aggs: &[&Aggregation],
    opts: &SortOptions,
    stacks: StackFormat,
    row_done: &mut dyn FnMut(&mut Vec<u8>),
) {
    match aggs {
        [agg] if stacks == StackFormat::Folded && has_stack_key(agg) => {
            let mut text = String::new();
            folded(&mut text, agg);
            out.extend_from_slice(text.as_bytes());
            row_done(out);
        }
        _ => default_rows(out, aggs, opts, stacks.indent(), row_done),
    }
}

/// `printa(@a, @b, ...)` without a format: a newline, then the rows of the
/// aggregations joined by key, each line showing the keys and every
/// aggregation's value (zero where it lacks the key).
pub fn printa(aggs: &[&Aggregation], opts: &SortOptions, stacks: StackFormat) -> Vec<u8> {
    let mut out = b"\n".to_vec();
    rows(&mut out, aggs, opts, stacks, &mut |_| {});
    out
}

/// `printa(fmt, @a, ...)`: the format once per row; ordinary conversions
/// take the keys in order, each `%@` conversion the next aggregation's value
/// (the last one again once all are used).  For the quantize family `%@`
/// prints the histogram.
pub fn printa_format(fmt: &Format, aggs: &[&Aggregation], opts: &SortOptions) -> Vec<u8> {
    let mut out = Vec::new();
    for bundle in bundles(aggs, opts) {
        let mut next = 0;
        fmt.render_into(&mut out, &mut bundle.key.iter(), &mut |conv, field, out| {
            let i = next.min(aggs.len() - 1);
            next += 1;
            let agg = aggs[i];
            let data = slots_of(&bundle, i, &agg.func);
            if agg.func.is_histogram() {
                let mut text = String::new();
                histogram::render(&mut text, &agg.func, &data, agg.normal());
                out.extend_from_slice(text.as_bytes());
            } else {
                conv.format_value(out, &printa_value(&agg.func, &data, agg.normal()), field);
            }
        });
    }
    out
}

/// The slots of aggregation `i` in a bundle (zeros where absent).
fn slots_of<'a>(bundle: &Bundle<'a>, i: usize, func: &AggFunc) -> Cow<'a, [u64]> {
    bundle
        .data(i)
        .map_or_else(|| Cow::Owned(vec![0; slot_count(func)]), Cow::Borrowed)
}

/// Rows of `aggs` joined by key, in the default layout; stack keys indented by
/// `stack_indent` columns.
fn default_rows(
    out: &mut Vec<u8>,
    aggs: &[&Aggregation],
    opts: &SortOptions,
    stack_indent: usize,
    row_done: &mut dyn FnMut(&mut Vec<u8>),
) {
    for bundle in bundles(aggs, opts) {
        for key in bundle.key {
            key_column(out, key, stack_indent);
        }
        for (i, agg) in aggs.iter().enumerate() {
            let data = slots_of(&bundle, i, &agg.func);
            value_column(out, &agg.func, &data, agg.normal());
            if let Some(row) = bundle.row(i) {
                cpu_values(out, &agg.func, &row.percpu, agg.normal());
            }
        }
        out.push(b'\n');
        row_done(out);
    }
}

/// Each CPU's value after the merged one (`aggpercpu`), as DTrace prints them: a line of
/// its own, `    [CPU N]`, then the value as the merged one is printed. A CPU on which the
/// key never fired shows `min()`'s and `max()`'s starting values.
fn cpu_values(out: &mut Vec<u8>, func: &AggFunc, percpu: &[Vec<u64>], normal: u64) {
    for (cpu, data) in percpu.iter().enumerate() {
        out.extend_from_slice(format!("\n    [CPU {cpu}]").as_bytes());
        let unset = data.first() == Some(&0);
        match func {
            AggFunc::Min if unset => value_column(out, func, &[1, i64::MAX as u64], 1),
            AggFunc::Max if unset => value_column(out, func, &[1, i64::MIN as u64], 1),
            _ => value_column(out, func, data, normal),
        }
    }
}

/// One key column of the default layout; a string's bytes as they are (padded to 50
/// bytes, as C's `%-50s` counts them).
fn key_column(out: &mut Vec<u8>, key: &Value, stack_indent: usize) {
    let text = match key {
        Value::Stack { frames, .. } => crate::trace::stack_text(frames, stack_indent),
        Value::Sym { frame, .. } => crate::trace::symbol_text(&frame.text()),
        Value::Bytes(b) => return out.extend_from_slice(&crate::trace::bytes_text(b, false)),
        Value::Str(s) => {
            out.extend_from_slice(b"  ");
            out.extend_from_slice(s);
            out.extend(std::iter::repeat_n(b' ', 50usize.saturating_sub(s.len())));
            return;
        }
        // Written in place: a million-row aggregation prints without a string a row.
        Value::Int { size: 1, .. } => {
            return column(out, format_args!(" {:>3}", key.zero_extended()))
        }
        Value::Int { size: 2, .. } => {
            return column(out, format_args!(" {:>5}", key.zero_extended()))
        }
        Value::Int { size: 4, .. } => {
            return column(
                out,
                format_args!(" {:>8}", key.zero_extended() as u32 as i32),
            )
        }
        Value::Int { .. } => {
            return column(out, format_args!(" {:>16}", key.zero_extended() as i64))
        }
    };
    out.extend_from_slice(text.as_bytes());
}

/// Formatted text appended to `out`.
fn column(out: &mut Vec<u8>, text: std::fmt::Arguments) {
    // Writing to a vector cannot fail.
    let _ = std::io::Write::write_fmt(out, text);
}

/// The value column of the default layout.  As in DTrace, count, sum, min
/// and max are divided by the normalization factor as unsigned numbers and
/// printed as signed ones; avg divides as signed numbers.
fn value_column(out: &mut Vec<u8>, func: &AggFunc, data: &[u64], normal: u64) {
    let slot = |i: usize| data.get(i).copied().unwrap_or(0);
    match func {
        AggFunc::Count | AggFunc::Sum => {
            column(out, format_args!(" {:>16}", (slot(0) / normal) as i64))
        }
        AggFunc::Min | AggFunc::Max => {
            column(out, format_args!(" {:>16}", (slot(1) / normal) as i64))
        }
        AggFunc::Avg => {
            let avg = (slot(1) as i64)
                .wrapping_div(normal as i64)
                .checked_div(slot(0) as i64)
                .unwrap_or(0);
            column(out, format_args!(" {avg:>16}"))
        }
        AggFunc::Stddev => column(out, format_args!(" {:>16}", slots::stddev(data, normal))),
        _ => {
            let mut table = String::new();
            histogram::render(&mut table, func, data, normal);
            out.extend_from_slice(table.as_bytes());
        }
    }
}

/// The integer a `printa()` `%@` conversion formats: count is unsigned,
/// the rest signed; sum/min/max are divided by the factor as signed
/// numbers; avg divides as unsigned numbers (as DTrace's printa does).
fn printa_value(func: &AggFunc, data: &[u64], normal: u64) -> Value {
    let slot = |i: usize| data.get(i).copied().unwrap_or(0);
    let signed = |v: i64| Value::i64(v.wrapping_div(normal as i64));
    match func {
        AggFunc::Count => Value::u64(slot(0) / normal),
        AggFunc::Avg => Value::i64((slot(1) / normal).checked_div(slot(0)).unwrap_or(0) as i64),
        AggFunc::Stddev => Value::i64(slots::stddev(data, normal) as i64),
        AggFunc::Min | AggFunc::Max => signed(slot(1) as i64),
        _ => signed(slot(0) as i64),
    }
}

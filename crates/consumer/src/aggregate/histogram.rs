//! Text of `quantize()`, `lquantize()` and `llquantize()` values: the
//! `value ---- Distribution ---- count` table with 40-column `@` bars.
//!
//! DTrace shows the buckets from the first to the last non-zero one plus one
//! (zero) bucket either side; with no data it shows the buckets around zero
//! (`lquantize`: the first three).  Bars scale each count against the sum of
//! the absolute counts shown; when counts of both signs are present the bars
//! are half as long and grow either side of a centre line.  Counts are
//! divided by the normalization factor; bars are not.

use super::AggFunc;
use dtrace_abi::slots::{
    buckets, lquantize_levels, quantize_bucket_value, LlqShape, QUANTIZE_BUCKETS, QUANTIZE_ZERO,
};

const BAR: usize = 40;

/// Append the histogram of `data` (slots of `func`: its buckets are shown, not its sum)
/// to `out`.
pub(crate) fn render(out: &mut String, func: &AggFunc, data: &[u64], normal: u64) {
    let data: Vec<i64> = buckets(func, data).iter().map(|&c| c as i64).collect();
    match *func {
        AggFunc::Quantize => quantize(out, &data, normal),
        AggFunc::Lquantize { base, limit, step } => {
            lquantize(out, &data, normal, base, limit, step)
        }
        AggFunc::Llquantize {
            factor,
            low,
            high,
            nsteps,
        } => llquantize(out, &data, normal, LlqShape::new(factor, low, high, nsteps)),
        _ => {}
    }
}

/// The first and last buckets holding data, if any.
fn data_range(data: &[i64]) -> Option<(usize, usize)> {
    let first = data.iter().position(|&c| c != 0)?;
    let last = data.iter().rposition(|&c| c != 0)?;
    Some((first, last))
}

/// Widen a range of buckets by one on each side, within `0..n`.
fn widen((first, last): (usize, usize), n: usize) -> (usize, usize) {
    (first.saturating_sub(1), (last + 1).min(n - 1))
}

fn quantize(out: &mut String, data: &[i64], normal: u64) {
    let range = data_range(data).map_or((QUANTIZE_ZERO - 1, QUANTIZE_ZERO + 1), |r| {
        widen(r, QUANTIZE_BUCKETS)
    });
    table(out, data, range, normal, |i| {
        Some(quantize_bucket_value(i).to_string())
    });
}

fn lquantize(out: &mut String, data: &[i64], normal: u64, base: i64, limit: i64, step: i64) {
    let levels = lquantize_levels(base, limit, step) as usize;
    let range = data_range(data).map_or((0, 2), |r| widen(r, levels + 2));
    table(out, data, range, normal, |i| {
        Some(if i == 0 {
            format!("< {base}")
        } else if i == levels + 1 {
            format!(">= {}", base + levels as i64 * step)
        } else {
            (base + (i as i64 - 1) * step).to_string()
        })
    });
}

fn llquantize(out: &mut String, data: &[i64], normal: u64, shape: LlqShape) {
    let bin0 = shape.bin0();
    let range = data_range(data).map_or((bin0, bin0 + 2), |r| widen(r, shape.nbins()));
    let labels = llquantize_labels(&shape, range);
    table(out, data, range, normal, |i| labels[i].clone());
}

/// Bucket labels of an `llquantize()` value (`None` for the "ghost"
/// buckets no integer reaches), as DTrace derives them for the shown
/// `range`.  Labels are cut to 15 characters, as DTrace's are.
fn llquantize_labels(shape: &LlqShape, (first, last): (usize, usize)) -> Vec<Option<String>> {
    let nbins = shape.nbins();
    let bin0 = shape.bin0();
    let mut labels = vec![None; nbins];
    let mut set = |i: usize, value: u128| {
        if let Some(l) = labels.get_mut(bin0 + i) {
            *l = Some(value.to_string());
        }
        if let Some(l) = bin0.checked_sub(i).and_then(|j| labels.get_mut(j)) {
            *l = Some(format!("-{value}"));
        }
    };
    let scale = shape.pow(shape.low);
    set(1, scale);
    let mut i = 1;
    let mut mag = shape.low;
    let ghosts = shape.low == 0 && shape.nsteps > shape.factor;
    if ghosts {
        for step in 2..=shape.factor {
            i += shape.skipped() as usize;
            set(i, step);
        }
        mag += 1;
    }
    let mut unit = shape.pow(mag + 1) / shape.nsteps;
    while mag <= shape.high {
        for step in shape.skipped() + 1..=shape.nsteps {
            i += 1;
            set(i, step * unit);
        }
        unit = unit.saturating_mul(shape.factor);
        mag += 1;
    }
    labels[bin0] = Some(if scale == 1 {
        "0".to_string()
    } else if first >= bin0 {
        format!("< {scale}")
    } else {
        format!("abs() < {scale}")
    });
    let top = shape.pow(shape.high + 1);
    labels[0] = Some(format!("<= -{top}"));
    labels[nbins - 1] = Some(format!(">= {top}"));
    if ghosts {
        let pad = shape.skipped() as usize;
        borrow_label(&mut labels, first, pad, |j, d| j.checked_sub(d));
        borrow_label(&mut labels, last, pad, |j, d| Some(j + d));
    }
    for l in labels.iter_mut().flatten() {
        l.truncate(15);
    }
    labels
}

/// When the shown range ends on a ghost bucket, DTrace labels it like the
/// nearest labelled bucket beyond it (at most `pad - 1` away).
fn borrow_label(
    labels: &mut [Option<String>],
    at: usize,
    pad: usize,
    beyond: impl Fn(usize, usize) -> Option<usize>,
) {
    if labels[at].is_some() {
        return;
    }
    let found = (1..pad).find_map(|d| beyond(at, d).and_then(|j| labels.get(j).cloned().flatten()));
    labels[at] = found;
}

/// The table: header, then one row per labelled bucket in `range`.
fn table(
    out: &mut String,
    data: &[i64],
    (first, last): (usize, usize),
    normal: u64,
    label: impl Fn(usize) -> Option<String>,
) {
    let shown = &data[first..=last];
    let scale = Scale {
        total: shown.iter().map(|c| u128::from(c.unsigned_abs())).sum(),
        positives: shown.iter().any(|&c| c > 0),
        negatives: shown.iter().any(|&c| c < 0),
    };
    out.push_str(&format!(
        "\n{:>16} {:>41} {:<9}\n",
        "value", "------------- Distribution -------------", "count"
    ));
    for (i, &count) in data.iter().enumerate().take(last + 1).skip(first) {
        if let Some(l) = label(i) {
            out.push_str(&format!("{l:>16} "));
            scale.line(out, count, normal);
        }
    }
}

/// What bar lengths are relative to.
struct Scale {
    total: u128,
    positives: bool,
    negatives: bool,
}

impl Scale {
    /// `|count| * len / total`, rounded half up.
    fn depth(&self, count: i64, len: usize) -> usize {
        if self.total == 0 {
            return 0;
        }
        let scaled = 2 * u128::from(count.unsigned_abs()) * len as u128 + self.total;
        (scaled / (2 * self.total)) as usize
    }

    /// Bar and count of one bucket.
    fn line(&self, out: &mut String, count: i64, normal: u64) {
        let shown = ((count as u64) / normal) as i64;
        let ats = |d: usize| "@".repeat(d);
        let bar = if !self.negatives {
            let d = if self.positives {
                self.depth(count, BAR)
            } else {
                0
            };
            format!("|{}{}", ats(d), " ".repeat(BAR - d))
        } else if !self.positives {
            let d = self.depth(count, BAR);
            format!("{}{}|", " ".repeat(BAR - d), ats(d))
        } else {
            let half = BAR / 2;
            let d = self.depth(count, half);
            if count <= 0 {
                format!("{}{}|{}", " ".repeat(half - d), ats(d), " ".repeat(half))
            } else {
                format!("{}|{}{}", " ".repeat(half), ats(d), " ".repeat(half - d))
            }
        };
        out.push_str(&format!("{bar} {shown:<9}\n"));
    }
}

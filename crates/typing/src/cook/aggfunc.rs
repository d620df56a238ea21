//! Aggregating functions' calls: which function, its constant parameters checked as DTrace
//! checks them (lquantize's bounds and step, llquantize's factor and magnitudes), and the
//! errors for an aggregation used again with other parameters.

use dtrace_abi::slots::{slot_count, AggFunc};
use dtrace_frontend::ast::Expr;
use dtrace_frontend::{CompileError, Result, Span};

/// Most slots any aggregation may have (a per-CPU map's value holds at most 32 KiB; bounds
/// the zero block used to create entries).
pub const MAX_SLOTS: usize = 4096;

/// The integer constant an expression is, if it is one (`Cook::int_constant`).
pub(crate) type Constant<'a> = &'a dyn Fn(&Expr) -> Option<i64>;

/// Argument `i` of an aggregating function as an integer constant (with `positive`, one
/// above zero: lquantize's and llquantize's step), or DTrace's `tag` error (argument
/// numbers count from the value, as DTrace's messages do).
fn const_arg(
    constant: Constant,
    func: &str,
    args: &[Expr],
    (i, positive): (usize, bool),
    tag: &'static str,
) -> Result<i64> {
    match constant(&args[i]) {
        Some(v) if v > 0 || !positive => Ok(v),
        _ => {
            let what = if positive {
                "a non-zero positive integer constant"
            } else {
                "an integer constant"
            };
            Err(CompileError::new(
                tag,
                format!("{func}( ) argument #{i} must be {what}"),
                args[i].span,
            ))
        }
    }
}

/// The aggregating function a call names, with its constant parameters checked.
pub(crate) fn parse_function(
    constant: Constant,
    func: &str,
    args: &[Expr],
    span: Span,
) -> Result<(AggFunc, usize)> {
    let count = |n: std::ops::RangeInclusive<usize>| -> Result<()> {
        if n.contains(&args.len()) {
            Ok(())
        } else {
            Err(CompileError::new(
                "D_PROTO_LEN",
                format!(
                    "{func}( ) prototype mismatch: {} arg{} passed, {} expected",
                    args.len(),
                    if args.len() == 1 { "" } else { "s" },
                    if n.start() == n.end() {
                        n.start().to_string()
                    } else {
                        format!("{} to {}", n.start(), n.end())
                    }
                ),
                span,
            ))
        }
    };
    let bad = |tag: &'static str, msg: String| Err(CompileError::new(tag, msg, span));
    Ok(match func {
        "count" => {
            count(0..=0)?;
            (AggFunc::Count, 0)
        }
        "sum" | "avg" | "min" | "max" | "stddev" => {
            count(1..=1)?;
            let kind = match func {
                "sum" => AggFunc::Sum,
                "avg" => AggFunc::Avg,
                "min" => AggFunc::Min,
                "max" => AggFunc::Max,
                _ => AggFunc::Stddev,
            };
            (kind, 1)
        }
        "quantize" => {
            count(1..=2)?;
            (AggFunc::Quantize, args.len())
        }
        "lquantize" => {
            count(3..=5)?;
            let int32 = |v: i64| i32::try_from(v).is_ok();
            let base = const_arg(constant, func, args, (1, false), "D_LQUANT_BASETYPE")?;
            if !int32(base) {
                return Err(CompileError::new(
                    "D_LQUANT_BASEVAL",
                    "lquantize( ) argument #1 must be a 32-bit quantity",
                    args[1].span,
                ));
            }
            let limit = const_arg(constant, func, args, (2, false), "D_LQUANT_LIMTYPE")?;
            if !int32(limit) {
                return Err(CompileError::new(
                    "D_LQUANT_LIMVAL",
                    "lquantize( ) argument #2 must be a 32-bit quantity",
                    args[2].span,
                ));
            }
            if limit <= base {
                return bad(
                    "D_LQUANT_MISMATCH",
                    "lquantize( ) base (argument #1) must be less than limit (argument #2)".into(),
                );
            }
            let step = if args.len() > 3 {
                let step = const_arg(constant, func, args, (3, true), "D_LQUANT_STEPTYPE")?;
                if step > u16::MAX as i64 {
                    return Err(CompileError::new(
                        "D_LQUANT_STEPVAL",
                        "lquantize( ) argument #3 must be a 16-bit quantity",
                        args[3].span,
                    ));
                }
                step
            } else {
                1
            };
            let levels = (limit - base) / step;
            if levels == 0 {
                return bad(
                    "D_LQUANT_STEPLARGE",
                    "lquantize( ) step (argument #3) too large: must have at least one quantization level".into(),
                );
            }
            if levels > u16::MAX as i64 {
                return bad(
                    "D_LQUANT_STEPSMALL",
                    "lquantize( ) step (argument #3) too small: number of quantization levels must be a 16-bit quantity".into(),
                );
            }
            // The levels' buckets, one below and one above them, and the sum of the values.
            let most_levels = MAX_SLOTS - 3;
            if levels > most_levels as i64 {
                return bad(
                    "D_LQUANT_STEPSMALL",
                    format!(
                        "lquantize( ) step ({step}) is too small for the range: this implementation keeps at most {most_levels} levels",
                    ),
                );
            }
            (
                AggFunc::Lquantize {
                    base,
                    limit: base + levels * step,
                    step,
                },
                if args.len() == 5 { 2 } else { 1 },
            )
        }
        "llquantize" => {
            count(5..=6)?;
            let arg =
                |i: usize, tag: &'static str| const_arg(constant, func, args, (i, false), tag);
            let factor = arg(1, "D_LLQUANT_FACTORTYPE")?;
            if !(2..=u16::MAX as i64).contains(&factor) {
                return bad(
                    "D_LLQUANT_FACTORVAL",
                    "llquantize( ) argument #1 must be an unsigned 16-bit quantity greater than or equal to 2".into(),
                );
            }
            let low = arg(2, "D_LLQUANT_LMAGTYPE")?;
            if !(0..=u16::MAX as i64).contains(&low) {
                return bad(
                    "D_LLQUANT_LMAGVAL",
                    "llquantize( ) argument #2 must be an unsigned 16-bit quantity".into(),
                );
            }
            let high = arg(3, "D_LLQUANT_HMAGTYPE")?;
            if !(0..=u16::MAX as i64).contains(&high) {
                return bad(
                    "D_LLQUANT_HMAGVAL",
                    "llquantize( ) argument #3 must be an unsigned 16-bit quantity".into(),
                );
            }
            if high < low {
                return bad(
                    "D_LLQUANT_HMAGVAL",
                    "llquantize( ) argument #3 (high magnitude) must be at least argument #2 (low magnitude)".into(),
                );
            }
            if (factor as f64).powi(high as i32 + 1) > u64::MAX as f64 {
                return bad(
                    "D_LLQUANT_HMAGVAL",
                    "llquantize( ) argument #3 (high magnitude) will cause overflow of 64 bits"
                        .into(),
                );
            }
            let nsteps = const_arg(constant, func, args, (4, true), "D_LLQUANT_STEPTYPE")?;
            if nsteps > u16::MAX as i64 {
                return bad(
                    "D_LLQUANT_STEPVAL",
                    "llquantize( ) argument #4 must be an unsigned 16-bit quantity".into(),
                );
            }
            if nsteps < factor && factor % nsteps != 0 {
                return bad(
                    "D_LLQUANT_STEPVAL",
                    "llquantize() argument #4 (steps) must evenly divide argument #1 (factor) when steps<factor".into(),
                );
            }
            if nsteps > factor {
                if nsteps % factor != 0 {
                    return bad(
                        "D_LLQUANT_STEPVAL",
                        "llquantize() argument #4 (steps) must be a multiple of argument #1 (factor) when steps>factor".into(),
                    );
                }
                let power = (factor as u128).saturating_pow(low.max(1) as u32 + 1);
                if power % nsteps as u128 != 0 {
                    return bad(
                        "D_LLQUANT_STEPVAL",
                        if low == 0 {
                            "llquantize() argument #4 (steps) must evenly divide the square of argument #1 (factor) when steps>factor and lmag==0"
                        } else {
                            "llquantize() argument #4 (steps) must evenly divide pow(argument #1 (factor), lmag (argument #2) + 1) when steps>factor and lmag>0"
                        }
                        .into(),
                    );
                }
            }
            let kind = AggFunc::Llquantize {
                factor: factor as u64,
                low: low as u64,
                high: high as u64,
                nsteps: nsteps as u64,
            };
            if slot_count(&kind) > MAX_SLOTS {
                return bad(
                    "D_LLQUANT_NSTEPS",
                    "llquantize( ) has too many buckets".into(),
                );
            }
            (kind, if args.len() == 6 { 2 } else { 1 })
        }
        _ => {
            return bad(
                "D_AGG_FUNC",
                format!("{func}( ) is not an aggregating function"),
            )
        }
    })
}

/// DTrace's errors for a histogram aggregation used again with other parameters.
pub(crate) fn parameter_mismatch(old: &AggFunc, new: &AggFunc, span: Span) -> Option<CompileError> {
    let err = |tag, what: &str, expected: i64, found: i64| {
        Some(CompileError::new(
            tag,
            format!(
                "{what} doesn't match previous declaration: expected {expected}, found {found}"
            ),
            span,
        ))
    };
    match (old, new) {
        (
            AggFunc::Lquantize {
                base: ob,
                limit: ol,
                step: os,
            },
            AggFunc::Lquantize {
                base: nb,
                limit: nl,
                step: ns,
            },
        ) => {
            let lim = |b: i64, l: i64, s: i64| b + (l - b) / s * s;
            if ob != nb {
                return err(
                    "D_LQUANT_MATCHBASE",
                    "lquantize( ) base (argument #1)",
                    *ob,
                    *nb,
                );
            }
            if lim(*ob, *ol, *os) - ob != lim(*nb, *nl, *ns) - nb {
                return err(
                    "D_LQUANT_MATCHLIM",
                    "lquantize( ) limit (argument #2)",
                    lim(*ob, *ol, *os),
                    lim(*nb, *nl, *ns),
                );
            }
            if os != ns {
                return err(
                    "D_LQUANT_MATCHSTEP",
                    "lquantize( ) step (argument #3)",
                    *os,
                    *ns,
                );
            }
            None
        }
        (
            AggFunc::Llquantize {
                factor: of,
                low: ol,
                high: oh,
                nsteps: on,
            },
            AggFunc::Llquantize {
                factor: nf,
                low: nl,
                high: nh,
                nsteps: nn,
            },
        ) => {
            let checks = [
                (
                    "D_LLQUANT_MATCHFACTOR",
                    "llquantize( ) factor (argument #1)",
                    of,
                    nf,
                ),
                (
                    "D_LLQUANT_MATCHLMAG",
                    "llquantize( ) lmag (argument #2)",
                    ol,
                    nl,
                ),
                (
                    "D_LLQUANT_MATCHHMAG",
                    "llquantize( ) hmag (argument #3)",
                    oh,
                    nh,
                ),
                (
                    "D_LLQUANT_MATCHSTEPS",
                    "llquantize( ) steps (argument #4)",
                    on,
                    nn,
                ),
            ];
            checks
                .into_iter()
                .find(|(_, _, o, n)| o != n)
                .and_then(|(tag, what, o, n)| err(tag, what, *o as i64, *n as i64))
        }
        _ => None,
    }
}

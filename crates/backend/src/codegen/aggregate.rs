//! Aggregating functions: `@name[keys] = func(args)` updates u64 slots of the key's entry
//! in a per-CPU hash map. Slot layouts (shared with the consumer, which merges CPUs):
//! count `[n]`, sum `[sum]`, avg `[n, sum]`, min/max `[set, value]`, stddev
//! `[n, sum, sumsq_lo, sumsq_hi]`, quantize 127 power-of-two buckets (63 is zero),
//! lquantize `levels + 2` buckets, llquantize as [`slots::llquantize_bucket`] lays them out.

use dtrace_ebpf::*;
use dtrace_frontend::ast::{Expr, ExprKind, UnaryOp};
use dtrace_frontend::{CompileError, Result, Span};

use super::regs::{self, VReg};
use super::vars::Rodata;
use super::{actions, strsubr, Gen};
use crate::program::{Aggregation, Datum, DropKind, Field, MapKind, MapSpec};
use crate::slots::{self, slot_count, AggFunc, QUANTIZE_ZERO};
use crate::types::Type;

/// Most slots any aggregation may have (bounds the zero block used to create entries).
pub const MAX_SLOTS: usize = 4096;

const FUNCTIONS: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "stddev",
    "quantize",
    "lquantize",
    "llquantize",
];

pub(crate) fn is_function(name: &str) -> bool {
    FUNCTIONS.contains(&name)
}

/// The aggregation name and key expressions of an assignment target, if it is one.
pub(crate) fn target(lhs: &Expr) -> Option<(&str, &[Expr])> {
    match &lhs.kind {
        ExprKind::Aggregation(name) => Some((name, &[])),
        ExprKind::Index { base, args } => match &base.kind {
            ExprKind::Aggregation(name) => Some((name, args)),
            _ => None,
        },
        _ => None,
    }
}

/// A constant integer expression (literals with unary minus and parentheses folded).
pub(crate) fn constant(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int { value, .. } => Some(*value as i64),
        ExprKind::Char(c) => Some(*c as i8 as i64),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            operand,
        } => constant(operand).map(i64::wrapping_neg),
        ExprKind::Unary {
            op: UnaryOp::Plus,
            operand,
        } => constant(operand),
        _ => None,
    }
}

fn const_arg(func: &str, args: &[Expr], i: usize, what: &str) -> Result<i64> {
    constant(&args[i]).ok_or_else(|| {
        CompileError::new(
            "D_LQUANT_BASETYPE",
            format!(
                "{func}( ) argument #{} ({what}) must be an integer constant",
                i + 1
            ),
            args[i].span,
        )
    })
}

/// The aggregating function a call names, with its constant parameters checked.
fn parse_function(func: &str, args: &[Expr], span: Span) -> Result<(AggFunc, usize)> {
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
            let base = const_arg(func, args, 1, "lower bound")?;
            let limit = const_arg(func, args, 2, "upper bound")?;
            let step = if args.len() > 3 {
                const_arg(func, args, 3, "step")?
            } else {
                1
            };
            if step <= 0 {
                return bad(
                    "D_LQUANT_STEPVAL",
                    "lquantize( ) step must be greater than zero".into(),
                );
            }
            if limit <= base {
                return bad(
                    "D_LQUANT_MISMATCH",
                    "lquantize( ) upper bound must be greater than lower bound".into(),
                );
            }
            let levels = (limit - base) / step;
            if levels > (MAX_SLOTS - 2) as i64 {
                return bad(
                    "D_LQUANT_STEPLARGE",
                    format!(
                        "lquantize( ) step ({step}) is too small for the range; at most {} levels",
                        MAX_SLOTS - 2
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
            let arg = |i: usize, tag: &'static str| -> Result<i64> {
                constant(&args[i]).ok_or_else(|| {
                    CompileError::new(
                        tag,
                        format!("llquantize( ) argument #{i} must be an integer constant"),
                        args[i].span,
                    )
                })
            };
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
            let nsteps = arg(4, "D_LLQUANT_STEPTYPE")?;
            if !(1..=u16::MAX as i64).contains(&nsteps) {
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
                            "llquantize() argument #4 (steps) must evenly divide pow(argument #1 (factor), lmag (argument #2) + 1) when steps>factor and lmag==0"
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
fn parameter_mismatch(old: &AggFunc, new: &AggFunc, span: Span) -> Option<CompileError> {
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

impl Gen<'_, '_> {
    /// `@name[keys] = func(args)`
    pub(crate) fn aggregate(
        &mut self,
        (name, keys): (&str, &[Expr]),
        rhs: &Expr,
        span: Span,
    ) -> Result<()> {
        let ExprKind::Call {
            name: func,
            args,
            name_span,
        } = &rhs.kind
        else {
            return Err(CompileError::new(
                "D_AGG_FUNC",
                format!("@{name} must be assigned the result of an aggregating function"),
                rhs.span,
            ));
        };
        if !is_function(func) {
            let known = actions::is_action(func)
                || strsubr::is_string_subroutine(func)
                || matches!(func.as_str(), "strlen" | "strjoin" | "rand");
            if !known {
                return Err(CompileError::new(
                    "D_FUNC_UNDEF",
                    format!("undefined function name: {func}"),
                    *name_span,
                ));
            }
            return Err(CompileError::new(
                "D_AGG_FUNC",
                format!("@{name} must be assigned the result of an aggregating function"),
                rhs.span,
            ));
        }
        let (kind, value_args) = parse_function(func, args, rhs.span)?;
        // Key and value types decide (on first use) or must match the aggregation.
        let mut key_types = Vec::new();
        let mut datums = Vec::new();
        for (i, k) in keys.iter().enumerate() {
            // Stacks and symbols (`stack()`, `ufunc(pc)`, ...) are keys of their own kind.
            let datum = actions::key_datum(k, self.stack_defaults())?;
            datums.push(datum);
            if datum.is_some() {
                key_types.push(crate::types::UINT64);
                continue;
            }
            let void = match &k.kind {
                ExprKind::Call { name, .. } => actions::is_action(name),
                ExprKind::Cast { ty, .. } => matches!(
                    self.c.resolve_type(&ty.spec, &ty.declarator, ty.span)?,
                    Type::Void
                ),
                _ => false,
            };
            if void {
                return Err(CompileError::new(
                    "D_KEY_TYPE",
                    format!(
                        "void expression may not be used as aggregation index: key #{}",
                        i + 1
                    ),
                    k.span,
                ));
            }
            key_types.push(self.type_of(k)?);
        }
        let index = self.aggregation_for(name, &kind, &key_types, &datums, span)?;
        let agg = self.c.aggregations[index].clone();
        let mut values: Vec<VReg> = Vec::new();
        for (i, a) in args.iter().take(value_args).enumerate() {
            // lquantize/llquantize's increment is their last argument.
            let a = if i == 1 && !matches!(kind, AggFunc::Quantize) {
                args.last().expect("args")
            } else {
                a
            };
            let v = self.expr(a)?;
            if i == 0 && !v.ty.is_scalar() {
                return Err(CompileError::new(
                    "D_AGG_SCALAR",
                    format!("{func}( ) argument #1 must be of scalar type"),
                    rhs.span,
                ));
            }
            if !v.ty.is_scalar() {
                return Err(CompileError::new(
                    "D_PROTO_ARG",
                    format!("{func}( ) argument #{} is incompatible with prototype:\n\tprototype: int64_t\n\t argument: {}", i + 1, v.ty),
                    a.span,
                ));
            }
            values.push(v.reg);
        }
        let key = if agg.datums.iter().all(Option::is_none) {
            let key_types: Vec<Type> = agg.keys.iter().map(|k| k.ty.clone()).collect();
            self.build_key(keys, &key_types, span)?
        } else {
            self.build_datum_key(keys, &agg, span)?
        };
        self.entry_pointer(&agg, key);
        let done = self.e.label();
        self.e.jmp_imm(BPF_JEQ, R0, 0, done);
        if let Some(&v) = values.first() {
            regs::read_into(&mut self.e, v, R1);
        }
        let weight = values.get(1).copied();
        self.update_slots(&kind, weight);
        self.e.bind(done);
        for v in values.into_iter().rev() {
            self.pop(v);
        }
        Ok(())
    }

    /// The aggregation called `name`, created on first use.
    fn aggregation_for(
        &mut self,
        name: &str,
        kind: &AggFunc,
        keys: &[Type],
        datums: &[Option<Datum>],
        span: Span,
    ) -> Result<usize> {
        if let Some(i) = self.c.aggregations.iter().position(|a| a.name == name) {
            let a = &self.c.aggregations[i];
            if let Some(err) = parameter_mismatch(&a.kind, kind, span) {
                return Err(err);
            }
            if &a.kind != kind {
                let first = self.c.agg_spans.get(name).copied().unwrap_or(span);
                return Err(CompileError::new(
                    "D_AGG_REDEF",
                    format!(
                        "aggregation redefined: @{name}\n\t current: @{name} = {}( )\n\tprevious: @{name} = {}( ) : line {}",
                        kind.name(),
                        a.kind.name(),
                        dtrace_frontend::line_marker(first)
                    ),
                    span,
                ));
            }
            let same_keys = a.keys.len() == keys.len()
                && a.keys
                    .iter()
                    .zip(keys)
                    .all(|(k, t)| k.ty.is_string() == t.is_string())
                && a.datums == datums;
            if !same_keys {
                return Err(CompileError::new(
                    "D_AGG_REDEF",
                    format!("aggregation @{name} used with a different key signature"),
                    span,
                ));
            }
            return Ok(i);
        }
        self.c.agg_spans.insert(name.to_string(), span);
        let mut fields = Vec::new();
        let mut offset = 0;
        for (t, d) in keys.iter().zip(datums) {
            // Keys keep their C type: DTrace prints 1- and 2-byte keys unsigned, in
            // columns of their own width.
            fields.push(Field {
                offset,
                ty: t.clone(),
            });
            offset += match d {
                Some(d) => d.size(),
                None if t.is_string() => self.strsize().next_multiple_of(8),
                None => dtrace_abi::datum::SCALAR_SLOT,
            };
        }
        let key_size = if datums.iter().all(Option::is_none) {
            self.c.key_size(keys)
        } else {
            offset.max(8)
        };
        let slots = slot_count(kind);
        let map = self.c.add_map(MapSpec {
            name: format!("dt_agg_{name}"),
            kind: MapKind::PercpuHash,
            key_size,
            value_size: (slots * 8) as u32,
            max_entries: self.c.opts.agg_entries,
            initial: None,
            entries_per_cpu: 0,
        });
        self.c.aggregations.push(Aggregation {
            name: name.to_string(),
            kind: *kind,
            keys: fields,
            datums: datums.to_vec(),
            key_size,
            slots,
            map,
        });
        Ok(self.c.aggregations.len() - 1)
    }

    /// Evaluate `keys` into the key of `agg`, which has stack or symbol keys; returns its
    /// scratch offset. Values are evaluated first, in order; then the key is filled, stacks
    /// straight from `bpf_get_stack`.
    fn build_datum_key(&mut self, keys: &[Expr], agg: &Aggregation, span: Span) -> Result<u32> {
        if keys.len() != agg.keys.len() {
            return Err(CompileError::new(
                "D_ARR_BADREF",
                format!(
                    "tuple has {} elements; {} expected",
                    keys.len(),
                    agg.keys.len()
                ),
                span,
            ));
        }
        let mut vals: Vec<Option<super::Val>> = Vec::new();
        for ((k, datum), field) in keys.iter().zip(&agg.datums).zip(&agg.keys) {
            let v = match datum {
                Some(Datum::Stack { .. } | Datum::UStack { .. }) => None,
                Some(_) => {
                    let (_, pc) = actions::symbol_call(k)?.expect("a symbol key");
                    let v = self.expr(pc)?;
                    if !v.ty.is_scalar() {
                        return Err(CompileError::new(
                            "D_PROTO_ARG",
                            format!("argument #1 is incompatible with prototype:\n\tprototype: uintptr_t\n\t argument: {}", v.ty),
                            pc.span,
                        ));
                    }
                    Some(v)
                }
                None => {
                    let v = self.expr(k)?;
                    if v.ty.is_string() != field.ty.is_string() {
                        return Err(CompileError::new(
                            "D_ARR_BADREF",
                            format!("key expression has type {}; {} expected", v.ty, field.ty),
                            k.span,
                        ));
                    }
                    Some(v)
                }
            };
            vals.push(v);
        }
        let key = self.scratch(agg.key_size);
        for ((v, datum), field) in vals.iter().zip(&agg.datums).zip(&agg.keys) {
            let off = key + field.offset;
            match (datum, v) {
                (Some(d), None) => self.emit_stack(off, *d),
                (Some(d), Some(v)) => self.store_symbol(v, *d, off),
                (None, Some(v)) if v.ty.is_string() => {
                    self.zero_scratch(off, self.strsize().next_multiple_of(8));
                    self.scratch_addr(R1, off);
                    self.e.emit(Insn::mov64_imm(R2, self.strsize() as i32));
                    regs::read_into(&mut self.e, v.reg, R3);
                    self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
                }
                (None, Some(v)) => {
                    let r = regs::read(&mut self.e, v.reg, R1);
                    self.e.emit(Insn::stx(
                        Size::DW,
                        super::regs::SCRATCH,
                        self.small(off),
                        r,
                    ));
                }
                (None, None) => {}
            }
        }
        for v in vals.iter().rev().flatten() {
            self.pop(v.reg);
        }
        Ok(key)
    }

    /// r0 = this CPU's slots for the key at scratch `key`, creating the entry; 0 if full.
    fn entry_pointer(&mut self, agg: &Aggregation, key: u32) {
        let found = self.e.label();
        self.e.ld_map(R1, agg.map);
        self.scratch_addr(R2, key);
        self.e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
        self.e.jmp_imm(BPF_JNE, R0, 0, found);
        self.e.ld_map(R1, agg.map);
        self.scratch_addr(R2, key);
        self.e.ld_map_value(R3, self.c.core.rodata, Rodata::ZEROS);
        self.e.emit(Insn::mov64_imm(R4, 1)); // BPF_NOEXIST
        self.e.emit(Insn::call(helpers::MAP_UPDATE_ELEM));
        self.e.ld_map(R1, agg.map);
        self.scratch_addr(R2, key);
        self.e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
        self.e.jmp_imm(BPF_JNE, R0, 0, found);
        self.count_drop(DropKind::Dynamic);
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.bind(found);
    }

    /// With r0 = slots and r1 = value (and `weight` the increment), apply the function.
    /// Updates are atomic: a program that interrupts this one on the same CPU (a perf-event
    /// program, or another task's after a preemption) may update the same entry.
    fn update_slots(&mut self, kind: &AggFunc, weight: Option<VReg>) {
        let e = &mut self.e;
        let add_slot = |e: &mut crate::emit::Emitter, slot: i16, src: Reg| {
            e.emit(Insn::atomic_add(Size::DW, R0, slot * 8, src));
        };
        match kind {
            AggFunc::Count => {
                e.emit(Insn::mov64_imm(R1, 1));
                add_slot(e, 0, R1);
            }
            AggFunc::Sum => add_slot(e, 0, R1),
            AggFunc::Avg => {
                e.emit(Insn::mov64_imm(R2, 1));
                add_slot(e, 0, R2);
                add_slot(e, 1, R1);
            }
            AggFunc::Min | AggFunc::Max => min_max(e, matches!(kind, AggFunc::Min)),
            AggFunc::Stddev => {
                e.emit(Insn::mov64_imm(R2, 1));
                add_slot(e, 0, R2);
                add_slot(e, 1, R1);
                square_128(e);
                // (r4:r5) = value²; add to slots 2 (low) and 3 (high) with carry: the
                // carry comes from the low word's old value, fetched by the same atomic add.
                e.emit(Insn::mov64_reg(R2, R4));
                e.emit(Insn::atomic_fetch_add(Size::DW, R0, 16, R2));
                e.emit(Insn::mov64_reg(R3, R2));
                e.emit(Insn::alu64_reg(BPF_ADD, R3, R4));
                e.emit(Insn::jmp_reg(BPF_JGE, R3, R2, 1));
                e.emit(Insn::alu64_imm(BPF_ADD, R5, 1));
                add_slot(e, 3, R5);
            }
            AggFunc::Quantize | AggFunc::Lquantize { .. } | AggFunc::Llquantize { .. } => {
                bucket_index(e, kind);
                // r2 = bucket index, bounded; add the weight to that slot.
                let max = slot_count(kind) as i32 - 1;
                e.emit(Insn::jmp_imm(BPF_JSGE, R2, 0, 1));
                e.emit(Insn::mov64_imm(R2, 0));
                e.emit(Insn::jmp_imm(BPF_JSLE, R2, max, 1));
                e.emit(Insn::mov64_imm(R2, max));
                e.emit(Insn::alu64_imm(BPF_LSH, R2, 3));
                e.emit(Insn::alu64_reg(BPF_ADD, R0, R2));
                match weight {
                    Some(w) => regs::read_into(e, w, R1),
                    None => e.emit(Insn::mov64_imm(R1, 1)),
                }
                add_slot(e, 0, R1);
            }
        }
    }
}

/// Tries at replacing a min/max value that other firings keep changing meanwhile.
const MIN_MAX_TRIES: usize = 4;

/// With r0 = the `[set, value]` slots of min (or max) and r1 = the new value: replace the
/// value when it is unset or r1 is lower (higher), by compare-and-exchange, so a value
/// stored meanwhile by an interrupting firing is compared again rather than overwritten.
fn min_max(e: &mut crate::emit::Emitter, min: bool) {
    let done = e.label();
    let won = e.label();
    e.emit(Insn::mov64_reg(R4, R0));
    for _ in 0..MIN_MAX_TRIES {
        let exchange = e.label();
        e.emit(Insn::ldx(Size::DW, R2, R4, 0));
        e.emit(Insn::ldx(Size::DW, R3, R4, 8));
        e.jmp_imm(BPF_JEQ, R2, 0, exchange);
        let keep = if min { BPF_JSGE } else { BPF_JSLE };
        e.jmp_reg(keep, R1, R3, done);
        e.bind(exchange);
        e.emit(Insn::mov64_reg(R0, R3));
        e.emit(Insn::atomic_cmpxchg(Size::DW, R4, 8, R1));
        e.jmp_reg(BPF_JEQ, R0, R3, won);
    }
    e.goto(done);
    e.bind(won);
    e.emit(Insn::st(Size::DW, R4, 0, 1));
    e.bind(done);
}

/// (r4 low, r5 high) = r1 * r1 as a 128-bit unsigned square of |r1|. Clobbers r2, r3.
fn square_128(e: &mut crate::emit::Emitter) {
    // a = |v| = hi * 2^32 + lo; a² = hi²·2^64 + 2·hi·lo·2^32 + lo².
    e.emit(Insn::mov64_reg(R2, R1));
    e.emit(Insn::jmp_imm(BPF_JSGE, R2, 0, 1));
    e.emit(Insn::alu64_imm(BPF_NEG, R2, 0));
    e.emit(Insn::mov64_reg(R3, R2));
    e.emit(Insn::alu64_imm(BPF_RSH, R3, 32)); // r3 = hi
    e.emit(Insn::alu32_reg(BPF_MOV, R2, R2)); // r2 = lo
    e.emit(Insn::mov64_reg(R4, R2));
    e.emit(Insn::alu64_reg(BPF_MUL, R4, R2)); // r4 = lo²
    e.emit(Insn::mov64_reg(R5, R3));
    e.emit(Insn::alu64_reg(BPF_MUL, R5, R3)); // r5 = hi²
    e.emit(Insn::alu64_reg(BPF_MUL, R2, R3)); // r2 = mid = hi·lo
                                              // Add mid·2^33: low += mid << 33 (with carry), high += mid >> 31.
    e.emit(Insn::mov64_reg(R3, R2));
    e.emit(Insn::alu64_imm(BPF_RSH, R3, 31));
    e.emit(Insn::alu64_reg(BPF_ADD, R5, R3));
    e.emit(Insn::alu64_imm(BPF_LSH, R2, 33));
    e.emit(Insn::alu64_reg(BPF_ADD, R4, R2));
    e.emit(Insn::jmp_reg(BPF_JGE, R4, R2, 1));
    e.emit(Insn::alu64_imm(BPF_ADD, R5, 1));
}

/// r2 = floor(log2(r3)) for r3 > 0. Clobbers r3, r4.
fn log2(e: &mut crate::emit::Emitter) {
    e.emit(Insn::mov64_imm(R2, 0));
    for shift in [32, 16, 8, 4, 2, 1] {
        e.emit(Insn::mov64_reg(R4, R3));
        e.emit(Insn::alu64_imm(BPF_RSH, R4, shift));
        e.emit(Insn::jmp_imm(BPF_JEQ, R4, 0, 2));
        e.emit(Insn::mov64_reg(R3, R4));
        e.emit(Insn::alu64_imm(BPF_ADD, R2, shift));
    }
}

/// r2 = the bucket of value r1 for a quantizing function. Clobbers r3, r4, r5.
fn bucket_index(e: &mut crate::emit::Emitter, kind: &AggFunc) {
    let done = e.label();
    match kind {
        AggFunc::Quantize => {
            let negative = e.label();
            e.emit(Insn::mov64_imm(R2, QUANTIZE_ZERO as i32));
            e.jmp_imm(BPF_JEQ, R1, 0, done);
            e.jmp_imm(BPF_JSLT, R1, 0, negative);
            e.emit(Insn::mov64_reg(R3, R1));
            log2(e);
            e.emit(Insn::alu64_imm(BPF_ADD, R2, QUANTIZE_ZERO as i32 + 1));
            e.goto(done);
            e.bind(negative);
            e.emit(Insn::mov64_reg(R3, R1));
            e.emit(Insn::alu64_imm(BPF_NEG, R3, 0));
            log2(e);
            e.emit(Insn::mov64_reg(R3, R2));
            e.emit(Insn::mov64_imm(R2, QUANTIZE_ZERO as i32 - 1));
            e.emit(Insn::alu64_reg(BPF_SUB, R2, R3));
        }
        AggFunc::Lquantize { base, limit, step } => {
            let levels = (limit - base) / step;
            e.emit(Insn::mov64_imm(R2, 0));
            e.mov_const(R3, *base as u64);
            e.jmp_reg(BPF_JSLT, R1, R3, done);
            e.emit(Insn::mov64_imm(R2, levels as i32 + 1));
            e.mov_const(R3, *limit as u64);
            e.jmp_reg(BPF_JSGE, R1, R3, done);
            e.emit(Insn::mov64_reg(R2, R1));
            e.mov_const(R3, *base as u64);
            e.emit(Insn::alu64_reg(BPF_SUB, R2, R3));
            e.mov_const(R3, *step as u64);
            e.emit(Insn::alu64_reg(BPF_DIV, R2, R3));
            e.emit(Insn::alu64_imm(BPF_ADD, R2, 1));
        }
        AggFunc::Llquantize {
            factor,
            low,
            high,
            nsteps,
        } => {
            let bucket = |v| slots::llquantize_bucket(v, *factor, *low, *high, *nsteps);
            let thresholds = thresholds(bucket, slot_count(kind));
            search(e, &thresholds, 0, thresholds.len(), bucket(i64::MIN), done);
        }
        _ => {}
    }
    e.bind(done);
}

/// For a monotonic bucket function, the least value of each bucket after the first that
/// any value reaches, with its bucket index, in increasing order.
fn thresholds(bucket: impl Fn(i64) -> usize, buckets: usize) -> Vec<(i64, usize)> {
    let mut out = Vec::new();
    for b in bucket(i64::MIN) + 1..buckets {
        if bucket(i64::MAX) < b {
            break;
        }
        // Least v with bucket(v) >= b.
        let (mut lo, mut hi) = (i64::MIN as i128, i64::MAX as i128);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if bucket(mid as i64) >= b {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let v = lo as i64;
        if bucket(v) == b && out.last().is_none_or(|&(last, _)| last < v) {
            out.push((v, b));
        }
    }
    out
}

/// r2 = the bucket of r1 by binary search over `t[lo..hi]`, given that r1 is below
/// `t[hi]` and at or above `t[lo - 1]` (whose bucket is `below`).
fn search(
    e: &mut crate::emit::Emitter,
    t: &[(i64, usize)],
    lo: usize,
    hi: usize,
    below: usize,
    done: crate::emit::Label,
) {
    if lo == hi {
        e.emit(Insn::mov64_imm(R2, below as i32));
        e.goto(done);
        return;
    }
    let mid = lo + (hi - lo) / 2;
    let upper = e.label();
    e.mov_const(R3, t[mid].0 as u64);
    e.jmp_reg(BPF_JSGE, R1, R3, upper);
    search(e, t, lo, mid, below, done);
    e.bind(upper);
    search(e, t, mid + 1, hi, t[mid].1, done);
}

//! The aggregating functions and the kernel slot layout of their values, bucket selection for the
//! quantize family (and each bucket's range of values), and merging of per-CPU values.
//!
//! Each aggregation value is an array of `u64` slots, one array per CPU.  A
//! CPU that never touched a key has all-zero slots.  Layout by function:
//!
//! | function      | slots                                                    |
//! |---------------|----------------------------------------------------------|
//! | `count`       | `[count]`                                                |
//! | `sum`         | `[sum]` (i64, wrapping)                                  |
//! | `avg`         | `[count, sum]`                                           |
//! | `min`, `max`  | `[set, value]`: `set` is 1 once a value was recorded, `value` an i64 |
//! | `stddev`      | `[count, sum, sum_of_squares_low64, sum_of_squares_high64]` (128-bit unsigned sum of squares) |
//! | `quantize`    | 127 buckets, see [`quantize_bucket`], then the sum      |
//! | `lquantize`   | `levels + 2` buckets, see [`lquantize_bucket`], then the sum |
//! | `llquantize`  | `2 * (high - low + 1) * (nsteps - nsteps / factor) + 3` buckets, see [`llquantize_bucket`], then the sum |
//!
//! Bucket slots hold i64 counts (an increment may be negative). A histogram's last slot,
//! past its buckets ([`sum_slot`]), holds the sum of its values, each times its increment
//! (i64, wrapping): DTrace prints only the buckets, the Prometheus endpoint serves the sum.

/// An aggregating function with its static parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggFunc {
    Count,
    Sum,
    Avg,
    Min,
    Max,
    Stddev,
    Quantize,
    Lquantize {
        base: i64,
        limit: i64,
        step: i64,
    },
    Llquantize {
        factor: u64,
        low: u64,
        high: u64,
        nsteps: u64,
    },
}

impl AggFunc {
    /// Whether values print as a histogram.
    pub fn is_histogram(&self) -> bool {
        matches!(
            self,
            AggFunc::Quantize | AggFunc::Lquantize { .. } | AggFunc::Llquantize { .. }
        )
    }

    /// The function's D name.
    pub fn name(&self) -> &'static str {
        match self {
            AggFunc::Count => "count",
            AggFunc::Sum => "sum",
            AggFunc::Avg => "avg",
            AggFunc::Min => "min",
            AggFunc::Max => "max",
            AggFunc::Stddev => "stddev",
            AggFunc::Quantize => "quantize",
            AggFunc::Lquantize { .. } => "lquantize",
            AggFunc::Llquantize { .. } => "llquantize",
        }
    }
}

/// Number of `quantize()` buckets.
pub const QUANTIZE_BUCKETS: usize = 127;
/// Index of the `quantize()` bucket for 0.
pub const QUANTIZE_ZERO: usize = 63;

/// Number of slots of one value of `func`: a histogram's buckets and its sum.
pub fn slot_count(func: &AggFunc) -> usize {
    match *func {
        AggFunc::Count | AggFunc::Sum => 1,
        AggFunc::Avg | AggFunc::Min | AggFunc::Max => 2,
        AggFunc::Stddev => 4,
        _ => bucket_count(func) + 1,
    }
}

/// Number of buckets of a histogram value of `func` (0 for other functions).
pub fn bucket_count(func: &AggFunc) -> usize {
    match *func {
        AggFunc::Count
        | AggFunc::Sum
        | AggFunc::Avg
        | AggFunc::Min
        | AggFunc::Max
        | AggFunc::Stddev => 0,
        AggFunc::Quantize => QUANTIZE_BUCKETS,
        AggFunc::Lquantize { base, limit, step } => {
            lquantize_levels(base, limit, step) as usize + 2
        }
        AggFunc::Llquantize {
            factor,
            low,
            high,
            nsteps,
        } => LlqShape::new(factor, low, high, nsteps).nbins(),
    }
}

/// The slot of a histogram value of `func` holding the sum of its values (`None` for
/// other functions).
pub fn sum_slot(func: &AggFunc) -> Option<usize> {
    func.is_histogram().then(|| bucket_count(func))
}

/// The bucket slots of `data`, a histogram value of `func` (empty for other functions).
pub fn buckets<'a>(func: &AggFunc, data: &'a [u64]) -> &'a [u64] {
    &data[..bucket_count(func).min(data.len())]
}

/// The sum of the values of `data`, a histogram value of `func` (0 for other functions).
pub fn histogram_sum(func: &AggFunc, data: &[u64]) -> i64 {
    sum_slot(func)
        .and_then(|i| data.get(i))
        .map_or(0, |&s| s as i64)
}

/// The value a `quantize()` bucket stands for: 0 for the zero bucket,
/// ±2^n either side of it.  Bucket 0 holds every value <= -2^62 and bucket
/// 126 every value >= 2^62.
pub fn quantize_bucket_value(bucket: usize) -> i64 {
    match bucket.cmp(&QUANTIZE_ZERO) {
        std::cmp::Ordering::Less => -(1i64 << (QUANTIZE_ZERO - 1 - bucket)),
        std::cmp::Ordering::Equal => 0,
        std::cmp::Ordering::Greater => 1i64 << (bucket - QUANTIZE_ZERO - 1),
    }
}

/// The `quantize()` bucket of `v`: 63 for 0; 64 + log2(v) for v > 0;
/// 62 - log2(-v) for v < 0 (so -1 is bucket 62, -2 and -3 bucket 61),
/// clamped to 0..=126.
pub fn quantize_bucket(v: i64) -> usize {
    let log2 = |a: u64| 63 - a.leading_zeros() as usize;
    match v.cmp(&0) {
        std::cmp::Ordering::Equal => QUANTIZE_ZERO,
        std::cmp::Ordering::Greater => {
            (QUANTIZE_ZERO + 1 + log2(v as u64)).min(QUANTIZE_BUCKETS - 1)
        }
        std::cmp::Ordering::Less => (QUANTIZE_ZERO - 1).saturating_sub(log2(v.unsigned_abs())),
    }
}

/// `lquantize()` levels: `(limit - base) / step`.
pub fn lquantize_levels(base: i64, limit: i64, step: i64) -> i64 {
    ((limit - base) / step.max(1)).max(0)
}

/// The `lquantize()` bucket of `v`: 0 when `v < base`; `1 + i` when
/// `base + i*step <= v < base + (i+1)*step`; `levels + 1` when
/// `v >= base + levels*step`.
pub fn lquantize_bucket(v: i64, base: i64, limit: i64, step: i64) -> usize {
    let levels = i128::from(lquantize_levels(base, limit, step));
    let (v, base, step) = (i128::from(v), i128::from(base), i128::from(step.max(1)));
    if v < base {
        0
    } else if v >= base + levels * step {
        levels as usize + 1
    } else {
        ((v - base) / step) as usize + 1
    }
}

/// Geometry of an `llquantize(factor, low, high, nsteps)` value (Oracle
/// DTrace's layout, symmetric around zero):
///
/// * bucket 0: values `<= -factor^(high+1)`;
/// * then, for magnitudes `high` down to `low`, the negative steps;
/// * bucket `bin0` (the middle): `|v| < factor^low`;
/// * then, for magnitudes `low` up to `high`, the positive steps: the range
///   `[factor^m, factor^(m+1))` is cut into `nsteps` steps of
///   `factor^(m+1) / nsteps`, of which the first `nsteps / factor` lie below
///   `factor^m` and are left out;
/// * the last bucket: values `>= factor^(high+1)`.
#[derive(Debug, Clone, Copy)]
pub struct LlqShape {
    pub factor: u128,
    pub low: u32,
    pub high: u32,
    pub nsteps: u128,
}

impl LlqShape {
    pub fn new(factor: u64, low: u64, high: u64, nsteps: u64) -> LlqShape {
        LlqShape {
            factor: u128::from(factor.max(2)),
            low: low.min(126) as u32,
            high: high.clamp(low, 126) as u32,
            nsteps: u128::from(nsteps.max(1)),
        }
    }

    /// Steps of a magnitude that lie below it.
    pub fn skipped(&self) -> u128 {
        self.nsteps / self.factor
    }

    /// Buckets per magnitude.
    fn per_magnitude(&self) -> usize {
        (self.nsteps - self.skipped()) as usize
    }

    /// Buckets on one side of zero, excluding the overflow bucket.
    fn side(&self) -> usize {
        (self.high - self.low + 1) as usize * self.per_magnitude()
    }

    /// The middle bucket (`|v| < factor^low`).
    pub fn bin0(&self) -> usize {
        1 + self.side()
    }

    pub fn nbins(&self) -> usize {
        2 * self.side() + 3
    }

    /// `factor^exp`, saturating.
    pub fn pow(&self, exp: u32) -> u128 {
        self.factor.saturating_pow(exp)
    }

    /// Distance from `bin0` of the bucket holding magnitude `a`.
    fn offset(&self, a: u128) -> usize {
        if a < self.pow(self.low) {
            return 0;
        }
        if a >= self.pow(self.high + 1) {
            return self.side() + 1;
        }
        let mut m = self.low;
        while a >= self.pow(m + 1) {
            m += 1;
        }
        let step = (a * self.nsteps / self.pow(m + 1) - self.skipped()) as usize;
        1 + (m - self.low) as usize * self.per_magnitude() + step
    }
}

/// The `llquantize()` bucket of `v` (see the layout on [`LlqShape`]).
pub fn llquantize_bucket(v: i64, factor: u64, low: u64, high: u64, nsteps: u64) -> usize {
    let shape = LlqShape::new(factor, low, high, nsteps);
    let off = shape.offset(u128::from(v.unsigned_abs()));
    if v < 0 {
        shape.bin0() - off
    } else {
        shape.bin0() + off
    }
}

/// The bucket of `v` in a histogram value of `func` (0 for other functions).
pub fn bucket_of(func: &AggFunc, v: i64) -> usize {
    match *func {
        AggFunc::Quantize => quantize_bucket(v),
        AggFunc::Lquantize { base, limit, step } => lquantize_bucket(v, base, limit, step),
        AggFunc::Llquantize {
            factor,
            low,
            high,
            nsteps,
        } => llquantize_bucket(v, factor, low, high, nsteps),
        _ => 0,
    }
}

/// The values bucket `i` of a histogram value of `func` holds: `(min, max)`, inclusive
/// (`i64::MIN` and `i64::MAX` at the open ends); `None` for a bucket no integer falls in
/// (`llquantize()`'s steps below a magnitude) or past the last.
///
/// Bucket functions are monotonic in the value, so the bounds are found by bisection
/// rather than by a second copy of each layout.
pub fn bucket_range(func: &AggFunc, i: usize) -> Option<(i64, i64)> {
    // The smallest value whose bucket is `i` or later.
    let first = |i: usize| -> Option<i64> {
        if bucket_of(func, i64::MAX) < i {
            return None;
        }
        let (mut lo, mut hi) = (i128::from(i64::MIN), i128::from(i64::MAX));
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if bucket_of(func, mid as i64) >= i {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Some(lo as i64)
    };
    let min = first(i)?;
    let max = first(i + 1).map_or(i64::MAX, |next| next - 1);
    (min <= max && bucket_of(func, min) == i).then_some((min, max))
}

/// Merge per-CPU slot arrays into one: counts and sums add up (the 128-bit
/// stddev sum of squares with carry); `min`/`max` take the extreme over the
/// CPUs whose `set` slot is 1.
pub fn merge(func: &AggFunc, percpu: &[&[u64]]) -> Vec<u64> {
    let n = slot_count(func);
    let slot = |cpu: &[u64], i: usize| cpu.get(i).copied().unwrap_or(0);
    match func {
        AggFunc::Min | AggFunc::Max => {
            let values = percpu
                .iter()
                .filter(|cpu| slot(cpu, 0) == 1)
                .map(|cpu| slot(cpu, 1) as i64);
            let best = if *func == AggFunc::Min {
                values.min()
            } else {
                values.max()
            };
            best.map_or(vec![0, 0], |v| vec![1, v as u64])
        }
        AggFunc::Stddev => {
            let mut out = vec![0u64; 4];
            let mut squares = 0u128;
            for cpu in percpu {
                out[0] = out[0].wrapping_add(slot(cpu, 0));
                out[1] = out[1].wrapping_add(slot(cpu, 1));
                let sq = u128::from(slot(cpu, 2)) | u128::from(slot(cpu, 3)) << 64;
                squares = squares.wrapping_add(sq);
            }
            out[2] = squares as u64;
            out[3] = (squares >> 64) as u64;
            out
        }
        _ => (0..n)
            .map(|i| {
                percpu
                    .iter()
                    .fold(0u64, |acc, cpu| acc.wrapping_add(slot(cpu, i)))
            })
            .collect(),
    }
}

/// DTrace's integer standard deviation of a `[count, sum, sumsq_lo,
/// sumsq_hi]` value, each datum divided by `normal`:
/// `sqrt(sumsq/normal/count - (sum/normal/count)^2)`, in integer arithmetic.
pub fn stddev(data: &[u64], normal: u64) -> u64 {
    let count = data[0];
    if count == 0 {
        return 0;
    }
    let squares = u128::from(data[2]) | u128::from(data[3]) << 64;
    let avg_of_squares = squares / u128::from(normal) / u128::from(count);
    let avg = (data[1] as i64)
        .wrapping_div(normal as i64)
        .wrapping_div(count as i64)
        .unsigned_abs();
    let square_of_avg = u128::from(avg) * u128::from(avg);
    avg_of_squares.wrapping_sub(square_of_avg).isqrt() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantize_buckets() {
        assert_eq!(quantize_bucket(0), 63);
        assert_eq!(quantize_bucket(1), 64);
        assert_eq!(quantize_bucket(2), 65);
        assert_eq!(quantize_bucket(3), 65);
        assert_eq!(quantize_bucket(4), 66);
        assert_eq!(quantize_bucket(i64::MAX), 126);
        assert_eq!(quantize_bucket(-1), 62);
        assert_eq!(quantize_bucket(-2), 61);
        assert_eq!(quantize_bucket(-3), 61);
        assert_eq!(quantize_bucket(-4), 60);
        assert_eq!(quantize_bucket(i64::MIN), 0);
        assert_eq!(quantize_bucket(-(1 << 62)), 0);
        for b in 0..QUANTIZE_BUCKETS {
            assert_eq!(quantize_bucket(quantize_bucket_value(b)), b);
        }
    }

    #[test]
    fn lquantize_buckets() {
        assert_eq!(lquantize_bucket(-1, 0, 10, 2), 0);
        assert_eq!(lquantize_bucket(0, 0, 10, 2), 1);
        assert_eq!(lquantize_bucket(1, 0, 10, 2), 1);
        assert_eq!(lquantize_bucket(9, 0, 10, 2), 5);
        assert_eq!(lquantize_bucket(10, 0, 10, 2), 6);
        // limit not a multiple of step: the last level ends at base + levels*step.
        assert_eq!(lquantize_bucket(9, 0, 10, 3), 4);
        assert_eq!(
            bucket_count(&AggFunc::Lquantize {
                base: 0,
                limit: 10,
                step: 2
            }),
            7
        );
    }

    #[test]
    fn llquantize_buckets() {
        // factor 4, magnitudes 0..1, 2 steps: bin0 = 5, 11 buckets.
        let b = |v| llquantize_bucket(v, 4, 0, 1, 2);
        assert_eq!(
            bucket_count(&AggFunc::Llquantize {
                factor: 4,
                low: 0,
                high: 1,
                nsteps: 2
            }),
            11
        );
        assert_eq!(
            [b(0), b(1), b(2), b(3), b(4), b(7), b(8), b(15), b(16)],
            [5, 6, 7, 7, 8, 8, 9, 9, 10]
        );
        assert_eq!([b(-1), b(-3), b(-16), b(i64::MIN)], [4, 3, 0, 0]);
        // factor 10, magnitudes 0..6, 20 steps: 1..9 use every other bucket.
        let c = |v| llquantize_bucket(v, 10, 0, 6, 20);
        assert_eq!(
            [c(1), c(2), c(9), c(10), c(14), c(15), c(100)],
            [128, 130, 144, 146, 146, 147, 164]
        );
    }

    #[test]
    fn bucket_ranges() {
        let q = AggFunc::Quantize;
        assert_eq!(bucket_range(&q, QUANTIZE_ZERO), Some((0, 0)));
        assert_eq!(bucket_range(&q, 65), Some((2, 3)));
        assert_eq!(bucket_range(&q, 61), Some((-3, -2)));
        assert_eq!(bucket_range(&q, 0), Some((i64::MIN, -(1 << 62))));
        assert_eq!(bucket_range(&q, 126), Some((1 << 62, i64::MAX)));
        assert_eq!(bucket_range(&q, 127), None);
        let l = AggFunc::Lquantize {
            base: 0,
            limit: 10,
            step: 2,
        };
        assert_eq!(bucket_range(&l, 0), Some((i64::MIN, -1)));
        assert_eq!(bucket_range(&l, 3), Some((4, 5)));
        assert_eq!(bucket_range(&l, 6), Some((10, i64::MAX)));
        // factor 10, 20 steps: values 1..9 use every other bucket, the others hold none.
        let ll = AggFunc::Llquantize {
            factor: 10,
            low: 0,
            high: 6,
            nsteps: 20,
        };
        let two = llquantize_bucket(2, 10, 0, 6, 20);
        assert_eq!(bucket_range(&ll, two), Some((2, 2)));
        assert_eq!(bucket_range(&ll, two - 1), None);
        assert_eq!(
            bucket_range(&ll, llquantize_bucket(14, 10, 0, 6, 20)),
            Some((10, 14))
        );
    }

    #[test]
    fn histograms_keep_their_sum_past_the_buckets() {
        let q = AggFunc::Quantize;
        assert_eq!(slot_count(&q), QUANTIZE_BUCKETS + 1);
        assert_eq!(sum_slot(&q), Some(QUANTIZE_BUCKETS));
        assert_eq!(sum_slot(&AggFunc::Avg), None);
        let mut data = vec![0u64; slot_count(&q)];
        data[quantize_bucket(5)] = 2;
        data[QUANTIZE_BUCKETS] = (-7i64) as u64;
        assert_eq!(buckets(&q, &data).len(), QUANTIZE_BUCKETS);
        assert_eq!(histogram_sum(&q, &data), -7);
        let merged = merge(&q, &[&data, &data]);
        assert_eq!(histogram_sum(&q, &merged), -14);
        assert_eq!(buckets(&q, &merged)[quantize_bucket(5)], 4);
        assert_eq!(histogram_sum(&AggFunc::Sum, &[3]), 0);
        assert!(buckets(&AggFunc::Sum, &[3]).is_empty());
    }

    #[test]
    fn merging() {
        assert_eq!(merge(&AggFunc::Count, &[&[2], &[0], &[3]]), vec![5]);
        assert_eq!(
            merge(&AggFunc::Min, &[&[1, 5], &[0, 0], &[1, (-3i64) as u64]]),
            vec![1, (-3i64) as u64]
        );
        assert_eq!(
            merge(&AggFunc::Max, &[&[0, 0], &[1, (-3i64) as u64]]),
            vec![1, (-3i64) as u64]
        );
        assert_eq!(merge(&AggFunc::Max, &[&[0, 0]]), vec![0, 0]);
        assert_eq!(
            merge(&AggFunc::Stddev, &[&[1, 2, u64::MAX, 0], &[1, 3, 1, 0]]),
            vec![2, 5, 0, 1]
        );
    }

    #[test]
    fn standard_deviation() {
        // values 2, 4, 4, 4, 5, 5, 7, 9: stddev 2.
        let vals = [2u64, 4, 4, 4, 5, 5, 7, 9];
        let sq: u64 = vals.iter().map(|v| v * v).sum();
        assert_eq!(stddev(&[8, 40, sq, 0], 1), 2);
        assert_eq!(stddev(&[0, 0, 0, 0], 1), 0);
    }
}

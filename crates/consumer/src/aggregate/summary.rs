//! Aggregation values as data rather than text, for machine-readable outputs: each
//! function's value after normalization, as DTrace's default layout prints it, and the
//! quantize family as lists of buckets with the values each holds.

use dtrace_abi::slots::{bucket_range, buckets, stddev};

use super::AggFunc;

/// One aggregation value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Summary {
    /// `count`, `sum`, `min`, `max`: the value.
    Scalar(i64),
    /// `avg` and `stddev`: the value DTrace prints, with the count and sum it comes from.
    Mean { value: i64, count: u64, sum: i64 },
    /// The quantize family: the buckets holding a non-zero count, in order.
    Histogram(Vec<Bucket>),
}

/// One histogram bucket: the values it holds (inclusive) and its count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bucket {
    pub min: i64,
    pub max: i64,
    pub count: i64,
}

/// The value of slots `data` of `func`, divided by the normalization factor `normal`.
pub fn summary(func: &AggFunc, data: &[u64], normal: u64) -> Summary {
    let slot = |i: usize| data.get(i).copied().unwrap_or(0);
    let normal = normal.max(1);
    let per = |v: u64| (v as i64).wrapping_div(normal as i64);
    match func {
        AggFunc::Count | AggFunc::Sum => Summary::Scalar((slot(0) / normal) as i64),
        AggFunc::Min | AggFunc::Max => Summary::Scalar((slot(1) / normal) as i64),
        AggFunc::Avg => Summary::Mean {
            value: per(slot(1)).checked_div(slot(0) as i64).unwrap_or(0),
            count: slot(0),
            sum: per(slot(1)),
        },
        AggFunc::Stddev => Summary::Mean {
            value: stddev(data, normal) as i64,
            count: slot(0),
            sum: per(slot(1)),
        },
        _ => Summary::Histogram(
            buckets(func, data)
                .iter()
                .enumerate()
                .filter(|(_, &c)| c != 0)
                .filter_map(|(i, &c)| {
                    let (min, max) = bucket_range(func, i)?;
                    Some(Bucket {
                        min,
                        max,
                        count: per(c),
                    })
                })
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtrace_abi::slots::{quantize_bucket, slot_count};

    #[test]
    fn scalars_and_means() {
        assert_eq!(summary(&AggFunc::Count, &[6], 2), Summary::Scalar(3));
        assert_eq!(
            summary(&AggFunc::Max, &[1, (-4i64) as u64], 1),
            Summary::Scalar(-4)
        );
        assert_eq!(
            summary(&AggFunc::Avg, &[4, 10], 1),
            Summary::Mean {
                value: 2,
                count: 4,
                sum: 10
            }
        );
    }

    #[test]
    fn histograms_list_buckets_with_bounds() {
        let mut data = vec![0u64; slot_count(&AggFunc::Quantize)];
        data[quantize_bucket(0)] = 1;
        data[quantize_bucket(5)] = 2;
        data[quantize_bucket(-1)] = 3;
        let Summary::Histogram(buckets) = summary(&AggFunc::Quantize, &data, 1) else {
            panic!("a histogram");
        };
        let b = |min, max, count| Bucket { min, max, count };
        assert_eq!(buckets, vec![b(-1, -1, 3), b(0, 0, 1), b(4, 7, 2)]);
    }
}

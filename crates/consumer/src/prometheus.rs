//! Aggregations in Prometheus's text exposition format (version 0.0.4), for a scrape of a
//! running `dtrace` (`-x prometheus`; `docs/PROMETHEUS.md` is the user's side of it).
//!
//! An [`Exporter`] reads the aggregation maps through [`AggregationMaps`] as the consumer
//! does for `printa()` — same snapshot, same per-CPU merge, same symbols — but with state
//! of its own, so that whoever serves it can run it on another thread than the tracing
//! loop's: nothing is shared with the [`crate::Consumer`], and a scrape waits for nobody.
//!
//! Mapping: each aggregation is a metric family named `PREFIX` + its name (`@` is
//! `PREFIX` + `agg`); its keys are labels (`key0`, `key1`, ... unless named, see
//! [`Naming::set_labels`]), a stack key's value its folded stack
//! ([`crate::aggregate::folded`]); `count()` is a counter (`_total`), `sum()`, `min()`,
//! `max()`, `avg()` and `stddev()` gauges, the quantize family histograms. The drop
//! counters are `PREFIX` + `drops_total{kind=...}`. Values are not normalized:
//! `normalize()` changes what `dtrace` prints, not what it serves.

use std::collections::BTreeMap;
use std::fmt::Write;

use dtrace_abi::desc;
use dtrace_abi::record::DropKind;
use dtrace_abi::slots::{bucket_count, bucket_range, buckets, histogram_sum};

use crate::aggregate::folded::key_text;
use crate::aggregate::{merge, summary, AggFunc, Aggregation, Aggregations, Summary};
use crate::symbolize::Symbolizer;
use crate::{decode, AggregationMaps};

/// The `Content-Type` of what [`Exporter::scrape`] returns.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// How metric families and labels are named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Naming {
    /// Put before each aggregation's name (`promprefix`, default `dtrace_`).
    pub prefix: String,
    /// Label names of the keys of aggregations, by aggregation name (`promlabels`).
    labels: Vec<(String, Vec<String>)>,
}

impl Default for Naming {
    fn default() -> Naming {
        Naming {
            prefix: "dtrace_".into(),
            labels: Vec::new(),
        }
    }
}

impl Naming {
    /// `promprefix=PREFIX`: a valid start of a metric name (letters, digits, `_` and `:`,
    /// not starting with a digit), or empty.
    pub fn set_prefix(&mut self, prefix: &str) -> Result<(), String> {
        let ok = prefix.chars().enumerate().all(|(i, c)| {
            c.is_ascii_alphabetic() || c == '_' || c == ':' || (i > 0 && c.is_ascii_digit())
        });
        if !ok {
            return Err(format!(
                "\"{prefix}\" cannot start a Prometheus metric name"
            ));
        }
        self.prefix = prefix.to_string();
        Ok(())
    }

    /// `promlabels=[@]NAME:LABEL,LABEL...`: the label names of aggregation `@NAME`'s keys, in
    /// order (keys past the list keep `keyN`). A label name is a C identifier not starting
    /// with `__`, other than `le`, and names one key only.
    pub fn set_labels(&mut self, spec: &str) -> Result<(), String> {
        let (agg, names) = spec
            .split_once(':')
            .ok_or_else(|| format!("\"{spec}\" is not AGGREGATION:LABEL,LABEL..."))?;
        let agg = agg.strip_prefix('@').unwrap_or(agg);
        let names: Vec<String> = names.split(',').map(str::to_string).collect();
        for (i, name) in names.iter().enumerate() {
            let ident = name
                .chars()
                .enumerate()
                .all(|(j, c)| c.is_ascii_alphabetic() || c == '_' || (j > 0 && c.is_ascii_digit()));
            if !ident || name.is_empty() || name.starts_with("__") || name == "le" {
                return Err(format!("\"{name}\" cannot be a Prometheus label name"));
            }
            if names[..i].contains(name) {
                return Err(format!("label \"{name}\" is given twice"));
            }
        }
        self.labels.retain(|(a, _)| a != agg);
        self.labels.push((agg.to_string(), names));
        Ok(())
    }

    /// Whether these names fit the aggregations `descs`: each aggregation `promlabels`
    /// names exists, and no two metric names served are alike (`@a = count()` and
    /// `@a_total = sum()`, `@h = quantize()` and `@h_sum`, `@drops = count()` and the drop
    /// counters), which Prometheus would refuse. The error is the reason.
    pub fn check(&self, descs: &[desc::Aggregation]) -> Result<(), String> {
        if let Some((unknown, _)) = self
            .labels
            .iter()
            .find(|(name, _)| !descs.iter().any(|d| d.name == *name))
        {
            return Err(format!("the program has no aggregation @{unknown}"));
        }
        let mut served: Vec<(String, String)> =
            vec![(self.drops_family(), "the drop counters".into())];
        for d in descs {
            let family = self.family(&d.name, &d.func);
            let names = match d.func.is_histogram() {
                true => ["", "_bucket", "_sum", "_count"]
                    .iter()
                    .map(|suffix| format!("{family}{suffix}"))
                    .collect(),
                false => vec![family],
            };
            for name in names {
                if let Some((_, other)) = served.iter().find(|(n, _)| *n == name) {
                    return Err(format!("@{} and {other} are both served as {name}", d.name));
                }
                served.push((name, format!("@{}", d.name)));
            }
        }
        Ok(())
    }

    /// The label of key `i` of aggregation `agg`.
    fn label(&self, agg: &str, i: usize) -> String {
        self.labels
            .iter()
            .find(|(a, _)| a == agg)
            .and_then(|(_, names)| names.get(i).cloned())
            .unwrap_or_else(|| format!("key{i}"))
    }

    /// The metric family of aggregation `agg` of `func` (a counter's ends in `_total`).
    fn family(&self, agg: &str, func: &AggFunc) -> String {
        let name = if agg.is_empty() { "agg" } else { agg };
        let total = if *func == AggFunc::Count {
            "_total"
        } else {
            ""
        };
        format!("{}{name}{total}", self.prefix)
    }

    /// The metric family of the drop counters.
    fn drops_family(&self) -> String {
        format!("{}drops_total", self.prefix)
    }
}

/// The drop counters served, with their `kind` labels.
const DROP_KINDS: [(DropKind, &str); 8] = [
    (DropKind::Record, "principal"),
    (DropKind::Aggregation, "aggregation"),
    (DropKind::Dynamic, "dynamic"),
    (DropKind::Nested, "nested"),
    (DropKind::ErrorInError, "dblerror"),
    (DropKind::Speculative, "speculative"),
    (DropKind::SpecBusy, "specbusy"),
    (DropKind::SpecUnavail, "specunavail"),
];

/// The exposition of one run's aggregations, scrape after scrape.
pub struct Exporter {
    descs: Vec<desc::Aggregation>,
    aggs: Aggregations,
    naming: Naming,
    symbols: Symbolizer,
    /// Per aggregation: each bucket's bounds, for the quantize family.
    bounds: Vec<Vec<Option<(i64, i64)>>>,
    /// Per aggregation: the buckets served so far. The range only grows, so a bucket
    /// series once served stays, as Prometheus's histogram functions need.
    shown: Vec<Option<(usize, usize)>>,
}

impl Exporter {
    pub fn new(descs: &[desc::Aggregation], naming: Naming) -> Exporter {
        let bounds = descs
            .iter()
            .map(|d| match d.func.is_histogram() {
                true => (0..bucket_count(&d.func))
                    .map(|i| bucket_range(&d.func, i))
                    .collect(),
                false => Vec::new(),
            })
            .collect();
        Exporter {
            descs: descs.to_vec(),
            aggs: Aggregations::new(descs),
            naming,
            symbols: Symbolizer::new(),
            bounds,
            shown: vec![None; descs.len()],
        }
    }

    /// Every aggregation as it is now in `maps`, then the drop counters (`drops`: the drop
    /// counter map's value on each CPU).
    pub fn scrape(&mut self, maps: &dyn AggregationMaps, drops: &[Vec<u8>]) -> String {
        let named = self.aggs.see_processes(maps, &mut self.symbols);
        let aggs = self.aggs.all(maps, &mut self.symbols);
        self.symbols.retain_processes(&named);
        self.exposition(&aggs, drops)
    }

    /// The exposition of aggregations `aggs` (numbered as the descriptions) and `drops`.
    fn exposition(&mut self, aggs: &[Aggregation], drops: &[Vec<u8>]) -> String {
        let mut out = String::new();
        for (i, agg) in aggs.iter().enumerate() {
            self.write_family(&mut out, i, agg);
        }
        let family = self.naming.drops_family();
        header(&mut out, &family, "counter", "Data dropped, by kind.");
        for (kind, name) in DROP_KINDS {
            let total: u64 = drops.iter().map(|cpu| decode::drops(cpu, kind)).sum();
            let _ = writeln!(out, "{family}{{kind=\"{name}\"}} {total}");
        }
        out
    }

    fn write_family(&mut self, out: &mut String, i: usize, agg: &Aggregation) {
        let desc = &self.descs[i];
        let labels: Vec<String> = (0..desc.keys.len())
            .map(|k| self.naming.label(&agg.name, k))
            .collect();
        // Rows whose labels are alike (stacks that fold alike) are one series.
        let mut series: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for row in agg.rows() {
            let pairs: Vec<String> = labels
                .iter()
                .zip(&row.key)
                .map(|(l, v)| format!("{l}=\"{}\"", escape_label(&key_text(v))))
                .collect();
            let key = pairs.join(",");
            let data = match series.remove(&key) {
                Some(before) => merge(&agg.func, &[&before, &row.data]),
                None => row.data.clone(),
            };
            series.insert(key, data);
        }
        let family = self.naming.family(&agg.name, &agg.func);
        let what = match labels.is_empty() {
            true => format!("{}() of @{}.", agg.func.name(), agg.name),
            false => format!(
                "{}() of @{} by {}.",
                agg.func.name(),
                agg.name,
                labels.join(", ")
            ),
        };
        match agg.func {
            AggFunc::Count => {
                header(out, &family, "counter", &what);
                for (key, data) in &series {
                    let _ = writeln!(out, "{family}{} {}", braces(key), data[0]);
                }
            }
            func if func.is_histogram() => {
                header(out, &family, "histogram", &what);
                for data in series.values() {
                    self.shown[i] = grow(self.shown[i], buckets(&func, data));
                }
                for (key, data) in &series {
                    self.write_histogram(out, &family, i, key, &func, data);
                }
            }
            func => {
                header(out, &family, "gauge", &what);
                for (key, data) in &series {
                    let value = match summary(&func, data, 1) {
                        Summary::Scalar(v) | Summary::Mean { value: v, .. } => v,
                        Summary::Histogram(_) => unreachable!("not a histogram function"),
                    };
                    let _ = writeln!(out, "{family}{} {value}", braces(key));
                }
            }
        }
    }

    /// One series of a histogram of `func`: cumulative buckets up to `+Inf`, `_sum` (the
    /// sum the kernel keeps past the buckets) and `_count`.
    fn write_histogram(
        &self,
        out: &mut String,
        family: &str,
        i: usize,
        key: &str,
        func: &AggFunc,
        data: &[u64],
    ) {
        let bounds = &self.bounds[i];
        let sep = if key.is_empty() { "" } else { "," };
        let mut cumulative: i64 = 0;
        for (b, &count) in buckets(func, data).iter().enumerate() {
            cumulative = cumulative.wrapping_add(count as i64);
            let Some((_, max)) = bounds.get(b).copied().flatten() else {
                continue;
            };
            let shown = self.shown[i].is_some_and(|(first, last)| (first..=last).contains(&b));
            if shown && max != i64::MAX {
                let _ = writeln!(
                    out,
                    "{family}_bucket{{{key}{sep}le=\"{max}\"}} {cumulative}"
                );
            }
        }
        let _ = writeln!(out, "{family}_bucket{{{key}{sep}le=\"+Inf\"}} {cumulative}");
        let sum = histogram_sum(func, data);
        let _ = writeln!(out, "{family}_sum{} {sum}", braces(key));
        let _ = writeln!(out, "{family}_count{} {cumulative}", braces(key));
    }
}

/// The buckets of `data` holding counts, added to the range `shown`.
fn grow(shown: Option<(usize, usize)>, data: &[u64]) -> Option<(usize, usize)> {
    let first = data.iter().position(|&c| c != 0);
    let last = data.iter().rposition(|&c| c != 0);
    match (shown, first.zip(last)) {
        (Some((a, b)), Some((first, last))) => Some((a.min(first), b.max(last))),
        (shown, None) => shown,
        (None, found) => found,
    }
}

/// `# HELP` and `# TYPE` of a family.
fn header(out: &mut String, family: &str, kind: &str, help: &str) {
    let help = help.replace('\\', "\\\\").replace('\n', "\\n");
    let _ = writeln!(out, "# HELP {family} {help}");
    let _ = writeln!(out, "# TYPE {family} {kind}");
}

/// A label set in braces; nothing for none.
fn braces(labels: &str) -> String {
    match labels.is_empty() {
        true => String::new(),
        false => format!("{{{labels}}}"),
    }
}

/// A label value as the format quotes it.
fn escape_label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Frame, Place, Value};
    use dtrace_abi::datum::ValueType;
    use dtrace_abi::slots::{quantize_bucket, slot_count, sum_slot};

    fn desc(name: &str, func: AggFunc, keys: usize) -> desc::Aggregation {
        let int = ValueType::Integer {
            size: 8,
            signed: true,
            name: "int64_t".into(),
        };
        desc::Aggregation {
            name: name.into(),
            func,
            keys: (0..keys)
                .map(|i| desc::Field {
                    offset: 8 * i as u32,
                    ty: int.clone(),
                })
                .collect(),
            key_size: 8 * keys as u32,
            slots: slot_count(&func),
        }
    }

    fn stack(symbol: &str, offset: u64) -> Value {
        let frame = |symbol: &str, offset| Frame {
            address: 0x1000 + offset,
            place: Place::Symbol {
                module: "a.out".into(),
                symbol: symbol.into(),
                offset,
            },
        };
        Value::Stack {
            raw: vec![0x1000 + offset],
            frames: vec![frame(symbol, offset), frame("main", 8)],
        }
    }

    /// A `quantize()` value of `values`, as the kernel keeps it: buckets and sum.
    fn quantized(values: &[i64]) -> Vec<u64> {
        let mut data = vec![0u64; slot_count(&AggFunc::Quantize)];
        let sum = sum_slot(&AggFunc::Quantize).unwrap();
        for &v in values {
            data[quantize_bucket(v)] += 1;
            data[sum] = data[sum].wrapping_add(v as u64);
        }
        data
    }

    #[test]
    fn golden_exposition() {
        let descs = [
            desc("reads", AggFunc::Count, 2),
            desc("lat", AggFunc::Quantize, 0),
            desc("", AggFunc::Max, 1),
        ];
        let mut naming = Naming::default();
        naming.set_labels("@reads:exec").unwrap();
        let mut exporter = Exporter::new(&descs, naming);
        let mut reads = Aggregation::new("reads", AggFunc::Count);
        reads.set(vec![Value::str("cat"), Value::i32(-1)], vec![3]);
        reads.set(vec![Value::str("a\"b\\c"), Value::u64(2)], vec![1]);
        let mut lat = Aggregation::new("lat", AggFunc::Quantize);
        lat.set(vec![], quantized(&[0, 5, 5, 100]));
        let mut max = Aggregation::new("", AggFunc::Max);
        max.set(vec![stack("hot", 4)], vec![1, 7]);
        max.set(vec![stack("hot", 9)], vec![1, 9]);
        let mut drops = vec![0u8; 8 * DropKind::COUNT as usize];
        drops[DropKind::Record.offset()] = 2;
        let cpus = [drops.clone(), drops];
        let text = exporter.exposition(&[reads, lat, max], &cpus);
        let expected = r#"# HELP dtrace_reads_total count() of @reads by exec, key1.
# TYPE dtrace_reads_total counter
dtrace_reads_total{exec="a\"b\\c",key1="2"} 1
dtrace_reads_total{exec="cat",key1="-1"} 3
# HELP dtrace_lat quantize() of @lat.
# TYPE dtrace_lat histogram
dtrace_lat_bucket{le="0"} 1
dtrace_lat_bucket{le="1"} 1
dtrace_lat_bucket{le="3"} 1
dtrace_lat_bucket{le="7"} 3
dtrace_lat_bucket{le="15"} 3
dtrace_lat_bucket{le="31"} 3
dtrace_lat_bucket{le="63"} 3
dtrace_lat_bucket{le="127"} 4
dtrace_lat_bucket{le="+Inf"} 4
dtrace_lat_sum 110
dtrace_lat_count 4
# HELP dtrace_agg max() of @ by key0.
# TYPE dtrace_agg gauge
dtrace_agg{key0="a.out`main;a.out`hot"} 9
# HELP dtrace_drops_total Data dropped, by kind.
# TYPE dtrace_drops_total counter
dtrace_drops_total{kind="principal"} 4
dtrace_drops_total{kind="aggregation"} 0
dtrace_drops_total{kind="dynamic"} 0
dtrace_drops_total{kind="nested"} 0
dtrace_drops_total{kind="dblerror"} 0
dtrace_drops_total{kind="speculative"} 0
dtrace_drops_total{kind="specbusy"} 0
dtrace_drops_total{kind="specunavail"} 0
"#;
        assert_eq!(text, expected);
    }

    #[test]
    fn histogram_buckets_once_served_stay() {
        let descs = [desc("q", AggFunc::Quantize, 1)];
        let mut exporter = Exporter::new(&descs, Naming::default());
        let scrape = |exporter: &mut Exporter, rows: &[(i32, &[i64])]| {
            let mut q = Aggregation::new("q", AggFunc::Quantize);
            for (key, values) in rows {
                q.set(vec![Value::i32(*key)], quantized(values));
            }
            let text = exporter.exposition(&[q], &[]);
            text.lines()
                .filter(|l| l.starts_with("dtrace_q_bucket{key0=\"1\""))
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        // Key 2's values widen the range key 1's series are served with.
        let first = scrape(&mut exporter, &[(1, &[2]), (2, &[-1, 9])]);
        let les: Vec<&str> = first
            .iter()
            .filter_map(|l| l.strip_prefix("dtrace_q_bucket{key0=\"1\","))
            .collect();
        assert_eq!(
            les,
            [
                "le=\"-1\"} 0",
                "le=\"0\"} 0",
                "le=\"1\"} 0",
                "le=\"3\"} 1",
                "le=\"7\"} 1",
                "le=\"15\"} 1",
                "le=\"+Inf\"} 1"
            ]
        );
        // Cleared (or truncated and seen again): the same buckets, zero.
        let second = scrape(&mut exporter, &[(1, &[])]);
        assert_eq!(second.len(), first.len());
        assert!(second.iter().all(|l| l.ends_with(" 0")));
    }

    #[test]
    fn names_served_twice_are_refused() {
        let check = |descs: &[desc::Aggregation]| Naming::default().check(descs);
        let count = desc("a", AggFunc::Count, 0);
        assert_eq!(check(&[count.clone(), desc("b", AggFunc::Sum, 1)]), Ok(()));
        assert_eq!(
            check(&[count, desc("a_total", AggFunc::Sum, 0)]),
            Err("@a_total and @a are both served as dtrace_a_total".into())
        );
        assert_eq!(
            check(&[
                desc("h_sum", AggFunc::Max, 0),
                desc("h", AggFunc::Quantize, 0)
            ]),
            Err("@h and @h_sum are both served as dtrace_h_sum".into())
        );
        assert_eq!(
            check(&[desc("drops", AggFunc::Count, 0)]),
            Err("@drops and the drop counters are both served as dtrace_drops_total".into())
        );
        assert_eq!(
            check(&[desc("", AggFunc::Sum, 0), desc("agg", AggFunc::Min, 0)]),
            Err("@agg and @ are both served as dtrace_agg".into())
        );
        let mut n = Naming::default();
        n.set_labels("nosuch:pid").unwrap();
        assert_eq!(
            n.check(&[]),
            Err("the program has no aggregation @nosuch".into())
        );
    }

    #[test]
    fn names_are_checked() {
        let mut n = Naming::default();
        assert!(n.set_prefix("node_").is_ok());
        assert!(n.set_prefix("9x").is_err());
        assert!(n.set_prefix("a-b").is_err());
        assert!(n.set_labels("reads").is_err());
        assert!(n.set_labels("reads:pid,le").is_err());
        assert!(n.set_labels("reads:pid,__x").is_err());
        assert!(n.set_labels("reads:pid,pid").is_err());
        assert!(n.set_labels("reads:pid,").is_err());
        assert!(n.set_labels("reads:pid,fd").is_ok());
        assert!(n.set_labels("@reads:comm").is_ok());
        assert_eq!(n.labels.len(), 1);
        assert_eq!(n.label("reads", 0), "comm");
        assert_eq!(n.label("reads", 1), "key1");
    }
}

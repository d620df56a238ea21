//! Stack-keyed aggregations as folded stacks (`-x stackformat=folded`), the input of flame
//! graph tools (`flamegraph.pl`, `inferno-flamegraph`): one line per key, the key's parts
//! joined by `;` — a stack as its frames, root first — then a space and the value.
//!
//! A frame is `module`function`, without the offset into the function, so that samples
//! anywhere in one function add up (as `stackcollapse.pl` does with DTrace's stacks); rows
//! that fold alike are merged as if from more CPUs. The same text names a stack in other
//! machine-read outputs (the Prometheus exposition's stack labels).

use std::collections::BTreeMap;

use super::{merge, summary, AggFunc, Aggregation, Summary};
use crate::value::{Frame, Place, Value};

/// The path of a key with nothing in it (one empty stack).
const EMPTY: &str = "[empty]";

/// A frame as a flame graph names it: `module`function`, or the address text when no
/// symbol is known. A `;` (the frame separator) in a name becomes `:`.
fn frame_name(frame: &Frame) -> String {
    let name = match &frame.place {
        Place::Symbol { module, symbol, .. } => format!("{module}`{symbol}"),
        _ => frame.text(),
    };
    name.replace(';', ":")
}

/// A stack's frames (innermost first, as decoded) as a folded path: root first.
pub fn folded_stack(frames: &[Frame]) -> String {
    let names: Vec<String> = frames.iter().rev().map(frame_name).collect();
    names.join(";")
}

/// One key as a part of a folded path: a stack folded, a symbol as its frame, an integer
/// in decimal (signed as its type), a string as it is.
pub fn key_text(key: &Value) -> String {
    match key {
        Value::Stack { frames, .. } => folded_stack(frames),
        Value::Sym { frame, .. } => frame_name(frame),
        Value::Int { signed: true, .. } => key.sign_extended().to_string(),
        Value::Int { .. } => key.zero_extended().to_string(),
        Value::Str(s) => String::from_utf8_lossy(s).replace(';', ":"),
        Value::Bytes(b) => b.iter().map(|c| format!("{c:02x}")).collect(),
    }
}

/// Whether the aggregation has a stack among its keys.
pub fn has_stack_key(agg: &Aggregation) -> bool {
    agg.rows()
        .iter()
        .any(|r| r.key.iter().any(|k| matches!(k, Value::Stack { .. })))
}

/// The one number a folded line shows for slots `data` of `func`: the value DTrace prints
/// (normalized), and for a histogram the number of values it counted.
fn folded_value(func: &AggFunc, data: &[u64], normal: u64) -> i64 {
    match summary(func, data, normal) {
        Summary::Scalar(v) | Summary::Mean { value: v, .. } => v,
        Summary::Histogram(buckets) => buckets.iter().map(|b| b.count).sum(),
    }
}

/// The folded lines of `agg`, sorted by path (as `stackcollapse.pl` writes them).
pub fn folded(out: &mut String, agg: &Aggregation) {
    let mut paths: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for row in agg.rows() {
        let parts: Vec<String> = row
            .key
            .iter()
            .map(key_text)
            .filter(|p| !p.is_empty())
            .collect();
        // An empty stack (a kernel stack sampled in user mode) adds no frame.
        let path = match parts.is_empty() {
            true => EMPTY.to_string(),
            false => parts.join(";"),
        };
        let data = match paths.remove(&path) {
            Some(before) => merge(&agg.func, &[&before, &row.data]),
            None => row.data.clone(),
        };
        paths.insert(path, data);
    }
    for (path, data) in paths {
        let value = folded_value(&agg.func, &data, agg.normal());
        out.push_str(&format!("{path} {value}\n"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(module: &str, symbol: &str, offset: u64) -> Frame {
        Frame {
            address: 0x1000 + offset,
            place: Place::Symbol {
                module: module.into(),
                symbol: symbol.into(),
                offset,
            },
        }
    }

    fn stack(frames: Vec<Frame>) -> Value {
        Value::Stack {
            raw: frames.iter().map(|f| f.address).collect(),
            frames,
        }
    }

    #[test]
    fn stacks_fold_root_first_and_merge_by_function() {
        let mut agg = Aggregation::new("", AggFunc::Count);
        let leaf = |off| {
            stack(vec![
                frame("a.out", "hot", off),
                frame("a.out", "main", 0x20),
                frame("libc.so.6", "__libc_start_call_main", 0x7a),
            ])
        };
        agg.set(vec![Value::str("a.out"), leaf(0x4)], vec![5]);
        agg.set(vec![Value::str("a.out"), leaf(0x8)], vec![2]);
        agg.set(
            vec![
                Value::str("sh"),
                stack(vec![Frame::unknown(0xffff), frame("x;y", "f", 0)]),
            ],
            vec![1],
        );
        assert!(has_stack_key(&agg));
        let mut out = String::new();
        folded(&mut out, &agg);
        assert_eq!(
            out,
            "a.out;libc.so.6`__libc_start_call_main;a.out`main;a.out`hot 7\n\
             sh;x:y`f;0xffff 1\n"
        );
    }

    #[test]
    fn values_of_other_functions() {
        let mut agg = Aggregation::new("t", AggFunc::Avg);
        agg.set(vec![stack(vec![frame("vmlinux", "f", 1)])], vec![2, 10]);
        agg.set(vec![stack(vec![frame("vmlinux", "f", 2)])], vec![2, 2]);
        agg.set(vec![Value::i32(-3)], vec![1, 4]);
        agg.set(vec![stack(vec![])], vec![1, 1]);
        let mut out = String::new();
        folded(&mut out, &agg);
        assert_eq!(out, "-3 4\n[empty] 1\nvmlinux`f 3\n");
    }
}

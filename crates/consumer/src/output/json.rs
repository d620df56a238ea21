//! JSON lines (`-x oformat=json`): one object per line, written and flushed as it happens,
//! so `dtrace ... | jq` works live. Every object has a `"type"` naming its kind; the
//! schema, with an example of each kind, is `docs/JSON.md`.
//!
//! Values: integers are numbers, strings strings, addresses hexadecimal strings (`"0x..."`,
//! exact where a JSON reader keeps numbers as doubles), stacks and symbols objects with the
//! address, module, symbol and offset, structs objects of their members, arrays arrays,
//! other bytes a hexadecimal string.

use std::io::Write;

use dtrace_abi::datum::ValueType;
use dtrace_abi::record::DropKind;

use super::json_syntax::{array, string, Object};
use super::{Drops, Firing, Output, Printa, ProbeFault, Stack};
use crate::aggregate::{summary, Aggregation, SortOptions, Summary};
use crate::decode;
use crate::messages;
use crate::value::{Frame, Value};

/// JSON lines.
pub struct Json {
    out: Box<dyn Write>,
}

impl Json {
    /// JSON lines written to `out` (stdout or the `-o` file).
    pub fn new(out: Box<dyn Write>) -> Json {
        Json { out }
    }

    /// Write one object of type `kind`, its members filled by `fill`, as a line.
    fn line(&mut self, kind: &str, fill: impl FnOnce(&mut Object<'_>)) {
        let mut text = String::new();
        let mut o = Object::new(&mut text);
        o.str("type", kind);
        fill(&mut o);
        o.end();
        text.push('\n');
        let _ = self.out.write_all(text.as_bytes());
        let _ = self.out.flush();
    }
}

/// The members every object about a probe firing has.
fn firing(o: &mut Object<'_>, f: &Firing<'_>) {
    o.num("cpu", f.cpu)
        .num("epid", f.epid)
        .num("id", f.probe.id)
        .str("probe", &f.probe.full_name());
}

/// A frame: its address, and the module, symbol and offset where known, and its text.
fn frame(out: &mut String, f: &Frame) {
    let mut o = Object::new(out);
    o.addr("address", f.address);
    if let Some(m) = f.module() {
        o.str("module", m);
    }
    if let Some((symbol, offset)) = f.symbol() {
        o.str("symbol", symbol).num("offset", offset);
    }
    o.str("text", &f.text());
    o.end();
}

/// A value with no type at hand (an aggregation key, a `printf()` argument).
fn value(out: &mut String, v: &Value) {
    match v {
        Value::Int { signed: true, .. } => out.push_str(&v.sign_extended().to_string()),
        Value::Int { .. } => out.push_str(&v.zero_extended().to_string()),
        Value::Str(s) => string(out, s),
        Value::Stack { frames, .. } => array(out, frames, frame),
        Value::Sym { frame: f, .. } => frame(out, f),
        Value::Bytes(b) => hex(out, b),
    }
}

/// A value of type `ty`: structs as objects of their members, arrays as arrays.
fn typed(out: &mut String, v: &Value, ty: &ValueType) {
    let Value::Bytes(bytes) = v else {
        return value(out, v);
    };
    match ty {
        ValueType::Record { members, .. } if !members.is_empty() => {
            let mut o = Object::new(out);
            for m in members {
                let inner = decode::inner(bytes, m.offset as usize, &m.ty, m.bitfield);
                typed(o.key(&m.name), &inner, &m.ty);
            }
            o.end();
        }
        ValueType::Array { element, len } => {
            let size = element.size() as usize;
            let items: Vec<Value> = (0..*len as usize)
                .map(|i| decode::inner(bytes, i * size, element, None))
                .collect();
            array(out, &items, |out, v| typed(out, v, element));
        }
        _ => hex(out, bytes),
    }
}

/// Bytes as a string of hexadecimal digit pairs.
fn hex(out: &mut String, bytes: &[u8]) {
    let digits: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    string(out, digits.as_bytes());
}

/// An aggregation's members: its name, function and rows in printing order.
fn aggregation(o: &mut Object<'_>, agg: &Aggregation, sort: &SortOptions) {
    o.str("name", &agg.name).str("function", agg.func.name());
    let rows = agg.sorted_rows(sort);
    array(o.key("rows"), &rows, |out, (keys, data)| {
        let mut row = Object::new(out);
        array(row.key("keys"), keys, value);
        match summary(&agg.func, data, agg.normal()) {
            Summary::Scalar(v) => {
                row.num("value", v);
            }
            Summary::Mean { value, count, sum } => {
                row.num("value", value).num("count", count).num("sum", sum);
            }
            Summary::Histogram(buckets) => {
                array(row.key("buckets"), &buckets, |out, b| {
                    let mut o = Object::new(out);
                    o.num("min", b.min).num("max", b.max).num("count", b.count);
                    o.end();
                });
            }
        }
        row.end();
    });
}

impl Output for Json {
    fn matched(&mut self, kind: &str, name: &str, count: u32) {
        self.line("matched", |o| {
            o.str("kind", kind).str("name", name).num("probes", count);
        });
    }

    fn probe(&mut self, f: &Firing<'_>) {
        self.line("probe", |o| {
            firing(o, f);
            let p = f.probe;
            o.str("provider", &p.provider)
                .str("module", &p.module)
                .str("function", &p.function)
                .str("name", &p.name);
        });
    }

    fn trace(&mut self, f: &Firing<'_>, v: &Value, ty: &ValueType) {
        self.line("trace", |o| {
            firing(o, f);
            o.str("datatype", &ty.name());
            typed(o.key("value"), v, ty);
            if let ValueType::Enum { constants, .. } = ty {
                let n = v.sign_extended();
                if let Some((name, _)) = constants.iter().find(|(_, c)| *c == n) {
                    o.str("constant", name);
                }
            }
        });
    }

    fn stack(&mut self, f: &Firing<'_>, stack: &Stack<'_>) {
        self.line("stack", |o| {
            firing(o, f);
            o.str(
                "kind",
                if stack.pid.is_some() {
                    "user"
                } else {
                    "kernel"
                },
            );
            if let Some(pid) = stack.pid {
                o.num("pid", pid);
            }
            array(o.key("frames"), stack.frames, frame);
        });
    }

    fn printf(&mut self, f: &Firing<'_>, text: &[u8], args: &[Value]) {
        self.line("printf", |o| {
            firing(o, f);
            o.bytes("text", text);
            array(o.key("args"), args, value);
        });
    }

    fn printa(&mut self, f: &Firing<'_>, printa: &Printa<'_>) {
        for agg in printa.aggregations {
            self.line("printa", |o| {
                firing(o, f);
                if let Some(format) = printa.format {
                    o.bytes("format", format);
                }
                aggregation(o, agg, printa.sort);
            });
        }
    }

    fn firing_end(&mut self, _firing: &Firing<'_>) {}

    fn fault(&mut self, fault: &ProbeFault<'_>) {
        self.line("error", |o| {
            o.num("cpu", fault.cpu)
                .num("epid", fault.epid)
                .num("id", fault.probe.id)
                .str("probe", &fault.probe.full_name())
                .str("fault", fault.kind.map_or("unknown", |k| k.name()))
                .num("code", fault.code);
            if fault.kind.is_some_and(|k| k.has_address()) {
                o.addr("address", fault.addr);
            }
            o.num("action", fault.action)
                .num("offset", fault.offset)
                .str("message", &messages::fault_text(fault.kind, fault.addr));
        });
    }

    fn drops(&mut self, drops: &Drops) {
        self.line("drops", |o| {
            let kind = match drops.kind {
                DropKind::Record => "record",
                DropKind::Dynamic => "dynamic",
                DropKind::Nested => "nested",
                DropKind::ErrorInError => "error",
                DropKind::Aggregation => "aggregation",
                DropKind::Speculative => "speculative",
                DropKind::SpecBusy => "speculation-busy",
                DropKind::SpecUnavail => "speculation-unavailable",
            };
            o.str("kind", kind);
            if let Some(cpu) = drops.cpu {
                o.num("cpu", cpu);
            }
            o.num("count", drops.count);
        });
    }

    fn aggregations(&mut self, aggregations: &[Aggregation], sort: &SortOptions, _: usize) {
        let mut order: Vec<&Aggregation> = aggregations.iter().filter(|a| !a.printed).collect();
        if sort.reverse {
            order.reverse();
        }
        for agg in order {
            self.line("aggregation", |o| aggregation(o, agg, sort));
        }
    }

    fn fatal_signal(&mut self, pid: i32, signal: &str) {
        self.line("fatal-signal", |o| {
            o.num("pid", pid);
            o.str("signal", signal);
        });
    }

    fn exit(&mut self, status: i32) {
        self.line("exit", |o| {
            o.num("status", status);
        });
    }

    fn warning(&mut self, message: &str) {
        self.line("warning", |o| {
            o.str("message", message);
        });
    }

    fn flush(&mut self) {
        let _ = self.out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Place;
    use dtrace_abi::datum::Member;

    fn int(size: u8) -> ValueType {
        ValueType::Integer {
            size,
            signed: false,
            name: format!("uint{}_t", size * 8),
        }
    }

    #[test]
    fn values() {
        let mut out = String::new();
        value(&mut out, &Value::i32(-2));
        out.push(' ');
        value(&mut out, &Value::str("a\"b"));
        out.push(' ');
        let f = Frame {
            address: 0x10,
            place: Place::Symbol {
                module: "m".into(),
                symbol: "f".into(),
                offset: 2,
            },
        };
        value(
            &mut out,
            &Value::Stack {
                raw: vec![0x12],
                frames: vec![f],
            },
        );
        assert_eq!(
            out,
            r#"-2 "a\"b" [{"address":"0x10","module":"m","symbol":"f","offset":2,"text":"m`f+0x2"}]"#
        );
    }

    #[test]
    fn structs_and_arrays() {
        let ty = ValueType::Record {
            union: false,
            name: "struct s".into(),
            size: 4,
            members: vec![
                Member {
                    name: "a".into(),
                    offset: 0,
                    bitfield: None,
                    ty: int(2),
                },
                Member {
                    name: "b".into(),
                    offset: 2,
                    bitfield: None,
                    ty: ValueType::Array {
                        element: Box::new(int(1)),
                        len: 2,
                    },
                },
            ],
        };
        let mut out = String::new();
        typed(&mut out, &Value::Bytes(vec![1, 1, 7, 8]), &ty);
        assert_eq!(out, r#"{"a":257,"b":[7,8]}"#);
        let mut raw = String::new();
        typed(
            &mut raw,
            &Value::Bytes(vec![0xab, 1]),
            &ValueType::Bytes { size: 2 },
        );
        assert_eq!(raw, r#""ab01""#);
    }
}

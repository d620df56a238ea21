//! `trace()` records and the default per-firing probe prefix.
//!
//! In the default (non-quiet) mode dtrace(1) prints a heading once, then for
//! every firing a prefix of CPU, probe ID and `function:name`, each traced
//! record in a fixed-width column, and a newline after the firing's last
//! record.  In quiet mode only the records themselves are printed, bare.

use crate::value::{Frame, Value};

/// Whether dtrace(1) runs in its testing mode: DTrace's test harness sets
/// `_DTRACE_TESTING`, and dtrace then leaves the CPU and probe ID columns out
/// of the default output, so that expected results are reproducible.
pub fn testing_mode() -> bool {
    static TESTING: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TESTING.get_or_init(|| std::env::var_os("_DTRACE_TESTING").is_some())
}

/// The heading printed before the first firing (non-quiet mode), with its
/// newline.
pub fn heading() -> String {
    heading_in(testing_mode())
}

fn heading_in(testing: bool) -> String {
    if testing {
        format!("{:>32}\n", "FUNCTION:NAME")
    } else {
        format!("{:>3} {:>6} {:>32}\n", "CPU", "ID", "FUNCTION:NAME")
    }
}

/// The prefix of one firing: CPU, probe ID and `func:name` right-aligned in
/// 32 columns, followed by a space (`:BEGIN` for the BEGIN probe, whose
/// function is empty).
pub fn probe_prefix(cpu: u32, probe_id: u32, function: &str, name: &str) -> String {
    probe_prefix_in(testing_mode(), cpu, probe_id, function, name)
}

fn probe_prefix_in(testing: bool, cpu: u32, probe_id: u32, function: &str, name: &str) -> String {
    let name = format!("{function}:{name}");
    if testing {
        format!("{name:>32} ")
    } else {
        format!("{cpu:>3} {probe_id:>6} {name:>32} ")
    }
}

/// The heading of flow-indented output (`-F`).
pub fn flow_heading() -> String {
    if testing_mode() {
        format!("{:<41}\n", "FUNCTION")
    } else {
        format!("{:>3} {:<41}\n", "CPU", "FUNCTION")
    }
}

/// The prefix of one flow-indented firing: CPU and the function column (see `flow.rs`),
/// left-aligned in 41 columns.
pub fn flow_prefix(cpu: u32, column: &str) -> String {
    if testing_mode() {
        format!("{column:<41} ")
    } else {
        format!("{cpu:>3} {column:<41} ")
    }
}

/// What ends a firing's output: a newline unless quiet.
pub fn firing_end(quiet: bool) -> &'static str {
    if quiet {
        ""
    } else {
        "\n"
    }
}

/// DTrace's indentation of stack frames (`_dtrace_stkindent`), unless `stackindent` says.
pub const STACK_INDENT: usize = 14;

/// A stack as DTrace prints it (`stack()`, `ustack()`, and stack keys of aggregations): a
/// newline, then each frame on its own line, indented by `indent` columns.
pub fn stack_text(frames: &[Frame], indent: usize) -> String {
    let mut out = String::from("\n");
    for f in frames {
        out.push_str(&format!("{:indent$}{}\n", "", f.text()));
    }
    out
}

/// The column width of a traced string (and of bytes printed as one).
const STRING_WIDTH: usize = 33;

/// Bytes with no scalar form (a struct, union, array), as DTrace's `trace()` prints them:
/// as a string when they are printable characters followed only by NULs, else as a hex
/// dump of 16 bytes a line.
pub fn bytes_text(bytes: &[u8], quiet: bool) -> Vec<u8> {
    if bytes.is_empty() {
        return Vec::new();
    }
    let printable = |c: u8| c.is_ascii_graphic() || c == b' ' || (b'\x07'..=b'\r').contains(&c);
    let text = bytes
        .iter()
        .position(|&c| !printable(c))
        .map_or(Some(bytes), |i| {
            let nuls = i > 0 && bytes[i..].iter().all(|&c| c == 0);
            nuls.then_some(&bytes[..i])
        });
    match text {
        Some(text) if quiet => text.to_vec(),
        Some(text) => {
            let mut out = b"  ".to_vec();
            out.extend_from_slice(text);
            out.resize(out.len().max(2 + STRING_WIDTH), b' ');
            out
        }
        None => hex_dump(bytes).into_bytes(),
    }
}

/// DTrace's hex dump (`tracemem()`, raw bytes): a header of column numbers, then per 16
/// bytes the offset, the bytes in hex and as characters.
pub fn hex_dump(bytes: &[u8]) -> String {
    const MARGIN: usize = 5;
    let mut out = format!("\n{:MARGIN$}      ", "");
    for c in "0123456789abcdef".chars() {
        out.push_str(&format!("  {c}"));
    }
    out.push_str("  0123456789abcdef\n");
    for (row, chunk) in bytes.chunks(16).enumerate() {
        out.push_str(&format!("{:MARGIN$}{:5x}:", "", row * 16));
        for b in chunk {
            out.push_str(&format!(" {b:02x}"));
        }
        out.push_str(&"   ".repeat(16 - chunk.len()));
        out.push_str("  ");
        out.extend(chunk.iter().map(|&c| {
            if (b' '..=b'~').contains(&c) {
                c as char
            } else {
                '.'
            }
        }));
        out.push('\n');
    }
    out
}

/// A symbol (`func()`, `ufunc()`, `mod()`...) as `trace()` and aggregation keys print it:
/// two spaces and 50 columns, left-justified, in quiet mode too.
pub fn symbol_text(text: &str) -> String {
    format!("  {text:<50}")
}

/// One `trace()` record.  Non-quiet: integers get a leading space and a
/// width of 3, 5, 10 or 19/20 columns by size (signed/unsigned), strings two
/// leading spaces and a left-justified 33-column field.  Quiet: the bare
/// value.  Structs, unions and arrays are hex dumps, as DTrace's `trace()` shows them.
/// Returned as bytes because strings need not be UTF-8.
pub fn trace_record(v: &Value, quiet: bool, stack_indent: usize) -> Vec<u8> {
    match v {
        Value::Stack { frames, .. } => stack_text(frames, stack_indent).into_bytes(),
        Value::Sym { frame, .. } => symbol_text(&frame.text()).into_bytes(),
        Value::Bytes(bytes) if bytes.is_empty() => Vec::new(),
        Value::Bytes(bytes) => hex_dump(bytes).into_bytes(),
        Value::Str(s) if quiet => s.clone(),
        Value::Str(s) => {
            let mut out = b"  ".to_vec();
            out.extend_from_slice(s);
            out.resize(out.len().max(2 + STRING_WIDTH), b' ');
            out
        }
        Value::Int { signed, size, .. } => {
            let text = if *signed {
                v.sign_extended().to_string()
            } else {
                v.zero_extended().to_string()
            };
            if quiet {
                return text.into_bytes();
            }
            let width = match (size, signed) {
                (1, _) => 3,
                (2, _) => 5,
                (4, _) => 10,
                (_, true) => 19,
                (_, false) => 20,
            };
            format!(" {text:>width$}").into_bytes()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(v: Value, quiet: bool) -> String {
        String::from_utf8(trace_record(&v, quiet, STACK_INDENT)).unwrap()
    }

    #[test]
    fn heading_and_prefix() {
        assert_eq!(
            heading_in(false),
            "CPU     ID                    FUNCTION:NAME\n"
        );
        assert_eq!(
            probe_prefix_in(false, 0, 1, "", "BEGIN"),
            "  0      1                           :BEGIN "
        );
        assert_eq!(
            probe_prefix_in(false, 12, 4567, "do_sys_open", "entry"),
            " 12   4567                do_sys_open:entry "
        );
        // Testing mode (_DTRACE_TESTING): no CPU and ID columns.
        assert_eq!(heading_in(true), "                   FUNCTION:NAME\n");
        assert_eq!(
            probe_prefix_in(true, 0, 1, "", "BEGIN"),
            "                          :BEGIN "
        );
        assert_eq!(firing_end(false), "\n");
        assert_eq!(firing_end(true), "");
    }

    #[test]
    fn integers() {
        assert_eq!(
            record(Value::i64(-2), false),
            format!("{}-2", " ".repeat(18))
        );
        assert_eq!(record(Value::u64(5), false), format!("{}5", " ".repeat(20)));
        assert_eq!(
            record(Value::i32(-1), false),
            format!("{}-1", " ".repeat(9))
        );
        let c = Value::Int {
            value: 0xfe,
            size: 1,
            signed: true,
        };
        assert_eq!(record(c.clone(), false), "  -2");
        assert_eq!(record(c, true), "-2");
        let s = Value::Int {
            value: 0xfffe,
            size: 2,
            signed: false,
        };
        assert_eq!(record(s, false), " 65534");
    }

    #[test]
    fn stacks_and_symbols() {
        let frame = |symbol: &str, offset| Frame {
            address: 1,
            place: crate::value::Place::Symbol {
                module: "vmlinux".into(),
                symbol: symbol.into(),
                offset,
            },
        };
        let stack = Value::Stack {
            raw: vec![1, 2],
            frames: vec![frame("a", 1), frame("b", 0)],
        };
        let expected = "\n              vmlinux`a+0x1\n              vmlinux`b\n";
        assert_eq!(record(stack.clone(), false), expected);
        assert_eq!(record(stack, true), expected);
        let sym = Value::Sym {
            raw: vec![1],
            frame: Box::new(Frame {
                address: 1,
                place: crate::value::Place::Symbol {
                    module: "prog".into(),
                    symbol: "f1".into(),
                    offset: 0,
                },
            }),
        };
        assert_eq!(record(sym, true), format!("  {:<50}", "prog`f1"));
    }

    #[test]
    fn bytes() {
        let text = |b: &[u8], quiet| String::from_utf8(bytes_text(b, quiet)).unwrap();
        assert_eq!(text(b"abc\0\0", true), "abc");
        assert_eq!(text(b"abc\0\0", false), format!("  {:<33}", "abc"));
        let dump = text(&[0x41, 0, 0x42, 0xff], false);
        let want = format!(
            "\n{:11}{}  0123456789abcdef\n{:5}    0: 41 00 42 ff{}  A.B.\n",
            "",
            (0..16).map(|i| format!("  {i:x}")).collect::<String>(),
            "",
            "   ".repeat(12)
        );
        assert_eq!(dump, want);
    }

    #[test]
    fn strings() {
        assert_eq!(record(Value::str("hello"), true), "hello");
        assert_eq!(
            record(Value::str("hello"), false),
            "  hello                            "
        );
    }
}

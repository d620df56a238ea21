//! JSON text (RFC 8259), written by hand: objects, arrays, numbers and escaped strings are
//! all the JSON output needs, which is a page of code against a serialization framework
//! and its derive macros (serde and serde_json would add several crates and their build
//! time for it). Strings that are not UTF-8 (a traced string holds whatever bytes the
//! kernel had) have each invalid byte replaced by U+FFFD, so every line parses.

use std::fmt::{Display, Write};

/// Append `bytes` as a JSON string: quotes, `\" \\ \n \r \t \b \f` and `\u00XX` for the
/// other control characters; invalid UTF-8 becomes U+FFFD.
pub fn string(out: &mut String, bytes: &[u8]) {
    out.push('"');
    for c in String::from_utf8_lossy(bytes).chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// An object being written into a string: `{"key":value,...}`.
pub struct Object<'a> {
    out: &'a mut String,
    empty: bool,
}

impl<'a> Object<'a> {
    /// Start an object at the end of `out`.
    pub fn new(out: &'a mut String) -> Object<'a> {
        out.push('{');
        Object { out, empty: true }
    }

    /// Start member `key`; the caller appends its value to the returned string.
    pub fn key(&mut self, key: &str) -> &mut String {
        if !self.empty {
            self.out.push(',');
        }
        self.empty = false;
        string(self.out, key.as_bytes());
        self.out.push(':');
        self.out
    }

    /// A string member.
    pub fn str(&mut self, key: &str, value: &str) -> &mut Self {
        self.bytes(key, value.as_bytes())
    }

    /// A string member from bytes (see [`string`]).
    pub fn bytes(&mut self, key: &str, value: &[u8]) -> &mut Self {
        string(self.key(key), value);
        self
    }

    /// A number (or `true`/`false`) member.
    pub fn num(&mut self, key: &str, value: impl Display) -> &mut Self {
        let _ = write!(self.key(key), "{value}");
        self
    }

    /// An address member, as a hexadecimal string (exact where JSON numbers are doubles).
    pub fn addr(&mut self, key: &str, value: u64) -> &mut Self {
        self.str(key, &format!("0x{value:x}"))
    }

    /// Close the object.
    pub fn end(self) {
        self.out.push('}');
    }
}

/// Append `items` as a JSON array, each written by `item`.
pub fn array<T>(out: &mut String, items: &[T], mut item: impl FnMut(&mut String, &T)) {
    out.push('[');
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        item(out, x);
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_escape() {
        let mut out = String::new();
        string(&mut out, b"a\"b\\c\n\t\x01\xffz\xc3\xa9");
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\t\\u0001\u{fffd}z\u{e9}\"");
    }

    #[test]
    fn objects_and_arrays() {
        let mut out = String::new();
        let mut o = Object::new(&mut out);
        o.str("type", "x").num("n", -3).addr("pc", 255);
        array(o.key("list"), &[1, 2], |out, v| {
            out.push_str(&v.to_string())
        });
        o.num("ok", true);
        o.end();
        assert_eq!(
            out,
            r#"{"type":"x","n":-3,"pc":"0xff","list":[1,2],"ok":true}"#
        );
        let mut empty = String::new();
        Object::new(&mut empty).end();
        assert_eq!(empty, "{}");
    }
}

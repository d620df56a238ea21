//! `print()`'s text: an object laid out member by member, as DTrace shows it.
//!
//! The address comes first (`0xADDR = *`), then the object from the next line, indented
//! by a fixed 44 columns plus one per level of nesting: `(TYPE) {` for a struct or union,
//! `.member = (TYPE)value,` for each member, `(TYPE [N]) [` ... `],` for an array. Members
//! whose bytes are all zero are left out (at any level below the object itself), as are
//! the characters of a `char` array from its first NUL on; integers show in decimal
//! (`char`s as `'c'`), enums by name when one matches, pointers in hex. Past the bytes the
//! `printsize` option lets through, or ten levels down, a `...` line ends the walk, and
//! the braces still open are closed.

use std::fmt::Write;

use dtrace_abi::datum::{Member, ValueType};

/// Columns before the object's first line.
const INDENT: usize = 44;
/// Levels shown.
const MAX_DEPTH: usize = 10;

/// The text of `print()` of the object at `addr` whose first `bytes` were recorded, shown
/// up to `limit` bytes.
pub fn print(addr: u64, layout: &ValueType, bytes: &[u8], limit: usize) -> String {
    let mut w = Walk {
        out: if addr == 0 {
            "(nil) = *\n".to_string()
        } else {
            format!("{addr:#x} = *\n")
        },
        bytes,
        limit: limit.min(bytes.len()),
        open: [false; MAX_DEPTH + 1],
        last_depth: 0,
    };
    let _ = w.visit(None, layout, 0, 0);
    // The object's own braces close even when nothing in it was shown.
    if w.open[0] && w.last_depth == 0 {
        w.last_depth = 1;
    }
    w.close(0);
    w.out
}

/// The walk stopped: no more bytes, or too deep.
struct Stop;

struct Walk<'a> {
    out: String,
    bytes: &'a [u8],
    limit: usize,
    /// Whether the value shown at each depth is a struct or union (its `{` open).
    open: [bool; MAX_DEPTH + 1],
    /// The depth of the last value shown.
    last_depth: usize,
}

impl Walk<'_> {
    fn line(&mut self, depth: usize, text: &str) {
        let _ = writeln!(self.out, "{:width$}{text}", "", width = INDENT + depth);
    }

    /// Close the braces opened below `depth` since the last value shown there.
    fn close(&mut self, depth: usize) {
        if !self.open[depth] {
            return;
        }
        for i in (1..=self.last_depth.saturating_sub(depth)).rev() {
            let comma = if depth > 0 || i > 1 { "," } else { "" };
            self.line(depth + i - 1, &format!("}}{comma}"));
        }
        self.last_depth = self.last_depth.min(depth);
    }

    /// Show `ty` at byte `offset` (a bit-field's first bit at `bit` of it), named `name`.
    fn visit(
        &mut self,
        member: Option<&Member>,
        ty: &ValueType,
        offset: usize,
        depth: usize,
    ) -> Result<(), Stop> {
        if offset >= self.limit || depth >= MAX_DEPTH {
            self.line(depth, "...");
            return Err(Stop);
        }
        if self.last_depth > depth {
            self.close(depth);
        }
        let size = ty.size() as usize;
        let data = &self.bytes[offset..(offset + size).min(self.bytes.len())];
        if depth > 0 && data.iter().all(|&b| b == 0) {
            return Ok(());
        }
        let bitfield = member.and_then(|m| m.bitfield);
        self.open[depth] = matches!(ty, ValueType::Record { .. });
        self.last_depth = depth;
        let value = match ty {
            ValueType::Record { name, .. } => format!("({name}) {{"),
            ValueType::Array { element, len } => {
                format!(
                    "({} [{len}]) [{}",
                    element.name(),
                    if *len == 0 { "]," } else { "" }
                )
            }
            ValueType::Integer { size, signed, name } => {
                let raw = match bitfield {
                    Some((first, width)) => {
                        let v = bits(self.bytes, offset, first, width);
                        if v == 0 {
                            return Ok(());
                        }
                        // A signed field's top bit is its sign.
                        if *signed && width < 64 && v >> (width - 1) & 1 == 1 {
                            v | !((1u64 << width) - 1)
                        } else {
                            v
                        }
                    }
                    None => le(data),
                };
                integer(raw, *size, *signed, name)
            }
            ValueType::Enum {
                size,
                signed,
                name,
                constants,
            } => {
                let v = extend(le(data), *size, *signed);
                match constants.iter().find(|(_, c)| *c == v) {
                    Some((constant, _)) => format!("({name}){constant},"),
                    None => format!("({name}){},", v as i32),
                }
            }
            ValueType::Pointer { name } => format!("({name}){:#x},", le(data)),
            _ => return Ok(()),
        };
        let label = member
            .filter(|m| !m.name.is_empty())
            .map(|m| format!(".{} = ", m.name))
            .unwrap_or_default();
        self.line(depth, &format!("{label}{value}"));
        match ty {
            ValueType::Record { members, .. } => {
                for m in members {
                    self.visit(Some(m), &m.ty, offset + m.offset as usize, depth + 1)?;
                }
            }
            ValueType::Array { element, len } if *len > 0 => {
                let step = element.size() as usize;
                let chars = matches!(&**element, ValueType::Integer { size: 1, name, .. } if name == "char");
                // The elements' braces are their own business: what was open around the
                // array is as it was after them.
                let (open, last_depth) = (self.open, self.last_depth);
                for i in 0..*len as usize {
                    let at = offset + i * step;
                    if chars && self.bytes.get(at).is_none_or(|&b| b == 0) {
                        break;
                    }
                    self.visit(None, element, at, depth + 1)?;
                }
                // The last element's braces close before the array's.
                self.close(depth + 1);
                (self.open, self.last_depth) = (open, last_depth);
                self.line(depth, "],");
            }
            _ => {}
        }
        Ok(())
    }
}

/// A little-endian integer of up to 8 bytes.
fn le(data: &[u8]) -> u64 {
    let mut b = [0u8; 8];
    let n = data.len().min(8);
    b[..n].copy_from_slice(&data[..n]);
    u64::from_le_bytes(b)
}

/// The bit-field of `width` bits from bit `first` of byte `offset`.
fn bits(bytes: &[u8], offset: usize, first: u8, width: u8) -> u64 {
    let end = (offset + 8).min(bytes.len());
    let word = le(&bytes[offset.min(end)..end]);
    let v = word >> first;
    if width >= 64 {
        v
    } else {
        v & ((1u64 << width) - 1)
    }
}

/// `v` (of `size` bytes) sign-extended when `signed`.
fn extend(v: u64, size: u8, signed: bool) -> i64 {
    let shift = 64 - 8 * u32::from(size.clamp(1, 8));
    if signed {
        ((v << shift) as i64) >> shift
    } else {
        ((v << shift) >> shift) as i64
    }
}

fn integer(raw: u64, size: u8, signed: bool, name: &str) -> String {
    if size == 8 && !signed {
        return format!("({name}){raw},");
    }
    let v = extend(raw, size, signed);
    if name == "char" {
        return format!("({name})'{}',", char::from(v as u8));
    }
    format!("({name}){v},")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(name: &str, size: u8, signed: bool) -> ValueType {
        ValueType::Integer {
            size,
            signed,
            name: name.into(),
        }
    }

    fn member(name: &str, offset: u32, ty: ValueType) -> Member {
        Member {
            name: name.into(),
            offset,
            bitfield: None,
            ty,
        }
    }

    fn pair() -> ValueType {
        ValueType::Record {
            union: false,
            name: "struct pair".into(),
            size: 16,
            members: vec![
                member("a", 0, int("int", 4, true)),
                member(
                    "s",
                    4,
                    ValueType::Array {
                        element: Box::new(int("char", 1, true)),
                        len: 4,
                    },
                ),
                member(
                    "p",
                    8,
                    ValueType::Pointer {
                        name: "void *".into(),
                    },
                ),
            ],
        }
    }

    const PAD: &str = "                                            ";

    #[test]
    fn members_zero_ones_left_out() {
        let mut bytes = vec![0u8; 16];
        bytes[0..4].copy_from_slice(&(-3i32).to_le_bytes());
        bytes[4..6].copy_from_slice(b"hi");
        let text = print(0x1000, &pair(), &bytes, usize::MAX);
        let want = format!(
            "0x1000 = *\n{PAD}(struct pair) {{\n{PAD} .a = (int)-3,\n{PAD} .s = (char [4]) [\n\
             {PAD}  (char)'h',\n{PAD}  (char)'i',\n{PAD} ],\n{PAD}}}\n"
        );
        assert_eq!(text, want);
    }

    #[test]
    fn truncated_by_the_limit() {
        let mut bytes = vec![0u8; 16];
        bytes[0] = 1;
        bytes[8] = 1;
        let text = print(0x10, &pair(), &bytes, 8);
        let want =
            format!("0x10 = *\n{PAD}(struct pair) {{\n{PAD} .a = (int)1,\n{PAD} ...\n{PAD}}}\n");
        assert_eq!(text, want);
    }

    #[test]
    fn an_empty_object_still_has_its_braces() {
        let text = print(0x10, &pair(), &[0u8; 16], usize::MAX);
        assert_eq!(text, format!("0x10 = *\n{PAD}(struct pair) {{\n{PAD}}}\n"));
    }

    #[test]
    fn every_struct_of_an_array_is_closed() {
        let point = ValueType::Record {
            union: false,
            name: "struct point".into(),
            size: 4,
            members: vec![member("x", 0, int("int", 4, true))],
        };
        let outer = ValueType::Record {
            union: false,
            name: "struct line".into(),
            size: 8,
            members: vec![member(
                "p",
                0,
                ValueType::Array {
                    element: Box::new(point),
                    len: 2,
                },
            )],
        };
        let mut bytes = vec![0u8; 8];
        bytes[0] = 1;
        bytes[4] = 2;
        let text = print(0x10, &outer, &bytes, usize::MAX);
        let want = format!(
            "0x10 = *\n{PAD}(struct line) {{\n{PAD} .p = (struct point [2]) [\n\
             {PAD}  (struct point) {{\n{PAD}   .x = (int)1,\n{PAD}  }},\n\
             {PAD}  (struct point) {{\n{PAD}   .x = (int)2,\n{PAD}  }},\n{PAD} ],\n{PAD}}}\n"
        );
        assert_eq!(text, want);
    }
}

//! D `printf()` formats: parsing (once, so the compiler can report errors and
//! type-check arguments) and rendering against decoded [`Value`]s.
//!
//! Parsing follows DTrace's own format scanner: flags may appear in any order
//! and the later of `-` / `0` wins, `?` means a pointer-sized width (16), `@`
//! marks a `printa()` aggregation-value conversion, and a precision of 0 is
//! dropped (DTrace only passes precisions greater than zero to the C library).
//! Rendering follows DTrace's size rules: the argument's real size, not the
//! length modifier, decides how it is printed.  Signed conversions (`%d`/`%i`
//! of a signed value, `%c`) sign-extend 1- and 2-byte values to `int`;
//! unsigned ones (`%u %o %x %X %p`, and `%d`/`%i` of an unsigned value)
//! zero-extend 1-, 2- and 4-byte values, so `printf("%x", (int)-1)` prints
//! `ffffffff`; then `hh` and `h` narrow the value to 8 or 16 bits, as C's printf does
//! with the formats DTrace hands it (`printf("%hhu", 257)` prints `1`).  `%p` prints plain hexadecimal (DTrace maps it to `%x`).
//!
//! Widths and precisions are bounded by [`MAX_FIELD`]: a formatted field is held in
//! memory (for JSON lines as for text), and DTrace's own bound, C's `int`, would let one
//! `printf` take gigabytes. A format asking for more is refused; a `*` argument asking for
//! more gets [`MAX_FIELD`].

use std::fmt;

pub use crate::cfmt::Flags;
use crate::cfmt::{self, Field, FloatStyle, Radix};
use crate::Value;

/// The largest width or precision a conversion may have (16 MiB of padding: DTrace's
/// scripts ask for ten million).
pub const MAX_FIELD: usize = 1 << 24;

/// A parsed format string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Format {
    pieces: Vec<Piece>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(Vec<u8>),
    Conv(Conversion),
}

/// One `%` conversion of a format string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversion {
    /// 1-based position among the format's conversions (as in DTrace's
    /// "format conversion #N" messages; `%%` counts).
    pub number: usize,
    /// The conversion character (`d`, `s`, `%`, ...).
    pub spec: char,
    /// The length modifier, if any: `hh` and `h` narrow integers when printing, the others
    /// change nothing (the value's own size decides).
    pub length: Option<Length>,
    pub flags: Flags,
    pub width: Count,
    pub precision: Count,
    /// `%@...`: consumes the aggregation value in `printa()`.
    pub aggregation: bool,
}

/// A width or precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    Absent,
    Fixed(usize),
    /// `*`: taken from an integer argument.
    Star,
}

/// Length modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Length {
    /// `hh`
    Char,
    /// `h`
    Short,
    /// `l`
    Long,
    /// `ll`
    LongLong,
    /// `L`
    LongDouble,
    /// `z`
    Size,
    /// `j`
    IntMax,
    /// `t`
    PtrDiff,
    /// `w` (`%wc`, `%ws`): a wide character or string, as `l` makes them.
    Wide,
}

/// What kind of argument a conversion expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// Any integer (`%d %i %u %o %x %X`, and `*` widths/precisions).
    Integer,
    /// An integer no wider than `int` (`%c`).
    Char,
    /// A pointer or integer (`%p`).
    Pointer,
    /// A string or `char` array (`%s`).
    String,
    /// An array of 32-bit wide characters (`%ls`, `%ws`).
    WideString,
    /// A floating-point value (`%e %f %g %E %G`).
    Float,
}

/// What an argument is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgRole {
    Width,
    Precision,
    Value,
}

/// One argument consumed by a format, in consumption order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arg {
    /// The conversion's [`Conversion::number`].
    pub conversion: usize,
    pub role: ArgRole,
    pub kind: ArgKind,
}

/// A format-string error, worded as DTrace words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    MultipleStar {
        conversion: usize,
        precision: bool,
    },
    MultipleDot {
        conversion: usize,
    },
    Positional {
        conversion: usize,
    },
    PercentWithFlags {
        conversion: usize,
    },
    NameExpected {
        conversion: usize,
    },
    Undefined {
        conversion: usize,
        name: String,
    },
    /// A width or precision beyond [`MAX_FIELD`].
    TooLarge {
        conversion: usize,
        precision: bool,
    },
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::MultipleStar {
                conversion,
                precision,
            } => write!(
                f,
                "format conversion #{conversion} has more than one '*' specified for the output {}",
                if *precision { "precision" } else { "width" }
            ),
            FormatError::MultipleDot { conversion } => write!(
                f,
                "format conversion #{conversion} has more than one '.' specified"
            ),
            FormatError::Positional { conversion } => write!(
                f,
                "format conversion #{conversion} uses unsupported positional format (%n$)"
            ),
            FormatError::PercentWithFlags { conversion } => write!(
                f,
                "format conversion #{conversion} cannot be combined with other format flags: %%"
            ),
            FormatError::NameExpected { conversion } => write!(
                f,
                "format conversion #{conversion} name expected before end of format string"
            ),
            FormatError::Undefined { conversion, name } => {
                write!(f, "format conversion #{conversion} is undefined: %{name}")
            }
            FormatError::TooLarge {
                conversion,
                precision,
            } => {
                let what = if *precision { "precision" } else { "width" };
                write!(
                    f,
                    "format conversion #{conversion} has a {what} larger than {MAX_FIELD}"
                )
            }
        }
    }
}

impl std::error::Error for FormatError {}

/// Parse a D format string: bytes, as D strings are (not necessarily UTF-8).
pub fn parse(format: impl AsRef<[u8]>) -> Result<Format, FormatError> {
    let bytes = format.as_ref();
    let mut pieces = Vec::new();
    let mut literal = Vec::new();
    let mut number = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'%' {
            literal.push(bytes[i]);
            i += 1;
            continue;
        }
        number += 1;
        let (conv, next) = parse_conversion(bytes, i, number)?;
        i = next;
        if conv.spec == '%' {
            literal.push(b'%');
            continue;
        }
        if !literal.is_empty() {
            pieces.push(Piece::Literal(std::mem::take(&mut literal)));
        }
        pieces.push(Piece::Conv(conv));
    }
    if !literal.is_empty() {
        pieces.push(Piece::Literal(literal));
    }
    Ok(Format { pieces })
}

/// Parse the conversion whose `%` is at `start`; returns it and the index
/// just past it.
fn parse_conversion(
    bytes: &[u8],
    start: usize,
    number: usize,
) -> Result<(Conversion, usize), FormatError> {
    let mut conv = Conversion {
        number,
        spec: '%',
        length: None,
        flags: Flags::default(),
        width: Count::Absent,
        precision: Count::Absent,
        aggregation: false,
    };
    let mut dot = false;
    let mut digits = false;
    let mut length = String::new();
    let mut i = start + 1;
    loop {
        let Some(&c) = bytes.get(i) else {
            // DTrace's own length modifiers (`h l L w`) still expect a name; `z`, `j` and
            // `t`, which DTrace takes for names, name a conversion it does not know.
            return Err(
                if length.is_empty() || length.ends_with(['h', 'l', 'L', 'w']) {
                    FormatError::NameExpected { conversion: number }
                } else {
                    FormatError::Undefined {
                        conversion: number,
                        name: length,
                    }
                },
            );
        };
        i += 1;
        match c {
            b'0' if !dot && !digits => {
                conv.flags.zero = true;
                conv.flags.left = false;
            }
            b'0'..=b'9' => {
                let mut n = usize::from(c - b'0');
                while let Some(d @ b'0'..=b'9') = bytes.get(i) {
                    n = n.saturating_mul(10).saturating_add(usize::from(d - b'0'));
                    i += 1;
                }
                if n > MAX_FIELD {
                    return Err(FormatError::TooLarge {
                        conversion: number,
                        precision: dot,
                    });
                }
                *if dot {
                    &mut conv.precision
                } else {
                    &mut conv.width
                } = Count::Fixed(n);
                digits = true;
            }
            b'#' => conv.flags.alt = true,
            b'*' => {
                let slot = if dot {
                    &mut conv.precision
                } else {
                    &mut conv.width
                };
                if *slot == Count::Star {
                    return Err(FormatError::MultipleStar {
                        conversion: number,
                        precision: dot,
                    });
                }
                *slot = Count::Star;
            }
            b'+' => conv.flags.plus = true,
            b'-' => {
                conv.flags.left = true;
                conv.flags.zero = false;
            }
            b'.' => {
                if dot {
                    return Err(FormatError::MultipleDot { conversion: number });
                }
                dot = true;
                digits = false;
            }
            b'?' => conv.width = Count::Fixed(16),
            b'@' => conv.aggregation = true,
            b'\'' => conv.flags.group = true,
            b' ' => conv.flags.space = true,
            b'$' => return Err(FormatError::Positional { conversion: number }),
            b'%' if i == start + 2 => return Ok((conv, i)),
            b'%' => return Err(FormatError::PercentWithFlags { conversion: number }),
            b'h' | b'l' | b'L' | b'z' | b'j' | b't' | b'w' => length.push(char::from(c)),
            _ => {
                conv.spec = char::from(c);
                conv.length = resolve_length(&conv, &length)?;
                return Ok((conv, i));
            }
        }
    }
}

/// The low `bits` of `x` as a signed integer of that width.
fn narrow_signed(x: u64, bits: u32) -> i64 {
    let shift = 64 - bits;
    ((x << shift) as i64) >> shift
}

/// Check the conversion name (length modifier + character).
fn resolve_length(conv: &Conversion, length: &str) -> Result<Option<Length>, FormatError> {
    // A byte that is not ASCII (the format is bytes) shows as U+FFFD, as a UTF-8 terminal
    // shows it.
    let spec = match conv.spec {
        c if c.is_ascii() => c,
        _ => char::REPLACEMENT_CHARACTER,
    };
    let name = || format!("{length}{spec}");
    let length = match length {
        "" => None,
        "hh" => Some(Length::Char),
        "h" => Some(Length::Short),
        "l" => Some(Length::Long),
        "ll" => Some(Length::LongLong),
        "L" => Some(Length::LongDouble),
        "z" => Some(Length::Size),
        "j" => Some(Length::IntMax),
        "t" => Some(Length::PtrDiff),
        "w" => Some(Length::Wide),
        _ => {
            return Err(FormatError::Undefined {
                conversion: conv.number,
                name: name(),
            })
        }
    };
    match (conv.spec, length) {
        (_, Some(Length::Wide)) if !matches!(conv.spec, 'c' | 's') => Err(FormatError::Undefined {
            conversion: conv.number,
            name: name(),
        }),
        // DTrace's wide conversions: `%lc` `%wc` `%ls` `%ws`.
        ('c' | 's', Some(Length::Long | Length::Wide)) | ('c', None) => Ok(length),
        ('d' | 'i' | 'u' | 'o' | 'x' | 'X' | 'e' | 'E' | 'f' | 'g' | 'G', _) => Ok(length),
        ('s' | 'p' | 'a' | 'A' | 'k' | 'T' | 'Y' | 'C' | 'S', None) => Ok(None),
        _ => Err(FormatError::Undefined {
            conversion: conv.number,
            name: name(),
        }),
    }
}

/// `%Y` (`2003 Sep  3 10:23:41`) or `%T` (RFC 822: `Wed, 03 Sep 2003 10:23:41 PDT`, with
/// DTrace's ISO week-based year) of `ns` nanoseconds since the epoch, in the local time
/// zone (`TZ`, else the system's).
fn wall_time(ns: u64, rfc822: bool) -> String {
    static ZONE: std::sync::OnceLock<jiff::tz::TimeZone> = std::sync::OnceLock::new();
    let zone =
        ZONE.get_or_init(|| jiff::tz::TimeZone::try_system().unwrap_or(jiff::tz::TimeZone::UTC));
    let Ok(t) = jiff::Timestamp::from_second((ns / 1_000_000_000) as i64) else {
        return String::new();
    };
    let format = if rfc822 {
        "%a, %d %b %G %T %Z"
    } else {
        "%Y %b %e %T"
    };
    t.to_zoned(zone.clone()).strftime(format).to_string()
}

/// `s` with C escapes for the characters DTrace escapes under `%S` and `%C`: NUL, the
/// control characters that have a letter, `"` and `\`; other bytes outside `!`..`~`
/// (but the space) as three octal digits.
fn escaped(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    for &c in s {
        let letter = match c {
            0 => Some(b'0'),
            0x07 => Some(b'a'),
            0x08 => Some(b'b'),
            0x0c => Some(b'f'),
            b'\n' => Some(b'n'),
            b'\r' => Some(b'r'),
            b'\t' => Some(b't'),
            0x0b => Some(b'v'),
            b'"' => Some(b'"'),
            b'\\' => Some(b'\\'),
            _ => None,
        };
        match letter {
            Some(l) => out.extend([b'\\', l]),
            None if c == b' ' || (b'!'..=b'~').contains(&c) => out.push(c),
            None => out.extend([
                b'\\',
                b'0' + (c >> 6),
                b'0' + ((c >> 3) & 7),
                b'0' + (c & 7),
            ]),
        }
    }
    out
}

/// Wide characters (32-bit code points) as UTF-8; one that is no Unicode scalar value
/// prints as `?`.
fn wide_text(chars: &[u32]) -> Vec<u8> {
    chars
        .iter()
        .map(|&c| char::from_u32(c).unwrap_or('?'))
        .collect::<String>()
        .into_bytes()
}

impl Conversion {
    /// The width `hh` (8) or `h` (16) narrows an integer to before it is printed, as the C
    /// library DTrace hands its formats to does (`%hhu` of 257 prints 1).
    fn narrow_bits(&self) -> Option<u32> {
        match self.length {
            Some(Length::Char) => Some(8),
            Some(Length::Short) => Some(16),
            _ => None,
        }
    }

    /// `v` zero-extended, narrowed by an `hh` or `h` length modifier.
    fn narrow_unsigned(&self, v: &Value) -> u64 {
        let x = v.zero_extended();
        match self.narrow_bits() {
            Some(bits) => x & ((1u64 << bits) - 1),
            None => x,
        }
    }

    /// Whether this is a wide conversion (`%lc`, `%wc`, `%ls`, `%ws`).
    fn wide(&self) -> bool {
        matches!(self.spec, 'c' | 's') && matches!(self.length, Some(Length::Long | Length::Wide))
    }

    /// The kind of value argument this conversion expects.
    pub fn kind(&self) -> ArgKind {
        match self.spec {
            's' if self.wide() => ArgKind::WideString,
            'c' | 'C' => ArgKind::Char,
            'p' | 'a' | 'A' => ArgKind::Pointer,
            's' | 'S' => ArgKind::String,
            'e' | 'E' | 'f' | 'g' | 'G' => ArgKind::Float,
            _ => ArgKind::Integer,
        }
    }

    /// Format one value with this conversion, given resolved field
    /// parameters.
    pub(crate) fn format_value(&self, out: &mut Vec<u8>, v: &Value, field: &Field) {
        match self.spec {
            'd' | 'i' => match (self.narrow_bits(), v) {
                (Some(bits), _) => cfmt::signed(out, narrow_signed(v.zero_extended(), bits), field),
                (None, Value::Int { signed: true, .. }) => {
                    cfmt::signed(out, v.sign_extended(), field)
                }
                _ => cfmt::unsigned(out, v.zero_extended(), Radix::Decimal, field),
            },
            'u' => cfmt::unsigned(out, self.narrow_unsigned(v), Radix::Decimal, field),
            'o' => cfmt::unsigned(out, self.narrow_unsigned(v), Radix::Octal, field),
            'x' => cfmt::unsigned(out, self.narrow_unsigned(v), Radix::Hex, field),
            'p' => cfmt::unsigned(out, v.zero_extended(), Radix::Hex, field),
            'X' => cfmt::unsigned(out, self.narrow_unsigned(v), Radix::HexUpper, field),
            'c' if self.wide() => {
                let c = wide_text(&[v.zero_extended() as u32]);
                cfmt::string(
                    out,
                    &c,
                    &Field {
                        precision: None,
                        ..*field
                    },
                )
            }
            's' if self.wide() => {
                let chars: Vec<u32> = match v {
                    Value::Bytes(b) => b
                        .chunks_exact(4)
                        .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
                        .take_while(|&c| c != 0)
                        .collect(),
                    _ => Vec::new(),
                };
                let text = wide_text(&chars);
                // The precision counts bytes, and cuts no character in two.
                let text = match field.precision {
                    Some(p) if p < text.len() => {
                        let end = (0..=p)
                            .rev()
                            .find(|&i| std::str::from_utf8(&text[..i]).is_ok());
                        text[..end.unwrap_or(0)].to_vec()
                    }
                    _ => text,
                };
                cfmt::string(
                    out,
                    &text,
                    &Field {
                        precision: None,
                        ..*field
                    },
                )
            }
            'c' => cfmt::char(out, v.zero_extended() as u8, field),
            // A stack under `%k`, as DTrace prints one: a newline, then a line per frame,
            // each frame formatted by the conversion's field and indented by its width when
            // left-justified (`%-20k`), not at all otherwise.
            'k' if matches!(v, Value::Stack { .. }) => {
                let Value::Stack { frames, .. } = v else {
                    unreachable!("a stack")
                };
                let indent = if field.flags.left { field.width } else { 0 };
                out.push(b'\n');
                for f in frames.iter() {
                    out.extend(std::iter::repeat_n(b' ', indent));
                    cfmt::string(out, f.text().as_bytes(), field);
                    out.push(b'\n');
                }
            }
            's' | 'a' | 'A' | 'k' if matches!(v, Value::Sym { .. } | Value::Stack { .. }) => {
                let text = match v {
                    Value::Sym { frame, .. } => frame.text(),
                    Value::Stack { frames, .. } => {
                        crate::trace::stack_text(frames, crate::trace::STACK_INDENT)
                    }
                    _ => unreachable!("a symbol or a stack"),
                };
                cfmt::string(out, text.as_bytes(), field)
            }
            // A time in nanoseconds since the epoch (`walltimestamp`), in local time.
            'Y' | 'T' => {
                let text = wall_time(v.zero_extended(), self.spec == 'T');
                cfmt::string(out, text.as_bytes(), field)
            }
            // An address nobody symbolized.
            'a' | 'A' => {
                let text = format!("0x{:x}", v.zero_extended());
                cfmt::string(out, text.as_bytes(), field)
            }
            // `%S` and `%C`: the string or character with C escapes for what is not
            // printable (`\n`, `\"`, `\001`), as DTrace's strchr2esc writes them; the
            // width and precision count the escaped text.
            'S' => match v {
                Value::Str(s) => cfmt::string(out, &escaped(s), field),
                Value::Bytes(b) => {
                    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                    cfmt::string(out, &escaped(&b[..end]), field)
                }
                _ => {}
            },
            'C' => cfmt::string(out, &escaped(&[v.zero_extended() as u8]), field),
            's' => match v {
                Value::Str(s) => cfmt::string(out, s, field),
                Value::Bytes(b) => {
                    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
                    cfmt::string(out, &b[..end], field)
                }
                Value::Stack { .. } | Value::Sym { .. } => {}
                Value::Int { signed, .. } => {
                    let text = if *signed {
                        v.sign_extended().to_string()
                    } else {
                        v.zero_extended().to_string()
                    };
                    cfmt::string(out, text.as_bytes(), field)
                }
            },
            _ => {
                let x = match v {
                    // A float or double: its bits.
                    Value::Bytes(b) if b.len() == 4 => {
                        f64::from(f32::from_le_bytes(b[..4].try_into().expect("4 bytes")))
                    }
                    Value::Bytes(b) if b.len() == 8 => {
                        f64::from_le_bytes(b[..8].try_into().expect("8 bytes"))
                    }
                    Value::Int { signed: true, .. } => v.sign_extended() as f64,
                    _ => v.zero_extended() as f64,
                };
                let style = match self.spec {
                    'e' => FloatStyle::Exponent { upper: false },
                    'E' => FloatStyle::Exponent { upper: true },
                    'g' => FloatStyle::General { upper: false },
                    'G' => FloatStyle::General { upper: true },
                    _ => FloatStyle::Fixed,
                };
                cfmt::float(out, x, style, field);
            }
        }
    }
}

impl Format {
    /// The conversions, in order (`%%` excluded).
    pub fn conversions(&self) -> impl Iterator<Item = &Conversion> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Conv(c) => Some(c),
            Piece::Literal(_) => None,
        })
    }

    /// The arguments the format consumes, in order: for each conversion its
    /// `*` width, then its `*` precision, then its value (none for `%@`).
    pub fn args(&self) -> Vec<Arg> {
        let mut args = Vec::new();
        for c in self.conversions() {
            let mut push = |role, kind| {
                args.push(Arg {
                    conversion: c.number,
                    role,
                    kind,
                })
            };
            if c.width == Count::Star {
                push(ArgRole::Width, ArgKind::Integer);
            }
            if c.precision == Count::Star {
                push(ArgRole::Precision, ArgKind::Integer);
            }
            if !c.aggregation {
                push(ArgRole::Value, c.kind());
            }
        }
        args
    }

    /// Render with `args` (see [`Format::render_bytes`]); bytes that are not
    /// UTF-8 are replaced.
    pub fn render(&self, args: &[Value]) -> String {
        String::from_utf8_lossy(&self.render_bytes(args)).into_owned()
    }

    /// Render with `args`, byte for byte.  Output stops at the first
    /// conversion lacking an argument (DTrace reports a data mismatch
    /// there); `%@` conversions print nothing outside `printa()`.
    pub fn render_bytes(&self, args: &[Value]) -> Vec<u8> {
        let mut out = Vec::new();
        self.render_into(&mut out, &mut args.iter(), &mut |_, _, _| {});
        out
    }

    /// Render, taking ordinary arguments from `args` and letting `agg`
    /// format each `%@` conversion.
    pub(crate) fn render_into<'v>(
        &self,
        out: &mut Vec<u8>,
        args: &mut dyn Iterator<Item = &'v Value>,
        agg: &mut dyn FnMut(&Conversion, &Field, &mut Vec<u8>),
    ) {
        for piece in &self.pieces {
            let conv = match piece {
                Piece::Literal(text) => {
                    out.extend_from_slice(text);
                    continue;
                }
                Piece::Conv(conv) => conv,
            };
            let Some(field) = resolve_field(conv, args) else {
                return;
            };
            if conv.aggregation {
                agg(conv, &field, out);
            } else if let Some(v) = args.next() {
                conv.format_value(out, v, &field);
            } else {
                return;
            }
        }
    }
}

/// Resolve width and precision, consuming `*` arguments; `None` when one is
/// missing.
fn resolve_field(conv: &Conversion, args: &mut dyn Iterator<Item = &Value>) -> Option<Field> {
    let mut flags = conv.flags;
    let width = match conv.width {
        Count::Absent => 0,
        Count::Fixed(n) => n,
        Count::Star => {
            let w = args.next()?.sign_extended() as i32;
            if w < 0 {
                flags.left = true;
            }
            (w.unsigned_abs() as usize).min(MAX_FIELD)
        }
    };
    let precision = match conv.precision {
        Count::Absent => None,
        Count::Fixed(n) => Some(n),
        Count::Star => {
            let p = args.next()?.sign_extended() as i32;
            Some((p.max(0) as usize).min(MAX_FIELD))
        }
    };
    Some(Field {
        flags,
        width,
        precision: precision.filter(|&p| p > 0),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(fmt: &str, args: &[Value]) -> String {
        parse(fmt).unwrap().render(args)
    }

    fn int(value: u64, size: u8, signed: bool) -> Value {
        Value::Int {
            value,
            size,
            signed,
        }
    }

    #[test]
    fn hh_and_h_narrow_integers_as_c_does() {
        let v = int(257, 4, true);
        assert_eq!(
            render("%hhu %hhd %hu %u", &[v.clone(), v.clone(), v.clone(), v]),
            "1 1 257 257"
        );
        let m = int(-1i64 as u64, 4, true);
        assert_eq!(
            render("%hhu %hhd %hx %hd", &[m.clone(), m.clone(), m.clone(), m]),
            "255 -1 ffff -1"
        );
        // `%hhd` of an unsigned value is C's signed char.
        assert_eq!(render("%hhd", &[int(200, 1, false)]), "-56");
        assert_eq!(render("%ld", &[int(-5i64 as u64, 8, true)]), "-5");
    }

    #[test]
    fn integer_sizes() {
        assert_eq!(render("%x", &[Value::i32(-1)]), "ffffffff");
        assert_eq!(render("%X", &[Value::i64(-1)]), "FFFFFFFFFFFFFFFF");
        assert_eq!(render("%d", &[Value::u64(1 << 63)]), "9223372036854775808");
        assert_eq!(
            render("%d", &[Value::i64(i64::MIN)]),
            "-9223372036854775808"
        );
        assert_eq!(render("%u", &[Value::i32(-1)]), "4294967295");
        assert_eq!(render("%d", &[int(0xff, 1, true)]), "-1");
        assert_eq!(render("%d", &[int(0xff, 1, false)]), "255");
        assert_eq!(render("%x", &[int(0xfffe, 2, true)]), "fffe");
        assert_eq!(render("%o", &[Value::i32(8)]), "10");
        assert_eq!(render("%i", &[Value::i32(-5)]), "-5");
        assert_eq!(
            render(
                "%lld %hd %ld",
                &[Value::i64(1), Value::i32(2), Value::i64(3)]
            ),
            "1 2 3"
        );
    }

    #[test]
    fn flags_width_precision() {
        assert_eq!(render("[%5d]", &[Value::i32(42)]), "[   42]");
        assert_eq!(render("[%-5d]", &[Value::i32(42)]), "[42   ]");
        assert_eq!(render("[%05d]", &[Value::i32(-42)]), "[-0042]");
        // DTrace: a later '0' cancels an earlier '-'.
        assert_eq!(render("[%-05d]", &[Value::i32(42)]), "[00042]");
        assert_eq!(
            render("[%+d % d]", &[Value::i32(1), Value::i32(2)]),
            "[+1  2]"
        );
        assert_eq!(
            render("[%#x %#o]", &[Value::i32(255), Value::i32(8)]),
            "[0xff 010]"
        );
        assert_eq!(render("[%.3d]", &[Value::i32(7)]), "[007]");
        assert_eq!(render("[%*d]", &[Value::i32(4), Value::i32(7)]), "[   7]");
        assert_eq!(render("[%*d]", &[Value::i32(-4), Value::i32(7)]), "[7   ]");
        assert_eq!(
            render(
                "[%-*.*s]",
                &[Value::i32(6), Value::i32(2), Value::str("abc")]
            ),
            "[ab    ]"
        );
        assert_eq!(render("[%?p]", &[Value::u64(0x1234)]), "[            1234]");
        assert_eq!(
            render("%p", &[Value::u64(0xffff_8000_0000_1000)]),
            "ffff800000001000"
        );
    }

    #[test]
    fn strings_chars_percent() {
        assert_eq!(render("%s!", &[Value::str("hi")]), "hi!");
        assert_eq!(
            render(
                "%.2s|%-4s|%4s",
                &[Value::str("hello"), Value::str("a"), Value::str("b")]
            ),
            "he|a   |   b"
        );
        // A precision of zero is dropped, as DTrace does.
        assert_eq!(render("%.0s", &[Value::str("abc")]), "abc");
        assert_eq!(render("%c%c", &[Value::i32(72), int(0x69, 1, true)]), "Hi");
        assert_eq!(render("100%%", &[]), "100%");
        assert_eq!(render("%3c|", &[Value::i32(65)]), "  A|");
    }

    #[test]
    fn floats() {
        assert_eq!(
            render(
                "%f %e %g",
                &[Value::i32(3), Value::i32(12345), Value::i32(100)]
            ),
            "3.000000 1.234500e+04 100"
        );
        assert_eq!(render("%.2f", &[Value::i32(-1)]), "-1.00");
    }

    #[test]
    fn missing_arguments_stop_output() {
        assert_eq!(render("a %d b %d c", &[Value::i32(1)]), "a 1 b ");
    }

    #[test]
    fn arguments_for_type_checking() {
        let f = parse("%*.*d %s %@u %c %p %f %%").unwrap();
        let kinds: Vec<_> = f
            .args()
            .iter()
            .map(|a| (a.conversion, a.role, a.kind))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (1, ArgRole::Width, ArgKind::Integer),
                (1, ArgRole::Precision, ArgKind::Integer),
                (1, ArgRole::Value, ArgKind::Integer),
                (2, ArgRole::Value, ArgKind::String),
                (4, ArgRole::Value, ArgKind::Char),
                (5, ArgRole::Value, ArgKind::Pointer),
                (6, ArgRole::Value, ArgKind::Float),
            ]
        );
        let c: Vec<_> = f.conversions().map(|c| (c.spec, c.aggregation)).collect();
        assert_eq!(c[2], ('u', true));
        assert_eq!(
            parse("%lu").unwrap().conversions().next().unwrap().length,
            Some(Length::Long)
        );
        assert_eq!(
            parse("%hhx").unwrap().conversions().next().unwrap().length,
            Some(Length::Char)
        );
    }

    #[test]
    fn stacks_under_k_are_laid_out_per_frame() {
        let frame = |symbol: &str| crate::value::Frame {
            address: 1,
            place: crate::value::Place::Symbol {
                module: "vmlinux".into(),
                symbol: symbol.into(),
                offset: 0,
            },
        };
        let stack = Value::Stack {
            raw: vec![1, 2],
            frames: vec![frame("a"), frame("b")],
        };
        assert_eq!(
            render("%k|", std::slice::from_ref(&stack)),
            "\nvmlinux`a\nvmlinux`b\n|"
        );
        assert_eq!(
            render("%-12k|", std::slice::from_ref(&stack)),
            format!("\n{0}vmlinux`a   \n{0}vmlinux`b   \n|", " ".repeat(12))
        );
        assert_eq!(render("%12k|", &[stack]), "\n   vmlinux`a\n   vmlinux`b\n|");
    }

    #[test]
    fn floats_print_from_their_bits() {
        let double = Value::Bytes(1.5f64.to_le_bytes().to_vec());
        let float = Value::Bytes((-0.25f32).to_le_bytes().to_vec());
        assert_eq!(
            render(
                "%f %e %g|%f %G",
                &[double.clone(), double.clone(), double, float.clone(), float]
            ),
            "1.500000 1.500000e+00 1.5|-0.250000 -0.25"
        );
    }

    #[test]
    fn errors() {
        let err = |f: &str| parse(f).unwrap_err().to_string();
        assert_eq!(
            err("%"),
            "format conversion #1 name expected before end of format string"
        );
        assert_eq!(err("%z"), "format conversion #1 is undefined: %z");
        for f in ["%l", "%hh", "%5.2w", "%L"] {
            assert_eq!(
                err(f),
                "format conversion #1 name expected before end of format string"
            );
        }
        assert_eq!(err("%d %q"), "format conversion #2 is undefined: %q");
        assert_eq!(err("%hs"), "format conversion #1 is undefined: %hs");
        assert_eq!(err("%wd"), "format conversion #1 is undefined: %wd");
        assert_eq!(err("%hc"), "format conversion #1 is undefined: %hc");
        assert_eq!(err("%lls"), "format conversion #1 is undefined: %lls");
        assert_eq!(
            parse(b"%l\xe9").unwrap_err().to_string(),
            "format conversion #1 is undefined: %l\u{fffd}"
        );
        assert_eq!(
            err("%**d"),
            "format conversion #1 has more than one '*' specified for the output width"
        );
        assert_eq!(
            err("%.**d"),
            "format conversion #1 has more than one '*' specified for the output precision"
        );
        assert_eq!(
            err("%.*.*d"),
            "format conversion #1 has more than one '.' specified"
        );
        assert_eq!(
            err("%1$d"),
            "format conversion #1 uses unsupported positional format (%n$)"
        );
        assert_eq!(
            err("%5%"),
            "format conversion #1 cannot be combined with other format flags: %%"
        );
        assert_eq!(err("%lS"), "format conversion #1 is undefined: %lS");
    }

    #[test]
    fn widths_and_precisions_are_bounded() {
        let err = |f: &str| parse(f).unwrap_err().to_string();
        assert_eq!(
            err("%d %99999999999999999999d"),
            "format conversion #2 has a width larger than 16777216"
        );
        assert_eq!(
            err("%4294967297d"),
            "format conversion #1 has a width larger than 16777216"
        );
        assert_eq!(
            err("%.16777217s"),
            "format conversion #1 has a precision larger than 16777216"
        );
        let widest = render("%16777216d", &[Value::i32(7)]);
        assert_eq!(widest.len(), MAX_FIELD);
        assert!(widest.ends_with(" 7"));
        // A `*` beyond the bound gets the bound.
        for star in ["%*d", "%-*d"] {
            let w = if star == "%*d" { i32::MAX } else { i32::MIN };
            let out = render(star, &[Value::i32(w), Value::i32(7)]);
            assert_eq!(out.len(), MAX_FIELD, "{star}");
        }
        let out = render("%.*d", &[Value::i32(i32::MAX), Value::i32(7)]);
        assert_eq!(out.len(), MAX_FIELD);
        assert!(out.ends_with("07"));
    }

    /// 32-bit wide characters as the array `%ls` records.
    fn wide(s: &str) -> Value {
        let mut bytes: Vec<u8> = s.chars().flat_map(|c| (c as u32).to_le_bytes()).collect();
        bytes.extend([0; 8]);
        Value::Bytes(bytes)
    }

    #[test]
    fn wide_strings_and_characters_print_as_utf8() {
        let s = wide("h\u{e9}llo");
        let args = [s.clone(), s.clone(), s.clone(), s.clone(), s];
        assert_eq!(
            render("[%ls][%ws][%8ls][%-8ls][%.2ls]", &args),
            "[h\u{e9}llo][h\u{e9}llo][  h\u{e9}llo][h\u{e9}llo  ][h]"
        );
        assert_eq!(render("[%.3ls]", &[wide("h\u{e9}llo")]), "[h\u{e9}]");
        assert_eq!(
            render(
                "%lc%wc%3lc",
                &[Value::i32(97), Value::i32(0x263a), Value::i32(0xe9)]
            ),
            "a\u{263a} \u{e9}"
        );
        // No Unicode scalar value: a question mark.
        assert_eq!(render("%lc", &[Value::i32(0xd800)]), "?");
        let f = parse("%ls %*ws").unwrap();
        let kinds: Vec<ArgKind> = f.args().iter().map(|a| a.kind).collect();
        assert_eq!(
            kinds,
            [ArgKind::WideString, ArgKind::Integer, ArgKind::WideString]
        );
    }

    #[test]
    fn formats_and_strings_are_bytes() {
        let f = parse(b"\xff%s\xe9%c|%S\n").unwrap();
        let out = f.render_bytes(&[
            Value::Str(b"\xc0\xa8".to_vec()),
            Value::i32(0xfe),
            Value::Str(b"\xe9".to_vec()),
        ]);
        assert_eq!(out, b"\xff\xc0\xa8\xe9\xfe|\\351\n");
        // A width counts bytes, as C's does.
        let out = parse("[%4s]")
            .unwrap()
            .render_bytes(&[Value::Str(b"\xe9".to_vec())]);
        assert_eq!(out, b"[   \xe9]");
    }
}

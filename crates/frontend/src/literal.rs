//! Decoding of literal text: integer constants with C suffixes and C escape sequences.

use crate::raw_bytes;

/// An integer constant decoded from its text (digits and suffix).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntLiteral {
    pub value: u64,
    pub unsigned: bool,
    pub longs: u8,
    pub decimal: bool,
}

/// Why an integer constant could not be decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntError {
    Overflow,
    /// A digit not valid in the constant's base (`09`).
    InvalidDigit(char),
}

/// Length of the integer constant (digits and `u`/`l` suffix) at the start of `bytes`,
/// which must begin with a decimal digit. Hex needs at least one hex digit after `0x`.
pub fn int_len(bytes: &[u8]) -> usize {
    let hex = bytes.len() > 2
        && bytes[0] == b'0'
        && matches!(bytes[1], b'x' | b'X')
        && bytes[2].is_ascii_hexdigit();
    let mut n = if hex {
        2 + count(&bytes[2..], |b| b.is_ascii_hexdigit())
    } else {
        count(bytes, |b| b.is_ascii_digit())
    };
    // [uU]?[lL]{0,2}, or [lL]{1,2}[uU] as C also allows.
    let rest = &bytes[n..];
    let u = |b: &u8| matches!(b, b'u' | b'U');
    let l = |b: &u8| matches!(b, b'l' | b'L');
    if rest.first().is_some_and(u) {
        n += 1 + count(&rest[1..], |b| l(&b)).min(2);
    } else {
        let longs = count(rest, |b| l(&b)).min(2);
        n += longs;
        if longs > 0 && rest.get(longs).is_some_and(u) {
            n += 1;
        }
    }
    n
}

/// Length of a floating-point constant at the start of `bytes` (0 if there is none), as
/// DTrace's lexer recognises it in order to reject it.
pub fn float_len(bytes: &[u8]) -> usize {
    let digits =
        |from: usize| from + count(&bytes[from.min(bytes.len())..], |b| b.is_ascii_digit());
    let mut n = digits(0);
    if n == 0 {
        if bytes.first() != Some(&b'.') || !bytes.get(1).is_some_and(u8::is_ascii_digit) {
            return 0;
        }
        n = digits(1);
    } else if bytes.get(n) == Some(&b'.') {
        n = digits(n + 1);
    }
    if matches!(bytes.get(n), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(bytes.get(n + 1), Some(b'+' | b'-')));
        let end = digits(n + 1 + sign);
        if end > n + 1 + sign {
            n = end;
        }
    }
    if matches!(bytes.get(n), Some(b'f' | b'F' | b'l' | b'L')) {
        n += 1;
    }
    n
}

/// Decodes an integer constant text as returned by [`int_len`], like `strtoull(text, 0)`.
pub fn parse_int(text: &str) -> Result<IntLiteral, IntError> {
    let (radix, digits_start) = match text.as_bytes() {
        [b'0', b'x' | b'X', h, ..] if h.is_ascii_hexdigit() => (16, 2),
        [b'0', ..] => (8, 0),
        _ => (10, 0),
    };
    let body = &text[digits_start..];
    let digits_end = body
        .find(|c: char| !c.is_ascii_hexdigit() || (radix != 16 && !c.is_ascii_digit()))
        .unwrap_or(body.len());
    let (digits, suffix) = body.split_at(digits_end);
    let mut value: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(radix).ok_or(IntError::InvalidDigit(c))?;
        value = value
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(d)))
            .ok_or(IntError::Overflow)?;
    }
    Ok(IntLiteral {
        value,
        unsigned: suffix.contains(['u', 'U']),
        longs: suffix.chars().filter(|c| matches!(c, 'l' | 'L')).count() as u8,
        decimal: !text.starts_with('0'),
    })
}

/// Resolves the C escape sequences of a string or character constant body. Unknown
/// escapes keep their backslash, as DTrace does. The character carrying a byte of a source
/// that is not UTF-8 ([`raw_bytes`]) is that byte again.
pub fn unescape(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len());
    let mut i = 0;
    while i < body.len() {
        if let Some(b) = raw_bytes::carried(&body[i..]) {
            out.push(b);
            i += 4;
            continue;
        }
        let c = body[i];
        i += 1;
        if c != b'\\' || i == body.len() {
            out.push(c);
            continue;
        }
        if let Some(b) = raw_bytes::carried(&body[i..]) {
            // An unknown escape of a byte that is not UTF-8 keeps its backslash too.
            out.extend([b'\\', b]);
            i += 4;
            continue;
        }
        let e = body[i];
        i += 1;
        match e {
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match body.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push(v as u8);
            }
            b'x' => {
                let mut v: u32 = 0;
                while let Some(d) = body.get(i).and_then(|&d| (d as char).to_digit(16)) {
                    v = (v << 4 | d) & 0xff;
                    i += 1;
                }
                out.push(v as u8);
            }
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(0x0b),
            b'"' | b'\\' => out.push(e),
            // DTrace does not know `\'` and `\?`: like any other unknown escape,
            // they keep their backslash (`'\''` is 0x5c27).
            _ => out.extend_from_slice(&[b'\\', e]),
        }
    }
    out
}

fn count(bytes: &[u8], pred: impl Fn(u8) -> bool) -> usize {
    bytes.iter().take_while(|&&b| pred(b)).count()
}

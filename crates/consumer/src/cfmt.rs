//! C `printf(3)` field formatting: flags, width and precision applied to one
//! already-typed datum (integer, string, character or floating point).
//!
//! These are the building blocks the D `printf` renderer uses; they follow
//! glibc's behaviour in the C locale (the `'` grouping flag has no effect).

/// The flag characters of one conversion.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Flags {
    /// `-`: left-justify within the field.
    pub left: bool,
    /// `0`: pad numbers with leading zeros.
    pub zero: bool,
    /// `+`: always print a sign for signed conversions.
    pub plus: bool,
    /// ` `: print a space where a `+` sign would go.
    pub space: bool,
    /// `#`: alternate form (`0x` prefix, leading octal `0`, kept `.`).
    pub alt: bool,
    /// `'`: thousands grouping (no effect in the C locale).
    pub group: bool,
}

/// Resolved field parameters of one conversion.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Field {
    pub flags: Flags,
    pub width: usize,
    pub precision: Option<usize>,
}

/// Digit style of an unsigned conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Radix {
    Decimal,
    Octal,
    Hex,
    HexUpper,
}

/// Style of a floating-point conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FloatStyle {
    Fixed,
    Exponent { upper: bool },
    General { upper: bool },
}

/// `%d`-style signed decimal.
pub(crate) fn signed(out: &mut Vec<u8>, v: i64, f: &Field) {
    let sign = sign_prefix(v < 0, &f.flags);
    let digits = v.unsigned_abs().to_string().into_bytes();
    number(out, sign, digits, f);
}

/// `%u`/`%o`/`%x`/`%X`-style unsigned number.
pub(crate) fn unsigned(out: &mut Vec<u8>, v: u64, radix: Radix, f: &Field) {
    let mut digits = match radix {
        Radix::Decimal => v.to_string(),
        Radix::Octal => format!("{v:o}"),
        Radix::Hex => format!("{v:x}"),
        Radix::HexUpper => format!("{v:X}"),
    }
    .into_bytes();
    let mut prefix: &[u8] = b"";
    if f.flags.alt {
        match radix {
            Radix::Octal if f.precision.is_none_or(|p| p <= digits.len()) => {
                digits.insert(0, b'0');
            }
            Radix::Hex if v != 0 => prefix = b"0x",
            Radix::HexUpper if v != 0 => prefix = b"0X",
            _ => {}
        }
    }
    number(out, prefix, digits, f);
}

/// `%s`: the precision limits the bytes printed.
pub(crate) fn string(out: &mut Vec<u8>, s: &[u8], f: &Field) {
    let s = &s[..f.precision.map_or(s.len(), |p| p.min(s.len()))];
    pad(out, b"", s, f.width, f.flags.left, false);
}

/// `%c`: one byte.
pub(crate) fn char(out: &mut Vec<u8>, c: u8, f: &Field) {
    pad(out, b"", &[c], f.width, f.flags.left, false);
}

/// `%e`/`%f`/`%g` (and upper-case variants).
pub(crate) fn float(out: &mut Vec<u8>, v: f64, style: FloatStyle, f: &Field) {
    let precision = f.precision.unwrap_or(6);
    let body = match style {
        FloatStyle::Fixed => fixed(v.abs(), precision, f.flags.alt),
        FloatStyle::Exponent { upper } => exponent(v.abs(), precision, f.flags.alt, upper),
        FloatStyle::General { upper } => general(v.abs(), precision, f.flags.alt, upper),
    };
    let sign = sign_prefix(v.is_sign_negative() && v != 0.0, &f.flags);
    pad(
        out,
        sign,
        body.as_bytes(),
        f.width,
        f.flags.left,
        f.flags.zero,
    );
}

/// The sign characters of a signed conversion.
fn sign_prefix(negative: bool, flags: &Flags) -> &'static [u8] {
    if negative {
        b"-"
    } else if flags.plus {
        b"+"
    } else if flags.space {
        b" "
    } else {
        b""
    }
}

/// Apply integer precision (minimum digits) and then the field width.
fn number(out: &mut Vec<u8>, prefix: &[u8], mut digits: Vec<u8>, f: &Field) {
    if let Some(p) = f.precision {
        if p == 0 && digits == b"0" {
            digits.clear();
        }
        if digits.len() < p {
            let mut zeros = vec![b'0'; p - digits.len()];
            zeros.append(&mut digits);
            digits = zeros;
        }
    }
    let zero = f.flags.zero && f.precision.is_none();
    pad(out, prefix, &digits, f.width, f.flags.left, zero);
}

/// Emit `prefix` + `body` padded to `width` (spaces, or zeros after the
/// prefix when `zero`).
fn pad(out: &mut Vec<u8>, prefix: &[u8], body: &[u8], width: usize, left: bool, zero: bool) {
    let fill = width.saturating_sub(prefix.len() + body.len());
    if left {
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
        out.resize(out.len() + fill, b' ');
    } else if zero {
        out.extend_from_slice(prefix);
        out.resize(out.len() + fill, b'0');
        out.extend_from_slice(body);
    } else {
        out.resize(out.len() + fill, b' ');
        out.extend_from_slice(prefix);
        out.extend_from_slice(body);
    }
}

/// `%f` body of a non-negative value.
fn fixed(v: f64, precision: usize, alt: bool) -> String {
    let mut s = format!("{v:.precision$}");
    if alt && precision == 0 {
        s.push('.');
    }
    s
}

/// Split a non-negative value into a `%e` mantissa string and exponent.
fn mantissa_exponent(v: f64, precision: usize) -> (String, i32) {
    let s = format!("{v:.precision$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    (m.to_string(), e.parse().unwrap_or(0))
}

/// `%e` body of a non-negative value.
fn exponent(v: f64, precision: usize, alt: bool, upper: bool) -> String {
    let (mut m, e) = mantissa_exponent(v, precision);
    if alt && precision == 0 {
        m.push('.');
    }
    join_exponent(&m, e, upper)
}

/// Mantissa and exponent in C's `e+NN` form.
fn join_exponent(m: &str, e: i32, upper: bool) -> String {
    let sign = if e < 0 { '-' } else { '+' };
    let e_char = if upper { 'E' } else { 'e' };
    format!("{m}{e_char}{sign}{:02}", e.unsigned_abs())
}

/// `%g` body of a non-negative value.
fn general(v: f64, precision: usize, alt: bool, upper: bool) -> String {
    let p = precision.max(1);
    let (m, x) = mantissa_exponent(v, p - 1);
    let p = p as i32;
    if x < p && x >= -4 {
        let s = fixed(v, (p - 1 - x) as usize, alt);
        if alt {
            s
        } else {
            strip_zeros(&s).to_string()
        }
    } else if alt {
        exponent(v, (p - 1) as usize, true, upper)
    } else {
        join_exponent(strip_zeros(&m), x, upper)
    }
}

/// Remove trailing fractional zeros (and a bare trailing `.`).
fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(flags: Flags, width: usize, precision: Option<usize>) -> Field {
        Field {
            flags,
            width,
            precision,
        }
    }

    fn run(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        f(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn integers() {
        let zero = Flags {
            zero: true,
            ..Flags::default()
        };
        assert_eq!(run(|o| signed(o, -42, &field(zero, 6, None))), "-00042");
        assert_eq!(run(|o| signed(o, 42, &field(zero, 6, Some(3)))), "   042");
        let plus = Flags {
            plus: true,
            ..Flags::default()
        };
        assert_eq!(run(|o| signed(o, 7, &field(plus, 0, None))), "+7");
        let alt = Flags {
            alt: true,
            ..Flags::default()
        };
        assert_eq!(
            run(|o| unsigned(o, 255, Radix::Hex, &field(alt, 0, None))),
            "0xff"
        );
        assert_eq!(
            run(|o| unsigned(o, 0, Radix::Hex, &field(alt, 0, None))),
            "0"
        );
        assert_eq!(
            run(|o| unsigned(o, 8, Radix::Octal, &field(alt, 0, None))),
            "010"
        );
        let left = Flags {
            left: true,
            ..Flags::default()
        };
        assert_eq!(
            run(|o| unsigned(o, 10, Radix::HexUpper, &field(left, 4, None))),
            "A   "
        );
    }

    #[test]
    fn strings_and_chars() {
        let d = Flags::default();
        assert_eq!(
            run(|o| string(o, b"hello", &field(d, 7, Some(3)))),
            "    hel"
        );
        assert_eq!(run(|o| char(o, b'A', &field(d, 3, None))), "  A");
    }

    #[test]
    fn floats() {
        let d = Flags::default();
        let f = |v, style, p| run(|o| float(o, v, style, &field(d, 0, p)));
        assert_eq!(f(3.0, FloatStyle::Fixed, None), "3.000000");
        assert_eq!(f(-2.5, FloatStyle::Fixed, Some(2)), "-2.50");
        let e = FloatStyle::Exponent { upper: false };
        assert_eq!(f(12345.0, e, None), "1.234500e+04");
        assert_eq!(f(0.0, e, Some(2)), "0.00e+00");
        let g = FloatStyle::General { upper: false };
        assert_eq!(f(100000.0, g, None), "100000");
        assert_eq!(f(1000000.0, g, None), "1e+06");
        assert_eq!(f(0.0001, g, None), "0.0001");
        assert_eq!(
            f(1234567.0, FloatStyle::General { upper: true }, None),
            "1.23457E+06"
        );
    }
}

//! `#if` expressions: C's integer constant expressions in `intmax_t`/`uintmax_t`, on
//! tokens whose macros are already expanded and whose `defined` operators are already
//! replaced; any identifier left is 0. Errors are worded as GNU cpp words them.

use crate::lex::{Kind, Token};

/// A value: 64 bits, signed or unsigned (an unsigned operand makes the operation unsigned).
#[derive(Clone, Copy)]
struct Val {
    v: u64,
    unsigned: bool,
}

impl Val {
    fn int(v: i64) -> Val {
        Val {
            v: v as u64,
            unsigned: false,
        }
    }
    fn truth(self) -> bool {
        self.v != 0
    }
}

struct Parser<'a> {
    toks: &'a [Token],
    pos: usize,
    /// Evaluating: off inside the branch `&&`, `||` or `?:` skips (its division by zero is
    /// no error there).
    live: bool,
}

type R<T> = Result<T, String>;

/// The value of a `#if` expression: whether it is true.
pub fn evaluate(toks: &[Token]) -> R<bool> {
    if toks.is_empty() {
        return Err("#if with no expression".into());
    }
    let mut p = Parser {
        toks,
        pos: 0,
        live: true,
    };
    let v = p.conditional()?;
    if let Some(t) = toks.get(p.pos) {
        return Err(if t.is(")") {
            "missing '(' in expression".into()
        } else {
            format!("missing binary operator before token \"{}\"", t.text)
        });
    }
    Ok(v.truth())
}

/// Binary operators by precedence, loosest first (after `?:`).
const LEVELS: &[&[&str]] = &[
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", ">", "<=", ">="],
    &["<<", ">>"],
    &["+", "-"],
    &["*", "/", "%"],
];

impl Parser<'_> {
    fn peek(&self) -> Option<&Token> {
        self.toks.get(self.pos)
    }

    fn conditional(&mut self) -> R<Val> {
        let c = self.binary(0)?;
        if !self.peek().is_some_and(|t| t.is("?")) {
            return Ok(c);
        }
        self.pos += 1;
        let live = self.live;
        self.live = live && c.truth();
        let a = self.conditional()?;
        if !self.peek().is_some_and(|t| t.is(":")) {
            return Err("'?' without following ':'".into());
        }
        self.pos += 1;
        self.live = live && !c.truth();
        let b = self.conditional()?;
        self.live = live;
        let unsigned = a.unsigned || b.unsigned;
        let v = if c.truth() { a.v } else { b.v };
        Ok(Val { v, unsigned })
    }

    fn binary(&mut self, level: usize) -> R<Val> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut l = self.binary(level + 1)?;
        while let Some(op) = self
            .peek()
            .filter(|t| t.kind == Kind::Punct && LEVELS[level].contains(&t.text.as_str()))
            .map(|t| t.text.clone())
        {
            self.pos += 1;
            let live = self.live;
            if op == "&&" {
                self.live = live && l.truth();
            } else if op == "||" {
                self.live = live && !l.truth();
            }
            let r = self.binary(level + 1)?;
            self.live = live;
            l = self.apply(&op, l, r)?;
        }
        Ok(l)
    }

    fn apply(&self, op: &str, l: Val, r: Val) -> R<Val> {
        let unsigned = l.unsigned || r.unsigned;
        let (a, b) = (l.v, r.v);
        let (sa, sb) = (a as i64, b as i64);
        let bool_val = |x: bool| Val::int(x as i64);
        let arith = |v: u64| Val { v, unsigned };
        Ok(match op {
            "||" => bool_val(l.truth() || r.truth()),
            "&&" => bool_val(l.truth() && r.truth()),
            "|" => arith(a | b),
            "^" => arith(a ^ b),
            "&" => arith(a & b),
            "==" => bool_val(a == b),
            "!=" => bool_val(a != b),
            "<" => bool_val(if unsigned { a < b } else { sa < sb }),
            ">" => bool_val(if unsigned { a > b } else { sa > sb }),
            "<=" => bool_val(if unsigned { a <= b } else { sa <= sb }),
            ">=" => bool_val(if unsigned { a >= b } else { sa >= sb }),
            "<<" => Val {
                v: a.checked_shl(b as u32).unwrap_or(0),
                unsigned: l.unsigned,
            },
            ">>" => Val {
                v: if l.unsigned {
                    a.checked_shr(b as u32).unwrap_or(0)
                } else {
                    sa.checked_shr(b as u32)
                        .unwrap_or(if sa < 0 { -1 } else { 0 }) as u64
                },
                unsigned: l.unsigned,
            },
            "+" => arith(a.wrapping_add(b)),
            "-" => arith(a.wrapping_sub(b)),
            "*" => arith(a.wrapping_mul(b)),
            "/" | "%" => {
                if b == 0 {
                    if self.live {
                        return Err("division by zero in #if".into());
                    }
                    return Ok(arith(0));
                }
                let v = match (op, unsigned) {
                    ("/", true) => a / b,
                    ("/", false) => sa.wrapping_div(sb) as u64,
                    (_, true) => a % b,
                    _ => sa.wrapping_rem(sb) as u64,
                };
                arith(v)
            }
            _ => return Err(format!("missing binary operator before token \"{op}\"")),
        })
    }

    fn unary(&mut self) -> R<Val> {
        let Some(t) = self.peek().cloned() else {
            return Err("#if with no expression".into());
        };
        self.pos += 1;
        match (t.kind, t.text.as_str()) {
            (Kind::Punct, "-") => {
                let v = self.unary()?;
                Ok(Val {
                    v: v.v.wrapping_neg(),
                    ..v
                })
            }
            (Kind::Punct, "+") => self.unary(),
            (Kind::Punct, "~") => {
                let v = self.unary()?;
                Ok(Val { v: !v.v, ..v })
            }
            (Kind::Punct, "!") => {
                let v = self.unary()?;
                Ok(Val::int(!v.truth() as i64))
            }
            (Kind::Punct, "(") => {
                let v = self.conditional()?;
                if !self.peek().is_some_and(|t| t.is(")")) {
                    return Err("missing ')' in expression".into());
                }
                self.pos += 1;
                Ok(v)
            }
            (Kind::Number, text) => number(text),
            (Kind::Literal, text) if text.ends_with('\'') => character(text),
            (Kind::Ident, _) => Ok(Val::int(0)),
            (_, text) => Err(format!(
                "token \"{text}\" is not valid in preprocessor expressions"
            )),
        }
    }
}

/// An integer literal, with its suffixes.
fn number(text: &str) -> R<Val> {
    let lower = text.to_ascii_lowercase();
    let digits = lower.trim_end_matches(['u', 'l']);
    let unsigned = lower[digits.len()..].contains('u');
    let bad = || format!("invalid integer constant in #if: \"{text}\"");
    let (radix, body) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if let Some(b) = digits.strip_prefix("0b") {
        (2, b)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.contains('.') || (radix == 10 && body.contains('e')) {
        return Err("floating constant in preprocessor expression".into());
    }
    let v = u64::from_str_radix(body, radix).map_err(|_| bad())?;
    // A value too large for intmax_t, or any with a u suffix, is unsigned.
    let unsigned = unsigned || v > i64::MAX as u64;
    Ok(Val { v, unsigned })
}

/// A character constant: its (first) character's value, as an `int`.
fn character(text: &str) -> R<Val> {
    let inner = text
        .trim_start_matches(['L', 'u', 'U', '8'])
        .trim_start_matches('\'')
        .trim_end_matches('\'');
    let mut chars = inner.chars();
    let v = match chars.next() {
        Some('\\') => match chars.next() {
            Some('n') => 10,
            Some('t') => 9,
            Some('r') => 13,
            Some('0') => 0,
            Some('a') => 7,
            Some('b') => 8,
            Some('f') => 12,
            Some('v') => 11,
            Some(c) => c as i64,
            None => return Err("empty character constant".into()),
        },
        Some(c) => c as i64,
        None => return Err("empty character constant".into()),
    };
    Ok(Val::int(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::tokens;

    fn eval(s: &str) -> R<bool> {
        evaluate(&tokens(s, 1))
    }

    #[test]
    fn c_arithmetic() {
        assert_eq!(eval("1 + 2 * 3 == 7"), Ok(true));
        assert_eq!(eval("-1 < 0"), Ok(true));
        assert_eq!(eval("-1 < 0u"), Ok(false));
        assert_eq!(eval("0x10 >> 4 == 1 && 'a' == 97"), Ok(true));
        assert_eq!(eval("0 ? 1 / 0 : 2"), Ok(true));
        assert_eq!(eval("0 && 1 / 0"), Ok(false));
        assert_eq!(eval("(1 || x) && !0L"), Ok(true));
        assert_eq!(eval("017 == 15"), Ok(true));
    }

    #[test]
    fn errors_in_gnu_words() {
        assert_eq!(eval("1 / 0"), Err("division by zero in #if".into()));
        assert_eq!(eval(""), Err("#if with no expression".into()));
        assert_eq!(
            eval("1 2"),
            Err("missing binary operator before token \"2\"".into())
        );
        assert_eq!(eval("(1"), Err("missing ')' in expression".into()));
    }
}

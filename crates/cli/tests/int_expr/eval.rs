//! The reference side of the integer-expression property tests: a tiny C integer expression
//! AST, how it is spelled in D, and an evaluator implementing C's rules on LP64 (integer
//! promotions, usual arithmetic conversions, result types of operators, conversions on casts)
//! with D's definitions where C leaves the behaviour undefined:
//!
//! - signed overflow wraps (two's complement), in every width;
//! - `x / 0` and `x % 0` are a runtime error (`divide-by-zero`), never a value;
//! - `MIN / -1` wraps to `MIN` and `MIN % -1` is 0, in every signed width (what 64-bit
//!   registers give once the quotient is truncated back to the operand type);
//! - shift counts must be below the width of the promoted left operand (0..31 for int and
//!   unsigned int, 0..63 for long); other counts are not given a meaning here (the generator
//!   never evaluates one);
//! - signed `%` is C's remainder negated when the divisor is negative (Oracle DTrace's
//!   results: `19 % -5` is -4, `-19 % -5` is 4);
//! - `^^` is logical exclusive or: both operands are evaluated, the result is int 0 or 1;
//! - an assignment has its left operand's type, the value converted to it.
//!
//! The evaluator is independent of the compiler: it shares no code with crates/backend.

use std::fmt;

/// An integer type, as far as the tests can observe it: its size and signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntType {
    pub size: u8,
    pub signed: bool,
}

pub const CHAR: IntType = IntType {
    size: 1,
    signed: true,
};
pub const INT: IntType = IntType {
    size: 4,
    signed: true,
};
pub const UINT: IntType = IntType {
    size: 4,
    signed: false,
};
pub const LONG: IntType = IntType {
    size: 8,
    signed: true,
};
pub const ULONG: IntType = IntType {
    size: 8,
    signed: false,
};

/// Type names the generator casts to, with the type each names on LP64.
pub const CAST_NAMES: &[(&str, IntType)] = &[
    ("char", CHAR),
    ("signed char", CHAR),
    (
        "unsigned char",
        IntType {
            size: 1,
            signed: false,
        },
    ),
    (
        "short",
        IntType {
            size: 2,
            signed: true,
        },
    ),
    (
        "unsigned short",
        IntType {
            size: 2,
            signed: false,
        },
    ),
    ("int", INT),
    ("unsigned int", UINT),
    ("unsigned", UINT),
    ("long", LONG),
    ("unsigned long", ULONG),
    ("long long", LONG),
    ("unsigned long long", ULONG),
    ("int8_t", CHAR),
    (
        "uint8_t",
        IntType {
            size: 1,
            signed: false,
        },
    ),
    (
        "int16_t",
        IntType {
            size: 2,
            signed: true,
        },
    ),
    (
        "uint16_t",
        IntType {
            size: 2,
            signed: false,
        },
    ),
    ("int32_t", INT),
    ("uint32_t", UINT),
    ("int64_t", LONG),
    ("uint64_t", ULONG),
];

impl IntType {
    pub fn bits(self) -> u32 {
        self.size as u32 * 8
    }

    /// C's integer promotion: everything narrower than int becomes int (int holds every
    /// char and short value, signed or not).
    pub fn promoted(self) -> IntType {
        if self.size < 4 {
            INT
        } else {
            self
        }
    }

    /// C's usual arithmetic conversions on LP64: promote both; the wider wins; at equal
    /// width unsigned wins (long long vs unsigned long gives unsigned long long, which has
    /// the same size and signedness as unsigned long).
    pub fn common(a: IntType, b: IntType) -> IntType {
        let (a, b) = (a.promoted(), b.promoted());
        if a.size != b.size {
            if a.size > b.size {
                a
            } else {
                b
            }
        } else {
            IntType {
                size: a.size,
                signed: a.signed && b.signed,
            }
        }
    }

    /// Truncate `v` to this type's width and sign- or zero-extend it back to 64 bits.
    pub fn normalize(self, v: u64) -> u64 {
        match (self.size, self.signed) {
            (8, _) => v,
            (1, true) => v as i8 as i64 as u64,
            (1, false) => v as u8 as u64,
            (2, true) => v as i16 as i64 as u64,
            (2, false) => v as u16 as u64,
            (4, true) => v as i32 as i64 as u64,
            (4, false) => v as u32 as u64,
            _ => unreachable!("integer size {}", self.size),
        }
    }

    /// Whether `v` (an unsigned mathematical value) is representable in this type.
    pub fn holds(self, v: u64) -> bool {
        let max = if self.signed {
            (1u64 << (self.bits() - 1)) - 1
        } else if self.size == 8 {
            u64::MAX
        } else {
            (1u64 << self.bits()) - 1
        };
        v <= max
    }
}

impl fmt::Display for IntType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match (self.size, self.signed) {
            (1, true) => "char",
            (1, false) => "unsigned char",
            (2, true) => "short",
            (2, false) => "unsigned short",
            (4, true) => "int",
            (4, false) => "unsigned int",
            (8, true) => "long",
            _ => "unsigned long",
        };
        f.write_str(name)
    }
}

/// The type of an integer constant from its value, base and suffix (C99 6.4.4.1, LP64).
/// `None` when C gives it no type (a decimal constant beyond `long long` without `u`).
pub fn constant_type(value: u64, decimal: bool, unsigned: bool, longs: u8) -> Option<IntType> {
    let candidates: &[IntType] = match (decimal, unsigned, longs) {
        (true, false, 0) => &[INT, LONG],
        (false, false, 0) => &[INT, UINT, LONG, ULONG],
        (_, true, 0) => &[UINT, ULONG],
        (true, false, _) => &[LONG],
        (false, false, _) => &[LONG, ULONG],
        (_, true, _) => &[ULONG],
    };
    candidates.iter().copied().find(|t| t.holds(value))
}

/// A value with its type; `bits` is normalized to the type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value {
    pub bits: u64,
    pub ty: IntType,
}

impl Value {
    pub fn new(bits: u64, ty: IntType) -> Value {
        Value {
            bits: ty.normalize(bits),
            ty,
        }
    }

    pub fn truth(self) -> bool {
        self.bits != 0
    }

    fn int(b: bool) -> Value {
        Value::new(b as u64, INT)
    }

    /// The value converted to `ty`.
    pub fn to(self, ty: IntType) -> Value {
        Value::new(self.bits, ty)
    }

    /// The value as `(long long)` sees it: what `%d` of a `long long` prints.
    pub fn as_i64(self) -> i64 {
        self.bits as i64
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Plus,
    BitNot,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Mul,
    Div,
    Mod,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    LogAnd,
    LogOr,
    LogXor,
}

impl BinOp {
    pub const ALL: [BinOp; 19] = [
        BinOp::Mul,
        BinOp::Div,
        BinOp::Mod,
        BinOp::Add,
        BinOp::Sub,
        BinOp::Shl,
        BinOp::Shr,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::Eq,
        BinOp::Ne,
        BinOp::BitAnd,
        BinOp::BitXor,
        BinOp::BitOr,
        BinOp::LogAnd,
        BinOp::LogOr,
        BinOp::LogXor,
    ];

    pub fn text(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::BitAnd => "&",
            BinOp::BitXor => "^",
            BinOp::BitOr => "|",
            BinOp::LogAnd => "&&",
            BinOp::LogOr => "||",
            BinOp::LogXor => "^^",
        }
    }
}

/// An integer expression. Every node spells itself fully parenthesized, so the tests
/// exercise code generation and not operator precedence.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A constant as written (`0x80000000UL`) with its value and C type.
    Const {
        text: String,
        value: Value,
    },
    /// A clause-local variable (`this->v3`) holding `value` (assigned before use).
    Var {
        name: String,
        value: Value,
    },
    Cast {
        name: &'static str,
        ty: IntType,
        operand: Box<Expr>,
    },
    Unary(UnOp, Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    Comma(Box<Expr>, Box<Expr>),
    /// `(this->s2 = rhs)` to a variable of type `ty` that expressions never read.
    Assign {
        name: String,
        ty: IntType,
        rhs: Box<Expr>,
    },
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Const { text, .. } => f.write_str(text),
            Expr::Var { name, .. } => f.write_str(name),
            Expr::Cast { name, operand, .. } => write!(f, "(({name}){operand})"),
            Expr::Unary(op, e) => {
                let text = match op {
                    UnOp::Neg => "-",
                    UnOp::Plus => "+",
                    UnOp::BitNot => "~",
                    UnOp::Not => "!",
                };
                // The space keeps `- -1` from reading as `--`.
                write!(f, "({text} {e})")
            }
            Expr::Binary(op, a, b) => write!(f, "({a} {} {b})", op.text()),
            Expr::Ternary(c, a, b) => write!(f, "({c} ? {a} : {b})"),
            Expr::Comma(a, b) => write!(f, "({a}, {b})"),
            Expr::Assign { name, rhs, .. } => write!(f, "({name} = {rhs})"),
        }
    }
}

/// Why an expression has no value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// `/` or `%` by zero was evaluated: D faults with `divide-by-zero`.
    DivZero,
    /// A shift count outside 0..width of the promoted left operand was evaluated.
    BadShift,
}

/// The type of `e` without evaluating it (what `sizeof` reports).
pub fn type_of(e: &Expr) -> IntType {
    match e {
        Expr::Const { value, .. } | Expr::Var { value, .. } => value.ty,
        Expr::Cast { ty, .. } => *ty,
        Expr::Unary(UnOp::Not, _) => INT,
        Expr::Unary(_, e) => type_of(e).promoted(),
        Expr::Binary(op, a, b) => binary_type(*op, type_of(a), type_of(b)),
        Expr::Ternary(_, a, b) => IntType::common(type_of(a), type_of(b)),
        Expr::Comma(_, b) => type_of(b),
        Expr::Assign { ty, .. } => *ty,
    }
}

/// The result type of `a op b`.
pub fn binary_type(op: BinOp, a: IntType, b: IntType) -> IntType {
    use BinOp::*;
    match op {
        Shl | Shr => a.promoted(),
        Lt | Le | Gt | Ge | Eq | Ne | LogAnd | LogOr | LogXor => INT,
        _ => IntType::common(a, b),
    }
}

/// Evaluate `e` with C's (and D's) semantics; unevaluated operands of `&&`, `||` and `?:`
/// may hold anything, as in C.
pub fn eval(e: &Expr) -> Result<Value, Error> {
    Ok(match e {
        Expr::Const { value, .. } | Expr::Var { value, .. } => *value,
        Expr::Cast { ty, operand, .. } => eval(operand)?.to(*ty),
        Expr::Unary(op, e) => unary(*op, eval(e)?),
        Expr::Binary(BinOp::LogAnd, a, b) => Value::int(eval(a)?.truth() && eval(b)?.truth()),
        Expr::Binary(BinOp::LogOr, a, b) => Value::int(eval(a)?.truth() || eval(b)?.truth()),
        Expr::Binary(op, a, b) => binary(*op, eval(a)?, eval(b)?)?,
        Expr::Ternary(c, a, b) => {
            let ty = type_of(e);
            if eval(c)?.truth() {
                eval(a)?.to(ty)
            } else {
                eval(b)?.to(ty)
            }
        }
        Expr::Comma(a, b) => {
            eval(a)?;
            eval(b)?
        }
        Expr::Assign { ty, rhs, .. } => eval(rhs)?.to(*ty),
    })
}

pub fn unary(op: UnOp, v: Value) -> Value {
    let ty = v.ty.promoted();
    let v = v.to(ty);
    match op {
        UnOp::Neg => Value::new(v.bits.wrapping_neg(), ty),
        UnOp::Plus => v,
        UnOp::BitNot => Value::new(!v.bits, ty),
        UnOp::Not => Value::int(!v.truth()),
    }
}

/// `a op b` for the operators that evaluate both operands.
pub fn binary(op: BinOp, a: Value, b: Value) -> Result<Value, Error> {
    use BinOp::*;
    if matches!(op, Shl | Shr) {
        let ty = a.ty.promoted();
        let a = a.to(ty);
        // The count's own type does not matter, only its value.
        let count = if b.ty.signed {
            b.as_i64()
        } else {
            b.bits.min(i64::MAX as u64) as i64
        };
        if !(0..ty.bits() as i64).contains(&count) {
            return Err(Error::BadShift);
        }
        let bits = if op == Shl {
            a.bits << count
        } else if ty.signed {
            (a.as_i64() >> count) as u64
        } else {
            a.bits >> count
        };
        return Ok(Value::new(bits, ty));
    }
    if op == LogXor {
        return Ok(Value::int(a.truth() != b.truth()));
    }
    if op == LogAnd {
        return Ok(Value::int(a.truth() && b.truth()));
    }
    if op == LogOr {
        return Ok(Value::int(a.truth() || b.truth()));
    }
    let ty = IntType::common(a.ty, b.ty);
    let (x, y) = (a.to(ty), b.to(ty));
    let (sx, sy) = (x.as_i64(), y.as_i64());
    let bits = match op {
        Mul => x.bits.wrapping_mul(y.bits),
        Add => x.bits.wrapping_add(y.bits),
        Sub => x.bits.wrapping_sub(y.bits),
        BitAnd => x.bits & y.bits,
        BitXor => x.bits ^ y.bits,
        BitOr => x.bits | y.bits,
        Div | Mod if y.bits == 0 => return Err(Error::DivZero),
        // Values are extended to 64 bits, so for narrower types the quotient of MIN / -1
        // is exact here and wraps when normalized; for 64-bit types wrapping_div wraps.
        Div if ty.signed => sx.wrapping_div(sy) as u64,
        // D (as Oracle's tst.moddiv shows) negates C's remainder when the divisor is
        // negative: 19 % -5 is -4 and -19 % -5 is 4.
        Mod if ty.signed && sy < 0 => sx.wrapping_rem(sy).wrapping_neg() as u64,
        Mod if ty.signed => sx.wrapping_rem(sy) as u64,
        Div => x.bits / y.bits,
        Mod => x.bits % y.bits,
        Lt | Le | Gt | Ge | Eq | Ne => {
            let ord = if ty.signed {
                sx.cmp(&sy)
            } else {
                x.bits.cmp(&y.bits)
            };
            use std::cmp::Ordering::*;
            let r = match op {
                Lt => ord == Less,
                Le => ord != Greater,
                Gt => ord == Greater,
                Ge => ord != Less,
                Eq => ord == Equal,
                _ => ord != Equal,
            };
            return Ok(Value::int(r));
        }
        Shl | Shr | LogAnd | LogOr | LogXor => unreachable!(),
    };
    Ok(Value::new(bits, ty))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(text: &str, bits: u64, ty: IntType) -> Expr {
        Expr::Const {
            text: text.into(),
            value: Value::new(bits, ty),
        }
    }

    #[test]
    fn reference_follows_c() {
        let neg1 = Expr::Unary(UnOp::Neg, Box::new(c("1", 1, INT)));
        let lt = Expr::Binary(BinOp::Lt, Box::new(neg1), Box::new(c("1u", 1, UINT)));
        assert_eq!(eval(&lt), Ok(Value::new(0, INT)));
        let v = binary(
            BinOp::Div,
            Value::new(-7i64 as u64, INT),
            Value::new(2, INT),
        );
        assert_eq!(v.unwrap().as_i64(), -3);
        let v = binary(
            BinOp::Mod,
            Value::new(-7i64 as u64, INT),
            Value::new(2, INT),
        );
        assert_eq!(v.unwrap().as_i64(), -1);
        let v = binary(
            BinOp::Div,
            Value::new(-7i64 as u64, UINT),
            Value::new(2, INT),
        );
        assert_eq!(v.unwrap().bits, 2147483644);
        assert_eq!(Value::new(200, CHAR).as_i64(), -56);
        assert_eq!(constant_type(0x8000_0000, false, false, 0), Some(UINT));
        assert_eq!(constant_type(0x8000_0000, true, false, 0), Some(LONG));
        assert_eq!(constant_type(u64::MAX, true, false, 0), None);
    }
}

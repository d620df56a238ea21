//! The reference side of the integer-expression property tests: a tiny integer expression
//! AST, how it is spelled in D, and an evaluator of D's integer semantics as Oracle's DTrace
//! defines them on LP64 (its parser's typing and constant folding, `dt_parser.c`, and its
//! code generator's registers, `dt_cg.c`):
//!
//! - every value is a 64-bit register; an operator computes on the 64 bits and does not
//!   narrow its result to its type: `(char)100 + (char)100` is a `char` holding 200;
//! - the type of `a op b` is the operand type of higher rank, the rank being the width in
//!   bits plus one if unsigned (no promotion to `int`: `char + char` is a `char`); a shift
//!   has its left operand's type, `- + ~` their operand's, comparisons and logical
//!   operators `int`, `?:` the higher-ranked arm's (each arm's value left as it is);
//! - a cast changes the value only when it narrows, changes the signedness at the same
//!   width, or widens a signed value to an unsigned type below 64 bits: then it truncates
//!   and sign- or zero-extends; a cast to a 64-bit type never changes the value;
//! - a variable holds its type's width: it reads back truncated and extended; an
//!   assignment has the variable's type and the right operand's 64-bit value;
//! - signed `/` and `%` (by the operator's type) divide magnitudes, the quotient negated
//!   when the signs differ, the remainder negated when exactly one operand is negative
//!   (`19 % -5` is -4, `-19 % -5` is 4); unsigned ones divide the 64-bit values; `x / 0`
//!   and `x % 0` are a run-time error (`divide-by-zero`), never a value; `MIN / -1` wraps;
//! - `>>` is arithmetic when the left operand's type is signed; shift counts are taken
//!   modulo 64 (as eBPF and x86-64 shift);
//! - constant operands are folded by the parser, with its own rules: in 64 bits too, but
//!   `/` and `%` as C's `intmax_t` or `uintmax_t` division (the remainder has the
//!   dividend's sign), `>>` always shifting in zeros, `-` of an unsigned constant cut to
//!   its type's width, `!` of a constant keeping the constant's type, and `c ? a : b` with
//!   a constant `c` being the chosen arm itself (its type included);
//! - `^^` is logical exclusive or: both operands are evaluated, the result is int 0 or 1.
//!
//! The evaluator is independent of the compiler: it shares no code with crates/typing or
//! crates/backend.

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

    /// The type of a binary operator's result: the operand of higher rank (width in bits,
    /// plus one if unsigned); at equal rank the types are the same as far as tests see.
    pub fn common(a: IntType, b: IntType) -> IntType {
        let rank = |t: IntType| t.bits() + u32::from(!t.signed);
        if rank(b) > rank(a) {
            b
        } else {
            a
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

    /// Whether a cast from `from` to this type changes a value (else it only retypes it).
    pub fn cast_changes(self, from: IntType) -> bool {
        match self.size.cmp(&from.size) {
            _ if self.size == 8 => false,
            std::cmp::Ordering::Greater => from.signed && !self.signed,
            std::cmp::Ordering::Equal => from.signed != self.signed,
            std::cmp::Ordering::Less => true,
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

/// A value with its type: `bits` is the 64-bit register, not necessarily within the type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value {
    pub bits: u64,
    pub ty: IntType,
}

impl Value {
    pub fn new(bits: u64, ty: IntType) -> Value {
        Value { bits, ty }
    }

    pub fn truth(self) -> bool {
        self.bits != 0
    }

    fn int(b: bool) -> Value {
        Value::new(b as u64, INT)
    }

    /// The value cast to `ty`.
    pub fn to(self, ty: IntType) -> Value {
        if ty.cast_changes(self.ty) {
            Value::new(ty.normalize(self.bits), ty)
        } else {
            Value::new(self.bits, ty)
        }
    }

    /// The value stored in a variable of its type and read back.
    pub fn stored(self) -> Value {
        Value::new(self.ty.normalize(self.bits), self.ty)
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
}

/// The value of `e` if the parser folds it into a constant: constants, casts and unary
/// operators of constants, binary operators of two, and `?:` of a constant condition whose
/// chosen arm is one. `None` for anything else (and for a constant division by zero, which
/// D refuses to compile).
pub fn constant(e: &Expr) -> Option<Value> {
    Some(match e {
        Expr::Const { value, .. } => *value,
        Expr::Var { .. } | Expr::Comma(..) | Expr::Assign { .. } => return None,
        Expr::Cast { ty, operand, .. } => constant(operand)?.to(*ty),
        Expr::Unary(op, x) => {
            let c = constant(x)?;
            match op {
                // -: cut to the width of an unsigned constant's type.
                UnOp::Neg if c.ty.signed => Value::new(c.bits.wrapping_neg(), c.ty),
                UnOp::Neg => Value::new(c.bits.wrapping_neg() & mask(c.ty), c.ty),
                UnOp::Plus => c,
                UnOp::BitNot => Value::new(!c.bits, c.ty),
                UnOp::Not => Value::new(u64::from(c.bits == 0), c.ty),
            }
        }
        Expr::Binary(op, a, b) => fold(*op, constant(a)?, constant(b)?)?,
        Expr::Ternary(c, a, b) => constant(arm(c, a, b)?)?,
    })
}

/// All bits of `ty`'s width.
fn mask(ty: IntType) -> u64 {
    u64::MAX >> (64 - ty.bits())
}

/// For `c ? a : b` with a constant condition: the arm the parser keeps.
fn arm<'a>(c: &Expr, a: &'a Expr, b: &'a Expr) -> Option<&'a Expr> {
    Some(if constant(c)?.truth() { a } else { b })
}

/// `a op b` of two constants, as the parser folds it.
fn fold(op: BinOp, a: Value, b: Value) -> Option<Value> {
    use BinOp::*;
    let ty = binary_type(op, a.ty, b.ty);
    let common = IntType::common(a.ty, b.ty);
    let (x, y) = (a.bits, b.bits);
    let (sx, sy) = (x as i64, y as i64);
    let bits = match op {
        Mul => x.wrapping_mul(y),
        Add => x.wrapping_add(y),
        Sub => x.wrapping_sub(y),
        BitAnd => x & y,
        BitXor => x ^ y,
        BitOr => x | y,
        Shl => x << (y % 64),
        Shr => x >> (y % 64),
        Div | Mod if y == 0 => return None,
        Div if common.signed => sx.wrapping_div(sy) as u64,
        Mod if common.signed => sx.wrapping_rem(sy) as u64,
        Div => x / y,
        Mod => x % y,
        Lt | Le | Gt | Ge | Eq | Ne => u64::from(compare(op, common.signed, x, y)),
        LogAnd => u64::from(a.truth() && b.truth()),
        LogOr => u64::from(a.truth() || b.truth()),
        LogXor => u64::from(a.truth() != b.truth()),
    };
    Some(Value::new(bits, ty))
}

/// Whether `x op y` holds for the relational operator `op`.
fn compare(op: BinOp, signed: bool, x: u64, y: u64) -> bool {
    let ord = if signed {
        (x as i64).cmp(&(y as i64))
    } else {
        x.cmp(&y)
    };
    match op {
        BinOp::Lt => ord.is_lt(),
        BinOp::Le => ord.is_le(),
        BinOp::Gt => ord.is_gt(),
        BinOp::Ge => ord.is_ge(),
        BinOp::Eq => ord.is_eq(),
        BinOp::Ne => ord.is_ne(),
        _ => unreachable!("{op:?} is not relational"),
    }
}

/// The type of `e` without evaluating it (what `sizeof` reports).
pub fn type_of(e: &Expr) -> IntType {
    if let Some(c) = constant(e) {
        return c.ty;
    }
    match e {
        Expr::Const { value, .. } | Expr::Var { value, .. } => value.ty,
        Expr::Cast { ty, .. } => *ty,
        Expr::Unary(UnOp::Not, _) => INT,
        Expr::Unary(_, e) => type_of(e),
        Expr::Binary(op, a, b) => binary_type(*op, type_of(a), type_of(b)),
        Expr::Ternary(c, a, b) => match arm(c, a, b) {
            Some(chosen) => type_of(chosen),
            None => IntType::common(type_of(a), type_of(b)),
        },
        Expr::Comma(_, b) => type_of(b),
        Expr::Assign { ty, .. } => *ty,
    }
}

/// The result type of `a op b`.
pub fn binary_type(op: BinOp, a: IntType, b: IntType) -> IntType {
    use BinOp::*;
    match op {
        Shl | Shr => a,
        Lt | Le | Gt | Ge | Eq | Ne | LogAnd | LogOr | LogXor => INT,
        _ => IntType::common(a, b),
    }
}

/// Evaluate `e` as D does; unevaluated operands of `&&`, `||` and `?:` may hold anything.
pub fn eval(e: &Expr) -> Result<Value, Error> {
    if let Some(c) = constant(e) {
        return Ok(c);
    }
    Ok(match e {
        Expr::Const { value, .. } | Expr::Var { value, .. } => *value,
        Expr::Cast { ty, operand, .. } => eval(operand)?.to(*ty),
        Expr::Unary(op, x) => {
            let v = eval(x)?;
            match op {
                UnOp::Neg => Value::new(v.bits.wrapping_neg(), v.ty),
                UnOp::Plus => v,
                UnOp::BitNot => Value::new(!v.bits, v.ty),
                UnOp::Not => Value::int(!v.truth()),
            }
        }
        Expr::Binary(BinOp::LogAnd, a, b) => Value::int(eval(a)?.truth() && eval(b)?.truth()),
        Expr::Binary(BinOp::LogOr, a, b) => Value::int(eval(a)?.truth() || eval(b)?.truth()),
        Expr::Binary(op, a, b) => binary(*op, eval(a)?, eval(b)?)?,
        Expr::Ternary(c, a, b) => {
            let ty = type_of(e);
            let chosen = match arm(c, a, b) {
                Some(chosen) => chosen,
                None if eval(c)?.truth() => a,
                None => b,
            };
            Value::new(eval(chosen)?.bits, ty)
        }
        Expr::Comma(a, b) => {
            eval(a)?;
            eval(b)?
        }
        Expr::Assign { ty, rhs, .. } => Value::new(eval(rhs)?.bits, *ty),
    })
}

/// `a op b` at run time, for the operators that evaluate both operands.
pub fn binary(op: BinOp, a: Value, b: Value) -> Result<Value, Error> {
    use BinOp::*;
    let ty = binary_type(op, a.ty, b.ty);
    let signed = IntType::common(a.ty, b.ty).signed;
    let (x, y) = (a.bits, b.bits);
    let bits = match op {
        Mul => x.wrapping_mul(y),
        Add => x.wrapping_add(y),
        Sub => x.wrapping_sub(y),
        BitAnd => x & y,
        BitXor => x ^ y,
        BitOr => x | y,
        Shl => x << (y % 64),
        Shr if a.ty.signed => ((x as i64) >> (y % 64)) as u64,
        Shr => x >> (y % 64),
        Div | Mod if y == 0 => return Err(Error::DivZero),
        Div | Mod if signed => {
            // The magnitudes divided, then negated when exactly one operand is negative.
            let (mx, my) = ((x as i64).unsigned_abs(), (y as i64).unsigned_abs());
            let m = if op == Div { mx / my } else { mx % my };
            if ((x as i64) < 0) != ((y as i64) < 0) {
                m.wrapping_neg()
            } else {
                m
            }
        }
        Div => x / y,
        Mod => x % y,
        Lt | Le | Gt | Ge | Eq | Ne => u64::from(compare(op, signed, x, y)),
        LogXor => u64::from(a.truth() != b.truth()),
        LogAnd | LogOr => unreachable!("short-circuit operators are evaluated by eval"),
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
    fn reference_follows_dtrace() {
        // Folded: -1 is an int, 1u an unsigned int; compared unsigned.
        let neg1 = Expr::Unary(UnOp::Neg, Box::new(c("1", 1, INT)));
        let lt = Expr::Binary(BinOp::Lt, Box::new(neg1), Box::new(c("1u", 1, UINT)));
        assert_eq!(eval(&lt), Ok(Value::new(0, INT)));
        // No promotion, no narrowing: a char holding 200.
        let sum = binary(BinOp::Add, Value::new(100, CHAR), Value::new(100, CHAR)).unwrap();
        assert_eq!(sum, Value::new(200, CHAR));
        assert_eq!(sum.stored().as_i64(), -56);
        let div = |x: i64, y: i64| {
            binary(
                BinOp::Div,
                Value::new(x as u64, INT),
                Value::new(y as u64, INT),
            )
            .unwrap()
            .as_i64()
        };
        let rem = |x: i64, y: i64| {
            binary(
                BinOp::Mod,
                Value::new(x as u64, INT),
                Value::new(y as u64, INT),
            )
            .unwrap()
            .as_i64()
        };
        assert_eq!((div(-7, 2), rem(-7, 2)), (-3, -1));
        assert_eq!((div(19, -5), rem(19, -5)), (-3, -4));
        assert_eq!((div(-19, -5), rem(-19, -5)), (3, 4));
        // Unsigned division of the 64-bit value.
        let v = binary(
            BinOp::Div,
            Value::new(-7i64 as u64, UINT),
            Value::new(2, INT),
        );
        assert_eq!(v.unwrap().bits, i64::MAX as u64 - 3);
        // Casts: only those that change a value do.
        assert_eq!(Value::new(200, INT).to(CHAR).as_i64(), -56);
        assert_eq!(Value::new(-1i64 as u64, CHAR).to(UINT).bits, 0xffff_ffff);
        assert_eq!(Value::new(0x1_0000_0000, INT).to(LONG).bits, 0x1_0000_0000);
        assert_eq!(constant_type(0x8000_0000, false, false, 0), Some(UINT));
        assert_eq!(constant_type(0x8000_0000, true, false, 0), Some(LONG));
        assert_eq!(constant_type(u64::MAX, true, false, 0), None);
    }
}

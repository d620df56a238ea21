//! The random side of the integer-expression property tests: a seeded xorshift generator
//! and random expression trees whose evaluated parts are well defined (no division by
//! zero). Parts D never evaluates (the other arm of `?:`, the right of a decided
//! `&&`/`||`) may hold anything, division by zero included, so the tests also check that
//! generated code does not evaluate them.

use super::eval::*;

/// The clause-local variable holding 0 in every batch.
pub const ZERO_VAR: &str = "this->zero";

pub use crate::common::rng::Rng;

/// Values near the edges of every width, where conversions and overflow go wrong.
const INTERESTING: &[u64] = &[
    0,
    1,
    2,
    3,
    7,
    10,
    100,
    0x7f,
    0x80,
    0xff,
    0x100,
    0x7fff,
    0x8000,
    0xffff,
    0x1_0000,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    0x1_0000_0000,
    0x7fff_ffff_ffff_ffff,
    0x8000_0000_0000_0000,
    0xffff_ffff_ffff_ffff,
];

/// One program's worth of expressions, with the clause-local variables they read.
pub struct Batch {
    /// `(name, initializer)`: `this->v0 = ((short)0x1234);` is written before the exprs.
    pub vars: Vec<(String, Expr)>,
    pub exprs: Vec<Expr>,
}

/// Random expressions from one seed.
pub struct Generator {
    rng: Rng,
    vars: Vec<Expr>,
    /// Variables only assigned to, never read: `(name, type)`.
    sinks: Vec<(String, IntType)>,
}

impl Generator {
    pub fn new(seed: u64) -> Generator {
        Generator {
            rng: Rng::new(seed),
            vars: Vec::new(),
            sinks: Vec::new(),
        }
    }

    /// A batch of `n` expressions reading up to `nvars` fresh clause-local variables and
    /// assigning to as many others.
    pub fn batch(&mut self, n: usize, nvars: usize) -> Batch {
        let mut vars = Vec::new();
        self.vars.clear();
        self.sinks.clear();
        for i in 0..nvars {
            // Typed by a first assignment of zero.
            let &(name, ty) = self.rng.pick(CAST_NAMES);
            let zero = Expr::Const {
                text: "0".into(),
                value: Value::new(0, INT),
            };
            let init = Expr::Cast {
                name,
                ty,
                operand: Box::new(zero),
            };
            let var = format!("this->s{i}");
            self.sinks.push((var.clone(), ty));
            vars.push((var, init));
        }
        // A zero the compiler cannot fold: divisor of never-evaluated divisions (D rejects
        // division by a constant zero at compile time, wherever it appears).
        vars.push((
            ZERO_VAR.to_string(),
            Expr::Const {
                text: "0".into(),
                value: Value::new(0, INT),
            },
        ));
        for i in 0..nvars {
            let &(name, ty) = self.rng.pick(CAST_NAMES);
            let init = Expr::Cast {
                name,
                ty,
                operand: Box::new(self.constant()),
            };
            // What the variable reads back: the value narrowed to its type.
            let value = eval(&init).expect("a cast constant").stored();
            let var = format!("this->v{i}");
            self.vars.push(Expr::Var {
                name: var.clone(),
                value,
            });
            vars.push((var, init));
        }
        // Small trees keep narrow types up to the top, big ones mix everything.
        let exprs = (0..n)
            .map(|_| {
                let depth = 1 + self.rng.below(5) as u32;
                self.expr(depth, true)
            })
            .collect();
        Batch { vars, exprs }
    }

    /// A random integer constant: an edge value or a random one of a random width, in a
    /// random base with a random suffix, typed by C's rules.
    pub fn constant(&mut self) -> Expr {
        let value = if self.rng.chance(60) {
            let v = *self.rng.pick(INTERESTING);
            let v = if v > u32::MAX as u64 && self.rng.chance(50) {
                *self.rng.pick(INTERESTING) // fewer 64-bit values
            } else {
                v
            };
            // Sometimes one off the edge.
            match self.rng.below(4) {
                0 => v.wrapping_add(1),
                1 => v.wrapping_sub(1),
                _ => v,
            }
        } else {
            let bits = *self.rng.pick(&[4u32, 8, 16, 31, 32, 64]);
            let x = self.rng.next();
            if bits == 64 {
                x
            } else {
                x & ((1u64 << bits) - 1)
            }
        };
        // Mostly int and unsigned int, where promotions and conversions matter most.
        let (unsigned, longs) = *self.rng.pick(&[
            (false, 0u8),
            (false, 0),
            (false, 0),
            (false, 0),
            (false, 0),
            (false, 0),
            (false, 0),
            (true, 0),
            (true, 0),
            (true, 0),
            (true, 0),
            (false, 1),
            (true, 1),
            (false, 2),
            (true, 2),
        ]);
        let mut base = *self.rng.pick(&[10, 10, 10, 16, 16, 8]);
        if base == 10 && constant_type(value, true, unsigned, longs).is_none() {
            base = 16; // C gives such a decimal constant no type
        }
        let ty = constant_type(value, base == 10, unsigned, longs).expect("a typed constant");
        let digits = match base {
            10 => format!("{value}"),
            16 if self.rng.chance(50) => format!("0x{value:x}"),
            16 => format!("0X{value:X}"),
            _ => format!("0{value:o}"),
        };
        let u = if !unsigned {
            ""
        } else if self.rng.chance(50) {
            "u"
        } else {
            "U"
        };
        let l = match (longs, self.rng.chance(50)) {
            (0, _) => "",
            (1, true) => "l",
            (1, false) => "L",
            (_, true) => "ll",
            (_, false) => "LL",
        };
        let suffix = if self.rng.chance(70) {
            format!("{u}{l}")
        } else {
            format!("{l}{u}")
        };
        Expr::Const {
            text: format!("{digits}{suffix}"),
            value: Value::new(value, ty),
        }
    }

    /// A variable, a constant, or a constant cast to a random type.
    fn leaf(&mut self) -> Expr {
        match self.rng.below(100) {
            0..=34 if !self.vars.is_empty() => {
                let i = self.rng.below(self.vars.len() as u64) as usize;
                self.vars[i].clone()
            }
            35..=54 => {
                let &(name, ty) = self.rng.pick(CAST_NAMES);
                Expr::Cast {
                    name,
                    ty,
                    operand: Box::new(self.constant()),
                }
            }
            _ => self.constant(),
        }
    }

    /// A random expression at most `depth` operators deep. When `live`, it is evaluated at
    /// run time and its evaluation is well defined.
    pub fn expr(&mut self, depth: u32, live: bool) -> Expr {
        if depth == 0 || self.rng.chance(12) {
            return self.leaf();
        }
        for _ in 0..8 {
            let e = self.node(depth - 1, live);
            if !live || eval(&e).is_ok() {
                return e;
            }
        }
        self.leaf()
    }

    fn node(&mut self, depth: u32, live: bool) -> Expr {
        let b = Box::new;
        match self.rng.below(100) {
            0..=14 => {
                let &(name, ty) = self.rng.pick(CAST_NAMES);
                Expr::Cast {
                    name,
                    ty,
                    operand: b(self.expr(depth, live)),
                }
            }
            15..=25 => {
                let op = *self
                    .rng
                    .pick(&[UnOp::Neg, UnOp::Plus, UnOp::BitNot, UnOp::Not]);
                Expr::Unary(op, b(self.expr(depth, live)))
            }
            26..=36 => {
                let c = self.expr(depth, live);
                let taken = live && eval(&c).is_ok_and(|v| v.truth());
                let mut then = self.expr(depth, taken);
                let mut otherwise = self.expr(depth, live && !taken);
                if self.rng.chance(50) {
                    // Arms of int (or narrower) and unsigned int: the arm that is not unsigned
                    // int needs converting (-1 becomes 4294967295).
                    let signed = self.rng.chance(50);
                    then = self.cast_to(then, signed);
                    otherwise = self.cast_to(otherwise, !signed);
                }
                Expr::Ternary(b(c), b(then), b(otherwise))
            }
            37..=40 => Expr::Comma(b(self.expr(depth, live)), b(self.expr(depth, live))),
            41..=44 if !self.sinks.is_empty() => {
                let i = self.rng.below(self.sinks.len() as u64) as usize;
                let (name, ty) = self.sinks[i].clone();
                Expr::Assign {
                    name,
                    ty,
                    rhs: b(self.expr(depth, live)),
                }
            }
            _ => {
                let op = *self.rng.pick(&BinOp::ALL);
                self.binary(op, depth, live)
            }
        }
    }

    /// `e` cast to a random signed type up to int, or to unsigned int.
    fn cast_to(&mut self, e: Expr, signed: bool) -> Expr {
        let names: Vec<_> = CAST_NAMES
            .iter()
            .filter(|(_, t)| t.size <= 4 && t.signed == signed && (signed || t.size == 4))
            .collect();
        let &&(name, ty) = self.rng.pick(&names);
        Expr::Cast {
            name,
            ty,
            operand: Box::new(e),
        }
    }

    fn binary(&mut self, op: BinOp, depth: u32, live: bool) -> Expr {
        let a = self.expr(depth, live);
        let b = match op {
            BinOp::LogAnd | BinOp::LogOr => {
                let decided = eval(&a).is_ok_and(|v| v.truth() == (op == BinOp::LogOr));
                self.expr(depth, live && !decided)
            }
            BinOp::Div | BinOp::Mod if !live && self.rng.chance(30) => Expr::Var {
                name: ZERO_VAR.into(),
                value: Value::new(0, INT),
            },
            BinOp::Div | BinOp::Mod => {
                // Evaluated or not, a divisor must not be a constant zero (a compile error).
                let mut d = self.expr(depth, live);
                for _ in 0..8 {
                    if eval(&d).is_ok_and(|v| v.truth()) {
                        break;
                    }
                    d = self.expr(depth, live);
                }
                if !eval(&d).is_ok_and(|v| v.truth()) {
                    d = Expr::Const {
                        text: "1".into(),
                        value: Value::new(1, INT),
                    };
                }
                d
            }
            BinOp::Shl | BinOp::Shr if self.rng.chance(50) => {
                // A count in the register's range (any count is taken modulo 64).
                let n = self.rng.below(64);
                Expr::Const {
                    text: n.to_string(),
                    value: Value::new(n, INT),
                }
            }
            _ => self.expr(depth, live),
        };
        Expr::Binary(op, Box::new(a), Box::new(b))
    }
}

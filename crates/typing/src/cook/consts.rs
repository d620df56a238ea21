//! Integer constant expressions, folded at compile time as DTrace's parser folds them:
//! aggregating functions' parameters, sizes, array dimensions, enumerator values, and
//! division by a constant zero (refused).

use dtrace_frontend::ast::{BinaryOp as B, Expr, ExprKind, UnaryOp as U};

/// The value of `e` if it is an integer or character constant, possibly negated or
/// parenthesized: what DTrace calls an integer constant where it requires one.
pub fn constant(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Int { value, .. } => Some(*value as i64),
        ExprKind::Char(c) => Some(i64::from(*c)),
        ExprKind::Unary {
            op: U::Neg,
            operand,
        } => constant(operand).map(i64::wrapping_neg),
        ExprKind::Unary {
            op: U::Plus,
            operand,
        } => constant(operand),
        _ => None,
    }
}

/// The value of the integer constant expression `e` in 64 bits: constants, the names
/// `name` resolves (enumerators), casts, and the arithmetic, bitwise, relational, logical
/// and conditional operators on them. None if `e` is not one (or divides by zero).
pub fn fold(e: &Expr, name: &dyn Fn(&str) -> Option<i64>) -> Option<i64> {
    Some(match &e.kind {
        ExprKind::Int { .. } | ExprKind::Char(_) => constant(e)?,
        ExprKind::Ident(n) => name(n)?,
        ExprKind::Cast { operand, .. } => fold(operand, name)?,
        ExprKind::Unary { op, operand } => {
            let v = fold(operand, name)?;
            match op {
                U::Neg => v.wrapping_neg(),
                U::Plus => v,
                U::BitNot => !v,
                U::Not => (v == 0) as i64,
                _ => return None,
            }
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let (a, b) = (fold(lhs, name)?, fold(rhs, name)?);
            match op {
                B::Mul => a.wrapping_mul(b),
                // As DTrace's parser folds them: C's division (the remainder has the
                // dividend's sign).
                B::Div if b != 0 => a.wrapping_div(b),
                B::Mod if b != 0 => a.wrapping_rem(b),
                B::Div | B::Mod => return None,
                B::Add => a.wrapping_add(b),
                B::Sub => a.wrapping_sub(b),
                B::Shl => a.wrapping_shl(b as u32),
                B::Shr => a.wrapping_shr(b as u32),
                B::Lt => (a < b) as i64,
                B::Le => (a <= b) as i64,
                B::Gt => (a > b) as i64,
                B::Ge => (a >= b) as i64,
                B::Eq => (a == b) as i64,
                B::Ne => (a != b) as i64,
                B::BitAnd => a & b,
                B::BitXor => a ^ b,
                B::BitOr => a | b,
                B::LogAnd => (a != 0 && b != 0) as i64,
                B::LogXor => ((a != 0) != (b != 0)) as i64,
                B::LogOr => (a != 0 || b != 0) as i64,
            }
        }
        ExprKind::Ternary {
            cond,
            then,
            otherwise,
        } => {
            if fold(cond, name)? != 0 {
                fold(then, name)?
            } else {
                fold(otherwise, name)?
            }
        }
        _ => return None,
    })
}

/// How deep integer inlines may name one another in a constant expression.
const INLINE_DEPTH: usize = 32;

impl super::Cook<'_> {
    /// The value of `e` where DTrace requires an integer constant (an aggregating
    /// function's parameters, a frame count, an array dimension): DTrace's parser folds
    /// operators on constants, and puts an enumerator's or integer inline's value (the D
    /// library's `B_READ`, a script's `inline int TOP = 10;`) in place of its name.
    pub(crate) fn int_constant(&self, e: &Expr) -> Option<i64> {
        fold(e, &|n| self.named_constant(n, 0))
    }

    /// The integer constant `name` stands for: an enumerator, an inline whose value folds
    /// to one, or a D library constant.
    fn named_constant(&self, name: &str, depth: usize) -> Option<i64> {
        if let Some(&v) = self.scope.enum_constants.get(name) {
            return Some(v);
        }
        if let Some((ty, value)) = self.scope.inlines.get(name) {
            if !ty.is_integer() || depth >= INLINE_DEPTH {
                return None;
            }
            return fold(value, &|n| self.named_constant(n, depth + 1));
        }
        crate::builtins::library_constant(name)
    }
}

/// Whether `e` is the null pointer constant (`0`, or `NULL`).
pub fn is_null(e: &Expr) -> bool {
    fold(e, &|_| None) == Some(0) || matches!(&e.kind, ExprKind::Ident(n) if n == "NULL")
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtrace_frontend::Span;

    fn int(v: u64) -> Expr {
        Expr {
            kind: ExprKind::Int {
                value: v,
                unsigned: false,
                longs: 0,
                decimal: true,
            },
            span: Span::new(0, 0, 0),
        }
    }

    fn bin(op: B, a: Expr, b: Expr) -> Expr {
        Expr {
            kind: ExprKind::Binary {
                op,
                lhs: Box::new(a),
                rhs: Box::new(b),
            },
            span: Span::new(0, 0, 0),
        }
    }

    #[test]
    fn folds_operators() {
        let none = |_: &str| None;
        assert_eq!(fold(&bin(B::Mul, int(6), int(7)), &none), Some(42));
        assert_eq!(fold(&bin(B::Mod, int(19), int(0)), &none), None);
        let neg5 = Expr {
            kind: ExprKind::Unary {
                op: U::Neg,
                operand: Box::new(int(5)),
            },
            span: Span::new(0, 0, 0),
        };
        // C's remainder, as DTrace's parser folds it (at run time D's is -4).
        assert_eq!(fold(&bin(B::Mod, int(19), neg5), &none), Some(4));
        assert_eq!(constant(&bin(B::Add, int(1), int(1))), None);
    }
}

//! Expressions, by precedence climbing over D's C-like operator table.

use super::Parser;
use crate::ast::{BinaryOp, Expr, ExprKind, UnaryOp};
use crate::error::Result;
use crate::span::Span;
use crate::token::{Keyword, Punct, TokenKind};

/// Binary operators with their precedence (higher binds tighter); all are left-associative.
fn binary_op(p: Punct) -> Option<(BinaryOp, u8)> {
    use BinaryOp::*;
    Some(match p {
        Punct::OrOr => (LogOr, 1),
        Punct::XorXor => (LogXor, 2),
        Punct::AndAnd => (LogAnd, 3),
        Punct::Pipe => (BitOr, 4),
        Punct::Caret => (BitXor, 5),
        Punct::Amp => (BitAnd, 6),
        Punct::EqEq => (Eq, 7),
        Punct::Ne => (Ne, 7),
        Punct::Lt => (Lt, 8),
        Punct::Le => (Le, 8),
        Punct::Gt => (Gt, 8),
        Punct::Ge => (Ge, 8),
        Punct::Shl => (Shl, 9),
        Punct::Shr => (Shr, 9),
        Punct::Plus => (Add, 10),
        Punct::Minus => (Sub, 10),
        Punct::Star => (Mul, 11),
        Punct::Slash => (Div, 11),
        Punct::Percent => (Mod, 11),
        _ => return None,
    })
}

/// `=` (`Some(None)`) and the compound assignments (`Some(Some(op))`).
fn assign_op(p: Punct) -> Option<Option<BinaryOp>> {
    use BinaryOp::*;
    Some(match p {
        Punct::Assign => None,
        Punct::PlusEq => Some(Add),
        Punct::MinusEq => Some(Sub),
        Punct::StarEq => Some(Mul),
        Punct::SlashEq => Some(Div),
        Punct::PercentEq => Some(Mod),
        Punct::AmpEq => Some(BitAnd),
        Punct::CaretEq => Some(BitXor),
        Punct::PipeEq => Some(BitOr),
        Punct::ShlEq => Some(Shl),
        Punct::ShrEq => Some(Shr),
        _ => return None,
    })
}

fn unary_op(p: Punct) -> Option<UnaryOp> {
    Some(match p {
        Punct::Amp => UnaryOp::AddrOf,
        Punct::Star => UnaryOp::Deref,
        Punct::Plus => UnaryOp::Plus,
        Punct::Minus => UnaryOp::Neg,
        Punct::Tilde => UnaryOp::BitNot,
        Punct::Bang => UnaryOp::Not,
        _ => return None,
    })
}

fn expr(kind: ExprKind, span: Span) -> Expr {
    Expr { kind, span }
}

fn unary(op: UnaryOp, operand: Expr, span: Span) -> Expr {
    expr(
        ExprKind::Unary {
            op,
            operand: Box::new(operand),
        },
        span,
    )
}

impl Parser<'_> {
    /// A full expression, including the comma operator.
    pub(super) fn expression(&mut self) -> Result<Expr> {
        let mut lhs = self.assignment()?;
        let mut height = lhs.height();
        while self.at_punct(Punct::Comma)? {
            (lhs, height) = self.comma_rhs(lhs, height)?;
        }
        Ok(lhs)
    }

    /// `lhs, rhs`, at the comma, and its height (`lhs` is `height` high).
    fn comma_rhs(&mut self, lhs: Expr, height: usize) -> Result<(Expr, usize)> {
        let comma = self.bump()?.span;
        let rhs = self.assignment()?;
        let height = self.chain_height(height.max(rhs.height()) + 1, comma)?;
        let span = lhs.span.to(rhs.span);
        Ok((
            expr(ExprKind::Comma(Box::new(lhs), Box::new(rhs)), span),
            height,
        ))
    }

    /// An assignment expression: a function argument, an initializer, an index.
    pub(super) fn assignment(&mut self) -> Result<Expr> {
        self.nested(|p| {
            let (lhs, is_unary) = p.conditional_form()?;
            let op = match p.peek_kind()? {
                TokenKind::Punct(punct) => assign_op(*punct),
                _ => None,
            };
            match op {
                None => Ok(lhs),
                // Only a unary expression may be assigned to, as in C's grammar.
                Some(_) if !is_unary => p.unexpected(),
                Some(op) => p.assignment_rhs(op, lhs),
            }
        })
    }

    fn assignment_rhs(&mut self, op: Option<BinaryOp>, lhs: Expr) -> Result<Expr> {
        self.bump()?;
        let rhs = self.assignment()?;
        let span = lhs.span.to(rhs.span);
        let kind = ExprKind::Assign {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        };
        Ok(expr(kind, span))
    }

    /// A conditional (constant) expression: array sizes, bit-field widths, enum values.
    pub(super) fn conditional(&mut self) -> Result<Expr> {
        self.nested(|p| p.conditional_form().map(|(e, _)| e))
    }

    /// A conditional expression, and whether it is a bare unary expression.
    fn conditional_form(&mut self) -> Result<(Expr, bool)> {
        let (cond, is_unary, _) = self.binary(1)?;
        if self.at_punct(Punct::Question)? {
            return Ok((self.ternary_tail(cond)?, false));
        }
        Ok((cond, is_unary))
    }

    /// `? expr : conditional`, after the condition.
    fn ternary_tail(&mut self, cond: Expr) -> Result<Expr> {
        self.bump()?;
        let then = self.expression()?;
        self.expect_punct(Punct::Colon)?;
        let otherwise = self.conditional()?;
        let span = cond.span.to(otherwise.span);
        let kind = ExprKind::Ternary {
            cond: Box::new(cond),
            then: Box::new(then),
            otherwise: Box::new(otherwise),
        };
        Ok(expr(kind, span))
    }

    /// Binary operators of precedence `min_prec` and above; whether the result is a bare
    /// unary expression, and its height.
    fn binary(&mut self, min_prec: u8) -> Result<(Expr, bool, usize)> {
        let (mut lhs, mut is_unary) = self.cast()?;
        let mut height = lhs.height();
        loop {
            let op = match self.peek_kind()? {
                TokenKind::Punct(p) => binary_op(*p),
                _ => None,
            };
            let Some((op, prec)) = op.filter(|&(_, prec)| prec >= min_prec) else {
                return Ok((lhs, is_unary, height));
            };
            (lhs, height) = self.binary_rhs(op, prec, lhs, height)?;
            is_unary = false;
        }
    }

    /// `lhs op rhs`, at the operator, and its height (`lhs` is `height` high).
    fn binary_rhs(
        &mut self,
        op: BinaryOp,
        prec: u8,
        lhs: Expr,
        height: usize,
    ) -> Result<(Expr, usize)> {
        let op_span = self.bump()?.span;
        let (rhs, _, rhs_height) = self.binary(prec + 1)?;
        let height = self.chain_height(height.max(rhs_height) + 1, op_span)?;
        let span = lhs.span.to(rhs.span);
        let kind = ExprKind::Binary {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
        };
        Ok((expr(kind, span), height))
    }

    /// `(type) expr` or a unary expression (then flagged `true`).
    fn cast(&mut self) -> Result<(Expr, bool)> {
        self.nested(|p| {
            if p.at_punct(Punct::LParen)? && p.at_type_name_start(1)? {
                Ok((p.cast_tail()?, false))
            } else {
                Ok((p.unary()?, true))
            }
        })
    }

    /// `(type) operand`, at the `(`.
    fn cast_tail(&mut self) -> Result<Expr> {
        let open = self.bump()?.span;
        let ty = self.type_name()?;
        self.expect_punct(Punct::RParen)?;
        let (operand, _) = self.cast()?;
        let span = open.to(operand.span);
        let kind = ExprKind::Cast {
            ty,
            operand: Box::new(operand),
        };
        Ok(expr(kind, span))
    }

    fn unary(&mut self) -> Result<Expr> {
        let (kind, span) = {
            let tok = self.peek()?;
            (tok.kind.clone(), tok.span)
        };
        match kind {
            TokenKind::Punct(p) => match (unary_op(p), p) {
                (Some(op), _) => self.prefix(op, span, Self::cast_operand),
                (None, Punct::PlusPlus) => self.prefix(UnaryOp::PreInc, span, Self::unary),
                (None, Punct::MinusMinus) => self.prefix(UnaryOp::PreDec, span, Self::unary),
                _ => self.postfix(),
            },
            TokenKind::Keyword(Keyword::Sizeof) => self.sizeof(span),
            TokenKind::Keyword(Keyword::Stringof) => self.stringof(span),
            _ => self.postfix(),
        }
    }

    fn cast_operand(&mut self) -> Result<Expr> {
        self.cast().map(|(e, _)| e)
    }

    /// A prefix operator at `start` applied to the operand `operand` parses.
    fn prefix(
        &mut self,
        op: UnaryOp,
        start: Span,
        operand: fn(&mut Self) -> Result<Expr>,
    ) -> Result<Expr> {
        self.bump()?;
        let operand = self.nested(operand)?;
        let span = start.to(operand.span);
        Ok(unary(op, operand, span))
    }

    /// `sizeof (type)` or `sizeof expr`, at the keyword.
    fn sizeof(&mut self, start: Span) -> Result<Expr> {
        self.bump()?;
        if self.at_punct(Punct::LParen)? && self.at_type_name_start(1)? {
            self.bump()?;
            let ty = self.type_name()?;
            let close = self.expect_punct(Punct::RParen)?;
            return Ok(expr(ExprKind::SizeofType(ty), start.to(close.span)));
        }
        let operand = self.nested(Self::unary)?;
        let span = start.to(operand.span);
        Ok(expr(ExprKind::SizeofExpr(Box::new(operand)), span))
    }

    /// `stringof expr`, at the keyword.
    fn stringof(&mut self, start: Span) -> Result<Expr> {
        self.bump()?;
        let operand = self.nested(Self::unary)?;
        let span = start.to(operand.span);
        Ok(expr(ExprKind::Stringof(Box::new(operand)), span))
    }

    fn postfix(&mut self) -> Result<Expr> {
        let mut e = self.primary()?;
        let mut height = e.height();
        loop {
            let TokenKind::Punct(p) = *self.peek_kind()? else {
                return Ok(e);
            };
            let op = self.peek()?.span;
            e = match p {
                Punct::LBracket => self.index(e)?,
                Punct::LParen => self.call(e)?,
                Punct::Dot | Punct::Arrow => self.member(e, p == Punct::Arrow)?,
                Punct::PlusPlus | Punct::MinusMinus => {
                    let op_span = self.bump()?.span;
                    let op = if p == Punct::PlusPlus {
                        UnaryOp::PostInc
                    } else {
                        UnaryOp::PostDec
                    };
                    let span = e.span.to(op_span);
                    unary(op, e, span)
                }
                _ => return Ok(e),
            };
            height = self.postfix_height(&e, height, op)?;
        }
    }

    /// The height of postfix expression `e` whose operand is `height` high: one more than
    /// the operand's or an index's or argument's, whichever is deeper.
    fn postfix_height(&self, e: &Expr, height: usize, op: Span) -> Result<usize> {
        let args = match &e.kind {
            ExprKind::Index { args, .. } | ExprKind::Call { args, .. } => {
                args.iter().map(Expr::height).max().unwrap_or(0)
            }
            _ => 0,
        };
        self.chain_height(height.max(args) + 1, op)
    }

    /// `base[args]`, at the `[`.
    fn index(&mut self, base: Expr) -> Result<Expr> {
        self.bump()?;
        let args = self.arguments()?;
        let close = self.expect_punct(Punct::RBracket)?;
        let span = base.span.to(close.span);
        let kind = ExprKind::Index {
            base: Box::new(base),
            args,
        };
        Ok(expr(kind, span))
    }

    /// `base.name` or `base->name`, at the operator.
    fn member(&mut self, base: Expr, arrow: bool) -> Result<Expr> {
        self.bump()?;
        let (name, name_span) = self.expect_name(true)?;
        let span = base.span.to(name_span);
        let kind = ExprKind::Member {
            base: Box::new(base),
            name,
            arrow,
        };
        Ok(expr(kind, span))
    }

    /// `name(args)`; a call of anything else is kept for the typing pass to refuse.
    fn call(&mut self, callee: Expr) -> Result<Expr> {
        self.bump()?;
        let args = if self.at_punct(Punct::RParen)? {
            Vec::new()
        } else {
            self.arguments()?
        };
        let close = self.expect_punct(Punct::RParen)?;
        let ExprKind::Ident(name) = callee.kind else {
            let span = callee.span.to(close.span);
            let kind = ExprKind::CallOf {
                callee: Box::new(callee),
                args,
            };
            return Ok(expr(kind, span));
        };
        Ok(expr(
            ExprKind::Call {
                name,
                name_span: callee.span,
                args,
            },
            callee.span.to(close.span),
        ))
    }

    /// A non-empty comma-separated list of assignment expressions.
    fn arguments(&mut self) -> Result<Vec<Expr>> {
        let mut args = vec![self.assignment()?];
        while self.eat_punct(Punct::Comma)?.is_some() {
            args.push(self.assignment()?);
        }
        Ok(args)
    }

    fn primary(&mut self) -> Result<Expr> {
        let tok = self.peek()?.clone();
        let kind = match tok.kind {
            // The scope is everything before the last mark (`` ``name `` marks a user
            // symbol): the typing pass resolves or refuses the reference.
            TokenKind::Ident(ref name) => match name.rsplit_once('`') {
                None => ExprKind::Ident(name.clone()),
                Some((module, sym)) => ExprKind::Symbol {
                    module: (!module.is_empty()).then(|| module.to_string()),
                    name: sym.to_string(),
                },
            },
            TokenKind::Int {
                value,
                unsigned,
                longs,
                decimal,
            } => ExprKind::Int {
                value,
                unsigned,
                longs,
                decimal,
            },
            TokenKind::Char(c) => ExprKind::Char(c),
            TokenKind::Str(s) => ExprKind::Str(s),
            TokenKind::Macro(m) => ExprKind::Macro(m),
            TokenKind::Aggregation(name) => ExprKind::Aggregation(name),
            TokenKind::Keyword(k @ (Keyword::Self_ | Keyword::This)) => {
                return self.self_or_this(k, tok.span)
            }
            TokenKind::Punct(Punct::LParen) => return self.parenthesized(),
            TokenKind::Keyword(Keyword::Offsetof) => return self.offsetof(tok.span),
            TokenKind::Keyword(Keyword::Xlate) => return self.xlate(tok.span),
            _ => return Err(self.error_near(&tok)),
        };
        self.bump()?;
        Ok(expr(kind, tok.span))
    }

    /// `self->name` or `this->name`, at the keyword.
    fn self_or_this(&mut self, k: Keyword, start: Span) -> Result<Expr> {
        self.bump()?;
        self.expect_punct(Punct::Arrow)?;
        let (name, name_span) = self.expect_name(true)?;
        let kind = if k == Keyword::Self_ {
            ExprKind::SelfVar(name)
        } else {
            ExprKind::ThisVar(name)
        };
        Ok(expr(kind, start.to(name_span)))
    }

    fn parenthesized(&mut self) -> Result<Expr> {
        self.bump()?;
        let inner = self.expression()?;
        self.expect_punct(Punct::RParen)?;
        Ok(inner)
    }

    /// `offsetof(type, member)`, at the keyword.
    fn offsetof(&mut self, start: Span) -> Result<Expr> {
        self.bump()?;
        self.expect_punct(Punct::LParen)?;
        let ty = self.type_name()?;
        self.expect_punct(Punct::Comma)?;
        let (member, _) = self.expect_name(true)?;
        let close = self.expect_punct(Punct::RParen)?;
        Ok(expr(
            ExprKind::Offsetof { ty, member },
            start.to(close.span),
        ))
    }

    /// `xlate <type> (expr)`, at the keyword.
    fn xlate(&mut self, start: Span) -> Result<Expr> {
        self.bump()?;
        self.expect_punct(Punct::Lt)?;
        let ty = self.type_name()?;
        self.expect_punct(Punct::Gt)?;
        self.expect_punct(Punct::LParen)?;
        let operand = self.expression()?;
        let close = self.expect_punct(Punct::RParen)?;
        let kind = ExprKind::Xlate {
            ty,
            operand: Box::new(operand),
        };
        Ok(expr(kind, start.to(close.span)))
    }

    /// Whether the `n`th token ahead begins a type name. An identifier naming a type is
    /// still taken as a variable when followed by `++`, `--`, `=`, `[` or `;`, as DTrace's
    /// lexer decides.
    pub(super) fn at_type_name_start(&mut self, n: usize) -> Result<bool> {
        let tok = self.peek_at(n)?.clone();
        Ok(match tok.kind {
            TokenKind::Keyword(k) => k.is_type_word(),
            TokenKind::Ident(name) => {
                // Only what can follow a type name in a cast or `sizeof` asks whether the
                // word is one: the answer may need the kernel's types (BTF), which a
                // parenthesized expression such as `(a + b)` should not cost.
                matches!(
                    self.peek_at(n + 1)?.kind,
                    TokenKind::Punct(
                        Punct::RParen
                            | Punct::Star
                            | Punct::LParen
                            | Punct::RBracket
                            | Punct::Comma
                            | Punct::Gt
                    ) | TokenKind::Keyword(_)
                        | TokenKind::Ident(_)
                ) && self.is_type_name(&name)
            }
            _ => false,
        })
    }
}

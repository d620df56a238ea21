//! Probe clauses (`descriptions /predicate/ { statements }`) and the statements of a body.

use super::Parser;
use crate::ast::{Clause, ProbeDesc, Stmt};
use crate::error::{CompileError, Result};
use crate::lexer::Mode;
use crate::span::Span;
use crate::token::{Keyword, Punct, TokenKind};

impl Parser<'_> {
    /// A clause, starting at its first probe description (lexed at the outer scope).
    pub(super) fn clause(&mut self) -> Result<Clause> {
        let mut probes = vec![self.probe_desc()?];
        while self.eat_punct(Punct::Comma)?.is_some() {
            probes.push(self.probe_desc()?);
        }
        let descs_span = probes[0].span.to(probes[probes.len() - 1].span);
        let mut span = descs_span;

        let mut after_predicate = None;
        let predicate = if self.eat_punct(Punct::Slash)?.is_some() {
            self.set_mode(Mode::Expr);
            let pred = self.expression()?;
            span = span.to(self.expect_punct(Punct::EndPredicate)?.span);
            if !self.at_punct(Punct::LBrace)? {
                return Err(CompileError::new(
                    "D_SYNTAX",
                    "expected actions { } following probe description and predicate",
                    pred.span,
                ));
            }
            after_predicate = Some(self.peek()?.span);
            Some(pred)
        } else {
            None
        };

        let body = match self.eat_punct(Punct::LBrace)? {
            Some(_) => {
                self.set_mode(Mode::Expr);
                let (stmts, close) = self.statements_until_rbrace()?;
                span = span.to(close);
                Some(stmts)
            }
            None if self.is_script => {
                return Err(CompileError::new(
                    "D_SYNTAX",
                    "expected predicate and/or actions following probe description",
                    descs_span,
                ))
            }
            None => None,
        };
        Ok(Clause {
            probes,
            predicate,
            body,
            span,
            after_predicate,
        })
    }

    fn probe_desc(&mut self) -> Result<ProbeDesc> {
        let tok = self.peek()?.clone();
        match tok.kind {
            TokenKind::ProbeDesc(text) => {
                self.bump()?;
                Ok(ProbeDesc {
                    text,
                    span: tok.span,
                })
            }
            _ => Err(self.error_near(&tok)),
        }
    }

    /// Statements up to and including the closing `}`; returns them and the `}` span.
    fn statements_until_rbrace(&mut self) -> Result<(Vec<Stmt>, Span)> {
        let mut stmts = Vec::new();
        loop {
            if let Some(close) = self.eat_punct(Punct::RBrace)? {
                return Ok((stmts, close.span));
            }
            stmts.extend(self.statement(false)?);
        }
    }

    /// One statement, or `None` for an empty one (`;`). The last statement before a `}`
    /// may omit its `;` unless `needs_semi` (the single statement of an `if` branch).
    fn statement(&mut self, needs_semi: bool) -> Result<Option<Stmt>> {
        // Statement recursion goes through several large frames.
        self.nested_costing(5, |p| {
            let tok = p.peek()?.clone();
            match tok.kind {
                TokenKind::Punct(Punct::Semi) => {
                    p.bump()?;
                    Ok(None)
                }
                TokenKind::Keyword(Keyword::If) => p.if_statement().map(Some),
                TokenKind::Punct(Punct::LBrace) => {
                    p.bump()?;
                    let (stmts, close) = p.statements_until_rbrace()?;
                    Ok(Some(Stmt::Block(stmts, tok.span.to(close))))
                }
                // D's grammar has no declarations in a clause: a syntax error at the
                // first word, as DTrace reports it.
                TokenKind::Keyword(Keyword::Typedef) => p.unexpected(),
                _ if p.at_declaration_start()? => p.unexpected(),
                _ => {
                    let expr = p.expression()?;
                    let after = p.peek()?.span;
                    if p.eat_punct(Punct::Semi)?.is_none()
                        && (needs_semi || !p.at_punct(Punct::RBrace)?)
                    {
                        return p.unexpected();
                    }
                    Ok(Some(Stmt::Expr(expr, after)))
                }
            }
        })
    }

    fn if_statement(&mut self) -> Result<Stmt> {
        let start = self.bump()?.span;
        self.expect_punct(Punct::LParen)?;
        let cond = self.expression()?;
        let mut end = self.expect_punct(Punct::RParen)?.span;
        let then = self.branch(&mut end)?;
        let otherwise = if self.eat_keyword_else()? {
            Some(self.branch(&mut end)?)
        } else {
            None
        };
        Ok(Stmt::If {
            cond,
            then,
            otherwise,
            span: start.to(end),
        })
    }

    fn eat_keyword_else(&mut self) -> Result<bool> {
        let found = self.at_keyword(Keyword::Else)?;
        if found {
            self.bump()?;
        }
        Ok(found)
    }

    /// The statement or `{ block }` of an `if` or `else`; extends `end` over it.
    fn branch(&mut self, end: &mut Span) -> Result<Vec<Stmt>> {
        if let Some(open) = self.eat_punct(Punct::LBrace)? {
            let (stmts, close) = self.statements_until_rbrace()?;
            *end = end.to(open.span).to(close);
            return Ok(stmts);
        }
        let stmt = self.statement(true)?;
        if let Some(s) = &stmt {
            *end = end.to(stmt_span(s));
        }
        Ok(stmt.into_iter().collect())
    }

    /// Whether a body statement starts with a declaration (`int x;`), which D has no
    /// place for in a clause.
    fn at_declaration_start(&mut self) -> Result<bool> {
        let tok = self.peek()?.clone();
        Ok(match tok.kind {
            // (`self` and `this` begin expressions here: `self->x`.)
            TokenKind::Keyword(Keyword::Self_ | Keyword::This) => false,
            TokenKind::Keyword(k) => k.is_type_word() || k.is_storage_class(),
            TokenKind::Ident(name) => {
                matches!(
                    self.peek_at(1)?.kind,
                    TokenKind::Ident(_) | TokenKind::Punct(Punct::Star)
                ) && self.is_type_name(&name)
            }
            _ => false,
        })
    }
}

fn stmt_span(stmt: &Stmt) -> Span {
    match stmt {
        Stmt::Expr(e, _) => e.span,
        Stmt::If { span, .. } | Stmt::Block(_, span) => *span,
    }
}

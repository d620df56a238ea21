//! Provider definitions (`provider p { probe x(int a) : (int a); };`), the declarations a C
//! program's probes are built from with `dtrace -h` and `dtrace -G`. Checked as DTrace
//! checks them: provider names must not end in a digit (a digit suffix is a pid), no
//! scoping operator, no probe declared twice, `void` only alone, and a named output
//! argument must name an input one.

use super::{Naming, Parser};
use crate::ast::{ProbeParam, Provider, ProviderProbe, TypeName, TypeSpec};
use crate::error::{CompileError, Result};
use crate::lexer::Mode;
use crate::token::{Keyword, Punct, TokenKind};

impl Parser<'_> {
    pub(super) fn provider_definition(&mut self) -> Result<Provider> {
        let start = self.bump()?.span;
        self.set_mode(Mode::Expr);
        let (name, name_span) = self.expect_name(false)?;
        if name.ends_with(|c: char| c.is_ascii_digit()) {
            return Err(CompileError::new(
                "D_PROV_BADNAME",
                format!("provider name may not end with a digit: {name}"),
                name_span,
            ));
        }
        self.expect_punct(Punct::LBrace)?;
        let mut probes: Vec<ProviderProbe> = Vec::new();
        while self.eat_punct(Punct::RBrace)?.is_none() {
            let probe = self.provider_probe()?;
            if probes.iter().any(|p| p.name == probe.name) {
                return Err(CompileError::new(
                    "D_PROV_PRDUP",
                    format!("probe redeclared: {name}:{}", probe.name.replace("__", "-")),
                    probe.span,
                ));
            }
            probes.push(probe);
        }
        let semi = self.expect_punct(Punct::Semi)?;
        Ok(Provider {
            name,
            probes,
            span: start.to(semi.span),
        })
    }

    /// `probe name(args) [: (args)];`
    fn provider_probe(&mut self) -> Result<ProviderProbe> {
        let tok = self.peek()?.clone();
        if tok.kind != TokenKind::Keyword(Keyword::Probe) {
            return Err(self.error_near(&tok));
        }
        self.bump()?;
        let (name, _) = self.expect_name(false)?;
        let native = self.probe_params("probe input")?;
        let translated = if self.eat_punct(Punct::Colon)?.is_some() {
            let out = self.probe_params("probe output")?;
            for (i, p) in out.iter().enumerate() {
                if let Some(n) = &p.name {
                    if !native.iter().any(|q| q.name.as_deref() == Some(n.as_str())) {
                        return Err(CompileError::new(
                            "D_DECL_PROTO_FORM",
                            format!(
                                "parameter is not declared in probe input prototype: {n}, parameter #{}",
                                i + 1
                            ),
                            p.span,
                        ));
                    }
                }
            }
            Some(out)
        } else {
            None
        };
        let semi = self.expect_punct(Punct::Semi)?;
        Ok(ProviderProbe {
            name,
            native,
            translated,
            span: tok.span.to(semi.span),
        })
    }

    /// `( [void | param {, param}] )`; a sole `void` is no parameter.
    fn probe_params(&mut self, kind: &str) -> Result<Vec<ProbeParam>> {
        self.expect_punct(Punct::LParen)?;
        let mut params = Vec::new();
        while !self.at_punct(Punct::RParen)? {
            if !params.is_empty() {
                self.expect_punct(Punct::Comma)?;
            }
            if self.at_punct(Punct::Ellipsis)? {
                let tok = self.peek()?.clone();
                return Err(CompileError::new(
                    "D_DECL_PROTO_VARARGS",
                    format!("{kind} prototype may not use a variable-length argument list"),
                    tok.span,
                ));
            }
            let specs = self.specifiers(false)?;
            let d = self.declarator(Naming::Either)?;
            let span = specs.span.to(d.span);
            params.push(ProbeParam {
                ty: TypeName {
                    spec: specs.spec,
                    declarator: d.parts,
                    span,
                },
                name: d.name.map(|(n, _)| n),
                span,
            });
        }
        self.expect_punct(Punct::RParen)?;
        let is_void = |p: &ProbeParam| {
            p.ty.declarator.is_empty()
                && matches!(&p.ty.spec, TypeSpec::Builtin { words, .. } if words == &["void"])
        };
        if let Some(v) = params.iter().find(|p| is_void(p)) {
            if params.len() > 1 {
                return Err(CompileError::new(
                    "D_DECL_PROTO_VOID",
                    "void must be sole parameter",
                    v.span,
                ));
            }
            params.clear();
        }
        Ok(params)
    }
}

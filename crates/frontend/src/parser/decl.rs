//! Declarations and types: declaration specifiers, C declarators (pointers, arrays,
//! associative arrays, functions), struct/union/enum definitions, type names, and the
//! `inline` and `translator` definitions.

use super::Parser;
use crate::ast::{
    Decl, Declarator, DeclaratorPart, Inline, StorageClass, Translator, TypeName, TypeSpec,
};
use crate::error::{CompileError, Result};
use crate::lexer::Mode;
use crate::span::Span;
use crate::token::{Keyword, Punct, Token, TokenKind};

/// Declaration specifiers: storage class and type.
pub(super) struct Specifiers {
    class: Option<StorageClass>,
    pub(super) spec: TypeSpec,
    pub(super) span: Span,
}

/// Whether a declarator must, may or must not name something.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Naming {
    Named,
    Abstract,
    Either,
}

/// A parsed declarator before it is attached to specifiers.
pub(super) struct RawDeclarator {
    pub(super) name: Option<(String, Span)>,
    pub(super) parts: Vec<DeclaratorPart>,
    pub(super) span: Span,
}

/// The built-in type words seen so far in a specifier list.
#[derive(Default)]
struct BuiltinWords {
    base: Option<Keyword>,
    sign: Option<Keyword>,
    shorts: u8,
    longs: u8,
}

impl BuiltinWords {
    fn any(&self) -> bool {
        self.base.is_some() || self.has_modifiers()
    }

    fn has_modifiers(&self) -> bool {
        self.sign.is_some() || self.shorts + self.longs > 0
    }

    /// Checks the combination like DTrace's declaration checks and returns the canonical
    /// words: `[unsigned | signed (char only)] [short | long | long long] [base]`, where
    /// the base `int` is dropped after `short`/`long` (so `unsigned long int` is
    /// `unsigned long`) and is implied when only modifiers are given.
    fn canonical(&self, span: Span) -> Result<Vec<String>> {
        use Keyword::*;
        let base = self.base.unwrap_or(Int);
        let sized = self.shorts + self.longs > 0;
        let fail = |tag: &'static str, msg: &str| Err(CompileError::new(tag, msg, span));
        if self.shorts > 1 {
            return fail("D_DECL_COMBO", "invalid type combination");
        }
        if self.shorts > 0 && self.longs > 0 {
            // DTrace names such a type and finds no type of that name.
            let mut words: Vec<&str> = match self.sign {
                Some(Unsigned) => vec!["unsigned"],
                Some(_) => vec!["signed"],
                None => Vec::new(),
            };
            words.push("short");
            words.extend(std::iter::repeat_n("long", usize::from(self.longs)));
            words.extend(self.base.map(Keyword::as_str));
            return fail(
                "D_UNKNOWN",
                &format!(
                    "failed to resolve type {} : Unknown type name",
                    words.join(" ")
                ),
            );
        }
        match base {
            Void if self.has_modifiers() => {
                return fail(
                    "D_DECL_VOIDATTR",
                    "invalid type declaration: attributes may not be used with void type",
                )
            }
            Char if sized => {
                return fail(
                    "D_DECL_CHARATTR",
                    "invalid type declaration: short and long may not be used with char type",
                )
            }
            Float | Double | String if self.sign.is_some() => {
                return fail(
                    "D_DECL_SIGNINT",
                    "invalid type declaration: signed and unsigned may only be used with integer type",
                )
            }
            String if self.longs > 0 => {
                return fail(
                    "D_DECL_LONGINT",
                    "invalid type declaration: long and long long may only be used with integer or floating-point type",
                )
            }
            Float | Double | String if self.shorts > 0 => {
                return fail("D_DECL_COMBO", "invalid type combination")
            }
            _ => {}
        }
        let mut words = Vec::new();
        match self.sign {
            Some(Unsigned) => words.push("unsigned"),
            Some(_) if base == Char => words.push("signed"),
            _ => {}
        }
        if self.shorts > 0 {
            words.push("short");
        }
        words.extend(std::iter::repeat_n("long", usize::from(self.longs)));
        if !(base == Int && sized) {
            words.push(base.as_str());
        }
        Ok(words.into_iter().map(str::to_string).collect())
    }
}

/// `signed`/`unsigned` or `long` applied to a struct, union or enum.
fn modifier_error(words: &BuiltinWords, span: Span) -> CompileError {
    if words.sign.is_some() {
        CompileError::new(
            "D_DECL_SIGNINT",
            "invalid type declaration: signed and unsigned may only be used with integer type",
            span,
        )
    } else if words.longs > 0 {
        CompileError::new(
            "D_DECL_LONGINT",
            "invalid type declaration: long and long long may only be used with integer or floating-point type",
            span,
        )
    } else {
        combo_error(span)
    }
}

fn combo_error(span: Span) -> CompileError {
    CompileError::new("D_DECL_COMBO", "invalid type combination", span)
}

/// Adds qualifiers to a user-named or struct/union/enum type specifier.
fn with_qualifiers(mut spec: TypeSpec, quals: Vec<String>) -> TypeSpec {
    match &mut spec {
        TypeSpec::Builtin { qualifiers, .. }
        | TypeSpec::Named { qualifiers, .. }
        | TypeSpec::Struct { qualifiers, .. }
        | TypeSpec::Enum { qualifiers, .. } => qualifiers.extend(quals),
    }
    spec
}

impl Parser<'_> {
    /// `specifiers [declarator {, declarator}] ;` in expression mode.
    pub(super) fn declaration(&mut self) -> Result<Decl> {
        let specs = self.specifiers(true)?;
        let mut declarators = Vec::new();
        if !self.at_punct(Punct::Semi)? {
            loop {
                let d = self.declarator(Naming::Named)?;
                let (name, _) = d.name.unwrap_or_default();
                declarators.push(Declarator {
                    name,
                    parts: d.parts,
                    bitfield: None,
                    span: d.span,
                });
                if self.eat_punct(Punct::Comma)?.is_none() {
                    break;
                }
            }
        }
        let semi = self.expect_punct(Punct::Semi)?;
        if specs.class == Some(StorageClass::Typedef) {
            self.typedefs
                .extend(declarators.iter().map(|d| d.name.clone()));
        }
        Ok(Decl {
            class: specs.class,
            spec: specs.spec,
            declarators,
            span: specs.span.to(semi.span),
        })
    }

    /// `inline type name = expr;`, starting at `inline` (lexed at the outer scope).
    pub(super) fn inline_definition(&mut self) -> Result<Inline> {
        let start = self.bump()?.span;
        self.set_mode(Mode::Expr);
        let specs = self.specifiers(true)?;
        self.key_names.clear();
        let d = self.declarator(Naming::Named)?;
        let (name, _) = d.name.unwrap_or_default();
        // `inline int f[int x, int y] = x + y;`: the keys' names are the parameters.
        let params = match d.parts.last() {
            Some(DeclaratorPart::AssocArray(_)) => std::mem::take(&mut self.key_names),
            _ => Vec::new(),
        };
        let ty = TypeName {
            spec: specs.spec,
            declarator: d.parts,
            span: specs.span.to(d.span),
        };
        self.expect_punct(Punct::Assign)?;
        let value = self.assignment()?;
        let semi = self.expect_punct(Punct::Semi)?;
        Ok(Inline {
            ty,
            name,
            params,
            value,
            span: start.to(semi.span),
        })
    }

    /// `translator out < in name > { member = expr; ... };`, starting at `translator`.
    pub(super) fn translator_definition(&mut self) -> Result<Translator> {
        let start = self.bump()?.span;
        self.set_mode(Mode::Expr);
        let output = self.type_name()?;
        self.expect_punct(Punct::Lt)?;
        let input = self.type_name()?;
        let (input_name, _) = self.expect_name(false)?;
        self.expect_punct(Punct::Gt)?;
        self.expect_punct(Punct::LBrace)?;
        let mut members = Vec::new();
        while self.eat_punct(Punct::RBrace)?.is_none() {
            let (name, name_span) = self.expect_name(true)?;
            self.expect_punct(Punct::Assign)?;
            let value = self.assignment()?;
            let semi = self.expect_punct(Punct::Semi)?;
            members.push((name, value, name_span.to(semi.span)));
        }
        let semi = self.expect_punct(Punct::Semi)?;
        Ok(Translator {
            output,
            input,
            input_name,
            members,
            span: start.to(semi.span),
        })
    }

    /// A type name as in a cast or `sizeof`: specifiers and an abstract declarator.
    pub(super) fn type_name(&mut self) -> Result<TypeName> {
        let specs = self.specifiers(false)?;
        let d = self.declarator(Naming::Abstract)?;
        Ok(TypeName {
            spec: specs.spec,
            declarator: d.parts,
            span: specs.span.to(d.span),
        })
    }

    pub(super) fn specifiers(&mut self, allow_class: bool) -> Result<Specifiers> {
        let start = self.peek()?.span;
        let mut class = None;
        let mut quals = Vec::new();
        let mut words = BuiltinWords::default();
        let mut other: Option<TypeSpec> = None;
        loop {
            let tok = self.peek()?.clone();
            let kind = match tok.kind {
                TokenKind::Keyword(k) => k,
                TokenKind::Ident(name)
                    if !words.any() && other.is_none() && self.is_type_name(&name) =>
                {
                    self.bump()?;
                    other = Some(TypeSpec::Named {
                        name,
                        qualifiers: Vec::new(),
                    });
                    continue;
                }
                _ => break,
            };
            use Keyword::*;
            match kind {
                _ if allow_class && kind.is_storage_class() => {
                    self.bump()?;
                    class = Some(self.storage_class(&tok, class.is_some())?);
                }
                Const | Volatile | Restrict | Userland => {
                    self.bump()?;
                    quals.push(kind.as_str().to_string());
                }
                Void | Char | Int | Float | Double | String => {
                    if words.base.is_some() || other.is_some() {
                        return Err(combo_error(tok.span));
                    }
                    self.bump()?;
                    words.base = Some(kind);
                }
                Signed | Unsigned => {
                    if words.sign.is_some() {
                        return Err(combo_error(tok.span));
                    }
                    self.bump()?;
                    words.sign = Some(kind);
                }
                Short | Long => {
                    if words.longs == 2 && kind == Long {
                        return Err(combo_error(tok.span));
                    }
                    self.bump()?;
                    if kind == Short {
                        words.shorts += 1;
                    } else {
                        words.longs += 1;
                    }
                }
                Struct | Union | Enum => {
                    if words.has_modifiers() && other.is_none() && words.base.is_none() {
                        // DTrace reports `unsigned struct s {` and `long struct s {` where
                        // the specifier's body starts.
                        let at = match self.peek_at(1)?.kind {
                            TokenKind::Ident(_) => self.peek_at(2)?.span,
                            _ => self.peek_at(1)?.span,
                        };
                        return Err(modifier_error(&words, at));
                    }
                    if words.any() || other.is_some() {
                        return Err(combo_error(tok.span));
                    }
                    other = Some(if kind == Enum {
                        self.enum_specifier()?
                    } else {
                        self.struct_specifier()?
                    });
                }
                _ => break,
            }
        }
        let span = start.to(self.last);
        let spec = match other {
            Some(_) if words.any() => {
                return Err(match words.sign {
                    Some(_) => CompileError::new(
                        "D_DECL_SIGNINT",
                        "invalid type declaration: signed and unsigned may only be used with integer type",
                        span,
                    ),
                    None => combo_error(span),
                });
            }
            Some(spec) => with_qualifiers(spec, quals),
            None if words.any() || !quals.is_empty() || class.is_some() => TypeSpec::Builtin {
                words: words.canonical(span)?,
                qualifiers: quals,
            },
            None => return self.unexpected(),
        };
        Ok(Specifiers { class, spec, span })
    }

    fn storage_class(&self, tok: &Token, repeated: bool) -> Result<StorageClass> {
        if repeated {
            return Err(CompileError::new(
                "D_DECL_CLASS",
                "only one storage class allowed in a declaration",
                tok.span,
            ));
        }
        Ok(match tok.kind {
            TokenKind::Keyword(Keyword::Self_) => StorageClass::Self_,
            TokenKind::Keyword(Keyword::This) => StorageClass::This,
            TokenKind::Keyword(Keyword::Extern) => StorageClass::Extern,
            TokenKind::Keyword(Keyword::Static) => StorageClass::Static,
            TokenKind::Keyword(Keyword::Register) => StorageClass::Register,
            TokenKind::Keyword(Keyword::Typedef) => StorageClass::Typedef,
            _ => {
                return Err(CompileError::new(
                    "D_DECL_BADCLASS",
                    "specified storage class not appropriate in D",
                    tok.span,
                ))
            }
        })
    }

    /// `struct|union [name] [{ members }]`, at the keyword.
    fn struct_specifier(&mut self) -> Result<TypeSpec> {
        // Declaration specifiers take a large stack frame.
        self.nested_costing(4, Self::struct_specifier_body)
    }

    fn struct_specifier_body(&mut self) -> Result<TypeSpec> {
        let union = self.bump()?.kind == TokenKind::Keyword(Keyword::Union);
        let name = self.optional_tag()?;
        let members = if let Some(brace) = self.eat_punct(Punct::LBrace)? {
            if let Some(tag) = &name {
                if !self.bodies.insert((union, tag.clone())) {
                    let word = if union { "union" } else { "struct" };
                    return Err(CompileError::new(
                        "D_DECL_TYPERED",
                        format!("type redeclared: {word} {tag}"),
                        brace.span,
                    ));
                }
            }
            let mut members = vec![self.member_declaration()?];
            while self.eat_punct(Punct::RBrace)?.is_none() {
                members.push(self.member_declaration()?);
            }
            Some(members)
        } else if name.is_none() {
            return self.unexpected();
        } else {
            None
        };
        Ok(TypeSpec::Struct {
            union,
            name,
            members,
            qualifiers: Vec::new(),
        })
    }

    /// `enum [name] [{ A [= expr], ... }]`, at the keyword.
    fn enum_specifier(&mut self) -> Result<TypeSpec> {
        self.bump()?;
        let name = self.optional_tag()?;
        let variants = if self.eat_punct(Punct::LBrace)?.is_some() {
            let mut variants = Vec::new();
            loop {
                let (variant, span) = self.expect_name(false)?;
                let value = match self.eat_punct(Punct::Assign)? {
                    Some(_) => Some(self.conditional()?),
                    None => None,
                };
                // Through the token after it (`,` or `}`): DTrace places an enumerator's
                // errors there.
                let next = self.peek()?.span;
                variants.push((variant, value, span.to(next)));
                if self.eat_punct(Punct::Comma)?.is_none() || self.at_punct(Punct::RBrace)? {
                    self.expect_punct(Punct::RBrace)?;
                    break;
                }
            }
            Some(variants)
        } else if name.is_none() {
            return self.unexpected();
        } else {
            None
        };
        Ok(TypeSpec::Enum {
            name,
            variants,
            qualifiers: Vec::new(),
        })
    }

    /// The tag after `struct`, `union` or `enum`, if any.
    fn optional_tag(&mut self) -> Result<Option<String>> {
        if let Some(tag) = self.object_scoped_tag()? {
            return Ok(Some(tag));
        }
        let TokenKind::Ident(name) = self.peek_kind()?.clone() else {
            return Ok(None);
        };
        self.bump()?;
        Ok(Some(name))
    }

    /// A struct/union member declaration, with optional bit-field widths.
    fn member_declaration(&mut self) -> Result<Decl> {
        let specs = self.specifiers(false)?;
        let mut declarators = Vec::new();
        loop {
            let start = self.peek()?.span;
            let (name, parts) = if self.at_punct(Punct::Colon)? {
                (String::new(), Vec::new())
            } else {
                let d = self.declarator(Naming::Named)?;
                (d.name.unwrap_or_default().0, d.parts)
            };
            let bitfield = match self.eat_punct(Punct::Colon)? {
                Some(_) => Some(self.conditional()?),
                None => None,
            };
            declarators.push(Declarator {
                name,
                parts,
                bitfield,
                span: start.to(self.last),
            });
            if self.eat_punct(Punct::Comma)?.is_none() {
                break;
            }
        }
        let semi = self.expect_punct(Punct::Semi)?;
        Ok(Decl {
            class: None,
            spec: specs.spec,
            declarators,
            span: specs.span.to(semi.span),
        })
    }

    /// A C declarator. Parts are listed from the base type outwards: `*x[4]` gives
    /// `[Pointer, Array(4)]` (array of pointers), `(*x)[4]` gives `[Array(4), Pointer]`.
    pub(super) fn declarator(&mut self, naming: Naming) -> Result<RawDeclarator> {
        self.nested(|p| {
            let start = p.peek()?.span;
            let mut parts = Vec::new();
            while p.eat_punct(Punct::Star)?.is_some() {
                let qualifiers = p.pointer_qualifiers()?;
                parts.push(DeclaratorPart::Pointer { qualifiers });
            }
            let mut name = None;
            let mut inner = Vec::new();
            if p.at_punct(Punct::LParen)? && p.nested_declarator_follows(naming)? {
                p.bump()?;
                let d = p.declarator(naming)?;
                p.expect_punct(Punct::RParen)?;
                name = d.name;
                inner = d.parts;
            } else if naming != Naming::Abstract {
                if let TokenKind::Ident(id) = p.peek_kind()?.clone() {
                    let span = p.bump()?.span;
                    name = Some((id, span));
                }
            }
            let mut suffixes = Vec::new();
            loop {
                if p.at_punct(Punct::LBracket)? {
                    suffixes.push(p.array_suffix()?);
                } else if p.eat_punct(Punct::LParen)?.is_some() {
                    let params = p.parameters(Punct::RParen)?;
                    p.expect_punct(Punct::RParen)?;
                    suffixes.push(DeclaratorPart::Function(params));
                } else {
                    break;
                }
            }
            if naming == Naming::Named && name.is_none() {
                return p.unexpected();
            }
            parts.extend(suffixes.into_iter().rev());
            parts.extend(inner);
            let span = if p.last.end > start.start {
                start.to(p.last)
            } else {
                Span {
                    end: start.start,
                    ..start
                }
            };
            Ok(RawDeclarator { name, parts, span })
        })
    }

    /// After a `(` in a declarator: does a parenthesised declarator follow (rather than a
    /// function's parameter list)?
    fn nested_declarator_follows(&mut self, naming: Naming) -> Result<bool> {
        Ok(match self.peek_at(1)?.kind.clone() {
            TokenKind::Punct(Punct::Star) => true,
            TokenKind::Ident(name) => naming != Naming::Abstract && !self.is_type_name(&name),
            _ => false,
        })
    }

    fn pointer_qualifiers(&mut self) -> Result<Vec<String>> {
        let mut quals = Vec::new();
        while let TokenKind::Keyword(
            k @ (Keyword::Const | Keyword::Volatile | Keyword::Restrict | Keyword::Userland),
        ) = *self.peek_kind()?
        {
            self.bump()?;
            quals.push(k.as_str().to_string());
        }
        Ok(quals)
    }

    /// `[]`, `[size]` or an associative array's key types `[string, int]`.
    fn array_suffix(&mut self) -> Result<DeclaratorPart> {
        self.bump()?;
        let part = if self.at_punct(Punct::RBracket)? {
            DeclaratorPart::Array(None)
        } else if self.at_type_name_start(0)? || self.at_punct(Punct::Ellipsis)? {
            DeclaratorPart::AssocArray(self.parameters(Punct::RBracket)?)
        } else {
            DeclaratorPart::Array(Some(Box::new(self.conditional()?)))
        };
        self.expect_punct(Punct::RBracket)?;
        Ok(part)
    }

    /// Parameter types up to (not including) `close`, checked as DTrace checks
    /// prototypes (a lone unnamed `void`; no dynamic-variable parameters of functions); a
    /// trailing `...` is accepted for functions and not represented.
    fn parameters(&mut self, close: Punct) -> Result<Vec<TypeName>> {
        let mut params = Vec::new();
        if self.at_punct(close)? {
            return Ok(params);
        }
        let what = if close == Punct::RParen {
            "function"
        } else {
            "array"
        };
        let mut void_at = None;
        let mut names = Vec::new();
        loop {
            if let Some(tok) = self.eat_punct(Punct::Ellipsis)? {
                if close != Punct::RParen {
                    return Err(CompileError::new(
                        "D_DECL_PROTO_VARARGS",
                        "array prototype may not use a variable-length argument list",
                        tok.span,
                    ));
                }
                break;
            }
            let specs = self.specifiers(true)?;
            if specs.class.is_some() {
                return Err(CompileError::new(
                    "D_DECL_PARMCLASS",
                    "inappropriate storage class for function or associative array parameter",
                    specs.span,
                ));
            }
            let d = self.declarator(Naming::Either)?;
            let is_void = d.parts.is_empty()
                && matches!(&specs.spec, TypeSpec::Builtin { words, .. } if words == &["void"]);
            if is_void {
                if let Some((name, span)) = &d.name {
                    return Err(CompileError::new(
                        "D_DECL_PROTO_NAME",
                        format!("void parameter may not have a name: {name}"),
                        *span,
                    ));
                }
                void_at.get_or_insert(specs.span);
            }
            if close == Punct::RParen
                && d.parts
                    .iter()
                    .any(|p| matches!(p, DeclaratorPart::AssocArray(_)))
            {
                let name = d.name.as_ref().map_or("(anonymous)", |(n, _)| n.as_str());
                return Err(CompileError::new(
                    "D_DECL_PROTO_TYPE",
                    format!(
                        "{what} prototype may not use parameter of type dynamic variable: {name}, parameter #{}",
                        params.len() + 1
                    ),
                    specs.span.to(d.span),
                ));
            }
            names.push(d.name.map(|(n, _)| n).unwrap_or_default());
            params.push(TypeName {
                spec: specs.spec,
                declarator: d.parts,
                span: specs.span.to(d.span),
            });
            if self.eat_punct(Punct::Comma)?.is_none() {
                break;
            }
        }
        if close == Punct::RBracket {
            self.key_names = names;
        }
        // (In an array's key tuple a void is the typing pass's D_DECL_PROTO_TYPE.)
        if let Some(span) = void_at.filter(|_| params.len() > 1 && close == Punct::RParen) {
            return Err(CompileError::new(
                "D_DECL_PROTO_VOID",
                "void must be sole parameter",
                span,
            ));
        }
        Ok(params)
    }
}

//! The D lexer. Like DTrace's, it has two modes: the outer scope of a program, where a
//! word such as `syscall::read*:entry` or `profile-997` is one probe description, and
//! expression mode for predicates, clause bodies and declarations. Blanks, comments,
//! `#!` lines and control lines (`#pragma ...`) are skipped between tokens; control lines
//! are handed to the caller raw.

use crate::ast::MacroVar;
use crate::error::{CompileError, Result};
use crate::literal::{self, IntError};
use crate::span::Span;
use crate::token::{Keyword, Punct, Token, TokenKind};

/// Which of the two lexical contexts to lex the next token in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// The program's outer scope: probe descriptions or words starting a declaration.
    Outer,
    /// Predicates, clause bodies, declarations and expressions.
    Expr,
}

/// A `#...` control line, split into words.
#[derive(Clone, Debug, PartialEq)]
pub struct ControlLine {
    pub words: Vec<ControlWord>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ControlWord {
    pub kind: ControlWordKind,
    /// The word as written (a string keeps its quotes).
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlWordKind {
    Word,
    Int,
    Str,
}

/// Characters that may begin a probe description.
fn is_pspec_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b"-$:_.?*\\[]!".contains(&b)
}

fn is_pspec_char(b: u8) -> bool {
    is_pspec_start(b) || b.is_ascii_digit() || b == b'`'
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'`'
}

fn is_ident_char(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// The `syntax error near "X"` error DTrace reports for an unexpected token or character.
pub fn syntax_error_near(text: &str, span: Span) -> CompileError {
    if text.is_empty() {
        CompileError::new("D_SYNTAX", "syntax error near end of input", span)
    } else {
        let text = text.split('\n').next().unwrap_or_default();
        CompileError::new("D_SYNTAX", format!("syntax error near \"{text}\""), span)
    }
}

#[derive(Clone)]
pub struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
    source: u16,
    /// The `pspec` option: a word at the outer scope is always a probe description, never
    /// the type starting a declaration (`int*x` is a probe glob).
    pub probe_specifiers: bool,
}

impl<'a> Lexer<'a> {
    pub fn new(text: &'a str, source: u16) -> Lexer<'a> {
        Lexer {
            text,
            bytes: text.as_bytes(),
            pos: 0,
            source,
            probe_specifiers: false,
        }
    }

    /// Moves back (or forward) to re-lex from `pos`, e.g. after a mode change.
    pub fn seek(&mut self, pos: usize) {
        self.pos = pos;
    }

    fn span(&self, start: usize, end: usize) -> Span {
        Span::new(self.source, start, end)
    }

    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos + ahead).copied()
    }

    fn error_at_char(&self, pos: usize) -> CompileError {
        let c = self.text[pos..].chars().next().unwrap_or_default();
        let span = self.span(pos, pos + c.len_utf8());
        syntax_error_near(&crate::raw_bytes::shown(c).to_string(), span)
    }

    /// Lexes the next token in `mode`. Control lines met on the way are appended to
    /// `control`. `is_type` tells whether a word names a type (at the outer scope a type
    /// name starts a declaration rather than a probe description).
    pub fn next_token(
        &mut self,
        mode: Mode,
        is_type: &dyn Fn(&str) -> bool,
        control: &mut Vec<ControlLine>,
    ) -> Result<Token> {
        self.skip_trivia(control)?;
        let start = self.pos;
        let Some(b) = self.peek_byte(0) else {
            return Ok(Token {
                kind: TokenKind::Eof,
                span: self.span(start, start),
            });
        };
        let kind = match mode {
            Mode::Outer => self.outer_token(b, is_type)?,
            Mode::Expr => self.expr_token(b)?,
        };
        Ok(Token {
            kind,
            span: self.span(start, self.pos),
        })
    }

    fn skip_trivia(&mut self, control: &mut Vec<ControlLine>) -> Result<()> {
        while let Some(b) = self.peek_byte(0) {
            match b {
                _ if is_blank(b) => self.pos += 1,
                b'\\' if self.peek_byte(1) == Some(b'\n') => self.pos += 2,
                b'/' if self.peek_byte(1) == Some(b'*') => self.skip_block_comment()?,
                b'/' if self.peek_byte(1) == Some(b'/') && self.peek_byte(2) != Some(b'*') => {
                    self.skip_line()
                }
                b'#' if self.at_line_start() => {
                    if self.peek_byte(1) == Some(b'!') {
                        self.skip_line();
                    } else {
                        control.push(self.control_line()?);
                    }
                }
                _ => break,
            }
        }
        Ok(())
    }

    fn skip_line(&mut self) {
        while self.peek_byte(0).is_some_and(|b| b != b'\n') {
            self.pos += 1;
        }
    }

    fn skip_block_comment(&mut self) -> Result<()> {
        self.pos += 2;
        loop {
            match (self.peek_byte(0), self.peek_byte(1)) {
                (None, _) => {
                    // Untagged, at the end of the input, as DTrace's lexer reports it.
                    let end = self.bytes.len();
                    return Err(CompileError::new(
                        "",
                        "end-of-file encountered before matching */",
                        self.span(end, end),
                    ));
                }
                (Some(b'*'), Some(b'/')) => {
                    self.pos += 2;
                    return Ok(());
                }
                (Some(b'/'), Some(b'*')) => {
                    return Err(CompileError::new(
                        "D_SYNTAX",
                        "/* encountered inside a comment",
                        self.span(self.pos, self.pos + 2),
                    ))
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Whether only spaces and tabs precede the current position on its line.
    fn at_line_start(&self) -> bool {
        self.bytes[..self.pos]
            .iter()
            .rev()
            .take_while(|&&b| b != b'\n')
            .all(|&b| matches!(b, b' ' | b'\t' | 0x0b | 0x0c))
    }

    /// Reads a control line from its `#` to the end of the line.
    fn control_line(&mut self) -> Result<ControlLine> {
        let start = self.pos;
        self.pos += 1;
        let mut words = Vec::new();
        while let Some(b) = self.peek_byte(0) {
            let word_start = self.pos;
            let kind = match b {
                b'\n' => break,
                // A carriage return is a blank, so lines ending in CRLF read as in DTrace.
                b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                    self.pos += 1;
                    continue;
                }
                b'"' => {
                    self.string_body(b'"')?;
                    ControlWordKind::Str
                }
                _ => {
                    while self.peek_byte(0).is_some_and(|b| {
                        !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c | b'"')
                    }) {
                        self.pos += 1;
                    }
                    let text = &self.bytes[word_start..self.pos];
                    if text[0].is_ascii_digit() && literal::int_len(text) == text.len() {
                        ControlWordKind::Int
                    } else {
                        ControlWordKind::Word
                    }
                }
            };
            words.push(ControlWord {
                kind,
                text: self.text[word_start..self.pos].to_string(),
                span: self.span(word_start, self.pos),
            });
        }
        if self.peek_byte(0).is_none() {
            // Untagged, as DTrace's lexer reports it.
            return Err(CompileError::new(
                "",
                "end-of-file encountered before end of control line",
                self.span(start, self.pos),
            ));
        }
        Ok(ControlLine {
            words,
            span: self.span(start, self.pos),
        })
    }

    fn outer_token(&mut self, b: u8, is_type: &dyn Fn(&str) -> bool) -> Result<TokenKind> {
        let start = self.pos;
        if b.is_ascii_digit() {
            // A probe given by its numeric id.
            self.pos += literal::int_len(&self.bytes[start..]);
            return Ok(TokenKind::ProbeDesc(self.text[start..self.pos].to_string()));
        }
        if !is_pspec_start(b) {
            self.pos += 1;
            return match b {
                b'/' => Ok(TokenKind::Punct(Punct::Slash)),
                b',' => Ok(TokenKind::Punct(Punct::Comma)),
                b'{' => Ok(TokenKind::Punct(Punct::LBrace)),
                _ => Err(self.error_at_char(start)),
            };
        }
        loop {
            if self.peek_byte(0).is_some_and(is_pspec_char) {
                self.pos += 1;
                continue;
            }
            // A path in the module field (`myapp*:/usr/bin/myapp::tick`, `myapp*:./myapp::`):
            // a `/` in the second field whose run of path characters ends at a `:`.
            let fields = self.bytes[start..self.pos]
                .iter()
                .filter(|&&b| b == b':')
                .count();
            if self.peek_byte(0) == Some(b'/') && fields == 1 {
                let run = self.bytes[self.pos..]
                    .iter()
                    .take_while(|&&b| b.is_ascii_alphanumeric() || b"/._-+~@".contains(&b))
                    .count();
                if self.bytes.get(self.pos + run) == Some(&b':') {
                    self.pos += run;
                    continue;
                }
            }
            break;
        }
        let text = &self.text[start..self.pos];
        if let Some(k) = Keyword::from_word(text).filter(|k| k.starts_outer_declaration()) {
            return Ok(TokenKind::Keyword(k));
        }
        let could_be_type = !self.probe_specifiers
            && !text.contains([':', '-', '.', '?', '!', '`'])
            && !matches!(text, "BEGIN" | "END" | "ERROR");
        if could_be_type {
            // `int*x;` declares a pointer, while `int* {}` would be a probe glob: a word
            // (or its part before a `*`) that names a type starts a declaration.
            let name = match text.find('*') {
                Some(star) if star > 0 => &text[..star],
                _ => text,
            };
            let keyword = Keyword::from_word(name).filter(|k| k.is_type_word());
            if keyword.is_some() || is_type(name) {
                self.pos = start + name.len();
                return Ok(
                    keyword.map_or_else(|| TokenKind::Ident(name.to_string()), TokenKind::Keyword)
                );
            }
        }
        Ok(TokenKind::ProbeDesc(text.to_string()))
    }

    fn expr_token(&mut self, b: u8) -> Result<TokenKind> {
        let start = self.pos;
        match b {
            _ if is_ident_start(b) => {
                while self.peek_byte(0).is_some_and(is_ident_char) {
                    self.pos += 1;
                }
                let word = &self.text[start..self.pos];
                Ok(match Keyword::from_word(word) {
                    Some(k) => TokenKind::Keyword(k),
                    None => TokenKind::Ident(word.to_string()),
                })
            }
            b'0'..=b'9' => self.number(),
            b'.' if self.peek_byte(1).is_some_and(|d| d.is_ascii_digit()) => self.number(),
            b'"' => {
                let body = self.string_body(b'"')?;
                Ok(TokenKind::Str(literal::unescape(body)))
            }
            b'\'' => self.char_constant(),
            b'$' => self.macro_var(),
            b'@' => {
                self.pos += 1;
                if self
                    .peek_byte(0)
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                {
                    while self
                        .peek_byte(0)
                        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
                    {
                        self.pos += 1;
                    }
                }
                Ok(TokenKind::Aggregation(
                    self.text[start + 1..self.pos].to_string(),
                ))
            }
            _ => {
                let rest = &self.bytes[start..];
                let &(text, punct) = Punct::BY_LENGTH
                    .iter()
                    // The first byte rules out most candidates without a memcmp call.
                    .find(|(text, _)| {
                        text.as_bytes()[0] == rest[0] && rest.starts_with(text.as_bytes())
                    })
                    .ok_or_else(|| self.error_at_char(start))?;
                self.pos += text.len();
                Ok(TokenKind::Punct(match punct {
                    Punct::Slash if self.closes_predicate() => Punct::EndPredicate,
                    _ => punct,
                }))
            }
        }
    }

    /// DTrace's rule for a `/`: it ends a predicate when the next non-blank character is
    /// the end of input, `;`, `{` or `/`; otherwise it divides.
    /// Where the lexer's lookahead past blanks stops (DTrace reports a predicate's
    /// unbalanced `/` on that line).
    pub fn lookahead_span(&self) -> Span {
        let at = self.bytes[self.pos..]
            .iter()
            .position(|&b| !is_blank(b))
            .map_or(self.bytes.len(), |i| self.pos + i);
        self.span(at, at)
    }

    fn closes_predicate(&self) -> bool {
        let next = self.bytes[self.pos..].iter().find(|&&b| !is_blank(b));
        matches!(next, None | Some(b';' | b'{' | b'/'))
    }

    fn number(&mut self) -> Result<TokenKind> {
        let start = self.pos;
        let rest = &self.bytes[start..];
        let int_len = if rest[0].is_ascii_digit() {
            literal::int_len(rest)
        } else {
            0
        };
        let float_len = literal::float_len(rest);
        if float_len > int_len {
            self.pos += float_len;
            return Err(CompileError::new(
                "D_SYNTAX",
                "floating-point constants are not permitted",
                self.span(start, self.pos),
            ));
        }
        self.pos += int_len;
        let text = &self.text[start..self.pos];
        let span = self.span(start, self.pos);
        match literal::parse_int(text) {
            Ok(lit) => Ok(TokenKind::Int {
                value: lit.value,
                unsigned: lit.unsigned,
                longs: lit.longs,
                decimal: lit.decimal,
            }),
            Err(IntError::Overflow) => Err(CompileError::new(
                "D_INT_OFLOW",
                format!("constant {text} results in integer overflow"),
                span,
            )),
            Err(IntError::InvalidDigit(d)) => Err(CompileError::new(
                "D_INT_DIGIT",
                format!("constant {text} contains invalid digit {d}"),
                span,
            )),
        }
    }

    /// Scans a quoted body (the opening quote is at the current position) and returns the
    /// raw bytes between the quotes.
    fn string_body(&mut self, quote: u8) -> Result<&'a [u8]> {
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.peek_byte(0) {
                None => return Err(self.error_at_char(start)),
                Some(b'\n') => {
                    let (tag, what) = if quote == b'"' {
                        ("D_STR_NL", "string literal")
                    } else {
                        ("D_CHR_NL", "character constant")
                    };
                    // On the line the newline leads to, as DTrace's lexer counts.
                    return Err(CompileError::new(
                        tag,
                        format!("newline encountered in {what}"),
                        self.span(self.pos + 1, self.pos + 1),
                    ));
                }
                Some(b'\\') if self.peek_byte(1).is_some_and(|b| b != b'\n') => self.pos += 2,
                Some(b) if b == quote => {
                    self.pos += 1;
                    return Ok(&self.bytes[start + 1..self.pos - 1]);
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    fn char_constant(&mut self) -> Result<TokenKind> {
        let start = self.pos;
        let body = self.string_body(b'\'')?;
        let span = self.span(start, self.pos);
        if body.is_empty() {
            return Err(CompileError::new(
                "D_CHR_NULL",
                "empty character constant",
                span,
            ));
        }
        let bytes = literal::unescape(body);
        match bytes[..] {
            [c] => Ok(TokenKind::Char(c)),
            _ if bytes.len() > 8 => Err(CompileError::new(
                "D_CHR_OFLOW",
                "character constant is too long",
                span,
            )),
            _ => Ok(TokenKind::Int {
                value: bytes.iter().fold(0, |v, &b| v << 8 | u64::from(b)),
                unsigned: false,
                longs: 0,
                decimal: true,
            }),
        }
    }

    fn macro_var(&mut self) -> Result<TokenKind> {
        let start = self.pos;
        let dollars = if self.peek_byte(1) == Some(b'$') {
            2
        } else {
            1
        };
        self.pos += dollars;
        let name_start = self.pos;
        match self.peek_byte(0) {
            Some(b'0'..=b'9') => {
                while self.peek_byte(0).is_some_and(|b| b.is_ascii_digit()) {
                    self.pos += 1;
                }
                let digits = &self.text[name_start..self.pos];
                let n: u32 = digits.parse().map_err(|_| {
                    CompileError::new(
                        "D_MACRO_UNDEF",
                        format!(
                            "macro argument {} is not defined",
                            &self.text[start..self.pos]
                        ),
                        self.span(start, self.pos),
                    )
                })?;
                Ok(TokenKind::Macro(if dollars == 2 {
                    MacroVar::StrArg(n)
                } else {
                    MacroVar::Arg(n)
                }))
            }
            Some(b) if b.is_ascii_alphabetic() || b == b'_' => {
                while self
                    .peek_byte(0)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
                {
                    self.pos += 1;
                }
                Ok(TokenKind::Macro(MacroVar::Named(
                    self.text[name_start..self.pos].to_string(),
                )))
            }
            _ => Err(self.error_at_char(start)),
        }
    }
}

//! The D parser: a hand-written recursive-descent parser over the context-sensitive
//! lexer. This module holds the token cursor, error helpers and the program's outer
//! loop; clauses, declarations and expressions live in the submodules.

mod clause;
mod decl;
mod expr;
mod provider;

use decl::Naming;

use std::collections::{HashSet, VecDeque};

use crate::ast::{Item, Pragma, Program};
use crate::error::{CompileError, Result};
use crate::lexer::{syntax_error_near, ControlLine, Lexer, Mode};
use crate::pragma;
use crate::span::{Origin, Source, Span};
use crate::token::{Keyword, Punct, Token, TokenKind};

/// Deepest nesting of expressions, statements and declarators accepted (a parenthesised
/// subexpression counts two). Keeps recursion well within a 2 MiB thread stack even in
/// unoptimised builds.
const MAX_DEPTH: usize = 200;

/// The deepest expression tree accepted. Operator chains (`1 + 1 + ... + 1`, `a, b, ...`,
/// `p->next->next...`) are parsed by loops, not recursion, so their depth is not bounded by
/// [`MAX_DEPTH`]; the passes after parsing recurse over the tree, and `dtrace` runs them on
/// a stack sized for this many levels.
pub const MAX_EXPR_HEIGHT: usize = 20_000;

/// Parses one D source into a program. `is_type_name` tells whether an identifier names a
/// type known outside the program (D built-in typedefs, kernel types); typedefs declared
/// by the program itself are tracked here. Spans carry `source_index`.
pub fn parse(
    source: &Source,
    source_index: u16,
    is_type_name: &dyn Fn(&str) -> bool,
) -> Result<Program> {
    let settings = Settings {
        probe_specifiers: false,
        is_predefined: &|_| false,
    };
    parse_with(source, source_index, is_type_name, &settings)
}

/// How [`parse_with`] reads a source beyond [`parse`].
pub struct Settings<'a> {
    /// The `pspec` option (`#pragma D option pspec` turns it on from where it stands): a
    /// word at the outer scope is always a probe description.
    pub probe_specifiers: bool,
    /// Whether a name is a predefined D identifier (`pid`, `trace`), for the words of a
    /// syntax error at the end of the text.
    pub is_predefined: &'a dyn Fn(&str) -> bool,
}

/// [`parse`], as `settings` say.
pub fn parse_with(
    source: &Source,
    source_index: u16,
    is_type_name: &dyn Fn(&str) -> bool,
    settings: &Settings,
) -> Result<Program> {
    let mut parser = Parser {
        lexer: Lexer::new(&source.text, source_index),
        text: &source.text,
        is_script: matches!(source.origin, Origin::Script(_) | Origin::Library(_)),
        mode: Mode::Outer,
        defining: false,
        lookahead: VecDeque::new(),
        control_end: 0,
        pragmas: Vec::new(),
        is_type_name,
        typedefs: HashSet::new(),
        bodies: HashSet::new(),
        parens: 0,
        brackets: 0,
        braces: 0,
        depth: 0,
        last: Span::new(source_index, 0, 0),
        key_names: Vec::new(),
        is_predefined: settings.is_predefined,
    };
    parser.lexer.probe_specifiers = settings.probe_specifiers;
    parser.program()
}

struct Parser<'a> {
    lexer: Lexer<'a>,
    text: &'a str,
    /// `-s file` programs need a predicate or body after a probe description.
    is_script: bool,
    mode: Mode,
    /// In an `inline`, `translator` or `provider` definition, which DTrace's lexer reads
    /// without guessing whether identifiers name types (see [`Parser::error_near`]).
    defining: bool,
    /// Tokens lexed ahead in `mode`.
    lookahead: VecDeque<Token>,
    /// End of the last control line taken, so re-lexing does not take it twice.
    control_end: usize,
    /// Pragmas met while lexing, not yet emitted as items.
    pragmas: Vec<Pragma>,
    is_type_name: &'a dyn Fn(&str) -> bool,
    typedefs: HashSet<String>,
    /// Struct and union tags the program has given a body (union?, tag): another body is
    /// DTrace's D_DECL_TYPERED where it opens, before its members are read.
    bodies: HashSet<(bool, String)>,
    /// Open `(`, `[` and `{` among the tokens lexed so far, as DTrace's lexer counts them.
    parens: i32,
    brackets: i32,
    braces: i32,
    depth: usize,
    /// Span of the last token consumed.
    last: Span,
    /// The parameter names of the last associative-array declarator (an inline's keys).
    key_names: Vec<String>,
    is_predefined: &'a dyn Fn(&str) -> bool,
}

impl<'a> Parser<'a> {
    fn program(&mut self) -> Result<Program> {
        let mut items = Vec::new();
        loop {
            self.set_mode(Mode::Outer);
            let tok = self.peek()?.clone();
            items.extend(self.pragmas.drain(..).map(Item::Pragma));
            self.defining = matches!(
                tok.kind,
                TokenKind::Keyword(Keyword::Inline | Keyword::Translator | Keyword::Provider)
            );
            let item = match tok.kind {
                TokenKind::Eof => break,
                TokenKind::ProbeDesc(_) => Item::Clause(self.clause()?),
                TokenKind::Keyword(Keyword::Inline) => Item::Inline(self.inline_definition()?),
                TokenKind::Keyword(Keyword::Translator) => {
                    Item::Translator(self.translator_definition()?)
                }
                TokenKind::Keyword(Keyword::Provider) => {
                    Item::Provider(self.provider_definition()?)
                }
                TokenKind::Keyword(Keyword::Counter | Keyword::Import) => {
                    return Err(self.error_near(&tok))
                }
                TokenKind::Keyword(_) | TokenKind::Ident(_) => {
                    self.set_mode(Mode::Expr);
                    Item::Decl(self.declaration()?)
                }
                _ => return Err(self.error_near(&tok)),
            };
            items.push(item);
        }
        Ok(Program { items })
    }

    // ---- token cursor -------------------------------------------------------------

    fn lex(&mut self) -> Result<Token> {
        let mut lines: Vec<ControlLine> = Vec::new();
        let mut tok = self.next_token(&mut lines)?;
        let pspec = self.lexer.probe_specifiers;
        for line in lines {
            if line.span.start as usize >= self.control_end {
                self.control_end = line.span.end as usize;
                let pragmas = pragma::interpret(&line)?;
                if pragmas
                    .iter()
                    .any(|p| p.words[..] == ["D", "option", "pspec"])
                {
                    self.lexer.probe_specifiers = true;
                }
                self.pragmas.extend(pragmas);
            }
        }
        if self.lexer.probe_specifiers != pspec {
            // The token after `#pragma D option pspec` is read under it.
            self.lexer.seek(tok.span.start as usize);
            tok = self.next_token(&mut Vec::new())?;
        }
        self.count_nesting(&tok, 1)?;
        Ok(tok)
    }

    /// The next token in the current mode; control lines met before it go to `lines`.
    fn next_token(&mut self, lines: &mut Vec<ControlLine>) -> Result<Token> {
        let (typedefs, is_type_name) = (&self.typedefs, self.is_type_name);
        let is_type = |name: &str| typedefs.contains(name) || is_type_name(name);
        self.lexer.next_token(self.mode, &is_type, lines)
    }

    /// Tracks bracket balance like DTrace's lexer, with its errors for a stray closer and
    /// for a predicate closed inside parentheses or brackets.
    fn count_nesting(&mut self, tok: &Token, sign: i32) -> Result<()> {
        let TokenKind::Punct(p) = tok.kind else {
            return Ok(());
        };
        let (counter, what) = match p {
            Punct::LParen | Punct::RParen => (&mut self.parens, ')'),
            Punct::LBracket | Punct::RBracket => (&mut self.brackets, ']'),
            Punct::LBrace | Punct::RBrace => (&mut self.braces, '}'),
            Punct::EndPredicate if sign > 0 => {
                for (open, closer) in [(self.parens, ')'), (self.brackets, ']')] {
                    if open != 0 {
                        return Err(CompileError::new(
                            "D_SYNTAX",
                            format!("closing {closer} expected in predicate before /"),
                            self.lexer.lookahead_span(),
                        ));
                    }
                }
                return Ok(());
            }
            _ => return Ok(()),
        };
        let opens = matches!(p, Punct::LParen | Punct::LBracket | Punct::LBrace);
        *counter += if opens { sign } else { -sign };
        if *counter < 0 {
            return Err(CompileError::new(
                "D_SYNTAX",
                format!("extra {what} in input stream"),
                tok.span,
            ));
        }
        Ok(())
    }

    /// A tag scoped by an object's path or a file name the usual tokens would split
    /// (`/opt/app/prog`rec`, `libstdc++.so.6`T`), taken as one name where a tag must come;
    /// the tokens lexed ahead from there are lexed again after it.
    fn object_scoped_tag(&mut self) -> Result<Option<String>> {
        let start = self.peek()?.span.start as usize;
        let Some(end) = self.lexer.object_scoped_name_end(start) else {
            return Ok(None);
        };
        for tok in std::mem::take(&mut self.lookahead) {
            // Undoing a count cannot fail.
            let _ = self.count_nesting(&tok, -1);
        }
        self.lexer.seek(end);
        self.last = Span::new(self.last.source, start, end);
        Ok(Some(self.lexer.text_between(start, end).to_string()))
    }

    /// Switches lexical mode; tokens already lexed ahead are lexed again in the new mode.
    fn set_mode(&mut self, mode: Mode) {
        if mode == self.mode {
            return;
        }
        self.mode = mode;
        if let Some(first) = self.lookahead.front() {
            self.lexer.seek(first.span.start as usize);
        }
        for tok in std::mem::take(&mut self.lookahead) {
            // Undoing a count cannot fail.
            let _ = self.count_nesting(&tok, -1);
        }
    }

    fn peek_at(&mut self, n: usize) -> Result<&Token> {
        while self.lookahead.len() <= n {
            let tok = match self.lookahead.back() {
                Some(last) if last.kind == TokenKind::Eof => last.clone(),
                _ => self.lex()?,
            };
            self.lookahead.push_back(tok);
        }
        Ok(&self.lookahead[n])
    }

    fn peek(&mut self) -> Result<&Token> {
        self.peek_at(0)
    }

    fn peek_kind(&mut self) -> Result<&TokenKind> {
        Ok(&self.peek()?.kind)
    }

    fn bump(&mut self) -> Result<Token> {
        self.peek()?;
        let tok = self.lookahead.pop_front().expect("peeked");
        self.last = tok.span;
        Ok(tok)
    }

    fn at_punct(&mut self, p: Punct) -> Result<bool> {
        Ok(*self.peek_kind()? == TokenKind::Punct(p))
    }

    fn at_keyword(&mut self, k: Keyword) -> Result<bool> {
        Ok(*self.peek_kind()? == TokenKind::Keyword(k))
    }

    fn eat_punct(&mut self, p: Punct) -> Result<Option<Token>> {
        if self.at_punct(p)? {
            self.bump().map(Some)
        } else {
            Ok(None)
        }
    }

    fn expect_punct(&mut self, p: Punct) -> Result<Token> {
        match self.eat_punct(p)? {
            Some(tok) => Ok(tok),
            None => self.unexpected(),
        }
    }

    /// An identifier, or (where D allows it, after `.` and `->`) a keyword used as a name.
    fn expect_name(&mut self, keywords_allowed: bool) -> Result<(String, Span)> {
        let tok = self.peek()?.clone();
        match tok.kind {
            TokenKind::Ident(name) => {
                self.bump()?;
                Ok((name, tok.span))
            }
            TokenKind::Keyword(k) if keywords_allowed => {
                self.bump()?;
                Ok((k.as_str().to_string(), tok.span))
            }
            _ => Err(self.error_near(&tok)),
        }
    }

    // ---- errors and limits ----------------------------------------------------------

    fn error_near(&self, tok: &Token) -> CompileError {
        let start = tok.span.start as usize;
        let text = match tok.kind {
            TokenKind::Eof if self.ends_in_new_identifier() => {
                return CompileError::new("D_SYNTAX", "syntax error near end-of-input", tok.span)
            }
            TokenKind::Eof => "",
            // DTrace's lexer reads past an identifier in a clause or declaration to guess
            // whether it names a type, and its message then shows the rest of the line.
            TokenKind::Ident(_) if self.mode == Mode::Expr && !self.defining => {
                let line = &self.text[start..];
                line[..line.find('\n').unwrap_or(line.len())].trim_end()
            }
            _ => &self.text[start..tok.span.end as usize],
        };
        syntax_error_near(text, tok.span)
    }

    /// Whether the text ends with an identifier met for the first time (not a member
    /// name, keyword, type or predefined identifier). DTrace's lexer looks past such a word to tell a variable
    /// from a type, and at the end of the text that look reads a NUL it then reports as a
    /// character: its error there says `end-of-input`.
    fn ends_in_new_identifier(&self) -> bool {
        let (start, end) = (self.last.start as usize, self.last.end as usize);
        let word = &self.text[start..end.min(self.text.len())];
        let is_word = |w: &str| {
            w.bytes()
                .next()
                .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                && w.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        };
        if !is_word(word)
            || Keyword::from_word(word).is_some()
            || self.typedefs.contains(word)
            || (self.is_type_name)(word)
            || (self.is_predefined)(word)
            || !self.text[end..].trim().is_empty()
        {
            return false;
        }
        let before = self.text[..start].trim_end();
        if before.ends_with('.') || before.ends_with("->") {
            return false;
        }
        !before
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .any(|w| w == word)
    }

    /// A syntax error at the next token.
    fn unexpected<T>(&mut self) -> Result<T> {
        let tok = self.peek()?.clone();
        Err(self.error_near(&tok))
    }

    /// Runs `f` one nesting level deeper, failing cleanly beyond [`MAX_DEPTH`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.nested_costing(1, f)
    }

    /// Like [`Parser::nested`] for constructs whose recursion uses `cost` times more stack.
    fn nested_costing<T>(
        &mut self,
        cost: usize,
        f: impl FnOnce(&mut Self) -> Result<T>,
    ) -> Result<T> {
        if self.depth + cost > MAX_DEPTH {
            let span = self.peek()?.span;
            return Err(CompileError::new(
                "D_SYNTAX",
                "program is nested too deeply",
                span,
            ));
        }
        self.depth += cost;
        let result = f(self);
        self.depth -= cost;
        result
    }

    /// `height`, the height of an operator chain just extended at `op`, if it is within
    /// [`MAX_EXPR_HEIGHT`].
    fn chain_height(&self, height: usize, op: Span) -> Result<usize> {
        if height > MAX_EXPR_HEIGHT {
            return Err(CompileError::new(
                "D_SYNTAX",
                format!("expression too deeply nested (more than {MAX_EXPR_HEIGHT} levels)"),
                op,
            ));
        }
        Ok(height)
    }

    /// Whether `name` names a type; a module scope (`D`foo_t`, `vmlinux`pid_t`) is
    /// looked past, as the typing pass does, unless the scoped name is a type of its own
    /// (a user object's, `a.out`tag_t`).
    fn is_type_name(&self, name: &str) -> bool {
        let bare = name.rsplit('`').next().unwrap_or(name);
        self.typedefs.contains(bare)
            || (self.is_type_name)(bare)
            || (bare.len() < name.len() && (self.is_type_name)(name))
    }
}

//! Preprocessing tokens: a file's logical lines (backslash-newlines spliced, comments
//! replaced by a space and kept out of the way of line numbers) cut into identifiers,
//! numbers, character and string literals and punctuators, each with its line and whether
//! white space came before it.

use std::collections::HashSet;
use std::rc::Rc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Ident,
    Number,
    /// A character or string literal (`'a'`, `"s"`), quotes included.
    Literal,
    Punct,
    /// Any other character (`@`, `$`, a stray quote).
    Other,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub kind: Kind,
    pub text: String,
    /// The line (of the file being read) it came from.
    pub line: usize,
    /// White space before it (for output, and `#` stringification).
    pub space: bool,
    /// The macros whose expansion produced it: they are not expanded again inside it.
    pub hide: Rc<HashSet<String>>,
}

impl Token {
    pub fn new(kind: Kind, text: impl Into<String>, line: usize, space: bool) -> Token {
        Token {
            kind,
            text: text.into(),
            line,
            space,
            hide: Rc::default(),
        }
    }

    pub fn is(&self, text: &str) -> bool {
        self.kind != Kind::Literal && self.text == text
    }
}

/// One logical line: its first physical line and its text (comments already replaced).
pub struct Line {
    pub number: usize,
    pub text: String,
}

/// Splice backslash-newlines and replace comments, giving the logical lines. A comment
/// spanning lines joins them (as in C it is one space); the lines it swallows come back as
/// the next line's number. An unterminated comment ends the file (GNU cpp's error is the
/// caller's to report: `unterminated comment`).
pub fn logical_lines(text: &str) -> (Vec<Line>, Option<usize>) {
    let bytes: Vec<char> = text.chars().collect();
    let mut lines = Vec::new();
    let mut cur = String::new();
    let mut start = 1;
    let mut line = 1;
    let mut i = 0;
    let mut quote: Option<char> = None;
    let mut unterminated = None;
    while i < bytes.len() {
        let c = bytes[i];
        if c == '\\' && bytes.get(i + 1) == Some(&'\n') {
            i += 2;
            line += 1;
            continue;
        }
        if c == '\n' {
            lines.push(Line {
                number: start,
                text: std::mem::take(&mut cur),
            });
            line += 1;
            start = line;
            quote = None;
            i += 1;
            continue;
        }
        if let Some(q) = quote {
            cur.push(c);
            if c == '\\' && i + 1 < bytes.len() && bytes[i + 1] != '\n' {
                cur.push(bytes[i + 1]);
                i += 2;
                continue;
            }
            if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        match (c, bytes.get(i + 1)) {
            ('/', Some('*')) => {
                let open = line;
                i += 2;
                loop {
                    if i >= bytes.len() {
                        unterminated = Some(open);
                        break;
                    }
                    if bytes[i] == '*' && bytes.get(i + 1) == Some(&'/') {
                        i += 2;
                        break;
                    }
                    if bytes[i] == '\n' {
                        line += 1;
                    }
                    i += 1;
                }
                cur.push(' ');
            }
            ('/', Some('/')) => {
                while i < bytes.len() && bytes[i] != '\n' {
                    if bytes[i] == '\\' && bytes.get(i + 1) == Some(&'\n') {
                        line += 1;
                        i += 1;
                    }
                    i += 1;
                }
            }
            ('"' | '\'', _) => {
                quote = Some(c);
                cur.push(c);
                i += 1;
            }
            _ => {
                cur.push(c);
                i += 1;
            }
        }
    }
    if !cur.is_empty() {
        lines.push(Line {
            number: start,
            text: cur,
        });
    }
    (lines, unterminated)
}

/// The punctuators of C, longest first.
const PUNCTS: &[&str] = &[
    "%:%:", "...", "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
    "*=", "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##", "<:", ":>", "<%", "%>", "%:",
];

/// Cut a logical line into tokens.
pub fn tokens(text: &str, line: usize) -> Vec<Token> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut space = false;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            space = true;
            i += 1;
            continue;
        }
        let start = i;
        let kind = if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            // An encoding prefix of a literal (L"x", u8"x") stays with it.
            if i < chars.len() && matches!(chars[i], '"' | '\'') {
                let prefix: String = chars[start..i].iter().collect();
                if matches!(prefix.as_str(), "L" | "u" | "U" | "u8") {
                    i = literal_end(&chars, i);
                    Kind::Literal
                } else {
                    Kind::Ident
                }
            } else {
                Kind::Ident
            }
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            // A pp-number: digits, letters, dots, and signs after an exponent letter.
            i += 1;
            while i < chars.len() {
                let d = chars[i];
                let sign = matches!(d, '+' | '-') && matches!(chars[i - 1], 'e' | 'E' | 'p' | 'P');
                if !(sign || d.is_ascii_alphanumeric() || d == '.' || d == '_') {
                    break;
                }
                i += 1;
            }
            Kind::Number
        } else if c == '"' || c == '\'' {
            i = literal_end(&chars, i);
            Kind::Literal
        } else if let Some(p) = PUNCTS
            .iter()
            .find(|p| chars[i..].iter().take(p.len()).copied().eq(p.chars()))
        {
            i += p.len();
            Kind::Punct
        } else if "[](){}.&*+-~!/%<>^|?:;=,#".contains(c) {
            i += 1;
            Kind::Punct
        } else {
            i += 1;
            Kind::Other
        };
        out.push(Token::new(
            kind,
            chars[start..i].iter().collect::<String>(),
            line,
            space,
        ));
        space = false;
    }
    out
}

/// The end of the literal whose opening quote is at `i` (the line's end if it has none).
fn literal_end(chars: &[char], i: usize) -> usize {
    let q = chars[i];
    let mut j = i + 1;
    while j < chars.len() {
        if chars[j] == '\\' {
            j += 2;
            continue;
        }
        if chars[j] == q {
            return j + 1;
        }
        j += 1;
    }
    chars.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(s: &str) -> Vec<String> {
        tokens(s, 1).into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn splices_and_comments_keep_line_numbers() {
        let (lines, open) = logical_lines("a \\\nb /* x\ny */ c\n// d\ne \"/*\"\n");
        let got: Vec<(usize, &str)> = lines.iter().map(|l| (l.number, l.text.as_str())).collect();
        assert_eq!(got, [(1, "a b   c"), (4, ""), (5, "e \"/*\"")]);
        assert_eq!(open, None);
        assert_eq!(logical_lines("x /* open\n").1, Some(1));
    }

    #[test]
    fn cuts_tokens() {
        assert_eq!(
            texts("#define F(a,...) a##__VA_ARGS__ <<= 0x1fULL 'c' L\"s\" 1e+5"),
            [
                "#",
                "define",
                "F",
                "(",
                "a",
                ",",
                "...",
                ")",
                "a",
                "##",
                "__VA_ARGS__",
                "<<=",
                "0x1fULL",
                "'c'",
                "L\"s\"",
                "1e+5"
            ]
        );
    }
}

//! Tokens produced by the lexer: D keywords, punctuators, literals and probe descriptions.

use crate::ast::MacroVar;
use crate::span::Span;

/// One lexed token and where it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// An identifier; may contain backquotes (`` `sym ``, ``mod`sym``, ``mod`type_t``).
    Ident(String),
    Keyword(Keyword),
    /// An integer constant, or a multi-byte character constant (`'ab'`), as an `int`.
    Int {
        value: u64,
        unsigned: bool,
        longs: u8,
        decimal: bool,
    },
    /// A single-byte character constant.
    Char(u8),
    /// A string literal with escapes resolved.
    Str(Vec<u8>),
    Macro(MacroVar),
    /// `@name`, or `@` alone (empty name).
    Aggregation(String),
    /// A probe description at the program's outer scope, as written.
    ProbeDesc(String),
    Punct(Punct),
    Eof,
}

macro_rules! keywords {
    ($($variant:ident = $text:literal,)*) => {
        /// The reserved words of D.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Keyword { $($variant,)* }

        impl Keyword {
            const ALL: &'static [(&'static str, Keyword)] = &[$(($text, Keyword::$variant),)*];

            /// The keyword spelled `word`, if any (a `match`: every identifier is looked up).
            pub fn from_word(word: &str) -> Option<Keyword> {
                match word {
                    $($text => Some(Keyword::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

keywords! {
    Auto = "auto", Break = "break", Case = "case", Char = "char", Const = "const",
    Continue = "continue", Counter = "counter", Default = "default", Do = "do",
    Double = "double", Else = "else", Enum = "enum", Extern = "extern", Float = "float",
    For = "for", Goto = "goto", If = "if", Import = "import", Inline = "inline", Int = "int",
    Long = "long", Offsetof = "offsetof", Probe = "probe", Provider = "provider",
    Register = "register", Restrict = "restrict", Return = "return", Self_ = "self",
    Short = "short", Signed = "signed", Sizeof = "sizeof", Static = "static",
    String = "string", Stringof = "stringof", Struct = "struct", Switch = "switch",
    This = "this", Translator = "translator", Typedef = "typedef", Union = "union",
    Unsigned = "unsigned", Userland = "userland", Void = "void", Volatile = "volatile",
    While = "while", Xlate = "xlate",
}

impl Keyword {
    pub fn as_str(self) -> &'static str {
        Keyword::ALL
            .iter()
            .find(|&&(_, k)| k == self)
            .map_or("", |&(text, _)| text)
    }

    /// Keywords that begin a declaration at the program's outer scope.
    pub fn starts_outer_declaration(self) -> bool {
        use Keyword::*;
        matches!(
            self,
            Auto | Char
                | Const
                | Counter
                | Double
                | Enum
                | Extern
                | Float
                | Import
                | Inline
                | Int
                | Long
                | Provider
                | Register
                | Restrict
                | Self_
                | Short
                | Signed
                | Static
                | String
                | Struct
                | This
                | Translator
                | Typedef
                | Union
                | Unsigned
                | Userland
                | Void
                | Volatile
        )
    }

    /// Keywords that are type specifiers or qualifiers (may begin a type name).
    pub fn is_type_word(self) -> bool {
        use Keyword::*;
        matches!(
            self,
            Char | Const
                | Double
                | Enum
                | Float
                | Int
                | Long
                | Restrict
                | Short
                | Signed
                | String
                | Struct
                | Union
                | Unsigned
                | Userland
                | Void
                | Volatile
        )
    }

    /// Storage-class keywords (`self` and `this` are D's additions).
    pub fn is_storage_class(self) -> bool {
        use Keyword::*;
        matches!(
            self,
            Auto | Extern | Register | Static | Typedef | Self_ | This
        )
    }
}

macro_rules! puncts {
    ($($variant:ident = $text:literal,)*) => {
        /// Operators and separators.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Punct { $($variant,)* }

        impl Punct {
            /// Longest first, so that a prefix scan finds the maximal munch.
            pub const BY_LENGTH: &'static [(&'static str, Punct)] = &[$(($text, Punct::$variant),)*];
        }
    };
}

puncts! {
    Ellipsis = "...", ShlEq = "<<=", ShrEq = ">>=",
    Arrow = "->", PlusPlus = "++", MinusMinus = "--", Shl = "<<", Shr = ">>", Le = "<=",
    Ge = ">=", EqEq = "==", Ne = "!=", AndAnd = "&&", OrOr = "||", XorXor = "^^",
    PlusEq = "+=", MinusEq = "-=", StarEq = "*=", SlashEq = "/=", PercentEq = "%=",
    AmpEq = "&=", CaretEq = "^=", PipeEq = "|=",
    LParen = "(", RParen = ")", LBracket = "[", RBracket = "]", LBrace = "{", RBrace = "}",
    Semi = ";", Comma = ",", Dot = ".", Question = "?", Colon = ":", Plus = "+", Minus = "-",
    Star = "*", Slash = "/", Percent = "%", Amp = "&", Pipe = "|", Caret = "^", Tilde = "~",
    Bang = "!", Lt = "<", Gt = ">", Assign = "=",
    // A `/` that closes a predicate: the next non-blank character is `;`, `{`, `/` or the end.
    EndPredicate = "/",
}

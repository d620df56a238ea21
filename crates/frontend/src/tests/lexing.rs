//! Literals, escapes, suffixes, comments and lexical corner cases.

use super::{error, expr};
use crate::ast::ExprKind;
use crate::lexer::{Lexer, Mode};
use crate::token::{Punct, TokenKind};

fn int(text: &str) -> ExprKind {
    let body = super::clauses(&format!("BEGIN {{ {text}; }}"))
        .remove(0)
        .body
        .unwrap();
    match &body[0] {
        crate::ast::Stmt::Expr(e, _) => e.kind.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn integer_constants() {
    let check = |text: &str, value: u64, unsigned: bool, longs: u8, decimal: bool| {
        assert_eq!(
            int(text),
            ExprKind::Int {
                value,
                unsigned,
                longs,
                decimal
            },
            "{text}"
        );
    };
    check("0", 0, false, 0, false);
    check("42", 42, false, 0, true);
    check("017", 15, false, 0, false);
    check("0x1F", 31, false, 0, false);
    check("0XffU", 255, true, 0, false);
    check("10l", 10, false, 1, true);
    check("10LL", 10, false, 2, true);
    check("10ull", 10, true, 2, true);
    check("10LLU", 10, true, 2, true);
    check("10lu", 10, true, 1, true);
    check("18446744073709551615", u64::MAX, false, 0, true);
    check("0xffffffffffffffff", u64::MAX, false, 0, false);
    check("'ab'", 0x6162, false, 0, true);
}

#[test]
fn integer_errors() {
    assert_eq!(
        error("BEGIN { x = 18446744073709551616; }"),
        (
            "D_INT_OFLOW",
            "constant 18446744073709551616 results in integer overflow".into(),
            1,
            13
        )
    );
    assert_eq!(
        error("BEGIN { x = 0x10000000000000000; }").1,
        "constant 0x10000000000000000 results in integer overflow"
    );
    assert_eq!(
        error("BEGIN { x = 09; }"),
        (
            "D_INT_DIGIT",
            "constant 09 contains invalid digit 9".into(),
            1,
            13
        )
    );
    assert_eq!(
        error("BEGIN { x = 1.5; }"),
        (
            "D_SYNTAX",
            "floating-point constants are not permitted".into(),
            1,
            13
        )
    );
    assert_eq!(error("BEGIN { x = 12abc; }").1, "syntax error near \"abc\"");
}

#[test]
fn character_constants_and_escapes() {
    for (text, byte) in [
        ("'a'", b'a'),
        ("'\\n'", b'\n'),
        ("'\\t'", b'\t'),
        ("'\\\\'", b'\\'),
        ("'\\\"'", b'"'),
        ("'\\0'", 0),
        ("'\\101'", b'A'),
        ("'\\x41'", b'A'),
        ("'\\a'", 7),
        ("'\\b'", 8),
        ("'\\f'", 12),
        ("'\\r'", b'\r'),
        ("'\\v'", 11),
    ] {
        assert_eq!(int(text), ExprKind::Char(byte), "{text}");
    }
    // DTrace keeps the backslash of `\'` and `\?` (Oracle's tst.charconstants).
    for (text, value) in [("'\\''", 0x5c27), ("'\\?'", 0x5c3f)] {
        assert!(
            matches!(int(text), ExprKind::Int { value: v, .. } if v == value),
            "{text}"
        );
    }
    assert_eq!(
        error("BEGIN { x = ''; }"),
        ("D_CHR_NULL", "empty character constant".into(), 1, 13)
    );
    assert_eq!(error("BEGIN { x = 'abcdefghi'; }").0, "D_CHR_OFLOW");
    assert_eq!(
        error("BEGIN { x = 'a\n'; }"),
        (
            "D_CHR_NL",
            "newline encountered in character constant".into(),
            2,
            1
        )
    );
}

#[test]
fn string_literals() {
    assert_eq!(
        int("\"a\\tb\\n\\\"q\\\"\\\\\\x41\\101\\0\""),
        ExprKind::Str(b"a\tb\n\"q\"\\AA\0".to_vec())
    );
    assert_eq!(int("\"\\q\""), ExprKind::Str(b"\\q".to_vec()));
    assert_eq!(
        error("BEGIN { x = \"abc\n\"; }"),
        (
            "D_STR_NL",
            "newline encountered in string literal".into(),
            2,
            1
        )
    );
    assert_eq!(
        error("BEGIN { x = \"abc"),
        ("D_SYNTAX", "syntax error near \"\"\"".into(), 1, 13)
    );
    // Adjacent literals do not concatenate in D.
    assert_eq!(
        error("BEGIN { x = \"a\" \"b\"; }").1,
        "syntax error near \"\"b\"\""
    );
}

#[test]
fn comments() {
    assert_eq!(expr("a /* c */ + // d\n b"), "(a + b)");
    assert_eq!(
        error("BEGIN { /* x "),
        (
            "",
            "end-of-file encountered before matching */".into(),
            1,
            14
        )
    );
    assert_eq!(
        error("BEGIN { /* x /* y */ }"),
        ("D_SYNTAX", "/* encountered inside a comment".into(), 1, 14)
    );
}

#[test]
fn bad_characters() {
    assert_eq!(
        error("BEGIN { x = a # b; }"),
        ("D_SYNTAX", "syntax error near \"#\"".into(), 1, 15)
    );
    assert_eq!(error("BEGIN { x = $; }").1, "syntax error near \"$\"");
    assert_eq!(error("BEGIN { x = é; }").1, "syntax error near \"é\"");
    assert_eq!(error("BEGIN ; ").1, "syntax error near \";\"");
}

#[test]
fn operators_lex_with_maximal_munch() {
    let mut lexer = Lexer::new("a->b ... <<= >>= ^^ && || ++ -- != == <= >= << >> ^= |=", 0);
    let mut kinds = Vec::new();
    loop {
        let tok = lexer
            .next_token(Mode::Expr, &|_| false, &mut Vec::new())
            .unwrap();
        if tok.kind == TokenKind::Eof {
            break;
        }
        kinds.push(tok.kind);
    }
    use Punct::*;
    let expected: Vec<TokenKind> = [
        Arrow, Ellipsis, ShlEq, ShrEq, XorXor, AndAnd, OrOr, PlusPlus, MinusMinus, Ne, EqEq, Le,
        Ge, Shl, Shr, CaretEq, PipeEq,
    ]
    .into_iter()
    .map(TokenKind::Punct)
    .collect();
    assert_eq!(kinds[0], TokenKind::Ident("a".into()));
    assert_eq!(kinds[2], TokenKind::Ident("b".into()));
    assert_eq!(kinds[1], expected[0]);
    assert_eq!(kinds[3..], expected[1..]);
}

#[test]
fn keywords_are_names_after_member_operators() {
    assert_eq!(expr("p->string + p.self"), "(p->string + p.self)");
}

#[test]
fn module_paths_in_descriptions() {
    for text in [
        "myapp*:/usr/bin/myapp::tick {}",
        "myapp*:./bin/myapp::tick {}",
        "myapp*:../myapp:main:tick {}",
    ] {
        let c = super::clauses(text);
        let expected = text.trim_end_matches(" {}");
        assert_eq!(c[0].probes[0].text, expected, "{text}");
    }
}

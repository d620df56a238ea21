//! Syntax errors: messages, tags and positions.

use super::{error, program};
use crate::ast::{Item, Stmt};

#[test]
fn syntax_error_messages() {
    assert_eq!(
        error("BEGIN { x = ; }"),
        ("D_SYNTAX", "syntax error near \";\"".into(), 1, 13)
    );
    assert_eq!(
        error("BEGIN { x = 1"),
        ("D_SYNTAX", "syntax error near end of input".into(), 1, 14)
    );
    assert_eq!(error("BEGIN { x = a + ; }").1, "syntax error near \";\"");
    assert_eq!(error("{ }").1, "syntax error near \"{\"");
    assert_eq!(error("BEGIN { a + b = 1; }").1, "syntax error near \"=\"");
    assert_eq!(error("BEGIN { a[] = 1; }").1, "syntax error near \"]\"");
    assert_eq!(error("BEGIN { self = 1; }").1, "syntax error near \"=\"");
    assert_eq!(error("counter x;").1, "syntax error near \"counter\"");
}

#[test]
fn balance_errors() {
    assert_eq!(
        error("BEGIN { x = 1); }"),
        ("D_SYNTAX", "extra ) in input stream".into(), 1, 14)
    );
    assert_eq!(error("BEGIN { x = a]; }").1, "extra ] in input stream");
    assert_eq!(error("BEGIN { } }").1, "syntax error near \"}\"");
}

#[test]
fn call_of_non_identifier_is_left_to_the_typing_pass() {
    assert_eq!(super::expr("a.b(1)"), "(a.b)(1)");
    assert_eq!(super::expr("(x + 1)(y, 2)"), "((x + 1))(y, 2)");
}

fn too_deep(text: &str) {
    assert_eq!(error(text).1, "program is nested too deeply");
}

#[test]
fn nested_parentheses_are_limited() {
    too_deep(&format!(
        "BEGIN {{ x = {}1{}; }}",
        "(".repeat(5000),
        ")".repeat(5000)
    ));
    too_deep(&format!(
        "BEGIN {{ x = {}1{}; }}",
        "a[".repeat(5000),
        "]".repeat(5000)
    ));
    too_deep(&format!(
        "BEGIN {{ x = {}1{}; }}",
        "f(".repeat(5000),
        ")".repeat(5000)
    ));
}

#[test]
fn unary_chains_are_limited() {
    too_deep(&format!("BEGIN {{ x = {}1; }}", "-".repeat(5000)));
    too_deep(&format!("BEGIN {{ x = {}1; }}", "(int)".repeat(5000)));
    too_deep(&format!("BEGIN {{ x = {}1; }}", "sizeof ".repeat(5000)));
    too_deep(&format!("BEGIN {{ x = {}1; }}", "a = ".repeat(5000)));
    too_deep(&format!("BEGIN {{ x = {}1; }}", "a ? b : ".repeat(5000)));
}

#[test]
fn nested_statements_are_limited() {
    too_deep(&format!("BEGIN {{ {} x = 1; }}", "if (a) ".repeat(5000)));
    too_deep(&format!("BEGIN {{ {} }}", "{".repeat(5000)));
}

#[test]
fn nested_declarators_are_limited() {
    too_deep(&format!("int {}x;", "(*".repeat(3000) + &")".repeat(3000)));
    too_deep(&format!("int x[{}];", "int (*)(".repeat(3000)));
}

#[test]
fn a_second_struct_body_is_refused_where_it_opens() {
    // As DTrace: before the members are read (here they would not parse).
    assert_eq!(
        error("struct s { int a; };\ntranslator struct s\n{\n\tint *x\n}\n"),
        ("D_DECL_TYPERED", "type redeclared: struct s".into(), 3, 1)
    );
    assert_eq!(
        error("union u { int a; }; union u { int b; };").0,
        "D_DECL_TYPERED"
    );
}

#[test]
fn a_control_line_must_end_before_the_input() {
    assert_eq!(
        error("BEGIN { }\n#pragma"),
        (
            "",
            "end-of-file encountered before end of control line".into(),
            2,
            1
        )
    );
}

#[test]
fn macro_and_aggregation_errors() {
    assert_eq!(error("BEGIN { x = $99999999999; }").0, "D_MACRO_UNDEF");
}

#[test]
fn nested_structs_are_limited() {
    let deep = format!(
        "struct s {{ {} int x; {} }};",
        "struct { ".repeat(3000),
        "} y; ".repeat(3000)
    );
    assert_eq!(error(&deep).1, "program is nested too deeply");
}

/// Run `f` on a thread with room to drop (recursively) the deep trees these tests build.
fn with_large_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .expect("start a test thread")
        .join()
        .expect("test thread");
}

#[test]
fn operator_chains_are_limited_by_height() {
    use crate::MAX_EXPR_HEIGHT;
    with_large_stack(|| {
        let terms = |op: &str, n: usize| vec!["1"; n].join(op);
        // The deepest accepted chain has MAX_EXPR_HEIGHT levels (its leaves count one).
        for op in ["+", "*", "&&", "=="] {
            let ok = format!("BEGIN {{ x = {}; }}", terms(op, MAX_EXPR_HEIGHT));
            let e = program(&ok);
            let Item::Clause(c) = &e.items[0] else {
                panic!("not a clause")
            };
            let Some([Stmt::Expr(assign, _)]) = c.body.as_deref() else {
                panic!("not one statement")
            };
            assert_eq!(assign.height(), MAX_EXPR_HEIGHT + 1);
            let deep = format!("BEGIN {{ x = {}; }}", terms(op, MAX_EXPR_HEIGHT + 1));
            let (tag, message, _, _) = error(&deep);
            assert_eq!(tag, "D_SYNTAX");
            assert_eq!(
                message,
                format!("expression too deeply nested (more than {MAX_EXPR_HEIGHT} levels)")
            );
        }
        let commas = format!("BEGIN {{ x = ({}); }}", terms(",", MAX_EXPR_HEIGHT + 1));
        assert!(error(&commas).1.starts_with("expression too deeply nested"));
        let members = format!("BEGIN {{ x = p{}; }}", "->next".repeat(MAX_EXPR_HEIGHT));
        assert!(error(&members)
            .1
            .starts_with("expression too deeply nested"));
        let indexes = format!("BEGIN {{ x = a{}; }}", "[0]".repeat(MAX_EXPR_HEIGHT - 1));
        program(&indexes);
        // Heights add up across nesting: a parenthesised chain deepens the chain around it.
        let half = terms("+", MAX_EXPR_HEIGHT / 2);
        let nested = format!("BEGIN {{ x = ({half}) + {half}; }}");
        program(&nested);
        let nested = format!("BEGIN {{ x = ({half}) + {half} + 1; }}");
        assert!(error(&nested).1.starts_with("expression too deeply nested"));
        let (_, _, line, col) = error(&format!(
            "BEGIN {{\n x = {}; }}",
            terms("-", MAX_EXPR_HEIGHT + 1)
        ));
        // At the operator that went too deep: the chain's MAX_EXPR_HEIGHT-th.
        assert_eq!((line, col), (2, 5 + 2 * MAX_EXPR_HEIGHT));
    });
}

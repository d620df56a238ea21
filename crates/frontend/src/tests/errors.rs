//! Syntax errors: messages, tags and positions.

use super::error;

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
fn call_of_non_identifier() {
    assert_eq!(error("BEGIN { a.b(1); }").0, "D_FUNC_IDENT");
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

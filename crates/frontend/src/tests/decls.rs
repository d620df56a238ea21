//! Declarations: variables, associative arrays, typedefs, structs, enums, inlines,
//! translators.

use super::{decl, error, expr, program, type_name};
use crate::ast::Item;

fn decls(text: &str) -> Vec<String> {
    program(text)
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Decl(d) => Some(decl(d)),
            _ => None,
        })
        .collect()
}

#[test]
fn variable_declarations() {
    assert_eq!(
        decls("int x; self int y, *z; this string s; uint64_t t; int a[string, int];"),
        [
            "int x;",
            "self int y, z*;",
            "this string s;",
            "uint64_t t;",
            "int a[string, int];"
        ]
    );
    assert_eq!(
        decls("unsigned long long int a; long double b; signed char c; short d; unsigned e; long f; const volatile int g; int*p; char *argv[4]; char (*q)[4]; uint64_t m[pid_t];"),
        [
            "unsigned long long a;",
            "long double b;",
            "signed char c;",
            "short d;",
            "unsigned int e;",
            "long f;",
            "const volatile int g;",
            "int p*;",
            "char argv*[4];",
            "char q[4]*;",
            "uint64_t m[pid_t];"
        ]
    );
    assert_eq!(
        decls("extern int errno_x; int (*fp)(int, char *);"),
        ["extern int errno_x;", "int fp(int, char *)*;"]
    );
}

#[test]
fn typedefs_are_tracked() {
    let p = program("typedef unsigned long my_t; my_t x; BEGIN { y = (my_t)1; }");
    assert_eq!(p.items.len(), 3);
    assert_eq!(
        decls("typedef struct foo { int a; } foo_t; foo_t *f;"),
        ["typedef struct foo {int a;} foo_t;", "foo_t f*;"]
    );
}

#[test]
fn structs_unions_enums() {
    assert_eq!(
        decls("struct s { int a : 3, b : 5; unsigned : 0; char *name; struct s *next; }; union u { int i; char c[4]; } uu; enum e { A, B = 2, C = B + 1 }; enum e ev;"),
        [
            "struct s {int a:3, b:5; unsigned int :0; char name*; struct s next*;} ;",
            "union u {int i; char c[4];} uu;",
            "enum e {A, B=2, C=(B + 1)} ;",
            "enum e ev;"
        ]
    );
    assert_eq!(error("struct s { };").1, "syntax error near \"}\"");
}

#[test]
fn a_typedef_in_a_clause_is_a_syntax_error() {
    let (tag, message, ..) = error("BEGIN { typedef int t; }");
    assert_eq!(
        (tag, message),
        ("D_SYNTAX", "syntax error near \"typedef\"".into())
    );
}

#[test]
fn type_combination_errors() {
    assert_eq!(error("int char x;").0, "D_DECL_COMBO");
    assert_eq!(error("long char x;").0, "D_DECL_CHARATTR");
    assert_eq!(error("unsigned void x;").0, "D_DECL_VOIDATTR");
    assert_eq!(error("unsigned string x;").0, "D_DECL_SIGNINT");
    assert_eq!(error("long long long x;").0, "D_DECL_COMBO");
    assert_eq!(error("short short x;").0, "D_DECL_COMBO");
    let unknown = |text| {
        let (tag, message, ..) = error(text);
        (tag, message)
    };
    assert_eq!(
        unknown("long short x;"),
        (
            "D_UNKNOWN",
            "failed to resolve type short long : Unknown type name".into()
        )
    );
    assert_eq!(
        unknown("unsigned short long int x;"),
        (
            "D_UNKNOWN",
            "failed to resolve type unsigned short long int : Unknown type name".into()
        )
    );
    assert_eq!(error("unsigned struct s { int i; };").0, "D_DECL_SIGNINT");
    assert_eq!(
        error("int a(void v);").1,
        "void parameter may not have a name: v"
    );
    assert_eq!(error("int a(int, void);").1, "void must be sole parameter");
    assert_eq!(error("int a(static int);").0, "D_DECL_PARMCLASS");
    assert_eq!(
        error("int a(int a[int]);").1,
        "function prototype may not use parameter of type dynamic variable: a, parameter #1"
    );
    assert_eq!(
        error("int a[...];").1,
        "array prototype may not use a variable-length argument list"
    );
    assert_eq!(
        error("long struct s\n{ int i; };"),
        (
            "D_DECL_LONGINT",
            "invalid type declaration: long and long long may only be used with integer or floating-point type".into(),
            2,
            1
        )
    );
    assert_eq!(
        error("self this int x;"),
        (
            "D_DECL_CLASS",
            "only one storage class allowed in a declaration".into(),
            1,
            6
        )
    );
    assert_eq!(error("int x = 5;").1, "syntax error near \"=\"");
}

#[test]
fn inline_and_translator() {
    let p = program("inline int MAX = 10 * 2;\ninline string name = \"x\";\ntranslator struct psinfo < struct task_struct *T > { pr_pid = T->pid; pr_ppid = T->real_parent->pid; };");
    let Item::Inline(i) = &p.items[0] else {
        panic!()
    };
    assert_eq!((i.name.as_str(), type_name(&i.ty)), ("MAX", "int".into()));
    assert_eq!(super::render(&i.value), "(10 * 2)");
    let Item::Translator(t) = &p.items[2] else {
        panic!()
    };
    assert_eq!(type_name(&t.output), "struct psinfo");
    assert_eq!(type_name(&t.input), "struct task_struct *");
    assert_eq!(t.input_name, "T");
    assert_eq!(t.members.len(), 2);
}

#[test]
fn declarations_in_bodies_and_casts() {
    // D's grammar has no declarations in a clause body.
    for (body, near) in [
        ("this int x;", "int"),
        ("uint64_t y;", "uint64_t y; }"),
        ("int i = 0;", "int"),
    ] {
        let (tag, message, _, _) = error(&format!("BEGIN {{ {body} }}"));
        assert_eq!(
            (tag, message),
            ("D_SYNTAX", format!("syntax error near \"{near}\""))
        );
    }
    assert_eq!(expr("(unsigned)x"), "((unsigned int) x)");
}

#[test]
fn outer_scope_type_words_versus_probes() {
    // `int*` begins a declaration, a word that is not a type is a probe description.
    assert_eq!(decls("int*x;"), ["int x*;"]);
    assert_eq!(decls("size_t*x;"), ["size_t x*;"]);
    let p = program("foo_t*:::entry { }");
    assert!(matches!(p.items[0], Item::Clause(_)));
}

//! Expression precedence, associativity and forms.

use super::expr;

#[test]
fn binary_precedence_table() {
    // Each operator against the next tighter level, both ways round.
    let levels: &[&[&str]] = &[
        &["||"],
        &["^^"],
        &["&&"],
        &["|"],
        &["^"],
        &["&"],
        &["==", "!="],
        &["<", "<=", ">", ">="],
        &["<<", ">>"],
        &["+", "-"],
        &["*", "/", "%"],
    ];
    for pair in levels.windows(2) {
        for lo in pair[0] {
            for hi in pair[1] {
                assert_eq!(
                    expr(&format!("a {lo} b {hi} c")),
                    format!("(a {lo} (b {hi} c))")
                );
                assert_eq!(
                    expr(&format!("a {hi} b {lo} c")),
                    format!("((a {hi} b) {lo} c)")
                );
            }
        }
    }
}

#[test]
fn binary_operators_are_left_associative() {
    for level in [
        &["||"][..],
        &["^^"],
        &["&&"],
        &["|"],
        &["^"],
        &["&"],
        &["==", "!="],
        &["<", "<=", ">", ">="],
        &["<<", ">>"],
        &["+", "-"],
        &["*", "/", "%"],
    ] {
        for a in level {
            for b in level {
                assert_eq!(
                    expr(&format!("x {a} y {b} z")),
                    format!("((x {a} y) {b} z)")
                );
            }
        }
    }
}

#[test]
fn assignment_is_right_associative_and_lowest_but_comma() {
    for op in [
        "=", "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=", "<<=", ">>=",
    ] {
        assert_eq!(
            expr(&format!("a {op} b {op} c || d")),
            format!("(a {op} (b {op} (c || d)))")
        );
    }
    assert_eq!(expr("a = 1, b = 2"), "((a = 1), (b = 2))");
    assert_eq!(expr("a, b, c"), "((a, b), c)");
}

#[test]
fn ternary() {
    assert_eq!(expr("a || b ? c : d"), "((a || b) ? c : d)");
    assert_eq!(expr("a ? b : c ? d : e"), "(a ? b : (c ? d : e))");
    assert_eq!(expr("a ? b, c : d"), "(a ? (b, c) : d)");
    assert_eq!(expr("x = a ? b : c"), "(x = (a ? b : c))");
}

#[test]
fn unary_and_postfix() {
    assert_eq!(expr("-a * b"), "((-a) * b)");
    assert_eq!(expr("!a && ~b"), "((!a) && (~b))");
    assert_eq!(expr("*p++"), "(*(p++))");
    assert_eq!(expr("&a->b"), "(&a->b)");
    assert_eq!(expr("++a--"), "(++(a--))");
    assert_eq!(expr("--a"), "(--a)");
    assert_eq!(expr("- -a"), "(-(-a))");
    assert_eq!(expr("+a"), "(+a)");
}

#[test]
fn postfix_chains() {
    assert_eq!(expr("a[1, 2].b->c"), "a[1, 2].b->c");
    assert_eq!(expr("x->string"), "x->string");
    assert_eq!(expr("f()"), "f()");
    assert_eq!(
        expr("printf(\"%d\\n\", a + 1, b)"),
        "printf(\"%d\\n\", (a + 1), b)"
    );
    assert_eq!(expr("@a[k1, k2] = count()"), "(@a[k1, k2] = count())");
    assert_eq!(expr("@ = quantize(x)"), "(@ = quantize(x))");
    assert_eq!(expr("self->x = this->y"), "(self->x = this->y)");
    assert_eq!(expr("self->x[1]++"), "(self->x[1]++)");
}

#[test]
fn casts_versus_parentheses() {
    assert_eq!(expr("(uint64_t)x"), "((uint64_t) x)");
    assert_eq!(expr("(x) - 1"), "(x - 1)");
    assert_eq!(expr("(int)-1"), "((int) (-1))");
    assert_eq!(expr("(char *)arg0"), "((char *) arg0)");
    assert_eq!(
        expr("(unsigned long long)a * 2"),
        "(((unsigned long long) a) * 2)"
    );
    assert_eq!(
        expr("(struct task_struct *)curthread"),
        "((struct task_struct *) curthread)"
    );
    assert_eq!(expr("(string)(uintptr_t)p"), "((string) ((uintptr_t) p))");
    assert_eq!(expr("(long int)x"), "((long) x)");
    // A type name used as a variable stays a variable.
    assert_eq!(expr("(pid_t = 3)"), "(pid_t = 3)");
    assert_eq!(expr("(int (*)(int))f"), "((int (int)*) f)");
    assert_eq!(expr("(char *[4])x"), "((char *[4]) x)");
}

#[test]
fn sizeof_offsetof_stringof_xlate() {
    assert_eq!(expr("sizeof(int)"), "sizeof(int)");
    assert_eq!(expr("sizeof (struct foo)"), "sizeof(struct foo)");
    assert_eq!(expr("sizeof x + 1"), "(sizeof(x) + 1)");
    assert_eq!(expr("sizeof(x)"), "sizeof(x)");
    assert_eq!(expr("sizeof(uint64_t) * 2"), "(sizeof(uint64_t) * 2)");
    assert_eq!(
        expr("offsetof(struct foo, bar)"),
        "offsetof(struct foo, bar)"
    );
    assert_eq!(expr("stringof(x) == \"a\""), "(stringof(x) == \"a\")");
    assert_eq!(expr("stringof x"), "stringof(x)");
    assert_eq!(
        expr("xlate<struct psinfo *>(curthread)->pr_pid"),
        "xlate<struct psinfo *>(curthread)->pr_pid"
    );
}

#[test]
fn primaries() {
    assert_eq!(expr("$1 + $$2 + $target"), "(($1 + $$2) + $target)");
    assert_eq!(expr("`max_pfn"), "`max_pfn");
    assert_eq!(expr("vmlinux`jiffies"), "vmlinux`jiffies");
    // A user object's scope keeps its dots (`a.out`, `libc.so.6`); a member is no scope.
    assert_eq!(
        expr("sizeof (struct a.out`point) + sizeof (union libc.so.6`u)"),
        "(sizeof(struct a.out`point) + sizeof(union libc.so.6`u))"
    );
    assert_eq!(expr("a.b + a.b.c"), "(a.b + a.b.c)");
    // After `struct`, a path or a file name holding `-` or `+` scopes a tag too.
    assert_eq!(
        expr("sizeof (struct /opt/app/prog`rec) / 2 - sizeof (enum libstdc++.so.6`e)"),
        "((sizeof(struct /opt/app/prog`rec) / 2) - sizeof(enum libstdc++.so.6`e))"
    );
    assert_eq!(expr("a/b-c`d"), "((a / b) - c`d)");
    assert_eq!(expr("'a'"), "'a'");
    assert_eq!(expr("\"x\""), "\"x\"");
    assert_eq!(expr("0x10UL"), "16ul");
}

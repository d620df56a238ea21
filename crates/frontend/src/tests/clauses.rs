//! Probe descriptions, predicates, clause bodies, statements and pragmas.

use super::{clauses, error, error_as, expr, parse_as, program, render};
use crate::ast::{Item, Stmt};
use crate::Origin;

fn descs(text: &str) -> Vec<String> {
    clauses(text)
        .iter()
        .flat_map(|c| c.probes.iter().map(|p| p.text.clone()))
        .collect()
}

#[test]
fn probe_description_shapes() {
    for d in [
        "syscall::read*:entry",
        "profile-997",
        "tick-5s",
        "pid$target:a.out:main:entry",
        ":::BEGIN",
        "BEGIN",
        "END",
        "ERROR",
        "fbt:vmlinux:vfs_*:entry",
        "syscall::[rw]*:entry",
        "a.b:c-d:e?f:*",
        "syscall:::",
        "*:::",
        "foo",
        "pid$1::malloc:entry",
        "sched:::on-cpu",
    ] {
        assert_eq!(descs(&format!("{d} {{ }}")), [d], "{d}");
    }
}

#[test]
fn several_descriptions_across_lines() {
    assert_eq!(
        descs("syscall::read:entry,\n  syscall::write:entry ,fbt::vfs_read:return\n{ }"),
        [
            "syscall::read:entry",
            "syscall::write:entry",
            "fbt::vfs_read:return"
        ]
    );
}

#[test]
fn clauses_without_bodies() {
    let c = clauses("BEGIN");
    assert_eq!(c.len(), 1);
    assert!(c[0].body.is_none() && c[0].predicate.is_none());
    assert_eq!(descs("BEGIN, END"), ["BEGIN", "END"]);
    assert_eq!(
        error_as(Origin::Script("x.d".into()), "BEGIN"),
        (
            "D_SYNTAX",
            "expected predicate and/or actions following probe description".into(),
            1,
            1
        )
    );
}

#[test]
fn predicates_with_division() {
    let c = clauses("syscall::read:entry /x / 2 > 1/ { trace(x); }");
    assert_eq!(render(c[0].predicate.as_ref().unwrap()), "((x / 2) > 1)");
    let c = clauses("BEGIN /a/b/ { }");
    assert_eq!(render(c[0].predicate.as_ref().unwrap()), "(a / b)");
    let c = clauses("BEGIN\n/pid == $target/\n/* comment */\n{ }");
    assert_eq!(render(c[0].predicate.as_ref().unwrap()), "(pid == $target)");
    let c = clauses("BEGIN /execname == \"ls\"/{}");
    assert!(c[0].body.as_ref().unwrap().is_empty());
    assert_eq!(
        error("BEGIN /x/;"),
        (
            "D_SYNTAX",
            "expected actions { } following probe description and predicate".into(),
            1,
            8
        )
    );
    assert_eq!(
        error("BEGIN /(x / { }").1,
        "closing ) expected in predicate before /"
    );
    assert_eq!(
        error("BEGIN /a[x / { }").1,
        "closing ] expected in predicate before /"
    );
}

#[test]
fn statements_and_semicolons() {
    let c = clauses("BEGIN { a = 1; ; b = 2 }");
    assert_eq!(c[0].body.as_ref().unwrap().len(), 2);
    let c = clauses("BEGIN { } END { exit(0) }");
    assert_eq!(c.len(), 2);
    // At an identifier, DTrace's message shows the rest of the line (its lexer peeked
    // past the word; offsetof/err.D_SYNTAX.badmemb, typedef/err.D_SYNTAX.BadExistingTypedef).
    assert_eq!(
        error("BEGIN { a = 1 b = 2 }").1,
        "syntax error near \"b = 2 }\""
    );
}

#[test]
fn if_else() {
    let c =
        clauses("BEGIN { if (x > 1) { a = 1; b = 2; } else if (y) c = 3; else { d = 4 } e = 5; }");
    let body = c[0].body.as_ref().unwrap();
    assert_eq!(body.len(), 2);
    let Stmt::If {
        cond,
        then,
        otherwise,
        ..
    } = &body[0]
    else {
        panic!("{body:?}")
    };
    assert_eq!(render(cond), "(x > 1)");
    assert_eq!(then.len(), 2);
    let otherwise = otherwise.as_ref().unwrap();
    assert!(matches!(&otherwise[..], [Stmt::If { otherwise: Some(o), .. }] if o.len() == 1));
    assert_eq!(error("BEGIN { if (x) a = 1 }").1, "syntax error near \"}\"");
    assert_eq!(
        error("BEGIN { else a = 1; }").1,
        "syntax error near \"else\""
    );
}

#[test]
fn crlf_line_ends_are_blanks() {
    let text = "#!/usr/sbin/dtrace -s\r\n#pragma D option quiet\r\n#pragma D option bufsize=16m\r\nBEGIN\r\n/1/\r\n{\r\n\tx = 1;\r\n}\r\n";
    let p = parse_as(Origin::Script("crlf.d".into()), text).expect("a CRLF script parses");
    let words: Vec<Vec<String>> = p
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Pragma(p) => Some(p.words.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        words,
        [
            vec!["D", "option", "quiet"],
            vec!["D", "option", "bufsize=16m"]
        ]
    );
    assert!(matches!(&p.items[2], Item::Clause(c) if c.probes[0].text == "BEGIN"));
}

#[test]
fn pragmas() {
    let p = program("#pragma D option quiet\n#pragma D option bufsize=16m\nBEGIN { }\n  #pragma ident \"x\"\n#pragma D depends_on module vmlinux\n");
    let words: Vec<Vec<String>> = p
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Pragma(p) => Some(p.words.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        words,
        [
            vec!["D", "option", "quiet"],
            vec!["D", "option", "bufsize=16m"],
            vec!["D", "depends_on", "module", "vmlinux"],
        ]
    );
    assert!(matches!(p.items[2], Item::Clause(_)));
    // Inside a clause, and cpp line markers.
    let p = program("BEGIN {\n#pragma D option flowindent\n x = 1;\n}\n# 12 \"foo.d\"\n#line 3\n#!/usr/sbin/dtrace -s\nEND");
    assert_eq!(p.items.len(), 3);
    assert_eq!(error("#pragma D option\nBEGIN").0, "D_PRAGMA_MALFORM");
    assert_eq!(
        error("#pragma D option a b\n").1,
        "superfluous arguments specified for #pragma option"
    );
    assert_eq!(
        error("#pragma D depends_on bogus x\n"),
        (
            "D_PRAGMA_INVAL",
            "invalid class bogus specified by #pragma depends_on".into(),
            1,
            1
        )
    );
    assert_eq!(
        error("#pragma D frob x\n"),
        ("D_PRAGMA_INVAL", "invalid D pragma: frob".into(), 1, 1)
    );
    assert_eq!(
        error("\n#include <x.h>\n"),
        (
            "D_PRAGCTL_INVAL",
            "invalid control directive: #include".into(),
            2,
            1
        )
    );
    assert_eq!(
        error("#error no way\n"),
        ("D_PRAGERR", "#error: no way ".into(), 1, 1)
    );
    // A `#` not at the start of a line is not a control line.
    assert_eq!(error("BEGIN { x = 1; # y\n }").1, "syntax error near \"#\"");
}

#[test]
fn spans_and_positions() {
    let c = clauses("BEGIN\n{\n  x = 1;\n}");
    assert_eq!((c[0].span.start, c[0].span.end), (0, 18));
    let e = error_as(Origin::Script("t.d".into()), "BEGIN\n{\n  x = = 1;\n}");
    assert_eq!(e, ("D_SYNTAX", "syntax error near \"=\"".into(), 3, 7));
    assert!(parse_as(Origin::Description, "").unwrap().items.is_empty());
}

#[test]
fn expression_statement_forms() {
    assert_eq!(
        expr("@counts[execname] = count()"),
        "(@counts[execname] = count())"
    );
    assert_eq!(
        expr("printf(\"%s\", stringof(args[0]->name))"),
        "printf(\"%s\", stringof(args[0]->name))"
    );
}

#[test]
fn realistic_script() {
    let text = r#"#!/usr/sbin/dtrace -s
#pragma D option quiet

/* Count reads by process. */
inline int THRESHOLD = 100;

syscall::read:entry,
syscall::pread64:entry
/pid != $pid && execname != "dtrace"/
{
	self->ts = timestamp;
	self->fd[arg0] = 1;
}

syscall::read:return
/self->ts/
{
	this->delta = (timestamp - self->ts) / 1000;
	@lat[execname] = quantize(this->delta);
	@bytes[probefunc, pid] = sum(arg0 > 0 ? arg0 : 0);
	if (this->delta > THRESHOLD) {
		printf("%s %d\n", execname, (int)this->delta);
	} else
		@slow = count();
	self->ts = 0;
}

profile:::tick-1sec
{
	printa("%-16s %@d\n", @bytes);
	trunc(@bytes, 10);
	exit(0);
}
"#;
    let p = parse_as(Origin::Script("t.d".into()), text).unwrap();
    assert_eq!(p.items.len(), 5);
}

//! The preprocessor on scripts: conditionals, macros, includes and GNU cpp's errors.

use super::*;

fn run(text: &str, config: &Config) -> Result<Output, Failure> {
    preprocess("/dev/stdin", Path::new("/nonexistent"), text, config)
}

fn text(s: &str) -> String {
    run(s, &Config::default()).expect("preprocesses").text
}

fn errors(s: &str) -> String {
    run(s, &Config::default()).expect_err("fails").messages
}

#[test]
fn lines_stay_where_they_were() {
    let out =
        text("#define V 5\n#if !defined (FLAG)\nx = V;\n#else\ny;\n#endif\nz /* a\nb */ w\nend\n");
    assert_eq!(out, "\n\nx = 5;\n\n\n\nz w\n\nend\n");
}

#[test]
fn conditionals_nest_and_choose() {
    let s = "#define A 2\n#if A > 1\n#ifdef B\nb\n#elif A == 2\na2\n#else\nno\n#endif\n#else\nno\n#endif\n";
    assert_eq!(text(s).split_whitespace().collect::<Vec<_>>(), ["a2"]);
    assert_eq!(
        text("#ifndef __SUNW_D\nno\n#endif\n__SUNW_D_64 __linux").trim(),
        "1 1"
    );
}

#[test]
fn pragmas_and_function_macros() {
    let s = "#pragma D option quiet\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\nMAX(1,\n 2)\n";
    assert_eq!(
        text(s),
        "#pragma D option quiet\n\n((1) > (2) ? (1) : (2))\n"
    );
}

#[test]
fn variable_arguments() {
    let s =
        "#define G(a, rest...) f(a, rest)\n#define V(...) g(__VA_ARGS__)\nG(1, 2, 3) V() V(x)\n";
    assert_eq!(text(s).trim(), "f(1, 2, 3) g() g(x)");
}

#[test]
fn command_line_macros() {
    let config = Config {
        macros: vec![
            (true, "N=3".into()),
            (true, "F".into()),
            (false, "__linux".into()),
        ],
        ..Config::default()
    };
    let out = run("N F __linux\n", &config).expect("preprocesses").text;
    assert_eq!(out.trim(), "3 1 __linux");
}

#[test]
fn gnu_errors() {
    assert_eq!(
        errors("\n#if !defined (FLAG)\n#define VALUE 5\n"),
        "/dev/stdin:2: error: unterminated #if\n"
    );
    assert_eq!(
        errors("#if 0\n#else\n"),
        "/dev/stdin:1: error: unterminated #else\n"
    );
    assert_eq!(
        errors("#if 1\n#else\n#else\n#endif\n"),
        "/dev/stdin:3: error: #else after #else\n/dev/stdin:1: error: the conditional began here\n"
    );
    assert_eq!(
        errors("#else\n"),
        "/dev/stdin:1: error: #else without #if\n"
    );
    assert_eq!(
        errors("#define\n"),
        "/dev/stdin:1: error: no macro name given in #define directive\n"
    );
    assert_eq!(
        errors("#if !defined\n#define X\n"),
        "/dev/stdin:1: error: operator \"defined\" requires an identifier\n/dev/stdin:1: error: unterminated #if\n"
    );
    assert_eq!(
        errors("#include \"nosuch.h\"\n#foo\n"),
        "/dev/stdin:1: fatal error: nosuch.h: No such file or directory\ncompilation terminated.\n"
    );
    assert_eq!(
        errors("#foo\n"),
        "/dev/stdin:1: error: invalid preprocessing directive #foo\n"
    );
    assert_eq!(
        errors("#error stop here\n"),
        "/dev/stdin:1: error: #error stop here\n"
    );
}

#[test]
fn includes_go_on_their_line() {
    let dir = std::env::temp_dir().join(format!("dtrace-cpp-{}", std::process::id()));
    let sub = dir.join("sub");
    std::fs::create_dir_all(&sub).expect("temp dir");
    std::fs::write(
        sub.join("D.h"),
        "#ifndef D_H\n#define D_H\ntypedef char foo;\n#include \"E.h\"\n#endif\n",
    )
    .expect("write");
    std::fs::write(sub.join("E.h"), "#define E 7\nint e;\n").expect("write");
    let config = Config {
        include_dirs: vec![sub.clone()],
        list_headers: true,
        ..Config::default()
    };
    let out = run("#include \"D.h\"\n#include <D.h>\nE\n", &config).expect("preprocesses");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.text, " typedef char foo; int e;\n\n7\n");
    let d = sub.join("D.h").display().to_string();
    let e = sub.join("E.h").display().to_string();
    assert_eq!(out.messages, format!(". {d}\n.. {e}\n. {d}\n"));
}

#[test]
fn dumps_macros() {
    let config = Config {
        dump_macros: true,
        ..Config::default()
    };
    let out = run(
        "#define G(a, rest...) a + rest\n#define F(a, ...) a + __VA_ARGS__\n",
        &config,
    )
    .expect("preprocesses");
    assert!(
        out.text.contains("#define G(a,rest...) a + rest\n"),
        "{}",
        out.text
    );
    assert!(out.text.contains("#define __SUNW_D 1\n"), "{}", out.text);
    assert!(
        out.text.ends_with("#define F(a,...) a + __VA_ARGS__\n"),
        "{}",
        out.text
    );
}

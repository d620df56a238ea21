//! String subroutines on the live kernel: `substr index rindex strstr strchr strrchr
//! cleanpath link_ntop toupper tolower lltostr basename dirname strtoll json`, run in `BEGIN` and
//! compared with the output DTrace gives (the cases and answers of Oracle's `tst.substr.d`, `tst.index.d`,
//! `tst.lltostr.d`, `tst.basename.d`, ...; basename/dirname also against coreutils), plus
//! their prototype errors and a check that each loads in a `profile-97` clause with
//! operands unknown at compile time (the verifier's worst case). Needs root.

mod common;

use std::process::{Command, Output};

fn dtrace(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dtrace"))
        .args(args)
        .output()
        .expect("run dtrace")
}

/// Run `BEGIN { <body> exit(0); }` quietly; its stdout.
fn begin(body: &str) -> String {
    let program = format!("BEGIN {{ {body} exit(0); }}");
    let out = dtrace(&["-q", "-n", &program]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "dtrace failed on {program}\n{stderr}");
    let mut text = String::from_utf8(out.stdout).expect("utf-8 output");
    // The run ends its output with a newline of its own.
    if text.ends_with('\n') {
        text.pop();
    }
    text
}

/// Print each string expression as `[value]` on its own line and compare with `want`
/// (a dozen per run: each printed string takes strsize bytes of the clause's record).
fn check_strings(cases: &[(&str, &str)]) {
    for chunk in cases.chunks(12) {
        check_strings_once(chunk);
    }
}

fn check_strings_once(cases: &[(&str, &str)]) {
    let body: String = cases
        .iter()
        .map(|(e, _)| format!("printf(\"[%s]\\n\", {e});"))
        .collect();
    let want: String = cases.iter().map(|(_, w)| format!("[{w}]\n")).collect();
    let got = begin(&body);
    compare(cases.iter().map(|c| c.0), &got, &want);
}

/// Print each integer expression with `%d` and compare with `want`.
fn check_ints(cases: &[(&str, i64)]) {
    let body: String = cases
        .iter()
        .map(|(e, _)| format!("printf(\"%d\\n\", {e});"))
        .collect();
    let want: String = cases.iter().map(|(_, w)| format!("{w}\n")).collect();
    let got = begin(&body);
    compare(cases.iter().map(|c| c.0), &got, &want);
}

/// Compare line by line (the run ends with an empty line of its own, ignored).
fn compare<'a>(exprs: impl Iterator<Item = &'a str>, got: &str, want: &str) {
    if got.trim_end_matches('\n') == want.trim_end_matches('\n') {
        return;
    }
    let mut report = String::new();
    for ((e, g), w) in exprs.zip(got.lines()).zip(want.lines()) {
        if g != w {
            report += &format!("{e}: got {g}, want {w}\n");
        }
    }
    panic!("mismatches:\n{report}\nfull output:\n{got}");
}

/// The expected `substr` results of Oracle's tst.substr.r, on "foobarbazbop".
const SUBSTR: &[(&str, &str, &str)] = &[
    ("3", "", "barbazbop"),
    ("300", "", ""),
    ("-10", "", "obarbazbop"),
    ("0", "", "foobarbazbop"),
    ("1", "", "oobarbazbop"),
    ("11", "", "p"),
    ("12", "", ""),
    ("13", "", ""),
    ("8", "20", "zbop"),
    ("4", "4", "arba"),
    ("5", "8", "rbazbop"),
    ("5", "9", "rbazbop"),
    ("400", "20", ""),
    ("400", "0", ""),
    ("400", "-1", ""),
    ("3", "0", ""),
    ("3", "-1", "barbazbo"),
    ("3", "-4", "barba"),
    ("3", "-20", ""),
    ("-10", "-5", "obarb"),
    ("0", "400", "foobarbazbop"),
    ("-1", "400", "p"),
    ("-1", "0", ""),
    ("-1", "-1", ""),
    ("-24", "24", "foobarbazbop"),
    ("-24", "12", ""),
    ("-24", "13", "f"),
    ("-12", "12", "foobarbazbop"),
    ("-12", "11", "foobarbazbo"),
];

#[test]
fn substr_matches_dtrace() {
    common::require_root();
    // Literal and variable operands (a literal's length bounds some loops at compile time).
    for s in ["\"foobarbazbop\"", "str"] {
        let cases: Vec<(String, &str)> = SUBSTR
            .iter()
            .map(|(i, l, want)| {
                let e = if l.is_empty() {
                    format!("substr({s}, {i})")
                } else {
                    format!("substr({s}, {i}, {l})")
                };
                (e, *want)
            })
            .collect();
        let cases: Vec<(&str, &str)> = cases.iter().map(|(e, w)| (e.as_str(), *w)).collect();
        for chunk in cases.chunks(12) {
            let body: String = std::iter::once("str = \"foobarbazbop\";".to_string())
                .chain(
                    chunk
                        .iter()
                        .map(|(e, _)| format!("printf(\"[%s]\\n\", {e});")),
                )
                .collect();
            let want: String = chunk.iter().map(|(_, w)| format!("[{w}]\n")).collect();
            compare(chunk.iter().map(|c| c.0), &begin(&body), &want);
        }
    }
}

#[test]
fn substr_edge_cases() {
    common::require_root();
    check_strings(&[
        ("substr(\"\", 0)", ""),
        ("substr(\"\", -1)", ""),
        ("substr(\"\", 0, 5)", ""),
        ("substr(\"a\", 0, 1)", "a"),
        ("substr(\"abc\", 1, 1)", "b"),
        // A start past the end gives the empty string.
        ("substr(\"CRAIG: Positioned them\", 100, 10)", ""),
        ("substr(substr(\"abcdef\", 1), 1, 2)", "cd"),
    ]);
    // The strsize cap (tst.substr.d runs with strsize=32): a string holds strsize bytes and
    // its NUL, as in DTrace.
    let out = dtrace(&[
        "-q",
        "-x",
        "strsize=32",
        "-n",
        "BEGIN { printf(\"[%s][%s]\\n\", substr(\"CRAIG: Positioned them, I don't know... I'm fairly wide guy.\", 100), substr(\"0123456789012345678901234567890123456789\", 2)); exit(0); }",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim_end(),
        "[][234567890123456789012345678901]"
    );
}

/// index/rindex cases of Oracle's tst.index.r: (haystack, needle, start, index, rindex).
const INDEX: &[(&str, &str, Option<i64>, i64, i64)] = &[
    ("foobarbaz", "barbaz", None, 3, 3),
    ("foofoofoo", "foo", None, 0, 6),
    ("boofoofoo", "foo", None, 3, 6),
    ("foobarbaz", "barbazzy", None, -1, -1),
    ("foobar", "foobar", None, 0, 0),
    ("foobar", "foobarbaz", None, -1, -1),
    ("", "foobar", None, -1, -1),
    ("foobar", "", None, 0, 6),
    ("", "", None, 0, 0),
    ("foo", "", None, 0, 3),
    ("foobarbaz", "barbaz", Some(-400), 3, -1),
    ("foobarbaz", "barbaz", Some(-1), 3, -1),
    ("foobarbaz", "barbaz", Some(0), 3, -1),
    ("foobarbaz", "barbaz", Some(4), -1, 3),
    ("foobarbaz", "barbaz", Some(9), -1, 3),
    ("foobarbaz", "barbaz", Some(10), -1, 3),
    ("foobarbaz", "barbaz", Some(400), -1, 3),
    ("foofoofoo", "foo", Some(-400), 0, -1),
    ("foofoofoo", "foo", Some(-1), 0, -1),
    ("foofoofoo", "foo", Some(0), 0, 0),
    ("foofoofoo", "foo", Some(4), 6, 3),
    ("foofoofoo", "foo", Some(9), -1, 6),
    ("foofoofoo", "foo", Some(10), -1, 6),
    ("foofoofoo", "foo", Some(400), -1, 6),
    ("boofoofoo", "foo", Some(-400), 3, -1),
    ("boofoofoo", "foo", Some(0), 3, -1),
    ("boofoofoo", "foo", Some(4), 6, 3),
    ("boofoofoo", "foo", Some(11), -1, 6),
    ("foobarbaz", "barbazzy", Some(0), -1, -1),
    ("foobarbaz", "barbazzy", Some(400), -1, -1),
    // Empty needle with a start (Perl's rules, kept by DTrace).
    ("foo", "", Some(-1), 0, 0),
    ("foo", "", Some(1), 1, 1),
    ("foo", "", Some(3), 3, 3),
    ("foo", "", Some(10), 3, 3),
    ("", "", Some(5), 0, 0),
    // Needles longer than a word, matches near word boundaries.
    ("aaaaaaaaaaaaaaaaaaab", "aaaaaaaaab", None, 10, 10),
    ("xabcdefghijklmnopq", "abcdefghijklmnop", None, 1, 1),
    ("abcdefghabcdefghX", "abcdefghX", None, 8, 8),
    ("abcdefghabcdefgh", "abcdefghY", None, -1, -1),
];

#[test]
fn index_and_rindex_match_dtrace() {
    common::require_root();
    // Literal operands, and the same through variables (no compile-time lengths).
    for via_vars in [false, true] {
        let mut setup = String::new();
        let mut cases = Vec::new();
        for (n, (s, sub, start, idx, ridx)) in INDEX.iter().enumerate() {
            let (s, sub) = if via_vars {
                setup += &format!("s{n} = \"{s}\"; n{n} = \"{sub}\";");
                (format!("s{n}"), format!("n{n}"))
            } else {
                (format!("\"{s}\""), format!("\"{sub}\""))
            };
            let start = start.map(|p| format!(", {p}")).unwrap_or_default();
            cases.push((format!("index({s}, {sub}{start})"), *idx));
            cases.push((format!("rindex({s}, {sub}{start})"), *ridx));
        }
        // Every search in one clause: each is a bpf_loop, cheap for the verifier.
        let body: String = setup
            + &cases
                .iter()
                .map(|(e, _)| format!("printf(\"%d\\n\", {e});"))
                .collect::<String>();
        let want: String = cases.iter().map(|(_, w)| format!("{w}\n")).collect();
        compare(cases.iter().map(|c| c.0.as_str()), &begin(&body), &want);
    }
}

#[test]
fn strstr_matches_dtrace() {
    common::require_root();
    check_strings(&[
        ("strstr(\"foobarbaz\", \"bar\")", "barbaz"),
        ("strstr(\"foobarbaz\", \"baz\")", "baz"),
        ("strstr(\"foobarbaz\", \"foo\")", "foobarbaz"),
        ("strstr(\"foobarbaz\", \"\")", "foobarbaz"),
        ("strstr(\"\", \"\")", ""),
        ("strstr(\"abcabcabcabcabcX\", \"abcabcX\")", "abcabcX"),
    ]);
    // Not found: NULL, as in DTrace.
    check_ints(&[
        ("strstr(\"foobarbaz\", \"bazz\") == NULL", 1),
        ("strstr(\"\", \"a\") == NULL", 1),
        ("strstr(\"\", \"\") == NULL", 0),
    ]);
    assert_eq!(
        begin("s = \"/usr/lib/libc.so.6\"; n = \"lib\"; printf(\"[%s]\\n\", strstr(s, n));"),
        "[lib/libc.so.6]\n"
    );
}

#[test]
fn strchr_and_strrchr_match_dtrace() {
    common::require_root();
    // Oracle's tst.strchr.d.
    let out = begin(
        "str = \"fooeyfooeyfoo\"; c = 'f';
         printf(\"%s %s\\n\", strchr(str, c), strrchr(str, c));
         c = 'y';
         printf(\"%s %s\\n\", strchr(str, c), strrchr(str, c));
         printf(\"%s\\n\", strrchr(strchr(str, c), c));",
    );
    assert_eq!(out, "fooeyfooeyfoo foo\nyfooeyfoo yfoo\nyfoo\n");
    // Not found: NULL, as in DTrace.
    check_ints(&[
        ("strchr(\"fooeyfooeyfoo\", 'a') == NULL", 1),
        ("strrchr(\"fooeyfooeyfoo\", 'a') == NULL", 1),
        ("strchr(\"\", 'a') == NULL", 1),
    ]);
    check_strings(&[
        ("strchr(\"abc\", 'c')", "c"),
        ("strrchr(\"abca\", 'a')", "a"),
        ("strchr(\"a/b/c\", '/')", "/b/c"),
        ("strrchr(\"a/b/c\", '/')", "/c"),
    ]);
}

#[test]
fn cleanpath_matches_dtrace() {
    common::require_root();
    check_strings(&[
        ("cleanpath(\"/usr//lib/./x/\")", "/usr/lib/x"),
        ("cleanpath(\"/usr/lib/../../../bin\")", "/bin"),
        ("cleanpath(\"/..\")", "/"),
        ("cleanpath(\"a/b/../..\")", "."),
        ("cleanpath(\"a/../../b\")", "../b"),
        ("cleanpath(\"../x/../..\")", "../.."),
        ("cleanpath(\"././/\")", "."),
        ("cleanpath(\"\")", ""),
        ("cleanpath(\"x\")", "x"),
        ("cleanpath(\"/x/y/z/../../w/.\")", "/x/w"),
        ("cleanpath(strjoin(\"/tmp/\", \"../etc\"))", "/etc"),
    ]);
}

#[test]
fn link_ntop_formats_ethernet_and_infiniband_addresses() {
    common::require_root();
    let out = begin(
        "this->m = (uint64_t *)alloca(8); *this->m = htonll(0x0a1b2c3d4e5f << 16);
         printf(\"%s\\n\", link_ntop(ARPHRD_ETHER, this->m));
         this->t = ARPHRD_INFINIBAND; this->b = (uint8_t *)alloca(20);
         this->b[0] = 0xfe; this->b[19] = 0x01;
         printf(\"%s\\n\", link_ntop(this->t, this->b));",
    );
    assert_eq!(
        out,
        "0a:1b:2c:3d:4e:5f\nfe:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:01\n"
    );
    // Another type is an illegal operation; an unreadable address an invalid one.
    for (call, fault) in [
        ("link_ntop(2, this->m)", "illegal operation"),
        (
            "link_ntop(ARPHRD_ETHER, (uint8_t *)8)",
            "invalid address (0x8)",
        ),
    ] {
        let program = format!(
            "BEGIN {{ this->m = (uint64_t *)alloca(8); printf(\"%s\", {call}); }} BEGIN {{ exit(0); }}"
        );
        let out = dtrace(&["-q", "-n", &program]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(fault), "{call}: {stderr}");
    }
}

#[test]
fn toupper_and_tolower() {
    common::require_root();
    check_strings(&[
        ("toupper(\"foo bar\")", "FOO BAR"),
        ("toupper(\"Hello, World! az{`@[\")", "HELLO, WORLD! AZ{`@["),
        ("tolower(\"FOO Bar 123 AZ@[`{\")", "foo bar 123 az@[`{"),
        ("toupper(\"\")", ""),
        ("tolower(toupper(\"MiXeD\"))", "mixed"),
    ]);
}

#[test]
fn lltostr_matches_dtrace() {
    common::require_root();
    // Oracle's tst.lltostr.d / .r.
    assert_eq!(
        begin(
            "printf(\"%s\\n\", lltostr(0));
             printf(\"%s\\n\", lltostr(1));
             printf(\"%s\\n\", lltostr(-1));
             printf(\"%s\\n\", lltostr(123456789));
             printf(\"%s\\n\", lltostr(-123456789));
             printf(\"%s\\n\", lltostr(1LL << 62));
             printf(\"%s\\n\", lltostr(-(1LL << 62)));"
        ),
        "0\n1\n-1\n123456789\n-123456789\n4611686018427387904\n-4611686018427387904\n"
    );
    check_strings(&[
        ("lltostr(255, 16)", "0xff"),
        ("lltostr(0, 16)", "0x0"),
        ("lltostr(-1, 16)", "0xffffffffffffffff"),
        ("lltostr(8, 8)", "010"),
        ("lltostr(0, 8)", "0"),
        ("lltostr(5, 2)", "101"),
        ("lltostr(35, 36)", "z"),
        (
            "lltostr(-9223372036854775807LL - 1)",
            "-9223372036854775808",
        ),
        ("lltostr(9223372036854775807LL)", "9223372036854775807"),
        ("lltostr(-1, 2)", &"1".repeat(64)),
        ("lltostr(10, 1)", ""),
        ("lltostr(10, 37)", ""),
    ]);
    let out = begin("x = 42; b = 7; printf(\"%s %s\\n\", lltostr(x), lltostr(x, b));");
    assert_eq!(out, "42 60\n");
}

/// Oracle's tst.basename.d paths, with coreutils' answers.
const PATHS: &[(&str, &str, &str)] = &[
    ("/foo/bar/baz", "baz", "/foo/bar"),
    ("/foo/bar///baz/", "baz", "/foo/bar"),
    ("/foo/bar/baz/", "baz", "/foo/bar"),
    ("/foo/bar/baz//", "baz", "/foo/bar"),
    ("/foo/bar/baz/.", ".", "/foo/bar/baz"),
    ("/foo/bar/baz/./", ".", "/foo/bar/baz"),
    ("/foo/bar/baz/.//", ".", "/foo/bar/baz"),
    ("foo/bar/baz/", "baz", "foo/bar"),
    ("/", "/", "/"),
    ("./", ".", "."),
    ("//", "/", "/"),
    ("/.", ".", "/"),
    ("/./", ".", "/"),
    ("/./.", ".", "/."),
    ("/.//", ".", "/"),
    (".", ".", "."),
    ("f", "f", "."),
    ("f/", "f", "."),
    ("/////", "/", "/"),
    ("", ".", "."),
    ("a/b/", "b", "a"),
    ("a//b", "b", "a"),
    ("//a", "a", "/"),
    ("/a", "a", "/"),
];

#[test]
fn basename_and_dirname_match_dtrace() {
    common::require_root();
    let cases: Vec<(String, &str)> = PATHS
        .iter()
        .flat_map(|(p, b, d)| {
            [
                (format!("basename(\"{p}\")"), *b),
                (format!("dirname(\"{p}\")"), *d),
            ]
        })
        .collect();
    let cases: Vec<(&str, &str)> = cases.iter().map(|(e, w)| (e.as_str(), *w)).collect();
    check_strings(&cases);
}

#[test]
fn basename_and_dirname_agree_with_coreutils() {
    common::require_root();
    for (p, _, _) in PATHS.iter().filter(|(p, _, _)| !p.is_empty()) {
        let tool = |name: &str| {
            let out = Command::new(name).arg(p).output().expect(name);
            String::from_utf8(out.stdout)
                .unwrap()
                .trim_end()
                .to_string()
        };
        let got = begin(&format!(
            "printf(\"%s %s\", basename(\"{p}\"), dirname(\"{p}\"));"
        ));
        assert_eq!(
            got,
            format!("{} {}", tool("basename"), tool("dirname")),
            "{p}"
        );
    }
}

#[test]
fn strtoll_converts() {
    common::require_root();
    check_ints(&[
        ("strtoll(\"123\")", 123),
        ("strtoll(\"-123\")", -123),
        ("strtoll(\"+42\")", 42),
        ("strtoll(\"  \\t 7xyz\")", 7),
        ("strtoll(\"\")", 0),
        ("strtoll(\"abc\")", 0),
        ("strtoll(\"ff\", 16)", 255),
        ("strtoll(\"0x1F\", 16)", 31),
        ("strtoll(\"777\", 8)", 511),
        ("strtoll(\"789\", 8)", 7),
        ("strtoll(\"1010\", 2)", 10),
        ("strtoll(\"Zz\", 36)", 1295),
        ("strtoll(\"9223372036854775807\")", i64::MAX),
        ("strtoll(\"-9223372036854775808\")", i64::MIN),
        ("strtoll(\"12\", 1)", 0),
    ]);
}

#[test]
fn prototype_errors() {
    common::require_root();
    let cases = [
        (
            "substr(\"a\")",
            "D_PROTO_LEN",
            "substr( ) prototype mismatch: 1 arg passed, at least 2 expected",
        ),
        (
            "strstr(\"a\", \"b\", 1)",
            "D_PROTO_LEN",
            "strstr( ) prototype mismatch: 3 args passed, 2 expected",
        ),
        (
            "toupper()",
            "D_PROTO_LEN",
            "toupper( ) prototype mismatch: 0 args passed, 1 expected",
        ),
        (
            "substr(1, 2)",
            "D_PROTO_ARG",
            "substr( ) argument #1 is incompatible with prototype:\n\tprototype: char *\n\t argument: int",
        ),
        (
            "index(\"a\", \"b\", \"c\")",
            "D_PROTO_ARG",
            "index( ) argument #3 is incompatible with prototype:\n\tprototype: int\n\t argument: string",
        ),
        (
            "lltostr(\"a\")",
            "D_PROTO_ARG",
            "lltostr( ) argument #1 is incompatible with prototype:\n\tprototype: int64_t\n\t argument: string",
        ),
        (
            "strchr(\"a\", \"b\")",
            "D_PROTO_ARG",
            "strchr( ) argument #2 is incompatible with prototype:\n\tprototype: char\n\t argument: string",
        ),
    ];
    for (e, tag, msg) in cases {
        let program = format!("BEGIN {{ x = {e}; exit(0); }}");
        let out = dtrace(&["-e", "-n", &program]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{e}: {stderr}");
        assert!(
            stderr.contains(msg),
            "{e}: want {tag} {msg:?}, got:\n{stderr}"
        );
    }
}

#[test]
fn each_loads_in_a_profile_clause() {
    common::require_root();
    // Operands unknown at compile time: the loops run to their strsize bounds.
    let exprs = [
        "substr(execname, 1)",
        "substr(execname, this->i, this->j)",
        "index(execname, this->s)",
        "rindex(execname, this->s, this->i)",
        "strstr(execname, this->s)",
        "strchr(execname, this->i)",
        "strrchr(execname, this->i)",
        "toupper(execname)",
        "tolower(execname)",
        "lltostr(this->i)",
        "lltostr(this->i, this->j)",
        "basename(this->s)",
        "dirname(this->s)",
        "strtoll(execname)",
        "strtoll(this->s, this->j)",
        "json(this->s, execname)",
        "json(execname, this->s)",
    ];
    for e in exprs {
        let program = format!(
            "profile-97 {{ this->i = (int)timestamp % 7; this->j = (int)timestamp % 5 + 2; this->s = execname; this->r = {e}; }}"
        );
        let out = dtrace(&["-e", "-n", &program]);
        assert!(
            out.status.success(),
            "{e} does not load:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Several in one clause, with a literal needle as scripts usually have.
    let program = "profile-97 { this->a = index(execname, \"sh\"); this->b = strstr(execname, \"d\"); this->c = substr(execname, 1, 3); this->d = basename(execname); this->e = dirname(execname); this->f = toupper(execname); this->g = lltostr(this->a); this->h = strrchr(execname, 'a'); }";
    let out = dtrace(&["-e", "-n", program]);
    assert!(
        out.status.success(),
        "combined clause does not load:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `json()` filtering a program's JSON log lines, the use it was made for: a USDT probe
/// passes each line; the predicate and the clause select members of the line read from the
/// process with `copyinstr`.
#[test]
fn json_selects_members_of_user_log_lines() {
    common::require_root();
    let dir = common::scratch("strsubr", "json");
    let exe = common::build_c(
        &dir,
        "logger",
        r#"#include <stdio.h>
#include <sys/sdt.h>
int main(void) {
    char line[128];
    for (int i = 0; i < 6; i++) {
        snprintf(line, sizeof line,
                 "{\"seq\": %d, \"action\": \"%s\", \"sizes\": [%d, %d, %d], \"who\": {\"uid\": %d}}",
                 i, i % 3 == 1 ? "ignore" : "write", i, 2 * i, 3 * i, 100 + i);
        DTRACE_PROBE1(app, log, line);
    }
    DTRACE_PROBE1(app, log, "{\"finished\": true}");
    return 0;
}
"#,
        &["-O1"],
    );
    let program = r#"app$target:::log { this->j = copyinstr(arg0); }
app$target:::log /json(this->j, "finished") == NULL && json(this->j, "action") != "ignore"/ {
    printf("%d %s %s\n", strtoll(json(this->j, "seq")), json(this->j, "sizes[2]"), json(this->j, "who.uid"));
}
app$target:::log /json(this->j, "finished") != NULL/ { printf("finished %s\n", json(this->j, "finished")); }"#;
    let run = common::trace(exe.to_str().unwrap(), program);
    assert_eq!(
        run.stdout, "0 0 100\n2 6 102\n3 9 103\n5 15 105\nfinished true\n\n",
        "stderr: {}",
        run.stderr
    );
}

//! Compile-error conformance: D scripts taken from the Oracle DTrace unit tests (the
//! `err.D_*` cases whose expected output is a compile error) run as the suite runs them,
//! `dtrace -xerrtags -s test/unittest/DIR/NAME.d`, with stderr and the exit status compared
//! exactly with the suite's expected results.
//!
//! Each case gives the script body and the line it starts on; the lines above it are filled
//! with a comment, as the original's header comment fills them, so line numbers in messages
//! match. Scripts are written under a fresh temporary directory, and dtrace runs there, so the
//! relative path in each message is the suite's.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One conformance case.
struct Case {
    /// The script's path in the suite, relative to the suite's top directory.
    path: &'static str,
    /// The line the body starts on.
    line: usize,
    /// The script text from `line` on.
    body: &'static str,
    /// Extra options, as `@@runtest-opts` gives them.
    opts: &'static [&'static str],
    /// The expected stderr, exactly.
    stderr: &'static str,
}

const fn case(path: &'static str, line: usize, body: &'static str, stderr: &'static str) -> Case {
    Case {
        path,
        line,
        body,
        opts: &[],
        stderr,
    }
}

/// How long one dtrace run may take; a script that wrongly compiles might run forever.
const TIMEOUT: Duration = Duration::from_secs(20);

fn script_text(case: &Case) -> String {
    let mut text = String::new();
    match case.line {
        0 | 1 => {}
        2 => text.push('\n'),
        n => {
            text.push_str("/*\n");
            for _ in 0..n - 3 {
                text.push_str(" *\n");
            }
            text.push_str(" */\n");
        }
    }
    text.push_str(case.body);
    text
}

/// Runs one case; returns a description of the difference, if any.
fn run(dir: &Path, case: &Case) -> Option<String> {
    let file = dir.join(case.path);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, script_text(case)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_dtrace"))
        .current_dir(dir)
        .arg("-xerrtags")
        .arg("-s")
        .arg(case.path)
        .args(case.opts)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if start.elapsed() > TIMEOUT {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    if stderr == case.stderr && code == Some(1) {
        return None;
    }
    Some(format!(
        "{}: status {:?} (want 1)\n  got:  {:?}\n  want: {:?}\n",
        case.path, code, stderr, case.stderr
    ))
}

#[test]
fn oracle_error_tests() {
    let dir = common::scratch("errors", "cases");
    let failures: Vec<String> = CASES.iter().filter_map(|c| run(&dir, c)).collect();
    let _ = fs::remove_dir_all(&dir);
    assert!(
        failures.is_empty(),
        "{} of {} cases differ:\n{}",
        failures.len(),
        CASES.len(),
        failures.concat()
    );
}

const CASES: &[Case] = &[
    case(
        "test/unittest/stability/err.D_ATTR_MIN.MinAttributes.d",
        17,
        "#pragma D option quiet\n#pragma D option amin=Evolving/Evolving/Common\n\nBEGIN\n{\n\ttrace(curthread->t_procp);\n\texit(0);\n}\n\nERROR\n{\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/stability/err.D_ATTR_MIN.MinAttributes.d: [D_ATTR_MIN] line 24: attributes for clause (Unstable/Unstable/Common) are less than predefined minimum\n",
    ),
    Case {
        // Oracle's tst.D_MACRO_OFLOW.ParIntOvflow.sh, as a script.
        path: "test/unittest/lexer/macro-oflow.d",
        line: 1,
        body: "BEGIN { $1; }\n",
        opts: &["0x12345678123456781"],
        stderr: "dtrace: failed to compile script test/unittest/lexer/macro-oflow.d: [D_MACRO_OFLOW] line 1: macro argument $1 constant 0x12345678123456781 results in integer overflow\n",
    },
    case(
        "test/unittest/scripting/err.D_MACRO_UNDEF.invalidargs.d",
        17,
        "\nBEGIN\n{\n\tprint(\"The arguments are %d %d\\n\", $1, $2);\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/scripting/err.D_MACRO_UNDEF.invalidargs.d: [D_MACRO_UNDEF] line 20: macro argument $1 is not defined\n",
    ),
    Case {
        path: "test/unittest/options/err.D_MACRO_UNUSED.no-argref.d",
        line: 13,
        body: "\n/* @@runtest-opts: 1234 */\n\nBEGIN\n{\n\texit(0);\n}\n\nERROR\n{\n\texit(1);\n}\n",
        opts: &["1234"],
        stderr: "dtrace: failed to compile script test/unittest/options/err.D_MACRO_UNUSED.no-argref.d: [D_MACRO_UNUSED] line 25: extraneous argument '1234' ($1 is not referenced)\n",
    },
    case(
        "test/unittest/options/err.D_EMPTY.errtags.d",
        14,
        "/* @@runtest-opts: -xerrtags */\n",
        "dtrace: failed to compile script test/unittest/options/err.D_EMPTY.errtags.d: [D_EMPTY] line 15: empty D program translation unit\n",
    ),
    case(
        "test/unittest/translators/err.D_XLATE_INCOMPAT.BadInputType1.d",
        18,
        "#pragma D option quiet\n\nstruct input_struct {\n\tint i;\n\tchar c;\n} *uvar;\n\nstruct output_struct {\n\tint myi;\n\tchar *myc;\n};\n\ntranslator struct output_struct < struct input_struct *uvar >\n{\n\tmyi = ((struct input_struct *)uvar)->i;\n\tmyc = ((struct input_struct *)uvar)->c;\n};\n\nBEGIN\n{\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/translators/err.D_XLATE_INCOMPAT.BadInputType1.d: [D_XLATE_INCOMPAT] line 34: translator member myc definition uses incompatible types: \"char *\" = \"char\"\n",
    ),
    case(
        "test/unittest/translators/err.D_XLATE_NONE.BadTransDecl6.d",
        18,
        "#pragma D option quiet\n\nstruct myinput_struct {\n\tint i;\n};\n\nstruct myoutput_struct {\n\tint myi;\n};\n\ntranslator struct myoutput_struct < struct myinput_struct *ivar >\n{\n\tmyi = ((struct myinput_struct *)ivar)->i;\n};\n\nstruct myinput_struct f;\n\nBEGIN\n{\n\txlate < struct myoutput_struct >(f)->myi;\n}\n",
        "dtrace: failed to compile script test/unittest/translators/err.D_XLATE_NONE.BadTransDecl6.d: [D_XLATE_NONE] line 37: cannot translate from \"struct myinput_struct\" to \"struct myoutput_struct\"\n",
    ),
    case(
        "test/unittest/types/err.D_UNKNOWN.dupenum.d",
        15,
        "enum foo {\n\tx = 3,\n\tx = 4\n};\n",
        "dtrace: failed to compile script test/unittest/types/err.D_UNKNOWN.dupenum.d: [D_UNKNOWN] line 18: failed to define enumerator 'x': Duplicate member or variable name\n",
    ),
    case(
        "test/unittest/types/err.D_DECL_ENOFLOW.enoflow.d",
        15,
        "enum e {\n\ttoobig = 2147483648\n};\n",
        "dtrace: failed to compile script test/unittest/types/err.D_DECL_ENOFLOW.enoflow.d: [D_DECL_ENOFLOW] line 17: enumerator 'toobig' value overflows INT_MAX (2147483647)\n",
    ),
    case(
        "test/unittest/types/err.D_DECL_BADCLASS.bad.d",
        16,
        "register x;\n\nBEGIN\n{\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/types/err.D_DECL_BADCLASS.bad.d: [D_DECL_BADCLASS] line 16: specified storage class not appropriate in D\n",
    ),
    case(
        "test/unittest/arrays/err.D_UNKNOWN.uregs_toobig.x86_64.d",
        16,
        "BEGIN\n{\n\ttrace(uregs[42]);\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/arrays/err.D_UNKNOWN.uregs_toobig.x86_64.d: [D_UNKNOWN] line 18: uregs[]: index out of bounds (42)\n",
    ),
    case(
        "test/unittest/sizeof/err.D_IDENT_UNDEF.UnknownSymbol.d",
        17,
        "BEGIN\n{\n\tprintf(\"%d\\n\", sizeof(`));\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/sizeof/err.D_IDENT_UNDEF.UnknownSymbol.d: [D_IDENT_UNDEF] line 19: failed to resolve `: Unknown symbol name\n",
    ),
    case(
        "test/unittest/begin/err.D_PDESC_ZERO.begin.d",
        19,
        "BEGIN::read:entry\n{\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/begin/err.D_PDESC_ZERO.begin.d: [D_PDESC_ZERO] line 19: probe description BEGIN::read:entry does not match any probes\n",
    ),
    case(
        "test/unittest/begin/err.D_PDESC_ZERO.tick.d",
        17,
        "#pragma D option quiet\n\n\nBEGIN:tick-1\n{\n\tprintf(\"Begin fired first\\n\");\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/begin/err.D_PDESC_ZERO.tick.d: [D_PDESC_ZERO] line 20: probe description ::BEGIN:tick-1 does not match any probes\n",
    ),
    case(
        "test/unittest/exit/err.D_PROTO_LEN.noarg.d",
        15,
        "#pragma D option quiet\n\ndtrace:::BEGIN\n{\n\texit()\n}\n",
        "dtrace: failed to compile script test/unittest/exit/err.D_PROTO_LEN.noarg.d: [D_PROTO_LEN] line 19: exit( ) prototype mismatch: 0 args passed, 1 expected\n",
    ),
    // printa/
    case(
        "test/unittest/printa/err.D_PRINTA_AGGARG.badagg.d",
        16,
        "BEGIN\n{\n\tprinta(\"%d\", 123);\n}\n",
        "dtrace: failed to compile script test/unittest/printa/err.D_PRINTA_AGGARG.badagg.d: [D_PRINTA_AGGARG] line 18: printa( ) argument #2 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int\n",
    ),
    case(
        "test/unittest/printa/err.D_PRINTA_AGGARG.badfmt.d",
        16,
        "BEGIN\n{\n\tprinta(123);\n}\n",
        "dtrace: failed to compile script test/unittest/printa/err.D_PRINTA_AGGARG.badfmt.d: [D_PRINTA_AGGARG] line 18: printa( ) argument #1 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int\n",
    ),
    case(
        "test/unittest/printa/err.D_PRINTA_AGGARG.badval.d",
        17,
        "BEGIN\n{\n\tprinta(\"%@d\\n\", 123);\n}\n",
        "dtrace: failed to compile script test/unittest/printa/err.D_PRINTA_AGGARG.badval.d: [D_PRINTA_AGGARG] line 19: printa( ) argument #2 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int\n",
    ),
    case(
        "test/unittest/printa/err.D_PRINTA_PROTO.bad.d",
        16,
        "BEGIN\n{\n\tprinta(\"%d\");\n}\n",
        "dtrace: failed to compile script test/unittest/printa/err.D_PRINTA_PROTO.bad.d: [D_PRINTA_PROTO] line 18: printa( ) prototype mismatch: 1 args passed, 2 expected\n",
    ),
    // printf/
    case(
        "test/unittest/printf/err.D_PRINTF_AGG_CONV.aggfmt.d",
        16,
        "BEGIN\n{\n\tprintf(\"hello %@d\", 123);\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_PRINTF_AGG_CONV.aggfmt.d: [D_PRINTF_AGG_CONV] line 18: %@ conversion requires an aggregation and is not for use with printf( )\n",
    ),
    case(
        "test/unittest/printf/err.D_PRINTF_ARG_EXTRA.toomany.d",
        16,
        "BEGIN\n{\n\tprintf(\"x = %d y = %d\\n\", 123, 456, 789);\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_PRINTF_ARG_EXTRA.toomany.d: [D_PRINTF_ARG_EXTRA] line 18: printf( ) prototype mismatch: only 2 arguments required by this format string\n",
    ),
    case(
        "test/unittest/printf/err.D_PRINTF_ARG_EXTRA.widths.d",
        16,
        "#pragma D option quiet\n\nBEGIN\n{\n\tprintf(\"\\n\");\n\tx = 0;\n\n\tprintf(\"%?d\\n\", x++, 1);\n\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_PRINTF_ARG_EXTRA.widths.d: [D_PRINTF_ARG_EXTRA] line 23: printf( ) prototype mismatch: only 1 arguments required by this format string\n",
    ),
    case(
        "test/unittest/printf/err.D_PROTO_ARG.d",
        16,
        "BEGIN\n{\n\tprintf(123);\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_PROTO_ARG.d: [D_PROTO_ARG] line 18: printf( ) argument #1 is incompatible with prototype:\n\tprototype: string\n\t argument: int\n",
    ),
    case(
        "test/unittest/printf/err.D_PRINTF_ARG_PROTO.novalue.d",
        16,
        "BEGIN\n{\n\tprintf(\"%s\");\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_PRINTF_ARG_PROTO.novalue.d: [D_PRINTF_ARG_PROTO] line 18: printf( ) prototype mismatch: conversion #1 (%s) is missing a corresponding value argument\n",
    ),
    case(
        "test/unittest/printf/err.D_PRINTF_ARG_TYPE.aggarg.d",
        16,
        "BEGIN\n{\n\t@a = count();\n\tprintf(\"hello %d %d\", 123, @a);\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_PRINTF_ARG_TYPE.aggarg.d: [D_PRINTF_ARG_TYPE] line 19: printf( ) argument #3 is incompatible with conversion #2 prototype:\n\tconversion: %d\n\t prototype: char, short, int, long, or long long\n\t  argument: aggregation\n",
    ),
    case(
        "test/unittest/printf/err.D_PRINTF_ARG_TYPE.recursive.d",
        16,
        "#pragma D option quiet\n\nBEGIN\n{\n\ti = 0;\n\tprintf(\"%s\\n\", printf(\"test\"));\n\n\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_PRINTF_ARG_TYPE.recursive.d: [D_PRINTF_ARG_TYPE] line 21: printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: %s\n\t prototype: char [] or string (or use stringof)\n\t  argument: void\n",
    ),
    case(
        "test/unittest/printf/err.D_PRINTF_DYN_PROTO.noprec.d",
        16,
        "BEGIN\n{\n\tprintf(\"%s %.*d\\n\", \"foo\");\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_PRINTF_DYN_PROTO.noprec.d: [D_PRINTF_DYN_PROTO] line 18: printf( ) prototype mismatch: conversion #2 (%d) is missing a corresponding \".*\" argument\n",
    ),
    case(
        "test/unittest/printf/err.D_PRINTF_DYN_PROTO.nowidth.d",
        16,
        "BEGIN\n{\n\tprintf(\"%s %*d\\n\", \"foo\");\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_PRINTF_DYN_PROTO.nowidth.d: [D_PRINTF_DYN_PROTO] line 18: printf( ) prototype mismatch: conversion #2 (%d) is missing a corresponding \"*\" argument\n",
    ),
    case(
        "test/unittest/printf/err.D_PRINTF_DYN_TYPE.badprec.d",
        16,
        "BEGIN\n{\n\tprintf(\"%.*d\\n\", \"foo\", 1);\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_PRINTF_DYN_TYPE.badprec.d: [D_PRINTF_DYN_TYPE] line 18: printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: % .* d\n\t prototype: int\n\t  argument: string\n",
    ),
    case(
        "test/unittest/printf/err.D_PRINTF_DYN_TYPE.badwidth.d",
        16,
        "BEGIN\n{\n\tprintf(\"%*d\\n\", \"foo\", 1);\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_PRINTF_DYN_TYPE.badwidth.d: [D_PRINTF_DYN_TYPE] line 18: printf( ) argument #2 is incompatible with conversion #1 prototype:\n\tconversion: % * d\n\t prototype: int\n\t  argument: string\n",
    ),
    case(
        "test/unittest/printf/err.D_PROTO_LEN.toofew.d",
        16,
        "BEGIN\n{\n\tprintf();\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_PROTO_LEN.toofew.d: [D_PROTO_LEN] line 18: printf( ) prototype mismatch: 0 args passed, at least 1 expected\n",
    ),
    case(
        "test/unittest/printf/err.D_SYNTAX.badconv1.d",
        16,
        "BEGIN\n{\n\tprintf(\"%3$d\", 123);\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_SYNTAX.badconv1.d: [D_SYNTAX] line 18: format conversion #1 uses unsupported positional format (%n$)\n",
    ),
    case(
        "test/unittest/printf/err.D_SYNTAX.badconv2.d",
        16,
        "BEGIN\n{\n\tprintf(\"%3\", 123);\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_SYNTAX.badconv2.d: [D_SYNTAX] line 18: format conversion #1 name expected before end of format string\n",
    ),
    case(
        "test/unittest/printf/err.D_SYNTAX.badconv3.d",
        16,
        "BEGIN\n{\n\tprintf(\"%Z\", 123);\n}\n",
        "dtrace: failed to compile script test/unittest/printf/err.D_SYNTAX.badconv3.d: [D_SYNTAX] line 18: format conversion #1 is undefined: %Z\n",
    ),
    // pragma/
    case(
        "test/unittest/pragma/err.D_PRAGERR.d",
        15,
        "\n#pragma D error \"this is an error message\"\n\nBEGIN\n{\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/pragma/err.D_PRAGERR.d: [D_PRAGERR] line 16: #error: this is an error message \n",
    ),
    case(
        "test/unittest/pragma/err.D_PRAGMA_INVAL.d",
        16,
        "\ninline int foo\n\n#pragma D attributes incorrect_attr foo\n\nBEGIN\n{\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/pragma/err.D_PRAGMA_INVAL.d: [D_PRAGMA_INVAL] line 19: invalid attributes specified by #pragma attributes\n",
    ),
    case(
        "test/unittest/pragma/err.D_PRAGMA_MALFORM.d",
        15,
        "\n#pragma D attributes incorrect_attr\n\nBEGIN\n{\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/pragma/err.D_PRAGMA_MALFORM.d: [D_PRAGMA_MALFORM] line 16: malformed #pragma attributes <attributes> <ident>\n",
    ),
    case(
        "test/unittest/pragma/err.D_PRAGMA_UNUSED.UnusedPragma.d",
        15,
        "\nvoid func(int, int);\n\n#pragma D option quiet\n#pragma D attributes Stable/Stable/Common func;\n\nBEGIN\n{\n\texit(0);\n}\n\nERROR\n{\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/pragma/err.D_PRAGMA_UNUSED.UnusedPragma.d: [D_PRAGMA_UNUSED] line 19: unused #pragma attributes\n",
    ),
    // arithmetic/
    case(
        "test/unittest/arithmetic/err.D_SYNTAX.addmin.d",
        18,
        "#pragma D option quiet\n\nBEGIN\n{\n\ti = 0;\n\ti+-;\n\tprintf(\"The value of i is %d\\n\", i);\n\texit (0);\n}\n",
        "dtrace: failed to compile script test/unittest/arithmetic/err.D_SYNTAX.addmin.d: [D_SYNTAX] line 23: syntax error near \";\"\n",
    ),
    case(
        "test/unittest/arithmetic/err.D_SYNTAX.divmin.d",
        17,
        "#pragma D option quiet\n\nBEGIN\n{\n\ti = 1;\n\ti /-= i;\n\tprintf(\"The value of i is %d\\n\", i);\n\texit (0);\n}\n",
        "dtrace: failed to compile script test/unittest/arithmetic/err.D_SYNTAX.divmin.d: [D_SYNTAX] line 22: syntax error near \"-=\"\n",
    ),
    case(
        "test/unittest/arithmetic/err.D_SYNTAX.muladd.d",
        17,
        "#pragma D option quiet\n\nBEGIN\n{\n\ti = 1;\n\ti *+= i;\n\tprintf(\"The value of i is %d\\n\", i);\n\texit (0);\n}\n",
        "dtrace: failed to compile script test/unittest/arithmetic/err.D_SYNTAX.muladd.d: [D_SYNTAX] line 22: syntax error near \"+=\"\n",
    ),
    // inline/
    case(
        "test/unittest/inline/err.D_DECL_IDRED.redef1.d",
        20,
        "inline int foo = timestamp;\ninline int foo = 8;\n",
        "dtrace: failed to compile script test/unittest/inline/err.D_DECL_IDRED.redef1.d: [D_DECL_IDRED] line 21: identifier redefined: foo\n\t current: inline definition\n\tprevious: scalar inline\n",
    ),
    // enum/ and more inline/
    case(
        "test/unittest/enum/err.D_DECL_IDRED.EnumSameName.d",
        18,
        "#pragma D option quiet\n\nenum colors {\n\tRED,\n\tGREEN,\n\tBLUE\n};\n\nenum shades {\n\tRED,\n\tORANGE,\n\tGREEN,\n\tWHITE\n};\n\nBEGIN\n{\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/enum/err.D_DECL_IDRED.EnumSameName.d: [D_DECL_IDRED] line 27: identifier redeclared: RED\n",
    ),
    case(
        "test/unittest/enum/err.D_UNKNOWN.RepeatIdentifiers.d",
        19,
        "#pragma D option quiet\n\nenum colors {\n\tRED,\n\tGREEN,\n\tGREEN = 2,\n\tBLUE\n};\n\nBEGIN\n{\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/enum/err.D_UNKNOWN.RepeatIdentifiers.d: [D_UNKNOWN] line 24: failed to define enumerator 'GREEN': Duplicate member or variable name\n",
    ),
    case(
        "test/unittest/inline/err.D_DECL_IDRED.redef2.d",
        20,
        "inline int rand = 7;\n",
        "dtrace: failed to compile script test/unittest/inline/err.D_DECL_IDRED.redef2.d: [D_DECL_IDRED] line 20: identifier redefined: rand\n\t current: inline definition\n\tprevious: function \n",
    ),
    case(
        "test/unittest/inline/err.D_IDENT_UNDEF.recur.d",
        20,
        "inline int foo = foo + 3;\n",
        "dtrace: failed to compile script test/unittest/inline/err.D_IDENT_UNDEF.recur.d: [D_IDENT_UNDEF] line 20: failed to resolve foo: Unknown variable name\n",
    ),
    case(
        "test/unittest/inline/err.D_OP_INCOMPAT.baddef2.d",
        20,
        "inline int i = \"i am a string\";\n",
        "dtrace: failed to compile script test/unittest/inline/err.D_OP_INCOMPAT.baddef2.d: [D_OP_INCOMPAT] line 20: inline i definition uses incompatible types: \"int\" = \"string\"\n",
    ),
    case(
        "test/unittest/arithmetic/err.D_DIV_ZERO.divby0.d",
        16,
        "\nBEGIN\n{\n\tc = 123/0;\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/arithmetic/err.D_DIV_ZERO.divby0.d: [D_DIV_ZERO] line 19: expression contains division by zero\n",
    ),
    // end/, predicates/
    case(
        "test/unittest/end/err.D_IDENT_UNDEF.timespent.d",
        17,
        "#pragma D option quiet\n\nEND\n{\n\ttotal = timestamp - start;\n}\n\nBEGIN\n{\n\tstart = timestamp;\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/end/err.D_IDENT_UNDEF.timespent.d: [D_IDENT_UNDEF] line 21: failed to resolve start: Unknown variable name\n",
    ),
    case(
        "test/unittest/predicates/err.D_PRED_SCALAR.NonScalarPred.d",
        16,
        "#pragma D option quiet\nint a[4];\n\nBEGIN\n/a/\n{\n\texit(0);\n}\n",
        "dtrace: failed to compile script test/unittest/predicates/err.D_PRED_SCALAR.NonScalarPred.d: [D_PRED_SCALAR] line 23: predicate result must be of scalar type\n",
    ),
    case(
        "test/unittest/predicates/err.D_SYNTAX.invalid.d",
        17,
        "#pragma D option quiet\n\nBEGIN\n{\n\ti = 0;\n}\n\nprofile-1\n/i < != > 10/\n{\n\ti++;\n\ttrace(i);\n}\n",
        "dtrace: failed to compile script test/unittest/predicates/err.D_SYNTAX.invalid.d: [D_SYNTAX] line 25: syntax error near \"!=\"\n",
    ),
    case(
        "test/unittest/predicates/err.D_SYNTAX.operr.d",
        17,
        "#pragma D option quiet\n\nBEGIN\n{\n\ti = 0;\n}\n\nprofile-1\n/i != 0 && >= 5 || <= 10/\n{\n\ti++;\n\ttrace(i);\n}\n",
        "dtrace: failed to compile script test/unittest/predicates/err.D_SYNTAX.operr.d: [D_SYNTAX] line 25: syntax error near \">=\"\n",
    ),

];

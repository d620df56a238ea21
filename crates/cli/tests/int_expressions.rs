//! Integer expressions compiled to eBPF compute what Oracle's DTrace computes (64-bit
//! registers, no promotion to `int`, narrowing only at casts, stores and records, constants
//! folded by the parser's rules): random expression trees (constants of every base and
//! suffix, clause-local variables of every width, casts, unary, binary, ternary, comma and
//! assignment operators) run on the live kernel in `BEGIN`, each compared with a reference
//! evaluator (`int_expr::eval`, where the semantics are written down), plus hand-picked
//! edge cases and the divide-by-zero fault.
//!
//! Each expression `E` is printed as `(long long)(E)`, `sizeof(E)` and `((E) * 0 - 1) < 0`,
//! which shows its 64-bit value, its size and whether its type compares signed against an
//! `int`.
//!
//! Seeds are fixed so CI is deterministic; `DTRACE_PROPTEST_SEED=<n>` starts from another
//! seed and `DTRACE_PROPTEST_BATCHES=<n>` runs more (or fewer) programs of
//! [`PER_BATCH`] expressions each. Needs root (it loads BPF programs).

mod common;
mod int_expr;

use std::fmt::Write as _;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use int_expr::eval::{eval, type_of, BinOp, Expr, IntType, Value, LONG};
use int_expr::gen::Generator;

/// Expressions per `dtrace` run.
const PER_BATCH: usize = 50;
/// Runs by default: 20 × 50 = 1000 random expressions.
const DEFAULT_BATCHES: u64 = 20;
/// Clause-local variables per run that expressions may read (and as many they assign).
const VARS_PER_BATCH: usize = 8;

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

/// Run `dtrace -q -n program`, killing it if it has not finished within a minute.
fn dtrace(program: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_dtrace"))
        .args(["-q", "-n", program])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn dtrace");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        out.read_to_string(&mut s).ok();
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        err.read_to_string(&mut s).ok();
        s
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for dtrace") {
            break Some(status);
        }
        if start.elapsed() > Duration::from_secs(60) {
            child.kill().ok();
            child.wait().ok();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let stdout = out_reader.join().unwrap();
    let mut stderr = err_reader.join().unwrap();
    if status.is_none() {
        stderr.push_str("\n(killed after 60 s)");
    }
    Run {
        ok: status.is_some_and(|s| s.success()),
        stdout,
        stderr,
    }
}

/// The `printf` that shows an expression's value, size and signedness.
fn observe(e: &str) -> String {
    format!("\tprintf(\"%d %d %d\\n\", (long long)({e}), sizeof({e}), (({e}) * 0 - 1) < 0);\n")
}

/// The line [`observe`] prints for `e`, by the reference evaluator.
fn expected(e: &Expr) -> String {
    let c = |v: u64, ty: IntType| {
        Box::new(Expr::Const {
            text: v.to_string(),
            value: Value::new(v, ty),
        })
    };
    let as_long = Expr::Cast {
        name: "long long",
        ty: LONG,
        operand: Box::new(e.clone()),
    };
    let times_zero = Expr::Binary(BinOp::Mul, Box::new(e.clone()), c(0, INT));
    let minus_one = Expr::Binary(BinOp::Sub, Box::new(times_zero), c(1, INT));
    let negative = Expr::Binary(BinOp::Lt, Box::new(minus_one), c(0, INT));
    let value = |x: &Expr| eval(x).expect("a well-defined expression");
    format!(
        "{} {} {}",
        value(&as_long).as_i64(),
        type_of(e).size,
        value(&negative).bits
    )
}

/// The line [`observe`] prints for a value `bits` of type `ty` (`bits` as the register
/// holds it).
fn expected_line(bits: u64, ty: IntType) -> String {
    expected(&Expr::Var {
        name: "x".into(),
        value: Value::new(bits, ty),
    })
}

/// A D program observing `exprs` after the clause-local variable assignments `vars`.
/// `exit` is in a clause of its own so a fault cannot keep the program running.
fn program(vars: &[(String, String)], exprs: &[String]) -> String {
    let mut p = String::from("BEGIN\n{\n");
    for (name, init) in vars {
        writeln!(p, "\t{name} = {init};").unwrap();
    }
    for e in exprs {
        p.push_str(&observe(e));
    }
    p.push_str("}\n\nBEGIN\n{\n\texit(0);\n}\n");
    p
}

/// Check `exprs` (text and expected line) in one run; on a failed run, each alone. Returns
/// one message per mismatch.
fn check(vars: &[(String, String)], exprs: &[(String, String)]) -> Vec<String> {
    let texts: Vec<String> = exprs.iter().map(|(e, _)| e.clone()).collect();
    let prog = program(vars, &texts);
    let run = dtrace(&prog);
    // dtrace ends its output with an empty line.
    let lines: Vec<&str> = run.stdout.trim_end_matches('\n').lines().collect();
    if !run.ok || !run.stderr.trim().is_empty() || lines.len() != exprs.len() {
        if exprs.len() > 1 {
            // Find the culprits.
            return exprs
                .iter()
                .flat_map(|e| check(vars, std::slice::from_ref(e)))
                .collect();
        }
        return vec![format!(
            "dtrace failed (ok: {}) on\n{prog}\nexpected: {}\nstdout:\n{}stderr:\n{}",
            run.ok, exprs[0].1, run.stdout, run.stderr
        )];
    }
    let mut failures = Vec::new();
    for ((e, want), got) in exprs.iter().zip(&lines) {
        if got != want {
            let vars: String = vars.iter().map(|(n, i)| format!("{n} = {i}; ")).collect();
            failures.push(format!(
                "{vars}\n    {e}\n    expected `{want}` (value size promoted-signed), got `{got}`"
            ));
        }
    }
    failures
}

fn report(failures: &[String], total: usize) {
    if failures.is_empty() {
        return;
    }
    let shown: Vec<&str> = failures.iter().take(12).map(String::as_str).collect();
    panic!(
        "{} of {total} expressions differ from the reference evaluator:\n{}",
        failures.len(),
        shown.join("\n")
    );
}

fn env_u64(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    Some(
        text.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={text}: not a number")),
    )
}

#[test]
fn random_expressions_match_reference() {
    let first = env_u64("DTRACE_PROPTEST_SEED").unwrap_or(1);
    let batches = env_u64("DTRACE_PROPTEST_BATCHES").unwrap_or(DEFAULT_BATCHES);
    let mut failures = Vec::new();
    let mut total = 0;
    for seed in first..first + batches {
        let batch = Generator::new(seed).batch(PER_BATCH, VARS_PER_BATCH);
        let vars: Vec<(String, String)> = batch
            .vars
            .iter()
            .map(|(n, init)| (n.clone(), init.to_string()))
            .collect();
        let exprs: Vec<(String, String)> = batch
            .exprs
            .iter()
            .map(|e: &Expr| {
                let v = eval(e).expect("generated expressions are well defined");
                assert_eq!(
                    v.ty,
                    type_of(e),
                    "evaluator: value type differs from type_of({e})"
                );
                (e.to_string(), expected(e))
            })
            .collect();
        total += exprs.len();
        for f in check(&vars, &exprs) {
            failures.push(format!("[seed {seed}] {f}"));
        }
    }
    eprintln!(
        "checked {total} random expressions (seeds {first}..{})",
        first + batches
    );
    report(&failures, total);
}

const CHAR: IntType = IntType {
    size: 1,
    signed: true,
};
const UCHAR: IntType = IntType {
    size: 1,
    signed: false,
};
const SHORT: IntType = IntType {
    size: 2,
    signed: true,
};
const USHORT: IntType = IntType {
    size: 2,
    signed: false,
};
use int_expr::eval::{INT, UINT, ULONG};

/// Hand-picked cases: expression, expected value (the 64-bit register, as `long long`
/// shows it), expected type.
const TRICKY: &[(&str, i64, IntType)] = &[
    // Conversions on casts truncate, then sign- or zero-extend.
    ("(char)200", -56, CHAR),
    ("(char)300 + 1", 45, INT),
    ("(unsigned char)300", 44, UCHAR),
    ("(long long)(unsigned char)300", 44, LONG),
    ("(int8_t)128", -128, CHAR),
    ("(uint16_t)65536", 0, USHORT),
    ("(int16_t)32768", -32768, SHORT),
    ("(int)4294967296", 0, INT),
    ("(int)0xffffffffL", -1, INT),
    ("(uint32_t)-1 + 0L", 4294967295, LONG),
    ("(char)-1 == 255", 0, INT),
    ("(unsigned char)-1 == 255", 1, INT),
    // A cast that widens, or keeps the width and signedness, changes nothing.
    (
        "(long long)((int)(timestamp * 0) + 0x7fffffff + 1)",
        2147483648,
        LONG,
    ),
    (
        "(int)((int)(timestamp * 0) + 0x7fffffff + 1)",
        2147483648,
        INT,
    ),
    ("(unsigned)((char)(timestamp * 0 + 255))", 4294967295, UINT),
    // Results are not narrowed to their type: the 64-bit value until a cast, store or
    // record narrows it (DTrace's own example: 1075064400 * 1000000000 is an int).
    ("1075064400 * 1000000000", 1075064400000000000, INT),
    ("(1 << 63) - 1", i64::MAX, INT),
    ("4294967295u + 1", 4294967296, UINT),
    ("0xffffffffu * 0xffffffffu", -8589934591, UINT),
    ("2147483647 + 1", 2147483648, INT),
    ("0x7fffffff * 2", 4294967294, INT),
    ("1 << 31", 2147483648, INT),
    ("0x7fffffffffffffff + 1", i64::MIN, LONG),
    (
        "(unsigned short)65535 * (unsigned short)65535",
        4294836225,
        USHORT,
    ),
    ("(char)(timestamp * 0 + 100) + (char)100", 200, CHAR),
    ("1UL << 63", i64::MIN, ULONG),
    // No promotion to int: an operator has the type of its operand of higher rank.
    ("(unsigned short)-1 + 1", 65536, INT),
    ("(unsigned char)255 + (unsigned char)1", 256, UCHAR),
    ("(char)-128 / (char)-1", 128, CHAR),
    ("(short)-32768 * (short)-1", 32768, SHORT),
    ("(unsigned char)0x80 << 24", 2147483648, UCHAR),
    // Folded constants: `-` of an unsigned one stays in its width, `~` does not.
    ("-1u", 4294967295, UINT),
    ("-(unsigned)1", 4294967295, UINT),
    ("-(unsigned char)1", 255, UCHAR),
    ("~0u", -1, UINT),
    ("~(unsigned char)0", -1, UCHAR),
    // MIN / -1 wraps, MIN % -1 is 0.
    ("(-2147483647 - 1) / -1", 2147483648, INT),
    ("(-2147483647 - 1) % -1", 0, INT),
    ("(-9223372036854775807L - 1) / -1", i64::MIN, LONG),
    ("(-9223372036854775807L - 1) % -1", 0, LONG),
    // Comparisons are signed or not as the operands' common type is.
    ("-1 < 1u", 0, INT),
    ("-1 < 1ul", 0, INT),
    ("-1L < 1u", 1, INT),
    ("(char)(timestamp * 0) - 1 < 0", 1, INT),
    ("(unsigned char)(timestamp * 0) - 1 < 0", 1, INT),
    ("(unsigned)(timestamp * 0) - 1 < 0", 0, INT),
    ("(unsigned)(timestamp * 0) - 1 > 0xffffffffu", 1, INT),
    // Unsigned division divides the 64-bit values.
    ("-1 / 2u", i64::MAX, UINT),
    ("(long)-1 / 2u", 0, LONG),
    ("-1L / 2UL", i64::MAX, ULONG),
    // A constant condition is the arm it chooses (its type too); otherwise the arms'
    // common type, each arm's value as it is.
    ("1 ? (char)-1 : 0u", -1, CHAR),
    ("0 ? 0u : (char)-1", -1, CHAR),
    ("(timestamp > 0) ? (char)-1 : 0u", -1, UINT),
    ("(timestamp > 0) ? (char)-1 : (char)0", -1, CHAR),
    // Division truncates toward zero. A folded remainder has the dividend's sign (C's);
    // at run time it is negative when exactly one operand is (Oracle's tst.moddiv).
    ("-7 / 2", -3, INT),
    ("-7 % 2", -1, INT),
    ("7 % -2", 1, INT),
    ("(int)(timestamp * 0 + 7) % -2", -1, INT),
    ("(int)(timestamp * 0 - 7) % -2", 1, INT),
    ("(unsigned)-7 / 2", 2147483644, UINT),
    ("(unsigned)-7 % 2", 1, UINT),
    // Shifts have their left operand's type; a folded >> shifts in zeros, one at run time
    // is arithmetic when that type is signed.
    ("(short)-1 >> 1", i64::MAX, SHORT),
    ("(short)(timestamp * 0 - 1) >> 1", -1, SHORT),
    ("(unsigned)-1 >> 1", 2147483647, UINT),
    ("-1L >> 63", 1, LONG),
    ("1 << 2UL", 4, INT),
    // Constants: C's type from value, base and suffix.
    ("2147483648", 2147483648, LONG),
    ("0x80000000", 2147483648, UINT),
    ("020000000000", 2147483648, UINT),
    ("-2147483648", -2147483648, LONG),
    ("4294967296", 4294967296, LONG),
    ("0xffffffffffffffff", -1, ULONG),
    ("1lu", 1, ULONG),
    ("1LLU", 1, ULONG),
    ("0x7fffffffffffffffll", i64::MAX, LONG),
    ("0x8000000000000000ll", i64::MIN, ULONG),
    // Logical operators give int 0 or 1 and skip what they do not need; `!` of a constant
    // keeps the constant's type.
    ("3 ^^ 0", 1, INT),
    ("3 ^^ 4", 0, INT),
    ("!0x100000000", 0, LONG),
    ("!(timestamp * 0 + 0x100000000)", 0, INT),
    ("0x100000000 && 1", 1, INT),
    ("0 && (1 / (int)(timestamp * 0))", 0, INT),
    ("1 || (1 % (int)(timestamp * 0))", 1, INT),
    ("0 ? 1 / (int)(timestamp * 0) : 5", 5, INT),
    // The comma operator gives its right operand.
    ("(1, (char)200)", -56, CHAR),
];

#[test]
fn tricky_cases() {
    let exprs: Vec<(String, String)> = TRICKY
        .iter()
        .map(|&(e, v, ty)| (e.to_string(), expected_line(v as u64, ty)))
        .collect();
    report(&check(&[], &exprs), exprs.len());
}

/// An assignment has the type of its left operand and the value of its right one; the
/// variable reads back narrowed to its type.
#[test]
fn assignment_has_left_operand_type() {
    let vars = [
        ("this->u".to_string(), "1u".to_string()),
        ("this->c".to_string(), "(char)0".to_string()),
        ("this->l".to_string(), "0L".to_string()),
    ];
    let cases: &[(&str, i64, IntType)] = &[
        ("(this->u = -1)", -1, UINT),
        ("(this->u = -1) < 0", 0, INT),
        ("this->u", 4294967295, UINT),
        ("(this->c = 300)", 300, CHAR),
        ("this->c", 44, CHAR),
        ("(this->c = 200) + 0u", 200, UINT),
        ("this->c + 0u", -56, UINT),
        ("(this->l = 0x80000000u)", 2147483648, LONG),
        ("(this->l = -1) + 0u", -1, LONG),
    ];
    let exprs: Vec<(String, String)> = cases
        .iter()
        .map(|&(e, v, ty)| (e.to_string(), expected_line(v as u64, ty)))
        .collect();
    report(&check(&vars, &exprs), exprs.len());
}

/// `/` and `%` by zero fault at run time with `divide-by-zero`, ending the clause and
/// discarding its record (as in DTrace, the `before` already printed in it is lost); the
/// divisor is zero after conversion to its type (`(unsigned char)256` is 0).
#[test]
fn division_by_zero_faults() {
    let divisors = [
        "this->z",
        "(char)this->z",
        "(unsigned)this->z",
        "(unsigned long)this->z",
        "(unsigned char)(this->z + 256)",
        "(int)(this->z + 0x100000000)",
        "(short)(this->z + 0x10000)",
    ];
    let mut failures = Vec::new();
    for d in divisors {
        for op in ["/", "%"] {
            let prog = format!(
                "BEGIN {{ this->z = 0L; printf(\"before\\n\"); printf(\"%d\\n\", (long long)(5 {op} {d})); printf(\"unreachable\\n\"); }}\nBEGIN {{ printf(\"after\\n\"); exit(0); }}"
            );
            let run = dtrace(&prog);
            let good = run.ok
                && run.stderr.contains("divide-by-zero")
                && run.stdout.trim_end_matches('\n') == "after";
            if !good {
                failures.push(format!(
                    "{prog}\nstdout:\n{}stderr:\n{}",
                    run.stdout, run.stderr
                ));
            }
        }
    }
    // A divisor that is not zero once converted does not fault.
    let run = dtrace(
        "BEGIN { this->z = 0L; printf(\"%d\\n\", (long long)(7 / (char)(this->z + 258))); exit(0); }",
    );
    if run.stdout.trim_end_matches('\n') != "3" || !run.stderr.is_empty() {
        failures.push(format!("7 / (char)258: {}{}", run.stdout, run.stderr));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A value keeps its 64 bits in expressions and is narrowed to its type where DTrace
/// narrows it: a record (`printf`, `trace`), a store, an associative array's or an
/// aggregation's key.
#[test]
fn narrowed_by_records_stores_and_keys() {
    let run = dtrace(
        "char k[char]; BEGIN { c = (char)100; printf(\"%d %d \", c + c, (long long)(c + c)); \
         trace(c + c); d = c + c; printf(\" %d\", (long long)d); k[c + c] = 1; \
         printf(\" %d\\n\", k[(char)-56]); @[c + c + c] = count(); @[(char)44] = count(); \
         exit(0); }",
    );
    assert!(run.ok && run.stderr.is_empty(), "{}", run.stderr);
    // 300 and 44 are one key once narrowed to a char.
    assert_eq!(run.stdout, "-56 200 -56 -56 1\n\n  44                2\n");
}

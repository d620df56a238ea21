//! Golden tests: exact DTrace output for aggregations, checked against
//! output captured from Oracle DTrace (its test suite's expected results)
//! and against the layout rules of its source.

use dtrace_consumer::aggregate::{
    self, llquantize_bucket, lquantize_bucket, quantize_bucket, slot_count, AggFunc, Aggregation,
    SortOptions, StackFormat,
};
use dtrace_consumer::printf::{parse, Format};
use dtrace_consumer::Value;

/// The text of [`aggregate::render_exit`], which must be UTF-8 here.
fn render_exit(aggs: &[Aggregation], opts: &SortOptions, stacks: StackFormat) -> String {
    String::from_utf8(aggregate::render_exit(aggs, opts, stacks)).unwrap()
}

/// The text of [`aggregate::printa`].
fn printa(aggs: &[&Aggregation], opts: &SortOptions, stacks: StackFormat) -> String {
    String::from_utf8(aggregate::printa(aggs, opts, stacks)).unwrap()
}

/// The text of [`aggregate::printa_format`].
fn printa_format(fmt: &Format, aggs: &[&Aggregation], opts: &SortOptions) -> String {
    String::from_utf8(aggregate::printa_format(fmt, aggs, opts)).unwrap()
}

/// Add `incr` to bucket `b` of the value of `key`.
fn bump(agg: &mut Aggregation, key: Vec<Value>, b: usize, incr: i64) {
    let mut data = agg
        .rows()
        .iter()
        .find(|r| r.key == key)
        .map_or_else(|| vec![0; slot_count(&agg.func)], |r| r.data.clone());
    data[b] = (data[b] as i64 + incr) as u64;
    agg.set(key, data);
}

fn llq(factor: u64, low: u64, high: u64, nsteps: u64, values: &[(i64, i64)]) -> Aggregation {
    let func = AggFunc::Llquantize {
        factor,
        low,
        high,
        nsteps,
    };
    let mut agg = Aggregation::new("", func);
    for &(v, incr) in values {
        bump(
            &mut agg,
            vec![],
            llquantize_bucket(v, factor, low, high, nsteps),
            incr,
        );
    }
    agg
}

const HEADER: &str = "\n           value  ------------- Distribution ------------- count    \n";

#[test]
fn count_sum_quantize_at_exit() {
    let mut c = Aggregation::new("c", AggFunc::Count);
    c.set(vec![Value::str("a")], vec![1]);
    let mut s = Aggregation::new("s", AggFunc::Sum);
    s.set(vec![], vec![5]);
    let mut q = Aggregation::new("q", AggFunc::Quantize);
    bump(&mut q, vec![], quantize_bucket(3), 1);
    let expected = "
  a                                                                 1
                5

           value  ------------- Distribution ------------- count    
               1 |                                         0        
               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        
               4 |                                         0        

";
    assert_eq!(
        render_exit(&[c, s, q], &SortOptions::default(), StackFormat::default()),
        expected
    );
}

#[test]
fn signed_keys_sorted_by_key() {
    // Oracle DTrace test tst.signedkeys: keys sort unsigned, 1- and 2-byte
    // keys print unsigned, 4- and 8-byte keys signed.
    let mut aggs = Vec::new();
    for size in [1u8, 2, 4, 8] {
        let mut a = Aggregation::new(format!("i{size}"), AggFunc::Sum);
        for v in [-2i64, -1, 0, 1, 2] {
            let key = Value::Int {
                value: v as u64,
                size,
                signed: true,
            };
            a.set(vec![key], vec![v as u64]);
        }
        aggs.push(a);
    }
    let opts = SortOptions {
        by_key: true,
        ..SortOptions::default()
    };
    let expected = "\n   0                0\n   1                1\n   2                2\n 254               -2\n 255               -1\n     0                0\n     1                1\n     2                2\n 65534               -2\n 65535               -1\n        0                0\n        1                1\n        2                2\n       -2               -2\n       -1               -1\n                0                0\n                1                1\n                2                2\n               -2               -2\n               -1               -1\n";
    assert_eq!(render_exit(&aggs, &opts, StackFormat::default()), expected);
}

#[test]
fn llquantize_mixed_signs() {
    // Oracle DTrace test tst.llquantneg: llquantize(i, 10, 0, 6, 20) with
    // increment +1 for even i and -1 for odd i, i < 1500.
    let values: Vec<(i64, i64)> = (0..1500)
        .map(|i| (i, if i % 2 == 0 { 1 } else { -1 }))
        .collect();
    let agg = llq(10, 0, 6, 20, &values);
    let expected = "\n\n           value  ------------- Distribution ------------- count    \n              -1                     |                     0        \n               0                     |@                    1        \n               1                    @|                     -1       \n               2                     |@                    1        \n               3                    @|                     -1       \n               4                     |@                    1        \n               5                    @|                     -1       \n               6                     |@                    1        \n               7                    @|                     -1       \n               8                     |@                    1        \n               9                    @|                     -1       \n              10                     |@                    1        \n              15                    @|                     -1       \n              20                     |@                    1        \n              25                    @|                     -1       \n              30                     |@                    1        \n              35                    @|                     -1       \n              40                     |@                    1        \n              45                    @|                     -1       \n              50                     |@                    1        \n              55                    @|                     -1       \n              60                     |@                    1        \n              65                    @|                     -1       \n              70                     |@                    1        \n              75                    @|                     -1       \n              80                     |@                    1        \n              85                    @|                     -1       \n              90                     |@                    1        \n              95                    @|                     -1       \n             100                     |                     0        \n\n";
    assert_eq!(
        render_exit(&[agg], &SortOptions::default(), StackFormat::default()),
        expected
    );
}

/// The values of Oracle DTrace test tst.llquantize_basic's basicA-C.
const BASIC: [(i64, i64); 21] = [
    (-20, 80),
    (-16, 84),
    (-12, 88),
    (-8, 92),
    (-6, 94),
    (-5, 95),
    (-4, 96),
    (-3, 97),
    (-2, 98),
    (-1, 99),
    (0, 100),
    (1, 101),
    (2, 102),
    (3, 103),
    (4, 104),
    (5, 105),
    (6, 106),
    (8, 108),
    (12, 112),
    (16, 116),
    (20, 120),
];

#[test]
fn llquantize_basic_printa() {
    let opts = SortOptions::default();
    let basic_a = llq(4, 0, 1, 2, &BASIC);
    assert_eq!(printa(&[&basic_a], &opts, StackFormat::default()), "\n\n           value  ------------- Distribution ------------- count    \n          <= -16 |@@@                                      164      \n              -8 |@@@                                      180      \n              -4 |@@@@@                                    285      \n              -2 |@@@@                                     195      \n              -1 |@@                                       99       \n               0 |@@                                       100      \n               1 |@@                                       101      \n               2 |@@@@                                     205      \n               4 |@@@@@@                                   315      \n               8 |@@@@                                     220      \n           >= 16 |@@@@                                     236      \n\n");
    let basic_c = llq(4, 0, 1, 8, &BASIC);
    assert_eq!(printa(&[&basic_c], &opts, StackFormat::default()), "\n\n           value  ------------- Distribution ------------- count    \n          <= -16 |@@@                                      164      \n             -14 |                                         0        \n             -12 |@@                                       88       \n             -10 |                                         0        \n              -8 |@@                                       92       \n              -6 |@@                                       94       \n              -4 |@@@@                                     191      \n              -3 |@@                                       97       \n              -2 |@@                                       98       \n              -1 |@@                                       99       \n               0 |@@                                       100      \n               1 |@@                                       101      \n               2 |@@                                       102      \n               3 |@@                                       103      \n               4 |@@@@                                     209      \n               6 |@@                                       106      \n               8 |@@                                       108      \n              10 |                                         0        \n              12 |@@                                       112      \n              14 |                                         0        \n           >= 16 |@@@@                                     236      \n\n");
    let zero = llq(2, 0, 1, 2, &[(0, 1), (0, -1)]);
    assert_eq!(printa(&[&zero], &opts, StackFormat::default()), "\n\n           value  ------------- Distribution ------------- count    \n               0 |                                         0        \n               1 |                                         0        \n               2 |                                         0        \n\n");
    let neg = llq(2, 0, 1, 2, &[(2, -1)]);
    assert_eq!(printa(&[&neg], &opts, StackFormat::default()), "\n\n           value  ------------- Distribution ------------- count    \n               1                                         | 0        \n               2 @@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@| -1       \n            >= 4                                         | 0        \n\n");
    let all = llq(2, 0, 1, 2, &[(1, 1), (2, -1)]);
    assert_eq!(printa(&[&all], &opts, StackFormat::default()), "\n\n           value  ------------- Distribution ------------- count    \n               0                     |                     0        \n               1                     |@@@@@@@@@@           1        \n               2           @@@@@@@@@@|                     -1       \n            >= 4                     |                     0        \n\n");
    let ghost = llq(2, 0, 1, 4, &[(-1, 1), (1, 1)]);
    assert_eq!(printa(&[&ghost], &opts, StackFormat::default()), "\n\n           value  ------------- Distribution ------------- count    \n              -2 |                                         0        \n              -1 |@@@@@@@@@@@@@@@@@@@@                     1        \n               0 |                                         0        \n               1 |@@@@@@@@@@@@@@@@@@@@                     1        \n               2 |                                         0        \n\n");
}

#[test]
fn llquantize_large_magnitudes() {
    // Part of basicD: factor 4, magnitudes 4..6, 32 steps.
    let agg = llq(
        4,
        4,
        6,
        32,
        &[(-256, 256), (255, 2), (-255, 128), (256, 256), (287, 1)],
    );
    let expected = format!("{HEADER}            -288 |                                         0        \n            -256 |@@@@@@@@@@@@@@@@                         256      \n     abs() < 256 |@@@@@@@@                                 130      \n             256 |@@@@@@@@@@@@@@@@                         257      \n             288 |                                         0        \n");
    let mut out = printa(&[&agg], &SortOptions::default(), StackFormat::default());
    assert_eq!(out.remove(0), '\n');
    assert_eq!(out.strip_suffix('\n').unwrap(), expected);
}

#[test]
fn lquantize_and_negative_quantize() {
    let (base, limit, step) = (0, 10, 2);
    let mut l = Aggregation::new("l", AggFunc::Lquantize { base, limit, step });
    for v in [-1, 3, 3, 4, 12] {
        bump(&mut l, vec![], lquantize_bucket(v, base, limit, step), 1);
    }
    let expected = format!("\n{HEADER}             < 0 |@@@@@@@@                                 1        \n               0 |                                         0        \n               2 |@@@@@@@@@@@@@@@@                         2        \n               4 |@@@@@@@@                                 1        \n               6 |                                         0        \n               8 |                                         0        \n           >= 10 |@@@@@@@@                                 1        \n\n");
    assert_eq!(
        render_exit(&[l], &SortOptions::default(), StackFormat::default()),
        expected
    );

    let mut q = Aggregation::new("q", AggFunc::Quantize);
    bump(&mut q, vec![], quantize_bucket(-3), 1);
    bump(&mut q, vec![], quantize_bucket(5), 1);
    let expected = format!("\n{HEADER}              -4 |                                         0        \n              -2 |@@@@@@@@@@@@@@@@@@@@                     1        \n              -1 |                                         0        \n               0 |                                         0        \n               1 |                                         0        \n               2 |                                         0        \n               4 |@@@@@@@@@@@@@@@@@@@@                     1        \n               8 |                                         0        \n\n");
    assert_eq!(
        render_exit(&[q], &SortOptions::default(), StackFormat::default()),
        expected
    );

    let mut e = Aggregation::new("e", AggFunc::Quantize);
    e.set(vec![], vec![0; 127]);
    let expected = format!("\n{HEADER}              -1 |                                         0        \n               0 |                                         0        \n               1 |                                         0        \n\n");
    assert_eq!(
        render_exit(&[e], &SortOptions::default(), StackFormat::default()),
        expected
    );
}

#[test]
fn keyed_histogram_and_avg_stddev() {
    let mut q = Aggregation::new("q", AggFunc::Quantize);
    bump(&mut q, vec![Value::str("sh")], quantize_bucket(1), 2);
    let expected = format!("\n  sh{}{HEADER}               0 |                                         0        \n               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 2        \n               2 |                                         0        \n\n", " ".repeat(48));
    assert_eq!(
        render_exit(&[q], &SortOptions::default(), StackFormat::default()),
        expected
    );

    let mut avg = Aggregation::new("avg", AggFunc::Avg);
    avg.merge_percpu(vec![], &[&[3, 6], &[0, 0], &[1, 4]]);
    let mut neg = Aggregation::new("neg", AggFunc::Avg);
    neg.set(vec![], vec![2, (-7i64) as u64]);
    let mut sd = Aggregation::new("sd", AggFunc::Stddev);
    let vals = [2u64, 4, 4, 4, 5, 5, 7, 9];
    sd.set(vec![], vec![8, 40, vals.iter().map(|v| v * v).sum(), 0]);
    let mut min = Aggregation::new("min", AggFunc::Min);
    min.merge_percpu(vec![], &[&[1, (-4i64) as u64], &[0, 0], &[1, 3]]);
    let expected = "\n                2\n               -3\n                2\n               -4\n";
    assert_eq!(
        render_exit(
            &[avg, neg, sd, min],
            &SortOptions::default(),
            StackFormat::default()
        ),
        expected
    );
}

fn keyed_counts() -> Aggregation {
    let mut a = Aggregation::new("a", AggFunc::Count);
    a.set(vec![Value::str("bash"), Value::i32(42)], vec![3]);
    a.set(vec![Value::str("sh"), Value::i32(7)], vec![1]);
    a.set(vec![Value::str("bash"), Value::i32(9)], vec![1]);
    a
}

#[test]
fn multi_key_printa() {
    let a = keyed_counts();
    let opts = SortOptions::default();
    let fmt = parse("%-8s %6d %@4u\n").unwrap();
    assert_eq!(
        printa_format(&fmt, &[&a], &opts),
        "bash          9    1\nsh            7    1\nbash         42    3\n"
    );
    let pad = |s: &str| format!("  {s:<50}");
    let expected = format!(
        "\n{}        9                1\n{}        7                1\n{}       42                3\n",
        pad("bash"),
        pad("sh"),
        pad("bash")
    );
    assert_eq!(printa(&[&a], &opts, StackFormat::default()), expected);
    // aggsortkey, then aggsortkeypos=1 (pid first), then aggsortrev.
    let by_key = SortOptions {
        by_key: true,
        ..opts
    };
    assert_eq!(
        printa_format(&fmt, &[&a], &by_key),
        "bash          9    1\nbash         42    3\nsh            7    1\n"
    );
    let by_pid = SortOptions {
        key_position: 1,
        ..by_key
    };
    assert_eq!(
        printa_format(&fmt, &[&a], &by_pid),
        "sh            7    1\nbash          9    1\nbash         42    3\n"
    );
    let rev = SortOptions {
        reverse: true,
        ..opts
    };
    assert_eq!(
        printa_format(&fmt, &[&a], &rev),
        "bash         42    3\nsh            7    1\nbash          9    1\n"
    );
}

#[test]
fn joined_printa() {
    let mut c = Aggregation::new("c", AggFunc::Count);
    c.set(vec![Value::str("a")], vec![2]);
    let mut s = Aggregation::new("s", AggFunc::Sum);
    s.set(vec![Value::str("a")], vec![10]);
    s.set(vec![Value::str("b")], vec![5]);
    let opts = SortOptions::default();
    let fmt = parse("%s %@d %@d\n").unwrap();
    assert_eq!(printa_format(&fmt, &[&c, &s], &opts), "b 0 5\na 2 10\n");
    let by_sum = SortOptions {
        position: 1,
        ..opts
    };
    assert_eq!(printa_format(&fmt, &[&c, &s], &by_sum), "b 0 5\na 2 10\n");
    let row = |k: &str, x: i64, y: i64| format!("  {k:<50} {x:>16} {y:>16}\n");
    assert_eq!(
        printa(&[&c, &s], &opts, StackFormat::default()),
        format!("\n{}{}", row("b", 0, 5), row("a", 2, 10))
    );
    let q = {
        let mut q = Aggregation::new("q", AggFunc::Quantize);
        bump(&mut q, vec![], quantize_bucket(0), 1);
        q
    };
    let fmt = parse("hist:%@d").unwrap();
    assert_eq!(
        printa_format(&fmt, &[&q], &opts),
        format!("hist:{HEADER}              -1 |                                         0        \n               0 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@ 1        \n               1 |                                         0        \n")
    );
}

#[test]
fn printed_aggregations_are_skipped_at_exit() {
    let mut a = keyed_counts();
    a.printed = true;
    let mut b = Aggregation::new("b", AggFunc::Count);
    b.set(vec![], vec![4]);
    let opts = SortOptions::default();
    assert_eq!(
        render_exit(&[a.clone(), b.clone()], &opts, StackFormat::default()),
        "\n                4\n"
    );
    a.printed = false;
    let rev = SortOptions {
        reverse: true,
        ..opts
    };
    assert!(render_exit(&[a, b], &rev, StackFormat::default())
        .starts_with("\n                4\n  bash"));
}

#[test]
fn trunc_clear_normalize() {
    let mut s = Aggregation::new("s", AggFunc::Sum);
    for k in 1..=5 {
        s.set(vec![Value::i32(k)], vec![(k * 10) as u64]);
    }
    let opts = SortOptions::default();
    let mut top = s.clone();
    top.trunc(2);
    assert_eq!(
        render_exit(&[top], &opts, StackFormat::default()),
        "\n        4               40\n        5               50\n"
    );
    let mut bottom = s.clone();
    bottom.trunc(-2);
    assert_eq!(
        render_exit(&[bottom], &opts, StackFormat::default()),
        "\n        1               10\n        2               20\n"
    );
    let mut none = s.clone();
    none.trunc(0);
    assert_eq!(render_exit(&[none], &opts, StackFormat::default()), "\n");

    let mut cleared = s.clone();
    cleared.clear();
    assert_eq!(
        render_exit(&[cleared], &opts, StackFormat::default()),
        "\n        1                0\n        2                0\n        3                0\n        4                0\n        5                0\n"
    );

    let mut n = Aggregation::new("n", AggFunc::Sum);
    n.set(vec![Value::str("x")], vec![100]);
    n.set(vec![Value::str("y")], vec![(-10i64) as u64]);
    n.normalize(10);
    let fmt = parse("%s=%@d ").unwrap();
    // printa divides sums as signed numbers...
    assert_eq!(printa_format(&fmt, &[&n], &opts), "y=-1 x=10 ");
    // ...the default layout as unsigned ones, as DTrace does.
    let line = |k: &str, v: i64| format!("  {k:<50} {v:>16}\n");
    assert_eq!(
        render_exit(&[n.clone()], &opts, StackFormat::default()),
        format!("\n{}{}", line("y", 1844674407370955160), line("x", 10))
    );
    n.denormalize();
    assert_eq!(printa_format(&fmt, &[&n], &opts), "y=-10 x=100 ");
}

#[test]
fn folded_stacks_at_exit() {
    use dtrace_consumer::{Frame, Place};
    let frame = |symbol: &str, offset| Frame {
        address: 0x1000 + offset,
        place: Place::Symbol {
            module: "vmlinux".into(),
            symbol: symbol.into(),
            offset,
        },
    };
    let stack = |leaf_offset| Value::Stack {
        raw: vec![leaf_offset],
        frames: vec![frame("leaf", leaf_offset), frame("root", 0x10)],
    };
    let mut s = Aggregation::new("s", AggFunc::Count);
    s.set(vec![Value::str("sh"), stack(1)], vec![2]);
    s.set(vec![Value::str("sh"), stack(2)], vec![3]);
    let mut c = Aggregation::new("c", AggFunc::Count);
    c.set(vec![Value::str("sh")], vec![4]);
    let opts = SortOptions::default();
    // The stack-keyed aggregation folds (one line, offsets gone); the other prints as DTrace's.
    assert_eq!(
        render_exit(&[s.clone(), c.clone()], &opts, StackFormat::Folded),
        "\nsh;vmlinux`root;vmlinux`leaf 5\n  sh                                                                4\n"
    );
    assert!(render_exit(&[s], &opts, StackFormat::default()).contains("vmlinux`leaf+0x1"));
}

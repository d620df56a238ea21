//! What a `probe!` costs while nobody traces it: `disabled_cost [N]` runs a loop of N
//! iterations (default 500 million) with and without a two-argument probe whose second
//! argument is an expensive call, and prints the difference per iteration, in ns; it checks
//! that the call was never made. A benchmark (docs/BENCHMARKS.md), not a test.

use std::hint::black_box;
use std::time::Instant;

static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[inline(never)]
fn expensive(x: u64) -> u64 {
    CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    (0..100).fold(x, |a, b| a.wrapping_mul(31).wrapping_add(b))
}

#[inline(never)]
fn plain(n: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        acc = acc.wrapping_add(black_box(i));
    }
    acc
}

#[inline(never)]
fn probed(n: u64) -> u64 {
    let mut acc = 0u64;
    for i in 0..n {
        let i = black_box(i);
        dtrace_usdt::probe!(bench, hit, i, expensive(i));
        acc = acc.wrapping_add(i);
    }
    acc
}

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .map_or(500_000_000, |a| a.parse().expect("N"));
    let mut best = [f64::MAX; 2];
    for _ in 0..5 {
        for (k, f) in [plain as fn(u64) -> u64, probed].into_iter().enumerate() {
            let t = Instant::now();
            black_box(f(n));
            best[k] = best[k].min(t.elapsed().as_nanos() as f64 / n as f64);
        }
    }
    assert_eq!(
        CALLS.load(std::sync::atomic::Ordering::Relaxed),
        0,
        "arguments evaluated"
    );
    println!(
        "loop {:.3} ns/iteration, with a disabled probe {:.3} ns/iteration: {:.3} ns per disabled probe",
        best[0],
        best[1],
        best[1] - best[0]
    );
}

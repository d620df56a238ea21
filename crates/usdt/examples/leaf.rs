//! A probe site in a leaf function that keeps data below the stack pointer: `leaf [COUNT]`
//! (default 20,000) calls `leaf(k)`, which stores twelve words on its stack, fires
//! `leaf:::go` between storing and summing them, and returns the sum; it prints how many
//! sums were wrong (`bad N`). An optimized uprobe on the 5-byte site pushes below the stack
//! pointer, so a site that let the function keep those words in the red zone would make
//! the sums wrong while traced.

use std::ptr::{read_volatile, write_volatile};

#[inline(never)]
fn leaf(a: i64) -> i64 {
    let mut buf = [0i64; 12];
    for (i, slot) in buf.iter_mut().enumerate() {
        // SAFETY: `slot` is a valid, aligned element of a live local array.
        unsafe { write_volatile(slot, a + i as i64) };
    }
    dtrace_usdt::probe!(leaf, go);
    let mut sum = 0;
    for slot in &buf {
        // SAFETY: as above.
        sum += unsafe { read_volatile(slot) };
    }
    sum
}

fn main() {
    let count: i64 = std::env::args()
        .nth(1)
        .map_or(20_000, |a| a.parse().expect("COUNT"));
    let bad = (0..count).filter(|&k| leaf(k) != 12 * k + 66).count();
    println!("bad {bad}");
}

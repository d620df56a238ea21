//! Fires USDT probes in a loop, for trying tracers on and for the tests of the note reader.
//!
//! `ticker [COUNT] [DELAY_MS]` (defaults: 10 iterations, no delay). Each iteration fires
//! `ticker:::tick` (iteration, item name as a C string), `ticker:::item-done` (iteration,
//! its negation, name, a byte), and `ticker:::many` with 12 arguments of mixed types (each
//! only while it is enabled); it prints one line per iteration saying whether `tick` is
//! enabled.

use std::ffi::CString;
use std::time::Duration;

fn main() {
    let mut args = std::env::args().skip(1);
    let count: u64 = args.next().map_or(10, |a| a.parse().expect("COUNT"));
    let delay_ms: u64 = args.next().map_or(0, |a| a.parse().expect("DELAY_MS"));
    for i in 0..count {
        let name = CString::new(format!("item-{i}")).unwrap();
        dtrace_usdt::probe!(ticker, tick, i, name.as_c_str());
        dtrace_usdt::probe!(ticker, item__done, i, -(i as i64), name.as_c_str(), 3u8);
        dtrace_usdt::probe!(
            ticker, many, 1u8, -2i16, 3u32, -4i64, 5usize, -6i32, 7u64, 8u16, 9i8, true, 'k', 12u64
        );
        println!(
            "{i} tick {}",
            if dtrace_usdt::enabled!(ticker, tick) {
                "enabled"
            } else {
                "disabled"
            }
        );
        if delay_ms > 0 {
            std::thread::sleep(Duration::from_millis(delay_ms));
        }
    }
}

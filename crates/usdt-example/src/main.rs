//! A program whose probes are declared once, in `src/myapp.d`: `myapp-example [COUNT]`
//! fires `myapp:::start(i, "item-i")` and `myapp:::item-done(i, 100 * i)` for each of COUNT
//! items (default 3), then `myapp:::stop`, and prints whether `start` was traced.

use std::ffi::CString;

include!(concat!(env!("OUT_DIR"), "/myapp.rs"));

fn main() {
    let count: i32 = std::env::args()
        .nth(1)
        .map_or(3, |a| a.parse().expect("COUNT"));
    let mut traced = false;
    for i in 0..count {
        let name = CString::new(format!("item-{i}")).expect("no NUL");
        traced |= myapp_start_enabled!();
        myapp_start!(i, name.as_c_str());
        myapp_item__done!(i, 100 * i as u64);
    }
    myapp_stop!();
    println!("start {}", if traced { "traced" } else { "not traced" });
}

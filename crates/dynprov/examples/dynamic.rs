//! A program defining a provider at run time: `dynamic [PROVIDER] [COUNT] [wait]` creates
//! PROVIDER (default `dynrust`) with probes `fire(int i, char *name)` and `done(uint64_t)`,
//! prints `ready` (and with `wait`, waits for a line on stdin), fires `fire` COUNT times
//! (default 3) while it is enabled, then `done(COUNT)`, removes the provider, and prints
//! how many `fire`s were enabled.

use std::ffi::CString;

fn main() {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "dynrust".into());
    let count: u64 = args.next().map_or(3, |a| a.parse().expect("COUNT"));
    let wait = args.next().as_deref() == Some("wait");
    let mut b = dtrace_dynprov::Builder::new(&name);
    b.probe("fire", &["int", "char *"]).expect("probe");
    b.probe("done", &["uint64_t"]).expect("probe");
    let provider = b.enable().expect("enable");
    println!("ready");
    if wait {
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).expect("stdin");
    }
    let fire = provider.probe("fire").expect("fire");
    let mut enabled = 0;
    for i in 0..count {
        if fire.enabled() {
            enabled += 1;
            let s = CString::new(format!("item-{i}")).expect("no NUL");
            fire.fire(&[i, s.as_ptr() as u64]);
        }
    }
    provider.probe("done").expect("done").fire(&[count]);
    drop(provider);
    println!("enabled {enabled}");
}

//! Measures how long parsing the running kernel's BTF takes, and how long
//! the lazily built indexes take on first use.
//!
//! `cargo run --release -p dtrace-btf --example parse_time [path]`

use std::time::{Duration, Instant};

use dtrace_btf::{Btf, Kind, VMLINUX_PATH};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| VMLINUX_PATH.to_string());
    let bytes = std::fs::read(&path)?;
    let mut best = Duration::MAX;
    for _ in 0..20 {
        let start = Instant::now();
        let btf = Btf::parse(&bytes)?;
        best = best.min(start.elapsed());
        std::hint::black_box(btf);
    }
    let btf = Btf::parse(&bytes)?;
    println!(
        "{path}: {} bytes, {} types, parse {:.2} ms (best of 20)",
        bytes.len(),
        btf.len(),
        best.as_secs_f64() * 1e3
    );
    let start = Instant::now();
    let task = btf.find(Kind::Struct, "task_struct");
    println!(
        "name index built on first find: {:.2} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    let start = Instant::now();
    let comm_len = btf.enum_value("TASK_COMM_LEN");
    println!(
        "enum index built on first lookup: {:.2} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    println!("task_struct = {task:?}, TASK_COMM_LEN = {comm_len:?}");
    Ok(())
}

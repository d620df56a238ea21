//! What a record's wakeup policy costs the writing CPU, measured with `BPF_PROG_TEST_RUN`
//! (a benchmark, not a test; docs/BENCHMARKS.md): the same 32-byte `bpf_ringbuf_output`
//! written
//!
//! - `no wakeup`: with `BPF_RB_NO_WAKEUP`;
//! - `valve`: as `dtrace` writes records, `bpf_ringbuf_query(BPF_RB_AVAIL_DATA)` first and
//!   `BPF_RB_FORCE_WAKEUP` past half the buffer, else `BPF_RB_NO_WAKEUP`;
//! - `forced wakeup`: with `BPF_RB_FORCE_WAKEUP` (the interrupt work of a wakeup, with no
//!   reader waiting, so without the context switch a waiting reader adds).
//!
//! Each round runs each program `--batch` times in a row (alternating the order), then
//! reads the ring empty; the per-record time includes the test-run system call, the same
//! for all three, so the differences are what matter.
//!
//! Usage (root): cargo run --release -p dtrace-runtime --example ringbuf_flags -- [ROUNDS] [BATCH]

use std::time::Instant;

use dtrace_ebpf::{
    helpers, Insn, Size, BPF_ADD, BPF_JLE, BPF_PSEUDO_MAP_FD, R0, R1, R10, R2, R3, R4,
};
use dtrace_runtime::{Map, MapSpec, MapType, Program, ProgramSpec, ProgramType, RingBuf};

const RING: u32 = 64 << 20;
const RECORD: i32 = 32;

/// A raw tracepoint program writing one `RECORD`-byte record with `flags` (or the valve).
fn writer(ring: &Map, flags: Option<i32>) -> Program {
    let mut insns = Vec::new();
    for off in (0..RECORD).step_by(8) {
        insns.push(Insn::st(Size::DW, R10, (off - RECORD) as i16, off));
    }
    match flags {
        Some(flags) => insns.push(Insn::mov64_imm(R4, flags)),
        None => {
            insns.extend(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, ring.fd(), 0));
            insns.extend([
                Insn::mov64_imm(R2, helpers::BPF_RB_AVAIL_DATA),
                Insn::call(helpers::RINGBUF_QUERY),
                Insn::mov64_imm(R4, helpers::BPF_RB_NO_WAKEUP),
                Insn::jmp_imm(BPF_JLE, R0, (RING / 2) as i32, 1),
                Insn::mov64_imm(R4, helpers::BPF_RB_FORCE_WAKEUP),
            ]);
        }
    }
    insns.extend(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, ring.fd(), 0));
    insns.extend([
        Insn::mov64_reg(R2, R10),
        Insn::alu64_imm(BPF_ADD, R2, -RECORD),
        Insn::mov64_imm(R3, RECORD),
        Insn::call(helpers::RINGBUF_OUTPUT),
        Insn::exit(),
    ]);
    Program::load(&ProgramSpec::new(
        ProgramType::RawTracepoint,
        "rb_flags",
        &insns,
    ))
    .unwrap_or_else(|e| panic!("{e}"))
}

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (rounds, batch) = (arg(1, 21), arg(2, 100_000));
    let ring = Map::create(&MapSpec {
        map_type: MapType::RingBuf,
        key_size: 0,
        value_size: 0,
        max_entries: RING,
        flags: 0,
        name: "rb_flags".into(),
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let mut reader = RingBuf::new(&ring).unwrap_or_else(|e| panic!("{e}"));
    let programs = [
        ("no wakeup", writer(&ring, Some(helpers::BPF_RB_NO_WAKEUP))),
        ("valve", writer(&ring, None)),
        (
            "forced wakeup",
            writer(&ring, Some(helpers::BPF_RB_FORCE_WAKEUP)),
        ),
    ];
    let mut samples = vec![Vec::new(); programs.len()];
    for round in 0..rounds {
        let mut order: Vec<usize> = (0..programs.len()).collect();
        if round % 2 == 1 {
            order.reverse();
        }
        for i in order {
            let start = Instant::now();
            for _ in 0..batch {
                let r0 = programs[i].1.test_run(&[0; 8]).expect("test run");
                assert_eq!(r0, 0, "{}: the ring buffer was full", programs[i].0);
            }
            samples[i].push(start.elapsed().as_nanos() as f64 / batch as f64);
            reader.consume(|_| {});
        }
    }
    println!("| record written with | ns per test-run, median | best |");
    println!("|---|---:|---:|");
    for ((name, _), s) in programs.iter().zip(&mut samples) {
        s.sort_by(f64::total_cmp);
        println!("| {name} | {:.1} | {:.1} |", s[s.len() / 2], s[0]);
    }
    println!("\n{rounds} rounds of {batch} test-runs per program.");
}

//! What a sleepable fentry program costs per fire against the same program not sleepable
//! (a benchmark, not a test; docs/BENCHMARKS.md): the per-fire price of loading a system
//! call's entry probe as a sleepable fentry program (`crate::syscall_fentry` of dtrace).
//!
//! The kernel lets fentry sleep on the functions of its error-injection list and on a few
//! of its own test functions, `bpf_fentry_test1` among them, which `BPF_PROG_TEST_RUN` of
//! any fentry program calls once per run; so each program here is attached to
//! `bpf_fentry_test1` and fired by test-running a trigger program. Each program reads 8
//! bytes of this process's memory (`bpf_probe_read_user`, or `bpf_copy_from_user` when
//! sleepable) and counts the fire in a per-CPU array, as a dtrace clause does. Each round
//! times, for each program in turn, `BATCH` test runs with nothing attached, then as many
//! with the program attached; the difference per run is the program's cost per fire, trampoline included.
//!
//! Usage (root, on a kernel that loads fentry programs):
//! cargo run --release -p dtrace --example sleepable_fentry -- [ROUNDS] [BATCH]

use std::time::Instant;

use dtrace_ebpf::{helpers, Insn, Size, BPF_ADD, BPF_JEQ, BPF_PSEUDO_MAP_FD, R0, R1, R10, R2, R3};
use dtrace_runtime::{AttachType, Link, Map, MapSpec, MapType, Program, ProgramSpec, ProgramType};

/// What the programs read.
static DATA: [u8; 8] = *b"untouch\0";

/// An fentry program on `target`; `sleepable` or not, reading `DATA` (whose address is in
/// `addr`) and counting in `count`.
fn program(target: u32, sleepable: bool, addr: &Map, count: &Map) -> Program {
    let mut insns = vec![Insn::st(Size::W, R10, -4, 0)];
    let lookup = |insns: &mut Vec<Insn>, map: &Map| {
        insns.extend(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, map.fd(), 0));
        insns.extend([
            Insn::mov64_reg(R2, R10),
            Insn::alu64_imm(BPF_ADD, R2, -4),
            Insn::call(helpers::MAP_LOOKUP_ELEM),
            Insn::jmp_imm(BPF_JEQ, R0, 0, 1),
            Insn::ja(1),
            Insn::exit(),
        ]);
    };
    lookup(&mut insns, addr);
    let read = if sleepable {
        helpers::COPY_FROM_USER
    } else {
        helpers::PROBE_READ_USER
    };
    insns.extend([
        Insn::ldx(Size::DW, R3, R0, 0),
        Insn::mov64_reg(R1, R10),
        Insn::alu64_imm(BPF_ADD, R1, -16),
        Insn::mov64_imm(dtrace_ebpf::R2, 8),
        Insn::call(read),
    ]);
    lookup(&mut insns, count);
    insns.extend([
        Insn::ldx(Size::DW, R1, R0, 0),
        Insn::alu64_imm(BPF_ADD, R1, 1),
        Insn::stx(Size::DW, R0, 0, R1),
        Insn::mov64_imm(R0, 0),
        Insn::exit(),
    ]);
    load(
        target,
        if sleepable { "fe_sleep" } else { "fe_plain" },
        &insns,
        sleepable,
    )
}

fn load(target: u32, name: &str, insns: &[Insn], sleepable: bool) -> Program {
    let spec = ProgramSpec {
        expected_attach_type: Some(AttachType::TraceFentry),
        attach_btf_id: target,
        sleepable,
        ..ProgramSpec::new(ProgramType::Tracing, name, insns)
    };
    Program::load(&spec).unwrap_or_else(|e| panic!("loading {name}: {e}"))
}

fn array(name: &str, map_type: MapType) -> Map {
    Map::create(&MapSpec {
        map_type,
        key_size: 4,
        value_size: 8,
        max_entries: 1,
        flags: 0,
        name: name.into(),
    })
    .unwrap_or_else(|e| panic!("{e}"))
}

fn main() {
    let arg = |i: usize, default: usize| {
        std::env::args()
            .nth(i)
            .map_or(default, |a| a.parse().expect("a number"))
    };
    let (rounds, batch) = (arg(1, 11), arg(2, 20_000));
    let target = dtrace_backend::types::kernel::vmlinux()
        .and_then(|btf| btf.find(dtrace_btf::Kind::Func, "bpf_fentry_test1"))
        .expect("kernel BTF describes bpf_fentry_test1");
    let addr = array("fe_addr", MapType::Array);
    let count = array("fe_count", MapType::PercpuArray);
    let at = (DATA.as_ptr() as u64).to_ne_bytes();
    addr.update(&0u32.to_ne_bytes(), &at, dtrace_runtime::Update::Any)
        .unwrap_or_else(|e| panic!("{e}"));
    let trigger = load(
        target,
        "fe_trigger",
        &[Insn::mov64_imm(R0, 0), Insn::exit()],
        false,
    );
    let programs = [
        ("not sleepable", program(target, false, &addr, &count)),
        ("sleepable", program(target, true, &addr, &count)),
    ];
    let time = || {
        let start = Instant::now();
        for _ in 0..batch {
            trigger.test_run(&[]).unwrap_or_else(|e| panic!("{e}"));
        }
        start.elapsed().as_nanos() as f64 / batch as f64
    };
    let mut extra = vec![Vec::new(); programs.len()];
    for round in 0..rounds {
        for k in 0..programs.len() {
            // Alternating which goes first; each against a base timed just before it.
            let i = (round + k) % programs.len();
            let base = time();
            let link = Link::raw_tracepoint(&programs[i].1, None).unwrap_or_else(|e| panic!("{e}"));
            extra[i].push(time() - base);
            drop(link);
        }
    }
    println!("{rounds} rounds of {batch} fires, median extra ns per fire:");
    for ((name, _), mut ns) in programs.iter().zip(extra) {
        ns.sort_by(f64::total_cmp);
        println!(
            "  {name:<14} {:8.1}  (range {:.1} to {:.1})",
            ns[ns.len() / 2],
            ns[0],
            ns[ns.len() - 1]
        );
    }
}

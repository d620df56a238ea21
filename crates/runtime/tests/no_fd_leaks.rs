//! Everything the runtime hands out closes its descriptors on drop, on success and on error.
//! (Alone in its own test binary so that no other test opens descriptors meanwhile.)

use std::time::Duration;

use dtrace_ebpf::{Insn, BPF_PSEUDO_MAP_FD, R0, R1, R10, R2, R3, R4};
use dtrace_runtime::{
    tracefs, Link, Map, MapSpec, MapType, PerfEvent, Program, ProgramSpec, ProgramType, RingBuf,
    Sampling, Update,
};

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn map(map_type: MapType, key_size: u32, value_size: u32, max_entries: u32) -> Map {
    Map::create(&MapSpec {
        map_type,
        key_size,
        value_size,
        max_entries,
        flags: 0,
        name: "leak_test".into(),
    })
    .unwrap()
}

fn load(prog_type: ProgramType, insns: &[Insn]) -> dtrace_runtime::Result<Program> {
    Program::load(&ProgramSpec::new(prog_type, "leak_test", insns))
}

fn exercise_everything() {
    let hash = map(MapType::Hash, 4, 8, 8);
    hash.update(&[1; 4], &[2; 8], Update::Any).unwrap();
    assert_eq!(hash.keys().count(), 1);
    let percpu = map(MapType::PercpuArray, 4, 8, 1);
    assert!(percpu.lookup_percpu(&[0; 4]).unwrap().is_some());

    let rbmap = map(MapType::RingBuf, 0, 0, 4096);
    let mut rb = RingBuf::new(&rbmap).unwrap();
    let mut insns = vec![Insn::st(dtrace_ebpf::Size::DW, R10, -8, 77)];
    insns.extend(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, rbmap.fd(), 0));
    insns.extend([
        Insn::mov64_reg(R2, R10),
        Insn::alu64_imm(dtrace_ebpf::BPF_ADD, R2, -8),
        Insn::mov64_imm(R3, 8),
        Insn::mov64_imm(R4, 0),
        Insn::call(dtrace_ebpf::helpers::RINGBUF_OUTPUT),
        Insn::exit(),
    ]);
    let begin = load(ProgramType::RawTracepoint, &insns).unwrap();
    assert_eq!(begin.test_run(&[]).unwrap(), 0);
    assert!(rb.wait(Duration::from_secs(1)).unwrap());
    assert_eq!(rb.consume(|r| assert_eq!(r, 77u64.to_ne_bytes())), 1);

    let nop = [Insn::mov64_imm(R0, 0), Insn::exit()];
    let bad = [Insn::mov64_reg(R0, R2), Insn::exit()];
    assert!(load(ProgramType::RawTracepoint, &bad).is_err());

    let profile = load(ProgramType::PerfEvent, &nop).unwrap();
    let event = PerfEvent::cpu_clock(0, Sampling::FrequencyHz(97)).unwrap();
    let _timer = Link::perf_event(&profile, event).unwrap();
    assert!(PerfEvent::cpu_clock(1 << 20, Sampling::FrequencyHz(97)).is_err());

    let raw = load(ProgramType::RawTracepoint, &nop).unwrap();
    let _sys_enter = Link::raw_tracepoint(&raw, Some("sys_enter")).unwrap();
    assert!(Link::raw_tracepoint(&raw, Some("no_such_tracepoint")).is_err());

    let id = tracefs::tracepoint_id("sched", "sched_switch").unwrap();
    let tp = load(ProgramType::Tracepoint, &nop).unwrap();
    let _switch = Link::perf_event(&tp, PerfEvent::tracepoint(id).unwrap()).unwrap();
}

#[test]
fn dropping_everything_closes_every_fd() {
    // Warm up once so lazily opened process-wide descriptors are not counted as leaks.
    exercise_everything();
    let before = open_fds();
    exercise_everything();
    exercise_everything();
    assert_eq!(open_fds(), before);
}

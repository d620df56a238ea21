//! A process killed with SIGKILL leaves nothing attached: the kernel objects live only as
//! long as the descriptors. (Alone in its own test binary because it forks.)

use std::time::{Duration, Instant};

use dtrace_ebpf::{Insn, Size, BPF_ADD, BPF_JNE, BPF_PSEUDO_MAP_FD, R0, R1, R10, R2};
use dtrace_runtime::{
    Link, Map, MapSpec, MapType, PerfEvent, Program, ProgramSpec, ProgramType, Sampling,
};

fn count(map: &Map) -> u64 {
    let value = map.lookup(&0u32.to_ne_bytes()).unwrap().unwrap();
    u64::from_ne_bytes(value.try_into().unwrap())
}

/// How much `map[0]` grows while this thread keeps CPU 0 busy for 50 ms.
fn growth_while_spinning(map: &Map) -> u64 {
    let before = count(map);
    let start = Instant::now();
    while start.elapsed() < Duration::from_millis(50) {
        std::hint::spin_loop();
    }
    count(map) - before
}

#[test]
fn sigkill_detaches_the_programs_of_the_killed_process() {
    // SAFETY: cpu_set_t is plain data; we pin this thread to CPU 0.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(0, &mut set);
        assert_eq!(
            libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set),
            0
        );
    }
    let map = Map::create(&MapSpec {
        map_type: MapType::Array,
        key_size: 4,
        value_size: 8,
        max_entries: 1,
        flags: 0,
        name: "sigkill".into(),
    })
    .unwrap();
    let mut insns = vec![Insn::st(Size::W, R10, -4, 0)];
    insns.extend(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, map.fd(), 0));
    insns.extend([
        Insn::mov64_reg(R2, R10),
        Insn::alu64_imm(BPF_ADD, R2, -4),
        Insn::call(dtrace_ebpf::helpers::MAP_LOOKUP_ELEM),
        Insn::jmp_imm(BPF_JNE, R0, 0, 1),
        Insn::exit(),
        Insn::mov64_imm(R1, 1),
        Insn::atomic_add(Size::DW, R0, 0, R1),
        Insn::mov64_imm(R0, 0),
        Insn::exit(),
    ]);
    let prog = Program::load(&ProgramSpec::new(ProgramType::PerfEvent, "sigkill", &insns)).unwrap();
    let event = PerfEvent::cpu_clock(0, Sampling::PeriodNs(1_000_000)).unwrap();
    let link = Link::perf_event(&prog, event).unwrap();

    // SAFETY: the child only calls the async-signal-safe pause() until it is killed.
    let child = unsafe { libc::fork() };
    assert!(child >= 0);
    if child == 0 {
        loop {
            // SAFETY: pause has no preconditions.
            unsafe { libc::pause() };
        }
    }
    // Our copies are gone, but the child's inherited descriptors keep the timer attached.
    drop(link);
    drop(prog);
    assert!(growth_while_spinning(&map) > 10);

    // SAFETY: child is our own child process.
    unsafe {
        assert_eq!(libc::kill(child, libc::SIGKILL), 0);
        assert_eq!(libc::waitpid(child, std::ptr::null_mut(), 0), child);
    }
    assert_eq!(growth_while_spinning(&map), 0);
}

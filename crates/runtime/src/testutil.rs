//! Helpers shared by this crate's kernel tests: small maps, programs and CPU pinning.

use dtrace_ebpf::{helpers, Insn, Size, BPF_JNE, BPF_PSEUDO_MAP_FD, R0, R1, R10, R2};

use crate::{Map, MapSpec, MapType, Program, ProgramSpec, ProgramType};

/// A map of type `map_type` with u32 keys and `value_size`-byte values.
pub fn map(map_type: MapType, value_size: u32, max_entries: u32) -> Map {
    Map::create(&MapSpec {
        map_type,
        key_size: 4,
        value_size,
        max_entries,
        flags: 0,
        name: format!("test_{map_type:?}"),
    })
    .unwrap()
}

/// A ring buffer map of `size` bytes.
pub fn ringbuf(size: u32) -> Map {
    Map::create(&MapSpec {
        map_type: MapType::RingBuf,
        key_size: 0,
        value_size: 0,
        max_entries: size,
        flags: 0,
        name: "test_ringbuf".into(),
    })
    .unwrap()
}

/// Loads `insns` as a program of type `prog_type`.
pub fn load(prog_type: ProgramType, insns: &[Insn]) -> Program {
    match Program::load(&ProgramSpec::new(prog_type, "test", insns)) {
        Ok(p) => p,
        Err(e) => panic!("{e}"),
    }
}

/// `r0 = &map[0]` (or exit with 0 if absent); clobbers r1-r5.
pub fn lookup_key0(map: &Map) -> Vec<Insn> {
    let mut v = vec![Insn::st(Size::W, R10, -4, 0)];
    v.extend(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, map.fd(), 0));
    v.extend([
        Insn::mov64_reg(R2, R10),
        Insn::alu64_imm(dtrace_ebpf::BPF_ADD, R2, -4),
        Insn::call(helpers::MAP_LOOKUP_ELEM),
        Insn::jmp_imm(BPF_JNE, R0, 0, 2),
        Insn::mov64_imm(R0, 0),
        Insn::exit(),
    ]);
    v
}

/// A program that atomically adds 1 to the u64 at `map[0]` and returns 0.
pub fn counter(map: &Map) -> Vec<Insn> {
    let mut v = lookup_key0(map);
    v.extend([
        Insn::mov64_imm(R1, 1),
        Insn::atomic_add(Size::DW, R0, 0, R1),
        Insn::mov64_imm(R0, 0),
        Insn::exit(),
    ]);
    v
}

/// The u64 at `map[0]` of an array map.
pub fn read_key0(map: &Map) -> u64 {
    let value = map.lookup(&0u32.to_ne_bytes()).unwrap().unwrap();
    u64::from_ne_bytes(value[..8].try_into().unwrap())
}

/// Pins the calling thread to `cpu`.
pub fn pin_to_cpu(cpu: usize) {
    crate::cpus::pin(cpu as u32).expect("pin to a CPU");
}

/// Keeps the calling thread busy for `d`.
pub fn spin(d: std::time::Duration) {
    let start = std::time::Instant::now();
    while start.elapsed() < d {
        std::hint::spin_loop();
    }
}

/// Makes `n` getppid(2) calls.
pub fn getppid_times(n: usize) {
    for _ in 0..n {
        // SAFETY: getppid has no preconditions.
        unsafe { libc::getppid() };
    }
}

/// The id of the vmlinux BTF type named `name` of kind `kind` (8 = typedef). A minimal
/// scanner, enough to test BTF-typed attachment without depending on the BTF crate.
pub fn vmlinux_btf_id(name: &str, kind: u32) -> Option<u32> {
    let btf = std::fs::read("/sys/kernel/btf/vmlinux").ok()?;
    let u32_at = |off: usize| u32::from_le_bytes(btf[off..off + 4].try_into().unwrap());
    let hdr_len = u32_at(4) as usize;
    let (type_off, type_len) = (u32_at(8) as usize, u32_at(12) as usize);
    let str_start = hdr_len + u32_at(16) as usize;
    let mut off = hdr_len + type_off;
    let mut id = 1;
    while off < hdr_len + type_off + type_len {
        let (name_off, info) = (u32_at(off) as usize, u32_at(off + 4));
        let (this_kind, vlen) = ((info >> 24) & 0x1f, (info & 0xffff) as usize);
        let s = &btf[str_start + name_off..];
        if this_kind == kind && s.starts_with(name.as_bytes()) && s[name.len()] == 0 {
            return Some(id);
        }
        off += 12
            + match this_kind {
                1 | 14 | 17 => 4,
                3 => 12,
                4 | 5 | 15 | 19 => 12 * vlen,
                6 | 13 => 8 * vlen,
                _ => 0,
            };
        id += 1;
    }
    None
}

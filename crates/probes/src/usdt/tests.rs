//! Tests of the USDT note reader against `readelf -n`, on C programs built with gcc and
//! `<sys/sdt.h>` (Debian: systemtap-sdt-dev) and on the `dtrace-usdt` crate's example, and
//! end to end: uprobes attached at the sites found, with their semaphores, on this kernel.

use super::*;
use dtrace_ebpf::{helpers, Insn, Size, BPF_ADD, BPF_JNE, BPF_PSEUDO_MAP_FD, R0, R1, R10, R2};
use dtrace_runtime::uprobe::{attach_uprobe_multi, UprobeLink, UprobeSite};
use dtrace_runtime::{AttachType, Map, MapSpec, MapType, Program, ProgramSpec, ProgramType};
use std::path::PathBuf;
use std::process::Command;

/// Probes without semaphores, with register, constant, rip-relative and memory operands.
const MAIN_C: &str = r#"
#include <sys/sdt.h>
#include <stdlib.h>

int counter = 5;
struct pair { long a; int b; };
void sema(const char *s);

__attribute__((noinline)) void regs(int x, long y) { DTRACE_PROBE2(demo, regs, x, y); }
__attribute__((noinline)) void konst(void) { STAP_PROBE2(demo, konst, 42, -7); }
__attribute__((noinline)) void global(void) { DTRACE_PROBE1(demo, global, counter); }
__attribute__((noinline)) void field(struct pair *p) { DTRACE_PROBE1(demo, field, p->b); }
__attribute__((noinline)) void narrow(char c, unsigned short s) { DTRACE_PROBE2(demo, narrow, c, s); }
int main(int argc, char **argv) {
    struct pair p = { 1, argc };
    int n = argc > 1 ? atoi(argv[1]) : 1;
    for (int i = 0; i < n; i++) {
        regs(i, -i); konst(); global(); field(&p); narrow(i, i); sema("hello");
    }
    return 0;
}
"#;

/// A probe with a semaphore (sys/sdt.h takes semaphores per translation unit), reached
/// only while the semaphore is nonzero.
const SEMA_C: &str = r#"
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
unsigned short demo_sema__hit_semaphore __attribute__((unused)) __attribute__((section(".probes")));
__attribute__((noinline)) void sema(const char *s) {
    if (*(volatile unsigned short *)&demo_sema__hit_semaphore) DTRACE_PROBE1(demo, sema__hit, s);
}
"#;

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("dtrace-usdt-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// Builds the demo program from MAIN_C and SEMA_C.
    fn demo(&self, opt: &str) -> PathBuf {
        std::fs::write(self.path("main.c"), MAIN_C).unwrap();
        std::fs::write(self.path("sema.c"), SEMA_C).unwrap();
        let exe = self.path("demo");
        run_ok(
            Command::new("gcc")
                .arg(opt)
                .arg("-o")
                .arg(&exe)
                .arg(self.path("main.c"))
                .arg(self.path("sema.c")),
            "gcc (is systemtap-sdt-dev installed?)",
        );
        exe
    }

    /// Builds crates/usdt/examples/ticker.rs with rustc (no cargo: no build-lock games).
    fn ticker(&self) -> PathBuf {
        let usdt = Path::new(env!("CARGO_MANIFEST_DIR")).join("../usdt");
        let rlib = self.path("libdtrace_usdt.rlib");
        run_ok(
            Command::new("rustc")
                .args(["--edition", "2021", "--crate-type", "rlib"])
                .args(["--crate-name", "dtrace_usdt", "-o"])
                .arg(&rlib)
                .arg(usdt.join("src/lib.rs")),
            "rustc (dtrace-usdt)",
        );
        let exe = self.path("ticker");
        run_ok(
            Command::new("rustc")
                .args(["--edition", "2021", "-C", "opt-level=1", "--extern"])
                .arg(format!("dtrace_usdt={}", rlib.display()))
                .arg("-o")
                .arg(&exe)
                .arg(usdt.join("examples/ticker.rs")),
            "rustc (ticker example)",
        );
        exe
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run_ok(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What `readelf -n` says of each stapsdt note: (provider, name, pc, base, semaphore, args).
fn readelf_notes(path: &Path) -> Vec<(String, String, u64, u64, u64, String)> {
    let text = run_ok(Command::new("readelf").arg("-n").arg(path), "readelf -n");
    let hex = |s: &str| u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).unwrap();
    let mut out = Vec::new();
    let mut lines = text.lines().map(str::trim);
    while let Some(line) = lines.next() {
        let Some(provider) = line.strip_prefix("Provider: ") else {
            continue;
        };
        let name = lines.next().unwrap().strip_prefix("Name: ").unwrap();
        let loc = lines.next().unwrap();
        let fields: Vec<u64> = loc
            .split(", ")
            .map(|f| hex(f.split_once(": ").unwrap().1))
            .collect();
        let args = lines
            .next()
            .unwrap()
            .strip_prefix("Arguments:")
            .unwrap()
            .trim();
        out.push((
            provider.to_string(),
            name.to_string(),
            fields[0],
            fields[1],
            fields[2],
            args.to_string(),
        ));
    }
    out
}

/// `sys/sdt.h`'s site: a 1-byte `nop`.
const NOP1: &[u8] = &[0x90];
/// The `dtrace-usdt` crate's site: `nopl 0x0(%rax,%rax,1)`.
const NOP5: &[u8] = &[0x0f, 0x1f, 0x44, 0x00, 0x00];

/// Checks `probes` against `readelf -n` of `path`, and that every site is the `nop` given
/// and every semaphore a zero `u16` in the file (so the offsets are right).
fn check_against_readelf(path: &Path, probes: &[UsdtProbe], nop: &[u8]) {
    let expected = readelf_notes(path);
    assert!(!expected.is_empty());
    let got: Vec<_> = probes
        .iter()
        .map(|p| {
            (
                p.provider.clone(),
                p.name.clone(),
                p.pc,
                p.semaphore,
                p.arg_spec.clone(),
            )
        })
        .collect();
    let want: Vec<_> = expected
        .iter()
        .map(|(prov, name, pc, _, sem, args)| (prov.clone(), name.clone(), *pc, *sem, args.clone()))
        .collect();
    assert_eq!(got, want);
    let bytes = std::fs::read(path).unwrap();
    for p in probes {
        let at = p.pc_offset as usize;
        assert_eq!(
            &bytes[at..at + nop.len()],
            nop,
            "{}:{} is not at the nop",
            p.provider,
            p.name
        );
        if p.semaphore != 0 {
            let at = p.semaphore_offset as usize;
            assert_eq!(&bytes[at..at + 2], &[0, 0], "{}:{}", p.provider, p.name);
        }
        assert!(p.args.is_ok(), "{:?}", p.args);
    }
}

fn reg(reg: Reg) -> ArgLocation {
    ArgLocation::Register {
        reg,
        high_byte: false,
    }
}

fn arg(size: u8, signed: bool, location: ArgLocation) -> UsdtArg {
    UsdtArg {
        size,
        signed,
        float: false,
        location,
    }
}

fn by_name<'a>(probes: &'a [UsdtProbe], name: &str) -> &'a UsdtProbe {
    probes.iter().find(|p| p.name == name).unwrap()
}

fn symbol(path: &Path, name: &str) -> u64 {
    let data = std::fs::read(path).unwrap();
    let elf = Elf::parse(&data).unwrap();
    elf.symbols()
        .unwrap()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap()
        .value
}

#[test]
fn sdt_h_notes_match_readelf() {
    let scratch = Scratch::new("sdt");
    let exe = scratch.demo("-O2");
    let probes = read_probes(&exe).unwrap();
    check_against_readelf(&exe, &probes, NOP1);
    assert_eq!(probes.len(), 6);

    let regs = by_name(&probes, "regs");
    assert_eq!(regs.provider, "demo");
    assert_eq!(regs.function.as_deref(), Some("regs"));
    assert_eq!(regs.semaphore_offset, 0);
    assert_eq!(
        regs.args,
        Ok(vec![
            arg(4, true, reg(Reg::Rdi)),
            arg(8, true, reg(Reg::Rsi))
        ])
    );
    assert_eq!(
        by_name(&probes, "konst").args,
        Ok(vec![
            arg(4, true, ArgLocation::Immediate(42)),
            arg(4, true, ArgLocation::Immediate(-7))
        ])
    );
    assert_eq!(
        by_name(&probes, "global").args,
        Ok(vec![arg(
            4,
            true,
            ArgLocation::RipRelative {
                symbol: "counter".into(),
                offset: 0,
                address: Some(symbol(&exe, "counter"))
            }
        )])
    );
    assert_eq!(
        by_name(&probes, "field").args,
        Ok(vec![arg(
            4,
            true,
            ArgLocation::Memory {
                base: Some(Reg::Rdi),
                index: None,
                scale: 1,
                offset: 8,
                symbol: None
            }
        )])
    );
    assert_eq!(
        by_name(&probes, "narrow").args,
        Ok(vec![
            arg(1, true, reg(Reg::Rdi)),
            arg(2, false, reg(Reg::Rsi))
        ])
    );
    let sema = by_name(&probes, "sema__hit");
    assert_eq!(sema.d_name(), "sema-hit");
    assert_eq!(sema.function.as_deref(), Some("sema"));
    assert_eq!(sema.semaphore, symbol(&exe, "demo_sema__hit_semaphore"));
    assert_ne!(sema.semaphore_offset, 0);
    assert_eq!(sema.args, Ok(vec![arg(8, false, reg(Reg::Rdi))]));

    // Unoptimised code keeps arguments in stack slots: memory operands off %rbp.
    let exe0 = scratch.demo("-O0");
    let probes0 = read_probes(&exe0).unwrap();
    check_against_readelf(&exe0, &probes0, NOP1);
    assert!(probes0.iter().any(|p| matches!(
        p.args.as_deref(),
        Ok([
            UsdtArg {
                location: ArgLocation::Memory {
                    base: Some(Reg::Rbp),
                    ..
                },
                ..
            },
            ..
        ])
    )));
}

#[test]
fn prelinked_files_are_adjusted_by_the_base() {
    let scratch = Scratch::new("prelink");
    let exe = scratch.demo("-O2");
    let mut data = std::fs::read(&exe).unwrap();
    let original = parse_probes(&data).unwrap();
    // Pretend the file was linked 0x10 bytes lower than .stapsdt.base now sits: rewrite the
    // base and the addresses of every note as a prelinker moving the file would have left them.
    let notes = Elf::parse(&data)
        .unwrap()
        .section(".note.stapsdt")
        .unwrap()
        .offset as usize;
    let mut at = notes;
    for p in &original {
        let namesz = u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        let descsz = u32::from_le_bytes(data[at + 4..at + 8].try_into().unwrap()) as usize;
        let desc = at + 12 + namesz.div_ceil(4) * 4;
        for (field, value) in [
            (0, p.pc),
            (8, elf::u64_at(&data, desc + 8).unwrap()),
            (16, p.semaphore),
        ] {
            let moved = if value == 0 { 0 } else { value - 0x10 };
            data[desc + field..desc + field + 8].copy_from_slice(&moved.to_le_bytes());
        }
        at = desc + descsz.div_ceil(4) * 4;
    }
    let adjusted = parse_probes(&data).unwrap();
    assert_eq!(adjusted, original);
}

#[test]
fn files_without_notes_and_bad_files() {
    let exe = std::env::current_exe().unwrap();
    assert_eq!(read_probes(&exe).unwrap(), vec![]);
    let err = read_probes(Path::new("/no/such/file")).unwrap_err();
    assert!(err.to_string().starts_with("/no/such/file: "), "{err}");
    assert_eq!(
        parse_probes(b"#!/bin/sh\n").unwrap_err().to_string(),
        "not an ELF file"
    );
    // Truncated: an error, not a panic.
    let data = std::fs::read("/bin/true").unwrap();
    for len in [5, 64, 200, data.len() / 2] {
        assert!(parse_probes(&data[..len]).is_err(), "{len} bytes");
    }
}

#[test]
fn rust_usdt_crate_example_notes() {
    let scratch = Scratch::new("ticker");
    let exe = scratch.ticker();
    let probes = read_probes(&exe).unwrap();
    check_against_readelf(&exe, &probes, NOP5);
    let names: Vec<_> = probes
        .iter()
        .map(|p| (p.provider.as_str(), p.d_name()))
        .collect();
    assert_eq!(
        names,
        [
            ("ticker", "tick".to_string()),
            ("ticker", "item-done".to_string()),
            ("ticker", "many".to_string())
        ]
    );
    for (p, nargs) in probes.iter().zip([2, 4, 12]) {
        let args = p.args.as_ref().unwrap();
        assert_eq!(args.len(), nargs, "{}", p.name);
        for a in args {
            assert!(a.size == 8 && a.signed, "{a:?}");
            assert!(matches!(a.location, ArgLocation::Register { .. }), "{a:?}");
        }
        assert_ne!(p.semaphore, 0);
        assert!(
            p.function.as_deref().unwrap_or("").contains("ticker4main"),
            "{:?}",
            p.function
        );
    }
    let base = Elf::parse(&std::fs::read(&exe).unwrap())
        .unwrap()
        .section(".stapsdt.base")
        .map(|s| s.addr);
    assert!(matches!(base, Some(a) if a != 0), "{base:?}");
}

/// A uprobe_multi program that adds 1 to `map[cookie]`, and its map.
fn counter_by_cookie() -> (Map, Program) {
    let map = Map::create(&MapSpec {
        map_type: MapType::Array,
        key_size: 4,
        value_size: 8,
        max_entries: 16,
        flags: 0,
        name: "usdt_test".into(),
    })
    .unwrap();
    let mut insns = vec![
        Insn::call(helpers::GET_ATTACH_COOKIE),
        Insn::stx(Size::W, R10, -4, R0),
    ];
    insns.extend(Insn::ld_map(R1, BPF_PSEUDO_MAP_FD, map.fd(), 0));
    insns.extend([
        Insn::mov64_reg(R2, R10),
        Insn::alu64_imm(BPF_ADD, R2, -4),
        Insn::call(helpers::MAP_LOOKUP_ELEM),
        Insn::jmp_imm(BPF_JNE, R0, 0, 2),
        Insn::mov64_imm(R0, 0),
        Insn::exit(),
        Insn::mov64_imm(R1, 1),
        Insn::atomic_add(Size::DW, R0, 0, R1),
        Insn::mov64_imm(R0, 0),
        Insn::exit(),
    ]);
    let spec = ProgramSpec {
        expected_attach_type: Some(AttachType::TraceUprobeMulti),
        ..ProgramSpec::new(ProgramType::Kprobe, "usdt_test", &insns)
    };
    let prog = Program::load(&spec).unwrap_or_else(|e| panic!("{e}"));
    (map, prog)
}

fn count(map: &Map, key: u32) -> u64 {
    let v = map.lookup(&key.to_ne_bytes()).unwrap().unwrap();
    u64::from_ne_bytes(v[..8].try_into().unwrap())
}

/// Attaches to the `chosen` probes (cookie = index in `probes`) with their semaphores.
fn attach(exe: &Path, probes: &[UsdtProbe], chosen: &[&str], prog: &Program) -> UprobeLink {
    let sites: Vec<UprobeSite> = probes
        .iter()
        .enumerate()
        .filter(|(_, p)| chosen.contains(&p.name.as_str()))
        .map(|(i, p)| UprobeSite {
            offset: p.pc_offset,
            ref_ctr_offset: p.semaphore_offset,
            cookie: i as u64,
        })
        .collect();
    attach_uprobe_multi(prog, exe, &sites, None, false).unwrap()
}

#[test]
fn uprobes_at_sdt_h_sites_fire_and_set_semaphores() {
    let scratch = Scratch::new("sdt-fire");
    let exe = scratch.demo("-O2");
    let probes = read_probes(&exe).unwrap();
    let (map, prog) = counter_by_cookie();
    let all: Vec<&str> = probes.iter().map(|p| p.name.as_str()).collect();
    let link = attach(&exe, &probes, &all, &prog);
    run_ok(Command::new(&exe).arg("9"), "demo");
    for (i, p) in probes.iter().enumerate() {
        // sema__hit fires only because attaching it raised its semaphore.
        assert_eq!(count(&map, i as u32), 9, "{}", p.name);
    }
    drop(link);
    run_ok(Command::new(&exe).arg("9"), "demo");
    assert_eq!(count(&map, 0), 9);
}

#[test]
fn uprobes_at_rust_usdt_sites_fire_and_flip_enabled() {
    let scratch = Scratch::new("ticker-fire");
    let exe = scratch.ticker();
    let probes = read_probes(&exe).unwrap();
    let output = |n: &str| run_ok(Command::new(&exe).arg(n), "ticker");

    assert_eq!(output("2"), "0 tick disabled\n1 tick disabled\n");
    let (map, prog) = counter_by_cookie();
    let link = attach(&exe, &probes, &["tick", "many"], &prog);
    assert_eq!(
        output("3"),
        "0 tick enabled\n1 tick enabled\n2 tick enabled\n"
    );
    // tick and many fire; item__done (lazy, not attached, so its semaphore is 0) does not.
    assert_eq!([count(&map, 0), count(&map, 1), count(&map, 2)], [3, 0, 3]);
    drop(link);
    // Unregistering may finish a moment after the link's descriptor is closed.
    let mut after = output("1");
    for _ in 0..100 {
        if after == "0 tick disabled\n" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
        after = output("1");
    }
    assert_eq!(after, "0 tick disabled\n");

    let (map, prog) = counter_by_cookie();
    let _link = attach(&exe, &probes, &["item__done"], &prog);
    output("4");
    assert_eq!([count(&map, 0), count(&map, 1), count(&map, 2)], [0, 4, 0]);
}

//! `-S` (or `-x verbose`): listings of the generated eBPF code on stderr, in DTrace's
//! format, which `-x disasm=N` picks as DTrace's bits do. Bit 1 lists each clause's own
//! code, from the first program it was compiled into (the probe's prologue and the
//! program's exit, shared by its clauses, are not in it); bit 2 each probe's whole program
//! as generated; bit 4 the linked program, the same code (there is no separate link step
//! here); bit 8 the final program, as it is loaded (user-memory reads in their sleepable
//! forms where the program is loaded sleepable), then the helper programs.

use dtrace_backend::program::ProgramSpec;
use dtrace_ebpf::disasm::{listing, Symbols};

use crate::compile::Compilation;
use crate::user_reads::Reads;

/// Each clause's code (DTrace's default).
pub const CLAUSE: u32 = 1;
/// Each probe's program as generated.
const PROGRAM: u32 = 2;
/// Each probe's program once linked.
const LINKED: u32 = 4;
/// Each probe's program as loaded, and the helper programs.
const FINAL: u32 = 8;

/// The `disasm` option's value as DTrace reads it (`atoi`: leading blanks, a sign, the
/// digits up to the first other character, 0 without any); negative or missing values
/// are refused.
pub fn parse(value: Option<&str>) -> Option<u32> {
    let text = value?.trim_start();
    let (negative, rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit);
    let magnitude = digits.fold(0i64, |n, d| {
        n.saturating_mul(10).saturating_add(i64::from(d - b'0'))
    });
    // C's atoi keeps the low 32 bits of what it read.
    let value = if negative { -magnitude } else { magnitude } as i32;
    u32::try_from(value).ok()
}

/// The clause listings `bits` asks for: each DTrace statement once, in order, from the
/// first program its clause was compiled into.
pub fn clauses(comp: &Compilation, bits: u32) -> String {
    if bits & CLAUSE == 0 {
        return String::new();
    }
    let symbols = symbols(comp);
    let mut out = String::new();
    for (n, description) in comp.statements.iter().enumerate() {
        let found = comp.compiled.programs.iter().find_map(|p| {
            let clause = p
                .clauses
                .iter()
                .find(|c| c.statements.contains(&(n as u32)))?;
            Some(&p.code.insns[clause.insns.clone()])
        });
        if let Some(insns) = found {
            let title = format!("clause {description}, <dt_clause_{n}>");
            out.push_str(&listing(&title, insns, &symbols));
        }
    }
    out
}

/// The program listings `bits` asks for, as DTrace makes them: every program as
/// generated, then for each probe its linked and final program; then the helpers.
pub fn programs(comp: &Compilation, bits: u32) -> String {
    let symbols = symbols(comp);
    let programs = &comp.compiled.programs;
    let mut out = String::new();
    let title = |kind: &str, p: &ProgramSpec| format!("{kind} {}", p.probe.full_name());
    if bits & PROGRAM != 0 {
        for p in programs {
            out.push_str(&listing(&title("program", p), &p.code.insns, &symbols));
        }
    }
    for p in programs {
        if bits & LINKED != 0 {
            out.push_str(&listing(
                &title("linked program", p),
                &p.code.insns,
                &symbols,
            ));
        }
        if bits & FINAL != 0 {
            let mut symbols = symbols.clone();
            let mut insns = p.code.insns.clone();
            // As loaded: where its user-memory reads sleep, in their sleepable forms.
            if let Reads::Sleepable(kfunc) = crate::load::program_reads(p, &comp.probes) {
                dtrace_backend::sleepable::make_sleepable(&mut insns, kfunc);
                symbols
                    .kfuncs
                    .push((kfunc, crate::user_reads::COPY_STR_KFUNC));
            }
            out.push_str(&listing(&title("final program", p), &insns, &symbols));
        }
    }
    if bits & FINAL != 0 {
        for helper in &comp.compiled.helpers {
            let kind = helper.kind;
            let title = format!("helper program {}, <{}>", kind.tracepoint(), kind.purpose());
            out.push_str(&listing(&title, &helper.code.insns, &symbols));
        }
    }
    out
}

/// The names the listings give maps.
fn symbols(comp: &Compilation) -> Symbols<'_> {
    Symbols {
        maps: comp.compiled.maps.iter().map(|m| m.name.as_str()).collect(),
        kfuncs: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_value_as_c_atoi_does() {
        assert_eq!(parse(Some("12")), Some(12));
        assert_eq!(parse(Some(" +8x")), Some(8));
        assert_eq!(parse(Some("abc")), Some(0));
        assert_eq!(parse(Some("")), Some(0));
        assert_eq!(parse(Some("-1")), None);
        assert_eq!(parse(Some("4294967295")), None);
        assert_eq!(parse(None), None);
    }
}

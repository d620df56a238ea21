//! USDT probe discovery: the `.note.stapsdt` notes of ELF executables and shared libraries,
//! as written by systemtap's `sys/sdt.h` (`DTRACE_PROBEn`, `STAP_PROBEn`), the Rust USDT
//! crates (ours is `dtrace-usdt`), and the runtimes that embed them (PostgreSQL, Python,
//! Node, the JVM...).
//!
//! Each note (owner `"stapsdt"`, type 3) describes one probe site: its address, the address
//! of `_.stapsdt.base` when it was linked, its is-enabled semaphore's address (0 if none),
//! then the provider, the name and the argument specs. [`read_probes`] turns each into a
//! [`UsdtProbe`] ready for the kernel: the site and the semaphore as *file offsets* (what a
//! uprobe and its `ref_ctr_offset` take), the enclosing function, and the parsed arguments.
//!
//! Binaries linked with a `dtrace -G` object also carry the probes' declared argument
//! types and translated-argument mapping in `.note.dtrace` notes (`dtrace_sdt::typenote`),
//! kept in [`UsdtProbe::declared`].
//!
//! If the file was prelinked (moved after linking), the `.stapsdt.base` section no longer
//! sits at the address the note recorded; the difference is added to the site and the
//! semaphore addresses, as systemtap, BCC and bpftrace do. Addresses are converted to file
//! offsets through the `PT_LOAD` program header holding them.
//!
//! ELF files are read with the workspace's own reader (`dtrace-elf`, re-exported as
//! [`elf`]), which refuses anything but little-endian files with a clear error; a 32-bit
//! program's notes hold 4-byte addresses. Argument specs are parsed for x86_64 and i386
//! (see [`args`]); on other machines the notes are still read and [`UsdtProbe::args`] says
//! why the arguments are not.

pub mod args;
pub use dtrace_elf as elf;

use std::path::Path;

pub use args::{parse_arg, parse_arg_spec, ArgLocation, ArgSpecError, Reg, UsdtArg};
pub use elf::ElfError;

use elf::{Elf, Symbol, EM_386, EM_X86_64};

/// `NT_STAPSDT`.
const NT_STAPSDT: u32 = 3;

/// One probe site from a `.note.stapsdt` note.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsdtProbe {
    pub provider: String,
    /// As in the note: `__` in it is `-` in D (`file__start` is `file-start`).
    pub name: String,
    /// The site's link-time virtual address (after the prelink adjustment).
    pub pc: u64,
    /// The site's file offset: where to put the uprobe.
    pub pc_offset: u64,
    /// The semaphore's link-time virtual address, 0 if the probe has none.
    pub semaphore: u64,
    /// The semaphore's file offset (the uprobe's `ref_ctr_offset`), 0 if none.
    pub semaphore_offset: u64,
    /// The function the site is in, from the symbol table (mangled), if it names one.
    pub function: Option<String>,
    /// The argument specs as written in the note (`"-4@%edi 8@%rsi"`).
    pub arg_spec: String,
    /// The parsed arguments, with rip-relative and absolute symbols resolved.
    pub args: Result<Vec<UsdtArg>, ArgSpecError>,
    /// The probe's declared argument types, translated arguments and their mapping, when
    /// the binary was linked with a `dtrace -G` object (its `.note.dtrace` notes).
    pub declared: Option<dtrace_sdt::ProbeDef>,
}

impl UsdtProbe {
    /// The probe's name as D spells it: `__` becomes `-`.
    pub fn d_name(&self) -> String {
        self.name.replace("__", "-")
    }
}

/// Why probes could not be read from a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsdtError {
    pub path: String,
    pub reason: String,
}

impl std::fmt::Display for UsdtError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.reason)
    }
}

impl std::error::Error for UsdtError {}

/// The USDT probe sites of the ELF file at `path`, in note order (empty if it has none).
pub fn read_probes(path: &Path) -> Result<Vec<UsdtProbe>, UsdtError> {
    let error = |reason: String| UsdtError {
        path: path.display().to_string(),
        reason,
    };
    let data = std::fs::read(path).map_err(|e| error(e.to_string()))?;
    parse_probes(&data).map_err(|e| error(e.to_string()))
}

/// The D source texts (types and translators) the ELF file at `path` carries in its
/// `.note.dtrace` notes (`dtrace_sdt::typenote::NT_D_SOURCE`), in order; none if it has
/// no such notes.
pub fn read_d_sources(path: &Path) -> Result<Vec<String>, UsdtError> {
    let error = |reason: String| UsdtError {
        path: path.display().to_string(),
        reason,
    };
    let data = std::fs::read(path).map_err(|e| error(e.to_string()))?;
    let elf = Elf::parse(&data).map_err(|e| error(e.to_string()))?;
    let notes = elf
        .notes(dtrace_sdt::typenote::SECTION)
        .map_err(|e| error(e.to_string()))?;
    Ok(notes
        .into_iter()
        .filter(|&(owner, kind, _)| {
            owner == dtrace_sdt::typenote::OWNER.as_bytes()
                && kind == dtrace_sdt::typenote::NT_D_SOURCE
        })
        .map(|(_, _, desc)| dtrace_sdt::typenote::source_text(desc))
        .collect())
}

/// The USDT probe sites of an ELF file's bytes.
pub fn parse_probes(data: &[u8]) -> Result<Vec<UsdtProbe>, ElfError> {
    let elf = Elf::parse(data)?;
    let notes = elf.notes(".note.stapsdt")?;
    if notes.is_empty() {
        return Ok(Vec::new());
    }
    let base_section = elf.section(".stapsdt.base").map(|s| s.addr);
    // A program may have two such sections: `-G`'s, not loaded, and a loaded one of
    // `DTRACE_D_SOURCE` notes.
    let declared: Vec<_> = elf
        .notes(dtrace_sdt::typenote::SECTION)?
        .into_iter()
        .filter(|&(owner, kind, _)| {
            owner == dtrace_sdt::typenote::OWNER.as_bytes()
                && kind == dtrace_sdt::typenote::NT_PROBE_TYPES
        })
        .filter_map(|(_, _, desc)| dtrace_sdt::typenote::probe_types(desc))
        .collect();
    let mut symbols = elf.symbols()?;
    symbols.sort_by_key(|s| s.value);
    let mut probes = Vec::new();
    for (owner, kind, desc) in notes {
        if owner != b"stapsdt" || kind != NT_STAPSDT {
            continue;
        }
        let bad = |what: &str| ElfError(format!("malformed .note.stapsdt note: {what}"));
        // Three addresses (the site, `.stapsdt.base`, the semaphore): words of the
        // file's class.
        let w = if elf.is_32 { 4 } else { 8 };
        let address = |i: usize| match w {
            4 => elf::u32_at(desc, i * 4).map(u64::from),
            _ => elf::u64_at(desc, i * 8),
        };
        let mut pc = address(0).map_err(|_| bad("too short"))?;
        let base = address(1).map_err(|_| bad("too short"))?;
        let mut semaphore = address(2).map_err(|_| bad("too short"))?;
        let mut strings = desc[3 * w..].split(|&b| b == 0);
        let mut next = |what: &str| {
            strings
                .next()
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .ok_or_else(|| bad(&format!("no {what}")))
        };
        let provider = next("provider")?;
        let name = next("name")?;
        let arg_spec = next("arguments").unwrap_or_default();
        if let Some(actual) = base_section {
            if base != 0 && actual != base {
                let delta = actual.wrapping_sub(base);
                pc = pc.wrapping_add(delta);
                if semaphore != 0 {
                    semaphore = semaphore.wrapping_add(delta);
                }
            }
        }
        let pc_offset = elf.vaddr_to_offset(pc).ok_or_else(|| {
            bad(&format!(
                "probe {provider}:{name} at {pc:#x} is in no loadable segment"
            ))
        })?;
        let semaphore_offset = match semaphore {
            0 => 0,
            sem => elf.vaddr_to_offset(sem).ok_or_else(|| {
                bad(&format!(
                    "semaphore of {provider}:{name} at {sem:#x} is in no loadable segment"
                ))
            })?,
        };
        // i386 programs' operands name the same registers (`%eax`, `4@8(%esp)`), which
        // a 32-bit task's `pt_regs` holds in the same slots.
        let args = if elf.machine == EM_X86_64 || elf.machine == EM_386 {
            parse_arg_spec(&arg_spec).map(|args| resolve_symbols(args, &symbols))
        } else {
            Err(ArgSpecError {
                arg: arg_spec.clone(),
                reason: format!(
                    "argument specs of ELF machine {} are not supported",
                    elf.machine
                ),
            })
        };
        let declared = declared
            .iter()
            .find(|t| t.provider == provider && t.probe.name == name)
            .map(|t| t.probe.clone());
        probes.push(UsdtProbe {
            declared,
            function: enclosing_function(&symbols, pc),
            provider,
            name,
            pc,
            pc_offset,
            semaphore,
            semaphore_offset,
            arg_spec,
            args,
        });
    }
    Ok(probes)
}

/// The function symbol (sorted by address) whose extent holds `pc`.
fn enclosing_function(symbols: &[Symbol], pc: u64) -> Option<String> {
    let end = symbols.partition_point(|s| s.value <= pc);
    symbols[..end]
        .iter()
        .rev()
        .find(|s| s.is_func && pc - s.value < s.size.max(1))
        .map(|s| s.name.clone())
}

/// Fills in the link-time address of symbols named by rip-relative and absolute operands.
fn resolve_symbols(mut args: Vec<UsdtArg>, symbols: &[Symbol]) -> Vec<UsdtArg> {
    for arg in &mut args {
        if let ArgLocation::RipRelative {
            symbol,
            offset,
            address,
        }
        | ArgLocation::Absolute {
            symbol,
            offset,
            address,
        } = &mut arg.location
        {
            *address = symbols
                .iter()
                .find(|s| s.name == *symbol)
                .map(|s| s.value.wrapping_add(*offset as u64));
        }
    }
    args
}

#[cfg(test)]
mod tests;

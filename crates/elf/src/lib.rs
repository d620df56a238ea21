//! A minimal little-endian ELF reader (ELF64, and ELF32 for i386 programs): section
//! headers, program headers, notes and function/object symbols — what USDT discovery (the
//! probes crate) and user-space symbolization (the consumer) need and nothing more. Every
//! read is bounds-checked; a malformed file gives an error, never a panic.
//!
//! # Why a hand-written ELF reader
//!
//! The `object` crate would do (its MSRV is below ours, and with only the `read_core` and
//! `elf` features it is small), but what we need is a few hundred lines of bounds-checked
//! little-endian reads — section and program headers, notes, symbols of one class and byte
//! order — and the workspace avoids dependencies it can write in a page (the `ebpf` and `btf`
//! crates made the same call), which also keeps build time down on small CI machines. It
//! refuses anything but little-endian files with a clear error. It is a crate of its
//! own so that the consumer reads symbols without depending on the probes crate.

mod debugfile;
mod functions;
mod minidebuginfo;

pub use debugfile::debug_file;
pub use functions::{function_symbols, AliasRank};

use std::ops::Range;

/// Why a file could not be read as ELF.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfError(pub String);

impl std::fmt::Display for ElfError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ElfError {}

type Result<T> = std::result::Result<T, ElfError>;

fn bad(what: &str) -> ElfError {
    ElfError(format!("malformed ELF file: {what}"))
}

pub const SHT_SYMTAB: u32 = 2;
pub const SHT_NOTE: u32 = 7;
pub const SHT_NOBITS: u32 = 8;
pub const SHT_DYNSYM: u32 = 11;
pub const PT_LOAD: u32 = 1;
/// `e_machine` of x86_64.
pub const EM_X86_64: u16 = 62;
/// `e_machine` of i386 (32-bit x86 programs).
pub const EM_386: u16 = 3;

/// A section header.
#[derive(Clone, Debug)]
pub struct Section {
    pub name: String,
    pub kind: u32,
    pub addr: u64,
    pub offset: u64,
    pub size: u64,
    pub link: u32,
    /// `sh_flags` ([`SHF_COMPRESSED`]...).
    pub flags: u64,
}

/// `sh_flags` of a section whose data is compressed (behind an `Elf64_Chdr`).
pub const SHF_COMPRESSED: u64 = 0x800;

/// A program header.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    pub kind: u32,
    pub offset: u64,
    pub vaddr: u64,
    pub filesz: u64,
    pub memsz: u64,
}

/// One ELF note: owner name (without its NUL), type and descriptor bytes.
pub type Note<'a> = (&'a [u8], u32, &'a [u8]);

/// A defined function or object symbol.
#[derive(Clone, Debug)]
pub struct Symbol {
    pub name: String,
    pub value: u64,
    pub size: u64,
    pub is_func: bool,
    /// `STB_LOCAL` (a `static` function), not global or weak.
    pub is_local: bool,
}

/// A parsed little-endian ELF file, borrowing its bytes.
pub struct Elf<'a> {
    data: &'a [u8],
    pub machine: u16,
    /// The entry point's address (`e_entry`; 0 for most shared libraries).
    pub entry: u64,
    /// ELF32 (`ELFCLASS32`): addresses and sizes are 4 bytes.
    pub is_32: bool,
    pub sections: Vec<Section>,
    pub segments: Vec<Segment>,
}

impl<'a> Elf<'a> {
    pub fn parse(data: &'a [u8]) -> Result<Elf<'a>> {
        if data.get(..4) != Some(b"\x7fELF") {
            return Err(ElfError("not an ELF file".into()));
        }
        let is_32 = match (data.get(4), data.get(5)) {
            (Some(1), Some(1)) => true,
            (Some(2), Some(1)) => false,
            _ => {
                return Err(ElfError(
                    "only little-endian ELF files (32 or 64-bit) are supported".into(),
                ))
            }
        };
        let mut elf = Elf {
            data,
            machine: u16_at(data, 0x12)?,
            entry: if is_32 {
                u32_at(data, 0x18)?.into()
            } else {
                u64_at(data, 0x18)?
            },
            is_32,
            sections: Vec::new(),
            segments: Vec::new(),
        };
        // A word (address, offset, size) of the file's class at `at`.
        let word = |at: usize| -> Result<u64> {
            if is_32 {
                u32_at(data, at).map(u64::from)
            } else {
                u64_at(data, at)
            }
        };
        // Header field offsets: ELF32's, or ELF64's.
        let (phoff_at, shoff_at, sizes_at) = if is_32 {
            (0x1c, 0x20, 0x2a)
        } else {
            (0x20, 0x28, 0x36)
        };
        let (phoff, phentsize, phnum) = (
            word(phoff_at)?,
            u16_at(data, sizes_at)? as u64,
            u16_at(data, sizes_at + 2)? as u64,
        );
        for i in 0..phnum {
            let at = to_usize(phoff + i * phentsize)?;
            elf.segments.push(if is_32 {
                Segment {
                    kind: u32_at(data, at)?,
                    offset: word(at + 4)?,
                    vaddr: word(at + 8)?,
                    filesz: word(at + 16)?,
                    memsz: word(at + 20)?,
                }
            } else {
                Segment {
                    kind: u32_at(data, at)?,
                    offset: word(at + 8)?,
                    vaddr: word(at + 16)?,
                    filesz: word(at + 32)?,
                    memsz: word(at + 40)?,
                }
            });
        }
        let (shoff, shentsize, shnum, shstrndx) = (
            word(shoff_at)?,
            u16_at(data, sizes_at + 4)? as u64,
            u16_at(data, sizes_at + 6)? as u64,
            u16_at(data, sizes_at + 8)? as usize,
        );
        // sh_addr, sh_offset, sh_size, sh_link: after name, type and flags (a word).
        let w = if is_32 { 4 } else { 8 };
        let mut name_offsets = Vec::new();
        for i in 0..shnum {
            let at = to_usize(shoff + i * shentsize)?;
            name_offsets.push(u32_at(data, at)?);
            elf.sections.push(Section {
                name: String::new(),
                kind: u32_at(data, at + 4)?,
                addr: word(at + 8 + w)?,
                offset: word(at + 8 + 2 * w)?,
                size: word(at + 8 + 3 * w)?,
                link: u32_at(data, at + 8 + 4 * w)?,
                flags: word(at + 8)?,
            });
        }
        if let Some(strtab) = elf.sections.get(shstrndx).cloned() {
            let strings = elf.section_data(&strtab)?;
            for (section, off) in elf.sections.iter_mut().zip(name_offsets) {
                section.name = cstr_at(strings, off as usize)?.to_string();
            }
        }
        Ok(elf)
    }

    /// The bytes of `section` in the file (empty for `SHT_NOBITS`).
    pub fn section_data(&self, section: &Section) -> Result<&'a [u8]> {
        if section.kind == SHT_NOBITS {
            return Ok(&[]);
        }
        slice(self.data, section.offset, section.size)
            .ok_or_else(|| bad(&format!("section {:?} lies outside the file", section.name)))
    }

    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }

    /// The file offset that virtual address `vaddr` is loaded from: through the `PT_LOAD`
    /// segment holding it, else (files without program headers) through its section.
    pub fn vaddr_to_offset(&self, vaddr: u64) -> Option<u64> {
        let in_range = |start: u64, len: u64| vaddr >= start && vaddr - start < len;
        if let Some(seg) = self
            .segments
            .iter()
            .find(|s| s.kind == PT_LOAD && in_range(s.vaddr, s.memsz))
        {
            return Some(vaddr - seg.vaddr + seg.offset);
        }
        if self.segments.iter().any(|s| s.kind == PT_LOAD) {
            return None;
        }
        self.sections
            .iter()
            .find(|s| s.addr != 0 && in_range(s.addr, s.size))
            .map(|s| vaddr - s.addr + s.offset)
    }

    /// The notes of every `SHT_NOTE` section named `section`: (owner, type, descriptor).
    pub fn notes(&self, section: &str) -> Result<Vec<Note<'a>>> {
        let mut out = Vec::new();
        for s in self
            .sections
            .iter()
            .filter(|s| s.kind == SHT_NOTE && s.name == section)
        {
            let data = self.section_data(s)?;
            let mut at = 0usize;
            while at + 12 <= data.len() {
                let namesz = u32_at(data, at)? as usize;
                let descsz = u32_at(data, at + 4)? as usize;
                let kind = u32_at(data, at + 8)?;
                let name_at = at + 12;
                let desc_at = name_at + align4(namesz);
                let name = data
                    .get(name_at..name_at + namesz)
                    .ok_or_else(|| bad("note name runs past its section"))?;
                let desc = data
                    .get(desc_at..desc_at + descsz)
                    .ok_or_else(|| bad("note descriptor runs past its section"))?;
                let owner = name.strip_suffix(b"\0").unwrap_or(name);
                out.push((owner, kind, desc));
                at = desc_at + align4(descsz);
            }
        }
        Ok(out)
    }

    /// Defined function and object symbols of `.symtab`, or of `.dynsym` when the file
    /// has no `.symtab` (stripped).
    pub fn symbols(&self) -> Result<Vec<Symbol>> {
        let table = self
            .sections
            .iter()
            .find(|s| s.kind == SHT_SYMTAB)
            .or_else(|| self.sections.iter().find(|s| s.kind == SHT_DYNSYM));
        let Some(table) = table else {
            return Ok(Vec::new());
        };
        let strings = match self.sections.get(table.link as usize) {
            Some(s) => self.section_data(s)?,
            None => return Err(bad("symbol table without a string table")),
        };
        let data = self.section_data(table)?;
        let mut out = Vec::new();
        // Elf64_Sym: name, info, other, shndx, value, size; Elf32_Sym: name, value, size,
        // info, other, shndx.
        let (size, info_at, shndx_at) = if self.is_32 { (16, 12, 14) } else { (24, 4, 6) };
        for sym in data.chunks_exact(size) {
            let info = sym[info_at];
            let kind = info & 0xf;
            let shndx = u16_at(sym, shndx_at)?;
            // STT_OBJECT or STT_FUNC, defined in a section.
            if !(kind == 1 || kind == 2) || shndx == 0 {
                continue;
            }
            let (value, size) = if self.is_32 {
                (u32_at(sym, 4)? as u64, u32_at(sym, 8)? as u64)
            } else {
                (u64_at(sym, 8)?, u64_at(sym, 16)?)
            };
            out.push(Symbol {
                name: cstr_at(strings, u32_at(sym, 0)? as usize)?.to_string(),
                value,
                size,
                is_func: kind == 2,
                is_local: info >> 4 == 0,
            });
        }
        Ok(out)
    }
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

fn to_usize(v: u64) -> Result<usize> {
    usize::try_from(v).map_err(|_| bad("offset out of range"))
}

fn slice(data: &[u8], offset: u64, len: u64) -> Option<&[u8]> {
    let start = usize::try_from(offset).ok()?;
    let end = start.checked_add(usize::try_from(len).ok()?)?;
    data.get(start..end)
}

fn bytes<const N: usize>(data: &[u8], at: usize) -> Result<[u8; N]> {
    let range: Range<usize> = at..at.checked_add(N).ok_or_else(|| bad("offset overflow"))?;
    data.get(range)
        .map(|b| b.try_into().expect("N bytes"))
        .ok_or_else(|| bad("truncated file"))
}

pub fn u16_at(data: &[u8], at: usize) -> Result<u16> {
    bytes(data, at).map(u16::from_le_bytes)
}

pub fn u32_at(data: &[u8], at: usize) -> Result<u32> {
    bytes(data, at).map(u32::from_le_bytes)
}

pub fn u64_at(data: &[u8], at: usize) -> Result<u64> {
    bytes(data, at).map(u64::from_le_bytes)
}

/// The NUL-terminated string at `at` (lossily decoded: names are ASCII in practice).
pub fn cstr_at(data: &[u8], at: usize) -> Result<std::borrow::Cow<'_, str>> {
    let rest = data
        .get(at..)
        .ok_or_else(|| bad("string offset out of range"))?;
    let len = rest
        .iter()
        .position(|&b| b == 0)
        .ok_or_else(|| bad("unterminated string"))?;
    Ok(String::from_utf8_lossy(&rest[..len]))
}

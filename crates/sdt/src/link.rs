//! `dtrace -G -s provider.d obj.o...`: what the link of a program built the DTrace way
//! needs, written by dtrace itself (no assembler or compiler at run time):
//!
//! - **The provider object** (`-o`, else `provider.o`): each probe's is-enabled semaphore
//!   (a hidden, weak `unsigned short` in `.probes`, the symbol [`crate::semaphore_symbol`]
//!   that the `-h` header's `_ENABLED()` macros read), the probes' argument types
//!   ([`crate::typenote`]), and an empty `.note.GNU-stack` so the program's stack stays
//!   non-executable.
//! - **The program's objects, rewritten in place** where they call `__dtrace_PROV___NAME`
//!   (`DTRACE_PROBEn` of DTrace's own `sys/sdt.h`, or headers of other DTraces) or
//!   `__dtraceenabled_PROV___NAME`: each such call becomes a 5-byte nop and gets a
//!   `.note.stapsdt` note whose operands are the calling convention's argument registers
//!   (`%rdi`, `%rsi`, ... then the stack, at the types' sizes), so the site is a USDT probe
//!   like one from the header; an is-enabled call becomes `xor %eax,%eax` (never enabled);
//!   a tail call (`jmp`) becomes a 1-byte nop and a `ret`. The function keeps its call
//!   frame (the compiler emitted a call there), so the 5-byte nop is safe for optimized
//!   uprobes (see [`crate::header`]). The symbols become weak, so nothing is left to
//!   resolve. Objects without such calls (the header's sites are already notes) are not
//!   touched, so running `-G` again changes nothing.
//!
//! # Why the objects are edited by hand
//!
//! The rewrite is a few in-place byte edits (the call, its relocation's type, the
//! symbol's binding) plus sections appended at the end of the file with a new section
//! header table, so every index and offset in the object stays valid. The `object`
//! crate writes the provider object, but its ELF builder (read, modify, write) refuses
//! section groups, and every object with a header site has one (`.stapsdt.base`, as with
//! `sys/sdt.h`); this module reads only the ELF64 header, section headers, the symbol table
//! and `SHT_RELA` entries. A 32-bit (i386) program's objects are not rewritten: their sites
//! come from the header; the provider object is then written for i386 ([`data_model`]).

use std::path::{Path, PathBuf};

use object::elf;
use object::write::{Object, StandardSegment, Symbol, SymbolFlags, SymbolSection};
use object::{Architecture, BinaryFormat, Endianness, SectionKind, SymbolKind, SymbolScope};

use crate::ctype::scalar;
use crate::{semaphore_symbol, typenote, ProbeDef, ProviderDef};

/// What `-G` did to the program's objects.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Linked {
    /// Objects whose probe calls were rewritten, with the number of sites in each.
    pub rewritten: Vec<(PathBuf, usize)>,
}

/// The data model of the program's objects, as DTrace guesses it from their ELF class:
/// `true` for 32-bit (ELF32) objects. DTrace's error when they mix both; objects that are
/// not ELF files (or cannot be read) are left for [`link`] to report.
pub fn data_model(objects: &[PathBuf]) -> Result<bool, String> {
    let mut model = None;
    for path in objects {
        let mut ident = [0u8; 5];
        let read = std::fs::File::open(path)
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut ident));
        if read.is_err() || &ident[..4] != b"\x7fELF" || !matches!(ident[4], 1 | 2) {
            break;
        }
        let is_32 = ident[4] == 1;
        if model.is_some_and(|m| m != is_32) {
            return Err("can't mix 32-bit and 64-bit object files".to_string());
        }
        model = Some(is_32);
    }
    Ok(model.unwrap_or(false))
}

/// Rewrite `objects` and write the provider object to `output`: 32-bit (i386) objects
/// and provider object when `is_32` ([`data_model`]).
pub fn link(
    providers: &[ProviderDef],
    objects: &[PathBuf],
    output: &Path,
    is_32: bool,
) -> Result<Linked, String> {
    let mut linked = Linked::default();
    for path in objects {
        let data =
            std::fs::read(path).map_err(|e| format!("failed to open {}: {e}", path.display()))?;
        let rewritten = if data.get(4) == Some(&1) {
            refuse_32bit_calls(&data).map(|()| None)
        } else {
            rewrite(providers, &data)
        };
        if let Some(new) = rewritten.map_err(|e| format!("{}: {e}", path.display()))? {
            std::fs::write(path, &new.0)
                .map_err(|e| format!("failed to write {}: {e}", path.display()))?;
            linked.rewritten.push((path.clone(), new.1));
        }
    }
    let object = provider_object(providers, is_32)?;
    std::fs::write(output, object)
        .map_err(|e| format!("failed to write {}: {e}", output.display()))?;
    Ok(linked)
}

/// The provider object's bytes: ELF64 x86_64, or ELF32 i386 when `is_32`.
pub fn provider_object(providers: &[ProviderDef], is_32: bool) -> Result<Vec<u8>, String> {
    let arch = if is_32 {
        Architecture::I386
    } else {
        Architecture::X86_64
    };
    let mut obj = Object::new(BinaryFormat::Elf, arch, Endianness::Little);
    let probes = obj.add_section(
        obj.segment_name(StandardSegment::Data).to_vec(),
        b".probes".to_vec(),
        SectionKind::Data,
    );
    for p in providers {
        for probe in &p.probes {
            let offset = obj.append_section_data(probes, &[0, 0], 2);
            obj.add_symbol(Symbol {
                name: semaphore_symbol(&p.name, &probe.name).into_bytes(),
                value: offset,
                size: 2,
                kind: SymbolKind::Data,
                scope: SymbolScope::Linkage,
                weak: true,
                section: SymbolSection::Section(probes),
                flags: SymbolFlags::None,
            });
        }
    }
    let types = obj.add_section(
        Vec::new(),
        typenote::SECTION.as_bytes().to_vec(),
        SectionKind::Note,
    );
    obj.section_mut(types).flags = object::SectionFlags::Elf {
        sh_type: elf::SHT_NOTE,
        sh_flags: elf::SectionFlags(0),
    };
    obj.append_section_data(types, &typenote::encode(providers), 4);
    let stack = obj.add_section(Vec::new(), b".note.GNU-stack".to_vec(), SectionKind::Other);
    obj.section_mut(stack).flags = object::SectionFlags::Elf {
        sh_type: elf::SHT_PROGBITS,
        sh_flags: elf::SectionFlags(0),
    };
    obj.write()
        .map_err(|e| format!("failed to write the provider object: {e}"))
}

/// A 32-bit object is linked as it is when its sites are the `-h` header's (notes
/// already); calls to `__dtrace_*` probe functions are not rewritten in 32-bit code, so an
/// object with any is refused, plainly.
fn refuse_32bit_calls(data: &[u8]) -> Result<(), String> {
    let word = |at: usize| u32_at(data, at).map(u64::from);
    let (shoff, shnum) = (word(0x20)?, u16_at(data, 0x30)? as u64);
    // Elf32_Shdr: type at 4, offset at 16, size at 20, link at 24.
    let section = |i: u64| -> Result<(u32, u64, u64, u32), String> {
        let at = (shoff + i * 40) as usize;
        Ok((
            u32_at(data, at + 4)?,
            word(at + 16)?,
            word(at + 20)?,
            u32_at(data, at + 24)?,
        ))
    };
    for i in 0..shnum {
        let (kind, offset, size, link) = section(i)?;
        if kind != SHT_SYMTAB {
            continue;
        }
        let (_, str_offset, str_size, _) = section(link as u64)?;
        let strings = data
            .get(str_offset as usize..(str_offset + str_size) as usize)
            .ok_or("a section outside the file")?;
        for j in 0..size / 16 {
            let name = u32_at(data, (offset + j * 16) as usize)? as usize;
            let text = strings.get(name..).unwrap_or_default();
            if text.starts_with(b"__dtrace") {
                return Err("32-bit objects calling __dtrace_ probe functions cannot be rewritten here: use the probe macros of a header from dtrace -h".to_string());
            }
        }
    }
    Ok(())
}

/// A call to a probe function found in an object.
struct Call {
    provider: String,
    probe: String,
    enabled: bool,
}

/// `__dtrace_PROV___NAME` or `__dtraceenabled_PROV___NAME`.
fn probe_call(symbol: &[u8]) -> Option<Call> {
    let name = std::str::from_utf8(symbol).ok()?;
    let (enabled, rest) = if let Some(r) = name.strip_prefix("__dtraceenabled_") {
        (true, r)
    } else {
        (false, name.strip_prefix("__dtrace_")?)
    };
    let (provider, probe) = rest.split_once("___")?;
    Some(Call {
        provider: provider.to_string(),
        probe: probe.to_string(),
        enabled,
    })
}

/// `nopl 0x0(%rax,%rax,1)`: the probe site of a rewritten call.
const NOP5: [u8; 5] = [0x0f, 0x1f, 0x44, 0x00, 0x00];
/// A tail call's site: `nop; ret`, then a 3-byte nop never reached.
const NOP_RET: [u8; 5] = [0x90, 0xc3, 0x0f, 0x1f, 0x00];
/// An is-enabled call: `xor %eax,%eax` and a 3-byte nop (never enabled).
const XOR_EAX: [u8; 5] = [0x31, 0xc0, 0x0f, 0x1f, 0x00];
const XOR_EAX_RET: [u8; 5] = [0x31, 0xc0, 0xc3, 0x0f, 0x00];

/// A rewritten probe site: where it is and which probe it fires.
struct Site {
    offset: u64,
    provider: String,
    probe: ProbeDef,
}

/// The object rewritten, and how many sites it got; `None` if it calls no probe function.
fn rewrite(providers: &[ProviderDef], data: &[u8]) -> Result<Option<(Vec<u8>, usize)>, String> {
    let elf = Elf::parse(data)?;
    let symtab = elf.symtab()?;
    let calls: Vec<(u32, Call)> = (0..symtab.count)
        .filter_map(|i| Some((i, probe_call(elf.symbol_name(&symtab, i)?)?)))
        .collect();
    if calls.is_empty() {
        return Ok(None);
    }
    let find = |c: &Call| -> Result<ProbeDef, String> {
        let p = providers
            .iter()
            .find(|p| p.name == c.provider)
            .ok_or_else(|| format!("no such provider {}", c.provider))?;
        p.probes
            .iter()
            .find(|x| x.name == c.probe)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "no probe {} in provider {}",
                    c.probe.replace("__", "-"),
                    c.provider
                )
            })
    };
    let mut out = data.to_vec();
    let mut patched = 0;
    // Sites by the section they are in.
    let mut sites: Vec<(u32, Vec<Site>)> = Vec::new();
    for rela in (0..elf.shnum).filter(|&i| elf.section(i).sh_type == SHT_RELA) {
        let rs = elf.section(rela);
        let target = elf.section(rs.sh_info);
        for j in 0..rs.sh_size / 24 {
            let at = (rs.sh_offset + j * 24) as usize;
            let (r_offset, r_info) = (u64_at(data, at)?, u64_at(data, at + 8)?);
            let Some((_, call)) = calls.iter().find(|(i, _)| *i as u64 == r_info >> 32) else {
                continue;
            };
            let probe = find(call)?;
            let insn = r_offset
                .checked_sub(1)
                .filter(|&o| o + 5 <= target.sh_size)
                .ok_or("a probe call outside its section")?;
            let file_at = (target.sh_offset + insn) as usize;
            let (bytes, fires) = match (data.get(file_at), call.enabled) {
                (Some(0xe8), false) => (NOP5, true),
                (Some(0xe9), false) => (NOP_RET, true),
                (Some(0xe8), true) => (XOR_EAX, false),
                (Some(0xe9), true) => (XOR_EAX_RET, false),
                _ => {
                    return Err(format!(
                        "the reference to probe {}:{} at offset {r_offset:#x} is not a call",
                        call.provider, call.probe
                    ))
                }
            };
            out[file_at..file_at + 5].copy_from_slice(&bytes);
            patched += 1;
            // The relocation becomes R_X86_64_NONE against no symbol.
            out[at + 8..at + 24].fill(0);
            if fires {
                let site = Site {
                    offset: insn,
                    provider: call.provider.clone(),
                    probe,
                };
                match sites.iter_mut().find(|(t, _)| *t == rs.sh_info) {
                    Some((_, list)) => list.push(site),
                    None => sites.push((rs.sh_info, vec![site])),
                }
            }
        }
    }
    if patched == 0 {
        // Rewritten already (`-G` run again): nothing calls the probe functions.
        return Ok(None);
    }
    // Nothing refers to the probe functions any more: make them weak, so they need no
    // definition.
    for (i, _) in &calls {
        let at = (symtab.offset + *i as u64 * 24 + 4) as usize;
        out[at] = (STB_WEAK << 4) | (out[at] & 0xf);
    }
    let count = sites.iter().map(|(_, s)| s.len()).sum();
    let mut added = Vec::new();
    for (target, sites) in &sites {
        let anchor = elf.anchor(&symtab, *target)?;
        added.push(notes(sites, anchor));
    }
    append_sections(&elf, &mut out, symtab.index, &added)?;
    Ok(Some((out, count)))
}

/// A note section's contents and its relocations (`r_offset`, symbol, addend).
struct NoteSection {
    data: Vec<u8>,
    relocs: Vec<(u64, u32, i64)>,
}

/// The `.note.stapsdt` notes of `sites`, whose address fields are relocated against
/// `anchor` (a symbol of their section: index and value).
fn notes(sites: &[Site], anchor: (u32, u64)) -> NoteSection {
    let mut data = Vec::new();
    let mut relocs = Vec::new();
    for site in sites {
        let mut desc = vec![0u8; 24]; // pc (relocated), base, semaphore: none
        for text in [
            site.provider.as_str(),
            site.probe.name.as_str(),
            &specs(&site.probe),
        ] {
            desc.extend_from_slice(text.as_bytes());
            desc.push(0);
        }
        data.extend_from_slice(&8u32.to_le_bytes());
        data.extend_from_slice(&(desc.len() as u32).to_le_bytes());
        data.extend_from_slice(&3u32.to_le_bytes());
        data.extend_from_slice(b"stapsdt\0");
        relocs.push((
            data.len() as u64,
            anchor.0,
            site.offset as i64 - anchor.1 as i64,
        ));
        data.extend_from_slice(&desc);
        data.resize(data.len().next_multiple_of(4), 0);
    }
    NoteSection { data, relocs }
}

/// Append each note section and its `SHT_RELA` section to the object: their contents,
/// a section name table with their names, and a new section header table, all at the end
/// of the file, so every existing index and offset stays valid.
fn append_sections(
    elf: &Elf<'_>,
    out: &mut Vec<u8>,
    symtab: u32,
    added: &[NoteSection],
) -> Result<(), String> {
    let mut headers = out
        .get(elf.shoff as usize..elf.shoff as usize + elf.shnum as usize * 64)
        .ok_or("truncated section headers")?
        .to_vec();
    let strtab = elf.section(elf.shstrndx);
    let mut names = data_of(elf.data, &strtab)?.to_vec();
    let note_name = names.len() as u32;
    names.extend_from_slice(b".rela.note.stapsdt\0");
    let rela_name = note_name;
    let note_name = note_name + 5; // ".note.stapsdt" is the tail of ".rela.note.stapsdt"
    let append = |out: &mut Vec<u8>, bytes: &[u8], align: usize| -> u64 {
        out.resize(out.len().next_multiple_of(align), 0);
        let at = out.len() as u64;
        out.extend_from_slice(bytes);
        at
    };
    for note in added {
        let note_index = (headers.len() / 64) as u32;
        let at = append(out, &note.data, 4);
        headers.extend(section_header(
            note_name,
            SHT_NOTE,
            0,
            at,
            note.data.len() as u64,
            0,
            0,
            4,
            0,
        ));
        let mut rela = Vec::new();
        for &(offset, sym, addend) in &note.relocs {
            rela.extend_from_slice(&offset.to_le_bytes());
            rela.extend_from_slice(&(((sym as u64) << 32) | R_X86_64_64).to_le_bytes());
            rela.extend_from_slice(&addend.to_le_bytes());
        }
        let at = append(out, &rela, 8);
        headers.extend(section_header(
            rela_name,
            SHT_RELA,
            SHF_INFO_LINK,
            at,
            rela.len() as u64,
            symtab,
            note_index,
            8,
            24,
        ));
    }
    let names_at = append(out, &names, 1);
    let s = elf.shstrndx as usize * 64;
    headers[s + 24..s + 32].copy_from_slice(&names_at.to_le_bytes());
    headers[s + 32..s + 40].copy_from_slice(&(names.len() as u64).to_le_bytes());
    let shnum = u16::try_from(headers.len() / 64).map_err(|_| "too many sections")?;
    let shoff = append(out, &headers, 8);
    out[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
    out[0x3c..0x3e].copy_from_slice(&shnum.to_le_bytes());
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn section_header(
    name: u32,
    ty: u32,
    flags: u64,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
    align: u64,
    entsize: u64,
) -> Vec<u8> {
    let mut h = Vec::with_capacity(64);
    h.extend_from_slice(&name.to_le_bytes());
    h.extend_from_slice(&ty.to_le_bytes());
    h.extend_from_slice(&flags.to_le_bytes());
    h.extend_from_slice(&0u64.to_le_bytes()); // address
    h.extend_from_slice(&offset.to_le_bytes());
    h.extend_from_slice(&size.to_le_bytes());
    h.extend_from_slice(&link.to_le_bytes());
    h.extend_from_slice(&info.to_le_bytes());
    h.extend_from_slice(&align.to_le_bytes());
    h.extend_from_slice(&entsize.to_le_bytes());
    h
}

const SHT_SYMTAB: u32 = 2;
const SHT_RELA: u32 = 4;
const SHT_NOTE: u32 = 7;
const SHF_INFO_LINK: u64 = 0x40;
const STB_WEAK: u8 = 2;
const STT_SECTION: u8 = 3;
const R_X86_64_64: u64 = 1;
const SHN_LORESERVE: u16 = 0xff00;

/// The fields of a section header this module uses.
#[derive(Clone, Copy)]
struct SectionHeader {
    sh_type: u32,
    sh_offset: u64,
    sh_size: u64,
    sh_link: u32,
    sh_info: u32,
}

/// The symbol table: its section index, file offset, entry count and string table.
struct Symtab {
    index: u32,
    offset: u64,
    count: u32,
    strings: SectionHeader,
}

/// A 64-bit little-endian x86_64 relocatable object, read in place.
struct Elf<'a> {
    data: &'a [u8],
    shoff: u64,
    shnum: u32,
    shstrndx: u32,
    sections: Vec<SectionHeader>,
}

fn u16_at(d: &[u8], at: usize) -> Result<u16, String> {
    Ok(u16::from_le_bytes(
        d.get(at..at + 2)
            .ok_or("truncated object")?
            .try_into()
            .unwrap_or_default(),
    ))
}
fn u32_at(d: &[u8], at: usize) -> Result<u32, String> {
    Ok(u32::from_le_bytes(
        d.get(at..at + 4)
            .ok_or("truncated object")?
            .try_into()
            .unwrap_or_default(),
    ))
}
fn u64_at(d: &[u8], at: usize) -> Result<u64, String> {
    Ok(u64::from_le_bytes(
        d.get(at..at + 8)
            .ok_or("truncated object")?
            .try_into()
            .unwrap_or_default(),
    ))
}

fn data_of<'a>(data: &'a [u8], s: &SectionHeader) -> Result<&'a [u8], String> {
    data.get(s.sh_offset as usize..(s.sh_offset + s.sh_size) as usize)
        .ok_or_else(|| "a section outside the file".to_string())
}

impl<'a> Elf<'a> {
    fn parse(data: &'a [u8]) -> Result<Elf<'a>, String> {
        if data.get(..4) != Some(b"\x7fELF") {
            return Err("not an ELF object".to_string());
        }
        if data.get(4) != Some(&2) {
            return Err("not an ELF64 object".to_string());
        }
        if data.get(5) != Some(&1) || u16_at(data, 0x12)? != 62 || u16_at(data, 0x10)? != 1 {
            return Err("not a little-endian x86_64 relocatable object".to_string());
        }
        let shoff = u64_at(data, 0x28)?;
        let shnum = u16_at(data, 0x3c)?;
        let shstrndx = u16_at(data, 0x3e)?;
        if shnum == 0 || shnum >= SHN_LORESERVE || shstrndx >= shnum {
            return Err("unsupported section header table (extended numbering)".to_string());
        }
        let sections = (0..shnum as u64)
            .map(|i| {
                let at = (shoff + i * 64) as usize;
                Ok(SectionHeader {
                    sh_type: u32_at(data, at + 4)?,
                    sh_offset: u64_at(data, at + 24)?,
                    sh_size: u64_at(data, at + 32)?,
                    sh_link: u32_at(data, at + 40)?,
                    sh_info: u32_at(data, at + 44)?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Elf {
            data,
            shoff,
            shnum: shnum as u32,
            shstrndx: shstrndx as u32,
            sections,
        })
    }

    fn section(&self, i: u32) -> SectionHeader {
        self.sections
            .get(i as usize)
            .copied()
            .unwrap_or(SectionHeader {
                sh_type: 0,
                sh_offset: 0,
                sh_size: 0,
                sh_link: 0,
                sh_info: 0,
            })
    }

    fn symtab(&self) -> Result<Symtab, String> {
        let index = (0..self.shnum)
            .find(|&i| self.section(i).sh_type == SHT_SYMTAB)
            .ok_or("no symbol table")?;
        let s = self.section(index);
        Ok(Symtab {
            index,
            offset: s.sh_offset,
            count: (s.sh_size / 24) as u32,
            strings: self.section(s.sh_link),
        })
    }

    fn symbol_name(&self, t: &Symtab, i: u32) -> Option<&'a [u8]> {
        let name = u32_at(self.data, (t.offset + i as u64 * 24) as usize).ok()? as usize;
        let strings = data_of(self.data, &t.strings).ok()?;
        strings.get(name..)?.split(|&b| b == 0).next()
    }

    /// A symbol of section `target` to relocate against: its section symbol, else the
    /// one with the lowest value (a function's, in a text section). `(index, value)`.
    fn anchor(&self, t: &Symtab, target: u32) -> Result<(u32, u64), String> {
        (1..t.count)
            .filter_map(|i| {
                let at = (t.offset + i as u64 * 24) as usize;
                let info = *self.data.get(at + 4)?;
                let shndx = u16_at(self.data, at + 6).ok()?;
                let value = u64_at(self.data, at + 8).ok()?;
                (shndx as u32 == target).then_some((info & 0xf != STT_SECTION, value, i))
            })
            .min()
            .map(|(_, value, i)| (i, value))
            .ok_or_else(|| "no symbol in the section of a probe site".to_string())
    }
}

/// The operand specs of a rewritten call: the System V argument registers, then the stack
/// (the call's stack arguments sit at `(%rsp)` upward once the call is a nop), each at its
/// declared type's size.
fn specs(probe: &ProbeDef) -> String {
    const REGS: [[&str; 4]; 6] = [
        ["%rdi", "%edi", "%di", "%dil"],
        ["%rsi", "%esi", "%si", "%sil"],
        ["%rdx", "%edx", "%dx", "%dl"],
        ["%rcx", "%ecx", "%cx", "%cl"],
        ["%r8", "%r8d", "%r8w", "%r8b"],
        ["%r9", "%r9d", "%r9w", "%r9b"],
    ];
    probe
        .native
        .iter()
        .enumerate()
        .map(|(i, ty)| {
            let s = scalar(ty);
            let sign = if s.signed { "-" } else { "" };
            let operand = match REGS.get(i) {
                Some(names) => {
                    let k = match s.size {
                        8 => 0,
                        4 => 1,
                        2 => 2,
                        _ => 3,
                    };
                    names[k].to_string()
                }
                None => format!("{}(%rsp)", (i - REGS.len()) * 8),
            };
            format!("{sign}{}@{operand}", s.size)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::defs;

    #[test]
    fn call_operands() {
        let p = defs(
            "provider p { probe x(int, char *, uint8_t, long, long, long, short, uint64_t); };",
        );
        assert_eq!(
            specs(&p[0].probes[0]),
            "-4@%edi 8@%rsi 1@%dl -8@%rcx -8@%r8 -8@%r9 -2@0(%rsp) 8@8(%rsp)"
        );
        let c = probe_call(b"__dtrace_test_prov___foo__entry").unwrap();
        assert_eq!(
            (c.provider.as_str(), c.probe.as_str(), c.enabled),
            ("test_prov", "foo__entry", false)
        );
        assert!(probe_call(b"__dtraceenabled_p___x").unwrap().enabled);
        assert!(probe_call(b"p_x_semaphore").is_none());
    }

    #[test]
    fn provider_object_defines_semaphores() {
        let p = defs("provider p { probe x(int); probe y(); };");
        let bytes = provider_object(&p, false).unwrap();
        let elf = Elf::parse(&bytes).unwrap();
        let t = elf.symtab().unwrap();
        let names: Vec<&[u8]> = (0..t.count)
            .filter_map(|i| elf.symbol_name(&t, i))
            .collect();
        assert!(names.contains(&&b"p_x_semaphore"[..]), "{names:?}");
        assert!(names.contains(&&b"p_y_semaphore"[..]), "{names:?}");
    }
}

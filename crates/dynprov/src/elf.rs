//! The shared object a dynamic provider is: the smallest ELF64 x86_64 `ET_DYN` glibc's
//! dynamic linker loads (a `.dynamic` section naming an empty symbol table and hash table),
//! plus what tracers read:
//!
//! - a read-execute page of probe sites, 16 bytes per probe: a 5-byte nop (the site, the
//!   first instruction of a function, so the caller's `call` already keeps the red zone
//!   free and an optimized uprobe's `call` there is safe) and a `ret`;
//! - in the read-write segment, one `u16` semaphore per probe, which the kernel raises while
//!   a tracer has a uprobe on the site (`ref_ctr_offset`; it must be a private, writable
//!   file mapping, which the dynamic linker's is);
//! - non-allocated: one `.note.stapsdt` note per probe (site, semaphore, and the arguments
//!   as the System V calling convention passes them: `%rdi %rsi %rdx %rcx %r8 %r9`, then
//!   `8(%rsp)` upward), the declared types (`.note.dtrace`, `dtrace_sdt::typenote`), and a
//!   symbol per site named after its probe (the function tracers show).
//!
//! Written by hand: a general ELF writer would be larger than this page, and no crate
//! writes loadable shared objects.

use dtrace_sdt::ctype::scalar;
use dtrace_sdt::{typenote, ProbeDef, ProviderDef};

/// Where a probe is in the object (addresses relative to its load base).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeAt {
    pub site: u64,
    pub semaphore: u64,
}

/// The object's bytes and where each probe is.
pub struct Layout {
    pub image: Vec<u8>,
    pub probes: Vec<ProbeAt>,
}

const PAGE: u64 = 0x1000;
const SITE_SIZE: u64 = 16;
const HASH: u64 = 0x200;
const DYNSYM: u64 = 0x210;
const DYNSTR: u64 = 0x228;
const DYNAMIC_SIZE: u64 = 6 * 16;

fn round_up(x: u64) -> u64 {
    x.div_ceil(PAGE).max(1) * PAGE
}

/// The argument operands of a probe with arguments of C types `types`.
fn specs(types: &[String]) -> String {
    const REGS: [&str; 6] = ["%rdi", "%rsi", "%rdx", "%rcx", "%r8", "%r9"];
    types
        .iter()
        .enumerate()
        .map(|(i, ty)| {
            let sign = if scalar(ty).signed { "-" } else { "" };
            match REGS.get(i) {
                Some(r) => format!("{sign}8@{r}"),
                None => format!("{sign}8@{}(%rsp)", (i - REGS.len() + 1) * 8),
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn note(out: &mut Vec<u8>, owner: &str, kind: u32, desc: &[u8]) {
    let owner = format!("{owner}\0");
    out.extend_from_slice(&(owner.len() as u32).to_le_bytes());
    out.extend_from_slice(&(desc.len() as u32).to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    for part in [owner.as_bytes(), desc] {
        out.extend_from_slice(part);
        out.resize(out.len().next_multiple_of(4), 0);
    }
}

/// A section header.
struct Section {
    name: u32,
    kind: u32,
    flags: u64,
    addr: u64,
    offset: u64,
    size: u64,
    link: u32,
    info: u32,
    align: u64,
    entsize: u64,
}

/// The object for provider `provider` with `probes` (name, argument C types).
pub fn build(provider: &str, probes: &[(String, Vec<String>)]) -> Layout {
    let n = probes.len() as u64;
    let text = PAGE;
    let text_size = round_up(n * SITE_SIZE);
    let data = text + text_size;
    let semaphores = data + DYNAMIC_SIZE;
    let data_size = round_up(DYNAMIC_SIZE + 2 * n);
    let nonalloc = data + data_size;
    let at: Vec<ProbeAt> = (0..n)
        .map(|i| ProbeAt {
            site: text + i * SITE_SIZE,
            semaphore: semaphores + 2 * i,
        })
        .collect();
    let mut img = vec![0u8; nonalloc as usize];
    // Sites: nopl 0x0(%rax,%rax,1); ret; int3 padding.
    for p in &at {
        let s = p.site as usize;
        img[s..s + SITE_SIZE as usize].fill(0xcc);
        img[s..s + 6].copy_from_slice(&[0x0f, 0x1f, 0x44, 0x00, 0x00, 0xc3]);
    }
    // The dynamic linker's part: a hash table with one empty bucket, the null symbol,
    // the empty string, and .dynamic naming them.
    img[HASH as usize..HASH as usize + 16]
        .copy_from_slice(&[1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    let dynamic: [(u64, u64); 6] = [
        (4, HASH),
        (5, DYNSTR),
        (6, DYNSYM),
        (10, 1),
        (11, 24),
        (0, 0),
    ];
    for (i, (tag, val)) in dynamic.iter().enumerate() {
        let o = data as usize + i * 16;
        img[o..o + 8].copy_from_slice(&tag.to_le_bytes());
        img[o + 8..o + 16].copy_from_slice(&val.to_le_bytes());
    }
    // Notes, symbols and names, not loaded.
    let mut stapsdt = Vec::new();
    let mut strtab = vec![0u8];
    let mut symtab = vec![0u8; 24];
    for ((name, types), p) in probes.iter().zip(&at) {
        let mut desc = Vec::new();
        desc.extend_from_slice(&p.site.to_le_bytes());
        desc.extend_from_slice(&0u64.to_le_bytes());
        desc.extend_from_slice(&p.semaphore.to_le_bytes());
        for s in [provider, name.as_str(), &specs(types)] {
            desc.extend_from_slice(s.as_bytes());
            desc.push(0);
        }
        note(&mut stapsdt, "stapsdt", 3, &desc);
        let name_at = strtab.len() as u32;
        strtab.extend_from_slice(name.as_bytes());
        strtab.push(0);
        symtab.extend_from_slice(&name_at.to_le_bytes());
        symtab.push(2); // STB_LOCAL, STT_FUNC
        symtab.push(0);
        symtab.extend_from_slice(&4u16.to_le_bytes()); // .text
        symtab.extend_from_slice(&p.site.to_le_bytes());
        symtab.extend_from_slice(&6u64.to_le_bytes());
    }
    let types = typenote::encode(&[ProviderDef {
        name: provider.to_string(),
        probes: probes
            .iter()
            .map(|(name, types)| ProbeDef {
                name: name.clone(),
                native: types.clone(),
                translated: types.clone(),
                mapping: (0..types.len()).collect(),
            })
            .collect(),
    }]);
    let mut shstrtab = vec![0u8];
    let mut name = |s: &str| {
        let at = shstrtab.len() as u32;
        shstrtab.extend_from_slice(s.as_bytes());
        shstrtab.push(0);
        at
    };
    let append = |img: &mut Vec<u8>, bytes: &[u8], align: usize| {
        img.resize(img.len().next_multiple_of(align), 0);
        let at = img.len() as u64;
        img.extend_from_slice(bytes);
        at
    };
    let stapsdt_at = append(&mut img, &stapsdt, 4);
    let types_at = append(&mut img, &types, 4);
    let symtab_at = append(&mut img, &symtab, 8);
    let strtab_at = append(&mut img, &strtab, 1);
    let mut sections = vec![
        Section {
            name: 0,
            kind: 0,
            flags: 0,
            addr: 0,
            offset: 0,
            size: 0,
            link: 0,
            info: 0,
            align: 0,
            entsize: 0,
        },
        Section {
            name: name(".hash"),
            kind: 5,
            flags: 2,
            addr: HASH,
            offset: HASH,
            size: 16,
            link: 2,
            info: 0,
            align: 8,
            entsize: 4,
        },
        Section {
            name: name(".dynsym"),
            kind: 11,
            flags: 2,
            addr: DYNSYM,
            offset: DYNSYM,
            size: 24,
            link: 3,
            info: 1,
            align: 8,
            entsize: 24,
        },
        Section {
            name: name(".dynstr"),
            kind: 3,
            flags: 2,
            addr: DYNSTR,
            offset: DYNSTR,
            size: 1,
            link: 0,
            info: 0,
            align: 1,
            entsize: 0,
        },
        Section {
            name: name(".text"),
            kind: 1,
            flags: 6,
            addr: text,
            offset: text,
            size: n * SITE_SIZE,
            link: 0,
            info: 0,
            align: 16,
            entsize: 0,
        },
        Section {
            name: name(".dynamic"),
            kind: 6,
            flags: 3,
            addr: data,
            offset: data,
            size: DYNAMIC_SIZE,
            link: 3,
            info: 0,
            align: 8,
            entsize: 16,
        },
        Section {
            name: name(".probes"),
            kind: 1,
            flags: 3,
            addr: semaphores,
            offset: semaphores,
            size: 2 * n,
            link: 0,
            info: 0,
            align: 2,
            entsize: 0,
        },
        Section {
            name: name(".note.stapsdt"),
            kind: 7,
            flags: 0,
            addr: 0,
            offset: stapsdt_at,
            size: stapsdt.len() as u64,
            link: 0,
            info: 0,
            align: 4,
            entsize: 0,
        },
        Section {
            name: name(typenote::SECTION),
            kind: 7,
            flags: 0,
            addr: 0,
            offset: types_at,
            size: types.len() as u64,
            link: 0,
            info: 0,
            align: 4,
            entsize: 0,
        },
        Section {
            name: name(".symtab"),
            kind: 2,
            flags: 0,
            addr: 0,
            offset: symtab_at,
            size: symtab.len() as u64,
            link: 10,
            info: n as u32 + 1,
            align: 8,
            entsize: 24,
        },
        Section {
            name: name(".strtab"),
            kind: 3,
            flags: 0,
            addr: 0,
            offset: strtab_at,
            size: strtab.len() as u64,
            link: 0,
            info: 0,
            align: 1,
            entsize: 0,
        },
    ];
    let shstrtab_name = name(".shstrtab");
    let shstrtab_at = append(&mut img, &shstrtab, 1);
    sections.push(Section {
        name: shstrtab_name,
        kind: 3,
        flags: 0,
        addr: 0,
        offset: shstrtab_at,
        size: shstrtab.len() as u64,
        link: 0,
        info: 0,
        align: 1,
        entsize: 0,
    });
    let mut headers = Vec::new();
    for s in &sections {
        headers.extend_from_slice(&s.name.to_le_bytes());
        headers.extend_from_slice(&s.kind.to_le_bytes());
        for v in [s.flags, s.addr, s.offset, s.size] {
            headers.extend_from_slice(&v.to_le_bytes());
        }
        headers.extend_from_slice(&s.link.to_le_bytes());
        headers.extend_from_slice(&s.info.to_le_bytes());
        headers.extend_from_slice(&s.align.to_le_bytes());
        headers.extend_from_slice(&s.entsize.to_le_bytes());
    }
    let shoff = append(&mut img, &headers, 8);
    // Program headers: R (headers, dynamic linker tables), RX (sites), RW (dynamic,
    // semaphores), PT_DYNAMIC, PT_GNU_STACK (not executable).
    let phdrs: [(u32, u32, u64, u64); 5] = [
        (1, 4, 0, PAGE),
        (1, 5, text, text_size),
        (1, 6, data, data_size),
        (2, 6, data, DYNAMIC_SIZE),
        (0x6474_e551, 6, 0, 0),
    ];
    let mut ph = Vec::new();
    for (kind, flags, at, size) in phdrs {
        ph.extend_from_slice(&kind.to_le_bytes());
        ph.extend_from_slice(&flags.to_le_bytes());
        for v in [at, at, at, size, size, if kind == 1 { PAGE } else { 8 }] {
            ph.extend_from_slice(&v.to_le_bytes());
        }
    }
    img[64..64 + ph.len()].copy_from_slice(&ph);
    let mut eh = Vec::with_capacity(64);
    eh.extend_from_slice(b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0");
    eh.extend_from_slice(&3u16.to_le_bytes()); // ET_DYN
    eh.extend_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    eh.extend_from_slice(&1u32.to_le_bytes());
    eh.extend_from_slice(&0u64.to_le_bytes()); // entry
    eh.extend_from_slice(&64u64.to_le_bytes()); // phoff
    eh.extend_from_slice(&shoff.to_le_bytes());
    eh.extend_from_slice(&0u32.to_le_bytes()); // flags
    for v in [
        64u16,
        56,
        phdrs.len() as u16,
        64,
        sections.len() as u16,
        sections.len() as u16 - 1,
    ] {
        eh.extend_from_slice(&v.to_le_bytes());
    }
    img[..64].copy_from_slice(&eh);
    Layout {
        image: img,
        probes: at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_follow_the_calling_convention() {
        let types: Vec<String> = [
            "int", "char *", "uint64_t", "long", "short", "int", "int", "uint8_t",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            specs(&types),
            "-8@%rdi 8@%rsi 8@%rdx -8@%rcx -8@%r8 -8@%r9 -8@8(%rsp) 8@16(%rsp)"
        );
    }

    #[test]
    fn layout_is_page_aligned() {
        let probes: Vec<(String, Vec<String>)> = (0..300)
            .map(|i| (format!("p{i}"), vec!["int".to_string()]))
            .collect();
        let l = build("prov", &probes);
        assert_eq!(l.probes[0].site, PAGE);
        assert_eq!(l.probes[299].site, PAGE + 299 * SITE_SIZE);
        assert_eq!(l.probes[0].semaphore % 2, 0);
        assert!(l.probes[0].semaphore >= PAGE + round_up(300 * SITE_SIZE));
        assert_eq!(&l.image[..4], b"\x7fELF");
    }
}

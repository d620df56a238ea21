//! Symbolization of kernel and user addresses, as DTrace prints them.
//!
//! Kernel addresses are looked up in `/proc/kallsyms` (read once, sorted): a symbol of the
//! core kernel prints as `vmlinux`name`, one of a module as `module`name` (the `[module]`
//! column of kallsyms). An address covers the symbol at or below it, up to the next one.
//!
//! User addresses are looked up through the process's mappings (`/proc/PID/maps`, read the
//! first time a process id is seen and kept, so stacks of processes that have exited since
//! still resolve) and the function symbols of the mapped files, as the `pid` provider reads
//! them (`dtrace_elf::function_symbols`: `.symtab`; for a stripped file its `.dynsym` and
//! the `.symtab` of its separate debug file when one is installed, found by build ID or
//! `.gnu_debuglink`, else its MiniDebugInfo's, `.gnu_debugdata`; read once per file), an
//! address with several names named as DTrace names it (`Symbol::alias_rank`):
//! `object`name+0xoffset`, the object being the file's base name.
//! A process whose maps were never read while it ran (it exited before its first record
//! or aggregation key was seen) prints raw addresses. Mappings are read again (at most
//! every 10 ms) when an address of a live process falls outside all of them (after
//! `exec` or `dlopen`). The call frame information of the mapped files, which unwinding a
//! recorded stack window needs (`crate::unwind`), is cached beside their symbols, by path.
//!
//! Names are demangled ([`demangle`]): Rust's legacy mangling (`_ZN...17h<hash>E`, hash
//! dropped) and the common part of C++'s Itanium mangling (nested names, and parameter
//! lists of builtin types, pointers, references, `const` and named types); anything else
//! prints as mangled.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use dtrace_elf::{Elf, PT_LOAD};

use crate::unwind::ObjectCfi;
use crate::value::{Frame, Place};

/// Kernel symbols from `/proc/kallsyms`, sorted by address.
#[derive(Default)]
struct KernelSymbols {
    /// `(address, name, module index)`
    syms: Vec<(u64, String, u32)>,
    modules: Vec<String>,
}

/// Lowest address of the kernel's own text; smaller kallsyms addresses are per-CPU
/// offsets, not code.
const KERNEL_BASE: u64 = 0xffff_0000_0000_0000;

impl KernelSymbols {
    fn load() -> KernelSymbols {
        let text = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
        Self::parse(&text)
    }

    fn parse(text: &str) -> KernelSymbols {
        let mut k = KernelSymbols {
            syms: Vec::new(),
            modules: vec!["vmlinux".to_string()],
        };
        let mut index: HashMap<String, u32> = HashMap::new();
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            let (Some(addr), Some(_kind), Some(name)) = (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let Ok(addr) = u64::from_str_radix(addr, 16) else {
                continue;
            };
            if addr < KERNEL_BASE {
                continue;
            }
            let module = match parts.next() {
                Some(m) => {
                    let m = m.trim_start_matches('[').trim_end_matches(']');
                    *index.entry(m.to_string()).or_insert_with(|| {
                        k.modules.push(m.to_string());
                        k.modules.len() as u32 - 1
                    })
                }
                None => 0,
            };
            k.syms.push((addr, name.to_string(), module));
        }
        // Stable: of several names at one address, the first listed wins.
        k.syms.sort_by_key(|s| s.0);
        k
    }

    /// The symbol covering `pc`: `(module, name, address)`.
    fn lookup(&self, pc: u64) -> Option<(&str, &str, u64)> {
        let i = self.syms.partition_point(|s| s.0 <= pc);
        if i == 0 {
            return None;
        }
        // The first of the names at that address.
        let addr = self.syms[i - 1].0;
        let first = self.syms[..i].partition_point(|s| s.0 < addr);
        let (a, name, m) = &self.syms[first];
        Some((&self.modules[*m as usize], name, *a))
    }
}

/// One file-backed mapping of a process.
#[derive(Clone, Debug)]
struct Mapping {
    start: u64,
    end: u64,
    offset: u64,
    path: String,
}

/// What is known of one process.
struct Process {
    maps: Vec<Mapping>,
    read_at: Instant,
    alive: bool,
}

/// The symbols of one file and how its file offsets map to its addresses.
#[derive(Default)]
struct ObjectSymbols {
    /// `(file offset, vaddr, file size)` of each loadable segment.
    segments: Vec<(u64, u64, u64)>,
    /// `(value, size, demangled name)`, sorted by value.
    syms: Vec<(u64, u64, String)>,
}

impl ObjectSymbols {
    fn load(path: &str) -> ObjectSymbols {
        let Ok(data) = std::fs::read(path) else {
            return ObjectSymbols::default();
        };
        let Ok(elf) = Elf::parse(&data) else {
            return ObjectSymbols::default();
        };
        let segments = elf
            .segments
            .iter()
            .filter(|s| s.kind == PT_LOAD)
            .map(|s| (s.offset, s.vaddr, s.filesz))
            .collect();
        let mut symbols = dtrace_elf::function_symbols(Path::new(path), &elf);
        // By address; of the names of one address, the one DTrace names it by last, where
        // `lookup` looks first.
        symbols.sort_by(|a, b| {
            (a.value.cmp(&b.value)).then_with(|| b.alias_rank().cmp(&a.alias_rank()))
        });
        let mut syms: Vec<(u64, u64, String)> = symbols
            .into_iter()
            .map(|s| (s.value, s.size, demangle(&s.name)))
            .collect();
        syms.dedup_by(|a, b| a.0 == b.0 && a.2 == b.2);
        ObjectSymbols { segments, syms }
    }

    /// The link-time address of file offset `off`.
    fn vaddr(&self, off: u64) -> Option<u64> {
        self.segments
            .iter()
            .find(|(o, _, size)| off >= *o && off < o + size)
            .map(|(o, v, _)| v + (off - o))
    }

    /// The function containing link-time address `v`: `(value, name)`.
    fn lookup(&self, v: u64) -> Option<(u64, &str)> {
        let i = self.syms.partition_point(|s| s.0 <= v);
        self.syms[..i]
            .iter()
            .rev()
            .take(8)
            .find(|(value, size, _)| v < value + (*size).max(1))
            .map(|(value, _, name)| (*value, name.as_str()))
    }
}

/// A user address resolved: the object's base name and, when a symbol covers it, the
/// symbol's name and its run-time address.
pub struct UserSymbol {
    pub object: String,
    /// Run-time address of the object's first mapping (its load base).
    pub base: u64,
    pub symbol: Option<(String, u64)>,
}

/// Kernel and user symbol tables, loaded on demand and cached.
#[derive(Default)]
pub struct Symbolizer {
    kernel: Option<KernelSymbols>,
    procs: HashMap<u32, Process>,
    /// Symbols of each object file by path, with when they were last used.
    objects: HashMap<String, (Rc<ObjectSymbols>, Instant)>,
    /// Call frame information of each object file by path, with when it was last used.
    cfi: HashMap<String, (Rc<ObjectCfi>, Instant)>,
    /// `-x noresolve`: user addresses are shown as offsets into their objects' mappings.
    noresolve: bool,
}

/// How long the symbols of an object file unused stay cached (they can take hundreds of
/// megabytes: a compiler's shared libraries).
const OBJECT_IDLE: Duration = Duration::from_secs(600);

/// How soon the mappings of a live process are read again on a miss.
const REREAD: Duration = Duration::from_millis(10);

impl Symbolizer {
    pub fn new() -> Symbolizer {
        Symbolizer::default()
    }

    /// Show user addresses unresolved (`-x noresolve`), or resolved to symbols again.
    pub fn set_noresolve(&mut self, on: bool) {
        self.noresolve = on;
    }

    /// `object:0xoffset` of user address `pc` of `pid` (`-x noresolve`): its offset from
    /// the start of the mapping holding it.
    fn unresolved(&mut self, pid: u32, pc: u64) -> Frame {
        let place = match self.mapping(pid, pc) {
            Some(m) => Place::Unresolved {
                object: base_name(&m.path).to_string(),
                offset: pc - m.start,
            },
            None => Place::Unknown,
        };
        Frame { address: pc, place }
    }

    /// Read `/proc/kallsyms` now if it was not read yet.
    pub fn load_kernel(&mut self) {
        self.kernel();
    }

    fn kernel(&mut self) -> &KernelSymbols {
        self.kernel.get_or_insert_with(KernelSymbols::load)
    }

    /// The kernel symbol covering `pc` (`module`name+0xoffset`), or an unknown address: a
    /// kernel stack frame, and `%a`.
    pub fn kernel_frame(&mut self, pc: u64) -> Frame {
        match self.kernel().lookup(pc) {
            Some((m, name, addr)) => Frame {
                address: pc,
                place: symbol(m, name, pc - addr),
            },
            None => Frame::unknown(pc),
        }
    }

    /// `func()`/`sym()`: `module`name`, at the symbol's address (the key it aggregates
    /// by); `pc` itself when unknown.
    pub fn kernel_sym(&mut self, pc: u64) -> Frame {
        match self.kernel().lookup(pc) {
            Some((m, name, addr)) => Frame {
                address: addr,
                place: symbol(m, name, 0),
            },
            None => Frame::unknown(pc),
        }
    }

    /// `mod()`: the module, with a number standing for it (the key it aggregates by); `pc`
    /// when unknown.
    pub fn kernel_mod(&mut self, pc: u64) -> (u64, Frame) {
        let k = self.kernel();
        match k.lookup(pc) {
            Some((m, _, _)) => {
                let i = k.modules.iter().position(|x| x == m).unwrap_or(0);
                let frame = Frame {
                    address: 0,
                    place: Place::Module(m.to_string()),
                };
                (i as u64, frame)
            }
            None => (pc, Frame::unknown(pc)),
        }
    }

    /// Read the mappings of `pid` if they were not read yet (a process seen for the first
    /// time): what makes its addresses resolvable after it exits.
    pub fn see_process(&mut self, pid: u32) {
        if pid != 0 && !self.procs.contains_key(&pid) {
            let p = read_process(pid);
            self.procs.insert(pid, p);
        }
    }

    /// Forget what is known of the processes `keep` does not name, and the symbols of
    /// object files not used for [`OBJECT_IDLE`]: a process id or file seen again is read
    /// anew. What is kept stays bounded however many processes and binaries come and go.
    pub fn retain_processes(&mut self, keep: &HashSet<u32>) {
        self.procs.retain(|pid, _| keep.contains(pid));
        self.objects
            .retain(|_, (_, used)| used.elapsed() < OBJECT_IDLE);
        self.cfi.retain(|_, (_, used)| used.elapsed() < OBJECT_IDLE);
    }

    fn mapping(&mut self, pid: u32, pc: u64) -> Option<Mapping> {
        self.see_process(pid);
        let find = |p: &Process| p.maps.iter().find(|m| pc >= m.start && pc < m.end).cloned();
        let p = self.procs.get(&pid)?;
        if let Some(m) = find(p) {
            return Some(m);
        }
        if p.alive && p.read_at.elapsed() >= REREAD {
            let fresh = read_process(pid);
            if fresh.alive {
                self.procs.insert(pid, fresh);
            }
            return find(self.procs.get(&pid)?);
        }
        None
    }

    /// The mapping holding user address `pc` of `pid` and its file's symbols.
    fn object(&mut self, pid: u32, pc: u64) -> Option<(Mapping, Rc<ObjectSymbols>)> {
        let m = self.mapping(pid, pc)?;
        let (syms, used) = self
            .objects
            .entry(m.path.clone())
            .or_insert_with(|| (Rc::new(ObjectSymbols::load(&m.path)), Instant::now()));
        *used = Instant::now();
        let syms = syms.clone();
        Some((m, syms))
    }

    /// The file mapped at user address `pc` of `pid`, and `pc`'s link-time address in it.
    pub fn object_address(&mut self, pid: u32, pc: u64) -> Option<(String, u64)> {
        let (m, syms) = self.object(pid, pc)?;
        let v = syms.vaddr(pc - m.start + m.offset)?;
        Some((m.path, v))
    }

    /// The call frame information of the object file at `path`.
    pub fn cfi(&mut self, path: &str) -> Rc<ObjectCfi> {
        let (cfi, used) = self
            .cfi
            .entry(path.to_string())
            .or_insert_with(|| (Rc::new(ObjectCfi::load(path)), Instant::now()));
        *used = Instant::now();
        cfi.clone()
    }

    /// Resolve user address `pc` of process `pid`.
    pub fn user(&mut self, pid: u32, pc: u64) -> Option<UserSymbol> {
        let (m, syms) = self.object(pid, pc)?;
        let object = base_name(&m.path).to_string();
        let off = pc - m.start + m.offset;
        let symbol = syms.vaddr(off).and_then(|v| {
            syms.lookup(v)
                .map(|(value, name)| (name.to_string(), pc - (v - value)))
        });
        // The object's lowest mapping: an object may have several executable segments,
        // each a mapping of its own.
        let base = self
            .procs
            .get(&pid)
            .and_then(|p| {
                p.maps
                    .iter()
                    .filter(|x| x.path == m.path)
                    .map(|x| x.start)
                    .min()
            })
            .unwrap_or(m.start);
        Some(UserSymbol {
            object,
            base,
            symbol,
        })
    }

    /// The user symbol covering `pc` of `pid` (`object`name+0xoffset`), the object without
    /// a symbol there (`object`0x...`), or an unknown address: a user stack frame,
    /// `uaddr()` and `%A`.
    pub fn user_frame(&mut self, pid: u32, pc: u64) -> Frame {
        if self.noresolve {
            return self.unresolved(pid, pc);
        }
        let place = match self.user(pid, pc) {
            Some(UserSymbol {
                object,
                symbol: Some((name, addr)),
                ..
            }) => symbol(&object, &name, pc - addr),
            Some(u) => Place::Object(u.object),
            None => Place::Unknown,
        };
        Frame { address: pc, place }
    }

    /// `ufunc()`/`usym()`: `object`name`, at the symbol's address (the key it aggregates
    /// by). Under `-x noresolve`, the symbol's address unresolved.
    pub fn user_sym(&mut self, pid: u32, pc: u64) -> Frame {
        if self.noresolve {
            let at = match self.user(pid, pc) {
                Some(UserSymbol {
                    symbol: Some((_, addr)),
                    ..
                }) => addr,
                _ => pc,
            };
            return self.unresolved(pid, at);
        }
        match self.user(pid, pc) {
            Some(UserSymbol {
                object,
                symbol: Some((name, addr)),
                ..
            }) => Frame {
                address: addr,
                place: symbol(&object, &name, 0),
            },
            Some(u) => Frame {
                address: pc,
                place: Place::Object(u.object),
            },
            None => Frame::unknown(pc),
        }
    }

    /// `umod()`: the object's base name, at its load base (the key it aggregates by: one
    /// row per object of a process, however many segments it has).
    pub fn user_mod(&mut self, pid: u32, pc: u64) -> Frame {
        match self.user(pid, pc) {
            Some(u) => Frame {
                address: u.base,
                place: Place::Module(u.object),
            },
            None => Frame::unknown(pc),
        }
    }
}

/// The last component of a path.
fn base_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn symbol(module: &str, name: &str, offset: u64) -> Place {
    Place::Symbol {
        module: module.to_string(),
        symbol: name.to_string(),
        offset,
    }
}

/// Read `/proc/PID/maps`: the file-backed mappings (not alive and empty if it is gone).
fn read_process(pid: u32) -> Process {
    let text = std::fs::read_to_string(format!("/proc/{pid}/maps"));
    let maps = text.as_deref().map(parse_maps).unwrap_or_default();
    Process {
        alive: text.is_ok() && !maps.is_empty(),
        maps,
        read_at: Instant::now(),
    }
}

fn parse_maps(text: &str) -> Vec<Mapping> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut parts = line.splitn(6, ' ');
        let (Some(range), Some(_perms), Some(offset), Some(_dev), Some(_inode)) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            continue;
        };
        let path = parts.next().unwrap_or("").trim_start();
        if !path.starts_with('/') || path.ends_with(" (deleted)") {
            continue;
        }
        let Some((start, end)) = range.split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end), Ok(offset)) = (
            u64::from_str_radix(start, 16),
            u64::from_str_radix(end, 16),
            u64::from_str_radix(offset, 16),
        ) else {
            continue;
        };
        out.push(Mapping {
            start,
            end,
            offset,
            path: path.to_string(),
        });
    }
    out
}

/// Demangle a symbol name (see the module documentation for what is understood); other
/// names are returned as they are.
pub fn demangle(name: &str) -> String {
    let Some(mangled) = name.strip_prefix("_Z") else {
        return name.to_string();
    };
    if let Some(d) = Itanium::demangle(mangled) {
        return d;
    }
    // Compiler suffixes (`.cold`, `.llvm.123`, `.isra.0`) are kept after the name (Rust
    // paths have `..` of their own).
    let b = mangled.as_bytes();
    for (i, _) in mangled.match_indices('.') {
        let lone = b.get(i + 1) != Some(&b'.') && (i == 0 || b[i - 1] != b'.');
        if lone {
            if let Some(d) = Itanium::demangle(&mangled[..i]) {
                return format!("{d}{}", &mangled[i..]);
            }
        }
    }
    name.to_string()
}

/// A small reader of Itanium-mangled names (also Rust's legacy scheme, which is a subset).
struct Itanium<'a> {
    s: &'a [u8],
    at: usize,
}

impl<'a> Itanium<'a> {
    fn demangle(s: &'a str) -> Option<String> {
        let mut p = Itanium {
            s: s.as_bytes(),
            at: 0,
        };
        let (parts, rust) = p.name()?;
        let qualified = parts.join("::");
        if rust {
            return (p.at == p.s.len()).then_some(qualified);
        }
        if p.at == p.s.len() {
            return Some(qualified);
        }
        let mut params = Vec::new();
        while p.at < p.s.len() {
            params.push(p.ty()?);
        }
        if params == ["void"] {
            params.clear();
        }
        Some(format!("{qualified}({})", params.join(", ")))
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.at).copied()
    }

    /// `<len><ident>`
    fn source_name(&mut self) -> Option<&'a str> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let len: usize = std::str::from_utf8(&self.s[start..self.at])
            .ok()?
            .parse()
            .ok()?;
        let end = self.at.checked_add(len)?;
        let id = std::str::from_utf8(self.s.get(self.at..end)?).ok()?;
        self.at = end;
        Some(id)
    }

    /// A nested (`N...E`) or plain name: its components, and whether it is Rust's (ends
    /// with a `h<16 hex digits>` hash component, which is dropped).
    fn name(&mut self) -> Option<(Vec<String>, bool)> {
        if self.peek() == Some(b'N') {
            self.at += 1;
            let mut parts: Vec<&str> = Vec::new();
            while self.peek()? != b'E' {
                if !self.peek()?.is_ascii_digit() {
                    return None;
                }
                parts.push(self.source_name()?);
            }
            self.at += 1;
            let rust = parts.len() > 1
                && parts.last().is_some_and(|h| {
                    h.len() == 17
                        && h.starts_with('h')
                        && h[1..].bytes().all(|c| c.is_ascii_hexdigit())
                });
            if rust {
                parts.pop();
                return Some((parts.iter().map(|p| rust_unescape(p)).collect(), true));
            }
            Some((parts.iter().map(|p| p.to_string()).collect(), false))
        } else if self.peek()?.is_ascii_digit() {
            Some((vec![self.source_name()?.to_string()], false))
        } else {
            None
        }
    }

    /// One parameter type.
    fn ty(&mut self) -> Option<String> {
        let c = self.peek()?;
        self.at += 1;
        let builtin = match c {
            b'v' => "void",
            b'b' => "bool",
            b'c' => "char",
            b'a' => "signed char",
            b'h' => "unsigned char",
            b's' => "short",
            b't' => "unsigned short",
            b'i' => "int",
            b'j' => "unsigned int",
            b'l' => "long",
            b'm' => "unsigned long",
            b'x' => "long long",
            b'y' => "unsigned long long",
            b'f' => "float",
            b'd' => "double",
            b'e' => "long double",
            b'w' => "wchar_t",
            b'z' => "...",
            b'P' => return Some(format!("{}*", self.ty()?)),
            b'R' => return Some(format!("{}&", self.ty()?)),
            b'O' => return Some(format!("{}&&", self.ty()?)),
            b'K' => return Some(format!("{} const", self.ty()?)),
            b'N' | b'0'..=b'9' => {
                self.at -= 1;
                return Some(self.name()?.0.join("::"));
            }
            _ => return None,
        };
        Some(builtin.to_string())
    }
}

/// A Rust legacy path component with its `$..$` escapes and `..` decoded.
fn rust_unescape(part: &str) -> String {
    let part = if part.starts_with("_$") {
        &part[1..]
    } else {
        part
    };
    let mut out = String::new();
    let mut rest = part;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix("..") {
            out.push_str("::");
            rest = r;
        } else if rest.starts_with('$') {
            let Some(end) = rest[1..].find('$') else {
                out.push_str(rest);
                break;
            };
            let code = &rest[1..1 + end];
            let text = match code {
                "SP" => "@".to_string(),
                "BP" => "*".to_string(),
                "RF" => "&".to_string(),
                "LT" => "<".to_string(),
                "GT" => ">".to_string(),
                "LP" => "(".to_string(),
                "RP" => ")".to_string(),
                "C" => ",".to_string(),
                _ => match code
                    .strip_prefix('u')
                    .and_then(|h| u32::from_str_radix(h, 16).ok())
                    .and_then(char::from_u32)
                {
                    Some(c) => c.to_string(),
                    None => format!("${code}$"),
                },
            };
            out.push_str(&text);
            rest = &rest[end + 2..];
        } else {
            let n = rest.find(['$', '.']).unwrap_or(rest.len()).max(1);
            out.push_str(&rest[..n]);
            rest = &rest[n..];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_rust_legacy() {
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE"),
            "core::fmt::write"
        );
        assert_eq!(
            demangle("_ZN60_$LT$alloc..string..String$u20$as$u20$core..fmt..Display$GT$3fmt17h0123456789abcdefE"),
            "<alloc::string::String as core::fmt::Display>::fmt"
        );
        assert_eq!(
            demangle("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h0123456789abcdefE"),
            "std::rt::lang_start::{{closure}}"
        );
    }

    #[test]
    fn demangles_cpp() {
        assert_eq!(demangle("_Z3fooi"), "foo(int)");
        assert_eq!(demangle("_Z3foov"), "foo()");
        assert_eq!(
            demangle("_ZN2ns5Klass6methodEPKcRi"),
            "ns::Klass::method(char const*, int&)"
        );
        assert_eq!(demangle("_ZN2ns3barEv.cold"), "ns::bar().cold");
        // Not understood (templates): left as it is.
        assert_eq!(demangle("_Z1fIiEvT_"), "_Z1fIiEvT_");
        assert_eq!(demangle("main"), "main");
    }

    #[test]
    fn kernel_lookup() {
        let k = KernelSymbols::parse(
            "ffffffff81000000 T _stext\nffffffff81000000 T startup_64\nffffffff81000100 t other\n0000000000000000 A fixed_percpu_data\nffffffffc0001000 t mod_fn\t[ext4]\n",
        );
        assert_eq!(
            k.lookup(0xffffffff81000010),
            Some(("vmlinux", "_stext", 0xffffffff81000000))
        );
        assert_eq!(k.lookup(0xffffffff81000100).map(|s| s.1), Some("other"));
        assert_eq!(k.lookup(0xffffffffc0001004).map(|s| s.0), Some("ext4"));
        assert_eq!(k.lookup(0x1000), None);
    }

    #[test]
    fn processes_no_longer_named_are_forgotten() {
        let mut s = Symbolizer::new();
        let me = std::process::id();
        s.see_process(me);
        s.see_process(1);
        s.retain_processes(&HashSet::from([me]));
        assert_eq!(s.procs.keys().copied().collect::<Vec<_>>(), [me]);
        s.retain_processes(&HashSet::new());
        assert!(s.procs.is_empty());
    }

    #[test]
    fn maps_parsing() {
        let m = parse_maps("55d0c0a00000-55d0c0a01000 r-xp 00001000 08:01 1234                       /usr/bin/prog\n7ffd1000-7ffd2000 rw-p 00000000 00:00 0                          [stack]\n7f00-7f10 r-xp 0 08:01 5 /tmp/x (deleted)\n");
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].path, "/usr/bin/prog");
        assert_eq!(m[0].offset, 0x1000);
    }
}

//! The kernel's symbol table (`/proc/kallsyms`), read once on first use: where a kernel
//! symbol is (`` &`linux_banner ``), whether the table lists a data symbol (the kernel finds
//! a per-CPU variable a program names through it), and whether it is complete enough to
//! say a symbol does not exist.
//!
//! Data symbols are listed only in kernels built with `CONFIG_KALLSYMS_ALL` (Debian's,
//! Fedora's, Ubuntu's); others list functions and a few dozen section bounds. Addresses
//! are real only for a reader the kernel trusts (root, as `kptr_restrict` allows); others
//! read zeros, which this table takes as no address.

use std::collections::HashMap;
use std::sync::OnceLock;

/// Data symbols past which the table is taken as listing every symbol (a kernel with
/// `CONFIG_KALLSYMS_ALL` lists thousands, others a few dozen).
const COMPLETE: usize = 1000;

/// One line of the table.
#[derive(Debug)]
struct Entry {
    address: u64,
    /// The type letter (`T` text, `D` data, `B` bss, `R` read-only, `A` absolute...).
    kind: u8,
    /// The module that defines it; None for the kernel itself.
    module: Option<Box<str>>,
}

/// The kernel's symbols by name, in the table's order.
#[derive(Debug, Default)]
pub struct Kallsyms {
    symbols: HashMap<Box<str>, Vec<Entry>>,
    /// How many data symbols (`d`, `D`, `b`, `B`) it lists.
    data: usize,
}

static TABLE: OnceLock<Kallsyms> = OnceLock::new();

/// The running kernel's symbol table (the [`install`]ed one in tests); empty if it cannot
/// be read.
pub fn table() -> &'static Kallsyms {
    TABLE.get_or_init(|| {
        Kallsyms::parse(&std::fs::read_to_string("/proc/kallsyms").unwrap_or_default())
    })
}

/// Use `text` as the kernel's symbol table (tests without the running kernel's). False
/// when the table was already read.
pub fn install(text: &str) -> bool {
    TABLE.set(Kallsyms::parse(text)).is_ok()
}

impl Kallsyms {
    /// The table in `/proc/kallsyms`'s format: `address type name [module]` a line.
    pub fn parse(text: &str) -> Kallsyms {
        let mut table = Kallsyms::default();
        for line in text.lines() {
            let mut words = line.split_whitespace();
            let (Some(address), Some(kind), Some(name)) =
                (words.next(), words.next(), words.next())
            else {
                continue;
            };
            let (Ok(address), &[kind]) = (u64::from_str_radix(address, 16), kind.as_bytes()) else {
                continue;
            };
            let module = words
                .next()
                .and_then(|m| m.strip_prefix('[')?.strip_suffix(']'))
                .map(Box::from);
            table.data += usize::from(matches!(kind, b'd' | b'D' | b'b' | b'B'));
            table
                .symbols
                .entry(Box::from(name))
                .or_default()
                .push(Entry {
                    address,
                    kind,
                    module,
                });
        }
        table
    }

    /// Whether the kernel itself has the data symbol `name`: a variable (data or bss) or,
    /// on x86_64, a per-CPU one (absolute: its offset in each CPU's area).
    pub fn lists_data(&self, name: &str) -> bool {
        self.kernel_entries(name)
            .any(|e| matches!(e.kind, b'A' | b'd' | b'D' | b'b' | b'B'))
    }

    /// Whether the table lists `name` at all, when it lists every symbol; None when it may
    /// leave variables out.
    pub fn lists(&self, name: &str) -> Option<bool> {
        (self.data >= COMPLETE).then(|| self.symbols.contains_key(name))
    }

    /// The address of `` module`name ``: the kernel's own symbol for `vmlinux`, a loaded
    /// module's for its name, and without a module the kernel's, else the first module's
    /// that has it. Absolute symbols (per-CPU offsets, constants) have no address, nor
    /// does any symbol whose address the table hides (zero).
    pub fn address(&self, module: Option<&str>, name: &str) -> Option<u64> {
        let entries = self.symbols.get(name)?;
        let located = |e: &&Entry| e.address != 0 && !matches!(e.kind, b'A' | b'a');
        let in_kernel = || entries.iter().filter(|e| e.module.is_none()).find(located);
        let found = match module {
            Some("vmlinux") => in_kernel(),
            Some(m) => entries
                .iter()
                .filter(|e| e.module.as_deref() == Some(m))
                .find(located),
            None => in_kernel().or_else(|| entries.iter().find(located)),
        };
        found.map(|e| e.address)
    }

    /// Whether the table lists `name` but hides where it is (every address zero, as it
    /// shows them to a reader `kptr_restrict` does not trust).
    pub fn hides(&self, name: &str) -> bool {
        self.symbols.get(name).is_some_and(|entries| {
            entries
                .iter()
                .any(|e| e.address == 0 && !matches!(e.kind, b'A' | b'a'))
        })
    }

    fn kernel_entries(&self, name: &str) -> impl Iterator<Item = &Entry> {
        self.symbols
            .get(name)
            .into_iter()
            .flatten()
            .filter(|e| e.module.is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
0000000000000000 A fixed_percpu_data
000000000002e8c0 A runqueues
ffffffff81234560 T vfs_read
ffffffff82000100 D linux_banner
ffffffff82000200 d local_thing
ffffffff82000300 b local_thing
ffffffffc0001000 t helper\t[binfmt_misc]
ffffffffc0002000 d entries\t[binfmt_misc]
ffffffffc0003000 d entries\t[ext4]
ffffffff82000400 D entries
";

    #[test]
    fn addresses_are_found_by_scope() {
        let t = Kallsyms::parse(TEXT);
        assert_eq!(t.address(None, "linux_banner"), Some(0xffffffff82000100));
        assert_eq!(
            t.address(Some("vmlinux"), "vfs_read"),
            Some(0xffffffff81234560)
        );
        // Unscoped: the kernel's first, then the first module's.
        assert_eq!(t.address(None, "entries"), Some(0xffffffff82000400));
        assert_eq!(t.address(None, "helper"), Some(0xffffffffc0001000));
        assert_eq!(t.address(Some("ext4"), "entries"), Some(0xffffffffc0003000));
        assert_eq!(t.address(Some("vmlinux"), "helper"), None);
        assert_eq!(t.address(Some("ext4"), "helper"), None);
        // The first of a name the kernel defines twice.
        assert_eq!(t.address(None, "local_thing"), Some(0xffffffff82000200));
        // Per-CPU offsets are no addresses.
        assert_eq!(t.address(None, "runqueues"), None);
        assert_eq!(t.address(None, "nosuch"), None);
    }

    #[test]
    fn hidden_addresses_are_none() {
        let t = Kallsyms::parse("0000000000000000 D linux_banner\n0000000000000000 T vfs_read\n");
        assert_eq!(t.address(None, "linux_banner"), None);
        assert_eq!(t.address(None, "vfs_read"), None);
        assert!(t.lists_data("linux_banner"));
        assert!(t.hides("linux_banner"));
        assert!(!Kallsyms::parse(TEXT).hides("fixed_percpu_data"));
    }

    #[test]
    fn data_symbols_and_completeness() {
        let t = Kallsyms::parse(TEXT);
        assert!(t.lists_data("runqueues"));
        assert!(t.lists_data("linux_banner"));
        assert!(!t.lists_data("vfs_read"));
        // A module's data is not the kernel's.
        assert!(!t.lists_data("nosuch"));
        assert_eq!(t.lists("nosuch"), None);
        let mut many = String::from(TEXT);
        for i in 0..COMPLETE {
            many.push_str(&format!("ffffffff83{i:06x} d v{i}\n"));
        }
        let t = Kallsyms::parse(&many);
        assert_eq!(t.lists("nosuch"), Some(false));
        assert_eq!(t.lists("helper"), Some(true));
    }
}

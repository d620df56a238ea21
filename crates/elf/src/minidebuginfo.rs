//! MiniDebugInfo: the `.gnu_debugdata` section Fedora, RHEL and Oracle Linux keep in their
//! stripped binaries and libraries, an xz-compressed ELF object whose symbol table holds
//! the functions `.dynsym` leaves out (the `static` ones), so that stacks name them without
//! a debug package. Its addresses are the object's own link-time addresses.
//!
//! Decoded with `lzma-rs` (pure Rust: no C library at build or run time); the unpacked
//! object may be at most [`MAX_UNPACKED`] bytes.

use std::io::Write;

use crate::{Elf, Symbol};

/// The most bytes the unpacked object may have (its symbol table and strings; Fedora's
/// libc's is about 100 KiB).
const MAX_UNPACKED: u64 = 64 << 20;

impl Elf<'_> {
    /// The symbols of the object's MiniDebugInfo (none when it has none or it cannot be
    /// read).
    pub fn mini_debuginfo_symbols(&self) -> Vec<Symbol> {
        let Some(section) = self.section(".gnu_debugdata") else {
            return Vec::new();
        };
        let Ok(packed) = self.section_data(section) else {
            return Vec::new();
        };
        let mut unpacked = Bounded(Vec::new());
        let mut input = std::io::BufReader::new(packed);
        if lzma_rs::xz_decompress(&mut input, &mut unpacked).is_err() {
            return Vec::new();
        }
        match Elf::parse(&unpacked.0) {
            Ok(inner) if inner.has_symtab() => inner.symbols().unwrap_or_default(),
            _ => Vec::new(),
        }
    }
}

/// Bytes written, refused past [`MAX_UNPACKED`].
struct Bounded(Vec<u8>);

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if (self.0.len() + buf.len()) as u64 > MAX_UNPACKED {
            return Err(std::io::Error::other("MiniDebugInfo too large"));
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

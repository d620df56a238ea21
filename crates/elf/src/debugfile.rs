//! Separate debug files: where the symbol table a stripped object lost lives.
//!
//! Distributions strip `.symtab` from their binaries and libraries and ship it (with DWARF)
//! in a separate file: Debian's `-dbg`/`-dbgsym` packages, Fedora's `-debuginfo`. gdb, perf
//! and libdtrace's symbol lookups find it the same two ways, tried in this order:
//!
//! 1. by build ID (the `NT_GNU_BUILD_ID` note): `/usr/lib/debug/.build-id/NN/REST.debug`,
//!    where `NN` is the first byte in hex and `REST` the others;
//! 2. by `.gnu_debuglink` (a file name, then a CRC we do not check: the build ID is the
//!    precise match, the link a convention): beside the object, in a `.debug` directory
//!    beside it, and under `/usr/lib/debug` followed by the object's directory.

use crate::Elf;
use std::path::{Path, PathBuf};

/// Root of the system's separate debug files.
const DEBUG_ROOT: &str = "/usr/lib/debug";

/// `n_type` of the GNU build ID note.
const NT_GNU_BUILD_ID: u32 = 3;

impl Elf<'_> {
    /// The GNU build ID, if the object has one.
    pub fn build_id(&self) -> Option<&[u8]> {
        let notes = self.notes(".note.gnu.build-id").ok()?;
        notes
            .into_iter()
            .find(|(owner, kind, desc)| {
                *owner == b"GNU" && *kind == NT_GNU_BUILD_ID && !desc.is_empty()
            })
            .map(|(_, _, desc)| desc)
    }

    /// The file name `.gnu_debuglink` names, if any.
    pub fn debuglink(&self) -> Option<String> {
        let data = self.section_data(self.section(".gnu_debuglink")?).ok()?;
        let name = data.split(|b| *b == 0).next()?;
        let name = std::str::from_utf8(name).ok()?;
        (!name.is_empty() && !name.contains('/')).then(|| name.to_string())
    }

    /// Whether the object still has its full symbol table.
    pub fn has_symtab(&self) -> bool {
        self.sections.iter().any(|s| s.kind == crate::SHT_SYMTAB)
    }
}

/// The separate debug file of the object at `path` (parsed as `elf`), if one is installed.
pub fn debug_file(path: &Path, elf: &Elf) -> Option<PathBuf> {
    candidates(path, elf).into_iter().find(|p| p.is_file())
}

/// Where the debug file of `path` may be, in the order they are tried.
fn candidates(path: &Path, elf: &Elf) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Some(id) = elf.build_id().filter(|id| id.len() >= 2) {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        out.push(Path::new(DEBUG_ROOT).join(format!(
            ".build-id/{}/{}.debug",
            &hex[..2],
            &hex[2..]
        )));
    }
    if let Some(link) = elf.debuglink() {
        let dir = path.parent().unwrap_or(Path::new("/"));
        // The object itself may carry the name its debug file has: never point at it.
        if dir.join(&link) != path {
            out.push(dir.join(&link));
        }
        out.push(dir.join(".debug").join(&link));
        let relative = dir.strip_prefix("/").unwrap_or(dir);
        out.push(Path::new(DEBUG_ROOT).join(relative).join(&link));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The smallest ELF64 file with a build ID note and a `.gnu_debuglink`.
    fn object(build_id: &[u8], link: &str) -> Vec<u8> {
        let mut note = Vec::new();
        note.extend_from_slice(&4u32.to_le_bytes());
        note.extend_from_slice(&(build_id.len() as u32).to_le_bytes());
        note.extend_from_slice(&NT_GNU_BUILD_ID.to_le_bytes());
        note.extend_from_slice(b"GNU\0");
        note.extend_from_slice(build_id);
        while note.len() % 4 != 0 {
            note.push(0);
        }
        let mut debuglink = link.as_bytes().to_vec();
        debuglink.push(0);
        while debuglink.len() % 4 != 0 {
            debuglink.push(0);
        }
        debuglink.extend_from_slice(&0u32.to_le_bytes());
        let names = b"\0.note.gnu.build-id\0.gnu_debuglink\0.shstrtab\0";
        // Layout: header (64), note, debuglink, names, then 4 section headers.
        let note_at = 64;
        let link_at = note_at + note.len();
        let names_at = link_at + debuglink.len();
        let sh_at = (names_at + names.len() + 7) & !7;
        let mut f = vec![0u8; sh_at + 4 * 64];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 2;
        f[5] = 1;
        f[0x28..0x30].copy_from_slice(&(sh_at as u64).to_le_bytes());
        f[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        f[0x3c..0x3e].copy_from_slice(&4u16.to_le_bytes());
        f[0x3e..0x40].copy_from_slice(&3u16.to_le_bytes());
        f[note_at..link_at].copy_from_slice(&note);
        f[link_at..names_at].copy_from_slice(&debuglink);
        f[names_at..names_at + names.len()].copy_from_slice(names);
        let header = |f: &mut Vec<u8>, i: usize, name: u32, kind: u32, off: usize, size: usize| {
            let at = sh_at + i * 64;
            f[at..at + 4].copy_from_slice(&name.to_le_bytes());
            f[at + 4..at + 8].copy_from_slice(&kind.to_le_bytes());
            f[at + 24..at + 32].copy_from_slice(&(off as u64).to_le_bytes());
            f[at + 32..at + 40].copy_from_slice(&(size as u64).to_le_bytes());
        };
        header(&mut f, 1, 1, crate::SHT_NOTE, note_at, note.len());
        header(&mut f, 2, 20, 1, link_at, debuglink.len());
        header(&mut f, 3, 35, 3, names_at, names.len());
        f
    }

    #[test]
    fn build_id_first_then_debuglink_places() {
        let data = object(&[0x93, 0xac, 0x61, 0x01], "libx.so.debug");
        let elf = Elf::parse(&data).expect("parses");
        assert_eq!(elf.build_id(), Some(&[0x93, 0xac, 0x61, 0x01][..]));
        assert_eq!(elf.debuglink().as_deref(), Some("libx.so.debug"));
        assert!(!elf.has_symtab());
        let found: Vec<String> = candidates(Path::new("/usr/lib/libx.so"), &elf)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            found,
            [
                "/usr/lib/debug/.build-id/93/ac6101.debug",
                "/usr/lib/libx.so.debug",
                "/usr/lib/.debug/libx.so.debug",
                "/usr/lib/debug/usr/lib/libx.so.debug",
            ]
        );
    }

    #[test]
    fn a_debuglink_naming_the_object_itself_is_not_tried_beside_it() {
        let data = object(&[1, 2], "libx.so");
        let elf = Elf::parse(&data).expect("parses");
        let found = candidates(Path::new("/opt/libx.so"), &elf);
        assert!(!found.contains(&PathBuf::from("/opt/libx.so")));
        assert!(found.contains(&PathBuf::from("/opt/.debug/libx.so")));
    }
}

//! The tiny BTF objects the runtime writes and loads itself (`BPF_BTF_LOAD`): the one
//! describing programs made of several functions (`funcs.rs`), and the one a task local
//! storage map must be created with ([`task_storage`]).

use std::os::fd::OwnedFd;

use crate::sys::{self, cmd, BtfLoadAttr};

const BTF_MAGIC: u16 = 0xeb9f;
const BTF_HEADER_LEN: u32 = 24;
pub(crate) const BTF_KIND_INT: u32 = 1;
pub(crate) const BTF_KIND_ARRAY: u32 = 3;
pub(crate) const BTF_KIND_FUNC: u32 = 12;
pub(crate) const BTF_KIND_FUNC_PROTO: u32 = 13;
/// `BTF_INT_SIGNED`, in an `INT`'s encoding word.
const BTF_INT_SIGNED: u32 = 1 << 24;

/// A version-1 blob of the type section `types` (their words) and the string section
/// `strings` (starting with the empty name's NUL).
pub(crate) fn encode(types: &[u32], strings: &[u8]) -> Vec<u8> {
    let type_len = 4 * types.len() as u32;
    let mut out = Vec::new();
    out.extend(BTF_MAGIC.to_le_bytes());
    out.extend([1u8, 0]); // version 1, no flags
    for word in [BTF_HEADER_LEN, 0, type_len, type_len, strings.len() as u32] {
        out.extend(word.to_le_bytes());
    }
    for word in types {
        out.extend(word.to_le_bytes());
    }
    out.extend(strings);
    out
}

/// Loads `blob`; its descriptor, or the errno.
pub(crate) fn load(blob: &[u8]) -> Result<OwnedFd, i32> {
    let mut attr = BtfLoadAttr {
        btf: blob.as_ptr() as u64,
        btf_size: blob.len() as u32,
        ..Default::default()
    };
    // SAFETY: btf points at btf_size readable bytes that outlive the call; no log buffer
    // is given.
    unsafe { sys::bpf_fd(cmd::BTF_LOAD, &mut attr) }
}

/// The type ids of a task local storage map's key and value in [`task_storage_blob`].
pub(crate) const TASK_STORAGE_KEY: u32 = 1;
pub(crate) const TASK_STORAGE_VALUE: u32 = 3;

/// The BTF a task local storage map of `value_size`-byte values is created with (the
/// kernel insists on one): [1] `int` (the key), [2] `unsigned char`, [3] `unsigned
/// char[value_size]` (the value, opaque to the kernel).
pub(crate) fn task_storage_blob(value_size: u32) -> Vec<u8> {
    let strings: &[u8] = b"\0int\0unsigned char\0";
    #[rustfmt::skip]
    let types = [
        1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED | 32,
        5, BTF_KIND_INT << 24, 1, 8,
        0, BTF_KIND_ARRAY << 24, 0, 2, TASK_STORAGE_KEY, value_size,
    ];
    encode(&types, strings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_describes_the_sections() {
        let b = task_storage_blob(24);
        let word = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!(&b[..4], &[0x9f, 0xeb, 1, 0]);
        let (type_len, str_off, str_len) = (word(12), word(16), word(20));
        assert_eq!((type_len, str_off), (56, 56));
        assert_eq!(b.len() as u32, 24 + type_len + str_len);
        // The array's element count is the value size.
        assert_eq!(word(24 + type_len as usize - 4), 24);
    }
}

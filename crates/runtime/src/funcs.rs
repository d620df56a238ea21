//! The BTF a program made of several functions carries: the kernel accepts a callback
//! (`bpf_loop`'s) only in a program whose functions are all described by `func_info`,
//! each a BTF `FUNC` of static linkage. One tiny BTF object, loaded once per process,
//! serves every program: a `void (void)` prototype and one static function of it.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::OnceLock;

use crate::btf_blob::{self, BTF_KIND_FUNC, BTF_KIND_FUNC_PROTO};
use crate::sys::FuncInfo;

/// The type id of the static function every `func_info` record names.
const FUNC_TYPE: u32 = 2;

/// The BTF blob: [1] `FUNC_PROTO` returning void with no parameters, [2] `FUNC dt_fn`
/// (static) of type 1.
fn blob() -> Vec<u8> {
    let types: [u32; 6] = [0, BTF_KIND_FUNC_PROTO << 24, 0, 1, BTF_KIND_FUNC << 24, 1];
    btf_blob::encode(&types, b"\0dt_fn\0")
}

/// The descriptor of the functions' BTF object (loaded on first use), or the errno of
/// `BPF_BTF_LOAD`.
pub(crate) fn btf_fd() -> Result<RawFd, i32> {
    static BTF: OnceLock<Result<OwnedFd, i32>> = OnceLock::new();
    match BTF.get_or_init(|| btf_blob::load(&blob())) {
        Ok(fd) => Ok(fd.as_raw_fd()),
        Err(errno) => Err(*errno),
    }
}

/// The `func_info` records of a program whose functions after the first start at
/// `starts` (instruction indices, ascending).
pub(crate) fn func_infos(starts: &[u32]) -> Vec<FuncInfo> {
    std::iter::once(0)
        .chain(starts.iter().copied())
        .map(|insn_off| FuncInfo {
            insn_off,
            type_id: FUNC_TYPE,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blob_header_describes_its_sections() {
        let b = blob();
        let word = |at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
        assert_eq!(&b[..4], &[0x9f, 0xeb, 1, 0]);
        assert_eq!(word(4), 24);
        let (type_len, str_off, str_len) = (word(12), word(16), word(20));
        assert_eq!(type_len, 24);
        assert_eq!(str_off, type_len);
        assert_eq!(b.len() as u32, 24 + type_len + str_len);
        assert_eq!(&b[24 + str_off as usize..], b"\0dt_fn\0");
    }

    #[test]
    fn func_infos_start_with_the_main_function() {
        let infos = func_infos(&[10, 40]);
        let offs: Vec<u32> = infos.iter().map(|i| i.insn_off).collect();
        assert_eq!(offs, vec![0, 10, 40]);
        assert!(infos.iter().all(|i| i.type_id == FUNC_TYPE));
    }
}

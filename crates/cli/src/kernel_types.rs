//! Kernel structure layouts for the code generator, answered from the running kernel's BTF.

use dtrace_backend::KernelLayout;
use dtrace_btf::{Btf, Kind};

/// The kernel's BTF, if it could be read.
pub struct BtfLayout {
    btf: Option<Btf>,
}

impl BtfLayout {
    pub fn load() -> BtfLayout {
        BtfLayout {
            btf: Btf::vmlinux().ok(),
        }
    }
}

impl KernelLayout for BtfLayout {
    fn member_offset(&self, name: &str, path: &str) -> Option<u32> {
        let btf = self.btf.as_ref()?;
        let id = btf.find(Kind::Struct, name)?;
        let field = btf.member_path(id, path).ok()?;
        Some(field.byte_offset() as u32)
    }
}

//! Kernel structure layouts for the code generator, answered from the running kernel's BTF.
//! BTF is read only when a script first needs a kernel type, so most scripts start without
//! parsing it.

use std::cell::OnceCell;

use dtrace_backend::KernelLayout;
use dtrace_btf::{Btf, Kind};

/// The kernel's BTF, read on first use (None if it cannot be read).
#[derive(Default)]
pub struct BtfLayout {
    btf: OnceCell<Option<Btf>>,
}

impl KernelLayout for BtfLayout {
    fn member_offset(&self, name: &str, path: &str) -> Option<u32> {
        let btf = self.btf.get_or_init(|| Btf::vmlinux().ok()).as_ref()?;
        let id = btf.find(Kind::Struct, name)?;
        let field = btf.member_path(id, path).ok()?;
        Some(field.byte_offset() as u32)
    }
}

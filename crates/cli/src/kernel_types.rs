//! Kernel structure layouts for the code generator, answered from the running kernel's BTF.
//! BTF is read only when a script first needs a kernel type, so most scripts start without
//! parsing it; the copy is the back end's ([`dtrace_backend::types::kernel::vmlinux`]),
//! shared with the kernel types D programs name (`struct task_struct`, `curthread->comm`).

use dtrace_backend::types::kernel;
use dtrace_backend::KernelLayout;
use dtrace_btf::Kind;

/// The kernel's BTF, read on first use.
#[derive(Default)]
pub struct BtfLayout;

impl KernelLayout for BtfLayout {
    fn member_offset(&self, name: &str, path: &str) -> Option<u32> {
        let btf = kernel::vmlinux()?;
        let id = btf.find(Kind::Struct, name)?;
        let field = btf.member_path(id, path).ok()?;
        Some(field.byte_offset() as u32)
    }
}

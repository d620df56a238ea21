//! Records the subset of the running kernel's BTF that the typing pass's kernel-free
//! tests type against: `crates/typing/tests/data/vmlinux-subset.btf` (see the README
//! beside it).
//!
//! `cargo run -p dtrace-btf --example record_subset [OUTPUT]`

use std::path::{Path, PathBuf};

use dtrace_btf::Btf;

/// The types the tests name, and the kernel types a D program reaches from `curthread`,
/// the `rawtp` arguments of `sched_switch` and `sched_process_exec`, and `fbt`'s
/// `vfs_read`.
const ROOTS: &[&str] = &[
    "struct task_struct",
    "struct mm_struct",
    "struct file",
    "struct path",
    "struct dentry",
    "struct qstr",
    "struct sched_entity",
    "struct pid",
    "struct cred",
    "struct linux_binprm",
    "typedef pid_t",
    "typedef u64",
    "typedef size_t",
    "enum pid_type",
    "typedef btf_trace_sched_switch",
    "typedef btf_trace_sched_process_exec",
    "func vfs_read",
];

/// Structs and unions more pointers than this away from every root are kept only as
/// forward declarations.
const DEPTH: u32 = 2;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).map_or_else(
        || {
            let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent();
            crates
                .map_or_else(PathBuf::new, Path::to_path_buf)
                .join("typing/tests/data/vmlinux-subset.btf")
        },
        PathBuf::from,
    );
    let btf = Btf::vmlinux()?;
    let bytes = btf.subset(ROOTS, DEPTH)?;
    let types = Btf::parse(&bytes)?.len();
    std::fs::write(&out, &bytes)?;
    println!(
        "{}: {} bytes, {types} types (of {} in {})",
        out.display(),
        bytes.len(),
        btf.len(),
        dtrace_btf::VMLINUX_PATH
    );
    Ok(())
}

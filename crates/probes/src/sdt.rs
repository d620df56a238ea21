//! The `sdt` provider: every kernel tracepoint outside the `syscalls` category (those are the
//! `syscall` provider), named as Oracle Linux DTrace names them: `sdt:CATEGORY::EVENT`
//! (`sdt:sched::sched_process_exec`). Arguments are the format file's fields after the common
//! ones, in order: `arg0..` for integers and pointers, `args[N]` typed (char arrays and
//! `__data_loc` strings as D strings, pointers to kernel structs as typed pointers from BTF,
//! other pointers as `uintptr_t`).

use dtrace_backend::program::{FieldKind, ProbeContext, ProbeSite, TracepointLayout};
use dtrace_btf::Kind;

use crate::tracepoint::{self, Event};
use crate::{syscall, ArgStyle, Attach, Probe};

/// One probe per tracepoint, numbered from `first_id`.
pub fn probes(events: &[Event], first_id: u32) -> Vec<Probe> {
    events
        .iter()
        .filter(|e| e.category != syscall::CATEGORY)
        .enumerate()
        .map(|(i, e)| Probe {
            site: ProbeSite {
                id: first_id + i as u32,
                provider: "sdt".into(),
                module: e.category.clone(),
                function: String::new(),
                name: e.name.clone(),
                context: ProbeContext::Tracepoint(TracepointLayout::default()),
            },
            attach: Attach::Tracepoint {
                category: e.category.clone(),
                event: e.name.clone(),
                style: ArgStyle::Plain,
            },
        })
        .collect()
}

/// The argument layout of tracepoint `category:event`, from its format file. Pointers to
/// kernel structs and unions BTF describes (`struct mm_struct *`) are typed
/// ([`FieldKind::KernelPointer`]); BTF is read only for a format that has one.
pub fn layout(category: &str, event: &str) -> Result<TracepointLayout, String> {
    let mut layout = tracepoint::layout(tracepoint::format(category, event)?, &[]);
    for f in &mut layout.args {
        if f.kind != FieldKind::Pointer {
            continue;
        }
        if let Some(pointee) = struct_pointee(&f.ctype) {
            f.kind = FieldKind::KernelPointer { pointee };
        }
    }
    Ok(layout)
}

/// The BTF id of the struct or union a format file's `struct NAME *` (or `const union NAME
/// *`) points to, when BTF describes it.
fn struct_pointee(ctype: &str) -> Option<u32> {
    let words: Vec<&str> = ctype
        .split_whitespace()
        .filter(|w| !matches!(*w, "const" | "volatile"))
        .collect();
    let (kind, name) = match words.as_slice() {
        ["struct", name, "*"] => (Kind::Struct, *name),
        ["union", name, "*"] => (Kind::Union, *name),
        _ => return None,
    };
    dtrace_backend::types::kernel::vmlinux()?.find(kind, name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_tracepoints_like_oracle_dtrace() {
        let events = [
            Event {
                category: "sched".into(),
                name: "sched_switch".into(),
            },
            Event {
                category: syscall::CATEGORY.into(),
                name: "sys_enter_read".into(),
            },
        ];
        let p = probes(&events, 7);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].site.full_name(), "sdt:sched::sched_switch");
        assert_eq!(p[0].site.id, 7);
    }

    #[test]
    fn types_kernel_struct_pointers() {
        if dtrace_backend::types::kernel::vmlinux().is_none() {
            return;
        }
        assert!(struct_pointee("struct mm_struct *").is_some());
        assert!(struct_pointee("const struct task_struct *").is_some());
        assert_eq!(struct_pointee("const char *"), None);
        assert_eq!(struct_pointee("struct no_such_struct_here *"), None);
    }
}

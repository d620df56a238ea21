//! The `syscall` provider: `syscall:vmlinux:NAME:entry` and `:return` for every system call
//! with `syscalls:sys_enter_NAME` / `sys_exit_NAME` tracepoints, attached as tracepoint
//! programs. At entry `arg0..` are the call's arguments (the format's fields after
//! `__syscall_nr`); at return `arg0` and `arg1` are the return value and `errno` is set.

use dtrace_backend::program::{ProbeContext, ProbeSite, TracepointLayout};

use crate::tracepoint::{self, Event};
use crate::{ArgStyle, Attach, Probe};

/// The tracepoint category of system calls.
pub const CATEGORY: &str = "syscalls";

/// One entry and one return probe per system call that has both tracepoints, numbered from
/// `first_id`, in the order of `events` (sorted by name).
pub fn probes(events: &[Event], first_id: u32) -> Vec<Probe> {
    let exits: std::collections::HashSet<&str> = events
        .iter()
        .filter(|e| e.category == CATEGORY)
        .filter_map(|e| e.name.strip_prefix("sys_exit_"))
        .collect();
    let mut probes = Vec::new();
    for e in events.iter().filter(|e| e.category == CATEGORY) {
        let Some(func) = e.name.strip_prefix("sys_enter_") else {
            continue;
        };
        if !exits.contains(func) {
            continue;
        }
        for (name, event, style) in [
            ("entry", e.name.clone(), ArgStyle::SyscallEntry),
            (
                "return",
                format!("sys_exit_{func}"),
                ArgStyle::SyscallReturn,
            ),
        ] {
            probes.push(Probe {
                site: ProbeSite {
                    id: first_id + probes.len() as u32,
                    provider: "syscall".into(),
                    module: "vmlinux".into(),
                    function: func.to_string(),
                    name: name.into(),
                    context: ProbeContext::Tracepoint(TracepointLayout::default()),
                },
                attach: Attach::Tracepoint {
                    category: CATEGORY.into(),
                    event,
                    style,
                },
            });
        }
    }
    probes
}

/// The argument layout of a system call tracepoint, from its format file.
pub fn layout(event: &str, style: ArgStyle) -> Result<TracepointLayout, String> {
    let fields = tracepoint::format(CATEGORY, event)?;
    let mut layout = tracepoint::layout(fields, &["__syscall_nr"]);
    if style == ArgStyle::SyscallReturn {
        layout.args.retain(|f| f.name == "ret");
        layout.syscall_return = true;
    }
    Ok(layout)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dtrace_backend::program::FieldKind;

    fn ev(category: &str, name: &str) -> Event {
        Event {
            category: category.into(),
            name: name.into(),
        }
    }

    #[test]
    fn pairs_entry_and_exit_tracepoints() {
        let events = [
            ev("sched", "sched_switch"),
            ev(CATEGORY, "sys_enter_openat"),
            ev(CATEGORY, "sys_enter_orphan"),
            ev(CATEGORY, "sys_exit_openat"),
            ev(CATEGORY, "sys_exit_orphan2"),
        ];
        let p = probes(&events, 10);
        let names: Vec<String> = p.iter().map(|p| p.site.full_name()).collect();
        assert_eq!(
            names,
            [
                "syscall:vmlinux:openat:entry",
                "syscall:vmlinux:openat:return"
            ]
        );
        assert_eq!((p[0].site.id, p[1].site.id), (10, 11));
    }

    #[test]
    fn reads_layouts_of_the_running_kernel() {
        let entry = layout("sys_enter_openat", ArgStyle::SyscallEntry).unwrap();
        assert_eq!(entry.args.len(), 4);
        assert_eq!(entry.args[1].name, "filename");
        assert_eq!(entry.args[1].kind, FieldKind::Pointer);
        assert!(!entry.syscall_return);
        let ret = layout("sys_exit_openat", ArgStyle::SyscallReturn).unwrap();
        assert_eq!(ret.args.len(), 1);
        assert_eq!(ret.args[0].name, "ret");
        assert!(ret.args[0].signed);
        assert!(ret.syscall_return);
    }
}

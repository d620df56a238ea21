//! The `sdt` provider: every kernel tracepoint outside the `syscalls` category (those are the
//! `syscall` provider), named as Oracle Linux DTrace names them: `sdt:CATEGORY::EVENT`
//! (`sdt:sched::sched_process_exec`). Arguments are the format file's fields after the common
//! ones, in order: `arg0..` for integers and pointers, `args[N]` typed (char arrays and
//! `__data_loc` strings as D strings).

use dtrace_backend::program::{ProbeContext, ProbeSite, TracepointLayout};

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

/// The argument layout of tracepoint `category:event`, from its format file.
pub fn layout(category: &str, event: &str) -> Result<TracepointLayout, String> {
    Ok(tracepoint::layout(
        tracepoint::format(category, event)?,
        &[],
    ))
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
}

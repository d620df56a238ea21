//! System call entry probes whose programs read user memory, moved to sleepable fentry
//! programs on the call's `__x64_sys_NAME` function where the kernel loads them, so that a
//! path the process has not touched yet is read (issue 17).
//!
//! A syscall probe is a tracepoint program, which cannot sleep: `copyinstr(arg1)` of a
//! path in a page the process never touched fails ("invalid address"). Whether a probe's
//! program reads user memory is known once it is compiled, and a program for fentry reads
//! its arguments from the call's `struct pt_regs` rather than from the tracepoint's record;
//! so the sources are compiled once, and when some system call entry's program reads user
//! memory and the kernel loads sleepable fentry programs on system calls
//! ([`user_reads::syscall_fentry`]), those probes are described as fentry
//! ([`TracepointLayout::fentry`](dtrace_backend::program::ProbeContext)) and attached as
//! such, and the sources compiled again. Elsewhere they stay tracepoints, and `-v` says why.

use std::collections::HashMap;

use dtrace_backend::program::{Compiled, ProbeContext, ProbeSite};
use dtrace_probes::{Attach, Probe};

use crate::user_reads;

/// Whether `site` is a system call's entry with a tracepoint program of its own.
pub fn is_entry(site: &ProbeSite) -> bool {
    site.provider == "syscall"
        && site.name == "entry"
        && matches!(&site.context, ProbeContext::Tracepoint(l) if l.fentry.is_none())
}

/// Describe as fentry programs the system call entries whose programs in `compiled` read
/// user memory, where the kernel allows it: in `probes` (with their attach), and where
/// `sites` (each clause's probes, and the entry probes of `entry->`) name them. Returns
/// whether any was, and the sources must be compiled again.
pub fn move_to_fentry<'a>(
    compiled: &Compiled,
    probes: &mut HashMap<u32, Probe>,
    sites: impl IntoIterator<Item = &'a mut ProbeSite>,
) -> bool {
    let moved: HashMap<u32, u32> = compiled
        .programs
        .iter()
        .filter(|p| is_entry(&p.probe))
        .filter(|p| dtrace_backend::sleepable::reads_user_memory(&p.code.insns))
        .filter_map(|p| Some((p.probe.id, user_reads::syscall_function(&p.probe.function)?)))
        .collect();
    if moved.is_empty() || user_reads::syscall_fentry().is_err() {
        return false;
    }
    let to_fentry = |site: &mut ProbeSite| {
        if let (Some(&btf_id), ProbeContext::Tracepoint(l)) =
            (moved.get(&site.id), &mut site.context)
        {
            l.fentry = Some(btf_id);
        }
    };
    sites.into_iter().for_each(to_fentry);
    for probe in probes
        .values_mut()
        .filter(|p| moved.contains_key(&p.site.id))
    {
        to_fentry(&mut probe.site);
        probe.attach = Attach::Function;
    }
    true
}

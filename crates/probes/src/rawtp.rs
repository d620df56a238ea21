//! The `rawtp` provider: BTF-typed raw tracepoints (`tp_btf`), named as Oracle Linux DTrace
//! names its raw tracepoint provider: `rawtp:CATEGORY::NAME` (`rawtp:sched::sched_switch`),
//! module `vmlinux` for tracepoints without a tracefs event (bare tracepoints such as
//! `pelt_cfs_tp`).
//!
//! Every tracepoint the kernel's BTF describes with a `btf_trace_NAME` typedef
//! (`typedef void (*btf_trace_sched_switch)(void *, bool, struct task_struct *, ...)`) is a
//! probe. Its program is a `BPF_PROG_TYPE_TRACING` program with attach type
//! `BPF_TRACE_RAW_TP` whose target is that typedef; its context is the array of the
//! tracepoint's arguments after the leading `void *`, so `args[N]` has the prototype's
//! kernel type (`args[1]->comm` on `sched_switch`) and `argN` is the 64-bit value. Unlike
//! `sdt` probes nothing is copied into a trace record first: the arguments are the
//! kernel's own pointers and values.

use std::collections::HashMap;

use dtrace_backend::program::{BtfTracepoint, ProbeContext, ProbeSite};
use dtrace_btf::{Btf, TypeKind};

use crate::tracepoint::Event;
use crate::{syscall, Attach, Probe};

/// The provider's name.
pub const PROVIDER: &str = "rawtp";
/// The prefix of the BTF typedefs that describe raw tracepoints.
const TYPEDEF_PREFIX: &str = "btf_trace_";

/// One probe per `btf_trace_*` typedef in `btf`, numbered from `first_id`, sorted by module
/// and name; the module is the tracepoint's tracefs category from `events`, else `vmlinux`.
pub fn probes(btf: &Btf, events: &[Event], first_id: u32) -> Vec<Probe> {
    let categories: HashMap<&str, &str> = events
        .iter()
        .filter(|e| e.category != syscall::CATEGORY)
        .map(|e| (e.name.as_str(), e.category.as_str()))
        .collect();
    let mut found: Vec<(&str, &str, u32, Vec<u32>)> = btf
        .types()
        .iter()
        .enumerate()
        .filter_map(|(id, t)| {
            let TypeKind::Typedef(target) = t.kind else {
                return None;
            };
            let name = btf.str(t.name).strip_prefix(TYPEDEF_PREFIX)?;
            let args = prototype_args(btf, target)?;
            let module = categories.get(name).copied().unwrap_or("vmlinux");
            Some((module, name, id as u32, args))
        })
        .collect();
    found.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    found.dedup_by(|a, b| a.1 == b.1);
    found
        .into_iter()
        .enumerate()
        .map(|(i, (module, name, btf_id, args))| Probe {
            site: ProbeSite {
                id: first_id + i as u32,
                provider: PROVIDER.into(),
                module: module.to_string(),
                function: String::new(),
                name: name.to_string(),
                context: ProbeContext::BtfTracepoint(BtfTracepoint {
                    name: name.to_string(),
                    btf_id,
                    args,
                }),
            },
            attach: Attach::BtfTracepoint,
        })
        .collect()
}

/// The raw tracepoint `name` (`sched_switch`) as BTF describes it, if it does.
pub fn lookup(btf: &Btf, name: &str) -> Option<BtfTracepoint> {
    let btf_id = btf.find(
        dtrace_btf::Kind::Typedef,
        &format!("{TYPEDEF_PREFIX}{name}"),
    )?;
    let TypeKind::Typedef(target) = btf.get(btf_id)?.kind else {
        return None;
    };
    Some(BtfTracepoint {
        name: name.to_string(),
        btf_id,
        args: prototype_args(btf, target)?,
    })
}

/// The argument types of the function pointer type `ptr` (`void (*)(void *, ARGS...)`),
/// without the leading `void *`.
fn prototype_args(btf: &Btf, ptr: u32) -> Option<Vec<u32>> {
    let TypeKind::Ptr(proto) = btf.get(ptr)?.kind else {
        return None;
    };
    let proto = btf.func_proto(proto)?;
    Some(proto.fixed_params().iter().skip(1).map(|p| p.ty).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_btf_tracepoints_with_typed_arguments() {
        let Some(btf) = dtrace_backend::types::kernel::vmlinux() else {
            return;
        };
        let events = [Event {
            category: "sched".into(),
            name: "sched_switch".into(),
        }];
        let p = probes(btf, &events, 10);
        assert!(p.len() > 100, "only {} raw tracepoints", p.len());
        assert_eq!(p[0].site.id, 10);
        let switch = p
            .iter()
            .find(|p| p.site.name == "sched_switch")
            .expect("sched_switch");
        assert_eq!(switch.site.full_name(), "rawtp:sched::sched_switch");
        let ProbeContext::BtfTracepoint(tp) = &switch.site.context else {
            panic!("{:?}", switch.site.context)
        };
        // (bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int)
        assert!(tp.args.len() >= 3, "{:?}", tp.args);
        assert_eq!(btf.type_name(tp.args[1]), "struct task_struct *");
        // Tracepoints without a tracefs event (here: every other one) are in vmlinux.
        assert!(p.iter().any(|p| p.site.module == "vmlinux"));
    }
}

//! Probes defined over other probes: the `proc`, `sched` and `io` providers.
//!
//! Each probe is a row of a table ([`Def`]): the kernel probe it fires on (a BTF raw
//! tracepoint, or a timer for `sched:::tick`), an optional D predicate over that probe's
//! arguments (`exit` fires at `sched_process_exit` only when `args[1]`, `group_dead`,
//! holds; kernels whose tracepoint lacks it have another filter), and each DTrace argument as a D expression over them (`xlate <psinfo_t *>
//! (args[1])`). The expressions are compiled by the back end as if they were in a clause
//! of the underlying probe ([`ProbeContext::Mapped`]); the types they produce and the
//! translators they use come from the D library (`procfs.d`, `signal.d`, `sched.d`, `io.d`), so
//! what a `psinfo_t` holds is written in D, not here.

use dtrace_backend::program::{
    MappedArg, MappedProbe, ProbeContext, ProbeSite, UprobeContext, UprobeKind,
};

use crate::glob::glob_match;
use crate::{rawtp, Attach, Probe};

/// What a mapped probe fires on.
pub(crate) enum Base {
    /// The BTF raw tracepoint of this name.
    Raw(&'static str),
    /// A timer every `period_ns` on every CPU (`sched:::tick`).
    Timer { period_ns: u64 },
}

/// One probe of a mapped provider.
pub(crate) struct Def {
    pub name: &'static str,
    pub base: Base,
    /// D predicate over the base probe's arguments.
    pub filter: Option<&'static str>,
    /// `(n, filter)`: on a kernel whose tracepoint has only `n` arguments (an older
    /// signature), `filter` instead of [`Def::filter`].
    pub fewer_args: Option<(usize, &'static str)>,
    /// `(D type, D expression)` of `args[0]`, `args[1]`, ...
    pub args: &'static [(&'static str, &'static str)],
}

/// The probes of `provider` from `defs`, numbered from `first_id`, module `vmlinux`; a
/// probe whose raw tracepoint this kernel's BTF lacks is left out.
pub(crate) fn probes(provider: &str, defs: &[Def], first_id: u32) -> Vec<Probe> {
    let btf = dtrace_backend::types::kernel::vmlinux();
    let mut out = Vec::new();
    for def in defs {
        let mut filter = def.filter;
        let (base, attach) = match def.base {
            Base::Raw(name) => {
                let Some(tp) = btf.and_then(|b| rawtp::lookup(b, name)) else {
                    continue;
                };
                if let Some((n, older)) = def.fewer_args {
                    if tp.args.len() <= n {
                        filter = Some(older);
                    }
                }
                (ProbeContext::BtfTracepoint(tp), Attach::BtfTracepoint)
            }
            Base::Timer { period_ns } => (
                ProbeContext::PerfEvent,
                Attach::Timer {
                    period_ns,
                    every_cpu: true,
                },
            ),
        };
        out.push(Probe {
            site: ProbeSite {
                id: first_id + out.len() as u32,
                provider: provider.to_string(),
                module: "vmlinux".to_string(),
                function: String::new(),
                name: def.name.to_string(),
                context: ProbeContext::Mapped(MappedProbe {
                    base: Box::new(base),
                    filter: filter.map(str::to_string),
                    args: def
                        .args
                        .iter()
                        .map(|(ty, expr)| MappedArg {
                            ty: ty.to_string(),
                            expr: expr.to_string(),
                        })
                        .collect(),
                }),
            },
            attach,
        });
    }
    out
}

/// The kernel function a kprobe fallback goes on: `function` itself, or a copy the compiler
/// renamed (`finish_task_switch.isra.0`), as ftrace lists it; None when the kernel has no
/// kprobes or ftrace's list cannot be read.
pub(crate) fn kprobe_symbol(function: &str) -> Option<String> {
    dtrace_runtime::kprobe::kprobe_pmu()?;
    let traceable = crate::fbt::traceable()?;
    if traceable.contains(function) {
        return Some(function.to_string());
    }
    let renamed = format!("{function}.");
    let mut found: Vec<&String> = traceable
        .iter()
        .filter(|f| f.starts_with(&renamed))
        .collect();
    found.sort();
    found.first().map(|f| f.to_string())
}

/// Probe `name` of `provider` fired by a kprobe at the entry of kernel function `function`
/// (see [`kprobe_symbol`]), with no filter and no arguments: for a kernel that lacks the
/// tracepoint the probe is defined over.
pub(crate) fn kprobe_probe(provider: &str, name: &str, function: &str, id: u32) -> Option<Probe> {
    let symbol = kprobe_symbol(function)?;
    Some(Probe {
        site: ProbeSite {
            id,
            provider: provider.to_string(),
            module: "vmlinux".to_string(),
            function: String::new(),
            name: name.to_string(),
            context: ProbeContext::Mapped(MappedProbe {
                base: Box::new(ProbeContext::Uprobe(UprobeContext {
                    kind: UprobeKind::Entry,
                    functions: Vec::new(),
                    ids: Vec::new(),
                    family: None,
                    kernel: Vec::new(),
                    object: None,
                })),
                filter: None,
                args: Vec::new(),
            }),
        },
        attach: Attach::KernelMulti {
            functions: vec![symbol],
            retprobe: false,
            untraceable: Vec::new(),
            multi_link: dtrace_runtime::kprobe::kprobe_multi_available(),
        },
    })
}

/// A probe of a mapped provider that this kernel cannot have, and why (its raw tracepoint
/// is missing, say).
#[derive(Clone, Debug)]
pub struct Missing {
    pub provider: &'static str,
    pub name: &'static str,
    /// What the probe fires on and what this kernel lacks, after "PROVIDER:::NAME ".
    pub why: String,
}

impl Missing {
    /// Whether `desc` names this probe.
    pub fn named_by(&self, desc: &crate::Description) -> bool {
        glob_match(&desc.provider, self.provider)
            && glob_match(&desc.module, "vmlinux")
            && glob_match(&desc.function, "")
            && glob_match(&desc.name, self.name)
    }
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:::{} {}", self.provider, self.name, self.why)
    }
}

/// The probes of `defs` whose raw tracepoint this kernel's BTF lacks.
pub(crate) fn missing(provider: &'static str, defs: &[Def]) -> Vec<Missing> {
    let btf = dtrace_backend::types::kernel::vmlinux();
    defs.iter()
        .filter_map(|def| match def.base {
            Base::Raw(tp) if btf.and_then(|b| rawtp::lookup(b, tp)).is_none() => Some(Missing {
                provider,
                name: def.name,
                why: format!(
                    "fires on the kernel's {tp} tracepoint, which this kernel lacks (newer kernels, 6.18 for one, have it)"
                ),
            }),
            _ => None,
        })
        .collect()
}

/// The kernel tracepoint (or timer) a mapped probe fires on, for documentation and tests.
pub fn base_of(site: &ProbeSite) -> Option<String> {
    let ProbeContext::Mapped(m) = &site.context else {
        return None;
    };
    Some(match &*m.base {
        ProbeContext::BtfTracepoint(tp) => tp.name.clone(),
        _ => "timer".to_string(),
    })
}

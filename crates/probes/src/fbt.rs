//! The `fbt` provider: `fbt:vmlinux:FUNC:entry` and `:return` for every kernel function BTF
//! describes, through fentry/fexit tracing programs (`arg0..` the arguments at entry, `arg1`
//! the return value at return; `args[N]` typed from the function's BTF prototype, so
//! `args[0]->f_path` works, and `args[1]` at return has the return type; `arg0` there is
//! the return offset, unknown: -1 as in Oracle's DTrace). Some kernels refuse fentry/fexit programs (this project's
//! test machine answers EPERM); [`kernel_refusal`] finds out once by loading a tiny one, so a
//! script using fbt fails with one clear sentence instead of a verifier report.

use std::collections::HashSet;
use std::sync::OnceLock;

use dtrace_backend::program::{KernelFunction, ProbeContext, ProbeSite, UprobeContext, UprobeKind};
use dtrace_btf::{Kind, TypeKind};
use dtrace_ebpf::{Insn, R0};
use dtrace_runtime::{AttachType, Program, ProgramSpec, ProgramType};

use crate::{Attach, Probe};

/// Most arguments a BPF trampoline passes.
const MAX_ARGS: usize = 12;

/// Entry and return probes for every non-variadic function in the kernel's BTF, numbered
/// from `first_id` and sorted by function name, then those of modules ([`module_probes`]),
/// each passed to `f` as it is made and not kept (`dtrace -l` lists more than 100,000 of
/// them). None when BTF cannot be read.
pub fn for_each_probe(first_id: u32, mut f: impl FnMut(Probe)) {
    // The back end's copy: parsed once per process, shared with `rawtp` and D's kernel types.
    let Some(btf) = dtrace_backend::types::kernel::vmlinux() else {
        return;
    };
    let mut funcs: Vec<(&str, u32, u32)> = btf
        .types()
        .iter()
        .enumerate()
        .filter_map(|(id, t)| {
            let TypeKind::Func { .. } = t.kind else {
                return None;
            };
            let proto = btf.func_proto(id as u32)?;
            if proto.is_variadic() || proto.params.len() > MAX_ARGS {
                return None;
            }
            Some((btf.str(t.name), id as u32, proto.params.len() as u32))
        })
        .collect();
    funcs.sort_unstable();
    funcs.dedup_by(|a, b| a.0 == b.0);
    let mut id = first_id;
    for (name, btf_id, nargs) in funcs {
        for (probe, ret) in [("entry", false), ("return", true)] {
            f(Probe {
                site: ProbeSite {
                    id,
                    provider: "fbt".into(),
                    module: "vmlinux".into(),
                    function: name.to_string(),
                    name: probe.into(),
                    context: ProbeContext::Function { btf_id, nargs, ret },
                },
                attach: Attach::Function,
            });
            id += 1;
        }
    }
    module_probes(id, f);
}

/// Entry and return probes of the functions of loaded modules that ftrace can trace
/// (`fbt:ext4:ext4_file_open:entry`), numbered from `id`, passed to `next`: kprobes, whose
/// `args[]` the typing pass types from the module's BTF (`/sys/kernel/btf/MODULE`, read
/// only when a clause uses them). None on a kernel without kprobes.
fn module_probes(mut id: u32, mut next: impl FnMut(Probe)) {
    if dtrace_runtime::kprobe::kprobe_pmu().is_none() {
        return;
    }
    let Some(ftrace) = ftrace() else {
        return;
    };
    let multi_link = dtrace_runtime::kprobe::kprobe_multi_available();
    for (function, module) in &ftrace.modules {
        for (probe, ret) in [("entry", false), ("return", true)] {
            next(Probe {
                site: ProbeSite {
                    id,
                    provider: "fbt".into(),
                    module: module.clone(),
                    function: function.clone(),
                    name: probe.into(),
                    context: ProbeContext::Uprobe(UprobeContext {
                        kind: if ret {
                            UprobeKind::Return
                        } else {
                            UprobeKind::Entry
                        },
                        functions: Vec::new(),
                        ids: Vec::new(),
                        family: None,
                        kernel: vec![KernelFunction {
                            module: module.clone(),
                            function: function.clone(),
                        }],
                        object: None,
                    }),
                },
                attach: Attach::KernelMulti {
                    functions: vec![function.clone()],
                    retprobe: ret,
                    untraceable: Vec::new(),
                    multi_link,
                },
            });
            id += 1;
        }
    }
}

/// The types of `args[]` at `indices` (`None`: all of them) of `probe`, an `fbt`
/// function's entry or return probe, as its BTF prototype gives them (`None` where it has
/// no such argument or BTF does not describe it): the functions of a group share it.
pub fn signature(probe: &Probe, indices: &[Option<u64>]) -> Vec<Option<String>> {
    let f = KernelFunction {
        module: probe.site.module.clone(),
        function: probe.site.function.clone(),
    };
    let Some(types) = f.arg_types(probe.site.name == "return") else {
        return vec![None; indices.len()];
    };
    indices
        .iter()
        .map(|i| match i {
            Some(i) => types.get(*i as usize).map(ToString::to_string),
            None => Some(types.iter().map(|t| format!("{t}, ")).collect()),
        })
        .collect()
}

/// Whether `probe` is an `fbt` function's `name` probe (`entry`, `return`) that a group can
/// take: a vmlinux function's, or a module function's kprobe.
pub fn groupable(probe: &Probe, name: &str) -> bool {
    probe.site.name == name
        && match (&probe.site.context, &probe.attach) {
            (ProbeContext::Function { .. }, _) => true,
            (ProbeContext::Uprobe(_), Attach::KernelMulti { functions, .. }) => {
                probe.site.provider == "fbt" && functions.len() == 1
            }
            _ => false,
        }
}

/// What ftrace can trace (`available_filter_functions`), read once.
struct Ftrace {
    /// Every function's name (module functions without their `[module]`).
    all: HashSet<String>,
    /// The functions of modules, with their module, sorted.
    modules: Vec<(String, String)>,
}

fn ftrace() -> Option<&'static Ftrace> {
    static FTRACE: OnceLock<Option<Ftrace>> = OnceLock::new();
    FTRACE
        .get_or_init(|| {
            let root = dtrace_runtime::tracefs::ensure_mounted().ok()?;
            let text = std::fs::read_to_string(root.join("available_filter_functions")).ok()?;
            Some(Ftrace::parse(&text))
        })
        .as_ref()
}

impl Ftrace {
    /// `available_filter_functions`: one function a line, a module's followed by
    /// `[module]`.
    fn parse(text: &str) -> Ftrace {
        let mut all = HashSet::new();
        let mut modules = Vec::new();
        for line in text.lines() {
            let mut words = line.split_whitespace();
            let Some(function) = words.next() else {
                continue;
            };
            if let Some(module) = words
                .next()
                .and_then(|m| m.strip_prefix('[')?.strip_suffix(']'))
            {
                modules.push((function.to_string(), module.to_string()));
            }
            all.insert(function.to_string());
        }
        modules.sort();
        modules.dedup();
        Ftrace { all, modules }
    }
}

/// More functions than this in one description's entry (or return) probes are one probe,
/// attached with one kprobe_multi link, where the kernel has them (as `pid` globs are, with
/// uprobe_multi links): one program instead of one per function, attached in one call.
pub const GROUP_MIN: usize = 8;

/// The functions ftrace can trace (`available_filter_functions`, module functions without
/// their `[module]`), read once; None when the file cannot be read (this project's test
/// machine answers EPERM). A kprobe_multi link fails as a whole on any function not there.
pub fn traceable() -> Option<&'static HashSet<String>> {
    ftrace().map(|f| &f.all)
}

/// The group probe standing for `members` (entry or return probes of `fbt` functions, more
/// than [`GROUP_MIN`]) that description function `glob` matched: a kprobe-type program on a
/// `struct pt_regs` context like a `pid` glob's (`arg0..arg5` the argument registers, `arg1`
/// at return the return value, `probefunc` by attach cookie; `args[]` typed where the
/// functions' BTF prototypes agree), attached
/// with one kprobe_multi link, or, on a kernel without them (no `CONFIG_FPROBE`: Debian
/// 12's 6.1), one perf-event kprobe per function. Functions ftrace cannot trace are left
/// out (listed in the attach, for the session to say so). None when the kernel has no
/// kprobes or ftrace's list cannot be read.
pub fn group(id: u32, module_glob: &str, glob: &str, members: &[Probe]) -> Option<Probe> {
    let first = members.first()?;
    let traceable = traceable()?;
    let multi_link = dtrace_runtime::kprobe::kprobe_multi_available();
    if !multi_link && dtrace_runtime::kprobe::kprobe_pmu().is_none() {
        return None;
    }
    let ret = first.site.name == "return";
    let (kernel, left_out): (Vec<KernelFunction>, Vec<KernelFunction>) = members
        .iter()
        .map(|p| KernelFunction {
            module: p.site.module.clone(),
            function: p.site.function.clone(),
        })
        .partition(|f| traceable.contains(&f.function));
    if kernel.is_empty() {
        return None;
    }
    let functions: Vec<String> = kernel.iter().map(|f| f.function.clone()).collect();
    let left_out = left_out.into_iter().map(|f| f.function).collect();
    // One module, or the description's module glob when the functions span several.
    let module = if members.iter().all(|p| p.site.module == first.site.module) {
        first.site.module.clone()
    } else {
        module_glob.to_string()
    };
    let site = ProbeSite {
        id,
        provider: first.site.provider.clone(),
        module,
        function: glob.to_string(),
        name: first.site.name.clone(),
        context: ProbeContext::Uprobe(UprobeContext {
            kind: if ret {
                UprobeKind::Return
            } else {
                UprobeKind::Entry
            },
            functions: functions.clone(),
            ids: Vec::new(),
            family: None,
            kernel,
            object: None,
        }),
    };
    Some(Probe {
        site,
        attach: Attach::KernelMulti {
            functions,
            retprobe: ret,
            untraceable: left_out,
            multi_link,
        },
    })
}

/// Why this kernel refuses fentry/fexit programs (the kernel's answer to loading a
/// two-instruction fentry program on `vfs_read`), or None if it accepts them. Asked once per
/// process.
pub fn kernel_refusal() -> Option<String> {
    static ANSWER: OnceLock<Option<String>> = OnceLock::new();
    ANSWER.get_or_init(try_fentry).clone()
}

fn try_fentry() -> Option<String> {
    let Some(btf) = dtrace_backend::types::kernel::vmlinux() else {
        return Some("kernel BTF is unreadable".into());
    };
    let Some(target) = btf.find(Kind::Func, "vfs_read") else {
        return Some("kernel BTF does not describe vfs_read".into());
    };
    let insns = [Insn::mov64_imm(R0, 0), Insn::exit()];
    let mut spec = ProgramSpec::new(ProgramType::Tracing, "dt_fentry_test", &insns);
    spec.expected_attach_type = Some(AttachType::TraceFentry);
    spec.attach_btf_id = target;
    match Program::load(&spec) {
        Ok(_) => None,
        Err(e) => Some(match e.errno() {
            Some(errno) => format!(
                "BPF_PROG_LOAD of an fentry program fails with {} ({})",
                errno_name(errno),
                dtrace_runtime::errno_text(&std::io::Error::from_raw_os_error(errno))
            ),
            None => e.to_string(),
        }),
    }
}

fn errno_name(errno: i32) -> String {
    match errno {
        1 => "EPERM".into(),
        22 => "EINVAL".into(),
        524 => "ENOTSUPP".into(),
        95 => "EOPNOTSUPP".into(),
        n => format!("errno {n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_kernel_functions_from_btf() {
        let mut p = Vec::new();
        for_each_probe(100, |probe| p.push(probe));
        assert!(p.len() > 10_000, "only {} fbt probes", p.len());
        let read = p
            .iter()
            .find(|p| p.site.function == "vfs_read" && p.site.name == "entry")
            .expect("fbt:vmlinux:vfs_read:entry");
        assert!(matches!(
            read.site.context,
            ProbeContext::Function {
                nargs: 4,
                ret: false,
                ..
            }
        ));
        assert_eq!(p[0].site.id, 100);
        assert!(p
            .iter()
            .enumerate()
            .all(|(i, p)| p.site.id == 100 + i as u32));
    }

    #[test]
    fn reads_ftrace_functions_and_their_modules() {
        let f = Ftrace::parse(
            "vfs_read\nfinish_task_switch.isra.0\nbm_fill_super [binfmt_misc]\n\nbm_free [binfmt_misc]\nbm_free [binfmt_misc]\n",
        );
        assert!(f.all.contains("vfs_read") && f.all.contains("bm_fill_super"));
        assert!(f.all.contains("finish_task_switch.isra.0"));
        assert_eq!(
            f.modules,
            [
                ("bm_fill_super".to_string(), "binfmt_misc".to_string()),
                ("bm_free".to_string(), "binfmt_misc".to_string())
            ]
        );
    }

    #[test]
    fn the_answer_about_fentry_is_stable() {
        // Whatever this kernel says, it says it the same way twice (and the test machine says
        // EPERM; a kernel that permits fentry answers None).
        assert_eq!(kernel_refusal(), kernel_refusal());
    }
}

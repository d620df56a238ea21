//! Kernel-free tests of the typing pass ("cooking"): D programs parsed by the front end and
//! typed against the kernel types recorded in `tests/data/vmlinux-subset.btf`, which is
//! installed before anything could read the running kernel's BTF, so these tests need
//! neither root nor `/sys/kernel/btf`. They check the types of expressions
//! ([`expr_types`]), the shape of the typed IR ([`ir_shape`]) and every error the pass
//! raises, with its tag and words ([`errors`]).
//!
//! Each clause is enabled on the probe its first description names: `BEGIN`, `END`,
//! `rawtp:sched::sched_switch`, `rawtp:sched::sched_process_exec`, `fbt::vfs_read:entry`
//! or `:return`, a kprobe group `fbt::vfs_rea*:entry` or `:return`, or
//! `fbt:nomod:nomod_f:entry`, described as the probes crate describes them ([`site`]).

mod errors;
mod expr_types;
mod ir_shape;

use std::sync::Once;

use dtrace_btf::{Btf, Kind, TypeKind};
use dtrace_frontend::ast::Item;
use dtrace_frontend::{expand_line_markers, CompileError, Origin, Source};
use dtrace_typing::cook::{cook, BinaryDefs, Input, Options};
use dtrace_typing::format::FormatCheck;
use dtrace_typing::ir::{self, Expr, Stmt};
use dtrace_typing::macros::MacroArgs;
use dtrace_typing::probe::{
    BtfTracepoint, KernelFunction, ProbeContext, ProbeSite, UprobeContext, UprobeKind,
};
use dtrace_typing::types::translators::Provided;
use dtrace_typing::types::{builtin_typedef, kallsyms, kernel, Type};

/// The recorded kernel types.
const RECORDED: &[u8] = include_bytes!("../data/vmlinux-subset.btf");

/// The kernel's symbol table as the typing pass sees it (installed with the BTF): a few
/// symbols, as a kernel without `CONFIG_KALLSYMS_ALL` lists, so a symbol it lacks may
/// still exist; `hidden_banner`'s address is hidden, as `kptr_restrict` hides them.
const KALLSYMS: &str = "\
000000000002e8c0 A runqueues
ffffffff81234560 T vfs_read
ffffffff82000100 D linux_banner
ffffffff82000200 D max_pfn
0000000000000000 D hidden_banner
ffffffffc0002000 d entries\t[binfmt_misc]
";

/// The kernel's BTF as the typing pass sees it: the recording, installed on first call.
fn kernel_btf() -> &'static Btf {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let btf = Btf::parse(RECORDED).expect("the recorded BTF parses");
        assert!(
            kernel::install(btf),
            "kernel BTF was read before the recording"
        );
        assert!(
            kallsyms::install(KALLSYMS),
            "the kernel's symbol table was read before the recording"
        );
    });
    kernel::vmlinux().expect("the recorded BTF is installed")
}

/// Accepts every format: printf checks belong to the caller (the command line).
struct AnyFormat;

impl FormatCheck for AnyFormat {
    fn check(&self, _: &[u8], _: &[Type], _: &str) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

/// A probe of this test's catalog, by the description a clause names it with.
fn site(description: &str) -> ProbeSite {
    let btf = kernel_btf();
    let (id, provider, module, function, name, context) = match description {
        "BEGIN" | "END" => {
            let id = if description == "BEGIN" { 1 } else { 2 };
            (id, "dtrace", "", "", description, ProbeContext::ArgArray)
        }
        "rawtp:sched::sched_switch" => {
            (3, "rawtp", "sched", "", "sched_switch", raw("sched_switch"))
        }
        "rawtp:sched::sched_process_exec" => (
            4,
            "rawtp",
            "sched",
            "",
            "sched_process_exec",
            raw("sched_process_exec"),
        ),
        "fbt::vfs_read:entry" => {
            let btf_id = btf.find(Kind::Func, "vfs_read").expect("func vfs_read");
            let nargs = btf.func_proto(btf_id).expect("a prototype").params.len() as u32;
            let context = ProbeContext::Function {
                btf_id,
                nargs,
                ret: false,
            };
            (5, "fbt", "vmlinux", "vfs_read", "entry", context)
        }
        "fbt::vfs_read:return" => {
            let btf_id = btf.find(Kind::Func, "vfs_read").expect("func vfs_read");
            let nargs = btf.func_proto(btf_id).expect("a prototype").params.len() as u32;
            let context = ProbeContext::Function {
                btf_id,
                nargs,
                ret: true,
            };
            (6, "fbt", "vmlinux", "vfs_read", "return", context)
        }
        // A group's kprobe, as `fbt::group` describes it (`vfs_readv` is not recorded: BTF
        // does not describe it here), and a module's function whose BTF cannot be read.
        "fbt::vfs_rea*:entry" => (7, "fbt", "vmlinux", "vfs_rea*", "entry", kprobe(false)),
        "fbt::vfs_rea*:return" => (8, "fbt", "vmlinux", "vfs_rea*", "return", kprobe(true)),
        "fbt:nomod:nomod_f:entry" => {
            let mut context = kprobe(false);
            if let ProbeContext::Uprobe(u) = &mut context {
                u.functions.clear();
                u.kernel = vec![KernelFunction {
                    module: "nomod".into(),
                    function: "nomod_f".into(),
                }];
            }
            (9, "fbt", "nomod", "nomod_f", "entry", context)
        }
        other => panic!("no probe {other} in the tests' catalog"),
    };
    ProbeSite {
        id,
        provider: provider.into(),
        module: module.into(),
        function: function.into(),
        name: name.into(),
        context,
    }
}

/// The context of a kprobe on `vfs_read` and `vfs_readv`, at their return if `ret`.
fn kprobe(ret: bool) -> ProbeContext {
    let functions = ["vfs_read", "vfs_readv"];
    ProbeContext::Uprobe(UprobeContext {
        kind: if ret {
            UprobeKind::Return
        } else {
            UprobeKind::Entry
        },
        functions: functions.iter().map(|f| f.to_string()).collect(),
        ids: Vec::new(),
        family: None,
        kernel: functions
            .iter()
            .map(|f| KernelFunction {
                module: "vmlinux".into(),
                function: f.to_string(),
            })
            .collect(),
        object: None,
    })
}

/// The context of raw tracepoint `name`, from its `btf_trace_NAME` typedef (a pointer to
/// a prototype whose first parameter, `void *`, is not an argument), as the `rawtp`
/// provider builds it.
fn raw(name: &str) -> ProbeContext {
    let btf = kernel_btf();
    let btf_id = btf
        .find(Kind::Typedef, &format!("btf_trace_{name}"))
        .expect("a btf_trace typedef");
    let TypeKind::Typedef(ptr) = btf.types()[btf_id as usize].kind else {
        unreachable!("found as a typedef")
    };
    let TypeKind::Ptr(proto) = btf.types()[ptr as usize].kind else {
        panic!("btf_trace_{name} is not a function pointer")
    };
    let proto = btf.func_proto(proto).expect("a prototype");
    let args = proto.fixed_params().iter().skip(1).map(|p| p.ty).collect();
    ProbeContext::BtfTracepoint(BtfTracepoint {
        name: name.into(),
        btf_id,
        args,
    })
}

/// A failed compilation: the error's tag and message.
type Failure = (String, String);

/// Parse and type `text`, each clause enabled on the probes `probes` gives for it
/// (`None`: the one its first description names); `$1` is 42, `$2` is `abc` and `$3` a
/// number too large for 64 bits.
fn cook_with(
    text: &str,
    probes: impl Fn(usize, &str) -> Option<Vec<ProbeSite>>,
) -> Result<ir::Program, Failure> {
    compile("", "", text, probes)
}

/// Parse and type `text` after the D library `library`, whose translators are checked
/// only where used, as the command line's library is.
fn cook_after_library(library: &str, text: &str) -> Result<ir::Program, Failure> {
    compile(library, "", text, |_, _| None)
}

/// Parse and type `text` as if its probes were in a binary whose D source is `binary`.
fn cook_with_binary(binary: &str, text: &str) -> Result<ir::Program, Failure> {
    compile("", binary, text, |_, _| None)
}

fn compile(
    library: &str,
    binary: &str,
    text: &str,
    probes: impl Fn(usize, &str) -> Option<Vec<ProbeSite>>,
) -> Result<ir::Program, Failure> {
    kernel_btf();
    let sources = [
        Source::new(Origin::Description, text.to_string()),
        Source::new(Origin::Script("library.d".into()), library.to_string()),
        Source::new(Origin::Script("binary".into()), binary.to_string()),
    ];
    let is_type = |n: &str| builtin_typedef(n).is_some() || kernel::is_typedef(n);
    let fail = |e: CompileError| (e.tag.to_string(), expand_line_markers(&e.message, &sources));
    let library = dtrace_frontend::parse(&sources[1], 1, &is_type).map_err(fail)?;
    let binary = dtrace_frontend::parse(&sources[2], 2, &is_type).map_err(fail)?;
    let mut program = dtrace_frontend::parse(&sources[0], 0, &is_type).map_err(fail)?;
    program.items.splice(0..0, library.items);
    let mut sites = Vec::new();
    let mut translators = Vec::new();
    for item in &program.items {
        match item {
            Item::Clause(c) => {
                let first = &c.probes[0].text;
                sites.push(probes(sites.len(), first).unwrap_or_else(|| vec![site(first)]));
            }
            Item::Translator(t) => translators.push(Provided {
                def: t.clone(),
                eager: t.span.source == 0,
            }),
            _ => {}
        }
    }
    let macros = MacroArgs {
        args: vec![
            "test.d".into(),
            "42".into(),
            "abc".into(),
            "0x12345678123456781".into(),
        ],
        ..MacroArgs::default()
    };
    let binaries: Vec<BinaryDefs> = (!binary.items.is_empty())
        .then(|| BinaryDefs {
            items: binary.items,
            sites: sites.iter().flatten().map(|s| s.id).collect(),
        })
        .into_iter()
        .collect();
    // A clause reading entry-> on return probes also has their entry probes, as the
    // command line gives them.
    let mut entry_sites = Vec::new();
    for (item, clause_sites) in program
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Clause(c) => Some(c),
            _ => None,
        })
        .zip(&sites)
    {
        if item.reads_entry() {
            for s in clause_sites
                .iter()
                .filter(|s| s.provider == "fbt" && s.name == "return")
            {
                let desc = format!("{}::{}:entry", s.provider, s.function);
                if !entry_sites
                    .iter()
                    .any(|e: &ProbeSite| e.id == site(&desc).id)
                {
                    entry_sites.push(site(&desc));
                }
            }
        }
    }
    let statements: Vec<Vec<u32>> = sites
        .iter()
        .enumerate()
        .map(|(i, s)| vec![i as u32; s.len()])
        .collect();
    cook(&Input {
        program: &program,
        probes: &sites,
        statements: &statements,
        options: Options::default(),
        macros: &macros,
        formats: &AnyFormat,
        translators: &translators,
        entry_sites: &entry_sites,
        binaries: &binaries,
    })
    .map_err(fail)
}

/// Parse and type `text`, each clause on the probe its first description names.
fn cook_d(text: &str) -> Result<ir::Program, Failure> {
    cook_with(text, |_, _| None)
}

/// The typed program of `text`, which must compile.
fn program(text: &str) -> ir::Program {
    cook_d(text).unwrap_or_else(|(tag, msg)| panic!("{text}: [{tag}] {msg}"))
}

/// The statements of the first context of clause `clause`.
fn stmts(p: &ir::Program, clause: usize) -> &[Stmt] {
    &p.clauses[clause].bodies[0].stmts
}

/// The expression statement `index` of the last clause of `p`.
fn eval(p: &ir::Program, index: usize) -> &Expr {
    let clause = p.clauses.len() - 1;
    match &stmts(p, clause)[index] {
        Stmt::Eval(e) => e,
        other => panic!("not an expression statement: {other:?}"),
    }
}

/// The typed expression `e`, written as an expression statement of a BEGIN clause after
/// the declarations `decls`.
fn typed_in(decls: &str, e: &str) -> Expr {
    let text = format!("{decls}\nBEGIN {{ {e}; }}");
    eval(&program(&text), 0).clone()
}

/// The type of `e` (in a BEGIN clause) as D spells it.
fn type_of(e: &str) -> String {
    typed_in("", e).ty.to_string()
}

#[test]
fn types_come_from_the_recording_not_the_running_kernel() {
    let btf = kernel_btf();
    assert_eq!(btf.len(), Btf::parse(RECORDED).unwrap().len());
    assert!(btf.len() < 5000, "{} types: not the recording", btf.len());
}

//! Any input to the front end and the typing pass gives a program or a D error: never a
//! panic, an overflowed stack or a hang. Each clause is typed for the probe its first
//! description names among a few (`BEGIN`, `vfs_read`'s entry and return, a raw
//! tracepoint, a timer; `BEGIN` for any other), against the kernel types recorded for the
//! typing pass's own tests, so the target needs no kernel.

#![no_main]

use std::sync::Once;

use dtrace_btf::{Btf, Kind, TypeKind};
use dtrace_frontend::ast::Item;
use dtrace_frontend::{Origin, Source};
use dtrace_typing::cook::{cook, Input, Options};
use dtrace_typing::format::FormatCheck;
use dtrace_typing::macros::MacroArgs;
use dtrace_typing::probe::{BtfTracepoint, ProbeContext, ProbeSite};
use dtrace_typing::types::translators::Provided;
use dtrace_typing::types::{builtin_typedef, kernel, Type};
use libfuzzer_sys::fuzz_target;

const RECORDED: &[u8] = include_bytes!("../../crates/typing/tests/data/vmlinux-subset.btf");

/// Accepts every format (printf's checks belong to the command line).
struct AnyFormat;

impl FormatCheck for AnyFormat {
    fn check(&self, _: &[u8], _: &[Type], _: &str) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

/// The probe a clause is typed for, by its first description: `vfs_read`'s entry or
/// return, the `sched_switch` raw tracepoint, a profile timer, or else `BEGIN`.
fn site(description: &str) -> ProbeSite {
    let btf = kernel::vmlinux().expect("the recorded BTF is installed");
    let function = |ret: bool| {
        let btf_id = btf.find(Kind::Func, "vfs_read").expect("func vfs_read");
        let nargs = btf.func_proto(btf_id).expect("a prototype").params.len() as u32;
        ProbeContext::Function { btf_id, nargs, ret }
    };
    let (provider, function, name, context) = match description {
        "fbt::vfs_read:entry" => ("fbt", "vfs_read", "entry", function(false)),
        "fbt::vfs_read:return" => ("fbt", "vfs_read", "return", function(true)),
        "rawtp:sched::sched_switch" => ("rawtp", "", "sched_switch", switch(btf)),
        d if d.starts_with("profile") || d.starts_with("tick") => {
            ("profile", "", "tick-1s", ProbeContext::PerfEvent)
        }
        _ => ("dtrace", "", "BEGIN", ProbeContext::ArgArray),
    };
    ProbeSite {
        id: 1,
        provider: provider.into(),
        module: String::new(),
        function: function.into(),
        name: name.into(),
        context,
    }
}

/// `sched_switch`'s raw tracepoint context, typed by its `btf_trace_` prototype (whose
/// first parameter is not an argument).
fn switch(btf: &Btf) -> ProbeContext {
    let btf_id = btf
        .find(Kind::Typedef, "btf_trace_sched_switch")
        .expect("a btf_trace typedef");
    let TypeKind::Typedef(ptr) = btf.types()[btf_id as usize].kind else {
        unreachable!("found as a typedef")
    };
    let TypeKind::Ptr(proto) = btf.types()[ptr as usize].kind else {
        unreachable!("btf_trace_sched_switch is a function pointer")
    };
    let proto = btf.func_proto(proto).expect("a prototype");
    let args = proto.fixed_params().iter().skip(1).map(|p| p.ty).collect();
    ProbeContext::BtfTracepoint(BtfTracepoint {
        name: "sched_switch".into(),
        btf_id,
        args,
    })
}

fuzz_target!(|data: &[u8]| {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let btf = Btf::parse(RECORDED).expect("the recorded BTF parses");
        kernel::install(btf);
    });
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // dtrace types on a thread with a large stack (cli/src/large_stack.rs); so does this.
    let text = text.to_string();
    let typed = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || parse_and_type(&text))
        .expect("spawn");
    if let Err(panic) = typed.join() {
        std::panic::resume_unwind(panic);
    }
});

fn parse_and_type(text: &str) {
    let source = Source::new(Origin::Description, text.to_string());
    let is_type = |n: &str| builtin_typedef(n).is_some() || kernel::is_typedef(n);
    let Ok(program) = dtrace_frontend::parse(&source, 0, &is_type) else {
        return;
    };
    let mut sites = Vec::new();
    let mut translators = Vec::new();
    for item in &program.items {
        match item {
            Item::Clause(c) => sites.push(vec![site(&c.probes[0].text)]),
            Item::Translator(t) => translators.push(Provided {
                def: t.clone(),
                eager: true,
            }),
            _ => {}
        }
    }
    let statements: Vec<Vec<u32>> = (0..sites.len() as u32).map(|i| vec![i]).collect();
    let macros = MacroArgs {
        args: vec!["fuzz.d".into(), "42".into(), "abc".into()],
        ..MacroArgs::default()
    };
    let _ = cook(&Input {
        program: &program,
        probes: &sites,
        statements: &statements,
        options: Options::default(),
        macros: &macros,
        formats: &AnyFormat,
        translators: &translators,
        entry_sites: &[],
        binaries: &[],
    });
}

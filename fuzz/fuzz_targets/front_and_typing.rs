//! Any input to the front end and the typing pass gives a program or a D error: never a
//! panic, an overflowed stack or a hang. Clauses are typed for a probe with an argument
//! array (as `BEGIN`'s), against the kernel types recorded for the typing pass's own tests,
//! so the target needs no kernel.

#![no_main]

use std::sync::Once;

use dtrace_btf::Btf;
use dtrace_frontend::ast::Item;
use dtrace_frontend::{Origin, Source};
use dtrace_typing::cook::{cook, Input, Options};
use dtrace_typing::format::FormatCheck;
use dtrace_typing::macros::MacroArgs;
use dtrace_typing::probe::{ProbeContext, ProbeSite};
use dtrace_typing::types::translators::Provided;
use dtrace_typing::types::{builtin_typedef, kernel, Type};
use libfuzzer_sys::fuzz_target;

const RECORDED: &[u8] = include_bytes!("../../crates/typing/tests/data/vmlinux-subset.btf");

/// Accepts every format (printf's checks belong to the command line).
struct AnyFormat;

impl FormatCheck for AnyFormat {
    fn check(&self, _: &str, _: &[Type], _: bool) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

fn begin() -> ProbeSite {
    ProbeSite {
        id: 1,
        provider: "dtrace".into(),
        module: String::new(),
        function: String::new(),
        name: "BEGIN".into(),
        context: ProbeContext::ArgArray,
    }
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
            Item::Clause(_) => sites.push(vec![begin()]),
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
    });
}

//! Back-end tests without the kernel: D error tags of semantic errors, and the shape of
//! compiled programs (programs per probe, records, aggregations, maps).

use dtrace_backend::program::{ActionKind, Compiled, ProbeContext, ProbeSite, TracepointLayout};
use dtrace_backend::types::Type;
use dtrace_backend::{compile, CodegenOptions, Input, KernelLayout};
use dtrace_frontend::ast::Item;
use dtrace_frontend::{Origin, Source};
use dtrace_typing::format::FormatCheck;
use dtrace_typing::macros::MacroArgs;

struct NoKernel;
impl KernelLayout for NoKernel {
    fn member_offset(&self, _: &str, _: &str) -> Option<u32> {
        Some(0)
    }
}

struct AnyFormat;
impl FormatCheck for AnyFormat {
    fn check(&self, _: &[u8], _: &[Type], _: &str) -> Result<(), (&'static str, String)> {
        Ok(())
    }
}

fn site(id: u32, name: &str) -> ProbeSite {
    ProbeSite {
        id,
        provider: "dtrace".into(),
        module: String::new(),
        function: String::new(),
        name: name.into(),
        context: ProbeContext::ArgArray,
    }
}

/// Compile `text`, enabling every clause on BEGIN (id 1), or on END (id 2) when its first
/// probe description says END.
fn build(text: &str) -> Result<Compiled, (String, String)> {
    let source = Source::new(Origin::Description, text.to_string());
    let program = dtrace_frontend::parse(&source, 0, &|n| {
        dtrace_backend::types::builtin_typedef(n).is_some()
    })
    .map_err(|e| (e.tag.to_string(), e.message))?;
    let probes: Vec<Vec<ProbeSite>> = program
        .items
        .iter()
        .filter_map(|i| match i {
            Item::Clause(c) if c.probes[0].text == "END" => Some(vec![site(2, "END")]),
            Item::Clause(_) => Some(vec![site(1, "BEGIN")]),
            _ => None,
        })
        .collect();
    build_on(text, probes)
}

fn tag_of(text: &str) -> String {
    match build(text) {
        Ok(_) => "ok".into(),
        Err((tag, _)) => tag,
    }
}

#[test]
fn semantic_errors_carry_their_d_tags() {
    let cases = [
        ("BEGIN { trace(nosuchvar); }", "D_IDENT_UNDEF"),
        ("BEGIN { x = 1 - \"a\"; }", "D_OP_INCOMPAT"),
        ("BEGIN { x = \"s\"; x = 1; }", "D_OP_INCOMPAT"),
        ("BEGIN { @a = 1; }", "D_AGG_FUNC"),
        ("BEGIN { @a = count(); @a = sum(1); }", "D_AGG_REDEF"),
        ("BEGIN { @a = count(1); }", "D_PROTO_LEN"),
        ("BEGIN { trace(1, 2); }", "D_PROTO_LEN"),
        ("BEGIN { x = count(); }", "D_CG_EXPR"),
        ("BEGIN { x = printf(\"a\"); }", "D_ACT_SPEC"),
        ("BEGIN { x = nosuchfunc(); }", "D_FUNC_UNDEF"),
        ("BEGIN { 1 = 2; }", "D_OP_LVAL"),
        ("BEGIN { printa(@nothere); }", "D_PRINTA_AGGBAD"),
        (
            "BEGIN { @a = lquantize(1, 10, 0, 1); }",
            "D_LQUANT_MISMATCH",
        ),
        (
            "BEGIN { @a = lquantize(1, 0, 10, 0); }",
            "D_LQUANT_STEPTYPE",
        ),
        (
            "BEGIN { @a = lquantize(1, x, 10, 1); }",
            "D_LQUANT_BASETYPE",
        ),
        (
            "BEGIN { @a = llquantize(1, 10, 0, 3, 7); }",
            "D_LLQUANT_STEPVAL",
        ),
        (
            "BEGIN { @a = llquantize(1, 1, 0, 3, 10); }",
            "D_LLQUANT_FACTORVAL",
        ),
        ("BEGIN { x = strlen(1); }", "D_PROTO_ARG"),
        ("BEGIN { trace($3); }", "D_MACRO_UNDEF"),
        ("BEGIN { timestamp = 1; }", "D_OP_WRITE"),
        ("BEGIN { x = -\"a\"; }", "D_OP_ARITH"),
        ("BEGIN { x = 1 / (3 - 3); }", "D_DIV_ZERO"),
        ("BEGIN { x = 7 % (char)0; }", "D_DIV_ZERO"),
        ("BEGIN /\"s\"/ { }", "D_PRED_SCALAR"),
        ("BEGIN { a[1] = 2; a[\"x\"] = 3; }", "D_PROTO_ARG"),
        ("inline int I = I + 1; BEGIN { trace(I); }", "D_IDENT_UNDEF"),
        (
            "BEGIN { trace($1 + 1); printf(\"%d\", strlen(\"ab\")); }",
            "ok",
        ),
    ];
    let mut wrong = Vec::new();
    for (text, want) in cases {
        let got = tag_of(text);
        if got != want {
            wrong.push(format!("{text}: expected {want}, got {got}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn one_program_per_probe_with_clauses_in_order() {
    let c = build("BEGIN { x = 1; } END { trace(x); } BEGIN { @a = count(); }").unwrap();
    assert_eq!(c.programs.len(), 2);
    assert_eq!(c.programs[0].probe.name, "BEGIN");
    assert_eq!(c.programs[1].probe.name, "END");
    // Three enabled probes (epids 1..3) in program order; as in DTrace, the clauses of
    // assignments and aggregations alone write no record.
    let records: Vec<(u32, bool)> = c.enabled.iter().map(|e| (e.epid, e.records)).collect();
    assert_eq!(records, vec![(1, false), (2, true), (3, false)]);
    assert_eq!(c.aggregations.len(), 1);
    assert_eq!(c.aggregations[0].slots, 1);
}

#[test]
fn each_program_tells_where_its_clauses_are() {
    let c = build("BEGIN { x = 1; } END { trace(x); } BEGIN /x/ { @a = count(); }").unwrap();
    let begin = &c.programs[0];
    let statements: Vec<&[u32]> = begin.clauses.iter().map(|k| &k.statements[..]).collect();
    assert_eq!(statements, [&[0], &[2]]);
    let (first, second) = (&begin.clauses[0].insns, &begin.clauses[1].insns);
    // After the probe's prologue, one after the other, before the program's exit.
    assert!(first.start > 0 && !first.is_empty(), "{first:?}");
    assert_eq!(first.end, second.start);
    assert!(second.end < begin.code.insns.len(), "{second:?}");
    let end = &c.programs[1];
    assert_eq!(end.clauses.len(), 1);
    assert_eq!(end.clauses[0].statements, [1]);
    // A group program's clause stands for the statements of all its system calls.
    let entries: Vec<ProbeSite> = (0..20)
        .map(|nr| syscall_site(100 + nr, nr, false))
        .collect();
    let c = build_on("syscall:::entry { trace(probefunc); }", vec![entries]).unwrap();
    assert_eq!(c.programs[0].clauses.len(), 1);
    assert_eq!(c.programs[0].clauses[0].statements, [0]);
}

#[test]
fn records_lay_out_actions_in_order() {
    let c = build("BEGIN { printf(\"%d %s\", 1, \"a\"); trace(2); if (1) { exit(0); } }").unwrap();
    let actions = &c.enabled[0].actions;
    assert_eq!(actions.len(), 3);
    let ActionKind::Printf { args, .. } = &actions[0].kind else {
        panic!("printf first");
    };
    // After the 16-byte header: an 8-byte int, then a string (strsize 256 and its NUL),
    // then the next value 8-byte aligned.
    assert_eq!(args[0].offset, 16);
    assert_eq!(args[1].offset, 24);
    assert!(matches!(&actions[1].kind, ActionKind::Trace(f) if f.offset == 24 + 264));
    assert_eq!(actions[0].presence, None);
    assert_eq!(actions[2].presence, Some(0));
}

#[test]
fn aggregations_get_per_cpu_hash_maps_sized_by_keys() {
    let c = build(
        "string s; BEGIN { @q[\"k\", 1] = quantize(1); @l = lquantize(1, 0, 100, 10); \
         @s[s, execname] = count(); @s[\"k\", \"a string of more than 16\"] = count(); }",
    )
    .unwrap();
    let q = &c.aggregations[0];
    // A histogram's buckets, then the sum of its values.
    assert_eq!(q.slots, 127 + 1);
    // A string key's slot holds the longest string its uses store: "k" takes 8 bytes; a
    // string variable strsize (256 and its NUL, 264 rounded); `execname` 16 unless another
    // use stores more (a 25-byte literal: 32).
    assert_eq!(q.key_size, 8 + 8);
    assert_eq!(c.maps[q.map.0].value_size, 128 * 8);
    assert_eq!(c.aggregations[1].slots, 12 + 1);
    assert_eq!(c.aggregations[2].key_size, 264 + 32);
}

/// A system call probe: `id`, call number `nr`, at entry or return.
fn syscall_site(id: u32, nr: u32, ret: bool) -> ProbeSite {
    ProbeSite {
        id,
        provider: "syscall".into(),
        module: "vmlinux".into(),
        function: format!("call{nr}"),
        name: if ret { "return" } else { "entry" }.into(),
        context: ProbeContext::Tracepoint(TracepointLayout {
            syscall_return: ret,
            syscall_nr: Some(nr),
            ..TracepointLayout::default()
        }),
    }
}

/// Compile `text`, its clause i enabled on `probes[i]` as DTrace statement i (`$1` is 42).
fn build_on(text: &str, probes: Vec<Vec<ProbeSite>>) -> Result<Compiled, (String, String)> {
    let source = Source::new(Origin::Description, text.to_string());
    let program = dtrace_frontend::parse(&source, 0, &|n| {
        dtrace_backend::types::builtin_typedef(n).is_some()
    })
    .map_err(|e| (e.tag.to_string(), e.message))?;
    let macros = MacroArgs {
        args: vec!["dtrace".into(), "42".into()],
        ..MacroArgs::default()
    };
    let statements: Vec<Vec<u32>> = (0..probes.len() as u32)
        .zip(&probes)
        .map(|(i, s)| vec![i; s.len()])
        .collect();
    let typed = dtrace_typing::cook::cook(&dtrace_typing::cook::Input {
        program: &program,
        probes: &probes,
        statements: &statements,
        options: dtrace_typing::cook::Options::default(),
        macros: &macros,
        formats: &AnyFormat,
        translators: &[],
        entry_sites: &[],
        binaries: &[],
    })
    .map_err(|e| (e.tag.to_string(), e.message))?;
    compile(Input {
        program: &typed,
        options: CodegenOptions::default(),
        kernel: &NoKernel,
    })
    .map_err(|e| (e.tag.to_string(), e.message))
}

#[test]
fn many_system_calls_share_one_program_per_direction() {
    let entries: Vec<ProbeSite> = (0..20)
        .map(|nr| syscall_site(100 + nr, nr, false))
        .collect();
    let few: Vec<ProbeSite> = (0..3).map(|nr| syscall_site(200 + nr, nr, true)).collect();
    let c = build_on(
        "syscall:::entry { trace(probefunc); } syscall::a*:return { trace(arg0); }",
        vec![entries, few],
    )
    .unwrap();
    // One group program for the 20 entries, one program per return probe (3 <= 8).
    assert_eq!(c.programs.len(), 4);
    let ProbeContext::SyscallGroup(g) = &c.programs[0].probe.context else {
        panic!("not a group: {:?}", c.programs[0].probe);
    };
    assert!(!g.ret);
    assert_eq!((g.calls.len(), g.table_len()), (20, 20));
    assert_eq!(g.calls[7], (7, 107, "call7".to_string()));
    // An epid per clause and call, in order: the group's name their own call's probe and
    // share the clause's actions; group records have the usual 16-byte header (the epid of
    // the call that fired is written into it at run time).
    assert_eq!(c.enabled.len(), 23);
    for (i, e) in c.enabled[..20].iter().enumerate() {
        assert_eq!((e.epid, e.probe.id), (i as u32 + 1, 100 + i as u32));
        assert_eq!(e.actions, c.enabled[0].actions);
    }
    assert_eq!(c.enabled[5].probe.id, 105);
    assert!(c.enabled[20..].iter().all(|e| e.probe.id >= 200));
    let ActionKind::Trace(f) = &c.enabled[19].actions[0].kind else {
        panic!("{:?}", c.enabled[19].actions);
    };
    assert_eq!(f.offset, 16);
    let ActionKind::Trace(f) = &c.enabled[20].actions[0].kind else {
        panic!("{:?}", c.enabled[20].actions);
    };
    assert_eq!(f.offset, 16);
}

#[test]
fn typed_args_need_a_specific_system_call() {
    let entries: Vec<ProbeSite> = (0..9).map(|nr| syscall_site(100 + nr, nr, false)).collect();
    let (tag, msg) = build_on("syscall:::entry { trace(args[0]); }", vec![entries]).unwrap_err();
    assert_eq!(tag, "D_ARGS_TYPE");
    assert!(
        msg.starts_with("args[ ] needs a specific system call; use arg0"),
        "{msg}"
    );
}

/// A system call entry compiled for fentry on its function reads its arguments from the
/// call's `struct pt_regs` (the context's one argument), not from the tracepoint's record.
#[test]
fn a_system_call_entry_for_fentry_reads_the_registers() {
    use dtrace_backend::program::{FieldKind, TracepointField};
    use dtrace_ebpf::{helpers, Insn, Size, BPF_ADD, R0, R1, R3};
    let field = |name: &str, offset| TracepointField {
        name: name.into(),
        ctype: "unsigned long".into(),
        offset,
        size: 8,
        signed: false,
        kind: FieldKind::Pointer,
    };
    let insns = |fentry| {
        let mut s = syscall_site(100, 257, false);
        s.context = ProbeContext::Tracepoint(TracepointLayout {
            args: vec![field("dfd", 16), field("filename", 24)],
            syscall_nr: Some(257),
            fentry,
            ..TracepointLayout::default()
        });
        let c = build_on("syscall::call257:entry { trace(arg1); }", vec![vec![s]]).unwrap();
        c.programs[0].code.insns.clone()
    };
    let has = |insns: &[Insn], want: &[Insn]| insns.windows(want.len()).any(|w| w == want);
    let record = insns(None);
    assert!(has(&record, &[Insn::ldx(Size::DW, R0, R1, 24)]));
    // arg1: rsi, 104 bytes into struct pt_regs.
    let regs = insns(Some(7));
    assert!(!has(&regs, &[Insn::ldx(Size::DW, R0, R1, 24)]));
    assert!(has(
        &regs,
        &[
            Insn::ldx(Size::DW, R1, R1, 0),
            Insn::mov64_reg(R3, R1),
            Insn::alu64_imm(BPF_ADD, R3, 104),
        ]
    ));
    assert!(has(&regs, &[Insn::call(helpers::PROBE_READ_KERNEL)]));
}

/// A clause on tens of thousands of probes (`fbt:::entry` names some 56,000) is typed and
/// generated once per probe in time linear in their number: keys of probe names share one
/// table of the names, made once per aggregation or array.
#[test]
fn a_clause_on_many_probes_compiles_in_linear_time() {
    let sites: Vec<ProbeSite> = (0..20_000u32)
        .map(|i| ProbeSite {
            function: format!("function_{i}"),
            module: format!("module_{}", i % 7),
            ..site(100 + i, "entry")
        })
        .collect();
    let start = std::time::Instant::now();
    let compiled = build_on(
        "fbt:::entry { @[probefunc] = count(); self->x[probefunc] = 1; a[probefunc, probemod] = 2; }",
        vec![sites],
    )
    .unwrap();
    let took = start.elapsed();
    assert_eq!(compiled.enabled.len(), 20_000);
    assert!(took.as_secs() < 60, "took {took:?}");
}

/// Whether `insns` name scratch at all: its register (r9) or a claim (compare-and-exchange
/// on a claim word).
fn uses_scratch(insns: &[dtrace_ebpf::Insn]) -> bool {
    use dtrace_ebpf::{BPF_ATOMIC, BPF_CMPXCHG, BPF_STX, R9};
    let cmpxchg = |i: &dtrace_ebpf::Insn| {
        i.class() == BPF_STX && i.code & BPF_ATOMIC == BPF_ATOMIC && i.imm == BPF_CMPXCHG
    };
    insns
        .iter()
        .any(|i| i.dst() == R9 || i.src() == R9 || cmpxchg(i))
}

/// The common one-liners need no scratch: their key (one scalar, a probe name's number, or
/// `execname`'s 16 bytes) is built in the frame, the system call number kept there too,
/// and a group clause's epid is stored for nothing that reads it. So they claim no scratch
/// level and release none: the counting group program is 60 instructions, where the claim,
/// the scratch lookup and the release made it 138.
#[test]
fn one_liners_that_need_no_scratch_claim_none() {
    use dtrace_ebpf::{Insn, BPF_ADD, R10, R2};
    let entries: Vec<ProbeSite> = (0..20)
        .map(|nr| syscall_site(100 + nr, nr, false))
        .collect();
    let c = build_on("syscall:::entry { @[probefunc] = count(); }", vec![entries]).unwrap();
    let insns = &c.programs[0].code.insns;
    assert!(!uses_scratch(insns), "{insns:?}");
    assert!(insns.len() <= 60, "{} instructions", insns.len());
    let key_on_stack = [Insn::mov64_reg(R2, R10), Insn::alu64_imm(BPF_ADD, R2, -48)];
    assert!(insns.windows(2).any(|w| w == key_on_stack));
    for clause in [
        "syscall::call3:entry { @ = count(); }",
        "syscall::call3:entry { @[pid] = count(); }",
        "syscall::call3:entry { @[execname] = count(); }",
        "syscall::call3:entry { @[pid, tid] = sum(arg0); }",
    ] {
        let c = build_on(clause, vec![vec![syscall_site(100, 3, false)]]).unwrap();
        assert!(!uses_scratch(&c.programs[0].code.insns), "{clause}");
    }
}

/// A clause that does use scratch (a record, a string, a key too large for the frame)
/// claims a level for the whole firing, as every clause did.
#[test]
fn clauses_that_use_scratch_claim_it() {
    let entries: Vec<ProbeSite> = (0..20)
        .map(|nr| syscall_site(100 + nr, nr, false))
        .collect();
    for clause in [
        "syscall:::entry { @[probefunc] = count(); trace(arg0); }",
        "syscall:::entry { @[probefunc, pid, tid] = count(); }",
        "syscall:::entry { @[copyinstr(arg0)] = count(); }",
        "syscall:::entry { @[stack()] = count(); }",
    ] {
        let c = build_on(clause, vec![entries.clone()]).unwrap();
        assert!(uses_scratch(&c.programs[0].code.insns), "{clause}");
    }
}

/// The prologue's check of the tracing state stands for the first clause's: a program of
/// one clause reads the state once, one of two clauses twice (the second clause's check
/// is what stops it after the first called `exit()`).
#[test]
fn the_first_clause_relies_on_the_prologues_state_check() {
    use dtrace_ebpf::BPF_PSEUDO_MAP_VALUE;
    let state_reads = |text: &str| {
        let c = build_on(text, vec![vec![syscall_site(100, 3, false)]; 2]).unwrap();
        let globals = c.core.globals.0 as i32;
        c.programs[0]
            .code
            .insns
            .iter()
            .filter(|i| i.src().0 == BPF_PSEUDO_MAP_VALUE && i.imm == globals)
            .count()
    };
    assert_eq!(state_reads("syscall::call3:entry { @ = count(); }"), 1);
    assert_eq!(
        state_reads(
            "syscall::call3:entry { @a = count(); } syscall::call3:entry { @b = count(); }"
        ),
        2
    );
}

/// A comparison with a string literal walks the bytes only up to where the literal ends
/// (where the comparison is decided at the latest), not the whole `strsize`.
#[test]
fn comparing_with_a_literal_walks_only_its_bytes() {
    use dtrace_ebpf::{Insn, R0, R3};
    let scan_from = |text: &str, from: i32| {
        let c = build(text).unwrap();
        let start = [Insn::mov64_imm(R3, from), Insn::mov64_imm(R0, 257)];
        c.programs[0].code.insns.windows(2).any(|w| w == start)
    };
    assert!(scan_from("BEGIN { x = \"abcd\"; trace(x == \"ab\"); }", 2));
    assert!(scan_from("BEGIN { x = \"abcd\"; trace(\"abc\" < x); }", 3));
    assert!(scan_from(
        "BEGIN { x = \"abcd\"; y = x; trace(x == y); }",
        256
    ));
}

//! The shape of the typed IR where code generation depends on it: variables created by
//! their first use with its type, explicit conversions, aggregations with their function
//! and key signature, actions, and clauses typed once per probe context.

use dtrace_abi::slots::AggFunc;
use dtrace_typing::ir::{ActionKind, ArithOp, Assoc, Datum, ExprKind, PlaceBase, Stmt, Variable};
use dtrace_typing::types::Type;

use super::{cook_with, eval, program, site, stmts};

/// The variables of a table as (name, type) pairs, as D spells the types.
fn vars(table: &[Variable]) -> Vec<(&str, String)> {
    table
        .iter()
        .map(|v| (v.name.as_str(), v.ty.to_string()))
        .collect()
}

/// The action of statement `index` of clause `clause`.
fn action(p: &dtrace_typing::ir::Program, clause: usize, index: usize) -> &ActionKind {
    match &stmts(p, clause)[index] {
        Stmt::Action(a) => &a.kind,
        other => panic!("not an action: {other:?}"),
    }
}

#[test]
fn an_increment_creates_an_int64_global() {
    let p = program("BEGIN { x++; }");
    assert_eq!(vars(&p.globals), [("x", "int64_t".to_string())]);
    let ExprKind::Update {
        place,
        op,
        value,
        post,
    } = &eval(&p, 0).kind
    else {
        panic!("{:?}", eval(&p, 0))
    };
    assert!(matches!(place.base, PlaceBase::Global(0)));
    assert_eq!(
        (*op, &value.kind, *post),
        (ArithOp::Add, &ExprKind::Int(1), true)
    );
    // A pointer steps by its pointee's size.
    let p = program("BEGIN { p = (int *)0; --p; }");
    let ExprKind::Update { value, post, .. } = &eval(&p, 1).kind else {
        panic!("{:?}", eval(&p, 1))
    };
    assert_eq!((&value.kind, *post), (&ExprKind::Int(4), false));
}

#[test]
fn variables_take_the_type_of_their_first_assignment() {
    let p = program(
        "BEGIN { x = 1; s = execname; t = curthread; self->ts = timestamp; this->n = 'c'; }
         END { x = 2l; }",
    );
    assert_eq!(
        vars(&p.globals),
        [
            ("x", "int".to_string()),
            ("s", "string".into()),
            ("t", "struct task_struct *".into())
        ]
    );
    assert_eq!(vars(&p.thread_vars), [("ts", "uint64_t".to_string())]);
    assert_eq!(vars(&p.this_vars), [("n", "int".to_string())]);
    // The later `long` is stored into the variable's `int` as it is (the store narrows
    // it), and the assignment is an `int`.
    let e = eval(&p, 0);
    let ExprKind::Assign { value, .. } = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!(
        (e.ty.to_string(), value.ty.to_string(), &value.kind),
        ("int".into(), "long".into(), &ExprKind::Int(2))
    );
}

#[test]
fn a_this_assignment_creates_a_clause_local() {
    let p = program("BEGIN { this->t = timestamp; this->t += 1; }");
    assert_eq!(vars(&p.this_vars), [("t", "uint64_t".to_string())]);
    assert!(p.globals.is_empty() && p.thread_vars.is_empty());
    let ExprKind::Assign { place, .. } = &eval(&p, 0).kind else {
        panic!("{:?}", eval(&p, 0))
    };
    assert!(matches!(place.base, PlaceBase::This(0)));
    let ExprKind::Update { place, op, .. } = &eval(&p, 1).kind else {
        panic!("{:?}", eval(&p, 1))
    };
    assert!(matches!(place.base, PlaceBase::This(0)));
    assert_eq!(*op, ArithOp::Add);
}

#[test]
fn declarations_create_variables_of_their_types() {
    let p = program(
        "int g; self string name; this int t; int a[string, int]; self int sa[pid_t];
         BEGIN { g; }",
    );
    assert_eq!(vars(&p.globals), [("g", "int".to_string())]);
    assert_eq!(vars(&p.thread_vars), [("name", "string".to_string())]);
    assert_eq!(vars(&p.this_vars), [("t", "int".to_string())]);
    let assoc = |a: &Assoc| {
        let keys: Vec<String> = a.keys.iter().map(Type::to_string).collect();
        (a.name.clone(), keys, a.value.to_string(), a.thread)
    };
    assert_eq!(
        p.assocs.iter().map(assoc).collect::<Vec<_>>(),
        [
            (
                "a".into(),
                vec!["string".into(), "int".into()],
                "int".into(),
                false
            ),
            ("sa".into(), vec!["pid_t".into()], "int".into(), true)
        ]
    );
}

#[test]
fn associative_arrays_take_their_first_keys_and_value() {
    let p = program("BEGIN { a[execname, 1] = timestamp; a[\"k\", (char)2]; }");
    let a = &p.assocs[0];
    assert_eq!(a.keys, [Type::String, dtrace_typing::types::INT]);
    assert_eq!(a.value.to_string(), "uint64_t");
    // A later key is converted to the key's type.
    let ExprKind::Load(place) = &eval(&p, 1).kind else {
        panic!("{:?}", eval(&p, 1))
    };
    let PlaceBase::Assoc { var: 0, keys } = &place.base else {
        panic!("{place:?}")
    };
    assert_eq!(
        (keys[1].ty.to_string(), &keys[1].kind),
        ("int".into(), &ExprKind::Int(2))
    );
}

#[test]
fn storing_zero_deletes_a_struct_or_string_dynamic_variable() {
    let p = program(
        "struct s { int a; } v;
         BEGIN { a[1] = v; a[1] = 0; self->t = v; self->t = 0; self->str = \"x\"; self->str = 0; }",
    );
    let deleted = |i: usize| match &eval(&p, i).kind {
        ExprKind::Delete(place) => Some(place.base.clone()),
        _ => None,
    };
    assert!(matches!(deleted(1), Some(PlaceBase::Assoc { var: 0, .. })));
    assert!(matches!(deleted(3), Some(PlaceBase::Thread(0))));
    assert!(matches!(deleted(5), Some(PlaceBase::Thread(1))));
    assert_eq!(eval(&p, 5).ty, dtrace_typing::types::INT);
    // Not a global, nor a member: those are stores (a global struct refuses 0).
    let p = program("struct s { int a; } v; BEGIN { a[1] = v; a[1].a = 0; }");
    assert!(matches!(eval(&p, 1).kind, ExprKind::Assign { .. }));
}

#[test]
fn casts_are_the_explicit_conversions() {
    // Operands are not converted: `c + 1` adds the char's value to 1 (an int).
    let p = program("BEGIN { c = (char)1; x = c + 1; y = (char)x + 1; }");
    let operands = |i: usize| {
        let ExprKind::Assign { value, .. } = &eval(&p, i).kind else {
            panic!("{:?}", eval(&p, i))
        };
        let ExprKind::Arith { op, lhs, rhs } = &value.kind else {
            panic!("{value:?}")
        };
        assert_eq!((*op, value.ty.to_string()), (ArithOp::Add, "int".into()));
        assert_eq!(rhs.kind, ExprKind::Int(1));
        (**lhs).clone()
    };
    let lhs = operands(1);
    assert!(matches!(lhs.kind, ExprKind::Load(_)), "{lhs:?}");
    assert_eq!(lhs.ty.to_string(), "char");
    // A cast that narrows is a conversion.
    let lhs = operands(2);
    let ExprKind::Convert(inner) = &lhs.kind else {
        panic!("{lhs:?}")
    };
    assert_eq!(
        (lhs.ty.to_string(), inner.ty.to_string()),
        ("char".into(), "int".into())
    );
}

#[test]
fn aggregations_get_their_function_and_key_types() {
    let p = program(
        "BEGIN {
            @c[execname, pid] = count();
            @q = quantize(timestamp);
            @l[probefunc] = lquantize(arg0, 0, 100, 10);
            @ll = llquantize(arg0, 10, 0, 6, 20);
            @s[stack(), func(arg0)] = sum((char)1);
            @ = avg(1);
        }",
    );
    let summary: Vec<(&str, AggFunc, Vec<String>)> = p
        .aggregations
        .iter()
        .map(|a| {
            let keys = a.keys.iter().map(|(t, _)| t.to_string()).collect();
            (a.name.as_str(), a.func, keys)
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "c",
                AggFunc::Count,
                vec!["string".to_string(), "pid_t".into()]
            ),
            ("q", AggFunc::Quantize, vec![]),
            (
                "l",
                AggFunc::Lquantize {
                    base: 0,
                    limit: 100,
                    step: 10
                },
                vec!["string".into()]
            ),
            (
                "ll",
                AggFunc::Llquantize {
                    factor: 10,
                    low: 0,
                    high: 6,
                    nsteps: 20
                },
                vec![]
            ),
            (
                "s",
                AggFunc::Sum,
                vec!["uint64_t".into(), "uint64_t".into()]
            ),
            ("", AggFunc::Avg, vec![]),
        ]
    );
    let data: Vec<Option<Datum>> = p.aggregations[4].keys.iter().map(|k| k.1).collect();
    assert!(matches!(data[0], Some(Datum::Stack { .. })), "{data:?}");
    assert!(data[1].is_some(), "{data:?}");
    // Values are converted to int64_t.
    let ActionKind::Aggregate {
        aggregation,
        keys,
        args,
    } = action(&p, 0, 4)
    else {
        panic!("{:?}", action(&p, 0, 4))
    };
    assert_eq!((*aggregation, keys.len()), (4, 2));
    assert_eq!(
        (args[0].ty.to_string(), &args[0].kind),
        ("int64_t".into(), &ExprKind::Int(1))
    );
    // A clause of aggregations alone writes no record.
    assert!(!p.clauses[0].bodies[0].records);
}

#[test]
fn actions_are_typed_statements() {
    let p = program(
        "BEGIN { @a = count(); trace(pid); printf(\"%s %d\", execname, 1); printa(@a);
                 exit(0); setopt(\"quiet\"); stack(5); clear(@a); trunc(@a, 1);
                 system(\"echo %d\", pid); }",
    );
    let kinds: Vec<String> = stmts(&p, 0)
        .iter()
        .map(|s| match s {
            Stmt::Action(a) => format!("{:?}", a.kind)
                .split([' ', '(', '{'])
                .next()
                .unwrap_or("")
                .to_string(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "Aggregate",
            "Trace",
            "Printf",
            "Printa",
            "Exit",
            "Setopt",
            "Stack",
            "Clear",
            "Trunc",
            "System"
        ]
    );
    assert!(p.clauses[0].bodies[0].records);
    let ActionKind::Exit(status) = action(&p, 0, 4) else {
        unreachable!()
    };
    assert_eq!(status.ty.to_string(), "int");
    assert_eq!(
        action(&p, 0, 6),
        &ActionKind::Stack(Datum::Stack { frames: 5 })
    );
}

#[test]
fn a_clause_is_typed_once_per_probe_context() {
    let p = cook_with("BEGIN, END { trace(probename); }", |_, _| {
        Some(vec![site("BEGIN"), site("END")])
    })
    .unwrap();
    let bodies = &p.clauses[0].bodies;
    assert_eq!(bodies.len(), 2);
    assert_eq!(
        (
            bodies[0].context.name.as_str(),
            bodies[1].context.name.as_str()
        ),
        ("BEGIN", "END")
    );
    assert_eq!(bodies[0].sites, [site("BEGIN")]);
    // The predicate is typed in each.
    let p = program("rawtp:sched::sched_switch /args[1]->pid == 0/ { }");
    let predicate = p.clauses[0].bodies[0].predicate.as_ref().unwrap();
    assert_eq!(predicate.ty.to_string(), "int");
}

/// What each key position's uses store, over every clause: a string's bound (NUL
/// included, at most strsize: 257 here) and probe names when every use is one.
#[test]
fn key_positions_note_the_longest_string_their_uses_store() {
    let p = program(
        r#"string s;
        BEGIN {
            @a[execname, "abc", 1] = count();
            @a["ab", strjoin("abc", execname), 2] = count();
            @b[probename, probeprov] = count();
            @c[pid ? "x" : "wxyz", s] = count();
            @d[copyinstr(arg0, 8), copyinstr(arg0, 999), copyinstr(arg0, arg1)] = count();
            x[execname] = 1;
        }
        END { @b[probename, "dtrace"] = count(); x["a string of 29 characters...."] = 2; }"#,
    );
    let bounds =
        |i: usize| -> Vec<u32> { p.aggregations[i].uses.iter().map(|u| u.bound).collect() };
    assert_eq!(bounds(0), [16, 19, 0]);
    assert_eq!(bounds(1), [6, 7]);
    assert_eq!(bounds(2), [5, 257]);
    assert_eq!(bounds(3), [8, 257, 257]);
    let assoc: Vec<u32> = p.assocs[0].uses.iter().map(|u| u.bound).collect();
    assert_eq!(assoc, [30]);
    // Probe names: both uses of @b's first key are; its second's "dtrace" is a literal.
    let names = p.aggregations[1].uses[0]
        .names
        .as_ref()
        .expect("probe names");
    assert_eq!(names.table(), ["BEGIN", "END"]);
    assert!(p.aggregations[1].uses[1].names.is_none());
    assert!(p.aggregations[0].uses[0].names.is_none());
}

/// `entry->` in an fbt return: a kretprobe's keyed by the stack pointer, fexit's by the
/// trampoline frame its fentry saver shares; the saver is a clause of its own on the entry.
#[test]
fn entry_state_is_keyed_by_the_frame_both_ends_share() {
    use dtrace_typing::ir::Builtin;
    for (text, key) in [
        (
            "fbt::vfs_read:return { trace(entry->arg1); }",
            Builtin::TrampolineFrame,
        ),
        (
            "fbt::vfs_rea*:return { trace(entry->arg1); }",
            Builtin::StackPointer,
        ),
    ] {
        let p = program(text);
        let body = &p.clauses[0].bodies[0];
        let Some(frame) = &body.entry else {
            panic!("{text}: no entry lookup")
        };
        let frame = match &frame.kind {
            // A kretprobe's key: its stack pointer less the return address.
            ExprKind::Arith { lhs, .. } => &lhs.kind,
            other => other,
        };
        assert_eq!(frame, &ExprKind::Builtin(key), "{text}");
        let saver = &p.clauses[1].bodies[0];
        assert_eq!(saver.context.name, "entry", "{text}");
        let [Stmt::SaveEntry { frame, .. }] = &saver.stmts[..] else {
            panic!("{text}: {:?}", saver.stmts)
        };
        assert_eq!(frame.kind, ExprKind::Builtin(key), "{text}");
    }
}

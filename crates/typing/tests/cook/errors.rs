//! Every error the typing pass raises: one D snippet per message, with its tag and its
//! words, grouped by the part of the language that raises it; and a check that every tag
//! in `src/cook/` has a snippet here.

use std::collections::BTreeSet;

use dtrace_btf::Kind;
use dtrace_typing::probe::{
    BtfTracepoint, FieldKind, MappedArg, MappedProbe, ProbeContext, ProbeSite, TracepointField,
    TracepointLayout,
};

use super::{cook_after_library, cook_d, cook_with, cook_with_binary, kernel_btf, raw, Failure};

/// (D program, tag, message) triples.
type Cases<'a> = &'a [(&'a str, &'a str, &'a str)];

/// Checks that each program fails with its tag and message, listing every one that does
/// not.
fn check(cases: Cases, cook: impl Fn(&str) -> Result<(), Failure>) {
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|&(text, tag, message)| match cook(text) {
            Err((t, m)) if t == tag && m == message => None,
            Err((t, m)) => Some(format!(
                "{text}\n  want [{tag}] {message:?}\n  got  [{t}] {m:?}"
            )),
            Ok(()) => Some(format!(
                "{text}\n  want [{tag}] {message:?}\n  got  no error"
            )),
        })
        .collect();
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

/// Each clause on the probe its first description names.
fn on_named_probes(text: &str) -> Result<(), Failure> {
    cook_d(text).map(|_| ())
}

const STATEMENTS: Cases = &[
    (
        "BEGIN { if (curthread->se) { } }",
        "D_OP_SCALAR",
        "if condition must be of scalar type",
    ),
    (
        "BEGIN { @a = count(); @a; }",
        "D_AGG_NULL",
        "expression has null effect: @a",
    ),
    (
        "BEGIN { @b[1]; }",
        "D_AGG_NULL",
        "expression has null effect: @b",
    ),
    (
        "BEGIN { (void)trace(1); }",
        "D_ACT_SPEC",
        "trace( ) may not be used in an expression",
    ),
    (
        "BEGIN { x = printf(\"a\"); }",
        "D_ACT_SPEC",
        "printf( ) may not be used in an expression",
    ),
    (
        "BEGIN /curthread->se/ { }",
        "D_PRED_SCALAR",
        "predicate result must be of scalar type",
    ),
    (
        "int a[4]; BEGIN /a/ { }",
        "D_PRED_SCALAR",
        "predicate result must be of scalar type",
    ),
];

const ACTIONS: Cases = &[
    (
        "struct t { int a; }; translator struct t < int x > { a = x; }; BEGIN { @a[xlate < struct t * > (1)] = count(); }",
        "D_KEY_TYPE",
        "pointer to translated data expression may not be used as aggregation index: key #1",
    ),
    (
        "int p; BEGIN { p = 1; p -= alloca(10); }",
        "D_OP_VFPTR",
        "operator -= requires left-hand scalar operand of known size",
    ),
    (
        "BEGIN { setopt(1); }",
        "D_PROTO_ARG",
        "setopt( ) argument #1 is incompatible with prototype:\n\tprototype: char *\n\t argument: int",
    ),
    (
        "BEGIN { print(1); }",
        "D_PROTO_ARG",
        "print( ) argument #1 is incompatible with prototype:\n\tprototype: void *\n\t argument: int",
    ),
    (
        "BEGIN { print((void *)0); }",
        "D_PRINT_SIZE",
        "print( ) argument #1 reference has type 'void' with size 0; cannot print( ) it.",
    ),
    (
        "BEGIN { tracemem(123, \"s\"); }",
        "D_PROTO_ARG",
        "tracemem( ) argument #2 is incompatible with prototype:\n\tprototype: size_t\n\t argument: string",
    ),
    (
        "BEGIN { tracemem(123, 8, \"s\"); }",
        "D_PROTO_ARG",
        "tracemem( ) argument #3 is incompatible with prototype:\n\tprototype: ssize_t\n\t argument: string",
    ),
    (
        "BEGIN { tracemem(*curthread, 123); }",
        "D_TRACEMEM_ADDR",
        "tracemem( ) argument #1 is incompatible with prototype:\n\tprototype: pointer or integer\n\t argument: struct task_struct",
    ),
    (
        "BEGIN { tracemem(123, -456); }",
        "D_TRACEMEM_SIZE",
        "tracemem( ) argument #2 must be a non-zero positive integral constant expression",
    ),
    (
        "BEGIN { tracemem(123, 0); }",
        "D_TRACEMEM_SIZE",
        "tracemem( ) argument #2 must be a non-zero positive integral constant expression",
    ),

    (
        "inline int sq[int x] = x * x; BEGIN { trace(sq[1, 2]); }",
        "D_PROTO_LEN",
        "sq[ ] prototype mismatch: 2 args passed, 1 expected",
    ),
    (
        "BEGIN { @a = count(); clear(@a, 1); }",
        "D_PROTO_LEN",
        "clear( ) prototype mismatch: 2 args passed, 1 expected",
    ),
    (
        "BEGIN { @a = count(); normalize(@a); }",
        "D_PROTO_LEN",
        "normalize( ) prototype mismatch: 1 arg passed, 2 expected",
    ),
    (
        "BEGIN { denormalize(); }",
        "D_PROTO_LEN",
        "denormalize( ) prototype mismatch: 0 args passed, 1 expected",
    ),
    (
        "BEGIN { trunc(); }",
        "D_PROTO_LEN",
        "trunc( ) prototype mismatch: 0 args passed, at least 1 expected",
    ),
    (
        "BEGIN { @a = count(); trunc(@a, 1, 2); }",
        "D_PROTO_LEN",
        "trunc( ) prototype mismatch: 3 args passed, at most 2 expected",
    ),
    (
        "BEGIN { trace(); }",
        "D_PROTO_LEN",
        "trace( ) prototype mismatch: 0 args passed, 1 expected",
    ),
    (
        "BEGIN { exit(1, 2); }",
        "D_PROTO_LEN",
        "exit( ) prototype mismatch: 2 args passed, 1 expected",
    ),
    (
        "BEGIN { printf(); }",
        "D_PROTO_LEN",
        "printf( ) prototype mismatch: 0 args passed, at least 1 expected",
    ),
    (
        "BEGIN { exit(\"a\"); }",
        "D_PROTO_ARG",
        "exit( ) argument #1 is incompatible with prototype:\n\tprototype: int\n\t argument: string",
    ),
    (
        "BEGIN { @a = count(); trace(@a); }",
        "D_TRACE_DYN",
        "trace( ) may not be applied to a dynamic expression",
    ),
    (
        "BEGIN { trace(exit(0)); }",
        "D_TRACE_VOID",
        "trace( ) may not be applied to a void expression",
    ),
    (
        "BEGIN { trace((void)1); }",
        "D_UNSUPPORTED",
        "trace( ) of a value of type void is not supported yet",
    ),
    (
        "BEGIN { @a = count(); @b[1] = count(); printa(@a, @b); }",
        "D_PRINTA_AGGKEY",
        "printa( ): @a and @b do not have matching key signatures: @a has 0 keys, @b has 1 key",
    ),
    (
        "BEGIN { @a[1, \"\"] = count(); @b[1, 2] = count(); printa(@a, @b); }",
        "D_PRINTA_AGGPROTO",
        "printa( ): @b[ ] key #2 is incompatible with @a:\n        a key #2: string\n        b key #2: int",
    ),
    (
        "BEGIN { x = curthread; x = pid; }",
        "D_OP_INCOMPAT",
        "operands have incompatible types: \"struct task_struct *\" = \"pid_t\"",
    ),
    (
        // 0 deletes only a dynamic variable.
        "struct s { int a; } v; BEGIN { v = 0; }",
        "D_OP_INCOMPAT",
        "operands have incompatible types: \"struct s\" = \"int\"",
    ),
    (
        "struct s { int a; } v; BEGIN { self->t = v; self->t = 1; }",
        "D_OP_INCOMPAT",
        "operands have incompatible types: \"struct s\" = \"int\"",
    ),
    (
        "BEGIN { this->x[1, 2] = 123; }",
        "D_ARR_LOCAL",
        "local variables may not be used as associative arrays: x",
    ),
    (
        "BEGIN { printf(1); }",
        "D_PROTO_ARG",
        "printf( ) argument #1 is incompatible with prototype:\n\tprototype: string\n\t argument: int",
    ),
    (
        "BEGIN { printf(execname); }",
        "D_PRINTF_ARG_FMT",
        "printf( ) argument #1 is incompatible with prototype:\n\tprototype: string constant\n\t argument: string",
    ),
    (
        "BEGIN { printa(\"%d\"); }",
        "D_PRINTA_PROTO",
        "printa( ) prototype mismatch: 1 args passed, 2 expected",
    ),
    (
        "BEGIN { panic(); }",
        "D_UNSUPPORTED",
        "the panic( ) action is not available on Linux: an eBPF program cannot panic the kernel",
    ),
    (
        "BEGIN { freopen(\".\"); }",
        "D_FREOPEN_INVALID",
        "freopen( ) argument #1 cannot be \".\"",
    ),
    (
        "BEGIN { printa(1); }",
        "D_PRINTA_AGGARG",
        "printa( ) argument #1 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int",
    ),
    (
        "BEGIN { clear(1); }",
        "D_CLEAR_AGGARG",
        "clear( ) argument #1 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int",
    ),
    (
        "BEGIN { trunc(1); }",
        "D_TRUNC_AGGARG",
        "trunc( ) argument #1 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int",
    ),
    (
        "BEGIN { normalize(1, 2); }",
        "D_NORMALIZE_AGGARG",
        "normalize( ) argument #1 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int",
    ),
    (
        "BEGIN { denormalize(1); }",
        "D_NORMALIZE_AGGARG",
        "denormalize( ) argument #1 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: int",
    ),
    (
        "BEGIN { denormalize(count()); }",
        "D_NORMALIZE_AGGARG",
        "denormalize( ) argument #1 is incompatible with prototype:\n\tprototype: aggregation\n\t argument: non-aggregation",
    ),
    (
        "BEGIN { printa(@x); }",
        "D_PRINTA_AGGBAD",
        "undefined aggregation: @x",
    ),
    (
        "BEGIN { clear(@x); }",
        "D_CLEAR_AGGBAD",
        "undefined aggregation: @x",
    ),
    (
        "BEGIN { trunc(@x); }",
        "D_TRUNC_AGGBAD",
        "undefined aggregation: @x",
    ),
    (
        "BEGIN { normalize(@x, 2); }",
        "D_NORMALIZE_AGGBAD",
        "undefined aggregation: @x",
    ),
    (
        "BEGIN { denormalize(@x); }",
        "D_NORMALIZE_AGGBAD",
        "undefined aggregation: @x",
    ),
    (
        "BEGIN { stack(0); }",
        "D_STACK_SIZE",
        "stack( ) argument #1 must be a non-zero positive integer constant",
    ),
    (
        "BEGIN { ustack(-1); }",
        "D_USTACK_FRAMES",
        "ustack( ) argument #1 must be a non-zero positive integer constant",
    ),
    (
        "BEGIN { ustack(1, -1); }",
        "D_USTACK_STRSIZE",
        "ustack( ) argument #2 must be a positive integer constant",
    ),
    (
        "BEGIN { a[x]++; }",
        "D_IDENT_UNDEF",
        "failed to resolve x: Unknown variable name",
    ),
    (
        "BEGIN { trace(b[y]); }",
        "D_IDENT_UNDEF",
        "failed to resolve y: Unknown variable name",
    ),
    (
        "BEGIN { stack(\"x\"); }",
        "D_PROTO_ARG",
        "stack( ) argument #1 is incompatible with prototype:\n\tprototype: uint32_t\n\t argument: string",
    ),
    (
        "BEGIN { ustack(2, execname); }",
        "D_PROTO_ARG",
        "ustack( ) argument #2 is incompatible with prototype:\n\tprototype: uint32_t\n\t argument: string",
    ),
    (
        "BEGIN { trace(func(execname)); }",
        "D_PROTO_ARG",
        "argument #1 is incompatible with prototype:\n\tprototype: uintptr_t\n\t argument: string",
    ),
    (
        "BEGIN { setopt(\"quiet\", 1); }",
        "D_PROTO_ARG",
        "setopt( ) argument #2 is incompatible with prototype:\n\tprototype: char *\n\t argument: int",
    ),
    // The order of actions around speculations.
    (
        "BEGIN { speculate(1); speculate(2); }",
        "D_SPEC_SPEC",
        "speculate( ) may not follow speculate( )",
    ),
    (
        "BEGIN { commit(1); speculate(2); }",
        "D_SPEC_COMM",
        "speculate( ) may not follow commit( )",
    ),
    (
        "BEGIN { trace(1); speculate(2); }",
        "D_SPEC_DREC",
        "speculate( ) may not follow data-recording action(s)",
    ),
    (
        "BEGIN { @a = count(); commit(2); }",
        "D_COMM_DREC",
        "commit( ) may not follow data-recording action(s)",
    ),
    (
        "BEGIN { commit(1); @a = sum(1); }",
        "D_AGG_COMM",
        "aggregating actions may not follow commit( )",
    ),
    (
        "BEGIN { speculate(1); @a = max(1); }",
        "D_AGG_SPEC",
        "aggregating actions may not follow speculate( )",
    ),
    (
        "BEGIN { speculate(1); raise(9); }",
        "D_ACT_SPEC",
        "destructive actions may not follow speculate( )",
    ),
    (
        "BEGIN { speculate(1); exit(0); }",
        "D_EXIT_SPEC",
        "exit( ) may not follow speculate( )",
    ),
    (
        "BEGIN { discard(2); commit(1); printf(\"x\"); }",
        "D_DREC_COMM",
        "data-recording actions may not follow commit( )",
    ),
    (
        "BEGIN { speculate(); }",
        "D_PROTO_LEN",
        "speculate( ) prototype mismatch: 0 args passed, 1 expected",
    ),
];

const AGGREGATIONS: Cases = &[
    // A call of a non-name in the value is refused before the value's kind.
    (
        "BEGIN { @ = tick-1(); }",
        "D_FUNC_IDENT",
        "function designator is not of function type",
    ),
    (
        "BEGIN { @a[(void)1] = count(); }",
        "D_KEY_TYPE",
        "void expression may not be used as aggregation index: key #1",
    ),
    (
        "BEGIN { @a = 1; }",
        "D_AGG_FUNC",
        "@a must be assigned the result of an aggregating function",
    ),
    (
        "BEGIN { @a = strlen(\"a\"); }",
        "D_AGG_FUNC",
        "@a must be assigned the result of an aggregating function",
    ),
    (
        "BEGIN { @a += 1; }",
        "D_AGG_FUNC",
        "aggregating function required to the right of an aggregation assignment",
    ),
    (
        "BEGIN { x = count(); }",
        "D_CG_EXPR",
        "aggregating function count( ) may not be called from a D expression (D program context required)",
    ),
    (
        "BEGIN { @a = count(); trace(@a + 3); }",
        "D_OP_INCOMPAT",
        "operands have incompatible types: \"aggregation @a\" + \"int\"",
    ),
    (
        "BEGIN { @a = nosuch(); }",
        "D_FUNC_UNDEF",
        "undefined function name: nosuch",
    ),
    (
        "BEGIN { @a = sum(execname); }",
        "D_AGG_SCALAR",
        "sum( ) argument #1 must be of scalar type",
    ),
    (
        "BEGIN { @a = count(); x = @a; }",
        "D_AGG_SCALAR",
        "aggregations may not be used in an expression; use printa()",
    ),
    (
        "BEGIN { @a[1] = count(); trace(@a[1]); }",
        "D_AGG_SCALAR",
        "aggregations may not be used in an expression; use printa()",
    ),
    (
        "BEGIN { @a[1][2] = count(); }",
        "D_AGG_MDIM",
        "improper attempt to reference @a as a multi-dimensional array",
    ),
    (
        "BEGIN { @a[1] = count(); trace(@a[1][2]); }",
        "D_AGG_MDIM",
        "improper attempt to reference @a as a multi-dimensional array",
    ),
    (
        "BEGIN { @a = quantize(1, \"x\"); }",
        "D_PROTO_ARG",
        "quantize( ) argument #2 is incompatible with prototype:\n\tprototype: int64_t\n\t argument: string",
    ),
    (
        "BEGIN { @a = count(); @a = sum(1); }",
        "D_AGG_REDEF",
        "aggregation redefined: @a\n\t current: @a = sum( )\n\tprevious: @a = count( ) : line 1",
    ),
    (
        "BEGIN { @a[1] = count(); @a[1, 2] = count(); }",
        "D_AGG_REDEF",
        "aggregation @a used with a different key signature",
    ),
    (
        "BEGIN { @a[1] = count(); @a[\"x\"] = count(); }",
        "D_ARR_BADREF",
        "key expression has type string; int expected",
    ),
    (
        "BEGIN { @a = count(1); }",
        "D_PROTO_LEN",
        "count( ) prototype mismatch: 1 arg passed, 0 expected",
    ),
    (
        "BEGIN { @a = lquantize(1); }",
        "D_PROTO_LEN",
        "lquantize( ) prototype mismatch: 1 arg passed, 3 to 5 expected",
    ),
    (
        "BEGIN { @a = lquantize(1, x, 10, 1); }",
        "D_LQUANT_BASETYPE",
        "lquantize( ) argument #1 must be an integer constant",
    ),
    (
        "BEGIN { @a = lquantize(1, 2147483657, 1000); }",
        "D_LQUANT_BASEVAL",
        "lquantize( ) argument #1 must be a 32-bit quantity",
    ),
    (
        "BEGIN { @a = lquantize(1, 0, x); }",
        "D_LQUANT_LIMTYPE",
        "lquantize( ) argument #2 must be an integer constant",
    ),
    (
        "BEGIN { @a = lquantize(1, 100, -2147483657); }",
        "D_LQUANT_LIMVAL",
        "lquantize( ) argument #2 must be a 32-bit quantity",
    ),
    (
        "BEGIN { @a = lquantize(1, 0, 10, x); }",
        "D_LQUANT_STEPTYPE",
        "lquantize( ) argument #3 must be a non-zero positive integer constant",
    ),
    (
        "BEGIN { @a = lquantize(1, 0, 10, 0); }",
        "D_LQUANT_STEPTYPE",
        "lquantize( ) argument #3 must be a non-zero positive integer constant",
    ),
    (
        "BEGIN { @a = lquantize(1, 1, 100000, 100000); }",
        "D_LQUANT_STEPVAL",
        "lquantize( ) argument #3 must be a 16-bit quantity",
    ),
    (
        "BEGIN { @a = lquantize(1, 10, 0, 1); }",
        "D_LQUANT_MISMATCH",
        "lquantize( ) base (argument #1) must be less than limit (argument #2)",
    ),
    (
        "BEGIN { @a = lquantize(1, 2, 3, 4); }",
        "D_LQUANT_STEPLARGE",
        "lquantize( ) step (argument #3) too large: must have at least one quantization level",
    ),
    (
        "BEGIN { @a = lquantize(1, 0, 1000000, 1); }",
        "D_LQUANT_STEPSMALL",
        "lquantize( ) step (argument #3) too small: number of quantization levels must be a 16-bit quantity",
    ),
    (
        "BEGIN { @a = lquantize(1, 0, 10000, 1); }",
        "D_LQUANT_STEPSMALL",
        "lquantize( ) step (1) is too small for the range: this implementation keeps at most 4093 levels",
    ),
    (
        "BEGIN { @a = llquantize(1, x, 0, 6, 20); }",
        "D_LLQUANT_FACTORTYPE",
        "llquantize( ) argument #1 must be an integer constant",
    ),
    (
        "BEGIN { @a = llquantize(1, 1, 0, 6, 20); }",
        "D_LLQUANT_FACTORVAL",
        "llquantize( ) argument #1 must be an unsigned 16-bit quantity greater than or equal to 2",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, x, 6, 20); }",
        "D_LLQUANT_LMAGTYPE",
        "llquantize( ) argument #2 must be an integer constant",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, -1, 6, 20); }",
        "D_LLQUANT_LMAGVAL",
        "llquantize( ) argument #2 must be an unsigned 16-bit quantity",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, x, 20); }",
        "D_LLQUANT_HMAGTYPE",
        "llquantize( ) argument #3 must be an integer constant",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, 70000, 20); }",
        "D_LLQUANT_HMAGVAL",
        "llquantize( ) argument #3 must be an unsigned 16-bit quantity",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 5, 2, 20); }",
        "D_LLQUANT_HMAGVAL",
        "llquantize( ) argument #3 (high magnitude) must be at least argument #2 (low magnitude)",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, 19, 10); }",
        "D_LLQUANT_HMAGVAL",
        "llquantize( ) argument #3 (high magnitude) will cause overflow of 64 bits",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, 6, x); }",
        "D_LLQUANT_STEPTYPE",
        "llquantize( ) argument #4 must be a non-zero positive integer constant",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, 6, 0); }",
        "D_LLQUANT_STEPTYPE",
        "llquantize( ) argument #4 must be a non-zero positive integer constant",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, 6, 70000); }",
        "D_LLQUANT_STEPVAL",
        "llquantize( ) argument #4 must be an unsigned 16-bit quantity",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, 6, 3); }",
        "D_LLQUANT_STEPVAL",
        "llquantize() argument #4 (steps) must evenly divide argument #1 (factor) when steps<factor",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, 6, 25); }",
        "D_LLQUANT_STEPVAL",
        "llquantize() argument #4 (steps) must be a multiple of argument #1 (factor) when steps>factor",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, 6, 1000); }",
        "D_LLQUANT_STEPVAL",
        "llquantize() argument #4 (steps) must evenly divide the square of argument #1 (factor) when steps>factor and lmag==0",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 1, 6, 1000); }",
        "D_LLQUANT_STEPVAL",
        "llquantize() argument #4 (steps) must evenly divide pow(argument #1 (factor), lmag (argument #2) + 1) when steps>factor and lmag>0",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 2, 18, 1000); }",
        "D_LLQUANT_NSTEPS",
        "llquantize( ) has too many buckets",
    ),
    (
        "BEGIN { @a = lquantize(1, 0, 10, 1); @a = lquantize(1, 1, 10, 1); }",
        "D_LQUANT_MATCHBASE",
        "lquantize( ) base (argument #1) doesn't match previous declaration: expected 0, found 1",
    ),
    (
        "BEGIN { @a = lquantize(1, 0, 10, 1); @a = lquantize(1, 0, 20, 1); }",
        "D_LQUANT_MATCHLIM",
        "lquantize( ) limit (argument #2) doesn't match previous declaration: expected 10, found 20",
    ),
    (
        "BEGIN { @a = lquantize(1, 0, 10, 1); @a = lquantize(1, 0, 10, 2); }",
        "D_LQUANT_MATCHSTEP",
        "lquantize( ) step (argument #3) doesn't match previous declaration: expected 1, found 2",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, 6, 20); @a = llquantize(1, 5, 0, 6, 25); }",
        "D_LLQUANT_MATCHFACTOR",
        "llquantize( ) factor (argument #1) doesn't match previous declaration: expected 10, found 5",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, 6, 20); @a = llquantize(1, 10, 1, 6, 20); }",
        "D_LLQUANT_MATCHLMAG",
        "llquantize( ) lmag (argument #2) doesn't match previous declaration: expected 0, found 1",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, 6, 20); @a = llquantize(1, 10, 0, 7, 20); }",
        "D_LLQUANT_MATCHHMAG",
        "llquantize( ) hmag (argument #3) doesn't match previous declaration: expected 6, found 7",
    ),
    (
        "BEGIN { @a = llquantize(1, 10, 0, 6, 20); @a = llquantize(1, 10, 0, 6, 10); }",
        "D_LLQUANT_MATCHSTEPS",
        "llquantize( ) steps (argument #4) doesn't match previous declaration: expected 20, found 10",
    ),
];

const CALLS: Cases = &[
    (
        "BEGIN { strlen(); }",
        "D_PROTO_LEN",
        "strlen( ) prototype mismatch: 0 args passed, 1 expected",
    ),
    (
        "BEGIN { substr(\"a\"); }",
        "D_PROTO_LEN",
        "substr( ) prototype mismatch: 1 arg passed, at least 2 expected",
    ),
    (
        "BEGIN { substr(\"a\", 1, 2, 3); }",
        "D_PROTO_LEN",
        "substr( ) prototype mismatch: 4 args passed, at most 3 expected",
    ),
    (
        "BEGIN { strlen(1); }",
        "D_PROTO_ARG",
        "strlen( ) argument #1 is incompatible with prototype:\n\tprototype: char *\n\t argument: int",
    ),
    (
        "BEGIN { x = nosuch(); }",
        "D_FUNC_UNDEF",
        "undefined function name: nosuch",
    ),
    (
        "BEGIN { x = progenyof(\"a\"); }",
        "D_PROTO_ARG",
        "progenyof( ) argument #1 is incompatible with prototype:\n\tprototype: pid_t\n\t argument: string",
    ),
    (
        "BEGIN { x = htons(\"a\"); }",
        "D_PROTO_ARG",
        "htons( ) argument #1 is incompatible with prototype:\n\tprototype: uint16_t\n\t argument: string",
    ),
    (
        "BEGIN { x = strtok(1, \"b\"); }",
        "D_PROTO_ARG",
        "strtok( ) argument #1 is incompatible with prototype:\n\tprototype: char *\n\t argument: int",
    ),
    (
        "BEGIN { mutex_owned(\"m\"); }",
        "D_PROTO_ARG",
        "mutex_owned( ) argument #1 is incompatible with prototype:\n\tprototype: struct mutex *\n\t argument: string",
    ),
    (
        "BEGIN { x = msgsize(curthread); }",
        "D_UNSUPPORTED",
        "msgsize( ) measures a Solaris STREAMS message (mblk_t); Linux has no STREAMS",
    ),
    (
        "BEGIN { copyin(arg0, 0); }",
        "D_PROTO_ARG",
        "copyin( ) size 0 is out of range: 1 to 4096 bytes",
    ),
    (
        "BEGIN { raise(\"a\"); }",
        "D_PROTO_ARG",
        "raise( ) argument #1 is incompatible with prototype:\n\tprototype: int\n\t argument: string",
    ),
    (
        "BEGIN { copyout(\"a\", \"b\", 1); }",
        "D_PROTO_ARG",
        "copyout( ) argument #2 is incompatible with prototype:\n\tprototype: uintptr_t\n\t argument: string",
    ),
    (
        "BEGIN { p -= trace(0); }",
        "D_VAR_UNDEF",
        "p has not yet been declared or assigned",
    ),
    (
        "BEGIN { self->q += 2; }",
        "D_VAR_UNDEF",
        "self->q has not yet been declared or assigned",
    ),
    (
        "BEGIN { x = alloca(257); }",
        "D_ALLOCA_SIZE",
        "alloca(257) size larger than scratchsize 256",
    ),
    (
        "BEGIN { bcopy(\"a\", \"b\", 1); }",
        "D_PROTO_ARG",
        "bcopy( ) argument #2 is incompatible with prototype:\n\tprototype: alloca pointer\n\t argument: string",
    ),
];

const CONTEXT: Cases = &[
    (
        "BEGIN { trace(args); }",
        "D_IDENT_BADREF",
        "associative array 'args' may not be referenced as scalar",
    ),
    (
        "BEGIN { trace(args[-1]); }",
        "D_ARGS_IDX",
        "index -1 is out of range for dtrace:::BEGIN args[ ]",
    ),
    (
        "BEGIN { trace(args[\"a\"]); }",
        "D_PROTO_ARG",
        "args[ ] argument #1 is incompatible with prototype:\n\tprototype: integer constant\n\t argument: string",
    ),
    (
        "BEGIN { trace(args[0, 1]); }",
        "D_PROTO_LEN",
        "args[ ] prototype mismatch: 2 args passed, 1 expected",
    ),
    (
        "rawtp:sched::sched_switch { trace(args[4]); }",
        "D_ARGS_IDX",
        "index 4 is out of range for rawtp:sched::sched_switch args[ ]",
    ),
    (
        "fbt::vfs_read:entry { trace(args[4]); }",
        "D_ARGS_IDX",
        "index 4 is out of range for fbt:vmlinux:vfs_read:entry args[ ]",
    ),
    (
        "fbt::vfs_read:return { trace(args[2]); }",
        "D_ARGS_IDX",
        "index 2 is out of range for fbt:vmlinux:vfs_read:return args[ ]",
    ),
    (
        "fbt::vfs_rea*:entry { trace(args[4]); }",
        "D_ARGS_IDX",
        "index 4 is out of range for fbt:vmlinux:vfs_rea*:entry args[ ] (vfs_read has no args[4])",
    ),
    (
        "BEGIN { trace(args[0]); }",
        "D_ARGS_IDX",
        "index 0 is out of range for dtrace:::BEGIN args[ ]",
    ),
    (
        "BEGIN { @[zonename] = count(); }",
        "D_UNSUPPORTED",
        "zonename is not available on Linux (it has no zones)",
    ),
    (
        "BEGIN { a[1] = 2; trace(sizeof (a)); }",
        "D_IDENT_BADREF",
        "associative array 'a' may not be referenced as scalar",
    ),
    (
        "BEGIN { trace(uregs); }",
        "D_IDENT_BADREF",
        "associative array 'uregs' may not be referenced as scalar",
    ),
    (
        "BEGIN { trace(uregs[1, 2]); }",
        "D_PROTO_LEN",
        "uregs[ ] prototype mismatch: 2 args passed, 1 expected",
    ),
    (
        "BEGIN { i = R_SP; trace(uregs[i]); }",
        "D_PROTO_ARG",
        "uregs[ ] argument #1 is incompatible with prototype:\n\tprototype: integer constant\n\t argument: int",
    ),
    (
        "BEGIN { trace(uregs[-1]); }",
        "D_REGS_IDX",
        "index -1 is out of range for array uregs",
    ),
    (
        "BEGIN { trace(uregs[R_TRAPNO + 1]); }",
        "D_UNKNOWN",
        "uregs[]: index out of bounds (26)",
    ),
];

const DECLARATIONS: Cases = &[
    (
        "extern int; BEGIN { }",
        "D_DECL_USELESS",
        "useless declaration",
    ),
    (
        "register x; BEGIN { }",
        "D_DECL_BADCLASS",
        "specified storage class not appropriate in D",
    ),
    (
        "static int y; BEGIN { }",
        "D_DECL_BADCLASS",
        "specified storage class not appropriate in D",
    ),
    (
        "BEGIN { sizeof (struct { int a; }); }",
        "D_UNKNOWN",
        "failed to resolve type type : Unknown type name",
    ),
    (
        "BEGIN { sizeof (int [string]); }",
        "D_DECL_DYNOBJ",
        "associative arrays may only be declared as variables",
    ),
    (
        "struct s { int a[int]; };",
        "D_DECL_DYNOBJ",
        "associative arrays may only be declared as variables",
    ),
    ("int a[5000000000];", "D_DECL_ARRBIG", "array dimension too big"),
    (
        "int a[-1];",
        "D_DECL_ARRSUB",
        "positive integral constant expression or tuple signature expected as array declaration subscript",
    ),
    (
        "int a[];",
        "D_DECL_ARRNULL",
        "array declaration requires array dimension or tuple signature: a",
    ),
    (
        "struct s { int a; }; struct s { int b; };",
        "D_DECL_TYPERED",
        "type redeclared: struct s",
    ),
    (
        "struct s { void v; };",
        "D_DECL_VOIDOBJ",
        "cannot have void member: v",
    ),
    (
        "struct s { int a; int a; };",
        "D_UNKNOWN",
        "failed to define member 'a': Duplicate member or variable name",
    ),
    (
        "struct s { struct nosuch x; };",
        "D_DECL_INCOMPLETE",
        "incomplete struct/union/enum struct nosuch: x",
    ),
    (
        "union nosuch x;",
        "D_DECL_INCOMPLETE",
        "incomplete struct/union/enum union nosuch: x",
    ),
    (
        "struct s { string a : 3; };",
        "D_DECL_BFTYPE",
        "invalid type for bit-field: a",
    ),
    (
        "struct s { char a : 9; };",
        "D_DECL_BFSIZE",
        "bit-field too big for type: a",
    ),
    (
        "struct s { int a : 0; };",
        "D_DECL_BFCONST",
        "positive integral constant expression expected as bit-field size",
    ),
    (
        "typedef int t; typedef int t;",
        "D_DECL_IDRED",
        "typedef redeclared: t",
    ),
    ("int x; int x;", "D_DECL_IDRED", "identifier redeclared: x"),
    (
        "enum e { A }; enum f { A };",
        "D_DECL_IDRED",
        "identifier redeclared: A",
    ),
    (
        "enum e { A, A };",
        "D_UNKNOWN",
        "failed to define enumerator 'A': Duplicate member or variable name",
    ),
    (
        "enum e { A = \"s\" };",
        "D_DECL_ENCONST",
        "enumerator 'A' must be assigned to an integral constant expression",
    ),
    (
        "enum e { A = 2147483648 };",
        "D_DECL_ENOFLOW",
        "enumerator 'A' value overflows INT_MAX (2147483647)",
    ),
    (
        "int vmlinux`x;",
        "D_DECL_SCOPE",
        "D scoping operator may not be used in a declaration name (vmlinux`x)",
    ),
    (
        "this int a[int];",
        "D_DECL_LOCASSC",
        "associative arrays may not be declared as local variables: a",
    ),
    (
        "int a[void];",
        "D_DECL_PROTO_TYPE",
        "array prototype may not use parameter of type void: (anonymous), parameter #1",
    ),
    (
        "inline int a = 1; inline int a = 2;",
        "D_DECL_IDRED",
        "identifier redefined: a\n\t current: inline definition\n\tprevious: scalar inline",
    ),
    (
        "inline int rand = 1;",
        "D_DECL_IDRED",
        "identifier redefined: rand\n\t current: inline definition\n\tprevious: function ",
    ),
    (
        "int g[int]; inline int g = 1;",
        "D_DECL_IDRED",
        "identifier redefined: g\n\t current: inline definition\n\tprevious: associative array ",
    ),
    (
        "enum e { E }; inline int E = 1;",
        "D_DECL_IDRED",
        "identifier redefined: E\n\t current: inline definition\n\tprevious: enumerator ",
    ),
    (
        "inline int i = \"s\";",
        "D_OP_INCOMPAT",
        "inline i definition uses incompatible types: \"int\" = \"string\"",
    ),
    (
        "inline int i = nosuch + 1;",
        "D_IDENT_UNDEF",
        "failed to resolve nosuch: Unknown variable name",
    ),
    (
        // The key is looked at before the array.
        "BEGIN { a[x]++; }",
        "D_IDENT_UNDEF",
        "failed to resolve x: Unknown variable name",
    ),
];

const EXPRESSIONS: Cases = &[
    (
        "BEGIN { a = 1; (a + 1)(2); }",
        "D_FUNC_IDENT",
        "function designator is not of function type",
    ),
    (
        "BEGIN { x = -\"a\"; }",
        "D_OP_ARITH",
        "operator - requires an operand of arithmetic type",
    ),
    (
        "BEGIN { x = \"a\" * 2; }",
        "D_OP_ARITH",
        "operator * requires operands of arithmetic type",
    ),
    (
        "BEGIN { x = curthread * 2; }",
        "D_OP_ARITH",
        "operator * requires operands of arithmetic type",
    ),
    (
        "BEGIN { x = ~\"a\"; }",
        "D_OP_INT",
        "operator ~ requires an operand of integral type",
    ),
    (
        "BEGIN { x = \"a\" & 1; }",
        "D_OP_INT",
        "operator & requires operands of integral type",
    ),
    (
        "BEGIN { x = curthread % 2; }",
        "D_OP_INT",
        "operator % requires operands of integral type",
    ),
    (
        "BEGIN { x = 1 - \"a\"; }",
        "D_OP_INCOMPAT",
        "operands have incompatible types: \"int\" - \"string\"",
    ),
    (
        "BEGIN { x = (void *)0 + 1; }",
        "D_OP_INCOMPAT",
        "operands have incompatible types: \"void *\" + \"int\"",
    ),
    (
        "BEGIN { x = \"s\"; x = 1; }",
        "D_OP_INCOMPAT",
        "operands have incompatible types: \"string\" = \"int\"",
    ),
    (
        "BEGIN { x = 1; x += \"s\"; }",
        "D_OP_INCOMPAT",
        "operands have incompatible types: \"int\" += \"string\"",
    ),
    (
        "BEGIN { x = 1 ? \"a\" : 1; }",
        "D_OP_INCOMPAT",
        "operator ?: operands must have compatible types",
    ),
    (
        "inline int I = execname; BEGIN { trace(I); }",
        "D_OP_INCOMPAT",
        "inline I is declared int but its value has type string",
    ),
    (
        "int a[int]; inline int I = a[I]; BEGIN { trace(I); }",
        "D_IDENT_UNDEF",
        "inline I is defined in terms of itself",
    ),
    (
        "BEGIN { trace(vmlinux`jiffies); }",
        "D_UNSUPPORTED",
        "failed to resolve vmlinux`jiffies: only per-CPU kernel variables and symbols the kernel's symbol table lists can be read (the kernel's BTF gives the types of no others, and data symbols are listed only in kernels built with CONFIG_KALLSYMS_ALL)",
    ),
    (
        "BEGIN { trace(`hidden_banner); }",
        "D_UNSUPPORTED",
        "failed to resolve `hidden_banner: the kernel's symbol table hides its address from this user (kptr_restrict)",
    ),
    (
        "BEGIN { trace(ext4`entries); }",
        "D_UNSUPPORTED",
        "failed to resolve ext4`entries: only per-CPU kernel variables and symbols the kernel's symbol table lists can be read (the kernel's BTF gives the types of no others, and data symbols are listed only in kernels built with CONFIG_KALLSYMS_ALL)",
    ),
    (
        "BEGIN { `max_pfn = 1; }",
        "D_OP_WRITE",
        "operator = can only be applied to a writable variable",
    ),
    (
        "BEGIN { `max_pfn++; }",
        "D_OP_WRITE",
        "operator ++ can only be applied to a writable variable",
    ),
    (
        "BEGIN { &`max_pfn = 0; }",
        "D_OP_LVAL",
        "operator = requires modifiable lvalue as an operand",
    ),
    (
        "BEGIN { trace(sizeof (`)); }",
        "D_IDENT_UNDEF",
        "failed to resolve `: Unknown symbol name",
    ),
    (
        "BEGIN { trace(nosuch); }",
        "D_IDENT_UNDEF",
        "failed to resolve nosuch: Unknown variable name",
    ),
    (
        "BEGIN { trace(self->nosuch); }",
        "D_VAR_UNDEF",
        "self->nosuch has not yet been declared or assigned",
    ),
    (
        "BEGIN { trace(this->nosuch); }",
        "D_VAR_UNDEF",
        "this->nosuch has not yet been declared or assigned",
    ),
    (
        "BEGIN { trace($2); }",
        "D_IDENT_UNDEF",
        "failed to resolve abc: Unknown variable name",
    ),
    (
        "BEGIN { trace($3); }",
        "D_MACRO_OFLOW",
        "macro argument $3 constant 0x12345678123456781 results in integer overflow",
    ),
    (
        "BEGIN { trace($target); }",
        "D_MACRO_UNDEF",
        "macro argument $target is not defined",
    ),
    (
        "BEGIN { trace($4); }",
        "D_MACRO_UNDEF",
        "macro argument $4 is not defined",
    ),
    (
        "BEGIN { trace($$4); }",
        "D_MACRO_UNDEF",
        "macro argument $$4 is not defined",
    ),
    (
        "BEGIN { a[1] = 1; trace(a[1, 2]); }",
        "D_PROTO_LEN",
        "a[ ] prototype mismatch: 2 keys passed, 1 expected",
    ),
    (
        "BEGIN { a[1] = 2; a[\"x\"] = 3; }",
        "D_PROTO_ARG",
        "a[ ] key #1 is incompatible with prototype:\n\tprototype: int\n\t      key: string",
    ),
    (
        "BEGIN { trace(!curthread->se); }",
        "D_OP_SCALAR",
        "operator ! requires an operand of scalar type",
    ),
    (
        "BEGIN { s = \"a\"; s++; }",
        "D_OP_SCALAR",
        "operator ++ requires operand of scalar type",
    ),
    (
        "BEGIN { x = \"a\" && 1; }",
        "D_OP_SCALAR",
        "operator && requires operands of scalar type",
    ),
    (
        "BEGIN { x = \"a\" ? 1 : 2; }",
        "D_OP_SCALAR",
        "operator ?: expression must be of scalar type",
    ),
    (
        "BEGIN { x = 1 ? trace(1) : 2; }",
        "D_OP_INCOMPAT",
        "operator ?: operands must have compatible types",
    ),
    (
        "BEGIN { i = 1; i ? printf(\"x\") : 0; }",
        "D_OP_INCOMPAT",
        "operator ?: operands must have compatible types",
    ),
    (
        "BEGIN { x = 1 ? trace(1) : trace(2); }",
        "D_OP_ACT",
        "action cannot be used in a conditional context",
    ),
    (
        "BEGIN { i = 1; i ? @a[\"k\"] = count() : 1; }",
        "D_OP_DYN",
        "operator ?: operands cannot be of dynamic type",
    ),
    (
        "BEGIN { @a = count(); x = 0 ? 1 : @a; }",
        "D_OP_DYN",
        "operator ?: operands cannot be of dynamic type",
    ),
    (
        "BEGIN { x = 1 / 0; }",
        "D_DIV_ZERO",
        "expression contains division by zero",
    ),
    (
        "BEGIN { x = 7 % (2 - 2); }",
        "D_DIV_ZERO",
        "expression contains division by zero",
    ),
    (
        "int a[3]; int b[3]; BEGIN { a = b; }",
        "D_OP_ARRFUN",
        "operator = may not be applied to operand of type \"int [3]\"",
    ),
    (
        "BEGIN { (struct task_struct)1; }",
        "D_CAST_INVAL",
        "invalid cast expression: \"int\" to \"struct task_struct\"",
    ),
    (
        "BEGIN { (int)execname; }",
        "D_CAST_INVAL",
        "invalid cast expression: \"string\" to \"int\"",
    ),
];

const PLACES: Cases = &[
    (
        "BEGIN { (*curthread).pid.x; }",
        "D_OP_SOU",
        "operator . cannot be applied to type \"pid_t\"; must be applied to a struct or union",
    ),
    (
        "BEGIN { curthread.pid; }",
        "D_OP_SOU",
        "operator . cannot be applied to type \"struct task_struct *\"; must be applied to a struct or union",
    ),
    (
        "BEGIN { ((int *)0)->x; }",
        "D_OP_SOU",
        "operator -> cannot be applied to pointer to type \"int\"; must be applied to a struct or union pointer",
    ),
    (
        "BEGIN { 1 = 2; }",
        "D_OP_LVAL",
        "operator = requires modifiable lvalue as an operand",
    ),
    (
        "BEGIN { $pid++; }",
        "D_OP_LVAL",
        "operator ++ requires modifiable lvalue as an operand",
    ),
    (
        "BEGIN { pid = 1; }",
        "D_OP_WRITE",
        "operator = can only be applied to a writable variable",
    ),
    (
        "BEGIN { timestamp++; }",
        "D_OP_WRITE",
        "operator ++ can only be applied to a writable variable",
    ),
    (
        "BEGIN { *copyin(arg0, 4); }",
        "D_DEREF_VOID",
        "cannot dereference pointer to void",
    ),
    (
        "void v; BEGIN { v; }",
        "D_DEREF_VOID",
        "cannot dereference pointer to void",
    ),
    (
        "BEGIN { *(long double *)0; }",
        "D_UNSUPPORTED",
        "a value of type long double is not supported yet: use its members, or stringof( ) for text",
    ),
    (
        "BEGIN { *1; }",
        "D_DEREF_NONPTR",
        "cannot dereference non-pointer type",
    ),
    (
        "BEGIN { pid->x; }",
        "D_OP_PTR",
        "operator -> must be applied to a pointer",
    ),
    (
        "BEGIN { ((struct nosuch *)0)->x; }",
        "D_OP_INCOMPLETE",
        "operator -> cannot be applied to a forward declaration: no struct nosuch definition is available",
    ),
    // Three pointers from curthread, the recording declares struct tty_driver only.
    (
        "BEGIN { curthread->signal->tty->driver->name; }",
        "D_OP_INCOMPLETE",
        "operator -> cannot be applied to a forward declaration: no struct tty_driver definition is available",
    ),
    (
        "BEGIN { ((void *)0)[1]; }",
        "D_OP_INCOMPLETE",
        "cannot index a pointer to void: its size is not known",
    ),
    (
        "BEGIN { curthread->nosuch; }",
        "D_TYPE_MEMBER",
        "nosuch is not a member of struct task_struct",
    ),
    (
        "BEGIN { x = 1; x[1, 2]; }",
        "D_ARR_BADREF",
        "cannot access scalar x as an associative array",
    ),
    (
        "BEGIN { curthread->comm[1, 2]; }",
        "D_ARR_BADREF",
        "tuple has 2 elements; 1 expected",
    ),
    (
        "BEGIN { curthread->comm[16]; }",
        "D_ARR_BOUNDS",
        "index outside array bounds: 16, max is 16",
    ),
    (
        "BEGIN { curthread->comm[\"a\"]; }",
        "D_OP_INT",
        "operator [ ] requires an index of integral type",
    ),
    (
        "BEGIN { curthread[\"a\"]; }",
        "D_OP_INT",
        "operator [ ] requires an index of integral type",
    ),
    (
        "BEGIN { x = 1; x[0]; }",
        "D_OP_PTR",
        "operator [ ] must be applied to an array or a pointer; found int",
    ),
    (
        "BEGIN { x = 1; &x; }",
        "D_ADDROF_VAR",
        "cannot take address of dynamic variable",
    ),
    (
        "BEGIN { &1; }",
        "D_ADDROF_LVAL",
        "unacceptable operand for unary & operator",
    ),
    (
        "BEGIN { &curthread->sched_reset_on_fork; }",
        "D_ADDROF_BITFIELD",
        "cannot take address of bit-field",
    ),
    (
        "BEGIN { a[1] = 1; a = 2; }",
        "D_IDENT_BADREF",
        "a is an associative array; it needs a key",
    ),
    (
        "BEGIN { x = 1; x[1] = 2; }",
        "D_IDENT_BADREF",
        "x is not an associative array",
    ),
    (
        "BEGIN { a[trace(1)] = 1; }",
        "D_KEY_TYPE",
        "void expression may not be used as an associative array key",
    ),
    (
        "BEGIN { sizeof(curthread->sched_reset_on_fork); }",
        "D_SIZEOF_BITFIELD",
        "cannot apply sizeof to a bit-field",
    ),
    (
        "BEGIN { sizeof (void); }",
        "D_SIZEOF_TYPE",
        "cannot apply sizeof to an operand of unknown size",
    ),
    (
        "BEGIN { offsetof(int, x); }",
        "D_OFFSETOF_TYPE",
        "offsetof operand must be a struct or union type",
    ),
    (
        "BEGIN { offsetof(struct task_struct, nosuch); }",
        "D_UNKNOWN",
        "failed to determine offset of nosuch: Member name not found",
    ),
    (
        "BEGIN { offsetof(struct task_struct, sched_reset_on_fork); }",
        "D_OFFSETOF_BITFIELD",
        "cannot take offset of a bit-field: sched_reset_on_fork",
    ),
    (
        "BEGIN { stringof(curthread->se); }",
        "D_STRINGOF_TYPE",
        "cannot apply stringof to a value of type struct sched_entity",
    ),
];

/// `struct o { int a; int b; }` and a translator to it from `int` defining only `a`.
const TRANSLATOR: &str = "struct o { int a; int b; }; translator struct o < int x > { a = x; };\n";

const TRANSLATORS: Cases = &[
    (
        "BEGIN { xlate <int> (1); }",
        "D_XLATE_SOU",
        "translation to type \"int\" is not allowed: xlate needs a struct or union, or a pointer to one",
    ),
    (
        "translator struct nosuch < int x > { a = 1; };",
        "D_XLATE_SOU",
        "incomplete struct/union/enum struct nosuch",
    ),
    (
        "translator int < int x > { a = 1; };",
        "D_XLATE_SOU",
        "translator output type must be a struct or union",
    ),
    (
        "struct o { int a; }; translator struct o < int x > { a = \"s\"; };",
        "D_XLATE_INCOMPAT",
        "translator member a definition uses incompatible types: \"int\" = \"string\"",
    ),
    (
        "struct o { int a; }; translator struct o < int x > { a = x; };
         translator struct o < int y > { a = y; };",
        "D_XLATE_REDECL",
        "translator from int to struct o has already been declared",
    ),
    (
        "struct o { int a; }; translator struct o < int x > { b = x; };",
        "D_XLATE_MEMB",
        "translator member b is not a member of struct o",
    ),
];

/// Uses of [`TRANSLATOR`]'s translator.
const XLATES: Cases = &[
    (
        "BEGIN { xlate <struct o *> (1); }",
        "D_CG_DYN",
        "expression cannot evaluate to result of dynamic type",
    ),
    (
        "BEGIN { xlate <struct o> (1)->a; }",
        "D_OP_PTR",
        "operator -> must be applied to a pointer",
    ),
    (
        "BEGIN { xlate <struct o *> (1).a; }",
        "D_OP_SOU",
        "operator . cannot be applied to type \"struct o *\"; must be applied to a struct or union",
    ),
    (
        "BEGIN { xlate <struct o *> (1)->nosuch; }",
        "D_TYPE_MEMBER",
        "nosuch is not a member of struct o",
    ),
    (
        "BEGIN { xlate <struct o *> (1)->b; }",
        "D_XLATE_NOCONV",
        "translator does not define conversion for member: b",
    ),
    (
        "BEGIN { xlate <struct o *> (\"s\")->a; }",
        "D_XLATE_NONE",
        "cannot translate from \"string\" to \"struct o\"",
    ),
    (
        "BEGIN { xlate <struct o> (1); }",
        "D_CG_DYN",
        "expression cannot evaluate to result of dynamic type",
    ),
    (
        "BEGIN { x = (uintptr_t)xlate <struct o *> (1); }",
        "D_CAST_INVAL",
        "invalid cast expression: \"pointer to translated data\" to \"uintptr_t\"",
    ),
    (
        "BEGIN { x = (struct o)xlate <struct o> (1); }",
        "D_CAST_INVAL",
        "invalid cast expression: \"translated data\" to \"struct o\"",
    ),
    (
        "BEGIN { xlate <struct o> (\"s\")->a; }",
        "D_XLATE_NONE",
        "cannot translate from \"string\" to \"struct o\"",
    ),
];

#[test]
fn statements() {
    check(STATEMENTS, on_named_probes);
}

#[test]
fn actions() {
    check(ACTIONS, on_named_probes);
}

#[test]
fn aggregations() {
    check(AGGREGATIONS, on_named_probes);
}

#[test]
fn calls() {
    check(CALLS, on_named_probes);
}

#[test]
fn probe_context() {
    check(CONTEXT, on_named_probes);
}

/// Clauses whose descriptions match no probe (-Z): typed with no probe, as DTrace does,
/// so args[] has nothing to be typed by; the description is printed with its four fields.
const UNMATCHED: Cases = &[
    (
        "fbt::no_such_function:entry { trace(args[0]); }",
        "D_ARGS_MULTI",
        "args[ ] may not be referenced because probe description fbt::no_such_function:entry matches an unstable set of probes",
    ),
    (
        "no_such_call:entry { trace(args[1]); }",
        "D_ARGS_MULTI",
        "args[ ] may not be referenced because probe description ::no_such_call:entry matches an unstable set of probes",
    ),
];

#[test]
fn clauses_matching_no_probe() {
    check(UNMATCHED, |text| {
        cook_with(text, |_, _| Some(Vec::new())).map(|_| ())
    });
}

/// A binary's own D source (on the clause's probe): types and translators only.
const BINARY: Cases = &[(
    "BEGIN { }",
    "D_BINARY_ITEM",
    "a binary's D source may only declare types, translators and providers",
)];

#[test]
fn binary_definitions() {
    check(BINARY, |text| {
        cook_with_binary("inline int answer = 42;", text).map(|_| ())
    });
    // The binary's types are seen by the bodies on its probes, not by others'.
    let binary = "struct bin { int a; };
        translator struct bin < int x > { a = x * 2; };";
    assert!(cook_with_binary(binary, "BEGIN { trace(xlate <struct bin> (1).a); }").is_ok());
    assert!(cook_d("BEGIN { trace(xlate <struct bin> (1).a); }").is_err());
}

/// `entry->` (our extension): only in return probes, only the saved names.
const ENTRY: Cases = &[
    (
        "BEGIN { trace(entry->arg0); }",
        "D_ENTRY_PROBE",
        "entry-> may only be used in the return probe of a function or a system call, not in dtrace:::BEGIN",
    ),
    (
        "fbt::vfs_read:entry { trace(entry->timestamp); }",
        "D_ENTRY_PROBE",
        "entry-> may only be used in the return probe of a function or a system call, not in fbt:vmlinux:vfs_read:entry",
    ),
    (
        "BEGIN { trace(entry->arg10); }",
        "D_ENTRY_MEMBER",
        "entry has no member named arg10 (entry->arg0 .. entry->arg9, entry->args[N], entry->timestamp, entry->vtimestamp)",
    ),
    (
        "BEGIN { trace(entry->args); }",
        "D_ENTRY_MEMBER",
        "entry->args must be indexed: entry->args[N]",
    ),
];

#[test]
fn entry_state() {
    check(ENTRY, on_named_probes);
    // A variable named entry is a variable.
    assert!(cook_d("struct s { int arg0; } *entry; BEGIN { trace(entry->arg0); }").is_ok());
}

#[test]
fn declarations() {
    check(DECLARATIONS, on_named_probes);
}

#[test]
fn expressions() {
    check(EXPRESSIONS, on_named_probes);
}

#[test]
fn places() {
    check(PLACES, on_named_probes);
}

#[test]
fn translators() {
    check(TRANSLATORS, on_named_probes);
    check(XLATES, |text| {
        on_named_probes(&format!("{TRANSLATOR}{text}"))
    });
}

/// A probe with this context.
fn probe(provider: &str, name: &str, context: ProbeContext) -> ProbeSite {
    ProbeSite {
        id: 100,
        provider: provider.into(),
        module: "vmlinux".into(),
        function: String::new(),
        name: name.into(),
        context,
    }
}

/// Type `text`, its only clause on `site`.
fn on(site: ProbeSite) -> impl Fn(&str) -> Result<(), Failure> {
    move |text| cook_with(text, |_, _| Some(vec![site.clone()])).map(|_| ())
}

/// On a tracepoint whose only field is a struct, then on a raw tracepoint taking a struct
/// by value.
const UNREADABLE: Cases = &[
    (
        "sdt:::fake { trace(args[0]); }",
        "D_ARGS_TYPE",
        "sdt:vmlinux::fake argument regs (struct pt_regs regs) has a type D cannot read yet",
    ),
    (
        "rawtp:::fake { trace(args[0]); }",
        "D_ARGS_TYPE",
        "rawtp:vmlinux::fake args[0] has type struct task_struct, which D cannot read yet; use arg0",
    ),
];

#[test]
fn arguments_d_cannot_read() {
    let field = TracepointField {
        name: "regs".into(),
        ctype: "struct pt_regs".into(),
        offset: 8,
        size: 168,
        signed: false,
        kind: FieldKind::Other,
    };
    let layout = TracepointLayout {
        args: vec![field],
        ..TracepointLayout::default()
    };
    check(
        &UNREADABLE[..1],
        on(probe("sdt", "fake", ProbeContext::Tracepoint(layout))),
    );
    let task = kernel_btf().find(Kind::Struct, "task_struct").unwrap();
    let by_value = ProbeContext::BtfTracepoint(BtfTracepoint {
        name: "fake".into(),
        btf_id: 0,
        args: vec![task],
    });
    check(&UNREADABLE[1..], on(probe("rawtp", "fake", by_value)));
}

/// On nine system calls' entries.
const GROUPED: Cases = &[(
    "syscall:::entry { trace(args[0]); }",
    "D_ARGS_TYPE",
    "args[ ] needs a specific system call; use arg0: this clause is enabled on more than 8 system calls (9 of them, one program for all), and args[ ] is typed per call",
)];

#[test]
fn system_call_groups_have_no_typed_arguments() {
    let calls: Vec<ProbeSite> = (0..9)
        .map(|nr| ProbeSite {
            id: 200 + nr,
            function: format!("call{nr}"),
            ..probe(
                "syscall",
                "entry",
                ProbeContext::Tracepoint(TracepointLayout {
                    syscall_nr: Some(nr),
                    ..TracepointLayout::default()
                }),
            )
        })
        .collect();
    check(GROUPED, |text| {
        cook_with(text, |_, _| Some(calls.clone())).map(|_| ())
    });
}

/// A `proc`-like probe over `sched_process_exec` whose `args[0]` is `arg`.
fn mapped(arg: &str) -> ProbeSite {
    probe(
        "proc",
        "exec-success",
        ProbeContext::Mapped(MappedProbe {
            base: Box::new(raw("sched_process_exec")),
            filter: None,
            args: vec![MappedArg {
                ty: "int".into(),
                expr: arg.into(),
            }],
        }),
    )
}

/// On [`mapped`] probes defining `args[0]` as `args[9]`, as `* x */ { } BEGIN /1` (whose
/// comment turns the definition's clause into one without a predicate: no expression),
/// and as `args[0]->pid`.
const MAPPED: Cases = &[
    (
        "proc:::exec-success { trace(args[0]); }",
        "D_ARGS_IDX",
        "proc:vmlinux::exec-success args[0] = args[9]: index 9 is out of range for proc:vmlinux::exec-success args[ ]",
    ),
    (
        "proc:::exec-success { trace(args[0]); }",
        "D_SYNTAX",
        "proc:vmlinux::exec-success args[0] = * x */ { } BEGIN /1: not an expression",
    ),
    (
        "proc:::exec-success { trace(args[1]); }",
        "D_ARGS_IDX",
        "index 1 is out of range for proc:vmlinux::exec-success args[ ]",
    ),
];

#[test]
fn errors_in_provider_definitions_name_the_definition() {
    for (case, arg) in MAPPED
        .chunks(1)
        .zip(["args[9]", "* x */ { } BEGIN /1", "args[0]->pid"])
    {
        check(case, on(mapped(arg)));
    }
}

/// In the D library (checked where used): a translator with a member its output lacks.
const LIBRARY: &str = "struct o { int a; }; translator struct o < int x > { a = x; b = x; };";

const LIBRARY_USES: Cases = &[
    (
        "BEGIN { xlate <struct o *> (1); }",
        "D_XLATE_MEMB",
        "translator member b is not a member of struct o",
    ),
    (
        // Redeclared before its members are typed (`c` is no member).
        "translator struct o < int y > { a = y; c = y; };",
        "D_XLATE_REDECL",
        "translator from int to struct o has already been declared",
    ),
];

#[test]
fn library_translators_are_checked_where_used() {
    // A member's translation alone does not check the others.
    assert!(cook_after_library(LIBRARY, "BEGIN { xlate <struct o *> (1)->a; }").is_ok());
    check(LIBRARY_USES, |text| {
        cook_after_library(LIBRARY, text).map(|_| ())
    });
}

#[test]
fn every_tag_of_the_typing_pass_has_a_case() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/cook");
    let mut raised = BTreeSet::new();
    for entry in std::fs::read_dir(dir).expect("the typing pass's sources") {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for piece in text.split('"').skip(1).step_by(2) {
            if piece.starts_with("D_")
                && piece
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
            {
                raised.insert(piece.to_string());
            }
        }
    }
    let tested: BTreeSet<String> = [
        STATEMENTS,
        ACTIONS,
        AGGREGATIONS,
        CALLS,
        CONTEXT,
        ENTRY,
        BINARY,
        DECLARATIONS,
        EXPRESSIONS,
        PLACES,
        TRANSLATORS,
        XLATES,
        LIBRARY_USES,
        UNREADABLE,
        GROUPED,
        MAPPED,
        UNMATCHED,
    ]
    .iter()
    .flat_map(|cases| cases.iter().map(|c| c.1.to_string()))
    .collect();
    let untested: Vec<&String> = raised.difference(&tested).collect();
    assert!(untested.is_empty(), "tags without a case: {untested:?}");
    let unknown: Vec<&String> = tested.difference(&raised).collect();
    assert!(
        unknown.is_empty(),
        "cases of tags src/cook does not raise: {unknown:?}"
    );
}

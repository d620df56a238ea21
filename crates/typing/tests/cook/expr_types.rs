//! Types of expressions: integer constants, C's conversions, comparisons, pointer
//! arithmetic, strings, casts, `sizeof`/`offsetof`, kernel types through members and probe
//! arguments, D's own structs (layout and bit-fields), and translated members.

use dtrace_btf::Kind;
use dtrace_typing::ir::{ArithOp, CmpOp, Comparison, ExprKind, PlaceBase};
use dtrace_typing::types::Type;

use super::{eval, kernel_btf, program, type_of, typed_in};

/// The value of the constant expression `e` and its type.
fn constant(e: &str) -> (u64, String) {
    let typed = typed_in("", e);
    match typed.kind {
        ExprKind::Int(v) => (v, typed.ty.to_string()),
        other => panic!("{e} is not a constant: {other:?}"),
    }
}

/// The byte offset of `path` (`se.sum_exec_runtime`) in kernel struct `name`, as BTF says.
fn kernel_offset(name: &str, path: &str) -> u64 {
    let btf = kernel_btf();
    let id = btf.find(Kind::Struct, name).expect("a recorded struct");
    btf.member_path(id, path).expect("a member").byte_offset()
}

#[test]
fn integer_constants_take_the_first_type_their_value_fits() {
    let cases = [
        ("0", 0, "int"),
        ("2147483647", 2147483647, "int"),
        ("2147483648", 2147483648, "long"),
        ("9223372036854775808", 1 << 63, "unsigned long"),
        // Octal and hexadecimal constants may be unsigned before growing.
        ("0x7fffffff", 0x7fff_ffff, "int"),
        ("0x80000000", 0x8000_0000, "unsigned int"),
        ("020000000000", 0x8000_0000, "unsigned int"),
        ("0x100000000", 0x1_0000_0000, "long"),
        ("0xffffffffffffffff", u64::MAX, "unsigned long"),
        ("017", 15, "int"),
        ("1u", 1, "unsigned int"),
        ("4294967296u", 1 << 32, "unsigned long"),
        ("1l", 1, "long"),
        ("1ul", 1, "unsigned long"),
        ("1ll", 1, "long long"),
        ("1ull", 1, "unsigned long long"),
        ("'a'", 97, "int"),
        ("'\\xff'", 255, "int"),
    ];
    for (text, value, ty) in cases {
        assert_eq!(constant(text), (value, ty.to_string()), "{text}");
    }
}

#[test]
fn arithmetic_takes_the_operand_of_higher_rank() {
    let cases = [
        // No promotion to int: the rank is the width, plus one if unsigned.
        ("(char)1 + (char)2", "char"),
        ("(short)1 * (unsigned char)2", "short"),
        ("(char)1 - (unsigned char)2", "unsigned char"),
        ("(unsigned short)1 + 1", "int"),
        ("1 + 1u", "unsigned int"),
        ("1u + 1l", "long"),
        ("1l + 1ul", "unsigned long"),
        ("(uint32_t)1 - (int64_t)1", "int64_t"),
        ("1ll | 1ul", "unsigned long"),
        ("-(char)1", "char"),
        ("~1u", "unsigned int"),
        ("+(short)1", "short"),
        ("!\"\"", "int"),
        ("!pid", "int"),
        // A folded constant keeps its type, as DTrace's parser leaves it.
        ("!0l", "long"),
        // Shifts take the type of their left operand.
        ("(char)1 << 40l", "char"),
        ("1l << 2", "long"),
        ("timestamp / 2", "uint64_t"),
        // Same rank: the first operand's name, as DTrace picks one of equivalent types.
        ("pid + 1", "pid_t"),
        ("1 + pid", "int"),
        ("pid ? (char)1 : 1l", "long"),
        // A constant condition is the arm it chooses.
        ("1 ? (char)1 : 1l", "char"),
        ("1 ? \"a\" : execname", "string"),
        ("(1, 2l)", "long"),
    ];
    for (text, ty) in cases {
        assert_eq!(type_of(text), ty, "{text}");
    }
}

#[test]
fn constants_fold_in_their_type() {
    assert_eq!(constant("2 * 3 + 1"), (7, "int".into()));
    assert_eq!(constant("(char)300"), (44, "char".into()));
    assert_eq!(constant("(unsigned char)-1"), (255, "unsigned char".into()));
    assert_eq!(constant("(uint8_t)257"), (1, "uint8_t".into()));
    // In 64 bits, as DTrace's parser folds them: `>>` shifts in zeros, `-` of an
    // unsigned constant stays in its width, nothing is narrowed to the type.
    assert_eq!(constant("-1 >> 1"), (i64::MAX as u64, "int".into()));
    assert_eq!(constant("-1u >> 1"), (0x7fff_ffff, "unsigned int".into()));
    assert_eq!(constant("~0u"), (u64::MAX, "unsigned int".into()));
    assert_eq!(constant("0x7fffffff + 1"), (0x8000_0000, "int".into()));
    assert_eq!(constant("(1 << 63) - 1"), (i64::MAX as u64, "int".into()));
    assert_eq!(constant("-7 / 2"), (-3i64 as u64, "int".into()));
    assert_eq!(constant("-7 % -2"), (-1i64 as u64, "int".into()));
    assert_eq!(
        constant("-1 / 2u"),
        (i64::MAX as u64, "unsigned int".into())
    );
    assert_eq!(constant("-1 < 1u"), (0, "int".into()));
    assert_eq!(constant("3 ^^ 4"), (0, "int".into()));
}

#[test]
fn comparisons_are_int_and_say_how_they_compare() {
    let how = |e: &str| match typed_in("", e) {
        typed @ dtrace_typing::ir::Expr {
            kind: ExprKind::Compare { op, how, .. },
            ..
        } => (op, how, typed.ty.to_string()),
        other => panic!("{e}: {other:?}"),
    };
    let int = || "int".to_string();
    assert_eq!(how("pid < 1"), (CmpOp::Lt, Comparison::Signed, int()));
    assert_eq!(how("pid < 1u"), (CmpOp::Lt, Comparison::Unsigned, int()));
    assert_eq!(
        how("timestamp >= 0"),
        (CmpOp::Ge, Comparison::Unsigned, int())
    );
    assert_eq!(
        how("execname == \"sh\""),
        (CmpOp::Eq, Comparison::Strings, int())
    );
    assert_eq!(
        how("execname != NULL"),
        (CmpOp::Ne, Comparison::StringNull, int())
    );
    assert_eq!(
        how("0 == probefunc"),
        (CmpOp::Eq, Comparison::StringNull, int())
    );
    assert_eq!(
        how("curthread == curthread->real_parent"),
        (CmpOp::Eq, Comparison::Unsigned, "int".into())
    );
}

#[test]
fn pointer_arithmetic_scales_by_the_pointee() {
    // Constant pointers fold: the step is in elements.
    assert_eq!(constant("(int *)0 + 2"), (8, "int *".into()));
    assert_eq!(constant("(char *)0 + 3"), (3, "char *".into()));
    assert_eq!(constant("2 + (uint64_t *)8"), (24, "uint64_t *".into()));
    assert_eq!(constant("(long *)64 - 2"), (48, "long *".into()));
    // A kernel pointer steps by its struct's size.
    let size = kernel_btf()
        .size_of(kernel_btf().find(Kind::Struct, "task_struct").unwrap())
        .unwrap();
    // A difference counts elements: bytes divided by the size.
    assert_eq!(constant("(long *)64 - (long *)0"), (8, "long".into()));
    let e = typed_in("", "curthread - curthread");
    assert_eq!(e.ty.to_string(), "long");
    let ExprKind::Arith { op, rhs, .. } = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!((*op, &rhs.kind), (ArithOp::Div, &ExprKind::Int(size)));
    let e = typed_in("", "curthread + 1");
    assert_eq!(e.ty.to_string(), "struct task_struct *");
    let ExprKind::Arith { op, rhs, .. } = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!((*op, &rhs.kind), (ArithOp::Add, &ExprKind::Int(size)));
}

#[test]
fn strings_and_subroutines() {
    let cases = [
        ("\"abc\"", "string"),
        ("execname", "string"),
        ("probefunc", "string"),
        ("strjoin(\"a\", execname)", "string"),
        ("substr(execname, 1)", "string"),
        // A string plus or minus an offset is the string at that address.
        ("execname + 1", "string"),
        ("2 + probefunc", "string"),
        ("execname - 1", "string"),
        ("strlen(execname)", "size_t"),
        ("index(execname, \"s\")", "int"),
        ("strtoll(\"12\")", "int64_t"),
        ("lltostr(12)", "string"),
        ("stringof(curthread->comm)", "string"),
        ("stringof(arg0)", "string"),
        ("copyin(arg0, 8)", "void *"),
        ("rand()", "int"),
        ("strtok(NULL, \",\")", "string"),
        ("caller", "uintptr_t"),
        ("ucaller", "uint64_t"),
        ("htons(arg0)", "uint16_t"),
        ("ntohl(arg0)", "uint32_t"),
        ("htonll(arg0)", "uint64_t"),
        ("getmajor(arg0)", "uint32_t"),
        ("progenyof(1)", "int"),
        ("$$1", "string"),
        ("$1", "int"),
        // Neither an integer nor an identifier ("test.d"): a string, as in DTrace.
        ("$0", "string"),
    ];
    for (text, ty) in cases {
        assert_eq!(type_of(text), ty, "{text}");
    }
}

#[test]
fn casts_retype_or_convert() {
    let cases = [
        ("(int)1l", "int"),
        ("(void *)0", "void *"),
        ("(string)execname", "string"),
        ("(struct task_struct *)arg0", "struct task_struct *"),
        ("(pid_t)arg0", "pid_t"),
        ("(u64)1", "u64"),
        ("(enum pid_type)1", "enum pid_type"),
        ("(char **)0", "char * *"),
    ];
    for (text, ty) in cases {
        assert_eq!(type_of(text), ty, "{text}");
    }
    let e = typed_in("", "(short)arg0");
    assert!(matches!(e.kind, ExprKind::Convert(_)), "{e:?}");
    // A pointer to and from a 64-bit integer only changes the type...
    let e = typed_in("", "(uintptr_t)curthread");
    assert!(matches!(e.kind, ExprKind::Builtin(_)), "{e:?}");
    // ... but for an address of D's storage, which code generation makes a number.
    let e = typed_in("", "(uintptr_t)alloca(8)");
    assert!(matches!(e.kind, ExprKind::Convert(_)), "{e:?}");
}

#[test]
fn sizeof_and_offsetof_are_constants() {
    let btf = kernel_btf();
    let task = btf.find(Kind::Struct, "task_struct").unwrap();
    let ulong = |v: u64| (v, "unsigned long".to_string());
    assert_eq!(constant("sizeof (int)"), ulong(4));
    assert_eq!(constant("sizeof (char *)"), ulong(8));
    assert_eq!(constant("sizeof (pid_t)"), ulong(4));
    assert_eq!(constant("sizeof (u64)"), ulong(8));
    assert_eq!(constant("sizeof (int [3][4])"), ulong(48));
    assert_eq!(constant("sizeof (execname)"), ulong(256));
    assert_eq!(constant("sizeof \"hi\""), ulong(3));
    assert_eq!(constant("sizeof ('c')"), ulong(4));
    assert_eq!(constant("sizeof (curthread->comm)"), ulong(16));
    assert_eq!(constant("sizeof (enum pid_type)"), ulong(4));
    assert_eq!(
        constant("sizeof (struct task_struct)"),
        ulong(btf.size_of(task).unwrap())
    );
    assert_eq!(
        constant("sizeof (*curthread)"),
        ulong(btf.size_of(task).unwrap())
    );
    let comm = kernel_offset("task_struct", "comm");
    assert_eq!(
        constant("offsetof(struct task_struct, comm)"),
        (comm, "int".into())
    );
    let real_parent = kernel_offset("task_struct", "real_parent");
    assert_eq!(
        constant("offsetof(struct task_struct, real_parent)"),
        (real_parent, "int".into())
    );
}

#[test]
fn declarators_apply_from_the_base_type_outwards() {
    let decls = "int m[3][4]; int *pa[2]; int (*pm)[5];";
    let value = |e: &str| match typed_in(decls, e).kind {
        ExprKind::Int(v) => v,
        other => panic!("{e} is not a constant: {other:?}"),
    };
    assert_eq!(value("sizeof (m)"), 48);
    assert_eq!(value("sizeof (m[2])"), 16);
    assert_eq!(value("sizeof (pa)"), 16);
    assert_eq!(value("sizeof (*pm)"), 20);
    assert_eq!(typed_in(decls, "m[2][3]").ty.to_string(), "int");
}

#[test]
fn an_array_cast_to_a_pointer_is_its_address() {
    let e = typed_in("", "(char *)curthread->comm");
    assert_eq!(e.ty.to_string(), "char *");
    let ExprKind::AddrOf(place) = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!(place.offset, kernel_offset("task_struct", "comm"));
    assert_eq!(
        type_of("((unsigned char *)curthread->comm)[1]"),
        "unsigned char"
    );
}

#[test]
fn module_scopes_name_d_and_kernel_types() {
    let decls =
        "struct s { int x; int y; }; union u { int a; char c; }; struct task_struct { int z; };";
    let value = |e: &str| match typed_in(decls, e).kind {
        ExprKind::Int(v) => v,
        other => panic!("{e} is not a constant: {other:?}"),
    };
    assert_eq!(value("offsetof(struct D`s, y)"), 4);
    assert_eq!(value("offsetof(union D`u, c)"), 0);
    assert_eq!(value("sizeof (struct D`task_struct)"), 4);
    let task = kernel_btf().find(Kind::Struct, "task_struct").unwrap();
    let size = kernel_btf().size_of(task).unwrap();
    assert_eq!(value("sizeof (struct vmlinux`task_struct)"), size);
}

#[test]
fn kernel_members_are_typed_from_btf() {
    let cases = [
        ("curthread", "struct task_struct *"),
        ("curthread->pid", "pid_t"),
        ("curthread->real_parent", "struct task_struct *"),
        ("curthread->real_parent->comm", "string"),
        ("curthread->real_parent->real_parent->tgid", "pid_t"),
        ("curthread->se.sum_exec_runtime", "u64"),
        ("(*curthread).se", "struct sched_entity"),
        ("&curthread->se", "struct sched_entity *"),
        ("curthread->mm", "struct mm_struct *"),
        (
            "curthread->mm->exe_file->f_path.dentry->d_name.name",
            "unsigned char *",
        ),
        ("curthread->comm[0]", "char"),
        ("curthread->sched_reset_on_fork", "unsigned int"),
        ("PIDTYPE_TGID", "enum pid_type"),
    ];
    for (text, ty) in cases {
        assert_eq!(type_of(text), ty, "{text}");
    }
    let pid = typed_in("", "curthread->pid");
    assert_eq!(
        pid.ty,
        Type::Int {
            size: 4,
            signed: true,
            name: "pid_t"
        }
    );
    let value = kernel_btf().enum_value("PIDTYPE_TGID").unwrap().value as u64;
    assert_eq!(constant("PIDTYPE_TGID").0, value);
}

#[test]
fn a_char_array_member_reads_as_a_string() {
    let e = typed_in("", "curthread->real_parent->comm");
    assert_eq!(e.ty, Type::String);
    let ExprKind::Load(place) = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!(place.ty.to_string(), "char [16]");
    assert_eq!(place.offset, kernel_offset("task_struct", "comm"));
    // The base is the parent's address: `curthread->real_parent` loaded from the task.
    let PlaceBase::Kernel(parent) = &place.base else {
        panic!("{place:?}")
    };
    let ExprKind::Load(parent) = &parent.kind else {
        panic!("{parent:?}")
    };
    assert_eq!(parent.offset, kernel_offset("task_struct", "real_parent"));
}

#[test]
fn kernel_bitfields_keep_their_bits() {
    let e = typed_in("", "curthread->sched_reset_on_fork");
    let ExprKind::Load(place) = &e.kind else {
        panic!("{e:?}")
    };
    let btf = kernel_btf();
    let task = btf.find(Kind::Struct, "task_struct").unwrap();
    let field = btf.member(task, "sched_reset_on_fork").unwrap();
    assert_eq!(place.offset, field.byte_offset());
    assert_eq!(
        place.bitfield,
        Some(((field.bit_offset % 8) as u8, field.bitfield_size as u8))
    );
}

#[test]
fn raw_tracepoint_arguments_have_their_prototypes_types() {
    let cases = [
        ("args[0]", "bool"),
        ("args[1]", "struct task_struct *"),
        ("args[2]", "struct task_struct *"),
        ("args[3]", "unsigned int"),
        ("args[1]->comm", "string"),
        ("args[2]->pid", "pid_t"),
        ("arg1", "int64_t"),
    ];
    for (text, ty) in cases {
        let p = program(&format!("rawtp:sched::sched_switch {{ {text}; }}"));
        assert_eq!(eval(&p, 0).ty.to_string(), ty, "{text}");
    }
    let p = program("rawtp:sched::sched_switch { args[1]->comm; }");
    let ExprKind::Load(place) = &eval(&p, 0).kind else {
        panic!("{:?}", eval(&p, 0))
    };
    let PlaceBase::Kernel(base) = &place.base else {
        panic!("{place:?}")
    };
    assert_eq!(base.kind, ExprKind::ProbeArg(1));
    let p = program("rawtp:sched::sched_process_exec { args[2]->filename; }");
    assert_eq!(eval(&p, 0).ty.to_string(), "char *");
}

#[test]
fn function_arguments_have_their_parameters_types() {
    let cases = [
        ("args[0]", "struct file *"),
        ("args[1]", "char *"),
        ("args[2]", "size_t"),
        ("args[3]", "loff_t *"),
        ("args[0]->f_path.dentry->d_name.len", "u32"),
        // Beyond the recording's depth, a struct is only declared.
        ("args[0]->f_path.dentry->d_sb", "struct super_block *"),
    ];
    for (text, ty) in cases {
        let p = program(&format!("fbt::vfs_read:entry {{ {text}; }}"));
        assert_eq!(eval(&p, 0).ty.to_string(), ty, "{text}");
    }
}

#[test]
fn function_returns_and_kprobes_type_args_from_btf() {
    let cases = [
        // The return offset, then the return value.
        ("fbt::vfs_read:return", "args[0]", "uint64_t"),
        ("fbt::vfs_read:return", "args[1]", "ssize_t"),
        // A group's kprobe: the prototypes BTF describes (vfs_read's alone here).
        ("fbt::vfs_rea*:entry", "args[0]", "struct file *"),
        (
            "fbt::vfs_rea*:entry",
            "args[0]->f_path.dentry->d_name.len",
            "u32",
        ),
        ("fbt::vfs_rea*:entry", "args[2]", "size_t"),
        ("fbt::vfs_rea*:return", "args[0]", "uint64_t"),
        ("fbt::vfs_rea*:return", "args[1]", "ssize_t"),
        // No BTF for the module: 64-bit values.
        ("fbt:nomod:nomod_f:entry", "args[0]", "int64_t"),
    ];
    for (probe, text, ty) in cases {
        let p = program(&format!("{probe} {{ {text}; }}"));
        assert_eq!(eval(&p, 0).ty.to_string(), ty, "{probe} {text}");
    }
}

#[test]
fn d_structs_are_laid_out_as_ctf_does() {
    // Bit-fields are not packed: each starts at the next byte, in the smallest power-of-two
    // number of bytes holding it; there is no tail padding.
    let p = program("struct s { int a : 3; int b : 5; }; BEGIN { sizeof (struct s); }");
    assert_eq!(eval(&p, 0).kind, ExprKind::Int(2));
    let r = &p.records[0];
    assert_eq!((r.name, r.size, r.union), ("struct s", 2, false));
    let layout: Vec<(&str, u32, Option<u8>)> = r
        .members
        .iter()
        .map(|m| (m.name.as_str(), m.offset, m.bits))
        .collect();
    assert_eq!(layout, [("a", 0, Some(3)), ("b", 1, Some(5))]);

    let p = program("struct t { char c; int i; short s; }; BEGIN { sizeof (struct t); }");
    assert_eq!(eval(&p, 0).kind, ExprKind::Int(10));
    let offsets: Vec<u32> = p.records[0].members.iter().map(|m| m.offset).collect();
    assert_eq!(offsets, [0, 4, 8]);

    let p = program("union u { char c; long l; int a[3]; }; BEGIN { sizeof (union u); }");
    assert_eq!(eval(&p, 0).kind, ExprKind::Int(12));
    assert!(p.records[0].union);
    assert!(p.records[0].members.iter().all(|m| m.offset == 0));

    let p = program("struct w { char c; uint64_t x : 33; char d; }; BEGIN { 0; }");
    let layout: Vec<(u32, Option<u8>)> = p.records[0]
        .members
        .iter()
        .map(|m| (m.offset, m.bits))
        .collect();
    assert_eq!(layout, [(0, None), (8, Some(33)), (13, None)]);
    assert_eq!(p.records[0].size, 16);
}

#[test]
fn d_struct_members_and_bitfields() {
    let decls =
        "struct s { int a : 3; int b : 5; string name; struct task_struct *t; }; struct s v;";
    let e = typed_in(decls, "v.b");
    assert_eq!(e.ty.to_string(), "int");
    let ExprKind::Load(place) = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!((place.offset, place.bitfield), (1, Some((0, 5))));
    assert!(matches!(place.base, PlaceBase::Global(0)));
    assert_eq!(typed_in(decls, "v.name").ty.to_string(), "string");
    assert_eq!(typed_in(decls, "v.t->comm").ty.to_string(), "string");
    assert_eq!(typed_in(decls, "v").ty.to_string(), "struct s");
    assert_eq!(
        typed_in(decls, "&v.t").ty.to_string(),
        "struct task_struct * *"
    );
    // An enum D defines is an int named `enum e`, as DTrace names it; its constants
    // are ints.
    let decls = "enum e { A, B = 5, C }; enum e x;";
    let x = typed_in(decls, "x").ty;
    assert_eq!(
        (x.to_string(), x.size(), x.is_signed()),
        ("enum e".into(), 4, true)
    );
    assert_eq!(typed_in(decls, "C").kind, ExprKind::Int(6));
}

#[test]
fn d_arrays_index_and_decay() {
    let decls = "int a[4]; char s[8];";
    assert_eq!(typed_in(decls, "a[1]").ty.to_string(), "int");
    assert_eq!(typed_in(decls, "a").ty.to_string(), "int *");
    assert_eq!(typed_in(decls, "s").ty.to_string(), "string");
    let e = typed_in(decls, "a[arg0]");
    let ExprKind::Load(place) = &e.kind else {
        panic!("{e:?}")
    };
    // A run-time index is checked, then scaled by the element's size.
    let index = place.index.as_ref().expect("a run-time index");
    let ExprKind::Arith { op, lhs, rhs } = &index.kind else {
        panic!("{index:?}")
    };
    assert_eq!((*op, &rhs.kind), (ArithOp::Mul, &ExprKind::Int(4)));
    assert!(matches!(lhs.kind, ExprKind::CheckIndex { len: 4, .. }));
}

#[test]
fn translated_members_are_typed_lazily() {
    let decls = "struct out { int pid; char comm[16]; uint64_t start; };
        translator struct out < struct task_struct *T > {
            pid = T->pid; comm = T->comm; start = T->start_time;
        };";
    let e = typed_in(decls, "xlate <struct out *> (curthread)->pid");
    assert_eq!(e.ty.to_string(), "int");
    let ExprKind::Let { value, body, .. } = &e.kind else {
        panic!("{e:?}")
    };
    assert_eq!(value.ty.to_string(), "struct task_struct *");
    // Only `pid`'s expression, as the member's type (pid_t and int are the same width).
    let ExprKind::Load(place) = &body.kind else {
        panic!("{body:?}")
    };
    assert_eq!(
        (body.ty.to_string(), place.ty.to_string()),
        ("int".into(), "pid_t".into())
    );
    assert!(matches!(&place.base, PlaceBase::Kernel(b) if matches!(b.kind, ExprKind::Bound(_))));
    assert_eq!(
        typed_in(decls, "xlate <struct out *> (curthread)->comm")
            .ty
            .to_string(),
        "string"
    );
    assert_eq!(
        typed_in(decls, "xlate <struct out> (curthread).start")
            .ty
            .to_string(),
        "uint64_t"
    );
    // As a value, the translated struct is built whole.
    let assign = typed_in(decls, "this->p = xlate <struct out *> (curthread)");
    let ExprKind::Assign { value: e, .. } = &assign.kind else {
        panic!("{assign:?}")
    };
    assert_eq!(e.ty.to_string(), "struct out *");
    let ExprKind::Let { body, .. } = &e.kind else {
        panic!("{e:?}")
    };
    let ExprKind::Build { size, members } = &body.kind else {
        panic!("{body:?}")
    };
    let offsets: Vec<u32> = members.iter().map(|m| m.0).collect();
    assert_eq!((*size, offsets), (32, vec![0, 4, 24]));
    // Through an inline, as `curpsinfo` is.
    let inline = format!("{decls} inline struct out *cur = xlate <struct out *> (curthread);");
    assert_eq!(typed_in(&inline, "cur->pid").ty.to_string(), "int");
    assert_eq!(constant_in(&inline, "sizeof (cur->comm)"), 16);
    // Through an inline with parameters, as `fds[fd].fi_name` is: the argument is bound.
    let array = format!(
        "{decls} inline struct out byid[int i] = xlate <struct out> (i == 0 ? curthread : NULL);"
    );
    let e = typed_in(&array, "byid[1].pid");
    assert_eq!(e.ty.to_string(), "int");
    assert!(matches!(e.kind, ExprKind::Let { .. }), "{e:?}");
    // NULL is known in an inline's value.
    let null = "inline int none[int *p] = p == NULL;";
    assert_eq!(typed_in(null, "none[0]").ty.to_string(), "int");
}

/// The value of constant expression `e` after the declarations `decls`.
fn constant_in(decls: &str, e: &str) -> u64 {
    match typed_in(decls, e).kind {
        ExprKind::Int(v) => v,
        other => panic!("{e}: {other:?}"),
    }
}

#[test]
fn kernel_symbols_are_addresses_from_the_symbol_table() {
    // An address is a constant of type pointer to what DTrace types an untyped symbol.
    assert_eq!(
        constant("&`linux_banner"),
        (0xffffffff82000100, "uintptr_t *".to_string())
    );
    assert_eq!(
        constant("&vmlinux`vfs_read"),
        (0xffffffff81234560, "uintptr_t *".to_string())
    );
    assert_eq!(
        constant("&binfmt_misc`entries"),
        (0xffffffffc0002000, "uintptr_t *".to_string())
    );
    assert_eq!(
        constant("&`entries"),
        (0xffffffffc0002000, "uintptr_t *".to_string())
    );
    assert_eq!(
        constant("(char *)&`linux_banner + 6"),
        (0xffffffff82000106, "char *".to_string())
    );
    // Read as a cast says, or untyped as a uintptr_t: kernel memory at that address.
    assert_eq!(type_of("(string)&`linux_banner"), "string");
    assert_eq!(type_of("*(unsigned long *)&`max_pfn"), "unsigned long");
    assert_eq!(
        constant("sizeof (`max_pfn)"),
        (8, "unsigned long".to_string())
    );
    let e = typed_in("", "`max_pfn");
    assert_eq!(e.ty.to_string(), "uintptr_t");
    let ExprKind::Load(place) = &e.kind else {
        panic!("{e:?}")
    };
    let PlaceBase::Kernel(address) = &place.base else {
        panic!("{place:?}")
    };
    assert_eq!(address.kind, ExprKind::Int(0xffffffff82000200));
}

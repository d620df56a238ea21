//! Kernel types in D on the live kernel: `curthread` as a `struct task_struct *`, member
//! chains through pointers (`->`) and structs (`.`), `char` arrays as strings, indexing,
//! bitfields, kernel enum constants and typedefs, casts to kernel pointer types, `stringof`,
//! `sizeof`/`offsetof` checked against the BTF the test reads itself, a bad pointer firing
//! ERROR while the script goes on, and DTrace's compile errors for unknown members and types.
//!
//! BEGIN runs in the `dtrace` process itself, so its task is known: its name is `dtrace`,
//! its parent is this test process.

mod common;

use common::{dtrace, Run};
use dtrace_btf::{Btf, Kind};

fn assert_ok(run: &Run) {
    assert_eq!(run.status, 0, "stderr: {}", run.stderr);
}

/// Run a BEGIN-only script (`-q`) and return its output (without the blank line that
/// ends a run).
fn begin(body: &str) -> String {
    let script = format!("BEGIN {{ {body} exit(0); }}");
    let run = dtrace(&["-q", "-n", &script]);
    assert_ok(&run);
    format!("{}\n", run.stdout.trim_end())
}

fn vmlinux() -> Btf {
    Btf::vmlinux().expect("kernel BTF at /sys/kernel/btf/vmlinux")
}

#[test]
fn curthread_comm_is_execname() {
    let out = begin(
        r#"printf("%s|%s|%d|%c\n", curthread->comm, execname, curthread->comm == execname, curthread->comm[0]);"#,
    );
    assert_eq!(out, "dtrace|dtrace|1|d\n");
}

#[test]
fn task_ids_match_builtins() {
    let out = begin(
        r#"printf("%d %d %d %d\n", curthread->pid == tid, curthread->tgid == pid, curthread->real_parent->tgid == ppid, curthread->real_parent->tgid);"#,
    );
    assert_eq!(out, format!("1 1 1 {}\n", std::process::id()));
}

#[test]
fn sizeof_and_offsetof_match_btf() {
    let btf = vmlinux();
    let task = btf.find(Kind::Struct, "task_struct").unwrap();
    let size = btf.size_of(task).unwrap();
    let comm = btf.member(task, "comm").unwrap().byte_offset();
    let parent = btf.member(task, "real_parent").unwrap().byte_offset();
    let out = begin(
        r#"printf("%d %d %d %d %d %d\n", sizeof(struct task_struct), offsetof(struct task_struct, comm), offsetof(struct task_struct, real_parent), sizeof(curthread->comm), sizeof(u64), sizeof(curthread->real_parent));"#,
    );
    assert_eq!(out, format!("{size} {comm} {parent} 16 8 8\n"));
}

#[test]
fn bitfield_member_matches_its_word() {
    // The first bitfield of task_struct, read as a member and by hand from its word.
    let btf = vmlinux();
    let task = btf.find(Kind::Struct, "task_struct").unwrap();
    let composite = btf.composite(task).unwrap();
    let (name, field) = composite
        .members
        .iter()
        .filter(|m| !m.name.is_empty())
        .map(|m| btf.str(m.name))
        .find_map(|n| {
            let f = btf.member(task, n)?;
            f.is_bitfield().then(|| (n.to_string(), f))
        })
        .expect("task_struct has a bitfield");
    let byte = field.bit_offset / 8;
    let bit = field.bit_offset % 8;
    let mask = (1u64 << field.bitfield_size) - 1;
    let out = begin(&format!(
        r#"this->w = *(uint64_t *)((uintptr_t)curthread + {byte}); printf("%d %d\n", curthread->{name}, curthread->{name} == ((this->w >> {bit}) & {mask}));"#
    ));
    let fields: Vec<&str> = out.split_whitespace().collect();
    assert_eq!(fields.len(), 2, "{out}");
    assert_eq!(fields[1], "1", "{name}: {out}");
    assert!(fields[0].parse::<u64>().unwrap() <= mask, "{name}: {out}");
}

#[test]
fn kernel_enum_constants_and_typedefs() {
    let btf = vmlinux();
    let pgid = btf.enum_value("PIDTYPE_PGID").unwrap().value;
    let out = begin(
        r#"printf("%d %d %d\n", PIDTYPE_PGID, (pid_t)curthread->pid == tid, (u64)curthread->tgid == pid);"#,
    );
    assert_eq!(out, format!("{pgid} 1 1\n"));
}

#[test]
fn casts_to_kernel_pointer_types() {
    let out = begin(
        r#"this->t = (struct task_struct *)curthread; this->a = (uint64_t)curthread; printf("%s %s %d\n", ((struct task_struct *)curthread)->comm, this->t->comm, ((struct task_struct *)this->a)->pid == tid);"#,
    );
    assert_eq!(out, "dtrace dtrace 1\n");
}

#[test]
fn stringof_arrays_and_char_pointers() {
    // The executable's name through mm -> exe_file -> f_path (a struct member) -> dentry ->
    // d_name (a struct) -> name (a kernel `const unsigned char *`).
    let out = begin(
        r#"printf("%s|%s|%d\n", stringof(curthread->comm), stringof(curthread->mm->exe_file->f_path.dentry->d_name.name), stringof(curthread->comm) == "dtrace");"#,
    );
    assert_eq!(out, "dtrace|dtrace|1\n");
}

#[test]
fn arrays_of_structs_index_and_dot() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes one rlimit into the valid, owned `limit`.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
        0
    );
    let out = begin(&format!(
        r#"printf("%d\n", curthread->signal->rlim[{}].rlim_cur == {}ULL);"#,
        libc::RLIMIT_NOFILE,
        limit.rlim_cur
    ));
    assert_eq!(out, "1\n");
}

#[test]
fn syscall_probe_reads_the_task() {
    // The target is a child of dtrace: its parent's tgid is dtrace's pid (its ppid here).
    let run = dtrace(&[
        "-q",
        "-c",
        "/bin/true",
        "-n",
        r#"syscall::exit_group:entry /pid == $target/ { printf("%s %d %s\n", curthread->comm, curthread->real_parent->tgid == ppid, curthread->real_parent->comm); }"#,
    ]);
    assert_ok(&run);
    assert_eq!(run.stdout.trim_end(), "true 1 dtrace");
}

#[test]
fn bad_pointer_fires_error_and_the_script_goes_on() {
    let run = dtrace(&[
        "-q",
        "-n",
        r#"BEGIN { x = ((struct task_struct *)8)->pid; } BEGIN { trace(((struct task_struct *)0)->comm); } BEGIN { printf("on\n"); exit(0); }"#,
    ]);
    assert_ok(&run);
    assert_eq!(run.stdout.trim(), "on");
    assert_eq!(
        run.stderr.matches("invalid address").count(),
        2,
        "{}",
        run.stderr
    );
}

#[test]
fn compile_errors_for_unknown_members_and_types() {
    let dir = common::scratch("ktypes", "members");
    for (i, (body, tag, message)) in [
        (
            "x = curthread->nope;",
            "D_TYPE_MEMBER",
            "nope is not a member of struct task_struct",
        ),
        (
            "x = curthread.comm;",
            "D_OP_SOU",
            "operator . cannot be applied to type \"struct task_struct *\"; must be applied to a struct or union",
        ),
        (
            "x = curthread->pid->x;",
            "D_OP_PTR",
            "operator -> must be applied to a pointer",
        ),
        (
            "x = ((struct no_such_struct *)0)->x;",
            "D_OP_INCOMPLETE",
            "operator -> cannot be applied to a forward declaration: no struct no_such_struct definition is available",
        ),
        (
            "x = offsetof(struct task_struct, nope);",
            "D_UNKNOWN",
            "failed to determine offset of nope: Member name not found",
        ),
        (
            "x = offsetof(pid_t, x);",
            "D_OFFSETOF_TYPE",
            "offsetof operand must be a struct or union type",
        ),
        (
            "x = sizeof(struct no_such_struct);",
            "D_SIZEOF_TYPE",
            "cannot apply sizeof to an operand of unknown size",
        ),
        (
            "x = (struct task_struct)0;",
            "D_CAST_INVAL",
            "invalid cast expression: \"int\" to \"struct task_struct\"",
        ),
        (
            "x = curthread->comm[16];",
            "D_ARR_BOUNDS",
            "index outside array bounds: 16, max is 16",
        ),
        (
            "x = stringof(curthread->mm->mmap_base) * 2;",
            "D_OP_ARITH",
            "",
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let path = dir.join(format!("e{i}.d"));
        std::fs::write(&path, format!("BEGIN {{ {body} }}\n")).unwrap();
        let run = dtrace(&["-q", "-x", "errtags", "-s", path.to_str().unwrap()]);
        assert_ne!(run.status, 0, "{body}");
        assert!(
            run.stderr.contains(&format!("[{tag}]")) && run.stderr.contains(message),
            "{body}: {}",
            run.stderr
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

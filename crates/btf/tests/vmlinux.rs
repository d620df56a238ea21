//! Tests against the running kernel's BTF (`/sys/kernel/btf/vmlinux`).
//! Each test is skipped, with a note on stderr, where the file is missing.

use dtrace_btf::{Btf, Kind, TypeId, TypeKind};

fn vmlinux() -> Option<Btf> {
    if !std::path::Path::new(dtrace_btf::VMLINUX_PATH).exists() {
        eprintln!("skipped: no {}", dtrace_btf::VMLINUX_PATH);
        return None;
    }
    Some(Btf::vmlinux().expect("vmlinux BTF parses"))
}

fn task_struct(btf: &Btf) -> TypeId {
    btf.find(Kind::Struct, "task_struct")
        .expect("struct task_struct")
}

#[test]
fn task_struct_comm_is_char_16() {
    let Some(btf) = vmlinux() else { return };
    let task = task_struct(&btf);
    assert!(btf.size_of(task).unwrap() > 1000);
    let comm = btf.member(task, "comm").expect("comm");
    assert!(comm.byte_offset() > 0 && !comm.is_bitfield());
    let TypeKind::Array(arr) = &btf.get(btf.resolve(comm.ty)).unwrap().kind else {
        panic!("comm is {}", btf.type_name(comm.ty));
    };
    assert_eq!(arr.len, 16);
    assert_eq!(btf.name_of(btf.resolve(arr.elem)), "char");
    assert_eq!(btf.size_of(comm.ty), Some(16));
    assert_eq!(btf.type_name(comm.ty), "char[16]");
    assert_eq!(btf.decl(comm.ty, "comm"), "char comm[16]");
}

#[test]
fn member_path_through_sched_entity() {
    let Some(btf) = vmlinux() else { return };
    let task = task_struct(&btf);
    let path = btf.member_path(task, "se.sum_exec_runtime").unwrap();
    let se = btf.member(task, "se").unwrap();
    let sched_entity = btf.find(Kind::Struct, "sched_entity").unwrap();
    assert_eq!(btf.resolve(se.ty), sched_entity);
    let sum = btf.member(sched_entity, "sum_exec_runtime").unwrap();
    assert!(path.byte_offset() > 0);
    assert_eq!(path.byte_offset(), se.byte_offset() + sum.byte_offset());
    assert_eq!(path.ty, sum.ty);
    assert_eq!(btf.type_name(path.ty), "u64");
    assert_eq!(btf.size_of(path.ty), Some(8));
    let err = btf.member_path(task, "se.no_such_field").unwrap_err();
    assert_eq!(
        err.to_string(),
        "struct sched_entity has no member named 'no_such_field'"
    );
}

#[test]
fn real_parent_points_to_task_struct() {
    let Some(btf) = vmlinux() else { return };
    let task = task_struct(&btf);
    let parent = btf.member(task, "real_parent").unwrap();
    let TypeKind::Ptr(target) = btf.get(btf.resolve(parent.ty)).unwrap().kind else {
        panic!("real_parent is {}", btf.type_name(parent.ty));
    };
    assert_eq!(btf.resolve(target), task);
    assert_eq!(btf.type_name(parent.ty), "struct task_struct *");
    assert_eq!(btf.size_of(parent.ty), Some(8));
}

#[test]
fn tgid_is_pid_t_int() {
    let Some(btf) = vmlinux() else { return };
    let tgid = btf.member(task_struct(&btf), "tgid").unwrap();
    assert_eq!(btf.type_name(tgid.ty), "pid_t");
    assert_eq!(btf.find(Kind::Typedef, "pid_t"), Some(tgid.ty));
    assert_eq!(btf.type_name(btf.resolve(tgid.ty)), "int");
    assert_eq!(btf.size_of(tgid.ty), Some(4));
}

#[test]
fn bitfields_report_their_width() {
    let Some(btf) = vmlinux() else { return };
    let task = task_struct(&btf);
    let f = btf.member(task, "sched_reset_on_fork").unwrap();
    assert_eq!(f.bitfield_size, 1);
    // Every bitfield member of task_struct is reported as one.
    let bitfields = btf
        .composite(task)
        .unwrap()
        .members
        .iter()
        .filter(|m| m.bitfield_size != 0)
        .count();
    assert!(bitfields > 1);
}

#[test]
fn anonymous_members_are_searched() {
    let Some(btf) = vmlinux() else { return };
    // struct page keeps most of its fields in anonymous unions/structs.
    let page = btf.find(Kind::Struct, "page").unwrap();
    let direct = btf.composite(page).unwrap().members.iter();
    assert!(direct.clone().all(|m| btf.str(m.name) != "mapping"));
    let mapping = btf.member(page, "mapping").unwrap();
    assert_eq!(btf.type_name(mapping.ty), "struct address_space *");
    assert!(mapping.byte_offset() > 0);
}

#[test]
fn enum_constants_resolve() {
    let Some(btf) = vmlinux() else { return };
    let c = btf.enum_value("TASK_COMM_LEN").unwrap();
    assert_eq!(c.value, 16);
    assert_eq!(btf.enum_value("no_such_constant_xyz"), None);
}

#[test]
fn do_sys_openat2_has_named_params() {
    let Some(btf) = vmlinux() else { return };
    let func = btf.find(Kind::Func, "do_sys_openat2").unwrap();
    let proto = btf.func_proto(func).unwrap();
    assert!(!proto.params.is_empty());
    assert!(proto.params.iter().all(|p| !btf.str(p.name).is_empty()));
    let decl = btf.func_decl(func).unwrap();
    assert!(
        decl.contains("do_sys_openat2(int dfd, const char *filename"),
        "{decl}"
    );
    assert!(btf.find(Kind::Func, "vfs_read").is_some());
}

#[test]
fn printer_spells_kernel_types() {
    let Some(btf) = vmlinux() else { return };
    let vfs_read = btf.find(Kind::Func, "vfs_read").unwrap();
    let proto = btf.func_proto(vfs_read).unwrap();
    assert_eq!(btf.type_name(proto.params[0].ty), "struct file *");
    let decl = btf.func_decl(vfs_read).unwrap();
    assert!(
        decl.starts_with("ssize_t vfs_read(struct file *file, char *buf"),
        "{decl}"
    );
    // A function-pointer member: file_operations.read.
    let fops = btf.find(Kind::Struct, "file_operations").unwrap();
    let read = btf.member(fops, "read").unwrap();
    assert_eq!(
        btf.type_name(read.ty),
        "ssize_t (*)(struct file *, char *, size_t, loff_t *)"
    );
}

#[test]
fn every_type_can_be_sized_and_printed() {
    let Some(btf) = vmlinux() else { return };
    for id in 0..btf.len() as TypeId {
        let name = btf.type_name(id);
        assert!(!name.contains('?'), "type {id}: {name}");
        if matches!(btf.kind(id), Kind::Struct | Kind::Union | Kind::Int) {
            assert!(btf.size_of(id).is_some(), "type {id}: {name}");
        }
    }
}

#[test]
fn a_subset_keeps_the_roots_layouts() {
    let Some(btf) = vmlinux() else { return };
    let roots = [
        "struct task_struct",
        "struct mm_struct",
        "struct file",
        "typedef pid_t",
        "enum pid_type",
        "typedef btf_trace_sched_switch",
    ];
    let bytes = btf.subset(&roots, 1).unwrap();
    assert!(bytes.len() < 1 << 20, "{} bytes", bytes.len());
    let sub = Btf::parse(&bytes).unwrap();
    assert!(sub.len() < btf.len() / 10);
    for name in ["task_struct", "mm_struct", "file"] {
        let (a, b) = (
            btf.find(Kind::Struct, name).unwrap(),
            sub.find(Kind::Struct, name).unwrap(),
        );
        assert_eq!(btf.size_of(a), sub.size_of(b));
        let layout = |btf: &Btf, id| {
            let members = &btf.composite(id).unwrap().members;
            members
                .iter()
                .map(|m| {
                    let name = btf.str(m.name).to_string();
                    (name, m.bit_offset, m.bitfield_size, btf.type_name(m.ty))
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(layout(&btf, a), layout(&sub, b), "struct {name}");
    }
    let parent = sub
        .member_path(
            sub.find(Kind::Struct, "task_struct").unwrap(),
            "real_parent",
        )
        .unwrap();
    assert_eq!(sub.type_name(parent.ty), "struct task_struct *");
    let tp = |btf: &Btf| {
        let id = btf.find(Kind::Typedef, "btf_trace_sched_switch").unwrap();
        btf.decl(id, "f")
    };
    assert_eq!(tp(&sub), tp(&btf));
    assert_eq!(
        sub.enum_value("PIDTYPE_TGID").map(|c| c.value),
        btf.enum_value("PIDTYPE_TGID").map(|c| c.value)
    );
    // One pointer away from struct file, its inode is whole; two pointers away, the
    // inode's super_block is only declared.
    assert!(sub.find(Kind::Struct, "inode").is_some());
    assert_eq!(sub.find(Kind::Struct, "super_block"), None);
    assert!(sub.find(Kind::Fwd, "super_block").is_some());
}

//! `d_path(struct path *)`: the pathname of a file, as the kernel's `d_path()` writes it
//! for the current process.
//!
//! The kernel's `bpf_d_path` helper is allowed only in fentry/LSM programs on a short list
//! of functions, so the path is built here by walking the dentries up from the file, as
//! `d_path()` does: each dentry's name is copied (right to left) in front of the names
//! already found, a mount's root crosses to where the mount is mounted, and the walk ends
//! at the current process's root (`fs->root`). It takes at most [`MAX_STEPS`] steps (one
//! per name or mount crossed), unrolled, so the verifier sees straight code. A file that
//! cannot be reached from the process's root (a pipe, a socket, a file of an unmounted
//! file system), a path longer than `strsize` or deeper than the steps allow, and memory
//! that cannot be read on the way give "<unknown>"; a `struct path *` that cannot be read
//! at all is DTrace's bad-address fault at that pointer, as for the other subroutines.

use dtrace_ebpf::*;
use dtrace_frontend::{Result, Span};
use dtrace_typing::ir::Expr;

use super::regs;
use super::regs::SCRATCH;
use super::{Gen, Val};
use crate::emit::Label;
use crate::program::Fault;
use crate::types::Type;

/// Names and mount crossings walked at most.
const MAX_STEPS: usize = 32;

/// What is written for a path that cannot be given.
const UNKNOWN: &[u8] = b"<unknown>";

/// Scratch slots of the walk (8 bytes each).
struct Walk {
    /// The dentry being named.
    dentry: u32,
    /// Its `struct mount` (the `struct vfsmount` is its member `mnt`).
    mount: u32,
    /// The process's root dentry and `struct vfsmount`.
    root_dentry: u32,
    root_mnt: u32,
    /// Where the names found so far start in `buf` (`strsize`: none yet).
    pos: u32,
    /// A value read, the dentry's parent and the address of its name.
    tmp: u32,
    parent: u32,
    name: u32,
    /// The path, right-aligned to `buf + strsize` (its NUL); `2 * strsize + 8` bytes so a
    /// name of any length the checks allow stays inside.
    buf: u32,
}

/// Byte offsets of the kernel members the walk reads.
struct Offsets {
    path_dentry: i32,
    path_mnt: i32,
    mount_mnt: i32,
    mount_parent: i32,
    mount_mountpoint: i32,
    vfsmount_root: i32,
    dentry_parent: i32,
    dentry_name_len: i32,
    dentry_name: i32,
    task_fs: i32,
    fs_root_dentry: i32,
    fs_root_mnt: i32,
}

impl Gen<'_, '_> {
    /// `d_path(path)`: the pathname of `struct path *path` as a string.
    pub(crate) fn d_path(&mut self, args: &[Expr], span: Span) -> Result<Val> {
        let o = self.dpath_offsets(span)?;
        let path = self.expr(&args[0])?;
        let strsize = self.strsize();
        let res = self.string_buffer(false);
        let mark = self.scratch_top;
        let w = Walk {
            dentry: self.scratch(8),
            mount: self.scratch(8),
            root_dentry: self.scratch(8),
            root_mnt: self.scratch(8),
            pos: self.scratch(8),
            tmp: self.scratch(8),
            parent: self.scratch(8),
            name: self.scratch(8),
            buf: self.scratch(2 * strsize + 8),
        };
        let unknown = self.e.label();
        let at_root = self.e.label();
        let out = self.e.label();
        let bad_path = self.e.label();

        // The file's dentry and mount, the process's root.
        regs::read_into(&mut self.e, path.reg, R3);
        self.read_at(w.dentry, R3, o.path_dentry, bad_path);
        regs::read_into(&mut self.e, path.reg, R3);
        self.read_at(w.tmp, R3, o.path_mnt, bad_path);
        self.ld_slot(R1, w.tmp);
        self.e.emit(Insn::alu64_imm(BPF_SUB, R1, o.mount_mnt));
        self.st_slot(w.mount, R1);
        self.e.emit(Insn::call(helpers::GET_CURRENT_TASK));
        self.read_at(w.tmp, R0, o.task_fs, unknown);
        self.ld_slot(R3, w.tmp);
        self.read_at(w.root_dentry, R3, o.fs_root_dentry, unknown);
        self.ld_slot(R3, w.tmp);
        self.read_at(w.root_mnt, R3, o.fs_root_mnt, unknown);
        self.st_slot_imm(w.pos, strsize as i32);
        self.st_byte(w.buf + strsize, 0);

        for _ in 0..MAX_STEPS {
            self.dpath_step(&w, &o, at_root, unknown);
        }
        self.e.goto(unknown);

        // At the root: "/" when no name was found, then the names.
        self.e.bind(at_root);
        self.ld_slot(R1, w.pos);
        self.exit_if(BPF_JGT, R1, strsize as i32, unknown);
        let named = self.e.label();
        self.e.jmp_imm(BPF_JNE, R1, strsize as i32, named);
        self.e.emit(Insn::alu64_imm(BPF_SUB, R1, 1));
        self.put_slash(&w, R1);
        self.e.bind(named);
        self.e.emit(Insn::mov64_reg(R3, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R1));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R3, w.buf as i32));
        self.scratch_addr(R1, res);
        self.e.emit(Insn::mov64_imm(R2, strsize as i32 + 1));
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
        self.e.goto(out);

        self.e.bind(bad_path);
        regs::read_into(&mut self.e, path.reg, R1);
        self.fault(Fault::BadAddr, Some(R1));

        self.e.bind(unknown);
        for (i, b) in UNKNOWN.iter().chain(&[0]).enumerate() {
            self.st_byte(res + i as u32, *b);
        }
        self.e.bind(out);
        self.release_temps(mark, span)?;
        self.string_result(&path, res);
        Ok(Val {
            reg: path.reg,
            ty: Type::String,
        })
    }

    /// One step up: at the process's root, go to `at_root`; at the root of a mount, cross
    /// to its mount point (or, at a mount with no parent, go to `unknown`); else put the
    /// dentry's name and a `/` in front and go to its parent.
    fn dpath_step(&mut self, w: &Walk, o: &Offsets, at_root: Label, unknown: Label) {
        let next = self.e.label();
        let not_root = self.e.label();
        self.ld_slot(R1, w.dentry);
        self.ld_slot(R2, w.root_dentry);
        self.e.jmp_reg(BPF_JNE, R1, R2, not_root);
        self.ld_slot(R1, w.mount);
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, o.mount_mnt));
        self.ld_slot(R2, w.root_mnt);
        self.e.jmp_reg(BPF_JEQ, R1, R2, at_root);
        self.e.bind(not_root);

        self.ld_slot(R3, w.dentry);
        self.read_at(w.parent, R3, o.dentry_parent, unknown);
        self.ld_slot(R3, w.mount);
        self.read_at(w.tmp, R3, o.mount_mnt + o.vfsmount_root, unknown);
        let cross = self.e.label();
        let name = self.e.label();
        self.ld_slot(R1, w.dentry);
        self.ld_slot(R2, w.tmp);
        self.e.jmp_reg(BPF_JEQ, R1, R2, cross);
        self.ld_slot(R2, w.parent);
        self.e.jmp_reg(BPF_JNE, R1, R2, name);

        // The root of a mount: on to the dentry it is mounted on, in its parent mount.
        self.e.bind(cross);
        self.ld_slot(R3, w.mount);
        self.read_at(w.tmp, R3, o.mount_parent, unknown);
        self.ld_slot(R1, w.mount);
        self.ld_slot(R2, w.tmp);
        self.exit_if_reg(BPF_JEQ, R1, R2, unknown);
        self.ld_slot(R3, w.mount);
        self.read_at(w.dentry, R3, o.mount_mountpoint, unknown);
        self.ld_slot(R1, w.tmp);
        self.st_slot(w.mount, R1);
        self.e.goto(next);

        // A name: `len` bytes in front of the names so far, and a `/` before them.
        self.e.bind(name);
        self.ld_slot(R3, w.dentry);
        self.read_at(w.name, R3, o.dentry_name, unknown);
        self.ld_slot(R3, w.dentry);
        self.read_at(w.tmp, R3, o.dentry_name_len, unknown);
        self.ld_slot(R2, w.tmp);
        self.e.emit(Insn::alu32_reg(BPF_MOV, R2, R2));
        self.exit_if(BPF_JEQ, R2, 0, unknown);
        self.exit_if(BPF_JGT, R2, self.strsize() as i32, unknown);
        self.ld_slot(R1, w.pos);
        self.exit_if(BPF_JGT, R1, self.strsize() as i32, unknown);
        self.e.emit(Insn::alu64_reg(BPF_SUB, R1, R2));
        // Room for the `/` too.
        self.exit_if(BPF_JSLT, R1, 1, unknown);
        self.st_slot(w.pos, R1);
        self.e.emit(Insn::alu64_reg(BPF_ADD, R1, SCRATCH));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, w.buf as i32));
        self.ld_slot(R3, w.name);
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
        self.exit_if(BPF_JNE, R0, 0, unknown);
        self.ld_slot(R1, w.pos);
        self.exit_if(BPF_JSLT, R1, 1, unknown);
        self.exit_if(BPF_JGT, R1, self.strsize() as i32, unknown);
        self.e.emit(Insn::alu64_imm(BPF_SUB, R1, 1));
        self.put_slash(w, R1);
        self.ld_slot(R1, w.parent);
        self.st_slot(w.dentry, R1);
        self.e.bind(next);
    }

    /// `buf[pos] = '/'` and `pos` saved, for `pos` in a register the verifier knows is in
    /// `[0, strsize]`.
    fn put_slash(&mut self, w: &Walk, pos: Reg) {
        self.st_slot(w.pos, pos);
        self.e.emit(Insn::mov64_reg(R2, SCRATCH));
        self.e.emit(Insn::alu64_reg(BPF_ADD, R2, pos));
        let off = self.small(w.buf);
        self.e.emit(Insn::st(Size::B, R2, off, b'/' as i32));
    }

    /// `slot = *(u64 *)(addr + off)` read with `bpf_probe_read_kernel` (`addr` in `addr_reg`,
    /// r1-r5 and r0 clobbered); to `fail` when it cannot be read.
    fn read_at(&mut self, slot: u32, addr_reg: Reg, off: i32, fail: Label) {
        if addr_reg != R3 {
            self.e.emit(Insn::mov64_reg(R3, addr_reg));
        }
        self.e.emit(Insn::alu64_imm(BPF_ADD, R3, off));
        self.scratch_addr(R1, slot);
        self.e.emit(Insn::mov64_imm(R2, 8));
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
        self.exit_if(BPF_JNE, R0, 0, fail);
    }

    /// The members the walk reads, from the kernel's BTF.
    fn dpath_offsets(&self, span: Span) -> Result<Offsets> {
        let off = |strukt: &str, path: &str| self.member_offset(strukt, path, span);
        Ok(Offsets {
            path_dentry: off("path", "dentry")?,
            path_mnt: off("path", "mnt")?,
            mount_mnt: off("mount", "mnt")?,
            mount_parent: off("mount", "mnt_parent")?,
            mount_mountpoint: off("mount", "mnt_mountpoint")?,
            vfsmount_root: off("vfsmount", "mnt_root")?,
            dentry_parent: off("dentry", "d_parent")?,
            // `len` is the high half of `hash_len` (x86_64 is little-endian).
            dentry_name_len: off("dentry", "d_name.hash_len")? + 4,
            dentry_name: off("dentry", "d_name.name")?,
            task_fs: off("task_struct", "fs")?,
            fs_root_dentry: off("fs_struct", "root.dentry")?,
            fs_root_mnt: off("fs_struct", "root.mnt")?,
        })
    }
}

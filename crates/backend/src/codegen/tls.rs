//! Thread-local variables of scalar types (`self->x` holding an integer, a pointer or a
//! float) in task local storage: one map per script (`dt_self`) whose value for a thread
//! is a struct holding each such variable at a fixed offset, found through the thread
//! itself (`bpf_task_storage_get(map, bpf_get_current_task_btf(), ...)`) and freed by the
//! kernel when the thread exits. A hash map keyed by thread id costs an update, a lookup
//! and a delete per `self->ts` entry/return pair (≈ 300 ns of program time here); a task
//! storage access is a pointer walk (≈ 20 ns), and the struct is allocated once per
//! thread, on its first non-zero store (docs/BENCHMARKS.md).
//!
//! DTrace's semantics are kept: an unset variable reads 0; storing 0 "frees" it (the slot
//! reads 0 again and no longer counts against `dynvarsize`); a store that finds no room is
//! a dynamic variable drop ending the clause. When `dynvarsize` binds (`dynvars.rs`), a
//! store taking a slot from 0 to non-zero takes a place in the shared count and one back
//! to 0 gives it back; as the kernel frees an exiting thread's storage without telling
//! anyone, a helper on `sched_process_exit` gives back the places of that thread's
//! non-zero variables ([`Compiler::thread_exit_helper`]) and marks its value exited: a
//! probe firing later in the thread's exit (its last `sched:::off-cpu`) stores without
//! counting, as the kernel frees that value too. (The helper creates the value of a
//! thread that has none to mark it: an allocation per exiting thread, only when counting.)
//!
//! Strings, structs and arrays stay in a hash map per variable (`vars.rs`): their
//! existence is not their value (a stored "" or all-zero struct exists), and thread-local
//! associative arrays, keyed by more than the thread, too.

use dtrace_ebpf::*;
use dtrace_frontend::{CompileError, Result, Span};
use dtrace_typing::ir::{self, VarId};

use super::regs::{self, VReg};
use super::{Compiler, Gen, Val};
use crate::emit::Emitter;
use crate::program::DYNVARS_OFFSET;
use crate::program::{DropKind, HelperKind, HelperProgram, MapId, MapKind, MapSpec};
use crate::types::Type;

/// Where the scalar thread-local variables live in a thread's task storage value.
pub(crate) struct TaskVars {
    /// Each thread-local variable's offset in the value, if it lives there.
    offsets: Vec<Option<u32>>,
    /// The value's size.
    size: u32,
    /// When places are counted: the offset of the word the exit helper sets in an exiting
    /// thread's value (its stores no longer count).
    exited: Option<u32>,
    /// The map, once used.
    map: Option<MapId>,
}

/// Whether a thread-local variable of type `ty` lives in task storage.
fn in_task_storage(ty: &Type) -> bool {
    !matches!(ty, Type::String | Type::Struct(_) | Type::Array(..))
}

impl TaskVars {
    /// With `counting`, the value has an exited word.
    pub fn new(prog: &ir::Program, counting: bool) -> TaskVars {
        let mut size = 0;
        let offsets = prog
            .thread_vars
            .iter()
            .map(|v| {
                in_task_storage(&v.ty).then(|| {
                    size += 8;
                    size - 8
                })
            })
            .collect::<Vec<_>>();
        let exited = (counting && size > 0).then_some(size);
        TaskVars {
            offsets,
            size: size + if exited.is_some() { 8 } else { 0 },
            exited,
            map: None,
        }
    }

    /// Thread-local `id`'s offset in the task storage value, if it lives there.
    pub fn offset(&self, id: VarId) -> Option<u32> {
        self.offsets[id]
    }
}

impl Compiler<'_> {
    /// The task storage map of the script's scalar thread-locals, created on first use.
    fn task_map(&mut self) -> MapId {
        if let Some(map) = self.vars.task.map {
            return map;
        }
        let map = self.add_map(MapSpec {
            name: "dt_self".into(),
            kind: MapKind::TaskStorage,
            key_size: 4,
            value_size: self.vars.task.size,
            max_entries: 0,
            initial: None,
            entries_per_cpu: 0,
            members: Vec::new(),
        });
        self.vars.task.map = Some(map);
        map
    }

    /// The `sched_process_exit` helper giving back the places of an exiting thread's
    /// non-zero scalar thread-locals, when a program uses them and `dynvarsize` binds.
    pub(crate) fn thread_exit_helper(&mut self) -> Result<()> {
        let (Some(map), Some(exited)) = (self.vars.task.map, self.vars.task.exited) else {
            return Ok(());
        };
        let mut e = Emitter::new();
        let out = e.label();
        // Created if the thread has none, to be marked.
        get_task_value(&mut e, map, true);
        e.jmp_imm(BPF_JEQ, R0, 0, out);
        e.emit(Insn::st(Size::DW, R0, exited as i16, 1));
        // r3 counts the non-zero variables (negated), each cleared.
        e.emit(Insn::mov64_imm(R3, 0));
        for off in self.vars.task.offsets.iter().flatten() {
            let zero = e.label();
            e.emit(Insn::ldx(Size::DW, R1, R0, *off as i16));
            e.jmp_imm(BPF_JEQ, R1, 0, zero);
            e.emit(Insn::alu64_imm(BPF_SUB, R3, 1));
            e.emit(Insn::st(Size::DW, R0, *off as i16, 0));
            e.bind(zero);
        }
        e.jmp_imm(BPF_JEQ, R3, 0, out);
        e.ld_map_value(R1, self.core.globals, DYNVARS_OFFSET);
        e.emit(Insn::atomic_add(Size::DW, R1, 0, R3));
        e.bind(out);
        e.emit(Insn::mov64_imm(R0, 0));
        e.emit(Insn::exit());
        let code = e
            .finish()
            .map_err(|msg| CompileError::unplaced("D_DIF_TOOBIG", msg))?;
        self.helpers.push(HelperProgram {
            kind: HelperKind::ThreadExit,
            code,
        });
        Ok(())
    }
}

/// `r0 = bpf_task_storage_get(map, current, NULL, flags)`, creating the thread's value
/// if `create`. Uses r1-r5.
fn get_task_value(e: &mut Emitter, map: MapId, create: bool) {
    let flags = if create {
        helpers::BPF_LOCAL_STORAGE_GET_F_CREATE
    } else {
        0
    };
    get_task_value_with(e, map, |e| e.emit(Insn::mov64_imm(R4, flags)));
}

/// [`get_task_value`] with the flags put in r4 by `flags` (r1-r3 already set).
fn get_task_value_with(e: &mut Emitter, map: MapId, flags: impl FnOnce(&mut Emitter)) {
    e.emit(Insn::call(helpers::GET_CURRENT_TASK_BTF));
    e.emit(Insn::mov64_reg(R2, R0));
    e.ld_map(R1, map);
    e.emit(Insn::mov64_imm(R3, 0));
    flags(e);
    e.emit(Insn::call(helpers::TASK_STORAGE_GET));
}

impl Gen<'_, '_> {
    /// Whether thread-local `id` lives in task storage.
    pub(crate) fn in_task_storage(&self, id: VarId) -> bool {
        self.c.vars.task.offset(id).is_some()
    }

    /// A new register holding the address of thread-local `id` (in task storage) in this
    /// thread's value, or 0 when the thread has none (the variable reads 0).
    pub(crate) fn task_var(&mut self, id: VarId, span: Span) -> Result<VReg> {
        let off = self
            .c
            .vars
            .task
            .offset(id)
            .expect("a task storage variable");
        let map = self.c.task_map();
        get_task_value(&mut self.e, map, false);
        if off != 0 {
            let absent = self.e.label();
            self.e.jmp_imm(BPF_JEQ, R0, 0, absent);
            self.e.emit(Insn::alu64_imm(BPF_ADD, R0, off as i32));
            self.e.bind(absent);
        }
        let v = self.push(span)?;
        regs::write(&mut self.e, v, R0);
        Ok(v)
    }

    /// Store `val` into thread-local `id` (in task storage). A non-zero value creates the
    /// thread's value if needed (failing, a dynamic variable drop ends the clause); 0 into
    /// a thread without one needs none. When `dynvarsize` binds, a slot going from 0 to
    /// non-zero takes a place (none left: a drop ending the clause), one going back to 0
    /// gives it back.
    pub(crate) fn store_task_var(&mut self, id: VarId, val: &Val) -> Result<()> {
        let off = self
            .c
            .vars
            .task
            .offset(id)
            .expect("a task storage variable") as i16;
        let map = self.c.task_map();
        let (found, done, drop) = (self.e.label(), self.e.label(), self.e.label());
        let reg = val.reg;
        get_task_value_with(&mut self.e, map, |e| {
            // Create the thread's value for a non-zero value only.
            let zero = e.label();
            regs::read_into(e, reg, R4);
            e.jmp_imm(BPF_JEQ, R4, 0, zero);
            e.emit(Insn::mov64_imm(R4, helpers::BPF_LOCAL_STORAGE_GET_F_CREATE));
            e.bind(zero);
        });
        self.e.jmp_imm(BPF_JNE, R0, 0, found);
        let v = regs::read(&mut self.e, val.reg, R1);
        self.e.jmp_imm(BPF_JEQ, v, 0, done);
        self.e.goto(drop);
        self.e.bind(found);
        if let Some(exited) = self.c.vars.task.exited {
            let (clear, write) = (self.e.label(), self.e.label());
            // r0 (the value) and r3 (the new value) survive the count's updates; an
            // exited thread's stores are not counted.
            self.e.emit(Insn::ldx(Size::DW, R1, R0, off));
            self.e.emit(Insn::ldx(Size::DW, R2, R0, exited as i16));
            regs::read_into(&mut self.e, val.reg, R3);
            self.e.jmp_imm(BPF_JNE, R2, 0, write);
            self.e.jmp_imm(BPF_JEQ, R3, 0, clear);
            self.e.jmp_imm(BPF_JNE, R1, 0, write);
            self.take_dynvar(drop);
            self.e.goto(write);
            self.e.bind(clear);
            self.e.jmp_imm(BPF_JEQ, R1, 0, write);
            self.give_back_dynvar();
            self.e.bind(write);
            self.e.emit(Insn::stx(Size::DW, R0, off, R3));
        } else {
            let v = regs::read(&mut self.e, val.reg, R1);
            self.e.emit(Insn::stx(Size::DW, R0, off, v));
        }
        self.e.goto(done);
        // As in DTrace, a variable that cannot be made ends the clause: nothing the
        // clause recorded is sent.
        self.e.bind(drop);
        self.count_drop(DropKind::Dynamic);
        let end = self.clause_state().end;
        self.e.goto(end);
        self.e.bind(done);
        Ok(())
    }
}

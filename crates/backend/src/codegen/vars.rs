//! Where variables live: globals in one array map read by direct address, thread-locals
//! `self->` of scalar types in the thread's task local storage (`tls.rs`), other
//! thread-locals (strings, structs, arrays) in a hash map per variable keyed by thread,
//! clause-locals `this->` in the firing's scratch, associative arrays in a hash map per
//! array keyed by the tuple; plus the read-only data pool (string literals, tables, and a
//! zero block used to create entries and as "").
//!
//! A variable of scalar type takes 8 bytes (its 64-bit value); a string `strsize` bytes; a
//! struct, union or array its size. As in DTrace, unset values read as 0 (a NULL string),
//! and storing 0 (or NULL) into a whole dynamic variable deletes it.

use std::cell::OnceCell;
use std::collections::HashMap;

use dtrace_ebpf::*;
use dtrace_frontend::{Result, Span};
use dtrace_typing::ir::{self, VarId};

use super::regs::{self, SCRATCH};

/// `bpf_map_update_elem`'s flags.
const BPF_ANY: i32 = 0;
const BPF_NOEXIST: i32 = 1;
const BPF_EXIST: i32 = 2;
use super::{Compiler, Gen};
use crate::program::{KeyStore, MapId, MapKind, MapSpec};
use crate::types::Type;

pub use crate::program::STATE_OFFSET;

/// The read-only data map: a zero block (used to initialise map values and as ""), then
/// string literals and tables, then `strsize` zero bytes so any literal can be read as a
/// whole string.
#[derive(Default)]
pub struct Rodata {
    bytes: Vec<u8>,
    index: HashMap<Vec<u8>, u32>,
}

impl Rodata {
    /// Offset of the all-zero block at the start (also the empty string).
    pub const ZEROS: u32 = 0;

    fn ensure_zero_block(&mut self, size: usize) {
        if self.bytes.is_empty() {
            self.bytes = vec![0; size];
        }
    }

    /// Offset of a copy of `bytes` followed by a NUL (the empty string is the zero block).
    pub fn bytes(&mut self, s: &[u8], zero_block: usize) -> u32 {
        self.ensure_zero_block(zero_block);
        if s.is_empty() {
            return Self::ZEROS;
        }
        if let Some(&off) = self.index.get(s) {
            return off;
        }
        let off = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s);
        self.bytes.push(0);
        self.index.insert(s.to_vec(), off);
        off
    }

    /// The map's contents, with `tail` zero bytes after the last literal.
    pub fn finish(mut self, tail: usize) -> Vec<u8> {
        self.ensure_zero_block(tail);
        self.bytes.resize(self.bytes.len() + tail, 0);
        self.bytes.resize(self.bytes.len().next_multiple_of(8), 0);
        self.bytes
    }
}

/// The bytes a variable (or a key, or an associative array's value) of `ty` takes.
pub fn storage_size(ty: &Type, strsize: u32) -> u32 {
    match ty {
        Type::String => strsize,
        Type::Struct(_) | Type::Array(..) => (ty.size() as u32).next_multiple_of(8).max(8),
        _ => 8,
    }
}

/// The program's variables' storage.
pub(crate) struct Storage {
    /// Offset of each global in the globals map.
    global_offsets: Vec<u32>,
    globals_size: u32,
    /// Each thread-local variable's map, once used (those not in task storage).
    thread_maps: Vec<Option<MapId>>,
    /// The thread-locals in task storage.
    pub task: super::tls::TaskVars,
    /// Each associative array's map, once used.
    assoc_maps: Vec<Option<MapId>>,
    /// How each associative array's keys are stored, and its key size, once asked: a
    /// glob's clause is generated once per probe, and a probe-name key's table is large.
    assoc_keys: Vec<OnceCell<(Vec<KeyStore>, u32)>>,
}

impl Storage {
    /// With `counting`, the dynamic variables that exist are counted (`dynvars.rs`).
    pub fn new(prog: &ir::Program, strsize: u32, counting: bool) -> Storage {
        // The state word and the counts of dynamic variables and aggregation keys come
        // first; user globals follow them.
        let mut size = crate::program::AGGKEYS_OFFSET + 8;
        let mut global_offsets = Vec::new();
        for g in &prog.globals {
            global_offsets.push(size);
            size += storage_size(&g.ty, strsize).next_multiple_of(8);
        }
        Storage {
            global_offsets,
            globals_size: size,
            thread_maps: vec![None; prog.thread_vars.len()],
            task: super::tls::TaskVars::new(prog, counting),
            assoc_maps: vec![None; prog.assocs.len()],
            assoc_keys: vec![OnceCell::new(); prog.assocs.len()],
        }
    }

    pub fn globals_size(&self) -> u32 {
        self.globals_size
    }

    pub fn global_offset(&self, id: VarId) -> u32 {
        self.global_offsets[id]
    }
}

impl Compiler<'_> {
    /// Offset in the read-only data of `bytes` followed by a NUL.
    pub(crate) fn rodata_bytes(&mut self, bytes: &[u8]) -> u32 {
        let zero = (self.opts.strsize as usize).max(super::aggregate::MAX_SLOTS * 8);
        self.rodata.bytes(bytes, zero)
    }

    fn dynamic_map(&mut self, name: String, key_size: u32, value: &Type) -> MapId {
        let value_size = storage_size(value, self.opts.strsize);
        let max_entries = self.opts.dynvar_entries;
        self.add_map(MapSpec {
            name,
            kind: MapKind::Hash,
            key_size,
            value_size,
            max_entries,
            initial: None,
            entries_per_cpu: 0,
            members: Vec::new(),
        })
    }

    /// How each key of associative array `id` is stored, and the size of its key tuple
    /// (at least 8 bytes; the thread id first in a thread-local one's).
    pub(crate) fn assoc_key(&self, id: VarId) -> (Vec<KeyStore>, u32) {
        let layout = self.vars.assoc_keys[id].get_or_init(|| {
            let a = &self.prog.assocs[id];
            let strsize = self.opts.strsize;
            let stores: Vec<KeyStore> = a
                .keys
                .iter()
                .enumerate()
                .map(|(i, t)| KeyStore::of(t, None, a.uses.get(i), strsize))
                .collect();
            let size = stores
                .iter()
                .zip(&a.keys)
                .map(|(s, t)| s.size(t, strsize))
                .sum::<u32>()
                .max(8);
            (stores, size + if a.thread { 8 } else { 0 })
        });
        layout.clone()
    }

    /// Thread-local variable `id`'s map (keyed by thread id), created on first use.
    pub(crate) fn thread_map(&mut self, id: VarId) -> MapId {
        if let Some(map) = self.vars.thread_maps[id] {
            return map;
        }
        let var = &self.prog.thread_vars[id];
        let (name, ty) = (format!("dt_s_{}", var.name), var.ty.clone());
        let map = self.dynamic_map(name, 8, &ty);
        self.vars.thread_maps[id] = Some(map);
        map
    }

    /// Associative array `id`'s map, created on first use.
    pub(crate) fn assoc_map(&mut self, id: VarId) -> MapId {
        if let Some(map) = self.vars.assoc_maps[id] {
            return map;
        }
        let a = &self.prog.assocs[id];
        let prefix = if a.thread { "dt_ta_" } else { "dt_a_" };
        let (name, value) = (format!("{prefix}{}", a.name), a.value.clone());
        let (_, key_size) = self.assoc_key(id);
        let map = self.dynamic_map(name, key_size, &value);
        self.vars.assoc_maps[id] = Some(map);
        map
    }
}

impl Gen<'_, '_> {
    /// The scratch offset of `this->` variable `id` in this program.
    pub(crate) fn this_offset(&mut self, id: VarId) -> u32 {
        if let Some(&off) = self.this_offsets.get(&id) {
            return off;
        }
        let ty = self.c.prog.this_vars[id].ty.clone();
        let size = storage_size(&ty, self.strsize());
        let off = self.scratch(size);
        self.this_offsets.insert(id, off);
        if matches!(ty, Type::Array(..) | Type::Struct(_) | Type::String) {
            // Its address can be taken (an array decays to one, a string acts as its
            // characters' address): stores through it are allowed.
            self.allocations.push((off, size));
        }
        off
    }

    /// `dst = scratch + off`
    pub(crate) fn scratch_addr(&mut self, dst: Reg, off: u32) {
        self.e.emit(Insn::mov64_reg(dst, SCRATCH));
        if off != 0 {
            self.e.emit(Insn::alu64_imm(BPF_ADD, dst, off as i32));
        }
    }

    /// A scratch offset as an instruction's 16-bit displacement. Programs whose scratch
    /// grows past 32 KiB are refused when they are finished, so truncation never reaches
    /// the kernel.
    pub(crate) fn small(&self, off: u32) -> i16 {
        off as i16
    }

    /// Zero `len` bytes (a multiple of 8) of scratch at `off`.
    pub(crate) fn zero_scratch(&mut self, off: u32, len: u32) {
        for i in (0..len).step_by(8) {
            self.e
                .emit(Insn::st(Size::DW, SCRATCH, self.small(off + i), 0));
        }
    }

    /// Evaluate `keys` into a key tuple of associative array `id` in scratch; returns its
    /// offset. A thread-local array's key starts with the current thread's id; `execname`
    /// is written straight into its slot.
    pub(crate) fn build_key(&mut self, keys: &[ir::Expr], id: VarId) -> Result<u32> {
        let (types, thread) = (
            self.c.prog.assocs[id].keys.clone(),
            self.c.prog.assocs[id].thread,
        );
        let (stores, size) = self.c.assoc_key(id);
        let mut vals = Vec::new();
        for (k, store) in keys.iter().zip(&stores) {
            vals.push(match super::keys::written_in_place(k, store) {
                true => None,
                false => Some(self.key_value(k, store)?),
            });
        }
        let key = self.scratch(size);
        self.zero_scratch(key, size.next_multiple_of(8));
        let mut off = key;
        if thread {
            self.e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
            self.e
                .emit(Insn::stx(Size::DW, SCRATCH, self.small(off), R0));
            off += 8;
        }
        for ((v, ty), store) in vals.iter().zip(&types).zip(&stores) {
            match (v, store, ty) {
                (None, _, _) => self.write_in_place(SCRATCH, self.small(off)),
                (Some(v), KeyStore::String(bound), _) => {
                    self.fault_if_null(v);
                    self.scratch_addr(R1, off);
                    self.e.emit(Insn::mov64_imm(R2, *bound as i32));
                    regs::read_into(&mut self.e, v.reg, R3);
                    self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
                    self.fault_if_negative(v.reg);
                }
                (Some(v), KeyStore::Value, Type::Struct(_) | Type::Array(..)) => {
                    self.scratch_addr(R1, off);
                    self.e.emit(Insn::mov64_imm(R2, ty.size() as i32));
                    regs::read_into(&mut self.e, v.reg, R3);
                    self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
                }
                (Some(v), _, _) => {
                    let r = regs::read(&mut self.e, v.reg, R1);
                    super::expr::normalize(&mut self.e, r, ty);
                    self.e
                        .emit(Insn::stx(Size::DW, SCRATCH, self.small(off), r));
                }
            }
            off += store.size(ty, self.strsize());
        }
        for v in vals.iter().rev().flatten() {
            self.pop(v.reg);
        }
        Ok(key)
    }

    /// With the key pointer in r2: delete the entry if the value is 0 (a NULL string),
    /// else update it (creating it takes a place in the dynamic variable space; with none
    /// left, the drop ends the clause).
    pub(crate) fn update_or_delete(
        &mut self,
        map: MapId,
        val: &super::Val,
        span: Span,
    ) -> Result<()> {
        let delete = self.e.label();
        let drop = self.e.label();
        let done = self.e.label();
        // Zero (or NULL) deletes the entry; a struct or array is always stored.
        let deletes = !matches!(val.ty, Type::Struct(_) | Type::Array(..));
        let mark = self.scratch_top;
        let key = self.push(span)?;
        regs::write(&mut self.e, key, R2);
        // Where the value to store is: a scratch copy, or the struct's address.
        let copy = match &val.ty {
            Type::String => {
                // Stored from a copy: the string may be at any address.
                let r = regs::read(&mut self.e, val.reg, R3);
                self.e.jmp_imm(BPF_JEQ, r, 0, delete);
                // (Its second byte cleared: "" must not read back as the NULL mark.)
                let tmp = self.string_buffer(false);
                self.e.emit(Insn::st(Size::H, SCRATCH, self.small(tmp), 0));
                self.copy_string(tmp, val);
                Some(tmp)
            }
            Type::Struct(_) | Type::Array(..) => None,
            _ => {
                let r = regs::read(&mut self.e, val.reg, R3);
                self.e.jmp_imm(BPF_JEQ, r, 0, delete);
                let tmp = self.scratch(8);
                self.e
                    .emit(Insn::stx(Size::DW, SCRATCH, self.small(tmp), r));
                Some(tmp)
            }
        };
        let update = |g: &mut Self, flags: i32| {
            match copy {
                Some(tmp) => g.scratch_addr(R3, tmp),
                None => regs::read_into(&mut g.e, val.reg, R3),
            }
            g.e.ld_map(R1, map);
            regs::read_into(&mut g.e, key, R2);
            g.e.emit(Insn::mov64_imm(R4, flags));
            g.e.emit(Insn::call(helpers::MAP_UPDATE_ELEM));
        };
        if self.c.dynvar_places.is_some() {
            // An existing variable is updated in its place; a new one takes a place.
            update(self, BPF_EXIST);
            self.e.jmp_imm(BPF_JEQ, R0, 0, done);
            self.take_dynvar(drop);
            update(self, BPF_NOEXIST);
            self.give_back_unless_created();
        } else {
            update(self, BPF_ANY);
        }
        self.e.jmp_imm(BPF_JEQ, R0, 0, done);
        // A variable that cannot be made is a drop that ends the clause, as in DTrace:
        // nothing the clause recorded is sent.
        self.e.bind(drop);
        self.count_drop(crate::program::DropKind::Dynamic);
        let end = self.clause_state().end;
        self.e.goto(end);
        if deletes {
            self.e.bind(delete);
            self.e.ld_map(R1, map);
            regs::read_into(&mut self.e, key, R2);
            self.e.emit(Insn::call(helpers::MAP_DELETE_ELEM));
            self.give_back_if_deleted();
        }
        self.e.bind(done);
        self.pop(key);
        self.release_scratch(mark);
        Ok(())
    }

    /// Store the current thread id at `fp + KEY_SLOT`.
    pub(crate) fn thread_key(&mut self) {
        self.e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
        self.e.emit(Insn::stx(Size::DW, R10, regs::KEY_SLOT, R0));
    }
}

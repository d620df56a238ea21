//! Places: the addresses, loads and stores of the storage an IR [`Place`] names.
//!
//! D's own storage (globals, `this->` variables, and the entries of thread-local variables
//! and associative arrays) is addressed directly: a pointer the verifier knows into a map
//! value or the scratch area. A dynamic variable's entry may not exist: reading one gives
//! 0 (a NULL string, or a zeroed struct); writing part of one (a member, an element)
//! creates it zeroed first. Storage holding a NULL string holds a mark (see
//! `NULL_STRING_MARK`) and reads back as NULL. Kernel memory is read with `bpf_probe_read_kernel` (user memory with
//! `bpf_probe_read_user`) into the stack, so a bad address raises DTrace's "invalid
//! address" fault instead of a verifier rejection; writes through a pointer are allowed only
//! into the scratch memory this firing's `alloca` and `copyin` handed out, checked at run
//! time, as DTrace checks them.
//!
//! Integers are read at their width and normalized (sign- or zero-extended); a bit-field
//! is read from the bytes holding it, shifted and masked; a `char` array reads as a string
//! (copied up to its NUL); structs and unions are values by reference (a pointer to their
//! bytes, copied into scratch when they live in kernel memory).

use dtrace_ebpf::*;
use dtrace_frontend::{Result, Span};
use dtrace_typing::ir::{ArithOp, Place, PlaceBase};

use super::regs::{self, VReg, KEY_SLOT, SCRATCH};
use super::vars::Rodata;
use super::{Gen, Val};
use crate::emit::Label;
use crate::program::{DropKind, Fault, MapId};
use crate::types::Type;

/// Where a place's bytes are, once its address is computed.
#[derive(Clone, Copy)]
pub(crate) enum Loc {
    /// D storage the program addresses directly; 0 when a dynamic variable's entry does
    /// not exist (only when reading).
    Direct(VReg),
    /// Memory at an address in the kernel's (`user`: the traced process's) address space.
    Memory { reg: VReg, user: bool },
}

impl Loc {
    pub fn reg(self) -> VReg {
        match self {
            Loc::Direct(r) | Loc::Memory { reg: r, .. } => r,
        }
    }
}

/// Whether `p` is a whole scalar variable (stored as a 64-bit value).
fn whole_scalar(p: &Place) -> bool {
    p.offset == 0
        && p.index.is_none()
        && p.ty.is_scalar()
        && !matches!(p.base, PlaceBase::Kernel(_) | PlaceBase::User(_))
}

/// Whether `p` is a whole variable or associative array element.
fn whole(p: &Place) -> bool {
    p.offset == 0
        && p.index.is_none()
        && !matches!(p.base, PlaceBase::Kernel(_) | PlaceBase::User(_))
}

impl Gen<'_, '_> {
    /// Compute where `p` is. With `create`, a dynamic variable's missing entry is created
    /// (zeroed) first; the location is then never 0 (on failure, a dynamic variable drop is
    /// counted and the clause ends).
    pub(crate) fn locate(&mut self, p: &Place, create: bool, span: Span) -> Result<Loc> {
        let loc = match &p.base {
            PlaceBase::Global(id) => {
                let v = self.push(span)?;
                let off = self.c.vars.global_offset(*id) + p.offset as u32;
                self.e.ld_map_value(R1, self.c.core.globals, off);
                regs::write(&mut self.e, v, R1);
                Loc::Direct(v)
            }
            PlaceBase::This(id) => {
                let v = self.push(span)?;
                let off = self.this_offset(*id) + p.offset as u32;
                self.scratch_addr(R1, off);
                regs::write(&mut self.e, v, R1);
                Loc::Direct(v)
            }
            PlaceBase::Thread(id) if self.in_task_storage(*id) => {
                Loc::Direct(self.task_var(*id, span)?)
            }
            PlaceBase::Thread(id) => {
                let map = self.c.thread_map(*id);
                self.thread_key();
                self.e.emit(Insn::mov64_reg(R2, R10));
                self.e.emit(Insn::alu64_imm(BPF_ADD, R2, KEY_SLOT as i32));
                let v = self.entry(map, create, p.offset, span)?;
                Loc::Direct(v)
            }
            PlaceBase::Assoc { var, keys } => {
                let map = self.c.assoc_map(*var);
                let key = self.build_key(keys, *var)?;
                self.scratch_addr(R2, key);
                let v = self.entry(map, create, p.offset, span)?;
                Loc::Direct(v)
            }
            PlaceBase::Kernel(addr) | PlaceBase::User(addr) => {
                let v = self.expr(addr)?;
                if p.offset != 0 {
                    let r = regs::read(&mut self.e, v.reg, R1);
                    if p.checked_base {
                        let not_null = self.e.label();
                        self.e.jmp_imm(BPF_JNE, r, 0, not_null);
                        self.fault(Fault::BadAddr, None);
                        self.e.bind(not_null);
                    }
                    self.e.mov_const(R2, p.offset);
                    self.e.emit(Insn::alu64_reg(BPF_ADD, r, R2));
                    regs::write(&mut self.e, v.reg, r);
                }
                Loc::Memory {
                    reg: v.reg,
                    user: matches!(p.base, PlaceBase::User(_)),
                }
            }
        };
        if let Some(index) = &p.index {
            let i = self.expr(index)?;
            let base = loc.reg();
            let skip = self.e.label();
            let r = regs::read(&mut self.e, base, R1);
            if matches!(loc, Loc::Direct(_)) {
                self.e.jmp_imm(BPF_JEQ, r, 0, skip);
            }
            regs::read_into(&mut self.e, i.reg, R2);
            self.e.emit(Insn::alu64_reg(BPF_ADD, r, R2));
            regs::write(&mut self.e, base, r);
            self.e.bind(skip);
            self.pop(i.reg);
        }
        Ok(loc)
    }

    /// With the key pointer in r2: a new register holding `map`'s value for the key plus
    /// `offset` (0 when absent and not `create`d).
    fn entry(
        &mut self,
        map: crate::program::MapId,
        create: bool,
        offset: u64,
        span: Span,
    ) -> Result<VReg> {
        let v = self.push(span)?;
        let found = self.e.label();
        let done = self.e.label();
        // Keep the key pointer in the new register until the entry is found.
        regs::write(&mut self.e, v, R2);
        self.e.ld_map(R1, map);
        self.e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
        self.e.jmp_imm(BPF_JNE, R0, 0, found);
        if create {
            let full = self.e.label();
            self.take_dynvar(full);
            self.e.ld_map(R1, map);
            regs::read_into(&mut self.e, v, R2);
            self.e.ld_map_value(R3, self.c.core.rodata, Rodata::ZEROS);
            self.e.emit(Insn::mov64_imm(R4, 1)); // BPF_NOEXIST
            self.e.emit(Insn::call(helpers::MAP_UPDATE_ELEM));
            self.give_back_unless_created();
            self.e.ld_map(R1, map);
            regs::read_into(&mut self.e, v, R2);
            self.e.emit(Insn::call(helpers::MAP_LOOKUP_ELEM));
            self.e.jmp_imm(BPF_JNE, R0, 0, found);
            self.e.bind(full);
            self.count_drop(DropKind::Dynamic);
            let end = self.clause_state().end;
            self.e.goto(end);
        } else {
            self.e.emit(Insn::mov64_imm(R0, 0));
            self.e.goto(done);
        }
        self.e.bind(found);
        if offset != 0 {
            self.e.emit(Insn::alu64_imm(BPF_ADD, R0, offset as i32));
        }
        self.e.bind(done);
        regs::write(&mut self.e, v, R0);
        Ok(v)
    }

    /// The value of `p`, as type `out` (a `char` array as a string).
    pub(crate) fn load(&mut self, p: &Place, out: &Type, span: Span) -> Result<Val> {
        let loc = self.locate(p, false, span)?;
        let reg = loc.reg();
        match &p.ty {
            Type::String => {
                if let Loc::Direct(r) = loc {
                    self.stored_string(r);
                }
            }
            Type::Array(_, len) if out.is_string() => {
                let len = if *len == 0 { self.strsize() } else { *len };
                let len = (len + 1).min(self.strsize());
                match loc {
                    Loc::Direct(r) => {
                        self.or_zero_block(r);
                        self.read_string(r, len, false)?;
                    }
                    Loc::Memory { reg, user } => {
                        if !user {
                            self.check_arena_access(reg, 1);
                        }
                        self.read_string(reg, len, user)?
                    }
                }
            }
            Type::Struct(_) | Type::Array(..) => match loc {
                Loc::Direct(r) => self.or_zero_block(r),
                Loc::Memory { reg, user } => {
                    let size = p.ty.size() as u32;
                    if !user {
                        self.check_arena_access(reg, size);
                    }
                    let buf = self.scratch(size);
                    self.scratch_addr(R1, buf);
                    self.e.emit(Insn::mov64_imm(R2, size as i32));
                    regs::read_into(&mut self.e, reg, R3);
                    self.e.emit(Insn::call(read_helper(user)));
                    self.fault_if_negative(reg);
                    self.scratch_addr(R1, buf);
                    regs::write(&mut self.e, reg, R1);
                }
            },
            _ => self.load_scalar(p, loc),
        }
        Ok(Val {
            reg,
            ty: out.clone(),
        })
    }

    /// The string stored at the Direct location `r`: 0 (NULL) for an absent entry or
    /// storage holding the NULL mark, else the location.
    fn stored_string(&mut self, r: VReg) {
        let p = regs::read(&mut self.e, r, R1);
        let done = self.e.label();
        self.e.jmp_imm(BPF_JEQ, p, 0, done);
        self.e.emit(Insn::ldx(Size::H, R2, p, 0));
        self.e.jmp_imm(BPF_JNE, R2, NULL_STRING_MARK, done);
        self.e.emit(Insn::mov64_imm(R1, 0));
        regs::write(&mut self.e, r, R1);
        self.e.bind(done);
    }

    /// Replace a null Direct location by the zero block (an absent entry reads as zeros).
    fn or_zero_block(&mut self, r: VReg) {
        let r1 = regs::read(&mut self.e, r, R1);
        let ok = self.e.label();
        self.e.jmp_imm(BPF_JNE, r1, 0, ok);
        self.e.ld_map_value(R1, self.c.core.rodata, Rodata::ZEROS);
        regs::write(&mut self.e, r, R1);
        self.e.bind(ok);
    }

    /// Replace the address of a scalar in `loc` by its value.
    fn load_scalar(&mut self, p: &Place, loc: Loc) {
        // (A float's bits load as an integer of its size.)
        let size = if whole_scalar(p) {
            8
        } else {
            (p.ty.size() as usize).clamp(1, 8)
        };
        let (read, bits) = match p.bitfield {
            Some((bit, width)) => (
                (bit as usize + width as usize).div_ceil(8).clamp(1, 8),
                Some((bit, width)),
            ),
            None => (size, None),
        };
        match loc {
            Loc::Direct(r) => {
                let ptr = regs::read(&mut self.e, r, R1);
                let absent = self.e.label();
                let done = self.e.label();
                self.e.jmp_imm(BPF_JEQ, ptr, 0, absent);
                if bits.is_some() {
                    // Bytes beyond the field may lie past the storage: read them one by one.
                    self.e.emit(Insn::mov64_imm(R0, 0));
                    for i in 0..read {
                        self.e.emit(Insn::ldx(Size::B, R2, ptr, i as i16));
                        self.e.emit(Insn::alu64_imm(BPF_LSH, R2, i as i32 * 8));
                        self.e.emit(Insn::alu64_reg(BPF_OR, R0, R2));
                    }
                    self.e.emit(Insn::mov64_reg(R1, R0));
                } else {
                    self.e.emit(Insn::ldx(Size::from_bytes(read), R1, ptr, 0));
                }
                self.e.goto(done);
                self.e.bind(absent);
                self.e.emit(Insn::mov64_imm(R1, 0));
                self.e.bind(done);
            }
            Loc::Memory { reg, user } => {
                if !user {
                    self.check_arena_access(reg, read as u32);
                }
                self.e.emit(Insn::st(Size::DW, R10, KEY_SLOT, 0));
                self.e.emit(Insn::mov64_reg(R1, R10));
                self.e.emit(Insn::alu64_imm(BPF_ADD, R1, KEY_SLOT as i32));
                self.e.emit(Insn::mov64_imm(R2, read as i32));
                regs::read_into(&mut self.e, reg, R3);
                self.e.emit(Insn::call(read_helper(user)));
                self.fault_if_negative(reg);
                let width = if bits.is_some() { 8 } else { read };
                self.e
                    .emit(Insn::ldx(Size::from_bytes(width), R1, R10, KEY_SLOT));
            }
        }
        match bits {
            Some((bit, width)) => {
                // Move the field to the top, then back down with its sign if signed.
                let up = 64 - bit as i32 - width as i32;
                if up > 0 {
                    self.e.emit(Insn::alu64_imm(BPF_LSH, R1, up));
                }
                let down = if p.ty.is_signed() { BPF_ARSH } else { BPF_RSH };
                if width < 64 {
                    self.e.emit(Insn::alu64_imm(down, R1, 64 - width as i32));
                }
            }
            None => super::expr::normalize(&mut self.e, R1, &p.ty),
        }
        regs::write(&mut self.e, loc.reg(), R1);
    }

    /// After a read helper (r0 = its result): fault with the address in `addr` unless the
    /// read succeeded.
    pub(crate) fn fault_if_negative(&mut self, addr: VReg) {
        let ok = self.e.label();
        self.e.jmp_imm(BPF_JSGE, R0, 0, ok);
        let bad = regs::read(&mut self.e, addr, R1);
        self.fault(Fault::BadAddr, Some(bad));
        self.e.bind(ok);
    }

    /// Replace the address in `reg` by a scratch string holding the NUL-terminated string
    /// there (at most `len` bytes with the NUL); an unreadable address faults.
    pub(crate) fn read_string(&mut self, reg: VReg, len: u32, user: bool) -> Result<()> {
        let buf = self.string_buffer(false);
        self.scratch_addr(R1, buf);
        self.e.emit(Insn::mov64_imm(R2, len.max(1) as i32));
        regs::read_into(&mut self.e, reg, R3);
        if user {
            crate::sleepable::read_user_str(&mut self.e);
        } else {
            self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
        }
        self.fault_if_negative(reg);
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, reg, R1);
        Ok(())
    }

    /// The address of `p` as a value of `ty`.
    pub(crate) fn address(&mut self, p: &Place, ty: &Type, span: Span) -> Result<Val> {
        let loc = self.locate(p, false, span)?;
        if let Loc::Direct(reg) = loc {
            // D pointers are numbers: stored through a map value, the verifier's pointer
            // into D storage reads back as one, so it may be compared, subtracted and
            // stored like any other address.
            let slot = self.scratch(8);
            let at = self.small(slot);
            let r = regs::read(&mut self.e, reg, R1);
            self.e.emit(Insn::stx(Size::DW, SCRATCH, at, r));
            self.e.emit(Insn::ldx(Size::DW, R1, SCRATCH, at));
            regs::write(&mut self.e, reg, R1);
        }
        Ok(Val {
            reg: loc.reg(),
            ty: ty.clone(),
        })
    }

    /// Store `val` (of the place's type) into `p`; `val` keeps the stored value.
    /// For a whole dynamic variable (a thread-local, an associative array element): its
    /// key built, a pointer to it in r2, and its map. None for other places.
    fn dynamic_key(&mut self, p: &Place) -> Result<Option<MapId>> {
        // A whole dynamic variable (not its first member, also at offset 0).
        let declared = match &p.base {
            PlaceBase::Thread(id) => Some(&self.c.prog.thread_vars[*id].ty),
            PlaceBase::Assoc { var, .. } => Some(&self.c.prog.assocs[*var].value),
            _ => None,
        };
        if !whole(p) || declared.is_some_and(|t| *t != p.ty) {
            return Ok(None);
        }
        match &p.base {
            PlaceBase::Thread(id) => {
                let map = self.c.thread_map(*id);
                self.thread_key();
                self.e.emit(Insn::mov64_reg(R2, R10));
                self.e.emit(Insn::alu64_imm(BPF_ADD, R2, KEY_SLOT as i32));
                Ok(Some(map))
            }
            PlaceBase::Assoc { var, keys } => {
                let map = self.c.assoc_map(*var);
                let key = self.build_key(keys, *var)?;
                self.scratch_addr(R2, key);
                Ok(Some(map))
            }
            _ => Ok(None),
        }
    }

    /// Remove the dynamic variable `p` names from storage (`x = 0` on a struct, union,
    /// array or string dynamic variable); its value, 0.
    pub(crate) fn delete(&mut self, p: &Place, span: Span) -> Result<Val> {
        let Some(map) = self.dynamic_key(p)? else {
            return Err(super::expr::untyped(
                "deleting a non-dynamic variable",
                span,
            ));
        };
        self.e.ld_map(R1, map);
        self.e.emit(Insn::call(helpers::MAP_DELETE_ELEM));
        self.give_back_if_deleted();
        self.constant(0, crate::types::INT, span)
    }

    pub(crate) fn store(&mut self, p: &Place, val: &Val, span: Span) -> Result<()> {
        if let PlaceBase::Thread(id) = p.base {
            if self.in_task_storage(id) {
                return self.store_task_var(id, val);
            }
        }
        if let Some(map) = self.dynamic_key(p)? {
            return self.update_or_delete(map, val, span);
        }
        let loc = self.locate(p, true, span)?;
        let dst = match loc {
            Loc::Direct(r) => r,
            Loc::Memory { reg, .. } => {
                self.scratch_pointer_of(reg, store_size(p, self.strsize()))?;
                reg
            }
        };
        match (&p.ty, p.bitfield) {
            (Type::String, _) => {
                // NULL is stored as its mark; a string is copied (an unreadable one
                // faults) over a cleared mark. As in DTrace, the assignment's value is
                // the storage (NULL stored reads there as "").
                let (null, done) = (self.e.label(), self.e.label());
                let v = regs::read(&mut self.e, val.reg, R1);
                self.e.jmp_imm(BPF_JEQ, v, 0, null);
                let ptr = regs::read(&mut self.e, dst, R1);
                self.e.emit(Insn::st(Size::H, ptr, 0, 0));
                self.copy_into(dst, val, self.strsize(), true);
                self.fault_if_negative(val.reg);
                self.e.goto(done);
                self.e.bind(null);
                let ptr = regs::read(&mut self.e, dst, R1);
                self.e.emit(Insn::st(Size::H, ptr, 0, NULL_STRING_MARK));
                self.e.bind(done);
                regs::read_into(&mut self.e, dst, R1);
                regs::write(&mut self.e, val.reg, R1);
            }
            (Type::Array(elem, len), _) if elem.is_char() => self.copy_into(dst, val, *len, true),
            (Type::Struct(_) | Type::Array(..), _) => {
                self.copy_into(dst, val, p.ty.size() as u32, false)
            }
            (_, Some((bit, width))) => {
                // Read-modify-write the bytes holding the field.
                let bytes = (bit as usize + width as usize).div_ceil(8).clamp(1, 8);
                let ptr = regs::read(&mut self.e, dst, R1);
                self.e.emit(Insn::mov64_reg(R5, ptr));
                self.e.emit(Insn::mov64_imm(R0, 0));
                for i in 0..bytes {
                    self.e.emit(Insn::ldx(Size::B, R2, R5, i as i16));
                    self.e.emit(Insn::alu64_imm(BPF_LSH, R2, i as i32 * 8));
                    self.e.emit(Insn::alu64_reg(BPF_OR, R0, R2));
                }
                let mask: u64 = if width >= 64 {
                    u64::MAX
                } else {
                    ((1u64 << width) - 1) << bit
                };
                self.e.mov_const(R3, !mask);
                self.e.emit(Insn::alu64_reg(BPF_AND, R0, R3));
                regs::read_into(&mut self.e, val.reg, R2);
                if bit > 0 {
                    self.e.emit(Insn::alu64_imm(BPF_LSH, R2, bit as i32));
                }
                self.e.mov_const(R3, mask);
                self.e.emit(Insn::alu64_reg(BPF_AND, R2, R3));
                self.e.emit(Insn::alu64_reg(BPF_OR, R0, R2));
                for i in 0..bytes {
                    self.e.emit(Insn::stx(Size::B, R5, i as i16, R0));
                    self.e.emit(Insn::alu64_imm(BPF_RSH, R0, 8));
                }
            }
            _ => {
                let size = if whole_scalar(p) {
                    8
                } else {
                    p.ty.scalar_size().max(1)
                };
                let ptr = regs::read(&mut self.e, dst, R1);
                let r = regs::read(&mut self.e, val.reg, R2);
                self.e.emit(Insn::stx(Size::from_bytes(size), ptr, 0, r));
            }
        }
        self.pop(dst);
        Ok(())
    }

    /// Copy the value `val` points to into the storage at `dst`: a string (up to `len`
    /// bytes with its NUL) or `len` bytes.
    fn copy_into(&mut self, dst: VReg, val: &Val, len: u32, string: bool) {
        regs::read_into(&mut self.e, dst, R1);
        self.e.emit(Insn::mov64_imm(R2, len.max(1) as i32));
        regs::read_into(&mut self.e, val.reg, R3);
        let helper = if string {
            helpers::PROBE_READ_KERNEL_STR
        } else {
            helpers::PROBE_READ_KERNEL
        };
        self.e.emit(Insn::call(helper));
    }

    /// Check that the kernel address in `reg` (and the `size` bytes from it) lies in D
    /// memory a pointer may write: the scratch memory `alloca` or `copyin` handed out in
    /// this firing, a `this->` array or struct, or a global array or struct; and turn it
    /// into a pointer the program may write through. Any other address faults, as DTrace
    /// refuses stores outside its allocations and variables: an invalid size when it
    /// starts inside an allocation but runs past its end, else an invalid address.
    pub(crate) fn scratch_pointer_of(&mut self, reg: VReg, size: u32) -> Result<()> {
        let slot = self.scratch(size.max(8));
        let (in_scratch, in_globals, done) = (self.e.label(), self.e.label(), self.e.label());
        // r1 = the address's offset in the scratch area.
        self.offset_from(R1, reg, SCRATCH, R2);
        let arena = self.arena_allocated();
        let allocations: Vec<(u32, u32)> = self.allocations.iter().copied().chain(arena).collect();
        let mut regions: Vec<(u32, u32)> = allocations
            .iter()
            .copied()
            .filter(|&(_, len)| len >= size)
            .collect();
        let globals = self.writable_globals(size);
        if regions.is_empty() && globals.is_empty() {
            // Nothing can take the store: it faults, but the code after it must stay
            // reachable for the verifier, so this temporary slot (which no D expression
            // points to) stands in as the only region.
            regions.push((slot, size.max(8)));
        }
        self.jump_if_within(&regions, size, in_scratch);
        if !globals.is_empty() {
            // r1 = the address's offset in the globals map value.
            self.e.ld_map_value(R2, self.c.core.globals, 0);
            self.offset_from(R1, reg, R2, R2);
            self.jump_if_within(&globals, size, in_globals);
        }
        // Starting inside an allocation but running past it: an invalid size, as DTrace
        // reports it; anywhere else an invalid address.
        if !allocations.is_empty() {
            let too_big = self.e.label();
            self.offset_from(R1, reg, SCRATCH, R2);
            self.jump_if_within(&allocations, 1, too_big);
            let addr = regs::read(&mut self.e, reg, R1);
            self.fault(Fault::BadAddr, Some(addr));
            self.e.bind(too_big);
            self.e.mov_const(R1, u64::from(size));
            self.fault(Fault::BadSize, Some(R1));
        } else {
            let addr = regs::read(&mut self.e, reg, R1);
            self.fault(Fault::BadAddr, Some(addr));
        }
        if !globals.is_empty() {
            self.e.bind(in_globals);
            self.e.ld_map_value(R3, self.c.core.globals, 0);
            self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R1));
            regs::write(&mut self.e, reg, R3);
            if !regions.is_empty() {
                self.e.goto(done);
            }
        }
        if !regions.is_empty() {
            self.e.bind(in_scratch);
            self.e.emit(Insn::mov64_reg(R3, SCRATCH));
            self.e.emit(Insn::alu64_reg(BPF_ADD, R3, R1));
            regs::write(&mut self.e, reg, R3);
        }
        self.e.bind(done);
        Ok(())
    }

    /// Jump to `to` when the offset in r1 and the `size` bytes from it lie in one of
    /// `regions` (offset, length).
    fn jump_if_within(&mut self, regions: &[(u32, u32)], size: u32, to: Label) {
        for &(off, len) in regions {
            let next = self.e.label();
            self.e.jmp_imm(BPF_JLT, R1, off as i32, next);
            self.e.jmp_imm(BPF_JGT, R1, (off + len - size) as i32, next);
            self.e.goto(to);
            self.e.bind(next);
        }
    }

    /// The global arrays and structs (offset in the globals map, size) that hold `size`
    /// bytes: the globals whose address D code can take.
    fn writable_globals(&self, size: u32) -> Vec<(u32, u32)> {
        let strsize = self.strsize();
        self.c
            .prog
            .globals
            .iter()
            .enumerate()
            .filter(|(_, g)| matches!(g.ty, Type::Array(..) | Type::Struct(_)))
            .map(|(id, g)| {
                (
                    self.c.vars.global_offset(id),
                    super::vars::storage_size(&g.ty, strsize),
                )
            })
            .filter(|&(_, len)| len >= size)
            .collect()
    }

    /// `place op= value` (or `++`/`--`): the new value (the old one with `post`).
    pub(crate) fn update(
        &mut self,
        p: &Place,
        op: ArithOp,
        value: &dtrace_typing::ir::Expr,
        post: bool,
        ty: &Type,
        span: Span,
    ) -> Result<Val> {
        let old = self.load(p, &p.ty, span)?;
        let new = self.push(span)?;
        regs::read_into(&mut self.e, old.reg, R1);
        regs::write(&mut self.e, new, R1);
        let step = self.expr(value)?;
        let newv = Val {
            reg: new,
            ty: ty.clone(),
        };
        self.arith_in_place(op, &newv, &step)?;
        self.pop(step.reg);
        self.store(p, &newv, span)?;
        if !post {
            regs::read_into(&mut self.e, new, R1);
            regs::write(&mut self.e, old.reg, R1);
        }
        self.pop(new);
        Ok(Val {
            reg: old.reg,
            ty: ty.clone(),
        })
    }
}

/// What D storage holds for a NULL string, as its first two bytes (little-endian): a NUL
/// then 0x7f, so the storage reads as "" where it is read as a string, as in Oracle's
/// DTrace (storing a string clears the mark first).
const NULL_STRING_MARK: i32 = 0x7f00;

/// The helper that reads memory of the kernel's (or the process's) address space.
fn read_helper(user: bool) -> i32 {
    if user {
        helpers::PROBE_READ_USER
    } else {
        helpers::PROBE_READ_KERNEL
    }
}

/// The bytes a store into `p` writes.
fn store_size(p: &Place, strsize: u32) -> u32 {
    if let Some((bit, width)) = p.bitfield {
        return (bit as u32 + width as u32).div_ceil(8);
    }
    match &p.ty {
        Type::String => strsize,
        t if t.is_scalar() => t.scalar_size().max(1) as u32,
        t => t.size() as u32,
    }
}

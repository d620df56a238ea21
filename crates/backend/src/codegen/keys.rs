//! How each key of an aggregation's or associative array's tuple is stored in the map's
//! key ([`KeyStore`]), from what the typing pass noted of its uses: a string in a slot as
//! long as the longest string any use stores (so lookups hash and compare only that), a
//! probe name (`probefunc`, ...) as its number in a table of names (in a system call group
//! program, the system call's number itself), which the consumer prints as the name.
//!
//! Only the storage changes: a string is cut where it was (no use stores a longer one),
//! and keys that print alike are one row, as before.

use dtrace_ebpf::*;
use dtrace_frontend::Result;
use dtrace_typing::ir::{self, Builtin, ExprKind, KeyUses};

use super::regs;
use super::{Gen, Val};
use crate::program::{Datum, KeyStore, NameTable, ProbeContext};
use crate::types::{self, Type};

impl KeyStore {
    /// How a key of type `ty` (a stack or symbol when `datum`) is kept, its uses storing
    /// `uses`.
    pub(crate) fn of(
        ty: &Type,
        datum: Option<Datum>,
        uses: Option<&KeyUses>,
        strsize: u32,
    ) -> KeyStore {
        if let Some(d) = datum {
            return KeyStore::Datum(d);
        }
        if !ty.is_string() {
            return KeyStore::Value;
        }
        match uses {
            Some(KeyUses {
                names: Some(names), ..
            }) => KeyStore::Name(std::sync::Arc::new(NameTable::new(names.table()))),
            Some(u) if u.bound > 0 => KeyStore::String(u.bound.min(strsize)),
            _ => KeyStore::String(strsize),
        }
    }

    /// The bytes the key takes in the tuple (a multiple of 8).
    pub(crate) fn size(&self, ty: &Type, strsize: u32) -> u32 {
        match self {
            KeyStore::Value => super::vars::storage_size(ty, strsize).next_multiple_of(8),
            KeyStore::String(bound) => bound.next_multiple_of(8),
            KeyStore::Name(_) => 8,
            KeyStore::Datum(d) => d.size(),
        }
    }
}

/// Whether key `k`, kept as `store`, is written straight into its slot when the key is
/// filled, rather than evaluated first: `execname`, the task's `comm` copied there as two
/// words (no copy of a copy).
pub(crate) fn written_in_place(k: &ir::Expr, store: &KeyStore) -> bool {
    matches!(k.kind, ExprKind::Builtin(Builtin::Execname))
        && matches!(store, KeyStore::String(bound) if *bound >= COMM_SIZE)
}

/// `execname`'s bytes: the kernel's `comm` and its NUL.
const COMM_SIZE: u32 = 16;

impl Gen<'_, '_> {
    /// Write key `k` (one [`written_in_place`]: `execname`) into its slot at `base + off`
    /// (scratch or the frame): the 16 bytes of the current task's `comm`, which the kernel
    /// keeps padded with NULs, loaded through the task's BTF pointer (no helper copying
    /// it); by `bpf_get_current_comm` when the kernel's layout is not known.
    pub(crate) fn write_in_place(&mut self, base: Reg, off: i16) {
        let Some(comm) = self.c.kernel.member_offset("task_struct", "comm") else {
            self.e.emit(Insn::mov64_reg(R1, base));
            if off != 0 {
                self.e.emit(Insn::alu64_imm(BPF_ADD, R1, off.into()));
            }
            self.e.emit(Insn::mov64_imm(R2, COMM_SIZE as i32));
            self.e.emit(Insn::call(helpers::GET_CURRENT_COMM));
            return;
        };
        self.e.emit(Insn::call(helpers::GET_CURRENT_TASK_BTF));
        for word in [0, 8] {
            self.e
                .emit(Insn::ldx(Size::DW, R1, R0, (comm + word) as i16));
            self.e
                .emit(Insn::stx(Size::DW, base, off + word as i16, R1));
        }
    }

    /// The value key `k` stores in a slot kept as `store`: for a probe name, its number
    /// (a `uint64_t`); otherwise the key's value.
    pub(crate) fn key_value(&mut self, k: &ir::Expr, store: &KeyStore) -> Result<Val> {
        let KeyStore::Name(names) = store else {
            return self.expr(k);
        };
        let name = match (&k.kind, &self.probe.context) {
            (ExprKind::Builtin(Builtin::Probefunc), ProbeContext::SyscallGroup(_)) => {
                // The table has each system call's name at its number.
                let slot = self.nr_slot.expect("a group program");
                let v = self.push(k.span)?;
                self.e.emit(Insn::ldx(Size::DW, R1, R10, slot));
                regs::write(&mut self.e, v, R1);
                return Ok(Val {
                    reg: v,
                    ty: types::UINT64,
                });
            }
            (ExprKind::Builtin(Builtin::Probefunc), _) => &self.probe.function,
            (ExprKind::Builtin(Builtin::Probename), _) => &self.probe.name,
            (ExprKind::Builtin(Builtin::Probemod), _) => &self.probe.module,
            (ExprKind::Builtin(Builtin::Probeprov), _) => &self.probe.provider,
            _ => unreachable!("only probe names are kept as names"),
        };
        let index = names
            .number(name)
            .expect("the typing pass noted every name");
        self.constant(index, types::UINT64, k.span)
    }
}

//! Expressions: constants, operators on 64-bit registers, conversions, conditionals,
//! assignment, translations. As in DTrace, an integer's register holds the 64-bit result
//! of its operators, not narrowed to its type: casts narrow (those that change a value,
//! `Type::cast_changes`), and so do stores, records and keys, each at its own end.

use dtrace_ebpf::*;
use dtrace_frontend::{CompileError, Result, Span};
use dtrace_typing::ir::{ArithOp, CmpOp, Comparison, Expr, ExprKind, LogicalOp};

use super::regs::{self, VReg, SCRATCH};
use super::{Gen, Val};
use crate::program::Fault;
use crate::types::{self, Type};

/// Emit code that truncates `r` to `ty`'s width and extends it back to 64 bits (with
/// shifts, which every kernel's verifier takes; sign-extending moves need 6.6).
pub fn normalize(e: &mut crate::emit::Emitter, r: Reg, ty: &Type) {
    let (size, signed) = match ty {
        Type::Int { size, signed, .. } => (*size as i32, *signed),
        _ => return,
    };
    match (size, signed) {
        (8, _) => {}
        (4, false) => e.emit(Insn::alu32_reg(BPF_MOV, r, r)),
        (s, true) => sign_extend(e, r, s),
        (s, false) => e.emit(Insn::alu64_imm(BPF_AND, r, (1i32 << (s * 8)) - 1)),
    }
}

/// Emit code that sign-extends the low `bytes` bytes of `r` to 64 bits: a shift pair, which
/// every kernel's verifier takes (`movsx` needs 6.6).
pub fn sign_extend(e: &mut crate::emit::Emitter, r: Reg, bytes: i32) {
    e.emit(Insn::alu64_imm(BPF_LSH, r, 64 - bytes * 8));
    e.emit(Insn::alu64_imm(BPF_ARSH, r, 64 - bytes * 8));
}

/// An internal error: the typing pass guarantees code generation never meets this.
pub(crate) fn untyped(what: &str, span: Span) -> CompileError {
    CompileError::new(
        "D_UNKNOWN",
        format!("internal error: {what} reached code generation"),
        span,
    )
}

impl Gen<'_, '_> {
    /// Evaluate `e` into a new virtual register.
    pub(crate) fn expr(&mut self, e: &Expr) -> Result<Val> {
        let span = e.span;
        match &e.kind {
            ExprKind::Int(v) => self.constant(*v, e.ty.clone(), span),
            ExprKind::Str(s) => self.string_literal(s, span),
            ExprKind::Load(p) => self.load(p, &e.ty, span),
            ExprKind::AddrOf(p) => self.address(p, &e.ty, span),
            ExprKind::Builtin(b) => self.builtin(*b, &e.ty, span),
            ExprKind::PercpuVariable(id) => self.percpu_variable(*id, &e.ty, span),
            ExprKind::Arg(n) => self.arg(*n, span),
            ExprKind::ProbeArg(n) => self.probe_arg(*n, &e.ty, span),
            ExprKind::Entry(field) => self.entry_value(*field, e, span),
            ExprKind::InBase(inner) => self.in_base(|g| g.expr(inner)),
            ExprKind::Convert(inner) => {
                let v = self.expr(inner)?;
                self.convert(&v, &e.ty);
                Ok(Val {
                    reg: v.reg,
                    ty: e.ty.clone(),
                })
            }
            ExprKind::Neg(inner) | ExprKind::BitNot(inner) => {
                let v = self.expr(inner)?;
                let r = regs::read(&mut self.e, v.reg, R1);
                if matches!(e.kind, ExprKind::Neg(_)) {
                    self.e.emit(Insn::alu64_imm(BPF_NEG, r, 0));
                } else {
                    self.e.emit(Insn::alu64_imm(BPF_XOR, r, -1));
                }
                regs::write(&mut self.e, v.reg, r);
                Ok(Val {
                    reg: v.reg,
                    ty: e.ty.clone(),
                })
            }
            ExprKind::Not(inner) => {
                let v = self.expr(inner)?;
                let r = self.truth(&v, R1);
                self.set_bool(v.reg, BPF_JEQ, r, None);
                Ok(Val {
                    reg: v.reg,
                    ty: types::INT,
                })
            }
            ExprKind::Arith { op, lhs, rhs } => {
                let a = self.expr(lhs)?;
                let b = self.expr(rhs)?;
                let out = Val {
                    reg: a.reg,
                    ty: e.ty.clone(),
                };
                self.arith_in_place(*op, &out, &b)?;
                self.pop(b.reg);
                Ok(out)
            }
            ExprKind::Compare { op, how, lhs, rhs } => {
                let a = self.expr(lhs)?;
                let b = self.expr(rhs)?;
                // A string literal's bytes end where the comparison is decided at the
                // latest.
                let decided_by = [lhs, rhs]
                    .iter()
                    .filter_map(|x| match &x.kind {
                        ExprKind::Str(s) => Some(s.len()),
                        _ => None,
                    })
                    .min();
                let v = self.compare(*op, *how, &a, &b, decided_by)?;
                self.pop(b.reg);
                Ok(v)
            }
            ExprKind::Logical { op, lhs, rhs } => self.logical(*op, lhs, rhs),
            ExprKind::Cond {
                cond,
                then,
                otherwise,
            } => self.conditional(cond, then, otherwise, &e.ty),
            ExprKind::Comma(a, b) => {
                let v = self.expr(a)?;
                self.pop(v.reg);
                self.expr(b)
            }
            ExprKind::Assign { place, value } => {
                let v = self.expr(value)?;
                self.store(place, &v, span)?;
                Ok(Val {
                    reg: v.reg,
                    ty: e.ty.clone(),
                })
            }
            ExprKind::Delete(place) => self.delete(place, span),
            ExprKind::Update {
                place,
                op,
                value,
                post,
            } => self.update(place, *op, value, *post, &e.ty, span),
            ExprKind::Call(subr, args) => self.call(*subr, args, &e.ty, span),
            ExprKind::CheckIndex { index, len } => {
                let v = self.expr(index)?;
                let r = regs::read(&mut self.e, v.reg, R1);
                let ok = self.e.label();
                if *len <= i32::MAX as u64 {
                    self.e.jmp_imm(BPF_JLT, r, *len as i32, ok);
                } else {
                    self.e.mov_const(R2, *len);
                    self.e.jmp_reg(BPF_JLT, r, R2, ok);
                }
                let bad = regs::read(&mut self.e, v.reg, R1);
                self.fault(Fault::BadIndex, Some(bad));
                self.e.bind(ok);
                Ok(v)
            }
            ExprKind::Stringof(inner) => {
                let v = self.expr(inner)?;
                let size = self.strsize();
                self.read_string(v.reg, size, false)?;
                Ok(Val {
                    reg: v.reg,
                    ty: Type::String,
                })
            }
            ExprKind::Let { id, value, body } => {
                let v = self.expr(value)?;
                self.binds.insert(*id, v.reg);
                let r = self.expr(body)?;
                self.binds.remove(id);
                let x = regs::read(&mut self.e, r.reg, R1);
                regs::write(&mut self.e, v.reg, x);
                self.pop(r.reg);
                Ok(Val {
                    reg: v.reg,
                    ty: r.ty,
                })
            }
            ExprKind::Bound(id) => {
                let from = *self
                    .binds
                    .get(id)
                    .ok_or_else(|| untyped("an unbound translator input", span))?;
                let v = self.push(span)?;
                let r = regs::read(&mut self.e, from, R1);
                regs::write(&mut self.e, v, r);
                Ok(Val {
                    reg: v,
                    ty: e.ty.clone(),
                })
            }
            ExprKind::Build { size, members } => self.build(*size, members, &e.ty, span),
            ExprKind::Datum(..) => Err(untyped("a symbol datum as a value", span)),
            ExprKind::Void(_) => Err(untyped("an action as a value", span)),
            ExprKind::AggRef(_) => Err(untyped("an aggregation as a value", span)),
        }
    }

    pub(crate) fn constant(&mut self, value: u64, ty: Type, span: Span) -> Result<Val> {
        let v = self.push(span)?;
        self.e.mov_const(R1, value);
        regs::write(&mut self.e, v, R1);
        Ok(Val { reg: v, ty })
    }

    pub(crate) fn string_literal(&mut self, s: &[u8], span: Span) -> Result<Val> {
        let off = self.c.rodata_bytes(s);
        let v = self.push(span)?;
        self.e.ld_map_value(R1, self.c.core.rodata, off);
        regs::write(&mut self.e, v, R1);
        Ok(Val {
            reg: v,
            ty: Type::String,
        })
    }

    /// Convert the value in `v` to `to` in place, as DTrace casts (integers truncated and
    /// extended where the cast changes them).
    pub(crate) fn convert(&mut self, v: &Val, to: &Type) {
        if matches!(v.ty, Type::Ptr(_)) && to.is_integer() {
            self.address_as_number(v);
        }
        if v.ty.cast_changes(to) {
            let r = regs::read(&mut self.e, v.reg, R1);
            normalize(&mut self.e, r, to);
            regs::write(&mut self.e, v.reg, r);
        }
    }

    /// Make the pointer `v` a plain number: copied through scratch memory by a helper, so
    /// the verifier no longer tracks it as a pointer (an address of D's own storage, such
    /// as `alloca` memory or a translated struct, is one it refuses to shift or mask).
    fn address_as_number(&mut self, v: &Val) {
        let src = self.scratch(8);
        let dst = self.scratch(8);
        let r = regs::read(&mut self.e, v.reg, R1);
        self.e
            .emit(Insn::stx(Size::DW, SCRATCH, self.small(src), r));
        self.scratch_addr(R1, dst);
        self.e.emit(Insn::mov64_imm(R2, 8));
        self.scratch_addr(R3, src);
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
        self.e
            .emit(Insn::ldx(Size::DW, R1, SCRATCH, self.small(dst)));
        regs::write(&mut self.e, v.reg, R1);
    }

    /// The register holding `v`'s truth (non-zero when true): a scalar, or a string's
    /// address (true unless NULL), as DTrace tests them.
    pub(crate) fn truth(&mut self, v: &Val, tmp: Reg) -> Reg {
        regs::read(&mut self.e, v.reg, tmp)
    }

    /// Write 1 to `dst` if `a op b` (or `a op 0` when `b` is None), else 0.
    pub(crate) fn set_bool(&mut self, dst: VReg, op: u8, a: Reg, b: Option<Reg>) {
        let yes = self.e.label();
        let done = self.e.label();
        match b {
            Some(b) => self.e.jmp_reg(op, a, b, yes),
            None => self.e.jmp_imm(op, a, 0, yes),
        }
        self.e.emit(Insn::mov64_imm(R0, 0));
        self.e.goto(done);
        self.e.bind(yes);
        self.e.emit(Insn::mov64_imm(R0, 1));
        self.e.bind(done);
        regs::write(&mut self.e, dst, R0);
    }

    /// `a = a op b` on the 64-bit values, signed or not as `a.ty` is (division,
    /// remainder, right shift).
    pub(crate) fn arith_in_place(&mut self, op: ArithOp, a: &Val, b: &Val) -> Result<()> {
        regs::read_into(&mut self.e, a.reg, R1);
        regs::read_into(&mut self.e, b.reg, R2);
        let signed = a.ty.is_signed();
        let alu = match op {
            ArithOp::Add => BPF_ADD,
            ArithOp::Sub => BPF_SUB,
            ArithOp::Mul => BPF_MUL,
            ArithOp::Div => BPF_DIV,
            ArithOp::Mod => BPF_MOD,
            ArithOp::And => BPF_AND,
            ArithOp::Or => BPF_OR,
            ArithOp::Xor => BPF_XOR,
            ArithOp::Shl => BPF_LSH,
            ArithOp::Shr if signed => BPF_ARSH,
            ArithOp::Shr => BPF_RSH,
        };
        if matches!(op, ArithOp::Div | ArithOp::Mod) {
            let ok = self.e.label();
            self.e.jmp_imm(BPF_JNE, R2, 0, ok);
            self.fault(Fault::DivZero, None);
            self.e.bind(ok);
            if signed {
                self.signed_div(alu);
            } else {
                self.e.emit(Insn::alu64_reg(alu, R1, R2));
            }
        } else {
            self.e.emit(Insn::alu64_reg(alu, R1, R2));
        }
        regs::write(&mut self.e, a.reg, R1);
        Ok(())
    }

    /// r1 = r1 / r2 or r1 % r2 (`alu`) as signed values, r2 not 0: the operation on their
    /// magnitudes, negated when exactly one is negative. That is C's truncating quotient,
    /// and DTrace's signed remainder, which takes the quotient's sign (Oracle's tst.moddiv:
    /// -19 % -5 is 4, 19 % -5 is -4). Unsigned operations only: the kernel's signed ones
    /// (cpu v4) came with Linux 6.6. Clobbers r3.
    fn signed_div(&mut self, alu: u8) {
        self.e.emit(Insn::mov64_imm(R3, 0));
        for r in [R1, R2] {
            let positive = self.e.label();
            self.e.jmp_imm(BPF_JSGE, r, 0, positive);
            self.e.emit(Insn::alu64_imm(BPF_NEG, r, 0));
            self.e.emit(Insn::alu64_imm(BPF_XOR, R3, 1));
            self.e.bind(positive);
        }
        self.e.emit(Insn::alu64_reg(alu, R1, R2));
        let done = self.e.label();
        self.e.jmp_imm(BPF_JEQ, R3, 0, done);
        self.e.emit(Insn::alu64_imm(BPF_NEG, R1, 0));
        self.e.bind(done);
    }

    /// A comparison of two evaluated values; the result (int) replaces `a`. Strings are
    /// compared up to byte `decided_by` when that is known (where a literal ends).
    fn compare(
        &mut self,
        op: CmpOp,
        how: Comparison,
        a: &Val,
        b: &Val,
        decided_by: Option<usize>,
    ) -> Result<Val> {
        match how {
            Comparison::Strings => return self.string_compare(op, a, b, decided_by),
            Comparison::StringNull => {
                regs::read_into(&mut self.e, a.reg, R1);
                let jop = if op == CmpOp::Eq { BPF_JEQ } else { BPF_JNE };
                self.set_bool(a.reg, jop, R1, None);
                return Ok(Val {
                    reg: a.reg,
                    ty: types::INT,
                });
            }
            _ => {}
        }
        let signed = how == Comparison::Signed;
        regs::read_into(&mut self.e, a.reg, R1);
        regs::read_into(&mut self.e, b.reg, R2);
        let jop = match (op, signed) {
            (CmpOp::Eq, _) => BPF_JEQ,
            (CmpOp::Ne, _) => BPF_JNE,
            (CmpOp::Lt, true) => BPF_JSLT,
            (CmpOp::Lt, false) => BPF_JLT,
            (CmpOp::Le, true) => BPF_JSLE,
            (CmpOp::Le, false) => BPF_JLE,
            (CmpOp::Gt, true) => BPF_JSGT,
            (CmpOp::Gt, false) => BPF_JGT,
            (CmpOp::Ge, true) => BPF_JSGE,
            (CmpOp::Ge, false) => BPF_JGE,
        };
        self.set_bool(a.reg, jop, R1, Some(R2));
        Ok(Val {
            reg: a.reg,
            ty: types::INT,
        })
    }

    fn logical(&mut self, op: LogicalOp, lhs: &Expr, rhs: &Expr) -> Result<Val> {
        let a = self.expr(lhs)?;
        if op == LogicalOp::Xor {
            // (a != 0) ^ (b != 0)
            let b = self.expr(rhs)?;
            let ra = self.truth(&a, R1);
            self.e.emit(Insn::mov64_reg(R3, ra));
            let rb = self.truth(&b, R2);
            self.e.emit(Insn::mov64_reg(R4, rb));
            self.e.emit(Insn::mov64_imm(R1, 0));
            self.e.emit(Insn::jmp_imm(BPF_JEQ, R3, 0, 1));
            self.e.emit(Insn::mov64_imm(R1, 1));
            self.e.emit(Insn::mov64_imm(R2, 0));
            self.e.emit(Insn::jmp_imm(BPF_JEQ, R4, 0, 1));
            self.e.emit(Insn::mov64_imm(R2, 1));
            self.e.emit(Insn::alu64_reg(BPF_XOR, R1, R2));
            regs::write(&mut self.e, a.reg, R1);
            self.pop(b.reg);
            return Ok(Val {
                reg: a.reg,
                ty: types::INT,
            });
        }
        let short = self.e.label();
        let done = self.e.label();
        let ra = self.truth(&a, R1);
        let short_op = if op == LogicalOp::And {
            BPF_JEQ
        } else {
            BPF_JNE
        };
        self.e.jmp_imm(short_op, ra, 0, short);
        let b = self.expr(rhs)?;
        let rb = self.truth(&b, R1);
        self.pop(b.reg);
        self.e.jmp_imm(short_op, rb, 0, short);
        let (full, cut) = if op == LogicalOp::And { (1, 0) } else { (0, 1) };
        self.e.emit(Insn::mov64_imm(R0, full));
        self.e.goto(done);
        self.e.bind(short);
        self.e.emit(Insn::mov64_imm(R0, cut));
        self.e.bind(done);
        regs::write(&mut self.e, a.reg, R0);
        Ok(Val {
            reg: a.reg,
            ty: types::INT,
        })
    }

    fn conditional(
        &mut self,
        cond: &Expr,
        then: &Expr,
        otherwise: &Expr,
        ty: &Type,
    ) -> Result<Val> {
        let c = self.expr(cond)?;
        let rc = self.truth(&c, R1);
        self.pop(c.reg);
        let else_label = self.e.label();
        let done = self.e.label();
        self.e.jmp_imm(BPF_JEQ, rc, 0, else_label);
        let a = self.expr(then)?;
        self.e.goto(done);
        self.e.bind(else_label);
        self.pop(a.reg);
        let b = self.expr(otherwise)?;
        debug_assert_eq!(a.reg, b.reg);
        self.e.bind(done);
        Ok(Val {
            reg: b.reg,
            ty: ty.clone(),
        })
    }

    /// A struct built in zeroed scratch memory from member values; its address.
    fn build(
        &mut self,
        size: u32,
        members: &[(u32, Type, Expr)],
        ty: &Type,
        span: Span,
    ) -> Result<Val> {
        let size = size.next_multiple_of(8).max(8);
        let buf = self.scratch(size);
        self.zero_scratch(buf, size);
        for (offset, member, value) in members {
            let r = self.expr(value)?;
            // An array or string member holds its characters (a string's, its storage).
            let chars = match member {
                Type::Array(_, len) => Some(*len),
                Type::String => Some(super::vars::storage_size(member, self.strsize())),
                _ => None,
            };
            match (chars, member) {
                (Some(len), _) => {
                    self.scratch_addr(R1, buf + offset);
                    self.e.emit(Insn::mov64_imm(R2, len.max(1) as i32));
                    regs::read_into(&mut self.e, r.reg, R3);
                    self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL_STR));
                }
                (None, other) => {
                    let x = regs::read(&mut self.e, r.reg, R1);
                    let off = self.small(buf + offset);
                    let width = Size::from_bytes(other.scalar_size().max(1));
                    self.e.emit(Insn::stx(width, SCRATCH, off, x));
                }
            }
            self.pop(r.reg);
        }
        let v = self.push(span)?;
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, v, R1);
        Ok(Val {
            reg: v,
            ty: ty.clone(),
        })
    }
}

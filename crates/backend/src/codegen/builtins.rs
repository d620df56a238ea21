//! Built-in variables: `timestamp pid tid execname arg0 probefunc ...`, read from helpers,
//! the probe context, the current task (through BTF offsets) or constants of the probe.

use dtrace_ebpf::*;
use dtrace_frontend::{CompileError, Result, Span};

use super::regs::{self, CTX_SLOT, KEY_SLOT};
use super::{Gen, Val};
use crate::program::ProbeContext;
use crate::types::{self, Type};

const NAMES: &[&str] = &[
    "arg0",
    "arg1",
    "arg2",
    "arg3",
    "arg4",
    "arg5",
    "arg6",
    "arg7",
    "arg8",
    "arg9",
    "timestamp",
    "vtimestamp",
    "walltimestamp",
    "pid",
    "tid",
    "ppid",
    "uid",
    "gid",
    "execname",
    "cpu",
    "probeprov",
    "probemod",
    "probefunc",
    "probename",
    "id",
    "epid",
    "curthread",
    "errno",
];

/// `x86_64` `struct pt_regs` offsets inside `struct bpf_perf_event_data`.
const PT_REGS_IP: i16 = 16 * 8;
const PT_REGS_CS: i16 = 17 * 8;

impl Gen<'_, '_> {
    pub(crate) fn is_builtin(&self, name: &str) -> bool {
        NAMES.contains(&name)
    }

    /// The value of built-in variable, inline or enum constant `name`, or None if `name` is
    /// none of those.
    pub(crate) fn builtin(&mut self, name: &str, span: Span) -> Result<Option<Val>> {
        if let Some(&value) = self.c.enum_constants.get(name) {
            return self.constant(value as u64, types::INT, span).map(Some);
        }
        if let Some((ty, value)) = self.c.inlines.get(name).cloned() {
            return self.inline(name, &ty, &value, span).map(Some);
        }
        if !self.is_builtin(name) {
            return Ok(None);
        }
        if let Some(n) = name.strip_prefix("arg").and_then(|n| n.parse::<i16>().ok()) {
            return self.arg(n, span).map(Some);
        }
        let ty = match name {
            "probeprov" | "probemod" | "probefunc" | "probename" => {
                let text = match name {
                    "probeprov" => self.probe.provider.clone(),
                    "probemod" => self.probe.module.clone(),
                    "probefunc" => self.probe.function.clone(),
                    _ => self.probe.name.clone(),
                };
                return self.string_literal(text.as_bytes(), span).map(Some);
            }
            "id" => {
                return self
                    .constant(self.probe.id as u64, types::UINT, span)
                    .map(Some)
            }
            "epid" => {
                let epid = self.clause_state().epid;
                return self.constant(epid as u64, types::UINT, span).map(Some);
            }
            "errno" => return self.constant(0, types::INT, span).map(Some),
            "execname" => return self.execname(span).map(Some),
            "timestamp" => {
                self.e.emit(Insn::call(helpers::KTIME_GET_NS));
                types::UINT64
            }
            "walltimestamp" => {
                self.e.emit(Insn::call(helpers::KTIME_GET_NS));
                self.e.mov_const(R1, self.c.opts.wall_offset);
                self.e.emit(Insn::alu64_reg(BPF_ADD, R0, R1));
                types::INT64
            }
            "vtimestamp" => {
                self.task_member("task_struct", "se.sum_exec_runtime", 8, span)?;
                types::UINT64
            }
            "pid" | "tid" => {
                self.e.emit(Insn::call(helpers::GET_CURRENT_PID_TGID));
                if name == "pid" {
                    self.e.emit(Insn::alu64_imm(BPF_RSH, R0, 32));
                    types::builtin_typedef("pid_t").expect("pid_t")
                } else {
                    self.e.emit(Insn::alu32_reg(BPF_MOV, R0, R0));
                    types::builtin_typedef("id_t").expect("id_t")
                }
            }
            "ppid" => {
                self.task_member("task_struct", "real_parent", 8, span)?;
                let off = self.member_offset("task_struct", "tgid", span)?;
                self.read_kernel(R0, off, 4);
                self.e.emit(Insn::movsx64(R0, R0, 32));
                types::builtin_typedef("pid_t").expect("pid_t")
            }
            "uid" | "gid" => {
                self.e.emit(Insn::call(helpers::GET_CURRENT_UID_GID));
                if name == "gid" {
                    self.e.emit(Insn::alu64_imm(BPF_RSH, R0, 32));
                } else {
                    self.e.emit(Insn::alu32_reg(BPF_MOV, R0, R0));
                }
                types::builtin_typedef(if name == "uid" { "uid_t" } else { "gid_t" })
                    .expect("uid_t")
            }
            "cpu" => {
                self.e.emit(Insn::call(helpers::GET_SMP_PROCESSOR_ID));
                types::builtin_typedef("processorid_t").expect("processorid_t")
            }
            "curthread" => {
                self.e.emit(Insn::call(helpers::GET_CURRENT_TASK));
                Type::Ptr(Box::new(
                    types::builtin_typedef("uintptr_t").expect("uintptr_t"),
                ))
            }
            _ => unreachable!("every name in NAMES is handled"),
        };
        let v = self.push(span)?;
        regs::write(&mut self.e, v, R0);
        Ok(Some(Val { reg: v, ty }))
    }

    /// The value of an `inline`, converted to its declared type.
    fn inline(
        &mut self,
        name: &str,
        ty: &Type,
        value: &dtrace_frontend::ast::Expr,
        span: Span,
    ) -> Result<Val> {
        if self.c.expanding.iter().any(|n| n == name) {
            return Err(CompileError::new(
                "D_IDENT_UNDEF",
                format!("inline {name} is defined in terms of itself"),
                span,
            ));
        }
        self.c.expanding.push(name.to_string());
        let v = self.expr(value);
        self.c.expanding.pop();
        let v = v?;
        if v.ty.is_string() != ty.is_string() {
            return Err(CompileError::new(
                "D_OP_INCOMPAT",
                format!(
                    "inline {name} is declared {ty} but its value has type {}",
                    v.ty
                ),
                span,
            ));
        }
        self.convert(&v, ty);
        Ok(Val {
            reg: v.reg,
            ty: ty.clone(),
        })
    }

    fn member_offset(&self, strukt: &str, path: &str, span: Span) -> Result<i32> {
        self.c
            .kernel
            .member_offset(strukt, path)
            .map(|o| o as i32)
            .ok_or_else(|| {
                CompileError::new(
                    "D_UNKNOWN",
                    format!("kernel type information lacks struct {strukt} member {path}"),
                    span,
                )
            })
    }

    /// r0 = `size` bytes of the current task at member `path`.
    fn task_member(&mut self, strukt: &str, path: &str, size: i32, span: Span) -> Result<()> {
        let off = self.member_offset(strukt, path, span)?;
        self.e.emit(Insn::call(helpers::GET_CURRENT_TASK));
        self.read_kernel(R0, off, size);
        Ok(())
    }

    /// r0 = `size` bytes of kernel memory at `base + off` (0 if unreadable).
    fn read_kernel(&mut self, base: Reg, off: i32, size: i32) {
        self.e.emit(Insn::mov64_reg(R3, base));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R3, off));
        self.e.emit(Insn::st(Size::DW, R10, KEY_SLOT, 0));
        self.e.emit(Insn::mov64_reg(R1, R10));
        self.e.emit(Insn::alu64_imm(BPF_ADD, R1, KEY_SLOT as i32));
        self.e.emit(Insn::mov64_imm(R2, size));
        self.e.emit(Insn::call(helpers::PROBE_READ_KERNEL));
        self.e.emit(Insn::ldx(
            Size::from_bytes(size as usize),
            R0,
            R10,
            KEY_SLOT,
        ));
    }

    fn execname(&mut self, span: Span) -> Result<Val> {
        let buf = self.string_buffer(false);
        self.scratch_addr(R1, buf);
        self.e.emit(Insn::mov64_imm(R2, 16));
        self.e.emit(Insn::call(helpers::GET_CURRENT_COMM));
        let v = self.push(span)?;
        self.scratch_addr(R1, buf);
        regs::write(&mut self.e, v, R1);
        Ok(Val {
            reg: v,
            ty: Type::String,
        })
    }

    /// `argN` of the probe.
    fn arg(&mut self, n: i16, span: Span) -> Result<Val> {
        self.e.emit(Insn::ldx(Size::DW, R1, R10, CTX_SLOT));
        match self.probe.context {
            ProbeContext::ArgArray => {
                self.e.emit(Insn::ldx(Size::DW, R0, R1, n * 8));
            }
            ProbeContext::PerfEvent => {
                // arg0: the kernel PC when the sample hit the kernel; arg1: the user PC.
                self.e.emit(Insn::mov64_imm(R0, 0));
                if n <= 1 {
                    self.e.emit(Insn::ldx(Size::DW, R2, R1, PT_REGS_CS));
                    self.e.emit(Insn::alu64_imm(BPF_AND, R2, 3));
                    let skip_if = if n == 0 { BPF_JNE } else { BPF_JEQ };
                    self.e.emit(Insn::jmp_imm(skip_if, R2, 0, 1));
                    self.e.emit(Insn::ldx(Size::DW, R0, R1, PT_REGS_IP));
                }
            }
        }
        let v = self.push(span)?;
        regs::write(&mut self.e, v, R0);
        Ok(Val {
            reg: v,
            ty: types::INT64,
        })
    }
}

//! The eBPF instruction set: opcodes, instruction encoding and a disassembler.
//!
//! Written by hand rather than taken from a crate: the few crates that encode
//! eBPF are either tied to a loader (aya) or unmaintained, and the encoding is
//! a page of constants. The back end builds [`Insn`]s with the constructors
//! here; the runtime hands them to the kernel as raw `struct bpf_insn`.

pub mod disasm;
pub mod helpers;
mod insn;

pub use insn::*;

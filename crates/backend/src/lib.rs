//! D back end: semantic analysis, types and eBPF code generation for D clauses.
//!
//! [`codegen::compile`] turns a parsed program and the probes each clause is enabled on
//! into a [`program::Compiled`]: maps, one program per probe, and the record and
//! aggregation descriptions the consumer decodes with.

pub mod codegen;
mod describe;
pub mod emit;
pub mod program;
pub mod signals;
pub use dtrace_abi::slots;
pub mod types;

pub use codegen::FormatCheck;
pub use codegen::{compile, CodegenOptions, Input, KernelLayout, MacroArgs};

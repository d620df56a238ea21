//! D back end: eBPF code generation for the typed IR of a D program.
//!
//! [`codegen::compile`] turns a typed program (the typing pass's output, where each clause
//! lists the probes it is enabled on) into a [`program::Compiled`]: maps, one program per
//! probe, and the record and aggregation descriptions the consumer decodes with.

pub mod codegen;
mod describe;
pub mod emit;
pub mod program;
pub mod sleepable;
pub mod space;
pub use dtrace_abi::slots;
pub use dtrace_typing::{signals, types};

pub use codegen::{compile, CodegenOptions, Input, KernelLayout};

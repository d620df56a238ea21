//! Kernel interface: bpf(2) maps, programs, links, perf events and the ring buffer.
//!
//! This is the only crate that talks to the kernel. Everything it hands out owns its file
//! descriptors, so dropping it (or the process dying) releases the kernel objects and
//! detaches programs. Errors carry the errno and what was being attempted; a program the
//! verifier rejects comes back as [`Error::Verifier`] with the log.

mod btf_blob;
pub mod cpus;
mod error;
mod funcs;
mod guardian;
pub mod kprobe;
mod link;
mod map;
mod perf;
pub mod pin;
mod prog;
mod ringbuf;
mod rlimit;
pub mod sys;
pub mod tracefs;
pub mod uprobe;

pub use error::{errno_text, Error, Result};
pub use guardian::Guardian;
pub use link::Link;
pub use map::{Keys, Map, MapSpec, MapType, PercpuVisitor, Update};
pub use perf::{Counter, PerfEvent, Sampling};
pub use prog::{AttachType, Program, ProgramSpec, ProgramType};
pub use prog::{
    LOG_MAX as VERIFIER_LOG_MAX, LOG_SIZE_MAX as VERIFIER_LOG_SIZE_MAX,
    LOG_SIZE_MIN as VERIFIER_LOG_SIZE_MIN,
};
pub use ringbuf::RingBuf;
#[cfg(test)]
mod testutil;

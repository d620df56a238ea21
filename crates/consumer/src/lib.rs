//! Consumer: the kernel's bytes in, DTrace's output out, with no kernel access.
//!
//! The side that owns the kernel objects hands a [`Consumer`] raw bytes — ring-buffer
//! records, aggregation map entries (through [`AggregationMaps`]), drop counters — and the
//! program's description from the record ABI (`dtrace_abi::desc::ProgramDesc`). The
//! consumer decodes them (`decode.rs`), symbolizes addresses ([`symbolize`]), merges and
//! sorts aggregations ([`aggregate`]), formats `printf()` ([`printf`]) and drives an
//! [`Output`]: DTrace's text ([`output::Text`]) or JSON lines ([`output::Json`]).

pub mod aggregate;
mod cfmt;
mod consumer;
mod decode;
mod flow;
pub mod messages;
pub mod output;
pub mod policy;
pub mod print;
pub mod printf;
pub mod prometheus;
pub mod settings;
mod speculations;
pub mod symbolize;
pub mod trace;
mod unwind;
mod value;

pub use aggregate::{AggregationMaps, EntryVisitor};
pub use consumer::{Consumer, Effects};
pub use output::Output;
pub use settings::Settings;
pub use value::{Frame, Place, Value};

//! Consumer: record decoding, aggregation merging and DTrace output formatting.
//!
//! Everything here is pure formatting: functions take decoded data and return
//! the exact text DTrace prints, leaving I/O to the caller.

pub mod aggregate;
mod cfmt;
pub mod messages;
pub mod printf;
pub mod symbolize;
pub mod trace;
mod value;

pub use value::Value;

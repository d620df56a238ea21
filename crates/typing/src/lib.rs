//! The typing pass ("cooking", as DTrace calls it) and what it works with: D's types and
//! the kernel's from BTF ([`types`]), how each probe presents its arguments ([`probe`]),
//! and Linux's signal numbers for D's `SIG*` constants ([`signals`]).

pub mod builtins;
pub mod cook;
pub mod format;
pub mod ir;
pub mod macros;
pub mod probe;
pub mod signals;
pub mod types;

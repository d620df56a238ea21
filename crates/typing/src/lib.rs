//! The typing pass ("cooking", as DTrace calls it) and what it works with: D's types and
//! the kernel's from BTF ([`types`]), how each probe presents its arguments ([`probe`]),
//! Linux's signal numbers for D's `SIG*` constants ([`signals`]) and the registers of
//! `uregs[]` ([`regs`]).

pub mod builtins;
pub mod cook;
pub mod format;
pub mod ir;
pub mod macros;
pub mod probe;
pub mod regs;
pub mod signals;
pub mod types;

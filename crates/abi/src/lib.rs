//! The record ABI shared by code generation and the consumer: what a program writes and
//! how the consumer reads it (data the consumer symbolizes, aggregation slot layouts).

pub mod datum;
pub mod slots;

//! Support for the integer-expression property tests (`tests/int_expressions.rs`): the
//! reference evaluator ([`eval`]) and the random expression generator ([`gen`]).

pub mod eval;
pub mod gen;

//! D back end: semantic analysis, types and eBPF code generation for D clauses.

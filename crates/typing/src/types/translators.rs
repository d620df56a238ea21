//! The translator definitions of one compilation, handed to the code generator by the
//! caller: `translator psinfo_t < struct task_struct *T > { pr_pid = T->tgid; ... };`.
//!
//! The caller hands the D library's translators and the program's own to the code
//! generator (`Input::translators` of the back end). A program's translators are
//! checked eagerly, as DTrace checks a definition (output a struct, members of it, no
//! duplicate); a library's only when an `xlate` uses them, so a library translating
//! `struct task_struct` does not make every script read kernel BTF.

use dtrace_frontend::ast::Translator;

/// One translator definition and whether to check it even if no `xlate` uses it.
#[derive(Clone, Debug)]
pub struct Provided {
    pub def: Translator,
    pub eager: bool,
}

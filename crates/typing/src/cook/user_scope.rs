//! User types by scope (docs/USER-TYPES.md): which traced object a scoped type name
//! names (`struct a.out`rec`, `libc.so.6`FILE`, `struct /opt/app/prog`rec`), the unscoped
//! tags a clause of an object's probe reaches in its DWARF, and DTrace's error for a scope
//! no object has. `Cook::resolve_type` asks these before the kernel's types.

use std::path::{Path, PathBuf};

use dtrace_frontend::ast::TypeSpec;
use dtrace_frontend::{CompileError, Span};

use super::decl::struct_word;
use super::Cook;
use crate::probe::ProbeContext;
use crate::types::kernel::Tag;
use crate::types::{user, Type};

/// The scoped or unscoped name a type specifier names (`a.out`point` of `struct
/// a.out`point`), if it names one.
pub(super) fn scoped_name(spec: &TypeSpec) -> Option<&str> {
    match spec {
        TypeSpec::Named { name, .. } => Some(name),
        TypeSpec::Struct { name, .. } | TypeSpec::Enum { name, .. } => name.as_deref(),
        TypeSpec::Builtin { .. } => None,
    }
}

impl Cook<'_> {
    /// DTrace's error for a type scoped by an object name no object has (`a.out` without a
    /// process, `libfoo.so`, a path to no file): a scope with a dot, a slash, `-` or `+`
    /// names no kernel module.
    pub(super) fn unknown_user_scope(&self, spec: &TypeSpec, span: Span) -> Option<CompileError> {
        let name = scoped_name(spec)?;
        let (scope, _) = name.rsplit_once('`')?;
        if !scope.contains(['.', '/', '-', '+']) || self.user_scoped(name).is_some() {
            return None;
        }
        let shown = match spec {
            TypeSpec::Struct { union, .. } => format!("{} {name}", struct_word(*union)),
            TypeSpec::Enum { .. } => format!("enum {name}"),
            _ => name.to_string(),
        };
        let why = if scope.contains('/') {
            format!("{scope} is no file")
        } else {
            format!("{scope} is no object of a -c or -p process, nor the module of this clause's pid probe")
        };
        Some(CompileError::new(
            "D_UNKNOWN",
            format!("failed to resolve type {shown} : Unknown module name ({why})"),
            span,
        ))
    }

    /// The object a scoped type name's scope names (`a.out`point`, `libc.so.6`FILE`),
    /// if it names a user object: the one of the clause's `pid` probe, when its module or
    /// file name is the scope, else one the command line gave that name
    /// ([`user::set_scopes`]), else the file a path names. Any other scope is a kernel
    /// module's.
    pub(super) fn user_scoped(&self, name: &str) -> Option<PathBuf> {
        let (scope, _) = name.rsplit_once('`')?;
        if let (Some(object), site) = (self.clause_object(), self.site()) {
            if site.module == scope || object.file_name().is_some_and(|f| f == scope) {
                return Some(object.to_path_buf());
            }
        }
        // A path names its file (`struct /opt/app/prog`rec`).
        user::scope(scope).or_else(|| {
            let path = std::fs::canonicalize(scope)
                .ok()
                .filter(|_| scope.contains('/'))?;
            path.is_file().then_some(path)
        })
    }

    /// The object whose DWARF types the `args[]` of the clause's `pid` probe, or the
    /// types a USDT probe's declared arguments name.
    fn clause_object(&self) -> Option<&Path> {
        match &self.site().context {
            ProbeContext::Uprobe(u) => u.object.as_deref(),
            ProbeContext::Mapped(m) => match &*m.base {
                ProbeContext::Uprobe(u) => u.object.as_deref(),
                _ => None,
            },
            _ => None,
        }
    }

    /// An unscoped type name neither D nor the kernel defines, as the DWARF of the object
    /// of the clause's `pid` probe defines it.
    pub(super) fn clause_user_type(&self, tag: Tag, name: &str) -> Option<Type> {
        user::named(self.clause_object()?, tag, name)
    }
}

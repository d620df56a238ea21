//! The names a program defines as it is typed: variables of every scope (whose types
//! [`ir::Program`]'s tables hold), aggregations, inlines and enumerators.

use std::collections::HashMap;

use dtrace_frontend::ast;
use dtrace_frontend::Span;

use super::Cook;
use crate::ir::{self, AggId, VarId};
use crate::types::Type;

/// An `inline` with parameters: its value's type, its parameters (names and types) and
/// its value, an expression of them.
#[derive(Clone, Debug)]
pub(crate) struct InlineArray {
    pub ty: Type,
    pub keys: Vec<(String, Type)>,
    pub value: ast::Expr,
}

#[derive(Default)]
pub(crate) struct Scope {
    globals: HashMap<String, VarId>,
    this: HashMap<String, VarId>,
    thread: HashMap<String, VarId>,
    /// Associative arrays: `name`, and `self->name` for thread-local ones.
    assocs: HashMap<String, VarId>,
    aggregations: HashMap<String, AggId>,
    /// Where each aggregation was first assigned (for D_AGG_REDEF).
    pub agg_spans: HashMap<String, Span>,
    /// `inline` definitions: name -> (type, value).
    pub inlines: HashMap<String, (Type, ast::Expr)>,
    /// `inline` definitions with parameters, used as arrays (`inline int f[int x] = ..`).
    pub inline_arrays: HashMap<String, InlineArray>,
    /// Inlines being expanded (to refuse recursive definitions).
    pub expanding: Vec<String>,
    /// Constants of enums the program defines.
    pub enum_constants: HashMap<String, i64>,
    /// The constants of each named enum the program defines, by tag, in order.
    pub enums: HashMap<String, Vec<(String, i64)>>,
}

/// The key of a thread-local associative array `self->name[...]` among the arrays.
fn thread_assoc(name: &str) -> String {
    format!("self->{name}")
}

impl Cook<'_> {
    pub(crate) fn global(&self, name: &str) -> Option<VarId> {
        self.scope.globals.get(name).copied()
    }

    pub(crate) fn new_global(&mut self, name: &str, ty: Type) -> VarId {
        let id = self.prog.globals.len();
        self.prog.globals.push(ir::Variable {
            name: name.to_string(),
            ty,
        });
        self.scope.globals.insert(name.to_string(), id);
        id
    }

    pub(crate) fn this_var(&self, name: &str) -> Option<VarId> {
        self.scope.this.get(name).copied()
    }

    pub(crate) fn new_this(&mut self, name: &str, ty: Type) -> VarId {
        let id = self.prog.this_vars.len();
        self.prog.this_vars.push(ir::Variable {
            name: name.to_string(),
            ty,
        });
        self.scope.this.insert(name.to_string(), id);
        id
    }

    pub(crate) fn thread_var(&self, name: &str) -> Option<VarId> {
        self.scope.thread.get(name).copied()
    }

    pub(crate) fn new_thread(&mut self, name: &str, ty: Type) -> VarId {
        let id = self.prog.thread_vars.len();
        self.prog.thread_vars.push(ir::Variable {
            name: name.to_string(),
            ty,
        });
        self.scope.thread.insert(name.to_string(), id);
        id
    }

    /// The associative array `name` (`self->name` when `thread`).
    pub(crate) fn assoc(&self, name: &str, thread: bool) -> Option<VarId> {
        if thread {
            self.scope.assocs.get(&thread_assoc(name)).copied()
        } else {
            self.scope.assocs.get(name).copied()
        }
    }

    pub(crate) fn new_assoc(
        &mut self,
        name: &str,
        keys: Vec<Type>,
        value: Type,
        thread: bool,
    ) -> VarId {
        let id = self.prog.assocs.len();
        self.prog.assocs.push(ir::Assoc {
            name: name.to_string(),
            keys,
            value,
            thread,
            uses: Vec::new(),
        });
        let key = if thread {
            thread_assoc(name)
        } else {
            name.to_string()
        };
        self.scope.assocs.insert(key, id);
        id
    }

    pub(crate) fn aggregation(&self, name: &str) -> Option<AggId> {
        self.scope.aggregations.get(name).copied()
    }

    pub(crate) fn new_aggregation(&mut self, agg: ir::Aggregation, span: Span) -> AggId {
        let id = self.prog.aggregations.len();
        self.scope.aggregations.insert(agg.name.clone(), id);
        self.scope.agg_spans.insert(agg.name.clone(), span);
        self.prog.aggregations.push(agg);
        id
    }
}

//! DTrace's ordering rules for the actions of one clause: what may follow `speculate()`
//! and `commit()`, and what `speculate()` and `commit()` may follow (`dt_cg_clsflags` in
//! DTrace: a clause is speculative, committing, aggregating or data-recording).

use dtrace_frontend::{CompileError, Result, Span};

use crate::builtins::ActionName;

/// How an action counts for the rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ActionClass {
    Speculate,
    Commit,
    Discard,
    Aggregation,
    Exit,
    /// Destructive and data-recording (`raise`, `stop`, `system`, `freopen`, `chill`,
    /// `copyout`...).
    Destructive,
    /// Data-recording (`trace`, `printf`, `printa`, `stack`, `clear`, `setopt`...).
    Data,
}

impl ActionClass {
    /// The class of an action statement.
    pub(crate) fn of(action: ActionName) -> ActionClass {
        use ActionName::*;
        match action {
            Speculate => ActionClass::Speculate,
            Commit => ActionClass::Commit,
            Discard => ActionClass::Discard,
            Exit => ActionClass::Exit,
            System | Freopen | Raise | Stop | Panic | Chill | Breakpoint | Copyout | Copyoutstr => {
                ActionClass::Destructive
            }
            _ => ActionClass::Data,
        }
    }
}

/// What a clause has done so far.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ClauseFlags {
    speculate: bool,
    commit: bool,
    data: bool,
    aggregation: bool,
}

impl ClauseFlags {
    /// Note an action of `class` at `span`, or DTrace's error for it here.
    pub(crate) fn add(&mut self, class: ActionClass, span: Span) -> Result<()> {
        let fail = |tag: &'static str, message: &str| Err(CompileError::new(tag, message, span));
        match class {
            ActionClass::Commit => {
                if self.data || self.aggregation {
                    return fail(
                        "D_COMM_DREC",
                        "commit( ) may not follow data-recording action(s)",
                    );
                }
                self.commit = true;
            }
            ActionClass::Discard => {}
            ActionClass::Speculate => {
                if self.speculate {
                    return fail("D_SPEC_SPEC", "speculate( ) may not follow speculate( )");
                }
                if self.commit {
                    return fail("D_SPEC_COMM", "speculate( ) may not follow commit( )");
                }
                if self.data || self.aggregation {
                    return fail(
                        "D_SPEC_DREC",
                        "speculate( ) may not follow data-recording action(s)",
                    );
                }
                self.speculate = true;
            }
            ActionClass::Aggregation => {
                if self.commit {
                    return fail("D_AGG_COMM", "aggregating actions may not follow commit( )");
                }
                if self.speculate {
                    return fail(
                        "D_AGG_SPEC",
                        "aggregating actions may not follow speculate( )",
                    );
                }
                self.aggregation = true;
            }
            ActionClass::Exit | ActionClass::Destructive | ActionClass::Data => {
                if self.speculate && class == ActionClass::Destructive {
                    return fail(
                        "D_ACT_SPEC",
                        "destructive actions may not follow speculate( )",
                    );
                }
                if self.speculate && class == ActionClass::Exit {
                    return fail("D_EXIT_SPEC", "exit( ) may not follow speculate( )");
                }
                if self.commit {
                    return fail(
                        "D_DREC_COMM",
                        "data-recording actions may not follow commit( )",
                    );
                }
                self.data = true;
            }
        }
        Ok(())
    }
}

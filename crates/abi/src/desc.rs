//! The description of a compiled D program that the consumer decodes with: which clause on
//! which probe each epid is, what its record holds and what to do with it, and each
//! aggregation's key and value layout.
//!
//! It says nothing of kernel objects (maps, programs): the side that owns them hands the
//! consumer bytes, and the consumer finds their meaning here.

use crate::datum::{Datum, ValueType};
use crate::slots::AggFunc;

/// A compiled program as the consumer sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProgramDesc {
    /// Enabled probes; epid `n` is element `n - 1`.
    pub probes: Vec<EnabledProbe>,
    /// Aggregations, indexed as [`ActionKind::Printa`] and the other aggregation actions
    /// name them, in order of first use.
    pub aggregations: Vec<Aggregation>,
}

impl ProgramDesc {
    /// The enabled probe `epid` names.
    pub fn probe(&self, epid: u32) -> Option<&EnabledProbe> {
        self.probes.get((epid as usize).wrapping_sub(1))
    }

    /// Every datum the program records or keys by (records first).
    pub fn data(&self) -> impl Iterator<Item = &ValueType> {
        let records = self
            .probes
            .iter()
            .flat_map(|p| &p.actions)
            .flat_map(|a| a.data().into_iter().map(|f| &f.ty));
        let keys = self
            .aggregations
            .iter()
            .flat_map(|a| a.keys.iter().map(|k| &k.ty));
        records.chain(keys)
    }

    /// Whether any record or key holds kernel stacks or symbols.
    pub fn has_kernel_data(&self) -> bool {
        self.data()
            .filter_map(ValueType::datum)
            .any(|d: Datum| !d.user())
    }
}

/// A probe: its id and its `provider:module:function:name` tuple.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Probe {
    pub id: u32,
    pub provider: String,
    pub module: String,
    pub function: String,
    pub name: String,
}

impl Probe {
    /// `provider:module:function:name`
    pub fn full_name(&self) -> String {
        format!(
            "{}:{}:{}:{}",
            self.provider, self.module, self.function, self.name
        )
    }
}

/// An enabled probe (a clause on one probe): what its records contain.
#[derive(Clone, Debug, PartialEq)]
pub struct EnabledProbe {
    pub epid: u32,
    pub probe: Probe,
    /// Whether the clause writes a record at all (clauses of only aggregations write none).
    pub records: bool,
    /// DTrace's statement number of the clause (`dt_clause_N` in error messages): clauses
    /// numbered in program order, one per probe description.
    pub statement: u32,
    pub actions: Vec<Action>,
}

/// One action of a clause.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    pub kind: ActionKind,
    /// The bit of the record's presence word that says the action ran, for actions under a
    /// condition.
    pub presence: Option<u32>,
}

impl Action {
    /// Whether the action ran, by the record's presence word.
    pub fn ran(&self, presence: u64) -> bool {
        self.presence.is_none_or(|bit| presence & (1 << bit) != 0)
    }

    /// The data the action records and the user sees (not a speculation's id, nor
    /// `print()`'s object).
    pub fn data(&self) -> Vec<&Field> {
        match &self.kind {
            ActionKind::Trace(f) | ActionKind::Exit(f) => vec![f],
            ActionKind::Printf { args, .. }
            | ActionKind::System { args, .. }
            | ActionKind::Freopen { args, .. } => args.iter().collect(),
            ActionKind::Trunc { count, .. } => count.iter().collect(),
            ActionKind::Normalize { factor, .. } => vec![factor],
            _ => Vec::new(),
        }
    }
}

/// Where one datum is in a record (or key), and what it is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Field {
    pub offset: u32,
    pub ty: ValueType,
}

/// What the consumer does with a record.
#[derive(Clone, Debug, PartialEq)]
pub enum ActionKind {
    /// `trace(e)`, `stack()`, `ustack()`, `trace(func(pc))`...: print the datum.
    Trace(Field),
    /// `print(addr)`: the address (8 bytes at `offset`), then the object's bytes, laid
    /// out as `layout` says (`size` of them recorded: at most the type's size).
    Print {
        offset: u32,
        size: u32,
        layout: ValueType,
    },
    /// `printf(format, args...)`.
    Printf { format: Vec<u8>, args: Vec<Field> },
    /// `printa([format,] @a, ...)`: indices into [`ProgramDesc::aggregations`].
    Printa {
        format: Option<Vec<u8>>,
        aggregations: Vec<usize>,
    },
    /// `exit(status)`: the status is the integer field.
    Exit(Field),
    /// `clear(@a)`.
    Clear(usize),
    /// `trunc(@a)` (`count` None) or `trunc(@a, n)`.
    Trunc {
        aggregation: usize,
        count: Option<Field>,
    },
    /// `normalize(@a, n)`.
    Normalize { aggregation: usize, factor: Field },
    /// `denormalize(@a)`.
    Denormalize(usize),
    /// `setopt(option[, value])`.
    Setopt {
        option: SetoptArg,
        value: Option<SetoptArg>,
    },
    /// `speculate(id)`: a record whose id (the integer field) is not 0 belongs to that
    /// speculation, printed if it is committed.
    Speculate(Field),
    /// `commit(id)`: print speculation `id`'s records (the integer field).
    Commit(Field),
    /// `discard(id)`: drop speculation `id`'s records.
    Discard(Field),
    /// `system(format, args...)`: run the formatted command.
    System { format: Vec<u8>, args: Vec<Field> },
    /// `freopen(format, args...)`: send the output to the formatted path (`""`: back to
    /// the original output).
    Freopen { format: Vec<u8>, args: Vec<Field> },
    /// `ftruncate()`: empty the output file.
    Ftruncate,
}

/// An argument of `setopt()`: a string constant, or a string recorded at run time.
#[derive(Clone, Debug, PartialEq)]
pub enum SetoptArg {
    Text(String),
    Recorded(Field),
}

/// An aggregation: a per-CPU hash map from the key tuple to `slots` u64 slots, laid out as
/// [`crate::slots`] says for its function.
#[derive(Clone, Debug, PartialEq)]
pub struct Aggregation {
    /// Name without `@` (empty for `@`).
    pub name: String,
    pub func: AggFunc,
    /// Key tuple fields, offsets within the map key.
    pub keys: Vec<Field>,
    pub key_size: u32,
    pub slots: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        let probe = Probe {
            id: 1,
            provider: "dtrace".into(),
            name: "BEGIN".into(),
            ..Probe::default()
        };
        assert_eq!(probe.full_name(), "dtrace:::BEGIN");
        let stack = Field {
            offset: 16,
            ty: ValueType::Symbolic(Datum::Stack { frames: 4 }),
        };
        let desc = ProgramDesc {
            probes: vec![EnabledProbe {
                epid: 1,
                probe,
                records: true,
                statement: 0,
                actions: vec![Action {
                    kind: ActionKind::Trace(stack),
                    presence: Some(3),
                }],
            }],
            aggregations: Vec::new(),
        };
        assert_eq!(desc.probe(1).map(|p| p.epid), Some(1));
        assert!(desc.probe(0).is_none() && desc.probe(2).is_none());
        assert!(desc.has_kernel_data());
        let action = &desc.probes[0].actions[0];
        assert!(action.ran(1 << 3) && !action.ran(1 << 2));
    }
}

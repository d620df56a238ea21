//! The rows of an aggregation found by key, without a second copy of each key: a table
//! from a key's hash to the newest row of that hash, and for each row the row before it of
//! the same hash. A million-key aggregation keeps its keys once.

use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;

use crate::Value;

/// No row.
const NONE: usize = usize::MAX;

/// Where the rows of each key are, the rows being kept elsewhere in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RowIndex {
    /// A key's hash: the newest row of that hash.
    newest: HashMap<u64, usize>,
    /// A row: the row before it of the same hash, or [`NONE`].
    before: Vec<usize>,
}

/// A key's hash, alike for equal keys everywhere in this process.
fn hash(key: &[Value]) -> u64 {
    static STATE: OnceLock<RandomState> = OnceLock::new();
    STATE.get_or_init(RandomState::new).hash_one(key)
}

impl RowIndex {
    /// The row of `key`, given each row's key.
    pub fn find<'a>(&self, key: &[Value], key_of: impl Fn(usize) -> &'a [Value]) -> Option<usize> {
        let mut row = *self.newest.get(&hash(key))?;
        while row != NONE {
            if key_of(row) == key {
                return Some(row);
            }
            row = self.before[row];
        }
        None
    }

    /// Note that the next row (as many rows as pushed so far) has `key`.
    pub fn push(&mut self, key: &[Value]) {
        let row = self.before.len();
        let before = self.newest.insert(hash(key), row).unwrap_or(NONE);
        self.before.push(before);
    }

    /// How many rows are noted.
    pub fn len(&self) -> usize {
        self.before.len()
    }

    pub fn clear(&mut self) {
        self.newest.clear();
        self.before.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_each_row_of_many_keys() {
        let keys: Vec<Vec<Value>> = (0..10_000)
            .map(|i| vec![Value::i32(i % 100), Value::str(format!("k{}", i / 100))])
            .collect();
        let mut index = RowIndex::default();
        for k in &keys {
            index.push(k);
        }
        let key_of = |i: usize| keys[i].as_slice();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(index.find(k, key_of), Some(i));
        }
        assert_eq!(index.find(&[Value::i32(100)], key_of), None);
        index.clear();
        assert_eq!(index.find(&keys[0], key_of), None);
    }
}

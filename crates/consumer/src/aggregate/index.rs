//! The rows of an aggregation found by key, without a second copy of each key: an
//! open-addressing table of row numbers, each beside the low half of its key's hash (where
//! its search starts, and which rules out most other rows without reading their keys). A
//! million-key aggregation keeps its keys once and 8 bytes a place.

use std::hash::{BuildHasher, RandomState};
use std::sync::OnceLock;

use crate::Value;

/// Where the rows of each key are, the rows being kept elsewhere in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RowIndex {
    /// Each place: the number of a row + 1 (0 for none) and its hash's low half; a
    /// power-of-two count of places, at most three quarters used.
    places: Vec<(u32, u32)>,
    /// How many rows are noted.
    rows: usize,
}

/// A key's hash, alike for equal keys everywhere in this process.
pub(crate) fn hash(key: &[Value]) -> u64 {
    static STATE: OnceLock<RandomState> = OnceLock::new();
    STATE.get_or_init(RandomState::new).hash_one(key)
}

impl RowIndex {
    /// The row of `key`, whose hash is `hash`, given each row's key.
    pub fn find<'a>(
        &self,
        hash: u64,
        key: &[Value],
        key_of: impl Fn(usize) -> &'a [Value],
    ) -> Option<usize> {
        let mask = self.places.len().checked_sub(1)?;
        let tag = hash as u32;
        let mut at = tag as usize & mask;
        loop {
            let (row, t) = self.places[at];
            if row == 0 {
                return None;
            }
            if t == tag && key_of(row as usize - 1) == key {
                return Some(row as usize - 1);
            }
            at = (at + 1) & mask;
        }
    }

    /// Note that the next row (as many rows as noted so far) has a key of hash `hash`.
    pub fn push(&mut self, hash: u64) {
        if (self.rows + 1) * 4 > self.places.len() * 3 {
            let room = (self.places.len() * 2).max(16);
            let old = std::mem::replace(&mut self.places, vec![(0, 0); room]);
            for (row, tag) in old.into_iter().filter(|&(row, _)| row != 0) {
                self.place(row, tag);
            }
        }
        // Row numbers fit in 32 bits: a map holds at most 2^32 keys.
        self.rows += 1;
        self.place(self.rows as u32, hash as u32);
    }

    /// Put `row` (+ 1) of hash low half `tag` in the first free place from its own.
    fn place(&mut self, row: u32, tag: u32) {
        let mask = self.places.len() - 1;
        let mut at = tag as usize & mask;
        while self.places[at].0 != 0 {
            at = (at + 1) & mask;
        }
        self.places[at] = (row, tag);
    }

    /// How many rows are noted.
    pub fn len(&self) -> usize {
        self.rows
    }

    pub fn clear(&mut self) {
        *self = RowIndex::default();
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
        let key_of = |i: usize| keys[i].as_slice();
        assert_eq!(index.find(hash(&keys[0]), &keys[0], key_of), None);
        for k in &keys {
            index.push(hash(k));
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(index.find(hash(k), k, key_of), Some(i));
        }
        let absent = [Value::i32(100)];
        assert_eq!(index.find(hash(&absent), &absent, key_of), None);
        index.clear();
        assert_eq!(index.find(hash(&keys[0]), &keys[0], key_of), None);
    }

    #[test]
    fn keys_of_one_hash_are_told_apart() {
        // Every key noted under one hash: found by comparing keys.
        let keys: Vec<Vec<Value>> = (0..100).map(|i| vec![Value::i32(i)]).collect();
        let mut index = RowIndex::default();
        for _ in &keys {
            index.push(7);
        }
        let key_of = |i: usize| keys[i].as_slice();
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(index.find(7, k, key_of), Some(i));
        }
        assert_eq!(index.find(7, &[Value::i32(100)], key_of), None);
    }
}

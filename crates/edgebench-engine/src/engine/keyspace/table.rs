//! A shard's keys and entries: a hash table of pointers, each to one allocation holding a
//! key and its entry.
//!
//! Why not `HashMap<Key, Box<Entry>>`: a table runs between half and seven eighths full, so
//! every bucket is paid for up to twice, and that map's bucket is a key and a pointer (24
//! bytes). Here a bucket is one pointer (8 bytes) and the key lives beside its entry, where
//! it was anyway; 1,000,000 keys of 100 bytes took 253 B of RSS per key before and 215 B
//! after (docs/PERFORMANCE.md). A lookup that finds its hash's bucket then reads the slot to
//! compare the key, one pointer hop a `HashMap<Key, _>` also makes (to the key's bytes).
//!
//! Overwriting a key replaces its entry in place: no allocation.

use std::hash::BuildHasher;

use hashbrown::hash_table::Entry as Found;
use hashbrown::HashTable;

use super::{Entry, Hasher, Key};

/// A key and its entry, allocated together.
#[derive(Debug)]
struct Slot {
    key: Key,
    entry: Entry,
}

/// The keys and entries of one shard.
#[derive(Debug, Default)]
pub struct Table {
    slots: HashTable<Box<Slot>>,
    hasher: Hasher,
}

impl Table {
    fn hash(&self, key: &[u8]) -> u64 {
        self.hasher.hash_one(key)
    }

    /// The entry of `key`.
    pub fn get(&self, key: &[u8]) -> Option<&Entry> {
        self.slots
            .find(self.hash(key), |s| *s.key == *key)
            .map(|s| &s.entry)
    }

    /// The entry of `key`, for writing.
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Entry> {
        let hash = self.hash(key);
        self.slots
            .find_mut(hash, |s| *s.key == *key)
            .map(|s| &mut s.entry)
    }

    /// Whether `key` has an entry.
    pub fn contains_key(&self, key: &[u8]) -> bool {
        self.get(key).is_some()
    }

    /// Stores `entry` under `key`; returns the entry it replaced.
    pub fn insert(&mut self, key: &[u8], entry: Entry) -> Option<Entry> {
        let hash = self.hash(key);
        let hasher = &self.hasher;
        match self
            .slots
            .entry(hash, |s| *s.key == *key, |s| hasher.hash_one(&*s.key))
        {
            Found::Occupied(mut o) => Some(std::mem::replace(&mut o.get_mut().entry, entry)),
            Found::Vacant(v) => {
                v.insert(Box::new(Slot {
                    key: key.into(),
                    entry,
                }));
                None
            }
        }
    }

    /// Removes `key`; returns its entry.
    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let hash = self.hash(key);
        let found = self.slots.find_entry(hash, |s| *s.key == *key).ok()?;
        let (slot, _) = found.remove();
        Some(slot.entry)
    }

    /// How many keys.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Removes every key.
    pub fn clear(&mut self) {
        self.slots.clear();
    }

    /// Every key, in table order.
    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.slots.iter().map(|s| &s.key)
    }

    /// Every key and its entry.
    pub fn iter(&self) -> impl Iterator<Item = (&Key, &Entry)> {
        self.slots.iter().map(|s| (&s.key, &s.entry))
    }

    /// Every entry, for writing.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Entry> {
        self.slots.iter_mut().map(|s| &mut s.entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::keyspace::Value;

    fn entry(v: &[u8]) -> Entry {
        Entry::new(Value::Str(v.to_vec()))
    }

    fn text(e: Option<&Entry>) -> Option<&[u8]> {
        match e.map(|e| &e.value) {
            Some(Value::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// Insert, overwrite, look up, remove, across the table's growth.
    #[test]
    fn keeps_every_key_through_growth_and_removal() {
        let mut t = Table::default();
        for i in 0..10_000u32 {
            assert!(t.insert(&i.to_be_bytes(), entry(b"a")).is_none());
        }
        for i in (0..10_000u32).step_by(2) {
            let old = t.insert(&i.to_be_bytes(), entry(&i.to_le_bytes()));
            assert_eq!(text(old.as_ref()), Some(&b"a"[..]));
        }
        assert_eq!(t.len(), 10_000);
        for i in (1..10_000u32).step_by(2) {
            assert!(t.remove(&i.to_be_bytes()).is_some());
            assert!(t.remove(&i.to_be_bytes()).is_none());
        }
        assert_eq!(t.len(), 5_000);
        for i in 0..10_000u32 {
            let got = text(t.get(&i.to_be_bytes()));
            if i % 2 == 0 {
                assert_eq!(got, Some(&i.to_le_bytes()[..]));
            } else {
                assert_eq!(got, None);
            }
        }
        let mut keys: Vec<u32> = t
            .keys()
            .map(|k| u32::from_be_bytes(k[..].try_into().unwrap()))
            .collect();
        keys.sort_unstable();
        assert_eq!(keys, (0..10_000).step_by(2).collect::<Vec<_>>());
        t.clear();
        assert_eq!((t.len(), t.get(&0u32.to_be_bytes()).is_none()), (0, true));
    }
}

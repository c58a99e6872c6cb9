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
//!
//! A key is hashed once per use ([`Hashed`]): the hash that picks its shard
//! ([`super::Db::shard_of`]) also finds it in the shard's table. Every table of the process
//! hashes with one randomly seeded hasher ([`key_hash`]), as Redis seeds its dict hash once
//! per process: a shard's table must agree with the shard choice, and SWAPDB moves tables
//! between databases.

use std::hash::BuildHasher;

use foldhash::fast::SeedableRandomState;
use foldhash::SharedSeed;
use hashbrown::hash_table::Entry as Found;
use hashbrown::HashTable;

use super::{Entry, Key};

/// The hash of a key: the same in every database of the process, random across processes.
pub fn key_hash(key: &[u8]) -> u64 {
    SeedableRandomState::with_seed(0x5eed, SharedSeed::global_random()).hash_one(key)
}

/// A key and its [`key_hash`], computed once and used for both the shard and the table.
#[derive(Clone, Copy)]
pub struct Hashed<'k> {
    pub key: &'k [u8],
    pub hash: u64,
}

impl<'k> Hashed<'k> {
    pub fn new(key: &'k [u8]) -> Hashed<'k> {
        Hashed {
            key,
            hash: key_hash(key),
        }
    }
}

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
}

impl Table {
    /// The entry of `key`.
    pub fn get(&self, key: Hashed<'_>) -> Option<&Entry> {
        self.slots
            .find(key.hash, |s| *s.key == *key.key)
            .map(|s| &s.entry)
    }

    /// The entry of `key`, for writing.
    pub fn get_mut(&mut self, key: Hashed<'_>) -> Option<&mut Entry> {
        self.slots
            .find_mut(key.hash, |s| *s.key == *key.key)
            .map(|s| &mut s.entry)
    }

    /// Whether `key` has an entry.
    pub fn contains_key(&self, key: &[u8]) -> bool {
        self.get(Hashed::new(key)).is_some()
    }

    /// Stores `entry` under `key`; returns the entry it replaced.
    pub fn insert(&mut self, Hashed { key, hash }: Hashed<'_>, entry: Entry) -> Option<Entry> {
        match self
            .slots
            .entry(hash, |s| *s.key == *key, |s| key_hash(&s.key))
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
    pub fn remove(&mut self, Hashed { key, hash }: Hashed<'_>) -> Option<Entry> {
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
            assert!(t
                .insert(Hashed::new(&i.to_be_bytes()), entry(b"a"))
                .is_none());
        }
        for i in (0..10_000u32).step_by(2) {
            let old = t.insert(Hashed::new(&i.to_be_bytes()), entry(&i.to_le_bytes()));
            assert_eq!(text(old.as_ref()), Some(&b"a"[..]));
        }
        assert_eq!(t.len(), 10_000);
        for i in (1..10_000u32).step_by(2) {
            assert!(t.remove(Hashed::new(&i.to_be_bytes())).is_some());
            assert!(t.remove(Hashed::new(&i.to_be_bytes())).is_none());
        }
        assert_eq!(t.len(), 5_000);
        for i in 0..10_000u32 {
            let got = text(t.get(Hashed::new(&i.to_be_bytes())));
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
        assert_eq!(
            (t.len(), t.get(Hashed::new(&0u32.to_be_bytes())).is_none()),
            (0, true)
        );
    }
}

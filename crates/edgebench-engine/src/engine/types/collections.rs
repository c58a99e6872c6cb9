//! The keyspace's hash maps and sets, keyed by bytes, with one hasher for keys, fields and
//! members. Below the keyspace, so the value types (a sorted set's index) use them too.

use std::collections::{HashMap, HashSet};

/// A key or member: bytes, as Redis treats them.
pub type Key = Box<[u8]>;

/// The hasher for keys, fields and members (foldhash: fast, seeded per process).
pub type Hasher = foldhash::fast::RandomState;

/// A hash map keyed by bytes.
pub type BytesMap<V> = HashMap<Key, V, Hasher>;
/// A set of byte strings.
pub type BytesSet = HashSet<Key, Hasher>;

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
/// A Redis hash: fields in the order they were first set, as a listpack keeps them (HGETALL,
/// HKEYS and HSCAN of a small hash answer in that order, as redis-server's do). Remove with
/// [`FieldMap::shift_remove`] to keep the order.
pub type FieldMap = indexmap::IndexMap<Key, Vec<u8>, Hasher>;

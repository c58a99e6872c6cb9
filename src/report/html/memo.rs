//! Memos of the two costly steps of a page, so that a run which rewrites `report.html` as its
//! results arrive redoes only what changed: the latency curve of each stored histogram
//! (decoding one is ~50 µs) and the SVG of each chart (~0.1 ms). Rewritten after every
//! benchmark, a default `coredata` run wrote the page ~110 times, and without the memos that
//! cost it about half a second; `coredata` now rewrites it at most every 10 s (~17 pages,
//! 43 ms in all, docs/PERFORMANCE.md), and each rewrite still draws only the new charts.
//!
//! Why process-wide, against the rule of no global state: each command calls the page writer
//! once per rewrite and keeps no state for it (a single call beside its other results files),
//! so the memo cannot live in the caller. What makes it safe: entries are keyed by content (a
//! hash, then a full comparison with the stored key), so a hit is exactly what the work would
//! have produced, for any caller; and each memo is bounded: past its limit it is emptied and
//! refills with what the pages being written need.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

/// Entries by hash: each hash's keys (compared in full) and values.
type Buckets<K, V> = HashMap<u64, Vec<(K, Arc<V>)>>;

/// A bounded map from keys to shared values, by the key's 64-bit hash.
pub struct Memo<K, V> {
    entries: Mutex<Option<Buckets<K, V>>>,
    limit: usize,
}

impl<K, V> Memo<K, V> {
    /// An empty memo of at most `limit` entries.
    pub const fn new(limit: usize) -> Self {
        Memo {
            entries: Mutex::new(None),
            limit,
        }
    }

    /// The value of `key` (whose hash is `hash`): the stored one, or `make`'s, stored.
    pub fn get_or<Q, E>(
        &self,
        hash: u64,
        key: &Q,
        make: impl FnOnce() -> Result<V, E>,
    ) -> Result<Arc<V>, E>
    where
        K: Borrow<Q>,
        Q: PartialEq + ToOwned<Owned = K> + ?Sized,
    {
        if let Some(v) = self.find(hash, key) {
            return Ok(v);
        }
        let value = Arc::new(make()?);
        // A poisoned lock (a panic while it was held) only costs the memo, not the page.
        if let Ok(mut entries) = self.entries.lock() {
            let map = entries.get_or_insert_with(HashMap::new);
            if map.len() >= self.limit {
                map.clear();
            }
            map.entry(hash)
                .or_default()
                .push((key.to_owned(), Arc::clone(&value)));
        }
        Ok(value)
    }

    /// Forgets every entry.
    pub fn clear(&self) {
        if let Ok(mut entries) = self.entries.lock() {
            *entries = None;
        }
    }

    fn find<Q>(&self, hash: u64, key: &Q) -> Option<Arc<V>>
    where
        K: Borrow<Q>,
        Q: PartialEq + ?Sized,
    {
        let entries = self.entries.lock().ok()?;
        let bucket = entries.as_ref()?.get(&hash)?;
        bucket
            .iter()
            .find(|(k, _)| k.borrow() == key)
            .map(|(_, v)| Arc::clone(v))
    }
}

/// The hash of anything hashable, for [`Memo::get_or`].
pub fn hash_of(value: &impl Hash) -> u64 {
    let mut h = QuickHasher::default();
    value.hash(&mut h);
    h.finish()
}

/// FxHash (rustc's hasher: rotate, xor, multiply per word), several times quicker than std's
/// SipHash on a chart's thousands of coordinates. It resists no attack, and needs not: a
/// memo compares the whole key before it answers, so a collision costs a comparison.
#[derive(Default)]
pub struct QuickHasher(u64);

impl Hasher for QuickHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_compares_and_empties_past_its_limit() {
        let memo: Memo<String, usize> = Memo::new(2);
        let made = std::cell::Cell::new(0);
        let get = |k: &str, hash: u64| {
            *memo
                .get_or(hash, k, || {
                    made.set(made.get() + 1);
                    Ok::<_, ()>(k.len())
                })
                .unwrap()
        };
        assert_eq!(get("ab", 1), 2);
        assert_eq!(get("ab", 1), 2);
        // Same hash, other key: compared, not confused.
        assert_eq!(get("xyz", 1), 3);
        assert_eq!(made.get(), 2);
        assert_eq!(get("q", 2), 1);
        assert_eq!(made.get(), 3);
        // Two hashes held, the limit: the next one empties it first.
        assert_eq!(get("r", 3), 1);
        assert_eq!(get("ab", 1), 2);
        assert_eq!(made.get(), 5);
    }

    #[test]
    fn a_failure_is_not_stored() {
        let memo: Memo<u8, u8> = Memo::new(4);
        assert_eq!(memo.get_or(0, &0, || Err::<u8, _>("no")), Err("no"));
        assert_eq!(*memo.get_or(0, &0, || Ok::<_, ()>(7)).unwrap(), 7);
    }
}

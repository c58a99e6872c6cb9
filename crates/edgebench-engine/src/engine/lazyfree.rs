//! Freeing large values away from the command (Redis's lazyfree): UNLINK hands a value whose
//! freeing is costly to a background thread, so the command that removed it does not pay
//! for dropping millions of allocations. INFO reports `lazyfree_pending_objects` (handed over,
//! not yet freed) and `lazyfreed_objects` (freed there since the last CONFIG RESETSTAT).
//!
//! What is costly is Redis's estimate (`lazyfreeGetFreeEffort`): one allocation per element
//! of a hash table, skiplist or set, per node of a list or stream, per consumer group and
//! its pending entries; a value in one compact allocation (a string, a listpack, an intset)
//! costs 1. Above [`LAZYFREE_THRESHOLD`] it goes to the thread.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use super::keyspace::Value;

/// Values that cost more than this to free go to the background thread (Redis's 64).
pub const LAZYFREE_THRESHOLD: usize = 64;

/// Elements per list node the effort estimate assumes (a quicklist node of small items).
const LIST_ITEMS_PER_NODE: usize = 128;

/// The background freer of one engine.
#[derive(Debug, Default)]
pub struct LazyFree {
    counts: Arc<Counts>,
    /// The thread's queue, started with the first large value.
    queue: Mutex<Option<Sender<Value>>>,
}

#[derive(Debug, Default)]
struct Counts {
    pending: AtomicU64,
    freed: AtomicU64,
}

/// What freeing `value` (OBJECT ENCODING `encoding`) costs, in allocations.
pub fn free_effort(value: &Value, encoding: &str) -> usize {
    // A compact encoding is one allocation, whatever it holds (strings are, always).
    if matches!(encoding, "listpack" | "intset") {
        return 1;
    }
    match value {
        Value::Str(_) => 1,
        Value::List(l) => l.len().div_ceil(LIST_ITEMS_PER_NODE),
        Value::Hash(h) => h.len(),
        Value::Set(s) => s.len(),
        Value::ZSet(z) => z.len(),
        Value::Stream(s) => {
            let groups = s.groups.len();
            let pel = s.groups.values().next().map_or(0, |g| g.pending.len());
            s.node_count() + groups * (1 + pel)
        }
    }
}

impl LazyFree {
    /// Frees `value`: on the background thread if it is costly, here otherwise.
    pub fn free(&self, value: Value, encoding: &str) {
        if free_effort(&value, encoding) <= LAZYFREE_THRESHOLD {
            return;
        }
        let mut queue = self.queue.lock().unwrap_or_else(PoisonError::into_inner);
        if queue.is_none() {
            *queue = self.start();
        }
        self.counts.pending.fetch_add(1, Ordering::Relaxed);
        let handed = queue.as_ref().map(|q| q.send(value));
        if !matches!(handed, Some(Ok(()))) {
            // No thread: freed here (the value came back in the error and drops now).
            self.counts.pending.fetch_sub(1, Ordering::Relaxed);
            *queue = None;
        }
    }

    fn start(&self) -> Option<Sender<Value>> {
        let (tx, rx) = channel::<Value>();
        let counts = Arc::clone(&self.counts);
        std::thread::Builder::new()
            .name("edgebench-lazyfree".into())
            .spawn(move || {
                for value in rx {
                    drop(value);
                    counts.pending.fetch_sub(1, Ordering::Relaxed);
                    counts.freed.fetch_add(1, Ordering::Relaxed);
                }
            })
            .ok()
            .map(|_| tx)
    }

    /// Values handed over and not yet freed.
    pub fn pending(&self) -> u64 {
        self.counts.pending.load(Ordering::Relaxed)
    }

    /// Values freed by the thread since the last reset.
    pub fn freed(&self) -> u64 {
        self.counts.freed.load(Ordering::Relaxed)
    }

    /// CONFIG RESETSTAT.
    pub fn reset(&self) {
        self.counts.freed.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_values_of_many_allocations_go_to_the_thread() {
        let lazy = LazyFree::default();
        lazy.free(Value::Str(vec![0; 1 << 20]), "raw");
        let big: crate::engine::types::collections::BytesSet = (0..1000u32)
            .map(|i| i.to_string().into_bytes().into())
            .collect();
        let small = big.clone();
        lazy.free(Value::Set(Box::new(big)), "hashtable");
        lazy.free(Value::Set(Box::new(small)), "listpack");
        for _ in 0..1000 {
            if lazy.pending() == 0 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!((lazy.pending(), lazy.freed()), (0, 1));
    }
}

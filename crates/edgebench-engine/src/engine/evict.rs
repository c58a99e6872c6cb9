//! `maxmemory`: before a command runs, keys are evicted by `maxmemory-policy` while the heap
//! is over the limit (Redis's `performEvictions`); when nothing more can go, commands that
//! may grow memory (Redis's `denyoom` flag) are refused with `-OOM`.
//!
//! Memory is the heap the process's counting allocator reports (INFO's `used_memory`);
//! without that probe (an engine embedded in another program) nothing is evicted.
//!
//! Choosing a key, as Redis approximates: a random shard of a database with keys, a sample
//! of `maxmemory-samples` keys from it, and the best of the sample for the policy — the
//! least recently accessed (`*-lru`, and `*-lfu`, which the engine approximates by recency:
//! it keeps no access counter), the soonest to expire (`volatile-ttl`), or the first
//! (`*-random`). `volatile-*` look only at keys with a TTL. An evicted key goes as a
//! deletion does: WATCH, blocked clients and client-side caching see it, the append-only
//! file gets its `DEL`, subscribers an `evicted`, INFO its `evicted_keys`.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

use super::handle::{Engine, DATABASES};
use super::keyevents::Classes;
use super::keyspace::SHARDS;

/// `maxmemory-policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    NoEviction,
    AllKeysLru,
    AllKeysLfu,
    AllKeysRandom,
    VolatileLru,
    VolatileLfu,
    VolatileRandom,
    VolatileTtl,
}

impl Policy {
    /// The policy CONFIG names `name` (Redis's names; `noeviction` for anything else).
    pub fn parse(name: &str) -> Policy {
        match name {
            "allkeys-lru" => Policy::AllKeysLru,
            "allkeys-lfu" => Policy::AllKeysLfu,
            "allkeys-random" => Policy::AllKeysRandom,
            "volatile-lru" => Policy::VolatileLru,
            "volatile-lfu" => Policy::VolatileLfu,
            "volatile-random" => Policy::VolatileRandom,
            "volatile-ttl" => Policy::VolatileTtl,
            _ => Policy::NoEviction,
        }
    }

    fn code(self) -> u8 {
        self as u8
    }

    fn from_code(code: u8) -> Policy {
        [
            Policy::NoEviction,
            Policy::AllKeysLru,
            Policy::AllKeysLfu,
            Policy::AllKeysRandom,
            Policy::VolatileLru,
            Policy::VolatileLfu,
            Policy::VolatileRandom,
            Policy::VolatileTtl,
        ]
        .get(usize::from(code))
        .copied()
        .unwrap_or(Policy::NoEviction)
    }

    fn volatile(self) -> bool {
        matches!(
            self,
            Policy::VolatileLru
                | Policy::VolatileLfu
                | Policy::VolatileRandom
                | Policy::VolatileTtl
        )
    }
}

/// The limit and policy as commands read them (atomics; CONFIG SET stores them).
#[derive(Debug, Default)]
pub struct Eviction {
    maxmemory: AtomicU64,
    policy: AtomicU8,
    samples: AtomicU32,
    /// Keys evicted (INFO's `evicted_keys`).
    pub(crate) evicted: AtomicU64,
    /// Moves the sampling start, so successive samples see different keys.
    cursor: AtomicU64,
}

/// The most keys one command's eviction takes: a bound on the time a command waits when
/// freeing keys frees little memory.
const MAX_PER_COMMAND: usize = 10_000;

impl Eviction {
    /// Sets what CONFIG holds.
    pub(crate) fn configure(&self, maxmemory: u64, policy: Policy, samples: u32) {
        self.maxmemory.store(maxmemory, Ordering::Relaxed);
        self.policy.store(policy.code(), Ordering::Relaxed);
        self.samples.store(samples.max(1), Ordering::Relaxed);
    }
}

impl Engine {
    /// Evicts keys while the heap is over `maxmemory`; false if it is still over (nothing
    /// more can go under the policy). One relaxed load when no limit is set.
    pub fn make_room(&self) -> bool {
        let ev = &self.inner().eviction;
        let max = ev.maxmemory.load(Ordering::Relaxed);
        if max == 0 {
            return true;
        }
        let Some(mut used) = super::cmd::server::heap_bytes() else {
            return true;
        };
        let policy = Policy::from_code(ev.policy.load(Ordering::Relaxed));
        let samples = ev.samples.load(Ordering::Relaxed) as usize;
        let mut evicted = 0;
        while used > max {
            if policy == Policy::NoEviction || evicted == MAX_PER_COMMAND {
                return false;
            }
            if !self.evict_one(policy, samples) {
                return false;
            }
            evicted += 1;
            used = super::cmd::server::heap_bytes().unwrap_or(0);
        }
        true
    }

    /// Evicts the best key of one sample; false if no database has a key the policy may
    /// take.
    fn evict_one(&self, policy: Policy, samples: usize) -> bool {
        let ev = &self.inner().eviction;
        let turn = ev.cursor.fetch_add(1, Ordering::Relaxed);
        let now = self.now_ms();
        for d in 0..DATABASES {
            let db = self.db((d + turn as usize) % DATABASES);
            for s in 0..SHARDS {
                let shard = (s + (turn as usize).wrapping_mul(7)) % SHARDS;
                let mut ks = db.lock_indices(&[shard], now);
                let start = (turn as usize).wrapping_mul(2_654_435_761);
                let sample = ks.eviction_sample(shard, policy.volatile(), start, samples);
                let best = match policy {
                    Policy::AllKeysRandom | Policy::VolatileRandom => sample.first(),
                    Policy::VolatileTtl => {
                        sample.iter().min_by_key(|(_, _, t)| t.unwrap_or(u64::MAX))
                    }
                    _ => sample.iter().min_by_key(|(_, accessed, _)| *accessed),
                };
                let Some((key, _, _)) = best else {
                    continue;
                };
                let key = key.clone();
                ks.remove(&key);
                db.feed().expired(db.index(), &key);
                db.events()
                    .notify(Classes::EVICTED, "evicted", &key, db.index());
                drop(ks);
                ev.evicted.fetch_add(1, Ordering::Relaxed);
                return true;
            }
        }
        false
    }
}

//! The keyspace: databases split into shards, each behind its own mutex, and [`Locked`], the
//! view of the shards one command holds while it runs.
//!
//! Why shards of mutexes: many in-process callers (one per benchmark worker) hit the same
//! database; one lock would serialize them all, while a key's shard is found by hashing it and
//! only that shard is locked, so commands on different keys run in parallel. A command that
//! touches several keys locks their shards in ascending index order (no deadlock possible);
//! one that touches the whole database (KEYS, SCAN, FLUSHDB, DBSIZE) locks every shard of it,
//! in the same order. A transaction (EXEC) locks the union of its commands' shards up front,
//! so it is atomic with respect to every other caller. Critical sections are short: no I/O
//! and no allocation beyond what the command itself needs happens under a lock.
//!
//! Invariants: an expired key is never visible. Reads and writes through [`Locked`] drop an
//! expired key on access (lazy expiry), and `Engine`'s background thread removes the rest
//! (active expiry) using each shard's deadline index. Every write goes through
//! [`Locked::get_mut`], [`Locked::insert`] or [`Locked::remove`], which bump the version of
//! any WATCHed key they touch, and signal clients blocked on the key (see [`super::notify`]).

use std::collections::{BTreeSet, VecDeque};
use std::num::NonZeroU64;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use smallvec::SmallVec;

use super::error::CmdError;
use super::feed::Feed;
use super::keyevents::{Classes, KeyEvents};
use super::notify::BlockedClients;
use super::tracking::Tracking;
pub use super::types::collections::{BytesMap, BytesSet, FieldMap, Hasher, Key};
use super::types::encoding::{is_redis_integer, string_encoding, Limits, Shape};
use super::types::{Stream, ZSet};

mod table;
use table::{key_hash, Hashed, Table};

/// Shards per database. A power of two; more than the cores of a big machine, so two
/// callers rarely meet on one lock.
pub const SHARDS: usize = 64;

/// Shards a command locks without allocating (see [`Locked`]): a command of one or two keys,
/// and a core-data reading's write (its record and four indexes, `Embedded_Direct`
/// AddReading), which spilled two allocations a call at 2.
const INLINE_SHARDS: usize = 5;

/// A stored value.
///
/// Size note: every key pays for the largest variant, so the collections are boxed and the
/// enum is a string's size (24 bytes, making an [`Entry`] 40); a collection costs one more
/// pointer hop, as a Redis object's does. 1,000,000 100-byte strings took 510 B of RSS per
/// key with the entries and collections inline, 279 B with them boxed but the list, 253 B
/// with the list boxed too, 215 B with the key beside its entry ([`table`]; redis-server:
/// 208 B; docs/PERFORMANCE.md).
#[derive(Debug, Clone)]
pub enum Value {
    /// A string (also integers and floats, as text).
    Str(Vec<u8>),
    /// A list (boxed: see [`Value`]'s size note).
    List(Box<VecDeque<Vec<u8>>>),
    /// A hash (boxed: see [`Value`]'s size note).
    Hash(Box<FieldMap>),
    /// A set (boxed).
    Set(Box<BytesSet>),
    /// A sorted set (boxed, as the stream: see [`Value`]'s size note).
    ZSet(Box<ZSet>),
    /// A stream.
    Stream(Box<Stream>),
}

impl Value {
    /// The name TYPE reports.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
            Value::Stream(_) => "stream",
        }
    }

    /// Whether the value is over the compact encoding's limits, where Redis would have
    /// converted it (see [`super::types::encoding`]). O(1) once past the entry limit; else
    /// a look at each element, of which a compact value has few.
    pub fn outgrew(&self, limits: &Limits) -> bool {
        match self {
            Value::Hash(h) => {
                let l = limits.load();
                h.len() as u64 > l.hash_entries
                    || h.iter().any(|(f, v)| {
                        f.len() as u64 > l.hash_value || v.len() as u64 > l.hash_value
                    })
            }
            Value::Set(s) => {
                let l = limits.load();
                s.len() as u64 > l.set_entries || s.iter().any(|m| !is_redis_integer(m))
            }
            Value::ZSet(z) => {
                let l = limits.load();
                if l.zset_is_builtin() {
                    return z.is_large();
                }
                z.len() as u64 > l.zset_entries
                    || z.iter().any(|(m, _)| m.len() as u64 > l.zset_value)
            }
            Value::Str(_) | Value::List(_) | Value::Stream(_) => false,
        }
    }

    /// What redis-server 7.0's OBJECT ENCODING reports for this value.
    pub fn encoding(&self, shape: Shape, limits: &Limits) -> &'static str {
        let big = shape.has(Shape::GREW) || (!shape.has(Shape::PINNED) && self.outgrew(limits));
        match self {
            Value::Str(s) => string_encoding(s, shape),
            // 7.0 stores every list as a quicklist (listpack lists came with 7.2).
            Value::List(_) => "quicklist",
            Value::Hash(_) if big => "hashtable",
            Value::Hash(_) => "listpack",
            Value::Set(_) if big => "hashtable",
            Value::Set(_) => "intset",
            Value::ZSet(_) if big => "skiplist",
            Value::ZSet(_) => "listpack",
            Value::Stream(_) => "stream",
        }
    }
}

/// A value and its expiry.
#[derive(Debug, Clone)]
pub struct Entry {
    /// The value.
    pub value: Value,
    /// When the key expires, ms since the Unix epoch; `None` = never. Non-zero so the
    /// option takes 8 bytes, not 16 (every key pays for it; see [`Value`]'s size note):
    /// a deadline of 0 is stored as 1, both long past.
    expiry: Option<NonZeroU64>,
    /// What OBJECT ENCODING needs beyond the value (see [`super::types::encoding`]).
    pub shape: Shape,
    /// When a command last read or wrote the key, seconds since the Unix epoch (OBJECT
    /// IDLETIME; Redis's LRU clock has the same one-second resolution).
    pub accessed_s: u32,
}

impl Entry {
    /// A value that never expires.
    pub fn new(value: Value) -> Entry {
        Entry::with_expiry(value, None)
    }

    /// A value with an expiry (ms since the epoch; `None` = never).
    pub fn with_expiry(value: Value, expires_at_ms: Option<u64>) -> Entry {
        Entry {
            value,
            expiry: expires_at_ms.map(deadline),
            shape: Shape::default(),
            accessed_s: 0,
        }
    }

    /// When the key expires, ms since the Unix epoch; `None` = never.
    pub fn expires_at_ms(&self) -> Option<u64> {
        self.expiry.map(NonZeroU64::get)
    }

    /// Sets when the key expires (`None`: never). Within the keyspace, use
    /// [`Locked::set_expiry`], which keeps the deadline index in step.
    pub fn set_expires_at_ms(&mut self, expires_at_ms: Option<u64>) {
        self.expiry = expires_at_ms.map(deadline);
    }

    fn expired(&self, now_ms: u64) -> bool {
        self.expires_at_ms().is_some_and(|t| t <= now_ms)
    }
}

/// A deadline as stored: 0 (the epoch) becomes 1 ms after it, equally past.
fn deadline(ms: u64) -> NonZeroU64 {
    NonZeroU64::new(ms).unwrap_or(NonZeroU64::MIN)
}

/// A watched key's version (bumped by every write) and how many client watches hold it.
#[derive(Debug, Clone, Copy, Default)]
struct Watch {
    version: u64,
    watchers: u32,
}

/// One shard of a database.
#[derive(Debug, Default)]
pub struct Shard {
    /// The keys and their entries (see [`Table`] for why not a `HashMap`).
    map: Table,
    /// (deadline ms, key) of keys given a TTL; may hold stale pairs (a TTL changed or the key
    /// was deleted), which the active-expiry pass checks against the entry and drops.
    deadlines: BTreeSet<(u64, Key)>,
    /// Version counters of WATCHed keys, only while some client watches them (absent = not
    /// watched): the entry goes when its last watcher lets go (UNWATCH, EXEC, DISCARD,
    /// RESET, disconnect), so distinct keys watched over a long run do not pile up.
    watched: BytesMap<Watch>,
}

impl Shard {
    /// Keeps the deadline index in step with a key's TTL change, so it never holds a pair
    /// for a TTL that was replaced, cleared or deleted (which would grow with every write).
    fn retime(&mut self, key: &[u8], old: Option<u64>, new: Option<u64>) {
        if old == new {
            return;
        }
        if let Some(t) = old {
            self.deadlines.remove(&(t, Key::from(key)));
        }
        if let Some(t) = new {
            self.deadlines.insert((t, key.into()));
        }
    }

    fn touch(&mut self, key: &[u8]) {
        touch(&mut self.watched, key);
    }

    /// Removes `key` if its TTL has passed: `Some(true)` then, `Some(false)` if it is live,
    /// `None` if it is missing, as far as a check can tell. The deadline index holds every
    /// key of the shard that has a TTL: with none, no entry can have expired, and this
    /// answers `Some(false)` without a lookup (the caller's own lookup finds a missing key).
    fn expire_if_due(&mut self, key: Hashed<'_>, now_ms: u64) -> Option<bool> {
        if self.deadlines.is_empty() || !self.map.get(key)?.expired(now_ms) {
            return Some(false);
        }
        self.map.remove(key);
        self.touch(key.key);
        Some(true)
    }

    /// Removes keys whose deadline has passed, telling `gone` each one (for clients blocked
    /// on it: an expired stream ends blocked XREADGROUPs, as in Redis); returns how many.
    fn expire_due(&mut self, now_ms: u64, gone: &dyn Fn(&[u8])) -> usize {
        let mut removed = 0;
        while let Some((deadline, _)) = self.deadlines.first() {
            if *deadline > now_ms {
                break;
            }
            let Some((deadline, key)) = self.deadlines.pop_first() else {
                break;
            };
            let hashed = Hashed::new(&key);
            if self
                .map
                .get(hashed)
                .is_some_and(|e| e.expires_at_ms() == Some(deadline))
            {
                self.map.remove(hashed);
                self.touch(&key);
                gone(&key);
                removed += 1;
            }
        }
        removed
    }
}

/// A write to `key`: a WATCHed key counts as modified (a free function, so that it can run
/// while the shard's table is borrowed).
fn touch(watched: &mut BytesMap<Watch>, key: &[u8]) {
    if !watched.is_empty() {
        if let Some(w) = watched.get_mut(key) {
            w.version += 1;
        }
    }
}

thread_local! {
    /// Writes through [`Locked`] on this thread, ever: a command that moved it wrote (the
    /// engine feeds it to the append-only file and counts it for `save`). Per thread, since
    /// one command runs on one thread, and counting in one place sees the writes of a
    /// command that locks other databases (MOVE, COPY, SWAPDB) as well as its own.
    static WRITES: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many writes [`Locked`] has made on this thread (compare two readings).
pub fn writes_on_this_thread() -> u64 {
    WRITES.with(std::cell::Cell::get)
}

fn wrote() {
    WRITES.with(|w| w.set(w.get().wrapping_add(1)));
}

/// One logical database (SELECT 0–15).
#[derive(Debug)]
pub struct Db {
    shards: Box<[Mutex<Shard>]>,
    /// Clients blocked on keys of this database (BLPOP, XREAD BLOCK...).
    blocked: BlockedClients,
    /// The encoding limits, shared by the engine's databases (CONFIG sets them).
    limits: Arc<Limits>,
    /// Its number (SELECT), which the feed writes before its commands.
    index: usize,
    /// The propagation feed, shared by the engine's databases: expired keys go to it.
    feed: Arc<Feed>,
    /// Client-side caching, shared by the engine's databases: writes tell it.
    tracking: Arc<Tracking>,
    /// Keyspace notifications, shared likewise: `expired` and `new` are raised here.
    events: Arc<KeyEvents>,
}

impl Default for Db {
    fn default() -> Self {
        Db::with_limits(Arc::default())
    }
}

impl Db {
    /// An empty database whose OBJECT ENCODING follows these limits.
    pub fn with_limits(limits: Arc<Limits>) -> Db {
        Db::numbered(0, limits, Arc::default(), Arc::default())
    }

    /// Database `index` of an engine, with the engine's limits, feed and notifications.
    pub fn numbered(
        index: usize,
        limits: Arc<Limits>,
        feed: Arc<Feed>,
        events: Arc<KeyEvents>,
    ) -> Db {
        Db {
            shards: (0..SHARDS).map(|_| Mutex::new(Shard::default())).collect(),
            blocked: BlockedClients::default(),
            limits,
            index,
            feed,
            tracking: Arc::default(),
            events,
        }
    }

    /// This database, telling `tracking` of its writes (the engine's table).
    pub fn tracked_by(mut self, tracking: Arc<Tracking>) -> Db {
        self.tracking = tracking;
        self
    }

    /// Its number (SELECT).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The propagation feed.
    pub fn feed(&self) -> &Feed {
        &self.feed
    }

    /// The keyspace notifications.
    pub fn events(&self) -> &KeyEvents {
        &self.events
    }

    /// A key of this database expired and was removed (under its shard's lock): clients
    /// blocked on it are told, the feed gets its `DEL`, subscribers an `expired`.
    fn gone(&self, key: &[u8]) {
        self.blocked.written(self, key);
        self.feed.expired(self.index, key);
        self.tracking.modified(key);
        self.events
            .notify(Classes::EXPIRED, "expired", key, self.index);
    }

    /// The time keys expire at for a command at `now_ms`: none expire while a file is
    /// replayed (as in Redis: the file says when they went).
    fn expiry_clock(&self, now_ms: u64) -> u64 {
        if self.feed.loading() {
            0
        } else {
            now_ms
        }
    }

    /// The encoding limits this database's values are judged by.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The shard index of a key.
    pub fn shard_of(&self, key: &[u8]) -> usize {
        shard_index(key_hash(key))
    }

    /// The clients blocked on keys of this database.
    pub fn blocked(&self) -> &BlockedClients {
        &self.blocked
    }

    /// Locks the shards of `keys` (ascending order, each once).
    pub fn lock<'a, 'k>(
        &'a self,
        keys: impl IntoIterator<Item = &'k [u8]>,
        now_ms: u64,
    ) -> Locked<'a> {
        let mut keys = keys.into_iter();
        let first = keys.next().map(|k| self.shard_of(k));
        let Some(second) = keys.next() else {
            // One key (most commands): one shard, nothing to sort.
            return self.lock_indices(first.as_slice(), now_ms);
        };
        let mut idx: SmallVec<[usize; INLINE_SHARDS]> = first.into_iter().collect();
        idx.push(self.shard_of(second));
        idx.extend(keys.map(|k| self.shard_of(k)));
        idx.sort_unstable();
        idx.dedup();
        self.lock_indices(&idx, now_ms)
    }

    /// Locks the shards with these indices, which must be sorted and unique.
    pub fn lock_indices(&self, idx: &[usize], now_ms: u64) -> Locked<'_> {
        debug_assert!(idx.windows(2).all(|w| w[0] < w[1]));
        Locked {
            db: self,
            now_ms,
            expiry_ms: self.expiry_clock(now_ms),
            guards: idx.iter().map(|&i| (i, lock(&self.shards[i]))).collect(),
            all: false,
        }
    }

    /// Locks every shard (whole-database commands).
    pub fn lock_all(&self, now_ms: u64) -> Locked<'_> {
        Locked {
            db: self,
            now_ms,
            expiry_ms: self.expiry_clock(now_ms),
            guards: self
                .shards
                .iter()
                .enumerate()
                .map(|(i, s)| (i, lock(s)))
                .collect(),
            all: true,
        }
    }

    /// Active expiry: removes every key whose deadline passed, shard by shard.
    pub fn expire_due(&self, now_ms: u64) -> usize {
        if self.feed.loading() {
            return 0;
        }
        let gone = |key: &[u8]| self.gone(key);
        self.shards
            .iter()
            .map(|s| lock(s).expire_due(now_ms, &gone))
            .sum()
    }
}

/// The shard of a key's [`key_hash`]. Bits 48..54: a shard's table finds its buckets by the
/// hash's low bits and tags them with its top 7 (hashbrown), so those must still vary
/// among the keys of one shard.
fn shard_index(hash: u64) -> usize {
    (hash >> 48) as usize & (SHARDS - 1)
}

/// A time in ms as the seconds of [`Entry::accessed_s`].
fn seconds(ms: u64) -> u32 {
    (ms / 1000) as u32
}

/// A poisoned shard only means another caller panicked mid-command; the map itself is
/// still a valid map, so keep serving it.
fn lock(m: &Mutex<Shard>) -> MutexGuard<'_, Shard> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The shards one command holds, and the time it runs at (one `now` per command, as Redis
/// evaluates expiry once per command).
pub struct Locked<'a> {
    db: &'a Db,
    now_ms: u64,
    /// What keys expire against: `now_ms`, or 0 while a file is replayed.
    expiry_ms: u64,
    /// Inline for the commands of one or two keys (nearly all): no allocation to lock.
    guards: SmallVec<[(usize, MutexGuard<'a, Shard>); INLINE_SHARDS]>,
    all: bool,
}

impl<'a> Locked<'a> {
    /// The database these shards belong to.
    pub fn db(&self) -> &'a Db {
        self.db
    }

    /// The command's time, ms since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// Whether a deadline (ms since the epoch) counts as passed for this command: never
    /// while a file is replayed, so a replayed `PEXPIREAT` sets the TTL rather than delete
    /// the key that later commands of the file still write (Redis's `checkAlreadyExpired`).
    pub fn has_passed(&self, at_ms: i64) -> bool {
        at_ms <= self.expiry_ms.min(i64::MAX as u64) as i64
    }

    /// How big a stream's nodes grow (CONFIG `stream-node-max-*`).
    pub fn stream_nodes(&self) -> super::types::stream::NodeLimits {
        self.db.limits.stream_nodes()
    }

    /// Where a sparse HyperLogLog turns dense (CONFIG `hll-sparse-max-bytes`).
    pub fn hll_sparse_max(&self) -> usize {
        self.db.limits.hll_sparse_max()
    }

    /// The shard of `key`, and the key with its hash (for the shard's table).
    fn shard<'k>(&mut self, key: &'k [u8]) -> (&mut Shard, Hashed<'k>) {
        let key = Hashed::new(key);
        let i = shard_index(key.hash);
        let pos = if self.all {
            i
        } else {
            match self.guards.binary_search_by_key(&i, |(j, _)| *j) {
                Ok(p) => p,
                // A command touched a key its key spec did not declare: a bug in the
                // command table, not in the input.
                Err(_) => panic!("engine: key in shard {i} used without its lock"),
            }
        };
        (&mut self.guards[pos].1, key)
    }

    /// The live entry of `key` (an expired one is dropped first); counts as an access.
    pub fn get(&mut self, key: &[u8]) -> Option<&Entry> {
        let now_s = seconds(self.now_ms);
        self.get_mut_untouched(key).map(|e| {
            e.accessed_s = now_s;
            &*e
        })
    }

    /// The live entry of `key` without counting an access (OBJECT looks without touching,
    /// as in Redis).
    pub fn peek(&mut self, key: &[u8]) -> Option<&Entry> {
        self.get_mut_untouched(key).map(|e| &*e)
    }

    /// The live entry of `key`, for writing (a WATCHed key counts as modified).
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut Entry> {
        let (now, expiry) = (self.now_ms, self.expiry_ms);
        let db = self.db;
        let (shard, hashed) = self.shard(key);
        if shard.expire_if_due(hashed, expiry)? {
            db.gone(key);
            return None;
        }
        let entry = shard.map.get_mut(hashed)?;
        wrote();
        touch(&mut shard.watched, key);
        db.blocked.written(db, key);
        db.tracking.modified(key);
        entry.accessed_s = seconds(now);
        // The value as the last command left it: Redis converted it then if it was over
        // the limits (see `types::encoding`).
        if entry.shape.has(Shape::PINNED) {
            entry.shape.clear(Shape::PINNED);
        } else if !entry.shape.has(Shape::GREW) && entry.value.outgrew(&db.limits) {
            entry.shape.set(Shape::GREW);
        }
        Some(entry)
    }

    /// The live entry of `key`, for a write Redis announces to neither WATCH nor blocked
    /// clients (consumer-group bookkeeping: XREADGROUP's deliveries, XACK, XCLAIM).
    pub fn get_mut_quiet(&mut self, key: &[u8]) -> Option<&mut Entry> {
        let entry = self.get_mut_untouched(key)?;
        wrote();
        Some(entry)
    }

    fn get_mut_untouched(&mut self, key: &[u8]) -> Option<&mut Entry> {
        let expiry = self.expiry_ms;
        let db = self.db;
        let (shard, hashed) = self.shard(key);
        if shard.expire_if_due(hashed, expiry)? {
            db.gone(key);
            return None;
        }
        shard.map.get_mut(hashed)
    }

    /// Whether `key` exists (and has not expired).
    pub fn exists(&mut self, key: &[u8]) -> bool {
        self.get(key).is_some()
    }

    /// Stores `entry` under `key`, replacing any value (and its TTL, unless `entry` has one).
    /// Returns the previous live entry.
    pub fn insert(&mut self, key: &[u8], mut entry: Entry) -> Option<Entry> {
        let expiry = self.expiry_ms;
        entry.accessed_s = seconds(self.now_ms);
        let db = self.db;
        let (shard, hashed) = self.shard(key);
        wrote();
        shard.touch(key);
        db.blocked.written(db, key);
        db.tracking.modified(key);
        let new_deadline = entry.expires_at_ms();
        let old = shard.map.insert(hashed, entry);
        shard.retime(
            key,
            old.as_ref().and_then(|e| e.expires_at_ms()),
            new_deadline,
        );
        let old = old.filter(|e| !e.expired(expiry));
        // A key that did not exist was added (Redis's `dbAdd`).
        if old.is_none() {
            db.events.notify(Classes::NEW, "new", key, db.index);
        }
        old
    }

    /// Removes `key`; returns its live entry.
    pub fn remove(&mut self, key: &[u8]) -> Option<Entry> {
        let expiry = self.expiry_ms;
        let db = self.db;
        let (shard, hashed) = self.shard(key);
        let old = shard.map.remove(hashed)?;
        wrote();
        shard.touch(key);
        // A deletion ends XREADGROUP waits on the key (Redis's signalDeletedKeyAsReady).
        db.blocked.written(db, key);
        db.tracking.modified(key);
        shard.retime(key, old.expires_at_ms(), None);
        (!old.expired(expiry)).then_some(old)
    }

    /// Up to `n` keys of locked shard `shard` that eviction may take, with when each was
    /// last accessed (s) and its deadline: `volatile`, those with a TTL, soonest deadline
    /// first; otherwise keys from position `start` of the shard's table on (wrapping), so
    /// successive samples see different keys.
    pub fn eviction_sample(
        &mut self,
        shard: usize,
        volatile: bool,
        start: usize,
        n: usize,
    ) -> Vec<(Key, u32, Option<u64>)> {
        let Some((_, guard)) = self.guards.iter().find(|(i, _)| *i == shard) else {
            return Vec::new();
        };
        let describe = |key: &Key| {
            guard
                .map
                .get(Hashed::new(key))
                .map(|e| (key.clone(), e.accessed_s, e.expires_at_ms()))
        };
        if volatile {
            return guard
                .deadlines
                .iter()
                .filter_map(|(_, k)| describe(k))
                .take(n)
                .collect();
        }
        let len = guard.map.len();
        if len == 0 {
            return Vec::new();
        }
        let skip = start % len;
        guard
            .map
            .iter()
            .skip(skip)
            .chain(guard.map.iter().take(skip))
            .take(n)
            .map(|(k, e)| (k.clone(), e.accessed_s, e.expires_at_ms()))
            .collect()
    }

    /// Sets or clears the TTL of an existing key; false if there is no such key.
    pub fn set_expiry(&mut self, key: &[u8], expires_at_ms: Option<u64>) -> bool {
        let Some(e) = self.get_mut(key) else {
            return false;
        };
        let old = e.expires_at_ms();
        e.set_expires_at_ms(expires_at_ms);
        self.shard(key).0.retime(key, old, expires_at_ms);
        true
    }

    /// Every live key of the locked shards (all of them after [`Db::lock_all`]), in shard
    /// order. Expired keys are skipped (and dropped).
    pub fn keys(&mut self) -> Vec<Key> {
        let now = self.expiry_ms;
        let db = self.db;
        let gone = |key: &[u8]| db.gone(key);
        let mut out = Vec::new();
        for (_, shard) in &mut self.guards {
            shard.expire_due(now, &gone);
            out.extend(shard.map.keys().cloned());
        }
        out
    }

    /// Calls `f` with each live key of shard `index` (expired keys dropped first). Needs
    /// every shard locked ([`Db::lock_all`]): SCAN and RANDOMKEY walk one shard at a time
    /// instead of copying the whole keyspace.
    pub fn for_each_key_in_shard(&mut self, index: usize, mut f: impl FnMut(&Key)) {
        assert!(self.all, "for_each_key_in_shard needs every shard locked");
        let now = self.expiry_ms;
        let db = self.db;
        let shard = &mut self.guards[index].1;
        shard.expire_due(now, &|key: &[u8]| db.gone(key));
        for key in shard.map.keys() {
            f(key);
        }
    }

    /// Calls `f` with every key of the locked shards, its entry and its OBJECT ENCODING,
    /// expired ones included (a snapshot keeps them; loading drops them, as Redis's does).
    pub fn for_each_entry(&self, mut f: impl FnMut(&Key, &Entry, &'static str)) {
        let limits = &self.db.limits;
        for (_, shard) in &self.guards {
            for (key, entry) in shard.map.iter() {
                f(key, entry, entry.value.encoding(entry.shape, limits));
            }
        }
    }

    /// How many keys of the locked shards have a TTL, expired or not (RDB's RESIZEDB).
    pub fn count_expiring(&self) -> usize {
        self.guards
            .iter()
            .map(|(_, s)| s.map.iter().filter(|(_, e)| e.expiry.is_some()).count())
            .sum()
    }

    /// How many keys the locked shards hold, expired or not.
    pub fn count_all(&self) -> usize {
        self.guards.iter().map(|(_, s)| s.map.len()).sum()
    }

    /// How many live keys shard `index` holds (every shard locked).
    pub fn shard_len(&mut self, index: usize) -> usize {
        assert!(self.all, "shard_len needs every shard locked");
        let now = self.expiry_ms;
        let db = self.db;
        let shard = &mut self.guards[index].1;
        shard.expire_due(now, &|key: &[u8]| db.gone(key));
        shard.map.len()
    }

    /// How many live keys the locked shards hold.
    pub fn len(&mut self) -> usize {
        let now = self.expiry_ms;
        let db = self.db;
        let gone = |key: &[u8]| db.gone(key);
        self.guards
            .iter_mut()
            .map(|(_, s)| {
                s.expire_due(now, &gone);
                s.map.len()
            })
            .sum()
    }

    /// Whether the locked shards hold no live key.
    pub fn is_empty(&mut self) -> bool {
        self.len() == 0
    }

    /// Removes every key of the locked shards (FLUSHDB with [`Db::lock_all`]).
    pub fn clear(&mut self) {
        wrote();
        let db = self.db;
        for (_, shard) in &mut self.guards {
            // Flushed streams end blocked XREADGROUPs (Redis's signalFlushedDb).
            for (key, entry) in shard.map.iter() {
                if matches!(entry.value, Value::Stream(_)) {
                    db.blocked.written(db, key);
                }
            }
            // Only watched keys that exist count as modified (Redis's
            // `touchAllWatchedKeysInDb`): WATCH of a missing key survives FLUSHALL.
            let watched: Vec<Key> = shard
                .watched
                .keys()
                .filter(|k| shard.map.contains_key(k))
                .cloned()
                .collect();
            shard.map.clear();
            shard.deadlines.clear();
            for k in watched {
                shard.touch(&k);
            }
        }
    }

    /// Starts one more watch of `key`: returns its current version. Each call must be
    /// matched by one [`Locked::unwatch`] (the client's [`super::client::Watches`] does it).
    pub fn watch(&mut self, key: &[u8]) -> u64 {
        let w = self.shard(key).0.watched.entry(key.into()).or_default();
        w.watchers += 1;
        w.version
    }

    /// Ends one watch of `key`; the version counter goes with the last one.
    pub fn unwatch(&mut self, key: &[u8]) {
        let watched = &mut self.shard(key).0.watched;
        if let Some(w) = watched.get_mut(key) {
            w.watchers = w.watchers.saturating_sub(1);
            if w.watchers == 0 {
                watched.remove(key);
            }
        }
    }

    /// The version of a watched key (`None` if nobody watches it any more).
    pub fn watched_version(&mut self, key: &[u8]) -> Option<u64> {
        self.shard(key).0.watched.get(key).map(|w| w.version)
    }

    /// How many keys of the locked shards have a version counter (tests: nothing leaks).
    pub fn watched_keys(&self) -> usize {
        self.guards.iter().map(|(_, s)| s.watched.len()).sum()
    }

    /// The encoding memory of `key`, to mark it (string commands that edit in place);
    /// not a write of its own (the command's write already counted).
    pub fn shape_mut(&mut self, key: &[u8]) -> Option<&mut Shape> {
        self.get_mut_untouched(key).map(|e| &mut e.shape)
    }

    /// Sets when `key` was last accessed (RESTORE ... IDLETIME), seconds since the epoch.
    pub fn set_accessed(&mut self, key: &[u8], accessed_s: u32) {
        if let Some(e) = self.get_mut_untouched(key) {
            e.accessed_s = accessed_s;
        }
    }

    /// OBJECT ENCODING of `key`, as redis-server 7.0 would report it.
    pub fn encoding_of(&mut self, key: &[u8]) -> Option<&'static str> {
        let db = self.db;
        self.peek(key)
            .map(|e| e.value.encoding(e.shape, &db.limits))
    }

    /// Before the encoding limits change: marks every value of the locked shards that is
    /// over the limits in force until now, which Redis converted already, and pins the
    /// other collections compact until their next write (needs every shard locked, so no
    /// value is missed).
    pub fn mark_outgrown(&mut self, old: &Limits) {
        assert!(self.all, "mark_outgrown needs every shard locked");
        for (_, shard) in &mut self.guards {
            for entry in shard.map.values_mut() {
                let collection =
                    matches!(entry.value, Value::Hash(_) | Value::Set(_) | Value::ZSet(_));
                // Converted already, or still compact since an earlier change.
                if !collection || entry.shape.has(Shape::GREW) || entry.shape.has(Shape::PINNED) {
                    continue;
                }
                if entry.value.outgrew(old) {
                    entry.shape.set(Shape::GREW);
                } else {
                    entry.shape.set(Shape::PINNED);
                }
            }
        }
    }

    /// SWAPDB: exchanges every key (values, TTLs) of this database with `other`'s; both
    /// must hold every shard. A watched key of either that exists in either counts as
    /// modified, as in Redis.
    pub fn swap_with(&mut self, other: &mut Locked<'_>) {
        assert!(self.all && other.all, "swap_with needs every shard locked");
        wrote();
        for ((_, a), (_, b)) in self.guards.iter_mut().zip(other.guards.iter_mut()) {
            std::mem::swap(&mut a.map, &mut b.map);
            std::mem::swap(&mut a.deadlines, &mut b.deadlines);
            // A watched key changes only if it exists on either side of the swap.
            let changed = |this: &Shard, that: &Shard| -> Vec<Key> {
                this.watched
                    .keys()
                    .filter(|k| this.map.contains_key(k) || that.map.contains_key(k))
                    .cloned()
                    .collect()
            };
            let (in_a, in_b) = (changed(a, b), changed(b, a));
            for k in in_a {
                a.touch(&k);
            }
            for k in in_b {
                b.touch(&k);
            }
        }
    }

    // ---- typed access, shared by the command families ----

    /// The string at `key`: `Ok(None)` if missing, WRONGTYPE if another type.
    pub fn get_str(&mut self, key: &[u8]) -> Result<Option<&Vec<u8>>, CmdError> {
        match self.get(key) {
            None => Ok(None),
            Some(Entry {
                value: Value::Str(s),
                ..
            }) => Ok(Some(s)),
            Some(_) => Err(CmdError::WrongType),
        }
    }
}

/// Generates `Locked::<name>` / `<name>_mut` / `<name>_or_default` accessors for one value
/// type: read access (`Ok(None)` when missing, WRONGTYPE for another type), write access,
/// and write access creating an empty value when missing.
macro_rules! typed_access {
    ($variant:ident, $ty:ty, $get:ident, $get_mut:ident, $or_default:ident, $what:literal) => {
        impl Locked<'_> {
            #[doc = concat!("The ", $what, " at `key`: `Ok(None)` if missing, WRONGTYPE if another type.")]
            pub fn $get(&mut self, key: &[u8]) -> Result<Option<&$ty>, CmdError> {
                match self.get(key) {
                    None => Ok(None),
                    Some(Entry { value: Value::$variant(v), .. }) => Ok(Some(v)),
                    Some(_) => Err(CmdError::WrongType),
                }
            }

            #[doc = concat!("The ", $what, " at `key`, for writing.")]
            pub fn $get_mut(&mut self, key: &[u8]) -> Result<Option<&mut $ty>, CmdError> {
                match self.get_mut(key) {
                    None => Ok(None),
                    Some(Entry { value: Value::$variant(v), .. }) => Ok(Some(v)),
                    Some(_) => Err(CmdError::WrongType),
                }
            }

            #[doc = concat!("The ", $what, " at `key`, created empty when missing.")]
            pub fn $or_default(&mut self, key: &[u8]) -> Result<&mut $ty, CmdError> {
                // The type is checked before any write access: a write that fails with
                // WRONGTYPE must not count as a change to a WATCHed key.
                match self.get(key) {
                    None => {
                        self.insert(key, Entry::new(Value::$variant(Default::default())));
                    }
                    Some(Entry { value: Value::$variant(_), .. }) => {}
                    Some(_) => return Err(CmdError::WrongType),
                }
                match self.get_mut(key) {
                    Some(Entry { value: Value::$variant(v), .. }) => Ok(v),
                    _ => Err(CmdError::WrongType),
                }
            }
        }
    };
}

typed_access!(
    List,
    VecDeque<Vec<u8>>,
    get_list,
    get_list_mut,
    list_or_default,
    "list"
);
typed_access!(
    Hash,
    FieldMap,
    get_hash,
    get_hash_mut,
    hash_or_default,
    "hash"
);
typed_access!(Set, BytesSet, get_set, get_set_mut, set_or_default, "set");
typed_access!(
    ZSet,
    ZSet,
    get_zset,
    get_zset_mut,
    zset_or_default,
    "sorted set"
);
typed_access!(
    Stream,
    Stream,
    get_stream,
    get_stream_mut,
    stream_or_default,
    "stream"
);

impl Locked<'_> {
    /// Removes `key` if it holds an empty collection (Redis never keeps empty lists, hashes,
    /// sets or sorted sets); whether it did. Call after a command removed elements.
    pub fn drop_if_empty(&mut self, key: &[u8]) -> bool {
        let empty = match self.get(key).map(|e| &e.value) {
            Some(Value::List(v)) => v.is_empty(),
            Some(Value::Hash(v)) => v.is_empty(),
            Some(Value::Set(v)) => v.is_empty(),
            Some(Value::ZSet(v)) => v.is_empty(),
            _ => false,
        };
        if empty {
            self.remove(key);
        }
        empty
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key pays for an entry: a string's `Vec` is the largest variant, and the entry
    /// fits a 48-byte allocation (docs/PERFORMANCE.md, 1,000,000 keys).
    #[test]
    fn an_entry_is_forty_bytes() {
        assert_eq!(std::mem::size_of::<Value>(), 24);
        assert_eq!(std::mem::size_of::<Entry>(), 40);
    }

    fn deadlines(db: &Db, key: &[u8]) -> usize {
        lock(&db.shards[db.shard_of(key)]).deadlines.len()
    }

    /// Replacing, clearing or deleting a TTL leaves no pair behind in the deadline index
    /// (it once grew with every `SET k v EX n` of the same key).
    #[test]
    fn the_deadline_index_follows_ttl_changes() {
        let db = Db::default();
        let key = b"k";
        let with_ttl = |t| Entry::with_expiry(Value::Str(b"v".to_vec()), Some(t));
        let mut ks = db.lock([&key[..]], 0);
        for t in 1000..1100 {
            ks.insert(key, with_ttl(t));
        }
        drop(ks);
        assert_eq!(deadlines(&db, key), 1);
        let mut ks = db.lock([&key[..]], 0);
        assert!(ks.set_expiry(key, Some(5000)));
        assert!(ks.set_expiry(key, None));
        drop(ks);
        assert_eq!(deadlines(&db, key), 0);
        let mut ks = db.lock([&key[..]], 0);
        ks.insert(key, with_ttl(7000));
        assert!(ks.remove(key).is_some());
        drop(ks);
        assert_eq!(deadlines(&db, key), 0);
    }

    /// A read looks once when the shard holds no TTL, and still drops an expired key when it
    /// does (the index is what tells the two apart).
    #[test]
    fn reads_see_expiry_only_where_a_ttl_exists() {
        let db = Db::default();
        let (k, plain) = (&b"k"[..], &b"plain"[..]);
        let mut ks = db.lock([k, plain], 0);
        ks.insert(plain, Entry::new(Value::Str(b"v".to_vec())));
        ks.insert(k, Entry::with_expiry(Value::Str(b"v".to_vec()), Some(1000)));
        drop(ks);
        let mut ks = db.lock([k, plain], 999);
        assert!(ks.get(k).is_some() && ks.get(plain).is_some());
        drop(ks);
        let mut ks = db.lock([k, plain], 1000);
        assert!(ks.get(k).is_none(), "expired at its deadline");
        assert!(ks.get(plain).is_some());
        assert!(ks.get_mut(k).is_none());
        drop(ks);
        assert_eq!(
            deadlines(&db, k),
            1,
            "the stale pair goes with the active-expiry pass"
        );
        let mut ks = db.lock([k, plain], 2000);
        assert!(ks.get(plain).is_some());
    }
}

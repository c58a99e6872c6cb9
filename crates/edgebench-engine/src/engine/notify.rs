//! Clients blocked on keys (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN, BZPOPMAX,
//! BZMPOP, XREAD BLOCK, XREADGROUP BLOCK), engine side: who waits on
//! which key, the signal a write to such a key raises, and serving the waiters.
//!
//! The engine has no connections to park, so a transport (the RESP server) does the waiting:
//! it runs the command once through [`Engine::execute`]; when that gives the timeout reply
//! it describes the command as a [`BlockedCall`] (per key, the non-blocking command that
//! serves it from that key alone), registers it with [`Engine::block`], and awaits
//! [`BlockedCall::woken`] until [`BlockedCall::take_served`] has its reply or it gives up
//! with [`Engine::unblock`].
//!
//! Signal: every write goes through `Locked::get_mut` or `Locked::insert`, which call
//! [`BlockedClients::written`]. While nobody waits on a key of that key's shard, that costs
//! one relaxed load of a mask with a bit per shard. Otherwise a key with waiters goes on the
//! database's ready list and its first waiter is woken.
//!
//! Serving (Redis's `handleClientsBlockedOnKeys`): [`Engine::serve_blocked`] drains the ready
//! list and, key by key, runs the waiters' commands in the order they blocked (FIFO); for a
//! list it stops at the first that finds it empty. A served call gets its reply and leaves
//! every queue. The RESP server calls it after each command of a connection whose database
//! has ready keys, so, as in Redis, a blocked client is served before the pusher's next
//! command runs; a woken waiter calls it too, which covers writes by in-process callers and
//! to another database.
//!
//! Lock order: `serving` → a call's `outcome` → shards → `state`. The write hook runs under
//! shard locks and takes only `state`; nothing holding `state` takes another lock, and a
//! command never runs while `state` is held.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Notify;

use super::client::Client;
use super::cmd;
use super::handle::Engine;
use super::keyspace::{BytesMap, Db, Key, SHARDS};
use crate::resp::reply::Reply;

const _: () = assert!(
    SHARDS <= 64,
    "BlockedClients keeps one bit per shard in a u64"
);

/// What serves a blocked command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// BLPOP, BRPOP, BZPOPMIN, BZPOPMAX: a list or sorted set to pop from. An error (the
    /// key now holds another type) leaves the call waiting, as in Redis.
    Pop,
    /// BLMPOP, BZMPOP (`timeout numkeys key...`): like `Pop`.
    MultiPop,
    /// BLMOVE, BRPOPLPUSH: a list to pop from. An error about the destination's type is its reply, as
    /// in Redis 7.0 (nothing moves).
    Move,
    /// XREAD BLOCK: a stream with entries after the call's id.
    Read,
    /// XREADGROUP BLOCK: a stream with entries after its group's last-delivered id. A
    /// deleted group or stream ends the wait with an error, as in Redis.
    ReadGroup,
}

#[derive(Debug)]
enum Outcome {
    Waiting,
    Served(Reply),
    /// Served and taken, or given up.
    Gone,
}

/// One blocked command, shared by the transport that waits and the engine that serves it.
#[derive(Debug)]
pub struct BlockedCall {
    client_id: u64,
    db: usize,
    resp: u8,
    kind: BlockKind,
    /// Per key (each once, in the command's order): the non-blocking command that serves
    /// the call from that key alone.
    calls: Vec<(Key, Vec<Vec<u8>>)>,
    outcome: Mutex<Outcome>,
    wake: Notify,
}

impl BlockedCall {
    /// The blocked command of `client` (its database and protocol are used when it is
    /// served): `calls` pairs each key with the command serving it; a repeated key keeps
    /// its first command.
    pub fn new(
        client: &Client,
        kind: BlockKind,
        calls: Vec<(Key, Vec<Vec<u8>>)>,
    ) -> Arc<BlockedCall> {
        let mut unique: Vec<(Key, Vec<Vec<u8>>)> = Vec::with_capacity(calls.len());
        for (key, call) in calls {
            if !unique.iter().any(|(k, _)| *k == key) {
                unique.push((key, call));
            }
        }
        Arc::new(BlockedCall {
            client_id: client.id,
            db: client.db,
            resp: client.resp,
            kind,
            calls: unique,
            outcome: Mutex::new(Outcome::Waiting),
            wake: Notify::new(),
        })
    }

    /// The database the call waits in.
    pub fn db(&self) -> usize {
        self.db
    }

    /// Resolves when the call was served or one of its keys was written (a permit is kept
    /// if that happened before this is awaited). Then check [`BlockedCall::take_served`].
    pub async fn woken(&self) {
        self.wake.notified().await;
    }

    /// The reply, once the call was served (the call is then done).
    pub fn take_served(&self) -> Option<Reply> {
        let mut outcome = lock(&self.outcome);
        match std::mem::replace(&mut *outcome, Outcome::Gone) {
            Outcome::Served(reply) => Some(reply),
            other => {
                *outcome = other;
                None
            }
        }
    }
}

#[derive(Debug)]
struct State {
    /// Per key, its waiters in the order they blocked.
    waiters: BytesMap<VecDeque<Arc<BlockedCall>>>,
    /// Keys with waiters per shard: a shard's bit in `watched_shards` is set while > 0.
    per_shard: [usize; SHARDS],
    /// Keys with waiters written since the last serve, in write order, each once.
    ready: Vec<Key>,
    /// Calls registered.
    calls: usize,
}

impl Default for State {
    fn default() -> Self {
        State {
            waiters: BytesMap::default(),
            per_shard: [0; SHARDS],
            ready: Vec::new(),
            calls: 0,
        }
    }
}

/// The blocked clients of one database.
#[derive(Debug, Default)]
pub struct BlockedClients {
    /// Bit `i` set while a key of shard `i` has waiters: all a write costs when it is clear.
    watched_shards: AtomicU64,
    /// Set when `ready` is not empty, so a transport can check after each command cheaply.
    pending: AtomicBool,
    state: Mutex<State>,
    /// Held while serving: waiters are tried in FIFO order, and a call to
    /// [`Engine::serve_blocked`] returns only once every key signalled before it was served.
    serving: Mutex<()>,
}

impl BlockedClients {
    fn state(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }

    /// The write hook: `key` of `db` is being written (called under its shard's lock).
    #[inline]
    pub fn written(&self, db: &Db, key: &[u8]) {
        let mask = self.watched_shards.load(Ordering::Relaxed);
        if mask != 0 && mask & (1 << db.shard_of(key)) != 0 {
            self.signal(key);
        }
    }

    #[cold]
    fn signal(&self, key: &[u8]) {
        let mut state = self.state();
        let Some(first) = state.waiters.get(key).and_then(VecDeque::front) else {
            return;
        };
        first.wake.notify_one();
        if !state.ready.iter().any(|k| **k == *key) {
            state.ready.push(key.into());
        }
        self.pending.store(true, Ordering::Relaxed);
    }

    fn register(&self, db: &Db, call: &Arc<BlockedCall>) {
        let mut state = self.state();
        state.calls += 1;
        for (key, _) in &call.calls {
            let queue = state.waiters.entry(key.clone()).or_default();
            queue.push_back(Arc::clone(call));
            if queue.len() == 1 {
                let shard = db.shard_of(key);
                state.per_shard[shard] += 1;
                self.watched_shards.fetch_or(1 << shard, Ordering::Relaxed);
            }
        }
    }

    fn unregister(&self, db: &Db, call: &Arc<BlockedCall>) {
        let mut state = self.state();
        let mut found = false;
        for (key, _) in &call.calls {
            let Some(queue) = state.waiters.get_mut(&**key) else {
                continue;
            };
            let before = queue.len();
            queue.retain(|c| !Arc::ptr_eq(c, call));
            found |= queue.len() < before;
            if queue.is_empty() {
                state.waiters.remove(&**key);
                let shard = db.shard_of(key);
                state.per_shard[shard] -= 1;
                if state.per_shard[shard] == 0 {
                    self.watched_shards
                        .fetch_and(!(1 << shard), Ordering::Relaxed);
                }
            }
        }
        if found {
            state.calls -= 1;
        }
    }

    /// The keys clients wait on (SWAPDB signals those that exist after the swap).
    pub fn waited_keys(&self) -> Vec<Key> {
        self.state().waiters.keys().cloned().collect()
    }

    /// Whether keys with waiters were written and not served yet.
    pub fn has_ready(&self) -> bool {
        self.pending.load(Ordering::Relaxed)
    }

    /// How many calls are blocked.
    pub fn len(&self) -> usize {
        self.state().calls
    }

    /// Whether no call is blocked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What one try to serve a call from one key gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Attempt {
    Served,
    /// The key has nothing for it (an empty or missing list: nothing for later waiters).
    Nothing,
    /// Not served for another reason (no longer waiting, the key's type, an error).
    Skipped,
}

impl Engine {
    /// Registers a blocked call: from now on a write to one of its keys wakes or serves it.
    /// The caller then calls [`Engine::serve_blocked_call`], which covers a write that came
    /// between the command's first run and this registration.
    pub fn block(&self, call: &Arc<BlockedCall>) {
        let db = self.db(call.db);
        db.blocked().register(db, call);
    }

    /// Stops waiting: unregisters `call` and returns its reply if it was served meanwhile
    /// (a served reply wins over a timeout). Idempotent.
    pub fn unblock(&self, call: &Arc<BlockedCall>) -> Option<Reply> {
        let db = self.db(call.db);
        let reply = {
            let mut outcome = lock(&call.outcome);
            match std::mem::replace(&mut *outcome, Outcome::Gone) {
                Outcome::Served(reply) => Some(reply),
                Outcome::Waiting | Outcome::Gone => None,
            }
        };
        db.blocked().unregister(db, call);
        // If a write woke this call to serve its keys, others may wait on them too.
        if db.blocked().has_ready() {
            self.serve_blocked(call.db);
        }
        reply
    }

    /// Whether database `db` has written keys whose waiters were not served yet.
    pub fn has_ready_keys(&self, db: usize) -> bool {
        self.db(db).blocked().has_ready()
    }

    /// How many calls are blocked, in all databases.
    pub fn blocked_clients(&self) -> usize {
        self.inner().dbs.iter().map(|db| db.blocked().len()).sum()
    }

    /// Serves the waiters of every written key of database `db`, in FIFO order per key,
    /// including keys written by the commands it runs (BLMOVE into a list others wait on).
    pub fn serve_blocked(&self, db: usize) {
        let blocked = self.db(db).blocked();
        let _serving = lock(&blocked.serving);
        self.serve_ready(db);
    }

    /// Serves what is ready in database `db`, then tries `call` on each of its keys: the
    /// check a call needs once registered (a key may have been written before).
    pub fn serve_blocked_call(&self, call: &Arc<BlockedCall>) {
        let blocked = self.db(call.db).blocked();
        let _serving = lock(&blocked.serving);
        self.serve_ready(call.db);
        for (key, _) in &call.calls {
            if self.attempt(call, key, &mut None) == Attempt::Served {
                return;
            }
        }
    }

    /// The serving loop; `serving` is held.
    fn serve_ready(&self, db: usize) {
        let blocked = self.db(db).blocked();
        loop {
            // `pending` stays set until the ready list is found empty, after the keys taken
            // here are served: a writer on another thread that checks it after its command
            // then waits on `serving` for those keys, rather than running its next command
            // while their waiters are still being served.
            let keys = {
                let mut state = blocked.state();
                let keys = std::mem::take(&mut state.ready);
                if keys.is_empty() {
                    blocked.pending.store(false, Ordering::Relaxed);
                }
                keys
            };
            if keys.is_empty() {
                return;
            }
            for key in keys {
                self.serve_key(db, &key);
            }
        }
    }

    fn serve_key(&self, db: usize, key: &[u8]) {
        let waiters: Vec<Arc<BlockedCall>> = match self.db(db).blocked().state().waiters.get(key) {
            Some(queue) => queue.iter().cloned().collect(),
            None => return,
        };
        let mut list_empty = false;
        let mut is_list = None;
        for call in &waiters {
            let list = matches!(call.kind, BlockKind::Pop | BlockKind::Move);
            if list && list_empty {
                continue;
            }
            if self.attempt(call, key, &mut is_list) == Attempt::Nothing && list {
                list_empty = true;
            }
        }
    }

    /// Runs `call`'s command for `key` and, if it got something, hands over the reply.
    /// `is_list` caches the key's type check (BLMOVE needs it) across the waiters of a key.
    fn attempt(&self, call: &Arc<BlockedCall>, key: &[u8], is_list: &mut Option<bool>) -> Attempt {
        let mut outcome = lock(&call.outcome);
        if !matches!(*outcome, Outcome::Waiting) {
            return Attempt::Skipped;
        }
        let Some((_, args)) = call.calls.iter().find(|(k, _)| **k == *key) else {
            return Attempt::Skipped;
        };
        let Some((index, spec)) = args.first().and_then(|name| cmd::lookup_indexed(name)) else {
            return Attempt::Skipped;
        };
        // BLMOVE's errors are replies, but only once the source is a list: Redis serves a
        // key only with a value of the type the command waits for.
        if call.kind == BlockKind::Move
            && !*is_list.get_or_insert_with(|| self.key_type(call.db, key) == Some("list"))
        {
            return Attempt::Skipped;
        }
        let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let mut client = Client::new(call.client_id);
        client.db = call.db;
        client.resp = call.resp;
        let reply = match call.kind {
            BlockKind::ReadGroup => cmd::stream::serve_blocked_readgroup(self, &mut client, &args)
                .unwrap_or(Reply::NilArray),
            _ => cmd::run(self, &mut client, index, spec, &args),
        };
        match reply {
            Reply::Nil | Reply::NilArray => Attempt::Nothing,
            Reply::Error(_) if !matches!(call.kind, BlockKind::Move | BlockKind::ReadGroup) => {
                Attempt::Skipped
            }
            reply => {
                *outcome = Outcome::Served(reply);
                drop(outcome);
                let db = self.db(call.db);
                db.blocked().unregister(db, call);
                call.wake.notify_one();
                Attempt::Served
            }
        }
    }

    fn key_type(&self, db: usize, key: &[u8]) -> Option<&'static str> {
        let mut locked = self.db(db).lock(std::iter::once(key), self.now_ms());
        locked.get(key).map(|entry| entry.value.type_name())
    }
}

/// A panic under these locks leaves the registry consistent (each update is whole), so a
/// poisoned lock is still usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

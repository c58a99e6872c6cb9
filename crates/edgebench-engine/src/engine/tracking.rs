//! Client-side caching (CLIENT TRACKING), engine side: which client read which key, and the
//! invalidation messages a write to such a key sends, as Redis 7.0 does.
//!
//! Two modes, as in Redis:
//! - **Default**: after a read-only command, its keys are remembered for the client (all of
//!   them, or under OPTIN only after `CLIENT CACHING yes`, under OPTOUT unless `CLIENT
//!   CACHING no`). The first write to such a key sends the client one `invalidate [key]`
//!   and forgets the pair: the client reads the key again to be told again. The table is
//!   keyed by name alone, whatever the database, as Redis's is.
//! - **BCAST**: the client names prefixes (the empty one matches every key) and is told of
//!   every key written under them, without reading them first; the keys a command wrote are
//!   sent after it, one message per prefix.
//!
//! A client that redirects (`REDIRECT id`) has its messages go to that client: as a RESP3
//! push if that client speaks RESP3, or as a Pub/Sub message on `__redis__:invalidate` if it
//! is subscribed; if it is gone, the tracking client gets `tracking-redir-broken` (RESP3).
//! Messages wait in the receiving client's [`ClientShared`] queue of [`Push`]es; its server
//! writes them before its next reply, or when it is idle, after the reply of the command
//! that caused them when the receiver caused them itself (Redis's pending invalidations).
//! NOLOOP leaves out what the client itself wrote.
//!
//! Cost: a write looks at one relaxed flag while nobody tracks anything. A tracked write
//! takes the table's lock under the writer's shard locks; nothing holding the table's lock
//! takes a shard lock, and the client registry's lock and a client's push queue are taken
//! inside it, never the other way round.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock, PoisonError, Weak};

use super::client::Push;
use super::cmd::server::ClientRegistry;

thread_local! {
    /// The client whose command runs on this thread (0: none, e.g. active expiry): NOLOOP
    /// leaves out its own writes.
    static CURRENT: Cell<u64> = const { Cell::new(0) };
}

/// Runs `f` as client `id`'s command on this thread (for NOLOOP), restoring the caller's.
pub(crate) fn as_client<T>(id: u64, f: impl FnOnce() -> T) -> T {
    let before = CURRENT.with(|c| c.replace(id));
    let out = f();
    CURRENT.with(|c| c.set(before));
    out
}

/// How one client tracks (CLIENT TRACKING ON's options).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mode {
    /// The client its messages go to (0: itself).
    pub redirect: u64,
    /// BCAST: told of every key under its prefixes.
    pub bcast: bool,
    /// OPTIN: remembers keys only after `CLIENT CACHING yes`.
    pub optin: bool,
    /// OPTOUT: remembers keys unless `CLIENT CACHING no`.
    pub optout: bool,
    /// NOLOOP: not told of its own writes.
    pub noloop: bool,
    /// Its redirection target went away (TRACKINGINFO's `broken_redirect`).
    pub broken: bool,
    /// Its BCAST prefixes, in the order given.
    pub prefixes: Vec<Vec<u8>>,
}

/// Keys written under a prefix, with the client that wrote each (0: none).
type Written = BTreeMap<Vec<u8>, u64>;

/// One BCAST prefix: who listens, and the keys written under it since the last message
/// (with the client that wrote each, 0 for none, for NOLOOP).
#[derive(Debug, Default)]
struct Prefix {
    clients: Vec<u64>,
    keys: Written,
}

#[derive(Debug, Default)]
struct State {
    /// Key → the clients that read it since its last write.
    keys: HashMap<Vec<u8>, Vec<u64>>,
    /// Client-key pairs in `keys` (INFO's `tracking_total_items`).
    items: usize,
    prefixes: BTreeMap<Vec<u8>, Prefix>,
    /// The clients with tracking on.
    clients: HashMap<u64, Mode>,
}

impl State {
    /// Whether a write has anything to look at.
    fn active(&self) -> bool {
        !self.keys.is_empty() || !self.prefixes.is_empty()
    }
}

/// What INFO reports of the table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrackingStats {
    /// Clients with tracking on.
    pub clients: usize,
    /// Keys remembered.
    pub keys: usize,
    /// Client-key pairs remembered.
    pub items: usize,
    /// BCAST prefixes.
    pub prefixes: usize,
}

/// The engine's tracking table (one per engine, shared by its databases).
#[derive(Debug)]
pub struct Tracking {
    /// Whether any key is remembered or any prefix listened to: a write looks no further
    /// while it is false.
    active: AtomicBool,
    /// BCAST keys wait to be sent.
    pending: AtomicBool,
    /// `tracking-table-max-keys` (0: no limit).
    max_keys: AtomicU64,
    state: Mutex<State>,
    /// Where the receiving clients are found.
    registry: OnceLock<Weak<ClientRegistry>>,
}

impl Default for Tracking {
    fn default() -> Self {
        Tracking {
            active: AtomicBool::new(false),
            pending: AtomicBool::new(false),
            max_keys: AtomicU64::new(1_000_000),
            state: Mutex::new(State::default()),
            registry: OnceLock::new(),
        }
    }
}

impl Tracking {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock means a panic elsewhere; the maps stay whole.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Binds the registry messages are delivered through (once, when the engine is made).
    pub(crate) fn bind_registry(&self, registry: Weak<ClientRegistry>) {
        let _ = self.registry.set(registry);
    }

    /// Sets `tracking-table-max-keys`; keys over it are evicted (with their messages) now.
    pub(crate) fn set_max_keys(&self, max: u64) {
        self.max_keys.store(max, Ordering::Relaxed);
        self.limit();
    }

    /// The tracking mode of client `id`, if it tracks.
    pub fn mode(&self, id: u64) -> Option<Mode> {
        self.lock().clients.get(&id).cloned()
    }

    /// Turns tracking on for client `id` with `mode`, its prefixes added to those it has
    /// (the caller checked the options, as CLIENT TRACKING does).
    pub(crate) fn enable(&self, id: u64, mut mode: Mode) {
        let mut st = self.lock();
        let old = st.clients.remove(&id).unwrap_or_default();
        if mode.bcast {
            let mut prefixes = old.prefixes;
            if mode.prefixes.is_empty() && prefixes.is_empty() {
                mode.prefixes.push(Vec::new());
            }
            for p in std::mem::take(&mut mode.prefixes) {
                if !prefixes.contains(&p) {
                    prefixes.push(p);
                }
            }
            for p in &prefixes {
                let entry = st.prefixes.entry(p.clone()).or_default();
                if !entry.clients.contains(&id) {
                    entry.clients.push(id);
                }
            }
            mode.prefixes = prefixes;
        }
        st.clients.insert(id, mode);
        self.active.store(st.active(), Ordering::Relaxed);
    }

    /// Turns tracking off for client `id` (also when it disconnects). The keys it read stay
    /// in the table until written, as in Redis; they are sent to nobody.
    pub(crate) fn disable(&self, id: u64) {
        let mut st = self.lock();
        let Some(mode) = st.clients.remove(&id) else {
            return;
        };
        for p in &mode.prefixes {
            if let Some(entry) = st.prefixes.get_mut(p) {
                entry.clients.retain(|&c| c != id);
                if entry.clients.is_empty() {
                    st.prefixes.remove(p);
                }
            }
        }
        self.active.store(st.active(), Ordering::Relaxed);
    }

    /// Remembers that client `id` read `keys`; evicts keys over the table's limit.
    pub(crate) fn remember<'k>(&self, id: u64, keys: impl IntoIterator<Item = &'k [u8]>) {
        let over = {
            let mut st = self.lock();
            for key in keys {
                let ids = st.keys.entry(key.to_vec()).or_default();
                if !ids.contains(&id) {
                    ids.push(id);
                    st.items += 1;
                }
            }
            self.active.store(st.active(), Ordering::Relaxed);
            self.over_limit(&st)
        };
        if over {
            self.limit();
        }
    }

    fn over_limit(&self, st: &State) -> bool {
        let max = self.max_keys.load(Ordering::Relaxed);
        max > 0 && st.keys.len() as u64 > max
    }

    /// Evicts keys until the table holds at most `tracking-table-max-keys`, each sent to
    /// its readers as if it had been written (Redis's `trackingLimitUsedSlots`).
    pub(crate) fn limit(&self) {
        let max = self.max_keys.load(Ordering::Relaxed);
        if max == 0 {
            return;
        }
        let mut st = self.lock();
        while st.keys.len() as u64 > max {
            let Some(key) = st.keys.keys().next().cloned() else {
                break;
            };
            self.invalidate_key(&mut st, &key, 0);
        }
        self.active.store(st.active(), Ordering::Relaxed);
    }

    /// A write to `key` (under its shard's lock): its readers are told, and it is noted for
    /// the BCAST prefixes it falls under.
    pub(crate) fn modified(&self, key: &[u8]) {
        if !self.active.load(Ordering::Relaxed) {
            return;
        }
        let current = CURRENT.with(Cell::get);
        let mut st = self.lock();
        let mut noted = false;
        for (prefix, entry) in st.prefixes.iter_mut() {
            if key.starts_with(prefix) {
                entry.keys.insert(key.to_vec(), current);
                noted = true;
            }
        }
        if noted {
            self.pending.store(true, Ordering::Relaxed);
        }
        self.invalidate_key(&mut st, key, current);
        self.active.store(st.active(), Ordering::Relaxed);
    }

    /// Tells the readers of `key` (written by client `current`, 0 for none) and forgets them.
    fn invalidate_key(&self, st: &mut State, key: &[u8], current: u64) {
        let Some(ids) = st.keys.remove(key) else {
            return;
        };
        st.items -= ids.len();
        for id in ids {
            let Some(mode) = st.clients.get(&id) else {
                continue;
            };
            // A client that switched to BCAST is not told of keys it read before.
            if mode.bcast || (mode.noloop && id == current) {
                continue;
            }
            self.send(st, id, Some(vec![key.to_vec()]));
        }
    }

    /// Sends the BCAST keys collected since the last call (after each command, and after
    /// active expiry), one message per prefix and client.
    pub(crate) fn send_broadcasts(&self) {
        // A load first: the swap writes the shared line, and nothing is pending for almost
        // every command.
        if !self.pending.load(Ordering::Relaxed) || !self.pending.swap(false, Ordering::Relaxed) {
            return;
        }
        let mut st = self.lock();
        let batches: Vec<(Vec<u64>, Written)> = st
            .prefixes
            .values_mut()
            .filter(|p| !p.keys.is_empty())
            .map(|p| (p.clients.clone(), std::mem::take(&mut p.keys)))
            .collect();
        for (clients, keys) in batches {
            for id in clients {
                let noloop = st.clients.get(&id).is_some_and(|m| m.noloop);
                let list: Vec<Vec<u8>> = keys
                    .iter()
                    .filter(|(_, &by)| !(noloop && by == id))
                    .map(|(k, _)| k.clone())
                    .collect();
                if !list.is_empty() {
                    self.send(&mut st, id, Some(list));
                }
            }
        }
    }

    /// FLUSHALL / FLUSHDB: every tracking client is told that every key changed, and the
    /// table forgets every key (as Redis's, whichever database was flushed).
    pub(crate) fn flushed(&self) {
        let mut st = self.lock();
        let ids: Vec<u64> = st.clients.keys().copied().collect();
        for id in ids {
            self.send(&mut st, id, None);
        }
        st.keys.clear();
        st.items = 0;
        self.active.store(st.active(), Ordering::Relaxed);
    }

    /// Sends `keys` (`None`: all) to tracking client `id`, or to the client it redirects to.
    fn send(&self, st: &mut State, id: u64, keys: Option<Vec<Vec<u8>>>) {
        let Some(registry) = self.registry.get().and_then(Weak::upgrade) else {
            return;
        };
        let Some(mode) = st.clients.get_mut(&id) else {
            return;
        };
        if mode.redirect == 0 {
            if let Some(client) = registry.get(id) {
                client.push(Push::Invalidate {
                    keys,
                    redirected: false,
                });
            }
            return;
        }
        match registry.get(mode.redirect) {
            Some(target) => target.push(Push::Invalidate {
                keys,
                redirected: true,
            }),
            None => {
                mode.broken = true;
                let redirect = mode.redirect;
                if let Some(client) = registry.get(id) {
                    client.push(Push::RedirectBroken(redirect));
                }
            }
        }
    }

    /// INFO's figures.
    pub fn stats(&self) -> TrackingStats {
        let st = self.lock();
        TrackingStats {
            clients: st.clients.len(),
            keys: st.keys.len(),
            items: st.items,
            prefixes: st.prefixes.len(),
        }
    }
}

/// Whether prefixes `a` and `b` overlap (one starts the other), which Redis refuses among
/// one client's BCAST prefixes.
pub(crate) fn overlap(a: &[u8], b: &[u8]) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

//! [`Engine`], the handle every caller holds: the databases, the clock, the counters and the
//! server state behind one `Arc`, and the background thread of active expiry. Commands reach
//! it through `Engine::inner`; the engine's `mod.rs` only re-exports it.
//!
//! This module and the ones it owns or runs import each other, on purpose: [`Engine::execute`]
//! dispatches to [`cmd`] and every command gets the engine; [`Engine::client`] makes a
//! [`Client`], whose WATCHes keep the engine to release their keys on drop; `Inner` owns the
//! server state (`cmd::server::state`), which makes clients and adds the configuration API to
//! the engine; and each database owns its registry of blocked clients ([`super::notify`]),
//! which the engine serves by running commands.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::client::Client;
use super::cmd;
use super::feed::Feed;
use super::keyevents::KeyEvents;
use super::keyspace::Db;
use super::persist::Persist;
use super::types::counters::Counter;
use super::types::encoding::Limits;
use crate::resp::reply::Reply;

/// Databases (SELECT 0–15), as in a default redis.conf.
pub const DATABASES: usize = 16;

/// How often the background thread removes expired keys (Redis's `hz 10`).
const ACTIVE_EXPIRY_INTERVAL: Duration = Duration::from_millis(100);

/// Where the engine reads the time.
#[derive(Clone)]
pub enum EngineClock {
    /// The system clock.
    System,
    /// A clock the caller sets (ms since the epoch), for deterministic TTL tests.
    Manual(Arc<AtomicU64>),
}

impl EngineClock {
    fn now_ms(&self) -> u64 {
        match self {
            EngineClock::System => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            EngineClock::Manual(t) => t.load(Ordering::Relaxed),
        }
    }
}

/// Counters INFO reports.
#[derive(Debug, Default)]
pub struct Stats {
    /// Commands executed (striped by thread: every command bumps it).
    pub commands: Counter,
    /// Connections accepted (clients created).
    pub connections: AtomicU64,
    /// Keys removed by expiry.
    pub expired_keys: AtomicU64,
}

pub(crate) struct Inner {
    pub(crate) dbs: Vec<Db>,
    pub(crate) clock: EngineClock,
    pub(crate) next_client_id: AtomicU64,
    pub(crate) stats: Stats,
    pub(crate) started: std::time::Instant,
    /// CONFIG parameters, command statistics, live clients (see `cmd::server`).
    pub(crate) server: cmd::server::state::ServerState,
    /// The Lua VM, script cache, function libraries and busy-script gate.
    #[cfg(feature = "scripting")]
    pub(crate) scripting: cmd::script::Scripting,
    /// RDB and append-only file state (see `persist`).
    pub(crate) persist: Persist,
    /// The background freer of UNLINK's large values (see `lazyfree`).
    pub(crate) lazyfree: super::lazyfree::LazyFree,
    /// `maxmemory` and its policy, as commands read them (see `evict`).
    pub(crate) eviction: super::evict::Eviction,
    /// Client-side caching: who read which key (CLIENT TRACKING).
    pub(crate) tracking: Arc<super::tracking::Tracking>,
    /// Keyspace notifications: the classes in force and where they go (see `keyevents`).
    pub(crate) events: Arc<KeyEvents>,
    stop: AtomicBool,
}

/// The engine. Cloning is cheap and shares the keyspace.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

impl Default for Engine {
    fn default() -> Self {
        Engine::new()
    }
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl Engine {
    /// An empty engine on the system clock, with active expiry in a background thread that
    /// ends when the last clone of the engine is dropped.
    pub fn new() -> Engine {
        let engine = Engine::build(EngineClock::System);
        let weak: Weak<Inner> = Arc::downgrade(&engine.inner);
        let (tx, rx) = std::sync::mpsc::channel::<super::persist::Request>();
        // If the thread cannot start, keys still expire lazily on access, and background
        // saves fork from the thread that asks.
        let spawned = std::thread::Builder::new()
            .name("edgebench-expiry".into())
            .spawn(move || {
                let mut next = std::time::Instant::now() + ACTIVE_EXPIRY_INTERVAL;
                loop {
                    let wait = next.saturating_duration_since(std::time::Instant::now());
                    let request = match rx.recv_timeout(wait) {
                        Ok(r) => Some(r),
                        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
                        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                    };
                    let Some(inner) = weak.upgrade() else { return };
                    if inner.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let engine = Engine { inner };
                    if let Some(r) = request {
                        engine.serve_request(r);
                        continue;
                    }
                    next = std::time::Instant::now() + ACTIVE_EXPIRY_INTERVAL;
                    engine.expire_cycle();
                    engine.persistence_cron();
                }
            });
        if spawned.is_ok() {
            engine.set_cron(tx);
        }
        engine
    }

    /// An empty engine on a manual clock and without the background thread: the caller
    /// moves the clock and calls [`Engine::expire_cycle`].
    pub fn with_clock(now_ms: Arc<AtomicU64>) -> Engine {
        Engine::build(EngineClock::Manual(now_ms))
    }

    fn build(clock: EngineClock) -> Engine {
        // One set of encoding limits for every database, as CONFIG sets them server-wide,
        // one feed for the append-only file, and one notification state.
        let limits = Arc::new(Limits::default());
        let feed = Arc::new(Feed::default());
        let tracking = Arc::new(super::tracking::Tracking::default());
        let events = Arc::new(KeyEvents::default());
        let engine = Engine {
            inner: Arc::new(Inner {
                dbs: (0..DATABASES)
                    .map(|i| {
                        let events = Arc::clone(&events);
                        Db::numbered(i, Arc::clone(&limits), Arc::clone(&feed), events)
                            .tracked_by(Arc::clone(&tracking))
                    })
                    .collect(),
                clock,
                next_client_id: AtomicU64::new(1),
                stats: Stats::default(),
                started: std::time::Instant::now(),
                server: cmd::server::state::ServerState::default(),
                #[cfg(feature = "scripting")]
                scripting: cmd::script::Scripting::default(),
                persist: Persist::default(),
                eviction: super::evict::Eviction::default(),
                lazyfree: super::lazyfree::LazyFree::default(),
                tracking,
                events,
                stop: AtomicBool::new(false),
            }),
        };
        engine
            .inner
            .tracking
            .bind_registry(Arc::downgrade(&engine.inner.server.registry));
        // `dir` is where the engine was started, as redis-server's.
        if let Ok(cwd) = std::env::current_dir() {
            let _ = engine.configure("dir", &cwd.to_string_lossy());
        }
        engine
    }

    /// Active expiry: removes every key whose TTL has passed, in every database.
    pub fn expire_cycle(&self) -> usize {
        // (Active expiry feeds its `DEL`s to the append-only file under the shards' locks,
        // through each database's feed.)
        let now = self.now_ms();
        let started = std::time::Instant::now();
        let n = self.inner.dbs.iter().map(|db| db.expire_due(now)).sum();
        // A cycle that freed a large value shows in the latency monitor, as Redis's does.
        let ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.inner.server.slowlog.event("expire-cycle", ms);
        // Expired keys under BCAST prefixes, and a table over its limit (Redis's cron).
        self.inner.tracking.send_broadcasts();
        self.inner.tracking.limit();
        self.inner
            .stats
            .expired_keys
            .fetch_add(n as u64, Ordering::Relaxed);
        n
    }

    /// The engine's time, ms since the Unix epoch.
    pub fn now_ms(&self) -> u64 {
        self.inner.clock.now_ms()
    }

    /// Database `index` (0–15), for the typed API.
    ///
    /// # Panics
    /// If `index >= DATABASES`.
    pub fn db(&self, index: usize) -> &Db {
        &self.inner.dbs[index]
    }

    /// Counters.
    pub fn stats(&self) -> &Stats {
        &self.inner.stats
    }

    pub(crate) fn inner(&self) -> &Inner {
        &self.inner
    }

    /// A new client (one connection's state: selected db, MULTI queue, name, protocol).
    pub fn client(&self) -> Client {
        self.inner.stats.connections.fetch_add(1, Ordering::Relaxed);
        let id = self.inner.next_client_id.fetch_add(1, Ordering::Relaxed);
        let mut client = self.inner.server.new_client(id);
        client.watched.bind(self.clone());
        client
    }

    /// Sets or clears the password clients must send with AUTH (CONFIG `requirepass`).
    /// Clients created while a password is set start unauthenticated; existing clients keep
    /// their state, as in Redis.
    pub fn set_requirepass(&self, password: Option<String>) {
        self.inner.server.set_requirepass(password);
    }

    /// Executes one command for `client`. Never panics on any input. With the append-only
    /// file on, what the command fed is written before this returns (and synced under
    /// `appendfsync always`), unless the client defers that to its server
    /// ([`Client::aof_deferred`]).
    pub fn execute(&self, client: &mut Client, args: &[&[u8]]) -> Reply {
        let reply = super::tracking::as_client(client.id, || cmd::execute(self, client, args));
        if !client.aof_deferred && self.feed().on() {
            self.flush_aof();
        }
        // CLIENT CACHING holds for one command, or for a whole transaction: Redis keeps it
        // through CLIENT's own subcommands and while MULTI queues.
        if client.caching
            && !client.in_multi()
            && !args
                .first()
                .is_some_and(|a| a.eq_ignore_ascii_case(b"client"))
        {
            client.caching = false;
        }
        // BCAST keys this command wrote go out after it (Redis's `beforeSleep`).
        self.inner.tracking.send_broadcasts();
        reply
    }

    /// The client-side caching table (CLIENT TRACKING).
    pub fn tracking(&self) -> &super::tracking::Tracking {
        &self.inner.tracking
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

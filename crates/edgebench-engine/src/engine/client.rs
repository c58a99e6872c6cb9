//! One connection's state: what Redis keeps per client.
//!
//! The engine knows no sockets: a RESP server fills in [`Client::addr`] and [`Client::laddr`]
//! after [`Engine::client`](crate::engine::handle::Engine::client), so CLIENT INFO and CLIENT LIST can show
//! them; an in-process client leaves them empty.
//!
//! Each `Client` value counts as one connected client (INFO's `connected_clients`) from its
//! creation until it is dropped: the server drops a connection's client when the connection
//! closes.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::keyspace::Key;

/// A client: the selected database, MULTI queue, WATCHed keys, name and protocol.
#[derive(Debug, Clone)]
pub struct Client {
    /// CLIENT ID.
    pub id: u64,
    /// The selected database (SELECT).
    pub db: usize,
    /// Protocol version: 2 or 3 (HELLO).
    pub resp: u8,
    /// CLIENT SETNAME.
    pub name: Option<Vec<u8>>,
    /// CLIENT SETINFO lib-name / lib-ver.
    pub lib_name: Option<Vec<u8>>,
    /// CLIENT SETINFO lib-ver.
    pub lib_ver: Option<Vec<u8>>,
    /// Whether AUTH succeeded (or no password was required when the client connected, or
    /// when it last ran RESET).
    pub authenticated: bool,
    /// Commands queued after MULTI; `None` outside a transaction.
    pub multi: Option<Vec<Vec<Vec<u8>>>>,
    /// A queued command was rejected (unknown, wrong arity): EXEC must fail with EXECABORT.
    pub multi_dirty: bool,
    /// WATCHed keys, released when cleared or dropped.
    pub watched: Watches,
    /// Set by QUIT: the server closes the connection after the reply.
    pub closing: bool,
    /// The peer's address as CLIENT LIST shows it (`127.0.0.1:52110`, or `/path/sock:0` for
    /// a Unix socket), set by the server; `None` for an in-process client.
    pub addr: Option<String>,
    /// The local address the client connected to, same format; set by the server.
    pub laddr: Option<String>,
    /// CLIENT NO-EVICT ON (accepted and shown in the flags; the engine never evicts).
    pub no_evict: bool,
    /// CLIENT NO-TOUCH ON (accepted and shown in the flags; the engine keeps no LRU clock).
    pub no_touch: bool,
    /// When the client was created (CLIENT LIST's `age`).
    pub created: Instant,
    /// Counts this client in INFO's `connected_clients` while it lives.
    pub(crate) live: LiveClient,
}

impl Client {
    pub(crate) fn new(id: u64) -> Client {
        Client {
            id,
            db: 0,
            resp: 2,
            name: None,
            lib_name: None,
            lib_ver: None,
            authenticated: true,
            multi: None,
            multi_dirty: false,
            watched: Watches::default(),
            closing: false,
            addr: None,
            laddr: None,
            no_evict: false,
            no_touch: false,
            created: Instant::now(),
            live: LiveClient::default(),
        }
    }

    /// Whether a MULTI is open.
    pub fn in_multi(&self) -> bool {
        self.multi.is_some()
    }
}

/// Membership in the engine's count of live clients: +1 when made (or cloned), -1 when
/// dropped. A client made outside an engine counts nowhere.
#[derive(Debug, Default)]
pub(crate) struct LiveClient(Option<Arc<AtomicU64>>);

impl LiveClient {
    /// Counts one more client in `counter` until this value is dropped.
    pub(crate) fn counted_in(counter: &Arc<AtomicU64>) -> LiveClient {
        counter.fetch_add(1, Ordering::Relaxed);
        LiveClient(Some(Arc::clone(counter)))
    }
}

impl Clone for LiveClient {
    fn clone(&self) -> Self {
        match &self.0 {
            Some(counter) => LiveClient::counted_in(counter),
            None => LiveClient(None),
        }
    }
}

impl Drop for LiveClient {
    fn drop(&mut self) {
        if let Some(counter) = &self.0 {
            counter.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// A client's WATCHed keys: (db, key, version when watched). Each entry holds one watch on
/// its key in the keyspace ([`super::Locked::watch`]); clearing or dropping this value gives
/// them back, so a key's version counter lives exactly as long as someone watches it.
///
/// Never drop or clear it while holding a shard lock: giving a watch back locks the key's
/// shard. A clone watches nothing (WATCH state belongs to one connection).
#[derive(Debug, Default)]
pub struct Watches {
    keys: Vec<(usize, Key, u64)>,
    engine: Option<crate::engine::handle::Engine>,
}

impl Watches {
    /// Releases watches into `engine` from now on (set when the engine makes the client).
    pub(crate) fn bind(&mut self, engine: crate::engine::handle::Engine) {
        self.engine = Some(engine);
    }

    /// Records one watch (already counted in the keyspace by [`super::Locked::watch`]).
    pub fn push(&mut self, db: usize, key: Key, version: u64) {
        self.keys.push((db, key, version));
    }

    /// The watched (db, key, version) triples.
    pub fn iter(&self) -> impl Iterator<Item = &(usize, Key, u64)> {
        self.keys.iter()
    }

    /// Whether nothing is watched.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Gives every watch back (UNWATCH, DISCARD, RESET).
    pub fn clear(&mut self) {
        let Some(engine) = &self.engine else {
            self.keys.clear();
            return;
        };
        let now = engine.now_ms();
        for (db, key, _) in self.keys.drain(..) {
            engine.db(db).lock([&key[..]], now).unwatch(&key);
        }
    }

    /// Moves the watches out (EXEC checks them, then drops them: that releases them).
    pub fn take(&mut self) -> Watches {
        Watches {
            keys: std::mem::take(&mut self.keys),
            engine: self.engine.clone(),
        }
    }
}

impl Clone for Watches {
    fn clone(&self) -> Self {
        Watches {
            keys: Vec::new(),
            engine: self.engine.clone(),
        }
    }
}

impl Drop for Watches {
    fn drop(&mut self) {
        self.clear();
    }
}

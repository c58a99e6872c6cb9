//! One connection's state: what Redis keeps per client.
//!
//! The engine knows no sockets: a RESP server fills in [`Client::addr`] and [`Client::laddr`]
//! after [`Engine::client`](crate::engine::handle::Engine::client), so CLIENT INFO and CLIENT LIST can show
//! them; an in-process client leaves them empty.
//!
//! Each `Client` value counts as one connected client (INFO's `connected_clients`) from its
//! creation until it is dropped: the server drops a connection's client when the connection
//! closes.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Instant;

use tokio::sync::Notify;

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
    /// The ACL user the client runs as (`default` until AUTH names another); `None` for a
    /// client made outside an engine, which may run anything.
    pub(crate) user: Option<Arc<crate::engine::acl::UserHandle>>,
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
    /// CLIENT REPLY OFF: the server sends no replies until CLIENT REPLY ON.
    pub reply_off: bool,
    /// CLIENT REPLY SKIP: the server sends no reply to the next command.
    pub reply_skip_next: bool,
    /// What other clients see of this one (CLIENT LIST, KILL, UNBLOCK), shared with the
    /// engine's registry of live clients.
    pub shared: Arc<ClientShared>,
    /// Counts this client in INFO's `connected_clients` while it lives.
    pub(crate) live: LiveClient,
    /// Set by a server that writes the append-only file once per batch of requests
    /// ([`Engine::flush_aof`](crate::engine::Engine::flush_aof) before the batch's replies):
    /// [`Engine::execute`](crate::engine::Engine::execute) then leaves it to the server.
    pub aof_deferred: bool,
    /// Writes of the script or transaction running, waiting to be fed as one (see
    /// `cmd::propagate`), with their databases.
    pub(crate) prop: Vec<(usize, Vec<Vec<u8>>)>,
    /// How many scripts or transactions are running for this client (nested: a script
    /// inside EXEC).
    pub(crate) prop_hold: u32,
    /// CLIENT TRACKING is on (in either mode).
    pub(crate) tracking: bool,
    /// CLIENT TRACKING is on, in default mode (not BCAST): read-only commands remember
    /// their keys. The whole mode lives in the engine's tracking table.
    pub(crate) tracking_reads: bool,
    /// Under OPTIN / OPTOUT: when keys are remembered (see [`Client::remembers_reads`]).
    pub(crate) tracking_optin: bool,
    pub(crate) tracking_optout: bool,
    /// CLIENT CACHING yes|no ran: it holds for the next command (or the transaction).
    pub(crate) caching: bool,
    /// A script of this client called a read-only command: its declared keys are
    /// remembered when it ends (as Redis tracks a script's keys).
    pub(crate) script_read: bool,
    /// A script of this client is running: the commands it calls see it (SORT orders a
    /// set BY a constant, as Redis does for its script client).
    pub(crate) in_script: bool,
    /// Memory was over `maxmemory` when the running command was dispatched (Redis's
    /// `pre_command_oom_state`): a script it runs is refused its first command that may
    /// grow memory.
    pub(crate) over_maxmemory: bool,
    /// The error the running script replies with was counted in INFO errorstats when the
    /// command in it failed: the script's call counts only as failed (see `cmd::run`).
    pub(crate) error_counted: bool,
    /// Set by a server that ran `maxmemory` eviction before dispatching this command (so
    /// that what it invalidated goes before the reply): whether there was room then.
    /// [`Engine::execute`](crate::engine::Engine::execute) takes it instead of evicting again.
    pub(crate) room: Option<bool>,
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
            user: None,
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
            reply_off: false,
            reply_skip_next: false,
            shared: Arc::new(ClientShared::new(id)),
            live: LiveClient::default(),
            aof_deferred: false,
            room: None,
            prop: Vec::new(),
            prop_hold: 0,
            tracking: false,
            tracking_reads: false,
            tracking_optin: false,
            tracking_optout: false,
            caching: false,
            script_read: false,
            in_script: false,
            over_maxmemory: false,
            error_counted: false,
        }
    }

    /// Whether a read-only command of this client remembers its keys now: tracking in
    /// default mode, and under OPTIN after `CLIENT CACHING yes`, under OPTOUT unless
    /// `CLIENT CACHING no`.
    pub(crate) fn remembers_reads(&self) -> bool {
        let opted_in = !self.tracking_optin || self.caching;
        let opted_out = self.tracking_optout && self.caching;
        self.tracking_reads && opted_in && !opted_out
    }

    /// Runs the client as `user` from now on (AUTH, HELLO AUTH, RESET), as others see it too.
    pub(crate) fn set_user(&mut self, user: Arc<crate::engine::acl::UserHandle>) {
        *self
            .shared
            .user
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(Arc::clone(&user));
        self.user = Some(user);
    }

    /// Whether the client's user has restrictions, so its requests need checking: one
    /// relaxed load for a user with every permission (the default user's case).
    #[inline]
    pub(crate) fn acl_restricted(&self) -> bool {
        self.user.as_ref().is_some_and(|u| !u.unrestricted())
    }

    /// The name of the client's user (`default` for a client made outside an engine).
    pub fn user_name(&self) -> &str {
        self.user.as_ref().map_or("default", |u| u.name())
    }

    /// Whether a MULTI is open.
    pub fn in_multi(&self) -> bool {
        self.multi.is_some()
    }

    /// Sets the peer and local addresses (the server, on accept), for CLIENT LIST here and
    /// in other clients' views.
    pub fn set_addresses(&mut self, addr: String, laddr: String) {
        let _ = self.shared.addr.set(addr.clone());
        let _ = self.shared.laddr.set(laddr.clone());
        self.addr = Some(addr);
        self.laddr = Some(laddr);
    }

    /// Copies the state other clients may ask about into [`Client::shared`]: called after
    /// each command, a handful of relaxed stores on a cache line this client owns.
    pub(crate) fn publish_state(&self) {
        let s = &*self.shared;
        s.db.store(self.db as u32, Ordering::Relaxed);
        s.resp.store(self.resp, Ordering::Relaxed);
        let multi = self.multi.as_ref().map_or(-1, |q| q.len() as i64);
        s.multi.store(multi, Ordering::Relaxed);
        let mut flags = 0;
        if self.closing {
            flags |= FLAG_CLOSING;
        }
        if self.no_evict {
            flags |= FLAG_NO_EVICT;
        }
        if self.no_touch {
            flags |= FLAG_NO_TOUCH;
        }
        s.flags.store(flags, Ordering::Relaxed);
    }

    /// Publishes the name and library attributes (after SETNAME, HELLO SETNAME, SETINFO,
    /// RESET: rare, so a lock is fine).
    pub(crate) fn publish_names(&self) {
        let mut names = self
            .shared
            .names
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        names.name.clone_from(&self.name);
        names.lib_name.clone_from(&self.lib_name);
        names.lib_ver.clone_from(&self.lib_ver);
    }
}

/// A message pushed to a client outside its replies (client-side caching, see
/// [`crate::engine::tracking`]); its server encodes it for the client's protocol when it
/// writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Push {
    /// These keys changed (`None`: every key, after a flush). `redirected`: the client gets
    /// it for another client that redirects to it, so a RESP2 client subscribed to
    /// `__redis__:invalidate` gets it as a Pub/Sub message there.
    Invalidate {
        keys: Option<Vec<Vec<u8>>>,
        redirected: bool,
    },
    /// The client this one redirects its invalidations to is gone.
    RedirectBroken(u64),
}

/// [`ClientShared::flags`] bits the client publishes.
pub(crate) const FLAG_CLOSING: u8 = 1;
pub(crate) const FLAG_NO_EVICT: u8 = 2;
pub(crate) const FLAG_NO_TOUCH: u8 = 4;

/// A client's name and library attributes, as others see them.
#[derive(Debug, Default, Clone)]
pub(crate) struct Names {
    pub(crate) name: Option<Vec<u8>>,
    pub(crate) lib_name: Option<Vec<u8>>,
    pub(crate) lib_ver: Option<Vec<u8>>,
}

/// How CLIENT UNBLOCK asks a blocked client to stop waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnblockRequest {
    /// Reply as if the timeout passed.
    Timeout,
    /// Reply with `-UNBLOCKED client unblocked via CLIENT UNBLOCK`.
    Error,
}

/// What other clients see of one client, and what they can ask of it: the engine's registry
/// of live clients holds these (weakly), CLIENT LIST reads them, CLIENT KILL and UNBLOCK set
/// requests and wake the client's connection.
///
/// Written by the client's own thread after each command with relaxed stores (no lock on
/// the command path); read by CLIENT LIST as a snapshot that may be a command behind.
#[derive(Debug)]
pub struct ClientShared {
    /// CLIENT ID.
    pub id: u64,
    pub(crate) created: Instant,
    pub(crate) addr: OnceLock<String>,
    pub(crate) laddr: OnceLock<String>,
    /// The socket's descriptor, -1 when unknown (in-process clients).
    pub(crate) fd: AtomicI64,
    pub(crate) names: Mutex<Names>,
    /// The ACL user (CLIENT LIST's `user`, CLIENT KILL USER, ACL DELUSER); set on AUTH.
    pub(crate) user: Mutex<Option<Arc<crate::engine::acl::UserHandle>>>,
    pub(crate) db: AtomicU32,
    pub(crate) resp: AtomicU8,
    pub(crate) multi: AtomicI64,
    pub(crate) flags: AtomicU8,
    /// The last command's index in the command table (`u32::MAX`: none yet).
    pub(crate) last_command: AtomicU32,
    /// The last command's subcommand name, for containers (`client|list`); rare.
    pub(crate) last_subcommand: Mutex<Option<String>>,
    /// The engine's clock (ms) at the last command.
    pub(crate) last_interaction_ms: AtomicU64,
    /// Pub/sub subscriptions (channels, patterns, shard channels), set by the server.
    pub(crate) subscriptions: [AtomicU32; 3],
    /// The channels, patterns and shard channels themselves (for ACL SETUSER, which
    /// disconnects a subscriber whose channel was revoked), set by the server.
    subscribed: Mutex<[Vec<Vec<u8>>; 3]>,
    /// Set by the server while the client waits in a blocking command.
    pub(crate) blocked: AtomicBool,
    /// Set by the server while the client is a MONITOR.
    pub(crate) monitor: AtomicBool,
    killed: AtomicBool,
    unblock: Mutex<Option<UnblockRequest>>,
    /// Messages waiting for the client's server to write them, and whether there are any
    /// (one relaxed load per batch when there are none).
    pushes: Mutex<Vec<Push>>,
    has_pushes: AtomicBool,
    wake: Notify,
    /// Removes this client from the engine's registry when it goes.
    registry: OnceLock<Weak<crate::engine::cmd::server::ClientRegistry>>,
}

impl ClientShared {
    pub(crate) fn new(id: u64) -> ClientShared {
        ClientShared {
            id,
            created: Instant::now(),
            addr: OnceLock::new(),
            laddr: OnceLock::new(),
            fd: AtomicI64::new(-1),
            names: Mutex::new(Names::default()),
            user: Mutex::new(None),
            db: AtomicU32::new(0),
            resp: AtomicU8::new(2),
            multi: AtomicI64::new(-1),
            flags: AtomicU8::new(0),
            last_command: AtomicU32::new(u32::MAX),
            last_subcommand: Mutex::new(None),
            last_interaction_ms: AtomicU64::new(0),
            subscriptions: Default::default(),
            subscribed: Mutex::default(),
            blocked: AtomicBool::new(false),
            monitor: AtomicBool::new(false),
            killed: AtomicBool::new(false),
            unblock: Mutex::new(None),
            pushes: Mutex::new(Vec::new()),
            has_pushes: AtomicBool::new(false),
            wake: Notify::new(),
            registry: OnceLock::new(),
        }
    }

    pub(crate) fn bind_registry(&self, registry: Weak<crate::engine::cmd::server::ClientRegistry>) {
        let _ = self.registry.set(registry);
    }

    /// The socket's descriptor, for CLIENT LIST's `fd` (the server sets it).
    pub fn set_fd(&self, fd: i64) {
        self.fd.store(fd, Ordering::Relaxed);
    }

    /// Counts of channel, pattern and shard-channel subscriptions (the server sets them).
    pub fn set_subscriptions(&self, channels: usize, patterns: usize, shard: usize) {
        for (slot, n) in self.subscriptions.iter().zip([channels, patterns, shard]) {
            slot.store(u32::try_from(n).unwrap_or(u32::MAX), Ordering::Relaxed);
        }
    }

    /// The channels, patterns and shard channels subscribed to (the server sets them).
    pub fn set_subscribed_names(&self, names: [Vec<Vec<u8>>; 3]) {
        *self
            .subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = names;
    }

    /// The channels, patterns and shard channels subscribed to.
    pub(crate) fn subscribed_names(&self) -> [Vec<Vec<u8>>; 3] {
        self.subscribed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Whether the client waits in a blocking command (the server sets it).
    pub fn set_blocked(&self, blocked: bool) {
        self.blocked.store(blocked, Ordering::Relaxed);
        if !blocked {
            *self.unblock.lock().unwrap_or_else(PoisonError::into_inner) = None;
        }
    }

    /// Whether the client is a MONITOR (the server sets it).
    pub fn set_monitor(&self, monitor: bool) {
        self.monitor.store(monitor, Ordering::Relaxed);
    }

    /// CLIENT KILL: asks the client's connection to close.
    pub(crate) fn kill(&self) {
        self.killed.store(true, Ordering::Release);
        self.wake.notify_one();
    }

    /// Whether CLIENT KILL named this client.
    pub fn killed(&self) -> bool {
        self.killed.load(Ordering::Acquire)
    }

    /// CLIENT UNBLOCK: asks a blocked client to stop waiting; false if it is not blocked.
    pub(crate) fn request_unblock(&self, how: UnblockRequest) -> bool {
        if !self.blocked.load(Ordering::Relaxed) {
            return false;
        }
        *self.unblock.lock().unwrap_or_else(PoisonError::into_inner) = Some(how);
        self.wake.notify_one();
        true
    }

    /// The pending CLIENT UNBLOCK request, taken.
    pub fn take_unblock(&self) -> Option<UnblockRequest> {
        self.unblock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    /// Queues a message for the client and wakes its connection.
    pub(crate) fn push(&self, push: Push) {
        self.pushes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(push);
        self.has_pushes.store(true, Ordering::Release);
        self.wake.notify_one();
    }

    /// Whether messages wait ([`ClientShared::take_pushes`]).
    pub fn has_pushes(&self) -> bool {
        self.has_pushes.load(Ordering::Acquire)
    }

    /// The messages waiting, in the order queued; empty (without a lock) if none.
    pub fn take_pushes(&self) -> Vec<Push> {
        if !self.has_pushes() {
            return Vec::new();
        }
        let mut q = self.pushes.lock().unwrap_or_else(PoisonError::into_inner);
        self.has_pushes.store(false, Ordering::Release);
        std::mem::take(&mut *q)
    }

    /// Resolves when another client kills or unblocks this one (check [`ClientShared::killed`]
    /// and [`ClientShared::take_unblock`]); a request made before the call is not lost.
    pub async fn woken(&self) {
        self.wake.notified().await;
    }

    /// The ACL user's name (`default` when none was set).
    pub fn user_name(&self) -> String {
        self.user
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map_or_else(|| "default".to_string(), |u| u.name().to_string())
    }

    /// Whether the client runs as exactly this user.
    pub(crate) fn is_user(&self, user: &Arc<crate::engine::acl::UserHandle>) -> bool {
        self.user
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .is_some_and(|u| Arc::ptr_eq(u, user))
    }

    /// The peer address (`""` for an in-process client).
    pub fn addr(&self) -> &str {
        self.addr.get().map_or("", String::as_str)
    }

    /// The local address (`""` for an in-process client).
    pub fn laddr(&self) -> &str {
        self.laddr.get().map_or("", String::as_str)
    }
}

impl Drop for ClientShared {
    fn drop(&mut self) {
        if let Some(registry) = self.registry.get().and_then(Weak::upgrade) {
            registry.remove(self.id);
        }
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

//! Pub/sub: channels, patterns and shard channels, shared by every connection of a server.
//!
//! The engine runs one command for one client and has no way to reach another connection, so
//! pub/sub lives here. The [`Broker`] maps each channel (pattern, shard channel) to the
//! connections subscribed to it; PUBLISH hands each of them a [`Delivery`] through its own
//! unbounded queue and never waits for a subscriber. A connection owns [`Subscriptions`]:
//! its side of the registry, in subscription order, which it leaves on drop.
//!
//! Invariants:
//! - The broker's lock is a `std::sync::Mutex` held only for map updates and `send`s, never
//!   across an `.await`, so a slow subscriber cannot stall a publisher.
//! - A subscriber that lets more than [`PENDING_LIMIT`] bytes of messages pile up is
//!   disconnected, as Redis's `client-output-buffer-limit pubsub 32mb` does, rather than
//!   growing without bound.
//! - Channel names and payloads are copied once per PUBLISH, into shared [`Bytes`], however
//!   many subscribers receive them.
//!
//! Order across connections: redis-server runs requests one at a time in the order they
//! reach it, so an UNSUBSCRIBE sent before another client's PUBLISH is gone before that
//! PUBLISH counts its receivers, even when the unsubscriber has not read its confirmation
//! yet (Redis's own tests rely on it). Here connections run on threads of their own, and
//! the subscriber's request may still wait in its socket. So before PUBLISH counts,
//! [`Broker::settle`] looks (one `poll`, no wait) at the sockets of the other connections
//! it would deliver to; one holding unread input that may leave subscriptions (an
//! unsubscribe, RESET, QUIT, or the end of the stream) is given up to [`SETTLE_WAIT`] to
//! run it. Subscribers that send nothing, the common case, cost that one `poll`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::engine::cmd::keys::glob_match;
use crate::engine::cmd::server::{common, PUBSUB_HELP};
use crate::engine::Reply;
use crate::resp::encode::{write_bulk, write_int, write_len};
use crate::resp::{encode, Protocol};

/// How long a PUBLISH waits for a subscriber to run the unsubscribe already in its socket
/// (see the module doc): far longer than a connection takes to be scheduled, and short
/// enough that a subscriber stuck elsewhere (a script, a full output buffer) costs little.
pub const SETTLE_WAIT: std::time::Duration = std::time::Duration::from_millis(20);

/// Bytes of undelivered messages a subscriber may have queued before it is disconnected:
/// Redis's hard limit for pub/sub clients (`client-output-buffer-limit pubsub 32mb`).
pub const PENDING_LIMIT: usize = 32 * 1024 * 1024;

/// The three kinds of subscription.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// SUBSCRIBE: an exact channel name.
    Channel,
    /// PSUBSCRIBE: a glob pattern over channel names.
    Pattern,
    /// SSUBSCRIBE: a shard channel (SPUBLISH), a namespace of its own.
    Shard,
}

impl Kind {
    fn subscribe_word(self) -> &'static [u8] {
        match self {
            Kind::Channel => b"subscribe",
            Kind::Pattern => b"psubscribe",
            Kind::Shard => b"ssubscribe",
        }
    }

    fn unsubscribe_word(self) -> &'static [u8] {
        match self {
            Kind::Channel => b"unsubscribe",
            Kind::Pattern => b"punsubscribe",
            Kind::Shard => b"sunsubscribe",
        }
    }
}

/// A published message on its way to one subscriber.
#[derive(Debug, Clone)]
pub struct Delivery {
    /// Set for a message that matched a PSUBSCRIBE pattern.
    pattern: Option<Bytes>,
    shard: bool,
    channel: Bytes,
    payload: Bytes,
}

impl Delivery {
    /// The channel it was published on.
    pub fn channel(&self) -> &[u8] {
        &self.channel
    }

    /// Its payload.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// The pattern it matched, for a PSUBSCRIBE delivery.
    pub fn pattern(&self) -> Option<&[u8]> {
        self.pattern.as_deref()
    }

    /// What it counts against [`PENDING_LIMIT`].
    fn size(&self) -> usize {
        self.channel.len() + self.payload.len() + self.pattern.as_ref().map_or(0, Bytes::len)
    }

    /// Appends the message as Redis sends it: `message`/`smessage` channel payload, or
    /// `pmessage` pattern channel payload; an array in RESP2, a push in RESP3.
    pub fn encode(&self, protocol: Protocol, out: &mut Vec<u8>) {
        let kind = if protocol == Protocol::Resp3 {
            b'>'
        } else {
            b'*'
        };
        match &self.pattern {
            Some(pattern) => {
                write_len(out, kind, 4);
                write_bulk(out, b"pmessage");
                write_bulk(out, pattern);
            }
            None => {
                write_len(out, kind, 3);
                write_bulk(out, if self.shard { b"smessage" } else { b"message" });
            }
        }
        write_bulk(out, &self.channel);
        write_bulk(out, &self.payload);
    }
}

/// One connection, as the broker sees it.
#[derive(Debug)]
struct Subscriber {
    id: u64,
    queue: mpsc::UnboundedSender<Delivery>,
    /// Bytes sent and not yet taken by the connection.
    pending: AtomicUsize,
    /// Set once `pending` passed [`PENDING_LIMIT`]: the connection closes.
    overflowed: AtomicBool,
    /// Its socket's descriptor (-1 when it has none), which [`Broker::settle`] polls.
    fd: i32,
    /// Batches of requests the connection ran, and its end: bumped so that
    /// [`Broker::settle`] can tell when unread input it saw has run.
    batches: AtomicU64,
    /// Set from before the connection reads its socket until the batch it read has run.
    busy: AtomicBool,
}

impl Subscriber {
    fn deliver(&self, delivery: Delivery) {
        let size = delivery.size();
        let pending = self.pending.fetch_add(size, Ordering::Relaxed) + size;
        if pending > PENDING_LIMIT {
            self.pending.fetch_sub(size, Ordering::Relaxed);
            self.overflowed.store(true, Ordering::Relaxed);
            return;
        }
        // The receiver is gone only while its connection is being dropped, which then
        // removes this subscriber: nothing to do.
        let _ = self.queue.send(delivery);
    }
}

type Registry = HashMap<Bytes, Vec<Arc<Subscriber>>>;

#[derive(Debug, Default)]
struct State {
    channels: Registry,
    patterns: Registry,
    shard_channels: Registry,
}

impl State {
    fn registry(&mut self, kind: Kind) -> &mut Registry {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard_channels,
        }
    }
}

/// Who is subscribed to what, for every connection of one server.
#[derive(Debug, Default)]
pub struct Broker {
    state: Mutex<State>,
}

impl Broker {
    /// An empty broker.
    pub fn new() -> Broker {
        Broker::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while the lock was held left the maps consistent (every update is one
        // insert or remove), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn add(&self, kind: Kind, name: &Bytes, subscriber: &Arc<Subscriber>) {
        self.state()
            .registry(kind)
            .entry(name.clone())
            .or_default()
            .push(Arc::clone(subscriber));
    }

    fn remove(&self, kind: Kind, name: &[u8], id: u64) {
        let mut state = self.state();
        let registry = state.registry(kind);
        if let Some(subscribers) = registry.get_mut(name) {
            subscribers.retain(|s| s.id != id);
            if subscribers.is_empty() {
                registry.remove(name);
            }
        }
    }

    /// Before PUBLISH (or SPUBLISH, `shard`) from client `publisher` counts its receivers:
    /// lets the other receiving connections run any request already in their sockets that
    /// may leave subscriptions (see the module doc). Returns at once when none has one.
    pub fn settle(&self, publisher: u64, channel: &[u8], shard: bool) {
        let receivers: Vec<Arc<Subscriber>> = {
            let state = self.state();
            let mut receivers = Vec::new();
            let registry = if shard {
                &state.shard_channels
            } else {
                &state.channels
            };
            let mut take = |subscribers: &Vec<Arc<Subscriber>>| {
                receivers.extend(
                    subscribers
                        .iter()
                        .filter(|s| s.id != publisher && s.fd >= 0)
                        .cloned(),
                );
            };
            if let Some(subscribers) = registry.get(channel) {
                take(subscribers);
            }
            if !shard {
                for (pattern, subscribers) in &state.patterns {
                    if glob_match(pattern, channel) {
                        take(subscribers);
                    }
                }
            }
            receivers
        };
        if receivers.is_empty() {
            return;
        }
        // Counted before looking: a batch that ends after this is one to wait for.
        let batches: Vec<u64> = receivers
            .iter()
            .map(|s| s.batches.load(Ordering::SeqCst))
            .collect();
        let mut due = vec![false; receivers.len()];
        for i in readable(&receivers) {
            due[i] = may_leave(receivers[i].fd);
        }
        // Looked at after the socket: input it no longer holds was read by a batch that is
        // running now (`busy`) or has ended (`batches` moved on).
        let waiting: Vec<(&Arc<Subscriber>, u64)> = receivers
            .iter()
            .zip(batches)
            .zip(due)
            .filter(|((s, _), due)| *due || s.busy.load(Ordering::SeqCst))
            .map(|(pair, _)| pair)
            .collect();
        let deadline = std::time::Instant::now() + SETTLE_WAIT;
        for (subscriber, batches) in waiting {
            while subscriber.batches.load(Ordering::SeqCst) == batches
                && std::time::Instant::now() < deadline
            {
                std::thread::sleep(std::time::Duration::from_micros(20));
            }
        }
    }

    /// PUBLISH: delivers `payload` to the subscribers of `channel` and of every matching
    /// pattern; returns how many deliveries were made (a connection subscribed twice counts
    /// twice, as in Redis).
    pub fn publish(&self, channel: &[u8], payload: &[u8]) -> usize {
        let state = self.state();
        let mut message: Option<(Bytes, Bytes)> = None;
        let mut shared = || {
            message
                .get_or_insert_with(|| {
                    (
                        Bytes::copy_from_slice(channel),
                        Bytes::copy_from_slice(payload),
                    )
                })
                .clone()
        };
        let mut receivers = 0;
        if let Some(subscribers) = state.channels.get(channel) {
            let (channel, payload) = shared();
            for subscriber in subscribers {
                subscriber.deliver(Delivery {
                    pattern: None,
                    shard: false,
                    channel: channel.clone(),
                    payload: payload.clone(),
                });
                receivers += 1;
            }
        }
        for (pattern, subscribers) in &state.patterns {
            if !glob_match(pattern, channel) {
                continue;
            }
            let (channel, payload) = shared();
            for subscriber in subscribers {
                subscriber.deliver(Delivery {
                    pattern: Some(pattern.clone()),
                    shard: false,
                    channel: channel.clone(),
                    payload: payload.clone(),
                });
                receivers += 1;
            }
        }
        receivers
    }

    /// SPUBLISH: delivers `payload` to the subscribers of shard channel `channel`.
    pub fn spublish(&self, channel: &[u8], payload: &[u8]) -> usize {
        let state = self.state();
        let Some(subscribers) = state.shard_channels.get(channel) else {
            return 0;
        };
        let (channel, payload) = (
            Bytes::copy_from_slice(channel),
            Bytes::copy_from_slice(payload),
        );
        for subscriber in subscribers {
            subscriber.deliver(Delivery {
                pattern: None,
                shard: true,
                channel: channel.clone(),
                payload: payload.clone(),
            });
        }
        subscribers.len()
    }

    /// PUBSUB CHANNELS / SHARDCHANNELS: the active channels matching `pattern` (all without).
    fn active(&self, kind: Kind, pattern: Option<&[u8]>) -> Vec<Bytes> {
        let mut state = self.state();
        state
            .registry(kind)
            .keys()
            .filter(|name| pattern.is_none_or(|p| glob_match(p, name)))
            .cloned()
            .collect()
    }

    /// PUBSUB NUMSUB / SHARDNUMSUB for one channel.
    fn subscriber_count(&self, kind: Kind, name: &[u8]) -> usize {
        self.state().registry(kind).get(name).map_or(0, Vec::len)
    }

    /// PUBSUB NUMPAT: patterns with at least one subscriber.
    fn pattern_count(&self) -> usize {
        self.state().patterns.len()
    }
}

/// The indexes of `subscribers` whose sockets hold unread input (or their end): one `poll`
/// that does not wait.
fn readable(subscribers: &[Arc<Subscriber>]) -> Vec<usize> {
    let mut fds: Vec<libc::pollfd> = subscribers
        .iter()
        .map(|s| libc::pollfd {
            fd: s.fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs for the whole call. A
    // descriptor closed meanwhile (its connection just ended) reports POLLNVAL, or is
    // another socket by then: either way at most a wait of SETTLE_WAIT, never a fault.
    let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 0) };
    if n <= 0 {
        return Vec::new();
    }
    fds.iter()
        .enumerate()
        .filter(|(_, p)| p.revents & (libc::POLLIN | libc::POLLHUP) != 0)
        .map(|(i, _)| i)
        .collect()
}

/// Whether the unread input of socket `fd` may leave subscriptions: the end of the stream,
/// or a request naming an unsubscribe, RESET or QUIT (looked at without taking it).
fn may_leave(fd: i32) -> bool {
    let mut buf = [0u8; 4096];
    // SAFETY: `buf` is valid for `buf.len()` bytes; MSG_PEEK leaves the input in the socket
    // for its connection, MSG_DONTWAIT never blocks.
    let n = unsafe {
        libc::recv(
            fd,
            buf.as_mut_ptr().cast(),
            buf.len(),
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    let Ok(n) = usize::try_from(n) else {
        return false;
    };
    if n == 0 {
        return true;
    }
    let input = buf[..n].to_ascii_lowercase();
    [&b"unsubscribe"[..], b"reset", b"quit"]
        .iter()
        .any(|word| input.windows(word.len()).any(|w| w == *word))
}

/// A set that remembers insertion order (UNSUBSCRIBE without arguments goes through it).
#[derive(Debug, Default)]
struct OrderedSet {
    order: Vec<Bytes>,
    members: HashSet<Bytes>,
}

impl OrderedSet {
    fn insert(&mut self, name: &[u8]) -> Option<Bytes> {
        if self.members.contains(name) {
            return None;
        }
        let name = Bytes::copy_from_slice(name);
        self.members.insert(name.clone());
        self.order.push(name.clone());
        Some(name)
    }

    /// Removes `name`; whether it was a member.
    fn remove(&mut self, name: &[u8]) -> bool {
        if !self.members.remove(name) {
            return false;
        }
        if let Some(at) = self.order.iter().position(|n| n == name) {
            self.order.remove(at);
        }
        true
    }

    fn len(&self) -> usize {
        self.members.len()
    }
}

/// One connection's subscriptions and its message queue.
#[derive(Debug)]
pub struct Subscriptions {
    broker: Arc<Broker>,
    id: u64,
    /// The connection's socket (-1 until known); atomic only because the server sets it
    /// through a shared reference to the session.
    fd: AtomicI32,
    /// Created at the first subscription.
    me: Option<(Arc<Subscriber>, mpsc::UnboundedReceiver<Delivery>)>,
    channels: OrderedSet,
    patterns: OrderedSet,
    shard_channels: OrderedSet,
}

impl Subscriptions {
    /// No subscriptions yet, for the connection of client `id`.
    pub fn new(broker: Arc<Broker>, id: u64) -> Subscriptions {
        Subscriptions {
            broker,
            id,
            fd: AtomicI32::new(-1),
            me: None,
            channels: OrderedSet::default(),
            patterns: OrderedSet::default(),
            shard_channels: OrderedSet::default(),
        }
    }

    /// The connection's socket descriptor, which PUBLISH polls (see [`Broker::settle`]);
    /// set before the first subscription.
    pub fn set_fd(&self, fd: i32) {
        self.fd.store(fd, Ordering::Relaxed);
    }

    /// A batch of the connection's requests ran: a PUBLISH waiting in [`Broker::settle`]
    /// for input it saw in this connection's socket may go on.
    pub fn ran_batch(&self) {
        if let Some((subscriber, _)) = &self.me {
            subscriber.batches.fetch_add(1, Ordering::SeqCst);
            subscriber.busy.store(false, Ordering::SeqCst);
        }
    }

    /// The read that [`Subscriptions::reading`] announced is over, whether or not it ran a
    /// batch (a spurious wake-up reads nothing): a PUBLISH no longer waits on it. Only
    /// [`Subscriptions::ran_batch`] counts a batch, once per batch: a count moved by anything
    /// else would let a PUBLISH go on before the batch it waits for has run.
    pub fn done_reading(&self) {
        if let Some((subscriber, _)) = &self.me {
            subscriber.busy.store(false, Ordering::SeqCst);
        }
    }

    /// The connection is about to read its socket: until [`Subscriptions::ran_batch`], a
    /// PUBLISH waits for what it reads to run (see [`Broker::settle`]).
    pub fn reading(&self) {
        if let Some((subscriber, _)) = &self.me {
            subscriber.busy.store(true, Ordering::SeqCst);
        }
    }

    /// The broker this connection publishes to.
    pub fn broker(&self) -> &Broker {
        &self.broker
    }

    /// Whether the client is in the subscribed state (any subscription at all), where a
    /// RESP2 client may only (un)subscribe, PING, QUIT and RESET.
    pub fn active(&self) -> bool {
        self.channels.len() + self.patterns.len() + self.shard_channels.len() > 0
    }

    /// Channels, patterns and shard channels subscribed to (CLIENT LIST's sub, psub, ssub).
    pub fn counts(&self) -> (usize, usize, usize) {
        (
            self.channels.len(),
            self.patterns.len(),
            self.shard_channels.len(),
        )
    }

    /// The channels, patterns and shard channels subscribed to, in subscription order.
    pub fn names(&self) -> [Vec<Vec<u8>>; 3] {
        [&self.channels, &self.patterns, &self.shard_channels]
            .map(|set| set.order.iter().map(|b| b.to_vec()).collect())
    }

    /// The count Redis puts in a confirmation: channels and patterns together, shard
    /// channels on their own.
    fn count(&self, kind: Kind) -> usize {
        match kind {
            Kind::Channel | Kind::Pattern => self.channels.len() + self.patterns.len(),
            Kind::Shard => self.shard_channels.len(),
        }
    }

    fn set(&mut self, kind: Kind) -> &mut OrderedSet {
        match kind {
            Kind::Channel => &mut self.channels,
            Kind::Pattern => &mut self.patterns,
            Kind::Shard => &mut self.shard_channels,
        }
    }

    fn subscriber(&mut self) -> Arc<Subscriber> {
        let (subscriber, _) = self.me.get_or_insert_with(|| {
            let (queue, receiver) = mpsc::unbounded_channel();
            let subscriber = Arc::new(Subscriber {
                id: self.id,
                queue,
                pending: AtomicUsize::new(0),
                overflowed: AtomicBool::new(false),
                fd: self.fd.load(Ordering::Relaxed),
                batches: AtomicU64::new(0),
                busy: AtomicBool::new(false),
            });
            (subscriber, receiver)
        });
        Arc::clone(subscriber)
    }

    /// (P|S)SUBSCRIBE: subscribes to each name and appends one confirmation per name.
    pub fn subscribe(
        &mut self,
        kind: Kind,
        names: &[&[u8]],
        protocol: Protocol,
        out: &mut Vec<u8>,
    ) {
        for name in names {
            if let Some(name) = self.set(kind).insert(name) {
                let subscriber = self.subscriber();
                self.broker.add(kind, &name, &subscriber);
            }
            let count = self.count(kind);
            confirm(kind.subscribe_word(), Some(name), count, protocol, out);
        }
    }

    /// (P|S)UNSUBSCRIBE: from each name, or from every subscription of this kind when
    /// `names` is empty; one confirmation per name (one with a null name when there was
    /// nothing to leave).
    pub fn unsubscribe(
        &mut self,
        kind: Kind,
        names: &[&[u8]],
        protocol: Protocol,
        out: &mut Vec<u8>,
    ) {
        if names.is_empty() {
            let all = std::mem::take(&mut self.set(kind).order);
            if all.is_empty() {
                confirm(
                    kind.unsubscribe_word(),
                    None,
                    self.count(kind),
                    protocol,
                    out,
                );
            }
            for name in all {
                self.leave(kind, &name);
                let count = self.count(kind);
                confirm(kind.unsubscribe_word(), Some(&name), count, protocol, out);
            }
            return;
        }
        for name in names {
            self.leave(kind, name);
            let count = self.count(kind);
            confirm(kind.unsubscribe_word(), Some(name), count, protocol, out);
        }
    }

    fn leave(&mut self, kind: Kind, name: &[u8]) {
        // After an unsubscribe-all took `order`, only `members` still holds the name.
        if self.set(kind).remove(name) {
            self.broker.remove(kind, name, self.id);
        }
    }

    /// Leaves everything without confirmations (RESET, and the connection closing).
    pub fn clear(&mut self) {
        for kind in [Kind::Channel, Kind::Pattern, Kind::Shard] {
            for name in std::mem::take(&mut self.set(kind).order) {
                self.leave(kind, &name);
            }
        }
    }

    /// The next message for this connection; never resolves before the first subscription.
    pub async fn recv(&mut self) -> Option<Delivery> {
        match &mut self.me {
            Some((_, receiver)) => {
                let delivery = receiver.recv().await?;
                self.taken(&delivery);
                Some(delivery)
            }
            None => std::future::pending().await,
        }
    }

    /// A message already queued, if any.
    pub fn try_recv(&mut self) -> Option<Delivery> {
        let delivery = self.me.as_mut()?.1.try_recv().ok()?;
        self.taken(&delivery);
        Some(delivery)
    }

    fn taken(&self, delivery: &Delivery) {
        if let Some((subscriber, _)) = &self.me {
            subscriber
                .pending
                .fetch_sub(delivery.size(), Ordering::Relaxed);
        }
    }

    /// Whether messages piled up past [`PENDING_LIMIT`]: the connection must close.
    pub fn overflowed(&self) -> bool {
        self.me
            .as_ref()
            .is_some_and(|(s, _)| s.overflowed.load(Ordering::Relaxed))
    }
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        self.clear();
        // The connection's end is its last batch.
        self.ran_batch();
    }
}

/// `[word, name, count]`: an array in RESP2, a push in RESP3; a missing name is a null.
fn confirm(word: &[u8], name: Option<&[u8]>, count: usize, protocol: Protocol, out: &mut Vec<u8>) {
    let kind = if protocol == Protocol::Resp3 {
        b'>'
    } else {
        b'*'
    };
    write_len(out, kind, 3);
    write_bulk(out, word);
    match name {
        Some(name) => write_bulk(out, name),
        None => encode(&Reply::Nil, protocol, out),
    }
    write_int(out, b':', i64::try_from(count).unwrap_or(i64::MAX));
}

/// PUBSUB's subcommands with their Redis arity (counting `PUBSUB` and the subcommand).
const PUBSUB_SUBCOMMANDS: &[(&str, i32)] = &[
    ("channels", -2),
    ("numpat", 2),
    ("numsub", -2),
    ("shardchannels", -2),
    ("shardnumsub", -2),
    ("help", 2),
];

/// The lowercase name of PUBSUB's subcommand `sub`, if it is one.
pub fn pubsub_subcommand(sub: &[u8]) -> Option<(&'static str, i32)> {
    PUBSUB_SUBCOMMANDS
        .iter()
        .find(|(name, _)| sub.eq_ignore_ascii_case(name.as_bytes()))
        .copied()
}

/// Runs `PUBSUB <subcommand> ...` (arity already checked: `args.len() >= 2`).
pub fn pubsub_command(broker: &Broker, args: &[&[u8]]) -> Reply {
    let Some((sub, arity)) = pubsub_subcommand(args[1]) else {
        let sub = String::from_utf8_lossy(args[1]);
        return Reply::Error(format!("ERR unknown subcommand '{sub}'. Try PUBSUB HELP.").into());
    };
    let arity_ok = if arity >= 0 {
        args.len() == arity as usize
    } else {
        args.len() >= arity.unsigned_abs() as usize
    };
    if !arity_ok {
        return Reply::Error(
            format!("ERR wrong number of arguments for 'pubsub|{sub}' command").into(),
        );
    }
    let bulk_names = |names: Vec<Bytes>| {
        Reply::Array(names.into_iter().map(|n| Reply::Bulk(n.to_vec())).collect())
    };
    let counts = |kind: Kind| {
        let mut items = Vec::with_capacity((args.len() - 2) * 2);
        for name in &args[2..] {
            items.push(Reply::bulk(name));
            items.push(Reply::Int(broker.subscriber_count(kind, name) as i64));
        }
        Reply::Array(items)
    };
    match sub {
        "channels" | "shardchannels" if args.len() > 3 => {
            let sub = String::from_utf8_lossy(args[1]);
            Reply::Error(
                format!(
                    "ERR unknown subcommand or wrong number of arguments for '{sub}'. Try \
                     PUBSUB HELP."
                )
                .into(),
            )
        }
        "channels" => bulk_names(broker.active(Kind::Channel, args.get(2).copied())),
        "shardchannels" => bulk_names(broker.active(Kind::Shard, args.get(2).copied())),
        "numsub" => counts(Kind::Channel),
        "shardnumsub" => counts(Kind::Shard),
        "numpat" => Reply::Int(broker.pattern_count() as i64),
        _ => common::help(args, PUBSUB_HELP),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(out: &[u8]) -> String {
        String::from_utf8_lossy(out).into_owned()
    }

    #[test]
    fn confirmations_and_counts_are_redis_s() {
        let broker = Arc::new(Broker::new());
        let mut subs = Subscriptions::new(Arc::clone(&broker), 1);
        let mut out = Vec::new();
        subs.subscribe(
            Kind::Channel,
            &[b"a", b"b", b"a"],
            Protocol::Resp2,
            &mut out,
        );
        subs.subscribe(Kind::Pattern, &[b"a*"], Protocol::Resp2, &mut out);
        subs.subscribe(Kind::Shard, &[b"s"], Protocol::Resp3, &mut out);
        assert_eq!(
            text(&out),
            "*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n\
             *3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n\
             *3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:2\r\n\
             *3\r\n$10\r\npsubscribe\r\n$2\r\na*\r\n:3\r\n\
             >3\r\n$10\r\nssubscribe\r\n$1\r\ns\r\n:1\r\n"
        );
        assert_eq!(broker.publish(b"a", b"x"), 2);
        assert_eq!(broker.publish(b"zz", b"x"), 0);
        assert_eq!(broker.spublish(b"s", b"x"), 1);
        let mut out = Vec::new();
        while let Some(d) = subs.try_recv() {
            d.encode(Protocol::Resp2, &mut out);
        }
        assert_eq!(
            text(&out),
            "*3\r\n$7\r\nmessage\r\n$1\r\na\r\n$1\r\nx\r\n\
             *4\r\n$8\r\npmessage\r\n$2\r\na*\r\n$1\r\na\r\n$1\r\nx\r\n\
             *3\r\n$8\r\nsmessage\r\n$1\r\ns\r\n$1\r\nx\r\n"
        );
        let mut out = Vec::new();
        subs.unsubscribe(Kind::Channel, &[], Protocol::Resp2, &mut out);
        subs.unsubscribe(Kind::Channel, &[], Protocol::Resp2, &mut out);
        subs.unsubscribe(Kind::Pattern, &[b"nope"], Protocol::Resp3, &mut out);
        assert_eq!(
            text(&out),
            "*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:2\r\n\
             *3\r\n$11\r\nunsubscribe\r\n$1\r\nb\r\n:1\r\n\
             *3\r\n$11\r\nunsubscribe\r\n$-1\r\n:1\r\n\
             >3\r\n$12\r\npunsubscribe\r\n$4\r\nnope\r\n:1\r\n"
        );
        assert!(subs.active());
        assert_eq!(broker.publish(b"a", b"x"), 1);
        drop(subs);
        assert_eq!(broker.publish(b"a", b"x"), 0);
        assert_eq!(broker.spublish(b"s", b"x"), 0);
        assert_eq!(broker.pattern_count(), 0);
    }

    #[test]
    fn a_subscriber_that_does_not_read_is_cut_off() {
        let broker = Arc::new(Broker::new());
        let mut subs = Subscriptions::new(Arc::clone(&broker), 1);
        subs.subscribe(Kind::Channel, &[b"c"], Protocol::Resp2, &mut Vec::new());
        let payload = vec![0u8; 1024 * 1024];
        for _ in 0..31 {
            broker.publish(b"c", &payload);
        }
        assert!(!subs.overflowed());
        broker.publish(b"c", &payload);
        assert!(subs.overflowed());
        // What was queued before the limit is still there; taking it frees the room.
        assert!(subs.try_recv().is_some());
    }

    #[test]
    fn pubsub_introspection() {
        let broker = Arc::new(Broker::new());
        let mut a = Subscriptions::new(Arc::clone(&broker), 1);
        let mut b = Subscriptions::new(Arc::clone(&broker), 2);
        a.subscribe(
            Kind::Channel,
            &[b"news", b"sport"],
            Protocol::Resp2,
            &mut Vec::new(),
        );
        b.subscribe(Kind::Channel, &[b"news"], Protocol::Resp2, &mut Vec::new());
        b.subscribe(
            Kind::Pattern,
            &[b"n*", b"x"],
            Protocol::Resp2,
            &mut Vec::new(),
        );
        a.subscribe(Kind::Pattern, &[b"n*"], Protocol::Resp2, &mut Vec::new());
        let run = |args: &[&[u8]]| pubsub_command(&broker, args);
        assert_eq!(
            run(&[b"PUBSUB", b"numsub", b"news", b"none"]),
            Reply::Array(vec![
                Reply::bulk(b"news"),
                Reply::Int(2),
                Reply::bulk(b"none"),
                Reply::Int(0)
            ])
        );
        assert_eq!(run(&[b"PUBSUB", b"NUMPAT"]), Reply::Int(2));
        assert_eq!(
            run(&[b"PUBSUB", b"channels", b"s*"]),
            Reply::Array(vec![Reply::bulk(b"sport")])
        );
        assert_eq!(
            run(&[b"PUBSUB", b"foo"]),
            Reply::err("ERR unknown subcommand 'foo'. Try PUBSUB HELP.")
        );
        assert_eq!(
            run(&[b"PUBSUB", b"numpat", b"x"]),
            Reply::err("ERR wrong number of arguments for 'pubsub|numpat' command")
        );
        assert_eq!(
            run(&[b"PUBSUB", b"CHANNELS", b"a", b"b"]),
            Reply::err(
                "ERR unknown subcommand or wrong number of arguments for 'CHANNELS'. Try \
                 PUBSUB HELP."
            )
        );
        assert_eq!(broker.publish(b"news", b"hi"), 4);
    }
}

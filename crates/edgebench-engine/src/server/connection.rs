//! One client connection: read bytes, run every complete command they hold, write all the
//! replies at once. Generic over the stream, so TCP and Unix sockets share every line.
//!
//! Layers: bytes → [`RequestParser`] → arguments → [`Session::dispatch`] → the engine (or
//! the pub/sub broker) → [`Reply`] → RESP bytes in one output buffer.
//!
//! Invariants:
//! - Pipelining: all complete requests one read brought run before the connection writes,
//!   and their replies go out in one write.
//! - A protocol error is answered, after the replies of the requests before it, and ends this
//!   connection only.
//! - Shutdown is seen between batches, never in the middle of one: a batch that started is
//!   answered in full.
//! - A blocking command that has to wait ([`blocking`]) ends the batch: the replies before it
//!   are written, and the requests after it stay in the input buffer until it is answered,
//!   as in Redis. After each command, clients blocked on keys it wrote are served before the
//!   next command runs.

use std::cell::RefCell;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::broadcast;

use super::blocking::{self, Parked, Plan};
use super::event_loop::StdStream;
use super::pubsub::{pubsub_command, Broker, Kind, Subscriptions};
use crate::engine::client::{Push, UnblockRequest};
use crate::engine::cmd::server::MonitorLine;
use crate::engine::cmd::{is, lookup};
use crate::engine::{Client, Engine, Reply};
use crate::resp::encode::{write_bulk, write_int, write_len};
use crate::resp::{encode, Protocol, RequestParser};

/// Room made in the input buffer before each read: Redis's `PROTO_IOBUF_LEN`.
pub(super) const READ_CHUNK: usize = 16 * 1024;
/// The most the input buffer grows by in one step while a large bulk string arrives (it
/// grows geometrically past that), so a `$` header alone cannot make the server allocate
/// the announced size.
pub(super) const MAX_READ_RESERVE: usize = 1024 * 1024;
/// Pub/sub messages are gathered into one write until the output holds this much.
const MESSAGE_BATCH: usize = 64 * 1024;
/// Buffers larger than this after a batch are released even while the client keeps
/// sending, so a connection that once moved a large value does not keep its memory.
pub(super) const MAX_IDLE_BUFFER: usize = 1024 * 1024;
/// While a client is blocked, its connection reads (to notice when it leaves) only while the
/// unprocessed input holds less than this.
const MAX_BLOCKED_INPUT: usize = 1024 * 1024;

/// Redis's reply to a RESP2 client in the subscribed state that sends anything else.
const SUBSCRIBED_CONTEXT: &str =
    "only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context";

/// Commands that have subcommands: Redis names them `name|sub` in errors.
const CONTAINER_COMMANDS: &[&str] = &[
    "acl", "client", "cluster", "command", "config", "function", "latency", "memory", "module",
    "object", "pubsub", "script", "slowlog", "xgroup", "xinfo",
];

/// The pub/sub commands the server runs itself, with their Redis arity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PubSubCommand {
    Subscribe(Kind),
    Unsubscribe(Kind),
    Publish,
    SPublish,
    PubSub,
}

/// The pub/sub commands: name, command, Redis arity.
const PUBSUB_COMMANDS: [(&str, PubSubCommand, i32); 9] = [
    ("subscribe", PubSubCommand::Subscribe(Kind::Channel), -2),
    ("psubscribe", PubSubCommand::Subscribe(Kind::Pattern), -2),
    ("ssubscribe", PubSubCommand::Subscribe(Kind::Shard), -2),
    ("unsubscribe", PubSubCommand::Unsubscribe(Kind::Channel), -1),
    (
        "punsubscribe",
        PubSubCommand::Unsubscribe(Kind::Pattern),
        -1,
    ),
    ("sunsubscribe", PubSubCommand::Unsubscribe(Kind::Shard), -1),
    ("publish", PubSubCommand::Publish, 3),
    ("spublish", PubSubCommand::SPublish, 3),
    ("pubsub", PubSubCommand::PubSub, -2),
];

impl PubSubCommand {
    /// The command, its name and arity, if `name` is a pub/sub command. Every request asks,
    /// so most names are turned away by their length alone.
    fn lookup(name: &[u8]) -> Option<(PubSubCommand, &'static str, i32)> {
        if !(6..=12).contains(&name.len()) {
            return None;
        }
        PUBSUB_COMMANDS
            .iter()
            .find(|(n, _, _)| is(name, n))
            .map(|&(n, c, a)| (c, n, a))
    }

    /// Allowed to a RESP2 client in the subscribed state.
    fn allowed_when_subscribed(self) -> bool {
        matches!(
            self,
            PubSubCommand::Subscribe(_) | PubSubCommand::Unsubscribe(_)
        )
    }
}

fn arity_ok(arity: i32, argc: usize) -> bool {
    if arity >= 0 {
        argc == arity as usize
    } else {
        argc >= arity.unsigned_abs() as usize
    }
}

fn arity_error(name: &str) -> Reply {
    Reply::Error(format!("ERR wrong number of arguments for '{name}' command").into())
}

impl Drop for Session {
    fn drop(&mut self) {
        // A client that leaves stops tracking (its BCAST prefixes go with it).
        if self.client.tracking {
            self.engine.tracking().disable(self.client.id);
        }
    }
}

/// One pushed message as the client's protocol carries it (see [`Session::write_pushes`]).
fn encode_push(push: &Push, resp3: bool, subscribed: bool, out: &mut Vec<u8>) {
    match push {
        Push::Invalidate { keys, redirected } => {
            if resp3 {
                out.extend_from_slice(b">2\r\n");
                write_bulk(out, b"invalidate");
            } else if *redirected && subscribed {
                out.extend_from_slice(b"*3\r\n");
                write_bulk(out, b"message");
                write_bulk(out, b"__redis__:invalidate");
            } else {
                return;
            }
            match keys {
                Some(keys) => {
                    write_len(out, b'*', keys.len());
                    for k in keys {
                        write_bulk(out, k);
                    }
                }
                None if resp3 => out.extend_from_slice(b"_\r\n"),
                None => out.extend_from_slice(b"$-1\r\n"),
            }
        }
        Push::RedirectBroken(id) => {
            if resp3 {
                out.extend_from_slice(b">2\r\n");
                write_bulk(out, b"tracking-redir-broken");
                write_int(out, b':', i64::try_from(*id).unwrap_or(i64::MAX));
            }
        }
    }
}

/// A client's state apart from its stream: what [`Session::dispatch`] needs.
pub(crate) struct Session {
    pub(super) engine: Engine,
    pub(super) client: Client,
    pub(super) subscriptions: Subscriptions,
    /// Replies of the current batch, written at once.
    pub(super) output: Vec<u8>,
    /// The blocked command this connection waits on before it runs anything else.
    pub(super) blocked: Option<Parked>,
    /// Set while CLIENT PAUSE holds back the next request: when to look again.
    pub(super) paused_until: Option<std::time::Instant>,
    /// CLIENT REPLY SKIP ran: the next command's reply is dropped.
    skip_reply: bool,
    /// The command being dispatched wrote only pushes ((un)subscribe confirmations), which
    /// CLIENT REPLY OFF and SKIP do not withhold.
    pushed: bool,
    /// MONITOR: every command's line arrives here.
    pub(super) monitor: Option<tokio::sync::mpsc::Receiver<MonitorLine>>,
}

impl Session {
    /// The session of a new client connected from `addr` to `laddr`, on the server's pub/sub
    /// `broker`.
    pub(crate) fn new(
        engine: Engine,
        broker: &Arc<Broker>,
        addr: String,
        laddr: String,
    ) -> Session {
        let mut client = engine.client();
        client.set_addresses(addr, laddr);
        // The append-only file is written once per batch, before its replies (`flush`).
        client.aof_deferred = true;
        let subscriptions = Subscriptions::new(Arc::clone(broker), client.id);
        Session {
            engine,
            client,
            subscriptions,
            // Allocated by the first reply (see `Connection`).
            output: Vec::new(),
            blocked: None,
            paused_until: None,
            skip_reply: false,
            pushed: false,
            monitor: None,
        }
    }

    /// Whether this client waits on something other than its own socket: blocked on keys,
    /// paused, subscribed, a monitor, or told of invalidations (CLIENT TRACKING). The event
    /// loop serves only clients that do not; the task design serves the others, and gives
    /// a client back to its loop once this is false again.
    pub(super) fn needs_task(&self) -> bool {
        self.blocked.is_some()
            || self.paused_until.is_some()
            || self.subscriptions.active()
            || self.monitor.is_some()
            || self.client.shared.has_pushes()
            || self.client.tracking
    }

    /// The socket's descriptor, for CLIENT LIST's `fd`.
    pub(crate) fn set_fd(&self, fd: i64) {
        self.client.shared.set_fd(fd);
        self.subscriptions.set_fd(i32::try_from(fd).unwrap_or(-1));
    }

    fn protocol(&self) -> Protocol {
        Protocol::of(self.client.resp)
    }

    pub(super) fn reply(&mut self, reply: &Reply) {
        encode(reply, self.protocol(), &mut self.output);
    }

    /// A command rejected before it ran: inside MULTI it also dooms the transaction, and
    /// EXEC gets it as an EXECABORT (as Redis's `rejectCommand` does).
    fn reject(&mut self, args: &[&[u8]], text: &str) {
        if self.client.in_multi() {
            self.client.multi_dirty = true;
        }
        if is(args[0], "exec") {
            self.reply(&Reply::Error(
                format!("EXECABORT Transaction discarded because of: {text}").into(),
            ));
        } else {
            self.reply(&Reply::Error(format!("ERR {text}").into()));
        }
    }

    /// Runs one command and appends its reply, unless CLIENT REPLY withholds it: OFF drops
    /// every reply from the OFF command on, SKIP drops its own and the next command's. What
    /// Redis pushes is never withheld (its `CLIENT_PUSHING`): (un)subscribe confirmations,
    /// as published messages, reach a client whatever its CLIENT REPLY says.
    pub(crate) fn dispatch(&mut self, args: &[&[u8]]) {
        // Eviction over `maxmemory` runs before the command, and what it invalidates for
        // this client goes before the reply, as in Redis; the command reads the outcome
        // (room, or refuse a `denyoom` command) rather than evicting again.
        self.client.room = Some(self.engine.make_room());
        self.write_pushes();
        let start = self.output.len();
        let skip_this = std::mem::take(&mut self.skip_reply);
        self.pushed = false;
        self.dispatch_command(args);
        self.client.room = None;
        if self.client.reply_skip_next {
            self.client.reply_skip_next = false;
            self.skip_reply = true;
            self.output.truncate(start);
        } else if (skip_this || self.client.reply_off) && !self.pushed {
            self.output.truncate(start);
        }
        // What the command made the tracking table send this client comes after its reply
        // (Redis's pending invalidations); CLIENT REPLY does not withhold it.
        self.write_pushes();
    }

    /// Appends the messages pushed to this client (client-side caching) to the output, in
    /// its protocol: RESP3 pushes; for a RESP2 client that receives another's invalidations
    /// and is subscribed, Pub/Sub messages on `__redis__:invalidate`; otherwise nothing
    /// (RESP2 has no pushes on a connection that runs commands), as in Redis.
    pub(crate) fn write_pushes(&mut self) {
        if !self.client.shared.has_pushes() {
            return;
        }
        let resp3 = self.protocol() == Protocol::Resp3;
        let subscribed = self.subscriptions.active();
        for push in self.client.shared.take_pushes() {
            encode_push(&push, resp3, subscribed, &mut self.output);
        }
    }

    /// MONITOR: from now on this connection receives every command's line. Arity and
    /// MULTI were checked; a second MONITOR is ignored, as in Redis.
    fn start_monitor(&mut self) {
        if self.monitor.is_none() {
            self.monitor = Some(self.engine.monitor());
            self.client.shared.set_monitor(true);
            self.reply(&Reply::ok());
        }
    }

    /// Runs one command and appends its reply (or replies: SUBSCRIBE a b confirms twice).
    fn dispatch_command(&mut self, args: &[&[u8]]) {
        if is(args[0], "monitor") && args.len() == 1 && !self.client.in_multi() {
            return self.start_monitor();
        }
        if let Some((command, name, arity)) = PubSubCommand::lookup(args[0]) {
            return self.pubsub(command, name, arity, args);
        }
        if is(args[0], "exec") && self.queue_has_pubsub() {
            return self.exec_with_pubsub();
        }
        if self.subscriptions.active() && self.protocol() == Protocol::Resp2 {
            if is(args[0], "ping") && args.len() <= 2 {
                self.output.extend_from_slice(b"*2\r\n$4\r\npong\r\n");
                let payload = args.get(1).copied().unwrap_or_default();
                self.reply(&Reply::bulk(payload));
                return;
            }
            let known = lookup(args[0]).filter(|spec| arity_ok(spec.arity, args.len()));
            if let Some(spec) = known {
                if !matches!(spec.name, "ping" | "quit" | "reset") && self.client.authenticated {
                    let name = full_name(spec.name, args);
                    return self.reject(
                        args,
                        &format!("Can't execute '{name}': {SUBSCRIBED_CONTEXT}"),
                    );
                }
            }
        }
        if is(args[0], "reset") && args.len() == 1 {
            self.subscriptions.clear();
            self.publish_subscriptions();
        }
        if let Some(kind) = blocking::lookup(args[0]) {
            if !self.client.in_multi() {
                if let Some(plan) = Plan::new(&self.engine, self.client.db, kind, args) {
                    return self.dispatch_blocking(&plan, args);
                }
            }
        }
        let reply = execute(&self.engine, &mut self.client, args);
        // After the command: HELLO 3 is itself answered in RESP3.
        self.reply(&reply);
    }

    /// Runs a command that may block: the engine's nil (its timeout reply) means nothing
    /// was there, and the client waits instead of getting it.
    fn dispatch_blocking(&mut self, plan: &Plan, request: &[&[u8]]) {
        let args = plan.args(request);
        let reply = execute(&self.engine, &mut self.client, &args);
        if !matches!(reply, Reply::Nil | Reply::NilArray) {
            return self.reply(&reply);
        }
        let call = plan.call(&self.client, &args);
        match Parked::new(&self.engine, call, plan.deadline()) {
            Ok(parked) => {
                self.client.shared.set_blocked(true);
                self.blocked = Some(parked);
            }
            Err(reply) => self.reply(&reply),
        }
    }

    /// Serves the clients blocked on keys the last command wrote, before the next command
    /// runs (Redis's `handleClientsBlockedOnKeys`): one relaxed load when there are none.
    pub(super) fn serve_blocked(&self) {
        let db = self.client.db;
        if self.engine.has_ready_keys(db) {
            self.engine.serve_blocked(db);
        }
    }

    fn queue_has_pubsub(&self) -> bool {
        !self.client.multi_dirty
            && self.client.multi.as_ref().is_some_and(|queue| {
                queue
                    .iter()
                    .any(|args| PubSubCommand::lookup(&args[0]).is_some())
            })
    }

    fn pubsub(&mut self, command: PubSubCommand, name: &str, arity: i32, args: &[&[u8]]) {
        if !arity_ok(arity, args.len()) {
            if self.client.in_multi() {
                self.client.multi_dirty = true;
            }
            return self.reply(&arity_error(name));
        }
        if !self.client.authenticated {
            if self.client.in_multi() {
                self.client.multi_dirty = true;
            }
            return self.reply(&Reply::err("NOAUTH Authentication required."));
        }
        if let Some(noperm) = self.engine.acl_refusal(&self.client, args) {
            if self.client.in_multi() {
                self.client.multi_dirty = true;
            }
            return self.reply(&noperm);
        }
        if self.subscriptions.active()
            && self.protocol() == Protocol::Resp2
            && !command.allowed_when_subscribed()
        {
            let name = full_name(name, args);
            return self.reject(
                args,
                &format!("Can't execute '{name}': {SUBSCRIBED_CONTEXT}"),
            );
        }
        if let Some(queue) = self.client.multi.as_mut() {
            queue.push(args.iter().map(|a| a.to_vec()).collect());
            return self.reply(&Reply::queued());
        }
        self.run_pubsub(command, args);
    }

    fn run_pubsub(&mut self, command: PubSubCommand, args: &[&[u8]]) {
        self.engine.feed_monitors(&self.client, args);
        let protocol = self.protocol();
        let broker = self.subscriptions.broker();
        let reply = match command {
            PubSubCommand::Subscribe(kind) => {
                self.subscriptions
                    .subscribe(kind, &args[1..], protocol, &mut self.output);
                self.pushed = true;
                return self.publish_subscriptions();
            }
            PubSubCommand::Unsubscribe(kind) => {
                self.subscriptions
                    .unsubscribe(kind, &args[1..], protocol, &mut self.output);
                self.pushed = true;
                return self.publish_subscriptions();
            }
            PubSubCommand::Publish => {
                broker.settle(self.client.id, args[1], false);
                Reply::Int(broker.publish(args[1], args[2]) as i64)
            }
            PubSubCommand::SPublish => {
                broker.settle(self.client.id, args[1], true);
                Reply::Int(broker.spublish(args[1], args[2]) as i64)
            }
            PubSubCommand::PubSub => pubsub_command(broker, args),
        };
        self.reply(&reply);
    }

    /// Publishes the subscription counts for CLIENT LIST.
    fn publish_subscriptions(&self) {
        let (channels, patterns, shard) = self.subscriptions.counts();
        self.client
            .shared
            .set_subscriptions(channels, patterns, shard);
        self.client
            .shared
            .set_subscribed_names(self.subscriptions.names());
    }

    /// EXEC of a transaction that queued pub/sub commands, which the engine cannot run: the
    /// engine checks WATCH with an empty transaction first, then runs each stretch of engine
    /// commands as a transaction of its own, and the server runs the pub/sub commands
    /// between them. The reply has Redis's shape: one header, then each command's replies.
    fn exec_with_pubsub(&mut self) {
        let queue = self.client.multi.replace(Vec::new()).unwrap_or_default();
        let check = execute(&self.engine, &mut self.client, &[b"EXEC"]);
        if !matches!(check, Reply::Array(_)) {
            return self.reply(&check);
        }
        write_len(&mut self.output, b'*', queue.len());
        let mut stretch: Vec<Vec<Vec<u8>>> = Vec::new();
        for args in queue {
            match PubSubCommand::lookup(&args[0]) {
                Some((command, _, _)) => {
                    self.exec_stretch(std::mem::take(&mut stretch));
                    let args: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
                    self.run_pubsub(command, &args);
                }
                None => stretch.push(args),
            }
        }
        self.exec_stretch(stretch);
        // The confirmations sit among EXEC's replies: under CLIENT REPLY OFF they go with
        // them (Redis would still send them, apart from the replies it withholds).
        self.pushed = false;
    }

    fn exec_stretch(&mut self, stretch: Vec<Vec<Vec<u8>>>) {
        if stretch.is_empty() {
            return;
        }
        self.client.multi = Some(stretch);
        match execute(&self.engine, &mut self.client, &[b"EXEC"]) {
            Reply::Array(replies) => {
                for reply in &replies {
                    self.reply(reply);
                }
            }
            other => self.reply(&other),
        }
    }
}

/// Runs a command on the engine. A command that may run long on this thread (a script, or
/// any command while a script runs, which waits for it or for its BUSY state) runs in
/// `block_in_place`, so the runtime moves this worker's other connections elsewhere: the
/// client that sends SCRIPT KILL must get a thread while a script holds one.
fn execute(engine: &Engine, client: &mut Client, args: &[&[u8]]) -> Reply {
    #[cfg(feature = "scripting")]
    if may_run_long(engine, client, args[0]) {
        let multi_thread = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if multi_thread {
            return tokio::task::block_in_place(|| engine.execute(client, args));
        }
    }
    engine.execute(client, args)
}

/// A script command, an EXEC whose transaction holds one, or any command while a script
/// runs; checked by the first letter first, so other commands pay one byte comparison and
/// one relaxed load. An EXEC without a script is not long: handing it to a task would let
/// requests that arrived after it, from other clients, run before it.
#[cfg(feature = "scripting")]
pub(super) fn may_run_long(engine: &Engine, client: &Client, name: &[u8]) -> bool {
    let long = is_script(name)
        || (is(name, "exec")
            && client.multi.as_ref().is_some_and(|queue| {
                queue
                    .iter()
                    .any(|c| c.first().is_some_and(|n| is_script(n)))
            }));
    long || engine.script_running()
}

/// EVAL, EVALSHA, FCALL and their read-only forms.
#[cfg(feature = "scripting")]
fn is_script(name: &[u8]) -> bool {
    matches!(name.first(), Some(b'e' | b'E' | b'f' | b'F'))
        && [
            "eval",
            "evalsha",
            "eval_ro",
            "evalsha_ro",
            "fcall",
            "fcall_ro",
        ]
        .iter()
        .any(|n| is(name, n))
}

/// The next monitor line if this connection is a monitor (`None`: it was cut off); never
/// resolves otherwise.
async fn recv_monitor(
    monitor: &mut Option<tokio::sync::mpsc::Receiver<MonitorLine>>,
) -> Option<MonitorLine> {
    match monitor {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

/// `name`, or `name|sub` for a command with subcommands, as Redis names it in errors.
fn full_name(name: &str, args: &[&[u8]]) -> String {
    match args.get(1) {
        Some(sub) if CONTAINER_COMMANDS.contains(&name) => {
            format!(
                "{name}|{}",
                String::from_utf8_lossy(sub).to_ascii_lowercase()
            )
        }
        _ => name.to_string(),
    }
}

/// A stream the server can wait on without a buffer: TCP or a Unix socket.
///
/// Waiting for readiness first and reading after (rather than `read_buf` into a reserved
/// buffer) lets an idle connection hold no buffer at all: 10,000 idle clients then cost
/// their task and session, not 10,000 input buffers (Redis frees an idle client's query
/// buffer too).
pub(crate) trait Socket: AsyncRead + AsyncWrite + Unpin {
    /// Resolves when a read would not block (data, end of stream, or an error).
    fn readable(&self) -> impl std::future::Future<Output = io::Result<()>>;
    /// Reads what is there without waiting (`WouldBlock` when nothing is).
    fn try_read_buf(&self, buf: &mut BytesMut) -> io::Result<usize>;
    /// Writes what the socket takes without waiting (`WouldBlock` when it takes nothing).
    fn try_write(&self, buf: &[u8]) -> io::Result<usize>;
    /// The standard stream, taken off the runtime (to go back to an event loop).
    fn into_std(self) -> io::Result<StdStream>;
}

impl Socket for tokio::net::TcpStream {
    fn readable(&self) -> impl std::future::Future<Output = io::Result<()>> {
        tokio::net::TcpStream::readable(self)
    }
    fn try_read_buf(&self, buf: &mut BytesMut) -> io::Result<usize> {
        read_clearing_readiness(self.as_raw_fd(), buf, |read| {
            self.try_io(tokio::io::Interest::READABLE, read)
        })
    }
    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        tokio::net::TcpStream::try_write(self, buf)
    }
    fn into_std(self) -> io::Result<StdStream> {
        tokio::net::TcpStream::into_std(self).map(StdStream::Tcp)
    }
}

impl Socket for tokio::net::UnixStream {
    fn readable(&self) -> impl std::future::Future<Output = io::Result<()>> {
        tokio::net::UnixStream::readable(self)
    }
    fn try_read_buf(&self, buf: &mut BytesMut) -> io::Result<usize> {
        read_clearing_readiness(self.as_raw_fd(), buf, |read| {
            self.try_io(tokio::io::Interest::READABLE, read)
        })
    }
    fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        tokio::net::UnixStream::try_write(self, buf)
    }
    fn into_std(self) -> io::Result<StdStream> {
        tokio::net::UnixStream::into_std(self).map(StdStream::Unix)
    }
}

/// Reads what the socket `fd` holds into `buf`'s spare room, through `try_io` (the stream's
/// own `try_io`, which tracks its readiness). A short read means the socket is drained, so
/// the closure reports `WouldBlock` after it and `try_io` clears the readiness, as tokio's
/// own `poll_read` does: the next `readable()` waits for new data instead of resolving at
/// once for a read that would only find nothing. Without this every request at pipeline
/// depth 1 cost a second, empty `read` and a second pass of the connection's loop.
fn read_clearing_readiness(
    fd: std::os::fd::RawFd,
    buf: &mut BytesMut,
    try_io: impl FnOnce(&mut dyn FnMut() -> io::Result<()>) -> io::Result<()>,
) -> io::Result<usize> {
    if buf.len() == buf.capacity() {
        buf.reserve(READ_CHUNK);
    }
    let mut got = 0;
    let result = try_io(&mut || loop {
        let spare = buf.spare_capacity_mut();
        let room = spare.len();
        // SAFETY: `spare` is `room` writable bytes owned by `buf`, and `read` writes at most
        // `room` bytes into them; `fd` is the open socket of the stream that calls us.
        let n = unsafe { libc::read(fd, spare.as_mut_ptr().cast(), room) };
        if n < 0 {
            let error = io::Error::last_os_error();
            if error.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(error);
        }
        let n = n.unsigned_abs();
        // SAFETY: `read` initialised the first `n` spare bytes.
        unsafe { buf.set_len(buf.len() + n) };
        got = n;
        return if n > 0 && n < room {
            Err(io::ErrorKind::WouldBlock.into())
        } else {
            Ok(())
        };
    });
    match result {
        Ok(()) => Ok(got),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock && got > 0 => Ok(got),
        Err(e) => Err(e),
    }
}

/// Each worker thread's buffers for the batch it is running: the bytes read and the
/// replies. A batch runs without an await between its read and its write, so one pair per
/// thread serves every connection that thread runs, and a connection that is between
/// batches holds neither (10,000 idle clients do not cost 10,000 × 16 KiB), while a busy
/// one does not allocate and free them for every batch either.
struct Scratch {
    input: BytesMut,
    output: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch {
        input: BytesMut::new(),
        output: Vec::new(),
    });
}

/// A connection: its stream, input buffer, parser and session.
///
/// Memory: between batches an idle connection holds no input or output buffer. Input is
/// read only once the socket is readable ([`Socket`]), into its thread's [`Scratch`]
/// buffer, and replies are gathered in the scratch output; the connection keeps only what a
/// batch left (part of a request, unwritten replies) in buffers of its own, released once
/// empty. What an idle client costs is its task, parser and session. The waits for a
/// blocked command or a CLIENT PAUSE are boxed for the same reason.
pub(crate) struct Connection<S> {
    stream: S,
    input: BytesMut,
    parser: RequestParser,
    session: Session,
    /// Came from an event loop, and goes back to it once it needs a task no more
    /// ([`Session::needs_task`]).
    from_loop: bool,
}

/// What a connection the event loop handed over takes back to it: its stream, session,
/// parser (mid-request, perhaps) and the bytes it read but has not run.
pub(super) type Parts = (StdStream, Session, RequestParser, BytesMut);

impl<S: Socket> Connection<S> {
    pub(crate) fn new(stream: S, session: Session, max_bulk_len: u64) -> Connection<S> {
        Connection {
            stream,
            input: BytesMut::new(),
            parser: RequestParser::new(max_bulk_len),
            session,
            from_loop: false,
        }
    }

    /// A connection the event loop ([`super::event_loop`]) hands over, with what it had
    /// there: the bytes it read but has not run, its parser (mid-request, perhaps) and its
    /// session.
    pub(super) fn handed_over(
        stream: S,
        session: Session,
        parser: RequestParser,
        input: BytesMut,
    ) -> Connection<S> {
        Connection {
            stream,
            input,
            parser,
            session,
            from_loop: true,
        }
    }

    /// Serves the client until it leaves, QUITs, sends a malformed request, overflows its
    /// pub/sub queue, or `shutdown` fires.
    pub(crate) async fn serve(self, shutdown: broadcast::Receiver<()>) -> io::Result<()> {
        self.serve_or_return(shutdown).await.map(drop)
    }

    /// [`Connection::serve`]; a connection the event loop handed over stops as soon as
    /// it waits on nothing but its socket, with its replies written, and comes back as the
    /// parts its loop takes again. Clients on two threads would otherwise race: a request
    /// this task runs at once may overtake one another client sent earlier, which the loop
    /// has not read yet (redis-server runs them in the order they arrived).
    pub(super) async fn serve_or_return(
        mut self,
        mut shutdown: broadcast::Receiver<()>,
    ) -> io::Result<Option<Parts>> {
        // Whether the connection closes once the replies gathered so far are written.
        let mut close = false;
        loop {
            self.flush().await?;
            if close {
                let _ = self.stream.shutdown().await;
                return Ok(None);
            }
            if self.session.client.shared.killed() {
                // CLIENT KILL: Redis closes the connection without a word.
                return Ok(None);
            }
            if self.from_loop && !self.session.needs_task() {
                let Connection {
                    stream,
                    input,
                    parser,
                    session,
                    ..
                } = self;
                return Ok(Some((stream.into_std()?, session, parser, input)));
            }
            if let Some(parked) = self.session.blocked.take() {
                // Boxed: the wait's state lives on the heap only while a client waits, so it
                // does not enlarge every connection's task (see `Connection`).
                let leave = Box::pin(self.wait_unblocked(parked, &mut shutdown)).await?;
                self.session.client.shared.set_blocked(false);
                if leave {
                    self.flush().await?;
                    let _ = self.stream.shutdown().await;
                    return Ok(None);
                }
                // Answered: run what the client pipelined behind the blocking command.
                close = self.run_held_input();
                continue;
            }
            if let Some(until) = self.session.paused_until.take() {
                if Box::pin(self.wait_unpaused(until, &mut shutdown)).await? {
                    return Ok(None);
                }
                close = self.run_held_input();
                continue;
            }
            tokio::select! {
                ready = self.stream.readable() => {
                    ready?;
                    match self.read_and_run()? {
                        Some(closing) => close = closing,
                        None => return Ok(None),
                    }
                }
                Some(delivery) = self.session.subscriptions.recv() => {
                    let protocol = self.session.protocol();
                    delivery.encode(protocol, &mut self.session.output);
                    while self.session.output.len() < MESSAGE_BATCH {
                        let Some(delivery) = self.session.subscriptions.try_recv() else {
                            break;
                        };
                        delivery.encode(protocol, &mut self.session.output);
                    }
                    if self.session.subscriptions.overflowed() {
                        // Redis drops a pub/sub client over its output limit without a word.
                        return Ok(None);
                    }
                }
                line = recv_monitor(&mut self.session.monitor) => {
                    // A closed queue: the monitor fell too far behind; Redis drops a
                    // client over its output limit without a word.
                    let Some(line) = line else { return Ok(None) };
                    self.session.output.extend_from_slice(&line);
                    while self.session.output.len() < MESSAGE_BATCH {
                        let Some(Ok(line)) = self.session.monitor.as_mut().map(|m| m.try_recv()) else {
                            break;
                        };
                        self.session.output.extend_from_slice(&line);
                    }
                }
                () = self.session.client.shared.woken() => {
                    if self.session.client.shared.killed() {
                        return Ok(None);
                    }
                }
                _ = shutdown.recv() => return Ok(None),
            }
        }
    }

    /// Reads what the socket holds and runs every complete request in it, writing the
    /// replies if the socket takes them now (what it does not take stays in the session's
    /// output for [`Connection::flush`]). `None` at the end of the stream; otherwise whether
    /// the connection closes after its replies.
    ///
    /// The common batch runs in this worker thread's [`Scratch`] buffers, so a connection
    /// holds buffers of its own only for what a batch leaves behind: part of a request, the
    /// requests behind a blocking command or a pause, replies the socket did not take.
    fn read_and_run(&mut self) -> io::Result<Option<bool>> {
        // A PUBLISH meanwhile waits for what this read brings to run (`Broker::settle`).
        self.session.subscriptions.reading();
        let ran = self.read_and_run_batch();
        // The batch it ran (if any) was counted by `run_requests`; counting it again here
        // let a PUBLISH that looked between the two go on before the next batch ran.
        self.session.subscriptions.done_reading();
        ran
    }

    fn read_and_run_batch(&mut self) -> io::Result<Option<bool>> {
        if self.input.is_empty() && self.session.output.is_empty() {
            let ran = SCRATCH.with(|scratch| {
                // Taken only if no batch of this thread holds it (one cannot: a batch does
                // not await), so the fallback below is for safety, not for speed.
                let mut scratch = scratch.try_borrow_mut().ok()?;
                Some(self.run_in_scratch(&mut scratch))
            });
            if let Some(ran) = ran {
                return ran;
            }
        }
        // Part of a request waits in the connection's own buffer: read behind it, making
        // room for the rest of a large bulk string at once.
        let missing = self.parser.bytes_needed().saturating_sub(self.input.len());
        self.input
            .reserve(missing.clamp(READ_CHUNK, MAX_READ_RESERVE));
        match self.stream.try_read_buf(&mut self.input) {
            Ok(0) => Ok(None),
            Ok(_) => Ok(Some(self.run_held_input())),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Some(false)),
            Err(e) => Err(e),
        }
    }

    /// [`Connection::read_and_run`] in this thread's scratch buffers.
    fn run_in_scratch(&mut self, scratch: &mut Scratch) -> io::Result<Option<bool>> {
        let Scratch { input, output } = scratch;
        input.clear();
        input.reserve(READ_CHUNK);
        match self.stream.try_read_buf(input) {
            Ok(0) => return Ok(None),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Some(false)),
            Err(e) => return Err(e),
        }
        std::mem::swap(&mut self.session.output, output);
        let (consumed, stop) = run_requests(&mut self.session, &mut self.parser, input, false);
        // The batch's writes reach the append-only file before its replies leave, as in
        // [`Connection::flush`].
        self.session.engine.flush_aof();
        let written = write_now(|b| self.stream.try_write(b), &self.session.output);
        std::mem::swap(&mut self.session.output, output);
        self.input.extend_from_slice(&input[consumed..]);
        let written = written?;
        self.session.output.extend_from_slice(&output[written..]);
        output.clear();
        if output.capacity() > MAX_IDLE_BUFFER {
            // One huge reply must not pin its memory to the thread.
            *output = Vec::new();
        }
        Ok(Some(stop == Stop::Close))
    }

    /// Runs the complete requests in the connection's own input buffer; true when the
    /// connection must close after writing the replies. The buffer is released once empty.
    pub(super) fn run_held_input(&mut self) -> bool {
        if self.session.output.capacity() == 0 && !self.input.is_empty() {
            // Room for a batch's replies in one step, rather than growing from nothing.
            self.session.output.reserve(READ_CHUNK);
        }
        let (consumed, stop) =
            run_requests(&mut self.session, &mut self.parser, &self.input, false);
        self.input.advance(consumed);
        if self.input.is_empty() {
            // Nothing pending: wait without a buffer (see `Connection`).
            self.input = BytesMut::new();
        }
        stop == Stop::Close
    }

    /// Waits while CLIENT PAUSE holds back the next request: until the pause ends or is
    /// lifted (false: run the batch again, which checks again), or the client is killed,
    /// leaves or the server shuts down (true: close). Monitor lines are written meanwhile.
    async fn wait_unpaused(
        &mut self,
        until: std::time::Instant,
        shutdown: &mut broadcast::Receiver<()>,
    ) -> io::Result<bool> {
        let engine = self.session.engine.clone();
        let lifted = engine.pause_lifted();
        tokio::pin!(lifted);
        let sleep = tokio::time::sleep_until(until.into());
        tokio::pin!(sleep);
        loop {
            tokio::select! {
                () = &mut lifted => return Ok(false),
                () = &mut sleep => return Ok(false),
                () = self.session.client.shared.woken() => {
                    if self.session.client.shared.killed() {
                        return Ok(true);
                    }
                }
                line = recv_monitor(&mut self.session.monitor) => {
                    let Some(line) = line else { return Ok(true) };
                    self.session.output.extend_from_slice(&line);
                    self.flush().await?;
                }
                _ = shutdown.recv() => return Ok(true),
            }
        }
    }

    /// Writes the replies gathered so far, and the messages pushed to the client since.
    pub(super) async fn flush(&mut self) -> io::Result<()> {
        self.session.write_pushes();
        // Writes are in the append-only file (and synced, under `appendfsync always`)
        // before any reply to them goes out, as redis-server's `beforeSleep` does.
        self.session.engine.flush_aof();
        if !self.session.output.is_empty() {
            self.stream.write_all(&self.session.output).await?;
            self.session.output.clear();
            if self.input.is_empty() || self.session.output.capacity() > MAX_IDLE_BUFFER {
                self.session.output = Vec::new();
            }
        }
        // A TLS session's ciphertext the socket did not take (a plain socket has none).
        self.stream.flush().await
    }

    /// Waits until the blocked command is served or times out (its reply is then in the
    /// output; false), or the client leaves or the server shuts down (true: close). Pub/sub
    /// messages for a RESP3 client are written meanwhile; requests are read, not run.
    async fn wait_unblocked(
        &mut self,
        parked: Parked,
        shutdown: &mut broadcast::Receiver<()>,
    ) -> io::Result<bool> {
        let deadline = parked.deadline();
        let timeout = async move {
            match deadline {
                Some(deadline) => tokio::time::sleep_until(deadline).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(timeout);
        loop {
            let reading = self.input.len() < MAX_BLOCKED_INPUT;
            if reading {
                self.input.reserve(READ_CHUNK);
            }
            tokio::select! {
                () = parked.woken() => {
                    if let Some(reply) = parked.served() {
                        self.session.reply(&reply);
                        return Ok(false);
                    }
                }
                () = self.session.client.shared.woken() => {
                    if self.session.client.shared.killed() {
                        return Ok(true);
                    }
                    if let Some(how) = self.session.client.shared.take_unblock() {
                        // A reply served at this very moment wins over the request.
                        let reply = parked.unblock().unwrap_or(match how {
                            UnblockRequest::Timeout => Reply::NilArray,
                            UnblockRequest::Error => {
                                Reply::err("UNBLOCKED client unblocked via CLIENT UNBLOCK")
                            }
                        });
                        self.session.reply(&reply);
                        return Ok(false);
                    }
                }
                () = &mut timeout => {
                    // Redis 7.0 answers a timed-out BLPOP, BRPOP, BLMOVE and XREAD alike.
                    let reply = parked.unblock().unwrap_or(Reply::NilArray);
                    self.session.reply(&reply);
                    return Ok(false);
                }
                read = self.stream.read_buf(&mut self.input), if reading => {
                    // The client left: dropping `parked` forgets its call.
                    if read? == 0 {
                        return Ok(true);
                    }
                }
                Some(delivery) = self.session.subscriptions.recv() => {
                    delivery.encode(self.session.protocol(), &mut self.session.output);
                    if self.session.subscriptions.overflowed() {
                        return Ok(true);
                    }
                    self.flush().await?;
                }
                _ = shutdown.recv() => {
                    // A reply served at this very moment still goes out before the close.
                    if let Some(reply) = parked.unblock() {
                        self.session.reply(&reply);
                    }
                    return Ok(true);
                }
            }
        }
    }
}

/// Why [`run_requests`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// Every complete request ran (or the session now waits: blocked, paused).
    Done,
    /// The connection closes after its replies (QUIT, a protocol error, CLIENT KILL of itself).
    Close,
    /// The next request may run long; only when asked to stop before one (the event loop,
    /// which hands such a request to the task design).
    LongRequest,
}

/// Runs every complete request at the start of `input`: a blocking command that has to
/// wait or a CLIENT PAUSE stops early, and so, with `stop_before_long`, does a request that
/// may run long (see [`may_run_long`]). Returns how many bytes it used and why it stopped.
pub(super) fn run_requests(
    session: &mut Session,
    parser: &mut RequestParser,
    input: &[u8],
    stop_before_long: bool,
) -> (usize, Stop) {
    // Messages pushed while the client was idle go before the replies to what it sent.
    session.write_pushes();
    let ran = run_batch(session, parser, input, stop_before_long);
    // A PUBLISH may be waiting for this batch to leave subscriptions (`Broker::settle`).
    session.subscriptions.ran_batch();
    ran
}

fn run_batch(
    session: &mut Session,
    parser: &mut RequestParser,
    input: &[u8],
    stop_before_long: bool,
) -> (usize, Stop) {
    let mut consumed = 0;
    loop {
        let authenticated = session.client.authenticated;
        match parser.parse(&input[consumed..], authenticated) {
            Ok(Some(request)) => {
                if request.is_empty() {
                    consumed += request.consumed();
                    continue;
                }
                let arg_slice = request.arg_slice();
                let args: &[&[u8]] = &arg_slice;
                #[cfg(feature = "scripting")]
                if stop_before_long && may_run_long(&session.engine, &session.client, args[0]) {
                    return (consumed, Stop::LongRequest);
                }
                #[cfg(not(feature = "scripting"))]
                let _ = stop_before_long;
                // CLIENT PAUSE: the request stays in the buffer until the pause ends.
                let paused = session.engine.paused_until(&session.client, args);
                if paused.is_some() {
                    session.paused_until = paused;
                    return (consumed, Stop::Done);
                }
                consumed += request.consumed();
                session.dispatch(args);
                session.serve_blocked();
                if session.client.closing {
                    return (consumed, Stop::Close);
                }
                if session.blocked.is_some() {
                    return (consumed, Stop::Done);
                }
            }
            Ok(None) => return (consumed, Stop::Done),
            Err(error) => {
                session.reply(&Reply::Error(error.text().into()));
                return (consumed, Stop::Close);
            }
        }
    }
}

/// Writes what `write` takes without waiting (it answers `WouldBlock` when the socket is
/// full); returns how many bytes it took.
pub(super) fn write_now(
    mut write: impl FnMut(&[u8]) -> io::Result<usize>,
    bytes: &[u8],
) -> io::Result<usize> {
    let mut written = 0;
    while written < bytes.len() {
        match write(&bytes[written..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => written += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(written)
}

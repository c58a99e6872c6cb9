//! The socket driver: each client thread runs a single-threaded tokio runtime polling its
//! connections as one future; a connection ([`Client`]) keeps up to `--pipeline` requests in
//! flight per server it talks to (one in plain mode, one per master in cluster mode, routed
//! by [`crate::kv::cluster`]: `-MOVED` re-reads the slot map, `-ASK` is followed once).
//!
//! With `--wait N` every write is followed by `WAIT N 0` in the same batch on the same
//! connection (in cluster mode: to the primary the write went to); the write is recorded when
//! WAIT's reply is in, so its latency covers both, and a WAIT that answers an error or fewer
//! than N makes the write an error.
//!
//! Invariants: a request's latency runs from the start of the write of its batch to the read
//! that completed its reply (with `--wait`: its WAIT's reply); requests in flight are always
//! drained, so every request sent is counted; replies are matched to requests in order per
//! connection; a connection's buffers are [`SOCKET_BUFFER_BYTES`] each at the start and grow
//! only with what is queued.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::plan::{fail, ConnPlan, Stop};
use super::schedule::{Clock, Schedule, MAX_NAP};
use super::stats::{Failover, Live, Outcome, RowMap, Sample, ThreadStats};
use crate::kv::command::RequestBuf;
use crate::kv::conn_gen::RequestKind;
use crate::kv::options::limits::SOCKET_BUFFER_BYTES;
use crate::kv::options::KvConfig;
use crate::resp::scan::{scan_reply, ReplyKind};
use crate::target::Endpoint;
use crate::transport::access::TlsClient;
use crate::transport::cluster::slots::{self as cluster, Redirect, Topology};

/// How long a TLS handshake may take: milliseconds on a loaded machine; a server that is
/// not speaking TLS never finishes one.
const TLS_HANDSHAKE: Duration = Duration::from_secs(10);
/// How often a client whose primary failed asks for the slot map again.
const FAILOVER_POLL: Duration = Duration::from_millis(100);
/// How long a client waits for the cluster to name a new primary before the run fails
/// (a run with a deadline stops waiting at the deadline).
const FAILOVER_WAIT: Duration = Duration::from_secs(60);

/// Opens and closes one connection to `endpoint`, within `timeout` (--connection-timeout)
/// when given, per resolved address as `TcpStream::connect_timeout` allows.
pub(super) fn probe(endpoint: &Endpoint, timeout: Option<Duration>) -> io::Result<()> {
    use std::net::ToSocketAddrs as _;
    match (endpoint, timeout) {
        (Endpoint::Tcp { host, port }, None) => {
            std::net::TcpStream::connect((host.as_str(), *port)).map(drop)
        }
        (Endpoint::Tcp { host, port }, Some(t)) => {
            (host.as_str(), *port).to_socket_addrs().and_then(|addrs| {
                let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
                for addr in addrs {
                    match std::net::TcpStream::connect_timeout(&addr, t) {
                        Ok(_) => return Ok(()),
                        Err(e) => last = e,
                    }
                }
                Err(last)
            })
        }
        (Endpoint::Unix(path), _) => std::os::unix::net::UnixStream::connect(path).map(drop),
    }
}

/// What a client thread's connections share: the run's clock and stop flags, the row map,
/// the thread's statistics and the live counters, and the connection options.
pub(super) struct Ctx<'a> {
    clock: &'a Clock,
    stop: &'a Stop,
    map: &'a RowMap,
    stats: &'a RefCell<ThreadStats>,
    live: &'a Live,
    /// `--reconnect-interval`: requests per connection before it is closed and reopened.
    reconnect: Option<u64>,
    /// `--connection-timeout`.
    connect_timeout: Option<Duration>,
    /// The connect sequence (HELLO, AUTH, SELECT).
    prelude: &'a [Vec<Vec<u8>>],
    /// `--tls`: every connection's handshake.
    tls: Option<&'a TlsClient>,
    /// `--wait N`: N, and `WAIT N 0` packed (empty without it).
    wait: (u32, &'a [u8]),
}

#[allow(clippy::too_many_arguments)]
pub(super) fn run_sockets(
    endpoint: &Endpoint,
    tls: Option<&TlsClient>,
    topology: Option<Arc<Topology>>,
    cfg: &KvConfig,
    conns: Vec<ConnPlan>,
    clock: &Clock,
    stop: &Stop,
    why: &Mutex<Option<String>>,
    map: &RowMap,
    rows: usize,
    live: &Live,
) -> ThreadStats {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            fail(why, stop, format!("cannot start a client runtime: {e}"));
            return ThreadStats::new(rows);
        }
    };
    let stats = RefCell::new(ThreadStats::new(rows));
    let prelude = conns.first().map(|c| c.prelude.clone()).unwrap_or_default();
    let mut wait_cmd = Vec::new();
    if cfg.wait > 0 {
        let mut req = RequestBuf::new();
        req.push_arg(b"WAIT");
        req.push_u64_arg(u64::from(cfg.wait));
        req.push_arg(b"0");
        req.write_resp(&mut wait_cmd);
    }
    let ctx = Ctx {
        clock,
        stop,
        map,
        stats: &stats,
        live,
        reconnect: cfg.reconnect_interval.map(u64::from),
        connect_timeout: cfg.connection_timeout,
        prelude: &prelude,
        tls,
        wait: (cfg.wait, &wait_cmd),
    };
    runtime.block_on(async {
        let futures = conns.into_iter().map(|conn| {
            let (ctx, topology) = (&ctx, topology.as_ref());
            async move {
                if let Err(e) = drive(endpoint, topology, conn, ctx).await {
                    fail(why, stop, format!("connection to {endpoint} failed: {e}"));
                }
            }
        });
        futures_util::future::join_all(futures).await;
    });
    stats.into_inner()
}

pub(super) fn bad_reply(e: crate::resp::scan::BadReply) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e)
}

/// Sends the connect sequence (HELLO, AUTH, SELECT); each reply must not be an error.
pub(super) async fn send_prelude<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    prelude: &[Vec<Vec<u8>>],
) -> io::Result<()> {
    let mut input = Vec::new();
    for cmd in prelude {
        if let cluster::Value::Error(text) = cluster::query(stream, cmd, &mut input).await? {
            let what = String::from_utf8_lossy(&cmd[0]).into_owned();
            return Err(io::Error::other(format!("{what} failed: {text}")));
        }
    }
    Ok(())
}

/// A connection's byte stream, TCP or Unix socket, as one type: a client holds one per
/// cluster node and reopens them (`--reconnect-interval`).
pub(super) trait Io: AsyncRead + AsyncWrite + Unpin {}
impl<T: AsyncRead + AsyncWrite + Unpin> Io for T {}

/// Connects to `node`, TCP without Nagle's delay (with the TLS handshake when `tls` is given)
/// or a Unix socket.
pub(super) async fn connect(node: &Endpoint, tls: Option<&TlsClient>) -> io::Result<Box<dyn Io>> {
    Ok(match node {
        Endpoint::Tcp { host, port } => {
            let s = tokio::net::TcpStream::connect((host.as_str(), *port)).await?;
            let _ = s.set_nodelay(true);
            match tls {
                Some(tls) => {
                    let (connector, name) = tls.connector(host)?;
                    // A plain-text server never answers a ClientHello (redis-server waits for
                    // the end of an inline command): bounded, so such a run ends with a reason.
                    let handshake = tokio::time::timeout(TLS_HANDSHAKE, connector.connect(name, s));
                    let stream = handshake
                        .await
                        .map_err(|_| {
                            io::Error::new(
                                io::ErrorKind::TimedOut,
                                format!(
                                    "no TLS handshake within {} s (does the server speak TLS on \
                                     that port? a plain-text port never answers one)",
                                    TLS_HANDSHAKE.as_secs()
                                ),
                            )
                        })?
                        .map_err(|e| {
                            io::Error::new(e.kind(), format!("TLS handshake failed: {e}"))
                        })?;
                    Box::new(stream)
                }
                None => Box::new(s),
            }
        }
        Endpoint::Unix(path) => Box::new(tokio::net::UnixStream::connect(path).await?),
    })
}

/// Connects to `node` (within `--connection-timeout`) and sends the connect sequence.
pub(super) async fn open(node: &Endpoint, ctx: &Ctx<'_>) -> io::Result<Box<dyn Io>> {
    let connect = connect(node, ctx.tls);
    let mut stream = match ctx.connect_timeout {
        Some(t) => tokio::time::timeout(t, connect).await.map_err(|_| {
            io::Error::new(
                io::ErrorKind::TimedOut,
                format!(
                    "no connection to {node} within --connection-timeout {}",
                    t.as_secs()
                ),
            )
        })??,
        None => connect.await?,
    };
    send_prelude(&mut stream, ctx.prelude).await?;
    Ok(stream)
}

/// What an entry of a connection's queue is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// A generated request.
    Request,
    /// `ASKING` before a redirected request: its `+OK` is not counted.
    Asking,
    /// A request resent after `-ASK` (once: a second `-ASK` is counted, not followed).
    Retry,
    /// `WAIT N 0` after a write (`--wait`): its reply completes the write's.
    Wait,
}

/// A request written or in flight: what it is, its size, when its batch went out, when it
/// was due (open loop), in cluster mode its bytes, to resend after `-ASK`, and whether a
/// WAIT follows it (`--wait`).
pub(super) struct InFlight {
    kind: RequestKind,
    tx: usize,
    sent: Instant,
    intended: Option<Instant>,
    step: Step,
    copy: Option<Vec<u8>>,
    waited: bool,
}

/// A write whose reply is in and whose WAIT's reply is not yet (`--wait`): it is recorded
/// when that comes.
pub(super) struct Held {
    f: InFlight,
    outcome: Outcome,
    rx: usize,
}

/// One connection to one server (one per master in cluster mode).
pub(super) struct Shard {
    node: Endpoint,
    stream: Box<dyn Io>,
    /// Requests written since the last flush, and their bytes.
    out: Vec<u8>,
    batch: Vec<InFlight>,
    input: Vec<u8>,
    in_flight: VecDeque<InFlight>,
    /// Requests sent since the connection was opened (`--reconnect-interval`).
    on_connection: u64,
    /// `--wait`: the WAITs among `batch` and `in_flight` (they take no pipeline slot).
    waits: usize,
    /// `--wait`: the write answered, its WAIT not yet.
    held: Option<Held>,
}

impl Shard {
    async fn open(node: &Endpoint, ctx: &Ctx<'_>) -> io::Result<Shard> {
        Ok(Shard {
            node: node.clone(),
            stream: open(node, ctx).await?,
            out: Vec::with_capacity(SOCKET_BUFFER_BYTES),
            // Grown on demand beyond this: a huge --pipeline must not allocate up front.
            batch: Vec::with_capacity(ctx.clock.pipeline.min(1024)),
            input: Vec::with_capacity(SOCKET_BUFFER_BYTES),
            in_flight: VecDeque::with_capacity(ctx.clock.pipeline.min(1024)),
            on_connection: 0,
            waits: 0,
            held: None,
        })
    }

    /// Requests written or in flight, each write's WAIT not counted: what `--pipeline`
    /// bounds.
    fn pending(&self) -> usize {
        self.in_flight.len() + self.batch.len() - self.waits
    }

    /// Nothing written and unanswered, WAITs included.
    fn idle(&self) -> bool {
        self.in_flight.is_empty() && self.batch.is_empty()
    }

    /// Queues `WAIT N 0` after the request just queued (`--wait`).
    fn queue_wait(&mut self, kind: RequestKind, sent: Instant, ctx: &Ctx<'_>) {
        let packed = ctx.wait.1;
        self.out.extend_from_slice(packed);
        self.batch.push(InFlight {
            kind,
            tx: packed.len(),
            sent,
            intended: None,
            step: Step::Wait,
            copy: None,
            waited: false,
        });
        self.waits += 1;
    }
}

/// A generated request that waits for room on its connection (the request itself stays in
/// the connection's [`RequestBuf`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Parked {
    kind: RequestKind,
    intended: Option<Instant>,
    shard: usize,
}

/// One memtier client: one connection, or in cluster mode one per master (memtier's
/// `cluster_client`), each with up to `--pipeline` requests in flight.
pub(super) struct Client {
    shards: Vec<Shard>,
    /// Cluster mode: the slot map and, per node of it, the shard index.
    cluster: Option<(Arc<Topology>, Vec<usize>)>,
    /// Reusable buffers for the request copies kept in cluster mode.
    spare: Vec<Vec<u8>>,
    /// Where the next read starts looking, so no connection starves the others.
    next_read: usize,
    /// Round robin for keyless commands in cluster mode.
    keyless: usize,
}

impl Client {
    async fn open(
        endpoint: &Endpoint,
        topology: Option<&Arc<Topology>>,
        ctx: &Ctx<'_>,
    ) -> io::Result<Client> {
        let mut client = Client {
            shards: Vec::new(),
            cluster: None,
            spare: Vec::new(),
            next_read: 0,
            keyless: 0,
        };
        match topology {
            None => client.shards.push(Shard::open(endpoint, ctx).await?),
            Some(t) => client.use_topology(t.clone(), ctx).await?,
        }
        Ok(client)
    }

    /// Routes by `topology` from now on, opening connections to masters not yet connected.
    /// Connections to nodes that lost their slots stay open: their replies are still due.
    async fn use_topology(&mut self, topology: Arc<Topology>, ctx: &Ctx<'_>) -> io::Result<()> {
        let mut shard_of = Vec::with_capacity(topology.nodes.len());
        for node in &topology.nodes {
            shard_of.push(self.shard_for(node, ctx).await?);
        }
        self.cluster = Some((topology, shard_of));
        Ok(())
    }

    /// The shard connected to `node`, opened if there is none yet.
    async fn shard_for(&mut self, node: &Endpoint, ctx: &Ctx<'_>) -> io::Result<usize> {
        if let Some(i) = self.shards.iter().position(|s| s.node == *node) {
            return Ok(i);
        }
        self.shards.push(Shard::open(node, ctx).await?);
        Ok(self.shards.len() - 1)
    }

    /// The shard that serves the request in `req`: the master of its key's slot in cluster
    /// mode, the only connection otherwise.
    fn route(&mut self, kind: RequestKind, req: &RequestBuf, map: &RowMap) -> usize {
        let Some((topology, shard_of)) = &self.cluster else {
            return 0;
        };
        match map.key_arg(kind) {
            Some(pos) => topology
                .node_of(cluster::hash_slot(req.arg(pos)))
                .map_or(0, |n| shard_of[n]),
            None => {
                self.keyless = (self.keyless + 1) % self.shards.len();
                self.keyless
            }
        }
    }

    /// Requests written or in flight on every connection.
    fn pending(&self) -> usize {
        self.shards.iter().map(Shard::pending).sum()
    }

    /// Nothing unanswered on any connection.
    fn idle(&self) -> bool {
        self.shards.iter().all(Shard::idle)
    }

    fn has_room(&self, shard: usize, ctx: &Ctx<'_>) -> bool {
        let s = &self.shards[shard];
        s.pending() < ctx.clock.pipeline && ctx.reconnect.is_none_or(|n| s.on_connection < n)
    }

    /// Writes `req` into `shard`'s next batch (followed by WAIT when it writes and the run
    /// has `--wait`).
    fn queue(&mut self, shard: usize, p: Parked, req: &RequestBuf, now: Instant, ctx: &Ctx<'_>) {
        let waited = ctx.wait.0 > 0 && ctx.map.writes(p.kind);
        let s = &mut self.shards[shard];
        let before = s.out.len();
        req.write_resp(&mut s.out);
        let copy = self.cluster.is_some().then(|| {
            let mut v = self.spare.pop().unwrap_or_default();
            v.clear();
            v.extend_from_slice(&s.out[before..]);
            v
        });
        s.batch.push(InFlight {
            kind: p.kind,
            tx: s.out.len() - before,
            sent: now,
            intended: p.intended,
            step: Step::Request,
            copy,
            waited,
        });
        if waited {
            s.queue_wait(p.kind, now, ctx);
        }
        s.on_connection += 1;
    }

    /// Sends `ASKING` and then the redirected request `f` to `shard` (memtier follows no
    /// `-ASK`; edgebench follows each once, as a cluster client must for a migrating slot),
    /// and its WAIT there when it has one.
    fn queue_ask(&mut self, shard: usize, mut f: InFlight, ctx: &Ctx<'_>) {
        const ASKING: &[u8] = b"*1\r\n$6\r\nASKING\r\n";
        let s = &mut self.shards[shard];
        s.out.extend_from_slice(ASKING);
        s.batch.push(InFlight {
            kind: f.kind,
            tx: ASKING.len(),
            sent: f.sent,
            intended: None,
            step: Step::Asking,
            copy: None,
            waited: false,
        });
        if let Some(bytes) = &f.copy {
            s.out.extend_from_slice(bytes);
        }
        f.step = Step::Retry;
        let (waited, kind, sent) = (f.waited, f.kind, f.sent);
        s.batch.push(f);
        if waited {
            s.queue_wait(kind, sent, ctx);
        }
    }

    /// Writes every connection's batch; a batch's requests are sent at the moment its write
    /// starts (redirected requests keep their first send time).
    async fn flush(
        &mut self,
        schedule: Option<&Schedule>,
        ctx: &Ctx<'_>,
    ) -> Result<(), (usize, io::Error)> {
        for (i, s) in self.shards.iter_mut().enumerate() {
            if s.out.is_empty() {
                continue;
            }
            let t = Instant::now();
            s.stream.write_all(&s.out).await.map_err(|e| (i, e))?;
            s.out.clear();
            if let Some(sched) = schedule {
                let mut st = ctx.stats.borrow_mut();
                for f in s.batch.iter().filter(|f| f.step == Step::Request) {
                    if let Some(i) = f.intended {
                        st.note_send(ctx.clock, i, t, sched.interval());
                    }
                }
            }
            for mut f in s.batch.drain(..) {
                if f.step == Step::Request {
                    f.sent = t;
                }
                s.in_flight.push_back(f);
            }
        }
        Ok(())
    }

    /// Waits until a connection with requests in flight has bytes: its index and the count
    /// read (0: the server closed it). `read_buf` is cancel safe, so polling it and dropping
    /// it unfinished loses nothing.
    async fn read(&mut self) -> (usize, io::Result<usize>) {
        let n = self.shards.len();
        let start = self.next_read;
        let shards = &mut self.shards;
        let (i, r) = std::future::poll_fn(|cx| {
            for k in 0..n {
                let i = (start + k) % n;
                let s = &mut shards[i];
                if s.in_flight.is_empty() {
                    continue;
                }
                let read = s.stream.read_buf(&mut s.input);
                let read = std::pin::pin!(read);
                if let std::task::Poll::Ready(r) = std::future::Future::poll(read, cx) {
                    return std::task::Poll::Ready((i, r));
                }
            }
            std::task::Poll::Pending
        })
        .await;
        self.next_read = (i + 1) % n;
        (i, r)
    }
}

impl Client {
    /// Cluster mode: the connection to `shard`'s primary broke. Its requests in flight are
    /// counted as errors; then the client waits, asking the other primaries for the slot map,
    /// until one no longer names the failed node (a replica has taken over), and routes by
    /// it, the parked request too. It stops waiting at the run's deadline or stop, and fails
    /// after [`FAILOVER_WAIT`].
    async fn fail_over(
        &mut self,
        shard: usize,
        parked: &mut Option<Parked>,
        req: &RequestBuf,
        ctx: &Ctx<'_>,
    ) -> io::Result<()> {
        let broke = Instant::now();
        let s = &mut self.shards[shard];
        let dead = s.node.clone();
        // A write answered but not its WAIT is lost too: it was not acknowledged.
        let held = s.held.take().map(|h| h.f);
        let lost: Vec<InFlight> = held
            .into_iter()
            .chain(s.in_flight.drain(..))
            .chain(s.batch.drain(..))
            .collect();
        s.waits = 0;
        s.out.clear();
        s.input.clear();
        let mut failover = Failover {
            broke,
            resumed: None,
            lost: 0,
        };
        {
            let mut st = ctx.stats.borrow_mut();
            for f in lost
                .into_iter()
                .filter(|f| !matches!(f.step, Step::Asking | Step::Wait))
            {
                let (row, counts_hits) = ctx.map.row(f.kind);
                st.record(
                    ctx.clock,
                    Sample {
                        row,
                        counts_hits,
                        outcome: Outcome::Reply(ReplyKind::Error),
                        tx: f.tx,
                        rx: 0,
                        sent: f.sent,
                        intended: f.intended,
                        done: broke,
                    },
                );
                failover.lost += 1;
            }
        }
        let give_up = broke + FAILOVER_WAIT;
        let result = loop {
            let now = Instant::now();
            if ctx.stop.load(std::sync::atomic::Ordering::Relaxed)
                || ctx.clock.deadline.is_some_and(|d| now >= d)
            {
                break Ok(());
            }
            if now >= give_up {
                break Err(io::Error::other(format!(
                    "{dead} stopped answering and no other primary took over its slots within \
                     {}s",
                    FAILOVER_WAIT.as_secs()
                )));
            }
            tokio::time::sleep(FAILOVER_POLL).await;
            let asked: Vec<Endpoint> = self
                .shards
                .iter()
                .map(|s| s.node.clone())
                .filter(|n| *n != dead)
                .collect();
            let mut found = None;
            for node in &asked {
                if let Ok(t) = cluster::discover(node, ctx.prelude).await {
                    found = Some(t);
                    break;
                }
            }
            if let Some(t) = found.filter(|t| !t.nodes.contains(&dead)) {
                self.use_topology(Arc::new(t), ctx).await?;
                if let Some(p) = parked {
                    p.shard = self.route(p.kind, req, ctx.map);
                }
                failover.resumed = Some(Instant::now());
                break Ok(());
            }
        };
        let mut st = ctx.stats.borrow_mut();
        st.failover = Failover::merge(st.failover, Some(failover));
        result
    }
}

/// Whether WAIT's reply `body` counts at least `replicas` replicas (`:N`).
fn wait_acked(body: &[u8], replicas: u32) -> bool {
    body.strip_prefix(b":")
        .and_then(|rest| std::str::from_utf8(rest).ok())
        .and_then(|n| n.trim_end().parse::<i64>().ok())
        .is_some_and(|n| n >= i64::from(replicas))
}

/// Non-nil elements of an array reply: an MGET's hits, one per key found (memtier counts
/// `get_hits()` hits and `keys − hits` misses per MGET).
pub(super) fn array_hits(reply: &[u8]) -> u64 {
    let Some(end) = reply.windows(2).position(|w| w == b"\r\n") else {
        return 0;
    };
    let count = std::str::from_utf8(&reply[1..end])
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    let mut pos = end + 2;
    let mut hits = 0;
    for _ in 0..count {
        match scan_reply(&reply[pos..]) {
            Ok(Some(s)) => {
                hits += u64::from(s.kind != ReplyKind::Miss);
                pos += s.len;
            }
            _ => break,
        }
    }
    hits
}

/// One client: keep up to `pipeline` requests in flight per connection; in closed loop
/// refill as replies come, in open loop send each request at its intended time (or as soon
/// as a slot frees). In cluster mode each request goes to its key's master; `-MOVED`
/// refreshes the slot map, `-ASK` is followed once with `ASKING`.
pub(super) async fn drive(
    endpoint: &Endpoint,
    topology: Option<&Arc<Topology>>,
    mut conn: ConnPlan,
    ctx: &Ctx<'_>,
) -> io::Result<()> {
    let (clock, stop) = (ctx.clock, ctx.stop);
    let mut client = Client::open(endpoint, topology, ctx).await?;
    let mut req = RequestBuf::new();
    let mut sent = 0u64;
    let mut parked: Option<Parked> = None;
    let mut asks: Vec<(Endpoint, InFlight)> = Vec::new();
    let schedule = clock.schedule(Instant::now(), conn.index);
    loop {
        // A parked request past the deadline (or after a stop) is not sent.
        if parked.is_some() && !conn.may_send(sent - 1, clock.deadline, stop) {
            parked = None;
            sent -= 1;
        }
        let sending = parked.is_some() || conn.may_send(sent, clock.deadline, stop);
        // --reconnect-interval: close and reopen once the interval's replies are all in,
        // if there is more to send (memtier also reopens after the last one).
        if let Some(n) = ctx.reconnect {
            let s = &mut client.shards[0];
            if sending && s.on_connection >= n && s.idle() {
                s.stream = open(&s.node.clone(), ctx).await?;
                s.input.clear();
                s.on_connection = 0;
            }
        }
        let now = Instant::now();
        // Closed loop refills once half the window is free, not after every reply: each
        // write then carries at least pipeline/2 requests, so the server reads and answers
        // in batches (redis-benchmark waits for the whole window; memtier refills per reply,
        // which makes the server do one read per few requests).
        let window = clock.pipeline * client.shards.len();
        if schedule.is_some() || client.pending() <= window / 2 {
            loop {
                if let Some(p) = parked {
                    if !client.has_room(p.shard, ctx) {
                        break;
                    }
                    client.queue(p.shard, p, &req, now, ctx);
                    parked = None;
                }
                if !conn.may_send(sent, clock.deadline, stop) {
                    break;
                }
                let intended = match &schedule {
                    Some(s) if s.at(sent) > now => break,
                    Some(s) => Some(s.at(sent)),
                    None => None,
                };
                let kind = conn.gen.next_request(&mut req);
                sent += 1;
                let shard = client.route(kind, &req, ctx.map);
                parked = Some(Parked {
                    kind,
                    intended,
                    shard,
                });
            }
        }
        if let Err((i, e)) = client.flush(schedule.as_ref(), ctx).await {
            if client.cluster.is_none() {
                return Err(e);
            }
            client.fail_over(i, &mut parked, &req, ctx).await?;
            continue;
        }
        let sending = parked.is_some() || conn.may_send(sent, clock.deadline, stop);
        // Open loop: when the next request is due, if nothing waits for room.
        let next_due = match &schedule {
            Some(s) if sending && parked.is_none() => {
                let now = Instant::now();
                let cap = clock
                    .deadline
                    .map_or(now + MAX_NAP, |d| d.min(now + MAX_NAP));
                Some(s.at(sent).min(cap))
            }
            _ => None,
        };
        if client.idle() {
            match next_due {
                Some(t) => {
                    tokio::time::sleep_until(t.into()).await;
                    continue;
                }
                None if sending => continue,
                None => {
                    if let Some(s) = &schedule {
                        let end = clock.end(Instant::now());
                        ctx.stats.borrow_mut().dropped +=
                            s.dropped(sent, conn.limit, end, clock.measure_from);
                    }
                    return Ok(());
                }
            }
        }
        let (i, n) = match next_due {
            Some(t) => tokio::select! {
                r = client.read() => r,
                () = tokio::time::sleep_until(t.into()) => continue,
            },
            None => client.read().await,
        };
        let n = match n {
            // A primary went away: wait for the cluster to fail over.
            Err(_) | Ok(0) if client.cluster.is_some() => {
                client.fail_over(i, &mut parked, &req, ctx).await?;
                continue;
            }
            n => n?,
        };
        let shard = &mut client.shards[i];
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "{} closed the connection with {} requests unanswered",
                    shard.node,
                    shard.in_flight.len()
                ),
            ));
        }
        let now = Instant::now();
        let mut pos = 0;
        let (mut ops, mut bytes, mut latency) = (0u64, 0u64, 0u64);
        let mut moved_to: Option<Endpoint> = None;
        {
            let mut st = ctx.stats.borrow_mut();
            let in_cluster = client.cluster.is_some();
            while let Some(reply) = scan_reply(&shard.input[pos..]).map_err(bad_reply)? {
                let body = &shard.input[pos..pos + reply.len];
                pos += reply.len;
                let Some(f) = shard.in_flight.pop_front() else {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "a reply arrived for no request",
                    ));
                };
                let mut outcome = Outcome::Reply(reply.kind);
                // What this reply completes: its own request, or (`--wait`) the write held
                // for it, with both requests' bytes.
                let (f, tx, rx) = match (f.step, reply.kind) {
                    (Step::Asking, _) => {
                        bytes += (f.tx + reply.len) as u64;
                        continue;
                    }
                    (Step::Wait, _) => {
                        shard.waits -= 1;
                        // None: its write was redirected by -ASK, and waits again there.
                        let Some(held) = shard.held.take() else {
                            bytes += (f.tx + reply.len) as u64;
                            continue;
                        };
                        outcome = held.outcome;
                        if !wait_acked(body, ctx.wait.0)
                            && !matches!(outcome, Outcome::Moved | Outcome::Ask)
                        {
                            outcome = Outcome::Reply(ReplyKind::Error);
                        }
                        let (tx, rx) = (held.f.tx + f.tx, held.rx + reply.len);
                        (held.f, tx, rx)
                    }
                    (step, kind) => {
                        match kind {
                            ReplyKind::Error if in_cluster => match cluster::redirect(body) {
                                Some(Redirect::Ask(node)) if step == Step::Request => {
                                    let (row, _) = ctx.map.row(f.kind);
                                    st.note_ask(clock, row, f.intended.unwrap_or(f.sent));
                                    asks.push((node, f));
                                    continue;
                                }
                                Some(Redirect::Ask(_)) => outcome = Outcome::Ask,
                                Some(Redirect::Moved(node)) => {
                                    outcome = Outcome::Moved;
                                    moved_to = Some(node);
                                }
                                None => {}
                            },
                            ReplyKind::Value => {
                                if let RequestKind::MultiGet(keys) = f.kind {
                                    outcome = Outcome::MultiGet {
                                        hits: array_hits(body),
                                        keys: u64::from(keys),
                                    };
                                }
                            }
                            _ => {}
                        }
                        if f.waited {
                            shard.held = Some(Held {
                                f,
                                outcome,
                                rx: reply.len,
                            });
                            continue;
                        }
                        let tx = f.tx;
                        (f, tx, reply.len)
                    }
                };
                let (row, counts_hits) = ctx.map.row(f.kind);
                latency += st.record(
                    clock,
                    Sample {
                        row,
                        counts_hits,
                        outcome,
                        tx,
                        rx,
                        sent: f.sent,
                        intended: f.intended,
                        done: now,
                    },
                );
                ops += 1;
                bytes += (tx + rx) as u64;
                if let Some(copy) = f.copy {
                    client.spare.push(copy);
                }
            }
        }
        client.shards[i].input.drain(..pos);
        ctx.live.add(ops, bytes, latency);
        for (node, f) in asks.drain(..) {
            let s = client.shard_for(&node, ctx).await?;
            client.queue_ask(s, f, ctx);
        }
        if let Some(node) = moved_to {
            // memtier's handle_moved: read the slot map again (from the node that answered
            // for the slot now), then route by it; the parked request too.
            let topology = cluster::discover(&node, ctx.prelude)
                .await
                .map_err(io::Error::other)?;
            client.use_topology(Arc::new(topology), ctx).await?;
            if let Some(p) = &mut parked {
                p.shard = client.route(p.kind, &req, ctx.map);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mget_counts_a_hit_or_a_miss_per_key() {
        // Over a socket: the array's nil elements are misses, the others hits.
        assert_eq!(array_hits(b"*3\r\n$1\r\nx\r\n$-1\r\n$0\r\n\r\n"), 2);
        assert_eq!(array_hits(b"*2\r\n$-1\r\n$-1\r\n"), 0);
    }
}

//! The `edgebench kv` load engine: `-t` threads, each driving its `-c` connections, each
//! connection keeping `--pipeline` requests in flight, closed loop.
//!
//! **What latency covers.** A request's latency runs from the moment the batch it belongs to
//! is handed to the socket (one clock read per batch, as memtier's `fill_pipeline`) to the
//! moment its reply has been scanned in full from the bytes read (one clock read per read).
//! For the in-process target there is no socket: from the moment the batch starts executing
//! to the moment this request's reply exists.
//!
//! **Threads and runtimes.** Each thread runs its own single-threaded tokio runtime and polls
//! its connections as one future (memtier: one libevent base per thread), so a connection
//! never migrates and the thread's CPU time is the client's cost for those connections.
//! Every connection records into its own [`Stats`] (HDR histograms per row); they merge when
//! the threads join, so nothing is shared on the hot path but one stop flag.
//!
//! **Stopping.** A connection stops sending when it has sent its `-n` share, when the
//! `--test-time` deadline passes, when Ctrl-C raised the stop flag, or when another
//! connection failed (then every connection stops: the run ends, reports what it measured,
//! and says why). Requests in flight are always drained, so every request sent is counted.

use std::collections::VecDeque;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::{ConnGen, KvConfig, RequestBuf, RequestKind};
use crate::engine::{Engine, Reply};
use crate::resp::scan::{scan_reply, ReplyKind};
use crate::target::Endpoint;

/// Where the load goes.
#[derive(Debug, Clone)]
pub enum LoadTarget {
    /// A Redis-protocol server.
    Socket(Endpoint),
    /// The engine in this process: commands run through [`Engine::execute`], no RESP.
    InProcess(Engine),
}

/// One output row's counters and latency histogram (ns).
#[derive(Debug, Clone)]
pub struct RowStats {
    /// Requests answered.
    pub ops: u64,
    /// GET-like replies that found something.
    pub hits: u64,
    /// GET-like replies that found nothing (nil or empty).
    pub misses: u64,
    /// Error replies.
    pub errors: u64,
    /// Request bytes written.
    pub bytes_tx: u64,
    /// Reply bytes read.
    pub bytes_rx: u64,
    /// Latency, ns, 3 significant digits.
    pub latency: Histogram<u64>,
}

impl Default for RowStats {
    fn default() -> Self {
        RowStats {
            ops: 0,
            hits: 0,
            misses: 0,
            errors: 0,
            bytes_tx: 0,
            bytes_rx: 0,
            latency: Histogram::new(3).expect("3 significant digits is valid"),
        }
    }
}

impl RowStats {
    fn add(&mut self, other: &RowStats) {
        self.ops += other.ops;
        self.hits += other.hits;
        self.misses += other.misses;
        self.errors += other.errors;
        self.bytes_tx += other.bytes_tx;
        self.bytes_rx += other.bytes_rx;
        // Both are auto-resizing; adding cannot fail.
        let _ = self.latency.add(&other.latency);
    }

    fn record(&mut self, kind: ReplyKind, ns: u64, rx: usize, counts_hits: bool) {
        self.ops += 1;
        self.bytes_rx += rx as u64;
        match kind {
            ReplyKind::Error => self.errors += 1,
            ReplyKind::Miss if counts_hits => self.misses += 1,
            ReplyKind::Value if counts_hits => self.hits += 1,
            _ => {}
        }
        let _ = self.latency.record(ns.max(1));
    }
}

/// What a run measured: one [`RowStats`] per row (Sets, Gets; or one per `--command`).
#[derive(Debug, Clone)]
pub struct LoadResult {
    /// Row names and their figures, in output order.
    pub rows: Vec<(String, RowStats)>,
    /// From the first request to the last reply.
    pub elapsed: Duration,
    /// CPU time (user + system) of each client thread, and its wall time.
    pub thread_cpu: Vec<(Duration, Duration)>,
    /// Why the run ended early, if it did (a connection failed, Ctrl-C).
    pub stopped: Option<String>,
}

impl LoadResult {
    /// Every row added up (memtier's Totals).
    pub fn totals(&self) -> RowStats {
        let mut t = RowStats::default();
        for (_, r) in &self.rows {
            t.add(r);
        }
        t
    }
}

/// The rows of a configuration and which row each request kind counts in.
fn row_names(cfg: &KvConfig) -> Vec<String> {
    if cfg.commands.is_empty() {
        vec!["Sets".into(), "Gets".into()]
    } else if cfg.stats_by_line {
        cfg.commands.iter().map(|c| c.text.clone()).collect()
    } else {
        // One row per command name (memtier's default `--command-stats-breakdown`).
        let mut names: Vec<String> = Vec::new();
        for c in cfg.commands.iter() {
            if !names.contains(&c.name) {
                names.push(c.name.clone());
            }
        }
        names
    }
}

/// Maps a request kind to its row index, and whether its replies count hits and misses.
#[derive(Debug, Clone)]
struct RowMap {
    command_rows: Vec<usize>,
}

impl RowMap {
    fn new(cfg: &KvConfig, names: &[String]) -> RowMap {
        let command_rows = cfg
            .commands
            .iter()
            .map(|c| {
                let name = if cfg.stats_by_line { &c.text } else { &c.name };
                names.iter().position(|n| n == name).unwrap_or(0)
            })
            .collect();
        RowMap { command_rows }
    }

    fn row(&self, kind: RequestKind) -> (usize, bool) {
        match kind {
            RequestKind::Set => (0, false),
            RequestKind::Get | RequestKind::MultiGet(_) => (1, true),
            RequestKind::Command(i) => (self.command_rows[i], true),
        }
    }
}

/// Why a connection ended before its share was done.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The server could not be reached at the start.
    #[error("cannot connect to {endpoint}: {error}")]
    Connect {
        /// Where.
        endpoint: String,
        /// The OS error.
        error: io::Error,
    },
}

/// Runs the load described by `cfg` against `target` until every connection is done.
/// `stop` (Ctrl-C) ends it early; what finished is kept.
pub fn run(
    cfg: &KvConfig,
    target: &LoadTarget,
    interrupted: Arc<AtomicBool>,
) -> Result<LoadResult, LoadError> {
    let stop = Stop {
        interrupted,
        failed: Arc::new(AtomicBool::new(false)),
    };
    let names = row_names(cfg);
    let map = RowMap::new(cfg, &names);
    let buffer = cfg.value_buffer();
    let why: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    // Connect everything first, so connection setup is not measured and a dead server fails
    // before any thread starts.
    let threads = cfg.threads as u64;
    let clients = cfg.clients as u64;
    let first = Arc::new(prelude(cfg));
    let mut plans: Vec<Vec<ConnPlan>> = Vec::new();
    for t in 0..threads {
        let mut conns = Vec::new();
        for c in 0..clients {
            let index = t * clients + c;
            conns.push(ConnPlan {
                gen: cfg.conn_gen(index, &buffer),
                limit: cfg.requests_for(index),
                prelude: first.clone(),
            });
        }
        plans.push(conns);
    }
    if let LoadTarget::Socket(endpoint) = target {
        // One probe connection: a clear error instead of N failed threads.
        probe(endpoint)?;
    }
    let deadline_after = cfg.test_time;
    let pipeline = cfg.pipeline.max(1) as usize;
    let started = Instant::now();
    let mut handles = Vec::new();
    for conns in plans {
        let target = target.clone();
        let stop = stop.clone();
        let why = why.clone();
        let map = map.clone();
        let rows = names.len();
        handles.push(std::thread::spawn(move || {
            let cpu0 = thread_cpu();
            let wall0 = Instant::now();
            let deadline = deadline_after.map(|d| started + d);
            let stats = match &target {
                LoadTarget::InProcess(engine) => {
                    run_in_process(engine, conns, pipeline, deadline, &stop, &map, rows)
                        .unwrap_or_else(|e| {
                            fail(&why, &stop, e);
                            (0..rows).map(|_| RowStats::default()).collect()
                        })
                }
                LoadTarget::Socket(endpoint) => {
                    run_sockets(endpoint, conns, pipeline, deadline, &stop, &why, &map, rows)
                }
            };
            (stats, thread_cpu().saturating_sub(cpu0), wall0.elapsed())
        }));
    }
    let mut merged: Vec<RowStats> = names.iter().map(|_| RowStats::default()).collect();
    let mut thread_cpu = Vec::new();
    for h in handles {
        match h.join() {
            Ok((stats, cpu, wall)) => {
                for (m, s) in merged.iter_mut().zip(&stats) {
                    m.add(s);
                }
                thread_cpu.push((cpu, wall));
            }
            Err(_) => {
                why.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert_with(|| "a client thread panicked".into());
            }
        }
    }
    let elapsed = started.elapsed();
    let mut stopped = why.lock().unwrap_or_else(|e| e.into_inner()).take();
    if stopped.is_none() && stop.interrupted.load(Ordering::Relaxed) {
        stopped = Some("interrupted (Ctrl-C)".into());
    }
    Ok(LoadResult {
        rows: names.into_iter().zip(merged).collect(),
        elapsed,
        thread_cpu,
        stopped,
    })
}

/// When to stop sending: Ctrl-C (the caller's flag) or a failed connection (the run's own).
#[derive(Debug, Clone, Default)]
struct Stop {
    interrupted: Arc<AtomicBool>,
    failed: Arc<AtomicBool>,
}

impl Stop {
    fn load(&self, order: Ordering) -> bool {
        self.interrupted.load(order) || self.failed.load(order)
    }
}

/// One connection's generator and its `-n` share (`None`: until the deadline), and what it
/// sends before the load (HELLO 3, AUTH, SELECT: memtier's connect sequence).
struct ConnPlan {
    gen: ConnGen,
    limit: Option<u64>,
    prelude: Arc<Vec<Vec<Vec<u8>>>>,
}

/// The commands every connection sends once before its first request.
fn prelude(cfg: &KvConfig) -> Vec<Vec<Vec<u8>>> {
    let mut cmds = Vec::new();
    if cfg.protocol == super::Protocol::Resp3 {
        cmds.push(vec![b"HELLO".to_vec(), b"3".to_vec()]);
    }
    if let Some(credentials) = &cfg.authenticate {
        // memtier: "USER:PASSWORD" authenticates an ACL user, anything else is a password.
        let mut cmd = vec![b"AUTH".to_vec()];
        match credentials.split_once(':') {
            Some((user, pass)) if !user.is_empty() => {
                cmd.push(user.as_bytes().to_vec());
                cmd.push(pass.as_bytes().to_vec());
            }
            _ => cmd.push(credentials.as_bytes().to_vec()),
        }
        cmds.push(cmd);
    }
    if cfg.select_db != 0 {
        cmds.push(vec![
            b"SELECT".to_vec(),
            cfg.select_db.to_string().into_bytes(),
        ]);
    }
    cmds
}

impl ConnPlan {
    fn may_send(&self, sent: u64, deadline: Option<Instant>, stop: &Stop) -> bool {
        !stop.load(Ordering::Relaxed)
            && self.limit.is_none_or(|l| sent < l)
            && deadline.is_none_or(|d| Instant::now() < d)
    }
}

fn probe(endpoint: &Endpoint) -> Result<(), LoadError> {
    let result = match endpoint {
        Endpoint::Tcp { host, port } => {
            std::net::TcpStream::connect((host.as_str(), *port)).map(drop)
        }
        Endpoint::Unix(path) => std::os::unix::net::UnixStream::connect(path).map(drop),
    };
    result.map_err(|error| LoadError::Connect {
        endpoint: endpoint.to_string(),
        error,
    })
}

/// The calling thread's CPU time (user + system).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn run_in_process(
    engine: &Engine,
    mut conns: Vec<ConnPlan>,
    pipeline: usize,
    deadline: Option<Instant>,
    stop: &Stop,
    map: &RowMap,
    rows: usize,
) -> Result<Vec<RowStats>, String> {
    let mut stats: Vec<RowStats> = (0..rows).map(|_| RowStats::default()).collect();
    let mut clients: Vec<_> = conns.iter().map(|_| engine.client()).collect();
    for (client, conn) in clients.iter_mut().zip(&conns) {
        for cmd in conn.prelude.iter() {
            let args: Vec<&[u8]> = cmd.iter().map(Vec::as_slice).collect();
            if let Reply::Error(e) = engine.execute(client, &args) {
                let what = String::from_utf8_lossy(&cmd[0]).into_owned();
                return Err(format!("{what} failed: {e}"));
            }
        }
    }
    let mut sent = vec![0u64; conns.len()];
    let mut req = RequestBuf::new();
    let mut active = conns.len();
    while active > 0 {
        active = 0;
        for (i, conn) in conns.iter_mut().enumerate() {
            if !conn.may_send(sent[i], deadline, stop) {
                continue;
            }
            active += 1;
            // One batch of `pipeline` requests, as a pipelined socket client would send.
            let batch_start = Instant::now();
            for _ in 0..pipeline {
                if conn.limit.is_some_and(|l| sent[i] >= l) {
                    break;
                }
                let kind = conn.gen.next_request(&mut req);
                let tx: usize = req.args().map(<[u8]>::len).sum();
                let reply = execute(engine, &mut clients[i], &req);
                let done = Instant::now();
                sent[i] += 1;
                let (row, counts_hits) = map.row(kind);
                let (rk, rx) = classify(&reply);
                let s = &mut stats[row];
                s.bytes_tx += tx as u64;
                s.record(rk, (done - batch_start).as_nanos() as u64, rx, counts_hits);
            }
        }
    }
    Ok(stats)
}

/// Runs one request on the engine. Up to 8 arguments go through an array on the stack, so
/// the usual SET and GET allocate nothing here.
fn execute(engine: &Engine, client: &mut crate::engine::Client, req: &RequestBuf) -> Reply {
    const INLINE: usize = 8;
    if req.len() <= INLINE {
        let mut args: [&[u8]; INLINE] = [&[]; INLINE];
        for (slot, arg) in args.iter_mut().zip(req.args()) {
            *slot = arg;
        }
        engine.execute(client, &args[..req.len()])
    } else {
        let args: Vec<&[u8]> = req.args().collect();
        engine.execute(client, &args)
    }
}

/// What an in-process reply counts as, and its payload size (bulk bytes) for KB/sec.
fn classify(reply: &Reply) -> (ReplyKind, usize) {
    match reply {
        Reply::Error(_) => (ReplyKind::Error, 0),
        Reply::Nil | Reply::NilArray => (ReplyKind::Miss, 0),
        Reply::Array(a) | Reply::Set(a) | Reply::Push(a) if a.is_empty() => (ReplyKind::Miss, 0),
        Reply::Bulk(b) => (ReplyKind::Value, b.len()),
        Reply::Array(a) => (
            ReplyKind::Value,
            a.iter()
                .map(|r| if let Reply::Bulk(b) = r { b.len() } else { 0 })
                .sum(),
        ),
        _ => (ReplyKind::Value, 0),
    }
}

#[allow(clippy::too_many_arguments)]
fn run_sockets(
    endpoint: &Endpoint,
    conns: Vec<ConnPlan>,
    pipeline: usize,
    deadline: Option<Instant>,
    stop: &Stop,
    why: &Mutex<Option<String>>,
    map: &RowMap,
    rows: usize,
) -> Vec<RowStats> {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            fail(why, stop, format!("cannot start a client runtime: {e}"));
            return (0..rows).map(|_| RowStats::default()).collect();
        }
    };
    runtime.block_on(async {
        let futures = conns.into_iter().map(|conn| async move {
            let mut stats: Vec<RowStats> = (0..rows).map(|_| RowStats::default()).collect();
            let result = match endpoint {
                Endpoint::Tcp { host, port } => {
                    match tokio::net::TcpStream::connect((host.as_str(), *port)).await {
                        Ok(s) => {
                            let _ = s.set_nodelay(true);
                            drive(s, conn, pipeline, deadline, stop, map, &mut stats).await
                        }
                        Err(e) => Err(e),
                    }
                }
                Endpoint::Unix(path) => match tokio::net::UnixStream::connect(path).await {
                    Ok(s) => drive(s, conn, pipeline, deadline, stop, map, &mut stats).await,
                    Err(e) => Err(e),
                },
            };
            if let Err(e) = result {
                fail(why, stop, format!("connection to {endpoint} failed: {e}"));
            }
            stats
        });
        let all = futures_util::future::join_all(futures).await;
        let mut merged: Vec<RowStats> = (0..rows).map(|_| RowStats::default()).collect();
        for stats in all {
            for (m, s) in merged.iter_mut().zip(&stats) {
                m.add(s);
            }
        }
        merged
    })
}

/// Records the first failure and stops every connection.
fn fail(why: &Mutex<Option<String>>, stop: &Stop, reason: String) {
    why.lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(reason);
    stop.failed.store(true, Ordering::Relaxed);
}

/// One connection's closed loop: keep `pipeline` requests in flight, refill as replies come.
async fn drive<S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    mut conn: ConnPlan,
    pipeline: usize,
    deadline: Option<Instant>,
    stop: &Stop,
    map: &RowMap,
    stats: &mut [RowStats],
) -> io::Result<()> {
    let mut req = RequestBuf::new();
    let mut out: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut input: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut in_flight: VecDeque<(RequestKind, usize, Instant)> = VecDeque::with_capacity(pipeline);
    let mut batch: Vec<(RequestKind, usize)> = Vec::with_capacity(pipeline);
    let mut sent = 0u64;
    // The connect sequence: each reply must not be an error.
    for cmd in conn.prelude.iter() {
        out.clear();
        out.push(b'*');
        out.extend_from_slice(cmd.len().to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
        for arg in cmd {
            crate::resp::encode::write_bulk(&mut out, arg);
        }
        stream.write_all(&out).await?;
        let reply = loop {
            if let Some(r) =
                scan_reply(&input).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
            {
                break r;
            }
            if stream.read_buf(&mut input).await? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection during the connect sequence",
                ));
            }
        };
        if reply.kind == ReplyKind::Error {
            let text = String::from_utf8_lossy(&input[1..reply.len.saturating_sub(2)]).into_owned();
            let what = String::from_utf8_lossy(&cmd[0]).into_owned();
            return Err(io::Error::other(format!("{what} failed: {text}")));
        }
        input.drain(..reply.len);
    }
    loop {
        out.clear();
        batch.clear();
        while in_flight.len() + batch.len() < pipeline && conn.may_send(sent, deadline, stop) {
            let kind = conn.gen.next_request(&mut req);
            let before = out.len();
            req.write_resp(&mut out);
            batch.push((kind, out.len() - before));
            sent += 1;
        }
        if !out.is_empty() {
            let t = Instant::now();
            stream.write_all(&out).await?;
            in_flight.extend(batch.iter().map(|&(k, tx)| (k, tx, t)));
        }
        if in_flight.is_empty() {
            return Ok(());
        }
        let n = stream.read_buf(&mut input).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!(
                    "the server closed the connection with {} requests unanswered",
                    in_flight.len()
                ),
            ));
        }
        let now = Instant::now();
        let mut pos = 0;
        while let Some(reply) =
            scan_reply(&input[pos..]).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
        {
            pos += reply.len;
            let Some((kind, tx, t)) = in_flight.pop_front() else {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "a reply arrived for no request",
                ));
            };
            let (row, counts_hits) = map.row(kind);
            let s = &mut stats[row];
            s.bytes_tx += tx as u64;
            s.record(
                reply.kind,
                now.duration_since(t).as_nanos() as u64,
                reply.len,
                counts_hits,
            );
        }
        input.drain(..pos);
    }
}

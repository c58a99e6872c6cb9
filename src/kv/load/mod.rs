//! The `edgebench kv` load engine: `-t` threads, each driving its `-c` connections, each
//! connection keeping up to `--pipeline` requests in flight, closed loop or on a schedule.
//!
//! **What latency covers.** A request's latency runs from the moment the batch it belongs to
//! is handed to the socket (one clock read per batch, as memtier's `fill_pipeline`) to the
//! moment its reply has been scanned in full from the bytes read (one clock read per read).
//! For the in-process target there is no socket: from the moment the batch starts executing
//! to the moment this request's reply exists.
//!
//! **Open loop** (`--rate-limiting`, `--rate`). Each connection has a schedule: request `k`
//! is *intended* to go out at `first + k · interval`, `first` staggered over the connections
//! so they do not send in phase (memtier PR #519). A request is sent at its intended time or,
//! when the connection's pipeline is full, as soon as a reply frees a slot. Besides the
//! latency above (from the actual send, memtier's meaning), each request also records its
//! latency from the *intended* send time: the coordinated-omission-corrected latency (Gil
//! Tene, "How NOT to measure latency", 2015), which charges the server's stalls to every
//! request that should have gone out during them. A request sent more than one interval
//! after its intended time is *late*; a scheduled request whose intended time fell before the
//! end of the run but which was never sent is *dropped*.
//!
//! **Warm-up** (`--warmup D`). Requests whose send time (intended send time, in open loop) is
//! in the first D of the run are sent but not recorded; the measured wall time starts at D.
//!
//! **Threads and runtimes.** Each thread runs its own single-threaded tokio runtime and polls
//! its connections as one future (memtier: one libevent base per thread), so a connection
//! never migrates and the thread's CPU time is the client's cost for those connections.
//! The connections of one thread record into that thread's [`ThreadStats`] (HDR histograms
//! per row and the per-second series), reached through a `RefCell` that is never held across
//! an `.await`: nothing is locked, and the series costs memory per thread and second, not per
//! connection. Threads merge when they join. The live line reads three shared `AtomicU64`s
//! that each connection adds to once per read (a batch of replies), not once per request.
//!
//! **Stopping.** A connection stops sending when it has sent its `-n` share, when the
//! `--test-time` deadline passes, when Ctrl-C raised the stop flag, or when another
//! connection failed (then every connection stops: the run ends, reports what it measured,
//! and says why). Requests in flight are always drained, so every request sent is counted.
//!
//! **Where things are.** This file holds the run itself ([`run`]: plan the connections, start
//! the threads, merge what they measured) and what both drivers share; `stats.rs` what is
//! measured ([`LoadResult`] and its rows); `schedule.rs` the open-loop schedule and the run's
//! clock; `in_process.rs` and `socket.rs` the two drivers (the socket driver routes cluster
//! requests with [`super::cluster`]).

mod in_process;
mod schedule;
mod socket;
mod stats;

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::cluster::{self, Topology};
use super::conn_gen::ConnGen;
use super::options::{KvConfig, Protocol};
use crate::engine::Engine;
use crate::target::Endpoint;
use in_process::run_in_process;
pub use schedule::connection_rate;
use schedule::Clock;
use socket::{probe, run_sockets};
use stats::{row_names, RowMap};
pub use stats::{Live, LoadResult, RowStats, SecondStats, ThreadStats};

/// Where the load goes.
#[derive(Debug, Clone)]
pub enum LoadTarget {
    /// A Redis-protocol server.
    Socket(Endpoint),
    /// The engine in this process: commands run through [`Engine::execute`], no RESP.
    InProcess(Engine),
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
    /// `--cluster-mode` against the in-process engine.
    #[error(
        "--cluster-mode needs a Redis Cluster (-s/-p of one of its nodes); the in-process \
         engine is a single node: drop --cluster-mode or --target"
    )]
    InProcessCluster,
    /// The cluster's slot map could not be read, or the server is not a cluster.
    #[error(transparent)]
    Topology(#[from] cluster::TopologyError),
}

/// Reads the slot map from `endpoint` before the run (memtier's first `CLUSTER SLOTS`), so a
/// server that is not a cluster is one clear error rather than a failed connection per client.
pub(super) fn read_topology(
    endpoint: &Endpoint,
    prelude: &[Vec<Vec<u8>>],
    timeout: Option<Duration>,
) -> Result<Topology, LoadError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| LoadError::Connect {
            endpoint: endpoint.to_string(),
            error,
        })?;
    let discover = cluster::discover(endpoint, prelude);
    Ok(match timeout {
        None => runtime.block_on(discover)?,
        Some(t) => runtime
            .block_on(async { tokio::time::timeout(t, discover).await })
            .map_err(|_| LoadError::Connect {
                endpoint: endpoint.to_string(),
                error: io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no slot map within --connection-timeout {}", t.as_secs()),
                ),
            })??,
    })
}

/// Runs the load described by `cfg` against `target` until every connection is done.
/// `interrupted` (Ctrl-C) ends it early; what finished is kept. `live` is updated as replies
/// arrive; `tick` is called about once a second, from this thread, with the time since the
/// run started, while the run goes on.
pub fn run(
    cfg: &KvConfig,
    target: &LoadTarget,
    interrupted: Arc<AtomicBool>,
    live: &Arc<Live>,
    tick: &mut dyn FnMut(Duration),
) -> Result<LoadResult, LoadError> {
    let stop = Stop {
        interrupted,
        failed: Arc::new(AtomicBool::new(false)),
    };
    let names = row_names(cfg);
    let map = RowMap::new(cfg, &names);
    let buffer = cfg.value_buffer();
    let why: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let threads = cfg.threads as u64;
    let clients = cfg.clients as u64;
    let first = Arc::new(prelude(cfg));
    let mut plans: Vec<Vec<ConnPlan>> = Vec::new();
    for t in 0..threads {
        let mut conns = Vec::new();
        for c in 0..clients {
            let index = t * clients + c;
            conns.push(ConnPlan {
                index,
                gen: cfg.conn_gen(index, &buffer),
                limit: cfg.requests_for(index),
                prelude: first.clone(),
            });
        }
        plans.push(conns);
    }
    if let LoadTarget::Socket(endpoint) = target {
        // One probe connection: a clear error instead of N failed threads.
        probe(endpoint, cfg.connection_timeout)?;
    }
    let topology = match (cfg.cluster_mode, target) {
        (false, _) => None,
        (true, LoadTarget::InProcess(_)) => return Err(LoadError::InProcessCluster),
        (true, LoadTarget::Socket(endpoint)) => Some(Arc::new(read_topology(
            endpoint,
            &first,
            cfg.connection_timeout,
        )?)),
    };
    let rate = connection_rate(cfg);
    let started = Instant::now();
    let started_wall = SystemTime::now();
    let clock = Clock {
        measure_from: started + cfg.warmup,
        // A --test-time past what Instant can hold is no deadline at all.
        deadline: cfg.test_time.and_then(|d| started.checked_add(d)),
        interval_ns: rate.map(|r| 1e9 / r),
        total_conns: threads * clients,
        pipeline: cfg.pipeline.max(1) as usize,
    };
    let rows = names.len();
    let mut handles = Vec::new();
    for conns in plans {
        let target = target.clone();
        let stop = stop.clone();
        let why = why.clone();
        let map = map.clone();
        let live = live.clone();
        let topology = topology.clone();
        let cfg = cfg.clone();
        handles.push(std::thread::spawn(move || {
            let cpu0 = thread_cpu();
            let wall0 = Instant::now();
            let stats = match &target {
                LoadTarget::InProcess(engine) => run_in_process(
                    engine, conns, &clock, &stop, &map, rows, &live,
                )
                .unwrap_or_else(|e| {
                    fail(&why, &stop, e);
                    ThreadStats::new(rows)
                }),
                LoadTarget::Socket(endpoint) => run_sockets(
                    endpoint, topology, &cfg, conns, &clock, &stop, &why, &map, rows, &live,
                ),
            };
            let finished = Instant::now();
            (
                stats,
                thread_cpu().saturating_sub(cpu0),
                finished - wall0,
                finished,
            )
        }));
    }
    // The live line: poll the threads often (so the run's end is not delayed), tick once a
    // second. The run's end is each thread's own finishing time, not this loop's.
    let mut next_tick = started + Duration::from_secs(1);
    while !handles.iter().all(|h| h.is_finished()) {
        std::thread::sleep(Duration::from_millis(20));
        let now = Instant::now();
        if now >= next_tick {
            tick(now - started);
            next_tick += Duration::from_secs(1);
        }
    }
    let mut merged = ThreadStats::new(rows);
    let mut thread_cpu = Vec::new();
    let mut end = started;
    for h in handles {
        match h.join() {
            Ok((stats, cpu, wall, finished)) => {
                merged.add(&stats);
                thread_cpu.push((cpu, wall));
                end = end.max(finished);
            }
            Err(_) => {
                why.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert_with(|| "a client thread panicked".into());
            }
        }
    }
    let mut stopped = why.lock().unwrap_or_else(|e| e.into_inner()).take();
    if stopped.is_none() && stop.interrupted.load(Ordering::Relaxed) {
        stopped = Some("interrupted (Ctrl-C)".into());
    }
    Ok(LoadResult {
        rows: names.into_iter().zip(merged.rows).collect(),
        elapsed: end.saturating_duration_since(clock.measure_from),
        started_at: started_wall + cfg.warmup,
        seconds: merged.seconds,
        rate: rate.map(|r| r * clock.total_conns as f64),
        late: merged.late,
        dropped: merged.dropped,
        thread_cpu,
        stopped,
    })
}

/// When to stop sending: Ctrl-C (the caller's flag) or a failed connection (the run's own).
#[derive(Debug, Clone, Default)]
pub(super) struct Stop {
    pub(super) interrupted: Arc<AtomicBool>,
    pub(super) failed: Arc<AtomicBool>,
}

impl Stop {
    pub(super) fn load(&self, order: Ordering) -> bool {
        self.interrupted.load(order) || self.failed.load(order)
    }
}

/// One connection's number, generator and `-n` share (`None`: until the deadline), and what
/// it sends before the load (HELLO 3, AUTH, SELECT: memtier's connect sequence).
pub(super) struct ConnPlan {
    pub(super) index: u64,
    pub(super) gen: ConnGen,
    pub(super) limit: Option<u64>,
    pub(super) prelude: Arc<Vec<Vec<Vec<u8>>>>,
}

/// The commands every connection sends once before its first request, in memtier's order
/// (`send_conn_setup_commands`): AUTH, SELECT, then HELLO, because Redis refuses HELLO from a
/// client that has not authenticated yet.
pub(super) fn prelude(cfg: &KvConfig) -> Vec<Vec<Vec<u8>>> {
    let mut cmds = Vec::new();
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
    match cfg.protocol {
        Protocol::Resp3 => cmds.push(vec![b"HELLO".to_vec(), b"3".to_vec()]),
        Protocol::Resp2 => cmds.push(vec![b"HELLO".to_vec(), b"2".to_vec()]),
        Protocol::Redis => {}
    }
    cmds
}

impl ConnPlan {
    pub(super) fn may_send(&self, sent: u64, deadline: Option<Instant>, stop: &Stop) -> bool {
        !stop.load(Ordering::Relaxed)
            && self.limit.is_none_or(|l| sent < l)
            && deadline.is_none_or(|d| Instant::now() < d)
    }
}

/// The calling thread's CPU time (user + system).
pub(super) fn thread_cpu() -> Duration {
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

/// Records the first failure and stops every connection.
pub(super) fn fail(why: &Mutex<Option<String>>, stop: &Stop, reason: String) {
    why.lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(reason);
    stop.failed.store(true, Ordering::Relaxed);
}

//! One run of the load: plan every connection, check the target (one probe connection, or
//! the cluster's slot map), start `-t` threads each driving its connections in process or
//! over sockets, tick the live line, and merge what the threads measured into a
//! [`LoadResult`].
//!
//! A run whose WAITs could block for ever is refused here, before the clock starts: `--wait
//! N` on memtier's own server (`-s`/`-p`/`-S`/`-u`; a `--target` was checked when it
//! started) and `--wait-ratio` WAITs with timeout 0 and more replicas than a node has (`INFO
//! replication`'s `connected_slaves`, asked with the run's connect sequence, of every primary
//! in cluster mode).
//!
//! Invariants: every connection is planned (its generator and `-n` share) before the clock
//! starts; the measured time runs from the end of the warm-up to the last thread's end; a
//! failed connection or a panicked thread ends the run with what finished, and says why.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::in_process::run_in_process;
use super::plan::{fail, prelude, ConnPlan, Stop};
use super::schedule::{connection_rate, Clock};
use super::socket::{connect, probe, run_sockets, send_prelude};
use super::stats::{row_names, Live, LoadResult, RowMap, ThreadStats};
use crate::kv::options::{KvConfig, WaitRatio};
use crate::target::{Endpoint, RedisReach};
use crate::transport::access::TlsClient;
use crate::transport::cluster::slots::{self as cluster, Topology};

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
    /// A node has fewer replicas than a WAIT with timeout 0 of this run waits for.
    #[error(
        "{flags}: {node} has {has} connected replicas and WAIT {need} 0 would block for ever: \
         {fix}"
    )]
    TooFewReplicas {
        /// The flags that send that WAIT, with their values.
        flags: String,
        /// The node.
        node: Endpoint,
        /// Its connected replicas.
        has: usize,
        /// The WAIT's replica count.
        need: u32,
        /// What to change.
        fix: String,
    },
}

/// Runs `task` (a question to `endpoint` before the run) to its end, within `--connection-
/// timeout` when given (`what`: what did not come in time).
fn ask_before_run<T, E>(
    endpoint: &Endpoint,
    timeout: Option<Duration>,
    what: &str,
    task: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, LoadError>
where
    LoadError: From<E>,
{
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|error| LoadError::Connect {
            endpoint: endpoint.to_string(),
            error,
        })?;
    Ok(match timeout {
        None => runtime.block_on(task)?,
        Some(t) => runtime
            .block_on(async { tokio::time::timeout(t, task).await })
            .map_err(|_| LoadError::Connect {
                endpoint: endpoint.to_string(),
                error: io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no {what} within --connection-timeout {}", t.as_secs()),
                ),
            })??,
    })
}

/// Reads the slot map from `endpoint` before the run (memtier's first `CLUSTER SLOTS`), so a
/// server that is not a cluster is one clear error rather than a failed connection per client.
pub(super) fn read_topology(
    endpoint: &Endpoint,
    prelude: &[Vec<Vec<u8>>],
    timeout: Option<Duration>,
) -> Result<Topology, LoadError> {
    let discover = cluster::discover(endpoint, prelude);
    ask_before_run(endpoint, timeout, "slot map", discover)
}

/// A WAIT of this run that could block for ever: its replica count, and which flags send it.
struct BlockingWait {
    need: u32,
    /// `--wait-ratio`'s WAITs (`--num-slaves` with `--wait-timeout`), else `--wait`.
    ratio: Option<WaitRatio>,
}

impl BlockingWait {
    /// The WAIT of `cfg` the load must check, if any. A `--target` has checked `--wait`
    /// itself when it started.
    fn of(cfg: &KvConfig) -> Option<BlockingWait> {
        if let Some(ratio) = cfg.wait_ratio {
            return ratio.blocking_replicas().map(|need| BlockingWait {
                need,
                ratio: Some(ratio),
            });
        }
        (cfg.wait > 0 && cfg.target.is_none()).then_some(BlockingWait {
            need: cfg.wait,
            ratio: None,
        })
    }

    /// The flags that send it, with their values.
    fn flags(&self) -> String {
        match self.ratio {
            Some(r) => format!(
                "--num-slaves {}-{} with --wait-timeout {}-{}",
                r.num_slaves.0, r.num_slaves.1, r.timeout_ms.0, r.timeout_ms.1
            ),
            None => format!("--wait {}", self.need),
        }
    }

    /// What to change for a node with `has` replicas.
    fn fix(&self, has: usize) -> String {
        let need = self.need;
        match (self.ratio, has) {
            (Some(_), 0) => "drop --num-slaves (its default 0-0 waits for no replica), or give \
                             --wait-timeout a minimum above 0"
                .to_string(),
            (Some(_), n) => format!(
                "lower --num-slaves' maximum to {n}, or give --wait-timeout a minimum above 0"
            ),
            (None, 0) => {
                format!("give the address of a primary with {need} replicas, or drop --wait")
            }
            (None, n) => {
                format!("give the address of a primary with {need} replicas, or --wait {n}")
            }
        }
    }
}

/// How many replicas `node` has connected (`INFO replication`'s `connected_slaves`), asked
/// after the run's connect sequence.
async fn connected_replicas(
    node: &Endpoint,
    tls: Option<&TlsClient>,
    prelude: &[Vec<Vec<u8>>],
) -> io::Result<usize> {
    let mut stream = connect(node, tls).await?;
    send_prelude(&mut stream, prelude).await?;
    let info = [b"INFO".to_vec(), b"replication".to_vec()];
    match cluster::query(&mut stream, &info, &mut Vec::new()).await? {
        cluster::Value::Bulk(text) => Ok(crate::store::redis::spawn::info_field(
            &String::from_utf8_lossy(&text),
            "connected_slaves",
        )
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)),
        other => Err(io::Error::other(format!(
            "INFO replication answered {other:?}"
        ))),
    }
}

/// Refuses the run when a WAIT of it would block for ever on one of `nodes` (see
/// [`BlockingWait`]).
fn check_replicas(
    cfg: &KvConfig,
    nodes: &[Endpoint],
    tls: Option<&TlsClient>,
    prelude: &[Vec<Vec<u8>>],
) -> Result<(), LoadError> {
    let Some(wait) = BlockingWait::of(cfg) else {
        return Ok(());
    };
    for node in nodes {
        let asked = async {
            connected_replicas(node, tls, prelude)
                .await
                .map_err(|error| LoadError::Connect {
                    endpoint: node.to_string(),
                    error,
                })
        };
        let has = ask_before_run(node, cfg.connection_timeout, "INFO replication", asked)?;
        if has < wait.need as usize {
            return Err(LoadError::TooFewReplicas {
                flags: wait.flags(),
                node: node.clone(),
                has,
                need: wait.need,
                fix: wait.fix(has),
            });
        }
    }
    Ok(())
}

/// Runs the load described by `cfg` against `target` until every connection is done.
/// `interrupted` (Ctrl-C) ends it early; what finished is kept. `live` is updated as replies
/// arrive; `tick` is called about once a second, from this thread, with the time since the
/// run started, while the run goes on.
pub fn run(
    cfg: &KvConfig,
    target: &RedisReach,
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
    let credentials = match target {
        RedisReach::Socket(_, access) => access.credentials.as_ref(),
        RedisReach::InProcess(_) => None,
    };
    let first = Arc::new(prelude(cfg, credentials));
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
    // Built once, here, so a certificate that went away since the flags were read fails the
    // run with its one line instead of failing every connection.
    let tls = match target {
        RedisReach::Socket(endpoint, access) => match &access.tls {
            Some(options) => Some(options.client().map_err(|e| LoadError::Connect {
                endpoint: endpoint.to_string(),
                error: io::Error::other(e.to_string()),
            })?),
            None => None,
        },
        RedisReach::InProcess(_) => None,
    };
    if let RedisReach::Socket(endpoint, _) = target {
        // One probe connection: a clear error instead of N failed threads.
        probe(endpoint, cfg.connection_timeout).map_err(|error| LoadError::Connect {
            endpoint: endpoint.to_string(),
            error,
        })?;
    }
    let topology = match (cfg.cluster_mode, target) {
        (false, _) => None,
        (true, RedisReach::InProcess(_)) => return Err(LoadError::InProcessCluster),
        (true, RedisReach::Socket(endpoint, _)) => Some(Arc::new(read_topology(
            endpoint,
            &first,
            cfg.connection_timeout,
        )?)),
    };
    if let RedisReach::Socket(endpoint, _) = target {
        let nodes = match &topology {
            Some(t) => t.nodes.clone(),
            None => vec![endpoint.clone()],
        };
        check_replicas(cfg, &nodes, tls.as_ref(), &first)?;
    }
    let rate = connection_rate(cfg);
    // Several load hosts: everything is planned and the target answered; start together.
    // Past the barrier (a later -x run), this returns at once; Ctrl-C ends the wait and the
    // run then stops at once with nothing measured.
    crate::runner::barrier::wait_until(cfg.start_at, &stop.interrupted);
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
        let tls = tls.clone();
        handles.push(std::thread::spawn(move || {
            let cpu0 = thread_cpu();
            let wall0 = Instant::now();
            let stats = match &target {
                RedisReach::InProcess(engine) => run_in_process(
                    engine, conns, &clock, &stop, &map, rows, &live,
                )
                .unwrap_or_else(|e| {
                    fail(&why, &stop, e);
                    ThreadStats::new(rows)
                }),
                RedisReach::Socket(endpoint, _) => run_sockets(
                    endpoint,
                    tls.as_ref(),
                    topology,
                    &cfg,
                    conns,
                    &clock,
                    &stop,
                    &why,
                    &map,
                    rows,
                    &live,
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
        failover: merged.failover.map(|f| super::stats::FailoverReport {
            after: f.broke.saturating_duration_since(clock.measure_from),
            window: f.window(),
            lost: f.lost,
        }),
    })
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

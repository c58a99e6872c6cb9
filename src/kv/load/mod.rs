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
//! **Where things are.** `runner.rs` holds the run itself ([`run`]: plan the connections,
//! start the threads, merge what they measured; [`LoadError`]); `plan.rs`
//! what both drivers get from it (each connection's plan, the stop flags); `stats.rs` what is
//! measured ([`LoadResult`] and its rows); `schedule.rs` the open-loop schedule and the run's
//! clock; `in_process.rs` and `socket.rs` the two drivers (the socket driver routes cluster
//! requests with [`crate::transport::cluster::slots`]). They import one way: runner → drivers →
//! plan, stats, schedule.

mod in_process;
mod plan;
mod runner;
mod schedule;
mod socket;
mod stats;

pub use runner::{run, LoadError};
pub use schedule::connection_rate;
pub use stats::{add_seconds, Live, LoadResult, RowStats, SecondStats, ThreadStats, WAITS_ROW};

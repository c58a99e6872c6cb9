//! The resource check of [`super::KvConfig`]: refuse, in one line and before anything is
//! allocated, a run whose connections cannot fit this process. `-t` and `-c` are memtier's
//! and unbounded there; `edgebench kv --target embedded -c 100000000 -t 1000` used to
//! allocate until the kernel killed it.
//!
//! Two limits, both read once from the OS by [`Limits::of_this_process`] and passed in, so
//! [`check_counts`] is a pure function tests can call with any limits:
//! - open files (`getrlimit(RLIMIT_NOFILE)`, soft limit): every socket connection is a file
//!   descriptor, two when the server runs in this process (`embedded-tcp`, `embedded-uds`,
//!   `mini-redis`: its accepted end is ours too), plus a few per thread for its runtime, plus
//!   [`FD_MARGIN`] for the process's own files;
//! - memory: half the machine's physical memory (`sysconf(_SC_PHYS_PAGES) ×
//!   _SC_PAGE_SIZE / 2`, or half the cgroup's limit when lower), against the estimate of [`connection_bytes`] per connection and
//!   [`THREAD_BYTES`] per thread.
//!
//! Also bounded here: `-t` at [`MAX_THREADS`] (each thread is an OS thread with its own
//! runtime; `std::thread::spawn` panics when the OS refuses one). `--pipeline` and value
//! sizes enter the memory estimate, since a socket connection queues a pipeline's requests
//! before writing them. The key range costs nothing up front (keys are drawn, never listed).
//!
//! Invariant: a refusal names -t, -c, their product, the limit and the fix.

use super::config::KvConfig;
use crate::kv::command::CommandArg;
use crate::kv::error::{conflict, invalid, KvConfigError};
use crate::target::parse_targets;

/// Files the process keeps besides its connections: stdio, the results files, the probe
/// connection, a spawned redis-server's pipes, the allocator's and the runtime's own.
pub const FD_MARGIN: u64 = 64;

/// Descriptors of one client thread's tokio runtime (epoll, its waker eventfd, and a spare):
/// socket targets only; the in-process driver has no runtime.
pub const FDS_PER_THREAD: u64 = 3;

/// The most client threads: memtier has no bound; far more threads than cores only adds
/// scheduling, and each one costs a stack and a runtime.
pub const MAX_THREADS: u32 = 1024;

/// What one in-process client costs, in bytes, rounded up. Measured: peak RSS of
/// `edgebench kv --target embedded -t 1 -n 1 --hide-histogram` is 33 MB with `-c 1` and
/// 702 MB with `-c 1000000`: 685 bytes per client. That is, per client: its `ConnPlan` with
/// the `ConnGen` inline (the key generator with its boxed prefix and streams, the value
/// generator with its handle on the shared value buffer, the op mix: ~350 bytes with their
/// small heap blocks), the engine's `Client` (~250 bytes with its watch set) and the
/// driver's per-client schedule, count and flag (~40 bytes), each heap block rounded up by
/// malloc. 1 KiB leaves room for a longer key prefix or several `--command`s.
pub const IN_PROCESS_CLIENT_BYTES: u64 = 1024;

/// A socket connection's read and write buffers: 64 KiB each, reserved when it opens
/// (`kv::load`'s `Shard`); their pages are touched only as bytes pass through them.
pub const SOCKET_BUFFER_BYTES: usize = 64 * 1024;

/// What one socket connection costs besides its queued requests, in bytes, rounded up.
/// Measured: peak RSS of `edgebench kv -s 127.0.0.1 -p PORT -t 1 -n 20 --pipeline 4` against
/// a redis-server is 35 MB with `-c 1` and 123 MB with `-c 5000`: 17.7 KB per connection
/// (the generator as in process, the task's future, the runtime's registration, the boxed
/// stream, and the touched part of the two [`SOCKET_BUFFER_BYTES`] buffers). 24 KiB leaves
/// room for larger replies; a pipeline's requests are counted apart, by their size.
pub const SOCKET_CONN_BYTES: u64 = 24 * 1024;

/// One entry of a socket connection's in-flight queue (kind, sizes, two instants, a step and
/// an optional copy: 72 bytes, rounded up), and the RESP framing of a request besides its
/// keys and values (`*3\r\n$3\r\nSET\r\n$N\r\n…`: under 64 bytes).
const QUEUE_ENTRY_BYTES: u64 = 80;
const RESP_OVERHEAD_BYTES: u64 = 64;

/// What one client thread costs besides its connections: its stack (2 MiB reserved by
/// std), its statistics (two HDR histograms per row at 3 significant digits, ~170 KiB each
/// for latencies up to a second, plus the per-second series) and its runtime.
pub const THREAD_BYTES: u64 = 4 * 1024 * 1024;

/// How the load reaches its target, as far as resources go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// The engine in this process: no descriptors per connection.
    InProcess,
    /// Sockets; each connection costs this many descriptors in this process (in cluster
    /// mode one per master it reaches: the count here is per master).
    Socket {
        /// 1, or 2 when the server also runs in this process.
        fds_per_connection: u64,
    },
}

impl Transport {
    /// The transport `--target` implies (`None`: memtier's -s/-p/-S/-u, a server elsewhere).
    /// A `--target` that does not parse counts as one socket; it is refused later, with the
    /// target's own message.
    pub fn of_target(target: Option<&str>) -> Transport {
        let fds = match target.map(|t| parse_targets(&[t.to_string()])) {
            Some(Ok(specs)) if specs.len() == 1 => specs[0].kind.fds_per_connection(),
            _ => 1,
        };
        match fds {
            0 => Transport::InProcess,
            n => Transport::Socket {
                fds_per_connection: u64::from(n),
            },
        }
    }
}

/// The limits a run must fit; `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The soft `RLIMIT_NOFILE`.
    pub open_files: Option<u64>,
    /// Bytes the run's connections and threads may take: half the physical memory.
    pub memory_bytes: Option<u64>,
    /// The physical memory, for the message.
    pub physical_bytes: Option<u64>,
}

impl Limits {
    /// This process's open-file limit and half this machine's physical memory.
    pub fn of_this_process() -> Limits {
        let mut rl = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one rlimit through a valid pointer.
        let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut rl) };
        let open_files = (rc == 0 && rl.rlim_cur != libc::RLIM_INFINITY).then_some(rl.rlim_cur);
        // SAFETY: sysconf reads a system constant; no pointers.
        let (pages, page) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGE_SIZE),
            )
        };
        let physical = (pages > 0 && page > 0).then(|| (pages as u64).saturating_mul(page as u64));
        // In a container the cgroup's limit is what the kernel enforces: the smaller counts.
        let physical_bytes = match (physical, cgroup_memory_limit()) {
            (Some(p), Some(c)) => Some(p.min(c)),
            (p, c) => p.or(c),
        };
        Limits {
            open_files,
            memory_bytes: physical_bytes.map(|b| b / 2),
            physical_bytes,
        }
    }
}

/// The memory limit of this process's cgroup (v2 `memory.max`, else v1
/// `memory.limit_in_bytes`); `None` when there is none or it cannot be read.
fn cgroup_memory_limit() -> Option<u64> {
    [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|path| {
        std::fs::read_to_string(path)
            .ok()?
            .trim()
            .parse::<u64>()
            .ok()
    })
}

/// The bytes of one request of `cfg` at its largest: the largest value per `__data__` (at
/// least one, SET's), a key per `__key__` (at least one) and the literal text.
fn request_bytes(cfg: &KvConfig) -> u64 {
    let value = u64::from(cfg.data_size.largest());
    let key = cfg.keys.prefix.len() as u64 + 20;
    let set = RESP_OVERHEAD_BYTES + key + value;
    let command = |c: &crate::kv::command::ArbitraryCommand| {
        c.args
            .iter()
            .map(|a| match a {
                CommandArg::Literal(l) => l.len() as u64,
                CommandArg::Key { prefix, suffix } => (prefix.len() + suffix.len()) as u64 + key,
                CommandArg::Data => value,
            })
            .sum::<u64>()
            + RESP_OVERHEAD_BYTES
            + 16 * c.args.len() as u64
    };
    cfg.commands.iter().map(command).max().unwrap_or(set)
}

/// The estimated bytes one connection of `cfg` costs over `transport`. In process, a
/// pipeline's requests run one after another, so only the client counts. Over a socket,
/// the buffers and state, plus the pipeline's queue and its requests' bytes (a closed-loop
/// connection writes up to `--pipeline` requests before the first reply; the queue's
/// capacity is reserved up to 1,024 entries and grows beyond); both ends when the server
/// is in this process.
pub fn connection_bytes(cfg: &KvConfig, transport: Transport) -> u64 {
    match transport {
        Transport::InProcess => IN_PROCESS_CLIENT_BYTES,
        Transport::Socket { fds_per_connection } => {
            let pipeline = u64::from(cfg.pipeline.max(1));
            let queue = (pipeline + 2 * pipeline.min(1024)) * QUEUE_ENTRY_BYTES;
            let requests = pipeline.saturating_mul(request_bytes(cfg));
            // The server's end, when in this process, holds about as much as ours.
            (SOCKET_CONN_BYTES + requests)
                .saturating_mul(fds_per_connection)
                .saturating_add(queue)
        }
    }
}

/// Refuses `cfg` when its threads or connections cannot fit `limits`.
pub fn check(cfg: &KvConfig, limits: &Limits) -> Result<(), KvConfigError> {
    let transport = Transport::of_target(cfg.target.as_deref());
    check_counts(
        cfg.threads,
        cfg.clients,
        transport,
        connection_bytes(cfg, transport),
        limits,
    )
}

/// The check itself, on plain numbers: `threads` × `clients` connections over `transport`,
/// each costing `conn_bytes`.
pub fn check_counts(
    threads: u32,
    clients: u32,
    transport: Transport,
    conn_bytes: u64,
    limits: &Limits,
) -> Result<(), KvConfigError> {
    if threads > MAX_THREADS {
        return Err(invalid(
            "--threads",
            &threads.to_string(),
            format!(
                "at most {MAX_THREADS} client threads (each is an OS thread with its own \
                 runtime): use fewer threads and more connections per thread (-c)"
            ),
        ));
    }
    let (t, c) = (u64::from(threads), u64::from(clients));
    let conns = t * c;
    if let (Transport::Socket { fds_per_connection }, Some(limit)) = (transport, limits.open_files)
    {
        let need = conns
            .saturating_mul(fds_per_connection)
            .saturating_add(t * FDS_PER_THREAD);
        let room = limit.saturating_sub(FD_MARGIN);
        if need > room {
            let ends = if fds_per_connection == 1 {
                "1 per connection".to_string()
            } else {
                format!("{fds_per_connection} per connection: the server is in this process too")
            };
            return Err(conflict(
                format!(
                    "-t {threads} × -c {clients} = {conns} connections need {need} open files \
                     ({ends}, {FDS_PER_THREAD} per thread), but the open-file limit is {limit} \
                     ({FD_MARGIN} kept for edgebench's own)"
                ),
                "lower -t or -c, or raise the limit (ulimit -n) if the server takes that many",
            ));
        }
    }
    if let Some(bound) = limits.memory_bytes {
        let need = conns
            .saturating_mul(conn_bytes)
            .saturating_add(t * THREAD_BYTES);
        if need > bound {
            let (what, fix) = match transport {
                Transport::InProcess => ("in-process clients", "lower -t or -c"),
                Transport::Socket { .. } => (
                    "connections",
                    "lower -t, -c or --pipeline (a socket connection buffers a pipeline's \
                     requests, values included)",
                ),
            };
            let physical = limits
                .physical_bytes
                .map_or(String::new(), |p| format!(" of {}", gib(p)));
            return Err(conflict(
                format!(
                    "-t {threads} × -c {clients} = {conns} {what} need about {} ({conn_bytes} \
                     bytes each, {} per thread), more than half this machine's memory ({}{physical})",
                    gib(need),
                    mib(THREAD_BYTES),
                    gib(bound),
                ),
                fix,
            ));
        }
    }
    Ok(())
}

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / f64::from(1u32 << 30))
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes >> 20)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn limits(open_files: u64, memory_gib: u64) -> Limits {
        Limits {
            open_files: Some(open_files),
            memory_bytes: Some(memory_gib * GIB),
            physical_bytes: Some(2 * memory_gib * GIB),
        }
    }

    const ONE: Transport = Transport::Socket {
        fds_per_connection: 1,
    };

    #[test]
    fn socket_connections_must_fit_the_open_file_limit() {
        let l = limits(1024, 8);
        // 4 × 200 + 4 × 3 per thread = 812 ≤ 1024 − 64.
        assert_eq!(check_counts(4, 200, ONE, 200_000, &l), Ok(()));
        // 4 × 240 + 12 = 972 > 960.
        let e = check_counts(4, 240, ONE, 200_000, &l)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "-t 4 × -c 240 = 960 connections need 972 open files (1 per connection, 3 per \
             thread), but the open-file limit is 1024 (64 kept for edgebench's own): lower -t \
             or -c, or raise the limit (ulimit -n) if the server takes that many"
        );
        assert!(!e.contains('\n'));
        // A server in this process holds the other end: twice the descriptors.
        let both = Transport::Socket {
            fds_per_connection: 2,
        };
        assert_eq!(check_counts(4, 100, both, 200_000, &l), Ok(()));
        assert!(check_counts(4, 200, both, 200_000, &l)
            .unwrap_err()
            .to_string()
            .contains("2 per connection: the server is in this process too"));
        // No limit, no check; in process, no descriptors at all.
        let unlimited = Limits {
            open_files: None,
            ..l
        };
        assert_eq!(check_counts(4, 240, ONE, 200_000, &unlimited), Ok(()));
        assert_eq!(check_counts(4, 240, Transport::InProcess, 1024, &l), Ok(()));
    }

    #[test]
    fn in_process_clients_must_fit_half_the_memory() {
        let l = limits(1024, 8);
        // 8 GiB less 100 threads × 4 MiB leaves room for 7.6 GiB / 1 KiB clients.
        assert_eq!(
            check_counts(100, 70_000, Transport::InProcess, 1024, &l),
            Ok(())
        );
        let e = check_counts(100, 100_000, Transport::InProcess, 1024, &l)
            .unwrap_err()
            .to_string();
        assert_eq!(
            e,
            "-t 100 × -c 100000 = 10000000 in-process clients need about 9.9 GiB (1024 bytes \
             each, 4 MiB per thread), more than half this machine's memory (8.0 GiB of 16.0 \
             GiB): lower -t or -c"
        );
        // The command: 10^11 clients need ~93 TiB, refused even with 2 TiB of memory.
        let big = limits(1 << 20, 1 << 10);
        assert!(check_counts(1000, 100_000_000, Transport::InProcess, 1024, &big).is_err());
    }

    #[test]
    fn threads_are_bounded() {
        let l = limits(1 << 20, 1 << 10);
        assert_eq!(check_counts(MAX_THREADS, 1, ONE, 1, &l), Ok(()));
        let e = check_counts(MAX_THREADS + 1, 1, ONE, 1, &l)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("invalid --threads \"1025\": at most 1024"),
            "{e}"
        );
    }

    #[test]
    fn targets_map_to_transports() {
        assert_eq!(Transport::of_target(None), ONE);
        assert_eq!(Transport::of_target(Some("embedded")), Transport::InProcess);
        assert_eq!(
            Transport::of_target(Some("e=embedded-direct")),
            Transport::InProcess
        );
        let both = Transport::Socket {
            fds_per_connection: 2,
        };
        assert_eq!(Transport::of_target(Some("embedded-tcp")), both);
        assert_eq!(Transport::of_target(Some("mini-redis")), both);
        assert_eq!(Transport::of_target(Some("redis-tcp")), ONE);
        assert_eq!(Transport::of_target(Some("redis://h:1")), ONE);
    }
}

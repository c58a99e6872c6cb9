//! Server-wide state, one [`ServerState`] per engine: the CONFIG parameters (behind a
//! `RwLock`: only CONFIG, INFO, AUTH and not-yet-authenticated clients read them, never a
//! data command), per-command call counts for INFO commandstats, and the count of live
//! clients; the parameters' table and parsers; and the engine's configuration API.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use super::common::{err_owned, lossy};
use super::registry::{ClientRegistry, Monitors, Pause};
use super::slowlog::SlowLog;
use crate::engine::client::Client;
use crate::engine::client::LiveClient;
use crate::engine::cmd::{all_commands, is, parse_i64};
use crate::engine::error::CmdError;
use crate::engine::handle::Engine;
use crate::engine::keyevents::Classes;
use crate::engine::types::counters::Counters;
use crate::engine::types::encoding::LimitValues;

/// The engine's server-wide state: CONFIG parameters, command statistics, live clients.
#[derive(Debug)]
pub struct ServerState {
    config: RwLock<Vec<String>>,
    /// Calls per command, indexed as [`all_commands`] lists them.
    pub(super) calls: Counters,
    /// Calls refused before they ran (arity, NOAUTH, BUSY, no-multi), per command
    /// (commandstats' `rejected_calls`).
    pub(super) rejected: Counters,
    /// Calls that ran and replied with an error, per command (`failed_calls`).
    pub(super) failed: Counters,
    /// Error replies by their code (INFO errorstats, `total_error_replies`).
    pub(super) errors: ErrorStats,
    live_clients: Arc<AtomicU64>,
    pub(super) peak_memory: AtomicU64,
    pub(super) run_id: String,
    pub(super) started_unix_s: u64,
    /// Live clients (CLIENT LIST, KILL, UNBLOCK).
    pub(crate) registry: Arc<ClientRegistry>,
    /// CLIENT PAUSE.
    pub(crate) pause: Pause,
    /// MONITOR.
    pub(crate) monitors: Monitors,
    /// SLOWLOG and LATENCY.
    pub(crate) slowlog: SlowLog,
    /// Per-command latency histograms (LATENCY HISTOGRAM).
    pub(crate) histograms: super::histogram::Histograms,
    /// ACL users and the ACL log.
    pub(crate) acl: crate::engine::acl::Acl,
    /// Whether writes need more replicas than the engine has (none): `min-replicas-to-write`
    /// and `min-replicas-max-lag` both above 0, mirrored here for the command path.
    replicas_lacking: AtomicBool,
}

/// Error replies by code, as Redis's `errors` radix tree keeps them: at most
/// [`ErrorStats::LIMIT`] distinct codes (after that new ones are not tracked, as in Redis),
/// and every error in the total.
#[derive(Debug, Default)]
pub(crate) struct ErrorStats {
    by_code: std::sync::Mutex<std::collections::BTreeMap<String, u64>>,
    total: AtomicU64,
}

impl ErrorStats {
    /// Redis's `ERROR_STATS_NUMBER`.
    const LIMIT: usize = 128;

    fn count(&self, text: &str) {
        self.total.fetch_add(1, Ordering::Relaxed);
        let code = text.split(' ').next().unwrap_or("");
        let mut map = self.by_code.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = map.get_mut(code) {
            *n += 1;
        } else if map.len() < Self::LIMIT {
            map.insert(code.to_string(), 1);
        }
    }

    /// `total_error_replies`.
    pub(crate) fn total(&self) -> u64 {
        self.total.load(Ordering::Relaxed)
    }

    /// Each code and its count, in code order (INFO errorstats).
    pub(crate) fn by_code(&self) -> Vec<(String, u64)> {
        let map = self.by_code.lock().unwrap_or_else(PoisonError::into_inner);
        map.iter().map(|(k, v)| (k.clone(), *v)).collect()
    }

    pub(crate) fn reset(&self) {
        self.total.store(0, Ordering::Relaxed);
        self.by_code
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

impl Default for ServerState {
    fn default() -> Self {
        ServerState {
            config: RwLock::new(PARAMS.iter().map(|p| p.default.to_string()).collect()),
            calls: Counters::new(all_commands().count()),
            rejected: Counters::new(all_commands().count()),
            failed: Counters::new(all_commands().count()),
            errors: ErrorStats::default(),
            live_clients: Arc::new(AtomicU64::new(0)),
            peak_memory: AtomicU64::new(0),
            run_id: random_hex40(),
            started_unix_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
            registry: Arc::default(),
            pause: Pause::default(),
            monitors: Monitors::default(),
            slowlog: SlowLog::default(),
            histograms: super::histogram::Histograms::default(),
            acl: crate::engine::acl::Acl::default(),
            replicas_lacking: AtomicBool::new(false),
        }
    }
}

impl ServerState {
    /// A new client, authenticated unless a password is required, counted as connected.
    pub(crate) fn new_client(&self, id: u64) -> Client {
        let mut client = Client::new(id);
        client.authenticated = !self.requires_auth();
        client.set_user(std::sync::Arc::clone(self.acl.default_user()));
        client.live = LiveClient::counted_in(&self.live_clients);
        self.registry.add(&client.shared);
        client
    }

    /// Mirrors the parameters the command path reads into atomics (after a change).
    fn sync_cached(&self) {
        let (slower_than, max_len, latency) = {
            let values = self.read();
            let value = |name: &str| Param::find(name.as_bytes()).map(|i| values[i].clone());
            self.histograms
                .set_on(value("latency-tracking").as_deref() != Some("no"));
            // Redis's `checkGoodReplicasStatus` on a primary with no replica: either
            // setting at 0 turns the check off.
            let positive = |name: &str| value(name).is_some_and(|v| v != "0");
            self.replicas_lacking.store(
                positive("min-replicas-to-write") && positive("min-replicas-max-lag"),
                Ordering::Relaxed,
            );
            (
                value("slowlog-log-slower-than").and_then(|v| v.parse().ok()),
                value("slowlog-max-len").and_then(|v| v.parse().ok()),
                value("latency-monitor-threshold").and_then(|v| v.parse().ok()),
            )
        };
        self.slowlog.configure(
            slower_than.unwrap_or(10_000),
            max_len.unwrap_or(128),
            latency.unwrap_or(0),
        );
    }

    /// Whether a write must be refused for want of replicas (NOREPLICAS): one relaxed load.
    pub(crate) fn replicas_lacking(&self) -> bool {
        self.replicas_lacking.load(Ordering::Relaxed)
    }

    /// Counts one call of the command at `index` in [`all_commands`] (INFO commandstats).
    pub(crate) fn count_call(&self, index: usize) {
        self.calls.add(index, 1);
    }

    /// Counts an error reply: by its code, and against the command at `index` (if any) as
    /// refused before it ran (`rejected`) or failed as it ran.
    pub(crate) fn count_error(&self, text: &str, index: Option<usize>, rejected: bool) {
        self.errors.count(text);
        if let Some(i) = index {
            if rejected {
                self.rejected.add(i, 1);
            } else {
                self.failed.add(i, 1);
            }
        }
    }

    /// Counts a failed call of the command at `index` whose error was counted already (a
    /// script replying with the error of a command it called).
    pub(crate) fn count_failed(&self, index: usize) {
        self.failed.add(index, 1);
    }

    /// Whether a new connection must authenticate: the default user has a password
    /// (`requirepass`, or ACL SETUSER) or is off.
    pub(crate) fn requires_auth(&self) -> bool {
        self.acl.default_needs_auth()
    }

    pub(crate) fn set_requirepass(&self, password: Option<String>) {
        let password = password.unwrap_or_default();
        self.acl.set_default_password(&password);
        self.put(Param::REQUIREPASS, password);
    }

    pub(super) fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<String>> {
        // A poisoned lock only means a panic elsewhere; the values are still whole strings.
        self.config.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Vec<String>> {
        self.config.write().unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn get(&self, index: usize) -> String {
        self.read()[index].clone()
    }

    fn put(&self, index: usize, value: String) {
        self.write()[index] = value;
    }

    pub(super) fn number(&self, index: usize) -> u64 {
        self.read()[index].parse().unwrap_or(0)
    }
}

/// What kind of value a CONFIG parameter holds, and how CONFIG SET checks it (Redis 7.0's
/// config.c: `yesnotoi`, `string2ll`, `memtoull`, enum names, the `save` special case).
#[derive(Debug, Clone, Copy)]
enum Kind {
    Bool,
    /// A signed integer within bounds.
    Int {
        min: i64,
        max: i64,
    },
    /// An unsigned integer within bounds.
    UInt {
        min: u64,
        max: u64,
    },
    /// A memory value: digits with an optional unit (b, k, kb, m, mb, g, gb).
    Memory {
        min: u64,
        max: u64,
    },
    Enum(&'static [&'static str]),
    Str,
    /// `save`: pairs of "seconds changes".
    Save,
    /// A file name without a directory (`dbfilename`, `appendfilename`).
    FileName,
    /// An existing directory (`dir`), shown absolute as redis-server's `getcwd`.
    Dir,
    /// Keyspace notification flags (`notify-keyspace-events`), shown in Redis's order.
    KeyspaceEvents,
}

/// A CONFIG parameter: its name, kind, the engine's default, whether CONFIG SET may change it.
#[derive(Debug)]
pub(super) struct Param {
    pub(super) name: &'static str,
    kind: Kind,
    pub(super) default: &'static str,
    mutable: bool,
    /// The other name of the same setting (Redis's `hash-max-ziplist-*` aliases): setting
    /// either sets both.
    alias_of: Option<&'static str>,
}

const INT_MAX: i64 = i32::MAX as i64;

const fn param(name: &'static str, kind: Kind, default: &'static str, mutable: bool) -> Param {
    Param {
        name,
        kind,
        default,
        mutable,
        alias_of: None,
    }
}

/// A parameter with a second name (both listed, each with its own entry).
const fn aliased(
    name: &'static str,
    other: &'static str,
    kind: Kind,
    default: &'static str,
) -> Param {
    Param {
        name,
        kind,
        default,
        mutable: true,
        alias_of: Some(other),
    }
}

/// A size_t parameter of Redis (0..LONG_MAX), as an integer.
const SIZE: Kind = Kind::Int {
    min: 0,
    max: i64::MAX,
};
/// A size_t parameter of Redis read as a memory value (`1kb`).
const SIZE_MEMORY: Kind = Kind::Memory {
    min: 0,
    max: i64::MAX as u64,
};

const fn int(min: i64, max: i64) -> Kind {
    Kind::Int { min, max }
}

/// The parameters CONFIG GET and CONFIG SET know: those redis-benchmark, memtier and client
/// libraries ask about. Defaults are a default redis-server's, except where the engine differs:
/// `save ""` and `appendonly no` (it persists nothing), `port 0` (the engine listens on nothing
/// until a server says otherwise) and `bind 127.0.0.1` (a local server's usual address). `port`,
/// `bind` and `unixsocket` are set by the server at startup ([`Engine::configure`]); CONFIG SET
/// cannot change them, since the engine cannot rebind its server's listeners. Values are
/// stored, not enforced, except where a server reads them (`maxclients`,
/// `proto-max-bulk-len`, `requirepass`).
pub(super) const PARAMS: &[Param] = &[
    param(
        "appendfsync",
        Kind::Enum(&["everysec", "always", "no"]),
        "everysec",
        true,
    ),
    param("appendonly", Kind::Bool, "no", true),
    param("bind", Kind::Str, "127.0.0.1", false),
    param("cluster-enabled", Kind::Bool, "no", false),
    param("daemonize", Kind::Bool, "no", false),
    param("databases", int(1, INT_MAX), "16", false),
    param("hz", int(0, INT_MAX), "10", true),
    param("io-threads", int(1, 128), "1", false),
    param(
        "loglevel",
        Kind::Enum(&["debug", "verbose", "notice", "warning"]),
        "notice",
        true,
    ),
    param(
        "maxclients",
        Kind::UInt {
            min: 1,
            max: u32::MAX as u64,
        },
        "10000",
        true,
    ),
    param(
        "maxmemory",
        Kind::Memory {
            min: 0,
            max: u64::MAX,
        },
        "0",
        true,
    ),
    param(
        "maxmemory-policy",
        Kind::Enum(&[
            "volatile-lru",
            "volatile-lfu",
            "volatile-random",
            "volatile-ttl",
            "allkeys-lru",
            "allkeys-lfu",
            "allkeys-random",
            "noeviction",
        ]),
        "noeviction",
        true,
    ),
    param("maxmemory-samples", int(1, INT_MAX), "5", true),
    param("port", int(0, 65535), "0", false),
    param(
        "proto-max-bulk-len",
        Kind::Memory {
            min: 1024 * 1024,
            max: i64::MAX as u64,
        },
        "536870912",
        true,
    ),
    param("protected-mode", Kind::Bool, "yes", true),
    param("requirepass", Kind::Str, "", true),
    param("save", Kind::Save, "", true),
    // SLOWLOG and LATENCY (after `save` so the index constants above stay put).
    param("slowlog-log-slower-than", int(-1, i64::MAX), "10000", true),
    param("slowlog-max-len", int(0, i64::MAX), "128", true),
    param("latency-monitor-threshold", int(0, i64::MAX), "0", true),
    param("tcp-keepalive", int(0, INT_MAX), "300", true),
    param("timeout", int(0, INT_MAX), "0", true),
    param("unixsocket", Kind::Str, "", false),
    // The encoding thresholds (OBJECT ENCODING follows them; see `types::encoding`), with
    // redis-server 7.0's built-in defaults. Lists and streams store them only: 7.0 lists are
    // always quicklists, and the stream's node sizes are the stream type's constants.
    aliased(
        "hash-max-listpack-entries",
        "hash-max-ziplist-entries",
        SIZE,
        "512",
    ),
    aliased(
        "hash-max-ziplist-entries",
        "hash-max-listpack-entries",
        SIZE,
        "512",
    ),
    aliased(
        "hash-max-listpack-value",
        "hash-max-ziplist-value",
        SIZE_MEMORY,
        "64",
    ),
    aliased(
        "hash-max-ziplist-value",
        "hash-max-listpack-value",
        SIZE_MEMORY,
        "64",
    ),
    aliased(
        "zset-max-listpack-entries",
        "zset-max-ziplist-entries",
        SIZE,
        "128",
    ),
    aliased(
        "zset-max-ziplist-entries",
        "zset-max-listpack-entries",
        SIZE,
        "128",
    ),
    aliased(
        "zset-max-listpack-value",
        "zset-max-ziplist-value",
        SIZE_MEMORY,
        "64",
    ),
    aliased(
        "zset-max-ziplist-value",
        "zset-max-listpack-value",
        SIZE_MEMORY,
        "64",
    ),
    aliased(
        "list-max-listpack-size",
        "list-max-ziplist-size",
        int(i32::MIN as i64, INT_MAX),
        "-2",
    ),
    aliased(
        "list-max-ziplist-size",
        "list-max-listpack-size",
        int(i32::MIN as i64, INT_MAX),
        "-2",
    ),
    param("set-max-intset-entries", SIZE, "512", true),
    param("list-compress-depth", int(0, INT_MAX), "0", true),
    param("stream-node-max-bytes", SIZE_MEMORY, "4096", true),
    param("stream-node-max-entries", SIZE, "100", true),
    param("hll-sparse-max-bytes", SIZE_MEMORY, "3000", true),
    // How long a script runs before other clients get BUSY (ms; 0 = never). Also read as
    // `lua-time-limit`, its old name.
    param("busy-reply-threshold", int(0, i64::MAX), "5000", true),
    // How many replicas a write needs, and how far behind they may be (s). The engine has
    // no replicas: with both above 0 it refuses writes with NOREPLICAS, as a redis-server
    // primary does that has too few (see `ServerState::replicas_lacking`).
    aliased(
        "min-replicas-to-write",
        "min-slaves-to-write",
        int(0, INT_MAX),
        "0",
    ),
    aliased(
        "min-slaves-to-write",
        "min-replicas-to-write",
        int(0, INT_MAX),
        "0",
    ),
    aliased(
        "min-replicas-max-lag",
        "min-slaves-max-lag",
        int(0, INT_MAX),
        "10",
    ),
    aliased(
        "min-slaves-max-lag",
        "min-replicas-max-lag",
        int(0, INT_MAX),
        "10",
    ),
    // Keys the client-side caching table holds before it evicts (0: no limit).
    param("tracking-table-max-keys", int(0, i64::MAX), "1000000", true),
    // Per-command latency histograms (LATENCY HISTOGRAM); every command is timed.
    param("latency-tracking", Kind::Bool, "yes", true),
    // Persistence (see `engine::persist`), with redis-server 7.0's defaults; `dir` is set
    // to the working directory when the engine is made.
    param("dir", Kind::Dir, ".", true),
    param("dbfilename", Kind::FileName, "dump.rdb", true),
    param("appendfilename", Kind::FileName, "appendonly.aof", false),
    param("appenddirname", Kind::FileName, "appendonlydir", false),
    param("aof-load-truncated", Kind::Bool, "yes", true),
    param("aof-use-rdb-preamble", Kind::Bool, "yes", true),
    param("auto-aof-rewrite-percentage", int(0, INT_MAX), "100", true),
    param(
        "auto-aof-rewrite-min-size",
        Kind::Memory {
            min: 0,
            max: i64::MAX as u64,
        },
        "67108864",
        true,
    ),
    param("rdbcompression", Kind::Bool, "yes", true),
    param("rdbchecksum", Kind::Bool, "yes", true),
    param("stop-writes-on-bgsave-error", Kind::Bool, "yes", true),
    // Keyspace notifications (see `engine::keyevents`): off, as in redis-server.
    param("notify-keyspace-events", Kind::KeyspaceEvents, "", true),
    // ACL (see `engine::acl`): the log's length, the ACL file (set at startup only) and
    // the channels new users get.
    param("acllog-max-len", int(0, i64::MAX), "128", true),
    param("aclfile", Kind::Str, "", false),
    param(
        "acl-pubsub-default",
        Kind::Enum(&["allchannels", "resetchannels"]),
        "resetchannels",
        true,
    ),
];

impl Param {
    pub(super) const HZ: usize = 6;
    pub(super) const MAXCLIENTS: usize = 9;
    pub(super) const MAXMEMORY: usize = 10;
    pub(super) const MAXMEMORY_POLICY: usize = 11;
    pub(super) const PORT: usize = 13;
    pub(super) const PROTO_MAX_BULK_LEN: usize = 14;
    pub(super) const REQUIREPASS: usize = 16;

    /// The index of a parameter, any case (an alias finds its parameter).
    pub(super) fn find(name: &[u8]) -> Option<usize> {
        let name = if is(name, "lua-time-limit") {
            b"busy-reply-threshold"
        } else {
            name
        };
        PARAMS.iter().position(|p| is(name, p.name))
    }

    /// Checks `value` as CONFIG SET does; returns the value as CONFIG GET will show it.
    pub(super) fn parse(&self, value: &[u8]) -> Result<String, Cow<'static, str>> {
        let not_integer = || Cow::Borrowed("argument couldn't be parsed into an integer");
        let bounds = |min: &dyn std::fmt::Display, max: &dyn std::fmt::Display| {
            Cow::Owned(format!(
                "argument must be between {min} and {max} inclusive"
            ))
        };
        match self.kind {
            Kind::Bool => {
                if is(value, "yes") {
                    Ok("yes".into())
                } else if is(value, "no") {
                    Ok("no".into())
                } else {
                    Err("argument must be 'yes' or 'no'".into())
                }
            }
            Kind::Int { min, max } => {
                let v = parse_i64(value).map_err(|_| not_integer())?;
                if v < min || v > max {
                    return Err(bounds(&min, &max));
                }
                // Redis clamps hz to 1..=500 (CONFIG_MIN_HZ, CONFIG_MAX_HZ).
                let v = if self.name == "hz" {
                    v.clamp(1, 500)
                } else {
                    v
                };
                Ok(v.to_string())
            }
            Kind::UInt { min, max } => {
                let v = parse_i64(value).map_err(|_| not_integer())?;
                match u64::try_from(v) {
                    Ok(u) if (min..=max).contains(&u) => Ok(u.to_string()),
                    _ => Err(bounds(&min, &max)),
                }
            }
            Kind::Memory { min, max } => {
                let v = memtoull(value).ok_or(Cow::Borrowed("argument must be a memory value"))?;
                if v < min || v > max {
                    return Err(bounds(&min, &max));
                }
                Ok(v.to_string())
            }
            Kind::Enum(names) => names
                .iter()
                .find(|n| is(value, n))
                .map(|n| n.to_string())
                .ok_or_else(|| {
                    format!(
                        "argument(s) must be one of the following: {}",
                        names.join(", ")
                    )
                    .into()
                }),
            Kind::Str => Ok(lossy(value)),
            Kind::Save => parse_save(value).ok_or(Cow::Borrowed("Invalid save parameters")),
            Kind::FileName => {
                let v = lossy(value);
                if v.is_empty() || v.contains('/') || v == "." || v == ".." {
                    return Err(format!("{} can't be a path, just a filename", self.name).into());
                }
                Ok(v)
            }
            Kind::Dir => std::fs::canonicalize(lossy(value))
                .ok()
                .filter(|p| p.is_dir())
                .map(|p| p.to_string_lossy().into_owned())
                .ok_or(Cow::Borrowed("No such file or directory")),
            Kind::KeyspaceEvents => {
                Classes::parse(value)
                    .map(|c| c.to_string())
                    .ok_or(Cow::Borrowed(
                        "Invalid event class character. Use 'Ag$lshzxeKEtmdn'.",
                    ))
            }
        }
    }
}

/// Redis's `memtoull`: digits and an optional unit; `strtoull` saturates on overflow.
pub(super) fn memtoull(value: &[u8]) -> Option<u64> {
    let digits = value.iter().take_while(|b| b.is_ascii_digit()).count();
    let (num, unit) = value.split_at(digits);
    let mul: u64 = match unit.to_ascii_lowercase().as_slice() {
        b"" | b"b" => 1,
        b"k" => 1000,
        b"kb" => 1024,
        b"m" => 1000 * 1000,
        b"mb" => 1024 * 1024,
        b"g" => 1000 * 1000 * 1000,
        b"gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    let n = num.iter().fold(0u64, |acc, d| {
        acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    });
    n.checked_mul(mul)
}

/// `save`: "" or pairs of integers separated by single spaces, seconds >= 1, changes >= 0
/// (Redis splits on every space, so an empty piece reads as 0, as `strtoll` reads it).
pub(super) fn parse_save(value: &[u8]) -> Option<String> {
    if value.is_empty() {
        return Some(String::new());
    }
    let parts: Vec<&[u8]> = value.split(|&b| b == b' ').collect();
    if parts.len() % 2 == 1 {
        return None;
    }
    let mut numbers = Vec::with_capacity(parts.len());
    for (j, part) in parts.iter().enumerate() {
        let v = strtoll_whole(part)?;
        if (j % 2 == 0 && v < 1) || (j % 2 == 1 && v < 0) {
            return None;
        }
        numbers.push(v.to_string());
    }
    Some(numbers.join(" "))
}

/// `strtoll` that must consume the whole string (a sign allowed); an empty string reads as 0.
fn strtoll_whole(s: &[u8]) -> Option<i64> {
    if s.is_empty() {
        return Some(0);
    }
    std::str::from_utf8(s).ok()?.parse::<i64>().ok()
}

// ---- the engine's configuration API ----

impl Engine {
    pub(super) fn server(&self) -> &ServerState {
        &self.inner().server
    }

    /// The password clients must send with AUTH, if any.
    pub fn requirepass(&self) -> Option<String> {
        Some(self.server().get(Param::REQUIREPASS)).filter(|p| !p.is_empty())
    }

    /// The value of one CONFIG parameter (exact name, any case), as CONFIG GET shows it.
    pub fn config_get(&self, name: &str) -> Option<String> {
        Param::find(name.as_bytes()).map(|i| self.server().get(i))
    }

    /// Sets CONFIG parameters as one CONFIG SET does: all or none, with Redis's errors.
    pub fn config_set(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), CmdError> {
        let mut targets: Vec<usize> = Vec::with_capacity(pairs.len());
        for (name, _) in pairs {
            let Some(i) = Param::find(name) else {
                return Err(err_owned(format!(
                    "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
                    lossy(name)
                )));
            };
            let problem = if !PARAMS[i].mutable {
                Some("can't set immutable config")
            } else if targets.contains(&i) {
                Some("duplicate parameter")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(set_failed(&lossy(name), problem));
            }
            targets.push(i);
        }
        let mut values = Vec::with_capacity(pairs.len());
        for (&i, (_, value)) in targets.iter().zip(pairs) {
            let v = PARAMS[i]
                .parse(value)
                .map_err(|e| set_failed(PARAMS[i].name, &e))?;
            values.push(v);
        }
        {
            let mut config = self.server().write();
            for (&i, v) in targets.iter().zip(values) {
                store(&mut config, i, v);
            }
        }
        for (&i, (_, value)) in targets.iter().zip(pairs) {
            self.apply_keyspace_events(i, value);
            self.apply_acl(i);
        }
        self.server().sync_cached();
        self.apply_encoding_limits();
        self.apply_tracking_limit();
        self.apply_eviction();
        self.persistence_config_changed()
            .map_err(|e| err_owned(format!("ERR {e}")))?;
        Ok(())
    }

    /// Sets one parameter at startup, as redis.conf or a command-line flag would: like
    /// CONFIG SET, but also the parameters only the server knows (`port`, `bind`,
    /// `unixsocket`); a program serving the engine calls this for its listeners and limits.
    pub fn configure(&self, name: &str, value: &str) -> Result<(), CmdError> {
        let Some(i) = Param::find(name.as_bytes()) else {
            return Err(err_owned(format!(
                "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
            )));
        };
        let v = PARAMS[i]
            .parse(value.as_bytes())
            .map_err(|e| set_failed(PARAMS[i].name, &e))?;
        {
            let mut config = self.server().write();
            store(&mut config, i, v);
        }
        self.apply_keyspace_events(i, value.as_bytes());
        self.apply_acl(i);
        self.server().sync_cached();
        self.apply_encoding_limits();
        self.apply_tracking_limit();
        self.apply_eviction();
        Ok(())
    }

    /// Hands `requirepass` and the ACL parameters to the ACL store.
    fn apply_acl(&self, index: usize) {
        let server = self.server();
        let acl = &server.acl;
        match PARAMS[index].name {
            "requirepass" => acl.set_default_password(&server.get(index)),
            "acllog-max-len" => acl.set_log_max_len(server.number(index) as usize),
            "acl-pubsub-default" => acl.set_pubsub_default_all(server.get(index) == "allchannels"),
            _ => {}
        }
    }

    /// Hands `maxmemory`, `maxmemory-policy` and `maxmemory-samples` to eviction, which
    /// commands read as atomics.
    fn apply_eviction(&self) {
        let server = self.server();
        let policy = crate::engine::evict::Policy::parse(&server.get(Param::MAXMEMORY_POLICY));
        let samples = self
            .config_get("maxmemory-samples")
            .and_then(|v| v.parse().ok())
            .unwrap_or(5);
        self.inner()
            .eviction
            .configure(server.number(Param::MAXMEMORY), policy, samples);
    }

    /// Hands `tracking-table-max-keys` to the tracking table (which evicts over it now).
    fn apply_tracking_limit(&self) {
        if let Some(max) = self
            .config_get("tracking-table-max-keys")
            .and_then(|v| v.parse().ok())
        {
            self.tracking().set_max_keys(max);
        }
    }

    /// After parameter `index` was set to `value` (checked already): when it is
    /// `notify-keyspace-events`, hands its classes to the notifier, which commands read as
    /// an atomic. Parsed from what was given, not from the shown text, which with `A`
    /// leaves out `n` though `n` is on (as in Redis).
    fn apply_keyspace_events(&self, index: usize, value: &[u8]) {
        if matches!(PARAMS[index].kind, Kind::KeyspaceEvents) {
            let classes = Classes::parse(value).unwrap_or_default();
            self.inner().events.set_classes(classes);
        }
    }

    /// Hands the encoding thresholds to the keyspace (it reads them as atomics on the write
    /// path, never this table); values over the old ones are marked converted first. Runs
    /// with the table unlocked: it locks shards, under which commands read the table.
    fn apply_encoding_limits(&self) {
        let config = self.server().read().clone();
        let n = |name: &str| {
            Param::find(name.as_bytes())
                .and_then(|i| config[i].parse::<u64>().ok())
                .unwrap_or(0)
        };
        let new = LimitValues {
            hash_entries: n("hash-max-listpack-entries"),
            hash_value: n("hash-max-listpack-value"),
            zset_entries: n("zset-max-listpack-entries"),
            zset_value: n("zset-max-listpack-value"),
            set_entries: n("set-max-intset-entries"),
        };
        let limits = self.db(0).limits();
        limits.store_stream_nodes(crate::engine::types::stream::NodeLimits {
            entries: n("stream-node-max-entries"),
            bytes: n("stream-node-max-bytes"),
        });
        limits.store_hll_sparse_max(n("hll-sparse-max-bytes"));
        self.encoding_limits_changed(new);
    }

    /// When the engine started, seconds since the epoch.
    pub(crate) fn server_started_unix_s(&self) -> u64 {
        self.server().started_unix_s
    }

    /// CONFIG `maxclients`: how many connections the server should accept.
    pub fn maxclients(&self) -> u64 {
        self.server().number(Param::MAXCLIENTS)
    }

    /// CONFIG `proto-max-bulk-len`: the largest bulk string the server should accept.
    pub fn proto_max_bulk_len(&self) -> u64 {
        self.server().number(Param::PROTO_MAX_BULK_LEN)
    }

    /// How many clients exist now (INFO `connected_clients`).
    pub fn connected_clients(&self) -> u64 {
        self.server().live_clients.load(Ordering::Relaxed)
    }
}

/// Stores a parameter's value, and its alias's.
fn store(config: &mut [String], i: usize, v: String) {
    if let Some(j) = PARAMS[i].alias_of.and_then(|a| Param::find(a.as_bytes())) {
        config[j] = v.clone();
    }
    config[i] = v;
}

fn set_failed(name: &str, problem: &str) -> CmdError {
    err_owned(format!(
        "ERR CONFIG SET failed (possibly related to argument '{name}') - {problem}"
    ))
}

/// 40 random hex digits (the run id), from std's randomly keyed hasher.
pub(super) fn random_hex40() -> String {
    use std::fmt::Write as _;
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::with_capacity(48);
    for i in 0..3u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(i);
        let _ = write!(out, "{:016x}", h.finish());
    }
    out.truncate(40);
    out
}

//! INFO: Redis's sections and layout. What the engine cannot measure it reports as Redis
//! reports an idle, fresh server. Nothing here takes a shard lock except the keyspace
//! section, which locks one database at a time while holding nothing else.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use super::common::{lossy, VERSION};
use super::state::Param;
use crate::engine::cmd::{all_commands, Ctx};
use crate::engine::error::CmdError;
use crate::engine::handle::{Engine, DATABASES};
use crate::resp::reply::Reply;

/// Scripting's counts, all 0, in an engine built without scripting.
#[cfg(not(feature = "scripting"))]
#[derive(Default)]
struct ScriptingCounts {
    cached_scripts: usize,
    functions: usize,
    libraries: usize,
}

/// INFO's sections, in the order Redis prints them, with their titles.
const SECTIONS: &[(&str, &str)] = &[
    ("server", "Server"),
    ("clients", "Clients"),
    ("memory", "Memory"),
    ("persistence", "Persistence"),
    ("stats", "Stats"),
    ("replication", "Replication"),
    ("cpu", "CPU"),
    ("modules", "Modules"),
    ("commandstats", "Commandstats"),
    ("errorstats", "Errorstats"),
    ("latencystats", "Latencystats"),
    ("cluster", "Cluster"),
    ("keyspace", "Keyspace"),
];

/// Sections INFO prints with no argument (or `default`).
fn is_default_section(name: &str) -> bool {
    !matches!(name, "commandstats" | "latencystats")
}

pub(super) fn info(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let wanted: Vec<String> = args[1..]
        .iter()
        .map(|a| lossy(a).to_ascii_lowercase())
        .collect();
    let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
    Ok(Reply::Verbatim(ctx.engine.info(&wanted)))
}

impl Engine {
    /// The text INFO replies with for these sections (lowercase names, or `default`, `all`,
    /// `everything`; none means `default`): Redis's layout, `# Title` then `key:value`
    /// lines, sections separated by a blank line, every line ending in CRLF. Unknown
    /// sections are ignored.
    ///
    /// What the engine cannot measure it reports as Redis reports an idle, fresh server
    /// (0, `ok`); `used_memory` is the process's live heap when the host process installed a
    /// [`set_heap_probe`] (edgebench's counting allocator), else its resident set size, and
    /// commandstats count calls only (`usec=0`).
    pub fn info(&self, sections: &[&str]) -> String {
        let pick = |name: &str| {
            if sections.is_empty() {
                return is_default_section(name);
            }
            sections.iter().any(|&s| match s {
                "all" | "everything" => true,
                "default" => is_default_section(name),
                s => s == name,
            })
        };
        let mut out = String::new();
        for &(section, title) in SECTIONS.iter().filter(|(s, _)| pick(s)) {
            if !out.is_empty() {
                out.push_str("\r\n");
            }
            let _ = write!(out, "# {title}\r\n");
            for (k, v) in self.info_section(section) {
                let _ = write!(out, "{k}:{v}\r\n");
            }
        }
        out
    }

    /// INFO memory's scripting lines, in Redis 7.0's order: the counts of cached scripts,
    /// functions and libraries. Sizes are 0: the engine runs EVAL scripts and functions in
    /// one Lua VM whose heap (with mlua's handle stack, which keeps its high-water mark) is
    /// not comparable with Redis's two VMs, nor are the caches' overheads measured.
    fn scripting_memory_lines(&self) -> Vec<(&'static str, String)> {
        #[cfg(feature = "scripting")]
        let counts = self.scripting_memory();
        #[cfg(not(feature = "scripting"))]
        let counts = ScriptingCounts::default();
        let zero = || "0".to_string();
        vec![
            ("used_memory_lua", zero()),
            ("used_memory_vm_eval", zero()),
            ("used_memory_lua_human", bytes_to_human(0)),
            ("used_memory_scripts_eval", zero()),
            (
                "number_of_cached_scripts",
                counts.cached_scripts.to_string(),
            ),
            ("number_of_functions", counts.functions.to_string()),
            ("number_of_libraries", counts.libraries.to_string()),
            ("used_memory_vm_functions", zero()),
            ("used_memory_vm_total", zero()),
            ("used_memory_vm_total_human", bytes_to_human(0)),
            ("used_memory_functions", zero()),
            ("used_memory_scripts", zero()),
            ("used_memory_scripts_human", bytes_to_human(0)),
        ]
    }

    fn info_section(&self, section: &str) -> Vec<(String, String)> {
        let mut lines: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, v: String| lines.push((k.to_string(), v));
        let server = self.server();
        match section {
            "server" => {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default();
                let uptime = self.inner().started.elapsed().as_secs();
                put("redis_version", VERSION.into());
                put("redis_git_sha1", "00000000".into());
                put("redis_git_dirty", "0".into());
                put("redis_build_id", "0".into());
                put("redis_mode", "standalone".into());
                put(
                    "os",
                    format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
                );
                put("arch_bits", usize::BITS.to_string());
                put("monotonic_clock", "POSIX clock_gettime".into());
                put("multiplexing_api", "tokio".into());
                put("atomicvar_api", "c11-builtin".into());
                put("gcc_version", "0.0.0".into());
                put("process_id", std::process::id().to_string());
                put("process_supervised", "no".into());
                put("run_id", server.run_id.clone());
                put("tcp_port", server.get(Param::PORT));
                put("server_time_usec", now.as_micros().to_string());
                put("uptime_in_seconds", uptime.to_string());
                put("uptime_in_days", (uptime / 86400).to_string());
                put("hz", server.get(Param::HZ));
                put("configured_hz", server.get(Param::HZ));
                // Redis's LRU clock: seconds, 24 bits.
                put("lru_clock", (now.as_secs() & ((1 << 24) - 1)).to_string());
                put(
                    "executable",
                    std::env::current_exe()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                );
                put("config_file", String::new());
                put("io_threads_active", "0".into());
                put("edgebench_version", env!("CARGO_PKG_VERSION").into());
            }
            "clients" => {
                put("connected_clients", self.connected_clients().to_string());
                put("cluster_connections", "0".into());
                put("maxclients", server.get(Param::MAXCLIENTS));
                put("client_recent_max_input_buffer", "0".into());
                put("client_recent_max_output_buffer", "0".into());
                put("blocked_clients", self.blocked_clients().to_string());
                put(
                    "tracking_clients",
                    self.tracking().stats().clients.to_string(),
                );
                put(
                    "clients_in_timeout_table",
                    self.blocked_clients().to_string(),
                );
            }
            "memory" => {
                let MemoryNow { used, rss, peak } = self.memory_now();
                let total = total_system_memory();
                let maxmemory = server.number(Param::MAXMEMORY);
                put("used_memory", used.to_string());
                put("used_memory_human", bytes_to_human(used));
                put("used_memory_rss", rss.to_string());
                put("used_memory_rss_human", bytes_to_human(rss));
                put("used_memory_peak", peak.to_string());
                put("used_memory_peak_human", bytes_to_human(peak));
                put(
                    "used_memory_peak_perc",
                    format!("{:.2}%", percent(used, peak)),
                );
                put("used_memory_overhead", "0".into());
                put("used_memory_startup", "0".into());
                put("used_memory_dataset", used.to_string());
                put("used_memory_dataset_perc", "100.00%".into());
                put("total_system_memory", total.to_string());
                put("total_system_memory_human", bytes_to_human(total));
                for (k, v) in self.scripting_memory_lines() {
                    put(k, v);
                }
                put("maxmemory", maxmemory.to_string());
                put("maxmemory_human", bytes_to_human(maxmemory));
                put("maxmemory_policy", server.get(Param::MAXMEMORY_POLICY));
                // Redis leaves replica and AOF buffers out of what eviction counts; the
                // engine has no such buffers.
                put("mem_not_counted_for_evict", "0".into());
                put("mem_fragmentation_ratio", "1.00".into());
                put("mem_fragmentation_bytes", "0".into());
                put("mem_allocator", "libc".into());
                put(
                    "lazyfree_pending_objects",
                    self.inner().lazyfree.pending().to_string(),
                );
            }
            "persistence" => {
                for (k, v) in self.persistence_info() {
                    put(k, v);
                }
            }
            "stats" => {
                let stats = self.stats();
                let n = |a: &AtomicU64| a.load(Ordering::Relaxed).to_string();
                put("total_connections_received", n(&stats.connections));
                put("total_commands_processed", stats.commands.get().to_string());
                put("instantaneous_ops_per_sec", "0".into());
                put("total_net_input_bytes", "0".into());
                put("total_net_output_bytes", "0".into());
                put("rejected_connections", "0".into());
                put("expired_keys", n(&stats.expired_keys));
                put(
                    "evicted_keys",
                    self.inner()
                        .eviction
                        .evicted
                        .load(Ordering::Relaxed)
                        .to_string(),
                );
                put("keyspace_hits", "0".into());
                put("keyspace_misses", "0".into());
                put("pubsub_channels", "0".into());
                put("pubsub_patterns", "0".into());
                let tracked = self.tracking().stats();
                put("tracking_total_keys", tracked.keys.to_string());
                put("tracking_total_items", tracked.items.to_string());
                put("tracking_total_prefixes", tracked.prefixes.to_string());
                let (fork_us, forks) = self.fork_stats();
                put("latest_fork_usec", fork_us.to_string());
                put("total_forks", forks.to_string());
                put(
                    "lazyfreed_objects",
                    self.inner().lazyfree.freed().to_string(),
                );
                // MIGRATE opens a connection per call and keeps none.
                put("migrate_cached_sockets", "0".into());
                put("unexpected_error_replies", "0".into());
                put("total_error_replies", server.errors.total().to_string());
            }
            "replication" => {
                put("role", "master".into());
                put("connected_slaves", "0".into());
                put("master_failover_state", "no-failover".into());
                put("master_replid", server.run_id.clone());
                put("master_replid2", "0".repeat(40));
                put("master_repl_offset", "0".into());
                put("second_repl_offset", "-1".into());
                put("repl_backlog_active", "0".into());
                put("repl_backlog_size", "1048576".into());
                put("repl_backlog_first_byte_offset", "0".into());
                put("repl_backlog_histlen", "0".into());
            }
            "cpu" => {
                let (user, sys) = cpu_seconds();
                put("used_cpu_sys", format!("{sys:.6}"));
                put("used_cpu_user", format!("{user:.6}"));
                put("used_cpu_sys_children", "0.000000".into());
                put("used_cpu_user_children", "0.000000".into());
            }
            "commandstats" => {
                let mut calls: Vec<(&str, usize)> = all_commands()
                    .enumerate()
                    .map(|(i, spec)| (spec.name, i))
                    .filter(|&(_, i)| server.calls.get(i) + server.rejected.get(i) > 0)
                    .collect();
                calls.sort_unstable();
                for (name, i) in calls {
                    let (n, rejected, failed) = (
                        server.calls.get(i),
                        server.rejected.get(i),
                        server.failed.get(i),
                    );
                    put(
                        &format!("cmdstat_{name}"),
                        format!(
                            "calls={n},usec=0,usec_per_call=0.00,rejected_calls={rejected},failed_calls={failed}"
                        ),
                    );
                }
            }
            "errorstats" => {
                for (code, n) in server.errors.by_code() {
                    put(&format!("errorstat_{code}"), format!("count={n}"));
                }
            }
            "cluster" => put("cluster_enabled", "0".into()),
            "keyspace" => {
                for (i, (keys, expires)) in self.keyspace_counts().into_iter().enumerate() {
                    if keys > 0 {
                        put(
                            &format!("db{i}"),
                            format!("keys={keys},expires={expires},avg_ttl=0"),
                        );
                    }
                }
            }
            // modules, latencystats: nothing to report.
            _ => {}
        }
        lines
    }

    /// (keys, keys with a TTL) of every database. Locks one whole database at a time while
    /// holding nothing else, so it cannot close a lock cycle with another caller. It must not
    /// run while the caller holds shards itself (inside an EXEC that locked the queue's keys).
    /// The heap the engine's process holds now, its RSS, and the peak seen (updated): what
    /// INFO memory and MEMORY STATS report.
    pub(crate) fn memory_now(&self) -> MemoryNow {
        let rss = process_rss_bytes();
        let used = heap_bytes().unwrap_or(rss);
        let peak = self
            .inner()
            .server
            .peak_memory
            .fetch_max(used, Ordering::Relaxed)
            .max(used);
        MemoryNow { used, rss, peak }
    }

    pub fn keyspace_counts(&self) -> Vec<(usize, usize)> {
        let now = self.now_ms();
        (0..DATABASES)
            .map(|i| {
                let mut ks = self.db(i).lock_all(now);
                let keys = ks.keys();
                let expires = keys
                    .iter()
                    .filter(|k| ks.get(k).is_some_and(|e| e.expires_at_ms().is_some()))
                    .count();
                (keys.len(), expires)
            })
            .collect()
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// Redis's `bytesToHuman`: `1013.70K`, `11.63M`, `512B`.
pub fn bytes_to_human(n: u64) -> String {
    const UNITS: [(u64, &str); 5] = [
        (1 << 50, "P"),
        (1 << 40, "T"),
        (1 << 30, "G"),
        (1 << 20, "M"),
        (1 << 10, "K"),
    ];
    UNITS.iter().find(|(size, _)| n >= *size).map_or_else(
        || format!("{n}B"),
        |(size, unit)| format!("{:.2}{unit}", n as f64 / *size as f64),
    )
}

/// [`Engine::memory_now`]'s figures, in bytes.
pub(crate) struct MemoryNow {
    /// The live heap (`used_memory`).
    pub(crate) used: u64,
    /// The resident set (`used_memory_rss`).
    pub(crate) rss: u64,
    /// The largest `used` seen (`used_memory_peak`).
    pub(crate) peak: u64,
}

/// Where `used_memory` comes from when the host process can say: its allocator's live bytes.
static HEAP_PROBE: std::sync::OnceLock<fn() -> Option<u64>> = std::sync::OnceLock::new();

/// Tells the engine how to read the process's live heap, for INFO's `used_memory` (as
/// redis-server reports its allocator's bytes). The engine keeps no per-value accounting, so
/// only the host, which installed the global allocator, can know; the first probe set stays.
/// A probe that answers `None` (its count is not kept) leaves the resident set size.
pub fn set_heap_probe(probe: fn() -> Option<u64>) {
    let _ = HEAP_PROBE.set(probe);
}

pub(crate) fn heap_bytes() -> Option<u64> {
    HEAP_PROBE.get().and_then(|probe| probe())
}

/// The process's resident set size: INFO's `used_memory_rss`, and `used_memory` when there is
/// no heap probe. 0 where `/proc` is not available.
fn process_rss_bytes() -> u64 {
    let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else {
        return 0;
    };
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages.saturating_mul(u64::try_from(page).unwrap_or(4096))
}

/// MemTotal from `/proc/meminfo`, in bytes; 0 where it is not available.
fn total_system_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb.saturating_mul(1024))
}

/// (user, system) CPU seconds of this process, from `getrusage`.
fn cpu_seconds() -> (f64, f64) {
    // SAFETY: `rusage` is plain data, valid when zeroed; getrusage writes only into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pointer is to a live, writable `rusage`.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

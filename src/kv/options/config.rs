//! The typed `kv` configuration, [`KvConfig`], and what the run asks of it: each
//! connection's number of requests, key slice, seed and request generator, and the one
//! value buffer. Built only by [`KvConfig::from_args`] (`build.rs`), so its invariants (see
//! the module above) hold for every value of it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::kv::command::{ArbitraryCommand, CommandMix, OpMix, WaitMix};
use crate::kv::conn_gen::{ConnGen, Mode};
use crate::kv::data::{DataGen, DataSize, ExpiryRange, ValueBuffer};
use crate::kv::keys::{parallel_slice, KeyGen, KeyPattern, KeySpace};
use crate::kv::rng::{splitmix64, Rng};

use super::wait::WaitRatio;

/// `-P/--protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Protocol {
    /// `redis`: RESP2 without HELLO (memtier's default).
    Redis,
    /// `resp2`: send `HELLO 2` first.
    Resp2,
    /// `resp3`: send `HELLO 3` first.
    Resp3,
}

impl Protocol {
    /// memtier's name for it.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Redis => "redis",
            Protocol::Resp2 => "resp2",
            Protocol::Resp3 => "resp3",
        }
    }
}

/// `--ratio SETS:GETS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Ratio {
    /// SETs per cycle.
    pub sets: u32,
    /// GETs per cycle.
    pub gets: u32,
}

/// `-n/--requests`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Requests {
    /// This many requests per connection.
    Count(u64),
    /// Cover the key range: see [`KvConfig::requests_for`].
    AllKeys,
}

/// The typed `kv` configuration. Built only by [`KvConfig::from_args`].
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct KvConfig {
    /// TCP host; `None` with a Unix socket.
    pub server: Option<String>,
    /// TCP port.
    pub port: u16,
    /// Unix socket path (`-S`).
    pub unix_socket: Option<PathBuf>,
    /// The `-u` URI as given (already applied to server, port, auth, db).
    pub uri: Option<String>,
    /// `-P`.
    pub protocol: Protocol,
    /// `-a`: PASSWORD or USER:PASSWORD.
    pub authenticate: Option<String>,
    /// `--select-db` (0 means no SELECT).
    pub select_db: u32,
    /// `--tls` (or `-u rediss://`) and its options; `None`: plain text.
    #[serde(default)]
    pub tls: Option<crate::transport::TlsOptions>,
    /// `--cluster-mode`.
    pub cluster_mode: bool,
    /// `--reconnect-interval`, in requests.
    pub reconnect_interval: Option<u32>,
    /// `--connection-timeout`; `None` for no timeout.
    pub connection_timeout: Option<Duration>,
    /// edgebench `--target`, passed through.
    pub target: Option<String>,
    /// `--cluster-shards` and `--cluster-replicas`, for a spawned `--target redis-cluster`.
    pub cluster_shape: (Option<u16>, Option<u16>),

    /// `-c`, connections per thread.
    pub clients: u32,
    /// `-t`.
    pub threads: u32,
    /// `--pipeline`.
    pub pipeline: u32,
    /// `-n`; `None` when `--test-time` is set.
    pub requests: Option<Requests>,
    /// `--test-time`.
    pub test_time: Option<Duration>,
    /// `--ratio`.
    pub ratio: Ratio,
    /// `--multi-key-get`; 0 means single GETs.
    pub multi_key_get: u32,
    /// `--rate-limiting`: requests per second per connection.
    pub rate_limiting: Option<u32>,
    /// edgebench `--rate`: requests per second in total.
    pub rate: Option<u64>,
    /// edgebench `--warmup` (zero without it).
    pub warmup: Duration,
    /// `--distinct-client-seed`.
    pub distinct_client_seed: bool,
    /// `--randomize` was given.
    pub randomize: bool,
    /// The base seed: `--seed`, else random with `--randomize`, else 0.
    pub seed: u64,
    /// `-x`.
    pub run_count: u32,

    /// Value sizes.
    pub data_size: DataSize,
    /// `-R`.
    pub random_data: bool,
    /// `--expiry-range`.
    pub expiry: Option<ExpiryRange>,

    /// The key space.
    pub keys: KeySpace,
    /// SET side of `--key-pattern`.
    pub set_pattern: KeyPattern,
    /// GET side of `--key-pattern`.
    pub get_pattern: KeyPattern,

    /// edgebench `--wait N` (or the target's `?wait=N`): every write is followed by `WAIT N
    /// 0`; 0 means none.
    pub wait: u32,
    /// memtier's `--wait-ratio` (with `--num-slaves`, `--wait-timeout`); `None` without it,
    /// or with `--command` (memtier ignores it there).
    pub wait_ratio: Option<WaitRatio>,

    /// `--command`s with their ratios and patterns; empty means SET/GET.
    pub commands: Arc<[ArbitraryCommand]>,
    /// `--command-stats-breakdown=line`: one row per command line instead of per name.
    pub stats_by_line: bool,

    /// `-o`.
    pub out_file: Option<PathBuf>,
    /// `--json-out-file`.
    pub json_out_file: Option<PathBuf>,
    /// `--hdr-file-prefix`.
    pub hdr_file_prefix: Option<String>,
    /// `--show-config`.
    pub show_config: bool,
    /// `--hide-histogram`.
    pub hide_histogram: bool,
    /// `--print-percentiles`, each in [0, 100].
    pub print_percentiles: Vec<f64>,
    /// `--print-all-runs`.
    pub print_all_runs: bool,
    /// `--run-id`: shared by the load hosts of one run.
    pub run_id: Option<String>,
    /// `--start-at`: when the measured load begins (the first `-x` run).
    pub start_at: Option<std::time::SystemTime>,
    /// The `edgebench kv` arguments as given (after `kv`), kept in results.json so
    /// `report merge` can rebuild this configuration; empty when not run from a command line.
    pub command_line: Vec<String>,

    /// Things memtier would also only warn about (e.g. both -u and -s); print them.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

impl KvConfig {
    /// Connections in total: `-c` × `-t`.
    pub fn total_connections(&self) -> u64 {
        u64::from(self.clients) * u64::from(self.threads)
    }

    /// True when keys follow `P` (both sides, or every `--command`).
    pub fn parallel(&self) -> bool {
        match self.commands.first() {
            Some(c) => c.key_pattern == KeyPattern::Parallel,
            None => self.set_pattern == KeyPattern::Parallel,
        }
    }

    /// The key slice connection `conn_index` walks under `P` (see [`parallel_slice`]);
    /// `None` without `P`. Connections are numbered `thread × clients + client`, as memtier
    /// numbers them while creating each thread's clients.
    pub fn slice_for(&self, conn_index: u64) -> Option<(u64, u64)> {
        self.parallel().then(|| {
            parallel_slice(
                self.keys.min,
                self.keys.max,
                conn_index,
                self.total_connections(),
            )
        })
    }

    /// How many requests connection `conn_index` sends; `None` when `--test-time` decides.
    ///
    /// `-n allkeys`: with `P` the connection's slice length, so all connections together write
    /// every key exactly once (memtier gives every client `(max − min) / conns + 1`, which
    /// makes the last client rewrite part of its shorter slice); otherwise the number of keys
    /// in the range, so `S` covers it exactly once (memtier uses `max − min`, one short).
    pub fn requests_for(&self, conn_index: u64) -> Option<u64> {
        match self.requests? {
            Requests::Count(n) => Some(n),
            Requests::AllKeys => Some(match self.slice_for(conn_index) {
                Some((lo, hi)) => hi - lo + 1,
                None => self.keys.len(),
            }),
        }
    }

    /// The seed of connection `conn_index` (memtier's `client::setup_client`): the base seed
    /// for every connection, or with `--distinct-client-seed` one derived from the base seed
    /// and the connection number. Without it all connections draw the same sequence, as in
    /// memtier.
    pub fn connection_seed(&self, conn_index: u64) -> u64 {
        let mut s = self.seed;
        if self.distinct_client_seed {
            s ^= conn_index
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(1);
        }
        splitmix64(&mut s)
    }

    /// The one value buffer of the run, shared by every connection's [`DataGen`].
    pub fn value_buffer(&self) -> ValueBuffer {
        let mut s = self.seed ^ 0x7661_6C75_6573;
        ValueBuffer::new(
            self.data_size.largest(),
            self.random_data,
            splitmix64(&mut s),
        )
    }

    /// The request generator of connection `conn_index` (`< total_connections()`), slicing
    /// values from `buffer` (from [`KvConfig::value_buffer`]).
    pub fn conn_gen(&self, conn_index: u64, buffer: &ValueBuffer) -> ConnGen {
        let seed = self.connection_seed(conn_index);
        let (mut k, mut d, mut w) = (seed ^ 1, seed ^ 2, seed ^ 3);
        let key_rng = Rng::new(splitmix64(&mut k));
        let data_rng = Rng::new(splitmix64(&mut d));
        let wait_rng = Rng::new(splitmix64(&mut w));
        let (patterns, mode) = if self.commands.is_empty() {
            (
                vec![self.set_pattern, self.get_pattern],
                Mode::SetGet(OpMix::new(
                    self.ratio.sets,
                    self.ratio.gets,
                    self.multi_key_get,
                )),
            )
        } else {
            (
                self.commands.iter().map(|c| c.key_pattern).collect(),
                Mode::Commands {
                    mix: CommandMix::new(self.commands.iter().map(|c| c.ratio)),
                    commands: Arc::clone(&self.commands),
                },
            )
        };
        ConnGen {
            keys: KeyGen::new(&self.keys, &patterns, self.slice_for(conn_index), key_rng),
            data: DataGen::new(
                self.data_size.clone(),
                buffer.clone(),
                self.keys.min,
                self.keys.max,
                self.expiry,
                data_rng,
            ),
            mode,
            waits: self
                .wait_ratio
                .filter(|_| self.commands.is_empty())
                .map(|ratio| WaitMix::new(ratio, wait_rng)),
        }
    }
}

//! `edgebench kv`'s command line in two stages, as the rest of edgebench does it:
//! [`KvArgs`] (clap) takes memtier_benchmark's options with memtier's names as strings;
//! [`KvConfig::from_args`] turns them into typed values and checks the rules between them.
//! [`reject_unsupported`] runs before clap, so a memtier option edgebench lacks fails with
//! our one-line reason rather than clap's "unexpected argument".
//!
//! Defaults and rules are memtier's (`memtier_benchmark.cpp`: `config_parse_args`,
//! `config_init_defaults`, `main`), cited where followed. Where edgebench is stricter or
//! differs, the comment says so and `docs/kv-options.md` lists it.
//!
//! Invariants of a [`KvConfig`]:
//! - `key_minimum <= key_maximum`, and a `G` median lies strictly inside the key range;
//! - at most one of `requests` and `test_time`; exactly one when it is built (10 000
//!   requests per connection by default);
//! - with `P`, every connection's slice is non-empty;
//! - every error message names the flag, the value and the fix, on one line.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::{Arg, ArgAction, ArgMatches, Args};

use super::command::{ArbitraryCommand, CommandMix, OpMix};
use super::data::{DataGen, DataSize, ExpiryRange, SizePattern, SizeWeight, ValueBuffer};
use super::keys::{parallel_slice, KeyGen, KeyPattern, KeySpace};
use super::{splitmix64, ConnGen, Mode, Rng};
use crate::target::url::{RedisUrl, UrlAt, UrlError, URL_FORMS};

/// Why a `kv` command line was rejected. Each message is one line naming the flag and the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KvConfigError {
    /// A memtier option edgebench does not implement.
    #[error("memtier option {flag} is not supported by edgebench kv ({why})")]
    Unsupported {
        /// The option as written (`--tls`, `-D`).
        flag: String,
        /// Why, and what to do instead.
        why: &'static str,
    },
    /// A value that does not parse or is out of range.
    #[error("invalid {flag} {value:?}: {fix}")]
    Invalid {
        /// The option.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        fix: String,
    },
    /// Options that cannot go together.
    #[error("{what}: {fix}")]
    Conflict {
        /// Which options, with their values.
        what: String,
        /// What to change.
        fix: String,
    },
    /// A `--command` that does not parse.
    #[error("invalid --command {command:?}: {fix}")]
    Command {
        /// The command text.
        command: String,
        /// The problem and the fix.
        fix: String,
    },
}

/// The longest --test-time or --warmup accepted: ten years, far below what a clock can add.
const LONGEST_RUN: Duration = Duration::from_secs(10 * 365 * 24 * 3600);

fn invalid(flag: &'static str, value: &str, fix: impl Into<String>) -> KvConfigError {
    KvConfigError::Invalid {
        flag,
        value: value.to_string(),
        fix: fix.into(),
    }
}

fn conflict(what: impl Into<String>, fix: impl Into<String>) -> KvConfigError {
    KvConfigError::Conflict {
        what: what.into(),
        fix: fix.into(),
    }
}

/// memtier options edgebench kv does not implement, with the reason and the alternative.
/// Taken from `config_parse_args`'s `long_options` table and getopt string
/// `"vs:S:p:P:o:x:DRn:c:t:d:a:h:46u:"` (`memtier_benchmark.cpp`).
const UNSUPPORTED: &[(&str, Option<char>, &str)] = &[
    (
        "ipv4",
        Some('4'),
        "the resolver picks the address family; give an IPv4 address to -s to force it",
    ),
    (
        "ipv6",
        Some('6'),
        "the resolver picks the address family; give an IPv6 address to -s to force it",
    ),
    ("tls", None, TLS_WHY),
    ("cert", None, TLS_WHY),
    ("key", None, TLS_WHY),
    ("cacert", None, TLS_WHY),
    ("tls-skip-verify", None, TLS_WHY),
    ("sni", None, TLS_WHY),
    ("tls-protocols", None, TLS_WHY),
    (
        "debug",
        Some('D'),
        "there is no per-request debug log; --show-config prints the configuration",
    ),
    ("version", Some('v'), "use edgebench --version"),
    (
        "client-stats",
        None,
        "no per-client files; --json-out-file has the run and its per-second series",
    ),
    ("realtime-latencies", None, LIVE_WHY),
    ("latency-window", None, LIVE_WHY),
    ("reconnect-on-error", None, RECONNECT_WHY),
    ("max-reconnect-attempts", None, RECONNECT_WHY),
    ("reconnect-backoff-factor", None, RECONNECT_WHY),
    ("retry-on-error", None, RETRY_WHY),
    ("max-retries", None, RETRY_WHY),
    ("retry-backoff-ms", None, RETRY_WHY),
    ("retry-backoff-factor", None, RETRY_WHY),
    ("retry-on", None, RETRY_WHY),
    ("max-retry-queue", None, RETRY_WHY),
    ("failed-keys-file", None, RETRY_WHY),
    ("thread-conn-start-min-jitter-micros", None, JITTER_WHY),
    ("thread-conn-start-max-jitter-micros", None, JITTER_WHY),
    (
        "data-offset",
        None,
        "for SETRANGE/GETRANGE use --command \"SETRANGE __key__ OFFSET __data__\"",
    ),
    ("data-import", None, IMPORT_WHY),
    ("data-verify", None, IMPORT_WHY),
    ("verify-only", None, IMPORT_WHY),
    ("generate-keys", None, IMPORT_WHY),
    ("no-expiry", None, IMPORT_WHY),
    ("wait-ratio", None, WAIT_WHY),
    ("num-slaves", None, WAIT_WHY),
    ("wait-timeout", None, WAIT_WHY),
    (
        "monitor-input",
        None,
        "MONITOR replay is not implemented; give the commands with --command",
    ),
    (
        "monitor-pattern",
        None,
        "MONITOR replay is not implemented; give the commands with --command",
    ),
    ("statsd-host", None, STATSD_WHY),
    ("statsd-port", None, STATSD_WHY),
    ("statsd-prefix", None, STATSD_WHY),
    ("statsd-run-label", None, STATSD_WHY),
    ("graphite-port", None, STATSD_WHY),
    (
        "scan-incremental-iteration",
        None,
        "SCAN cursor following is not implemented",
    ),
    (
        "scan-incremental-max-iterations",
        None,
        "SCAN cursor following is not implemented",
    ),
    ("clients-start", None, STAIRCASE_WHY),
    ("clients-step", None, STAIRCASE_WHY),
    ("step-duration", None, STAIRCASE_WHY),
    (
        "transaction",
        None,
        "MULTI/EXEC grouping is not implemented; use --command \"MULTI\" etc. with --pipeline",
    ),
    (
        "command-miss-tracking",
        None,
        "hits and misses are counted for GET and MGET replies",
    ),
    (
        "command-is-read",
        None,
        "there is no replica routing; edgebench kv talks to one endpoint",
    ),
    (
        "read-preference",
        None,
        "there is no replica routing; edgebench kv talks to one endpoint",
    ),
    (
        "read-preference-fallback",
        None,
        "there is no replica routing; edgebench kv talks to one endpoint",
    ),
    (
        "read-server",
        None,
        "there is no replica routing; edgebench kv talks to one endpoint",
    ),
];
const TLS_WHY: &str = "TLS is not implemented; use a plain TCP port or -S, or put stunnel in front";
const LIVE_WHY: &str = "edgebench kv prints its own live line every second on stderr";
const RECONNECT_WHY: &str =
    "a lost connection ends the run, and the report says why and what was measured";
const RETRY_WHY: &str = "error replies are counted, never retried";
const JITTER_WHY: &str = "all connections open before the clock starts";
const IMPORT_WHY: &str =
    "memcache dump import and verification are not implemented; populate with -n allkeys --key-pattern=P:P --ratio=1:0";
const WAIT_WHY: &str = "WAIT is not generated; use --command \"WAIT 1 100\" with --command-ratio";
const STATSD_WHY: &str = "no StatsD/Graphite export; --json-out-file has the per-second series";
const STAIRCASE_WHY: &str = "no client staircase; run edgebench kv once per -c value";

/// Long options of [`KvArgs`] that take a value, so the argv scan skips their values.
const VALUE_LONGS: &[&str] = &[
    "server",
    "host",
    "port",
    "unix-socket",
    "uri",
    "protocol",
    "authenticate",
    "select-db",
    "clients",
    "threads",
    "pipeline",
    "requests",
    "test-time",
    "ratio",
    "data-size",
    "data-size-range",
    "data-size-list",
    "data-size-pattern",
    "expiry-range",
    "key-prefix",
    "key-minimum",
    "key-maximum",
    "key-pattern",
    "key-stddev",
    "key-median",
    "key-zipf-exp",
    "multi-key-get",
    "run-count",
    "rate-limiting",
    "print-percentiles",
    "out-file",
    "json-out-file",
    "hdr-file-prefix",
    "command",
    "command-ratio",
    "command-key-pattern",
    "command-stats-breakdown",
    "reconnect-interval",
    "connection-timeout",
    "target",
    "rate",
    "warmup",
    "seed",
];
/// Short options of [`KvArgs`] that take a value (memtier's getopt letters with `:`).
const VALUE_SHORTS: &[char] = &[
    's', 'h', 'p', 'S', 'u', 'P', 'a', 'c', 't', 'n', 'd', 'x', 'o',
];

/// Fails on the first memtier option edgebench kv does not implement, with one line naming
/// it and what to do instead. Pass the arguments after `kv` (or the whole argv: positional
/// words are skipped). Values of options (`--command "… --tls"`) are not mistaken for
/// options; `--` ends the scan.
pub fn reject_unsupported(args: &[String]) -> Result<(), KvConfigError> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if arg == "--" {
            return Ok(());
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, has_value) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            if let Some((_, _, why)) = UNSUPPORTED.iter().find(|(l, _, _)| *l == name) {
                return Err(KvConfigError::Unsupported {
                    flag: format!("--{name}"),
                    why,
                });
            }
            if !has_value && VALUE_LONGS.contains(&name) {
                i += 1;
            }
        } else if let Some(shorts) = arg.strip_prefix('-') {
            // A cluster like `-Rc 5`: flags until the first letter that takes a value, whose
            // value is the rest of the word or the next word.
            for (pos, c) in shorts.char_indices() {
                if let Some((_, _, why)) = UNSUPPORTED.iter().find(|(_, s, _)| *s == Some(c)) {
                    return Err(KvConfigError::Unsupported {
                        flag: format!("-{c}"),
                        why,
                    });
                }
                if VALUE_SHORTS.contains(&c) {
                    if pos + c.len_utf8() == shorts.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
    }
    Ok(())
}

/// `--command`, `--command-ratio` and `--command-key-pattern` in the order given: memtier
/// applies a ratio or pattern to the most recent `--command`, which three separate `Vec`s
/// would lose. Parsed by hand from clap's argument indices.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandFlags {
    /// The flags in command-line order.
    pub flags: Vec<CommandFlag>,
}

/// One of the arbitrary-command flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandFlag {
    /// `--command TEXT`.
    Command(String),
    /// `--command-ratio N`.
    Ratio(String),
    /// `--command-key-pattern P`.
    KeyPattern(String),
}

const COMMAND_IDS: [&str; 3] = ["command", "command-ratio", "command-key-pattern"];

impl clap::FromArgMatches for CommandFlags {
    fn from_arg_matches(m: &ArgMatches) -> Result<Self, clap::Error> {
        let mut flags: Vec<(usize, CommandFlag)> = Vec::new();
        for id in COMMAND_IDS {
            let (Some(values), Some(indices)) = (m.get_many::<String>(id), m.indices_of(id)) else {
                continue;
            };
            for (value, index) in values.zip(indices) {
                let v = value.clone();
                flags.push((
                    index,
                    match id {
                        "command" => CommandFlag::Command(v),
                        "command-ratio" => CommandFlag::Ratio(v),
                        _ => CommandFlag::KeyPattern(v),
                    },
                ));
            }
        }
        flags.sort_by_key(|(index, _)| *index);
        Ok(CommandFlags {
            flags: flags.into_iter().map(|(_, f)| f).collect(),
        })
    }

    fn update_from_arg_matches(&mut self, m: &ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(m)?;
        Ok(())
    }
}

impl Args for CommandFlags {
    fn augment_args(cmd: clap::Command) -> clap::Command {
        cmd.arg(
            Arg::new("command")
                .long("command")
                .value_name("COMMAND")
                .action(ArgAction::Append)
                .help_heading("Arbitrary commands")
                .help(
                    "Send this command instead of SET/GET, e.g. \"SET __key__ __data__\": __key__ is a \
                     generated key, __data__ a generated value; quote with \"…\" or '…'. Repeatable",
                ),
        )
        .arg(
            Arg::new("command-ratio")
                .long("command-ratio")
                .value_name("N")
                .action(ArgAction::Append)
                .help_heading("Arbitrary commands")
                .help("Times the preceding --command is sent in a row (default: 1)"),
        )
        .arg(
            Arg::new("command-key-pattern")
                .long("command-key-pattern")
                .value_name("S|R|G|Z|P")
                .action(ArgAction::Append)
                .help_heading("Arbitrary commands")
                .help("Key pattern of the preceding --command (default: R)"),
        )
    }

    fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_args(cmd)
    }
}

/// `edgebench kv` flags: memtier_benchmark's, with its names, short letters and defaults,
/// plus edgebench's `--target`, `--rate`, `--warmup` and `--seed`. Values stay strings here;
/// [`KvConfig::from_args`] types and checks them. A repeated option keeps its last value, as
/// memtier's getopt does. `-h` is memtier's `--host`; help is `--help` only.
#[derive(Debug, Clone, Default, Args)]
#[command(disable_help_flag = true, args_override_self = true)]
pub struct KvArgs {
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    pub help: Option<bool>,

    /// Server address (default: localhost).
    #[arg(
        short = 's',
        long = "server",
        visible_alias = "host",
        visible_short_alias = 'h',
        value_name = "ADDR",
        help_heading = "Connection"
    )]
    pub server: Option<String>,
    /// Server port (default: 6379).
    #[arg(short = 'p', long, value_name = "PORT", help_heading = "Connection")]
    pub port: Option<String>,
    /// Unix domain socket path (instead of -s/-p).
    #[arg(
        short = 'S',
        long = "unix-socket",
        value_name = "SOCKET",
        help_heading = "Connection"
    )]
    pub unix_socket: Option<PathBuf>,
    /// Server URI `redis://[USER:PASSWORD@]HOST[:PORT][/DB]`; takes precedence over -s, -p,
    /// -a, --select-db.
    #[arg(short = 'u', long, value_name = "URI", help_heading = "Connection")]
    pub uri: Option<String>,
    /// redis (default), resp2 or resp3 (resp2/resp3 send HELLO first).
    #[arg(
        short = 'P',
        long,
        value_name = "PROTOCOL",
        help_heading = "Connection"
    )]
    pub protocol: Option<String>,
    /// AUTH with PASSWORD, or USER:PASSWORD (Redis 6 ACL).
    #[arg(
        short = 'a',
        long,
        value_name = "CREDENTIALS",
        help_heading = "Connection"
    )]
    pub authenticate: Option<String>,
    /// SELECT this database first.
    #[arg(long = "select-db", value_name = "DB", help_heading = "Connection")]
    pub select_db: Option<String>,
    /// Redis Cluster: follow the slot map, one connection per node per client.
    #[arg(long = "cluster-mode", help_heading = "Connection")]
    pub cluster_mode: bool,
    /// Reconnect every N requests.
    #[arg(
        long = "reconnect-interval",
        value_name = "N",
        help_heading = "Connection"
    )]
    pub reconnect_interval: Option<String>,
    /// Connect timeout in seconds, 0 for none (default: 0).
    #[arg(
        long = "connection-timeout",
        value_name = "SECS",
        help_heading = "Connection"
    )]
    pub connection_timeout: Option<String>,
    /// edgebench: where to run (embedded, embedded-tcp, embedded-uds, redis-tcp, redis-uds,
    /// mini-redis, or a URL); without it, -s/-p/-S/-u name the server as in memtier.
    #[arg(long, value_name = "T", help_heading = "Connection")]
    pub target: Option<String>,

    /// Requests per connection (default: 10000), or allkeys to cover the key range.
    #[arg(
        short = 'n',
        long,
        value_name = "NUMBER|allkeys",
        help_heading = "Test"
    )]
    pub requests: Option<String>,
    /// Run for this many seconds instead of a request count.
    #[arg(long = "test-time", value_name = "SECS", help_heading = "Test")]
    pub test_time: Option<String>,
    /// Connections per thread (default: 50).
    #[arg(short = 'c', long, value_name = "NUMBER", help_heading = "Test")]
    pub clients: Option<String>,
    /// Threads (default: 4).
    #[arg(short = 't', long, value_name = "NUMBER", help_heading = "Test")]
    pub threads: Option<String>,
    /// Requests in flight per connection (default: 1).
    #[arg(long, value_name = "NUMBER", help_heading = "Test")]
    pub pipeline: Option<String>,
    /// SETS:GETS, the set:get mix (default: 1:10).
    #[arg(long, value_name = "SETS:GETS", help_heading = "Test")]
    pub ratio: Option<String>,
    /// GETs go out as MGETs of up to NUM keys.
    #[arg(long = "multi-key-get", value_name = "NUM", help_heading = "Test")]
    pub multi_key_get: Option<String>,
    /// At most N requests per second per connection (memtier's meaning).
    #[arg(long = "rate-limiting", value_name = "N", help_heading = "Test")]
    pub rate_limiting: Option<String>,
    /// edgebench: R requests per second in total, on a schedule; latency is also reported
    /// from the scheduled time (coordinated omission corrected).
    #[arg(long, value_name = "R", help_heading = "Test")]
    pub rate: Option<String>,
    /// edgebench: run this long first (e.g. 2s) and leave it out of the figures.
    #[arg(long, value_name = "D", help_heading = "Test")]
    pub warmup: Option<String>,
    /// Each connection gets its own random seed (otherwise all connections draw the same
    /// keys, as in memtier).
    #[arg(long = "distinct-client-seed", help_heading = "Test")]
    pub distinct_client_seed: bool,
    /// Random base seed (default: a constant); the seed used is printed by --show-config.
    #[arg(long, help_heading = "Test")]
    pub randomize: bool,
    /// edgebench: the base seed (default: 0, or random with --randomize).
    #[arg(long, value_name = "N", help_heading = "Test")]
    pub seed: Option<String>,
    /// Repeat the whole test N times (default: 1).
    #[arg(
        short = 'x',
        long = "run-count",
        value_name = "NUMBER",
        help_heading = "Test"
    )]
    pub run_count: Option<String>,

    /// Value size in bytes (default: 32).
    #[arg(
        short = 'd',
        long = "data-size",
        value_name = "SIZE",
        help_heading = "Objects"
    )]
    pub data_size: Option<String>,
    /// Value sizes MIN-MAX.
    #[arg(
        long = "data-size-range",
        value_name = "MIN-MAX",
        help_heading = "Objects"
    )]
    pub data_size_range: Option<String>,
    /// Value sizes SIZE:WEIGHT,… (each size WEIGHT times in a row).
    #[arg(long = "data-size-list", value_name = "LIST", help_heading = "Objects")]
    pub data_size_list: Option<String>,
    /// With --data-size-range: R random size (default), S sizes spread over the key range.
    #[arg(
        long = "data-size-pattern",
        value_name = "R|S",
        help_heading = "Objects"
    )]
    pub data_size_pattern: Option<String>,
    /// Random bytes instead of 'x'.
    #[arg(short = 'R', long = "random-data", help_heading = "Objects")]
    pub random_data: bool,
    /// TTL in seconds, uniform in MIN-MAX (SETEX).
    #[arg(
        long = "expiry-range",
        value_name = "MIN-MAX",
        help_heading = "Objects"
    )]
    pub expiry_range: Option<String>,

    /// Key prefix (default: memtier-).
    #[arg(long = "key-prefix", value_name = "PREFIX", help_heading = "Keys")]
    pub key_prefix: Option<String>,
    /// Smallest key index (default: 0).
    #[arg(long = "key-minimum", value_name = "NUMBER", help_heading = "Keys")]
    pub key_minimum: Option<String>,
    /// Largest key index (default: 10000000).
    #[arg(long = "key-maximum", value_name = "NUMBER", help_heading = "Keys")]
    pub key_maximum: Option<String>,
    /// SET:GET key patterns, each S (sequential), R (uniform), G (Gaussian), Z (Zipf) or P
    /// (parallel: each connection its own slice) (default: R:R).
    #[arg(long = "key-pattern", value_name = "SET:GET", help_heading = "Keys")]
    pub key_pattern: Option<String>,
    /// G's standard deviation (default: key range / 6).
    #[arg(long = "key-stddev", value_name = "STDDEV", help_heading = "Keys")]
    pub key_stddev: Option<String>,
    /// G's centre (default: middle of the key range).
    #[arg(long = "key-median", value_name = "MEDIAN", help_heading = "Keys")]
    pub key_median: Option<String>,
    /// Z's exponent, in (0, 5) (default: 1).
    #[arg(long = "key-zipf-exp", value_name = "EXP", help_heading = "Keys")]
    pub key_zipf_exp: Option<String>,

    #[command(flatten)]
    pub commands: CommandFlags,
    /// Group --command statistics by command name (command, default) or by line.
    #[arg(
        long = "command-stats-breakdown",
        value_name = "command|line",
        help_heading = "Arbitrary commands"
    )]
    pub command_stats_breakdown: Option<String>,

    /// Write the results here (default: stdout).
    #[arg(
        short = 'o',
        long = "out-file",
        value_name = "FILE",
        help_heading = "Output"
    )]
    pub out_file: Option<PathBuf>,
    /// Also write JSON in memtier's shape here.
    #[arg(long = "json-out-file", value_name = "FILE", help_heading = "Output")]
    pub json_out_file: Option<PathBuf>,
    /// Write HDR histogram files (.txt, .hgrm) with this prefix.
    #[arg(
        long = "hdr-file-prefix",
        value_name = "PREFIX",
        help_heading = "Output"
    )]
    pub hdr_file_prefix: Option<String>,
    /// Print the configuration before running.
    #[arg(long = "show-config", help_heading = "Output")]
    pub show_config: bool,
    /// Leave out the latency distribution.
    #[arg(long = "hide-histogram", help_heading = "Output")]
    pub hide_histogram: bool,
    /// Percentiles in the table (default: 50,99,99.9).
    #[arg(
        long = "print-percentiles",
        value_name = "LIST",
        help_heading = "Output"
    )]
    pub print_percentiles: Option<String>,
    /// With -x, print every run, not only best, worst and average.
    #[arg(long = "print-all-runs", help_heading = "Output")]
    pub print_all_runs: bool,
}

/// `-P/--protocol`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ratio {
    /// SETs per cycle.
    pub sets: u32,
    /// GETs per cycle.
    pub gets: u32,
}

/// `-n/--requests`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requests {
    /// This many requests per connection.
    Count(u64),
    /// Cover the key range: see [`KvConfig::requests_for`].
    AllKeys,
}

/// The typed `kv` configuration. Built only by [`KvConfig::from_args`].
#[derive(Debug, Clone)]
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
    /// `--cluster-mode`.
    pub cluster_mode: bool,
    /// `--reconnect-interval`, in requests.
    pub reconnect_interval: Option<u32>,
    /// `--connection-timeout`; `None` for no timeout.
    pub connection_timeout: Option<Duration>,
    /// edgebench `--target`, passed through.
    pub target: Option<String>,

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

    /// Things memtier would also only warn about (e.g. both -u and -s); print them.
    pub warnings: Vec<String>,
}

fn parse_u32(flag: &'static str, v: &str, min: u32, what: &str) -> Result<u32, KvConfigError> {
    match v.parse::<u32>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(invalid(flag, v, what)),
    }
}

fn parse_u64(flag: &'static str, v: &str, min: u64, what: &str) -> Result<u64, KvConfigError> {
    match v.parse::<u64>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(invalid(flag, v, what)),
    }
}

/// memtier's `config_range`: `MIN-MAX`, swapped when given backwards.
fn parse_range(flag: &'static str, v: &str, fix: &str) -> Result<(u32, u32), KvConfigError> {
    let bad = || invalid(flag, v, fix);
    let (a, b) = v.split_once('-').ok_or_else(bad)?;
    let (a, b) = (
        a.parse::<u32>().map_err(|_| bad())?,
        b.parse::<u32>().map_err(|_| bad())?,
    );
    Ok((a.min(b), a.max(b)))
}

fn parse_pattern(flag: &'static str, v: &str, fix: &str) -> Result<KeyPattern, KvConfigError> {
    let mut chars = v.chars();
    match (chars.next().and_then(KeyPattern::from_letter), chars.next()) {
        (Some(p), None) => Ok(p),
        _ => Err(invalid(flag, v, fix)),
    }
}

/// Fresh entropy for `--randomize` without I/O: std's randomly keyed hasher (seeded from the
/// OS once per process), the clock and the process id.
fn fresh_entropy() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    h.write_u64(nanos);
    h.write_u32(std::process::id());
    h.finish()
}

/// `-u/--uri`, read by the one Redis URL parser ([`crate::target::url`]): memtier's
/// `redis://[USER:PASSWORD@]HOST[:PORT][/DB]`, and the Unix socket forms `--target` takes.
fn parse_uri(v: &str) -> Result<RedisUrl, KvConfigError> {
    RedisUrl::parse(v).map_err(|e| match e {
        UrlError::Tls => KvConfigError::Unsupported {
            flag: format!("--uri {v}"),
            why: TLS_WHY,
        },
        UrlError::NotRedis => invalid("--uri", v, URL_FORMS),
        UrlError::Bad(why) => invalid("--uri", v, format!("{why}; {URL_FORMS}")),
    })
}

impl KvConfig {
    /// Types and checks `args`. `--randomize` without `--seed` draws a fresh base seed.
    pub fn from_args(args: &KvArgs) -> Result<Self, KvConfigError> {
        Self::from_args_with_entropy(args, fresh_entropy())
    }

    /// [`KvConfig::from_args`] with the `--randomize` seed given, for tests.
    pub fn from_args_with_entropy(a: &KvArgs, entropy: u64) -> Result<Self, KvConfigError> {
        let mut warnings = Vec::new();

        // --- connection -------------------------------------------------------------
        let mut server = a.server.clone();
        let mut port = match &a.port {
            Some(p) => Some(match p.parse::<u16>() {
                Ok(n) if n > 0 => n,
                _ => return Err(invalid("--port", p, "a port must be a number in 1-65535")),
            }),
            None => None,
        };
        let mut authenticate = a.authenticate.clone();
        let mut select_db = match &a.select_db {
            Some(v) => Some(parse_u32(
                "--select-db",
                v,
                0,
                "a database number is 0 or more",
            )?),
            None => None,
        };
        let mut uri_socket = a.unix_socket.clone();
        if let Some(uri) = &a.uri {
            // memtier: the URI takes precedence, with a warning per overridden option.
            let u = parse_uri(uri)?;
            for (given, flag) in [
                (server.is_some(), "--server"),
                (port.is_some(), "--port"),
                (uri_socket.is_some(), "--unix-socket"),
                (authenticate.is_some(), "--authenticate"),
                (select_db.is_some(), "--select-db"),
            ] {
                if given {
                    warnings.push(format!(
                        "both --uri and {flag} given; the URI takes precedence"
                    ));
                }
            }
            match u.at {
                UrlAt::Tcp { host, port: p } => {
                    server = host.or(server);
                    port = p.or(port);
                }
                UrlAt::Unix(path) => {
                    (server, port) = (None, None);
                    uri_socket = Some(path);
                }
            }
            authenticate = u.auth.or(authenticate);
            select_db = u.db.or(select_db);
        }
        let unix_socket = uri_socket;
        if let Some(sock) = &unix_socket {
            if server.is_some() || port.is_some() {
                return Err(conflict(
                    format!("-S {} with -s/-p", sock.display()),
                    "a Unix socket and TCP cannot be used together (memtier): drop -s/-p or -S",
                ));
            }
        }
        let server = if unix_socket.is_none() {
            Some(server.unwrap_or_else(|| "localhost".to_string()))
        } else {
            None
        };
        let port = port.unwrap_or(6379);
        let protocol = match a.protocol.as_deref() {
            None | Some("redis") => Protocol::Redis,
            Some("resp2") => Protocol::Resp2,
            Some("resp3") => Protocol::Resp3,
            Some(p @ ("memcache_text" | "memcache_binary")) => {
                return Err(KvConfigError::Unsupported {
                    flag: format!("--protocol {p}"),
                    why: "edgebench kv speaks the Redis protocol only: use redis, resp2 or resp3",
                })
            }
            Some(p) => return Err(invalid("--protocol", p, "use redis, resp2 or resp3")),
        };
        let select_db = select_db.unwrap_or(0);
        let reconnect_interval = match &a.reconnect_interval {
            Some(v) => Some(parse_u32(
                "--reconnect-interval",
                v,
                1,
                "give a number of requests above 0",
            )?),
            None => None,
        };
        let connection_timeout = match &a.connection_timeout {
            Some(v) => match parse_u64(
                "--connection-timeout",
                v,
                0,
                "give whole seconds, 0 for no timeout",
            )? {
                0 => None,
                secs => Some(Duration::from_secs(secs)),
            },
            None => None,
        };

        // --- test ---------------------------------------------------------------------
        let clients = match &a.clients {
            Some(v) => parse_u32("--clients", v, 1, "clients must be greater than zero")?,
            None => 50,
        };
        let threads = match &a.threads {
            Some(v) => parse_u32("--threads", v, 1, "threads must be greater than zero")?,
            None => 4,
        };
        let pipeline = match &a.pipeline {
            Some(v) => parse_u32("--pipeline", v, 1, "pipeline must be greater than zero")?,
            None => 1,
        };
        let run_count = match &a.run_count {
            Some(v) => parse_u32("--run-count", v, 1, "run count must be greater than zero")?,
            None => 1,
        };
        let requests = match a.requests.as_deref() {
            Some("allkeys") => Some(Requests::AllKeys),
            Some(v) => Some(Requests::Count(parse_u64(
                "--requests",
                v,
                1,
                "requests must be a number greater than zero, or allkeys",
            )?)),
            None => None,
        };
        let test_time = match &a.test_time {
            Some(v) => {
                let t = Duration::from_secs(parse_u64(
                    "--test-time",
                    v,
                    1,
                    "test time is whole seconds greater than zero",
                )?);
                if t > LONGEST_RUN {
                    return Err(invalid(
                        "--test-time",
                        v,
                        "at most 315360000 seconds (ten years)",
                    ));
                }
                Some(t)
            }
            None => None,
        };
        if let (Some(n), Some(t)) = (&a.requests, &a.test_time) {
            // memtier rejects -n N with --test-time; with -n allkeys it depends on the order
            // of the flags. We always reject.
            return Err(conflict(
                format!("--requests {n} with --test-time {t}"),
                "they are mutually exclusive (memtier): keep one",
            ));
        }
        let requests = match (requests, test_time) {
            (None, None) => Some(Requests::Count(10_000)),
            (r, _) => r,
        };
        let ratio_given = a.ratio.is_some();
        let ratio = match &a.ratio {
            Some(v) => {
                let fix = "ratio must be SETS:GETS with whole numbers, e.g. 1:10";
                let (s, g) = v
                    .split_once(':')
                    .ok_or_else(|| invalid("--ratio", v, fix))?;
                let (sets, gets) = (
                    s.parse::<u32>().map_err(|_| invalid("--ratio", v, fix))?,
                    g.parse::<u32>().map_err(|_| invalid("--ratio", v, fix))?,
                );
                if sets == 0 && gets == 0 {
                    return Err(invalid(
                        "--ratio",
                        v,
                        "0:0 sends nothing; give e.g. 1:0 or 1:10",
                    ));
                }
                Ratio { sets, gets }
            }
            None => Ratio { sets: 1, gets: 10 },
        };
        let multi_key_get = match &a.multi_key_get {
            Some(v) => parse_u32(
                "--multi-key-get",
                v,
                1,
                "multi-key-get must be greater than zero",
            )?,
            None => 0,
        };
        let rate_limiting = match &a.rate_limiting {
            Some(v) => Some(parse_u32(
                "--rate-limiting",
                v,
                1,
                "rate must be requests per second per connection, above 0",
            )?),
            None => None,
        };
        let rate = match &a.rate {
            Some(v) => Some(parse_u64(
                "--rate",
                v,
                1,
                "rate must be requests per second in total, above 0",
            )?),
            None => None,
        };
        if let (Some(rl), Some(r)) = (&a.rate_limiting, &a.rate) {
            return Err(conflict(
                format!("--rate-limiting {rl} with --rate {r}"),
                "both set a request schedule (per connection and in total): keep one",
            ));
        }
        let warmup = match &a.warmup {
            Some(v) => {
                let w = crate::runner::parse_duration(v)
                    .map_err(|e| invalid("--warmup", v, e.to_string()))?;
                if w > LONGEST_RUN {
                    return Err(invalid("--warmup", v, "at most ten years (315360000s)"));
                }
                w
            }
            None => Duration::ZERO,
        };
        if let Some(t) = test_time {
            if !warmup.is_zero() && warmup >= t {
                return Err(conflict(
                    format!("--warmup {} with --test-time {}", a.warmup.as_deref().unwrap_or(""), t.as_secs()),
                    "the warm-up would leave nothing to measure: shorten --warmup or lengthen --test-time",
                ));
            }
        }
        let seed = match &a.seed {
            Some(v) => parse_u64(
                "--seed",
                v,
                0,
                "a seed is a whole number 0-18446744073709551615",
            )?,
            None if a.randomize => entropy,
            None => 0,
        };

        // --- objects ----------------------------------------------------------------------
        let size_pattern = match a.data_size_pattern.as_deref() {
            None | Some("R") => SizePattern::Random,
            Some("S") => SizePattern::Sequential,
            Some(v) => {
                return Err(invalid(
                    "--data-size-pattern",
                    v,
                    "data-size-pattern must be either R or S",
                ))
            }
        };
        let data_size = match (&a.data_size, &a.data_size_range, &a.data_size_list) {
            (Some(d), Some(_), _) | (Some(d), _, Some(_)) => {
                return Err(conflict(
                    format!("--data-size {d} with --data-size-range/--data-size-list"),
                    "data-size cannot be used with data-size-list or data-size-range (memtier): keep one",
                ))
            }
            (None, Some(r), Some(l)) => {
                return Err(conflict(
                    format!("--data-size-list {l} with --data-size-range {r}"),
                    "data-size-list cannot be used with data-size-range (memtier): keep one",
                ))
            }
            (Some(d), None, None) => {
                DataSize::Fixed(parse_u32("--data-size", d, 1, "data-size must be bytes greater than zero")?)
            }
            (None, Some(r), None) => {
                let (min, max) = parse_range("--data-size-range", r, "data-size-range must be MIN-MAX with MIN ≥ 1")?;
                if min < 1 {
                    return Err(invalid("--data-size-range", r, "data-size-range must be MIN-MAX with MIN ≥ 1"));
                }
                DataSize::Range {
                    min,
                    max,
                    pattern: size_pattern,
                }
            }
            (None, None, Some(l)) => {
                let fix = "data-size-list must be SIZE:WEIGHT,… with sizes ≥ 1 and at least one weight ≥ 1";
                let mut items = Vec::new();
                for item in l.split(',') {
                    let (s, w) = item.split_once(':').ok_or_else(|| invalid("--data-size-list", l, fix))?;
                    let (size, weight) = (
                        s.parse::<u32>().map_err(|_| invalid("--data-size-list", l, fix))?,
                        w.parse::<u32>().map_err(|_| invalid("--data-size-list", l, fix))?,
                    );
                    if size == 0 {
                        return Err(invalid("--data-size-list", l, fix));
                    }
                    items.push(SizeWeight { size, weight });
                }
                if items.iter().all(|w| w.weight == 0) {
                    return Err(invalid("--data-size-list", l, fix));
                }
                DataSize::List(items)
            }
            (None, None, None) => DataSize::Fixed(32),
        };
        if a.data_size_pattern.is_some() && !matches!(data_size, DataSize::Range { .. }) {
            warnings
                .push("--data-size-pattern only applies to --data-size-range; ignored".to_string());
        }
        let expiry = match &a.expiry_range {
            Some(v) => {
                let (min, max) =
                    parse_range("--expiry-range", v, "expiry-range must be MIN-MAX seconds")?;
                Some(ExpiryRange { min, max })
            }
            None => None,
        };

        // --- keys -------------------------------------------------------------------------
        // memtier rejects an explicit --key-minimum 0 although 0 is its default; we accept 0.
        let key_min = match &a.key_minimum {
            Some(v) => parse_u64("--key-minimum", v, 0, "key-minimum must be a whole number")?,
            None => 0,
        };
        let key_max = match &a.key_maximum {
            Some(v) => parse_u64(
                "--key-maximum",
                v,
                1,
                "key-maximum must be greater than zero",
            )?,
            None => 10_000_000,
        };
        if key_min > key_max {
            return Err(conflict(
                format!("--key-minimum {key_min} with --key-maximum {key_max}"),
                "key-minimum must not exceed key-maximum: swap or widen them",
            ));
        }
        let pattern_fix =
            "key-pattern must be SET:GET, each one of S, R, G, Z, P (e.g. R:R, G:G, P:P)";
        let (set_pattern, get_pattern) = match &a.key_pattern {
            Some(v) => {
                let (s, g) = v
                    .split_once(':')
                    .ok_or_else(|| invalid("--key-pattern", v, pattern_fix))?;
                (
                    parse_pattern("--key-pattern", s, pattern_fix)
                        .map_err(|_| invalid("--key-pattern", v, pattern_fix))?,
                    parse_pattern("--key-pattern", g, pattern_fix)
                        .map_err(|_| invalid("--key-pattern", v, pattern_fix))?,
                )
            }
            None => (KeyPattern::Random, KeyPattern::Random),
        };
        if (set_pattern == KeyPattern::Parallel) != (get_pattern == KeyPattern::Parallel) {
            return Err(invalid(
                "--key-pattern",
                a.key_pattern.as_deref().unwrap_or(""),
                "parallel key-pattern must be configured for both SET and GET (P:P)",
            ));
        }
        let stddev = match &a.key_stddev {
            Some(v) => Some(match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x.is_finite() => x,
                _ => {
                    return Err(invalid(
                        "--key-stddev",
                        v,
                        "key-stddev must be a number greater than zero",
                    ))
                }
            }),
            None => None,
        };
        let median = match &a.key_median {
            Some(v) => Some(match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x.is_finite() => x,
                _ => {
                    return Err(invalid(
                        "--key-median",
                        v,
                        "key-median must be a number greater than zero",
                    ))
                }
            }),
            None => None,
        };
        let zipf_exp = match &a.key_zipf_exp {
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x > 0.0 && x < 5.0 => x,
                _ => {
                    return Err(invalid(
                        "--key-zipf-exp",
                        v,
                        "key-zipf-exp must be within (0, 5)",
                    ))
                }
            },
            None => 1.0,
        };

        // --- arbitrary commands -------------------------------------------------------------
        let mut commands: Vec<ArbitraryCommand> = Vec::new();
        for flag in &a.commands.flags {
            match flag {
                CommandFlag::Command(text) => commands.push(ArbitraryCommand::parse(text)?),
                CommandFlag::Ratio(v) => {
                    let cmd = commands.last_mut().ok_or_else(|| {
                        conflict(
                            format!("--command-ratio {v} before any --command"),
                            "put it after the --command it belongs to",
                        )
                    })?;
                    cmd.ratio = parse_u32(
                        "--command-ratio",
                        v,
                        1,
                        "command-ratio must be a whole number above 0",
                    )?;
                }
                CommandFlag::KeyPattern(v) => {
                    let cmd = commands.last_mut().ok_or_else(|| {
                        conflict(
                            format!("--command-key-pattern {v} before any --command"),
                            "put it after the --command it belongs to",
                        )
                    })?;
                    cmd.key_pattern = parse_pattern(
                        "--command-key-pattern",
                        v,
                        "command-key-pattern must be one of S, R, G, Z, P",
                    )?;
                }
            }
        }
        let stats_by_line = match a.command_stats_breakdown.as_deref() {
            None => false,
            Some(v) if v.eq_ignore_ascii_case("command") => false,
            Some(v) if v.eq_ignore_ascii_case("line") => true,
            Some(v) => {
                return Err(invalid(
                    "--command-stats-breakdown",
                    v,
                    "command-stats-breakdown must be 'command' or 'line'",
                ))
            }
        };
        if !commands.is_empty() {
            if let Some(p) = &a.key_pattern {
                return Err(conflict(
                    format!("--key-pattern {p} with --command"),
                    "with arbitrary commands the key pattern is set per command with --command-key-pattern (memtier)",
                ));
            }
            if ratio_given {
                return Err(conflict(
                    format!("--ratio {} with --command", a.ratio.as_deref().unwrap_or("")),
                    "with arbitrary commands the mix is set per command with --command-ratio (memtier)",
                ));
            }
            let parallel = commands
                .iter()
                .filter(|c| c.key_pattern == KeyPattern::Parallel)
                .count();
            if parallel > 0 && parallel != commands.len() {
                return Err(conflict(
                    "--command-key-pattern P on some commands only",
                    "parallel key-pattern must be configured for all commands (memtier)",
                ));
            }
            if multi_key_get > 0 {
                warnings.push("--multi-key-get does not apply to --command; ignored".to_string());
            }
        }

        // --- cross-field key checks -------------------------------------------------------
        let patterns_in_use: Vec<KeyPattern> = if commands.is_empty() {
            vec![set_pattern, get_pattern]
        } else {
            commands.iter().map(|c| c.key_pattern).collect()
        };
        let gaussian = patterns_in_use.contains(&KeyPattern::Gaussian);
        if (stddev.is_some() || median.is_some()) && !gaussian {
            return Err(conflict(
                "--key-stddev/--key-median without a G key pattern",
                "key-stddev and key-median are only allowed together with key-pattern G (memtier)",
            ));
        }
        if let Some(m) = median {
            // memtier checks min ≤ median ≤ max, then asserts min < median < max when sampling;
            // we check the strict form so a bad median is an error, not a crash.
            if !(m > key_min as f64 && m < key_max as f64) {
                return Err(invalid(
                    "--key-median",
                    a.key_median.as_deref().unwrap_or(""),
                    format!("key-median must lie strictly between key-minimum {key_min} and key-maximum {key_max}"),
                ));
            }
        }
        let total_conns = u64::from(clients) * u64::from(threads);
        let keys = KeySpace {
            prefix: a
                .key_prefix
                .clone()
                .unwrap_or_else(|| "memtier-".to_string()),
            min: key_min,
            max: key_max,
            stddev,
            median,
            zipf_exp,
        };
        if patterns_in_use.contains(&KeyPattern::Parallel) && total_conns > keys.len() {
            return Err(conflict(
                format!("key pattern P with {clients} clients × {threads} threads over {} keys", keys.len()),
                "every connection needs at least one key of its own: lower -c/-t or widen --key-minimum/--key-maximum",
            ));
        }

        // --- cluster mode (memtier's verify_cluster_option) -----------------------------------
        if a.cluster_mode {
            let reason = if reconnect_interval.is_some() {
                Some("--reconnect-interval")
            } else if multi_key_get > 0 {
                Some("--multi-key-get")
            } else if unix_socket.is_some() {
                Some("--unix-socket")
            } else if select_db > 0 {
                Some("--select-db (Redis Cluster only has database 0)")
            } else {
                None
            };
            if let Some(flag) = reason {
                return Err(conflict(
                    format!("--cluster-mode with {flag}"),
                    "cluster mode does not support it (memtier): drop one",
                ));
            }
            if let Some(c) = commands.iter().find(|c| c.keys_count() > 1) {
                return Err(KvConfigError::Command {
                    command: c.text.clone(),
                    fix: "cluster mode supports only single-key commands (memtier)".to_string(),
                });
            }
        }

        // --- output -----------------------------------------------------------------------
        let print_percentiles = match &a.print_percentiles {
            Some(v) => {
                let fix = "quantiles must be expressed as [0.0-100.0],[0.0-100.0](,...)";
                v.split(',')
                    .map(|p| match p.trim().parse::<f64>() {
                        Ok(x) if (0.0..=100.0).contains(&x) => Ok(x),
                        _ => Err(invalid("--print-percentiles", v, fix)),
                    })
                    .collect::<Result<Vec<f64>, _>>()?
            }
            None => vec![50.0, 99.0, 99.9],
        };

        Ok(KvConfig {
            server,
            port,
            unix_socket,
            uri: a.uri.clone(),
            protocol,
            authenticate,
            select_db,
            cluster_mode: a.cluster_mode,
            reconnect_interval,
            connection_timeout,
            target: a.target.clone(),
            clients,
            threads,
            pipeline,
            requests,
            test_time,
            ratio,
            multi_key_get,
            rate_limiting,
            rate,
            warmup,
            distinct_client_seed: a.distinct_client_seed,
            randomize: a.randomize,
            seed,
            run_count,
            data_size,
            random_data: a.random_data,
            expiry,
            keys,
            set_pattern,
            get_pattern,
            commands: commands.into(),
            stats_by_line,
            out_file: a.out_file.clone(),
            json_out_file: a.json_out_file.clone(),
            hdr_file_prefix: a.hdr_file_prefix.clone(),
            show_config: a.show_config,
            hide_histogram: a.hide_histogram,
            print_percentiles,
            print_all_runs: a.print_all_runs,
            warnings,
        })
    }

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
        let (mut k, mut d) = (seed ^ 1, seed ^ 2);
        let key_rng = Rng::new(splitmix64(&mut k));
        let data_rng = Rng::new(splitmix64(&mut d));
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
        }
    }

    /// The configuration as memtier's `--show-config` prints it (`config_print`): one
    /// `name = value` line per option memtier prints and edgebench supports, then edgebench's
    /// own. Gaussian settings show the values in effect (memtier prints 0 for "default").
    pub fn show_config(&self) -> String {
        let mut s = String::new();
        let yn = |b: bool| if b { "yes" } else { "no" };
        let path = |p: &Option<PathBuf>| {
            p.as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        };
        let (range, pattern) = match &self.data_size {
            DataSize::Range { min, max, pattern } => (format!("{min}-{max}"), *pattern),
            _ => ("0-0".to_string(), SizePattern::Random),
        };
        let list = match &self.data_size {
            DataSize::List(items) => items
                .iter()
                .map(|w| format!("{}:{}", w.size, w.weight))
                .collect::<Vec<_>>()
                .join(","),
            _ => String::new(),
        };
        let fixed = match &self.data_size {
            DataSize::Fixed(n) => *n,
            _ => 0,
        };
        let requests = match self.requests {
            Some(Requests::Count(n)) => n.to_string(),
            Some(Requests::AllKeys) => "allkeys".to_string(),
            None => "0".to_string(),
        };
        let expiry = self
            .expiry
            .map(|e| format!("{}-{}", e.min, e.max))
            .unwrap_or_else(|| "0-0".to_string());
        let lines: Vec<(&str, String)> = vec![
            ("server", self.server.clone().unwrap_or_default()),
            ("port", self.port.to_string()),
            ("uri", self.uri.clone().unwrap_or_default()),
            ("unix socket", path(&self.unix_socket)),
            ("protocol", self.protocol.name().to_string()),
            ("out_file", path(&self.out_file)),
            ("run_count", self.run_count.to_string()),
            ("requests", requests),
            ("rate_limit", self.rate_limiting.unwrap_or(0).to_string()),
            ("clients", self.clients.to_string()),
            ("threads", self.threads.to_string()),
            (
                "test_time",
                self.test_time.map_or(0, |t| t.as_secs()).to_string(),
            ),
            ("ratio", format!("{}:{}", self.ratio.sets, self.ratio.gets)),
            ("pipeline", self.pipeline.to_string()),
            ("data_size", fixed.to_string()),
            ("random_data", yn(self.random_data).to_string()),
            ("data_size_range", range),
            ("data_size_list", list),
            (
                "data_size_pattern",
                if pattern == SizePattern::Sequential {
                    "S"
                } else {
                    "R"
                }
                .to_string(),
            ),
            ("expiry_range", expiry),
            ("key_prefix", self.keys.prefix.clone()),
            ("key_minimum", self.keys.min.to_string()),
            ("key_maximum", self.keys.max.to_string()),
            (
                "key_pattern",
                format!(
                    "{}:{}",
                    self.set_pattern.letter(),
                    self.get_pattern.letter()
                ),
            ),
            ("key_stddev", format!("{:.6}", self.keys.effective_stddev())),
            ("key_median", format!("{:.6}", self.keys.effective_median())),
            ("key_zipf_exp", format!("{:.6}", self.keys.zipf_exp)),
            (
                "reconnect_interval",
                self.reconnect_interval.unwrap_or(0).to_string(),
            ),
            (
                "connection_timeout",
                self.connection_timeout
                    .map_or(0, |t| t.as_secs())
                    .to_string(),
            ),
            ("multi_key_get", self.multi_key_get.to_string()),
            (
                "authenticate",
                if self.authenticate.is_some() {
                    "(set)".to_string()
                } else {
                    String::new()
                },
            ),
            ("select-db", self.select_db.to_string()),
            ("json-out-file", path(&self.json_out_file)),
            ("print-all-runs", yn(self.print_all_runs).to_string()),
            (
                "distinct_client_seed",
                yn(self.distinct_client_seed).to_string(),
            ),
            ("randomize", yn(self.randomize).to_string()),
            ("seed", self.seed.to_string()),
            ("target", self.target.clone().unwrap_or_default()),
            ("rate", self.rate.unwrap_or(0).to_string()),
            ("warmup", format!("{:?}", self.warmup)),
        ];
        for (name, value) in lines {
            let _ = writeln!(s, "{name} = {value}");
        }
        for (i, c) in self.commands.iter().enumerate() {
            let _ = writeln!(
                s,
                "command {} = {} (ratio {}, key pattern {})",
                i + 1,
                c.text,
                c.ratio,
                c.key_pattern.letter()
            );
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    #[command(name = "kv")]
    struct Cli {
        #[command(flatten)]
        kv: KvArgs,
    }

    fn args(line: &str) -> Vec<String> {
        std::iter::once("kv".to_string())
            .chain(line.split_whitespace().map(str::to_string))
            .collect()
    }

    fn parse(line: &str) -> Result<KvConfig, String> {
        parse_argv(&args(line))
    }

    fn parse_argv(argv: &[String]) -> Result<KvConfig, String> {
        reject_unsupported(&argv[1..]).map_err(|e| e.to_string())?;
        let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
        KvConfig::from_args_with_entropy(&cli.kv, 0xDEAD_BEEF).map_err(|e| e.to_string())
    }

    fn argv_err(argv: &[&str]) -> String {
        let argv: Vec<String> = std::iter::once("kv")
            .chain(argv.iter().copied())
            .map(str::to_string)
            .collect();
        parse_argv(&argv).expect_err("should fail")
    }

    fn err(line: &str) -> String {
        parse(line).expect_err(line)
    }

    #[test]
    fn clap_definition_is_valid() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults_are_memtiers() {
        let c = parse("").unwrap();
        assert_eq!(c.server.as_deref(), Some("localhost"));
        assert_eq!(c.port, 6379);
        assert_eq!(c.protocol, Protocol::Redis);
        assert_eq!(
            (c.clients, c.threads, c.pipeline, c.run_count),
            (50, 4, 1, 1)
        );
        assert_eq!(c.requests, Some(Requests::Count(10_000)));
        assert_eq!(c.test_time, None);
        assert_eq!(c.ratio, Ratio { sets: 1, gets: 10 });
        assert_eq!(c.data_size, DataSize::Fixed(32));
        assert_eq!(c.keys.prefix, "memtier-");
        assert_eq!((c.keys.min, c.keys.max), (0, 10_000_000));
        assert_eq!(
            (c.set_pattern, c.get_pattern),
            (KeyPattern::Random, KeyPattern::Random)
        );
        assert_eq!(c.keys.zipf_exp, 1.0);
        assert_eq!(c.print_percentiles, [50.0, 99.0, 99.9]);
        assert_eq!(c.seed, 0);
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn memtier_readme_gaussian_example() {
        let c = parse(
            "-s 127.0.0.1 -p 6379 --ratio=1:1 --key-pattern=G:G --key-stddev=5 --pipeline=11 -c 20 -t 1 \
             --distinct-client-seed --randomize --test-time=10 --run-count=1 --out-file=x.txt",
        )
        .unwrap();
        assert_eq!(c.server.as_deref(), Some("127.0.0.1"));
        assert_eq!(c.ratio, Ratio { sets: 1, gets: 1 });
        assert_eq!(
            (c.set_pattern, c.get_pattern),
            (KeyPattern::Gaussian, KeyPattern::Gaussian)
        );
        assert_eq!(c.keys.stddev, Some(5.0));
        assert_eq!((c.pipeline, c.clients, c.threads), (11, 20, 1));
        assert!(c.distinct_client_seed && c.randomize);
        assert_eq!(c.seed, 0xDEAD_BEEF);
        assert_eq!(c.test_time, Some(Duration::from_secs(10)));
        assert_eq!(c.requests, None);
        assert_eq!(c.out_file, Some(PathBuf::from("x.txt")));
    }

    #[test]
    fn seed_populate_and_gaussian_commands() {
        // ../shared/seeds/002: populate.
        let c = parse("-s localhost -p 6379 --hide-histogram --key-maximum=1000 -n allkeys -d 500 --key-pattern=P:P --ratio=1:0")
            .unwrap();
        assert!(c.hide_histogram && c.parallel());
        assert_eq!(c.data_size, DataSize::Fixed(500));
        assert_eq!(c.requests, Some(Requests::AllKeys));
        // 200 connections over keys 0..=1000 (1001 keys): every key exactly once in total.
        let total: u64 = (0..c.total_connections())
            .map(|i| c.requests_for(i).unwrap())
            .sum();
        assert_eq!(total, 1001);
        let c = parse("--key-minimum=27250000 --key-maximum=47750000 -n allkeys --key-pattern=P:P --ratio=0:1").unwrap();
        assert_eq!(c.ratio, Ratio { sets: 0, gets: 1 });
        // Test run.
        let c = parse(
            "--pipeline=24 -c 20 -t 1 -d 500 --key-maximum=150000000 --key-pattern=G:G --key-stddev=10250000 \
             --ratio=1:1 --distinct-client-seed --randomize --test-time=600 --run-count=1 --out-file=test.out",
        )
        .unwrap();
        assert_eq!(c.keys.effective_stddev(), 10_250_000.0);
        assert_eq!(c.keys.effective_median(), 75_000_000.5);
    }

    #[test]
    fn memtier_readme_rate_limited_and_command_examples() {
        let c = parse("--ratio=1:0 --test-time=60 --rate-limiting=100 -t 2 -c 50 --key-pattern=P:P --key-maximum 1000000")
            .unwrap();
        assert_eq!(c.rate_limiting, Some(100));
        let argv: Vec<String> = [
            "kv",
            "--command=SET foo __data__",
            "--command=SET bar __data__",
            "--command-ratio=3",
            "--command",
            "GET foo",
            "--command-key-pattern=S",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        reject_unsupported(&argv[1..]).unwrap();
        let cli = Cli::try_parse_from(&argv).unwrap();
        let c = KvConfig::from_args_with_entropy(&cli.kv, 0).unwrap();
        let summary: Vec<(&str, u32, char)> = c
            .commands
            .iter()
            .map(|c| (c.name.as_str(), c.ratio, c.key_pattern.letter()))
            .collect();
        assert_eq!(summary, [("SET", 1, 'R'), ("SET", 3, 'R'), ("GET", 1, 'S')]);
    }

    #[test]
    fn host_alias_uri_and_unix_socket() {
        let c = parse("-h 10.0.0.5 -p 7000").unwrap();
        assert_eq!((c.server.as_deref(), c.port), (Some("10.0.0.5"), 7000));
        let c = parse("-u redis://bob:pw@db.example:6380/3").unwrap();
        assert_eq!((c.server.as_deref(), c.port), (Some("db.example"), 6380));
        assert_eq!(
            (c.authenticate.as_deref(), c.select_db),
            (Some("bob:pw"), 3)
        );
        let c = parse("-p 1 -u redis://h").unwrap();
        assert_eq!(c.port, 1);
        assert_eq!(
            c.warnings,
            ["both --uri and --port given; the URI takes precedence"]
        );
        // One URL parser with --target: IPv6 in brackets, Unix sockets, bad ports.
        let c = parse("-u redis://[::1]:7000/2").unwrap();
        assert_eq!((c.server.as_deref(), c.port), (Some("::1"), 7000));
        assert_eq!(c.select_db, 2);
        let c = parse("-u unix:///tmp/r.sock").unwrap();
        assert_eq!(
            (c.server, c.unix_socket),
            (None, Some(PathBuf::from("/tmp/r.sock")))
        );
        assert_eq!(
            err("-u redis://h:0"),
            "invalid --uri \"redis://h:0\": invalid port \"0\"; use \
             redis://[USER:PASSWORD@]HOST[:PORT][/DB] or redis+unix:///PATH"
        );
        let c = parse("-S /tmp/r.sock").unwrap();
        assert_eq!(
            (c.server, c.unix_socket),
            (None, Some(PathBuf::from("/tmp/r.sock")))
        );
        assert_eq!(
            err("-S /tmp/r.sock -p 6379"),
            "-S /tmp/r.sock with -s/-p: a Unix socket and TCP cannot be used together (memtier): drop -s/-p or -S"
        );
    }

    #[test]
    fn unsupported_memtier_options_fail_with_one_line() {
        assert_eq!(
            err("--tls --cert c.pem"),
            "memtier option --tls is not supported by edgebench kv (TLS is not implemented; use a plain TCP port or -S, or put stunnel in front)"
        );
        assert!(err("-D").starts_with("memtier option -D is not supported"));
        assert!(err("-R6").starts_with("memtier option -6 is not supported"));
        assert!(err("--data-offset=4").starts_with("memtier option --data-offset is not supported"));
        assert!(err("--wait-ratio 1:1").starts_with("memtier option --wait-ratio is not supported"));
        assert_eq!(
            err("-P memcache_text"),
            "memtier option --protocol memcache_text is not supported by edgebench kv (edgebench kv speaks the Redis protocol only: use redis, resp2 or resp3)"
        );
        assert!(
            err("-u rediss://h").starts_with("memtier option --uri rediss://h is not supported")
        );
        // Values are not options: a key prefix that looks like a flag, a command mentioning --tls.
        assert!(reject_unsupported(&["--key-prefix".into(), "--tls".into()]).is_ok());
        assert!(
            reject_unsupported(&["-s".into(), "-D".into(), "--command=GET --tls".into()]).is_ok()
        );
        assert!(
            reject_unsupported(&["-c".into(), "5".into(), "--".into(), "--tls".into()]).is_ok()
        );
    }

    #[test]
    fn bad_values_name_the_flag_and_the_fix() {
        assert_eq!(
            err("--key-minimum 10 --key-maximum 5"),
            "--key-minimum 10 with --key-maximum 5: key-minimum must not exceed key-maximum: swap or widen them"
        );
        assert_eq!(
            err("--ratio 1:x"),
            "invalid --ratio \"1:x\": ratio must be SETS:GETS with whole numbers, e.g. 1:10"
        );
        assert_eq!(
            err("--ratio 0:0"),
            "invalid --ratio \"0:0\": 0:0 sends nothing; give e.g. 1:0 or 1:10"
        );
        assert_eq!(
            err("-n 5 --test-time 10"),
            "--requests 5 with --test-time 10: they are mutually exclusive (memtier): keep one"
        );
        assert!(err("-n allkeys --test-time 10").contains("mutually exclusive"));
        assert_eq!(
            err("--test-time 18446744073709551615"),
            "invalid --test-time \"18446744073709551615\": at most 315360000 seconds (ten years)"
        );
        assert!(err("--warmup 999999999h --test-time 10").starts_with("invalid --warmup"));
        assert_eq!(
            err("-c 0"),
            "invalid --clients \"0\": clients must be greater than zero"
        );
        assert_eq!(
            err("-p 70000"),
            "invalid --port \"70000\": a port must be a number in 1-65535"
        );
        assert_eq!(
            err("--key-pattern P:R"),
            "invalid --key-pattern \"P:R\": parallel key-pattern must be configured for both SET and GET (P:P)"
        );
        assert!(err("--key-pattern X:R").contains("each one of S, R, G, Z, P"));
        assert_eq!(
            err("--key-stddev 5"),
            "--key-stddev/--key-median without a G key pattern: key-stddev and key-median are only allowed together with key-pattern G (memtier)"
        );
        assert!(
            err("--key-pattern G:G --key-median 20 --key-maximum 10").contains("strictly between")
        );
        assert!(err("--key-zipf-exp 5").contains("within (0, 5)"));
        assert!(err("-d 10 --data-size-range 1-5").contains("data-size cannot be used with"));
        assert!(err("--data-size-list 10:0,20:0").contains("at least one weight"));
        assert!(err("--data-size-pattern X").contains("R or S"));
        assert!(err("--print-percentiles 50,101").contains("[0.0-100.0]"));
        assert!(err("--rate 100 --rate-limiting 5").contains("keep one"));
        assert!(err("--warmup 10s --test-time 10").contains("nothing to measure"));
        assert!(err("--warmup soon").starts_with("invalid --warmup \"soon\": invalid duration"));
        assert!(err("--key-pattern P:P -c 50 -t 4 --key-maximum 99")
            .contains("at least one key of its own"));
        assert!(
            err("--cluster-mode --multi-key-get 3").contains("cluster mode does not support it")
        );
        assert!(err("--command-ratio 2").contains("before any --command"));
        assert_eq!(
            argv_err(&["--command=GET __key__", "--ratio", "1:1"]),
            "--ratio 1:1 with --command: with arbitrary commands the mix is set per command with --command-ratio (memtier)"
        );
        assert!(argv_err(&["--command=GET __key__", "--key-pattern=R:R"])
            .contains("--command-key-pattern"));
        let e = argv_err(&[
            "--command=GET __key__",
            "--command-key-pattern=P",
            "--command=SET __key__ v",
            "--command-key-pattern=R",
        ]);
        assert!(e.contains("all commands"), "{e}");
        assert!(
            argv_err(&["--cluster-mode", "--command=MSET __key__ a __key__ b"])
                .contains("single-key commands")
        );
        assert_eq!(
            argv_err(&["--command=SET \"a"]),
            "invalid --command \"SET \\\"a\": unterminated \" quote"
        );
    }

    #[test]
    fn ranges_and_lists_parse_like_memtier() {
        let c =
            parse("--data-size-range 100-10 --data-size-pattern S --expiry-range 30-5").unwrap();
        assert_eq!(
            c.data_size,
            DataSize::Range {
                min: 10,
                max: 100,
                pattern: SizePattern::Sequential
            }
        );
        assert_eq!(c.expiry, Some(ExpiryRange { min: 5, max: 30 }));
        let c = parse("--data-size-list 32:3,1024:1").unwrap();
        assert_eq!(
            c.data_size,
            DataSize::List(vec![
                SizeWeight {
                    size: 32,
                    weight: 3
                },
                SizeWeight {
                    size: 1024,
                    weight: 1
                }
            ])
        );
        assert_eq!(c.data_size.largest(), 1024);
    }

    #[test]
    fn last_value_wins_like_getopt() {
        let c = parse("-c 3 -c 7").unwrap();
        assert_eq!(c.clients, 7);
    }

    #[test]
    fn seeds_follow_memtier_client_setup() {
        let same = parse("").unwrap();
        assert_eq!(same.connection_seed(0), same.connection_seed(5));
        let distinct = parse("--distinct-client-seed").unwrap();
        assert_ne!(distinct.connection_seed(0), distinct.connection_seed(5));
        assert_eq!(parse("--seed 42 --randomize").unwrap().seed, 42);
    }

    #[test]
    fn show_config_prints_memtier_lines() {
        let c = parse("--key-pattern=G:G --key-maximum=100 -c 2 -t 1 --ratio=1:1").unwrap();
        let text = c.show_config();
        for line in [
            "server = localhost",
            "port = 6379",
            "requests = 10000",
            "clients = 2",
            "ratio = 1:1",
            "key_pattern = G:G",
            "key_stddev = 16.666667",
            "key_median = 50.500000",
            "seed = 0",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }
}

//! `edgebench kv`'s flags as clap sees them: [`KvArgs`] takes memtier_benchmark's options
//! with memtier's names, short letters and defaults, as strings; [`CommandFlags`] keeps the
//! arbitrary-command flags in command-line order. Nothing is typed or checked here: that is
//! [`super::KvConfig::from_args`]'s job.
//!
//! Invariant: every option that takes a value is also listed in `unsupported.rs`'s
//! `VALUE_LONGS`/`VALUE_SHORTS`, so the pre-clap scan skips its value.

use std::path::PathBuf;

use clap::{Arg, ArgAction, ArgMatches, Args};

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

/// `edgebench kv`'s flags alone, as a command line of their own: what `report merge` parses a
/// host's recorded command line with (kv's own clap definition, so reading results back never
/// reaches up to the whole CLI).
#[derive(Debug, clap::Parser)]
#[command(name = "kv", disable_help_flag = true)]
pub struct KvCommandLine {
    /// The flags.
    #[command(flatten)]
    pub args: KvArgs,
}

/// `edgebench kv` flags: memtier_benchmark's, with its names, short letters and defaults,
/// plus edgebench's `--target`, `--rate`, `--warmup` and `--seed`. Values stay strings here;
/// [`super::KvConfig::from_args`] types and checks them. A repeated option keeps its last value, as
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
    /// Server URI `redis[s]://[USER:PASSWORD@]HOST[:PORT][/DB]` (rediss: TLS); takes
    /// precedence over -s, -p, -a, --select-db.
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
    /// Connect over TLS (implied by -u rediss://).
    #[arg(long, help_heading = "TLS")]
    pub tls: bool,
    /// Client certificate (PEM) for servers that authenticate clients.
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub key: Option<PathBuf>,
    /// CA certificates (PEM) to verify the server with (default: the system's roots).
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub cacert: Option<PathBuf>,
    /// Accept any server certificate.
    #[arg(long = "tls-skip-verify", help_heading = "TLS")]
    pub tls_skip_verify: bool,
    /// Server name to ask for in the handshake (and to check the certificate against).
    #[arg(long, value_name = "NAME", help_heading = "TLS")]
    pub sni: Option<String>,
    /// TLS versions to offer: TLSv1.2, TLSv1.3, comma-separated (default: both).
    #[arg(long = "tls-protocols", value_name = "PROTOCOLS", help_heading = "TLS")]
    pub tls_protocols: Option<String>,
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
    /// redis-cluster, mini-redis, or a URL); without it, -s/-p/-S/-u name the server as in memtier.
    #[arg(long, value_name = "T", help_heading = "Connection")]
    pub target: Option<String>,
    /// edgebench: primaries of a spawned --target redis-cluster (default: 3).
    #[arg(long = "cluster-shards", value_name = "N", help_heading = "Connection")]
    pub cluster_shards: Option<String>,
    /// edgebench: replicas of each primary of a spawned --target redis-cluster (default: 1).
    #[arg(
        long = "cluster-replicas",
        value_name = "R",
        help_heading = "Connection"
    )]
    pub cluster_replicas: Option<String>,

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

    /// SETS:WAITS: a WAIT request after every SETS sets, WAITS at a time (default: no WAIT,
    /// 1:0); not in cluster mode.
    #[arg(long = "wait-ratio", value_name = "SETS:WAITS", help_heading = "WAIT")]
    pub wait_ratio: Option<String>,
    /// Each --wait-ratio WAIT waits for a random number of replicas in MIN-MAX (default:
    /// 0-0).
    #[arg(long = "num-slaves", value_name = "MIN-MAX", help_heading = "WAIT")]
    pub num_slaves: Option<String>,
    /// Each --wait-ratio WAIT's timeout in ms, normal around the middle of MIN-MAX (default:
    /// 0-0, no timeout).
    #[arg(long = "wait-timeout", value_name = "MIN-MAX", help_heading = "WAIT")]
    pub wait_timeout: Option<String>,
    /// edgebench: follow every write (SET, or a --command that writes) with WAIT N 0 on its
    /// connection (in cluster mode: on the primary it went to); the write's latency includes
    /// it. N from 1 to 100; a server with fewer than N replicas is refused.
    #[arg(long, value_name = "N", help_heading = "WAIT")]
    pub wait: Option<String>,

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

    /// edgebench: the id this run shares with the other load hosts' runs, kept in
    /// results.json so `edgebench report merge` can check it (docs/multihost.md).
    #[arg(
        long = "run-id",
        value_name = "ID",
        help_heading = "Several load hosts"
    )]
    pub run_id: Option<String>,
    /// edgebench: set up (target, first connection), then wait until TIME (RFC 3339, e.g.
    /// 2026-12-03T17:00:00Z, or +SECONDS) before the load starts; at most 24 h ahead.
    #[arg(
        long = "start-at",
        value_name = "TIME",
        help_heading = "Several load hosts"
    )]
    pub start_at: Option<String>,
}

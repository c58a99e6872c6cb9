//! Stage one of the command line: clap turns arguments into strings and flags, nothing more.
//! Stage two ([`crate::config`]) turns them into typed configuration and names the flag in
//! every error.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

const COREDATA_EXAMPLES: &str = "\
Examples:
  edgebench coredata
      The ten EdgeX core-data benchmarks on the in-process engine (directly, through
      redis-rs, over TCP and a Unix socket) and on private redis-servers (TCP, Unix socket);
      print the benchtomd table; write every format to results/.
  edgebench coredata --target redis-uds --bench 'Count|ById' --benchtime 2s --count 5
      Only the count and by-id benchmarks, over a Unix socket, 2 s rounds, 5 repetitions.
  edgebench coredata --target prod=redis://10.0.0.5:6379,local=redis+unix:///run/redis.sock
      Your own servers, columns named 'prod' and 'local' (the benchmarks delete event*
      and reading* keys there: use a database you can spare).
  edgebench coredata --benchtime 100x --count 5 --format go > new.txt; benchstat old.txt new.txt
      Exactly 100 iterations per benchmark, 5 times; compare Go text with benchstat.";

const SERVICE_EXAMPLES: &str = "\
Examples:
  edgebench coredata-service
      The in-process engine (EdgeX 3.1's Redis layout) behind http://127.0.0.1:59880/api/v3.
  edgebench coredata-service --store pg-uds --listen none --unixsocket /tmp/core-data.sock
      PostgreSQL in EdgeX 4.0's schema (a private database, dropped on exit), on a Unix
      socket only: curl --unix-socket /tmp/core-data.sock http://x/api/v3/event/count
  edgebench coredata-service --store redis://127.0.0.1:6379 --persist false
  edgebench coredata-service --store pg-uds --bus mqtt://127.0.0.1:1883
      Also persist what device services publish on the MQTT bus (EdgeX 4.0's path).
      Answer every POST with 201 and store nothing (EdgeX's Writable.PersistData=false).";

const BENCHTOMD_EXAMPLES: &str = "\
Examples:
  go test -bench . -benchmem | tee results.txt; edgebench report benchtomd results.txt
  edgebench report benchtomd - < results.txt";

const COMPARE_EXAMPLES: &str = "\
Examples:
  edgebench coredata --target embedded --count 5 --out before
  edgebench coredata --target embedded --count 5 --out after
  edgebench report compare before after
      Each benchmark's median before and after, the change, and whether it is significant
      (Mann-Whitney U test over the 5 repetitions, p <= 0.05; ~ when not), as benchstat.
  edgebench report compare old.txt new.txt
      Two go test -bench -count N texts (or a text and a results directory).";

/// edgebench: what does it cost to keep your edge/IoT data in Redis over TCP, over a Unix
/// socket, in-process, or in a document store, for your workload?
#[derive(Debug, Parser)]
#[command(name = "edgebench", version, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the EdgeX core-data benchmarks (the 2018 EdgeX/Redis PoC) against each target.
    #[command(after_help = COREDATA_EXAMPLES)]
    Coredata(CoreDataArgs),
    /// Serve the embedded engine over RESP (TCP and/or a Unix socket) until Ctrl-C or
    /// SIGTERM; redis-cli, redis-benchmark, memtier and any Redis client can talk to it.
    #[command(after_help = SERVE_EXAMPLES)]
    Serve(ServeArgs),
    /// Serve EdgeX's core-data REST API (/api/v3, as EdgeX 3.x/4.x) in front of a store, on
    /// TCP and/or a Unix socket, until Ctrl-C or SIGTERM (in-flight requests finish).
    #[command(name = "coredata-service", after_help = SERVICE_EXAMPLES)]
    CoredataService(CoreDataServiceArgs),
    /// A device fleet posting EdgeX events at a fixed rate, open loop, against each target:
    /// does the store keep up? Latency is measured from each event's intended send time
    /// (coordinated omission corrected) and from its actual send. Deletes every event in the
    /// targets' stores first.
    #[command(after_help = FLEET_EXAMPLES)]
    Fleet(Box<FleetArgs>),
    /// A memtier_benchmark-compatible key-value load generator: take a memtier command line,
    /// swap the binary name. Latency runs from the moment a request's batch is written to
    /// the moment its reply has been read in full (see docs/kv.md).
    #[command(disable_help_flag = true, after_help = KV_EXAMPLES)]
    Kv(Box<crate::kv::KvArgs>),
    /// PadoGrid perf_test workflows: test_group, create_csv, clean_results,
    /// create_group_config, with PadoGrid's own flags (-run, -prop FILE, -list, -delete, -all)
    /// and edgebench's --target T.
    #[command(after_help = PERF_EXAMPLES)]
    Perf(PerfArgs),
    /// YCSB's core workloads A-F against each target, with YCSB's own flags (-P FILE,
    /// -p NAME=VALUE, -threads N, -target OPS, -s, -db NAME) and edgebench's --target T;
    /// YCSB's output per target, and a table of workloads x targets.
    #[command(after_help = YCSB_EXAMPLES, disable_help_flag = true)]
    Ycsb(YcsbCliArgs),
    /// Turn results into tables.
    #[command(subcommand)]
    Report(ReportCommand),
}

const PERF_EXAMPLES: &str = "\
Examples:
  edgebench perf test_group -prop etc/group.properties
      Print the configuration (as PadoGrid does without -run).
  edgebench perf test_group -run -prop etc/group-put.properties --target redis-tcp
      Run the groups against a private redis-server; results in
      results/perf/perf_test_redisdb_tcp/ (each target is a PadoGrid app).
  edgebench perf test_ingestion -run --target embedded
  edgebench perf test_tx -run
      PadoGrid's PBM ingestion and (atomic) transactions.
  edgebench perf test_group -db -run -prop etc/group-factory-er.properties --db URL
      Upsert the Northwind factories into PostgreSQL or MariaDB/MySQL.
  edgebench perf create_csv -all
      results/perf/results-group-all.csv (a row per group, run and target) and
      results-group-all.md (the targets compared).";

const YCSB_EXAMPLES: &str = "\
Examples:
  edgebench ycsb load run -P etc/ycsb/workloada --target embedded,redis-uds
      YCSB's load and workload A on the in-process engine and a private redis-server.
  edgebench ycsb suite -p recordcount=100000 -p operationcount=100000 -threads 4
      YCSB's recommended sequence (load, A, B, C, F, D; reload; E) on every target.
  edgebench ycsb run -P etc/ycsb/workloadc -target 100000 -p measurement.interval=both
      Throttled to 100,000 ops/s: latency also from each operation's intended start.
  edgebench ycsb --help
      Every flag.";

/// `edgebench ycsb STEP… [YCSB flags]`: YCSB's single-dash flags, taken as they come and
/// checked by `ycsb::args`.
#[derive(Debug, Args)]
pub struct YcsbCliArgs {
    /// load, run, `load run`, or suite, then YCSB's flags (-P, -p, -threads, -target, -s, -l,
    /// -db) and edgebench's (--target, --ycsb-redis-layout, --out, --run-id); --help for all.
    #[arg(
        value_name = "STEP AND FLAGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub words: Vec<String>,
}

/// `edgebench perf TOOL [PadoGrid flags]`: the flags are PadoGrid's single-dash words, so
/// they are taken as they come and checked by the tool.
#[derive(Debug, Args)]
pub struct PerfArgs {
    /// test_group, test_ingestion, test_tx, create_csv, clean_results or create_group_config.
    #[arg(value_name = "TOOL")]
    pub tool: String,
    /// The tool's flags: -run, -list, -delete, -prop FILE, -all, -?, --target T, -db,
    /// --db URL, --db-prop FILE.
    #[arg(
        value_name = "FLAGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub flags: Vec<String>,
}

const KV_EXAMPLES: &str = "\
Examples:
  edgebench kv --target embedded -t 1 -c 1 --pipeline 16 -n 1000000
      The in-process engine, no socket: one thread, one connection, 16 requests in flight.
  edgebench kv -s 127.0.0.1 -p 6379 --ratio=1:1 -d 500 -c 50 -t 1 --test-time=10
      A memtier_benchmark command line, unchanged but for the binary name.
  edgebench kv --target redis-uds --key-pattern=P:P --ratio=1:0 -n allkeys -d 500 --key-maximum=100000
      Populate a private redis-server over its Unix socket with every key exactly once.";

const SERVE_EXAMPLES: &str = "\
Examples:
  edgebench serve --port 7000
  edgebench serve --port 0 --unixsocket /tmp/edgebench.sock
  edgebench serve --tls-port 6380 --tls-cert-file server.crt --tls-key-file server.key --tls-ca-cert-file ca.crt
  redis-benchmark -p 7000 -t set,get -n 100000 -P 16";

/// `edgebench serve` flags, named as redis-server names them.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// TCP port; 0 means no TCP listener.
    #[arg(long, value_name = "PORT", default_value = "6379")]
    pub port: String,

    /// Address to bind the TCP port to.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub bind: String,

    /// Also (or only, with --port 0) listen on this Unix socket.
    #[arg(long, value_name = "PATH")]
    pub unixsocket: Option<PathBuf>,

    /// Also (or only, with --port 0) listen on this TCP port for clients that speak TLS
    /// (redis-server's tls-port); needs --tls-cert-file and --tls-key-file.
    #[arg(long, value_name = "PORT")]
    pub tls_port: Option<String>,

    /// The TLS port's certificate chain (PEM).
    #[arg(long, value_name = "FILE")]
    pub tls_cert_file: Option<PathBuf>,

    /// The private key of --tls-cert-file (PEM).
    #[arg(long, value_name = "FILE")]
    pub tls_key_file: Option<PathBuf>,

    /// The CA (PEM) that signs the certificates clients show (--tls-auth-clients).
    #[arg(long, value_name = "FILE")]
    pub tls_ca_cert_file: Option<PathBuf>,

    /// yes (the default, as redis-server): a client must show a certificate the CA signed;
    /// optional: one without a certificate is let in; no: none is asked for.
    #[arg(long, value_name = "yes|no|optional")]
    pub tls_auth_clients: Option<String>,

    /// The TLS versions offered, as redis.conf: "TLSv1.2 TLSv1.3" (the default; rustls
    /// speaks no older one).
    #[arg(long, value_name = "LIST")]
    pub tls_protocols: Option<String>,

    /// Require AUTH with this password.
    #[arg(long, value_name = "PW")]
    pub requirepass: Option<String>,

    /// Load ACL users from this file (`user <name> <rules...>` lines, as ACL SAVE writes);
    /// ACL LOAD and ACL SAVE use it.
    #[arg(long, value_name = "FILE")]
    pub aclfile: Option<PathBuf>,

    /// Define an ACL user as redis.conf's `user` directive: "name rule rule..." (for
    /// example "alice on >secret ~cache:* +@read"); repeatable.
    #[arg(long = "user", value_name = "RULES")]
    pub users: Vec<String>,

    /// Connections served at once; more are refused with redis-server's error.
    #[arg(long, value_name = "N", default_value = "10000")]
    pub maxclients: String,

    /// The longest bulk string a request may carry, in bytes (suffixes kb, mb, gb as in
    /// redis.conf).
    #[arg(long, value_name = "BYTES", default_value = "512mb")]
    pub proto_max_bulk_len: String,

    /// Threads that run connections: event loops with --io loop (default: one, as
    /// redis-server runs its commands on one thread), and tokio workers (default: one per
    /// core) for --io tasks and for connections that wait (blocked, subscribed, scripts).
    #[arg(long, value_name = "N")]
    pub threads: Option<String>,

    /// How connections are served: loop (readiness event loops that serve every ready
    /// connection in one pass, as redis-server does) or tasks (one tokio task each).
    #[arg(long, value_enum, default_value_t = ServeIo::Loop)]
    pub io: ServeIo,

    /// With --io loop: after a pass that served requests, poll for more without sleeping
    /// for this many microseconds (0 to 10000, default 50) before the loop blocks in
    /// epoll_wait; trades CPU for the wake-up of a loop that sleeps between requests (0:
    /// sleep at once, as redis-server does).
    #[arg(long, value_name = "US")]
    pub busy_poll_us: Option<String>,

    /// Where the RDB file and the append-only directory live (redis-server's `dir`;
    /// default: the working directory). Must exist.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// The RDB file's name in --dir (default dump.rdb): loaded on start when --appendonly
    /// is no, written by SAVE, BGSAVE, the --save schedule and SHUTDOWN.
    #[arg(long, value_name = "NAME")]
    pub dbfilename: Option<String>,

    /// yes: log every write to the append-only directory (--dir/appendonlydir, in
    /// redis-server 7.0's layout) and replay it on start. Default no.
    #[arg(long, value_name = "yes|no")]
    pub appendonly: Option<String>,

    /// The append-only files' base name (default appendonly.aof).
    #[arg(long, value_name = "NAME")]
    pub appendfilename: Option<String>,

    /// When the append-only file is synced: always (before each reply), everysec (default)
    /// or no (left to the OS).
    #[arg(long, value_name = "POLICY")]
    pub appendfsync: Option<String>,

    /// RDB snapshot points, as redis.conf: "SECONDS CHANGES [SECONDS CHANGES ...]", e.g.
    /// "3600 1 300 100"; "" for none (the default: unlike redis-server, serve persists
    /// nothing unless asked).
    #[arg(long, value_name = "POINTS")]
    pub save: Option<String>,
}

/// `edgebench serve --io`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ServeIo {
    /// One tokio task per connection.
    Tasks,
    /// Readiness event loops, as redis-server.
    Loop,
}

/// `edgebench coredata` flags.
#[derive(Debug, Args)]
pub struct CoreDataArgs {
    /// Where to run: embedded (the in-process engine through its redis-rs connection),
    /// embedded-direct (its typed API), embedded-tcp, embedded-uds (edgebench's own RESP
    /// server, in-process), redis-tcp, redis-uds (each spawns a private redis-server from
    /// PATH), redis-cluster (spawns a private Redis Cluster: --cluster-shards,
    /// --cluster-replicas), redis-cluster://HOST:PORT[,HOST:PORT…], redis://HOST:PORT,
    /// redis+unix:///PATH; the document stores sqlite (a temp
    /// file), sqlite:///PATH, sqlite::memory:, pg-tcp, pg-uds (PostgreSQL from the PG*
    /// variables), postgres://USER@HOST:PORT/DB, postgresql:///DB?host=/SOCKET/DIR,
    /// mongodb://HOST:PORT (each run makes a private database and drops it); a running
    /// core-data service, http://HOST:PORT or http+unix:///PATH (the benchmarks delete data
    /// there); or NAME=any of these to name the column. Repeatable; takes comma-separated lists. Default: every
    /// embedded target, redis-tcp and redis-uds when redis-server is on PATH, sqlite, and
    /// pg-tcp, pg-uds when PostgreSQL answers. Spawned Redis and engine targets take options after ?,
    /// joined with &: replicas=N, appendonly=yes|no, appendfsync=always|everysec|no,
    /// save=SECONDS:CHANGES[+SECONDS:CHANGES], wait=N (e.g. redis-tcp?replicas=1&wait=1).
    #[arg(short = 't', long = "target", value_name = "T")]
    pub targets: Vec<String>,

    /// Primaries of a spawned redis-cluster target (default 3, at most 32).
    #[arg(long = "cluster-shards", value_name = "N")]
    pub cluster_shards: Option<u16>,

    /// Replicas of each primary of a spawned redis-cluster target (default 1, at most 4).
    #[arg(long = "cluster-replicas", value_name = "R")]
    pub cluster_replicas: Option<u16>,

    /// Follow every write with WAIT N 0 (synchronous replication to N replicas), in the same
    /// round trip, on every target without its own ?wait=; a target with fewer than N replicas
    /// is refused. N from 1 to 100.
    #[arg(long, value_name = "N")]
    pub wait: Option<String>,

    /// Run only benchmarks matching this regular expression, as go test -bench does;
    /// TARGET/BENCH matches the column and the benchmark separately.
    #[arg(long, value_name = "REGEX")]
    pub bench: Option<String>,

    /// How long each benchmark's measured round lasts (1s, 500ms, 1m30s), or Nx for exactly
    /// N iterations.
    #[arg(long, value_name = "D|Nx", default_value = "1s")]
    pub benchtime: String,

    /// Run each benchmark N times; tables show the median, percentiles the spread.
    #[arg(long, value_name = "N", default_value = "1")]
    pub count: String,

    /// What to print on stdout at the end, comma-separated: md (benchtomd table), go (Go
    /// benchmark text for benchstat), pct (percentile table), csv, json. Every format is
    /// written to the results directory regardless.
    #[arg(long, value_name = "LIST", default_value = "md")]
    pub format: String,

    /// Write the results files into DIR instead of results/<timestamp>-coredata/.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Add a second markdown table: each column's time as a ratio to this column's.
    #[arg(long, value_name = "COLUMN")]
    pub baseline: Option<String>,

    /// Run each benchmark with N concurrent clients, each on its own connection, sharing every
    /// round's iterations (Go's b.RunParallel with go test -cpu N); a comma-separated list
    /// runs each level, a column per level (NAME-N; -N in the Go text). N from 1 to 256.
    #[arg(long, value_name = "N[,N...]")]
    pub parallel: Option<String>,

    /// How each store lays out core data, comma-separated; each target runs once per layout
    /// it has (column suffixes _EdgeX3, _EdgeX4, ...): 2018 (the PoC's layout of each store;
    /// MongoDB with readings inside their event), 2018-referenced (MongoDB: readings in their
    /// own collection), 2018-exact (MongoDB: and one query per reading, as the 2018 client),
    /// edgex3 (EdgeX 3.1's Redis layout: Redis targets and the engine), edgex4 (EdgeX 4.0's
    /// PostgreSQL schema: PostgreSQL, and SQLite ported; MongoDB: EdgeX 4.0's records as
    /// documents), edgex (both). Default: 2018 (and
    /// without --target, edgex4 too on the PostgreSQL targets).
    #[arg(long, value_name = "LIST")]
    pub layout: Option<String>,

    /// How the benchmarks reach each store, comma-separated: direct (store calls), http-tcp,
    /// http-uds (edgebench's core-data REST service, started in this process in front of the
    /// store in its EdgeX layout; columns +HTTP_TCP, +HTTP_UDS), http (both).
    #[arg(long, value_name = "LIST", default_value = "direct")]
    pub via: String,

    /// The id this run shares with the other load hosts' runs, kept in results.json so
    /// `edgebench report merge` can check it (docs/multihost.md).
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,

    /// Start the first target, then wait until TIME (RFC 3339, e.g. 2026-12-03T17:00:00Z,
    /// or +SECONDS) before the first benchmark; at most 24 h ahead.
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,

    /// Deprecated: --layout 2018 (embedded) or 2018-referenced (referenced).
    #[arg(long, value_name = "LAYOUT", hide = true)]
    pub mongo_layout: Option<String>,

    /// Deprecated: --layout 2018-exact (2018) or 2018-referenced (modern).
    #[arg(long, value_name = "F", hide = true)]
    pub fidelity: Option<String>,
}

/// `edgebench coredata-service` flags.
#[derive(Debug, Args)]
pub struct CoreDataServiceArgs {
    /// The store behind the service, as a --target item, kept in its EdgeX layout: embedded
    /// (the in-process engine), redis-tcp, redis-uds (a private redis-server), redis://…,
    /// redis+unix:///…, embedded-tcp, embedded-uds (EdgeX 3.1's Redis layout); sqlite,
    /// sqlite:///PATH, sqlite::memory:, pg-tcp, pg-uds, postgres://… (EdgeX 4.0's schema);
    /// mongodb://HOST:PORT (EdgeX 4.0's records as documents). A private database is created
    /// for pg-*, postgres:// and mongodb:// and dropped on exit.
    #[arg(long, value_name = "T", default_value = "embedded")]
    pub store: String,

    /// TCP address to serve on, or none.
    #[arg(long, value_name = "HOST:PORT|none", default_value = "127.0.0.1:59880")]
    pub listen: String,

    /// Also (or only, with --listen none) serve on this Unix socket.
    #[arg(long, value_name = "PATH")]
    pub unixsocket: Option<PathBuf>,

    /// Serve --listen over HTTPS with this certificate chain (PEM), as EdgeX's secure mode
    /// puts TLS in front of core-data; clients use https://HOST:PORT. The Unix socket stays
    /// plain.
    #[arg(long, alias = "tls-cert", value_name = "FILE")]
    pub tls_cert_file: Option<PathBuf>,

    /// The private key of --tls-cert-file (PEM).
    #[arg(long, alias = "tls-key", value_name = "FILE")]
    pub tls_key_file: Option<PathBuf>,

    /// false: answer 201 to every valid event and store nothing (EdgeX's
    /// Writable.PersistData), to measure HTTP and JSON alone.
    #[arg(long, value_name = "BOOL", default_value = "true")]
    pub persist: String,

    /// The most records one list request returns, and what limit=-1 means (EdgeX's
    /// Service.MaxResultCount).
    #[arg(long, value_name = "N", default_value = "1024")]
    pub max_result_count: String,

    /// The largest event body accepted, in KB; larger ones get 413 (EdgeX's MaxEventSize);
    /// 0 for no limit.
    #[arg(long, value_name = "KB", default_value = "25000")]
    pub max_event_size: String,

    /// Also take events from the message bus, as EdgeX 3.x/4.x's core-data does: subscribe to
    /// edgex/events/device/# on each broker and persist every valid event, one at a time.
    /// mqtt://[USER:PASSWORD@]HOST:PORT, mqtts://[USER:PASSWORD@]HOST:PORT[?cacert=FILE] (TLS),
    /// mqtt+unix:///PATH (MQTT 3.1.1, EdgeX 4.0's default), redis://HOST:PORT,
    /// redis+unix:///PATH (Redis Pub/Sub, EdgeX 3.x's default), nats://HOST:PORT; embedded
    /// (the engine's Pub/Sub broker in this process, served to publishers over RESP on
    /// --bus-listen and/or --bus-unixsocket: they PUBLISH as to Redis).
    #[arg(long, value_name = "URL[,URL...]")]
    pub bus: Option<String>,

    /// With --bus embedded: the TCP address where device services reach the embedded broker
    /// (Redis Pub/Sub over RESP; port 0 picks a free one).
    #[arg(long, value_name = "HOST:PORT")]
    pub bus_listen: Option<String>,

    /// With --bus embedded: also (or only) a Unix socket for the embedded broker.
    #[arg(long, value_name = "PATH")]
    pub bus_unixsocket: Option<PathBuf>,

    /// MQTT QoS of the bus subscription: 0 (EdgeX's default) or 1.
    #[arg(long, value_name = "0|1", default_value = "0")]
    pub qos: String,

    /// How the bus subscriber handles events: edgex (EdgeX's loop, one event at a time),
    /// batch=N[,wait=T] (one store transaction per N events or per T, as edgex-go #5185
    /// proposes; acknowledged after the commit) or workers=N (N loops behind one receiver).
    #[arg(long, value_name = "MODE", default_value = "edgex")]
    pub subscriber: String,

    /// Core data's own retention: purge every DURATION, on a store connection of its own,
    /// until the service stops; 0s: off. EdgeX 4.0's default is 10m (on), EdgeX 3.1's is
    /// off (Retention.Enabled false).
    #[arg(long, value_name = "DURATION", default_value = "0s")]
    pub retention_interval: String,

    /// Which EdgeX's retention: edgex4 (4.0: each device and source the store holds, keeping
    /// --retention-min-cap events once it holds --retention-max-cap, of those older than
    /// --retention-duration) or edgex3 (3.1: the readings of the whole store, down to
    /// --retention-min-cap once at --retention-max-cap).
    #[arg(long, value_name = "edgex3|edgex4", default_value = "edgex4")]
    pub retention: String,

    /// edgex4: DefaultMaxCap, events of one device and source; -1: no threshold [default:
    /// -1]. edgex3: MaxCap, readings [default: 10000].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub retention_max_cap: Option<String>,

    /// edgex4: DefaultMinCap, events of one device and source kept; -1: none [default: 1].
    /// edgex3: MinCap, readings kept [default: 8000].
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub retention_min_cap: Option<String>,

    /// edgex4 only: DefaultDuration; only events older than this are purged (the newest
    /// --retention-min-cap of them kept); 0s: by count alone [default: 168h].
    #[arg(long, value_name = "DURATION")]
    pub retention_duration: Option<String>,
}

const FLEET_EXAMPLES: &str = "\
Examples:
  edgebench fleet
      100 devices, 1,000 events/s of 5 Int64 readings for 10 s (after 2 s of warmup) on the
      in-process engine in EdgeX 3.1's layout.
  edgebench fleet --target embedded,redis-uds,pg-uds --events-per-second 5000 --slo 10ms
  edgebench fleet --target redis-uds --via http-uds --devices 1000 --per-device-rate 2
      The same fleet through EdgeX's REST service in front of the store.
  edgebench fleet --target embedded,redis-uds --find-max --slo 10ms --duration 3s --warmup 1s
      The highest events/s each keeps up with, p99 write latency under 10 ms.
  edgebench fleet --target embedded,pg-uds --via bus --bus mqtt-tcp,mqtt-uds
      EdgeX 4.0's ingestion path: devices publish on a private Mosquitto, core-data persists.";

/// `edgebench fleet` flags. Numbers are checked and bounded by the typed config.
#[derive(Debug, Args)]
pub struct FleetArgs {
    /// Comma-separated targets, each kept in its EdgeX layout: embedded, embedded-tcp,
    /// embedded-uds, redis-tcp, redis-uds, redis://…, redis-cluster (3 primaries + 3
    /// replicas), redis-cluster://…, sqlite, pg-tcp, pg-uds, postgres://…, mongodb://…, or a
    /// running core-data service http://HOST:PORT, http+unix:///PATH.
    /// [default: embedded]
    #[arg(long = "target", short = 't', value_name = "T[,T...]")]
    pub targets: Option<String>,

    /// How the writers reach each store: direct, http-tcp, http-uds (EdgeX's REST service
    /// started in front of it, in process), http (both), or bus (published on --bus as EdgeX's
    /// device services do, persisted by edgebench's core-data subscriber in process).
    /// [default: direct]
    #[arg(long, value_name = "VIA")]
    pub via: Option<String>,

    /// With --via bus, the buses, each a column per target: mqtt-tcp, mqtt-uds (a private
    /// Mosquitto configured as EdgeX ships it), mqtt-tcp-nodelay (with set_tcp_nodelay true),
    /// mqtt-tls (Mosquitto as EdgeX's secure bus: TLS and a password), nats (a private
    /// nats-server), redis-pubsub-tcp, redis-pubsub-uds (a private redis-server), embedded
    /// (the engine's Pub/Sub in process), or a broker's URL (mqtt://[USER:PASSWORD@]…,
    /// mqtts://[USER:PASSWORD@]…[?cacert=FILE], mqtt+unix://…, nats://…, redis://…,
    /// redis+unix://…).
    #[arg(long, value_name = "BUS[,BUS...]")]
    pub bus: Option<String>,

    /// With --via bus, which release's envelope the devices publish: 3 (payload base64) or
    /// 4 (payload a JSON object).
    /// [default: 4]
    #[arg(long, value_name = "3|4")]
    pub edgex: Option<String>,

    /// With --via bus, MQTT QoS of publishes and of core-data's subscription: 0 or 1.
    /// [default: 0]
    #[arg(long, value_name = "0|1")]
    pub qos: Option<String>,

    /// With --via bus, how core-data's subscriber handles events: edgex (EdgeX's loop, one
    /// at a time), batch=N[,wait=T] (one store transaction per N events or per T, edgex-go
    /// #5185) or workers=N (N loops behind one receiver).
    /// [default: edgex]
    #[arg(long, value_name = "MODE")]
    pub subscriber: Option<String>,

    /// With --via bus, whether core-data's subscriber stores what it takes off the bus
    /// (EdgeX's Writable.PersistData): false receives, decodes and validates only, which
    /// measures the bus alone.
    /// [default: true]
    #[arg(long, value_name = "true|false")]
    pub persist: Option<String>,

    /// With --via bus, how long to wait after the writers stop for the bus to deliver what it
    /// still carries; what is not persisted then is lost.
    /// [default: 5s]
    #[arg(long, value_name = "DURATION")]
    pub drain: Option<String>,

    /// Devices in the fleet.
    /// [default: 100]
    #[arg(long, value_name = "N")]
    pub devices: Option<String>,

    /// Events per second, all devices together.
    #[arg(long, value_name = "R", conflicts_with = "per_device_rate")]
    pub events_per_second: Option<String>,

    /// Events per second of each device (instead of --events-per-second).
    #[arg(long, value_name = "R")]
    pub per_device_rate: Option<String>,

    /// Readings in each event.
    /// [default: 5]
    #[arg(long, value_name = "N")]
    pub readings_per_event: Option<String>,

    /// EdgeX value type of the readings: Int64, Float64, Bool, String, Binary, Object, ...
    /// [default: Int64]
    #[arg(long, value_name = "TYPE")]
    pub value_type: Option<String>,

    /// Bytes of each Binary value.
    /// [default: 1024]
    #[arg(long, value_name = "BYTES")]
    pub value_size: Option<String>,

    /// Media type of Binary values.
    /// [default: application/octet-stream]
    #[arg(long, value_name = "TYPE")]
    pub media_type: Option<String>,

    /// The devices' profile name.
    /// [default: fleet-profile]
    #[arg(long, value_name = "NAME")]
    pub profiles: Option<String>,

    /// Comma-separated resource names, cycled over each event's readings.
    /// [default: temperature,pressure]
    #[arg(long, value_name = "NAME[,NAME...]")]
    pub resources: Option<String>,

    /// Writer threads, each its own connection, splitting the schedule.
    /// [default: 1]
    #[arg(long, value_name = "N")]
    pub writers: Option<String>,

    /// Reader clients querying alongside the writers (latest readings of a device, readings
    /// by resource in the last 10 s, event count by device, in turn), each its own connection.
    /// [default: 0]
    #[arg(long, value_name = "N")]
    pub readers: Option<String>,

    /// Reads per second of each reader (open loop); without it each reader reads again as
    /// soon as it has its answer (closed loop).
    #[arg(long, value_name = "R")]
    pub read_rate: Option<String>,

    /// Retention by age: every --purge-interval, delete the events older than this (EdgeX's
    /// DELETE /event/age), alongside the writers.
    #[arg(long, value_name = "DURATION")]
    pub retain: Option<String>,

    /// Retention by watermark (EdgeX 3.x): when the store holds this many readings or more,
    /// delete the oldest events down to --min-cap readings. Give both.
    #[arg(long, value_name = "READINGS", requires = "min_cap")]
    pub max_cap: Option<String>,

    /// The low watermark, in readings (with --max-cap).
    #[arg(long, value_name = "READINGS", requires = "max_cap")]
    pub min_cap: Option<String>,

    /// How often retention runs (EdgeX 3.1's default: 30s).
    /// [default: 30s]
    #[arg(long, value_name = "DURATION")]
    pub purge_interval: Option<String>,

    /// Which EdgeX's retention --max-cap, --min-cap and --retain configure. edgex3: the
    /// reading watermark over the whole store (3.1's Retention.MaxCap/MinCap, readings) and
    /// the age delete. edgex4: 4.0's retention of each device and source the fleet writes
    /// (as each device's AutoEvents): --max-cap is DefaultMaxCap (events; =-1: no
    /// threshold), --min-cap DefaultMinCap (events kept; =-1: none), --retain
    /// DefaultDuration (0s: count-based); not given, EdgeX 4.0's -1, 1 and 168h.
    /// [default: edgex3]
    #[arg(long, value_name = "edgex3|edgex4")]
    pub retention: Option<String>,

    /// Follow every write with WAIT N 0 (synchronous replication to N replicas), in the same
    /// round trip, on every target without its own ?wait=; a target with fewer than N replicas
    /// is refused. N from 1 to 100.
    #[arg(long, value_name = "N")]
    pub wait: Option<String>,

    /// How long the fleet runs after the warmup (e.g. 10s, 2m).
    /// [default: 10s]
    #[arg(long, value_name = "DURATION")]
    pub duration: Option<String>,

    /// Sent first and left out of the figures.
    /// [default: 2s]
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,

    /// A target whose p99 write latency (from the intended time) is over this did not keep
    /// up (e.g. 10ms).
    #[arg(long, value_name = "DURATION")]
    pub slo: Option<String>,

    /// Search for the highest event rate each target keeps up with, p99 under --slo: run the
    /// fleet from --events-per-second, doubling while it keeps up, then bisect (to 5%).
    #[arg(long)]
    pub find_max: bool,

    /// Settings from a TOML file (keys are these flags' names, e.g. `devices = 24`; see
    /// etc/fleet.toml); a flag given here overrides the file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Results directory (default: results/<UTC timestamp>-fleet).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// The id this run shares with the other load hosts' runs, kept in fleet.json so
    /// `edgebench report merge` can check it (docs/multihost.md).
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,

    /// Scrub the store and connect, then wait until TIME (RFC 3339, e.g.
    /// 2026-12-03T17:00:00Z, or +SECONDS) before the fleet starts; at most 24 h ahead.
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,
}

const HTML_EXAMPLES: &str = "\
Examples:
  edgebench report html results/20260101-120000-coredata
      Rebuild that run's report.html.
  edgebench report html results/*-coredata --png --out compare.html
      One page comparing the runs (a bar per run and target), and each chart as a PNG.";

const MERGE_EXAMPLES: &str = "\
Examples:
  edgebench report merge results/*-kv-host1 results/*-kv-host2 results/*-kv-host3
      One result of three load hosts that ran edgebench kv with the same --run-id: counts
      and ops/sec added, percentiles from the hosts' HDR histograms added, each host kept.
  edgebench report merge host1.json host2.json --out results/merged
      kv's --json-out-file documents work too (see docs/multihost.md).";

/// `edgebench report ...`
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Merge the results of several load hosts of one run (kv, coredata, fleet or ycsb; the
    /// same --run-id) into one results directory: counts and throughputs add, percentiles come
    /// from the hosts' HDR histograms added together, and each host's figures are kept beside
    /// the total.
    #[command(after_help = MERGE_EXAMPLES)]
    Merge {
        /// Results directories of edgebench kv, coredata, fleet or ycsb, or kv's
        /// --json-out-file files.
        #[arg(value_name = "PATH", required = true, num_args = 2..)]
        paths: Vec<PathBuf>,
        /// Write the merged results into DIR [default: results/<timestamp>-merge].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Merge even when the run ids differ or are missing.
        #[arg(long)]
        force: bool,
    },
    /// Build report.html (charts, tables, the run's facts) from a results directory, or one
    /// page comparing several.
    #[command(after_help = HTML_EXAMPLES)]
    Html {
        /// Results directories: what coredata, kv, fleet or ycsb wrote, or results/perf after
        /// `perf create_csv -all`.
        #[arg(value_name = "DIR", required = true)]
        dirs: Vec<PathBuf>,
        /// Also write each chart as a PNG, into charts/ beside the page.
        #[arg(long)]
        png: bool,
        /// The page to write [default: DIR/report.html for one directory,
        /// results/<timestamp>-report/report.html for several].
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Read `go test -bench` output and print the markdown table, like benchtomd.awk.
    #[command(after_help = BENCHTOMD_EXAMPLES)]
    Benchtomd {
        /// The file to read; `-` or nothing reads stdin.
        #[arg(value_name = "FILE|-")]
        file: Option<PathBuf>,
    },
    /// Compare two runs as benchstat does: each benchmark's old and new median, the change,
    /// and whether it is significant (two-sided Mann-Whitney U test over the repetitions);
    /// two ycsb runs: each step and target's ops/s and p99, old, new and new/old.
    #[command(after_help = COMPARE_EXAMPLES)]
    Compare {
        /// The old run: a results directory of edgebench coredata (its bench.txt is read) or
        /// ycsb, or a Go benchmark text.
        #[arg(value_name = "OLD")]
        old: PathBuf,
        /// The new run, likewise.
        #[arg(value_name = "NEW")]
        new: PathBuf,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn clap_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn coredata_flags_parse_as_strings() {
        let cli = Cli::try_parse_from([
            "edgebench",
            "coredata",
            "--target",
            "redis-tcp,redis-uds",
            "-t",
            "x=redis://h:1",
            "--benchtime",
            "100x",
            "--count",
            "3",
        ])
        .unwrap();
        let Command::Coredata(a) = cli.command else {
            panic!("expected coredata")
        };
        assert_eq!(a.targets, vec!["redis-tcp,redis-uds", "x=redis://h:1"]);
        assert_eq!(a.benchtime, "100x");
        assert_eq!(a.count, "3");
        assert_eq!(a.format, "md");
    }
}

//! [`KvConfig::from_args`]: the sections typed in memtier's order (connection, run, values,
//! keys, commands), the checks between them (key patterns, cluster mode), the output flags,
//! and last the resource check ([`super::limits`]), so a run that cannot fit is refused
//! before anything is allocated.

use super::args::KvArgs;
use super::config::KvConfig;
use super::{commands, connection, keys, limits, output, parse, run, values, wait};
use crate::kv::error::KvConfigError;
use crate::runner::barrier;

impl KvConfig {
    /// Types and checks `args`. `--randomize` without `--seed` draws a fresh base seed.
    pub fn from_args(args: &KvArgs) -> Result<Self, KvConfigError> {
        Self::from_args_with_entropy(args, parse::fresh_entropy())
    }

    /// [`KvConfig::from_args`] with the `--randomize` seed given, for tests. The sections
    /// are typed in memtier's order, so with several bad flags the first section's error
    /// is the one reported.
    pub fn from_args_with_entropy(a: &KvArgs, entropy: u64) -> Result<Self, KvConfigError> {
        let cfg = Self::typed(a, entropy)?;
        limits::check(&cfg, &limits::Limits::of_this_process())?;
        Ok(cfg)
    }

    /// The configuration of a run that already happened, from its arguments (`report merge`
    /// rebuilds each load host's): typed and checked as [`KvConfig::from_args`] does, but
    /// without the resource check, which was the host's and not this machine's. The
    /// `--start-at` barrier, passed by now, must be left out of `a`.
    pub fn from_recorded_args(a: &KvArgs) -> Result<Self, KvConfigError> {
        Self::typed(a, 0)
    }

    /// Every section typed and the rules between them checked; no resource check.
    fn typed(a: &KvArgs, entropy: u64) -> Result<Self, KvConfigError> {
        let mut warnings = Vec::new();
        let conn = connection::connection(a, &mut warnings)?;
        let run = run::run_shape(a, entropy)?;
        let values = values::values(a, &mut warnings)?;
        let keys = keys::keys(a)?;
        let (commands, stats_by_line) =
            commands::commands(a, run.ratio_given, run.multi_key_get, &mut warnings)?;
        keys::check_patterns(a, &keys, &commands, run.clients, run.threads)?;
        let (wait, wait_ratio) = wait::waits(a, !commands.is_empty(), &mut warnings)?;
        // A cluster target is routed as --cluster-mode routes, and has its limits.
        let cluster_mode = a.cluster_mode || a.target.as_deref().is_some_and(is_cluster_item);
        let cluster_shape = (
            cluster_flag("--cluster-shards", a.cluster_shards.as_deref())?,
            cluster_flag("--cluster-replicas", a.cluster_replicas.as_deref())?,
        );
        if conn.tls.is_some() && a.target.is_some() {
            return Err(crate::kv::error::conflict(
                "--tls (or its options) with --target",
                "a target brings its own TLS: give rediss://HOST:PORT?cacert=FILE or \
                 redis-tcp?tls=yes as --target, or drop --target and use -s/-p/-u with --tls",
            ));
        }
        if cluster_mode && conn.tls.is_some() {
            return Err(KvConfigError::Unsupported {
                flag: "--tls with --cluster-mode".to_string(),
                why: "TLS to a Redis Cluster's nodes is not implemented; run without \
                      --cluster-mode against one primary",
            });
        }
        if cluster_mode {
            commands::check_cluster(
                conn.reconnect_interval,
                run.multi_key_get,
                conn.unix_socket.as_deref(),
                conn.select_db,
                wait_ratio.is_some(),
                &commands,
            )?;
        }
        let print_percentiles = output::print_percentiles(a)?;
        let (run_id, start_at) = barrier::flags(a.run_id.as_deref(), a.start_at.as_deref())
            .map_err(KvConfigError::MultiHost)?;
        let cfg = KvConfig {
            server: conn.server,
            port: conn.port,
            unix_socket: conn.unix_socket,
            uri: a.uri.clone(),
            protocol: conn.protocol,
            authenticate: conn.authenticate,
            select_db: conn.select_db,
            tls: conn.tls,
            cluster_mode,
            cluster_shape,
            reconnect_interval: conn.reconnect_interval,
            connection_timeout: conn.connection_timeout,
            target: a.target.clone(),
            clients: run.clients,
            threads: run.threads,
            pipeline: run.pipeline,
            requests: run.requests,
            test_time: run.test_time,
            ratio: run.ratio,
            multi_key_get: run.multi_key_get,
            rate_limiting: run.rate_limiting,
            rate: run.rate,
            warmup: run.warmup,
            distinct_client_seed: a.distinct_client_seed,
            randomize: a.randomize,
            seed: run.seed,
            run_count: run.run_count,
            data_size: values.data_size,
            random_data: a.random_data,
            expiry: values.expiry,
            keys: keys.space,
            set_pattern: keys.set_pattern,
            get_pattern: keys.get_pattern,
            wait,
            wait_ratio,
            commands: commands.into(),
            stats_by_line,
            out_file: a.out_file.clone(),
            json_out_file: a.json_out_file.clone(),
            hdr_file_prefix: a.hdr_file_prefix.clone(),
            show_config: a.show_config,
            hide_histogram: a.hide_histogram,
            print_percentiles,
            print_all_runs: a.print_all_runs,
            run_id,
            start_at,
            command_line: Vec::new(),
            warnings,
        };
        Ok(cfg)
    }
}

/// Whether a `--target` item is a Redis Cluster (spawned or by URL).
fn is_cluster_item(item: &str) -> bool {
    crate::target::parse_targets(&[item.to_string()])
        .is_ok_and(|specs| specs.iter().any(|s| s.kind.is_cluster()))
}

/// `--cluster-shards` / `--cluster-replicas`: a count (bounds are checked with the target).
fn cluster_flag(flag: &'static str, v: Option<&str>) -> Result<Option<u16>, KvConfigError> {
    v.map(|v| {
        v.parse::<u16>()
            .map_err(|_| crate::kv::error::invalid(flag, v, "give a whole number"))
    })
    .transpose()
}

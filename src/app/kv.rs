//! `edgebench kv`: memtier_benchmark's key-value load. Starts the target, runs the load `-x`
//! times (a live line on stderr once a second), prints memtier's text on stdout (or into
//! `-o FILE`), writes `--json-out-file` and `--hdr-file-prefix` files, and
//! `results/<timestamp>-kv/` (memtier.txt, results.md, results.json).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::shared::{Ending, Error, Interrupts};
use super::status::LiveLine;
use crate::kv::results::{self as report_kv, KvResults};
use crate::kv::{KvArgs, KvConfig};
use crate::runner::barrier;
use crate::store::redis::backend::place;
use crate::store::redis::kind::RedisKind;
use crate::store::redis::mini_redis;
use crate::target::{RedisReach, Target, TargetSpec};

/// `edgebench kv ARGS`: configure, run, say where the files went.
pub fn main(
    args: &KvArgs,
    interrupts: &Interrupts<'_>,
    status: &mut dyn Write,
) -> Result<Ending, Error> {
    let mut cfg = KvConfig::from_args(args).map_err(Error::usage)?;
    cfg.command_line = kv_command_line(std::env::args_os());
    let spec = target_spec(&cfg)?;
    // A target's own ?wait=N wins over --wait N, as in coredata.
    cfg.wait = spec.wait;
    if spec.kind.as_any().downcast_ref() == Some(&RedisKind::MiniRedis) {
        if let Some(e) = mini_redis_refusal(&cfg) {
            return Err(Error::Usage(e));
        }
    }
    let interrupted = interrupts.watch()?;
    // The client's own allocations are not reported; counting would cost every thread.
    crate::runner::alloc::set_counting(false);
    let outcome = run(
        &cfg,
        &spec,
        interrupted.clone(),
        &mut std::io::stdout().lock(),
        status,
    )?;
    let _ = writeln!(status, "edgebench: results in {}", outcome.dir.display());
    Ok(if interrupted.load(Ordering::Relaxed) {
        Ending::Interrupted
    } else if outcome.stopped.is_some() {
        Ending::PartlyFailed
    } else {
        Ending::Finished
    })
}

/// What the run goes to: the one `--target` item, or memtier's `-u` / `-S` / `-s -p` server
/// (column name `server`), with `--wait N` unless the item has its own `?wait=`.
fn target_spec(cfg: &KvConfig) -> Result<TargetSpec, Error> {
    let Some(item) = &cfg.target else {
        let mut spec = TargetSpec::new(
            "server",
            crate::target::TargetKind::new(RedisKind::At(
                memtier_endpoint(cfg),
                memtier_access(cfg),
            )),
        );
        spec.wait = cfg.wait;
        return Ok(spec);
    };
    let mut specs = crate::target::parse_targets(std::slice::from_ref(item))
        .map_err(|e| Error::Usage(format!("--target: {e}")))?;
    let (shards, replicas) = cfg.cluster_shape;
    crate::target::set_cluster_shape(&mut specs, shards, replicas)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let [mut spec] = <[TargetSpec; 1]>::try_from(specs).map_err(|_| {
        Error::Usage(format!(
            "--target {item:?}: edgebench kv runs against one target at a time"
        ))
    })?;
    if spec.wait > 0 && cfg.wait_ratio.is_some() {
        return Err(Error::Usage(format!(
            "--target {item:?} with --wait-ratio: wait= follows every write with WAIT {} 0, \
             --wait-ratio sends memtier's WAITs as requests of their own: drop one",
            spec.wait
        )));
    }
    if spec.wait == 0 {
        spec.wait = cfg.wait;
    }
    Ok(spec)
}

/// Starts the target. memtier's own server is not probed here: the load's first connection
/// probes it with the run's AUTH, SELECT and `--connection-timeout`, as memtier does.
fn start(cfg: &KvConfig, spec: &TargetSpec) -> anyhow::Result<Target> {
    Ok(match &cfg.target {
        None => Target::at(&spec.name, memtier_endpoint(cfg), memtier_access(cfg)),
        Some(_) => Target::start(spec)?,
    })
}

/// What `edgebench kv` did: its results directory, and whether it ended early (and why).
#[derive(Debug)]
pub struct KvOutcome {
    /// Where the files went.
    pub dir: PathBuf,
    /// Set when the run ended before its end condition (a connection failed, Ctrl-C).
    pub stopped: Option<String>,
}

/// Runs `edgebench kv`: starts the target, runs the load `-x` times (a live line on `status`
/// once a second), prints memtier's text on `out` (or into `-o FILE`), writes
/// `--json-out-file` and `--hdr-file-prefix` files, and `results/<timestamp>-kv/`
/// (memtier.txt, results.md, results.json).
pub fn run(
    cfg: &KvConfig,
    spec: &TargetSpec,
    interrupted: Arc<AtomicBool>,
    out: &mut dyn Write,
    status: &mut dyn Write,
) -> anyhow::Result<KvOutcome> {
    use crate::kv::export;
    use crate::kv::load::{self, LoadResult};
    use crate::kv::report;

    for w in &cfg.warnings {
        let _ = writeln!(status, "edgebench: warning: {w}");
    }
    if cfg.show_config {
        let _ = write!(status, "{}", cfg.show_config());
    }
    let target = start(cfg, spec)?;
    let load_target = target.redis_reach()?;
    let name = target.name();
    let where_ = match &load_target {
        RedisReach::InProcess(_) => "in-process engine".to_string(),
        // Says its WAIT itself.
        RedisReach::Socket(..) if target.is_cluster() => target.endpoint(),
        RedisReach::Socket(e, access) if cfg.wait > 0 => {
            format!("{}, WAIT {} 0 after writes", place(e, access), cfg.wait)
        }
        RedisReach::Socket(e, access) => place(e, access),
    };
    let _ = writeln!(status, "edgebench kv: {name} at {where_}");
    let tty = std::io::stderr().is_terminal();
    let mut runs: Vec<LoadResult> = Vec::new();
    // A later -x run that cannot start (the server went away) keeps the runs that finished.
    let mut not_started: Option<String> = None;
    for run_id in 1..=cfg.run_count {
        let live = Arc::new(load::Live::default());
        let mut line = LiveLine::new(cfg, run_id, tty);
        let result = match load::run(cfg, &load_target, interrupted.clone(), &live, &mut |el| {
            line.tick(status, &live, el)
        }) {
            Ok(result) => result,
            Err(e) if !runs.is_empty() => {
                line.finish(status);
                not_started = Some(format!("run {run_id} could not start: {e}"));
                break;
            }
            Err(e) => return Err(e.into()),
        };
        line.finish(status);
        if let (1, Some(at)) = (run_id, cfg.start_at) {
            let began = result.started_at.checked_sub(cfg.warmup).unwrap_or(at);
            let late = began.duration_since(at).unwrap_or_default();
            if late > LATE_AFTER {
                let warning = barrier::late_warning(barrier::Waited::Late(late));
                let _ = writeln!(
                    status,
                    "edgebench: warning: {}",
                    warning.unwrap_or_default()
                );
            }
        }
        if let Some(prefix) = &cfg.hdr_file_prefix {
            for (file, bytes) in export::hdr_files(prefix, run_id, &result) {
                let _ = writeln!(status, "edgebench kv: writing HDR latency histogram {file}");
                crate::report::write_whole_file(Path::new(&file), &bytes)?;
            }
        }
        if let Some(f) = &result.failover {
            let _ = writeln!(status, "edgebench kv: failover: {}", f.describe());
        }
        let ended = result.stopped.is_some();
        runs.push(result);
        if ended {
            break;
        }
    }
    drop(target);

    let results = KvResults::new(cfg.clone(), runs);
    let dir = super::shared::fresh_run_dir(Path::new("results"), "kv");
    let files = crate::kv::slice::write(&dir, &results)?;
    // memtier's -o and --json-out-file: the same bytes as memtier.txt and results.json.
    if let Some(path) = &cfg.json_out_file {
        crate::report::write_whole_file(path, &files[report_kv::JSON])?;
    }
    let text = &files[report_kv::MEMTIER_TEXT];
    match &cfg.out_file {
        Some(path) => crate::report::write_whole_file(path, text)?,
        None => out.write_all(text)?,
    }
    let runs = &results.runs;
    let last = runs.last().expect("at least one run");
    if last.rate.is_some() || !cfg.warmup.is_zero() {
        let _ = write!(status, "edgebench kv: {}", report::loop_note(cfg, last));
    }
    // In-process, the client thread also runs the engine: being busy is the point there.
    if matches!(load_target, RedisReach::Socket(..)) {
        for r in runs {
            for line in report::saturation(r) {
                let _ = writeln!(status, "edgebench: warning: {line}");
            }
        }
    }
    // memtier counts error replies as operations and says nothing; edgebench says so.
    for (i, r) in runs.iter().enumerate() {
        for (name, row) in &r.rows {
            if row.errors > 0 {
                let _ = writeln!(
                    status,
                    "edgebench: warning: run {}: {} of the {name} replies were errors (counted \
                     in Ops/sec, as memtier counts them; see results.md's Errors column)",
                    i + 1,
                    row.errors
                );
            }
        }
    }
    let stopped = runs.iter().find_map(|r| r.stopped.clone()).or(not_started);
    if let Some(why) = &stopped {
        let _ = writeln!(
            status,
            "edgebench: the run ended early: {why}; the figures cover what finished"
        );
    }
    Ok(KvOutcome { dir, stopped })
}

/// How far past `--start-at` a host may begin without a warning (waking from the wait
/// costs well under this).
const LATE_AFTER: std::time::Duration = std::time::Duration::from_millis(100);

/// The arguments after `kv` on this process's command line (what `report merge` rebuilds the
/// configuration from); empty when there is no `kv` among them.
fn kv_command_line(args: impl Iterator<Item = std::ffi::OsString>) -> Vec<String> {
    args.map(|a| a.to_string_lossy().into_owned())
        .skip_while(|a| a != "kv")
        .skip(1)
        .collect()
}

/// Why a run cannot go to `--target mini-redis`, in one line: the first command it would send
/// that mini-redis does not know, or too many connections.
fn mini_redis_refusal(cfg: &KvConfig) -> Option<String> {
    let why = |command: &str, from: &str| {
        Some(format!(
            "--target mini-redis cannot run {command} (sent because of {from}): the mini-redis \
             server knows only GET, SET, PUBLISH and SUBSCRIBE; drop {from} or use another target"
        ))
    };
    if cfg.protocol == crate::kv::Protocol::Resp3 {
        return why("HELLO", "-P resp3");
    }
    if cfg.protocol == crate::kv::Protocol::Resp2 {
        return why("HELLO", "-P resp2");
    }
    if cfg.authenticate.is_some() {
        return why("AUTH", "-a/--authenticate");
    }
    if cfg.select_db != 0 {
        return why("SELECT", "--select-db");
    }
    if cfg.wait_ratio.is_some_and(|w| w.waits > 0) {
        return why("WAIT", "--wait-ratio");
    }
    if cfg.commands.is_empty() {
        if cfg.expiry.is_some() {
            return why("SETEX", "--expiry-range");
        }
        if cfg.multi_key_get > 0 && cfg.ratio.gets > 0 {
            return why("MGET", "--multi-key-get");
        }
    }
    for c in cfg.commands.iter() {
        let name = c.name.to_ascii_uppercase();
        if name == "SUBSCRIBE" {
            return Some(
                "--target mini-redis cannot run --command SUBSCRIBE: it turns the connection \
                 into a stream of pushes, which has no replies to time"
                    .to_string(),
            );
        }
        if !mini_redis::COMMANDS.contains(&name.as_str()) {
            return why(&name, &format!("--command \"{}\"", c.text));
        }
    }
    let conns = u64::from(cfg.threads) * u64::from(cfg.clients);
    if conns > mini_redis::MAX_CONNECTIONS {
        return Some(format!(
            "--target mini-redis accepts at most {} connections; this \
             run opens {conns} (-t {} × -c {}): use fewer",
            mini_redis::MAX_CONNECTIONS,
            cfg.threads,
            cfg.clients
        ));
    }
    None
}

/// How memtier's own server is reached: `--tls` and its options (its `-a` is sent by the
/// load's connect sequence, as memtier sends it).
fn memtier_access(cfg: &KvConfig) -> crate::transport::Access {
    crate::transport::Access {
        tls: cfg.tls.clone(),
        credentials: None,
    }
}

/// memtier's own way of naming the server: `-S PATH`, else `-s HOST -p PORT` (a `-u` URI is
/// already folded into those by [`crate::kv::KvConfig`]).
fn memtier_endpoint(cfg: &KvConfig) -> crate::target::Endpoint {
    use crate::target::Endpoint;
    match &cfg.unix_socket {
        Some(path) => Endpoint::Unix(path.clone()),
        None => Endpoint::tcp(cfg.server.as_deref().unwrap_or("localhost"), cfg.port),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        kv: KvArgs,
    }

    fn config(args: &str) -> KvConfig {
        let argv = std::iter::once("kv").chain(args.split_whitespace());
        let cli = Cli::try_parse_from(argv).unwrap();
        KvConfig::from_args_with_entropy(&cli.kv, 0).unwrap()
    }

    #[test]
    fn memtier_flags_name_one_endpoint_ipv6_included() {
        for (args, endpoint) in [
            ("-u redis://[::1]:6379", "redis://[::1]:6379"),
            ("-s ::1 -p 7000", "redis://[::1]:7000"),
            ("-s [::1] -p 7000", "redis://[::1]:7000"),
            ("-u redis://10.0.0.5", "redis://10.0.0.5:6379"),
            ("", "redis://localhost:6379"),
            ("-S /tmp/r.sock", "redis+unix:///tmp/r.sock"),
            ("-u redis+unix:///tmp/r.sock", "redis+unix:///tmp/r.sock"),
        ] {
            assert_eq!(
                memtier_endpoint(&config(args)).to_string(),
                endpoint,
                "{args}"
            );
        }
    }
}

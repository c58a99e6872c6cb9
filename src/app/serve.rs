//! `edgebench serve`: the engine served over RESP on TCP, TLS and/or a Unix socket, on a tokio
//! runtime of `--threads` workers, until Ctrl-C or SIGTERM (the server's shutdown future).

use std::io::Write;

use anyhow::Context as _;

use super::shared::{shutdown_signal, Ending, Error};
use crate::cli::ServeArgs;
use crate::config::ServeConfig;
use crate::engine::persist::Loaded;

/// `edgebench serve ARGS`: configure, serve until a signal, say where it listened.
pub fn main(args: &ServeArgs, status: &mut dyn Write) -> Result<Ending, Error> {
    let cfg = ServeConfig::from_args(args).map_err(Error::usage)?;
    // Counting stays on: INFO's used_memory and `maxmemory` read the live heap (each
    // thread counts on a cache line of its own, see `runner::alloc`).
    // As redis-server does by default (`disable-thp yes`): see the function's doc. A kernel
    // that refuses it leaves the server as it was.
    let _ = crate::server::disable_transparent_huge_pages();
    run(&cfg, status)?;
    Ok(Ending::Finished)
}

/// Serves until Ctrl-C or SIGTERM; `status` gets where it listens.
pub fn run(cfg: &ServeConfig, status: &mut dyn Write) -> anyhow::Result<()> {
    use crate::server::{run_many, Listener};
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = cfg.threads {
        builder.worker_threads(n);
    }
    let runtime = builder
        .enable_all()
        .thread_name("edgebench-serve")
        .build()
        .context("cannot start the server runtime")?;
    let engine = crate::engine::Engine::new();
    for (name, value) in &cfg.persistence {
        engine
            .configure(name, value)
            .map_err(|e| anyhow::anyhow!("--{name} {value:?}: {e}"))?;
    }
    // ACL users, checked when the flags were read.
    if let Some(path) = &cfg.aclfile {
        engine
            .acl_load_file(&path.to_string_lossy())
            .map_err(|e| anyhow::anyhow!("--aclfile {}: {e}", path.display()))?;
    }
    for line in &cfg.acl_users {
        engine
            .acl_define_user(line)
            .map_err(|e| anyhow::anyhow!("--user {line:?}: {e}"))?;
    }
    // As redis-server: the append-only directory (appendonly yes) or the RDB file is
    // loaded before anything listens; a file that cannot be loaded stops the start.
    match engine
        .load_from_disk()
        .map_err(|e| anyhow::anyhow!("{e}"))?
    {
        Loaded::Nothing => {}
        Loaded::Rdb { path, keys } => {
            let _ = writeln!(
                status,
                "edgebench serve: loaded {keys} keys from {}",
                path.display()
            );
        }
        Loaded::Aof {
            dir,
            base_keys,
            commands,
            truncated,
        } => {
            let _ = writeln!(
                status,
                "edgebench serve: loaded {base_keys} keys and replayed {commands} commands from {}",
                dir.display()
            );
            if truncated > 0 {
                let _ = writeln!(
                    status,
                    "edgebench serve: the last append-only file was cut short: its last {truncated} bytes (an unfinished command) were dropped, as redis-server's aof-load-truncated yes does"
                );
            }
        }
    }
    let served = runtime.block_on(async {
        let mut listeners = Vec::new();
        if let Some(addr) = &cfg.tcp {
            let l = Listener::bind_tcp(addr).await.with_context(|| {
                format!("cannot listen on {addr} (is the port taken? try --port)")
            })?;
            listeners.push(l);
        }
        if let Some((addr, acceptor)) = &cfg.tls {
            let l = Listener::bind_tls(addr, acceptor.clone())
                .await
                .with_context(|| {
                    format!("cannot listen on {addr} (is the port taken? try --tls-port)")
                })?;
            listeners.push(l);
        }
        if let Some(path) = &cfg.unixsocket {
            let l = Listener::bind_unix(path).with_context(|| {
                format!(
                    "cannot listen on unix socket {} (does its directory exist?)",
                    path.display()
                )
            })?;
            listeners.push(l);
        }
        for l in &listeners {
            if let Ok(endpoint) = l.endpoint() {
                let _ = writeln!(status, "edgebench serve: listening on {endpoint}");
            }
        }
        run_many(
            listeners,
            engine.clone(),
            cfg.server.clone(),
            shutdown_signal(),
        )
        .await
        .context("the server stopped")?;
        Ok::<(), anyhow::Error>(())
    });
    // As redis-server on SIGTERM: the append-only file written and synced, and the RDB
    // file saved if save points are configured (SHUTDOWN did it already if it ended us). A
    // script that never ends holds the keyspace: say so rather than wait for it.
    if engine.script_running() {
        let _ = writeln!(
            status,
            "edgebench serve: a script is still running: nothing saved on exit"
        );
    } else if let Err(e) = engine.persist_before_exit(None) {
        let _ = writeln!(status, "edgebench serve: saving on exit failed: {e}");
    }
    let _ = writeln!(status, "edgebench serve: stopped");
    // A connection stuck inside a command (a script in an endless loop) keeps its worker
    // thread, and dropping the runtime would wait for it forever: leave such threads behind
    // after a moment, so the process ends whatever a client is running.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    served
}

/// How long the runtime's threads get to finish after the server stopped.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

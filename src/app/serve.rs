//! `edgebench serve`: the engine served over RESP on TCP and/or a Unix socket, on a tokio
//! runtime of `--threads` workers, until Ctrl-C or SIGTERM (the server's shutdown future).

use std::io::Write;

use anyhow::Context as _;

use super::shared::{shutdown_signal, Ending, Error};
use crate::cli::ServeArgs;
use crate::config::ServeConfig;

/// `edgebench serve ARGS`: configure, serve until a signal, say where it listened.
pub fn main(args: &ServeArgs, status: &mut dyn Write) -> Result<Ending, Error> {
    let cfg = ServeConfig::from_args(args).map_err(Error::usage)?;
    // A server reports no B/op; counting would only bounce a cache line between cores.
    crate::runner::alloc::set_counting(false);
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
    let served = runtime.block_on(async {
        let mut listeners = Vec::new();
        if let Some(addr) = &cfg.tcp {
            let l = Listener::bind_tcp(addr).await.with_context(|| {
                format!("cannot listen on {addr} (is the port taken? try --port)")
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
            crate::engine::Engine::new(),
            cfg.server.clone(),
            shutdown_signal(),
        )
        .await
        .context("the server stopped")?;
        let _ = writeln!(status, "edgebench serve: stopped");
        Ok(())
    });
    // A connection stuck inside a command (a script in an endless loop) keeps its worker
    // thread, and dropping the runtime would wait for it forever: leave such threads behind
    // after a moment, so the process ends whatever a client is running.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    served
}

/// How long the runtime's threads get to finish after the server stopped.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

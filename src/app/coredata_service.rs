//! `edgebench coredata-service`: EdgeX's core-data REST API in front of one store (in its
//! EdgeX layout), on TCP and/or a Unix socket, with `--bus` its message-bus subscriber into
//! the same store, and with `--retention-interval` its own retention on a store connection
//! of its own, until Ctrl-C or SIGTERM. The store's target is
//! started as a benchmark run starts it (a spawned redis-server, a private PostgreSQL
//! database) and stopped, or dropped, when the service has stopped.

use std::io::Write;

use anyhow::Context as _;

use super::shared::{shutdown_signal, Ending, Error};
use crate::cli::CoreDataServiceArgs;
use crate::config::CoreDataServiceConfig;
use crate::service::{serve, Listeners};
use crate::target::Target;

/// `edgebench coredata-service ARGS`: configure, serve until a signal.
pub fn main(args: &CoreDataServiceArgs, status: &mut dyn Write) -> Result<Ending, Error> {
    let cfg = CoreDataServiceConfig::from_args(args).map_err(Error::usage)?;
    run(&cfg, status)?;
    Ok(Ending::Finished)
}

/// Serves until Ctrl-C or SIGTERM; `status` gets where it listens and what it serves.
pub fn run(cfg: &CoreDataServiceConfig, status: &mut dyn Write) -> anyhow::Result<()> {
    let target = Target::start(&cfg.store)?;
    let stores = target.event_store_opener()?;
    // Open one store now, so a store that cannot be reached fails before anything listens.
    let first = stores().with_context(|| format!("cannot open the store {}", target.endpoint()))?;
    let service = crate::service::ServiceConfig {
        store: Some(first.behaviour()),
        inline_store_calls: target.in_process(),
        ..cfg.service.clone()
    };
    drop(first);
    // Retention opens its store before anything listens too.
    let purger = match cfg.retention {
        Some(retention) => {
            let purger = crate::service::retention::Purger::start(&stores, retention)
                .context("cannot start the service's retention")?;
            let _ = writeln!(
                status,
                "edgebench coredata-service: retention {} every {}",
                retention.policy.describe(),
                crate::store::edgex::retention::duration_text(retention.interval)
            );
            Some(purger)
        }
        None => None,
    };
    // The bus subscribers start before anything listens, so an unreachable broker fails first.
    let subscribers = if cfg.bus.is_empty() {
        None
    } else {
        let sub_cfg = crate::service::bus::SubscriberConfig {
            persist: cfg.service.persist,
            options: crate::transport::bus::SubscribeOptions {
                qos: cfg.qos,
                ..Default::default()
            },
            mode: cfg.subscriber,
        };
        let subs = crate::service::bus::BusSubscribers::start(&cfg.bus, &stores, &sub_cfg)
            .map_err(anyhow::Error::msg)?;
        for url in &cfg.bus {
            let _ = writeln!(
                status,
                "edgebench coredata-service: subscribed to {} on {url} (--subscriber {})",
                crate::service::bus::EVENTS_FILTER,
                cfg.subscriber.label()
            );
        }
        Some(subs)
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("edgebench-core-data")
        .build()
        .context("cannot start the service runtime")?;
    runtime.block_on(async {
        let listeners = Listeners::bind(cfg.tcp, cfg.unixsocket.as_deref()).await?;
        if let Some(l) = &listeners.tcp {
            let addr = l.local_addr()?;
            let _ = writeln!(
                status,
                "edgebench coredata-service: listening on http://{addr}/api/v3"
            );
        }
        if let Some(path) = &cfg.unixsocket {
            let _ = writeln!(
                status,
                "edgebench coredata-service: listening on http+unix://{}/api/v3",
                path.display()
            );
        }
        let _ = writeln!(
            status,
            "edgebench coredata-service: store {}{}",
            target.endpoint(),
            if cfg.service.persist {
                ""
            } else {
                " (--persist false: nothing is stored)"
            }
        );
        serve(listeners, stores, service, shutdown_signal())
            .await
            .context("the service stopped")?;
        let _ = writeln!(status, "edgebench coredata-service: stopped");
        anyhow::Ok(())
    })?;
    if let Some(path) = &cfg.unixsocket {
        let _ = std::fs::remove_file(path);
    }
    if let Some(purger) = purger {
        let _ = writeln!(
            status,
            "edgebench coredata-service: retention {}",
            purger.stop().summary()
        );
    }
    if let Some(subs) = subscribers {
        let counts = std::sync::Arc::clone(subs.counts());
        let stopped = subs.stop();
        let _ = writeln!(
            status,
            "edgebench coredata-service: bus {}",
            counts.summary()
        );
        stopped.map_err(anyhow::Error::msg)?;
    }
    drop(target);
    Ok(())
}

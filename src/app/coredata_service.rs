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
use crate::config::EmbeddedBus;
use crate::service::bus::BusSubscribers;
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
    // `--bus embedded`: the engine's broker, subscribed to in process, served to publishers
    // once the runtime runs.
    let embedded = cfg
        .embedded_bus
        .as_ref()
        .map(|bus| (bus, crate::transport::bus::embedded::broker()));
    let subscribers = if cfg.bus.is_empty() && embedded.is_none() {
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
        let mut subscriptions =
            BusSubscribers::subscribe(&cfg.bus, &sub_cfg).map_err(anyhow::Error::msg)?;
        if let Some((_, broker)) = &embedded {
            let sub = crate::transport::bus::embedded::subscribe(
                broker,
                crate::service::bus::EVENTS_FILTER,
            )
            .context("cannot subscribe to the embedded bus")?;
            subscriptions.push(("embedded".to_string(), Box::new(sub)));
        }
        let names: Vec<String> = subscriptions.iter().map(|(name, _)| name.clone()).collect();
        let subs = BusSubscribers::start_on(subscriptions, &stores, &sub_cfg)
            .map_err(anyhow::Error::msg)?;
        for name in names {
            let _ = writeln!(
                status,
                "edgebench coredata-service: subscribed to {} on {name} (--subscriber {})",
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
        let embedded_server = match &embedded {
            Some((bus, broker)) => Some(serve_embedded_bus(bus, broker, status).await?),
            None => None,
        };
        let mut listeners = Listeners::bind(cfg.tcp, cfg.unixsocket.as_deref()).await?;
        listeners.tls = cfg.tls.clone();
        if let Some(l) = &listeners.tcp {
            let addr = l.local_addr()?;
            let scheme = if listeners.tls.is_some() {
                "https"
            } else {
                "http"
            };
            let _ = writeln!(
                status,
                "edgebench coredata-service: listening on {scheme}://{addr}/api/v3"
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
        if let Some((stop, server)) = embedded_server {
            let _ = stop.send(());
            let _ = server.await;
        }
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

/// The server behind `--bus embedded`: a fresh engine on `--bus-listen`/`--bus-unixsocket`
/// whose Pub/Sub broker is `broker`, so what device services PUBLISH there reaches the
/// service's subscriber in process. Returns the sender that stops it and its task.
async fn serve_embedded_bus(
    bus: &EmbeddedBus,
    broker: &std::sync::Arc<edgebench_engine::server::pubsub::Broker>,
    status: &mut dyn Write,
) -> anyhow::Result<(
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<std::io::Result<()>>,
)> {
    use edgebench_engine::server::{run_sharing, Listener, ServerConfig};
    let mut listeners = Vec::new();
    if let Some(addr) = bus.tcp {
        let listener = Listener::bind_tcp(&addr.to_string())
            .await
            .with_context(|| format!("--bus-listen {addr}: cannot listen there"))?;
        let _ = writeln!(
            status,
            "edgebench coredata-service: embedded bus for publishers on {}",
            bus_url(&listener)?
        );
        listeners.push(listener);
    }
    if let Some(path) = &bus.unixsocket {
        let listener = Listener::bind_unix(path)
            .with_context(|| format!("--bus-unixsocket {}: cannot listen there", path.display()))?;
        let _ = writeln!(
            status,
            "edgebench coredata-service: embedded bus for publishers on {}",
            bus_url(&listener)?
        );
        listeners.push(listener);
    }
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(run_sharing(
        listeners,
        crate::engine::Engine::new(),
        ServerConfig::default(),
        std::sync::Arc::clone(broker),
        async {
            let _ = stopped.await;
        },
    ));
    Ok((stop, server))
}

/// The URL a publisher gives for `listener`: Redis Pub/Sub over TCP or a Unix socket.
fn bus_url(listener: &edgebench_engine::server::Listener) -> anyhow::Result<String> {
    use edgebench_engine::server::Address;
    Ok(match listener.endpoint()? {
        Address::Tcp(addr) => format!("redis://{addr}"),
        Address::Unix(path) => format!("redis+unix://{}", path.display()),
        Address::Tls(addr) => format!("rediss://{addr}"),
    })
}

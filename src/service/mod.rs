//! EdgeX's core-data REST API (`/api/v3`, as the v4.0.2 OpenAPI specification defines it),
//! served by edgebench in front of any [`EventStore`]: the same routes, status codes and
//! DTOs as EdgeX's core-data service, so a benchmark can compare a store reached through the
//! service path with the store itself, and EdgeX's own clients can talk to it.
//!
//! Data flows one way: a request's path and query are parsed and checked ([`query`],
//! [`ingest`] for the add body), a store from the [`pool`] answers on tokio's blocking pool,
//! and the answer is built from the DTOs of [`crate::edgex::dto`]. Errors are
//! [`errors::ApiError`], a status and a `BaseResponse`.
//!
//! - [`config`]: [`ServiceConfig`] (PersistData, MaxResultCount, MaxEventSize).
//! - [`routes`]: the route table and the headers every answer carries.
//! - [`ingest`]: `POST /event/...`; [`events`], [`readings`], [`system`]: the other routes;
//!   [`list`]: the list-then-count of every list route.
//! - [`query`]: paging, time ranges and path parameters, checked as EdgeX checks them.
//! - [`pool`]: the stores; [`handle`]: listeners and [`ServiceHandle`].
//! - [`bus`]: the message-bus subscriber, EdgeX's other way in, into the same store.
//! - [`retention`]: core data's own retention, a thread beside the routes.
//!
//! Why axum 0.8: it serves `tokio::net::TcpListener` and `UnixListener` natively through
//! `axum::serve`, with graceful shutdown, on hyper 1 (which the HTTP client,
//! [`crate::store::http`], uses too), and its router matches EdgeX's `{param}` routes
//! as written in the specification.
//!
//! Where edgebench differs from EdgeX, on purpose (each is documented where it is done):
//! bulk deletes finish before their 202 ([`events`]); an unsupported `Content-Type` is 400
//! rather than read as JSON ([`ingest`]); `aggregateFunc` is refused ([`query`]).

pub mod bus;
pub mod config;
pub mod errors;
pub mod events;
pub mod handle;
pub mod ingest;
pub mod list;
pub mod pool;
pub mod query;
pub mod readings;
pub mod retention;
pub mod routes;
pub mod system;
pub mod tls;

#[cfg(test)]
mod tests;

use std::future::Future;
use std::io;

pub use config::ServiceConfig;
pub use handle::{Listeners, ServiceHandle};

pub use crate::store::backend::StoreOpener;

/// Serves the API on every listener given until `shutdown` resolves, then stops accepting and
/// lets the requests in flight finish (graceful), and returns. The caller owns the
/// listeners, so tests bind `127.0.0.1:0` or a socket in a temporary directory, and removes
/// a socket file afterwards.
pub async fn serve(
    listeners: Listeners,
    stores: StoreOpener,
    cfg: ServiceConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> io::Result<()> {
    if listeners.tcp.is_none() && listeners.unix.is_none() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a core-data service needs somewhere to listen: give a TCP or a Unix listener",
        ));
    }
    let app = routes::router(routes::AppState::new(stores, cfg));
    let stop = handle::fan_out(shutdown);
    let tcp = {
        let (app, stop) = (app.clone(), stop.clone());
        async move {
            match (listeners.tcp, listeners.tls) {
                (Some(tcp), Some(tls)) => {
                    let listener = tls::TlsListener::new(tcp, tls.rustls_config())?;
                    serve_one(Some(listener), app, stop).await
                }
                (tcp, _) => serve_one(tcp, app, stop).await,
            }
        }
    };
    let unix = serve_one(listeners.unix, app, stop);
    let (tcp, unix) = tokio::join!(tcp, unix);
    tcp.and(unix)
}

/// Serves one listener, if given, until `stop` turns true.
async fn serve_one<L: axum::serve::Listener>(
    listener: Option<L>,
    app: axum::Router,
    mut stop: tokio::sync::watch::Receiver<bool>,
) -> io::Result<()>
where
    L::Addr: std::fmt::Debug,
{
    let Some(listener) = listener else {
        return Ok(());
    };
    let signal = async move {
        let _ = stop.wait_for(|stopped| *stopped).await;
    };
    axum::serve(listener, app)
        .with_graceful_shutdown(signal)
        .await
}

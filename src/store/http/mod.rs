//! [`HttpStore`]: an [`EventStore`] that is a client of a core-data service's `/api/v3`, EdgeX's
//! own or edgebench's ([`crate::service`]), over TCP (`http://HOST:PORT`) or a Unix socket
//! (`http+unix:///PATH`), so the conformance suite and the benchmarks run through a service
//! as they run on a store.
//!
//! One code path serves both transports: hyper's HTTP/1 client connection
//! (`hyper::client::conn::http1`) over a tokio `TcpStream` or `UnixStream`; only the stream
//! differs. One store keeps one keep-alive connection (a store is one client, as a benchmark
//! worker is), reopened when the service closed it. The trait is synchronous, so the store owns
//! a current-thread tokio runtime and `block_on`s each call.
//!
//! Why not hyper-util's pooled `Client` (with `hyperlocal` for the socket), the obvious choice:
//! measured, it costs a quarter more per request for a pool one connection never needs
//! (`cargo bench --bench service -- service_http/ping`: 49.0 µs with it, 38.6 µs with this, on
//! the same machine in one session; docs/PERFORMANCE.md).
//!
//! How calls map onto routes ([`paths`]):
//! - `add_event` → `POST /event/edgebench/{profile}/{device}/{source}` with a JSON
//!   `AddEventRequest` (service name [`SERVICE_NAME`]); 409 is [`StoreError::Duplicate`].
//! - `add_events` → the trait's default, one `POST` per event: EdgeX's REST API has no batch
//!   add, so a batch over HTTP is not atomic (the events before a refused one stay stored).
//! - `event_by_id`, `delete_event_by_id` → `/event/id/{id}`; 404 is [`StoreError::NotFound`].
//! - `events`, `readings` → the matching list route with `offset` and `limit`. [`UNLIMITED`]
//!   is `limit=-1`, which a service caps at its MaxResultCount (1024 by default): "all" over
//!   HTTP is at most MaxResultCount records, as it is for any EdgeX client. A larger explicit
//!   limit is lowered to MaxResultCount (EdgeX would refuse it with 400). An `offset` past the
//!   end (416) is an empty page, as on a store. Events by device and time range have no route:
//!   [`StoreError::Unsupported`].
//! - `event_count`, `reading_count` → a count route where one exists, else the matching list
//!   route with `limit=1`, read for its `totalCount`.
//! - `delete_events` → `DELETE /event/device/name/{name}` or `/event/age/{age}` (202); by
//!   device and source there is no route: [`StoreError::Unsupported`].
//! - `source_event_count`, `source_events`, `device_sources` (EdgeX 4.0's retention) → the
//!   trait's defaults: the device's list (or every event's), page by page, the source's
//!   events kept. EdgeX's lists have no source, so that is the only way through the API.
//! - `scrub` → `DELETE /event/age/0`, then `/event/count` is polled until it reads 0, because
//!   EdgeX deletes in the background after its 202. Events from the future survive an age of
//!   0, so when the count stops falling the remaining events' devices are deleted by name. The
//!   wait is bounded ([`SCRUB_TIMEOUT`]).
//!
//! Any other answer outside 2xx is a [`StoreError::Backend`] naming the method, the URL, the
//! status and the service's `message`.
//!
//! MaxResultCount is read from `/api/v3/config` (`config.Service.MaxResultCount`) on connect,
//! when the service answers it (1024 otherwise); `/api/v3/ping` must answer, or connect fails
//! naming the URL.

pub mod backend;
pub mod base;
pub mod paths;

use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use hyper::{HeaderMap, Method, Request};
use serde::de::DeserializeOwned;

pub use base::HttpBase;

use crate::edgex::dto::{
    AddEventRequest, CountResponse, EventDto, EventResponse, MultiEventsResponse,
    MultiReadingsResponse,
};
use crate::edgex::{Event, Reading, API_VERSION};
use crate::store::edgex::{Behaviour, Doomed, EventStore, Filter, Page};
use crate::store::{StoreError, StoreResult, UNLIMITED};

/// The `serviceName` path segment of added events.
pub const SERVICE_NAME: &str = "edgebench";
/// MaxResultCount when the service does not say (EdgeX's default).
pub const DEFAULT_MAX_RESULT_COUNT: usize = 1024;
/// How long `scrub` waits for the service's count to reach 0.
pub const SCRUB_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one request may take, connect included.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// The backend name in errors.
const BACKEND: &str = "core-data service";

/// A service's answer, as [`HttpStore::send`] returns it.
#[derive(Debug, Clone)]
pub struct Reply {
    /// The HTTP status.
    pub status: u16,
    /// The body.
    pub body: Vec<u8>,
    /// The headers.
    pub headers: HeaderMap,
}

/// The one keep-alive connection of a client: hyper's HTTP/1 sender over a TCP or Unix
/// stream (the connection task runs on the client's runtime whenever a request is driven).
type Sender = hyper::client::conn::http1::SendRequest<Full<Bytes>>;

/// A client of one core-data service.
pub struct HttpStore {
    base: HttpBase,
    runtime: tokio::runtime::Runtime,
    /// The open connection; `None` before the first request and after one was lost.
    sender: Option<Sender>,
    /// The `Host` header of every request.
    host: HeaderValue,
    max_result_count: usize,
    /// What the store behind the service keeps and checks, when the service says (edgebench's
    /// does, under `Edgebench` in `/config`); the trait's defaults otherwise.
    behaviour: Behaviour,
}

impl std::fmt::Debug for HttpStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpStore")
            .field("base", &self.base)
            .field("max_result_count", &self.max_result_count)
            .finish()
    }
}

impl HttpStore {
    /// Connects: `/api/v3/ping` must answer 200; MaxResultCount comes from `/api/v3/config`.
    pub fn connect(base: &HttpBase) -> StoreResult<HttpStore> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| backend(format!("cannot start the HTTP client's runtime: {e}")))?;
        let mut store = HttpStore {
            base: base.clone(),
            runtime,
            sender: None,
            host: HeaderValue::try_from(base.host_header())
                .map_err(|e| backend(format!("{base}: not a valid Host header: {e}")))?,
            max_result_count: DEFAULT_MAX_RESULT_COUNT,
            behaviour: Behaviour::FULL,
        };
        let ping = format!("{}/ping", paths::API);
        let reply = store.get(&ping).map_err(|e| {
            backend(format!(
                "cannot reach a core-data service at {}: {e} (is it running and listening \
                 there?)",
                base.url(&ping)
            ))
        })?;
        if reply.status != 200 {
            return Err(backend(format!(
                "{} answered HTTP {}: not a core-data service (expected 200 from its ping route)",
                base.url(&ping),
                reply.status
            )));
        }
        let config = format!("{}/config", paths::API);
        if let Ok(reply) = store.get(&config) {
            if let Some(max) = max_result_count(&reply) {
                store.max_result_count = max;
            }
            store.behaviour = behaviour(&reply);
        }
        Ok(store)
    }

    /// The service's address.
    pub fn base(&self) -> &HttpBase {
        &self.base
    }

    /// The service's MaxResultCount: the most records one list returns.
    pub fn max_result_count(&self) -> usize {
        self.max_result_count
    }

    /// `GET path_and_query`, whatever the status.
    pub fn get(&mut self, path_and_query: &str) -> StoreResult<Reply> {
        self.send(Method::GET, path_and_query, &[], Vec::new())
    }

    /// Sends one request with these headers and body and returns the answer, whatever its
    /// status. Fails only when no answer came (connection refused or lost, timeout).
    pub fn send(
        &mut self,
        method: Method,
        path_and_query: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> StoreResult<Reply> {
        // The URL is only for error messages: built when one is.
        let url = || self.base.url(path_and_query);
        let mut request = Request::builder()
            .method(method.clone())
            .uri(path_and_query)
            .header(hyper::header::HOST, self.host.clone());
        for (name, value) in headers {
            let name = HeaderName::try_from(*name)
                .map_err(|e| backend(format!("header name {name:?}: {e}")))?;
            let value = HeaderValue::try_from(*value)
                .map_err(|e| backend(format!("header value {value:?}: {e}")))?;
            request = request.header(name, value);
        }
        let request = request
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| backend(format!("{method} {}: {e}", url())))?;
        let base = &self.base;
        let sender = &mut self.sender;
        self.runtime.block_on(async {
            let exchange = async {
                let response = send_on(base, sender, request).await?;
                let (parts, body) = response.into_parts();
                let body = body.collect().await.map_err(|e| error_chain(&e))?;
                Ok::<_, String>(Reply {
                    status: parts.status.as_u16(),
                    body: body.to_bytes().to_vec(),
                    headers: parts.headers,
                })
            };
            match tokio::time::timeout(REQUEST_TIMEOUT, exchange).await {
                Ok(Ok(reply)) => Ok(reply),
                Ok(Err(e)) => Err(backend(format!("{method} {}: {e}", url()))),
                Err(_) => Err(backend(format!(
                    "{method} {}: no answer within {REQUEST_TIMEOUT:?}",
                    url()
                ))),
            }
        })
    }

    /// Sends and checks the status: `ok` statuses pass, any other is an error.
    fn call(
        &mut self,
        method: Method,
        path: &str,
        body: Option<Vec<u8>>,
        ok: &[u16],
    ) -> StoreResult<Reply> {
        let headers: &[(&str, &str)] = match body {
            Some(_) => &[("content-type", "application/json")],
            None => &[],
        };
        let reply = self.send(method.clone(), path, headers, body.unwrap_or_default())?;
        if ok.contains(&reply.status) {
            Ok(reply)
        } else {
            Err(self.refusal(&method, path, &reply))
        }
    }

    /// The error for an answer that is not the expected one.
    fn refusal(&self, method: &Method, path: &str, reply: &Reply) -> StoreError {
        backend(format!(
            "{method} {}: HTTP {}: {}",
            self.base.url(path),
            reply.status,
            message_of(reply)
        ))
    }

    fn decode<T: DeserializeOwned>(&self, path: &str, reply: &Reply) -> StoreResult<T> {
        serde_json::from_slice(&reply.body).map_err(|e| StoreError::Decode {
            kind: "answer",
            id: self.base.url(path),
            reason: e.to_string(),
        })
    }

    /// `?offset=..&limit=..` of a page.
    fn page_query(&self, page: Page) -> String {
        let limit = if page.limit == UNLIMITED {
            -1
        } else {
            page.limit.min(self.max_result_count) as i64
        };
        format!("?offset={}&limit={limit}", page.offset)
    }

    /// A list route's `totalCount`, asked with `limit=1`.
    fn total_count(&mut self, list_path: &str) -> StoreResult<u64> {
        let path = format!("{list_path}?offset=0&limit=1");
        let reply = self.call(Method::GET, &path, None, &[200])?;
        let total: TotalCount = self.decode(&path, &reply)?;
        Ok(total.total_count)
    }

    fn count_route(&mut self, path: &str) -> StoreResult<u64> {
        let reply = self.call(Method::GET, path, None, &[200])?;
        Ok(self.decode::<CountResponse>(path, &reply)?.count)
    }

    /// The devices of the events still stored (at most MaxResultCount events looked at).
    fn remaining_devices(&mut self) -> StoreResult<Vec<String>> {
        let path = format!("{}/event/all?offset=0&limit=-1", paths::API);
        let reply = self.call(Method::GET, &path, None, &[200, 416])?;
        if reply.status == 416 {
            return Ok(Vec::new());
        }
        let listed: MultiEventsResponse = self.decode(&path, &reply)?;
        let mut devices: Vec<String> = listed.events.into_iter().map(|e| e.device_name).collect();
        devices.sort();
        devices.dedup();
        Ok(devices)
    }
}

/// Only the `totalCount` of a list answer.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct TotalCount {
    total_count: u64,
}

impl EventStore for HttpStore {
    /// What the service says of its store (the trait's defaults when it does not say).
    fn behaviour(&self) -> Behaviour {
        self.behaviour
    }

    fn add_event(&mut self, event: &Event) -> StoreResult<()> {
        let path = paths::add_event(
            SERVICE_NAME,
            &event.profile_name,
            &event.device_name,
            &event.source_name,
        );
        let request = AddEventRequest {
            api_version: API_VERSION.to_string(),
            request_id: String::new(),
            event: EventDto::of(event),
        };
        let body = serde_json::to_vec(&request).map_err(|e| backend(e.to_string()))?;
        let reply = self.call(Method::POST, &path, Some(body), &[201, 409])?;
        if reply.status == 409 {
            return Err(StoreError::Duplicate {
                kind: "event",
                id: event.id.clone(),
            });
        }
        Ok(())
    }

    fn event_by_id(&mut self, id: &str) -> StoreResult<Event> {
        let path = paths::event_by_id(id);
        let reply = self.call(Method::GET, &path, None, &[200, 404])?;
        if reply.status == 404 {
            return Err(not_found(id));
        }
        Ok(self
            .decode::<EventResponse>(&path, &reply)?
            .event
            .into_stored())
    }

    fn delete_event_by_id(&mut self, id: &str) -> StoreResult<()> {
        let path = paths::event_by_id(id);
        let reply = self.call(Method::DELETE, &path, None, &[200, 404])?;
        if reply.status == 404 {
            return Err(not_found(id));
        }
        Ok(())
    }

    fn event_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        match paths::event_count(filter)? {
            Some(path) => self.count_route(&path),
            None => self.total_count(&paths::events(filter)?),
        }
    }

    fn events(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Event>> {
        let path = format!("{}{}", paths::events(filter)?, self.page_query(page));
        let reply = self.call(Method::GET, &path, None, &[200, 416])?;
        if reply.status == 416 {
            return Ok(Vec::new());
        }
        let listed: MultiEventsResponse = self.decode(&path, &reply)?;
        Ok(listed
            .events
            .into_iter()
            .map(EventDto::into_stored)
            .collect())
    }

    fn delete_events(&mut self, doomed: Doomed<'_>) -> StoreResult<()> {
        self.call(
            Method::DELETE,
            &paths::delete_events(doomed)?,
            None,
            &[200, 202],
        )?;
        Ok(())
    }

    fn reading_count(&mut self, filter: Filter<'_>) -> StoreResult<u64> {
        match paths::reading_count(filter) {
            Some(path) => self.count_route(&path),
            None => self.total_count(&paths::readings(filter)),
        }
    }

    fn readings(&mut self, filter: Filter<'_>, page: Page) -> StoreResult<Vec<Reading>> {
        let path = format!("{}{}", paths::readings(filter), self.page_query(page));
        let reply = self.call(Method::GET, &path, None, &[200, 416])?;
        if reply.status == 416 {
            return Ok(Vec::new());
        }
        let listed: MultiReadingsResponse = self.decode(&path, &reply)?;
        Ok(listed
            .readings
            .into_iter()
            .map(|r| r.into_stored())
            .collect())
    }

    fn scrub(&mut self) -> StoreResult<()> {
        self.delete_events(Doomed::OlderThan { age_ns: 0 })?;
        let started = Instant::now();
        let count_path = format!("{}/event/count", paths::API);
        let mut last = u64::MAX;
        let mut last_change = Instant::now();
        let mut swept_devices = false;
        loop {
            let count = self.count_route(&count_path)?;
            if count == 0 {
                return Ok(());
            }
            if count != last {
                last = count;
                last_change = Instant::now();
            } else if !swept_devices && last_change.elapsed() >= Duration::from_secs(1) {
                // The count stopped falling: what is left is not older than now (events
                // from the future), which only a delete by device removes.
                for device in self.remaining_devices()? {
                    self.delete_events(Doomed::Device(&device))?;
                }
                swept_devices = true;
            }
            if started.elapsed() >= SCRUB_TIMEOUT {
                return Err(backend(format!(
                    "{} still counts {count} events {SCRUB_TIMEOUT:?} after DELETE \
                     /event/age/0 (is the service deleting? check its log)",
                    self.base.url(&count_path)
                )));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

fn backend(message: String) -> StoreError {
    StoreError::Backend {
        backend: BACKEND,
        message,
    }
}

fn not_found(id: &str) -> StoreError {
    StoreError::NotFound {
        kind: "event",
        id: id.to_string(),
    }
}

/// The service's `message`, or the start of the body when it is not a `BaseResponse`.
fn message_of(reply: &Reply) -> String {
    #[derive(serde::Deserialize)]
    struct Message {
        message: String,
    }
    match serde_json::from_slice::<Message>(&reply.body) {
        Ok(m) => m.message,
        Err(_) => {
            let text = String::from_utf8_lossy(&reply.body);
            text.chars().take(200).collect()
        }
    }
}

/// Sends `request` on the open connection, opening one first when there is none or the last
/// one was closed (by the server's keep-alive timeout, or a lost connection). A request that
/// found its connection closed before anything was written is sent again on a fresh one.
async fn send_on(
    base: &HttpBase,
    sender: &mut Option<Sender>,
    request: Request<Full<Bytes>>,
) -> Result<hyper::Response<hyper::body::Incoming>, String> {
    if let Some(open) = sender.as_mut() {
        if open.ready().await.is_ok() {
            return match open.try_send_request(request).await {
                Ok(response) => Ok(response),
                Err(mut e) => {
                    *sender = None;
                    match e.take_message() {
                        // Never written: safe to send again on a new connection.
                        Some(request) => Box::pin(send_on(base, sender, request)).await,
                        None => Err(error_chain(e.error())),
                    }
                }
            };
        }
    }
    let mut fresh = connect(base).await?;
    let response = fresh
        .send_request(request)
        .await
        .map_err(|e| error_chain(&e))?;
    *sender = Some(fresh);
    Ok(response)
}

/// Opens a connection to `base` and starts its task on the current runtime: TCP (no Nagle
/// delay: requests are small and latency is what is measured) or a Unix socket, the same
/// HTTP/1 code over either stream.
async fn connect(base: &HttpBase) -> Result<Sender, String> {
    async fn handshake<S>(stream: S) -> Result<Sender, String>
    where
        S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| error_chain(&e))?;
        tokio::spawn(async move {
            // Ends when the server closes the connection or the sender is dropped.
            let _ = connection.await;
        });
        Ok(sender)
    }
    let connecting = async {
        match base {
            HttpBase::Tcp { host, port } => {
                let stream = tokio::net::TcpStream::connect((host.as_str(), *port))
                    .await
                    .map_err(|e| e.to_string())?;
                stream.set_nodelay(true).map_err(|e| e.to_string())?;
                handshake(stream).await
            }
            HttpBase::Unix(path) => {
                let stream = tokio::net::UnixStream::connect(path)
                    .await
                    .map_err(|e| e.to_string())?;
                handshake(stream).await
            }
            HttpBase::Https { host, port, cacert } => {
                let options = crate::transport::access::TlsOptions {
                    cacert: cacert.clone(),
                    ..Default::default()
                };
                let client = options.client().map_err(|e| e.to_string())?;
                let (connector, name) = client.connector(host).map_err(|e| e.to_string())?;
                let stream = tokio::net::TcpStream::connect((host.as_str(), *port))
                    .await
                    .map_err(|e| e.to_string())?;
                stream.set_nodelay(true).map_err(|e| e.to_string())?;
                let tls = connector.connect(name, stream).await.map_err(|e| {
                    let why = error_chain(&e);
                    if cacert.is_none() && why.contains("UnknownIssuer") {
                        format!(
                            "TLS handshake: {why}; give the CA that signed the service's \
                                 certificate: https://{host}:{port}?cacert=FILE"
                        )
                    } else {
                        format!("TLS handshake: {why}")
                    }
                })?;
                handshake(tls).await
            }
        }
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, connecting).await {
        Ok(result) => result,
        Err(_) => Err(format!("cannot connect within {CONNECT_TIMEOUT:?}")),
    }
}

/// How long opening a connection may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// `config.Edgebench` of a `/config` answer: what edgebench's service says of its store; every
/// flag missing (any other service) is the trait's default.
fn behaviour(reply: &Reply) -> Behaviour {
    let value: serde_json::Value = match serde_json::from_slice(&reply.body) {
        Ok(v) if reply.status == 200 => v,
        _ => return Behaviour::FULL,
    };
    let flag = |name: &str| {
        value
            .pointer(&format!("/config/Edgebench/{name}"))
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(true)
    };
    Behaviour {
        checks_duplicate_ids: flag("ChecksDuplicateIds"),
        keeps_reading_ids: flag("KeepsReadingIds"),
        keeps_binary_values: flag("KeepsBinaryValues"),
    }
}

/// `config.Service.MaxResultCount` of a `/config` answer.
fn max_result_count(reply: &Reply) -> Option<usize> {
    if reply.status != 200 {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(&reply.body).ok()?;
    let max = value.pointer("/config/Service/MaxResultCount")?.as_u64()?;
    usize::try_from(max).ok().filter(|m| *m > 0)
}

/// An error and its causes, "a: b: c" (hyper's own message is terse: "client error
/// (Connect)").
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connecting_to_nothing_names_the_url() {
        let dir = tempfile::tempdir().unwrap();
        let base = HttpBase::Unix(dir.path().join("none.sock"));
        let err = HttpStore::connect(&base).unwrap_err().to_string();
        assert!(err.contains("none.sock/api/v3/ping"), "{err}");
        assert!(err.contains("is it running"), "{err}");
    }

    #[test]
    fn max_result_count_is_read_from_config() {
        let reply = |status, body: &str| Reply {
            status,
            body: body.as_bytes().to_vec(),
            headers: HeaderMap::new(),
        };
        let config = r#"{"config":{"Service":{"MaxResultCount":50000}}}"#;
        assert_eq!(max_result_count(&reply(200, config)), Some(50000));
        assert_eq!(max_result_count(&reply(404, config)), None);
        assert_eq!(max_result_count(&reply(200, "{}")), None);
        assert_eq!(
            message_of(&reply(400, r#"{"statusCode":400,"message":"bad"}"#)),
            "bad"
        );
    }
}

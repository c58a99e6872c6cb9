//! The `/api/v3` route table, the headers every answer carries, and the answers for unknown
//! paths (404) and wrong methods (405), each with a `BaseResponse` body.
//!
//! Every response is `Content-Type: application/json` and echoes `X-Correlation-ID`: the
//! request's own when it sent one, else a fresh UUID (EdgeX's `correlation.ManageHeader`
//! middleware and `utils.WriteHttpHeader`).
//!
//! Two read routes shadow the add route for some names, as they do in EdgeX's router:
//! `/event/start/{start}/end/{end}` and `/event/count/device/name/{name}` have the add route's
//! four segments after `/event`, and their static segments win. A POST to either is the add
//! route with those names (service `start` and device `end`; service `count`, profile
//! `device` and device `name`), so no event is refused for its names.

use std::sync::Arc;

use axum::extract::Request;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderName, HeaderValue, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use super::errors::ApiError;
use super::pool::StorePool;
use super::{events, ingest, readings, system, ServiceConfig, StoreOpener};

/// The path prefix of every route.
pub const API: &str = "/api/v3";
/// The correlation header.
pub const CORRELATION_ID: HeaderName = HeaderName::from_static("x-correlation-id");

/// What every handler reaches: the stores and the settings.
#[derive(Clone)]
pub struct AppState {
    /// The stores.
    pub pool: Arc<StorePool>,
    /// The settings.
    pub cfg: Arc<ServiceConfig>,
}

impl AppState {
    /// A state with an empty pool.
    pub fn new(stores: StoreOpener, cfg: ServiceConfig) -> Self {
        AppState {
            pool: StorePool::new(stores, cfg.inline_store_calls),
            cfg: Arc::new(cfg),
        }
    }
}

/// The whole service.
pub fn router(state: AppState) -> Router {
    let routes: [(&str, axum::routing::MethodRouter<AppState>); 21] = [
        (
            "/event/{serviceName}/{profileName}/{deviceName}/{sourceName}",
            post(ingest::add_event),
        ),
        ("/event/all", get(events::all)),
        (
            "/event/id/{id}",
            get(events::by_id).delete(events::delete_by_id),
        ),
        ("/event/count", get(events::count)),
        (
            "/event/count/device/name/{name}",
            get(events::count_by_device).post(ingest::add_event_shadowed_by_count),
        ),
        (
            "/event/device/name/{name}",
            get(events::by_device).delete(events::delete_by_device),
        ),
        (
            "/event/start/{start}/end/{end}",
            get(events::by_time_range).post(ingest::add_event_shadowed_by_range),
        ),
        (
            "/event/age/{age}",
            axum::routing::delete(events::delete_by_age),
        ),
        ("/reading/all", get(readings::all)),
        ("/reading/count", get(readings::count)),
        (
            "/reading/count/device/name/{name}",
            get(readings::count_by_device),
        ),
        ("/reading/device/name/{name}", get(readings::by_device)),
        (
            "/reading/resourceName/{resourceName}",
            get(readings::by_resource),
        ),
        (
            "/reading/device/name/{deviceName}/resourceName/{resourceName}",
            get(readings::by_device_and_resource),
        ),
        (
            "/reading/start/{start}/end/{end}",
            get(readings::by_time_range),
        ),
        (
            "/reading/resourceName/{resourceName}/start/{start}/end/{end}",
            get(readings::by_resource_and_time_range),
        ),
        (
            "/reading/device/name/{deviceName}/resourceName/{resourceName}/start/{start}/end/{end}",
            get(readings::by_device_resource_and_time_range),
        ),
        (
            "/reading/device/name/{deviceName}/start/{start}/end/{end}",
            get(readings::by_device_and_time_range),
        ),
        ("/ping", get(system::ping)),
        ("/version", get(system::version)),
        ("/config", get(system::config)),
    ];
    let mut router = Router::new();
    for (path, method_router) in routes {
        router = router.route(&format!("{API}{path}"), method_router);
    }
    router
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn(edgex_headers))
        .with_state(state)
}

async fn not_found(uri: Uri) -> Response {
    ApiError::new(
        StatusCode::NOT_FOUND,
        format!("no route {}: core-data routes start with {API}", uri.path()),
    )
    .into_response()
}

async fn method_not_allowed(request: Request) -> Response {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!(
            "{} is not allowed on {}",
            request.method(),
            request.uri().path()
        ),
    )
    .into_response()
}

/// Sets `Content-Type` and `X-Correlation-ID` on every answer.
async fn edgex_headers(request: Request, next: Next) -> Response {
    let correlation = request
        .headers()
        .get(&CORRELATION_ID)
        .filter(|v| !v.is_empty())
        .cloned()
        .unwrap_or_else(|| {
            HeaderValue::from_str(&crate::edgex::new_uuid())
                .unwrap_or(HeaderValue::from_static("-"))
        });
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(CORRELATION_ID, correlation);
    response
}

//! The reading routes: counts and the nine lists (all, by device, by resource, by device and
//! resource, each with or without a time range, plus by device and time range).
//!
//! Lists run the list query, then the count ([`super::list`]).
//! v4.0.2's `numeric` query parameter is accepted and ignored: values always travel as text,
//! which is its default. The body that `/reading/device/name/{deviceName}/start/.../end/...`
//! may carry (a list of resource names) is not read; the route answers every resource of the
//! device, which is what EdgeX answers for an empty body.

use axum::extract::State;
use axum::http::Uri;
use axum::Json;

use super::errors::ApiError;
use super::list::{self, list_and_count};
use super::query::{self, Params, Scope};
use super::routes::AppState;
use crate::edgex::dto::{BaseResponse, CountResponse, MultiReadingsResponse, ReadingDto};

type Listed = Result<Json<MultiReadingsResponse>, ApiError>;

/// `GET /reading/all`.
pub async fn all(State(state): State<AppState>, uri: Uri) -> Listed {
    list(state, Scope::default(), &uri).await
}

/// `GET /reading/device/name/{name}`.
pub async fn by_device(
    State(state): State<AppState>,
    Params(device): Params<String>,
    uri: Uri,
) -> Listed {
    let scope = Scope {
        device: Some(device),
        ..Scope::default()
    };
    list(state, scope, &uri).await
}

/// `GET /reading/resourceName/{resourceName}`.
pub async fn by_resource(
    State(state): State<AppState>,
    Params(resource): Params<String>,
    uri: Uri,
) -> Listed {
    let scope = Scope {
        resource: Some(resource),
        ..Scope::default()
    };
    list(state, scope, &uri).await
}

/// `GET /reading/device/name/{deviceName}/resourceName/{resourceName}`.
pub async fn by_device_and_resource(
    State(state): State<AppState>,
    Params((device, resource)): Params<(String, String)>,
    uri: Uri,
) -> Listed {
    let scope = Scope {
        device: Some(device),
        resource: Some(resource),
        range: None,
    };
    list(state, scope, &uri).await
}

/// `GET /reading/start/{start}/end/{end}`.
pub async fn by_time_range(
    State(state): State<AppState>,
    Params((start, end)): Params<(String, String)>,
    uri: Uri,
) -> Listed {
    let scope = Scope {
        range: Some(query::time_range(&start, &end)?),
        ..Scope::default()
    };
    list(state, scope, &uri).await
}

/// `GET /reading/resourceName/{resourceName}/start/{start}/end/{end}`.
pub async fn by_resource_and_time_range(
    State(state): State<AppState>,
    Params((resource, start, end)): Params<(String, String, String)>,
    uri: Uri,
) -> Listed {
    let scope = Scope {
        resource: Some(resource),
        range: Some(query::time_range(&start, &end)?),
        ..Scope::default()
    };
    list(state, scope, &uri).await
}

/// `GET /reading/device/name/{deviceName}/resourceName/{resourceName}/start/{start}/end/{end}`.
pub async fn by_device_resource_and_time_range(
    State(state): State<AppState>,
    Params((device, resource, start, end)): Params<(String, String, String, String)>,
    uri: Uri,
) -> Listed {
    let scope = Scope {
        device: Some(device),
        resource: Some(resource),
        range: Some(query::time_range(&start, &end)?),
    };
    list(state, scope, &uri).await
}

/// `GET /reading/device/name/{deviceName}/start/{start}/end/{end}`.
pub async fn by_device_and_time_range(
    State(state): State<AppState>,
    Params((device, start, end)): Params<(String, String, String)>,
    uri: Uri,
) -> Listed {
    let scope = Scope {
        device: Some(device),
        range: Some(query::time_range(&start, &end)?),
        ..Scope::default()
    };
    list(state, scope, &uri).await
}

async fn list(state: AppState, scope: Scope, uri: &Uri) -> Listed {
    let (readings, total_count) = list_and_count(
        &state,
        scope,
        uri,
        |store, filter, page| store.readings(filter, page),
        |store, filter| store.reading_count(filter),
    )
    .await?;
    Ok(Json(MultiReadingsResponse {
        base: BaseResponse::status(200),
        total_count,
        readings: readings.iter().map(ReadingDto::of).collect(),
    }))
}

/// `GET /reading/count`.
pub async fn count(State(state): State<AppState>) -> Result<Json<CountResponse>, ApiError> {
    count_of(state, Scope::default()).await
}

/// `GET /reading/count/device/name/{name}`.
pub async fn count_by_device(
    State(state): State<AppState>,
    Params(device): Params<String>,
) -> Result<Json<CountResponse>, ApiError> {
    let scope = Scope {
        device: Some(device),
        ..Scope::default()
    };
    count_of(state, scope).await
}

async fn count_of(state: AppState, scope: Scope) -> Result<Json<CountResponse>, ApiError> {
    list::count(&state, scope, |store, filter| store.reading_count(filter)).await
}

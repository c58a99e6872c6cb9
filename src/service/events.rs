//! The event routes other than the add: by id, counts, lists and bulk deletes.
//!
//! Lists run the list query, then the count ([`super::list`]).
//!
//! Bulk deletes (`DELETE /event/device/name/{name}`, `DELETE /event/age/{age}`) answer 202 as
//! EdgeX does, but only after the delete has finished: EdgeX answers first and deletes in a
//! goroutine, so a count right after its 202 may still see the events. edgebench finishes
//! first so that a delete's cost is measured by the request that caused it, and a failed
//! delete is a 500 the client sees rather than a log line. A client written for EdgeX (which
//! polls until the count drops) works unchanged.

use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::Json;

use super::errors::ApiError;
use super::list::{self, list_and_count};
use super::query::{self, Params, Scope};
use super::routes::AppState;
use crate::edgex::dto::{
    BaseResponse, CountResponse, EventDto, EventResponse, MultiEventsResponse,
};
use crate::edgex::normalize_uuid;
use crate::store::edgex::Doomed;

/// `GET /event/all`.
pub async fn all(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Json<MultiEventsResponse>, ApiError> {
    list(state, Scope::default(), &uri).await
}

/// `GET /event/device/name/{name}`.
pub async fn by_device(
    State(state): State<AppState>,
    Params(name): Params<String>,
    uri: Uri,
) -> Result<Json<MultiEventsResponse>, ApiError> {
    let scope = Scope {
        device: Some(name),
        ..Scope::default()
    };
    list(state, scope, &uri).await
}

/// `GET /event/start/{start}/end/{end}`.
pub async fn by_time_range(
    State(state): State<AppState>,
    Params((start, end)): Params<(String, String)>,
    uri: Uri,
) -> Result<Json<MultiEventsResponse>, ApiError> {
    let scope = Scope {
        range: Some(query::time_range(&start, &end)?),
        ..Scope::default()
    };
    list(state, scope, &uri).await
}

async fn list(
    state: AppState,
    scope: Scope,
    uri: &Uri,
) -> Result<Json<MultiEventsResponse>, ApiError> {
    let (events, total_count) = list_and_count(
        &state,
        scope,
        uri,
        |store, filter, page| store.events(filter, page),
        |store, filter| store.event_count(filter),
    )
    .await?;
    Ok(Json(MultiEventsResponse {
        base: BaseResponse::status(200),
        total_count,
        events: events.iter().map(EventDto::of).collect(),
    }))
}

/// `GET /event/id/{id}`.
pub async fn by_id(
    State(state): State<AppState>,
    Params(id): Params<String>,
) -> Result<Json<EventResponse>, ApiError> {
    let id = uuid(&id)?;
    let event = state.pool.run(move |store| store.event_by_id(&id)).await?;
    Ok(Json(EventResponse {
        base: BaseResponse::status(200),
        event: EventDto::of(&event),
    }))
}

/// `DELETE /event/id/{id}`.
pub async fn delete_by_id(
    State(state): State<AppState>,
    Params(id): Params<String>,
) -> Result<Json<BaseResponse>, ApiError> {
    let id = uuid(&id)?;
    state
        .pool
        .run(move |store| store.delete_event_by_id(&id))
        .await?;
    Ok(Json(BaseResponse::status(200)))
}

/// The id of a by-id route, lowercased; 404 when it is not a UUID: no event can have it, and
/// the v4.0.2 specification lists 200, 404 and 500 for these routes, not 400.
fn uuid(text: &str) -> Result<String, ApiError> {
    normalize_uuid(text).ok_or_else(|| {
        ApiError::new(
            axum::http::StatusCode::NOT_FOUND,
            format!("event {text} not found: event ids are UUIDs, and this is not one"),
        )
    })
}

/// `GET /event/count`.
pub async fn count(State(state): State<AppState>) -> Result<Json<CountResponse>, ApiError> {
    count_of(state, Scope::default()).await
}

/// `GET /event/count/device/name/{name}`.
pub async fn count_by_device(
    State(state): State<AppState>,
    Params(name): Params<String>,
) -> Result<Json<CountResponse>, ApiError> {
    let scope = Scope {
        device: Some(name),
        ..Scope::default()
    };
    count_of(state, scope).await
}

async fn count_of(state: AppState, scope: Scope) -> Result<Json<CountResponse>, ApiError> {
    list::count(&state, scope, |store, filter| store.event_count(filter)).await
}

/// `DELETE /event/device/name/{name}`: 202 once deleted.
pub async fn delete_by_device(
    State(state): State<AppState>,
    Params(name): Params<String>,
) -> Result<(StatusCode, Json<BaseResponse>), ApiError> {
    // EdgeX refuses only the empty name; a name of whitespace (`%0A`) is a name like any
    // other, deletes nothing and answers 202, as the spec documents (202 or 500, no 400).
    if name.is_empty() {
        return Err(ApiError::bad_request("blank device name is not allowed"));
    }
    state
        .pool
        .run(move |store| store.delete_events(Doomed::Device(&name)))
        .await?;
    Ok(accepted())
}

/// `DELETE /event/age/{age}`: 202 once deleted.
pub async fn delete_by_age(
    State(state): State<AppState>,
    Params(age): Params<String>,
) -> Result<(StatusCode, Json<BaseResponse>), ApiError> {
    let age_ns = query::age(&age)?;
    state
        .pool
        .run(move |store| store.delete_events(Doomed::OlderThan { age_ns }))
        .await?;
    Ok(accepted())
}

fn accepted() -> (StatusCode, Json<BaseResponse>) {
    let status = StatusCode::ACCEPTED;
    (status, Json(BaseResponse::status(status.as_u16())))
}

//! `POST /api/v3/event/{serviceName}/{profileName}/{deviceName}/{sourceName}`: one event in,
//! checked in EdgeX's order (`controller/http/event.go` `AddEvent`, then the application's
//! `ValidateEvent` and `AddEvent`):
//!
//! 1. a blank `serviceName` is 400;
//! 2. a body larger than MaxEventSize KB is 413, by its `Content-Length` before reading, and
//!    by a limited reader when the length is not announced (chunked), so an oversized body is
//!    never buffered whole;
//! 3. the body is decoded as CBOR for `Content-Type: application/cbor` and as JSON for
//!    `application/json` or no content type; any other type is 400. EdgeX itself decodes
//!    every non-CBOR type as JSON (`internal/io/reader.go` `NewDtoReader`); edgebench refuses
//!    it instead, so a client that sends the wrong type learns it at once;
//! 4. a body that does not decode is 400, and so is one that
//!    [`AddEventRequest::into_event`] rejects, with its message;
//! 5. the event's profile, device and source names must equal the path's, else 400 naming the
//!    mismatch (`event's profileName X mismatches Y`);
//! 6. with `Writable.PersistData` false the event is answered 201 and not stored; otherwise a
//!    duplicate id is 409 and success is 201 with a `BaseWithIdResponse` carrying the id and
//!    the request's `requestId`.
//!
//! EdgeX also republishes the body on its message bus (`edgex/events/core/…`); edgebench does
//! not: its bus subscriber ([`super::bus`]) only takes events in.

use axum::body::Body;
use axum::extract::State;
use axum::http::header::{CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::{HeaderMap, StatusCode};
use axum::Json;

use super::errors::ApiError;
use super::query::Params;
use super::routes::AppState;
use crate::edgex::dto::{AddEventRequest, BaseResponse, BaseWithIdResponse};
use crate::edgex::Event;

/// The four path names of an added event.
pub struct EventPath {
    service: String,
    profile: String,
    device: String,
    source: String,
}

/// The route itself.
pub async fn add_event(
    State(state): State<AppState>,
    Params((service, profile, device, source)): Params<(String, String, String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, Json<BaseWithIdResponse>), ApiError> {
    let path = EventPath {
        service,
        profile,
        device,
        source,
    };
    add(state, path, headers, body).await
}

/// `POST /event/start/{profile}/end/{source}`: the add route for a service named `start`
/// and a device named `end`, which the time-range route's static segments shadow.
pub async fn add_event_shadowed_by_range(
    State(state): State<AppState>,
    Params((profile, source)): Params<(String, String)>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, Json<BaseWithIdResponse>), ApiError> {
    let path = EventPath {
        service: "start".into(),
        profile,
        device: "end".into(),
        source,
    };
    add(state, path, headers, body).await
}

/// `POST /event/count/device/name/{source}`: the add route for service `count`, profile
/// `device`, device `name`, which the count route's static segments shadow.
pub async fn add_event_shadowed_by_count(
    State(state): State<AppState>,
    Params(source): Params<String>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, Json<BaseWithIdResponse>), ApiError> {
    let path = EventPath {
        service: "count".into(),
        profile: "device".into(),
        device: "name".into(),
        source,
    };
    add(state, path, headers, body).await
}

async fn add(
    state: AppState,
    path: EventPath,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, Json<BaseWithIdResponse>), ApiError> {
    if path.service.trim().is_empty() {
        return Err(ApiError::bad_request(
            "service name sending event can not be empty",
        ));
    }
    let encoding = Encoding::of(&headers)?;
    let bytes = read_body(&state, &headers, body).await?;
    let request = encoding.decode(&bytes)?;
    // An invalid `requestId` is itself a 400 (from `into_event`), answered with none.
    let request_id = request.valid_request_id().unwrap_or_default().to_string();
    let event = request
        .into_event()
        .map_err(|e| ApiError::bad_request(e.0).for_request(&request_id))?;
    check_names(&event, &path).map_err(|e| e.for_request(&request_id))?;
    let id = event.id.clone();
    if state.cfg.persist {
        state
            .pool
            .run(move |store| store.add_event(&event))
            .await
            .map_err(|e| ApiError::from(e).for_request(&request_id))?;
    }
    let created = StatusCode::CREATED;
    let response = BaseWithIdResponse {
        base: BaseResponse {
            request_id,
            ..BaseResponse::status(created.as_u16())
        },
        id,
    };
    Ok((created, Json(response)))
}

/// How the body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Encoding {
    Json,
    Cbor,
}

impl Encoding {
    fn of(headers: &HeaderMap) -> Result<Encoding, ApiError> {
        let Some(value) = headers.get(CONTENT_TYPE) else {
            return Ok(Encoding::Json);
        };
        let text = value.to_str().unwrap_or("?").to_ascii_lowercase();
        // "application/json; charset=utf-8" is JSON: parameters do not change the type.
        match text.split(';').next().unwrap_or("").trim() {
            "" | "application/json" => Ok(Encoding::Json),
            "application/cbor" => Ok(Encoding::Cbor),
            other => Err(ApiError::bad_request(format!(
                "unsupported Content-Type {other}: send the event as application/json or \
                 application/cbor"
            ))),
        }
    }

    fn decode(self, bytes: &[u8]) -> Result<AddEventRequest, ApiError> {
        match self {
            Encoding::Json => serde_json::from_slice(bytes).map_err(|e| {
                ApiError::bad_request(format!("AddEventRequest json decoding failed: {e}"))
            }),
            Encoding::Cbor => ciborium::from_reader(bytes).map_err(|e| {
                ApiError::bad_request(format!("AddEventRequest cbor decoding failed: {e}"))
            }),
        }
    }
}

/// Reads the whole body, at most MaxEventSize KB of it.
async fn read_body(state: &AppState, headers: &HeaderMap, body: Body) -> Result<Vec<u8>, ApiError> {
    let limit = state.cfg.max_event_bytes();
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("request size exceed {} KB", state.cfg.max_event_size_kb),
        )
    };
    let announced = headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let (Some(limit), Some(length)) = (limit, announced) {
        if length > limit as u64 {
            return Err(too_large());
        }
    }
    match axum::body::to_bytes(body, limit.unwrap_or(usize::MAX)).await {
        Ok(bytes) => Ok(bytes.to_vec()),
        Err(e) if is_length_limit(&e) => Err(too_large()),
        Err(e) => Err(ApiError::bad_request(format!(
            "AddEventRequest I/O reading failed: {e}"
        ))),
    }
}

/// Whether a body error is the reader's limit (and not a broken connection).
fn is_length_limit(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = err.source();
    }
    false
}

/// EdgeX's `ValidateEvent`: the path names the event's profile, device and source.
fn check_names(event: &Event, path: &EventPath) -> Result<(), ApiError> {
    let pairs = [
        ("profileName", &event.profile_name, &path.profile),
        ("deviceName", &event.device_name, &path.device),
        ("sourceName", &event.source_name, &path.source),
    ];
    for (field, in_body, in_path) in pairs {
        if in_body != in_path {
            return Err(ApiError::bad_request(format!(
                "event's {field} {in_body} mismatches {in_path}"
            )));
        }
    }
    Ok(())
}

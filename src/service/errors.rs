//! Errors as the API answers them: an HTTP status and EdgeX's `BaseResponse` body (its
//! `ErrorResponse`: `apiVersion`, `requestId`, `statusCode`, `message`), and the status each
//! store error maps to.
//!
//! The mapping follows EdgeX's error kinds (`go-mod-core-contracts/errors`): a missing record
//! is 404 (`KindEntityDoesNotExist`), a duplicate id 409 (`KindDuplicateName`), a malformed
//! id 400 (`KindInvalidId`), anything else the store fails with 500 (`KindServerError`). A
//! store without some call ([`StoreError::Unsupported`]) is also 500, with the store's message:
//! EdgeX has no "not implemented" answer on these routes.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::edgex::dto::BaseResponse;
use crate::store::StoreError;

/// One error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status, repeated as `statusCode` in the body.
    pub status: StatusCode,
    /// The body's `message`.
    pub message: String,
    /// The request's `requestId`, when the body had one.
    pub request_id: String,
}

impl ApiError {
    /// An error with this status and message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
            request_id: String::new(),
        }
    }

    /// 400: the request is malformed.
    pub fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// The same error, answering the request with this `requestId`.
    pub fn for_request(self, request_id: &str) -> Self {
        ApiError {
            request_id: request_id.to_string(),
            ..self
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        let status = match &e {
            StoreError::NotFound { .. } => StatusCode::NOT_FOUND,
            StoreError::Duplicate { .. } => StatusCode::CONFLICT,
            StoreError::InvalidId(_) => StatusCode::BAD_REQUEST,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = BaseResponse {
            request_id: self.request_id,
            ..BaseResponse::error(self.status.as_u16(), self.message)
        };
        (self.status, Json(body)).into_response()
    }
}

//! The service's own routes: `/ping` (health), `/version` and `/config`, with the DTOs of the
//! v4.0.2 specification (`PingResponse`, `VersionResponse`, `ConfigResponse`: no
//! `statusCode`, unlike the data routes).

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::routes::AppState;
use crate::edgex::API_VERSION;

/// `PingResponse`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PingResponse {
    /// `v3`.
    pub api_version: String,
    /// Now, RFC 1123 as Go's `time.RFC1123` writes it: `Mon, 02 Jan 2006 15:04:05 UTC`.
    pub timestamp: String,
    /// The service's name.
    pub service_name: String,
}

/// `VersionResponse`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VersionResponse {
    /// `v3`.
    pub api_version: String,
    /// edgebench's version (the service is edgebench's, whatever API it speaks).
    pub version: String,
    /// The service's name.
    pub service_name: String,
}

/// `ConfigResponse`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigResponse {
    /// `v3`.
    pub api_version: String,
    /// The settings, under EdgeX's key names ([`super::ServiceConfig::as_edgex_json`]).
    pub config: Value,
    /// The service's name.
    pub service_name: String,
}

/// `GET /ping`.
pub async fn ping(State(state): State<AppState>) -> Json<PingResponse> {
    Json(PingResponse {
        api_version: API_VERSION.to_string(),
        timestamp: rfc1123(chrono::Utc::now()),
        service_name: state.cfg.service_name.clone(),
    })
}

/// `GET /version`.
pub async fn version(State(state): State<AppState>) -> Json<VersionResponse> {
    Json(VersionResponse {
        api_version: API_VERSION.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        service_name: state.cfg.service_name.clone(),
    })
}

/// `GET /config`.
pub async fn config(State(state): State<AppState>) -> Json<ConfigResponse> {
    Json(ConfigResponse {
        api_version: API_VERSION.to_string(),
        config: state.cfg.as_edgex_json(),
        service_name: state.cfg.service_name.clone(),
    })
}

/// Go's `time.RFC1123` of a UTC time.
fn rfc1123(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%a, %d %b %Y %H:%M:%S UTC").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn timestamps_are_rfc1123_as_go_writes_them() {
        let t = chrono::Utc.with_ymd_and_hms(2006, 1, 2, 15, 4, 5).unwrap();
        assert_eq!(rfc1123(t), "Mon, 02 Jan 2006 15:04:05 UTC");
    }
}

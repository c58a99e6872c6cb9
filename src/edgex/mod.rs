//! EdgeX core data as EdgeX 3.x and 4.x define it: events and readings with UUID ids,
//! nanosecond origins, profile/source/resource names, value types, and binary and object
//! values, plus their wire form (the `/api/v3` DTOs, in JSON and in CBOR).
//!
//! This is the data of the service path (issue 12): `edgebench coredata-service` speaks it over
//! HTTP, the EdgeX 3.1 Redis and EdgeX 4.0 PostgreSQL layouts store it, and the HTTP client
//! sends it. The 2018 PoC's model (ObjectIds, millisecond timestamps, one value string) stays in
//! [`crate::v2018`]; the ten benchmarks map onto this one in [`crate::store::edgex::as2018`].
//!
//! Field names, required fields and value types follow go-mod-core-contracts v4.0
//! (`dtos/event.go`, `dtos/reading.go`, `common/validator.go`) and the v4.0.2 OpenAPI
//! specification (edgexfoundry/edgex-go at v4.0.2, `openapi/core-data.yaml`).
//!
//! Invariant: an [`Event`] that left [`dto::AddEventRequest::into_event`] is valid: its id is
//! a lowercase UUID, it has at least one reading, and every reading has a value that matches
//! its value type. Stores may rely on it.

pub mod dto;
pub mod envelope;
#[doc(hidden)]
pub mod testing;

use serde_json::{Map, Value};

/// The API version every DTO carries.
pub const API_VERSION: &str = "v3";

/// One event: what one device source reported at one time.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// A UUID, lowercase, chosen by the sender.
    pub id: String,
    /// The device that produced the event.
    pub device_name: String,
    /// The device's profile.
    pub profile_name: String,
    /// The resource or command of the profile that produced the event.
    pub source_name: String,
    /// When the device produced the event, ns since the Unix epoch.
    pub origin: i64,
    /// The readings, in the order the device sent them. At least one.
    pub readings: Vec<Reading>,
    /// Free-form context (`tags` in the DTO); `None` when the sender sent none.
    pub tags: Option<Map<String, Value>>,
}

/// One reading of one device resource.
#[derive(Debug, Clone, PartialEq)]
pub struct Reading {
    /// A UUID, lowercase; empty when the store does not keep reading ids (EdgeX 4.0's
    /// PostgreSQL schema has no column for it).
    pub id: String,
    /// When the reading was taken, ns since the Unix epoch.
    pub origin: i64,
    /// The device.
    pub device_name: String,
    /// The device resource, e.g. "temperature".
    pub resource_name: String,
    /// The device's profile.
    pub profile_name: String,
    /// One of [`VALUE_TYPES`].
    pub value_type: String,
    /// Units of the value, may be empty.
    pub units: String,
    /// Free-form context; `None` when the sender sent none.
    pub tags: Option<Map<String, Value>>,
    /// The value.
    pub value: ReadingValue,
}

/// A reading's value: EdgeX's SimpleReading, BinaryReading or ObjectReading.
#[derive(Debug, Clone, PartialEq)]
pub enum ReadingValue {
    /// Every value type but `Binary` and `Object`/`ObjectArray`: the value as text.
    Simple(String),
    /// `Binary`: the bytes and their media type.
    Binary {
        /// The payload.
        data: Vec<u8>,
        /// A MIME type, e.g. `image/jpeg`.
        media_type: String,
    },
    /// `Object` and `ObjectArray`: any JSON value.
    Object(Value),
}

/// EdgeX's value types (`common/constants.go`), in the specification's order, plus
/// `ObjectArray`, which v3.1 added and the v4.0.2 specification's enum omits.
pub const VALUE_TYPES: [&str; 27] = [
    "Bool",
    "String",
    "Uint8",
    "Uint16",
    "Uint32",
    "Uint64",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "Float32",
    "Float64",
    "Binary",
    "BoolArray",
    "StringArray",
    "Uint8Array",
    "Uint16Array",
    "Uint32Array",
    "Uint64Array",
    "Int8Array",
    "Int16Array",
    "Int32Array",
    "Int64Array",
    "Float32Array",
    "Float64Array",
    "Object",
    "ObjectArray",
];

/// The kind of value a value type carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// Text in `value`.
    Simple,
    /// Bytes in `binaryValue`, with a `mediaType`.
    Binary,
    /// JSON in `objectValue`.
    Object,
}

/// The kind of value `value_type` carries, or `None` when it is not an EdgeX value type.
pub fn value_kind(value_type: &str) -> Option<ValueKind> {
    match value_type {
        "Binary" => Some(ValueKind::Binary),
        "Object" | "ObjectArray" => Some(ValueKind::Object),
        t if VALUE_TYPES.contains(&t) => Some(ValueKind::Simple),
        _ => None,
    }
}

/// Whether `value_type` is numeric (an integer or float scalar): EdgeX 4.0's PostgreSQL
/// schema keeps these in `numeric_value`.
pub fn is_numeric(value_type: &str) -> bool {
    matches!(
        value_type,
        "Uint8"
            | "Uint16"
            | "Uint32"
            | "Uint64"
            | "Int8"
            | "Int16"
            | "Int32"
            | "Int64"
            | "Float32"
            | "Float64"
    )
}

/// Parses a UUID in any of the forms the `uuid` crate reads and returns it hyphenated and
/// lowercase, the form every store keys on; `None` when `text` is not a UUID.
pub fn normalize_uuid(text: &str) -> Option<String> {
    uuid::Uuid::parse_str(text)
        .ok()
        .map(|u| u.hyphenated().to_string())
}

/// Now, ns since the Unix epoch, the unit of every EdgeX origin (0 if the clock is before the
/// epoch, `i64::MAX` after 2262).
pub fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

/// A fresh random (v4) UUID, hyphenated and lowercase.
pub fn new_uuid() -> String {
    uuid::Uuid::new_v4().hyphenated().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_kinds_follow_edgex_value_types() {
        assert_eq!(value_kind("Binary"), Some(ValueKind::Binary));
        assert_eq!(value_kind("Object"), Some(ValueKind::Object));
        assert_eq!(value_kind("ObjectArray"), Some(ValueKind::Object));
        assert_eq!(value_kind("Float64Array"), Some(ValueKind::Simple));
        assert_eq!(value_kind("Int8"), Some(ValueKind::Simple));
        assert_eq!(value_kind("int8"), None);
        assert!(is_numeric("Uint64") && !is_numeric("Uint64Array") && !is_numeric("Bool"));
    }

    #[test]
    fn uuids_normalize_to_lowercase_hyphenated() {
        assert_eq!(
            normalize_uuid("563513B3-F020-46FA-AE44-0FDD1D129185").as_deref(),
            Some("563513b3-f020-46fa-ae44-0fdd1d129185")
        );
        assert_eq!(normalize_uuid("not-a-uuid"), None);
        assert_eq!(normalize_uuid(&new_uuid()).map(|u| u.len()), Some(36));
    }
}

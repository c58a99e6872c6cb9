//! The stored JSON of an event and a reading, as Go's `encoding/json` writes EdgeX 3.1's
//! contract models (go-mod-core-contracts v3.1.0 `models/event.go`, `models/reading.go`):
//! no json tags, so the keys are the Go field names in declaration order.
//!
//! - Event: `Id, DeviceName, ProfileName, SourceName, Origin, Readings, Tags`, with
//!   `"Readings":null` (EdgeX stores the readings under their own keys).
//! - Reading: `Id, Origin, DeviceName, ResourceName, ProfileName, ValueType, Units, Tags`, then
//!   `Value` (SimpleReading), `BinaryValue, MediaType` (BinaryReading) or `ObjectValue`
//!   (ObjectReading). `BinaryValue` is always `""`: EdgeX blanks the payload before storing
//!   (`emptyBinaryValue`, an empty non-nil `[]byte`, which Go writes as `""`).
//! - `Tags` is `null` when there are none. Object keys (tags, object values) are written sorted,
//!   as Go sorts the keys of a `map[string]any`.
//!
//! Not reproduced: Go escapes `<`, `>`, `&`, U+2028 and U+2029 in strings and writes floats in
//! its own shortest form; serde_json does neither. No benchmark dataset has such characters.
//!
//! Decoding reads `ValueType` first, as EdgeX's `convertObjectsToReadings` does: `Binary` is a
//! binary reading (no bytes, media type kept), `Object`/`ObjectArray` an object reading, any
//! other type a simple one. Missing fields decode as empty, as Go's decoder leaves them.

use serde::ser::{SerializeMap, SerializeSeq, SerializeStruct};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::edgex::{value_kind, Event, Reading, ReadingValue, ValueKind};
use crate::store::StoreError;

/// An event as EdgeX stores it under `cd|evt:<id>` (its readings left out).
pub(super) struct StoredEvent<'a>(pub &'a Event);

impl Serialize for StoredEvent<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let e = self.0;
        let mut out = s.serialize_struct("Event", 7)?;
        out.serialize_field("Id", &e.id)?;
        out.serialize_field("DeviceName", &e.device_name)?;
        out.serialize_field("ProfileName", &e.profile_name)?;
        out.serialize_field("SourceName", &e.source_name)?;
        out.serialize_field("Origin", &e.origin)?;
        out.serialize_field("Readings", &())?;
        out.serialize_field("Tags", &e.tags.as_ref().map(GoMap))?;
        out.end()
    }
}

/// A reading as EdgeX stores it under `cd|rd:<id>`, binary payload blanked.
pub(super) struct StoredReading<'a>(pub &'a Reading);

impl Serialize for StoredReading<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let fields = match r.value {
            ReadingValue::Binary { .. } => 10,
            _ => 9,
        };
        let mut out = s.serialize_struct("Reading", fields)?;
        out.serialize_field("Id", &r.id)?;
        out.serialize_field("Origin", &r.origin)?;
        out.serialize_field("DeviceName", &r.device_name)?;
        out.serialize_field("ResourceName", &r.resource_name)?;
        out.serialize_field("ProfileName", &r.profile_name)?;
        out.serialize_field("ValueType", &r.value_type)?;
        out.serialize_field("Units", &r.units)?;
        out.serialize_field("Tags", &r.tags.as_ref().map(GoMap))?;
        match &r.value {
            ReadingValue::Simple(value) => out.serialize_field("Value", value)?,
            ReadingValue::Binary { media_type, .. } => {
                out.serialize_field("BinaryValue", "")?;
                out.serialize_field("MediaType", media_type)?;
            }
            ReadingValue::Object(value) => out.serialize_field("ObjectValue", &GoValue(value))?,
        }
        out.end()
    }
}

/// A JSON value written with its object keys sorted, as Go writes a `map[string]any`.
struct GoValue<'a>(&'a Value);

impl Serialize for GoValue<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Value::Object(map) => GoMap(map).serialize(s),
            Value::Array(items) => {
                let mut out = s.serialize_seq(Some(items.len()))?;
                for item in items {
                    out.serialize_element(&GoValue(item))?;
                }
                out.end()
            }
            other => other.serialize(s),
        }
    }
}

/// A JSON object written with its keys sorted.
struct GoMap<'a>(&'a Map<String, Value>);

impl Serialize for GoMap<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut entries: Vec<_> = self.0.iter().collect();
        entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let mut out = s.serialize_map(Some(entries.len()))?;
        for (key, value) in entries {
            out.serialize_entry(key, &GoValue(value))?;
        }
        out.end()
    }
}

/// The fields of a stored event (`Readings` is ignored: it is always null).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "PascalCase")]
struct EventRecord {
    id: String,
    device_name: String,
    profile_name: String,
    source_name: String,
    origin: i64,
    tags: Option<Map<String, Value>>,
}

/// The fields of a stored reading of any kind (`BinaryValue` is ignored: it is always blank).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "PascalCase")]
struct ReadingRecord {
    id: String,
    origin: i64,
    device_name: String,
    resource_name: String,
    profile_name: String,
    value_type: String,
    units: String,
    tags: Option<Map<String, Value>>,
    value: String,
    media_type: String,
    object_value: Value,
}

/// What a bulk delete needs of a stored record: the id and the names in its index keys
/// (EdgeX decodes a `BaseReading` / `Event` for the same purpose). `ResourceName` is absent
/// from events and decodes as empty.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "PascalCase")]
pub(super) struct IndexedNames {
    pub id: String,
    pub device_name: String,
    pub resource_name: String,
}

/// What a source query needs of a stored event (EdgeX 3.1 indexes no source, so the record
/// says it).
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "PascalCase")]
pub(super) struct SourceOrigin {
    pub device_name: String,
    pub source_name: String,
    pub origin: i64,
}

/// The device, source and origin of the event stored under `key`.
pub(super) fn decode_source(key: &str, json: &[u8]) -> Result<SourceOrigin, StoreError> {
    decode(key, "event", json)
}

/// The event stored under `key`, without its readings.
pub(super) fn decode_event(key: &str, json: &[u8]) -> Result<Event, StoreError> {
    let e: EventRecord = decode(key, "event", json)?;
    Ok(Event {
        id: e.id,
        device_name: e.device_name,
        profile_name: e.profile_name,
        source_name: e.source_name,
        origin: e.origin,
        readings: Vec::new(),
        tags: e.tags,
    })
}

/// The reading stored under `key`.
pub(super) fn decode_reading(key: &str, json: &[u8]) -> Result<Reading, StoreError> {
    let r: ReadingRecord = decode(key, "reading", json)?;
    let value = match value_kind(&r.value_type) {
        Some(ValueKind::Binary) => ReadingValue::Binary {
            data: Vec::new(),
            media_type: r.media_type,
        },
        Some(ValueKind::Object) => ReadingValue::Object(r.object_value),
        Some(ValueKind::Simple) | None => ReadingValue::Simple(r.value),
    };
    Ok(Reading {
        id: r.id,
        origin: r.origin,
        device_name: r.device_name,
        resource_name: r.resource_name,
        profile_name: r.profile_name,
        value_type: r.value_type,
        units: r.units,
        tags: r.tags,
        value,
    })
}

/// The id and index names of the record stored under `key`.
pub(super) fn decode_names(
    key: &str,
    kind: &'static str,
    json: &[u8],
) -> Result<IndexedNames, StoreError> {
    decode(key, kind, json)
}

fn decode<'de, T: Deserialize<'de>>(
    key: &str,
    kind: &'static str,
    json: &'de [u8],
) -> Result<T, StoreError> {
    serde_json::from_slice(json).map_err(|e| StoreError::Decode {
        kind,
        id: key.to_owned(),
        reason: e.to_string(),
    })
}

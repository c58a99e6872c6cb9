//! The layout's documents: an event with its readings embedded, and a reading on its own
//! (the same fields plus `event`), as written (`...Out`, borrowing the record) and as read
//! (`...In`). Field names are EdgeX's DTO names (`deviceName`, `valueType`, `binaryValue`...),
//! so a document reads like the JSON EdgeX sends.

use mongodb::bson::Binary;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::edgex::{normalize_uuid, value_kind, Event, Reading, ReadingValue, ValueKind};
use crate::store::{StoreError, StoreResult};

/// Bytes written as BSON binary (subtype 0) without copying them.
struct Bytes<'a>(&'a [u8]);

impl Serialize for Bytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

/// A reading as written: embedded in its event (`event` is `None`), or in `reading`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ReadingOut<'a> {
    #[serde(rename = "_id")]
    id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    event: Option<&'a str>,
    device_name: &'a str,
    resource_name: &'a str,
    profile_name: &'a str,
    origin: i64,
    value_type: &'a str,
    units: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    tags: Option<&'a Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    binary_value: Option<Bytes<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    media_type: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    object_value: Option<&'a Value>,
}

impl<'a> ReadingOut<'a> {
    /// `r` under id `id` (its stored form), in `event` when it is the `reading` document.
    pub(super) fn of(r: &'a Reading, id: &'a str, event: Option<&'a str>) -> Self {
        let (mut value, mut binary_value, mut media_type, mut object_value) =
            (None, None, None, None);
        match &r.value {
            ReadingValue::Simple(v) => value = Some(v.as_str()),
            ReadingValue::Binary {
                data,
                media_type: m,
            } => {
                binary_value = Some(Bytes(data));
                media_type = Some(m.as_str());
            }
            ReadingValue::Object(v) => object_value = Some(v),
        }
        ReadingOut {
            id,
            event,
            device_name: &r.device_name,
            resource_name: &r.resource_name,
            profile_name: &r.profile_name,
            origin: r.origin,
            value_type: &r.value_type,
            units: &r.units,
            tags: r.tags.as_ref(),
            value,
            binary_value,
            media_type,
            object_value,
        }
    }
}

/// A reading as read (the `event` of a `reading` document is not read).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ReadingIn {
    #[serde(rename = "_id")]
    id: String,
    device_name: String,
    resource_name: String,
    profile_name: String,
    origin: i64,
    value_type: String,
    #[serde(default)]
    units: String,
    #[serde(default)]
    tags: Option<Map<String, Value>>,
    #[serde(default)]
    value: Option<String>,
    #[serde(default)]
    binary_value: Option<Binary>,
    #[serde(default)]
    media_type: Option<String>,
    #[serde(default)]
    object_value: Option<Value>,
}

impl ReadingIn {
    /// The reading; its value is the field its value type names (an `Object` whose
    /// `objectValue` is BSON null reads as JSON null).
    pub(super) fn into_reading(self) -> StoreResult<Reading> {
        let value = match (value_kind(&self.value_type), self.binary_value, self.value) {
            (Some(ValueKind::Object), _, _) => {
                ReadingValue::Object(self.object_value.unwrap_or(Value::Null))
            }
            (Some(ValueKind::Binary), Some(binary), _) => ReadingValue::Binary {
                data: binary.bytes,
                media_type: self.media_type.unwrap_or_default(),
            },
            (Some(ValueKind::Simple) | None, _, Some(text)) => ReadingValue::Simple(text),
            _ => {
                return Err(StoreError::Decode {
                    kind: "reading",
                    id: self.id,
                    reason: format!(
                        "value type {} but no value field for it (value, binaryValue or \
                         objectValue)",
                        self.value_type
                    ),
                })
            }
        };
        Ok(Reading {
            id: self.id,
            origin: self.origin,
            device_name: self.device_name,
            resource_name: self.resource_name,
            profile_name: self.profile_name,
            value_type: self.value_type,
            units: self.units,
            tags: self.tags,
            value,
        })
    }
}

/// An event as written, its readings embedded in the order sent.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EventOut<'a> {
    #[serde(rename = "_id")]
    id: &'a str,
    device_name: &'a str,
    profile_name: &'a str,
    source_name: &'a str,
    origin: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    tags: Option<&'a Map<String, Value>>,
    readings: Vec<ReadingOut<'a>>,
}

impl<'a> EventOut<'a> {
    /// `e` under its stored ids `ids`.
    pub(super) fn of(e: &'a Event, ids: &'a StoredIds) -> Self {
        EventOut {
            id: &ids.event,
            device_name: &e.device_name,
            profile_name: &e.profile_name,
            source_name: &e.source_name,
            origin: e.origin,
            tags: e.tags.as_ref(),
            readings: e
                .readings
                .iter()
                .zip(&ids.readings)
                .map(|(r, id)| ReadingOut::of(r, id, None))
                .collect(),
        }
    }
}

/// An event as read.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EventIn {
    #[serde(rename = "_id")]
    id: String,
    device_name: String,
    profile_name: String,
    source_name: String,
    origin: i64,
    #[serde(default)]
    tags: Option<Map<String, Value>>,
    #[serde(default)]
    readings: Vec<ReadingIn>,
}

impl EventIn {
    /// The event, with its readings in the order they were sent.
    pub(super) fn into_event(self) -> StoreResult<Event> {
        Ok(Event {
            id: self.id,
            device_name: self.device_name,
            profile_name: self.profile_name,
            source_name: self.source_name,
            origin: self.origin,
            readings: self
                .readings
                .into_iter()
                .map(ReadingIn::into_reading)
                .collect::<StoreResult<_>>()?,
            tags: self.tags,
        })
    }
}

/// The stored (lowercase, hyphenated) ids of an event and of its readings, in order.
pub(super) struct StoredIds {
    pub(super) event: String,
    pub(super) readings: Vec<String>,
}

impl StoredIds {
    /// The ids of `e` in stored form; an id that is not a UUID cannot be stored.
    pub(super) fn of(e: &Event) -> StoreResult<StoredIds> {
        let event = normalize_uuid(&e.id).ok_or_else(|| not_a_uuid("event", &e.id, &e.id))?;
        let readings = e
            .readings
            .iter()
            .map(|r| normalize_uuid(&r.id).ok_or_else(|| not_a_uuid("reading", &r.id, &event)))
            .collect::<StoreResult<_>>()?;
        Ok(StoredIds { event, readings })
    }
}

fn not_a_uuid(kind: &str, id: &str, event: &str) -> StoreError {
    let of = if kind == "event" {
        String::new()
    } else {
        format!(" of event {event}")
    };
    crate::store::mongo::backend_error(format!(
        "{kind} id {id:?}{of} is not a UUID: EdgeX ids are UUIDs (this layout keys documents \
         by them)"
    ))
}

/// The `_id` of a projected `{_id}` document.
#[derive(Deserialize)]
pub(super) struct IdOnly {
    #[serde(rename = "_id")]
    pub(super) id: String,
}

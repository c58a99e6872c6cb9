//! The `/api/v3` wire form: request and response DTOs with EdgeX's field names, in JSON and in
//! CBOR, and the checks go-mod-core-contracts makes when it decodes an `AddEventRequest`.
//!
//! One set of serde types serves both encodings. The one difference is `binaryValue`: Go's
//! `encoding/json` writes a `[]byte` as a base64 string, and fxamacker/cbor writes it as a CBOR
//! byte string. [`binary`] tells them apart by the serializer's `is_human_readable`
//! (true for serde_json, false for ciborium), as serde intends.
//!
//! Responses omit empty optional fields (`omitempty` in Go), so a reading read back from a store
//! that keeps no reading ids carries no `id`, and a success carries no `message`.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{normalize_uuid, value_kind, Event, Reading, ReadingValue, ValueKind, API_VERSION};

/// `AddEventRequest`: the body of `POST /api/v3/event/{service}/{profile}/{device}/{source}`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AddEventRequest {
    /// Required: the API version, `v3`.
    #[serde(default)]
    pub api_version: String,
    /// Optional: identifies the request.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request_id: String,
    /// The event.
    pub event: EventDto,
}

/// `Event` as it travels.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventDto {
    /// `v3`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// A UUID.
    #[serde(default)]
    pub id: String,
    /// Required.
    #[serde(default)]
    pub device_name: String,
    /// Required.
    #[serde(default)]
    pub profile_name: String,
    /// Required.
    #[serde(default)]
    pub source_name: String,
    /// Required, ns.
    #[serde(default)]
    pub origin: i64,
    /// At least one.
    #[serde(default)]
    pub readings: Vec<ReadingDto>,
    /// Optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Map<String, Value>>,
}

/// `Reading` as it travels: one flat object whatever the value kind.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadingDto {
    /// A UUID; optional on input (EdgeX generates one).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// Required, ns.
    #[serde(default)]
    pub origin: i64,
    /// Required.
    #[serde(default)]
    pub device_name: String,
    /// Required.
    #[serde(default)]
    pub resource_name: String,
    /// Required.
    #[serde(default)]
    pub profile_name: String,
    /// Required, one of [`super::VALUE_TYPES`].
    #[serde(default)]
    pub value_type: String,
    /// Optional.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub units: String,
    /// Optional.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Map<String, Value>>,
    /// A simple reading's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// A binary reading's bytes: base64 in JSON, a byte string in CBOR.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "binary")]
    pub binary_value: Option<Vec<u8>>,
    /// A binary reading's media type.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub media_type: String,
    /// An object reading's value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_value: Option<Value>,
}

/// The `AddEventRequest` of `event`, borrowed: it serializes (JSON and CBOR) exactly as
/// `AddEventRequest { api_version: "v3", request_id: "", event: EventDto::of(event) }` does,
/// without copying the event first. What a device publishes, once per event.
#[derive(Debug, Clone, Copy, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AddEventOf<'a> {
    api_version: &'static str,
    event: EventOf<'a>,
}

impl<'a> AddEventOf<'a> {
    /// The request of `event`.
    pub fn new(event: &'a Event) -> Self {
        AddEventOf {
            api_version: API_VERSION,
            event: EventOf(event),
        }
    }
}

/// [`EventDto`]'s form of a borrowed event.
#[derive(Debug, Clone, Copy)]
struct EventOf<'a>(&'a Event);

impl Serialize for EventOf<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Fields<'a> {
            api_version: &'static str,
            id: &'a str,
            device_name: &'a str,
            profile_name: &'a str,
            source_name: &'a str,
            origin: i64,
            readings: Readings<'a>,
            #[serde(skip_serializing_if = "Option::is_none")]
            tags: Option<&'a Map<String, Value>>,
        }
        let e = self.0;
        Fields {
            api_version: API_VERSION,
            id: &e.id,
            device_name: &e.device_name,
            profile_name: &e.profile_name,
            source_name: &e.source_name,
            origin: e.origin,
            readings: Readings(&e.readings),
            tags: e.tags.as_ref(),
        }
        .serialize(s)
    }
}

struct Readings<'a>(&'a [Reading]);

impl Serialize for Readings<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(ReadingOf))
    }
}

/// [`ReadingDto`]'s form of a borrowed reading.
struct ReadingOf<'a>(&'a Reading);

impl Serialize for ReadingOf<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Fields<'a> {
            #[serde(skip_serializing_if = "str::is_empty")]
            id: &'a str,
            origin: i64,
            device_name: &'a str,
            resource_name: &'a str,
            profile_name: &'a str,
            value_type: &'a str,
            #[serde(skip_serializing_if = "str::is_empty")]
            units: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            tags: Option<&'a Map<String, Value>>,
            #[serde(skip_serializing_if = "Option::is_none")]
            value: Option<&'a str>,
            #[serde(skip_serializing_if = "Option::is_none", with = "binary::borrowed")]
            binary_value: Option<&'a [u8]>,
            #[serde(skip_serializing_if = "str::is_empty")]
            media_type: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            object_value: Option<&'a Value>,
        }
        let r = self.0;
        let (mut value, mut binary_value, mut media_type, mut object_value) =
            (None, None, "", None);
        match &r.value {
            ReadingValue::Simple(v) => value = Some(v.as_str()),
            ReadingValue::Binary {
                data,
                media_type: m,
            } => {
                binary_value = Some(data.as_slice());
                media_type = m;
            }
            ReadingValue::Object(v) => object_value = Some(v),
        }
        Fields {
            id: &r.id,
            origin: r.origin,
            device_name: &r.device_name,
            resource_name: &r.resource_name,
            profile_name: &r.profile_name,
            value_type: &r.value_type,
            units: &r.units,
            tags: r.tags.as_ref(),
            value,
            binary_value,
            media_type,
            object_value,
        }
        .serialize(s)
    }
}

/// Why a request body is not a valid event. The message names the field, as EdgeX's validator
/// does, and is what the 400 answer carries.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

impl AddEventRequest {
    /// Checks the request as go-mod-core-contracts' `AddEventRequest.Validate` does and returns
    /// the event, ids lowercased. Reading ids are kept when given (checked to be UUIDs) and
    /// generated when empty, as EdgeX's `checkReadingValue` does.
    ///
    /// A `requestId` must be empty or a UUID in its canonical form (go-mod-core-contracts'
    /// `validate:"len=0|uuid"`, go-playground's lowercase `8-4-4-4-12` pattern). The answer
    /// echoes it, and the specification says it is a UUID, so one that is not is refused here
    /// and the refusal carries none ([`AddEventRequest::valid_request_id`]).
    pub fn into_event(self) -> Result<Event, Invalid> {
        if self.api_version.is_empty() {
            return Err(Invalid("AddEventRequest.ApiVersion is required".into()));
        }
        if self.valid_request_id().is_none() {
            return Err(Invalid(format!(
                "AddEventRequest.RequestId {:?} is not a UUID (give none, or one such as \
                 7a1b2c3d-0000-4000-8000-000000000001)",
                self.request_id
            )));
        }
        self.event.into_event()
    }

    /// The `requestId` when it may be echoed: empty or a canonical lowercase UUID; `None` for
    /// anything else, which an answer must not repeat.
    pub fn valid_request_id(&self) -> Option<&str> {
        let id = self.request_id.as_str();
        let canonical = id.len() == 36
            && id.bytes().enumerate().all(|(i, b)| match i {
                8 | 13 | 18 | 23 => b == b'-',
                _ => b.is_ascii_digit() || (b'a'..=b'f').contains(&b),
            });
        (id.is_empty() || canonical).then_some(id)
    }
}

impl EventDto {
    /// See [`AddEventRequest::into_event`].
    pub fn into_event(self) -> Result<Event, Invalid> {
        let id = normalize_uuid(&self.id)
            .ok_or_else(|| Invalid(format!("Event.Id {:?} is not a UUID", self.id)))?;
        required(|| "Event.DeviceName".into(), &self.device_name)?;
        required(|| "Event.ProfileName".into(), &self.profile_name)?;
        required(|| "Event.SourceName".into(), &self.source_name)?;
        if self.origin == 0 {
            return Err(Invalid("Event.Origin is required".into()));
        }
        if self.readings.is_empty() {
            return Err(Invalid("Event.Readings needs at least one reading".into()));
        }
        let readings = self
            .readings
            .into_iter()
            .enumerate()
            .map(|(i, r)| r.into_reading(i))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Event {
            id,
            device_name: self.device_name,
            profile_name: self.profile_name,
            source_name: self.source_name,
            origin: self.origin,
            readings,
            tags: self.tags,
        })
    }

    /// The DTO of a stored event.
    pub fn of(e: &Event) -> Self {
        EventDto {
            api_version: API_VERSION.to_string(),
            id: e.id.clone(),
            device_name: e.device_name.clone(),
            profile_name: e.profile_name.clone(),
            source_name: e.source_name.clone(),
            origin: e.origin,
            readings: e.readings.iter().map(ReadingDto::of).collect(),
            tags: e.tags.clone(),
        }
    }
}

impl ReadingDto {
    fn into_reading(self, index: usize) -> Result<Reading, Invalid> {
        let field = |name: &str| format!("Event.Readings[{index}].{name}");
        let id = if self.id.is_empty() {
            super::new_uuid()
        } else {
            normalize_uuid(&self.id)
                .ok_or_else(|| Invalid(format!("{} {:?} is not a UUID", field("Id"), self.id)))?
        };
        required(|| field("DeviceName"), &self.device_name)?;
        required(|| field("ResourceName"), &self.resource_name)?;
        required(|| field("ProfileName"), &self.profile_name)?;
        if self.origin == 0 {
            return Err(Invalid(format!("{} is required", field("Origin"))));
        }
        let kind = value_kind(&self.value_type).ok_or_else(|| {
            Invalid(format!(
                "{} {:?} is not an EdgeX value type (Bool, String, Int8..Int64, Uint8..Uint64, \
                 Float32, Float64, their arrays, Binary, Object, ObjectArray)",
                field("ValueType"),
                self.value_type
            ))
        })?;
        let value = match kind {
            ValueKind::Simple => match self.value {
                Some(v) if !v.is_empty() => ReadingValue::Simple(v),
                _ => return Err(Invalid(format!("{} is required", field("Value")))),
            },
            ValueKind::Binary => {
                let data = match self.binary_value {
                    Some(b) if !b.is_empty() => b,
                    _ => return Err(Invalid(format!("{} is required", field("BinaryValue")))),
                };
                required(|| field("MediaType"), &self.media_type)?;
                ReadingValue::Binary {
                    data,
                    media_type: self.media_type,
                }
            }
            ValueKind::Object => match self.object_value {
                Some(v) if !v.is_null() => ReadingValue::Object(v),
                _ => return Err(Invalid(format!("{} is required", field("ObjectValue")))),
            },
        };
        Ok(Reading {
            id,
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

    /// The DTO of a stored reading.
    pub fn of(r: &Reading) -> Self {
        let mut dto = ReadingDto {
            id: r.id.clone(),
            origin: r.origin,
            device_name: r.device_name.clone(),
            resource_name: r.resource_name.clone(),
            profile_name: r.profile_name.clone(),
            value_type: r.value_type.clone(),
            units: r.units.clone(),
            tags: r.tags.clone(),
            ..ReadingDto::default()
        };
        match &r.value {
            ReadingValue::Simple(v) => dto.value = Some(v.clone()),
            ReadingValue::Binary { data, media_type } => {
                dto.binary_value = Some(data.clone());
                dto.media_type = media_type.clone();
            }
            ReadingValue::Object(v) => dto.object_value = Some(v.clone()),
        }
        dto
    }

    /// Turns a reading read back from a service into the model, without the checks a request
    /// gets (a service may answer with an empty id, as EdgeX 4.0 on PostgreSQL does).
    pub fn into_stored(self) -> Reading {
        let value = match value_kind(&self.value_type) {
            Some(ValueKind::Binary) => ReadingValue::Binary {
                data: self.binary_value.unwrap_or_default(),
                media_type: self.media_type,
            },
            Some(ValueKind::Object) => {
                ReadingValue::Object(self.object_value.unwrap_or(Value::Null))
            }
            _ => ReadingValue::Simple(self.value.unwrap_or_default()),
        };
        Reading {
            id: self.id,
            origin: self.origin,
            device_name: self.device_name,
            resource_name: self.resource_name,
            profile_name: self.profile_name,
            value_type: self.value_type,
            units: self.units,
            tags: self.tags,
            value,
        }
    }
}

impl EventDto {
    /// Turns an event read back from a service into the model, without a request's checks.
    pub fn into_stored(self) -> Event {
        Event {
            id: self.id,
            device_name: self.device_name,
            profile_name: self.profile_name,
            source_name: self.source_name,
            origin: self.origin,
            readings: self
                .readings
                .into_iter()
                .map(ReadingDto::into_stored)
                .collect(),
            tags: self.tags,
        }
    }
}

/// `value` must not be blank; `field` names it (built only when it is).
fn required(field: impl FnOnce() -> String, value: &str) -> Result<(), Invalid> {
    if value.trim().is_empty() {
        Err(Invalid(format!("{} is required", field())))
    } else {
        Ok(())
    }
}

/// `BaseResponse`, and `ErrorResponse` when `message` is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaseResponse {
    /// `v3`.
    pub api_version: String,
    /// The request's id, when it had one.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request_id: String,
    /// The HTTP status, repeated in the body.
    pub status_code: u16,
    /// What went wrong (errors only).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub message: String,
}

impl BaseResponse {
    /// A response with this status and no message.
    pub fn status(status_code: u16) -> Self {
        BaseResponse {
            api_version: API_VERSION.to_string(),
            request_id: String::new(),
            status_code,
            message: String::new(),
        }
    }

    /// An error response.
    pub fn error(status_code: u16, message: impl Into<String>) -> Self {
        BaseResponse {
            message: message.into(),
            ..BaseResponse::status(status_code)
        }
    }
}

/// `BaseWithIdResponse`: the answer to an added event.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BaseWithIdResponse {
    /// Status.
    #[serde(flatten)]
    pub base: BaseResponse,
    /// The event's id.
    pub id: String,
}

/// `EventResponse`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventResponse {
    /// Status.
    #[serde(flatten)]
    pub base: BaseResponse,
    /// The event.
    pub event: EventDto,
}

/// `MultiEventsResponse`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MultiEventsResponse {
    /// Status.
    #[serde(flatten)]
    pub base: BaseResponse,
    /// All matching events, before paging (0 when the request skipped the count with
    /// `offset=-1`).
    pub total_count: u64,
    /// This page.
    pub events: Vec<EventDto>,
}

/// `MultiReadingsResponse`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MultiReadingsResponse {
    /// Status.
    #[serde(flatten)]
    pub base: BaseResponse,
    /// All matching readings, before paging.
    pub total_count: u64,
    /// This page.
    pub readings: Vec<ReadingDto>,
}

/// `CountResponse`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CountResponse {
    /// Status.
    #[serde(flatten)]
    pub base: BaseResponse,
    /// The count.
    pub count: u64,
}

/// `binaryValue`: base64 (standard alphabet, padded, as Go's `encoding/json`) for a
/// human-readable format, raw bytes otherwise.
pub mod binary {
    use base64::Engine as _;
    use serde::de::{self, Deserializer, Visitor};
    use serde::Serializer;

    /// Serializes `Some(bytes)`; `None` is skipped by the field attribute.
    pub fn serialize<S: Serializer>(value: &Option<Vec<u8>>, s: S) -> Result<S::Ok, S::Error> {
        let bytes = value.as_deref().unwrap_or_default();
        if s.is_human_readable() {
            s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
        } else {
            s.serialize_bytes(bytes)
        }
    }

    /// The same for a borrowed slice.
    pub mod borrowed {
        use serde::Serializer;

        /// Serializes `Some(bytes)`; `None` is skipped by the field attribute.
        pub fn serialize<S: Serializer>(value: &Option<&[u8]>, s: S) -> Result<S::Ok, S::Error> {
            let bytes = value.unwrap_or_default();
            if s.is_human_readable() {
                use base64::Engine as _;
                s.serialize_str(&base64::engine::general_purpose::STANDARD.encode(bytes))
            } else {
                s.serialize_bytes(bytes)
            }
        }
    }

    /// Reads a base64 string, a byte string, or null.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<u8>>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Option<Vec<u8>>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("base64 text or a byte string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                base64::engine::general_purpose::STANDARD
                    .decode(v)
                    .map(Some)
                    .map_err(|e| E::custom(format!("binaryValue is not base64: {e}")))
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<Self::Value, E> {
                Ok(Some(v.to_vec()))
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<Self::Value, E> {
                Ok(Some(v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(None)
            }
            fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
                d.deserialize_any(V)
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_borrowed_request_serializes_as_the_owned_one_in_json_and_cbor() {
        use crate::edgex::testing;
        let mut plain = testing::event_of("d", testing::at(1), &["a", "b"]);
        plain.readings[0].id.clear();
        for e in [testing::every_value_kind("dev", testing::at(2)), plain] {
            let owned = AddEventRequest {
                api_version: API_VERSION.to_string(),
                request_id: String::new(),
                event: EventDto::of(&e),
            };
            let borrowed = AddEventOf::new(&e);
            assert_eq!(
                serde_json::to_string(&borrowed).unwrap(),
                serde_json::to_string(&owned).unwrap()
            );
            let (mut a, mut b) = (Vec::new(), Vec::new());
            ciborium::into_writer(&borrowed, &mut a).unwrap();
            ciborium::into_writer(&owned, &mut b).unwrap();
            assert_eq!(a, b);
        }
    }

    fn request() -> AddEventRequest {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "v3",
            "event": {
                "apiVersion": "v3",
                "id": "563513B3-F020-46FA-AE44-0FDD1D129185",
                "deviceName": "d", "profileName": "p", "sourceName": "s",
                "origin": 1692721935934211905_i64,
                "tags": {"Gateway": "HoustonStore-000123"},
                "readings": [
                    {"deviceName": "d", "resourceName": "Bool", "profileName": "p",
                     "origin": 1692721935934211905_i64, "valueType": "Bool", "value": "false"},
                    {"deviceName": "d", "resourceName": "img", "profileName": "p",
                     "origin": 1692721935934211905_i64, "valueType": "Binary",
                     "binaryValue": "DCI=", "mediaType": "image/png"},
                    {"deviceName": "d", "resourceName": "obj", "profileName": "p",
                     "origin": 1692721935934211905_i64, "valueType": "Object",
                     "objectValue": {"Attr1": "yyz"}}
                ]
            }
        }))
        .unwrap()
    }

    #[test]
    fn a_valid_request_becomes_an_event_with_lowercase_ids() {
        let e = request().into_event().unwrap();
        assert_eq!(e.id, "563513b3-f020-46fa-ae44-0fdd1d129185");
        assert_eq!(e.readings.len(), 3);
        assert!(e.readings.iter().all(|r| r.id.len() == 36));
        assert_eq!(e.readings[0].value, ReadingValue::Simple("false".into()));
        assert_eq!(
            e.readings[1].value,
            ReadingValue::Binary {
                data: vec![12, 34],
                media_type: "image/png".into()
            }
        );
        assert_eq!(
            e.readings[2].value,
            ReadingValue::Object(serde_json::json!({"Attr1": "yyz"}))
        );
    }

    #[test]
    fn invalid_requests_name_the_field() {
        type Spoil = fn(&mut AddEventRequest);
        let cases: [(&str, Spoil); 7] = [
            ("AddEventRequest.ApiVersion", |r| r.api_version.clear()),
            ("Event.Id", |r| r.event.id = "x".into()),
            ("Event.DeviceName", |r| r.event.device_name.clear()),
            ("Event.Origin", |r| r.event.origin = 0),
            ("Event.Readings", |r| r.event.readings.clear()),
            ("Event.Readings[0].ValueType", |r| {
                r.event.readings[0].value_type = "Text".into()
            }),
            ("Event.Readings[1].MediaType", |r| {
                r.event.readings[1].media_type.clear()
            }),
        ];
        for (field, spoil) in cases {
            let mut r = request();
            spoil(&mut r);
            let err = r.into_event().unwrap_err();
            assert!(err.0.starts_with(field), "{field}: {err}");
        }
    }

    #[test]
    fn binary_values_are_base64_in_json_and_bytes_in_cbor() {
        let e = request().into_event().unwrap();
        let dto = EventDto::of(&e);
        let json = serde_json::to_value(&dto).unwrap();
        assert_eq!(json["readings"][1]["binaryValue"], "DCI=");
        assert_eq!(json["readings"][1]["mediaType"], "image/png");
        assert!(json["readings"][0].get("binaryValue").is_none());
        let mut cbor = Vec::new();
        ciborium::into_writer(&dto, &mut cbor).unwrap();
        // The two bytes travel as a CBOR byte string of length 2 (major type 2: 0x42).
        assert!(cbor.windows(3).any(|w| w == [0x42, 12, 34]));
        let back: EventDto = ciborium::from_reader(&cbor[..]).unwrap();
        assert_eq!(back.into_event().unwrap(), e);
    }
}

//! EdgeX's message-bus envelope: how a device service wraps an `AddEventRequest` to publish it,
//! and how core-data unwraps it (go-mod-messaging `pkg/types/message_envelope.go`, at v3.1.0
//! and v4.0.0).
//!
//! The envelope is a JSON object: `apiVersion`, `receivedTopic`, `correlationID`, `requestID`,
//! `errorCode`, `payload`, `contentType` (and `queryParams`, omitted when empty). What
//! `payload` holds depends on the release and on the content type:
//!
//! | release | JSON payload | CBOR payload |
//! |-|-|-|
//! | EdgeX 3.x ([`EnvelopeVersion::V3`]) | the request's JSON bytes, base64 | its CBOR bytes, base64 |
//! | EdgeX 4.0 ([`EnvelopeVersion::V4`]) | the request itself, a JSON object | its CBOR bytes, base64 |
//!
//! (Go's `encoding/json` writes a `[]byte` as base64: EdgeX 3's payload is "double encoded";
//! 4.0 made it an object unless it is CBOR or `EDGEX_MSG_BASE64_PAYLOAD=true`.) A receiver
//! takes either form, as EdgeX 4.0's `GetMsgPayload` does: a string is base64 of bytes in the
//! envelope's content type, an object is the request.
//!
//! NATS in EdgeX's default `nats` format carries no envelope: the metadata travels in message
//! headers and the data is the payload's bytes ([`decode_parts`]).
//!
//! The topic check is core-data's `validateEvent`: a topic of at least six levels whose last
//! three, unescaped, are the event's profile, device and source names ([`check_topic`]).

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::dto::{AddEventRequest, Invalid};
use super::{Event, API_VERSION};

/// `Content-Type` of a JSON payload.
pub const CONTENT_JSON: &str = "application/json";
/// `Content-Type` of a CBOR payload.
pub const CONTENT_CBOR: &str = "application/cbor";

/// Which release's envelope a publisher writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EnvelopeVersion {
    /// EdgeX 3.0 and 3.1: the payload is always base64 bytes.
    V3,
    /// EdgeX 4.0: a JSON payload is an object; CBOR stays base64 bytes.
    V4,
}

/// How a payload is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Encoding {
    /// `application/json`.
    Json,
    /// `application/cbor`: what EdgeX sends when a reading is Binary.
    Cbor,
}

impl Encoding {
    /// EdgeX's choice for a request: CBOR when any reading is Binary, else JSON
    /// (go-mod-core-contracts `AddEventRequest.Encode` / `GetEncodingContentType`).
    pub fn for_request(request: &AddEventRequest) -> Encoding {
        Encoding::for_value_types(request.event.readings.iter().map(|r| r.value_type.as_str()))
    }

    /// CBOR when any of `value_types` is Binary, else JSON.
    fn for_value_types<'a>(mut value_types: impl Iterator<Item = &'a str>) -> Encoding {
        if value_types.any(|t| t == "Binary") {
            Encoding::Cbor
        } else {
            Encoding::Json
        }
    }

    /// EdgeX's choice for an event ([`Encoding::for_request`] of its request).
    pub fn for_event(event: &Event) -> Encoding {
        Encoding::for_value_types(event.readings.iter().map(|r| r.value_type.as_str()))
    }

    /// Its `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Json => CONTENT_JSON,
            Encoding::Cbor => CONTENT_CBOR,
        }
    }

    /// The encoding a `Content-Type` names; anything but CBOR is read as JSON, as EdgeX does.
    pub fn of_content_type(content_type: &str) -> Encoding {
        if content_type.eq_ignore_ascii_case(CONTENT_CBOR) {
            Encoding::Cbor
        } else {
            Encoding::Json
        }
    }
}

/// The envelope as it is read; the payload is parsed only once its form is known.
#[derive(Deserialize)]
struct Incoming<'a> {
    #[serde(rename = "contentType", default)]
    content_type: String,
    #[serde(rename = "correlationID", default)]
    correlation_id: String,
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
}

/// The request's bytes in `encoding` (an [`AddEventRequest`], or the borrowed
/// [`super::dto::AddEventOf`] a publisher sends).
pub fn payload_bytes(request: &impl Serialize, encoding: Encoding) -> Vec<u8> {
    match encoding {
        Encoding::Json => serde_json::to_vec(request).expect("a request serializes to JSON"),
        Encoding::Cbor => {
            let mut out = Vec::new();
            ciborium::into_writer(request, &mut out).expect("a request serializes to CBOR");
            out
        }
    }
}

/// The envelope a device service of release `version` publishes for `request`.
pub fn encode(
    request: &impl Serialize,
    version: EnvelopeVersion,
    encoding: Encoding,
    correlation_id: &str,
) -> Vec<u8> {
    let mut out = Vec::new();
    encode_into(&mut out, request, version, encoding, correlation_id);
    out
}

/// [`encode`] into `out` (cleared first), so a publisher reuses one buffer: the envelope's
/// fields in go-mod-messaging's order, the payload written in place (no intermediate JSON
/// value to re-parse).
pub fn encode_into(
    out: &mut Vec<u8>,
    request: &impl Serialize,
    version: EnvelopeVersion,
    encoding: Encoding,
    correlation_id: &str,
) {
    let json = "a request serializes to JSON";
    out.clear();
    out.extend_from_slice(b"{\"apiVersion\":\"");
    out.extend_from_slice(API_VERSION.as_bytes());
    out.extend_from_slice(b"\",\"receivedTopic\":\"\",\"correlationID\":");
    serde_json::to_writer(&mut *out, correlation_id).expect(json);
    out.extend_from_slice(b",\"requestID\":\"\",\"errorCode\":0,\"payload\":");
    match (version, encoding) {
        (EnvelopeVersion::V4, Encoding::Json) => {
            serde_json::to_writer(&mut *out, request).expect(json)
        }
        _ => {
            let bytes = payload_bytes(request, encoding);
            let at = out.len() + 1;
            let len = base64::encoded_len(bytes.len(), true).expect("a payload fits in memory");
            out.resize(at + len + 1, b'"');
            base64::engine::general_purpose::STANDARD
                .encode_slice(&bytes, &mut out[at..at + len])
                .expect("the buffer is the encoded length");
        }
    }
    out.extend_from_slice(b",\"contentType\":\"");
    out.extend_from_slice(encoding.content_type().as_bytes());
    out.extend_from_slice(b"\"}");
}

/// What a received message carried.
#[derive(Debug, Clone)]
pub struct Received {
    /// The request, not yet checked ([`AddEventRequest::into_event`] checks it).
    pub request: AddEventRequest,
    /// The envelope's `correlationID`, or the NATS header's.
    pub correlation_id: String,
}

/// Unwraps an envelope, either release's, as core-data does before validating.
pub fn decode(message: &[u8]) -> Result<Received, Invalid> {
    let envelope: Incoming<'_> = serde_json::from_slice(message)
        .map_err(|e| Invalid(format!("the message is not an EdgeX envelope: {e}")))?;
    let Some(payload) = envelope.payload else {
        return Err(Invalid("the envelope has no payload".into()));
    };
    let encoding = Encoding::of_content_type(&envelope.content_type);
    let raw = payload.get();
    let request = if raw.starts_with('"') {
        let text: &str = serde_json::from_str(raw)
            .map_err(|e| Invalid(format!("the envelope's payload is not a string: {e}")))?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text)
            .map_err(|e| Invalid(format!("the envelope's payload is not base64: {e}")))?;
        decode_payload(&bytes, encoding)?
    } else if raw.starts_with('{') {
        serde_json::from_str(raw).map_err(|e| Invalid(format!("cannot decode the event: {e}")))?
    } else {
        return Err(Invalid(
            "the envelope's payload is neither base64 bytes nor an object".into(),
        ));
    };
    Ok(Received {
        request,
        correlation_id: envelope.correlation_id,
    })
}

/// A NATS message in EdgeX's `nats` format: the payload's bytes, their content type from the
/// `Content-Type` header (JSON when absent).
pub fn decode_parts(
    payload: &[u8],
    content_type: Option<&str>,
    correlation_id: Option<&str>,
) -> Result<Received, Invalid> {
    let encoding = Encoding::of_content_type(content_type.unwrap_or(CONTENT_JSON));
    Ok(Received {
        request: decode_payload(payload, encoding)?,
        correlation_id: correlation_id.unwrap_or_default().to_string(),
    })
}

/// The request in a payload's bytes.
pub fn decode_payload(bytes: &[u8], encoding: Encoding) -> Result<AddEventRequest, Invalid> {
    match encoding {
        Encoding::Json => serde_json::from_slice(bytes)
            .map_err(|e| Invalid(format!("cannot decode the event as JSON: {e}"))),
        Encoding::Cbor => ciborium::from_reader(bytes)
            .map_err(|e| Invalid(format!("cannot decode the event as CBOR: {e}"))),
    }
}

/// [`event_topic`] into `out` (cleared first), so a publisher reuses one buffer.
pub fn event_topic_into(out: &mut String, base: &str, service: &str, event: &Event) {
    out.clear();
    for part in [
        base,
        "/events/device/",
        service,
        "/",
        &event.profile_name,
        "/",
        &event.device_name,
        "/",
        &event.source_name,
    ] {
        out.push_str(part);
    }
}

/// The topic a device service publishes `event` on: `<base>/events/device/<service>/<profile>/
/// <device>/<source>` (device-sdk-go `SendEvent`, names not escaped: EdgeX's default
/// `EnableNameFieldEscape: false`).
pub fn event_topic(base: &str, service: &str, event: &Event) -> String {
    format!(
        "{base}/events/device/{service}/{}/{}/{}",
        event.profile_name, event.device_name, event.source_name
    )
}

/// core-data's `validateEvent` (EdgeX 3.1 and 4.0): the topic has at least six `/` levels and
/// its last three, percent-unescaped, are the event's profile, device and source names.
pub fn check_topic(topic: &str, event: &Event) -> Result<(), Invalid> {
    let levels: Vec<&str> = topic.split('/').collect();
    if levels.len() < 6 {
        return Err(Invalid(format!(
            "invalid received topic {topic}: it needs at least 6 levels"
        )));
    }
    let n = levels.len();
    let named = [
        ("profile", levels[n - 3], &event.profile_name),
        ("device", levels[n - 2], &event.device_name),
        ("source", levels[n - 1], &event.source_name),
    ];
    for (what, level, name) in named {
        let level = unescape(level).ok_or_else(|| {
            Invalid(format!(
                "invalid received topic {topic}: cannot unescape its {what} level '{level}'"
            ))
        })?;
        if level != *name {
            return Err(Invalid(format!(
                "received topic's {what}Name '{level}' does not match the event's '{name}'"
            )));
        }
    }
    Ok(())
}

/// Go's `url.PathUnescape`: each `%XY` becomes its byte; a `%` not followed by two hex
/// digits is an error, as there.
fn unescape(level: &str) -> Option<String> {
    if !level.contains('%') {
        return Some(level.to_string());
    }
    let bytes = level.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let h = hex(*bytes.get(i + 1)?)?;
            let l = hex(*bytes.get(i + 2)?)?;
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The envelope as it is written.
    #[derive(Serialize)]
    struct Outgoing<'a> {
        #[serde(rename = "apiVersion")]
        api_version: &'a str,
        #[serde(rename = "receivedTopic")]
        received_topic: &'a str,
        #[serde(rename = "correlationID")]
        correlation_id: &'a str,
        #[serde(rename = "requestID")]
        request_id: &'a str,
        #[serde(rename = "errorCode")]
        error_code: i32,
        payload: &'a RawValue,
        #[serde(rename = "contentType")]
        content_type: &'a str,
    }

    /// What [`encode`] wrote before it wrote in place: the envelope struct through serde.
    fn encoded_by_serde(
        request: &AddEventRequest,
        version: EnvelopeVersion,
        encoding: Encoding,
        correlation_id: &str,
    ) -> Vec<u8> {
        let payload = match (version, encoding) {
            (EnvelopeVersion::V4, Encoding::Json) => serde_json::to_string(request).unwrap(),
            _ => format!(
                "\"{}\"",
                base64::engine::general_purpose::STANDARD.encode(payload_bytes(request, encoding))
            ),
        };
        let payload = RawValue::from_string(payload).unwrap();
        serde_json::to_vec(&Outgoing {
            api_version: API_VERSION,
            received_topic: "",
            correlation_id,
            request_id: "",
            error_code: 0,
            payload: &payload,
            content_type: encoding.content_type(),
        })
        .unwrap()
    }

    #[test]
    fn the_envelope_written_in_place_is_the_one_serde_writes() {
        use crate::edgex::dto::{AddEventOf, EventDto};
        let e = crate::edgex::testing::every_value_kind("d", crate::edgex::testing::at(3));
        let request = AddEventRequest {
            api_version: API_VERSION.into(),
            request_id: String::new(),
            event: EventDto::of(&e),
        };
        let mut reused = b"left over".to_vec();
        for version in [EnvelopeVersion::V3, EnvelopeVersion::V4] {
            for encoding in [Encoding::Json, Encoding::Cbor] {
                for correlation in ["", "a\"b"] {
                    let want = encoded_by_serde(&request, version, encoding, correlation);
                    assert_eq!(encode(&request, version, encoding, correlation), want);
                    encode_into(
                        &mut reused,
                        &AddEventOf::new(&e),
                        version,
                        encoding,
                        correlation,
                    );
                    assert_eq!(reused, want);
                }
            }
        }
    }
    use crate::edgex::dto::EventDto;
    use crate::edgex::testing;

    fn request(binary: bool) -> AddEventRequest {
        let event = if binary {
            testing::every_value_kind("dev-1", testing::T0)
        } else {
            testing::event_of("dev-1", testing::T0, &["a", "b", "c"])
        };
        AddEventRequest {
            api_version: API_VERSION.into(),
            request_id: String::new(),
            event: EventDto::of(&event),
        }
    }

    #[test]
    fn every_release_and_encoding_round_trips() {
        for version in [EnvelopeVersion::V3, EnvelopeVersion::V4] {
            for binary in [false, true] {
                let req = request(binary);
                let encoding = Encoding::for_request(&req);
                assert_eq!(encoding == Encoding::Cbor, binary);
                let wire = encode(&req, version, encoding, "corr-1");
                let got = decode(&wire).unwrap_or_else(|e| panic!("{version:?} {binary}: {e}"));
                assert_eq!(got.correlation_id, "corr-1");
                assert_eq!(
                    got.request.event.into_event().unwrap(),
                    req.event.clone().into_event().unwrap(),
                    "{version:?} binary={binary}"
                );
            }
        }
    }

    #[test]
    fn v3_payloads_are_base64_and_v4_json_payloads_are_objects() {
        let req = request(false);
        let v3: serde_json::Value =
            serde_json::from_slice(&encode(&req, EnvelopeVersion::V3, Encoding::Json, "")).unwrap();
        assert!(v3["payload"].is_string(), "{v3}");
        assert_eq!(v3["contentType"], CONTENT_JSON);
        assert_eq!(v3["apiVersion"], "v3");
        assert_eq!(v3["errorCode"], 0);
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(v3["payload"].as_str().unwrap())
            .unwrap();
        let inner: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(inner["event"]["deviceName"], "dev-1");
        let v4: serde_json::Value =
            serde_json::from_slice(&encode(&req, EnvelopeVersion::V4, Encoding::Json, "")).unwrap();
        assert_eq!(v4["payload"]["event"]["deviceName"], "dev-1", "{v4}");
        let cbor: serde_json::Value =
            serde_json::from_slice(&encode(&req, EnvelopeVersion::V4, Encoding::Cbor, "")).unwrap();
        assert!(cbor["payload"].is_string());
        assert_eq!(cbor["contentType"], CONTENT_CBOR);
    }

    #[test]
    fn a_nats_message_is_the_payload_with_its_content_type_in_a_header() {
        let req = request(true);
        let bytes = payload_bytes(&req, Encoding::Cbor);
        let got = decode_parts(&bytes, Some(CONTENT_CBOR), Some("c")).unwrap();
        assert_eq!(got.request.event.device_name, "dev-1");
        assert_eq!(got.correlation_id, "c");
        assert!(
            decode_parts(&bytes, None, None).is_err(),
            "CBOR read as JSON"
        );
    }

    #[test]
    fn malformed_envelopes_are_refused_with_a_reason() {
        for (wire, says) in [
            (&b"not json"[..], "not an EdgeX envelope"),
            (br#"{"contentType":"application/json"}"#, "no payload"),
            (br#"{"payload":"@@@"}"#, "not base64"),
            (br#"{"payload":42}"#, "neither"),
            (br#"{"payload":{"event":7}}"#, "cannot decode"),
        ] {
            let e = decode(wire)
                .err()
                .unwrap_or_else(|| panic!("{wire:?} decoded"));
            assert!(e.0.contains(says), "{wire:?}: {e}");
        }
    }

    #[test]
    fn the_topic_must_name_the_events_profile_device_and_source() {
        let event = testing::event_of("dev-1", testing::T0, &["a"]);
        let topic = event_topic("edgex", "device-virtual", &event);
        assert_eq!(
            topic,
            format!(
                "edgex/events/device/device-virtual/{}/dev-1/{}",
                event.profile_name, event.source_name
            )
        );
        check_topic(&topic, &event).unwrap();
        let escaped = topic.replace("dev-1", "dev%2D1");
        check_topic(&escaped, &event).unwrap();
        let wrong = topic.replace("dev-1", "dev-2");
        let e = check_topic(&wrong, &event).unwrap_err();
        assert!(e.0.contains("deviceName 'dev-2'"), "{e}");
        let e = check_topic("edgex/events/device/x", &event).unwrap_err();
        assert!(e.0.contains("at least 6 levels"), "{e}");
    }

    #[test]
    fn unescape_is_path_unescape() {
        assert_eq!(unescape("a%2Db").as_deref(), Some("a-b"));
        assert_eq!(unescape("plain").as_deref(), Some("plain"));
        for bad in ["a%2", "%zz", "100%", "%ff"] {
            assert_eq!(unescape(bad), None, "{bad}");
        }
        let event = testing::event_of("dev-1", testing::T0, &["a"]);
        let topic = event_topic("edgex", "s", &event).replace("dev-1", "dev%zz");
        let e = check_topic(&topic, &event).unwrap_err();
        assert!(e.0.contains("cannot unescape its device level"), "{e}");
    }
}

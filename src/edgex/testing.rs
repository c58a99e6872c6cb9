//! Builders of EdgeX 3/4 records for tests: the one set the unit tests of every layout and
//! the integration tests (`tests/it`, the conformance suite among them) build their events
//! and readings with, so a record reads the same in every test.
//!
//! Not part of edgebench's API (hidden from the docs, free to change): it is public only so
//! the integration tests, a crate of their own, can use it. Every builder gives fresh UUIDs
//! and fills what a test does not care about with the same values (`profile`, `source`, no
//! units, no tags); a test that cares sets the field itself (`Reading { units, ..reading(…) }`).

use serde_json::{json, Map, Value};

use super::{new_uuid, Event, Reading, ReadingValue};

/// 1.7e18 ns: a 2023 origin.
pub const T0: i64 = 1_700_000_000_000_000_000;

/// 1 µs, in ns: the step between origins a test tells apart. Not 1 ns: EdgeX 3.1 keeps origins
/// as sorted-set scores, doubles, which near [`T0`] resolve 256 ns.
pub const US: i64 = 1_000;

/// The origin `i` µs after [`T0`].
pub fn at(i: i64) -> i64 {
    T0 + i * US
}

/// A `Simple` value: text in `value`.
pub fn simple(value: &str) -> ReadingValue {
    ReadingValue::Simple(value.to_string())
}

/// A reading of `device`'s `resource` at `origin`, with a fresh id. Its value type follows
/// the value's kind: `Int64` for a simple value, `Binary`, `Object`.
pub fn reading(device: &str, resource: &str, origin: i64, value: ReadingValue) -> Reading {
    let value_type = match &value {
        ReadingValue::Simple(_) => "Int64",
        ReadingValue::Binary { .. } => "Binary",
        ReadingValue::Object(_) => "Object",
    };
    Reading {
        id: new_uuid(),
        origin,
        device_name: device.to_string(),
        resource_name: resource.to_string(),
        profile_name: "profile".to_string(),
        value_type: value_type.to_string(),
        units: String::new(),
        tags: None,
        value,
    }
}

/// [`reading`] with another value type, e.g. `typed("Float64", reading(…, simple("1.5")))`.
pub fn typed(value_type: &str, reading: Reading) -> Reading {
    Reading {
        value_type: value_type.to_string(),
        ..reading
    }
}

/// An event of `device` at `origin` with `readings` as given, and a fresh id.
pub fn event(device: &str, origin: i64, readings: Vec<Reading>) -> Event {
    Event {
        id: new_uuid(),
        device_name: device.to_string(),
        profile_name: "profile".to_string(),
        source_name: "source".to_string(),
        origin,
        readings,
        tags: None,
    }
}

/// An event of `device` at `origin` with one Int64 reading per name in `resources`, all at
/// `origin`, the `i`th of value `i`.
pub fn event_of(device: &str, origin: i64, resources: &[&str]) -> Event {
    let readings = resources
        .iter()
        .enumerate()
        .map(|(i, r)| reading(device, r, origin, simple(&i.to_string())))
        .collect();
    event(device, origin, readings)
}

/// Tags from a JSON object; panics on anything else.
pub fn tags(value: Value) -> Option<Map<String, Value>> {
    match value {
        Value::Object(map) => Some(map),
        other => panic!("tags must be a JSON object, not {other}"),
    }
}

/// An event of `device` at `origin` with one reading of every kind of value, in an order no
/// sort would produce: Int64, Float64 with units and tags, String, Bool with tags, Binary,
/// Object (nested, with arrays, nulls and a negative number), Uint64's largest, Float64 with a
/// trailing zero. The event has tags; every reading is at `origin`.
pub fn every_value_kind(device: &str, origin: i64) -> Event {
    let r = |resource: &str, value: ReadingValue| reading(device, resource, origin, value);
    let readings = vec![
        r("counter", simple("42")),
        Reading {
            units: "C".to_string(),
            tags: tags(json!({"sensor": "t1", "calibrated": true})),
            ..typed("Float64", r("temperature", simple("1.5")))
        },
        typed("String", r("label", simple("hello, world"))),
        Reading {
            tags: tags(json!({"k": "v"})),
            ..typed("Bool", r("alarm", simple("true")))
        },
        r(
            "image",
            ReadingValue::Binary {
                data: vec![0x89, b'P', b'N', b'G', 0, 1, 2, 255],
                media_type: "image/png".to_string(),
            },
        ),
        r(
            "config",
            ReadingValue::Object(json!({
                "mode": "auto", "limits": [1, 2.5, null], "n": {"y": 2, "x": 1},
                "a": null, "Attr2": -45
            })),
        ),
        typed("Uint64", r("big", simple("18446744073709551615"))),
        typed("Float64", r("precise", simple("-0.50"))),
    ];
    Event {
        tags: tags(json!({
            "Gateway": "HoustonStore-000123", "Latitude": {"degrees": 25.0}, "line": 4
        })),
        ..event(device, origin, readings)
    }
}

/// `unwrap` that shows the error with `Display` (a store error's message names the fix).
pub trait OrPanic<T> {
    /// The value, or a panic with the error's message.
    fn or_panic(self) -> T;
}

impl<T, E: std::fmt::Display> OrPanic<T> for Result<T, E> {
    #[track_caller]
    fn or_panic(self) -> T {
        self.unwrap_or_else(|e| panic!("{e}"))
    }
}

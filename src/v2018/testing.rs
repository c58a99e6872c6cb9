//! Builders of 2018 records for tests: the one set the 2018 conformance suite
//! (`tests/it/conformance.rs`) and the stores' unit tests build their readings and events
//! with. Not part of edgebench's API (hidden from the docs, free to change): it is public only
//! so the integration tests, a crate of their own, can use it.

use super::{Event, Reading};

/// A reading of `device`'s `name` created at `created` (ms; 0 means "now" to a store), with
/// the value `name@created`, so a test can tell it came back whole.
pub fn reading(device: &str, name: &str, created: i64) -> Reading {
    Reading {
        device: device.into(),
        name: name.into(),
        value: format!("{name}@{created}"),
        created,
        ..Reading::default()
    }
}

/// An event of `device` created at `created` with one reading per name in `names`; the
/// readings' own device and created are empty, so they take the event's.
pub fn event(device: &str, created: i64, names: &[&str]) -> Event {
    Event {
        device: device.into(),
        created,
        readings: names.iter().map(|n| reading("", n, 0)).collect(),
        ..Event::default()
    }
}

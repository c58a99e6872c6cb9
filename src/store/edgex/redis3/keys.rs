//! The key names of EdgeX 3.1's Redis layout (`event.go`, `reading.go`, `dbconsts.go` at
//! v3.1.1; storage-layouts.md §B.2), and which index a [`Filter`] reads.
//!
//! Keys are parts joined with `:` (EdgeX's `CreateKey`). Index members are the stored keys
//! (`cd|evt:<id>`, `cd|rd:<id>`), not bare ids, so a member is also the key to `MGET`.

use super::Filter;

/// Every key of the layout starts with this (the `SCAN MATCH` pattern of a scrub is it + `*`).
pub(super) const PREFIX: &str = "cd|";
/// `cd|evt`: every event, score origin.
pub(super) const EVENTS: &str = "cd|evt";
/// `cd|evt:origin`: every event, score origin (the same content as [`EVENTS`]).
pub(super) const EVENTS_BY_ORIGIN: &str = "cd|evt:origin";
/// `cd|rd`: every reading, score 0.
pub(super) const READINGS: &str = "cd|rd";
/// `cd|rd:origin`: every reading, score origin.
pub(super) const READINGS_BY_ORIGIN: &str = "cd|rd:origin";

/// `cd|evt:<id>`: the event's JSON.
pub(super) fn event(id: &str) -> String {
    format!("{EVENTS}:{id}")
}

/// `cd|evt:device:name:<device>`: the device's events, score origin.
pub(super) fn events_by_device(device: &str) -> String {
    format!("{EVENTS}:device:name:{device}")
}

/// `cd|evt:readings:<id>`: the event's reading keys, score = position in the event.
pub(super) fn event_readings(id: &str) -> String {
    format!("{EVENTS}:readings:{id}")
}

/// `cd|rd:<id>`: the reading's JSON.
pub(super) fn reading(id: &str) -> String {
    format!("{READINGS}:{id}")
}

/// `cd|rd:deviceName:<device>`: the device's readings, score origin.
pub(super) fn readings_by_device(device: &str) -> String {
    format!("{READINGS}:deviceName:{device}")
}

/// `cd|rd:resourceName:<resource>`: the resource's readings, score origin.
pub(super) fn readings_by_resource(resource: &str) -> String {
    format!("{READINGS}:resourceName:{resource}")
}

/// `cd|rd:deviceName:resourceName:<device>:<resource>`: score origin.
pub(super) fn readings_by_device_resource(device: &str, resource: &str) -> String {
    format!("{READINGS}:deviceName:resourceName:{device}:{resource}")
}

/// The id in a stored key: what follows its last `:` (EdgeX's `idFromStoredKey`).
pub(super) fn id_of(stored_key: &str) -> &str {
    stored_key.rsplit(':').next().unwrap_or(stored_key)
}

/// The origin-scored index that holds the events `filter` names: the device's, or
/// `cd|evt` for a list and `cd|evt:origin` for a time range (as EdgeX's `AllEvents` and
/// `EventsByTimeRange` pick them; the two hold the same members).
pub(super) fn event_index(filter: &Filter<'_>) -> String {
    match (filter.device, filter.range) {
        (Some(device), _) => events_by_device(device),
        (None, None) => EVENTS.to_owned(),
        (None, Some(_)) => EVENTS_BY_ORIGIN.to_owned(),
    }
}

/// The origin-scored index that holds the readings `filter` names (`cd|rd:origin` for all).
pub(super) fn reading_index(filter: &Filter<'_>) -> String {
    match (filter.device, filter.resource) {
        (None, None) => READINGS_BY_ORIGIN.to_owned(),
        (Some(device), None) => readings_by_device(device),
        (None, Some(resource)) => readings_by_resource(resource),
        (Some(device), Some(resource)) => readings_by_device_resource(device, resource),
    }
}

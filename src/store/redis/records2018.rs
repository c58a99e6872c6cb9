//! The stored form of core data in a Redis keyspace, shared by every store that writes one:
//! the 2018 EdgeX `redis_client` key layout (`Keys`), its msgpack records (`RedisReading`,
//! `RedisEvent`), and the rules every write follows (`stamp_event`, `merge_event`, `key_id`,
//! ...).
//!
//! [`super::redis::RedisStore`] writes this layout with Redis commands;
//! [`super::engine::EngineStore`] writes the same keys and the same bytes straight into the
//! embedded engine's keyspace. Keeping both on this one module is what makes their columns
//! comparable: they differ only in the access path, never in what is stored.
//!
//! Layout, after the 2018 client at `2e866b8` (RedisLabs/edgex-go, branch `redis_client` at 2e866b8, `core/data/clients/redis-client.go`, `RedisModels.go`):
//! msgpack records stored under the bare id (lowercase hex: a by-id call lowercases its
//! argument, see `key_id`) and sorted-set indexes (see `Keys`). It differs from 2018 on
//! purpose in one place: `event:readings:<id>` holds the bare hex ids, scored by position, so
//! an event's readings are really found and come back in the order they were added. The 2018
//! client stored `ObjectIdHex("…")` and so never found them (§3.6).
//!
//! Invariant: every record is in exactly the indexes `Keys` lists for its kind, with
//! `created` (or `pushed`) as its score. There is one exception. A reading deleted on its own
//! stays a member of its event's `event:readings:<id>`, because a reading record does not name
//! its event. Reads skip such members (their record is gone), and deleting the event unlinks
//! the whole set.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::store::{StoreError, StoreResult};
use crate::v2018::{Event, Reading};

/// The key layout of the 2018 client (reference §3.2), in one place.
///
/// | key | type | members (score) |
/// |---|---|---|
/// | `<id>` | string | msgpack [`RedisEvent`] or [`RedisReading`] |
/// | `event` | zset | event ids (0, so lexicographic = id order) |
/// | `event:created` | zset | event ids (created) |
/// | `event:pushed` | zset | event ids (pushed; 0 = not pushed) |
/// | `event:device:<d>` | zset | event ids (created) |
/// | `event:readings:<eid>` | zset | the event's reading ids, bare hex (position 0..n-1) |
/// | `reading` | zset | reading ids (0) |
/// | `reading:created` | zset | reading ids (created) |
/// | `reading:device:<d>` | zset | reading ids (created) |
/// | `reading:name:<n>` | zset | reading ids (created) |
///
/// Every index key starts with `event` or `reading`, and every record is a member of `event`
/// or `reading`. Scrubbing relies on both facts ([`Keys::is_index`]). Redis Cluster will need
/// the keys of one write to share a slot: the hash tags go here and nowhere else.
pub(crate) struct Keys;

impl Keys {
    pub(crate) const EVENTS: &'static str = "event";
    pub(crate) const EVENTS_BY_CREATED: &'static str = "event:created";
    pub(crate) const EVENTS_BY_PUSHED: &'static str = "event:pushed";
    pub(crate) const READINGS: &'static str = "reading";
    pub(crate) const READINGS_BY_CREATED: &'static str = "reading:created";
    /// `SCAN` patterns that match every index key (but no record).
    pub(crate) const INDEX_PATTERNS: [&'static str; 2] = ["event*", "reading*"];

    /// The key of a record: its bare id, as in 2018 (lowercase: see [`key_id`]).
    pub(crate) fn record(id: &str) -> &str {
        id
    }

    pub(crate) fn events_by_device(device: &str) -> Key<'_> {
        Key("event:device:", device)
    }

    pub(crate) fn event_readings(event_id: &str) -> Key<'_> {
        Key("event:readings:", event_id)
    }

    pub(crate) fn readings_by_device(device: &str) -> Key<'_> {
        Key("reading:device:", device)
    }

    pub(crate) fn readings_by_name(name: &str) -> Key<'_> {
        Key("reading:name:", name)
    }

    /// Whether `key` is an index key (what [`Keys::INDEX_PATTERNS`] match). No record is:
    /// a record key is 24 hex digits, and `event` and `reading` are not hex.
    pub(crate) fn is_index(key: &[u8]) -> bool {
        key.starts_with(Self::EVENTS.as_bytes()) || key.starts_with(Self::READINGS.as_bytes())
    }
}

/// The 2018 layout on Redis Cluster: the same records and indexes as [`Keys`], spread over
/// [`ClusterKeys::PARTITIONS`] partitions, each a hash tag (`{TAG}` in front of every key), so
/// that what one write touches shares a slot and `MULTI … EXEC` still holds.
///
/// - An event and its readings live in the partition of the event's device: their records
///   (`{TAG}<id>`), the event's readings links, and the partition's shards of the global
///   indexes (`{TAG}event`, `{TAG}event:created`, …, `{TAG}reading:name:<n>`).
/// - A reading added on its own lives in the partition of its device.
/// - The per-device indexes (`{TAG}event:device:<d>`, `{TAG}reading:device:<d>`) live in the
///   partition of their device, so a device's reads touch one slot.
/// - A record's partition is in its id: the last hex digit (see [`ClusterKeys::mark_id`]),
///   so a by-id call finds its slot without a lookup.
///
/// Reads that span devices (all events, counts, time ranges, by name) ask every partition
/// and merge by (score, id), which is exactly the order one sorted set would give.
pub(crate) struct ClusterKeys;

impl ClusterKeys {
    /// Partitions: one hex digit of the id. 16 spread over the slot space evenly (partition
    /// `p`'s tag hashes into slots `p*1024 .. p*1024+1023`), so an even split of the slots over
    /// up to 16 primaries gives each the same share.
    pub(crate) const PARTITIONS: usize = 16;

    /// The hash tag of partition `p`: the first decimal number whose slot falls in the
    /// partition's range.
    pub(crate) fn tag(p: usize) -> &'static str {
        static TAGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        let tags = TAGS.get_or_init(|| {
            let width = crate::keyslot::SLOTS / Self::PARTITIONS;
            (0..Self::PARTITIONS)
                .map(|p| {
                    (0u32..)
                        .map(|n| n.to_string())
                        .find(|t| usize::from(crate::keyslot::hash_slot(t.as_bytes())) / width == p)
                        .expect("every range of slots is hit by some number")
                })
                .collect()
        });
        &tags[p]
    }

    /// The partition of a device's records and indexes.
    pub(crate) fn of_device(device: &str) -> usize {
        let slot = usize::from(crate::keyslot::hash_slot(device.as_bytes()));
        slot * Self::PARTITIONS / crate::keyslot::SLOTS
    }

    /// The partition of a record, from its id (checked: 24 hex digits).
    pub(crate) fn of_id(id: &str) -> usize {
        id.bytes()
            .last()
            .and_then(|b| (b as char).to_digit(16))
            .map_or(0, |d| d as usize)
    }

    /// Writes partition `p` into a fresh id: its last 6 hex digits (the ObjectId counter)
    /// become `counter << 4 | p`, so ids stay unique and in creation order unless one
    /// process makes 2^20 ids within one second.
    pub(crate) fn mark_id(id: &mut String, p: usize) {
        let Some(tail) = id.len().checked_sub(6) else {
            return;
        };
        let Ok(counter) = u32::from_str_radix(&id[tail..], 16) else {
            return;
        };
        let marked = ((counter << 4) | p as u32) & 0xff_ffff;
        id.truncate(tail);
        id.push_str(&format!("{marked:06x}"));
    }

    /// `{TAG}` + `rest`: a key in partition `p`.
    pub(crate) fn key(p: usize, rest: &str) -> String {
        format!("{{{}}}{rest}", Self::tag(p))
    }

    /// `{TAG}` + `prefix` + `value`.
    pub(crate) fn key2(p: usize, prefix: &str, value: &str) -> String {
        format!("{{{}}}{prefix}{value}", Self::tag(p))
    }

    /// A record's key: in its id's partition.
    pub(crate) fn record(id: &str) -> String {
        Self::key(Self::of_id(id), id)
    }

    /// `SCAN` patterns that match every index key of every partition, and no record.
    pub(crate) const INDEX_PATTERNS: [&'static str; 2] = ["{*}event*", "{*}reading*"];
}

/// A `Keys` index key, prefix + value, kept in two parts so that a store can write it straight
/// into wherever it goes (a command argument, a key buffer) with no `String` per key.
#[derive(Clone, Copy)]
pub(crate) struct Key<'a>(pub(crate) &'static str, pub(crate) &'a str);

/// The stored form of a reading (2018 `RedisReading`, msgpack with field names).
///
/// `Cow` lets a write encode straight from the caller's [`Reading`] and a read decode into
/// owned strings, with one struct for both. `deny_unknown_fields` keeps an event record from
/// decoding as a reading, and the other way round (see [`Record`]).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RedisReading<'a> {
    id: Cow<'a, str>,
    pushed: i64,
    created: i64,
    origin: i64,
    modified: i64,
    device: Cow<'a, str>,
    name: Cow<'a, str>,
    value: Cow<'a, str>,
}

impl<'a> RedisReading<'a> {
    pub(crate) fn of(r: &'a Reading) -> Self {
        RedisReading {
            id: Cow::Borrowed(&r.id),
            pushed: r.pushed,
            created: r.created,
            origin: r.origin,
            modified: r.modified,
            device: Cow::Borrowed(&r.device),
            name: Cow::Borrowed(&r.name),
            value: Cow::Borrowed(&r.value),
        }
    }

    fn into_reading(self) -> Reading {
        Reading {
            id: self.id.into_owned(),
            pushed: self.pushed,
            created: self.created,
            origin: self.origin,
            modified: self.modified,
            device: self.device.into_owned(),
            name: self.name.into_owned(),
            value: self.value.into_owned(),
        }
    }
}

/// The stored form of an event (2018 `RedisEvent`): its readings live in their own records,
/// linked by `event:readings:<id>` (reference §3.3).
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RedisEvent<'a> {
    id: Cow<'a, str>,
    pushed: i64,
    device: Cow<'a, str>,
    created: i64,
    modified: i64,
    origin: i64,
    event: Cow<'a, str>,
}

impl<'a> RedisEvent<'a> {
    pub(crate) fn of(e: &'a Event) -> Self {
        RedisEvent {
            id: Cow::Borrowed(&e.id),
            pushed: e.pushed,
            device: Cow::Borrowed(&e.device),
            created: e.created,
            modified: e.modified,
            origin: e.origin,
            event: Cow::Borrowed(&e.event),
        }
    }

    fn into_event(self) -> Event {
        Event {
            id: self.id.into_owned(),
            pushed: self.pushed,
            device: self.device.into_owned(),
            created: self.created,
            modified: self.modified,
            origin: self.origin,
            event: self.event.into_owned(),
            readings: Vec::new(),
        }
    }
}

/// `record` as msgpack in `buf` (cleared first): one buffer, reused, instead of a new `Vec`
/// per record.
///
/// Writing into a `Vec` cannot fail, nor can serializing strings and integers; the error is
/// kept for form's sake and names the encoder.
pub(crate) fn encode<'b, T: Serialize>(
    buf: &'b mut Vec<u8>,
    kind: &'static str,
    id: &str,
    record: &T,
) -> StoreResult<&'b [u8]> {
    buf.clear();
    rmp_serde::encode::write_named(buf, record).map_err(|e| StoreError::Backend {
        backend: "msgpack",
        message: format!("cannot encode {kind} {id}: {e}"),
    })?;
    Ok(buf)
}

/// A model type and its stored form.
pub(crate) trait Record: Sized {
    /// "event" or "reading", for errors.
    const KIND: &'static str;
    /// Decodes a stored record; fails on a record of the other kind (`deny_unknown_fields`).
    fn from_msgpack(blob: &[u8]) -> Result<Self, rmp_serde::decode::Error>;
}

impl Record for Event {
    const KIND: &'static str = "event";
    fn from_msgpack(blob: &[u8]) -> Result<Self, rmp_serde::decode::Error> {
        rmp_serde::from_slice::<RedisEvent>(blob).map(RedisEvent::into_event)
    }
}

impl Record for Reading {
    const KIND: &'static str = "reading";
    fn from_msgpack(blob: &[u8]) -> Result<Self, rmp_serde::decode::Error> {
        rmp_serde::from_slice::<RedisReading>(blob).map(RedisReading::into_reading)
    }
}

/// Decodes the record stored under `id` (its key, as text or bytes: only an error names it).
pub(crate) fn decode<T: Record>(id: &(impl AsRef<[u8]> + ?Sized), blob: &[u8]) -> StoreResult<T> {
    T::from_msgpack(blob).map_err(|e| StoreError::Decode {
        kind: T::KIND,
        id: String::from_utf8_lossy(id.as_ref()).into_owned(),
        reason: e.to_string(),
    })
}

/// Whether `blob` is a stored record of either kind.
fn is_record(blob: &[u8]) -> bool {
    Event::from_msgpack(blob).is_ok() || Reading::from_msgpack(blob).is_ok()
}

/// The record of kind `T` under `id` (checked and lowercase: see [`key_id`]), given the value
/// of that key (`None`: no such key). `NotFound` when `id` names nothing, or a record of the
/// other kind: events and readings share the id key space, so a reading's id names no event,
/// as on a backend with a table per kind.
pub(crate) fn found<T: Record>(id: &str, blob: Option<&[u8]>) -> StoreResult<T> {
    let not_found = || StoreError::NotFound {
        kind: T::KIND,
        id: id.to_string(),
    };
    let blob = blob.ok_or_else(not_found)?;
    // Not a `T`: if it is a record at all, it is one of the other kind.
    decode(id, blob).map_err(|e| if is_record(blob) { not_found() } else { e })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob<T: Serialize>(record: &T) -> Vec<u8> {
        encode(&mut Vec::new(), "test", "", record)
            .expect("encode")
            .to_vec()
    }

    #[test]
    fn records_are_msgpack_maps_with_the_2018_field_names_in_order() {
        let r = Reading::default();
        let e = Event::default();
        let cases: [(Vec<u8>, &[&str]); 2] = [
            (
                blob(&RedisReading::of(&r)),
                &[
                    "id", "pushed", "created", "origin", "modified", "device", "name", "value",
                ],
            ),
            (
                blob(&RedisEvent::of(&e)),
                &[
                    "id", "pushed", "device", "created", "modified", "origin", "event",
                ],
            ),
        ];
        for (blob, fields) in cases {
            // A fixmap header (0x80 | entries), then each key as a fixstr (0xa0 | len).
            assert_eq!(blob[0], 0x80 | fields.len() as u8);
            let mut rest = &blob[1..];
            for field in fields {
                let mut key = vec![0xa0 | field.len() as u8];
                key.extend_from_slice(field.as_bytes());
                let at = rest
                    .windows(key.len())
                    .position(|w| w == key.as_slice())
                    .unwrap_or_else(|| panic!("field {field} missing or out of order"));
                rest = &rest[at + key.len()..];
            }
        }
    }

    #[test]
    fn found_tells_a_missing_or_other_kind_record_from_a_corrupt_one() {
        let id = "5b4f0000000000000000000a";
        let e = Event::default();
        let event_blob = blob(&RedisEvent::of(&e));
        assert!(matches!(found::<Event>(id, Some(&event_blob)), Ok(got) if got == e));
        assert!(matches!(
            found::<Reading>(id, Some(&event_blob)),
            Err(StoreError::NotFound {
                kind: "reading",
                ..
            })
        ));
        assert!(matches!(
            found::<Reading>(id, None),
            Err(StoreError::NotFound {
                kind: "reading",
                ..
            })
        ));
        assert!(matches!(
            found::<Reading>(id, Some(b"not msgpack")),
            Err(StoreError::Decode {
                kind: "reading",
                ..
            })
        ));
    }
}

//! The key names of EdgeX 3.1's Redis layout (`event.go`, `reading.go`, `dbconsts.go` at
//! v3.1.1; storage-layouts.md §B.2), and which index a [`Filter`] reads.
//!
//! Keys are parts joined with `:` (EdgeX's `CreateKey`). Index members are the stored keys
//! (`cd|evt:<id>`, `cd|rd:<id>`), not bare ids, so a member is also the key to `MGET`.

use std::borrow::Cow;
use std::sync::OnceLock;

use super::Filter;
use crate::keyslot::{hash_slot, SLOTS};
use crate::store::redis::records2018::ClusterKeys;

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
#[cfg(test)]
pub(super) fn event(id: &str) -> String {
    Part::SINGLE.event(id)
}

/// `cd|evt:readings:<id>`: the event's reading keys, score = position in the event.
#[cfg(test)]
pub(super) fn event_readings(id: &str) -> String {
    Part::SINGLE.event_readings(id)
}

/// `cd|rd:<id>`: the reading's JSON.
#[cfg(test)]
pub(super) fn reading(id: &str) -> String {
    Part::SINGLE.reading(id)
}

/// Partitions of the cluster form: as many as the 2018 layout's ([`ClusterKeys`]), with the
/// same hash tags, so both spread over the slot space the same way.
pub(super) const PARTITIONS: usize = ClusterKeys::PARTITIONS;

/// Where the layout's keys live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Keyspace {
    /// One keyspace, EdgeX's own names: a server, the engine.
    Single,
    /// [`PARTITIONS`] hash-tag partitions, for Redis Cluster (see the module documentation
    /// of [`super`]).
    Partitioned,
}

impl Keyspace {
    /// How many partitions there are.
    pub(super) fn partitions(self) -> usize {
        match self {
            Keyspace::Single => 1,
            Keyspace::Partitioned => PARTITIONS,
        }
    }

    /// Partition `p` (`p < partitions()`).
    pub(super) fn part(self, p: usize) -> Part {
        match self {
            Keyspace::Single => Part::SINGLE,
            Keyspace::Partitioned => Part {
                index: p,
                tag: tag(p),
            },
        }
    }

    /// Every partition, in order.
    pub(super) fn parts(self) -> impl Iterator<Item = Part> {
        (0..self.partitions()).map(move |p| self.part(p))
    }

    /// The partition that holds a device's events, their readings, and the device's indexes.
    pub(super) fn of_device(self, device: &str) -> Part {
        match self {
            Keyspace::Single => Part::SINGLE,
            Keyspace::Partitioned => self.part(ClusterKeys::of_device(device)),
        }
    }

    /// The `SCAN MATCH` pattern of every device's event index, `cd|evt:device:name:*` (with
    /// any tag in the cluster form).
    pub(super) fn device_index_pattern(self) -> &'static str {
        match self {
            Keyspace::Single => "cd|evt:device:name:*",
            Keyspace::Partitioned => "cd|{*}evt:device:name:*",
        }
    }

    /// The device whose event index `key` is (a key [`Keyspace::device_index_pattern`]
    /// matched).
    pub(super) fn device_of_index(self, key: &str) -> Option<&str> {
        let rest = key.strip_prefix(PREFIX)?;
        let rest = match self {
            Keyspace::Single => rest,
            // The tag is `{…}`, right after the prefix, and holds no `}`.
            Keyspace::Partitioned => &rest[rest.find('}')? + 1..],
        };
        rest.strip_prefix("evt:device:name:")
    }

    /// The partition of a stored key (an index member): its slot's.
    pub(super) fn of_key(self, key: &str) -> Part {
        match self {
            Keyspace::Single => Part::SINGLE,
            // The tag after `cd|` decides the slot, and each partition is a range of slots.
            Keyspace::Partitioned => {
                self.part(usize::from(hash_slot(key.as_bytes())) * PARTITIONS / SLOTS)
            }
        }
    }
}

/// `{TAG}` of partition `p`: [`ClusterKeys::tag`] in braces.
fn tag(p: usize) -> &'static str {
    static TAGS: OnceLock<Vec<String>> = OnceLock::new();
    &TAGS.get_or_init(|| {
        (0..PARTITIONS)
            .map(|p| format!("{{{}}}", ClusterKeys::tag(p)))
            .collect()
    })[p]
}

/// `cd|dir:{<id>}`: the partition that holds an event (decimal), in the cluster form only.
/// Its hash tag is the id, so directory entries spread over every slot.
pub(super) fn directory(id: &str) -> String {
    format!("{PREFIX}dir:{{{id}}}")
}

/// The keys of one partition: EdgeX's names, with the partition's hash tag right after `cd|`
/// (`cd|{TAG}evt:<id>`) in the cluster form, so every key still starts with [`PREFIX`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Part {
    /// Which partition (0 on a single keyspace).
    pub(super) index: usize,
    /// `{TAG}`, or empty on a single keyspace.
    tag: &'static str,
}

impl Part {
    /// The only partition of a single keyspace: EdgeX's names as they are.
    pub(super) const SINGLE: Part = Part { index: 0, tag: "" };

    /// A fixed name, with the tag after `cd|` when there is one.
    fn fixed(self, name: &'static str) -> Cow<'static, str> {
        if self.tag.is_empty() {
            Cow::Borrowed(name)
        } else {
            Cow::Owned(format!("{PREFIX}{}{}", self.tag, &name[PREFIX.len()..]))
        }
    }

    /// `cd|evt`: every event (of the partition), score origin.
    pub(super) fn events(self) -> Cow<'static, str> {
        self.fixed(EVENTS)
    }

    /// `cd|evt:origin`: the same members as [`Part::events`].
    pub(super) fn events_by_origin(self) -> Cow<'static, str> {
        self.fixed(EVENTS_BY_ORIGIN)
    }

    /// `cd|rd`: every reading, score 0.
    pub(super) fn readings(self) -> Cow<'static, str> {
        self.fixed(READINGS)
    }

    /// `cd|rd:origin`: every reading, score origin.
    pub(super) fn readings_by_origin(self) -> Cow<'static, str> {
        self.fixed(READINGS_BY_ORIGIN)
    }

    /// `cd|evt:<id>`: the event's JSON.
    pub(super) fn event(self, id: &str) -> String {
        format!("{PREFIX}{}evt:{id}", self.tag)
    }

    /// `cd|evt:device:name:<device>`: the device's events, score origin.
    pub(super) fn events_by_device(self, device: &str) -> String {
        format!("{PREFIX}{}evt:device:name:{device}", self.tag)
    }

    /// `cd|evt:readings:<id>`: the event's reading keys, score = position in the event.
    pub(super) fn event_readings(self, id: &str) -> String {
        format!("{PREFIX}{}evt:readings:{id}", self.tag)
    }

    /// `cd|rd:<id>`: the reading's JSON.
    pub(super) fn reading(self, id: &str) -> String {
        format!("{PREFIX}{}rd:{id}", self.tag)
    }

    /// `cd|rd:deviceName:<device>`: the device's readings, score origin.
    pub(super) fn readings_by_device(self, device: &str) -> String {
        format!("{PREFIX}{}rd:deviceName:{device}", self.tag)
    }

    /// `cd|rd:resourceName:<resource>`: the resource's readings, score origin.
    pub(super) fn readings_by_resource(self, resource: &str) -> String {
        format!("{PREFIX}{}rd:resourceName:{resource}", self.tag)
    }

    /// `cd|rd:deviceName:resourceName:<device>:<resource>`: score origin.
    pub(super) fn readings_by_device_resource(self, device: &str, resource: &str) -> String {
        format!(
            "{PREFIX}{}rd:deviceName:resourceName:{device}:{resource}",
            self.tag
        )
    }

    /// The origin-scored index that holds the events `filter` names: the device's, or
    /// `cd|evt` for a list and `cd|evt:origin` for a time range (as EdgeX's `AllEvents` and
    /// `EventsByTimeRange` pick them; the two hold the same members).
    pub(super) fn event_index(self, filter: &Filter<'_>) -> String {
        match (filter.device, filter.range) {
            (Some(device), _) => self.events_by_device(device),
            (None, None) => self.events().into_owned(),
            (None, Some(_)) => self.events_by_origin().into_owned(),
        }
    }

    /// The origin-scored index that holds the readings `filter` names (`cd|rd:origin` for
    /// all).
    pub(super) fn reading_index(self, filter: &Filter<'_>) -> String {
        match (filter.device, filter.resource) {
            (None, None) => self.readings_by_origin().into_owned(),
            (Some(device), None) => self.readings_by_device(device),
            (None, Some(resource)) => self.readings_by_resource(resource),
            (Some(device), Some(resource)) => self.readings_by_device_resource(device, resource),
        }
    }
}

/// The id in a stored key: what follows its last `:` (EdgeX's `idFromStoredKey`).
pub(super) fn id_of(stored_key: &str) -> &str {
    stored_key.rsplit(':').next().unwrap_or(stored_key)
}

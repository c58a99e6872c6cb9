//! The rules every core-data store follows, whatever it stores and however it reaches it:
//! how ids are checked and normalised (`key_id`), what an add stamps on a record
//! (`stamp_event`, `stamp_reading`), how an update merges into what is stored
//! (`merge_event`, `merge_reading`, the 2018 `mergo.Merge`), and the 2018 `readings_by_names`
//! loop. The semantics are documented on [`super`]; keeping them in one place is what makes
//! every backend's column describe the same work.

use std::borrow::Cow;

use crate::store::{StoreError, StoreResult};
use crate::v2018::{is_object_id, now_ms, Event, ObjectId, Reading};

/// `id` as every key holds it: ids are case-insensitive ([`ObjectId::parse`] takes either
/// case) and stored in lowercase, the form the store assigns. Allocates only for an id with
/// upper-case letters; a malformed id is [`StoreError::InvalidId`].
pub(crate) fn key_id(id: &str) -> StoreResult<Cow<'_, str>> {
    if !is_object_id(id) {
        return Err(StoreError::InvalidId(id.to_string()));
    }
    Ok(if id.bytes().any(|b| b.is_ascii_uppercase()) {
        Cow::Owned(id.to_ascii_lowercase())
    } else {
        Cow::Borrowed(id)
    })
}

/// What a store does to a reading it is about to add: a fresh id whatever `r.id` held, and
/// `created` = now when it is 0.
pub(crate) fn stamp_reading(r: &mut Reading) {
    new_id(&mut r.id);
    if r.created == 0 {
        r.created = now_ms();
    }
}

/// Writes a fresh id over `id`, in the buffer it has: a caller that adds record after record
/// with one value (the benchmarks do) allocates no id.
fn new_id(id: &mut String) {
    id.clear();
    let hex = ObjectId::new().to_hex();
    id.push_str(std::str::from_utf8(&hex).expect("hex digits are ASCII"));
}

/// What a store does to an event it is about to add: fresh ids for it and its readings,
/// `created` = now when it is 0, and the readings get the event's `created`, and its `device`
/// when their own is empty.
pub(crate) fn stamp_event(e: &mut Event) {
    new_id(&mut e.id);
    if e.created == 0 {
        e.created = now_ms();
    }
    for r in &mut e.readings {
        new_id(&mut r.id);
        r.created = e.created;
        if r.device.is_empty() {
            r.device.clone_from(&e.device);
        }
    }
}

/// The index changes an event update needs, as [`merge_event`] found them.
pub(crate) struct EventMoves {
    /// `pushed` changed: the event's score in `event:pushed` becomes the merged `pushed`.
    pub(crate) pushed: bool,
    /// The device changed from this one: the event moves from `event:device:<old>` to the
    /// merged device's index, with its `created` as score.
    pub(crate) old_device: Option<String>,
}

/// Merges an update into the stored event (the 2018 `mergo.Merge`): `pushed`, `device`,
/// `origin` and `event` are replaced when non-zero / non-empty in `update`, `modified`
/// becomes now; `id`, `created` and the readings never change.
pub(crate) fn merge_event(stored: &mut Event, update: &Event) -> EventMoves {
    let pushed = update.pushed != 0 && update.pushed != stored.pushed;
    if pushed {
        stored.pushed = update.pushed;
    }
    let old_device = replace_if_changed(&mut stored.device, &update.device);
    if update.origin != 0 {
        stored.origin = update.origin;
    }
    if !update.event.is_empty() {
        stored.event.clone_from(&update.event);
    }
    stored.modified = now_ms();
    EventMoves { pushed, old_device }
}

/// The index changes a reading update needs, as [`merge_reading`] found them. Each old value
/// moves the reading from that index to the merged value's, with its `created` as score.
pub(crate) struct ReadingMoves {
    /// The device changed from this one (`reading:device:<old>`).
    pub(crate) old_device: Option<String>,
    /// The name changed from this one (`reading:name:<old>`).
    pub(crate) old_name: Option<String>,
}

/// Merges an update into the stored reading: `pushed`, `origin`, `device`, `name` and
/// `value` are replaced when non-zero / non-empty in `update`, `modified` becomes now; `id`
/// and `created` never change.
pub(crate) fn merge_reading(stored: &mut Reading, update: &Reading) -> ReadingMoves {
    let old_device = replace_if_changed(&mut stored.device, &update.device);
    let old_name = replace_if_changed(&mut stored.name, &update.name);
    if update.pushed != 0 {
        stored.pushed = update.pushed;
    }
    if update.origin != 0 {
        stored.origin = update.origin;
    }
    if !update.value.is_empty() {
        stored.value.clone_from(&update.value);
    }
    stored.modified = now_ms();
    ReadingMoves {
        old_device,
        old_name,
    }
}

/// Sets `stored` to `update` when `update` is non-empty and different; returns the old value
/// then.
fn replace_if_changed(stored: &mut String, update: &str) -> Option<String> {
    (!update.is_empty() && update != stored).then(|| std::mem::replace(stored, update.into()))
}

/// The 2018 client's `readings_by_names` loop: the readings of each name in turn, through
/// `by_name(name, left)`, until `limit` readings have been collected.
pub(crate) fn readings_by_names(
    names: &[&str],
    limit: usize,
    mut by_name: impl FnMut(&str, usize) -> StoreResult<Vec<Reading>>,
) -> StoreResult<Vec<Reading>> {
    let mut readings = Vec::new();
    for name in names {
        let left = limit - readings.len();
        if left == 0 {
            break;
        }
        readings.append(&mut by_name(name, left)?);
    }
    Ok(readings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_id_lowercases_and_allocates_only_for_upper_case() {
        let lower = "5b4f0000000000000000000a";
        assert!(matches!(key_id(lower), Ok(Cow::Borrowed(id)) if id == lower));
        assert!(matches!(key_id("5B4F0000000000000000000A"), Ok(Cow::Owned(id)) if id == lower));
        assert!(matches!(key_id("5b4f"), Err(StoreError::InvalidId(id)) if id == "5b4f"));
    }

    #[test]
    fn merges_replace_only_non_zero_fields_and_report_index_moves() {
        let mut stored = Event {
            pushed: 1,
            device: "a".into(),
            origin: 2,
            event: "s".into(),
            created: 10,
            ..Event::default()
        };
        let moves = merge_event(&mut stored, &Event::default());
        assert!(!moves.pushed && moves.old_device.is_none());
        assert_eq!((stored.pushed, stored.origin, stored.created), (1, 2, 10));
        let moves = merge_event(
            &mut stored,
            &Event {
                pushed: 5,
                device: "b".into(),
                created: 99,
                ..Event::default()
            },
        );
        assert!(moves.pushed);
        assert_eq!(moves.old_device.as_deref(), Some("a"));
        assert_eq!((stored.pushed, stored.device.as_str()), (5, "b"));
        assert_eq!(stored.created, 10, "created is immutable");

        let mut stored = Reading {
            device: "d".into(),
            name: "n".into(),
            value: "v".into(),
            ..Reading::default()
        };
        let same = Reading {
            device: "d".into(),
            ..Reading::default()
        };
        let moves = merge_reading(&mut stored, &same);
        assert!(moves.old_device.is_none() && moves.old_name.is_none());
        let moves = merge_reading(
            &mut stored,
            &Reading {
                name: "m".into(),
                ..Reading::default()
            },
        );
        assert_eq!(moves.old_name.as_deref(), Some("n"));
        assert!(moves.old_device.is_none());
        assert_eq!((stored.name.as_str(), stored.value.as_str()), ("m", "v"));
    }
}

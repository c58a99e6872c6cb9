//! Reads: counts, pages of an index (EdgeX's `getObjectsBySomeRange` and
//! `getObjectsByScoreRange`), `MGET` of the members, and each event's readings
//! (`readingsByEventId`), one command per round trip as EdgeX sends them.

use super::codec::{decode_event, decode_reading};
use super::{keys, Page, Redis3Store, StoreError, StoreResult, UNLIMITED};
use crate::edgex::{Event, Reading};
use crate::store::redis::StoreConnection;

/// A stored key and the JSON under it.
pub(super) type Stored = (String, Vec<u8>);

impl<C: StoreConnection> Redis3Store<C> {
    /// `ZCARD key`, or `ZCOUNT key start end` for a time range.
    pub(super) fn count(&mut self, key: &str, range: Option<(i64, i64)>) -> StoreResult<u64> {
        match range {
            None => self.query(redis::cmd("ZCARD").arg(key)),
            Some((start, end)) => self.query(redis::cmd("ZCOUNT").arg(key).arg(start).arg(end)),
        }
    }

    /// One page of `key`'s members, newest first, within `range` when there is one.
    pub(super) fn members(
        &mut self,
        key: &str,
        range: Option<(i64, i64)>,
        page: Page,
    ) -> StoreResult<Vec<String>> {
        match range {
            None => self.newest(key, page),
            Some(range) => self.newest_between(key, range, page),
        }
    }

    /// `ZCOUNT key -inf +inf`, then `ZREVRANGE key offset offset+limit-1`.
    fn newest(&mut self, key: &str, page: Page) -> StoreResult<Vec<String>> {
        if page.limit == 0 {
            return Ok(Vec::new());
        }
        let count: u64 = self.query(redis::cmd("ZCOUNT").arg(key).arg("-inf").arg("+inf"))?;
        let Some(offset) = offset_within(page.offset, count) else {
            return Ok(Vec::new());
        };
        let stop = match i64::try_from(page.limit) {
            Ok(limit) if page.limit != UNLIMITED => offset.saturating_add(limit - 1),
            _ => -1,
        };
        self.query(redis::cmd("ZREVRANGE").arg(key).arg(offset).arg(stop))
    }

    /// `ZCOUNT key start end`, then `ZREVRANGEBYSCORE key end start LIMIT offset limit`.
    fn newest_between(
        &mut self,
        key: &str,
        (start, end): (i64, i64),
        page: Page,
    ) -> StoreResult<Vec<String>> {
        if page.limit == 0 {
            return Ok(Vec::new());
        }
        let count: u64 = self.query(redis::cmd("ZCOUNT").arg(key).arg(start).arg(end))?;
        let Some(offset) = offset_within(page.offset, count) else {
            return Ok(Vec::new());
        };
        let limit = match i64::try_from(page.limit) {
            Ok(limit) if page.limit != UNLIMITED => limit,
            _ => -1,
        };
        let mut cmd = redis::cmd("ZREVRANGEBYSCORE");
        cmd.arg(key)
            .arg(end)
            .arg(start)
            .arg("LIMIT")
            .arg(offset)
            .arg(limit);
        self.query(&cmd)
    }

    /// `MGET keys`, nil entries dropped (EdgeX's `getObjectsByIds`); no command for no keys.
    pub(super) fn mget(&mut self, keys: Vec<String>) -> StoreResult<Vec<Stored>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let values: Vec<Option<Vec<u8>>> = self.query(redis::cmd("MGET").arg(&keys))?;
        Ok(keys
            .into_iter()
            .zip(values)
            .filter_map(|(key, value)| Some((key, value?)))
            .collect())
    }

    /// The readings stored under `keys`, in that order.
    pub(super) fn readings_at(&mut self, keys: Vec<String>) -> StoreResult<Vec<Reading>> {
        self.mget(keys)?
            .iter()
            .map(|(key, json)| decode_reading(key, json))
            .collect()
    }

    /// The events stored under `keys`, in that order, each with its readings.
    pub(super) fn events_at(&mut self, keys: Vec<String>) -> StoreResult<Vec<Event>> {
        let stored = self.mget(keys)?;
        let mut events = Vec::with_capacity(stored.len());
        for (key, json) in &stored {
            let mut event = decode_event(key, json)?;
            event.readings = self.readings_of_event(&event.id)?;
            events.push(event);
        }
        Ok(events)
    }

    /// `GET cd|evt:<id>` and the event's readings; `id` is in stored form.
    pub(super) fn event(&mut self, id: &str) -> StoreResult<Event> {
        let key = keys::event(id);
        let json: Option<Vec<u8>> = self.query(redis::cmd("GET").arg(&key))?;
        let json = json.ok_or_else(|| StoreError::NotFound {
            kind: "event",
            id: id.to_owned(),
        })?;
        let mut event = decode_event(&key, &json)?;
        event.readings = self.readings_of_event(id)?;
        Ok(event)
    }

    /// `ZCOUNT`, `ZRANGE cd|evt:readings:<id> 0 -1` (ascending: the order sent), `MGET`.
    pub(super) fn readings_of_event(&mut self, id: &str) -> StoreResult<Vec<Reading>> {
        let key = keys::event_readings(id);
        let count: u64 = self.query(redis::cmd("ZCOUNT").arg(&key).arg("-inf").arg("+inf"))?;
        if count == 0 {
            return Ok(Vec::new());
        }
        let members: Vec<String> = self.query(redis::cmd("ZRANGE").arg(&key).arg(0).arg(-1))?;
        self.readings_at(members)
    }
}

/// `offset` as a range start when the page can hold anything: `None` when nothing is counted
/// or `offset` is past the end (EdgeX answers the latter with 416).
fn offset_within(offset: usize, count: u64) -> Option<i64> {
    let offset = u64::try_from(offset).ok()?;
    if count == 0 || offset > count {
        return None;
    }
    i64::try_from(offset).ok()
}

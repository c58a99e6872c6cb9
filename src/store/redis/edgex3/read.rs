//! Reads: counts, pages of an index (EdgeX's `getObjectsBySomeRange` and
//! `getObjectsByScoreRange`), `MGET` of the members, and each event's readings
//! (`readingsByEventId`), one command per round trip as EdgeX sends them.
//!
//! In the cluster form, a read of one device's records is the same sequence on the device's
//! partition. A read that spans devices sends its command to every partition in one pipeline
//! (the cluster connection sends each primary its part at once) and merges: counts add up; a
//! page takes the first `offset + limit` members of each partition (`WITHSCORES`), sorts
//! them newest first (ties by member, descending, as `ZREVRANGE` orders one set) and skips
//! `offset`. `MGET` goes once per partition, in one pipeline.

use super::codec::{decode_event, decode_reading};
use super::keys::{Keyspace, Part};
use super::{Page, Redis3Store, StoreError, StoreResult, UNLIMITED};
use crate::edgex::{Event, Reading};
use crate::transport::StoreConnection;

/// A stored key and the JSON under it.
pub(super) type Stored = (String, Vec<u8>);

impl<C: StoreConnection> Redis3Store<C> {
    /// The number of members of `keys` (one per partition read): `ZCARD`, or `ZCOUNT key
    /// start end` for a time range; several keys in one pipeline, added up.
    pub(super) fn count(
        &mut self,
        keys: Vec<String>,
        range: Option<(i64, i64)>,
    ) -> StoreResult<u64> {
        let command = |key: &str| {
            let mut cmd = match range {
                None => redis::cmd("ZCARD"),
                Some(_) => redis::cmd("ZCOUNT"),
            };
            cmd.arg(key);
            if let Some((start, end)) = range {
                cmd.arg(start).arg(end);
            }
            cmd
        };
        if let [key] = keys.as_slice() {
            return self.query(&command(key));
        }
        let mut pipe = redis::pipe();
        for key in &keys {
            pipe.add_command(command(key));
        }
        let counts: Vec<u64> = self.run(&pipe)?;
        Ok(counts.iter().sum())
    }

    /// One page of the members of `keys` (one per partition read), newest first, within
    /// `range` when there is one.
    pub(super) fn members(
        &mut self,
        keys: Vec<String>,
        range: Option<(i64, i64)>,
        page: Page,
    ) -> StoreResult<Vec<String>> {
        match (keys.as_slice(), range) {
            ([key], None) => self.newest(key, page),
            ([key], Some(range)) => self.newest_between(key, range, page),
            _ => self.newest_merged(&keys, range, page),
        }
    }

    /// A page of the union of `keys`: each key's first `offset + limit` members with their
    /// scores, in one pipeline, merged newest first.
    fn newest_merged(
        &mut self,
        keys: &[String],
        range: Option<(i64, i64)>,
        page: Page,
    ) -> StoreResult<Vec<String>> {
        if page.limit == 0 {
            return Ok(Vec::new());
        }
        // How many members each key gives: all (-1), or offset + limit.
        let wanted = match page.offset.checked_add(page.limit) {
            Some(n) if page.limit != UNLIMITED => i64::try_from(n).unwrap_or(-1),
            _ => -1,
        };
        let mut pipe = redis::pipe();
        for key in keys {
            match range {
                None => {
                    let stop = if wanted < 0 { -1 } else { wanted - 1 };
                    pipe.cmd("ZREVRANGE")
                        .arg(key)
                        .arg(0)
                        .arg(stop)
                        .arg("WITHSCORES");
                }
                Some((start, end)) => {
                    pipe.cmd("ZREVRANGEBYSCORE")
                        .arg(key)
                        .arg(end)
                        .arg(start)
                        .arg("WITHSCORES")
                        .arg("LIMIT")
                        .arg(0)
                        .arg(wanted);
                }
            }
        }
        let parts: Vec<Vec<(String, f64)>> = self.run(&pipe)?;
        let mut all: Vec<(String, f64)> = parts.into_iter().flatten().collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
        Ok(all
            .into_iter()
            .skip(page.offset)
            .take(page.limit)
            .map(|(member, _)| member)
            .collect())
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
    /// In the cluster form, one `MGET` per partition the keys are in, in one pipeline.
    pub(super) fn mget(&mut self, keys: Vec<String>) -> StoreResult<Vec<Stored>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        let values: Vec<Option<Vec<u8>>> = match self.space {
            Keyspace::Single => self.query(redis::cmd("MGET").arg(&keys))?,
            Keyspace::Partitioned => self.mget_per_partition(&keys)?,
        };
        Ok(keys
            .into_iter()
            .zip(values)
            .filter_map(|(key, value)| Some((key, value?)))
            .collect())
    }

    /// The values of `keys`, with one `MGET` per partition.
    fn mget_per_partition(&mut self, keys: &[String]) -> StoreResult<Vec<Option<Vec<u8>>>> {
        let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
        for (i, key) in keys.iter().enumerate() {
            let p = self.space.of_key(key).index;
            match groups.iter_mut().find(|(q, _)| *q == p) {
                Some((_, members)) => members.push(i),
                None => groups.push((p, vec![i])),
            }
        }
        let mut pipe = redis::pipe();
        for (_, members) in &groups {
            let cmd = pipe.cmd("MGET");
            for &i in members {
                cmd.arg(&keys[i]);
            }
        }
        let replies: Vec<Vec<Option<Vec<u8>>>> = self.run(&pipe)?;
        let mut values = vec![None; keys.len()];
        for ((_, members), got) in groups.iter().zip(replies) {
            for (&i, value) in members.iter().zip(got) {
                values[i] = value;
            }
        }
        Ok(values)
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
            let home = self.space.of_key(key);
            event.readings = self.readings_of_event(home, &event.id)?;
            events.push(event);
        }
        Ok(events)
    }

    /// `GET cd|evt:<id>` and the event's readings, in partition `home`; `id` is in stored
    /// form.
    pub(super) fn event(&mut self, home: Part, id: &str) -> StoreResult<Event> {
        let key = home.event(id);
        let json: Option<Vec<u8>> = self.query(redis::cmd("GET").arg(&key))?;
        let json = json.ok_or_else(|| StoreError::NotFound {
            kind: "event",
            id: id.to_owned(),
        })?;
        let mut event = decode_event(&key, &json)?;
        event.readings = self.readings_of_event(home, id)?;
        Ok(event)
    }

    /// `ZCOUNT`, `ZRANGE cd|evt:readings:<id> 0 -1` (ascending: the order sent), `MGET`.
    pub(super) fn readings_of_event(&mut self, home: Part, id: &str) -> StoreResult<Vec<Reading>> {
        let key = home.event_readings(id);
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

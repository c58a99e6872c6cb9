//! The calls on one device's events from one source (EdgeX 4.0's retention), on a layout that
//! indexes no source: EdgeX 3.1 never asks for one, and EdgeX 4.0's Redis client leaves these
//! calls unimplemented (each logs a warning and answers nothing). Here the device's index
//! (`cd|evt:device:name:<d>`, in the device's partition) gives the candidates, and each
//! record's `SourceName` picks the source's:
//!
//! - count, page: `ZREVRANGEBYSCORE` of the device's index (within the time range, if any:
//!   one reply, a snapshot of the members), then `MGET` of [`CHUNK`] records at a time, newest
//!   first, until the count reaches its limit or the page is full; a page's events then come
//!   back as any page's do (`MGET`, and each event's readings).
//! - delete ([`Doomed::Source`](crate::store::edgex::Doomed::Source)):
//!   `ZRANGEBYSCORE <index> -inf <up_to>`, `MGET` of the records to keep the source's, then
//!   the bulk delete's two phases on those (`delete`), which read the records again.
//! - pairs: `SCAN MATCH cd|evt:device:name:*` on every node for the devices, then every
//!   device's records, [`CHUNK`] at a time.
//!
//! Each costs a read of the device's records (the pairs, of every record) where EdgeX 4.0's
//! PostgreSQL answers from an index. Origins are compared exactly, from the records: the
//! index scores, doubles, only narrow the candidates.

use std::collections::BTreeSet;

use super::codec::{decode_source, SourceOrigin};
use super::delete::scan_node;
use super::{Redis3Store, StoreResult};
use crate::store::edgex::{DeviceSource, Page, SourceFilter};
use crate::store::redis::backend;
use crate::store::UNLIMITED;
use crate::transport::StoreConnection;

/// Records per `MGET` of a source scan.
const CHUNK: usize = 1_000;

impl<C: StoreConnection> Redis3Store<C> {
    /// Calls `keep` with the key and record of each event of `filter.device` in
    /// `filter.range`, newest first, until it returns `false`. Records of other sources are
    /// passed too: the caller compares.
    fn each_record_of_device(
        &mut self,
        filter: SourceFilter<'_>,
        mut keep: impl FnMut(&str, &SourceOrigin) -> bool,
    ) -> StoreResult<()> {
        let home = self.space.of_device(filter.device);
        let index = home.events_by_device(filter.device);
        let (max, min) = match filter.range {
            Some((start, end)) => (end.to_string(), start.to_string()),
            None => ("+inf".to_string(), "-inf".to_string()),
        };
        let members: Vec<String> =
            self.query(redis::cmd("ZREVRANGEBYSCORE").arg(&index).arg(max).arg(min))?;
        self.each_record(members, |key, record| keep(key, record))
    }

    /// `MGET`s `members` [`CHUNK`] at a time and calls `keep` with each record found, in
    /// order, until it returns `false`.
    fn each_record(
        &mut self,
        members: Vec<String>,
        mut keep: impl FnMut(&str, &SourceOrigin) -> bool,
    ) -> StoreResult<()> {
        for chunk in members.chunks(CHUNK) {
            for (key, json) in self.mget(chunk.to_vec())? {
                if !keep(&key, &decode_source(&key, &json)?) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// [`EventStore::source_event_count`](crate::store::edgex::EventStore::source_event_count).
    pub(super) fn count_of_source(
        &mut self,
        filter: SourceFilter<'_>,
        limit: usize,
    ) -> StoreResult<u64> {
        let mut count = 0usize;
        if limit == 0 {
            return Ok(0);
        }
        self.each_record_of_device(filter, |_, record| {
            if is_of(&filter, record) {
                count += 1;
            }
            count < limit
        })?;
        Ok(count as u64)
    }

    /// [`EventStore::source_events`](crate::store::edgex::EventStore::source_events).
    pub(super) fn page_of_source(
        &mut self,
        filter: SourceFilter<'_>,
        page: Page,
    ) -> StoreResult<Vec<String>> {
        let mut keys = Vec::new();
        if page.limit == 0 {
            return Ok(keys);
        }
        let mut skip = page.offset;
        self.each_record_of_device(filter, |key, record| {
            if !is_of(&filter, record) {
                return true;
            }
            if skip > 0 {
                skip -= 1;
                return true;
            }
            keys.push(key.to_owned());
            page.limit == UNLIMITED || keys.len() < page.limit
        })?;
        Ok(keys)
    }

    /// `Doomed::Source`: the source's events of `device` with origin <= `up_to_ns`, and
    /// their readings.
    pub(super) fn delete_of_source(
        &mut self,
        device: &str,
        source: &str,
        up_to_ns: i64,
    ) -> StoreResult<()> {
        let filter = SourceFilter::new(device, source).between(i64::MIN, up_to_ns);
        let mut doomed = Vec::new();
        self.each_record_of_device(filter, |key, record| {
            if is_of(&filter, record) {
                doomed.push(key.to_owned());
            }
            true
        })?;
        if doomed.is_empty() {
            return Ok(());
        }
        let home = self.space.of_device(device);
        self.delete_members(home, doomed)
    }

    /// [`EventStore::device_sources`](crate::store::edgex::EventStore::device_sources).
    pub(super) fn sources(&mut self) -> StoreResult<Vec<DeviceSource>> {
        let pattern = self.space.device_index_pattern();
        let mut indexes: Vec<String> = Vec::new();
        self.conn
            .for_each_node(|node| {
                scan_node(node, pattern, |_, batch: Vec<String>| {
                    indexes.extend(batch);
                    Ok(())
                })
            })
            .map_err(backend)?;
        // SCAN may return a key twice.
        indexes.sort();
        indexes.dedup();
        let mut pairs = BTreeSet::new();
        for index in indexes {
            let Some(device) = self.space.device_of_index(&index).map(str::to_owned) else {
                continue;
            };
            let members: Vec<String> =
                self.query(redis::cmd("ZRANGE").arg(&index).arg(0).arg(-1))?;
            self.each_record(members, |_, record| {
                // The index names the device; the record is the event's own word on it.
                if record.device_name == device && !record.source_name.is_empty() {
                    pairs.insert(DeviceSource::new(&device, &record.source_name));
                }
                true
            })?;
        }
        Ok(pairs.into_iter().collect())
    }
}

/// Whether a record of the filter's device is one of its events: the source, and the origin
/// within the range (exactly; the index's scores only narrowed it).
fn is_of(filter: &SourceFilter<'_>, record: &SourceOrigin) -> bool {
    record.source_name == filter.source
        && filter
            .range
            .is_none_or(|(start, end)| (start..=end).contains(&record.origin))
}

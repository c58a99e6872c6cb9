//! Consumer groups of a stream (XGROUP, XREADGROUP, XACK, XCLAIM, ...): what Redis 7.0 keeps
//! per group (t_stream.c `streamCG`, `streamConsumer`, `streamNACK`).
//!
//! A group has a last-delivered id, an entries-read counter (the logical position of that
//! id, or unknown), a pending entries list (PEL: delivered, not acknowledged) and its
//! consumers. Each pending entry names its owner; each consumer lists the ids it owns.
//!
//! Invariants: an id is in `Consumer::pending` of consumer `c` exactly when the group's
//! [`PendingEntry`] for it names `c`, and that consumer exists. Maps are ordered by bytes,
//! as Redis's radix trees iterate, so replies list groups, consumers and ids in its order.

use std::collections::{BTreeMap, BTreeSet};

use super::{Fields, Stream, StreamId};

/// One delivered, unacknowledged entry (Redis's NACK).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingEntry {
    /// The consumer owning it.
    pub consumer: Vec<u8>,
    /// When it was last delivered, ms since the Unix epoch (XCLAIM TIME may set any
    /// value up to now).
    pub delivery_time_ms: i64,
    /// How many times it was delivered (XCLAIM RETRYCOUNT may set any value).
    pub delivery_count: u64,
}

/// A consumer of a group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Consumer {
    /// When it last read or claimed, ms since the Unix epoch (XINFO's idle, seen-time).
    pub seen_time_ms: i64,
    /// The ids it owns in the group's PEL.
    pub pending: BTreeSet<StreamId>,
}

/// A consumer group.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConsumerGroup {
    /// The last id delivered to the group (`>` reads above it).
    pub last_delivered: StreamId,
    /// The logical read counter of `last_delivered` (entries added up to it); `None` when
    /// unknown (Redis's -1).
    pub entries_read: Option<i64>,
    /// The group's PEL.
    pub pending: BTreeMap<StreamId, PendingEntry>,
    /// Consumers by name.
    pub consumers: BTreeMap<Vec<u8>, Consumer>,
}

impl ConsumerGroup {
    /// A group starting after `last_delivered`.
    pub fn new(last_delivered: StreamId, entries_read: Option<i64>) -> ConsumerGroup {
        ConsumerGroup {
            last_delivered,
            entries_read,
            ..ConsumerGroup::default()
        }
    }

    /// The consumer `name`, created (seen now) if missing; seen now either way, as
    /// Redis's lookups for reads and claims refresh it.
    pub fn touch_consumer(&mut self, name: &[u8], now_ms: i64) -> &mut Consumer {
        let consumer = self.consumers.entry(name.to_vec()).or_default();
        consumer.seen_time_ms = now_ms;
        consumer
    }

    /// Creates consumer `name` (XGROUP CREATECONSUMER); false if it exists.
    pub fn create_consumer(&mut self, name: &[u8], now_ms: i64) -> bool {
        if self.consumers.contains_key(name) {
            return false;
        }
        self.touch_consumer(name, now_ms);
        true
    }

    /// Deletes consumer `name` and its pending entries (XGROUP DELCONSUMER); returns how
    /// many it had, `None` if there was no such consumer.
    pub fn delete_consumer(&mut self, name: &[u8]) -> Option<usize> {
        let consumer = self.consumers.remove(name)?;
        for id in &consumer.pending {
            self.pending.remove(id);
        }
        Some(consumer.pending.len())
    }

    /// Removes `id` from the PEL and its owner's list (XACK); false if it was not pending.
    pub fn ack(&mut self, id: StreamId) -> bool {
        let Some(entry) = self.pending.remove(&id) else {
            return false;
        };
        if let Some(owner) = self.consumers.get_mut(&entry.consumer) {
            owner.pending.remove(&id);
        }
        true
    }

    /// Records `id` as delivered to `consumer` now: a new pending entry (count 1), or one
    /// another consumer owned moved to this one with its count reset to 1, as Redis does
    /// when XGROUP SETID makes entries be delivered again. The consumer must exist.
    pub fn deliver(&mut self, id: StreamId, consumer: &[u8], now_ms: i64) {
        if let Some(old) = self.pending.get(&id) {
            let old_owner = old.consumer.clone();
            if let Some(owner) = self.consumers.get_mut(&old_owner) {
                owner.pending.remove(&id);
            }
        }
        self.pending.insert(
            id,
            PendingEntry {
                consumer: consumer.to_vec(),
                delivery_time_ms: now_ms,
                delivery_count: 1,
            },
        );
        if let Some(owner) = self.consumers.get_mut(consumer) {
            owner.pending.insert(id);
        }
    }

    /// Gives the pending entry `id` to `consumer` (XCLAIM, XAUTOCLAIM), creating the entry
    /// if missing (FORCE); the consumer must exist. Sets its delivery time, and its count
    /// to `retry_count` if given, else increments it unless `just_id`.
    pub fn claim(
        &mut self,
        id: StreamId,
        consumer: &[u8],
        delivery_time_ms: i64,
        retry_count: Option<u64>,
        just_id: bool,
    ) {
        let entry = self.pending.entry(id).or_insert_with(|| PendingEntry {
            consumer: Vec::new(),
            delivery_time_ms,
            delivery_count: 1,
        });
        let old_owner = std::mem::replace(&mut entry.consumer, consumer.to_vec());
        entry.delivery_time_ms = delivery_time_ms;
        match retry_count {
            Some(n) => entry.delivery_count = n,
            None if !just_id => entry.delivery_count = entry.delivery_count.wrapping_add(1),
            None => {}
        }
        if old_owner != consumer {
            if let Some(owner) = self.consumers.get_mut(&old_owner) {
                owner.pending.remove(&id);
            }
            if let Some(owner) = self.consumers.get_mut(consumer) {
                owner.pending.insert(id);
            }
        }
    }
}

/// What Redis's lag and read-counter estimates read from a stream (t_stream.c
/// `streamRangeHasTombstones`, `streamEstimateDistanceFromFirstEverEntry`): fixed while a
/// read updates a group, so it is taken once beforehand.
#[derive(Debug, Clone, Copy)]
struct Counters {
    len: usize,
    first: StreamId,
    last: StreamId,
    max_deleted: StreamId,
    added: u64,
}

impl Counters {
    /// Whether an XDEL hole may lie at or after `start`.
    fn has_tombstones_from(&self, start: StreamId) -> bool {
        if self.len == 0 || self.max_deleted == StreamId::MIN || self.first > self.max_deleted {
            return false;
        }
        start <= self.max_deleted
    }

    /// The read counter of `id` (how many entries were added up to it), when it can be
    /// known without walking the stream.
    fn entries_read_at(&self, id: StreamId) -> Option<i64> {
        let added = self.added as i64;
        if self.added == 0 {
            return Some(0);
        }
        if self.len == 0 && id <= self.last {
            return Some(added);
        }
        match id.cmp(&self.last) {
            std::cmp::Ordering::Equal => return Some(added),
            std::cmp::Ordering::Greater => return None,
            std::cmp::Ordering::Less => {}
        }
        if self.max_deleted == StreamId::MIN || self.max_deleted < self.first {
            let len = self.len as i64;
            match id.cmp(&self.first) {
                std::cmp::Ordering::Less => return Some(added.wrapping_sub(len)),
                std::cmp::Ordering::Equal => return Some(added.wrapping_sub(len) + 1),
                std::cmp::Ordering::Greater => {}
            }
        }
        None
    }
}

/// A pending entry read back by XREADGROUP with an id (history): the entry, or `None`
/// when it was deleted from the stream since.
pub type HistoryEntry = (StreamId, Option<Fields>);

impl Stream {
    /// A group's read counter for a group whose last delivered id is `id`, when it can be
    /// known without walking the stream (Redis's `streamEstimateDistanceFromFirstEverEntry`;
    /// `None` is its "invalid").
    pub fn estimated_entries_read(&self, id: StreamId) -> Option<i64> {
        self.counters().entries_read_at(id)
    }

    fn counters(&self) -> Counters {
        Counters {
            len: self.entries.len(),
            first: self.first_id(),
            last: self.last_id,
            max_deleted: self.max_deleted_id,
            added: self.entries_added,
        }
    }

    /// A group's lag (entries not yet delivered to it), as XINFO GROUPS computes it;
    /// `None` when holes left by XDEL make it unknown.
    pub fn lag(&self, group: &ConsumerGroup) -> Option<i64> {
        let c = self.counters();
        if c.added == 0 {
            return Some(0);
        }
        let read = match group.entries_read {
            Some(read) if !c.has_tombstones_from(group.last_delivered) => read,
            _ => c.entries_read_at(group.last_delivered)?,
        };
        Some((c.added as i64).wrapping_sub(read))
    }

    /// XREADGROUP `>`: the entries after group `group`'s last-delivered id (at most
    /// `count`, 0 = all), delivered to `consumer` (which must exist): the group moves past
    /// them and, unless `noack`, they become the consumer's pending entries.
    pub fn read_new(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        count: usize,
        noack: bool,
        now_ms: i64,
    ) -> Vec<(StreamId, Fields)> {
        let counters = self.counters();
        let Stream {
            entries, groups, ..
        } = self;
        let Some(group) = groups.get_mut(group) else {
            return Vec::new();
        };
        let start = match group.last_delivered.next() {
            Some(start) => start,
            None => return Vec::new(),
        };
        let limit = if count == 0 { usize::MAX } else { count };
        let mut out = Vec::new();
        for (&id, fields) in entries.range(start..).take(limit) {
            if id > group.last_delivered {
                group.entries_read = match group.entries_read {
                    Some(read) if !counters.has_tombstones_from(id) => Some(read.wrapping_add(1)),
                    _ if counters.added != 0 => counters.entries_read_at(id),
                    unchanged => unchanged,
                };
                group.last_delivered = id;
            }
            if !noack {
                group.deliver(id, consumer, now_ms);
            }
            out.push((id, fields.clone()));
        }
        out
    }

    /// XREADGROUP with an id: `consumer`'s pending entries from `start` (at most `count`,
    /// 0 = all), each delivered once more (time and count updated) if still in the stream.
    pub fn read_history(
        &mut self,
        group: &[u8],
        consumer: &[u8],
        start: StreamId,
        count: usize,
        now_ms: i64,
    ) -> Vec<HistoryEntry> {
        let Stream {
            entries, groups, ..
        } = self;
        let Some(group) = groups.get_mut(group) else {
            return Vec::new();
        };
        let Some(owned) = group.consumers.get(consumer) else {
            return Vec::new();
        };
        let limit = if count == 0 { usize::MAX } else { count };
        let ids: Vec<StreamId> = owned.pending.range(start..).take(limit).copied().collect();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let fields = entries.get(&id).cloned();
            if fields.is_some() {
                if let Some(entry) = group.pending.get_mut(&id) {
                    entry.delivery_time_ms = now_ms;
                    entry.delivery_count = entry.delivery_count.wrapping_add(1);
                }
            }
            out.push((id, fields));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::types::stream::NodeLimits;

    fn id(ms: u64) -> StreamId {
        StreamId::new(ms, 0)
    }

    #[test]
    fn owners_and_the_pel_stay_in_step() {
        let mut g = ConsumerGroup::new(StreamId::MIN, None);
        g.touch_consumer(b"a", 10);
        g.touch_consumer(b"b", 10);
        g.deliver(id(1), b"a", 10);
        g.deliver(id(2), b"a", 10);
        // Delivered again to another consumer: moves, count back to 1.
        g.claim(id(1), b"b", 20, None, false);
        assert_eq!(g.pending[&id(1)].delivery_count, 2);
        g.deliver(id(1), b"a", 30);
        assert_eq!(g.pending[&id(1)].delivery_count, 1);
        assert_eq!(g.consumers[&b"a"[..]].pending.len(), 2);
        assert!(g.consumers[&b"b"[..]].pending.is_empty());
        assert!(g.ack(id(2)));
        assert!(!g.ack(id(2)));
        assert_eq!(g.delete_consumer(b"a"), Some(1));
        assert!(g.pending.is_empty());
        assert_eq!(g.delete_consumer(b"a"), None);
        assert!(g.create_consumer(b"a", 40));
        assert!(!g.create_consumer(b"a", 50));
        assert_eq!(g.consumers[&b"a"[..]].seen_time_ms, 40);
    }

    fn fields() -> Fields {
        vec![(b"f".to_vec(), b"v".to_vec())]
    }

    #[test]
    fn reads_move_the_group_and_count_what_was_read() {
        let mut s = Stream::default();
        for ms in 1..=5 {
            s.append(id(ms), fields(), NodeLimits::default());
        }
        s.groups
            .insert(b"g".to_vec(), ConsumerGroup::new(StreamId::MIN, None));
        let lag = |s: &Stream| s.lag(&s.groups[&b"g"[..]]);
        // A group created at 0-0 knows its counter: 0 entries read before the first.
        assert_eq!(lag(&s), Some(5));
        s.groups.get_mut(&b"g"[..]).unwrap().touch_consumer(b"c", 1);
        assert_eq!(s.read_new(b"g", b"c", 2, false, 7).len(), 2);
        assert_eq!(s.groups[&b"g"[..]].entries_read, Some(2));
        assert_eq!(lag(&s), Some(3));
        // A hole ahead of the group: its lag is unknown until it reads past the hole.
        assert!(s.delete(id(4)));
        assert_eq!(lag(&s), None);
        assert_eq!(s.read_new(b"g", b"c", 0, true, 8).len(), 2);
        assert_eq!(s.groups[&b"g"[..]].entries_read, Some(5));
        assert_eq!(lag(&s), Some(0));
        let history = s.read_history(b"g", b"c", StreamId::MIN, 0, 9);
        assert_eq!(
            history,
            vec![(id(1), Some(fields())), (id(2), Some(fields()))]
        );
        assert_eq!(s.groups[&b"g"[..]].pending[&id(1)].delivery_count, 2);
        assert_eq!(s.groups[&b"g"[..]].pending[&id(1)].delivery_time_ms, 9);
    }
}

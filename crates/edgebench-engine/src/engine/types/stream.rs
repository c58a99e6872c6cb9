//! The stream type (XADD, XRANGE, XREAD, ...): entries ordered by id `<ms>-<seq>`.
//!
//! Entries live in a B-tree by id. Beside them the stream keeps the *shape* Redis would give
//! it: Redis stores a stream as a radix tree of listpack nodes (at most
//! [`NODE_MAX_ENTRIES`] entries or [`NODE_MAX_BYTES`] bytes each, its defaults), and
//! approximate trimming (`MAXLEN ~`, `MINID ~`) only removes whole nodes. So that XADD and
//! XTRIM with `~` remove exactly what Redis removes, [`Node`] tracks each node's first id,
//! counters and listpack size, computed with listpack's encoding rules (t_stream.c
//! `streamAppendItem`, listpack.c); the entries' bytes themselves are not duplicated.
//!
//! Beside the entries it keeps what Redis 7.0 counts for consumer groups' lag and XINFO
//! (`entries_added`, `max_deleted_id`; the first id is derived) and the consumer groups
//! themselves ([`groups`]), so DEL, RENAME and COPY carry group state with the value.
//!
//! Invariants: `entries` holds the live entries; every live entry belongs to the node with
//! the greatest first id not above its own; `last_id` is at least every live entry's id
//! (XADD goes above it; XSETID may move it, never below the last live entry). Write
//! entries through the methods only, so the nodes and counters stay in step.

use std::collections::BTreeMap;
use std::fmt;

pub mod groups;

pub use groups::{Consumer, ConsumerGroup, PendingEntry};

/// Redis's default `stream-node-max-entries`.
pub const NODE_MAX_ENTRIES: u64 = 100;
/// Redis's default `stream-node-max-bytes`.
pub const NODE_MAX_BYTES: usize = 4096;
/// The most bytes a node may hold whatever `stream-node-max-bytes` says (t_stream.c
/// `STREAM_LISTPACK_MAX_SIZE`).
const NODE_MAX_BYTES_CAP: u64 = 1 << 30;

/// How big a node grows before the next entry starts one (CONFIG `stream-node-max-entries`
/// and `stream-node-max-bytes`; 0 lifts the limit, as in Redis).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeLimits {
    /// `stream-node-max-entries`: live and deleted entries of a node.
    pub entries: u64,
    /// `stream-node-max-bytes`: the node's listpack size.
    pub bytes: u64,
}

impl Default for NodeLimits {
    fn default() -> Self {
        NodeLimits {
            entries: NODE_MAX_ENTRIES,
            bytes: NODE_MAX_BYTES as u64,
        }
    }
}

impl NodeLimits {
    /// The LIMIT approximate trimming gets when none is given: 100 nodes' worth
    /// (`100 * stream-node-max-entries`), 10,000 when that is 0, at most 1,000,000
    /// (t_stream.c `streamParseAddOrTrimArgsOrReply`).
    pub fn approx_limit(self) -> u64 {
        match self.entries.saturating_mul(100) {
            0 => 10_000,
            n => n.min(1_000_000),
        }
    }

    /// The byte size at which a node is full.
    fn max_bytes(self) -> u64 {
        match self.bytes {
            0 => NODE_MAX_BYTES_CAP,
            n => n.min(NODE_MAX_BYTES_CAP),
        }
    }
}

/// A stream entry id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    /// Milliseconds part.
    pub ms: u64,
    /// Sequence part.
    pub seq: u64,
}

impl StreamId {
    /// `0-0`, the least id.
    pub const MIN: StreamId = StreamId { ms: 0, seq: 0 };
    /// The greatest id.
    pub const MAX: StreamId = StreamId {
        ms: u64::MAX,
        seq: u64::MAX,
    };

    /// An id.
    pub const fn new(ms: u64, seq: u64) -> StreamId {
        StreamId { ms, seq }
    }

    /// The next id up (`None` past [`StreamId::MAX`]).
    pub fn next(self) -> Option<StreamId> {
        match (self.ms, self.seq) {
            (u64::MAX, u64::MAX) => None,
            (ms, u64::MAX) => Some(StreamId::new(ms + 1, 0)),
            (ms, seq) => Some(StreamId::new(ms, seq + 1)),
        }
    }

    /// The next id down (`None` below [`StreamId::MIN`]).
    pub fn prev(self) -> Option<StreamId> {
        match (self.ms, self.seq) {
            (0, 0) => None,
            (ms, 0) => Some(StreamId::new(ms - 1, u64::MAX)),
            (ms, seq) => Some(StreamId::new(ms, seq - 1)),
        }
    }
}

impl fmt::Display for StreamId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.ms, self.seq)
    }
}

/// An entry's field-value pairs, in the order given.
pub type Fields = Vec<(Vec<u8>, Vec<u8>)>;

/// How to trim a stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trim {
    /// Keep at most this many entries (MAXLEN).
    MaxLen(u64),
    /// Remove the entries with a lower id (MINID).
    MinId(StreamId),
}

/// One listpack node of Redis's representation: what approximate trimming needs.
#[derive(Debug, Clone)]
struct Node {
    /// Entries not deleted.
    live: u64,
    /// Entries flagged deleted (XDEL, exact trimming) but still in the listpack.
    deleted: u64,
    /// The field names of the node's first entry (Redis's "master entry").
    master_fields: Vec<Vec<u8>>,
    /// The listpack's size in bytes, except its live and deleted counters (whose encoded
    /// size changes with their values).
    bytes: usize,
    /// The id of the last entry appended to the node, deleted or not.
    last: StreamId,
}

impl Node {
    fn listpack_bytes(&self) -> usize {
        self.bytes + int_elem(self.live as i64) + int_elem(self.deleted as i64)
    }
}

/// A stream.
#[derive(Debug, Clone, Default)]
pub struct Stream {
    /// Live entries by id (read it; write through the methods).
    pub entries: BTreeMap<StreamId, Fields>,
    /// The last id ever added: XADD must go above it, even after deletions.
    pub last_id: StreamId,
    /// Redis's listpack nodes, by the id of their first entry.
    nodes: BTreeMap<StreamId, Node>,
    /// Entries ever added (XINFO's entries-added; XSETID ENTRIESADDED sets it).
    pub entries_added: u64,
    /// The greatest id XDEL removed (XINFO's max-deleted-entry-id; XSETID MAXDELETEDID
    /// sets it). Trimming does not change it, as in Redis.
    pub max_deleted_id: StreamId,
    /// Consumer groups by name.
    pub groups: BTreeMap<Vec<u8>, ConsumerGroup>,
}

impl Stream {
    /// Listpack nodes (what freeing the stream costs, with its groups).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Live entries (XLEN).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no entry is live. (An empty stream is still a key: Redis keeps it.)
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The id of the last live entry.
    pub fn last_entry_id(&self) -> Option<StreamId> {
        self.entries.last_key_value().map(|(id, _)| *id)
    }

    /// The id of the first live entry, 0-0 when empty (XINFO's recorded-first-entry-id:
    /// Redis recomputes it whenever the first entry goes).
    pub fn first_id(&self) -> StreamId {
        self.entries
            .first_key_value()
            .map_or(StreamId::MIN, |(id, _)| *id)
    }

    /// XINFO's radix-tree-keys: Redis's listpack nodes.
    pub fn radix_tree_keys(&self) -> usize {
        self.nodes.len()
    }

    /// XINFO's radix-tree-nodes: the nodes of Redis's radix tree keyed by the nodes' first
    /// ids (16 bytes, big-endian). Its inserts and deletes keep the tree fully compressed
    /// (rax.c), so the count follows from the keys alone: see [`rax_nodes`].
    pub fn radix_tree_nodes(&self) -> usize {
        let keys: Vec<[u8; 16]> = self.nodes.keys().map(|id| id_key(*id)).collect();
        if keys.is_empty() {
            1
        } else {
            rax_nodes(&keys, 0)
        }
    }

    /// Entries with `start <= id <= end`, in id order (`.rev()` for XREVRANGE).
    pub fn range(
        &self,
        start: StreamId,
        end: StreamId,
    ) -> impl DoubleEndedIterator<Item = (&StreamId, &Fields)> + '_ {
        // BTreeMap::range panics on an inverted range; that range is just empty.
        (start <= end)
            .then(|| self.entries.range(start..=end))
            .into_iter()
            .flatten()
    }

    /// Appends an entry, starting a node where `limits` say the last one is full. The caller
    /// has checked `id > last_id` (XADD's error otherwise).
    pub fn append(&mut self, id: StreamId, fields: Fields, limits: NodeLimits) {
        debug_assert!(id > self.last_id);
        let value_bytes: usize = fields.iter().map(|(f, v)| f.len() + v.len()).sum();
        let need_node = match self.nodes.last_key_value() {
            None => true,
            Some((_, tail)) => {
                (tail.listpack_bytes() + value_bytes) as u64 >= limits.max_bytes()
                    || (limits.entries != 0 && tail.live + tail.deleted >= limits.entries)
            }
        };
        if need_node {
            let numfields = fields.len() as i64;
            // Header (6) + end byte (1), field count, field names, master terminator.
            let bytes = 7
                + int_elem(numfields)
                + fields.iter().map(|(f, _)| str_elem(f)).sum::<usize>()
                + int_elem(0);
            self.nodes.insert(
                id,
                Node {
                    live: 0,
                    deleted: 0,
                    master_fields: fields.iter().map(|(f, _)| f.clone()).collect(),
                    bytes,
                    last: id,
                },
            );
        }
        if let Some((master, node)) = self.nodes.iter_mut().next_back() {
            let same_fields = node.master_fields.len() == fields.len()
                && node
                    .master_fields
                    .iter()
                    .zip(&fields)
                    .all(|(m, (f, _))| m == f);
            let numfields = fields.len() as i64;
            // flags (SAMEFIELDS = 2, else 0), ms and seq deltas (two's complement as
            // Redis stores them), [num-fields, fields], values, lp-count.
            let mut bytes = int_elem(if same_fields { 2 } else { 0 })
                + int_elem(id.ms.wrapping_sub(master.ms) as i64)
                + int_elem(id.seq.wrapping_sub(master.seq) as i64)
                + fields.iter().map(|(_, v)| str_elem(v)).sum::<usize>();
            let mut lp_count = numfields + 3;
            if !same_fields {
                bytes +=
                    int_elem(numfields) + fields.iter().map(|(f, _)| str_elem(f)).sum::<usize>();
                lp_count += numfields + 1;
            }
            bytes += int_elem(lp_count);
            node.bytes += bytes;
            node.live += 1;
            node.last = id;
        }
        self.entries.insert(id, fields);
        self.last_id = id;
        self.entries_added = self.entries_added.wrapping_add(1);
    }

    /// Deletes one entry (XDEL); false if it was not there.
    pub fn delete(&mut self, id: StreamId) -> bool {
        if self.entries.remove(&id).is_none() {
            return false;
        }
        self.max_deleted_id = self.max_deleted_id.max(id);
        let Some((&master, node)) = self.nodes.range_mut(..=id).next_back() else {
            return true;
        };
        if node.live <= 1 {
            // Redis frees a node when its last live entry goes.
            self.nodes.remove(&master);
        } else {
            node.live -= 1;
            node.deleted += 1;
        }
        true
    }

    /// Trims as XTRIM and XADD's MAXLEN/MINID do (t_stream.c `streamTrim`): whole nodes
    /// while the strategy allows, then, unless `approx`, entries inside the first node kept.
    /// `limit` caps the entries removed (0 = no cap; Redis takes one only with `approx`).
    /// Returns how many entries were removed.
    pub fn trim(&mut self, how: Trim, approx: bool, limit: u64) -> u64 {
        let plan = self.plan_trim(how, approx, limit);
        if plan.whole_nodes > 0 {
            let kept: Vec<StreamId> = self.nodes.keys().copied().skip(plan.whole_nodes).collect();
            match kept.first() {
                Some(first) => {
                    self.nodes = self.nodes.split_off(first);
                    self.entries = self.entries.split_off(first);
                }
                None => {
                    self.nodes.clear();
                    self.entries.clear();
                }
            }
        }
        if let Some((master, ids)) = plan.flagged {
            for id in &ids {
                self.entries.remove(id);
            }
            if let Some(node) = self.nodes.get_mut(&master) {
                node.live -= ids.len() as u64;
                node.deleted += ids.len() as u64;
            }
        }
        plan.removed
    }

    /// How many entries [`Stream::trim`] would remove, without removing them.
    pub fn trim_count(&self, how: Trim, approx: bool, limit: u64) -> u64 {
        self.plan_trim(how, approx, limit).removed
    }

    fn plan_trim(&self, how: Trim, approx: bool, limit: u64) -> TrimPlan {
        let mut len = self.entries.len() as u64;
        let mut plan = TrimPlan::default();
        let mut nodes = self.nodes.iter().peekable();
        while let Some((&master, node)) = nodes.next() {
            if matches!(how, Trim::MaxLen(max) if len <= max) {
                break;
            }
            if limit != 0 && plan.removed + node.live > limit {
                break;
            }
            let remove_node = match how {
                Trim::MaxLen(max) => len - node.live >= max,
                // The node's last id counts even when that entry was deleted, as in Redis.
                Trim::MinId(min) => node.last < min,
            };
            if remove_node {
                plan.whole_nodes += 1;
                plan.removed += node.live;
                len -= node.live;
                continue;
            }
            if approx {
                break;
            }
            let in_node = match nodes.peek() {
                Some((&next, _)) => self.entries.range(master..next),
                None => self.entries.range(master..),
            };
            let mut ids = Vec::new();
            for (&id, _) in in_node {
                let stop = match how {
                    Trim::MaxLen(max) => len <= max,
                    Trim::MinId(min) => id >= min,
                };
                if stop {
                    break;
                }
                ids.push(id);
                len -= 1;
            }
            plan.removed += ids.len() as u64;
            plan.flagged = Some((master, ids));
            break;
        }
        plan
    }
}

/// What a trim removes: the first `whole_nodes` nodes, then entries flagged deleted inside
/// one node.
#[derive(Debug, Default)]
struct TrimPlan {
    whole_nodes: usize,
    flagged: Option<(StreamId, Vec<StreamId>)>,
    removed: u64,
}

/// A node's radix-tree key: its first id, big-endian, as Redis encodes it.
fn id_key(id: StreamId) -> [u8; 16] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&id.ms.to_be_bytes());
    key[8..].copy_from_slice(&id.seq.to_be_bytes());
    key
}

/// The nodes of a fully compressed radix tree holding `keys` (sorted, distinct, all 16
/// bytes) below position `depth`: a leaf at the end; a compressed node for a run shared by
/// all keys; else a branching node with one subtree per next byte.
fn rax_nodes(keys: &[[u8; 16]], depth: usize) -> usize {
    if depth >= 16 {
        return 1;
    }
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
        return 0;
    };
    let shared = first[depth..]
        .iter()
        .zip(&last[depth..])
        .take_while(|(a, b)| a == b)
        .count();
    if shared > 0 {
        return 1 + rax_nodes(keys, depth + shared);
    }
    let mut nodes = 1;
    let mut rest = keys;
    while let Some(head) = rest.first() {
        let n = rest.iter().take_while(|k| k[depth] == head[depth]).count();
        nodes += rax_nodes(&rest[..n], depth + 1);
        rest = &rest[n..];
    }
    nodes
}

/// The bytes of a listpack element holding the integer `v`: encoding plus back-length.
fn int_elem(v: i64) -> usize {
    let enc = match v {
        0..=127 => 1,
        -4096..=4095 => 2,
        -32_768..=32_767 => 3,
        -8_388_608..=8_388_607 => 4,
        -2_147_483_648..=2_147_483_647 => 5,
        _ => 9,
    };
    enc + backlen(enc)
}

/// The bytes of a listpack element holding `s`: listpack stores a string that reads as an
/// integer (Redis's strict `string2ll` form) as that integer.
fn str_elem(s: &[u8]) -> usize {
    if let Some(v) = strict_i64(s) {
        return int_elem(v);
    }
    let enc = match s.len() {
        n if n < 64 => 1 + n,
        n if n < 4096 => 2 + n,
        n => 5 + n,
    };
    enc + backlen(enc)
}

fn backlen(len: usize) -> usize {
    match len {
        0..=127 => 1,
        128..=16_382 => 2,
        16_383..=2_097_150 => 3,
        2_097_151..=268_435_454 => 4,
        _ => 5,
    }
}

/// listpack's `lpStringToInt64`: decimal, no sign but `-`, no leading zero, fits an i64.
fn strict_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let digits = s.strip_prefix(b"-").unwrap_or(s);
    if !matches!(digits.first(), Some(b'1'..=b'9')) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(f: &str, v: &str) -> Fields {
        vec![(f.as_bytes().to_vec(), v.as_bytes().to_vec())]
    }

    #[test]
    fn ids_step_across_their_parts() {
        assert_eq!(StreamId::new(1, u64::MAX).next(), Some(StreamId::new(2, 0)));
        assert_eq!(StreamId::MAX.next(), None);
        assert_eq!(StreamId::new(2, 0).prev(), Some(StreamId::new(1, u64::MAX)));
        assert_eq!(StreamId::MIN.prev(), None);
        assert_eq!(StreamId::new(5, 7).to_string(), "5-7");
    }

    #[test]
    fn listpack_sizes_follow_the_encoding() {
        assert_eq!(int_elem(0), 2);
        assert_eq!(int_elem(127), 2);
        assert_eq!(int_elem(128), 3);
        assert_eq!(int_elem(-1), 3);
        assert_eq!(int_elem(i64::MAX), 10);
        assert_eq!(str_elem(b"v"), 3);
        assert_eq!(str_elem(b"123"), 2);
        assert_eq!(str_elem(b"0123"), 6);
        assert_eq!(str_elem(&[b'x'; 63]), 65);
        assert_eq!(str_elem(&[b'x'; 64]), 67);
        assert_eq!(str_elem(&[b'x'; 125]), 128);
        assert_eq!(str_elem(&[b'x'; 126]), 130);
        assert_eq!(strict_i64(b"-0"), None);
        assert_eq!(strict_i64(b"-12"), Some(-12));
    }

    #[test]
    fn nodes_hold_at_most_100_entries_and_approximate_trims_remove_whole_nodes() {
        let mut s = Stream::default();
        for i in 1..=250 {
            s.append(StreamId::new(i, 0), entry("f", "v"), NodeLimits::default());
        }
        assert_eq!(s.nodes.len(), 3);
        assert_eq!(s.trim(Trim::MaxLen(180), true, 0), 0);
        assert_eq!(s.trim(Trim::MaxLen(150), true, 0), 100);
        assert_eq!(s.len(), 150);
        assert_eq!(s.trim(Trim::MaxLen(10), false, 0), 140);
        assert_eq!(s.len(), 10);
        assert_eq!(s.range(StreamId::MIN, StreamId::MAX).count(), 10);
        assert_eq!(s.last_entry_id(), Some(StreamId::new(250, 0)));
        assert_eq!(s.trim(Trim::MinId(StreamId::new(245, 0)), false, 0), 4);
        assert!(s.delete(StreamId::new(245, 0)));
        assert!(!s.delete(StreamId::new(245, 0)));
        assert_eq!(s.len(), 5);
        assert_eq!(s.range(StreamId::new(9, 9), StreamId::new(1, 1)).count(), 0);
    }

    #[test]
    fn radix_tree_nodes_count_a_compressed_tree() {
        let mut s = Stream::default();
        assert_eq!(s.radix_tree_nodes(), 1);
        s.append(StreamId::new(5, 0), entry("f", "v"), NodeLimits::default());
        // Root (compressed, 16 bytes) and the key's leaf.
        assert_eq!(s.radix_tree_nodes(), 2);
        s.nodes
            .insert(StreamId::new(5, 1), s.nodes[&StreamId::new(5, 0)].clone());
        // 15 shared bytes, a branch on the last, two leaves.
        assert_eq!(s.radix_tree_nodes(), 4);
        s.nodes
            .insert(StreamId::new(6, 0), s.nodes[&StreamId::new(5, 0)].clone());
        // 7 shared, branch on byte 7 (5 | 6); under 5: 7 shared, branch, 2 leaves; under
        // 6: a compressed tail and its leaf.
        assert_eq!(s.radix_tree_nodes(), 1 + 1 + (1 + 1 + 2) + 2);
    }

    #[test]
    fn big_entries_fill_a_node_by_bytes() {
        let mut s = Stream::default();
        let big = "x".repeat(1000);
        for i in 1..=10 {
            s.append(StreamId::new(i, 0), entry("f", &big), NodeLimits::default());
        }
        // 1012 bytes an entry, 18 of header, master entry and counters: four fit in 4096.
        assert_eq!(s.nodes.len(), 3);
        assert_eq!(s.trim(Trim::MaxLen(5), true, 0), 4);
        assert_eq!(s.trim(Trim::MaxLen(0), true, 3), 0);
        assert_eq!(s.trim(Trim::MaxLen(0), true, 4), 4);
    }
}

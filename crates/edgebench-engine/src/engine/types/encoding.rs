//! What OBJECT ENCODING needs beyond a value's contents: the engine keeps its own
//! representations, so the encoding redis-server 7.0 would report is derived from the value,
//! the encoding limits (CONFIG `hash-max-listpack-*`, ...), and a [`Shape`] byte per key that
//! remembers what the contents cannot tell.
//!
//! Redis's conversions are one-way: a hash, set or sorted set that once outgrew its compact
//! encoding stays in the big one after it shrinks. The engine notes that in [`Shape::GREW`],
//! set lazily: before each write to a key (`Locked::get_mut`) the value as the previous
//! command left it is checked against the limits, and a value over them is marked. So the
//! write path pays one branch for a value already marked, and for a small one a look at its
//! length and (hashes, sets) its elements, which are few while the value is small. Lists are
//! always `quicklist` in 7.0 and streams `stream`: nothing to track.
//!
//! When CONFIG changes a limit, every value over the old limits is marked converted, and
//! every other collection [`Shape::PINNED`] compact until its next write (Redis converts
//! only when a write checks). After that write the new limits decide; Redis decides at
//! writes that add (HSET...), not at those that remove (HDEL...), which the engine does not
//! tell apart: a value over a lowered limit reports the big encoding after any write.
//!
//! Strings: `int`, `embstr` and `raw` follow from the bytes (Redis's `tryObjectEncoding`),
//! except after commands that edit a string in place (APPEND to an existing string,
//! SETRANGE: always `raw`) or store text never tried as an integer (INCRBYFLOAT: `embstr` or
//! `raw` by length); those set [`Shape::RAW`] or [`Shape::NOT_INT`].

use std::sync::atomic::{AtomicU64, Ordering};

/// Per-key encoding memory (one byte in the keyspace's entry).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Shape(u8);

impl Shape {
    /// The collection outgrew its compact encoding once (sticky until the key is replaced).
    pub const GREW: u8 = 1;
    /// A string edited in place: Redis's `raw`, whatever its length.
    pub const RAW: u8 = 2;
    /// A string stored as text without trying it as an integer (INCRBYFLOAT's result).
    pub const NOT_INT: u8 = 4;
    /// The collection was compact when the limits last changed: Redis converts it only at
    /// its next write, so until then it stays compact whatever the new limits say.
    pub const PINNED: u8 = 8;

    /// Whether flag `bit` is set.
    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }

    /// Sets flag `bit`.
    pub fn set(&mut self, bit: u8) {
        self.0 |= bit;
    }

    /// Clears flag `bit`.
    pub fn clear(&mut self, bit: u8) {
        self.0 &= !bit;
    }

    /// A shape with exactly these flags.
    pub fn only(bits: u8) -> Shape {
        Shape(bits)
    }
}

/// The thresholds of the compact encodings, as CONFIG sets them (Redis 7.0's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LimitValues {
    /// `hash-max-listpack-entries`.
    pub hash_entries: u64,
    /// `hash-max-listpack-value` (bytes of a field or value).
    pub hash_value: u64,
    /// `zset-max-listpack-entries`.
    pub zset_entries: u64,
    /// `zset-max-listpack-value` (bytes of a member).
    pub zset_value: u64,
    /// `set-max-intset-entries`.
    pub set_entries: u64,
}

impl Default for LimitValues {
    fn default() -> Self {
        // redis-server 7.0's built-in defaults (config.c; redis.conf's sample says 128 for
        // hashes, but the server without a config file uses 512).
        LimitValues {
            hash_entries: 512,
            hash_value: 64,
            zset_entries: 128,
            zset_value: 64,
            set_entries: 512,
        }
    }
}

impl LimitValues {
    /// Whether the sorted-set limits are those the engine's [`super::ZSet`] converts at, so
    /// its own representation answers the question in O(1).
    pub fn zset_is_builtin(&self) -> bool {
        self.zset_entries == super::zset::LISTPACK_MAX_ENTRIES as u64
            && self.zset_value == super::zset::LISTPACK_MAX_VALUE as u64
    }
}

/// The limits, shared by every database of an engine; read with relaxed loads on the write
/// path (a CONFIG SET racing a write may be seen a command late, as harmless as in Redis).
#[derive(Debug)]
pub struct Limits {
    values: [AtomicU64; 5],
    /// `stream-node-max-entries`, `stream-node-max-bytes`: not encodings (a stream is always
    /// `stream`), but the same kind of setting, read on the same write path.
    stream_nodes: [AtomicU64; 2],
    /// `hll-sparse-max-bytes`: where a sparse HyperLogLog turns dense.
    hll_sparse_max: AtomicU64,
}

impl Default for Limits {
    fn default() -> Self {
        let d = LimitValues::default();
        Limits {
            values: [
                AtomicU64::new(d.hash_entries),
                AtomicU64::new(d.hash_value),
                AtomicU64::new(d.zset_entries),
                AtomicU64::new(d.zset_value),
                AtomicU64::new(d.set_entries),
            ],
            stream_nodes: {
                let n = super::stream::NodeLimits::default();
                [AtomicU64::new(n.entries), AtomicU64::new(n.bytes)]
            },
            hll_sparse_max: AtomicU64::new(super::hll::SPARSE_MAX_BYTES as u64),
        }
    }
}

impl Limits {
    /// The current thresholds.
    pub fn load(&self) -> LimitValues {
        let v = |i: usize| self.values[i].load(Ordering::Relaxed);
        LimitValues {
            hash_entries: v(0),
            hash_value: v(1),
            zset_entries: v(2),
            zset_value: v(3),
            set_entries: v(4),
        }
    }

    /// How big a stream's nodes grow.
    pub fn stream_nodes(&self) -> super::stream::NodeLimits {
        super::stream::NodeLimits {
            entries: self.stream_nodes[0].load(Ordering::Relaxed),
            bytes: self.stream_nodes[1].load(Ordering::Relaxed),
        }
    }

    /// Replaces the stream node limits.
    pub fn store_stream_nodes(&self, n: super::stream::NodeLimits) {
        self.stream_nodes[0].store(n.entries, Ordering::Relaxed);
        self.stream_nodes[1].store(n.bytes, Ordering::Relaxed);
    }

    /// CONFIG `hll-sparse-max-bytes`.
    pub fn hll_sparse_max(&self) -> usize {
        usize::try_from(self.hll_sparse_max.load(Ordering::Relaxed)).unwrap_or(usize::MAX)
    }

    /// Replaces `hll-sparse-max-bytes`.
    pub fn store_hll_sparse_max(&self, bytes: u64) {
        self.hll_sparse_max.store(bytes, Ordering::Relaxed);
    }

    /// Replaces the thresholds.
    pub fn store(&self, l: LimitValues) {
        let all = [
            l.hash_entries,
            l.hash_value,
            l.zset_entries,
            l.zset_value,
            l.set_entries,
        ];
        for (slot, v) in self.values.iter().zip(all) {
            slot.store(v, Ordering::Relaxed);
        }
    }
}

/// Redis's `string2ll` test (what `tryObjectEncoding` and the intset check use): an integer
/// with no '+', no leading zero, no "-0", in i64 range, at most 20 bytes.
pub fn is_redis_integer(s: &[u8]) -> bool {
    if s.is_empty() || s.len() > 20 {
        return false;
    }
    let digits = s.strip_prefix(b"-").unwrap_or(s);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return false;
    }
    if digits[0] == b'0' && (digits.len() > 1 || s.len() > 1) {
        return false;
    }
    std::str::from_utf8(s)
        .ok()
        .and_then(|t| t.parse::<i64>().ok())
        .is_some()
}

/// The encoding of a string value (`int`, `embstr`, `raw`).
pub fn string_encoding(s: &[u8], shape: Shape) -> &'static str {
    if shape.has(Shape::RAW) {
        "raw"
    } else if !shape.has(Shape::NOT_INT) && is_redis_integer(s) {
        "int"
    } else if s.len() <= EMBSTR_MAX {
        "embstr"
    } else {
        "raw"
    }
}

/// The longest string Redis stores as `embstr` (OBJ_ENCODING_EMBSTR_SIZE_LIMIT).
pub const EMBSTR_MAX: usize = 44;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_redis_string2ll() {
        for yes in [
            "0",
            "-1",
            "12",
            "9223372036854775807",
            "-9223372036854775808",
        ] {
            assert!(is_redis_integer(yes.as_bytes()), "{yes}");
        }
        for no in [
            "",
            "-",
            "+1",
            "01",
            "-0",
            "1.0",
            " 1",
            "9223372036854775808",
            "1a",
        ] {
            assert!(!is_redis_integer(no.as_bytes()), "{no}");
        }
    }

    #[test]
    fn strings_pick_int_embstr_raw() {
        let plain = Shape::default();
        assert_eq!(string_encoding(b"123", plain), "int");
        assert_eq!(string_encoding(&[b'a'; 44], plain), "embstr");
        assert_eq!(string_encoding(&[b'a'; 45], plain), "raw");
        assert_eq!(string_encoding(b"1", Shape::only(Shape::RAW)), "raw");
        assert_eq!(string_encoding(b"1", Shape::only(Shape::NOT_INT)), "embstr");
    }
}

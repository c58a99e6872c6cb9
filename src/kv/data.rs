//! Values: their sizes (`-d`, `--data-size-range` with `--data-size-pattern`,
//! `--data-size-list`), their bytes (`-R`) and their expiry (`--expiry-range`), following
//! memtier_benchmark's `object_generator` (`obj_gen.cpp`) and `config_weight_list`
//! (`config_types.cpp`).
//!
//! Invariants:
//! - Every value is a slice of one [`ValueBuffer`], made once before the run and shared by
//!   all connections (`Arc`), so no request allocates or copies a value.
//! - Without `-R` every byte is `x` (memtier: `memset(m_value_buffer, 'x', size)`).
//! - With `-R` the buffer holds random bytes and consecutive values start at different
//!   offsets, so consecutive values differ (memtier mutates one byte per value instead; that
//!   would need a private buffer per connection).
//! - A value's size depends only on the size spec, the connection's size stream and, for the
//!   `S` pattern, the key index — never on which key stream produced the key.

use std::sync::Arc;

use super::rng::Rng;

/// `--data-size-pattern`: how `--data-size-range` picks a size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SizePattern {
    /// `R`: uniform in `[min, max]` per value (memtier's default).
    Random,
    /// `S`: spread linearly over the key range: key-minimum gets `min`, key-maximum `max`.
    Sequential,
}

/// One `size:weight` entry of `--data-size-list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SizeWeight {
    /// Value size in bytes.
    pub size: u32,
    /// How many values in a row get this size before the next entry's turn.
    pub weight: u32,
}

/// How value sizes are chosen.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DataSize {
    /// `-d N`: every value is N bytes.
    Fixed(u32),
    /// `--data-size-range MIN-MAX` with `--data-size-pattern`.
    Range {
        /// Smallest size, ≥ 1.
        min: u32,
        /// Largest size.
        max: u32,
        /// `R` or `S`.
        pattern: SizePattern,
    },
    /// `--data-size-list`: memtier cycles through the entries, each `weight` times in a row
    /// (`config_weight_list::get_next_size`): deterministic, not random.
    List(Vec<SizeWeight>),
}

impl DataSize {
    /// The largest value this spec produces: the size of the shared buffer.
    pub fn largest(&self) -> u32 {
        match self {
            DataSize::Fixed(n) => *n,
            DataSize::Range { max, .. } => *max,
            DataSize::List(items) => items.iter().map(|w| w.size).max().unwrap_or(0),
        }
    }
}

/// `--expiry-range MIN-MAX`, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ExpiryRange {
    /// Shortest TTL.
    pub min: u32,
    /// Longest TTL; memtier only sends TTLs when this is above 0.
    pub max: u32,
}

/// How far apart consecutive `-R` values start in the random buffer: an odd step, so the
/// start offsets run through the whole window before repeating.
const RANDOM_STRIDE: usize = 4099;
/// Extra random bytes beyond the largest value, so `-R` values can start at many offsets.
const RANDOM_WINDOW: usize = 64 * 1024;

/// The one buffer every value is sliced from. Cheap to clone (shared).
#[derive(Debug, Clone)]
pub struct ValueBuffer {
    bytes: Arc<[u8]>,
    largest: usize,
}

impl ValueBuffer {
    /// A buffer for values up to `largest` bytes: all `x`, or with `random`, random bytes
    /// from `seed` plus a window so `-R` values can start at different offsets.
    pub fn new(largest: u32, random: bool, seed: u64) -> Self {
        let largest = largest as usize;
        let bytes: Arc<[u8]> = if random {
            let mut rng = Rng::new(seed);
            let mut v = Vec::with_capacity(largest + RANDOM_WINDOW);
            while v.len() < largest + RANDOM_WINDOW {
                v.extend_from_slice(&rng.next_u64().to_le_bytes());
            }
            v.truncate(largest + RANDOM_WINDOW);
            v.into()
        } else {
            vec![b'x'; largest].into()
        };
        ValueBuffer { bytes, largest }
    }

    /// Number of distinct start offsets a value may take.
    fn starts(&self) -> usize {
        self.bytes.len() - self.largest + 1
    }
}

/// A connection's value generator: sizes, bytes and TTLs.
#[derive(Debug, Clone)]
pub struct DataGen {
    size: DataSize,
    buffer: ValueBuffer,
    offset: usize,
    rng: Rng,
    list_pos: usize,
    list_used: u32,
    key_min: u64,
    key_max: u64,
    expiry: Option<ExpiryRange>,
}

impl DataGen {
    /// A generator for `size`, slicing `buffer` (which must hold `size.largest()` bytes),
    /// using `[key_min, key_max]` (the whole key range, not a `P` slice) for the `S` pattern.
    pub fn new(
        size: DataSize,
        buffer: ValueBuffer,
        key_min: u64,
        key_max: u64,
        expiry: Option<ExpiryRange>,
        rng: Rng,
    ) -> Self {
        assert!(
            buffer.largest >= size.largest() as usize,
            "ValueBuffer smaller than the largest value"
        );
        DataGen {
            size,
            buffer,
            offset: 0,
            rng,
            list_pos: 0,
            list_used: 0,
            key_min,
            key_max,
            expiry,
        }
    }

    /// The size of the next value for the key with `key_index` (memtier's
    /// `object_generator::get_value`), and, with `-R`, moves to a fresh start offset.
    ///
    /// memtier passes key index 0 for `__data__` in `--command`, which makes `S` sizes
    /// garbage when key-minimum > 0 (unsigned underflow); callers here pass the command's
    /// key, or key-minimum when it has none.
    pub fn next_len(&mut self, key_index: u64) -> usize {
        let starts = self.buffer.starts();
        if starts > 1 {
            self.offset = (self.offset + RANDOM_STRIDE) % starts;
        }
        match &self.size {
            DataSize::Fixed(n) => *n as usize,
            DataSize::Range {
                min,
                max,
                pattern: SizePattern::Random,
            } => self
                .rng
                .range_inclusive(u64::from((*min).max(1)), u64::from(*max))
                as usize,
            DataSize::Range {
                min,
                max,
                pattern: SizePattern::Sequential,
            } => {
                // memtier: a = (key − key_min) / (key_max − key_min); size = (max − min) × a
                // + min, truncated. One key (key_max = key_min) divides by zero there; we give
                // it `min`.
                if self.key_max == self.key_min {
                    return *min as usize;
                }
                let k = key_index.clamp(self.key_min, self.key_max);
                let a = (k - self.key_min) as f64 / (self.key_max - self.key_min) as f64;
                (f64::from(max - min) * a + f64::from(*min)) as usize
            }
            DataSize::List(items) => {
                // config_weight_list::get_next_size: skip entries whose weight is used up.
                while self.list_used >= items[self.list_pos].weight {
                    self.list_pos = (self.list_pos + 1) % items.len();
                    self.list_used = 0;
                }
                self.list_used += 1;
                items[self.list_pos].size as usize
            }
        }
    }

    /// The value bytes for a size from [`DataGen::next_len`].
    #[inline]
    pub fn value(&self, len: usize) -> &[u8] {
        &self.buffer.bytes[self.offset..self.offset + len]
    }

    /// The TTL for the next SET: `None` without `--expiry-range` (memtier sends SET), else
    /// uniform in `[min, max]` (SETEX), `None` again when that draw is 0 (memtier sends SET
    /// for expiry 0).
    pub fn next_expiry(&mut self) -> Option<u32> {
        let e = self.expiry?;
        if e.max == 0 {
            return None;
        }
        let ttl = self.rng.range_inclusive(u64::from(e.min), u64::from(e.max)) as u32;
        (ttl > 0).then_some(ttl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(size: DataSize, random: bool) -> DataGen {
        let buf = ValueBuffer::new(size.largest(), random, 77);
        DataGen::new(size, buf, 1, 101, None, Rng::new(3))
    }

    #[test]
    fn fixed_size_values_are_x() {
        let mut g = gen(DataSize::Fixed(500), false);
        for _ in 0..3 {
            let n = g.next_len(5);
            assert_eq!(n, 500);
            assert!(g.value(n).iter().all(|&b| b == b'x'));
        }
    }

    #[test]
    fn random_data_differs_between_consecutive_values() {
        let mut g = gen(DataSize::Fixed(32), true);
        let a = {
            let n = g.next_len(1);
            g.value(n).to_vec()
        };
        let n = g.next_len(1);
        assert_eq!(n, 32);
        assert_ne!(a, g.value(n));
        assert!(g.value(n).iter().any(|&b| b != b'x'));
    }

    #[test]
    fn range_random_stays_inside_and_reaches_both_ends() {
        let mut g = gen(
            DataSize::Range {
                min: 10,
                max: 20,
                pattern: SizePattern::Random,
            },
            false,
        );
        let mut seen = [0u32; 21];
        for _ in 0..11_000 {
            let n = g.next_len(1);
            assert!((10..=20).contains(&n));
            seen[n] += 1;
        }
        // 11 sizes, 1000 each expected; P(any count < 800) is below 1e-9 per size.
        assert!(seen[10..].iter().all(|&c| c > 800), "{seen:?}");
    }

    #[test]
    fn range_sequential_maps_key_range_to_size_range() {
        let mut g = gen(
            DataSize::Range {
                min: 100,
                max: 200,
                pattern: SizePattern::Sequential,
            },
            false,
        );
        // Keys 1..=101: a = (k − 1) / 100, size = 100 × a + 100.
        assert_eq!(g.next_len(1), 100);
        assert_eq!(g.next_len(51), 150);
        assert_eq!(g.next_len(101), 200);
        assert_eq!(g.next_len(34), 133);
        assert_eq!(g.value(133).len(), 133);
    }

    #[test]
    fn weighted_list_cycles_in_weight_order() {
        let mut g = gen(
            DataSize::List(vec![
                SizeWeight { size: 8, weight: 2 },
                SizeWeight { size: 0, weight: 0 },
                SizeWeight {
                    size: 64,
                    weight: 1,
                },
                SizeWeight {
                    size: 16,
                    weight: 3,
                },
            ]),
            false,
        );
        let sizes: Vec<usize> = (0..12).map(|_| g.next_len(1)).collect();
        assert_eq!(sizes, [8, 8, 64, 16, 16, 16, 8, 8, 64, 16, 16, 16]);
    }

    #[test]
    fn expiry_within_range_or_none() {
        let buf = ValueBuffer::new(4, false, 0);
        let mut g = DataGen::new(
            DataSize::Fixed(4),
            buf.clone(),
            0,
            9,
            Some(ExpiryRange { min: 5, max: 7 }),
            Rng::new(1),
        );
        let mut seen = [false; 8];
        for _ in 0..300 {
            let e = g.next_expiry().map(|e| e as usize);
            seen[e.unwrap_or(0)] = true;
        }
        assert_eq!(seen, [false, false, false, false, false, true, true, true]);
        let mut none = DataGen::new(DataSize::Fixed(4), buf, 0, 9, None, Rng::new(1));
        assert_eq!(none.next_expiry(), None);
    }
}

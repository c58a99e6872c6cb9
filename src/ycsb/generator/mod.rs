//! The numbers behind a YCSB run, computed as YCSB's `CoreWorkload` computes them: record keys
//! ([`build_key_name`], with [`fnvhash64`]), field values ([`fill_random_bytes`]), the request
//! distributions that choose which key an operation touches ([`KeyChooser`]), field lengths
//! ([`FieldLength`]), the operation mix ([`Discrete`]) and the insert counters ([`Counter`],
//! [`AcknowledgedCounter`]).
//!
//! Each generator follows one class of YCSB's `site.ycsb.generator` package (named in its
//! doc), including its quirks where they change the numbers (the zipfian's `eta` stays the
//! one computed for its first item count; hotspot's hot set is narrowed to a Java `int`).
//! YCSB draws from `ThreadLocalRandom`, whose sequence cannot be reproduced; the
//! distributions can, so every draw here takes the caller's [`Rng`], and a run is
//! reproducible from its seed. Where a YCSB class throws (a hot set of zero items, an
//! operation mix with no weight), the item says what we do instead.
//!
//! Invariants: every generator is `Send` and owned by one thread, except the counters
//! ([`Counter`], [`AcknowledgedCounter`], and the counter inside [`Sequential`]), which all
//! threads share as YCSB shares its one `CoreWorkload`. Nothing here allocates per draw.

mod counter;
mod discrete;
mod keys;
mod uniform;
mod values;
mod zipfian;

#[cfg(test)]
mod tests;

pub use counter::{AcknowledgedCounter, Counter, Sequential, ACKNOWLEDGE_WINDOW};
pub use discrete::Discrete;
pub use keys::{build_key_into, build_key_name, fnvhash64};
pub use uniform::{Exponential, Hotspot, UniformLong};
pub use values::fill_random_bytes;
pub use zipfian::{
    zeta, ScrambledZipfian, SkewedLatest, Zipfian, SCRAMBLED_ITEM_COUNT, SCRAMBLED_ZETAN,
    ZIPFIAN_CONSTANT,
};

use crate::kv::rng::Rng;

/// A uniform double in `[0, 1)` from 53 random bits, as Java's `Random.nextDouble()` makes
/// it (the top 53 bits of a draw times 2^-53), which every YCSB generator uses.
#[inline]
pub fn next_f64(rng: &mut Rng) -> f64 {
    const SCALE: f64 = 1.0 / (1u64 << 53) as f64;
    (rng.next_u64() >> 11) as f64 * SCALE
}

/// Which record an operation touches: CoreWorkload's `requestdistribution`, one per thread.
/// `zipfian` is YCSB's [`ScrambledZipfian`]; `latest` is [`SkewedLatest`] over the shared
/// insert counter.
#[derive(Debug, Clone)]
pub enum KeyChooser {
    /// `uniform`: [`UniformLong`] over the loaded records.
    Uniform(UniformLong),
    /// `zipfian`: popular records scattered over the key space.
    Zipfian(ScrambledZipfian),
    /// `latest`: the most recently inserted records are the most popular.
    Latest(SkewedLatest),
    /// `hotspot`: a hot set of records takes a fixed share of operations.
    Hotspot(Hotspot),
    /// `sequential`: records in order, shared by all threads, wrapping around.
    Sequential(Sequential),
    /// `exponential`: an offset back from the latest record (see [`KeyChooser::next`]).
    Exponential(Exponential),
}

impl KeyChooser {
    /// The generator's next value, as YCSB's `keychooser.nextValue()`. For every variant but
    /// `Exponential` it is a record number; for `Exponential` it is the distance back from the
    /// last acknowledged insert (CoreWorkload subtracts it). [`KeyChooser::next_keynum`] does
    /// that subtraction and YCSB's retries.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        match self {
            KeyChooser::Uniform(g) => g.next(rng),
            KeyChooser::Zipfian(g) => g.next(rng),
            KeyChooser::Latest(g) => g.next(rng),
            KeyChooser::Hotspot(g) => g.next(rng),
            KeyChooser::Sequential(g) => g.next(),
            KeyChooser::Exponential(g) => g.next(rng),
        }
    }

    /// The record a read, update, scan or read-modify-write touches, as
    /// `CoreWorkload.nextKeynum`: exponential draws count back from `inserted`'s last
    /// acknowledged value and are drawn again while they would fall below record 0; every
    /// other distribution is drawn again while it names a record not yet acknowledged (the
    /// zipfian's key space includes the inserts a run expects to make).
    ///
    /// YCSB narrows each draw to a Java `int` here; we keep 64 bits, which gives the same
    /// keys below 2^31 records.
    ///
    /// Loops until a draw fits: `inserted` must have acknowledged at least one record (as in
    /// YCSB, which also waits for one).
    pub fn next_keynum(&mut self, rng: &mut Rng, inserted: &AcknowledgedCounter) -> u64 {
        loop {
            let below = inserted.acknowledged_below();
            let draw = self.next(rng);
            if let KeyChooser::Exponential(_) = self {
                if draw < below {
                    return below - 1 - draw;
                }
            } else if draw < below {
                return draw;
            }
        }
    }
}

/// The length of each field value: CoreWorkload's `getFieldLengthGenerator` for
/// `fieldlengthdistribution` = `constant` (`fieldlength`), `uniform` or `zipfian` (both over
/// `minfieldlength..=fieldlength`). YCSB's `histogram` (lengths read from a file) is not here.
#[derive(Debug, Clone)]
pub enum FieldLength {
    /// Every field has this many bytes (YCSB's `ConstantIntegerGenerator`).
    Constant(u64),
    /// Uniform between the bounds, inclusive.
    Uniform(UniformLong),
    /// Zipfian from the shortest length up (the shortest is the most common).
    Zipfian(Zipfian),
}

impl FieldLength {
    /// The next field's length in bytes.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        match self {
            FieldLength::Constant(len) => *len,
            FieldLength::Uniform(g) => g.next(rng),
            FieldLength::Zipfian(g) => g.next(rng),
        }
    }
}

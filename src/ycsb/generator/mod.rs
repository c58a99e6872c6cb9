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

mod keys;
mod values;

#[cfg(test)]
mod tests;

pub use keys::{build_key_into, build_key_name, fnvhash64};
pub use values::fill_random_bytes;

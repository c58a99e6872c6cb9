//! What the keyspace is made of, beneath it: the value types that need more than a std
//! collection (sorted sets, streams), the byte-keyed maps and sets ([`collections`]), the
//! software `long double` of INCRBYFLOAT ([`cfloat`]), Redis's HyperLogLog encoding ([`hll`]) and the arguments of the typed
//! operations ([`options`]). Nothing here imports the keyspace or the commands.

pub mod cfloat;
pub mod collections;
pub mod counters;
pub mod encoding;
pub mod hll;
pub mod options;
pub mod stream;
pub mod zset;

pub use stream::Stream;
pub use zset::{Score, ZSet};

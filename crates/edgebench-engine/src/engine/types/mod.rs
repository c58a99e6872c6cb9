//! Value types that need more than a std collection: sorted sets and streams.

pub mod collections;
pub mod stream;
pub mod zset;

pub use stream::Stream;
pub use zset::{Score, ZSet};

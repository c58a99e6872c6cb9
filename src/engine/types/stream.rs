//! The stream type (XADD, XRANGE, XREAD, ...): entries ordered by id `<ms>-<seq>`.

use std::collections::BTreeMap;

/// A stream entry id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId {
    /// Milliseconds part.
    pub ms: u64,
    /// Sequence part.
    pub seq: u64,
}

/// A stream.
#[derive(Debug, Clone, Default)]
pub struct Stream {
    /// Entries by id: field-value pairs in the order given.
    pub entries: BTreeMap<StreamId, Vec<(Vec<u8>, Vec<u8>)>>,
    /// The last id ever added (XADD must go above it even after deletions).
    pub last_id: StreamId,
}

//! The vocabulary a `test_group` operation is written in: its data structure (`<op>.map`,
//! `<op>.rtopic`, …; [`DataStructure`]) and its test case (`<op>.testCase`; [`TestCase`]).
//!
//! Invariants: data structures are listed in PadoGrid's lookup order, so when an operation
//! sets several `<op>.<ds>` keys the first in that order wins; each structure names the test
//! cases it takes and the default an invalid one falls back to.

use std::fmt;

/// A group test's data structures, in PadoGrid's lookup order: when an operation sets
/// several `<op>.<ds>` keys, the first in this order wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataStructure {
    /// Redisson `RMap` → a Redis hash.
    Map,
    /// Redisson `RMapCache` (entries with a TTL).
    MCache,
    /// Redisson `RTopic` → PUBLISH.
    Topic,
    /// Redisson `RReliableTopic` → a stream.
    RTopic,
    /// Redisson `RShardedTopic` → SPUBLISH.
    STopic,
    /// Redisson `RList` → a Redis list.
    List,
    /// Redisson `RQueue` → a Redis list used FIFO.
    Queue,
    /// `Thread.sleep(ms)`.
    Sleep,
}

impl DataStructure {
    /// All structures, in PadoGrid's lookup order.
    pub const ALL: [DataStructure; 8] = [
        Self::Map,
        Self::MCache,
        Self::Topic,
        Self::RTopic,
        Self::STopic,
        Self::List,
        Self::Queue,
        Self::Sleep,
    ];

    /// The key suffix naming it (`put1.map=map1`).
    pub fn key(self) -> &'static str {
        match self {
            Self::Map => "map",
            Self::MCache => "mcache",
            Self::Topic => "topic",
            Self::RTopic => "rtopic",
            Self::STopic => "stopic",
            Self::List => "list",
            Self::Queue => "queue",
            Self::Sleep => "sleep",
        }
    }

    /// The word `-list`/`-delete` print after `data:` (Redisson's type name).
    pub fn redisson_type(self) -> &'static str {
        match self {
            Self::Map => "Map",
            Self::MCache => "MapCache",
            Self::Topic => "Topic",
            Self::RTopic => "ReliableTopic",
            Self::STopic => "ShardedTopic",
            Self::List => "List",
            Self::Queue => "Queue",
            Self::Sleep => "Sleep",
        }
    }

    /// Parses a key suffix. `cache` is accepted for `mcache` because PadoGrid's file
    /// comments document it under that name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "cache" => Some(Self::MCache),
            _ => Self::ALL.into_iter().find(|d| d.key() == s),
        }
    }

    /// The test cases PadoGrid documents for this structure (plus `fastput`, which its
    /// Redis code implements for maps), the default first.
    pub fn test_cases(self) -> &'static [TestCase] {
        use TestCase::*;
        match self {
            Self::Map | Self::MCache => &[PutAll, Set, Put, FastPut, Get, GetAll],
            Self::List => &[Add, AddAll, Remove],
            Self::Queue => &[Offer, Peek, Poll, Take],
            Self::Topic | Self::RTopic | Self::STopic => &[PublishAll, Publish],
            Self::Sleep => &[TestCase::Sleep],
        }
    }

    /// The documented default test case (PadoGrid file comments).
    pub fn default_test_case(self) -> TestCase {
        self.test_cases()[0]
    }

    pub(super) fn valid_keys() -> String {
        Self::ALL.map(|d| d.key()).join(", ")
    }
}

impl fmt::Display for DataStructure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

/// A group test operation's test case (`<op>.testCase`, case-insensitive).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TestCase {
    /// Map: write one entry, no previous value returned.
    Set,
    /// Map: write one entry.
    Put,
    /// Map: write `batchSize` entries at once.
    PutAll,
    /// Map: write one entry without reading the old value (Redisson `fastPut`).
    FastPut,
    /// Map: read one random entry.
    Get,
    /// Map: read `batchSize` random entries at once.
    GetAll,
    /// Topic: publish one message.
    Publish,
    /// Topic: publish `batchSize` messages.
    PublishAll,
    /// Queue: append one element.
    Offer,
    /// Queue: remove the head, or nothing when empty.
    Poll,
    /// Queue: read the head.
    Peek,
    /// Queue: remove the head, waiting for one.
    Take,
    /// List: append one element.
    Add,
    /// List: append `batchSize` elements.
    AddAll,
    /// List: remove one element equal to a zero payload.
    Remove,
    /// The `sleep` pseudo-structure's only case.
    Sleep,
}

impl TestCase {
    const ALL: [TestCase; 16] = [
        Self::Set,
        Self::Put,
        Self::PutAll,
        Self::FastPut,
        Self::Get,
        Self::GetAll,
        Self::Publish,
        Self::PublishAll,
        Self::Offer,
        Self::Poll,
        Self::Peek,
        Self::Take,
        Self::Add,
        Self::AddAll,
        Self::Remove,
        Self::Sleep,
    ];

    /// The lower-case name used in properties files.
    pub fn name(self) -> &'static str {
        match self {
            Self::Set => "set",
            Self::Put => "put",
            Self::PutAll => "putall",
            Self::FastPut => "fastput",
            Self::Get => "get",
            Self::GetAll => "getall",
            Self::Publish => "publish",
            Self::PublishAll => "publishall",
            Self::Offer => "offer",
            Self::Poll => "poll",
            Self::Peek => "peek",
            Self::Take => "take",
            Self::Add => "add",
            Self::AddAll => "addall",
            Self::Remove => "remove",
            Self::Sleep => "sleep",
        }
    }

    /// Parses a name case-insensitively, as PadoGrid's `valueOf(toUpperCase())`.
    pub fn parse(s: &str) -> Option<Self> {
        let lower = s.trim().to_ascii_lowercase();
        Self::ALL.into_iter().find(|t| t.name() == lower)
    }

    /// Whether the case writes entries (and so creates data `get`s can read).
    pub fn writes(self) -> bool {
        matches!(
            self,
            Self::Set
                | Self::Put
                | Self::PutAll
                | Self::FastPut
                | Self::Publish
                | Self::PublishAll
                | Self::Offer
                | Self::Add
                | Self::AddAll
        )
    }
}

impl fmt::Display for TestCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

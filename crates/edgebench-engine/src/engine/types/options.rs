//! The arguments of the keyspace's typed operations that are more than numbers and bytes:
//! which end of a list, which TTL a SET leaves, which members a ZRANGE selects... The
//! commands parse them and the keyspace's operations ([`Locked`](crate::engine::keyspace::Locked))
//! take them, so they live below both; each command module re-exports its own.

use std::ops::Bound;

use super::stream::{StreamId, Trim};
use super::zset::LexRange;

// ---- keys: EXPIRE and TTL ----

/// Which of NX, XX, GT, LT an EXPIRE carries (XX combines with GT or LT).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExpireIf {
    /// Only when the key has no TTL.
    pub nx: bool,
    /// Only when the key has a TTL.
    pub xx: bool,
    /// Only when the new time is later than the current one (no TTL counts as infinite).
    pub gt: bool,
    /// Only when the new time is earlier than the current one (no TTL counts as infinite).
    pub lt: bool,
}

/// A key's time to live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ttl {
    /// No such key (TTL -2).
    Missing,
    /// The key never expires (TTL -1).
    Persistent,
    /// Expires at this time, ms since the Unix epoch.
    At(u64),
}

// ---- strings: SET and GETEX ----

/// When SET writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SetCondition {
    /// Always (plain SET).
    #[default]
    Always,
    /// Only if the key does not exist (NX).
    IfMissing,
    /// Only if the key exists (XX).
    IfExists,
}

/// What SET does to the key's time to live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SetTtl {
    /// Removes any TTL (plain SET).
    #[default]
    Clear,
    /// Keeps the TTL the key had (KEEPTTL).
    Keep,
    /// Expires at this time, ms since the Unix epoch (EX, PX, EXAT, PXAT).
    At(u64),
}

/// What GETEX does to the key's time to live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GetExTtl {
    /// Leaves it.
    #[default]
    Unchanged,
    /// Removes it (PERSIST).
    Persist,
    /// Expires at this time, ms since the Unix epoch; a time already past deletes the key.
    At(u64),
}

// ---- lists ----

/// An end of a list: LEFT is the head (index 0), RIGHT the tail.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListEnd {
    /// The head (LPUSH, LPOP, LEFT).
    Left,
    /// The tail (RPUSH, RPOP, RIGHT).
    Right,
}

/// LPOS's options, as Redis defaults them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LposOptions {
    /// RANK: which match to start from; negative searches from the tail. Never 0.
    pub rank: i64,
    /// COUNT: how many matches to return (`Some(0)` = all); `None` = the option was not
    /// given (the reply is one index or nil).
    pub count: Option<u64>,
    /// MAXLEN: compare at most this many elements (0 = all).
    pub maxlen: u64,
}

impl Default for LposOptions {
    fn default() -> Self {
        LposOptions {
            rank: 1,
            count: None,
            maxlen: 0,
        }
    }
}

// ---- sets ----

/// Which multi-set operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SetOp {
    Inter,
    Union,
    Diff,
}

// ---- streams ----

/// The id XADD gives a new entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XaddId {
    /// `*`: the engine's time in ms, or the next sequence of the last id.
    Auto,
    /// `<ms>-*`: this ms, with the next free sequence.
    AutoSeq(u64),
    /// `<ms>-<seq>`.
    Explicit(StreamId),
}

/// A trimming request (MAXLEN or MINID, exact or `~`, LIMIT).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrimSpec {
    /// What to keep.
    pub how: Trim,
    /// `~`: remove only whole nodes, as Redis does (see [`crate::engine::types::stream`]).
    pub approx: bool,
    /// The most entries to remove (0 = no limit); Redis takes one only with `approx`.
    pub limit: u64,
}

// ---- sorted sets ----

/// Which members a range selects.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ZRangeBy<'a> {
    /// Ranks `start..=stop`, negative counting from the end (ZRANGE's default).
    Rank(i64, i64),
    /// Scores from `min` to `max` (BYSCORE).
    Score(Bound<f64>, Bound<f64>),
    /// Members from `min` to `max`, lexicographically (BYLEX).
    Lex(LexRange<'a>),
}

/// A ZRANGE query.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ZRange<'a> {
    /// Which members.
    pub by: ZRangeBy<'a>,
    /// Highest first (ranks then count from the highest).
    pub rev: bool,
    /// LIMIT offset count: skip `offset` (a negative offset selects nothing), then return
    /// at most `count` (negative: all), as Redis does.
    pub limit: Option<(i64, i64)>,
}

impl ZRange<'_> {
    /// `ZRANGE key start stop`.
    pub fn rank(start: i64, stop: i64) -> ZRange<'static> {
        ZRange {
            by: ZRangeBy::Rank(start, stop),
            rev: false,
            limit: None,
        }
    }

    /// `ZRANGEBYSCORE key min max`.
    pub fn score(min: Bound<f64>, max: Bound<f64>) -> ZRange<'static> {
        ZRange {
            by: ZRangeBy::Score(min, max),
            rev: false,
            limit: None,
        }
    }
}

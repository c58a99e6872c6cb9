//! Sorted sets: ZADD, ZREM, ZCARD, ZSCORE, ZMSCORE, ZINCRBY, ZRANK, ZREVRANK, ZCOUNT,
//! ZLEXCOUNT, ZRANGE (BYSCORE, BYLEX, REV, LIMIT, WITHSCORES), ZRANGEBYSCORE,
//! ZREVRANGEBYSCORE, ZRANGEBYLEX, ZREVRANGEBYLEX, ZREVRANGE, ZRANGESTORE, ZREMRANGEBYSCORE,
//! ZREMRANGEBYRANK, ZREMRANGEBYLEX, ZPOPMIN, ZPOPMAX, ZSCAN — Redis 7.0's `t_zset.c`; the
//! commands over several keys (ZUNION, ZINTER, ZDIFF, their STORE forms, ZINTERCARD) are
//! [`combine`], the random and multi-key pops (ZRANDMEMBER, ZMPOP, BZPOPMIN, BZPOPMAX,
//! BZMPOP) [`pick`].
//!
//! The typed operations on [`Locked`] come first (the engine's Rust API: no argument
//! parsing), then the `run` functions, which parse as Redis does — same checks, same order,
//! same error texts — and build the reply. Ranges are handed to a visitor
//! ([`Locked::zrange_with`]), so a ZRANGE builds its reply straight from the set with no
//! intermediate collection.
//!
//! A write that changes nothing (ZREM of absent members, a ZADD NX of present ones, a range
//! removal that selects nothing) checks with read access first and does not touch the key
//! for WATCH, as in Redis, where only a change signals the key.
//!
//! Keyspace events, as Redis 7.0's t_zset.c emits them (class `z`, `del` in `g`): `zadd`
//! (`zincr` for ZINCRBY and ZADD INCR) when a member was added or its score changed, `zrem`,
//! `zremrangebyscore`, `zremrangebyrank`, `zremrangebylex` when something went,
//! `zpopmin`/`zpopmax` once per pop command, and the STORE commands' own names; an emptied
//! set announces `del` after the command's event.
//!
//! Scores in replies are [`Reply::Double`]s: RESP2 clients get Redis 7.0's `%.17g` text,
//! RESP3 clients a double. Score bounds follow `zslParseRange` (C `strtod`: leading spaces,
//! `(` for exclusive, an empty string is 0, overflow is ±inf) and ZADD scores
//! [`parse_f64`] (`string2d`: the whole argument, no overflow).
//!
//! One command family: the sorted-set commands, kept in one file because the typed
//! operations and the `run` functions share the range types ([`ZRange`], [`ZRangeBy`]) and
//! the bound parsers; the data structure itself is [`crate::engine::types::zset`].

use std::borrow::Cow;
use std::ops::Bound::{self, Excluded, Included};

use super::set::{glob_match, parse_cursor, scan_page, scan_reply, ScanOptions};
use super::{
    format_f64, is, keys_after_numkeys, parse_f64, parse_i64, spec, Ctx, KeySpec, Spec, ONE_KEY,
    TWO_KEYS,
};
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::{Entry, Locked, Value};
pub use crate::engine::types::options::{ZRange, ZRangeBy};
use crate::engine::types::zset::{AddFlags, AddOutcome, LexBound, LexRange, ZSet};
use crate::resp::reply::Reply;

pub mod combine;
pub mod pick;

use combine::{
    zdiff_cmd, zdiffstore_cmd, zinter_cmd, zintercard_cmd, zinterstore_cmd, zunion_cmd,
    zunionstore_cmd,
};
use pick::{bzmpop_cmd, bzpopmax_cmd, bzpopmin_cmd, zmpop_cmd, zrandmember_cmd};

/// `numkeys key [key ...]` with the count first.
const NUMKEYS_AT_1: KeySpec = KeySpec::Custom(|a| keys_after_numkeys(a, 1).collect());

/// A destination, then `numkeys key [key ...]`.
const DST_AND_NUMKEYS: KeySpec = KeySpec::Custom(|a| {
    let mut keys = vec![1];
    keys.extend(keys_after_numkeys(a, 2));
    keys
});

/// BZPOPMIN/BZPOPMAX: every argument but the name and the timeout.
const KEYS_BEFORE_TIMEOUT: KeySpec = KeySpec::Range {
    first: 1,
    last: -2,
    step: 1,
};

/// The sorted-set commands (arity and keys as Redis 7.0's COMMAND INFO).
pub const COMMANDS: &[Spec] = &[
    spec("zadd", -4, ONE_KEY, true, zadd_cmd),
    spec("zrem", -3, ONE_KEY, true, zrem_cmd),
    spec("zcard", 2, ONE_KEY, false, zcard_cmd),
    spec("zscore", 3, ONE_KEY, false, zscore_cmd),
    spec("zmscore", -3, ONE_KEY, false, zmscore_cmd),
    spec("zincrby", 4, ONE_KEY, true, zincrby_cmd),
    spec("zrank", 3, ONE_KEY, false, zrank_cmd),
    spec("zrevrank", 3, ONE_KEY, false, zrevrank_cmd),
    spec("zcount", 4, ONE_KEY, false, zcount_cmd),
    spec("zlexcount", 4, ONE_KEY, false, zlexcount_cmd),
    spec("zrange", -4, ONE_KEY, false, zrange_cmd),
    spec("zrangebyscore", -4, ONE_KEY, false, zrangebyscore_cmd),
    spec("zrevrangebyscore", -4, ONE_KEY, false, zrevrangebyscore_cmd),
    spec("zrangebylex", -4, ONE_KEY, false, zrangebylex_cmd),
    spec("zrevrangebylex", -4, ONE_KEY, false, zrevrangebylex_cmd),
    spec("zrevrange", -4, ONE_KEY, false, zrevrange_cmd),
    spec("zremrangebyscore", 4, ONE_KEY, true, zremrangebyscore_cmd),
    spec("zremrangebyrank", 4, ONE_KEY, true, zremrangebyrank_cmd),
    spec("zremrangebylex", 4, ONE_KEY, true, zremrangebylex_cmd),
    spec("zpopmin", -2, ONE_KEY, true, zpopmin_cmd),
    spec("zpopmax", -2, ONE_KEY, true, zpopmax_cmd),
    spec("zscan", -3, ONE_KEY, false, zscan_cmd),
    spec("zrangestore", -5, TWO_KEYS, true, zrangestore_cmd),
    spec("zunion", -3, NUMKEYS_AT_1, false, zunion_cmd),
    spec("zinter", -3, NUMKEYS_AT_1, false, zinter_cmd),
    spec("zdiff", -3, NUMKEYS_AT_1, false, zdiff_cmd),
    spec("zunionstore", -4, DST_AND_NUMKEYS, true, zunionstore_cmd),
    spec("zinterstore", -4, DST_AND_NUMKEYS, true, zinterstore_cmd),
    spec("zdiffstore", -4, DST_AND_NUMKEYS, true, zdiffstore_cmd),
    spec("zintercard", -3, NUMKEYS_AT_1, false, zintercard_cmd),
    spec("zrandmember", -2, ONE_KEY, false, zrandmember_cmd),
    spec("zmpop", -4, NUMKEYS_AT_1, true, zmpop_cmd),
    spec(
        "bzmpop",
        -5,
        KeySpec::Custom(|a| keys_after_numkeys(a, 2).collect()),
        true,
        bzmpop_cmd,
    ),
    spec("bzpopmin", -3, KEYS_BEFORE_TIMEOUT, true, bzpopmin_cmd),
    spec("bzpopmax", -3, KEYS_BEFORE_TIMEOUT, true, bzpopmax_cmd),
];

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

const NAN_SCORE: &str = "ERR resulting score is not a number (NaN)";
const NOT_FLOAT_RANGE: &str = "ERR min or max is not a float";
const NOT_LEX_RANGE: &str = "ERR min or max not valid string range item";

// ---- the typed API ----

/// What [`Locked::zadd`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ZAdded {
    /// New members.
    pub added: usize,
    /// Members whose score changed.
    pub updated: usize,
    /// The resulting score of the last pair, unless a condition skipped it (ZADD INCR's
    /// reply; nil when `None`).
    pub score: Option<f64>,
}

/// A ZSCAN reply: the next cursor (0 when done) and `(member, score)` pairs.
pub type ZScanPage = (u64, Vec<(Vec<u8>, f64)>);

/// Checks ZADD's option combinations, in Redis's order.
pub fn check_zadd_flags(flags: AddFlags, pairs: usize) -> Result<(), CmdError> {
    if flags.nx && flags.xx {
        return Err(err(
            "ERR XX and NX options at the same time are not compatible",
        ));
    }
    // At most one of GT, LT and NX (XX goes with GT or LT).
    if u8::from(flags.gt) + u8::from(flags.lt) + u8::from(flags.nx) > 1 {
        return Err(err(
            "ERR GT, LT, and/or NX options at the same time are not compatible",
        ));
    }
    if flags.incr && pairs > 1 {
        return Err(err(
            "ERR INCR option supports a single increment-element pair",
        ));
    }
    Ok(())
}

/// Redis's rank sanitizing: negative ranks count from the end; `None` when the range is
/// empty; `stop` clamped to the last rank.
fn rank_bounds(start: i64, stop: i64, len: usize) -> Option<(usize, usize)> {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let start = if start < 0 { len + start } else { start }.max(0);
    let stop = if stop < 0 { len + stop } else { stop };
    if start > stop || start >= len {
        return None;
    }
    Some((start as usize, stop.min(len - 1) as usize))
}

fn add_all(z: &mut ZSet, flags: AddFlags, pairs: &[(f64, &[u8])]) -> Result<ZAdded, CmdError> {
    let mut out = ZAdded::default();
    for &(score, member) in pairs {
        out.score = match z.add(member, score, flags) {
            AddOutcome::Added(s) => {
                out.added += 1;
                Some(s)
            }
            AddOutcome::Updated(s) => {
                out.updated += 1;
                Some(s)
            }
            AddOutcome::Unchanged(s) => Some(s),
            AddOutcome::Skipped => None,
            AddOutcome::NaN => return Err(err(NAN_SCORE)),
        };
    }
    Ok(out)
}

/// Calls `visit` for each selected member, applying LIMIT.
fn visit_limited<'z>(
    members: impl Iterator<Item = (&'z [u8], f64)>,
    limit: Option<(i64, i64)>,
    mut visit: impl FnMut(&[u8], f64),
) {
    let (offset, count) = limit.unwrap_or((0, -1));
    let Ok(offset) = usize::try_from(offset) else {
        return;
    };
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    members
        .skip(offset)
        .take(count)
        .for_each(|(m, s)| visit(m, s));
}

impl Locked<'_> {
    /// ZADD: adds or updates `(score, member)` pairs under `flags` (ZADD INCR with
    /// `flags.incr`). Errors: the option conflicts of [`check_zadd_flags`], NaN in `pairs`
    /// ("not a valid float"), WRONGTYPE, and "resulting score is not a number" for INCR.
    /// With XX a missing key stays missing.
    pub fn zadd(
        &mut self,
        key: &[u8],
        flags: AddFlags,
        pairs: &[(f64, &[u8])],
    ) -> Result<ZAdded, CmdError> {
        check_zadd_flags(flags, pairs.len())?;
        if pairs.iter().any(|(s, _)| s.is_nan()) {
            return Err(CmdError::NotFloat);
        }
        if let Some(z) = self.get_zset(key)? {
            // A ZADD that changes nothing is not a write (WATCH does not see it): answer it
            // from the read view. Previewing stops at the first change, so a member given
            // twice is previewed against the right state.
            let mut unchanged = ZAdded::default();
            for &(score, member) in pairs {
                unchanged.score = match z.preview_add(member, score, flags) {
                    AddOutcome::Added(_) | AddOutcome::Updated(_) => {
                        let Some(z) = self.get_zset_mut(key)? else {
                            return Ok(ZAdded::default());
                        };
                        let added = add_all(z, flags, pairs)?;
                        self.notify_zadd(key, flags, &added);
                        return Ok(added);
                    }
                    AddOutcome::Unchanged(s) => Some(s),
                    AddOutcome::Skipped => None,
                    AddOutcome::NaN => return Err(err(NAN_SCORE)),
                };
            }
            return Ok(unchanged);
        }
        if flags.xx || pairs.is_empty() {
            return Ok(ZAdded::default());
        }
        let mut z = ZSet::default();
        let added = add_all(&mut z, flags, pairs)?;
        if !z.is_empty() {
            self.insert(key, Entry::new(Value::ZSet(Box::new(z))));
            self.notify_zadd(key, flags, &added);
        }
        Ok(added)
    }

    /// ZADD's event, when it changed something: `zincr` for INCR, else `zadd`.
    fn notify_zadd(&self, key: &[u8], flags: AddFlags, added: &ZAdded) {
        if added.added + added.updated > 0 {
            let event = if flags.incr { "zincr" } else { "zadd" };
            self.notify(Classes::ZSET, event, key);
        }
    }

    /// ZINCRBY: adds `delta` to `member`'s score (from 0 when new); returns the new score.
    pub fn zincrby(&mut self, key: &[u8], delta: f64, member: &[u8]) -> Result<f64, CmdError> {
        let flags = AddFlags {
            incr: true,
            ..AddFlags::default()
        };
        let added = self.zadd(key, flags, &[(delta, member)])?;
        // No condition is set, so the pair cannot be skipped.
        Ok(added.score.unwrap_or(delta))
    }

    /// ZREM: removes `members`; returns how many were there. An emptied set is deleted.
    pub fn zrem(&mut self, key: &[u8], members: &[&[u8]]) -> Result<usize, CmdError> {
        let present = self
            .get_zset(key)?
            .is_some_and(|z| members.iter().any(|m| z.score(m).is_some()));
        if !present {
            return Ok(0);
        }
        let Some(z) = self.get_zset_mut(key)? else {
            return Ok(0);
        };
        let removed = members.iter().filter(|m| z.remove(m)).count();
        let emptied = z.is_empty();
        self.notify(Classes::ZSET, "zrem", key);
        if emptied {
            self.remove(key);
            self.notify(Classes::GENERIC, "del", key);
        }
        Ok(removed)
    }

    /// ZCARD.
    pub fn zcard(&mut self, key: &[u8]) -> Result<usize, CmdError> {
        Ok(self.get_zset(key)?.map_or(0, ZSet::len))
    }

    /// ZSCORE.
    pub fn zscore(&mut self, key: &[u8], member: &[u8]) -> Result<Option<f64>, CmdError> {
        Ok(self.get_zset(key)?.and_then(|z| z.score(member)))
    }

    /// ZMSCORE.
    pub fn zmscore(&mut self, key: &[u8], members: &[&[u8]]) -> Result<Vec<Option<f64>>, CmdError> {
        let z = self.get_zset(key)?;
        Ok(members.iter().map(|m| z.and_then(|z| z.score(m))).collect())
    }

    /// ZRANK (`rev`: ZREVRANK): the 0-based rank of `member`.
    pub fn zrank(
        &mut self,
        key: &[u8],
        member: &[u8],
        rev: bool,
    ) -> Result<Option<usize>, CmdError> {
        let Some(z) = self.get_zset(key)? else {
            return Ok(None);
        };
        Ok(z.rank(member)
            .map(|r| if rev { z.len() - 1 - r } else { r }))
    }

    /// ZCOUNT: members with scores within the bounds.
    pub fn zcount(
        &mut self,
        key: &[u8],
        min: Bound<f64>,
        max: Bound<f64>,
    ) -> Result<usize, CmdError> {
        Ok(self
            .get_zset(key)?
            .map_or(0, |z| z.range_by_score(min, max).count()))
    }

    /// ZLEXCOUNT: members within a lex range.
    pub fn zlexcount(&mut self, key: &[u8], range: LexRange<'_>) -> Result<usize, CmdError> {
        Ok(self
            .get_zset(key)?
            .map_or(0, |z| z.range_by_lex(range, false).count()))
    }

    /// ZRANGE and its variants: calls `visit(member, score)` for each selected member, in
    /// reply order. A missing key selects nothing.
    pub fn zrange_with(
        &mut self,
        key: &[u8],
        range: &ZRange<'_>,
        visit: impl FnMut(&[u8], f64),
    ) -> Result<(), CmdError> {
        let Some(z) = self.get_zset(key)? else {
            return Ok(());
        };
        match range.by {
            ZRangeBy::Rank(start, stop) => {
                if let Some((start, stop)) = rank_bounds(start, stop, z.len()) {
                    visit_limited(z.range_by_rank(start, stop, range.rev), range.limit, visit);
                }
            }
            ZRangeBy::Score(min, max) => {
                let members = z.range_by_score(min, max);
                if range.rev {
                    visit_limited(members.rev(), range.limit, visit);
                } else {
                    visit_limited(members, range.limit, visit);
                }
            }
            ZRangeBy::Lex(lex) => {
                visit_limited(z.range_by_lex(lex, range.rev), range.limit, visit);
            }
        }
        Ok(())
    }

    /// [`Locked::zrange_with`], collecting the members (copies).
    pub fn zrange(&mut self, key: &[u8], range: &ZRange<'_>) -> Result<Vec<Vec<u8>>, CmdError> {
        let mut out = Vec::new();
        self.zrange_with(key, range, |m, _| out.push(m.to_vec()))?;
        Ok(out)
    }

    /// ZREMRANGEBYRANK / BYSCORE / BYLEX: removes the selected members; returns how many.
    /// An emptied set is deleted.
    pub fn zremrange(&mut self, key: &[u8], by: ZRangeBy<'_>) -> Result<usize, CmdError> {
        let any = self.get_zset(key)?.is_some_and(|z| match by {
            ZRangeBy::Rank(start, stop) => rank_bounds(start, stop, z.len()).is_some(),
            ZRangeBy::Score(min, max) => z.range_by_score(min, max).next().is_some(),
            ZRangeBy::Lex(lex) => z.range_by_lex(lex, false).next().is_some(),
        });
        if !any {
            return Ok(0);
        }
        let Some(z) = self.get_zset_mut(key)? else {
            return Ok(0);
        };
        let (removed, event) = match by {
            ZRangeBy::Rank(start, stop) => match rank_bounds(start, stop, z.len()) {
                Some((start, stop)) => (z.remove_range_by_rank(start, stop), "zremrangebyrank"),
                None => (0, "zremrangebyrank"),
            },
            ZRangeBy::Score(min, max) => (z.remove_range_by_score(min, max), "zremrangebyscore"),
            ZRangeBy::Lex(lex) => (z.remove_range_by_lex(lex), "zremrangebylex"),
        };
        let emptied = z.is_empty();
        if removed > 0 {
            self.notify(Classes::ZSET, event, key);
        }
        if emptied {
            self.remove(key);
            self.notify(Classes::GENERIC, "del", key);
        }
        Ok(removed)
    }

    /// ZPOPMIN (`max`: ZPOPMAX): removes and returns up to `count` members, lowest (highest)
    /// first. An emptied set is deleted.
    pub fn zpop(
        &mut self,
        key: &[u8],
        max: bool,
        count: usize,
    ) -> Result<Vec<(Vec<u8>, f64)>, CmdError> {
        // Type-check even for a count of 0, which changes nothing.
        if self.get_zset(key)?.is_none() || count == 0 {
            return Ok(Vec::new());
        }
        let Some(z) = self.get_zset_mut(key)? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::with_capacity(count.min(z.len()));
        while out.len() < count {
            match z.pop(max) {
                Some(p) => out.push(p),
                None => break,
            }
        }
        let emptied = z.is_empty();
        self.notify(Classes::ZSET, if max { "zpopmax" } else { "zpopmin" }, key);
        if emptied {
            self.remove(key);
            self.notify(Classes::GENERIC, "del", key);
        }
        Ok(out)
    }

    /// ZSCAN: one page of `(member, score)` pairs whose member matches `pattern` (a Redis
    /// glob), and the next cursor (0 when done). A set Redis would keep as a listpack comes
    /// whole, in order, whatever the cursor; a larger one page by page (`count` a hint).
    pub fn zscan(
        &mut self,
        key: &[u8],
        cursor: u64,
        pattern: Option<&[u8]>,
        count: usize,
    ) -> Result<ZScanPage, CmdError> {
        if self.get_zset(key)?.is_none() {
            return Ok((0, Vec::new()));
        }
        let skiplist = self.is_skiplist(key);
        let Some(z) = self.get_zset(key)? else {
            return Ok((0, Vec::new()));
        };
        let (next, page) = scan_zset(z, skiplist, cursor, pattern, count);
        Ok((next, page.map(|(m, s)| (m.to_vec(), s)).collect()))
    }

    /// Whether Redis holds the sorted set at `key` as a skip list: what OBJECT ENCODING
    /// reports, which remembers a conversion the engine's own [`ZSet`] may not have made
    /// (limits changed by CONFIG, SORT's conversion).
    fn is_skiplist(&mut self, key: &[u8]) -> bool {
        self.encoding_of(key) == Some("skiplist")
    }
}

/// One ZSCAN page of `z`, held by Redis as a skip list or not (see [`Locked::zscan`]).
fn scan_zset<'z, 'p>(
    z: &'z ZSet,
    skiplist: bool,
    cursor: u64,
    pattern: Option<&'p [u8]>,
    count: usize,
) -> (u64, impl Iterator<Item = (&'z [u8], f64)> + use<'z, 'p>) {
    let (next, page): (u64, Vec<(&[u8], f64)>) = if skiplist {
        scan_page(z.iter().map(|(m, s)| (m, (m, s))), cursor, count)
    } else {
        (0, z.iter().collect())
    };
    let page = page
        .into_iter()
        .filter(move |(m, _)| pattern.is_none_or(|p| glob_match(p, m)));
    (next, page)
}

/// A score as a listpack stores it, which is what ZSCAN of a small set shows: Redis 7.0's
/// `d2string`, which writes an integral value within ±2^62 as an integer (so -0 is `0`,
/// 1e17 is `100000000000000000`) and anything else as `%.17g`.
fn listpack_score(v: f64) -> String {
    const LIMIT: f64 = 4_611_686_018_427_387_904.0; // (double)(LLONG_MAX / 2) = 2^62
    if v.fract() == 0.0 && (-LIMIT..=LIMIT).contains(&v) {
        (v as i64).to_string()
    } else {
        format_f64(v)
    }
}

// ---- argument parsing ----

/// A score bound as `zslParseRange` reads it: `(` makes it exclusive; the rest goes to C's
/// `strtod`, which must consume it up to the end of the C string (a NUL ends it), so
/// leading spaces are allowed, the empty string is 0, and out-of-range values saturate to
/// ±inf or 0. NaN is rejected.
fn parse_score_bound(arg: &[u8]) -> Option<Bound<f64>> {
    let (exclusive, text) = match arg.split_first() {
        Some((b'(', rest)) => (true, rest),
        _ => (false, arg),
    };
    let text = text.split(|&b| b == 0).next().unwrap_or_default();
    let v = if text.is_empty() {
        0.0
    } else {
        // strtod skips C's isspace (which, unlike Rust's ASCII whitespace, includes \v).
        let start = text
            .iter()
            .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))?;
        let number = &text[start..];
        // Rust's parser reads C's decimal and inf/infinity/nan forms, saturating like
        // strtod; hexadecimal floats take the slow path.
        match std::str::from_utf8(number).ok()?.parse::<f64>() {
            Ok(v) => v,
            Err(_) => super::strings::cfloat::parse_c_double(number)?,
        }
    };
    if v.is_nan() {
        return None;
    }
    Some(if exclusive { Excluded(v) } else { Included(v) })
}

/// ZRANGEBYSCORE's `min max` ("min or max is not a float").
fn parse_score_range(min: &[u8], max: &[u8]) -> Result<ZRangeBy<'static>, CmdError> {
    match (parse_score_bound(min), parse_score_bound(max)) {
        (Some(min), Some(max)) => Ok(ZRangeBy::Score(min, max)),
        _ => Err(err(NOT_FLOAT_RANGE)),
    }
}

/// A lex bound as `zslParseLexRangeItem` reads it: `-`, `+` (alone, or before a NUL),
/// `[member` or `(member`.
fn parse_lex_bound(arg: &[u8]) -> Option<LexBound<'_>> {
    let alone = arg.get(1).is_none_or(|&b| b == 0);
    match arg.split_first()? {
        (b'-', _) if alone => Some(LexBound::NegInf),
        (b'+', _) if alone => Some(LexBound::PosInf),
        (b'[', rest) => Some(LexBound::Included(rest)),
        (b'(', rest) => Some(LexBound::Excluded(rest)),
        _ => None,
    }
}

/// ZRANGEBYLEX's `min max` ("min or max not valid string range item").
fn parse_lex_range<'a>(min: &'a [u8], max: &'a [u8]) -> Result<LexRange<'a>, CmdError> {
    match (parse_lex_bound(min), parse_lex_bound(max)) {
        (Some(min), Some(max)) => Ok(LexRange { min, max }),
        _ => Err(err(NOT_LEX_RANGE)),
    }
}

// ---- commands ----

fn zadd_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    zadd_generic(ctx, args, false)
}

/// ZINCRBY is ZADD INCR in Redis, down to the parsing: `ZINCRBY k nx m` is a syntax error.
fn zincrby_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    zadd_generic(ctx, args, true)
}

fn zadd_generic(ctx: &mut Ctx<'_, '_>, args: &[&[u8]], incr: bool) -> Result<Reply, CmdError> {
    let mut flags = AddFlags {
        incr,
        ..AddFlags::default()
    };
    let mut ch = false;
    let mut i = 2;
    while let Some(opt) = args.get(i) {
        if is(opt, "nx") {
            flags.nx = true;
        } else if is(opt, "xx") {
            flags.xx = true;
        } else if is(opt, "ch") {
            ch = true;
        } else if is(opt, "incr") {
            flags.incr = true;
        } else if is(opt, "gt") {
            flags.gt = true;
        } else if is(opt, "lt") {
            flags.lt = true;
        } else {
            break;
        }
        i += 1;
    }
    let rest = &args[i..];
    if rest.is_empty() || !rest.len().is_multiple_of(2) {
        return Err(CmdError::Syntax);
    }
    check_zadd_flags(flags, rest.len() / 2)?;
    // Every score is parsed before anything changes, as in Redis; one pair (the common
    // case) needs no allocation.
    let added = if let [score, member] = rest {
        ctx.ks
            .zadd(args[1], flags, &[(parse_f64(score)?, *member)])?
    } else {
        let pairs = rest
            .chunks_exact(2)
            .map(|p| Ok((parse_f64(p[0])?, p[1])))
            .collect::<Result<Vec<_>, CmdError>>()?;
        ctx.ks.zadd(args[1], flags, &pairs)?
    };
    Ok(if flags.incr {
        added.score.map_or(Reply::Nil, Reply::Double)
    } else if ch {
        Reply::Int((added.added + added.updated) as i64)
    } else {
        Reply::Int(added.added as i64)
    })
}

fn zrem_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.zrem(args[1], &args[2..])? as i64))
}

fn zcard_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.zcard(args[1])? as i64))
}

fn zscore_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(ctx
        .ks
        .zscore(args[1], args[2])?
        .map_or(Reply::Nil, Reply::Double))
}

fn zmscore_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let z = ctx.ks.get_zset(args[1])?;
    Ok(Reply::Array(
        args[2..]
            .iter()
            .map(|m| z.and_then(|z| z.score(m)).map_or(Reply::Nil, Reply::Double))
            .collect(),
    ))
}

fn zrank_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    rank_reply(ctx.ks.zrank(args[1], args[2], false)?)
}

fn zrevrank_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    rank_reply(ctx.ks.zrank(args[1], args[2], true)?)
}

fn rank_reply(rank: Option<usize>) -> Result<Reply, CmdError> {
    Ok(rank.map_or(Reply::Nil, |r| Reply::Int(r as i64)))
}

fn zcount_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let ZRangeBy::Score(min, max) = parse_score_range(args[2], args[3])? else {
        return Err(err(NOT_FLOAT_RANGE));
    };
    Ok(Reply::Int(ctx.ks.zcount(args[1], min, max)? as i64))
}

fn zlexcount_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let range = parse_lex_range(args[2], args[3])?;
    Ok(Reply::Int(ctx.ks.zlexcount(args[1], range)? as i64))
}

/// How a ZRANGE-family command selects (before its options may say otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RangeKind {
    Rank,
    Score,
    Lex,
}

fn zrange_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    zrange_generic(ctx, args, None, None)
}

fn zrangebyscore_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    zrange_generic(ctx, args, Some(RangeKind::Score), Some(false))
}

fn zrevrangebyscore_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    zrange_generic(ctx, args, Some(RangeKind::Score), Some(true))
}

fn zrangebylex_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    zrange_generic(ctx, args, Some(RangeKind::Lex), Some(false))
}

fn zrevrangebylex_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    zrange_generic(ctx, args, Some(RangeKind::Lex), Some(true))
}

fn zrevrange_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    zrange_generic(ctx, args, Some(RangeKind::Rank), Some(true))
}

/// Redis's `zrangeGenericCommand`: `kind` and `rev` are fixed by the command, or `None`
/// where ZRANGE's options choose them.
fn zrange_generic(
    ctx: &mut Ctx<'_, '_>,
    args: &[&[u8]],
    kind: Option<RangeKind>,
    rev: Option<bool>,
) -> Result<Reply, CmdError> {
    let (range, withscores) = parse_zrange(&args[1..], kind, rev, false)?;
    let resp3 = ctx.client.resp >= 3;
    let mut out = Vec::new();
    ctx.ks.zrange_with(args[1], &range, |member, score| {
        combine::push_scored(&mut out, Reply::bulk(member), score, withscores, resp3);
    })?;
    Ok(Reply::Array(out))
}

/// `ZRANGESTORE dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]`: ZRANGE's
/// selection stored at `dst` (deleted when empty); replies with how many were stored.
fn zrangestore_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let (range, _) = parse_zrange(&args[2..], None, None, true)?;
    let mut pairs = Vec::new();
    ctx.ks.zrange_with(args[2], &range, |member, score| {
        pairs.push((member.to_vec(), score));
    })?;
    let stored = ctx.ks.store_pairs(args[1], &pairs, "zrangestore");
    Ok(Reply::Int(stored as i64))
}

/// Parses `key min max [options]` (`rest`) as `zrangeGenericCommand` does; WITHSCORES is
/// not an option of the `store` form. Returns the range and whether scores are wanted.
fn parse_zrange<'a>(
    rest: &[&'a [u8]],
    mut kind: Option<RangeKind>,
    mut rev: Option<bool>,
    store: bool,
) -> Result<(ZRange<'a>, bool), CmdError> {
    let mut withscores = false;
    // Redis's "no LIMIT" is a count of -1, so `LIMIT 5 -1` is accepted even by rank.
    let (mut offset, mut count) = (0i64, -1i64);
    let mut j = 3;
    while j < rest.len() {
        let opt = rest[j];
        let left = rest.len() - j - 1;
        if !store && is(opt, "withscores") {
            withscores = true;
        } else if is(opt, "limit") && left >= 2 {
            offset = parse_i64(rest[j + 1])?;
            count = parse_i64(rest[j + 2])?;
            j += 2;
        } else if rev.is_none() && is(opt, "rev") {
            rev = Some(true);
        } else if kind.is_none() && is(opt, "bylex") {
            kind = Some(RangeKind::Lex);
        } else if kind.is_none() && is(opt, "byscore") {
            kind = Some(RangeKind::Score);
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    let kind = kind.unwrap_or(RangeKind::Rank);
    let rev = rev.unwrap_or(false);
    if count != -1 && kind == RangeKind::Rank {
        return Err(err(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    if withscores && kind == RangeKind::Lex {
        return Err(err(
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
        ));
    }
    // Reversed score and lex ranges are written max first.
    let (lo, hi) = if rev && kind != RangeKind::Rank {
        (rest[2], rest[1])
    } else {
        (rest[1], rest[2])
    };
    let by = match kind {
        RangeKind::Rank => ZRangeBy::Rank(parse_i64(lo)?, parse_i64(hi)?),
        RangeKind::Score => parse_score_range(lo, hi)?,
        RangeKind::Lex => ZRangeBy::Lex(parse_lex_range(lo, hi)?),
    };
    let range = ZRange {
        by,
        rev,
        limit: (kind != RangeKind::Rank).then_some((offset, count)),
    };
    Ok((range, withscores))
}

fn zremrangebyscore_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let by = parse_score_range(args[2], args[3])?;
    Ok(Reply::Int(ctx.ks.zremrange(args[1], by)? as i64))
}

fn zremrangebyrank_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let by = ZRangeBy::Rank(parse_i64(args[2])?, parse_i64(args[3])?);
    Ok(Reply::Int(ctx.ks.zremrange(args[1], by)? as i64))
}

fn zremrangebylex_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let by = ZRangeBy::Lex(parse_lex_range(args[2], args[3])?);
    Ok(Reply::Int(ctx.ks.zremrange(args[1], by)? as i64))
}

fn zpopmin_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    zpop_generic(ctx, args, false)
}

fn zpopmax_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    zpop_generic(ctx, args, true)
}

fn zpop_generic(ctx: &mut Ctx<'_, '_>, args: &[&[u8]], max: bool) -> Result<Reply, CmdError> {
    if args.len() > 3 {
        return Err(CmdError::Syntax);
    }
    let count = match args.get(2) {
        Some(arg) => Some(
            parse_i64(arg)
                .ok()
                .and_then(|n| usize::try_from(n).ok())
                .ok_or_else(|| err("ERR value is out of range, must be positive"))?,
        ),
        None => None,
    };
    let popped = ctx.ks.zpop(args[1], max, count.unwrap_or(1))?;
    // RESP3 nests (member, score) pairs when a count was given; RESP2 is always flat.
    let nested = count.is_some() && ctx.client.resp >= 3;
    let mut out = Vec::with_capacity(popped.len() * 2);
    for (member, score) in popped {
        if nested {
            out.push(Reply::Array(vec![
                Reply::Bulk(member),
                Reply::Double(score),
            ]));
        } else {
            out.push(Reply::Bulk(member));
            out.push(Reply::Double(score));
        }
    }
    Ok(Reply::Array(out))
}

fn zscan_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let cursor = parse_cursor(args[2])?;
    // Redis looks the key up before it reads the options: a missing key answers an empty
    // scan even to bad options.
    if ctx.ks.get_zset(args[1])?.is_none() {
        return Ok(scan_reply(0, Vec::new()));
    }
    let opts = ScanOptions::parse(&args[3..])?;
    let skiplist = ctx.ks.is_skiplist(args[1]);
    let Some(z) = ctx.ks.get_zset(args[1])? else {
        return Ok(scan_reply(0, Vec::new()));
    };
    // A skip list's scores print as replies do; a listpack's as it stores them.
    let format = if skiplist { format_f64 } else { listpack_score };
    let (next, page) = scan_zset(z, skiplist, cursor, opts.pattern, opts.count);
    let mut items = Vec::new();
    for (member, score) in page {
        items.push(Reply::bulk(member));
        items.push(Reply::Bulk(format(score).into_bytes()));
    }
    Ok(scan_reply(next, items))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_bounds_parse_like_zsl_parse_range() {
        assert_eq!(parse_score_bound(b"1.5"), Some(Included(1.5)));
        assert_eq!(parse_score_bound(b"(1.5"), Some(Excluded(1.5)));
        assert_eq!(parse_score_bound(b""), Some(Included(0.0)));
        assert_eq!(parse_score_bound(b"("), Some(Excluded(0.0)));
        assert_eq!(parse_score_bound(b" 1"), Some(Included(1.0)));
        assert_eq!(parse_score_bound(b"\x0b 1"), Some(Included(1.0)));
        assert_eq!(
            parse_score_bound(b"-inf"),
            Some(Included(f64::NEG_INFINITY))
        );
        assert_eq!(parse_score_bound(b"(+inf"), Some(Excluded(f64::INFINITY)));
        assert_eq!(parse_score_bound(b"1e400"), Some(Included(f64::INFINITY)));
        assert_eq!(parse_score_bound(b"0x10"), Some(Included(16.0)));
        assert_eq!(parse_score_bound(b"2\0junk"), Some(Included(2.0)));
        for bad in [&b"nan"[..], b"1e", b"x", b" ", b"1 ", b"((1", b"."] {
            assert_eq!(parse_score_bound(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn lex_bounds_parse_like_zsl_parse_lex_range_item() {
        assert_eq!(parse_lex_bound(b"-"), Some(LexBound::NegInf));
        assert_eq!(parse_lex_bound(b"+"), Some(LexBound::PosInf));
        assert_eq!(parse_lex_bound(b"+\0x"), Some(LexBound::PosInf));
        assert_eq!(parse_lex_bound(b"[a"), Some(LexBound::Included(b"a")));
        assert_eq!(parse_lex_bound(b"("), Some(LexBound::Excluded(b"")));
        for bad in [&b""[..], b"a", b"+a", b"-a"] {
            assert_eq!(parse_lex_bound(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn listpack_scores_print_like_d2string() {
        assert_eq!(listpack_score(1e17), "100000000000000000");
        assert_eq!(listpack_score(4611686018427387904.0), "4611686018427387904");
        assert_eq!(
            listpack_score(-4611686018427387904.0),
            "-4611686018427387904"
        );
        assert_eq!(listpack_score(9e18), "9e+18");
        assert_eq!(listpack_score(-0.0), "0");
        assert_eq!(listpack_score(1.1), "1.1000000000000001");
        assert_eq!(listpack_score(f64::INFINITY), "inf");
    }

    #[test]
    fn rank_bounds_sanitize_like_redis() {
        assert_eq!(rank_bounds(0, -1, 3), Some((0, 2)));
        assert_eq!(rank_bounds(-100, 100, 3), Some((0, 2)));
        assert_eq!(rank_bounds(2, 1, 3), None);
        assert_eq!(rank_bounds(3, 5, 3), None);
        assert_eq!(rank_bounds(0, -4, 3), None);
        assert_eq!(rank_bounds(i64::MIN, i64::MAX, 3), Some((0, 2)));
        assert_eq!(rank_bounds(0, 0, 0), None);
    }
}

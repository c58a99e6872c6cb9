//! Sets: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP, SRANDMEMBER, SMOVE,
//! SINTER, SINTERCARD, SUNION, SDIFF, SINTERSTORE, SUNIONSTORE, SDIFFSTORE, SSCAN — plus what every
//! collection SCAN and random pick shares (HSCAN and ZSCAN use it too): MATCH/COUNT parsing,
//! cursor paging in SCAN's order, and a per-thread random generator. The glob matcher and
//! the cursor parser are the key space's ([`super::keys`]), so KEYS, SCAN and the
//! collection scans agree.
//!
//! Invariants: an empty set is never stored (removals end with `drop_if_empty`, the STORE
//! commands delete their destination when the result is empty). A command that changes
//! nothing (SREM of absent members, SADD of present ones, SMOVE that moves nothing) does not
//! touch the key for WATCH, as in Redis, so it checks with read access before writing.
//!
//! Keyspace events, as Redis 7.0's t_set.c emits them (class `s`, `del` in `g`): `sadd` and
//! `srem` when a member was added or removed, `spop`, SMOVE's `srem` on the source then
//! `sadd` on the destination (when it added), and `sinterstore`, `sunionstore`,
//! `sdiffstore` for a stored result (`del` when an empty one removed the destination). An
//! emptied set announces `del` after the command's event.
//!
//! SCAN paging: Redis returns a small collection (a listpack hash, an intset) whole with
//! cursor 0, and walks a hash table's buckets otherwise. The engine does the first exactly;
//! for a large collection its cursor is a position in the order of a fixed-seed hash of the
//! elements, so every element present for a whole scan is returned, as Redis guarantees
//! (cursor values themselves differ from Redis's).

use std::borrow::Cow;
use std::cell::Cell;
use std::hash::BuildHasher;

use super::keys::{parse_scan_cursor, scan_position};
// Re-exported for the other collection SCANs (ZSCAN uses them through this module).
pub use super::keys::glob_match;
pub(super) use super::keys::parse_scan_cursor as parse_cursor;
use super::{is, keys_after_numkeys, parse_i64, Ctx, KeySpec, Spec};
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::{BytesSet, Entry, Key, Locked, Value};
use crate::engine::types::options::SetOp;
use crate::resp::reply::Reply;

/// A negative SRANDMEMBER/HRANDFIELD count may repeat elements, so its reply is as long as
/// the count whatever the set's size. Redis builds any length (and a huge one exhausts its
/// memory); the engine refuses counts above this rather than abort the process.
pub const MAX_RANDOM_REPLY: u64 = 1 << 24;

/// Redis's `set-max-intset-entries`: a set of at most this many integers is an intset,
/// which SSCAN returns whole.
const INTSET_MAX_ENTRIES: usize = 512;

const KEY1: KeySpec = KeySpec::Range {
    first: 1,
    last: 1,
    step: 1,
};
const ALL_KEYS: KeySpec = KeySpec::Range {
    first: 1,
    last: -1,
    step: 1,
};

/// The set commands.
pub const COMMANDS: &[Spec] = &[
    Spec {
        name: "sadd",
        arity: -3,
        keys: KEY1,
        write: true,
        run: sadd,
    },
    Spec {
        name: "srem",
        arity: -3,
        keys: KEY1,
        write: true,
        run: srem,
    },
    Spec {
        name: "smembers",
        arity: 2,
        keys: KEY1,
        write: false,
        run: smembers,
    },
    Spec {
        name: "sismember",
        arity: 3,
        keys: KEY1,
        write: false,
        run: sismember,
    },
    Spec {
        name: "smismember",
        arity: -3,
        keys: KEY1,
        write: false,
        run: smismember,
    },
    Spec {
        name: "scard",
        arity: 2,
        keys: KEY1,
        write: false,
        run: scard,
    },
    Spec {
        name: "spop",
        arity: -2,
        keys: KEY1,
        write: true,
        run: spop,
    },
    Spec {
        name: "srandmember",
        arity: -2,
        keys: KEY1,
        write: false,
        run: srandmember,
    },
    Spec {
        name: "smove",
        arity: 4,
        keys: KeySpec::Range {
            first: 1,
            last: 2,
            step: 1,
        },
        write: true,
        run: smove,
    },
    Spec {
        name: "sinter",
        arity: -2,
        keys: ALL_KEYS,
        write: false,
        run: sinter,
    },
    Spec {
        name: "sintercard",
        arity: -3,
        keys: KeySpec::Custom(|args| keys_after_numkeys(args, 1).collect()),
        write: false,
        run: sintercard,
    },
    Spec {
        name: "sunion",
        arity: -2,
        keys: ALL_KEYS,
        write: false,
        run: sunion,
    },
    Spec {
        name: "sdiff",
        arity: -2,
        keys: ALL_KEYS,
        write: false,
        run: sdiff,
    },
    Spec {
        name: "sinterstore",
        arity: -3,
        keys: ALL_KEYS,
        write: true,
        run: sinterstore,
    },
    Spec {
        name: "sunionstore",
        arity: -3,
        keys: ALL_KEYS,
        write: true,
        run: sunionstore,
    },
    Spec {
        name: "sdiffstore",
        arity: -3,
        keys: ALL_KEYS,
        write: true,
        run: sdiffstore,
    },
    Spec {
        name: "sscan",
        arity: -3,
        keys: KEY1,
        write: false,
        run: sscan,
    },
];

fn members_of(set: &BytesSet) -> Vec<Vec<u8>> {
    set.iter().map(|m| m.to_vec()).collect()
}

// ---- typed operations ----

impl Locked<'_> {
    /// SADD: adds `members`; returns how many were new.
    pub fn sadd(&mut self, key: &[u8], members: &[&[u8]]) -> Result<usize, CmdError> {
        if let Some(set) = self.get_set(key)? {
            if members.iter().all(|m| set.contains(*m)) {
                return Ok(0);
            }
        }
        let set = self.set_or_default(key)?;
        let added = members.iter().filter(|m| set.insert((**m).into())).count();
        if added > 0 {
            self.notify(Classes::SET, "sadd", key);
        }
        Ok(added)
    }

    /// SREM: removes `members`; returns how many were there.
    pub fn srem(&mut self, key: &[u8], members: &[&[u8]]) -> Result<usize, CmdError> {
        match self.get_set(key)? {
            Some(set) if members.iter().any(|m| set.contains(*m)) => {}
            _ => return Ok(0),
        }
        let removed = match self.get_set_mut(key)? {
            Some(set) => members.iter().filter(|m| set.remove(**m)).count(),
            None => 0,
        };
        self.notify(Classes::SET, "srem", key);
        self.drop_emptied(key);
        Ok(removed)
    }

    /// SMEMBERS: every member, in no particular order.
    pub fn smembers(&mut self, key: &[u8]) -> Result<Vec<Vec<u8>>, CmdError> {
        Ok(self.get_set(key)?.map(members_of).unwrap_or_default())
    }

    /// SISMEMBER.
    pub fn sismember(&mut self, key: &[u8], member: &[u8]) -> Result<bool, CmdError> {
        Ok(self.get_set(key)?.is_some_and(|s| s.contains(member)))
    }

    /// SMISMEMBER: membership of each of `members`, in order.
    pub fn smismember(&mut self, key: &[u8], members: &[&[u8]]) -> Result<Vec<bool>, CmdError> {
        let set = self.get_set(key)?;
        Ok(members
            .iter()
            .map(|m| set.is_some_and(|s| s.contains(*m)))
            .collect())
    }

    /// SCARD.
    pub fn scard(&mut self, key: &[u8]) -> Result<usize, CmdError> {
        Ok(self.get_set(key)?.map_or(0, |s| s.len()))
    }

    /// SPOP without a count: removes and returns a random member.
    pub fn spop(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, CmdError> {
        let member: Key = match self.get_set(key)? {
            None => return Ok(None),
            Some(set) => match set.iter().nth(random_below(set.len())) {
                Some(m) => m.clone(),
                None => return Ok(None),
            },
        };
        if let Some(set) = self.get_set_mut(key)? {
            set.remove(&member);
        }
        self.notify(Classes::SET, "spop", key);
        self.drop_emptied(key);
        Ok(Some(member.into_vec()))
    }

    /// SPOP with a count: removes and returns `count` distinct random members (all of them
    /// when the set is no larger).
    pub fn spop_count(&mut self, key: &[u8], count: usize) -> Result<Vec<Vec<u8>>, CmdError> {
        let picked: Vec<Key> = match self.get_set(key)? {
            None => return Ok(Vec::new()),
            Some(_) if count == 0 => return Ok(Vec::new()),
            Some(set) if count >= set.len() => {
                let all = match self.remove(key) {
                    Some(Entry {
                        value: Value::Set(set),
                        ..
                    }) => set.into_iter().map(Vec::from).collect(),
                    _ => Vec::new(),
                };
                self.notify(Classes::SET, "spop", key);
                self.notify(Classes::GENERIC, "del", key);
                return Ok(all);
            }
            Some(set) => sample_distinct(set.iter(), set.len(), count)
                .into_iter()
                .cloned()
                .collect(),
        };
        if let Some(set) = self.get_set_mut(key)? {
            for m in &picked {
                set.remove(m);
            }
        }
        self.notify(Classes::SET, "spop", key);
        self.drop_emptied(key);
        Ok(picked.into_iter().map(Vec::from).collect())
    }

    /// SRANDMEMBER without a count: a random member.
    pub fn srandmember(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, CmdError> {
        Ok(self
            .get_set(key)?
            .and_then(|s| s.iter().nth(random_below(s.len())))
            .map(|m| m.to_vec()))
    }

    /// SRANDMEMBER with a count: `count >= 0` distinct members (the whole set when it is no
    /// larger); `count < 0` exactly `-count` members, possibly repeated. A negative count
    /// beyond [`MAX_RANDOM_REPLY`] is refused.
    pub fn srandmember_count(&mut self, key: &[u8], count: i64) -> Result<Vec<Vec<u8>>, CmdError> {
        let Some(set) = self.get_set(key)? else {
            return Ok(Vec::new());
        };
        let members: Vec<&Key> = set.iter().collect();
        Ok(random_pick(&members, count)?
            .into_iter()
            .map(|m| m.to_vec())
            .collect())
    }

    /// SMOVE: moves `member` from `src` to `dst`; false if it was not in `src`.
    pub fn smove(&mut self, src: &[u8], dst: &[u8], member: &[u8]) -> Result<bool, CmdError> {
        let Some(src_set) = self.get_set(src)? else {
            return Ok(false);
        };
        let present = src_set.contains(member);
        let in_dst = self.get_set(dst)?.is_some_and(|set| set.contains(member));
        if src == dst || !present {
            return Ok(present);
        }
        if let Some(set) = self.get_set_mut(src)? {
            set.remove(member);
        }
        self.notify(Classes::SET, "srem", src);
        self.drop_emptied(src);
        // A member `dst` already holds leaves `dst` untouched: no write a WATCH would see,
        // as Redis signals `dst` only when the add added.
        if !in_dst {
            self.set_or_default(dst)?.insert(member.into());
            self.notify(Classes::SET, "sadd", dst);
        }
        Ok(true)
    }

    /// SINTER: the members in every set of `keys` (a missing key is an empty set).
    pub fn sinter(&mut self, keys: &[&[u8]]) -> Result<Vec<Vec<u8>>, CmdError> {
        Ok(members_of(&self.set_op(SetOp::Inter, keys)?))
    }

    /// SINTERCARD: how many members are in every set of `keys`, counting at most `limit`
    /// (0: no limit).
    pub fn sintercard(&mut self, keys: &[&[u8]], limit: usize) -> Result<usize, CmdError> {
        let n = self.set_op(SetOp::Inter, keys)?.len();
        Ok(if limit == 0 { n } else { n.min(limit) })
    }

    /// SUNION: the members in any set of `keys`.
    pub fn sunion(&mut self, keys: &[&[u8]]) -> Result<Vec<Vec<u8>>, CmdError> {
        Ok(members_of(&self.set_op(SetOp::Union, keys)?))
    }

    /// SDIFF: the members of the first set in none of the others.
    pub fn sdiff(&mut self, keys: &[&[u8]]) -> Result<Vec<Vec<u8>>, CmdError> {
        Ok(members_of(&self.set_op(SetOp::Diff, keys)?))
    }

    /// SINTERSTORE: stores [`Locked::sinter`] at `dst` (whatever `dst` held; deleted when
    /// the result is empty); returns its size.
    pub fn sinterstore(&mut self, dst: &[u8], keys: &[&[u8]]) -> Result<usize, CmdError> {
        let set = self.set_op(SetOp::Inter, keys)?;
        Ok(self.store_set(dst, set, "sinterstore"))
    }

    /// SUNIONSTORE (see [`Locked::sinterstore`]).
    pub fn sunionstore(&mut self, dst: &[u8], keys: &[&[u8]]) -> Result<usize, CmdError> {
        let set = self.set_op(SetOp::Union, keys)?;
        Ok(self.store_set(dst, set, "sunionstore"))
    }

    /// SDIFFSTORE (see [`Locked::sinterstore`]).
    pub fn sdiffstore(&mut self, dst: &[u8], keys: &[&[u8]]) -> Result<usize, CmdError> {
        let set = self.set_op(SetOp::Diff, keys)?;
        Ok(self.store_set(dst, set, "sdiffstore"))
    }

    /// SSCAN: one page of members matching `pattern` (a Redis glob) and the next cursor (0
    /// when the scan is complete). `count` is a hint, as in Redis.
    pub fn sscan(
        &mut self,
        key: &[u8],
        cursor: u64,
        pattern: Option<&[u8]>,
        count: usize,
    ) -> Result<(u64, Vec<Vec<u8>>), CmdError> {
        let Some(set) = self.get_set(key)? else {
            return Ok((0, Vec::new()));
        };
        let intset = set.len() <= INTSET_MAX_ENTRIES && set.iter().all(|m| parse_i64(m).is_ok());
        let (next, page): (u64, Vec<&Key>) = if intset {
            (0, set.iter().collect())
        } else {
            scan_page(set.iter().map(|m| (&m[..], m)), cursor, count)
        };
        let page = page
            .into_iter()
            .filter(|m| pattern.is_none_or(|p| glob_match(p, m)))
            .map(|m| m.to_vec())
            .collect();
        Ok((next, page))
    }

    /// Computes SINTER / SUNION / SDIFF. Every key is type-checked first (a WRONGTYPE
    /// anywhere wins over a missing key, as in Redis 7).
    fn set_op(&mut self, op: SetOp, keys: &[&[u8]]) -> Result<BytesSet, CmdError> {
        let mut sizes = Vec::with_capacity(keys.len());
        for key in keys {
            sizes.push(self.get_set(key)?.map(|s| s.len()));
        }
        let mut out = BytesSet::default();
        match op {
            SetOp::Inter => {
                if sizes.iter().any(Option::is_none) {
                    return Ok(out);
                }
                // Start from the smallest set, then keep what every other one contains.
                let Some(smallest) = (0..keys.len()).min_by_key(|&i| sizes[i]) else {
                    return Ok(out);
                };
                if let Some(s) = self.get_set(keys[smallest])? {
                    out = s.clone();
                }
                for (i, key) in keys.iter().enumerate() {
                    if i == smallest || out.is_empty() {
                        continue;
                    }
                    match self.get_set(key)? {
                        Some(s) => out.retain(|m| s.contains(m)),
                        None => out.clear(),
                    }
                }
            }
            SetOp::Union => {
                for key in keys {
                    if let Some(s) = self.get_set(key)? {
                        out.extend(s.iter().cloned());
                    }
                }
            }
            SetOp::Diff => {
                if let Some(first) = self.get_set(keys[0])? {
                    out = first.clone();
                }
                for key in &keys[1..] {
                    if out.is_empty() {
                        break;
                    }
                    if let Some(s) = self.get_set(key)? {
                        if s.len() < out.len() {
                            for m in s {
                                out.remove(m);
                            }
                        } else {
                            out.retain(|m| !s.contains(m));
                        }
                    }
                }
            }
        }
        Ok(out)
    }

    /// Stores a STORE command's result at `dst` (removing `dst` when it is empty) and
    /// announces it as `event` (`del` for a removal).
    fn store_set(&mut self, dst: &[u8], set: BytesSet, event: &str) -> usize {
        let n = set.len();
        if n == 0 {
            if self.remove(dst).is_some() {
                self.notify(Classes::GENERIC, "del", dst);
            }
        } else {
            self.insert(dst, Entry::new(Value::Set(Box::new(set))));
            self.notify(Classes::SET, event, dst);
        }
        n
    }
}

// ---- commands ----

fn sadd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.sadd(args[1], &args[2..])? as i64))
}

fn srem(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.srem(args[1], &args[2..])? as i64))
}

fn bulk_set(members: Vec<Vec<u8>>) -> Reply {
    Reply::Set(members.into_iter().map(Reply::Bulk).collect())
}

fn smembers(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(bulk_set(ctx.ks.smembers(args[1])?))
}

fn sismember(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.sismember(args[1], args[2])?.into()))
}

fn smismember(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let found = ctx.ks.smismember(args[1], &args[2..])?;
    Ok(Reply::Array(
        found.into_iter().map(|b| Reply::Int(b.into())).collect(),
    ))
}

fn scard(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.scard(args[1])? as i64))
}

fn spop(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    match args.len() {
        2 => Ok(Reply::opt_bulk(ctx.ks.spop(args[1])?.as_deref())),
        3 => {
            let count = parse_positive(args[2])?;
            Ok(bulk_set(ctx.ks.spop_count(args[1], count)?))
        }
        _ => Err(CmdError::Syntax),
    }
}

fn srandmember(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    match args.len() {
        2 => Ok(Reply::opt_bulk(ctx.ks.srandmember(args[1])?.as_deref())),
        3 => {
            let count = parse_random_count(args[2])?;
            let members = ctx.ks.srandmember_count(args[1], count)?;
            Ok(Reply::Array(members.into_iter().map(Reply::Bulk).collect()))
        }
        _ => Err(CmdError::Syntax),
    }
}

fn smove(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.smove(args[1], args[2], args[3])?.into()))
}

fn sinter(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(bulk_set(ctx.ks.sinter(&args[1..])?))
}

/// `SINTERCARD numkeys key [key ...] [LIMIT limit]`, checked in Redis's order: the count,
/// that the keys are there, the options, then the keys' types.
fn sintercard(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let numkeys = parse_i64(args[1])
        .ok()
        .filter(|&n| n >= 1)
        .ok_or_else(|| err("ERR numkeys should be greater than 0"))?;
    let keys = keys_after_numkeys(args, 1);
    if usize::try_from(numkeys).map_or(true, |n| n > keys.len()) {
        return Err(err(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    let mut limit = 0;
    let mut opts = &args[keys.end..];
    while let Some((opt, rest)) = opts.split_first() {
        match rest.split_first() {
            Some((value, rest)) if is(opt, "limit") => {
                limit = parse_non_negative(value, "ERR LIMIT can't be negative")?;
                opts = rest;
            }
            _ => return Err(CmdError::Syntax),
        }
    }
    let n = ctx.ks.sintercard(&args[keys], limit)?;
    Ok(Reply::Int(n as i64))
}

fn sunion(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(bulk_set(ctx.ks.sunion(&args[1..])?))
}

fn sdiff(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(bulk_set(ctx.ks.sdiff(&args[1..])?))
}

fn sinterstore(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.sinterstore(args[1], &args[2..])? as i64))
}

fn sunionstore(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.sunionstore(args[1], &args[2..])? as i64))
}

fn sdiffstore(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.sdiffstore(args[1], &args[2..])? as i64))
}

fn sscan(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    // Redis parses the cursor, then looks the key up (a missing key ends the scan before
    // the options are read), then parses the options.
    let cursor = parse_scan_cursor(args[2])?;
    if ctx.ks.get_set(args[1])?.is_none() {
        return Ok(scan_reply(0, Vec::new()));
    }
    let opts = ScanOptions::parse(&args[3..])?;
    let (next, members) = ctx.ks.sscan(args[1], cursor, opts.pattern, opts.count)?;
    Ok(scan_reply(
        next,
        members.into_iter().map(Reply::Bulk).collect(),
    ))
}

// ---- argument parsing shared with HSCAN / HRANDFIELD ----

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

/// SPOP's count (`getPositiveLongFromObjectOrReply`: one message for both failures).
fn parse_positive(arg: &[u8]) -> Result<usize, CmdError> {
    parse_i64(arg)
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| err("ERR value is out of range, must be positive"))
}

/// Redis's `getPositiveLongFromObjectOrReply` with a message: an integer >= 0, else `msg`
/// (for a non-integer too).
pub(super) fn parse_non_negative(arg: &[u8], msg: &'static str) -> Result<usize, CmdError> {
    parse_i64(arg)
        .ok()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| err(msg))
}

/// SRANDMEMBER's and HRANDFIELD's count: any integer but `i64::MIN` (Redis negates it).
pub(super) fn parse_random_count(arg: &[u8]) -> Result<i64, CmdError> {
    let n = parse_i64(arg)?;
    if n == i64::MIN {
        return Err(err("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"));
    }
    Ok(n)
}

/// The MATCH and COUNT options of HSCAN/SSCAN/ZSCAN.
#[derive(Debug, Clone, Copy)]
pub(super) struct ScanOptions<'a> {
    /// The glob, unless it is `*` (which matches everything).
    pub pattern: Option<&'a [u8]>,
    /// Elements to examine per call (a hint).
    pub count: usize,
}

impl<'a> ScanOptions<'a> {
    /// Parses the options that follow the cursor, left to right as Redis does.
    pub fn parse(mut opts: &[&'a [u8]]) -> Result<ScanOptions<'a>, CmdError> {
        let mut out = ScanOptions {
            pattern: None,
            count: 10,
        };
        while let [name, value, rest @ ..] = opts {
            if is(name, "count") {
                let n = parse_i64(value)?;
                out.count = usize::try_from(n)
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or(CmdError::Syntax)?;
            } else if is(name, "match") {
                out.pattern = (*value != b"*").then_some(*value);
            } else {
                return Err(CmdError::Syntax);
            }
            opts = rest;
        }
        if opts.is_empty() {
            Ok(out)
        } else {
            Err(CmdError::Syntax)
        }
    }
}

/// `[cursor, [elements...]]`.
pub(super) fn scan_reply(cursor: u64, items: Vec<Reply>) -> Reply {
    Reply::Array(vec![
        Reply::Bulk(cursor.to_string().into_bytes()),
        Reply::Array(items),
    ])
}

/// One page of a SCAN over a large collection: of the elements whose stable hash is at or
/// above `cursor`, the `count` with the smallest hashes (plus any sharing the last one's
/// hash), and the next cursor (0 when nothing is left). Elements added or removed between
/// calls do not move the others, so an element present for the whole scan is returned.
pub(super) fn scan_page<'a, T>(
    items: impl Iterator<Item = (&'a [u8], T)>,
    cursor: u64,
    count: usize,
) -> (u64, Vec<T>) {
    let mut due: Vec<(u64, T)> = items
        .map(|(k, t)| (scan_position(k), t))
        .filter(|(h, _)| *h >= cursor)
        .collect();
    let count = count.max(1);
    if due.len() <= count {
        return (0, due.into_iter().map(|(_, t)| t).collect());
    }
    due.select_nth_unstable_by_key(count - 1, |(h, _)| *h);
    let last = due[count - 1].0;
    let rest = due.iter().any(|(h, _)| *h > last);
    let page = due
        .into_iter()
        .filter(|(h, _)| *h <= last)
        .map(|(_, t)| t)
        .collect();
    (if rest { last + 1 } else { 0 }, page)
}

// ---- randomness ----

/// A uniformly distributed `u64` from a per-thread SplitMix64 generator, seeded from the
/// process's random hasher keys (no dependency, no lock; not cryptographic, as Redis's).
pub(super) fn random_u64() -> u64 {
    thread_local! {
        static STATE: Cell<u64> = Cell::new(
            std::collections::hash_map::RandomState::new().hash_one(std::thread::current().id()),
        );
    }
    STATE.with(|s| {
        let x = s.get().wrapping_add(0x9e37_79b9_7f4a_7c15);
        s.set(x);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

/// A random index below `n` (0 when `n` is 0).
pub(super) fn random_below(n: usize) -> usize {
    ((u128::from(random_u64()) * n as u128) >> 64) as usize
}

/// `k` distinct items of the `len` that `items` yields, uniformly, in random order
/// (selection sampling, Knuth's Algorithm S, then a shuffle).
pub(super) fn sample_distinct<T>(items: impl Iterator<Item = T>, len: usize, k: usize) -> Vec<T> {
    let mut out = Vec::with_capacity(k.min(len));
    let mut left = len;
    for item in items {
        if out.len() == k {
            break;
        }
        if random_below(left) < k - out.len() {
            out.push(item);
        }
        left = left.saturating_sub(1);
    }
    for i in (1..out.len()).rev() {
        out.swap(i, random_below(i + 1));
    }
    out
}

/// The SRANDMEMBER / HRANDFIELD count rule over `items`: 0 → none; `count > 0` → that
/// many distinct items (all when there are no more); `count < 0` → `-count` items drawn
/// with repetition.
pub(super) fn random_pick<T: Copy>(items: &[T], count: i64) -> Result<Vec<T>, CmdError> {
    if count >= 0 {
        let k = usize::try_from(count).unwrap_or(usize::MAX);
        if k >= items.len() {
            return Ok(items.to_vec());
        }
        return Ok(sample_distinct(items.iter().copied(), items.len(), k));
    }
    let n = count.unsigned_abs();
    if n > MAX_RANDOM_REPLY {
        return Err(err(
            "ERR value is out of range: a negative count may ask for at most 16777216 elements",
        ));
    }
    if items.is_empty() {
        return Ok(Vec::new());
    }
    Ok((0..n).map(|_| items[random_below(items.len())]).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scan_pages_cover_everything_once() {
        let items: Vec<Vec<u8>> = (0..1000).map(|i| format!("m{i}").into_bytes()).collect();
        let mut seen = Vec::new();
        let mut cursor = 0;
        loop {
            let (next, page) = scan_page(items.iter().map(|m| (&m[..], m)), cursor, 7);
            assert!(page.len() >= 7 || next == 0);
            seen.extend(page.into_iter().cloned());
            if next == 0 {
                break;
            }
            cursor = next;
        }
        seen.sort();
        let mut want = items.clone();
        want.sort();
        assert_eq!(seen, want);
    }

    #[test]
    fn random_picks_follow_the_count_rules() {
        let items = [1, 2, 3, 4, 5];
        assert!(random_pick(&items, 0).unwrap().is_empty());
        let mut all = random_pick(&items, 9).unwrap();
        all.sort();
        assert_eq!(all, items);
        let mut three = random_pick(&items, 3).unwrap();
        three.sort();
        three.dedup();
        assert_eq!(three.len(), 3);
        assert_eq!(random_pick(&items, -20).unwrap().len(), 20);
        assert!(random_pick(&items, -(MAX_RANDOM_REPLY as i64) - 1).is_err());
        assert!(random_pick::<u8>(&[], -3).unwrap().is_empty());
        for _ in 0..1000 {
            assert!(random_below(3) < 3);
        }
        assert_eq!(random_below(0), 0);
    }
}

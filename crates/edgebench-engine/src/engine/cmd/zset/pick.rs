//! ZRANDMEMBER, ZMPOP and the blocking BZPOPMIN, BZPOPMAX, BZMPOP (Redis 7.0's
//! `zrandmemberCommand`, `zmpopGenericCommand`, `blockingGenericZpopCommand`).
//!
//! Blocking: as for the list commands, the engine serves what is there and otherwise gives
//! the timeout reply (the nil array) at once, as Redis does inside MULTI; the RESP server
//! parks the client instead (`crate::server::blocking`).
//!
//! Replies: BZPOPMIN/BZPOPMAX are a flat `[key, member, score]` in both protocols; ZMPOP and
//! BZMPOP `[key, [[member, score], ...]]` in both; ZRANDMEMBER WITHSCORES is flat in RESP2
//! and nested pairs in RESP3.

use super::combine::pairs_reply;
use super::err;
use crate::engine::cmd::list::{parse_timeout_secs, MultiPop};
use crate::engine::cmd::set::{parse_random_count, random_below, random_pick};
use crate::engine::cmd::{is, Ctx};
use crate::engine::error::CmdError;
use crate::engine::keyspace::Locked;
use crate::resp::reply::Reply;

/// Members popped from one key: (index of the key among those given, (member, score)s).
pub type Popped = (usize, Vec<(Vec<u8>, f64)>);

impl Locked<'_> {
    /// ZMPOP (and BZPOPMIN/BZPOPMAX with a `count` of 1): pops up to `count` members, the
    /// lowest (`max`: the highest) first, from the first sorted set of `keys`; `None` when
    /// every key is missing. WRONGTYPE stops at the first key of another type met first.
    pub fn zmpop(
        &mut self,
        keys: &[&[u8]],
        max: bool,
        count: usize,
    ) -> Result<Option<Popped>, CmdError> {
        for (i, key) in keys.iter().enumerate() {
            if self.get_zset(key)?.is_some() {
                return Ok(Some((i, self.zpop(key, max, count)?)));
            }
        }
        Ok(None)
    }

    /// ZRANDMEMBER without a count: a random member.
    pub fn zrandmember(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, CmdError> {
        let Some(z) = self.get_zset(key)? else {
            return Ok(None);
        };
        Ok(z.iter().nth(random_below(z.len())).map(|(m, _)| m.to_vec()))
    }

    /// ZRANDMEMBER with a count, as SRANDMEMBER's: `count >= 0` distinct members (the whole
    /// set, highest first, when it is no larger); `count < 0` exactly `-count`, possibly repeated
    /// (refused beyond [`crate::engine::cmd::set::MAX_RANDOM_REPLY`]).
    pub fn zrandmember_count(
        &mut self,
        key: &[u8],
        count: i64,
    ) -> Result<Vec<(Vec<u8>, f64)>, CmdError> {
        let Some(z) = self.get_zset(key)? else {
            return Ok(Vec::new());
        };
        if count == 0 {
            return Ok(Vec::new());
        }
        // Redis walks a sorted set from its highest member, which shows when the whole
        // set is the answer.
        let members: Vec<(&[u8], f64)> = z.iter().rev().collect();
        Ok(random_pick(&members, count)?
            .into_iter()
            .map(|(m, s)| (m.to_vec(), s))
            .collect())
    }
}

// ---- commands ----

/// `[key, [[member, score], ...]]`, or the nil array.
fn mpop_reply(args: &[&[u8]], keys_at: usize, popped: Option<Popped>) -> Reply {
    let Some((i, pairs)) = popped else {
        return Reply::NilArray;
    };
    let pairs = pairs
        .into_iter()
        .map(|(m, s)| Reply::Array(vec![Reply::Bulk(m), Reply::Double(s)]))
        .collect();
    Reply::Array(vec![Reply::bulk(args[keys_at + i]), Reply::Array(pairs)])
}

fn mpop(ctx: &mut Ctx<'_, '_>, args: &[&[u8]], at: usize) -> Result<Reply, CmdError> {
    let parsed = MultiPop::parse(args, at, ["min", "max"])?;
    if at == 2 {
        // BZMPOP reads its timeout after the other arguments.
        let _timeout_ms = parse_timeout_secs(args[1])?;
    }
    let keys = &args[parsed.keys.clone()];
    let popped = ctx.ks.zmpop(keys, parsed.second_end, parsed.count)?;
    // BLOCK (BZMPOP): the nil array is the timeout reply; the RESP server waits instead.
    Ok(mpop_reply(args, parsed.keys.start, popped))
}

pub(super) fn zmpop_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    mpop(ctx, args, 1)
}

pub(super) fn bzmpop_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    mpop(ctx, args, 2)
}

fn bzpop(ctx: &mut Ctx<'_, '_>, args: &[&[u8]], max: bool) -> Result<Reply, CmdError> {
    let (timeout, keys) = args[1..].split_last().unwrap_or((&args[0], &[]));
    let _timeout_ms = parse_timeout_secs(timeout)?;
    let Some((i, pairs)) = ctx.ks.zmpop(keys, max, 1)? else {
        // BLOCK: the RESP server waits instead of this timeout reply.
        return Ok(Reply::NilArray);
    };
    let mut out = vec![Reply::bulk(keys[i])];
    for (member, score) in pairs {
        out.push(Reply::Bulk(member));
        out.push(Reply::Double(score));
    }
    Ok(Reply::Array(out))
}

pub(super) fn bzpopmin_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    bzpop(ctx, args, false)
}

pub(super) fn bzpopmax_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    bzpop(ctx, args, true)
}

/// `ZRANDMEMBER key [count [WITHSCORES]]`: the count is read before the key is looked up.
pub(super) fn zrandmember_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let Some(count) = args.get(2) else {
        return Ok(Reply::opt_bulk(ctx.ks.zrandmember(args[1])?.as_deref()));
    };
    let count = parse_random_count(count)?;
    let withscores = match args.get(3) {
        None => false,
        Some(opt) if args.len() == 4 && is(opt, "withscores") => true,
        Some(_) => return Err(CmdError::Syntax),
    };
    // Redis doubles the reply's length for the scores, so it halves the range.
    if withscores && count.unsigned_abs() > (i64::MAX / 2) as u64 {
        return Err(err("ERR value is out of range"));
    }
    let pairs = ctx.ks.zrandmember_count(args[1], count)?;
    Ok(pairs_reply(pairs, withscores, ctx.client.resp >= 3))
}

//! XCLAIM and XAUTOCLAIM: pending entries change owner, as Redis 7.0's t_stream.c does it
//! (its checks in its order, its error texts). A pending id whose entry was deleted from the
//! stream leaves the PEL instead (XAUTOCLAIM reports it in its third element).
//!
//! Keyspace events: only `xgroup-createconsumer`, when the claim made its consumer, as in
//! Redis (claiming itself announces nothing).

use super::group::{
    group_of, id_reply, no_key_or_group, notify_consumer_created, now, owned, shown, stream_mut,
    touch_consumer,
};
use super::{entry_reply, err, range_bound, strict_id};
use crate::engine::cmd::{is, parse_i64, Ctx};
use crate::engine::error::CmdError;
use crate::engine::types::stream::{Fields, Stream, StreamId};
use crate::resp::reply::Reply;

/// XCLAIM's options after its ids.
#[derive(Debug, Default)]
struct ClaimOptions {
    force: bool,
    just_id: bool,
    /// IDLE or TIME, as a delivery time.
    delivery_time_ms: Option<i64>,
    retry_count: Option<i64>,
    last_id: StreamId,
}

fn parse_claim_options(args: &[&[u8]], now: i64) -> Result<ClaimOptions, CmdError> {
    let mut o = ClaimOptions::default();
    let mut j = 0;
    let option_int = |arg: &[u8], text: &'static str| parse_i64(arg).map_err(|_| err(text));
    while j < args.len() {
        let more = j + 1 < args.len();
        let opt = args[j];
        if is(opt, "force") {
            o.force = true;
        } else if is(opt, "justid") {
            o.just_id = true;
        } else if is(opt, "idle") && more {
            j += 1;
            let idle = option_int(args[j], "ERR Invalid IDLE option argument for XCLAIM")?;
            o.delivery_time_ms = Some(now.wrapping_sub(idle));
        } else if is(opt, "time") && more {
            j += 1;
            o.delivery_time_ms = Some(option_int(
                args[j],
                "ERR Invalid TIME option argument for XCLAIM",
            )?);
        } else if is(opt, "retrycount") && more {
            j += 1;
            o.retry_count = Some(option_int(
                args[j],
                "ERR Invalid RETRYCOUNT option argument for XCLAIM",
            )?);
        } else if is(opt, "lastid") && more {
            j += 1;
            o.last_id = strict_id(args[j])?;
        } else {
            return Err(owned(format!(
                "ERR Unrecognized XCLAIM option '{}'",
                shown(opt)
            )));
        }
        j += 1;
    }
    Ok(o)
}

/// XCLAIM key group consumer min-idle-time id... [IDLE ms] [TIME ms] [RETRYCOUNT n]
/// [FORCE] [JUSTID] [LASTID id].
pub(super) fn xclaim(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let (key, group, consumer) = (args[1], args[2], args[3]);
    if group_of(ctx, key, group)?.is_none() {
        return Err(no_key_or_group(key, group));
    }
    let min_idle = parse_i64(args[4])
        .map_err(|_| err("ERR Invalid min-idle-time argument for XCLAIM"))?
        .max(0);
    // The ids run up to the first argument that is not one; options follow.
    let ids: Vec<StreamId> = args[5..].iter().map_while(|a| strict_id(a).ok()).collect();
    let now = now(ctx);
    let opts = parse_claim_options(&args[5 + ids.len()..], now)?;
    // A bogus time (negative, in the future) is taken as now, as Redis does.
    let delivery_time = opts
        .delivery_time_ms
        .filter(|t| (0..=now).contains(t))
        .unwrap_or(now);
    let retry_count = opts.retry_count.and_then(|n| u64::try_from(n).ok());
    let s = stream_mut(ctx, key)?;
    let Stream {
        entries, groups, ..
    } = s;
    let Some(g) = groups.get_mut(group) else {
        return Err(no_key_or_group(key, group));
    };
    if opts.last_id > g.last_delivered {
        g.last_delivered = opts.last_id;
    }
    let mut out = Vec::new();
    let mut consumer_seen = false;
    let mut created = false;
    for id in ids {
        let Some(fields) = entries.get(&id) else {
            // Pending but deleted from the stream: no longer pending.
            g.ack(id);
            continue;
        };
        match g.pending.get(&id) {
            None if !opts.force => continue,
            Some(p) if min_idle > 0 && now.wrapping_sub(p.delivery_time_ms) < min_idle => continue,
            _ => {}
        }
        if !consumer_seen {
            created = touch_consumer(g, consumer, now);
            consumer_seen = true;
        }
        g.claim(id, consumer, delivery_time, retry_count, opts.just_id);
        out.push(claimed_reply(id, fields, opts.just_id));
    }
    notify_consumer_created(ctx, key, created);
    Ok(Reply::Array(out))
}

fn claimed_reply(id: StreamId, fields: &Fields, just_id: bool) -> Reply {
    if just_id {
        id_reply(id)
    } else {
        entry_reply((id, fields.clone()))
    }
}

// ---- XAUTOCLAIM ----

/// Redis's cap on XAUTOCLAIM's COUNT (`LONG_MAX / max(sizeof(streamID), 10)`).
const AUTOCLAIM_MAX_COUNT: i64 = i64::MAX / 16;
/// XAUTOCLAIM looks at most this many pending entries per entry it may claim.
const AUTOCLAIM_ATTEMPTS_FACTOR: u64 = 10;

/// XAUTOCLAIM key group consumer min-idle-time start [COUNT n] [JUSTID]: claims idle
/// pending entries from `start` on; replies the next cursor (0-0 at the end), the claimed
/// entries, and the pending ids found deleted from the stream (dropped from the PEL).
pub(super) fn xautoclaim(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let (key, group, consumer) = (args[1], args[2], args[3]);
    let min_idle = parse_i64(args[4])
        .map_err(|_| err("ERR Invalid min-idle-time argument for XAUTOCLAIM"))?
        .max(0);
    let start = range_bound(args[5], true)?;
    let mut count: u64 = 100;
    let mut just_id = false;
    let mut j = 6;
    while j < args.len() {
        if is(args[j], "count") && j + 1 < args.len() {
            let n = parse_i64(args[j + 1])
                .ok()
                .filter(|n| (1..=AUTOCLAIM_MAX_COUNT).contains(n))
                .ok_or(err("ERR COUNT must be > 0"))?;
            count = n as u64;
            j += 1;
        } else if is(args[j], "justid") {
            just_id = true;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    if group_of(ctx, key, group)?.is_none() {
        return Err(no_key_or_group(key, group));
    }
    let now = now(ctx);
    let s = stream_mut(ctx, key)?;
    let Stream {
        entries, groups, ..
    } = s;
    let Some(g) = groups.get_mut(group) else {
        return Err(no_key_or_group(key, group));
    };
    let mut attempts = count.saturating_mul(AUTOCLAIM_ATTEMPTS_FACTOR);
    let mut cursor = Some(start);
    let mut claimed = Vec::new();
    let mut deleted = Vec::new();
    let mut consumer_seen = false;
    let mut created = false;
    while attempts > 0 && count > 0 {
        attempts -= 1;
        let next = cursor.and_then(|c| g.pending.range(c..).next().map(|(id, p)| (*id, p)));
        let Some((id, p)) = next else {
            cursor = None;
            break;
        };
        cursor = id.next();
        let Some(fields) = entries.get(&id) else {
            g.ack(id);
            deleted.push(id_reply(id));
            count -= 1;
            continue;
        };
        if min_idle > 0 && now.wrapping_sub(p.delivery_time_ms) < min_idle {
            continue;
        }
        if !consumer_seen {
            created = touch_consumer(g, consumer, now);
            consumer_seen = true;
        }
        g.claim(id, consumer, now, None, just_id);
        claimed.push(claimed_reply(id, fields, just_id));
        count -= 1;
    }
    let next = cursor
        .and_then(|c| g.pending.range(c..).next().map(|(id, _)| *id))
        .unwrap_or(StreamId::MIN);
    notify_consumer_created(ctx, key, created);
    Ok(Reply::Array(vec![
        id_reply(next),
        Reply::Array(claimed),
        Reply::Array(deleted),
    ]))
}

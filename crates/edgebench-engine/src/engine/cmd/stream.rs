//! Streams: XADD (NOMKSTREAM, MAXLEN/MINID with `=`/`~` and LIMIT), XLEN, XRANGE,
//! XREVRANGE, XREAD (COUNT, BLOCK, STREAMS, `$`), XDEL, XTRIM here; consumer groups
//! (XGROUP, XREADGROUP, XACK, XPENDING, XSETID) in [`group`], XCLAIM and XAUTOCLAIM in
//! [`claim`], XINFO in [`info`].
//!
//! The typed operations (`impl Locked`) are the Rust API; the `run` functions parse
//! arguments as Redis 7.0 does (t_stream.c), errors in Redis's order. Stream ids parse with
//! Redis's own quirks (`string2ull`: `+5`, ` 5` and `01` are accepted as 5, 5 and 1).
//!
//! `*` ids come from the engine's clock (the command's `now`), so a caller with a manual
//! clock gets deterministic ids. An emptied stream stays a key, as in Redis.
//!
//! Keyspace events, as Redis 7.0's t_stream.c emits them (class `t`): `xadd`, then `xtrim`
//! when its trimming removed entries; `xdel` and `xtrim` when they removed something; the
//! consumer-group commands' own (see [`group`] and [`claim`]).
//!
//! Blocking: XREAD with BLOCK replies at once, as without BLOCK, when it has data, and with
//! the timeout reply (nil) when it has none; the RESP server adds the waiting (`// BLOCK:`).

use std::borrow::Cow;

mod claim;
mod group;
mod info;

use group::BlockedRead;

use super::{is, parse_i64, spec, Ctx, KeySpec, Spec, ONE_KEY};
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::Locked;
pub use crate::engine::types::options::{TrimSpec, XaddId};
use crate::engine::types::stream::{Fields, NodeLimits, StreamId, Trim};
use crate::resp::reply::Reply;

/// The stream commands (arity and keys as Redis 7.0's COMMAND INFO).
pub const COMMANDS: &[Spec] = &[
    spec("xadd", -5, ONE_KEY, true, xadd),
    spec("xlen", 2, ONE_KEY, false, xlen),
    spec("xrange", -4, ONE_KEY, false, xrange),
    spec("xrevrange", -4, ONE_KEY, false, xrevrange),
    spec("xread", -4, KeySpec::Custom(xread_keys), false, xread),
    spec("xdel", -3, ONE_KEY, true, xdel),
    spec("xtrim", -4, ONE_KEY, true, xtrim),
    spec("xgroup", -2, SECOND_ARG, true, group::xgroup),
    spec(
        "xreadgroup",
        -7,
        KeySpec::Custom(xread_keys),
        true,
        group::xreadgroup,
    ),
    spec("xack", -4, ONE_KEY, true, group::xack),
    spec("xpending", -3, ONE_KEY, false, group::xpending),
    spec("xclaim", -6, ONE_KEY, true, claim::xclaim),
    spec("xautoclaim", -6, ONE_KEY, true, claim::xautoclaim),
    spec("xsetid", -3, ONE_KEY, true, group::xsetid),
    spec("xinfo", -2, SECOND_ARG, false, info::xinfo),
];

/// XGROUP's and XINFO's key: the argument after the subcommand (none for HELP). Custom
/// rather than a range because Redis's table gives these containers no key positions
/// (their subcommands have them).
const SECOND_ARG: KeySpec = KeySpec::Custom(subcommand_key);

fn subcommand_key(args: &[&[u8]]) -> Vec<usize> {
    if args.len() > 2 {
        vec![2]
    } else {
        Vec::new()
    }
}

/// Entries as XRANGE returns them.
pub type Entries = Vec<(StreamId, Fields)>;

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

const INVALID_ID: &str = "ERR Invalid stream ID specified as stream command argument";
const NOT_ABOVE_TOP: &str =
    "ERR The ID specified in XADD is equal or smaller than the target stream top item";
const EXHAUSTED: &str =
    "ERR The stream has exhausted the last possible ID, unable to add more items";

impl Locked<'_> {
    /// XADD: appends `fields` under the id `id` asks for, then trims per `trim`. Returns the
    /// new id; `None` when `no_mkstream` and the key is missing.
    pub fn xadd(
        &mut self,
        key: &[u8],
        id: XaddId,
        fields: Fields,
        no_mkstream: bool,
        trim: Option<TrimSpec>,
    ) -> Result<Option<StreamId>, CmdError> {
        if id == XaddId::Explicit(StreamId::MIN) {
            return Err(err("ERR The ID specified in XADD must be greater than 0-0"));
        }
        if self.get_stream(key)?.is_none() && no_mkstream {
            return Ok(None);
        }
        let now = self.now_ms();
        let nodes = self.stream_nodes();
        let stream = self.stream_or_default(key)?;
        let last = stream.last_id;
        if last == StreamId::MAX {
            return Err(err(EXHAUSTED));
        }
        let new_id = match id {
            XaddId::Auto if now > last.ms => StreamId::new(now, 0),
            XaddId::Auto => last.next().ok_or(err(EXHAUSTED))?,
            XaddId::AutoSeq(ms) if ms == last.ms => last
                .next()
                .filter(|n| n.ms == ms)
                .ok_or(err(NOT_ABOVE_TOP))?,
            XaddId::AutoSeq(ms) => StreamId::new(ms, 0),
            XaddId::Explicit(id) => id,
        };
        if new_id <= last {
            return Err(err(NOT_ABOVE_TOP));
        }
        stream.append(new_id, fields, nodes);
        let trimmed = trim.map_or(0, |t| stream.trim(t.how, t.approx, t.limit));
        self.notify(Classes::STREAM, "xadd", key);
        if trimmed > 0 {
            self.notify(Classes::STREAM, "xtrim", key);
        }
        Ok(Some(new_id))
    }

    /// XLEN (0 when missing).
    pub fn xlen(&mut self, key: &[u8]) -> Result<usize, CmdError> {
        Ok(self.get_stream(key)?.map_or(0, |s| s.len()))
    }

    /// XRANGE (`rev` = XREVRANGE, highest first): entries with `start <= id <= end`, at most
    /// `count` (`None` = all).
    pub fn xrange(
        &mut self,
        key: &[u8],
        start: StreamId,
        end: StreamId,
        count: Option<usize>,
        rev: bool,
    ) -> Result<Entries, CmdError> {
        let Some(stream) = self.get_stream(key)? else {
            return Ok(Vec::new());
        };
        let count = count.unwrap_or(usize::MAX);
        let range = stream.range(start, end);
        let clone = |(id, fields): (&StreamId, &Fields)| (*id, fields.clone());
        Ok(if rev {
            range.rev().take(count).map(clone).collect()
        } else {
            range.take(count).map(clone).collect()
        })
    }

    /// The last id added to the stream at `key` (XREAD's `$`); 0-0 when missing.
    pub fn xlast_id(&mut self, key: &[u8]) -> Result<StreamId, CmdError> {
        Ok(self.get_stream(key)?.map_or(StreamId::MIN, |s| s.last_id))
    }

    /// XREAD without blocking: for each (key, id), the entries above `id`, at most `count`
    /// per stream (0 = all). Streams with nothing new are left out. WRONGTYPE if any key is
    /// another type, checked before anything is read.
    pub fn xread<'k>(
        &mut self,
        streams: &[(&'k [u8], StreamId)],
        count: usize,
    ) -> Result<Vec<(&'k [u8], Entries)>, CmdError> {
        for (key, _) in streams {
            self.get_stream(key)?;
        }
        let count = if count == 0 { None } else { Some(count) };
        let mut out = Vec::new();
        for &(key, after) in streams {
            let Some(stream) = self.get_stream(key)? else {
                continue;
            };
            let newer = stream.last_entry_id().is_some_and(|last| last > after);
            let Some(start) = after.next().filter(|_| newer) else {
                continue;
            };
            out.push((key, self.xrange(key, start, StreamId::MAX, count, false)?));
        }
        Ok(out)
    }

    /// XDEL: returns how many of `ids` were there.
    pub fn xdel(&mut self, key: &[u8], ids: &[StreamId]) -> Result<usize, CmdError> {
        let Some(stream) = self.get_stream(key)? else {
            return Ok(0);
        };
        // A no-op is not a write (WATCH).
        if !ids.iter().any(|id| stream.entries.contains_key(id)) {
            return Ok(0);
        }
        let Some(stream) = self.get_stream_mut(key)? else {
            return Ok(0);
        };
        let deleted = ids.iter().filter(|id| stream.delete(**id)).count();
        if deleted > 0 {
            self.notify(Classes::STREAM, "xdel", key);
        }
        Ok(deleted)
    }

    /// XTRIM: returns how many entries were removed.
    pub fn xtrim(&mut self, key: &[u8], trim: TrimSpec) -> Result<u64, CmdError> {
        let Some(stream) = self.get_stream(key)? else {
            return Ok(0);
        };
        if stream.trim_count(trim.how, trim.approx, trim.limit) == 0 {
            return Ok(0);
        }
        let Some(stream) = self.get_stream_mut(key)? else {
            return Ok(0);
        };
        let trimmed = stream.trim(trim.how, trim.approx, trim.limit);
        if trimmed > 0 {
            self.notify(Classes::STREAM, "xtrim", key);
        }
        Ok(trimmed)
    }
}

// ---- argument parsing ----

/// Redis's `string2ull`: a strict `string2ll` that is not negative, else C's `strtoull`
/// (leading spaces, a sign, leading zeros; `-n` wraps around).
fn string2ull(s: &[u8]) -> Option<u64> {
    if let Ok(v) = parse_i64(s) {
        return u64::try_from(v).ok();
    }
    // C's isspace: space, \t, \n, \v, \f, \r.
    let skip = s
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .count();
    let t = &s[skip..];
    let (negative, digits) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = digits.iter().try_fold(0u64, |acc, d| {
        acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    })?;
    Some(if negative { v.wrapping_neg() } else { v })
}

/// A parsed id argument: the id, and whether the sequence was given (false for `<ms>-*`).
fn parse_id(
    arg: &[u8],
    missing_seq: u64,
    strict: bool,
    seq_star: bool,
) -> Result<(StreamId, bool), CmdError> {
    if arg.len() > 127 {
        return Err(err(INVALID_ID));
    }
    // Redis copies the argument into a C string: it ends at the first NUL.
    let arg = arg.split(|&b| b == 0).next().unwrap_or(arg);
    match arg {
        b"-" | b"+" if strict => return Err(err(INVALID_ID)),
        b"-" => return Ok((StreamId::MIN, true)),
        b"+" => return Ok((StreamId::MAX, true)),
        _ => {}
    }
    let (ms, seq) = match arg.iter().position(|&b| b == b'-') {
        Some(dash) => (&arg[..dash], Some(&arg[dash + 1..])),
        None => (arg, None),
    };
    let ms = string2ull(ms).ok_or(err(INVALID_ID))?;
    match seq {
        Some(b"*") if seq_star => Ok((StreamId::new(ms, 0), false)),
        Some(seq) => Ok((
            StreamId::new(ms, string2ull(seq).ok_or(err(INVALID_ID))?),
            true,
        )),
        None => Ok((StreamId::new(ms, missing_seq), true)),
    }
}

/// A strict id (no `-`, `+`): XDEL, XREAD, MINID.
fn strict_id(arg: &[u8]) -> Result<StreamId, CmdError> {
    parse_id(arg, 0, true, false).map(|(id, _)| id)
}

/// An XRANGE bound: `-`, `+`, an id, or `(id` (exclusive, made inclusive here).
fn range_bound(arg: &[u8], start: bool) -> Result<StreamId, CmdError> {
    let missing_seq = if start { 0 } else { u64::MAX };
    match arg.strip_prefix(b"(").filter(|_| arg.len() > 1) {
        Some(id) => {
            let (id, _) = parse_id(id, missing_seq, true, false)?;
            if start {
                id.next()
                    .ok_or(err("ERR invalid start ID for the interval"))
            } else {
                id.prev().ok_or(err("ERR invalid end ID for the interval"))
            }
        }
        None => parse_id(arg, missing_seq, false, false).map(|(id, _)| id),
    }
}

/// XADD's and XTRIM's options (t_stream.c `streamParseAddOrTrimArgsOrReply`).
struct AddTrimArgs {
    trim: Option<TrimSpec>,
    id: XaddId,
    no_mkstream: bool,
    /// The argument after the options (XADD: the id's position, or where it would be).
    end: usize,
}

/// `nodes`: the node limits, whose entries decide the LIMIT `~` gets when none is given.
fn parse_add_or_trim(
    args: &[&[u8]],
    xadd: bool,
    nodes: NodeLimits,
) -> Result<AddTrimArgs, CmdError> {
    const BOTH: &str =
        "ERR syntax error, MAXLEN and MINID options at the same time are not compatible";
    let mut how: Option<Trim> = None;
    let mut approx = false;
    let mut limit: Option<u64> = None;
    let mut id = XaddId::Auto;
    let mut no_mkstream = false;
    let mut i = 2;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = args[i];
        if xadd && opt == b"*" {
            break;
        } else if (is(opt, "maxlen") || is(opt, "minid")) && more > 0 {
            if how.is_some() {
                return Err(err(BOTH));
            }
            approx = false;
            if more >= 2 && args[i + 1] == b"~" {
                approx = true;
                i += 1;
            } else if more >= 2 && args[i + 1] == b"=" {
                i += 1;
            }
            how = Some(if is(opt, "maxlen") {
                let max = parse_i64(args[i + 1])?;
                Trim::MaxLen(
                    u64::try_from(max).map_err(|_| err("ERR The MAXLEN argument must be >= 0."))?,
                )
            } else {
                Trim::MinId(strict_id(args[i + 1])?)
            });
            i += 1;
        } else if is(opt, "limit") && more > 0 {
            let n = parse_i64(args[i + 1])?;
            limit =
                Some(u64::try_from(n).map_err(|_| err("ERR The LIMIT argument must be >= 0."))?);
            i += 1;
        } else if xadd && is(opt, "nomkstream") {
            no_mkstream = true;
        } else if xadd {
            let (parsed, seq_given) = parse_id(opt, 0, true, true)?;
            id = if seq_given {
                XaddId::Explicit(parsed)
            } else {
                XaddId::AutoSeq(parsed.ms)
            };
            break;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    let limit = match limit {
        Some(_) if how.is_none() => {
            return Err(err(
                "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy",
            ))
        }
        Some(_) if !approx => {
            return Err(err(
                "ERR syntax error, LIMIT cannot be used without the special ~ option",
            ))
        }
        Some(n) => n,
        None if approx => nodes.approx_limit(),
        None => 0,
    };
    Ok(AddTrimArgs {
        trim: how.map(|how| TrimSpec { how, approx, limit }),
        id,
        no_mkstream,
        end: i,
    })
}

/// XREAD's and XREADGROUP's arguments, before any key is read.
struct XreadArgs<'a> {
    /// BLOCK's timeout in ms (0 = forever), if given.
    block_ms: Option<u64>,
    /// COUNT (0 = all).
    count: usize,
    /// Index of the first key; as many ids follow the keys.
    first_key: usize,
    streams: usize,
    /// XREADGROUP's GROUP: the group and the consumer.
    group: Option<(&'a [u8], &'a [u8])>,
    /// XREADGROUP's NOACK.
    noack: bool,
}

/// Parses XREAD's arguments, or XREADGROUP's when `args[0]` is that (Redis tells them
/// apart by the name's length).
fn parse_xread<'a>(args: &[&'a [u8]]) -> Result<XreadArgs<'a>, CmdError> {
    let readgroup = args.first().is_some_and(|name| name.len() == 10);
    let mut parsed = XreadArgs {
        block_ms: None,
        count: 0,
        first_key: 0,
        streams: 0,
        group: None,
        noack: false,
    };
    let mut i = 1;
    while i < args.len() {
        let more = args.len() - 1 - i;
        let opt = args[i];
        if is(opt, "block") && more > 0 {
            i += 1;
            let ms = parse_i64(args[i])
                .map_err(|_| err("ERR timeout is not an integer or out of range"))?;
            parsed.block_ms = Some(u64::try_from(ms).map_err(|_| err("ERR timeout is negative"))?);
        } else if is(opt, "count") && more > 0 {
            i += 1;
            let n = parse_i64(args[i])?;
            parsed.count = usize::try_from(n.max(0)).unwrap_or(usize::MAX);
        } else if is(opt, "streams") && more > 0 {
            let n = args.len() - (i + 1);
            if !n.is_multiple_of(2) {
                return Err(err(
                    "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' \
                     must be specified.",
                ));
            }
            parsed.first_key = i + 1;
            parsed.streams = n / 2;
            if readgroup && parsed.group.is_none() {
                return Err(err("ERR Missing GROUP option for XREADGROUP"));
            }
            return Ok(parsed);
        } else if is(opt, "group") && more >= 2 {
            if !readgroup {
                return Err(err(
                    "ERR The GROUP option is only supported by XREADGROUP. You called XREAD \
                     instead.",
                ));
            }
            parsed.group = Some((args[i + 1], args[i + 2]));
            i += 2;
        } else if is(opt, "noack") {
            if !readgroup {
                return Err(err(
                    "ERR The NOACK option is only supported by XREADGROUP. You called XREAD \
                     instead.",
                ));
            }
            parsed.noack = true;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    // STREAMS is mandatory.
    Err(CmdError::Syntax)
}

/// XREAD BLOCK's parameters, for a transport that parks the client (the RESP server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XreadBlock {
    /// BLOCK's timeout in ms; 0 = forever.
    pub timeout_ms: u64,
    /// The indices of the key arguments; as many ids follow them.
    pub keys: std::ops::Range<usize>,
}

/// XREAD's BLOCK parameters, when `args` parse and give BLOCK; `None` otherwise (XREAD then
/// replies at once, error or not). The engine itself never waits: see the module doc.
pub fn xread_block(args: &[&[u8]]) -> Option<XreadBlock> {
    let parsed = parse_xread(args).ok()?;
    Some(XreadBlock {
        timeout_ms: parsed.block_ms?,
        keys: parsed.first_key..parsed.first_key + parsed.streams,
    })
}

/// Serves a blocked XREADGROUP (`args`: `XREADGROUP GROUP g c [COUNT n] [NOACK] STREAMS
/// key >`, one key) from its key, as Redis serves a client blocked on a written key:
/// `None` while there is nothing new; else the reply (the entries, or Redis's error when
/// the group or the stream went away), which ends the wait.
pub fn serve_blocked_readgroup(
    engine: &crate::engine::Engine,
    client: &mut crate::engine::Client,
    args: &[&[u8]],
) -> Option<Reply> {
    let key = xread_keys(args).first().map(|&i| args[i])?;
    let ks = engine
        .db(client.db)
        .lock(std::iter::once(key), engine.now_ms());
    let mut ctx = Ctx { engine, client, ks };
    let mark = super::propagate::mark();
    match group::serve_blocked(&mut ctx, args) {
        BlockedRead::Waiting => None,
        BlockedRead::Done(reply) => {
            if let Some((index, spec)) = super::lookup_indexed(b"xreadgroup") {
                super::propagate::after(&mut ctx, spec, args, &reply, mark);
                // An error that ends the wait (NOGROUP: the group went) counts as the
                // call's failure, as Redis's `updateStatsOnUnblock` counts it.
                super::count_error(engine, &reply, Some(index), false);
            }
            Some(reply)
        }
    }
}

/// XREAD's keys: those after STREAMS, found by the same parse `xread` runs (so the shards
/// locked are exactly the keys read); none when the arguments are invalid.
fn xread_keys(args: &[&[u8]]) -> Vec<usize> {
    parse_xread(args).map_or_else(
        |_| Vec::new(),
        |p| (p.first_key..p.first_key + p.streams).collect(),
    )
}

// ---- replies ----

fn entry_reply((id, fields): (StreamId, Fields)) -> Reply {
    let flat = fields
        .into_iter()
        .flat_map(|(f, v)| [Reply::Bulk(f), Reply::Bulk(v)])
        .collect();
    Reply::Array(vec![
        Reply::Bulk(id.to_string().into_bytes()),
        Reply::Array(flat),
    ])
}

fn entries_reply(entries: Entries) -> Reply {
    Reply::Array(entries.into_iter().map(entry_reply).collect())
}

// ---- commands ----

fn xadd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let parsed = parse_add_or_trim(args, true, ctx.ks.stream_nodes())?;
    let fields_at = parsed.end + 1;
    let n = args.len().saturating_sub(fields_at);
    if n < 2 || n % 2 == 1 {
        return Err(CmdError::Arity("xadd".into()));
    }
    let fields: Fields = args[fields_at..]
        .chunks_exact(2)
        .map(|fv| (fv[0].to_vec(), fv[1].to_vec()))
        .collect();
    let id = ctx
        .ks
        .xadd(args[1], parsed.id, fields, parsed.no_mkstream, parsed.trim)?;
    Ok(id.map_or(Reply::Nil, |id| Reply::Bulk(id.to_string().into_bytes())))
}

fn xlen(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let n = ctx.ks.xlen(args[1])?;
    Ok(Reply::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

fn range_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]], rev: bool) -> Result<Reply, CmdError> {
    let (start, end) = if rev {
        (args[3], args[2])
    } else {
        (args[2], args[3])
    };
    let start = range_bound(start, true)?;
    let end = range_bound(end, false)?;
    let mut count: Option<usize> = None;
    let mut j = 4;
    while j < args.len() {
        if is(args[j], "count") && j + 1 < args.len() {
            let n = parse_i64(args[j + 1])?;
            count = Some(usize::try_from(n.max(0)).unwrap_or(usize::MAX));
            j += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    if ctx.ks.get_stream(args[1])?.is_none() {
        return Ok(Reply::Array(Vec::new()));
    }
    if count == Some(0) {
        return Ok(Reply::NilArray);
    }
    Ok(entries_reply(
        ctx.ks.xrange(args[1], start, end, count, rev)?,
    ))
}

fn xrange(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    range_cmd(ctx, args, false)
}

fn xrevrange(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    range_cmd(ctx, args, true)
}

fn xread(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let parsed = parse_xread(args)?;
    let keys = &args[parsed.first_key..parsed.first_key + parsed.streams];
    let ids = &args[parsed.first_key + parsed.streams..];
    let mut streams = Vec::with_capacity(keys.len());
    for (&key, &id) in keys.iter().zip(ids) {
        // Redis checks each key's type as it parses that key's id.
        let last = ctx.ks.xlast_id(key)?;
        let after = match id {
            b"$" => last,
            b">" => {
                return Err(err(
                    "ERR The > ID can be specified only when calling XREADGROUP using the \
                     GROUP <group> <consumer> option.",
                ))
            }
            _ => strict_id(id)?,
        };
        streams.push((key, after));
    }
    let found = ctx.ks.xread(&streams, parsed.count)?;
    if found.is_empty() {
        // BLOCK: with `parsed.block_ms` set, the RESP server should park the client on
        // `keys` (each waiting for ids above its `after`) until the timeout; for now this is
        // the timeout reply.
        return Ok(Reply::NilArray);
    }
    let per_stream = found
        .into_iter()
        .map(|(key, entries)| (Reply::bulk(key), entries_reply(entries)));
    Ok(if ctx.client.resp >= 3 {
        Reply::Map(per_stream.collect())
    } else {
        // RESP2: an array of [key, entries] pairs (not a flattened map).
        Reply::Array(per_stream.map(|(k, v)| Reply::Array(vec![k, v])).collect())
    })
}

fn xdel(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    // The key (0, WRONGTYPE) before the ids.
    if ctx.ks.get_stream(args[1])?.is_none() {
        return Ok(Reply::Int(0));
    }
    let ids = args[2..]
        .iter()
        .map(|a| strict_id(a))
        .collect::<Result<Vec<_>, _>>()?;
    let n = ctx.ks.xdel(args[1], &ids)?;
    Ok(Reply::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

fn xtrim(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let parsed = parse_add_or_trim(args, false, ctx.ks.stream_nodes())?;
    let Some(trim) = parsed.trim else {
        // Unreachable: XTRIM's options are all trimming ones and arity demands one.
        return Err(CmdError::Syntax);
    };
    let n = ctx.ks.xtrim(args[1], trim)?;
    Ok(Reply::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_with_redis_quirks() {
        let id = |a: &[u8]| parse_id(a, 0, false, false).map(|(id, _)| id);
        assert_eq!(id(b"5-3"), Ok(StreamId::new(5, 3)));
        assert_eq!(id(b"5"), Ok(StreamId::new(5, 0)));
        assert_eq!(id(b"+5"), Ok(StreamId::new(5, 0)));
        assert_eq!(id(b" 5"), Ok(StreamId::new(5, 0)));
        assert_eq!(id(b"05-01"), Ok(StreamId::new(5, 1)));
        assert_eq!(id(b"1--0"), Ok(StreamId::new(1, 0)));
        assert_eq!(id(b"-"), Ok(StreamId::MIN));
        assert_eq!(id(b"+"), Ok(StreamId::MAX));
        assert_eq!(
            id(b"18446744073709551615-18446744073709551615"),
            Ok(StreamId::MAX)
        );
        for bad in [
            &b"-5"[..],
            b"abc",
            b"1-",
            b"1-2-3",
            b"1--2",
            b"18446744073709551616",
            b"",
            b"5 ",
        ] {
            assert_eq!(id(bad), Err(err(INVALID_ID)), "{bad:?}");
        }
        assert_eq!(
            parse_id(b"7-*", 0, true, true),
            Ok((StreamId::new(7, 0), false))
        );
        assert_eq!(strict_id(b"-"), Err(err(INVALID_ID)));
        assert_eq!(range_bound(b"(5-3", true), Ok(StreamId::new(5, 4)));
        assert_eq!(
            range_bound(b"(5", false),
            Ok(StreamId::new(5, u64::MAX - 1))
        );
        assert_eq!(range_bound(b"5", false), Ok(StreamId::new(5, u64::MAX)));
    }

    #[test]
    fn xread_keys_follow_streams() {
        let args: [&[u8]; 8] = [
            b"XREAD", b"COUNT", b"2", b"BLOCK", b"0", b"STREAMS", b"a", b"0",
        ];
        assert_eq!(xread_keys(&args[..]), vec![6]);
        let args: [&[u8]; 9] = [
            b"XREAD", b"COUNT", b"streams", b"STREAMS", b"a", b"b", b"0", b"0", b"x",
        ];
        assert_eq!(xread_keys(&args[..]), Vec::<usize>::new());
        let args: [&[u8]; 8] = [b"XREAD", b"count", b"5", b"STREAMS", b"a", b"b", b"0", b"$"];
        assert_eq!(xread_keys(&args[..]), vec![4, 5]);
        // XREADGROUP: GROUP's two names are not keys; without GROUP nothing is locked.
        let args: [&[u8]; 9] = [
            b"XREADGROUP",
            b"GROUP",
            b"streams",
            b"c",
            b"NOACK",
            b"STREAMS",
            b"a",
            b"b",
            b">",
        ];
        assert_eq!(xread_keys(&args[..]), Vec::<usize>::new());
        let args: [&[u8]; 10] = [
            b"xreadgroup",
            b"GROUP",
            b"streams",
            b"c",
            b"NOACK",
            b"STREAMS",
            b"a",
            b"b",
            b">",
            b">",
        ];
        assert_eq!(xread_keys(&args[..]), vec![6, 7]);
        let args: [&[u8]; 7] = [b"XREADGROUP", b"COUNT", b"1", b"STREAMS", b"a", b">", b"x"];
        assert_eq!(xread_keys(&args[..]), Vec::<usize>::new());
    }
}

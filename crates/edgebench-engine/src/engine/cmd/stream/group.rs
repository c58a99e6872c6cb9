//! Consumer groups: XGROUP (CREATE, SETID, DESTROY, CREATECONSUMER, DELCONSUMER, HELP),
//! XREADGROUP, XACK, XPENDING and XSETID (XCLAIM and XAUTOCLAIM in [`super::claim`]),
//! parsed and answered as Redis 7.0's t_stream.c does (its checks in its order, its error
//! texts); the helpers the group commands share.
//!
//! Group state lives in the stream value ([`crate::engine::types::stream::groups`]), so DEL,
//! RENAME and COPY carry or drop it with the key. Times (delivery, seen) come from the
//! engine's clock through the command's `now`.
//!
//! Keyspace events (class `t`), as Redis 7.0 emits them: `xgroup-create`, `xgroup-setid`,
//! `xgroup-destroy` and `xgroup-delconsumer` when they changed something, `xsetid`, and
//! `xgroup-createconsumer` wherever a consumer comes to be: XGROUP CREATECONSUMER, and the
//! first XREADGROUP, XCLAIM or XAUTOCLAIM that names it.
//!
//! Allocation is bounded by the data, never by a request's numbers: COUNT only limits a
//! walk over entries or pending ids that exist.

use super::{entry_reply, err, parse_id, parse_xread, range_bound, strict_id};
use crate::engine::cmd::server::{help, sub_arity, unknown_subcommand};
use crate::engine::cmd::{is, parse_i64, Ctx};
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::{Entry, Value};
use crate::engine::types::stream::{ConsumerGroup, Stream, StreamId};
use crate::resp::reply::Reply;

/// An argument in an error text, as Redis's `%s` prints it (up to a NUL; line breaks
/// become spaces, as its error replies never hold one).
pub(super) fn shown(arg: &[u8]) -> String {
    let arg = arg.split(|&b| b == 0).next().unwrap_or(arg);
    String::from_utf8_lossy(arg).replace(['\r', '\n'], " ")
}

pub(super) fn owned(text: String) -> CmdError {
    CmdError::Other(text.into())
}

/// `ERR unknown subcommand or wrong number of arguments for 'x'. Try XGROUP HELP.`
pub(super) fn sub_syntax(args: &[&[u8]]) -> CmdError {
    let sub = &args[1][..args[1].len().min(128)];
    owned(format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
        shown(sub),
        shown(args[0]).to_uppercase()
    ))
}

/// The NOGROUP error of XGROUP and XINFO CONSUMERS.
pub(super) fn no_such_group(group: &[u8], key: &[u8]) -> CmdError {
    owned(format!(
        "NOGROUP No such consumer group '{}' for key name '{}'",
        shown(group),
        shown(key)
    ))
}

/// The NOGROUP error of XPENDING, XCLAIM and XAUTOCLAIM.
pub(super) fn no_key_or_group(key: &[u8], group: &[u8]) -> CmdError {
    owned(format!(
        "NOGROUP No such key '{}' or consumer group '{}'",
        shown(key),
        shown(group)
    ))
}

pub(super) fn int(n: impl TryInto<i64>) -> Reply {
    Reply::Int(n.try_into().unwrap_or(i64::MAX))
}

pub(super) fn id_reply(id: StreamId) -> Reply {
    Reply::Bulk(id.to_string().into_bytes())
}

pub(super) fn now(ctx: &Ctx<'_, '_>) -> i64 {
    i64::try_from(ctx.ks.now_ms()).unwrap_or(i64::MAX)
}

/// The group `group` of the stream at `key`, read-only; `Ok(None)` when the key or the
/// group is missing, WRONGTYPE for another type.
pub(super) fn group_of<'a>(
    ctx: &'a mut Ctx<'_, '_>,
    key: &[u8],
    group: &[u8],
) -> Result<Option<&'a ConsumerGroup>, CmdError> {
    Ok(ctx.ks.get_stream(key)?.and_then(|s| s.groups.get(group)))
}

/// The stream at `key` for a group-state write, once a check found it there. Redis
/// announces these writes to neither WATCH nor blocked clients (t_stream.c calls no
/// `signalModifiedKey` for them), so neither does this.
pub(super) fn stream_mut<'a>(
    ctx: &'a mut Ctx<'_, '_>,
    key: &[u8],
) -> Result<&'a mut Stream, CmdError> {
    match ctx.ks.get_mut_quiet(key) {
        Some(Entry {
            value: Value::Stream(s),
            ..
        }) => Ok(s),
        Some(_) => Err(CmdError::WrongType),
        None => Err(CmdError::NoSuchKey),
    }
}

/// Looks consumer `name` up as a read or a claim does, creating it when missing (seen now
/// either way); whether it was created, which the caller announces as
/// `xgroup-createconsumer` once it lets go of the stream.
pub(super) fn touch_consumer(g: &mut ConsumerGroup, name: &[u8], now: i64) -> bool {
    let created = !g.consumers.contains_key(name);
    g.touch_consumer(name, now);
    created
}

/// Announces a consumer a read or a claim created (see [`touch_consumer`]).
pub(super) fn notify_consumer_created(ctx: &Ctx<'_, '_>, key: &[u8], created: bool) {
    if created {
        ctx.ks.notify(Classes::STREAM, "xgroup-createconsumer", key);
    }
}

/// Wakes the clients blocked on `key` without touching it for WATCH: what Redis's
/// `signalKeyAsReady` does after XGROUP DESTROY, so blocked XREADGROUPs get NOGROUP.
fn signal_ready(ctx: &Ctx<'_, '_>, key: &[u8]) {
    let db = ctx.engine.db(ctx.client.db);
    db.blocked().written(db, key);
}

// ---- XGROUP ----

const XGROUP_HELP: &[&str] = &[
    "CREATE <key> <groupname> <id|$> [option]",
    "    Create a new consumer group. Options are:",
    "    * MKSTREAM",
    "      Create the empty stream if it does not exist.",
    "    * ENTRIESREAD entries_read",
    "      Set the group's entries_read counter (internal use).",
    "CREATECONSUMER <key> <groupname> <consumer>",
    "    Create a new consumer in the specified group.",
    "DELCONSUMER <key> <groupname> <consumer>",
    "    Remove the specified consumer.",
    "DESTROY <key> <groupname>",
    "    Remove the specified group.",
    "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    "    Set the current group ID and entries_read counter.",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum XgroupSub {
    Create,
    SetId,
    Destroy,
    CreateConsumer,
    DelConsumer,
}

/// XGROUP: the subcommand's arity (Redis's table), its options, the key and group checks,
/// then the subcommand.
pub(super) fn xgroup(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    let (which, arity, name) = if is(sub, "create") {
        (XgroupSub::Create, -5, "xgroup|create")
    } else if is(sub, "setid") {
        (XgroupSub::SetId, -5, "xgroup|setid")
    } else if is(sub, "destroy") {
        (XgroupSub::Destroy, 4, "xgroup|destroy")
    } else if is(sub, "createconsumer") {
        (XgroupSub::CreateConsumer, 5, "xgroup|createconsumer")
    } else if is(sub, "delconsumer") {
        (XgroupSub::DelConsumer, 5, "xgroup|delconsumer")
    } else if is(sub, "help") {
        sub_arity(args, 2, "xgroup|help")?;
        return Ok(help(args, XGROUP_HELP));
    } else {
        return Err(unknown_subcommand(args));
    };
    sub_arity(args, arity, name)?;
    let (mkstream, entries_read) = xgroup_options(args, which)?;
    let (key, group) = (args[2], args[3]);
    let exists = match ctx.ks.get_stream(key)? {
        None if !mkstream => {
            return Err(err(
                "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE \
                 you may want to use the MKSTREAM option to create an empty stream \
                 automatically.",
            ))
        }
        None => false,
        Some(s) => {
            let needs_group = !matches!(which, XgroupSub::Create | XgroupSub::Destroy);
            if needs_group && !s.groups.contains_key(group) {
                return Err(no_such_group(group, key));
            }
            true
        }
    };
    match which {
        XgroupSub::Create if (5..=8).contains(&args.len()) => {
            xgroup_create(ctx, args, exists, entries_read)
        }
        XgroupSub::SetId if args.len() == 5 || args.len() == 7 => {
            let s = stream_mut(ctx, key)?;
            let id = match args[4] {
                b"$" => s.last_id,
                id => parse_id(id, 0, false, false)?.0,
            };
            if let Some(g) = s.groups.get_mut(group) {
                g.last_delivered = id;
                g.entries_read = entries_read;
            }
            ctx.ks.notify(Classes::STREAM, "xgroup-setid", key);
            Ok(Reply::ok())
        }
        XgroupSub::Destroy => {
            if group_of(ctx, key, group)?.is_none() {
                return Ok(Reply::Int(0));
            }
            let removed = stream_mut(ctx, key)?.groups.remove(group).is_some();
            if removed {
                ctx.ks.notify(Classes::STREAM, "xgroup-destroy", key);
            }
            // XREADGROUP clients blocked on the group get NOGROUP.
            signal_ready(ctx, key);
            Ok(Reply::Int(i64::from(removed)))
        }
        XgroupSub::CreateConsumer => {
            let now = now(ctx);
            let consumer = args[4];
            if group_of(ctx, key, group)?.is_some_and(|g| g.consumers.contains_key(consumer)) {
                return Ok(Reply::Int(0));
            }
            let created = stream_mut(ctx, key)?
                .groups
                .get_mut(group)
                .is_some_and(|g| g.create_consumer(consumer, now));
            notify_consumer_created(ctx, key, created);
            Ok(Reply::Int(i64::from(created)))
        }
        XgroupSub::DelConsumer => {
            let consumer = args[4];
            if !group_of(ctx, key, group)?.is_some_and(|g| g.consumers.contains_key(consumer)) {
                return Ok(Reply::Int(0));
            }
            let pending = stream_mut(ctx, key)?
                .groups
                .get_mut(group)
                .and_then(|g| g.delete_consumer(consumer));
            if pending.is_some() {
                ctx.ks.notify(Classes::STREAM, "xgroup-delconsumer", key);
            }
            Ok(int(pending.unwrap_or(0)))
        }
        _ => Err(sub_syntax(args)),
    }
}

/// CREATE's and SETID's options: MKSTREAM (CREATE only) and ENTRIESREAD (`None` = -1, an
/// unknown counter).
fn xgroup_options(args: &[&[u8]], which: XgroupSub) -> Result<(bool, Option<i64>), CmdError> {
    let mut mkstream = false;
    let mut entries_read = None;
    let takes_entries_read = matches!(which, XgroupSub::Create | XgroupSub::SetId);
    let mut i = 5;
    while i < args.len() {
        if which == XgroupSub::Create && is(args[i], "mkstream") {
            mkstream = true;
            i += 1;
        } else if takes_entries_read && is(args[i], "entriesread") && i + 1 < args.len() {
            let n = parse_i64(args[i + 1])?;
            if n < -1 {
                return Err(err("ERR value for ENTRIESREAD must be positive or -1"));
            }
            entries_read = (n >= 0).then_some(n);
            i += 2;
        } else {
            return Err(sub_syntax(args));
        }
    }
    Ok((mkstream, entries_read))
}

fn xgroup_create(
    ctx: &mut Ctx<'_, '_>,
    args: &[&[u8]],
    exists: bool,
    entries_read: Option<i64>,
) -> Result<Reply, CmdError> {
    let (key, group) = (args[2], args[3]);
    let id = match args[4] {
        b"$" => ctx.ks.get_stream(key)?.map_or(StreamId::MIN, |s| s.last_id),
        id => strict_id(id)?,
    };
    if exists && group_of(ctx, key, group)?.is_some() {
        return Err(err("BUSYGROUP Consumer Group name already exists"));
    }
    // Only creating the stream (MKSTREAM) is a change WATCH sees.
    let s = if exists {
        stream_mut(ctx, key)?
    } else {
        ctx.ks.stream_or_default(key)?
    };
    s.groups
        .insert(group.to_vec(), ConsumerGroup::new(id, entries_read));
    ctx.ks.notify(Classes::STREAM, "xgroup-create", key);
    Ok(Reply::ok())
}

// ---- XREADGROUP ----

/// Where XREADGROUP reads a stream from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadFrom {
    /// `>`: entries never delivered to the group.
    New,
    /// An id: the consumer's pending entries above it.
    History(StreamId),
}

/// XREADGROUP GROUP g c [COUNT n] [BLOCK ms] [NOACK] STREAMS key... id...
pub(super) fn xreadgroup(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let parsed = parse_xread(args)?;
    let Some((group, consumer)) = parsed.group else {
        return Err(err("ERR Missing GROUP option for XREADGROUP"));
    };
    let keys = &args[parsed.first_key..parsed.first_key + parsed.streams];
    let ids = &args[parsed.first_key + parsed.streams..];
    let mut reads = Vec::with_capacity(keys.len());
    for (&key, &id) in keys.iter().zip(ids) {
        if group_of(ctx, key, group)?.is_none() {
            return Err(owned(format!(
                "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP \
                 option",
                shown(key),
                shown(group)
            )));
        }
        let from = match id {
            b"$" => {
                return Err(err(
                    "ERR The $ ID is meaningless in the context of XREADGROUP: you want to \
                     read the history of this consumer by specifying a proper ID, or use the \
                     > ID to get new messages. The $ ID would just return an empty result set.",
                ))
            }
            b">" => ReadFrom::New,
            // Redis marks `>` with the greatest id, so that id typed out means `>` too.
            id => match strict_id(id)? {
                StreamId::MAX => ReadFrom::New,
                id => ReadFrom::History(id),
            },
        };
        reads.push((key, from));
    }
    let now = now(ctx);
    let mut out = Vec::new();
    for (key, from) in reads {
        let Some(entries) = read_group(ctx, key, group, consumer, from, &parsed, now)? else {
            continue;
        };
        out.push((Reply::bulk(key), entries));
    }
    if out.is_empty() {
        // BLOCK: the RESP server parks the client on the keys (`server::blocking`).
        return Ok(Reply::NilArray);
    }
    Ok(per_stream_reply(ctx.client.resp, out))
}

/// `[[key, entries], ...]` in RESP2, a map in RESP3 (XREAD's shape).
fn per_stream_reply(resp: u8, per_stream: Vec<(Reply, Reply)>) -> Reply {
    if resp >= 3 {
        Reply::Map(per_stream)
    } else {
        Reply::Array(
            per_stream
                .into_iter()
                .map(|(k, v)| Reply::Array(vec![k, v]))
                .collect(),
        )
    }
}

/// One stream of an XREADGROUP: its entries reply, or `None` when it has nothing to serve
/// (no entry above the group's last-delivered id for `>`).
fn read_group(
    ctx: &mut Ctx<'_, '_>,
    key: &[u8],
    group: &[u8],
    consumer: &[u8],
    from: ReadFrom,
    parsed: &super::XreadArgs<'_>,
    now: i64,
) -> Result<Option<Reply>, CmdError> {
    let Some(s) = ctx.ks.get_stream(key)? else {
        return Ok(None);
    };
    let Some(g) = s.groups.get(group) else {
        return Ok(None);
    };
    if from == ReadFrom::New
        && s.last_entry_id()
            .is_none_or(|last| last <= g.last_delivered)
    {
        return Ok(None);
    }
    let s = stream_mut(ctx, key)?;
    let created = s
        .groups
        .get_mut(group)
        .is_some_and(|g| touch_consumer(g, consumer, now));
    let reply = match from {
        ReadFrom::New => Reply::Array(
            s.read_new(group, consumer, parsed.count, parsed.noack, now)
                .into_iter()
                .map(entry_reply)
                .collect(),
        ),
        ReadFrom::History(after) => {
            // Past the greatest id Redis's increment wraps to 0-0: the whole history.
            let start = after.next().unwrap_or(StreamId::MIN);
            Reply::Array(
                s.read_history(group, consumer, start, parsed.count, now)
                    .into_iter()
                    .map(|(id, fields)| match fields {
                        Some(fields) => entry_reply((id, fields)),
                        None => Reply::Array(vec![id_reply(id), Reply::NilArray]),
                    })
                    .collect(),
            )
        }
    };
    notify_consumer_created(ctx, key, created);
    Ok(Some(reply))
}

/// Redis's `XREAD_BLOCKED_DEFAULT_COUNT`.
const BLOCKED_DEFAULT_COUNT: usize = 1000;

/// What serving a blocked XREADGROUP from one key gave (Redis's
/// `serveClientsBlockedOnStreamKey` and `unblockDeletedStreamReadgroupClients`).
#[derive(Debug)]
pub(super) enum BlockedRead {
    /// Nothing new: keep waiting.
    Waiting,
    /// The reply; the call is done (entries, or the NOGROUP/UNBLOCKED error).
    Done(Reply),
}

/// Serves a blocked `XREADGROUP GROUP g c [COUNT n] [NOACK] STREAMS key >` from `key`: a
/// live entry above the group's last-delivered id is served; a missing group or a key no
/// longer holding a stream ends the wait with Redis's error.
///
/// Redis tests the stream's last id rather than its last live entry, but only when a key
/// is signalled, which for a stream is XADD (the added entry is live, so both tests agree)
/// or a deletion. The engine also tries a call right after it blocks and wakes waiters on
/// other writes to the key; testing live entries keeps those from serving an empty read
/// where the entries above the group were deleted.
pub(super) fn serve_blocked(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> BlockedRead {
    let Ok(mut parsed) = parse_xread(args) else {
        return BlockedRead::Waiting;
    };
    if parsed.count == 0 {
        // Redis's cap for a blocked read without COUNT: one wake-up should not serve a
        // whole stream (XGROUP SETID may move the group far back while it waits).
        parsed.count = BLOCKED_DEFAULT_COUNT;
    }
    let (Some((group, consumer)), Some(&key)) = (parsed.group, args.get(parsed.first_key)) else {
        return BlockedRead::Waiting;
    };
    match ctx.ks.get_stream(key) {
        Ok(Some(s)) => match s.groups.get(group) {
            Some(g)
                if s.last_entry_id()
                    .is_some_and(|last| last > g.last_delivered) => {}
            Some(_) => return BlockedRead::Waiting,
            None => {
                return BlockedRead::Done(Reply::err(
                    "NOGROUP the consumer group this client was blocked on no longer exists",
                ))
            }
        },
        Ok(None) | Err(_) => {
            return BlockedRead::Done(Reply::err("UNBLOCKED the stream key no longer exists"))
        }
    }
    let now = now(ctx);
    let Ok(s) = stream_mut(ctx, key) else {
        return BlockedRead::Waiting;
    };
    let created = s
        .groups
        .get_mut(group)
        .is_some_and(|g| touch_consumer(g, consumer, now));
    let entries = Reply::Array(
        s.read_new(group, consumer, parsed.count, parsed.noack, now)
            .into_iter()
            .map(entry_reply)
            .collect(),
    );
    notify_consumer_created(ctx, key, created);
    BlockedRead::Done(per_stream_reply(
        ctx.client.resp,
        vec![(Reply::bulk(key), entries)],
    ))
}

// ---- XACK ----

/// XACK key group id...: how many of the ids were pending (and no longer are).
pub(super) fn xack(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let (key, group) = (args[1], args[2]);
    if group_of(ctx, key, group)?.is_none() {
        return Ok(Reply::Int(0));
    }
    let ids = args[3..]
        .iter()
        .map(|a| strict_id(a))
        .collect::<Result<Vec<_>, _>>()?;
    let any =
        group_of(ctx, key, group)?.is_some_and(|g| ids.iter().any(|id| g.pending.contains_key(id)));
    if !any {
        return Ok(Reply::Int(0));
    }
    let s = stream_mut(ctx, key)?;
    let Some(g) = s.groups.get_mut(group) else {
        return Ok(Reply::Int(0));
    };
    Ok(int(ids.iter().filter(|id| g.ack(**id)).count()))
}

// ---- XPENDING ----

/// XPENDING's extended form: `[IDLE ms] start end count [consumer]`.
struct PendingRange<'a> {
    min_idle_ms: i64,
    start: StreamId,
    end: StreamId,
    count: usize,
    consumer: Option<&'a [u8]>,
}

fn parse_pending_range<'a>(args: &[&'a [u8]]) -> Result<PendingRange<'a>, CmdError> {
    let mut at = 3;
    let mut min_idle_ms = 0;
    if is(args[3], "idle") {
        min_idle_ms = parse_i64(args[4])?;
        if args.len() < 8 {
            return Err(CmdError::Syntax);
        }
        at += 2;
    }
    let count = parse_i64(args[at + 2])?;
    let start = range_bound(args[at], true)?;
    let end = range_bound(args[at + 1], false)?;
    Ok(PendingRange {
        min_idle_ms,
        start,
        end,
        count: usize::try_from(count.max(0)).unwrap_or(usize::MAX),
        consumer: args.get(at + 3).copied(),
    })
}

/// XPENDING key group [[IDLE ms] start end count [consumer]].
pub(super) fn xpending(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    if args.len() != 3 && !(6..=9).contains(&args.len()) {
        return Err(CmdError::Syntax);
    }
    let range = if args.len() >= 6 {
        Some(parse_pending_range(args)?)
    } else {
        None
    };
    let now = now(ctx);
    let (key, group) = (args[1], args[2]);
    let Some(g) = group_of(ctx, key, group)? else {
        return Err(no_key_or_group(key, group));
    };
    let Some(range) = range else {
        return Ok(pending_summary(g));
    };
    if range.start > range.end {
        // An inverted range is empty (and would panic BTreeMap::range).
        return Ok(Reply::Array(Vec::new()));
    }
    let bounds = range.start..=range.end;
    let ids: Box<dyn Iterator<Item = &StreamId>> = match range.consumer {
        Some(name) => match g.consumers.get(name) {
            Some(c) => Box::new(c.pending.range(bounds)),
            None => return Ok(Reply::Array(Vec::new())),
        },
        None => Box::new(g.pending.range(bounds).map(|(id, _)| id)),
    };
    let mut out = Vec::new();
    for &id in ids {
        if out.len() >= range.count {
            break;
        }
        let Some(p) = g.pending.get(&id) else {
            continue;
        };
        let idle = now.wrapping_sub(p.delivery_time_ms);
        if range.min_idle_ms != 0 && idle < range.min_idle_ms {
            continue;
        }
        out.push(Reply::Array(vec![
            id_reply(id),
            Reply::bulk(&p.consumer),
            Reply::Int(idle.max(0)),
            Reply::Int(p.delivery_count as i64),
        ]));
    }
    Ok(Reply::Array(out))
}

fn pending_summary(g: &ConsumerGroup) -> Reply {
    let (Some((first, _)), Some((last, _))) =
        (g.pending.first_key_value(), g.pending.last_key_value())
    else {
        return Reply::Array(vec![Reply::Int(0), Reply::Nil, Reply::Nil, Reply::NilArray]);
    };
    let consumers = g
        .consumers
        .iter()
        .filter(|(_, c)| !c.pending.is_empty())
        .map(|(name, c)| {
            Reply::Array(vec![
                Reply::bulk(name),
                Reply::Bulk(c.pending.len().to_string().into_bytes()),
            ])
        })
        .collect();
    Reply::Array(vec![
        int(g.pending.len()),
        id_reply(*first),
        id_reply(*last),
        Reply::Array(consumers),
    ])
}

// ---- XSETID ----

/// XSETID key last-id [ENTRIESADDED n] [MAXDELETEDID id].
pub(super) fn xsetid(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let id = strict_id(args[2])?;
    let mut entries_added: Option<u64> = None;
    let mut max_deleted = StreamId::MIN;
    let mut i = 3;
    while i < args.len() {
        let more = i + 1 < args.len();
        if is(args[i], "entriesadded") && more {
            let n = parse_i64(args[i + 1])?;
            entries_added =
                Some(u64::try_from(n).map_err(|_| err("ERR entries_added must be positive"))?);
        } else if is(args[i], "maxdeletedid") && more {
            max_deleted = strict_id(args[i + 1])?;
            if id < max_deleted {
                return Err(err(
                    "ERR The ID specified in XSETID is smaller than the provided \
                     max_deleted_entry_id",
                ));
            }
        } else {
            return Err(CmdError::Syntax);
        }
        i += 2;
    }
    let Some(s) = ctx.ks.get_stream(args[1])? else {
        return Err(CmdError::NoSuchKey);
    };
    if let Some(top) = s.last_entry_id() {
        if id < top {
            return Err(err(
                "ERR The ID specified in XSETID is smaller than the target stream top item",
            ));
        }
        if entries_added.is_some_and(|n| n < s.len() as u64) {
            return Err(err(
                "ERR The entries_added specified in XSETID is smaller than the target stream \
                 length",
            ));
        }
    }
    let s = stream_mut(ctx, args[1])?;
    s.last_id = id;
    if let Some(n) = entries_added {
        s.entries_added = n;
    }
    if max_deleted != StreamId::MIN {
        s.max_deleted_id = max_deleted;
    }
    ctx.ks.notify(Classes::STREAM, "xsetid", args[1]);
    Ok(Reply::ok())
}

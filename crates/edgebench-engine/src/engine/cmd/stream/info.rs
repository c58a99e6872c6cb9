//! XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS and XINFO HELP, with
//! Redis 7.0's fields in its order (t_stream.c `xinfoCommand`): 7.0 reports a consumer's
//! `idle` (since it was last seen) but not 7.2's `inactive`, and FULL's `seen-time` but not
//! `active-time`.

use super::entry_reply;
use super::group::{no_such_group, sub_syntax};
use crate::engine::cmd::server::{help, sub_arity, unknown_subcommand};
use crate::engine::cmd::{is, parse_i64, Ctx};
use crate::engine::error::CmdError;
use crate::engine::types::stream::{ConsumerGroup, Fields, Stream, StreamId};
use crate::resp::reply::Reply;

const XINFO_HELP: &[&str] = &[
    "CONSUMERS <key> <groupname>",
    "    Show consumers of <groupname>.",
    "GROUPS <key>",
    "    Show the stream consumer groups.",
    "STREAM <key> [FULL [COUNT <count>]",
    "    Show information about the stream.",
];

/// XINFO FULL's COUNT when none is given (or a negative one).
const FULL_DEFAULT_COUNT: usize = 10;

fn field(name: &'static str, value: Reply) -> (Reply, Reply) {
    (Reply::Bulk(name.as_bytes().to_vec()), value)
}

fn id_reply(id: StreamId) -> Reply {
    Reply::Bulk(id.to_string().into_bytes())
}

fn int(n: usize) -> Reply {
    Reply::Int(i64::try_from(n).unwrap_or(i64::MAX))
}

/// XINFO: the subcommand's arity (Redis's table), then the key, then the subcommand.
pub(super) fn xinfo(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    if is(sub, "help") {
        sub_arity(args, 2, "xinfo|help")?;
        return Ok(help(args, XINFO_HELP));
    } else if is(sub, "consumers") {
        sub_arity(args, 4, "xinfo|consumers")?;
    } else if is(sub, "groups") {
        sub_arity(args, 3, "xinfo|groups")?;
    } else if is(sub, "stream") {
        sub_arity(args, -3, "xinfo|stream")?;
    } else {
        return Err(unknown_subcommand(args));
    }
    let now = i64::try_from(ctx.ks.now_ms()).unwrap_or(i64::MAX);
    let key = args[2];
    let Some(s) = ctx.ks.get_stream(key)? else {
        return Err(CmdError::NoSuchKey);
    };
    if is(sub, "consumers") {
        let group = s
            .groups
            .get(args[3])
            .ok_or_else(|| no_such_group(args[3], key))?;
        Ok(consumers(group, now))
    } else if is(sub, "groups") {
        Ok(Reply::Array(
            s.groups
                .iter()
                .map(|(name, g)| group_summary(s, name, g))
                .collect(),
        ))
    } else {
        stream_info(s, args)
    }
}

fn consumers(group: &ConsumerGroup, now: i64) -> Reply {
    Reply::Array(
        group
            .consumers
            .iter()
            .map(|(name, c)| {
                Reply::Map(vec![
                    field("name", Reply::bulk(name)),
                    field("pending", int(c.pending.len())),
                    field("idle", Reply::Int(now.wrapping_sub(c.seen_time_ms).max(0))),
                ])
            })
            .collect(),
    )
}

fn entries_read(g: &ConsumerGroup) -> Reply {
    g.entries_read.map_or(Reply::Nil, Reply::Int)
}

fn lag(s: &Stream, g: &ConsumerGroup) -> Reply {
    s.lag(g).map_or(Reply::Nil, Reply::Int)
}

fn group_summary(s: &Stream, name: &[u8], g: &ConsumerGroup) -> Reply {
    Reply::Map(vec![
        field("name", Reply::bulk(name)),
        field("consumers", int(g.consumers.len())),
        field("pending", int(g.pending.len())),
        field("last-delivered-id", id_reply(g.last_delivered)),
        field("entries-read", entries_read(g)),
        field("lag", lag(s, g)),
    ])
}

/// XINFO STREAM key [FULL [COUNT n]].
fn stream_info(s: &Stream, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let options = &args[3..];
    let full = match options.len() {
        0 => None,
        1 | 3 if !is(options[0], "full") => return Err(sub_syntax(args)),
        1 => Some(FULL_DEFAULT_COUNT),
        3 if !is(options[1], "count") => return Err(sub_syntax(args)),
        3 => {
            let n = parse_i64(options[2])?;
            // 0 = everything; a negative COUNT is the default.
            Some(usize::try_from(n).unwrap_or(FULL_DEFAULT_COUNT))
        }
        _ => return Err(sub_syntax(args)),
    };
    let mut out = vec![
        field("length", int(s.len())),
        field("radix-tree-keys", int(s.radix_tree_keys())),
        field("radix-tree-nodes", int(s.radix_tree_nodes())),
        field("last-generated-id", id_reply(s.last_id)),
        field("max-deleted-entry-id", id_reply(s.max_deleted_id)),
        field("entries-added", Reply::Int(s.entries_added as i64)),
        field("recorded-first-entry-id", id_reply(s.first_id())),
    ];
    let Some(count) = full else {
        let first = s.entries.first_key_value();
        let last = s.entries.last_key_value();
        let entry = |e: Option<(&StreamId, &Fields)>| {
            e.map_or(Reply::Nil, |(id, f)| entry_reply((*id, f.clone())))
        };
        out.push(field("groups", int(s.groups.len())));
        out.push(field("first-entry", entry(first)));
        out.push(field("last-entry", entry(last)));
        return Ok(Reply::Map(out));
    };
    let limit = if count == 0 { usize::MAX } else { count };
    let entries = s
        .entries
        .iter()
        .take(limit)
        .map(|(id, f)| entry_reply((*id, f.clone())))
        .collect();
    out.push(field("entries", Reply::Array(entries)));
    let groups = s
        .groups
        .iter()
        .map(|(name, g)| full_group(s, name, g, limit))
        .collect();
    out.push(field("groups", Reply::Array(groups)));
    Ok(Reply::Map(out))
}

fn full_group(s: &Stream, name: &[u8], g: &ConsumerGroup, limit: usize) -> Reply {
    let pending = g
        .pending
        .iter()
        .take(limit)
        .map(|(id, p)| {
            Reply::Array(vec![
                id_reply(*id),
                Reply::bulk(&p.consumer),
                Reply::Int(p.delivery_time_ms),
                Reply::Int(p.delivery_count as i64),
            ])
        })
        .collect();
    let consumers = g
        .consumers
        .iter()
        .map(|(cname, c)| {
            let owned = c
                .pending
                .iter()
                .take(limit)
                .filter_map(|id| {
                    let p = g.pending.get(id)?;
                    Some(Reply::Array(vec![
                        id_reply(*id),
                        Reply::Int(p.delivery_time_ms),
                        Reply::Int(p.delivery_count as i64),
                    ]))
                })
                .collect();
            Reply::Map(vec![
                field("name", Reply::bulk(cname)),
                field("seen-time", Reply::Int(c.seen_time_ms)),
                field("pel-count", int(c.pending.len())),
                field("pending", Reply::Array(owned)),
            ])
        })
        .collect();
    Reply::Map(vec![
        field("name", Reply::bulk(name)),
        field("last-delivered-id", id_reply(g.last_delivered)),
        field("entries-read", entries_read(g)),
        field("lag", lag(s, g)),
        field("pel-count", int(g.pending.len())),
        field("pending", Reply::Array(pending)),
        field("consumers", Reply::Array(consumers)),
    ])
}

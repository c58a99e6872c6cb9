//! What a write leaves for the append-only file: after a command runs, still under its
//! locks, the commands that redo its effect are fed ([`crate::engine::feed`]), and the
//! change is counted for `save`'s schedule (INFO's `rdb_changes_since_last_save`).
//!
//! Most commands are fed as they were sent: replayed on the keyspace they ran on, they do
//! the same. The exceptions are redis-server 7.0's: a relative time becomes absolute
//! (`EXPIRE` → `PEXPIREAT`, `SET … EX` and `SETEX` → `SET … PXAT`, `GETEX` → `PEXPIREAT` or
//! `PERSIST`, RESTORE's TTL → `ABSTTL`), a result that depended on chance or the clock is
//! fed as what it was (`SPOP` → `SREM` of what it popped, `XADD *` → `XADD` with the ID it
//! made, `INCRBYFLOAT` → `SET … KEEPTTL`, `HINCRBYFLOAT` → `HSET`, `XCLAIM`/`XAUTOCLAIM` →
//! `XCLAIM` of what they claimed with no idle condition, `GETDEL` → `DEL`), and scripts
//! and transactions are fed as the writes they made, between MULTI and EXEC (Redis 7.0's
//! effects replication). A key found expired is fed as `DEL` by the keyspace itself.
//!
//! Not redone exactly: a consumer's delivery times after XREADGROUP (the replay's clock
//! sets them), and the order of a MOVE or COPY against a write to its destination that
//! ran on another thread between the two databases' locks.

use std::sync::atomic::Ordering;

use super::{is, Ctx, Spec};
use crate::engine::keyspace::{writes_on_this_thread, Value};
use crate::resp::reply::Reply;

/// Commands that run others (scripts, EXEC): fed as what those did.
pub(crate) fn is_container(spec: &Spec) -> bool {
    matches!(
        spec.name,
        "exec" | "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro"
    )
}

/// FUNCTION subcommands that change the libraries (fed though they write no key).
fn changes_functions(spec: &Spec, args: &[&[u8]]) -> bool {
    spec.name == "function"
        && args.len() > 1
        && ["load", "delete", "flush", "restore"]
            .iter()
            .any(|s| is(args[1], s))
}

/// Feeds what a script or transaction held, as one block, if it is the outermost one
/// running for its client: called by it while its locks are still held.
pub(crate) fn feed_held_if_outermost(ctx: &mut Ctx<'_, '_>) {
    if ctx.client.prop_hold <= 1 {
        feed_held(ctx);
    }
}

fn feed_held(ctx: &mut Ctx<'_, '_>) {
    if ctx.client.prop.is_empty() {
        return;
    }
    let held = std::mem::take(&mut ctx.client.prop);
    if held.len() == 1 {
        let (db, args) = &held[0];
        ctx.engine.feed().push(*db, &[args.as_slice()]);
    } else {
        ctx.engine.feed().push_transaction(&held);
    }
}

/// A mark taken before a command runs.
pub(crate) fn mark() -> u64 {
    writes_on_this_thread()
}

/// After `spec` ran with `args` (its locks still held): counts its writes and feeds it.
pub(crate) fn after(ctx: &mut Ctx<'_, '_>, spec: &Spec, args: &[&[u8]], reply: &Reply, mark: u64) {
    let writes = writes_on_this_thread().wrapping_sub(mark);
    // The common case, a read: nothing written, nothing held, no library changed; no name
    // compared beyond one.
    if writes == 0 && ctx.client.prop.is_empty() && spec.name != "function" {
        return;
    }
    if is_container(spec) {
        // Its commands were counted and held as they ran, and fed under its locks by
        // [`feed_held_if_outermost`]; what is left ran without shared locks (an EXEC of
        // commands that change database) and is fed now.
        if ctx.client.prop_hold == 0 {
            feed_held(ctx);
        }
        return;
    }
    let functions = changes_functions(spec, args) && !reply.is_error();
    if writes == 0 && !functions {
        return;
    }
    ctx.engine
        .persist_state()
        .dirty
        .fetch_add(writes.max(1), Ordering::Relaxed);
    let feed = ctx.engine.feed();
    if !feed.on() || !(spec.write || functions) {
        return;
    }
    let commands = rewrite(ctx, spec, args, reply);
    let db = ctx.client.db;
    if ctx.client.prop_hold > 0 {
        ctx.client
            .prop
            .extend(commands.into_iter().map(|c| (db, c)));
    } else {
        let refs: Vec<&[Vec<u8>]> = commands.iter().map(Vec::as_slice).collect();
        feed.push(db, &refs);
    }
}

fn owned(args: &[&[u8]]) -> Vec<Vec<u8>> {
    args.iter().map(|a| a.to_vec()).collect()
}

fn cmd(parts: &[&[u8]]) -> Vec<Vec<u8>> {
    owned(parts)
}

/// The commands that redo what `spec` did.
fn rewrite(ctx: &mut Ctx<'_, '_>, spec: &Spec, args: &[&[u8]], reply: &Reply) -> Vec<Vec<Vec<u8>>> {
    let key = args.get(1).copied().unwrap_or_default();
    // The key's state now: its string value (if a string) and deadline.
    let mut state = || {
        ctx.ks.peek(key).map(|e| {
            let s = match &e.value {
                Value::Str(s) => Some(s.clone()),
                _ => None,
            };
            (s, e.expires_at_ms())
        })
    };
    match spec.name {
        "expire" | "pexpire" | "expireat" | "pexpireat" | "getex" => match state() {
            None => vec![cmd(&[b"DEL", key])],
            Some((_, Some(t))) => vec![cmd(&[b"PEXPIREAT", key, t.to_string().as_bytes()])],
            Some((_, None)) => vec![cmd(&[b"PERSIST", key])],
        },
        "set" | "setex" | "psetex" if args.len() > 3 => match state() {
            None => vec![cmd(&[b"DEL", key])],
            Some((Some(v), Some(t))) => {
                vec![cmd(&[b"SET", key, &v, b"PXAT", t.to_string().as_bytes()])]
            }
            Some((Some(v), None)) => vec![cmd(&[b"SET", key, &v])],
            Some((None, _)) => vec![owned(args)],
        },
        "incrbyfloat" => match state() {
            Some((Some(v), _)) => vec![cmd(&[b"SET", key, &v, b"KEEPTTL"])],
            _ => vec![owned(args)],
        },
        "getdel" => vec![cmd(&[b"DEL", key])],
        "hincrbyfloat" => match reply {
            Reply::Bulk(v) => vec![cmd(&[b"HSET", key, args[2], v])],
            Reply::Double(v) => vec![cmd(&[
                b"HSET",
                key,
                args[2],
                super::format_f64(*v).as_bytes(),
            ])],
            _ => vec![owned(args)],
        },
        "spop" => {
            let members: Vec<&[u8]> = match reply {
                Reply::Bulk(m) => vec![m],
                Reply::Array(a) | Reply::Set(a) => a
                    .iter()
                    .filter_map(|r| match r {
                        Reply::Bulk(m) => Some(m.as_slice()),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            };
            if members.is_empty() {
                return Vec::new();
            }
            let mut c = cmd(&[b"SREM", key]);
            c.extend(members.iter().map(|m| m.to_vec()));
            vec![c]
        }
        "xadd" => match (reply, xadd_id_at(args)) {
            (Reply::Bulk(id), Some(at)) => {
                let mut c = owned(args);
                c[at] = id.clone();
                vec![c]
            }
            _ => vec![owned(args)],
        },
        "xautoclaim" | "xclaim" => xclaim_as_claimed(spec.name, args, reply),
        // The keys it moved away, as DEL (a replay must not migrate again). A MIGRATE the
        // target refused part of is not fed: which of its keys went is not in its reply.
        "migrate" => {
            if reply.is_error() || args.iter().skip(6).any(|a| is(a, "copy")) {
                return Vec::new();
            }
            let mut c = cmd(&[b"DEL"]);
            c.extend(
                super::dump::migrate::key_positions(args)
                    .into_iter()
                    .filter_map(|i| args.get(i).map(|k| k.to_vec())),
            );
            vec![c]
        }
        "restore" if !args.iter().skip(4).any(|a| is(a, "absttl")) && args[2] != b"0" => {
            match state() {
                Some((_, Some(t))) => {
                    let mut c = owned(args);
                    c[2] = t.to_string().into_bytes();
                    c.push(b"ABSTTL".to_vec());
                    vec![c]
                }
                Some((_, None)) => vec![owned(args)],
                None => Vec::new(),
            }
        }
        _ => vec![owned(args)],
    }
}

/// Where XADD's ID is: after the key, NOMKSTREAM and the trimming options.
fn xadd_id_at(args: &[&[u8]]) -> Option<usize> {
    let mut i = 2;
    while i < args.len() {
        let a = args[i];
        if is(a, "nomkstream") {
            i += 1;
        } else if is(a, "maxlen") || is(a, "minid") {
            i += 1;
            if args.get(i).is_some_and(|a| *a == b"=" || *a == b"~") {
                i += 1;
            }
            i += 1;
        } else if is(a, "limit") {
            i += 2;
        } else {
            return Some(i);
        }
    }
    None
}

/// XCLAIM / XAUTOCLAIM as `XCLAIM key group consumer 0 <the IDs they claimed or found
/// deleted>`, keeping JUSTID (which does not count a delivery).
fn xclaim_as_claimed(name: &str, args: &[&[u8]], reply: &Reply) -> Vec<Vec<Vec<u8>>> {
    let id_of = |r: &Reply| -> Option<Vec<u8>> {
        match r {
            Reply::Bulk(id) => Some(id.clone()),
            Reply::Array(e) => match e.first() {
                Some(Reply::Bulk(id)) => Some(id.clone()),
                _ => None,
            },
            _ => None,
        }
    };
    let (ids, justid): (Vec<Vec<u8>>, bool) = match (name, reply) {
        ("xautoclaim", Reply::Array(parts)) => {
            let mut ids: Vec<Vec<u8>> = match parts.get(1) {
                Some(Reply::Array(claimed)) => claimed.iter().filter_map(id_of).collect(),
                _ => Vec::new(),
            };
            if let Some(Reply::Array(deleted)) = parts.get(2) {
                ids.extend(deleted.iter().filter_map(id_of));
            }
            (ids, args.iter().skip(6).any(|a| is(a, "justid")))
        }
        ("xclaim", Reply::Array(claimed)) => (
            claimed.iter().filter_map(id_of).collect(),
            args.iter().skip(6).any(|a| is(a, "justid")),
        ),
        _ => return vec![owned(args)],
    };
    if ids.is_empty() || args.len() < 5 {
        return Vec::new();
    }
    let mut c = cmd(&[b"XCLAIM", args[1], args[2], args[3], b"0"]);
    c.extend(ids);
    if justid {
        c.push(b"JUSTID".to_vec());
    }
    vec![c]
}

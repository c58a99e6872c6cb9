//! Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH, with Redis's semantics.
//!
//! - A command rejected while queuing (unknown, wrong arity) makes EXEC fail with EXECABORT;
//!   a command that fails when EXEC runs it gets its error in EXEC's array, and the others
//!   still run (Redis does not roll back).
//! - EXEC locks the shards of every queued command's keys (and of the WATCHed keys) before it
//!   runs the first one, so no other caller sees the transaction half-done. A queue that
//!   changes database (SELECT, MOVE, SWAPDB, COPY ... DB, FLUSHALL) cannot be locked up front
//!   on one database (nor can INFO, which reads every database): it runs command by command,
//!   atomic per command only.
//! - WATCH records a per-key version that every write to the key bumps; EXEC replies with a
//!   null array when any watched key changed.

use std::borrow::Cow;

use super::{lookup_indexed, run, Ctx, KeySpec, Spec};
use crate::engine::acl;
use crate::engine::error::CmdError;
use crate::resp::reply::Reply;

/// The transaction commands.
pub const COMMANDS: &[Spec] = &[
    Spec {
        name: "multi",
        arity: 1,
        keys: KeySpec::None,
        write: false,
        run: multi,
    },
    Spec {
        name: "exec",
        arity: 1,
        keys: KeySpec::None,
        write: true,
        run: exec,
    },
    Spec {
        name: "discard",
        arity: 1,
        keys: KeySpec::None,
        write: false,
        run: discard,
    },
    Spec {
        name: "watch",
        arity: -2,
        keys: KeySpec::Range {
            first: 1,
            last: -1,
            step: 1,
        },
        write: false,
        run: watch,
    },
    Spec {
        name: "unwatch",
        arity: 1,
        keys: KeySpec::None,
        write: false,
        run: unwatch,
    },
];

/// Commands that run at once even inside MULTI (everything else is queued).
pub fn runs_inside_multi(spec: &Spec) -> bool {
    matches!(
        spec.name,
        "multi" | "exec" | "discard" | "watch" | "unwatch" | "quit" | "reset"
    )
}

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

fn multi(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    if ctx.client.in_multi() {
        return Err(err("ERR MULTI calls can not be nested"));
    }
    ctx.client.multi = Some(Vec::new());
    Ok(Reply::ok())
}

fn discard(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    if ctx.client.multi.take().is_none() {
        return Err(err("ERR DISCARD without MULTI"));
    }
    ctx.client.multi_dirty = false;
    ctx.client.watched.clear();
    Ok(Reply::ok())
}

fn watch(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    if ctx.client.in_multi() {
        return Err(err("ERR WATCH inside MULTI is not allowed"));
    }
    let db = ctx.client.db;
    for key in &args[1..] {
        let version = ctx.ks.watch(key);
        ctx.client.watched.push(db, (*key).into(), version);
    }
    Ok(Reply::ok())
}

fn unwatch(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    ctx.client.watched.clear();
    Ok(Reply::ok())
}

/// Queued commands that change database or lock shards beyond their key spec (INFO counts
/// every database, a script locks its whole database after the scripting VM): they cannot
/// run under locks taken up front.
fn changes_db(spec: &Spec, args: &[Vec<u8>]) -> bool {
    match spec.name {
        // CONFIG SET of an encoding threshold walks every database's shards.
        "select" | "move" | "swapdb" | "flushall" | "info" | "config" => true,
        // Persistence locks every shard of every database.
        "save" | "bgsave" | "bgrewriteaof" | "shutdown" => true,
        // Scripts take the VM, then lock their whole database: never under EXEC's locks.
        "eval" | "evalsha" | "eval_ro" | "evalsha_ro" | "fcall" | "fcall_ro" | "script"
        | "function" => true,
        "copy" => args.iter().any(|a| a.eq_ignore_ascii_case(b"db")),
        _ => false,
    }
}

/// A queued command the user may no longer run (its permissions changed after it was
/// queued): Redis checks again at EXEC and replies with an error in its place.
fn refused_at_exec(
    engine: &crate::engine::Engine,
    client: &crate::engine::Client,
    index: usize,
    args: &[&[u8]],
) -> Option<Reply> {
    if !client.acl_restricted() {
        return None;
    }
    let context = acl::log::Context::Multi;
    let (denied, _) = acl::refusal(engine, client, index, args, context)?;
    Some(Reply::Error(acl::exec_text(denied).into()))
}

fn exec(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    let Some(queue) = ctx.client.multi.take() else {
        return Err(err("ERR EXEC without MULTI"));
    };
    let dirty = std::mem::take(&mut ctx.client.multi_dirty);
    // Declared before any lock below, so it is dropped (giving the watches back, which
    // locks shards) after every lock of this function is released.
    let watched = ctx.client.watched.take();
    if dirty {
        return Err(err(
            "EXECABORT Transaction discarded because of previous errors.",
        ));
    }
    let engine = ctx.engine;
    let db_index = ctx.client.db;
    let now = engine.now_ms();

    // Watched keys in other databases are checked on their own (rare; not atomic with EXEC).
    for (db, key, version) in watched.iter().filter(|(db, _, _)| *db != db_index) {
        let mut ks = engine.db(*db).lock([&key[..]], now);
        if ks.watched_version(key) != Some(*version) {
            return Ok(Reply::NilArray);
        }
    }

    let specs: Vec<(usize, &'static Spec)> = queue
        .iter()
        .filter_map(|args| lookup_indexed(&args[0]))
        .collect();
    if specs.len() != queue.len() {
        // Unknown commands were rejected while queuing; this cannot happen.
        return Err(err(
            "EXECABORT Transaction discarded because of previous errors.",
        ));
    }

    if specs.iter().zip(&queue).any(|((_, s), a)| changes_db(s, a)) {
        for (_, key, version) in watched.iter().filter(|(db, _, _)| *db == db_index) {
            let mut ks = engine.db(db_index).lock([&key[..]], now);
            if ks.watched_version(key) != Some(*version) {
                return Ok(Reply::NilArray);
            }
        }
        let replies = queue
            .iter()
            .zip(&specs)
            .map(|(args, &(index, spec))| {
                let args: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
                if let Some(refused) = refused_at_exec(engine, ctx.client, index, &args) {
                    return refused;
                }
                engine.inner().server.count_call(index);
                run(engine, ctx.client, index, spec, &args)
            })
            .collect();
        return Ok(Reply::Array(replies));
    }

    // Lock everything the transaction touches, once.
    let db = engine.db(db_index);
    let all = specs.iter().zip(&queue).any(|((_, s), args)| {
        let argv: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
        s.locks_all(&argv)
    });
    let locked = if all {
        db.lock_all(now)
    } else {
        let mut idx: Vec<usize> = Vec::new();
        for ((_, spec), args) in specs.iter().zip(&queue) {
            let argv: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
            idx.extend(
                spec.key_indices(&argv)
                    .into_iter()
                    .map(|i| db.shard_of(argv[i])),
            );
        }
        idx.extend(
            watched
                .iter()
                .filter(|(d, _, _)| *d == db_index)
                .map(|(_, k, _)| db.shard_of(k)),
        );
        idx.sort_unstable();
        idx.dedup();
        db.lock_indices(&idx, now)
    };
    let mut locked = locked;
    for (_, key, version) in watched.iter().filter(|(d, _, _)| *d == db_index) {
        if locked.watched_version(key) != Some(*version) {
            return Ok(Reply::NilArray);
        }
    }
    let mut inner = Ctx {
        engine,
        client: &mut *ctx.client,
        ks: locked,
    };
    let mut replies = Vec::with_capacity(queue.len());
    for (&(index, spec), args) in specs.iter().zip(&queue) {
        let argv: Vec<&[u8]> = args.iter().map(|a| &a[..]).collect();
        if let Some(refused) = refused_at_exec(engine, inner.client, index, &argv) {
            replies.push(refused);
            continue;
        }
        let started = super::command_timer(engine);
        let mark = super::propagate::mark();
        // Each queued command counts as a call in INFO commandstats, as in Redis.
        engine.inner().server.count_call(index);
        let reply = (spec.run)(&mut inner, &argv).unwrap_or_else(Reply::from);
        if reply.is_error() {
            super::count_error(engine, &reply, Some(index), false);
        }
        super::propagate::after(&mut inner, spec, &argv, &reply, mark);
        if inner.client.tracking_reads {
            let container = super::propagate::is_container(spec);
            super::remember_reads(&mut inner, spec, &argv, container);
        }
        replies.push(reply);
        super::observe(engine, inner.client, index, &argv, started, now);
    }
    // Its writes go to the append-only file while its locks are still held.
    super::propagate::feed_held_if_outermost(&mut inner);
    Ok(Reply::Array(replies))
}

//! Connection and server commands: what real clients send on connect and while running.
//!
//! PING, ECHO, SELECT, HELLO, AUTH, CLIENT, INFO, COMMAND, CONFIG, TIME, QUIT, RESET,
//! SLOWLOG, LATENCY and WAIT, with Redis 7.0's replies and error texts (plus CLIENT SETINFO
//! and CLIENT NO-TOUCH from 7.2, which client libraries send on connect). SUBSCRIBE and its
//! kin, PUBSUB and MONITOR are in the table so COMMAND describes them; the RESP server runs
//! them before the engine sees them.
//!
//! The engine reports itself as `redis` version [`VERSION`] (HELLO's `version`, INFO's
//! `redis_version`): the Redis release whose replies the differential tests pin, so clients
//! that gate features on the server version pick the 7.0 behaviour the engine implements.
//! INFO's `edgebench_version` names the engine itself (this crate's version).
//!
//! Server-wide state lives in [`ServerState`], one per engine: the CONFIG parameters (behind
//! a `RwLock`: only CONFIG, INFO, AUTH and not-yet-authenticated clients read them, never a
//! data command), per-command call counts for INFO commandstats, and the count of live
//! clients. Nothing here takes a shard lock except INFO's keyspace section, which locks one
//! database at a time while holding nothing else.
//!
//! This file holds the command table, the helpers every group shares, PING, ECHO, SELECT,
//! TIME, QUIT, RESET, AUTH and HELLO; each larger group has its own file: `state` (the
//! server-wide state, the CONFIG parameters and the engine's configuration API), `client`
//! (CLIENT), `config` (CONFIG), `command` (COMMAND), `meta` (the metadata table COMMAND
//! reports), `registry` (live clients, CLIENT PAUSE, MONITOR), `slowlog` (SLOWLOG,
//! LATENCY, WAIT) and `info` (INFO).

use std::time::{SystemTime, UNIX_EPOCH};

use super::{is, parse_i64, Ctx, KeySpec, Spec};
use crate::engine::acl::log::{Context, Reason};
use crate::engine::client::Client;
use crate::engine::error::CmdError;
use crate::engine::handle::{EngineClock, DATABASES};
use crate::resp::reply::Reply;

mod acl;
mod client;
pub(crate) mod command;
pub(crate) mod common;
mod config;
mod histogram;
mod info;
pub(crate) mod meta;
mod persist;
mod registry;
pub(crate) mod slowlog;
pub(crate) mod state;
#[cfg(test)]
mod tests;
mod tracking;

pub use client::client_info_line;
use client::{client, set_name};
use command::command;
pub use command::command_info;
pub use common::VERSION;
// Container commands of other families (XGROUP, XINFO) share the subcommand helpers.
use common::{err, err_owned, lossy};
pub(crate) use common::{help, sub_arity, unknown_subcommand};
use config::config;
pub(crate) use info::heap_bytes;
use info::info;
pub use info::{bytes_to_human, set_heap_probe};
pub use registry::{ClientRegistry, MonitorLine, PauseKind};
pub use state::ServerState;

/// The commands of this family.
pub const COMMANDS: &[Spec] = &[
    keyless("ping", -1, ping),
    keyless("echo", 2, echo),
    // In-process there is no subscriber to deliver to (the RESP server answers these itself,
    // with its broker, before the engine sees them): the count of receivers is 0, as Redis
    // answers on a server with no subscribers.
    keyless("publish", 3, publish_in_process),
    // SPUBLISH's shard channel is its key in Redis's command table (it picks the slot).
    super::spec("spublish", 3, super::ONE_KEY, false, publish_in_process),
    // Run by the RESP server, which can push messages to a connection; in-process they
    // answer as a server with no subscribers (PUBSUB) or say they need a connection.
    keyless("subscribe", -2, needs_connection),
    keyless("psubscribe", -2, needs_connection),
    super::spec("ssubscribe", -2, super::ALL_ARGS, false, needs_connection),
    keyless("unsubscribe", -1, needs_connection),
    keyless("punsubscribe", -1, needs_connection),
    super::spec("sunsubscribe", -1, super::ALL_ARGS, false, needs_connection),
    keyless("monitor", 1, needs_connection),
    keyless("pubsub", -2, pubsub_in_process),
    keyless("select", 2, select),
    keyless("hello", -1, hello),
    keyless("auth", -2, auth),
    keyless("acl", -2, acl::acl),
    keyless("client", -2, client),
    keyless("info", -1, info),
    keyless("command", -1, command),
    keyless("config", -2, config),
    keyless("time", 1, time),
    keyless("slowlog", -2, slowlog::slowlog),
    keyless("latency", -2, slowlog::latency),
    keyless("cluster", -2, cluster),
    keyless("wait", 3, slowlog::wait),
    keyless("quit", -1, quit),
    keyless("reset", 1, reset),
    keyless("save", 1, persist::save),
    keyless("bgsave", -1, persist::bgsave),
    keyless("bgrewriteaof", 1, persist::bgrewriteaof),
    keyless("lastsave", 1, persist::lastsave),
    keyless("shutdown", -1, persist::shutdown),
];

const fn keyless(
    name: &'static str,
    arity: i32,
    run: fn(&mut Ctx<'_, '_>, &[&[u8]]) -> Result<Reply, CmdError>,
) -> Spec {
    Spec {
        name,
        arity,
        keys: KeySpec::None,
        write: false,
        run,
    }
}

/// Commands a client may send before it authenticates (Redis's `no_auth` flag).
pub fn runs_before_auth(spec: &Spec) -> bool {
    matches!(spec.name, "auth" | "hello" | "quit" | "reset")
}

/// The reply to a command sent before AUTH while a password is required.
pub const NOAUTH: &str = "NOAUTH Authentication required.";

// ---- PING, ECHO, SELECT, TIME, QUIT, RESET ----

fn ping(_: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    match args {
        [_] => Ok(Reply::Status("PONG".into())),
        [_, msg] => Ok(Reply::bulk(msg)),
        _ => Err(CmdError::Arity("ping".into())),
    }
}

/// CLUSTER: the engine runs standalone, and answers every subcommand as a redis-server with
/// `cluster-enabled no` does.
fn cluster(_: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    Err(err("ERR This instance has cluster support disabled"))
}

fn publish_in_process(_: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(0))
}

fn needs_connection(_: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Err(err_owned(format!(
        "ERR {} needs a connection to the RESP server: an in-process client cannot receive \
         pushed messages",
        lossy(args[0]).to_uppercase()
    )))
}

/// PUBSUB in-process: no channel has subscribers (the RESP server answers it from its
/// broker before the engine sees it).
fn pubsub_in_process(_: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    let counts = || {
        Reply::Array(
            args[2..]
                .iter()
                .flat_map(|name| [Reply::bulk(name), Reply::Int(0)])
                .collect(),
        )
    };
    if is(sub, "channels") || is(sub, "shardchannels") {
        if args.len() > 3 {
            return Err(common::sub_syntax(args));
        }
        Ok(Reply::Array(Vec::new()))
    } else if is(sub, "numsub") || is(sub, "shardnumsub") {
        Ok(counts())
    } else if is(sub, "numpat") {
        common::sub_arity(args, 2, "pubsub|numpat")?;
        Ok(Reply::Int(0))
    } else if is(sub, "help") {
        common::sub_arity(args, 2, "pubsub|help")?;
        Ok(common::help(args, PUBSUB_HELP))
    } else {
        Err(common::unknown_subcommand(args))
    }
}

/// PUBSUB HELP's lines between the usage line and HELP, as Redis 7.0 prints them (the
/// server's PUBSUB answers with the same text).
pub(crate) const PUBSUB_HELP: &[&str] = &[
    "CHANNELS [<pattern>]",
    "    Return the currently active channels matching a <pattern> (default: '*').",
    "NUMPAT",
    "    Return number of subscriptions to patterns.",
    "NUMSUB [<channel> ...]",
    "    Return the number of subscribers for the specified channels, excluding",
    "    pattern subscriptions(default: no channels).",
    "SHARDCHANNELS [<pattern>]",
    "    Return the currently active shard level channels matching a <pattern> (default: '*').",
    "SHARDNUMSUB [<shardchannel> ...]",
    "    Return the number of subscribers for the specified shard level channel(s)",
];

fn echo(_: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::bulk(args[1]))
}

fn select(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let db = parse_i64(args[1])?;
    match usize::try_from(db) {
        Ok(db) if db < DATABASES => {
            ctx.client.db = db;
            Ok(Reply::ok())
        }
        _ => Err(err("ERR DB index is out of range")),
    }
}

fn time(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    let micros: u64 = match &ctx.engine.inner().clock {
        EngineClock::System => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0),
        // A manual clock has ms resolution; TIME follows it so tests see the engine's time.
        EngineClock::Manual(_) => ctx.engine.now_ms().saturating_mul(1000),
    };
    Ok(Reply::Array(vec![
        Reply::Bulk((micros / 1_000_000).to_string().into_bytes()),
        Reply::Bulk((micros % 1_000_000).to_string().into_bytes()),
    ]))
}

fn quit(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    ctx.client.closing = true;
    Ok(Reply::ok())
}

/// RESET: the connection's state as a new connection's (MULTI and WATCH dropped, db 0,
/// RESP2, no name, re-authentication required if a password is set). Subscriptions are
/// the server's to drop.
fn reset(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    let requires_auth = ctx.engine.server().requires_auth();
    let c = &mut *ctx.client;
    c.multi = None;
    c.multi_dirty = false;
    c.watched.clear();
    c.db = 0;
    c.resp = 2;
    c.name = None;
    c.reply_off = false;
    c.reply_skip_next = false;
    c.publish_names();
    c.no_evict = false;
    c.no_touch = false;
    c.set_user(std::sync::Arc::clone(
        ctx.engine.server().acl.default_user(),
    ));
    c.authenticated = !requires_auth;
    Ok(Reply::Status("RESET".into()))
}

// ---- AUTH and HELLO ----

const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// Authenticates the client as `user` if the password is right and the user is on; a
/// failure is logged in ACL LOG (object: the command's name as sent, as Redis logs it).
fn authenticate(
    ctx: &mut Ctx<'_, '_>,
    args: &[&[u8]],
    user: &[u8],
    password: &[u8],
) -> Result<(), CmdError> {
    let acl = &ctx.engine.server().acl;
    match acl.authenticate(user, password) {
        Some(handle) => {
            ctx.client.set_user(handle);
            ctx.client.authenticated = true;
            Ok(())
        }
        None => {
            let context = if ctx.client.in_multi() {
                Context::Multi
            } else {
                Context::Toplevel
            };
            let cmd = lossy(args[0]).to_lowercase();
            crate::engine::acl::add_log_entry(
                ctx.engine,
                ctx.client,
                Reason::Auth,
                context,
                args[0].to_vec(),
                &lossy(user),
                &cmd,
            );
            Err(err(WRONGPASS))
        }
    }
}

fn auth(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let (user, password): (&[u8], &[u8]) = match args {
        [_, password] => {
            if ctx.engine.server().acl.default_user().read().nopass {
                return Err(err(
                    "ERR AUTH <password> called without any password configured for the \
                     default user. Are you sure your configuration is correct?",
                ));
            }
            (b"default", password)
        }
        [_, user, password] => (user, password),
        _ => return Err(CmdError::Syntax),
    };
    // A failed AUTH leaves an authenticated client authenticated, as in Redis.
    authenticate(ctx, args, user, password)?;
    Ok(Reply::ok())
}

/// HELLO [protover [AUTH user pass] [SETNAME name]]. As in Redis 7.0, options take effect
/// as they are read: a name set before a later option fails stays set.
fn hello(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let mut proto = None;
    if let Some(v) = args.get(1) {
        let v = parse_i64(v)
            .map_err(|_| err("ERR Protocol version is not an integer or out of range"))?;
        if !(2..=3).contains(&v) {
            return Err(err("NOPROTO unsupported protocol version"));
        }
        proto = Some(v as u8);
    }
    let mut j = 2;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(args[j], "auth") && more >= 2 {
            authenticate(ctx, args, args[j + 1], args[j + 2])?;
            j += 3;
        } else if is(args[j], "setname") && more >= 1 {
            set_name(ctx.client, args[j + 1])?;
            j += 2;
        } else {
            return Err(err_owned(format!(
                "ERR Syntax error in HELLO option '{}'",
                lossy(args[j])
            )));
        }
    }
    if !ctx.client.authenticated {
        return Err(err(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the \
             HELLO AUTH <user> <pass> option can be used to authenticate the client and select \
             the RESP protocol version at the same time",
        ));
    }
    if let Some(proto) = proto {
        ctx.client.resp = proto;
    }
    Ok(hello_reply(ctx.client))
}

/// HELLO's map: server, version, proto, id, mode, role, modules.
pub fn hello_reply(client: &Client) -> Reply {
    let field = |k: &str, v: Reply| (Reply::bulk(k.as_bytes()), v);
    Reply::Map(vec![
        field("server", Reply::bulk(b"redis")),
        field("version", Reply::bulk(VERSION.as_bytes())),
        field("proto", Reply::Int(i64::from(client.resp))),
        field("id", Reply::Int(client.id as i64)),
        field("mode", Reply::bulk(b"standalone")),
        field("role", Reply::bulk(b"master")),
        field("modules", Reply::Array(Vec::new())),
    ])
}

/// Whether the command at `index` in the command table has subcommands (CLIENT LIST shows
/// them as `client|list`): a table built once, so the command path pays an array read.
pub(crate) fn has_subcommands(index: usize) -> bool {
    static CONTAINERS: std::sync::OnceLock<Box<[bool]>> = std::sync::OnceLock::new();
    CONTAINERS
        .get_or_init(|| {
            super::all_commands()
                .map(|s| meta::lookup(s.name.as_bytes()).is_some_and(|m| !m.subcommands.is_empty()))
                .collect()
        })
        .get(index)
        .copied()
        .unwrap_or(false)
}

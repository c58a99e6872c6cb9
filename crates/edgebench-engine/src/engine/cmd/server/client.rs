//! CLIENT: the client's name and library attributes, CLIENT LIST and INFO lines, and the
//! rest of the subcommands real clients send (with CLIENT SETINFO and CLIENT NO-TOUCH from
//! 7.2, which client libraries send on connect).

use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use super::common::{err, err_owned, help, lossy, sub_arity, sub_syntax, unknown_subcommand};
use super::registry::PauseKind;
use crate::engine::client::{
    Client, ClientShared, UnblockRequest, FLAG_CLOSING, FLAG_NO_EVICT, FLAG_NO_TOUCH,
};
use crate::engine::cmd::{is, parse_i64, spec_at, Ctx};
use crate::engine::error::CmdError;
use crate::engine::handle::Engine;
use crate::resp::reply::Reply;

/// Client names and SETINFO values: printable ASCII without spaces, so CLIENT LIST stays
/// splittable on spaces.
fn valid_attr(value: &[u8]) -> bool {
    value.iter().all(|&b| (b'!'..=b'~').contains(&b))
}

pub(super) fn set_name(client: &mut Client, name: &[u8]) -> Result<(), CmdError> {
    if !valid_attr(name) {
        return Err(err(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    client.name = (!name.is_empty()).then(|| name.to_vec());
    client.publish_names();
    Ok(())
}

/// CLIENT HELP, as Redis 7.0 prints it.
const CLIENT_HELP: &[&str] = &[
    "CACHING (YES|NO)",
    "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "KILL <ip:port>",
    "    Kill connection made from <ip:port>.",
    "KILL <option> <value> [<option> <value> [...]]",
    "    Kill connections. Options are:",
    "    * ADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made from the specified address",
    "    * LADDR (<ip:port>|<unixsocket>:0)",
    "      Kill connections made to specified local address",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Kill connections by type.",
    "    * USER <username>",
    "      Kill connections authenticated by <username>.",
    "    * SKIPME (YES|NO)",
    "      Skip killing current connection (default: yes).",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "UNPAUSE",
    "    Stop the current client pause, resuming traffic.",
    "PAUSE <timeout> [WRITE|ALL]",
    "    Suspend all, or just write, clients for <timeout> milliseconds.",
    "REPLY (ON|OFF|SKIP)",
    "    Control the replies sent to the current connection.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "UNBLOCK <clientid> [TIMEOUT|ERROR]",
    "    Unblock the specified blocked client.",
    "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
    "         [OPTIN] [OPTOUT] [NOLOOP]",
    "    Control server assisted client side caching.",
    "TRACKINGINFO",
    "    Report tracking status for the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
];

fn on_off(arg: &[u8]) -> Result<bool, CmdError> {
    if is(arg, "on") {
        Ok(true)
    } else if is(arg, "off") {
        Ok(false)
    } else {
        Err(CmdError::Syntax)
    }
}

pub(super) fn client(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    if is(sub, "list") {
        sub_arity(args, -2, "client|list")?;
        return client_list(ctx.engine, ctx.client, args);
    } else if is(sub, "kill") {
        sub_arity(args, -3, "client|kill")?;
        return client_kill(ctx.engine, ctx.client, args);
    } else if is(sub, "pause") {
        sub_arity(args, -3, "client|pause")?;
        return client_pause(ctx.engine, args);
    } else if is(sub, "unpause") {
        sub_arity(args, 2, "client|unpause")?;
        ctx.engine.server().pause.unpause();
        return Ok(Reply::ok());
    } else if is(sub, "unblock") {
        sub_arity(args, -3, "client|unblock")?;
        return client_unblock(ctx.engine, args);
    }
    if let Some(reply) = super::tracking::subcommand(ctx, args) {
        return reply;
    }
    let c = &mut *ctx.client;
    if is(sub, "id") {
        sub_arity(args, 2, "client|id")?;
        Ok(Reply::Int(c.id as i64))
    } else if is(sub, "getname") {
        sub_arity(args, 2, "client|getname")?;
        Ok(Reply::opt_bulk(c.name.as_deref()))
    } else if is(sub, "setname") {
        sub_arity(args, 3, "client|setname")?;
        set_name(c, args[2])?;
        Ok(Reply::ok())
    } else if is(sub, "info") {
        sub_arity(args, 2, "client|info")?;
        let mut line = client_info_line(c, "client|info");
        line.push('\n');
        Ok(Reply::Verbatim(line))
    } else if is(sub, "setinfo") {
        sub_arity(args, 4, "client|setinfo")?;
        client_setinfo(c, args[2], args[3])?;
        c.publish_names();
        Ok(Reply::ok())
    } else if is(sub, "no-evict") {
        sub_arity(args, 3, "client|no-evict")?;
        c.no_evict = on_off(args[2])?;
        Ok(Reply::ok())
    } else if is(sub, "no-touch") {
        sub_arity(args, 3, "client|no-touch")?;
        c.no_touch = on_off(args[2])?;
        Ok(Reply::ok())
    } else if is(sub, "reply") {
        sub_arity(args, 3, "client|reply")?;
        client_reply(c, args[2])
    } else if is(sub, "help") {
        sub_arity(args, 2, "client|help")?;
        Ok(help(args, CLIENT_HELP))
    } else {
        Err(unknown_subcommand(args))
    }
}

/// CLIENT REPLY ON|OFF|SKIP. The engine records the mode; the RESP server withholds the
/// replies (in-process every command still returns its reply).
fn client_reply(c: &mut Client, mode: &[u8]) -> Result<Reply, CmdError> {
    if is(mode, "on") {
        c.reply_off = false;
        c.reply_skip_next = false;
    } else if is(mode, "off") {
        c.reply_off = true;
    } else if is(mode, "skip") {
        if !c.reply_off {
            c.reply_skip_next = true;
        }
    } else {
        return Err(CmdError::Syntax);
    }
    Ok(Reply::ok())
}

/// The client types CLIENT LIST TYPE and CLIENT KILL TYPE name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClientType {
    Normal,
    Replica,
    PubSub,
    Master,
}

fn client_type(name: &[u8]) -> Result<ClientType, CmdError> {
    if is(name, "normal") {
        Ok(ClientType::Normal)
    } else if is(name, "slave") || is(name, "replica") {
        Ok(ClientType::Replica)
    } else if is(name, "pubsub") {
        Ok(ClientType::PubSub)
    } else if is(name, "master") {
        Ok(ClientType::Master)
    } else {
        Err(err_owned(format!(
            "ERR Unknown client type '{}'",
            lossy(name)
        )))
    }
}

/// A client's type: pub/sub while it has subscriptions, normal otherwise (monitors count as
/// normal, as in Redis; the engine has no replicas or masters).
fn type_of(s: &ClientShared) -> ClientType {
    if s.subscriptions
        .iter()
        .any(|n| n.load(Ordering::Relaxed) > 0)
    {
        ClientType::PubSub
    } else {
        ClientType::Normal
    }
}

/// CLIENT LIST [TYPE type | ID id ...]: every live client of the engine, the caller's line
/// from its own state, the others' from what they published.
fn client_list(engine: &Engine, c: &Client, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let registry = &engine.server().registry;
    let clients: Vec<Arc<ClientShared>> = if args.len() == 4 && is(args[2], "type") {
        let t = client_type(args[3])?;
        registry
            .all()
            .into_iter()
            .filter(|s| type_of(s) == t)
            .collect()
    } else if args.len() > 3 && is(args[2], "id") {
        let mut ids = Vec::with_capacity(args.len() - 3);
        for id in &args[3..] {
            ids.push(parse_i64(id).map_err(|_| err("ERR Invalid client ID"))?);
        }
        ids.into_iter()
            .filter_map(|id| u64::try_from(id).ok().and_then(|id| registry.get(id)))
            .collect()
    } else if args.len() != 2 {
        return Err(CmdError::Syntax);
    } else {
        registry.all()
    };
    let now_ms = engine.now_ms();
    let mut out = String::new();
    for s in clients {
        if s.id == c.id {
            out.push_str(&client_info_line(c, "client|list"));
        } else {
            out.push_str(&other_client_line(&s, now_ms));
        }
        out.push('\n');
    }
    Ok(Reply::Verbatim(out))
}

/// CLIENT KILL addr | CLIENT KILL [ID id] [TYPE type] [ADDR addr] [LADDR addr] [USER name]
/// [SKIPME yes|no]: asks every matching client's connection to close.
fn client_kill(engine: &Engine, c: &mut Client, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let mut addr: Option<&[u8]> = None;
    let mut laddr: Option<&[u8]> = None;
    let mut kind = None;
    let mut id = None;
    let mut skipme = true;
    let mut user = None;
    if args.len() == 3 {
        addr = Some(args[2]);
        // With the old form a client may kill itself.
        skipme = false;
    } else {
        let mut i = 2;
        while i < args.len() {
            let (opt, value) = (args[i], args.get(i + 1).copied());
            let Some(value) = value else {
                return Err(CmdError::Syntax);
            };
            if is(opt, "id") {
                let n = parse_i64(value)
                    .ok()
                    .filter(|&n| n >= 1)
                    .ok_or(err("ERR client-id should be greater than 0"))?;
                id = Some(n as u64);
            } else if is(opt, "type") {
                kind = Some(client_type(value)?);
            } else if is(opt, "addr") {
                addr = Some(value);
            } else if is(opt, "laddr") {
                laddr = Some(value);
            } else if is(opt, "user") {
                let Some(u) = engine.server().acl.user(value) else {
                    return Err(err_owned(format!("ERR No such user '{}'", lossy(value))));
                };
                user = Some(u);
            } else if is(opt, "skipme") {
                skipme = if is(value, "yes") {
                    true
                } else if is(value, "no") {
                    false
                } else {
                    return Err(CmdError::Syntax);
                };
            } else {
                return Err(CmdError::Syntax);
            }
            i += 2;
        }
    }
    let mut killed = 0;
    for s in engine.server().registry.all() {
        let this = s.id == c.id;
        let matches = addr.is_none_or(|a| s.addr().as_bytes() == a)
            && laddr.is_none_or(|a| s.laddr().as_bytes() == a)
            && kind.is_none_or(|t| type_of(&s) == t)
            && id.is_none_or(|id| s.id == id)
            && user.as_ref().is_none_or(|u| s.is_user(u))
            && !(this && skipme);
        if !matches {
            continue;
        }
        if this {
            c.closing = true;
        } else {
            s.kill();
        }
        killed += 1;
    }
    if args.len() == 3 {
        if killed == 0 {
            return Err(err("ERR No such client"));
        }
        return Ok(Reply::ok());
    }
    Ok(Reply::Int(killed))
}

/// The longest CLIENT PAUSE honoured: far beyond any real use, and within `Instant`'s range.
const MAX_PAUSE: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// CLIENT PAUSE timeout-ms [WRITE|ALL].
fn client_pause(engine: &Engine, args: &[&[u8]]) -> Result<Reply, CmdError> {
    if args.len() > 4 {
        return Err(sub_syntax(args));
    }
    let kind = match args.get(3) {
        None => PauseKind::All,
        Some(m) if is(m, "write") => PauseKind::Write,
        Some(m) if is(m, "all") => PauseKind::All,
        Some(_) => return Err(err("ERR CLIENT PAUSE mode must be WRITE or ALL")),
    };
    let ms =
        parse_i64(args[2]).map_err(|_| err("ERR timeout is not an integer or out of range"))?;
    if ms < 0 {
        return Err(err("ERR timeout is negative"));
    }
    let wait = Duration::from_millis(ms as u64).min(MAX_PAUSE);
    let now = Instant::now();
    engine
        .server()
        .pause
        .pause(kind, now.checked_add(wait).unwrap_or(now));
    Ok(Reply::ok())
}

/// CLIENT UNBLOCK id [TIMEOUT|ERROR]: 1 when the client was blocked and is now asked to
/// stop waiting (the RESP server wakes it), 0 otherwise.
fn client_unblock(engine: &Engine, args: &[&[u8]]) -> Result<Reply, CmdError> {
    if args.len() > 4 {
        return Err(sub_syntax(args));
    }
    let how = match args.get(3) {
        None => UnblockRequest::Timeout,
        Some(r) if is(r, "timeout") => UnblockRequest::Timeout,
        Some(r) if is(r, "error") => UnblockRequest::Error,
        Some(_) => return Err(err("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")),
    };
    let id = parse_i64(args[2])?;
    let target = u64::try_from(id)
        .ok()
        .and_then(|id| engine.server().registry.get(id));
    let unblocked = target.is_some_and(|t| t.request_unblock(how));
    Ok(Reply::Int(i64::from(unblocked)))
}

/// CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2); an empty value clears it.
fn client_setinfo(c: &mut Client, attr: &[u8], value: &[u8]) -> Result<(), CmdError> {
    let slot = if is(attr, "lib-name") {
        &mut c.lib_name
    } else if is(attr, "lib-ver") {
        &mut c.lib_ver
    } else {
        return Err(err_owned(format!(
            "ERR Unrecognized option '{}'",
            lossy(attr)
        )));
    };
    if !valid_attr(value) {
        return Err(err_owned(format!(
            "ERR {} cannot contain spaces, newlines or special characters.",
            lossy(attr)
        )));
    }
    *slot = (!value.is_empty()).then(|| value.to_vec());
    Ok(())
}

/// Flags in Redis's order (`O` monitor, `P` pub/sub, `x` MULTI, `b` blocked, `c` closing,
/// `U` Unix socket, `e` no-evict, then 7.2's `T` no-touch); `N` when none.
fn flags_text(
    s: &ClientShared,
    multi: bool,
    closing: bool,
    unix: bool,
    evict: bool,
    touch: bool,
) -> String {
    let mut flags = String::new();
    let subscribed = s
        .subscriptions
        .iter()
        .any(|n| n.load(Ordering::Relaxed) > 0);
    for (on, f) in [
        (s.monitor.load(Ordering::Relaxed), 'O'),
        (subscribed, 'P'),
        (multi, 'x'),
        (s.blocked.load(Ordering::Relaxed), 'b'),
        (closing, 'c'),
        (unix, 'U'),
        (evict, 'e'),
        (touch, 'T'),
    ] {
        if on {
            flags.push(f);
        }
    }
    if flags.is_empty() {
        flags.push('N');
    }
    flags
}

/// The fields of one CLIENT LIST line the engine can know.
struct Line<'a> {
    id: u64,
    addr: &'a str,
    laddr: &'a str,
    fd: i64,
    name: String,
    age: u64,
    idle: u64,
    flags: String,
    db: u32,
    sub: [u32; 3],
    multi: i64,
    cmd: &'a str,
    user: String,
    resp: u8,
    lib_name: String,
    lib_ver: String,
}

impl Line<'_> {
    /// Redis 7.0.15's layout (and 7.2's lib-name, lib-ver). Buffers, memory and events are
    /// the server's business and not measured: `qbuf`, `qbuf-free`, `argv-mem`,
    /// `multi-mem`, `rbs`, `rbp`, `obl`, `oll`, `omem` and `tot-mem` are 0, `events=r`, and
    /// `fd=-1` for an in-process client.
    fn render(&self) -> String {
        format!(
            "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} \
             ssub={} multi={} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 rbs=0 rbp=0 obl=0 oll=0 \
             omem=0 tot-mem=0 events=r cmd={} user={} redir=-1 resp={} lib-name={} \
             lib-ver={}",
            self.id,
            self.addr,
            self.laddr,
            self.fd,
            self.name,
            self.age,
            self.idle,
            self.flags,
            self.db,
            self.sub[0],
            self.sub[1],
            self.sub[2],
            self.multi,
            self.cmd,
            self.user,
            self.resp,
            self.lib_name,
            self.lib_ver,
        )
    }
}

fn text(v: &Option<Vec<u8>>) -> String {
    v.as_deref().map(lossy).unwrap_or_default()
}

fn subscriptions(s: &ClientShared) -> [u32; 3] {
    [0, 1, 2].map(|i| s.subscriptions[i].load(Ordering::Relaxed))
}

/// One CLIENT INFO / CLIENT LIST line of the calling client (without the newline); `cmd` is
/// the command being run, and `idle` is 0 (the client is running it).
pub fn client_info_line(c: &Client, cmd: &str) -> String {
    let addr = c.addr.as_deref().unwrap_or("");
    let s = &*c.shared;
    Line {
        id: c.id,
        addr,
        laddr: c.laddr.as_deref().unwrap_or(""),
        fd: s.fd.load(Ordering::Relaxed),
        name: text(&c.name),
        age: c.created.elapsed().as_secs(),
        idle: 0,
        flags: flags_text(
            s,
            c.in_multi(),
            c.closing,
            addr.starts_with('/'),
            c.no_evict,
            c.no_touch,
        ),
        db: c.db as u32,
        sub: subscriptions(s),
        multi: c.multi.as_ref().map_or(-1, |q| q.len() as i64),
        cmd,
        user: c.user_name().to_string(),
        resp: c.resp,
        lib_name: text(&c.lib_name),
        lib_ver: text(&c.lib_ver),
    }
    .render()
}

/// Another client's line, from what it published after its last command.
fn other_client_line(s: &ClientShared, now_ms: u64) -> String {
    let names = s
        .names
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let flags = s.flags.load(Ordering::Relaxed);
    let multi = s.multi.load(Ordering::Relaxed);
    let cmd = last_command(s);
    let last = s.last_interaction_ms.load(Ordering::Relaxed);
    let age = s.created.elapsed().as_secs();
    let idle = if last == 0 {
        age
    } else {
        now_ms.saturating_sub(last) / 1000
    };
    Line {
        id: s.id,
        addr: s.addr(),
        laddr: s.laddr(),
        fd: s.fd.load(Ordering::Relaxed),
        name: text(&names.name),
        age,
        idle,
        flags: flags_text(
            s,
            multi >= 0,
            flags & FLAG_CLOSING != 0,
            s.addr().starts_with('/'),
            flags & FLAG_NO_EVICT != 0,
            flags & FLAG_NO_TOUCH != 0,
        ),
        db: s.db.load(Ordering::Relaxed),
        sub: subscriptions(s),
        multi,
        cmd: &cmd,
        user: s.user_name(),
        resp: s.resp.load(Ordering::Relaxed),
        lib_name: text(&names.lib_name),
        lib_ver: text(&names.lib_ver),
    }
    .render()
}

/// The full name of a client's last command (`get`, `client|list`; `NULL` before any, as
/// Redis prints it).
fn last_command(s: &ClientShared) -> String {
    let index = s.last_command.load(Ordering::Relaxed);
    let Some(spec) = spec_at(index as usize) else {
        return "NULL".into();
    };
    let sub = s
        .last_subcommand
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    if let Some(sub) = sub {
        let full = format!("{}|{sub}", spec.name);
        if super::meta::lookup(full.as_bytes()).is_some() {
            return full;
        }
    }
    spec.name.to_string()
}

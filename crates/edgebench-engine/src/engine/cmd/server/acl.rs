//! ACL: SETUSER, GETUSER, DELUSER, LIST, USERS, WHOAMI, CAT, GENPASS, LOG, DRYRUN, LOAD,
//! SAVE and HELP, with Redis 7.0's replies (the users themselves are `engine::acl`'s).
//!
//! Changing or removing a user reaches its clients as Redis does: ACL DELUSER (and ACL LOAD
//! dropping a user) disconnects every client authenticated as it, the caller after the
//! reply; ACL SETUSER that takes a channel away disconnects the user's subscribers whose
//! subscriptions it no longer allows.

use std::io::Read;
use std::sync::Arc;

use super::common::{err, err_owned, help, lossy, sub_arity, sub_syntax, unknown_subcommand};
use super::state::random_hex40;
use crate::engine::acl::catalog::{category_bit, Catalog, CATEGORIES};
use crate::engine::acl::selector::{channel_in, Denied, Selector};
use crate::engine::acl::user::{key_pattern, valid_name, User};
use crate::engine::acl::{self, all_channel_patterns, channels_revoked, file, UserHandle};
use crate::engine::client::Client;
use crate::engine::cmd::{arity_ok, is, parse_i64, Ctx};
use crate::engine::error::CmdError;
use crate::engine::handle::Engine;
use crate::resp::reply::Reply;

/// ACL HELP's lines, as Redis 7.0 prints them.
const ACL_HELP: &[&str] = &[
    "CAT [<category>]",
    "    List all commands that belong to <category>, or all command categories",
    "    when no category is specified.",
    "DELUSER <username> [<username> ...]",
    "    Delete a list of users.",
    "DRYRUN <username> <command> [<arg> ...]",
    "    Returns whether the user can execute the given command without executing the command.",
    "GETUSER <username>",
    "    Get the user's details.",
    "GENPASS [<bits>]",
    "    Generate a secure 256-bit user password. The optional `bits` argument can",
    "    be used to specify a different size.",
    "LIST",
    "    Show users details in config file format.",
    "LOAD",
    "    Reload users from the ACL file.",
    "LOG [<count> | RESET]",
    "    Show the ACL log entries.",
    "SAVE",
    "    Save the current config to the ACL file.",
    "SETUSER <username> <attribute> [<attribute> ...]",
    "    Create or modify a user with the specified attributes.",
    "USERS",
    "    List all the registered usernames.",
    "WHOAMI",
    "    Return the current connection username.",
];

const NO_ACL_FILE: &str = "ERR This Redis instance is not configured to use an ACL file. You \
                           may want to specify users via the ACL SETUSER command and then \
                           issue a CONFIG REWRITE (assuming you have a Redis configuration \
                           file set) in order to store users in the Redis configuration.";

/// ACL <subcommand> ...
pub(super) fn acl(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    let arity = |n: i32, name: &str| sub_arity(args, n, name);
    if is(sub, "setuser") {
        arity(-3, "acl|setuser")?;
        setuser(ctx, args)
    } else if is(sub, "deluser") {
        arity(-3, "acl|deluser")?;
        deluser(ctx, args)
    } else if is(sub, "getuser") {
        arity(3, "acl|getuser")?;
        Ok(getuser(ctx.engine, args[2]))
    } else if is(sub, "list") || is(sub, "users") {
        arity(
            2,
            if is(sub, "list") {
                "acl|list"
            } else {
                "acl|users"
            },
        )?;
        let users = ctx.engine.server().acl.users();
        Ok(Reply::Array(
            users
                .iter()
                .map(|h| {
                    if is(sub, "users") {
                        Reply::bulk(h.name().as_bytes())
                    } else {
                        let line = format!("user {} {}", h.name(), h.read().describe());
                        Reply::Bulk(line.into_bytes())
                    }
                })
                .collect(),
        ))
    } else if is(sub, "whoami") {
        arity(2, "acl|whoami")?;
        Ok(Reply::bulk(ctx.client.user_name().as_bytes()))
    } else if is(sub, "load") || is(sub, "save") {
        arity(
            2,
            if is(sub, "load") {
                "acl|load"
            } else {
                "acl|save"
            },
        )?;
        let path = ctx.engine.config_get("aclfile").unwrap_or_default();
        if path.is_empty() {
            return Err(err(NO_ACL_FILE));
        }
        if is(sub, "load") {
            load(ctx, &path)
        } else {
            save(ctx.engine, &path)
        }
    } else if is(sub, "cat") {
        arity(-2, "acl|cat")?;
        cat(args)
    } else if is(sub, "genpass") {
        arity(-2, "acl|genpass")?;
        genpass(args)
    } else if is(sub, "log") {
        arity(-2, "acl|log")?;
        log(ctx.engine, args)
    } else if is(sub, "dryrun") {
        arity(-4, "acl|dryrun")?;
        dryrun(ctx.engine, args)
    } else if is(sub, "help") {
        arity(2, "acl|help")?;
        Ok(help(args, ACL_HELP))
    } else {
        Err(unknown_subcommand(args))
    }
}

fn setuser(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let name = args[2];
    if !valid_name(name) {
        return Err(err("ERR Usernames can't contain spaces or null characters"));
    }
    let name = lossy(name);
    let acl = &ctx.engine.server().acl;
    let (before, handle) = acl
        .set_user(&name, &args[3..])
        .map_err(|e| err_owned(format!("ERR {e}")))?;
    if let Some(before) = before {
        let after = handle.read().clone();
        if channels_revoked(&before, &after) {
            kill_revoked_subscribers(ctx.engine, ctx.client, &handle, &after);
        }
    }
    Ok(Reply::ok())
}

/// Disconnects the subscribers of `user` holding a channel or pattern it no longer allows.
fn kill_revoked_subscribers(
    engine: &Engine,
    me: &mut Client,
    handle: &Arc<UserHandle>,
    user: &User,
) {
    let allowed = all_channel_patterns(user);
    for s in engine.server().registry.all() {
        if !s.is_user(handle) {
            continue;
        }
        let subs = s.subscribed_names();
        let revoked = subs[0].iter().any(|c| !channel_in(&allowed, c, false))
            || subs[1].iter().any(|p| !channel_in(&allowed, p, true))
            || subs[2].iter().any(|c| !channel_in(&allowed, c, false));
        if revoked {
            if s.id == me.id {
                me.closing = true;
            } else {
                s.kill();
            }
        }
    }
}

fn deluser(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    if args[2..].iter().any(|n| *n == b"default") {
        return Err(err("ERR The 'default' user cannot be removed"));
    }
    let acl = &ctx.engine.server().acl;
    let mut deleted = 0;
    for name in &args[2..] {
        if let Some(handle) = acl.remove_user(name) {
            disconnect_user(ctx.engine, ctx.client, &handle);
            deleted += 1;
        }
    }
    Ok(Reply::Int(deleted))
}

/// Disconnects every client authenticated as `handle` (the caller after its reply).
fn disconnect_user(engine: &Engine, me: &mut Client, handle: &Arc<UserHandle>) {
    for s in engine.server().registry.all() {
        if s.is_user(handle) {
            if s.id == me.id {
                me.closing = true;
            } else {
                s.kill();
            }
        }
    }
}

fn getuser(engine: &Engine, name: &[u8]) -> Reply {
    let Some(handle) = engine.server().acl.user(name) else {
        return Reply::Nil;
    };
    let u = handle.read();
    let field = |k: &str, v: Reply| (Reply::bulk(k.as_bytes()), v);
    let mut fields = vec![
        field(
            "flags",
            Reply::Set(
                u.flags()
                    .iter()
                    .map(|f| Reply::bulk(f.as_bytes()))
                    .collect(),
            ),
        ),
        field(
            "passwords",
            Reply::Array(
                u.passwords
                    .iter()
                    .map(|p| Reply::bulk(p.as_bytes()))
                    .collect(),
            ),
        ),
    ];
    fields.extend(selector_fields(&u.root));
    fields.push(field(
        "selectors",
        Reply::Array(
            u.selectors
                .iter()
                .map(|s| Reply::Map(selector_fields(s)))
                .collect(),
        ),
    ));
    Reply::Map(fields)
}

/// A selector's `commands`, `keys` and `channels` fields.
fn selector_fields(s: &Selector) -> Vec<(Reply, Reply)> {
    let field = |k: &str, v: String| (Reply::bulk(k.as_bytes()), Reply::Bulk(v.into_bytes()));
    let keys = if s.all_keys {
        "~*".to_string()
    } else {
        let parts: Vec<String> = s.keys.iter().map(|(p, f)| key_pattern(p, *f)).collect();
        parts.join(" ")
    };
    let channels = if s.all_channels {
        "&*".to_string()
    } else {
        let parts: Vec<String> = s
            .channels
            .iter()
            .map(|c| format!("&{}", String::from_utf8_lossy(c)))
            .collect();
        parts.join(" ")
    };
    vec![
        field("commands", acl::describe::describe_commands(s)),
        field("keys", keys),
        field("channels", channels),
    ]
}

fn cat(args: &[&[u8]]) -> Result<Reply, CmdError> {
    match args.len() {
        2 => Ok(Reply::Array(
            CATEGORIES
                .iter()
                .map(|c| Reply::bulk(c.as_bytes()))
                .collect(),
        )),
        3 => {
            let name = lossy(args[2]);
            let Some(bit) = category_bit(&name) else {
                let shown: String = name.chars().take(128).collect();
                return Err(err_owned(format!("ERR Unknown category '{shown}'")));
            };
            let catalog = Catalog::get();
            Ok(Reply::Array(
                (0..catalog.len())
                    .filter(|&id| catalog.categories[id] & bit != 0)
                    .map(|id| Reply::bulk(catalog.names[id].as_bytes()))
                    .collect(),
            ))
        }
        _ => Err(sub_syntax(args)),
    }
}

fn genpass(args: &[&[u8]]) -> Result<Reply, CmdError> {
    const MAX_BITS: i64 = 4096;
    let bits = match args.len() {
        2 => 256,
        3 => parse_i64(args[2])?,
        _ => return Err(sub_syntax(args)),
    };
    if bits <= 0 || bits > MAX_BITS {
        return Err(err_owned(format!(
            "ERR ACL GENPASS argument must be the number of bits for the output password, a \
             positive number up to {MAX_BITS}"
        )));
    }
    let chars = ((bits + 3) / 4) as usize;
    Ok(Reply::Bulk(random_hex(chars).into_bytes()))
}

/// `n` random hex digits from the system's random source (falling back to hashed entropy
/// when it cannot be read).
fn random_hex(n: usize) -> String {
    let mut bytes = vec![0u8; n.div_ceil(2)];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    let mut out = String::with_capacity(n + 40);
    if read.is_ok() {
        for b in bytes {
            out.push_str(&format!("{b:02x}"));
        }
    } else {
        while out.len() < n {
            out.push_str(&random_hex40());
        }
    }
    out.truncate(n);
    out
}

fn log(engine: &Engine, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let acl = &engine.server().acl;
    let count = match args.len() {
        2 => 10,
        3 if is(args[2], "reset") => {
            acl.log.reset();
            return Ok(Reply::ok());
        }
        3 => parse_i64(args[2])?.max(0) as usize,
        _ => return Err(sub_syntax(args)),
    };
    Ok(acl.log.reply(count, acl::now_ms()))
}

fn dryrun(engine: &Engine, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let Some(handle) = engine.server().acl.user(args[2]) else {
        return Err(err_owned(format!(
            "ERR User '{}' not found",
            lossy(args[2])
        )));
    };
    let request = &args[3..];
    let catalog = Catalog::get();
    let Some(id) = catalog.lookup_request(request) else {
        return Err(err_owned(format!(
            "ERR Command '{}' not found",
            lossy(args[3])
        )));
    };
    let spec_arity = super::meta::lookup(catalog.names[id].as_bytes()).map_or(0, |m| m.arity);
    if !arity_ok(spec_arity as i32, request.len()) {
        return Err(err_owned(format!(
            "ERR wrong number of arguments for '{}' command",
            catalog.names[id]
        )));
    }
    let result = acl::check(&handle.read(), id, request);
    Ok(match result {
        Ok(()) => Reply::ok(),
        Err(Denied::Command) => Reply::Bulk(
            format!(
                "This user has no permissions to run the '{}' command",
                catalog.names[id]
            )
            .into_bytes(),
        ),
        Err(Denied::Key(at)) => Reply::Bulk(
            format!(
                "This user has no permissions to access the '{}' key",
                lossy(request[at])
            )
            .into_bytes(),
        ),
        Err(Denied::Channel(at)) => Reply::Bulk(
            format!(
                "This user has no permissions to access the '{}' channel",
                lossy(request[at])
            )
            .into_bytes(),
        ),
    })
}

fn load(ctx: &mut Ctx<'_, '_>, path: &str) -> Result<Reply, CmdError> {
    let acl = &ctx.engine.server().acl;
    let users =
        file::load(path, acl.pubsub_default_all()).map_err(|e| err_owned(format!("ERR {e}")))?;
    for dropped in acl.replace_all(users) {
        disconnect_user(ctx.engine, ctx.client, &dropped);
    }
    Ok(Reply::ok())
}

fn save(engine: &Engine, path: &str) -> Result<Reply, CmdError> {
    let users: Vec<User> = engine
        .server()
        .acl
        .users()
        .iter()
        .map(|h| h.read().clone())
        .collect();
    file::save(path, &users).map_err(|_| {
        err(
            "ERR There was an error trying to save the ACLs. Please check the server logs for \
             more information",
        )
    })?;
    Ok(Reply::ok())
}

//! CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO: a client's side of client-side
//! caching, with Redis 7.0's option checks and errors (the table is
//! [`crate::engine::tracking`]).

use super::common::{err, err_owned, sub_arity};
use crate::engine::cmd::{is, parse_i64, Ctx};
use crate::engine::error::CmdError;
use crate::engine::tracking::{overlap, Mode};
use crate::resp::reply::Reply;

/// Runs the tracking subcommand `args[1]` if it is one; `None` otherwise.
pub(super) fn subcommand(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Option<Result<Reply, CmdError>> {
    let sub = args[1];
    Some(if is(sub, "tracking") {
        sub_arity(args, -3, "client|tracking").and_then(|()| tracking(ctx, args))
    } else if is(sub, "caching") {
        sub_arity(args, 3, "client|caching").and_then(|()| caching(ctx, args[2]))
    } else if is(sub, "getredir") {
        sub_arity(args, 2, "client|getredir").map(|()| {
            let mode = ctx.engine.tracking().mode(ctx.client.id);
            Reply::Int(mode.map_or(-1, |m| m.redirect as i64))
        })
    } else if is(sub, "trackinginfo") {
        sub_arity(args, 2, "client|trackinginfo").map(|()| trackinginfo(ctx))
    } else {
        return None;
    })
}

/// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p]... [BCAST] [OPTIN] [OPTOUT] [NOLOOP].
fn tracking(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let mut mode = Mode::default();
    let mut i = 3;
    while i < args.len() {
        let more = i + 1 < args.len();
        let a = args[i];
        if is(a, "redirect") && more {
            i += 1;
            if mode.redirect != 0 {
                return Err(err(
                    "ERR A client can only redirect to a single other client",
                ));
            }
            let id = parse_i64(args[i])?;
            let exists = u64::try_from(id)
                .ok()
                .and_then(|id| ctx.engine.server().registry.get(id));
            match exists {
                Some(target) => mode.redirect = target.id,
                None => return Err(err("ERR The client ID you want redirect to does not exist")),
            }
        } else if is(a, "bcast") {
            mode.bcast = true;
        } else if is(a, "optin") {
            mode.optin = true;
        } else if is(a, "optout") {
            mode.optout = true;
        } else if is(a, "noloop") {
            mode.noloop = true;
        } else if is(a, "prefix") && more {
            i += 1;
            mode.prefixes.push(args[i].to_vec());
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    let id = ctx.client.id;
    let table = ctx.engine.tracking();
    if is(args[2], "off") {
        table.disable(id);
        set_client_mode(ctx, None);
        return Ok(Reply::ok());
    }
    if !is(args[2], "on") {
        return Err(CmdError::Syntax);
    }
    if !mode.bcast && !mode.prefixes.is_empty() {
        return Err(err("ERR PREFIX option requires BCAST mode to be enabled"));
    }
    let old = table.mode(id);
    if let Some(old) = &old {
        if old.bcast != mode.bcast {
            return Err(err(
                "ERR You can't switch BCAST mode on/off before disabling tracking for this \
                 client, and then re-enabling it with a different mode.",
            ));
        }
    }
    if mode.bcast && (mode.optin || mode.optout) {
        return Err(err("ERR OPTIN and OPTOUT are not compatible with BCAST"));
    }
    if mode.optin && mode.optout {
        return Err(err("ERR You can't use both OPTIN and OPTOUT"));
    }
    if let Some(old) = &old {
        if (mode.optin && old.optout) || (mode.optout && old.optin) {
            return Err(err(
                "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this \
                 client, and then re-enabling it with a different mode.",
            ));
        }
    }
    if mode.bcast {
        let existing = old.as_ref().map_or(&[][..], |m| m.prefixes.as_slice());
        check_prefixes(&mode.prefixes, existing)?;
    }
    set_client_mode(ctx, Some(&mode));
    table.enable(id, mode);
    Ok(Reply::ok())
}

/// What the client itself keeps of its mode (read on its command path without the table).
fn set_client_mode(ctx: &mut Ctx<'_, '_>, mode: Option<&Mode>) {
    let c = &mut *ctx.client;
    c.tracking = mode.is_some();
    c.tracking_reads = mode.is_some_and(|m| !m.bcast);
    c.tracking_optin = mode.is_some_and(|m| m.optin);
    c.tracking_optout = mode.is_some_and(|m| m.optout);
    c.caching = false;
}

/// BCAST prefixes must not overlap one another or the client's existing ones (Redis's
/// errors name the two).
fn check_prefixes(new: &[Vec<u8>], existing: &[Vec<u8>]) -> Result<(), CmdError> {
    let show = |p: &[u8]| String::from_utf8_lossy(p).into_owned();
    for (i, p) in new.iter().enumerate() {
        if let Some(e) = existing.iter().find(|e| overlap(e, p)) {
            return Err(err_owned(format!(
                "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single \
                 client must not overlap.",
                show(p),
                show(e)
            )));
        }
        if let Some(q) = new[i + 1..].iter().find(|q| overlap(p, q)) {
            return Err(err_owned(format!(
                "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a \
                 single client must not overlap.",
                show(p),
                show(q)
            )));
        }
    }
    Ok(())
}

/// CLIENT CACHING YES|NO: the next command is (OPTIN) or is not (OPTOUT) remembered.
fn caching(ctx: &mut Ctx<'_, '_>, arg: &[u8]) -> Result<Reply, CmdError> {
    let c = &mut *ctx.client;
    if !c.tracking {
        return Err(err(
            "ERR CLIENT CACHING can be called only when the client is in tracking mode with \
             OPTIN or OPTOUT mode enabled",
        ));
    }
    if is(arg, "yes") {
        if !c.tracking_optin {
            return Err(err(
                "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.",
            ));
        }
    } else if is(arg, "no") {
        if !c.tracking_optout {
            return Err(err(
                "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.",
            ));
        }
    } else {
        return Err(CmdError::Syntax);
    }
    c.caching = true;
    Ok(Reply::ok())
}

/// CLIENT TRACKINGINFO: flags, redirect and prefixes, as Redis orders them.
fn trackinginfo(ctx: &mut Ctx<'_, '_>) -> Reply {
    let mode = ctx.engine.tracking().mode(ctx.client.id);
    let c = &*ctx.client;
    let mut flags: Vec<&str> = Vec::new();
    match &mode {
        None => flags.push("off"),
        Some(m) => {
            flags.push("on");
            if m.bcast {
                flags.push("bcast");
            }
            if m.optin {
                flags.push("optin");
                if c.caching {
                    flags.push("caching-yes");
                }
            }
            if m.optout {
                flags.push("optout");
                if c.caching {
                    flags.push("caching-no");
                }
            }
            if m.noloop {
                flags.push("noloop");
            }
            if m.broken {
                flags.push("broken_redirect");
            }
        }
    }
    let field = |k: &str, v: Reply| (Reply::bulk(k.as_bytes()), v);
    Reply::Map(vec![
        field(
            "flags",
            Reply::Set(flags.iter().map(|f| Reply::bulk(f.as_bytes())).collect()),
        ),
        field(
            "redirect",
            Reply::Int(mode.as_ref().map_or(-1, |m| m.redirect as i64)),
        ),
        field(
            "prefixes",
            Reply::Array(
                mode.iter()
                    .flat_map(|m| m.prefixes.iter())
                    .map(|p| Reply::bulk(p))
                    .collect(),
            ),
        ),
    ])
}

//! SAVE, BGSAVE, LASTSAVE, BGREWRITEAOF and SHUTDOWN, on `engine::persist`.

use super::common::{err, err_owned};
use crate::engine::cmd::{is, Ctx};
use crate::engine::error::CmdError;
use crate::resp::reply::Reply;

pub(super) fn save(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    match ctx.engine.save() {
        Ok(()) => Ok(Reply::ok()),
        Err(e) if e.0.starts_with("ERR ") => Err(err_owned(e.0)),
        // Redis answers a failed SAVE with its shared bare error and logs why.
        Err(e) => Err(err_owned(format!("ERR {e}"))),
    }
}

pub(super) fn bgsave(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let schedule = match args {
        [_] => false,
        [_, a] if is(a, "schedule") => true,
        _ => return Err(CmdError::Syntax),
    };
    ctx.engine
        .bgsave(schedule)
        .map(|t| Reply::Status(t.into()))
        .map_err(err_owned)
}

pub(super) fn bgrewriteaof(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    ctx.engine
        .bgrewriteaof()
        .map(|t| Reply::Status(t.into()))
        .map_err(err_owned)
}

pub(super) fn lastsave(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.engine.lastsave() as i64))
}

/// SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT]: persists as asked (SAVE, NOSAVE, or save
/// points configured), then asks the server serving the engine to close every client and
/// stop; the caller's connection closes. In-process there is no server: the engine persists
/// and answers OK. A failed save refuses to shut down, as redis-server does, unless FORCE.
pub(super) fn shutdown(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let (mut save, mut nosave, mut force, mut abort) = (false, false, false, false);
    for a in &args[1..] {
        if is(a, "save") {
            save = true;
        } else if is(a, "nosave") {
            nosave = true;
        } else if is(a, "force") {
            force = true;
        } else if is(a, "abort") {
            abort = true;
        } else if is(a, "now") {
        } else {
            return Err(CmdError::Syntax);
        }
    }
    if (save && nosave) || (abort && args.len() > 2) {
        return Err(CmdError::Syntax);
    }
    if abort {
        return Err(err("ERR No shutdown in progress."));
    }
    // While a script runs only SHUTDOWN NOSAVE goes through, and it stops the script
    // (redis-server 7.0's rule: the keyspace is half way through the script).
    #[cfg(feature = "scripting")]
    if ctx.engine.script_running() {
        if !nosave {
            return Err(err_owned(
                "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
                    .into(),
            ));
        }
        ctx.engine.stop_script_for_shutdown();
    }
    let choice = if save {
        Some(true)
    } else if nosave {
        Some(false)
    } else {
        None
    };
    if let Err(e) = ctx.engine.persist_before_exit(choice) {
        if !force {
            return Err(err_owned(format!("ERR Errors trying to SHUTDOWN: {e}")));
        }
    }
    ctx.engine.request_shutdown();
    ctx.client.closing = true;
    Ok(Reply::ok())
}

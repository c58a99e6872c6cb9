//! What every group of server commands shares: the Redis version the engine reports, error
//! texts, Redis's subcommand arity check and its HELP layout. A sibling of the groups rather
//! than their parent's, so a group imports it without importing the command table.

use std::borrow::Cow;

use crate::engine::error::CmdError;
use crate::resp::reply::Reply;

/// The Redis version the engine reports (HELLO `version`, INFO `redis_version`).
pub const VERSION: &str = "7.0.15";

pub(crate) fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

pub(crate) fn err_owned(text: String) -> CmdError {
    CmdError::Other(Cow::Owned(text))
}

pub(crate) fn lossy(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).into_owned()
}

/// `ERR unknown subcommand 'x'. Try CLIENT HELP.` (the command as sent, uppercased).
pub(crate) fn unknown_subcommand(args: &[&[u8]]) -> CmdError {
    let sub = &args[1][..args[1].len().min(128)];
    err_owned(format!(
        "ERR unknown subcommand '{}'. Try {} HELP.",
        lossy(sub),
        lossy(args[0]).to_uppercase()
    ))
}

/// `ERR unknown subcommand or wrong number of arguments for 'x'. Try CLIENT HELP.`: Redis's
/// reply when a subcommand's own argument checks fail.
pub(crate) fn sub_syntax(args: &[&[u8]]) -> CmdError {
    let sub = &args[1][..args[1].len().min(128)];
    err_owned(format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
        lossy(sub),
        lossy(args[0]).to_uppercase()
    ))
}

/// Redis's subcommand arity check: `n` exactly, `-n` at least.
pub(crate) fn sub_arity(args: &[&[u8]], arity: i32, full_name: &str) -> Result<(), CmdError> {
    let ok = if arity >= 0 {
        args.len() == arity as usize
    } else {
        args.len() >= arity.unsigned_abs() as usize
    };
    if ok {
        Ok(())
    } else {
        Err(CmdError::Arity(full_name.to_string()))
    }
}

/// A HELP reply in Redis's layout.
pub(crate) fn help(args: &[&[u8]], lines: &[&'static str]) -> Reply {
    let mut out = vec![Reply::Status(
        format!(
            "{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            lossy(args[0]).to_uppercase()
        )
        .into(),
    )];
    out.extend(lines.iter().map(|l| Reply::Status(Cow::Borrowed(l))));
    out.push(Reply::Status("HELP".into()));
    out.push(Reply::Status("    Prints this help.".into()));
    Reply::Array(out)
}

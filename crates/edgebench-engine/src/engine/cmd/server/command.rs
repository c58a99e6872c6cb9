//! COMMAND: the command table as Redis 7.0 reports it (COUNT, INFO, DOCS, LIST, GETKEYS).

use std::borrow::Cow;

use super::common::{err, help, sub_arity, unknown_subcommand};
use super::config::glob_match_nocase;
use crate::engine::cmd::{all_commands, is, lookup, Ctx, KeySpec, Spec};
use crate::engine::error::CmdError;
use crate::resp::reply::Reply;

const COMMAND_HELP: &[&str] = &[
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
];

/// Every command, sorted by name (Redis's order is its hash table's).
fn sorted_commands() -> Vec<&'static Spec> {
    let mut specs: Vec<&'static Spec> = all_commands().collect();
    specs.sort_unstable_by_key(|s| s.name);
    specs
}

pub(super) fn command(_: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let Some(&sub) = args.get(1) else {
        return Ok(Reply::Array(
            sorted_commands().into_iter().map(command_info).collect(),
        ));
    };
    if is(sub, "count") {
        sub_arity(args, 2, "command|count")?;
        Ok(Reply::Int(all_commands().count() as i64))
    } else if is(sub, "info") {
        sub_arity(args, -2, "command|info")?;
        if args.len() == 2 {
            return Ok(Reply::Array(
                sorted_commands().into_iter().map(command_info).collect(),
            ));
        }
        Ok(Reply::Array(
            args[2..]
                .iter()
                .map(|name| lookup(name).map_or(Reply::Nil, command_info))
                .collect(),
        ))
    } else if is(sub, "docs") {
        sub_arity(args, -2, "command|docs")?;
        let specs: Vec<&'static Spec> = if args.len() == 2 {
            sorted_commands()
        } else {
            args[2..].iter().filter_map(|n| lookup(n)).collect()
        };
        Ok(Reply::Map(
            specs
                .into_iter()
                .map(|s| (Reply::bulk(s.name.as_bytes()), command_docs()))
                .collect(),
        ))
    } else if is(sub, "list") {
        sub_arity(args, -2, "command|list")?;
        command_list(args)
    } else if is(sub, "getkeys") {
        sub_arity(args, -4, "command|getkeys")?;
        command_getkeys(&args[2..])
    } else if is(sub, "help") {
        sub_arity(args, 2, "command|help")?;
        Ok(help(args, COMMAND_HELP))
    } else {
        Err(unknown_subcommand(args))
    }
}

/// COMMAND INFO's ten fields: name, arity, flags, first key, last key, step, ACL
/// categories, tips, key specs, subcommands. Flags and categories say only what the table
/// knows (write, readonly, movablekeys); tips, key specs and subcommands are empty.
pub fn command_info(spec: &Spec) -> Reply {
    let status = |s: &'static str| Reply::Status(Cow::Borrowed(s));
    let mut flags = Vec::new();
    let mut categories = Vec::new();
    if spec.write {
        flags.push(status("write"));
        categories.push(status("@write"));
    } else if !matches!(spec.keys, KeySpec::None) {
        flags.push(status("readonly"));
        categories.push(status("@read"));
    }
    if matches!(spec.keys, KeySpec::Custom(_) | KeySpec::CustomOrAll(_)) {
        flags.push(status("movablekeys"));
    }
    let (first, last, step) = match spec.keys {
        KeySpec::Range { first, last, step } => (first as i64, last as i64, step as i64),
        _ => (0, 0, 0),
    };
    Reply::Array(vec![
        Reply::bulk(spec.name.as_bytes()),
        Reply::Int(i64::from(spec.arity)),
        Reply::Set(flags),
        Reply::Int(first),
        Reply::Int(last),
        Reply::Int(step),
        Reply::Set(categories),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
    ])
}

/// COMMAND DOCS for one command: a minimal map with the fields redis-cli reads (summary,
/// since, group); the engine carries no documentation.
fn command_docs() -> Reply {
    let field = |k: &str, v: &str| (Reply::bulk(k.as_bytes()), Reply::bulk(v.as_bytes()));
    Reply::Map(vec![
        field("summary", ""),
        field("since", "1.0.0"),
        field("group", "generic"),
    ])
}

/// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern].
fn command_list(args: &[&[u8]]) -> Result<Reply, CmdError> {
    let names = |keep: &dyn Fn(&Spec) -> bool| {
        Reply::Array(
            sorted_commands()
                .into_iter()
                .filter(|s| keep(s))
                .map(|s| Reply::bulk(s.name.as_bytes()))
                .collect(),
        )
    };
    match args {
        [_, _] => Ok(names(&|_| true)),
        [_, _, by, kind, value] if is(by, "filterby") => {
            if is(kind, "pattern") {
                Ok(names(&|s| glob_match_nocase(value, s.name)))
            } else if is(kind, "module") {
                Ok(Reply::Array(Vec::new()))
            } else if is(kind, "aclcat") {
                let (write, read) = (is(value, "write"), is(value, "read"));
                Ok(names(&|s| {
                    (write && s.write) || (read && !s.write && !matches!(s.keys, KeySpec::None))
                }))
            } else {
                Err(CmdError::Syntax)
            }
        }
        _ => Err(CmdError::Syntax),
    }
}

/// COMMAND GETKEYS command arg...: the key arguments, from the command's key spec.
fn command_getkeys(cmd: &[&[u8]]) -> Result<Reply, CmdError> {
    let Some(spec) = lookup(cmd[0]) else {
        return Err(err("ERR Invalid command specified"));
    };
    if matches!(spec.keys, KeySpec::None | KeySpec::All) {
        return Err(err("ERR The command has no key arguments"));
    }
    let arity_ok = if spec.arity >= 0 {
        cmd.len() == spec.arity as usize
    } else {
        cmd.len() >= spec.arity.unsigned_abs() as usize
    };
    if !arity_ok {
        return Err(err("ERR Invalid number of arguments specified for command"));
    }
    let keys = spec.key_indices(cmd);
    if keys.is_empty() {
        return Err(err("ERR Invalid arguments specified for command"));
    }
    Ok(Reply::Array(
        keys.into_iter().map(|i| Reply::bulk(cmd[i])).collect(),
    ))
}

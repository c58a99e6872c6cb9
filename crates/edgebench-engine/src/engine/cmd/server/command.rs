//! COMMAND: the command table as Redis 7.0 reports it (COUNT, INFO, DOCS, LIST, GETKEYS,
//! GETKEYSANDFLAGS), from the metadata table in [`super::meta`] restricted to the commands
//! the engine dispatches.

use std::borrow::Cow;

use super::common::{err, help, sub_arity, unknown_subcommand};
use super::config::glob_match_nocase;
use super::meta::{self, BeginSearch, CommandMeta, FindKeys, KeySpecMeta};
use crate::engine::cmd::{all_commands, is, lookup, parse_i64, Ctx, KeySpec, Spec};
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
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full Redis command.",
];

/// Every dispatched command, sorted by name (Redis's order is its hash table's).
fn sorted_commands() -> Vec<&'static Spec> {
    let mut specs: Vec<&'static Spec> = all_commands().collect();
    specs.sort_unstable_by_key(|s| s.name);
    specs
}

/// The metadata of a command (`get`) or subcommand (`client|list`) the engine runs: a
/// subcommand counts when its container is dispatched.
fn implemented(name: &[u8]) -> Option<&'static CommandMeta> {
    let meta = meta::lookup(name)?;
    let top = meta.name.split('|').next().unwrap_or_default();
    lookup(top.as_bytes()).map(|_| meta)
}

/// Every dispatched command's metadata, sorted by name.
fn implemented_metas() -> impl Iterator<Item = &'static CommandMeta> {
    sorted_commands()
        .into_iter()
        .filter_map(|s| meta::lookup(s.name.as_bytes()))
}

pub(super) fn command(_: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let Some(&sub) = args.get(1) else {
        return Ok(all_infos());
    };
    if is(sub, "count") {
        sub_arity(args, 2, "command|count")?;
        Ok(Reply::Int(all_commands().count() as i64))
    } else if is(sub, "info") {
        sub_arity(args, -2, "command|info")?;
        if args.len() == 2 {
            return Ok(all_infos());
        }
        Ok(Reply::Array(
            args[2..]
                .iter()
                .map(|name| implemented(name).map_or(Reply::Nil, |m| m.info.clone()))
                .collect(),
        ))
    } else if is(sub, "docs") {
        sub_arity(args, -2, "command|docs")?;
        Ok(command_docs(&args[2..]))
    } else if is(sub, "list") {
        sub_arity(args, -2, "command|list")?;
        command_list(args)
    } else if is(sub, "getkeys") {
        sub_arity(args, -4, "command|getkeys")?;
        command_getkeys(&args[2..], false)
    } else if is(sub, "getkeysandflags") {
        sub_arity(args, -4, "command|getkeysandflags")?;
        command_getkeys(&args[2..], true)
    } else if is(sub, "help") {
        sub_arity(args, 2, "command|help")?;
        Ok(help(args, COMMAND_HELP))
    } else {
        Err(unknown_subcommand(args))
    }
}

fn all_infos() -> Reply {
    Reply::Array(implemented_metas().map(|m| m.info.clone()).collect())
}

/// COMMAND INFO's record for a dispatched command: Redis 7.0's, from the metadata table (a
/// command without metadata, which the unit tests forbid, gets a record built from its
/// spec).
pub fn command_info(spec: &Spec) -> Reply {
    match meta::lookup(spec.name.as_bytes()) {
        Some(m) => m.info.clone(),
        None => bare_info(spec),
    }
}

fn bare_info(spec: &Spec) -> Reply {
    let (first, last, step) = match spec.keys {
        KeySpec::Range { first, last, step } => (first as i64, last as i64, step as i64),
        _ => (0, 0, 0),
    };
    let flag = if spec.write { "write" } else { "readonly" };
    Reply::Array(vec![
        Reply::bulk(spec.name.as_bytes()),
        Reply::Int(i64::from(spec.arity)),
        Reply::Set(vec![Reply::Status(Cow::Borrowed(flag))]),
        Reply::Int(first),
        Reply::Int(last),
        Reply::Int(step),
        Reply::Set(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
    ])
}

/// COMMAND DOCS [name ...]: a map of full name to documentation; unknown names are skipped.
fn command_docs(names: &[&[u8]]) -> Reply {
    let entry = |m: &'static CommandMeta| {
        let docs = m.docs.clone().unwrap_or(Reply::Map(Vec::new()));
        (Reply::bulk(m.name.as_bytes()), docs)
    };
    if names.is_empty() {
        return Reply::Map(implemented_metas().map(entry).collect());
    }
    Reply::Map(
        names
            .iter()
            .filter_map(|n| implemented(n))
            .map(entry)
            .collect(),
    )
}

/// What COMMAND LIST keeps.
enum ListFilter<'a> {
    All,
    /// No module is loaded: nothing.
    Module,
    AclCategory(&'a [u8]),
    Pattern(&'a [u8]),
}

impl ListFilter<'_> {
    fn keeps(&self, m: &CommandMeta) -> bool {
        match self {
            ListFilter::All => true,
            ListFilter::Module => false,
            ListFilter::AclCategory(cat) => m.categories.iter().any(|c| is(cat, c)),
            ListFilter::Pattern(p) => glob_match_nocase(p, &m.name),
        }
    }
}

/// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern]: commands and
/// their subcommands (`client|list`); a later FILTERBY replaces an earlier one, as in Redis.
fn command_list(args: &[&[u8]]) -> Result<Reply, CmdError> {
    let mut filter = ListFilter::All;
    let mut i = 2;
    while i < args.len() {
        if !(is(args[i], "filterby") && args.len() - 1 - i == 2) {
            return Err(CmdError::Syntax);
        }
        let (kind, value) = (args[i + 1], args[i + 2]);
        filter = if is(kind, "module") {
            ListFilter::Module
        } else if is(kind, "aclcat") {
            ListFilter::AclCategory(value)
        } else if is(kind, "pattern") {
            ListFilter::Pattern(value)
        } else {
            return Err(CmdError::Syntax);
        };
        i += 3;
    }
    let mut out = Vec::new();
    for m in implemented_metas() {
        let subs = m
            .subcommands
            .iter()
            .filter_map(|s| meta::lookup(s.as_bytes()));
        for m in std::iter::once(m).chain(subs) {
            if filter.keeps(m) {
                out.push(Reply::bulk(m.name.as_bytes()));
            }
        }
    }
    Ok(Reply::Array(out))
}

/// The command (or subcommand, for a container) a full command line names, as Redis's
/// `lookupCommand` finds it.
fn command_of(cmd: &[&[u8]]) -> Option<&'static CommandMeta> {
    let base = implemented(cmd[0]).filter(|m| !m.name.contains('|'))?;
    match cmd.get(1) {
        Some(sub) if !base.subcommands.is_empty() => {
            let mut full = base.name.clone().into_bytes();
            full.push(b'|');
            full.extend_from_slice(sub);
            meta::lookup(&full)
        }
        _ => Some(base),
    }
}

/// COMMAND GETKEYS / GETKEYSANDFLAGS command arg...: the key arguments as Redis finds them,
/// from the command's key specs (or, where Redis's key specs are not enough, as its key
/// functions do).
fn command_getkeys(cmd: &[&[u8]], with_flags: bool) -> Result<Reply, CmdError> {
    let Some(m) = command_of(cmd) else {
        return Err(err("ERR Invalid command specified"));
    };
    let has_keys = m.key_specs.iter().any(|s| !s.has_flag("not_key"));
    if !has_keys && !m.has_flag("movablekeys") {
        return Err(err("ERR The command has no key arguments"));
    }
    let arity_ok = if m.arity >= 0 {
        cmd.len() as i64 == m.arity
    } else {
        cmd.len() as i64 >= -m.arity
    };
    if !arity_ok {
        return Err(err("ERR Invalid number of arguments specified for command"));
    }
    let keys = keys_of(m, cmd);
    if keys.is_empty() {
        if m.has_flag("no_mandatory_keys") {
            return Ok(Reply::Array(Vec::new()));
        }
        return Err(err("ERR Invalid arguments specified for command"));
    }
    Ok(Reply::Array(
        keys.into_iter()
            .map(|(i, flags)| {
                let key = Reply::bulk(cmd[i]);
                if with_flags {
                    let flags = flags
                        .iter()
                        .map(|f| Reply::Status(Cow::Owned(f.to_string())))
                        .collect();
                    Reply::Array(vec![key, Reply::Set(flags)])
                } else {
                    key
                }
            })
            .collect(),
    ))
}

/// The key positions of `cmd` with their flags: from the key specs when they describe the
/// command fully, otherwise (a spec that does not fit the arguments, flags that vary) as
/// Redis's key function for the command does.
pub(crate) fn keys_of(m: &CommandMeta, cmd: &[&[u8]]) -> Vec<(usize, Vec<&'static str>)> {
    // SORT's STORE key has no key spec Redis can run (it is "unknown"): its key function.
    if m.name == "sort" {
        return sort_keys(cmd);
    }
    let varflags = m.key_specs.iter().any(|s| s.has_flag("variable_flags"));
    if !varflags {
        if let Some(keys) = keys_from_specs(m, cmd) {
            return keys;
        }
    }
    match m.name.as_str() {
        "set" => {
            let get = cmd.iter().skip(3).any(|a| is(a, "get"));
            let flags = if get {
                vec!["RW", "access", "update"]
            } else {
                vec!["OW", "update"]
            };
            vec![(1, flags)]
        }
        "bitfield" => vec![(1, bitfield_flags(cmd))],
        "migrate" => migrate_keys(cmd),
        // Redis's other key functions find nothing where the key specs fail: the
        // command would reply with a syntax error.
        _ => Vec::new(),
    }
}

/// SORT's keys as Redis's `sortGetKeys` finds them: the sorted key, and the last STORE
/// key, skipping LIMIT's two arguments and BY's and GET's one (other words are skipped
/// unchecked: the command itself reports a syntax error).
fn sort_keys(cmd: &[&[u8]]) -> Vec<(usize, Vec<&'static str>)> {
    let mut keys = vec![(1, vec!["RO", "access"])];
    let mut store = None;
    let mut i = 2;
    while i < cmd.len() {
        if is(cmd[i], "limit") {
            i += 2;
        } else if is(cmd[i], "get") || is(cmd[i], "by") {
            i += 1;
        } else if is(cmd[i], "store") && i + 1 < cmd.len() {
            store = Some(i + 1);
        }
        i += 1;
    }
    keys.extend(store.map(|s| (s, vec!["OW", "update"])));
    keys
}

/// Runs every key spec (Redis's `getKeysUsingKeySpecs`); `None` when one does not fit.
fn keys_from_specs(m: &CommandMeta, cmd: &[&[u8]]) -> Option<Vec<(usize, Vec<&'static str>)>> {
    let argc = cmd.len() as i64;
    let mut out = Vec::new();
    for spec in m.key_specs.iter().filter(|s| !s.has_flag("not_key")) {
        let Some(first) = spec_start(spec, cmd) else {
            continue;
        };
        let (first, last, step) = match spec.find {
            FindKeys::Range {
                lastkey,
                keystep,
                limit,
            } => {
                let last = if lastkey >= 0 {
                    first + lastkey
                } else if limit == 0 {
                    argc + lastkey
                } else {
                    first + ((argc - first) / limit + lastkey)
                };
                (first, last, keystep)
            }
            FindKeys::Keynum {
                keynumidx,
                firstkey,
                keystep,
            } => {
                let at = usize::try_from(first + keynumidx).ok()?;
                let n = parse_i64(cmd.get(at)?).ok().filter(|&n| n >= 0)?;
                let first = first + firstkey;
                (first, first.checked_add(n)? - 1, keystep)
            }
            FindKeys::Unknown => return None,
        };
        if last >= argc || last < first || first >= argc {
            return None;
        }
        let flags = static_flags(&spec.flags);
        let mut i = first;
        while i <= last {
            out.push((i as usize, flags.clone()));
            i += step.max(1);
        }
        if spec.has_flag("incomplete") {
            return None;
        }
    }
    Some(out)
}

/// Where a key spec starts: its index, or the argument after its keyword; `None` when
/// the keyword is absent (the spec finds no key).
fn spec_start(spec: &KeySpecMeta, cmd: &[&[u8]]) -> Option<i64> {
    let argc = cmd.len() as i64;
    match &spec.begin {
        BeginSearch::Index(i) => Some(*i),
        BeginSearch::Keyword { keyword, startfrom } => {
            let (start, end) = if *startfrom > 0 {
                (*startfrom, argc - 1)
            } else {
                (argc + startfrom, 1)
            };
            let mut i = start;
            while i != end {
                if i >= argc || i < 1 {
                    break;
                }
                if cmd[i as usize].eq_ignore_ascii_case(keyword) {
                    return Some(i + 1);
                }
                i += if start <= end { 1 } else { -1 };
            }
            None
        }
        BeginSearch::Unknown => None,
    }
}

/// The flag names COMMAND GETKEYSANDFLAGS prints, in Redis's order.
const KEY_FLAGS: &[&str] = &[
    "RO",
    "RW",
    "OW",
    "RM",
    "access",
    "update",
    "insert",
    "delete",
    "not_key",
    "incomplete",
    "variable_flags",
];

fn static_flags(flags: &[String]) -> Vec<&'static str> {
    KEY_FLAGS
        .iter()
        .copied()
        .filter(|f| flags.iter().any(|g| g == f))
        .collect()
}

/// BITFIELD's key is read-only when every operation is a GET (Redis's key function).
fn bitfield_flags(cmd: &[&[u8]]) -> Vec<&'static str> {
    let mut readonly = true;
    let mut i = 2;
    while i < cmd.len() {
        let more = cmd.len() - i - 1;
        if is(cmd[i], "get") && more >= 2 {
            i += 3;
        } else if (is(cmd[i], "set") || is(cmd[i], "incrby")) && more >= 3 {
            readonly = false;
            break;
        } else if is(cmd[i], "overflow") && more >= 1 {
            i += 2;
        } else {
            readonly = false;
            break;
        }
    }
    if readonly {
        vec!["RO", "access"]
    } else {
        vec!["RW", "access", "update"]
    }
}

/// MIGRATE's keys: the key argument, or those after KEYS when the key argument is empty.
fn migrate_keys(cmd: &[&[u8]]) -> Vec<(usize, Vec<&'static str>)> {
    crate::engine::cmd::dump::migrate::key_positions(cmd)
        .into_iter()
        .map(|i| (i, vec!["RW", "access", "delete"]))
        .collect()
}

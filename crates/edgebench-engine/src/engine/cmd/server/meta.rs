//! The command metadata table: what COMMAND INFO and COMMAND DOCS say about each of Redis
//! 7.0's commands (arity, flags, legacy key positions, ACL categories, tips, key specs,
//! subcommands; and the documentation's structure: since, group, arguments, history).
//!
//! The table covers every command of Redis 7.0.15, not only those the engine runs: families
//! add commands independently, and COMMAND reports the ones present in the dispatch table
//! ([`crate::engine::cmd::all_commands`]) with the record found here. A unit test fails when a
//! dispatched command has no record.
//!
//! The records are interface facts, generated once from a running redis-server 7.0.15 by
//! `scripts/gen_command_table.py` into two RESP3 files (`meta/*.resp`) that are embedded and
//! decoded on first use. The documentation's prose (summaries, complexity texts, history
//! notes) is the engine's own: the script replaces Redis's.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use crate::resp::reply::Reply;

/// COMMAND INFO records, a RESP3 array sorted by name.
const INFO_RESP: &[u8] = include_bytes!("meta/command_info.resp");
/// COMMAND DOCS records, a RESP3 map of name to record, sorted by name.
const DOCS_RESP: &[u8] = include_bytes!("meta/command_docs.resp");

/// Where a key spec starts looking for keys (COMMAND INFO's `begin_search`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BeginSearch {
    /// At this argument index.
    Index(i64),
    /// After this keyword, searched from `startfrom` (negative: from the end, backwards).
    Keyword { keyword: Vec<u8>, startfrom: i64 },
    /// The command finds its keys itself.
    Unknown,
}

/// How a key spec finds its keys once it began (COMMAND INFO's `find_keys`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FindKeys {
    /// Keys up to `lastkey` (relative to the start; negative from the end), every
    /// `keystep`; `limit` > 0 keeps 1/limit of the remaining arguments.
    Range {
        lastkey: i64,
        keystep: i64,
        limit: i64,
    },
    /// A count of keys at `keynumidx` (relative to the start), the first key `firstkey`
    /// after the start.
    Keynum {
        keynumidx: i64,
        firstkey: i64,
        keystep: i64,
    },
    /// The command finds its keys itself.
    Unknown,
}

/// One key spec: its flags (as COMMAND INFO lists them) and how keys are found.
#[derive(Debug, Clone)]
pub(crate) struct KeySpecMeta {
    pub(crate) flags: Vec<String>,
    pub(crate) begin: BeginSearch,
    pub(crate) find: FindKeys,
}

impl KeySpecMeta {
    pub(crate) fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}

/// A command's (or subcommand's) metadata.
#[derive(Debug)]
pub(crate) struct CommandMeta {
    /// `get`, or `client|list` for a subcommand.
    pub(crate) name: String,
    pub(crate) arity: i64,
    /// COMMAND INFO's flags (`write`, `readonly`, `no-mandatory-keys`...).
    pub(crate) flags: Vec<String>,
    /// ACL categories without the `@`.
    pub(crate) categories: Vec<String>,
    pub(crate) key_specs: Vec<KeySpecMeta>,
    /// The subcommands' names (`client|list`...), in Redis's order.
    pub(crate) subcommands: Vec<String>,
    /// The COMMAND INFO record as Redis sends it.
    pub(crate) info: Reply,
    /// The COMMAND DOCS record (with the engine's own texts).
    pub(crate) docs: Option<Reply>,
}

impl CommandMeta {
    pub(crate) fn has_flag(&self, flag: &str) -> bool {
        self.flags.iter().any(|f| f == flag)
    }
}

/// Every command and subcommand, by lowercase full name.
pub(crate) fn table() -> &'static HashMap<String, CommandMeta> {
    static TABLE: OnceLock<HashMap<String, CommandMeta>> = OnceLock::new();
    TABLE.get_or_init(build)
}

/// The metadata of a command or subcommand (`get`, `client|list`), any case.
pub(crate) fn lookup(name: &[u8]) -> Option<&'static CommandMeta> {
    let name = std::str::from_utf8(name).ok()?.to_ascii_lowercase();
    table().get(&name)
}

/// The metadata of the command a request runs, as Redis's `lookupCommand` finds it: the
/// subcommand's (`config|set`) for a command with subcommands, whose flags are its own.
pub(crate) fn lookup_request(args: &[&[u8]]) -> Option<&'static CommandMeta> {
    let base = lookup(args.first()?)?;
    match args.get(1) {
        Some(sub) if !base.subcommands.is_empty() => {
            let mut full = base.name.clone().into_bytes();
            full.push(b'|');
            full.extend_from_slice(sub);
            lookup(&full).or(Some(base))
        }
        _ => Some(base),
    }
}

fn build() -> HashMap<String, CommandMeta> {
    let mut out = HashMap::new();
    let infos = match decode(INFO_RESP) {
        Some((Reply::Array(items), _)) => items,
        _ => Vec::new(),
    };
    let mut docs: HashMap<String, Reply> = match decode(DOCS_RESP) {
        Some((Reply::Map(pairs), _)) => pairs
            .into_iter()
            .filter_map(|(k, v)| Some((string(&k)?, v)))
            .collect(),
        _ => HashMap::new(),
    };
    for info in infos {
        let doc = record_name(&info).and_then(|n| docs.remove(&n));
        insert(&mut out, info, doc);
    }
    out
}

/// Adds a record and, recursively, its subcommands' (with their docs from `doc`).
fn insert(out: &mut HashMap<String, CommandMeta>, info: Reply, doc: Option<Reply>) {
    let Reply::Array(fields) = &info else { return };
    let Some(name) = record_name(&info) else {
        return;
    };
    let strings = |i: usize| -> Vec<String> {
        match fields.get(i) {
            Some(Reply::Set(items) | Reply::Array(items)) => {
                items.iter().filter_map(string).collect()
            }
            _ => Vec::new(),
        }
    };
    let flags = strings(2);
    let categories = strings(6)
        .into_iter()
        .map(|c| c.trim_start_matches('@').to_string())
        .collect();
    let key_specs = match fields.get(8) {
        Some(Reply::Set(specs) | Reply::Array(specs)) => {
            specs.iter().filter_map(key_spec).collect()
        }
        _ => Vec::new(),
    };
    let subs: Vec<Reply> = match fields.get(9) {
        Some(Reply::Set(subs) | Reply::Array(subs)) => subs.clone(),
        _ => Vec::new(),
    };
    let mut sub_docs: HashMap<String, Reply> =
        match doc.as_ref().and_then(|d| map_get(d, "subcommands")) {
            Some(Reply::Map(pairs)) => pairs
                .iter()
                .filter_map(|(k, v)| Some((string(k)?, v.clone())))
                .collect(),
            _ => HashMap::new(),
        };
    let subcommands = subs.iter().filter_map(record_name).collect();
    let arity = match fields.get(1) {
        Some(Reply::Int(n)) => *n,
        _ => 0,
    };
    for sub in subs {
        let sub_doc = record_name(&sub).and_then(|n| sub_docs.remove(&n));
        insert(out, sub, sub_doc);
    }
    out.insert(
        name.clone(),
        CommandMeta {
            name,
            arity,
            flags,
            categories,
            key_specs,
            subcommands,
            info,
            docs: doc,
        },
    );
}

fn record_name(info: &Reply) -> Option<String> {
    match info {
        Reply::Array(fields) => fields.first().and_then(string),
        _ => None,
    }
}

fn string(r: &Reply) -> Option<String> {
    match r {
        Reply::Bulk(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Reply::Status(s) => Some(s.to_string()),
        _ => None,
    }
}

/// The value under `key` in a RESP3 map.
pub(crate) fn map_get<'a>(map: &'a Reply, key: &str) -> Option<&'a Reply> {
    match map {
        Reply::Map(pairs) => pairs
            .iter()
            .find(|(k, _)| string(k).as_deref() == Some(key))
            .map(|(_, v)| v),
        _ => None,
    }
}

fn int_at(map: &Reply, key: &str) -> i64 {
    match map_get(map, key) {
        Some(Reply::Int(n)) => *n,
        _ => 0,
    }
}

fn key_spec(spec: &Reply) -> Option<KeySpecMeta> {
    let flags = match map_get(spec, "flags")? {
        Reply::Set(items) | Reply::Array(items) => items.iter().filter_map(string).collect(),
        _ => Vec::new(),
    };
    let bs = map_get(spec, "begin_search")?;
    let bs_spec = map_get(bs, "spec");
    let begin = match (map_get(bs, "type").and_then(string).as_deref(), bs_spec) {
        (Some("index"), Some(s)) => BeginSearch::Index(int_at(s, "index")),
        (Some("keyword"), Some(s)) => BeginSearch::Keyword {
            keyword: map_get(s, "keyword")
                .and_then(string)
                .unwrap_or_default()
                .into_bytes(),
            startfrom: int_at(s, "startfrom"),
        },
        _ => BeginSearch::Unknown,
    };
    let fk = map_get(spec, "find_keys")?;
    let fk_spec = map_get(fk, "spec");
    let find = match (map_get(fk, "type").and_then(string).as_deref(), fk_spec) {
        (Some("range"), Some(s)) => FindKeys::Range {
            lastkey: int_at(s, "lastkey"),
            keystep: int_at(s, "keystep"),
            limit: int_at(s, "limit"),
        },
        (Some("keynum"), Some(s)) => FindKeys::Keynum {
            keynumidx: int_at(s, "keynumidx"),
            firstkey: int_at(s, "firstkey"),
            keystep: int_at(s, "keystep"),
        },
        _ => FindKeys::Unknown,
    };
    Some(KeySpecMeta { flags, begin, find })
}

// ---- a RESP3 decoder for the embedded files ----

/// Decodes one RESP3 value at the start of `buf`: the value and the bytes it took. Only the
/// types the generator writes (`+ - : $ * ~ % _`); `None` on anything else.
fn decode(buf: &[u8]) -> Option<(Reply, usize)> {
    let end = buf.windows(2).position(|w| w == b"\r\n")?;
    let (kind, line) = (*buf.first()?, std::str::from_utf8(&buf[1..end]).ok()?);
    let mut used = end + 2;
    let reply = match kind {
        b'+' => Reply::Status(Cow::Owned(line.to_string())),
        b'-' => Reply::Error(Cow::Owned(line.to_string())),
        b':' => Reply::Int(line.parse().ok()?),
        b'_' => Reply::Nil,
        b'$' => {
            let n: usize = line.parse().ok()?;
            let data = buf.get(used..used + n)?.to_vec();
            used += n + 2;
            Reply::Bulk(data)
        }
        b'*' | b'~' => {
            let n: usize = line.parse().ok()?;
            let mut items = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                let (item, took) = decode(buf.get(used..)?)?;
                used += took;
                items.push(item);
            }
            if kind == b'*' {
                Reply::Array(items)
            } else {
                Reply::Set(items)
            }
        }
        b'%' => {
            let n: usize = line.parse().ok()?;
            let mut pairs = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                let (k, took) = decode(buf.get(used..)?)?;
                used += took;
                let (v, took) = decode(buf.get(used..)?)?;
                used += took;
                pairs.push((k, v));
            }
            Reply::Map(pairs)
        }
        _ => return None,
    };
    Some((reply, used))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::cmd::all_commands;

    #[test]
    fn the_table_holds_redis_7_0s_commands() {
        let top = table().keys().filter(|n| !n.contains('|')).count();
        assert_eq!(top, 240);
        let get = lookup(b"GET").expect("get");
        assert_eq!(get.arity, 2);
        assert_eq!(get.flags, ["readonly", "fast"]);
        assert_eq!(get.categories, ["read", "string", "fast"]);
        assert_eq!(get.key_specs.len(), 1);
        assert_eq!(get.key_specs[0].begin, BeginSearch::Index(1));
        assert!(get.docs.is_some());
        let list = lookup(b"client|LIST").expect("client|list");
        assert_eq!(list.arity, -2);
        assert!(lookup(b"client")
            .expect("client")
            .subcommands
            .iter()
            .any(|s| s == "client|list"));
    }

    /// A command dispatched without metadata would be missing from COMMAND: every family's
    /// new command must be a Redis 7.0 command the table knows.
    #[test]
    fn every_dispatched_command_has_metadata() {
        let missing: Vec<&str> = all_commands()
            .map(|s| s.name)
            .filter(|n| lookup(n.as_bytes()).is_none())
            .collect();
        assert!(missing.is_empty(), "no metadata for {missing:?}");
    }

    #[test]
    fn the_decoder_rejects_truncated_input() {
        assert!(decode(b"*2\r\n:1\r\n").is_none());
        assert!(decode(b"$5\r\nab\r\n").is_none());
        assert_eq!(decode(b"%1\r\n+a\r\n_\r\n").map(|(_, n)| n), Some(11));
    }
}

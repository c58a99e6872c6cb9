//! ACL's view of the command table: every Redis 7.0 command and subcommand numbered (its bit
//! in a selector's bitmap), with its ACL categories and its place in the command tree.
//!
//! Built once from the metadata table ([`crate::engine::cmd::server::meta`]), so rules may
//! name any Redis 7.0 command, also one the engine does not run (as Redis accepts rules for
//! commands it knows). Top-level commands are numbered in name order, each followed by its
//! subcommands: the order ACL CAT lists them and ACL GETUSER names single commands in.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::engine::cmd::all_commands;
use crate::engine::cmd::server::meta;

/// Redis 7.0's ACL categories, in its order (ACL CAT, and the order rules are described in).
pub(crate) const CATEGORIES: &[&str] = &[
    "keyspace",
    "read",
    "write",
    "set",
    "sortedset",
    "list",
    "hash",
    "string",
    "bitmap",
    "hyperloglog",
    "geo",
    "stream",
    "pubsub",
    "admin",
    "fast",
    "slow",
    "blocking",
    "dangerous",
    "connection",
    "transaction",
    "scripting",
];

/// Every command and subcommand, numbered.
pub(crate) struct Catalog {
    /// Full names (`get`, `config|get`) by id.
    pub(crate) names: Vec<String>,
    /// Category bits (1 << position in [`CATEGORIES`]) by id.
    pub(crate) categories: Vec<u32>,
    /// The container of a subcommand.
    pub(crate) parent: Vec<Option<usize>>,
    /// A container's subcommands.
    pub(crate) children: Vec<Vec<usize>>,
    /// Whether the command runs before authentication (Redis's `no_auth` flag: AUTH,
    /// HELLO), which no rule can deny.
    pub(crate) no_auth: Vec<bool>,
    /// How to find each command's keys for the check, without looking the command up by
    /// name again ([`KeyPlan`]).
    pub(crate) key_plans: Vec<KeyPlan>,
    /// Which arguments of each command are channels.
    pub(crate) channel_plans: Vec<ChannelPlan>,
    /// Commands whose one key is their first argument (GET, SET, HSET, INCR...), with the
    /// access it needs: the check's fast path ([`Catalog::single_key`]).
    single_keys: Vec<SingleKey>,
    by_name: HashMap<String, usize>,
    /// The id of each dispatched command, by its index in [`all_commands`].
    by_dispatch: Vec<Option<usize>>,
}

/// How the ACL check finds a command's keys and the access each needs, worked out once per
/// command from its key specs: for most commands a few ranges of argument positions, walked
/// without allocating or comparing flag names per request (a check that did so cost a
/// restricted user 9–15% of `serve`'s GET/SET throughput; docs/PERFORMANCE.md).
#[derive(Debug, Clone)]
pub(crate) enum KeyPlan {
    /// Key specs that start at an index and find a range: what `keys_from_specs` computes,
    /// in arithmetic.
    Ranges(Vec<RangeSpec>),
    /// SET: key 1, written; also read with GET among its options (`variable_flags`).
    Set,
    /// Anything else (keywords, key counts, key functions): the metadata's general walk.
    General(&'static meta::CommandMeta),
    /// No metadata: no keys.
    None,
}

/// Whether a command's one key is its first argument, and the access it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SingleKey {
    No,
    Needs(u8),
    /// SET: written, and read too with GET among its options.
    Set,
}

impl SingleKey {
    fn of(plan: &KeyPlan, channels: ChannelPlan) -> SingleKey {
        if channels != ChannelPlan::None {
            return SingleKey::No;
        }
        match plan {
            KeyPlan::Set => SingleKey::Set,
            KeyPlan::Ranges(specs) => match specs.as_slice() {
                [spec] if spec.first == 1 && spec.lastkey == 0 => SingleKey::Needs(spec.need),
                _ => SingleKey::No,
            },
            _ => SingleKey::No,
        }
    }
}

/// Which arguments of a command are Pub/Sub channels, for the check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChannelPlan {
    /// None.
    None,
    /// The first argument (PUBLISH, SPUBLISH).
    First,
    /// Every argument (SUBSCRIBE, SSUBSCRIBE).
    All,
    /// Every argument, a pattern compared literally (PSUBSCRIBE).
    Patterns,
}

impl ChannelPlan {
    fn of(name: &str) -> ChannelPlan {
        match name {
            "publish" | "spublish" => ChannelPlan::First,
            "subscribe" | "ssubscribe" => ChannelPlan::All,
            "psubscribe" => ChannelPlan::Patterns,
            _ => ChannelPlan::None,
        }
    }
}

/// One key spec of [`KeyPlan::Ranges`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct RangeSpec {
    pub(crate) first: i64,
    pub(crate) lastkey: i64,
    pub(crate) keystep: i64,
    pub(crate) limit: i64,
    /// [`super::READ`] and/or [`super::WRITE`], from the spec's flags.
    pub(crate) need: u8,
}

/// The access a key spec's flags need: `access` reads, `insert`/`delete`/`update` write.
pub(crate) fn need_of<'a>(flags: impl IntoIterator<Item = &'a str>) -> u8 {
    flags.into_iter().fold(0, |need, f| match f {
        "access" => need | super::READ,
        "insert" | "delete" | "update" => need | super::WRITE,
        _ => need,
    })
}

impl KeyPlan {
    fn of(m: Option<&'static meta::CommandMeta>) -> KeyPlan {
        let Some(m) = m else {
            return KeyPlan::None;
        };
        if m.name == "set" {
            return KeyPlan::Set;
        }
        // Key functions of their own (command.rs's `keys_of`), and specs whose flags vary.
        if matches!(m.name.as_str(), "sort" | "bitfield" | "migrate")
            || m.key_specs.iter().any(|s| s.has_flag("variable_flags"))
        {
            return KeyPlan::General(m);
        }
        let mut ranges = Vec::new();
        for spec in m.key_specs.iter().filter(|s| !s.has_flag("not_key")) {
            match (&spec.begin, &spec.find) {
                (
                    meta::BeginSearch::Index(first),
                    meta::FindKeys::Range {
                        lastkey,
                        keystep,
                        limit,
                    },
                ) if !spec.has_flag("incomplete") => ranges.push(RangeSpec {
                    first: *first,
                    lastkey: *lastkey,
                    keystep: *keystep,
                    limit: *limit,
                    need: need_of(spec.flags.iter().map(String::as_str)),
                }),
                _ => return KeyPlan::General(m),
            }
        }
        KeyPlan::Ranges(ranges)
    }
}

impl Catalog {
    /// The catalog, built on first use.
    pub(crate) fn get() -> &'static Catalog {
        static CATALOG: OnceLock<Catalog> = OnceLock::new();
        CATALOG.get_or_init(Catalog::build)
    }

    fn build() -> Catalog {
        let table = meta::table();
        let mut top: Vec<&meta::CommandMeta> =
            table.values().filter(|m| !m.name.contains('|')).collect();
        top.sort_by(|a, b| a.name.cmp(&b.name));
        let mut cat = Catalog {
            names: Vec::new(),
            categories: Vec::new(),
            parent: Vec::new(),
            children: Vec::new(),
            no_auth: Vec::new(),
            key_plans: Vec::new(),
            channel_plans: Vec::new(),
            single_keys: Vec::new(),
            by_name: HashMap::new(),
            by_dispatch: Vec::new(),
        };
        for m in top {
            let id = cat.push(m, None);
            for sub in m.subcommands.iter().filter_map(|s| table.get(s)) {
                let sub_id = cat.push(sub, Some(id));
                cat.children[id].push(sub_id);
            }
        }
        cat.by_dispatch = all_commands().map(|s| cat.id(s.name)).collect();
        cat
    }

    fn push(&mut self, m: &meta::CommandMeta, parent: Option<usize>) -> usize {
        let id = self.names.len();
        let bits = m
            .categories
            .iter()
            .filter_map(|c| category_bit(c))
            .fold(0, |acc, b| acc | b);
        self.names.push(m.name.clone());
        self.categories.push(bits);
        self.parent.push(parent);
        self.children.push(Vec::new());
        self.no_auth.push(m.has_flag("no_auth"));
        let plan = KeyPlan::of(meta::table().get(&m.name));
        let channels = ChannelPlan::of(&m.name);
        self.single_keys.push(SingleKey::of(&plan, channels));
        self.key_plans.push(plan);
        self.channel_plans.push(channels);
        self.by_name.insert(m.name.clone(), id);
        id
    }

    /// The access the one key of request `args` needs, when command `id` has one key and it
    /// is argument 1 (the keys [`super::request::Request`] would find: exactly that one);
    /// `None` for any other command.
    #[inline]
    pub(crate) fn single_key(&self, id: usize, args: &[&[u8]]) -> Option<u8> {
        if args.len() < 2 {
            return None;
        }
        match self.single_keys[id] {
            SingleKey::No => None,
            SingleKey::Needs(need) => Some(need),
            SingleKey::Set => {
                let get = args.iter().skip(3).any(|a| a.eq_ignore_ascii_case(b"get"));
                Some(if get {
                    super::READ | super::WRITE
                } else {
                    super::WRITE
                })
            }
        }
    }

    /// How many commands and subcommands there are.
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }

    /// The id of a command or subcommand by full name, any case.
    pub(crate) fn id(&self, name: &str) -> Option<usize> {
        self.by_name.get(&name.to_ascii_lowercase()).copied()
    }

    /// The id of the command a request runs: the subcommand's for a container (`None`
    /// when the subcommand is unknown: the command itself then replies with its error,
    /// as Redis rejects an unknown subcommand before it checks permissions).
    #[inline]
    pub(crate) fn request_id(&self, dispatch_index: usize, args: &[&[u8]]) -> Option<usize> {
        let id = self.by_dispatch.get(dispatch_index).copied().flatten()?;
        if self.children[id].is_empty() {
            return Some(id);
        }
        self.subcommand_id(id, args)
    }

    /// The subcommand a request of container `id` names (by name: the rare path).
    #[cold]
    fn subcommand_id(&self, id: usize, args: &[&[u8]]) -> Option<usize> {
        let sub = std::str::from_utf8(args.get(1)?).ok()?;
        self.id(&format!("{}|{sub}", self.names[id]))
    }

    /// The id of a request's command by its name (ACL DRYRUN, scripts): `None` when the
    /// command or the subcommand is unknown.
    pub(crate) fn lookup_request(&self, args: &[&[u8]]) -> Option<usize> {
        let name = std::str::from_utf8(args.first()?).ok()?;
        let id = self.id(name)?;
        if self.children[id].is_empty() {
            return Some(id);
        }
        let sub = std::str::from_utf8(args.get(1)?).ok()?;
        self.id(&format!("{}|{sub}", self.names[id]))
    }
}

/// A category's bit, by name (any case).
pub(crate) fn category_bit(name: &str) -> Option<u32> {
    CATEGORIES
        .iter()
        .position(|c| c.eq_ignore_ascii_case(name))
        .map(|i| 1 << i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_subcommands_have_ids_and_categories() {
        let cat = Catalog::get();
        let get = cat.id("GET").expect("get");
        assert_eq!(
            cat.categories[get],
            category_bit("read").unwrap()
                | category_bit("string").unwrap()
                | category_bit("fast").unwrap()
        );
        let config = cat.id("config").expect("config");
        let config_get = cat.id("config|get").expect("config|get");
        assert_eq!(cat.parent[config_get], Some(config));
        assert!(cat.children[config].contains(&config_get));
        assert!(cat.no_auth[cat.id("auth").unwrap()]);
        assert!(category_bit("nosuch").is_none());
    }
}

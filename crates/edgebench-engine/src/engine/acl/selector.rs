//! A selector: one set of permissions (commands, key patterns, channel patterns). A user
//! has a root selector and any number of further ones in parentheses; a command is allowed
//! when one selector allows all of it.
//!
//! Commands are a bitmap over [`Catalog`] ids plus one bit past the last id that only
//! `+@all` sets (Redis's trick to tell "+@all minus some" from "-@all plus some": the first
//! also allows commands the table does not know yet). Allowing or denying a container
//! applies to each of its subcommands; `+cmd|arg` of a command without subcommands allows
//! that first argument only (Redis's deprecated first-args, as `+select|0`).

use std::collections::BTreeMap;

use super::catalog::{category_bit, Catalog};
use super::request::Request;
use super::RuleError;
use crate::engine::cmd::keys::glob_match;

/// A key pattern may be read.
pub(crate) const READ: u8 = 1;
/// A key pattern may be written.
pub(crate) const WRITE: u8 = 2;
/// `~pattern`: read and write.
pub(crate) const READ_WRITE: u8 = READ | WRITE;

/// One selector's permissions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selector {
    /// One bit per command id, and the "future commands" bit after them.
    pub(crate) allowed: Vec<u64>,
    /// Set by `+@all` / `allcommands` and cleared by any denial: no bit needs testing.
    pub(crate) all_commands: bool,
    /// First arguments allowed of a command otherwise denied (`+select|0`), by id.
    pub(crate) first_args: BTreeMap<usize, Vec<String>>,
    /// `~*` / `allkeys`.
    pub(crate) all_keys: bool,
    /// Key patterns with their [`READ`] / [`WRITE`] flags, in the order given.
    pub(crate) keys: Vec<(Vec<u8>, u8)>,
    /// How each of `keys` is matched, worked out when it was added.
    key_kinds: Vec<PatternKind>,
    /// `&*` / `allchannels`.
    pub(crate) all_channels: bool,
    /// Channel patterns, in the order given.
    pub(crate) channels: Vec<Vec<u8>>,
}

/// Why a command was refused (ordered as Redis ranks them when selectors disagree: a
/// channel beats a key beats the command).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Denied {
    /// The command or subcommand.
    Command,
    /// The key at this argument.
    Key(usize),
    /// The channel at this argument.
    Channel(usize),
}

impl Denied {
    fn rank(self) -> (u8, usize) {
        match self {
            Denied::Command => (1, 0),
            Denied::Key(i) => (2, i),
            Denied::Channel(i) => (4, i),
        }
    }

    /// The worse of two refusals: the higher reason, then the later argument.
    pub(crate) fn worse(self, other: Denied) -> Denied {
        if other.rank() > self.rank() {
            other
        } else {
            self
        }
    }
}

impl Selector {
    /// A selector allowing nothing (with `allchannels` when `acl-pubsub-default` says so).
    pub(crate) fn empty(all_channels: bool) -> Selector {
        Selector {
            allowed: vec![0; Catalog::get().len() / 64 + 1],
            all_commands: false,
            first_args: BTreeMap::new(),
            all_keys: false,
            keys: Vec::new(),
            key_kinds: Vec::new(),
            all_channels,
            channels: Vec::new(),
        }
    }

    /// Whether this selector lets anything through without looking at the request.
    pub(crate) fn unrestricted(&self) -> bool {
        self.all_commands && self.all_keys && self.all_channels
    }

    pub(crate) fn bit(&self, id: usize) -> bool {
        self.allowed
            .get(id / 64)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }

    fn set_bit(&mut self, id: usize, on: bool) {
        if let Some(w) = self.allowed.get_mut(id / 64) {
            if on {
                *w |= 1 << (id % 64);
            } else {
                *w &= !(1 << (id % 64));
                self.all_commands = false;
            }
        }
    }

    /// Whether `+@all` was the base (the future-commands bit).
    pub(crate) fn allows_future_commands(&self) -> bool {
        self.bit(Catalog::get().len())
    }

    /// Allows or denies a command, and each of its subcommands.
    pub(crate) fn change(&mut self, id: usize, allow: bool) {
        let cat = Catalog::get();
        self.set_bit(id, allow);
        self.first_args.remove(&id);
        for &sub in &cat.children[id] {
            self.set_bit(sub, allow);
        }
    }

    /// Allows or denies every command of a category (and, for a container in it, its
    /// subcommands).
    pub(crate) fn change_category(&mut self, bit: u32, allow: bool) {
        let cat = Catalog::get();
        for id in 0..cat.len() {
            if cat.categories[id] & bit != 0 {
                self.change(id, allow);
            }
        }
    }

    /// Applies one rule (Redis's selector rules: commands, keys, channels).
    pub(crate) fn apply(&mut self, op: &[u8]) -> Result<(), RuleError> {
        let cat = Catalog::get();
        let is = |word: &str| op.eq_ignore_ascii_case(word.as_bytes());
        if is("allkeys") || op == b"~*" {
            self.all_keys = true;
            self.keys.clear();
            self.key_kinds.clear();
        } else if is("resetkeys") {
            self.all_keys = false;
            self.keys.clear();
            self.key_kinds.clear();
        } else if is("allchannels") || op == b"&*" {
            self.all_channels = true;
            self.channels.clear();
        } else if is("resetchannels") {
            self.all_channels = false;
            self.channels.clear();
        } else if is("allcommands") || is("+@all") {
            self.allowed.iter_mut().for_each(|w| *w = u64::MAX);
            self.all_commands = true;
            self.first_args.clear();
        } else if is("nocommands") || is("-@all") {
            self.allowed.iter_mut().for_each(|w| *w = 0);
            self.all_commands = false;
            self.first_args.clear();
        } else if op[0] == b'~' || op[0] == b'%' {
            self.add_key_pattern(op)?;
        } else if op[0] == b'&' {
            if self.all_channels {
                return Err(RuleError::ChannelAfterAll);
            }
            let pattern = &op[1..];
            if has_spaces(pattern) {
                return Err(RuleError::Syntax);
            }
            if !self.channels.iter().any(|c| c == pattern) {
                self.channels.push(pattern.to_vec());
            }
            self.all_channels = false;
        } else if (op[0] == b'+' || op[0] == b'-') && op.get(1) == Some(&b'@') {
            let name = std::str::from_utf8(&op[2..]).map_err(|_| RuleError::Unknown)?;
            let bit = category_bit(name).ok_or(RuleError::Unknown)?;
            self.change_category(bit, op[0] == b'+');
        } else if op[0] == b'+' {
            let name = std::str::from_utf8(&op[1..]).map_err(|_| RuleError::Unknown)?;
            match name.rsplit_once('|') {
                None => {
                    let id = cat.id(name).ok_or(RuleError::Unknown)?;
                    self.change(id, true);
                }
                Some((command, sub)) => {
                    let id = cat.id(command).ok_or(RuleError::Unknown)?;
                    if cat.parent[id].is_some() {
                        return Err(RuleError::SubcommandFirstArg);
                    }
                    if sub.is_empty() {
                        return Err(RuleError::Syntax);
                    }
                    if cat.children[id].is_empty() {
                        let args = self.first_args.entry(id).or_default();
                        if !args.iter().any(|a| a.eq_ignore_ascii_case(sub)) {
                            args.push(sub.to_string());
                        }
                    } else {
                        let sub_id = cat.id(name).ok_or(RuleError::Unknown)?;
                        self.change(sub_id, true);
                    }
                }
            }
        } else if op[0] == b'-' {
            let name = std::str::from_utf8(&op[1..]).map_err(|_| RuleError::Unknown)?;
            let id = cat.id(name).ok_or(RuleError::Unknown)?;
            self.change(id, false);
        } else {
            return Err(RuleError::Syntax);
        }
        Ok(())
    }

    /// `~pattern`, `%R~pattern`, `%W~pattern`, `%RW~pattern`.
    fn add_key_pattern(&mut self, op: &[u8]) -> Result<(), RuleError> {
        if self.all_keys {
            return Err(RuleError::KeyAfterAll);
        }
        let (flags, pattern) = if op[0] == b'%' {
            let mut flags = 0;
            let mut at = 1;
            loop {
                match op.get(at).map(u8::to_ascii_uppercase) {
                    Some(b'R') if flags & READ == 0 => flags |= READ,
                    Some(b'W') if flags & WRITE == 0 => flags |= WRITE,
                    Some(b'~') => {
                        at += 1;
                        break;
                    }
                    // The flags ran to the end without a `~`: the pattern is empty.
                    None => break,
                    Some(_) => return Err(RuleError::Syntax),
                }
                at += 1;
            }
            (flags, &op[at.min(op.len())..])
        } else {
            (READ_WRITE, &op[1..])
        };
        if has_spaces(pattern) {
            return Err(RuleError::Syntax);
        }
        match self.keys.iter_mut().find(|(p, _)| p == pattern) {
            Some((_, f)) => *f |= flags,
            None => {
                self.keys.push((pattern.to_vec(), flags));
                self.key_kinds.push(PatternKind::of(pattern));
            }
        }
        self.all_keys = false;
        Ok(())
    }

    /// Checks a request against this selector.
    #[inline]
    pub(crate) fn check(&self, request: &Request<'_>) -> Result<(), Denied> {
        let (id, args) = (request.id, request.args);
        let cat = Catalog::get();
        if !self.all_commands && !cat.no_auth[id] && !self.bit(id) {
            let at = if cat.parent[id].is_some() { 2 } else { 1 };
            let allowed = args.get(at).is_some_and(|arg| {
                self.first_args
                    .get(&id)
                    .is_some_and(|subs| subs.iter().any(|s| s.as_bytes().eq_ignore_ascii_case(arg)))
            });
            if !allowed || args.len() < 2 {
                return Err(Denied::Command);
            }
        }
        if !self.all_keys {
            if let Some(at) = request.first_key_where(|at, need| !self.key_allowed(args[at], need))
            {
                return Err(Denied::Key(at));
            }
        }
        if !self.all_channels {
            if let Some(at) =
                request.first_channel_where(|at, pattern| !self.channel_allowed(args[at], pattern))
            {
                return Err(Denied::Channel(at));
            }
        }
        Ok(())
    }

    /// Whether a pattern with the flags `needed` (or more) matches `key`.
    #[inline]
    pub(crate) fn key_allowed(&self, key: &[u8], needed: u8) -> bool {
        self.all_keys
            || self
                .keys
                .iter()
                .zip(&self.key_kinds)
                .any(|((p, f), kind)| f & needed == needed && kind.matches(p, key))
    }

    /// Whether a channel (or, for PSUBSCRIBE, a pattern, compared literally) is allowed.
    pub(crate) fn channel_allowed(&self, channel: &[u8], pattern: bool) -> bool {
        self.all_channels || channel_in(&self.channels, channel, pattern)
    }
}

/// How a key pattern is matched: Redis's glob matching, with the patterns rules mostly hold
/// done without the general matcher.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PatternKind {
    /// `prefix*`: a key that starts with the prefix (and is not empty: Redis's matcher never
    /// matches an empty string against a pattern).
    Prefix,
    /// No `*?[\\`: the key itself.
    Literal,
    /// Anything else: [`glob_match`].
    Glob,
}

impl PatternKind {
    fn of(pattern: &[u8]) -> PatternKind {
        let special = |b: &u8| matches!(b, b'*' | b'?' | b'[' | b'\\');
        match pattern.split_last() {
            Some((b'*', prefix)) if !prefix.iter().any(special) => PatternKind::Prefix,
            _ if !pattern.iter().any(special) => PatternKind::Literal,
            _ => PatternKind::Glob,
        }
    }

    #[inline]
    fn matches(self, pattern: &[u8], key: &[u8]) -> bool {
        match self {
            PatternKind::Prefix => {
                let prefix = &pattern[..pattern.len() - 1];
                // Byte by byte: prefixes are a few bytes, for which a call to memcmp costs
                // more than the comparison.
                !key.is_empty()
                    && key.len() >= prefix.len()
                    && prefix.iter().zip(key).all(|(p, k)| p == k)
            }
            PatternKind::Literal => pattern == key,
            PatternKind::Glob => glob_match(pattern, key),
        }
    }
}

#[cfg(test)]
fn pattern_matches(pattern: &[u8], key: &[u8]) -> bool {
    PatternKind::of(pattern).matches(pattern, key)
}

/// Whether `channel` is allowed by `patterns`: a channel by glob matching, a subscription
/// pattern only by being one of them literally.
pub(crate) fn channel_in(patterns: &[Vec<u8>], channel: &[u8], pattern: bool) -> bool {
    patterns.iter().any(|p| {
        if pattern {
            p == channel
        } else {
            glob_match(p, channel)
        }
    })
}

/// Redis refuses patterns and user names with spaces or NUL bytes.
pub(crate) fn has_spaces(s: &[u8]) -> bool {
    s.iter().any(|&b| b == 0 || b.is_ascii_whitespace())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_build_the_permissions_they_name() {
        let cat = Catalog::get();
        let mut s = Selector::empty(false);
        s.apply(b"+@hash").unwrap();
        s.apply(b"-hdel").unwrap();
        s.apply(b"+select|0").unwrap();
        s.apply(b"%R~r*").unwrap();
        s.apply(b"~rw*").unwrap();
        assert!(s.bit(cat.id("hset").unwrap()));
        assert!(!s.bit(cat.id("hdel").unwrap()));
        let select = cat.id("select").unwrap();
        let check = |args: &[&[u8]]| s.check(&Request::new(select, args));
        assert_eq!(check(&[b"select", b"0"]), Ok(()));
        assert_eq!(check(&[b"select", b"1"]), Err(Denied::Command));
        assert!(s.key_allowed(b"rx", READ));
        assert!(!s.key_allowed(b"rx", WRITE));
        assert!(s.key_allowed(b"rwx", READ_WRITE));
        assert_eq!(s.apply(b"+nosuch"), Err(RuleError::Unknown));
        assert_eq!(s.apply(b"%X~a"), Err(RuleError::Syntax));
        s.apply(b"allkeys").unwrap();
        assert_eq!(s.apply(b"~a"), Err(RuleError::KeyAfterAll));
    }

    #[test]
    fn containers_pass_their_permission_to_subcommands() {
        let cat = Catalog::get();
        let mut s = Selector::empty(false);
        s.apply(b"+config").unwrap();
        s.apply(b"-config|set").unwrap();
        assert!(s.bit(cat.id("config|get").unwrap()));
        assert!(!s.bit(cat.id("config|set").unwrap()));
        assert_eq!(
            s.apply(b"+config|get|x"),
            Err(RuleError::SubcommandFirstArg)
        );
    }

    #[test]
    fn key_patterns_match_as_redis_globs() {
        for (pattern, key, want) in [
            (&b"key:*"[..], &b"key:1"[..], true),
            (b"key:*", b"key:", true),
            (b"key:*", b"kex:1", false),
            (b"*", b"", false),
            (b"*", b"x", true),
            (b"", b"", true),
            (b"exact", b"exact", true),
            (b"exact", b"exactly", false),
            (b"k?y*", b"key:1", true),
            (b"k[ab]*", b"kb", true),
            (b"k\\*", b"k*", true),
            (b"k\\*", b"kx", false),
            (b"a*b", b"axxb", true),
        ] {
            assert_eq!(pattern_matches(pattern, key), want, "{pattern:?} {key:?}");
            assert_eq!(glob_match(pattern, key), want, "{pattern:?} {key:?}");
        }
    }

    proptest::proptest! {
        /// The fast paths answer what Redis's matcher answers, for any pattern and key over
        /// an alphabet with every special character.
        #[test]
        fn the_fast_paths_agree_with_the_glob_matcher(
            pattern in "[ab*?\\[\\]\\\\]{0,6}",
            key in "[ab*?]{0,6}",
        ) {
            proptest::prop_assert_eq!(
                pattern_matches(pattern.as_bytes(), key.as_bytes()),
                glob_match(pattern.as_bytes(), key.as_bytes())
            );
        }
    }

    #[test]
    fn patterns_are_matched_literally_and_channels_by_glob() {
        let patterns = vec![b"news.*".to_vec()];
        assert!(channel_in(&patterns, b"news.today", false));
        assert!(!channel_in(&patterns, b"news.today", true));
        assert!(channel_in(&patterns, b"news.*", true));
    }
}

//! Keys and expiry: DEL, UNLINK, EXISTS, TYPE, KEYS, SCAN, RENAME, RENAMENX, EXPIRE,
//! PEXPIRE, EXPIREAT, PEXPIREAT, TTL, PTTL, EXPIRETIME, PEXPIRETIME, PERSIST, DBSIZE, FLUSHDB,
//! FLUSHALL, RANDOMKEY, COPY, MOVE.
//!
//! SCAN's cursor is a position in the order of a fixed 64-bit hash of the key: a call returns
//! the keys whose hash is at or after the cursor, the COUNT lowest of them (plus any sharing
//! the last one's hash), and the next cursor is just past the last hash returned. A key's
//! hash never changes, so a key present for the whole iteration is returned exactly once,
//! whatever is added or removed between calls — Redis's guarantee (Redis may return a key
//! twice; this never does). The price: each call looks at every key of the database, O(n),
//! where Redis's reverse-binary bucket cursor is O(COUNT).
//!
//! Locking across databases: a command normally holds only shards of the selected database
//! (its key spec). The commands that reach into other databases (COPY ... DB, MOVE,
//! FLUSHALL) declare no keys and lock what they need themselves, always in ascending
//! database order, and nothing else ever holds two databases: no deadlock is possible.
//!
//! Keyspace events, as Redis 7.0's db.c and expire.c emit them (class `g`): `del` for each
//! key DEL, UNLINK or an EXPIRE to a past time removes; `expire` and `persist`;
//! `rename_from` then `rename_to`; `move_from` (source database) then `move_to`
//! (destination); COPY's `copy_to`. A renamed, moved or copied key is added anew in its
//! destination (a replaced one is deleted first, as Redis does), so it raises `new` there
//! too; FLUSHDB, FLUSHALL and SWAPDB raise nothing, as in Redis 7.0.
//!
//! One command family: the key and expiry commands, kept in one file. [`glob_match`] (the
//! pattern of KEYS and SCAN MATCH) lives here with them; the other families' MATCH
//! options, CONFIG GET, COMMAND LIST and the pub/sub patterns reuse it.

use std::borrow::Cow;
use std::hash::BuildHasher;

use super::{is, parse_i64, spec, Ctx, KeySpec, Spec, ALL_ARGS, ONE_KEY, TWO_KEYS};
use crate::engine::error::CmdError;
use crate::engine::handle::DATABASES;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::{Entry, Key, Locked, SHARDS};
pub use crate::engine::types::options::{ExpireIf, Ttl};
use crate::resp::reply::Reply;

/// The key and expiry commands.
pub const COMMANDS: &[Spec] = &[
    spec("del", -2, ALL_ARGS, true, del),
    spec("unlink", -2, ALL_ARGS, true, unlink),
    spec("exists", -2, ALL_ARGS, false, exists),
    spec("type", 2, ONE_KEY, false, type_),
    spec("keys", 2, KeySpec::All, false, keys),
    spec("scan", -2, KeySpec::All, false, scan),
    spec("rename", 3, TWO_KEYS, true, rename),
    spec("renamenx", 3, TWO_KEYS, true, renamenx),
    spec("expire", -3, ONE_KEY, true, expire),
    spec("pexpire", -3, ONE_KEY, true, pexpire),
    spec("expireat", -3, ONE_KEY, true, expireat),
    spec("pexpireat", -3, ONE_KEY, true, pexpireat),
    spec("ttl", 2, ONE_KEY, false, ttl),
    spec("pttl", 2, ONE_KEY, false, pttl),
    spec("expiretime", 2, ONE_KEY, false, expiretime),
    spec("pexpiretime", 2, ONE_KEY, false, pexpiretime),
    spec("persist", 2, ONE_KEY, true, persist),
    spec("dbsize", 1, KeySpec::All, false, dbsize),
    spec("flushdb", -1, KeySpec::All, true, flushdb),
    // Locks every database itself (see the module doc).
    spec("flushall", -1, KeySpec::None, true, flushall),
    spec("randomkey", 1, KeySpec::All, false, randomkey),
    spec("copy", -3, KeySpec::Custom(copy_keys), true, copy),
    // Locks both databases itself (see the module doc).
    spec("move", 3, KeySpec::None, true, move_),
];

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

fn same_object() -> CmdError {
    err("ERR source and destination objects are the same")
}

/// The order SCAN walks keys in: a hash with a fixed seed, so a key's place never changes.
const SCAN_ORDER: foldhash::fast::FixedState =
    foldhash::fast::FixedState::with_seed(0x5ca1_ab1e_0ddb_a110);

/// A key's position in SCAN's order.
pub fn scan_position(key: &[u8]) -> u64 {
    SCAN_ORDER.hash_one(key)
}

/// Bits of a SCAN cursor that name the shard (SHARDS = 2^6).
const SHARD_BITS: u32 = SHARDS.trailing_zeros();
/// Bits of a SCAN cursor for the position within a shard.
const POSITION_BITS: u32 = 64 - SHARD_BITS;
const POSITION_MASK: u64 = (1 << POSITION_BITS) - 1;

impl Locked<'_> {
    /// DEL/UNLINK: how many of `keys` existed (a key given twice counts once).
    pub fn del(&mut self, keys: &[&[u8]]) -> usize {
        let mut removed = 0;
        for key in keys {
            if self.remove(key).is_some() {
                self.notify(Classes::GENERIC, "del", key);
                removed += 1;
            }
        }
        removed
    }

    /// EXISTS: how many of `keys` exist (a key given twice counts twice). Not an access:
    /// OBJECT IDLETIME goes on, as Redis's EXISTS, TYPE and TTL look without touching.
    pub fn exists_count(&mut self, keys: &[&[u8]]) -> usize {
        keys.iter().filter(|k| self.peek(k).is_some()).count()
    }

    /// TYPE: the value's type name, `none` for a missing key (not an access).
    pub fn type_of(&mut self, key: &[u8]) -> &'static str {
        self.peek(key).map_or("none", |e| e.value.type_name())
    }

    /// KEYS: every key matching the glob `pattern`, in no defined order.
    pub fn keys_matching(&mut self, pattern: &[u8]) -> Vec<Key> {
        let everything = pattern == b"*";
        let mut keys = self.keys();
        keys.retain(|k| everything || glob_match(pattern, k));
        keys
    }

    /// SCAN: from `cursor`, looks at the next `count` keys in SCAN's order (more when
    /// several share a position) and returns those matching `pattern` and `type_name`, with
    /// the next cursor (0 when the walk is complete). Needs every shard locked.
    ///
    /// The cursor is (shard index, position): the top [`SHARD_BITS`] bits name the shard,
    /// the rest a position in [`scan_position`]'s order within it. A call walks shard by
    /// shard from there, so its cost is one shard's keys (a 64th of the database), not the
    /// whole keyspace. The guarantee is Redis's: a key present for the whole walk is
    /// returned at least once, since its shard and position never change.
    pub fn scan(
        &mut self,
        cursor: u64,
        count: usize,
        pattern: Option<&[u8]>,
        type_name: Option<&[u8]>,
    ) -> (u64, Vec<Key>) {
        let count = count.max(1);
        let mut shard = (cursor >> POSITION_BITS) as usize;
        let mut from = cursor & POSITION_MASK;
        let mut found: Vec<Key> = Vec::new();
        let mut next = 0;
        while shard < SHARDS {
            let mut ahead: Vec<(u64, Key)> = Vec::new();
            self.for_each_key_in_shard(shard, |k| {
                let at = scan_position(k) >> SHARD_BITS;
                if at >= from {
                    ahead.push((at, k.clone()));
                }
            });
            let need = count - found.len();
            if ahead.len() > need {
                ahead.select_nth_unstable_by_key(need - 1, |(at, _)| *at);
                let last = ahead[need - 1].0;
                ahead.retain(|(at, _)| *at <= last);
                ahead.sort_unstable_by_key(|(at, _)| *at);
                found.extend(ahead.into_iter().map(|(_, k)| k));
                next = if last < POSITION_MASK {
                    ((shard as u64) << POSITION_BITS) | (last + 1)
                } else if shard + 1 < SHARDS {
                    ((shard + 1) as u64) << POSITION_BITS
                } else {
                    0
                };
                break;
            }
            ahead.sort_unstable_by_key(|(at, _)| *at);
            found.extend(ahead.into_iter().map(|(_, k)| k));
            shard += 1;
            from = 0;
            if found.len() >= count && shard < SHARDS {
                next = (shard as u64) << POSITION_BITS;
                break;
            }
        }
        let pattern = pattern.filter(|p| *p != b"*");
        found.retain(|k| pattern.is_none_or(|p| glob_match(p, k)));
        if let Some(t) = type_name {
            found.retain(|k| t.eq_ignore_ascii_case(self.type_of(k).as_bytes()));
        }
        (next, found)
    }

    /// RENAME (`only_if_missing`: RENAMENX): moves the value and its TTL. `Ok(false)` when
    /// RENAMENX finds the destination taken; renaming a key to itself changes nothing.
    pub fn rename(
        &mut self,
        src: &[u8],
        dst: &[u8],
        only_if_missing: bool,
    ) -> Result<bool, CmdError> {
        if !self.exists(src) {
            return Err(CmdError::NoSuchKey);
        }
        if src == dst {
            return Ok(!only_if_missing);
        }
        if only_if_missing && self.exists(dst) {
            return Ok(false);
        }
        if let Some(entry) = self.remove(src) {
            self.replace_with(dst, entry);
            self.notify(Classes::GENERIC, "rename_from", src);
            self.notify(Classes::GENERIC, "rename_to", dst);
        }
        Ok(true)
    }

    /// EXPIRE and friends, with the time already absolute (ms since the epoch; may be
    /// negative). True when the TTL was set, or the key deleted because the time has
    /// passed; false for a missing key or a condition not met.
    pub fn expire_at(&mut self, key: &[u8], when_ms: i64, cond: ExpireIf) -> bool {
        let Some(entry) = self.get(key) else {
            return false;
        };
        let current = entry.expires_at_ms().map(|t| t.min(i64::MAX as u64) as i64);
        let refused = (cond.nx && current.is_some())
            || (cond.xx && current.is_none())
            || (cond.gt && current.is_none_or(|c| when_ms <= c))
            || (cond.lt && current.is_some_and(|c| when_ms >= c));
        if refused {
            return false;
        }
        if self.has_passed(when_ms) {
            self.remove(key);
            self.notify(Classes::GENERIC, "del", key);
        } else {
            self.set_expiry(key, Some(when_ms as u64));
            self.notify(Classes::GENERIC, "expire", key);
        }
        true
    }

    /// TTL, PTTL, EXPIRETIME, PEXPIRETIME read this (not an access).
    pub fn ttl(&mut self, key: &[u8]) -> Ttl {
        match self.peek(key).map(Entry::expires_at_ms) {
            None => Ttl::Missing,
            Some(None) => Ttl::Persistent,
            Some(Some(t)) => Ttl::At(t),
        }
    }

    /// PERSIST: whether a TTL was removed.
    pub fn persist(&mut self, key: &[u8]) -> bool {
        let removed = matches!(self.ttl(key), Ttl::At(_)) && self.set_expiry(key, None);
        if removed {
            self.notify(Classes::GENERIC, "persist", key);
        }
        removed
    }

    /// RANDOMKEY: a key picked at random, `None` when the database is empty.
    pub fn random_key(&mut self) -> Option<Key> {
        // A fresh RandomState is freshly seeded: a cheap random number without a global RNG.
        let r = foldhash::fast::RandomState::default().hash_one(self.now_ms());
        // A random shard first (then the next non-empty one), then a random key in it: one
        // shard's walk instead of a copy of the keyspace. Keys of sparse shards come up a
        // little more often; Redis's own RANDOMKEY is not uniform either.
        let start = (r as usize) % SHARDS;
        for i in 0..SHARDS {
            let shard = (start + i) % SHARDS;
            let len = self.shard_len(shard);
            if len == 0 {
                continue;
            }
            let pick = ((r >> 8) % len as u64) as usize;
            let mut n = 0;
            let mut chosen = None;
            self.for_each_key_in_shard(shard, |k| {
                if n == pick {
                    chosen = Some(k.clone());
                }
                n += 1;
            });
            return chosen;
        }
        None
    }

    /// COPY within this database: the value (deep-copied) and its TTL. False when `src` is
    /// missing or `dst` exists and `replace` is off.
    pub fn copy(&mut self, src: &[u8], dst: &[u8], replace: bool) -> Result<bool, CmdError> {
        if src == dst {
            return Err(same_object());
        }
        let Some(entry) = self.get(src).cloned() else {
            return Ok(false);
        };
        if !replace && self.exists(dst) {
            return Ok(false);
        }
        self.replace_with(dst, entry);
        self.notify(Classes::GENERIC, "copy_to", dst);
        Ok(true)
    }

    /// COPY to another database, whose shard of `dst` `target` holds.
    pub fn copy_to(
        &mut self,
        src: &[u8],
        target: &mut Locked<'_>,
        dst: &[u8],
        replace: bool,
    ) -> bool {
        let Some(entry) = self.get(src).cloned() else {
            return false;
        };
        if !replace && target.exists(dst) {
            return false;
        }
        target.replace_with(dst, entry);
        target.notify(Classes::GENERIC, "copy_to", dst);
        true
    }

    /// MOVE to another database, whose shard of `key` `target` holds: false when the key is
    /// missing here or exists there.
    pub fn move_to(&mut self, key: &[u8], target: &mut Locked<'_>) -> bool {
        if !self.exists(key) || target.exists(key) {
            return false;
        }
        match self.remove(key) {
            Some(entry) => {
                target.insert(key, entry);
                self.notify(Classes::GENERIC, "move_from", key);
                target.notify(Classes::GENERIC, "move_to", key);
                true
            }
            None => false,
        }
    }

    /// Stores `entry` at `key` as a new key: one already there is deleted first, as
    /// RENAME, COPY and RESTORE REPLACE do in Redis (so the key raises `new` either way).
    pub(in crate::engine::cmd) fn replace_with(&mut self, key: &[u8], entry: Entry) {
        self.remove(key);
        self.insert(key, entry);
    }
}

/// Redis's glob matching (`stringmatchlen`, case-sensitive): `*`, `?`, `[abc]`, `[^a]`,
/// `[a-z]` (either order), `\x` escapes, with its edge cases: an unterminated `[` class runs
/// to the end of the pattern, bytes compare as signed `char`s in ranges, and the empty string
/// matches only the empty pattern. Iterative: backtracking to the last `*` only is what
/// Redis's recursion with `skipLongerMatches` amounts to, with no recursion depth to exhaust.
pub fn glob_match(pattern: &[u8], s: &[u8]) -> bool {
    if s.is_empty() {
        return pattern.is_empty();
    }
    let at = |i: usize| pattern.get(i).copied().unwrap_or(0);
    let (mut p, mut i) = (0usize, 0usize);
    // (pattern index after the last `*`, the string index it was last tried at)
    let mut star: Option<(usize, usize)> = None;
    loop {
        let matched = if p == pattern.len() {
            false
        } else {
            match pattern[p] {
                b'*' => {
                    while at(p + 1) == b'*' {
                        p += 1;
                    }
                    if p + 1 == pattern.len() {
                        return true;
                    }
                    p += 1;
                    star = Some((p, i));
                    continue;
                }
                b'?' => {
                    p += 1;
                    true
                }
                b'[' => {
                    let (m, next) = match_class(pattern, p + 1, s[i]);
                    p = next;
                    m
                }
                b'\\' if p + 1 < pattern.len() => {
                    p += 2;
                    pattern[p - 1] == s[i]
                }
                c => {
                    p += 1;
                    c == s[i]
                }
            }
        };
        if matched {
            i += 1;
            if i < s.len() {
                continue;
            }
            while at(p) == b'*' {
                p += 1;
            }
            if p >= pattern.len() {
                return true;
            }
        }
        // Mismatch: let the last `*` swallow one more byte.
        match star {
            Some((sp, si)) if si + 1 < s.len() => {
                star = Some((sp, si + 1));
                p = sp;
                i = si + 1;
            }
            _ => return false,
        }
    }
}

/// One `[...]` class starting at `p` (just past the `[`) against byte `c`: whether it
/// matches, and the pattern index after the class.
fn match_class(pattern: &[u8], mut p: usize, c: u8) -> (bool, usize) {
    let at = |i: usize| pattern.get(i).copied().unwrap_or(0);
    let left = |p: usize| pattern.len().saturating_sub(p);
    let negate = at(p) == b'^';
    if negate {
        p += 1;
    }
    let mut matched = false;
    loop {
        if at(p) == b'\\' && left(p) >= 2 {
            p += 1;
            matched |= at(p) == c;
        } else if at(p) == b']' {
            break;
        } else if left(p) == 0 {
            // Unterminated: the class ends with the pattern.
            p -= 1;
            break;
        } else if left(p) >= 3 && at(p + 1) == b'-' {
            // C compares plain (signed) chars.
            let (a, b) = (at(p) as i8, at(p + 2) as i8);
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            matched |= (lo..=hi).contains(&(c as i8));
            p += 2;
        } else {
            matched |= at(p) == c;
        }
        p += 1;
    }
    (matched != negate, p + 1)
}

// ---- argument parsing and replies ----

fn del(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.del(&args[1..]) as i64))
}

/// UNLINK: DEL, with a value that is costly to free handed to the background freer.
fn unlink(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let mut removed = 0;
    for key in &args[1..] {
        let encoding = ctx.ks.encoding_of(key);
        if let Some(entry) = ctx.ks.remove(key) {
            ctx.ks.notify(Classes::GENERIC, "del", key);
            removed += 1;
            ctx.engine
                .inner()
                .lazyfree
                .free(entry.value, encoding.unwrap_or(""));
        }
    }
    Ok(Reply::Int(removed))
}

fn exists(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.exists_count(&args[1..]) as i64))
}

fn type_(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Status(ctx.ks.type_of(args[1]).into()))
}

fn keys(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let keys = ctx.ks.keys_matching(args[1]);
    Ok(Reply::Array(
        keys.into_iter()
            .map(|k| Reply::Bulk(k.into_vec()))
            .collect(),
    ))
}

/// Redis's `parseScanCursorOrReply`: C's `strtoul` of the whole argument (a sign is
/// accepted and `-n` wraps around, as `strtoul` does; no leading space; no overflow).
pub fn parse_scan_cursor(arg: &[u8]) -> Result<u64, CmdError> {
    let invalid = || err("ERR invalid cursor");
    let (neg, digits) = match arg.first() {
        Some(b'-') => (true, &arg[1..]),
        Some(b'+') => (false, &arg[1..]),
        // strtoul("") converts nothing and leaves nothing unread: cursor 0.
        None => return Ok(0),
        _ => (false, arg),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(invalid());
    }
    let v = digits.iter().try_fold(0u64, |acc, d| {
        acc.checked_mul(10)?.checked_add(u64::from(d - b'0'))
    });
    let v = v.ok_or_else(invalid)?;
    Ok(if neg { v.wrapping_neg() } else { v })
}

fn scan(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let cursor = parse_scan_cursor(args[1])?;
    let (mut count, mut pattern, mut type_name) = (10usize, None, None);
    let mut i = 2;
    while i < args.len() {
        let has_value = i + 1 < args.len();
        if is(args[i], "count") && has_value {
            let n = parse_i64(args[i + 1])?;
            if n < 1 {
                return Err(CmdError::Syntax);
            }
            count = usize::try_from(n).unwrap_or(usize::MAX);
        } else if is(args[i], "match") && has_value {
            pattern = Some(args[i + 1]);
        } else if is(args[i], "type") && has_value {
            type_name = Some(args[i + 1]);
        } else {
            return Err(CmdError::Syntax);
        }
        i += 2;
    }
    let (next, keys) = ctx.ks.scan(cursor, count, pattern, type_name);
    Ok(Reply::Array(vec![
        Reply::Bulk(next.to_string().into_bytes()),
        Reply::Array(
            keys.into_iter()
                .map(|k| Reply::Bulk(k.into_vec()))
                .collect(),
        ),
    ]))
}

fn rename(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    ctx.ks.rename(args[1], args[2], false)?;
    Ok(Reply::ok())
}

fn renamenx(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(i64::from(
        ctx.ks.rename(args[1], args[2], true)?,
    )))
}

/// Redis's `parseExtendedExpireArgumentsOrReply`.
fn parse_expire_if(args: &[&[u8]]) -> Result<ExpireIf, CmdError> {
    let mut cond = ExpireIf::default();
    for opt in &args[3..] {
        if is(opt, "nx") {
            cond.nx = true;
        } else if is(opt, "xx") {
            cond.xx = true;
        } else if is(opt, "gt") {
            cond.gt = true;
        } else if is(opt, "lt") {
            cond.lt = true;
        } else {
            let opt = String::from_utf8_lossy(opt);
            return Err(CmdError::Other(
                format!("ERR Unsupported option {opt}").into(),
            ));
        }
    }
    if cond.nx && (cond.xx || cond.gt || cond.lt) {
        return Err(err(
            "ERR NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if cond.gt && cond.lt {
        return Err(err(
            "ERR GT and LT options at the same time are not compatible",
        ));
    }
    Ok(cond)
}

/// Redis's `expireGenericCommand`: `ms_per_unit` 1000 for seconds; `relative` adds the
/// command's time.
fn expire_generic(
    ctx: &mut Ctx<'_, '_>,
    args: &[&[u8]],
    ms_per_unit: i64,
    relative: bool,
    cmd: &str,
) -> Result<Reply, CmdError> {
    let cond = parse_expire_if(args)?;
    let when = parse_i64(args[2])?;
    let invalid = || CmdError::Other(format!("ERR invalid expire time in '{cmd}' command").into());
    let when = when.checked_mul(ms_per_unit).ok_or_else(invalid)?;
    let base = if relative { ctx.ks.now_ms() as i64 } else { 0 };
    let when = when.checked_add(base).ok_or_else(invalid)?;
    Ok(Reply::Int(i64::from(ctx.ks.expire_at(args[1], when, cond))))
}

fn expire(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    expire_generic(ctx, args, 1000, true, "expire")
}

fn pexpire(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    expire_generic(ctx, args, 1, true, "pexpire")
}

fn expireat(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    expire_generic(ctx, args, 1000, false, "expireat")
}

fn pexpireat(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    expire_generic(ctx, args, 1, false, "pexpireat")
}

/// Redis's `ttlGenericCommand`: -2 missing, -1 no TTL, else the remaining (or absolute)
/// time, in seconds rounded to nearest.
fn ttl_reply(ctx: &mut Ctx<'_, '_>, key: &[u8], in_ms: bool, absolute: bool) -> Reply {
    let ms = match ctx.ks.ttl(key) {
        Ttl::Missing => return Reply::Int(-2),
        Ttl::Persistent => return Reply::Int(-1),
        Ttl::At(t) if absolute => t,
        Ttl::At(t) => t.saturating_sub(ctx.ks.now_ms()),
    };
    let ms = ms.min(i64::MAX as u64) as i64;
    Reply::Int(if in_ms {
        ms
    } else {
        ms.saturating_add(500) / 1000
    })
}

fn ttl(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(ttl_reply(ctx, args[1], false, false))
}

fn pttl(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(ttl_reply(ctx, args[1], true, false))
}

fn expiretime(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(ttl_reply(ctx, args[1], false, true))
}

fn pexpiretime(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(ttl_reply(ctx, args[1], true, true))
}

fn persist(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(i64::from(ctx.ks.persist(args[1]))))
}

fn dbsize(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.len() as i64))
}

/// FLUSHDB/FLUSHALL's optional ASYNC|SYNC (the engine always frees at once).
fn check_flush_mode(args: &[&[u8]]) -> Result<(), CmdError> {
    match args {
        [_] => Ok(()),
        [_, mode] if is(mode, "sync") || is(mode, "async") => Ok(()),
        _ => Err(CmdError::Syntax),
    }
}

fn flushdb(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    check_flush_mode(args)?;
    ctx.ks.clear();
    ctx.engine.tracking().flushed();
    Ok(Reply::ok())
}

fn flushall(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    check_flush_mode(args)?;
    let now = ctx.ks.now_ms();
    // Every database at once, in ascending order, so FLUSHALL is atomic.
    let mut all: Vec<Locked<'_>> = (0..DATABASES)
        .map(|i| ctx.engine.db(i).lock_all(now))
        .collect();
    for ks in &mut all {
        ks.clear();
    }
    ctx.engine.tracking().flushed();
    Ok(Reply::ok())
}

fn randomkey(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(ctx
        .ks
        .random_key()
        .map_or(Reply::Nil, |k| Reply::Bulk(k.into_vec())))
}

/// COPY's key spec: both keys, unless a DB option may name another database; then none,
/// and `copy` locks the two databases itself.
fn copy_keys(args: &[&[u8]]) -> Vec<usize> {
    if args.iter().skip(3).any(|a| is(a, "db")) {
        Vec::new()
    } else {
        vec![1, 2]
    }
}

/// A database index argument (Redis's `getIntFromObjectOrReply`, then `selectDb`'s range).
fn parse_db_index(arg: &[u8]) -> Result<usize, CmdError> {
    let n = parse_i64(arg)?;
    if i32::try_from(n).is_err() {
        return Err(err(
            "ERR value is out of range, value must between -2147483648 and 2147483647",
        ));
    }
    usize::try_from(n)
        .ok()
        .filter(|&i| i < DATABASES)
        .ok_or_else(|| err("ERR DB index is out of range"))
}

fn copy(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let (mut replace, mut target) = (false, None);
    let mut j = 3;
    while j < args.len() {
        if is(args[j], "replace") {
            replace = true;
        } else if is(args[j], "db") && j + 1 < args.len() {
            target = Some(parse_db_index(args[j + 1])?);
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    let (src_key, dst_key) = (args[1], args[2]);
    let here = ctx.client.db;
    let there = target.unwrap_or(here);
    if here == there && src_key == dst_key {
        return Err(same_object());
    }
    if !copy_keys(args).is_empty() {
        return Ok(Reply::Int(i64::from(
            ctx.ks.copy(src_key, dst_key, replace)?,
        )));
    }
    let now = ctx.ks.now_ms();
    let copied = if here == there {
        let mut ks = ctx.engine.db(here).lock([src_key, dst_key], now);
        ks.copy(src_key, dst_key, replace)?
    } else {
        let (mut src, mut dst) = lock_two(ctx, here, src_key, there, dst_key, now);
        src.copy_to(src_key, &mut dst, dst_key, replace)
    };
    Ok(Reply::Int(i64::from(copied)))
}

/// Locks `a_key`'s shard in database `a` and `b_key`'s in database `b` (`a != b`), the lower
/// database first.
fn lock_two<'e>(
    ctx: &Ctx<'e, '_>,
    a: usize,
    a_key: &[u8],
    b: usize,
    b_key: &[u8],
    now: u64,
) -> (Locked<'e>, Locked<'e>) {
    let engine = ctx.engine;
    if a < b {
        let la = engine.db(a).lock([a_key], now);
        (la, engine.db(b).lock([b_key], now))
    } else {
        let lb = engine.db(b).lock([b_key], now);
        (engine.db(a).lock([a_key], now), lb)
    }
}

fn move_(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let key = args[1];
    let there = parse_db_index(args[2])?;
    let here = ctx.client.db;
    if here == there {
        return Err(same_object());
    }
    let now = ctx.ks.now_ms();
    let (mut src, mut dst) = lock_two(ctx, here, key, there, key, now);
    Ok(Reply::Int(i64::from(src.move_to(key, &mut dst))))
}

#[cfg(test)]
mod tests {
    use super::{glob_match, parse_scan_cursor};

    #[test]
    fn glob_matches_like_stringmatchlen() {
        let yes: &[(&str, &str)] = &[
            ("*", "abc"),
            ("a*", "a"),
            ("a*c", "abbbc"),
            ("*b*", "abc"),
            ("h?llo", "hello"),
            ("h[ae]llo", "hallo"),
            ("h[^e]llo", "hallo"),
            ("h[a-b]llo", "hbllo"),
            ("h[b-a]llo", "hallo"),
            ("h\\*llo", "h*llo"),
            ("a\\", "a\\"),
            ("[abc", "b"),
            ("[a-]", "]"),
            ("[\\]]", "]"),
            ("a**", "a"),
            ("*ab", "aab"),
            ("", ""),
        ];
        let no: &[(&str, &str)] = &[
            ("**", ""),
            ("*", ""),
            ("h[^e]llo", "hello"),
            ("h?llo", "hllo"),
            ("a*c", "abcd"),
            ("*abc", "xab"),
            ("[]", "a"),
            ("abc", "ab"),
            ("ab", "abc"),
        ];
        for (p, s) in yes {
            assert!(
                glob_match(p.as_bytes(), s.as_bytes()),
                "{p:?} should match {s:?}"
            );
        }
        for (p, s) in no {
            assert!(
                !glob_match(p.as_bytes(), s.as_bytes()),
                "{p:?} should not match {s:?}"
            );
        }
        // Ranges compare signed chars: 0x80..0xff sort below ASCII.
        assert!(glob_match(b"[\x80-a]", b"Z"));
        assert!(!glob_match(b"[a-\x80]", b"z"));
    }

    #[test]
    fn scan_cursors_parse_like_strtoul() {
        assert_eq!(parse_scan_cursor(b"0"), Ok(0));
        assert_eq!(parse_scan_cursor(b""), Ok(0));
        assert_eq!(parse_scan_cursor(b"+5"), Ok(5));
        assert_eq!(parse_scan_cursor(b"007"), Ok(7));
        assert_eq!(parse_scan_cursor(b"-1"), Ok(u64::MAX));
        assert_eq!(parse_scan_cursor(b"18446744073709551615"), Ok(u64::MAX));
        for bad in [
            &b"18446744073709551616"[..],
            b" 1",
            b"1 ",
            b"-",
            b"+",
            b"abc",
            b"0x1",
        ] {
            assert!(parse_scan_cursor(bad).is_err(), "{bad:?}");
        }
    }
}

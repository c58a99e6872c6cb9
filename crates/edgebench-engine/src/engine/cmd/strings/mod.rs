//! Strings: GET, SET (NX, XX, EX, PX, EXAT, PXAT, KEEPTTL, GET), SETNX, SETEX, PSETEX, MGET,
//! MSET, MSETNX, GETSET, GETDEL, GETEX, APPEND, STRLEN, INCR, DECR, INCRBY, DECRBY,
//! INCRBYFLOAT, GETRANGE, SETRANGE.
//!
//! The typed operations (`impl Locked`) are the Rust API: they take parsed values and
//! absolute expiry times (ms since the epoch). The `run` functions parse arguments in Redis's
//! order, so that when several things are wrong the error is the one Redis reports first
//! (e.g. SET checks its options, then the expire time, then the type for GET).
//!
//! Invariants: a string value is the bytes a client sent or an integer's decimal text, so
//! STRLEN, GETRANGE and APPEND see what Redis shows for its int-encoded strings. INCR and
//! friends keep the key's TTL; SET and GETSET clear it (unless KEEPTTL). No string grows past
//! [`MAX_STRING_LEN`] (Redis's default `proto-max-bulk-len`).
//!
//! Keyspace events, as Redis 7.0's t_string.c emits them: `set` for every write of a whole
//! value (SET, SETNX, SETEX, PSETEX, GETSET, MSET, MSETNX), then `expire` when it came with a
//! TTL; `append`, `setrange`, `incrby` (INCR, DECR, DECRBY too) and `incrbyfloat`; GETDEL's
//! `del`, and GETEX's `expire`, `persist` or `del`. The typed operation that is one command
//! emits them; [`Locked::set`], which others build on, emits nothing, and SET's `run` does.
//!
//! INCRBYFLOAT adds in x87 `long double` and prints with `%.17Lf`, as Redis does; [`cfloat`]
//! reproduces both exactly (HINCRBYFLOAT can use the same [`cfloat::LongDouble`]).
//!
//! One command family: the string commands, kept in one file because each parses its
//! arguments, applies itself and replies in one place, over typed operations the others
//! share. The C float conversions are [`cfloat`] (in `engine/types`, beneath the keyspace whose
//! INCRBYFLOAT and HINCRBYFLOAT take them; re-exported here), and the unit tests, which check
//! them against glibc, are the `tests` submodule.

use std::borrow::Cow;

use super::{is, parse_i64, spec, Ctx, KeySpec, Spec, ALL_ARGS, ONE_KEY};
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::{Entry, Locked, Value};
use crate::engine::types::cfloat::LongDouble;
use crate::engine::types::encoding::Shape;
pub use crate::engine::types::options::{GetExTtl, SetCondition, SetTtl};
use crate::resp::reply::Reply;

/// The longest string APPEND and SETRANGE may build (512 MB, Redis's default
/// `proto-max-bulk-len`).
pub const MAX_STRING_LEN: usize = 512 * 1024 * 1024;

/// MSET's keys: every other argument.
const KEY_VALUE_PAIRS: KeySpec = KeySpec::Range {
    first: 1,
    last: -1,
    step: 2,
};

/// The string commands.
pub const COMMANDS: &[Spec] = &[
    spec("get", 2, ONE_KEY, false, get),
    spec("set", -3, ONE_KEY, true, set),
    spec("setnx", 3, ONE_KEY, true, setnx),
    spec("setex", 4, ONE_KEY, true, setex),
    spec("psetex", 4, ONE_KEY, true, psetex),
    spec("mget", -2, ALL_ARGS, false, mget),
    spec("mset", -3, KEY_VALUE_PAIRS, true, mset),
    spec("msetnx", -3, KEY_VALUE_PAIRS, true, msetnx),
    spec("getset", 3, ONE_KEY, true, getset),
    spec("getdel", 2, ONE_KEY, true, getdel),
    spec("getex", -2, ONE_KEY, true, getex),
    spec("append", 3, ONE_KEY, true, append),
    spec("strlen", 2, ONE_KEY, false, strlen),
    spec("incr", 2, ONE_KEY, true, incr),
    spec("decr", 2, ONE_KEY, true, decr),
    spec("incrby", 3, ONE_KEY, true, incrby),
    spec("decrby", 3, ONE_KEY, true, decrby),
    spec("incrbyfloat", 3, ONE_KEY, true, incrbyfloat),
    spec("getrange", 4, ONE_KEY, false, getrange),
    spec("setrange", 4, ONE_KEY, true, setrange),
];

/// What a conditional SET did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetOutcome {
    /// Whether the value was written (false when NX/XX said no).
    pub written: bool,
    /// The previous value, when asked for (SET ... GET).
    pub old: Option<Vec<u8>>,
}

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

fn too_long() -> CmdError {
    err("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
}

fn owned(v: Option<&Vec<u8>>) -> Option<Vec<u8>> {
    v.cloned()
}

impl Locked<'_> {
    /// SET `key` `value`: replaces any value of any type, and removes the TTL.
    pub fn set(&mut self, key: &[u8], value: Vec<u8>) {
        self.insert(key, Entry::new(Value::Str(value)));
    }

    /// SET with its options. With `get_old`, a key of another type is WRONGTYPE and nothing
    /// is written; without it, SET overwrites any type.
    pub fn set_with(
        &mut self,
        key: &[u8],
        value: Vec<u8>,
        condition: SetCondition,
        ttl: SetTtl,
        get_old: bool,
    ) -> Result<SetOutcome, CmdError> {
        let old = if get_old {
            owned(self.get_str(key)?)
        } else {
            None
        };
        let current = self.get(key).map(|e| e.expires_at_ms());
        let allowed = match condition {
            SetCondition::Always => true,
            SetCondition::IfMissing => current.is_none(),
            SetCondition::IfExists => current.is_some(),
        };
        if !allowed {
            return Ok(SetOutcome {
                written: false,
                old,
            });
        }
        let expires_at_ms = match ttl {
            SetTtl::Clear => None,
            SetTtl::Keep => current.flatten(),
            SetTtl::At(t) => Some(t),
        };
        self.insert(key, Entry::with_expiry(Value::Str(value), expires_at_ms));
        Ok(SetOutcome { written: true, old })
    }

    /// MGET: each key's string, `None` for a missing key or another type.
    pub fn mget(&mut self, keys: &[&[u8]]) -> Vec<Option<Vec<u8>>> {
        keys.iter()
            .map(|k| self.get_str(k).ok().flatten().cloned())
            .collect()
    }

    /// MSET: sets every pair (a key given twice ends with its last value).
    pub fn mset<'k>(&mut self, pairs: impl IntoIterator<Item = (&'k [u8], &'k [u8])>) {
        for (k, v) in pairs {
            self.set(k, v.to_vec());
            self.notify(Classes::STRING, "set", k);
        }
    }

    /// MSETNX: sets every pair only if none of the keys exists; whether it did.
    pub fn msetnx(&mut self, pairs: &[(&[u8], &[u8])]) -> bool {
        if pairs.iter().any(|(k, _)| self.exists(k)) {
            return false;
        }
        self.mset(pairs.iter().copied());
        true
    }

    /// GETSET: sets `value` (removing the TTL) and returns the previous string.
    pub fn getset(&mut self, key: &[u8], value: Vec<u8>) -> Result<Option<Vec<u8>>, CmdError> {
        let old = owned(self.get_str(key)?);
        self.set(key, value);
        self.notify(Classes::STRING, "set", key);
        Ok(old)
    }

    /// GETDEL: removes the key if it holds a string, returning it.
    pub fn getdel(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, CmdError> {
        let old = owned(self.get_str(key)?);
        if old.is_some() {
            self.remove(key);
            self.notify(Classes::GENERIC, "del", key);
        }
        Ok(old)
    }

    /// GETEX: the string at `key`, then its TTL changed as `ttl` says.
    pub fn getex(&mut self, key: &[u8], ttl: GetExTtl) -> Result<Option<Vec<u8>>, CmdError> {
        let Some(value) = owned(self.get_str(key)?) else {
            return Ok(None);
        };
        match ttl {
            GetExTtl::Unchanged => {}
            GetExTtl::Persist => {
                if self.get(key).is_some_and(|e| e.expires_at_ms().is_some()) {
                    self.set_expiry(key, None);
                    self.notify(Classes::GENERIC, "persist", key);
                }
            }
            GetExTtl::At(t) if self.has_passed(t.min(i64::MAX as u64) as i64) => {
                self.remove(key);
                self.notify(Classes::GENERIC, "del", key);
            }
            GetExTtl::At(t) => {
                self.set_expiry(key, Some(t));
                self.notify(Classes::GENERIC, "expire", key);
            }
        }
        Ok(Some(value))
    }

    /// APPEND: the string's new length (a missing key starts empty).
    pub fn append(&mut self, key: &[u8], tail: &[u8]) -> Result<usize, CmdError> {
        match self.get_str(key)? {
            None => {
                self.set(key, tail.to_vec());
                self.notify(Classes::STRING, "append", key);
                Ok(tail.len())
            }
            Some(s) if s.len().saturating_add(tail.len()) > MAX_STRING_LEN => Err(too_long()),
            Some(_) => {
                let s = self.str_mut(key)?;
                s.extend_from_slice(tail);
                let len = s.len();
                self.unshare_string(key);
                self.notify(Classes::STRING, "append", key);
                Ok(len)
            }
        }
    }

    /// STRLEN: 0 for a missing key.
    pub fn strlen(&mut self, key: &[u8]) -> Result<usize, CmdError> {
        Ok(self.get_str(key)?.map_or(0, Vec::len))
    }

    /// INCRBY (INCR, DECR, DECRBY are this with 1, -1, -n): the new value; the TTL stays.
    pub fn incr_by(&mut self, key: &[u8], delta: i64) -> Result<i64, CmdError> {
        let current = match self.get_str(key)? {
            None => 0,
            Some(s) => parse_i64(s)?,
        };
        let new = current.checked_add(delta).ok_or(CmdError::Overflow)?;
        self.store_keeping_ttl(key, new.to_string().into_bytes());
        self.notify(Classes::STRING, "incrby", key);
        Ok(new)
    }

    /// INCRBYFLOAT: adds in `long double` as Redis does and stores (and returns) the result
    /// as Redis prints it; the TTL stays.
    pub fn incr_by_float(&mut self, key: &[u8], delta: LongDouble) -> Result<Vec<u8>, CmdError> {
        let current = match self.get_str(key)? {
            None => LongDouble::ZERO,
            Some(s) => LongDouble::parse(s).ok_or(CmdError::NotFloat)?,
        };
        let sum = current + delta;
        if !sum.is_finite() {
            return Err(err("ERR increment would produce NaN or Infinity"));
        }
        let text = sum.to_human().into_bytes();
        self.store_keeping_ttl(key, text.clone());
        self.mark_string(key, Shape::NOT_INT);
        self.notify(Classes::STRING, "incrbyfloat", key);
        Ok(text)
    }

    /// GETRANGE: the bytes from `start` to `end` inclusive; negative indices count from the
    /// end; out-of-range parts are clipped.
    pub fn getrange(&mut self, key: &[u8], start: i64, end: i64) -> Result<Vec<u8>, CmdError> {
        let Some(s) = self.get_str(key)? else {
            return Ok(Vec::new());
        };
        let len = s.len() as i64;
        if start < 0 && end < 0 && start > end {
            return Ok(Vec::new());
        }
        let start = if start < 0 { len + start } else { start }.max(0);
        let end = if end < 0 { len + end } else { end }.max(0).min(len - 1);
        if len == 0 || start > end {
            return Ok(Vec::new());
        }
        Ok(s[start as usize..=end as usize].to_vec())
    }

    /// SETRANGE: overwrites from `offset` (padding with zero bytes); the new length. A
    /// missing key with an empty `value` stays missing.
    pub fn setrange(&mut self, key: &[u8], offset: usize, value: &[u8]) -> Result<usize, CmdError> {
        let current = self.get_str(key)?.map(Vec::len);
        if value.is_empty() {
            return Ok(current.unwrap_or(0));
        }
        let end = offset
            .checked_add(value.len())
            .filter(|&n| n <= MAX_STRING_LEN)
            .ok_or_else(too_long)?;
        if current.is_none() {
            self.set(key, Vec::new());
        }
        let s = self.str_mut(key)?;
        if s.len() < end {
            s.resize(end, 0);
        }
        s[offset..end].copy_from_slice(value);
        let len = s.len();
        self.unshare_string(key);
        self.notify(Classes::STRING, "setrange", key);
        Ok(len)
    }

    /// Redis's `dbUnshareStringValue`: a command that edits a string in place (APPEND,
    /// SETRANGE, SETBIT, BITFIELD's writes, PFADD, PFMERGE, one-key PFCOUNT, PFDEBUG) first
    /// turns it `raw`, whatever its length, even when the edit then changes nothing (SETBIT
    /// of a bit already so, PFADD that raises no register). Only the encoding changes: this
    /// is not a write (no WATCH, no dirty count), as Redis's copy is not.
    pub(in crate::engine::cmd) fn unshare_string(&mut self, key: &[u8]) {
        self.mark_string(key, Shape::RAW);
    }

    /// Notes how Redis would encode the string just written (OBJECT ENCODING): `bits` of
    /// [`Shape`], replacing what an earlier command noted.
    fn mark_string(&mut self, key: &[u8], bits: u8) {
        if let Some(shape) = self.shape_mut(key) {
            *shape = Shape::only(bits);
        }
    }

    /// The string at an existing string key, for writing.
    fn str_mut(&mut self, key: &[u8]) -> Result<&mut Vec<u8>, CmdError> {
        match self.get_mut(key) {
            Some(Entry {
                value: Value::Str(s),
                ..
            }) => Ok(s),
            _ => Err(CmdError::WrongType),
        }
    }

    /// Replaces a string's bytes in place (keeping its TTL), or creates it.
    fn store_keeping_ttl(&mut self, key: &[u8], bytes: Vec<u8>) {
        match self.get_mut(key) {
            Some(Entry {
                value: Value::Str(s),
                shape,
                ..
            }) => {
                // A new value: Redis encodes it afresh.
                *s = bytes;
                *shape = Shape::default();
            }
            _ => self.set(key, bytes),
        }
    }
}

// ---- argument parsing and replies ----

fn bulk_or_nil(v: Option<Vec<u8>>) -> Reply {
    v.map_or(Reply::Nil, Reply::Bulk)
}

fn get(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::opt_bulk(ctx.ks.get_str(args[1])?.map(|v| &v[..])))
}

/// SET/GETEX option flags (Redis's `OBJ_*`).
mod flag {
    pub const NX: u32 = 1;
    pub const XX: u32 = 1 << 1;
    pub const GET: u32 = 1 << 2;
    pub const KEEPTTL: u32 = 1 << 3;
    pub const PERSIST: u32 = 1 << 4;
    pub const EX: u32 = 1 << 5;
    pub const PX: u32 = 1 << 6;
    pub const EXAT: u32 = 1 << 7;
    pub const PXAT: u32 = 1 << 8;
}

/// Which command's options [`parse_extended`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum ExtendedFor {
    Set,
    GetEx,
}

/// Redis's `parseExtendedStringArgumentsOrReply`: the option flags and the expire argument.
/// An option that conflicts with one already given is a syntax error.
fn parse_extended<'a>(
    args: &[&'a [u8]],
    command: ExtendedFor,
) -> Result<(u32, Option<&'a [u8]>), CmdError> {
    use flag::*;
    let set = command == ExtendedFor::Set;
    let (mut flags, mut expire) = (0u32, None);
    let mut j = if set { 3 } else { 2 };
    while j < args.len() {
        let opt = args[j];
        let next = args.get(j + 1).copied();
        let unit_ok = |own: u32| flags & (KEEPTTL | PERSIST | EX | PX | EXAT | PXAT) & !own == 0;
        let unit = [("ex", EX), ("px", PX), ("exat", EXAT), ("pxat", PXAT)]
            .into_iter()
            .find(|(name, _)| is(opt, name));
        if set && is(opt, "nx") && flags & XX == 0 {
            flags |= NX;
        } else if set && is(opt, "xx") && flags & NX == 0 {
            flags |= XX;
        } else if set && is(opt, "get") {
            flags |= GET;
        } else if set && is(opt, "keepttl") && flags & (PERSIST | EX | PX | EXAT | PXAT) == 0 {
            flags |= KEEPTTL;
        } else if !set && is(opt, "persist") && flags & (KEEPTTL | EX | PX | EXAT | PXAT) == 0 {
            flags |= PERSIST;
        } else if let Some((_, f)) = unit.filter(|&(_, f)| unit_ok(f) && next.is_some()) {
            flags |= f;
            expire = next;
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    Ok((flags, expire))
}

/// Redis's `getExpireMillisecondsOrReply`: the absolute expiry in ms of an EX/PX (relative)
/// or EXAT/PXAT (absolute) argument; must be positive and not overflow.
fn expire_at_ms(
    arg: &[u8],
    seconds: bool,
    relative: bool,
    now: u64,
    cmd: &str,
) -> Result<u64, CmdError> {
    let v = parse_i64(arg)?;
    let invalid = || CmdError::Other(format!("ERR invalid expire time in '{cmd}' command").into());
    if v <= 0 || (seconds && v > i64::MAX / 1000) {
        return Err(invalid());
    }
    let ms = if seconds { v * 1000 } else { v };
    let ms = if relative {
        ms.checked_add(now as i64).ok_or_else(invalid)?
    } else {
        ms
    };
    Ok(ms as u64)
}

/// The absolute expiry an EX/PX/EXAT/PXAT flag and its argument ask for.
fn expiry_from_flags(
    flags: u32,
    arg: Option<&[u8]>,
    now: u64,
    cmd: &str,
) -> Result<Option<u64>, CmdError> {
    let Some(arg) = arg else { return Ok(None) };
    let seconds = flags & (flag::EX | flag::EXAT) != 0;
    let relative = flags & (flag::EX | flag::PX) != 0;
    expire_at_ms(arg, seconds, relative, now, cmd).map(Some)
}

fn set(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    if args.len() == 3 {
        ctx.ks.set(args[1], args[2].to_vec());
        ctx.ks.notify(Classes::STRING, "set", args[1]);
        return Ok(Reply::ok());
    }
    let (flags, expire) = parse_extended(args, ExtendedFor::Set)?;
    let at = expiry_from_flags(flags, expire, ctx.ks.now_ms(), "set")?;
    let condition = if flags & flag::NX != 0 {
        SetCondition::IfMissing
    } else if flags & flag::XX != 0 {
        SetCondition::IfExists
    } else {
        SetCondition::Always
    };
    let ttl = match at {
        Some(t) => SetTtl::At(t),
        None if flags & flag::KEEPTTL != 0 => SetTtl::Keep,
        None => SetTtl::Clear,
    };
    let get_old = flags & flag::GET != 0;
    let outcome = ctx
        .ks
        .set_with(args[1], args[2].to_vec(), condition, ttl, get_old)?;
    if outcome.written {
        notify_set(&ctx.ks, args[1], at.is_some());
    }
    Ok(match (get_old, outcome.written) {
        (true, _) => bulk_or_nil(outcome.old),
        (false, true) => Reply::ok(),
        (false, false) => Reply::Nil,
    })
}

fn setnx(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let outcome = ctx.ks.set_with(
        args[1],
        args[2].to_vec(),
        SetCondition::IfMissing,
        SetTtl::Clear,
        false,
    )?;
    if outcome.written {
        notify_set(&ctx.ks, args[1], false);
    }
    Ok(Reply::Int(i64::from(outcome.written)))
}

fn set_expiring(
    ctx: &mut Ctx<'_, '_>,
    args: &[&[u8]],
    seconds: bool,
    cmd: &str,
) -> Result<Reply, CmdError> {
    let at = expire_at_ms(args[2], seconds, true, ctx.ks.now_ms(), cmd)?;
    ctx.ks.set_with(
        args[1],
        args[3].to_vec(),
        SetCondition::Always,
        SetTtl::At(at),
        false,
    )?;
    notify_set(&ctx.ks, args[1], true);
    Ok(Reply::ok())
}

/// The events of a SET that wrote: `set`, then `expire` when it gave the key a TTL.
fn notify_set(ks: &Locked<'_>, key: &[u8], with_ttl: bool) {
    ks.notify(Classes::STRING, "set", key);
    if with_ttl {
        ks.notify(Classes::GENERIC, "expire", key);
    }
}

fn setex(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    set_expiring(ctx, args, true, "setex")
}

fn psetex(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    set_expiring(ctx, args, false, "psetex")
}

fn mget(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let values = ctx.ks.mget(&args[1..]);
    Ok(Reply::Array(values.into_iter().map(bulk_or_nil).collect()))
}

/// Key-value pairs, as MSET and MSETNX take them.
type Pairs<'a> = Vec<(&'a [u8], &'a [u8])>;

/// MSET/MSETNX's key-value pairs; an odd count is Redis's arity error.
fn pairs<'a>(args: &[&'a [u8]]) -> Result<Pairs<'a>, CmdError> {
    if args.len().is_multiple_of(2) {
        let name = String::from_utf8_lossy(args[0]).to_ascii_lowercase();
        return Err(CmdError::Arity(name));
    }
    Ok(args[1..].chunks_exact(2).map(|p| (p[0], p[1])).collect())
}

fn mset(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let pairs = pairs(args)?;
    ctx.ks.mset(pairs);
    Ok(Reply::ok())
}

fn msetnx(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let pairs = pairs(args)?;
    Ok(Reply::Int(i64::from(ctx.ks.msetnx(&pairs))))
}

fn getset(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(bulk_or_nil(ctx.ks.getset(args[1], args[2].to_vec())?))
}

fn getdel(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(bulk_or_nil(ctx.ks.getdel(args[1])?))
}

fn getex(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let (flags, expire) = parse_extended(args, ExtendedFor::GetEx)?;
    // Redis looks the key up before it validates the expire time: a missing key is nil
    // whatever the time says, a wrong type is WRONGTYPE.
    if ctx.ks.get_str(args[1])?.is_none() {
        return Ok(Reply::Nil);
    }
    let at = expiry_from_flags(flags, expire, ctx.ks.now_ms(), "getex")?;
    let ttl = match at {
        Some(t) => GetExTtl::At(t),
        None if flags & flag::PERSIST != 0 => GetExTtl::Persist,
        None => GetExTtl::Unchanged,
    };
    Ok(bulk_or_nil(ctx.ks.getex(args[1], ttl)?))
}

fn append(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.append(args[1], args[2])? as i64))
}

fn strlen(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.strlen(args[1])? as i64))
}

fn incr(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.incr_by(args[1], 1)?))
}

fn decr(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.incr_by(args[1], -1)?))
}

fn incrby(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let delta = parse_i64(args[2])?;
    Ok(Reply::Int(ctx.ks.incr_by(args[1], delta)?))
}

fn decrby(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let delta = parse_i64(args[2])?;
    let delta = delta
        .checked_neg()
        .ok_or_else(|| err("ERR decrement would overflow"))?;
    Ok(Reply::Int(ctx.ks.incr_by(args[1], delta)?))
}

fn incrbyfloat(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    // Redis checks the type and the stored value before it parses the increment.
    if let Some(s) = ctx.ks.get_str(args[1])? {
        LongDouble::parse(s).ok_or(CmdError::NotFloat)?;
    }
    let delta = LongDouble::parse(args[2]).ok_or(CmdError::NotFloat)?;
    Ok(Reply::Bulk(ctx.ks.incr_by_float(args[1], delta)?))
}

fn getrange(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let start = parse_i64(args[2])?;
    let end = parse_i64(args[3])?;
    Ok(Reply::Bulk(ctx.ks.getrange(args[1], start, end)?))
}

fn setrange(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let offset = parse_i64(args[2])?;
    let offset = usize::try_from(offset).map_err(|_| err("ERR offset is out of range"))?;
    Ok(Reply::Int(ctx.ks.setrange(args[1], offset, args[3])? as i64))
}

pub use crate::engine::types::cfloat;
#[cfg(test)]
mod tests;

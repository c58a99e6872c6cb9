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
//! INCRBYFLOAT adds in x87 `long double` and prints with `%.17Lf`, as Redis does; [`cfloat`]
//! reproduces both exactly (HINCRBYFLOAT can use the same [`cfloat::LongDouble`]).

use std::borrow::Cow;

use self::cfloat::LongDouble;
use super::{is, parse_i64, spec, Ctx, KeySpec, Spec, ALL_ARGS, ONE_KEY};
use crate::engine::{CmdError, Entry, Locked, Reply, Value};

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

/// When SET writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SetCondition {
    /// Always (plain SET).
    #[default]
    Always,
    /// Only if the key does not exist (NX).
    IfMissing,
    /// Only if the key exists (XX).
    IfExists,
}

/// What SET does to the key's time to live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SetTtl {
    /// Removes any TTL (plain SET).
    #[default]
    Clear,
    /// Keeps the TTL the key had (KEEPTTL).
    Keep,
    /// Expires at this time, ms since the Unix epoch (EX, PX, EXAT, PXAT).
    At(u64),
}

/// What GETEX does to the key's time to live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GetExTtl {
    /// Leaves it.
    #[default]
    Unchanged,
    /// Removes it (PERSIST).
    Persist,
    /// Expires at this time, ms since the Unix epoch; a time already past deletes the key.
    At(u64),
}

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
        let current = self.get(key).map(|e| e.expires_at_ms);
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
        self.insert(
            key,
            Entry {
                value: Value::Str(value),
                expires_at_ms,
            },
        );
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
        Ok(old)
    }

    /// GETDEL: removes the key if it holds a string, returning it.
    pub fn getdel(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, CmdError> {
        let old = owned(self.get_str(key)?);
        if old.is_some() {
            self.remove(key);
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
                if self.get(key).is_some_and(|e| e.expires_at_ms.is_some()) {
                    self.set_expiry(key, None);
                }
            }
            GetExTtl::At(t) if t <= self.now_ms() => {
                self.remove(key);
            }
            GetExTtl::At(t) => {
                self.set_expiry(key, Some(t));
            }
        }
        Ok(Some(value))
    }

    /// APPEND: the string's new length (a missing key starts empty).
    pub fn append(&mut self, key: &[u8], tail: &[u8]) -> Result<usize, CmdError> {
        match self.get_str(key)? {
            None => {
                self.set(key, tail.to_vec());
                Ok(tail.len())
            }
            Some(s) if s.len().saturating_add(tail.len()) > MAX_STRING_LEN => Err(too_long()),
            Some(_) => {
                let s = self.str_mut(key)?;
                s.extend_from_slice(tail);
                Ok(s.len())
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
        Ok(s.len())
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
                ..
            }) => *s = bytes,
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
    Ok(Reply::ok())
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

/// C's floating-point text conversions, exactly as glibc does them on x86-64: `strtold` /
/// `strtod` (decimal and hexadecimal forms, correctly rounded), x87 80-bit `long double`
/// addition, and `printf("%.17Lf")`.
///
/// Why not `f64`: Redis computes INCRBYFLOAT and HINCRBYFLOAT in `long double` (64-bit
/// mantissa) and prints the result with `%.17Lf`, trailing zeros trimmed. In `f64`,
/// `0.1 + 0.2` is `0.30000000000000004`; in `long double` it prints as `0.3`, which is what a
/// client sees from Redis. Values here are exact binary numbers `mant × 2^exp`; conversions go
/// through a small big integer, so every rounding is the one glibc makes (nearest, ties to
/// even). Only INCRBYFLOAT and `parse_f64`'s hexadecimal fallback pay for this; nothing hot
/// uses it.
pub mod cfloat {
    use std::cmp::Ordering;

    /// Redis's `MAX_LONG_DOUBLE_CHARS`: longer float arguments are rejected.
    pub const MAX_LONG_DOUBLE_CHARS: usize = 5 * 1024;

    /// A binary floating-point format: `bits` of mantissa, exponents of the unit in the last
    /// place from `min_exp` (subnormals) to `max_exp`.
    #[derive(Debug, Clone, Copy)]
    struct Format {
        bits: u32,
        min_exp: i64,
        max_exp: i64,
    }

    /// x87 extended precision (`long double` on x86-64 Linux).
    const EXTENDED: Format = Format {
        bits: 64,
        min_exp: -16445,
        max_exp: 16320,
    };

    /// IEEE double.
    const DOUBLE: Format = Format {
        bits: 53,
        min_exp: -1074,
        max_exp: 971,
    };

    /// An unsigned big integer, little-endian 32-bit limbs, no high zero limbs.
    #[derive(Debug, Clone, Default, PartialEq, Eq)]
    struct Big(Vec<u32>);

    impl Big {
        fn from_u128(mut v: u128) -> Big {
            let mut limbs = Vec::new();
            while v != 0 {
                limbs.push(v as u32);
                v >>= 32;
            }
            Big(limbs)
        }

        fn is_zero(&self) -> bool {
            self.0.is_empty()
        }

        fn trim(&mut self) {
            while self.0.last() == Some(&0) {
                self.0.pop();
            }
        }

        /// `self = self * m + a`.
        fn mul_add_small(&mut self, m: u32, a: u32) {
            let mut carry = u64::from(a);
            for limb in &mut self.0 {
                let v = u64::from(*limb) * u64::from(m) + carry;
                *limb = v as u32;
                carry = v >> 32;
            }
            if carry != 0 {
                self.0.push(carry as u32);
            }
            self.trim();
        }

        /// `self *= 5^k`.
        fn mul_pow5(&mut self, mut k: u64) {
            const POW5_13: u32 = 1_220_703_125;
            while k >= 13 {
                self.mul_add_small(POW5_13, 0);
                k -= 13;
            }
            self.mul_add_small(5u32.pow(k as u32), 0);
        }

        fn shl(&self, bits: u64) -> Big {
            if self.is_zero() {
                return Big::default();
            }
            let (limbs, rem) = ((bits / 32) as usize, (bits % 32) as u32);
            let mut out = vec![0u32; limbs];
            out.reserve(self.0.len() + 1);
            let mut carry = 0u32;
            for &l in &self.0 {
                if rem == 0 {
                    out.push(l);
                } else {
                    out.push((l << rem) | carry);
                    carry = l >> (32 - rem);
                }
            }
            if carry != 0 {
                out.push(carry);
            }
            Big(out)
        }

        fn bit_len(&self) -> u64 {
            match self.0.last() {
                None => 0,
                Some(&top) => (self.0.len() as u64 - 1) * 32 + u64::from(32 - top.leading_zeros()),
            }
        }

        fn bit(&self, i: u64) -> bool {
            self.0
                .get((i / 32) as usize)
                .is_some_and(|l| (l >> (i % 32)) & 1 == 1)
        }

        /// Whether any of the bits below `n` is set.
        fn any_below(&self, n: u64) -> bool {
            let full = ((n / 32) as usize).min(self.0.len());
            if self.0[..full].iter().any(|&l| l != 0) {
                return true;
            }
            let rem = n % 32;
            rem != 0 && self.0.get(full).is_some_and(|l| l & ((1 << rem) - 1) != 0)
        }

        /// `self >> n`, which the caller knows fits in 128 bits.
        fn shr_u128(&self, n: u64) -> u128 {
            let mut v = 0u128;
            for i in (0..128u64).rev() {
                v = (v << 1) | u128::from(self.bit(n + i));
            }
            v
        }

        fn cmp_big(&self, other: &Big) -> Ordering {
            self.0
                .len()
                .cmp(&other.0.len())
                .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
        }

        fn add(&self, other: &Big) -> Big {
            let (long, short) = if self.0.len() >= other.0.len() {
                (self, other)
            } else {
                (other, self)
            };
            let mut out = Vec::with_capacity(long.0.len() + 1);
            let mut carry = 0u64;
            for (i, &l) in long.0.iter().enumerate() {
                let v = u64::from(l) + u64::from(short.0.get(i).copied().unwrap_or(0)) + carry;
                out.push(v as u32);
                carry = v >> 32;
            }
            if carry != 0 {
                out.push(carry as u32);
            }
            Big(out)
        }

        /// `self -= other`; `self >= other`.
        fn sub_assign(&mut self, other: &Big) {
            let mut borrow = 0i64;
            for (i, limb) in self.0.iter_mut().enumerate() {
                let v = i64::from(*limb) - i64::from(other.0.get(i).copied().unwrap_or(0)) - borrow;
                borrow = i64::from(v < 0);
                *limb = v.rem_euclid(1 << 32) as u32;
            }
            self.trim();
        }

        /// `self /= d`, returning the remainder.
        fn div_rem_small(&mut self, d: u32) -> u32 {
            let mut rem = 0u64;
            for limb in self.0.iter_mut().rev() {
                let v = (rem << 32) | u64::from(*limb);
                *limb = (v / u64::from(d)) as u32;
                rem = v % u64::from(d);
            }
            self.trim();
            rem as u32
        }

        fn to_decimal(&self) -> String {
            let mut n = self.clone();
            let mut chunks = Vec::new();
            while !n.is_zero() {
                chunks.push(n.div_rem_small(1_000_000_000));
            }
            let mut out = chunks
                .pop()
                .map_or_else(|| "0".to_string(), |c| c.to_string());
            for c in chunks.iter().rev() {
                out.push_str(&format!("{c:09}"));
            }
            out
        }
    }

    /// `num / den` for a quotient known to fit in 128 bits, and whether a remainder is left.
    fn div_small_quotient(num: &Big, den: &Big) -> (u128, bool) {
        let mut rem = num.clone();
        let mut q = 0u128;
        let top = (num.bit_len() + 1).saturating_sub(den.bit_len()).min(127);
        for i in (0..=top).rev() {
            let shifted = den.shl(i);
            if rem.cmp_big(&shifted) != Ordering::Less {
                rem.sub_assign(&shifted);
                q |= 1 << i;
            }
        }
        (q, !rem.is_zero())
    }

    /// A correctly rounded value of some [`Format`].
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Rounded {
        Zero,
        /// `mant × 2^exp`, `0 < mant < 2^bits`.
        Finite(u128, i64),
        Overflow,
    }

    /// Rounds `b × 2^e`, plus a nonzero tail below bit 0 when `sticky`, to nearest (ties to
    /// even). With `sticky`, `b` must hold at least `bits + 2` bits.
    fn round(b: &Big, e: i64, sticky: bool, f: Format) -> Rounded {
        if b.is_zero() {
            return Rounded::Zero;
        }
        let len = b.bit_len() as i64;
        let mut exp = (e + len - i64::from(f.bits)).max(f.min_exp);
        let shift = exp - e;
        let mut mant = if shift <= 0 {
            b.shr_u128(0) << (-shift)
        } else {
            let shift = shift as u64;
            let kept = b.shr_u128(shift);
            let half = b.bit(shift - 1);
            let rest = sticky || b.any_below(shift - 1);
            if half && (rest || kept & 1 == 1) {
                kept + 1
            } else {
                kept
            }
        };
        if mant >> f.bits != 0 {
            mant >>= 1;
            exp += 1;
        }
        if mant == 0 {
            Rounded::Zero
        } else if exp > f.max_exp {
            Rounded::Overflow
        } else {
            Rounded::Finite(mant, exp)
        }
    }

    /// What the C library reads from a float's text.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Parsed {
        Zero(bool),
        Finite(bool, u128, i64),
        Inf(bool),
    }

    /// `strtod`/`strtold` of the whole of `s`, as Redis accepts it (`string2d`, `string2ld`):
    /// `None` for anything but one complete number (leading space, trailing bytes, NaN), and
    /// for results that overflow or underflow to zero (C's ERANGE).
    fn parse(s: &[u8], f: Format) -> Option<Parsed> {
        let (neg, body) = match s.first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
            return Some(Parsed::Inf(neg));
        }
        let (b, e) = if body.len() > 1 && body[0] == b'0' && (body[1] | 0x20) == b'x' {
            parse_hex(&body[2..], f)?
        } else {
            parse_decimal(body, f)?
        };
        match b {
            None => Some(Parsed::Zero(neg)),
            Some((b, sticky)) => match round(&b, e, sticky, f) {
                Rounded::Finite(m, x) => Some(Parsed::Finite(neg, m, x)),
                Rounded::Zero | Rounded::Overflow => None,
            },
        }
    }

    /// An exact value to round: `None` for zero, or (`b`, sticky) with `b × 2^e`.
    type Exact = (Option<(Big, bool)>, i64);

    /// Reads `[+-]digits` (an exponent), saturating far outside any format's range.
    fn parse_exponent(s: &[u8]) -> Option<i64> {
        let (neg, digits) = match s.first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let v = digits.iter().fold(0i64, |acc, d| {
            (acc * 10 + i64::from(d - b'0')).min(1_000_000_000)
        });
        Some(if neg { -v } else { v })
    }

    /// Splits `digits[.digits][<marker>exponent]`; the exponent part must be complete.
    fn split_number(
        s: &[u8],
        is_digit: fn(&u8) -> bool,
        marker: u8,
    ) -> Option<(&[u8], &[u8], i64)> {
        let int_len = s.iter().take_while(|c| is_digit(c)).count();
        let (int, rest) = s.split_at(int_len);
        let (frac, rest) = match rest.split_first() {
            Some((b'.', r)) => {
                let n = r.iter().take_while(|c| is_digit(c)).count();
                r.split_at(n)
            }
            _ => (&rest[..0], rest),
        };
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        let exp = match rest.split_first() {
            None => 0,
            Some((m, r)) if m | 0x20 == marker => parse_exponent(r)?,
            Some(_) => return None,
        };
        Some((int, frac, exp))
    }

    fn parse_decimal(s: &[u8], f: Format) -> Option<Exact> {
        let (int, frac, exp10) = split_number(s, u8::is_ascii_digit, b'e')?;
        let mut d = Big::default();
        let (mut chunk, mut chunk_len, mut sig) = (0u32, 0u32, 0i64);
        for &c in int.iter().chain(frac) {
            if d.is_zero() && chunk == 0 && c == b'0' {
                continue;
            }
            chunk = chunk * 10 + u32::from(c - b'0');
            chunk_len += 1;
            sig += 1;
            if chunk_len == 9 {
                d.mul_add_small(1_000_000_000, chunk);
                (chunk, chunk_len) = (0, 0);
            }
        }
        d.mul_add_small(10u32.pow(chunk_len), chunk);
        if d.is_zero() {
            return Some((None, 0));
        }
        let e10 = exp10 - frac.len() as i64;
        // The value lies in [10^(sig-1+e10), 10^(sig+e10)): settle far overflows and
        // underflows before computing powers of ten thousands of digits long.
        let log10_2 = std::f64::consts::LOG10_2;
        if (sig - 1 + e10) as f64 > (f.max_exp + i64::from(f.bits)) as f64 * log10_2 + 1.0
            || ((sig + e10) as f64) < f.min_exp as f64 * log10_2 - 2.0
        {
            return None;
        }
        if e10 >= 0 {
            d.mul_pow5(e10 as u64);
            return Some((Some((d, false)), e10));
        }
        // d / 10^k = (d / 5^k) × 2^-k: divide with enough quotient bits to round.
        let k = -e10;
        let mut den = Big::from_u128(1);
        den.mul_pow5(k as u64);
        let s = i64::from(f.bits) + 3 + den.bit_len() as i64 - d.bit_len() as i64;
        let (num, den) = if s >= 0 {
            (d.shl(s as u64), den)
        } else {
            (d, den.shl((-s) as u64))
        };
        let (q, sticky) = div_small_quotient(&num, &den);
        Some((Some((Big::from_u128(q), sticky)), -k - s))
    }

    fn parse_hex(s: &[u8], f: Format) -> Option<Exact> {
        let (int, frac, exp2) = split_number(s, u8::is_ascii_hexdigit, b'p')?;
        let mut h = Big::default();
        for &c in int.iter().chain(frac) {
            let v = (c as char).to_digit(16).unwrap_or(0);
            h.mul_add_small(16, v);
        }
        if h.is_zero() {
            return Some((None, 0));
        }
        let e = exp2 - 4 * frac.len() as i64;
        let len = h.bit_len() as i64;
        if len + e > f.max_exp + i64::from(f.bits) + 1 || len + e < f.min_exp - 1 {
            return None;
        }
        Some((Some((h, false)), e))
    }

    /// `strtod` as Redis's `string2d` accepts it (ZADD scores and the like), for the forms
    /// Rust's parser does not read (hexadecimal): `None` when Redis says "not a valid float".
    pub fn parse_c_double(s: &[u8]) -> Option<f64> {
        let sign = |neg: bool| if neg { 1u64 << 63 } else { 0 };
        match parse(s, DOUBLE)? {
            Parsed::Zero(neg) => Some(f64::from_bits(sign(neg))),
            Parsed::Inf(neg) => Some(if neg {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            }),
            Parsed::Finite(neg, mant, exp) => {
                let mant = mant as u64;
                let bits = if mant >> 52 == 0 {
                    mant // subnormal: exp is DOUBLE.min_exp
                } else {
                    (((exp + 1075) as u64) << 52) | (mant & ((1 << 52) - 1))
                };
                Some(f64::from_bits(sign(neg) | bits))
            }
        }
    }

    /// An x87 80-bit `long double`: what Redis's INCRBYFLOAT adds in.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct LongDouble {
        neg: bool,
        kind: Kind,
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Kind {
        Zero,
        /// `mant × 2^exp`: `mant >= 2^63`, or a subnormal at `EXTENDED.min_exp`.
        Finite {
            mant: u64,
            exp: i32,
        },
        Inf,
        NaN,
    }

    impl LongDouble {
        /// Zero.
        pub const ZERO: LongDouble = LongDouble {
            neg: false,
            kind: Kind::Zero,
        };

        /// Redis's `string2ld` (`strtold` of the whole argument): `None` when Redis replies
        /// "value is not a valid float" (empty, 5120 bytes or more, not one complete number,
        /// NaN, overflow, or underflow to zero). `inf` is accepted.
        pub fn parse(s: &[u8]) -> Option<LongDouble> {
            if s.is_empty() || s.len() >= MAX_LONG_DOUBLE_CHARS {
                return None;
            }
            Some(match parse(s, EXTENDED)? {
                Parsed::Zero(neg) => LongDouble {
                    neg,
                    kind: Kind::Zero,
                },
                Parsed::Inf(neg) => LongDouble {
                    neg,
                    kind: Kind::Inf,
                },
                Parsed::Finite(neg, mant, exp) => LongDouble {
                    neg,
                    kind: Kind::Finite {
                        mant: mant as u64,
                        exp: exp as i32,
                    },
                },
            })
        }

        /// The exact value of a double.
        pub fn from_f64(v: f64) -> LongDouble {
            let neg = v.is_sign_negative();
            let kind = if v.is_nan() {
                Kind::NaN
            } else if v.is_infinite() {
                Kind::Inf
            } else if v == 0.0 {
                Kind::Zero
            } else {
                let bits = v.to_bits();
                let (frac, biased) = (bits & ((1 << 52) - 1), ((bits >> 52) & 0x7ff) as i64);
                let (m, e) = if biased == 0 {
                    (frac, -1074)
                } else {
                    (frac | (1 << 52), biased - 1075)
                };
                match round(&Big::from_u128(u128::from(m)), e, false, EXTENDED) {
                    Rounded::Finite(mant, exp) => Kind::Finite {
                        mant: mant as u64,
                        exp: exp as i32,
                    },
                    Rounded::Zero | Rounded::Overflow => Kind::Zero,
                }
            };
            LongDouble { neg, kind }
        }

        /// Whether this is neither infinite nor NaN.
        pub fn is_finite(&self) -> bool {
            matches!(self.kind, Kind::Zero | Kind::Finite { .. })
        }

        /// Redis's `ld2string(..., LD_STR_HUMAN)`: `%.17Lf`, trailing zeros (and a trailing
        /// point) removed, `-0` written `0`. For finite values (Redis never prints others
        /// this way).
        pub fn to_human(&self) -> String {
            const SCALE: u128 = 100_000_000_000_000_000; // 10^17
            let body = match self.kind {
                Kind::Zero => "0".to_string(),
                Kind::Inf => "inf".to_string(),
                Kind::NaN => "nan".to_string(),
                Kind::Finite { mant, exp } if exp >= 0 => Big::from_u128(u128::from(mant))
                    .shl(exp as u64)
                    .to_decimal(),
                Kind::Finite { mant, exp } => {
                    // mant × 10^17 < 2^121, so past 121 fraction bits the value rounds to 0.
                    let n = u32::try_from(-exp).unwrap_or(u32::MAX);
                    let q = if n >= 122 {
                        0
                    } else {
                        let scaled = u128::from(mant) * SCALE;
                        let (q, r, half) = (scaled >> n, scaled & ((1 << n) - 1), 1u128 << (n - 1));
                        if r > half || (r == half && q & 1 == 1) {
                            q + 1
                        } else {
                            q
                        }
                    };
                    let frac = format!("{:017}", q % SCALE);
                    let frac = frac.trim_end_matches('0');
                    if frac.is_empty() {
                        (q / SCALE).to_string()
                    } else {
                        format!("{}.{frac}", q / SCALE)
                    }
                }
            };
            if self.neg && body != "0" {
                format!("-{body}")
            } else {
                body
            }
        }
    }

    impl std::ops::Add for LongDouble {
        type Output = LongDouble;

        /// `self + other`, rounded as the x87 unit rounds (nearest, ties to even).
        fn add(self, other: LongDouble) -> LongDouble {
            use Kind::*;
            match (self.kind, other.kind) {
                (NaN, _) | (_, NaN) => LongDouble {
                    neg: false,
                    kind: NaN,
                },
                (Inf, Inf) if self.neg != other.neg => LongDouble {
                    neg: false,
                    kind: NaN,
                },
                (Inf, _) => self,
                (_, Inf) => other,
                (Zero, Zero) => LongDouble {
                    neg: self.neg && other.neg,
                    kind: Zero,
                },
                (Zero, _) => other,
                (_, Zero) => self,
                (Finite { mant: ma, exp: ea }, Finite { mant: mb, exp: eb }) => {
                    let e = ea.min(eb);
                    let a = Big::from_u128(u128::from(ma)).shl((ea - e) as u64);
                    let b = Big::from_u128(u128::from(mb)).shl((eb - e) as u64);
                    let (sum, neg) = if self.neg == other.neg {
                        (a.add(&b), self.neg)
                    } else {
                        match a.cmp_big(&b) {
                            Ordering::Equal => return LongDouble::ZERO,
                            Ordering::Greater => {
                                let mut d = a;
                                d.sub_assign(&b);
                                (d, self.neg)
                            }
                            Ordering::Less => {
                                let mut d = b;
                                d.sub_assign(&a);
                                (d, other.neg)
                            }
                        }
                    };
                    let kind = match round(&sum, i64::from(e), false, EXTENDED) {
                        Rounded::Finite(mant, exp) => Finite {
                            mant: mant as u64,
                            exp: exp as i32,
                        },
                        Rounded::Overflow => Inf,
                        Rounded::Zero => Zero,
                    };
                    LongDouble { neg, kind }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cfloat::{parse_c_double, LongDouble};
    use crate::engine::cmd::{format_f64, parse_f64};
    use crate::engine::CmdError;

    /// glibc's `%.17g`, the oracle for `format_f64`.
    fn printf_g17(v: f64) -> String {
        let mut buf = [0u8; 64];
        // SAFETY: the buffer is large enough for any %.17g output and NUL-terminated by
        // snprintf; the format takes exactly one double.
        let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%.17g".as_ptr(), v) };
        String::from_utf8_lossy(&buf[..n as usize]).into_owned()
    }

    /// glibc's `strtod` of the whole string (Redis's `string2d` rules), the oracle for
    /// `parse_f64`.
    fn c_strtod(s: &str) -> Option<f64> {
        let c = std::ffi::CString::new(s).ok()?;
        let mut end: *mut libc::c_char = std::ptr::null_mut();
        // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
        let v = unsafe { libc::strtod(c.as_ptr(), &mut end) };
        // SAFETY: strtod sets `end` inside `c`.
        let used = unsafe { end.offset_from(c.as_ptr()) } as usize;
        let digits = s.split(['e', 'E', 'p', 'P']).next().unwrap_or("");
        let nonzero_digits = digits
            .trim_start_matches(['+', '-'])
            .trim_start_matches("0x")
            .trim_start_matches("0X")
            .bytes()
            .any(|c| c.is_ascii_hexdigit() && c != b'0');
        let bad = s.is_empty()
            || s.starts_with(|c: char| c.is_ascii_whitespace())
            || used != s.len()
            || v.is_nan()
            || (v.is_infinite() && !s.to_ascii_lowercase().contains("inf"))
            || (v == 0.0 && nonzero_digits);
        (!bad).then_some(v)
    }

    #[test]
    fn format_f64_is_printf_g17() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut values = vec![
            0.1,
            -0.0,
            0.0,
            1.0,
            1e17,
            1e16,
            123456789012345678.0,
            1e-4,
            1.5e-5,
            1e21,
            1e300,
            5e-324,
            f64::MAX,
            f64::MIN_POSITIVE,
            ((1u64 << 52) + 1) as f64 / 4.0,
            3.0000000000000004,
            -2.5,
            0.3,
        ];
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x);
            if v.is_finite() {
                values.push(v);
            }
            values.push((x % 100_000) as f64 / 1000.0);
        }
        for v in values {
            assert_eq!(format_f64(v), printf_g17(v), "{v:e}");
        }
        assert_eq!(format_f64(f64::INFINITY), "inf");
        assert_eq!(format_f64(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn parse_f64_is_redis_string2d() {
        for s in [
            "1",
            "-1.5",
            "+2",
            ".5",
            "5.",
            "1e5",
            "1E+5",
            "1e-5",
            "0x10",
            "0X1p-2",
            "-0x1.8p1",
            "0x.8",
            "inf",
            "-inf",
            "+Infinity",
            "INF",
            "nan",
            "NaN",
            "1e400",
            "-1e400",
            "1e-400",
            "0e400",
            "0x0p99999",
            "0x1p-1074",
            "0x1p-1075",
            "0x1p-1076",
            "0x1.8p-1075",
            "0x1p1024",
            "4.9e-324",
            "2.4e-324",
            "2.5e-324",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
            " 1",
            "1 ",
            "",
            "e5",
            "1e",
            "1e+",
            "0x",
            "0xg",
            "1.2.3",
            "--1",
            "0x1p",
            "1_0",
            "123456789012345678901234567890",
            "0.000000000000000000000000000001",
        ] {
            let ours = parse_f64(s.as_bytes()).ok();
            let theirs = c_strtod(s);
            assert_eq!(
                ours.map(f64::to_bits),
                theirs.map(f64::to_bits),
                "{s:?}: ours {ours:?} strtod {theirs:?}"
            );
        }
        assert_eq!(parse_f64(b"1\x00"), Err(CmdError::NotFloat));
        assert_eq!(parse_c_double(b"0x1.fffffffffffff8p1023"), None);
    }

    fn incr(a: &str, b: &str) -> Option<String> {
        let a = LongDouble::parse(a.as_bytes())?;
        let b = LongDouble::parse(b.as_bytes())?;
        let sum = a + b;
        sum.is_finite().then(|| sum.to_human())
    }

    #[test]
    fn long_double_sums_print_as_redis_does() {
        // Expected values are redis-server 7.0's INCRBYFLOAT replies.
        let cases = [
            ("0.1", "0.2", "0.3"),
            ("10.5", "0.1", "10.6"),
            ("0.3", "1e30", "1000000000000000000024696061952"),
            ("0", "3.814697265625e-6", "0.00000381469726562"),
            ("1e-20", "0", "0"),
            ("0", "-1e-20", "0"),
            ("17", "-0.25", "16.75"),
            ("1", "0x10", "17"),
            ("0", "1e-4950", "0"),
            ("0", "5.0e3", "5000"),
            ("0", "1.5e17", "150000000000000000"),
            ("0", "12345678901234567890.123", "12345678901234567890"),
            ("3.0", "-3", "0"),
            ("-0", "-0", "0"),
            ("5", "-5.5", "-0.5"),
        ];
        for (a, b, want) in cases {
            assert_eq!(incr(a, b).as_deref(), Some(want), "{a} + {b}");
        }
        assert_eq!(incr("1", "inf"), None);
        for bad in [
            "", " 1", "1 ", "abc", "nan", "1e5000", "1e-4952", "1\x00", "0x", "1e",
        ] {
            assert_eq!(LongDouble::parse(bad.as_bytes()), None, "{bad:?}");
        }
        let long = |n: usize| [&b"0."[..], &vec![b'1'; n - 2]].concat();
        assert_eq!(
            LongDouble::parse(&long(5119))
                .map(|v| v.to_human())
                .as_deref(),
            Some("0.11111111111111111")
        );
        assert_eq!(LongDouble::parse(&long(5120)), None);
    }
}

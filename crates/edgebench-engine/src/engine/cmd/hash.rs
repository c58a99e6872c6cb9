//! Hashes: HSET, HSETNX, HGET, HMGET, HMSET, HGETALL, HDEL, HLEN, HEXISTS, HKEYS, HVALS,
//! HINCRBY, HINCRBYFLOAT, HSTRLEN, HRANDFIELD, HSCAN.
//!
//! Invariants: an empty hash is never stored (HDEL ends with `drop_if_empty`). Values are
//! kept as bytes, as Redis replies with them; HINCRBY and HINCRBYFLOAT parse them on use.
//!
//! Keyspace events, as Redis 7.0's t_hash.c emits them (class `h`): `hset` for every HSET
//! and HMSET and for an HSETNX that set, `hincrby`, `hincrbyfloat`, and `hdel` when a field
//! went (then `del` in class `g` if the hash went with it).
//!
//! HINCRBYFLOAT computes in x87 `long double`, as Redis on x86-64 does, and prints with
//! `%.17Lf` — `12345.1` becomes `12345.09999999999999964`, which no `f64` arithmetic
//! reproduces — through the software `long double` INCRBYFLOAT uses
//! ([`crate::engine::types::cfloat`]).

use std::borrow::Cow;

use super::keys::{glob_match, parse_scan_cursor};
use super::set::{
    parse_random_count, random_below, random_pick, scan_page, scan_reply, ScanOptions,
};
use super::{is, parse_i64, Ctx, KeySpec, Spec};
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::{FieldMap, Key, Locked};
use crate::engine::types::cfloat::LongDouble;
use crate::resp::reply::Reply;

/// Redis's `hash-max-listpack-entries` and `hash-max-listpack-value`: a hash within both is
/// a listpack, which HSCAN returns whole.
const LISTPACK_MAX_ENTRIES: usize = 128;
const LISTPACK_MAX_VALUE: usize = 64;

/// A field and its value, as the typed API returns them.
pub type FieldValue = (Vec<u8>, Vec<u8>);

const KEY1: KeySpec = KeySpec::Range {
    first: 1,
    last: 1,
    step: 1,
};

/// The hash commands.
pub const COMMANDS: &[Spec] = &[
    Spec {
        name: "hset",
        arity: -4,
        keys: KEY1,
        write: true,
        run: hset,
    },
    Spec {
        name: "hsetnx",
        arity: 4,
        keys: KEY1,
        write: true,
        run: hsetnx,
    },
    Spec {
        name: "hget",
        arity: 3,
        keys: KEY1,
        write: false,
        run: hget,
    },
    Spec {
        name: "hmget",
        arity: -3,
        keys: KEY1,
        write: false,
        run: hmget,
    },
    Spec {
        name: "hmset",
        arity: -4,
        keys: KEY1,
        write: true,
        run: hmset,
    },
    Spec {
        name: "hgetall",
        arity: 2,
        keys: KEY1,
        write: false,
        run: hgetall,
    },
    Spec {
        name: "hdel",
        arity: -3,
        keys: KEY1,
        write: true,
        run: hdel,
    },
    Spec {
        name: "hlen",
        arity: 2,
        keys: KEY1,
        write: false,
        run: hlen,
    },
    Spec {
        name: "hexists",
        arity: 3,
        keys: KEY1,
        write: false,
        run: hexists,
    },
    Spec {
        name: "hkeys",
        arity: 2,
        keys: KEY1,
        write: false,
        run: hkeys,
    },
    Spec {
        name: "hvals",
        arity: 2,
        keys: KEY1,
        write: false,
        run: hvals,
    },
    Spec {
        name: "hincrby",
        arity: 4,
        keys: KEY1,
        write: true,
        run: hincrby,
    },
    Spec {
        name: "hincrbyfloat",
        arity: 4,
        keys: KEY1,
        write: true,
        run: hincrbyfloat,
    },
    Spec {
        name: "hstrlen",
        arity: 3,
        keys: KEY1,
        write: false,
        run: hstrlen,
    },
    Spec {
        name: "hrandfield",
        arity: -2,
        keys: KEY1,
        write: false,
        run: hrandfield,
    },
    Spec {
        name: "hscan",
        arity: -3,
        keys: KEY1,
        write: false,
        run: hscan,
    },
];

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

/// Sets `field` to `value`, reusing the stored field when it exists.
fn put(hash: &mut FieldMap, field: &[u8], value: Vec<u8>) -> bool {
    match hash.get_mut(field) {
        Some(v) => {
            *v = value;
            false
        }
        None => {
            hash.insert(field.into(), value);
            true
        }
    }
}

fn pair((f, v): (&Key, &Vec<u8>)) -> FieldValue {
    (f.to_vec(), v.clone())
}

// ---- typed operations ----

impl Locked<'_> {
    /// HSET: sets each (field, value); returns how many fields were new.
    pub fn hset(&mut self, key: &[u8], pairs: &[(&[u8], &[u8])]) -> Result<usize, CmdError> {
        let hash = self.hash_or_default(key)?;
        let added = pairs
            .iter()
            .filter(|(f, v)| put(hash, f, v.to_vec()))
            .count();
        self.notify(Classes::HASH, "hset", key);
        Ok(added)
    }

    /// HSETNX: sets `field` only if it is absent; returns whether it did.
    pub fn hsetnx(&mut self, key: &[u8], field: &[u8], value: &[u8]) -> Result<bool, CmdError> {
        if self.get_hash(key)?.is_some_and(|h| h.contains_key(field)) {
            return Ok(false);
        }
        self.hash_or_default(key)?
            .insert(field.into(), value.to_vec());
        self.notify(Classes::HASH, "hset", key);
        Ok(true)
    }

    /// HGET.
    pub fn hget(&mut self, key: &[u8], field: &[u8]) -> Result<Option<&[u8]>, CmdError> {
        Ok(self
            .get_hash(key)?
            .and_then(|h| h.get(field))
            .map(Vec::as_slice))
    }

    /// HMGET: the value of each of `fields`, in order.
    pub fn hmget(
        &mut self,
        key: &[u8],
        fields: &[&[u8]],
    ) -> Result<Vec<Option<Vec<u8>>>, CmdError> {
        let hash = self.get_hash(key)?;
        Ok(fields
            .iter()
            .map(|f| hash.and_then(|h| h.get(*f)).cloned())
            .collect())
    }

    /// HGETALL: every (field, value), in no particular order.
    pub fn hgetall(&mut self, key: &[u8]) -> Result<Vec<FieldValue>, CmdError> {
        Ok(self
            .get_hash(key)?
            .map(|h| h.iter().map(pair).collect())
            .unwrap_or_default())
    }

    /// HDEL: removes `fields`; returns how many existed.
    pub fn hdel(&mut self, key: &[u8], fields: &[&[u8]]) -> Result<usize, CmdError> {
        match self.get_hash(key)? {
            Some(h) if fields.iter().any(|f| h.contains_key(*f)) => {}
            _ => return Ok(0),
        }
        let removed = match self.get_hash_mut(key)? {
            Some(h) => fields
                .iter()
                .filter(|f| h.shift_remove(**f).is_some())
                .count(),
            None => 0,
        };
        self.notify(Classes::HASH, "hdel", key);
        self.drop_emptied(key);
        Ok(removed)
    }

    /// HLEN.
    pub fn hlen(&mut self, key: &[u8]) -> Result<usize, CmdError> {
        Ok(self.get_hash(key)?.map_or(0, |h| h.len()))
    }

    /// HEXISTS.
    pub fn hexists(&mut self, key: &[u8], field: &[u8]) -> Result<bool, CmdError> {
        Ok(self.get_hash(key)?.is_some_and(|h| h.contains_key(field)))
    }

    /// HKEYS.
    pub fn hkeys(&mut self, key: &[u8]) -> Result<Vec<Vec<u8>>, CmdError> {
        Ok(self
            .get_hash(key)?
            .map(|h| h.keys().map(|f| f.to_vec()).collect())
            .unwrap_or_default())
    }

    /// HVALS.
    pub fn hvals(&mut self, key: &[u8]) -> Result<Vec<Vec<u8>>, CmdError> {
        Ok(self
            .get_hash(key)?
            .map(|h| h.values().cloned().collect())
            .unwrap_or_default())
    }

    /// HSTRLEN: the length of a field's value (0 when absent).
    pub fn hstrlen(&mut self, key: &[u8], field: &[u8]) -> Result<usize, CmdError> {
        Ok(self
            .get_hash(key)?
            .and_then(|h| h.get(field))
            .map_or(0, Vec::len))
    }

    /// HINCRBY: adds `incr` to the integer in `field` (0 when absent); returns the result.
    pub fn hincrby(&mut self, key: &[u8], field: &[u8], incr: i64) -> Result<i64, CmdError> {
        let old = match self.get_hash(key)?.and_then(|h| h.get(field)) {
            Some(v) => parse_i64(v).map_err(|_| err("ERR hash value is not an integer"))?,
            None => 0,
        };
        let new = old.checked_add(incr).ok_or(CmdError::Overflow)?;
        put(
            self.hash_or_default(key)?,
            field,
            new.to_string().into_bytes(),
        );
        self.notify(Classes::HASH, "hincrby", key);
        Ok(new)
    }

    /// HINCRBYFLOAT: adds `incr` to the number in `field` (0 when absent) in `long double`
    /// precision, as Redis does; returns the stored text of the result.
    pub fn hincrbyfloat(
        &mut self,
        key: &[u8],
        field: &[u8],
        incr: f64,
    ) -> Result<Vec<u8>, CmdError> {
        self.hincrbyfloat_ld(key, field, LongDouble::from_f64(incr))
    }

    fn hincrbyfloat_ld(
        &mut self,
        key: &[u8],
        field: &[u8],
        incr: LongDouble,
    ) -> Result<Vec<u8>, CmdError> {
        if !incr.is_finite() {
            return Err(err("ERR value is NaN or Infinity"));
        }
        let old = match self.get_hash(key)?.and_then(|h| h.get(field)) {
            Some(v) => LongDouble::parse(v).ok_or_else(|| err("ERR hash value is not a float"))?,
            None => LongDouble::ZERO,
        };
        let new = old + incr;
        if !new.is_finite() {
            return Err(err("ERR increment would produce NaN or Infinity"));
        }
        let text = new.to_human().into_bytes();
        put(self.hash_or_default(key)?, field, text.clone());
        self.notify(Classes::HASH, "hincrbyfloat", key);
        Ok(text)
    }

    /// HRANDFIELD without a count: a random field.
    pub fn hrandfield(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, CmdError> {
        Ok(self
            .get_hash(key)?
            .and_then(|h| h.keys().nth(random_below(h.len())))
            .map(|f| f.to_vec()))
    }

    /// HRANDFIELD with a count, with the values: `count >= 0` distinct fields (all when the
    /// hash is no larger), `count < 0` exactly `-count` fields, possibly repeated (refused
    /// beyond [`super::set::MAX_RANDOM_REPLY`]).
    pub fn hrandfield_count(
        &mut self,
        key: &[u8],
        count: i64,
    ) -> Result<Vec<FieldValue>, CmdError> {
        let Some(hash) = self.get_hash(key)? else {
            return Ok(Vec::new());
        };
        let entries: Vec<(&Key, &Vec<u8>)> = hash.iter().collect();
        Ok(random_pick(&entries, count)?
            .into_iter()
            .map(pair)
            .collect())
    }

    /// HSCAN: one page of (field, value) whose field matches `pattern` (a Redis glob), and
    /// the next cursor (0 when complete). A small hash comes whole, as from Redis.
    pub fn hscan(
        &mut self,
        key: &[u8],
        cursor: u64,
        pattern: Option<&[u8]>,
        count: usize,
    ) -> Result<(u64, Vec<FieldValue>), CmdError> {
        let Some(hash) = self.get_hash(key)? else {
            return Ok((0, Vec::new()));
        };
        let listpack = hash.len() <= LISTPACK_MAX_ENTRIES
            && hash
                .iter()
                .all(|(f, v)| f.len() <= LISTPACK_MAX_VALUE && v.len() <= LISTPACK_MAX_VALUE);
        let (next, page): (u64, Vec<(&Key, &Vec<u8>)>) = if listpack {
            (0, hash.iter().collect())
        } else {
            scan_page(hash.iter().map(|e| (&e.0[..], e)), cursor, count)
        };
        let page = page
            .into_iter()
            .filter(|(f, _)| pattern.is_none_or(|p| glob_match(p, f)))
            .map(pair)
            .collect();
        Ok((next, page))
    }
}

// ---- commands ----

fn field_pairs<'a>(args: &[&'a [u8]]) -> Vec<(&'a [u8], &'a [u8])> {
    args.chunks_exact(2).map(|c| (c[0], c[1])).collect()
}

fn hset(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    if args.len() % 2 == 1 {
        return Err(CmdError::Arity("hset".into()));
    }
    let added = ctx.ks.hset(args[1], &field_pairs(&args[2..]))?;
    Ok(Reply::Int(added as i64))
}

fn hmset(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    if args.len() % 2 == 1 {
        return Err(CmdError::Arity("hmset".into()));
    }
    ctx.ks.hset(args[1], &field_pairs(&args[2..]))?;
    Ok(Reply::ok())
}

fn hsetnx(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.hsetnx(args[1], args[2], args[3])?.into()))
}

fn hget(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::opt_bulk(ctx.ks.hget(args[1], args[2])?))
}

fn hmget(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let values = ctx.ks.hmget(args[1], &args[2..])?;
    Ok(Reply::Array(
        values
            .into_iter()
            .map(|v| v.map_or(Reply::Nil, Reply::Bulk))
            .collect(),
    ))
}

fn hgetall(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    // The reply straight from the hash: one copy of each field and value, no list between.
    let pairs = match ctx.ks.get_hash(args[1])? {
        Some(h) => h
            .iter()
            .map(|(f, v)| (Reply::Bulk(f.to_vec()), Reply::Bulk(v.clone())))
            .collect(),
        None => Vec::new(),
    };
    Ok(Reply::Map(pairs))
}

fn hdel(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.hdel(args[1], &args[2..])? as i64))
}

fn hlen(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.hlen(args[1])? as i64))
}

fn hexists(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.hexists(args[1], args[2])?.into()))
}

fn bulk_array(items: Vec<Vec<u8>>) -> Reply {
    Reply::Array(items.into_iter().map(Reply::Bulk).collect())
}

fn hkeys(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(bulk_array(ctx.ks.hkeys(args[1])?))
}

fn hvals(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(bulk_array(ctx.ks.hvals(args[1])?))
}

fn hstrlen(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(ctx.ks.hstrlen(args[1], args[2])? as i64))
}

fn hincrby(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let incr = parse_i64(args[3])?;
    Ok(Reply::Int(ctx.ks.hincrby(args[1], args[2], incr)?))
}

fn hincrbyfloat(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let incr = LongDouble::parse(args[3]).ok_or(CmdError::NotFloat)?;
    Ok(Reply::Bulk(ctx.ks.hincrbyfloat_ld(args[1], args[2], incr)?))
}

fn hrandfield(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    if args.len() == 2 {
        return Ok(Reply::opt_bulk(ctx.ks.hrandfield(args[1])?.as_deref()));
    }
    let count = parse_random_count(args[2])?;
    let with_values = match args {
        [_, _, _] => false,
        [_, _, _, opt] if is(opt, "withvalues") => true,
        _ => return Err(CmdError::Syntax),
    };
    // Redis bounds the count so that twice it (field and value) cannot overflow.
    if with_values && !(-(i64::MAX / 2)..=i64::MAX / 2).contains(&count) {
        return Err(err("ERR value is out of range"));
    }
    let pairs = ctx.ks.hrandfield_count(args[1], count)?;
    Ok(Reply::Array(if !with_values {
        pairs.into_iter().map(|(f, _)| Reply::Bulk(f)).collect()
    } else if ctx.client.resp >= 3 {
        pairs
            .into_iter()
            .map(|(f, v)| Reply::Array(vec![Reply::Bulk(f), Reply::Bulk(v)]))
            .collect()
    } else {
        pairs
            .into_iter()
            .flat_map(|(f, v)| [Reply::Bulk(f), Reply::Bulk(v)])
            .collect()
    }))
}

fn hscan(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    // Cursor, then the key (a missing key ends the scan before the options are read), then
    // the options: Redis's order.
    let cursor = parse_scan_cursor(args[2])?;
    if ctx.ks.get_hash(args[1])?.is_none() {
        return Ok(scan_reply(0, Vec::new()));
    }
    let opts = ScanOptions::parse(&args[3..])?;
    let (next, pairs) = ctx.ks.hscan(args[1], cursor, opts.pattern, opts.count)?;
    Ok(scan_reply(
        next,
        pairs
            .into_iter()
            .flat_map(|(f, v)| [Reply::Bulk(f), Reply::Bulk(v)])
            .collect(),
    ))
}

//! Introspection and whole-database moves: OBJECT (ENCODING, FREQ, IDLETIME, REFCOUNT,
//! HELP), MEMORY (USAGE, HELP), TOUCH and SWAPDB, with Redis 7.0's replies.
//!
//! OBJECT ENCODING reports what redis-server 7.0 would store the value as (see
//! [`crate::engine::types::encoding`]). IDLETIME is the seconds since a command last read
//! or wrote the key (every command that reads a key counts, TYPE and EXISTS too, where
//! Redis leaves those out; OBJECT itself does not count, as in Redis; TOUCH does). Access
//! frequencies are not tracked (Redis's LFU counter is a probabilistic logarithm): FREQ
//! answers a new key's counter (`LFU_INIT_VAL`, 5). Both give Redis's errors for the wrong
//! `maxmemory-policy`. REFCOUNT answers as Redis does: its shared integer objects (0–9999,
//! when the policy allows sharing) report `INT_MAX`, every other value 1.
//!
//! MEMORY USAGE is the engine's own estimate of what a key holds, not jemalloc's figure
//! (the engine's structures are not Redis's): see [`estimate`].
//!
//! SWAPDB declares no keys and locks every shard of both databases itself, in ascending
//! database order (as COPY ... DB and MOVE do; see `keys`), so no deadlock is possible.

use std::borrow::Cow;

use super::{is, parse_i64, spec, Ctx, KeySpec, Spec, ALL_ARGS};
use crate::engine::error::CmdError;
use crate::engine::handle::{Engine, DATABASES};
use crate::engine::keyspace::{Entry, Value};
use crate::engine::types::encoding::{is_redis_integer, LimitValues, Limits, Shape};
use crate::resp::reply::Reply;

/// The commands of this family.
pub const COMMANDS: &[Spec] = &[
    spec("object", -2, KeySpec::Custom(subcommand_key), false, object),
    spec("memory", -2, KeySpec::Custom(subcommand_key), false, memory),
    spec("touch", -2, ALL_ARGS, false, touch),
    // Locks both databases itself (see the module doc).
    spec("swapdb", 3, KeySpec::None, true, swapdb),
];

/// OBJECT and MEMORY name their key after the subcommand.
fn subcommand_key(args: &[&[u8]]) -> Vec<usize> {
    if args.len() > 2 && !is(args[1], "help") {
        vec![2]
    } else {
        Vec::new()
    }
}

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

fn lossy(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).into_owned()
}

/// `ERR unknown subcommand 'x'. Try OBJECT HELP.`
fn unknown_subcommand(args: &[&[u8]]) -> CmdError {
    let sub = &args[1][..args[1].len().min(128)];
    CmdError::Other(Cow::Owned(format!(
        "ERR unknown subcommand '{}'. Try {} HELP.",
        lossy(sub),
        lossy(args[0]).to_uppercase()
    )))
}

/// Checks a subcommand's exact arity (`object|encoding`...).
fn sub_arity(args: &[&[u8]], n: usize, full_name: &str) -> Result<(), CmdError> {
    if args.len() == n {
        Ok(())
    } else {
        Err(CmdError::Arity(full_name.to_string()))
    }
}

/// A HELP reply in Redis's layout.
fn help(args: &[&[u8]], lines: &[&'static str]) -> Reply {
    let mut out = vec![Reply::Status(Cow::Owned(format!(
        "{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        lossy(args[0]).to_uppercase()
    )))];
    out.extend(lines.iter().map(|l| Reply::Status(Cow::Borrowed(l))));
    out.push(Reply::Status("HELP".into()));
    out.push(Reply::Status("    Prints this help.".into()));
    Reply::Array(out)
}

const OBJECT_HELP: &[&str] = &[
    "ENCODING <key>",
    "    Return the kind of internal representation used in order to store the value",
    "    associated with a <key>.",
    "FREQ <key>",
    "    Return the access frequency index of the <key>. The returned integer is",
    "    proportional to the logarithm of the recent access frequency of the key.",
    "IDLETIME <key>",
    "    Return the idle time of the <key>, that is the approximated number of",
    "    seconds elapsed since the last access to the key.",
    "REFCOUNT <key>",
    "    Return the number of references of the value associated with the specified",
    "    <key>.",
];

const MEMORY_HELP: &[&str] = &[
    "DOCTOR",
    "    Return memory problems reports.",
    "MALLOC-STATS",
    "    Return internal statistics report from the memory allocator.",
    "PURGE",
    "    Attempt to purge dirty pages for reclamation by the allocator.",
    "STATS",
    "    Return information about the memory usage of the server.",
    "USAGE <key> [SAMPLES <count>]",
    "    Return memory in bytes used by <key> and its value. Nested values are",
    "    sampled up to <count> times (default: 5, 0 means sample all).",
];

/// Redis's counter of a key never accessed since it was made (`LFU_INIT_VAL`).
const LFU_INIT: i64 = 5;
/// The refcount Redis reports for its shared objects (`OBJ_SHARED_REFCOUNT`).
const SHARED_REFCOUNT: i64 = i32::MAX as i64;
/// Redis shares the integer objects 0..this (`OBJ_SHARED_INTEGERS`).
const SHARED_INTEGERS: i64 = 10_000;

fn policy(engine: &Engine) -> String {
    engine.config_get("maxmemory-policy").unwrap_or_default()
}

fn lfu(engine: &Engine) -> bool {
    policy(engine).contains("lfu")
}

/// Whether Redis may share integer objects: not under an LRU or LFU policy with a memory
/// limit (`MAXMEMORY_FLAG_NO_SHARED_INTEGERS`), since shared objects carry no access data.
fn shares_integers(engine: &Engine) -> bool {
    let limited = engine.config_get("maxmemory").is_some_and(|m| m != "0");
    let p = policy(engine);
    !(limited && (p.contains("lru") || p.contains("lfu")))
}

fn object(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    if is(sub, "help") {
        sub_arity(args, 2, "object|help")?;
        return Ok(help(args, OBJECT_HELP));
    }
    let name = ["encoding", "freq", "idletime", "refcount"]
        .into_iter()
        .find(|n| is(sub, n))
        .ok_or_else(|| unknown_subcommand(args))?;
    sub_arity(args, 3, &format!("object|{name}"))?;
    let key = args[2];
    let now_s = ctx.ks.now_ms() / 1000;
    let Some(accessed_s) = ctx.ks.peek(key).map(|e| e.accessed_s) else {
        return Ok(Reply::Nil);
    };
    match name {
        "encoding" => Ok(ctx
            .ks
            .encoding_of(key)
            .map_or(Reply::Nil, |e| Reply::bulk(e.as_bytes()))),
        "freq" if !lfu(ctx.engine) => Err(err(
            "ERR An LFU maxmemory policy is not selected, access frequency not tracked. \
             Please note that when switching between policies at runtime LRU and LFU data \
             will take some time to adjust.",
        )),
        // A shared integer carries no counter of its own (Redis reports 0 for it).
        "freq" => {
            let shares = shares_integers(ctx.engine);
            let shared = ctx
                .ks
                .get(key)
                .is_some_and(|e| is_shared_integer(e, shares));
            Ok(Reply::Int(if shared { 0 } else { LFU_INIT }))
        }
        "idletime" if lfu(ctx.engine) => Err(err(
            "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note \
             that when switching between policies at runtime LRU and LFU data will take \
             some time to adjust.",
        )),
        "idletime" => Ok(Reply::Int(
            now_s.saturating_sub(u64::from(accessed_s)) as i64
        )),
        _ => {
            let shares = shares_integers(ctx.engine);
            let shared = ctx
                .ks
                .get(key)
                .is_some_and(|e| is_shared_integer(e, shares));
            Ok(Reply::Int(if shared { SHARED_REFCOUNT } else { 1 }))
        }
    }
}

/// Whether Redis holds this value as one of its shared integers.
fn is_shared_integer(entry: &Entry, shares: bool) -> bool {
    let Value::Str(s) = &entry.value else {
        return false;
    };
    shares
        && !entry.shape.has(Shape::RAW)
        && !entry.shape.has(Shape::NOT_INT)
        && is_redis_integer(s)
        && parse_i64(s).is_ok_and(|v| (0..SHARED_INTEGERS).contains(&v))
}

fn memory(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    if is(sub, "help") && args.len() == 2 {
        return Ok(help(args, MEMORY_HELP));
    }
    if args.len() == 2 {
        if is(sub, "stats") {
            return Ok(memory_stats(ctx.engine));
        }
        if is(sub, "doctor") {
            return Ok(Reply::Verbatim(memory_doctor(ctx.engine)));
        }
        if is(sub, "malloc-stats") {
            return Ok(Reply::bulk(
                b"Stats not available: the allocator keeps no report".as_slice(),
            ));
        }
        if is(sub, "purge") {
            return Ok(Reply::ok());
        }
    }
    if ["stats", "doctor", "malloc-stats", "purge"]
        .iter()
        .any(|s| is(sub, s))
    {
        return Err(CmdError::Arity(format!(
            "memory|{}",
            lossy(sub).to_lowercase()
        )));
    }
    if !is(sub, "usage") || args.len() < 3 {
        return Err(if is(sub, "usage") || is(sub, "help") {
            CmdError::Arity(format!("memory|{}", lossy(sub).to_lowercase()))
        } else {
            unknown_subcommand(args)
        });
    }
    // SAMPLES n (0 = all); Redis's default is 5.
    let mut samples: usize = 5;
    let mut j = 3;
    while j < args.len() {
        if is(args[j], "samples") && j + 1 < args.len() {
            let n = parse_i64(args[j + 1])?;
            if n < 0 {
                return Err(CmdError::Syntax);
            }
            samples = if n == 0 { usize::MAX } else { n as usize };
            j += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    let key = args[2];
    Ok(match ctx.ks.get(key) {
        None => Reply::Nil,
        Some(e) => Reply::Int(estimate(key, &e.value, samples) as i64),
    })
}

/// What one key costs the keyspace beyond its name and value: its entry and its slot in the
/// table (MEMORY STATS's `overhead.hashtable.main`, per key).
const KEY_OVERHEAD: usize = HEAP + std::mem::size_of::<Entry>() + MAP_SLOT;

/// MEMORY STATS: Redis's fields, with the engine's figures (the heap and peak INFO reports;
/// per database, each key's entry and table slot as overhead). What the engine does not
/// have (a replication backlog, replicas, cluster links) is zero; what it does not measure
/// (Lua's caches) is zero as INFO reports it; allocator internals are left out.
fn memory_stats(engine: &Engine) -> Reply {
    let now = engine.memory_now();
    let (used, rss, peak) = (now.used as f64, now.rss as f64, now.peak as f64);
    let mut fields: Vec<(&str, Reply)> = vec![
        ("peak.allocated", Reply::Int(now.peak as i64)),
        ("total.allocated", Reply::Int(now.used as i64)),
        ("startup.allocated", Reply::Int(0)),
        ("replication.backlog", Reply::Int(0)),
        ("clients.slaves", Reply::Int(0)),
        ("clients.normal", Reply::Int(0)),
        ("cluster.links", Reply::Int(0)),
        ("aof.buffer", Reply::Int(0)),
        ("lua.caches", Reply::Int(0)),
        ("functions.caches", Reply::Int(0)),
    ];
    let mut dbs = Vec::new();
    let (mut overhead, mut keys) = (0usize, 0usize);
    for (i, (n, expires)) in engine.keyspace_counts().into_iter().enumerate() {
        if n == 0 {
            continue;
        }
        let main = n * KEY_OVERHEAD;
        let exp = expires * MAP_SLOT;
        overhead += main + exp;
        keys += n;
        dbs.push((
            format!("db.{i}"),
            Reply::Map(vec![
                (
                    Reply::bulk(b"overhead.hashtable.main".as_slice()),
                    Reply::Int(main as i64),
                ),
                (
                    Reply::bulk(b"overhead.hashtable.expires".as_slice()),
                    Reply::Int(exp as i64),
                ),
            ]),
        ));
    }
    let dataset = now.used.saturating_sub(overhead as u64);
    let tail: Vec<(&str, Reply)> = vec![
        ("overhead.total", Reply::Int(overhead as i64)),
        ("keys.count", Reply::Int(keys as i64)),
        (
            "keys.bytes-per-key",
            Reply::Int(if keys == 0 {
                0
            } else {
                (now.used / keys as u64) as i64
            }),
        ),
        ("dataset.bytes", Reply::Int(dataset as i64)),
        (
            "dataset.percentage",
            Reply::Double(if used > 0.0 {
                dataset as f64 * 100.0 / used
            } else {
                0.0
            }),
        ),
        (
            "peak.percentage",
            Reply::Double(if peak > 0.0 { used * 100.0 / peak } else { 0.0 }),
        ),
        (
            "fragmentation",
            Reply::Double(if used > 0.0 { rss / used } else { 0.0 }),
        ),
        (
            "fragmentation.bytes",
            Reply::Int(now.rss as i64 - now.used as i64),
        ),
    ];
    let mut map: Vec<(Reply, Reply)> = fields
        .drain(..)
        .map(|(k, v)| (Reply::bulk(k.as_bytes()), v))
        .collect();
    map.extend(dbs.into_iter().map(|(k, v)| (Reply::bulk(k.as_bytes()), v)));
    map.extend(
        tail.into_iter()
            .map(|(k, v)| (Reply::bulk(k.as_bytes()), v)),
    );
    Reply::Map(map)
}

/// Below this much heap the doctor has nothing to judge (as redis-server's threshold).
const DOCTOR_MIN_BYTES: u64 = 5 << 20;

/// MEMORY DOCTOR: what looks wrong in MEMORY STATS's figures, in words.
fn memory_doctor(engine: &Engine) -> String {
    let now = engine.memory_now();
    if now.used < DOCTOR_MIN_BYTES {
        return format!(
            "This instance holds little data ({} bytes of heap): too little for the memory \
             doctor to judge. Fill it with data and ask again.\n",
            now.used
        );
    }
    let mut findings = Vec::new();
    if now.peak as f64 > now.used as f64 * 1.5 {
        findings.push(format!(
            " * Peak: the heap once reached {} bytes, more than 150% of the {} in use now; the \
             process may keep pages it freed since.",
            now.peak, now.used
        ));
    }
    if now.rss as f64 > now.used as f64 * 1.4 {
        findings.push(format!(
            " * Fragmentation: the resident set ({} bytes) is {:.2} times the heap in use.",
            now.rss,
            now.rss as f64 / now.used as f64
        ));
    }
    if findings.is_empty() {
        return format!(
            "No memory issue found: {} bytes of heap in use, peak {}, resident {}.\n",
            now.used, now.peak, now.rss
        );
    }
    format!("Memory findings:\n\n{}\n", findings.join("\n"))
}

/// Bytes the engine's structures spend per element of a hash map or set (the slot and its
/// control byte, at hashbrown's 7/8 load), and per heap allocation (a `Vec`/`Box` header).
const MAP_SLOT: usize = 8;
const HEAP: usize = 24;

/// MEMORY USAGE's estimate: the key's bytes and entry, plus the value's payload bytes and
/// the engine's per-element overheads (a `Vec`'s or `Box`'s header per element, a hash
/// table slot per field or member, the score of a sorted-set member). Collections larger
/// than `samples` elements are estimated from their first `samples` elements, scaled up,
/// as Redis samples. It counts neither allocator rounding nor spare capacity.
pub fn estimate(key: &[u8], value: &Value, samples: usize) -> usize {
    let entry = key.len() + HEAP + std::mem::size_of::<Entry>() + MAP_SLOT;
    let scaled = |n: usize, sizes: &mut dyn Iterator<Item = usize>| -> usize {
        let taken: Vec<usize> = sizes.take(samples.min(n)).collect();
        if taken.is_empty() {
            return 0;
        }
        let sum: usize = taken.iter().sum();
        sum.saturating_mul(n) / taken.len()
    };
    let body = match value {
        Value::Str(s) => s.len(),
        Value::List(l) => scaled(l.len(), &mut l.iter().map(|v| v.len() + HEAP)),
        Value::Hash(h) => scaled(
            h.len(),
            &mut h
                .iter()
                .map(|(f, v)| f.len() + v.len() + 2 * HEAP + MAP_SLOT),
        ),
        Value::Set(s) => scaled(s.len(), &mut s.iter().map(|m| m.len() + HEAP + MAP_SLOT)),
        Value::ZSet(z) => scaled(
            z.len(),
            &mut z.iter().map(|(m, _)| m.len() + HEAP + 8 + MAP_SLOT),
        ),
        Value::Stream(st) => scaled(
            st.len(),
            &mut st.entries.values().map(|fields| {
                16 + HEAP
                    + fields
                        .iter()
                        .map(|(f, v)| f.len() + v.len() + 2 * HEAP)
                        .sum::<usize>()
            }),
        ),
    };
    entry + body
}

/// TOUCH: how many of the keys exist, each counted as an access (unlike EXISTS).
fn touch(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let n = args[1..].iter().filter(|k| ctx.ks.get(k).is_some()).count();
    Ok(Reply::Int(n as i64))
}

fn db_index(arg: &[u8], what: &'static str) -> Result<i64, CmdError> {
    parse_i64(arg)
        .ok()
        .filter(|v| i32::try_from(*v).is_ok())
        .ok_or(err(what))
}

fn swapdb(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let a = db_index(args[1], "ERR invalid first DB index")?;
    let b = db_index(args[2], "ERR invalid second DB index")?;
    let in_range = |v: i64| usize::try_from(v).ok().filter(|&v| v < DATABASES);
    let (Some(a), Some(b)) = (in_range(a), in_range(b)) else {
        return Err(err("ERR DB index is out of range"));
    };
    if a != b {
        ctx.engine.swap_databases(a.min(b), a.max(b));
    }
    Ok(Reply::ok())
}

impl Engine {
    /// SWAPDB: exchanges the contents of databases `low` < `high`; clients stay where they
    /// are, and those blocked on a key that now exists in their database are signalled, as
    /// Redis rescans its blocked keys after a swap.
    pub fn swap_databases(&self, low: usize, high: usize) {
        let now = self.now_ms();
        let (first, second) = (self.db(low), self.db(high));
        let mut a = first.lock_all(now);
        let mut b = second.lock_all(now);
        a.swap_with(&mut b);
        for (db, locked) in [(first, &mut a), (second, &mut b)] {
            for key in db.blocked().waited_keys() {
                if locked.exists(&key) {
                    db.blocked().written(db, &key);
                }
            }
        }
    }
}

impl Engine {
    /// New encoding thresholds (CONFIG SET): every value over the old ones is marked as
    /// converted first, since Redis converted it when it was written, then the new ones
    /// apply. O(keys) and only when a threshold really changes.
    pub fn encoding_limits_changed(&self, new: LimitValues) {
        let limits = self.db(0).limits();
        let current = limits.load();
        if current == new {
            return;
        }
        let old = Limits::default();
        old.store(current);
        let now = self.now_ms();
        for i in 0..DATABASES {
            self.db(i).lock_all(now).mark_outgrown(&old);
        }
        limits.store(new);
    }
}

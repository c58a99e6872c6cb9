//! Lists: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP (with count), LRANGE, LLEN, LINDEX, LSET,
//! LREM, LTRIM, LINSERT, LPOS, LMOVE, RPOPLPUSH, LMPOP, and the blocking BLPOP, BRPOP,
//! BLMOVE, BRPOPLPUSH, BLMPOP.
//!
//! The typed operations (`impl Locked`) are the Rust API; the `run` functions parse arguments
//! in Redis 7.0's order (t_list.c), so that when several things are wrong the error is the
//! one Redis reports first (LRANGE parses its indexes before it looks at the key, LSET looks
//! at the key before it parses the index).
//!
//! Invariants: a list is a `VecDeque` (O(1) at both ends, as Redis's quicklist); an emptied
//! list is removed at once, so no command ever sees an empty list. Index arithmetic accepts
//! any `i64` (negative counts from the tail) without overflow.
//!
//! Keyspace events, as Redis 7.0's t_list.c emits them (class `l`, `del` in `g`): one
//! `lpush`/`rpush` per push command, `lpop`/`rpop` per pop (with a count too), `linsert`,
//! `lset`, `lrem` (when something went), `ltrim` (always, on an existing list); LMOVE and
//! RPOPLPUSH announce the push on the destination, then the pop on the source. A command that
//! empties a list announces `del` after its own event. The blocking commands, run as their
//! non-blocking selves, announce the same.
//!
//! Blocking: the engine has no connections to park, so the blocking commands serve an
//! available element exactly as Redis does and otherwise reply as Redis does on timeout (as
//! Redis itself does inside MULTI). The RESP server adds the waiting (`// BLOCK:` marks where).

use std::borrow::Cow;
use std::collections::VecDeque;
use std::ops::Range;

use super::{
    is, keys_after_numkeys, parse_f64, parse_i64, spec, Ctx, KeySpec, Spec, ONE_KEY, TWO_KEYS,
};
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::Locked;
pub use crate::engine::types::options::{ListEnd, LposOptions};
use crate::resp::reply::Reply;

/// BLPOP/BRPOP: every argument but the name and the timeout.
const KEYS_BEFORE_TIMEOUT: KeySpec = KeySpec::Range {
    first: 1,
    last: -2,
    step: 1,
};

/// The list commands (arity and keys as Redis 7.0's COMMAND INFO).
pub const COMMANDS: &[Spec] = &[
    spec("lpush", -3, ONE_KEY, true, lpush),
    spec("rpush", -3, ONE_KEY, true, rpush),
    spec("lpushx", -3, ONE_KEY, true, lpushx),
    spec("rpushx", -3, ONE_KEY, true, rpushx),
    spec("lpop", -2, ONE_KEY, true, lpop),
    spec("rpop", -2, ONE_KEY, true, rpop),
    spec("lrange", 4, ONE_KEY, false, lrange),
    spec("llen", 2, ONE_KEY, false, llen),
    spec("lindex", 3, ONE_KEY, false, lindex),
    spec("lset", 4, ONE_KEY, true, lset),
    spec("lrem", 4, ONE_KEY, true, lrem),
    spec("ltrim", 4, ONE_KEY, true, ltrim),
    spec("linsert", 5, ONE_KEY, true, linsert),
    spec("lpos", -3, ONE_KEY, false, lpos),
    spec("lmove", 5, TWO_KEYS, true, lmove),
    spec("rpoplpush", 3, TWO_KEYS, true, rpoplpush),
    spec("blpop", -3, KEYS_BEFORE_TIMEOUT, true, blpop),
    spec("brpop", -3, KEYS_BEFORE_TIMEOUT, true, brpop),
    spec("blmove", 6, TWO_KEYS, true, blmove),
    spec("brpoplpush", 4, TWO_KEYS, true, brpoplpush),
    spec(
        "lmpop",
        -4,
        KeySpec::Custom(|a| keys_after_numkeys(a, 1).collect()),
        true,
        lmpop,
    ),
    spec(
        "blmpop",
        -5,
        KeySpec::Custom(|a| keys_after_numkeys(a, 2).collect()),
        true,
        blmpop,
    ),
];

/// Elements popped from one of several lists: (index of the key among those given,
/// elements in pop order).
pub type ListPopped = (usize, Vec<Vec<u8>>);

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

const RANK_ZERO: &str =
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list";

/// The inclusive range `start..=stop` (negative from the tail) clamped to a list of `len`
/// elements, as LRANGE and LTRIM clamp it; `None` when it is empty.
fn clamp_range(start: i64, stop: i64, len: usize) -> Option<(usize, usize)> {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let start = if start < 0 { len + start } else { start }.max(0);
    let stop = if stop < 0 { len + stop } else { stop };
    if start > stop || start >= len {
        return None;
    }
    let stop = stop.min(len - 1);
    Some((start as usize, stop as usize))
}

/// The position of `index` (negative from the tail) in a list of `len` elements.
fn position(index: i64, len: usize) -> Option<usize> {
    if index >= 0 {
        usize::try_from(index).ok().filter(|&i| i < len)
    } else {
        let from_tail = usize::try_from(index.unsigned_abs()).ok()?;
        len.checked_sub(from_tail)
    }
}

fn push(list: &mut VecDeque<Vec<u8>>, end: ListEnd, value: Vec<u8>) {
    match end {
        ListEnd::Left => list.push_front(value),
        ListEnd::Right => list.push_back(value),
    }
}

fn pop(list: &mut VecDeque<Vec<u8>>, end: ListEnd) -> Option<Vec<u8>> {
    match end {
        ListEnd::Left => list.pop_front(),
        ListEnd::Right => list.pop_back(),
    }
}

/// The keyspace event of a push at `end`.
fn push_event(end: ListEnd) -> &'static str {
    match end {
        ListEnd::Left => "lpush",
        ListEnd::Right => "rpush",
    }
}

/// The keyspace event of a pop at `end`.
fn pop_event(end: ListEnd) -> &'static str {
    match end {
        ListEnd::Left => "lpop",
        ListEnd::Right => "rpop",
    }
}

impl Locked<'_> {
    /// The list at `key` for writing, typed-checked first: a command that fails or changes
    /// nothing must not count as a write to a WATCHed key, and `get_list_mut` would.
    fn list_mut(&mut self, key: &[u8]) -> Result<Option<&mut VecDeque<Vec<u8>>>, CmdError> {
        if self.get_list(key)?.is_none() {
            return Ok(None);
        }
        self.get_list_mut(key)
    }

    /// LPUSH/RPUSH (`existing_only` = LPUSHX/RPUSHX): pushes `values` one by one at `end`;
    /// returns the list's new length (0 when `existing_only` and the key is missing).
    pub fn list_push<'v>(
        &mut self,
        key: &[u8],
        end: ListEnd,
        values: impl IntoIterator<Item = &'v [u8]>,
        existing_only: bool,
    ) -> Result<usize, CmdError> {
        let list = if existing_only {
            match self.list_mut(key)? {
                Some(list) => list,
                None => return Ok(0),
            }
        } else {
            self.list_or_default(key)?
        };
        for v in values {
            push(list, end, v.to_vec());
        }
        let len = list.len();
        self.notify(Classes::LIST, push_event(end), key);
        Ok(len)
    }

    /// LPUSH: returns the new length.
    pub fn lpush(&mut self, key: &[u8], values: &[&[u8]]) -> Result<usize, CmdError> {
        self.list_push(key, ListEnd::Left, values.iter().copied(), false)
    }

    /// RPUSH: returns the new length.
    pub fn rpush(&mut self, key: &[u8], values: &[&[u8]]) -> Result<usize, CmdError> {
        self.list_push(key, ListEnd::Right, values.iter().copied(), false)
    }

    /// LPOP/RPOP with a count: up to `count` elements from `end`, in pop order; `None` when
    /// the key is missing. A list emptied is removed.
    pub fn list_pop(
        &mut self,
        key: &[u8],
        end: ListEnd,
        count: usize,
    ) -> Result<Option<Vec<Vec<u8>>>, CmdError> {
        let Some(len) = self.get_list(key)?.map(VecDeque::len) else {
            return Ok(None);
        };
        let n = count.min(len);
        if n == 0 {
            return Ok(Some(Vec::new()));
        }
        let Some(list) = self.list_mut(key)? else {
            return Ok(None);
        };
        let popped: Vec<Vec<u8>> = match end {
            ListEnd::Left => list.drain(..n).collect(),
            ListEnd::Right => {
                let at = list.len() - n;
                list.drain(at..).rev().collect()
            }
        };
        self.notify(Classes::LIST, pop_event(end), key);
        self.drop_emptied(key);
        Ok(Some(popped))
    }

    /// LPOP without a count: the head element, `None` when the key is missing.
    pub fn lpop(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, CmdError> {
        Ok(self
            .list_pop(key, ListEnd::Left, 1)?
            .and_then(|v| v.into_iter().next()))
    }

    /// RPOP without a count: the tail element, `None` when the key is missing.
    pub fn rpop(&mut self, key: &[u8]) -> Result<Option<Vec<u8>>, CmdError> {
        Ok(self
            .list_pop(key, ListEnd::Right, 1)?
            .and_then(|v| v.into_iter().next()))
    }

    /// LRANGE: the elements from `start` to `stop` inclusive (negative from the tail).
    pub fn lrange(&mut self, key: &[u8], start: i64, stop: i64) -> Result<Vec<Vec<u8>>, CmdError> {
        let Some(list) = self.get_list(key)? else {
            return Ok(Vec::new());
        };
        Ok(match clamp_range(start, stop, list.len()) {
            Some((a, b)) => list.range(a..=b).cloned().collect(),
            None => Vec::new(),
        })
    }

    /// LLEN (0 when missing).
    pub fn llen(&mut self, key: &[u8]) -> Result<usize, CmdError> {
        Ok(self.get_list(key)?.map_or(0, VecDeque::len))
    }

    /// LINDEX: the element at `index` (negative from the tail).
    pub fn lindex(&mut self, key: &[u8], index: i64) -> Result<Option<Vec<u8>>, CmdError> {
        let Some(list) = self.get_list(key)? else {
            return Ok(None);
        };
        Ok(position(index, list.len()).map(|i| list[i].clone()))
    }

    /// LSET: `ERR no such key` when missing, `ERR index out of range` past either end.
    pub fn lset(&mut self, key: &[u8], index: i64, value: &[u8]) -> Result<(), CmdError> {
        let list = self.get_list(key)?.ok_or(CmdError::NoSuchKey)?;
        let i = position(index, list.len()).ok_or(CmdError::IndexOutOfRange)?;
        if let Some(list) = self.list_mut(key)? {
            list[i] = value.to_vec();
            self.notify(Classes::LIST, "lset", key);
        }
        Ok(())
    }

    /// LREM: removes up to `|count|` elements equal to `value` (all when 0), from the head
    /// (`count > 0`) or the tail (`count < 0`); returns how many.
    pub fn lrem(&mut self, key: &[u8], count: i64, value: &[u8]) -> Result<usize, CmdError> {
        let Some(list) = self.get_list(key)? else {
            return Ok(0);
        };
        let matches = list.iter().filter(|e| *e == value).count();
        let limit = match usize::try_from(count.unsigned_abs()) {
            Ok(0) | Err(_) => matches,
            Ok(n) => n.min(matches),
        };
        if limit == 0 {
            return Ok(0);
        }
        // One pass: from the head, drop the first `limit` matches; from the tail, keep the
        // first `matches - limit` and drop the rest.
        let mut keep = if count >= 0 { 0 } else { matches - limit };
        let mut remove = limit;
        if let Some(list) = self.list_mut(key)? {
            list.retain(|e| {
                if e != value || remove == 0 {
                    true
                } else if keep > 0 {
                    keep -= 1;
                    true
                } else {
                    remove -= 1;
                    false
                }
            });
        }
        self.notify(Classes::LIST, "lrem", key);
        self.drop_emptied(key);
        Ok(limit)
    }

    /// LTRIM: keeps the elements from `start` to `stop` inclusive (negative from the tail);
    /// an empty range removes the key.
    pub fn ltrim(&mut self, key: &[u8], start: i64, stop: i64) -> Result<(), CmdError> {
        let Some(list) = self.list_mut(key)? else {
            return Ok(());
        };
        match clamp_range(start, stop, list.len()) {
            Some((a, b)) => {
                list.truncate(b + 1);
                list.drain(..a);
            }
            None => list.clear(),
        }
        self.notify(Classes::LIST, "ltrim", key);
        self.drop_emptied(key);
        Ok(())
    }

    /// LINSERT: inserts `value` before (or after) the first element equal to `pivot`.
    /// Returns the new length, -1 when the pivot is not found, 0 when the key is missing.
    pub fn linsert(
        &mut self,
        key: &[u8],
        before: bool,
        pivot: &[u8],
        value: &[u8],
    ) -> Result<i64, CmdError> {
        let Some(list) = self.get_list(key)? else {
            return Ok(0);
        };
        let Some(i) = list.iter().position(|e| e == pivot) else {
            return Ok(-1);
        };
        let Some(list) = self.list_mut(key)? else {
            return Ok(0);
        };
        list.insert(if before { i } else { i + 1 }, value.to_vec());
        let len = i64::try_from(list.len()).unwrap_or(i64::MAX);
        self.notify(Classes::LIST, "linsert", key);
        Ok(len)
    }

    /// LPOS: the indexes of the elements equal to `value`, as LPOS with `opts` selects them
    /// (at most one when `opts.count` is `None`). A missing key has none.
    pub fn lpos(
        &mut self,
        key: &[u8],
        value: &[u8],
        opts: LposOptions,
    ) -> Result<Vec<usize>, CmdError> {
        if opts.rank == 0 {
            return Err(err(RANK_ZERO));
        }
        let Some(list) = self.get_list(key)? else {
            return Ok(Vec::new());
        };
        let len = list.len();
        let (skip, wanted) = match (opts.rank, opts.count) {
            (_, None) if opts.rank == i64::MIN => (0, 1),
            // Redis negates the rank in a C long: LONG_MIN stays negative, so every match
            // counts from the first one, and `matches - rank + 1` overflows to negative,
            // so COUNT never stops the scan.
            (i64::MIN, Some(_)) => (0, u64::MAX),
            (rank, None) => (rank.unsigned_abs() - 1, 1),
            (rank, Some(0)) => (rank.unsigned_abs() - 1, u64::MAX),
            (rank, Some(n)) => (rank.unsigned_abs() - 1, n),
        };
        let scan = if opts.maxlen == 0 {
            len
        } else {
            usize::try_from(opts.maxlen).unwrap_or(usize::MAX).min(len)
        };
        // A negative rank scans from the tail; the indexes reported are still from the head.
        let from_head = opts.rank > 0;
        let indexes = (0..scan).map(|k| if from_head { k } else { len - 1 - k });
        let mut out = Vec::new();
        let mut matches = 0u64;
        for i in indexes {
            if list[i] == value {
                matches += 1;
                if matches > skip {
                    out.push(i);
                    if out.len() as u64 >= wanted {
                        break;
                    }
                }
            }
        }
        Ok(out)
    }

    /// LMOVE (RPOPLPUSH is `Right`, `Left`): pops from `src` at `from`, pushes onto `dst` at
    /// `to` (the same list when `src == dst`); returns the element, `None` when `src` is
    /// missing. WRONGTYPE for either key, before anything moves.
    pub fn lmove(
        &mut self,
        src: &[u8],
        dst: &[u8],
        from: ListEnd,
        to: ListEnd,
    ) -> Result<Option<Vec<u8>>, CmdError> {
        if self.get_list(src)?.is_none() {
            return Ok(None);
        }
        self.get_list(dst)?;
        let Some(value) = self.list_mut(src)?.and_then(|l| pop(l, from)) else {
            return Ok(None);
        };
        push(self.list_or_default(dst)?, to, value.clone());
        self.notify(Classes::LIST, push_event(to), dst);
        self.notify(Classes::LIST, pop_event(from), src);
        self.drop_emptied(src);
        Ok(Some(value))
    }

    /// LMPOP: pops up to `count` elements at `end` from the first list of `keys`, returning
    /// (index in `keys`, elements in pop order); `None` when all are missing. WRONGTYPE stops
    /// at the first key of another type met before a list.
    pub fn list_mpop(
        &mut self,
        keys: &[&[u8]],
        end: ListEnd,
        count: usize,
    ) -> Result<Option<ListPopped>, CmdError> {
        for (i, &key) in keys.iter().enumerate() {
            if let Some(popped) = self.list_pop(key, end, count)? {
                return Ok(Some((i, popped)));
            }
        }
        Ok(None)
    }

    /// BLPOP/BRPOP without waiting: pops from the first non-empty list of `keys`, returning
    /// (index in `keys`, element); `None` when all are missing. WRONGTYPE stops at the first
    /// key of another type met before a list.
    pub fn list_pop_first(
        &mut self,
        keys: &[&[u8]],
        end: ListEnd,
    ) -> Result<Option<(usize, Vec<u8>)>, CmdError> {
        for (i, &key) in keys.iter().enumerate() {
            if let Some(mut popped) = self.list_pop(key, end, 1)? {
                if let Some(value) = popped.pop() {
                    return Ok(Some((i, value)));
                }
            }
        }
        Ok(None)
    }
}

// ---- argument parsing ----

fn list_end(arg: &[u8]) -> Result<ListEnd, CmdError> {
    if is(arg, "left") {
        Ok(ListEnd::Left)
    } else if is(arg, "right") {
        Ok(ListEnd::Right)
    } else {
        Err(CmdError::Syntax)
    }
}

/// Redis's `getPositiveLongFromObjectOrReply`: an integer >= 0, else the one error `msg`
/// (for a non-integer too).
fn parse_non_negative(arg: &[u8], msg: &'static str) -> Result<u64, CmdError> {
    parse_i64(arg)
        .ok()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(|| err(msg))
}

const MUST_BE_POSITIVE: &str = "ERR value is out of range, must be positive";

/// A blocking command's timeout in seconds (Redis's `getTimeoutFromObjectOrReply` with
/// `UNIT_SECONDS`), as milliseconds; 0 = wait forever.
pub fn parse_timeout_secs(arg: &[u8]) -> Result<u64, CmdError> {
    let secs = parse_f64(arg).map_err(|_| err("ERR timeout is not a float or out of range"))?;
    // Redis converts with a C cast, which yields LLONG_MIN for what does not fit (inf
    // included): "negative". Rust's cast would saturate, so check the range first.
    let ms = secs * 1000.0;
    if !((i64::MIN as f64)..(i64::MAX as f64)).contains(&ms) {
        return Err(err("ERR timeout is negative"));
    }
    let ms = ms.trunc() as i64;
    u64::try_from(ms).map_err(|_| err("ERR timeout is negative"))
}

/// The arguments of LMPOP, BLMPOP, ZMPOP and BZMPOP from the count at `at` on:
/// `numkeys key [key ...] <end> [COUNT count]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiPop {
    /// Where the keys are in the request.
    pub keys: Range<usize>,
    /// Whether the end is the second of the two words (RIGHT, MAX).
    pub second_end: bool,
    /// Elements to pop at most (1 without COUNT).
    pub count: usize,
}

impl MultiPop {
    /// Parses as Redis's `lmpopGenericCommand` does: the count of keys (>= 1), the end
    /// (one of `ends`, else a syntax error), then COUNT (>= 1) at most once.
    pub fn parse(args: &[&[u8]], at: usize, ends: [&str; 2]) -> Result<MultiPop, CmdError> {
        let numkeys = parse_i64(args[at])
            .ok()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|&n| n >= 1)
            .ok_or_else(|| err("ERR numkeys should be greater than 0"))?;
        let keys = keys_after_numkeys(args, at);
        if keys.len() < numkeys || keys.end >= args.len() {
            return Err(CmdError::Syntax);
        }
        let end = args[keys.end];
        let second_end = if is(end, ends[0]) {
            false
        } else if is(end, ends[1]) {
            true
        } else {
            return Err(CmdError::Syntax);
        };
        let mut count = None;
        let mut opts = &args[keys.end + 1..];
        while let Some((opt, rest)) = opts.split_first() {
            match rest.split_first() {
                Some((value, rest)) if count.is_none() && is(opt, "count") => {
                    count = Some(
                        parse_i64(value)
                            .ok()
                            .and_then(|n| usize::try_from(n).ok())
                            .filter(|&n| n >= 1)
                            .ok_or_else(|| err("ERR count should be greater than 0"))?,
                    );
                    opts = rest;
                }
                _ => return Err(CmdError::Syntax),
            }
        }
        Ok(MultiPop {
            keys,
            second_end,
            count: count.unwrap_or(1),
        })
    }
}

fn bulks(values: Vec<Vec<u8>>) -> Reply {
    Reply::Array(values.into_iter().map(Reply::Bulk).collect())
}

// ---- commands ----

fn push_cmd(
    ctx: &mut Ctx<'_, '_>,
    args: &[&[u8]],
    end: ListEnd,
    existing_only: bool,
) -> Result<Reply, CmdError> {
    let n = ctx
        .ks
        .list_push(args[1], end, args[2..].iter().copied(), existing_only)?;
    Ok(Reply::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

fn lpush(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    push_cmd(ctx, args, ListEnd::Left, false)
}

fn rpush(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    push_cmd(ctx, args, ListEnd::Right, false)
}

fn lpushx(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    push_cmd(ctx, args, ListEnd::Left, true)
}

fn rpushx(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    push_cmd(ctx, args, ListEnd::Right, true)
}

fn pop_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]], end: ListEnd) -> Result<Reply, CmdError> {
    if args.len() > 3 {
        let name = if end == ListEnd::Left { "lpop" } else { "rpop" };
        return Err(CmdError::Arity(name.to_string()));
    }
    let Some(count) = args.get(2) else {
        let popped = ctx.ks.list_pop(args[1], end, 1)?;
        return Ok(Reply::opt_bulk(
            popped.as_ref().and_then(|v| v.first()).map(|v| &v[..]),
        ));
    };
    let count = parse_non_negative(count, MUST_BE_POSITIVE)?;
    let count = usize::try_from(count).unwrap_or(usize::MAX);
    // With a count, a missing key is a nil array (Redis 7.0), not a nil string.
    Ok(match ctx.ks.list_pop(args[1], end, count)? {
        Some(values) => bulks(values),
        None => Reply::NilArray,
    })
}

fn lpop(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    pop_cmd(ctx, args, ListEnd::Left)
}

fn rpop(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    pop_cmd(ctx, args, ListEnd::Right)
}

fn lrange(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let start = parse_i64(args[2])?;
    let stop = parse_i64(args[3])?;
    Ok(bulks(ctx.ks.lrange(args[1], start, stop)?))
}

fn llen(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let n = ctx.ks.llen(args[1])?;
    Ok(Reply::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

fn lindex(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    // Redis looks the key up (nil, WRONGTYPE) before it parses the index.
    if ctx.ks.get_list(args[1])?.is_none() {
        return Ok(Reply::Nil);
    }
    let index = parse_i64(args[2])?;
    Ok(Reply::opt_bulk(ctx.ks.lindex(args[1], index)?.as_deref()))
}

fn lset(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    // The key (no such key, WRONGTYPE) before the index.
    if ctx.ks.get_list(args[1])?.is_none() {
        return Err(CmdError::NoSuchKey);
    }
    let index = parse_i64(args[2])?;
    ctx.ks.lset(args[1], index, args[3])?;
    Ok(Reply::ok())
}

fn lrem(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let count = parse_i64(args[2])?;
    let n = ctx.ks.lrem(args[1], count, args[3])?;
    Ok(Reply::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

fn ltrim(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let start = parse_i64(args[2])?;
    let stop = parse_i64(args[3])?;
    ctx.ks.ltrim(args[1], start, stop)?;
    Ok(Reply::ok())
}

fn linsert(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let before = if is(args[2], "before") {
        true
    } else if is(args[2], "after") {
        false
    } else {
        return Err(CmdError::Syntax);
    };
    Ok(Reply::Int(
        ctx.ks.linsert(args[1], before, args[3], args[4])?,
    ))
}

fn lpos(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let mut opts = LposOptions::default();
    let mut i = 3;
    while i < args.len() {
        let more = i + 1 < args.len();
        if is(args[i], "rank") && more {
            opts.rank = parse_i64(args[i + 1])?;
            if opts.rank == 0 {
                return Err(err(RANK_ZERO));
            }
        } else if is(args[i], "count") && more {
            opts.count = Some(parse_non_negative(
                args[i + 1],
                "ERR COUNT can't be negative",
            )?);
        } else if is(args[i], "maxlen") && more {
            opts.maxlen = parse_non_negative(args[i + 1], "ERR MAXLEN can't be negative")?;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 2;
    }
    let found = ctx.ks.lpos(args[1], args[2], opts)?;
    let int = |i: usize| Reply::Int(i64::try_from(i).unwrap_or(i64::MAX));
    Ok(match opts.count {
        Some(_) => Reply::Array(found.into_iter().map(int).collect()),
        None => found.first().map_or(Reply::Nil, |&i| int(i)),
    })
}

fn move_reply(moved: Option<Vec<u8>>) -> Reply {
    moved.map_or(Reply::Nil, Reply::Bulk)
}

fn lmove(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let from = list_end(args[3])?;
    let to = list_end(args[4])?;
    Ok(move_reply(ctx.ks.lmove(args[1], args[2], from, to)?))
}

fn rpoplpush(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(move_reply(ctx.ks.lmove(
        args[1],
        args[2],
        ListEnd::Right,
        ListEnd::Left,
    )?))
}

fn blocking_pop(ctx: &mut Ctx<'_, '_>, args: &[&[u8]], end: ListEnd) -> Result<Reply, CmdError> {
    let (timeout, keys) = args[1..].split_last().unwrap_or((&args[0], &[]));
    let _timeout_ms = parse_timeout_secs(timeout)?;
    Ok(match ctx.ks.list_pop_first(keys, end)? {
        Some((i, value)) => Reply::Array(vec![Reply::bulk(keys[i]), Reply::Bulk(value)]),
        // BLOCK: no list has an element; the RESP server should park the client on `keys`
        // for `_timeout_ms` (0 = forever) instead of this immediate timeout reply.
        None => Reply::NilArray,
    })
}

fn blpop(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    blocking_pop(ctx, args, ListEnd::Left)
}

fn brpop(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    blocking_pop(ctx, args, ListEnd::Right)
}

fn blmove(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let from = list_end(args[3])?;
    let to = list_end(args[4])?;
    let _timeout_ms = parse_timeout_secs(args[5])?;
    // BLOCK: a missing source should park the client on `args[1]` for `_timeout_ms`; for
    // now the nil is the timeout reply. (Redis checks the destination's type only once an
    // element is there to move, which `lmove` does too.)
    Ok(move_reply(ctx.ks.lmove(args[1], args[2], from, to)?))
}

fn brpoplpush(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let _timeout_ms = parse_timeout_secs(args[3])?;
    // BLOCK: as BLMOVE RIGHT LEFT.
    rpoplpush(ctx, args)
}

/// LMPOP and BLMPOP once their arguments are read: `[key, [elements...]]`, or the nil
/// array when every list is missing.
fn mpop_reply(ctx: &mut Ctx<'_, '_>, args: &[&[u8]], parsed: &MultiPop) -> Result<Reply, CmdError> {
    let end = if parsed.second_end {
        ListEnd::Right
    } else {
        ListEnd::Left
    };
    let keys = &args[parsed.keys.clone()];
    Ok(match ctx.ks.list_mpop(keys, end, parsed.count)? {
        Some((i, values)) => Reply::Array(vec![Reply::bulk(keys[i]), bulks(values)]),
        None => Reply::NilArray,
    })
}

fn lmpop(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let parsed = MultiPop::parse(args, 1, ["left", "right"])?;
    mpop_reply(ctx, args, &parsed)
}

fn blmpop(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    // Redis reads the timeout after the other arguments.
    let parsed = MultiPop::parse(args, 2, ["left", "right"])?;
    let _timeout_ms = parse_timeout_secs(args[1])?;
    // BLOCK: the nil array is the timeout reply; the RESP server waits instead.
    mpop_reply(ctx, args, &parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_clamp_like_redis() {
        assert_eq!(clamp_range(0, -1, 3), Some((0, 2)));
        assert_eq!(clamp_range(-100, 100, 3), Some((0, 2)));
        assert_eq!(clamp_range(2, 1, 3), None);
        assert_eq!(clamp_range(3, 5, 3), None);
        assert_eq!(clamp_range(i64::MIN, i64::MAX, 3), Some((0, 2)));
        assert_eq!(clamp_range(i64::MAX, i64::MIN, 3), None);
        assert_eq!(clamp_range(0, -1, 0), None);
    }

    #[test]
    fn positions_count_from_either_end() {
        assert_eq!(position(0, 3), Some(0));
        assert_eq!(position(-1, 3), Some(2));
        assert_eq!(position(-3, 3), Some(0));
        assert_eq!(position(-4, 3), None);
        assert_eq!(position(3, 3), None);
        assert_eq!(position(i64::MIN, 3), None);
        assert_eq!(position(i64::MAX, 3), None);
    }

    #[test]
    fn multi_pops_parse_like_lmpop() {
        let args: [&[u8]; 7] = [b"lmpop", b"2", b"a", b"b", b"RIGHT", b"count", b"3"];
        let parsed = MultiPop::parse(&args, 1, ["left", "right"]);
        assert_eq!(
            parsed,
            Ok(MultiPop {
                keys: 2..4,
                second_end: true,
                count: 3
            })
        );
        let numkeys = Err(err("ERR numkeys should be greater than 0"));
        let count = Err(err("ERR count should be greater than 0"));
        type Case<'a> = (&'a [&'a [u8]], Result<MultiPop, CmdError>);
        let cases: [Case<'_>; 6] = [
            (&[b"lmpop", b"0", b"a", b"LEFT"], numkeys.clone()),
            (&[b"lmpop", b"x", b"a", b"LEFT"], numkeys),
            (&[b"lmpop", b"2", b"a", b"LEFT"], Err(CmdError::Syntax)),
            (&[b"lmpop", b"1", b"a", b"UP"], Err(CmdError::Syntax)),
            (&[b"lmpop", b"1", b"a", b"LEFT", b"COUNT", b"0"], count),
            (
                &[b"lmpop", b"1", b"a", b"LEFT", b"COUNT"],
                Err(CmdError::Syntax),
            ),
        ];
        for (args, want) in cases {
            assert_eq!(
                MultiPop::parse(args, 1, ["left", "right"]),
                want,
                "{args:?}"
            );
        }
    }

    #[test]
    fn timeouts_parse_like_redis() {
        assert_eq!(parse_timeout_secs(b"0"), Ok(0));
        assert_eq!(parse_timeout_secs(b"1.5"), Ok(1500));
        assert_eq!(parse_timeout_secs(b"-0.0001"), Ok(0));
        assert_eq!(parse_timeout_secs(b"0x10"), Ok(16_000));
        let negative = Err(err("ERR timeout is negative"));
        assert_eq!(parse_timeout_secs(b"-1"), negative);
        assert_eq!(parse_timeout_secs(b"inf"), negative);
        assert_eq!(parse_timeout_secs(b"1e300"), negative);
        let not_float = Err(err("ERR timeout is not a float or out of range"));
        assert_eq!(parse_timeout_secs(b"abc"), not_float);
        assert_eq!(parse_timeout_secs(b" 1"), not_float);
        assert_eq!(parse_timeout_secs(b"nan"), not_float);
    }
}

//! ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD: Redis 7.0's
//! `zunionInterDiffGenericCommand`.
//!
//! Inputs may be sorted sets or plain sets (members scoring 1); a missing key is an empty
//! input. Redis checks, in order: the count of keys (an integer, at least 1, no more than
//! the arguments), every key's type, then the options (WEIGHTS, AGGREGATE, WITHSCORES,
//! LIMIT, each allowed only where the command takes it). Union and intersection visit the
//! inputs smallest first (a stable sort by size, as glibc's `qsort` is), and scores are
//! combined in that order, so sums round exactly as Redis's do.
//!
//! The keyspace lends one value at a time, so an intersection copies its smallest input's
//! members and then filters them input by input; each input is borrowed once.

use std::ops::Range;

use super::err;
use crate::engine::cmd::{is, parse_f64, parse_i64, Ctx};
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::{BytesMap, Entry, Locked, Value};
use crate::engine::types::zset::algebra::{sort_pairs, weighted, Aggregate, Combine, Source};
use crate::engine::types::zset::ZSet;
use crate::resp::reply::Reply;

/// A combination's result: (member, score) in a sorted set's order.
pub type Pairs = Vec<(Vec<u8>, f64)>;

impl Locked<'_> {
    /// Calls `f` with the input at `key`: `Ok(None)` when missing, WRONGTYPE unless a sorted
    /// set or a set.
    fn with_source<R>(
        &mut self,
        key: &[u8],
        f: impl FnOnce(Source<'_>) -> R,
    ) -> Result<Option<R>, CmdError> {
        match self.get(key).map(|e| &e.value) {
            None => Ok(None),
            Some(Value::ZSet(z)) => Ok(Some(f(Source::Sorted(z)))),
            Some(Value::Set(s)) => Ok(Some(f(Source::Plain(s)))),
            Some(_) => Err(CmdError::WrongType),
        }
    }

    /// Every input's size (0 when missing), type-checking them in order.
    fn source_sizes(&mut self, keys: &[&[u8]]) -> Result<Vec<usize>, CmdError> {
        let mut sizes = Vec::with_capacity(keys.len());
        for key in keys {
            sizes.push(self.with_source(key, |s| s.len())?.unwrap_or(0));
        }
        Ok(sizes)
    }

    /// ZUNION / ZINTER / ZDIFF of `keys`: each input's scores times its weight (`weights`
    /// pairs with `keys`; a missing weight is 1; ZDIFF ignores them), combined by `agg`.
    pub fn zcombine(
        &mut self,
        op: Combine,
        keys: &[&[u8]],
        weights: &[f64],
        agg: Aggregate,
    ) -> Result<Pairs, CmdError> {
        let sizes = self.source_sizes(keys)?;
        let weight = |i: usize| weights.get(i).copied().unwrap_or(1.0);
        let mut pairs = match op {
            Combine::Union => self.union(keys, &by_size(&sizes), weight, agg)?,
            Combine::Inter => self.inter(keys, &by_size(&sizes), weight, agg, usize::MAX)?,
            Combine::Diff => self.diff(keys)?,
        };
        sort_pairs(&mut pairs);
        Ok(pairs)
    }

    /// ZINTERCARD: how many members every input has, counting at most `limit` (0: all).
    pub fn zintercard(&mut self, keys: &[&[u8]], limit: usize) -> Result<usize, CmdError> {
        let sizes = self.source_sizes(keys)?;
        let limit = if limit == 0 { usize::MAX } else { limit };
        let order = by_size(&sizes);
        Ok(self
            .inter(keys, &order, |_| 1.0, Aggregate::Sum, limit)?
            .len())
    }

    /// ZUNIONSTORE / ZINTERSTORE / ZDIFFSTORE: stores [`Locked::zcombine`] at `dst`
    /// (whatever it held; deleted when the result is empty); returns its size.
    pub fn zcombine_store(
        &mut self,
        dst: &[u8],
        op: Combine,
        keys: &[&[u8]],
        weights: &[f64],
        agg: Aggregate,
    ) -> Result<usize, CmdError> {
        let pairs = self.zcombine(op, keys, weights, agg)?;
        Ok(self.store_pairs(dst, &pairs, store_event(op)))
    }

    /// Stores `pairs` (in order) as the sorted set at `dst`, announced as `event`, or
    /// deletes `dst` when there are none (announced as `del` if it existed); returns how
    /// many were stored.
    pub(in crate::engine::cmd) fn store_pairs(
        &mut self,
        dst: &[u8],
        pairs: &[(Vec<u8>, f64)],
        event: &str,
    ) -> usize {
        if pairs.is_empty() {
            if self.remove(dst).is_some() {
                self.notify(Classes::GENERIC, "del", dst);
            }
            return 0;
        }
        let mut z = ZSet::default();
        for (member, score) in pairs {
            z.insert(member, *score);
        }
        let n = z.len();
        self.insert(dst, Entry::new(Value::ZSet(Box::new(z))));
        self.notify(Classes::ZSET, event, dst);
        n
    }

    fn union(
        &mut self,
        keys: &[&[u8]],
        order: &[usize],
        weight: impl Fn(usize) -> f64,
        agg: Aggregate,
    ) -> Result<Pairs, CmdError> {
        let mut acc: BytesMap<f64> = BytesMap::default();
        for &i in order {
            let w = weight(i);
            self.with_source(keys[i], |src| {
                src.for_each(|member, score| {
                    let score = weighted(score, w);
                    match acc.get_mut(member) {
                        Some(total) => *total = agg.combine(*total, score),
                        None => {
                            acc.insert(member.into(), score);
                        }
                    }
                });
            })?;
        }
        Ok(acc.into_iter().map(|(m, s)| (m.into_vec(), s)).collect())
    }

    /// The members of every input, at most `limit` of them.
    fn inter(
        &mut self,
        keys: &[&[u8]],
        order: &[usize],
        weight: impl Fn(usize) -> f64,
        agg: Aggregate,
        limit: usize,
    ) -> Result<Pairs, CmdError> {
        let Some((&first, rest)) = order.split_first() else {
            return Ok(Vec::new());
        };
        let w = weight(first);
        let mut out: Pairs = Vec::new();
        self.with_source(keys[first], |src| {
            src.for_each(|member, score| out.push((member.to_vec(), weighted(score, w))));
        })?;
        for &i in rest {
            if out.is_empty() {
                break;
            }
            let w = weight(i);
            let kept = self.with_source(keys[i], |src| {
                out.retain_mut(|(member, acc)| match src.score(member) {
                    // Redis weighs the later inputs without turning NaN into 0: the
                    // aggregate does (SUM gives 0, MIN and MAX keep what they had).
                    Some(score) => {
                        *acc = agg.combine(*acc, score * w);
                        true
                    }
                    None => false,
                });
            })?;
            if kept.is_none() {
                out.clear();
            }
        }
        out.truncate(limit);
        Ok(out)
    }

    fn diff(&mut self, keys: &[&[u8]]) -> Result<Pairs, CmdError> {
        let Some((first, rest)) = keys.split_first() else {
            return Ok(Vec::new());
        };
        // A later input naming the first key removes everything.
        if rest.contains(first) {
            return Ok(Vec::new());
        }
        let mut out: Pairs = Vec::new();
        self.with_source(first, |src| {
            src.for_each(|member, score| out.push((member.to_vec(), score)));
        })?;
        for key in rest {
            if out.is_empty() {
                break;
            }
            self.with_source(key, |src| out.retain(|(m, _)| src.score(m).is_none()))?;
        }
        Ok(out)
    }
}

/// Input indices ordered by size, smallest first, ties in argument order.
fn by_size(sizes: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| sizes[i]);
    order
}

// ---- commands ----

/// What a command of the family accepts.
#[derive(Debug, Clone, Copy)]
struct Form {
    name: &'static str,
    op: Combine,
    /// Where `numkeys` is (1, or 2 after a destination).
    at: usize,
    store: bool,
    card: bool,
}

/// The options read after the keys.
#[derive(Debug, Default)]
struct Options {
    weights: Vec<f64>,
    aggregate: Aggregate,
    withscores: bool,
    limit: usize,
}

/// The keys' range, checked as Redis checks `numkeys`.
fn input_keys(args: &[&[u8]], form: &Form) -> Result<Range<usize>, CmdError> {
    let numkeys = parse_i64(args[form.at])?;
    if numkeys < 1 {
        return Err(CmdError::Other(
            format!(
                "ERR at least 1 input key is needed for '{}' command",
                form.name
            )
            .into(),
        ));
    }
    let first = form.at + 1;
    let given = args.len() - first;
    match usize::try_from(numkeys) {
        Ok(n) if n <= given => Ok(first..first + n),
        _ => Err(CmdError::Syntax),
    }
}

fn parse_options(opts: &[&[u8]], keys: usize, form: &Form) -> Result<Options, CmdError> {
    let mut out = Options::default();
    let weighable = form.op != Combine::Diff && !form.card;
    let mut j = 0;
    while j < opts.len() {
        let left = opts.len() - j;
        let opt = opts[j];
        if weighable && left > keys && is(opt, "weights") {
            out.weights = opts[j + 1..=j + keys]
                .iter()
                .map(|w| parse_f64(w).map_err(|_| err("ERR weight value is not a float")))
                .collect::<Result<_, _>>()?;
            j += keys + 1;
        } else if weighable && left >= 2 && is(opt, "aggregate") {
            let a = opts[j + 1];
            out.aggregate = if is(a, "sum") {
                Aggregate::Sum
            } else if is(a, "min") {
                Aggregate::Min
            } else if is(a, "max") {
                Aggregate::Max
            } else {
                return Err(CmdError::Syntax);
            };
            j += 2;
        } else if !form.store && !form.card && is(opt, "withscores") {
            out.withscores = true;
            j += 1;
        } else if form.card && left >= 2 && is(opt, "limit") {
            out.limit = crate::engine::cmd::set::parse_non_negative(
                opts[j + 1],
                "ERR LIMIT can't be negative",
            )?;
            j += 2;
        } else {
            return Err(CmdError::Syntax);
        }
    }
    Ok(out)
}

fn run(ctx: &mut Ctx<'_, '_>, args: &[&[u8]], form: Form) -> Result<Reply, CmdError> {
    let range = input_keys(args, &form)?;
    let keys = &args[range.clone()];
    ctx.ks.source_sizes(keys)?;
    let opts = parse_options(&args[range.end..], keys.len(), &form)?;
    if form.card {
        let n = ctx.ks.zintercard(keys, opts.limit)?;
        return Ok(Reply::Int(n as i64));
    }
    let pairs = ctx
        .ks
        .zcombine(form.op, keys, &opts.weights, opts.aggregate)?;
    if form.store {
        let stored = ctx.ks.store_pairs(args[1], &pairs, store_event(form.op));
        return Ok(Reply::Int(stored as i64));
    }
    Ok(pairs_reply(pairs, opts.withscores, ctx.client.resp >= 3))
}

/// Members, or with scores: flat pairs in RESP2, `[member, score]` arrays in RESP3.
pub(super) fn pairs_reply(pairs: Pairs, withscores: bool, resp3: bool) -> Reply {
    let mut out = Vec::with_capacity(pairs.len() * if withscores { 2 } else { 1 });
    for (member, score) in pairs {
        push_scored(&mut out, Reply::Bulk(member), score, withscores, resp3);
    }
    Reply::Array(out)
}

/// Appends one member of a range-like reply (ZRANGE, ZUNION, ZRANDMEMBER): alone, or with
/// its score flat (RESP2) or as a `[member, score]` pair (RESP3).
pub(super) fn push_scored(
    out: &mut Vec<Reply>,
    member: Reply,
    score: f64,
    withscores: bool,
    resp3: bool,
) {
    if !withscores {
        out.push(member);
    } else if resp3 {
        out.push(Reply::Array(vec![member, Reply::Double(score)]));
    } else {
        out.push(member);
        out.push(Reply::Double(score));
    }
}

/// The keyspace event of a STORE form.
fn store_event(op: Combine) -> &'static str {
    match op {
        Combine::Union => "zunionstore",
        Combine::Inter => "zinterstore",
        Combine::Diff => "zdiffstore",
    }
}

fn form(name: &'static str, op: Combine, store: bool) -> Form {
    Form {
        name,
        op,
        at: if store { 2 } else { 1 },
        store,
        card: false,
    }
}

pub(super) fn zunion_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    run(ctx, args, form("zunion", Combine::Union, false))
}

pub(super) fn zinter_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    run(ctx, args, form("zinter", Combine::Inter, false))
}

pub(super) fn zdiff_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    run(ctx, args, form("zdiff", Combine::Diff, false))
}

pub(super) fn zunionstore_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    run(ctx, args, form("zunionstore", Combine::Union, true))
}

pub(super) fn zinterstore_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    run(ctx, args, form("zinterstore", Combine::Inter, true))
}

pub(super) fn zdiffstore_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    run(ctx, args, form("zdiffstore", Combine::Diff, true))
}

pub(super) fn zintercard_cmd(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let form = Form {
        card: true,
        ..form("zintercard", Combine::Inter, false)
    };
    run(ctx, args, form)
}

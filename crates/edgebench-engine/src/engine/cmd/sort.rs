//! SORT and SORT_RO, with Redis 7.0's options, order and errors: BY pattern (a constant
//! pattern, such as `nosort`, keeps the value's own order), hash fields (`*->field`), LIMIT,
//! GET patterns (`#` is the element itself), ASC/DESC, ALPHA and STORE.
//!
//! Locking: BY and GET patterns name keys derived from the sorted values, which no key spec
//! can list before the command runs. A SORT with such a pattern therefore locks its whole
//! database ([`KeySpec::CustomOrAll`]): the simplest choice that is correct, since every key
//! a pattern can produce is then held, also inside MULTI/EXEC. A SORT without patterns locks
//! only the sorted key and the STORE key, as any two-key command does.
//!
//! Order: numeric sorting compares scores, then the elements' bytes; ALPHA compares bytes as
//! C's `strcoll` does in the C locale (up to the first NUL byte) and, with STORE, as plain
//! bytes (Redis's two comparisons). The sort is stable, as glibc's `qsort` (a merge sort) is
//! for ties Redis leaves unordered. Elements of a set come in the set's own order, which
//! differs from Redis's hash order where SORT does not sort (BY a constant, without STORE,
//! outside a script).
//!
//! Keyspace events: STORE announces `sortstore` (class `l`), or `del` when an empty result
//! removed the destination, as Redis's sort.c does.

use std::cmp::Ordering;

use super::server::common::err;
use super::{is, parse_f64, parse_i64, spec, Ctx, KeySpec, KeysOrAll, Spec};
use crate::engine::acl::READ;
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::{Entry, Locked, Value};
use crate::engine::types::encoding::Shape;
use crate::resp::reply::Reply;

/// The commands of this family.
pub const COMMANDS: &[Spec] = &[
    spec("sort", -2, KeySpec::CustomOrAll(sort_keys), true, sort),
    spec(
        "sort_ro",
        -2,
        KeySpec::CustomOrAll(sort_ro_keys),
        false,
        sort_ro,
    ),
];

/// SORT's options, as parsed.
#[derive(Debug, Default)]
struct Options<'a> {
    desc: bool,
    alpha: bool,
    limit: Option<(i64, i64)>,
    store: Option<&'a [u8]>,
    /// Index of the STORE key among the arguments.
    store_at: Option<usize>,
    by: Option<&'a [u8]>,
    gets: Vec<&'a [u8]>,
    /// Called from a script: a set's elements come out sorted even BY a constant, so the
    /// script's result does not depend on the set's internal order.
    in_script: bool,
}

/// `full_key_access`: the client's user may read any key with this command (Redis refuses
/// BY with a pattern, and GET, to a user who may not: they read keys named by values).
fn parse<'a>(
    args: &[&'a [u8]],
    readonly: bool,
    full_key_access: bool,
) -> Result<Options<'a>, CmdError> {
    let mut o = Options::default();
    let mut j = 2;
    while j < args.len() {
        let left = args.len() - j - 1;
        let a = args[j];
        if is(a, "asc") {
            o.desc = false;
        } else if is(a, "desc") {
            o.desc = true;
        } else if is(a, "alpha") {
            o.alpha = true;
        } else if is(a, "limit") && left >= 2 {
            o.limit = Some((parse_i64(args[j + 1])?, parse_i64(args[j + 2])?));
            j += 2;
        } else if !readonly && is(a, "store") && left >= 1 {
            o.store = Some(args[j + 1]);
            o.store_at = Some(j + 1);
            j += 1;
        } else if is(a, "by") && left >= 1 {
            if !full_key_access && args[j + 1].contains(&b'*') {
                return Err(err(
                    "ERR BY option of SORT denied due to insufficient ACL permissions.",
                ));
            }
            o.by = Some(args[j + 1]);
            j += 1;
        } else if is(a, "get") && left >= 1 {
            if !full_key_access {
                return Err(err(
                    "ERR GET option of SORT denied due to insufficient ACL permissions.",
                ));
            }
            o.gets.push(args[j + 1]);
            j += 1;
        } else {
            return Err(CmdError::Syntax);
        }
        j += 1;
    }
    Ok(o)
}

/// The keys a SORT names (the sorted key and the STORE key), and whether it locks the whole
/// database: when a BY or GET pattern derives more keys from the values.
fn keys_of(args: &[&[u8]], readonly: bool) -> KeysOrAll {
    let Ok(o) = parse(args, readonly, true) else {
        return (vec![1], false);
    };
    let pattern = |p: &[u8]| p.contains(&b'*');
    let all = o.by.is_some_and(pattern) || o.gets.iter().any(|g| pattern(g));
    (std::iter::once(1).chain(o.store_at).collect(), all)
}

fn sort_keys(args: &[&[u8]]) -> KeysOrAll {
    keys_of(args, false)
}

fn sort_ro_keys(args: &[&[u8]]) -> KeysOrAll {
    keys_of(args, true)
}

fn sort(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let mut o = parse(args, false, full_read_access(ctx, args))?;
    o.in_script = ctx.client.in_script;
    run(&mut ctx.ks, args[1], &o)
}

fn sort_ro(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let mut o = parse(args, true, full_read_access(ctx, args))?;
    o.in_script = ctx.client.in_script;
    run(&mut ctx.ks, args[1], &o)
}

/// Whether the client's user may run this SORT and read every key.
fn full_read_access(ctx: &Ctx<'_, '_>, args: &[&[u8]]) -> bool {
    let Some(user) = ctx
        .client
        .user
        .as_ref()
        .filter(|_| ctx.client.acl_restricted())
    else {
        return true;
    };
    let catalog = crate::engine::acl::catalog::Catalog::get();
    catalog
        .lookup_request(args)
        .is_none_or(|id| crate::engine::acl::full_key_access(&user.read(), id, args, READ))
}

/// Where a pattern leads for one element: `#` is the element; otherwise the first `*` is
/// replaced by it, and `->field` (after the `*`, not at the end) reads a hash field. A
/// pattern without `*`, a missing key or a key of another type gives `None`.
fn lookup(ks: &mut Locked<'_>, pattern: &[u8], element: &[u8]) -> Option<Vec<u8>> {
    if pattern == b"#" {
        return Some(element.to_vec());
    }
    let star = pattern.iter().position(|&b| b == b'*')?;
    let rest = &pattern[star + 1..];
    let arrow = rest
        .windows(2)
        .position(|w| w == b"->")
        .filter(|&f| f + 2 < rest.len());
    let (suffix, field) = match arrow {
        Some(f) => (&rest[..f], Some(&rest[f + 2..])),
        None => (rest, None),
    };
    let mut key = Vec::with_capacity(star + element.len() + suffix.len());
    key.extend_from_slice(&pattern[..star]);
    key.extend_from_slice(element);
    key.extend_from_slice(suffix);
    match (ks.get(&key).map(|e| &e.value), field) {
        (Some(Value::Str(s)), None) => Some(s.clone()),
        (Some(Value::Hash(h)), Some(f)) => h.get(f).cloned(),
        _ => None,
    }
}

/// C's `isspace`.
fn c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// A sort score as Redis reads it (`strtod` of the whole C string): leading spaces allowed;
/// nothing after the number; not NaN, not out of range. An empty string scores 0.
fn score(s: &[u8]) -> Result<f64, ()> {
    let s = s.split(|&b| b == 0).next().unwrap_or(&[]);
    if s.is_empty() {
        return Ok(0.0);
    }
    let start = s.iter().position(|&b| !c_space(b)).ok_or(())?;
    let v = parse_f64(&s[start..]).map_err(|_| ())?;
    // strtod reports ERANGE for results too small to be normal as well.
    if v != 0.0 && v.abs() < f64::MIN_POSITIVE {
        return Err(());
    }
    Ok(v)
}

/// `strcoll` in the C locale: bytes compared up to each string's first NUL.
fn c_collate(a: &[u8], b: &[u8]) -> Ordering {
    let c = |s: &[u8]| s.split(|&x| x == 0).next().unwrap_or(&[]).to_vec();
    c(a).cmp(&c(b))
}

/// One element to sort and what it is sorted by.
struct Item {
    element: Vec<u8>,
    score: f64,
    by: Option<Vec<u8>>,
}

/// The elements of a sorted key, and whether it is a set (in the set's own order).
type Elements = (Vec<Vec<u8>>, bool);

/// The elements of the sorted key in its own order (a set's in the set's order): `None`
/// for a missing key.
fn elements(ks: &mut Locked<'_>, key: &[u8]) -> Result<Option<Elements>, CmdError> {
    let found = match ks.get(key) {
        None => None,
        Some(Entry { value, .. }) => Some(match value {
            Value::List(l) => (l.iter().cloned().collect(), false),
            Value::Set(s) => (s.iter().map(|m| m.to_vec()).collect(), true),
            Value::ZSet(z) => (z.iter().map(|(m, _)| m.to_vec()).collect(), false),
            _ => return Err(CmdError::WrongType),
        }),
    };
    // Redis converts a sorted set it sorts to a skiplist (sort.c's `zsetConvert`), without
    // calling it a write: OBJECT ENCODING then says so.
    if found.as_ref().is_some_and(|(_, set)| !set) {
        if let Some(Entry {
            value: Value::ZSet(_),
            ..
        }) = ks.peek(key)
        {
            if let Some(shape) = ks.shape_mut(key) {
                shape.set(Shape::GREW);
            }
        }
    }
    Ok(found)
}

/// The LIMIT window over `len` elements, as Redis computes it: (start, end) inclusive,
/// empty when end < start.
fn window(limit: Option<(i64, i64)>, len: usize) -> (i64, i64) {
    let len = len as i64;
    let (offset, count) = limit.unwrap_or((0, -1));
    let mut start = offset.max(0).min(len);
    let count = count.max(-1).min(len);
    let mut end = if count < 0 {
        len - 1
    } else {
        start + count - 1
    };
    if start >= len {
        start = len - 1;
        end = len - 2;
    }
    (start, end.min(len - 1))
}

fn run(ks: &mut Locked<'_>, key: &[u8], o: &Options<'_>) -> Result<Reply, CmdError> {
    let (list, is_set) = elements(ks, key)?.unwrap_or_default();
    let mut alpha = o.alpha;
    let mut by = o.by;
    let mut dontsort = by.is_some_and(|p| !p.contains(&b'*'));
    // A set sorted for STORE or for a script must come out the same everywhere (on a
    // replica, in the append-only file): Redis sorts it ALPHA.
    if dontsort && is_set && (o.store.is_some() || o.in_script) {
        dontsort = false;
        alpha = true;
        by = None;
    }
    let (start, end) = window(o.limit, list.len());
    let mut items: Vec<Item> = list
        .into_iter()
        .map(|element| Item {
            element,
            score: 0.0,
            by: None,
        })
        .collect();
    if dontsort && o.desc && !is_set {
        items.reverse();
    }
    let mut bad_score = false;
    if !dontsort {
        for item in &mut items {
            let value = match by {
                Some(p) => match lookup(ks, p, &item.element) {
                    Some(v) => v,
                    None => continue,
                },
                None => item.element.clone(),
            };
            if alpha {
                if by.is_some() {
                    item.by = Some(value);
                }
            } else {
                match score(&value) {
                    Ok(s) => item.score = s,
                    Err(()) => bad_score = true,
                }
            }
        }
        let store = o.store.is_some();
        let bytes = |a: &[u8], b: &[u8]| if store { a.cmp(b) } else { c_collate(a, b) };
        items.sort_by(|a, b| {
            let ord = if !alpha {
                a.score
                    .partial_cmp(&b.score)
                    .unwrap_or(Ordering::Equal)
                    .then_with(|| a.element.cmp(&b.element))
            } else if by.is_some() {
                match (&a.by, &b.by) {
                    (None, None) => Ordering::Equal,
                    (None, Some(_)) => Ordering::Less,
                    (Some(_), None) => Ordering::Greater,
                    (Some(x), Some(y)) => bytes(x, y),
                }
            } else {
                bytes(&a.element, &b.element)
            };
            if o.desc {
                ord.reverse()
            } else {
                ord
            }
        });
    }
    if bad_score {
        return Err(CmdError::Other(
            "ERR One or more scores can't be converted into double".into(),
        ));
    }
    let chosen: &[Item] = if end >= start {
        &items[start as usize..=end as usize]
    } else {
        &[]
    };
    let mut out: Vec<Option<Vec<u8>>> = Vec::with_capacity(chosen.len() * o.gets.len().max(1));
    for item in chosen {
        if o.gets.is_empty() {
            out.push(Some(item.element.clone()));
        }
        for g in &o.gets {
            out.push(lookup(ks, g, &item.element));
        }
    }
    let Some(dest) = o.store else {
        return Ok(Reply::Array(
            out.into_iter()
                .map(|v| v.map_or(Reply::Nil, Reply::Bulk))
                .collect(),
        ));
    };
    let n = out.len();
    if n == 0 {
        if ks.remove(dest).is_some() {
            ks.notify(Classes::GENERIC, "del", dest);
        }
    } else {
        let list = out.into_iter().map(Option::unwrap_or_default).collect();
        ks.insert(dest, Entry::new(Value::List(Box::new(list))));
        ks.notify(Classes::LIST, "sortstore", dest);
    }
    Ok(Reply::Int(n as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_window_like_redis() {
        assert_eq!(window(None, 5), (0, 4));
        assert_eq!(window(Some((1, 2)), 5), (1, 2));
        assert_eq!(window(Some((-3, 2)), 5), (0, 1));
        assert_eq!(window(Some((10, 2)), 5), (4, 3));
        assert_eq!(window(Some((2, -5)), 5), (2, 4));
        assert_eq!(window(Some((0, 0)), 5), (0, -1));
        assert_eq!(window(None, 0), (-1, -2));
        assert_eq!(window(Some((i64::MAX, i64::MAX)), 3), (2, 1));
    }

    #[test]
    fn scores_read_like_strtod() {
        assert_eq!(score(b""), Ok(0.0));
        assert_eq!(score(b"  3.5"), Ok(3.5));
        assert_eq!(score(b"1\0junk"), Ok(1.0));
        assert!(score(b"3.5 ").is_err());
        assert!(score(b" ").is_err());
        assert!(score(b"nan").is_err());
        assert!(score(b"1e400").is_err());
        assert!(score(b"1e-310").is_err());
        assert!(score(b"abc").is_err());
    }
}

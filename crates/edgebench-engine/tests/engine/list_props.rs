//! Lists against a model: random sequences of list commands run through `Engine::execute`
//! and on a `VecDeque` per key, checked reply by reply and, after every step, state by state
//! (`LRANGE k 0 -1` of every key, and `EXISTS k` is 0 exactly when the model's list is empty:
//! Redis never keeps an empty list).
//!
//! The model is written from Redis 7.0's `t_list.c`, not from the engine's code, so the two
//! fail independently: index normalisation (`listTypeIndex`, `ltrimCommand`'s clamping) with
//! negative and extreme indexes, `LPOP`/`RPOP` with a count (nil array on a missing key,
//! empty array for count 0 on an existing one), `LREM` from either end, `LINSERT`'s 0/-1,
//! and `LMOVE` between two keys or on one key (a rotation, which never deletes the key).

use std::collections::VecDeque;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use edgebench_engine::engine::{Client, Engine, Reply};
use proptest::prelude::*;

/// Keys the commands pick from; three, so LMOVE sees both distinct keys and one key.
const KEYS: [&str; 3] = ["list:a", "list:b", "list:c"];

/// Elements: few, so LREM, LINSERT's pivot and LSET hit existing ones; the empty string is a
/// valid element too.
const VALUES: [&str; 4] = ["a", "b", "c", ""];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Left,
    Right,
}

impl End {
    fn arg(self) -> &'static str {
        match self {
            End::Left => "LEFT",
            End::Right => "RIGHT",
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Push(End, usize, Vec<usize>),
    Pop(End, usize, Option<i64>),
    Range(usize, i64, i64),
    Index(usize, i64),
    Set(usize, i64, usize),
    Rem(usize, i64, usize),
    Trim(usize, i64, i64),
    Insert(usize, bool, usize, usize),
    Move(usize, usize, End, End),
    RPopLPush(usize, usize),
    Len(usize),
}

fn end() -> impl Strategy<Value = End> {
    prop_oneof![Just(End::Left), Just(End::Right)]
}

fn key() -> impl Strategy<Value = usize> {
    0..KEYS.len()
}

fn value() -> impl Strategy<Value = usize> {
    0..VALUES.len()
}

/// Mostly small indexes on both sides of 0 (lists stay short), sometimes the extremes that
/// overflow naive `len + index` arithmetic.
fn index() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => -9i64..10,
        1 => prop_oneof![Just(i64::MIN), Just(i64::MAX), Just(i64::MIN + 1)],
    ]
}

/// A pop count: 0 included; sometimes far past any length.
fn count() -> impl Strategy<Value = i64> {
    prop_oneof![8 => 0i64..6, 1 => Just(i64::MAX)]
}

/// An LREM count: from the head (> 0), from the tail (< 0) or all (0).
fn rem_count() -> impl Strategy<Value = i64> {
    prop_oneof![
        8 => -3i64..4,
        1 => prop_oneof![Just(i64::MIN), Just(i64::MAX)],
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (end(), key(), prop::collection::vec(value(), 1..5))
            .prop_map(|(e, k, vs)| Op::Push(e, k, vs)),
        3 => (end(), key(), prop::option::of(count())).prop_map(|(e, k, c)| Op::Pop(e, k, c)),
        2 => (key(), index(), index()).prop_map(|(k, a, b)| Op::Range(k, a, b)),
        1 => (key(), index()).prop_map(|(k, i)| Op::Index(k, i)),
        1 => (key(), index(), value()).prop_map(|(k, i, v)| Op::Set(k, i, v)),
        2 => (key(), rem_count(), value()).prop_map(|(k, c, v)| Op::Rem(k, c, v)),
        1 => (key(), index(), index()).prop_map(|(k, a, b)| Op::Trim(k, a, b)),
        2 => (key(), any::<bool>(), value(), value())
            .prop_map(|(k, before, p, v)| Op::Insert(k, before, p, v)),
        2 => (key(), key(), end(), end()).prop_map(|(s, d, f, t)| Op::Move(s, d, f, t)),
        1 => (key(), key()).prop_map(|(s, d)| Op::RPopLPush(s, d)),
        1 => key().prop_map(Op::Len),
    ]
}

/// One list per key; an empty deque is a key that does not exist.
#[derive(Debug, Default)]
struct Model([VecDeque<Vec<u8>>; 3]);

/// `[start, stop]` after Redis's normalisation for LRANGE and LTRIM: negative indexes count
/// from the tail, then the range is clamped; `None` when it selects nothing.
fn normalise(start: i64, stop: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 { len + start } else { start }.max(0);
    let stop = if stop < 0 { len + stop } else { stop };
    if start > stop || start >= len {
        return None;
    }
    Some((start as usize, stop.min(len - 1) as usize))
}

/// LINDEX/LSET's position of `index` in a list of `len`.
fn position(index: i64, len: usize) -> Option<usize> {
    let len = len as i64;
    let index = if index < 0 { len + index } else { index };
    (0..len).contains(&index).then_some(index as usize)
}

fn bulks<'a>(items: impl IntoIterator<Item = &'a Vec<u8>>) -> Reply {
    Reply::Array(items.into_iter().cloned().map(Reply::Bulk).collect())
}

fn pop(list: &mut VecDeque<Vec<u8>>, end: End) -> Option<Vec<u8>> {
    match end {
        End::Left => list.pop_front(),
        End::Right => list.pop_back(),
    }
}

fn push(list: &mut VecDeque<Vec<u8>>, end: End, value: Vec<u8>) {
    match end {
        End::Left => list.push_front(value),
        End::Right => list.push_back(value),
    }
}

fn len_reply(list: &VecDeque<Vec<u8>>) -> Reply {
    Reply::Int(list.len() as i64)
}

impl Model {
    /// Applies `op`; returns the command's arguments and the reply Redis gives.
    fn apply(&mut self, op: &Op) -> (Vec<Vec<u8>>, Reply) {
        let b = |s: &str| s.as_bytes().to_vec();
        let n = |i: i64| i.to_string().into_bytes();
        let v = |i: usize| VALUES[i].as_bytes().to_vec();
        match *op {
            Op::Push(end, k, ref values) => {
                let name = if end == End::Left { "LPUSH" } else { "RPUSH" };
                let mut args = vec![b(name), b(KEYS[k])];
                for &i in values {
                    args.push(v(i));
                    push(&mut self.0[k], end, v(i));
                }
                (args, len_reply(&self.0[k]))
            }
            Op::Pop(end, k, count) => {
                let name = if end == End::Left { "LPOP" } else { "RPOP" };
                let mut args = vec![b(name), b(KEYS[k])];
                let list = &mut self.0[k];
                let reply = match count {
                    None => pop(list, end).map_or(Reply::Nil, Reply::Bulk),
                    Some(c) => {
                        args.push(n(c));
                        if list.is_empty() {
                            Reply::NilArray
                        } else {
                            let take = usize::try_from(c).unwrap_or(usize::MAX).min(list.len());
                            let popped: Vec<Vec<u8>> =
                                (0..take).filter_map(|_| pop(list, end)).collect();
                            bulks(&popped)
                        }
                    }
                };
                (args, reply)
            }
            Op::Range(k, start, stop) => {
                let list = &self.0[k];
                let reply = match normalise(start, stop, list.len()) {
                    Some((lo, hi)) => bulks(list.range(lo..=hi)),
                    None => Reply::Array(Vec::new()),
                };
                (vec![b("LRANGE"), b(KEYS[k]), n(start), n(stop)], reply)
            }
            Op::Index(k, index) => {
                let list = &self.0[k];
                let reply =
                    position(index, list.len()).map_or(Reply::Nil, |i| Reply::bulk(&list[i]));
                (vec![b("LINDEX"), b(KEYS[k]), n(index)], reply)
            }
            Op::Set(k, index, value) => {
                let list = &mut self.0[k];
                let reply = if list.is_empty() {
                    Reply::err("ERR no such key")
                } else if let Some(i) = position(index, list.len()) {
                    list[i] = v(value);
                    Reply::ok()
                } else {
                    Reply::err("ERR index out of range")
                };
                (vec![b("LSET"), b(KEYS[k]), n(index), v(value)], reply)
            }
            Op::Rem(k, count, value) => {
                let list = &mut self.0[k];
                let target = v(value);
                let limit = if count == 0 {
                    usize::MAX
                } else {
                    usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX)
                };
                let mut removed = 0;
                if count >= 0 {
                    let mut i = 0;
                    while i < list.len() && removed < limit {
                        if list[i] == target {
                            list.remove(i);
                            removed += 1;
                        } else {
                            i += 1;
                        }
                    }
                } else {
                    let mut i = list.len();
                    while i > 0 && removed < limit {
                        i -= 1;
                        if list[i] == target {
                            list.remove(i);
                            removed += 1;
                        }
                    }
                }
                (
                    vec![b("LREM"), b(KEYS[k]), n(count), target],
                    Reply::Int(removed as i64),
                )
            }
            Op::Trim(k, start, stop) => {
                let list = &mut self.0[k];
                match normalise(start, stop, list.len()) {
                    Some((lo, hi)) => {
                        list.truncate(hi + 1);
                        list.drain(..lo);
                    }
                    None => list.clear(),
                }
                (vec![b("LTRIM"), b(KEYS[k]), n(start), n(stop)], Reply::ok())
            }
            Op::Insert(k, before, pivot, value) => {
                let list = &mut self.0[k];
                let reply = if list.is_empty() {
                    Reply::Int(0)
                } else {
                    match list.iter().position(|e| *e == v(pivot)) {
                        Some(i) => {
                            list.insert(if before { i } else { i + 1 }, v(value));
                            len_reply(list)
                        }
                        None => Reply::Int(-1),
                    }
                };
                let side = if before { "BEFORE" } else { "AFTER" };
                (
                    vec![b("LINSERT"), b(KEYS[k]), b(side), v(pivot), v(value)],
                    reply,
                )
            }
            Op::Move(src, dst, from, to) => {
                let reply = self.lmove(src, dst, from, to);
                (
                    vec![
                        b("LMOVE"),
                        b(KEYS[src]),
                        b(KEYS[dst]),
                        b(from.arg()),
                        b(to.arg()),
                    ],
                    reply,
                )
            }
            Op::RPopLPush(src, dst) => {
                let reply = self.lmove(src, dst, End::Right, End::Left);
                (vec![b("RPOPLPUSH"), b(KEYS[src]), b(KEYS[dst])], reply)
            }
            Op::Len(k) => (vec![b("LLEN"), b(KEYS[k])], len_reply(&self.0[k])),
        }
    }

    fn lmove(&mut self, src: usize, dst: usize, from: End, to: End) -> Reply {
        match pop(&mut self.0[src], from) {
            Some(value) => {
                push(&mut self.0[dst], to, value.clone());
                Reply::Bulk(value)
            }
            None => Reply::Nil,
        }
    }
}

fn run(engine: &Engine, client: &mut Client, args: &[Vec<u8>]) -> Reply {
    let argv: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
    engine.execute(client, &argv)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn engine_matches_a_vecdeque_model(ops in prop::collection::vec(op(), 1..60)) {
        // A manual clock: no expiry thread per case, and no key here has a TTL anyway.
        let engine = Engine::with_clock(Arc::new(AtomicU64::new(1_700_000_000_000)));
        let mut client = engine.client();
        let mut model = Model::default();
        for (step, op) in ops.iter().enumerate() {
            let (args, expected) = model.apply(op);
            let got = run(&engine, &mut client, &args);
            prop_assert_eq!(&got, &expected, "step {} {:?}", step, op);
            for (k, list) in model.0.iter().enumerate() {
                let key = KEYS[k].as_bytes();
                let range = run(&engine, &mut client, &[b"LRANGE".to_vec(), key.to_vec(), b"0".to_vec(), b"-1".to_vec()]);
                prop_assert_eq!(&range, &bulks(list), "LRANGE {} 0 -1 after step {} {:?}", KEYS[k], step, op);
                let exists = run(&engine, &mut client, &[b"EXISTS".to_vec(), key.to_vec()]);
                prop_assert_eq!(&exists, &Reply::Int(i64::from(!list.is_empty())), "EXISTS {} after step {} {:?}", KEYS[k], step, op);
            }
        }
    }
}

#[test]
fn model_normalises_like_redis() {
    // Spot checks of the model itself against replies taken from redis-server 7.0.
    assert_eq!(normalise(0, -1, 5), Some((0, 4)));
    assert_eq!(normalise(-100, 100, 5), Some((0, 4)));
    assert_eq!(normalise(3, 1, 5), None);
    assert_eq!(normalise(5, 10, 5), None);
    assert_eq!(normalise(0, -6, 5), None);
    assert_eq!(normalise(i64::MIN, i64::MAX, 5), Some((0, 4)));
    assert_eq!(normalise(i64::MAX, i64::MIN, 5), None);
    assert_eq!(normalise(0, -1, 0), None);
    assert_eq!(position(-5, 5), Some(0));
    assert_eq!(position(-6, 5), None);
    assert_eq!(position(i64::MIN, 5), None);
    assert_eq!(position(5, 5), None);
}

//! Unit tests of the sorted set: both encodings, the conversion between them, and every
//! range the commands ask for.

use super::*;

#[test]
fn orders_by_score_then_member_and_keeps_both_structures_in_step() {
    let mut z = ZSet::default();
    assert!(z.insert(b"b", 1.0));
    assert!(z.insert(b"a", 1.0));
    assert!(z.insert(b"c", 0.5));
    assert!(!z.insert(b"c", 2.0));
    let order: Vec<(&[u8], f64)> = z.iter().collect();
    assert_eq!(
        order,
        vec![(&b"a"[..], 1.0), (&b"b"[..], 1.0), (&b"c"[..], 2.0)]
    );
    assert_eq!(z.rank(b"c"), Some(2));
    assert_eq!(z.rank(b"x"), None);
    assert!(z.remove(b"a"));
    assert!(!z.remove(b"a"));
    assert_eq!(z.len(), 2);
    let ranged: Vec<&[u8]> = z
        .range_by_score(Excluded(1.0), Included(2.0))
        .map(|(m, _)| m)
        .collect();
    assert_eq!(ranged, vec![&b"c"[..]]);
    let ranged: Vec<&[u8]> = z
        .range_by_score(Included(1.0), Unbounded)
        .map(|(m, _)| m)
        .collect();
    assert_eq!(ranged, vec![&b"b"[..], &b"c"[..]]);
    z.insert(b"z", -0.0);
    assert_eq!(z.score(b"z").map(f64::to_bits), Some(0.0f64.to_bits()));
}

fn members<'a>(it: impl Iterator<Item = (&'a [u8], f64)>) -> Vec<String> {
    it.map(|(m, _)| String::from_utf8_lossy(m).into_owned())
        .collect()
}

#[test]
fn score_bounds_handle_infinities_and_inverted_ranges() {
    let mut z = ZSet::default();
    for (m, s) in [("a", f64::NEG_INFINITY), ("b", 1.0), ("c", f64::INFINITY)] {
        z.insert(m.as_bytes(), s);
    }
    let all = |lo, hi| members(z.range_by_score(lo, hi));
    assert_eq!(all(Included(f64::NEG_INFINITY), Unbounded), ["a", "b", "c"]);
    assert_eq!(
        all(Excluded(f64::NEG_INFINITY), Excluded(f64::INFINITY)),
        ["b"]
    );
    assert_eq!(
        all(Excluded(f64::INFINITY), Unbounded),
        Vec::<String>::new()
    );
    assert_eq!(all(Included(2.0), Included(1.0)), Vec::<String>::new());
    assert_eq!(all(Excluded(1.0), Excluded(1.0)), Vec::<String>::new());
    assert_eq!(all(Included(1.0), Included(1.0)), ["b"]);
    assert_eq!(
        members(z.range_by_score(Unbounded, Included(1.0)).rev()),
        ["b", "a"]
    );
}

#[test]
fn rank_ranges_walk_from_either_end_in_either_direction() {
    let mut z = ZSet::default();
    for i in 0..1000u32 {
        z.insert(format!("m{i:04}").as_bytes(), f64::from(i));
    }
    assert_eq!(
        members(z.range_by_rank(0, 2, false)),
        ["m0000", "m0001", "m0002"]
    );
    assert_eq!(
        members(z.range_by_rank(997, 5000, false)),
        ["m0997", "m0998", "m0999"]
    );
    assert_eq!(members(z.range_by_rank(0, 1, true)), ["m0999", "m0998"]);
    assert_eq!(members(z.range_by_rank(998, 999, true)), ["m0001", "m0000"]);
    assert_eq!(z.range_by_rank(5, 4, false).count(), 0);
    assert_eq!(z.range_by_rank(1000, 2000, false).count(), 0);
    assert_eq!(z.range_by_rank(0, usize::MAX, false).count(), 1000);
}

#[test]
fn every_rank_range_matches_a_naive_slice() {
    let mut z = ZSet::default();
    let names: Vec<String> = (0..7).map(|i| format!("m{i}")).collect();
    for (i, m) in names.iter().enumerate() {
        z.insert(m.as_bytes(), i as f64);
    }
    for start in 0..9 {
        for stop in 0..9 {
            for rev in [false, true] {
                let mut want: Vec<String> = Vec::new();
                if start <= stop && start < 7 {
                    let ordered: Vec<&String> = if rev {
                        names.iter().rev().collect()
                    } else {
                        names.iter().collect()
                    };
                    want = ordered[start..=stop.min(6)]
                        .iter()
                        .map(|s| s.to_string())
                        .collect();
                }
                let got = z.range_by_rank(start, stop, rev);
                assert_eq!(got.size_hint().0, want.len());
                assert_eq!(members(got), want, "{start}..={stop} rev={rev}");
            }
        }
    }
}

#[test]
fn prefixes_never_change_the_byte_order() {
    let tricky: [&[u8]; 16] = [
        b"",
        b"\0",
        b"\0\0",
        b"a",
        b"a\0",
        b"a\0\x01",
        b"abcdefgh",
        b"abcdefgh\0",
        b"abcdefghi",
        b"abcdefgg\xff\xff",
        b"\xff",
        b"\xff\xff\xff\xff\xff\xff\xff\xff\xff",
        b"5b4f00000000000000000001",
        b"5b4f00000000000000000001\0",
        b"5b4f000000000000000000010",
        b"5b4f00000000000000000002",
    ];
    let mut z = ZSet::default();
    for m in tricky.iter().rev() {
        z.insert(m, 1.0);
    }
    let mut sorted = tricky.to_vec();
    sorted.sort();
    let order: Vec<&[u8]> = z.iter().map(|(m, _)| m).collect();
    assert_eq!(order, sorted);
    for (i, m) in sorted.iter().enumerate() {
        assert_eq!(z.rank(m), Some(i));
    }
    let lex = LexRange {
        min: LexBound::Excluded(b"a"),
        max: LexBound::Included(b"abcdefgh\0"),
    };
    let inside: Vec<&[u8]> = z.range_by_lex(lex, false).map(|(m, _)| m).collect();
    assert_eq!(
        inside,
        [
            &b"a\0"[..],
            b"a\0\x01",
            b"abcdefgg\xff\xff",
            b"abcdefgh",
            b"abcdefgh\0"
        ]
    );
    for m in tricky {
        assert!(z.remove(m));
    }
    assert!(z.is_empty() && z.iter().next().is_none());
}

#[test]
fn add_follows_zadd_conditions() {
    let mut z = ZSet::default();
    let f = |nx, xx, gt, lt, incr| AddFlags {
        nx,
        xx,
        gt,
        lt,
        incr,
    };
    assert_eq!(
        z.add(b"a", 1.0, f(false, true, false, false, false)),
        AddOutcome::Skipped
    );
    assert_eq!(
        z.add(b"a", 1.0, f(true, false, false, false, false)),
        AddOutcome::Added(1.0)
    );
    assert_eq!(
        z.add(b"a", 5.0, f(true, false, false, false, false)),
        AddOutcome::Skipped
    );
    assert_eq!(
        z.add(b"a", 0.5, f(false, false, true, false, false)),
        AddOutcome::Skipped
    );
    assert_eq!(
        z.add(b"a", 2.0, f(false, false, true, false, false)),
        AddOutcome::Updated(2.0)
    );
    assert_eq!(
        z.add(b"a", 2.0, f(false, false, false, false, false)),
        AddOutcome::Unchanged(2.0)
    );
    assert_eq!(
        z.add(b"a", 1.0, f(false, false, false, false, true)),
        AddOutcome::Updated(3.0)
    );
    assert_eq!(
        z.add(b"a", f64::INFINITY, f(false, false, false, false, false)),
        AddOutcome::Updated(f64::INFINITY)
    );
    assert_eq!(
        z.add(b"a", f64::NEG_INFINITY, f(false, false, false, false, true)),
        AddOutcome::NaN
    );
    assert_eq!(z.score(b"a"), Some(f64::INFINITY));
    assert_eq!(z.rank(b"a"), Some(0));
}

#[test]
fn lex_ranges_seek_when_scores_are_equal_and_walk_like_a_listpack_otherwise() {
    let mut z = ZSet::default();
    for m in ["a", "b", "c", "d"] {
        z.insert(m.as_bytes(), 0.0);
    }
    let r = |min, max| LexRange { min, max };
    use LexBound::*;
    assert_eq!(
        members(z.range_by_lex(r(Excluded(b"a"), Included(b"c")), false)),
        ["b", "c"]
    );
    assert_eq!(
        members(z.range_by_lex(r(NegInf, Excluded(b"c")), true)),
        ["b", "a"]
    );
    assert_eq!(members(z.range_by_lex(r(PosInf, PosInf), false)).len(), 0);
    assert_eq!(
        members(z.range_by_lex(r(Included(b"c"), Included(b"b")), false)).len(),
        0
    );

    // Mixed scores: (1,b) (2,a) (3,d) (4,c), as Redis's listpack walk answers.
    let mut m = ZSet::default();
    for (k, s) in [("b", 1.0), ("a", 2.0), ("d", 3.0), ("c", 4.0)] {
        m.insert(k.as_bytes(), s);
    }
    assert_eq!(
        members(m.range_by_lex(r(NegInf, Included(b"b")), false)),
        ["b", "a"]
    );
    assert_eq!(
        members(m.range_by_lex(r(Included(b"b"), PosInf), true)),
        ["c", "d"]
    );
    assert_eq!(
        members(m.range_by_lex(r(Included(b"d"), PosInf), false)).len(),
        0
    );
}

#[test]
fn tracks_the_encoding_redis_would_use() {
    let mut z = ZSet::default();
    for i in 0..LISTPACK_MAX_ENTRIES {
        z.insert(format!("m{i}").as_bytes(), i as f64);
    }
    assert!(!z.is_large());
    z.insert(b"one-more", 0.0);
    assert!(z.is_large());
    z.remove(b"one-more");
    assert!(z.is_large(), "Redis never converts back");
    let mut long = ZSet::default();
    long.insert(&[b'x'; LISTPACK_MAX_VALUE], 1.0);
    assert!(!long.is_large());
    long.insert(&[b'x'; LISTPACK_MAX_VALUE + 1], 1.0);
    assert!(long.is_large());
}

/// A set in the large form however few members it holds (a long member makes it large,
/// and it stays large once that member is gone).
fn forced_large() -> ZSet {
    let mut z = ZSet::default();
    z.insert(&[b'x'; LISTPACK_MAX_VALUE + 1], 0.0);
    z.remove(&[b'x'; LISTPACK_MAX_VALUE + 1]);
    assert!(z.is_large() && z.is_empty());
    z
}

#[test]
fn small_and_large_forms_answer_alike() {
    // Members sharing prefixes and suffixes, of lengths around 8 and 24 bytes (ObjectId hex), and
    // few distinct scores, so ties are ordered by bytes.
    let names: Vec<Vec<u8>> = [
        "",
        "\0",
        "a",
        "a\0",
        "ab",
        "abcdefgh",
        "abcdefgh\0",
        "abcdefghi",
        "xabcdefgh",
        "m1",
        "m10",
        "m2",
        "user:1",
        "user:2",
        "5b4f0000000000000000000a",
        "5b4f0000000000000000000a\0",
        "5b4f0000000000000000000ab",
        "5b4f0000000000000000000b",
        "\u{ff}",
        "zz",
    ]
    .iter()
    .map(|s| s.as_bytes().to_vec())
    .collect();
    let scores = [f64::NEG_INFINITY, -1.5, -0.0, 0.0, 1.0, 2.0, f64::INFINITY];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let lex_bounds = |m: &'static [u8]| {
        [
            LexBound::NegInf,
            LexBound::PosInf,
            LexBound::Included(m),
            LexBound::Excluded(m),
        ]
    };
    let score_bound = |x: f64| [Included(x), Excluded(x), Unbounded];
    for round in 0..200 {
        let (mut small, mut large) = (ZSet::default(), forced_large());
        for _ in 0..(round % 24) {
            let m = &names[next(names.len())];
            let s = scores[next(scores.len())];
            let flags = AddFlags {
                nx: next(4) == 0,
                xx: next(4) == 0,
                gt: next(5) == 0,
                lt: next(5) == 0,
                incr: next(3) == 0,
            };
            let flags = AddFlags {
                lt: flags.lt && !flags.gt,
                xx: flags.xx && !flags.nx,
                ..flags
            };
            match next(10) {
                0 => assert_eq!(small.remove(m), large.remove(m)),
                1 => {
                    let max = next(2) == 0;
                    assert_eq!(small.pop(max), large.pop(max));
                }
                _ => assert_eq!(small.add(m, s, flags), large.add(m, s, flags)),
            }
        }
        assert!(!small.is_large() && large.is_large());
        let all = |z: &ZSet| -> Vec<(Vec<u8>, u64)> {
            z.iter().map(|(m, s)| (m.to_vec(), s.to_bits())).collect()
        };
        assert_eq!(all(&small), all(&large));
        for m in &names {
            assert_eq!(small.score(m), large.score(m));
            assert_eq!(small.rank(m), large.rank(m));
        }
        for start in 0..small.len() + 2 {
            for stop in [0, 1, start, start + 1, usize::MAX] {
                for rev in [false, true] {
                    let a: Vec<_> = small.range_by_rank(start, stop, rev).collect();
                    let b: Vec<_> = large.range_by_rank(start, stop, rev).collect();
                    assert_eq!(a, b);
                }
            }
        }
        for lo in scores.iter().flat_map(|&x| score_bound(x)) {
            for hi in scores.iter().flat_map(|&x| score_bound(x)) {
                let a: Vec<_> = small.range_by_score(lo, hi).rev().collect();
                let b: Vec<_> = large.range_by_score(lo, hi).rev().collect();
                assert_eq!(a, b);
            }
        }
        for min in lex_bounds(b"ab").into_iter().chain(lex_bounds(b"m10")) {
            for max in lex_bounds(b"m2").into_iter().chain(lex_bounds(b"a")) {
                let lex = LexRange { min, max };
                for rev in [false, true] {
                    let a: Vec<_> = small.range_by_lex(lex, rev).collect();
                    let b: Vec<_> = large.range_by_lex(lex, rev).collect();
                    assert_eq!(a, b, "{lex:?} rev={rev}");
                }
            }
        }
        let (mut s2, mut l2) = (small.clone(), large.clone());
        let lex = LexRange {
            min: LexBound::Included(b"a"),
            max: LexBound::Excluded(b"m2"),
        };
        assert_eq!(s2.remove_range_by_lex(lex), l2.remove_range_by_lex(lex));
        assert_eq!(all(&s2), all(&l2));
        let (mut s2, mut l2) = (small.clone(), large.clone());
        assert_eq!(s2.remove_range_by_rank(1, 3), l2.remove_range_by_rank(1, 3));
        assert_eq!(all(&s2), all(&l2));
        let (lo, hi) = (Excluded(-1.5), Included(1.0));
        assert_eq!(
            small.remove_range_by_score(lo, hi),
            large.remove_range_by_score(lo, hi)
        );
        assert_eq!(all(&small), all(&large));
    }
}

#[test]
fn pop_takes_from_either_end_and_keeps_the_map_in_step() {
    let mut z = ZSet::default();
    z.insert(b"a", 1.0);
    z.insert(b"b", 2.0);
    assert_eq!(z.pop(true), Some((b"b".to_vec(), 2.0)));
    assert_eq!(z.score(b"b"), None);
    assert_eq!(z.pop(false), Some((b"a".to_vec(), 1.0)));
    assert_eq!(z.pop(false), None);
    assert!(z.is_empty());
}

#[test]
fn a_large_set_owns_its_members_clones_apart_and_updates_both_structures() {
    // 1,000 ObjectId-like members (a shared head, then a counter), scores tied in tens.
    let id = |i: usize| format!("6750a1b23f9c1e04d2{i:06x}").into_bytes();
    let mut z = ZSet::default();
    for i in 0..1000 {
        assert!(z.insert(&id(i), (i / 10) as f64));
    }
    assert!(z.is_large());
    let copy = z.clone();
    // Move every member but those scored 0 to the opposite end of the order (-0 is 0), drop
    // some, pop both ends.
    for i in 10..1000 {
        assert_eq!(
            z.add(&id(i), -((i / 10) as f64), AddFlags::default()),
            AddOutcome::Updated(-((i / 10) as f64))
        );
    }
    assert!(z.remove(&id(500)));
    assert!(!z.remove(&id(500)));
    assert_eq!(z.remove_range_by_score(Included(-2.0), Included(-1.0)), 20);
    assert_eq!(z.pop(false), Some((id(990), -99.0)));
    assert_eq!(z.pop(true), Some((id(9), 0.0)));
    assert_eq!(z.len(), 1000 - 1 - 20 - 2);
    assert_eq!(z.score(&id(15)), None);
    assert_eq!(z.score(&id(991)), Some(-99.0));
    assert_eq!(z.rank(&id(991)), Some(0));
    let walked: Vec<(Vec<u8>, f64)> = z.iter().map(|(m, s)| (m.to_vec(), s)).collect();
    let mut want = walked.clone();
    want.sort_by(|(ma, sa), (mb, sb)| Score(*sa).cmp(&Score(*sb)).then_with(|| ma.cmp(mb)));
    assert_eq!(walked, want);
    for (m, s) in &walked {
        assert_eq!(z.score(m), Some(*s));
    }
    // The clone kept every member and its first score.
    assert_eq!(copy.len(), 1000);
    assert_eq!(copy.score(&id(500)), Some(50.0));
    assert_eq!(copy.rank(&id(999)), Some(999));
}

proptest::proptest! {
    /// The tree's in-line member order is Redis's (`memcmp`, then length), on members that
    /// share prefixes of every length and differ in their last bytes.
    #[test]
    fn member_order_is_byte_order(
        prefix in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..20),
        a in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..12),
        b in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..12),
    ) {
        let a = [&prefix[..], &a[..]].concat();
        let b = [&prefix[..], &b[..]].concat();
        proptest::prop_assert_eq!(large::member_cmp(&a, &b), a.cmp(&b));
        proptest::prop_assert_eq!(large::member_cmp(&a, &a), Ordering::Equal);
    }
}

//! The sorted set: members ordered by (score, member bytes), as Redis orders them.
//!
//! Two structures kept in step: a hash map member → score for O(1) ZSCORE/membership, and a
//! B-tree of (score, member) for ordered ranges. Ranks (ZRANK, ZRANGE by index) walk the
//! tree, O(rank); Redis's skip list makes them O(log n). For the sizes edgebench's
//! workloads use this is not what dominates, and it keeps the structure std-only.
//!
//! Invariant: `scores` and `order` hold the same members; no score is NaN; -0.0 is stored as
//! 0.0 (Redis compares them equal).

use std::cmp::Ordering;
use std::collections::BTreeSet;

use crate::engine::keyspace::{BytesMap, Key};

/// A score with a total order (no NaN is ever stored).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Score(pub f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

fn pair((s, m): &(Score, Key)) -> (&[u8], f64) {
    (&m[..], s.0)
}

/// A sorted set.
#[derive(Debug, Clone, Default)]
pub struct ZSet {
    scores: BytesMap<f64>,
    order: BTreeSet<(Score, Key)>,
}

impl ZSet {
    /// Members.
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    /// The score of `member`.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.scores.get(member).copied()
    }

    /// Adds `member` or changes its score; true if it was new. `score` must not be NaN.
    pub fn insert(&mut self, member: &[u8], score: f64) -> bool {
        debug_assert!(!score.is_nan());
        // Redis compares -0 and 0 equal; store one of them.
        let score = if score == 0.0 { 0.0 } else { score };
        match self.scores.get_mut(member) {
            Some(old) => {
                if *old != score {
                    let key: Key = member.into();
                    self.order.remove(&(Score(*old), key.clone()));
                    self.order.insert((Score(score), key));
                    *old = score;
                }
                false
            }
            None => {
                let key: Key = member.into();
                self.scores.insert(key.clone(), score);
                self.order.insert((Score(score), key));
                true
            }
        }
    }

    /// Removes `member`; true if it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self.scores.remove(member) {
            Some(score) => {
                self.order.remove(&(Score(score), Key::from(member)));
                true
            }
            None => false,
        }
    }

    /// Members in order, lowest first (`.rev()` for highest first).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&[u8], f64)> + '_ {
        self.order.iter().map(|(s, m)| (&m[..], s.0))
    }

    /// Members with `min <= score <= max` bounds as given, in order.
    pub fn range_by_score(
        &self,
        min: std::ops::Bound<f64>,
        max: std::ops::Bound<f64>,
    ) -> impl DoubleEndedIterator<Item = (&[u8], f64)> + '_ {
        use std::ops::Bound::*;
        // (score, member) pairs sort members within one score, so a score bound becomes a
        // pair bound with the empty member (the least of a score) of the score or of the next
        // representable score.
        let zero = |x: f64| if x == 0.0 { 0.0 } else { x };
        let lo = match min {
            Included(x) => Included((Score(zero(x)), Key::default())),
            Excluded(x) if x == f64::INFINITY => {
                return self
                    .order
                    .range(..(Score(f64::NEG_INFINITY), Key::default()))
                    .map(pair)
            }
            Excluded(x) => Included((Score(zero(x).next_up()), Key::default())),
            Unbounded => Unbounded,
        };
        let hi = match max {
            Included(x) if x == f64::INFINITY => Unbounded,
            Included(x) => Excluded((Score(zero(x).next_up()), Key::default())),
            Excluded(x) => Excluded((Score(zero(x)), Key::default())),
            Unbounded => Unbounded,
        };
        if matches!((&lo, &hi), (Included(a), Excluded(b)) if a >= b) {
            return self
                .order
                .range(..(Score(f64::NEG_INFINITY), Key::default()))
                .map(pair);
        }
        self.order.range((lo, hi)).map(pair)
    }

    /// The 0-based rank of `member`, lowest score first.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = self.score(member)?;
        Some(
            self.order
                .range(..(Score(score), Key::from(member)))
                .count(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Bound::*;

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
}

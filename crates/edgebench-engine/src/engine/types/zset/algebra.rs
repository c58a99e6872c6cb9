//! The arithmetic of ZUNION, ZINTER and their STORE forms: how an input's score is weighted
//! and how the scores of one member in several inputs combine (Redis 7.0's
//! `zunionInterAggregate`), and an input seen uniformly whether it is a sorted set or a
//! plain set (whose members all score 1, as Redis lets a set stand in for a sorted set).
//!
//! Invariant: no function here returns NaN. Redis turns every NaN these operations can make
//! (`0 * inf`, `inf + -inf`) into 0, so an aggregated score is always storable.

use super::ZSet;
use crate::engine::types::collections::BytesSet;

/// Which members a combination of inputs keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Combine {
    /// Members of any input (ZUNION).
    Union,
    /// Members of every input (ZINTER).
    Inter,
    /// Members of the first input in none of the others (ZDIFF), with their first scores.
    Diff,
}

/// How the scores of a member found in several inputs combine (AGGREGATE).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Aggregate {
    /// The sum (the default); `inf + -inf` is 0.
    #[default]
    Sum,
    /// The lowest.
    Min,
    /// The highest.
    Max,
}

impl Aggregate {
    /// `acc` combined with `score` (the member's weighted score in the next input).
    pub fn combine(self, acc: f64, score: f64) -> f64 {
        match self {
            Aggregate::Sum => {
                let sum = acc + score;
                if sum.is_nan() {
                    0.0
                } else {
                    sum
                }
            }
            // Redis's `val < *target ? val : *target`: on a tie the accumulated value stays
            // (which keeps a -0 against a 0).
            Aggregate::Min => {
                if score < acc {
                    score
                } else {
                    acc
                }
            }
            Aggregate::Max => {
                if score > acc {
                    score
                } else {
                    acc
                }
            }
        }
    }
}

/// `score * weight`, with Redis's NaN (`0 * inf`) as 0.
pub fn weighted(score: f64, weight: f64) -> f64 {
    let v = score * weight;
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

/// One input of a union, intersection or difference.
#[derive(Debug, Clone, Copy)]
pub enum Source<'a> {
    /// A sorted set.
    Sorted(&'a ZSet),
    /// A plain set: every member scores 1.
    Plain(&'a BytesSet),
}

impl<'a> Source<'a> {
    /// Members.
    pub fn len(&self) -> usize {
        match self {
            Source::Sorted(z) => z.len(),
            Source::Plain(s) => s.len(),
        }
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The score of `member`, if present.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match self {
            Source::Sorted(z) => z.score(member),
            Source::Plain(s) => s.contains(member).then_some(1.0),
        }
    }

    /// Every (member, score): a sorted set in order, a plain set in its own order.
    pub fn for_each(&self, mut f: impl FnMut(&'a [u8], f64)) {
        match self {
            Source::Sorted(z) => z.iter().for_each(|(m, s)| f(m, s)),
            Source::Plain(s) => s.iter().for_each(|m| f(m, 1.0)),
        }
    }
}

/// Sorts `(member, score)` pairs into a sorted set's order: by score (-0 equal to 0), then
/// by member bytes.
pub fn sort_pairs(pairs: &mut [(Vec<u8>, f64)]) {
    pairs.sort_unstable_by(|(ma, sa), (mb, sb)| {
        sa.partial_cmp(sb)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| ma.cmp(mb))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregates_follow_redis() {
        let inf = f64::INFINITY;
        assert_eq!(Aggregate::Sum.combine(inf, -inf), 0.0);
        assert_eq!(Aggregate::Sum.combine(1.5, 2.0), 3.5);
        assert_eq!(Aggregate::Min.combine(1.0, -inf), -inf);
        assert_eq!(Aggregate::Max.combine(1.0, inf), inf);
        assert!(Aggregate::Min.combine(-0.0, 0.0).is_sign_negative());
        assert_eq!(weighted(inf, 0.0), 0.0);
        assert_eq!(weighted(2.0, -1.5), -3.0);
    }

    #[test]
    fn pairs_sort_by_score_then_member() {
        let mut pairs = vec![
            (b"b".to_vec(), 1.0),
            (b"a".to_vec(), 1.0),
            (b"z".to_vec(), -0.0),
            (b"c".to_vec(), 0.0),
        ];
        sort_pairs(&mut pairs);
        let order: Vec<&[u8]> = pairs.iter().map(|(m, _)| &m[..]).collect();
        assert_eq!(order, [&b"c"[..], b"z", b"a", b"b"]);
    }
}

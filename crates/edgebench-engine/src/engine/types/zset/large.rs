//! The large form of a sorted set, Redis's skip list in std parts: a hash map member → score
//! for O(1) ZSCORE/membership, and a B-tree of (score, member) nodes for ordered ranges,
//! kept in step. Each member's bytes are allocated once and shared by both (an `Arc<[u8]>`).
//! The tree is searched with borrowed probes (the private `Probe` trait), so no lookup
//! allocates, and each node caches the head of its member's bytes, so most comparisons
//! during a search never read the member's allocation.
//!
//! Invariant: `scores` and `order` hold the same members with the same scores.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::{btree_set, BTreeSet, HashMap};
use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::sync::Arc;

use super::{
    as_probe, canonical, rank_span, update_outcome, AddFlags, AddOutcome, LexBound, LexRange,
    LexRangeIter, LexWalk, RankRange, RankWalk, Score, SmallEntry,
};
use crate::engine::types::collections::Hasher;

/// A member's bytes, shared by the hash map and the tree.
type Member = Arc<[u8]>;

/// A tree node. `prefix` caches the member's first 24 bytes so that most comparisons made
/// while searching the tree never read the member's allocation (a cache miss each). 24, not
/// 8: members are often ids that share a long head (the 24 hex digits of an ObjectId made in
/// the same second share the first 18), and with an 8-byte cache every comparison among them
/// missed the cache on both members.
#[derive(Debug, Clone)]
pub(super) struct Node {
    pub(super) score: Score,
    prefix: Prefix,
    pub(super) member: Member,
}

/// A member's first 24 bytes as three big-endian words (compared in order, as the bytes are).
type Prefix = [u64; 3];

impl Node {
    pub(super) fn new(score: f64, member: Member) -> Node {
        Node {
            score: Score(score),
            prefix: prefix(&member),
            member,
        }
    }
}

/// A member's first 24 bytes, big-endian, zero-padded. Where two prefixes differ they order
/// the members as their bytes do (a zero pad only ties with a real zero byte, and ties fall
/// through to the full comparison), so (prefix, bytes) orders exactly as bytes.
pub(super) fn prefix(member: &[u8]) -> Prefix {
    let mut buf = [0u8; 24];
    let n = member.len().min(24);
    buf[..n].copy_from_slice(&member[..n]);
    let word = |i: usize| u64::from_be_bytes(buf[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    [word(0), word(1), word(2)]
}

/// A position in the (score, member) order: a member (with its prefix), or the edges before
/// and after every member of a score (so a score bound needs no made-up member).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Edge<'a> {
    Before,
    At(Prefix, &'a [u8]),
    After,
}

/// The edge of a member.
pub(super) fn at(member: &[u8]) -> Edge<'_> {
    Edge::At(prefix(member), member)
}

/// What the tree is searched with: its own nodes, or a borrowed (score, edge) pair. The
/// `Borrow<dyn Probe>` impl below lets `BTreeSet<Node>` look up a pair without building a
/// node (that would allocate the member).
pub(super) trait Probe {
    fn key(&self) -> (Score, Edge<'_>);
}

impl Probe for Node {
    fn key(&self) -> (Score, Edge<'_>) {
        (self.score, Edge::At(self.prefix, &self.member))
    }
}

impl Probe for (Score, Edge<'_>) {
    fn key(&self) -> (Score, Edge<'_>) {
        *self
    }
}

impl<'a> Borrow<dyn Probe + 'a> for Node {
    fn borrow(&self) -> &(dyn Probe + 'a) {
        self
    }
}

impl PartialEq for dyn Probe + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for dyn Probe + '_ {}

impl PartialOrd for dyn Probe + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn Probe + '_ {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

// Node's own order must agree with the probes' (the tree relies on it).
impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Node {}

impl PartialOrd for Node {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Node {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

pub(super) fn pair(n: &Node) -> (&[u8], f64) {
    (&n.member, n.score.0)
}

/// The large form: a member → score map and a (score, member) tree, kept in step.
#[derive(Debug, Clone, Default)]
pub(super) struct Large {
    pub(super) scores: HashMap<Member, f64, Hasher>,
    pub(super) order: BTreeSet<Node>,
}

impl Large {
    /// The large form of a small set's members (already in order).
    pub(super) fn of(small: Vec<SmallEntry>) -> Large {
        let mut scores = HashMap::with_capacity_and_hasher(small.len() + 1, Hasher::default());
        let order = small
            .into_iter()
            .map(|SmallEntry { score, member, .. }| {
                let shared = Member::from(member);
                scores.insert(shared.clone(), score);
                Node::new(score, shared)
            })
            .collect();
        Large { scores, order }
    }

    pub(super) fn add(&mut self, member: &[u8], score: f64, flags: AddFlags) -> AddOutcome {
        match self.scores.get_mut(member) {
            Some(current) => {
                let old = *current;
                let outcome = update_outcome(old, score, flags);
                let AddOutcome::Updated(new) = outcome else {
                    return outcome;
                };
                let stored = canonical(new);
                *current = stored;
                let probe = (Score(old), at(member));
                let member = match self.order.take(&probe as &dyn Probe) {
                    Some(node) => node.member,
                    None => {
                        // The invariant says this cannot happen; repair rather than lose it.
                        debug_assert!(false, "zset member missing from the tree");
                        Member::from(member)
                    }
                };
                self.order.insert(Node::new(stored, member));
                AddOutcome::Updated(new)
            }
            None if flags.xx => AddOutcome::Skipped,
            None => {
                let stored = canonical(score);
                let shared = Member::from(member);
                self.scores.insert(shared.clone(), stored);
                self.order.insert(Node::new(stored, shared));
                // The reply shows the score as given (ZINCRBY of -0 on a new member is "-0").
                AddOutcome::Added(score)
            }
        }
    }

    pub(super) fn remove(&mut self, member: &[u8]) -> bool {
        match self.scores.remove(member) {
            Some(score) => {
                let removed = self.order.remove(&(Score(score), at(member)) as &dyn Probe);
                debug_assert!(removed, "zset member missing from the tree");
                true
            }
            None => false,
        }
    }

    pub(super) fn pop(&mut self, max: bool) -> Option<(Vec<u8>, f64)> {
        let node = if max {
            self.order.pop_last()?
        } else {
            self.order.pop_first()?
        };
        self.scores.remove(&node.member[..]);
        Some((node.member.to_vec(), node.score.0))
    }

    /// The nodes with scores within the bounds, or None when there are none for sure.
    pub(super) fn score_nodes(
        &self,
        min: Bound<f64>,
        max: Bound<f64>,
    ) -> Option<btree_set::Range<'_, Node>> {
        // A score bound is a probe at the edge before or after every member of that score.
        let lo = match min {
            Included(x) => Included((Score(canonical(x)), Edge::Before)),
            Excluded(x) => Excluded((Score(canonical(x)), Edge::After)),
            Unbounded => Unbounded,
        };
        let hi = match max {
            Included(x) => Included((Score(canonical(x)), Edge::After)),
            Excluded(x) => Excluded((Score(canonical(x)), Edge::Before)),
            Unbounded => Unbounded,
        };
        // BTreeSet::range panics on an inverted range; such a range is simply empty here.
        let nonempty = match (&lo, &hi) {
            (Included(a) | Excluded(a), Included(b) | Excluded(b)) => a < b,
            _ => true,
        };
        nonempty.then(|| {
            self.order
                .range::<dyn Probe, _>((as_probe(&lo), as_probe(&hi)))
        })
    }

    /// Removes nodes taken from the tree (cloning a node shares its member, no copy).
    pub(super) fn remove_nodes(&mut self, doomed: Vec<Node>) -> usize {
        for node in &doomed {
            self.order.remove(node);
            self.scores.remove(&node.member[..]);
        }
        doomed.len()
    }

    pub(super) fn range_by_rank(&self, start: usize, stop: usize, rev: bool) -> RankRange<'_> {
        let len = self.order.len();
        let mut iter = self.order.iter();
        let Some((lo, hi)) = rank_span(len, start, stop, rev) else {
            return RankRange(RankWalk::Lazy {
                iter,
                left: 0,
                back: false,
            });
        };
        let n = hi - lo + 1;
        let from_front = lo <= len - 1 - hi;
        if from_front && lo > 0 {
            iter.nth(lo - 1);
        } else if !from_front && hi < len - 1 {
            iter.nth_back(len - 2 - hi);
        }
        RankRange(match (from_front, rev) {
            (true, false) => RankWalk::Lazy {
                iter,
                left: n,
                back: false,
            },
            (false, true) => RankWalk::Lazy {
                iter,
                left: n,
                back: true,
            },
            (true, true) => RankWalk::Buffered(iter.take(n).collect::<Vec<_>>().into_iter().rev()),
            (false, false) => {
                RankWalk::Buffered(iter.rev().take(n).collect::<Vec<_>>().into_iter().rev())
            }
        })
    }

    pub(super) fn range_by_lex<'a>(&'a self, lex: LexRange<'a>, rev: bool) -> LexRangeIter<'a> {
        let none = LexRangeIter(LexWalk::Tree {
            range: None,
            lex,
            rev,
        });
        let (Some(first), Some(last)) = (self.order.first(), self.order.last()) else {
            return none;
        };
        if lex.is_empty() || !lex.above_min(&last.member) || !lex.below_max(&first.member) {
            return none;
        }
        let start: Option<&Node> = if first.score == last.score {
            let score = first.score;
            let edge = |b: LexBound<'a>| match b {
                LexBound::NegInf => Included((score, Edge::Before)),
                LexBound::PosInf => Excluded((score, Edge::After)),
                LexBound::Included(m) => Included((score, at(m))),
                LexBound::Excluded(m) => Excluded((score, at(m))),
            };
            if rev {
                let hi = edge(lex.max);
                self.order
                    .range::<dyn Probe, _>((Unbounded, as_probe(&hi)))
                    .next_back()
            } else {
                let lo = edge(lex.min);
                self.order
                    .range::<dyn Probe, _>((as_probe(&lo), Unbounded))
                    .next()
            }
        } else if rev {
            self.order.iter().rev().find(|n| lex.below_max(&n.member))
        } else {
            self.order.iter().find(|n| lex.above_min(&n.member))
        };
        let Some(start) = start else {
            return none;
        };
        let probe: &dyn Probe = start;
        let range = if rev {
            self.order
                .range::<dyn Probe, _>((Unbounded, Included(probe)))
        } else {
            self.order
                .range::<dyn Probe, _>((Included(probe), Unbounded))
        };
        LexRangeIter(LexWalk::Tree {
            range: Some(range),
            lex,
            rev,
        })
    }

    pub(super) fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = *self.scores.get(member)?;
        let probe = (Score(score), at(member));
        Some(
            self.order
                .range::<dyn Probe, _>((Unbounded, Excluded(&probe as &dyn Probe)))
                .count(),
        )
    }
}

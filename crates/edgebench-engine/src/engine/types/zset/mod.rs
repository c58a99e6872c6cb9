//! The sorted set: members ordered by (score, member bytes), as Redis orders them.
//!
//! Two encodings, as Redis has. A small set (at most 128 members of at most 64 bytes, Redis's
//! `zset-max-listpack-*` defaults) is one sorted `Vec` of (score, member), searched linearly
//! by member and by binary search by (score, member), like Redis's listpack: a new one-member
//! set costs two allocations instead of a map, a tree node and a shared member, and at this
//! size a scan beats hashing. A set that outgrows it converts, for good, to the large form.
//!
//! The large form keeps two structures in step: a hash table of members for O(1)
//! ZSCORE/membership, and a B-tree of (score, member) nodes for ordered ranges. Each member's
//! score and bytes are allocated once, in one block both point at with a thin pointer, so
//! adding a member costs one allocation, and a member costs about what Redis's skip list
//! spends on one (see `large`). The tree is searched with borrowed probes (the private
//! `Probe` trait), so no lookup allocates, and each node holds its score, so a search reads
//! a member's bytes (a cache miss each, on a large set) only among members of equal score.
//!
//! Ranks (ZRANK, ZRANGE by index) walk the large form's tree, O(rank); Redis's skip list
//! makes them O(log n). A rank range is walked from whichever end of the set is nearer, with
//! no search, so `ZRANGE k -10 -1` costs what `ZRANGE k 0 9` costs; a rank in the middle of a
//! large set
//! costs a walk (tens of ns per member skipped on a tree built by random inserts). The
//! workloads read from the ends (`ZRANGE k 0 n`, score ranges), so this is not what
//! dominates, and it keeps the structure std-only.
//!
//! The encoding shows in replies in two places, which [`ZSet::is_large`] lets the
//! commands reproduce: ZSCAN returns a listpack whole, in order, with cursor 0; and lex ranges
//! over members of different scores follow the listpack's linear walk (see
//! [`ZSet::range_by_lex`]).
//!
//! Invariants: a small set is sorted by (score, member) with no member twice; a large set's
//! `scores` and `order` hold the same members with the same scores; a set is large exactly
//! when Redis's would be a skip list; no score is NaN; -0.0 is stored as 0.0 (Redis compares
//! them equal).
//!
//! This file holds the set's API, the small form and the range iterators; the large form
//! (the hash table, the member blocks, the tree, its nodes and probes) is `large`, and the unit tests `tests`.

use std::cmp::Ordering;
use std::collections::btree_set;
use std::ops::Bound::{self, Excluded, Included, Unbounded};

pub mod algebra;
mod large;
#[cfg(test)]
mod tests;

use large::{at, pair, Edge, Large, Node, Probe};

/// Members a listpack-encoded sorted set holds at most (Redis's `zset-max-listpack-entries`).
pub const LISTPACK_MAX_ENTRIES: usize = 128;
/// The longest member a listpack-encoded sorted set holds (`zset-max-listpack-value`).
pub const LISTPACK_MAX_VALUE: usize = 64;

/// ZADD's rules for a member already scored `old`: Redis's `zsetAdd` update branch.
fn update_outcome(old: f64, score: f64, flags: AddFlags) -> AddOutcome {
    if flags.nx {
        return AddOutcome::Skipped;
    }
    let new = if flags.incr { old + score } else { score };
    if new.is_nan() {
        return AddOutcome::NaN;
    }
    if (flags.lt && new >= old) || (flags.gt && new <= old) {
        return AddOutcome::Skipped;
    }
    if canonical(new) == old {
        AddOutcome::Unchanged(new)
    } else {
        AddOutcome::Updated(new)
    }
}

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

/// Redis compares -0 and 0 equal; the set stores 0.
fn canonical(score: f64) -> f64 {
    if score == 0.0 {
        0.0
    } else {
        score
    }
}

/// ZADD's conditions (`NX`, `XX`, `GT`, `LT`) and `INCR`, for [`ZSet::add`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AddFlags {
    /// Only add new members.
    pub nx: bool,
    /// Only update existing members.
    pub xx: bool,
    /// Only update when the new score is greater.
    pub gt: bool,
    /// Only update when the new score is less.
    pub lt: bool,
    /// Add the score to the current one (0 for a new member).
    pub incr: bool,
}

/// What [`ZSet::add`] did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AddOutcome {
    /// A new member, with this score.
    Added(f64),
    /// The member's score changed to this.
    Updated(f64),
    /// The member already had this score.
    Unchanged(f64),
    /// A condition (NX, XX, GT, LT) skipped the member.
    Skipped,
    /// INCR would have made the score NaN (`inf + -inf`); nothing changed.
    NaN,
}

/// One end of a lexicographic range (ZRANGEBYLEX's `-`, `+`, `[m`, `(m`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LexBound<'a> {
    /// `-`: before every member.
    NegInf,
    /// `+`: after every member.
    PosInf,
    /// `[m`: `m` included.
    Included(&'a [u8]),
    /// `(m`: `m` excluded.
    Excluded(&'a [u8]),
}

/// A lexicographic range, `min` to `max`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LexRange<'a> {
    /// The low end.
    pub min: LexBound<'a>,
    /// The high end.
    pub max: LexBound<'a>,
}

impl LexRange<'_> {
    /// Whether `member` is at or after `min` (Redis's `zslLexValueGteMin`).
    pub fn above_min(&self, member: &[u8]) -> bool {
        match self.min {
            LexBound::NegInf => true,
            LexBound::PosInf => false,
            LexBound::Included(m) => member >= m,
            LexBound::Excluded(m) => member > m,
        }
    }

    /// Whether `member` is at or before `max` (`zslLexValueLteMax`).
    pub fn below_max(&self, member: &[u8]) -> bool {
        match self.max {
            LexBound::NegInf => false,
            LexBound::PosInf => true,
            LexBound::Included(m) => member <= m,
            LexBound::Excluded(m) => member < m,
        }
    }

    /// Whether no member can be in the range (min after max, or equal ends not both
    /// included; `-` and `+` count as excluded ends, as in Redis).
    pub fn is_empty(&self) -> bool {
        fn point<'a>(b: LexBound<'a>) -> (Edge<'a>, bool) {
            match b {
                LexBound::NegInf => (Edge::Before, true),
                LexBound::PosInf => (Edge::After, true),
                LexBound::Included(m) => (at(m), false),
                LexBound::Excluded(m) => (at(m), true),
            }
        }
        let (lo, lo_ex) = point(self.min);
        let (hi, hi_ex) = point(self.max);
        match lo.cmp(&hi) {
            Ordering::Greater => true,
            Ordering::Equal => lo_ex || hi_ex,
            Ordering::Less => false,
        }
    }
}

/// A member of a small (listpack-like) set: its score, its bytes and their [`tag`].
#[derive(Debug, Clone)]
struct SmallEntry {
    score: f64,
    tag: u64,
    member: Box<[u8]>,
}

impl SmallEntry {
    fn new(score: f64, member: Box<[u8]>) -> SmallEntry {
        SmallEntry {
            score,
            tag: tag(&member),
            member,
        }
    }
}

/// A member's first and last 8 bytes and length, folded: equal members have equal tags, so a
/// search by member compares the tags it holds inline and reads the member's allocation
/// (a cache miss each) only where they match. Both ends, as members often share a prefix
/// (`user:1`, `user:2`) or a suffix.
fn tag(member: &[u8]) -> u64 {
    let word = |bytes: &[u8]| {
        let mut buf = [0u8; 8];
        buf[..bytes.len()].copy_from_slice(bytes);
        u64::from_le_bytes(buf)
    };
    let head = word(&member[..member.len().min(8)]);
    let tail = word(&member[member.len().saturating_sub(8)..]);
    head ^ tail.rotate_left(29) ^ member.len() as u64
}

/// Room for one more member in a small set, which grows by half (from one member) and never
/// past [`LISTPACK_MAX_ENTRIES`]: `Vec`'s doubling starts at 4 entries (128 bytes) where most
/// small sets hold one member (core data keeps a set per reading name), and ends at 128
/// slots for 65 members.
fn reserve_small(v: &mut Vec<SmallEntry>) {
    if v.len() == v.capacity() {
        let room = LISTPACK_MAX_ENTRIES.saturating_sub(v.len());
        v.reserve_exact((v.len() / 2).clamp(1, room.max(1)));
    }
}

/// The index of `member` in a small set.
fn small_find(v: &[SmallEntry], member: &[u8]) -> Option<usize> {
    let t = tag(member);
    v.iter().position(|e| e.tag == t && *e.member == *member)
}

fn small_pair(e: &SmallEntry) -> (&[u8], f64) {
    (&e.member, e.score)
}

/// Where `(score, member)` goes in a small set's (score, member) order.
fn small_slot(v: &[SmallEntry], score: f64, member: &[u8]) -> usize {
    v.partition_point(|e| (Score(e.score), &*e.member) < (Score(score), member))
}

/// The indexes of a small set's members with scores within the bounds (empty when the
/// bounds are inverted), as [`Large::score_nodes`] finds them in the tree.
fn small_score_span(v: &[SmallEntry], min: Bound<f64>, max: Bound<f64>) -> (usize, usize) {
    let lo = match min {
        Included(x) => v.partition_point(|e| Score(e.score) < Score(canonical(x))),
        Excluded(x) => v.partition_point(|e| Score(e.score) <= Score(canonical(x))),
        Unbounded => 0,
    };
    let hi = match max {
        Included(x) => v.partition_point(|e| Score(e.score) <= Score(canonical(x))),
        Excluded(x) => v.partition_point(|e| Score(e.score) < Score(canonical(x))),
        Unbounded => v.len(),
    };
    (lo, hi.max(lo))
}

/// The ascending ranks `lo..=hi` holding the members of ranks `start..=stop` (`rev`:
/// counted from the highest), or None when there are none (see [`ZSet::range_by_rank`]).
fn rank_span(len: usize, start: usize, stop: usize, rev: bool) -> Option<(usize, usize)> {
    if start > stop || start >= len {
        return None;
    }
    let stop = stop.min(len - 1);
    Some(if rev {
        (len - 1 - stop, len - 1 - start)
    } else {
        (start, stop)
    })
}

/// The indexes `lo..hi` of a small set's members in a lex range: Redis's listpack walk (see
/// [`ZSet::range_by_lex`]), which always covers consecutive members.
fn small_lex_span(v: &[SmallEntry], lex: &LexRange<'_>, rev: bool) -> (usize, usize) {
    let (Some(first), Some(last)) = (v.first(), v.last()) else {
        return (0, 0);
    };
    if lex.is_empty() || !lex.above_min(&last.member) || !lex.below_max(&first.member) {
        return (0, 0);
    }
    if rev {
        let Some(hi) = v.iter().rposition(|e| lex.below_max(&e.member)) else {
            return (0, 0);
        };
        // The walk checks `min` from the start member itself.
        let lo = v[..=hi]
            .iter()
            .rposition(|e| !lex.above_min(&e.member))
            .map_or(0, |i| i + 1);
        (lo, hi + 1)
    } else {
        let Some(lo) = v.iter().position(|e| lex.above_min(&e.member)) else {
            return (0, 0);
        };
        let hi = v[lo..]
            .iter()
            .position(|e| !lex.below_max(&e.member))
            .map_or(v.len(), |i| lo + i);
        (lo, hi)
    }
}

/// Members in (score, member) order, from either form of the set.
enum Walk<'a> {
    Small(std::slice::Iter<'a, SmallEntry>),
    Tree(btree_set::Iter<'a, Node>),
    TreeRange(btree_set::Range<'a, Node>),
}

impl<'a> Iterator for Walk<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Walk::Small(it) => it.next().map(small_pair),
            Walk::Tree(it) => it.next().map(pair),
            Walk::TreeRange(it) => it.next().map(pair),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Walk::Small(it) => it.size_hint(),
            Walk::Tree(it) => it.size_hint(),
            Walk::TreeRange(it) => it.size_hint(),
        }
    }
}

impl DoubleEndedIterator for Walk<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        match self {
            Walk::Small(it) => it.next_back().map(small_pair),
            Walk::Tree(it) => it.next_back().map(pair),
            Walk::TreeRange(it) => it.next_back().map(pair),
        }
    }
}

/// Members of a rank range, in the order asked for (see [`ZSet::range_by_rank`]).
pub struct RankRange<'a>(RankWalk<'a>);

enum RankWalk<'a> {
    /// A small set's members, walked in the reply's direction.
    Small {
        iter: std::slice::Iter<'a, SmallEntry>,
        back: bool,
    },
    /// Walking the tree in the reply's direction.
    Lazy {
        iter: btree_set::Iter<'a, Node>,
        left: usize,
        back: bool,
    },
    /// Walked against the reply's direction (from the nearer end), kept to be replayed.
    Buffered(std::iter::Rev<std::vec::IntoIter<&'a Node>>),
}

impl<'a> RankRange<'a> {
    /// The next tree node; None at the end, and always for a small set (whose members
    /// [`Iterator::next`] yields itself).
    fn next_node(&mut self) -> Option<&'a Node> {
        match &mut self.0 {
            RankWalk::Small { .. } => None,
            RankWalk::Lazy { iter, left, back } => {
                if *left == 0 {
                    return None;
                }
                *left -= 1;
                if *back {
                    iter.next_back()
                } else {
                    iter.next()
                }
            }
            RankWalk::Buffered(nodes) => nodes.next(),
        }
    }
}

impl<'a> Iterator for RankRange<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<Self::Item> {
        if let RankWalk::Small { iter, back } = &mut self.0 {
            let e = if *back { iter.next_back() } else { iter.next() };
            return e.map(small_pair);
        }
        self.next_node().map(pair)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = match &self.0 {
            RankWalk::Small { iter, .. } => iter.len(),
            RankWalk::Lazy { left, .. } => *left,
            RankWalk::Buffered(nodes) => nodes.len(),
        };
        (n, Some(n))
    }
}

/// Members of a lex range, in the order asked for (see [`ZSet::range_by_lex`]).
pub struct LexRangeIter<'a>(LexWalk<'a>);

enum LexWalk<'a> {
    /// A small set's members in the range (found up front), in the reply's direction.
    Small {
        iter: std::slice::Iter<'a, SmallEntry>,
        rev: bool,
    },
    /// Walking the tree from the first member, while members are in the range.
    Tree {
        range: Option<btree_set::Range<'a, Node>>,
        lex: LexRange<'a>,
        rev: bool,
    },
}

impl<'a> LexRangeIter<'a> {
    /// The next tree node; None at the end, and always for a small set.
    fn next_node(&mut self) -> Option<&'a Node> {
        let LexWalk::Tree { range, lex, rev } = &mut self.0 else {
            return None;
        };
        let iter = range.as_mut()?;
        let node = if *rev { iter.next_back() } else { iter.next() };
        let in_range = node.filter(|n| {
            if *rev {
                lex.above_min(n.bytes())
            } else {
                lex.below_max(n.bytes())
            }
        });
        if in_range.is_none() {
            *range = None;
        }
        in_range
    }
}

impl<'a> Iterator for LexRangeIter<'a> {
    type Item = (&'a [u8], f64);

    fn next(&mut self) -> Option<Self::Item> {
        if let LexWalk::Small { iter, rev } = &mut self.0 {
            let e = if *rev { iter.next_back() } else { iter.next() };
            return e.map(small_pair);
        }
        self.next_node().map(pair)
    }
}

/// A sorted set.
#[derive(Debug, Clone)]
pub struct ZSet(Repr);

/// The two encodings (see the module doc).
#[derive(Debug, Clone)]
enum Repr {
    /// At most [`LISTPACK_MAX_ENTRIES`] members of at most [`LISTPACK_MAX_VALUE`] bytes, in
    /// (score, member) order: Redis's listpack.
    Small(Vec<SmallEntry>),
    /// Redis's skip list: a hash table and a tree. Boxed, so that a set costs a `Vec`'s 24
    /// bytes (most sets are small: core data keeps one per reading name).
    Large(Box<Large>),
}

impl Default for ZSet {
    fn default() -> Self {
        ZSet(Repr::Small(Vec::new()))
    }
}

impl ZSet {
    /// Members.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Small(v) => v.len(),
            Repr::Large(l) => l.len(),
        }
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether Redis would have converted this set from a listpack to a skip list (it grew
    /// past [`LISTPACK_MAX_ENTRIES`] members or took a member longer than
    /// [`LISTPACK_MAX_VALUE`]; Redis never converts back, nor does this set).
    pub fn is_large(&self) -> bool {
        matches!(self.0, Repr::Large(_))
    }

    /// The score of `member`.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        match &self.0 {
            Repr::Small(v) => small_find(v, member).map(|i| v[i].score),
            Repr::Large(l) => l.score(member),
        }
    }

    /// Adds `member` or changes its score; true if it was new. `score` must not be NaN.
    pub fn insert(&mut self, member: &[u8], score: f64) -> bool {
        matches!(
            self.add(member, score, AddFlags::default()),
            AddOutcome::Added(_)
        )
    }

    /// What [`ZSet::add`] would do, without doing it (so a ZADD that changes nothing need
    /// not count as a write).
    pub fn preview_add(&self, member: &[u8], score: f64, flags: AddFlags) -> AddOutcome {
        match self.score(member) {
            Some(old) => update_outcome(old, score, flags),
            None if flags.xx => AddOutcome::Skipped,
            None => AddOutcome::Added(score),
        }
    }

    /// ZADD for one member, with its conditions: Redis's `zsetAdd`. `score` must not be NaN
    /// (the increment, with `incr`).
    pub fn add(&mut self, member: &[u8], score: f64, flags: AddFlags) -> AddOutcome {
        debug_assert!(!score.is_nan());
        let v = match &mut self.0 {
            Repr::Large(l) => return l.add(member, score, flags),
            Repr::Small(v) => v,
        };
        match small_find(v, member) {
            Some(i) => {
                let outcome = update_outcome(v[i].score, score, flags);
                let AddOutcome::Updated(new) = outcome else {
                    return outcome;
                };
                let stored = canonical(new);
                let mut entry = v.remove(i);
                entry.score = stored;
                let slot = small_slot(v, stored, &entry.member);
                v.insert(slot, entry);
                outcome
            }
            None if flags.xx => AddOutcome::Skipped,
            None if v.len() >= LISTPACK_MAX_ENTRIES || member.len() > LISTPACK_MAX_VALUE => {
                // Redis converts for good once the set outgrows a listpack.
                let mut large = Large::of(std::mem::take(v));
                let outcome = large.add(member, score, flags);
                self.0 = Repr::Large(Box::new(large));
                outcome
            }
            None => {
                let stored = canonical(score);
                let slot = small_slot(v, stored, member);
                reserve_small(v);
                v.insert(slot, SmallEntry::new(stored, member.into()));
                // The reply shows the score as given (ZINCRBY of -0 on a new member is "-0").
                AddOutcome::Added(score)
            }
        }
    }

    /// Removes `member`; true if it was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match &mut self.0 {
            Repr::Small(v) => match small_find(v, member) {
                Some(i) => {
                    v.remove(i);
                    true
                }
                None => false,
            },
            Repr::Large(l) => l.remove(member),
        }
    }

    /// Removes and returns the lowest member (`max`: the highest).
    pub fn pop(&mut self, max: bool) -> Option<(Vec<u8>, f64)> {
        match &mut self.0 {
            Repr::Small(v) => {
                let SmallEntry { score, member, .. } = if max {
                    v.pop()?
                } else if v.is_empty() {
                    return None;
                } else {
                    v.remove(0)
                };
                Some((member.into_vec(), score))
            }
            Repr::Large(l) => l.pop(max),
        }
    }

    /// Members in order, lowest first (`.rev()` for highest first).
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&[u8], f64)> + '_ {
        match &self.0 {
            Repr::Small(v) => Walk::Small(v.iter()),
            Repr::Large(l) => Walk::Tree(l.order.iter()),
        }
    }

    /// Members with scores within the bounds, in order.
    pub fn range_by_score(
        &self,
        min: Bound<f64>,
        max: Bound<f64>,
    ) -> impl DoubleEndedIterator<Item = (&[u8], f64)> + '_ {
        match &self.0 {
            Repr::Small(v) => {
                let (lo, hi) = small_score_span(v, min, max);
                Walk::Small(v[lo..hi].iter())
            }
            Repr::Large(l) => match l.score_nodes(min, max) {
                Some(range) => Walk::TreeRange(range),
                None => Walk::Small([].iter()),
            },
        }
    }

    /// Removes the members with scores within the bounds (ZREMRANGEBYSCORE); returns how
    /// many.
    pub fn remove_range_by_score(&mut self, min: Bound<f64>, max: Bound<f64>) -> usize {
        match &mut self.0 {
            Repr::Small(v) => {
                let (lo, hi) = small_score_span(v, min, max);
                v.drain(lo..hi).len()
            }
            Repr::Large(l) => {
                let doomed: Vec<Node> = l
                    .score_nodes(min, max)
                    .into_iter()
                    .flatten()
                    .cloned()
                    .collect();
                l.remove_nodes(doomed)
            }
        }
    }

    /// Removes the members of ranks `start..=stop` (ZREMRANGEBYRANK; see
    /// [`ZSet::range_by_rank`]); returns how many.
    pub fn remove_range_by_rank(&mut self, start: usize, stop: usize) -> usize {
        match &mut self.0 {
            Repr::Small(v) => match rank_span(v.len(), start, stop, false) {
                Some((lo, hi)) => v.drain(lo..=hi).len(),
                None => 0,
            },
            Repr::Large(l) => {
                let mut it = l.range_by_rank(start, stop, false);
                let doomed: Vec<Node> = std::iter::from_fn(|| it.next_node()).cloned().collect();
                l.remove_nodes(doomed)
            }
        }
    }

    /// Removes the members of a lex range (ZREMRANGEBYLEX; see [`ZSet::range_by_lex`]);
    /// returns how many.
    pub fn remove_range_by_lex(&mut self, lex: LexRange<'_>) -> usize {
        match &mut self.0 {
            Repr::Small(v) => {
                let (lo, hi) = small_lex_span(v, &lex, false);
                v.drain(lo..hi).len()
            }
            Repr::Large(l) => {
                let mut it = l.range_by_lex(lex, false);
                let doomed: Vec<Node> = std::iter::from_fn(|| it.next_node()).cloned().collect();
                l.remove_nodes(doomed)
            }
        }
    }

    /// Members of ranks `start..=stop` (0-based, lowest score first; `rev`: ranks counted from
    /// the highest, which come first). Empty when `start > stop` or `start >= len`; `stop`
    /// is clamped to the last rank. On a large set the walk starts from whichever end of
    /// the set is nearer and never searches the tree.
    pub fn range_by_rank(&self, start: usize, stop: usize, rev: bool) -> RankRange<'_> {
        match &self.0 {
            Repr::Small(v) => {
                let iter = match rank_span(v.len(), start, stop, rev) {
                    Some((lo, hi)) => v[lo..=hi].iter(),
                    None => [].iter(),
                };
                RankRange(RankWalk::Small { iter, back: rev })
            }
            Repr::Large(l) => l.range_by_rank(start, stop, rev),
        }
    }

    /// Members within a lex range, in order (`rev`: from the highest). Lex ranges assume every
    /// member has the same score, as Redis documents; then the start is found in O(log n).
    /// Otherwise this reproduces Redis's listpack walk: from the first member (in set order)
    /// at or above `min`, while members are at or below `max` (reversed: from the last at or
    /// below `max`, while at or above `min`), and nothing unless the last member is at or
    /// above `min` and the first at or below `max`.
    pub fn range_by_lex<'a>(&'a self, lex: LexRange<'a>, rev: bool) -> LexRangeIter<'a> {
        match &self.0 {
            Repr::Small(v) => {
                let (lo, hi) = small_lex_span(v, &lex, rev);
                LexRangeIter(LexWalk::Small {
                    iter: v[lo..hi].iter(),
                    rev,
                })
            }
            Repr::Large(l) => l.range_by_lex(lex, rev),
        }
    }

    /// The 0-based rank of `member`, lowest score first.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        match &self.0 {
            Repr::Small(v) => small_find(v, member),
            Repr::Large(l) => l.rank(member),
        }
    }
}

fn as_probe<'b, 'p>(b: &'b Bound<(Score, Edge<'p>)>) -> Bound<&'b (dyn Probe + 'b)> {
    match b {
        Included(p) => Included(p as &dyn Probe),
        Excluded(p) => Excluded(p as &dyn Probe),
        Unbounded => Unbounded,
    }
}

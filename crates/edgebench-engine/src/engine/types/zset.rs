//! The sorted set: members ordered by (score, member bytes), as Redis orders them.
//!
//! Two encodings, as Redis has. A small set (at most 128 members of at most 64 bytes, Redis's
//! `zset-max-listpack-*` defaults) is one sorted `Vec` of (score, member), searched linearly
//! by member and by binary search by (score, member), like Redis's listpack: a new one-member
//! set costs two allocations instead of a map, a tree node and a shared member, and at this
//! size a scan beats hashing. A set that outgrows it converts, for good, to the large form.
//!
//! The large form keeps two structures in step: a hash map member → score for O(1)
//! ZSCORE/membership, and a B-tree of (score, member) nodes for ordered ranges. Each member's
//! bytes are allocated once and shared by both (an `Arc<[u8]>`), so adding a member costs one
//! allocation. The tree is searched with borrowed probes (the private `Probe` trait), so no
//! lookup allocates, and each node caches its member's first 8 bytes, so most comparisons
//! during a search never read the member's allocation (on a large set each such read is a
//! cache miss).
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

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::{btree_set, BTreeSet, HashMap};
use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::sync::Arc;

use crate::engine::keyspace::Hasher;

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

/// A member's bytes, shared by the hash map and the tree.
type Member = Arc<[u8]>;

/// A tree node. `prefix` caches the member's first 24 bytes so that most comparisons made
/// while searching the tree never read the member's allocation (a cache miss each). 24, not
/// 8: members are often ids that share a long head (the 24 hex digits of an ObjectId made in
/// the same second share the first 18), and with an 8-byte cache every comparison among them
/// missed the cache on both members.
#[derive(Debug, Clone)]
struct Node {
    score: Score,
    prefix: Prefix,
    member: Member,
}

/// A member's first 24 bytes as three big-endian words (compared in order, as the bytes are).
type Prefix = [u64; 3];

impl Node {
    fn new(score: f64, member: Member) -> Node {
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
fn prefix(member: &[u8]) -> Prefix {
    let mut buf = [0u8; 24];
    let n = member.len().min(24);
    buf[..n].copy_from_slice(&member[..n]);
    let word = |i: usize| u64::from_be_bytes(buf[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
    [word(0), word(1), word(2)]
}

/// A position in the (score, member) order: a member (with its prefix), or the edges before
/// and after every member of a score (so a score bound needs no made-up member).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Edge<'a> {
    Before,
    At(Prefix, &'a [u8]),
    After,
}

/// The edge of a member.
fn at(member: &[u8]) -> Edge<'_> {
    Edge::At(prefix(member), member)
}

/// What the tree is searched with: its own nodes, or a borrowed (score, edge) pair. The
/// `Borrow<dyn Probe>` impl below lets `BTreeSet<Node>` look up a pair without building a
/// node (that would allocate the member).
trait Probe {
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

fn pair(n: &Node) -> (&[u8], f64) {
    (&n.member, n.score.0)
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
                lex.above_min(&n.member)
            } else {
                lex.below_max(&n.member)
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
    /// Redis's skip list: a hash map and a tree.
    Large(Large),
}

impl Default for ZSet {
    fn default() -> Self {
        ZSet(Repr::Small(Vec::new()))
    }
}

/// The large form: a member → score map and a (score, member) tree, kept in step.
#[derive(Debug, Clone, Default)]
struct Large {
    scores: HashMap<Member, f64, Hasher>,
    order: BTreeSet<Node>,
}

impl Large {
    /// The large form of a small set's members (already in order).
    fn of(small: Vec<SmallEntry>) -> Large {
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

    fn add(&mut self, member: &[u8], score: f64, flags: AddFlags) -> AddOutcome {
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

    fn remove(&mut self, member: &[u8]) -> bool {
        match self.scores.remove(member) {
            Some(score) => {
                let removed = self.order.remove(&(Score(score), at(member)) as &dyn Probe);
                debug_assert!(removed, "zset member missing from the tree");
                true
            }
            None => false,
        }
    }

    fn pop(&mut self, max: bool) -> Option<(Vec<u8>, f64)> {
        let node = if max {
            self.order.pop_last()?
        } else {
            self.order.pop_first()?
        };
        self.scores.remove(&node.member[..]);
        Some((node.member.to_vec(), node.score.0))
    }

    /// The nodes with scores within the bounds, or None when there are none for sure.
    fn score_nodes(&self, min: Bound<f64>, max: Bound<f64>) -> Option<btree_set::Range<'_, Node>> {
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
    fn remove_nodes(&mut self, doomed: Vec<Node>) -> usize {
        for node in &doomed {
            self.order.remove(node);
            self.scores.remove(&node.member[..]);
        }
        doomed.len()
    }

    fn range_by_rank(&self, start: usize, stop: usize, rev: bool) -> RankRange<'_> {
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

    fn range_by_lex<'a>(&'a self, lex: LexRange<'a>, rev: bool) -> LexRangeIter<'a> {
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

    fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = *self.scores.get(member)?;
        let probe = (Score(score), at(member));
        Some(
            self.order
                .range::<dyn Probe, _>((Unbounded, Excluded(&probe as &dyn Probe)))
                .count(),
        )
    }
}

impl ZSet {
    /// Members.
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Small(v) => v.len(),
            Repr::Large(l) => l.scores.len(),
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
            Repr::Large(l) => l.scores.get(member).copied(),
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
                self.0 = Repr::Large(large);
                outcome
            }
            None => {
                let stored = canonical(score);
                let slot = small_slot(v, stored, member);
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

#[cfg(test)]
mod tests {
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
        // Members sharing prefixes and suffixes, of lengths around the 8- and 24-byte caches, and
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
}

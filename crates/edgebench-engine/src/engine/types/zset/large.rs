//! The large form of a sorted set, Redis's skip list in std parts: a hash table of members for
//! O(1) ZSCORE/membership, and a B-tree of (score, member) nodes for ordered ranges, kept in
//! step.
//!
//! Each member lives once, in one heap block of its own that holds its score and its bytes
//! ([`Member`]), and both structures point at it with a thin 8-byte pointer: a hash bucket is
//! that pointer alone, and a tree node is the score and the pointer (16 bytes). The score is
//! in the node too so that a search compares scores without reading the block (a cache miss
//! on a large set); only members of equal score read their bytes, as Redis's skip list reads
//! its sds. This is what a member costs, with ObjectId members (24 bytes; 1,000,000 members,
//! `scripts/reading-memory.sh`): a 36-byte block, 8 bytes of hash bucket at the table's load
//! factor, and a tree node in a leaf about half full; an `Arc<[u8]>` shared by a `HashMap`
//! (24-byte buckets) and 48-byte nodes caching a 24-byte prefix took twice that.
//!
//! The tree is searched with borrowed probes (the private `Probe` trait), so no lookup
//! allocates.
//!
//! Invariants: `members` and `order` hold the same blocks, each once, and a node's score is
//! its block's; `Large` owns every block and frees each when its member leaves (or the set
//! drops). No [`Member`] handle outlives its block: handles live only in those two structures
//! and in short-lived copies made under `&mut Large` that are gone before it returns.

use std::alloc::{self, Layout};
use std::cmp::Ordering;
use std::collections::{btree_set, BTreeSet};
use std::fmt;
use std::hash::BuildHasher;
use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::ptr::NonNull;

use hashbrown::HashTable;

use super::{
    as_probe, canonical, rank_span, update_outcome, AddFlags, AddOutcome, LexBound, LexRange,
    LexRangeIter, LexWalk, RankRange, RankWalk, Score, SmallEntry,
};
use crate::engine::types::collections::Hasher;

/// A member's block: `[score: f64][len: u32][bytes]`, 8-aligned. A handle (copyable, not
/// owning): the [`Large`] holding it frees the block, once (see the module's invariants).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct Member(NonNull<u8>);

/// Bytes before a member's bytes: its score and its length.
const HEADER: usize = 12;

impl Member {
    fn layout(len: usize) -> Layout {
        Layout::from_size_align(HEADER + len, 8).expect("a member's size fits a Layout")
    }

    /// A new block with `bytes` and `score`, to be freed with [`Member::free`].
    fn new(bytes: &[u8], score: f64) -> Member {
        // Redis's proto-max-bulk-len caps a member at 512 MB.
        let len = u32::try_from(bytes.len()).expect("a member is shorter than 4 GB");
        let layout = Member::layout(bytes.len());
        // SAFETY: the layout is not zero-sized (HEADER > 0).
        let raw = unsafe { alloc::alloc(layout) };
        let Some(block) = NonNull::new(raw) else {
            alloc::handle_alloc_error(layout)
        };
        // SAFETY: the block is HEADER + len bytes, 8-aligned: the score at 0, the length at
        // 8 and the bytes at HEADER are in bounds and aligned.
        unsafe {
            block.as_ptr().cast::<f64>().write(score);
            block.as_ptr().add(8).cast::<u32>().write(len);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), block.as_ptr().add(HEADER), bytes.len());
        }
        Member(block)
    }

    fn len(&self) -> usize {
        // SAFETY: a live block (the module's invariants) holds its length at 8.
        unsafe { self.0.as_ptr().add(8).cast::<u32>().read() as usize }
    }

    /// The member's bytes, for as long as the handle is borrowed (the block lives at least
    /// as long as the structure the handle is borrowed from).
    pub(super) fn bytes(&self) -> &[u8] {
        // SAFETY: a live block holds `len` bytes at HEADER, written once and never changed.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().add(HEADER), self.len()) }
    }

    fn score(&self) -> f64 {
        // SAFETY: a live block holds its score at 0.
        unsafe { self.0.as_ptr().cast::<f64>().read() }
    }

    /// Changes the score; the caller holds the set mutably, so nothing reads it meanwhile.
    fn set_score(&mut self, score: f64) {
        // SAFETY: a live block; no reference to its score exists (`bytes` borrows only the
        // bytes, and scores are read by value).
        unsafe { self.0.as_ptr().cast::<f64>().write(score) }
    }

    /// Frees the block.
    ///
    /// # Safety
    /// The block is live and no handle to it is used again.
    unsafe fn free(self) {
        let layout = Member::layout(self.len());
        alloc::dealloc(self.0.as_ptr(), layout)
    }
}

/// A tree node: the member's score (compared without reading the block) and its block.
#[derive(Clone, Copy)]
pub(super) struct Node {
    pub(super) score: Score,
    member: Member,
}

impl Node {
    pub(super) fn bytes(&self) -> &[u8] {
        self.member.bytes()
    }
}

/// A position in the (score, member) order: a member, or the edges before and after every
/// member of a score (so a score bound needs no made-up member).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Edge<'a> {
    Before,
    At(&'a [u8]),
    After,
}

impl Edge<'_> {
    /// Where the edge falls among the three kinds: before, at, after a member.
    fn kind(&self) -> u8 {
        match self {
            Edge::Before => 0,
            Edge::At(_) => 1,
            Edge::After => 2,
        }
    }
}

impl PartialOrd for Edge<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Edge<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Edge::At(a), Edge::At(b)) => member_cmp(a, b),
            _ => self.kind().cmp(&other.kind()),
        }
    }
}

/// The order of member bytes, as Redis's `memcmp` then length, compared eight bytes at a
/// time in line. A search among members of one score (every member of the all-readings
/// index has score 0) compares dozens of them per insert, and members that were made
/// together (ObjectIds of one second) share their first 16 bytes: a call to `memcmp` per
/// comparison cost more than the comparison.
pub(super) fn member_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    let word =
        |s: &[u8], i: usize| u64::from_be_bytes(s[i..i + 8].try_into().expect("eight bytes"));
    let mut i = 0;
    while i + 8 <= n {
        let (x, y) = (word(a, i), word(b, i));
        if x != y {
            return x.cmp(&y);
        }
        i += 8;
    }
    while i < n {
        if a[i] != b[i] {
            return a[i].cmp(&b[i]);
        }
        i += 1;
    }
    a.len().cmp(&b.len())
}

/// The edge of a member.
pub(super) fn at(member: &[u8]) -> Edge<'_> {
    Edge::At(member)
}

/// What the tree is searched with: its own nodes, or a borrowed (score, edge) pair. The
/// `Borrow<dyn Probe>` impl below lets `BTreeSet<Node>` look up a pair without building a
/// node (that would allocate the member). The edge is asked for only when scores tie, as
/// a node's edge reads its block.
pub(super) trait Probe {
    fn score(&self) -> Score;
    fn edge(&self) -> Edge<'_>;
}

impl Probe for Node {
    fn score(&self) -> Score {
        self.score
    }

    fn edge(&self) -> Edge<'_> {
        Edge::At(self.bytes())
    }
}

impl Probe for (Score, Edge<'_>) {
    fn score(&self) -> Score {
        self.0
    }

    fn edge(&self) -> Edge<'_> {
        self.1
    }
}

impl<'a> std::borrow::Borrow<dyn Probe + 'a> for Node {
    fn borrow(&self) -> &(dyn Probe + 'a) {
        self
    }
}

impl PartialEq for dyn Probe + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
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
        self.score()
            .cmp(&other.score())
            .then_with(|| self.edge().cmp(&other.edge()))
    }
}

// Node's own order must agree with the probes' (the tree relies on it).
impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
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
        (self as &dyn Probe).cmp(other as &dyn Probe)
    }
}

pub(super) fn pair(n: &Node) -> (&[u8], f64) {
    (n.bytes(), n.score.0)
}

/// The large form: a hash table of members and a (score, member) tree, kept in step (see the
/// module doc).
#[derive(Default)]
pub(super) struct Large {
    members: HashTable<Member>,
    hasher: Hasher,
    pub(super) order: BTreeSet<Node>,
}

// SAFETY: a `Large` owns its blocks as a `Box` would (no other value points at them), reads
// them through `&self` and writes them only through `&mut self`.
unsafe impl Send for Large {}
// SAFETY: as above; `&Large` only reads.
unsafe impl Sync for Large {}

impl Drop for Large {
    fn drop(&mut self) {
        self.order.clear();
        for m in self.members.drain() {
            // SAFETY: each block is in the table once, and the tree that also held it is
            // empty.
            unsafe { m.free() }
        }
    }
}

impl Clone for Large {
    fn clone(&self) -> Self {
        Large::from_sorted(self.order.len(), self.order.iter().map(pair))
    }
}

impl fmt::Debug for Large {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.order.iter().map(pair)).finish()
    }
}

impl Large {
    /// A large set of `len` (member, score) pairs, already in (score, member) order, none
    /// twice; scores already canonical.
    fn from_sorted<'a>(len: usize, pairs: impl Iterator<Item = (&'a [u8], f64)>) -> Large {
        let mut large = Large {
            members: HashTable::with_capacity(len + 1),
            hasher: Hasher::default(),
            order: BTreeSet::new(),
        };
        // Built from sorted nodes, the tree packs its leaves full.
        let mut nodes = Vec::with_capacity(len);
        for (bytes, score) in pairs {
            let member = Member::new(bytes, score);
            let hasher = &large.hasher;
            large
                .members
                .insert_unique(hasher.hash_one(bytes), member, |m| {
                    hasher.hash_one(m.bytes())
                });
            nodes.push(Node {
                score: Score(score),
                member,
            });
        }
        large.order = nodes.into_iter().collect();
        large
    }

    /// The large form of a small set's members (already in order).
    pub(super) fn of(small: Vec<SmallEntry>) -> Large {
        Large::from_sorted(small.len(), small.iter().map(|e| (&*e.member, e.score)))
    }

    /// Members.
    pub(super) fn len(&self) -> usize {
        self.members.len()
    }

    fn find(&self, member: &[u8]) -> Option<Member> {
        let hash = self.hasher.hash_one(member);
        self.members.find(hash, |m| m.bytes() == member).copied()
    }

    /// The score of `member`.
    pub(super) fn score(&self, member: &[u8]) -> Option<f64> {
        self.find(member).map(|m| m.score())
    }

    pub(super) fn add(&mut self, member: &[u8], score: f64, flags: AddFlags) -> AddOutcome {
        let hasher = &self.hasher;
        let hash = hasher.hash_one(member);
        match self.members.find_mut(hash, |m| m.bytes() == member) {
            Some(m) => {
                let old = m.score();
                let outcome = update_outcome(old, score, flags);
                let AddOutcome::Updated(new) = outcome else {
                    return outcome;
                };
                let stored = canonical(new);
                let removed = self.order.remove(&(Score(old), at(member)) as &dyn Probe);
                debug_assert!(removed, "zset member missing from the tree");
                m.set_score(stored);
                self.order.insert(Node {
                    score: Score(stored),
                    member: *m,
                });
                outcome
            }
            None if flags.xx => AddOutcome::Skipped,
            None => {
                let stored = canonical(score);
                let m = Member::new(member, stored);
                self.members
                    .insert_unique(hash, m, |m| hasher.hash_one(m.bytes()));
                self.order.insert(Node {
                    score: Score(stored),
                    member: m,
                });
                // The reply shows the score as given (ZINCRBY of -0 on a new member is "-0").
                AddOutcome::Added(score)
            }
        }
    }

    /// Takes `m` out of the hash table and frees it; it must be out of the tree already.
    fn forget(&mut self, m: Member) {
        let hash = self.hasher.hash_one(m.bytes());
        match self.members.find_entry(hash, |x| *x == m) {
            Ok(entry) => {
                entry.remove();
                // SAFETY: the block was in the table once and is out of the tree; the
                // caller's copy of the handle is its last.
                unsafe { m.free() }
            }
            Err(_) => debug_assert!(false, "zset member missing from the hash table"),
        }
    }

    pub(super) fn remove(&mut self, member: &[u8]) -> bool {
        let Some(m) = self.find(member) else {
            return false;
        };
        let removed = self
            .order
            .remove(&(Score(m.score()), at(member)) as &dyn Probe);
        debug_assert!(removed, "zset member missing from the tree");
        self.forget(m);
        true
    }

    pub(super) fn pop(&mut self, max: bool) -> Option<(Vec<u8>, f64)> {
        let node = if max {
            self.order.pop_last()?
        } else {
            self.order.pop_first()?
        };
        let popped = (node.bytes().to_vec(), node.score.0);
        self.forget(node.member);
        Some(popped)
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

    /// Removes nodes copied out of the tree (a copy is a handle, not a second block).
    pub(super) fn remove_nodes(&mut self, doomed: Vec<Node>) -> usize {
        for node in &doomed {
            let removed = self.order.remove(node);
            debug_assert!(removed, "zset member missing from the tree");
            self.forget(node.member);
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
        if lex.is_empty() || !lex.above_min(last.bytes()) || !lex.below_max(first.bytes()) {
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
            self.order.iter().rev().find(|n| lex.below_max(n.bytes()))
        } else {
            self.order.iter().find(|n| lex.above_min(n.bytes()))
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
        let score = self.score(member)?;
        let probe = (Score(score), at(member));
        Some(
            self.order
                .range::<dyn Probe, _>((Unbounded, Excluded(&probe as &dyn Probe)))
                .count(),
        )
    }
}

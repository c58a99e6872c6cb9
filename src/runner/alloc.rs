//! A counting global allocator: the B/op and allocs/op of Go's `-benchmem`.
//!
//! The binary (and any test binary that wants the figures) installs it with
//! `#[global_allocator] static A: CountingAlloc = CountingAlloc::system();`, or around another
//! allocator with [`CountingAlloc::new`] (the binary wraps mimalloc). Where it is not
//! installed the counters stay at zero and the runner reports 0 B/op.
//!
//! Each thread counts into a stripe of its own (see [`STRIPES`]), so a server allocating on
//! every core does not bounce one cache line between them; `edgebench serve` counts too, since
//! its `maxmemory` reads the live heap. Counting can still be switched off
//! ([`set_counting`]).
//!
//! The counters are process-wide statics because a global allocator can only reach statics;
//! they count every thread, as Go's `runtime.MemStats` does. What a benchmark round
//! allocates is the difference of two [`snapshot`]s. Relaxed atomics suffice: the runner reads
//! them on the thread that allocated, before and after the round.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Counter stripes: each thread counts into one (its own, up to this many threads), so
/// threads allocating at once do not bounce one cache line between cores; readers sum them.
const STRIPES: usize = 16;

/// One stripe's counters, alone on its cache line.
#[repr(align(128))]
struct Stripe {
    allocs: AtomicU64,
    bytes: AtomicU64,
    /// Bytes given back (deallocations, and the old size of each reallocation): the sum of
    /// `bytes − freed` over the stripes is the live heap.
    freed: AtomicU64,
}

#[allow(clippy::declare_interior_mutable_const)]
const STRIPE: Stripe = Stripe {
    allocs: AtomicU64::new(0),
    bytes: AtomicU64::new(0),
    freed: AtomicU64::new(0),
};

static STRIPES_: [Stripe; STRIPES] = [STRIPE; STRIPES];
/// Hands each thread its stripe, round robin.
static NEXT_STRIPE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's stripe, `usize::MAX` until its first allocation.
    static MY_STRIPE: Cell<usize> = const { Cell::new(usize::MAX) };
}

static COUNTING: AtomicBool = AtomicBool::new(true);
/// Whether counting was ever switched off: the live heap is then unknown for good.
static STOPPED: AtomicBool = AtomicBool::new(false);

/// Turns counting on (the default) or off for the whole process. Once off, [`live_bytes`]
/// answers `None` from then on (what was freed while not counting cannot be told apart).
pub fn set_counting(on: bool) {
    if !on {
        STOPPED.store(true, Ordering::Relaxed);
    }
    COUNTING.store(on, Ordering::Relaxed);
}

/// This thread's stripe (a thread being torn down, whose slot is gone, shares stripe 0).
#[inline]
fn stripe() -> &'static Stripe {
    let i = MY_STRIPE
        .try_with(|s| {
            let mut i = s.get();
            if i == usize::MAX {
                i = NEXT_STRIPE.fetch_add(1, Ordering::Relaxed) % STRIPES;
                s.set(i);
            }
            i
        })
        .unwrap_or(0);
    &STRIPES_[i]
}

#[inline]
fn count(bytes: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        let s = stripe();
        s.allocs.fetch_add(1, Ordering::Relaxed);
        s.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

#[inline]
fn count_freed(bytes: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        stripe().freed.fetch_add(bytes as u64, Ordering::Relaxed);
    }
}

/// The bytes allocated and not yet freed, process-wide: the heap redis-server reports as
/// `used_memory`, for the in-process engine (edgebench's own allocations, a few MB of
/// histograms and buffers, included) and `edgebench serve` (its `maxmemory`). `None` where
/// this allocator is not installed or counting was ever switched off.
pub fn live_bytes() -> Option<u64> {
    if STOPPED.load(Ordering::Relaxed) {
        return None;
    }
    // Allocations first, then frees: a free counted between the two only lowers the
    // figure, and the saturation keeps a race from wrapping.
    let allocated: u64 = STRIPES_
        .iter()
        .map(|s| s.bytes.load(Ordering::Relaxed))
        .sum();
    let freed: u64 = STRIPES_
        .iter()
        .map(|s| s.freed.load(Ordering::Relaxed))
        .sum();
    (allocated > 0).then(|| allocated.saturating_sub(freed))
}

/// An allocator (the system's by default), counting allocations and allocated bytes.
pub struct CountingAlloc<A = System> {
    inner: A,
}

impl CountingAlloc<System> {
    /// Counting around the system allocator.
    pub const fn system() -> Self {
        CountingAlloc { inner: System }
    }
}

impl<A> CountingAlloc<A> {
    /// Counting around `inner`.
    pub const fn new(inner: A) -> Self {
        CountingAlloc { inner }
    }
}

// SAFETY: every method forwards to `inner` with the caller's arguments unchanged; the only
// addition is counting, which does not allocate.
unsafe impl<A: GlobalAlloc> GlobalAlloc for CountingAlloc<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        self.inner.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        self.inner.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count_freed(layout.size());
        self.inner.dealloc(ptr, layout)
    }

    /// Go counts a growing append as a new allocation of the new size; so do we (and the old
    /// size as freed, for the live heap).
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        count_freed(layout.size());
        self.inner.realloc(ptr, layout, new_size)
    }
}

/// Allocation totals since the process started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AllocSnapshot {
    /// Number of allocations (including reallocations).
    pub allocs: u64,
    /// Bytes requested.
    pub bytes: u64,
}

impl AllocSnapshot {
    /// What was allocated between `before` and this snapshot.
    pub fn since(self, before: AllocSnapshot) -> AllocSnapshot {
        AllocSnapshot {
            allocs: self.allocs - before.allocs,
            bytes: self.bytes - before.bytes,
        }
    }
}

/// The totals now.
pub fn snapshot() -> AllocSnapshot {
    AllocSnapshot {
        allocs: STRIPES_
            .iter()
            .map(|s| s.allocs.load(Ordering::Relaxed))
            .sum(),
        bytes: STRIPES_
            .iter()
            .map(|s| s.bytes.load(Ordering::Relaxed))
            .sum(),
    }
}

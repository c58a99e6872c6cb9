//! A counting global allocator: the B/op and allocs/op of Go's `-benchmem`.
//!
//! The binary (and any test binary that wants the figures) installs it with
//! `#[global_allocator] static A: CountingAlloc = CountingAlloc;`. Where it is not installed
//! the counters stay at zero and the runner reports 0 B/op.
//!
//! The counters are process-wide statics because a global allocator can only reach statics;
//! they count every thread, as Go's `runtime.MemStats` does. What a benchmark round
//! allocates is the difference of two [`snapshot`]s. Relaxed atomics suffice: the runner reads
//! them on the thread that allocated, before and after the round.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

static ALLOCS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);

/// The system allocator, counting allocations and allocated bytes.
pub struct CountingAlloc;

// SAFETY: every method forwards to `System` with the caller's arguments unchanged; the only
// addition is counting, which does not allocate.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(layout.size() as u64, Ordering::Relaxed);
        System.alloc_zeroed(layout)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    /// Go counts a growing append as a new allocation of the new size; so do we.
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(new_size as u64, Ordering::Relaxed);
        System.realloc(ptr, layout, new_size)
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

/// The totals now.
pub fn snapshot() -> AllocSnapshot {
    AllocSnapshot {
        allocs: ALLOCS.load(Ordering::Relaxed),
        bytes: BYTES.load(Ordering::Relaxed),
    }
}

//! The generators every thread shares: the load phase's insert counter ([`Counter`]), the run
//! phase's insert counter that tracks which inserts have finished ([`AcknowledgedCounter`]),
//! and the `sequential` request distribution ([`Sequential`]).
//!
//! Each number is handed out once across all threads (an atomic fetch-and-add), as YCSB's
//! `AtomicLong`s do.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// YCSB's `CounterGenerator`: `start`, `start + 1`, … across all threads sharing it (clones
/// share one count).
#[derive(Debug, Clone)]
pub struct Counter {
    next: Arc<AtomicU64>,
}

impl Counter {
    /// A counter whose first number is `start`.
    pub fn new(start: u64) -> Self {
        Counter {
            next: Arc::new(AtomicU64::new(start)),
        }
    }

    /// The next number (`getAndIncrement`).
    #[inline]
    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The last number handed out, or `start - 1` before the first (YCSB's `lastValue()`;
    /// with `start` 0 that is -1 in YCSB, and 0 here).
    pub fn last_value(&self) -> u64 {
        self.next.load(Ordering::Relaxed).saturating_sub(1)
    }
}

/// How many inserts may be handed out and not yet acknowledged at once: YCSB's
/// `AcknowledgedCounterGenerator.WINDOW_SIZE`, 2^20.
pub const ACKNOWLEDGE_WINDOW: usize = 1 << 20;

/// YCSB's `AcknowledgedCounterGenerator`: the run phase's insert counter. [`Self::next`] hands
/// out record numbers as [`Counter`] does; an inserting thread calls [`Self::acknowledge`]
/// when its insert is done, and [`Self::last_value`] is the end of the contiguous run of
/// acknowledged numbers, so readers (`latest`, and every distribution's retry in
/// `nextKeynum`) never choose a record whose insert has not finished.
///
/// As YCSB: a window of [`ACKNOWLEDGE_WINDOW`] flags, one per pending number modulo the
/// window; an acknowledgement raises its flag, then whoever gets the scan lock advances the
/// limit over the raised flags that follow it, lowering them. A thread that finds the lock
/// taken leaves its flag for the holder. Unlike YCSB, the holder looks again after letting
/// the lock go, so an acknowledgement that raced with its scan is never left behind until
/// the next insert.
#[derive(Debug)]
pub struct AcknowledgedCounter {
    next: AtomicU64,
    /// `last_value() + 1`: every number below it has been acknowledged.
    acknowledged_below: AtomicU64,
    window: Box<[AtomicBool]>,
    /// The scan lock (YCSB's `ReentrantLock.tryLock`). Sequentially consistent, with the
    /// flags: a thread that raises a flag and then fails to take the lock is seen by the
    /// holder's look after unlocking.
    scanning: AtomicBool,
}

impl AcknowledgedCounter {
    /// A counter whose first number is `start`; [`Self::last_value`] is `start - 1` until
    /// `start` is acknowledged (CoreWorkload starts it at `recordcount`: the loaded records
    /// count as acknowledged).
    pub fn new(start: u64) -> Self {
        AcknowledgedCounter {
            next: AtomicU64::new(start),
            acknowledged_below: AtomicU64::new(start),
            window: (0..ACKNOWLEDGE_WINDOW)
                .map(|_| AtomicBool::new(false))
                .collect(),
            scanning: AtomicBool::new(false),
        }
    }

    /// The next record number to insert.
    #[inline]
    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// The highest acknowledged number with every number before it acknowledged (YCSB's
    /// `lastValue()`). Before anything is acknowledged it is `start - 1`; with `start` 0
    /// YCSB says -1 and this says 0, so callers starting at 0 use
    /// [`Self::acknowledged_below`].
    #[inline]
    pub fn last_value(&self) -> u64 {
        self.acknowledged_below().saturating_sub(1)
    }

    /// `last_value() + 1` without YCSB's -1: every number below it is acknowledged.
    #[inline]
    pub fn acknowledged_below(&self) -> u64 {
        self.acknowledged_below.load(Ordering::Acquire)
    }

    /// Marks `value`'s insert as done.
    ///
    /// # Panics
    /// If `value`'s flag is still raised: [`ACKNOWLEDGE_WINDOW`] numbers handed out since one
    /// that was never acknowledged (YCSB throws "Too many unacknowledged insertion keys").
    pub fn acknowledge(&self, value: u64) {
        let slot = &self.window[Self::slot(value)];
        assert!(
            !slot.swap(true, Ordering::SeqCst),
            "too many unacknowledged insert keys: {value} shares its window slot with a pending one"
        );
        while self
            .scanning
            .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            let mut below = self.acknowledged_below.load(Ordering::Relaxed);
            // At most once around the window, as YCSB's loop.
            for _ in 0..ACKNOWLEDGE_WINDOW {
                let flag = &self.window[Self::slot(below)];
                if !flag.load(Ordering::SeqCst) {
                    break;
                }
                flag.store(false, Ordering::SeqCst);
                below += 1;
            }
            self.acknowledged_below.store(below, Ordering::Release);
            self.scanning.store(false, Ordering::SeqCst);
            if !self.window[Self::slot(below)].load(Ordering::SeqCst) {
                return;
            }
        }
    }

    #[inline]
    fn slot(value: u64) -> usize {
        value as usize & (ACKNOWLEDGE_WINDOW - 1)
    }
}

/// YCSB's `SequentialGenerator` (the `sequential` request distribution): `countstart`,
/// `countstart + 1`, … `countend`, then around again, one sequence shared by every thread
/// holding a clone of its counter.
#[derive(Debug, Clone)]
pub struct Sequential {
    counter: Arc<AtomicU64>,
    countstart: u64,
    items: u64,
}

impl Sequential {
    /// The sequence `countstart..=countend` over a shared `counter`, which YCSB starts at 0
    /// (the draw is `countstart + counter % items`).
    ///
    /// # Panics
    /// If `countstart > countend`.
    pub fn new(counter: Arc<AtomicU64>, countstart: u64, countend: u64) -> Self {
        assert!(
            countstart <= countend,
            "sequential bounds {countstart}..={countend} are reversed"
        );
        Sequential {
            counter,
            countstart,
            items: countend - countstart + 1,
        }
    }

    /// The next number of the sequence.
    #[inline]
    pub fn next(&self) -> u64 {
        self.countstart + self.counter.fetch_add(1, Ordering::Relaxed) % self.items
    }
}

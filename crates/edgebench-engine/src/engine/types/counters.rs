//! Counters that many threads bump and few read (INFO's command counts): each thread adds to
//! a stripe of its own, and a read sums the stripes.
//!
//! Why: one `AtomicU64` bumped by every command on every worker thread moves its cache line
//! between cores on each command; with two such counters per command that was a measurable
//! share of a pipelined GET on the RESP server. A stripe per thread (threads take stripes in
//! turn) keeps each thread's additions in its own cache lines. Reads (INFO, CONFIG RESETSTAT)
//! are rare and pay for the sum.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Stripes per counter set: more than the worker threads of most machines this runs on;
/// threads beyond it share stripes, which stays correct.
const STRIPES: usize = 8;
/// `AtomicU64`s per cache line: stripes are padded apart by one line.
const LINE: usize = 8;

/// `n` counters, striped by thread.
#[derive(Debug)]
pub struct Counters {
    /// Stripe `s` holds counter `i` at `s * stride + i`.
    stride: usize,
    cells: Box<[AtomicU64]>,
}

impl Counters {
    /// `n` counters at zero.
    pub fn new(n: usize) -> Counters {
        let stride = n.next_multiple_of(LINE) + LINE;
        Counters {
            stride,
            cells: (0..STRIPES * stride).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// How many counters.
    pub fn len(&self) -> usize {
        self.stride - LINE
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `by` to counter `i` (ignored past the end).
    pub fn add(&self, i: usize, by: u64) {
        if i < self.len() {
            self.cells[stripe() * self.stride + i].fetch_add(by, Ordering::Relaxed);
        }
    }

    /// Counter `i`: the sum of its stripes (0 past the end).
    pub fn get(&self, i: usize) -> u64 {
        if i >= self.len() {
            return 0;
        }
        (0..STRIPES)
            .map(|s| self.cells[s * self.stride + i].load(Ordering::Relaxed))
            .sum()
    }

    /// Sets every counter to zero.
    pub fn reset(&self) {
        for c in self.cells.iter() {
            c.store(0, Ordering::Relaxed);
        }
    }
}

/// One counter, striped by thread.
#[derive(Debug)]
pub struct Counter(Counters);

impl Default for Counter {
    fn default() -> Self {
        Counter(Counters::new(1))
    }
}

impl Counter {
    /// Adds one.
    pub fn incr(&self) {
        self.0.add(0, 1);
    }

    /// The count.
    pub fn get(&self) -> u64 {
        self.0.get(0)
    }

    /// Sets the count to zero.
    pub fn reset(&self) {
        self.0.reset();
    }
}

/// This thread's stripe, handed out in turn as threads first count.
fn stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static STRIPE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    STRIPE.with(|s| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Additions from many threads all count, whichever stripes they land in.
    #[test]
    fn sums_every_threads_additions() {
        let c = std::sync::Arc::new(Counters::new(3));
        let threads: Vec<_> = (0..20)
            .map(|t| {
                let c = c.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        c.add(t % 3, 1);
                    }
                    c.add(99, 1);
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(
            [c.get(0), c.get(1), c.get(2), c.get(3)],
            [7000, 7000, 6000, 0]
        );
        c.reset();
        assert_eq!(c.get(0), 0);
    }
}

//! The operation mix: YCSB's `DiscreteGenerator`.

use super::next_f64;
use crate::kv::rng::Rng;

/// Picks one of a few values, each with its weight's share of the total, as YCSB's
/// `DiscreteGenerator` (CoreWorkload's operation chooser: READ, UPDATE, INSERT, SCAN,
/// READMODIFYWRITE with their proportions). The draw walks the values in the order they were
/// added, subtracting each share from one uniform number, as YCSB does, so the same uniform
/// number picks the same value.
#[derive(Debug, Clone)]
pub struct Discrete<T: Copy> {
    weights: Vec<f64>,
    /// `weight / sum of weights`, in the order added (YCSB divides at each draw; the sum and
    /// the quotients are the same numbers computed once).
    shares: Vec<(f64, T)>,
}

impl<T: Copy> Default for Discrete<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> Discrete<T> {
    /// A chooser with no values yet.
    pub fn new() -> Self {
        Discrete {
            weights: Vec::new(),
            shares: Vec::new(),
        }
    }

    /// Adds `value`, chosen with `weight`'s share of all weights (CoreWorkload adds only
    /// proportions above 0).
    pub fn add(&mut self, weight: f64, value: T) {
        self.weights.push(weight);
        let values = self.shares.iter().map(|&(_, v)| v).chain([value]);
        let sum: f64 = self.weights.iter().sum();
        self.shares = self.weights.iter().map(|w| w / sum).zip(values).collect();
    }

    /// Whether no value has been added (then [`Discrete::next`] has nothing to pick).
    pub fn is_empty(&self) -> bool {
        self.shares.is_empty()
    }

    /// The next value.
    ///
    /// # Panics
    /// If no value was added (YCSB fails the same way).
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> T {
        let mut u = next_f64(rng);
        for &(share, value) in &self.shares {
            if u < share {
                return value;
            }
            u -= share;
        }
        // Reached only when rounding leaves the shares' sum a hair below u (YCSB throws an
        // AssertionError there), or with no values at all.
        self.shares.last().expect("Discrete::next with no values").1
    }
}

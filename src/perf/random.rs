//! `java.util.Random`, bit-exact: every random choice perf makes (key numbers, fake
//! Northwind values, PBM member sets) comes from one of these, seeded from the configuration, so
//! an operation seeded like PadoGrid's (`randomSeed`, default 1) picks the same numbers and a
//! run's data is reproducible.
//!
//! Invariant: the sequence of every method equals the JDK's for the same seed (pinned against
//! values printed by a JDK in the tests).

/// `java.util.Random`: the 48-bit linear congruential generator of the JDK
/// (`Random.java`: multiplier 0x5DEECE66D, addend 0xB, seed scrambled with the multiplier).
#[derive(Debug, Clone)]
pub struct JavaRandom {
    seed: u64,
}

const MULTIPLIER: u64 = 0x5_DEEC_E66D;
const MASK: u64 = (1 << 48) - 1;

impl JavaRandom {
    /// `new Random(seed)`.
    pub fn new(seed: i64) -> Self {
        JavaRandom {
            seed: (seed as u64 ^ MULTIPLIER) & MASK,
        }
    }

    fn next(&mut self, bits: u32) -> i32 {
        self.seed = (self.seed.wrapping_mul(MULTIPLIER).wrapping_add(0xB)) & MASK;
        (self.seed >> (48 - bits)) as i64 as i32
    }

    /// `nextInt()`.
    pub fn next_int(&mut self) -> i32 {
        self.next(32)
    }

    /// `nextInt(bound)`, uniform in `[0, bound)`. A bound below 1 is treated as 1 (Java
    /// throws; callers validate their bounds in the config).
    pub fn next_int_bound(&mut self, bound: i32) -> i32 {
        let bound = bound.max(1);
        let mut r = self.next(31);
        let m = bound - 1;
        if bound & m == 0 {
            return ((i64::from(bound) * i64::from(r)) >> 31) as i32;
        }
        let mut u = r;
        loop {
            r = u % bound;
            if u.wrapping_sub(r).wrapping_add(m) >= 0 {
                return r;
            }
            u = self.next(31);
        }
    }

    /// `nextLong()`.
    pub fn next_long(&mut self) -> i64 {
        (i64::from(self.next(32)) << 32).wrapping_add(i64::from(self.next(32)))
    }

    /// `nextDouble()`, uniform in `[0, 1)`.
    pub fn next_double(&mut self) -> f64 {
        let hi = i64::from(self.next(26)) << 27;
        let lo = i64::from(self.next(27));
        (hi + lo) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// `nextBoolean()`.
    pub fn next_boolean(&mut self) -> bool {
        self.next(1) != 0
    }

    /// One element of `items` (non-empty).
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.next_int_bound(items.len() as i32) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_random_matches_the_jdk() {
        // new Random(1).nextInt(100) x5 and nextInt() from a JDK.
        let mut r = JavaRandom::new(1);
        let v: Vec<i32> = (0..5).map(|_| r.next_int_bound(100)).collect();
        assert_eq!(v, vec![85, 88, 47, 13, 54]);
        let mut r = JavaRandom::new(42);
        assert_eq!(r.next_int(), -1170105035);
        let mut r = JavaRandom::new(0);
        assert_eq!(r.next_long(), -4962768465676381896);
        let mut r = JavaRandom::new(1);
        assert_eq!(r.next_int_bound(16), 11); // power-of-two path
        let mut r = JavaRandom::new(1);
        assert_eq!(r.next_double(), 0.7308781907032909);
    }
}

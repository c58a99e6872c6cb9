//! `edgebench kv`: the I/O-free foundation of a memtier_benchmark-compatible key-value load
//! generator. Everything here is pure: options and their typed configuration, key indexes,
//! values, arbitrary commands and the per-connection request generator. The load engine,
//! the targets and the output sit on top and own all I/O.
//!
//! Data flows one way:
//!
//! ```text
//! argv → reject_unsupported → clap (KvArgs) → KvConfig::from_args → ConnGen per connection
//!      → RequestBuf (argument list, or RESP bytes) → engine
//! ```
//!
//! Invariants:
//! - Every random choice comes from a per-connection [`Rng`] seeded from one `u64`
//!   ([`KvConfig::connection_seed`]), so a run is reproducible from its seed. The key stream
//!   and the value-size stream use separate generators, so changing value sizes never changes
//!   which keys are sent.
//! - The hot path does not allocate: keys are formatted into the caller's buffer, values are
//!   slices of one [`ValueBuffer`] made before the run, and [`RequestBuf`] is reused.
//! - Semantics follow memtier_benchmark's source (`obj_gen.cpp`, `client.cpp`,
//!   `memtier_benchmark.cpp`, `config_types.cpp`, `protocol.cpp`); where edgebench differs,
//!   the item says so and `docs/kv-options.md` lists it.

pub mod cluster;
pub mod command;
pub mod data;
pub mod export;
pub mod keys;
pub mod load;
pub mod options;
pub mod report;

use std::sync::Arc;

pub use command::{ArbitraryCommand, CommandArg, CommandMix, Op, OpMix, RequestBuf};
pub use data::{DataGen, DataSize, ExpiryRange, SizePattern, SizeWeight, ValueBuffer};
pub use keys::{parallel_slice, KeyGen, KeyPattern, KeySpace};
pub use options::{
    reject_unsupported, CommandFlag, CommandFlags, KvArgs, KvConfig, KvConfigError, Protocol,
    Ratio, Requests,
};

/// A small, fast, seedable generator: xoshiro256** (Blackman and Vigna, "Scrambled linear
/// pseudorandom number generators", 2021), its state filled by SplitMix64 as the authors
/// recommend. memtier uses glibc `random_r`; we do not reproduce its exact sequence, only
/// the distributions built on it.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

/// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators",
/// 2014): one step, also used to derive independent seeds from one base seed.
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator whose whole sequence is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng { s }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, n)`, `n > 0`, without modulo bias (Lemire, "Fast random integer
    /// generation in an interval", 2019). memtier uses `rand % n`, whose bias is below
    /// 2^-40 for its key ranges; this is exact.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        let mut low = m as u64;
        if low < n {
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// Uniform in `[lo, hi]` (memtier's `random_range`).
    #[inline]
    pub fn range_inclusive(&mut self, lo: u64, hi: u64) -> u64 {
        debug_assert!(lo <= hi);
        match (hi - lo).checked_add(1) {
            Some(n) => lo + self.below(n),
            None => self.next_u64(),
        }
    }

    /// Uniform in `[0, 1]`, both ends included, like memtier's
    /// `get_random() / (double) get_random_max()` (`obj_gen.cpp`).
    #[inline]
    pub fn unit_closed(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / ((1u64 << 53) - 1) as f64
    }
}

/// What [`ConnGen::next_request`] put into the [`RequestBuf`], for the engine's per-type statistics
/// (memtier's Sets / Gets rows, or one row per `--command`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// `SET key value`, or `SETEX key ttl value` with `--expiry-range` (memtier's
    /// `redis_protocol::write_command_set`).
    Set,
    /// `GET key`.
    Get,
    /// `MGET key…` with this many keys (`--multi-key-get`).
    MultiGet(u32),
    /// The arbitrary command at this index of [`KvConfig::commands`].
    Command(usize),
}

/// Everything one connection needs to produce its requests: its keys, its values and its
/// operation mix. Built by [`KvConfig::conn_gen`]; owned by one connection, never shared.
#[derive(Debug, Clone)]
pub struct ConnGen {
    keys: KeyGen,
    data: DataGen,
    mode: Mode,
}

#[derive(Debug, Clone)]
enum Mode {
    SetGet(OpMix),
    Commands {
        mix: CommandMix,
        commands: Arc<[ArbitraryCommand]>,
    },
}

/// Key stream numbers of the SET/GET mode (memtier's `OBJECT_GENERATOR_KEY_SET_ITER` and
/// `_GET_ITER` keep separate sequential positions, so `S:S` sets and gets walk the range
/// side by side). In `--command` mode, stream `i` belongs to command `i`.
pub const SET_STREAM: usize = 0;
/// See [`SET_STREAM`].
pub const GET_STREAM: usize = 1;

impl ConnGen {
    /// Writes the connection's next request into `out` (cleared first) and says what it is.
    pub fn next_request(&mut self, out: &mut RequestBuf) -> RequestKind {
        out.clear();
        match &mut self.mode {
            Mode::SetGet(mix) => match mix.next_op() {
                Op::Set => {
                    let expiry = self.data.next_expiry();
                    out.push_arg(if expiry.is_some() { b"SETEX" } else { b"SET" });
                    out.begin_arg();
                    let index = self.keys.next_key(SET_STREAM, out.arg_bytes());
                    out.end_arg();
                    if let Some(ttl) = expiry {
                        out.push_u64_arg(u64::from(ttl));
                    }
                    let len = self.data.next_len(index);
                    out.push_arg(self.data.value(len));
                    RequestKind::Set
                }
                Op::Get => {
                    out.push_arg(b"GET");
                    out.begin_arg();
                    self.keys.next_key(GET_STREAM, out.arg_bytes());
                    out.end_arg();
                    RequestKind::Get
                }
                Op::MultiGet(n) => {
                    out.push_arg(b"MGET");
                    for _ in 0..n {
                        out.begin_arg();
                        self.keys.next_key(GET_STREAM, out.arg_bytes());
                        out.end_arg();
                    }
                    RequestKind::MultiGet(n)
                }
            },
            Mode::Commands { mix, commands } => {
                let i = mix.next_command();
                commands[i].render(i, &mut self.keys, &mut self.data, out);
                RequestKind::Command(i)
            }
        }
    }

    /// The connection's key generator (for tests and for the engine's own key checks).
    pub fn keys(&self) -> &KeyGen {
        &self.keys
    }
}

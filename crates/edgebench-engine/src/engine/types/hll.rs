//! HyperLogLog, stored as Redis 7.0 stores it, so that the string a PFADD leaves behind is
//! byte for byte the one redis-server leaves, and a value copied from redis-server (GET, then
//! SET here) counts the same.
//!
//! The layout (Redis's `hyperloglog.c`, described in its header comment): a 16-byte header
//! (`HYLL`, the encoding byte, three zero bytes, the cached cardinality as 8 little-endian
//! bytes whose top bit set means "stale"), then 16384 registers of 6 bits, either *dense*
//! (12288 bytes, register `i` at bit `6 i`, least significant bits first) or *sparse*
//! (run-length opcodes: `00xxxxxx` a run of up to 64 zero registers, `01xxxxxx yyyyyyyy` a
//! run of up to 16384 zero registers, `1vvvvvxx` a run of up to 4 registers of value 1–32).
//! A new HyperLogLog is sparse; it turns dense when a register needs a value above 32 or the
//! string would grow past [`SPARSE_MAX_BYTES`]. An element lands in the register its
//! MurmurHash64A (seed `0xadc83b19`) picks with its low 14 bits, and the register keeps the
//! longest run seen of "zeros then a one" in the other 50 bits. The count is Ertl's improved
//! estimator ("New cardinality estimation algorithms for HyperLogLog sketches", Otmar Ertl,
//! arXiv:1702.01284), as Redis 7.0 computes it, in the same floating-point order.
//!
//! The sparse editing ([`set_register`] on a sparse value) reproduces Redis's in-place
//! algorithm step for step (the split of one opcode into at most three, then the merge of
//! adjacent equal runs over at most five opcodes), because another algorithm would encode the
//! same registers in different bytes. Unlike Redis's C, every read is bounds-checked: a
//! corrupt value (a string someone SET with the `HYLL` magic) gives [`HllError::Corrupt`]
//! or a wrong count, never a panic or an out-of-bounds access.

/// The sparse encoding's size limit: a sparse value that would grow past this many bytes
/// (header included) is turned dense. Redis's `hll-sparse-max-bytes` default; a constant
/// until the engine's CONFIG can carry it.
pub const SPARSE_MAX_BYTES: usize = 3000;

/// Bits of the hash that pick the register.
const P: u32 = 14;
/// Bits of the hash left for the run of zeros.
const Q: usize = 64 - P as usize;
/// How many registers.
pub const REGISTERS: usize = 1 << P;
/// The header's length.
pub const HEADER_LEN: usize = 16;
/// A dense value's exact length: the header and 16384 registers of 6 bits.
pub const DENSE_LEN: usize = HEADER_LEN + (REGISTERS * 6).div_ceil(8);
/// The encoding byte of a dense value.
const DENSE: u8 = 0;
/// The encoding byte of a sparse value.
const SPARSE: u8 = 1;
/// Redis's hash seed for HyperLogLog elements.
const SEED: u64 = 0xadc8_3b19;
/// The largest value a sparse VAL opcode holds.
const VAL_MAX_VALUE: u8 = 32;
/// The longest run a VAL opcode covers.
const VAL_MAX_LEN: usize = 4;
/// The longest run a one-byte ZERO opcode covers.
const ZERO_MAX_LEN: usize = 64;
/// The longest run a two-byte XZERO opcode covers.
const XZERO_MAX_LEN: usize = 16384;
/// 0.5 / ln 2, the estimator's alpha for an unbounded number of registers.
const ALPHA_INF: f64 = 0.721_347_520_444_481_7; // Redis writes 0.721347520444481703680: the same double.

/// Why a string is not a usable HyperLogLog.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HllError {
    /// Not a HyperLogLog at all (too short, no magic, unknown encoding, wrong dense length).
    #[error("WRONGTYPE Key is not a valid HyperLogLog string value.")]
    NotHll,
    /// Has the header, but its sparse opcodes do not cover exactly 16384 registers.
    #[error("INVALIDOBJ Corrupted HLL object detected")]
    Corrupt,
}

/// Checks what Redis checks before it touches a HyperLogLog: the length, the magic, a known
/// encoding, and a dense value's exact length. Sparse opcodes are checked as they are read.
pub fn validate(s: &[u8]) -> Result<(), HllError> {
    let ok = s.len() >= HEADER_LEN
        && s.starts_with(b"HYLL")
        && s[4] <= SPARSE
        && (s[4] != DENSE || s.len() == DENSE_LEN);
    if ok {
        Ok(())
    } else {
        Err(HllError::NotHll)
    }
}

/// A new, empty HyperLogLog: sparse, every register in XZERO runs, the cached count 0.
pub fn new_sparse() -> Vec<u8> {
    let mut s = Vec::with_capacity(HEADER_LEN + 2);
    s.extend_from_slice(b"HYLL");
    s.push(SPARSE);
    s.resize(HEADER_LEN, 0);
    let mut left = REGISTERS;
    while left > 0 {
        let run = left.min(XZERO_MAX_LEN);
        s.extend_from_slice(&xzero_bytes(run));
        left -= run;
    }
    s
}

/// Whether a (validated) value is sparse.
pub fn is_sparse(s: &[u8]) -> bool {
    s[4] == SPARSE
}

/// MurmurHash64A (Austin Appleby's 64-bit MurmurHash2), reading 8-byte words little-endian
/// whatever the machine, as Redis's copy does.
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        let mut k = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// The register an element lands in, and the length of the "zeros then a one" run it
/// brings (1 to 51).
pub fn register_and_run(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, SEED);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    // The bit above the 50 used ends every run, so the count stays at most Q + 1.
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

/// PFADD of one element: whether a register grew (a sparse value may turn dense past
/// `sparse_max` bytes, CONFIG `hll-sparse-max-bytes`).
pub fn add(s: &mut Vec<u8>, element: &[u8], sparse_max: usize) -> Result<bool, HllError> {
    let (index, run) = register_and_run(element);
    set_register(s, index, run, sparse_max)
}

/// Register `index` of a dense value.
pub fn dense_register(s: &[u8], index: usize) -> u8 {
    dense::get(&s[HEADER_LEN..], index)
}

/// Raises register `index` to `value` if it is lower; whether it changed. A sparse value
/// that cannot hold the new value within `sparse_max` bytes (CONFIG `hll-sparse-max-bytes`,
/// [`SPARSE_MAX_BYTES`] by default) turns dense first.
pub fn set_register(
    s: &mut Vec<u8>,
    index: usize,
    value: u8,
    sparse_max: usize,
) -> Result<bool, HllError> {
    if is_sparse(s) {
        sparse::set(s, index, value, sparse_max)
    } else {
        Ok(dense::raise(&mut s[HEADER_LEN..], index, value))
    }
}

/// Turns a sparse value dense (the header, cached count included, is kept); whether it was
/// sparse. `Corrupt` if its opcodes do not cover exactly 16384 registers.
pub fn to_dense(s: &mut Vec<u8>) -> Result<bool, HllError> {
    if !is_sparse(s) {
        return Ok(false);
    }
    let mut dense = vec![0u8; DENSE_LEN];
    dense[..HEADER_LEN].copy_from_slice(&s[..HEADER_LEN]);
    dense[4] = DENSE;
    let regs = &mut dense[HEADER_LEN..];
    let mut idx = 0usize;
    for op in sparse::ops(s) {
        if let sparse::Op::Val { value, len } = op {
            if idx + len > REGISTERS {
                break;
            }
            for i in idx..idx + len {
                dense::put(regs, i, value);
            }
        }
        idx += op.len();
    }
    if idx != REGISTERS {
        return Err(HllError::Corrupt);
    }
    *s = dense;
    Ok(true)
}

/// Raises each of `max`'s registers to the value's (PFMERGE and PFCOUNT of several keys).
pub fn merge_into(max: &mut [u8; REGISTERS], s: &[u8]) -> Result<(), HllError> {
    if !is_sparse(s) {
        let regs = &s[HEADER_LEN..];
        for (i, m) in max.iter_mut().enumerate() {
            *m = (*m).max(dense::get(regs, i));
        }
        return Ok(());
    }
    let mut idx = 0usize;
    for op in sparse::ops(s) {
        if let sparse::Op::Val { value, len } = op {
            if idx + len > REGISTERS {
                break;
            }
            for m in &mut max[idx..idx + len] {
                *m = (*m).max(value);
            }
        }
        idx += op.len();
    }
    if idx == REGISTERS {
        Ok(())
    } else {
        Err(HllError::Corrupt)
    }
}

/// Every register's value (PFDEBUG GETREG), of a dense value.
pub fn registers(s: &[u8]) -> Vec<u8> {
    let regs = &s[HEADER_LEN..];
    (0..REGISTERS).map(|i| dense::get(regs, i)).collect()
}

/// PFDEBUG DECODE's text of a sparse value: `z:len`, `Z:len` and `v:value,len` opcodes.
pub fn decode_sparse(s: &[u8]) -> String {
    let words: Vec<String> = sparse::ops(s)
        .map(|op| match op {
            sparse::Op::Zero(len) => format!("z:{len}"),
            sparse::Op::XZero(len) => format!("Z:{len}"),
            sparse::Op::Val { value, len } => format!("v:{value},{len}"),
        })
        .collect();
    words.join(" ")
}

/// The cached cardinality, if it is not stale.
pub fn cached_count(s: &[u8]) -> Option<u64> {
    let card: [u8; 8] = s[8..16].try_into().ok()?;
    (card[7] & 0x80 == 0).then(|| u64::from_le_bytes(card))
}

/// Stores `count` as the cached cardinality.
pub fn store_count(s: &mut [u8], count: u64) {
    s[8..16].copy_from_slice(&count.to_le_bytes());
}

/// Marks the cached cardinality stale (only its top bit: the other bytes stay, as Redis
/// leaves them, and they are part of the stored value).
pub fn invalidate_cache(s: &mut [u8]) {
    s[15] |= 0x80;
}

/// The cardinality estimate of a value's registers (the cache aside). `Corrupt` for sparse
/// opcodes that do not cover exactly 16384 registers.
pub fn estimate(s: &[u8]) -> Result<u64, HllError> {
    let mut histogram = [0u64; 64];
    if is_sparse(s) {
        let mut idx = 0usize;
        for op in sparse::ops(s) {
            let value = match op {
                sparse::Op::Val { value, .. } => value,
                _ => 0,
            };
            histogram[usize::from(value)] += op.len() as u64;
            idx += op.len();
        }
        if idx != REGISTERS {
            return Err(HllError::Corrupt);
        }
    } else {
        let regs = &s[HEADER_LEN..];
        for i in 0..REGISTERS {
            histogram[usize::from(dense::get(regs, i))] += 1;
        }
    }
    Ok(estimate_histogram(&histogram))
}

/// The cardinality estimate of plain registers, one byte each (PFCOUNT of several keys).
pub fn estimate_registers(max: &[u8; REGISTERS]) -> u64 {
    let mut histogram = [0u64; 64];
    for &r in max {
        histogram[usize::from(r & 63)] += 1;
    }
    estimate_histogram(&histogram)
}

/// Ertl's improved estimator over the histogram of register values (`histogram[v]` =
/// registers holding `v`), in Redis's order of operations so the rounding is the same.
fn estimate_histogram(histogram: &[u64; 64]) -> u64 {
    let m = REGISTERS as f64;
    let mut z = m * tau((m - histogram[Q + 1] as f64) / m);
    for j in (1..=Q).rev() {
        z += histogram[j] as f64;
        z *= 0.5;
    }
    z += m * sigma(histogram[0] as f64 / m);
    let e = ALPHA_INF * m * m / z;
    if !e.is_finite() {
        // Only registers all above 51 (a value someone crafted) get here. Redis's
        // `llroundl` of infinity gives LLONG_MIN on x86-64, which its cast to unsigned
        // turns into 2^63.
        return 1 << 63;
    }
    e.round() as u64
}

/// Ertl's sigma function (the correction for registers still zero).
fn sigma(mut x: f64) -> f64 {
    if x == 1.0 {
        return f64::INFINITY;
    }
    let (mut y, mut z) = (1.0, x);
    loop {
        x *= x;
        let before = z;
        z += x * y;
        y += y;
        if before == z {
            return z;
        }
    }
}

/// Ertl's tau function (the correction for registers at the maximum run).
fn tau(mut x: f64) -> f64 {
    if x == 0.0 || x == 1.0 {
        return 0.0;
    }
    let (mut y, mut z) = (1.0, 1.0 - x);
    loop {
        x = x.sqrt();
        let before = z;
        y *= 0.5;
        let d = 1.0 - x;
        z -= d * d * y;
        if before == z {
            return z / 3.0;
        }
    }
}

/// Register round trips PFSELFTEST runs (Redis runs 1000: these are a diagnostic, and a
/// tenth keeps the command, which holds its thread, well under a second).
const SELF_TEST_REGISTER_CYCLES: usize = 100;

/// Elements PFSELFTEST adds (Redis adds 10 million; the checkpoints up to one million check
/// the same things: the sparse encoding is used while small, sparse and dense agree, and
/// the error stays within six standard errors).
const SELF_TEST_ELEMENTS: u64 = 1_000_000;

/// PFSELFTEST: checks the dense registers and the estimator, as Redis's self-test does,
/// with the random numbers `random` gives. The error is Redis's `TESTFAILED ...` text.
pub fn self_test(random: &mut dyn FnMut() -> u64) -> Result<(), String> {
    let mut regs = vec![0u8; DENSE_LEN - HEADER_LEN];
    let mut expected = vec![0u8; REGISTERS];
    for _ in 0..SELF_TEST_REGISTER_CYCLES {
        for (i, e) in expected.iter_mut().enumerate() {
            *e = (random() & 63) as u8;
            dense::put(&mut regs, i, *e);
        }
        for (i, &e) in expected.iter().enumerate() {
            let got = dense::get(&regs, i);
            if got != e {
                return Err(format!(
                    "TESTFAILED Register {i} should be {e} but is {got}"
                ));
            }
        }
    }
    let mut dense = new_sparse();
    to_dense(&mut dense).map_err(|e| e.to_string())?;
    let mut sparse = new_sparse();
    let relative_error = 1.04 / (REGISTERS as f64).sqrt();
    let seed = random();
    let mut checkpoint = 1u64;
    for j in 1..=SELF_TEST_ELEMENTS {
        let element = (j ^ seed).to_le_bytes();
        add(&mut dense, &element, SPARSE_MAX_BYTES).map_err(|e| e.to_string())?;
        add(&mut sparse, &element, SPARSE_MAX_BYTES).map_err(|e| e.to_string())?;
        if j != checkpoint {
            continue;
        }
        if j < (SPARSE_MAX_BYTES / 2) as u64 && !is_sparse(&sparse) {
            return Err("TESTFAILED sparse encoding not used".into());
        }
        let count = estimate(&dense).map_err(|e| e.to_string())?;
        if estimate(&sparse) != Ok(count) {
            return Err("TESTFAILED dense/sparse disagree".into());
        }
        let max_error = if j == 10 {
            1
        } else {
            (relative_error * 6.0 * checkpoint as f64).ceil() as u64
        };
        let error = checkpoint.abs_diff(count);
        if error > max_error {
            return Err(format!(
                "TESTFAILED Too big error. card:{checkpoint} abserr:{error}"
            ));
        }
        checkpoint *= 10;
    }
    Ok(())
}

/// The two bytes of an XZERO opcode for a run of `len` (1–16384) zero registers.
fn xzero_bytes(len: usize) -> [u8; 2] {
    let l = len - 1;
    [(l >> 8) as u8 | 0x40, (l & 0xff) as u8]
}

/// The dense encoding's 6-bit registers.
mod dense {
    /// Register `i` of the 12288 register bytes.
    pub fn get(regs: &[u8], i: usize) -> u8 {
        let (byte, shift) = (i * 6 / 8, (i * 6) & 7);
        let b0 = u32::from(regs[byte]);
        // The last register fits in its byte; Redis reads the string's terminator there.
        let b1 = u32::from(regs.get(byte + 1).copied().unwrap_or(0));
        (((b0 >> shift) | (b1 << (8 - shift))) & 63) as u8
    }

    /// Sets register `i` to `value` (0–63).
    pub fn put(regs: &mut [u8], i: usize, value: u8) {
        let (byte, shift) = (i * 6 / 8, (i * 6) & 7);
        let v = u32::from(value);
        regs[byte] &= !((63u32 << shift) as u8);
        regs[byte] |= (v << shift) as u8;
        if let Some(b) = regs.get_mut(byte + 1) {
            *b &= !((63u32 >> (8 - shift)) as u8);
            *b |= (v >> (8 - shift)) as u8;
        }
    }

    /// Raises register `i` to `value` if lower; whether it did.
    pub fn raise(regs: &mut [u8], i: usize, value: u8) -> bool {
        if value > get(regs, i) {
            put(regs, i, value);
            true
        } else {
            false
        }
    }
}

/// The sparse encoding's opcodes, read and edited in place.
mod sparse {
    use super::{
        dense, to_dense, xzero_bytes, HllError, HEADER_LEN, VAL_MAX_LEN, VAL_MAX_VALUE,
        ZERO_MAX_LEN,
    };

    /// One opcode.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Op {
        /// A run of 1–64 zero registers (one byte).
        Zero(usize),
        /// A run of 1–16384 zero registers (two bytes).
        XZero(usize),
        /// A run of 1–4 registers of value 1–32 (one byte).
        Val { value: u8, len: usize },
    }

    impl Op {
        /// How many registers it covers.
        pub fn len(self) -> usize {
            match self {
                Op::Zero(len) | Op::XZero(len) | Op::Val { len, .. } => len,
            }
        }

        /// How many bytes it takes.
        fn width(self) -> usize {
            if matches!(self, Op::XZero(_)) {
                2
            } else {
                1
            }
        }
    }

    /// The opcode at byte `p` of `s`. An XZERO cut short by the end of the string reads a
    /// zero second byte (Redis reads the string's terminator there).
    fn op_at(s: &[u8], p: usize) -> Op {
        let b = s[p];
        if b & 0xc0 == 0 {
            Op::Zero(usize::from(b & 0x3f) + 1)
        } else if b & 0xc0 == 0x40 {
            let low = usize::from(s.get(p + 1).copied().unwrap_or(0));
            Op::XZero((usize::from(b & 0x3f) << 8 | low) + 1)
        } else {
            Op::Val {
                value: ((b >> 2) & 0x1f) + 1,
                len: usize::from(b & 3) + 1,
            }
        }
    }

    /// The byte of a VAL opcode.
    fn val_byte(value: u8, len: usize) -> u8 {
        ((value - 1) << 2) | (len - 1) as u8 | 0x80
    }

    /// The opcodes of a sparse value, in order.
    pub fn ops(s: &[u8]) -> impl Iterator<Item = Op> + '_ {
        let mut p = HEADER_LEN;
        std::iter::from_fn(move || {
            (p < s.len()).then(|| {
                let op = op_at(s, p);
                p += op.width();
                op
            })
        })
    }

    /// The opcodes replacing a zero run `first..=last` in which register `index` becomes
    /// `value`: zeros before, the value, zeros after.
    fn split_zero(first: usize, last: usize, index: usize, value: u8) -> Vec<u8> {
        let zeros = |len: usize, out: &mut Vec<u8>| {
            if len > ZERO_MAX_LEN {
                out.extend_from_slice(&xzero_bytes(len));
            } else {
                out.push((len - 1) as u8);
            }
        };
        let mut seq = Vec::with_capacity(5);
        if index != first {
            zeros(index - first, &mut seq);
        }
        seq.push(val_byte(value, 1));
        if index != last {
            zeros(last - index, &mut seq);
        }
        seq
    }

    /// The opcodes replacing a VAL run `first..=last` of `current` in which register
    /// `index` becomes `value`.
    fn split_val(first: usize, last: usize, index: usize, current: u8, value: u8) -> Vec<u8> {
        let mut seq = Vec::with_capacity(3);
        if index != first {
            seq.push(val_byte(current, index - first));
        }
        seq.push(val_byte(value, 1));
        if index != last {
            seq.push(val_byte(current, last - index));
        }
        seq
    }

    /// Raises register `index` of a sparse value to `value` if lower (Redis's
    /// `hllSparseSet`): whether it changed.
    pub fn set(
        s: &mut Vec<u8>,
        index: usize,
        value: u8,
        sparse_max: usize,
    ) -> Result<bool, HllError> {
        if value > VAL_MAX_VALUE {
            return promote(s, index, value);
        }
        // Find the opcode covering `index`, the one before it, and its first register.
        let (mut p, mut first, mut prev) = (HEADER_LEN, 0usize, None);
        let mut op = None;
        while p < s.len() {
            let here = op_at(s, p);
            if index < first + here.len() {
                op = Some(here);
                break;
            }
            prev = Some(p);
            p += here.width();
            first += here.len();
        }
        let Some(op) = op else {
            return Err(HllError::Corrupt);
        };
        match op {
            Op::Val { value: current, .. } if current >= value => return Ok(false),
            Op::Val { len: 1, .. } | Op::Zero(1) => {
                s[p] = val_byte(value, 1);
                merge_runs(s, prev);
                return Ok(true);
            }
            _ => {}
        }
        let last = first + op.len() - 1;
        let seq = match op {
            Op::Val { value: current, .. } => split_val(first, last, index, current, value),
            _ => split_zero(first, last, index, value),
        };
        let new_len = (s.len() + seq.len()).saturating_sub(op.width());
        // Redis: `deltalen && sdslen + deltalen > hll_sparse_max_bytes`.
        if seq.len() != op.width() && new_len > sparse_max {
            return promote(s, index, value);
        }
        let end = (p + op.width()).min(s.len());
        s.splice(p..end, seq);
        // Only a corrupt value (an XZERO cut short at the end) makes these differ; Redis's
        // length arithmetic then drops the tail, and so does this.
        s.truncate(new_len);
        merge_runs(s, prev);
        Ok(true)
    }

    /// Turns the value dense and sets the register there.
    fn promote(s: &mut Vec<u8>, index: usize, value: u8) -> Result<bool, HllError> {
        to_dense(s)?;
        dense::raise(&mut s[HEADER_LEN..], index, value);
        Ok(true)
    }

    /// After an edit: joins adjacent VAL runs of the same value (up to 4 registers), over
    /// at most five opcodes from the one before the edited one, as Redis does (so the bytes
    /// are the same), then marks the cached count stale.
    fn merge_runs(s: &mut Vec<u8>, prev: Option<usize>) {
        let mut p = prev.unwrap_or(HEADER_LEN);
        let mut scans = 5;
        while p < s.len() && scans > 0 {
            scans -= 1;
            let (a, b) = match (op_at(s, p), s.get(p + 1).map(|_| op_at(s, p + 1))) {
                (Op::XZero(_), _) => {
                    p += 2;
                    continue;
                }
                (Op::Zero(_), _) => {
                    p += 1;
                    continue;
                }
                (a, Some(b)) => (a, b),
                (_, None) => break,
            };
            if let (Op::Val { value: v1, len: l1 }, Op::Val { value: v2, len: l2 }) = (a, b) {
                if v1 == v2 && l1 + l2 <= VAL_MAX_LEN {
                    s[p + 1] = val_byte(v1, l1 + l2);
                    s.remove(p);
                    continue;
                }
            }
            p += 1;
        }
        super::invalidate_cache(s);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The register layout round-trips and leaves neighbours alone.
    #[test]
    fn dense_registers_hold_six_bits_each() {
        let mut regs = vec![0u8; DENSE_LEN - HEADER_LEN];
        for i in 0..REGISTERS {
            dense::put(&mut regs, i, (i * 7 % 64) as u8);
        }
        for i in 0..REGISTERS {
            assert_eq!(dense::get(&regs, i), (i * 7 % 64) as u8, "register {i}");
        }
    }

    /// An empty HyperLogLog is Redis's 18 bytes and counts 0.
    #[test]
    fn a_new_value_is_redis_empty_sparse_value() {
        let s = new_sparse();
        assert_eq!(s.len(), 18);
        assert_eq!(&s[..5], b"HYLL\x01");
        assert_eq!(&s[16..], &[0x7f, 0xff]);
        assert_eq!(estimate(&s), Ok(0));
        assert_eq!(cached_count(&s), Some(0));
    }

    /// Sparse and dense encodings of the same adds count the same.
    #[test]
    fn sparse_and_dense_agree() {
        let mut s = new_sparse();
        for i in 0..500u32 {
            add(&mut s, &i.to_le_bytes(), SPARSE_MAX_BYTES).expect("valid");
        }
        assert!(is_sparse(&s));
        let sparse_count = estimate(&s).expect("valid");
        to_dense(&mut s).expect("valid");
        assert_eq!(s.len(), DENSE_LEN);
        assert_eq!(estimate(&s), Ok(sparse_count));
        assert!((480..=520).contains(&sparse_count), "{sparse_count}");
    }

    proptest::proptest! {
        /// Whatever follows a sparse header, every operation returns (an error or a
        /// value) without panicking, and a value it accepts stays a HyperLogLog.
        #[test]
        fn arbitrary_sparse_bytes_never_panic(
            body in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
            elements in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..40),
            raise in proptest::collection::vec((0usize..REGISTERS, 1u8..64), 0..8),
        ) {
            let mut s = new_sparse();
            s.truncate(HEADER_LEN);
            s.extend_from_slice(&body);
            let _ = estimate(&s);
            let _ = merge_into(&mut [0u8; REGISTERS], &s);
            for e in &elements {
                if add(&mut s, &e.to_le_bytes(), SPARSE_MAX_BYTES).is_err() {
                    break;
                }
            }
            for &(index, value) in &raise {
                if set_register(&mut s, index, value, SPARSE_MAX_BYTES).is_err() {
                    break;
                }
            }
            proptest::prop_assert!(validate(&s).is_ok());
            let _ = estimate(&s);
            let _ = to_dense(&mut s);
            let _ = decode_sparse(&s);
        }

        /// The same for a real sparse value with a few bytes changed or cut.
        #[test]
        fn damaged_sparse_values_never_panic(
            damage in proptest::collection::vec((0usize..400, proptest::prelude::any::<u8>()), 1..4),
            cut in 0usize..400,
            elements in proptest::collection::vec(proptest::prelude::any::<u32>(), 0..200),
        ) {
            let mut s = new_sparse();
            for i in 0..150u32 {
                add(&mut s, &i.to_be_bytes(), SPARSE_MAX_BYTES).expect("valid");
            }
            for &(at, byte) in &damage {
                let at = HEADER_LEN + at % (s.len() - HEADER_LEN);
                s[at] = byte;
            }
            s.truncate(HEADER_LEN + cut.max(1));
            let _ = estimate(&s);
            for e in &elements {
                if add(&mut s, &e.to_le_bytes(), SPARSE_MAX_BYTES).is_err() {
                    break;
                }
            }
            proptest::prop_assert!(validate(&s).is_ok());
            let _ = estimate(&s);
            let _ = merge_into(&mut [0u8; REGISTERS], &s);
            let _ = to_dense(&mut s);
        }
    }

    /// Corrupt sparse opcodes are an error, not a panic.
    #[test]
    fn corrupt_sparse_values_are_errors() {
        let mut s = new_sparse();
        s.truncate(17);
        assert_eq!(estimate(&s), Err(HllError::Corrupt));
        let mut empty = new_sparse();
        empty.truncate(HEADER_LEN);
        assert_eq!(
            add(&mut empty, b"a", SPARSE_MAX_BYTES),
            Err(HllError::Corrupt)
        );
        let mut long = new_sparse();
        long.extend_from_slice(&[0x7f, 0xff, 0x80, 0xff]);
        assert_eq!(estimate(&long), Err(HllError::Corrupt));
        let mut regs = [0u8; REGISTERS];
        assert_eq!(merge_into(&mut regs, &long), Err(HllError::Corrupt));
        assert_eq!(to_dense(&mut long), Err(HllError::Corrupt));
    }
}

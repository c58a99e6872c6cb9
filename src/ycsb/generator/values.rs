//! Field values as YCSB's `RandomByteIterator` makes them: each 32-bit random number gives six
//! bytes, each byte a few of its bits plus `' '`.

use crate::kv::rng::Rng;

/// Where each of a group's six bytes takes its bits in the 32-bit draw, and how many: the
/// masks 31, 63 and 95 give bytes in `' '..='?'`, `' '..='_'`, and `' '..='?'` or
/// `'`'..=0x7F` (mask 95 skips bit 5, so that byte never falls in `'@'..='_'`). The table is
/// `RandomByteIterator.fillBytesImpl`'s; a group cut short at a value's end keeps its first
/// bytes.
const SHIFTS: [u32; 6] = [0, 5, 10, 15, 20, 25];
const MASKS: [u32; 6] = [31, 63, 95, 31, 63, 95];

/// Replaces `out` with `len` value bytes drawn as YCSB's `RandomByteIterator` draws them (six
/// bytes per 32-bit number, each `' ' + (bits & mask)` by the table above). One 64-bit draw
/// serves two groups, its high half first.
pub fn fill_random_bytes(rng: &mut Rng, len: usize, out: &mut Vec<u8>) {
    out.clear();
    out.reserve(len);
    let mut pending: Option<u32> = None;
    while out.len() < len {
        let bits = match pending.take() {
            Some(low) => low,
            None => {
                let draw = rng.next_u64();
                pending = Some(draw as u32);
                (draw >> 32) as u32
            }
        };
        let group = (len - out.len()).min(6);
        out.extend(
            SHIFTS
                .iter()
                .zip(MASKS)
                .take(group)
                .map(|(&shift, mask)| b' ' + ((bits >> shift) & mask) as u8),
        );
    }
}

//! LZF decompression (the format of liblzf, which Redis uses for RDB strings), our own code.
//!
//! A stream of runs: a control byte below 32 starts a literal run of `ctrl + 1` bytes; any
//! other is a back-reference of `(ctrl >> 5) + 2` bytes (when the 3-bit length is 7, one more
//! byte adds to it) starting `((ctrl & 31) << 8) + next byte + 1` bytes back in the output.
//! The output length is known beforehand (the RDB stores it): output may not exceed it, and
//! must reach it exactly.
//!
//! [`compress`] makes the same choices as liblzf's compressor as Redis builds it (a 2^16-slot
//! hash of the next three bytes, the "very fast" variant that re-hashes two positions after
//! each match, offsets up to 8 KB, matches up to 264 bytes, literal runs up to 32), so DUMP
//! payloads of compressible strings are byte-equal to redis-server's. One difference is
//! deliberate: its hash table starts empty, where Redis's is left uninitialized on the stack,
//! so Redis may on rare occasions find a match this does not (both outputs decode the same).

/// Why a compressed blob was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt;

/// Decompresses `input` into exactly `expected` bytes. The caller bounds `expected` (it is
/// client input); the output never grows past it.
pub fn decompress(input: &[u8], expected: usize) -> Result<Vec<u8>, Corrupt> {
    // The declared size is client input: reserve what the input can plausibly produce and
    // grow only as output really appears.
    let mut out: Vec<u8> = Vec::with_capacity(expected.min(input.len().saturating_mul(4) + 64));
    let mut i = 0;
    while i < input.len() {
        let ctrl = usize::from(input[i]);
        i += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            let lit = input.get(i..i + run).ok_or(Corrupt)?;
            if out.len() + run > expected {
                return Err(Corrupt);
            }
            out.extend_from_slice(lit);
            i += run;
            continue;
        }
        let mut len = ctrl >> 5;
        if len == 7 {
            len += usize::from(*input.get(i).ok_or(Corrupt)?);
            i += 1;
        }
        let len = len + 2;
        let back = ((ctrl & 0x1f) << 8) + usize::from(*input.get(i).ok_or(Corrupt)?) + 1;
        i += 1;
        if back > out.len() || out.len() + len > expected {
            return Err(Corrupt);
        }
        // Byte by byte: a reference may overlap the bytes it produces (a repeated run).
        let start = out.len() - back;
        for k in 0..len {
            let b = out[start + k];
            out.push(b);
        }
    }
    if out.len() == expected {
        Ok(out)
    } else {
        Err(Corrupt)
    }
}

const HASH_LOG: u32 = 16;
const MAX_OFFSET: usize = 1 << 13;
const MAX_MATCH: usize = (1 << 8) + (1 << 3);
const MAX_LITERALS: usize = 1 << 5;

fn slot(h: u32) -> usize {
    ((h >> (24 - HASH_LOG)).wrapping_sub(h.wrapping_mul(5)) & ((1 << HASH_LOG) - 1)) as usize
}

/// The compressor's hash table: 2^16 slots of input positions (0 = empty, as liblzf stores
/// offsets from the input's start), and the slots one call filled, so the next call clears
/// only those instead of 256 KB (DUMP compresses every string over 20 bytes of a value, one
/// by one).
struct Table {
    slots: Vec<u32>,
    used: Vec<usize>,
}

impl Table {
    fn put(&mut self, slot: usize, pos: usize) {
        if self.slots[slot] == 0 {
            self.used.push(slot);
        }
        self.slots[slot] = pos as u32;
    }

    fn clear(&mut self) {
        for s in self.used.drain(..) {
            self.slots[s] = 0;
        }
    }
}

thread_local! {
    /// Scratch space of this thread's compressions: empty between calls.
    static TABLE: std::cell::RefCell<Table> = std::cell::RefCell::new(Table {
        slots: vec![0; 1 << HASH_LOG],
        used: Vec::new(),
    });
}

/// Compresses `input` into at most `limit` bytes, or `None` if it does not fit (Redis then
/// stores the string as it is). Inputs over 4 GB are not compressed (positions are 32-bit).
pub fn compress(input: &[u8], limit: usize) -> Option<Vec<u8>> {
    if input.len() > u32::MAX as usize {
        return None;
    }
    TABLE.with(|t| {
        let mut table = t.borrow_mut();
        let out = compress_with(input, limit, &mut table);
        table.clear();
        out
    })
}

fn compress_with(input: &[u8], limit: usize, table: &mut Table) -> Option<Vec<u8>> {
    let n = input.len();
    if n == 0 || limit == 0 {
        return None;
    }
    let mut out = vec![0u8; limit + 8];
    let (mut ip, mut op, mut lit) = (0usize, 1usize, 0usize);
    let at = |i: usize| u32::from(input[i]);
    let mut hval: u32 = if n >= 2 { (at(0) << 8) | at(1) } else { 0 };
    while ip + 2 < n {
        hval = (hval << 8) | at(ip + 2);
        let s = slot(hval);
        let reference = table.slots[s] as usize;
        table.put(s, ip);
        let found = reference > 0
            && reference < ip
            && ip - reference - 1 < MAX_OFFSET
            && input[reference + 2] == input[ip + 2]
            && input[reference] == input[ip]
            && input[reference + 1] == input[ip + 1];
        if found {
            let off = ip - reference - 1;
            let max = (n - ip - 2).min(MAX_MATCH);
            if op + 4 >= limit && op - usize::from(lit == 0) + 4 >= limit {
                return None;
            }
            out[op - lit - 1] = (lit as u8).wrapping_sub(1);
            op -= usize::from(lit == 0);
            let mut len = 2usize;
            let mut mismatch = false;
            if max > 16 {
                for _ in 0..16 {
                    len += 1;
                    if input[reference + len] != input[ip + len] {
                        mismatch = true;
                        break;
                    }
                }
            }
            if !mismatch {
                loop {
                    len += 1;
                    if !(len < max && input[reference + len] == input[ip + len]) {
                        break;
                    }
                }
            }
            len -= 2;
            ip += 1;
            if len < 7 {
                out[op] = ((off >> 8) + (len << 5)) as u8;
                op += 1;
            } else {
                out[op] = ((off >> 8) + (7 << 5)) as u8;
                out[op + 1] = (len - 7) as u8;
                op += 2;
            }
            out[op] = off as u8;
            op += 2;
            lit = 0;
            ip += len + 1;
            if ip + 2 >= n {
                break;
            }
            ip -= 2;
            hval = (at(ip) << 8) | at(ip + 1);
            for _ in 0..2 {
                hval = (hval << 8) | at(ip + 2);
                table.put(slot(hval), ip);
                ip += 1;
            }
        } else {
            if op >= limit {
                return None;
            }
            out[op] = input[ip];
            op += 1;
            ip += 1;
            lit += 1;
            if lit == MAX_LITERALS {
                out[op - lit - 1] = (lit - 1) as u8;
                lit = 0;
                op += 1;
            }
        }
    }
    if op + 3 > limit {
        return None;
    }
    while ip < n {
        out[op] = input[ip];
        op += 1;
        ip += 1;
        lit += 1;
        if lit == MAX_LITERALS {
            out[op - lit - 1] = (lit - 1) as u8;
            lit = 0;
            op += 1;
        }
    }
    out[op - lit - 1] = (lit as u8).wrapping_sub(1);
    op -= usize::from(lit == 0);
    out.truncate(op);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compressed_text_decompresses_to_itself() {
        let samples: Vec<Vec<u8>> = vec![
            b"x".repeat(300),
            b"the quick brown fox jumps over the lazy dog ".repeat(20),
            (0..5000u32).flat_map(|i| (i % 251).to_le_bytes()).collect(),
            b"abcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcabcab".to_vec(),
        ];
        for s in samples {
            let c = compress(&s, s.len() - 4).expect("compressible");
            assert!(c.len() < s.len());
            assert_eq!(decompress(&c, s.len()).unwrap(), s);
        }
        assert_eq!(compress(b"q8Zr1mK2xW7pL0vB9nT4cY6aD3sF5gH", 27), None);
    }

    #[test]
    fn literals_and_overlapping_references() {
        // "abc" literal, then a 6-byte reference 3 back: "abcabcabc".
        let blob = [2, b'a', b'b', b'c', (4 << 5), 2];
        assert_eq!(decompress(&blob, 9).unwrap(), b"abcabcabc");
        // A long reference (length byte follows).
        let blob = [0, b'x', (7 << 5), 3, 0];
        assert_eq!(decompress(&blob, 1 + 12).unwrap(), vec![b'x'; 13]);
    }

    #[test]
    fn corrupt_input_is_refused() {
        assert_eq!(decompress(&[5, b'a'], 6), Err(Corrupt));
        assert_eq!(decompress(&[0, b'a', 0x20, 5], 4), Err(Corrupt));
        assert_eq!(decompress(&[0, b'a'], 2), Err(Corrupt));
        assert_eq!(decompress(&[1, b'a', b'b'], 1), Err(Corrupt));
        assert_eq!(decompress(&[0xff], 10), Err(Corrupt));
    }
}

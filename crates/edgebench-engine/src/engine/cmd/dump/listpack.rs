//! Redis's listpack (the blob inside RDB types 16, 17, 18 and 19) and intset (type 11):
//! reading them back to elements, and writing them as Redis 7.0 does.
//!
//! Listpack: a 4-byte total size and a 2-byte element count (65535 = unknown), little
//! endian; each element is an encoding byte (7-bit uint, 13-bit int, 16/24/32/64-bit int,
//! or a string with a 6-, 12- or 32-bit length) with its data, then the element's size again
//! as a backwards-readable varint; 0xFF ends it. Strings that read as integers are stored as
//! integers, so the text of an integer element is its decimal form.

use crate::engine::types::encoding::is_redis_integer;

/// Why a blob was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Corrupt;

const HEADER: usize = 6;
const EOF: u8 = 0xff;

/// The elements of a listpack, each as bytes (integers as their decimal text). The number
/// of elements is bounded by the blob's size (every element takes two bytes at least).
pub fn read(blob: &[u8]) -> Result<Vec<Vec<u8>>, Corrupt> {
    if blob.len() < HEADER + 1 {
        return Err(Corrupt);
    }
    let total = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
    let count = u16::from_le_bytes([blob[4], blob[5]]);
    if total != blob.len() || blob[total - 1] != EOF {
        return Err(Corrupt);
    }
    let mut out = Vec::new();
    let mut p = HEADER;
    while blob[p] != EOF {
        let (element, size) = element(&blob[p..total - 1])?;
        p += size;
        let back = backlen_size(size);
        let stored = blob.get(p..p + back).ok_or(Corrupt)?;
        if read_backlen(stored) != Some(size) {
            return Err(Corrupt);
        }
        p += back;
        out.push(element);
        if p >= total {
            return Err(Corrupt);
        }
    }
    if p != total - 1 || (count != u16::MAX && usize::from(count) != out.len()) {
        return Err(Corrupt);
    }
    Ok(out)
}

fn bytes<const N: usize>(s: &[u8], at: usize) -> Result<[u8; N], Corrupt> {
    s.get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .ok_or(Corrupt)
}

/// One element at the start of `s`: its bytes, and the size of its encoding and data.
fn element(s: &[u8]) -> Result<(Vec<u8>, usize), Corrupt> {
    let b0 = *s.first().ok_or(Corrupt)?;
    let int = |v: i64, size: usize| Ok((v.to_string().into_bytes(), size));
    let string = |len: usize, at: usize| {
        let data = s
            .get(at..at.checked_add(len).ok_or(Corrupt)?)
            .ok_or(Corrupt)?;
        Ok((data.to_vec(), at + len))
    };
    match b0 {
        0x00..=0x7f => int(i64::from(b0), 1),
        0x80..=0xbf => string(usize::from(b0 & 0x3f), 1),
        0xc0..=0xdf => {
            let raw = (i64::from(b0 & 0x1f) << 8) | i64::from(*s.get(1).ok_or(Corrupt)?);
            int(if raw >= 1 << 12 { raw - (1 << 13) } else { raw }, 2)
        }
        0xe0..=0xef => {
            let len = (usize::from(b0 & 0x0f) << 8) | usize::from(*s.get(1).ok_or(Corrupt)?);
            string(len, 2)
        }
        0xf0 => string(u32::from_le_bytes(bytes(s, 1)?) as usize, 5),
        0xf1 => int(i64::from(i16::from_le_bytes(bytes(s, 1)?)), 3),
        0xf2 => {
            let [a, b, c] = bytes::<3>(s, 1)?;
            int(i64::from(i32::from_le_bytes([0, a, b, c]) >> 8), 4)
        }
        0xf3 => int(i64::from(i32::from_le_bytes(bytes(s, 1)?)), 5),
        0xf4 => int(i64::from_le_bytes(bytes(s, 1)?), 9),
        _ => Err(Corrupt),
    }
}

/// Bytes the backwards length of an element of `size` bytes takes.
fn backlen_size(size: usize) -> usize {
    match size {
        0..=127 => 1,
        128..=16382 => 2,
        16383..=2097150 => 3,
        2097151..=268435454 => 4,
        _ => 5,
    }
}

/// Writes the backwards length: 7 bits a byte, most significant first, every byte but the
/// first (the one read last going backwards) flagged with 0x80.
fn write_backlen(size: usize, out: &mut Vec<u8>) {
    let n = backlen_size(size);
    for k in (0..n).rev() {
        let seven = ((size >> (7 * k)) & 0x7f) as u8;
        out.push(if k == n - 1 { seven } else { seven | 0x80 });
    }
}

fn read_backlen(stored: &[u8]) -> Option<usize> {
    let mut v = 0usize;
    for (i, b) in stored.iter().enumerate() {
        if (i == 0) == (b & 0x80 != 0) {
            return None;
        }
        v = (v << 7) | usize::from(b & 0x7f);
    }
    Some(v)
}

/// A listpack of `elements`, encoded as Redis 7.0's `lpAppend` does.
pub fn write<'a>(elements: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = vec![0u8; HEADER];
    let mut count = 0usize;
    for e in elements {
        let start = out.len();
        encode(e, &mut out);
        let size = out.len() - start;
        write_backlen(size, &mut out);
        count += 1;
    }
    out.push(EOF);
    let total = out.len() as u32;
    out[0..4].copy_from_slice(&total.to_le_bytes());
    let count = u16::try_from(count).unwrap_or(u16::MAX);
    out[4..6].copy_from_slice(&count.to_le_bytes());
    out
}

/// The size a listpack of these elements would have (the quicklist's node-size rule).
pub fn element_size(e: &[u8]) -> usize {
    let mut buf = Vec::new();
    encode(e, &mut buf);
    let n = buf.len();
    n + backlen_size(n)
}

fn encode(e: &[u8], out: &mut Vec<u8>) {
    if let Some(v) = as_integer(e) {
        if (0..=127).contains(&v) {
            out.push(v as u8);
        } else if (-4096..=4095).contains(&v) {
            let u = (v as u16) & 0x1fff;
            out.extend_from_slice(&[0xc0 | (u >> 8) as u8, u as u8]);
        } else if let Ok(v) = i16::try_from(v) {
            out.push(0xf1);
            out.extend_from_slice(&v.to_le_bytes());
        } else if (-(1 << 23)..(1 << 23)).contains(&v) {
            out.push(0xf2);
            out.extend_from_slice(&(v as i32).to_le_bytes()[..3]);
        } else if let Ok(v) = i32::try_from(v) {
            out.push(0xf3);
            out.extend_from_slice(&v.to_le_bytes());
        } else {
            out.push(0xf4);
            out.extend_from_slice(&v.to_le_bytes());
        }
        return;
    }
    let len = e.len();
    if len < 64 {
        out.push(0x80 | len as u8);
    } else if len < 4096 {
        out.extend_from_slice(&[0xe0 | (len >> 8) as u8, len as u8]);
    } else {
        out.push(0xf0);
        out.extend_from_slice(&(len as u32).to_le_bytes());
    }
    out.extend_from_slice(e);
}

fn as_integer(e: &[u8]) -> Option<i64> {
    if !is_redis_integer(e) {
        return None;
    }
    std::str::from_utf8(e).ok()?.parse().ok()
}

/// The members of an intset: a 4-byte width (2, 4 or 8), a 4-byte count, then the values
/// in ascending order, little endian. Refused unless sorted and unique, as Redis checks.
pub fn read_intset(blob: &[u8]) -> Result<Vec<i64>, Corrupt> {
    let width = u32::from_le_bytes(bytes(blob, 0)?) as usize;
    let count = u32::from_le_bytes(bytes(blob, 4)?) as usize;
    if !matches!(width, 2 | 4 | 8) || Some(blob.len() - 8) != count.checked_mul(width) {
        return Err(Corrupt);
    }
    let values: Vec<i64> = blob[8..]
        .chunks_exact(width)
        .map(|c| match width {
            2 => i64::from(i16::from_le_bytes([c[0], c[1]])),
            4 => i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            _ => i64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
        })
        .collect();
    if values.is_empty() || values.windows(2).any(|w| w[0] >= w[1]) {
        return Err(Corrupt);
    }
    Ok(values)
}

/// An intset of `values` (any order; sorted here), at the narrowest width holding them all.
pub fn write_intset(mut values: Vec<i64>) -> Vec<u8> {
    values.sort_unstable();
    let width: usize = if values.iter().all(|v| i16::try_from(*v).is_ok()) {
        2
    } else if values.iter().all(|v| i32::try_from(*v).is_ok()) {
        4
    } else {
        8
    };
    let mut out = Vec::with_capacity(8 + width * values.len());
    out.extend_from_slice(&(width as u32).to_le_bytes());
    out.extend_from_slice(&(values.len() as u32).to_le_bytes());
    for v in values {
        out.extend_from_slice(&v.to_le_bytes()[..width]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listpacks_round_trip_every_encoding() {
        let long = vec![b'z'; 5000];
        let mid = vec![b'y'; 100];
        let elements: Vec<&[u8]> = vec![
            b"0",
            b"127",
            b"128",
            b"-1",
            b"-4096",
            b"4095",
            b"-4097",
            b"32767",
            b"8388607",
            b"-8388608",
            b"2147483647",
            b"2147483648",
            b"-9223372036854775808",
            b"abc",
            b"",
            b"01",
            &mid,
            &long,
        ];
        let blob = write(elements.iter().copied());
        let back = read(&blob).unwrap();
        assert_eq!(
            back,
            elements.iter().map(|e| e.to_vec()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_known_listpack_is_redis_bytes() {
        // What Redis 7.0 stores for the hash {a: 1}.
        let blob = write([&b"a"[..], b"1"]);
        assert_eq!(blob, [0x0c, 0, 0, 0, 2, 0, 0x81, b'a', 2, 0x01, 1, 0xff]);
    }

    #[test]
    fn corrupt_listpacks_are_refused() {
        let good = write([&b"a"[..], b"hello"]);
        for cut in 0..good.len() {
            assert!(read(&good[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = good.clone();
        bad[4] = 3;
        assert!(read(&bad).is_err());
        let mut bad = good;
        bad[6] = 0x8f;
        assert!(read(&bad).is_err());
    }

    #[test]
    fn intsets_round_trip_and_pick_widths() {
        for values in [vec![3, 1, 2], vec![70000, -1], vec![i64::MIN, 0]] {
            let mut sorted = values.clone();
            sorted.sort_unstable();
            assert_eq!(read_intset(&write_intset(values)).unwrap(), sorted);
        }
        assert_eq!(write_intset(vec![1])[0], 2);
        assert!(read_intset(&[2, 0, 0, 0, 2, 0, 0, 0, 5, 0, 1, 0]).is_err());
        assert!(read_intset(&[2, 0, 0, 0, 9, 0, 0, 0, 5, 0]).is_err());
    }
}

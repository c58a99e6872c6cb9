//! Bit strings: SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP (AND, OR, XOR, NOT), BITFIELD and
//! BITFIELD_RO ([`bitfield`]), LCS ([`lcs`]) and SUBSTR (GETRANGE's old name) — the string
//! commands of Redis's `bitops.c`, plus the two of `t_string.c` that read strings as
//! sequences rather than values.
//!
//! Bit `n` of a string is bit `7 - n % 8` of byte `n / 8` (the first bit is the most
//! significant bit of the first byte), as in Redis; bits past the end read as zero.
//!
//! Bounds: a bit offset must be below 2^32 (Redis's check: the offset's byte below
//! `proto-max-bulk-len`, 512 MB), so SETBIT and BITFIELD grow a string to at most 512 MB
//! and a few bytes, as SETRANGE does; BITOP's result is as long as its longest input. LCS's
//! table has its own cap ([`MAX_TABLE_BYTES`]).
//!
//! A write that changes nothing (SETBIT of a bit already so, BITFIELD writing the values
//! already there, in a string long enough) reads before it writes, so it does not count as
//! a change to a WATCHed key, as in Redis. One difference: a BITFIELD whose every write is
//! refused by OVERFLOW FAIL still grows (or creates) the string, and Redis does not count
//! that as a change while the engine does (its keyspace has no untracked write).
//!
//! Keyspace events, as Redis's bitops.c emits them: `setbit` when SETBIT or BITFIELD made a
//! change it counts (so not for that refused BITFIELD), BITOP's `set` for a stored result and
//! `del` for an empty one that removed the destination.

pub mod bitfield;
pub mod lcs;

use std::borrow::Cow;

use super::strings::MAX_STRING_LEN;
use super::{is, parse_i64, spec, Ctx, KeySpec, Spec, ONE_KEY};
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::{Entry, Locked, Value};
use crate::engine::types::encoding::Shape;
use crate::resp::reply::Reply;

pub use bitfield::{FieldAction, FieldOp, FieldType, Overflow};
pub use lcs::{LcsMatch, LcsOutcome, LcsReply, MAX_TABLE_BYTES};

/// BITOP's keys: the destination and every source.
const FROM_SECOND: KeySpec = KeySpec::Range {
    first: 2,
    last: -1,
    step: 1,
};

/// LCS's two keys.
const FIRST_TWO: KeySpec = KeySpec::Range {
    first: 1,
    last: 2,
    step: 1,
};

/// The bit commands.
pub const COMMANDS: &[Spec] = &[
    spec("setbit", 4, ONE_KEY, true, setbit),
    spec("getbit", 3, ONE_KEY, false, getbit),
    spec("bitcount", -2, ONE_KEY, false, bitcount),
    spec("bitpos", -3, ONE_KEY, false, bitpos),
    spec("bitop", -4, FROM_SECOND, true, bitop),
    spec("bitfield", -2, ONE_KEY, true, bitfield::bitfield),
    spec("bitfield_ro", -2, ONE_KEY, false, bitfield::bitfield_ro),
    spec("lcs", -3, FIRST_TWO, false, lcs::lcs),
    spec("substr", 4, ONE_KEY, false, substr),
];

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

/// Redis's error for a bad bit offset.
fn offset_error() -> CmdError {
    err("ERR bit offset is not an integer or out of range")
}

/// A bit offset argument: a non-negative integer whose byte is below 512 MB. With
/// `field_bits`, `#n` means `n` fields of that width (BITFIELD), multiplied as Redis's C
/// does (wrapping on overflow, then checked).
pub fn parse_bit_offset(arg: &[u8], field_bits: Option<u32>) -> Result<u64, CmdError> {
    let (digits, scale) = match (arg.split_first(), field_bits) {
        (Some((b'#', rest)), Some(bits)) => (rest, i64::from(bits)),
        _ => (arg, 1),
    };
    let n = parse_i64(digits)
        .map_err(|_| offset_error())?
        .wrapping_mul(scale);
    if n < 0 || (n >> 3) >= MAX_STRING_LEN as i64 {
        return Err(offset_error());
    }
    Ok(n as u64)
}

/// Whether BITCOUNT/BITPOS's range counts bytes or bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeUnit {
    /// The default: `start` and `end` are byte indices.
    Byte,
    /// `start` and `end` are bit indices.
    Bit,
}

impl RangeUnit {
    fn parse(arg: &[u8]) -> Result<RangeUnit, CmdError> {
        if is(arg, "bit") {
            Ok(RangeUnit::Bit)
        } else if is(arg, "byte") {
            Ok(RangeUnit::Byte)
        } else {
            Err(CmdError::Syntax)
        }
    }
}

/// A resolved range of a string: bytes `start..=end`, less the high bits of the first byte
/// in `first_mask` and the low bits of the last byte in `last_mask` (a bit range's ragged
/// edges; both 0 for a byte range).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ByteSpan {
    start: usize,
    end: usize,
    first_mask: u8,
    last_mask: u8,
}

/// Redis's range arithmetic for BITCOUNT/BITPOS over a string of `len` bytes: negative
/// indices count from the end, then both are clamped into the string. `None` when empty.
fn resolve_range(len: usize, start: i64, end: i64, unit: RangeUnit) -> Option<ByteSpan> {
    let total = match unit {
        RangeUnit::Byte => len as i64,
        RangeUnit::Bit => (len as i64) << 3,
    };
    let from_end = |i: i64| if i < 0 { (total + i).max(0) } else { i };
    let start = from_end(start);
    let end = from_end(end).min(total - 1);
    if start > end {
        return None;
    }
    Some(match unit {
        RangeUnit::Byte => ByteSpan {
            start: start as usize,
            end: end as usize,
            first_mask: 0,
            last_mask: 0,
        },
        RangeUnit::Bit => ByteSpan {
            start: (start >> 3) as usize,
            end: (end >> 3) as usize,
            first_mask: !((1u16 << (8 - (start & 7))) - 1) as u8,
            last_mask: ((1u16 << (7 - (end & 7))) - 1) as u8,
        },
    })
}

/// Set bits of `bytes`.
fn popcount(bytes: &[u8]) -> u64 {
    bytes.iter().map(|b| u64::from(b.count_ones())).sum()
}

/// The position of the first bit equal to `bit` in `bytes`, Redis's `redisBitpos`: with no
/// such bit, -1 when looking for a one, and the bit just past the end when looking for a
/// zero (a string is taken as padded with zeros on the right).
fn first_bit(bytes: &[u8], bit: bool) -> i64 {
    let skip = if bit { 0x00 } else { 0xff };
    match bytes.iter().position(|&b| b != skip) {
        Some(i) => {
            let b = if bit { bytes[i] } else { !bytes[i] };
            (i as i64) * 8 + i64::from(b.leading_zeros())
        }
        None if bit => -1,
        None => bytes.len() as i64 * 8,
    }
}

/// The bits a span counts: its bytes less the masked edges.
fn count_span(s: &[u8], span: ByteSpan) -> u64 {
    popcount(&s[span.start..=span.end])
        - u64::from((s[span.start] & span.first_mask).count_ones())
        - u64::from((s[span.end] & span.last_mask).count_ones())
}

/// BITPOS over a resolved span, as Redis walks it: the masked first byte, the whole bytes,
/// then the masked last byte. `end_given`: a zero past the range is then not found (-1).
fn find_in_span(s: &[u8], span: ByteSpan, bit: bool, end_given: bool) -> i64 {
    // A byte with the masked-out bits set to the opposite of what is looked for.
    let masked = |b: u8, mask: u8| if bit { b & !mask } else { b | mask };
    let (mut start, mut bytes) = (span.start, span.end - span.start + 1);
    let mut pos;
    'found: {
        if span.first_mask != 0 {
            let mut first = masked(s[start], span.first_mask);
            if span.last_mask != 0 && bytes == 1 {
                first = masked(first, span.last_mask);
            }
            pos = first_bit(&[first], bit);
            if bytes == 1 || (pos != -1 && pos != 8) {
                break 'found;
            }
            start += 1;
            bytes -= 1;
        }
        let whole = bytes - usize::from(span.last_mask != 0);
        if whole > 0 {
            pos = first_bit(&s[start..start + whole], bit);
            if bytes == whole || (pos != -1 && pos != whole as i64 * 8) {
                break 'found;
            }
            start += whole;
            bytes -= whole;
        }
        pos = first_bit(&[masked(s[span.end], span.last_mask)], bit);
    }
    if end_given && !bit && pos == bytes as i64 * 8 {
        return -1;
    }
    if pos == -1 {
        -1
    } else {
        pos + start as i64 * 8
    }
}

/// BITOP's operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BitOp {
    /// Bitwise AND (a missing or shorter source counts as zero bytes).
    And,
    /// Bitwise OR.
    Or,
    /// Bitwise XOR.
    Xor,
    /// Bitwise NOT of the single source.
    Not,
}

impl BitOp {
    fn parse(arg: &[u8]) -> Result<BitOp, CmdError> {
        [
            ("and", BitOp::And),
            ("or", BitOp::Or),
            ("xor", BitOp::Xor),
            ("not", BitOp::Not),
        ]
        .into_iter()
        .find(|(name, _)| is(arg, name))
        .map(|(_, op)| op)
        .ok_or(CmdError::Syntax)
    }
}

/// Folds `source` into BITOP's `result` (bytes past the source's end count as zeros).
fn fold_into(op: BitOp, result: &mut [u8], source: &[u8]) {
    let padded = source.iter().copied().chain(std::iter::repeat(0));
    for (r, b) in result.iter_mut().zip(padded) {
        match op {
            BitOp::And => *r &= b,
            BitOp::Or => *r |= b,
            BitOp::Xor => *r ^= b,
            BitOp::Not => *r = !b,
        }
    }
}

impl Locked<'_> {
    /// The string at an existing string key, for writing (WRONGTYPE for another type,
    /// `None` when missing).
    pub fn string_mut(&mut self, key: &[u8]) -> Result<Option<&mut Vec<u8>>, CmdError> {
        match self.get_mut(key) {
            None => Ok(None),
            Some(Entry {
                value: Value::Str(s),
                ..
            }) => Ok(Some(s)),
            Some(_) => Err(CmdError::WrongType),
        }
    }

    /// Runs `edit` on the string at `key`, grown with zero bytes (or created) so that bit
    /// `max_bit` exists; WRONGTYPE for another type. `max_bit` comes from
    /// [`parse_bit_offset`], so the string stays within 512 MB and a few bytes. A missing
    /// key is built whole and then stored, so the command counts one change (as Redis's
    /// `server.dirty++`), not a creation and a write.
    pub fn edit_bits<R>(
        &mut self,
        key: &[u8],
        max_bit: u64,
        edit: impl FnOnce(&mut Vec<u8>) -> R,
    ) -> Result<R, CmdError> {
        let need = (max_bit >> 3) as usize + 1;
        if self.get_str(key)?.is_none() {
            let mut s = vec![0u8; need];
            let out = edit(&mut s);
            let mut entry = Entry::new(Value::Str(s));
            // Redis makes a bit command's new string with `createObject`: `raw`.
            entry.shape = Shape::only(Shape::RAW);
            self.insert(key, entry);
            return Ok(out);
        }
        // Redis unshares the string for a bit write: `raw` from then on (OBJECT ENCODING).
        self.unshare_string(key);
        let s = self.string_mut(key)?.ok_or(CmdError::WrongType)?;
        if s.len() < need {
            s.resize(need, 0);
        }
        Ok(edit(s))
    }

    /// SETBIT: sets bit `offset` to `on` (growing the string); the bit's old value.
    pub fn setbit(&mut self, key: &[u8], offset: u64, on: bool) -> Result<bool, CmdError> {
        let (byte, mask) = ((offset >> 3) as usize, 0x80u8 >> (offset & 7));
        // Read first: a bit already so, in a string long enough, is no change, but Redis
        // has unshared the string before it looks (`raw` all the same).
        if let Some(s) = self.get_str(key)? {
            if let Some(&b) = s.get(byte) {
                if (b & mask != 0) == on {
                    self.unshare_string(key);
                    return Ok(on);
                }
            }
        }
        // Here the key is new, grows, or the bit changes: a change, as Redis counts one.
        let old = self.edit_bits(key, offset, |s| {
            let old = s[byte] & mask != 0;
            if on {
                s[byte] |= mask;
            } else {
                s[byte] &= !mask;
            }
            old
        })?;
        self.notify(Classes::STRING, "setbit", key);
        Ok(old)
    }

    /// GETBIT: bit `offset` (0 past the end or for a missing key).
    pub fn getbit(&mut self, key: &[u8], offset: u64) -> Result<bool, CmdError> {
        let byte = (offset >> 3) as usize;
        let s = self.get_str(key)?;
        Ok(s.and_then(|s| s.get(byte))
            .is_some_and(|b| b & (0x80 >> (offset & 7)) != 0))
    }

    /// BITCOUNT over an optional `(start, end, unit)` range.
    pub fn bitcount(
        &mut self,
        key: &[u8],
        range: Option<(i64, i64, RangeUnit)>,
    ) -> Result<u64, CmdError> {
        let Some(s) = self.get_str(key)? else {
            return Ok(0);
        };
        let span = match range {
            None => resolve_range(s.len(), 0, -1, RangeUnit::Byte),
            Some((start, end, unit)) => resolve_range(s.len(), start, end, unit),
        };
        Ok(span.map_or(0, |span| count_span(s, span)))
    }

    /// BITPOS: the first bit equal to `bit` from `start` (default 0) to `end` (default the
    /// last byte), in `unit`s. Not found: -1 when looking for a one; for a zero, the bit just
    /// past the end (the string is taken as padded with zeros), or -1 when `end` was given.
    pub fn bitpos(
        &mut self,
        key: &[u8],
        bit: bool,
        start: i64,
        end: Option<i64>,
        unit: RangeUnit,
    ) -> Result<i64, CmdError> {
        let Some(s) = self.get_str(key)? else {
            return Ok(if bit { -1 } else { 0 });
        };
        let span = resolve_range(s.len(), start, end.unwrap_or(-1), unit);
        Ok(span.map_or(-1, |span| find_in_span(s, span, bit, end.is_some())))
    }

    /// BITOP: stores the result at `dest` (deleting it when every source is empty or
    /// missing); the result's length.
    pub fn bitop(&mut self, op: BitOp, dest: &[u8], sources: &[&[u8]]) -> Result<usize, CmdError> {
        // Every source's type is checked (in order) before anything is computed; the result
        // is as long as the longest source, and built one source at a time, borrowed.
        let mut len = 0;
        for key in sources {
            len = len.max(self.get_str(key)?.map_or(0, Vec::len));
        }
        let mut result = vec![0u8; len];
        for (i, key) in sources.iter().enumerate() {
            let source = self.get_str(key)?.map_or(&[][..], |s| &s[..]);
            match (i, op) {
                (0, BitOp::Not) => fold_into(BitOp::Not, &mut result, source),
                (0, _) => fold_into(BitOp::Or, &mut result, source),
                _ => fold_into(op, &mut result, source),
            }
        }
        let len = result.len();
        if len == 0 {
            if self.remove(dest).is_some() {
                self.notify(Classes::GENERIC, "del", dest);
            }
        } else {
            let mut entry = Entry::new(Value::Str(result));
            // Redis stores BITOP's result as a raw string (OBJECT ENCODING).
            entry.shape = Shape::only(Shape::RAW);
            self.insert(dest, entry);
            self.notify(Classes::STRING, "set", dest);
        }
        Ok(len)
    }
}

// ---- argument parsing and replies ----

fn setbit(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let offset = parse_bit_offset(args[2], None)?;
    let bad_bit = || err("ERR bit is not an integer or out of range");
    let on = match parse_i64(args[3]).map_err(|_| bad_bit())? {
        0 => false,
        1 => true,
        _ => return Err(bad_bit()),
    };
    Ok(Reply::Int(i64::from(ctx.ks.setbit(args[1], offset, on)?)))
}

fn getbit(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let offset = parse_bit_offset(args[2], None)?;
    Ok(Reply::Int(i64::from(ctx.ks.getbit(args[1], offset)?)))
}

fn bitcount(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    // Redis looks the key up first: a missing key is 0 whatever the arguments say.
    if ctx.ks.get_str(args[1])?.is_none() {
        return Ok(Reply::Int(0));
    }
    let range = match args.len() {
        2 => None,
        4 | 5 => {
            let (start, end) = (parse_i64(args[2])?, parse_i64(args[3])?);
            // Both negative and crossed: empty, before the unit is even read.
            if start < 0 && end < 0 && start > end {
                return Ok(Reply::Int(0));
            }
            let unit = match args.get(4) {
                Some(arg) => RangeUnit::parse(arg)?,
                None => RangeUnit::Byte,
            };
            Some((start, end, unit))
        }
        _ => return Err(CmdError::Syntax),
    };
    Ok(Reply::Int(ctx.ks.bitcount(args[1], range)? as i64))
}

fn bitpos(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let bit = match parse_i64(args[2])? {
        0 => false,
        1 => true,
        _ => return Err(err("ERR The bit argument must be 1 or 0.")),
    };
    if ctx.ks.get_str(args[1])?.is_none() {
        return Ok(Reply::Int(if bit { -1 } else { 0 }));
    }
    if args.len() > 6 {
        return Err(CmdError::Syntax);
    }
    let start = match args.get(3) {
        Some(arg) => parse_i64(arg)?,
        None => 0,
    };
    let unit = match args.get(5) {
        Some(arg) => RangeUnit::parse(arg)?,
        None => RangeUnit::Byte,
    };
    let end = args.get(4).map(|arg| parse_i64(arg)).transpose()?;
    Ok(Reply::Int(ctx.ks.bitpos(args[1], bit, start, end, unit)?))
}

fn bitop(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let op = BitOp::parse(args[1])?;
    if op == BitOp::Not && args.len() != 4 {
        return Err(err(
            "ERR BITOP NOT must be called with a single source key.",
        ));
    }
    Ok(Reply::Int(ctx.ks.bitop(op, args[2], &args[3..])? as i64))
}

fn substr(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let start = parse_i64(args[2])?;
    let end = parse_i64(args[3])?;
    Ok(Reply::Bulk(ctx.ks.getrange(args[1], start, end)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_bit_pads_with_zeros() {
        assert_eq!(first_bit(&[0xff, 0xff], false), 16);
        assert_eq!(first_bit(&[0x00, 0x00], true), -1);
        assert_eq!(first_bit(&[0x00, 0x10], true), 11);
        assert_eq!(first_bit(&[0xff, 0xef], false), 11);
        assert_eq!(first_bit(&[], false), 0);
    }

    #[test]
    fn bit_ranges_mask_their_edges() {
        let span = resolve_range(2, 3, 12, RangeUnit::Bit).expect("non-empty");
        assert_eq!(span.start, 0);
        assert_eq!(span.end, 1);
        assert_eq!(span.first_mask, 0b1110_0000);
        assert_eq!(span.last_mask, 0b0000_0111);
        assert_eq!(count_span(&[0xff, 0xff], span), 10);
        assert_eq!(resolve_range(0, 0, -1, RangeUnit::Byte), None);
    }

    #[test]
    fn offsets_follow_redis_limits() {
        assert_eq!(parse_bit_offset(b"4294967295", None), Ok(4_294_967_295));
        assert!(parse_bit_offset(b"4294967296", None).is_err());
        assert!(parse_bit_offset(b"-1", None).is_err());
        assert!(parse_bit_offset(b"#2", None).is_err());
        assert_eq!(parse_bit_offset(b"#2", Some(8)), Ok(16));
    }
}

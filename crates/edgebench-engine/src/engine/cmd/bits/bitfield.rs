//! BITFIELD and BITFIELD_RO: signed (`i1`–`i64`) and unsigned (`u1`–`u63`) integers at any
//! bit offset of a string, read (GET), written (SET) and incremented (INCRBY), with the
//! overflow handling OVERFLOW selects for the operations after it (WRAP, SAT, FAIL).
//!
//! Redis parses every operation before it touches the key, so a bad argument anywhere fails
//! the whole command and changes nothing; the writes then run in order, each seeing the
//! ones before it. The overflow checks reproduce Redis's arithmetic, including its
//! wrapping intermediate sums (a SET of an i64 far outside a small field's range can
//! saturate to the wrong end there, and does here too).

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{parse_bit_offset, Ctx};
use crate::engine::cmd::{is, parse_i64};
use crate::engine::error::CmdError;
use crate::engine::keyevents::Classes;
use crate::engine::keyspace::Locked;
use crate::resp::reply::Reply;

/// A field's type: signedness and width in bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldType {
    /// Two's complement (`i`) or unsigned (`u`).
    pub signed: bool,
    /// 1–64 signed, 1–63 unsigned.
    pub bits: u32,
}

impl FieldType {
    /// `i<n>` or `u<n>`, as Redis reads it (the number ends at a NUL byte, as C's `strlen`
    /// ends it).
    fn parse(arg: &[u8]) -> Result<FieldType, CmdError> {
        let bad = || {
            CmdError::Other(Cow::Borrowed(
                "ERR Invalid bitfield type. Use something like i16 u8. \
                 Note that u64 is not supported but i64 is.",
            ))
        };
        let signed = match arg.first() {
            Some(b'i') => true,
            Some(b'u') => false,
            _ => return Err(bad()),
        };
        let digits = &arg[1..];
        let digits = &digits[..digits.iter().position(|&b| b == 0).unwrap_or(digits.len())];
        let bits = parse_i64(digits).map_err(|_| bad())?;
        let max = if signed { 64 } else { 63 };
        if !(1..=max).contains(&bits) {
            return Err(bad());
        }
        Ok(FieldType {
            signed,
            bits: bits as u32,
        })
    }
}

/// What to do when a SET or INCRBY does not fit its field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Keep the low bits (the default).
    Wrap,
    /// Stop at the field's minimum or maximum.
    Sat,
    /// Do nothing and reply nil.
    Fail,
}

/// What one operation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldAction {
    /// Read the field.
    Get,
    /// Write the value; reply with the old one.
    Set(i64),
    /// Add to the field; reply with the new value.
    IncrBy(i64),
}

/// One BITFIELD operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldOp {
    /// Read, write or add.
    pub action: FieldAction,
    /// The field's type.
    pub ty: FieldType,
    /// The field's first bit.
    pub offset: u64,
    /// The OVERFLOW mode in force for it.
    pub overflow: Overflow,
}

/// The operations of a BITFIELD command, checked as Redis checks them, in order.
fn parse_ops(args: &[&[u8]]) -> Result<Vec<FieldOp>, CmdError> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < args.len() {
        let (sub, left) = (args[j], args.len() - j - 1);
        let takes_value = (is(sub, "set") || is(sub, "incrby")) && left >= 3;
        if is(sub, "overflow") && left >= 1 {
            overflow = [
                ("wrap", Overflow::Wrap),
                ("sat", Overflow::Sat),
                ("fail", Overflow::Fail),
            ]
            .into_iter()
            .find(|(name, _)| is(args[j + 1], name))
            .map(|(_, o)| o)
            .ok_or(CmdError::Other(Cow::Borrowed(
                "ERR Invalid OVERFLOW type specified",
            )))?;
            j += 2;
            continue;
        }
        if !(takes_value || (is(sub, "get") && left >= 2)) {
            return Err(CmdError::Syntax);
        }
        let ty = FieldType::parse(args[j + 1])?;
        let offset = parse_bit_offset(args[j + 2], Some(ty.bits))?;
        let action = if !takes_value {
            FieldAction::Get
        } else if is(sub, "set") {
            FieldAction::Set(parse_i64(args[j + 3])?)
        } else {
            FieldAction::IncrBy(parse_i64(args[j + 3])?)
        };
        ops.push(FieldOp {
            action,
            ty,
            offset,
            overflow,
        });
        j += if takes_value { 4 } else { 3 };
    }
    Ok(ops)
}

/// The string as the operations see it: the stored bytes (or none, for a missing key)
/// under the bytes the operations wrote so far. Running the operations on this view first
/// tells whether they change anything before the key is opened for writing.
struct View<'a> {
    base: &'a [u8],
    written: BTreeMap<usize, u8>,
}

impl<'a> View<'a> {
    fn new(base: &'a [u8]) -> View<'a> {
        View {
            base,
            written: BTreeMap::new(),
        }
    }

    /// Byte `i` (zero past the end).
    fn byte(&self, i: usize) -> u8 {
        match self.written.get(&i) {
            Some(&b) => b,
            None => self.base.get(i).copied().unwrap_or(0),
        }
    }

    /// Whether the written bytes differ from the stored ones (a write past the end differs:
    /// the string grows).
    fn changes_base(&self) -> bool {
        self.written
            .iter()
            .any(|(&i, &b)| self.base.get(i) != Some(&b))
    }
}

/// The unsigned value of the `bits` bits from bit `offset` (bits past the end read as 0).
fn get_bits(s: &View<'_>, offset: u64, bits: u32) -> u64 {
    (offset..offset + u64::from(bits)).fold(0u64, |value, bit| {
        let byte = s.byte((bit >> 3) as usize);
        (value << 1) | u64::from((byte >> (7 - (bit & 7))) & 1)
    })
}

/// Writes the low `bits` bits of `value` from bit `offset`.
fn put_bits(s: &mut View<'_>, offset: u64, bits: u32, value: u64) {
    for j in 0..u64::from(bits) {
        let bit = offset + j;
        let (i, mask) = ((bit >> 3) as usize, 0x80u8 >> (bit & 7));
        let byte = s.byte(i);
        let byte = if value & (1u64 << (u64::from(bits) - 1 - j)) != 0 {
            byte | mask
        } else {
            byte & !mask
        };
        s.written.insert(i, byte);
    }
}

/// A signed field's value: its bits, sign-extended.
fn get_signed(s: &View<'_>, offset: u64, bits: u32) -> i64 {
    let raw = get_bits(s, offset, bits);
    if bits < 64 && raw & (1u64 << (bits - 1)) != 0 {
        (raw | (u64::MAX << bits)) as i64
    } else {
        raw as i64
    }
}

/// Redis's `checkUnsignedBitfieldOverflow`: `None` when `value + incr` fits `bits` bits,
/// else the value OVERFLOW says to store (meaningless for FAIL).
fn unsigned_overflow(value: u64, incr: i64, bits: u32, mode: Overflow) -> Option<u64> {
    let max = (1u64 << bits) - 1;
    let max_incr = max.wrapping_sub(value) as i64;
    let min_incr = 0u64.wrapping_sub(value) as i64;
    let over = value > max || (incr > 0 && incr > max_incr);
    let under = !over && incr < 0 && incr < min_incr;
    if !over && !under {
        return None;
    }
    Some(match mode {
        Overflow::Wrap => value.wrapping_add(incr as u64) & max,
        Overflow::Sat if over => max,
        Overflow::Sat | Overflow::Fail => 0,
    })
}

/// Redis's `checkSignedBitfieldOverflow`, wrapping sums included: `None` when `value +
/// incr` fits, else the value to store.
fn signed_overflow(value: i64, incr: i64, bits: u32, mode: Overflow) -> Option<i64> {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let max_incr = (max as u64).wrapping_sub(value as u64) as i64;
    let min_incr = min.wrapping_sub(value);
    let over = value > max
        || (bits != 64 && incr > max_incr)
        || (value >= 0 && incr > 0 && incr > max_incr);
    let under = !over
        && (value < min
            || (bits != 64 && incr < min_incr)
            || (value < 0 && incr < 0 && incr < min_incr));
    if !over && !under {
        return None;
    }
    Some(match mode {
        Overflow::Wrap => {
            let sum = (value as u64).wrapping_add(incr as u64);
            if bits == 64 {
                sum as i64
            } else if sum & (1u64 << (bits - 1)) != 0 {
                (sum | (u64::MAX << bits)) as i64
            } else {
                (sum & !(u64::MAX << bits)) as i64
            }
        }
        Overflow::Sat if over => max,
        Overflow::Sat => min,
        Overflow::Fail => 0,
    })
}

/// Runs one SET or INCRBY on the string: the reply value, or `None` when OVERFLOW FAIL
/// refused it.
fn write_field(s: &mut View<'_>, op: &FieldOp) -> Option<i64> {
    let FieldOp {
        ty,
        offset,
        action,
        overflow,
    } = *op;
    let incr = matches!(action, FieldAction::IncrBy(_));
    let by = field_value(action);
    // (what an overflow stores, what is stored otherwise, the old value), all as Redis's
    // 64-bit words; an unsigned field is at most 63 bits, so it fits an i64.
    let (limit, fits, old) = if ty.signed {
        let old = get_signed(s, offset, ty.bits);
        if incr {
            let limit = signed_overflow(old, by, ty.bits, overflow);
            (limit, old.wrapping_add(by), old)
        } else {
            (signed_overflow(by, 0, ty.bits, overflow), by, old)
        }
    } else {
        let old = get_bits(s, offset, ty.bits);
        let (limit, fits) = if incr {
            let limit = unsigned_overflow(old, by, ty.bits, overflow);
            (limit, old.wrapping_add(by as u64))
        } else {
            (
                unsigned_overflow(by as u64, 0, ty.bits, overflow),
                by as u64,
            )
        };
        (limit.map(|v| v as i64), fits as i64, old as i64)
    };
    if limit.is_some() && overflow == Overflow::Fail {
        return None;
    }
    let new = limit.unwrap_or(fits);
    put_bits(s, offset, ty.bits, new as u64);
    Some(if incr { new } else { old })
}

/// The value a SET writes.
fn field_value(action: FieldAction) -> i64 {
    match action {
        FieldAction::Set(v) | FieldAction::IncrBy(v) => v,
        FieldAction::Get => 0,
    }
}

/// A GET's value (bits past the end read as zeros).
fn read_field(s: &View<'_>, op: &FieldOp) -> i64 {
    if op.ty.signed {
        get_signed(s, op.offset, op.ty.bits)
    } else {
        get_bits(s, op.offset, op.ty.bits) as i64
    }
}

impl Locked<'_> {
    /// BITFIELD: runs `ops` in order; each one's reply (`None` for a write OVERFLOW FAIL
    /// refused). A missing key reads as zeros. The key is written only when a write grows
    /// the string (or creates the key) or changes a byte, as Redis counts a change.
    pub fn bitfield(&mut self, key: &[u8], ops: &[FieldOp]) -> Result<Vec<Option<i64>>, CmdError> {
        let highest = ops
            .iter()
            .filter(|op| op.action != FieldAction::Get)
            .map(|op| op.offset + u64::from(op.ty.bits) - 1)
            .max();
        let base = self.get_str(key)?;
        let too_short = base.is_none_or(|s| (s.len() as u64) <= highest.unwrap_or(0) >> 3);
        let mut view = View::new(base.map_or(&[][..], |s| &s[..]));
        let replies: Vec<Option<i64>> = ops
            .iter()
            .map(|op| match op.action {
                FieldAction::Get => Some(read_field(&view, op)),
                _ => write_field(&mut view, op),
            })
            .collect();
        let Some(highest) = highest else {
            return Ok(replies);
        };
        // Redis counts a write that ran (not refused by OVERFLOW FAIL) as a change when the
        // string was created or grown for it, or its bytes differ; `setbit` if any did.
        let wrote = ops
            .iter()
            .zip(&replies)
            .any(|(op, r)| op.action != FieldAction::Get && r.is_some());
        if too_short || view.changes_base() {
            let changed = view.changes_base() || wrote;
            let written = std::mem::take(&mut view.written);
            self.edit_bits(key, highest, |s| {
                for (i, b) in written {
                    s[i] = b;
                }
            })?;
            if changed {
                self.notify(Classes::STRING, "setbit", key);
            }
        } else {
            // Nothing to store, but Redis unshared the string for the write ops anyway.
            self.unshare_string(key);
        }
        Ok(replies)
    }
}

fn reply(values: Vec<Option<i64>>) -> Reply {
    Reply::Array(
        values
            .into_iter()
            .map(|v| v.map_or(Reply::Nil, Reply::Int))
            .collect(),
    )
}

pub(super) fn bitfield(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let ops = parse_ops(args)?;
    Ok(reply(ctx.ks.bitfield(args[1], &ops)?))
}

pub(super) fn bitfield_ro(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let ops = parse_ops(args)?;
    if ops.iter().any(|op| op.action != FieldAction::Get) {
        return Err(CmdError::Other(Cow::Borrowed(
            "ERR BITFIELD_RO only supports the GET subcommand",
        )));
    }
    Ok(reply(ctx.ks.bitfield(args[1], &ops)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_and_write_big_endian_bits() {
        let mut s = View::new(&[]);
        put_bits(&mut s, 7, 5, 23);
        assert_eq!((s.byte(0), s.byte(1)), (0b0000_0001, 0b0111_0000));
        assert_eq!(get_bits(&s, 7, 5), 23);
        assert!(s.changes_base());
        assert_eq!(get_signed(&View::new(&[0xff]), 0, 8), -1);
        assert_eq!(get_bits(&View::new(&[0xff]), 4, 8), 0xf0);
        let mut same = View::new(&[0x0f]);
        put_bits(&mut same, 4, 4, 15);
        assert!(!same.changes_base());
    }

    #[test]
    fn overflow_follows_the_mode() {
        assert_eq!(unsigned_overflow(250, 10, 8, Overflow::Wrap), Some(4));
        assert_eq!(unsigned_overflow(250, 10, 8, Overflow::Sat), Some(255));
        assert_eq!(unsigned_overflow(5, -10, 8, Overflow::Sat), Some(0));
        assert_eq!(unsigned_overflow(5, 10, 8, Overflow::Sat), None);
        assert_eq!(signed_overflow(120, 10, 8, Overflow::Wrap), Some(-126));
        assert_eq!(signed_overflow(-120, -10, 8, Overflow::Sat), Some(-128));
        assert_eq!(
            signed_overflow(i64::MAX, 1, 64, Overflow::Wrap),
            Some(i64::MIN)
        );
        assert_eq!(signed_overflow(-1, 1, 64, Overflow::Wrap), None);
    }
}

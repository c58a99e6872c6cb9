//! C's floating-point text conversions, exactly as glibc does them on x86-64: `strtold` /
//! `strtod` (decimal and hexadecimal forms, correctly rounded), x87 80-bit `long double`
//! addition, and `printf("%.17Lf")`.
//!
//! Why not `f64`: Redis computes INCRBYFLOAT and HINCRBYFLOAT in `long double` (64-bit
//! mantissa) and prints the result with `%.17Lf`, trailing zeros trimmed. In `f64`,
//! `0.1 + 0.2` is `0.30000000000000004`; in `long double` it prints as `0.3`, which is what a
//! client sees from Redis. Values here are exact binary numbers `mant × 2^exp`; conversions go
//! through a small big integer, so every rounding is the one glibc makes (nearest, ties to
//! even). Only INCRBYFLOAT and `parse_f64`'s hexadecimal fallback pay for this; nothing hot
//! uses it.

use std::cmp::Ordering;

/// Redis's `MAX_LONG_DOUBLE_CHARS`: longer float arguments are rejected.
pub const MAX_LONG_DOUBLE_CHARS: usize = 5 * 1024;

/// A binary floating-point format: `bits` of mantissa, exponents of the unit in the last
/// place from `min_exp` (subnormals) to `max_exp`.
#[derive(Debug, Clone, Copy)]
struct Format {
    bits: u32,
    min_exp: i64,
    max_exp: i64,
}

/// x87 extended precision (`long double` on x86-64 Linux).
const EXTENDED: Format = Format {
    bits: 64,
    min_exp: -16445,
    max_exp: 16320,
};

/// IEEE double.
const DOUBLE: Format = Format {
    bits: 53,
    min_exp: -1074,
    max_exp: 971,
};

/// An unsigned big integer, little-endian 32-bit limbs, no high zero limbs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u128(mut v: u128) -> Big {
        let mut limbs = Vec::new();
        while v != 0 {
            limbs.push(v as u32);
            v >>= 32;
        }
        Big(limbs)
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    /// `self = self * m + a`.
    fn mul_add_small(&mut self, m: u32, a: u32) {
        let mut carry = u64::from(a);
        for limb in &mut self.0 {
            let v = u64::from(*limb) * u64::from(m) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }

    /// `self *= 5^k`.
    fn mul_pow5(&mut self, mut k: u64) {
        const POW5_13: u32 = 1_220_703_125;
        while k >= 13 {
            self.mul_add_small(POW5_13, 0);
            k -= 13;
        }
        self.mul_add_small(5u32.pow(k as u32), 0);
    }

    fn shl(&self, bits: u64) -> Big {
        if self.is_zero() {
            return Big::default();
        }
        let (limbs, rem) = ((bits / 32) as usize, (bits % 32) as u32);
        let mut out = vec![0u32; limbs];
        out.reserve(self.0.len() + 1);
        let mut carry = 0u32;
        for &l in &self.0 {
            if rem == 0 {
                out.push(l);
            } else {
                out.push((l << rem) | carry);
                carry = l >> (32 - rem);
            }
        }
        if carry != 0 {
            out.push(carry);
        }
        Big(out)
    }

    fn bit_len(&self) -> u64 {
        match self.0.last() {
            None => 0,
            Some(&top) => (self.0.len() as u64 - 1) * 32 + u64::from(32 - top.leading_zeros()),
        }
    }

    fn bit(&self, i: u64) -> bool {
        self.0
            .get((i / 32) as usize)
            .is_some_and(|l| (l >> (i % 32)) & 1 == 1)
    }

    /// Whether any of the bits below `n` is set.
    fn any_below(&self, n: u64) -> bool {
        let full = ((n / 32) as usize).min(self.0.len());
        if self.0[..full].iter().any(|&l| l != 0) {
            return true;
        }
        let rem = n % 32;
        rem != 0 && self.0.get(full).is_some_and(|l| l & ((1 << rem) - 1) != 0)
    }

    /// `self >> n`, which the caller knows fits in 128 bits.
    fn shr_u128(&self, n: u64) -> u128 {
        let mut v = 0u128;
        for i in (0..128u64).rev() {
            v = (v << 1) | u128::from(self.bit(n + i));
        }
        v
    }

    fn cmp_big(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    fn add(&self, other: &Big) -> Big {
        let (long, short) = if self.0.len() >= other.0.len() {
            (self, other)
        } else {
            (other, self)
        };
        let mut out = Vec::with_capacity(long.0.len() + 1);
        let mut carry = 0u64;
        for (i, &l) in long.0.iter().enumerate() {
            let v = u64::from(l) + u64::from(short.0.get(i).copied().unwrap_or(0)) + carry;
            out.push(v as u32);
            carry = v >> 32;
        }
        if carry != 0 {
            out.push(carry as u32);
        }
        Big(out)
    }

    /// `self -= other`; `self >= other`.
    fn sub_assign(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let v = i64::from(*limb) - i64::from(other.0.get(i).copied().unwrap_or(0)) - borrow;
            borrow = i64::from(v < 0);
            *limb = v.rem_euclid(1 << 32) as u32;
        }
        self.trim();
    }

    /// `self /= d`, returning the remainder.
    fn div_rem_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for limb in self.0.iter_mut().rev() {
            let v = (rem << 32) | u64::from(*limb);
            *limb = (v / u64::from(d)) as u32;
            rem = v % u64::from(d);
        }
        self.trim();
        rem as u32
    }

    fn to_decimal(&self) -> String {
        let mut n = self.clone();
        let mut chunks = Vec::new();
        while !n.is_zero() {
            chunks.push(n.div_rem_small(1_000_000_000));
        }
        let mut out = chunks
            .pop()
            .map_or_else(|| "0".to_string(), |c| c.to_string());
        for c in chunks.iter().rev() {
            out.push_str(&format!("{c:09}"));
        }
        out
    }
}

/// `num / den` for a quotient known to fit in 128 bits, and whether a remainder is left.
fn div_small_quotient(num: &Big, den: &Big) -> (u128, bool) {
    let mut rem = num.clone();
    let mut q = 0u128;
    let top = (num.bit_len() + 1).saturating_sub(den.bit_len()).min(127);
    for i in (0..=top).rev() {
        let shifted = den.shl(i);
        if rem.cmp_big(&shifted) != Ordering::Less {
            rem.sub_assign(&shifted);
            q |= 1 << i;
        }
    }
    (q, !rem.is_zero())
}

/// A correctly rounded value of some [`Format`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rounded {
    Zero,
    /// `mant × 2^exp`, `0 < mant < 2^bits`.
    Finite(u128, i64),
    Overflow,
}

/// Rounds `b × 2^e`, plus a nonzero tail below bit 0 when `sticky`, to nearest (ties to
/// even). With `sticky`, `b` must hold at least `bits + 2` bits.
fn round(b: &Big, e: i64, sticky: bool, f: Format) -> Rounded {
    if b.is_zero() {
        return Rounded::Zero;
    }
    let len = b.bit_len() as i64;
    let mut exp = (e + len - i64::from(f.bits)).max(f.min_exp);
    let shift = exp - e;
    let mut mant = if shift <= 0 {
        b.shr_u128(0) << (-shift)
    } else {
        let shift = shift as u64;
        let kept = b.shr_u128(shift);
        let half = b.bit(shift - 1);
        let rest = sticky || b.any_below(shift - 1);
        if half && (rest || kept & 1 == 1) {
            kept + 1
        } else {
            kept
        }
    };
    if mant >> f.bits != 0 {
        mant >>= 1;
        exp += 1;
    }
    if mant == 0 {
        Rounded::Zero
    } else if exp > f.max_exp {
        Rounded::Overflow
    } else {
        Rounded::Finite(mant, exp)
    }
}

/// What the C library reads from a float's text.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Parsed {
    Zero(bool),
    Finite(bool, u128, i64),
    Inf(bool),
}

/// `strtod`/`strtold` of the whole of `s`, as Redis accepts it (`string2d`, `string2ld`):
/// `None` for anything but one complete number (leading space, trailing bytes, NaN), and
/// for results that overflow or underflow to zero (C's ERANGE).
fn parse(s: &[u8], f: Format) -> Option<Parsed> {
    let (neg, body) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
        return Some(Parsed::Inf(neg));
    }
    let (b, e) = if body.len() > 1 && body[0] == b'0' && (body[1] | 0x20) == b'x' {
        parse_hex(&body[2..], f)?
    } else {
        parse_decimal(body, f)?
    };
    match b {
        None => Some(Parsed::Zero(neg)),
        Some((b, sticky)) => match round(&b, e, sticky, f) {
            Rounded::Finite(m, x) => Some(Parsed::Finite(neg, m, x)),
            Rounded::Zero | Rounded::Overflow => None,
        },
    }
}

/// An exact value to round: `None` for zero, or (`b`, sticky) with `b × 2^e`.
type Exact = (Option<(Big, bool)>, i64);

/// Reads `[+-]digits` (an exponent), saturating far outside any format's range.
fn parse_exponent(s: &[u8]) -> Option<i64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = digits.iter().fold(0i64, |acc, d| {
        (acc * 10 + i64::from(d - b'0')).min(1_000_000_000)
    });
    Some(if neg { -v } else { v })
}

/// Splits `digits[.digits][<marker>exponent]`; the exponent part must be complete.
fn split_number(s: &[u8], is_digit: fn(&u8) -> bool, marker: u8) -> Option<(&[u8], &[u8], i64)> {
    let int_len = s.iter().take_while(|c| is_digit(c)).count();
    let (int, rest) = s.split_at(int_len);
    let (frac, rest) = match rest.split_first() {
        Some((b'.', r)) => {
            let n = r.iter().take_while(|c| is_digit(c)).count();
            r.split_at(n)
        }
        _ => (&rest[..0], rest),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let exp = match rest.split_first() {
        None => 0,
        Some((m, r)) if m | 0x20 == marker => parse_exponent(r)?,
        Some(_) => return None,
    };
    Some((int, frac, exp))
}

fn parse_decimal(s: &[u8], f: Format) -> Option<Exact> {
    let (int, frac, exp10) = split_number(s, u8::is_ascii_digit, b'e')?;
    let mut d = Big::default();
    let (mut chunk, mut chunk_len, mut sig) = (0u32, 0u32, 0i64);
    for &c in int.iter().chain(frac) {
        if d.is_zero() && chunk == 0 && c == b'0' {
            continue;
        }
        chunk = chunk * 10 + u32::from(c - b'0');
        chunk_len += 1;
        sig += 1;
        if chunk_len == 9 {
            d.mul_add_small(1_000_000_000, chunk);
            (chunk, chunk_len) = (0, 0);
        }
    }
    d.mul_add_small(10u32.pow(chunk_len), chunk);
    if d.is_zero() {
        return Some((None, 0));
    }
    let e10 = exp10 - frac.len() as i64;
    // The value lies in [10^(sig-1+e10), 10^(sig+e10)): settle far overflows and
    // underflows before computing powers of ten thousands of digits long.
    let log10_2 = std::f64::consts::LOG10_2;
    if (sig - 1 + e10) as f64 > (f.max_exp + i64::from(f.bits)) as f64 * log10_2 + 1.0
        || ((sig + e10) as f64) < f.min_exp as f64 * log10_2 - 2.0
    {
        return None;
    }
    if e10 >= 0 {
        d.mul_pow5(e10 as u64);
        return Some((Some((d, false)), e10));
    }
    // d / 10^k = (d / 5^k) × 2^-k: divide with enough quotient bits to round.
    let k = -e10;
    let mut den = Big::from_u128(1);
    den.mul_pow5(k as u64);
    let s = i64::from(f.bits) + 3 + den.bit_len() as i64 - d.bit_len() as i64;
    let (num, den) = if s >= 0 {
        (d.shl(s as u64), den)
    } else {
        (d, den.shl((-s) as u64))
    };
    let (q, sticky) = div_small_quotient(&num, &den);
    Some((Some((Big::from_u128(q), sticky)), -k - s))
}

fn parse_hex(s: &[u8], f: Format) -> Option<Exact> {
    let (int, frac, exp2) = split_number(s, u8::is_ascii_hexdigit, b'p')?;
    let mut h = Big::default();
    for &c in int.iter().chain(frac) {
        let v = (c as char).to_digit(16).unwrap_or(0);
        h.mul_add_small(16, v);
    }
    if h.is_zero() {
        return Some((None, 0));
    }
    let e = exp2 - 4 * frac.len() as i64;
    let len = h.bit_len() as i64;
    if len + e > f.max_exp + i64::from(f.bits) + 1 || len + e < f.min_exp - 1 {
        return None;
    }
    Some((Some((h, false)), e))
}

/// `strtod` as Redis's `string2d` accepts it (ZADD scores and the like), for the forms
/// Rust's parser does not read (hexadecimal): `None` when Redis says "not a valid float".
pub fn parse_c_double(s: &[u8]) -> Option<f64> {
    let sign = |neg: bool| if neg { 1u64 << 63 } else { 0 };
    match parse(s, DOUBLE)? {
        Parsed::Zero(neg) => Some(f64::from_bits(sign(neg))),
        Parsed::Inf(neg) => Some(if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        }),
        Parsed::Finite(neg, mant, exp) => {
            let mant = mant as u64;
            let bits = if mant >> 52 == 0 {
                mant // subnormal: exp is DOUBLE.min_exp
            } else {
                (((exp + 1075) as u64) << 52) | (mant & ((1 << 52) - 1))
            };
            Some(f64::from_bits(sign(neg) | bits))
        }
    }
}

/// An x87 80-bit `long double`: what Redis's INCRBYFLOAT adds in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LongDouble {
    neg: bool,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Zero,
    /// `mant × 2^exp`: `mant >= 2^63`, or a subnormal at `EXTENDED.min_exp`.
    Finite {
        mant: u64,
        exp: i32,
    },
    Inf,
    NaN,
}

impl LongDouble {
    /// Zero.
    pub const ZERO: LongDouble = LongDouble {
        neg: false,
        kind: Kind::Zero,
    };

    /// Redis's `string2ld` (`strtold` of the whole argument): `None` when Redis replies
    /// "value is not a valid float" (empty, 5120 bytes or more, not one complete number,
    /// NaN, overflow, or underflow to zero). `inf` is accepted.
    pub fn parse(s: &[u8]) -> Option<LongDouble> {
        if s.is_empty() || s.len() >= MAX_LONG_DOUBLE_CHARS {
            return None;
        }
        Some(match parse(s, EXTENDED)? {
            Parsed::Zero(neg) => LongDouble {
                neg,
                kind: Kind::Zero,
            },
            Parsed::Inf(neg) => LongDouble {
                neg,
                kind: Kind::Inf,
            },
            Parsed::Finite(neg, mant, exp) => LongDouble {
                neg,
                kind: Kind::Finite {
                    mant: mant as u64,
                    exp: exp as i32,
                },
            },
        })
    }

    /// The exact value of a double.
    pub fn from_f64(v: f64) -> LongDouble {
        let neg = v.is_sign_negative();
        let kind = if v.is_nan() {
            Kind::NaN
        } else if v.is_infinite() {
            Kind::Inf
        } else if v == 0.0 {
            Kind::Zero
        } else {
            let bits = v.to_bits();
            let (frac, biased) = (bits & ((1 << 52) - 1), ((bits >> 52) & 0x7ff) as i64);
            let (m, e) = if biased == 0 {
                (frac, -1074)
            } else {
                (frac | (1 << 52), biased - 1075)
            };
            match round(&Big::from_u128(u128::from(m)), e, false, EXTENDED) {
                Rounded::Finite(mant, exp) => Kind::Finite {
                    mant: mant as u64,
                    exp: exp as i32,
                },
                Rounded::Zero | Rounded::Overflow => Kind::Zero,
            }
        };
        LongDouble { neg, kind }
    }

    /// Whether this is neither infinite nor NaN.
    pub fn is_finite(&self) -> bool {
        matches!(self.kind, Kind::Zero | Kind::Finite { .. })
    }

    /// Redis's `ld2string(..., LD_STR_HUMAN)`: `%.17Lf`, trailing zeros (and a trailing
    /// point) removed, `-0` written `0`. For finite values (Redis never prints others
    /// this way).
    pub fn to_human(&self) -> String {
        const SCALE: u128 = 100_000_000_000_000_000; // 10^17
        let body = match self.kind {
            Kind::Zero => "0".to_string(),
            Kind::Inf => "inf".to_string(),
            Kind::NaN => "nan".to_string(),
            Kind::Finite { mant, exp } if exp >= 0 => Big::from_u128(u128::from(mant))
                .shl(exp as u64)
                .to_decimal(),
            Kind::Finite { mant, exp } => {
                // mant × 10^17 < 2^121, so past 121 fraction bits the value rounds to 0.
                let n = u32::try_from(-exp).unwrap_or(u32::MAX);
                let q = if n >= 122 {
                    0
                } else {
                    let scaled = u128::from(mant) * SCALE;
                    let (q, r, half) = (scaled >> n, scaled & ((1 << n) - 1), 1u128 << (n - 1));
                    if r > half || (r == half && q & 1 == 1) {
                        q + 1
                    } else {
                        q
                    }
                };
                let frac = format!("{:017}", q % SCALE);
                let frac = frac.trim_end_matches('0');
                if frac.is_empty() {
                    (q / SCALE).to_string()
                } else {
                    format!("{}.{frac}", q / SCALE)
                }
            }
        };
        if self.neg && body != "0" {
            format!("-{body}")
        } else {
            body
        }
    }
}

impl std::ops::Add for LongDouble {
    type Output = LongDouble;

    /// `self + other`, rounded as the x87 unit rounds (nearest, ties to even).
    fn add(self, other: LongDouble) -> LongDouble {
        use Kind::*;
        match (self.kind, other.kind) {
            (NaN, _) | (_, NaN) => LongDouble {
                neg: false,
                kind: NaN,
            },
            (Inf, Inf) if self.neg != other.neg => LongDouble {
                neg: false,
                kind: NaN,
            },
            (Inf, _) => self,
            (_, Inf) => other,
            (Zero, Zero) => LongDouble {
                neg: self.neg && other.neg,
                kind: Zero,
            },
            (Zero, _) => other,
            (_, Zero) => self,
            (Finite { mant: ma, exp: ea }, Finite { mant: mb, exp: eb }) => {
                let e = ea.min(eb);
                let a = Big::from_u128(u128::from(ma)).shl((ea - e) as u64);
                let b = Big::from_u128(u128::from(mb)).shl((eb - e) as u64);
                let (sum, neg) = if self.neg == other.neg {
                    (a.add(&b), self.neg)
                } else {
                    match a.cmp_big(&b) {
                        Ordering::Equal => return LongDouble::ZERO,
                        Ordering::Greater => {
                            let mut d = a;
                            d.sub_assign(&b);
                            (d, self.neg)
                        }
                        Ordering::Less => {
                            let mut d = b;
                            d.sub_assign(&a);
                            (d, other.neg)
                        }
                    }
                };
                let kind = match round(&sum, i64::from(e), false, EXTENDED) {
                    Rounded::Finite(mant, exp) => Finite {
                        mant: mant as u64,
                        exp: exp as i32,
                    },
                    Rounded::Overflow => Inf,
                    Rounded::Zero => Zero,
                };
                LongDouble { neg, kind }
            }
        }
    }
}

//! The binary forms of PostgreSQL's `uuid` and `numeric` types, which the `postgres` crate
//! has no Rust type for here (its `with-uuid-1` feature is off, and it has no NUMERIC type
//! at all). EdgeX's statements bind and read both columns in binary, and its readings go in
//! by binary `COPY`, which cannot cast text, so these two newtypes are what lets the store
//! send EdgeX's SQL text unchanged.
//!
//! `numeric` on the wire (PostgreSQL `src/backend/utils/adt/numeric.c`, `numeric_send` /
//! `numeric_recv`): `ndigits: i16, weight: i16, sign: u16, dscale: u16`, then `ndigits`
//! base-10000 digits as `i16`; the value is `Σ digit[i] × 10000^(weight − i)`, and `dscale`
//! is the number of decimal digits shown after the point. Encoding keeps the scale of the
//! text (`"1.50"` is 1.50, dscale 2, as `'1.50'::numeric` is), and decoding prints what
//! `numeric_out` prints, so a value reads back as PostgreSQL's own `::text` shows it.

use std::error::Error;

// `ToSql::to_sql` takes a `bytes::BytesMut`; `bytes` is not a direct dependency, and this
// re-export is the path `to_sql_checked!` itself expands to.
use postgres::types::private::BytesMut;
use postgres::types::{to_sql_checked, FromSql, IsNull, ToSql, Type};

type BoxError = Box<dyn Error + Sync + Send>;

const POSITIVE: u16 = 0x0000;
const NEGATIVE: u16 = 0x4000;
const NAN: u16 = 0xC000;
const PLUS_INFINITY: u16 = 0xD000;
const MINUS_INFINITY: u16 = 0xF000;
/// PostgreSQL's `NUMERIC_DSCALE_MAX`.
const MAX_DSCALE: i64 = 0x3FFF;

/// A UUID column value: binds a UUID's text (any form the `uuid` crate parses) as the 16
/// bytes of `uuid`, and reads them back as lowercase hyphenated text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Uuid(pub uuid::Uuid);

impl Uuid {
    /// `text` as a UUID, or `None` when it is not one.
    pub fn parse(text: &str) -> Option<Uuid> {
        uuid::Uuid::parse_str(text).ok().map(Uuid)
    }

    /// Lowercase and hyphenated, as [`crate::edgex::normalize_uuid`] writes it.
    pub fn text(&self) -> String {
        self.0.hyphenated().to_string()
    }
}

impl ToSql for Uuid {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        out.extend_from_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::UUID
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for Uuid {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        Ok(Uuid(uuid::Uuid::from_slice(raw)?))
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::UUID
    }
}

/// A `numeric` column value as decimal text: binds text such as `"42"`, `"-1.50"`,
/// `"1.5e+01"`, `"NaN"` or `"-Infinity"` (what Go's `strconv` and EdgeX's devices write),
/// and reads a value back (as `Numeric<String>`) as `numeric_out` prints it (`"15"`,
/// `"-1.50"`, `"NaN"`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Numeric<S = String>(pub S);

impl<S: AsRef<str> + std::fmt::Debug> ToSql for Numeric<S> {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        let (sign, weight, dscale, digits) = encode(self.0.as_ref())?;
        let header = [digits.len() as u16, weight as u16, sign, dscale];
        for word in header.into_iter().chain(digits.iter().map(|&d| d as u16)) {
            out.extend_from_slice(&word.to_be_bytes());
        }
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }

    to_sql_checked!();
}

impl<'a> FromSql<'a> for Numeric {
    fn from_sql(_: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        decode(raw).map(Numeric)
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::NUMERIC
    }
}

/// `(sign, weight, dscale, base-10000 digits)` of decimal `text`, without leading or
/// trailing zero digits (as PostgreSQL stores it).
fn encode(text: &str) -> Result<(u16, i16, u16, Vec<i16>), BoxError> {
    let invalid = || -> BoxError { format!("{text:?} is not a decimal number").into() };
    let t = text.trim();
    let (negative, unsigned) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if unsigned.eq_ignore_ascii_case("nan") && unsigned.len() == t.len() {
        return Ok((NAN, 0, 0, Vec::new()));
    }
    if unsigned.eq_ignore_ascii_case("infinity") || unsigned.eq_ignore_ascii_case("inf") {
        let sign = if negative {
            MINUS_INFINITY
        } else {
            PLUS_INFINITY
        };
        return Ok((sign, 0, 0, Vec::new()));
    }
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => {
            let e: i64 = unsigned[i + 1..].parse().map_err(|_| invalid())?;
            (&unsigned[..i], e)
        }
        None => (unsigned, 0),
    };
    let (int_part, frac_part) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if int_part.len() + frac_part.len() == 0 || !all_digits(int_part) || !all_digits(frac_part) {
        return Err(invalid());
    }
    // Bound the exponent before any arithmetic: PostgreSQL's own limit is far below this.
    if exponent.abs() > 1_000_000 {
        return Err(format!("{text:?} is out of NUMERIC's range").into());
    }
    let frac_len = frac_part.len() as i64;
    let dscale = (frac_len - exponent).max(0);
    if dscale > MAX_DSCALE {
        return Err(format!("{text:?} has more than {MAX_DSCALE} digits after the point").into());
    }
    // Digit j of `int_part ++ frac_part` has decimal exponent `point - 1 - j`.
    let point = int_part.len() as i64 + exponent;
    let decimal: Vec<(i64, i16)> = int_part
        .bytes()
        .chain(frac_part.bytes())
        .enumerate()
        .map(|(j, b)| (point - 1 - j as i64, i16::from(b - b'0')))
        .filter(|&(_, d)| d != 0)
        .collect();
    let (Some(&(top, _)), Some(&(bottom, _))) = (decimal.first(), decimal.last()) else {
        return Ok((POSITIVE, 0, dscale as u16, Vec::new()));
    };
    let weight = top.div_euclid(4);
    let lowest = bottom.div_euclid(4);
    let out_of_range = || -> BoxError { format!("{text:?} is out of NUMERIC's range").into() };
    let weight16 = i16::try_from(weight).map_err(|_| out_of_range())?;
    let ndigits = weight - lowest + 1;
    if ndigits > i64::from(i16::MAX) {
        return Err(out_of_range());
    }
    let mut digits = vec![0i16; ndigits as usize];
    for (k, d) in decimal {
        let group = k.div_euclid(4);
        digits[(weight - group) as usize] += d * 10i16.pow(k.rem_euclid(4) as u32);
    }
    let sign = if negative { NEGATIVE } else { POSITIVE };
    Ok((sign, weight16, dscale as u16, digits))
}

/// The text `numeric_out` prints for the binary value `raw`.
fn decode(raw: &[u8]) -> Result<String, BoxError> {
    let word = |i: usize| -> Result<u16, BoxError> {
        raw.get(2 * i..2 * i + 2)
            .map(|b| u16::from_be_bytes([b[0], b[1]]))
            .ok_or_else(|| "truncated numeric value".into())
    };
    let (ndigits, weight, sign, dscale) = (
        usize::from(word(0)?),
        i64::from(word(1)? as i16),
        word(2)?,
        word(3)? as usize,
    );
    match sign {
        NAN => return Ok("NaN".into()),
        PLUS_INFINITY => return Ok("Infinity".into()),
        MINUS_INFINITY => return Ok("-Infinity".into()),
        POSITIVE | NEGATIVE => {}
        other => return Err(format!("numeric value with unknown sign 0x{other:04x}").into()),
    }
    let digits = (0..ndigits)
        .map(|i| word(4 + i))
        .collect::<Result<Vec<u16>, _>>()?;
    // The digit of weight `w` (0 when not stored).
    let digit = |w: i64| -> u16 {
        usize::try_from(weight - w)
            .ok()
            .and_then(|i| digits.get(i).copied())
            .unwrap_or(0)
    };
    let mut out = String::new();
    if sign == NEGATIVE {
        out.push('-');
    }
    if weight < 0 {
        out.push('0');
    } else {
        out.push_str(&digit(weight).to_string());
        for w in (0..weight).rev() {
            out.push_str(&format!("{:04}", digit(w)));
        }
    }
    if dscale > 0 {
        let mut frac = String::with_capacity(dscale + 4);
        let mut w = -1;
        while frac.len() < dscale {
            frac.push_str(&format!("{:04}", digit(w)));
            w -= 1;
        }
        frac.truncate(dscale);
        out.push('.');
        out.push_str(&frac);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numeric_encoding_follows_postgres_layout() {
        let enc = |t: &str| encode(t).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(enc("42"), (POSITIVE, 0, 0, vec![42]));
        assert_eq!(enc("1.5"), (POSITIVE, 0, 1, vec![1, 5000]));
        assert_eq!(enc("-1.50"), (NEGATIVE, 0, 2, vec![1, 5000]));
        assert_eq!(enc("1.5e+01"), (POSITIVE, 0, 0, vec![15]));
        assert_eq!(enc("123456789"), (POSITIVE, 2, 0, vec![1, 2345, 6789]));
        assert_eq!(enc("0.00012"), (POSITIVE, -1, 5, vec![1, 2000]));
        assert_eq!(enc("0.000"), (POSITIVE, 0, 3, vec![]));
        assert_eq!(enc("10000"), (POSITIVE, 1, 0, vec![1]));
        assert_eq!(enc("NaN").0, NAN);
        assert_eq!(enc("-Inf").0, MINUS_INFINITY);
        for bad in ["", "-", "1.2.3", "1e", "0x10", "1,5", "e5", "."] {
            assert!(encode(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn numeric_text_round_trips_through_the_binary_form() {
        let round = |t: &str| {
            let (sign, weight, dscale, digits) = encode(t).unwrap_or_else(|e| panic!("{e}"));
            let mut raw = Vec::new();
            for w in [digits.len() as u16, weight as u16, sign, dscale]
                .into_iter()
                .chain(digits.iter().map(|&d| d as u16))
            {
                raw.extend_from_slice(&w.to_be_bytes());
            }
            decode(&raw).unwrap_or_else(|e| panic!("{e}"))
        };
        for same in [
            "42",
            "-7",
            "1.5",
            "1.50",
            "0",
            "0.000",
            "18446744073709551615",
            "0.00012",
        ] {
            assert_eq!(round(same), same);
        }
        assert_eq!(round("1.5e+01"), "15");
        assert_eq!(round("2.5E-3"), "0.0025");
        assert_eq!(round("+3"), "3");
        assert_eq!(round("-inf"), "-Infinity");
    }
}

//! A command's reply, before any encoding: the RESP2 and RESP3 writers
//! ([`encode`](mod@super::encode)) and the in-process `redis::Value` conversion (feature
//! `redis-rs`) all read this one type. It lives with the codec, beneath the engine, so the
//! codec needs nothing from above it.

use std::borrow::Cow;

/// A reply, in RESP3's vocabulary. RESP2 clients get the RESP2 equivalent of each kind
/// (see [`encode`](mod@super::encode)): maps and sets flatten to arrays, doubles become bulk
/// strings, booleans integers and nulls `$-1`/`*-1`.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// `+OK` and friends.
    Status(Cow<'static, str>),
    /// `-ERR ...`; the text includes the error code (`ERR`, `WRONGTYPE`, `EXECABORT`...).
    Error(Cow<'static, str>),
    /// `:n`.
    Int(i64),
    /// `$n` bulk string.
    Bulk(Vec<u8>),
    /// The null bulk string (`$-1` in RESP2, `_` in RESP3).
    Nil,
    /// The null array (`*-1` in RESP2, `_` in RESP3), e.g. EXEC after a WATCH abort.
    NilArray,
    /// `*n`.
    Array(Vec<Reply>),
    /// RESP3 double (`,`); a bulk string in RESP2.
    Double(f64),
    /// A double written with this exact text, as a RESP3 double (`,`) or a RESP2 bulk
    /// string: Redis's "human" long doubles (`%.17Lf`, trailing zeros cut; GEOPOS), which
    /// the `%.17g` of [`Reply::Double`] would print differently.
    HumanDouble(String),
    /// RESP3 map (`%`); a flat array in RESP2.
    Map(Vec<(Reply, Reply)>),
    /// RESP3 set (`~`); an array in RESP2.
    Set(Vec<Reply>),
    /// RESP3 boolean (`#`); `:1`/`:0` in RESP2.
    Bool(bool),
    /// RESP3 verbatim string (`=`, format "txt"); a bulk string in RESP2.
    Verbatim(String),
    /// RESP3 push (`>`), for pub/sub messages; an array in RESP2.
    Push(Vec<Reply>),
}

impl Reply {
    /// `+OK`.
    pub const fn ok() -> Reply {
        Reply::Status(Cow::Borrowed("OK"))
    }

    /// `+QUEUED`.
    pub const fn queued() -> Reply {
        Reply::Status(Cow::Borrowed("QUEUED"))
    }

    /// An error reply from a static text (include the code: `"ERR syntax error"`).
    pub const fn err(text: &'static str) -> Reply {
        Reply::Error(Cow::Borrowed(text))
    }

    /// A bulk string from bytes.
    pub fn bulk(bytes: &[u8]) -> Reply {
        Reply::Bulk(bytes.to_vec())
    }

    /// A bulk string, or nil.
    pub fn opt_bulk(bytes: Option<&[u8]>) -> Reply {
        bytes.map_or(Reply::Nil, Reply::bulk)
    }

    /// Whether this is an error reply.
    pub fn is_error(&self) -> bool {
        matches!(self, Reply::Error(_))
    }
}

/// Formats a double the way Redis 7.0 replies with one: C's `%.17g` (17 significant digits,
/// trailing zeros dropped, exponent form below 1e-4 and from 1e17), `inf`, `-inf`, `-0`.
pub fn format_f64(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if v == v.trunc() && v.abs() < 1e17 {
        // Integers print whole under %.17g; -0 keeps its sign.
        return if v == 0.0 && v.is_sign_negative() {
            "-0".into()
        } else {
            format!("{}", v as i64)
        };
    }
    // Rust rounds exactly (ties to even, as glibc): 17 significant digits, then laid out
    // as %g lays them out.
    let sci = format!("{v:.16e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (sign, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => ("-", m),
        None => ("", mantissa),
    };
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let trim = |s: String| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..17).contains(&exp) {
        let m = trim(format!("{}.{}", &digits[..1], &digits[1..]));
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{m}e{esign}{:02}", exp.unsigned_abs());
    }
    let fixed = if exp >= 0 {
        let point = exp as usize + 1;
        format!("{}.{}", &digits[..point], &digits[point..])
    } else {
        format!("0.{}{digits}", "0".repeat(exp.unsigned_abs() as usize - 1))
    };
    format!("{sign}{}", trim(fixed))
}

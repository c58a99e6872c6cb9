//! Unit tests of the C float conversions against glibc: `format_f64` is `%.17g`,
//! `parse_f64` is Redis's `string2d` with `strtod`'s fallback, and `long double` sums
//! print as Redis prints them.

use super::cfloat::{parse_c_double, LongDouble};
use crate::engine::cmd::{format_f64, parse_f64};
use crate::engine::CmdError;

/// glibc's `%.17g`, the oracle for `format_f64`.
fn printf_g17(v: f64) -> String {
    let mut buf = [0u8; 64];
    // SAFETY: the buffer is large enough for any %.17g output and NUL-terminated by
    // snprintf; the format takes exactly one double.
    let n = unsafe { libc::snprintf(buf.as_mut_ptr().cast(), buf.len(), c"%.17g".as_ptr(), v) };
    String::from_utf8_lossy(&buf[..n as usize]).into_owned()
}

/// glibc's `strtod` of the whole string (Redis's `string2d` rules), the oracle for
/// `parse_f64`.
fn c_strtod(s: &str) -> Option<f64> {
    let c = std::ffi::CString::new(s).ok()?;
    let mut end: *mut libc::c_char = std::ptr::null_mut();
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
    let v = unsafe { libc::strtod(c.as_ptr(), &mut end) };
    // SAFETY: strtod sets `end` inside `c`.
    let used = unsafe { end.offset_from(c.as_ptr()) } as usize;
    let digits = s.split(['e', 'E', 'p', 'P']).next().unwrap_or("");
    let nonzero_digits = digits
        .trim_start_matches(['+', '-'])
        .trim_start_matches("0x")
        .trim_start_matches("0X")
        .bytes()
        .any(|c| c.is_ascii_hexdigit() && c != b'0');
    let bad = s.is_empty()
        || s.starts_with(|c: char| c.is_ascii_whitespace())
        || used != s.len()
        || v.is_nan()
        || (v.is_infinite() && !s.to_ascii_lowercase().contains("inf"))
        || (v == 0.0 && nonzero_digits);
    (!bad).then_some(v)
}

#[test]
fn format_f64_is_printf_g17() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut values = vec![
        0.1,
        -0.0,
        0.0,
        1.0,
        1e17,
        1e16,
        123456789012345678.0,
        1e-4,
        1.5e-5,
        1e21,
        1e300,
        5e-324,
        f64::MAX,
        f64::MIN_POSITIVE,
        ((1u64 << 52) + 1) as f64 / 4.0,
        3.0000000000000004,
        -2.5,
        0.3,
    ];
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let v = f64::from_bits(x);
        if v.is_finite() {
            values.push(v);
        }
        values.push((x % 100_000) as f64 / 1000.0);
    }
    for v in values {
        assert_eq!(format_f64(v), printf_g17(v), "{v:e}");
    }
    assert_eq!(format_f64(f64::INFINITY), "inf");
    assert_eq!(format_f64(f64::NEG_INFINITY), "-inf");
}

#[test]
fn parse_f64_is_redis_string2d() {
    for s in [
        "1",
        "-1.5",
        "+2",
        ".5",
        "5.",
        "1e5",
        "1E+5",
        "1e-5",
        "0x10",
        "0X1p-2",
        "-0x1.8p1",
        "0x.8",
        "inf",
        "-inf",
        "+Infinity",
        "INF",
        "nan",
        "NaN",
        "1e400",
        "-1e400",
        "1e-400",
        "0e400",
        "0x0p99999",
        "0x1p-1074",
        "0x1p-1075",
        "0x1p-1076",
        "0x1.8p-1075",
        "0x1p1024",
        "4.9e-324",
        "2.4e-324",
        "2.5e-324",
        "1.7976931348623157e308",
        "1.7976931348623159e308",
        " 1",
        "1 ",
        "",
        "e5",
        "1e",
        "1e+",
        "0x",
        "0xg",
        "1.2.3",
        "--1",
        "0x1p",
        "1_0",
        "123456789012345678901234567890",
        "0.000000000000000000000000000001",
    ] {
        let ours = parse_f64(s.as_bytes()).ok();
        let theirs = c_strtod(s);
        assert_eq!(
            ours.map(f64::to_bits),
            theirs.map(f64::to_bits),
            "{s:?}: ours {ours:?} strtod {theirs:?}"
        );
    }
    assert_eq!(parse_f64(b"1\x00"), Err(CmdError::NotFloat));
    assert_eq!(parse_c_double(b"0x1.fffffffffffff8p1023"), None);
}

fn incr(a: &str, b: &str) -> Option<String> {
    let a = LongDouble::parse(a.as_bytes())?;
    let b = LongDouble::parse(b.as_bytes())?;
    let sum = a + b;
    sum.is_finite().then(|| sum.to_human())
}

#[test]
fn long_double_sums_print_as_redis_does() {
    // Expected values are redis-server 7.0's INCRBYFLOAT replies.
    let cases = [
        ("0.1", "0.2", "0.3"),
        ("10.5", "0.1", "10.6"),
        ("0.3", "1e30", "1000000000000000000024696061952"),
        ("0", "3.814697265625e-6", "0.00000381469726562"),
        ("1e-20", "0", "0"),
        ("0", "-1e-20", "0"),
        ("17", "-0.25", "16.75"),
        ("1", "0x10", "17"),
        ("0", "1e-4950", "0"),
        ("0", "5.0e3", "5000"),
        ("0", "1.5e17", "150000000000000000"),
        ("0", "12345678901234567890.123", "12345678901234567890"),
        ("3.0", "-3", "0"),
        ("-0", "-0", "0"),
        ("5", "-5.5", "-0.5"),
    ];
    for (a, b, want) in cases {
        assert_eq!(incr(a, b).as_deref(), Some(want), "{a} + {b}");
    }
    assert_eq!(incr("1", "inf"), None);
    for bad in [
        "", " 1", "1 ", "abc", "nan", "1e5000", "1e-4952", "1\x00", "0x", "1e",
    ] {
        assert_eq!(LongDouble::parse(bad.as_bytes()), None, "{bad:?}");
    }
    let long = |n: usize| [&b"0."[..], &vec![b'1'; n - 2]].concat();
    assert_eq!(
        LongDouble::parse(&long(5119))
            .map(|v| v.to_human())
            .as_deref(),
        Some("0.11111111111111111")
    );
    assert_eq!(LongDouble::parse(&long(5120)), None);
}

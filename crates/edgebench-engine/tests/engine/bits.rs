//! The bit commands (SETBIT, GETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD, BITFIELD_RO), LCS
//! and SUBSTR, differentially against a real redis-server (replies compared exactly, errors
//! included), plus a property test of BITOP/BITCOUNT/BITPOS against redis-server on random
//! strings.

use crate::support::diff::Diff;
use edgebench_engine::engine::cmd::bits::{
    BitOp, FieldAction, FieldOp, FieldType, LcsMatch, LcsOutcome, LcsReply, Overflow, RangeUnit,
};
use edgebench_engine::engine::Engine;
use proptest::prelude::*;

/// A list at `key` on both sides, for WRONGTYPE cases.
fn make_list(d: &mut Diff, key: &str) {
    d.check(&[&["RPUSH", key, "x"]]);
}

#[test]
fn setbit_and_getbit_match_redis() {
    let mut d = Diff::new();
    make_list(&mut d, "list");
    d.check(&[
        &["SETBIT", "b", "7", "1"],
        &["GET", "b"],
        &["SETBIT", "b", "7", "1"],
        &["SETBIT", "b", "7", "0"],
        &["SETBIT", "b", "0", "1"],
        &["GETBIT", "b", "0"],
        &["GETBIT", "b", "1"],
        &["GETBIT", "b", "7"],
        &["GETBIT", "b", "100"],
        &["GETBIT", "missing", "3"],
        &["SETBIT", "b", "100", "1"],
        &["STRLEN", "b"],
        &["GET", "b"],
        // Growing a string never shrinks it, and clearing a bit past the end grows it.
        &["SETBIT", "b", "200", "0"],
        &["STRLEN", "b"],
        &["SETBIT", "fresh", "31", "0"],
        &["GET", "fresh"],
        // A big offset (a 1 MB string).
        &["SETBIT", "big", "8388607", "1"],
        &["STRLEN", "big"],
        &["GETBIT", "big", "8388607"],
        &["GETBIT", "big", "8388606"],
        // Integer-looking strings are their text.
        &["SET", "n", "12"],
        &["GETBIT", "n", "2"],
        &["GETBIT", "n", "3"],
        &["SETBIT", "n", "6", "1"],
        &["GET", "n"],
        // Errors: offsets, bit values, types, arity.
        &["SETBIT", "b", "-1", "1"],
        &["SETBIT", "b", "4294967296", "1"],
        &["SETBIT", "b", "99999999999999999999", "1"],
        &["SETBIT", "b", "abc", "1"],
        &["SETBIT", "b", "#1", "1"],
        &["SETBIT", "b", "1", "2"],
        &["SETBIT", "b", "1", "-1"],
        &["SETBIT", "b", "1", "x"],
        &["SETBIT", "b", "x", "x"],
        &["SETBIT", "list", "1", "1"],
        &["SETBIT", "list", "-1", "1"],
        &["SETBIT", "b", "1"],
        &["SETBIT", "b", "1", "1", "1"],
        &["GETBIT", "b", "-1"],
        &["GETBIT", "b", "4294967296"],
        &["GETBIT", "b", "4294967295"],
        &["GETBIT", "list", "1"],
        &["GETBIT", "list", "x"],
        &["GETBIT", "b"],
    ]);
}

#[test]
fn bitcount_matches_redis() {
    let mut d = Diff::new();
    make_list(&mut d, "list");
    d.check(&[
        &["SET", "s", "foobar"],
        &["BITCOUNT", "s"],
        &["BITCOUNT", "s", "0", "0"],
        &["BITCOUNT", "s", "1", "1"],
        &["BITCOUNT", "s", "1", "-2"],
        &["BITCOUNT", "s", "-3", "-1"],
        &["BITCOUNT", "s", "-100", "100"],
        &["BITCOUNT", "s", "4", "2"],
        &["BITCOUNT", "s", "-1", "-3"],
        &["BITCOUNT", "s", "10", "20"],
        &["BITCOUNT", "s", "5", "5", "BYTE"],
        &["BITCOUNT", "s", "5", "30", "BIT"],
        &["BITCOUNT", "s", "5", "30", "bit"],
        &["BITCOUNT", "s", "0", "-1", "BIT"],
        &["BITCOUNT", "s", "-5", "-1", "BIT"],
        &["BITCOUNT", "s", "3", "3", "BIT"],
        &["BITCOUNT", "s", "1", "6", "BIT"],
        &["BITCOUNT", "s", "9", "14", "BIT"],
        &["BITCOUNT", "s", "47", "100", "BIT"],
        &["BITCOUNT", "s", "48", "100", "BIT"],
        &[
            "BITCOUNT",
            "s",
            "-9223372036854775808",
            "9223372036854775807",
            "BIT",
        ],
        &["BITCOUNT", "missing"],
        &["BITCOUNT", "missing", "0", "-1"],
        // A missing key is 0 before the arguments are read.
        &["BITCOUNT", "missing", "x"],
        &["BITCOUNT", "missing", "a", "b", "c", "d"],
        &["SET", "empty", ""],
        &["BITCOUNT", "empty"],
        &["BITCOUNT", "empty", "0", "-1", "BIT"],
        &["SET", "ones", "\u{7f}\u{7f}\u{7f}"],
        &["BITCOUNT", "ones"],
        &["SET", "n", "255"],
        &["BITCOUNT", "n"],
        // Errors, in Redis's order.
        &["BITCOUNT", "s", "0"],
        &["BITCOUNT", "s", "0", "1", "BIT", "x"],
        &["BITCOUNT", "s", "a", "1"],
        &["BITCOUNT", "s", "0", "b"],
        &["BITCOUNT", "s", "0", "1", "WORD"],
        // Crossed negative bounds are 0 before the unit is checked.
        &["BITCOUNT", "s", "-1", "-2", "WORD"],
        &["BITCOUNT", "list"],
        &["BITCOUNT", "list", "0", "x"],
        &["BITCOUNT"],
    ]);
}

#[test]
fn bitpos_matches_redis() {
    let mut d = Diff::new();
    make_list(&mut d, "list");
    d.check(&[
        &["SETBIT", "s", "20", "1"],
        &["SETBIT", "s", "30", "1"],
        &["BITPOS", "s", "1"],
        &["BITPOS", "s", "0"],
        &["BITPOS", "s", "1", "1"],
        &["BITPOS", "s", "1", "3"],
        &["BITPOS", "s", "1", "-1"],
        &["BITPOS", "s", "1", "0", "-1"],
        &["BITPOS", "s", "1", "0", "1"],
        &["BITPOS", "s", "1", "2", "1"],
        &["BITPOS", "s", "1", "21", "-1", "BIT"],
        &["BITPOS", "s", "1", "20", "20", "BIT"],
        &["BITPOS", "s", "1", "21", "29", "BIT"],
        &["BITPOS", "s", "1", "-20", "-1", "BIT"],
        &["BITPOS", "s", "0", "20", "20", "BIT"],
        &["BITPOS", "s", "0", "20", "21", "bit"],
        &["BITPOS", "s", "0", "0", "-1", "BYTE"],
        &["SET", "ones", "\u{7f}"],
        &["SETBIT", "ones", "0", "1"],
        &["GET", "ones"],
        // All ones: a zero is past the end, unless an end was given.
        &["BITPOS", "ones", "0"],
        &["BITPOS", "ones", "0", "0"],
        &["BITPOS", "ones", "0", "0", "-1"],
        &["BITPOS", "ones", "0", "0", "7", "BIT"],
        &["BITPOS", "ones", "0", "2", "5", "BIT"],
        &["BITPOS", "ones", "1", "3", "5", "BIT"],
        &["SET", "zeros", "\u{0}\u{0}\u{0}"],
        &["BITPOS", "zeros", "1"],
        &["BITPOS", "zeros", "0"],
        &["BITPOS", "zeros", "1", "1", "-1"],
        &["BITPOS", "zeros", "0", "9", "-1", "BIT"],
        &["SET", "empty", ""],
        &["BITPOS", "empty", "0"],
        &["BITPOS", "empty", "1"],
        &["BITPOS", "empty", "0", "0", "-1", "BIT"],
        &["BITPOS", "missing", "0"],
        &["BITPOS", "missing", "1"],
        &["BITPOS", "missing", "1", "x"],
        &["BITPOS", "s", "1", "10", "2"],
        &["BITPOS", "s", "1", "-1", "-5"],
        &["BITPOS", "s", "0", "100"],
        &["BITPOS", "s", "0", "-100", "100"],
        // A longer string, to cross word boundaries.
        &[
            "SET",
            "long",
            "\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{0}\u{1}",
        ],
        &["BITPOS", "long", "1"],
        &["BITPOS", "long", "1", "3", "-1"],
        &["BITPOS", "long", "1", "17", "94", "BIT"],
        &["BITPOS", "long", "0", "3"],
        // Errors.
        &["BITPOS", "s", "2"],
        &["BITPOS", "s", "-1"],
        &["BITPOS", "s", "x"],
        &["BITPOS", "missing", "2"],
        &["BITPOS", "s", "1", "x"],
        &["BITPOS", "s", "1", "0", "x"],
        &["BITPOS", "s", "1", "0", "1", "WORD"],
        &["BITPOS", "s", "1", "x", "1", "WORD"],
        &["BITPOS", "s", "1", "0", "x", "WORD"],
        &["BITPOS", "s", "1", "0", "1", "BIT", "x"],
        &["BITPOS", "list", "1"],
        &["BITPOS", "list", "2"],
        &["BITPOS", "s"],
    ]);
}

#[test]
fn bitop_matches_redis() {
    let mut d = Diff::new();
    make_list(&mut d, "list");
    d.check(&[
        &["SET", "a", "foobar"],
        &["SET", "b", "abcdef"],
        &["SET", "c", "xyz"],
        &["BITOP", "AND", "dest", "a", "b"],
        &["GET", "dest"],
        &["BITOP", "or", "dest", "a", "c"],
        &["GET", "dest"],
        &["BITOP", "Xor", "dest", "a", "b", "c"],
        &["GET", "dest"],
        &["BITOP", "AND", "dest", "a", "c"],
        &["GET", "dest"],
        &["BITOP", "AND", "dest", "a", "missing"],
        &["GET", "dest"],
        &["BITOP", "NOT", "dest", "a"],
        &["GET", "dest"],
        &["BITOP", "NOT", "dest", "dest"],
        &["GET", "dest"],
        &["BITOP", "OR", "dest", "a"],
        &["GET", "dest"],
        // The destination loses its TTL and its old type.
        &["EXPIRE", "dest", "100"],
        &["BITOP", "OR", "dest", "a"],
        &["TTL", "dest"],
        &["BITOP", "OR", "list2", "a"],
        &["RPUSH", "l3", "x"],
        &["BITOP", "OR", "l3", "a"],
        &["TYPE", "l3"],
        // Only missing or empty sources: the destination is deleted.
        &["BITOP", "OR", "dest", "missing", "missing2"],
        &["EXISTS", "dest"],
        &["SET", "empty", ""],
        &["SET", "dest", "x"],
        &["BITOP", "AND", "dest", "empty"],
        &["EXISTS", "dest"],
        &["BITOP", "NOT", "dest", "missing"],
        // Long inputs (past Redis's word-at-a-time path).
        &[
            "SET",
            "la",
            "0123456789abcdefghijklmnopqrstuvwxyz0123456789",
        ],
        &[
            "SET",
            "lb",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
        ],
        &["BITOP", "AND", "d2", "la", "lb"],
        &["GET", "d2"],
        &["BITOP", "XOR", "d2", "la", "lb", "la"],
        &["GET", "d2"],
        &["BITOP", "NOT", "d2", "lb"],
        &["GET", "d2"],
        // Errors.
        &["BITOP", "NAND", "dest", "a"],
        &["BITOP", "NOT", "dest", "a", "b"],
        &["BITOP", "NAND", "dest", "a", "b"],
        &["BITOP", "AND", "dest", "a", "list"],
        &["BITOP", "NOT", "dest", "list"],
        &["BITOP", "AND", "dest"],
        &["BITOP", "AND"],
    ]);
}

#[test]
fn bitfield_matches_redis() {
    let mut d = Diff::new();
    make_list(&mut d, "list");
    d.check(&[
        &["BITFIELD", "f", "SET", "i8", "0", "100", "GET", "i8", "0"],
        &["GET", "f"],
        &["BITFIELD", "f", "INCRBY", "i8", "0", "100"],
        &[
            "BITFIELD", "f", "GET", "u8", "0", "GET", "i4", "0", "GET", "u4", "4",
        ],
        &["BITFIELD", "f", "SET", "u5", "7", "23", "GET", "u5", "7"],
        &["GET", "f"],
        &[
            "BITFIELD", "f", "SET", "i16", "#1", "-300", "GET", "i16", "#1",
        ],
        &["BITFIELD", "f", "GET", "i64", "0", "GET", "u63", "1"],
        &["BITFIELD", "f", "GET", "u8", "1000"],
        &["BITFIELD", "f"],
        &["BITFIELD", "missing"],
        &["BITFIELD", "missing", "GET", "i8", "0"],
        &["EXISTS", "missing"],
        // Overflow modes, switching mid-command.
        &["BITFIELD", "o", "SET", "u8", "0", "250"],
        &["BITFIELD", "o", "INCRBY", "u8", "0", "10"],
        &[
            "BITFIELD", "o", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "300",
        ],
        &[
            "BITFIELD", "o", "OVERFLOW", "SAT", "INCRBY", "u8", "0", "-1000",
        ],
        &[
            "BITFIELD", "o", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "-1", "GET", "u8", "0",
        ],
        &[
            "BITFIELD", "o", "OVERFLOW", "fail", "INCRBY", "u8", "0", "1", "OVERFLOW", "WRAP",
            "INCRBY", "u8", "0", "-2",
        ],
        &[
            "BITFIELD", "o", "SET", "i8", "8", "127", "INCRBY", "i8", "8", "1",
        ],
        &[
            "BITFIELD", "o", "OVERFLOW", "SAT", "INCRBY", "i8", "8", "-300",
        ],
        &[
            "BITFIELD", "o", "OVERFLOW", "SAT", "INCRBY", "i8", "8", "1000",
        ],
        &[
            "BITFIELD", "o", "OVERFLOW", "FAIL", "SET", "i8", "8", "128", "SET", "i8", "8", "-128",
        ],
        &[
            "BITFIELD", "o", "OVERFLOW", "SAT", "SET", "i8", "8", "1000", "SET", "u4", "16", "-1",
        ],
        &[
            "BITFIELD", "o", "SET", "i8", "8", "1000", "SET", "u4", "16", "-1",
        ],
        &[
            "BITFIELD",
            "o",
            "OVERFLOW",
            "SAT",
            "SET",
            "i8",
            "8",
            "-9223372036854775808",
        ],
        &[
            "BITFIELD",
            "o",
            "OVERFLOW",
            "SAT",
            "SET",
            "i8",
            "8",
            "9223372036854775807",
        ],
        &[
            "BITFIELD",
            "o",
            "OVERFLOW",
            "SAT",
            "SET",
            "u8",
            "0",
            "-9223372036854775808",
        ],
        &[
            "BITFIELD",
            "o",
            "SET",
            "i64",
            "0",
            "9223372036854775807",
            "INCRBY",
            "i64",
            "0",
            "1",
        ],
        &[
            "BITFIELD",
            "o",
            "OVERFLOW",
            "SAT",
            "INCRBY",
            "i64",
            "0",
            "-1",
            "INCRBY",
            "i64",
            "0",
            "-9223372036854775808",
        ],
        &[
            "BITFIELD",
            "o",
            "OVERFLOW",
            "SAT",
            "INCRBY",
            "i64",
            "0",
            "9223372036854775807",
            "INCRBY",
            "i64",
            "0",
            "9223372036854775807",
        ],
        &[
            "BITFIELD",
            "o",
            "OVERFLOW",
            "FAIL",
            "SET",
            "i64",
            "0",
            "-1",
            "INCRBY",
            "i64",
            "0",
            "-9223372036854775808",
        ],
        &[
            "BITFIELD",
            "o",
            "SET",
            "u63",
            "0",
            "9223372036854775807",
            "INCRBY",
            "u63",
            "0",
            "1",
        ],
        &[
            "BITFIELD",
            "o",
            "OVERFLOW",
            "SAT",
            "INCRBY",
            "u63",
            "0",
            "-5",
            "INCRBY",
            "u63",
            "0",
            "9223372036854775807",
        ],
        &[
            "BITFIELD", "o", "SET", "i1", "0", "1", "GET", "i1", "0", "GET", "u1", "0",
        ],
        &[
            "BITFIELD", "o", "OVERFLOW", "SAT", "INCRBY", "i1", "5", "1", "INCRBY", "i1", "5", "-3",
        ],
        &["GET", "o"],
        // Offsets: #N in fields, plain bits, limits.
        &[
            "BITFIELD", "g", "SET", "u8", "#3", "255", "GET", "u8", "24", "GET", "u8", "#3",
        ],
        &["STRLEN", "g"],
        &["BITFIELD", "g", "SET", "u4", "4294967292", "1"],
        &["BITFIELD", "g", "GET", "u8", "#536870911"],
        &["BITFIELD", "g", "GET", "u8", "#536870912"],
        &["BITFIELD", "g", "GET", "u8", "4294967296"],
        &["BITFIELD", "g", "GET", "u8", "-1"],
        &["BITFIELD", "g", "GET", "u8", "#-1"],
        &["BITFIELD", "g", "GET", "u8", "#"],
        &["BITFIELD", "g", "GET", "i64", "#144115188075855872"],
        // Types.
        &["BITFIELD", "g", "GET", "i65", "0"],
        &["BITFIELD", "g", "GET", "u64", "0"],
        &["BITFIELD", "g", "GET", "u0", "0"],
        &["BITFIELD", "g", "GET", "i0", "0"],
        &["BITFIELD", "g", "GET", "x8", "0"],
        &["BITFIELD", "g", "GET", "I8", "0"],
        &["BITFIELD", "g", "GET", "i", "0"],
        &["BITFIELD", "g", "GET", "i08", "0"],
        &["BITFIELD", "g", "GET", "", "0"],
        // Syntax, values, overflow names, order of errors.
        &["BITFIELD", "g", "GET", "i8"],
        &["BITFIELD", "g", "SET", "i8", "0"],
        &["BITFIELD", "g", "INCRBY", "i8", "0"],
        &["BITFIELD", "g", "FOO", "i8", "0"],
        &["BITFIELD", "g", "OVERFLOW"],
        &["BITFIELD", "g", "OVERFLOW", "BOUNCE"],
        &["BITFIELD", "g", "SET", "i8", "0", "x"],
        &["BITFIELD", "g", "INCRBY", "i8", "0", "1.5"],
        &["BITFIELD", "g", "GET", "i8", "0", "SET", "i99", "0", "1"],
        &["BITFIELD", "list", "GET", "i8", "0"],
        &["BITFIELD", "list", "SET", "i8", "0", "1"],
        &["BITFIELD", "list", "SET", "i8", "0", "x"],
        &["BITFIELD", "list"],
        &["BITFIELD"],
        // BITFIELD_RO: GET only, checked after the parse and before the type.
        &["BITFIELD_RO", "f", "GET", "i8", "0", "GET", "u16", "4"],
        &["BITFIELD_RO", "missing", "GET", "i8", "0"],
        &["BITFIELD_RO", "f"],
        &["BITFIELD_RO", "f", "OVERFLOW", "SAT", "GET", "u8", "0"],
        &["BITFIELD_RO", "f", "SET", "i8", "0", "1"],
        &["BITFIELD_RO", "f", "INCRBY", "i8", "0", "1"],
        &["BITFIELD_RO", "list", "SET", "i8", "0", "1"],
        &["BITFIELD_RO", "list", "GET", "i8", "0"],
        &["BITFIELD_RO", "f", "SET", "i8", "0", "x"],
        &["BITFIELD_RO", "f", "GET", "u64", "0"],
        &["BITFIELD_RO"],
        &["GET", "f"],
    ]);
}

#[test]
fn lcs_matches_redis() {
    let mut d = Diff::new();
    make_list(&mut d, "list");
    d.check(&[
        &["MSET", "k1", "ohmytext", "k2", "mynewtext"],
        &["LCS", "k1", "k2"],
        &["LCS", "k1", "k2", "LEN"],
        &["LCS", "k1", "k2", "IDX"],
        &["LCS", "k1", "k2", "IDX", "MINMATCHLEN", "4"],
        &["LCS", "k1", "k2", "IDX", "MINMATCHLEN", "4", "WITHMATCHLEN"],
        &[
            "LCS",
            "k1",
            "k2",
            "idx",
            "withmatchlen",
            "minmatchlen",
            "-3",
        ],
        &["LCS", "k1", "k2", "MINMATCHLEN", "2"],
        &["LCS", "k1", "k2", "WITHMATCHLEN"],
        &["LCS", "k1", "k2", "LEN", "LEN"],
        &["LCS", "k1", "missing"],
        &["LCS", "missing", "k1", "IDX"],
        &["LCS", "missing", "missing2", "LEN"],
        &["LCS", "k1", "k1", "IDX", "WITHMATCHLEN"],
        &["MSET", "a", "aaaabbbbaaaa", "b", "abababab"],
        &["LCS", "a", "b"],
        &["LCS", "a", "b", "IDX", "WITHMATCHLEN"],
        &["LCS", "b", "a", "IDX", "WITHMATCHLEN"],
        &[
            "MSET",
            "x",
            "ACCGGTCGAGTGCGCGGAAGCCGGCCGAA",
            "y",
            "GTCGTTCGGAATGCCGTTGCTCTGTAAA",
        ],
        &["LCS", "x", "y"],
        &["LCS", "x", "y", "IDX", "MINMATCHLEN", "2", "WITHMATCHLEN"],
        &["MSET", "n1", "12345", "n2", "2468"],
        &["LCS", "n1", "n2"],
        // Errors.
        &["LCS", "k1", "k2", "LEN", "IDX"],
        &["LCS", "k1", "k2", "MINMATCHLEN"],
        &["LCS", "k1", "k2", "MINMATCHLEN", "x"],
        &["LCS", "k1", "k2", "FOO"],
        &["LCS", "k1", "list"],
        &["LCS", "list", "k1", "FOO"],
        &["LCS", "k1"],
    ]);
    // In RESP3, IDX replies with a map. HELLO's reply carries the client id, which differs.
    let _ = d.both(&["HELLO", "3"]);
    d.check(&[
        &["LCS", "k1", "k2", "IDX", "WITHMATCHLEN"],
        &["LCS", "k1", "missing", "IDX"],
        &[
            "BITFIELD", "k1", "GET", "u8", "0", "OVERFLOW", "FAIL", "INCRBY", "u8", "0", "200",
        ],
    ]);
}

/// LCS refuses a table over 512 MiB with Redis's error (two strings of 12 kB make a
/// 576 MB table), and LEN and IDX agree with redis-server on strings of a few kB.
#[test]
fn lcs_bounds_its_table_like_redis() {
    let mut d = Diff::new();
    let a: String = (0..12_000)
        .map(|i| (b'a' + (i * 7 % 13) as u8) as char)
        .collect();
    let b: String = (0..12_000)
        .map(|i| (b'a' + (i * 5 % 11) as u8) as char)
        .collect();
    d.check(&[
        &["SET", "a", &a],
        &["SET", "b", &b],
        &["LCS", "a", "b"],
        &["LCS", "a", "b", "LEN"],
        &["LCS", "a", "b", "IDX"],
        &["SETRANGE", "a", "3000", "x"],
        &["GETRANGE", "a", "0", "-1"],
        &["SET", "a", &a[..3000]],
        &["SET", "b", &b[..2000]],
        &["LCS", "a", "b", "LEN"],
        &["LCS", "a", "b"],
        &["LCS", "a", "b", "IDX", "MINMATCHLEN", "3", "WITHMATCHLEN"],
    ]);
}

#[test]
fn substr_matches_redis() {
    let mut d = Diff::new();
    make_list(&mut d, "list");
    d.check(&[
        &["SET", "s", "This is a string"],
        &["SUBSTR", "s", "0", "3"],
        &["SUBSTR", "s", "-3", "-1"],
        &["SUBSTR", "s", "0", "-1"],
        &["SUBSTR", "s", "10", "100"],
        &["SUBSTR", "s", "5", "2"],
        &["SUBSTR", "s", "-1", "-5"],
        &["SUBSTR", "s", "-100", "2"],
        &["SUBSTR", "missing", "0", "-1"],
        &["SUBSTR", "s", "x", "1"],
        &["SUBSTR", "s", "0", "x"],
        &["SUBSTR", "list", "0", "1"],
        &["SUBSTR", "list", "x", "1"],
        &["SUBSTR", "s", "0"],
    ]);
}

/// Key positions, as COMMAND GETKEYS reports them.
#[test]
fn getkeys_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["COMMAND", "GETKEYS", "BITOP", "AND", "d", "a", "b"],
        &["COMMAND", "GETKEYS", "LCS", "a", "b"],
        &["COMMAND", "GETKEYS", "BITFIELD_RO", "a", "GET", "i8", "0"],
    ]);
}

/// A random byte string, as a command argument (Latin-1 bytes in UTF-8 would change the
/// length; printable ASCII plus the all-zero and all-one bytes do not need to).
fn bytes() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just('\u{0}'),
            Just('\u{7f}'),
            (0x20u8..0x7f).prop_map(char::from)
        ],
        0..40,
    )
    .prop_map(|v| v.into_iter().collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// BITOP, BITCOUNT and BITPOS over random strings and ranges reply as redis-server does.
    #[test]
    fn random_bit_commands_match_redis(
        a in bytes(),
        b in bytes(),
        op in prop::sample::select(vec!["AND", "OR", "XOR", "NOT"]),
        ranges in prop::collection::vec((-50i64..50, -50i64..50, any::<bool>()), 1..6),
    ) {
        let mut d = Diff::new();
        d.check(&[&["SET", "a", &a], &["SET", "b", &b]]);
        if op == "NOT" {
            d.check(&[&["BITOP", op, "r", "a"]]);
        } else {
            d.check(&[&["BITOP", op, "r", "a", "b"]]);
        }
        d.check(&[&["GET", "r"]]);
        for (start, end, bit_unit) in ranges {
            let (s, e) = (start.to_string(), end.to_string());
            let unit = if bit_unit { "BIT" } else { "BYTE" };
            d.check(&[
                &["BITCOUNT", "a", &s, &e, unit],
                &["BITPOS", "a", "1", &s, &e, unit],
                &["BITPOS", "a", "0", &s, &e, unit],
                &["BITPOS", "a", "0", &s],
                &["BITPOS", "b", "1", &s],
            ]);
        }
    }
}

/// Writes keep the key's TTL (BITOP replaces the key, so its TTL goes); a write that
/// changes nothing does not abort a transaction WATCHing the key, one that does aborts it.
#[test]
fn ttls_and_watch_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["SET", "k", "\u{1}"],
        &["EXPIRE", "k", "100"],
        &["SETBIT", "k", "0", "1"],
        &["BITFIELD", "k", "SET", "u8", "8", "3"],
        &["TTL", "k"],
        &["GET", "k"],
    ]);
    let unchanged: &[&[&str]] = &[
        &["SETBIT", "k", "7", "1"],
        &["SETBIT", "k", "6", "0"],
        &["BITFIELD", "k", "SET", "u8", "8", "3"],
        &[
            "BITFIELD", "k", "INCRBY", "u8", "8", "0", "GET", "i8", "100",
        ],
        &[
            "BITFIELD", "k", "OVERFLOW", "FAIL", "INCRBY", "u8", "8", "1000",
        ],
        &["BITFIELD_RO", "k", "GET", "u8", "0"],
        &["GETBIT", "k", "3"],
        &["BITCOUNT", "k"],
        &["LCS", "k", "k"],
    ];
    let changed: &[&[&str]] = &[
        &["SETBIT", "k", "7", "0"],
        &["SETBIT", "k", "100", "0"],
        &["BITFIELD", "k", "SET", "u8", "8", "4"],
        &["BITFIELD", "k", "SET", "u8", "800", "0"],
        &["BITFIELD", "fresh", "SET", "u8", "0", "0"],
        &["BITOP", "OR", "k", "k"],
    ];
    for cmd in unchanged.iter().chain(changed) {
        let key = if cmd[1] == "fresh" { "fresh" } else { "k" };
        d.check(&[
            &["WATCH", key],
            cmd,
            &["MULTI"],
            &["PING"],
            &["EXEC"],
            &["GET", key],
        ]);
    }
}

/// A BITFIELD operation's words: a subcommand, a type, an offset (plain or `#n`) and a
/// value near the edges of the types.
fn field_op() -> impl Strategy<Value = Vec<String>> {
    let ty = prop_oneof![
        (1u32..=64).prop_map(|n| format!("i{n}")),
        (1u32..=63).prop_map(|n| format!("u{n}")),
    ];
    let offset = prop_oneof![
        (0u32..80).prop_map(|n| n.to_string()),
        (0u32..6).prop_map(|n| format!("#{n}")),
    ];
    let value = prop_oneof![
        any::<i64>(),
        -300i64..300,
        prop::sample::select(vec![
            i64::MIN,
            i64::MAX,
            i64::MIN + 1,
            i64::MAX - 1,
            1 << 62,
            -(1 << 62),
            (1 << 31) - 1,
            -(1 << 31)
        ]),
    ];
    let sub = prop::sample::select(vec!["GET", "SET", "INCRBY", "OVERFLOW"]);
    let mode = prop::sample::select(vec!["WRAP", "SAT", "FAIL"]);
    (sub, ty, offset, value, mode).prop_map(|(sub, ty, offset, value, mode)| match sub {
        "GET" => vec![sub.to_string(), ty, offset],
        "OVERFLOW" => vec![sub.to_string(), mode.to_string()],
        _ => vec![sub.to_string(), ty, offset, value.to_string()],
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Random BITFIELD commands (every type, overflow mode and extreme value) reply, and
    /// leave the string, as redis-server does.
    #[test]
    fn random_bitfields_match_redis(
        commands in prop::collection::vec(prop::collection::vec(field_op(), 1..5), 1..8),
    ) {
        let mut d = Diff::new();
        for ops in commands {
            let mut args = vec!["BITFIELD".to_string(), "f".to_string()];
            args.extend(ops.into_iter().flatten());
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            d.check(&[&args, &["GET", "f"]]);
        }
    }
}

/// The typed operations behind the commands, without argument parsing.
#[test]
fn typed_api_matches_the_commands() {
    let engine = Engine::new();
    let db = engine.db(0);
    let keys = [&b"b"[..], b"c", b"d", b"h", b"x", b"y", b"missing"];
    let mut ks = db.lock(keys, engine.now_ms());
    assert_eq!(ks.setbit(b"b", 9, true), Ok(false));
    assert_eq!(ks.setbit(b"b", 9, true), Ok(true));
    assert_eq!(ks.getbit(b"b", 9), Ok(true));
    assert_eq!(ks.get_str(b"b"), Ok(Some(&vec![0x00, 0x40])));
    assert_eq!(ks.bitcount(b"b", None), Ok(1));
    assert_eq!(ks.bitcount(b"b", Some((0, 8, RangeUnit::Bit))), Ok(0));
    assert_eq!(ks.bitpos(b"b", true, 0, None, RangeUnit::Byte), Ok(9));
    assert_eq!(ks.bitpos(b"b", false, 9, Some(9), RangeUnit::Bit), Ok(-1));
    assert_eq!(ks.bitop(BitOp::Not, b"c", &[b"b"]), Ok(2));
    assert_eq!(ks.get_str(b"c"), Ok(Some(&vec![0xff, 0xbf])));
    assert_eq!(ks.bitop(BitOp::And, b"c", &[b"missing"]), Ok(0));
    assert_eq!(ks.get_str(b"c"), Ok(None));
    let op = |action, signed, bits, offset, overflow| FieldOp {
        action,
        ty: FieldType { signed, bits },
        offset,
        overflow,
    };
    let ops = [
        op(FieldAction::Set(-2), true, 4, 0, Overflow::Wrap),
        op(FieldAction::IncrBy(20), true, 4, 0, Overflow::Sat),
        op(FieldAction::IncrBy(20), true, 4, 0, Overflow::Fail),
        op(FieldAction::Get, false, 8, 0, Overflow::Wrap),
    ];
    assert_eq!(
        ks.bitfield(b"d", &ops),
        Ok(vec![Some(0), Some(7), None, Some(0x70)])
    );
    ks.set(b"x", b"ohmytext".to_vec());
    ks.set(b"y", b"mynewtext".to_vec());
    assert_eq!(
        ks.lcs(b"x", b"y", LcsReply::String),
        Ok(LcsOutcome::String(b"mytext".to_vec()))
    );
    assert_eq!(ks.lcs(b"x", b"y", LcsReply::Len), Ok(LcsOutcome::Len(6)));
    let idx = LcsReply::Idx {
        min_len: 3,
        with_len: false,
    };
    let longest = LcsMatch {
        a: (4, 7),
        b: (5, 8),
    };
    assert_eq!(
        ks.lcs(b"x", b"y", idx),
        Ok(LcsOutcome::Idx(vec![longest], 6))
    );
    assert_eq!(
        ks.pfadd(b"x", &[b"a"]).map_err(|e| e.to_string()),
        Err("WRONGTYPE Key is not a valid HyperLogLog string value.".to_string())
    );
    assert!(ks.pfadd(b"d", &[b"a"]).is_err());
    assert_eq!(ks.pfadd(b"h", &[b"a", b"b", b"c"]), Ok(true));
    assert_eq!(ks.pfadd(b"h", &[b"a"]), Ok(false));
    assert_eq!(ks.pfcount(&[b"h"]), Ok(3));
    assert_eq!(ks.pfmerge(b"missing", &[b"h"]), Ok(()));
    assert_eq!(ks.pfcount(&[b"h", b"missing"]), Ok(3));
}

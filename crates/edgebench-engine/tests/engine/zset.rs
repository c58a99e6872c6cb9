//! Sorted sets, differentially against a real redis-server (every command of the family,
//! with edge and error cases), plus the typed API, RESP3 reply shapes, and a property test
//! of the engine against a simple model (a Vec sorted by (score, member)). One command
//! family's tests, so one file even past 800 lines.

use std::ops::Bound::{Excluded, Included, Unbounded};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::set::check_pick;
use crate::support::diff::{elements, Diff};
use edgebench_engine::engine::cmd::zset::{ZRange, ZRangeBy};
use edgebench_engine::engine::types::zset::AddFlags;
use edgebench_engine::engine::{CmdError, Engine, Reply};
use proptest::prelude::*;

#[test]
fn zadd_options_replies_and_errors_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["ZADD", "z", "1", "a"],
        &["ZADD", "z", "1", "a", "2", "b", "3", "c"],
        &["ZADD", "z", "NX", "10", "a", "4", "d"],
        &["ZADD", "z", "XX", "10", "a", "5", "e"],
        &["ZADD", "z", "XX", "CH", "11", "a", "5", "e"],
        &["ZADD", "z", "CH", "11", "a", "12", "b", "6", "f"],
        &["ZADD", "z", "GT", "CH", "1", "a", "20", "b", "7", "g"],
        &["ZADD", "z", "LT", "CH", "100", "a", "1", "b"],
        &["ZADD", "z", "XX", "GT", "CH", "50", "a"],
        &["ZADD", "z", "INCR", "5", "a"],
        &["ZADD", "z", "INCR", "GT", "-5", "a"],
        &["ZADD", "z", "INCR", "LT", "-5", "a"],
        &["ZADD", "z", "XX", "INCR", "1", "nosuch"],
        &["ZADD", "z", "NX", "INCR", "1", "a"],
        &["ZADD", "z", "NX", "CH", "INCR", "2", "q"],
        &["ZADD", "z", "nx", "ch", "Incr", "2", "q2"],
        &["ZRANGE", "z", "0", "-1", "WITHSCORES"],
        // Option conflicts, in Redis's order of checks.
        &["ZADD", "z", "NX", "XX", "1", "a"],
        &["ZADD", "z", "NX", "GT", "1", "a"],
        &["ZADD", "z", "NX", "LT", "1", "a"],
        &["ZADD", "z", "GT", "LT", "1", "a"],
        &["ZADD", "z", "XX", "GT", "LT", "1", "a"],
        &["ZADD", "z", "INCR", "1", "a", "2", "b"],
        &["ZADD", "z", "NX", "XX", "1"],
        &["ZADD", "z", "NX", "XX", "x", "a"],
        &["ZADD", "z", "1", "a", "2"],
        &["ZADD", "z", "NX"],
        &["ZADD", "z", "INCR"],
        &["ZADD", "z"],
        &["ZADD", "z", "1"],
        // Scores: all parsed before anything changes.
        &["ZADD", "z", "1", "a", "x", "b"],
        &["ZADD", "z", "nan", "a"],
        &["ZADD", "z", "1e400", "a"],
        &["ZADD", "z", "1e-400", "a"],
        &["ZADD", "z", " 1", "a"],
        &["ZADD", "z", "1 ", "a"],
        &["ZADD", "z", "", "a"],
        &["ZADD", "z", "INCR", "nan", "a"],
        &["ZSCORE", "z", "a"],
        &[
            "ZADD", "s", "0x10", "hex", "infinity", "i", "-INF", "ni", "+1.5", "p", ".5", "h",
        ],
        &[
            "ZADD", "s", "5.", "five", "1e5", "e5", "0x1p-2", "quarter", "2.5e-310", "tiny",
        ],
        &["ZRANGE", "s", "0", "-1", "WITHSCORES"],
        // XX on a missing key creates nothing.
        &["ZADD", "missing", "XX", "1", "a"],
        &["ZADD", "missing", "XX", "INCR", "1", "a"],
        &["EXISTS", "missing"],
        // Wrong type: option and float errors still come first.
        &["SET", "str", "x"],
        &["ZADD", "str", "1", "a"],
        &["ZADD", "str", "x", "a"],
        &["ZADD", "str", "NX", "XX", "1", "a"],
        &["ZINCRBY", "str", "1", "a"],
    ]);
}

#[test]
fn scores_print_like_redis_7_0() {
    let mut d = Diff::new();
    d.check(&[
        &[
            "ZADD",
            "f",
            "1.1",
            "a",
            "0.1",
            "b",
            "1e30",
            "c",
            "3",
            "d",
            "1.5",
            "e",
            "-0",
            "f",
            "1e17",
            "g",
            "123456789012345678",
            "h",
            "1e-5",
            "i",
            "0.30000000000000004",
            "j",
            "1e16",
            "k",
            "12345678.9",
            "l",
            "-2.5",
            "m",
            "inf",
            "n",
            "-inf",
            "o",
        ],
        &["ZRANGE", "f", "0", "-1", "WITHSCORES"],
        &["ZSCORE", "f", "a"],
        &["ZSCORE", "f", "f"],
        &["ZMSCORE", "f", "a", "c", "nosuch", "n"],
        &["ZINCRBY", "f", "0.2", "b"],
        &["ZINCRBY", "f", "1", "c"],
        &["ZINCRBY", "f", "-0", "newzero"],
        &["ZSCORE", "f", "newzero"],
        &["ZINCRBY", "f", "-inf", "n"],
        &["ZSCORE", "f", "n"],
        &["ZADD", "f", "INCR", "-inf", "n"],
        &["ZADD", "f", "INCR", "1", "n"],
        &["ZSCAN", "f", "0"],
        &[
            "ZADD",
            "p",
            "4611686018427387904",
            "i",
            "4611686018427387905",
            "j",
            "9e18",
            "k",
        ],
        &["ZADD", "p", "-4611686018427387904", "l", "-0", "z"],
        &["ZSCAN", "p", "0"],
    ]);
}

#[test]
fn zincrby_parses_like_zadd_incr() {
    let mut d = Diff::new();
    d.check(&[
        &["ZINCRBY", "z", "1", "m"],
        &["ZINCRBY", "z", "2.5", "m"],
        &["ZINCRBY", "z", "-10", "m"],
        &["ZINCRBY", "z", "nx", "m"],
        &["ZINCRBY", "z", "incr", "m"],
        &["ZINCRBY", "z", "gt", "m"],
        &["ZINCRBY", "z", "x", "m"],
        &["ZINCRBY", "z", "nan", "m"],
        &["ZINCRBY", "z", "1"],
        &["ZINCRBY", "z", "1", "m", "extra"],
        &["ZADD", "z", "inf", "m"],
        &["ZINCRBY", "z", "-inf", "m"],
        &["ZINCRBY", "z", "1", "m"],
        &["ZSCORE", "z", "m"],
    ]);
}

#[test]
fn zrem_zcard_zscore_zmscore_zrank_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["ZADD", "z", "1", "a", "2", "b", "3", "c", "3", "d"],
        &["ZCARD", "z"],
        &["ZCARD", "nokey"],
        &["ZSCORE", "z", "c"],
        &["ZSCORE", "z", "nosuch"],
        &["ZSCORE", "nokey", "a"],
        &["ZMSCORE", "z", "a", "nosuch", "d"],
        &["ZMSCORE", "nokey", "a", "b"],
        &["ZRANK", "z", "a"],
        &["ZRANK", "z", "d"],
        &["ZREVRANK", "z", "a"],
        &["ZREVRANK", "z", "d"],
        &["ZRANK", "z", "nosuch"],
        &["ZREVRANK", "nokey", "a"],
        &["ZRANK", "z", "a", "WITHSCORE"],
        &["ZREVRANK", "z"],
        &["ZREM", "z", "a", "nosuch", "a"],
        &["ZREM", "nokey", "a"],
        &["ZREM", "z", "b", "c", "d"],
        &["EXISTS", "z"],
        &["ZCARD", "z"],
        &["ZREM", "z"],
        &["ZSCORE", "z"],
        &["ZMSCORE", "z"],
        &["ZCARD"],
        &["SET", "str", "x"],
        &["ZREM", "str", "a"],
        &["ZCARD", "str"],
        &["ZSCORE", "str", "a"],
        &["ZMSCORE", "str", "a"],
        &["ZRANK", "str", "a"],
        &["ZREVRANK", "str", "a"],
    ]);
}

#[test]
fn zrange_by_rank_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &[
            "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e",
        ],
        &["ZRANGE", "z", "0", "-1"],
        &["ZRANGE", "z", "0", "-1", "WITHSCORES"],
        &["ZRANGE", "z", "1", "3"],
        &["ZRANGE", "z", "-2", "-1"],
        &["ZRANGE", "z", "-100", "100"],
        &["ZRANGE", "z", "3", "1"],
        &["ZRANGE", "z", "5", "10"],
        &["ZRANGE", "z", "0", "-6"],
        &["ZRANGE", "z", "-9223372036854775808", "9223372036854775807"],
        &["ZRANGE", "z", "0", "1", "REV"],
        &["ZRANGE", "z", "-2", "-1", "REV", "WITHSCORES"],
        &["ZRANGE", "z", "0", "-1", "withscores", "rev"],
        &["ZREVRANGE", "z", "0", "1"],
        &["ZREVRANGE", "z", "0", "-1", "WITHSCORES"],
        &["ZREVRANGE", "z", "-1", "-1"],
        &["ZREVRANGE", "z", "3", "100"],
        &["ZRANGE", "nokey", "0", "-1"],
        // LIMIT is rejected by rank, unless its count is -1 (Redis's "no limit").
        &["ZRANGE", "z", "0", "-1", "LIMIT", "0", "1"],
        &["ZRANGE", "z", "0", "-1", "LIMIT", "0", "-1"],
        &["ZRANGE", "z", "0", "-1", "LIMIT", "5", "-1"],
        &["ZRANGE", "z", "0", "-1", "LIMIT", "0"],
        &["ZRANGE", "z", "0", "-1", "LIMIT", "x", "1"],
        &["ZRANGE", "nokey", "0", "1", "LIMIT", "0", "1"],
        &["ZREVRANGE", "z", "0", "1", "LIMIT", "0", "1"],
        &["ZRANGE", "z", "0", "x"],
        &["ZRANGE", "z", "x", "1"],
        &["ZRANGE", "z", "01", "1"],
        &["ZRANGE", "z", "0", "1", "REV", "REV"],
        &["ZRANGE", "z", "0", "1", "BYSCORE", "BYSCORE"],
        &["ZRANGE", "z", "0", "1", "BYLEX", "BYSCORE"],
        &["ZRANGE", "z", "0", "1", "foo"],
        &["ZREVRANGE", "z", "0", "1", "REV"],
        &["ZRANGE", "z", "0"],
        &["SET", "str", "x"],
        &["ZRANGE", "str", "0", "-1"],
        &["ZRANGE", "str", "x", "1"],
        &["ZREVRANGE", "str", "0", "1"],
    ]);
}

#[test]
fn zrange_by_score_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &[
            "ZADD", "z", "-inf", "ninf", "1", "a", "2", "b", "2", "bb", "3", "c", "4", "d",
        ],
        &["ZADD", "z", "inf", "pinf", "0.5", "half"],
        &["ZRANGEBYSCORE", "z", "-inf", "+inf"],
        &["ZRANGEBYSCORE", "z", "-inf", "inf", "WITHSCORES"],
        &["ZRANGEBYSCORE", "z", "(1", "3"],
        &["ZRANGEBYSCORE", "z", "(1", "(3"],
        &["ZRANGEBYSCORE", "z", "2", "2"],
        &["ZRANGEBYSCORE", "z", "(2", "2"],
        &["ZRANGEBYSCORE", "z", "3", "1"],
        &["ZRANGEBYSCORE", "z", "(-inf", "(inf"],
        &["ZRANGEBYSCORE", "z", "(inf", "+inf"],
        &["ZRANGEBYSCORE", "z", "", ""],
        &["ZRANGEBYSCORE", "z", "(", "+inf"],
        &["ZRANGEBYSCORE", "z", " 1", "2"],
        &["ZRANGEBYSCORE", "z", "1e400", "inf"],
        &["ZRANGEBYSCORE", "z", "0x1", "0x2"],
        &["ZRANGEBYSCORE", "z", "1", "2", "LIMIT", "0", "2"],
        &[
            "ZRANGEBYSCORE",
            "z",
            "-inf",
            "inf",
            "LIMIT",
            "2",
            "3",
            "WITHSCORES",
        ],
        &["ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "-1", "2"],
        &["ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "1", "-1"],
        &["ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "1", "-5"],
        &["ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "1", "0"],
        &["ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "100", "1"],
        &[
            "ZRANGEBYSCORE",
            "z",
            "1",
            "2",
            "WITHSCORES",
            "WITHSCORES",
            "LIMIT",
            "0",
            "1",
            "LIMIT",
            "1",
            "1",
        ],
        &["ZREVRANGEBYSCORE", "z", "+inf", "-inf"],
        &["ZREVRANGEBYSCORE", "z", "3", "(1", "WITHSCORES"],
        &["ZREVRANGEBYSCORE", "z", "1", "3"],
        &["ZREVRANGEBYSCORE", "z", "inf", "-inf", "LIMIT", "1", "2"],
        &["ZRANGE", "z", "(1", "3", "BYSCORE"],
        &["ZRANGE", "z", "(1", "3", "BYSCORE", "REV"],
        &["ZRANGE", "z", "3", "(1", "BYSCORE", "REV", "WITHSCORES"],
        &[
            "ZRANGE",
            "z",
            "3",
            "1",
            "BYSCORE",
            "REV",
            "LIMIT",
            "1",
            "1",
            "WITHSCORES",
        ],
        &[
            "ZRANGE", "z", "-inf", "inf", "REV", "BYSCORE", "LIMIT", "0", "3",
        ],
        &["ZRANGE", "nokey", "-inf", "inf", "BYSCORE"],
        // Errors.
        &["ZRANGEBYSCORE", "z", "x", "1"],
        &["ZRANGEBYSCORE", "z", "1", "nan"],
        &["ZRANGEBYSCORE", "z", "1e", "2"],
        &["ZRANGEBYSCORE", "z", "((1", "2"],
        &["ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "1"],
        &["ZRANGEBYSCORE", "z", "-inf", "inf", "LIMIT", "x", "1"],
        &["ZRANGEBYSCORE", "z", "x", "inf", "LIMIT", "x", "1"],
        &["ZRANGEBYSCORE", "z", "-inf", "inf", "REV"],
        &["ZRANGEBYSCORE", "z", "0", "1", "BYLEX"],
        &["ZREVRANGEBYSCORE", "z", "1", "0", "BYSCORE"],
        &["ZRANGE", "z", "x", "0", "BYSCORE"],
        &["ZRANGEBYSCORE", "z", "0"],
        &["SET", "str", "x"],
        &["ZRANGEBYSCORE", "str", "0", "1"],
        &["ZRANGEBYSCORE", "str", "x", "1"],
    ]);
}

#[test]
fn zrange_by_lex_and_zlexcount_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &[
            "ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d", "0", "e", "0", "ab", "0", "",
        ],
        &["ZRANGEBYLEX", "l", "-", "+"],
        &["ZRANGEBYLEX", "l", "[a", "[c"],
        &["ZRANGEBYLEX", "l", "(a", "(c"],
        &["ZRANGEBYLEX", "l", "[", "(b"],
        &["ZRANGEBYLEX", "l", "(", "+"],
        &["ZRANGEBYLEX", "l", "[c", "[a"],
        &["ZRANGEBYLEX", "l", "[c", "(c"],
        &["ZRANGEBYLEX", "l", "-", "-"],
        &["ZRANGEBYLEX", "l", "+", "+"],
        &["ZRANGEBYLEX", "l", "+", "-"],
        &["ZRANGEBYLEX", "l", "-", "[b", "LIMIT", "1", "2"],
        &["ZRANGEBYLEX", "l", "-", "+", "LIMIT", "-1", "2"],
        &["ZRANGEBYLEX", "l", "-", "+", "LIMIT", "2", "-1"],
        &["ZREVRANGEBYLEX", "l", "+", "-"],
        &["ZREVRANGEBYLEX", "l", "[c", "(a"],
        &["ZREVRANGEBYLEX", "l", "-", "+"],
        &["ZREVRANGEBYLEX", "l", "+", "-", "LIMIT", "1", "3"],
        &["ZRANGE", "l", "[b", "[d", "BYLEX"],
        &["ZRANGE", "l", "[d", "[b", "BYLEX", "REV"],
        &["ZRANGE", "l", "+", "-", "BYLEX", "REV", "LIMIT", "0", "2"],
        &["ZLEXCOUNT", "l", "-", "+"],
        &["ZLEXCOUNT", "l", "[b", "(d"],
        &["ZLEXCOUNT", "l", "[d", "[b"],
        &["ZLEXCOUNT", "nokey", "-", "+"],
        // Members of different scores: Redis walks its listpack linearly.
        &["ZADD", "m", "1", "b", "2", "a", "3", "d", "4", "c"],
        &["ZRANGEBYLEX", "m", "[b", "+"],
        &["ZRANGEBYLEX", "m", "-", "[b"],
        &["ZRANGEBYLEX", "m", "(a", "+"],
        &["ZRANGEBYLEX", "m", "[c", "+"],
        &["ZRANGEBYLEX", "m", "[d", "+"],
        &["ZREVRANGEBYLEX", "m", "+", "[b"],
        &["ZREVRANGEBYLEX", "m", "[c", "-"],
        &["ZREVRANGEBYLEX", "m", "(a", "-"],
        &["ZLEXCOUNT", "m", "[b", "+"],
        &["ZLEXCOUNT", "m", "-", "(c"],
        // Errors.
        &["ZRANGEBYLEX", "l", "a", "+"],
        &["ZRANGEBYLEX", "l", "", "+"],
        &["ZRANGEBYLEX", "l", "[a", "+x"],
        &["ZRANGEBYLEX", "l", "-a", "+"],
        &["ZRANGEBYLEX", "l", "-", "+", "WITHSCORES"],
        &["ZRANGE", "l", "-", "+", "BYLEX", "WITHSCORES"],
        &[
            "ZRANGE",
            "l",
            "-",
            "+",
            "LIMIT",
            "0",
            "1",
            "BYLEX",
            "WITHSCORES",
        ],
        &["ZRANGE", "l", "0", "1", "BYLEX"],
        &["ZRANGEBYLEX", "l", "-", "+", "LIMIT", "0"],
        &["ZLEXCOUNT", "l", "a", "b"],
        &["ZLEXCOUNT", "l", "-"],
        &["SET", "str", "x"],
        &["ZRANGEBYLEX", "str", "-", "+"],
        &["ZRANGE", "str", "0", "1", "BYLEX"],
        &["ZLEXCOUNT", "str", "-", "+"],
    ]);
}

#[test]
fn zcount_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &[
            "ZADD", "z", "1", "a", "2", "b", "3", "c", "inf", "i", "-inf", "ni",
        ],
        &["ZCOUNT", "z", "-inf", "+inf"],
        &["ZCOUNT", "z", "(1", "3"],
        &["ZCOUNT", "z", "(1", "(3"],
        &["ZCOUNT", "z", "3", "1"],
        &["ZCOUNT", "z", "(-inf", "(inf"],
        &["ZCOUNT", "nokey", "0", "1"],
        &["ZCOUNT", "z", "x", "1"],
        &["ZCOUNT", "z", "1"],
        &["SET", "str", "x"],
        &["ZCOUNT", "str", "0", "1"],
        &["ZCOUNT", "str", "x", "1"],
    ]);
}

#[test]
fn zremrange_commands_match_redis() {
    let mut d = Diff::new();
    let fill: &[&str] = &[
        "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e", "6", "f",
    ];
    d.check(&[
        fill,
        &["ZREMRANGEBYRANK", "z", "0", "0"],
        &["ZREMRANGEBYRANK", "z", "-2", "-1"],
        &["ZREMRANGEBYRANK", "z", "5", "10"],
        &["ZREMRANGEBYRANK", "z", "2", "1"],
        &["ZRANGE", "z", "0", "-1"],
        &["ZREMRANGEBYRANK", "z", "-100", "100"],
        &["EXISTS", "z"],
        &["ZREMRANGEBYRANK", "z", "0", "-1"],
        &["ZREMRANGEBYRANK", "z", "x", "1"],
        fill,
        &["ZREMRANGEBYSCORE", "z", "(1", "2"],
        &["ZREMRANGEBYSCORE", "z", "5", "3"],
        &["ZREMRANGEBYSCORE", "z", "(5", "+inf"],
        &["ZRANGE", "z", "0", "-1", "WITHSCORES"],
        &["ZREMRANGEBYSCORE", "z", "-inf", "+inf"],
        &["EXISTS", "z"],
        &["ZREMRANGEBYSCORE", "z", "x", "1"],
        &["ZADD", "l", "0", "a", "0", "b", "0", "c", "0", "d"],
        &["ZREMRANGEBYLEX", "l", "(a", "[b"],
        &["ZREMRANGEBYLEX", "l", "[z", "-"],
        &["ZRANGE", "l", "0", "-1"],
        &["ZREMRANGEBYLEX", "l", "-", "+"],
        &["EXISTS", "l"],
        &["ZREMRANGEBYLEX", "l", "a", "+"],
        &["ZADD", "m", "1", "b", "2", "a", "3", "d", "4", "c"],
        &["ZREMRANGEBYLEX", "m", "[a", "[b"],
        &["ZRANGE", "m", "0", "-1"],
        &["ZREMRANGEBYRANK", "nokey", "0", "-1"],
        &["ZREMRANGEBYSCORE", "nokey", "-inf", "inf"],
        &["ZREMRANGEBYLEX", "nokey", "-", "+"],
        &["ZREMRANGEBYRANK", "z", "0"],
        &["ZREMRANGEBYRANK", "z", "0", "1", "2"],
        &["SET", "str", "x"],
        &["ZREMRANGEBYRANK", "str", "0", "1"],
        &["ZREMRANGEBYRANK", "str", "x", "1"],
        &["ZREMRANGEBYSCORE", "str", "0", "1"],
        &["ZREMRANGEBYLEX", "str", "-", "+"],
    ]);
}

#[test]
fn zpopmin_zpopmax_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &[
            "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e",
        ],
        &["ZPOPMIN", "z"],
        &["ZPOPMAX", "z"],
        &["ZPOPMIN", "z", "2"],
        &["ZPOPMIN", "z", "0"],
        &["ZPOPMAX", "z", "10"],
        &["EXISTS", "z"],
        &["ZPOPMIN", "z"],
        &["ZPOPMAX", "nokey", "3"],
        &["ZPOPMIN", "z", "-1"],
        &["ZPOPMIN", "z", "x"],
        &["ZPOPMIN", "z", "1", "2"],
        &["ZPOPMIN"],
        &["SET", "str", "x"],
        &["ZPOPMIN", "str"],
        &["ZPOPMIN", "str", "0"],
        &["ZPOPMAX", "str", "-1"],
        &["ZPOPMAX", "str", "1", "2"],
    ]);
}

#[test]
fn zscan_of_a_small_set_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &[
            "ZADD", "m", "1", "b", "2", "a", "3", "d", "4", "c", "1.5", "ab",
        ],
        &["ZSCAN", "m", "0"],
        &["ZSCAN", "m", "7", "COUNT", "1"],
        &["ZSCAN", "m", "0", "MATCH", "a*"],
        &["ZSCAN", "m", "0", "MATCH", "*", "COUNT", "5", "MATCH", "?"],
        &["ZSCAN", "m", "0", "count", "2", "match", "[a-b]"],
        &["ZSCAN", "m", "-1"],
        &["ZSCAN", "m", ""],
        &["ZSCAN", "m", "+3"],
        &["ZSCAN", "m", "0", "COUNT", "0"],
        &["ZSCAN", "m", "0", "COUNT", "x"],
        &["ZSCAN", "m", "0", "MATCH"],
        &["ZSCAN", "m", "0", "TYPE", "zset"],
        &["ZSCAN", "m", "x"],
        &["ZSCAN", "m", " 1"],
        &["ZSCAN", "m", "18446744073709551616"],
        &["ZSCAN", "nokey", "0"],
        &["ZSCAN", "nokey", "0", "COUNT", "0"],
        &["ZSCAN", "nokey", "x"],
        &["ZSCAN", "m"],
        &["SET", "str", "x"],
        &["ZSCAN", "str", "0"],
        &["ZSCAN", "str", "x"],
        &["ZSCAN", "str", "0", "COUNT", "0"],
    ]);
}

/// Runs a whole ZSCAN on both servers; returns each side's (member, score) pairs, sorted.
fn full_scan(d: &mut Diff, key: &str, extra: &[&str]) -> (Vec<String>, Vec<String>) {
    let mut sides = Vec::new();
    for engine in [false, true] {
        let mut cursor = "0".to_string();
        let mut seen = Vec::new();
        loop {
            let mut args = vec!["ZSCAN", key, &cursor];
            args.extend_from_slice(extra);
            let (real, ours) = d.both(&args);
            let reply = if engine { ours } else { real };
            // The reply is redis-rs's Debug form: array([bulk-string('"0"'), array([...])]).
            let items: Vec<String> = reply
                .split("bulk-string('\"")
                .skip(1)
                .map(|s| s.split("\"')").next().unwrap_or("").to_string())
                .collect();
            assert!(!items.is_empty(), "{reply}");
            cursor = items[0].clone();
            seen.extend(items[1..].chunks(2).map(|p| p.join("=")));
            if cursor == "0" {
                break;
            }
        }
        seen.sort();
        seen.dedup();
        sides.push(seen);
    }
    let ours = sides.pop().unwrap_or_default();
    let real = sides.pop().unwrap_or_default();
    (ours, real)
}

#[test]
fn large_sets_match_redis() {
    let mut d = Diff::new();
    // 300 members with distinct scores, and 300 with one score (lex ranges).
    let members: Vec<String> = (0..300).map(|i| format!("m{i:03}")).collect();
    let scores: Vec<String> = (0..300).map(|i| format!("{}.5", i * 7 % 300)).collect();
    let mut zadd: Vec<&str> = vec!["ZADD", "big"];
    let mut lex: Vec<&str> = vec!["ZADD", "lexbig"];
    for (m, s) in members.iter().zip(&scores) {
        zadd.extend([s.as_str(), m.as_str()]);
        lex.extend(["0", m.as_str()]);
    }
    d.check(&[
        &zadd,
        &lex,
        &["ZCARD", "big"],
        &["ZRANGE", "big", "0", "4", "WITHSCORES"],
        &["ZRANGE", "big", "-5", "-1", "WITHSCORES"],
        &["ZRANGE", "big", "290", "1000"],
        &["ZRANGE", "big", "150", "152"],
        &["ZRANGE", "big", "0", "2", "REV"],
        &["ZRANGE", "big", "-3", "-1", "REV"],
        &["ZRANGE", "big", "148", "150", "REV", "WITHSCORES"],
        &["ZRANK", "big", "m123"],
        &["ZREVRANK", "big", "m123"],
        &["ZRANGEBYSCORE", "big", "(100", "110", "WITHSCORES"],
        &["ZRANGEBYSCORE", "big", "-inf", "+inf", "LIMIT", "295", "10"],
        &["ZREVRANGEBYSCORE", "big", "+inf", "-inf", "LIMIT", "0", "3"],
        &["ZCOUNT", "big", "(10", "20"],
        &["ZRANGEBYLEX", "lexbig", "[m100", "(m105"],
        &["ZREVRANGEBYLEX", "lexbig", "(m105", "[m100"],
        &["ZRANGEBYLEX", "lexbig", "-", "+", "LIMIT", "297", "5"],
        &["ZLEXCOUNT", "lexbig", "(m010", "[m020"],
        &["ZREMRANGEBYLEX", "lexbig", "[m000", "[m149"],
        &["ZCARD", "lexbig"],
        &["ZREMRANGEBYRANK", "big", "-10", "-1"],
        &["ZREMRANGEBYSCORE", "big", "(50", "60"],
        &["ZREMRANGEBYRANK", "big", "0", "9"],
        &["ZRANGE", "big", "0", "2", "WITHSCORES"],
        &["ZRANGE", "big", "-2", "-1", "WITHSCORES"],
        &["ZCARD", "big"],
        &["ZPOPMAX", "big", "2"],
        &["ZPOPMIN", "big"],
    ]);
    // A large set is scanned in pages, in an order of its own: compare what a whole scan
    // returns, as sets of member=score.
    let (ours, real) = full_scan(&mut d, "big", &[]);
    assert_eq!(ours, real);
    assert_eq!(ours.len(), 300 - 10 - 10 - 10 - 3);
    let (ours, real) = full_scan(&mut d, "big", &["MATCH", "m1*", "COUNT", "7"]);
    assert_eq!(ours, real);
    // A member longer than 64 bytes also makes a large set.
    let long = "x".repeat(65);
    d.check(&[&["ZADD", "long", "1", "a", "2", &long, "1.5", "b"]]);
    let (ours, real) = full_scan(&mut d, "long", &[]);
    assert_eq!(ours, real);
}

#[test]
fn writes_that_change_nothing_do_not_abort_watchers() {
    let mut d = Diff::new();
    let mut other = d.engine.client();
    d.check(&[&["ZADD", "z", "1", "a", "2", "b"]]);
    let noops: &[&[&[u8]]] = &[
        &[b"ZADD", b"z", b"NX", b"5", b"a"],
        &[b"ZADD", b"z", b"1", b"a"],
        &[b"ZADD", b"z", b"XX", b"1", b"nosuch"],
        &[b"ZADD", b"z", b"GT", b"0", b"a"],
        &[b"ZINCRBY", b"z", b"0", b"a"],
        &[b"ZREM", b"z", b"nosuch"],
        &[b"ZREMRANGEBYSCORE", b"z", b"10", b"20"],
        &[b"ZREMRANGEBYRANK", b"z", b"5", b"6"],
        &[b"ZREMRANGEBYLEX", b"z", b"[x", b"[y"],
        &[b"ZPOPMIN", b"z", b"0"],
    ];
    for noop in noops {
        d.check(&[&["WATCH", "z"]]);
        d.engine.execute(&mut other, noop);
        d.check(&[&["MULTI"], &["ZCARD", "z"], &["EXEC"]]);
    }
    // A real change does abort (engine only: the other client exists only there).
    let mut run = |args: &[&[u8]]| d.engine.execute(&mut d.client, args);
    run(&[b"WATCH", b"z"]);
    d.engine.execute(&mut other, &[b"ZADD", b"z", b"3", b"a"]);
    let mut run = |args: &[&[u8]]| d.engine.execute(&mut d.client, args);
    assert_eq!(run(&[b"MULTI"]), Reply::ok());
    assert_eq!(run(&[b"ZCARD", b"z"]), Reply::queued());
    assert_eq!(run(&[b"EXEC"]), Reply::NilArray);
}

// ---- the typed API and RESP3 ----

fn engine() -> Engine {
    Engine::with_clock(Arc::new(AtomicU64::new(1_000)))
}

#[test]
fn typed_api_works_without_argument_parsing() {
    let e = engine();
    let mut ks = e.db(0).lock([&b"k"[..]], e.now_ms());
    let added = ks
        .zadd(
            b"k",
            AddFlags::default(),
            &[(2.0, b"b"), (1.0, b"a"), (3.0, b"c")],
        )
        .expect("zadd");
    assert_eq!((added.added, added.updated), (3, 0));
    assert_eq!(ks.zcard(b"k"), Ok(3));
    assert_eq!(ks.zscore(b"k", b"b"), Ok(Some(2.0)));
    assert_eq!(ks.zincrby(b"k", 10.0, b"a"), Ok(11.0));
    assert_eq!(ks.zrank(b"k", b"a", false), Ok(Some(2)));
    assert_eq!(ks.zrank(b"k", b"a", true), Ok(Some(0)));
    assert_eq!(
        ks.zrange(b"k", &ZRange::rank(0, -1)),
        Ok(vec![b"b".to_vec(), b"c".to_vec(), b"a".to_vec()])
    );
    let mut limited = ZRange::score(Excluded(2.0), Unbounded);
    limited.limit = Some((0, 1));
    assert_eq!(ks.zrange(b"k", &limited), Ok(vec![b"c".to_vec()]));
    assert_eq!(ks.zcount(b"k", Included(2.0), Included(3.0)), Ok(2));
    assert_eq!(ks.zmscore(b"k", &[b"c", b"x"]), Ok(vec![Some(3.0), None]));
    let nan = AddFlags {
        incr: true,
        ..AddFlags::default()
    };
    assert_eq!(
        ks.zadd(b"k", AddFlags::default(), &[(f64::INFINITY, b"a")])
            .map(|a| a.updated),
        Ok(1)
    );
    assert!(ks.zadd(b"k", nan, &[(f64::NEG_INFINITY, b"a")]).is_err());
    assert_eq!(
        ks.zadd(b"k", AddFlags::default(), &[(f64::NAN, b"a")])
            .map(|_| ()),
        Err(CmdError::NotFloat)
    );
    assert_eq!(ks.zremrange(b"k", ZRangeBy::Rank(0, 0)), Ok(1));
    assert_eq!(ks.zpop(b"k", true, 5).map(|v| v.len()), Ok(2));
    assert_eq!(ks.zcard(b"k"), Ok(0));
    assert!(!ks.exists(b"k"), "an emptied sorted set is deleted");
    // Released first: with the hasher's per-process seed, "s" shares "k"'s shard one run
    // in 64, and a second lock of it here would wait forever.
    drop(ks);
    let mut ks = e.db(0).lock([&b"s"[..]], e.now_ms());
    ks.insert(
        b"s",
        edgebench_engine::engine::Entry::new(edgebench_engine::engine::Value::Str(b"x".to_vec())),
    );
    assert_eq!(ks.zcard(b"s"), Err(CmdError::WrongType));
}

#[test]
fn resp3_replies_carry_doubles_and_pairs() {
    let e = engine();
    let mut c = e.client();
    c.resp = 3;
    let run = |c: &mut edgebench_engine::engine::Client, args: &[&str]| {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        e.execute(c, &argv)
    };
    run(&mut c, &["ZADD", "z", "1", "a", "2.5", "b", "3", "c"]);
    let pair = |m: &str, s: f64| Reply::Array(vec![Reply::Bulk(m.into()), Reply::Double(s)]);
    assert_eq!(run(&mut c, &["ZSCORE", "z", "b"]), Reply::Double(2.5));
    assert_eq!(
        run(&mut c, &["ZRANGE", "z", "0", "1", "WITHSCORES"]),
        Reply::Array(vec![pair("a", 1.0), pair("b", 2.5)])
    );
    assert_eq!(
        run(&mut c, &["ZPOPMIN", "z"]),
        Reply::Array(vec![Reply::Bulk(b"a".to_vec()), Reply::Double(1.0)])
    );
    assert_eq!(
        run(&mut c, &["ZPOPMAX", "z", "1"]),
        Reply::Array(vec![pair("c", 3.0)])
    );
    assert_eq!(
        run(&mut c, &["ZSCAN", "z", "0"]),
        Reply::Array(vec![
            Reply::Bulk(b"0".to_vec()),
            Reply::Array(vec![
                Reply::Bulk(b"b".to_vec()),
                Reply::Bulk(b"2.5".to_vec())
            ])
        ])
    );
}

// ---- property test against a model ----

/// The model: (score, member) pairs sorted by score then member bytes.
#[derive(Default, Debug)]
struct Model(Vec<(f64, String)>);

impl Model {
    fn sort(&mut self) {
        self.0.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then_with(|| a.1.as_bytes().cmp(b.1.as_bytes()))
        });
    }
    fn find(&self, m: &str) -> Option<usize> {
        self.0.iter().position(|(_, x)| x == m)
    }
    fn add(&mut self, score: f64, m: &str) -> bool {
        let new = match self.find(m) {
            Some(i) => {
                self.0[i].0 = score;
                false
            }
            None => {
                self.0.push((score, m.to_string()));
                true
            }
        };
        self.sort();
        new
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add(Vec<(i8, u8)>),
    Rem(Vec<u8>),
    Incr(i8, u8),
    Range(i8, i8, bool),
    ByScore((i8, bool), (i8, bool), Option<(i8, i8)>, bool),
    Rank(u8, bool),
}

fn member(m: u8) -> String {
    // A small alphabet so members repeat; some share their first 8 bytes (which the set
    // caches per node) or differ only after a NUL.
    let stem = ["m", "prefix-0", "prefix-0\0", ""][usize::from(m / 7 % 4)];
    format!("{stem}{}", m % 7)
}

fn op() -> impl Strategy<Value = Op> {
    let score = -4i8..5;
    prop_oneof![
        prop::collection::vec((score.clone(), any::<u8>()), 1..4).prop_map(Op::Add),
        prop::collection::vec(any::<u8>(), 1..3).prop_map(Op::Rem),
        (score.clone(), any::<u8>()).prop_map(|(s, m)| Op::Incr(s, m)),
        (-14i8..14, -14i8..14, any::<bool>()).prop_map(|(a, b, r)| Op::Range(a, b, r)),
        (
            (score.clone(), any::<bool>()),
            (score, any::<bool>()),
            prop::option::of((-2i8..4, -2i8..4)),
            any::<bool>()
        )
            .prop_map(|(a, b, l, w)| Op::ByScore(a, b, l, w)),
        (any::<u8>(), any::<bool>()).prop_map(|(m, r)| Op::Rank(m, r)),
    ]
}

fn bulk(s: &str) -> Reply {
    Reply::Bulk(s.as_bytes().to_vec())
}

fn bound_arg((v, excl): (i8, bool)) -> String {
    // Halves, so bounds fall between and on scores.
    let v = f64::from(v) / 2.0;
    if excl {
        format!("({v}")
    } else {
        format!("{v}")
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn engine_matches_a_sorted_vec_model(ops in prop::collection::vec(op(), 1..40)) {
        let e = engine();
        let mut c = e.client();
        let mut model = Model::default();
        for op in ops {
            let (args, expected): (Vec<String>, Reply) = match &op {
                Op::Add(pairs) => {
                    let mut args = vec!["ZADD".to_string(), "z".into()];
                    let mut added = 0;
                    for &(s, m) in pairs {
                        args.push(s.to_string());
                        args.push(member(m));
                        added += i64::from(model.add(f64::from(s), &member(m)));
                    }
                    (args, Reply::Int(added))
                }
                Op::Rem(ms) => {
                    let mut args = vec!["ZREM".to_string(), "z".into()];
                    let mut removed = 0;
                    for &m in ms {
                        args.push(member(m));
                        if let Some(i) = model.find(&member(m)) {
                            model.0.remove(i);
                            removed += 1;
                        }
                    }
                    (args, Reply::Int(removed))
                }
                Op::Incr(d, m) => {
                    let m = member(*m);
                    let score = model.find(&m).map_or(0.0, |i| model.0[i].0) + f64::from(*d);
                    model.add(score, &m);
                    (vec!["ZINCRBY".into(), "z".into(), d.to_string(), m], Reply::Double(score))
                }
                Op::Range(start, stop, withscores) => {
                    let len = model.0.len() as i64;
                    let norm = |i: i8| if i < 0 { len + i64::from(i) } else { i64::from(i) };
                    let (lo, hi) = (norm(*start).max(0), norm(*stop).min(len - 1));
                    let mut items = Vec::new();
                    if lo <= hi {
                        for (s, m) in &model.0[lo as usize..=hi as usize] {
                            items.push(bulk(m));
                            if *withscores {
                                items.push(Reply::Double(*s));
                            }
                        }
                    }
                    let mut args = vec!["ZRANGE".into(), "z".into(), start.to_string(), stop.to_string()];
                    if *withscores {
                        args.push("WITHSCORES".into());
                    }
                    (args, Reply::Array(items))
                }
                Op::ByScore(min, max, limit, withscores) => {
                    let inside = |s: f64| {
                        let (lo, hi) = (f64::from(min.0) / 2.0, f64::from(max.0) / 2.0);
                        (if min.1 { s > lo } else { s >= lo }) && (if max.1 { s < hi } else { s <= hi })
                    };
                    let selected = model.0.iter().filter(|(s, _)| inside(*s));
                    let selected: Vec<&(f64, String)> = match limit {
                        None => selected.collect(),
                        Some((off, _)) if *off < 0 => Vec::new(),
                        Some((off, cnt)) if *cnt < 0 => selected.skip(*off as usize).collect(),
                        Some((off, cnt)) => selected.skip(*off as usize).take(*cnt as usize).collect(),
                    };
                    let mut items = Vec::new();
                    for (s, m) in selected {
                        items.push(bulk(m));
                        if *withscores {
                            items.push(Reply::Double(*s));
                        }
                    }
                    let mut args = vec!["ZRANGEBYSCORE".into(), "z".into(), bound_arg(*min), bound_arg(*max)];
                    if *withscores {
                        args.push("WITHSCORES".into());
                    }
                    if let Some((off, cnt)) = limit {
                        args.extend(["LIMIT".into(), off.to_string(), cnt.to_string()]);
                    }
                    (args, Reply::Array(items))
                }
                Op::Rank(m, rev) => {
                    let m = member(*m);
                    let len = model.0.len();
                    let rank = model.find(&m).map(|i| if *rev { len - 1 - i } else { i });
                    let name = if *rev { "ZREVRANK" } else { "ZRANK" };
                    (vec![name.into(), "z".into(), m], rank.map_or(Reply::Nil, |r| Reply::Int(r as i64)))
                }
            };
            let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
            let got = e.execute(&mut c, &argv);
            prop_assert_eq!(&got, &expected, "{:?}", args);
            let card = e.execute(&mut c, &[b"ZCARD", b"z"]);
            prop_assert_eq!(card, Reply::Int(model.0.len() as i64));
        }
    }
}

// ---- commands over several keys ----

#[test]
fn zunion_zinter_zdiff_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["ZADD", "z1", "1", "a", "2", "b", "3", "c"],
        &["ZADD", "z2", "10", "b", "20", "c", "30", "d"],
        &["SADD", "s", "a", "d", "e"],
        &["SET", "str", "x"],
        &["ZUNION", "2", "z1", "z2"],
        &["ZUNION", "2", "z1", "z2", "WITHSCORES"],
        &["ZUNION", "3", "z1", "z2", "s", "withscores"],
        &[
            "ZUNION",
            "2",
            "z1",
            "z2",
            "WEIGHTS",
            "2",
            "-1",
            "WITHSCORES",
        ],
        &["ZUNION", "2", "z1", "z2", "AGGREGATE", "MIN", "WITHSCORES"],
        &["ZUNION", "2", "z1", "z2", "aggregate", "max", "WITHSCORES"],
        &[
            "ZUNION",
            "2",
            "z1",
            "z2",
            "WEIGHTS",
            "0.5",
            "3",
            "AGGREGATE",
            "SUM",
            "WITHSCORES",
        ],
        // Options may repeat; the last wins.
        &[
            "ZUNION",
            "2",
            "z1",
            "z2",
            "AGGREGATE",
            "MIN",
            "AGGREGATE",
            "MAX",
            "WITHSCORES",
        ],
        &["ZUNION", "2", "z1", "nokey", "WITHSCORES"],
        &["ZUNION", "1", "nokey"],
        &["ZINTER", "2", "z1", "z2", "WITHSCORES"],
        &["ZINTER", "3", "z1", "z2", "s"],
        &["ZINTER", "2", "z1", "s", "WITHSCORES"],
        &["ZINTER", "2", "z1", "z1", "WEIGHTS", "1", "2", "WITHSCORES"],
        &["ZINTER", "2", "z1", "z2", "AGGREGATE", "MAX", "WITHSCORES"],
        &["ZINTER", "2", "z1", "nokey", "WITHSCORES"],
        &["ZDIFF", "2", "z1", "z2", "WITHSCORES"],
        &["ZDIFF", "2", "z2", "s", "WITHSCORES"],
        &["ZDIFF", "1", "s", "WITHSCORES"],
        &["ZDIFF", "2", "z1", "z1"],
        &["ZDIFF", "2", "nokey", "z1"],
        &["ZDIFF", "3", "z1", "nokey", "z2"],
        // numkeys: an integer, at least 1, no more than the keys given.
        &["ZUNION", "0", "z1"],
        &["ZINTER", "-1", "z1"],
        &["ZDIFF", "0", "z1"],
        &["ZUNION", "x", "z1"],
        &["ZUNION", "3", "z1", "z2"],
        &["ZUNION", "9223372036854775807", "z1"],
        &["ZUNION", "99999999999999999999", "z1"],
        // Wrong type anywhere, before the options are read.
        &["ZUNION", "2", "z1", "str"],
        &["ZINTER", "2", "str", "nokey"],
        &["ZDIFF", "2", "nokey", "str"],
        &["ZUNION", "2", "z1", "str", "BAD"],
        // Options.
        &["ZUNION", "2", "z1", "z2", "WEIGHTS", "1"],
        &["ZUNION", "2", "z1", "z2", "WEIGHTS", "1", "2", "3"],
        &["ZUNION", "2", "z1", "z2", "WEIGHTS", "1", "x"],
        &["ZUNION", "2", "z1", "z2", "WEIGHTS", "1", "nan"],
        &["ZUNION", "2", "z1", "z2", "AGGREGATE"],
        &["ZUNION", "2", "z1", "z2", "AGGREGATE", "AVG"],
        &["ZUNION", "2", "z1", "z2", "LIMIT", "1"],
        &["ZDIFF", "2", "z1", "z2", "WEIGHTS", "1", "1"],
        &["ZDIFF", "2", "z1", "z2", "AGGREGATE", "MIN"],
        &["ZUNION", "2", "z1", "z2", "WITHSCORES", "x"],
        // Arity.
        &["ZUNION", "1"],
        &["ZINTER"],
        &["ZDIFF", "1"],
    ]);
}

#[test]
fn aggregation_of_infinities_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["ZADD", "p", "inf", "a", "-inf", "b", "1", "c", "0", "z"],
        &["ZADD", "n", "-inf", "a", "inf", "b", "-inf", "c", "5", "z"],
        // inf + -inf is 0 in Redis (not NaN).
        &["ZUNION", "2", "p", "n", "WITHSCORES"],
        &["ZINTER", "2", "p", "n", "WITHSCORES"],
        &["ZINTER", "2", "p", "n", "AGGREGATE", "MIN", "WITHSCORES"],
        &["ZINTER", "2", "p", "n", "AGGREGATE", "MAX", "WITHSCORES"],
        // 0 * inf is 0 too.
        &["ZUNION", "2", "p", "n", "WEIGHTS", "0", "1", "WITHSCORES"],
        &["ZINTER", "2", "p", "n", "WEIGHTS", "1", "0", "WITHSCORES"],
        &[
            "ZINTER",
            "2",
            "p",
            "n",
            "WEIGHTS",
            "1",
            "0",
            "AGGREGATE",
            "MAX",
            "WITHSCORES",
        ],
        &[
            "ZUNION",
            "2",
            "p",
            "n",
            "WEIGHTS",
            "inf",
            "-inf",
            "WITHSCORES",
        ],
        &["ZUNION", "1", "p", "WEIGHTS", "-1", "WITHSCORES"],
        &["ZUNIONSTORE", "dst", "2", "p", "n", "WEIGHTS", "1", "1e308"],
        &["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        // Sums round in Redis's order (smallest input first).
        &["ZADD", "f1", "0.1", "x"],
        &["ZADD", "f2", "0.2", "x", "1", "y"],
        &["ZADD", "f3", "0.3", "x", "1", "y", "2", "z"],
        &["ZUNION", "3", "f3", "f2", "f1", "WITHSCORES"],
        &["ZINTER", "3", "f3", "f1", "f2", "WITHSCORES"],
    ]);
}

#[test]
fn store_forms_and_zintercard_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["ZADD", "z1", "1", "a", "2", "b", "3", "c"],
        &["ZADD", "z2", "10", "b", "20", "c", "30", "d"],
        &["SADD", "s", "a", "b"],
        &["SET", "dst", "string"],
        &["ZUNIONSTORE", "dst", "2", "z1", "z2"],
        &["TYPE", "dst"],
        &["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        &[
            "ZINTERSTORE",
            "dst",
            "3",
            "z1",
            "z2",
            "s",
            "WEIGHTS",
            "1",
            "2",
            "3",
        ],
        &["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        &["ZDIFFSTORE", "dst", "2", "z1", "s"],
        &["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        // An empty result deletes the destination.
        &["ZINTERSTORE", "dst", "2", "z1", "nokey"],
        &["EXISTS", "dst"],
        &["ZDIFFSTORE", "dst", "1", "nokey"],
        // The destination may be one of the inputs.
        &["ZUNIONSTORE", "z1", "2", "z1", "z1"],
        &["ZRANGE", "z1", "0", "-1", "WITHSCORES"],
        &["ZUNIONSTORE", "dst", "2", "z1", "z2", "WITHSCORES"],
        &["ZUNIONSTORE", "dst", "0", "z1"],
        &["ZINTERSTORE", "dst", "0", "z1"],
        &["ZDIFFSTORE", "dst", "-5", "z1"],
        &["ZUNIONSTORE", "dst", "3", "z1", "z2"],
        &[
            "ZUNIONSTORE",
            "dst",
            "1",
            "string-key-missing",
            "AGGREGATE",
            "bad",
        ],
        &["ZUNIONSTORE", "dst", "1"],
        &["ZDIFFSTORE", "dst", "1", "z1", "WEIGHTS", "2"],
        &["SET", "str", "x"],
        &["ZINTERSTORE", "dst", "2", "z1", "str"],
        // ZINTERCARD.
        &["ZINTERCARD", "2", "z1", "z2"],
        &["ZINTERCARD", "3", "z1", "z2", "s"],
        &["ZINTERCARD", "2", "z1", "z2", "LIMIT", "0"],
        &["ZINTERCARD", "2", "z1", "z2", "LIMIT", "1"],
        &["ZINTERCARD", "2", "z1", "z2", "LIMIT", "100"],
        &["ZINTERCARD", "2", "z1", "nokey"],
        &["ZINTERCARD", "2", "z1", "z2", "LIMIT", "-1"],
        &["ZINTERCARD", "2", "z1", "z2", "LIMIT", "x"],
        &["ZINTERCARD", "2", "z1", "z2", "LIMIT"],
        &["ZINTERCARD", "2", "z1", "z2", "WITHSCORES"],
        &["ZINTERCARD", "2", "z1", "z2", "WEIGHTS", "1", "1"],
        &["ZINTERCARD", "0", "z1"],
        &["ZINTERCARD", "3", "z1", "z2"],
        &["ZINTERCARD", "2", "z1", "str"],
        &["ZINTERCARD", "1"],
    ]);
}

#[test]
fn zrangestore_matches_redis() {
    let mut d = Diff::new();
    d.check(&[
        &[
            "ZADD", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e",
        ],
        &["ZRANGESTORE", "dst", "z", "0", "-1"],
        &["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        &["ZRANGESTORE", "dst", "z", "1", "2", "REV"],
        &["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        &[
            "ZRANGESTORE",
            "dst",
            "z",
            "(1",
            "4",
            "BYSCORE",
            "LIMIT",
            "1",
            "2",
        ],
        &["ZRANGE", "dst", "0", "-1", "WITHSCORES"],
        &["ZRANGESTORE", "dst", "z", "+inf", "-inf", "BYSCORE", "REV"],
        &["ZRANGESTORE", "dst", "z", "[b", "(d", "BYLEX"],
        &["ZRANGE", "dst", "0", "-1"],
        &[
            "ZRANGESTORE",
            "dst",
            "z",
            "+",
            "-",
            "BYLEX",
            "REV",
            "LIMIT",
            "0",
            "2",
        ],
        &["ZRANGE", "dst", "0", "-1"],
        // Empty selections and missing sources delete the destination.
        &["ZRANGESTORE", "dst", "z", "10", "20"],
        &["EXISTS", "dst"],
        &["SET", "dst", "x"],
        &["ZRANGESTORE", "dst", "nokey", "0", "-1"],
        &["EXISTS", "dst"],
        // Errors.
        &["ZRANGESTORE", "dst", "z", "0", "-1", "WITHSCORES"],
        &["ZRANGESTORE", "dst", "z", "0", "-1", "LIMIT", "0", "1"],
        &["ZRANGESTORE", "dst", "z", "x", "1"],
        &["ZRANGESTORE", "dst", "z", "x", "1", "BYSCORE"],
        &["ZRANGESTORE", "dst", "z", "a", "b", "BYLEX"],
        &["ZRANGESTORE", "dst", "z", "0", "1", "BYSCORE", "BYLEX"],
        &["SET", "str", "x"],
        &["ZRANGESTORE", "dst", "str", "0", "-1"],
        &["ZRANGESTORE", "str", "z", "0", "0"],
        &["TYPE", "str"],
        &["ZRANGESTORE", "dst", "z", "0"],
    ]);
}

#[test]
fn zmpop_and_bzpop_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["ZADD", "z1", "1", "a", "2", "b", "3", "c"],
        &["ZADD", "z2", "5", "x"],
        &["SET", "str", "v"],
        &["ZMPOP", "1", "z1", "MIN"],
        &["ZMPOP", "2", "nokey", "z1", "max", "COUNT", "1"],
        &["ZMPOP", "2", "nokey", "z2", "MIN", "COUNT", "10"],
        &["EXISTS", "z2"],
        &["ZMPOP", "2", "nokey", "z2", "MIN"],
        &["ZMPOP", "1", "z1", "MIN", "COUNT", "9223372036854775807"],
        &["ZADD", "z1", "1", "a", "2", "b"],
        // The first existing key decides, even of the wrong type.
        &["ZMPOP", "2", "str", "z1", "MIN"],
        &["ZMPOP", "2", "z1", "str", "MIN"],
        // Arguments.
        &["ZMPOP", "0", "z1", "MIN"],
        &["ZMPOP", "-1", "z1", "MIN"],
        &["ZMPOP", "x", "z1", "MIN"],
        &["ZMPOP", "2", "z1", "MIN"],
        &["ZMPOP", "9223372036854775807", "z1", "MIN"],
        &["ZMPOP", "1", "z1", "LEFT"],
        &["ZMPOP", "1", "z1", "MIN", "COUNT", "0"],
        &["ZMPOP", "1", "z1", "MIN", "COUNT", "-1"],
        &["ZMPOP", "1", "z1", "MIN", "COUNT", "x"],
        &["ZMPOP", "1", "z1", "MIN", "COUNT"],
        &["ZMPOP", "1", "z1", "MIN", "COUNT", "1", "COUNT", "1"],
        &["ZMPOP", "1", "z1", "MIN", "extra"],
        &["ZMPOP", "1", "z1"],
        // Non-blocking use of the blocking forms (what a served client gets at once).
        &["BZMPOP", "0", "1", "z1", "MAX", "COUNT", "5"],
        &["ZADD", "z1", "1", "a", "2", "b"],
        &["BZMPOP", "0.01", "2", "nokey", "z1", "MIN"],
        &["BZMPOP", "-1", "1", "z1", "MIN"],
        &["BZMPOP", "x", "1", "z1", "MIN"],
        &["BZMPOP", "x", "0", "z1", "MIN"],
        &["BZMPOP", "0", "1", "str", "MIN"],
        &["BZMPOP", "0", "1", "z1"],
        &["ZADD", "z1", "7", "c"],
        &["BZPOPMIN", "nokey", "z1", "0"],
        &["BZPOPMAX", "z1", "0"],
        &["EXISTS", "z1"],
        &["ZADD", "z1", "-inf", "lo", "inf", "hi"],
        &["BZPOPMAX", "z1", "0"],
        &["BZPOPMIN", "str", "z1", "0"],
        &["BZPOPMIN", "z1", "-1"],
        &["BZPOPMIN", "z1", "nan"],
        &["BZPOPMIN", "z1", "x"],
        &["BZPOPMIN", "z1", "1e300"],
        &["BZPOPMIN", "z1"],
        &["ZMPOP", "1", "z1", "MAX"],
    ]);
}

#[test]
fn multi_key_commands_inside_multi_reply_at_once() {
    let mut d = Diff::new();
    d.check(&[
        &["MULTI"],
        &["BZPOPMIN", "nokey", "0"],
        &["BZMPOP", "0", "1", "nokey", "MIN"],
        &["ZUNIONSTORE", "d", "1", "nokey"],
        &["EXEC"],
    ]);
}

#[test]
fn resp3_shapes_of_the_multi_key_commands_match_redis() {
    let mut d = Diff::new();
    // HELLO's own reply carries ids; what matters is the protocol it switches to.
    let _ = d.both(&["HELLO", "3"]);
    d.check(&[
        &["ZADD", "z1", "1", "a", "2.5", "b"],
        &["ZADD", "z2", "3", "b"],
        &["ZUNION", "2", "z1", "z2", "WITHSCORES"],
        &["ZINTER", "2", "z1", "z2"],
        &["ZDIFF", "2", "z1", "z2", "WITHSCORES"],
        &["ZRANDMEMBER", "z2", "1", "WITHSCORES"],
        &["ZRANDMEMBER", "z2", "-2", "WITHSCORES"],
        &["ZRANDMEMBER", "nokey"],
        &["ZMPOP", "1", "z1", "MIN", "COUNT", "2"],
        &["ZMPOP", "1", "z1", "MIN"],
        &["BZPOPMIN", "z2", "0"],
        &["BZPOPMIN", "z2", "0.01"],
        &["BZMPOP", "0.01", "1", "z2", "MIN"],
    ]);
}

#[test]
fn zrandmember_matches_redis() {
    // Random picks agree with Redis only by chance: no third leg.
    let mut d = Diff::in_process_only();
    d.check(&[
        &["ZRANDMEMBER", "nokey"],
        &["ZRANDMEMBER", "nokey", "5"],
        &["ZRANDMEMBER", "nokey", "-5", "WITHSCORES"],
        &["ZRANDMEMBER", "nokey", "x"],
        &["ZRANDMEMBER", "nokey", "-9223372036854775808"],
        &["ZRANDMEMBER", "nokey", "1", "WITHSCORE"],
        &["ZRANDMEMBER", "nokey", "1", "WITHSCORES", "x"],
        &["ZRANDMEMBER", "nokey", "4611686018427387904", "WITHSCORES"],
        &["ZRANDMEMBER", "nokey", "-4611686018427387904", "WITHSCORES"],
        &["ZRANDMEMBER", "nokey", "4611686018427387903", "WITHSCORES"],
        &["SET", "str", "v"],
        &["ZRANDMEMBER", "str"],
        &["ZRANDMEMBER", "str", "0"],
        &["ZRANDMEMBER", "str", "x"],
        &["ZRANDMEMBER"],
        &["ZADD", "one", "1.5", "m"],
        &["ZRANDMEMBER", "one"],
        &["ZRANDMEMBER", "one", "0"],
        &["ZRANDMEMBER", "one", "1", "WITHSCORES"],
        &["ZRANDMEMBER", "one", "-3", "WITHSCORES"],
        // A count at least the size: the whole set, highest first.
        &["ZADD", "z", "3", "c", "1", "a", "2", "b"],
        &["ZRANDMEMBER", "z", "3"],
        &["ZRANDMEMBER", "z", "100", "withscores"],
    ]);
    let members = ["a", "b", "c"];
    check_pick(&mut d, &["ZRANDMEMBER", "z", "2"], 2, &members, true);
    check_pick(&mut d, &["ZRANDMEMBER", "z", "-7"], 7, &members, false);
    check_pick(&mut d, &["ZRANDMEMBER", "z", "1"], 1, &members, true);
    // With scores each member comes with its own score.
    let (_, ours) = d.both(&["ZRANDMEMBER", "z", "-5", "WITHSCORES"]);
    let items = elements(&ours);
    assert_eq!(items.len(), 10);
    for pair in items.chunks(2) {
        let m = pair[0]
            .trim_start_matches("bulk-string('\"")
            .trim_end_matches("\"')");
        let want = match m {
            "a" => "1",
            "b" => "2",
            "c" => "3",
            other => panic!("unexpected member {other}"),
        };
        assert!(pair[1].contains(want), "{pair:?}");
    }
    let (real, ours) = d.both(&["ZRANDMEMBER", "z"]);
    assert!(real.starts_with("bulk-string") && ours.starts_with("bulk-string"));
}

#[test]
fn typed_api_of_the_multi_key_commands() {
    use edgebench_engine::engine::types::zset::algebra::{Aggregate, Combine};
    let e = engine();
    let mut c = e.client();
    let run = |c: &mut edgebench_engine::engine::Client, args: &[&str]| {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        e.execute(c, &argv)
    };
    run(&mut c, &["ZADD", "a", "1", "x", "2", "y"]);
    run(&mut c, &["ZADD", "b", "10", "y", "20", "z"]);
    let db = e.db(0);
    let mut ks = db.lock([&b"a"[..], b"b", b"d", b"nokey"], e.now_ms());
    let keys: [&[u8]; 2] = [b"a", b"b"];
    let union = ks
        .zcombine(Combine::Union, &keys, &[1.0, 0.5], Aggregate::Max)
        .unwrap();
    assert_eq!(
        union,
        vec![
            (b"x".to_vec(), 1.0),
            (b"y".to_vec(), 5.0),
            (b"z".to_vec(), 10.0)
        ]
    );
    assert_eq!(ks.zintercard(&keys, 0), Ok(1));
    assert_eq!(
        ks.zcombine_store(b"d", Combine::Diff, &keys, &[], Aggregate::Sum),
        Ok(1)
    );
    assert_eq!(
        ks.zmpop(&[b"nokey", b"d"], true, 5),
        Ok(Some((1, vec![(b"x".to_vec(), 1.0)])))
    );
    assert!(!ks.exists(b"d"), "an emptied sorted set is deleted");
    assert_eq!(ks.zmpop(&[b"nokey", b"d"], true, 5), Ok(None));
    assert_eq!(ks.zrandmember_count(b"a", -3).map(|v| v.len()), Ok(3));
    assert!(ks.zrandmember_count(b"a", -(1 << 40)).is_err());
}

/// Random inputs, small and past the listpack limits, with integer and fractional scores
/// that collide: every combination, weighted and aggregated, equals Redis's, stored and
/// replied. No input scores 0 and no weight is 0: a stored -0 (`0 * -1`) is a known
/// difference (the engine's sorted set keeps -0 as 0; Redis's skip list keeps -0).
#[test]
fn random_combinations_match_redis() {
    let mut d = Diff::new();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let keys = ["r0", "r1", "r2", "r3"];
    for (k, size) in keys.iter().zip([5u64, 40, 150, 3]) {
        let mut zadd = vec!["ZADD".to_string(), k.to_string()];
        for _ in 0..size {
            let score = match next(4) {
                0 => format!("{}", 1 + next(9)),
                1 => format!("{}.{}", next(10), next(1000)),
                2 => format!("-{}.25", next(5)),
                _ => ["inf", "-inf", "0.5", "1e300"][next(4) as usize].to_string(),
            };
            let long = if next(20) == 0 {
                "x".repeat(70)
            } else {
                String::new()
            };
            zadd.push(score);
            zadd.push(format!("m{}{long}", next(200)));
        }
        let args: Vec<&str> = zadd.iter().map(String::as_str).collect();
        d.check(&[&args]);
    }
    d.check(&[&["SADD", "rs", "m1", "m2", "m3", "m50", "m199"]]);
    let all = ["r0", "r1", "r2", "r3", "rs"];
    for round in 0..150 {
        let n = 1 + next(4) as usize;
        let picked: Vec<&str> = (0..n).map(|_| all[next(5) as usize]).collect();
        let count = n.to_string();
        let op = ["ZUNION", "ZINTER", "ZDIFF"][round % 3];
        let mut args = vec![op, count.as_str()];
        args.extend(&picked);
        let weights: Vec<String> = (0..n)
            .map(|_| ["1", "-1", "-0.5", "2.5", "inf", "1e-3"][next(6) as usize].to_string())
            .collect();
        if op != "ZDIFF" {
            args.push("WEIGHTS");
            args.extend(weights.iter().map(String::as_str));
            args.push("AGGREGATE");
            args.push(["SUM", "MIN", "MAX"][next(3) as usize]);
        }
        let mut reply = args.clone();
        reply.push("WITHSCORES");
        let store_name = match op {
            "ZUNION" => "ZUNIONSTORE",
            "ZINTER" => "ZINTERSTORE",
            _ => "ZDIFFSTORE",
        };
        let mut store = vec![store_name, "rdst"];
        store.extend(&args[1..]);
        let mut card = vec!["ZINTERCARD", count.as_str()];
        card.extend(&picked);
        d.check(&[
            &reply,
            &store,
            &["ZRANGE", "rdst", "0", "-1", "WITHSCORES"],
            &card,
        ]);
    }
}

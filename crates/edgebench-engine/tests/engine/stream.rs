//! Streams, differentially against a real redis-server (explicit ids, so replies compare
//! exactly), plus the typed API on a manual clock.

use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use crate::support::diff::Diff;
use edgebench_engine::engine::cmd::stream::{TrimSpec, XaddId};
use edgebench_engine::engine::types::stream::{StreamId, Trim};
use edgebench_engine::engine::Engine;

#[test]
fn xadd_ids_and_errors() {
    let mut d = Diff::new();
    d.check(&[
        &["XADD", "s", "1-1", "f", "v"],
        &["XADD", "s", "1-1", "f", "v"],
        &["XADD", "s", "1-0", "f", "v"],
        &["XADD", "s", "0-5", "f", "v"],
        &["XADD", "s", "1-2", "a", "1", "b", "2"],
        &["XADD", "s", "1-*", "f", "v"],
        &["XADD", "s", "2-*", "f", "v"],
        &["XADD", "s", "2-*", "f", "v"],
        &["XADD", "s", "1-*", "f", "v"],
        &["XADD", "s", "5", "f", "v"],
        &["XADD", "s", "5", "f", "v"],
        &["XADD", "s", "+6", "f", "v"],
        &["XADD", "s", "07-01", "f", "v"],
        &["XADD", "s", " 8", "f", "v"],
        &["XADD", "s", "9--0", "f", "v"],
        &["XLEN", "s"],
        &["XRANGE", "s", "-", "+"],
        &["XADD", "s", "-", "f", "v"],
        &["XADD", "s", "+", "f", "v"],
        &["XADD", "s", "abc", "f", "v"],
        &["XADD", "s", "10-", "f", "v"],
        &["XADD", "s", "-10", "f", "v"],
        &["XADD", "s", "10-x", "f", "v"],
        &["XADD", "s", "10-*-1", "f", "v"],
        &["XADD", "s", "18446744073709551616", "f", "v"],
        &["XADD", "new", "0-0", "f", "v"],
        &["XADD", "new", "0", "f", "v"],
        &["XADD", "new", "0-0", "f"],
        &["EXISTS", "new"],
        &["XADD", "new", "0-*", "f", "v"],
        &["XADD", "new", "0-*", "f", "v"],
        &["XADD", "s", "10-1", "f"],
        &["XADD", "s", "10-1", "f", "v", "g"],
        &["XADD", "s", "NOMKSTREAM", "f", "v"],
        &["XADD", "s", "MAXLEN", "5", "f", "v"],
        &["XADD", "s"],
        &["XADD", "s", "10-1"],
        &["XADD", "nokey", "NOMKSTREAM", "1-1", "f", "v"],
        &["XADD", "nokey", "nomkstream", "*", "f", "v"],
        &["EXISTS", "nokey"],
        &["XADD", "s", "NOMKSTREAM", "10-1", "f", "v"],
        &["SET", "str", "x"],
        &["XADD", "str", "1-1", "f", "v"],
        &["XADD", "str", "NOMKSTREAM", "1-1", "f", "v"],
        &["XADD", "str", "0-0", "f", "v"],
        &["XADD", "str", "bad", "f", "v"],
        &[
            "XADD",
            "m",
            "18446744073709551615-18446744073709551614",
            "f",
            "v",
        ],
        &["XADD", "m", "18446744073709551615-*", "f", "v"],
        &["XADD", "m", "18446744073709551615-*", "f", "v"],
        &["XADD", "m", "*", "f", "v"],
        &["XADD", "m", "1-1", "f", "v"],
        &["XLEN", "m"],
        &["XLEN", "nokey"],
        &["XLEN", "str"],
        &["XLEN"],
        &["XADD", "x", "1-1", "f", "v", "f", "w"],
        &["XRANGE", "x", "-", "+"],
    ]);
}

#[test]
fn xadd_trimming_options() {
    let mut d = Diff::new();
    let mut script: Vec<Vec<String>> = Vec::new();
    for i in 1..=20 {
        script.push(
            ["XADD", "s", &format!("{i}-0"), "f", &i.to_string()]
                .map(String::from)
                .to_vec(),
        );
    }
    let owned: Vec<Vec<&str>> = script
        .iter()
        .map(|c| c.iter().map(String::as_str).collect())
        .collect();
    let refs: Vec<&[&str]> = owned.iter().map(Vec::as_slice).collect();
    d.check(&refs);
    d.check(&[
        &["XADD", "s", "MAXLEN", "15", "21-0", "f", "v"],
        &["XLEN", "s"],
        &["XRANGE", "s", "-", "+", "COUNT", "2"],
        &["XADD", "s", "MAXLEN", "=", "10", "22-0", "f", "v"],
        &["XLEN", "s"],
        // ~: whole nodes only; one node of 100 entries is not removed.
        &["XADD", "s", "MAXLEN", "~", "2", "23-0", "f", "v"],
        &["XLEN", "s"],
        &["XADD", "s", "MINID", "20", "24-0", "f", "v"],
        &["XRANGE", "s", "-", "+"],
        &["XADD", "s", "MINID", "=", "22-0", "25-0", "f", "v"],
        &["XADD", "s", "MINID", "~", "25", "26-0", "f", "v"],
        &["XLEN", "s"],
        &[
            "XADD", "s", "MAXLEN", "~", "1", "LIMIT", "10", "27-0", "f", "v",
        ],
        &["XADD", "s", "NOMKSTREAM", "MAXLEN", "2", "28-0", "f", "v"],
        &["XRANGE", "s", "-", "+"],
        &["XADD", "s", "MAXLEN", "0", "29-0", "f", "v"],
        &["XLEN", "s"],
        &["EXISTS", "s"],
        &["XRANGE", "s", "-", "+"],
        &["XADD", "s", "29-0", "f", "v"],
        &["XADD", "s", "30-0", "f", "v"],
        // Option errors.
        &["XADD", "s", "MAXLEN", "-1", "31-0", "f", "v"],
        &["XADD", "s", "MAXLEN", "x", "31-0", "f", "v"],
        &["XADD", "s", "MAXLEN", "~", "x", "31-0", "f", "v"],
        &["XADD", "s", "MAXLEN", "1", "MINID", "0", "31-0", "f", "v"],
        &["XADD", "s", "MINID", "0", "MAXLEN", "1", "31-0", "f", "v"],
        &["XADD", "s", "MAXLEN", "1", "MAXLEN", "1", "31-0", "f", "v"],
        &["XADD", "s", "MINID", "-", "31-0", "f", "v"],
        &["XADD", "s", "MINID", "5-*", "31-0", "f", "v"],
        &["XADD", "s", "MINID", "bad", "31-0", "f", "v"],
        &["XADD", "s", "LIMIT", "5", "31-0", "f", "v"],
        &["XADD", "s", "MAXLEN", "5", "LIMIT", "5", "31-0", "f", "v"],
        &[
            "XADD", "s", "MAXLEN", "~", "5", "LIMIT", "-1", "31-0", "f", "v",
        ],
        &[
            "XADD", "s", "MAXLEN", "~", "5", "LIMIT", "x", "31-0", "f", "v",
        ],
        &["XADD", "s", "MAXLEN", "~", "5", "31-0", "f"],
        &["XADD", "s", "MAXLEN", "~", "31-0", "f", "v"],
        &["XADD", "s", "MAXLEN", "=", "31-0", "f", "v"],
        &["XADD", "str", "MAXLEN", "-1", "31-0", "f", "v"],
        &["SET", "str", "x"],
        &["XADD", "str", "MAXLEN", "1", "31-0", "f", "v"],
        &["XLEN", "s"],
    ]);
}

/// Appends `n` entries with explicit ids `base+1 .. base+n` and `value_len`-byte values.
fn fill(d: &mut Diff, key: &str, base: u64, n: u64, value_len: usize) {
    let value = "x".repeat(value_len);
    for i in 1..=n {
        let id = format!("{}-0", base + i);
        d.check(&[&["XADD", key, &id, "field", &value]]);
    }
}

#[test]
fn approximate_trimming_removes_the_nodes_redis_removes() {
    let mut d = Diff::new();
    // Small entries: nodes of 100 entries.
    fill(&mut d, "s", 0, 250, 3);
    d.check(&[
        &["XTRIM", "s", "MAXLEN", "~", "200"],
        &["XTRIM", "s", "MAXLEN", "~", "140"],
        &["XLEN", "s"],
        &["XTRIM", "s", "MINID", "~", "220"],
        &["XLEN", "s"],
        &["XTRIM", "s", "MINID", "~", "250"],
        &["XLEN", "s"],
        &["XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "10"],
        &["XTRIM", "s", "MAXLEN", "~", "0", "LIMIT", "0"],
        &["XLEN", "s"],
    ]);
    // XDEL frees a node when its last live entry goes; the next XADD starts a new one.
    fill(&mut d, "t", 0, 150, 1);
    for id in 1..=100 {
        d.check(&[&["XDEL", "t", &format!("{id}-0")]]);
    }
    fill(&mut d, "t", 150, 120, 1);
    d.check(&[
        &["XLEN", "t"],
        &["XTRIM", "t", "MAXLEN", "~", "100"],
        &["XLEN", "t"],
        &["XTRIM", "t", "MAXLEN", "~", "60"],
        &["XLEN", "t"],
    ]);
    // Big entries: nodes fill up by bytes (4096) before 100 entries.
    fill(&mut d, "b", 0, 40, 300);
    d.check(&[
        &["XTRIM", "b", "MAXLEN", "~", "30"],
        &["XLEN", "b"],
        &["XTRIM", "b", "MAXLEN", "~", "20"],
        &["XLEN", "b"],
        &["XADD", "b", "MAXLEN", "~", "5", "41-0", "field", "y"],
        &["XLEN", "b"],
    ]);
    // Mixed sizes and fields differing from the node's first entry.
    let long = "y".repeat(130);
    for i in 1..=60u64 {
        let id = format!("{i}-0");
        let f = if i % 3 == 0 { "other" } else { "field" };
        let v = if i % 2 == 0 { &long[..] } else { "12345" };
        d.check(&[&["XADD", "m", &id, f, v, "second", "-77"]]);
    }
    d.check(&[
        &["XTRIM", "m", "MAXLEN", "~", "40"],
        &["XLEN", "m"],
        &["XTRIM", "m", "MAXLEN", "~", "10"],
        &["XLEN", "m"],
    ]);
}

/// CONFIG's `stream-node-max-entries` and `stream-node-max-bytes` cut the nodes that `~`
/// trims whole, and the LIMIT `~` gets without one is 100 nodes' worth of entries: Redis
/// 7.0.15's `unit/type/stream` cases ("XADD with LIMIT consecutive calls", "XTRIM with LIMIT
/// delete entries no more than limit") and more, against redis-server.
#[test]
fn config_node_limits_decide_what_approximate_trimming_removes() {
    let mut d = Diff::new();
    d.check(&[&["CONFIG", "SET", "stream-node-max-entries", "10"]]);
    fill(&mut d, "s", 0, 100, 1);
    d.check(&[
        &[
            "XADD", "s", "MAXLEN", "~", "55", "LIMIT", "30", "101-0", "f", "v",
        ],
        &["XLEN", "s"],
        &[
            "XADD", "s", "MAXLEN", "~", "55", "LIMIT", "30", "102-0", "f", "v",
        ],
        &["XLEN", "s"],
        &["CONFIG", "SET", "stream-node-max-entries", "2"],
    ]);
    fill(&mut d, "t", 0, 3, 1);
    d.check(&[
        &["XTRIM", "t", "MAXLEN", "~", "0", "LIMIT", "1"],
        &["XTRIM", "t", "MAXLEN", "~", "0", "LIMIT", "2"],
        &["XLEN", "t"],
        // Without LIMIT, `~` removes at most 100 * 1 entries.
        &["CONFIG", "SET", "stream-node-max-entries", "1"],
    ]);
    fill(&mut d, "u", 0, 250, 1);
    d.check(&[
        &["XTRIM", "u", "MAXLEN", "~", "0"],
        &["XLEN", "u"],
        // 0: no entry limit, nodes cut by bytes alone.
        &["CONFIG", "SET", "stream-node-max-entries", "0"],
        &["CONFIG", "SET", "stream-node-max-bytes", "200"],
    ]);
    fill(&mut d, "v", 0, 60, 10);
    d.check(&[
        &["XTRIM", "v", "MAXLEN", "~", "30"],
        &["XLEN", "v"],
        &["XTRIM", "v", "MAXLEN", "~", "0"],
        &["XLEN", "v"],
        &["CONFIG", "SET", "stream-node-max-entries", "100"],
        &["CONFIG", "SET", "stream-node-max-bytes", "4096"],
        &["CONFIG", "GET", "stream-node-max-entries"],
        &["CONFIG", "GET", "stream-node-max-bytes"],
    ]);
}

#[test]
fn xtrim_exact_and_errors() {
    let mut d = Diff::new();
    d.check(&[
        &["XADD", "s", "1-0", "f", "v"],
        &["XADD", "s", "2-0", "f", "v"],
        &["XADD", "s", "3-0", "f", "v"],
        &["XADD", "s", "4-0", "f", "v"],
        &["XADD", "s", "5-0", "f", "v"],
        &["XDEL", "s", "2-0"],
        &["XTRIM", "s", "MAXLEN", "3"],
        &["XRANGE", "s", "-", "+"],
        &["XTRIM", "s", "MAXLEN", "=", "3"],
        &["XTRIM", "s", "MINID", "5"],
        &["XRANGE", "s", "-", "+"],
        &["XTRIM", "s", "MINID", "=", "6"],
        &["XLEN", "s"],
        &["EXISTS", "s"],
        &["XTRIM", "nokey", "MAXLEN", "0"],
        &["XTRIM", "nokey", "MAXLEN", "-1"],
        &["XTRIM", "s", "MAXLEN", "-1"],
        &["XTRIM", "s", "MAXLEN", "x"],
        &["XTRIM", "s", "MAXLEN", "~"],
        &["XTRIM", "s", "MINID", "-"],
        &["XTRIM", "s", "MINID", "+"],
        &["XTRIM", "s", "LIMIT", "5"],
        &["XTRIM", "s", "MAXLEN", "1", "LIMIT", "5"],
        &["XTRIM", "s", "LIMIT", "-1", "MAXLEN", "~", "1"],
        &["XTRIM", "s", "MAXLEN", "~", "1", "LIMIT", "-1"],
        &["XTRIM", "s", "MAXLEN", "1", "MINID", "1"],
        &["XTRIM", "s", "FOO", "1"],
        &["XTRIM", "s", "NOMKSTREAM", "MAXLEN", "1"],
        &["XTRIM", "s", "MAXLEN", "1", "extra"],
        &["XTRIM", "s", "MAXLEN"],
        &["SET", "str", "x"],
        &["XTRIM", "str", "MAXLEN", "0"],
        &["XTRIM", "str", "MAXLEN", "x"],
    ]);
}

#[test]
fn xrange_and_xrevrange() {
    let mut d = Diff::new();
    d.check(&[
        &["XADD", "s", "1-0", "a", "1"],
        &["XADD", "s", "1-1", "b", "2"],
        &["XADD", "s", "2-0", "c", "3", "d", "4"],
        &["XADD", "s", "3-5", "e", "5"],
        &["XADD", "s", "18446744073709551615-0", "z", "z"],
        &["XRANGE", "s", "-", "+"],
        &["XREVRANGE", "s", "+", "-"],
        &["XRANGE", "s", "1", "1"],
        &["XRANGE", "s", "1-1", "2"],
        &["XRANGE", "s", "(1-0", "+"],
        &["XRANGE", "s", "(1", "+"],
        &["XRANGE", "s", "-", "(2-0"],
        &["XRANGE", "s", "-", "(2"],
        &["XRANGE", "s", "(1-1", "(3-5"],
        &["XREVRANGE", "s", "(3-5", "(1-0"],
        &["XREVRANGE", "s", "3", "1-1"],
        &["XRANGE", "s", "+", "-"],
        &["XREVRANGE", "s", "-", "+"],
        &["XRANGE", "s", "3", "2"],
        &["XRANGE", "s", "-", "+", "COUNT", "2"],
        &["XREVRANGE", "s", "+", "-", "COUNT", "2"],
        &["XRANGE", "s", "-", "+", "count", "1", "COUNT", "3"],
        &["XRANGE", "s", "-", "+", "COUNT", "0"],
        &["XRANGE", "s", "-", "+", "COUNT", "-5"],
        &["XRANGE", "nokey", "-", "+", "COUNT", "0"],
        &["XRANGE", "nokey", "-", "+"],
        &["XRANGE", "s", "-", "+", "COUNT"],
        &["XRANGE", "s", "-", "+", "COUNT", "x"],
        &["XRANGE", "s", "-", "+", "LIMIT", "1"],
        &["XRANGE", "s", "(-", "+"],
        &["XRANGE", "s", "-", "(+"],
        &["XRANGE", "s", "(", "+"],
        &["XRANGE", "s", "abc", "+"],
        &["XRANGE", "s", "-", "abc"],
        &[
            "XRANGE",
            "s",
            "(18446744073709551615-18446744073709551615",
            "+",
        ],
        &["XRANGE", "s", "-", "(0-0"],
        &["XRANGE", "s", "(0", "+", "COUNT", "1"],
        &["XRANGE", "s", "(18446744073709551615", "+"],
        &["XRANGE", "s", "18446744073709551615", "+"],
        &["XREVRANGE", "s", "(0-0", "-"],
        &[
            "XREVRANGE",
            "s",
            "+",
            "(18446744073709551615-18446744073709551615",
        ],
        &["SET", "str", "x"],
        &["XRANGE", "str", "-", "+"],
        &["XRANGE", "str", "-", "+", "COUNT", "0"],
        &["XRANGE", "str", "bad", "+"],
        &["XREVRANGE", "str", "+", "-"],
        &["XRANGE", "s", "-"],
    ]);
}

#[test]
fn xread_without_blocking() {
    let mut d = Diff::new();
    d.check(&[
        &["XADD", "a", "1-0", "f", "1"],
        &["XADD", "a", "2-0", "f", "2"],
        &["XADD", "a", "3-0", "f", "3"],
        &["XADD", "b", "5-0", "g", "5"],
        &["XREAD", "STREAMS", "a", "0"],
        &["XREAD", "STREAMS", "a", "b", "0", "0"],
        &["XREAD", "COUNT", "2", "STREAMS", "a", "b", "1", "0-0"],
        &["XREAD", "COUNT", "0", "STREAMS", "a", "0"],
        &["XREAD", "COUNT", "-3", "STREAMS", "a", "0"],
        &["XREAD", "count", "1", "count", "2", "streams", "a", "0"],
        &["XREAD", "STREAMS", "a", "b", "3-0", "0"],
        &["XREAD", "STREAMS", "a", "b", "3-0", "5"],
        &["XREAD", "STREAMS", "a", "$"],
        &["XREAD", "STREAMS", "nokey", "$"],
        &["XREAD", "STREAMS", "nokey", "a", "0", "0"],
        &["XREAD", "STREAMS", "a", "a", "2", "0"],
        &["XREAD", "STREAMS", "a", "1-*"],
        &["XREAD", "STREAMS", "a", "-"],
        &["XREAD", "STREAMS", "a", "+"],
        &["XREAD", "STREAMS", "a", "bad"],
        &["XREAD", "STREAMS", "a", ">"],
        &["XREAD", "STREAMS", "a", "b", "0"],
        &["XREAD", "STREAMS", "a"],
        &["XREAD", "COUNT", "1", "a", "0"],
        &["XREAD", "COUNT", "x", "STREAMS", "a", "0"],
        &["XREAD", "GROUP", "g", "c", "STREAMS", "a", "0"],
        &["XREAD", "NOACK", "STREAMS", "a", "0"],
        &["XREAD", "FOO", "STREAMS", "a", "0"],
        &["XREAD", "COUNT", "1", "BLOCK", "1"],
        &["XREAD", "COUNT", "STREAMS", "STREAMS", "a", "0"],
        &["XADD", "e", "1-0", "f", "v"],
        &["XDEL", "e", "1-0"],
        &["XREAD", "STREAMS", "e", "0"],
        &["SET", "str", "x"],
        &["XREAD", "STREAMS", "a", "str", "0", "0"],
        &["XREAD", "STREAMS", "str", "a", "0", "bad"],
        &["XREAD", "STREAMS", "a", "str", "bad", "0"],
    ]);
}

#[test]
fn xread_block_replies_at_once_when_data_is_there() {
    let mut d = Diff::new();
    d.check(&[
        &["XADD", "a", "1-0", "f", "1"],
        &["XADD", "a", "2-0", "f", "2"],
        &["XREAD", "BLOCK", "0", "STREAMS", "a", "0"],
        &[
            "XREAD", "BLOCK", "100", "COUNT", "1", "STREAMS", "a", "nokey", "1", "0",
        ],
        &["XREAD", "BLOCK", "-1", "STREAMS", "a", "0"],
        &["XREAD", "BLOCK", "x", "STREAMS", "a", "0"],
        &["XREAD", "BLOCK", "1.5", "STREAMS", "a", "0"],
        &["XREAD", "BLOCK", "+1", "STREAMS", "a", "0"],
        // Without data Redis would wait; inside MULTI it replies as on timeout, as the
        // engine does until the server adds the waiting.
        &["MULTI"],
        &["XREAD", "BLOCK", "0", "STREAMS", "a", "$"],
        &["XREAD", "BLOCK", "10", "STREAMS", "nokey", "0"],
        &["XREAD", "BLOCK", "0", "STREAMS", "a", "1-0"],
        &["EXEC"],
    ]);
}

#[test]
fn xdel_and_the_last_id() {
    let mut d = Diff::new();
    d.check(&[
        &["XADD", "s", "1-0", "f", "v"],
        &["XADD", "s", "2-0", "f", "v"],
        &["XADD", "s", "3-0", "f", "v"],
        &["XDEL", "s", "2-0"],
        &["XDEL", "s", "2-0"],
        &["XDEL", "s", "1-0", "3-0", "9-9", "1-0"],
        &["XLEN", "s"],
        &["EXISTS", "s"],
        &["XRANGE", "s", "-", "+"],
        // The top id stays: new ids must still go above 3-0.
        &["XADD", "s", "3-0", "f", "v"],
        &["XADD", "s", "3-*", "f", "v"],
        &["XDEL", "s", "bad"],
        &["XDEL", "s", "3-1", "bad"],
        &["XLEN", "s"],
        &["XDEL", "s", "-"],
        &["XDEL", "s", "+"],
        &["XDEL", "s", "5"],
        &["XDEL", "nokey", "bad"],
        &["XDEL", "nokey", "1-0"],
        &["SET", "str", "x"],
        &["XDEL", "str", "bad"],
        &["XDEL", "str", "1-0"],
        &["XDEL", "s"],
    ]);
}

#[test]
fn transactions_and_resp3_xread() {
    let mut d = Diff::new();
    d.check(&[
        &["MULTI"],
        &["XADD", "s", "1-0", "f", "v"],
        &["XADD", "s", "1-0", "f", "v"],
        &["XLEN", "s"],
        &["EXEC"],
    ]);
    // HELLO's reply carries the client id, which differs; only the protocol switch matters.
    let _ = d.both(&["HELLO", "3"]);
    d.check(&[
        &["XREAD", "STREAMS", "s", "0"],
        &["XREAD", "STREAMS", "s", "1-0"],
        &["XRANGE", "s", "-", "+"],
    ]);
}

#[test]
fn typed_api_on_a_manual_clock() {
    let clock = Arc::new(AtomicU64::new(1_000));
    let engine = Engine::with_clock(clock.clone());
    let now = engine.now_ms();
    let mut ks = engine.db(0).lock([&b"s"[..], b"t"], now);
    let fields = |v: &str| vec![(b"f".to_vec(), v.as_bytes().to_vec())];
    assert_eq!(
        ks.xadd(b"s", XaddId::Auto, fields("a"), false, None),
        Ok(Some(StreamId::new(1_000, 0)))
    );
    assert_eq!(
        ks.xadd(b"s", XaddId::Auto, fields("b"), false, None),
        Ok(Some(StreamId::new(1_000, 1)))
    );
    assert_eq!(
        ks.xadd(b"s", XaddId::AutoSeq(1_000), fields("c"), false, None),
        Ok(Some(StreamId::new(1_000, 2)))
    );
    assert_eq!(
        ks.xadd(b"t", XaddId::Auto, fields("x"), true, None),
        Ok(None)
    );
    assert_eq!(ks.xlen(b"s"), Ok(3));
    let trim = TrimSpec {
        how: Trim::MaxLen(2),
        approx: false,
        limit: 0,
    };
    assert_eq!(
        ks.xadd(
            b"s",
            XaddId::Explicit(StreamId::new(2_000, 0)),
            fields("d"),
            false,
            Some(trim)
        ),
        Ok(Some(StreamId::new(2_000, 0)))
    );
    let all = ks
        .xrange(b"s", StreamId::MIN, StreamId::MAX, None, false)
        .unwrap();
    let ids: Vec<StreamId> = all.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids, vec![StreamId::new(1_000, 2), StreamId::new(2_000, 0)]);
    let read = ks
        .xread(
            &[(&b"s"[..], StreamId::new(1_000, 2)), (b"t", StreamId::MIN)],
            0,
        )
        .unwrap();
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].0, b"s");
    assert_eq!(read[0].1, vec![(StreamId::new(2_000, 0), fields("d"))]);
    assert_eq!(ks.xlast_id(b"s"), Ok(StreamId::new(2_000, 0)));
    assert_eq!(
        ks.xdel(b"s", &[StreamId::new(2_000, 0), StreamId::MIN]),
        Ok(1)
    );
    assert_eq!(
        ks.xtrim(
            b"s",
            TrimSpec {
                how: Trim::MinId(StreamId::MAX),
                ..trim
            }
        ),
        Ok(1)
    );
    assert_eq!(ks.xlen(b"s"), Ok(0));
    // A later id than the clock: `*` continues from the top item.
    assert_eq!(
        ks.xadd(b"s", XaddId::Auto, fields("e"), false, None),
        Ok(Some(StreamId::new(2_000, 1)))
    );
}

/// Consumer groups (XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO, XSETID).
mod groups;

/// Consumer groups over the RESP server: consumers on their own connections, XREADGROUP
/// BLOCK.
mod served;

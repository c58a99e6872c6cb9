//! OBJECT ENCODING after histories where redis-server 7.0 changes a value's representation
//! without changing its contents, differentially: a string edited in place by a command
//! that then changes nothing (`dbUnshareStringValue` runs first), HyperLogLogs (always made
//! `raw`), and a sorted set over a lowered limit, which ZSCAN must walk as the skip list
//! OBJECT ENCODING reports. Also the change counts of bit commands that create their key.

use crate::support::diff::Diff;

fn encodings(d: &mut Diff, keys: &[&str]) {
    for k in keys {
        d.check(&[&["OBJECT", "ENCODING", k]]);
    }
}

#[test]
fn in_place_edits_that_change_nothing_still_make_raw_strings() {
    let mut d = Diff::new();
    d.check(&[
        // "h" is 0x68: bit 1 is already 1, bit 0 already 0.
        &["SET", "same_bit", "hi"],
        &["SETBIT", "same_bit", "1", "1"],
        &["SET", "same_bit0", "hi"],
        &["SETBIT", "same_bit0", "0", "0"],
        &["SET", "int", "12"],
        &["SETBIT", "int", "2", "1"],
        &["SET", "field", "a"],
        &["BITFIELD", "field", "SET", "u8", "0", "97"],
        &["SET", "field_get", "a"],
        &["BITFIELD", "field_get", "GET", "u8", "0"],
        &["SET", "field_fail", "a"],
        &[
            "BITFIELD",
            "field_fail",
            "OVERFLOW",
            "FAIL",
            "INCRBY",
            "u8",
            "0",
            "200",
        ],
        &["SETBIT", "new_bit", "3", "0"],
        &["BITFIELD", "new_field", "SET", "i5", "0", "0"],
        // SETRANGE of nothing returns before Redis unshares.
        &["SET", "range_empty", "1234"],
        &["SETRANGE", "range_empty", "0", ""],
        &["SET", "append_empty", "ab"],
        &["APPEND", "append_empty", ""],
    ]);
    encodings(
        &mut d,
        &[
            "same_bit",
            "same_bit0",
            "int",
            "field",
            "field_get",
            "field_fail",
            "new_bit",
            "new_field",
            "range_empty",
            "append_empty",
        ],
    );
}

#[test]
fn hyperloglogs_are_raw_strings() {
    let mut d = Diff::new();
    d.check(&[
        &["PFADD", "new", "a", "b", "c"],
        &["PFADD", "empty"],
        &["PFADD", "again", "a"],
        &["PFADD", "merged", "z"],
        &["PFMERGE", "merged_new", "new"],
        &["PFMERGE", "merged", "new"],
    ]);
    // A HyperLogLog stored by SET (as a replica or a restore would) is `embstr` when short,
    // until a HyperLogLog command unshares it: PFADD that raises nothing, PFCOUNT of a
    // cached count, PFDEBUG. PFCOUNT of several keys leaves them as they are.
    let bytes: Vec<u8> = {
        // The empty HyperLogLog's bytes, as the engine (equal to Redis's, tested in `hll`)
        // returns them.
        let reply = d
            .engine
            .execute(&mut d.client, &[b"GET", b"empty"])
            .into_redis_value(d.client.resp);
        match reply {
            redis::Value::BulkString(b) => b,
            other => panic!("GET empty: {other:?}"),
        }
    };
    for key in ["as_set", "as_set_count", "as_set_debug", "as_set_multi"] {
        d.both_bytes(&[b"SET", key.as_bytes(), &bytes]);
    }
    d.check(&[
        &["OBJECT", "ENCODING", "as_set"],
        &["PFADD", "as_set"],
        &["PFCOUNT", "as_set_count"],
        &["PFCOUNT", "as_set_count"],
        &["PFDEBUG", "ENCODING", "as_set_debug"],
        &["PFCOUNT", "as_set_multi", "new"],
        &["SET", "not_hll", "abc"],
        &["PFADD", "not_hll", "a"],
        &["PFCOUNT", "not_hll"],
    ]);
    encodings(
        &mut d,
        &[
            "new",
            "empty",
            "again",
            "merged",
            "merged_new",
            "as_set",
            "as_set_count",
            "as_set_debug",
            "as_set_multi",
            "not_hll",
        ],
    );
}

/// A sorted set past a lowered `zset-max-listpack-entries` is a skip list in Redis even
/// where the engine's own representation is still small: ZSCAN pages it with a cursor, and
/// prints its scores as replies do, as Redis's dictionary scan does.
#[test]
fn zscan_walks_a_skiplist_that_the_engine_keeps_small() {
    let mut d = Diff::new();
    let mut zadd = vec!["ZADD", "z"];
    let members: Vec<String> = (0..40).map(|i| format!("m{i}")).collect();
    let scores: Vec<String> = (0..40).map(|i| format!("{}.5", i)).collect();
    for (m, s) in members.iter().zip(&scores) {
        zadd.push(s);
        zadd.push(m);
    }
    d.check(&[&["CONFIG", "SET", "zset-max-listpack-entries", "16"], &zadd]);
    encodings(&mut d, &["z"]);
    // Both answer a page and a cursor to go on with, not the whole set with cursor 0 (what
    // a cursor of 0 looks like: the reply for a missing key).
    let (done, _) = d.both(&["ZSCAN", "missing", "0"]);
    let zero = &done[..done.find(',').unwrap_or(done.len())];
    let (real, ours) = d.both(&["ZSCAN", "z", "0"]);
    for reply in [&real, &ours] {
        assert!(!reply.starts_with(zero), "{reply}");
    }
    // A whole scan sees every member once, scores printed as replies print them.
    let mut seen = Vec::new();
    let mut cursor = "0".to_string();
    loop {
        let reply = d
            .engine
            .execute(&mut d.client, &[b"ZSCAN", b"z", cursor.as_bytes()])
            .into_redis_value(d.client.resp);
        let redis::Value::Array(parts) = reply else {
            panic!("ZSCAN: {reply:?}")
        };
        let (redis::Value::BulkString(next), redis::Value::Array(items)) = (&parts[0], &parts[1])
        else {
            panic!("ZSCAN: {parts:?}")
        };
        for pair in items.chunks(2) {
            if let [redis::Value::BulkString(m), redis::Value::BulkString(s)] = pair {
                seen.push((
                    String::from_utf8_lossy(m).into_owned(),
                    String::from_utf8_lossy(s).into_owned(),
                ));
            }
        }
        cursor = String::from_utf8_lossy(next).into_owned();
        if cursor == "0" {
            break;
        }
    }
    seen.sort();
    let mut expected: Vec<(String, String)> = members
        .iter()
        .cloned()
        .zip(scores.iter().cloned())
        .collect();
    expected.sort();
    assert_eq!(seen, expected);
    // A small set under the default limit still comes whole, in order.
    d.check(&[
        &["CONFIG", "SET", "zset-max-listpack-entries", "128"],
        &["ZADD", "small", "1", "a", "2", "b"],
        &["ZSCAN", "small", "0"],
    ]);
}

fn changes(d: &mut Diff) -> (i64, i64) {
    let (real, ours) = d.both(&["INFO", "persistence"]);
    let field = |info: &str| -> i64 {
        let at = info
            .find("rdb_changes_since_last_save:")
            .unwrap_or_else(|| panic!("no rdb_changes_since_last_save in {info}"));
        info[at + "rdb_changes_since_last_save:".len()..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect::<String>()
            .parse()
            .unwrap_or_else(|_| panic!("{info}"))
    };
    (field(&real), field(&ours))
}

/// Redis's SETBIT and BITFIELD count one change for a key they create (the TCL test "SETBIT
/// /BITFIELD only increase dirty when the value changed").
#[test]
fn bit_commands_count_one_change_for_a_new_key() {
    let mut d = Diff::in_process_only();
    let before = changes(&mut d);
    d.check(&[
        &["SETBIT", "foo", "0", "0"],
        &["BITFIELD", "foo2", "SET", "i5", "0", "0"],
    ]);
    let created = changes(&mut d);
    d.check(&[
        &["SETBIT", "foo", "0", "0"],
        &["BITFIELD", "foo2", "SET", "i5", "0", "0"],
    ]);
    let unchanged = changes(&mut d);
    d.check(&[
        &["SETBIT", "foo", "90", "0"],
        &["BITFIELD", "foo2", "SET", "i5", "90", "0"],
    ]);
    let grown = changes(&mut d);
    assert_eq!(created.0 - before.0, 2);
    assert_eq!(created.1 - before.1, 2, "engine");
    assert_eq!(unchanged.1 - created.1, unchanged.0 - created.0);
    assert_eq!(grown.1 - unchanged.1, grown.0 - unchanged.0);
}

#[test]
fn sort_turns_a_sorted_set_into_a_skiplist() {
    let mut d = Diff::new();
    d.check(&[
        &["ZADD", "z", "1", "a", "2", "b"],
        &["ZADD", "z_ro", "1", "a"],
        &["ZADD", "untouched", "1", "a"],
        &["SORT", "z", "ALPHA"],
        &["SORT_RO", "z_ro", "ALPHA"],
        &["RPUSH", "l", "2", "1"],
        &["SORT", "l"],
    ]);
    encodings(&mut d, &["z", "z_ro", "untouched", "l"]);
}

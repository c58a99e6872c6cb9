//! SORT and SORT_RO, differentially against a real redis-server: numeric and ALPHA order,
//! ASC/DESC, LIMIT windows, BY patterns (keys, hash fields, constants such as `nosort`),
//! GET patterns (`#`, missing keys, hash fields), STORE, and Redis's errors.

use crate::support::diff::Diff;

fn setup(d: &mut Diff) {
    d.check(&[
        &["RPUSH", "nums", "3", "1", "2", "10", "-5", "2.5", "1e2"],
        &[
            "RPUSH", "words", "pear", "apple", "Banana", "cherry", "apple",
        ],
        &["RPUSH", "ids", "1", "2", "3", "4"],
        &["SET", "w_1", "40"],
        &["SET", "w_2", "10"],
        &["SET", "w_3", "30"],
        &["SET", "name_1", "dave"],
        &["SET", "name_2", "alice"],
        &["SET", "name_4", "carol"],
        &["HSET", "obj_1", "age", "31", "tag", "x"],
        &["HSET", "obj_2", "age", "25"],
        &["HSET", "obj_3", "age", "40", "tag", "z"],
        &["HSET", "obj_4", "age", "25", "tag", "y"],
        &["ZADD", "z", "1", "30", "2", "10", "3", "20"],
        &["SADD", "s", "5", "3", "9", "1"],
    ]);
}

#[test]
fn numeric_alpha_and_limits() {
    let mut d = Diff::new();
    setup(&mut d);
    d.check(&[
        &["SORT", "nums"],
        &["SORT", "nums", "DESC"],
        &["SORT", "nums", "ASC", "DESC", "ASC"],
        &["SORT", "words", "ALPHA"],
        &["SORT", "words", "ALPHA", "DESC"],
        &["SORT", "nums", "ALPHA"],
        &["SORT", "nums", "LIMIT", "0", "3"],
        &["SORT", "nums", "LIMIT", "2", "100"],
        &["SORT", "nums", "LIMIT", "-1", "2"],
        &["SORT", "nums", "LIMIT", "5", "-1"],
        &["SORT", "nums", "LIMIT", "100", "2"],
        &["SORT", "nums", "LIMIT", "0", "0"],
        &["SORT", "nums", "DESC", "LIMIT", "1", "2"],
        &["SORT", "z"],
        &["SORT", "z", "DESC"],
        &["SORT", "s"],
        &["SORT", "s", "DESC", "LIMIT", "1", "2"],
        &["SORT", "missing"],
        &["SORT", "missing", "LIMIT", "0", "1"],
        &["SORT_RO", "nums", "DESC"],
        &["SORT_RO", "words", "ALPHA", "LIMIT", "1", "2"],
    ]);
}

#[test]
fn by_and_get_patterns() {
    let mut d = Diff::new();
    setup(&mut d);
    d.check(&[
        &["SORT", "ids", "BY", "w_*"],
        &["SORT", "ids", "BY", "w_*", "DESC"],
        &["SORT", "ids", "BY", "name_*", "ALPHA"],
        &["SORT", "ids", "BY", "name_*", "ALPHA", "DESC"],
        &["SORT", "ids", "BY", "obj_*->age"],
        &["SORT", "ids", "BY", "obj_*->age", "DESC"],
        &["SORT", "ids", "BY", "obj_*->tag", "ALPHA"],
        &["SORT", "ids", "BY", "nosort"],
        &["SORT", "ids", "BY", "nosort", "DESC"],
        &["SORT", "ids", "BY", "nosort", "LIMIT", "1", "2"],
        &["SORT", "ids", "BY", "nosort", "DESC", "LIMIT", "1", "2"],
        &["SORT", "z", "BY", "nosort"],
        &["SORT", "z", "BY", "nosort", "DESC", "LIMIT", "0", "2"],
        &["SORT", "ids", "GET", "name_*"],
        &[
            "SORT",
            "ids",
            "GET",
            "#",
            "GET",
            "name_*",
            "GET",
            "obj_*->age",
        ],
        &["SORT", "ids", "GET", "obj_*->tag", "GET", "obj_*->missing"],
        &["SORT", "ids", "GET", "constant"],
        &["SORT", "ids", "GET", "obj_*->"],
        &["SORT", "ids", "BY", "w_*", "GET", "#", "LIMIT", "0", "2"],
        &["SORT", "ids", "BY", "nosort", "GET", "name_*"],
        &["SORT", "ids", "BY", "obj_*", "GET", "w_*"],
        &["SORT_RO", "ids", "BY", "w_*", "GET", "name_*"],
        // BY keys of another type count as missing.
        &["SORT", "ids", "BY", "obj_*"],
        &[
            "SORT",
            "ids",
            "BY",
            "obj_*->age",
            "GET",
            "#",
            "GET",
            "obj_*->age",
        ],
    ]);
}

#[test]
fn store_writes_a_list() {
    let mut d = Diff::new();
    setup(&mut d);
    d.check(&[
        &["SORT", "nums", "STORE", "out"],
        &["LRANGE", "out", "0", "-1"],
        &["SORT", "ids", "GET", "name_*", "STORE", "out"],
        &["LRANGE", "out", "0", "-1"],
        &["SORT", "s", "BY", "nosort", "STORE", "out"],
        &["LRANGE", "out", "0", "-1"],
        &["SORT", "words", "ALPHA", "STORE", "out"],
        &["LRANGE", "out", "0", "-1"],
        &["SET", "out", "string"],
        &["EXPIRE", "out", "100"],
        &["SORT", "ids", "STORE", "out"],
        &["TYPE", "out"],
        &["TTL", "out"],
        &["SORT", "missing", "STORE", "out"],
        &["EXISTS", "out"],
        &["SORT", "ids", "LIMIT", "9", "1", "STORE", "out"],
        &["SORT", "ids", "STORE", "ids"],
        &["LRANGE", "ids", "0", "-1"],
    ]);
}

#[test]
fn errors_like_redis() {
    let mut d = Diff::new();
    setup(&mut d);
    // Before any out-of-range score: Redis does not reset errno before strtod, so after one
    // every SORT that follows reports the error too.
    d.check(&[
        &["RPUSH", "blank", "", "1"],
        &["SORT", "blank"],
        &["RPUSH", "mixed", "1", "x", "2"],
        &["SORT", "mixed"],
        &["SORT", "mixed", "ALPHA"],
        &["SORT", "mixed", "BY", "nosort"],
        &["RPUSH", "odd", "nan", "1"],
        &["SORT", "odd"],
        &["RPUSH", "far", "1e400", "1"],
        &["SORT", "far"],
        &["RPUSH", "spaced", " 1", "2 ", "3"],
        &["SORT", "spaced"],
        &["SET", "w_bad", "x"],
        &["RPUSH", "bad", "bad", "1"],
        &["SORT", "bad", "BY", "w_*"],
        &["SORT", "mixed", "STORE", "dst"],
        &["EXISTS", "dst"],
        &["SET", "str", "v"],
        &["SORT", "str"],
        &["HSET", "h", "f", "v"],
        &["SORT", "h"],
        &["SORT", "nums", "LIMIT", "1"],
        &["SORT", "nums", "LIMIT", "x", "1"],
        &["SORT", "nums", "LIMIT", "1", "1.5"],
        &["SORT", "nums", "BY"],
        &["SORT", "nums", "GET"],
        &["SORT", "nums", "STORE"],
        &["SORT", "nums", "FOO"],
        &["SORT_RO", "nums", "STORE", "x"],
        &["SORT"],
        &["SORT_RO"],
        &["SORT", "str", "FOO"],
    ]);
}

#[test]
fn sort_with_patterns_inside_multi() {
    let mut d = Diff::new();
    setup(&mut d);
    d.check(&[
        &["MULTI"],
        &["SORT", "ids", "BY", "w_*", "GET", "name_*"],
        &["SORT", "nums", "STORE", "copy"],
        &["LLEN", "copy"],
        &["EXEC"],
    ]);
}

#[test]
fn command_getkeys_names_the_sorted_and_store_keys() {
    let mut d = Diff::new();
    d.check(&[
        &["COMMAND", "GETKEYS", "SORT", "k"],
        &["COMMAND", "GETKEYS", "SORT", "k", "STORE", "dst"],
        &[
            "COMMAND", "GETKEYS", "SORT", "k", "BY", "w_*", "GET", "#", "STORE", "dst",
        ],
        &["COMMAND", "GETKEYS", "SORT_RO", "k", "BY", "w_*"],
        &[
            "COMMAND", "GETKEYS", "SORT", "k", "STORE", "a", "STORE", "b",
        ],
        &["COMMAND", "GETKEYS", "SORT", "k", "GET", "STORE", "x"],
        &["COMMAND", "GETKEYSANDFLAGS", "SORT", "k", "STORE", "dst"],
    ]);
}

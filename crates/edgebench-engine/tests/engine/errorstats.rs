//! INFO's error counters against redis-server 7.0: `errorstats` by error code,
//! `total_error_replies`, and commandstats' `rejected_calls` (refused before running: arity,
//! NOAUTH, no-multi) and `failed_calls` (ran and replied with an error), inside and outside
//! MULTI and scripts.

use crate::support::diff::Diff;

/// The `key:value` lines of an INFO reply whose key starts with one of `prefixes`, with
/// commandstats' timings dropped, sorted.
fn lines(info: &str, prefixes: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = info
        .split("\\r\\n")
        .filter(|l| prefixes.iter().any(|p| l.starts_with(p)))
        .filter(|l| !l.starts_with("cmdstat_info") && !l.starts_with("cmdstat_config"))
        .map(|l| {
            let mut fields: Vec<&str> = l.split(',').collect();
            fields.retain(|f| !f.starts_with("usec"));
            fields.join(",")
        })
        .collect();
    out.sort();
    out
}

#[test]
fn error_counters_match_redis() {
    let mut d = Diff::in_process_only();
    d.check(&[&["CONFIG", "RESETSTAT"]]);
    for args in [
        &["SET", "a"][..],
        &["GET", "a", "b"],
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
        &["SET", "k", "v"],
        &["LPUSH", "k", "x"],
        &["NOSUCHCOMMAND"],
        &["MULTI"],
        &["INCR", "k"],
        &["SAVE"],
        &["EXEC"],
        &["MULTI"],
        &["INCR", "k"],
        &["EXEC"],
    ] {
        d.both(args);
    }
    let (real, ours) = d.both(&["INFO", "errorstats"]);
    assert_eq!(lines(&ours, &["errorstat_"]), lines(&real, &["errorstat_"]));
    assert!(!lines(&real, &["errorstat_"]).is_empty());
    let (real, ours) = d.both(&["INFO", "stats"]);
    assert_eq!(
        lines(&ours, &["total_error_replies"]),
        lines(&real, &["total_error_replies"])
    );
    let (real, ours) = d.both(&["INFO", "commandstats"]);
    assert_eq!(lines(&ours, &["cmdstat_"]), lines(&real, &["cmdstat_"]));
}

/// A command a script calls counts its own error (refused: `rejected_calls`; ran: `failed_calls`)
/// and the script's error reply made of it counts only as the script's failed call, whether
/// `redis.call` raised it or the script returned `redis.pcall`'s error; an error caught by
/// `redis.pcall` leaves the script's call clean. Each case against redis-server.
#[test]
fn errors_inside_scripts_are_counted_once_as_in_redis() {
    let cases: &[&[&str]] = &[
        &["EVAL", "return redis.call('select', 99)", "0"],
        &[
            "EVAL",
            "local t = redis.pcall('select', 99) return t['err']",
            "0",
        ],
        &["EVAL_RO", "return redis.call('set', 'x', 'y')", "1", "x"],
        &["EVAL_RO", "return redis.pcall('set', 'x', 'y')", "1", "x"],
        &["EVAL", "return redis.call('lpush', 'str', 'a')", "1", "str"],
        &["EVAL", "return redis.call('get')", "0"],
        &["EVAL", "return redis.call('nosuch')", "0"],
        &["EVAL", "return redis.call()", "0"],
        &["EVAL", "return error('mine')", "0"],
        &["EVAL", "return redis.error_reply('MY own')", "0"],
        &["EVAL", "return redis.call('set', 'x', 1)", "1", "x"],
    ];
    for case in cases {
        let mut d = Diff::in_process_only();
        d.check(&[
            &["SET", "str", "v"],
            &["CONFIG", "SET", "min-replicas-to-write", "0"],
        ]);
        if case[1].contains("'x', 1") {
            d.check(&[&["CONFIG", "SET", "min-replicas-to-write", "1"]]);
        }
        d.check(&[&["CONFIG", "RESETSTAT"], case]);
        let (real, ours) = d.both(&["INFO", "errorstats"]);
        assert_eq!(
            lines(&ours, &["errorstat_"]),
            lines(&real, &["errorstat_"]),
            "{case:?}"
        );
        let (real, ours) = d.both(&["INFO", "stats"]);
        let total = &["total_error_replies"];
        assert_eq!(lines(&ours, total), lines(&real, total), "{case:?}");
        let (real, ours) = d.both(&["INFO", "commandstats"]);
        assert_eq!(
            lines(&ours, &["cmdstat_"]),
            lines(&real, &["cmdstat_"]),
            "{case:?}"
        );
    }
}

//! INFO's error counters against redis-server 7.0: `errorstats` by error code,
//! `total_error_replies`, and commandstats' `rejected_calls` (refused before running: arity,
//! NOAUTH, no-multi) and `failed_calls` (ran and replied with an error), inside and outside
//! MULTI.

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

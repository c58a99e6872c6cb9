//! Unit tests of the server commands' parsers and matchers.

use super::config::glob_match_nocase;
use super::state::{memtoull, parse_save, random_hex40, Param, PARAMS};
use super::*;

#[test]
fn globs_ignore_case() {
    assert!(glob_match_nocase(b"MAX*", "maxmemory"));
    assert!(glob_match_nocase(b"maxmemory-p?licy", "maxmemory-policy"));
    assert!(glob_match_nocase(b"[A-Z]z", "hz"));
    assert!(!glob_match_nocase(b"max*", "hz"));
}

#[test]
fn memory_values_parse_like_memtoull() {
    assert_eq!(memtoull(b"0"), Some(0));
    assert_eq!(memtoull(b""), Some(0));
    assert_eq!(memtoull(b"1k"), Some(1000));
    assert_eq!(memtoull(b"1KB"), Some(1024));
    assert_eq!(memtoull(b"2mb"), Some(2 << 20));
    assert_eq!(memtoull(b"1g"), Some(1_000_000_000));
    assert_eq!(memtoull(b"-1"), None);
    assert_eq!(memtoull(b"1x"), None);
    assert_eq!(memtoull(b"99999999999999999999"), Some(u64::MAX));
    assert_eq!(memtoull(b"99999999999999999999gb"), None);
}

#[test]
fn save_parses_like_redis() {
    assert_eq!(parse_save(b""), Some(String::new()));
    assert_eq!(parse_save(b"900 1"), Some("900 1".into()));
    assert_eq!(parse_save(b"1 "), Some("1 0".into()));
    assert_eq!(parse_save(b"1 2 3"), None);
    assert_eq!(parse_save(b"0 1"), None);
    assert_eq!(parse_save(b"1 -1"), None);
    assert_eq!(parse_save(b" 5  6 "), None);
}

#[test]
fn bytes_print_like_bytes_to_human() {
    assert_eq!(bytes_to_human(0), "0B");
    assert_eq!(bytes_to_human(1023), "1023B");
    assert_eq!(bytes_to_human(1038032), "1013.70K");
    assert_eq!(bytes_to_human(12193792), "11.63M");
}

#[test]
fn param_indices_name_their_params() {
    assert_eq!(PARAMS[Param::HZ].name, "hz");
    assert_eq!(PARAMS[Param::MAXCLIENTS].name, "maxclients");
    assert_eq!(PARAMS[Param::MAXMEMORY].name, "maxmemory");
    assert_eq!(PARAMS[Param::MAXMEMORY_POLICY].name, "maxmemory-policy");
    assert_eq!(PARAMS[Param::PORT].name, "port");
    assert_eq!(PARAMS[Param::PROTO_MAX_BULK_LEN].name, "proto-max-bulk-len");
    assert_eq!(PARAMS[Param::REQUIREPASS].name, "requirepass");
    // `dir` shows the absolute path of its value (set when the engine is made).
    for p in PARAMS.iter().filter(|p| p.name != "dir") {
        assert_eq!(
            p.parse(p.default.as_bytes()).as_deref(),
            Ok(p.default),
            "{}",
            p.name
        );
    }
}

#[test]
fn run_ids_are_forty_hex_digits() {
    let id = random_hex40();
    assert_eq!(id.len(), 40);
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_ne!(id, random_hex40());
}

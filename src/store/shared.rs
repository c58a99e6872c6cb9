//! What the document stores share: the names of their private databases, one-line error
//! texts, URLs without passwords, `LIMIT` values, and the SQL stores' event document.

use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::v2018::Event;

/// `edgebench_` and 12 random lowercase hex digits, different for every call: the name of a
/// run's private database (PostgreSQL, MongoDB) or in-memory SQLite file.
pub fn private_name() -> String {
    static CALLS: AtomicU64 = AtomicU64::new(0);
    // RandomState is seeded from the OS once per process, then varies per instance: with the
    // time, the process id and a call counter, names differ across processes and within
    // one. Not cryptographic; it only avoids clashes.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(CALLS.fetch_add(1, Ordering::Relaxed));
    h.write_u128(
        SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    format!("edgebench_{:012x}", h.finish() & 0xffff_ffff_ffff)
}

/// `text` on one line: its lines trimmed, empty ones dropped, joined by `sep` (`"; "` keeps
/// PostgreSQL's DETAIL and HINT apart), runs of whitespace inside a line made one space
/// (MongoDB's topology descriptions span lines and tabs).
pub fn one_line(text: &str, sep: &str) -> String {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(sep)
}

/// `e` and its sources, joined by `: `, on one line (the lines of each joined by `; `, so a
/// PostgreSQL server's DETAIL and HINT stay readable).
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut message = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    one_line(&message, "; ")
}

/// `url` with the password of its user info, if any, replaced by `***`: error messages name
/// the URL, and terminals and logs should not show a password.
pub fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => match userinfo.split_once(':') {
            Some((user, _)) => format!("{scheme}://{user}:***@{hosts}{tail}"),
            None => url.to_string(),
        },
        None => url.to_string(),
    }
}

/// This process's command line as results files record it: each URL's password (`--target
/// a=postgres://u:pw@h,b=…`, `--bus mqtts://u:pw@h`), a spawned target's `password=` and
/// the value of `-a`/`--authenticate` replaced by `***`, so a results directory can be
/// shared without the secrets of the run.
pub fn recorded_command_line() -> String {
    redact_command_line(std::env::args())
}

/// [`recorded_command_line`] of `args`.
fn redact_command_line(args: impl Iterator<Item = String>) -> String {
    let mut secret_next = false;
    args.map(|arg| {
        if std::mem::take(&mut secret_next) {
            return "***".to_string();
        }
        if arg == "-a" || arg == "--authenticate" {
            secret_next = true;
            return arg;
        }
        if arg.starts_with("--authenticate=") {
            return "--authenticate=***".to_string();
        }
        arg.split(',')
            .map(|item| redact_option_password(&redact_password(item)))
            .collect::<Vec<_>>()
            .join(",")
    })
    .collect::<Vec<_>>()
    .join(" ")
}

/// `…?user=u&password=PW&…` (a spawned target's options) with `PW` replaced by `***`.
fn redact_option_password(item: &str) -> String {
    let Some((base, query)) = item.split_once('?') else {
        return item.to_string();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some(("password", _)) => "password=***".to_string(),
            _ => pair.to_string(),
        })
        .collect();
    format!("{base}?{}", pairs.join("&"))
}

/// A `limit` as SQL's `LIMIT` takes it: [`crate::store::UNLIMITED`] (and anything past
/// `i64::MAX`) becomes `i64::MAX`, which no table reaches.
pub fn sql_limit(limit: usize) -> i64 {
    i64::try_from(limit).unwrap_or(i64::MAX)
}

/// An event's document in the SQL stores: the 2018 event fields without `readings` (those
/// are rows of the `reading` table, linked by `event_id`). `S` is `&str` to write and
/// `String` to read.
#[derive(Serialize, Deserialize)]
pub struct EventDoc<S> {
    pub id: S,
    pub pushed: i64,
    pub device: S,
    pub created: i64,
    pub modified: i64,
    pub origin: i64,
    pub event: S,
}

impl<'a> EventDoc<&'a str> {
    /// The document of `e`, borrowing its strings.
    pub fn of(e: &'a Event) -> Self {
        EventDoc {
            id: &e.id,
            pushed: e.pushed,
            device: &e.device,
            created: e.created,
            modified: e.modified,
            origin: e.origin,
            event: &e.event,
        }
    }
}

impl EventDoc<String> {
    /// The event, without its readings (they are rows of their own).
    pub fn into_event(self) -> Event {
        let d = self;
        Event {
            id: d.id,
            pushed: d.pushed,
            device: d.device,
            created: d.created,
            modified: d.modified,
            origin: d.origin,
            event: d.event,
            readings: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_names_are_edgebench_and_12_fresh_lowercase_hex() {
        let (a, b) = (private_name(), private_name());
        assert_ne!(a, b);
        for name in [a, b] {
            let suffix = name.strip_prefix("edgebench_").unwrap_or_default();
            assert_eq!(suffix.len(), 12, "{name}");
            assert!(
                suffix
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
                "{name}"
            );
        }
    }

    #[test]
    fn one_line_joins_detail_and_hint_and_squeezes_whitespace() {
        assert_eq!(
            one_line("ERROR: x\nDETAIL: y\n\nHINT: z", "; "),
            "ERROR: x; DETAIL: y; HINT: z"
        );
        assert_eq!(one_line("a\n  b\tc \n", " "), "a b c");
    }

    #[test]
    fn a_command_line_keeps_no_password() {
        let args = [
            "edgebench",
            "coredata",
            "--target",
            "a=rediss://u:pw@h:1?cacert=/c,redis://:pw@h,redis-tcp?user=u&password=s3&tls=yes",
            "-a",
            "u:pw",
            "--authenticate=pw",
            "-u",
            "redis://h:1",
        ]
        .map(String::from);
        assert_eq!(
            redact_command_line(args.into_iter()),
            "edgebench coredata --target a=rediss://u:***@h:1?cacert=/c,redis://:***@h,\
             redis-tcp?user=u&password=***&tls=yes -a *** --authenticate=*** -u redis://h:1"
        );
    }

    #[test]
    fn redacts_only_the_password() {
        assert_eq!(
            redact_password("postgres://u:pw@h:1/db?x=y"),
            "postgres://u:***@h:1/db?x=y"
        );
        assert_eq!(
            redact_password("mongodb://u:secret@h:27017/db?x=1"),
            "mongodb://u:***@h:27017/db?x=1"
        );
        assert_eq!(redact_password("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            redact_password("postgres:///db?host=/s"),
            "postgres:///db?host=/s"
        );
        assert_eq!(redact_password("mongodb://h:27017"), "mongodb://h:27017");
        assert_eq!(
            redact_password("mongodb://h/db?a=b@c"),
            "mongodb://h/db?a=b@c"
        );
        assert_eq!(redact_password("not a url"), "not a url");
    }

    #[test]
    fn limits_clamp_to_i64() {
        assert_eq!(sql_limit(0), 0);
        assert_eq!(sql_limit(7), 7);
        assert_eq!(sql_limit(crate::store::UNLIMITED), i64::MAX);
    }
}

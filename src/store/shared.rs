//! What the document stores share: the names of their private databases, one-line error
//! texts, `LIMIT` values, and the SQL stores' event document.

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
    fn limits_clamp_to_i64() {
        assert_eq!(sql_limit(0), 0);
        assert_eq!(sql_limit(7), 7);
        assert_eq!(sql_limit(crate::store::UNLIMITED), i64::MAX);
    }
}

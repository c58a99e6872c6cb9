//! ACL LOG: the latest refusals (commands, keys, channels) and failed authentications,
//! newest first, at most `acllog-max-len` of them. A refusal like one of the ten newest
//! entries (same reason, context, object and user, within a minute) counts on that entry
//! and moves it to the front instead of adding one, as Redis groups them.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use crate::resp::reply::Reply;

/// Entries this close in time (ms) may be grouped (Redis's `ACL_LOG_GROUPING_MAX_TIME_DELTA`).
const GROUPING_MS: u64 = 60_000;

/// Why an entry was logged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reason {
    Command,
    Key,
    Channel,
    Auth,
}

impl Reason {
    fn name(self) -> &'static str {
        match self {
            Reason::Command => "command",
            Reason::Key => "key",
            Reason::Channel => "channel",
            Reason::Auth => "auth",
        }
    }
}

/// Where the refused command ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Context {
    Toplevel,
    Multi,
    #[cfg(feature = "scripting")]
    Lua,
}

impl Context {
    fn name(self) -> &'static str {
        match self {
            Context::Toplevel => "toplevel",
            Context::Multi => "multi",
            #[cfg(feature = "scripting")]
            Context::Lua => "lua",
        }
    }
}

/// One entry.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) count: u64,
    pub(crate) reason: Reason,
    pub(crate) context: Context,
    /// The command, key or channel refused, or the user name of a failed AUTH.
    pub(crate) object: Vec<u8>,
    pub(crate) username: Vec<u8>,
    /// When it last happened (ms since the Unix epoch).
    pub(crate) at_ms: u64,
    /// The client's CLIENT LIST line when it last happened.
    pub(crate) client_info: String,
}

/// The log.
#[derive(Debug, Default)]
pub(crate) struct AclLog {
    entries: Mutex<VecDeque<Entry>>,
}

impl AclLog {
    /// Adds an entry (or counts it on a similar recent one), keeping at most `max_len`.
    pub(crate) fn add(&self, entry: Entry, max_len: usize) {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let similar = entries.iter().take(10).position(|e| {
            e.reason == entry.reason
                && e.context == entry.context
                && e.at_ms.abs_diff(entry.at_ms) <= GROUPING_MS
                && e.object == entry.object
                && e.username == entry.username
        });
        if let Some(at) = similar {
            if let Some(mut e) = entries.remove(at) {
                e.count += 1;
                e.at_ms = entry.at_ms;
                e.client_info = entry.client_info;
                entries.push_front(e);
            }
            return;
        }
        entries.push_front(entry);
        entries.truncate(max_len);
    }

    /// Drops the entries over a new `acllog-max-len`.
    pub(crate) fn trim(&self, max_len: usize) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .truncate(max_len);
    }

    /// ACL LOG RESET.
    pub(crate) fn reset(&self) {
        self.entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    /// ACL LOG [count]: the newest `count` entries as maps.
    pub(crate) fn reply(&self, count: usize, now_ms: u64) -> Reply {
        let entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        let field = |k: &str, v: Reply| (Reply::bulk(k.as_bytes()), v);
        Reply::Array(
            entries
                .iter()
                .take(count)
                .map(|e| {
                    let age = now_ms.saturating_sub(e.at_ms) as f64 / 1000.0;
                    Reply::Map(vec![
                        field("count", Reply::Int(e.count as i64)),
                        field("reason", Reply::bulk(e.reason.name().as_bytes())),
                        field("context", Reply::bulk(e.context.name().as_bytes())),
                        field("object", Reply::bulk(&e.object)),
                        field("username", Reply::bulk(&e.username)),
                        field("age-seconds", Reply::Double(age)),
                        field("client-info", Reply::bulk(e.client_info.as_bytes())),
                    ])
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(object: &str, at_ms: u64) -> Entry {
        Entry {
            count: 1,
            reason: Reason::Command,
            context: Context::Toplevel,
            object: object.as_bytes().to_vec(),
            username: b"u".to_vec(),
            at_ms,
            client_info: String::new(),
        }
    }

    #[test]
    fn similar_entries_are_counted_together_and_the_log_is_bounded() {
        let log = AclLog::default();
        log.add(entry("get", 0), 3);
        log.add(entry("set", 0), 3);
        log.add(entry("get", 10), 3);
        let Reply::Array(items) = log.reply(10, 10) else {
            panic!("array")
        };
        assert_eq!(items.len(), 2);
        log.add(entry("get", GROUPING_MS + 100), 3);
        for name in ["a", "b", "c"] {
            log.add(entry(name, 0), 3);
        }
        let Reply::Array(items) = log.reply(10, 0) else {
            panic!("array")
        };
        assert_eq!(items.len(), 3);
    }
}

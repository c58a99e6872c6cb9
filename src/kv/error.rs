//! [`KvConfigError`], the one error type of `edgebench kv`'s command line: the refused
//! memtier flags, the typed configuration and the `--command` parser all return it. It lives
//! apart from both so that `command` and `options` need not import each other.
//!
//! Invariant: every message is one line naming the flag (or command), the value and the fix.

/// Why a `kv` command line was rejected. Each message is one line naming the flag and the fix.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum KvConfigError {
    /// A memtier option edgebench does not implement.
    #[error("memtier option {flag} is not supported by edgebench kv ({why})")]
    Unsupported {
        /// The option as written (`--tls`, `-D`).
        flag: String,
        /// Why, and what to do instead.
        why: &'static str,
    },
    /// A value that does not parse or is out of range.
    #[error("invalid {flag} {value:?}: {fix}")]
    Invalid {
        /// The option.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What is accepted.
        fix: String,
    },
    /// Options that cannot go together.
    #[error("{what}: {fix}")]
    Conflict {
        /// Which options, with their values.
        what: String,
        /// What to change.
        fix: String,
    },
    /// `--run-id` or `--start-at` (the message names the flag, see [`crate::runner::barrier`]).
    #[error("{0}")]
    MultiHost(String),
    /// A TLS flag whose file cannot be used, or a bad `--sni` or `--tls-protocols` (the
    /// message names the flag, the file and the fix).
    #[error("{0}")]
    Tls(crate::transport::access::TlsError),
    /// A `--command` that does not parse.
    #[error("invalid --command {command:?}: {fix}")]
    Command {
        /// The command text.
        command: String,
        /// The problem and the fix.
        fix: String,
    },
}

/// A value that does not parse or is out of range: `invalid {flag} {value:?}: {fix}`.
pub(crate) fn invalid(flag: &'static str, value: &str, fix: impl Into<String>) -> KvConfigError {
    KvConfigError::Invalid {
        flag,
        value: value.to_string(),
        fix: fix.into(),
    }
}

/// Options that cannot go together: `{what}: {fix}`.
pub(crate) fn conflict(what: impl Into<String>, fix: impl Into<String>) -> KvConfigError {
    KvConfigError::Conflict {
        what: what.into(),
        fix: fix.into(),
    }
}

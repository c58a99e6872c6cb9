//! Typed configuration of the three perf_test tools, built from [`Properties`]:
//! [`GroupTestConfig`] for `test_group` (reference §2) and [`PbmTestConfig`] for
//! `test_ingestion` and `test_tx` (reference §3.1).
//!
//! Invariants:
//! - Every key PadoGrid reads has the default PadoGrid's code gives it, except where the code
//!   contradicts PadoGrid's own documentation; there the documented value wins and the item
//!   says so (`printStatusIntervalInSec` = 10, operation order kept, `ref` chains, `cache`).
//! - Input PadoGrid silently tolerates but that is almost surely a mistake (a number that is
//!   not a number, a missing `groupNames`, an operation with no keys, an unknown `ref`, an
//!   unknown data structure key, a `ref` cycle) is a [`ConfigError`] whose one line names the
//!   key and the file. Input PadoGrid documents as tolerated (an invalid `testCase` falls back
//!   to the structure's default) becomes a warning in [`GroupTestConfig::warnings`].
//! - Operations keep the order and repetitions of `<g>.operations` (PadoGrid's Redis code
//!   collapses them through a `HashSet`; its documentation and its Hazelcast code do not).
//!
//! The files: `cases` (the data structures and test cases an operation names), `group`
//! (`test_group`: schedule, groups, operations, factories) and `pbm` (`test_ingestion`,
//! `test_tx`); this file has what they share: the error type and the typed reader.

use super::properties::{Properties, PropertiesError};

mod cases;
mod group;
mod pbm;

pub use cases::{DataStructure, TestCase};
pub use group::{
    ErConfig, FactoryConfig, FactoryKind, Group, GroupTestConfig, KeyFormat, Operation, Schedule,
    DEFAULT_MCACHE_TTL_SEC,
};
pub use pbm::{PbmMap, PbmMapConfig, PbmTest, PbmTestCase, PbmTestConfig};

/// A configuration error: one line naming the key (or file) and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The properties file could not be read or parsed.
    #[error(transparent)]
    Properties(#[from] PropertiesError),
    /// A required key is absent.
    #[error("{file}: missing {key} ({fix})")]
    Missing {
        /// The file.
        file: String,
        /// The key.
        key: String,
        /// How to fix it.
        fix: String,
    },
    /// A value is not what the key takes.
    #[error("{file}:{line}: {key}={value:?} is not {expected}")]
    BadValue {
        /// The file.
        file: String,
        /// 1-based line of the key.
        line: usize,
        /// The key.
        key: String,
        /// The value found.
        value: String,
        /// What the key takes.
        expected: String,
    },
    /// A reference to an operation or group that the file does not define.
    #[error("{file}: {key} names {name}, but no {name}.* keys are defined ({fix})")]
    Undefined {
        /// The file.
        file: String,
        /// The referring key.
        key: String,
        /// The undefined name.
        name: String,
        /// How to fix it.
        fix: String,
    },
    /// A chain of `ref` keys that loops.
    #[error("{file}: {key} makes a ref cycle {chain} (remove one of these ref keys)")]
    RefCycle {
        /// The file.
        file: String,
        /// The `ref` key that closes the loop.
        key: String,
        /// The loop, `a -> b -> a`.
        chain: String,
    },
}

/// Default thread count: PadoGrid's `(int)(availableProcessors * 1.5)`.
pub fn default_thread_count(cpus: usize) -> u32 {
    ((cpus as f64) * 1.5) as u32
}

/// The machine's processor count, as `Runtime.availableProcessors()`.
pub fn available_processors() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Typed reads of a [`Properties`] with errors that name the file, line and key.
struct Reader<'a> {
    props: &'a Properties,
}

impl<'a> Reader<'a> {
    fn file(&self) -> String {
        self.props.source().to_string()
    }

    fn bad(&self, key: &str, value: &str, expected: &str) -> ConfigError {
        ConfigError::BadValue {
            file: self.file(),
            line: self.props.line_of(key).unwrap_or(0),
            key: key.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }

    fn str(&self, key: &str) -> Option<&'a str> {
        self.props.get(key)
    }

    /// A whole number in `min..=max`. Java's `Integer.getInteger` would silently use the
    /// default for a bad value; we refuse it so a typo does not change the test. Surrounding
    /// whitespace is allowed (Java would reject `8 `, then silently use the default).
    fn int(&self, key: &str, min: i64, max: i64) -> Result<Option<i64>, ConfigError> {
        let Some(raw) = self.props.get(key) else {
            return Ok(None);
        };
        let expected = || {
            if max == i64::MAX {
                format!("a whole number >= {min}")
            } else {
                format!("a whole number from {min} to {max}")
            }
        };
        let n: i64 = raw
            .trim()
            .strip_prefix('+')
            .unwrap_or(raw.trim())
            .parse()
            .map_err(|_| self.bad(key, raw, &expected()))?;
        if n < min || n > max {
            return Err(self.bad(key, raw, &expected()));
        }
        Ok(Some(n))
    }

    fn int_or(&self, key: &str, default: i64, min: i64, max: i64) -> Result<i64, ConfigError> {
        Ok(self.int(key, min, max)?.unwrap_or(default))
    }

    fn bool_or(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        // Java's Boolean.parseBoolean: "true" ignoring case is true, anything else false.
        // We refuse anything but true/false, which is what a user meant to write.
        match self.props.get(key) {
            None => Ok(default),
            Some(v) if v.trim().eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.trim().eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(self.bad(key, v, "true or false")),
        }
    }

    fn has_prefix(&self, prefix: &str) -> bool {
        self.props.iter().any(|(k, _)| k.starts_with(prefix))
    }
}

const INT_MAX: i64 = i32::MAX as i64;

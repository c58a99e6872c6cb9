//! What the `test_group` and PBM readers share: [`ConfigError`], whose one line names the
//! file, line, key and fix, and the typed reads of a [`Properties`] that produce it; and
//! PadoGrid's default thread count.
//!
//! Invariant: a value that is not what its key takes is an error, never a silent default.

use crate::perf::properties::{Properties, PropertiesError};

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
pub(super) struct Reader<'a> {
    pub(super) props: &'a Properties,
}

impl<'a> Reader<'a> {
    pub(super) fn file(&self) -> String {
        self.props.source().to_string()
    }

    pub(super) fn bad(&self, key: &str, value: &str, expected: &str) -> ConfigError {
        ConfigError::BadValue {
            file: self.file(),
            line: self.props.line_of(key).unwrap_or(0),
            key: key.to_string(),
            value: value.to_string(),
            expected: expected.to_string(),
        }
    }

    pub(super) fn str(&self, key: &str) -> Option<&'a str> {
        self.props.get(key)
    }

    /// A whole number in `min..=max`. Java's `Integer.getInteger` would silently use the
    /// default for a bad value; we refuse it so a typo does not change the test. Surrounding
    /// whitespace is allowed (Java would reject `8 `, then silently use the default).
    pub(super) fn int(&self, key: &str, min: i64, max: i64) -> Result<Option<i64>, ConfigError> {
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

    pub(super) fn int_or(
        &self,
        key: &str,
        default: i64,
        min: i64,
        max: i64,
    ) -> Result<i64, ConfigError> {
        Ok(self.int(key, min, max)?.unwrap_or(default))
    }

    pub(super) fn bool_or(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        // Java's Boolean.parseBoolean: "true" ignoring case is true, anything else false.
        // We refuse anything but true/false, which is what a user meant to write.
        match self.props.get(key) {
            None => Ok(default),
            Some(v) if v.trim().eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.trim().eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(self.bad(key, v, "true or false")),
        }
    }

    pub(super) fn has_prefix(&self, prefix: &str) -> bool {
        self.props.iter().any(|(k, _)| k.starts_with(prefix))
    }
}

pub(super) const INT_MAX: i64 = i32::MAX as i64;

//! `--bench REGEX`: [`BenchFilter`] selects core-data benchmarks the way `go test -bench REGEX`
//! does.

use regex::Regex;

/// `--bench REGEX`: Go's semantics over two levels, `TARGET/BENCHMARK`.
///
/// As in `go test -bench`, the pattern is split at `/` and each part is an unanchored regular
/// expression matched against the name at its level: `ReadingCount` selects that benchmark
/// on every target; `UDS/^Events$` selects `Events` on targets whose column name contains
/// `UDS`. A pattern without `/` matches benchmark names only (the targets are chosen with
/// `--target`).
#[derive(Debug, Clone, Default)]
pub struct BenchFilter {
    target: Option<Regex>,
    bench: Option<Regex>,
}

impl BenchFilter {
    /// Everything.
    pub fn all() -> Self {
        BenchFilter::default()
    }

    /// Parses a `--bench` pattern.
    pub fn parse(pattern: &str) -> Result<Self, regex::Error> {
        let compile = |p: &str| -> Result<Option<Regex>, regex::Error> {
            if p.is_empty() {
                Ok(None)
            } else {
                Regex::new(p).map(Some)
            }
        };
        match pattern.split_once('/') {
            Some((target, bench)) => Ok(BenchFilter {
                target: compile(target)?,
                bench: compile(bench)?,
            }),
            None => Ok(BenchFilter {
                target: None,
                bench: compile(pattern)?,
            }),
        }
    }

    /// Whether the benchmark `bench` on the column `target` is selected.
    pub fn matches(&self, target: &str, bench: &str) -> bool {
        self.target.as_ref().is_none_or(|r| r.is_match(target))
            && self.bench.as_ref().is_none_or(|r| r.is_match(bench))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_style_two_level_patterns() {
        let f = BenchFilter::parse("Count").unwrap();
        assert!(f.matches("RedisDB_TCP", "ReadingCount"));
        assert!(f.matches("RedisDB_UDS", "EventCount"));
        assert!(!f.matches("RedisDB_UDS", "Events"));

        let f = BenchFilter::parse("UDS/^Events$").unwrap();
        assert!(f.matches("RedisDB_UDS", "Events"));
        assert!(!f.matches("RedisDB_UDS", "EventsForDevice"));
        assert!(!f.matches("RedisDB_TCP", "Events"));

        let f = BenchFilter::parse("TCP/").unwrap();
        assert!(f.matches("RedisDB_TCP", "AddEvent"));
        assert!(!f.matches("RedisDB_UDS", "AddEvent"));

        assert!(BenchFilter::all().matches("x", "y"));
        assert!(BenchFilter::parse("(").is_err());
    }
}

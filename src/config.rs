//! Stage two of the command line: strings from [`crate::cli`] become typed configuration.
//! Every error names the flag, the value and the fix, on one line.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::cli::CoreDataArgs;
use crate::report::Format;
use crate::runner::BenchTime;
use crate::target::{self, TargetSpec};
use crate::workload::BenchFilter;

/// A flag's value was rejected.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `--target`.
    #[error("--target: {0}")]
    Target(#[from] target::TargetError),
    /// `--benchtime`.
    #[error("--benchtime: {0}")]
    BenchTime(#[from] crate::runner::DurationError),
    /// `--count`.
    #[error("--count {0:?}: expected a whole number from 1 to 1000")]
    Count(String),
    /// `--bench`.
    #[error("--bench {pattern:?}: not a regular expression ({reason}); e.g. --bench 'Count|ById'")]
    Bench {
        /// The pattern.
        pattern: String,
        /// What the regex parser said (first line).
        reason: String,
    },
    /// `--format`.
    #[error(
        "--format {0:?}: unknown format; use a comma-separated list of md, go, pct, csv, json"
    )]
    Format(String),
    /// No target given and none can be spawned.
    #[error("no target to run: redis-server is not on PATH; install it (apt-get install redis-server) or pass --target redis://HOST:PORT")]
    NoTargets,
}

/// Everything `edgebench coredata` needs, typed.
#[derive(Debug, Clone)]
pub struct CoreDataConfig {
    /// The columns, in order.
    pub targets: Vec<TargetSpec>,
    /// Which benchmarks run.
    pub filter: BenchFilter,
    /// Round length or iteration count.
    pub benchtime: BenchTime,
    /// Repetitions of each benchmark.
    pub count: u32,
    /// What to print on stdout at the end.
    pub formats: Vec<Format>,
    /// Where results files go; `None` means `results/<timestamp>-coredata/`.
    pub out: Option<PathBuf>,
    /// Raised by Ctrl-C.
    pub interrupted: Arc<AtomicBool>,
}

impl CoreDataConfig {
    /// Checks and types the flags of `edgebench coredata`.
    pub fn from_args(
        args: &CoreDataArgs,
        interrupted: Arc<AtomicBool>,
    ) -> Result<Self, ConfigError> {
        let targets = if args.targets.is_empty() {
            let defaults = target::default_targets();
            if defaults.is_empty() {
                return Err(ConfigError::NoTargets);
            }
            defaults
        } else {
            target::parse_targets(&args.targets)?
        };
        let filter = match &args.bench {
            None => BenchFilter::all(),
            Some(p) => BenchFilter::parse(p).map_err(|e| ConfigError::Bench {
                pattern: p.clone(),
                reason: e
                    .to_string()
                    .lines()
                    .last()
                    .unwrap_or("invalid")
                    .trim()
                    .to_string(),
            })?,
        };
        let benchtime: BenchTime = args.benchtime.parse()?;
        let count = match args.count.parse::<u32>() {
            Ok(n) if (1..=1000).contains(&n) => n,
            _ => return Err(ConfigError::Count(args.count.clone())),
        };
        let formats = parse_formats(&args.format)?;
        Ok(CoreDataConfig {
            targets,
            filter,
            benchtime,
            count,
            formats,
            out: args.out.clone(),
            interrupted,
        })
    }
}

/// `md,go,...` → formats, in the order given, without repeats.
pub fn parse_formats(list: &str) -> Result<Vec<Format>, ConfigError> {
    let mut formats = Vec::new();
    for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let f = Format::from_name(name).ok_or_else(|| ConfigError::Format(name.to_string()))?;
        if !formats.contains(&f) {
            formats.push(f);
        }
    }
    Ok(formats)
}

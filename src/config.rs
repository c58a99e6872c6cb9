//! Stage two of the command line: strings from [`crate::cli`] become typed configuration.
//! Every error names the flag, the value and the fix, on one line.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::cli::{CoreDataArgs, ServeArgs};
use crate::report::Format;
use crate::runner::BenchTime;
use crate::store::mongo::{Fidelity, MongoLayout};
use crate::target::{self, TargetKind, TargetSpec};
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
    /// A `serve` flag.
    #[error("--{flag} {value:?}: {fix}")]
    Serve {
        /// The flag, without dashes.
        flag: &'static str,
        /// The value given.
        value: String,
        /// What is expected.
        fix: &'static str,
    },
    /// `--baseline` names no column of the run.
    #[error("--baseline {name:?}: no such column; use one of {columns}")]
    Baseline {
        /// The name given.
        name: String,
        /// The run's columns, comma-separated.
        columns: String,
    },
    /// `--mongo-layout`.
    #[error("--mongo-layout {0:?}: use embedded or referenced")]
    MongoLayout(String),
    /// `--fidelity`.
    #[error("--fidelity {0:?}: use modern or 2018")]
    Fidelity(String),
    /// `--fidelity 2018` with `--mongo-layout embedded`.
    #[error(
        "--fidelity 2018 with --mongo-layout embedded: the 2018 client kept readings in their \
         own collection; drop --mongo-layout or use --mongo-layout referenced"
    )]
    FidelityLayout,
    /// `--format`.
    #[error(
        "--format {0:?}: unknown format; use a comma-separated list of md, go, pct, csv, json"
    )]
    Format(String),
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
    /// Things the user should know before the run starts (one line each).
    pub notes: Vec<String>,
    /// `--baseline`: the column the ratio table divides by.
    pub baseline: Option<String>,
}

impl CoreDataConfig {
    /// Checks and types the flags of `edgebench coredata`.
    pub fn from_args(
        args: &CoreDataArgs,
        interrupted: Arc<AtomicBool>,
    ) -> Result<Self, ConfigError> {
        let mut notes = Vec::new();
        let mut targets = if args.targets.is_empty() {
            let (defaults, missing) = target::default_targets();
            notes.extend(missing);
            defaults
        } else {
            target::parse_targets(&args.targets)?
        };
        let fidelity = match args.fidelity.as_str() {
            "modern" => Fidelity::Modern,
            "2018" => Fidelity::Y2018,
            other => return Err(ConfigError::Fidelity(other.to_string())),
        };
        let layout = match args.mongo_layout.as_deref() {
            None if fidelity == Fidelity::Y2018 => MongoLayout::Referenced,
            None => MongoLayout::Embedded,
            Some(name) => name
                .parse()
                .map_err(|_| ConfigError::MongoLayout(name.to_string()))?,
        };
        if fidelity == Fidelity::Y2018 && layout == MongoLayout::Embedded {
            return Err(ConfigError::FidelityLayout);
        }
        for spec in &mut targets {
            if let TargetKind::Mongo {
                layout: l,
                fidelity: f,
                ..
            } = &mut spec.kind
            {
                (*l, *f) = (layout, fidelity);
            }
        }
        if let Some(name) = &args.baseline {
            if !targets.iter().any(|t| &t.name == name) {
                return Err(ConfigError::Baseline {
                    name: name.clone(),
                    columns: targets
                        .iter()
                        .map(|t| t.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
        }
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
            notes,
            baseline: args.baseline.clone(),
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

/// The most `--threads` `edgebench serve` takes.
pub const MAX_SERVE_THREADS: usize = 1024;

/// The largest `--maxclients`.
const MAX_CLIENTS_LIMIT: usize = 1_000_000;

/// Everything `edgebench serve` needs, typed.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// `ADDR:PORT` to listen on, if any.
    pub tcp: Option<String>,
    /// The Unix socket to listen on, if any.
    pub unixsocket: Option<PathBuf>,
    /// Limits and the password.
    pub server: crate::server::ServerConfig,
    /// Worker threads of the server's runtime (`--threads`); `None` = one per core.
    pub threads: Option<usize>,
}

impl ServeConfig {
    /// Checks and types the flags of `edgebench serve`.
    pub fn from_args(args: &ServeArgs) -> Result<Self, ConfigError> {
        let bad = |flag, value: &str, fix| ConfigError::Serve {
            flag,
            value: value.to_string(),
            fix,
        };
        let port: u16 = args
            .port
            .parse()
            .map_err(|_| bad("port", &args.port, "expected a TCP port from 0 to 65535"))?;
        if port == 0 && args.unixsocket.is_none() {
            return Err(bad(
                "port",
                &args.port,
                "nothing to listen on: give a TCP port or --unixsocket PATH",
            ));
        }
        // A bound well under tokio's semaphore limit (which panics above usize::MAX >> 3) and
        // above any file-descriptor limit a machine will have.
        let maxclients = match args.maxclients.parse::<usize>() {
            Ok(n) if (1..=MAX_CLIENTS_LIMIT).contains(&n) => n,
            _ => {
                return Err(bad(
                    "maxclients",
                    &args.maxclients,
                    "expected a whole number from 1 to 1000000",
                ))
            }
        };
        let proto_max_bulk_len = parse_memory(&args.proto_max_bulk_len).ok_or_else(|| {
            bad(
                "proto-max-bulk-len",
                &args.proto_max_bulk_len,
                "expected bytes, e.g. 1048576, 512mb or 1gb (at least 1mb, as redis-server)",
            )
        })?;
        let threads = match &args.threads {
            None => None,
            Some(t) => match t.parse::<usize>() {
                Ok(n) if (1..=MAX_SERVE_THREADS).contains(&n) => Some(n),
                _ => {
                    return Err(bad(
                        "threads",
                        t,
                        "expected a whole number of threads from 1 to 1024",
                    ))
                }
            },
        };
        let tcp = (port != 0).then(|| {
            if args.bind.contains(':') {
                format!("[{}]:{port}", args.bind)
            } else {
                format!("{}:{port}", args.bind)
            }
        });
        Ok(ServeConfig {
            tcp,
            unixsocket: args.unixsocket.clone(),
            server: crate::server::ServerConfig {
                maxclients,
                proto_max_bulk_len,
                requirepass: args.requirepass.clone(),
            },
            threads,
        })
    }
}

/// A redis.conf memory value: bytes, or with k/kb/m/mb/g/gb (k = 1000, kb = 1024, as
/// redis.conf reads them); at least 1 MiB, as redis-server requires of proto-max-bulk-len.
fn parse_memory(s: &str) -> Option<u64> {
    let lower = s.to_ascii_lowercase();
    let split = lower
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(lower.len());
    let (digits, unit) = lower.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let scale: u64 = match unit {
        "" | "b" => 1,
        "k" => 1000,
        "kb" => 1024,
        "m" => 1_000_000,
        "mb" => 1024 * 1024,
        "g" => 1_000_000_000,
        "gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    n.checked_mul(scale).filter(|&b| b >= 1024 * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_values_read_as_redis_conf_reads_them() {
        assert_eq!(parse_memory("512mb"), Some(512 * 1024 * 1024));
        assert_eq!(parse_memory("1GB"), Some(1024 * 1024 * 1024));
        assert_eq!(parse_memory("2m"), Some(2_000_000));
        assert_eq!(parse_memory("1048576"), Some(1_048_576));
        assert_eq!(parse_memory("1kb"), None, "below 1 MiB");
        assert_eq!(parse_memory("12xb"), None);
        assert_eq!(parse_memory(""), None);
    }
}

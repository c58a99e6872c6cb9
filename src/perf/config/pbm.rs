//! `test_ingestion`'s and `test_tx`'s configuration (reference §3.1): the shared keys
//! (`testCount`, `prefix`, `memberSetSize`, …) and one [`PbmMapConfig`] per map of
//! `mapNames`, read from [`Properties`] into [`PbmTestConfig`].
//!
//! Invariants: maps keep the order of `mapNames` with duplicates removed; a name that is not
//! a PBM map, and a `<map>.testCase` the tool does not take (which falls back to the map's
//! default), are dropped as PadoGrid drops them, each with a warning.

use std::fmt;
use std::path::Path;

use super::read::{available_processors, default_thread_count, ConfigError, Reader, INT_MAX};
use crate::perf::properties::Properties;

/// The PBM maps of `test_ingestion` and `test_tx`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PbmMap {
    /// `EligKey → Blob`.
    Eligibility,
    /// `ClientProfileKey → Blob`.
    Profile,
}

impl PbmMap {
    /// The map's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Eligibility => "eligibility",
            Self::Profile => "profile",
        }
    }
}

impl fmt::Display for PbmMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `TransactionTest.TestCaseEnum`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PbmTestCase {
    /// Eligibility in `test_tx`: read a group's entries, write its `GroupSummary`.
    Tx,
    /// One put per entry.
    Put,
    /// `batchSize` entries per call.
    PutAll,
    /// One get per entry (profile in `test_tx`).
    Get,
    /// `batchSize` keys per call.
    GetAll,
}

impl PbmTestCase {
    /// The lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Tx => "tx",
            Self::Put => "put",
            Self::PutAll => "putall",
            Self::Get => "get",
            Self::GetAll => "getall",
        }
    }
}

impl fmt::Display for PbmTestCase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which PBM tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PbmTest {
    /// `test_ingestion`.
    Ingestion,
    /// `test_tx`.
    Tx,
}

/// One map's settings (`<map>.*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PbmMapConfig {
    /// The map.
    pub map: PbmMap,
    /// `<map>.totalEntryCount`, default 100000.
    pub total_entry_count: u64,
    /// `<map>.payloadSize`, default 1024.
    pub payload_size: usize,
    /// `<map>.batchSize`, default 1000.
    pub batch_size: usize,
    /// `<map>.threadCount`, default `(int)(cpus * 1.5)`.
    pub thread_count: u32,
    /// `<map>.testCase`.
    pub test_case: PbmTestCase,
}

impl PbmMapConfig {
    /// `totalEntryCount / threadCount`, remainder dropped.
    pub fn entry_count_per_thread(&self) -> u64 {
        self.total_entry_count / u64::from(self.thread_count.max(1))
    }
}

/// `test_ingestion`/`test_tx` configuration (reference §3.1).
#[derive(Debug, Clone, PartialEq)]
pub struct PbmTestConfig {
    /// The file it came from.
    pub file: String,
    /// Which tool.
    pub test: PbmTest,
    /// `testCount`, default 1.
    pub test_count: u32,
    /// `testIntervalInMsec`, default 0.
    pub test_interval_ms: u64,
    /// `memberSetSize`: members per group number, default 10.
    pub member_set_size: u32,
    /// `printStatusIntervalInSec`, default 10 (documented; the code says 1000).
    pub print_status_interval_sec: u64,
    /// `prefix` of keys, default `x`.
    pub prefix: String,
    /// `mapNames`, in the order written, duplicates removed; each runs on its own thread.
    pub maps: Vec<PbmMapConfig>,
    /// Tolerated oddities (an invalid test case replaced by the default), one line each.
    pub warnings: Vec<String>,
}

impl PbmTestConfig {
    /// Reads `path` as a `test_ingestion` configuration.
    pub fn load_ingestion(path: &Path) -> Result<Self, ConfigError> {
        Self::from_properties(
            &Properties::load(path)?,
            PbmTest::Ingestion,
            available_processors(),
        )
    }

    /// Reads `path` as a `test_tx` configuration.
    pub fn load_tx(path: &Path) -> Result<Self, ConfigError> {
        Self::from_properties(
            &Properties::load(path)?,
            PbmTest::Tx,
            available_processors(),
        )
    }

    /// Builds the configuration; `cpus` sets the default `threadCount`.
    pub fn from_properties(
        props: &Properties,
        test: PbmTest,
        cpus: usize,
    ) -> Result<Self, ConfigError> {
        let r = Reader { props };
        let names = r.str("mapNames").unwrap_or("eligibility");
        let mut maps: Vec<PbmMapConfig> = Vec::new();
        let mut warnings = Vec::new();
        for n in names.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let map = match n.to_ascii_lowercase().as_str() {
                "eligibility" => PbmMap::Eligibility,
                "profile" => PbmMap::Profile,
                _ => {
                    // PadoGrid's MapNameEnum drops names it does not know; say so.
                    warnings.push(format!(
                        "{}: mapNames names {n:?}, which is not a PBM map (eligibility, profile); dropped as PadoGrid does",
                        r.file()
                    ));
                    continue;
                }
            };
            if maps.iter().any(|m| m.map == map) {
                continue;
            }
            let k = |s: &str| format!("{}.{s}", map.name());
            let (valid, default): (&[PbmTestCase], PbmTestCase) = match (test, map) {
                (PbmTest::Ingestion, _) => (
                    &[PbmTestCase::PutAll, PbmTestCase::Put],
                    PbmTestCase::PutAll,
                ),
                (PbmTest::Tx, PbmMap::Eligibility) => {
                    (&[PbmTestCase::GetAll, PbmTestCase::Tx], PbmTestCase::GetAll)
                }
                (PbmTest::Tx, PbmMap::Profile) => (
                    &[PbmTestCase::GetAll, PbmTestCase::Get],
                    PbmTestCase::GetAll,
                ),
            };
            let test_case = match r.str(&k("testCase")) {
                None => default,
                Some(v) => match valid
                    .iter()
                    .find(|t| t.name().eq_ignore_ascii_case(v.trim()))
                {
                    Some(t) => *t,
                    None => {
                        let names: Vec<&str> = valid.iter().map(|t| t.name()).collect();
                        warnings.push(format!(
                            "{}: {}={v} is not valid for {} here (valid: {}); using {default} as PadoGrid does",
                            r.file(),
                            k("testCase"),
                            map,
                            names.join(", ")
                        ));
                        default
                    }
                },
            };
            let default_threads = i64::from(default_thread_count(cpus).max(1));
            maps.push(PbmMapConfig {
                map,
                total_entry_count: r.int_or(&k("totalEntryCount"), 100000, 0, INT_MAX)? as u64,
                payload_size: r.int_or(&k("payloadSize"), 1024, 0, INT_MAX)? as usize,
                batch_size: r.int_or(&k("batchSize"), 1000, 1, INT_MAX)? as usize,
                thread_count: r.int_or(&k("threadCount"), default_threads, 1, INT_MAX)? as u32,
                test_case,
            });
        }
        if maps.is_empty() {
            return Err(r.bad("mapNames", names, "a comma list of eligibility and profile"));
        }
        Ok(PbmTestConfig {
            file: r.file(),
            test,
            test_count: r.int_or("testCount", 1, 0, INT_MAX)? as u32,
            test_interval_ms: r.int_or("testIntervalInMsec", 0, 0, INT_MAX)? as u64,
            member_set_size: r.int_or("memberSetSize", 10, 1, INT_MAX)? as u32,
            print_status_interval_sec: r.int_or("printStatusIntervalInSec", 10, 1, INT_MAX)? as u64,
            prefix: r.str("prefix").unwrap_or("x").to_string(),
            maps,
            warnings,
        })
    }

    /// The settings of `map`, when it is in `mapNames`.
    pub fn map(&self, map: PbmMap) -> Option<&PbmMapConfig> {
        self.maps.iter().find(|m| m.map == map)
    }
}

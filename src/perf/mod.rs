//! `edgebench perf`: PadoGrid's perf_test workflows (`test_group`, `test_ingestion`,
//! `test_tx`, `create_csv`, `clean_results`, `create_group_config`) over Redis-protocol
//! targets. This module tree is the I/O-light foundation; the runner, the CLI and the
//! targets sit on top of it.
//!
//! Data flows one way:
//!
//! ```text
//! etc/*.properties → properties::Properties → config::{GroupTestConfig, PbmTestConfig}
//!     → run (test_group) / ingest, tx over pbm (test_ingestion, test_tx)
//!     → results::{GroupRun, PbmRun} + summary (markdown)
//!     → results files (PadoGrid layout + edgebench percentiles) → csv::create_csv
//! ```
//!
//! Invariants:
//! - Behaviour follows PadoGrid's Java and scripts as recorded in
//!   `shared/reference/padogrid-perf-test.md`; where PadoGrid's Redis code contradicts its own
//!   documentation, we follow the documentation and `docs/perf.md` lists each difference.
//! - Everything a results file or CSV contains is computed from plain data passed in (counts,
//!   milliseconds, [`results::JavaTime`]), so golden tests pin the bytes.
//! - Every random choice comes from a seeded [`data::JavaRandom`], so generated data is
//!   reproducible.

pub mod apps;
pub mod args;
pub mod config;
pub mod csv;
pub mod data;
pub mod db;
pub mod factory;
pub mod group_config;
pub mod ingest;
pub mod pbm;
pub mod properties;
pub mod random;
pub mod results;
pub mod run;
pub mod summary;
pub mod tx;

pub use config::{
    ConfigError, DataStructure, ErConfig, FactoryConfig, Group, GroupTestConfig, KeyFormat,
    Operation, PbmMap, PbmMapConfig, PbmTest, PbmTestCase, PbmTestConfig, Schedule, TestCase,
};
pub use properties::{Properties, PropertiesError};

//! `edgebench perf`: PadoGrid's perf_test workflows (`test_group`, `test_ingestion`,
//! `test_tx`, `create_csv`, `clean_results`, `create_group_config`) over Redis-protocol
//! targets, and `test_group -db` over PostgreSQL and MariaDB/MySQL. `app::perf` wires the CLI
//! to the functions here; everything below it lives in this tree.
//!
//! Data flows one way:
//!
//! ```text
//! args (perf's flags, typed)
//! etc/*.properties → properties::Properties
//!     → config::{GroupTestConfig (config/group), PbmTestConfig (config/pbm)}
//!     → workload: factory (Northwind entities, Writer), data (Blobs, the PBM model),
//!                 random (java.util.Random, bit-exact)
//!     → runners: run (test_group on a Redis target: run/invoke per invocation,
//!                     run/structures for -list/-delete)
//!                db (test_group -db: db/settings → connection → pool → writes → runner,
//!                    db/command for -list/-delete/-run)
//!                pbm (what test_ingestion and test_tx share) ← ingest, tx
//!     → results::{GroupRun, PbmRun} (PadoGrid's results files) + summary (markdown)
//!     → apps (one PadoGrid app per target) → csv::create_csv, clean_results
//! group_config: create_group_config, from a template, on its own
//! ```
//!
//! Invariants:
//! - Behaviour follows PadoGrid's Java and scripts as recorded in
//!   padogrid/padogrid at 2fad017, `padogrid-deployment/src/main/resources/redis/apps/perf_test/`; where PadoGrid's Redis code contradicts its own
//!   documentation, we follow the documentation and `docs/perf.md` lists each difference.
//! - Everything a results file or CSV contains is computed from plain data passed in (counts,
//!   milliseconds, [`results::JavaTime`]), so golden tests pin the bytes.
//! - Every random choice comes from a seeded [`random::JavaRandom`], so generated data is
//!   reproducible.
//! - No module here imports another that imports it back, directly or round a loop: the
//!   shared pieces sit beneath both users (the invocation loop and putall cursor in `run`,
//!   [`factory::Writer`] for both runners, the configuration types in `config`).

pub mod apps;
pub mod args;
pub mod config;
pub mod csv;
pub mod data;
pub mod db;
pub mod factory;
pub mod group_config;
pub mod html;
pub mod ingest;
pub mod pbm;
pub mod properties;
pub mod random;
pub mod results;
pub mod run;
pub mod slice;
pub mod summary;
pub mod tx;

pub use config::{
    ConfigError, DataStructure, ErConfig, FactoryConfig, Group, GroupTestConfig, KeyFormat,
    Operation, PbmMap, PbmMapConfig, PbmTest, PbmTestCase, PbmTestConfig, Schedule, TestCase,
};
pub use properties::{Properties, PropertiesError};
pub use slice::Perf;

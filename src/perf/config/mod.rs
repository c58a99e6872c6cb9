//! Typed configuration of the three perf_test tools, built from a `.properties` file
//! ([`Properties`](crate::perf::properties::Properties)): [`GroupTestConfig`] for `test_group`
//! (reference §2) and [`PbmTestConfig`] for `test_ingestion` and `test_tx` (reference §3.1).
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
//! `test_tx`); `read` has what they share: the error type and the typed reader.

mod cases;
mod group;
mod pbm;
mod read;

pub use cases::{DataStructure, TestCase};
pub use group::{
    ErConfig, FactoryConfig, FactoryKind, Group, GroupTestConfig, KeyFormat, Operation, Schedule,
    DEFAULT_MCACHE_TTL_SEC,
};
pub use pbm::{PbmMap, PbmMapConfig, PbmTest, PbmTestCase, PbmTestConfig};
pub use read::{available_processors, default_thread_count, ConfigError};

//! Helpers of the engine and RESP-server tests (`engine_*.rs`, `server*.rs`), which are moving
//! to the engine's own crate; the other integration tests' helpers are in `tests/it/common/`.

// Each of those test binaries uses only one of these two modules. Temporary: this file goes
// when they move.
#[allow(dead_code)]
pub mod diff;
#[allow(dead_code)]
pub mod served;

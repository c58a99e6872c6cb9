//! `edgebench kv`'s command line in two stages, as the rest of edgebench does it:
//! [`KvArgs`] (clap, `args.rs`) takes memtier_benchmark's options with memtier's names as
//! strings; [`KvConfig::from_args`] (`build.rs`) turns them into the typed [`KvConfig`]
//! (`config.rs`) and checks the rules between them, one section per file (connection, run,
//! values, keys, commands, WAIT, output) and last the resource check (`limits.rs`): a client count
//! whose sockets or memory cannot fit is refused here, before anything is allocated. Files
//! import one way: build → sections → config, parse, error. [`reject_unsupported`] (`unsupported.rs`) runs before
//! clap, so a memtier option edgebench lacks fails with our one-line reason rather than
//! clap's "unexpected argument".
//!
//! Defaults and rules are memtier's (`memtier_benchmark.cpp`: `config_parse_args`,
//! `config_init_defaults`, `main`), cited where followed. Where edgebench is stricter or
//! differs, the comment says so and `docs/kv-options.md` lists it.
//!
//! Invariants of a [`KvConfig`]:
//! - `key_minimum <= key_maximum`, and a `G` median lies strictly inside the key range;
//! - at most one of `requests` and `test_time`; exactly one when it is built (10 000
//!   requests per connection by default);
//! - with `P`, every connection's slice is non-empty;
//! - `-t` × `-c` connections fit the process's open-file limit (socket targets) and their
//!   estimated memory fits half the machine's ([`limits`]); values are at most 512 MB;
//! - at most one of `--wait` and `--wait-ratio`; `--wait-ratio` is `None` with `--command`
//!   (memtier ignores it there) and refused in cluster mode ([`WaitRatio`], `wait.rs`);
//! - every error message names the flag, the value and the fix, on one line.

mod args;
mod build;
mod commands;
mod config;
mod connection;
mod keys;
pub mod limits;
mod output;
mod parse;
mod run;
mod unsupported;
mod uri;
mod values;
mod wait;

#[cfg(test)]
mod tests;

pub use crate::kv::error::KvConfigError;
pub use args::{CommandFlag, CommandFlags, KvArgs, KvCommandLine};
pub use config::{KvConfig, Protocol, Ratio, Requests};
pub use unsupported::reject_unsupported;
pub use values::LARGEST_VALUE;
pub use wait::WaitRatio;

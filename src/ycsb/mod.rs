//! `edgebench ycsb`: YCSB's core workloads A–F on every target, with YCSB's keys,
//! distributions, bindings' layouts and output (the facts: `../shared/reference/ycsb.md`).
//!
//! - [`args`]: the command line (YCSB's `-P`, `-p`, `-threads`, `-target`, `-s`, `-db`);
//! - [`properties`]: YCSB's property files and overrides; [`config`]: the typed workload;
//!   [`workloads`]: the six core workload files and the recommended sequence;
//! - [`generator`]: YCSB's generators and key names; [`workload`]: `CoreWorkload` for one
//!   client thread; [`run`]: the client threads, throttling and status lines;
//! - [`measure`]: what a run measures; [`export`]: YCSB's export; [`results`]: edgebench's
//!   own files;
//! - [`slice`]: YCSB as the reports see it (`report html`, `report merge`, `report
//!   compare`); [`html`]: its page; [`merge`]: several load hosts as one run.
//!
//! The stores answer YCSB's `DB` calls through [`crate::store::ycsb::YcsbStore`], each
//! backend in its own folder.

pub mod args;
pub mod config;
pub mod export;
pub mod generator;
pub mod html;
pub mod measure;
pub mod merge;
pub mod properties;
pub mod results;
pub mod run;
pub mod slice;
pub mod workload;
pub mod workloads;

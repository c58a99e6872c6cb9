//! The integration tests, in one binary with a module per area (as ripgrep's `tests/` are):
//! each integration binary links the whole dependency tree, every database driver included,
//! and building and linking them was most of CI's time. Run one area with
//! `cargo test --test it kv_cluster::`.
//!
//! The tests of every module share this process and run on parallel threads, so none may
//! touch process-wide state (environment, current directory, signal handlers) or a fixed
//! port, path or database name: each test brings up its own backends ([`common`]).
//! `tests/runner_alloc.rs` stays a binary of its own because it installs a counting
//! `#[global_allocator]`, which would count every other test's allocations too.

mod common;

mod bus;
mod bus_stats;
mod children;
mod cli;
mod cluster_edgex;
mod cluster_perf;
mod cluster_targets;
mod conformance;
mod crash;
mod docstores_cli;
mod edgex_conformance;
mod fleet_cli;
mod kv;
mod kv_cluster;
mod kv_gen;
mod kv_stall;
mod maxmemory;
mod migrate;
mod mongo4_queries;
mod mongo_tls;
mod multihost;
mod perf_bundle;
mod perf_config;
mod perf_db;
mod perf_pbm;
mod perf_results;
mod perf_run;
mod pg_tls;
mod real_clients;
mod replication;
mod report_compare;
mod report_html;
mod runner;
mod secure;
mod service_cli;
mod store_size;
mod workload;
mod ycsb_cli;
mod ycsb_redis;
mod ycsb_reports;
mod ycsb_stores;

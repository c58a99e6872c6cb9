//! YCSB's core workloads (A–F): the key, value and operation generators of its CoreWorkload.
pub mod generator;

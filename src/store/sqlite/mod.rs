//! SQLite, in process: the 2018 layout ([`v2018`]: JSON documents, one table per record
//! kind) and EdgeX 4.0's schema ([`edgex4`]), each in a private database file edgebench
//! creates for the run (or one the user names), or in memory; YCSB's `jdbc` binding
//! ([`ycsb`]) keeps its table beside either.

pub mod backend;
pub mod edgex4;
mod v2018;
mod ycsb;

pub use v2018::*;

//! The persistence loaders, fed hostile files: an RDB image ([`Engine::load_rdb`]), an
//! append-only file's bytes replayed ([`Engine::replay`], with and without a cut tail
//! allowed) and a manifest ([`aof::Manifest::parse`]). Nothing may panic or hang, a refused
//! RDB image must leave the engine empty, and what a replay keeps must be a prefix of what
//! it was given.
//!
//! The first byte picks the loader, so one corpus covers the three; the seeds are a small
//! RDB file and an append-only file with a transaction, written by redis-server 7.0.

#![no_main]

use std::path::Path;

use edgebench_engine::engine::persist::aof::Manifest;
use edgebench_engine::Engine;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: &[u8]| {
    let Some((&pick, data)) = input.split_first() else {
        return;
    };
    let engine = Engine::with_clock(Default::default());
    match pick % 4 {
        0 => {
            if engine.load_rdb(data, Path::new("fuzz.rdb")).is_err() {
                let mut client = engine.client();
                let keys = engine.execute(&mut client, &[b"DBSIZE"]);
                assert_eq!(keys, edgebench_engine::Reply::Int(0), "a refused image left keys");
            }
        }
        1 | 2 => {
            if let Ok(done) = engine.replay(data, Path::new("fuzz.aof"), pick % 4 == 1) {
                assert!(done.keep <= data.len());
            }
        }
        _ => {
            let _ = Manifest::parse(&String::from_utf8_lossy(data));
        }
    }
});

//! HyperLogLog (PFADD, PFCOUNT, PFMERGE, PFDEBUG), differentially against a real
//! redis-server: the counts, and the stored bytes themselves (GET of the key), through the
//! sparse encoding, its promotion to dense, and up to 200k distinct elements; values
//! copied from redis-server; corrupt and foreign strings.

use crate::support::diff::Diff;
use crate::support::redis_server::RedisServer;

/// `n` distinct elements from `from`, with a prefix.
fn elements(prefix: &str, from: usize, n: usize) -> Vec<String> {
    (from..from + n).map(|i| format!("{prefix}{i}")).collect()
}

/// PFADD of `elements` under `key` on both sides, replies compared.
fn pfadd(d: &mut Diff, key: &str, elements: &[String]) {
    let mut args = vec!["PFADD", key];
    args.extend(elements.iter().map(String::as_str));
    d.check(&[&args]);
}

/// A 16-byte HyperLogLog header: magic, encoding, three zero bytes, then `card`.
fn header(encoding: u8, card: [u8; 8]) -> Vec<u8> {
    let mut h = b"HYLL".to_vec();
    h.push(encoding);
    h.extend_from_slice(&[0, 0, 0]);
    h.extend_from_slice(&card);
    h
}

/// SETs `value` at `key` on both sides.
fn set_bytes(d: &mut Diff, key: &str, value: &[u8]) {
    let (real, ours) = d.both_bytes(&[b"SET", key.as_bytes(), value]);
    assert_eq!(ours, real);
}

#[test]
fn small_sets_count_exactly_and_store_redis_bytes() {
    let mut d = Diff::new();
    d.check(&[
        &["PFCOUNT", "h"],
        &["PFADD", "h"],
        &["GET", "h"],
        &["PFADD", "h"],
        &["PFCOUNT", "h"],
        &["GET", "h"],
        &["PFADD", "h", "a", "b", "c"],
        &["PFADD", "h", "a", "b"],
        &["GET", "h"],
        &["PFCOUNT", "h"],
        &["GET", "h"],
        &["PFADD", "h", "d", "", "a"],
        &["GET", "h"],
        &["PFCOUNT", "h"],
        &["PFCOUNT", "h"],
        &["PFADD", "h2", "x", "y", "z", "a"],
        &["PFCOUNT", "h", "h2"],
        &["PFCOUNT", "h", "h2", "missing"],
        &["PFCOUNT", "missing", "missing2"],
        &["GET", "h2"],
        &[
            "PFADD",
            "long",
            "an element longer than eight bytes",
            "12345678",
            "1234567",
        ],
        &["GET", "long"],
        &["PFCOUNT", "long"],
    ]);
}

/// Adds in small batches through the sparse encoding and past its promotion to dense (at
/// 3000 bytes), comparing the stored bytes after every batch.
#[test]
fn the_sparse_encoding_and_its_promotion_match_redis_byte_for_byte() {
    let mut d = Diff::new();
    let mut from = 0;
    for batch in 0..200 {
        let n = 1 + batch % 13;
        pfadd(&mut d, "h", &elements("e", from, n));
        from += n;
        d.check(&[&["GET", "h"]]);
        if batch % 5 == 0 {
            d.check(&[
                &["PFCOUNT", "h"],
                &["GET", "h"],
                &["PFDEBUG", "ENCODING", "h"],
            ]);
        }
    }
    // Some adds of elements already there (no register raised).
    pfadd(&mut d, "h", &elements("e", 0, 20));
    d.check(&[&["PFCOUNT", "h"], &["GET", "h"]]);
    for _ in 0..30 {
        pfadd(&mut d, "h", &elements("f", from, 97));
        from += 97;
        d.check(&[&["GET", "h"], &["PFDEBUG", "ENCODING", "h"]]);
    }
    d.check(&[&["PFCOUNT", "h"], &["GET", "h"]]);
}

/// CONFIG `hll-sparse-max-bytes` decides where PFADD and PFMERGE turn a sparse value dense:
/// byte for byte as redis-server, at a lowered limit, at 0, and back at the default.
#[test]
fn hll_sparse_max_bytes_moves_the_promotion_as_in_redis() {
    let mut d = Diff::new();
    for (limit, key) in [("60", "low"), ("0", "zero"), ("3000", "default")] {
        d.check(&[
            &["CONFIG", "SET", "hll-sparse-max-bytes", limit],
            &["CONFIG", "GET", "hll-sparse-max-bytes"],
        ]);
        let mut from = 0;
        for batch in 0..40 {
            let n = 1 + batch % 7;
            pfadd(&mut d, key, &elements(key, from, n));
            from += n;
            d.check(&[&["GET", key], &["PFDEBUG", "ENCODING", key]]);
        }
        pfadd(&mut d, "m1", &elements("m", 0, 30));
        d.check(&[
            &["PFMERGE", "merged", "m1", key],
            &["GET", "merged"],
            &["PFDEBUG", "ENCODING", "merged"],
            &["DEL", "m1", "merged"],
        ]);
    }
    d.check(&[&["CONFIG", "SET", "hll-sparse-max-bytes", "-1"]]);
}

/// 10k to 200k distinct elements: the estimates and the dense bytes equal redis-server's.
#[test]
fn large_cardinalities_match_redis() {
    let mut d = Diff::new();
    let mut added = 0;
    for checkpoint in [10_000, 25_000, 50_000, 100_000, 200_000] {
        while added < checkpoint {
            pfadd(&mut d, "big", &elements("member:", added, 1000));
            added += 1000;
        }
        d.check(&[&["PFCOUNT", "big"], &["GET", "big"], &["PFCOUNT", "big"]]);
    }
    // A second one, overlapping by half: the union, the merge, a count of several keys.
    for start in (100_000..300_000).step_by(2000) {
        pfadd(&mut d, "other", &elements("member:", start, 2000));
    }
    d.check(&[
        &["PFCOUNT", "other"],
        &["PFCOUNT", "big", "other"],
        &["PFMERGE", "union", "big", "other"],
        &["PFCOUNT", "union"],
        &["GET", "union"],
    ]);
}

#[test]
fn pfmerge_matches_redis_for_sparse_and_dense() {
    let mut d = Diff::new();
    pfadd(&mut d, "s1", &elements("a", 0, 50));
    pfadd(&mut d, "s2", &elements("a", 25, 60));
    pfadd(&mut d, "dense", &elements("b", 0, 5000));
    d.check(&[
        // Sparse into a new key stays sparse.
        &["PFMERGE", "m1", "s1", "s2"],
        &["GET", "m1"],
        &["PFCOUNT", "m1"],
        &["PFDEBUG", "ENCODING", "m1"],
        // The destination is one of the inputs.
        &["PFMERGE", "s1", "s2"],
        &["GET", "s1"],
        &["PFCOUNT", "s1"],
        // A dense input makes the destination dense.
        &["PFMERGE", "m2", "s1", "dense"],
        &["PFDEBUG", "ENCODING", "m2"],
        &["GET", "m2"],
        &["PFCOUNT", "m2"],
        &["PFMERGE", "s2", "dense"],
        &["GET", "s2"],
        // Missing inputs are empty; no inputs makes an empty one.
        &["PFMERGE", "m3", "missing"],
        &["GET", "m3"],
        &["PFMERGE", "m4"],
        &["GET", "m4"],
        &["PFCOUNT", "m4"],
        &["PFMERGE", "m1", "missing", "s1"],
        &["GET", "m1"],
        &["PFCOUNT", "s1", "s2", "dense", "m1"],
        // Many sparse inputs whose union outgrows the sparse limit.
        &["PFMERGE", "m5", "s1", "s2", "m1", "m3"],
        &["GET", "m5"],
    ]);
    let sources: Vec<String> = (0..8).map(|i| format!("part{i}")).collect();
    for (i, key) in sources.iter().enumerate() {
        pfadd(&mut d, key, &elements(&format!("p{i}-"), 0, 150));
    }
    let mut merge = vec!["PFMERGE", "whole"];
    merge.extend(sources.iter().map(String::as_str));
    let mut count = vec!["PFCOUNT"];
    count.extend(sources.iter().map(String::as_str));
    d.check(&[
        &merge,
        &["PFDEBUG", "ENCODING", "whole"],
        &["GET", "whole"],
        &["PFCOUNT", "whole"],
        &count,
    ]);
}

#[test]
fn wrong_types_arity_and_foreign_strings_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["RPUSH", "list", "x"],
        &["SET", "str", "hello"],
        &["SET", "num", "12345"],
        &["SET", "hyll", "HYLL"],
        &["PFADD", "list", "a"],
        &["PFCOUNT", "list"],
        &["PFCOUNT", "list", "missing"],
        &["PFMERGE", "list", "missing"],
        &["PFMERGE", "dest", "list"],
        &["PFADD", "str", "a"],
        &["PFADD", "str"],
        &["PFCOUNT", "str"],
        &["PFCOUNT", "missing", "str"],
        &["PFMERGE", "dest", "str"],
        &["PFMERGE", "str", "missing"],
        &["EXISTS", "dest"],
        &["PFADD", "num", "a"],
        &["PFCOUNT", "hyll"],
        &["PFDEBUG", "ENCODING", "str"],
        &["PFDEBUG", "ENCODING", "list"],
        &["PFADD"],
        &["PFCOUNT"],
        &["PFMERGE"],
        &["PFDEBUG", "ENCODING"],
        &["PFDEBUG", "ENCODING", "h", "x"],
    ]);
}

#[test]
fn corrupt_values_match_redis() {
    let mut d = Diff::new();
    let card_zero = [0u8; 8];
    let stale = [0, 0, 0, 0, 0, 0, 0, 0x80];
    // An unknown encoding; a dense value of the wrong length.
    let mut bad_encoding = header(2, card_zero);
    bad_encoding.extend_from_slice(&[0x7f, 0xff]);
    set_bytes(&mut d, "enc", &bad_encoding);
    let mut short_dense = header(0, card_zero);
    short_dense.extend_from_slice(&[0; 100]);
    set_bytes(&mut d, "short", &short_dense);
    // Sparse opcodes covering too few registers, too many, none; an XZERO cut short.
    let mut too_few = header(1, stale);
    too_few.extend_from_slice(&[0x7f, 0x00]);
    set_bytes(&mut d, "few", &too_few);
    let mut too_many = header(1, stale);
    too_many.extend_from_slice(&[0x7f, 0xff, 0x7f, 0xff, 0x80]);
    set_bytes(&mut d, "many", &too_many);
    set_bytes(&mut d, "none", &header(1, stale));
    let mut cut = header(1, stale);
    cut.extend_from_slice(&[0x7f]);
    set_bytes(&mut d, "cut", &cut);
    // A cached count that is valid but false: PFCOUNT of one key believes it.
    let mut cached = header(1, 42u64.to_le_bytes());
    cached.extend_from_slice(&[0x7f, 0xff]);
    set_bytes(&mut d, "cached", &cached);
    // Dense registers all at 63 (more than any hash can give).
    let mut full = header(0, stale);
    full.resize(12304, 0xff);
    set_bytes(&mut d, "full", &full);
    d.check(&[
        &["PFCOUNT", "enc"],
        &["PFADD", "enc", "a"],
        &["PFCOUNT", "short"],
        &["PFMERGE", "dest", "short"],
        &["PFCOUNT", "few"],
        &["PFCOUNT", "few", "missing"],
        &["PFMERGE", "dest", "few"],
        &["PFADD", "few", "a", "b", "c"],
        &["GET", "few"],
        &["PFCOUNT", "many"],
        &["PFCOUNT", "many", "cached"],
        &["PFADD", "many", "a"],
        &["GET", "many"],
        &["PFCOUNT", "none"],
        &["PFADD", "none", "a"],
        &["PFADD", "none"],
        &["PFCOUNT", "cut"],
        &["PFADD", "cut", "a"],
        &["PFCOUNT", "cached"],
        &["PFCOUNT", "cached", "missing"],
        &["PFADD", "cached", "x"],
        &["PFCOUNT", "cached"],
        &["PFCOUNT", "full"],
        &["PFCOUNT", "full"],
        &["GET", "full"],
        &["PFCOUNT", "full", "missing"],
        &["PFDEBUG", "DECODE", "few"],
        &["PFDEBUG", "TODENSE", "few"],
        &["PFDEBUG", "GETREG", "many"],
        &["EXISTS", "dest"],
    ]);
}

/// A HyperLogLog built by a redis-server elsewhere, copied byte for byte (GET, then SET),
/// counts and grows here as it does there; and one built here copies back.
#[test]
fn values_copied_from_redis_work() {
    let elsewhere = RedisServer::spawn();
    let mut other = elsewhere.connect();
    let mut copied = Vec::new();
    for (key, n) in [("sparse", 300usize), ("dense", 20_000)] {
        let members = elements("copy", 0, n);
        let _: i64 = redis::cmd("PFADD")
            .arg(key)
            .arg(&members)
            .query(&mut other)
            .expect("PFADD on redis-server");
        let bytes: Vec<u8> = redis::cmd("GET")
            .arg(key)
            .query(&mut other)
            .expect("GET on redis-server");
        copied.push((key, bytes));
    }
    let mut d = Diff::new();
    for (key, bytes) in &copied {
        set_bytes(&mut d, key, bytes);
        d.check(&[&["PFCOUNT", key], &["GET", key]]);
        pfadd(&mut d, key, &elements("more", 0, 500));
        d.check(&[
            &["PFCOUNT", key],
            &["GET", key],
            &["PFDEBUG", "ENCODING", key],
        ]);
    }
    d.check(&[
        &["PFCOUNT", "sparse", "dense"],
        &["PFMERGE", "sparse", "dense"],
        &["GET", "sparse"],
    ]);
}

#[test]
fn pfdebug_matches_redis() {
    let mut d = Diff::new();
    pfadd(&mut d, "h", &elements("x", 0, 20));
    d.check(&[
        &["PFDEBUG", "ENCODING", "h"],
        &["PFDEBUG", "DECODE", "h"],
        &["PFDEBUG", "decode", "h"],
        &["PFDEBUG", "TODENSE", "h"],
        &["PFDEBUG", "TODENSE", "h"],
        &["PFDEBUG", "ENCODING", "h"],
        &["PFDEBUG", "DECODE", "h"],
        &["GET", "h"],
        &["PFCOUNT", "h"],
        &["PFDEBUG", "GETREG", "h"],
        &["PFADD", "h2", "a"],
        &["PFDEBUG", "GETREG", "h2"],
        &["PFDEBUG", "ENCODING", "h2"],
        &["GET", "h2"],
        &["PFDEBUG", "FOO", "h"],
        &["PFDEBUG", "FOO", "missing"],
        &["PFDEBUG", "GETREG", "missing"],
        &["PFSELFTEST"],
        &["PFSELFTEST", "x"],
    ]);
}

/// PFADD and PFMERGE keep the key's TTL; a PFADD that raises nothing and a PFCOUNT that
/// finds a valid cached count do not abort a transaction WATCHing the key, and a PFCOUNT
/// that caches a new count does, as in Redis.
#[test]
fn ttls_and_watch_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["PFADD", "h", "a", "b"],
        &["EXPIRE", "h", "100"],
        &["PFADD", "h", "c"],
        &["PFMERGE", "h", "missing"],
        &["TTL", "h"],
    ]);
    let script: &[&[&str]] = &[
        &["PFADD", "h", "a"],
        &["PFADD", "h"],
        &["PFCOUNT", "h"],
        &["PFCOUNT", "h"],
        &["PFADD", "h", "zz"],
        &["PFCOUNT", "h", "missing"],
        &["PFMERGE", "h"],
    ];
    for cmd in script {
        d.check(&[&["WATCH", "h"], cmd, &["MULTI"], &["PING"], &["EXEC"]]);
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]

    /// Random PFADDs, PFMERGEs and PFCOUNTs over three keys leave the same bytes and
    /// counts as on redis-server.
    #[test]
    fn random_hll_scripts_match_redis(
        steps in proptest::collection::vec(
            (0usize..3, 0usize..3, proptest::collection::vec("[a-z0-9]{0,12}", 0..300), 0u8..4),
            1..12,
        ),
    ) {
        let keys = ["h0", "h1", "h2"];
        let mut d = Diff::new();
        for (k, other, members, action) in steps {
            let (key, other) = (keys[k], keys[other]);
            match action {
                0 | 1 => {
                    let members: Vec<String> = members;
                    pfadd(&mut d, key, &members);
                }
                2 => d.check(&[&["PFMERGE", key, other]]),
                _ => d.check(&[&["PFCOUNT", key, other]]),
            }
            d.check(&[&["PFCOUNT", key], &["GET", key]]);
        }
    }
}

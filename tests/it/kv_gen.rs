//! `edgebench kv`'s pure half, end to end through the public API: argv → reject_unsupported →
//! clap → KvConfig → one ConnGen per connection → the exact requests. No I/O.

use std::collections::BTreeMap;

use clap::{Parser, Subcommand};
use edgebench::kv::{reject_unsupported, KvArgs, KvConfig, RequestBuf, RequestKind};

/// The shape the lead's CLI will have: `kv` as a subcommand flattening [`KvArgs`].
#[derive(Debug, Parser)]
#[command(name = "edgebench")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    Kv(KvArgs),
}

fn config(argv: &[&str]) -> KvConfig {
    let rest: Vec<String> = argv.iter().map(|s| s.to_string()).collect();
    reject_unsupported(&rest).unwrap();
    let full = ["edgebench", "kv"]
        .iter()
        .copied()
        .chain(argv.iter().copied());
    let Cmd::Kv(args) = Cli::try_parse_from(full).unwrap().command;
    KvConfig::from_args_with_entropy(&args, 7).unwrap()
}

fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Every request of every connection, as (connection, kind, arguments).
fn all_requests(c: &KvConfig) -> Vec<(u64, RequestKind, Vec<Vec<u8>>)> {
    let buffer = c.value_buffer();
    let mut out = Vec::new();
    let mut buf = RequestBuf::new();
    for conn in 0..c.total_connections() {
        let mut g = c.conn_gen(conn, &buffer);
        for _ in 0..c.requests_for(conn).expect("a request count") {
            let kind = g.next_request(&mut buf);
            out.push((conn, kind, buf.args().map(<[u8]>::to_vec).collect()));
        }
    }
    out
}

#[test]
fn seed_populate_writes_every_key_exactly_once() {
    // memtier_benchmark's documented populate run: `--key-pattern=P:P --ratio=1:0 -n allkeys -d 500`, with a small
    // range and 21 connections that do not divide it (1000 keys).
    let c = config(&words(
        "--hide-histogram --key-minimum=1 --key-maximum=1000 -n allkeys -d 500 --key-pattern=P:P --ratio=1:0 -c 7 -t 3",
    ));
    let mut written: BTreeMap<Vec<u8>, u32> = BTreeMap::new();
    for (_, kind, args) in all_requests(&c) {
        assert_eq!(kind, RequestKind::Set);
        assert_eq!(args.len(), 3);
        assert_eq!(args[0], b"SET");
        assert_eq!(args[2], vec![b'x'; 500]);
        *written.entry(args[1].clone()).or_default() += 1;
    }
    let want: BTreeMap<Vec<u8>, u32> = (1..=1000)
        .map(|k| (format!("memtier-{k}").into_bytes(), 1))
        .collect();
    assert_eq!(written, want);
}

#[test]
fn sequential_allkeys_covers_the_range_once_per_connection() {
    let c = config(&words(
        "--key-minimum=10 --key-maximum=19 -n allkeys --key-pattern=S:S --ratio=1:0 -c 2 -t 1",
    ));
    let reqs = all_requests(&c);
    assert_eq!(reqs.len(), 20);
    for conn in 0..2 {
        let keys: Vec<String> = reqs
            .iter()
            .filter(|r| r.0 == conn)
            .map(|r| String::from_utf8(r.2[1].clone()).unwrap())
            .collect();
        let want: Vec<String> = (10..=19).map(|k| format!("memtier-{k}")).collect();
        assert_eq!(keys, want);
    }
}

#[test]
fn ratio_is_honoured_exactly() {
    let c = config(&words("-n 1100 -c 1 -t 1 --ratio=1:10"));
    let reqs = all_requests(&c);
    let sets = reqs.iter().filter(|r| r.1 == RequestKind::Set).count();
    let gets = reqs.iter().filter(|r| r.1 == RequestKind::Get).count();
    assert_eq!((sets, gets), (100, 1000));
}

#[test]
fn sequential_sets_and_gets_walk_side_by_side() {
    let c = config(&words(
        "-n 6 -c 1 -t 1 --ratio=1:1 --key-pattern=S:S --key-minimum=1 --key-maximum=100 -d 2",
    ));
    let lines: Vec<String> = all_requests(&c)
        .into_iter()
        .map(|r| {
            r.2.iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(
        lines,
        [
            "SET memtier-1 xx",
            "GET memtier-1",
            "SET memtier-2 xx",
            "GET memtier-2",
            "SET memtier-3 xx",
            "GET memtier-3"
        ]
    );
}

#[test]
fn expiry_sends_setex_and_multi_key_get_sends_mget() {
    let c = config(&words(
        "-n 3 -c 1 -t 1 --ratio=1:5 --key-pattern=S:S --key-prefix=k: --expiry-range=9-9 --multi-key-get=3 -d 1",
    ));
    let reqs = all_requests(&c);
    let lines: Vec<String> = reqs
        .iter()
        .map(|r| {
            r.2.iter()
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(lines, ["SETEX k:0 9 x", "MGET k:0 k:1 k:2", "MGET k:3 k:4"]);
    assert_eq!(reqs[1].1, RequestKind::MultiGet(3));
    assert_eq!(reqs[2].1, RequestKind::MultiGet(2));
}

#[test]
fn arbitrary_command_substitution_is_exact_resp() {
    let c = config(&[
        "-n",
        "4",
        "-c",
        "1",
        "-t",
        "1",
        "--key-minimum=5",
        "--key-maximum=6",
        "-d",
        "3",
        "--command=SET __key__ __data__",
        "--command-key-pattern=S",
        "--command-ratio=2",
        "--command=HSET \"h {x}\" {t}__key__ __data__",
        "--command-key-pattern=S",
    ]);
    let buffer = c.value_buffer();
    let mut g = c.conn_gen(0, &buffer);
    let mut buf = RequestBuf::new();
    let mut wire = Vec::new();
    let mut kinds = Vec::new();
    for _ in 0..4 {
        kinds.push(g.next_request(&mut buf));
        buf.write_resp(&mut wire);
    }
    assert_eq!(
        kinds,
        [
            RequestKind::Command(0),
            RequestKind::Command(0),
            RequestKind::Command(1),
            RequestKind::Command(0)
        ]
    );
    let want = concat!(
        "*3\r\n$3\r\nSET\r\n$9\r\nmemtier-5\r\n$3\r\nxxx\r\n",
        "*3\r\n$3\r\nSET\r\n$9\r\nmemtier-6\r\n$3\r\nxxx\r\n",
        "*4\r\n$4\r\nHSET\r\n$5\r\nh {x}\r\n$12\r\n{t}memtier-5\r\n$3\r\nxxx\r\n",
        "*3\r\n$3\r\nSET\r\n$9\r\nmemtier-5\r\n$3\r\nxxx\r\n",
    );
    assert_eq!(String::from_utf8(wire).unwrap(), want);
}

#[test]
fn weighted_sizes_are_honoured_over_many_values() {
    let c = config(&words(
        "-n 6000 -c 1 -t 1 --ratio=1:0 --data-size-list=10:1,20:2,30:3",
    ));
    let mut sizes: BTreeMap<usize, usize> = BTreeMap::new();
    for (_, _, args) in all_requests(&c) {
        *sizes.entry(args[2].len()).or_default() += 1;
    }
    assert_eq!(sizes, BTreeMap::from([(10, 1000), (20, 2000), (30, 3000)]));
}

#[test]
fn seeds_decide_the_keys() {
    let keys = |argv: &str, conn: u64| -> Vec<Vec<u8>> {
        let c = config(&words(argv));
        let buffer = c.value_buffer();
        let mut g = c.conn_gen(conn, &buffer);
        let mut buf = RequestBuf::new();
        (0..20)
            .map(|_| {
                g.next_request(&mut buf);
                buf.arg(1).to_vec()
            })
            .collect()
    };
    // memtier: without --distinct-client-seed every connection draws the same keys.
    assert_eq!(keys("-c 2 -t 1", 0), keys("-c 2 -t 1", 1));
    assert_ne!(
        keys("-c 2 -t 1 --distinct-client-seed", 0),
        keys("-c 2 -t 1 --distinct-client-seed", 1)
    );
    // A seed reproduces a run; --randomize without --seed uses the entropy given (7 here).
    assert_eq!(keys("--seed 99", 0), keys("--seed 99", 0));
    assert_ne!(keys("--seed 99", 0), keys("--seed 98", 0));
    assert_eq!(keys("--randomize", 0), keys("--seed 7", 0));
}

#[test]
fn gaussian_seed_command_centres_on_the_range() {
    // The seed's test run, scaled down: G:G with an explicit stddev over 1..=150000.
    let c = config(&words(
        "--pipeline=24 -c 2 -t 1 -d 500 --key-minimum=1 --key-maximum=150000 --key-pattern=G:G --key-stddev=10250 \
         --ratio=1:1 --distinct-client-seed --randomize --test-time=600 --run-count=1 --out-file=test.out",
    ));
    assert_eq!(c.requests_for(0), None);
    let buffer = c.value_buffer();
    let mut g = c.conn_gen(1, &buffer);
    let mut buf = RequestBuf::new();
    let n = 40_000;
    let xs: Vec<f64> = (0..n)
        .map(|_| {
            g.next_request(&mut buf);
            let key = std::str::from_utf8(buf.arg(1)).unwrap();
            key.strip_prefix("memtier-")
                .unwrap()
                .parse::<f64>()
                .unwrap()
        })
        .collect();
    let mean = xs.iter().sum::<f64>() / n as f64;
    let sd = (xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
    // Median (150000 − 1)/2 + 1 + 0.5 = 75000.5, truncated to an index: mean ≈ 75000. Standard
    // errors: 10250/√40000 ≈ 51 for the mean, 10250/√80000 ≈ 36 for the stddev; 6σ bounds.
    assert!((mean - 75_000.0).abs() < 6.0 * 51.0, "mean {mean}");
    assert!((sd - 10_250.0).abs() < 6.0 * 36.0, "stddev {sd}");
}

#[test]
fn minus_h_is_the_host_and_help_is_long_only() {
    let c = config(&words("-h 10.1.2.3"));
    assert_eq!(c.server.as_deref(), Some("10.1.2.3"));
    let e = Cli::try_parse_from(["edgebench", "kv", "--help"]).unwrap_err();
    assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp);
    let help = e.to_string();
    assert!(help.contains("--key-pattern <SET:GET>"), "{help}");
    assert!(
        help.contains("-h, --server <ADDR>") || help.contains("-s, --server <ADDR>"),
        "{help}"
    );
}

//! The command line end to end, from argv through [`reject_unsupported`], clap and
//! [`KvConfig::from_args_with_entropy`]: memtier's defaults and README examples, and every
//! refusal as its one line.

use std::path::PathBuf;
use std::time::Duration;

use super::*;
use crate::kv::data::{DataSize, ExpiryRange, SizePattern, SizeWeight};
use crate::kv::keys::KeyPattern;
use clap::Parser;

#[derive(Debug, Parser)]
#[command(name = "kv")]
struct Cli {
    #[command(flatten)]
    kv: KvArgs,
}

fn args(line: &str) -> Vec<String> {
    std::iter::once("kv".to_string())
        .chain(line.split_whitespace().map(str::to_string))
        .collect()
}

fn parse(line: &str) -> Result<KvConfig, String> {
    parse_argv(&args(line))
}

fn parse_argv(argv: &[String]) -> Result<KvConfig, String> {
    reject_unsupported(&argv[1..]).map_err(|e| e.to_string())?;
    let cli = Cli::try_parse_from(argv).map_err(|e| e.to_string())?;
    KvConfig::from_args_with_entropy(&cli.kv, 0xDEAD_BEEF).map_err(|e| e.to_string())
}

fn argv_err(argv: &[&str]) -> String {
    let argv: Vec<String> = std::iter::once("kv")
        .chain(argv.iter().copied())
        .map(str::to_string)
        .collect();
    parse_argv(&argv).expect_err("should fail")
}

fn err(line: &str) -> String {
    parse(line).expect_err(line)
}

#[test]
fn clap_definition_is_valid() {
    use clap::CommandFactory;
    Cli::command().debug_assert();
}

#[test]
fn defaults_are_memtiers() {
    let c = parse("").unwrap();
    assert_eq!(c.server.as_deref(), Some("localhost"));
    assert_eq!(c.port, 6379);
    assert_eq!(c.protocol, Protocol::Redis);
    assert_eq!(
        (c.clients, c.threads, c.pipeline, c.run_count),
        (50, 4, 1, 1)
    );
    assert_eq!(c.requests, Some(Requests::Count(10_000)));
    assert_eq!(c.test_time, None);
    assert_eq!(c.ratio, Ratio { sets: 1, gets: 10 });
    assert_eq!(c.data_size, DataSize::Fixed(32));
    assert_eq!(c.keys.prefix, "memtier-");
    assert_eq!((c.keys.min, c.keys.max), (0, 10_000_000));
    assert_eq!(
        (c.set_pattern, c.get_pattern),
        (KeyPattern::Random, KeyPattern::Random)
    );
    assert_eq!(c.keys.zipf_exp, 1.0);
    assert_eq!(c.print_percentiles, [50.0, 99.0, 99.9]);
    assert_eq!(c.seed, 0);
    assert!(c.warnings.is_empty());
}

#[test]
fn memtier_readme_gaussian_example() {
    let c = parse(
        "-s 127.0.0.1 -p 6379 --ratio=1:1 --key-pattern=G:G --key-stddev=5 --pipeline=11 -c 20 -t 1 \
         --distinct-client-seed --randomize --test-time=10 --run-count=1 --out-file=x.txt",
    )
    .unwrap();
    assert_eq!(c.server.as_deref(), Some("127.0.0.1"));
    assert_eq!(c.ratio, Ratio { sets: 1, gets: 1 });
    assert_eq!(
        (c.set_pattern, c.get_pattern),
        (KeyPattern::Gaussian, KeyPattern::Gaussian)
    );
    assert_eq!(c.keys.stddev, Some(5.0));
    assert_eq!((c.pipeline, c.clients, c.threads), (11, 20, 1));
    assert!(c.distinct_client_seed && c.randomize);
    assert_eq!(c.seed, 0xDEAD_BEEF);
    assert_eq!(c.test_time, Some(Duration::from_secs(10)));
    assert_eq!(c.requests, None);
    assert_eq!(c.out_file, Some(PathBuf::from("x.txt")));
}

#[test]
fn seed_populate_and_gaussian_commands() {
    // memtier_benchmark's documented populate run:
    let c = parse("-s localhost -p 6379 --hide-histogram --key-maximum=1000 -n allkeys -d 500 --key-pattern=P:P --ratio=1:0")
        .unwrap();
    assert!(c.hide_histogram && c.parallel());
    assert_eq!(c.data_size, DataSize::Fixed(500));
    assert_eq!(c.requests, Some(Requests::AllKeys));
    // 200 connections over keys 0..=1000 (1001 keys): every key exactly once in total.
    let total: u64 = (0..c.total_connections())
        .map(|i| c.requests_for(i).unwrap())
        .sum();
    assert_eq!(total, 1001);
    let c = parse(
        "--key-minimum=27250000 --key-maximum=47750000 -n allkeys --key-pattern=P:P --ratio=0:1",
    )
    .unwrap();
    assert_eq!(c.ratio, Ratio { sets: 0, gets: 1 });
    // Test run.
    let c = parse(
        "--pipeline=24 -c 20 -t 1 -d 500 --key-maximum=150000000 --key-pattern=G:G --key-stddev=10250000 \
         --ratio=1:1 --distinct-client-seed --randomize --test-time=600 --run-count=1 --out-file=test.out",
    )
    .unwrap();
    assert_eq!(c.keys.effective_stddev(), 10_250_000.0);
    assert_eq!(c.keys.effective_median(), 75_000_000.5);
}

#[test]
fn memtier_readme_rate_limited_and_command_examples() {
    let c = parse("--ratio=1:0 --test-time=60 --rate-limiting=100 -t 2 -c 50 --key-pattern=P:P --key-maximum 1000000")
        .unwrap();
    assert_eq!(c.rate_limiting, Some(100));
    let argv: Vec<String> = [
        "kv",
        "--command=SET foo __data__",
        "--command=SET bar __data__",
        "--command-ratio=3",
        "--command",
        "GET foo",
        "--command-key-pattern=S",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    reject_unsupported(&argv[1..]).unwrap();
    let cli = Cli::try_parse_from(&argv).unwrap();
    let c = KvConfig::from_args_with_entropy(&cli.kv, 0).unwrap();
    let summary: Vec<(&str, u32, char)> = c
        .commands
        .iter()
        .map(|c| (c.name.as_str(), c.ratio, c.key_pattern.letter()))
        .collect();
    assert_eq!(summary, [("SET", 1, 'R'), ("SET", 3, 'R'), ("GET", 1, 'S')]);
}

#[test]
fn host_alias_uri_and_unix_socket() {
    let c = parse("-h 10.0.0.5 -p 7000").unwrap();
    assert_eq!((c.server.as_deref(), c.port), (Some("10.0.0.5"), 7000));
    let c = parse("-u redis://bob:pw@db.example:6380/3").unwrap();
    assert_eq!((c.server.as_deref(), c.port), (Some("db.example"), 6380));
    assert_eq!(
        (c.authenticate.as_deref(), c.select_db),
        (Some("bob:pw"), 3)
    );
    let c = parse("-p 1 -u redis://h").unwrap();
    assert_eq!(c.port, 1);
    assert_eq!(
        c.warnings,
        ["both --uri and --port given; the URI takes precedence"]
    );
    // One URL parser with --target: IPv6 in brackets, Unix sockets, bad ports.
    let c = parse("-u redis://[::1]:7000/2").unwrap();
    assert_eq!((c.server.as_deref(), c.port), (Some("::1"), 7000));
    assert_eq!(c.select_db, 2);
    let c = parse("-u unix:///tmp/r.sock").unwrap();
    assert_eq!(
        (c.server, c.unix_socket),
        (None, Some(PathBuf::from("/tmp/r.sock")))
    );
    assert_eq!(
        err("-u redis://h:0"),
        "invalid --uri \"redis://h:0\": invalid port \"0\"; use \
         redis[s]://[USER:PASSWORD@]HOST[:PORT][/DB] or redis+unix:///PATH"
    );
    let c = parse("-S /tmp/r.sock").unwrap();
    assert_eq!(
        (c.server, c.unix_socket),
        (None, Some(PathBuf::from("/tmp/r.sock")))
    );
    assert_eq!(
        err("-S /tmp/r.sock -p 6379"),
        "-S /tmp/r.sock with -s/-p: a Unix socket and TCP cannot be used together (memtier): drop -s/-p or -S"
    );
}

#[test]
fn memtiers_tls_flags_are_checked_before_anything_connects() {
    assert_eq!(
        err("--tls --cert c.pem"),
        "--cert c.pem: given without --key (add --key FILE with its private key)"
    );
    assert_eq!(
        err("--tls --cacert /nonexistent/ca.crt"),
        "--cacert /nonexistent/ca.crt: No such file or directory (os error 2) (give the PEM file \
         of the CA that signed the server's certificate)"
    );
    assert_eq!(
        err("--cacert ca.crt"),
        "--cacert without --tls: add --tls (or use -u rediss://…)"
    );
    assert_eq!(
        err("--tls --tls-protocols TLSv1"),
        "invalid --tls-protocols \"TLSv1\": TLSv1 is not supported (rustls speaks only TLS 1.2 \
         and 1.3; RFC 8996 deprecated 1.0 and 1.1): use TLSv1.2 and TLSv1.3 (space- or \
         comma-separated)"
    );
    assert_eq!(
        err("--tls -S /tmp/r.sock"),
        "--tls with -S /tmp/r.sock: TLS is spoken over TCP (redis-server's Unix socket is plain \
         text): drop --tls or use -s/-p"
    );
    let c =
        parse("-u rediss://u:p@h:7000 --tls-skip-verify --sni redis.local --tls-protocols TLSv1.3")
            .unwrap();
    let tls = c.tls.unwrap();
    assert!(tls.skip_verify);
    assert_eq!(tls.sni.as_deref(), Some("redis.local"));
    assert_eq!(tls.protocols, [crate::transport::access::TlsVersion::Tls13]);
    assert_eq!((c.server.as_deref(), c.port), (Some("h"), 7000));
    assert!(parse("-s h").unwrap().tls.is_none());
}

#[test]
fn unsupported_memtier_options_fail_with_one_line() {
    assert!(err("-D").starts_with("memtier option -D is not supported"));
    assert!(err("-R6").starts_with("memtier option -6 is not supported"));
    assert!(err("--data-offset=4").starts_with("memtier option --data-offset is not supported"));
    assert!(err("--monitor-input f").starts_with("memtier option --monitor-input is not supported"));
    assert_eq!(
        err("-P memcache_text"),
        "memtier option --protocol memcache_text is not supported by edgebench kv (edgebench kv speaks the Redis protocol only: use redis, resp2 or resp3)"
    );
    // Values are not options: a key prefix that looks like a flag, a command mentioning --tls.
    assert!(reject_unsupported(&["--key-prefix".into(), "--tls".into()]).is_ok());
    assert!(reject_unsupported(&["-s".into(), "-D".into(), "--command=GET --tls".into()]).is_ok());
    assert!(reject_unsupported(&["-c".into(), "5".into(), "--".into(), "--tls".into()]).is_ok());
}

#[test]
fn bad_values_name_the_flag_and_the_fix() {
    assert_eq!(
        err("--key-minimum 10 --key-maximum 5"),
        "--key-minimum 10 with --key-maximum 5: key-minimum must not exceed key-maximum: swap or widen them"
    );
    assert_eq!(
        err("--ratio 1:x"),
        "invalid --ratio \"1:x\": ratio must be SETS:GETS with whole numbers, e.g. 1:10"
    );
    assert_eq!(
        err("--ratio 0:0"),
        "invalid --ratio \"0:0\": 0:0 sends nothing; give e.g. 1:0 or 1:10"
    );
    assert_eq!(
        err("-n 5 --test-time 10"),
        "--requests 5 with --test-time 10: they are mutually exclusive (memtier): keep one"
    );
    assert!(err("-n allkeys --test-time 10").contains("mutually exclusive"));
    assert_eq!(
        err("--test-time 18446744073709551615"),
        "invalid --test-time \"18446744073709551615\": at most 315360000 seconds (ten years)"
    );
    assert!(err("--warmup 999999999h --test-time 10").starts_with("invalid --warmup"));
    assert_eq!(
        err("-c 0"),
        "invalid --clients \"0\": clients must be greater than zero"
    );
    assert_eq!(
        err("-p 70000"),
        "invalid --port \"70000\": a port must be a number in 1-65535"
    );
    assert_eq!(
        err("--key-pattern P:R"),
        "invalid --key-pattern \"P:R\": parallel key-pattern must be configured for both SET and GET (P:P)"
    );
    assert!(err("--key-pattern X:R").contains("each one of S, R, G, Z, P"));
    assert_eq!(
        err("--key-stddev 5"),
        "--key-stddev/--key-median without a G key pattern: key-stddev and key-median are only allowed together with key-pattern G (memtier)"
    );
    assert!(err("--key-pattern G:G --key-median 20 --key-maximum 10").contains("strictly between"));
    assert!(err("--key-zipf-exp 5").contains("within (0, 5)"));
    assert!(err("-d 10 --data-size-range 1-5").contains("data-size cannot be used with"));
    assert!(err("--data-size-list 10:0,20:0").contains("at least one weight"));
    assert!(err("--data-size-pattern X").contains("R or S"));
    assert!(err("--print-percentiles 50,101").contains("[0.0-100.0]"));
    assert!(err("--rate 100 --rate-limiting 5").contains("keep one"));
    assert!(err("--warmup 10s --test-time 10").contains("nothing to measure"));
    assert!(err("--warmup soon").starts_with("invalid --warmup \"soon\": invalid duration"));
    assert!(err("--key-pattern P:P -c 50 -t 4 --key-maximum 99")
        .contains("at least one key of its own"));
    assert!(err("--cluster-mode --multi-key-get 3").contains("cluster mode does not support it"));
    assert!(err("--command-ratio 2").contains("before any --command"));
    assert_eq!(
        argv_err(&["--command=GET __key__", "--ratio", "1:1"]),
        "--ratio 1:1 with --command: with arbitrary commands the mix is set per command with --command-ratio (memtier)"
    );
    assert!(
        argv_err(&["--command=GET __key__", "--key-pattern=R:R"]).contains("--command-key-pattern")
    );
    let e = argv_err(&[
        "--command=GET __key__",
        "--command-key-pattern=P",
        "--command=SET __key__ v",
        "--command-key-pattern=R",
    ]);
    assert!(e.contains("all commands"), "{e}");
    assert!(
        argv_err(&["--cluster-mode", "--command=MSET __key__ a __key__ b"])
            .contains("single-key commands")
    );
    assert_eq!(
        argv_err(&["--command=SET \"a"]),
        "invalid --command \"SET \\\"a\": unterminated \" quote"
    );
}

#[test]
fn ranges_and_lists_parse_like_memtier() {
    let c = parse("--data-size-range 100-10 --data-size-pattern S --expiry-range 30-5").unwrap();
    assert_eq!(
        c.data_size,
        DataSize::Range {
            min: 10,
            max: 100,
            pattern: SizePattern::Sequential
        }
    );
    assert_eq!(c.expiry, Some(ExpiryRange { min: 5, max: 30 }));
    let c = parse("--data-size-list 32:3,1024:1").unwrap();
    assert_eq!(
        c.data_size,
        DataSize::List(vec![
            SizeWeight {
                size: 32,
                weight: 3
            },
            SizeWeight {
                size: 1024,
                weight: 1
            }
        ])
    );
    assert_eq!(c.data_size.largest(), 1024);
}

#[test]
fn last_value_wins_like_getopt() {
    let c = parse("-c 3 -c 7").unwrap();
    assert_eq!(c.clients, 7);
}

#[test]
fn seeds_follow_memtier_client_setup() {
    let same = parse("").unwrap();
    assert_eq!(same.connection_seed(0), same.connection_seed(5));
    let distinct = parse("--distinct-client-seed").unwrap();
    assert_ne!(distinct.connection_seed(0), distinct.connection_seed(5));
    assert_eq!(parse("--seed 42 --randomize").unwrap().seed, 42);
}

#[test]
fn show_config_prints_memtier_lines() {
    let c = parse("--key-pattern=G:G --key-maximum=100 -c 2 -t 1 --ratio=1:1").unwrap();
    let text = c.show_config();
    for line in [
        "server = localhost",
        "port = 6379",
        "requests = 10000",
        "clients = 2",
        "ratio = 1:1",
        "key_pattern = G:G",
        "key_stddev = 16.666667",
        "key_median = 50.500000",
        "seed = 0",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
}

#[test]
fn wait_options_take_memtiers_forms() {
    let c = parse("").unwrap();
    assert_eq!((c.wait, c.wait_ratio), (0, None));
    // Ranges given backwards are swapped, as memtier's config_range does.
    let c = parse("--wait-ratio 1:3 --num-slaves 2-1 --wait-timeout=10-20").unwrap();
    assert_eq!(
        c.wait_ratio,
        Some(WaitRatio {
            sets: 1,
            waits: 3,
            num_slaves: (1, 2),
            timeout_ms: (10, 20),
        })
    );
    assert_eq!(c.wait, 0);
    let text = c.show_config();
    for line in [
        "wait-ratio = 1:3",
        "num-slaves = 1-2",
        "wait-timeout = 10-20",
        "wait = 0",
    ] {
        assert!(
            text.lines().any(|l| l == line),
            "missing {line:?} in\n{text}"
        );
    }
    assert_eq!(parse("--wait 2").unwrap().wait, 2);
    // memtier's default ratio 1:0 is a ratio, which sends no WAIT.
    assert_eq!(
        parse("--wait-ratio 1:0")
            .unwrap()
            .wait_ratio
            .map(|w| w.waits),
        Some(0)
    );
    // Only WAITs with timeout 0 and replicas can block.
    let blocking = |line: &str| parse(line).unwrap().wait_ratio.unwrap().blocking_replicas();
    assert_eq!(blocking("--wait-ratio 1:1"), None);
    assert_eq!(blocking("--wait-ratio 1:1 --num-slaves 0-2"), Some(2));
    assert_eq!(
        blocking("--wait-ratio 1:1 --num-slaves 0-2 --wait-timeout 1-5"),
        None
    );
    assert_eq!(
        blocking("--wait-ratio 1:1 --num-slaves 0-2 --wait-timeout 0-5"),
        Some(2)
    );
    assert_eq!(blocking("--wait-ratio 1:0 --num-slaves 0-2"), None);
}

#[test]
fn wait_options_refuse_in_one_line() {
    for (line, message) in [
        (
            "--wait-ratio 0:0",
            "invalid --wait-ratio \"0:0\": wait-ratio must be expressed as [0-n]:[0-n]",
        ),
        (
            "--wait-ratio 1",
            "invalid --wait-ratio \"1\": wait-ratio must be expressed as [0-n]:[0-n]",
        ),
        (
            "--num-slaves 0-0 --wait-ratio 1:1",
            "invalid --num-slaves \"0-0\": num-slaves must be expressed as [0-n]-[1-n]",
        ),
        (
            "--wait-timeout 5 --wait-ratio 1:1",
            "invalid --wait-timeout \"5\": wait-timeout must be expressed as [0-n]-[1-n]",
        ),
        (
            "--wait 0",
            "invalid --wait \"0\": give a number of replicas from 1 to 100",
        ),
        (
            "--wait 101",
            "invalid --wait \"101\": give a number of replicas from 1 to 100",
        ),
        (
            "--wait 1 --wait-ratio 1:1",
            "--wait 1 with --wait-ratio 1:1: --wait N follows every write with WAIT N 0 in the \
             write's own latency, --wait-ratio sends memtier's WAITs as requests of their own: \
             drop one",
        ),
        (
            "--cluster-mode --wait-ratio 1:1",
            "--cluster-mode with --wait-ratio: cluster mode does not support it (memtier): its \
             WAITs name no key, so no primary; use --wait N, which follows each write with WAIT \
             N 0 on the primary the write went to",
        ),
    ] {
        assert_eq!(err(line), message, "{line}");
    }
    // memtier's order: --multi-key-get is named before --wait-ratio.
    assert!(err("--cluster-mode --wait-ratio 1:1 --multi-key-get 2")
        .starts_with("--cluster-mode with --multi-key-get"));
}

#[test]
fn wait_options_that_do_nothing_are_warned_about() {
    let c = parse("--num-slaves 1-2 --wait 1").unwrap();
    assert_eq!(c.wait_ratio, None);
    assert_eq!(
        c.warnings,
        ["--num-slaves applies to --wait-ratio's WAITs only (as in memtier); ignored"]
    );
    let argv: Vec<String> = [
        "kv",
        "--command",
        "SET __key__ __data__",
        "--wait-ratio",
        "1:1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let c = parse_argv(&argv).unwrap();
    assert_eq!(c.wait_ratio, None);
    assert_eq!(
        c.warnings,
        [
            "--wait-ratio does not apply to --command (memtier sends its WAITs only between SETs \
          and GETs); ignored"
        ]
    );
}

#[test]
fn wait_ratio_requests_are_waits_in_the_mix() {
    use crate::kv::command::RequestBuf;
    use crate::kv::conn_gen::RequestKind;
    let c = parse("--wait-ratio 1:1 --num-slaves 1-1 --ratio 1:0 -c 1 -t 1").unwrap();
    let mut gen = c.conn_gen(0, &c.value_buffer());
    let mut req = RequestBuf::new();
    let mut kinds = Vec::new();
    for _ in 0..7 {
        let kind = gen.next_request(&mut req);
        if kind == RequestKind::Wait {
            let args: Vec<&[u8]> = req.args().collect();
            assert_eq!(args, [&b"WAIT"[..], b"1", b"0"]);
        }
        kinds.push(kind);
    }
    use RequestKind::{Set, Wait};
    assert_eq!(kinds, [Wait, Set, Set, Wait, Set, Set, Wait]);
    // The same seed sends the same keys with or without WAITs.
    let plain = parse("--ratio 1:0 -c 1 -t 1").unwrap();
    let mut plain_gen = plain.conn_gen(0, &plain.value_buffer());
    let mut gen = c.conn_gen(0, &c.value_buffer());
    let mut plain_req = RequestBuf::new();
    for _ in 0..5 {
        plain_gen.next_request(&mut plain_req);
        while gen.next_request(&mut req) == RequestKind::Wait {}
        assert_eq!(req.arg(1), plain_req.arg(1));
    }
}

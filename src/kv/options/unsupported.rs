//! The memtier_benchmark options `edgebench kv` refuses, and [`reject_unsupported`], which
//! scans argv for them before clap runs, so a memtier command line using one fails with our
//! one-line reason and alternative rather than clap's "unexpected argument".
//!
//! This file is one table (memtier's options we lack, with why) and the scan over it.
//! Invariant: [`VALUE_LONGS`] and [`VALUE_SHORTS`] list exactly the options of
//! [`super::KvArgs`] that take a value, so a value (`--command "… --tls"`) is never read as
//! an option.

use crate::kv::error::KvConfigError;

/// memtier options edgebench kv does not implement, with the reason and the alternative.
/// Taken from `config_parse_args`'s `long_options` table and getopt string
/// `"vs:S:p:P:o:x:DRn:c:t:d:a:h:46u:"` (`memtier_benchmark.cpp`).
const UNSUPPORTED: &[(&str, Option<char>, &str)] = &[
    (
        "ipv4",
        Some('4'),
        "the resolver picks the address family; give an IPv4 address to -s to force it",
    ),
    (
        "ipv6",
        Some('6'),
        "the resolver picks the address family; give an IPv6 address to -s to force it",
    ),
    (
        "debug",
        Some('D'),
        "there is no per-request debug log; --show-config prints the configuration",
    ),
    ("version", Some('v'), "use edgebench --version"),
    (
        "client-stats",
        None,
        "no per-client files; --json-out-file has the run and its per-second series",
    ),
    ("realtime-latencies", None, LIVE_WHY),
    ("latency-window", None, LIVE_WHY),
    ("reconnect-on-error", None, RECONNECT_WHY),
    ("max-reconnect-attempts", None, RECONNECT_WHY),
    ("reconnect-backoff-factor", None, RECONNECT_WHY),
    ("retry-on-error", None, RETRY_WHY),
    ("max-retries", None, RETRY_WHY),
    ("retry-backoff-ms", None, RETRY_WHY),
    ("retry-backoff-factor", None, RETRY_WHY),
    ("retry-on", None, RETRY_WHY),
    ("max-retry-queue", None, RETRY_WHY),
    ("failed-keys-file", None, RETRY_WHY),
    ("thread-conn-start-min-jitter-micros", None, JITTER_WHY),
    ("thread-conn-start-max-jitter-micros", None, JITTER_WHY),
    (
        "data-offset",
        None,
        "for SETRANGE/GETRANGE use --command \"SETRANGE __key__ OFFSET __data__\"",
    ),
    ("data-import", None, IMPORT_WHY),
    ("data-verify", None, IMPORT_WHY),
    ("verify-only", None, IMPORT_WHY),
    ("generate-keys", None, IMPORT_WHY),
    ("no-expiry", None, IMPORT_WHY),
    (
        "monitor-input",
        None,
        "MONITOR replay is not implemented; give the commands with --command",
    ),
    (
        "monitor-pattern",
        None,
        "MONITOR replay is not implemented; give the commands with --command",
    ),
    ("statsd-host", None, STATSD_WHY),
    ("statsd-port", None, STATSD_WHY),
    ("statsd-prefix", None, STATSD_WHY),
    ("statsd-run-label", None, STATSD_WHY),
    ("graphite-port", None, STATSD_WHY),
    (
        "scan-incremental-iteration",
        None,
        "SCAN cursor following is not implemented",
    ),
    (
        "scan-incremental-max-iterations",
        None,
        "SCAN cursor following is not implemented",
    ),
    ("clients-start", None, STAIRCASE_WHY),
    ("clients-step", None, STAIRCASE_WHY),
    ("step-duration", None, STAIRCASE_WHY),
    (
        "transaction",
        None,
        "MULTI/EXEC grouping is not implemented; use --command \"MULTI\" etc. with --pipeline",
    ),
    (
        "command-miss-tracking",
        None,
        "hits and misses are counted for GET and MGET replies",
    ),
    (
        "command-is-read",
        None,
        "there is no replica routing; edgebench kv talks to one endpoint",
    ),
    (
        "read-preference",
        None,
        "there is no replica routing; edgebench kv talks to one endpoint",
    ),
    (
        "read-preference-fallback",
        None,
        "there is no replica routing; edgebench kv talks to one endpoint",
    ),
    (
        "read-server",
        None,
        "there is no replica routing; edgebench kv talks to one endpoint",
    ),
];
const LIVE_WHY: &str = "edgebench kv prints its own live line every second on stderr";
const RECONNECT_WHY: &str =
    "a lost connection ends the run, and the report says why and what was measured";
const RETRY_WHY: &str = "error replies are counted, never retried";
const JITTER_WHY: &str = "all connections open before the clock starts";
const IMPORT_WHY: &str =
    "memcache dump import and verification are not implemented; populate with -n allkeys --key-pattern=P:P --ratio=1:0";
const STATSD_WHY: &str = "no StatsD/Graphite export; --json-out-file has the per-second series";
const STAIRCASE_WHY: &str = "no client staircase; run edgebench kv once per -c value";

/// Long options of [`super::KvArgs`] that take a value, so the argv scan skips their values.
const VALUE_LONGS: &[&str] = &[
    "server",
    "host",
    "port",
    "unix-socket",
    "uri",
    "protocol",
    "authenticate",
    "select-db",
    "cert",
    "key",
    "cacert",
    "sni",
    "tls-protocols",
    "clients",
    "threads",
    "pipeline",
    "requests",
    "test-time",
    "ratio",
    "data-size",
    "data-size-range",
    "data-size-list",
    "data-size-pattern",
    "expiry-range",
    "key-prefix",
    "key-minimum",
    "key-maximum",
    "key-pattern",
    "key-stddev",
    "key-median",
    "key-zipf-exp",
    "wait-ratio",
    "num-slaves",
    "wait-timeout",
    "wait",
    "multi-key-get",
    "run-count",
    "rate-limiting",
    "print-percentiles",
    "out-file",
    "json-out-file",
    "hdr-file-prefix",
    "run-id",
    "start-at",
    "command",
    "command-ratio",
    "command-key-pattern",
    "command-stats-breakdown",
    "reconnect-interval",
    "connection-timeout",
    "target",
    "rate",
    "warmup",
    "seed",
];
/// Short options of [`super::KvArgs`] that take a value (memtier's getopt letters with `:`).
const VALUE_SHORTS: &[char] = &[
    's', 'h', 'p', 'S', 'u', 'P', 'a', 'c', 't', 'n', 'd', 'x', 'o',
];

/// Fails on the first memtier option edgebench kv does not implement, with one line naming
/// it and what to do instead. Pass the arguments after `kv` (or the whole argv: positional
/// words are skipped). Values of options (`--command "… --tls"`) are not mistaken for
/// options; `--` ends the scan.
pub fn reject_unsupported(args: &[String]) -> Result<(), KvConfigError> {
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if arg == "--" {
            return Ok(());
        }
        if let Some(long) = arg.strip_prefix("--") {
            let (name, has_value) = match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            };
            if let Some((_, _, why)) = UNSUPPORTED.iter().find(|(l, _, _)| *l == name) {
                return Err(KvConfigError::Unsupported {
                    flag: format!("--{name}"),
                    why,
                });
            }
            if !has_value && VALUE_LONGS.contains(&name) {
                i += 1;
            }
        } else if let Some(shorts) = arg.strip_prefix('-') {
            // A cluster like `-Rc 5`: flags until the first letter that takes a value, whose
            // value is the rest of the word or the next word.
            for (pos, c) in shorts.char_indices() {
                if let Some((_, _, why)) = UNSUPPORTED.iter().find(|(_, s, _)| *s == Some(c)) {
                    return Err(KvConfigError::Unsupported {
                        flag: format!("-{c}"),
                        why,
                    });
                }
                if VALUE_SHORTS.contains(&c) {
                    if pos + c.len_utf8() == shorts.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
    }
    Ok(())
}

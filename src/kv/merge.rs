//! Merging `edgebench kv` hosts. Each host's `results.json` (memtier's document) carries, in
//! every section, edgebench's [`crate::kv::export::EXACT`] object — the counts behind
//! memtier's rounded rates, the duration in ns and each row's HDR histograms in ns — and, in
//! `run information`, the host's command line and run id. From those a host's
//! [`LoadResult`] and [`KvConfig`] are rebuilt exactly, added up, and written by kv's own
//! exporters (memtier.txt, results.md, results.json, report.html).
//!
//! The host's section is `ALL STATS`, or with `-x` its `AGGREGATED AVERAGE RESULTS`. The
//! per-second series add second by second: the hosts started at one barrier, so each host's
//! second k is the same wall-clock second (within the barrier's wake-up, a few ms).
//!
//! Throughput: the merged Ops/sec is the sum of the hosts' Ops/sec (the hosts ran at the same
//! time, as memtier users add the figures of concurrent memtier processes). The merged run's
//! duration is therefore the one that gives that sum, all operations / Σ host rates: each
//! host's duration when they are all equal, between the shortest and the longest otherwise.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::kv::export::{Json, CONFIG, EXACT};
use crate::kv::load::{add_seconds, LoadResult, RowStats, SecondStats};
use crate::kv::results::KvResults;
use crate::kv::KvConfig;
use crate::report::merge::{already_merged, decode, MergeError};

/// One host's kv results, rebuilt.
#[derive(Debug)]
pub struct KvInput {
    /// Where they were read.
    pub path: PathBuf,
    /// `--run-id`, if it was given.
    pub run_id: Option<String>,
    /// The host's configuration, rebuilt from its command line.
    pub cfg: KvConfig,
    /// The host's figures (its `ALL STATS`, or its average of `-x` runs).
    pub result: LoadResult,
}

impl KvInput {
    /// Rebuilds a host from its JSON document `doc`, read from `path`.
    pub fn read(path: &Path, doc: &Value) -> Result<KvInput, MergeError> {
        let info = &doc["run information"];
        if info.get("Hosts").is_some() {
            return Err(already_merged(path));
        }
        // The typed configuration; an edgebench before it kept the command line instead.
        let (typed, args) = (info.get(CONFIG), info["Command line"].as_array());
        if typed.is_none() && args.is_none() {
            return Err(MergeError::read(
                path,
                "it has no \"Config\" under \"run information\" (written by \
                 memtier_benchmark or an older edgebench); run the hosts with this edgebench kv",
            ));
        }
        let section = doc
            .as_object()
            .and_then(|o| {
                o.get("ALL STATS").or_else(|| {
                    o.iter()
                        .find(|(k, _)| k.starts_with("AGGREGATED AVERAGE RESULTS"))
                        .map(|(_, v)| v)
                })
            })
            .ok_or_else(|| {
                MergeError::read(path, "it has no ALL STATS or AGGREGATED AVERAGE RESULTS")
            })?;
        Ok(KvInput {
            path: path.to_path_buf(),
            run_id: info["Run id"].as_str().map(str::to_string),
            cfg: match (typed, args) {
                (Some(typed), _) => typed_config(path, typed)?,
                (None, args) => {
                    let args: Vec<String> = args
                        .into_iter()
                        .flatten()
                        .filter_map(|a| a.as_str().map(str::to_string))
                        .collect();
                    config_of(path, &args)?
                }
            },
            result: result_of(path, section)?,
        })
    }
}

/// A host's typed configuration, as its results.json keeps it (`--start-at` left out: it has
/// passed).
fn typed_config(path: &Path, typed: &Value) -> Result<KvConfig, MergeError> {
    let mut cfg: KvConfig = serde_json::from_value(typed.clone()).map_err(|e| {
        MergeError::read(
            path,
            format!("its {CONFIG:?} does not read ({e}); merge results of this edgebench"),
        )
    })?;
    cfg.start_at = None;
    Ok(cfg)
}

/// The configuration of a host's command line, as an edgebench before the typed
/// configuration kept it (`--start-at` left out: it has passed), parsed with kv's own flags.
fn config_of(path: &Path, args: &[String]) -> Result<KvConfig, MergeError> {
    let mut argv = vec!["kv".to_string()];
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--start-at" {
            it.next();
        } else if !a.starts_with("--start-at=") {
            argv.push(a.clone());
        }
    }
    let bad = |e: String| {
        MergeError::read(
            path,
            format!("its command line no longer parses ({e}); merge results of this edgebench"),
        )
    };
    let kv = <crate::kv::KvCommandLine as clap::Parser>::try_parse_from(&argv)
        .map_err(|e| bad(e.to_string().lines().next().unwrap_or_default().to_string()))?;
    let mut cfg = KvConfig::from_recorded_args(&kv.args).map_err(|e| bad(e.to_string()))?;
    cfg.command_line = args.to_vec();
    Ok(cfg)
}

/// A host's figures from a section's [`EXACT`] object.
fn result_of(path: &Path, section: &Value) -> Result<LoadResult, MergeError> {
    let exact = section.get(EXACT).ok_or_else(|| {
        MergeError::read(
            path,
            format!("its sections have no {EXACT:?} (an older edgebench); rerun with this one"),
        )
    })?;
    let int = |v: &Value, key: &str| v[key].as_u64().unwrap_or(0);
    let histogram = |v: &Value, key: &str| -> Result<_, MergeError> {
        match v[key].as_str() {
            None => Ok(crate::runner::stats::latency_histogram()),
            Some(b64) => decode(b64).ok_or_else(|| {
                MergeError::read(path, format!("its {key:?} does not decode; was it edited?"))
            }),
        }
    };
    let mut rows = Vec::new();
    let mut seconds: Vec<Vec<SecondStats>> = Vec::new();
    let row_list = exact["Rows"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, row) in row_list.iter().enumerate() {
        let series = row["Seconds"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        if seconds.len() < series.len() {
            seconds.resize_with(series.len(), || {
                (0..row_list.len())
                    .map(|_| SecondStats::default())
                    .collect()
            });
        }
        for (s, second) in series.iter().enumerate() {
            seconds[s][i] = second_of(path, second)?;
        }
        rows.push((
            row["Name"].as_str().unwrap_or_default().to_string(),
            RowStats {
                ops: int(row, "Count"),
                hits: int(row, "Hits"),
                misses: int(row, "Misses"),
                errors: int(row, "Errors"),
                moved: int(row, "MOVED"),
                ask: int(row, "ASK"),
                bytes_rx: int(row, "Bytes RX"),
                bytes_tx: int(row, "Bytes TX"),
                latency: histogram(row, "Latency Histogram ns")?,
                corrected: histogram(row, "Corrected Latency Histogram ns")?,
            },
        ));
    }
    let start_ms = section
        .pointer("/Runtime/Start time")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Ok(LoadResult {
        rows,
        elapsed: Duration::from_nanos(int(exact, "Duration ns")),
        started_at: SystemTime::UNIX_EPOCH + Duration::from_millis(start_ms),
        seconds,
        rate: exact["Rate"].as_f64(),
        late: int(exact, "Late Requests"),
        dropped: int(exact, "Dropped Requests"),
        thread_cpu: Vec::new(),
        stopped: exact["Stopped"].as_str().map(str::to_string),
        failover: None,
    })
}

/// One second of one row from its [`EXACT`] `Seconds` entry.
fn second_of(path: &Path, v: &Value) -> Result<SecondStats, MergeError> {
    use hdrhistogram::serialization::Deserializer;
    let int = |key: &str| v[key].as_u64().unwrap_or(0);
    let mut s = SecondStats {
        ops: int("Count"),
        hits: int("Hits"),
        misses: int("Misses"),
        bytes_rx: int("Bytes RX"),
        bytes_tx: int("Bytes TX"),
        latency_sum_ns: int("Latency Sum ns"),
        min_ns: v["Min ns"].as_u64().unwrap_or(u64::MAX),
        max_ns: int("Max ns"),
        ..SecondStats::default()
    };
    let b64 = v["Histogram ns"].as_str().unwrap_or_default();
    let decoded: Option<hdrhistogram::Histogram<u32>> = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD
            .decode(b64)
            .ok()
            .and_then(|bytes| {
                Deserializer::new()
                    .deserialize(&mut std::io::Cursor::new(bytes))
                    .ok()
            })
    };
    match decoded {
        Some(h) if s.latency.add(&h).is_ok() => Ok(s),
        _ => Err(MergeError::read(
            path,
            "a per-second \"Histogram ns\" does not decode; was it edited?",
        )),
    }
}

/// The hosts (label, input), at least one, added up; see the module doc.
pub fn merge(hosts: Vec<(String, KvInput)>) -> Result<KvResults, MergeError> {
    let first = &hosts[0].1;
    let names: Vec<&String> = first.result.rows.iter().map(|(n, _)| n).collect();
    for (_, h) in &hosts[1..] {
        let theirs: Vec<&String> = h.result.rows.iter().map(|(n, _)| n).collect();
        if theirs != names {
            return Err(MergeError::shape(
                &h.path,
                format!(
                    "measured rows {theirs:?} but {} measured {names:?}: give every host the same \
                     --command / --ratio flags",
                    first.path.display()
                ),
            ));
        }
    }
    let results: Vec<&LoadResult> = hosts.iter().map(|(_, h)| &h.result).collect();
    let total = total(&hosts, &results);
    let mut cfg = first.cfg.clone();
    cfg.threads = hosts
        .iter()
        .fold(0u32, |t, (_, h)| t.saturating_add(h.cfg.threads));
    cfg.run_id.clone_from(&first.run_id);
    let hosts = hosts.into_iter().map(|(l, h)| (l, h.result)).collect();
    Ok(KvResults::merged(cfg, hosts, total))
}

/// The hosts' figures added: counts and histograms, rates; the duration that makes the
/// merged Ops/sec the sum of the hosts'.
fn total(hosts: &[(String, KvInput)], results: &[&LoadResult]) -> LoadResult {
    let mut out = results[0].clone();
    for r in &results[1..] {
        for ((_, m), (_, s)) in out.rows.iter_mut().zip(&r.rows) {
            m.add(s);
        }
        out.started_at = out.started_at.min(r.started_at);
        out.late += r.late;
        out.dropped += r.dropped;
        out.rate = out.rate.zip(r.rate).map(|(a, b)| a + b);
        // The hosts started at one barrier: their second k is the same wall-clock second.
        add_seconds(&mut out.seconds, &r.seconds, out.rows.len());
    }
    out.stopped = hosts.iter().find_map(|(label, h)| {
        h.result
            .stopped
            .as_ref()
            .map(|s| format!("host {label}: {s}"))
    });
    let ops: u64 = out.rows.iter().map(|(_, r)| r.ops).sum();
    let rate: f64 = results.iter().map(|r| r.ops_per_sec()).sum();
    let longest = results.iter().map(|r| r.elapsed).max().unwrap_or_default();
    out.elapsed = if ops > 0 && rate > 0.0 {
        Duration::from_secs_f64(ops as f64 / rate)
    } else {
        longest
    };
    out
}

/// The table of each host's totals and the merged total, first in a merge's results.md.
pub fn hosts_markdown(results: &KvResults) -> String {
    use std::fmt::Write as _;
    let pcts = &results.cfg.print_percentiles;
    let mut out = format!(
        "## {} load hosts (Totals; the total's percentiles are from all hosts' histograms \
         added)\n\n| Host | Ops | Seconds | Ops/sec | Avg. Latency (ms) |",
        results.hosts.len()
    );
    for p in pcts {
        let _ = write!(out, " {} (ms) |", crate::kv::report::pct_label(*p));
    }
    out.push_str(" Errors |\n|");
    for _ in 0..pcts.len() + 6 {
        out.push_str("-|");
    }
    out.push('\n');
    let rows = results
        .hosts
        .iter()
        .map(|(l, r)| (l.as_str(), r))
        .chain(std::iter::once(("**Total**", &results.runs[0])));
    for (label, r) in rows {
        let t = r.totals();
        let (avg, pct) = crate::kv::report::latency_ms(&t.latency, pcts);
        let cell = |v: Option<f64>| v.map_or("---".to_string(), |v| format!("{v:.5}"));
        let _ = write!(
            out,
            "| {label} | {} | {:.3} | {:.2} | {} |",
            t.ops,
            r.elapsed.as_secs_f64(),
            r.ops_per_sec(),
            cell(avg)
        );
        for p in pct {
            let _ = write!(out, " {} |", cell(p));
        }
        let _ = writeln!(out, " {} |", t.errors);
    }
    out
}

/// Adds `Hosts` (label and section of each) to a merge's `run information`.
pub fn note_hosts(doc: &mut Json, results: &KvResults) {
    let Json::Obj(items) = doc else { return };
    let Some((_, Json::Obj(info))) = items.iter_mut().find(|(k, _)| k == "run information") else {
        return;
    };
    let hosts = results
        .hosts
        .iter()
        .map(|(label, _)| Json::Str(label.clone()))
        .collect();
    info.push(("Hosts".into(), Json::Arr(hosts)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::stats::latency_histogram;

    /// A host's run of one SET row: `values` (ns) recorded, over `secs` seconds.
    fn host(values: &[u64], secs: u64) -> LoadResult {
        let mut row = RowStats {
            ops: values.len() as u64,
            bytes_tx: 10 * values.len() as u64,
            errors: 1,
            ..RowStats::default()
        };
        // Value j answered in second j mod secs.
        let mut seconds: Vec<Vec<SecondStats>> = (0..secs)
            .map(|_| vec![SecondStats::default(), SecondStats::default()])
            .collect();
        for (j, v) in values.iter().enumerate() {
            row.latency.record(*v).unwrap();
            let s = &mut seconds[j % secs as usize][0];
            s.ops += 1;
            s.latency_sum_ns += v;
            s.min_ns = s.min_ns.min(*v);
            s.max_ns = s.max_ns.max(*v);
            s.latency.record(*v).unwrap();
        }
        LoadResult {
            rows: vec![("Sets".into(), row), ("Gets".into(), RowStats::default())],
            elapsed: Duration::from_secs(secs),
            started_at: SystemTime::UNIX_EPOCH + Duration::from_secs(100 + secs),
            seconds,
            rate: None,
            late: 0,
            dropped: 0,
            thread_cpu: Vec::new(),
            stopped: None,
            failover: None,
        }
    }

    fn input(name: &str, result: LoadResult) -> (String, KvInput) {
        let cfg = config_of(Path::new(name), &["--target".into(), "embedded".into()]).unwrap();
        (
            name.to_string(),
            KvInput {
                path: PathBuf::from(name),
                run_id: Some("r".into()),
                cfg,
                result,
            },
        )
    }

    /// Deterministic, spread values: a different distribution per host.
    fn values(seed: u64, n: usize, scale: u64) -> Vec<u64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                1 + (x >> 33) % scale
            })
            .collect()
    }

    #[test]
    fn merged_percentiles_are_those_of_one_histogram_of_all_values_and_counts_add() {
        let a = values(1, 5000, 100_000);
        let b = values(2, 3000, 2_000_000);
        let c = values(3, 700, 40_000_000);
        let merged = merge(vec![
            input("a", host(&a, 2)),
            input("b", host(&b, 2)),
            input("c", host(&c, 2)),
        ])
        .unwrap();
        let mut all = latency_histogram();
        for v in a.iter().chain(&b).chain(&c) {
            all.record(*v).unwrap();
        }
        let total = &merged.runs[0];
        let sets = &total.rows[0].1;
        assert_eq!(sets.ops, 8700);
        assert_eq!(sets.errors, 3);
        assert_eq!(sets.bytes_tx, 87_000);
        for q in [0.5, 0.9, 0.99, 0.999, 1.0] {
            assert_eq!(
                sets.latency.value_at_quantile(q),
                all.value_at_quantile(q),
                "q {q}"
            );
        }
        assert_eq!(sets.latency.max(), all.max());
        assert_eq!(sets.latency.len(), all.len());
        // Equal durations: ops/s add exactly, and the duration is the hosts'.
        assert_eq!(total.elapsed, Duration::from_secs(2));
        // Second by second: counts add, and the second's histogram holds every host's values.
        assert_eq!(total.seconds.len(), 2);
        for (k, second) in total.seconds.iter().enumerate() {
            let mut want = SecondStats::default();
            for v in [&a, &b, &c]
                .iter()
                .flat_map(|vs| vs.iter().skip(k).step_by(2))
            {
                want.latency.record(*v).unwrap();
                want.latency_sum_ns += v;
            }
            assert_eq!(second[0].ops, want.latency.len());
            assert_eq!(second[0].latency_sum_ns, want.latency_sum_ns);
            assert_eq!(second[0].latency, want.latency);
        }
        assert_eq!(total.ops_per_sec(), 8700.0 / 2.0);
        assert_eq!(
            total.started_at,
            SystemTime::UNIX_EPOCH + Duration::from_secs(102)
        );
        // Each host kept as it was.
        assert_eq!(merged.hosts.len(), 3);
        assert_eq!(merged.hosts[1].0, "b");
        assert_eq!(merged.hosts[1].1.rows[0].1.ops, 3000);
        // memtier's default -t 4 on each host.
        assert_eq!(merged.cfg.threads, 12);
    }

    #[test]
    fn throughputs_add_when_durations_differ() {
        let merged = merge(vec![
            input("a", host(&values(1, 1000, 1000), 1)),
            input("b", host(&values(2, 1000, 1000), 4)),
        ])
        .unwrap();
        // 1000/s + 250/s.
        let total = &merged.runs[0];
        assert!(
            (total.ops_per_sec() - 1250.0).abs() < 1e-6,
            "{}",
            total.ops_per_sec()
        );
        assert_eq!(total.rows[0].1.ops, 2000);
    }

    #[test]
    fn a_host_that_opened_more_sockets_than_this_machine_may_still_merges() {
        // -t 1024 × -c 1000: a million sockets, refused for a run here, fine for a report.
        let args: Vec<String> = "-s 10.0.0.5 -t 1024 -c 1000 --start-at 2020-01-01T00:00:00Z"
            .split(' ')
            .map(str::to_string)
            .collect();
        let cfg = config_of(Path::new("big"), &args).unwrap();
        assert_eq!((cfg.threads, cfg.clients), (1024, 1000));
        assert_eq!(cfg.start_at, None);
        assert_eq!(cfg.command_line, args);
        // The same flags for a run on this machine are refused (the resource check).
        let argv = ["kv", "-t", "1024", "-c", "1000"];
        let kv = <crate::kv::KvCommandLine as clap::Parser>::try_parse_from(argv).unwrap();
        assert!(KvConfig::from_args_with_entropy(&kv.args, 0).is_err());
    }

    #[test]
    fn hosts_that_ran_different_rows_are_refused() {
        let mut odd = host(&[1, 2], 1);
        odd.rows[1].0 = "HSET".into();
        let e = merge(vec![input("a", host(&[1], 1)), input("b", odd)]).unwrap_err();
        assert!(e.to_string().contains("same --command"), "{e}");
    }

    #[test]
    fn a_host_keeps_its_typed_config_and_an_older_argv_still_merges() {
        let args: Vec<String> = "--target embedded -c 7 --command=HSET_h_f_v --command-ratio 3"
            .split(' ')
            .map(|a| a.replace('_', " "))
            .collect();
        let cfg = config_of(Path::new("a"), &args).unwrap();
        let results = KvResults::new(cfg.clone(), vec![host(&[5, 6], 2)]);
        let bytes = crate::report::Exporter::render(&crate::kv::results::KvJson, &results).unwrap();
        let mut doc: Value = serde_json::from_slice(&bytes).unwrap();
        let info = &doc["run information"];
        assert!(info.get("Command line").is_none(), "no argv to parse again");
        let typed = KvInput::read(Path::new("a"), &doc).unwrap().cfg;
        assert_eq!(typed.command_line, args);
        assert_eq!(typed.clients, 7);
        assert_eq!(typed.commands, cfg.commands);
        assert_eq!(format!("{typed:?}"), format!("{cfg:?}"));
        // A results.json of an edgebench before the typed config: its argv, parsed by kv.
        let info = doc["run information"].as_object_mut().unwrap();
        info.remove(CONFIG);
        info.insert("Command line".into(), serde_json::json!(args));
        let parsed = KvInput::read(Path::new("a"), &doc).unwrap().cfg;
        assert_eq!(format!("{parsed:?}"), format!("{cfg:?}"));
    }

    #[test]
    fn a_written_document_reads_back_exactly() {
        let (_, a) = input("a", host(&values(7, 900, 5_000_000), 3));
        let results = KvResults::new(a.cfg.clone(), vec![a.result.clone()]);
        let bytes = crate::report::Exporter::render(&crate::kv::results::KvJson, &results).unwrap();
        let doc: Value = serde_json::from_slice(&bytes).unwrap();
        let back = result_of(Path::new("a"), &doc["ALL STATS"]).unwrap();
        assert_eq!(back.elapsed, a.result.elapsed);
        for ((n1, r1), (n2, r2)) in back.rows.iter().zip(&a.result.rows) {
            assert_eq!(n1, n2);
            assert_eq!(
                (r1.ops, r1.errors, r1.bytes_tx),
                (r2.ops, r2.errors, r2.bytes_tx)
            );
            assert_eq!(r1.latency, r2.latency);
        }
        assert_eq!(back.seconds.len(), 3);
        for (s1, s2) in back.seconds.iter().zip(&a.result.seconds) {
            let (b, w) = (&s1[0], &s2[0]);
            assert_eq!(
                (b.ops, b.latency_sum_ns, b.min_ns, b.max_ns),
                (w.ops, w.latency_sum_ns, w.min_ns, w.max_ns)
            );
            assert_eq!(b.latency, w.latency);
            assert_eq!(s1[1].ops, 0);
        }
        // A host read back takes a slower host's values when added (decoded histograms are
        // made auto-resizing again).
        let mut sets = back.rows[0].1.clone();
        let mut slow = RowStats::default();
        slow.latency.record(3_000_000_000_000).unwrap();
        slow.ops = 1;
        sets.add(&slow);
        assert_eq!(sets.latency.len(), 901);
        assert_eq!(sets.latency.max(), slow.latency.max());
    }
}

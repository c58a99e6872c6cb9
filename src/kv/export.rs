//! `edgebench kv`'s files in memtier_benchmark's formats: the `--json-out-file` JSON
//! (`JSON_handler.cpp`, `run_stats.cpp` `print_json` / `result_print_to_json`, and `main` in
//! `memtier_benchmark.cpp`) and the `--hdr-file-prefix` histogram files (`run_stats.cpp`
//! `save_hdr_*`: a percentile distribution `.txt` and a HistogramLogProcessor `.hgrm`).
//!
//! memtier records latency in µs and prints it in ms (`LATENCY_HDR_RESULTS_MULTIPLIER` =
//! 1000); edgebench records ns. Figures printed here are in ms as memtier's are, and the
//! histograms written into files are converted to µs first, so that a memtier consumer that
//! decodes them reads memtier's unit. JSON keys keep memtier's order: the writer here is an
//! ordered tree, not a map.

use crate::runner::stats::latency_histogram;
use std::fmt::Write as _;

use hdrhistogram::serialization::interval_log::IntervalLogWriterBuilder;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;

use super::load::{LoadResult, RowStats, SecondStats, WAITS_ROW};
use super::KvConfig;

/// A JSON value whose objects keep their keys in insertion order.
#[derive(Debug, Clone)]
pub enum Json {
    /// A number (or `true`/`false`), written as given.
    Raw(String),
    /// A string, escaped on output.
    Str(String),
    /// An object.
    Obj(Vec<(String, Json)>),
    /// An array.
    Arr(Vec<Json>),
}

impl Json {
    /// A serde_json value as this document writes it.
    pub fn of(v: &serde_json::Value) -> Json {
        use serde_json::Value;
        match v {
            Value::Null => Json::Raw("null".into()),
            Value::Bool(b) => Json::Raw(b.to_string()),
            Value::Number(n) => Json::Raw(n.to_string()),
            Value::String(s) => Json::Str(s.clone()),
            Value::Array(a) => Json::Arr(a.iter().map(Json::of).collect()),
            Value::Object(o) => {
                Json::Obj(o.iter().map(|(k, v)| (k.clone(), Json::of(v))).collect())
            }
        }
    }
}

/// The key, under `run information`, of edgebench's typed [`KvConfig`] (serde's form), from
/// which `report merge` rebuilds a host's configuration.
pub const CONFIG: &str = "Config";

/// A number with `prec` decimals, as memtier's `%.2f` / `%.3f`; NaN and infinities become 0
/// (memtier PR #273: NaN made its JSON invalid).
fn num(v: f64, prec: usize) -> Json {
    let v = if v.is_finite() { v } else { 0.0 };
    Json::Raw(format!("{v:.prec$}"))
}

fn int(v: u64) -> Json {
    Json::Raw(v.to_string())
}

impl Json {
    /// Pretty-printed, four spaces per level, as memtier's handler indents.
    pub fn to_pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    fn write(&self, out: &mut String, level: usize) {
        let pad = |out: &mut String, l: usize| {
            for _ in 0..l {
                out.push_str("    ");
            }
        };
        match self {
            Json::Raw(s) => out.push_str(s),
            Json::Str(s) => out.push_str(&serde_json::to_string(s).unwrap_or_default()),
            Json::Obj(items) if items.is_empty() => out.push_str("{}"),
            Json::Arr(items) if items.is_empty() => out.push_str("[]"),
            Json::Obj(items) => {
                out.push_str("{\n");
                for (i, (k, v)) in items.iter().enumerate() {
                    pad(out, level + 1);
                    out.push_str(&serde_json::to_string(k).unwrap_or_default());
                    out.push_str(": ");
                    v.write(out, level + 1);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                pad(out, level);
                out.push('}');
            }
            Json::Arr(items) => {
                out.push_str("[\n");
                for (i, v) in items.iter().enumerate() {
                    pad(out, level + 1);
                    v.write(out, level + 1);
                    out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
                }
                pad(out, level);
                out.push(']');
            }
        }
    }
}

/// memtier's name of a row in JSON: `Sets`, `Gets`; a command `HSET` becomes `Hsets`
/// (`run_stats::print_json`: lower case, first letter upper, plus "s").
pub fn json_row_name(name: &str) -> String {
    if name == "Sets" || name == "Gets" || name == WAITS_ROW {
        return name.to_string();
    }
    let lower = name.to_lowercase();
    let mut chars = lower.chars();
    match chars.next() {
        Some(c) => format!("{}{}s", c.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

/// memtier's name of a row in distributions and HDR file names: `SET`, `GET` or the command.
pub fn hdr_row_name(name: &str) -> &str {
    match name {
        "Sets" => "SET",
        "Gets" => "GET",
        WAITS_ROW => "WAIT",
        other => other,
    }
}

/// `histogram` (ns) converted to memtier's µs, 3 significant digits.
pub fn to_micros(histogram: &Histogram<u64>) -> Histogram<u64> {
    let mut out = latency_histogram();
    for v in histogram.iter_recorded() {
        let us = (histogram.median_equivalent(v.value_iterated_to()) / 1000).max(1);
        let _ = out.record_n(us, v.count_at_value());
    }
    out
}

/// The V2 compressed, base64 form of a histogram (`hdr_log_encode`).
fn compressed(h: &Histogram<u64>) -> String {
    use base64::Engine as _;
    let mut bytes = Vec::new();
    if V2DeflateSerializer::new().serialize(h, &mut bytes).is_err() {
        return String::new();
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// memtier's percentile keys. memtier formats `p%.3f` (totals) or `p%.2f` (per second) into
/// `char buf[8]` with `snprintf(buf, sizeof(buf) - 1, ...)`, so a key keeps at most 6
/// characters: `p50.00`, `p99.90`, `p99.99`, `p100.0`; consumers read those names.
fn pct_key(p: f64, decimals: usize) -> String {
    let mut key = format!("p{p:.decimals$}");
    key.truncate(6);
    key
}

/// The points of memtier's latency distribution (`hdr_iter_percentile_init` with
/// `LATENCY_HDR_GRANULARITY` = 10 ticks per half distance): (ms, cumulative percent).
pub fn distribution_points(histogram: &Histogram<u64>) -> Vec<(f64, f64)> {
    if histogram.is_empty() {
        return Vec::new();
    }
    histogram
        .iter_quantiles(10)
        .map(|v| {
            (
                histogram.highest_equivalent(v.value_iterated_to()) as f64 / 1e6,
                v.quantile_iterated_to() * 100.0,
            )
        })
        .collect()
}

/// One row of a run (`result_print_to_json`), plus edgebench's corrected latency in open
/// loop.
#[allow(clippy::too_many_arguments)]
fn row_json(
    cfg: &KvConfig,
    r: &RowStats,
    secs: f64,
    hits_sec: f64,
    misses_sec: f64,
    seconds: &[SecondStats],
    open: bool,
) -> Json {
    let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let has = r.ops > 0;
    let ms = |ns: u64| ns as f64 / 1e6;
    let avg = if has { r.latency.mean() / 1e6 } else { 0.0 };
    let sum_ns: f64 = if has {
        r.latency.mean() * r.ops as f64
    } else {
        0.0
    };
    let mut o: Vec<(String, Json)> = vec![
        ("Count".into(), int(r.ops)),
        ("Ops/sec".into(), num(per_sec(r.ops), 2)),
        ("Hits/sec".into(), num(hits_sec, 2)),
        ("Misses/sec".into(), num(misses_sec, 2)),
    ];
    if cfg.cluster_mode {
        // memtier writes these in cluster mode only; the counts are edgebench's.
        o.push(("MOVED/sec".into(), num(per_sec(r.moved), 2)));
        o.push(("ASK/sec".into(), num(per_sec(r.ask), 2)));
        o.push(("MOVED".into(), int(r.moved)));
        o.push(("ASK".into(), int(r.ask)));
    }
    o.extend([
        ("Connection Errors/sec".into(), num(0.0, 2)),
        ("Connection Errors".into(), int(0)),
        ("Latency".into(), num(avg, 3)),
        ("Average Latency".into(), num(avg, 3)),
        ("Accumulated Latency".into(), int((sum_ns / 1e6) as u64)),
        (
            "Min Latency".into(),
            num(if has { ms(r.latency.min()) } else { 0.0 }, 3),
        ),
        (
            "Max Latency".into(),
            num(if has { ms(r.latency.max()) } else { 0.0 }, 3),
        ),
        (
            "KB/sec".into(),
            num(per_sec(r.bytes_rx + r.bytes_tx) / 1024.0, 2),
        ),
        (
            "KB/sec RX/TX".into(),
            num(per_sec(r.bytes_rx + r.bytes_tx) / 1024.0, 2),
        ),
        ("KB/sec RX".into(), num(per_sec(r.bytes_rx) / 1024.0, 2)),
        ("KB/sec TX".into(), num(per_sec(r.bytes_tx) / 1024.0, 2)),
    ]);
    let mut series = Vec::new();
    for (i, s) in seconds.iter().enumerate() {
        let mut e = vec![
            ("Bytes RX".into(), int(s.bytes_rx)),
            ("Bytes TX".into(), int(s.bytes_tx)),
            ("Count".into(), int(s.ops)),
        ];
        if s.ops > 0 {
            e.push((
                "Average Latency".into(),
                num(s.latency_sum_ns as f64 / s.ops as f64 / 1e6, 3),
            ));
            e.push((
                "Accumulated Latency".into(),
                int(s.latency_sum_ns / 1_000_000),
            ));
            e.push(("Min Latency".into(), num(ms(s.min_ns), 3)));
            e.push(("Max Latency".into(), num(ms(s.max_ns), 3)));
            for p in &cfg.print_percentiles {
                let v = s.latency.value_at_quantile(p / 100.0);
                e.push((pct_key(*p, 2), num(ms(s.latency.highest_equivalent(v)), 3)));
            }
        }
        series.push((i.to_string(), Json::Obj(e)));
    }
    o.push(("Time-Serie".into(), Json::Obj(series)));
    let mut pcts: Vec<(String, Json)> = cfg
        .print_percentiles
        .iter()
        .map(|p| {
            let v = if has {
                ms(r.latency.value_at_quantile(p / 100.0))
            } else {
                0.0
            };
            (pct_key(*p, 3), num(v, 3))
        })
        .collect();
    pcts.push((
        "Histogram log format".into(),
        Json::Obj(vec![(
            "Compressed Histogram".into(),
            Json::Str(compressed(&to_micros(&r.latency))),
        )]),
    ));
    o.push(("Percentile Latencies".into(), Json::Obj(pcts)));
    if open {
        // edgebench: latency from the intended send time (coordinated omission corrected).
        let has = !r.corrected.is_empty();
        o.push((
            "Corrected Average Latency".into(),
            num(if has { r.corrected.mean() / 1e6 } else { 0.0 }, 3),
        ));
        o.push((
            "Corrected Percentile Latencies".into(),
            Json::Obj(
                cfg.print_percentiles
                    .iter()
                    .map(|p| {
                        let v = if has {
                            ms(r.corrected.value_at_quantile(p / 100.0))
                        } else {
                            0.0
                        };
                        (pct_key(*p, 3), num(v, 3))
                    })
                    .collect(),
            ),
        ));
    }
    Json::Obj(o)
}

/// One run's section (`run_stats::print` with a JSON handler): `Runtime`, one object per row,
/// `Waits` (SET/GET mode), `Totals`, then the distributions unless `--hide-histogram`.
pub fn run_json(cfg: &KvConfig, result: &LoadResult) -> Json {
    let secs = result.elapsed.as_secs_f64();
    let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let start_ms = result
        .started_at
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    let duration_ms = result.elapsed.as_millis() as u64;
    let mut o: Vec<(String, Json)> = vec![(
        "Runtime".into(),
        Json::Obj(vec![
            ("Start time".into(), int(start_ms)),
            ("Finish time".into(), int(start_ms + duration_ms)),
            ("Total duration".into(), int(duration_ms)),
            ("Time unit".into(), Json::Str("MILLISECONDS".into())),
            (
                "Interrupted".into(),
                Json::Str(
                    if result.stopped.is_some() {
                        "true"
                    } else {
                        "false"
                    }
                    .into(),
                ),
            ),
        ]),
    )];
    let open = result.rate.is_some();
    let series_of = |row: usize| -> Vec<SecondStats> {
        result.seconds.iter().map(|s| s[row].clone()).collect()
    };
    let setget = cfg.commands.is_empty();
    for (i, (name, r)) in result.rows.iter().enumerate() {
        let counts = !setget || name == "Gets";
        let (h, m) = if counts {
            (per_sec(r.hits), per_sec(r.misses))
        } else {
            (0.0, 0.0)
        };
        o.push((
            json_row_name(name),
            row_json(cfg, r, secs, h, m, &series_of(i), open),
        ));
    }
    // memtier's Waits object is there in SET/GET mode even when no WAIT was sent.
    let waits_measured = result.rows.iter().any(|(n, _)| n == WAITS_ROW);
    if setget && !waits_measured {
        o.push((
            "Waits".into(),
            row_json(cfg, &RowStats::default(), secs, 0.0, 0.0, &[], false),
        ));
    }
    let totals = result.totals();
    let totals_series: Vec<SecondStats> = result
        .seconds
        .iter()
        .map(|s| {
            let mut t = SecondStats::default();
            for r in s {
                t.add(r);
            }
            t
        })
        .collect();
    let (hits, misses) = result
        .rows
        .iter()
        .filter(|(n, _)| !setget || n == "Gets")
        .fold((0, 0), |(h, m), (_, r)| (h + r.hits, m + r.misses));
    let mut t = row_json(
        cfg,
        &totals,
        secs,
        per_sec(hits),
        per_sec(misses),
        &totals_series,
        open,
    );
    if let (Json::Obj(items), true) = (&mut t, open) {
        items.push(("Late Requests".into(), int(result.late)));
        items.push(("Dropped Requests".into(), int(result.dropped)));
        items.push(("Rate".into(), num(result.rate.unwrap_or_default(), 2)));
    }
    o.push(("Totals".into(), t));
    if !cfg.hide_histogram {
        for (name, r) in &result.rows {
            let points = distribution_points(&r.latency)
                .into_iter()
                .map(|(ms, pct)| {
                    Json::Obj(vec![
                        ("<=msec".into(), num(ms, 3)),
                        ("percent".into(), num(pct, 3)),
                    ])
                })
                .collect();
            o.push((hdr_row_name(name).to_string(), Json::Arr(points)));
        }
        if setget && !waits_measured {
            o.push(("WAIT".into(), Json::Arr(Vec::new())));
        }
    }
    o.push((EXACT.into(), exact_json(result)));
    Json::Obj(o)
}

/// The key of edgebench's own object in each section: the figures memtier's keys round
/// (counts behind the per-second rates, the duration in ns, the latency histograms in ns
/// rather than µs), so `edgebench report merge` can add hosts' results exactly
/// ([`crate::report::merge`]).
pub const EXACT: &str = "Exact Figures";

/// One second of one row, exactly ([`SecondStats`]; its histogram has 1 significant digit).
fn second_json(s: &SecondStats) -> Json {
    Json::Obj(vec![
        ("Count".into(), int(s.ops)),
        ("Hits".into(), int(s.hits)),
        ("Misses".into(), int(s.misses)),
        ("Bytes RX".into(), int(s.bytes_rx)),
        ("Bytes TX".into(), int(s.bytes_tx)),
        ("Latency Sum ns".into(), int(s.latency_sum_ns)),
        ("Min ns".into(), int(s.min_ns)),
        ("Max ns".into(), int(s.max_ns)),
        (
            "Histogram ns".into(),
            Json::Str(crate::runner::stats::encoded(&s.latency)),
        ),
    ])
}

/// A section's [`EXACT`] object.
fn exact_json(result: &LoadResult) -> Json {
    let rows = result
        .rows
        .iter()
        .enumerate()
        .map(|(i, (name, r))| {
            let mut o = vec![
                ("Name".into(), Json::Str(name.clone())),
                ("Count".into(), int(r.ops)),
                ("Hits".into(), int(r.hits)),
                ("Misses".into(), int(r.misses)),
                ("Errors".into(), int(r.errors)),
                ("MOVED".into(), int(r.moved)),
                ("ASK".into(), int(r.ask)),
                ("Bytes RX".into(), int(r.bytes_rx)),
                ("Bytes TX".into(), int(r.bytes_tx)),
                (
                    "Latency Histogram ns".into(),
                    Json::Str(crate::runner::stats::encoded(&r.latency)),
                ),
            ];
            if !r.corrected.is_empty() {
                o.push((
                    "Corrected Latency Histogram ns".into(),
                    Json::Str(crate::runner::stats::encoded(&r.corrected)),
                ));
            }
            let seconds = result
                .seconds
                .iter()
                .filter_map(|s| s.get(i))
                .map(second_json);
            o.push(("Seconds".into(), Json::Arr(seconds.collect())));
            Json::Obj(o)
        })
        .collect();
    let mut o = vec![
        ("Duration ns".into(), int(result.elapsed.as_nanos() as u64)),
        ("Late Requests".into(), int(result.late)),
        ("Dropped Requests".into(), int(result.dropped)),
    ];
    if let Some(rate) = result.rate {
        o.push(("Rate".into(), num(rate, 6)));
    }
    if let Some(why) = &result.stopped {
        o.push(("Stopped".into(), Json::Str(why.clone())));
    }
    if let Some(f) = &result.failover {
        o.push((
            "Failover".into(),
            Json::Obj(vec![
                ("After ns".into(), int(f.after.as_nanos() as u64)),
                (
                    "Window ns".into(),
                    f.window
                        .map_or(Json::Raw("null".into()), |w| int(w.as_nanos() as u64)),
                ),
                ("Lost Requests".into(), int(f.lost)),
            ]),
        ));
    }
    o.push(("Rows".into(), Json::Arr(rows)));
    Json::Obj(o)
}

/// The whole `--json-out-file` document: `configuration` (the `--show-config` values),
/// `run information`, then one section per table printed, keyed by its title.
pub fn document(cfg: &KvConfig, sections: &[(String, &LoadResult)]) -> Json {
    let configuration = cfg
        .show_config()
        .lines()
        .filter_map(|l| l.split_once(" = "))
        .map(|(k, v)| {
            let value = if !v.is_empty() && v.parse::<f64>().is_ok() {
                Json::Raw(v.to_string())
            } else {
                Json::Str(v.to_string())
            };
            (k.trim().to_string(), value)
        })
        .collect();
    let (key, value) = match cfg.test_time {
        Some(t) => ("Seconds", t.as_secs()),
        None => ("Requests per client", cfg.requests_for(0).unwrap_or(0)),
    };
    let mut o = vec![
        ("configuration".to_string(), Json::Obj(configuration)),
        (
            "run information".to_string(),
            Json::Obj(vec![
                ("Threads".into(), int(u64::from(cfg.threads))),
                ("Connections per thread".into(), int(u64::from(cfg.clients))),
                (key.into(), int(value)),
                ("Format version".into(), int(2)),
            ]),
        ),
    ];
    if let Some((_, Json::Obj(info))) = o.get_mut(1) {
        // edgebench: what `report merge` checks and rebuilds the configuration from.
        if let Some(id) = &cfg.run_id {
            info.push(("Run id".into(), Json::Str(id.clone())));
        }
        if !cfg.command_line.is_empty() {
            // The typed configuration itself (its command line among it), read back as it
            // is: no argv to parse again.
            if let Ok(typed) = serde_json::to_value(cfg) {
                info.push((CONFIG.into(), Json::of(&typed)));
            }
        }
    }
    for (title, r) in sections {
        o.push((title.clone(), run_json(cfg, r)));
    }
    Json::Obj(o)
}

/// HdrHistogram's `outputPercentileDistribution` text (`hdr_percentiles_print`, CLASSIC
/// format, 10 ticks per half distance), of a µs histogram printed in ms.
pub fn percentile_distribution(us: &Histogram<u64>) -> String {
    const SCALE: f64 = 1000.0;
    let mut out = format!(
        "{:>12} {:>12} {:>12} {:>12}\n\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let mut total = 0u64;
    for v in us.iter_quantiles(10) {
        total += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let _ = writeln!(
            out,
            "{:>12.3} {:>12.6} {:>12} {:>12.2}",
            us.highest_equivalent(v.value_iterated_to()) as f64 / SCALE,
            q,
            total,
            1.0 / (1.0 - q)
        );
    }
    let _ = write!(
        out,
        "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]\n\
         #[Max     = {:>12.3}, Total count    = {:>12}]\n\
         #[Buckets = {:>12}, SubBuckets     = {:>12}]\n",
        us.mean() / SCALE,
        us.stdev() / SCALE,
        us.max() as f64 / SCALE,
        us.len(),
        us.buckets(),
        // The sub-bucket count of the histogram's precision, as C's `h->sub_bucket_count`.
        (2.0 * 10f64.powi(i32::from(us.sigfig())))
            .log2()
            .ceil()
            .exp2() as u64
    );
    out
}

/// A HistogramLogProcessor interval log with the one histogram of the run (µs).
pub fn histogram_log(us: &Histogram<u64>, header: &str, result: &LoadResult) -> Vec<u8> {
    let mut out = Vec::new();
    let mut serializer = V2DeflateSerializer::new();
    let Ok(mut log) = IntervalLogWriterBuilder::new()
        .add_comment(header)
        .with_start_time(result.started_at)
        .with_max_value_divisor(1000.0)
        .begin_log_with(&mut out, &mut serializer)
    else {
        return Vec::new();
    };
    let _ = log.write_histogram(us, std::time::Duration::ZERO, result.elapsed, None);
    drop(log);
    out
}

/// The HDR files of run `run` (1-based), as memtier names them: `P_FULL_RUN_1.txt` and
/// `.hgrm` for all requests, `P_SET_command_run_1.txt`, `P_GET_command_run_1.txt` or
/// `P_<COMMAND>_command_run_1.txt` (and `.hgrm`) per row. Rows without requests get no file,
/// as in memtier. Returns (file name, contents).
pub fn hdr_files(prefix: &str, run: u32, result: &LoadResult) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut add = |stem: String, h: &Histogram<u64>, header: &str| {
        if h.is_empty() {
            return;
        }
        let us = to_micros(h);
        files.push((
            format!("{stem}.txt"),
            percentile_distribution(&us).into_bytes(),
        ));
        files.push((format!("{stem}.hgrm"), histogram_log(&us, header, result)));
    };
    add(
        format!("{prefix}_FULL_RUN_{run}"),
        &result.totals().latency,
        "Full Run command HDR latency histogram results",
    );
    for (name, r) in &result.rows {
        let name = hdr_row_name(name);
        add(
            format!("{prefix}_{name}_command_run_{run}"),
            &r.latency,
            &format!("{name} command HDR latency histogram results"),
        );
    }
    files
}

#[cfg(test)]
mod tests {
    use super::pct_key;

    #[test]
    fn percentile_keys_are_cut_to_six_characters_as_memtier_cuts_them() {
        assert_eq!(pct_key(50.0, 3), "p50.00");
        assert_eq!(pct_key(99.9, 3), "p99.90");
        assert_eq!(pct_key(99.999, 3), "p99.99");
        assert_eq!(pct_key(100.0, 3), "p100.0");
        assert_eq!(pct_key(50.0, 2), "p50.00");
        assert_eq!(pct_key(5.0, 3), "p5.000");
    }
}

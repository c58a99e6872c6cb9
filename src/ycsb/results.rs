//! A YCSB run's results as plain data, and edgebench's own files of them:
//!
//! - `results.md`: workloads × targets, each cell the throughput and the p99 latency of
//!   every operation from its intended start (YCSB's `Intended-` series: the same as from its
//!   actual start when unthrottled);
//! - `percentiles.md`: every step, target and operation: count, p50, p95, p99, p99.9, max;
//! - `results.json`: all of it, with each series' HDR histogram (V2, deflated, base64);
//! - `<column>/<step>.txt`: YCSB's own export of each step on each target.

use std::collections::BTreeMap;
use std::io;

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::export;
use super::measure::{Measurements, Op, Status};
use super::run::PhaseResult;
use crate::report::Exporter;
use crate::runner::stats::{encoded, latency_histogram};

/// The `kind` every YCSB `results.json` carries.
pub const KIND: &str = "ycsb";

/// A whole `edgebench ycsb` run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct YcsbResults {
    /// Always [`KIND`].
    pub kind: String,
    /// The command line, as given.
    pub command: String,
    /// When it started (RFC 3339, UTC).
    pub started: String,
    /// `--run-id`, when several load hosts are merged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// How many hosts were merged into it (0: one host's own run).
    #[serde(default)]
    pub hosts: usize,
    /// The steps in the order they ran (`load`, `run workloada`, …).
    pub steps: Vec<String>,
    /// Each target, in column order.
    pub targets: Vec<TargetResults>,
}

/// One target's (column's) steps.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TargetResults {
    /// Its column (`RedisDB_UDS`, `PostgreSQL_TCP_NoSQL`).
    pub column: String,
    /// Where and what it is.
    pub describe: String,
    /// The YCSB binding its records are stored as (`redis`, `jdbc`, …).
    pub binding: String,
    /// Its steps, by step name.
    pub steps: Vec<StepResults>,
    /// Why it could not start or stopped, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One step (a load or a run of one workload) on one target.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct StepResults {
    /// The step's name (`load workloada`, `run workloadc`).
    pub step: String,
    /// Client threads.
    pub threads: u64,
    /// `-target` (0: unthrottled).
    pub target_ops: f64,
    /// YCSB's `RunTime(ms)`.
    pub runtime_ms: u64,
    /// Operations done (not CLEANUP).
    pub operations: u64,
    /// YCSB's `Throughput(ops/sec)`.
    pub throughput: f64,
    /// Why it ended early, if it did (what it measured is kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// Each operation measured.
    pub ops: Vec<OpResults>,
    /// How late operations started after their intended start (throttled runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_lag: Option<Series>,
    /// The share of operations that started within 1 ms of their intended start
    /// (throttled runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_within_1ms: Option<f64>,
    /// YCSB's export of this step (its text exporter's lines).
    pub export: String,
    /// Each load host's own figures, in a merge of several hosts (`report merge`); empty in
    /// one host's run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_host: Vec<HostStep>,
}

/// One load host's own figures of a step, kept beside the hosts' total in a merge.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct HostStep {
    /// The host (its results directory's name, as `report merge` labels it).
    pub host: String,
    /// Its operations.
    pub operations: u64,
    /// Its `RunTime(ms)`.
    pub runtime_ms: u64,
    /// Its `Throughput(ops/sec)`.
    pub throughput: f64,
}

/// One operation of a step.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct OpResults {
    /// YCSB's name (`READ`, `READ-MODIFY-WRITE`).
    pub op: String,
    /// How many ended with each status (`OK`, `NOT_FOUND`, …).
    pub returns: BTreeMap<String, u64>,
    /// The OK ones from their actual start.
    pub latency: Series,
    /// The OK ones from their intended start.
    pub intended: Series,
    /// The failed ones (`<OP>-FAILED`), from their actual start, when there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<Series>,
}

/// A latency series: its summary and its histogram (ns).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Series {
    /// How many.
    pub count: u64,
    /// Mean, ns.
    pub mean_ns: f64,
    /// p50, p95, p99, p99.9 and max, ns.
    pub p50_ns: u64,
    /// p95.
    pub p95_ns: u64,
    /// p99.
    pub p99_ns: u64,
    /// p99.9.
    pub p999_ns: u64,
    /// Max.
    pub max_ns: u64,
    /// HdrHistogram V2, deflated, base64.
    pub histogram: String,
}

impl Series {
    /// The summary and encoding of `h`.
    pub fn of(h: &Histogram<u64>) -> Series {
        Series {
            count: h.len(),
            mean_ns: if h.is_empty() { 0.0 } else { h.mean() },
            p50_ns: h.value_at_quantile(0.50),
            p95_ns: h.value_at_quantile(0.95),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
            histogram: encoded(h),
        }
    }
}

impl StepResults {
    /// The results of `step` from what the phase measured; `export_text` is its YCSB export.
    pub fn of(step: &str, result: &PhaseResult, w: &super::config::Workload) -> StepResults {
        let m: &Measurements = &result.measurements;
        let ops = m
            .measured()
            .map(|(op, om)| OpResults {
                op: op.name().to_string(),
                returns: Status::ALL
                    .iter()
                    .zip(om.returns)
                    .filter(|(_, n)| *n > 0)
                    .map(|(s, n)| (s.name().to_string(), n))
                    .collect(),
                latency: Series::of(&om.ok),
                intended: Series::of(&om.ok_intended),
                failed: (!om.failed.is_empty()).then(|| Series::of(&om.failed)),
            })
            .collect();
        StepResults {
            step: step.to_string(),
            threads: w.threads,
            target_ops: w.target,
            runtime_ms: result.runtime.as_millis() as u64,
            operations: m.operations(),
            throughput: result.throughput(),
            stopped: result.stopped.clone(),
            ops,
            schedule_lag: (w.target > 0.0).then(|| Series::of(&m.lag)),
            schedule_within_1ms: (w.target > 0.0 && !m.lag.is_empty())
                .then(|| m.lag.count_between(0, 1_000_000) as f64 / m.lag.len() as f64),
            export: export::render(&export::rows(result, w), super::config::Exporter::Text),
            per_host: Vec::new(),
        }
    }

    /// The p99 from intended start over every operation but READ-MODIFY-WRITE (its READ and
    /// UPDATE are counted) and CLEANUP, decoded from the histograms; `None` when there is none.
    pub fn p99_ns(&self) -> Option<u64> {
        let mut all = latency_histogram();
        for op in &self.ops {
            if op.op == Op::ReadModifyWrite.name() || op.op == Op::Cleanup.name() {
                continue;
            }
            if let Some(h) = decode(&op.intended.histogram) {
                let _ = all.add(&h);
            }
        }
        (!all.is_empty()).then(|| all.value_at_quantile(0.99))
    }
}

/// A histogram from its base64 V2 encoding.
pub fn decode(text: &str) -> Option<Histogram<u64>> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()
}

/// A latency in ns as µs with the precision it deserves (`12.3`, `1,234`).
pub fn micros(ns: u64) -> String {
    let us = ns as f64 / 1000.0;
    if us < 10.0 {
        format!("{us:.2}")
    } else if us < 100.0 {
        format!("{us:.1}")
    } else {
        group(us.round() as u64)
    }
}

/// A count with thousands separators (`1,234,567`).
pub fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Every file of a results directory ([`Table`], [`Percentiles`], [`Json`]), in the order
/// they are written; `results.md` first.
pub fn exporters() -> [&'static dyn Exporter<YcsbResults>; 3] {
    [&Table, &Percentiles, &Json]
}

/// `results.md`: steps × targets.
pub struct Table;

impl Exporter<YcsbResults> for Table {
    fn file_name(&self) -> &str {
        "results.md"
    }

    fn render(&self, r: &YcsbResults) -> io::Result<Vec<u8>> {
        Ok(table(r).into_bytes())
    }
}

/// The steps × targets table: `ops/s (p99 µs)` in each cell, `—` where a step did not run.
pub fn table(r: &YcsbResults) -> String {
    let mut out = String::from("| step |");
    for t in &r.targets {
        out.push_str(&format!(" {} |", t.column));
    }
    out.push_str("\n|-|");
    for _ in &r.targets {
        out.push_str("-:|");
    }
    out.push('\n');
    for step in &r.steps {
        out.push_str(&format!("| {step} |"));
        for t in &r.targets {
            let cell = match t.steps.iter().find(|s| &s.step == step) {
                Some(s) => {
                    let p99 = s.p99_ns().map(micros).unwrap_or_else(|| "—".into());
                    let mark = if s.stopped.is_some() { "*" } else { "" };
                    format!(
                        "{} ops/s ({p99} µs){mark}",
                        group(s.throughput.round() as u64)
                    )
                }
                None => "—".to_string(),
            };
            out.push_str(&format!(" {cell} |"));
        }
        out.push('\n');
    }
    out.push_str(
        "\nEach cell: throughput, and the 99th percentile latency of every operation from its \
         intended start (µs).\n",
    );
    let notes: Vec<String> = r
        .targets
        .iter()
        .flat_map(|t| {
            let stopped = t.steps.iter().filter_map(move |s| {
                s.stopped
                    .as_ref()
                    .map(|why| format!("* {} {}: stopped early: {why}", t.column, s.step))
            });
            t.error
                .iter()
                .map(move |e| format!("{}: {e}", t.column))
                .chain(stopped)
        })
        .collect();
    for n in notes {
        out.push_str(&format!("\n{n}"));
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

/// `percentiles.md`: each step, target and operation.
pub struct Percentiles;

impl Exporter<YcsbResults> for Percentiles {
    fn file_name(&self) -> &str {
        "percentiles.md"
    }

    fn render(&self, r: &YcsbResults) -> io::Result<Vec<u8>> {
        let mut out = String::from(
            "| step | target | operation | count | p50 µs | p95 µs | p99 µs | p99.9 µs | max µs | \
             p99 from intended start µs |\n|-|-|-|-:|-:|-:|-:|-:|-:|-:|\n",
        );
        for step in &r.steps {
            for t in &r.targets {
                let Some(s) = t.steps.iter().find(|s| &s.step == step) else {
                    continue;
                };
                for op in &s.ops {
                    let l = &op.latency;
                    out.push_str(&format!(
                        "| {step} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                        t.column,
                        op.op,
                        group(op.returns.values().sum()),
                        micros(l.p50_ns),
                        micros(l.p95_ns),
                        micros(l.p99_ns),
                        micros(l.p999_ns),
                        micros(l.max_ns),
                        micros(op.intended.p99_ns),
                    ));
                }
            }
        }
        let throttled: Vec<(&str, &TargetResults, &StepResults)> = r
            .steps
            .iter()
            .flat_map(|step| {
                r.targets.iter().filter_map(move |t| {
                    let s = t.steps.iter().find(|s| &s.step == step)?;
                    s.schedule_lag.as_ref().map(|_| (step.as_str(), t, s))
                })
            })
            .collect();
        if !throttled.is_empty() {
            out.push_str(
                "\nHow late operations started after their intended start (-target's schedule):\n\n\
                 | step | target | -target ops/s | operations | p50 µs | p99 µs | max µs | within 1 ms |\n\
                 |-|-|-:|-:|-:|-:|-:|-:|\n",
            );
            for (step, t, s) in throttled {
                let lag = s.schedule_lag.as_ref().expect("filtered on it");
                out.push_str(&format!(
                    "| {step} | {} | {} | {} | {} | {} | {} | {:.2}% |\n",
                    t.column,
                    group(s.target_ops.round() as u64),
                    group(lag.count),
                    micros(lag.p50_ns),
                    micros(lag.p99_ns),
                    micros(lag.max_ns),
                    s.schedule_within_1ms.unwrap_or(0.0) * 100.0,
                ));
            }
        }
        Ok(out.into_bytes())
    }
}

/// `results.json`: the whole model.
pub struct Json;

impl Exporter<YcsbResults> for Json {
    fn file_name(&self) -> &str {
        "results.json"
    }

    fn render(&self, r: &YcsbResults) -> io::Result<Vec<u8>> {
        let mut bytes = serde_json::to_vec_pretty(r).map_err(io::Error::other)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

//! Fleet results: the summary table across targets (markdown), the per-second series (CSV) and
//! everything with the full HDR histograms (JSON), from [`FleetReport`]s.

use serde::{Deserialize, Serialize};

use crate::fleet::workload::{FleetReport, FleetSpec, WriterReport};
use crate::runner::stats::encoded;

/// One target's row: its name, where it was, and what it measured or why it did not run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetTarget {
    /// The column name.
    pub name: String,
    /// Where the target was.
    pub endpoint: String,
    /// Why it did not run, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// What it measured (with `--find-max`: the fastest run that kept up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// What `--find-max` found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub find_max: Option<FindMax>,
}

/// A `--find-max` search's answer and every run it made.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FindMax {
    /// The highest rate that kept up (events/s), if any did.
    pub max_rate: Option<f64>,
    /// The lowest rate that did not.
    pub first_failing: Option<f64>,
    /// Every run: rate, whether it kept up, its verdict.
    pub probes: Vec<ProbeRow>,
}

/// One run of a search.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ProbeRow {
    /// Events/s offered.
    pub rate: f64,
    /// Whether it kept up.
    pub kept_up: bool,
    /// The verdict.
    pub verdict: String,
}

impl FindMax {
    /// From a search.
    pub fn of(found: &crate::fleet::workload::find_max::Found) -> Self {
        FindMax {
            max_rate: found.max_rate,
            first_failing: found.first_failing,
            probes: found
                .probes
                .iter()
                .map(|p| ProbeRow {
                    rate: p.rate,
                    kept_up: p.kept_up,
                    verdict: p.verdict.clone(),
                })
                .collect(),
        }
    }
}

/// Latency percentiles, ns.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Percentiles {
    /// 50th percentile.
    pub p50_ns: u64,
    /// 90th.
    pub p90_ns: u64,
    /// 99th.
    pub p99_ns: u64,
    /// 99.9th.
    pub p999_ns: u64,
    /// The largest.
    pub max_ns: u64,
    /// The whole histogram: HdrHistogram V2 compressed, base64.
    pub histogram: String,
}

impl Percentiles {
    /// The percentiles and encoded histogram of `h`.
    pub fn of(h: &hdrhistogram::Histogram<u64>) -> Self {
        Percentiles {
            p50_ns: h.value_at_quantile(0.50),
            p90_ns: h.value_at_quantile(0.90),
            p99_ns: h.value_at_quantile(0.99),
            p999_ns: h.value_at_quantile(0.999),
            max_ns: h.max(),
            histogram: encoded(h),
        }
    }
}

/// One measured second.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Second {
    /// Seconds after the warmup, from 0.
    pub second: usize,
    /// Events due in that second and answered.
    pub events: u64,
    /// Their corrected latency's median, ns.
    pub p50_ns: u64,
    /// Their corrected latency's 99th percentile, ns.
    pub p99_ns: u64,
}

/// What one target measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// Events the fleet offered (due in the run, warmup included).
    pub offered: u64,
    /// The rate it offered them at.
    pub offered_per_sec: f64,
    /// Events answered as written (warmup included).
    pub sent: u64,
    /// Of those, the ones after the warmup, which the latencies cover.
    pub measured: u64,
    /// Events the store holds at the end.
    pub stored: u64,
    /// Answered as written, not stored; absent with retention on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<u64>,
    /// The store's size at the end, bytes, when it reports one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub store_bytes: Option<u64>,
    /// The store's size at the end of each second of the run (warmup included), bytes.
    pub store_bytes_per_second: Vec<Option<u64>>,
    /// The purges retention ran, when it was on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub purges: Option<Purges>,
    /// Sent more than `late_after` after their intended time.
    pub late: u64,
    /// Due before the end, never sent.
    pub unsent: u64,
    /// Writes the store refused.
    pub failed: u64,
    /// The first refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// Events answered per second of the run.
    pub achieved_per_sec: f64,
    /// CPU the writer threads spent per event answered, µs: building the event, the client
    /// side of the call (for a store in process, the store's own work too) and pacing.
    pub writer_cpu_us_per_event: f64,
    /// Wall time per event answered the writers spent on their own work, µs: building events
    /// and measuring, not waiting for an event's time, not in the store call. One writer can
    /// offer at most `1 / (this + the store call)` events/s; with a store that answered at
    /// once, `1 / this`.
    pub generator_us_per_event: f64,
    /// From each event's intended send time to its answer.
    pub corrected: Percentiles,
    /// From each event's actual send to its answer.
    pub uncorrected: Percentiles,
    /// Per second after the warmup.
    pub per_second: Vec<Second>,
    /// What the readers saw, when there were readers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reads: Option<Reads>,
    /// "kept up", or "fell behind: why".
    pub verdict: String,
    /// With `--via bus`: what the bus did with the events.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub bus: Option<BusSummary>,
}

/// What a bus did with a fleet's events (`--via bus`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BusSummary {
    /// Events the writers published.
    pub published: u64,
    /// Messages the core-data subscriber took off the bus.
    pub received: u64,
    /// Events the store committed.
    pub persisted: u64,
    /// Messages that did not decode or validate.
    pub rejected: u64,
    /// Events the store refused.
    pub failed: u64,
    /// Published and never persisted after the drain.
    pub lost: u64,
    /// Why the first message was dropped.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub first_reason: Option<String>,
    /// How long the drain waited after the writers stopped, s.
    pub drain_s: f64,
    /// From each measured event's intended publish time (its origin) to its commit in the
    /// store; absent when nothing measured was committed.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub commit: Option<Percentiles>,
    /// Where the measured events' time went; absent when the subscriber is someone's
    /// core-data service.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub stages: Option<BusStages>,
    /// How core-data's subscriber handled events (`--subscriber`); absent for someone's
    /// core-data service.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub subscriber: Option<String>,
    /// Why the subscription ended before the run, if it did (the broker cut it off).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub cut_off: Option<String>,
    /// With someone's core-data service as the subscriber: how `persisted` was counted;
    /// `received`, `rejected`, `failed`, the commit latency and the stages are then unknown
    /// (0 and absent).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub counted_by: Option<String>,
    /// At the end of each second of the run (warmup included), and once more after the
    /// drain: published so far, and persisted so far (received, with the subscriber at `--persist false`; absent where it
    /// could not be counted).
    #[serde(default)]
    pub per_second: Vec<BusSecond>,
    /// What the broker says it dropped during the run (Mosquitto's `$SYS`), where it says.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub broker_dropped: Option<u64>,
    /// Subscribers the broker closed for falling behind (nats-server), where it says.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub broker_disconnected: Option<u64>,
    /// The broker's own account in one line, or why there is none.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub broker: Option<String>,
}

/// A bus's running totals at the end of one second.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BusSecond {
    /// Events published so far.
    pub published: u64,
    /// Events persisted so far.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub persisted: Option<u64>,
}

impl BusSecond {
    /// Published and not yet persisted.
    pub fn backlog(&self) -> Option<u64> {
        self.persisted.map(|p| self.published.saturating_sub(p))
    }
}

/// Where a bus's measured events spent their time: each stage's percentiles, one value per
/// event ([`crate::service::bus::Stages`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BusStages {
    /// From the intended publish time to the subscriber taking it off the bus: the
    /// publisher's lateness, the broker's hop, the wait in the subscriber's socket or queue.
    pub reach: Percentiles,
    /// Decoding the envelope and the event.
    pub decode: Percentiles,
    /// The request's rules and the topic's names.
    pub validate: Percentiles,
    /// From validated to committed (with `--subscriber batch`, the batch's wait too); absent
    /// with nothing persisted.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub store: Option<Percentiles>,
}

impl BusStages {
    fn of(s: &crate::service::bus::Stages) -> Option<BusStages> {
        if s.decode.is_empty() {
            return None;
        }
        Some(BusStages {
            reach: Percentiles::of(&s.reach),
            decode: Percentiles::of(&s.decode),
            validate: Percentiles::of(&s.validate),
            store: (!s.store.is_empty()).then(|| Percentiles::of(&s.store)),
        })
    }
}

impl BusSummary {
    /// The summary of a bus report.
    pub fn of(b: &crate::target::BusReport) -> Self {
        BusSummary {
            published: b.published,
            received: b.received,
            persisted: b.persisted,
            rejected: b.rejected,
            failed: b.failed,
            lost: b.lost,
            first_reason: b.first_reason.clone(),
            drain_s: b.drained.as_secs_f64(),
            commit: b
                .commit
                .as_ref()
                .filter(|h| !h.is_empty())
                .map(Percentiles::of),
            stages: b.stages.as_ref().and_then(BusStages::of),
            broker_dropped: b.broker.as_ref().and_then(|c| c.dropped),
            broker_disconnected: b.broker.as_ref().and_then(|c| c.disconnected),
            broker: b.broker.as_ref().map(|c| c.line.clone()),
            subscriber: b.subscriber.clone(),
            cut_off: b.cut_off.clone(),
            counted_by: b.counted_by.clone(),
            per_second: b
                .per_second
                .iter()
                .map(|&(published, persisted)| BusSecond {
                    published,
                    persisted,
                })
                .collect(),
        }
    }
}

impl Summary {
    /// The summary of one run.
    pub fn of(spec: &FleetSpec, r: &FleetReport) -> Self {
        let w = &r.writes;
        let elapsed = r.elapsed.as_secs_f64();
        Summary {
            offered: r.offered,
            offered_per_sec: spec.events_per_second,
            sent: w.sent,
            measured: w.measured,
            stored: r.stored,
            missing: r.missing,
            store_bytes: r.final_size,
            store_bytes_per_second: r.sizes.clone(),
            purges: r.purges.as_ref().map(|p| Purges {
                purges: p.purges,
                failed: p.failed,
                first_error: p.first_error.clone(),
                latency: Percentiles::of(&p.latency),
            }),
            late: w.late,
            unsent: w.unsent,
            failed: w.failed,
            first_error: w.first_error.clone(),
            achieved_per_sec: if elapsed > 0.0 {
                w.sent as f64 / elapsed
            } else {
                0.0
            },
            writer_cpu_us_per_event: if w.sent > 0 {
                w.cpu_ns as f64 / w.sent as f64 / 1e3
            } else {
                0.0
            },
            generator_us_per_event: if w.sent > 0 {
                w.generator_ns as f64 / w.sent as f64 / 1e3
            } else {
                0.0
            },
            corrected: Percentiles::of(&w.corrected),
            uncorrected: Percentiles::of(&w.uncorrected),
            per_second: seconds(w),
            reads: r.reads.as_ref().map(|reads| Reads {
                reads: reads.sent,
                measured: reads.measured,
                reads_per_sec: if elapsed > 0.0 {
                    reads.sent as f64 / elapsed
                } else {
                    0.0
                },
                failed: reads.failed,
                first_error: reads.first_error.clone(),
                unsent: reads.unsent,
                latency: Percentiles::of(&reads.corrected),
                per_second: seconds(reads),
            }),
            verdict: r.verdict.to_string(),
            bus: r.bus.as_ref().map(BusSummary::of),
        }
    }
}

/// The purger's figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Purges {
    /// Purges run.
    pub purges: u64,
    /// Purges that failed.
    pub failed: u64,
    /// The first failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// How long a purge took.
    pub latency: Percentiles,
}

/// The readers' figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reads {
    /// Reads answered (warmup included).
    pub reads: u64,
    /// Of those, the ones after the warmup, which the latencies cover.
    pub measured: u64,
    /// Reads per second of the run.
    pub reads_per_sec: f64,
    /// Reads the store refused.
    pub failed: u64,
    /// The first refusal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<String>,
    /// Open loop: due before the end, never sent.
    pub unsent: u64,
    /// Read latency: from the intended time (open loop) or the call (closed loop).
    pub latency: Percentiles,
    /// Per second after the warmup.
    pub per_second: Vec<Second>,
}

fn seconds(w: &WriterReport) -> Vec<Second> {
    w.per_second
        .iter()
        .enumerate()
        .map(|(second, h)| Second {
            second,
            events: h.len(),
            p50_ns: h.value_at_quantile(0.5),
            p99_ns: h.value_at_quantile(0.99),
        })
        .collect()
}

/// The whole run as `fleet.json` keeps it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetRun {
    /// The command line.
    pub command: String,
    /// When it started, UTC, RFC 3339.
    pub started: String,
    /// The fleet.
    pub fleet: FleetSettings,
    /// One entry per target, in run order.
    pub targets: Vec<FleetTarget>,
    /// `--run-id`: the id the load hosts of one run share (`edgebench report merge` checks it).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub run_id: Option<String>,
    /// Set by `edgebench report merge`: the load hosts merged, by label (each target's total
    /// is followed by one `NAME@HOST` per host).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub hosts: Vec<String>,
}

/// The fleet's settings, as `fleet.json` records them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FleetSettings {
    /// Devices.
    pub devices: u64,
    /// Events per second, all devices.
    pub events_per_second: f64,
    /// Readings per event.
    pub readings_per_event: u64,
    /// The readings' value type.
    pub value_type: String,
    /// Writer threads.
    pub writers: u64,
    /// Warmup, s.
    pub warmup_s: f64,
    /// Measured part, s.
    pub measured_s: f64,
    /// The SLO on p99 corrected write latency, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slo_ms: Option<f64>,
}

impl FleetSettings {
    /// The settings of `spec`.
    pub fn of(spec: &FleetSpec) -> Self {
        FleetSettings {
            devices: spec.devices,
            events_per_second: spec.events_per_second,
            readings_per_event: spec.readings_per_event,
            value_type: spec.value_type.clone(),
            writers: spec.writers,
            warmup_s: spec.warmup.as_secs_f64(),
            measured_s: spec.duration.saturating_sub(spec.warmup).as_secs_f64(),
            slo_ms: spec.slo.map(|d| d.as_secs_f64() * 1e3),
        }
    }
}

fn ms(ns: u64) -> String {
    format!("{:.3}", ns as f64 / 1e6)
}

/// The markdown table across targets.
pub fn markdown(run: &FleetRun) -> String {
    let mut out = table(run);
    out.push_str(&bus_markdown(run));
    out.push_str(&find_max_markdown(run));
    out
}

/// The `--via bus` table: what each bus did with the events, and the time from each event's
/// intended publish to its commit; empty without a bus.
pub fn bus_markdown(run: &FleetRun) -> String {
    let rows: Vec<_> = run
        .targets
        .iter()
        .filter_map(|t| t.summary.as_ref()?.bus.as_ref().map(|b| (t, b)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n| Target | published | received | persisted | rejected | failed | lost | drain s | \
         commit p50 ms | p99 ms | p99.9 ms | max ms | broker dropped | first reason |\n\
         |-|-|-|-|-|-|-|-|-|-|-|-|-|-|\n",
    );
    for (t, b) in rows {
        let commit = match &b.commit {
            Some(c) => format!(
                "{} | {} | {} | {}",
                ms(c.p50_ns),
                ms(c.p99_ns),
                ms(c.p999_ns),
                ms(c.max_ns)
            ),
            None => "— | — | — | —".to_string(),
        };
        let broker = match (b.broker_dropped, b.broker_disconnected) {
            (None, None) => "—".to_string(),
            (dropped, disconnected) => [
                dropped.map(|n| format!("{n} messages")),
                disconnected.map(|n| format!("{n} clients closed")),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(", "),
        };
        // Someone's core-data service is counted only by what it stored.
        let known = |n: u64| match b.counted_by {
            Some(_) => "—".to_string(),
            None => n.to_string(),
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {:.2} | {commit} | {broker} | {} |\n",
            t.name,
            b.published,
            known(b.received),
            b.persisted,
            known(b.rejected),
            known(b.failed),
            b.lost,
            b.drain_s,
            b.first_reason
                .as_deref()
                .or(b.cut_off.as_deref())
                .unwrap_or("—")
        ));
    }
    out.push_str(&bus_stages_markdown(run));
    out
}

/// Where each bus column's events spent their time, p50 and p99 of each stage, ms.
fn bus_stages_markdown(run: &FleetRun) -> String {
    let rows: Vec<_> = run
        .targets
        .iter()
        .filter_map(|t| {
            let b = t.summary.as_ref()?.bus.as_ref()?;
            Some((t, b, b.stages.as_ref()?))
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\nWhere an event's time goes (p50 / p99, ms): from its intended publish time to the \
         subscriber taking it off the bus (publisher, broker, socket), decoding, validating, \
         and from validated to committed.\n\n\
         | Target | subscriber | to the subscriber | decode | validate | store | commit (all) |\n\
         |-|-|-|-|-|-|-|\n",
    );
    let both = |p: &Percentiles| format!("{} / {}", ms(p.p50_ns), ms(p.p99_ns));
    for (t, b, s) in rows {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            t.name,
            b.subscriber.as_deref().unwrap_or("—"),
            both(&s.reach),
            both(&s.decode),
            both(&s.validate),
            s.store.as_ref().map_or("—".to_string(), both),
            b.commit.as_ref().map_or("—".to_string(), both),
        ));
    }
    out
}

/// Columns of the main table.
const COLUMNS: usize = 23;

fn table(run: &FleetRun) -> String {
    let mut out = String::from(
        "| Target | offered ev/s | achieved ev/s | sent | stored | missing | late | unsent | \
         failed | write p50 ms | p99 ms | p99.9 ms | max ms | p99 uncorrected ms | reads/s | \
         read p50 ms | read p99 ms | purges | purge p99 ms | store MB | writer CPU µs/event | \
         generator µs/event | verdict |\n\
         |-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|-|\n",
    );
    for t in &run.targets {
        match (&t.summary, &t.error) {
            (Some(s), _) => out.push_str(&format!(
                "| {} | {:.0} | {:.0} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {:.2} | {} |\n",
                t.name,
                s.offered_per_sec,
                s.achieved_per_sec,
                s.sent,
                s.stored,
                s.missing.map_or("—".to_string(), |m| m.to_string()),
                s.late,
                s.unsent,
                s.failed,
                ms(s.corrected.p50_ns),
                ms(s.corrected.p99_ns),
                ms(s.corrected.p999_ns),
                ms(s.corrected.max_ns),
                ms(s.uncorrected.p99_ns),
                reads_cells(s.reads.as_ref()),
                match &s.purges {
                    Some(p) if p.purges > 0 => format!("{} | {}", p.purges, ms(p.latency.p99_ns)),
                    Some(_) => "0 | —".to_string(),
                    None => "— | —".to_string(),
                },
                s.store_bytes
                    .map_or("—".to_string(), |b| format!("{:.1}", b as f64 / 1e6)),
                s.writer_cpu_us_per_event,
                s.generator_us_per_event,
                s.verdict
            )),
            (None, error) => {
                let why = match (error, &t.find_max) {
                    (Some(e), _) => format!("did not run: {e}"),
                    (None, Some(_)) => "no rate kept up".to_string(),
                    (None, None) => "did not run: interrupted".to_string(),
                };
                // Every column but the first and the last (the verdict) is empty.
                let empty = " |".repeat(COLUMNS - 2);
                out.push_str(&format!("| {} |{empty} {why} |\n", t.name));
            }
        }
    }
    out
}

/// The `--find-max` table: each target's highest sustainable rate; empty without searches.
pub fn find_max_markdown(run: &FleetRun) -> String {
    let rows: Vec<_> = run
        .targets
        .iter()
        .filter_map(|t| t.find_max.as_ref().map(|f| (t, f)))
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let slo = run.fleet.slo_ms.unwrap_or(0.0);
    let mut out = format!(
        "\n| Target | max events/s kept up (p99 write < {slo} ms) | first failing events/s | runs |\n\
         |-|-|-|-|\n"
    );
    for (t, f) in rows {
        let rate = |r: Option<f64>| r.map_or("—".to_string(), |r| format!("{r:.0}"));
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            t.name,
            rate(f.max_rate),
            rate(f.first_failing),
            f.probes.len()
        ));
    }
    out
}

/// `reads/s | read p50 | read p99`, or `— | — | —` without readers.
fn reads_cells(reads: Option<&Reads>) -> String {
    match reads {
        Some(r) => format!(
            "{:.0} | {} | {}",
            r.reads_per_sec,
            ms(r.latency.p50_ns),
            ms(r.latency.p99_ns)
        ),
        None => "— | — | —".to_string(),
    }
}

/// `target,kind,second,events,p50_ms,p99_ms`: a row per measured second of each target's
/// writes (`kind` = `write`: events by intended send time) and reads (`read`).
pub fn per_second_csv(run: &FleetRun) -> String {
    let mut out = String::from("target,kind,second,events,p50_ms,p99_ms\n");
    for t in &run.targets {
        let Some(summary) = &t.summary else { continue };
        let reads = summary.reads.iter().flat_map(|r| &r.per_second);
        let rows = summary
            .per_second
            .iter()
            .map(|s| ("write", s))
            .chain(reads.map(|s| ("read", s)));
        for (kind, s) in rows {
            out.push_str(&format!(
                "{},{kind},{},{},{},{}\n",
                t.name,
                s.second,
                s.events,
                ms(s.p50_ns),
                ms(s.p99_ns)
            ));
        }
    }
    out
}

/// `target,second,bytes`: the store's size at the end of each second of each target's run
/// (warmup included; empty `bytes` when the store did not say).
pub fn store_size_csv(run: &FleetRun) -> String {
    let mut out = String::from("target,second,bytes\n");
    for t in &run.targets {
        let Some(summary) = &t.summary else { continue };
        for (i, bytes) in summary.store_bytes_per_second.iter().enumerate() {
            let bytes = bytes.map_or(String::new(), |b| b.to_string());
            out.push_str(&format!("{},{},{bytes}\n", t.name, i + 1));
        }
    }
    out
}

//! Merging `edgebench fleet` hosts ([`FleetRun`], `fleet.json`). For each target the merged
//! run holds the total, under the target's own name, followed by each host's row renamed
//! `NAME@HOST`, so fleet.md, the CSVs and report.html show the hosts beside their total.
//!
//! The total of a target: events offered, sent, measured, late, unsent and failed add; the
//! offered and achieved rates add (the hosts ran concurrently); CPU and generator time per
//! event are averages weighted by events sent; every latency (corrected, uncorrected, reads,
//! purges) is read from the hosts' histograms added together. The store is shared by the
//! hosts, so what it holds is one figure, not a sum: the largest count any host saw at its
//! end (the last host to finish saw every host's events), and the events missing are all
//! events sent less that count. Each host's own `missing` counted the other hosts' events as
//! its own and cannot see a loss; the total's can. The per-second series of the total adds
//! the events of each second; its percentiles are not kept per second by the hosts, so the
//! total's per-second p50 and p99 are 0 (each host's own series keeps them).
//! `--find-max` searches are not additive and are refused.

use std::path::{Path, PathBuf};

use crate::fleet::results::{
    BusSecond, BusStages, BusSummary, FleetRun, FleetTarget, Percentiles, Reads, Second, Summary,
};
use crate::report::merge::{decode, sum_histograms, MergeError};

/// The hosts (label, path, run), at least one, merged.
pub fn merge(hosts: Vec<(String, PathBuf, FleetRun)>) -> Result<FleetRun, MergeError> {
    let (_, first_path, first) = &hosts[0];
    let mut out = first.clone();
    out.hosts = hosts.iter().map(|(l, _, _)| l.clone()).collect();
    out.fleet.devices = hosts.iter().map(|(_, _, r)| r.fleet.devices).sum();
    out.fleet.events_per_second = hosts
        .iter()
        .map(|(_, _, r)| r.fleet.events_per_second)
        .sum();
    out.fleet.writers = hosts.iter().map(|(_, _, r)| r.fleet.writers).sum();
    out.targets = Vec::new();
    for target in &first.targets {
        let mut of_hosts: Vec<(&str, &Path, &FleetTarget)> = Vec::new();
        for (label, path, r) in &hosts {
            let t = r
                .targets
                .iter()
                .find(|t| t.name == target.name)
                .ok_or_else(|| {
                    MergeError::shape(
                        path,
                        format!(
                            "has no target {} but {} has: give every host the same --target and \
                             --via",
                            target.name,
                            first_path.display()
                        ),
                    )
                })?;
            if t.find_max.is_some() {
                return Err(MergeError::shape(
                    path,
                    "is a --find-max search: searches do not add up; merge fixed-rate runs",
                ));
            }
            of_hosts.push((label, path, t));
        }
        out.targets.push(total_target(&of_hosts)?);
        for (label, _, t) in &of_hosts {
            let mut own = (*t).clone();
            own.name = format!("{}@{label}", t.name);
            out.targets.push(own);
        }
    }
    Ok(out)
}

/// One target's hosts added up; a host that could not run it leaves the total without a
/// summary and with that host's error.
fn total_target(hosts: &[(&str, &Path, &FleetTarget)]) -> Result<FleetTarget, MergeError> {
    let first = hosts[0].2;
    let error = hosts
        .iter()
        .find_map(|(label, _, t)| t.error.as_ref().map(|e| format!("host {label}: {e}")));
    let summaries: Option<Vec<(&str, &Path, &Summary)>> = hosts
        .iter()
        .map(|(l, p, t)| t.summary.as_ref().map(|s| (*l, *p, s)))
        .collect();
    let summary = match (&error, summaries) {
        (None, Some(s)) => Some(total_summary(&s)?),
        _ => None,
    };
    Ok(FleetTarget {
        name: first.name.clone(),
        endpoint: first.endpoint.clone(),
        error,
        summary,
        find_max: None,
    })
}

/// The hosts' summaries added up (see the module doc).
fn total_summary(hosts: &[(&str, &Path, &Summary)]) -> Result<Summary, MergeError> {
    let sum = |f: &dyn Fn(&Summary) -> u64| hosts.iter().map(|(_, _, s)| f(s)).sum::<u64>();
    let sent = sum(&|s| s.sent);
    let per_event = |f: &dyn Fn(&Summary) -> f64| {
        let total: f64 = hosts.iter().map(|(_, _, s)| f(s) * s.sent as f64).sum();
        if sent > 0 {
            total / sent as f64
        } else {
            0.0
        }
    };
    let stored = hosts.iter().map(|(_, _, s)| s.stored).max().unwrap_or(0);
    let retention = hosts.iter().any(|(_, _, s)| s.missing.is_none());
    let missing = (!retention).then(|| sent.saturating_sub(stored));
    let verdict = match hosts
        .iter()
        .find(|(_, _, s)| s.verdict != "kept up")
        .map(|(label, _, s)| format!("host {label}: {}", s.verdict))
    {
        Some(why) => format!("fell behind: {why}"),
        None if missing.is_some_and(|m| m > 0) => format!(
            "fell behind: {} of the hosts' events are not in the store",
            missing.unwrap_or(0)
        ),
        None => "kept up".to_string(),
    };
    let reads = match hosts
        .iter()
        .map(|(_, p, s)| s.reads.as_ref().map(|r| (*p, r)))
        .collect::<Option<Vec<_>>>()
    {
        Some(reads) if !reads.is_empty() => Some(Reads {
            reads: reads.iter().map(|(_, r)| r.reads).sum(),
            measured: reads.iter().map(|(_, r)| r.measured).sum(),
            reads_per_sec: reads.iter().map(|(_, r)| r.reads_per_sec).sum(),
            failed: reads.iter().map(|(_, r)| r.failed).sum(),
            first_error: reads.iter().find_map(|(_, r)| r.first_error.clone()),
            unsent: reads.iter().map(|(_, r)| r.unsent).sum(),
            latency: percentiles(
                &reads
                    .iter()
                    .map(|(p, r)| (*p, &r.latency))
                    .collect::<Vec<_>>(),
            )?,
            per_second: seconds(reads.iter().map(|(_, r)| r.per_second.as_slice())),
        }),
        _ => None,
    };
    let purges = match hosts
        .iter()
        .map(|(_, p, s)| s.purges.as_ref().map(|x| (*p, x)))
        .collect::<Option<Vec<_>>>()
    {
        Some(purges) if !purges.is_empty() => Some(crate::fleet::results::Purges {
            purges: purges.iter().map(|(_, x)| x.purges).sum(),
            failed: purges.iter().map(|(_, x)| x.failed).sum(),
            first_error: purges.iter().find_map(|(_, x)| x.first_error.clone()),
            latency: percentiles(
                &purges
                    .iter()
                    .map(|(p, x)| (*p, &x.latency))
                    .collect::<Vec<_>>(),
            )?,
        }),
        _ => None,
    };
    Ok(Summary {
        offered: sum(&|s| s.offered),
        offered_per_sec: hosts.iter().map(|(_, _, s)| s.offered_per_sec).sum(),
        sent,
        measured: sum(&|s| s.measured),
        stored,
        missing,
        store_bytes: hosts.iter().filter_map(|(_, _, s)| s.store_bytes).max(),
        store_bytes_per_second: Vec::new(),
        purges,
        late: sum(&|s| s.late),
        unsent: sum(&|s| s.unsent),
        failed: sum(&|s| s.failed),
        first_error: hosts.iter().find_map(|(_, _, s)| s.first_error.clone()),
        achieved_per_sec: hosts.iter().map(|(_, _, s)| s.achieved_per_sec).sum(),
        writer_cpu_us_per_event: per_event(&|s| s.writer_cpu_us_per_event),
        generator_us_per_event: per_event(&|s| s.generator_us_per_event),
        corrected: percentiles(
            &hosts
                .iter()
                .map(|(_, p, s)| (*p, &s.corrected))
                .collect::<Vec<_>>(),
        )?,
        uncorrected: percentiles(
            &hosts
                .iter()
                .map(|(_, p, s)| (*p, &s.uncorrected))
                .collect::<Vec<_>>(),
        )?,
        per_second: seconds(hosts.iter().map(|(_, _, s)| s.per_second.as_slice())),
        reads,
        verdict,
        bus: bus(hosts)?,
    })
}

/// The hosts' bus figures added, their commit histograms merged; `None` unless every host
/// went through a bus.
fn bus(hosts: &[(&str, &Path, &Summary)]) -> Result<Option<BusSummary>, MergeError> {
    let Some(buses) = hosts
        .iter()
        .map(|(_, p, s)| s.bus.as_ref().map(|b| (*p, b)))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let add = |f: &dyn Fn(&BusSummary) -> u64| buses.iter().map(|(_, b)| f(b)).sum::<u64>();
    let commits: Vec<_> = buses
        .iter()
        .filter_map(|(p, b)| b.commit.as_ref().map(|c| (*p, c)))
        .collect();
    Ok(Some(BusSummary {
        published: add(&|b| b.published),
        received: add(&|b| b.received),
        persisted: add(&|b| b.persisted),
        rejected: add(&|b| b.rejected),
        failed: add(&|b| b.failed),
        lost: add(&|b| b.lost),
        first_reason: buses.iter().find_map(|(_, b)| b.first_reason.clone()),
        drain_s: buses.iter().map(|(_, b)| b.drain_s).fold(0.0, f64::max),
        commit: match commits.is_empty() {
            true => None,
            false => Some(percentiles(&commits)?),
        },
        stages: bus_stages(&buses)?,
        subscriber: buses.iter().find_map(|(_, b)| b.subscriber.clone()),
        cut_off: buses.iter().find_map(|(_, b)| b.cut_off.clone()),
        counted_by: buses.iter().find_map(|(_, b)| b.counted_by.clone()),
        per_second: bus_seconds(&buses),
        // Each host's broker may be the same broker: its counts are not added.
        broker_dropped: None,
        broker_disconnected: None,
        broker: buses
            .iter()
            .filter_map(|(_, b)| b.broker.clone())
            .reduce(|a, b| format!("{a}; {b}")),
    }))
}

/// The hosts' stage histograms merged, stage by stage; `None` unless every host has them.
fn bus_stages(buses: &[(&Path, &BusSummary)]) -> Result<Option<BusStages>, MergeError> {
    let Some(stages) = buses
        .iter()
        .map(|(p, b)| b.stages.as_ref().map(|s| (*p, s)))
        .collect::<Option<Vec<_>>>()
    else {
        return Ok(None);
    };
    let stage = |f: &dyn Fn(&BusStages) -> &Percentiles| {
        percentiles(&stages.iter().map(|(p, s)| (*p, f(s))).collect::<Vec<_>>())
    };
    let stored: Vec<_> = stages
        .iter()
        .filter_map(|(p, s)| s.store.as_ref().map(|st| (*p, st)))
        .collect();
    Ok(Some(BusStages {
        reach: stage(&|s| &s.reach)?,
        decode: stage(&|s| &s.decode)?,
        validate: stage(&|s| &s.validate)?,
        store: match stored.is_empty() {
            true => None,
            false => Some(percentiles(&stored)?),
        },
    }))
}

/// The hosts' running totals added second by second, over the seconds every host has.
fn bus_seconds(buses: &[(&Path, &BusSummary)]) -> Vec<BusSecond> {
    let seconds = buses
        .iter()
        .map(|(_, b)| b.per_second.len())
        .min()
        .unwrap_or(0);
    (0..seconds)
        .map(|i| BusSecond {
            published: buses.iter().map(|(_, b)| b.per_second[i].published).sum(),
            persisted: buses
                .iter()
                .map(|(_, b)| b.per_second[i].persisted)
                .sum::<Option<u64>>(),
        })
        .collect()
}

/// The percentiles of the hosts' histograms added together.
fn percentiles(of: &[(&Path, &Percentiles)]) -> Result<Percentiles, MergeError> {
    let mut hs = Vec::with_capacity(of.len());
    for (path, p) in of {
        hs.push(decode(&p.histogram).ok_or_else(|| {
            MergeError::shape(
                path,
                "has a latency histogram that does not decode; was it edited?",
            )
        })?);
    }
    Ok(Percentiles::of(&sum_histograms(&hs)))
}

/// The hosts' per-second events added, second by second (no percentiles: see the module doc).
fn seconds<'a>(hosts: impl Iterator<Item = &'a [Second]>) -> Vec<Second> {
    let longest = crate::fleet::workload::MAX_RUN.as_secs() as usize;
    let mut out: Vec<Second> = Vec::new();
    for series in hosts {
        // A second past the longest run is not a fleet's (an edited file): left out.
        for s in series.iter().filter(|s| s.second <= longest) {
            if out.len() <= s.second {
                out.resize_with(s.second + 1, || Second {
                    second: 0,
                    events: 0,
                    p50_ns: 0,
                    p99_ns: 0,
                });
            }
            out[s.second].events += s.events;
        }
    }
    for (i, s) in out.iter_mut().enumerate() {
        s.second = i;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fleet::results::FleetSettings;
    use crate::runner::stats::latency_histogram;

    fn pct(values: &[u64]) -> Percentiles {
        let mut h = latency_histogram();
        for v in values {
            h.record(*v).unwrap();
        }
        Percentiles::of(&h)
    }

    fn summary(sent: u64, stored: u64, values: &[u64], verdict: &str) -> Summary {
        Summary {
            offered: sent,
            offered_per_sec: 100.0,
            sent,
            measured: values.len() as u64,
            stored,
            missing: Some(0),
            store_bytes: Some(stored * 10),
            store_bytes_per_second: vec![Some(1)],
            purges: None,
            late: 1,
            unsent: 0,
            failed: 0,
            first_error: None,
            achieved_per_sec: sent as f64 / 2.0,
            writer_cpu_us_per_event: sent as f64,
            generator_us_per_event: 1.0,
            corrected: pct(values),
            uncorrected: pct(values),
            per_second: vec![
                Second {
                    second: 0,
                    events: 3,
                    p50_ns: 5,
                    p99_ns: 9,
                },
                Second {
                    second: 1,
                    events: 4,
                    p50_ns: 5,
                    p99_ns: 9,
                },
            ],
            reads: None,
            verdict: verdict.into(),
            bus: None,
        }
    }

    fn run(summary: Summary) -> FleetRun {
        FleetRun {
            command: "edgebench fleet".into(),
            started: "2026-12-03T00:00:00Z".into(),
            fleet: FleetSettings {
                devices: 10,
                events_per_second: 100.0,
                readings_per_event: 5,
                value_type: "Int64".into(),
                writers: 1,
                warmup_s: 0.0,
                measured_s: 2.0,
                slo_ms: None,
            },
            targets: vec![FleetTarget {
                name: "Embedded".into(),
                endpoint: "in-process".into(),
                error: None,
                summary: Some(summary),
                find_max: None,
            }],
            run_id: Some("r".into()),
            hosts: Vec::new(),
        }
    }

    #[test]
    fn fleet_totals_add_percentiles_merge_and_the_shared_store_counts_once() {
        let a: Vec<u64> = (1..=300).map(|i| i * 1000).collect();
        let b: Vec<u64> = (1..=100).map(|i| i * 50_000).collect();
        let merged = merge(vec![
            (
                "h1".into(),
                "h1".into(),
                run(summary(300, 300, &a, "kept up")),
            ),
            // The last host to check saw both hosts' events, less 5 that were lost.
            (
                "h2".into(),
                "h2".into(),
                run(summary(100, 395, &b, "kept up")),
            ),
        ])
        .unwrap();
        let names: Vec<&str> = merged.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["Embedded", "Embedded@h1", "Embedded@h2"]);
        assert_eq!(merged.hosts, ["h1", "h2"]);
        assert_eq!(merged.fleet.devices, 20);
        let t = merged.targets[0].summary.as_ref().unwrap();
        assert_eq!((t.sent, t.measured, t.late), (400, 400, 2));
        assert_eq!(t.achieved_per_sec, 200.0);
        assert_eq!(t.offered_per_sec, 200.0);
        // (300·300 + 100·100) / 400.
        assert_eq!(t.writer_cpu_us_per_event, 250.0);
        assert_eq!(t.stored, 395);
        assert_eq!(t.missing, Some(5));
        assert!(t.verdict.starts_with("fell behind: 5"), "{}", t.verdict);
        let mut all = latency_histogram();
        for v in a.iter().chain(&b) {
            all.record(*v).unwrap();
        }
        assert_eq!(t.corrected.p50_ns, all.value_at_quantile(0.5));
        assert_eq!(t.corrected.p99_ns, all.value_at_quantile(0.99));
        assert_eq!(t.corrected.p999_ns, all.value_at_quantile(0.999));
        assert_eq!(t.corrected.max_ns, all.max());
        let events: Vec<u64> = t.per_second.iter().map(|s| s.events).collect();
        assert_eq!(events, [6, 8]);
        assert_eq!(merged.targets[2].summary.as_ref().unwrap().sent, 100);
    }

    #[test]
    fn find_max_searches_are_refused() {
        let mut searched = run(summary(1, 1, &[1], "kept up"));
        searched.targets[0].find_max = Some(crate::fleet::results::FindMax {
            max_rate: None,
            first_failing: None,
            probes: Vec::new(),
        });
        let e = merge(vec![
            (
                "h1".into(),
                "h1".into(),
                run(summary(1, 1, &[1], "kept up")),
            ),
            ("h2".into(), "h2".into(), searched),
        ])
        .unwrap_err();
        assert!(e.to_string().contains("--find-max"), "{e}");
    }
}

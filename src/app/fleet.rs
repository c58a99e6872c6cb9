//! `edgebench fleet`: for each target in turn, start it (in its EdgeX layout, or behind the
//! core-data service), run the fleet, and rewrite the results files, so an unreachable target
//! or Ctrl-C keeps what finished. The summary table goes to stdout.
//!
//! Files in the results directory (`results/<UTC timestamp>-fleet` unless `--out`):
//! `fleet.json` (settings, every target's figures, per-second series and full HDR
//! histograms), `fleet.md` (the table) and `per-second.csv`.

use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;

use super::shared::{Ending, Error, Interrupts};
use super::status::ProgressLine;
use crate::cli::FleetArgs;
use crate::fleet::results::{FindMax, FleetRun, FleetSettings, FleetTarget, Summary};
use crate::fleet::workload::{self as fleet, find_max, FleetError, FleetSpec, Live, Verdict};
use crate::fleet::{export, FleetConfig};
use crate::target::Target;

/// `edgebench fleet ARGS`.
pub fn main(
    args: &FleetArgs,
    interrupts: &Interrupts<'_>,
    status: &mut dyn Write,
) -> Result<Ending, Error> {
    let cfg = FleetConfig::from_args(args).map_err(Error::usage)?;
    let stop = interrupts.watch()?;
    let dir = match &cfg.out {
        Some(d) => d.clone(),
        None => super::shared::fresh_run_dir(Path::new("results"), "fleet"),
    };
    let mut run = FleetRun {
        command: crate::redact::recorded_command_line(),
        started: chrono::Utc::now().to_rfc3339(),
        fleet: FleetSettings::of(&cfg.spec),
        targets: Vec::new(),
        run_id: cfg.run_id.clone(),
        hosts: Vec::new(),
    };
    let mut files = write(&dir, &run)?;
    let mut failed = 0;
    for spec in &cfg.targets {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let _ = writeln!(
            status,
            "edgebench fleet: {}: {} devices, {} events/s for {:?} after {:?} of warmup",
            spec.name,
            cfg.spec.devices,
            cfg.spec.events_per_second,
            cfg.spec.duration.saturating_sub(cfg.spec.warmup),
            cfg.spec.warmup
        );
        let mut row = FleetTarget {
            name: spec.name.clone(),
            endpoint: String::new(),
            error: None,
            summary: None,
            find_max: None,
        };
        match run_one(&cfg, spec, &stop, &mut row, status) {
            Ok(()) => {}
            Err(e) => {
                let _ = writeln!(status, "edgebench fleet: {}: {e}", spec.name);
                row.error = Some(e);
                failed += 1;
            }
        }
        match (&row.find_max, &row.summary) {
            (Some(f), _) => {
                let _ = match f.max_rate {
                    Some(rate) => writeln!(
                        status,
                        "edgebench fleet: {}: kept up at most {rate:.0} events/s",
                        spec.name
                    ),
                    None => writeln!(status, "edgebench fleet: {}: no rate kept up", spec.name),
                };
            }
            (None, Some(s)) => {
                let _ = writeln!(status, "edgebench fleet: {}: {}", spec.name, s.verdict);
            }
            (None, None) => {}
        }
        run.targets.push(row);
        files = write(&dir, &run)?;
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&files[export::MARKDOWN])
        .context("cannot write to stdout")?;
    let _ = writeln!(status, "edgebench: results in {}", dir.display());
    Ok(if stop.load(Ordering::Relaxed) {
        Ending::Interrupted
    } else if failed > 0 {
        Ending::PartlyFailed
    } else {
        Ending::Finished
    })
}

/// Starts one target and runs the fleet on it (or, with `--find-max`, the search: the
/// summary is then the fastest run that kept up); the error is one line.
fn run_one(
    cfg: &FleetConfig,
    spec: &crate::target::TargetSpec,
    stop: &AtomicBool,
    row: &mut FleetTarget,
    status: &mut dyn Write,
) -> Result<(), String> {
    let target = Target::start(spec).map_err(|e| e.to_string())?;
    row.endpoint = target.endpoint();
    let opener = target.event_store_opener().map_err(|e| e.to_string())?;
    let open = move || opener();
    let line = std::sync::Mutex::new(ProgressLine::new(std::io::stderr().is_terminal()));
    let on_second = |live: &Live| {
        let text = live_line(&spec.name, live);
        if let Ok(mut line) = line.lock() {
            line.tick(&mut std::io::stderr(), &text);
        }
    };
    let one_line = |e: FleetError| match e {
        FleetError::Spec(m) => m,
        FleetError::Store(e) => e.to_string(),
    };
    let keep = || {
        if let Ok(mut line) = line.lock() {
            line.keep(&mut std::io::stderr());
        }
    };
    let bus = BusDelivery {
        target: &target,
        drain: cfg.drain,
    };
    let delivery = target.is_bus().then_some(&bus as &dyn fleet::Delivery);
    if !cfg.find_max {
        let report =
            fleet::run_with(&cfg.spec, &open, delivery, stop, &on_second).map_err(one_line);
        keep();
        let report = report?;
        row.summary = Some(Summary::of(&cfg.spec, &report));
        return Ok(());
    }
    // Every run that kept up, by rate: the answer is one of them.
    let mut kept: Vec<(f64, Summary)> = Vec::new();
    let found = find_max::search(cfg.spec.events_per_second, |rate| {
        let at = FleetSpec {
            events_per_second: rate,
            ..cfg.spec.clone()
        };
        let report = fleet::run_with(&at, &open, delivery, stop, &on_second).map_err(one_line);
        keep();
        let report = report?;
        if stop.load(Ordering::Relaxed) {
            return Err("interrupted".to_string());
        }
        let kept_up = report.verdict == Verdict::KeptUp;
        let _ = writeln!(
            status,
            "edgebench fleet: {}: {rate:.0} events/s: {}",
            spec.name, report.verdict
        );
        if kept_up {
            kept.push((rate, Summary::of(&at, &report)));
        }
        Ok((kept_up, report.verdict.to_string()))
    })?;
    row.summary = found.max_rate.and_then(|max| {
        kept.into_iter()
            .rev()
            .find(|(rate, _)| *rate == max)
            .map(|(_, summary)| summary)
    });
    row.find_max = Some(FindMax::of(&found));
    Ok(())
}

/// A `--via bus` target as the fleet's [`fleet::Delivery`]: its subscriber times commits, and
/// the run waits for it (at most `drain`) before counting.
struct BusDelivery<'a> {
    target: &'a Target,
    drain: std::time::Duration,
}

impl fleet::Delivery for BusDelivery<'_> {
    fn measure_from(&self, origin_ns: i64) {
        self.target.record_bus_commits_from(origin_ns);
    }

    fn settle(&self) -> crate::target::BusReport {
        self.target.settle_bus(self.drain).unwrap_or_default()
    }

    fn quiesce(&self) {
        self.target.quiesce_bus(self.drain);
    }

    fn progress(&self) -> (u64, Option<u64>) {
        self.target.bus_progress().unwrap_or((0, None))
    }
}

/// The once-a-second status: where the run is, events due and written, the backlog, reads.
fn live_line(name: &str, live: &Live) -> String {
    let backlog = live.due.saturating_sub(live.sent + live.failed);
    format!(
        "{name} [{}/{}s] due {} written {} backlog {backlog} failed {} reads {}",
        live.elapsed.as_secs(),
        live.total.as_secs(),
        live.due,
        live.sent,
        live.failed,
        live.reads
    )
}

/// Rewrites the results files (fleet.json, fleet.md, the CSVs, report.html), each one whole;
/// returns the files' bytes in [`export::exporters`]' order.
fn write(dir: &Path, run: &FleetRun) -> anyhow::Result<Vec<Vec<u8>>> {
    Ok(export::write(dir, run)?)
}

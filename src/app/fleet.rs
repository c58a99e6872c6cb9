//! `edgebench fleet`: for each target in turn, start it (in its EdgeX layout, or behind the
//! core-data service), run the fleet, and rewrite the results files, so an unreachable target
//! or Ctrl-C keeps what finished. The summary table goes to stdout.
//!
//! Files in the results directory (`results/<UTC timestamp>-fleet` unless `--out`):
//! `fleet.json` (settings, every target's figures, per-second series and full HDR
//! histograms), `fleet.md` (the table) and `per-second.csv`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::Context as _;

use super::shared::{Ending, Error, Interrupts};
use crate::cli::FleetArgs;
use crate::config::FleetConfig;
use crate::report::fleet::{self as out, FleetRun, FleetSettings, FleetTarget, Summary};
use crate::target::Target;
use crate::workload::fleet::{self, FleetError};

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
        command: std::env::args().collect::<Vec<_>>().join(" "),
        started: chrono::Utc::now().to_rfc3339(),
        fleet: FleetSettings::of(&cfg.spec),
        targets: Vec::new(),
    };
    write(&dir, &run)?;
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
        };
        match run_one(&cfg, spec, &stop, &mut row) {
            Ok(()) => {}
            Err(e) => {
                let _ = writeln!(status, "edgebench fleet: {}: {e}", spec.name);
                row.error = Some(e);
                failed += 1;
            }
        }
        if let Some(s) = &row.summary {
            let _ = writeln!(status, "edgebench fleet: {}: {}", spec.name, s.verdict);
        }
        run.targets.push(row);
        write(&dir, &run)?;
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out::markdown(&run).as_bytes())
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

/// Starts one target and runs the fleet on it; the error is one line.
fn run_one(
    cfg: &FleetConfig,
    spec: &crate::target::TargetSpec,
    stop: &std::sync::atomic::AtomicBool,
    row: &mut FleetTarget,
) -> Result<(), String> {
    let target = Target::start(spec).map_err(|e| e.to_string())?;
    row.endpoint = target.endpoint();
    let opener = target.event_store_opener().map_err(|e| e.to_string())?;
    let open = move || opener();
    let report = fleet::run(&cfg.spec, &open, stop).map_err(|e| match e {
        FleetError::Spec(m) => m,
        FleetError::Store(e) => e.to_string(),
    })?;
    row.summary = Some(Summary::of(&cfg.spec, &report));
    Ok(())
}

/// Rewrites the three files.
fn write(dir: &PathBuf, run: &FleetRun) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)
        .with_context(|| format!("cannot create the results directory {}", dir.display()))?;
    let json = serde_json::to_vec_pretty(run).context("cannot encode fleet.json")?;
    for (name, bytes) in [
        ("fleet.json", json),
        ("fleet.md", out::markdown(run).into_bytes()),
        ("per-second.csv", out::per_second_csv(run).into_bytes()),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

//! `edgebench perf TOOL FLAGS`: PadoGrid's perf_test tools. The flags are typed by
//! [`crate::perf::args`]; each target is a PadoGrid "app" with its own results directory
//! ([`crate::perf::apps`]).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::shared::{Ending, Error, Interrupts};
use crate::cli::PerfArgs;
use crate::perf::args::{self, PerfFlags, Tool};
use crate::target::Target;

/// `edgebench perf TOOL FLAGS`: parse the flags, watch for Ctrl-C, run the tool on stdout.
pub fn main(args: &PerfArgs, interrupts: &Interrupts<'_>) -> Result<Ending, Error> {
    let stop = interrupts.watch()?;
    let out = &mut std::io::stdout();
    let flags = match args::parse(&args.tool, &args.flags).map_err(Error::Usage)? {
        args::PerfArgs::Help(usage) => {
            let _ = writeln!(out, "{usage}");
            return Ok(Ending::Finished);
        }
        args::PerfArgs::Run(flags) => flags,
    };
    run(&flags, &stop, out)?;
    Ok(if stop.load(std::sync::atomic::Ordering::Relaxed) {
        Ending::Interrupted
    } else {
        Ending::Finished
    })
}

/// The perf app's results directory (PadoGrid's `$APP_DIR/results`).
pub const PERF_RESULTS: &str = "results/perf";

/// Runs one perf tool.
pub fn run(
    flags: &PerfFlags,
    stop: &AtomicBool,
    out: &mut (dyn Write + Send),
) -> Result<(), Error> {
    use crate::perf::csv::{clean_results, create_csv, create_csv_all};
    let usage = Error::Usage;
    let PerfFlags {
        run,
        list,
        delete,
        all,
        prop: ref prop_flag,
        ref target,
        ref wait,
        ref db,
        ..
    } = *flags;
    let tool = flags.tool();
    let prop = prop_flag.clone();
    // Each target is a PadoGrid "app" with its own results directory (perf::apps).
    let root = Path::new(PERF_RESULTS);
    let chosen = perf_target(target.as_deref(), flags.cluster_shape, wait.as_deref())?;
    let app = crate::perf::apps::app_for(root, &chosen.spec.name);
    let csv_error = |e: crate::perf::csv::CsvError| usage(e.to_string());
    match tool {
        Tool::TestGroup => {}
        Tool::CreateCsv if all => {
            let apps = crate::perf::apps::list_apps(root)
                .map_err(|e| anyhow::anyhow!("{}: {e}", root.display()))?;
            let home = crate::perf::apps::all_apps_home(root);
            let files = create_csv_all(&home, &apps).map_err(csv_error)?;
            for f in files {
                let _ = writeln!(out, "   + {}", f.display());
            }
            if let Some((path, md)) =
                crate::perf::apps::write_group_comparison(root, &apps).map_err(csv_error)?
            {
                let _ = writeln!(out, "   + {}\n\n{md}", path.display());
                crate::perf::html::write(root).map_err(anyhow::Error::from)?;
            }
            return Ok(());
        }
        Tool::CreateCsv => {
            let files = create_csv(&app).map_err(csv_error)?;
            for f in files {
                let _ = writeln!(out, "   + {}", f.display());
            }
            return Ok(());
        }
        Tool::CleanResults => {
            let mut dirs = vec![app.results_dir.clone()];
            if all {
                dirs = crate::perf::apps::list_apps(root)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", root.display()))?
                    .into_iter()
                    .map(|a| a.results_dir)
                    .collect();
                // The -all CSVs and the comparison live at the root.
                dirs.push(root.to_path_buf());
            }
            for dir in dirs {
                let _ = writeln!(out, "Cleaning {}...", dir.display());
                clean_results(&dir).map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            let _ = writeln!(out, "clean_results complete.");
            return Ok(());
        }
        Tool::CreateGroupConfig => {
            let path = crate::perf::group_config::create_group_config(Path::new("etc"))
                .map_err(|e| usage(e.to_string()))?;
            let _ = writeln!(out, "{}", path.display());
            return Ok(());
        }
        Tool::TestIngestion | Tool::TestTx => {
            if list || delete {
                return Err(usage(format!(
                    "-list and -delete are test_group flags; {} takes [-run] [-prop FILE] [--target T]",
                    tool.name()
                )));
            }
            return perf_pbm(tool, run, prop, &chosen, stop, out);
        }
    }
    let prop = prop.unwrap_or_else(|| PathBuf::from("etc/group.properties"));
    let cfg = crate::perf::GroupTestConfig::load(&prop).map_err(|e| usage(e.to_string()))?;
    for w in &cfg.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    if let Some(mut flags) = db.clone() {
        if let Some(t) = &target {
            return Err(usage(format!(
                "--target {t} and -db: -db writes to the database of --db/etc/db.properties, \
                 --target to a Redis target; drop one"
            )));
        }
        (flags.run, flags.list, flags.delete) = (run, list, delete);
        if !run && !list && !delete {
            let _ = write!(out, "{}", describe_group_test(&cfg, &prop));
        }
        let (runs, product) = crate::perf::db::test_group_db(&cfg, &flags, root, stop, out)
            .map_err(|e| match e {
                crate::perf::db::DbError::Input(m) => usage(m),
                other => Error::Failed(other.into()),
            })?;
        if !runs.is_empty() {
            let dir = crate::perf::apps::app_for(root, &product).results_dir;
            write_group_summary(&runs, &product, &dir, out)?;
        }
        return Ok(());
    }
    if !run && !list && !delete {
        let _ = write!(out, "{}", describe_group_test(&cfg, &prop));
        let _ = writeln!(out, "target: {} ({})", chosen.item, chosen.why);
        let _ = writeln!(out, "To run the test, specify the '-run' option.");
        return Ok(());
    }
    let (_target, connector) = perf_start_target(&chosen, out)?;
    if list || delete {
        let mut con = connector().map_err(|e| anyhow::anyhow!("{e}"))?;
        // PadoGrid: `-delete` without `-run` only lists; it deletes before a run.
        let (list, delete) = if delete && !run {
            let _ = writeln!(
                out,
                "-delete removes data only together with -run (as PadoGrid); listing instead"
            );
            (true, false)
        } else {
            (list, delete)
        };
        // PadoGrid's layout: `  - name:` / `    data:` / `    size:` (/ `    deleted:`).
        if list && !delete {
            let listed = crate::perf::run::list_structures(&cfg, con.as_mut())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            for info in listed {
                let _ = write!(out, "{}", info.render(None));
            }
        }
        if delete {
            let gone = crate::perf::run::delete_structures(&cfg, con.as_mut())
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            for (info, existed) in gone {
                let _ = write!(out, "{}", info.render(Some(existed)));
            }
        }
        if !run {
            return Ok(());
        }
    }
    let product = chosen.spec.name.to_ascii_lowercase();
    let runs =
        crate::perf::run::run_group_test(&cfg, &*connector, &product, &app.results_dir, stop, out)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    write_group_summary(&runs, &product, &app.results_dir, out)
}

/// The markdown summary of a run's groups (PadoGrid's M figures beside edgebench's
/// percentiles), printed and written to `<dir>/summary-<product>-<stamp>.md`.
fn write_group_summary(
    runs: &[(crate::perf::results::GroupRun, PathBuf)],
    product: &str,
    dir: &Path,
    out: &mut (dyn Write + Send),
) -> Result<(), Error> {
    use crate::perf::summary::{self, Columns, SummaryRow};
    let rows: Vec<SummaryRow> = runs
        .iter()
        .map(|(r, _)| SummaryRow {
            name: r.group.clone(),
            threads: r.thread_count,
            count: r.actual_invocations,
            max_ms: r.max_ms(),
            latencies: r.latencies.clone(),
        })
        .collect();
    for (_, path) in runs {
        let _ = writeln!(out, "results: {}", path.display());
    }
    let cols = Columns {
        name: "Group",
        count: "Invocations",
        unit: "inv",
    };
    let table = summary::Summary {
        cols,
        rows,
        notes: String::new(),
    };
    let (md, _) = summary::write(dir, "summary", product, &table).map_err(anyhow::Error::from)?;
    let _ = write!(out, "{md}");
    Ok(())
}

/// The target a perf tool runs against, parsed once: the `--target` item, why it was chosen
/// (printed beside it) and its spec.
struct PerfTarget {
    item: String,
    why: &'static str,
    spec: crate::target::TargetSpec,
}

/// `--target`, else `redis-tcp` when `redis-server` is on PATH, else the in-process engine.
fn perf_target(
    target: Option<&str>,
    (shards, replicas): (Option<u16>, Option<u16>),
    wait: Option<&str>,
) -> Result<PerfTarget, Error> {
    let (item, why) = match target {
        Some(t) => (t.to_string(), "from --target"),
        None if crate::target::redis_server_on_path() => (
            "redis-tcp".to_string(),
            "the default: redis-server is on PATH",
        ),
        None => (
            "embedded".to_string(),
            "the default: no redis-server on PATH, so the in-process engine",
        ),
    };
    let mut specs = crate::target::parse_targets(std::slice::from_ref(&item))
        .map_err(|e| Error::Usage(format!("--target: {e}")))?;
    crate::target::set_cluster_shape(&mut specs, shards, replicas)
        .map_err(|e| Error::Usage(e.to_string()))?;
    let specs = crate::config::apply_wait(specs, wait, &mut Vec::new())
        .map_err(|e| Error::Usage(e.to_string()))?;
    let [spec] = <[_; 1]>::try_from(specs).map_err(|_| {
        Error::Usage(format!(
            "--target {item:?}: perf runs against one target at a time"
        ))
    })?;
    Ok(PerfTarget { item, why, spec })
}

/// Starts the chosen target, prints it, and returns the running target (keep it alive while
/// connecting) and a connector.
fn perf_start_target(
    chosen: &PerfTarget,
    out: &mut (dyn Write + Send),
) -> Result<(Target, Box<crate::target::Connector>), Error> {
    let target = Target::start(&chosen.spec).map_err(|e| anyhow::anyhow!("{e}"))?;
    let connector = target.connector().map_err(Error::usage)?;
    let _ = writeln!(
        out,
        "target: {} at {} ({})",
        chosen.spec.name,
        target.endpoint(),
        chosen.why
    );
    Ok((target, connector))
}

/// `test_ingestion` / `test_tx`: print the configuration as PadoGrid does, or run it.
fn perf_pbm(
    tool: Tool,
    run: bool,
    prop: Option<PathBuf>,
    chosen: &PerfTarget,
    stop: &AtomicBool,
    out: &mut (dyn Write + Send),
) -> Result<(), Error> {
    use crate::perf::summary::Columns;
    use crate::perf::{PbmTest, PbmTestConfig};
    let ingestion = tool == Tool::TestIngestion;
    let prop = prop.unwrap_or_else(|| {
        PathBuf::from(if ingestion {
            "etc/ingestion.properties"
        } else {
            "etc/tx.properties"
        })
    });
    let cfg = if ingestion {
        PbmTestConfig::load_ingestion(&prop)
    } else {
        PbmTestConfig::load_tx(&prop)
    }
    .map_err(|e| Error::Usage(e.to_string()))?;
    for w in &cfg.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    let spec = &chosen.spec;
    let product = spec.name.to_ascii_lowercase();
    let _ = write!(
        out,
        "{}",
        crate::perf::pbm::describe(&cfg, &prop, &product, !run)
    );
    if !run {
        let _ = writeln!(out, "target: {} ({})", chosen.item, chosen.why);
        let _ = writeln!(out, "To run the test, specify the option, '-run'.");
        return Ok(());
    }
    let (_target, connector) = perf_start_target(chosen, out)?;
    let fresh = !spec.kind.is_external();
    if cfg.test == PbmTest::Tx && fresh {
        // A target this command started is empty and ends with it: load what PadoGrid's
        // users load first with test_ingestion, from the ingestion file beside -prop.
        let beside = prop
            .parent()
            .unwrap_or(Path::new("."))
            .join("ingestion.properties");
        if beside.is_file() {
            let load =
                PbmTestConfig::load_ingestion(&beside).map_err(|e| Error::Usage(e.to_string()))?;
            let _ = writeln!(
                out,
                "{} starts empty: loading {} first (not timed)",
                spec.name,
                beside.display()
            );
            crate::perf::ingest::preload(&load, &*connector, stop, out)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Interrupted while loading: no transaction ran, so no results file is written
                // (an empty one would put zeros into create_csv's spreadsheets).
                let _ = writeln!(out, "interrupted while loading: no transactions ran");
                return Ok(());
            }
        } else {
            let _ = writeln!(
                out,
                "note: {} starts empty and there is no {} to load first: every tx is on missing data",
                spec.name,
                beside.display()
            );
        }
    }
    // The target is this run's PadoGrid app (perf::apps).
    let app = crate::perf::apps::app_for(Path::new(PERF_RESULTS), &spec.name);
    let dir = app.results_dir.as_path();
    let _ = writeln!(
        out,
        "Please wait until done. This may take some time. Status printed in every {} sec.",
        cfg.print_status_interval_sec
    );
    let failed = |e: crate::perf::run::RunError| Error::Failed(anyhow::anyhow!("{e}"));
    let (outcomes, paths, cols, stem, notes, done) = if cfg.test == PbmTest::Ingestion {
        let runs = crate::perf::ingest::run_ingestion(&cfg, &*connector, &product, dir, stop, out)
            .map_err(failed)?;
        let (o, p): (Vec<_>, Vec<_>) = runs.into_iter().map(|(_, o, p)| (o, p)).unzip();
        let cols = Columns {
            name: "Map",
            count: "Entries",
            unit: "entries",
        };
        (
            o,
            p,
            cols,
            "summary-ingestion",
            String::new(),
            "Data ingestion complete",
        )
    } else {
        let runs =
            crate::perf::tx::run_tx(&cfg, &*connector, &product, dir, stop, out).map_err(failed)?;
        let (o, p): (Vec<_>, Vec<_>) = runs.into_iter().map(|(_, o, p)| (o, p)).unzip();
        let cols = Columns {
            name: "Map",
            count: "Transactions",
            unit: "tx",
        };
        let notes: String = o
            .iter()
            .map(|o| {
                format!(
                    "\n{} {}: {} on missing data, {} transactions retried after a concurrent change (WATCH)\n",
                    o.map.map, o.map.test_case, o.missing, o.retries
                )
            })
            .collect();
        (o, p, cols, "summary-tx", notes, "Transaction complete")
    };
    let _ = writeln!(out, "Results:");
    for p in &paths {
        let _ = writeln!(out, "   {}", p.display());
    }
    let refs: Vec<&crate::perf::pbm::MapOutcome> = outcomes.iter().collect();
    let (md, _) = crate::perf::pbm::write_summary(&refs, cols, stem, &product, dir, &notes)
        .map_err(anyhow::Error::from)?;
    let _ = write!(out, "{md}");
    let _ = writeln!(out, "\n{done}");
    Ok(())
}

/// What `test_group` prints without `-run`: the configuration, as PadoGrid does.
fn describe_group_test(cfg: &crate::perf::GroupTestConfig, prop: &Path) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(o, "Group test configuration: {}", prop.display());
    let _ = writeln!(o, "   testCount: {}", cfg.test_count);
    let _ = writeln!(o, "   testIntervalInMsec: {}", cfg.test_interval_ms);
    let _ = writeln!(
        o,
        "   printStatusIntervalInSec: {}",
        cfg.print_status_interval_sec
    );
    for (n, stage) in cfg.schedule.stages.iter().enumerate() {
        let _ = writeln!(o, "   stage {}: {}", n + 1, stage.join(" & "));
        for g in stage {
            let group = &cfg.groups[g];
            let _ = writeln!(
                o,
                "      {g}: threadCount={} totalInvocationCount={} operations={}",
                group.thread_count, group.total_invocation_count, group.operations_raw
            );
            for op in &group.operations {
                let op = &cfg.operations[op];
                let _ = writeln!(
                    o,
                    "         {}: {} {} {:?} payloadSize={} batchSize={} totalEntryCount={}",
                    op.name,
                    op.data_structure.key(),
                    op.ds_name,
                    op.test_case,
                    op.payload_size,
                    op.batch_size,
                    op.total_entry_count
                );
            }
        }
    }
    o
}

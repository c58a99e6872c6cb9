//! `edgebench ycsb`: YCSB's core workloads on every target. The command line (YCSB's flags
//! and `--target`) becomes a plan of steps, each with its checked workload; every target is
//! started in turn, each of its YCSB bindings is a column, and each step runs on it; every
//! file of the results directory is rewritten after each step, so a crash keeps what
//! finished. YCSB's export of each step goes to stdout and to `<dir>/<column>/<step>.txt`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::shared::{Ending, Error, Interrupts};
use crate::report::write_whole_file;
use crate::store::ycsb::{Binding, Setup, YcsbOpener};
use crate::target::{default_targets, parse_targets, Target, TargetSpec};
use crate::ycsb::args::{self, Step, YcsbArgs};
use crate::ycsb::config::{self, Workload};
use crate::ycsb::export;
use crate::ycsb::properties::{self, Origin, Properties};
use crate::ycsb::results::{self, StepResults, TargetResults, YcsbResults};
use crate::ycsb::run::{run_phase, Phase, PhaseOptions};
use crate::ycsb::workloads::{self, SuiteStep};

/// One step of the plan.
#[derive(Debug, Clone)]
struct Planned {
    /// Its name in the results (`load workloada`).
    name: String,
    /// What it does.
    action: Action,
}

#[derive(Debug, Clone)]
enum Action {
    Load(Arc<Workload>),
    Run(Arc<Workload>),
    Clear,
}

/// One column: a target and the binding its records are stored as.
struct Column {
    spec: TargetSpec,
    binding: Binding,
    name: String,
}

/// Runs `edgebench ycsb WORDS…`.
pub fn main(
    words: &[String],
    interrupts: &Interrupts<'_>,
    status: &mut (dyn Write + Send),
) -> Result<Ending, Error> {
    let a = args::parse(words).map_err(Error::Usage)?;
    if a.help {
        println!("{}", args::USAGE);
        return Ok(Ending::Finished);
    }
    let plan = plan(&a).map_err(Error::Usage)?;
    let columns = columns(&a).map_err(Error::Usage)?;
    check_memory(&plan, &columns).map_err(Error::Usage)?;
    let stop = interrupts.watch()?;
    // No B/op is reported; counting would cost every allocation of every thread (as kv).
    crate::runner::alloc::set_counting(false);
    let dir = a
        .out
        .clone()
        .unwrap_or_else(|| super::shared::fresh_run_dir(Path::new("results"), "ycsb"));
    let outcome = run(&a, &plan, &columns, &dir, &stop, status)?;
    Ok(outcome)
}

/// The steps the command line asks for, each workload read and checked.
fn plan(a: &YcsbArgs) -> Result<Vec<Planned>, String> {
    let mut base = Properties::default();
    for file in &a.files {
        let (text, origin) = properties::read_file(file)?;
        base.merge_text(&text, &origin);
    }
    let on_top = |props: &mut Properties| {
        for (name, value) in &a.overrides {
            props.set(name, value, Origin::Flag);
        }
        if let Some(t) = &a.threads {
            props.set("threadcount", t, Origin::Named("-threads"));
        }
        if let Some(t) = &a.target_ops {
            props.set("target", t, Origin::Named("-target"));
        }
    };
    let read =
        |props: &Properties, transactions: bool| config::read(props, transactions).map(Arc::new);
    let mut steps = Vec::new();
    if a.steps == [Step::Suite] {
        for step in workloads::SUITE {
            let named = |wl: &str| {
                let mut props = Properties::default();
                let text = workloads::builtin(wl).unwrap_or_default();
                props.merge_text(text, &Origin::File(PathBuf::from(wl)));
                for (name, value, origin) in base.iter() {
                    props.set(name, value, origin.clone());
                }
                on_top(&mut props);
                props
            };
            steps.push(match step {
                SuiteStep::Load(wl) => Planned {
                    name: format!("load {wl}"),
                    action: Action::Load(read(&named(wl), false)?),
                },
                SuiteStep::Run(wl) => Planned {
                    name: format!("run {wl}"),
                    action: Action::Run(read(&named(wl), true)?),
                },
                SuiteStep::Clear => Planned {
                    name: "clear".to_string(),
                    action: Action::Clear,
                },
            });
        }
        return Ok(steps);
    }
    let mut props = base;
    on_top(&mut props);
    let what = a
        .files
        .last()
        .and_then(|f| f.file_name())
        .map(|n| format!(" {}", n.to_string_lossy()))
        .unwrap_or_default();
    for step in &a.steps {
        steps.push(match step {
            Step::Load => Planned {
                name: format!("load{what}"),
                action: Action::Load(read(&props, false)?),
            },
            _ => Planned {
                name: format!("run{what}"),
                action: Action::Run(read(&props, true)?),
            },
        });
    }
    Ok(steps)
}

/// The columns: each target with each binding it takes (`-db`, `--ycsb-redis-layout`).
fn columns(a: &YcsbArgs) -> Result<Vec<Column>, String> {
    let explicit = !a.targets.is_empty();
    let specs = if explicit {
        parse_targets(&a.targets).map_err(|e| e.to_string())?
    } else {
        let (specs, notes) = default_targets();
        for note in notes {
            eprintln!("edgebench: {note}");
        }
        specs
    };
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    for spec in specs {
        let has = spec.kind.ycsb_bindings();
        if has.is_empty() {
            skipped.push(format!(
                "{}: no YCSB binding (a core-data service serves EdgeX's API only)",
                spec.name
            ));
            continue;
        }
        let mut chosen: Vec<Binding> = if a.bindings.is_empty() {
            vec![has[0]]
        } else {
            has.iter()
                .copied()
                .filter(|b| a.bindings.contains(b))
                .collect()
        };
        if !a.redis_layouts.is_empty() && has.contains(&Binding::Redis) {
            chosen.retain(|b| !matches!(b, Binding::Redis | Binding::GoYcsb));
            if a.bindings.is_empty()
                || a.bindings
                    .iter()
                    .any(|b| matches!(b, Binding::Redis | Binding::GoYcsb))
            {
                chosen.extend(a.redis_layouts.iter().copied());
            }
        }
        if chosen.is_empty() {
            skipped.push(format!(
                "{}: none of its YCSB bindings ({}) is among -db",
                spec.name,
                has.iter().map(|b| b.name()).collect::<Vec<_>>().join(", ")
            ));
            continue;
        }
        for binding in chosen {
            let suffix = match binding {
                b if b == has[0] => "",
                Binding::GoYcsb => "_GoYCSB",
                Binding::PostgreNoSql => "_NoSQL",
                Binding::Jdbc => "_JDBC",
                Binding::Redis => "_YCSB",
                Binding::MongoDb => "_Mongo",
            };
            out.push(Column {
                name: format!("{}{suffix}", spec.name),
                spec: spec.clone(),
                binding,
            });
        }
    }
    if out.is_empty() {
        return Err(format!(
            "no target takes these YCSB bindings ({}): choose targets with --target, or \
             other -db names",
            skipped.join("; ")
        ));
    }
    if explicit {
        for s in skipped {
            eprintln!("edgebench: skipped {s}");
        }
    }
    Ok(out)
}

/// Refuses a plan whose records cannot fit in this machine's free memory, for the targets
/// that keep them in it (the engine, a redis-server edgebench spawns).
fn check_memory(plan: &[Planned], columns: &[Column]) -> Result<(), String> {
    let in_memory = columns.iter().any(|c| {
        matches!(c.binding, Binding::Redis | Binding::GoYcsb) && !c.spec.kind.is_external()
    });
    if !in_memory {
        return Ok(());
    }
    let Some(free) = available_memory() else {
        return Ok(());
    };
    for step in plan {
        let (Action::Load(w) | Action::Run(w)) = &step.action else {
            continue;
        };
        let records = w.recordcount + (w.operationcount as f64 * w.insert) as u64;
        let need = records.saturating_mul(w.record_bytes());
        if need > free {
            return Err(format!(
                "recordcount={} ({}): {} records of about {} bytes need {:.1} GiB in memory, \
                 more than the {:.1} GiB this machine has free: lower recordcount (or \
                 fieldcount/fieldlength), or use a target that keeps records on disk",
                w.recordcount,
                "-p or -P",
                records,
                w.record_bytes(),
                need as f64 / (1u64 << 30) as f64,
                free as f64 / (1u64 << 30) as f64,
            ));
        }
    }
    Ok(())
}

/// `MemAvailable` from /proc/meminfo, in bytes.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn run(
    a: &YcsbArgs,
    plan: &[Planned],
    columns: &[Column],
    dir: &Path,
    stop: &AtomicBool,
    status: &mut (dyn Write + Send),
) -> Result<Ending, Error> {
    let mut results = YcsbResults {
        kind: results::KIND.to_string(),
        command: crate::redact::recorded_command_line(),
        started: chrono::Utc::now().to_rfc3339(),
        run_id: a.run_id.clone(),
        hosts: 0,
        steps: plan
            .iter()
            .filter(|s| !matches!(s.action, Action::Clear))
            .map(|s| s.name.clone())
            .collect(),
        targets: columns
            .iter()
            .map(|c| TargetResults {
                column: c.name.clone(),
                binding: c.binding.name().to_string(),
                ..TargetResults::default()
            })
            .collect(),
    };
    let save = |results: &YcsbResults| -> Result<(), Error> {
        crate::ycsb::slice::write(dir, results).map_err(|e| Error::Failed(e.into()))?;
        Ok(())
    };
    save(&results)?;
    writeln!(status, "edgebench: results in {}", dir.display()).ok();
    let options = PhaseOptions {
        status: a.status,
        label: a.label.clone(),
    };
    let mut failed = 0usize;
    let mut unloaded = 0usize;
    let mut exportfile = String::new();
    // Each column its own start of its target: a fresh private database, server or engine,
    // so two bindings of one target never share a table.
    for (j, column) in columns.iter().enumerate() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let target = match Target::start(&column.spec) {
            Ok(t) => t,
            Err(e) => {
                writeln!(status, "edgebench: {e}").ok();
                results.targets[j].error = Some(e.to_string());
                failed += 1;
                save(&results)?;
                continue;
            }
        };
        results.targets[j].describe = target.endpoint();
        let ran = run_column(
            &target,
            column,
            plan,
            &options,
            stop,
            status,
            (&mut results, j),
            dir,
            &mut exportfile,
            &save,
        );
        if let ColumnEnd::Failed(why, no_records) = ran {
            writeln!(status, "edgebench: {}: {why}", column.name).ok();
            results.targets[j].error = Some(why);
            failed += 1;
            unloaded += usize::from(no_records);
        }
        save(&results)?;
    }
    save(&results)?;
    let table = results::table(&results);
    let mut out = std::io::stdout().lock();
    writeln!(out, "\n{table}").ok();
    writeln!(status, "edgebench: results in {}", dir.display()).ok();
    if let Some(path) = plan.iter().find_map(|s| match &s.action {
        Action::Load(w) | Action::Run(w) => w.exportfile.clone(),
        Action::Clear => None,
    }) {
        write_whole_file(Path::new(&path), exportfile.as_bytes())
            .map_err(|e| Error::Failed(e.into()))?;
    }
    if stop.load(Ordering::Relaxed) {
        writeln!(
            status,
            "edgebench: interrupted; keeping the steps that finished"
        )
        .ok();
        return Ok(Ending::Interrupted);
    }
    if unloaded > 0 && unloaded == columns.len() {
        return Err(Error::Usage(
            "no target holds records to run on: load them first, in the same command for \
             targets edgebench starts (edgebench ycsb load run …), or with edgebench ycsb \
             load before against a target that keeps its data (a redis:// URL); recordcount \
             says how many"
                .to_string(),
        ));
    }
    Ok(if failed > 0 {
        Ending::PartlyFailed
    } else {
        Ending::Finished
    })
}

enum ColumnEnd {
    Done,
    /// Why, and whether it is because no records were loaded.
    Failed(String, bool),
}

/// Runs every step of `plan` on one column; each step's YCSB export goes to stdout and to
/// `<dir>/<column>/<step>.txt`.
#[allow(clippy::too_many_arguments)]
fn run_column(
    target: &Target,
    column: &Column,
    plan: &[Planned],
    options: &PhaseOptions,
    stop: &AtomicBool,
    status: &mut (dyn Write + Send),
    (results, j): (&mut YcsbResults, usize),
    dir: &Path,
    exportfile: &mut String,
    save: &dyn Fn(&YcsbResults) -> Result<(), Error>,
) -> ColumnEnd {
    let mut opener: Option<(Setup, YcsbOpener)> = None;
    let mut open = |w: &Workload| -> Result<YcsbOpener, String> {
        let setup = Setup {
            binding: column.binding,
            table: w.table.clone(),
            fields: w.field_names(),
        };
        if let Some((s, o)) = &opener {
            if *s == setup {
                return Ok(Arc::clone(o));
            }
        }
        let o = target.ycsb_opener(&setup).map_err(|e| e.to_string())?;
        opener = Some((setup, Arc::clone(&o)));
        Ok(o)
    };
    let mut last_workload: Option<Arc<Workload>> = None;
    for step in plan {
        if stop.load(Ordering::Relaxed) {
            return ColumnEnd::Done;
        }
        let (w, phase) = match &step.action {
            Action::Load(w) => (w, Phase::Load),
            Action::Run(w) => (w, Phase::Run),
            Action::Clear => {
                let Some(w) = &last_workload else { continue };
                let cleared = open(w).and_then(|o| {
                    let mut store = o().map_err(|e| e.to_string())?;
                    store.clear().map_err(|e| format!("clear: {e}"))
                });
                if let Err(e) = cleared {
                    return ColumnEnd::Failed(e, false);
                }
                continue;
            }
        };
        last_workload = Some(Arc::clone(w));
        if phase == Phase::Run && step.name.contains("workloade") && !column.binding.scans() {
            writeln!(
                status,
                "edgebench: {}: {} skipped: {}",
                column.name,
                step.name,
                crate::store::ycsb::GO_YCSB_NO_SCAN
            )
            .ok();
            continue;
        }
        let opener = match open(w) {
            Ok(o) => o,
            Err(e) => return ColumnEnd::Failed(e, false),
        };
        if phase == Phase::Run {
            let count = opener()
                .and_then(|mut s| s.count())
                .map_err(|e| e.to_string());
            match count {
                Ok(0) => {
                    return ColumnEnd::Failed(
                        format!(
                            "{} holds no records: load them first (edgebench ycsb load run … \
                             in one command, as this target lives only while edgebench runs \
                             unless it is a URL)",
                            w.table
                        ),
                        true,
                    )
                }
                Ok(_) => {}
                Err(e) => return ColumnEnd::Failed(format!("cannot count records: {e}"), false),
            }
        }
        writeln!(status, "edgebench: {}: {} …", column.name, step.name).ok();
        let result = run_phase(&opener, w, phase, options, stop, status);
        let step_results = StepResults::of(&step.name, &result, w);
        let text = export::render(&export::rows(&result, w), w.exporter);
        let header = format!(
            "# {} ({}): {}\n",
            column.name,
            column.binding.name(),
            step.name
        );
        print!("{header}{text}");
        exportfile.push_str(&header);
        exportfile.push_str(&text);
        let file = dir.join(&column.name).join(format!(
            "{}.{}",
            step.name.replace(' ', "-"),
            match w.exporter {
                config::Exporter::Text => "txt",
                _ => "json",
            }
        ));
        let written = std::fs::create_dir_all(dir.join(&column.name))
            .and_then(|()| write_whole_file(&file, text.as_bytes()));
        if let Err(e) = written {
            writeln!(status, "edgebench: {e}").ok();
        }
        writeln!(
            status,
            "edgebench: {}: {}: {} operations, {} ops/s",
            column.name,
            step.name,
            step_results.operations,
            results::group(step_results.throughput.round() as u64)
        )
        .ok();
        let stopped = step_results.stopped.clone();
        results.targets[j].steps.push(step_results);
        if let Err(e) = save(results) {
            return ColumnEnd::Failed(e.to_string(), false);
        }
        if let Some(why) = stopped {
            if why != "interrupted" {
                return ColumnEnd::Failed(format!("{}: {why}", step.name), false);
            }
            return ColumnEnd::Done;
        }
    }
    ColumnEnd::Done
}

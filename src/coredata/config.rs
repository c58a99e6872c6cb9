//! `edgebench coredata`'s typed config: its flags checked and its targets expanded into one
//! column per target, layout and transport that go together ([`CoreDataConfig`]). The errors
//! are the command line's ([`ConfigError`]), shared with the other commands.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::BenchFilter;
use crate::cli::CoreDataArgs;
use crate::config::{apply_wait, parse_formats, parse_list, ConfigError};
use crate::report::Format;
use crate::results::column_name;
use crate::runner::BenchTime;
use crate::store::mongo::{Fidelity, MongoLayout};
use crate::target::{self, Layout, TargetKind, TargetSpec, Via};

/// Everything `edgebench coredata` needs, typed.
#[derive(Debug, Clone)]
pub struct CoreDataConfig {
    /// The columns, in order.
    pub targets: Vec<TargetSpec>,
    /// Which benchmarks run.
    pub filter: BenchFilter,
    /// Round length or iteration count.
    pub benchtime: BenchTime,
    /// Repetitions of each benchmark.
    pub count: u32,
    /// What to print on stdout at the end.
    pub formats: Vec<Format>,
    /// Where results files go; `None` means `results/<timestamp>-coredata/`.
    pub out: Option<PathBuf>,
    /// Raised by Ctrl-C.
    pub interrupted: Arc<AtomicBool>,
    /// Things the user should know before the run starts (one line each).
    pub notes: Vec<String>,
    /// `--baseline`: the column the ratio table divides by.
    pub baseline: Option<String>,
    /// `--parallel`: the numbers of concurrent clients, one run of every benchmark each;
    /// `None` without the flag (one client, and Go names as without `-cpu`).
    pub parallel: Option<Vec<u32>>,
    /// `--run-id`: shared by the load hosts of one run.
    pub run_id: Option<String>,
    /// `--start-at`: when the first benchmark begins, after the first target started.
    pub start_at: Option<std::time::SystemTime>,
}

impl CoreDataConfig {
    /// Checks and types the flags of `edgebench coredata`.
    pub fn from_args(
        args: &CoreDataArgs,
        interrupted: Arc<AtomicBool>,
    ) -> Result<Self, ConfigError> {
        let mut notes = Vec::new();
        let targets = if args.targets.is_empty() {
            let (defaults, missing) = target::default_targets();
            notes.extend(missing);
            defaults
        } else {
            let mut specs = target::parse_targets(&args.targets)?;
            target::set_cluster_shape(&mut specs, args.cluster_shards, args.cluster_replicas)?;
            specs
        };
        let targets = apply_wait(targets, args.wait.as_deref(), &mut notes)?;
        let layouts = parse_layouts(args, &mut notes)?;
        let vias =
            parse_list(&args.via, Via::parse).ok_or_else(|| ConfigError::Via(args.via.clone()))?;
        if vias.contains(&Via::Bus) {
            return Err(ConfigError::Bus(
                "--via bus: the ten benchmarks read back what they write at once, and a bus \
                 delivers later; measure the bus with edgebench fleet --via bus --bus …"
                    .to_string(),
            ));
        }
        let default_run = args.targets.is_empty();
        let asked: Vec<TargetKind> = targets.iter().map(|t| t.kind.clone()).collect();
        let targets = expand(targets, layouts.as_deref(), default_run, &vias, &mut notes);
        if let (true, Some(why)) = (
            targets.is_empty(),
            asked.iter().find_map(|kind| kind.no_edgex_layout()),
        ) {
            return Err(ConfigError::NoEdgexLayout {
                layout: args.layout.clone().unwrap_or_else(|| "2018".to_string()),
                via: args.via.clone(),
                why,
            });
        }
        if targets.is_empty() {
            return Err(ConfigError::NoColumns {
                layout: args.layout.clone().unwrap_or_else(|| "2018".to_string()),
                via: args.via.clone(),
            });
        }
        let parallel = args.parallel.as_deref().map(parse_parallel).transpose()?;
        if let Some(name) = &args.baseline {
            let levels = parallel.as_deref().unwrap_or(&[1]);
            let columns: Vec<String> = targets
                .iter()
                .flat_map(|t| levels.iter().map(|&n| column_name(&t.name, n)))
                .collect();
            if !columns.contains(name) {
                return Err(ConfigError::Baseline {
                    name: name.clone(),
                    columns: columns.join(", "),
                });
            }
        }
        let filter = match &args.bench {
            None => BenchFilter::all(),
            Some(p) => BenchFilter::parse(p).map_err(|e| ConfigError::Bench {
                pattern: p.clone(),
                reason: e
                    .to_string()
                    .lines()
                    .last()
                    .unwrap_or("invalid")
                    .trim()
                    .to_string(),
            })?,
        };
        let benchtime: BenchTime = args.benchtime.parse()?;
        let count = match args.count.parse::<u32>() {
            Ok(n) if (1..=1000).contains(&n) => n,
            _ => return Err(ConfigError::Count(args.count.clone())),
        };
        let formats = parse_formats(&args.format)?;
        let (run_id, start_at) =
            crate::runner::barrier::flags(args.run_id.as_deref(), args.start_at.as_deref())
                .map_err(ConfigError::MultiHost)?;
        Ok(CoreDataConfig {
            targets,
            filter,
            benchtime,
            count,
            formats,
            out: args.out.clone(),
            interrupted,
            notes,
            baseline: args.baseline.clone(),
            parallel,
            run_id,
            start_at,
        })
    }
}

/// Most concurrent clients `--parallel` takes: each is a thread, a connection and a
/// quarter-MiB latency histogram, and few servers take more connections by default
/// (PostgreSQL's `max_connections` is 100).
pub const MAX_PARALLEL: u32 = 256;

/// `--parallel N[,N...]`: levels in the order given, each 1..=[`MAX_PARALLEL`], no repeats
/// (a repeated level would make two columns of one name).
fn parse_parallel(list: &str) -> Result<Vec<u32>, ConfigError> {
    let err = |reason: String| ConfigError::Parallel {
        value: list.to_string(),
        reason,
    };
    let mut levels = Vec::new();
    for item in list.split(',').map(str::trim) {
        let n = match item.parse::<u32>() {
            Ok(n) if (1..=MAX_PARALLEL).contains(&n) => n,
            _ => {
                return Err(err(format!(
                    "{item:?} is not a number of clients from 1 to {MAX_PARALLEL}"
                )))
            }
        };
        if levels.contains(&n) {
            return Err(err(format!("{n} is given twice")));
        }
        levels.push(n);
    }
    Ok(levels)
}

/// `--layout`, or the old `--mongo-layout`/`--fidelity` spelled as layouts; `None` when none
/// was given (each target then gets its default layouts, see [`expand`]).
fn parse_layouts(
    args: &CoreDataArgs,
    notes: &mut Vec<String>,
) -> Result<Option<Vec<Layout>>, ConfigError> {
    if args.mongo_layout.is_none() && args.fidelity.is_none() {
        return match &args.layout {
            None => Ok(None),
            Some(list) => parse_list(list, Layout::parse)
                .map(Some)
                .ok_or_else(|| ConfigError::Layout(list.clone())),
        };
    }
    if args.layout.is_some() {
        return Err(ConfigError::OldAndNewLayout);
    }
    let fidelity = match args.fidelity.as_deref() {
        None | Some("modern") => Fidelity::Modern,
        Some("2018") => Fidelity::Y2018,
        Some(other) => return Err(ConfigError::Fidelity(other.to_string())),
    };
    let mongo = match args.mongo_layout.as_deref() {
        None if fidelity == Fidelity::Y2018 => MongoLayout::Referenced,
        None => MongoLayout::Embedded,
        Some(name) => name
            .parse()
            .map_err(|_| ConfigError::MongoLayout(name.to_string()))?,
    };
    let layout = match (mongo, fidelity) {
        (MongoLayout::Embedded, Fidelity::Y2018) => return Err(ConfigError::FidelityLayout),
        (MongoLayout::Embedded, Fidelity::Modern) => Layout::Y2018,
        (MongoLayout::Referenced, Fidelity::Modern) => Layout::Y2018Referenced,
        (MongoLayout::Referenced, Fidelity::Y2018) => Layout::Y2018Exact,
    };
    notes.push(format!(
        "--mongo-layout and --fidelity are deprecated: this is --layout {}",
        layout.name()
    ));
    Ok(Some(if layout == Layout::Y2018 {
        vec![layout]
    } else {
        // The old flags changed MongoDB only; every other target kept its 2018 layout.
        vec![Layout::Y2018, layout]
    }))
}

/// One column per target, layout and transport that go together. Without `--layout`, every
/// target runs in its 2018 layout, and in a default run (no `--target`) PostgreSQL also in
/// EdgeX 4.0's, so the default table shows what EdgeX 4.0 stores today. A service target
/// (`http://…`) runs once, whatever `--layout` says; `--via http` serves each store in its
/// EdgeX layout and leaves out (with a note) the stores that have none.
fn expand(
    specs: Vec<TargetSpec>,
    layouts: Option<&[Layout]>,
    default_run: bool,
    vias: &[Via],
    notes: &mut Vec<String>,
) -> Vec<TargetSpec> {
    let mut out = Vec::new();
    for spec in specs {
        if spec.kind.is_service() {
            out.push(spec);
            continue;
        }
        for &via in vias {
            if via.is_http() {
                match spec.edgex_layout() {
                    Some(layout) => out.push(TargetSpec {
                        name: format!("{}{}", spec.name, via.column_suffix()),
                        layout,
                        via,
                        ..spec.clone()
                    }),
                    None => notes.push(format!(
                        "{}: no EdgeX layout, so no core-data service in front of it \
                         (--via http serves Redis targets, the engine, PostgreSQL, SQLite and \
                         MongoDB)",
                        spec.name
                    )),
                }
                continue;
            }
            let defaults = match default_run {
                true => spec.kind.default_run_layouts(),
                false => &[Layout::Y2018],
            };
            for &layout in layouts.unwrap_or(defaults) {
                if !spec.has_layout(layout) {
                    continue;
                }
                out.push(TargetSpec {
                    name: format!("{}{}", spec.name, layout.column_suffix()),
                    layout,
                    via,
                    ..spec.clone()
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(args: &[&str]) -> Vec<String> {
        use clap::Parser;
        let cli =
            crate::cli::Cli::try_parse_from(["edgebench", "coredata"].iter().chain(args.iter()))
                .unwrap_or_else(|e| panic!("{e}"));
        let crate::cli::Command::Coredata(a) = cli.command else {
            panic!("coredata")
        };
        CoreDataConfig::from_args(&a, Arc::default())
            .unwrap_or_else(|e| panic!("{e}"))
            .targets
            .into_iter()
            .map(|t| format!("{}:{}:{:?}", t.name, t.layout.name(), t.via))
            .collect()
    }

    #[test]
    fn layouts_and_vias_expand_into_columns() {
        assert_eq!(
            columns(&[
                "-t",
                "pg-uds,embedded-direct,sqlite",
                "--layout",
                "2018,edgex"
            ]),
            [
                "PostgreSQL_UDS:2018:Direct",
                "PostgreSQL_UDS_EdgeX4:edgex4:Direct",
                "Embedded_Direct:2018:Direct",
                "SQLite_Embedded:2018:Direct",
                "SQLite_Embedded_EdgeX4:edgex4:Direct",
            ]
        );
        // With --target and no --layout: the 2018 layout only.
        assert_eq!(columns(&["-t", "pg-tcp"]), ["PostgreSQL_TCP:2018:Direct"]);
        assert_eq!(
            columns(&["-t", "redis-uds,embedded-direct", "--via", "http-tcp"]),
            ["RedisDB_UDS+HTTP_TCP:edgex3:HttpTcp"]
        );
        assert_eq!(
            columns(&["-t", "x=http://127.0.0.1:1", "--layout", "edgex4"]),
            ["x:2018:Direct"],
            "a service target runs once, whatever the layout"
        );
        assert_eq!(
            columns(&["-t", "m=mongodb://h:1", "--mongo-layout", "referenced"]),
            ["m:2018:Direct", "m_Referenced:2018-referenced:Direct"]
        );
        assert_eq!(
            columns(&[
                "-t",
                "m=mongodb://h:1",
                "--layout",
                "2018,edgex",
                "--via",
                "direct,http-uds"
            ]),
            [
                "m:2018:Direct",
                "m_EdgeX4:edgex4:Direct",
                "m+HTTP_UDS:edgex4:HttpUds"
            ]
        );
    }
}

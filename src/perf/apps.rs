//! PadoGrid's apps, edgebench's targets.
//!
//! The IMDG benchmark bundle has one perf_test app per product (`apps/perf_test_redis`,
//! `apps/perf_test_hazelcast`, ...), each with its own `results/`; `clean_results -all` and
//! `create_csv -all` span every app, and the `-all` CSVs gather one row per results file of
//! every app, column 1 naming the app (reference §5.2, §6). edgebench is one program run
//! against many targets, so each target is an app: `test_group --target T` writes into
//! `results/perf/perf_test_<t>/` (`<t>` = the target's column name in lower case), and the
//! `-all` tools span every `perf_test_*` directory under `results/perf/`.
//!
//! Invariants:
//! - An app's name is its directory name, so CSV column 1 says which target a row measured.
//! - The `-all` CSVs and the markdown comparison are written at `results/perf/` itself (the
//!   bundle writes them into the invoking app; edgebench has no invoking app).
//! - Apps are listed in name order, as the bundle's `ls` lists them.

use crate::runner::stats::median;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use super::csv::{CsvError, PerfApp, ResultsKind};

/// The prefix of every app directory (the bundle's `perf_test_<product>`).
pub const APP_PREFIX: &str = "perf_test_";

/// The name of the file `create_csv -all` writes beside `results-group-all.csv`.
pub const GROUP_COMPARISON: &str = "results-group-all.md";

/// The app directory name of target column `target`: `RedisDB_TCP` → `perf_test_redisdb_tcp`.
pub fn app_name(target: &str) -> String {
    let t: String = target
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{APP_PREFIX}{t}")
}

/// The app of target column `target` under `root` (`results/perf`).
pub fn app_for(root: &Path, target: &str) -> PerfApp {
    let name = app_name(target);
    PerfApp {
        results_dir: root.join(&name),
        name,
    }
}

/// Every app under `root`: its `perf_test_*` directories, in name order. A missing `root`
/// has none.
pub fn list_apps(root: &Path) -> io::Result<Vec<PerfApp>> {
    let entries = match std::fs::read_dir(root) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut apps = Vec::new();
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with(APP_PREFIX) && entry.file_type()?.is_dir() {
            apps.push(PerfApp {
                results_dir: entry.path(),
                name,
            });
        }
    }
    apps.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(apps)
}

/// The app that stands for "all apps" in [`super::csv::create_csv_all`]: `root` itself.
pub fn all_apps_home(root: &Path) -> PerfApp {
    PerfApp {
        name: "perf_test".into(),
        results_dir: root.to_path_buf(),
    }
}

/// One group run read back from a `results-group.csv` row. A figure PadoGrid printed as
/// something other than a number (a run too short to time: `Max Time (msec): 0` makes the
/// throughput `∞`) is NaN: the run still counts, and medians skip it.
#[derive(Debug, Clone, PartialEq)]
struct GroupRow {
    group: String,
    m_throughput: f64,
    m_latency_ms: f64,
}

/// Reads the group rows of a CSV. Group is column 4; the M figures are counted from the end
/// (a `,` in Comment or Operations shifts the middle columns, as in PadoGrid's own CSV).
fn group_rows(csv: &str) -> Vec<GroupRow> {
    csv.lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split(", ").collect();
            let n = cols.len();
            if n < 22 {
                return None;
            }
            let number = |s: &str| s.trim().parse::<f64>().unwrap_or(f64::NAN);
            Some(GroupRow {
                group: cols[3].trim().to_string(),
                m_throughput: number(cols[n - 4]),
                m_latency_ms: number(cols[n - 3]),
            })
        })
        .collect()
}

/// The markdown comparison of the apps' group runs, read from each app's
/// `results-group.csv` (so `create_csv` runs first): per group and app, the number of runs,
/// the median M throughput with its min–max, the median M latency, and the throughput ratio
/// to the first app that ran the group. `None` when no app has group results.
pub fn group_comparison(apps: &[PerfApp]) -> Result<Option<String>, CsvError> {
    // group → app → rows, groups and apps in name order.
    let mut by_group: BTreeMap<String, Vec<(String, Vec<GroupRow>)>> = BTreeMap::new();
    for app in apps {
        // The app's results-group.csv, which create_csv has just written.
        let path = app.results_dir.join(ResultsKind::Group.csv_name());
        let csv = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(error) => return Err(CsvError::Io { path, error }),
        };
        let mut per_group: BTreeMap<String, Vec<GroupRow>> = BTreeMap::new();
        for row in group_rows(&csv) {
            per_group.entry(row.group.clone()).or_default().push(row);
        }
        for (group, rows) in per_group {
            by_group
                .entry(group)
                .or_default()
                .push((app.name.clone(), rows));
        }
    }
    if by_group.is_empty() {
        return Ok(None);
    }
    let mut md = String::from(
        "| Group | App | Runs | M Throughput (inv/s), median | min–max | M Latency (ms), median | Throughput vs first app |\n|-|-|-|-|-|-|-|\n",
    );
    for (group, per_app) in &by_group {
        let mut first: Option<f64> = None;
        for (app, rows) in per_app {
            let mut thr: Vec<f64> = rows.iter().map(|r| r.m_throughput).collect();
            let mut lat: Vec<f64> = rows.iter().map(|r| r.m_latency_ms).collect();
            let m = median(&mut thr);
            // `thr` now holds the finite figures, sorted.
            let spread = match (thr.first(), thr.last()) {
                (Some(min), Some(max)) => format!("{min:.1}–{max:.1}"),
                _ => "n/a".into(),
            };
            if first.is_none() && m.is_finite() {
                first = Some(m);
            }
            let ratio = match first {
                Some(base) if base > 0.0 && m.is_finite() => format!("{:.2}x", m / base),
                _ => "n/a".into(),
            };
            let shown = |x: f64, decimals: usize| {
                if x.is_finite() {
                    format!("{x:.decimals$}")
                } else {
                    "n/a".into()
                }
            };
            let _ = writeln!(
                md,
                "| {group} | {app} | {} | {} | {spread} | {} | {ratio} |",
                rows.len(),
                shown(m, 1),
                shown(median(&mut lat), 4),
            );
        }
    }
    Ok(Some(md))
}

/// Writes the comparison of `apps` to `root/results-group-all.md` (whole, via a temp file),
/// returning its path and text; `None` when no app has group results.
pub fn write_group_comparison(
    root: &Path,
    apps: &[PerfApp],
) -> Result<Option<(PathBuf, String)>, CsvError> {
    let Some(md) = group_comparison(apps)? else {
        let _ = std::fs::remove_file(root.join(GROUP_COMPARISON));
        return Ok(None);
    };
    let path = root.join(GROUP_COMPARISON);
    crate::report::write_whole_file(&path, md.as_bytes()).map_err(|error| CsvError::Io {
        path: path.clone(),
        error,
    })?;
    Ok(Some((path, md)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn app_names_follow_the_bundle() {
        assert_eq!(app_name("RedisDB_TCP"), "perf_test_redisdb_tcp");
        assert_eq!(app_name("my redis"), "perf_test_my_redis");
        let app = app_for(Path::new("results/perf"), "Embedded_TCP");
        assert_eq!(
            app.results_dir,
            Path::new("results/perf/perf_test_embedded_tcp")
        );
    }

    #[test]
    fn rows_are_read_from_both_ends() {
        let header = ResultsKind::Group.header();
        // Operations holds a comma, which shifts the middle columns by one.
        let row = "perf_test_a, group-g1.txt, a, g1, g1, put, get, c, 1, 0, 10, 2, 5, s, t, 10, 5, 6, 10, 2000.5, 0.5, 1666.6667, 0.6";
        let rows = group_rows(&format!("{header}\n{row}\n"));
        assert_eq!(
            rows,
            vec![GroupRow {
                group: "g1".into(),
                m_throughput: 2000.5,
                m_latency_ms: 0.5
            }]
        );
    }
}

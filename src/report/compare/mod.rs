//! `report compare OLD NEW`: benchstat's comparison of two runs, without Go.
//!
//! Each side is a coredata results directory or a Go benchmark text ([`Samples`]). Every
//! benchmark (keyed by its whole Go name, so each target's column is compared on its own) gets
//! a [`Row`]: the median ns/op of each side, the change of the medians, and the two-sided
//! Mann–Whitney U test over the repetitions ([`utest`]). The rules are benchstat's
//! (golang.org/x/perf `benchmath.AssumeNothing` and `cmd/benchstat`):
//!
//! - The centre is the median (the mean of the two middle values for an even count).
//! - A change is significant when p ≤ α = 0.05; otherwise the table shows `~`. (benchstat
//!   prints `~` when p > α, so p = 0.05 exactly counts as significant.)
//! - When p > α and both sides have fewer repetitions than the smallest n whose best possible
//!   p is ≤ α (4: 2/C(8,4) = 0.029, while 3 gives 0.1), the row notes
//!   `need >= 4 samples to detect a difference at alpha level 0.05`.
//! - Every value equal on both sides: p = 1 and the note `all samples are equal`.
//! - A benchmark on one side only is listed with the other side empty.
//! - Each target's table ends with a geomean row when it has more than one benchmark: the
//!   geometric mean of each side's medians, and the change as the geometric mean of the
//!   per-benchmark ratios (not the ratio of the geomeans), with benchstat's notes when the
//!   sets differ or a median is 0.
//!
//! Where we differ, on purpose: the `± x%` after a median is the spread, the largest distance
//! of any repetition from the median as a percentage of it (what `results.md` shows), not
//! benchstat's 95% confidence interval of the median. That interval needs at least 6
//! repetitions to be finite, so at the usual `--count 5` benchstat prints `± ∞`; the spread
//! says something at any count. Only ns/op is compared (benchstat also tabulates B/op and
//! allocs/op).
//!
//! [`Comparison`] is plain data, public so that other renderers (the HTML report) can show
//! it; [`Comparison::markdown`] is the benchstat-like table.
//!
//! Other workloads' runs have no repetitions to test, so benchstat's verdict does not apply
//! to them: a workload that `report compare` knows implements [`Compared`] (its own table of
//! old against new), and [`markdown`] hands it two directories that are both its results.

mod markdown;
pub mod samples;
pub mod utest;

use std::path::Path;

pub use samples::Samples;

use super::workload::Workload;

/// A workload whose runs `report compare` compares with a table of its own (the binary lists
/// them: `app::report`). Core-data runs and Go texts need none: they are benchstat's.
pub trait Compared: Workload {
    /// The markdown comparison of the runs in `old` and `new`, two directories this workload
    /// [recognises](Workload::recognises).
    fn compare(&self, old: &Path, new: &Path) -> Result<String, CompareError>;
}

/// `report compare OLD NEW`: the table of the one of `workloads` whose results both inputs
/// are, or benchstat's comparison ([`Comparison`]) when neither is any of theirs; inputs of
/// two workloads are refused.
pub fn markdown(
    workloads: &[&dyn Compared],
    old: &Path,
    new: &Path,
) -> Result<String, CompareError> {
    // The last that recognises a directory, as `report html` and `report merge` decide.
    let of = |p: &Path| {
        p.is_dir()
            .then(|| workloads.iter().rposition(|w| w.recognises(p)))
            .flatten()
    };
    let kind = |i: Option<usize>| i.map_or("coredata (or Go text)", |i| workloads[i].name());
    match (of(old), of(new)) {
        (None, None) => Ok(Comparison::read(old, new)?.markdown()),
        (Some(i), Some(j)) if i == j => workloads[i].compare(old, new),
        (i, j) => Err(CompareError::Mixed {
            old: old.display().to_string(),
            old_kind: kind(i),
            new: new.display().to_string(),
            new_kind: kind(j),
        }),
    }
}

/// benchstat's default α: a change is significant when p ≤ this.
pub const ALPHA: f64 = 0.05;

/// Why two inputs could not be compared; each message names the input and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CompareError {
    /// The path does not exist or cannot be read.
    #[error(
        "cannot read {path}: {reason} (give a results directory written by edgebench coredata \
         --out DIR, or a go test -bench text)"
    )]
    Unreadable {
        /// The path as given.
        path: String,
        /// What the OS said.
        reason: String,
    },
    /// A directory without `bench.txt`.
    #[error(
        "{dir} has no bench.txt: give a results directory written by edgebench coredata --out \
         DIR, or a go test -bench text"
    )]
    NoBenchText {
        /// The directory as given.
        dir: String,
    },
    /// A file with no benchmark line.
    #[error(
        "no Go benchmark lines (BenchmarkName-P  N  T ns/op) in {path}: give the output of go \
         test -bench, or an edgebench coredata results directory"
    )]
    NoBenchmarks {
        /// The file read.
        path: String,
    },
    /// Not one benchmark name on both sides.
    #[error(
        "{old} and {new} have no benchmark in common: compare two runs of the same benchmarks \
         on the same targets (the names, -N suffix included, must match)"
    )]
    NothingInCommon {
        /// The old side's label.
        old: String,
        /// The new side's label.
        new: String,
    },
    /// Runs of two workloads.
    #[error(
        "{old} holds {old_kind} results but {new} holds {new_kind} results: compare two runs \
         of one workload"
    )]
    Mixed {
        /// The old input as given.
        old: String,
        /// Its workload.
        old_kind: &'static str,
        /// The new input as given.
        new: String,
        /// Its workload.
        new_kind: &'static str,
    },
    /// A workload's own reason (a file it cannot read, nothing in common), whose message
    /// names the input and the fix.
    #[error("{0}")]
    Workload(String),
}

/// One side of one benchmark.
#[derive(Debug, Clone, PartialEq)]
pub struct Side {
    /// The median ns/op of the repetitions.
    pub median_ns: f64,
    /// The largest distance of a repetition from the median, in percent of the median.
    pub spread_pct: f64,
    /// Repetitions.
    pub n: usize,
}

/// One benchmark of one target, old against new.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The target (the Go name up to its first `/`); empty for a plain Go benchmark.
    pub target: String,
    /// The benchmark (the rest of the Go name, `-N` suffix included).
    pub benchmark: String,
    /// The old side; `None` when the benchmark is only in the new input.
    pub old: Option<Side>,
    /// The new side; `None` when the benchmark is only in the old input.
    pub new: Option<Side>,
    /// `(new/old − 1)·100` of the medians; 0 when they are equal, `None` when a side is
    /// missing or the old median is 0. Set whether or not the change is significant.
    pub delta_pct: Option<f64>,
    /// The U test's two-sided p-value; `None` when a side is missing.
    pub p_value: Option<f64>,
    /// p ≤ [`ALPHA`]: the table shows the change instead of `~`.
    pub significant: bool,
    /// benchstat's notes on this comparison (too few samples, all samples equal).
    pub notes: Vec<String>,
}

/// The summary row of one target's table.
#[derive(Debug, Clone, PartialEq)]
pub struct Geomean {
    /// The target it summarises.
    pub target: String,
    /// Geometric mean of the old medians (`None` when one is ≤ 0).
    pub old_ns: Option<f64>,
    /// Geometric mean of the new medians (`None` when one is ≤ 0).
    pub new_ns: Option<f64>,
    /// Geometric mean of new/old over the benchmarks on both sides, as a change in percent.
    pub delta_pct: Option<f64>,
    /// benchstat's notes (sets differ, medians not all > 0).
    pub notes: Vec<String>,
}

/// The whole comparison: rows grouped by target (targets and benchmarks in first-seen order,
/// old input first), and one geomean per target of more than one row.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The old input as given.
    pub old_label: String,
    /// The new input as given.
    pub new_label: String,
    /// Every benchmark of either side.
    pub rows: Vec<Row>,
    /// One per target with more than one row, in the rows' target order.
    pub geomeans: Vec<Geomean>,
}

impl Comparison {
    /// Reads both inputs and compares them.
    pub fn read(old: &Path, new: &Path) -> Result<Comparison, CompareError> {
        compare(&Samples::read(old)?, &Samples::read(new)?)
    }

    /// The targets in table order.
    pub fn targets(&self) -> Vec<&str> {
        targets_of(&self.rows)
    }

    /// benchstat's table in markdown: one table per target, notes as footnotes.
    pub fn markdown(&self) -> String {
        markdown::render(self)
    }
}

/// Compares every benchmark of `old` with the same-named one of `new`; an error when no name
/// is on both sides.
pub fn compare(old: &Samples, new: &Samples) -> Result<Comparison, CompareError> {
    let mut names: Vec<&str> = old.benchmarks.iter().map(|(n, _)| n.as_str()).collect();
    for (name, _) in &new.benchmarks {
        if old.get(name).is_none() {
            names.push(name);
        }
    }
    if !names
        .iter()
        .any(|n| old.get(n).is_some() && new.get(n).is_some())
    {
        return Err(CompareError::NothingInCommon {
            old: old.label.clone(),
            new: new.label.clone(),
        });
    }
    let rows: Vec<Row> = names
        .iter()
        .map(|name| row(name, old.get(name), new.get(name)))
        .collect();
    // Group by target, keeping first-seen order within and between targets.
    let targets = targets_of(&rows);
    let mut grouped: Vec<Row> = Vec::with_capacity(rows.len());
    for target in &targets {
        grouped.extend(rows.iter().filter(|r| r.target == *target).cloned());
    }
    let geomeans = targets
        .iter()
        .filter_map(|t| {
            let of_target: Vec<&Row> = grouped.iter().filter(|r| r.target == *t).collect();
            (of_target.len() > 1).then(|| geomean(t, &of_target))
        })
        .collect();
    Ok(Comparison {
        old_label: old.label.clone(),
        new_label: new.label.clone(),
        rows: grouped,
        geomeans,
    })
}

/// The distinct targets of `rows`, in first-seen order.
fn targets_of(rows: &[Row]) -> Vec<&str> {
    let mut targets: Vec<&str> = Vec::new();
    for row in rows {
        if !targets.contains(&row.target.as_str()) {
            targets.push(&row.target);
        }
    }
    targets
}

/// One benchmark's row from its repetitions on each side.
fn row(name: &str, old: Option<&[f64]>, new: Option<&[f64]>) -> Row {
    let (target, benchmark) = samples::split_target(name);
    let old_side = old.map(side);
    let new_side = new.map(side);
    let mut notes = Vec::new();
    let (mut p_value, mut delta_pct) = (None, None);
    if let (Some(x1), Some(x2), Some(o), Some(n)) = (old, new, &old_side, &new_side) {
        let p = match utest::mann_whitney(x1, x2) {
            Some(t) => {
                // Too few repetitions for any difference to show (benchstat warns only when
                // the test did not reject, and when both sides are short).
                let need = samples_needed(ALPHA);
                if t.p > ALPHA && x1.len() < need && x2.len() < need {
                    notes.push(format!(
                        "need >= {need} samples to detect a difference at alpha level {ALPHA}"
                    ));
                }
                t.p
            }
            None => {
                notes.push("all samples are equal".to_string());
                1.0
            }
        };
        p_value = Some(p);
        delta_pct = ratio(o.median_ns, n.median_ns).map(|r| (r - 1.0) * 100.0);
    }
    Row {
        target: target.to_string(),
        benchmark: benchmark.to_string(),
        old: old_side,
        new: new_side,
        delta_pct,
        significant: p_value.is_some_and(|p| p <= ALPHA),
        p_value,
        notes,
    }
}

/// `new/old`, as benchstat takes it: 1 for equal medians (0 against 0 too), `None` against
/// an old 0.
fn ratio(old: f64, new: f64) -> Option<f64> {
    if old == new {
        Some(1.0)
    } else if old == 0.0 {
        None
    } else {
        Some(new / old)
    }
}

/// The median and spread of one side's repetitions (at least one).
fn side(values: &[f64]) -> Side {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mid = sorted.len() / 2;
    let median = if sorted.len() % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    };
    let spread_pct = if median > 0.0 {
        sorted
            .iter()
            .map(|v| (v - median).abs() / median * 100.0)
            .fold(0.0, f64::max)
    } else {
        0.0
    };
    Side {
        median_ns: median,
        spread_pct,
        n: values.len(),
    }
}

/// The fewest repetitions per side for which the U test can reach p ≤ `alpha` at all: the
/// smallest n with 2/C(2n, n) ≤ alpha (fully separated samples), as benchstat's table of
/// minimum p-values gives it (4 for 0.05).
fn samples_needed(alpha: f64) -> usize {
    let mut n = 1usize;
    // C(2n, n) grows fast; 2/C(2n,n) is under any useful alpha long before 64.
    while n < 64 {
        let central = (1..=n).fold(1.0f64, |c, i| c * (n + i) as f64 / i as f64);
        if (2.0 / central).min(1.0) <= alpha {
            break;
        }
        n += 1;
    }
    n
}

/// The geomean row of one target, as benchstat's summary row.
fn geomean(target: &str, rows: &[&Row]) -> Geomean {
    let mut notes = Vec::new();
    let medians = |pick: fn(&Row) -> Option<&Side>| -> Vec<f64> {
        rows.iter()
            .filter_map(|r| pick(r).map(|s| s.median_ns))
            .collect()
    };
    let old_ns = geometric_mean(&medians(|r| r.old.as_ref()));
    let new_ns = geometric_mean(&medians(|r| r.new.as_ref()));
    if old_ns.is_none() || new_ns.is_none() {
        notes.push("summaries must be >0 to compute geomean".to_string());
    }
    let paired: Vec<(f64, f64)> = rows
        .iter()
        .filter_map(|r| Some((r.old.as_ref()?.median_ns, r.new.as_ref()?.median_ns)))
        .collect();
    if paired.len() != rows.iter().filter(|r| r.old.is_some()).count() {
        notes.push("benchmark set differs from baseline; geomeans may not be comparable".into());
    }
    let ratios: Option<Vec<f64>> = paired.iter().map(|&(o, n)| ratio(o, n)).collect();
    let delta_pct = ratios
        .as_deref()
        .and_then(geometric_mean)
        .map(|r| (r - 1.0) * 100.0);
    Geomean {
        target: target.to_string(),
        old_ns,
        new_ns,
        delta_pct,
        notes,
    }
}

/// exp(mean(ln x)); `None` for no values or any value ≤ 0.
fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|&v| v <= 0.0) {
        return None;
    }
    let mean_ln = values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64;
    Some(mean_ln.exp())
}

#[cfg(test)]
mod tests;

//! `edgebench report merge PATH...`: the results of several load hosts (one edgebench process
//! each, the same `--run-id`) as one run. Counts add, throughputs add (each host's ops/s
//! summed: the hosts ran concurrently), and latency percentiles are read from the hosts' HDR
//! histograms added together — exactly the percentiles of one histogram that recorded every
//! host's operations, never an average of percentiles. Each host's own figures are kept
//! beside the total.
//!
//! Inputs are results directories of `kv`, `coredata`, `fleet` or `ycsb`, or kv's
//! `--json-out-file` files.
//! Invariants: every input is of one workload; every input carries the same run id unless
//! `--force`; a merge is never merged again (its hosts would count twice); files are read
//! whole up to [`LARGEST_INPUT`].

use std::path::{Path, PathBuf};

use hdrhistogram::Histogram;

use crate::report::workload::{Host, Merged, Workload};

/// The largest results file read (a kv document with a thousand rows is a few MB).
pub const LARGEST_INPUT: u64 = 256 << 20;

/// Why the inputs cannot be merged. Each message is one line naming the path and the fix.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// Fewer than two inputs.
    #[error("report merge needs the results of at least two load hosts: give two or more PATHs")]
    TooFew,
    /// An input that cannot be read or parsed.
    #[error("report merge: cannot read {path}: {why}")]
    Read {
        /// The input.
        path: PathBuf,
        /// What went wrong, and what to give instead.
        why: String,
    },
    /// Inputs of different workloads.
    #[error(
        "report merge: {first} is {first_kind} results but {other} is {other_kind}: merge one \
         workload's results at a time"
    )]
    Mixed {
        /// The first input.
        first: PathBuf,
        /// Its workload.
        first_kind: &'static str,
        /// The first input of another workload.
        other: PathBuf,
        /// Its workload.
        other_kind: &'static str,
    },
    /// Run ids that differ, or are missing.
    #[error(
        "report merge: {ids}: merge the hosts of one run (the same --run-id on each), or add \
         --force to merge them anyway"
    )]
    RunIds {
        /// The first input.
        first: PathBuf,
        /// The first input whose id differs from the first's (or, the first having none,
        /// the second input).
        other: PathBuf,
        /// Which has which id, in words ([`run_ids_differ`]).
        ids: String,
    },
    /// The hosts measured different things.
    #[error("report merge: {path} {why}")]
    Shape {
        /// The input that does not match the first.
        path: PathBuf,
        /// How it differs, and the fix.
        why: String,
    },
}

impl MergeError {
    /// A read error of `path`.
    pub fn read(path: &Path, why: impl std::fmt::Display) -> MergeError {
        MergeError::Read {
            path: path.to_path_buf(),
            why: why.to_string(),
        }
    }

    /// A shape error of `path`.
    pub fn shape(path: &Path, why: impl Into<String>) -> MergeError {
        MergeError::Shape {
            path: path.to_path_buf(),
            why: why.into(),
        }
    }
}

/// Merges the results at `paths` (see the module doc) with the workload that reads them,
/// among `workloads`; `force` merges inputs whose run ids differ or are missing.
pub fn merge(
    workloads: &[&dyn Workload],
    paths: &[PathBuf],
    force: bool,
) -> Result<Box<dyn Merged>, MergeError> {
    if paths.len() < 2 {
        return Err(MergeError::TooFew);
    }
    let mut inputs = Vec::with_capacity(paths.len());
    for path in paths {
        inputs.push(read(workloads, path)?);
    }
    let (first_kind, first) = &inputs[0];
    if let Some((other_kind, other)) = inputs.iter().find(|(k, _)| k != first_kind) {
        return Err(MergeError::Mixed {
            first: first.path.clone(),
            first_kind: workloads[*first_kind].name(),
            other: other.path.clone(),
            other_kind: workloads[*other_kind].name(),
        });
    }
    let workload = workloads[*first_kind];
    let hosts: Vec<Host> = inputs.into_iter().map(|(_, host)| host).collect();
    if !force {
        check_run_ids(&hosts)?;
    }
    let labels = crate::report::html::load::labels(paths);
    workload.merge(labels.into_iter().zip(hosts).collect())
}

/// Reads `path` (a results directory, whose file is the one its workload merges, or a
/// results file) and the workload, by its place in `workloads`, that recognises it.
fn read(workloads: &[&dyn Workload], path: &Path) -> Result<(usize, Host), MergeError> {
    let file = if path.is_dir() {
        // The last registered workload whose file is there (the later, the more specific);
        // else the first's, so the error names the file looked for.
        let files: Vec<&str> = workloads.iter().filter_map(|w| w.merge_file()).collect();
        let name = files
            .iter()
            .rev()
            .find(|f| path.join(f).is_file())
            .or(files.first())
            .copied()
            .unwrap_or("results.json");
        path.join(name)
    } else {
        path.to_path_buf()
    };
    let doc = read_json(path, &file)?;
    for (i, w) in workloads.iter().enumerate() {
        if let Some(host) = w.host(path, &file, &doc) {
            return host.map(|h| (i, h));
        }
    }
    match doc.pointer("/meta/workload").and_then(|w| w.as_str()) {
        Some(other) => Err(MergeError::read(
            path,
            format!(
                "{other} results cannot be merged; give results directories of edgebench \
                 kv, coredata or fleet"
            ),
        )),
        None => Err(MergeError::read(
            path,
            "not results of edgebench kv, coredata or fleet; give their results \
             directories, or kv's --json-out-file files",
        )),
    }
}

/// The error for an input that is itself a merge.
pub fn already_merged(path: &Path) -> MergeError {
    MergeError::read(
        path,
        "it is already a merge of several hosts; merge the hosts' own results instead",
    )
}

/// Every input has the first one's run id, and it has one.
fn check_run_ids(inputs: &[Host]) -> Result<(), MergeError> {
    let first = &inputs[0];
    let odd = match first.run_id.as_deref() {
        None => inputs.get(1),
        Some(id) => inputs.iter().find(|i| i.run_id.as_deref() != Some(id)),
    };
    match odd {
        Some(other) => Err(MergeError::RunIds {
            first: first.path.clone(),
            other: other.path.clone(),
            ids: run_ids_differ(
                &first.path,
                first.run_id.as_deref(),
                &other.path,
                other.run_id.as_deref(),
            ),
        }),
        None => Ok(()),
    }
}

/// Which of two inputs has which run id, in words: `neither a nor b has a run id`, `a has no
/// run id but b has "x"`, `a has run id "x" but b has none` or `… but b has "y"`.
fn run_ids_differ(
    first: &Path,
    first_id: Option<&str>,
    other: &Path,
    other_id: Option<&str>,
) -> String {
    let (a, b) = (first.display(), other.display());
    match (first_id, other_id) {
        (None, None) => format!("neither {a} nor {b} has a run id"),
        (None, Some(o)) => format!("{a} has no run id but {b} has {o:?}"),
        (Some(f), None) => format!("{a} has run id {f:?} but {b} has none"),
        (Some(f), Some(o)) => format!("{a} has run id {f:?} but {b} has {o:?}"),
    }
}

/// Reads `file` (of input `path`) as JSON, at most [`LARGEST_INPUT`] bytes.
fn read_json(path: &Path, file: &Path) -> Result<serde_json::Value, MergeError> {
    use std::io::Read as _;
    let f = std::fs::File::open(file).map_err(|e| MergeError::read(file, e))?;
    let mut bytes = Vec::new();
    f.take(LARGEST_INPUT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| MergeError::read(file, e))?;
    if bytes.len() as u64 > LARGEST_INPUT {
        return Err(MergeError::read(
            file,
            format!(
                "larger than {} MB; is it a results file?",
                LARGEST_INPUT >> 20
            ),
        ));
    }
    serde_json::from_slice(&bytes).map_err(|e| {
        MergeError::read(
            path,
            format!(
                "{} is not JSON ({e}); give a results directory or a --json-out-file",
                file.display()
            ),
        )
    })
}

/// The sum of `histograms` (each ns, auto-resizing): one histogram holding every value any of
/// them recorded, so its percentiles are those of all the values together.
pub fn sum_histograms<'a>(
    histograms: impl IntoIterator<Item = &'a Histogram<u64>>,
) -> Histogram<u64> {
    let mut total = crate::runner::stats::latency_histogram();
    for h in histograms {
        // An auto-resizing histogram takes any other's values.
        let _ = total.add(h);
    }
    total
}

/// A histogram as results files keep it (V2 compressed, base64), made auto-resizing again;
/// `None` when it does not decode. A decoded histogram keeps the range it was encoded with,
/// so adding a host with slower requests into it would fail: the copy takes any value.
pub fn decode(b64: &str) -> Option<Histogram<u64>> {
    let decoded = crate::report::html::latency::decode(b64)?;
    let mut h = crate::runner::stats::latency_histogram();
    h.add(&decoded).ok()?;
    Some(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_id_refusals_say_who_has_which() {
        let (a, b) = (Path::new("a.json"), Path::new("b.json"));
        let said = |fa, fb| {
            MergeError::RunIds {
                first: a.into(),
                other: b.into(),
                ids: run_ids_differ(a, fa, b, fb),
            }
            .to_string()
        };
        let tail = ": merge the hosts of one run (the same --run-id on each), or add --force \
                    to merge them anyway";
        assert_eq!(
            said(None, None),
            format!("report merge: neither a.json nor b.json has a run id{tail}")
        );
        assert_eq!(
            said(None, Some("r1")),
            format!("report merge: a.json has no run id but b.json has \"r1\"{tail}")
        );
        assert_eq!(
            said(Some("r1"), None),
            format!("report merge: a.json has run id \"r1\" but b.json has none{tail}")
        );
        assert_eq!(
            said(Some("r1"), Some("r2")),
            format!("report merge: a.json has run id \"r1\" but b.json has \"r2\"{tail}")
        );
    }
}

//! `edgebench report html DIR...`: reads results directories back and builds one page.
//!
//! A directory's kind is told by its files: `fleet.json` (fleet), `memtier.txt` (kv),
//! `results-group-all.csv` (perf, `results/perf` after `create_csv -all`), `results.json`
//! (core-data). With several directories, those of one kind are merged into one comparison
//! (every column, run, target or app named `<directory>: <name>`, so one bar per directory
//! and target), and the kinds follow each other on the page.
//!
//! What the files do not record (the command line and machine of a kv or perf run, the
//! command of a core-data run) is taken from the directory's previous `report.html` when it
//! has one, so rebuilding a page does not lose it.

use std::io;
use std::path::{Path, PathBuf};

use super::{ChartError, Report, FILE};
use crate::report::workload::{Given, Workload};

/// Why a directory could not be made into a page: each names the path and what to give
/// instead.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// Not a directory edgebench wrote.
    #[error(
        "{}: no edgebench results here (results.json, fleet.json, memtier.txt or \
         results-group-all.csv); give a directory that edgebench coredata, kv or fleet \
         wrote, or results/perf after `edgebench perf create_csv -all`",
        .0.display()
    )]
    NotResults(PathBuf),
    /// A results file that cannot be read.
    #[error("cannot read {}: {error} (is the directory complete?)", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// A results file that is not what edgebench writes.
    #[error("{}: {error} (not a results file of this edgebench; rerun the benchmark)", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// Why.
        error: serde_json::Error,
    },
    /// A workload's own reading error (perf's CSV), whose message names the file and the fix.
    #[error(transparent)]
    Workload(Box<dyn std::error::Error + Send + Sync>),
    /// A chart.
    #[error(transparent)]
    Chart(#[from] ChartError),
}

/// Reads a results file whole.
pub fn read(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|error| LoadError::Read {
        path: path.to_path_buf(),
        error,
    })
}

/// Reads a JSON results file.
pub fn json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, LoadError> {
    serde_json::from_str(&read(path)?).map_err(|error| LoadError::Parse {
        path: path.to_path_buf(),
        error,
    })
}

/// `name` as a compared page names it: `label: name` with a label, else as it is.
pub fn named(label: Option<&str>, name: &str) -> String {
    match label {
        Some(l) => format!("{l}: {name}"),
        None => name.to_string(),
    }
}

/// One directory's markdown under a `## label` heading when a kind has `several`
/// directories on the page, else as it is.
pub fn heading(several: bool, label: &str, md: &str) -> String {
    if several {
        format!("## {label}\n\n{md}\n")
    } else {
        md.to_string()
    }
}

/// The place in `workloads` of the workload a directory belongs to: the last registered
/// that recognises it (see [`crate::report::workload`]).
pub fn owner(workloads: &[&dyn Workload], dir: &Path) -> Option<usize> {
    workloads.iter().rposition(|w| w.recognises(dir))
}

/// The facts a previous `report.html` in `dir` recorded (`<dt>k</dt><dd>v</dd>`), for what
/// the results files do not keep; empty without one.
pub fn recorded_facts(dir: &Path) -> Vec<(String, String)> {
    let Ok(html) = std::fs::read_to_string(dir.join(FILE)) else {
        return Vec::new();
    };
    html.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("<dt>")?;
            let (k, rest) = rest.split_once("</dt><dd>")?;
            let v = rest.strip_suffix("</dd>")?;
            Some((unescape(k), unescape(v)))
        })
        .collect()
}

/// The reverse of [`super::escape`].
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// The recorded facts among `keys`, in `keys`' order.
pub fn kept(recorded: &[(String, String)], keys: &[&str]) -> Vec<(String, String)> {
    keys.iter()
        .filter_map(|k| recorded.iter().find(|(r, _)| r == k).cloned())
        .collect()
}

/// The short names of `dirs` in a comparison (or of the hosts in `report merge`): the
/// directory's own name, or its whole path when two share a name, and `#N` (its place from 1)
/// after a path given twice.
pub fn labels(dirs: &[PathBuf]) -> Vec<String> {
    let short: Vec<String> = dirs
        .iter()
        .map(|d| {
            d.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| d.display().to_string())
        })
        .collect();
    short
        .iter()
        .zip(dirs)
        .enumerate()
        .map(|(i, (s, d))| {
            if short.iter().filter(|t| *t == s).count() == 1 {
                s.clone()
            } else if dirs.iter().filter(|e| *e == d).count() == 1 {
                d.display().to_string()
            } else {
                format!("{}#{}", d.display(), i + 1)
            }
        })
        .collect()
}

/// The page of one directory, or of several compared: each workload's directories merged
/// into its part of the page, in `workloads`' order.
pub fn build(workloads: &[&dyn Workload], dirs: &[PathBuf]) -> Result<Report, LoadError> {
    let labels = labels(dirs);
    let mut owned = Vec::with_capacity(dirs.len());
    for (dir, label) in dirs.iter().zip(&labels) {
        let owner = dir
            .is_dir()
            .then(|| owner(workloads, dir))
            .flatten()
            .ok_or_else(|| LoadError::NotResults(dir.clone()))?;
        owned.push((owner, Given { dir, label }));
    }
    let mut page: Option<Report> = None;
    for (i, workload) in workloads.iter().enumerate() {
        let of_kind: Vec<Given<'_>> = owned
            .iter()
            .filter(|(w, _)| *w == i)
            .map(|(_, g)| *g)
            .collect();
        if of_kind.is_empty() {
            continue;
        }
        let report = workload.report(&of_kind, dirs.len())?;
        match &mut page {
            None => page = Some(report),
            Some(p) => p.append(report),
        }
    }
    let mut page = page.ok_or_else(|| LoadError::NotResults(PathBuf::from(".")))?;
    if dirs.len() > 1 {
        page.page.title = format!("{} ({} results directories)", page.page.title, dirs.len());
        page.page.facts.push((
            "compared".into(),
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        ));
    }
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_directory_names_unless_two_share_one() {
        let dirs = [
            PathBuf::from("a/run1"),
            PathBuf::from("b/run1"),
            PathBuf::from("c/run2"),
        ];
        assert_eq!(labels(&dirs), ["a/run1", "b/run1", "run2"]);
        let twice = [
            PathBuf::from("a/x"),
            PathBuf::from("a/x"),
            PathBuf::from("y"),
        ];
        assert_eq!(labels(&twice), ["a/x#1", "a/x#2", "y"]);
    }

    #[test]
    fn facts_survive_a_rebuild() {
        let tmp = tempfile::tempdir().unwrap();
        let page = super::super::Page {
            facts: vec![
                ("command".into(), "edgebench kv --ratio \"1:10\" <x>".into()),
                ("machine".into(), "cpu & more".into()),
            ],
            ..Default::default()
        };
        std::fs::write(tmp.path().join(FILE), page.render()).unwrap();
        assert_eq!(recorded_facts(tmp.path()), page.facts);
        assert_eq!(
            kept(&recorded_facts(tmp.path()), &["machine", "edgebench"]),
            [("machine".to_string(), "cpu & more".to_string())]
        );
    }

    #[test]
    fn a_directory_without_results_is_named_with_the_fix() {
        let tmp = tempfile::tempdir().unwrap();
        let Err(err) = build(&[], &[tmp.path().to_path_buf()]) else {
            panic!("an empty directory is no results directory")
        };
        let msg = err.to_string();
        assert!(msg.starts_with(&tmp.path().display().to_string()), "{msg}");
        assert!(
            msg.contains("give a directory that edgebench coredata"),
            "{msg}"
        );
    }
}

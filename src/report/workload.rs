//! The one seam between the reports and the workloads: `report html` and `report merge` know
//! a workload only as a [`Workload`], and iterate the list the binary registers
//! (`app::WORKLOADS`), so a new workload is one impl and one line there, not a `match` here.
//!
//! Invariants: this layer never names a workload's results types; a workload's results reach
//! the machinery here only as a [`Report`] (a page section), a [`Host`] (its own payload,
//! opaque here) or a [`Merged`] (that writes itself). The registry's order is the page's
//! order, and a directory belongs to the *last* registered workload that recognises it: a
//! later workload is the more specific one (kv's directories hold a `results.json`, as
//! core-data's do, and memtier's text besides).

use std::any::Any;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::html::load::LoadError;
use super::html::Report;
use super::merge::MergeError;

/// One results directory given to `report html`, and its short name on the page.
#[derive(Debug, Clone, Copy)]
pub struct Given<'a> {
    /// The directory.
    pub dir: &'a Path,
    /// Its label ([`super::html::load::labels`]).
    pub label: &'a str,
}

/// One load host's results, read by its workload for `report merge`.
pub struct Host {
    /// Where they were read (the path given).
    pub path: PathBuf,
    /// `--run-id`, if the host was given one.
    pub run_id: Option<String>,
    /// The workload's own model of the host, handed back to [`Workload::merge`].
    pub results: Box<dyn Any>,
}

/// What a merge produced: results of the workload's own model, written by its own exporters.
pub trait Merged: std::fmt::Debug {
    /// Writes every results file into `dir` (created if missing), each one whole, and
    /// returns the markdown `report merge` prints.
    fn write(&self, dir: &Path) -> io::Result<Vec<u8>>;
}

/// A workload as the reports see it.
pub trait Workload: Sync {
    /// Its name, as a command and as `report merge` names a kind (`kv`, `coredata`, …).
    fn name(&self) -> &'static str;

    /// Whether `dir` holds this workload's results, by the files in it.
    fn recognises(&self, dir: &Path) -> bool;

    /// The page of `dirs` (every directory of this workload given to `report html`, in the
    /// order given), with each series named `label: name` when the page compares
    /// `page_dirs` > 1 directories.
    fn report(&self, dirs: &[Given<'_>], page_dirs: usize) -> Result<Report, LoadError>;

    /// The file `report merge` reads in a results directory of this workload, if its hosts
    /// can be merged.
    fn merge_file(&self) -> Option<&'static str> {
        None
    }

    /// A host's results from the JSON `doc` read at `path`: `None` when the document is not
    /// this workload's.
    fn host(&self, path: &Path, file: &Path, doc: &Value) -> Option<Result<Host, MergeError>> {
        let _ = (path, file, doc);
        None
    }

    /// The hosts (label, host) merged into one run. Each host is one this workload read.
    fn merge(&self, hosts: Vec<(String, Host)>) -> Result<Box<dyn Merged>, MergeError> {
        let _ = hosts;
        Err(MergeError::read(
            Path::new(self.name()),
            "these results cannot be merged",
        ))
    }
}

/// A host whose results are the JSON `doc` as the type `T` (read at `path`, from `file`;
/// `what` names the type in an error: "not {what} (…)"), refused when `hosts` says it is a
/// merge already; its run id is `run_id`'s.
pub fn typed_host<T: serde::de::DeserializeOwned + 'static>(
    path: &Path,
    file: &Path,
    doc: &Value,
    what: &str,
    run_id: impl Fn(&T) -> Option<String>,
    hosts: impl Fn(&T) -> usize,
) -> Result<Host, MergeError> {
    let results: T = serde_json::from_value(doc.clone())
        .map_err(|e| MergeError::read(file, format!("not {what} ({e})")))?;
    if hosts(&results) > 0 {
        return Err(super::merge::already_merged(path));
    }
    Ok(Host {
        path: path.to_path_buf(),
        run_id: run_id(&results),
        results: Box::new(results),
    })
}

/// The hosts' own results as the workload's type `T` (what its [`Workload::host`] put there),
/// each with its label and path.
pub fn hosts_as<T: 'static>(
    hosts: Vec<(String, Host)>,
) -> Result<Vec<(String, PathBuf, T)>, MergeError> {
    hosts
        .into_iter()
        .map(|(label, host)| match host.results.downcast::<T>() {
            Ok(r) => Ok((label, host.path, *r)),
            Err(_) => Err(MergeError::read(
                &host.path,
                "read as another workload's results; merge one workload's results at a time",
            )),
        })
        .collect()
}

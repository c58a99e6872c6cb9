//! Core-data as the reports see it ([`crate::report::Workload`]): a directory with a
//! `results.json` is a core-data run; several are one page with every column named
//! `<directory>: <target>` and, for exactly two, `report compare`'s table; hosts of one
//! `--run-id` merge into one run.

use std::io;
use std::path::Path;

use serde_json::Value;

use crate::report::html::load::{self, kept, named, LoadError};
use crate::report::html::{escape, markdown, Report, Section};
use crate::report::merge::MergeError;
use crate::report::workload::{hosts_as, typed_host, Given, Host, Merged, Workload};
use crate::results::RunResults;

/// The core-data benchmarks' slice.
pub struct CoreData;

/// The file a core-data run's results are read back from.
const RESULTS: &str = "results.json";

impl Workload for CoreData {
    fn name(&self) -> &'static str {
        "coredata"
    }

    fn recognises(&self, dir: &Path) -> bool {
        dir.join(RESULTS).is_file()
    }

    fn report(&self, dirs: &[Given<'_>], page_dirs: usize) -> Result<Report, LoadError> {
        let mut all: Option<RunResults> = None;
        for given in dirs {
            let results = read(given.dir, (page_dirs > 1).then_some(given.label))?;
            match &mut all {
                None => all = Some(results),
                Some(all) => all.targets.extend(results.targets),
            }
        }
        let all = all.unwrap_or_default();
        let facts = if dirs.len() > 1 {
            Vec::new()
        } else {
            kept(&load::recorded_facts(dirs[0].dir), &["command"])
        };
        let mut report = super::html::report(&all, facts)?;
        if let [old, new] = dirs {
            if page_dirs == 2 {
                report.push(comparison(old.dir, new.dir));
            }
        }
        Ok(report)
    }

    fn merge_file(&self) -> Option<&'static str> {
        Some(RESULTS)
    }

    fn host(&self, path: &Path, file: &Path, doc: &Value) -> Option<Result<Host, MergeError>> {
        if doc.pointer("/meta/workload").and_then(Value::as_str) != Some("coredata") {
            return None;
        }
        Some(typed_host(
            path,
            file,
            doc,
            "coredata results",
            |r: &RunResults| r.meta.run_id.clone(),
            |r| r.meta.hosts.len(),
        ))
    }

    fn merge(&self, hosts: Vec<(String, Host)>) -> Result<Box<dyn Merged>, MergeError> {
        let hosts = hosts_as::<RunResults>(hosts)?;
        Ok(Box::new(MergedRun(super::merge::merge(hosts)?)))
    }
}

/// A core-data directory's results, each column named `label: name` when a label is given.
fn read(dir: &Path, label: Option<&str>) -> Result<RunResults, LoadError> {
    let mut results: RunResults = load::json(&dir.join(RESULTS))?;
    if label.is_some() {
        let columns: Vec<String> = results.targets.iter().map(|t| t.column()).collect();
        for t in &mut results.targets {
            t.name = named(label, &t.name);
        }
        // The baseline is a column name: follow the renaming.
        if let Some(b) = &results.meta.baseline {
            results.meta.baseline = columns.contains(b).then(|| named(label, b));
        }
    }
    Ok(results)
}

/// Two core-data runs: `edgebench report compare`'s table (benchstat's verdicts) as a section,
/// or why there is none.
fn comparison(old: &Path, new: &Path) -> Section {
    let title = "Old against new: significant changes (benchstat's test)";
    match crate::report::compare::Comparison::read(old, new) {
        Ok(c) => Section::new(
            title,
            format!(
                "<p>Each benchmark's median over the repetitions of {} (old) and {} (new), the \
                 change, and whether it is significant: Mann–Whitney U, p &le; 0.05, as \
                 benchstat decides; <code>~</code> when it is not. The same table as \
                 <code>edgebench report compare</code>.</p>{}",
                escape(&old.display().to_string()),
                escape(&new.display().to_string()),
                markdown(&c.markdown())
            ),
        ),
        Err(e) => Section::new(
            title,
            format!("<p>No comparison: {}</p>", escape(&e.to_string())),
        ),
    }
}

/// Several hosts' core-data run, merged.
#[derive(Debug)]
struct MergedRun(RunResults);

impl Merged for MergedRun {
    fn write(&self, dir: &Path) -> io::Result<Vec<u8>> {
        crate::report::write_files(dir, &self.0)?;
        super::html::write(dir, &self.0)?;
        std::fs::read(dir.join("results.md"))
    }
}

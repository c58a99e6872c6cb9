//! The fleet as the reports see it ([`crate::report::Workload`]): a directory with a
//! `fleet.json` is a fleet run; several are one page with every target named
//! `<directory>: <target>`; hosts of one `--run-id` merge into one run.

use std::io;
use std::path::Path;

use serde_json::Value;

use super::html::FleetView;
use super::results::FleetRun;
use crate::report::html::load::{self, heading, named, LoadError};
use crate::report::html::Report;
use crate::report::merge::MergeError;
use crate::report::workload::{hosts_as, typed_host, Given, Host, Merged, Workload};

/// The fleet's slice.
pub struct Fleet;

/// The file a fleet run's results are read back from.
const RESULTS: &str = "fleet.json";

impl Workload for Fleet {
    fn name(&self) -> &'static str {
        "fleet"
    }

    fn recognises(&self, dir: &Path) -> bool {
        dir.join(RESULTS).is_file()
    }

    fn report(&self, dirs: &[Given<'_>], page_dirs: usize) -> Result<Report, LoadError> {
        let mut all: Option<FleetView> = None;
        for given in dirs {
            let label = (page_dirs > 1).then_some(given.label);
            let mut view: FleetView = load::json(&given.dir.join(RESULTS))?;
            view.markdown = load::read(&given.dir.join("fleet.md")).unwrap_or_default();
            for t in &mut view.targets {
                t.name = named(label, &t.name);
            }
            let md = heading(dirs.len() > 1, given.label, &view.markdown);
            match &mut all {
                None => {
                    view.markdown = md;
                    all = Some(view);
                }
                Some(all) => {
                    all.targets.extend(view.targets);
                    all.markdown.push_str(&md);
                }
            }
        }
        let all = all.ok_or_else(|| LoadError::NotResults(".".into()))?;
        Ok(super::html::report(&all)?)
    }

    fn merge_file(&self) -> Option<&'static str> {
        Some(RESULTS)
    }

    fn host(&self, path: &Path, file: &Path, doc: &Value) -> Option<Result<Host, MergeError>> {
        if doc.get("fleet").is_none() || doc.get("targets").is_none() {
            return None;
        }
        Some(typed_host(
            path,
            file,
            doc,
            "a fleet.json",
            |r: &FleetRun| r.run_id.clone(),
            |r| r.hosts.len(),
        ))
    }

    fn merge(&self, hosts: Vec<(String, Host)>) -> Result<Box<dyn Merged>, MergeError> {
        let hosts = hosts_as::<FleetRun>(hosts)?;
        Ok(Box::new(MergedRun(super::merge::merge(hosts)?)))
    }
}

/// Several hosts' fleet run, merged.
#[derive(Debug)]
struct MergedRun(FleetRun);

impl Merged for MergedRun {
    fn write(&self, dir: &Path) -> io::Result<Vec<u8>> {
        let mut files = super::export::write(dir, &self.0)?;
        Ok(files.swap_remove(super::export::MARKDOWN))
    }
}

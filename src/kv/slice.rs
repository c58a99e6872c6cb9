//! kv as the reports see it ([`crate::report::Workload`]): a directory with a `memtier.txt`
//! is a kv run (its `results.json` is memtier's document); several are one page with every
//! run named `<directory>: <run>`; hosts of one `--run-id` merge into one run.

use std::io;
use std::path::Path;

use serde_json::Value;

use super::html::KvView;
use super::merge::KvInput;
use super::results::{self, KvResults};
use crate::report::html::load::{self, heading, kept, named, LoadError};
use crate::report::html::Report;
use crate::report::merge::MergeError;
use crate::report::workload::{hosts_as, Given, Host, Merged, Workload};

/// `edgebench kv`'s slice.
pub struct Kv;

impl Workload for Kv {
    fn name(&self) -> &'static str {
        "kv"
    }

    fn recognises(&self, dir: &Path) -> bool {
        dir.join("memtier.txt").is_file()
    }

    fn report(&self, dirs: &[Given<'_>], page_dirs: usize) -> Result<Report, LoadError> {
        let several = dirs.len() > 1;
        let mut all = KvView::default();
        for given in dirs {
            let label = (page_dirs > 1).then_some(given.label);
            let doc: Value = load::json(&given.dir.join("results.json"))?;
            let md = load::read(&given.dir.join("results.md")).unwrap_or_default();
            let mut view = KvView::from_json(&doc, md);
            for r in &mut view.runs {
                r.name = named(label, &r.name);
            }
            all.runs.extend(view.runs);
            all.markdown
                .push_str(&heading(several, given.label, &view.markdown));
            all.configuration
                .extend(view.configuration.into_iter().map(|(k, x)| {
                    let k = if several {
                        format!("{}: {k}", given.label)
                    } else {
                        k
                    };
                    (k, x)
                }));
            all.started = all.started.or(view.started);
        }
        let recorded = load::recorded_facts(dirs[0].dir);
        Ok(super::html::report(
            &all,
            kept(&recorded, &["command", "edgebench", "machine"]),
        )?)
    }

    fn merge_file(&self) -> Option<&'static str> {
        Some("results.json")
    }

    fn host(&self, path: &Path, _file: &Path, doc: &Value) -> Option<Result<Host, MergeError>> {
        doc.get("run information")?;
        Some(KvInput::read(path, doc).map(|input| Host {
            path: input.path.clone(),
            run_id: input.run_id.clone(),
            results: Box::new(input),
        }))
    }

    fn merge(&self, hosts: Vec<(String, Host)>) -> Result<Box<dyn Merged>, MergeError> {
        let hosts = hosts_as::<KvInput>(hosts)?
            .into_iter()
            .map(|(label, _, input)| (label, input))
            .collect();
        Ok(Box::new(MergedRun(super::merge::merge(hosts)?)))
    }
}

/// Several hosts' kv run, merged.
#[derive(Debug)]
struct MergedRun(KvResults);

impl Merged for MergedRun {
    fn write(&self, dir: &Path) -> io::Result<Vec<u8>> {
        Ok(write(dir, &self.0)?.swap_remove(results::MARKDOWN))
    }
}

/// Writes a kv run's results files ([`results::exporters`]) into `dir`, each one whole, and
/// its `report.html`; returns the files' bytes in the exporters' order.
pub fn write(dir: &Path, results: &KvResults) -> io::Result<Vec<Vec<u8>>> {
    let files = crate::report::write_all(dir, results, &results::exporters())?;
    super::html::write(dir, results)?;
    Ok(files)
}

//! perf as the reports see it ([`crate::report::Workload`]): a directory with the
//! `results-group-all.csv` that `create_csv -all` writes (`results/perf`) is perf's; several
//! are one page with every app named `<directory>: <app>`. perf runs are not merged.

use std::path::Path;

use super::csv::ResultsKind;
use super::html::PerfView;
use crate::report::html::load::{self, heading, kept, LoadError};
use crate::report::html::Report;
use crate::report::workload::{Given, Workload};

/// `edgebench perf`'s slice.
pub struct Perf;

impl Workload for Perf {
    fn name(&self) -> &'static str {
        "perf"
    }

    fn recognises(&self, dir: &Path) -> bool {
        dir.join(ResultsKind::Group.all_csv_name()).is_file()
    }

    fn report(&self, dirs: &[Given<'_>], page_dirs: usize) -> Result<Report, LoadError> {
        let mut all = PerfView::default();
        for given in dirs {
            let label = (page_dirs > 1).then_some(given.label);
            let view =
                PerfView::read(given.dir, label).map_err(|e| LoadError::Workload(Box::new(e)))?;
            all.runs.extend(view.runs);
            all.markdown
                .push_str(&heading(dirs.len() > 1, given.label, &view.markdown));
        }
        let recorded = load::recorded_facts(dirs[0].dir);
        Ok(super::html::report(
            &all,
            kept(&recorded, &["command", "edgebench", "machine"]),
        )?)
    }
}

//! `report.html`: one self-contained page per results directory, with charts drawn by
//! plotters as inline SVG, the run's facts and its markdown tables, so that the page alone
//! tells which target is fastest and by how much.
//!
//! This is the workload-independent half: the page, its charts and how it is written. Each
//! workload's slice has its own section builder (`coredata::html`, `kv::html`, `fleet::html`,
//! `perf::html`) that turns its results into a [`Report`]: a [`Page`] of [`Section`]s (title and
//! HTML fragment) and the [`Chart`]s drawn in it, kept for `--png`. A later addition (a
//! comparison table) is one more section pushed onto the page. Every command writes its page
//! through its slice, at the same points it rewrites its other results files;
//! `edgebench report html DIR...` rebuilds pages from the files ([`load::build`]), asking
//! each registered [`crate::report::Workload`] for its part.

pub mod charts;
#[cfg(test)]
mod golden;
pub mod latency;
pub mod load;
mod memo;
mod page;
pub mod series;

use std::io;
use std::path::{Path, PathBuf};

pub use charts::{Chart, ChartError};
pub use page::{escape, markdown, Page, Section};

/// The page's file name in a results directory.
pub const FILE: &str = "report.html";

/// A page and the charts drawn in it (in page order).
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The page.
    pub page: Page,
    /// Every chart of the page, for `--png`.
    pub charts: Vec<Chart>,
}

impl Report {
    /// An empty report with its heading and facts.
    pub fn new(
        title: impl Into<String>,
        lede: impl Into<String>,
        facts: Vec<(String, String)>,
    ) -> Report {
        Report {
            page: Page {
                title: title.into(),
                lede: lede.into(),
                facts,
                sections: Vec::new(),
            },
            charts: Vec::new(),
        }
    }

    /// Adds a section without charts.
    pub fn push(&mut self, section: Section) {
        self.page.push(section);
    }

    /// Adds a section of `charts` (drawn as SVG) under `intro_html`; nothing when there are
    /// no charts.
    pub fn push_charts(
        &mut self,
        title: &str,
        intro_html: &str,
        charts: Vec<Chart>,
    ) -> Result<(), ChartError> {
        if charts.is_empty() {
            return Ok(());
        }
        let mut section = Section::new(title, intro_html);
        section.figures = charts
            .iter()
            .map(Chart::svg)
            .collect::<Result<Vec<_>, _>>()?;
        self.page.push(section);
        self.charts.extend(charts);
        Ok(())
    }

    /// Appends `other`'s sections and charts (several results kinds on one page).
    pub fn append(&mut self, other: Report) {
        self.page.sections.extend(other.page.sections);
        self.charts.extend(other.charts);
    }

    /// Writes the page to `path` whole and, with `png`, each chart as
    /// `<page dir>/charts/NN-<title>.png`; returns the PNGs' paths.
    pub fn write(&self, path: &Path, png: bool) -> io::Result<Vec<PathBuf>> {
        write_page(path, &self.page)?;
        if !png {
            return Ok(Vec::new());
        }
        let dir = path.parent().unwrap_or(Path::new(".")).join("charts");
        std::fs::create_dir_all(&dir).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot create {}: {e}", dir.display()))
        })?;
        let mut written = Vec::with_capacity(self.charts.len());
        for (i, chart) in self.charts.iter().enumerate() {
            let file = dir.join(format!("{:02}-{}.png", i + 1, slug(&chart.title)));
            let bytes = chart.png().map_err(io::Error::other)?;
            crate::report::write_whole_file(&file, &bytes)?;
            written.push(file);
        }
        Ok(written)
    }
}

/// Writes the page whole, as a temp file beside it renamed over it, so a reader (or a crash)
/// sees the old page or the new one. Unlike the results files it is not fsynced: the page is
/// derived from them (`edgebench report html DIR` rebuilds it), and its fsync was most of
/// what a rewrite cost (about 1 ms of ~1.5 ms, after each of a run's benchmarks). One writer
/// per results directory, so the temp file's name is fixed.
fn write_page(path: &Path, page: &Page) -> io::Result<()> {
    let name = path.file_name().unwrap_or(FILE.as_ref()).to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let write = || -> io::Result<()> {
        let mut file = io::BufWriter::with_capacity(64 * 1024, std::fs::File::create(&tmp)?);
        page.write_to(&mut file)?;
        io::Write::flush(&mut file)?;
        std::fs::rename(&tmp, path)
    };
    write().map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))
}

/// A file-name-safe form of a chart title: `AddReading: time per operation` →
/// `addreading-time-per-operation`.
fn slug(title: &str) -> String {
    let mut out = String::with_capacity(title.len());
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
    }
    out.trim_end_matches('-').to_string()
}

/// The command line of this process, as the page records it (passwords hidden).
pub fn command_line() -> Vec<(String, String)> {
    vec![("command".into(), crate::redact::recorded_command_line())]
}

/// The command line, edgebench's version and the machine, for the kinds whose results files
/// do not record them (kv, perf).
pub fn this_process() -> Vec<(String, String)> {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("model name"))?;
            Some(line.split_once(':')?.1.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut facts = command_line();
    facts.push(("edgebench".into(), env!("CARGO_PKG_VERSION").into()));
    facts.push((
        "machine".into(),
        format!(
            "{cpu}, {cpus} CPUs, {}/{}",
            std::env::consts::OS,
            std::env::consts::ARCH
        ),
    ));
    facts
}

/// Forgets the curves and charts drawn so far, so the next page is drawn from nothing, as
/// in a new process (for benchmarks of the page's cost).
pub fn forget_drawn() {
    latency::CURVES.clear();
    charts::SVGS.clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_file_names() {
        assert_eq!(
            slug("AddReading: time per operation"),
            "addreading-time-per-operation"
        );
        assert_eq!(slug("  g1 / put (µs) "), "g1-put-s");
    }
}

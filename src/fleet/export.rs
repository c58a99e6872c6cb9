//! The exporters of `edgebench fleet`: `fleet.json` (everything, with the full HDR
//! histograms), `fleet.md` (the table), `per-second.csv` and `store-size.csv`, each a renderer
//! over the same [`FleetRun`], written whole through [`crate::report::write_all`] as every
//! other results file is, so a crash or Ctrl-C between two targets leaves each file as it was
//! or complete.

use std::io;
use std::path::Path;

use super::results::{self, FleetRun};
use crate::report::Exporter;

/// `fleet.json`: the run as serde writes it (what `report html` and `report merge` read).
pub struct FleetJson;

impl Exporter<FleetRun> for FleetJson {
    fn file_name(&self) -> &str {
        "fleet.json"
    }

    fn render(&self, run: &FleetRun) -> io::Result<Vec<u8>> {
        serde_json::to_vec_pretty(run)
            .map_err(|e| io::Error::other(format!("cannot encode fleet.json: {e}")))
    }
}

/// `fleet.md`: the table across targets ([`results::markdown`]).
pub struct FleetMarkdown;

impl Exporter<FleetRun> for FleetMarkdown {
    fn file_name(&self) -> &str {
        "fleet.md"
    }

    fn render(&self, run: &FleetRun) -> io::Result<Vec<u8>> {
        Ok(results::markdown(run).into_bytes())
    }
}

/// `per-second.csv` ([`results::per_second_csv`]).
pub struct PerSecondCsv;

impl Exporter<FleetRun> for PerSecondCsv {
    fn file_name(&self) -> &str {
        "per-second.csv"
    }

    fn render(&self, run: &FleetRun) -> io::Result<Vec<u8>> {
        Ok(results::per_second_csv(run).into_bytes())
    }
}

/// `store-size.csv` ([`results::store_size_csv`]).
pub struct StoreSizeCsv;

impl Exporter<FleetRun> for StoreSizeCsv {
    fn file_name(&self) -> &str {
        "store-size.csv"
    }

    fn render(&self, run: &FleetRun) -> io::Result<Vec<u8>> {
        Ok(results::store_size_csv(run).into_bytes())
    }
}

/// Every fleet results file, in the order they are written.
pub fn exporters() -> [&'static dyn Exporter<FleetRun>; 4] {
    [&FleetJson, &FleetMarkdown, &PerSecondCsv, &StoreSizeCsv]
}

/// The place of `fleet.md` in [`exporters`] (what a command prints).
pub const MARKDOWN: usize = 1;

/// Rewrites the results files (fleet.json, fleet.md, the CSVs, report.html) in `dir`
/// (created if missing), each one whole; returns the files' bytes in [`exporters`]' order.
pub fn write(dir: &Path, run: &FleetRun) -> io::Result<Vec<Vec<u8>>> {
    let written = crate::report::write_all(dir, run, &exporters())?;
    super::html::write(dir, run)?;
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_is_written_whole_and_rewritten() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("fleet");
        let run = FleetRun {
            command: "edgebench fleet".into(),
            started: "2024-05-01T12:00:00Z".into(),
            fleet: crate::fleet::results::FleetSettings::of(&Default::default()),
            targets: Vec::new(),
            run_id: None,
            hosts: Vec::new(),
        };
        write(&dir, &run).unwrap();
        let written = write(&dir, &run).unwrap();
        // No temp file is left behind.
        assert_eq!(
            crate::report::fixture::file_names(&dir),
            [
                "fleet.json",
                "fleet.md",
                "per-second.csv",
                "report.html",
                "store-size.csv"
            ]
        );
        for (exporter, bytes) in exporters().iter().zip(&written) {
            assert_eq!(
                &std::fs::read(dir.join(exporter.file_name())).unwrap(),
                bytes
            );
        }
        let back: FleetRun = serde_json::from_slice(&written[0]).unwrap();
        assert_eq!(back.command, run.command);
    }
}

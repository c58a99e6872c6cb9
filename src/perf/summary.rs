//! The markdown summary edgebench writes beside PadoGrid's results files: one row per group
//! (`test_group`) or per map (`test_ingestion`, `test_tx`) of a run, with PadoGrid's M
//! throughput and latency and edgebench's worst per-operation p50/p99/p99.9.
//!
//! Invariant: the numbers are the results files' numbers (M = `count / max thread time`,
//! reference §2.5 and §3.4), so the summary never disagrees with the files beside it.

use std::path::{Path, PathBuf};

use super::results::OpLatency;
use crate::report::Exporter;

/// One row: a group or a map.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// The group id, or `eligibility putall`.
    pub name: String,
    /// Threads.
    pub threads: u32,
    /// Invocations, entries or transactions.
    pub count: u64,
    /// The slowest thread's summed time, ms (PadoGrid's "Max Time").
    pub max_ms: u64,
    /// Per-operation percentiles; the row shows the worst of them.
    pub latencies: Vec<OpLatency>,
}

/// What the rows count, for the column headers: (`Group`, `Invocations`, `inv`).
#[derive(Debug, Clone, Copy)]
pub struct Columns {
    /// First column: `Group` or `Map`.
    pub name: &'static str,
    /// Count column: `Invocations`, `Entries`, `Transactions`.
    pub count: &'static str,
    /// Throughput unit: `inv`, `entries`, `tx`.
    pub unit: &'static str,
}

/// The markdown table.
pub fn markdown(cols: Columns, rows: &[SummaryRow]) -> String {
    let mut out = format!(
        "| {} | Threads | {} | M Throughput ({}/s) | M Latency (ms) | p50 (µs) | p99 (µs) | p99.9 (µs) |\n|-|-|-|-|-|-|-|-|\n",
        cols.name, cols.count, cols.unit
    );
    for r in rows {
        let max = r.max_ms.max(1) as f64;
        let worst =
            |f: fn(&OpLatency) -> u64| r.latencies.iter().map(f).max().unwrap_or(0) as f64 / 1e3;
        out.push_str(&format!(
            "| {} | {} | {} | {:.1} | {:.4} | {:.1} | {:.1} | {:.1} |\n",
            r.name,
            r.threads,
            r.count,
            r.count as f64 / max * 1000.0,
            max / r.count.max(1) as f64,
            worst(|l| l.p50_ns),
            worst(|l| l.p99_ns),
            worst(|l| l.p999_ns),
        ));
    }
    out
}

/// A run's summary: its rows, what they count, and notes that follow the table.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The column headers.
    pub cols: Columns,
    /// One row per group or map.
    pub rows: Vec<SummaryRow>,
    /// Text after the table (test_tx's retry counts), or empty.
    pub notes: String,
}

/// The summary's exporter: `<stem>-<product>-<UTC stamp>.md`. The stem starts with
/// `summary`, never with `group-`, `ingestion-` or `tx-`, so `create_csv` does not read it.
pub struct SummaryMarkdown {
    file: String,
}

impl SummaryMarkdown {
    /// The exporter of a summary written now.
    pub fn new(stem: &str, product: &str) -> SummaryMarkdown {
        SummaryMarkdown {
            file: format!(
                "{stem}-{product}-{}.md",
                chrono::Utc::now().format("%Y%m%d-%H%M%S")
            ),
        }
    }
}

impl Exporter<Summary> for SummaryMarkdown {
    fn file_name(&self) -> &str {
        &self.file
    }

    fn render(&self, summary: &Summary) -> std::io::Result<Vec<u8>> {
        let mut md = markdown(summary.cols, &summary.rows);
        md.push_str(&summary.notes);
        Ok(md.into_bytes())
    }
}

/// Writes `summary` into `dir` through [`crate::report::write_all`]; returns its markdown and
/// the path.
pub fn write(
    dir: &Path,
    stem: &str,
    product: &str,
    summary: &Summary,
) -> std::io::Result<(String, PathBuf)> {
    let exporter = SummaryMarkdown::new(stem, product);
    let [md] = <[Vec<u8>; 1]>::try_from(crate::report::write_all(dir, summary, &[&exporter])?)
        .expect("one exporter, one file");
    let md = String::from_utf8(md).expect("markdown is UTF-8");
    Ok((md, dir.join(exporter.file_name())))
}

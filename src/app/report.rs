//! `edgebench report benchtomd [FILE|-]`: Go benchmark text in, benchtomd's markdown table
//! out. `edgebench report compare OLD NEW`: two runs in, benchstat's comparison out (or, for
//! YCSB's runs, their own table of old against new).

use std::io::{Read, Write};
use std::path::Path;

use anyhow::Context as _;

use super::shared::{Ending, Error};
use crate::cli::ReportCommand;
use crate::report::compare::Compared;
use crate::report::{self, Format};

/// Runs a `report` subcommand.
pub fn main(command: &ReportCommand) -> Result<Ending, Error> {
    match command {
        ReportCommand::Html { dirs, png, out } => html(dirs, *png, out.as_deref())?,
        ReportCommand::Benchtomd { file } => benchtomd(file.as_deref())?,
        ReportCommand::Compare { old, new } => compare(old, new)?,
        ReportCommand::Merge { paths, out, force } => merge(paths, out.as_deref(), *force)?,
    }
    Ok(Ending::Finished)
}

/// Reads the Go text (a file, or stdin for `-` or nothing) and prints the table. Text with no
/// benchmark line at all (a wrong file, a binary) is an error, not an empty table.
fn benchtomd(file: Option<&Path>) -> anyhow::Result<()> {
    let (bytes, name) = match file {
        Some(p) if p.as_os_str() != "-" => (
            std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?,
            p.display().to_string(),
        ),
        _ => {
            let mut bytes = Vec::new();
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("cannot read standard input")?;
            (bytes, "standard input".to_string())
        }
    };
    let results = report::benchtomd::parse_go_bench(&String::from_utf8_lossy(&bytes));
    if results.targets.is_empty() {
        anyhow::bail!(
            "no Go benchmark lines (BenchmarkName-P  N  T ns/op) in {name}: give it the output \
             of go test -bench or edgebench coredata --format go"
        );
    }
    let table = Format::Markdown.exporter().render(&results)?;
    std::io::stdout()
        .write_all(&table)
        .context("cannot write to stdout")?;
    Ok(())
}

/// The workloads `report compare` compares with a table of their own; any other input is a
/// core-data run or a Go text, compared as benchstat does.
const COMPARED: &[&dyn Compared] = &[&crate::ycsb::slice::Ycsb];

/// Compares the two runs and prints the table. An input that cannot be read or compared is a
/// usage error: the message names the path and what to give instead.
fn compare(old: &Path, new: &Path) -> Result<(), Error> {
    let table = report::compare::markdown(COMPARED, old, new).map_err(Error::usage)?;
    std::io::stdout()
        .write_all(table.as_bytes())
        .context("cannot write to stdout")?;
    Ok(())
}

/// `report html`: builds the page of `dirs` (one page comparing them when several), writes
/// it and, with `png`, every chart as a PNG; prints each file written.
fn html(dirs: &[std::path::PathBuf], png: bool, out: Option<&Path>) -> anyhow::Result<()> {
    let report = report::html::load::build(super::WORKLOADS, dirs)?;
    let page = match (out, dirs) {
        (Some(path), _) => path.to_path_buf(),
        (None, [dir]) => dir.join(report::html::FILE),
        (None, _) => {
            super::shared::fresh_run_dir(Path::new("results"), "report").join(report::html::FILE)
        }
    };
    if let Some(parent) = page.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {} (use --out FILE)", parent.display()))?;
    }
    let pngs = report.write(&page, png)?;
    let mut stdout = std::io::stdout().lock();
    for path in std::iter::once(&page).chain(&pngs) {
        writeln!(stdout, "{}", path.display()).context("cannot write to stdout")?;
    }
    Ok(())
}

/// `report merge`: merges the hosts' results, writes them with the workload's own exporters
/// into a fresh results directory (or `out`), prints results.md and says where it went.
fn merge(paths: &[std::path::PathBuf], out: Option<&Path>, force: bool) -> Result<(), Error> {
    let merged = report::merge::merge(super::WORKLOADS, paths, force).map_err(Error::usage)?;
    let dir = match out {
        Some(dir) => dir.to_path_buf(),
        None => super::shared::fresh_run_dir(Path::new("results"), "merge"),
    };
    let markdown = merged.write(&dir).with_context(|| {
        format!(
            "cannot write the merged results to {} (use --out DIR)",
            dir.display()
        )
    })?;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&markdown)
        .context("cannot write to stdout")?;
    eprintln!(
        "edgebench: merged {} hosts; results in {}",
        paths.len(),
        dir.display()
    );
    Ok(())
}

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

use super::fleet::FleetView;
use super::kv::KvView;
use super::perf::{PerfError, PerfView};
use super::{coredata, escape, fleet, kv, markdown, perf, ChartError, Report, Section, FILE};
use crate::results::RunResults;

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
    /// The perf CSV.
    #[error(transparent)]
    Perf(#[from] PerfError),
    /// A chart.
    #[error(transparent)]
    Chart(#[from] ChartError),
}

/// One directory's results, by kind.
enum Loaded {
    CoreData(RunResults),
    Kv(KvView),
    Fleet(FleetView),
    Perf(PerfView),
}

impl Loaded {
    fn kind(&self) -> usize {
        match self {
            Loaded::CoreData(_) => 0,
            Loaded::Kv(_) => 1,
            Loaded::Fleet(_) => 2,
            Loaded::Perf(_) => 3,
        }
    }
}

fn read(path: &Path) -> Result<String, LoadError> {
    std::fs::read_to_string(path).map_err(|error| LoadError::Read {
        path: path.to_path_buf(),
        error,
    })
}

fn json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, LoadError> {
    serde_json::from_str(&read(path)?).map_err(|error| LoadError::Parse {
        path: path.to_path_buf(),
        error,
    })
}

/// Reads `dir`, naming its series `label: name` when a label is given.
fn load(dir: &Path, label: Option<&str>) -> Result<Loaded, LoadError> {
    let named = |name: &str| match label {
        Some(l) => format!("{l}: {name}"),
        None => name.to_string(),
    };
    if dir.join("fleet.json").is_file() {
        let mut view: FleetView = json(&dir.join("fleet.json"))?;
        view.markdown = read(&dir.join("fleet.md")).unwrap_or_default();
        for t in &mut view.targets {
            t.name = named(&t.name);
        }
        return Ok(Loaded::Fleet(view));
    }
    if dir.join("memtier.txt").is_file() {
        let doc: serde_json::Value = json(&dir.join("results.json"))?;
        let mut view = KvView::from_json(&doc, read(&dir.join("results.md")).unwrap_or_default());
        for r in &mut view.runs {
            r.name = named(&r.name);
        }
        return Ok(Loaded::Kv(view));
    }
    let perf_csv = crate::perf::csv::ResultsKind::Group.all_csv_name();
    if dir.join(perf_csv).is_file() {
        return Ok(Loaded::Perf(PerfView::read(dir, label)?));
    }
    if dir.join("results.json").is_file() {
        let mut results: RunResults = json(&dir.join("results.json"))?;
        if label.is_some() {
            let columns: Vec<String> = results.targets.iter().map(|t| t.column()).collect();
            for t in &mut results.targets {
                t.name = named(&t.name);
            }
            // The baseline is a column name: follow the renaming.
            if let Some(b) = &results.meta.baseline {
                results.meta.baseline = columns.contains(b).then(|| named(b));
            }
        }
        return Ok(Loaded::CoreData(results));
    }
    Err(LoadError::NotResults(dir.to_path_buf()))
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
fn kept(recorded: &[(String, String)], keys: &[&str]) -> Vec<(String, String)> {
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

/// The page of one directory, or of several compared.
pub fn build(dirs: &[PathBuf]) -> Result<Report, LoadError> {
    let several = dirs.len() > 1;
    let labels = labels(dirs);
    let mut loaded = Vec::with_capacity(dirs.len());
    for (dir, label) in dirs.iter().zip(&labels) {
        if !dir.is_dir() {
            return Err(LoadError::NotResults(dir.clone()));
        }
        loaded.push((dir, label, load(dir, several.then_some(label.as_str()))?));
    }
    let mut page: Option<Report> = None;
    for kind in [0, 1, 2, 3] {
        let of_kind: Vec<&(&PathBuf, &String, Loaded)> =
            loaded.iter().filter(|(_, _, l)| l.kind() == kind).collect();
        if of_kind.is_empty() {
            continue;
        }
        let report = merged(&of_kind)?;
        match &mut page {
            None => page = Some(report),
            Some(p) => p.append(report),
        }
    }
    let mut page = page.ok_or_else(|| LoadError::NotResults(PathBuf::from(".")))?;
    if let [(old, _, Loaded::CoreData(_)), (new, _, Loaded::CoreData(_))] = loaded.as_slice() {
        page.push(comparison(old, new));
    }
    if several {
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

/// One kind's directories as one report.
fn merged(of_kind: &[&(&PathBuf, &String, Loaded)]) -> Result<Report, LoadError> {
    let several = of_kind.len() > 1;
    let recorded = recorded_facts(of_kind[0].0);
    let heading = |label: &str, md: &str| {
        if several {
            format!("## {label}\n\n{md}\n")
        } else {
            md.to_string()
        }
    };
    Ok(match &of_kind[0].2 {
        Loaded::CoreData(first) => {
            let mut all = first.clone();
            all.targets.clear();
            for (_, _, l) in of_kind {
                if let Loaded::CoreData(r) = l {
                    all.targets.extend(r.targets.iter().cloned());
                }
            }
            let facts = if several {
                Vec::new()
            } else {
                kept(&recorded, &["command"])
            };
            coredata::report(&all, facts)?
        }
        Loaded::Kv(_) => {
            let mut all = KvView::default();
            for (_, label, l) in of_kind {
                if let Loaded::Kv(v) = l {
                    all.runs.extend(v.runs.iter().cloned());
                    all.markdown.push_str(&heading(label, &v.markdown));
                    all.configuration
                        .extend(v.configuration.iter().map(|(k, x)| {
                            let k = if several {
                                format!("{label}: {k}")
                            } else {
                                k.clone()
                            };
                            (k, x.clone())
                        }));
                    all.started = all.started.or(v.started.clone());
                }
            }
            kv::report(&all, kept(&recorded, &["command", "edgebench", "machine"]))?
        }
        Loaded::Fleet(first) => {
            let mut all = first.clone();
            all.targets.clear();
            all.markdown.clear();
            for (_, label, l) in of_kind {
                if let Loaded::Fleet(v) = l {
                    all.targets.extend(v.targets.iter().cloned());
                    all.markdown.push_str(&heading(label, &v.markdown));
                }
            }
            fleet::report(&all)?
        }
        Loaded::Perf(_) => {
            let mut all = PerfView::default();
            for (_, label, l) in of_kind {
                if let Loaded::Perf(v) = l {
                    all.runs.extend(v.runs.iter().cloned());
                    all.markdown.push_str(&heading(label, &v.markdown));
                }
            }
            perf::report(&all, kept(&recorded, &["command", "edgebench", "machine"]))?
        }
    })
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
        let Err(err) = build(&[tmp.path().to_path_buf()]) else {
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

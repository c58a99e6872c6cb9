//! YCSB as the reports see it ([`crate::report::Workload`]): a directory whose `results.json`
//! says `"kind": "ycsb"` is a YCSB run; several are one page with every column named
//! `<directory>: <column>` and, for exactly two, the comparison of old against new; hosts of
//! one `--run-id` merge into one run; `report compare` of two runs is a table of each step
//! and target's throughput and p99, old against new ([`Compared`]).

use std::fmt::Write as _;
use std::io;
use std::path::Path;

use serde_json::Value;

use super::results::{self, group, micros, StepResults, YcsbResults, KIND};
use crate::report::compare::{CompareError, Compared};
use crate::report::html::load::{self, named, LoadError};
use crate::report::html::{escape, markdown, Report, Section};
use crate::report::merge::MergeError;
use crate::report::workload::{hosts_as, typed_host, Given, Host, Merged, Workload};

/// `edgebench ycsb`'s slice.
pub struct Ycsb;

/// The file a YCSB run's results are read back from.
const RESULTS: &str = "results.json";

impl Workload for Ycsb {
    fn name(&self) -> &'static str {
        KIND
    }

    fn recognises(&self, dir: &Path) -> bool {
        /// Just the kind: every other field is skipped unread.
        #[derive(serde::Deserialize)]
        struct Kind {
            #[serde(default)]
            kind: String,
        }
        let Ok(file) = std::fs::File::open(dir.join(RESULTS)) else {
            return false;
        };
        serde_json::from_reader::<_, Kind>(io::BufReader::new(file)).is_ok_and(|k| k.kind == KIND)
    }

    fn report(&self, dirs: &[Given<'_>], page_dirs: usize) -> Result<Report, LoadError> {
        let several = page_dirs > 1;
        let mut all: Option<YcsbResults> = None;
        let mut facts = Vec::new();
        for given in dirs {
            let mut r: YcsbResults = load::json(&given.dir.join(RESULTS))?;
            if several {
                let label = Some(given.label);
                for t in &mut r.targets {
                    t.column = named(label, &t.column);
                }
                facts.push((format!("command ({})", given.label), r.command.clone()));
            }
            match &mut all {
                None => all = Some(r),
                Some(all) => {
                    for step in r.steps {
                        if !all.steps.contains(&step) {
                            all.steps.push(step);
                        }
                    }
                    all.targets.extend(r.targets);
                    all.hosts = all.hosts.max(r.hosts);
                }
            }
        }
        let mut all = all.ok_or_else(|| LoadError::NotResults(".".into()))?;
        if several {
            // Each directory's command is a fact of its own; the first's alone would mislead.
            all.command.clear();
            all.started.clear();
            all.run_id = None;
        }
        let mut report = super::html::report(&all, facts)?;
        if let [old, new] = dirs {
            if page_dirs == 2 {
                report.push(comparison_section(old.dir, new.dir));
            }
        }
        Ok(report)
    }

    fn merge_file(&self) -> Option<&'static str> {
        Some(RESULTS)
    }

    fn host(&self, path: &Path, file: &Path, doc: &Value) -> Option<Result<Host, MergeError>> {
        if doc.get("kind").and_then(Value::as_str) != Some(KIND) {
            return None;
        }
        Some(typed_host(
            path,
            file,
            doc,
            "YCSB results",
            |r: &YcsbResults| r.run_id.clone(),
            |r| r.hosts,
        ))
    }

    fn merge(&self, hosts: Vec<(String, Host)>) -> Result<Box<dyn Merged>, MergeError> {
        let hosts = hosts_as::<YcsbResults>(hosts)?;
        Ok(Box::new(MergedRun(super::merge::merge(hosts)?)))
    }
}

/// Several hosts' YCSB run, merged.
#[derive(Debug)]
struct MergedRun(YcsbResults);

impl Merged for MergedRun {
    fn write(&self, dir: &Path) -> io::Result<Vec<u8>> {
        // results.md is the first exporter's file.
        Ok(write(dir, &self.0)?.swap_remove(0))
    }
}

/// Writes a YCSB run's results files ([`results::exporters`]) into `dir` (created if
/// missing), each one whole, and its `report.html`; returns the files' bytes in the
/// exporters' order.
pub fn write(dir: &Path, results: &YcsbResults) -> io::Result<Vec<Vec<u8>>> {
    let files = crate::report::write_all(dir, results, &results::exporters())?;
    super::html::write(dir, results)?;
    Ok(files)
}

impl Compared for Ycsb {
    fn compare(&self, old: &Path, new: &Path) -> Result<String, CompareError> {
        let read = |dir: &Path| -> Result<YcsbResults, CompareError> {
            let file = dir.join(RESULTS);
            let text = std::fs::read_to_string(&file).map_err(|e| {
                CompareError::Workload(format!(
                    "cannot read {}: {e} (give a results directory of edgebench ycsb)",
                    file.display()
                ))
            })?;
            serde_json::from_str(&text).map_err(|e| {
                CompareError::Workload(format!(
                    "{}: {e} (not a results file of this edgebench; rerun the benchmark)",
                    file.display()
                ))
            })
        };
        let (o, n) = (read(old)?, read(new)?);
        let (ol, nl) = (old.display().to_string(), new.display().to_string());
        comparison(&ol, &o, &nl, &n).ok_or(CompareError::Workload(format!(
            "{ol} and {nl} have no step on a target in common: compare two runs of the same \
             steps (load, run, -P) on the same targets (the column names must match)"
        )))
    }
}

/// Old against new, step by step and target by target (old's order, then what only new has):
/// the throughput and the p99 from intended start of every operation (`results.md`'s
/// figures), each with new/old. `None` when no step of a target is on both sides.
pub fn comparison(
    old_label: &str,
    old: &YcsbResults,
    new_label: &str,
    new: &YcsbResults,
) -> Option<String> {
    let mut steps: Vec<&str> = old.steps.iter().map(String::as_str).collect();
    let mut columns: Vec<&str> = old.targets.iter().map(|t| t.column.as_str()).collect();
    for s in &new.steps {
        if !steps.contains(&s.as_str()) {
            steps.push(s);
        }
    }
    for t in &new.targets {
        if !columns.contains(&t.column.as_str()) {
            columns.push(&t.column);
        }
    }
    let find = |r: &'_ YcsbResults, column: &str, step: &str| -> Option<StepResults> {
        let t = r.targets.iter().find(|t| t.column == column)?;
        t.steps.iter().find(|s| s.step == step).cloned()
    };
    let mut md = format!(
        "Old: {}; new: {}. Throughput: higher is better; p99: from intended start, every \
         operation, lower is better.\n\n\
         | step | target | ops/s old | ops/s new | new/old | p99 µs old | p99 µs new | new/old |\n\
         |-|-|-:|-:|-:|-:|-:|-:|\n",
        old_label, new_label
    );
    let mut common = false;
    for step in &steps {
        for column in &columns {
            let (o, n) = (find(old, column, step), find(new, column, step));
            if o.is_none() && n.is_none() {
                continue;
            }
            common |= o.is_some() && n.is_some();
            let ops = |s: &Option<StepResults>| s.as_ref().map(|s| s.throughput);
            let p99 = |s: &Option<StepResults>| s.as_ref().and_then(StepResults::p99_ns);
            let (oo, no) = (ops(&o), ops(&n));
            let (op, np) = (p99(&o), p99(&n));
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} | {} | {} |",
                step,
                column,
                text(oo.map(|x| group(x.round() as u64))),
                text(no.map(|x| group(x.round() as u64))),
                ratio(oo, no),
                text(op.map(micros)),
                text(np.map(micros)),
                ratio(op.map(|x| x as f64), np.map(|x| x as f64)),
            );
        }
    }
    common.then_some(md)
}

/// A figure, or `—` where a side has none.
fn text(v: Option<String>) -> String {
    v.unwrap_or_else(|| "—".into())
}

/// `new/old` as `1.23×`; `—` when a side is missing or old is 0.
fn ratio(old: Option<f64>, new: Option<f64>) -> String {
    match (old, new) {
        (Some(o), Some(n)) if o > 0.0 => format!("{:.2}×", n / o),
        _ => "—".into(),
    }
}

/// Two YCSB runs on one page: the comparison table as a section, or why there is none.
fn comparison_section(old: &Path, new: &Path) -> Section {
    let title = "Old against new";
    match Ycsb.compare(old, new) {
        Ok(md) => Section::new(
            title,
            format!(
                "<p>The same table as <code>edgebench report compare</code>: one run per \
                 step and target, so there is no test of significance; rerun to see the \
                 spread.</p>{}",
                markdown(&md)
            ),
        ),
        Err(e) => Section::new(
            title,
            format!("<p>No comparison: {}</p>", escape(&e.to_string())),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ycsb::html::tests::{op, run};

    #[test]
    fn recognises_only_ycsb_results() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        write(&dir, &run()).unwrap();
        assert!(Ycsb.recognises(&dir));
        for file in [
            "results.md",
            "percentiles.md",
            "results.json",
            "report.html",
        ] {
            assert!(dir.join(file).is_file(), "{file}");
        }
        let other = tmp.path().join("coredata");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join(RESULTS), r#"{"meta": {"workload": "coredata"}}"#).unwrap();
        assert!(!Ycsb.recognises(&other));
        assert!(!Ycsb.recognises(tmp.path()));
        // The page of the directory, rebuilt: the run's own page.
        let page = Ycsb
            .report(
                &[Given {
                    dir: &dir,
                    label: "run",
                }],
                1,
            )
            .unwrap();
        assert_eq!(
            page.page,
            super::super::html::report(&run(), Vec::new()).unwrap().page
        );
    }

    #[test]
    fn compare_is_each_step_and_target_old_against_new() {
        let old = run();
        let mut new = run();
        // The new run reads twice as fast on the first target, and has a step more.
        let s = &mut new.targets[0].steps[1];
        s.throughput *= 2.0;
        s.ops[0] = op("READ", 5_000..5_500);
        s.ops[1] = op("UPDATE", 5_000..5_500);
        new.steps.push("run workloadc".into());
        new.targets[0].steps.push(crate::ycsb::html::tests::step(
            "run workloadc",
            100,
            vec![op("READ", 1..10)],
        ));
        let md = comparison("old", &old, "new", &new).unwrap();
        let p99 = |s: &StepResults| micros(s.p99_ns().unwrap());
        let lines: Vec<&str> = md.lines().collect();
        assert_eq!(
            lines[2],
            "| step | target | ops/s old | ops/s new | new/old | p99 µs old | p99 µs new | new/old |"
        );
        assert_eq!(
            lines[4],
            "| load workloada | RedisDB_Embedded | 1,000 | 1,000 | 1.00× | 1.99 | 1.99 | 1.00× |"
        );
        let (o, n) = (&old.targets[0].steps[1], &new.targets[0].steps[1]);
        let expected_ratio = n.p99_ns().unwrap() as f64 / o.p99_ns().unwrap() as f64;
        assert_eq!(
            lines[6],
            format!(
                "| run workloada | RedisDB_Embedded | 2,000 | 4,000 | 2.00× | {} | {} | {:.2}× |",
                p99(o),
                p99(n),
                expected_ratio
            )
        );
        assert!(expected_ratio < 0.5, "the p99 fell: {expected_ratio}");
        assert_eq!(
            lines[8],
            "| run workloadc | RedisDB_Embedded | — | 90 | — | — | 0.01 | — |"
        );
        assert_eq!(lines.len(), 9);

        let mut elsewhere = run();
        for t in &mut elsewhere.targets {
            t.column.push_str("_Other");
        }
        assert_eq!(comparison("old", &old, "x", &elsewhere), None);
    }

    #[test]
    fn report_compare_takes_ycsb_directories_and_refuses_a_mix() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        write(&a, &run()).unwrap();
        write(&b, &run()).unwrap();
        let workloads: &[&dyn Compared] = &[&Ycsb];
        let md = crate::report::compare::markdown(workloads, &a, &b).unwrap();
        assert!(
            md.contains("| run workloada | Embedded_Direct | 2,000 | 2,000 | 1.00× |"),
            "{md}"
        );
        let go = tmp.path().join("new.txt");
        std::fs::write(&go, "BenchmarkX-2\t10\t100 ns/op\n").unwrap();
        let e = crate::report::compare::markdown(workloads, &a, &go).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{} holds ycsb results but {} holds coredata (or Go text) results: compare two \
                 runs of one workload",
                a.display(),
                go.display()
            )
        );
    }
}

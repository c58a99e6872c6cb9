//! The exporters of `edgebench kv`: memtier's text (`memtier.txt`), the markdown tables
//! (`results.md`) and memtier's JSON (`results.json`), each a renderer over the same
//! [`KvResults`], as the core-data formats are over [`crate::results::RunResults`].

use std::io;

use crate::kv::load::LoadResult;
use crate::kv::{export, report, KvConfig};
use crate::report::Exporter;

/// What a kv run measured: its configuration and its `-x` runs.
#[derive(Debug)]
pub struct KvResults {
    /// The run's configuration (the tables' header and columns follow it).
    pub cfg: KvConfig,
    /// Each `-x` run, in order (at least one).
    pub runs: Vec<LoadResult>,
    /// With several runs, their AGGREGATED AVERAGE.
    average: Option<LoadResult>,
    /// A merge of several load hosts (`report merge`): each host's own figures, by label;
    /// `runs` then holds their total alone. Empty for a run of one process.
    pub hosts: Vec<(String, LoadResult)>,
}

impl KvResults {
    /// Results of `runs` (at least one) under `cfg`.
    pub fn new(cfg: KvConfig, runs: Vec<LoadResult>) -> KvResults {
        assert!(!runs.is_empty(), "a kv run has at least one run");
        let average = (runs.len() > 1).then(|| LoadResult::aggregate(&runs));
        KvResults {
            cfg,
            runs,
            average,
            hosts: Vec::new(),
        }
    }

    /// Several load hosts' results (label, figures) and their `total`, under `cfg`.
    pub fn merged(cfg: KvConfig, hosts: Vec<(String, LoadResult)>, total: LoadResult) -> KvResults {
        KvResults {
            cfg,
            runs: vec![total],
            average: None,
            hosts,
        }
    }

    /// memtier's tables: ALL STATS, or with `-x` (every run with `--print-all-runs`) BEST,
    /// WORST and AGGREGATED AVERAGE.
    pub fn sections(&self) -> Vec<(String, &LoadResult)> {
        let runs = &self.runs;
        if !self.hosts.is_empty() {
            let mut sections: Vec<(String, &LoadResult)> = self
                .hosts
                .iter()
                .map(|(label, r)| (host_title(label), r))
                .collect();
            sections.push((merged_title(self.hosts.len()), &runs[0]));
            return sections;
        }
        let Some(average) = &self.average else {
            return vec![("ALL STATS".into(), &runs[0])];
        };
        let mut sections = Vec::new();
        if self.cfg.print_all_runs {
            for (i, r) in runs.iter().enumerate() {
                sections.push((format!("RUN #{} RESULTS", i + 1), r));
            }
        }
        sections.push((
            "BEST RUN RESULTS".into(),
            &runs[report::best_or_worst(runs, true)],
        ));
        sections.push((
            "WORST RUN RESULTS".into(),
            &runs[report::best_or_worst(runs, false)],
        ));
        sections.push((
            format!("AGGREGATED AVERAGE RESULTS ({} runs)", runs.len()),
            average,
        ));
        sections
    }
}

/// The section of one load host in a merge.
pub fn host_title(label: &str) -> String {
    format!("HOST {label} RESULTS")
}

/// The section of the hosts' total in a merge.
pub fn merged_title(hosts: usize) -> String {
    format!("MERGED RESULTS ({hosts} HOSTS)")
}

/// memtier's text: the header, then each section's table and latency distribution.
pub struct MemtierText;

impl Exporter<KvResults> for MemtierText {
    fn file_name(&self) -> &str {
        "memtier.txt"
    }

    fn render(&self, results: &KvResults) -> io::Result<Vec<u8>> {
        let cfg = &results.cfg;
        let mut text = report::header(cfg);
        for (title, r) in &results.sections() {
            text.push_str("\n\n");
            text.push_str(&report::all_stats(cfg, r, title));
            if !cfg.hide_histogram {
                text.push_str("\n\n");
                text.push_str(&report::distribution(r));
            }
        }
        Ok(text.into_bytes())
    }
}

/// The markdown tables: one per run, and the runs side by side with `-x`.
pub struct KvMarkdown;

impl Exporter<KvResults> for KvMarkdown {
    fn file_name(&self) -> &str {
        "results.md"
    }

    fn render(&self, results: &KvResults) -> io::Result<Vec<u8>> {
        let (cfg, runs) = (&results.cfg, &results.runs);
        let mut md = String::new();
        if !results.hosts.is_empty() {
            md.push_str(&crate::kv::merge::hosts_markdown(results));
            md.push_str(&format!(
                "\n## All hosts ({} hosts)\n\n",
                results.hosts.len()
            ));
            md.push_str(&report::markdown(cfg, &runs[0]));
            for (label, r) in &results.hosts {
                md.push_str(&format!("\n## Host {label}\n\n"));
                md.push_str(&report::markdown(cfg, r));
            }
        } else if runs.len() > 1 {
            for (i, r) in runs.iter().enumerate() {
                md.push_str(&format!("## Run {}\n\n", i + 1));
                md.push_str(&report::markdown(cfg, r));
                md.push('\n');
            }
            md.push_str(&report::runs_markdown(cfg, runs));
        } else {
            md.push_str(&report::markdown(cfg, &runs[0]));
        }
        Ok(md.into_bytes())
    }
}

/// memtier's `--json-out-file` document.
pub struct KvJson;

impl Exporter<KvResults> for KvJson {
    fn file_name(&self) -> &str {
        "results.json"
    }

    fn render(&self, results: &KvResults) -> io::Result<Vec<u8>> {
        let mut doc = export::document(&results.cfg, &results.sections());
        if !results.hosts.is_empty() {
            crate::kv::merge::note_hosts(&mut doc, results);
        }
        Ok(doc.to_pretty().into_bytes())
    }
}

/// The files of a kv results directory, in the order they are written: memtier.txt,
/// results.md, results.json (the indices [`MEMTIER_TEXT`] and [`JSON`] name two of them).
pub fn exporters() -> [&'static dyn Exporter<KvResults>; 3] {
    [&MemtierText, &KvMarkdown, &KvJson]
}

/// Where memtier's text is in [`exporters`] (and in what `write_all` returns).
pub const MEMTIER_TEXT: usize = 0;
/// Where results.md is in [`exporters`].
pub const MARKDOWN: usize = 1;
/// Where the JSON document is in [`exporters`].
pub const JSON: usize = 2;

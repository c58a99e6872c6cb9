//! The results model: plain data that every exporter reads.
//!
//! A run has targets (the table's columns); a target has benchmarks (the rows); a benchmark
//! has one [`Measurement`] per `--count` repetition. Summaries across repetitions (median and
//! spread) are computed here, once, so every exporter shows the same figures.
//!
//! Each measurement keeps its full HDR histogram (HdrHistogram's compressed V2 encoding, base64) so results of
//! several runs or hosts can later be merged exactly, not just their percentiles.

use serde::{Deserialize, Serialize};

/// Everything one `edgebench` run measured.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunResults {
    /// What was run, where and how.
    pub meta: RunMeta,
    /// One entry per target, in the order the targets were given.
    pub targets: Vec<TargetResults>,
}

/// How the run was configured and what machine it ran on.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunMeta {
    /// The workload, e.g. "coredata".
    pub workload: String,
    /// edgebench's version.
    pub version: String,
    /// When the run started, RFC 3339 UTC.
    pub started: String,
    /// `--benchtime` as given, e.g. "1s" or "100x".
    pub benchtime: String,
    /// `--count`.
    pub count: u32,
    /// `std::env::consts::OS`.
    pub goos: String,
    /// `std::env::consts::ARCH`, in Go's spelling (amd64, arm64).
    pub goarch: String,
    /// The CPU model name, when the OS tells it.
    pub cpu: String,
    /// Logical CPUs available (the `-N` suffix of Go benchmark names).
    pub procs: usize,
    /// `--baseline`: the column that `results.md`'s ratio table divides by.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub baseline: Option<String>,
    /// `--parallel`: the levels (concurrent clients) as given; empty without the flag. With
    /// levels, the Go text names a level's lines as `go test -cpu` does (`-N`, none for 1)
    /// instead of by [`RunMeta::procs`].
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub parallel: Vec<u32>,
    /// `--run-id`: the id the load hosts of one run share (`edgebench report merge` checks it).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub run_id: Option<String>,
    /// Set by `edgebench report merge`: the load hosts merged, by label, in the order of
    /// their columns (each target's total column is followed by one `NAME@HOST` per host).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub hosts: Vec<String>,
}

/// One target's column (one per `--parallel` level).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetResults {
    /// The target's name, e.g. "RedisDB_TCP"; the column is [`TargetResults::column`].
    pub name: String,
    /// Concurrent clients that ran the benchmarks (`--parallel`), 1 without the flag.
    #[serde(default = "one_client")]
    pub parallel: u32,
    /// Where it was: a URL, or what was spawned.
    pub endpoint: String,
    /// Set when the target could not be reached or failed part-way; the benchmarks that
    /// finished before the failure are kept.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// The benchmarks that finished, in run order.
    pub benchmarks: Vec<BenchResults>,
    /// Connection setup, timed apart from the benchmarks: the median time to open one store
    /// (connect, TLS handshake, AUTH, what the store checks on opening), over the clients'
    /// own opens and a few more made only to be timed. What TLS or a password costs once per
    /// connection shows here, not in the per-op figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect_ns: Option<u64>,
}

/// One benchmark on one target, over `--count` repetitions.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct BenchResults {
    /// The benchmark name, e.g. "ReadingCount".
    pub name: String,
    /// One measurement per repetition, in run order.
    pub runs: Vec<Measurement>,
    /// Why this benchmark has no figure on this target (the target has no equivalent of its
    /// call, e.g. EdgeX's API has no reading by id); tables show `—` and this as a footnote.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_applicable: Option<String>,
}

/// One measured round: the last, reported round of a `go test -bench` calibration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Iterations in the reported round (Go's `b.N`).
    pub n: u64,
    /// Wall time of the round divided by `n` (Go's ns/op).
    pub ns_per_op: f64,
    /// Bytes allocated by the client per op, integer-divided as Go does.
    pub bytes_per_op: u64,
    /// Allocations made by the client per op, integer-divided as Go does.
    pub allocs_per_op: u64,
    /// Latency percentiles of single operations in the round, ns (HDR, 3 significant digits).
    pub p50_ns: u64,
    /// 90th percentile, ns.
    pub p90_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p999_ns: u64,
    /// Slowest single operation, ns.
    pub max_ns: u64,
    /// The round's full latency histogram: HdrHistogram V2 compressed encoding, base64 (the
    /// form of HdrHistogram interval logs), so runs can be merged without losing precision.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub histogram: String,
    /// How much the store grew per op over this round: (its size after the round − before)
    /// / `n`, in bytes, as the store reports its size ([`crate::store::CoreData::size_bytes`]:
    /// Redis's `used_memory`, the engine's live heap, SQLite's pages, ...). Measured for the
    /// benchmarks that write; `None` for the others, for a store that cannot say, and in
    /// results written before it existed. Negative when the store shrank (an allocator giving
    /// memory back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store_bytes_per_op: Option<f64>,
}

impl Measurement {
    /// Operations per second implied by `ns_per_op`.
    pub fn ops_per_sec(&self) -> f64 {
        if self.ns_per_op > 0.0 {
            1e9 / self.ns_per_op
        } else {
            0.0
        }
    }
}

impl BenchResults {
    /// The repetition whose ns/op is the median (the lower middle one for an even count),
    /// so that all its figures come from one real round.
    pub fn median(&self) -> Option<&Measurement> {
        let mut order: Vec<&Measurement> = self.runs.iter().collect();
        order.sort_by(|a, b| a.ns_per_op.total_cmp(&b.ns_per_op));
        order.get(order.len().saturating_sub(1) / 2).copied()
    }

    /// Spread of ns/op over the repetitions: the largest distance of any repetition from the
    /// median, as a fraction of the median. It is edgebench's own measure, chosen to match the
    /// median the tables show; benchstat v1's "± x%" is the same idea measured from the mean
    /// after removing outliers. 0 for a single repetition.
    pub fn spread(&self) -> f64 {
        let Some(median) = self.median().map(|m| m.ns_per_op) else {
            return 0.0;
        };
        if median <= 0.0 {
            return 0.0;
        }
        self.runs
            .iter()
            .map(|m| (m.ns_per_op - median).abs() / median)
            .fold(0.0, f64::max)
    }
}

fn one_client() -> u32 {
    1
}

impl Default for TargetResults {
    /// An unnamed column of one client.
    fn default() -> Self {
        TargetResults {
            name: String::new(),
            parallel: one_client(),
            endpoint: String::new(),
            error: None,
            benchmarks: Vec::new(),
            connect_ns: None,
        }
    }
}

/// The column of `target` run by `clients` concurrent clients: the name alone for one client
/// (as without `--parallel`), `NAME-N` for more, as Go suffixes a benchmark run with `-cpu N`.
pub fn column_name(target: &str, clients: u32) -> String {
    if clients > 1 {
        format!("{target}-{clients}")
    } else {
        target.to_string()
    }
}

impl TargetResults {
    /// A column of `name`'s figures with `clients` concurrent clients, nothing finished yet.
    pub fn new(name: &str, clients: u32) -> Self {
        TargetResults {
            name: name.to_string(),
            parallel: clients,
            ..TargetResults::default()
        }
    }

    /// The column name: [`column_name`] of the target and its clients.
    pub fn column(&self) -> String {
        column_name(&self.name, self.parallel)
    }

    /// The benchmark with this name, if it finished.
    pub fn bench(&self, name: &str) -> Option<&BenchResults> {
        self.benchmarks.iter().find(|b| b.name == name)
    }
}

impl RunResults {
    /// Every benchmark name that any target finished, sorted as benchtomd sorts rows
    /// (byte order, like awk's `asorti`).
    pub fn bench_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .targets
            .iter()
            .flat_map(|t| t.benchmarks.iter().map(|b| b.name.clone()))
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench(ns: &[f64]) -> BenchResults {
        BenchResults {
            name: "X".into(),
            runs: ns
                .iter()
                .map(|&ns_per_op| Measurement {
                    ns_per_op,
                    ..Measurement::default()
                })
                .collect(),
            not_applicable: None,
        }
    }

    #[test]
    fn median_and_spread() {
        assert!(bench(&[]).median().is_none());
        assert_eq!(bench(&[]).spread(), 0.0);
        assert_eq!(bench(&[5.0]).median().unwrap().ns_per_op, 5.0);
        assert_eq!(bench(&[5.0]).spread(), 0.0);
        let b = bench(&[110.0, 90.0, 100.0]);
        assert_eq!(b.median().unwrap().ns_per_op, 100.0);
        assert!((b.spread() - 0.10).abs() < 1e-12);
        // Even count: the lower middle repetition.
        assert_eq!(
            bench(&[4.0, 1.0, 3.0, 2.0]).median().unwrap().ns_per_op,
            2.0
        );
    }

    #[test]
    fn ops_per_sec_from_ns() {
        let m = Measurement {
            ns_per_op: 250.0,
            ..Measurement::default()
        };
        assert_eq!(m.ops_per_sec(), 4_000_000.0);
        assert_eq!(Measurement::default().ops_per_sec(), 0.0);
    }
}

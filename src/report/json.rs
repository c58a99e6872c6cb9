//! JSON: the whole results model, as serde writes it, for tools and for merging runs later.
//!
//! Nothing is summarised or dropped (each repetition keeps its serialized HDR histogram), so
//! this file is the one that can be read back into a [`RunResults`] exactly. Pretty-printed
//! with a trailing newline so it diffs well and ends like a text file.

use std::io;

use super::Exporter;
use crate::results::RunResults;

/// The JSON exporter (`results.json`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Json;

impl Exporter for Json {
    fn file_name(&self) -> &str {
        "results.json"
    }

    fn render(&self, results: &RunResults) -> io::Result<Vec<u8>> {
        let mut bytes = serde_json::to_vec_pretty(results)?;
        bytes.push(b'\n');
        Ok(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    #[test]
    fn store_growth_reads_back_and_older_results_without_it_still_read() {
        let original = fixture::run();
        let bytes = Json.render(&original).unwrap();
        let back: RunResults = serde_json::from_slice(&bytes).unwrap();
        let growth = |r: &RunResults| -> Vec<Option<f64>> {
            r.targets
                .iter()
                .flat_map(|t| &t.benchmarks)
                .flat_map(|b| &b.runs)
                .map(|m| m.store_bytes_per_op)
                .collect()
        };
        assert_eq!(growth(&back), growth(&original));
        assert_eq!(
            growth(&original)[..4],
            [Some(176.25), Some(175.5), Some(1176.0), None]
        );
        // A results.json written before the field existed: every figure, and no growth.
        let mut old: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        for t in old["targets"].as_array_mut().unwrap() {
            for b in t["benchmarks"].as_array_mut().unwrap() {
                for m in b["runs"].as_array_mut().unwrap() {
                    m.as_object_mut().unwrap().remove("store_bytes_per_op");
                }
            }
        }
        assert!(!old.to_string().contains("store_bytes_per_op"));
        let old: RunResults = serde_json::from_value(old).unwrap();
        assert!(growth(&old).iter().all(Option::is_none));
        assert_eq!(old.targets[0].benchmarks[0].runs[0].n, 20000);
    }

    #[test]
    fn snapshot() {
        let bytes = Json.render(&fixture::run()).unwrap();
        insta::assert_snapshot!(String::from_utf8(bytes).unwrap(), @r#"
            {
              "meta": {
                "workload": "coredata",
                "version": "0.1.0",
                "started": "2024-05-01T12:00:00Z",
                "benchtime": "1s",
                "count": 3,
                "goos": "linux",
                "goarch": "amd64",
                "cpu": "Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz",
                "procs": 4
              },
              "targets": [
                {
                  "name": "RedisDB_TCP",
                  "parallel": 1,
                  "endpoint": "redis://127.0.0.1:6379",
                  "benchmarks": [
                    {
                      "name": "AddReading",
                      "runs": [
                        {
                          "n": 20000,
                          "ns_per_op": 76292.0,
                          "bytes_per_op": 1019,
                          "allocs_per_op": 42,
                          "p50_ns": 71000,
                          "p90_ns": 88100,
                          "p99_ns": 120300,
                          "p999_ns": 250100,
                          "max_ns": 1005000,
                          "store_bytes_per_op": 176.25
                        },
                        {
                          "n": 20000,
                          "ns_per_op": 70100.4,
                          "bytes_per_op": 1019,
                          "allocs_per_op": 42,
                          "p50_ns": 68000,
                          "p90_ns": 80000,
                          "p99_ns": 99900,
                          "p999_ns": 200000,
                          "max_ns": 900000,
                          "store_bytes_per_op": 175.5
                        },
                        {
                          "n": 20000,
                          "ns_per_op": 81000.0,
                          "bytes_per_op": 1020,
                          "allocs_per_op": 42,
                          "p50_ns": 75000,
                          "p90_ns": 95000,
                          "p99_ns": 130000,
                          "p999_ns": 300000,
                          "max_ns": 1200000,
                          "store_bytes_per_op": 1176.0
                        }
                      ]
                    },
                    {
                      "name": "Events",
                      "runs": [
                        {
                          "n": 20,
                          "ns_per_op": 100022091.0,
                          "bytes_per_op": 1796015,
                          "allocs_per_op": 28010,
                          "p50_ns": 99800000,
                          "p90_ns": 101200000,
                          "p99_ns": 104857600,
                          "p999_ns": 104857600,
                          "max_ns": 105000123
                        }
                      ]
                    },
                    {
                      "name": "EventCount",
                      "runs": [
                        {
                          "n": 5000000,
                          "ns_per_op": 210.4,
                          "bytes_per_op": 0,
                          "allocs_per_op": 0,
                          "p50_ns": 205,
                          "p90_ns": 230,
                          "p99_ns": 415,
                          "p999_ns": 1005,
                          "max_ns": 30015
                        }
                      ]
                    }
                  ],
                  "connect_ns": 1234500
                },
                {
                  "name": "MongoDB",
                  "parallel": 1,
                  "endpoint": "mongodb://127.0.0.1:27017",
                  "error": "connection reset by peer during Events",
                  "benchmarks": [
                    {
                      "name": "AddReading",
                      "runs": [
                        {
                          "n": 10000,
                          "ns_per_op": 146033.0,
                          "bytes_per_op": 3632,
                          "allocs_per_op": 70,
                          "p50_ns": 140000,
                          "p90_ns": 160000,
                          "p99_ns": 210000,
                          "p999_ns": 400000,
                          "max_ns": 2000000
                        }
                      ]
                    },
                    {
                      "name": "EventCount",
                      "runs": [
                        {
                          "n": 20000,
                          "ns_per_op": 94343.0,
                          "bytes_per_op": 1832,
                          "allocs_per_op": 43,
                          "p50_ns": 90000,
                          "p90_ns": 99000,
                          "p99_ns": 150000,
                          "p999_ns": 300000,
                          "max_ns": 600000
                        }
                      ]
                    }
                  ]
                }
              ]
            }
            "#);
    }

    #[test]
    fn reads_back() {
        let original = fixture::run();
        let bytes = Json.render(&original).unwrap();
        let back: RunResults = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(Json.render(&back).unwrap(), bytes);
    }
}

//! CSV: one row per repetition, every raw figure, for spreadsheets and scripts.
//!
//! Unlike the tables this keeps every `--count` repetition (numbered from 1 in run order), so
//! other statistics than our median can be computed from it. Times stay in nanoseconds, the
//! unit they were measured in; floats get at most three decimals, trailing zeros dropped, which
//! is finer than the measurement's own resolution. `target` is the target's name and
//! `parallel` its concurrent clients (`--parallel`, 1 without), and `store_bytes_per_op` the
//! store's growth per op (empty where not measured or the store cannot say): each added after
//! the others, so that scripts reading the earlier columns by position still work.

use std::io;

use super::Exporter;
use crate::results::RunResults;

/// The CSV exporter (`results.csv`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Csv;

const HEADER: [&str; 15] = [
    "target",
    "benchmark",
    "run",
    "n",
    "ns_per_op",
    "ops_per_sec",
    "p50_ns",
    "p90_ns",
    "p99_ns",
    "p999_ns",
    "max_ns",
    "bytes_per_op",
    "allocs_per_op",
    "parallel",
    "store_bytes_per_op",
];

impl Exporter for Csv {
    fn file_name(&self) -> &str {
        "results.csv"
    }

    fn render(&self, results: &RunResults) -> io::Result<Vec<u8>> {
        // `::csv` is the crate; plain `csv` would be this module.
        let mut w = ::csv::Writer::from_writer(Vec::new());
        w.write_record(HEADER)?;
        for t in &results.targets {
            for b in &t.benchmarks {
                for (i, m) in b.runs.iter().enumerate() {
                    w.write_record([
                        t.name.clone(),
                        b.name.clone(),
                        (i + 1).to_string(),
                        m.n.to_string(),
                        float_3dp(m.ns_per_op),
                        float_3dp(m.ops_per_sec()),
                        m.p50_ns.to_string(),
                        m.p90_ns.to_string(),
                        m.p99_ns.to_string(),
                        m.p999_ns.to_string(),
                        m.max_ns.to_string(),
                        m.bytes_per_op.to_string(),
                        m.allocs_per_op.to_string(),
                        t.parallel.to_string(),
                        m.store_bytes_per_op.map(float_3dp).unwrap_or_default(),
                    ])?;
                }
            }
        }
        w.into_inner().map_err(|e| e.into_error())
    }
}

/// At most three decimals, without trailing zeros: `76292`, `70100.4`, `13107.534`.
fn float_3dp(x: f64) -> String {
    let text = format!("{x:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    // "-0.000" trims to "-0"; a negative zero means nothing here.
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture;

    #[test]
    fn snapshot() {
        let bytes = Csv.render(&fixture::run()).unwrap();
        insta::assert_snapshot!(String::from_utf8(bytes).unwrap(), @r#"
            target,benchmark,run,n,ns_per_op,ops_per_sec,p50_ns,p90_ns,p99_ns,p999_ns,max_ns,bytes_per_op,allocs_per_op,parallel,store_bytes_per_op
            RedisDB_TCP,AddReading,1,20000,76292,13107.534,71000,88100,120300,250100,1005000,1019,42,1,176.25
            RedisDB_TCP,AddReading,2,20000,70100.4,14265.254,68000,80000,99900,200000,900000,1019,42,1,175.5
            RedisDB_TCP,AddReading,3,20000,81000,12345.679,75000,95000,130000,300000,1200000,1020,42,1,1176
            RedisDB_TCP,Events,1,20,100022091,9.998,99800000,101200000,104857600,104857600,105000123,1796015,28010,1,
            RedisDB_TCP,EventCount,1,5000000,210.4,4752851.711,205,230,415,1005,30015,0,0,1,
            MongoDB,AddReading,1,10000,146033,6847.767,140000,160000,210000,400000,2000000,3632,70,1,
            MongoDB,EventCount,1,20000,94343,10599.621,90000,99000,150000,300000,600000,1832,43,1,
            "#);
    }

    #[test]
    fn floats() {
        assert_eq!(float_3dp(76292.0), "76292");
        assert_eq!(float_3dp(70100.4), "70100.4");
        assert_eq!(float_3dp(1e9 / 76292.0), "13107.534");
        assert_eq!(float_3dp(0.0), "0");
        assert_eq!(float_3dp(-0.0001), "0");
        assert_eq!(float_3dp(100.0), "100");
    }
}

//! The output section of [`super::KvConfig`] (`--print-percentiles`; the file flags pass
//! through as given) and `--show-config`, which prints the typed configuration back as
//! memtier's `config_print` does.
//!
//! Invariant: every percentile is in [0, 100].

use std::fmt::Write as _;
use std::path::PathBuf;

use super::args::KvArgs;
use super::config::{KvConfig, Requests};
use crate::kv::data::{DataSize, SizePattern};
use crate::kv::error::{invalid, KvConfigError};

/// `--print-percentiles`, p50, p99 and p99.9 by default.
pub(super) fn print_percentiles(a: &KvArgs) -> Result<Vec<f64>, KvConfigError> {
    let Some(v) = &a.print_percentiles else {
        return Ok(vec![50.0, 99.0, 99.9]);
    };
    let fix = "quantiles must be expressed as [0.0-100.0],[0.0-100.0](,...)";
    v.split(',')
        .map(|p| match p.trim().parse::<f64>() {
            Ok(x) if (0.0..=100.0).contains(&x) => Ok(x),
            _ => Err(invalid("--print-percentiles", v, fix)),
        })
        .collect()
}

impl KvConfig {
    /// The configuration as memtier's `--show-config` prints it (`config_print`): one
    /// `name = value` line per option memtier prints and edgebench supports, then edgebench's
    /// own. Gaussian settings show the values in effect (memtier prints 0 for "default").
    pub fn show_config(&self) -> String {
        let mut s = String::new();
        let yn = |b: bool| if b { "yes" } else { "no" };
        let path = |p: &Option<PathBuf>| {
            p.as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default()
        };
        let (range, pattern) = match &self.data_size {
            DataSize::Range { min, max, pattern } => (format!("{min}-{max}"), *pattern),
            _ => ("0-0".to_string(), SizePattern::Random),
        };
        let list = match &self.data_size {
            DataSize::List(items) => items
                .iter()
                .map(|w| format!("{}:{}", w.size, w.weight))
                .collect::<Vec<_>>()
                .join(","),
            _ => String::new(),
        };
        let fixed = match &self.data_size {
            DataSize::Fixed(n) => *n,
            _ => 0,
        };
        let requests = match self.requests {
            Some(Requests::Count(n)) => n.to_string(),
            Some(Requests::AllKeys) => "allkeys".to_string(),
            None => "0".to_string(),
        };
        let expiry = self
            .expiry
            .map(|e| format!("{}-{}", e.min, e.max))
            .unwrap_or_else(|| "0-0".to_string());
        let lines: Vec<(&str, String)> = vec![
            ("server", self.server.clone().unwrap_or_default()),
            ("port", self.port.to_string()),
            ("uri", self.uri.clone().unwrap_or_default()),
            ("unix socket", path(&self.unix_socket)),
            ("protocol", self.protocol.name().to_string()),
            ("out_file", path(&self.out_file)),
            ("run_count", self.run_count.to_string()),
            ("requests", requests),
            ("rate_limit", self.rate_limiting.unwrap_or(0).to_string()),
            ("clients", self.clients.to_string()),
            ("threads", self.threads.to_string()),
            (
                "test_time",
                self.test_time.map_or(0, |t| t.as_secs()).to_string(),
            ),
            ("ratio", format!("{}:{}", self.ratio.sets, self.ratio.gets)),
            ("pipeline", self.pipeline.to_string()),
            ("data_size", fixed.to_string()),
            ("random_data", yn(self.random_data).to_string()),
            ("data_size_range", range),
            ("data_size_list", list),
            (
                "data_size_pattern",
                if pattern == SizePattern::Sequential {
                    "S"
                } else {
                    "R"
                }
                .to_string(),
            ),
            ("expiry_range", expiry),
            ("key_prefix", self.keys.prefix.clone()),
            ("key_minimum", self.keys.min.to_string()),
            ("key_maximum", self.keys.max.to_string()),
            (
                "key_pattern",
                format!(
                    "{}:{}",
                    self.set_pattern.letter(),
                    self.get_pattern.letter()
                ),
            ),
            ("key_stddev", format!("{:.6}", self.keys.effective_stddev())),
            ("key_median", format!("{:.6}", self.keys.effective_median())),
            ("key_zipf_exp", format!("{:.6}", self.keys.zipf_exp)),
            (
                "reconnect_interval",
                self.reconnect_interval.unwrap_or(0).to_string(),
            ),
            (
                "connection_timeout",
                self.connection_timeout
                    .map_or(0, |t| t.as_secs())
                    .to_string(),
            ),
            ("multi_key_get", self.multi_key_get.to_string()),
            (
                "authenticate",
                if self.authenticate.is_some() {
                    "(set)".to_string()
                } else {
                    String::new()
                },
            ),
            ("select-db", self.select_db.to_string()),
            (
                "wait-ratio",
                self.wait_ratio
                    .map_or("0:0".into(), |w| format!("{}:{}", w.sets, w.waits)),
            ),
            (
                "num-slaves",
                self.wait_ratio.map_or("0-0".into(), |w| {
                    format!("{}-{}", w.num_slaves.0, w.num_slaves.1)
                }),
            ),
            (
                "wait-timeout",
                self.wait_ratio.map_or("0-0".into(), |w| {
                    format!("{}-{}", w.timeout_ms.0, w.timeout_ms.1)
                }),
            ),
            ("json-out-file", path(&self.json_out_file)),
            ("print-all-runs", yn(self.print_all_runs).to_string()),
            (
                "distinct_client_seed",
                yn(self.distinct_client_seed).to_string(),
            ),
            ("randomize", yn(self.randomize).to_string()),
            ("seed", self.seed.to_string()),
            ("target", self.target.clone().unwrap_or_default()),
            ("rate", self.rate.unwrap_or(0).to_string()),
            ("warmup", format!("{:?}", self.warmup)),
            ("wait", self.wait.to_string()),
        ];
        for (name, value) in lines {
            let _ = writeln!(s, "{name} = {value}");
        }
        for (i, c) in self.commands.iter().enumerate() {
            let _ = writeln!(
                s,
                "command {} = {} (ratio {}, key pattern {})",
                i + 1,
                c.text,
                c.ratio,
                c.key_pattern.letter()
            );
        }
        s
    }
}

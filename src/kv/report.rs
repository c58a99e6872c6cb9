//! What `edgebench kv` prints: memtier_benchmark's `ALL STATS` table (its layout from
//! `run_stats.cpp`: `%-6s` type, `%14.2f` ops/sec, `%13` hit and miss columns, `%16.5f`
//! latencies in ms, `%13.2f` KB/sec, each line ending in a space), edgebench's markdown table
//! of the same figures, and the client self-check.
//!
//! Every figure is computed here from [`LoadResult`] alone, so the two tables always agree.

use std::fmt::Write as _;

use super::load::{LoadResult, RowStats};
use super::KvConfig;

/// A client thread busier than this (CPU time over wall time) is the bottleneck.
pub const SATURATED: f64 = 0.9;

/// The figures of one row, per second and in ms.
struct Figures {
    ops: f64,
    hits: Option<f64>,
    misses: Option<f64>,
    avg_ms: Option<f64>,
    pct_ms: Vec<Option<f64>>,
    kb: f64,
}

fn figures(r: &RowStats, secs: f64, counts_hits: bool, percentiles: &[f64]) -> Figures {
    let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let has = r.ops > 0;
    Figures {
        ops: per_sec(r.ops),
        hits: counts_hits.then(|| per_sec(r.hits)),
        misses: counts_hits.then(|| per_sec(r.misses)),
        avg_ms: has.then(|| r.latency.mean() / 1e6),
        pct_ms: percentiles
            .iter()
            .map(|p| has.then(|| r.latency.value_at_quantile(p / 100.0) as f64 / 1e6))
            .collect(),
        kb: if secs > 0.0 {
            (r.bytes_tx + r.bytes_rx) as f64 / 1024.0 / secs
        } else {
            0.0
        },
    }
}

/// `50` → "p50", `99.9` → "p99.9".
fn pct_label(p: f64) -> String {
    format!("p{p}")
}

/// Which rows count hits and misses (memtier shows `---` for the others).
fn counts_hits(cfg: &KvConfig, name: &str) -> bool {
    cfg.commands.is_empty() && name == "Gets"
}

/// memtier's header lines before the table (threads, connections, requests or seconds).
pub fn header(cfg: &KvConfig) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:<10}Threads", cfg.threads);
    let _ = writeln!(out, "{:<10}Connections per thread", cfg.clients);
    match cfg.test_time {
        Some(t) => {
            let _ = writeln!(out, "{:<10}Seconds", t.as_secs());
        }
        None => {
            let per_client = cfg.requests_for(0).unwrap_or(0);
            let _ = writeln!(out, "{:<10}Requests per client", per_client);
        }
    }
    out
}

/// The `ALL STATS` table (or another `title`, as `BEST RUN RESULTS`).
pub fn all_stats(cfg: &KvConfig, result: &LoadResult, title: &str) -> String {
    let secs = result.elapsed.as_secs_f64();
    let pcts = &cfg.print_percentiles;
    let mut head = format!(
        "{:<6}{:>14}{:>13}{:>13}{:>16}",
        "Type", "Ops/sec", "Hits/sec", "Misses/sec", "Avg. Latency"
    );
    for p in pcts {
        let _ = write!(head, "{:>16}", format!("{} Latency", pct_label(*p)));
    }
    let _ = write!(head, "{:>13} ", "KB/sec");
    let width = head.len();
    let mut out = String::new();
    let _ = writeln!(out, "{title}");
    let _ = writeln!(out, "{}", "=".repeat(width));
    let _ = writeln!(out, "{head}");
    let _ = writeln!(out, "{}", "-".repeat(width));
    let row = |out: &mut String, name: &str, f: &Figures| {
        let opt = |v: Option<f64>, w: usize, prec: usize| match v {
            Some(v) => format!("{v:>w$.prec$}"),
            None => format!("{:>w$}", "---"),
        };
        let _ = write!(
            out,
            "{:<6}{:>14.2}{}{}{}",
            name,
            f.ops,
            opt(f.hits, 13, 2),
            opt(f.misses, 13, 2),
            opt(f.avg_ms, 16, 5)
        );
        for p in &f.pct_ms {
            out.push_str(&opt(*p, 16, 5));
        }
        let _ = writeln!(out, "{:>13.2} ", f.kb);
    };
    for (name, r) in &result.rows {
        row(
            &mut out,
            name,
            &figures(r, secs, counts_hits(cfg, name), pcts),
        );
    }
    if cfg.commands.is_empty() {
        // memtier's WAIT command row; edgebench sends no WAIT.
        let mut waits = format!(
            "{:<6}{:>14.2}{:>13}{:>13}{:>16}",
            "Waits", 0.0, "---", "---", "---"
        );
        for _ in pcts {
            let _ = write!(waits, "{:>16}", "---");
        }
        let _ = writeln!(out, "{waits}{:>13} ", "---");
    }
    let totals = result.totals();
    let mut f = figures(&totals, secs, true, pcts);
    let gets = result.rows.iter().find(|(n, _)| counts_hits(cfg, n));
    let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    f.hits = Some(gets.map_or(0.0, |(_, g)| per_sec(g.hits)));
    f.misses = Some(gets.map_or(0.0, |(_, g)| per_sec(g.misses)));
    row(&mut out, "Totals", &f);
    out
}

/// edgebench's markdown table of the same figures, plus error counts.
pub fn markdown(cfg: &KvConfig, result: &LoadResult) -> String {
    let secs = result.elapsed.as_secs_f64();
    let pcts = &cfg.print_percentiles;
    let mut out = String::from("| Type | Ops/sec | Hits/sec | Misses/sec | Avg. Latency (ms) |");
    for p in pcts {
        let _ = write!(out, " {} (ms) |", pct_label(*p));
    }
    out.push_str(" KB/sec | Errors |\n|-|-|-|-|-|");
    for _ in pcts {
        out.push_str("-|");
    }
    out.push_str("-|-|\n");
    let cell = |v: Option<f64>, prec: usize| v.map_or("---".to_string(), |v| format!("{v:.prec$}"));
    let mut rows: Vec<(String, RowStats, bool)> = result
        .rows
        .iter()
        .map(|(n, r)| (n.clone(), r.clone(), counts_hits(cfg, n)))
        .collect();
    rows.push(("Totals".into(), result.totals(), false));
    for (name, r, hits) in &rows {
        let f = figures(r, secs, *hits, pcts);
        let _ = write!(
            out,
            "| {name} | {:.2} | {} | {} | {} |",
            f.ops,
            cell(f.hits, 2),
            cell(f.misses, 2),
            cell(f.avg_ms, 5)
        );
        for p in &f.pct_ms {
            let _ = write!(out, " {} |", cell(*p, 5));
        }
        let _ = writeln!(out, " {:.2} | {} |", f.kb, r.errors);
    }
    out
}

/// One line per client thread that was busier than [`SATURATED`]; empty when none was.
pub fn saturation(result: &LoadResult) -> Vec<String> {
    result
        .thread_cpu
        .iter()
        .enumerate()
        .filter_map(|(i, (cpu, wall))| {
            let busy = cpu.as_secs_f64() / wall.as_secs_f64().max(1e-9);
            (busy > SATURATED).then(|| {
                format!(
                    "client thread {i} was {:.0}% busy (CPU {:.2}s over {:.2}s): the client was \
                     the bottleneck, so these figures describe edgebench, not the server; add \
                     threads (-t) or use fewer connections per thread",
                    busy * 100.0,
                    cpu.as_secs_f64(),
                    wall.as_secs_f64()
                )
            })
        })
        .collect()
}

/// memtier's `Request Latency Distribution`: for each row, every recorded latency bucket
/// with the cumulative percentage of requests at or under it (`Type <= msec Percent`).
/// Rows are named as memtier names them there (`SET`, `GET`, or the command name).
pub fn distribution(result: &LoadResult) -> String {
    let mut out = String::from("Request Latency Distribution\n");
    let _ = writeln!(out, "{:<8}{:>12}{:>16}", "Type", "<= msec", "Percent");
    let _ = writeln!(out, "{}", "-".repeat(72));
    for (name, r) in &result.rows {
        if r.ops == 0 {
            continue;
        }
        let label = match name.as_str() {
            "Sets" => "SET",
            "Gets" => "GET",
            other => other,
        };
        let total = r.latency.len() as f64;
        let mut seen = 0u64;
        for v in r.latency.iter_recorded() {
            seen += v.count_since_last_iteration();
            let _ = writeln!(
                out,
                "{:<8}{:>12.3}{:>16.3}",
                label,
                r.latency.highest_equivalent(v.value_iterated_to()) as f64 / 1e6,
                seen as f64 * 100.0 / total
            );
        }
        out.push_str("---\n");
    }
    out
}

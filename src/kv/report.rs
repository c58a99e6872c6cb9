//! What `edgebench kv` prints: memtier_benchmark's `ALL STATS` table (its layout from
//! `run_stats.cpp`: `%-6s` type, `%14.2f` ops/sec, `%13` hit and miss columns, `%16.5f`
//! latencies in ms, `%13.2f` KB/sec, each line ending in a space), edgebench's markdown table
//! of the same figures, and the client self-check.
//!
//! Every figure is computed here from [`LoadResult`] alone, so the two tables always agree.

use std::fmt::Write as _;

use super::export::{distribution_points, hdr_row_name};
use super::load::{LoadResult, RowStats, WAITS_ROW};
use super::KvConfig;

/// A client thread busier than this (CPU time over wall time) is the bottleneck.
pub const SATURATED: f64 = 0.9;

/// The figures of one row, per second and in ms.
struct Figures {
    ops: f64,
    hits: Option<f64>,
    misses: Option<f64>,
    /// Cluster mode: `-MOVED` and `-ASK` replies per second.
    redirects: Option<(f64, f64)>,
    avg_ms: Option<f64>,
    pct_ms: Vec<Option<f64>>,
    /// Open loop, when `avg_ms` and `pct_ms` are the corrected figures: the latency from
    /// the actual send (average, percentiles).
    from_send: Option<(Option<f64>, Vec<Option<f64>>)>,
    kb: f64,
}

fn figures(r: &RowStats, secs: f64, counts_hits: bool, percentiles: &[f64]) -> Figures {
    let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let has = r.ops > 0;
    Figures {
        ops: per_sec(r.ops),
        hits: counts_hits.then(|| per_sec(r.hits)),
        misses: counts_hits.then(|| per_sec(r.misses)),
        redirects: None,
        avg_ms: has.then(|| r.latency.mean() / 1e6),
        pct_ms: percentiles
            .iter()
            .map(|p| has.then(|| r.latency.value_at_quantile(p / 100.0) as f64 / 1e6))
            .collect(),
        from_send: None,
        kb: if secs > 0.0 {
            (r.bytes_tx + r.bytes_rx) as f64 / 1024.0 / secs
        } else {
            0.0
        },
    }
}

/// `50` → "p50", `99.9` → "p99.9".
pub(crate) fn pct_label(p: f64) -> String {
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

/// The `ALL STATS` table (or another `title`, as `BEST RUN RESULTS`). In open loop
/// (`--rate`, `--rate-limiting`) memtier's latency columns hold the coordinated-omission
/// corrected latency, from each request's intended send time, as [`markdown`] and
/// [`loop_note`] say, and a column per figure beside them gives the latency from the actual
/// send (memtier's meaning) under "from send" names. Closed loop is memtier's table exactly.
pub fn all_stats(cfg: &KvConfig, result: &LoadResult, title: &str) -> String {
    let secs = result.elapsed.as_secs_f64();
    let pcts = &cfg.print_percentiles;
    let cluster = cfg.cluster_mode;
    let open = result.rate.is_some();
    let mut head = format!(
        "{:<6}{:>14}{:>13}{:>13}",
        "Type", "Ops/sec", "Hits/sec", "Misses/sec"
    );
    if cluster {
        // memtier adds these two columns in cluster mode only.
        let _ = write!(head, "{:>13}{:>13}", "MOVED/sec", "ASK/sec");
    }
    let _ = write!(head, "{:>16}", "Avg. Latency");
    for p in pcts {
        let _ = write!(head, "{:>16}", format!("{} Latency", pct_label(*p)));
    }
    // Open loop: memtier's latency columns hold the corrected figures (from the intended
    // send); these columns beside them hold memtier's own meaning, from the actual send.
    let from_send_widths: Vec<usize> = if open {
        let labels = std::iter::once("Avg. from send".to_string())
            .chain(pcts.iter().map(|p| format!("{} from send", pct_label(*p))));
        labels
            .map(|label| {
                let w = (label.len() + 2).max(16);
                let _ = write!(head, "{label:>w$}");
                w
            })
            .collect()
    } else {
        Vec::new()
    };
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
            "{:<6}{:>14.2}{}{}",
            name,
            f.ops,
            opt(f.hits, 13, 2),
            opt(f.misses, 13, 2),
        );
        if cluster {
            let (moved, ask) = f.redirects.unzip();
            out.push_str(&opt(moved, 13, 2));
            out.push_str(&opt(ask, 13, 2));
        }
        out.push_str(&opt(f.avg_ms, 16, 5));
        for p in &f.pct_ms {
            out.push_str(&opt(*p, 16, 5));
        }
        if let Some((avg, pct)) = &f.from_send {
            let values = std::iter::once(avg).chain(pct);
            for (v, w) in values.zip(&from_send_widths) {
                out.push_str(&opt(*v, *w, 5));
            }
        }
        let _ = writeln!(out, "{:>13.2} ", f.kb);
    };
    // Open loop: lead with the corrected latency, keep the latency from the actual send.
    let corrected = |f: &mut Figures, r: &RowStats| {
        if open {
            let (avg, pct) = latency_ms(&r.corrected, pcts);
            let avg = std::mem::replace(&mut f.avg_ms, avg);
            let pct = std::mem::replace(&mut f.pct_ms, pct);
            f.from_send = Some((avg, pct));
        }
    };
    let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    for (name, r) in &result.rows {
        let mut f = figures(r, secs, counts_hits(cfg, name), pcts);
        f.redirects = Some((per_sec(r.moved), per_sec(r.ask)));
        corrected(&mut f, r);
        row(&mut out, name, &f);
    }
    if cfg.commands.is_empty() && !result.rows.iter().any(|(n, _)| n == WAITS_ROW) {
        // memtier's WAIT command row, empty: this run sent no WAIT (no --wait-ratio).
        let mut waits = format!("{:<6}{:>14.2}{:>13}{:>13}", "Waits", 0.0, "---", "---");
        if cluster {
            let _ = write!(waits, "{:>13}{:>13}", "---", "---");
        }
        let _ = write!(waits, "{:>16}", "---");
        for _ in pcts {
            let _ = write!(waits, "{:>16}", "---");
        }
        for w in &from_send_widths {
            let _ = write!(waits, "{:>w$}", "---");
        }
        let _ = writeln!(out, "{waits}{:>13} ", "---");
    }
    let totals = result.totals();
    let mut f = figures(&totals, secs, true, pcts);
    let gets = result.rows.iter().find(|(n, _)| counts_hits(cfg, n));
    f.redirects = Some((per_sec(totals.moved), per_sec(totals.ask)));
    f.hits = Some(gets.map_or(0.0, |(_, g)| per_sec(g.hits)));
    f.misses = Some(gets.map_or(0.0, |(_, g)| per_sec(g.misses)));
    corrected(&mut f, &totals);
    row(&mut out, "Totals", &f);
    out
}

/// edgebench's markdown table of the same figures, plus error counts. In open loop the
/// latency columns are from each request's *intended* send time (coordinated omission
/// corrected) and a second group of columns gives the latency from the actual send
/// (memtier's meaning); a note under the table says which is which and counts late and
/// dropped requests.
pub fn markdown(cfg: &KvConfig, result: &LoadResult) -> String {
    let secs = result.elapsed.as_secs_f64();
    let pcts = &cfg.print_percentiles;
    let open = result.rate.is_some();
    let mut out = String::from("| Type | Ops/sec | Hits/sec | Misses/sec | Avg. Latency (ms) |");
    for p in pcts {
        let _ = write!(out, " {} (ms) |", pct_label(*p));
    }
    let mut cols = 5 + pcts.len();
    if open {
        out.push_str(" Avg. from send (ms) |");
        for p in pcts {
            let _ = write!(out, " {} from send (ms) |", pct_label(*p));
        }
        cols += 1 + pcts.len();
    }
    out.push_str(" KB/sec | Errors |\n|");
    for _ in 0..cols + 2 {
        out.push_str("-|");
    }
    out.push('\n');
    let cell = |v: Option<f64>, prec: usize| v.map_or("---".to_string(), |v| format!("{v:.prec$}"));
    let mut rows: Vec<(String, RowStats, bool)> = result
        .rows
        .iter()
        .map(|(n, r)| (n.clone(), r.clone(), counts_hits(cfg, n)))
        .collect();
    rows.push(("Totals".into(), result.totals(), false));
    for (name, r, hits) in &rows {
        let f = figures(r, secs, *hits, pcts);
        let (avg, pct) = if open {
            latency_ms(&r.corrected, pcts)
        } else {
            (f.avg_ms, f.pct_ms.clone())
        };
        let _ = write!(
            out,
            "| {name} | {:.2} | {} | {} | {} |",
            f.ops,
            cell(f.hits, 2),
            cell(f.misses, 2),
            cell(avg, 5)
        );
        for p in &pct {
            let _ = write!(out, " {} |", cell(*p, 5));
        }
        if open {
            let _ = write!(out, " {} |", cell(f.avg_ms, 5));
            for p in &f.pct_ms {
                let _ = write!(out, " {} |", cell(*p, 5));
            }
        }
        let _ = writeln!(out, " {:.2} | {} |", f.kb, r.errors);
    }
    out.push('\n');
    out.push_str(&loop_note(cfg, result));
    out
}

/// Mean and percentiles of a latency histogram (ns) in ms; `None` when it is empty.
pub(crate) fn latency_ms(
    h: &hdrhistogram::Histogram<u64>,
    pcts: &[f64],
) -> (Option<f64>, Vec<Option<f64>>) {
    let has = !h.is_empty();
    (
        has.then(|| h.mean() / 1e6),
        pcts.iter()
            .map(|p| has.then(|| h.value_at_quantile(p / 100.0) as f64 / 1e6))
            .collect(),
    )
}

/// What the latency columns mean, the loop, and (open loop) late and dropped requests.
pub fn loop_note(cfg: &KvConfig, result: &LoadResult) -> String {
    let warmup = if cfg.warmup.is_zero() {
        String::new()
    } else {
        format!(
            " The first {:?} (warm-up) is excluded: requests sent in it are not counted and \
             the rates divide by the {:.3} s after it.",
            cfg.warmup,
            result.elapsed.as_secs_f64()
        )
    };
    let failover = result
        .failover
        .map(|f| format!(" Failover: {}.", f.describe()))
        .unwrap_or_default();
    let warmup = format!("{warmup}{failover}");
    match result.rate {
        None => format!(
            "Closed loop: latency from the moment a request's batch is written to the moment \
             its reply is read (memtier's meaning).{warmup}\n"
        ),
        Some(rate) => format!(
            "Open loop at {rate:.1} requests/s in total ({:.3} per connection): latency from \
             each request's intended send time (coordinated omission corrected); the \
             \"from send\" columns are from the actual send (memtier's meaning). Late (sent \
             more than one interval behind schedule): {}. Dropped (due before the end, never \
             sent): {}.{warmup}\n",
            rate / (f64::from(cfg.threads) * f64::from(cfg.clients)),
            result.late,
            result.dropped
        ),
    }
}

/// The run memtier calls best (`best = true`) or worst among `-x` runs: by total ops/sec,
/// the first one on ties (`memtier_benchmark.cpp`, `main`).
pub fn best_or_worst(runs: &[LoadResult], best: bool) -> usize {
    let mut pick = 0;
    for (i, r) in runs.iter().enumerate().skip(1) {
        let (a, b) = (r.ops_per_sec(), runs[pick].ops_per_sec());
        if (best && a > b) || (!best && a < b) {
            pick = i;
        }
    }
    pick
}

/// edgebench's summary of `-x` runs: for the Totals row, each figure's median over the runs
/// and its spread as the smallest and largest value (min–max). Latency figures are the
/// corrected ones in open loop.
pub fn runs_markdown(cfg: &KvConfig, runs: &[LoadResult]) -> String {
    let pcts = &cfg.print_percentiles;
    let open = runs.first().is_some_and(|r| r.rate.is_some());
    let mut figures_by_run: Vec<(String, Vec<f64>)> = vec![("Ops/sec".into(), Vec::new())];
    figures_by_run.push(("Avg. Latency (ms)".into(), Vec::new()));
    for p in pcts {
        figures_by_run.push((format!("{} (ms)", pct_label(*p)), Vec::new()));
    }
    for r in runs {
        let t = r.totals();
        let h = if open { &t.corrected } else { &t.latency };
        let (avg, pct) = latency_ms(h, pcts);
        figures_by_run[0].1.push(r.ops_per_sec());
        figures_by_run[1].1.push(avg.unwrap_or(f64::NAN));
        for (i, p) in pct.into_iter().enumerate() {
            figures_by_run[2 + i].1.push(p.unwrap_or(f64::NAN));
        }
    }
    let mut out = format!(
        "## {} runs: median and spread (Totals; spread = min–max over the runs)\n\n\
         | Figure | Median | Min | Max | (Max − Min) / Median |\n|-|-|-|-|-|\n",
        runs.len()
    );
    for (name, mut v) in figures_by_run {
        let (lo, hi) = v
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(*x), hi.max(*x))
            });
        let m = crate::runner::stats::median(&mut v);
        let rel = if m > 0.0 { (hi - lo) / m * 100.0 } else { 0.0 };
        let prec = if name == "Ops/sec" { 2 } else { 5 };
        let _ = writeln!(
            out,
            "| {name} | {m:.prec$} | {lo:.prec$} | {hi:.prec$} | {rel:.1}% |"
        );
    }
    out
}

/// memtier's live line (`memtier_benchmark.cpp`, `run_benchmark`), without its trailing `\r`.
#[allow(clippy::too_many_arguments)]
pub fn live_line(
    run: u32,
    progress_pct: f64,
    secs: u64,
    threads: u32,
    ops: u64,
    cur_ops_sec: f64,
    avg_ops_sec: f64,
    cur_bytes_sec: f64,
    avg_bytes_sec: f64,
    cur_latency_ms: f64,
    avg_latency_ms: f64,
) -> String {
    format!(
        "[RUN #{run} {progress_pct:.0}%, {secs:>3} secs] {threads:>2} threads: {ops:>11} ops, \
         {:>7} (avg: {:>7}) ops/sec, {}/sec (avg: {}/sec), {cur_latency_ms:>5.2} (avg: \
         {avg_latency_ms:>5.2}) msec latency",
        cur_ops_sec as u64,
        avg_ops_sec as u64,
        size_str(cur_bytes_sec),
        size_str(avg_bytes_sec)
    )
}

/// memtier's `size_to_str`: bytes as KB, MB or GB with two decimals.
fn size_str(bytes: f64) -> String {
    const K: f64 = 1024.0;
    if bytes >= K * K * K {
        format!("{:.2}GB", bytes / (K * K * K))
    } else if bytes >= K * K {
        format!("{:.2}MB", bytes / (K * K))
    } else {
        format!("{:.2}KB", bytes / K)
    }
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

/// memtier's `Request Latency Distribution` (`run_stats.cpp`, `print_histogram` and
/// `histogram_print`): a `%-6s %12s %12s` header, 72 dashes, then per row the points of
/// [`distribution_points`] as `%-6s %8.3f %12.3f` (type, ms, cumulative percent), each row's
/// points followed by `---`. Rows are named as memtier names them (`SET`, `GET` or the
/// command); memtier's SET/GET mode ends with an empty `WAIT` section, which prints nothing.
pub fn distribution(result: &LoadResult) -> String {
    let mut out = String::from("Request Latency Distribution\n");
    let _ = writeln!(out, "{:<6} {:>12} {:>12}", "Type", "<= msec   ", "Percent");
    let _ = writeln!(out, "{}", "-".repeat(72));
    for (name, r) in &result.rows {
        let label = hdr_row_name(name);
        for (ms, pct) in distribution_points(&r.latency) {
            let _ = writeln!(out, "{label:<6} {ms:>8.3} {pct:>12.3}");
        }
        out.push_str("---\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    /// A one-second run of 100 SETs and 100 GETs: from the actual send every request took
    /// 1 ms; from its intended send (open loop only) 99 took 1 ms and one waited 500 ms
    /// behind a stalled server. `rate` says which loop.
    fn run(rate: Option<f64>) -> LoadResult {
        let row = |corrected: bool| {
            let mut r = RowStats::default();
            for i in 0..100 {
                r.latency.record(1_000_000).unwrap();
                if corrected {
                    let ns = if i == 0 { 500_000_000 } else { 1_000_000 };
                    r.corrected.record(ns).unwrap();
                }
            }
            r.ops = 100;
            r.bytes_tx = 102_400;
            r
        };
        LoadResult {
            rows: vec![
                ("Sets".into(), row(rate.is_some())),
                ("Gets".into(), row(rate.is_some())),
            ],
            elapsed: Duration::from_secs(1),
            started_at: SystemTime::UNIX_EPOCH,
            seconds: Vec::new(),
            rate,
            late: 1,
            dropped: 0,
            thread_cpu: Vec::new(),
            stopped: None,
            failover: None,
        }
    }

    fn config(args: &[&str]) -> KvConfig {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            kv: crate::kv::KvArgs,
        }
        let argv = std::iter::once("kv").chain(args.iter().copied());
        KvConfig::from_args(&<Cli as clap::Parser>::parse_from(argv).kv).unwrap()
    }

    #[test]
    fn closed_loop_all_stats_is_memtiers_table() {
        let cfg = config(&["-c", "1", "-t", "1"]);
        let mut want = String::from("ALL STATS\n");
        for line in [
            "=".repeat(124).as_str(),
            "Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency     p99 Latency   p99.9 Latency       KB/sec ",
            "-".repeat(124).as_str(),
            "Sets          100.00          ---          ---         1.00019         1.00045         1.00045         1.00045       100.00 ",
            "Gets          100.00         0.00         0.00         1.00019         1.00045         1.00045         1.00045       100.00 ",
            "Waits           0.00          ---          ---             ---             ---             ---             ---          --- ",
            "Totals        200.00         0.00         0.00         1.00019         1.00045         1.00045         1.00045       200.00 ",
        ] {
            want.push_str(line);
            want.push('\n');
        }
        assert_eq!(all_stats(&cfg, &run(None), "ALL STATS"), want);
    }

    #[test]
    fn open_loop_all_stats_leads_with_the_corrected_latency() {
        let cfg = config(&[
            "-c",
            "1",
            "-t",
            "1",
            "--rate",
            "200",
            "--print-percentiles",
            "99.5",
        ]);
        let result = run(Some(200.0));
        let text = all_stats(&cfg, &result, "ALL STATS");
        let lines: Vec<&str> = text.lines().collect();
        let cols: Vec<&str> = lines[2]
            .split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect();
        assert_eq!(
            cols,
            [
                "Type",
                "Ops/sec",
                "Hits/sec",
                "Misses/sec",
                "Avg. Latency",
                "p99.5 Latency",
                "Avg. from send",
                "p99.5 from send",
                "KB/sec"
            ]
        );
        let totals: Vec<&str> = lines
            .iter()
            .find(|l| l.starts_with("Totals"))
            .unwrap()
            .split_whitespace()
            .collect();
        // Corrected: the mean carries the 500 ms stall ((500 + 99) / 100 ms), and the
        // 99.5th percentile lands on it; from the send, every request took 1 ms.
        let ms = |v: &str| v.parse::<f64>().unwrap();
        assert!((ms(totals[4]) - 5.99).abs() < 0.01, "{text}");
        assert!((ms(totals[5]) - 500.0).abs() < 1.0, "{text}");
        assert!((ms(totals[6]) - 1.0).abs() < 0.01, "{text}");
        assert!((ms(totals[7]) - 1.0).abs() < 0.01, "{text}");
        // Every row has the same columns, the Waits row included.
        for l in &lines[4..] {
            assert_eq!(l.len(), lines[2].len(), "{l:?}");
        }
        // The markdown table says the same.
        let md = markdown(&cfg, &result);
        let md_totals = md.lines().find(|l| l.starts_with("| Totals")).unwrap();
        assert!(
            md_totals.contains(totals[5]) && md_totals.contains(totals[7]),
            "{md}"
        );
    }

    /// With `--wait-ratio` the Waits row is measured: memtier's table and JSON show its
    /// figures where a run without WAITs shows an empty row.
    #[test]
    fn a_measured_waits_row_takes_the_empty_ones_place() {
        let cfg = config(&["-c", "1", "-t", "1", "--wait-ratio", "1:1"]);
        let mut result = run(None);
        let mut waits = RowStats::default();
        for _ in 0..50 {
            waits.latency.record(2_000_000).unwrap();
        }
        waits.ops = 50;
        waits.bytes_tx = 51_200;
        result.rows.push((WAITS_ROW.into(), waits));
        let text = all_stats(&cfg, &result, "ALL STATS");
        let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("Waits")).collect();
        assert_eq!(
            rows,
            ["Waits          50.00          ---          ---         2.00038         2.00089         2.00089         2.00089        50.00 "]
        );
        let totals = text.lines().find(|l| l.starts_with("Totals")).unwrap();
        assert!(totals.starts_with("Totals        250.00 "), "{totals}");
        let json = crate::kv::export::run_json(&cfg, &result).to_pretty();
        let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(doc["Waits"]["Count"].as_u64(), Some(50));
        assert_eq!(doc["Totals"]["Count"].as_u64(), Some(250));
        assert!(doc["WAIT"]
            .as_array()
            .is_some_and(|points| !points.is_empty()));
        // Once each as a key (the exact figures name the row too, as a value).
        assert_eq!(json.matches("\"Waits\": ").count(), 1, "{json}");
        assert_eq!(json.matches("\"WAIT\": ").count(), 1, "{json}");
    }

    #[test]
    fn the_distribution_is_printed_in_memtiers_format() {
        let mut sets = RowStats::default();
        for ns in [1_000_000, 1_000_000, 1_000_000, 2_000_000] {
            sets.latency.record(ns).unwrap();
        }
        sets.ops = 4;
        let result = LoadResult {
            rows: vec![("Sets".into(), sets), ("Gets".into(), RowStats::default())],
            elapsed: Duration::from_secs(1),
            started_at: SystemTime::UNIX_EPOCH,
            seconds: Vec::new(),
            rate: None,
            late: 0,
            dropped: 0,
            thread_cpu: Vec::new(),
            stopped: None,
            failover: None,
        };
        // run_stats.cpp: "%-6s %12s %12s" header, 72 dashes, "%-6s %8.3f %12.3f" points
        // (10 ticks per half distance), "---" after each row; Gets had no requests.
        let mut want = String::from(
            "Request Latency Distribution\n\
             Type     <= msec         Percent\n",
        );
        want.push_str(&"-".repeat(72));
        want.push('\n');
        for pct in [
            0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0, 45.0, 50.0, 52.5, 55.0, 57.5, 60.0,
            62.5, 65.0, 67.5, 70.0, 72.5,
        ] {
            want.push_str(&format!("SET       1.000 {pct:>12.3}\n"));
        }
        want.push_str("SET       2.001       75.000\nSET       2.001      100.000\n---\n---\n");
        assert_eq!(distribution(&result), want);
    }
}

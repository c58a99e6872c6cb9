//! [`Comparison`] as markdown, laid out as benchstat's text table: one table per target, the
//! old and new medians in sec/op with SI prefixes (`76.29µ ± 3%`), `vs base` with the change
//! or `~` and `(p=0.008 n=5)`, a geomean row, and notes as numbered footnotes under the table.
//! Numbers are formatted by benchstat's rules (benchunit's `CommonScale`): every value of a
//! row shares one prefix, chosen so the row's smallest non-zero value shows at least three
//! significant digits (`46.55n`, `237.5n`, `1.701µ`).

use std::fmt::Write as _;

use super::{Comparison, Geomean, Row, Side};
use crate::report::md_cell;

/// The table of every target, each followed by its footnotes, tables separated by a blank line.
pub(super) fn render(c: &Comparison) -> String {
    let mut out = String::new();
    for (i, target) in c.targets().into_iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let rows: Vec<&Row> = c.rows.iter().filter(|r| r.target == target).collect();
        let geomean = c.geomeans.iter().find(|g| g.target == target);
        out.push_str(&table(c, target, &rows, geomean));
    }
    out
}

fn table(c: &Comparison, target: &str, rows: &[&Row], geomean: Option<&Geomean>) -> String {
    let mut notes = Footnotes::default();
    let mut out = String::new();
    let first = if target.is_empty() {
        "Benchmark"
    } else {
        target
    };
    let _ = writeln!(
        out,
        "| {} | {} sec/op | {} sec/op | vs base |",
        md_cell(first),
        md_cell(&c.old_label),
        md_cell(&c.new_label)
    );
    out.push_str("|:--|--:|--:|:--|\n");
    for row in rows {
        let centres: Vec<f64> = [&row.old, &row.new]
            .into_iter()
            .flatten()
            .map(|s| s.median_ns * 1e-9)
            .collect();
        let scale = Scale::common(&centres);
        let side = |s: &Option<Side>| match s {
            Some(s) => format!(
                "{} ± {:.0}%",
                scale.format(s.median_ns * 1e-9),
                s.spread_pct
            ),
            None => "—".to_string(),
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            md_cell(&row.benchmark),
            side(&row.old),
            side(&row.new),
            vs_base(row, &mut notes)
        );
    }
    if let Some(g) = geomean {
        let cell = |ns: Option<f64>| match ns {
            Some(ns) => Scale::common(&[ns * 1e-9]).format(ns * 1e-9),
            None => String::new(),
        };
        let delta = match g.delta_pct {
            Some(pct) => format!("{pct:+.2}%"),
            None => "?".to_string(),
        };
        let _ = writeln!(
            out,
            "| geomean | {} | {} | {delta}{} |",
            cell(g.old_ns),
            cell(g.new_ns),
            notes.marks(&g.notes)
        );
    }
    out.push_str(&notes.render());
    out
}

/// The `vs base` cell: `-8.11% (p=0.008 n=5)`, `~ (p=0.548 n=5)`, empty for a one-sided row;
/// footnote marks after it.
fn vs_base(row: &Row, notes: &mut Footnotes) -> String {
    let (Some(p), Some(old), Some(new)) = (row.p_value, &row.old, &row.new) else {
        return String::new();
    };
    let delta = match row.delta_pct {
        _ if !row.significant => "~".to_string(),
        // Equal medians: benchstat writes the change unsigned.
        Some(0.0) => "0.00%".to_string(),
        Some(pct) => format!("{pct:+.2}%"),
        None => "?".to_string(),
    };
    // benchstat leaves p out when it is exactly 0, and writes n once when both sides have it.
    let mut test = String::new();
    if p != 0.0 {
        let _ = write!(test, "p={p:.3} ");
    }
    if old.n == new.n {
        let _ = write!(test, "n={}", old.n);
    } else {
        let _ = write!(test, "n={}+{}", old.n, new.n);
    }
    format!("{delta} ({test}){}", notes.marks(&row.notes))
}

/// A table's notes, numbered in first-use order, each text once.
#[derive(Default)]
struct Footnotes(Vec<String>);

impl Footnotes {
    /// ` ¹ ²` for these notes (empty for none), numbering new ones.
    fn marks(&mut self, notes: &[String]) -> String {
        let mut out = String::new();
        for note in notes {
            let index = match self.0.iter().position(|n| n == note) {
                Some(i) => i,
                None => {
                    self.0.push(note.clone());
                    self.0.len() - 1
                }
            };
            out.push(' ');
            out.push_str(&superscript(index + 1));
        }
        out
    }

    /// A blank line and `¹ text` per note; empty for none.
    fn render(&self) -> String {
        let mut out = String::new();
        if !self.0.is_empty() {
            out.push('\n');
        }
        for (i, note) in self.0.iter().enumerate() {
            let _ = writeln!(out, "{} {}", superscript(i + 1), md_cell(note));
        }
        out
    }
}

fn superscript(n: usize) -> String {
    const DIGITS: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    n.to_string()
        .bytes()
        .map(|b| DIGITS[usize::from(b - b'0')])
        .collect()
}

/// A shared SI prefix and precision for the numbers of one row (benchunit's `Scaler`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Scale {
    /// Digits after the point.
    decimals: usize,
    /// The value of one unit of the prefix (1e-6 for µ).
    factor: f64,
    prefix: &'static str,
}

/// The SI prefixes benchstat uses, largest first, with their powers of ten.
const PREFIXES: [(&str, i32); 8] = [
    ("T", 12),
    ("G", 9),
    ("M", 6),
    ("k", 3),
    ("", 0),
    ("m", -3),
    ("µ", -6),
    ("n", -9),
];

impl Scale {
    /// The scale that shows the smallest non-zero `value` with at least three significant
    /// digits: the largest prefix under which it prints as ≥ 1.000, with one decimal from
    /// 100.0, two from 10.00, three from 1.000. The thresholds are the decimal strings
    /// `99.995eE`, `9.9995eE`, `.99995eE` parsed, so they fall exactly where printing would
    /// round up. Below 1 of the smallest prefix (0.5n), more decimals, up to ten.
    fn common(values: &[f64]) -> Scale {
        let smallest = values
            .iter()
            .map(|v| v.abs())
            .filter(|&v| v != 0.0)
            .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))));
        let Some(smallest) = smallest else {
            return Scale {
                decimals: 3,
                factor: 1.0,
                prefix: "",
            };
        };
        let at = |s: String| s.parse::<f64>().unwrap_or(f64::INFINITY);
        for (prefix, exp) in PREFIXES {
            let factor = 10f64.powi(exp);
            for (decimals, threshold) in [(1, "99.995"), (2, "9.9995"), (3, ".99995")] {
                if smallest >= at(format!("{threshold}e{exp}")) {
                    return Scale {
                        decimals,
                        factor,
                        prefix,
                    };
                }
            }
        }
        let (prefix, exp) = PREFIXES[PREFIXES.len() - 1];
        let factor = 10f64.powi(exp);
        let scaled = smallest / factor;
        let decimals = (1..=8)
            .find(|&i| scaled >= at(format!("9.9995e-{i}")))
            .map_or(10, |i| i + 2);
        Scale {
            decimals,
            factor,
            prefix,
        }
    }

    fn format(&self, value: f64) -> String {
        format!("{:.*}{}", self.decimals, value / self.factor, self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scaled(ns: f64) -> String {
        Scale::common(&[ns * 1e-9]).format(ns * 1e-9)
    }

    #[test]
    fn numbers_are_scaled_as_benchstat_scales_them() {
        // Values from benchstat's own crc test output (cmd/benchstat/testdata).
        assert_eq!(scaled(46.55), "46.55n");
        assert_eq!(scaled(237.5), "237.5n");
        assert_eq!(scaled(1701.0), "1.701µ");
        assert_eq!(scaled(15010.0), "15.01µ");
        assert_eq!(scaled(73130.0), "73.13µ");
        assert_eq!(scaled(100.0), "100.0n");
        // Rounding up across a threshold changes the prefix, not the digits shown.
        assert_eq!(scaled(999.96), "1.000µ");
        assert_eq!(scaled(999.94), "999.9n");
        assert_eq!(scaled(2.5e9), "2.500");
        assert_eq!(scaled(0.5), "0.5000n");
        assert_eq!(scaled(0.0), "0.000");
        // A row shares the scale of its smallest value.
        let row = Scale::common(&[76292e-9, 1_204_000e-9]);
        assert_eq!(row.format(1_204_000e-9), "1204.00µ");
    }

    #[test]
    fn superscripts() {
        assert_eq!(superscript(1), "¹");
        assert_eq!(superscript(12), "¹²");
    }
}

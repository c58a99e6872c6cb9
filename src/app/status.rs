//! The status lines every command prints on stderr: rewritten in place on a terminal,
//! finished lines otherwise. Writes are best-effort: a closed stderr (`2>&1 | head`) must not
//! stop a run.
//!
//! A run whose size is known up front (`coredata`: targets × levels × benchmarks × `--count`)
//! shows an `indicatif` bar with the position, the current benchmark and round, and an ETA
//! when stderr is a terminal; in a log it prints the same finished lines as before and no bar
//! (indicatif draws nothing there), so CI logs stay readable.

use std::io::Write;
use std::sync::atomic::Ordering;

/// The status line of a run: transient statuses rewritten in place on a terminal (and left
/// out of logs), and lines that stay.
pub struct ProgressLine {
    tty: bool,
    shown: bool,
    /// The bar, on a terminal, for a run of known size.
    bar: Option<indicatif::ProgressBar>,
}

impl ProgressLine {
    /// A status line for a terminal (`tty`) or a log.
    pub fn new(tty: bool) -> Self {
        ProgressLine {
            tty,
            shown: false,
            bar: None,
        }
    }

    /// A status line with a progress bar of `total` steps on a terminal (`tty`): the
    /// transient statuses become the bar's message, lines are printed above it, and the ETA
    /// comes from the steps done so far. In a log, the same as [`ProgressLine::new`].
    pub fn with_bar(tty: bool, total: u64, unit: &str) -> Self {
        let bar = tty.then(|| {
            let bar = indicatif::ProgressBar::with_draw_target(
                Some(total),
                indicatif::ProgressDrawTarget::stderr(),
            );
            let template = format!(
                "[{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {unit} ETA {{eta}}  {{msg}}"
            );
            if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
                bar.set_style(style.progress_chars("=> "));
            }
            bar
        });
        ProgressLine {
            tty,
            shown: false,
            bar,
        }
    }

    /// Moves the bar to `position` steps done (nothing without a bar).
    pub fn set_position(&mut self, position: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(position);
        }
    }

    /// A transient status (a terminal only; a log would fill up with them).
    pub fn show(&mut self, out: &mut dyn Write, text: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(text.to_string());
            return;
        }
        if self.tty {
            let _ = write!(out, "\r\x1b[2K{text}");
            let _ = out.flush();
            self.shown = true;
        }
    }

    /// A status that is rewritten in place on a terminal and printed as a line of its own
    /// otherwise (memtier's once-a-second line, which a log keeps).
    pub fn tick(&mut self, out: &mut dyn Write, text: &str) {
        if self.tty {
            self.show(out, text);
        } else {
            let _ = writeln!(out, "{text}");
            let _ = out.flush();
        }
    }

    /// Ends the transient status with a newline, so it stays on the terminal.
    pub fn keep(&mut self, out: &mut dyn Write) {
        if self.shown {
            let _ = writeln!(out);
            self.shown = false;
        }
    }

    /// A line that stays.
    pub fn line(&mut self, out: &mut dyn Write, text: &str) {
        if let Some(bar) = &self.bar {
            bar.println(text);
            return;
        }
        self.clear(out);
        let _ = writeln!(out, "{text}");
    }

    /// Erases the transient status, if one is shown; a bar is taken off the terminal.
    pub fn clear(&mut self, out: &mut dyn Write) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
            return;
        }
        if self.shown {
            let _ = write!(out, "\r\x1b[2K");
            self.shown = false;
        }
    }
}

/// memtier's live line, once a second on stderr: rewritten in place (`\r`) on a terminal,
/// one line per second otherwise.
pub struct LiveLine {
    run: u32,
    line: ProgressLine,
    threads: u32,
    /// `-n` runs: all requests of the run, for the progress percentage.
    total_requests: Option<u64>,
    test_time: Option<f64>,
    last: (u64, u64, u64, std::time::Duration),
}

impl LiveLine {
    pub fn new(cfg: &crate::kv::KvConfig, run: u32, tty: bool) -> LiveLine {
        let conns = u64::from(cfg.threads) * u64::from(cfg.clients);
        LiveLine {
            run,
            line: ProgressLine::new(tty),
            threads: cfg.threads,
            total_requests: cfg
                .test_time
                .is_none()
                .then(|| (0..conns).filter_map(|i| cfg.requests_for(i)).sum()),
            test_time: cfg.test_time.map(|t| t.as_secs_f64()),
            last: (0, 0, 0, std::time::Duration::ZERO),
        }
    }

    pub fn tick(
        &mut self,
        status: &mut dyn Write,
        live: &crate::kv::load::Live,
        elapsed: std::time::Duration,
    ) {
        let ops = live.ops.load(Ordering::Relaxed);
        let bytes = live.bytes.load(Ordering::Relaxed);
        let lat = live.latency_ns.load(Ordering::Relaxed);
        let (ops0, bytes0, lat0, t0) = self.last;
        let secs = elapsed.as_secs_f64().max(1e-9);
        let dt = (elapsed - t0).as_secs_f64().max(1e-9);
        let per_op_ms = |lat: u64, ops: u64| {
            if ops > 0 {
                lat as f64 / ops as f64 / 1e6
            } else {
                0.0
            }
        };
        let progress = match (self.total_requests, self.test_time) {
            (Some(n), _) if n > 0 => 100.0 * ops as f64 / n as f64,
            (_, Some(t)) if t > 0.0 => 100.0 * secs / t,
            _ => 0.0,
        };
        let text = crate::kv::report::live_line(
            self.run,
            progress.min(100.0),
            elapsed.as_secs(),
            self.threads,
            ops,
            (ops - ops0) as f64 / dt,
            ops as f64 / secs,
            (bytes - bytes0) as f64 / dt,
            bytes as f64 / secs,
            per_op_ms(lat - lat0, ops - ops0),
            per_op_ms(lat, ops),
        );
        self.line.tick(status, &text);
        self.last = (ops, bytes, lat, elapsed);
    }

    pub fn finish(&mut self, status: &mut dyn Write) {
        self.line.keep(status);
    }
}

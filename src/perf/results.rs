//! PadoGrid's results files (reference §2.6, §3.4, §3.5), rendered from plain data, with
//! edgebench's per-operation percentiles appended after PadoGrid's part.
//!
//! Invariants:
//! - Labels, spacing, blank lines and number formats are PadoGrid's byte for byte:
//!   `DecimalFormat("#.####")` for group files and `"#.###"` for ingestion/tx, both HALF_UP
//!   on the exact binary value (as the JDK does since 8), division by zero printing `∞`;
//!   dates as `Date.toString()`. `create_csv` greps these labels, so a change here breaks
//!   users' spreadsheets.
//! - The edgebench section contains none of the labels `create_csv` greps for (a test checks
//!   this), so CSV columns stay one value each.
//! - Times are plain numbers passed in; nothing here reads a clock.

use chrono::{DateTime, Datelike, FixedOffset, NaiveDateTime, TimeZone, Timelike, Utc};

use super::config::PbmTest;

/// A wall-clock instant as Java's `Date.toString()` prints it, with the zone it prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JavaTime {
    /// Local date and time.
    pub local: NaiveDateTime,
    /// Zone abbreviation as Java prints it (`UTC`, `EDT`, `GMT+05:30`).
    pub zone: String,
}

impl JavaTime {
    /// `ms` since the epoch in UTC.
    pub fn utc_ms(ms: i64) -> Self {
        let t = DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default();
        JavaTime {
            local: t.naive_utc(),
            zone: "UTC".into(),
        }
    }

    /// `ms` since the epoch at a fixed offset; `zone` names it (`EDT`), else Java's
    /// fallback `GMT±hh:mm` (or `UTC` for offset 0).
    pub fn at_offset_ms(ms: i64, offset_sec: i32, zone: Option<&str>) -> Self {
        let off = FixedOffset::east_opt(offset_sec)
            .unwrap_or(FixedOffset::east_opt(0).expect("0 is valid"));
        let utc = DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or_default();
        let local = off.from_utc_datetime(&utc.naive_utc()).naive_local();
        let zone = match zone {
            Some(z) => z.to_string(),
            None if offset_sec == 0 => "UTC".into(),
            None => {
                let a = offset_sec.abs();
                let sign = if offset_sec < 0 { '-' } else { '+' };
                format!("GMT{sign}{:02}:{:02}", a / 3600, a % 3600 / 60)
            }
        };
        JavaTime { local, zone }
    }

    /// The system clock now, in the local offset (named `UTC` or `GMT±hh:mm`: chrono has no
    /// zone abbreviations without a tz database).
    pub fn now_local() -> Self {
        let now = chrono::Local::now();
        Self::at_offset_ms(now.timestamp_millis(), now.offset().local_minus_utc(), None)
    }

    /// `Date.toString()`: `EEE MMM dd HH:mm:ss zzz yyyy`.
    pub fn date_string(&self) -> String {
        const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
        const MONTHS: [&str; 12] = [
            "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
        ];
        let t = &self.local;
        format!(
            "{} {} {:02} {:02}:{:02}:{:02} {} {}",
            DAYS[t.weekday().num_days_from_monday() as usize],
            MONTHS[t.month0() as usize],
            t.day(),
            t.hour(),
            t.minute(),
            t.second(),
            self.zone,
            t.year()
        )
    }

    /// `yyMMdd-HHmmss`, the file-name stamp.
    pub fn file_stamp(&self) -> String {
        self.local.format("%y%m%d-%H%M%S").to_string()
    }
}

/// A run that PadoGrid writes one results file for: its name and its text.
pub trait ResultsFile {
    /// PadoGrid's file name for it (`group-<id>-<product>-<stamp>_<prefix>.txt`, ...).
    fn file_name(&self) -> String;
    /// The file's text.
    fn render(&self) -> String;
}

impl ResultsFile for GroupRun {
    fn file_name(&self) -> String {
        GroupRun::file_name(self)
    }
    fn render(&self) -> String {
        GroupRun::render(self)
    }
}

impl ResultsFile for PbmRun {
    fn file_name(&self) -> String {
        PbmRun::file_name(self)
    }
    fn render(&self) -> String {
        PbmRun::render(self)
    }
}

/// The exporter of one run's PadoGrid results file, under a name chosen before writing.
struct PadoGridText {
    file: String,
}

impl<R: ResultsFile> crate::report::Exporter<R> for PadoGridText {
    fn file_name(&self) -> &str {
        &self.file
    }

    fn render(&self, run: &R) -> std::io::Result<Vec<u8>> {
        Ok(run.render().into_bytes())
    }
}

/// Writes `run`'s results file into `dir` through [`crate::report::write_all`] (whole: temp
/// file, then rename), never over an earlier run's file: PadoGrid's names carry the time to
/// the second, so a second run in the same second gets `_2`, `_3`, ... before `.txt`
/// (`create_csv` lists by prefix and mtime, so the suffix keeps it working). Returns the path
/// written.
pub fn write_results_file<R: ResultsFile>(
    dir: &std::path::Path,
    run: &R,
) -> std::io::Result<std::path::PathBuf> {
    let name = run.file_name();
    let stem = name.strip_suffix(".txt").unwrap_or(&name).to_string();
    let mut file = name;
    let mut n = 1;
    while dir.join(&file).exists() {
        n += 1;
        file = format!("{stem}_{n}.txt");
    }
    let path = dir.join(&file);
    crate::report::write_all(dir, run, &[&PadoGridText { file }])?;
    Ok(path)
}

/// `new DecimalFormat(pattern)` with `#.###…` (`decimals` digits), HALF_UP, no grouping:
/// at most `decimals` fraction digits, trailing zeros and a bare point dropped.
pub fn java_decimal(x: f64, decimals: usize) -> String {
    if x.is_nan() {
        return "NaN".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "∞".into() } else { "-∞".into() };
    }
    // The exact decimal expansion of the double (1100 digits cover every f64), then
    // round half up by hand: Rust's own rounding is half-to-even.
    let exact = format!("{:.1100}", x.abs());
    let (int_part, frac) = exact.split_once('.').unwrap_or((&exact, ""));
    let mut digits: Vec<u8> = int_part
        .bytes()
        .chain(frac.bytes().take(decimals))
        .map(|b| b - b'0')
        .collect();
    let round_up = frac.as_bytes().get(decimals).is_some_and(|d| *d >= b'5');
    if round_up {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, 1);
                break;
            }
            i -= 1;
            if digits[i] == 9 {
                digits[i] = 0;
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let split = digits.len() - decimals;
    let int_s: String = digits[..split].iter().map(|d| (d + b'0') as char).collect();
    let frac_s: String = digits[split..].iter().map(|d| (d + b'0') as char).collect();
    let frac_s = frac_s.trim_end_matches('0');
    let int_s = int_s.trim_start_matches('0');
    let int_s = if int_s.is_empty() { "0" } else { int_s };
    // Java keeps the sign of a negative number that rounds to zero ("-0").
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if frac_s.is_empty() {
        format!("{sign}{int_s}")
    } else {
        format!("{sign}{int_s}.{frac_s}")
    }
}

/// `#.####`, the group results format.
pub fn fmt4(x: f64) -> String {
    java_decimal(x, 4)
}

/// `#.###`, the ingestion and tx results format.
pub fn fmt3(x: f64) -> String {
    java_decimal(x, 3)
}

/// One operation's latency percentiles (edgebench's addition), from an HDR histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct OpLatency {
    /// Operation id (or a map name for ingestion/tx).
    pub op: String,
    /// Samples.
    pub count: u64,
    /// Median, ns.
    pub p50_ns: u64,
    /// 99th percentile, ns.
    pub p99_ns: u64,
    /// 99.9th percentile, ns.
    pub p999_ns: u64,
    /// Maximum, ns.
    pub max_ns: u64,
}

/// The edgebench section appended to every results file. Its words avoid every label
/// `create_csv` greps for.
fn edgebench_section(out: &mut String, what: &str, lat: &[OpLatency]) {
    if lat.is_empty() {
        return;
    }
    let us = |ns: u64| fmt3(ns as f64 / 1000.0);
    out.push_str(&format!(
        "edgebench percentiles per {what} (usec, HDR histogram)\n"
    ));
    for l in lat {
        out.push_str(&format!(
            "   {}: samples {}, p50 {}, p99 {}, p99.9 {}, max {}\n",
            l.op,
            l.count,
            us(l.p50_ns),
            us(l.p99_ns),
            us(l.p999_ns),
            us(l.max_ns)
        ));
    }
    out.push('\n');
}

fn push_threads(out: &mut String, thread_ms: &[u64]) {
    out.push_str("Time unit: msec\n");
    for (i, ms) in thread_ms.iter().enumerate() {
        out.push_str(&format!("   Thread {}: {}\n", i + 1, ms));
    }
    out.push('\n');
}

fn ratio(a: f64, b: f64) -> f64 {
    // Java double division: x/0 is ∞ (0/0 NaN), which DecimalFormat prints as such.
    a / b
}

/// One group's run (reference §2.5–2.6): what the results file reports.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupRun {
    /// Product string in the file name and `Product:` line (`redis`, or the target).
    pub product: String,
    /// The group id.
    pub group: String,
    /// The ids of its stage (`g1 & g2`).
    pub concurrent_groups: Vec<String>,
    /// `<g>.comment`.
    pub comment: String,
    /// `<g>.operations` as written.
    pub operations: String,
    /// `testCount`.
    pub test_count: u32,
    /// `testIntervalInMsec`.
    pub test_interval_ms: u64,
    /// `<g>.totalInvocationCount`.
    pub total_invocation_count_per_run: u64,
    /// `<g>.threadCount`.
    pub thread_count: u32,
    /// `total / threadCount`.
    pub invocation_count_per_thread: u64,
    /// `-db` mode (the header says `Group Test (Dababase)` \[sic\]).
    pub db: bool,
    /// Taken when the test starts (also the file-name stamp).
    pub file_time: JavaTime,
    /// Right before the threads start.
    pub start: JavaTime,
    /// After all threads joined.
    pub stop: JavaTime,
    /// `Σ operationCount` over threads and runs.
    pub actual_invocations: u64,
    /// Each thread's summed loop time, ms.
    pub thread_ms: Vec<u64>,
    /// `stop - start`, ms (includes interval waits).
    pub elapsed_ms: u64,
    /// edgebench: per-operation percentiles.
    pub latencies: Vec<OpLatency>,
}

impl GroupRun {
    /// `max(thread times)`.
    pub fn max_ms(&self) -> u64 {
        self.thread_ms.iter().copied().max().unwrap_or(0)
    }

    /// `group-<g>-<product>-<yyMMdd-HHmmss>.txt`.
    pub fn file_name(&self) -> String {
        format!(
            "group-{}-{}-{}.txt",
            self.group,
            self.product,
            self.file_time.file_stamp()
        )
    }

    /// The results file's bytes.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let bar = "******************************************\n";
        o.push_str(bar);
        o.push_str(if self.db {
            "Group Test (Dababase)\n"
        } else {
            "Group Test\n"
        });
        o.push_str(bar);
        o.push('\n');
        let mut l =
            |label: &str, v: &dyn std::fmt::Display| o.push_str(&format!("{label:>30}: {v}\n"));
        l("Product", &self.product);
        l("Group", &self.group);
        l("Concurrent Group(s)", &self.concurrent_groups.join(" & "));
        l("Comment", &self.comment);
        l("Operations", &self.operations);
        l("Test Run Count", &self.test_count);
        l("Test Run Interval (msec)", &self.test_interval_ms);
        l(
            "Total Invocation Count per Run",
            &self.total_invocation_count_per_run,
        );
        l("Thread Count", &self.thread_count);
        l(
            "Invocation Count per Thread",
            &self.invocation_count_per_thread,
        );
        o.push('\n');
        o.push_str(&format!("Start Time: {}\n\n", self.start.date_string()));
        o.push_str(&format!(
            "Actual Total Number of Invocations: {}\n\n",
            self.actual_invocations
        ));
        push_threads(&mut o, &self.thread_ms);
        let total = self.actual_invocations as f64;
        let max = self.max_ms() as f64;
        let elapsed = self.elapsed_ms as f64;
        let mut l = |label: &str, v: String| o.push_str(&format!("{label:>31}: {v}\n"));
        l("Max Time (msec)", self.max_ms().to_string());
        l("Elapsed Time (msec)", self.elapsed_ms.to_string());
        l(
            "Total Invocation Count",
            self.actual_invocations.to_string(),
        );
        l(
            "M Throughput (invocations/sec)",
            fmt4(ratio(total, max) * 1000.0),
        );
        l("M Latency per invocation (msec)", fmt4(ratio(max, total)));
        l(
            "E Throughput (invocations/sec)",
            fmt4(ratio(total, elapsed) * 1000.0),
        );
        l(
            "E Latency per invocation (msec)",
            fmt4(ratio(elapsed, total)),
        );
        o.push('\n');
        o.push_str(&format!("Stop Time: {}\n\n", self.stop.date_string()));
        edgebench_section(&mut o, "operation of one invocation", &self.latencies);
        o
    }
}

/// One map's `test_ingestion` (reference §3.4) or `test_tx` (§3.5) run. The two results files
/// have one shape; what differs — names, the count lines, the throughput rows — follows from
/// [`PbmRun::test`] (the private `PbmFile` table).
#[derive(Debug, Clone, PartialEq)]
pub struct PbmRun {
    /// Which tool ran.
    pub test: PbmTest,
    /// Product string.
    pub product: String,
    /// `put`/`putall` (ingestion) or `tx`/`get`/`getall` (tx).
    pub test_case: String,
    /// `eligibility` or `profile`.
    pub map: String,
    /// `<map>.batchSize` (printed for putall and getall only).
    pub batch_size: usize,
    /// `testCount`.
    pub test_count: u32,
    /// `testIntervalInMsec`.
    pub test_interval_ms: u64,
    /// `<map>.totalEntryCount`.
    pub total_entry_count: u64,
    /// `<map>.threadCount`.
    pub thread_count: u32,
    /// `<map>.payloadSize` (printed by `test_ingestion` only).
    pub payload_size: usize,
    /// `prefix`.
    pub prefix: String,
    /// `total / threads`.
    pub entry_count_per_thread: u64,
    /// Start of `runTest` (also the file-name stamp).
    pub start: JavaTime,
    /// End.
    pub stop: JavaTime,
    /// Entries put (`Σ putCount`), or transactions (or keys read) in all.
    pub count: u64,
    /// `test_tx`: transactions that found no co-located data (0 for ingestion).
    pub missing: u64,
    /// Per-thread ms.
    pub thread_ms: Vec<u64>,
    /// edgebench percentiles (per put or putAll call; per transaction or call).
    pub latencies: Vec<OpLatency>,
}

/// What a PBM tool's results file says differently from the other's.
struct PbmFile {
    /// File-name stem.
    stem: &'static str,
    /// The banner.
    title: &'static str,
    /// The test case that prints a batch-size line, and its label.
    batch: (&'static str, &'static str),
    /// Whether the header has a payload line.
    payload_line: bool,
    /// Width the count labels are right-aligned to.
    count_width: usize,
    /// Text after the counts.
    after_counts: &'static str,
    /// Width the throughput labels are right-aligned to.
    row_width: usize,
    /// Text after the throughput rows.
    after_rows: &'static str,
    /// What one edgebench latency sample is.
    sample: &'static str,
}

const INGESTION_FILE: PbmFile = PbmFile {
    stem: "ingestion",
    title: "Data Ingestion Test",
    batch: ("putall", "PutAll Batch Size"),
    payload_line: true,
    count_width: 0,
    after_counts: "",
    row_width: 23,
    after_rows: " * Throughput does not take the keys into account.\n   \
                 The actual rate is higher.\n\
                 ** Total Volume do not take the keys into account.\n   \
                 The actual volume is higher.\n\n",
    sample: "call",
};

const TX_FILE: PbmFile = PbmFile {
    stem: "tx",
    title: "Transaction Test",
    batch: ("getall", "GetAll Batch Size"),
    payload_line: false,
    count_width: 44,
    after_counts: "Missing Data represents the number of transaction operations that are performed on\n\
                   non-existing co-located data. This may occur if there are not enough ClientProfile\n\
                   objects ingested. To avoid this, increase the number of profile objects by setting\n\
                   'profile.totalEntryCount' in the ingestion properties file and rerun the ingestion test.\n\
                   This value must be greater than or equal to 'eligibility.totalEntryCount'.\n\n",
    row_width: 31,
    after_rows: "",
    sample: "transaction or call",
};

impl PbmRun {
    fn file(&self) -> &'static PbmFile {
        match self.test {
            PbmTest::Ingestion => &INGESTION_FILE,
            PbmTest::Tx => &TX_FILE,
        }
    }

    /// `ingestion-<map>-<product>-<yyMMdd-HHmmss>_<prefix>.txt` or `tx-…`.
    pub fn file_name(&self) -> String {
        format!(
            "{}-{}-{}-{}_{}.txt",
            self.file().stem,
            self.map,
            self.product,
            self.start.file_stamp(),
            self.prefix
        )
    }

    /// The counts the file reports after its start time.
    fn counts(&self) -> Vec<(&'static str, u64)> {
        match self.test {
            PbmTest::Ingestion => vec![("Actual Total Entry (Put) Count", self.count)],
            PbmTest::Tx => vec![
                ("Actual Total Number of Transactions", self.count),
                ("Total Number of Transactions on Missing Data", self.missing),
            ],
        }
    }

    /// The throughput rows after the thread times; `max_ms` is the slowest thread's.
    fn rows(&self, max_ms: u64) -> Vec<(&'static str, String)> {
        let (total, maxf) = (self.count as f64, max_ms as f64);
        let max_row = ("Max Time (msec)", max_ms.to_string());
        match self.test {
            PbmTest::Ingestion => {
                let payload = self.payload_size as f64;
                let kib = payload * total / 1024.0;
                let kib_s = payload * total / maxf * 1000.0 / 1024.0;
                vec![
                    max_row,
                    ("Throughput (msg/sec)", fmt3(ratio(total, maxf) * 1000.0)),
                    ("*Throughput (KiB/sec)", fmt3(kib_s)),
                    ("*Throughput (MiB/sec)", fmt3(kib_s / 1024.0)),
                    ("Latency per put (msec)", fmt3(ratio(maxf, total))),
                    ("**Total Volume (KiB)", fmt3(kib)),
                    ("**Total Volume (MiB)", fmt3(kib / 1024.0)),
                    ("**Total Volume (GiB)", fmt3(kib / 1024.0 / 1024.0)),
                    ("Payload Size (bytes)", self.payload_size.to_string()),
                ]
            }
            PbmTest::Tx => vec![
                max_row,
                ("Throughput (tx/sec)", fmt3(ratio(total, maxf) * 1000.0)),
                ("Latency per transaction (msec)", fmt3(ratio(maxf, total))),
            ],
        }
    }

    /// The results file's bytes.
    pub fn render(&self) -> String {
        let file = self.file();
        let mut o = String::new();
        let (batch_case, batch_label) = file.batch;
        pbm_header(
            &mut o,
            file.title,
            &PbmHeader {
                product: &self.product,
                test_case: &self.test_case,
                map: &self.map,
                batch_line: (self.test_case == batch_case)
                    .then_some((batch_label, self.batch_size)),
                test_count: self.test_count,
                test_interval_ms: self.test_interval_ms,
                total_entry_count: self.total_entry_count,
                thread_count: self.thread_count,
                payload_size: file.payload_line.then_some(self.payload_size),
                prefix: &self.prefix,
                per_thread: self.entry_count_per_thread,
            },
        );
        o.push_str(&format!("Start Time: {}\n\n", self.start.date_string()));
        let width = file.count_width;
        for (label, n) in self.counts() {
            o.push_str(&format!("{label:>width$}: {n}\n"));
        }
        o.push('\n');
        o.push_str(file.after_counts);
        push_threads(&mut o, &self.thread_ms);
        let max_ms = self.thread_ms.iter().copied().max().unwrap_or(0);
        let width = file.row_width;
        for (label, v) in self.rows(max_ms) {
            o.push_str(&format!("{label:>width$}: {v}\n"));
        }
        o.push('\n');
        o.push_str(file.after_rows);
        o.push_str(&format!("Stop Time: {}\n\n", self.stop.date_string()));
        edgebench_section(&mut o, file.sample, &self.latencies);
        o
    }
}

struct PbmHeader<'a> {
    product: &'a str,
    test_case: &'a str,
    map: &'a str,
    batch_line: Option<(&'a str, usize)>,
    test_count: u32,
    test_interval_ms: u64,
    total_entry_count: u64,
    thread_count: u32,
    payload_size: Option<usize>,
    prefix: &'a str,
    per_thread: u64,
}

fn pbm_header(o: &mut String, title: &str, h: &PbmHeader<'_>) {
    let bar = "******************************************\n";
    o.push_str(bar);
    o.push_str(title);
    o.push('\n');
    o.push_str(bar);
    o.push('\n');
    let mut l = |label: &str, v: &dyn std::fmt::Display| o.push_str(&format!("{label:>28}: {v}\n"));
    l("Product", &h.product);
    l("Test Case", &h.test_case);
    l("Map", &h.map);
    if let Some((label, n)) = h.batch_line {
        l(label, &n);
    }
    l("Test Run Count", &h.test_count);
    l("Test Run Interval (msec)", &h.test_interval_ms);
    l("Total Entry Count Per Run", &h.total_entry_count);
    l("Thread Count", &h.thread_count);
    if let Some(p) = h.payload_size {
        l("Payload Size (bytes)", &p);
    }
    l("Prefix", &h.prefix);
    l("Entry Count per Thread", &h.per_thread);
    o.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A results file with a fixed name and text.
    struct Fixed(&'static str, &'static str);

    impl ResultsFile for Fixed {
        fn file_name(&self) -> String {
            self.0.to_string()
        }
        fn render(&self) -> String {
            self.1.to_string()
        }
    }

    #[test]
    fn a_second_run_in_the_same_second_never_overwrites_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let name = "group-g1-redis-261130-075844.txt";
        let paths: Vec<_> = ["one", "two", "three"]
            .iter()
            .map(|t| write_results_file(dir.path(), &Fixed(name, t)).unwrap())
            .collect();
        let names: Vec<_> = paths
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                name,
                "group-g1-redis-261130-075844_2.txt",
                "group-g1-redis-261130-075844_3.txt"
            ]
        );
        let texts: Vec<_> = paths
            .iter()
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect();
        assert_eq!(texts, ["one", "two", "three"]);
    }

    #[test]
    fn decimal_format_half_up() {
        assert_eq!(fmt4(100000.0 / 2285.0 * 1000.0), "43763.6761");
        assert_eq!(fmt4(2285.0 / 100000.0), "0.0228"); // 0.02285 is below the tie in binary
        assert_eq!(fmt4(1.03125), "1.0313"); // exact tie: HALF_UP, where Rust would say 1.0312
        assert_eq!(fmt3(0.0005), "0.001"); // 0.0005 is just above the tie in binary
        assert_eq!(fmt4(100000.0), "100000");
        assert_eq!(fmt4(0.00001), "0");
        assert_eq!(fmt4(9.99996), "10");
        assert_eq!(fmt4(f64::INFINITY), "∞");
        assert_eq!(fmt4(-2.5), "-2.5");
        assert_eq!(fmt4(-0.00001), "-0"); // as the JDK prints it
        assert_eq!(fmt3(131926.12137203166), "131926.121");
    }

    #[test]
    fn java_date_string() {
        // 2026-11-30T05:12:34Z is a Monday.
        let t = JavaTime::utc_ms(1_796_015_554_000);
        assert_eq!(t.date_string(), "Mon Nov 30 05:12:34 UTC 2026");
        assert_eq!(t.file_stamp(), "261130-051234");
        let edt = JavaTime::at_offset_ms(1_656_346_472_000, -4 * 3600, Some("EDT"));
        assert_eq!(edt.date_string(), "Mon Jun 27 12:14:32 EDT 2022");
        let ist = JavaTime::at_offset_ms(0, 19800, None);
        assert_eq!(ist.date_string(), "Thu Jan 01 05:30:00 GMT+05:30 1970");
    }
}

//! `create_csv [-all]` and `clean_results [-all]` (reference §6): read results files back the
//! way PadoGrid's scripts do and write PadoGrid's CSVs, byte for byte.
//!
//! Invariants:
//! - Values are extracted exactly as the script's `getValue` (`grep LABEL | sed 's/^.*://g'`,
//!   then an unquoted `echo`: text up to the last `:` dropped, whitespace collapsed, several
//!   matching lines joined by a space) and `getTimeValue` (`sed "s/LABEL//"`, so colons in
//!   times survive). Rows are joined with `", "` and nothing is quoted, so a `,` in a comment
//!   shifts columns in PadoGrid's CSV and in ours alike. (The unquoted `echo` would also
//!   glob-expand `*`/`?` in a value against the results directory; we do not.)
//! - Files are taken in `ls -tr` order: oldest modification time first; equal times in
//!   reverse name order.
//! - Only names starting with `ingestion-`, `tx-` and `group-` are read; other files in a
//!   results directory (CSVs, edgebench's markdown) are left alone.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Header of `results-group.csv` (verbatim, including the missing `(` in column 19).
pub const GROUP_CSV_HEADER: &str = "perf_test, File, Product, Group, Concurrent Groups, Operations, Comment, Test Run Count, Test Run Interval (msec), Total Invocation Count Per Run, Thread Count, Invocation Count per Thread, Start Time, Stop Time, Actual Total Number of Invocations, Max Time (msec), Elapsed Time (msec), Total Invocation Count, M Throughput invocations/sec), M Latency (msec), E Throughput (invocations/sec), E Latency (msec)";

/// Header of `results-ingestion.csv` (verbatim, with its trailing space).
pub const INGESTION_CSV_HEADER: &str = "perf_test, File, Product, Test Case, Map, PutAll Batch Size, Test Run Count, Test Run Interval (msec), Total Entry Count Per Run, Thread Count, Payload Size (bytes), Prefix, Entry Count per Thread, Start Time, Stop Time, Actual Total Entry (Put) Count, Max Time (msec), Throughput (msg/sec), Throughput (KiB/sec), Throughput (MiB/sec), Latency per put (msec), Total Volume (KiB), Total Volume (MiB), Total Volume (GiB) ";

/// Header of `results-tx.csv` (verbatim).
pub const TX_CSV_HEADER: &str = "perf_test, File, Product, Test Case, Map, Test Run Count, Test Run Interval (msec), Total Entry Count Per Run, Thread Count, Prefix, Entry Count per Thread, Start Time, Stop Time, Actual Total Number of Transactions, Total Number of Transactions on Missing Data, Max Time (msec), Throughput (tx/sec), Latency per transaction (msec)";

/// How a column is extracted.
#[derive(Clone, Copy)]
enum Get {
    /// `getValue`.
    Value(&'static str),
    /// `getTimeValue`.
    Time(&'static str),
    /// `getValue`, then `sed "s/ .*//"` (ingestion's two "Payload Size" lines).
    FirstWord(&'static str),
}

/// The group columns after `perf_test, File`, in the script's order.
const GROUP_COLUMNS: &[Get] = &[
    Get::Value("Product"),
    Get::Value("Group:"),
    Get::Value("Concurrent Group"),
    Get::Value("Operations"),
    Get::Value("Comment"),
    Get::Value("Test Run Count"),
    Get::Value("Test Run Interval"),
    Get::Value("Total Invocation Count per Run"),
    Get::Value("Thread Count"),
    Get::Value("Invocation Count per Thread"),
    Get::Time("Start Time:"),
    Get::Time("Stop Time:"),
    Get::Value("Actual Total Number of Invocations"),
    Get::Value("Max Time"),
    Get::Value("Elapsed Time"),
    Get::Value("Total Invocation Count:"),
    Get::Value("M Throughput"),
    Get::Value("M Latency"),
    Get::Value("E Throughput"),
    Get::Value("E Latency"),
];

const INGESTION_COLUMNS: &[Get] = &[
    Get::Value("Product:"),
    Get::Value("Test Case:"),
    Get::Value("Map:"),
    Get::Value("PutAll Batch Size:"),
    Get::Value("Test Run Count:"),
    Get::Value("Test Run Interval"),
    Get::Value("Total Entry Count Per Run:"),
    Get::Value("Thread Count"),
    Get::FirstWord("Payload Size"),
    Get::Time("Prefix:"),
    Get::Value("Entry Count per Thread:"),
    Get::Time("Start Time:"),
    Get::Time("Stop Time:"),
    Get::Value("Actual Total Entry (Put) Count:"),
    Get::Value("Max Time"),
    Get::Value("Throughput (msg/sec):"),
    Get::Value("Throughput (KiB/sec):"),
    Get::Value("Throughput (MiB/sec):"),
    Get::Value("Latency per put (msec):"),
    Get::Value("Total Volume (KiB):"),
    Get::Value("Total Volume (MiB):"),
    Get::Value("Total Volume (GiB):"),
];

const TX_COLUMNS: &[Get] = &[
    Get::Value("Product:"),
    Get::Value("Test Case:"),
    Get::Value("Map:"),
    Get::Value("Test Run Count:"),
    Get::Value("Test Run Interval"),
    Get::Value("Total Entry Count Per Run:"),
    Get::Value("Thread Count"),
    Get::Time("Prefix:"),
    Get::Value("Entry Count per Thread:"),
    Get::Time("Start Time:"),
    Get::Time("Stop Time:"),
    Get::Value("Actual Total Number of Transactions:"),
    Get::Value("Total Number of Transactions on Missing Data:"),
    Get::Value("Max Time"),
    Get::Value("Throughput (tx/sec):"),
    Get::Value("Latency per transaction (msec):"),
];

/// Every label `create_csv` greps for in any results file (to keep other text free of them).
pub fn grep_labels() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = GROUP_COLUMNS
        .iter()
        .chain(INGESTION_COLUMNS)
        .chain(TX_COLUMNS)
        .map(|g| match g {
            Get::Value(l) | Get::Time(l) | Get::FirstWord(l) => *l,
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The shell's unquoted `echo $VALUE`: words split on whitespace, joined by one space.
fn echo_unquoted(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `getValue LABEL FILE`.
pub fn get_value(text: &str, label: &str) -> String {
    let joined: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(label))
        .map(|l| l.rfind(':').map_or(l, |i| &l[i + 1..]))
        .collect();
    echo_unquoted(&joined.join("\n"))
}

/// `getTimeValue LABEL FILE`.
pub fn get_time_value(text: &str, label: &str) -> String {
    let joined: Vec<String> = text
        .lines()
        .filter(|l| l.contains(label))
        .map(|l| l.replacen(label, "", 1))
        .collect();
    echo_unquoted(&joined.join("\n"))
}

fn extract(text: &str, get: Get) -> String {
    match get {
        Get::Value(l) => get_value(text, l),
        Get::Time(l) => get_time_value(text, l),
        Get::FirstWord(l) => {
            let v = get_value(text, l);
            match v.split_once(' ') {
                Some((first, _)) => first.to_string(),
                None => v,
            }
        }
    }
}

/// Which results files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultsKind {
    /// `ingestion-*` → `results-ingestion.csv`.
    Ingestion,
    /// `tx-*` → `results-tx.csv`.
    Tx,
    /// `group-*` → `results-group.csv`.
    Group,
}

impl ResultsKind {
    /// In the order the script writes them.
    pub const ALL: [ResultsKind; 3] = [Self::Ingestion, Self::Tx, Self::Group];

    /// The results-file name prefix.
    pub fn prefix(self) -> &'static str {
        match self {
            Self::Ingestion => "ingestion-",
            Self::Tx => "tx-",
            Self::Group => "group-",
        }
    }

    /// The per-app CSV name.
    pub fn csv_name(self) -> &'static str {
        match self {
            Self::Ingestion => "results-ingestion.csv",
            Self::Tx => "results-tx.csv",
            Self::Group => "results-group.csv",
        }
    }

    /// The `-all` CSV name.
    pub fn all_csv_name(self) -> &'static str {
        match self {
            Self::Ingestion => "results-ingestion-all.csv",
            Self::Tx => "results-tx-all.csv",
            Self::Group => "results-group-all.csv",
        }
    }

    /// The CSV header line (without newline).
    pub fn header(self) -> &'static str {
        match self {
            Self::Ingestion => INGESTION_CSV_HEADER,
            Self::Tx => TX_CSV_HEADER,
            Self::Group => GROUP_CSV_HEADER,
        }
    }

    fn columns(self) -> &'static [Get] {
        match self {
            Self::Ingestion => INGESTION_COLUMNS,
            Self::Tx => TX_COLUMNS,
            Self::Group => GROUP_COLUMNS,
        }
    }
}

/// One CSV row (without newline) for a results file's text.
pub fn csv_row(kind: ResultsKind, app: &str, file_name: &str, text: &str) -> String {
    let mut cols = vec![app.to_string(), file_name.to_string()];
    cols.extend(kind.columns().iter().map(|g| extract(text, *g)));
    cols.join(", ")
}

/// The results files of `kind` in `results_dir`, in `ls -tr` order.
pub fn list_results(results_dir: &Path, kind: ResultsKind) -> io::Result<Vec<PathBuf>> {
    let mut files: Vec<(SystemTime, String, PathBuf)> = Vec::new();
    let entries = match fs::read_dir(results_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with(kind.prefix()) {
            continue;
        }
        let mtime = entry.metadata()?.modified()?;
        files.push((mtime, name, entry.path()));
    }
    // ls -t: newest first, ties by name; -r reverses the whole order.
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    files.reverse();
    Ok(files.into_iter().map(|(_, _, p)| p).collect())
}

/// A perf_test "app": a name (CSV column 1) and its results directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerfApp {
    /// Column 1 of every row (PadoGrid: the app directory name, e.g. `perf_test_redis`).
    pub name: String,
    /// Where its results files live.
    pub results_dir: PathBuf,
}

/// Why `create_csv`/`clean_results` failed.
#[derive(Debug, thiserror::Error)]
pub enum CsvError {
    /// No app has any results file.
    #[error("Result files not found in {dirs}. Result files are generated when you run 'perf_test' scripts (edgebench perf test_group -run).")]
    NoResults {
        /// The directories searched.
        dirs: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {error}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        error: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> CsvError + '_ {
    move |error| CsvError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// Builds one app's CSV text for `kind`, or `None` when it has no such results files.
pub fn build_csv(app: &PerfApp, kind: ResultsKind) -> Result<Option<String>, CsvError> {
    let files = list_results(&app.results_dir, kind).map_err(io_err(&app.results_dir))?;
    if files.is_empty() {
        return Ok(None);
    }
    let mut out = String::new();
    out.push_str(kind.header());
    out.push('\n');
    for f in files {
        let bytes = fs::read(&f).map_err(io_err(&f))?;
        let text = String::from_utf8_lossy(&bytes);
        let name = f
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        out.push_str(&csv_row(kind, &app.name, &name, &text));
        out.push('\n');
    }
    Ok(Some(out))
}

/// Writes `path` whole (`report::write_whole_file`: a temp file beside it, then a rename).
fn write_whole(path: &Path, text: &str) -> Result<(), CsvError> {
    crate::report::write_whole_file(path, text.as_bytes()).map_err(io_err(path))
}

/// `create_csv` for one app: rewrites `results-{ingestion,tx,group}.csv` for each kind that
/// has results files; returns the files written (what the script prints as `   + FILE`).
pub fn create_csv(app: &PerfApp) -> Result<Vec<PathBuf>, CsvError> {
    create_csv_all(app, std::slice::from_ref(app))
}

/// `create_csv -all`: every app with results gets its CSVs rebuilt; then the invoking app
/// gets `results-*-all.csv`: the first app's CSV whole, later apps without their header,
/// in `apps` order. Without results anywhere: [`CsvError::NoResults`].
pub fn create_csv_all(invoking: &PerfApp, apps: &[PerfApp]) -> Result<Vec<PathBuf>, CsvError> {
    let mut with_results = Vec::new();
    for app in apps {
        let mut any = false;
        for kind in ResultsKind::ALL {
            any |= !list_results(&app.results_dir, kind)
                .map_err(io_err(&app.results_dir))?
                .is_empty();
        }
        if any {
            with_results.push(app);
        }
    }
    if with_results.is_empty() {
        let dirs: Vec<String> = apps
            .iter()
            .map(|a| a.results_dir.display().to_string())
            .collect();
        return Err(CsvError::NoResults {
            dirs: dirs.join(", "),
        });
    }
    let mut written = Vec::new();
    for app in &with_results {
        for kind in ResultsKind::ALL {
            if let Some(text) = build_csv(app, kind)? {
                let path = app.results_dir.join(kind.csv_name());
                write_whole(&path, &text)?;
                written.push(path);
            }
        }
    }
    let is_all = apps.len() != 1 || apps[0] != *invoking;
    if !is_all {
        return Ok(written);
    }
    fs::create_dir_all(&invoking.results_dir).map_err(io_err(&invoking.results_dir))?;
    // The script's order of "+" lines for -all: ingestion, group, tx.
    for kind in [ResultsKind::Ingestion, ResultsKind::Group, ResultsKind::Tx] {
        let all_path = invoking.results_dir.join(kind.all_csv_name());
        let mut all: Option<String> = None;
        for app in &with_results {
            // Like the script, whatever per-app CSV exists is used, even one left from before.
            let path = app.results_dir.join(kind.csv_name());
            let text = match fs::read_to_string(&path) {
                Ok(t) => t,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_err(&path)(e)),
            };
            match &mut all {
                None => all = Some(text),
                Some(acc) => acc.push_str(text.split_once('\n').map_or("", |(_, rest)| rest)),
            }
        }
        match all {
            Some(text) => {
                write_whole(&all_path, &text)?;
                written.push(all_path);
            }
            None => {
                // The script deletes old -all files first.
                let _ = fs::remove_file(&all_path);
            }
        }
    }
    Ok(written)
}

/// `clean_results`: removes every file `rm "$RESULTS_DIR/"*` would (not dot files, not
/// directories), and returns them, sorted by name.
pub fn clean_results(results_dir: &Path) -> Result<Vec<PathBuf>, CsvError> {
    let mut removed = Vec::new();
    let entries = match fs::read_dir(results_dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(removed),
        Err(e) => return Err(io_err(results_dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(io_err(results_dir))?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let path = entry.path();
        if entry.file_type().map_err(io_err(&path))?.is_dir() {
            continue;
        }
        fs::remove_file(&path).map_err(io_err(&path))?;
        removed.push(path);
    }
    removed.sort();
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn get_value_like_the_script() {
        let text = "                       Comment: a: b  c\n   Payload Size (bytes): 10\n Payload Size (bytes): 10\n";
        assert_eq!(get_value(text, "Comment"), "b c");
        assert_eq!(extract(text, Get::FirstWord("Payload Size")), "10");
        assert_eq!(get_value(text, "Payload Size"), "10 10");
        assert_eq!(get_value(text, "Missing"), "");
        let t = "Start Time: Mon Jun 27 12:14:32 EDT 2022\n";
        assert_eq!(
            get_time_value(t, "Start Time:"),
            "Mon Jun 27 12:14:32 EDT 2022"
        );
    }
}

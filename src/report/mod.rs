//! What no workload owns. Exporters: each one turns the same results into one results file;
//! [`write_all`] is the one entry point every command's results directory is written through
//! (coredata's [`RunResults`] formats here, and each slice's own: `kv::results`,
//! `fleet::export`). Besides: the HTML page machinery ([`html`]), the merge machinery
//! ([`merge`]), `report compare` and `report benchtomd`, and the [`Workload`] seam through
//! which `report html` and `report merge` reach the workloads, which all sit above this
//! module.
//!
//! Every exporter is a small, pure renderer behind the [`Exporter`] trait: it reads the results
//! model and returns the file's bytes, and never recomputes a statistic the model already
//! provides (the median repetition and the spread come from [`crate::results::BenchResults`]),
//! so every file shows the same figures. Rendering is deterministic: the same results give the
//! same bytes, which is what the snapshot tests pin. [`write_files`] writes every format whole
//! (temp file in the same directory, then rename), so a crash or Ctrl-C between two benchmarks
//! leaves each file either as it was or complete, never half written.

pub mod benchtomd;
pub mod compare;
pub mod csv;
pub mod gobench;
pub mod html;
pub mod json;
pub mod markdown;
pub mod merge;
pub mod percentiles;
pub mod workload;

pub use workload::Workload;

use std::io::{self, Write};
use std::path::Path;

use crate::results::RunResults;

/// One results file format over results of type `R` (a core-data run by default).
pub trait Exporter<R = RunResults> {
    /// The file this format is written to, inside the results directory.
    fn file_name(&self) -> &str;

    /// The complete file contents.
    fn render(&self, results: &R) -> io::Result<Vec<u8>>;
}

/// The formats edgebench writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// The benchtomd table: benchmarks × targets, µs/op (`results.md`).
    Markdown,
    /// Go benchmark text that `benchstat` reads (`bench.txt`).
    GoBench,
    /// Latency percentiles per target and benchmark (`percentiles.md`).
    Percentiles,
    /// One row per repetition (`results.csv`).
    Csv,
    /// The whole results model (`results.json`).
    Json,
}

impl Format {
    /// Every format, in the order files are written.
    pub fn all() -> [Format; 5] {
        [
            Format::Markdown,
            Format::GoBench,
            Format::Percentiles,
            Format::Csv,
            Format::Json,
        ]
    }

    /// The short name used on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Format::Markdown => "md",
            Format::GoBench => "go",
            Format::Percentiles => "pct",
            Format::Csv => "csv",
            Format::Json => "json",
        }
    }

    /// The format with this short name (see [`Format::name`]).
    pub fn from_name(s: &str) -> Option<Format> {
        Format::all().into_iter().find(|f| f.name() == s)
    }

    /// The exporter that renders this format.
    pub fn exporter(&self) -> Box<dyn Exporter> {
        match self {
            Format::Markdown => Box::new(markdown::Markdown),
            Format::GoBench => Box::new(gobench::GoBench),
            Format::Percentiles => Box::new(percentiles::Percentiles),
            Format::Csv => Box::new(csv::Csv),
            Format::Json => Box::new(json::Json),
        }
    }
}

/// Writes every core-data format's file into `dir` (created if missing), each one whole.
///
/// The runner calls this after every benchmark, so a run that dies part-way still leaves
/// complete files with everything that finished.
pub fn write_files(dir: &Path, results: &RunResults) -> io::Result<()> {
    let exporters: Vec<Box<dyn Exporter>> = Format::all().iter().map(Format::exporter).collect();
    let exporters: Vec<&dyn Exporter> = exporters.iter().map(|e| e.as_ref()).collect();
    write_all(dir, results, &exporters).map(drop)
}

/// Writes each exporter's file into `dir` (created if missing), each one whole, and returns
/// what it wrote, in the exporters' order (for a command that also prints a file or copies it
/// elsewhere, so nothing is rendered twice).
pub fn write_all<R>(
    dir: &Path,
    results: &R,
    exporters: &[&dyn Exporter<R>],
) -> io::Result<Vec<Vec<u8>>> {
    std::fs::create_dir_all(dir).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot create results directory {}: {e}", dir.display()),
        )
    })?;
    let mut written = Vec::with_capacity(exporters.len());
    for exporter in exporters {
        let path = dir.join(exporter.file_name());
        let bytes = exporter.render(results)?;
        write_whole(dir, &path, &bytes).map_err(|e| {
            io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
        })?;
        written.push(bytes);
    }
    Ok(written)
}

/// Writes `path` whole (a temp file beside it, then a rename), with an error naming it.
pub fn write_whole_file(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    write_whole(dir, path, bytes)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display())))
}

/// Writes `bytes` to a temp file in `dir`, then renames it over `path`: a rename within one
/// directory is atomic, so readers (and a crash) see the old file or the new one, never a mix.
fn write_whole(dir: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(".edgebench-").suffix(".tmp");
    // NamedTempFile creates 0600 files; after the rename that would make results files private,
    // unlike every other file the user creates. Ask for 0666 and let the umask decide, as
    // `File::create` does.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut file = builder.tempfile_in(dir)?;
    file.write_all(bytes)?;
    // Without the sync, a power loss after the rename can leave an empty file under the final
    // name on some file systems (ext4 delalloc); five small fsyncs per benchmark are cheap.
    file.as_file().sync_all()?;
    file.persist(path)?;
    Ok(())
}

/// `n` with `,` between groups of three digits, as awk's `%'d` prints it in an English locale.
pub(crate) fn group_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A float with `decimals` digits after the point and thousands separators in the integer
/// part. Rounding is Rust's (exact value, ties to even), the same as Go's `%.Nf`.
fn group_float(x: f64, decimals: usize) -> String {
    let text = format!("{:.*}", decimals, x.abs());
    let (int, frac) = match text.split_once('.') {
        Some((int, frac)) => (int, Some(frac)),
        None => (text.as_str(), None),
    };
    // The integer part of a finite f64 formatted this way is all digits; anything else (inf,
    // NaN) is shown as Rust prints it rather than guessed at.
    let grouped = match int.parse::<u64>() {
        Ok(n) => group_thousands(n),
        Err(_) => int.to_string(),
    };
    let sign = if x.is_sign_negative() && x != 0.0 {
        "-"
    } else {
        ""
    };
    match frac {
        Some(frac) => format!("{sign}{grouped}.{frac}"),
        None => format!("{sign}{grouped}"),
    }
}

/// Nanoseconds as microseconds with two decimals and thousands separators, computed in
/// integers (round half up) so that e.g. 1005 ns is always `1.01`, whatever f64 would do.
fn micros_2dp(ns: u64) -> String {
    let centi = ns / 10 + u64::from(ns % 10 >= 5);
    format!("{}.{:02}", group_thousands(centi / 100), centi % 100)
}

/// Text that goes into one markdown table cell or list line: `|` would split the cell and a
/// newline would end the table, so both are neutralised.
fn md_cell(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace('|', "\\|")
}

#[cfg(test)]
pub(crate) mod fixture {
    //! The one hand-made run every exporter's snapshot is taken over: two targets in
    //! non-sorted order, three benchmarks in non-sorted run order, one benchmark with three
    //! repetitions, a target that failed part-way (error and a missing benchmark), a
    //! sub-microsecond value and a value over 1,000,000 ns; the store growth of one target's
    //! write benchmark (and none for the other's: a store that cannot say).

    use crate::results::{BenchResults, Measurement, RunMeta, RunResults, TargetResults};

    fn m(n: u64, ns_per_op: f64, bytes: u64, allocs: u64, pct_ns: [u64; 5]) -> Measurement {
        Measurement {
            n,
            ns_per_op,
            bytes_per_op: bytes,
            allocs_per_op: allocs,
            p50_ns: pct_ns[0],
            p90_ns: pct_ns[1],
            p99_ns: pct_ns[2],
            p999_ns: pct_ns[3],
            max_ns: pct_ns[4],
            histogram: String::new(),
            store_bytes_per_op: None,
        }
    }

    /// `m` with the store's growth per op.
    fn grew(store_bytes_per_op: f64, m: Measurement) -> Measurement {
        Measurement {
            store_bytes_per_op: Some(store_bytes_per_op),
            ..m
        }
    }

    fn bench(name: &str, runs: Vec<Measurement>) -> BenchResults {
        BenchResults {
            name: name.into(),
            runs,
            not_applicable: None,
        }
    }

    /// The names of the files in `dir`, sorted (to show no temp file is left behind).
    pub(crate) fn file_names(dir: &std::path::Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    pub(crate) fn run() -> RunResults {
        RunResults {
            meta: RunMeta {
                workload: "coredata".into(),
                version: "0.1.0".into(),
                started: "2024-05-01T12:00:00Z".into(),
                benchtime: "1s".into(),
                count: 3,
                goos: "linux".into(),
                goarch: "amd64".into(),
                cpu: "Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz".into(),
                procs: 4,
                baseline: None,
                parallel: Vec::new(),
                run_id: None,
                hosts: Vec::new(),
            },
            targets: vec![
                TargetResults {
                    name: "RedisDB_TCP".into(),
                    parallel: 1,
                    endpoint: "redis://127.0.0.1:6379".into(),
                    error: None,
                    connect_ns: Some(1_234_500),
                    benchmarks: vec![
                        bench(
                            "AddReading",
                            vec![
                                grew(
                                    176.25,
                                    m(
                                        20000,
                                        76292.0,
                                        1019,
                                        42,
                                        [71_000, 88_100, 120_300, 250_100, 1_005_000],
                                    ),
                                ),
                                grew(
                                    175.5,
                                    m(
                                        20000,
                                        70100.4,
                                        1019,
                                        42,
                                        [68_000, 80_000, 99_900, 200_000, 900_000],
                                    ),
                                ),
                                grew(
                                    1176.0,
                                    m(
                                        20000,
                                        81000.0,
                                        1020,
                                        42,
                                        [75_000, 95_000, 130_000, 300_000, 1_200_000],
                                    ),
                                ),
                            ],
                        ),
                        bench(
                            "Events",
                            vec![m(
                                20,
                                100022091.0,
                                1796015,
                                28010,
                                [
                                    99_800_000,
                                    101_200_000,
                                    104_857_600,
                                    104_857_600,
                                    105_000_123,
                                ],
                            )],
                        ),
                        bench(
                            "EventCount",
                            vec![m(5000000, 210.4, 0, 0, [205, 230, 415, 1_005, 30_015])],
                        ),
                    ],
                },
                TargetResults {
                    name: "MongoDB".into(),
                    parallel: 1,
                    endpoint: "mongodb://127.0.0.1:27017".into(),
                    error: Some("connection reset by peer during Events".into()),
                    connect_ns: None,
                    benchmarks: vec![
                        bench(
                            "AddReading",
                            vec![m(
                                10000,
                                146033.0,
                                3632,
                                70,
                                [140_000, 160_000, 210_000, 400_000, 2_000_000],
                            )],
                        ),
                        bench(
                            "EventCount",
                            vec![m(
                                20000,
                                94343.0,
                                1832,
                                43,
                                [90_000, 99_000, 150_000, 300_000, 600_000],
                            )],
                        ),
                    ],
                },
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_round_trip() {
        let names: Vec<&str> = Format::all().iter().map(Format::name).collect();
        assert_eq!(names, ["md", "go", "pct", "csv", "json"]);
        for f in Format::all() {
            assert_eq!(Format::from_name(f.name()), Some(f));
        }
        assert_eq!(Format::from_name("markdown"), None);
    }

    #[test]
    fn file_names() {
        let files: Vec<String> = Format::all()
            .iter()
            .map(|f| f.exporter().file_name().to_string())
            .collect();
        assert_eq!(
            files,
            [
                "results.md",
                "bench.txt",
                "percentiles.md",
                "results.csv",
                "results.json"
            ]
        );
    }

    #[test]
    fn write_files_creates_dir_and_writes_every_format_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("nested").join("results");
        let results = fixture::run();
        // Twice: the second call must replace the files, as after every benchmark.
        write_files(&dir, &RunResults::default()).unwrap();
        write_files(&dir, &results).unwrap();
        // No temp file is left behind.
        assert_eq!(
            fixture::file_names(&dir),
            [
                "bench.txt",
                "percentiles.md",
                "results.csv",
                "results.json",
                "results.md"
            ]
        );
        for f in Format::all() {
            let e = f.exporter();
            let on_disk = std::fs::read(dir.join(e.file_name())).unwrap();
            assert_eq!(on_disk, e.render(&results).unwrap(), "{}", e.file_name());
        }
    }

    #[test]
    fn write_files_names_the_path_it_cannot_create() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("not-a-dir");
        std::fs::write(&file, b"x").unwrap();
        let err = write_files(&file.join("sub"), &RunResults::default()).unwrap_err();
        assert!(err.to_string().contains("not-a-dir"), "{err}");
    }

    #[test]
    fn number_formatting() {
        assert_eq!(group_thousands(0), "0");
        assert_eq!(group_thousands(999), "999");
        assert_eq!(group_thousands(1000), "1,000");
        assert_eq!(group_thousands(475_972), "475,972");
        assert_eq!(group_thousands(1_234_567_890), "1,234,567,890");
        assert_eq!(group_float(1234567.891, 2), "1,234,567.89");
        assert_eq!(group_float(0.214, 2), "0.21");
        assert_eq!(group_float(999.996, 2), "1,000.00");
        assert_eq!(group_float(13107.53, 0), "13,108");
        assert_eq!(micros_2dp(0), "0.00");
        assert_eq!(micros_2dp(1005), "1.01");
        assert_eq!(micros_2dp(1004), "1.00");
        assert_eq!(micros_2dp(105_000_123), "105,000.12");
        assert_eq!(md_cell("a |b\nc"), "a \\|b c");
    }
}

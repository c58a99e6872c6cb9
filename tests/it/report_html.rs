//! `report.html` end to end: a real `coredata` run writes it, `report html` rebuilds it (and
//! its PNGs, and a page comparing two runs), bad input is one line naming the path, and the
//! page opened in headless Chromium shows every chart: the DOM has each chart's `<svg>` and
//! its text, the console has no error, and the screenshot is a picture, not a blank page.
//! A fleet run through the in-process bus shows its "Message bus" charts the same way.
//!
//! The browser test is skipped, with a message, where no Chromium is installed; `.ci/run`
//! installs Debian's `chromium`, so CI runs it.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use edgebench::coredata::workload::BENCHMARKS;

fn edgebench() -> Command {
    crate::common::edgebench()
}

/// Runs `edgebench ARGS`, which must succeed; returns its stdout.
fn succeed(args: &[&OsStr]) -> String {
    let out = edgebench().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// A small real run on the in-process engine: every benchmark, 3 repetitions of 20
/// iterations, into `dir`.
fn coredata_run(dir: &Path) {
    let args = "coredata --target embedded --benchtime 20x --count 3 --out";
    let mut args: Vec<&OsStr> = args.split(' ').map(OsStr::new).collect();
    args.push(dir.as_os_str());
    succeed(&args);
}

/// Runs `edgebench report html ARGS`; returns the files it says it wrote.
fn report_html(args: &[&OsStr]) -> Vec<PathBuf> {
    let args: Vec<&OsStr> = ["report".as_ref(), "html".as_ref()]
        .into_iter()
        .chain(args.iter().copied())
        .collect();
    succeed(&args).lines().map(PathBuf::from).collect()
}

/// Two charts per benchmark: the bars and the latency curves.
fn expected_charts() -> usize {
    2 * BENCHMARKS.len()
}

/// The texts every chart of the page must show.
fn chart_titles() -> Vec<String> {
    BENCHMARKS
        .iter()
        .flat_map(|b| {
            [
                format!("{b}: time per operation"),
                format!("{b}: latency by percentile"),
            ]
        })
        .collect()
}

#[test]
fn coredata_writes_the_page_and_report_html_rebuilds_it_with_pngs() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    coredata_run(&run);
    let page = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert_eq!(page.matches("<svg ").count(), expected_charts());
    for title in chart_titles() {
        assert!(page.contains(&format!("\n{title}\n</text>")), "{title}");
    }
    assert!(page.contains("<dt>command</dt><dd>"));
    for external in ["<script", "src=", "href=\"http", "@import", "url("] {
        assert!(!page.contains(external), "{external}");
    }

    let written = report_html(&["--png".as_ref(), run.as_os_str()]);
    assert_eq!(written.len(), 1 + expected_charts());
    assert_eq!(written[0], run.join("report.html"));
    assert_eq!(
        written[1],
        run.join("charts")
            .join("01-addevent-time-per-operation.png")
    );
    for png in &written[1..] {
        let bytes = std::fs::read(png).unwrap();
        assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "{}", png.display());
    }
    let rebuilt = std::fs::read_to_string(run.join("report.html")).unwrap();
    // The rebuild keeps the run's command line, which only the old page recorded.
    let command = |html: &str| {
        html.lines()
            .find(|l| l.starts_with("<dt>command</dt>"))
            .map(str::to_string)
    };
    assert_eq!(command(&rebuilt), command(&page));
    assert_eq!(rebuilt.matches("<svg ").count(), expected_charts());
}

#[test]
fn report_html_compares_two_runs_on_one_page() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("before"), tmp.path().join("after"));
    coredata_run(&a);
    coredata_run(&b);
    let page = tmp.path().join("compare.html");
    let written = report_html(&[
        a.as_os_str(),
        b.as_os_str(),
        "--out".as_ref(),
        page.as_os_str(),
    ]);
    assert_eq!(written, std::slice::from_ref(&page));
    let html = std::fs::read_to_string(&page).unwrap();
    // One bar per (directory, target) in each benchmark's chart.
    assert!(html.contains("\nbefore: RedisDB_Embedded\n</text>"));
    assert!(html.contains("\nafter: RedisDB_Embedded\n</text>"));
    assert!(html.contains("(2 results directories)</title>"));
    // Two core-data runs: report compare's table, as a section of the page. Three
    // repetitions a side can never be significant, and the table says so, as benchstat does.
    assert!(html.contains("<h2>Old against new: significant changes (benchstat&#39;s test)</h2>"));
    assert!(html.contains(">vs base</th>"), "{html}");
    assert_eq!(
        html.matches("need &gt;= 4 samples to detect a difference at alpha level 0.05")
            .count(),
        1
    );
    // Go's names: BenchmarkX-P with P the machine's CPUs, as `go test` prints them.
    for bench in BENCHMARKS {
        let row = format!("<td style=\"text-align: left\">{bench}-");
        assert_eq!(html.matches(&row).count(), 1, "{bench}");
    }
}

#[test]
fn report_html_names_a_directory_without_results() {
    let tmp = tempfile::tempdir().unwrap();
    let out = edgebench()
        .args(["report", "html"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "edgebench: {}: no edgebench results here",
            tmp.path().display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("give a directory that edgebench coredata"));
}

/// Chromium's binary, by the names Debian, Ubuntu and Google give it.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|p| p.is_file())
}

/// Runs headless Chromium on `page` with `args`; returns (stdout, stderr).
fn headless(browser: &Path, page: &Path, args: &[String]) -> (String, String) {
    let out = crate::common::child(browser)
        .args([
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1400,5000",
        ])
        .args(args)
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Lines of Chromium's log from the page's console. Chromium logs `console.error`, an
/// uncaught exception and a refused load alike as `INFO:CONSOLE`, and the page has no script
/// of its own, so any console line at all is a fault.
fn console_errors(log: &str) -> Vec<&str> {
    log.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

#[test]
fn the_page_renders_every_chart_in_headless_chromium() {
    let Some(browser) = chromium() else {
        eprintln!(
            "skipped: no chromium, chromium-browser or google-chrome on PATH \
             (apt-get install chromium; .ci/run installs it)"
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    coredata_run(&run);
    let page = run.join("report.html");

    let (dom, log) = headless(&browser, &page, &["--dump-dom".to_string()]);
    assert_eq!(console_errors(&log), Vec::<&str>::new());
    assert_eq!(dom.matches("<svg ").count(), expected_charts(), "{dom}");
    for title in chart_titles() {
        assert!(dom.contains(&title), "{title} not in the DOM");
    }
    // Axis labels and the legend are text too.
    for text in [
        "time per operation",
        "percentile",
        "50%",
        "99%",
        "RedisDB_Embedded",
    ] {
        assert!(dom.contains(&format!("\n{text}\n</text>")), "{text}");
    }

    let shot = tmp.path().join("shot.png");
    let (_, log) = headless(
        &browser,
        &page,
        &[format!("--screenshot={}", shot.display())],
    );
    assert_eq!(console_errors(&log), Vec::<&str>::new());
    let (width, height, rgb) = decode_png(&shot);
    assert_eq!((width, height), (1400, 5000));
    // A picture, not a blank page: the bars' colour (the palette's first, #4e79a7) covers a
    // good part of it, and so does text.
    let pixels = || rgb.chunks_exact(3);
    let bar = pixels()
        .filter(|p| p[0].abs_diff(78) < 8 && p[1].abs_diff(121) < 8 && p[2].abs_diff(167) < 8)
        .count();
    let dark = pixels().filter(|p| p.iter().all(|&c| c < 80)).count();
    assert!(bar > 20_000, "{bar} pixels of the bars' colour");
    assert!(dark > 20_000, "{dark} dark (text) pixels");
}

/// A small fleet run through the in-process bus into `dir`. Three seconds, not one: the bus's
/// running totals are taken at the end of each second while the writers run, so a one-second
/// run has none and its page no per-second bus charts.
fn fleet_bus_run(dir: &Path) {
    let args = "fleet --target embedded --via bus --bus embedded --events-per-second 200 \
                --duration 3s --warmup 0s --out";
    let mut args: Vec<&OsStr> = args.split_whitespace().map(OsStr::new).collect();
    args.push(dir.as_os_str());
    succeed(&args);
}

/// The bus section's charts, in page order.
const BUS_CHARTS: [&str; 4] = [
    "bus: events published per second",
    "bus: events persisted per second",
    "bus: backlog (published, not yet persisted)",
    "bus: publish to commit, by percentile",
];

#[test]
fn a_bus_run_shows_its_bus_charts_in_headless_chromium() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    fleet_bus_run(&run);
    let page = run.join("report.html");
    let html = std::fs::read_to_string(&page).unwrap();
    // The writes and their latency, then the bus's four.
    assert_eq!(html.matches("<svg ").count(), 2 + BUS_CHARTS.len());
    assert_eq!(html.matches("<h2>Message bus</h2>").count(), 1);
    for title in BUS_CHARTS {
        assert!(html.contains(&format!("\n{title}\n</text>")), "{title}");
    }
    // The target's line says what fleet.json says.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("fleet.json")).unwrap()).unwrap();
    let bus = &json["targets"][0]["summary"]["bus"];
    let line = format!(
        "{} published, {} persisted, {} lost",
        bus["published"], bus["persisted"], bus["lost"]
    );
    assert!(bus["published"].as_u64() > Some(0), "{bus}");
    assert!(html.contains(&line), "{line}");

    let Some(browser) = chromium() else {
        eprintln!(
            "skipped the browser half: no chromium, chromium-browser or google-chrome on PATH \
             (apt-get install chromium; .ci/run installs it)"
        );
        return;
    };
    let (dom, log) = headless(&browser, &page, &["--dump-dom".to_string()]);
    assert_eq!(console_errors(&log), Vec::<&str>::new());
    assert_eq!(dom.matches("<svg ").count(), 2 + BUS_CHARTS.len(), "{dom}");
    for text in BUS_CHARTS
        .into_iter()
        .chain(["99%", "RedisDB_Embedded_EdgeX3+Bus_Embedded"])
    {
        assert!(dom.contains(&format!("\n{text}\n</text>")), "{text}");
    }
    // Axis titles, which gain " (log scale)" when a loaded machine spreads the values.
    for text in [
        "events persisted per second",
        "events published, not yet persisted",
        "from intended publish time to commit",
    ] {
        assert!(dom.contains(&format!("\n{text}")), "{text}");
    }
}

/// (width, height, RGB bytes) of a PNG.
fn decode_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let decoder = png::Decoder::new(std::io::BufReader::new(std::fs::File::open(path).unwrap()));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let channels = info.color_type.samples();
    let rgb = buf[..info.buffer_size()]
        .chunks_exact(channels)
        .flat_map(|p| [p[0], p[1], p[2]])
        .collect();
    (info.width, info.height, rgb)
}

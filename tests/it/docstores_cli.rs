//! `edgebench coredata` on the document stores, end to end through the binary: every store
//! kind runs in one table, `--baseline` adds the ratio table, MongoDB runs in its EdgeX layout
//! directly and behind the service, and each run's private database is gone afterwards.

use edgebench::results::RunResults;

use crate::common::{self, coredata, markdown_row};

/// The database names the run's endpoints mention (`edgebench_<random>`).
fn private_databases(results: &RunResults) -> Vec<String> {
    let mut names = Vec::new();
    for t in &results.targets {
        for word in t
            .endpoint
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        {
            if word.starts_with("edgebench_") {
                names.push(word.to_string());
            }
        }
    }
    names
}

#[test]
fn every_document_store_runs_in_one_table_with_a_baseline_and_cleans_up() {
    let mongo = common::mongo::server_url();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let targets = format!("sqlite,sqlite::memory:,pg-tcp,pg-uds,mongo={mongo}");
    let (code, stdout, stderr) = coredata(
        &[
            "--target",
            &targets,
            "--bench",
            "ReadingCount|ReadingById",
            "--benchtime",
            "5x",
            "--baseline",
            "SQLite_Embedded",
        ],
        &out,
    );
    assert_eq!(code, Some(0), "{stderr}");

    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some(
            "| Benchmark | SQLite_Embedded (micro/op) | SQLite_Embedded_2 (micro/op) | \
             PostgreSQL_TCP (micro/op) | PostgreSQL_UDS (micro/op) | mongo (micro/op) |"
        )
    );
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert_eq!(md, stdout, "results.md is what was printed");
    let ratios: Vec<&str> = md.split("\n\n").nth(1).unwrap_or("").lines().collect();
    assert_eq!(
        ratios.first().copied(),
        Some(
            "| Benchmark | SQLite_Embedded (x SQLite_Embedded) | SQLite_Embedded_2 (x \
             SQLite_Embedded) | PostgreSQL_TCP (x SQLite_Embedded) | PostgreSQL_UDS (x \
             SQLite_Embedded) | mongo (x SQLite_Embedded) |"
        ),
        "{md}"
    );
    assert_eq!(ratios.len(), 4, "header, divider, two benchmarks: {md}");
    for row in &ratios[2..] {
        assert!(
            row.contains("| 1.00x |"),
            "the baseline divides by itself: {row}"
        );
    }

    let results: RunResults =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert!(results.targets.iter().all(|t| t.error.is_none()));
    assert!(results.targets.iter().all(|t| t.benchmarks.len() == 2));
    let names = private_databases(&results);
    assert_eq!(names.len(), 3, "pg-tcp, pg-uds and mongo: {names:?}");

    // Dropped at the end of the run: neither PostgreSQL nor MongoDB still has them.
    let mut pg = postgres::Config::new()
        .host("/var/run/postgresql")
        .user(&std::env::var("USER").unwrap_or_else(|_| "root".into()))
        .dbname("postgres")
        .connect(postgres::NoTls)
        .expect("connect to PostgreSQL");
    let client = mongodb::sync::Client::with_uri_str(&mongo).unwrap();
    let mongo_dbs = client.list_database_names().run().unwrap();
    for name in &names {
        let left = pg
            .query_one(
                "SELECT count(*) FROM pg_database WHERE datname = $1",
                &[name],
            )
            .unwrap()
            .get::<_, i64>(0);
        assert_eq!(left, 0, "{name} is still in PostgreSQL");
        assert!(!mongo_dbs.contains(name), "{name} is still in MongoDB");
    }
}

#[test]
fn an_unreachable_document_store_is_reported_and_the_others_still_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let (code, stdout, stderr) = coredata(
        &[
            "--target",
            "deadpg=postgres://nobody@127.0.0.1:1/db,deadmongo=mongodb://127.0.0.1:1,sqlite",
            "--bench",
            "ReadingCount",
            "--benchtime",
            "3x",
        ],
        &out,
    );
    assert_eq!(code, Some(1), "{stderr}");
    let failures: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("target dead"))
        .collect();
    assert_eq!(failures.len(), 2, "{stderr}");
    assert!(
        failures[0].starts_with("edgebench: target deadpg: postgres: cannot connect"),
        "{}",
        failures[0]
    );
    assert!(
        failures[1].starts_with("edgebench: target deadmongo: mongodb: cannot reach MongoDB"),
        "{}",
        failures[1]
    );
    assert!(
        stdout.starts_with("| Benchmark | SQLite_Embedded (micro/op) |\n"),
        "{stdout}"
    );
}

#[test]
fn mongodb_runs_in_its_edgex_layout_directly_and_behind_the_service() {
    let mongo = common::mongo::server_url();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let (code, stdout, stderr) = coredata(
        &[
            "--target",
            &mongo,
            "--layout",
            "edgex4",
            "--via",
            "direct,http-uds",
            "--bench",
            // One dataset per column: SecantusDB takes ~2 ms a write, and a read benchmark
            // seeds 1,000 events.
            "AddEvent|EventById|AddReading",
            "--benchtime",
            "3x",
        ],
        &out,
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(
        stdout.lines().next(),
        Some("| Benchmark | MongoDB_EdgeX4 (micro/op) | MongoDB+HTTP_UDS (micro/op) |")
    );
    // EdgeX's API has no lone reading.
    assert_eq!(markdown_row(&stdout, "AddReading"), ["—", "—"], "{stdout}");
    for bench in ["AddEvent", "EventById"] {
        let row = markdown_row(&stdout, bench);
        assert_eq!(row.len(), 2, "{stdout}");
        assert!(
            row.iter()
                .all(|c| c.chars().next().is_some_and(|ch| ch.is_ascii_digit())),
            "{bench}: {row:?}"
        );
    }

    let results: RunResults =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert!(results.targets.iter().all(|t| t.error.is_none()));
    assert!(
        results
            .targets
            .iter()
            .all(|t| t.endpoint.contains("layout edgex4")),
        "{:?}",
        results
            .targets
            .iter()
            .map(|t| &t.endpoint)
            .collect::<Vec<_>>()
    );
    let names = private_databases(&results);
    assert_eq!(names.len(), 2, "one per column: {names:?}");
    let client = mongodb::sync::Client::with_uri_str(&mongo).unwrap();
    let left = client.list_database_names().run().unwrap();
    for name in &names {
        assert!(!left.contains(name), "{name} is still in MongoDB");
    }
}

//! The binary end to end: bad input gets one clear line, an unreachable target does not stop
//! the others, results files are complete, `report benchtomd` reads what `coredata` wrote,
//! and Ctrl-C keeps what finished and stops the spawned servers.

use std::path::Path;
use std::process::{Command, Stdio};

use assert_cmd::cargo::cargo_bin;
use edgebench::coredata::workload::BENCHMARKS;
use edgebench::report::Format;

fn edgebench() -> Command {
    crate::common::edgebench()
}

/// Runs edgebench and returns (exit code, stdout, stderr).
fn run(args: &[&str]) -> (i32, String, String) {
    run_with(edgebench().args(args))
}

fn run_with(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The one line of an input error: exit status 2, nothing on stdout, one stderr line.
fn assert_one_line_error(args: &[&str], expected: &str) {
    let line = one_line_error(args);
    assert_eq!(line, expected);
}

/// Like [`assert_one_line_error`], for messages whose tail comes from another library.
fn assert_one_line_error_prefix(args: &[&str], prefix: &str) {
    let line = one_line_error(args);
    assert!(line.starts_with(prefix), "{line}");
}

fn one_line_error(args: &[&str]) -> String {
    let (code, stdout, stderr) = run(args);
    assert_eq!(code, 2, "{args:?}: stderr {stderr}");
    assert_eq!(stdout, "");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr.trim_end().to_string()
}

#[test]
fn unknown_target_is_one_line() {
    assert_one_line_error(
        &["coredata", "--target", "redis-tcp,foo"],
        "edgebench: --target: unknown target \"foo\": use embedded, embedded-direct, embedded-tcp, embedded-uds, redis-tcp, redis-uds, redis-cluster, redis[s]://[USER:PW@]HOST:PORT, redis+unix:///PATH, redis-cluster://HOST:PORT[,HOST:PORT…], sqlite, sqlite:///PATH, sqlite::memory:, pg-tcp, pg-uds, postgres://…, mongodb://HOST:PORT, http://HOST:PORT, https://HOST:PORT[?cacert=FILE], http+unix:///PATH or NAME=any of these",
    );
}

#[test]
fn document_store_flags_are_checked_with_one_line_errors() {
    assert_one_line_error(
        &["coredata", "--fidelity", "2019"],
        "edgebench: --fidelity \"2019\": use --layout 2018-exact (2018) or --layout 2018-referenced",
    );
    assert_one_line_error(
        &["coredata", "--mongo-layout", "nested"],
        "edgebench: --mongo-layout \"nested\": use --layout 2018 (embedded) or --layout 2018-referenced",
    );
    assert_one_line_error(
        &["coredata", "--fidelity", "2018", "--mongo-layout", "embedded"],
        "edgebench: --fidelity 2018 with --mongo-layout embedded: the 2018 client kept readings in their own collection; use --layout 2018-exact",
    );
    assert_one_line_error(
        &["coredata", "--fidelity", "2018", "--layout", "2018"],
        "edgebench: --mongo-layout and --fidelity are the old spellings of --layout; give --layout only",
    );
    assert_one_line_error(
        &["coredata", "--target", "embedded,sqlite", "--baseline", "RedisDB_UDS"],
        "edgebench: --baseline \"RedisDB_UDS\": no such column; use one of RedisDB_Embedded, SQLite_Embedded",
    );
}

#[test]
fn bad_url_is_one_line() {
    assert_one_line_error_prefix(
        &["coredata", "--target", "redis://127.0.0.1:xx"],
        "edgebench: --target: bad target URL \"redis://127.0.0.1:xx\"",
    );
}

#[test]
fn bad_duration_count_bench_and_format_are_one_line() {
    assert_one_line_error(
        &["coredata", "--target", "redis-tcp", "--benchtime", "1parsec"],
        "edgebench: --benchtime: invalid duration \"1parsec\": unknown unit (examples: 1s, 500ms, 1m30s, 2.5s, or 100x for 100 iterations)",
    );
    assert_one_line_error(
        &["coredata", "--target", "redis-tcp", "--count", "0"],
        "edgebench: --count \"0\": expected a whole number from 1 to 1000",
    );
    assert_one_line_error(
        &["coredata", "--target", "redis-tcp", "--format", "md,xml"],
        "edgebench: --format \"xml\": unknown format; use a comma-separated list of md, go, pct, csv, json",
    );
    assert_one_line_error_prefix(
        &["coredata", "--target", "redis-tcp", "--bench", "("],
        "edgebench: --bench \"(\": not a regular expression",
    );
}

#[test]
fn bad_parallel_levels_are_one_line() {
    let tail = "; e.g. --parallel 4 or --parallel 1,2,4,8";
    for (value, reason) in [
        ("0", "\"0\" is not a number of clients from 1 to 256"),
        ("1,257", "\"257\" is not a number of clients from 1 to 256"),
        ("two", "\"two\" is not a number of clients from 1 to 256"),
        ("1,,2", "\"\" is not a number of clients from 1 to 256"),
        ("2,4,2", "2 is given twice"),
    ] {
        assert_one_line_error(
            &["coredata", "--target", "embedded", "--parallel", value],
            &format!("edgebench: --parallel {value:?}: {reason}{tail}"),
        );
    }
    // A level's column is a baseline like any other; a level not asked for is not.
    assert_one_line_error(
        &[
            "coredata",
            "--target",
            "embedded",
            "--parallel",
            "1,2",
            "--baseline",
            "RedisDB_Embedded-4",
        ],
        "edgebench: --baseline \"RedisDB_Embedded-4\": no such column; use one of RedisDB_Embedded, RedisDB_Embedded-2",
    );
}

#[test]
fn parallel_levels_get_a_column_each_and_go_names_like_go_test_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let (code, stdout, stderr) = run_with(
        edgebench()
            .args([
                "coredata",
                "--target",
                "embedded",
                "--parallel",
                "1,2",
                "--benchtime",
                "20x",
                "--baseline",
                "RedisDB_Embedded",
                "--format",
                "go",
                "--out",
            ])
            .arg(&out),
    );
    assert_eq!(code, 0, "{stderr}");
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    let mut names = BENCHMARKS.map(String::from).to_vec();
    names.sort();
    let columns = vec![
        "RedisDB_Embedded".to_string(),
        "RedisDB_Embedded-2".to_string(),
    ];
    // The benchmarks, the store growth of the writes, the ratios: the last is the ratios.
    let (table, ratios) = md.rsplit_once("\n\n").unwrap();
    assert!(table.contains("(store B/op)"), "{md}");
    assert_eq!(table_shape(table), (columns, names));
    assert!(
        ratios.starts_with("| Benchmark | RedisDB_Embedded (x RedisDB_Embedded) | RedisDB_Embedded-2 (x RedisDB_Embedded) |"),
        "{md}"
    );

    // Go text: level 1 unsuffixed, level 2 `-2` (go test -cpu 1,2), N exactly 20 at both.
    let go = std::fs::read_to_string(out.join("bench.txt")).unwrap();
    assert_eq!(stdout, go);
    let lines: Vec<(&str, &str)> = go
        .lines()
        .filter(|l| l.starts_with("Benchmark"))
        .map(|l| {
            let mut f = l.split_whitespace();
            (f.next().unwrap(), f.next().unwrap())
        })
        .collect();
    let want: Vec<(String, &str)> = [""]
        .iter()
        .chain(&["-2"])
        .flat_map(|suffix| {
            BENCHMARKS
                .iter()
                .map(move |b| (format!("BenchmarkRedisDB_Embedded/{b}{suffix}"), "20"))
        })
        .collect();
    let got: Vec<(String, &str)> = lines.iter().map(|(n, c)| (n.to_string(), *c)).collect();
    assert_eq!(got, want);

    // CSV and JSON carry each column's level.
    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    let mut rows = csv.lines();
    assert!(rows
        .next()
        .unwrap()
        .ends_with(",allocs_per_op,parallel,store_bytes_per_op"));
    let levels: Vec<&str> = rows.map(|r| r.rsplit(',').nth(1).unwrap()).collect();
    assert_eq!(levels, [["1"; 10], ["2"; 10]].concat());
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(json["meta"]["parallel"], serde_json::json!([1, 2]));
    let targets = json["targets"].as_array().unwrap();
    let per_level: Vec<(&str, u64, usize)> = targets
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap(),
                t["parallel"].as_u64().unwrap(),
                t["benchmarks"].as_array().unwrap().len(),
            )
        })
        .collect();
    assert_eq!(
        per_level,
        [("RedisDB_Embedded", 1, 10), ("RedisDB_Embedded", 2, 10)]
    );
    let pct = std::fs::read_to_string(out.join("percentiles.md")).unwrap();
    // Ten benchmark rows and the column's connection setup.
    assert_eq!(pct.matches("| RedisDB_Embedded-2 | ").count(), 11, "{pct}");
}

#[test]
fn bad_serve_flags_are_one_line() {
    assert_one_line_error(
        &["serve", "--maxclients", "18446744073709551615"],
        "edgebench: --maxclients \"18446744073709551615\": expected a whole number from 1 to 1000000",
    );
    assert_one_line_error(
        &["serve", "--port", "0"],
        "edgebench: --port \"0\": nothing to listen on: give a TCP port, --tls-port or --unixsocket PATH",
    );
    assert_one_line_error(
        &["serve", "--proto-max-bulk-len", "1kb"],
        "edgebench: --proto-max-bulk-len \"1kb\": expected bytes, e.g. 1048576, 512mb or 1gb (at least 1mb, as redis-server)",
    );
    assert_one_line_error(
        &["serve", "--threads", "0"],
        "edgebench: --threads \"0\": expected a whole number of threads from 1 to 1024",
    );
    for us in ["10001", "1.5", "fast"] {
        assert_one_line_error(
            &["serve", "--busy-poll-us", us],
            &format!("edgebench: --busy-poll-us \"{us}\": expected microseconds from 0 to 10000"),
        );
    }
    assert_one_line_error(
        &["serve", "--dir", "/nonexistent/edgebench"],
        "edgebench: --dir \"/nonexistent/edgebench\": expected an existing directory (create it first)",
    );
    assert_one_line_error(
        &["serve", "--appendonly", "maybe"],
        "edgebench: --appendonly \"maybe\": expected yes or no",
    );
    assert_one_line_error(
        &["serve", "--appendfsync", "sometimes"],
        "edgebench: --appendfsync \"sometimes\": expected always, everysec or no",
    );
    assert_one_line_error(
        &["serve", "--save", "60"],
        "edgebench: --save \"60\": expected \"SECONDS CHANGES [SECONDS CHANGES ...]\", e.g. \"3600 1 300 100\", or \"\" for none",
    );
    assert_one_line_error(
        &["serve", "--dbfilename", "sub/dump.rdb"],
        "edgebench: --dbfilename \"sub/dump.rdb\": expected a file name without a directory (use --dir for that)",
    );
}

/// A bad `--user` rule or ACL file line stops `serve` with one line naming the flag, the
/// file's line and the fix, exit 2.
#[test]
fn bad_acl_users_are_one_line() {
    assert_one_line_error(
        &[
            "serve",
            "--unixsocket",
            "/tmp/unused.sock",
            "--user",
            "bob on bogus",
        ],
        "edgebench: --user \"bob on bogus\": Error in ACL SETUSER modifier 'bogus': Syntax \
         error (rules as ACL SETUSER takes them, e.g. \"alice on >secret ~* +@all\")",
    );
    assert_one_line_error(
        &[
            "serve",
            "--unixsocket",
            "/tmp/unused.sock",
            "--user",
            "bob on \">unclosed",
        ],
        "edgebench: --user \"bob on \\\">unclosed\": unbalanced quotes in the user line (rules \
         as ACL SETUSER takes them, e.g. \"alice on >secret ~* +@all\")",
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("users.acl");
    std::fs::write(&file, "user alice on >pw ~* +@all\nuser bob on +nosuch\n").unwrap();
    let path = file.to_string_lossy().into_owned();
    assert_one_line_error(
        &[
            "serve",
            "--unixsocket",
            "/tmp/unused.sock",
            "--aclfile",
            &path,
            "--requirepass",
            "pw",
        ],
        "edgebench: --requirepass and --aclfile: the ACL file's default user decides \
         (redis-server ignores requirepass beside an aclfile); give the password in the file \
         (user default on >PASSWORD ~* &* +@all) and drop --requirepass",
    );
    assert_one_line_error_prefix(
        &[
            "serve",
            "--unixsocket",
            "/tmp/unused.sock",
            "--aclfile",
            &path,
        ],
        &format!(
            "edgebench: --aclfile {path}: {path}:2: Error in applying operation '+nosuch': \
             Unknown command or category name in ACL."
        ),
    );
}

/// `serve --tls-*`: a file that cannot be read, a key that does not go with the
/// certificate, a flag without --tls-port, an unsupported protocol: one line naming the
/// flag or file and the fix, exit 2, before anything listens.
#[test]
fn bad_tls_flags_are_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let ca = edgebench::transport::certs::PrivateCa::new().unwrap();
    let files = ca.write_files(dir.path()).unwrap();
    let path = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let (cert, key, client_key) = (
        path(&files.server_cert),
        path(&files.server_key),
        path(&files.client_key),
    );
    let missing = path(&dir.path().join("missing.crt"));
    // `serve --port 0 --tls-port 16399 --tls-cert-file CERT --tls-key-file KEY MORE...`
    let serve = |cert: &str, key: &str, more: &[&str]| -> Vec<String> {
        [
            "serve",
            "--port",
            "0",
            "--tls-port",
            "16399",
            "--tls-cert-file",
            cert,
        ]
        .iter()
        .chain(&["--tls-key-file", key])
        .chain(more)
        .map(|a| a.to_string())
        .collect()
    };
    let no_clients = ["--tls-auth-clients", "no"];
    let cases: [(Vec<String>, String, bool); 4] = [
        (
            serve(&missing, &key, &no_clients),
            format!("edgebench: --tls-cert-file {missing}: cannot read it ("),
            true,
        ),
        (
            serve(&cert, &client_key, &no_clients),
            format!(
                "edgebench: --tls-key-file {client_key}: does not go with --tls-cert-file {cert}"
            ),
            true,
        ),
        (
            serve(&cert, &key, &[]),
            "edgebench: --tls-auth-clients yes (the default) needs --tls-ca-cert-file, the CA \
             that signs client certificates; give it, or --tls-auth-clients no"
                .to_string(),
            false,
        ),
        (
            serve(
                &cert,
                &key,
                &["--tls-auth-clients", "no", "--tls-protocols", "TLSv1.1"],
            ),
            "edgebench: --tls-protocols \"TLSv1.1\": TLSv1.1 is not offered".to_string(),
            true,
        ),
    ];
    for (args, message, prefix) in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        if *prefix {
            assert_one_line_error_prefix(&args, message);
        } else {
            assert_one_line_error(&args, message);
        }
    }
    assert_one_line_error(
        &["serve", "--tls-cert-file", &cert],
        "edgebench: --tls-cert-file without --tls-port: give --tls-port PORT to serve TLS clients",
    );
    assert_one_line_error(
        &["serve", "--tls-port", "16399"],
        "edgebench: --tls-port needs --tls-cert-file and --tls-key-file (the server's \
         certificate and its key, PEM)",
    );
    assert_one_line_error(
        &["serve", "--tls-port", "70000"],
        "edgebench: --tls-port \"70000\": expected a TCP port from 1 to 65535 (0: no TLS port)",
    );
    assert_one_line_error(
        &[
            "serve",
            "--tls-port",
            "16399",
            "--tls-auth-clients",
            "sometimes",
        ],
        "edgebench: --tls-auth-clients \"sometimes\": expected yes, no or optional",
    );
}

/// `serve --tls-port` with certificates from edgebench's own private CA: redis-cli --tls
/// with a client certificate is served, one without is refused, and the plain port beside
/// it still answers.
#[test]
fn serve_answers_redis_cli_over_tls_beside_its_plain_socket() {
    let dir = tempfile::tempdir().unwrap();
    let files = edgebench::transport::certs::PrivateCa::new()
        .unwrap()
        .write_files(dir.path())
        .unwrap();
    let sock = dir.path().join("s.sock");
    let port = edgebench::transport::child::free_port()
        .unwrap()
        .to_string();
    let mut child = edgebench()
        .args(["serve", "--port", "0", "--tls-port", &port, "--unixsocket"])
        .arg(&sock)
        .arg("--tls-cert-file")
        .arg(&files.server_cert)
        .arg("--tls-key-file")
        .arg(&files.server_key)
        .arg("--tls-ca-cert-file")
        .arg(&files.ca_cert)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let cli = |with_cert: bool, args: &[&str]| {
        let mut cmd = std::process::Command::new("redis-cli");
        cmd.args(["--tls", "-h", "localhost", "-p", &port, "--cacert"])
            .arg(&files.ca_cert);
        if with_cert {
            cmd.arg("--cert")
                .arg(&files.client_cert)
                .arg("--key")
                .arg(&files.client_key);
        }
        let out = cmd.args(args).output().expect("redis-cli on PATH");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    let mut pong = String::new();
    for _ in 0..200 {
        pong = cli(true, &["PING"]);
        if pong == "PONG" {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    assert_eq!(pong, "PONG");
    assert_eq!(cli(true, &["SET", "k", "over-tls"]), "OK");
    assert_ne!(cli(false, &["GET", "k"]), "over-tls");
    let url = format!("redis+unix://{}", sock.display());
    let mut con = redis::Client::open(url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let v: String = redis::cmd("GET").arg("k").query(&mut con).unwrap();
    assert_eq!(v, "over-tls");
    // SAFETY: kill(2) on the child we spawned and have not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

/// A file serve cannot load stops the start with one line naming it, as redis-server
/// refuses to start rather than serve an empty database over data it could not read.
#[test]
fn serve_refuses_to_start_on_a_file_it_cannot_load() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dump.rdb");
    std::fs::write(&path, b"REDIS0010\xfa\x09redis-ver").unwrap();
    let dir_arg = dir.path().to_str().unwrap();
    let out = edgebench()
        .args(["serve", "--port", "0", "--unixsocket"])
        .arg(dir.path().join("s.sock"))
        .args(["--dir", dir_arg])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "edgebench: {}: cut short or damaged at byte ",
            path.display()
        )),
        "{stderr}"
    );
    assert!(!dir.path().join("s.sock").exists(), "it never listened");
    // The same for a damaged append-only directory.
    let aof = dir.path().join("appendonlydir");
    std::fs::create_dir(&aof).unwrap();
    std::fs::write(aof.join("appendonly.aof.manifest"), "file x seq 1 type q\n").unwrap();
    let out = edgebench()
        .args(["serve", "--port", "0", "--unixsocket"])
        .arg(dir.path().join("s.sock"))
        .args(["--dir", dir_arg, "--appendonly", "yes"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(
        stderr.trim_end(),
        format!(
            "edgebench: {}: line 1: unknown file type `q` (repair the manifest, or move the directory away to start empty)",
            aof.join("appendonly.aof.manifest").display()
        )
    );
}

#[test]
fn missing_redis_server_is_one_line_per_target_and_no_default_targets() {
    let empty = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run_with(
        edgebench()
            .env("PATH", empty.path())
            .env_remove("EDGEBENCH_REDIS_SERVER")
            .args(["coredata", "--target", "redis-tcp", "--out"])
            .arg(empty.path().join("out")),
    );
    assert_eq!(code, 1, "{stderr}");
    let errors: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("redis-server not found on PATH"))
        .collect();
    assert_eq!(errors.len(), 1, "{stderr}");

    // No --target, nothing to spawn and no PostgreSQL answering (port 1): the in-process
    // targets run, with a note for each missing kind.
    let (code, stdout, stderr) = run_with(
        edgebench()
            .env("PATH", empty.path())
            .env_remove("EDGEBENCH_REDIS_SERVER")
            .env_remove("PGHOST")
            .env("PGPORT", "1")
            .args([
                "coredata",
                "--bench",
                "ReadingCount",
                "--benchtime",
                "3x",
                "--out",
            ])
            .arg(empty.path().join("out2")),
    );
    assert_eq!(code, 0, "{stderr}");
    let notes: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("edgebench: note: "))
        .collect();
    assert_eq!(
        notes,
        [
            "edgebench: note: redis-server is not on PATH: no RedisDB_TCP and RedisDB_UDS \
             columns (install redis-server, or set EDGEBENCH_REDIS_SERVER to its path)",
            "edgebench: note: no PostgreSQL answered at 127.0.0.1:1 or \
             /var/run/postgresql:1: no PostgreSQL_TCP or PostgreSQL_UDS column (start \
             PostgreSQL, set PGHOST/PGPORT/PGUSER, or give --target \
             postgres://USER@HOST:PORT/DB)",
        ],
        "{stderr}"
    );
    assert_eq!(
        table_shape(&stdout),
        (
            [
                "Embedded_Direct",
                "RedisDB_Embedded",
                "Embedded_TCP",
                "Embedded_UDS",
                "SQLite_Embedded",
            ]
            .map(String::from)
            .to_vec(),
            vec!["ReadingCount".to_string()]
        )
    );
}

#[test]
fn an_unreachable_target_is_reported_and_the_others_still_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let (code, stdout, stderr) = run_with(
        edgebench()
            .args([
                "coredata",
                "--target",
                "dead=redis://127.0.0.1:1,redis-uds",
                "--bench",
                "Count",
                "--benchtime",
                "20x",
                "--out",
            ])
            .arg(&out),
    );
    assert_eq!(code, 1, "one target failed: {stderr}");
    let dead: Vec<&str> = stderr.lines().filter(|l| l.contains("dead")).collect();
    assert_eq!(dead.len(), 1, "{stderr}");
    assert!(dead[0].contains("cannot connect"), "{stderr}");
    assert_eq!(
        table_shape(&stdout),
        (
            vec!["RedisDB_UDS".to_string()],
            vec!["EventCount".to_string(), "ReadingCount".to_string()]
        )
    );
    let pct = std::fs::read_to_string(out.join("percentiles.md")).unwrap();
    assert!(pct.contains("- dead: "), "{pct}");
}

#[test]
fn a_full_run_writes_every_file_and_benchtomd_reads_its_go_text() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let (code, stdout, stderr) = run_with(
        edgebench()
            .args([
                "coredata",
                "--target",
                "redis-tcp,redis-uds",
                "--benchtime",
                "5x",
                "--count",
                "2",
                "--format",
                "md,go",
                "--out",
            ])
            .arg(&out),
    );
    assert_eq!(code, 0, "{stderr}");
    let mut names = BENCHMARKS.map(String::from).to_vec();
    names.sort();
    let md = std::fs::read_to_string(out.join("results.md")).unwrap();
    assert_eq!(
        table_shape(&md),
        (
            vec!["RedisDB_TCP".to_string(), "RedisDB_UDS".to_string()],
            names
        )
    );
    assert!(stdout.starts_with(&md), "stdout starts with the table");

    // 10 benchmarks × 2 targets × --count 2 Go lines, each with N = 5.
    let go = std::fs::read_to_string(out.join("bench.txt")).unwrap();
    let lines: Vec<&str> = go.lines().filter(|l| l.starts_with("Benchmark")).collect();
    assert_eq!(lines.len(), 40, "{go}");
    assert!(lines
        .iter()
        .all(|l| l.split_whitespace().nth(1) == Some("5")));

    // The figures are measurements, not placeholders: positive, and ordered percentiles.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    for t in json["targets"].as_array().unwrap() {
        for b in t["benchmarks"].as_array().unwrap() {
            for m in b["runs"].as_array().unwrap() {
                let f = |k: &str| m[k].as_f64().unwrap();
                let what = format!("{} {}: {m}", t["name"], b["name"]);
                assert_eq!(f("n"), 5.0, "{what}");
                assert!(f("ns_per_op") > 0.0, "{what}");
                assert!(
                    f("bytes_per_op") > 0.0 && f("allocs_per_op") > 0.0,
                    "{what}"
                );
                assert!(f("p50_ns") > 0.0, "{what}");
                assert!(
                    f("p50_ns") <= f("p90_ns") && f("p90_ns") <= f("p99_ns"),
                    "{what}"
                );
                assert!(
                    f("p99_ns") <= f("p999_ns") && f("p999_ns") <= f("max_ns"),
                    "{what}"
                );
                assert!(!m["histogram"].as_str().unwrap().is_empty(), "{what}");
            }
        }
    }

    let csv = std::fs::read_to_string(out.join("results.csv")).unwrap();
    assert_eq!(csv.lines().count(), 41);
    assert_eq!(json["targets"].as_array().unwrap().len(), 2);
    assert!(out.join("percentiles.md").exists());
    assert_no_temp_files(&out);

    // benchtomd over our own Go text gives the same table (its columns are sorted, and
    // RedisDB_TCP < RedisDB_UDS already).
    let (code, from_go, _) = run(&[
        "report",
        "benchtomd",
        out.join("bench.txt").to_str().unwrap(),
    ]);
    assert_eq!(code, 0);
    assert_eq!(from_go, md);
}

#[test]
fn report_benchtomd_reproduces_the_seed_gist_table() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/seed-gist-bench.txt");
    let (code, stdout, _) = run(&["report", "benchtomd", fixture.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout,
        include_str!("../fixtures/seed-gist-table.md"),
        "the gist's formatted table, number for number"
    );
    // stdin works too.
    let (code, from_stdin, _) = run_with(
        edgebench()
            .args(["report", "benchtomd", "-"])
            .stdin(std::fs::File::open(&fixture).unwrap()),
    );
    assert_eq!(code, 0);
    assert_eq!(from_stdin, stdout);
}

#[test]
fn report_benchtomd_without_benchmark_lines_says_so_and_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let binary = dir.path().join("binary.dat");
    std::fs::write(&binary, [0u8, 159, 146, 150, 0xff, b'\n', 7, 7, 7]).unwrap();
    let prose = dir.path().join("notes.txt");
    std::fs::write(&prose, "goos: linux\nBenchmarking is fun\nPASS\n").unwrap();
    for file in [&binary, &prose] {
        let (code, stdout, stderr) = run(&["report", "benchtomd", file.to_str().unwrap()]);
        assert_eq!(code, 1, "{stderr}");
        assert_eq!(stdout, "");
        assert_eq!(
            stderr,
            format!(
                "edgebench: no Go benchmark lines (BenchmarkName-P  N  T ns/op) in {}: give it \
                 the output of go test -bench or edgebench coredata --format go\n",
                file.display()
            )
        );
    }
    let (code, _, stderr) = run_with(
        edgebench()
            .args(["report", "benchtomd"])
            .stdin(std::fs::File::open(&binary).unwrap()),
    );
    assert_eq!(code, 1);
    assert!(stderr.contains(" in standard input: "), "{stderr}");
}

#[test]
fn ctrl_c_keeps_what_finished_and_stops_the_spawned_server() {
    // SIGTERM (timeout(1), docker stop, systemd) stops a run as Ctrl-C does.
    for signal in [libc::SIGINT, libc::SIGTERM] {
        interrupted_run_keeps_what_finished(signal);
    }
}

fn interrupted_run_keeps_what_finished(signal: libc::c_int) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let mut child = edgebench()
        .args([
            "coredata",
            "--target",
            "redis-uds",
            "--bench",
            "^ReadingCount$|^EventCount$",
            "--benchtime",
            "1s",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;

    // Interrupt once ReadingCount has finished (stderr is not a terminal, so each finished
    // benchmark is one line) and EventCount is under way.
    // A thread keeps reading stderr to the end, so edgebench can report the interruption.
    let (rx, reader) = crate::common::watch_lines(child.stderr.take().unwrap(), |line| {
        line.contains("ReadingCount") && line.contains("ns/op")
    });
    rx.recv_timeout(std::time::Duration::from_secs(60))
        .expect("ReadingCount finished");
    let servers = children_named(pid, "redis-server");
    assert_eq!(servers.len(), 1, "one spawned redis-server");
    // SAFETY: plain kill(2) on our own child.
    unsafe { libc::kill(pid, signal) };
    let status = child.wait().unwrap();
    let seen = reader.join().unwrap();
    assert_eq!(status.code(), Some(130), "signal {signal}: {seen}");
    assert!(
        seen.contains("edgebench: interrupted; keeping the benchmarks that finished"),
        "{seen}"
    );
    assert!(
        seen.contains("(Ctrl-C again to quit at once)"),
        "the first Ctrl-C says what a second one does: {seen}"
    );
    for s in servers {
        assert!(
            !Path::new(&format!("/proc/{s}")).exists(),
            "redis-server {s} still running"
        );
    }
    // The results files are whole and keep ReadingCount, not the interrupted EventCount.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    let benches: Vec<&str> = json["targets"][0]["benchmarks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["name"].as_str().unwrap())
        .collect();
    assert_eq!(benches, ["ReadingCount"]);
    assert_no_temp_files(&out);
}

/// (column names, row names) of a benchtomd table.
/// The columns and rows of the first table of `md` (the store table may follow it).
fn table_shape(md: &str) -> (Vec<String>, Vec<String>) {
    let mut lines = md
        .lines()
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with('|'));
    let header = lines.next().unwrap_or_default();
    let columns = header
        .split('|')
        .map(str::trim)
        .filter(|c| c.ends_with("(micro/op)"))
        .map(|c| c.trim_end_matches("(micro/op)").trim().to_string())
        .collect();
    let rows = lines
        .skip(1)
        .map(|l| l.split('|').nth(1).unwrap_or_default().trim().to_string())
        .collect();
    (columns, rows)
}

fn assert_no_temp_files(dir: &Path) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = Format::all()
        .iter()
        .map(|f| f.exporter().file_name().to_string())
        .chain([edgebench::report::html::FILE.to_string()])
        .collect();
    expected.sort();
    assert_eq!(names, expected, "every results file, and no temporary file");
}

/// Pids of live processes named `name` whose parent is `parent`.
pub(crate) fn children_named(parent: i32, name: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // /proc/PID/stat: "pid (comm) state ppid ..."
        let Some((comm_part, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let comm = comm_part.split_once('(').map(|(_, c)| c).unwrap_or("");
        let ppid = rest
            .split_whitespace()
            .nth(1)
            .and_then(|p| p.parse::<i32>().ok());
        if comm == name && ppid == Some(parent) {
            found.push(pid);
        }
    }
    found
}

/// The threads of process `pid` named `name` (Linux: /proc/PID/task/*/comm; names are cut at
/// 15 bytes).
fn threads_named(pid: u32, name: &str) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter(|t| {
            let comm = std::fs::read_to_string(t.as_ref().unwrap().path().join("comm"));
            comm.is_ok_and(|c| c.trim_end() == &name[..name.len().min(15)])
        })
        .count()
}

#[test]
fn serve_runs_its_connections_on_threads_workers_and_stops_on_sigterm() {
    let cores = std::thread::available_parallelism().unwrap().get();
    for (threads, want) in [(Some("1"), 1), (Some("3"), 3), (None, cores)] {
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("s.sock");
        let mut cmd = edgebench();
        cmd.args(["serve", "--port", "0", "--unixsocket"])
            .arg(&sock)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(t) = threads {
            cmd.args(["--threads", t]);
        }
        let mut child = cmd.spawn().unwrap();
        let url = format!("redis+unix://{}", sock.display());
        let mut con = None;
        for _ in 0..200 {
            if let Ok(c) = redis::Client::open(url.as_str()).unwrap().get_connection() {
                con = Some(c);
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        let mut con = con.expect("edgebench serve answers on its socket");
        let pong: String = redis::cmd("PING").query(&mut con).unwrap();
        assert_eq!(pong, "PONG");
        // A thread takes its name when it first runs, so give late starters a moment; a count
        // above `want` fails at once.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while threads_named(child.id(), "edgebench-serve") < want
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        assert_eq!(
            threads_named(child.id(), "edgebench-serve"),
            want,
            "--threads {threads:?}"
        );
        drop(con);
        // SAFETY: kill(2) on the child we spawned and have not reaped.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "--threads {threads:?}");
    }
}

/// A client inside a script that never ends does not keep `serve` alive past SIGTERM
/// (redis-server exits at once): the process ends within the drain's bound.
#[test]
fn serve_stops_on_sigterm_while_a_script_loops_forever() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("s.sock");
    let mut child = edgebench()
        .args(["serve", "--port", "0", "--unixsocket"])
        .arg(&sock)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stream = None;
    for _ in 0..200 {
        if let Ok(s) = std::os::unix::net::UnixStream::connect(&sock) {
            stream = Some(s);
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    let mut stream = stream.expect("edgebench serve listens on its socket");
    let script = "while true do end";
    write!(
        stream,
        "*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n",
        script.len()
    )
    .unwrap();
    // The script is running once another client's command meets BUSY or waits; a moment is
    // enough for it to start.
    std::thread::sleep(std::time::Duration::from_millis(300));
    // SAFETY: kill(2) on the child we spawned and have not reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert_eq!(
        status.and_then(|s| s.code()),
        Some(0),
        "serve still ran 20 s after SIGTERM"
    );
    drop(stream);
}

#[test]
fn a_terminal_gets_a_progress_bar_with_an_eta_and_a_log_gets_lines() {
    let dir = tempfile::tempdir().unwrap();
    // Rounds of 100 ms: indicatif redraws at most 20 times a second, and each round's status
    // is then on screen long enough to be drawn.
    let args = "coredata --target embedded --bench 'ReadingCount|EventCount' --benchtime 100ms \
                --count 3 --out";
    // A log: the finished benchmarks, one line each, and no bar.
    let log = edgebench()
        .args(shell_words(args))
        .arg(dir.path().join("log"))
        .output()
        .unwrap();
    assert!(log.status.success());
    let stderr = String::from_utf8_lossy(&log.stderr);
    assert!(!stderr.contains("benchmark runs"), "{stderr}");
    assert_eq!(stderr.matches(" ns/op").count(), 2, "{stderr}");
    // A terminal (script(1) gives the run a pseudo-terminal): the bar counts the 2 × 3
    // repetitions, shows the benchmark and round and an ETA, and the lines still stay.
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("skipped: script(1) (util-linux) is not installed");
        return;
    }
    let command = format!(
        "{} {args} {}",
        cargo_bin("edgebench").display(),
        dir.path().join("tty").display()
    );
    let tty = crate::common::child("script")
        .args(["-qfec", &command, "/dev/null"])
        .output()
        .unwrap();
    assert!(tty.status.success());
    let screen = String::from_utf8_lossy(&tty.stdout);
    // indicatif redraws at most 20 times a second, so which rounds are drawn depends on
    // timing; that each benchmark's rounds are, behind a bar counting the six, does not.
    for wanted in [
        "/6 benchmark runs ETA",
        "ReadingCount run ",
        "EventCount run ",
    ] {
        assert!(screen.contains(wanted), "{wanted}: {screen}");
    }
    assert_eq!(screen.matches(" ns/op").count(), 2, "{screen}");
}

/// Splits a command line as a POSIX shell would, for the quoting used in these tests.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let (mut word, mut quoted) = (String::new(), false);
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            _ => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

/// SHUTDOWN while a script runs: refused with BUSY unless NOSAVE (as redis-server 7.0), and
/// NOSAVE stops the script and the server; what the script wrote before it was stopped is
/// not in the append-only file, so the restart has the state before the script.
#[test]
fn shutdown_nosave_stops_a_running_script_and_leaves_its_writes_out() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("s.sock");
    let start = || {
        edgebench()
            .args(["serve", "--port", "0", "--unixsocket"])
            .arg(&sock)
            .arg("--dir")
            .arg(dir.path())
            .args(["--appendonly", "yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let connect = || {
        let url = format!("redis+unix://{}", sock.display());
        for _ in 0..400 {
            if let Ok(c) = redis::Client::open(url.as_str()).unwrap().get_connection() {
                return c;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        panic!("edgebench serve does not answer on {}", sock.display());
    };
    let mut child = start();
    let mut con = connect();
    let _: () = redis::cmd("SET")
        .arg("before")
        .arg(1)
        .query(&mut con)
        .unwrap();
    let _: () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("busy-reply-threshold")
        .arg(100)
        .query(&mut con)
        .unwrap();
    let mut stream = std::os::unix::net::UnixStream::connect(&sock).unwrap();
    let script = "redis.call('SET', 'half', 1) while true do end";
    write!(
        stream,
        "*3\r\n$4\r\nEVAL\r\n${}\r\n{script}\r\n$1\r\n0\r\n",
        script.len()
    )
    .unwrap();
    // Past busy-reply-threshold, other clients get BUSY; then SHUTDOWN without NOSAVE too.
    let mut admin = connect();
    while redis::cmd("PING").query::<String>(&mut admin).is_ok() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let refused = redis::cmd("SHUTDOWN").query::<()>(&mut admin).unwrap_err();
    assert_eq!(
        refused.detail(),
        Some("Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
    );
    let _ = redis::cmd("SHUTDOWN").arg("NOSAVE").query::<()>(&mut admin);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let _ = std::fs::remove_file(&sock);
    let mut again = start();
    let mut con = connect();
    let before: Option<i64> = redis::cmd("GET").arg("before").query(&mut con).unwrap();
    let half: Option<i64> = redis::cmd("GET").arg("half").query(&mut con).unwrap();
    assert_eq!((before, half), (Some(1), None));
    // SAFETY: kill(2) on the child we spawned and have not reaped.
    unsafe { libc::kill(again.id() as i32, libc::SIGTERM) };
    assert_eq!(again.wait().unwrap().code(), Some(0));
}

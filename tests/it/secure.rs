//! Secure Redis targets end to end against real redis-servers: memtier's TLS flags on `kv`, a
//! `rediss://` target, spawned `redis-tcp?tls=yes&user=…&password=…` servers holding what the
//! load wrote, replicas of a TLS and ACL primary, redis-server's own `WRONGPASS` for a wrong
//! password, and the one-line refusals (exit 2) of bad TLS flags.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Parser;
use edgebench::kv::{KvArgs, KvConfig};
use edgebench::store::redis::spawn::{Listen, RedisServer, ServerOptions};
use edgebench::target::{Endpoint, RedisReach};
use edgebench::transport::certs::{CertFiles, PrivateCa};
use edgebench::transport::child::{die_with_parent, free_port, stop};
use edgebench::transport::{connect_with, Access, Credentials, ServerSecurity, TlsOptions};

use crate::common;

fn edgebench() -> Command {
    common::edgebench()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run edgebench")
}

/// A redis-server this test starts on a free port, TLS only, with certificates of a CA the
/// test made (`edgebench::transport::certs`); clients must show a certificate of that CA
/// (redis-server's default `tls-auth-clients yes`), and the password `pw`. Stopped on drop.
struct TlsRedis {
    child: Child,
    port: u16,
    files: CertFiles,
    _dir: tempfile::TempDir,
}

impl TlsRedis {
    fn start() -> TlsRedis {
        common::require_redis_server();
        let dir = tempfile::tempdir().unwrap();
        let files = PrivateCa::new().unwrap().write_files(dir.path()).unwrap();
        let port = free_port().unwrap();
        let mut cmd = Command::new("redis-server");
        cmd.args(["--port", "0", "--tls-port", &port.to_string()])
            .arg("--tls-cert-file")
            .arg(&files.server_cert)
            .arg("--tls-key-file")
            .arg(&files.server_key)
            .arg("--tls-ca-cert-file")
            .arg(&files.ca_cert)
            .args(["--save", "", "--appendonly", "no", "--bind", "127.0.0.1"])
            .args(["--requirepass", "pw"])
            .arg("--dir")
            .arg(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        die_with_parent(&mut cmd);
        let child = cmd.spawn().expect("start redis-server");
        let server = TlsRedis {
            child,
            port,
            files,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while server.try_connect().is_err() {
            assert!(
                Instant::now() < deadline,
                "the TLS redis-server did not answer"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    fn access(&self) -> Access {
        Access {
            tls: Some(TlsOptions::private(
                &self.files.ca_cert,
                &self.files.client_cert,
                &self.files.client_key,
            )),
            credentials: Some(Credentials {
                user: None,
                password: "pw".to_string(),
            }),
        }
    }

    fn try_connect(&self) -> redis::RedisResult<redis::Connection> {
        let mut conn = connect_with(
            &Endpoint::tcp("127.0.0.1", self.port),
            &self.access(),
            Duration::from_secs(1),
        )?;
        redis::cmd("PING").exec(&mut conn)?;
        Ok(conn)
    }

    fn connect(&self) -> redis::Connection {
        self.try_connect().expect("a redis-rs TLS client connects")
    }

    fn path(p: &Path) -> String {
        p.display().to_string()
    }
}

impl Drop for TlsRedis {
    fn drop(&mut self) {
        stop(&mut self.child, Duration::from_secs(2));
    }
}

fn dbsize(conn: &mut redis::Connection) -> u64 {
    redis::cmd("DBSIZE").query(conn).unwrap()
}

/// `edgebench kv` filling `memtier-MIN` to `memtier-MAX` once each, with `extra` flags
/// (memtier's 4 threads of 50 connections unless they say otherwise).
fn populate(min: u32, max: u32, extra: &[&str]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = edgebench();
    cmd.current_dir(dir.path())
        .args(["kv", "--key-pattern=P:P", "--ratio=1:0", "-n", "allkeys"])
        .arg(format!("--key-minimum={min}"))
        .arg(format!("--key-maximum={max}"))
        .arg("--hide-histogram")
        .args(extra);
    run(&mut cmd)
}

#[test]
fn kv_with_memtiers_tls_flags_fills_a_private_tls_redis_server() {
    let server = TlsRedis::start();
    let port = server.port.to_string();
    let (ca, cert, key) = (
        TlsRedis::path(&server.files.ca_cert),
        TlsRedis::path(&server.files.client_cert),
        TlsRedis::path(&server.files.client_key),
    );
    let out = populate(
        1,
        300,
        &[
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "--tls",
            "--cacert",
            &ca,
            "--cert",
            &cert,
            "--key",
            &key,
            "--sni",
            "localhost",
            "--tls-protocols",
            "TLSv1.3",
            "-a",
            "pw",
            // 100 connections handshaking and writing at once: a TLS stream holds a
            // record's tail until it is flushed, and with many connections a run whose
            // writes were not flushed never ended.
            "-c",
            "50",
            "-t",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("ALL STATS\n"));
    let mut conn = server.connect();
    assert_eq!(dbsize(&mut conn), 300);

    // -u rediss:// implies --tls; --tls-skip-verify trusts no CA at all.
    let url = format!("rediss://:pw@127.0.0.1:{port}");
    let out = populate(
        301,
        400,
        &[
            "-c",
            "2",
            "-t",
            "1",
            "-u",
            &url,
            "--tls-skip-verify",
            "--cert",
            &cert,
            "--key",
            &key,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(dbsize(&mut conn), 400);
    let set_calls: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut conn)
        .unwrap();
    assert!(set_calls.contains("cmdstat_set:calls=400,"), "{set_calls}");

    // Without a client certificate redis-server (tls-auth-clients yes) refuses the
    // handshake, and the run says so in one line.
    let out = populate(1, 10, &["-c", "1", "-t", "1", "-u", &url, "--cacert", &ca]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(dbsize(&mut conn), 400);
}

#[test]
fn a_rediss_url_target_runs_kv_and_coredata_with_its_column() {
    let server = TlsRedis::start();
    let target = format!(
        "rediss://:pw@127.0.0.1:{}?cacert={}&cert={}&key={}",
        server.port,
        TlsRedis::path(&server.files.ca_cert),
        TlsRedis::path(&server.files.client_cert),
        TlsRedis::path(&server.files.client_key),
    );
    let out = populate(1, 250, &["-c", "2", "-t", "1", "--target", &target]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "edgebench kv: RedisDB_TCP+TLS+AUTH at rediss://:…@127.0.0.1:{}",
            server.port
        )),
        "{stderr}"
    );
    let mut conn = server.connect();
    assert_eq!(dbsize(&mut conn), 250);

    let dir = tempfile::tempdir().unwrap();
    let out = run(edgebench().current_dir(dir.path()).args([
        "coredata",
        "--target",
        &target,
        "--bench",
        "EventCount",
        "--benchtime",
        "20x",
    ]));
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        stdout.contains("| Benchmark | RedisDB_TCP+TLS+AUTH (micro/op) |"),
        "{stdout}"
    );
    let stats: String = redis::cmd("INFO")
        .arg("commandstats")
        .query(&mut conn)
        .unwrap();
    let zcards: u64 = stats
        .lines()
        .find_map(|l| l.strip_prefix("cmdstat_zcard:calls="))
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no ZCARD reached the TLS server: {stats}"));
    assert!(zcards >= 20, "{stats}");
    // The benchmarks scrub their own keys only.
    assert_eq!(dbsize(&mut conn), 250);
}

/// A kv config from memtier's flags.
fn kv_config(args: &[&str]) -> KvConfig {
    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        kv: KvArgs,
    }
    let cli = Cli::try_parse_from(std::iter::once("kv").chain(args.iter().copied())).unwrap();
    KvConfig::from_args_with_entropy(&cli.kv, 7).unwrap()
}

#[test]
fn spawned_tls_and_acl_servers_take_the_kv_load_and_hold_its_keys() {
    common::require_redis_server();
    let cfg = kv_config(&[
        "--key-pattern=P:P",
        "--ratio=1:0",
        "-n",
        "allkeys",
        "--key-minimum=1",
        "--key-maximum=500",
        "-c",
        "2",
        "-t",
        "1",
    ]);
    for (item, column) in [
        ("redis-tcp?tls=yes", "RedisDB_TCP+TLS"),
        (
            "redis-tcp?tls=yes&user=u&password=pw",
            "RedisDB_TCP+TLS+ACL",
        ),
        ("redis-uds?user=u&password=pw", "RedisDB_UDS+ACL"),
        // The engine behind edgebench's own server, secured the same way.
        ("embedded-tcp?tls=yes", "Embedded_TCP+TLS"),
        (
            "embedded-tcp?tls=yes&user=u&password=pw",
            "Embedded_TCP+TLS+ACL",
        ),
        ("embedded-uds?user=u&password=pw", "Embedded_UDS+ACL"),
    ] {
        let target = common::start(item);
        assert_eq!(target.name(), column);
        let reach = target.redis_reach().unwrap();
        let result = edgebench::kv::load::run(
            &cfg,
            &reach,
            Arc::new(AtomicBool::new(false)),
            &Arc::new(Default::default()),
            &mut |_| {},
        )
        .unwrap_or_else(|e| panic!("{item}: {e}"));
        assert_eq!(result.stopped, None, "{item}");
        let RedisReach::Socket(endpoint, access) = reach else {
            panic!("{item} is a socket target");
        };
        let timeout = Duration::from_secs(5);
        let mut conn = connect_with(&endpoint, &access, timeout).unwrap();
        assert_eq!(dbsize(&mut conn), 500, "{item}");
        if access.credentials.is_none() {
            continue;
        }
        let whoami: String = redis::cmd("ACL").arg("WHOAMI").query(&mut conn).unwrap();
        assert_eq!(whoami, "u");
        // Without credentials: redis-server's NOAUTH.
        let anonymous = Access {
            credentials: None,
            ..access.clone()
        };
        let mut conn = connect_with(&endpoint, &anonymous, timeout).unwrap();
        let refused = redis::cmd("DBSIZE").query::<u64>(&mut conn).unwrap_err();
        assert_eq!(refused.code(), Some("NOAUTH"), "{refused}");
        // The default user has the password and, as EdgeX leaves it, no dangerous commands.
        let default = Access {
            credentials: Some(Credentials {
                user: None,
                password: "pw".to_string(),
            }),
            ..access.clone()
        };
        let mut conn = connect_with(&endpoint, &default, timeout).unwrap();
        assert_eq!(dbsize(&mut conn), 500);
        let refused = redis::cmd("FLUSHALL").exec(&mut conn).unwrap_err();
        assert_eq!(refused.code(), Some("NOPERM"), "{refused}");
        assert_eq!(dbsize(&mut conn), 500);
    }
}

#[test]
fn a_replica_of_a_tls_acl_primary_replicates_over_tls() {
    common::require_redis_server();
    let target = common::start("redis-tcp?tls=yes&user=u&password=pw&replicas=1&wait=1");
    let RedisReach::Socket(endpoint, access) = target.redis_reach().unwrap() else {
        panic!("a socket target");
    };
    let mut conn = connect_with(&endpoint, &access, Duration::from_secs(5)).unwrap();
    redis::cmd("SET").arg("k").arg("v").exec(&mut conn).unwrap();
    let acked: u64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query(&mut conn)
        .unwrap();
    assert_eq!(acked, 1);
    let info: String = redis::cmd("INFO")
        .arg("replication")
        .query(&mut conn)
        .unwrap();
    assert!(info.contains("connected_slaves:1"), "{info}");
    assert!(info.contains("state=online"), "{info}");
}

#[test]
fn a_wrong_password_is_wrongpass_tls_to_a_plain_port_fails_and_the_other_targets_run() {
    common::require_redis_server();
    let security = ServerSecurity {
        tls: false,
        user: Some(Credentials {
            user: Some("u".to_string()),
            password: "right".to_string(),
        }),
    };
    let server = RedisServer::spawn_secured(Listen::Tcp, &ServerOptions::default(), &security)
        .unwrap_or_else(|e| panic!("{e}"));
    let Endpoint::Tcp { port, .. } = server.endpoint() else {
        panic!("a TCP server");
    };
    let dir = tempfile::tempdir().unwrap();
    let out = run(edgebench().current_dir(dir.path()).args([
        "coredata",
        "--target",
        &format!(
            "bad=redis://u:wrong@127.0.0.1:{port},good=redis://u:right@127.0.0.1:{port},\
             plain=rediss://u:right@127.0.0.1:{port}"
        ),
        "--bench",
        "EventCount",
        "--benchtime",
        "20x",
    ]));
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "one target failed: {stderr}");
    let bad: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("target bad"))
        .collect();
    assert_eq!(
        bad,
        [format!(
            "edgebench: target bad (redis://u@127.0.0.1:{port}): cannot connect: WRONGPASS \
             invalid username-password pair or user is disabled. (check the user and password \
             the target gives: redis[s]://USER:PASSWORD@HOST:PORT)"
        )],
        "{stderr}"
    );
    // TLS to a plain-text port: the handshake never comes, and the target says so.
    let plain: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("target plain"))
        .collect();
    assert_eq!(
        plain,
        [format!(
            "edgebench: target plain (rediss://u@127.0.0.1:{port}): cannot connect: no TLS \
             handshake within 2000 ms (does the server speak TLS on that port? a plain-text \
             port never answers one)"
        )],
        "{stderr}"
    );
    assert!(
        stdout.contains("| Benchmark | good (micro/op) |"),
        "{stdout}"
    );
}

#[test]
fn bad_tls_flags_are_one_line_naming_the_flag_the_file_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let files = PrivateCa::new().unwrap().write_files(dir.path()).unwrap();
    let missing = dir.path().join("missing-ca.crt");
    let cert = TlsRedis::path(&files.client_cert);
    let cases: [(Vec<String>, String); 3] = [
        (
            vec!["--tls".into(), "--cacert".into(), TlsRedis::path(&missing)],
            format!(
                "edgebench: --cacert {}: No such file or directory (os error 2) (give the PEM \
                 file of the CA that signed the server's certificate)",
                missing.display()
            ),
        ),
        (
            vec![
                "--tls".into(),
                "--cert".into(),
                cert.clone(),
                "--key".into(),
                TlsRedis::path(&files.server_key),
            ],
            format!(
                "edgebench: --key {}: does not go with --cert: {} (give the key the client \
                 certificate was made with)",
                files.server_key.display(),
                "KEYMISMATCH"
            ),
        ),
        (
            vec![
                "-u".into(),
                "rediss://h".into(),
                "--tls-protocols".into(),
                "SSLv3".into(),
            ],
            "edgebench: invalid --tls-protocols \"SSLv3\": unknown protocol \"SSLv3\": use \
             TLSv1.2 and TLSv1.3 (space- or comma-separated)"
                .to_string(),
        ),
    ];
    for (args, want) in cases {
        let out = run(edgebench().current_dir(dir.path()).arg("kv").args(&args));
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        if want.contains("KEYMISMATCH") {
            let (head, tail) = want.split_once("KEYMISMATCH").unwrap();
            assert!(
                stderr.starts_with(head) && stderr.trim_end().ends_with(tail),
                "{stderr}"
            );
        } else {
            assert_eq!(stderr.trim_end(), want);
        }
    }
}

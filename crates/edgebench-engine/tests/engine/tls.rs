//! TLS on the RESP server (redis-server's `tls-port`): clients served on both I/O models and
//! across the event loop's hand-offs; who is refused (no certificate, another CA's, plain
//! text, a protocol the server does not offer) while others go on being served; 1,000
//! half-open handshakes; settings that cannot work, refused at load with the file named;
//! and redis-cli's own `--tls`.

use std::time::Duration;

use edgebench_engine::server::tls::{AuthClients, TlsAcceptor, TlsSettings};
use edgebench_engine::server::{Address, IoModel, ServerConfig};
use rustls::version::{TLS12, TLS13};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::served::{resp, Conn, TestServer, REPLY_TIMEOUT};
use crate::support::tls::{client_config, connect, Certs, Identity};

fn tls_addr(server: &TestServer) -> std::net::SocketAddr {
    match server.endpoint {
        Address::Tls(addr) => addr,
        ref other => panic!("not a TLS endpoint: {other}"),
    }
}

/// A client that must be refused: its handshake fails, or its first request is answered
/// by a closed connection (TLS 1.3 sends the server's verdict on a client certificate after
/// the client's side of the handshake is done), never by a reply.
async fn assert_refused(connected: std::io::Result<Conn>) {
    let Ok(mut conn) = connected else { return };
    // The write itself may fail once the server's alert is in.
    if conn.0.write_all(b"PING\r\n").await.is_err() {
        return;
    }
    let _ = conn.0.flush().await;
    conn.expect_closed().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_clients_are_served_on_both_io_models_and_across_hand_offs() {
    let certs = Certs::new();
    for io in [IoModel::Loop, IoModel::Tasks] {
        for versions in [&[&TLS13][..], &[&TLS12][..]] {
            let config = ServerConfig {
                io,
                ..ServerConfig::default()
            };
            let client = client_config(&certs, Identity::Client, versions);
            let server =
                TestServer::start_tls(config, &certs.settings(AuthClients::Yes), client).await;
            let mut a = server.connect().await;
            a.check(
                b"SET k v\r\nGET k\r\n*1\r\n$4\r\nPING\r\nINCR n\r\n",
                b"+OK\r\n$1\r\nv\r\n+PONG\r\n:1\r\n",
            )
            .await;

            // 1,000 requests in one write, every reply in order.
            let pipeline = b"INCR p\r\n".repeat(1000);
            let expected: Vec<u8> = (1..=1000)
                .flat_map(|i| format!(":{i}\r\n").into_bytes())
                .collect();
            a.check(&pipeline, &expected).await;

            // A 10 MB value arriving in pieces, and read back: a reply far larger than what
            // a TLS session buffers, so most of it waits for the socket.
            let value = vec![b'x'; 10 * 1024 * 1024];
            for piece in resp(&[b"SET", b"big", &value]).chunks(3 * 1024 * 1024 + 7) {
                a.send(piece).await;
            }
            a.expect(b"+OK\r\n").await;
            a.send(b"GET big\r\n").await;
            a.expect(b"$10485760\r\n").await;
            assert_eq!(a.read_n(value.len() + 2).await.len(), value.len() + 2);

            // A BLPOP that waits moves to a task (with its TLS session), is served by a push
            // from another client, and goes on answering (back on its loop).
            let mut blocked = server.connect().await;
            blocked.send(b"BLPOP jobs 0\r\n").await;
            server.until_blocked(1).await;
            a.check(b"RPUSH jobs j1\r\n", b":1\r\n").await;
            blocked.expect(b"*2\r\n$4\r\njobs\r\n$2\r\nj1\r\n").await;
            for _ in 0..3 {
                blocked.check(b"PING\r\n", b"+PONG\r\n").await;
            }

            // A subscriber over TLS gets what a plain PUBLISH sends.
            let mut sub = server.connect().await;
            sub.check(
                b"SUBSCRIBE news\r\n",
                b"*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n",
            )
            .await;
            blocked.check(b"PUBLISH news hi\r\n", b":1\r\n").await;
            sub.expect(b"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n")
                .await;

            a.check(b"QUIT\r\n", b"+OK\r\n").await;
            a.expect_closed().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_the_settings_refuse_are_closed_and_others_are_still_served() {
    let certs = Certs::new();
    let both = [&TLS13, &TLS12];
    for io in [IoModel::Loop, IoModel::Tasks] {
        let config = ServerConfig {
            io,
            ..ServerConfig::default()
        };
        // tls-auth-clients yes: a certificate the CA signed, nothing else.
        let good = client_config(&certs, Identity::Client, &both);
        let server =
            TestServer::start_tls(config.clone(), &certs.settings(AuthClients::Yes), good).await;
        let addr = tls_addr(&server);
        let mut first = server.connect().await;
        first.check(b"SET seen 1\r\n", b"+OK\r\n").await;
        for identity in [Identity::Anonymous, Identity::Stranger] {
            for versions in [&[&TLS13][..], &[&TLS12][..]] {
                let config = client_config(&certs, identity, versions);
                assert_refused(connect(addr, config).await).await;
            }
        }
        // A plain-text client on the TLS port: an alert or a close, never a reply.
        let mut plain = tokio::net::TcpStream::connect(addr).await.unwrap();
        plain.write_all(b"PING\r\n").await.unwrap();
        let mut got = Vec::new();
        let read = tokio::time::timeout(REPLY_TIMEOUT, plain.read_to_end(&mut got))
            .await
            .expect("the server keeps a plain-text client on its TLS port");
        assert!(
            !got.windows(5).any(|w| w == b"+PONG"),
            "a plain-text client was answered: {read:?} {got:?}"
        );
        first.check(b"GET seen\r\n", b"$1\r\n1\r\n").await;
        let mut later = server.connect().await;
        later.check(b"GET seen\r\n", b"$1\r\n1\r\n").await;

        // optional: no certificate is let in; another CA's still is not.
        let anonymous = client_config(&certs, Identity::Anonymous, &both);
        let server = TestServer::start_tls(
            config.clone(),
            &certs.settings(AuthClients::Optional),
            anonymous,
        )
        .await;
        server
            .connect()
            .await
            .check(b"PING\r\n", b"+PONG\r\n")
            .await;
        let stranger = client_config(&certs, Identity::Stranger, &both);
        assert_refused(connect(tls_addr(&server), stranger).await).await;

        // no: no certificate asked for, no CA needed.
        let settings = TlsSettings {
            ca_cert_file: None,
            ..certs.settings(AuthClients::No)
        };
        let anonymous = client_config(&certs, Identity::Anonymous, &both);
        let server = TestServer::start_tls(config.clone(), &settings, anonymous).await;
        server
            .connect()
            .await
            .check(b"PING\r\n", b"+PONG\r\n")
            .await;

        // tls-protocols TLSv1.2: a client that speaks only 1.3 fails its handshake.
        let settings = TlsSettings {
            protocols: Some("TLSv1.2".into()),
            ..certs.settings(AuthClients::Yes)
        };
        let only12 = client_config(&certs, Identity::Client, &[&TLS12]);
        let server = TestServer::start_tls(config, &settings, only12).await;
        let only13 = client_config(&certs, Identity::Client, &[&TLS13]);
        assert!(connect(tls_addr(&server), only13).await.is_err());
        server
            .connect()
            .await
            .check(b"PING\r\n", b"+PONG\r\n")
            .await;
    }
}

/// 1,000 connections that start a handshake and never finish it (half a ClientHello, or
/// nothing at all) hold nothing the server needs: a normal client is served beside them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_half_open_handshakes_do_not_stop_a_normal_client() {
    let certs = Certs::new();
    for io in [IoModel::Loop, IoModel::Tasks] {
        let config = ServerConfig {
            io,
            ..ServerConfig::default()
        };
        let client = client_config(&certs, Identity::Client, &[&TLS13, &TLS12]);
        let server = TestServer::start_tls(config, &certs.settings(AuthClients::Yes), client).await;
        let addr = tls_addr(&server);
        let mut idle = Vec::new();
        for i in 0..1000 {
            let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
            if i % 2 == 0 {
                // A handshake record header announcing 512 bytes, and 3 of them.
                stream
                    .write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01])
                    .await
                    .unwrap();
            }
            idle.push(stream);
        }
        let mut normal = server.connect().await;
        normal
            .check(b"SET k v\r\nGET k\r\n", b"+OK\r\n$1\r\nv\r\n")
            .await;
        // They are still connected, waiting: none was dropped to make room.
        let mut byte = [0u8; 1];
        let waiting = tokio::time::timeout(Duration::from_millis(50), idle[0].read(&mut byte));
        assert!(waiting.await.is_err(), "a half-open handshake was closed");
        drop(idle);
        normal.check(b"PING\r\n", b"+PONG\r\n").await;
    }
}

#[test]
fn settings_that_cannot_work_are_refused_with_the_file_and_the_fix() {
    let certs = Certs::new();
    let good = certs.settings(AuthClients::Yes);
    let error = |settings: TlsSettings| TlsAcceptor::load(&settings).unwrap_err().to_string();
    assert!(TlsAcceptor::load(&good).is_ok());

    let missing = certs.dir.path().join("missing.crt");
    let text = error(TlsSettings {
        cert_file: missing.clone(),
        ..good.clone()
    });
    assert!(
        text.starts_with(&format!(
            "--tls-cert-file {}: cannot read it",
            missing.display()
        )),
        "{text}"
    );

    let text = error(TlsSettings {
        key_file: certs.client_key.clone(),
        ..good.clone()
    });
    assert!(
        text.contains("does not go with --tls-cert-file") && text.contains("server.crt"),
        "{text}"
    );

    let text = error(TlsSettings {
        key_file: certs.server_cert.clone(),
        ..good.clone()
    });
    assert!(
        text.starts_with(&format!(
            "--tls-key-file {}: no private key in it",
            certs.server_cert.display()
        )),
        "{text}"
    );

    let text = error(TlsSettings {
        cert_file: certs.server_key.clone(),
        ..good.clone()
    });
    assert!(text.contains("holds no certificate"), "{text}");

    let text = error(TlsSettings {
        ca_cert_file: None,
        ..good.clone()
    });
    assert!(text.contains("needs --tls-ca-cert-file"), "{text}");

    for (protocols, says) in [
        ("TLSv1 TLSv1.2", "TLSv1 is not offered"),
        ("TLSv1.4", "unknown protocol \"TLSv1.4\""),
        ("", "names no protocol"),
    ] {
        let text = error(TlsSettings {
            protocols: Some(protocols.into()),
            ..good.clone()
        });
        assert!(text.contains(says), "{protocols:?}: {text}");
        assert!(!text.contains('\n'), "{text}");
    }
}

/// redis-cli's own TLS (OpenSSL) against the server's (rustls): a client other than ours.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_cli_tls_sets_and_gets() {
    let certs = Certs::new();
    let client = client_config(&certs, Identity::Client, &[&TLS13, &TLS12]);
    let server = TestServer::start_tls(
        ServerConfig::default(),
        &certs.settings(AuthClients::Yes),
        client,
    )
    .await;
    let port = tls_addr(&server).port().to_string();
    let files = (
        certs.ca.clone(),
        certs.client_cert.clone(),
        certs.client_key.clone(),
    );
    let cli = move |args: &[&str]| {
        let out = std::process::Command::new("redis-cli")
            .args(["--tls", "-h", "127.0.0.1", "-p", &port, "--cacert"])
            .arg(&files.0)
            .arg("--cert")
            .arg(&files.1)
            .arg("--key")
            .arg(&files.2)
            .args(args)
            .output()
            .expect("redis-cli on PATH (it comes with redis-server)");
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr)
    };
    let out = tokio::task::spawn_blocking(move || {
        (
            cli(&["SET", "greeting", "hello"]),
            cli(&["GET", "greeting"]),
        )
    })
    .await
    .unwrap();
    assert_eq!(out, ("OK\n".to_string(), "hello\n".to_string()));
}

//! Pub/sub across connections on the wire: an unsubscribe already sent is gone before
//! another client's PUBLISH counts its receivers (redis-server runs requests in the order
//! they arrive, and Redis's own tests send UNSUBSCRIBE without waiting for its
//! confirmation), and (un)subscribe confirmations reach a client under CLIENT REPLY OFF, as
//! Redis's pushes do, compared byte for byte with a real redis-server.

use tokio::io::AsyncReadExt;

use crate::support::redis_server::RedisServer;
use crate::support::served::{Conn, TestServer, Transport, QUIET, TRANSPORTS};

/// Many rounds, since the race this guards against is one of scheduling: the subscriber's
/// connection and the publisher's run on different threads.
const ROUNDS: usize = 50;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unsubscribe_in_flight_is_gone_before_a_publish_counts() {
    for transport in TRANSPORTS {
        let server = TestServer::new(transport).await;
        let mut publisher = server.connect().await;
        for _ in 0..ROUNDS {
            let mut sub = server.connect().await;
            sub.check(
                b"SUBSCRIBE c1 c2\r\n",
                b"*3\r\n$9\r\nsubscribe\r\n$2\r\nc1\r\n:1\r\n\
                  *3\r\n$9\r\nsubscribe\r\n$2\r\nc2\r\n:2\r\n",
            )
            .await;
            sub.check(
                b"PSUBSCRIBE p.*\r\n",
                b"*3\r\n$10\r\npsubscribe\r\n$3\r\np.*\r\n:3\r\n",
            )
            .await;
            // Sent, not waited for: the PUBLISH right behind must not count them.
            sub.send(b"UNSUBSCRIBE\r\n").await;
            publisher.check(b"PUBLISH c1 x\r\n", b":0\r\n").await;
            sub.send(b"PUNSUBSCRIBE\r\n").await;
            publisher.check(b"PUBLISH p.1 x\r\n", b":0\r\n").await;
            sub.expect(
                b"*3\r\n$11\r\nunsubscribe\r\n$2\r\nc1\r\n:2\r\n\
                  *3\r\n$11\r\nunsubscribe\r\n$2\r\nc2\r\n:1\r\n\
                  *3\r\n$12\r\npunsubscribe\r\n$3\r\np.*\r\n:0\r\n",
            )
            .await;
        }
    }
}

/// Everything `conn` receives until it has been quiet for a while.
async fn drain(conn: &mut Conn) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(Ok(n)) = tokio::time::timeout(QUIET, conn.0.read(&mut buf)).await {
        if n == 0 {
            break;
        }
        got.extend_from_slice(&buf[..n]);
    }
    got
}

/// What the subscriber and the publisher receive after each step of the CLIENT REPLY OFF
/// script, on one server.
async fn reply_off_script(server: &TestServer, resp3: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut sub = server.connect().await;
    let mut publisher = server.connect().await;
    if resp3 {
        sub.send(b"HELLO 3\r\n").await;
        drain(&mut sub).await;
    }
    let steps: [(bool, &[u8]); 8] = [
        (true, b"CLIENT REPLY OFF\r\n"),
        (true, b"SUBSCRIBE channel\r\n"),
        (true, b"PSUBSCRIBE ch*\r\n"),
        (false, b"PUBLISH channel hello\r\n"),
        (true, b"UNSUBSCRIBE channel\r\n"),
        (true, b"PUNSUBSCRIBE\r\n"),
        (true, b"CLIENT REPLY SKIP\r\nSUBSCRIBE again\r\nPING\r\n"),
        (true, b"SUBSCRIBE c1 c2 x\r\n"),
    ];
    let mut seen = Vec::new();
    for (to_sub, request) in steps {
        if to_sub {
            sub.send(request).await;
        } else {
            publisher.send(request).await;
        }
        let sub_got = drain(&mut sub).await;
        let pub_got = drain(&mut publisher).await;
        seen.push((sub_got, pub_got));
    }
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirmations_reach_a_client_under_client_reply_off() {
    let redis = RedisServer::spawn();
    let real = TestServer::elsewhere(redis.address());
    let ours = TestServer::new(Transport::Unix).await;
    for resp3 in [false, true] {
        let expected = reply_off_script(&real, resp3).await;
        let got = reply_off_script(&ours, resp3).await;
        // Something is pushed: the test would pass on two silent servers otherwise.
        assert!(!expected[1].0.is_empty());
        for (n, (g, e)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(
                (String::from_utf8_lossy(&g.0), String::from_utf8_lossy(&g.1)),
                (String::from_utf8_lossy(&e.0), String::from_utf8_lossy(&e.1)),
                "step {n} (resp3: {resp3}): ours (left) vs redis-server (right)"
            );
        }
    }
}

//! CLIENT TRACKING on the wire, byte for byte, on `edgebench serve` (TCP and Unix socket)
//! and on a real redis-server with the same script: default mode and BCAST, RESP3 pushes
//! and RESP2 redirection to a subscriber, NOLOOP, OPTIN, a broken redirection, flushes,
//! transactions and scripts, the table's key limit, and what TRACKINGINFO, GETREDIR and
//! INFO report. Each scenario runs on every server; a difference fails it.

use crate::support::parse_info;
use crate::support::redis_server::RedisServer;
use crate::support::served::{every_server, resp, Conn, TestServer};

/// A connection switched to RESP3 (HELLO's reply, which names the server, is skipped).
async fn resp3(server: &TestServer) -> Conn {
    let mut c = server.connect().await;
    c.send(b"HELLO 3\r\n").await;
    c.read_through(b"modules\r\n*0\r\n").await;
    c
}

/// CLIENT ID of `c`.
async fn client_id(c: &mut Conn) -> i64 {
    c.send(b"CLIENT ID\r\n").await;
    let line = c.read_through(b"\r\n").await;
    let text = String::from_utf8_lossy(&line);
    text.trim()
        .trim_start_matches(':')
        .parse()
        .unwrap_or_else(|_| panic!("CLIENT ID replied {text:?}"))
}

/// The RESP3 push `invalidate [keys]`.
fn invalidate(keys: &[&str]) -> Vec<u8> {
    let mut out = b">2\r\n$10\r\ninvalidate\r\n".to_vec();
    out.extend(format!("*{}\r\n", keys.len()).bytes());
    for k in keys {
        out.extend(format!("${}\r\n{k}\r\n", k.len()).bytes());
    }
    out
}

/// The RESP2 Pub/Sub message on `__redis__:invalidate` with `keys`.
fn message(keys: &[&str]) -> Vec<u8> {
    let mut out = b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n".to_vec();
    out.extend(format!("*{}\r\n", keys.len()).bytes());
    for k in keys {
        out.extend(format!("${}\r\n{k}\r\n", k.len()).bytes());
    }
    out
}

/// A RESP2 client subscribed to `__redis__:invalidate`, and its id.
async fn subscriber(server: &TestServer) -> (Conn, i64) {
    let mut c = server.connect().await;
    let id = client_id(&mut c).await;
    c.check(
        b"SUBSCRIBE __redis__:invalidate\r\n",
        b"*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n:1\r\n",
    )
    .await;
    (c, id)
}

async fn flush(server: &TestServer) {
    server
        .connect()
        .await
        .check(b"FLUSHALL\r\n", b"+OK\r\n")
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_key_is_invalidated_once_by_the_next_write_after_the_writers_reply() {
    let redis = RedisServer::spawn();
    for (name, server) in every_server(&redis).await {
        eprintln!("on {name}");
        flush(&server).await;
        let mut reader = resp3(&server).await;
        let mut writer = server.connect().await;
        reader.check(b"CLIENT TRACKING on\r\n", b"+OK\r\n").await;
        writer.check(b"SET k 1\r\n", b"+OK\r\n").await;
        writer.check(b"SET unread 1\r\n", b"+OK\r\n").await;
        reader.check(b"GET k\r\n", b"$1\r\n1\r\n").await;
        writer.check(b"SET unread 2\r\n", b"+OK\r\n").await;
        writer.check(b"SET k 2\r\n", b"+OK\r\n").await;
        // Pushed while the reader is idle: it arrives without a request.
        reader.expect(&invalidate(&["k"])).await;
        // Forgotten once sent: a second write says nothing until the key is read again.
        writer.check(b"SET k 3\r\n", b"+OK\r\n").await;
        reader.check(b"PING\r\n", b"+PONG\r\n").await;
        reader.expect_quiet().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clients_own_write_is_invalidated_after_its_reply_and_after_a_whole_transaction() {
    let redis = RedisServer::spawn();
    for (name, server) in every_server(&redis).await {
        eprintln!("on {name}");
        flush(&server).await;
        let mut c = resp3(&server).await;
        c.check(b"CLIENT TRACKING on\r\n", b"+OK\r\n").await;
        c.check(b"HSET h f 1\r\n", b":1\r\n").await;
        c.check(b"HGET h f\r\n", b"$1\r\n1\r\n").await;
        let mut want = b":1\r\n".to_vec();
        want.extend(invalidate(&["h"]));
        c.check(b"HDEL h f\r\n", &want).await;
        c.check(b"MSET a 1 b 2\r\n", b"+OK\r\n").await;
        c.check(b"GET a\r\n", b"$1\r\n1\r\n").await;
        c.check(b"MULTI\r\n", b"+OK\r\n").await;
        c.check(b"INCR a\r\n", b"+QUEUED\r\n").await;
        c.check(b"GET b\r\n", b"+QUEUED\r\n").await;
        let mut want = b"*2\r\n:2\r\n$1\r\n2\r\n".to_vec();
        want.extend(invalidate(&["a"]));
        c.check(b"EXEC\r\n", &want).await;
        // FLUSHDB in a transaction: every key, as a null, after the reply.
        c.check(b"GET a\r\n", b"$1\r\n2\r\n").await;
        c.check(b"MULTI\r\n", b"+OK\r\n").await;
        c.check(b"FLUSHDB\r\n", b"+QUEUED\r\n").await;
        c.check(
            b"EXEC\r\n",
            b"*1\r\n+OK\r\n>2\r\n$10\r\ninvalidate\r\n_\r\n",
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resp2_client_redirects_to_a_subscriber_which_gets_pubsub_messages() {
    let redis = RedisServer::spawn();
    for (name, server) in every_server(&redis).await {
        eprintln!("on {name}");
        flush(&server).await;
        let (mut sub, id) = subscriber(&server).await;
        let mut c = server.connect().await;
        let mut writer = server.connect().await;
        c.check(
            format!("CLIENT TRACKING on REDIRECT {id}\r\n").as_bytes(),
            b"+OK\r\n",
        )
        .await;
        c.check(b"CLIENT GETREDIR\r\n", format!(":{id}\r\n").as_bytes())
            .await;
        c.check(b"MGET a b\r\n", b"*2\r\n$-1\r\n$-1\r\n").await;
        writer.check(b"SET b 1\r\n", b"+OK\r\n").await;
        sub.expect(&message(&["b"])).await;
        // The tracking client itself gets nothing on RESP2.
        c.check(b"SET a 1\r\n", b"+OK\r\n").await;
        sub.expect(&message(&["a"])).await;
        c.check(b"PING\r\n", b"+PONG\r\n").await;
        // A flush: every key, as a null.
        c.check(b"GET a\r\n", b"$1\r\n1\r\n").await;
        writer.check(b"FLUSHALL\r\n", b"+OK\r\n").await;
        sub.expect(b"*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n$-1\r\n")
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bcast_sends_one_message_per_prefix_and_noloop_leaves_out_own_writes() {
    let redis = RedisServer::spawn();
    for (name, server) in every_server(&redis).await {
        eprintln!("on {name}");
        flush(&server).await;
        let (mut sub, id) = subscriber(&server).await;
        let mut c = server.connect().await;
        let mut other = server.connect().await;
        c.check(
            format!("CLIENT TRACKING on BCAST REDIRECT {id} PREFIX a: PREFIX b:\r\n").as_bytes(),
            b"+OK\r\n",
        )
        .await;
        c.send(b"MULTI\r\nINCR a:1\r\nINCR a:2\r\nINCR b:1\r\nINCR c:1\r\nEXEC\r\n")
            .await;
        c.expect(
            b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*4\r\n:1\r\n:1\r\n:1\r\n:1\r\n",
        )
        .await;
        sub.expect(&message(&["a:1", "a:2"])).await;
        sub.expect(&message(&["b:1"])).await;
        // Overlapping prefixes are refused, naming both.
        c.check(
            b"CLIENT TRACKING on BCAST PREFIX a:x\r\n",
            b"-ERR Prefix 'a:x' overlaps with an existing prefix 'a:'. Prefixes for a single client must not overlap.\r\n",
        )
        .await;
        c.check(b"CLIENT TRACKING off\r\n", b"+OK\r\n").await;
        c.check(
            format!("CLIENT TRACKING on BCAST REDIRECT {id} NOLOOP\r\n").as_bytes(),
            b"+OK\r\n",
        )
        .await;
        other.check(b"SET x 1\r\n", b"+OK\r\n").await;
        sub.expect(&message(&["x"])).await;
        c.check(b"SET mine 1\r\n", b"+OK\r\n").await;
        other.check(b"SET y 1\r\n", b"+OK\r\n").await;
        sub.expect(&message(&["y"])).await;
        sub.expect_quiet().await;
        c.check(
            b"CLIENT TRACKINGINFO\r\n",
            format!(
                "*6\r\n$5\r\nflags\r\n*3\r\n$2\r\non\r\n$5\r\nbcast\r\n$6\r\nnoloop\r\n\
                 $8\r\nredirect\r\n:{id}\r\n$8\r\nprefixes\r\n*1\r\n$0\r\n\r\n"
            )
            .as_bytes(),
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn optin_remembers_only_after_caching_yes_and_a_gone_target_breaks_the_redirection() {
    let redis = RedisServer::spawn();
    for (name, server) in every_server(&redis).await {
        eprintln!("on {name}");
        flush(&server).await;
        let mut c = resp3(&server).await;
        let mut writer = server.connect().await;
        c.check(b"CLIENT CACHING yes\r\n", b"-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled\r\n").await;
        c.check(b"CLIENT TRACKING on OPTIN\r\n", b"+OK\r\n").await;
        c.check(
            b"CLIENT CACHING no\r\n",
            b"-ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.\r\n",
        )
        .await;
        c.check(b"GET skipped\r\n", b"_\r\n").await;
        c.check(b"CLIENT CACHING yes\r\n", b"+OK\r\n").await;
        c.check(b"GET kept\r\n", b"_\r\n").await;
        writer.check(b"SET skipped 1\r\n", b"+OK\r\n").await;
        writer.check(b"SET kept 1\r\n", b"+OK\r\n").await;
        c.expect(&invalidate(&["kept"])).await;
        c.check(b"CLIENT TRACKING on OPTOUT\r\n", b"-ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.\r\n").await;
        c.check(b"CLIENT TRACKING off\r\n", b"+OK\r\n").await;
        c.check(b"CLIENT GETREDIR\r\n", b":-1\r\n").await;
        // Redirected to a client that then leaves: the next message says so.
        let mut target = server.connect().await;
        let id = client_id(&mut target).await;
        c.check(
            format!("CLIENT TRACKING on REDIRECT {id}\r\n").as_bytes(),
            b"+OK\r\n",
        )
        .await;
        c.check(b"GET k\r\n", b"_\r\n").await;
        target.check(b"QUIT\r\n", b"+OK\r\n").await;
        target.expect_closed().await;
        // The server may take a moment to drop the client that quit.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        writer.check(b"SET k 1\r\n", b"+OK\r\n").await;
        c.expect(format!(">2\r\n$21\r\ntracking-redir-broken\r\n:{id}\r\n").as_bytes())
            .await;
        c.send(b"CLIENT TRACKINGINFO\r\n").await;
        c.read_through(b"broken_redirect\r\n").await;
        c.read_through(b"prefixes\r\n*0\r\n").await;
        c.check(
            b"CLIENT TRACKING on REDIRECT 999999\r\n",
            b"-ERR The client ID you want redirect to does not exist\r\n",
        )
        .await;
        c.check(
            b"CLIENT TRACKING on PREFIX a\r\n",
            b"-ERR PREFIX option requires BCAST mode to be enabled\r\n",
        )
        .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_track_their_declared_keys_only_when_they_read() {
    let redis = RedisServer::spawn();
    for (name, server) in every_server(&redis).await {
        eprintln!("on {name}");
        flush(&server).await;
        let mut c = resp3(&server).await;
        let mut writer = server.connect().await;
        c.check(b"CLIENT TRACKING on\r\n", b"+OK\r\n").await;
        let write_only = resp(&[b"EVAL", b"redis.call('set', 'k3', 'x')", b"2", b"k1", b"k2"]);
        c.check(&write_only, b"_\r\n").await;
        writer.check(b"MSET k1 1 k2 1\r\n", b"+OK\r\n").await;
        c.check(b"PING\r\n", b"+PONG\r\n").await;
        let reads = resp(&[b"EVAL", b"redis.call('get', 'k3')", b"2", b"k1", b"k2"]);
        c.check(&reads, b"_\r\n").await;
        writer.check(b"MSET k2 2 k1 2 k3 2\r\n", b"+OK\r\n").await;
        let mut want = invalidate(&["k2"]);
        want.extend(invalidate(&["k1"]));
        c.expect(&want).await;
        c.check(b"PING\r\n", b"+PONG\r\n").await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_table_evicts_keys_over_its_limit_and_info_counts_what_it_holds() {
    let redis = RedisServer::spawn();
    for (name, server) in every_server(&redis).await {
        eprintln!("on {name}");
        flush(&server).await;
        let mut admin = server.connect().await;
        let mut c = resp3(&server).await;
        c.check(b"CLIENT TRACKING on\r\n", b"+OK\r\n").await;
        c.check(
            b"MGET t1 t2 t3 t4 t5\r\n",
            b"*5\r\n_\r\n_\r\n_\r\n_\r\n_\r\n",
        )
        .await;
        let mut bcast = server.connect().await;
        bcast
            .check(b"CLIENT TRACKING on BCAST PREFIX p\r\n", b"+OK\r\n")
            .await;
        let info = info_fields(&mut admin).await;
        assert_eq!(
            info.get("tracking_total_keys").map(String::as_str),
            Some("5")
        );
        assert_eq!(
            info.get("tracking_total_items").map(String::as_str),
            Some("5")
        );
        assert_eq!(
            info.get("tracking_total_prefixes").map(String::as_str),
            Some("1")
        );
        assert_eq!(info.get("tracking_clients").map(String::as_str), Some("2"));
        admin
            .check(b"CONFIG SET tracking-table-max-keys 2\r\n", b"+OK\r\n")
            .await;
        // Three keys go, each with its message (which ones is the server's choice).
        for _ in 0..3 {
            c.read_through(b"\r\n*1\r\n").await;
            c.read_through(b"\r\n").await;
            c.read_through(b"\r\n").await;
        }
        c.check(b"PING\r\n", b"+PONG\r\n").await;
        // A client that leaves takes its tracking with it.
        drop(bcast);
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        let info = info_fields(&mut admin).await;
        assert_eq!(
            info.get("tracking_total_keys").map(String::as_str),
            Some("2")
        );
        assert_eq!(
            info.get("tracking_total_prefixes").map(String::as_str),
            Some("0")
        );
        assert_eq!(info.get("tracking_clients").map(String::as_str), Some("1"));
        admin
            .check(
                b"CONFIG SET tracking-table-max-keys 1000000\r\n",
                b"+OK\r\n",
            )
            .await;
    }
}

/// INFO's `name:value` lines, by name.
async fn info_fields(c: &mut Conn) -> std::collections::HashMap<String, String> {
    c.send(b"INFO\r\n").await;
    let head = c.read_through(b"\r\n").await;
    let len: usize = String::from_utf8_lossy(&head[1..head.len() - 2])
        .parse()
        .expect("INFO's bulk length");
    let body = c.read_n(len + 2).await;
    parse_info(&String::from_utf8_lossy(&body[..len]))
        .into_iter()
        .flat_map(|(_, fields)| fields)
        .collect()
}

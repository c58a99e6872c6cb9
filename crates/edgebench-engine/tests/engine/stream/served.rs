//! Consumer groups over the RESP server: two consumers on two connections share a group,
//! and XREADGROUP BLOCK waits for another connection's XADD (or ends with Redis's error when
//! the group or the stream goes). Raw RESP with exact reply bytes, the bytes redis-server
//! 7.0.15 sends for the same sequences; the engine runs on a manual clock so idle times are
//! exact too.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use edgebench_engine::engine::cmd::stream::XaddId;
use edgebench_engine::engine::Engine;
use edgebench_engine::server::{self, Address, Listener, ServerConfig};
use tokio::net::TcpStream;
use tokio::sync::oneshot;

use crate::support::served::{io_model, Conn, REPLY_TIMEOUT};

/// The RESP server over loopback TCP, its engine on a manual clock.
struct ClockedServer {
    clock: Arc<AtomicU64>,
    engine: Engine,
    endpoint: Address,
    _shutdown: oneshot::Sender<()>,
}

impl ClockedServer {
    async fn start(now_ms: u64) -> ClockedServer {
        let listener = Listener::bind_tcp("127.0.0.1:0").await.expect("bind");
        let endpoint = listener.endpoint().expect("endpoint");
        let clock = Arc::new(AtomicU64::new(now_ms));
        let engine = Engine::with_clock(clock.clone());
        let (tx, rx) = oneshot::channel::<()>();
        tokio::spawn(server::run(
            listener,
            engine.clone(),
            ServerConfig {
                io: io_model(),
                ..ServerConfig::default()
            },
            async {
                let _ = rx.await;
            },
        ));
        ClockedServer {
            clock,
            engine,
            endpoint,
            _shutdown: tx,
        }
    }

    async fn connect(&self) -> Conn {
        match &self.endpoint {
            Address::Tcp(addr) => Conn(Box::new(TcpStream::connect(addr).await.expect("connect"))),
            other => panic!("not TCP: {other:?}"),
        }
    }

    fn advance(&self, ms: u64) {
        self.clock.fetch_add(ms, Ordering::SeqCst);
    }

    /// Waits until exactly `n` calls are blocked in the engine.
    async fn until_blocked(&self, n: usize) {
        let waiting = async {
            while self.engine.blocked_clients() != n {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        };
        tokio::time::timeout(REPLY_TIMEOUT, waiting)
            .await
            .unwrap_or_else(|_| panic!("{} blocked, expected {n}", self.engine.blocked_clients()));
    }
}

/// XREADGROUP's reply with one entry `id` (`n` = `v`) of stream `jobs`.
fn one_entry(id: &str, v: &str) -> Vec<u8> {
    format!(
        "*1\r\n*2\r\n$4\r\njobs\r\n*1\r\n*2\r\n${}\r\n{id}\r\n*2\r\n$1\r\nn\r\n${}\r\n{v}\r\n",
        id.len(),
        v.len()
    )
    .into_bytes()
}

#[tokio::test]
async fn two_consumers_share_a_group_and_a_blocked_read_is_woken_by_xadd() {
    let server = ClockedServer::start(1_000_000).await;
    let mut alice = server.connect().await;
    let mut bob = server.connect().await;
    let mut writer = server.connect().await;
    writer
        .check(b"XGROUP CREATE jobs g $ MKSTREAM\r\n", b"+OK\r\n")
        .await;
    // Both wait; one XADD serves the first to block only, the next serves the other.
    alice
        .send(b"XREADGROUP GROUP g alice BLOCK 0 STREAMS jobs >\r\n")
        .await;
    server.until_blocked(1).await;
    bob.send(b"XREADGROUP GROUP g bob BLOCK 0 STREAMS jobs >\r\n")
        .await;
    server.until_blocked(2).await;
    writer
        .check(b"XADD jobs 1-1 n 1\r\n", b"$3\r\n1-1\r\n")
        .await;
    alice.expect(&one_entry("1-1", "1")).await;
    bob.expect_quiet().await;
    server.until_blocked(1).await;
    writer
        .check(b"XADD jobs 2-1 n 2\r\n", b"$3\r\n2-1\r\n")
        .await;
    bob.expect(&one_entry("2-1", "2")).await;
    server.until_blocked(0).await;
    // Without blocking: each new entry goes to one consumer.
    writer
        .check(
            b"XADD jobs 3-1 n 3\r\nXADD jobs 4-1 n 4\r\n",
            b"$3\r\n3-1\r\n$3\r\n4-1\r\n",
        )
        .await;
    alice
        .check(
            b"XREADGROUP GROUP g alice COUNT 1 STREAMS jobs >\r\n",
            &one_entry("3-1", "3"),
        )
        .await;
    bob.check(
        b"XREADGROUP GROUP g bob STREAMS jobs >\r\n",
        &one_entry("4-1", "4"),
    )
    .await;
    bob.check(b"XREADGROUP GROUP g bob STREAMS jobs >\r\n", b"*-1\r\n")
        .await;
    server.advance(10_000);
    alice.check(b"XACK jobs g 1-1 1-1\r\n", b":1\r\n").await;
    writer
        .check(
            b"XPENDING jobs g\r\n",
            b"*4\r\n:3\r\n$3\r\n2-1\r\n$3\r\n4-1\r\n\
              *2\r\n*2\r\n$5\r\nalice\r\n$1\r\n1\r\n*2\r\n$3\r\nbob\r\n$1\r\n2\r\n",
        )
        .await;
    writer
        .check(
            b"XPENDING jobs g - + 10 alice\r\n",
            b"*1\r\n*4\r\n$3\r\n3-1\r\n$5\r\nalice\r\n:10000\r\n:1\r\n",
        )
        .await;
    writer
        .check(
            b"XPENDING jobs g - + 10 bob\r\n",
            b"*2\r\n*4\r\n$3\r\n2-1\r\n$3\r\nbob\r\n:10000\r\n:1\r\n\
              *4\r\n$3\r\n4-1\r\n$3\r\nbob\r\n:10000\r\n:1\r\n",
        )
        .await;
    // Bob claims alice's entry once it has been idle long enough.
    bob.check(b"XCLAIM jobs g bob 10001 3-1 JUSTID\r\n", b"*0\r\n")
        .await;
    bob.check(
        b"XCLAIM jobs g bob 10000 3-1\r\n",
        b"*1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nn\r\n$1\r\n3\r\n",
    )
    .await;
    server.advance(5);
    writer
        .check(
            b"XPENDING jobs g - + 10\r\n",
            b"*3\r\n*4\r\n$3\r\n2-1\r\n$3\r\nbob\r\n:10005\r\n:1\r\n\
              *4\r\n$3\r\n3-1\r\n$3\r\nbob\r\n:5\r\n:2\r\n\
              *4\r\n$3\r\n4-1\r\n$3\r\nbob\r\n:10005\r\n:1\r\n",
        )
        .await;
    alice
        .check(
            b"XREADGROUP GROUP g alice STREAMS jobs 0\r\n",
            b"*1\r\n*2\r\n$4\r\njobs\r\n*0\r\n",
        )
        .await;
}

#[tokio::test]
async fn a_blocked_group_read_ends_when_its_group_or_stream_goes() {
    let server = ClockedServer::start(1_000).await;
    let mut reader = server.connect().await;
    let mut writer = server.connect().await;
    let block = b"XREADGROUP GROUP g c BLOCK 0 STREAMS jobs >\r\n";
    writer
        .check(b"XGROUP CREATE jobs g $ MKSTREAM\r\n", b"+OK\r\n")
        .await;
    reader.send(block).await;
    server.until_blocked(1).await;
    // Writes that bring nothing new leave it waiting.
    writer
        .check(b"XGROUP CREATECONSUMER jobs g other\r\n", b":1\r\n")
        .await;
    reader.expect_quiet().await;
    writer.check(b"XGROUP DESTROY jobs g\r\n", b":1\r\n").await;
    reader
        .expect(b"-NOGROUP the consumer group this client was blocked on no longer exists\r\n")
        .await;
    server.until_blocked(0).await;
    // The error that ended the wait counts in INFO errorstats, as redis-server counts it.
    writer
        .check(
            b"INFO errorstats\r\n",
            b"$41\r\n# Errorstats\r\nerrorstat_NOGROUP:count=1\r\n\r\n",
        )
        .await;
    writer
        .check(b"XGROUP CREATE jobs g $\r\n", b"+OK\r\n")
        .await;
    reader.send(block).await;
    server.until_blocked(1).await;
    writer.check(b"DEL jobs\r\n", b":1\r\n").await;
    reader
        .expect(b"-UNBLOCKED the stream key no longer exists\r\n")
        .await;
    writer
        .check(b"XGROUP CREATE jobs g $ MKSTREAM\r\n", b"+OK\r\n")
        .await;
    reader.send(block).await;
    server.until_blocked(1).await;
    writer.check(b"SET jobs x\r\n", b"+OK\r\n").await;
    reader
        .expect(b"-UNBLOCKED the stream key no longer exists\r\n")
        .await;
    server.until_blocked(0).await;
    // A timeout: the nil array, and the consumer was not created.
    writer
        .check(
            b"DEL jobs\r\nXGROUP CREATE jobs g $ MKSTREAM\r\n",
            b":1\r\n+OK\r\n",
        )
        .await;
    reader
        .check(
            b"XREADGROUP GROUP g c BLOCK 30 STREAMS jobs >\r\n",
            b"*-1\r\n",
        )
        .await;
    writer.check(b"XINFO CONSUMERS jobs g\r\n", b"*0\r\n").await;
    // XGROUP SETID wakes nobody (Redis signals no key for it); the next XADD serves
    // everything after the new last-delivered id.
    writer
        .check(
            b"XADD jobs 1-1 n 1\r\nXGROUP SETID jobs g $\r\n",
            b"$3\r\n1-1\r\n+OK\r\n",
        )
        .await;
    reader.send(block).await;
    server.until_blocked(1).await;
    writer.check(b"XGROUP SETID jobs g 0\r\n", b"+OK\r\n").await;
    reader.expect_quiet().await;
    writer
        .check(b"XADD jobs 2-1 n 2\r\n", b"$3\r\n2-1\r\n")
        .await;
    reader
        .expect(
            b"*1\r\n*2\r\n$4\r\njobs\r\n*2\r\n*2\r\n$3\r\n1-1\r\n*2\r\n$1\r\nn\r\n$1\r\n1\r\n\
              *2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nn\r\n$1\r\n2\r\n",
        )
        .await;
    // NOACK: served without a pending entry.
    reader
        .send(b"XREADGROUP GROUP g c NOACK BLOCK 0 STREAMS jobs >\r\n")
        .await;
    server.until_blocked(1).await;
    writer
        .check(b"XADD jobs 5-1 n 5\r\n", b"$3\r\n5-1\r\n")
        .await;
    reader.expect(&one_entry("5-1", "5")).await;
    writer
        .check(
            b"XPENDING jobs g\r\n",
            b"*4\r\n:2\r\n$3\r\n1-1\r\n$3\r\n2-1\r\n*1\r\n*2\r\n$1\r\nc\r\n$1\r\n2\r\n",
        )
        .await;
}

#[tokio::test]
async fn deleted_entries_above_the_group_do_not_end_a_blocked_read() {
    let server = ClockedServer::start(1_000).await;
    let mut reader = server.connect().await;
    let mut writer = server.connect().await;
    writer
        .check(
            b"XADD jobs 1-1 n 1\r\nXADD jobs 2-1 n 2\r\nXGROUP CREATE jobs g 1-1\r\nXDEL jobs 2-1\r\n",
            b"$3\r\n1-1\r\n$3\r\n2-1\r\n+OK\r\n:1\r\n",
        )
        .await;
    reader
        .send(b"XREADGROUP GROUP g c BLOCK 0 STREAMS jobs >\r\n")
        .await;
    server.until_blocked(1).await;
    reader.expect_quiet().await;
    writer
        .check(b"XADD jobs 3-1 n 3\r\n", b"$3\r\n3-1\r\n")
        .await;
    reader.expect(&one_entry("3-1", "3")).await;
    server.until_blocked(0).await;
}

#[tokio::test]
async fn resp3_a_blocked_group_read_on_two_keys_is_served_by_the_written_one() {
    let server = ClockedServer::start(1_000).await;
    let mut reader = server.connect().await;
    let mut writer = server.connect().await;
    writer
        .check(
            b"XGROUP CREATE a g $ MKSTREAM\r\nXGROUP CREATE jobs g $ MKSTREAM\r\n",
            b"+OK\r\n+OK\r\n",
        )
        .await;
    reader.send(b"HELLO 3\r\n").await;
    reader.read_through(b"modules\r\n*0\r\n").await;
    reader
        .send(b"XREADGROUP GROUP g c COUNT 5 BLOCK 0 STREAMS a jobs > >\r\n")
        .await;
    server.until_blocked(1).await;
    writer
        .check(b"XADD jobs 3-1 n 3\r\n", b"$3\r\n3-1\r\n")
        .await;
    reader
        .expect(b"%1\r\n$4\r\njobs\r\n*1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nn\r\n$1\r\n3\r\n")
        .await;
    server.until_blocked(0).await;
    reader
        .check(b"XREADGROUP GROUP g c BLOCK 30 STREAMS a >\r\n", b"_\r\n")
        .await;
}

/// A blocked read without COUNT is served at most Redis's 1000 entries at a wake-up, even
/// when XGROUP SETID moved its group far back meanwhile.
#[tokio::test]
async fn a_blocked_group_read_without_count_gets_at_most_1000_entries() {
    let server = ClockedServer::start(1_000).await;
    let mut reader = server.connect().await;
    let mut writer = server.connect().await;
    let mut adds = Vec::new();
    let mut added = Vec::new();
    for i in 1..=1_200u32 {
        adds.extend(format!("XADD jobs {i}-0 n {i}\r\n").bytes());
        let id = format!("{i}-0");
        added.extend(format!("${}\r\n{id}\r\n", id.len()).bytes());
    }
    writer.check(&adds, &added).await;
    writer
        .check(b"XGROUP CREATE jobs g $\r\n", b"+OK\r\n")
        .await;
    reader
        .send(b"XREADGROUP GROUP g c BLOCK 0 STREAMS jobs >\r\n")
        .await;
    server.until_blocked(1).await;
    writer
        .check(
            b"XGROUP SETID jobs g 0\r\nXADD jobs 1201-0 n 1201\r\n",
            b"+OK\r\n$6\r\n1201-0\r\n",
        )
        .await;
    let mut expected = b"*1\r\n*2\r\n$4\r\njobs\r\n*1000\r\n".to_vec();
    for i in 1..=1_000u32 {
        let (id, v) = (format!("{i}-0"), i.to_string());
        expected.extend(
            format!(
                "*2\r\n${}\r\n{id}\r\n*2\r\n$1\r\nn\r\n${}\r\n{v}\r\n",
                id.len(),
                v.len()
            )
            .bytes(),
        );
    }
    reader.expect(&expected).await;
    writer
        .check(
            b"XPENDING jobs g - + 1\r\n",
            b"*1\r\n*4\r\n$3\r\n1-0\r\n$1\r\nc\r\n:0\r\n:1\r\n",
        )
        .await;
}

/// An expired stream is a deleted one: blocked XREADGROUPs get Redis's UNBLOCKED error,
/// whether active expiry or a later access removes the key.
#[tokio::test]
async fn a_blocked_group_read_ends_when_its_stream_expires() {
    let server = ClockedServer::start(1_000).await;
    let mut reader = server.connect().await;
    let mut writer = server.connect().await;
    let unblocked = b"-UNBLOCKED the stream key no longer exists\r\n";
    for active in [true, false] {
        writer
            .check(
                b"XGROUP CREATE jobs g $ MKSTREAM\r\nPEXPIRE jobs 100\r\n",
                b"+OK\r\n:1\r\n",
            )
            .await;
        reader
            .send(b"XREADGROUP GROUP g c BLOCK 0 STREAMS jobs >\r\n")
            .await;
        server.until_blocked(1).await;
        server.advance(101);
        if active {
            assert_eq!(server.engine.expire_cycle(), 1);
        } else {
            writer.check(b"EXISTS jobs\r\n", b":0\r\n").await;
        }
        reader.expect(unblocked).await;
        server.until_blocked(0).await;
    }
}

#[tokio::test]
async fn flushdb_ends_blocked_group_reads() {
    let server = ClockedServer::start(1_000).await;
    let mut reader = server.connect().await;
    let mut writer = server.connect().await;
    writer
        .check(b"XGROUP CREATE jobs g $ MKSTREAM\r\n", b"+OK\r\n")
        .await;
    reader
        .send(b"XREADGROUP GROUP g c BLOCK 0 STREAMS jobs >\r\n")
        .await;
    server.until_blocked(1).await;
    writer.check(b"FLUSHDB\r\n", b"+OK\r\n").await;
    reader
        .expect(b"-UNBLOCKED the stream key no longer exists\r\n")
        .await;
    server.until_blocked(0).await;
}

/// The ids and values of an XREADGROUP reply on one stream (RESP2), in order.
fn delivered(reply: &redis::Value) -> Vec<(String, String)> {
    use redis::Value;
    let text = |v: &Value| match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        other => panic!("not a bulk string: {other:?}"),
    };
    let Value::Array(streams) = reply else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for stream in streams {
        let Value::Array(pair) = stream else {
            panic!("stream: {stream:?}")
        };
        let Some(Value::Array(entries)) = pair.get(1) else {
            panic!("entries: {pair:?}")
        };
        for entry in entries {
            let Value::Array(parts) = entry else {
                panic!("entry: {entry:?}")
            };
            let Some(Value::Array(fields)) = parts.get(1) else {
                panic!("fields: {parts:?}")
            };
            out.push((text(&parts[0]), text(&fields[1])));
        }
    }
    out
}

/// Consumers blocked on one group while producers race them over the server and
/// in-process: every entry reaches exactly one consumer, and what they ack leaves the PEL.
#[test]
fn every_entry_reaches_exactly_one_consumer_of_the_group() {
    const PRODUCERS: usize = 2;
    const PER_PRODUCER: usize = 150;
    const CONSUMERS: usize = 4;
    let engine = Engine::new();
    let handle = crate::support::served::spawn_in_background(
        server::Bind::Tcp(([127, 0, 0, 1], 0).into()),
        engine.clone(),
    )
    .expect("server");
    let endpoint = handle.endpoint();
    let connect = || crate::support::connect(&endpoint, REPLY_TIMEOUT).expect("connect");
    let mut admin = connect();
    let _: () = redis::cmd("XGROUP")
        .arg(&["CREATE", "work", "g", "$", "MKSTREAM"])
        .query(&mut admin)
        .expect("XGROUP CREATE");
    let consumers: Vec<_> = (0..CONSUMERS)
        .map(|c| {
            let mut conn = connect();
            std::thread::spawn(move || {
                let name = format!("c{c}");
                let mut got = Vec::new();
                // Ends at a "stop" entry (one per consumer, added after all the work); the
                // long BLOCK only keeps a lost entry from hanging the test.
                loop {
                    let reply: redis::Value = redis::cmd("XREADGROUP")
                        .arg(&["GROUP", "g", &name, "COUNT", "1", "BLOCK", "30000"])
                        .arg(&["STREAMS", "work", ">"])
                        .query(&mut conn)
                        .expect("XREADGROUP");
                    let entries = delivered(&reply);
                    if entries.is_empty() {
                        break;
                    }
                    for (id, value) in entries {
                        let acked: i64 = redis::cmd("XACK")
                            .arg(&["work", "g", &id])
                            .query(&mut conn)
                            .expect("XACK");
                        assert_eq!(acked, 1);
                        if value == "stop" {
                            return got;
                        }
                        got.push(value);
                    }
                }
                got
            })
        })
        .collect();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|p| {
            let mut conn = connect();
            let engine = engine.clone();
            std::thread::spawn(move || {
                for i in 0..PER_PRODUCER {
                    let value = format!("{p}-{i}");
                    if p == 0 {
                        let now = engine.now_ms();
                        let mut db = engine.db(0).lock(std::iter::once(&b"work"[..]), now);
                        let fields = vec![(b"v".to_vec(), value.into_bytes())];
                        db.xadd(b"work", XaddId::Auto, fields, false, None)
                            .expect("xadd");
                    } else {
                        let _: String = redis::cmd("XADD")
                            .arg(&["work", "*", "v", &value])
                            .query(&mut conn)
                            .expect("XADD");
                    }
                }
            })
        })
        .collect();
    for producer in producers {
        producer.join().expect("producer");
    }
    for _ in 0..CONSUMERS {
        let _: String = redis::cmd("XADD")
            .arg(&["work", "*", "v", "stop"])
            .query(&mut admin)
            .expect("XADD stop");
    }
    let mut got: Vec<String> = consumers
        .into_iter()
        .flat_map(|c| c.join().expect("consumer"))
        .collect();
    got.sort();
    let mut added: Vec<String> = (0..PRODUCERS)
        .flat_map(|p| (0..PER_PRODUCER).map(move |i| format!("{p}-{i}")))
        .collect();
    added.sort();
    assert_eq!(got, added);
    let pending: redis::Value = redis::cmd("XPENDING")
        .arg(&["work", "g"])
        .query(&mut admin)
        .expect("XPENDING");
    assert_eq!(
        pending,
        redis::Value::Array(vec![
            redis::Value::Int(0),
            redis::Value::Nil,
            redis::Value::Nil,
            redis::Value::Nil
        ])
    );
    assert_eq!(engine.blocked_clients(), 0);
}

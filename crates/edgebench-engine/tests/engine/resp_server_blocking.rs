//! Blocking commands over the RESP server: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP,
//! BZPOPMIN, BZPOPMAX, BZMPOP and XREAD BLOCK wait until
//! another client writes their key, time out, or end with their connection.
//!
//! The server runs inside each test on `127.0.0.1:0` (or a socket in a temp dir), spoken to in
//! raw RESP with the exact reply bytes asserted; the bytes are redis-server 7.0's for the same
//! sequences. The test keeps a handle on the engine and waits for
//! [`Engine::blocked_clients`] to reach a count before it writes, so "A blocked before B"
//! is a fact, not a sleep.

use edgebench_engine::engine::Engine;
use edgebench_engine::server::Bind;
use tokio::io::AsyncReadExt;

use crate::support::served::{TestServer, Transport, QUIET, REPLY_TIMEOUT};

#[tokio::test]
async fn blpop_is_served_by_a_later_push_from_another_client() {
    for unix in [false, true] {
        let server = TestServer::new(if unix {
            Transport::Unix
        } else {
            Transport::Tcp
        })
        .await;
        let mut waiter = server.connect().await;
        let mut pusher = server.connect().await;
        waiter.send(b"BLPOP jobs 0\r\n").await;
        server.until_blocked(1).await;
        waiter.expect_quiet().await;
        // As in Redis, the pusher's next command already sees the list served.
        pusher
            .check(b"LPUSH jobs a\r\nLLEN jobs\r\n", b":1\r\n:0\r\n")
            .await;
        waiter.expect(b"*2\r\n$4\r\njobs\r\n$1\r\na\r\n").await;
        server.until_blocked(0).await;
        // A later push with data already there is answered at once, from the head.
        pusher.check(b"RPUSH jobs x y\r\n", b":2\r\n").await;
        waiter
            .check(b"BRPOP jobs 0\r\n", b"*2\r\n$4\r\njobs\r\n$1\r\ny\r\n")
            .await;
    }
}

#[tokio::test]
async fn blocked_clients_are_served_first_come_first_served() {
    let server = TestServer::tcp().await;
    let mut first = server.connect().await;
    let mut second = server.connect().await;
    let mut pusher = server.connect().await;
    first.send(b"BLPOP q 0\r\n").await;
    server.until_blocked(1).await;
    second.send(b"BRPOP other q 0\r\n").await;
    server.until_blocked(2).await;
    pusher.check(b"RPUSH q one\r\n", b":1\r\n").await;
    first.expect(b"*2\r\n$1\r\nq\r\n$3\r\none\r\n").await;
    second.expect_quiet().await;
    server.until_blocked(1).await;
    // Two elements in one push: the only waiter (a BRPOP) takes the tail, the head stays.
    pusher
        .check(
            b"RPUSH q two three\r\nLRANGE q 0 -1\r\n",
            b":2\r\n*1\r\n$3\r\ntwo\r\n",
        )
        .await;
    second.expect(b"*2\r\n$1\r\nq\r\n$5\r\nthree\r\n").await;
    server.until_blocked(0).await;
}

#[tokio::test]
async fn a_timeout_gets_the_nil_reply_and_the_pipeline_resumes() {
    let server = TestServer::tcp().await;
    let mut conn = server.connect().await;
    // Redis 7.0 answers all four with a nil array once they blocked (RESP2).
    conn.check(b"BLPOP k 0.2\r\nPING\r\n", b"*-1\r\n+PONG\r\n")
        .await;
    conn.check(b"BRPOP k1 k2 0.05\r\n", b"*-1\r\n").await;
    conn.check(b"BLMOVE k d LEFT RIGHT 0.05\r\n", b"*-1\r\n")
        .await;
    conn.check(b"XREAD BLOCK 50 STREAMS s $\r\n", b"*-1\r\n")
        .await;
    conn.check(b"HELLO 3\r\n", b"%").await;
    let mut hello = vec![0u8; 4096];
    let _ = tokio::time::timeout(QUIET, conn.0.read(&mut hello)).await;
    conn.check(b"BLPOP k 0.05\r\n", b"_\r\n").await;
    assert_eq!(server.engine.blocked_clients(), 0);
}

#[tokio::test]
async fn errors_and_multi_never_block() {
    let server = TestServer::tcp().await;
    let mut conn = server.connect().await;
    conn.check(
        b"BLPOP k -1\r\nBLPOP k x\r\nSET str v\r\nBLPOP str 0\r\n",
        b"-ERR timeout is negative\r\n\
          -ERR timeout is not a float or out of range\r\n\
          +OK\r\n\
          -WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
    )
    .await;
    conn.check(
        b"MULTI\r\nBLPOP k 0\r\nBLMOVE k d LEFT LEFT 0\r\nXREAD BLOCK 0 STREAMS s $\r\nEXEC\r\n",
        b"+OK\r\n+QUEUED\r\n+QUEUED\r\n+QUEUED\r\n*3\r\n*-1\r\n$-1\r\n*-1\r\n",
    )
    .await;
    conn.check(b"XREAD STREAMS s 0\r\n", b"*-1\r\n").await;
    assert_eq!(server.engine.blocked_clients(), 0);
}

#[tokio::test]
async fn blmove_is_served_and_moves_the_element() {
    let server = TestServer::tcp().await;
    let mut waiter = server.connect().await;
    let mut pusher = server.connect().await;
    waiter.send(b"BLMOVE src dst RIGHT LEFT 0\r\n").await;
    server.until_blocked(1).await;
    pusher.check(b"RPUSH src a b\r\n", b":2\r\n").await;
    waiter.expect(b"$1\r\nb\r\n").await;
    pusher
        .check(
            b"LRANGE src 0 -1\r\nLRANGE dst 0 -1\r\n",
            b"*1\r\n$1\r\na\r\n*1\r\n$1\r\nb\r\n",
        )
        .await;
    // A destination of another type: WRONGTYPE, and nothing moves (Redis 7.0).
    pusher
        .check(b"DEL src\r\nSET bad v\r\n", b":1\r\n+OK\r\n")
        .await;
    waiter.send(b"BLMOVE src bad LEFT LEFT 0\r\n").await;
    server.until_blocked(1).await;
    pusher
        .check(b"RPUSH src z\r\nLLEN src\r\n", b":1\r\n:1\r\n")
        .await;
    waiter
        .expect(b"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n")
        .await;
    server.until_blocked(0).await;
}

#[tokio::test]
async fn a_key_of_another_type_does_not_serve_a_pop() {
    let server = TestServer::tcp().await;
    let mut waiter = server.connect().await;
    let mut writer = server.connect().await;
    waiter.send(b"BLPOP k k2 0\r\n").await;
    server.until_blocked(1).await;
    writer.check(b"SET k v\r\n", b"+OK\r\n").await;
    waiter.expect_quiet().await;
    writer.check(b"RPUSH k2 z\r\n", b":1\r\n").await;
    waiter.expect(b"*2\r\n$2\r\nk2\r\n$1\r\nz\r\n").await;
}

#[tokio::test]
async fn xread_block_dollar_gets_only_entries_added_after_it() {
    let server = TestServer::tcp().await;
    let mut reader = server.connect().await;
    let mut writer = server.connect().await;
    writer
        .check(b"XADD s 1-1 f old\r\n", b"$3\r\n1-1\r\n")
        .await;
    reader
        .send(b"XREAD COUNT 10 BLOCK 0 STREAMS other s $ $\r\n")
        .await;
    server.until_blocked(1).await;
    reader.expect_quiet().await;
    writer
        .check(b"XADD s 2-1 f new\r\n", b"$3\r\n2-1\r\n")
        .await;
    reader
        .expect(b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$3\r\nnew\r\n")
        .await;
    // Many readers of one stream are all served by one entry.
    let mut second = server.connect().await;
    reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n").await;
    second.send(b"XREAD BLOCK 0 STREAMS s 2-1\r\n").await;
    server.until_blocked(2).await;
    writer.check(b"XADD s 3-1 g x\r\n", b"$3\r\n3-1\r\n").await;
    let entry = b"*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\ng\r\n$1\r\nx\r\n";
    reader.expect(entry).await;
    second.expect(entry).await;
    server.until_blocked(0).await;
}

#[tokio::test]
async fn bzpopmin_is_served_by_a_later_zadd_from_another_client() {
    let server = TestServer::tcp().await;
    let mut waiter = server.connect().await;
    let mut writer = server.connect().await;
    waiter.send(b"BZPOPMIN z1 z2 0\r\n").await;
    server.until_blocked(1).await;
    waiter.expect_quiet().await;
    writer
        .check(b"ZADD z2 1.5 m 2 n\r\nZCARD z2\r\n", b":2\r\n:1\r\n")
        .await;
    waiter
        .expect(b"*3\r\n$2\r\nz2\r\n$1\r\nm\r\n$3\r\n1.5\r\n")
        .await;
    server.until_blocked(0).await;
    // With a member there, BZPOPMAX answers at once.
    waiter
        .check(
            b"BZPOPMAX z2 0\r\n",
            b"*3\r\n$2\r\nz2\r\n$1\r\nn\r\n$1\r\n2\r\n",
        )
        .await;
    // A key turned into a list does not serve a sorted-set pop; a sorted set later does.
    waiter.send(b"BZPOPMIN w 0\r\n").await;
    server.until_blocked(1).await;
    writer.check(b"LPUSH w v\r\n", b":1\r\n").await;
    waiter.expect_quiet().await;
    writer
        .check(b"DEL w\r\nZADD w 1 q\r\n", b":1\r\n:1\r\n")
        .await;
    waiter
        .expect(b"*3\r\n$1\r\nw\r\n$1\r\nq\r\n$1\r\n1\r\n")
        .await;
    server.until_blocked(0).await;
}

#[tokio::test]
async fn blmpop_and_bzmpop_are_served_with_their_count() {
    let server = TestServer::tcp().await;
    let mut waiter = server.connect().await;
    let mut writer = server.connect().await;
    waiter.send(b"BLMPOP 0 2 l1 l2 RIGHT COUNT 2\r\n").await;
    server.until_blocked(1).await;
    writer
        .check(
            b"RPUSH l2 a b c\r\nLRANGE l2 0 -1\r\n",
            b":3\r\n*1\r\n$1\r\na\r\n",
        )
        .await;
    waiter
        .expect(b"*2\r\n$2\r\nl2\r\n*2\r\n$1\r\nc\r\n$1\r\nb\r\n")
        .await;
    waiter.send(b"BZMPOP 0 1 zz MAX COUNT 5\r\n").await;
    server.until_blocked(1).await;
    writer
        .check(b"ZADD zz 1 a 2 b\r\nEXISTS zz\r\n", b":2\r\n:0\r\n")
        .await;
    waiter
        .expect(b"*2\r\n$2\r\nzz\r\n*2\r\n*2\r\n$1\r\nb\r\n$1\r\n2\r\n*2\r\n$1\r\na\r\n$1\r\n1\r\n")
        .await;
    server.until_blocked(0).await;
}

#[tokio::test]
async fn brpoplpush_is_served_and_moves_the_element() {
    let server = TestServer::tcp().await;
    let mut waiter = server.connect().await;
    let mut writer = server.connect().await;
    waiter.send(b"BRPOPLPUSH src dst 0\r\n").await;
    server.until_blocked(1).await;
    writer
        .check(
            b"RPUSH src x y\r\nLRANGE dst 0 -1\r\n",
            b":2\r\n*1\r\n$1\r\ny\r\n",
        )
        .await;
    waiter.expect(b"$1\r\ny\r\n").await;
    server.until_blocked(0).await;
}

#[tokio::test]
async fn the_new_blocking_commands_time_out_with_a_nil_and_check_their_timeout() {
    let server = TestServer::tcp().await;
    let mut conn = server.connect().await;
    conn.check(
        b"BZPOPMIN k 0.05\r\nBLMPOP 0.05 1 k LEFT\r\nBZMPOP 0.05 1 k MIN\r\n\
          BRPOPLPUSH k d 0.05\r\nBZPOPMAX k 0.05\r\n",
        b"*-1\r\n*-1\r\n*-1\r\n*-1\r\n*-1\r\n",
    )
    .await;
    conn.check(
        b"BZPOPMIN k -1\r\nBLMPOP x 1 k LEFT\r\nBRPOPLPUSH k d nan\r\nBZMPOP 0 0 k MIN\r\n",
        b"-ERR timeout is negative\r\n\
          -ERR timeout is not a float or out of range\r\n\
          -ERR timeout is not a float or out of range\r\n\
          -ERR numkeys should be greater than 0\r\n",
    )
    .await;
    conn.check(b"HELLO 3\r\n", b"%").await;
    let mut hello = vec![0u8; 4096];
    let _ = tokio::time::timeout(QUIET, conn.0.read(&mut hello)).await;
    conn.check(
        b"BZPOPMIN k 0.05\r\nBLMPOP 0.05 1 k LEFT\r\nBRPOPLPUSH k d 0.05\r\nBZMPOP 0.05 1 k MIN\r\n",
        b"_\r\n_\r\n_\r\n_\r\n",
    )
    .await;
    assert_eq!(server.engine.blocked_clients(), 0);
}

#[tokio::test]
async fn resp3_clients_are_served_doubles() {
    let server = TestServer::tcp().await;
    let mut waiter = server.connect().await;
    let mut writer = server.connect().await;
    waiter.check(b"HELLO 3\r\n", b"%").await;
    let mut hello = vec![0u8; 4096];
    let _ = tokio::time::timeout(QUIET, waiter.0.read(&mut hello)).await;
    waiter.send(b"BZPOPMIN z9 0\r\n").await;
    server.until_blocked(1).await;
    writer.check(b"ZADD z9 2.5 m\r\n", b":1\r\n").await;
    waiter
        .expect(b"*3\r\n$2\r\nz9\r\n$1\r\nm\r\n,2.5\r\n")
        .await;
    waiter.send(b"BZMPOP 0 1 z9 MIN\r\n").await;
    server.until_blocked(1).await;
    writer.check(b"ZADD z9 2.5 m\r\n", b":1\r\n").await;
    waiter
        .expect(b"*2\r\n$2\r\nz9\r\n*1\r\n*2\r\n$1\r\nm\r\n,2.5\r\n")
        .await;
    server.until_blocked(0).await;
}

#[tokio::test]
async fn a_client_that_disconnects_while_blocked_is_forgotten() {
    let server = TestServer::tcp().await;
    let mut gone = server.connect().await;
    let mut stays = server.connect().await;
    let mut pusher = server.connect().await;
    gone.send(b"BLPOP k 0\r\n").await;
    server.until_blocked(1).await;
    stays.send(b"BLPOP k 0\r\n").await;
    server.until_blocked(2).await;
    drop(gone);
    server.until_blocked(1).await;
    pusher.check(b"LPUSH k v\r\n", b":1\r\n").await;
    stays.expect(b"*2\r\n$1\r\nk\r\n$1\r\nv\r\n").await;
    // With nobody waiting any more, the element stays in the list.
    let mut again = server.connect().await;
    again.send(b"BLPOP k 0\r\n").await;
    server.until_blocked(1).await;
    drop(again);
    server.until_blocked(0).await;
    pusher
        .check(b"LPUSH k w\r\nLLEN k\r\n", b":1\r\n:1\r\n")
        .await;
}

#[tokio::test]
async fn a_write_by_an_in_process_caller_wakes_the_blocked_client() {
    let server = TestServer::tcp().await;
    let mut waiter = server.connect().await;
    waiter.send(b"BLPOP k 0\r\n").await;
    server.until_blocked(1).await;
    let engine = server.engine.clone();
    let now = engine.now_ms();
    let pushed = engine
        .db(0)
        .lock(std::iter::once(&b"k"[..]), now)
        .rpush(b"k", &[b"direct"])
        .expect("rpush");
    assert_eq!(pushed, 1);
    waiter.expect(b"*2\r\n$1\r\nk\r\n$6\r\ndirect\r\n").await;
    server.until_blocked(0).await;
}

#[tokio::test]
async fn commands_pipelined_behind_a_blocked_one_wait_for_it() {
    let server = TestServer::tcp().await;
    let mut waiter = server.connect().await;
    let mut pusher = server.connect().await;
    waiter.send(b"PING\r\nBLPOP k 0\r\nECHO after\r\n").await;
    waiter.expect(b"+PONG\r\n").await;
    server.until_blocked(1).await;
    waiter.expect_quiet().await;
    pusher.check(b"RPUSH k v\r\n", b":1\r\n").await;
    waiter
        .expect(b"*2\r\n$1\r\nk\r\n$1\r\nv\r\n$5\r\nafter\r\n")
        .await;
}

#[tokio::test]
async fn shutdown_closes_blocked_clients() {
    let mut server = TestServer::tcp().await;
    let mut waiter = server.connect().await;
    let mut reader = server.connect().await;
    waiter.send(b"BLPOP k 0\r\n").await;
    reader.send(b"XREAD BLOCK 0 STREAMS s $\r\n").await;
    server.until_blocked(2).await;
    server.stop().await.expect("run returns Ok");
    waiter.expect_closed().await;
    reader.expect_closed().await;
    assert_eq!(server.engine.blocked_clients(), 0);
}

/// Many poppers blocked on one list, pushers over the server and in-process racing them:
/// every element reaches exactly one client, none is lost, nothing deadlocks.
#[test]
fn every_pushed_element_reaches_exactly_one_blocked_client() {
    const PUSHERS: usize = 3;
    const PER_PUSHER: usize = 200;
    const POPPERS: usize = 8;
    let engine = Engine::new();
    let handle = crate::support::served::spawn_in_background(
        Bind::Tcp(([127, 0, 0, 1], 0).into()),
        engine.clone(),
    )
    .expect("server");
    let endpoint = handle.endpoint();
    let connect = || crate::support::connect(&endpoint, REPLY_TIMEOUT).expect("connect");
    let poppers: Vec<_> = (0..POPPERS)
        .map(|_| {
            let mut conn = connect();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                // Ends at a "stop" sentinel (pushed once per popper after all the work), not
                // on a timer, so a slow machine cannot end it early; the long timeout only
                // keeps a lost element from hanging the test (it then fails on the count).
                while let Some((_, value)) = redis::cmd("BLPOP")
                    .arg("work")
                    .arg(30)
                    .query::<Option<(String, String)>>(&mut conn)
                    .expect("BLPOP")
                {
                    if value == "stop" {
                        break;
                    }
                    got.push(value);
                }
                got
            })
        })
        .collect();
    let pushers: Vec<_> = (0..PUSHERS)
        .map(|p| {
            let mut conn = connect();
            let engine = engine.clone();
            std::thread::spawn(move || {
                for i in 0..PER_PUSHER {
                    let value = format!("{p}-{i}");
                    // One pusher writes in-process, which wakes rather than serves.
                    if p == 0 {
                        let now = engine.now_ms();
                        let mut db = engine.db(0).lock(std::iter::once(&b"work"[..]), now);
                        db.rpush(b"work", &[value.as_bytes()]).expect("rpush");
                    } else {
                        let _: i64 = redis::cmd("RPUSH")
                            .arg("work")
                            .arg(&value)
                            .query(&mut conn)
                            .expect("RPUSH");
                    }
                }
            })
        })
        .collect();
    for pusher in pushers {
        pusher.join().expect("pusher");
    }
    let mut conn = connect();
    for _ in 0..POPPERS {
        let _: i64 = redis::cmd("RPUSH")
            .arg("work")
            .arg("stop")
            .query(&mut conn)
            .expect("RPUSH stop");
    }
    let mut got: Vec<String> = poppers
        .into_iter()
        .flat_map(|p| p.join().expect("popper"))
        .collect();
    got.sort();
    let mut pushed: Vec<String> = (0..PUSHERS)
        .flat_map(|p| (0..PER_PUSHER).map(move |i| format!("{p}-{i}")))
        .collect();
    pushed.sort();
    assert_eq!(got, pushed);
    assert_eq!(engine.blocked_clients(), 0);
}

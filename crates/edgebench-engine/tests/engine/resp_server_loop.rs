//! Both I/O models on the wire, each explicitly: for the event loop (`IoModel::Loop`, the
//! default, also polling before it sleeps) what stays on a loop (pipelines, QUIT, a large value in pieces, CLIENT KILL of an
//! idle client) and what it hands to the task design (a blocked BLPOP, a subscriber, a
//! script), answered across the two models; the same exchanges on `IoModel::Tasks`. The rest
//! of the server suite runs on the default model, or on the one `EDGEBENCH_SERVER_IO` names.

use std::time::Duration;

use edgebench_engine::server::{IoModel, ServerConfig};

use crate::resp_server::client_id;
use crate::support::served::{resp, TestServer, TRANSPORTS};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_io_model_serves_and_the_loop_hands_off() {
    // (model, loop threads, busy poll)
    let models = [
        (IoModel::Loop, Some(2), Duration::ZERO),
        (IoModel::Loop, None, Duration::ZERO),
        (IoModel::Loop, None, Duration::from_micros(200)),
        (IoModel::Tasks, None, Duration::ZERO),
    ];
    for ((io, loop_threads, busy_poll), transport) in models
        .into_iter()
        .flat_map(|model| TRANSPORTS.map(|transport| (model, transport)))
    {
        let config = ServerConfig {
            io,
            loop_threads,
            busy_poll,
            ..ServerConfig::default()
        };
        let server = TestServer::start(transport, config).await;

        // Pipelining: one batch, every reply, in order.
        let mut a = server.connect().await;
        a.check(
            b"SET k v\r\nGET k\r\n*1\r\n$4\r\nPING\r\nINCR n\r\n",
            b"+OK\r\n$1\r\nv\r\n+PONG\r\n:1\r\n",
        )
        .await;

        // A 10 MB bulk string arriving in pieces.
        let value = vec![b'x'; 10 * 1024 * 1024];
        let request = resp(&[b"SET", b"big", &value]);
        for piece in request.chunks(3 * 1024 * 1024 + 7) {
            a.send(piece).await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        a.expect(b"+OK\r\n").await;
        a.check(b"STRLEN big\r\n", b":10485760\r\n").await;

        // A BLPOP that has to wait moves to a task; a push from a loop connection serves it,
        // and the moved connection goes on answering.
        let mut blocked = server.connect().await;
        blocked.send(b"BLPOP jobs 0\r\n").await;
        server.until_blocked(1).await;
        a.check(b"RPUSH jobs j1\r\n", b":1\r\n").await;
        blocked.expect(b"*2\r\n$4\r\njobs\r\n$2\r\nj1\r\n").await;
        blocked.check(b"PING\r\n", b"+PONG\r\n").await;

        // A subscriber moves to a task; PUBLISH from a loop connection reaches it.
        let mut sub = server.connect().await;
        sub.check(
            b"SUBSCRIBE news\r\n",
            b"*3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n",
        )
        .await;
        a.check(b"PUBLISH news hi\r\n", b":1\r\n").await;
        sub.expect(b"*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$2\r\nhi\r\n")
            .await;
        // And the other way: a task's PUBLISH to a loop connection that subscribes later.
        let mut sub2 = server.connect().await;
        sub2.check(
            b"SUBSCRIBE other\r\n",
            b"*3\r\n$9\r\nsubscribe\r\n$5\r\nother\r\n:1\r\n",
        )
        .await;
        blocked.check(b"PUBLISH other yo\r\n", b":1\r\n").await;
        sub2.expect(b"*3\r\n$7\r\nmessage\r\n$5\r\nother\r\n$2\r\nyo\r\n")
            .await;

        // A script runs in a task: its reply, then the connection goes on answering, with
        // the request pipelined behind it.
        a.check(b"EVAL \"return 7\" 0\r\nPING\r\n", b":7\r\n+PONG\r\n")
            .await;

        // CLIENT KILL of an idle loop connection closes it.
        let mut idle = server.connect().await;
        let id = client_id(&mut idle).await;
        let mut killer = server.connect().await;
        killer
            .check(format!("CLIENT KILL ID {id}\r\n").as_bytes(), b":1\r\n")
            .await;
        idle.expect_closed().await;

        // QUIT: the replies before it, +OK, then the close; what follows is not run.
        killer
            .check(b"PING\r\nQUIT\r\nPING\r\n", b"+PONG\r\n+OK\r\n")
            .await;
        killer.expect_closed().await;
    }
}

/// A client the loop handed to a task (it blocked, it ran a script, it unsubscribed) comes
/// back to the loop once it waits on nothing but its socket, so requests from two clients
/// run in the order they arrived, as on redis-server: a write sent on one connection and a
/// read sent after it on another (no reply awaited in between) sees the write. On a task
/// thread beside the loop's, the read could overtake the write (Redis's own stream-cgroups
/// and list tests lost this race now and then); likewise an EXEC the loop handed to a task.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_back_from_a_task_is_served_in_arrival_order() {
    for transport in TRANSPORTS {
        let server = TestServer::start(transport, ServerConfig::default()).await;
        let mut reader = server.connect().await;
        // Each of these hands the reader to a task for a while.
        reader.check(b"BLPOP nothing 0.01\r\n", b"*-1\r\n").await;
        reader.check(b"EVAL \"return 1\" 0\r\n", b":1\r\n").await;
        reader
            .check(
                b"SUBSCRIBE c\r\n",
                b"*3\r\n$9\r\nsubscribe\r\n$1\r\nc\r\n:1\r\n",
            )
            .await;
        reader
            .check(
                b"UNSUBSCRIBE c\r\n",
                b"*3\r\n$11\r\nunsubscribe\r\n$1\r\nc\r\n:0\r\n",
            )
            .await;
        // A round trip first: the writer is on the loop (accepted, registered) before it
        // sends the first write.
        let mut writer = server.connect().await;
        writer.check(b"PING\r\n", b"+PONG\r\n").await;
        for i in 0..300 {
            let value = i.to_string();
            writer.send(&resp(&[b"SET", b"k", value.as_bytes()])).await;
            reader.send(b"GET k\r\n").await;
            let want = format!("${}\r\n{value}\r\n", value.len());
            reader.expect(want.as_bytes()).await;
            writer.expect(b"+OK\r\n").await;
        }
        // The other way round, through a transaction: an EXEC sent before a write runs
        // before it (a transaction without a script stays on the loop).
        for i in 0..100 {
            let old = format!("old{i}");
            writer
                .check(&resp(&[b"SET", b"k", old.as_bytes()]), b"+OK\r\n")
                .await;
            reader
                .check(b"MULTI\r\nGET k\r\n", b"+OK\r\n+QUEUED\r\n")
                .await;
            reader.send(b"EXEC\r\n").await;
            writer.send(b"SET k new\r\n").await;
            let want = format!("*1\r\n${}\r\n{old}\r\n", old.len());
            reader.expect(want.as_bytes()).await;
            writer.expect(b"+OK\r\n").await;
        }
    }
}

//! The engine in-process: commands in as arguments, replies out as values, no socket and no
//! RESP in between; then one reply encoded as a RESP2 and a RESP3 client would receive it.
//!
//! Run with `cargo run -p edgebench-engine --example embedded`. It checks every reply and
//! exits non-zero when one is not Redis's, so CI runs it.

use edgebench_engine::resp::{self, Protocol};
use edgebench_engine::{Engine, Reply};

fn main() {
    let engine = Engine::new();
    // One client is one connection's state: its database, MULTI queue, protocol version.
    let mut client = engine.client();
    let mut run = |args: &[&str]| -> Reply {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let reply = engine.execute(&mut client, &argv);
        println!("{:<36} -> {reply:?}", args.join(" "));
        reply
    };

    let checks: &[(&[&str], Reply)] = &[
        (&["SET", "greeting", "hello"], Reply::ok()),
        (&["GET", "greeting"], Reply::bulk(b"hello")),
        (&["APPEND", "greeting", " world"], Reply::Int(11)),
        (&["INCRBY", "visits", "41"], Reply::Int(41)),
        (&["INCR", "visits"], Reply::Int(42)),
        (&["RPUSH", "queue", "a", "b", "c"], Reply::Int(3)),
        (&["LPOP", "queue"], Reply::bulk(b"a")),
        (&["HSET", "device:1", "temp", "21.5"], Reply::Int(1)),
        (&["HGET", "device:1", "temp"], Reply::bulk(b"21.5")),
        (&["ZADD", "board", "3", "carol", "5", "dave"], Reply::Int(2)),
        (
            &["ZRANGE", "board", "0", "-1"],
            Reply::Array(vec![Reply::bulk(b"carol"), Reply::bulk(b"dave")]),
        ),
        (&["EXPIRE", "greeting", "100"], Reply::Int(1)),
        (&["TTL", "greeting"], Reply::Int(100)),
        (&["MULTI"], Reply::ok()),
        (&["INCR", "visits"], Reply::queued()),
        (&["EXEC"], Reply::Array(vec![Reply::Int(43)])),
        (
            &["LPUSH", "greeting", "x"],
            Reply::err("WRONGTYPE Operation against a key holding the wrong kind of value"),
        ),
        (&["DEL", "greeting", "visits", "nosuchkey"], Reply::Int(2)),
        (&["GET", "greeting"], Reply::Nil),
    ];
    let mut failed = 0;
    for (args, expected) in checks {
        let got = run(args);
        if &got != expected {
            eprintln!("  expected {expected:?}");
            failed += 1;
        }
    }

    // The same reply as bytes, for a RESP2 and a RESP3 client (what the RESP server writes).
    let scores = run(&["ZSCORE", "board", "dave"]);
    let resp2 = resp::encode::to_bytes(&scores, Protocol::Resp2);
    let resp3 = resp::encode::to_bytes(&scores, Protocol::Resp3);
    println!("ZSCORE as RESP2: {:?}", String::from_utf8_lossy(&resp2));
    println!("ZSCORE as RESP3: {:?}", String::from_utf8_lossy(&resp3));
    for (got, expected) in [(&resp2[..], &b"$1\r\n5\r\n"[..]), (&resp3, b",5\r\n")] {
        if got != expected {
            eprintln!(
                "  expected {:?}, got {:?}",
                String::from_utf8_lossy(expected),
                String::from_utf8_lossy(got)
            );
            failed += 1;
        }
    }

    if failed > 0 {
        eprintln!("{failed} replies differ from Redis's");
        std::process::exit(1);
    }
    println!("all replies as Redis gives them");
}

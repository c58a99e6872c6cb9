//! The commands each call sends, one request per round trip, against storage-layouts.md §B.4
//! and §B.5: a recording wrapper around the engine's connection (the sequence is the store's,
//! whatever the transport).

use redis::{Arg, Cmd, ConnectionLike, RedisResult, Value};

use super::*;
use crate::resp::RequestParser;

/// A connection that records every round trip (its commands, each a list of arguments).
struct Recorder<C> {
    inner: C,
    trips: Vec<Vec<Vec<String>>>,
}

impl<C> Recorder<C> {
    fn record_packed(&mut self, mut bytes: &[u8]) {
        let mut commands = Vec::new();
        let mut parser = RequestParser::default();
        while !bytes.is_empty() {
            let request = parser
                .parse(bytes, true)
                .expect("redis-rs packs valid RESP")
                .expect("redis-rs packs whole commands");
            commands.push(request.args().map(text).collect());
            bytes = &bytes[request.consumed()..];
        }
        self.trips.push(commands);
    }

    /// The round trips since the last call.
    fn take(&mut self) -> Vec<Vec<Vec<String>>> {
        std::mem::take(&mut self.trips)
    }
}

fn text(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).into_owned()
}

/// Pipelines go through redis-rs's packing, so the recorder sees the bytes a socket gets.
impl<C: ConnectionLike + Send> StoreConnection for Recorder<C> {}

impl<C: ConnectionLike> ConnectionLike for Recorder<C> {
    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        let args = cmd.args_iter().map(|arg| match arg {
            Arg::Simple(bytes) => text(bytes),
            _ => "<cursor>".to_owned(),
        });
        self.trips.push(vec![args.collect()]);
        self.inner.req_command(cmd)
    }

    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.record_packed(cmd);
        self.inner.req_packed_command(cmd)
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.record_packed(cmd);
        self.inner.req_packed_commands(cmd, offset, count)
    }

    fn get_db(&self) -> i64 {
        self.inner.get_db()
    }

    fn check_connection(&mut self) -> bool {
        self.inner.check_connection()
    }

    fn is_open(&self) -> bool {
        self.inner.is_open()
    }
}

type Store = Redis3Store<Recorder<EngineConnection>>;

fn store() -> Store {
    Redis3Store::new(Recorder {
        inner: EngineConnection::new(Engine::new()),
        trips: Vec::new(),
    })
}

fn trips(store: &mut Store) -> Vec<Vec<Vec<String>>> {
    store.conn.take()
}

/// Each round trip as its command names.
fn names(trips: &[Vec<Vec<String>>]) -> Vec<Vec<&str>> {
    trips
        .iter()
        .map(|trip| trip.iter().map(|args| args[0].as_str()).collect())
        .collect()
}

/// One round trip of one command, given as its arguments.
fn one(args: &[&str]) -> Vec<Vec<String>> {
    vec![args.iter().map(|a| a.to_string()).collect()]
}

/// `MULTI`, `body`, `EXEC` as command names.
fn multi<'a>(body: &[&'a str]) -> Vec<&'a str> {
    [&["MULTI"], body, &["EXEC"]].concat()
}

const UNLINK_READING: [&str; 6] = ["UNLINK", "ZREM", "ZREM", "ZREM", "ZREM", "ZREM"];
const UNLINK_EVENT: [&str; 5] = ["UNLINK", "UNLINK", "ZREM", "ZREM", "ZREM"];

#[test]
fn add_event_is_a_get_then_one_multi_exec_of_37_commands() {
    let mut store = store();
    let e = mixed_event();
    store.add_event(&e).expect("add");
    let sent = trips(&mut store);
    let key = keys::event(&e.id);
    assert_eq!(sent[0], one(&["GET", &key]));
    let per_reading = ["SET", "ZADD", "ZADD", "ZADD", "ZADD", "ZADD"];
    let body = [
        &["SET", "ZADD", "ZADD", "ZADD"],
        &per_reading.repeat(5)[..],
        &["ZADD"],
    ]
    .concat();
    // 5 + 6R + 2 with MULTI and EXEC (§B.4).
    assert_eq!(multi(&body).len(), 37);
    assert_eq!(names(&sent[1..]), [multi(&body)]);

    let pipeline = &sent[1];
    let origin = e.origin.to_string();
    assert_eq!(pipeline[2], ["ZADD", "cd|evt", &origin, &key]);
    assert_eq!(pipeline[3], ["ZADD", "cd|evt:origin", &origin, &key]);
    assert_eq!(
        pipeline[4],
        ["ZADD", "cd|evt:device:name:dev", &origin, &key]
    );
    let r = &e.readings[4];
    let (rkey, rorigin) = (keys::reading(&r.id), r.origin.to_string());
    let last_reading = &pipeline[5 + 4 * 6..5 + 5 * 6];
    assert_eq!(last_reading[1], ["ZADD", "cd|rd", "0", &rkey]);
    assert_eq!(last_reading[2], ["ZADD", "cd|rd:origin", &rorigin, &rkey]);
    assert_eq!(
        last_reading[3],
        ["ZADD", "cd|rd:deviceName:dev", &rorigin, &rkey]
    );
    assert_eq!(
        last_reading[4],
        ["ZADD", "cd|rd:resourceName:switch", &rorigin, &rkey]
    );
    let both = "cd|rd:deviceName:resourceName:dev:switch";
    assert_eq!(last_reading[5], ["ZADD", both, &rorigin, &rkey]);
    let mut positions = vec!["ZADD".to_owned(), keys::event_readings(&e.id)];
    for (j, r) in e.readings.iter().enumerate() {
        positions.extend([j.to_string(), keys::reading(&r.id)]);
    }
    assert_eq!(pipeline[pipeline.len() - 2], positions);

    assert!(store.add_event(&e).is_err());
    let readings_key = keys::event_readings(&e.id);
    let duplicate = trips(&mut store);
    assert_eq!(
        names(&duplicate),
        [["GET"], ["ZCOUNT"], ["ZRANGE"], ["MGET"]]
    );
    assert_eq!(
        duplicate[1],
        one(&["ZCOUNT", &readings_key, "-inf", "+inf"])
    );
    assert_eq!(duplicate[2], one(&["ZRANGE", &readings_key, "0", "-1"]));
}

#[test]
fn add_events_is_a_pipeline_of_gets_then_one_multi_exec_of_every_add() {
    let mut store = store();
    let events = six_events();
    store.add_events(&events).expect("add_events");
    let batched = trips(&mut store);
    let gets: Vec<Vec<String>> = events
        .iter()
        .map(|e| vec!["GET".to_owned(), keys::event(&e.id)])
        .collect();
    assert_eq!(batched.len(), 2);
    assert_eq!(batched[0], gets);
    // The body is every add_event's body, command for command and byte for byte.
    store.scrub().expect("scrub");
    trips(&mut store);
    add_all(&mut store, &events);
    let one_by_one = trips(&mut store);
    assert_eq!(names(&one_by_one).len(), 2 * events.len());
    let mut bodies = vec![vec!["MULTI".to_owned()]];
    for (get, add) in gets.iter().zip(one_by_one.chunks(2)) {
        assert_eq!(add[0], std::slice::from_ref(get));
        bodies.extend_from_slice(&add[1][1..add[1].len() - 1]);
    }
    bodies.push(vec!["EXEC".to_owned()]);
    assert_eq!(batched[1], bodies);
    assert_eq!(bodies.len(), 2 + 6 * (5 + 6 * 2));

    // A stored id: the checks, then the stored event's readings (as add_event), no write.
    let fresh = numbered(20, "d2", T0, &["r0"]);
    let refused = [fresh, events[3].clone()];
    assert!(store.add_events(&refused).is_err());
    assert_eq!(
        names(&trips(&mut store)),
        [
            vec!["GET", "GET"],
            vec!["ZCOUNT"],
            vec!["ZRANGE"],
            vec!["MGET"]
        ]
    );
    store.add_events(&[]).expect("an empty batch");
    assert_eq!(trips(&mut store), Vec::<Vec<Vec<String>>>::new());
}

#[test]
fn reads_send_edgexs_commands_one_per_round_trip() {
    let mut store = store();
    add_all(&mut store, &six_events());
    trips(&mut store);

    store.event_by_id(&event_id(1)).expect("by id");
    let readings_key = keys::event_readings(&event_id(1));
    assert_eq!(
        trips(&mut store),
        [
            one(&["GET", &keys::event(&event_id(1))]),
            one(&["ZCOUNT", &readings_key, "-inf", "+inf"]),
            one(&["ZRANGE", &readings_key, "0", "-1"]),
            one(&[
                "MGET",
                &keys::reading(&reading_id(1, 0)),
                &keys::reading(&reading_id(1, 1))
            ]),
        ]
    );

    store.events(Filter::all(), page(2, 2)).expect("events");
    let sent = trips(&mut store);
    assert_eq!(sent[0], one(&["ZCOUNT", "cd|evt", "-inf", "+inf"]));
    assert_eq!(sent[1], one(&["ZREVRANGE", "cd|evt", "2", "3"]));
    assert_eq!(
        names(&sent[2..]),
        [
            ["MGET"],
            ["ZCOUNT"],
            ["ZRANGE"],
            ["MGET"],
            ["ZCOUNT"],
            ["ZRANGE"],
            ["MGET"]
        ]
    );

    let (s, e) = (T0.to_string(), (T0 + 3 * MS).to_string());
    store
        .events(
            Filter::device("d1").between(T0, T0 + 3 * MS),
            page(1, UNLIMITED),
        )
        .expect("events");
    let sent = trips(&mut store);
    assert_eq!(sent[0], one(&["ZCOUNT", "cd|evt:device:name:d1", &s, &e]));
    let by_score = [
        "ZREVRANGEBYSCORE",
        "cd|evt:device:name:d1",
        &e,
        &s,
        "LIMIT",
        "1",
        "-1",
    ];
    assert_eq!(sent[1], one(&by_score));
    assert_eq!(
        names(&sent[2..]),
        [["MGET"], ["ZCOUNT"], ["ZRANGE"], ["MGET"]]
    );

    store.readings(Filter::all(), Page::ALL).expect("readings");
    let sent = trips(&mut store);
    assert_eq!(sent[0], one(&["ZCOUNT", "cd|rd:origin", "-inf", "+inf"]));
    assert_eq!(sent[1], one(&["ZREVRANGE", "cd|rd:origin", "0", "-1"]));
    assert_eq!(names(&sent[2..]), [["MGET"]]);

    let both = Filter {
        resource: Some("r0"),
        ..Filter::device("d0")
    };
    store
        .readings(both.between(T0, T0 + 3 * MS), page(0, 5))
        .expect("readings");
    let sent = trips(&mut store);
    let key = "cd|rd:deviceName:resourceName:d0:r0";
    assert_eq!(sent[0], one(&["ZCOUNT", key, &s, &e]));
    assert_eq!(
        sent[1],
        one(&["ZREVRANGEBYSCORE", key, &e, &s, "LIMIT", "0", "5"])
    );

    store.events(Filter::all(), page(0, 0)).expect("events");
    store
        .events(Filter::device("nobody"), Page::ALL)
        .expect("events");
    assert_eq!(
        trips(&mut store),
        [one(&[
            "ZCOUNT",
            "cd|evt:device:name:nobody",
            "-inf",
            "+inf"
        ])]
    );
}

#[test]
fn counts_are_one_zcard_or_zcount() {
    let mut store = store();
    let (s, e) = (T0.to_string(), (T0 + MS).to_string());
    let expected = [
        (Filter::all(), false, one(&["ZCARD", "cd|evt"])),
        (
            Filter::device("d"),
            false,
            one(&["ZCARD", "cd|evt:device:name:d"]),
        ),
        (
            Filter::all().between(T0, T0 + MS),
            false,
            one(&["ZCOUNT", "cd|evt:origin", &s, &e]),
        ),
        (Filter::all(), true, one(&["ZCARD", "cd|rd"])),
        (
            Filter::resource("r"),
            true,
            one(&["ZCARD", "cd|rd:resourceName:r"]),
        ),
        (
            Filter::all().between(T0, T0 + MS),
            true,
            one(&["ZCOUNT", "cd|rd:origin", &s, &e]),
        ),
        (
            Filter::device("d").between(T0, T0 + MS),
            true,
            one(&["ZCOUNT", "cd|rd:deviceName:d", &s, &e]),
        ),
    ];
    for (filter, readings, command) in expected {
        let count = if readings {
            store.reading_count(filter)
        } else {
            store.event_count(filter)
        };
        assert_eq!(count.expect("count"), 0);
        assert_eq!(trips(&mut store), [command], "{filter:?}");
    }
}

#[test]
fn deletes_send_edgexs_sequences() {
    let mut store = store();
    add_all(&mut store, &six_events());
    trips(&mut store);

    store.delete_event_by_id(&event_id(1)).expect("delete");
    let sent = trips(&mut store);
    let reading = multi(&UNLINK_READING);
    let event = multi(&UNLINK_EVENT);
    let expected: Vec<Vec<&str>> = vec![
        vec!["GET"],
        vec!["ZCOUNT"],
        vec!["ZRANGE"],
        vec!["MGET"],
        vec!["GET"],
        reading.clone(),
        vec!["GET"],
        reading.clone(),
        event.clone(),
    ];
    assert_eq!(names(&sent), expected);
    let rkey = keys::reading(&reading_id(1, 1));
    assert_eq!(sent[7][5], ["ZREM", "cd|rd:resourceName:r1", &rkey]);
    let ekey = keys::event(&event_id(1));
    assert_eq!(sent[8][5], ["ZREM", "cd|evt:device:name:d1", &ekey]);

    store
        .delete_events(Doomed::Device("d1"))
        .expect("delete d1");
    let sent = trips(&mut store);
    assert_eq!(
        sent[0],
        one(&["ZRANGEBYSCORE", "cd|evt:device:name:d1", "(0", "+inf"])
    );
    let expected: Vec<Vec<&str>> = vec![
        vec!["ZRANGEBYSCORE"],
        vec!["ZRANGE"],
        vec!["ZRANGE"],
        vec!["MGET"],
        multi(&UNLINK_READING.repeat(4)),
        vec!["MGET"],
        multi(&UNLINK_EVENT.repeat(2)),
    ];
    assert_eq!(names(&sent), expected);

    store
        .delete_events(Doomed::OlderThan { age_ns: 0 })
        .expect("delete by age");
    let sent = trips(&mut store);
    let max: i64 = sent[0][0][3].parse().expect("a decimal integer");
    assert_eq!(sent[0][0][..3], ["ZRANGEBYSCORE", "cd|evt:origin", "0"]);
    assert!(
        (now_ns() - 60 * 1_000 * MS..=now_ns()).contains(&max),
        "{max}"
    );
}

#[test]
fn bulk_deletes_exec_every_thousand_records() {
    let mut store = store();
    let resources = ["a", "b", "c", "d", "e"];
    let many: Vec<Event> = (0..201)
        .map(|n| numbered(n, "big", T0 + n as i64 * MS, &resources))
        .collect();
    add_all(&mut store, &many);
    trips(&mut store);

    store.delete_events(Doomed::Device("big")).expect("delete");
    let sent = trips(&mut store);
    // ZRANGEBYSCORE, 201 ZRANGE, then MGET + 2 batches for 1005 readings and for 201 events.
    let sizes: Vec<usize> = sent[202..].iter().map(Vec::len).collect();
    assert_eq!(sizes, [1, 1000 * 6 + 2, 5 * 6 + 2, 1, 201 * 5 + 2]);
    assert_eq!(sent[202][0].len(), 1 + 1005);
    assert!(names(&sent[1..202]).iter().all(|trip| *trip == ["ZRANGE"]));
}

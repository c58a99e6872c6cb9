//! `test_group` runs against the in-process engine and a real redis-server: each data
//! structure's operations are checked in the store afterwards (sizes, TTLs, stream lengths,
//! queue order), `&` groups really run at the same time, results files are written whole, and
//! the CLI refuses what it cannot do with one line.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use edgebench::engine::{Engine, EngineConnection};
use edgebench::perf::run::run_group_test;
use edgebench::perf::{GroupTestConfig, Properties};
use edgebench::target::Connector;
use redis::ConnectionLike;

use crate::common;

fn config(text: &str) -> GroupTestConfig {
    let props = Properties::parse(text, "test.properties").unwrap_or_else(|e| panic!("{e}"));
    GroupTestConfig::from_properties(&props, 2).unwrap_or_else(|e| panic!("{e}"))
}

fn engine_connector(engine: &Engine) -> Box<Connector> {
    let engine = engine.clone();
    Box::new(move || {
        Ok(Box::new(EngineConnection::new(engine.clone())) as Box<dyn ConnectionLike + Send>)
    })
}

fn run(cfg: &GroupTestConfig, connect: &Connector, dir: &Path) -> Vec<String> {
    let stop = AtomicBool::new(false);
    let mut status: Vec<u8> = Vec::new();
    let runs = run_group_test(cfg, connect, "engine", dir, &stop, &mut status)
        .unwrap_or_else(|e| panic!("{e}"));
    runs.into_iter().map(|(r, _)| r.group).collect()
}

fn query<T: redis::FromRedisValue>(con: &mut dyn ConnectionLike, args: &[&str]) -> T {
    let mut cmd = redis::cmd(args[0]);
    for a in &args[1..] {
        cmd.arg(*a);
    }
    cmd.query(con).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

const EVERY_STRUCTURE: &str = "
groupNames=g1,g2
g1.threadCount=2
g1.totalInvocationCount=40
g1.operations=put1,putall1,cache1,add1,offer1,publish1,rpublish1,spublish1,nap1
g2.threadCount=1
g2.totalInvocationCount=10
g2.operations=poll1,get1,remove1
put1.map=map1
put1.testCase=put
put1.payloadSize=16
put1.totalEntryCount=40
putall1.map=map2
putall1.testCase=putall
putall1.batchSize=5
putall1.totalEntryCount=20
putall1.payloadSize=8
cache1.mcache=mc1
cache1.testCase=put
cache1.ttlInSec=100
cache1.payloadSize=4
add1.list=list1
add1.testCase=add
add1.payloadSize=4
offer1.queue=queue1
offer1.testCase=offer
offer1.payloadSize=4
publish1.topic=topic1
publish1.testCase=publishall
publish1.batchSize=3
rpublish1.rtopic=rtopic1
rpublish1.testCase=publish
spublish1.stopic=stopic1
spublish1.testCase=publish
nap1.sleep=1
poll1.queue=queue1
poll1.testCase=poll
get1.map=map1
get1.testCase=get
get1.totalEntryCount=40
remove1.list=list1
remove1.testCase=remove
remove1.payloadSize=4
";

#[test]
fn every_data_structure_leaves_what_its_operations_wrote() {
    let engine = Engine::new();
    let connect = engine_connector(&engine);
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(EVERY_STRUCTURE);
    assert_eq!(run(&cfg, &*connect, dir.path()), ["g1", "g2"]);
    let mut con = connect().unwrap();
    let con = con.as_mut();
    // put: keys k1..k40, one per invocation, 16-byte zero payloads.
    assert_eq!(query::<i64>(con, &["HLEN", "map1"]), 40);
    assert_eq!(
        query::<Vec<u8>>(con, &["HGET", "map1", "k40"]),
        vec![0u8; 16]
    );
    // putall: round robin over each thread's 10 keys: all 20 keys written.
    assert_eq!(query::<i64>(con, &["HLEN", "map2"]), 20);
    // mcache: one string per entry, with the TTL.
    let ttl: i64 = query(con, &["TTL", "mc1:k7"]);
    assert!((90..=100).contains(&ttl), "{ttl}");
    // list: 40 adds, then g2 removed 10 equal elements.
    assert_eq!(query::<i64>(con, &["LLEN", "list1"]), 30);
    // queue: 40 offers, 10 polls from the head.
    assert_eq!(query::<i64>(con, &["LLEN", "queue1"]), 30);
    // rtopic: a stream entry per publish.
    assert_eq!(query::<i64>(con, &["XLEN", "rtopic1"]), 40);
    // Results files, one per group, with PadoGrid's names and our percentiles.
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names[0].starts_with("group-g1-engine-") && names[0].ends_with(".txt"));
    let text = std::fs::read_to_string(dir.path().join(&names[0])).unwrap();
    assert!(
        text.contains("Actual Total Number of Invocations: 40\n"),
        "{text}"
    );
    assert!(text.contains("   put1: samples 40, p50 "), "{text}");
}

#[test]
fn the_queue_is_first_in_first_out() {
    let engine = Engine::new();
    let connect = engine_connector(&engine);
    let mut con = connect().unwrap();
    for v in ["a", "b", "c"] {
        let _: i64 = query(con.as_mut(), &["RPUSH", "q", v]);
    }
    let cfg = config(
        "groupNames=g1\ng1.threadCount=1\ng1.totalInvocationCount=2\ng1.operations=poll1\n\
         poll1.queue=q\npoll1.testCase=poll\n",
    );
    run(&cfg, &*connect, tempfile::tempdir().unwrap().path());
    assert_eq!(
        query::<Vec<String>>(con.as_mut(), &["LRANGE", "q", "0", "-1"]),
        ["c"]
    );
}

#[test]
fn groups_joined_by_ampersand_run_at_the_same_time_and_commas_one_after_another() {
    let engine = Engine::new();
    let connect = engine_connector(&engine);
    let sleeper = "g1.threadCount=1\ng1.totalInvocationCount=1\ng1.operations=nap\n\
                   g2.threadCount=1\ng2.totalInvocationCount=1\ng2.operations=nap\nnap.sleep=400\n";
    // Each group's own [start, stop] (PadoGrid's Start Time and Stop Time), by group.
    let spans = |names: &str| {
        let cfg = config(&format!("groupNames={names}\n{sleeper}"));
        let stop = AtomicBool::new(false);
        let dir = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let mut runs = run_group_test(
            &cfg,
            &*connect,
            "engine",
            dir.path(),
            &stop,
            &mut Vec::new(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let elapsed = started.elapsed();
        runs.sort_by(|a, b| a.0.group.cmp(&b.0.group));
        let spans: Vec<_> = runs
            .iter()
            .map(|(r, _)| (r.start.local, r.stop.local))
            .collect();
        (spans, elapsed)
    };
    // Two 400 ms groups: together their runs overlap; in sequence g2 starts after g1 stopped
    // and the whole takes at least two sleeps.
    let (t, _) = spans("g1&g2");
    assert!(t[0].0 < t[1].1 && t[1].0 < t[0].1, "g1&g2 overlap: {t:?}");
    let (a, apart) = spans("g1,g2");
    assert!(a[1].0 >= a[0].1, "g1,g2 one after another: {a:?}");
    assert!(apart >= Duration::from_millis(800), "{apart:?}");
}

#[test]
fn a_group_runs_against_a_real_redis_server_too() {
    common::require_redis_server();
    let target = common::start("redis-tcp");
    let endpoint = target.redis_endpoint().unwrap();
    let connect: Box<Connector> = Box::new(move || {
        edgebench::target::connect(&endpoint, Duration::from_secs(5))
            .map(|c| Box::new(c) as Box<dyn ConnectionLike + Send>)
            .map_err(|e| e.to_string())
    });
    let cfg = config(
        "groupNames=g1\ng1.threadCount=2\ng1.totalInvocationCount=100\ng1.operations=put1,s1\n\
         put1.map=map1\nput1.testCase=put\nput1.payloadSize=10\ns1.stopic=ch\ns1.testCase=publishall\ns1.batchSize=2\n",
    );
    run(&cfg, &*connect, tempfile::tempdir().unwrap().path());
    let mut con = connect().unwrap();
    assert_eq!(query::<i64>(con.as_mut(), &["HLEN", "map1"]), 100);
    let info: String = query(con.as_mut(), &["INFO", "commandstats"]);
    assert!(info.contains("cmdstat_spublish:calls=200,"), "{info}");
}

#[test]
fn the_cli_prints_the_configuration_without_run_and_refuses_bad_input_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let etc = Path::new(env!("CARGO_MANIFEST_DIR")).join("etc");
    let out = crate::common::edgebench()
        .current_dir(dir.path())
        .args(["perf", "test_group", "-prop"])
        .arg(etc.join("group.properties"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout.contains("   stage 1: g1 & g2\n"), "{stdout}");
    assert!(
        stdout.ends_with("To run the test, specify the '-run' option.\n"),
        "{stdout}"
    );

    let group_props = etc.join("group.properties");
    let group_props = group_props.to_str().unwrap();
    let bad = dir.path().join("bad.properties");
    std::fs::File::create(&bad)
        .unwrap()
        .write_all(b"g1.threadCount=2\n")
        .unwrap();
    for (args, want) in [
        (
            vec!["perf", "test_group", "-bogus"],
            "edgebench: unknown flag \"-bogus\"",
        ),
        (
            vec!["perf", "test_group", "-db", "-prop", group_props],
            "edgebench: ERROR: data object factory not set for group g1, operation put1.",
        ),
        (
            vec!["perf", "nope"],
            "edgebench: unknown perf tool \"nope\": use test_group, test_ingestion, test_tx, \
             create_csv, clean_results or create_group_config",
        ),
        (
            vec!["perf", "test_group", "-prop", bad.to_str().unwrap()],
            "edgebench: ",
        ),
    ] {
        let out = crate::common::edgebench()
            .current_dir(dir.path())
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.starts_with(want), "{stderr}");
    }
}

#[test]
fn factories_write_entities_and_every_order_names_an_existing_customer() {
    let engine = Engine::new();
    let connect = engine_connector(&engine);
    // etc/group-factory-er.properties, smaller, then a get and a getall of the customers.
    let cfg = config(
        "groupNames=g1,g2\n\
         g1.threadCount=2\ng1.totalInvocationCount=20\ng1.operations=set1\n\
         g2.threadCount=1\ng2.totalInvocationCount=5\ng2.operations=get1,getall1\n\
         set1.map=nw/customers\nset1.testCase=set\nset1.key.startNum=0\nset1.key.prefix=000000-\n\
         set1.factory.class=org.redis.demo.nw.impl.CustomerFactoryImpl\n\
         set1.factory.key.isRandom=false\nset1.factory.key.length=11\n\
         set1.factory.key.isLeadingZeros=true\nset1.factory.er.operation=set2\n\
         set1.factory.er.isRandom=true\nset1.factory.er.maxKeys=5\n\
         set2.map=nw/orders\nset2.ref=set1\n\
         set2.factory.class=org.redis.demo.nw.impl.OrderFactoryImpl\n\
         set2.factory.key.isRandom=false\nset2.factory.key.length=11\n\
         set2.factory.key.isLeadingZeros=true\n\
         get1.ref=set1\nget1.testCase=get\nget1.totalEntryCount=20\n\
         getall1.ref=set1\ngetall1.testCase=getall\ngetall1.totalEntryCount=20\ngetall1.batchSize=4\n",
    );
    run(&cfg, &*connect, tempfile::tempdir().unwrap().path());
    let mut con = connect().unwrap();
    let json = |s: &str| -> serde_json::Value { serde_json::from_str(s).unwrap() };
    let customers: std::collections::HashMap<String, String> =
        query(con.as_mut(), &["HGETALL", "nw/customers"]);
    assert_eq!(customers.len(), 20, "one Customer per set");
    for (key, value) in &customers {
        let c = json(value);
        assert_eq!(c["customerId"], key.as_str(), "{value}");
        assert!(!c["companyName"].as_str().unwrap().is_empty(), "{value}");
    }
    let orders: std::collections::HashMap<String, String> =
        query(con.as_mut(), &["HGETALL", "nw/orders"]);
    assert!(
        (20..=100).contains(&orders.len()),
        "1..=5 Orders per Customer: {}",
        orders.len()
    );
    for (key, value) in &orders {
        let o = json(value);
        assert_eq!(o["orderId"], key.as_str(), "{value}");
        let customer = o["customerId"].as_str().unwrap();
        assert!(
            customers.contains_key(customer),
            "Order {key} names {customer}, which is not a Customer"
        );
    }
}

#[test]
fn list_and_delete_cover_only_what_the_groups_use_and_delete_needs_run() {
    common::require_redis_server();
    let target = common::start("redis-tcp");
    let endpoint = target.redis_endpoint().unwrap();
    let edgebench::target::Endpoint::Tcp { host, port } = &endpoint else {
        panic!("redis-tcp has a TCP endpoint");
    };
    let url = format!("redis://{host}:{port}");
    let mut con = edgebench::target::connect(&endpoint, Duration::from_secs(5)).unwrap();
    let fill = |con: &mut dyn ConnectionLike| {
        for map in ["map1", "map2"] {
            let _: i64 = query(con, &["HSET", map, "k", "v"]);
        }
    };
    fill(&mut con);
    let dir = tempfile::tempdir().unwrap();
    // put2 takes its settings from put1 by `ref`, but only g2 (put2, map2) runs.
    let prop = dir.path().join("g.properties");
    std::fs::write(
        &prop,
        "groupNames=g2\ng2.threadCount=1\ng2.totalInvocationCount=3\ng2.operations=put2\n\
         put1.map=map1\nput1.testCase=put\nput2.ref=put1\nput2.map=map2\n",
    )
    .unwrap();
    let perf = |flags: &[&str]| {
        let out = crate::common::edgebench()
            .current_dir(dir.path())
            .args(["perf", "test_group"])
            .args(flags)
            .arg("-prop")
            .arg(&prop)
            .args(["--target", &url])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{flags:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    // -list names map2 only.
    let listed = perf(&["-list"]);
    assert!(
        listed.contains("  - name: map2\n    data: Map\n    size: 1\n"),
        "PadoGrid's layout: {listed}"
    );
    assert!(!listed.contains("map1"), "{listed}");
    // -delete without -run only lists, as PadoGrid: nothing is removed.
    let out = perf(&["-delete"]);
    assert!(out.contains("listing instead"), "{out}");
    assert_eq!(query::<i64>(&mut con, &["HLEN", "map2"]), 1);
    // -delete -run removes map2 (then the run writes 3 entries into it); map1 is untouched.
    let out = perf(&["-delete", "-run"]);
    assert!(
        out.contains("  - name: map2\n    data: Map\n    size: 1\n    deleted: true\n"),
        "{out}"
    );
    assert_eq!(query::<i64>(&mut con, &["HLEN", "map2"]), 3);
    assert_eq!(query::<i64>(&mut con, &["HLEN", "map1"]), 1);
}

#[test]
fn a_failing_group_keeps_the_results_of_the_groups_that_finished_beside_it() {
    let engine = Engine::new();
    let connect = engine_connector(&engine);
    let mut con = connect().unwrap();
    // HSET on a string key fails (WRONGTYPE): g1 fails, g2 beside it finishes.
    let () = query(con.as_mut(), &["SET", "notamap", "x"]);
    let cfg = config(
        "groupNames=g1&g2\n\
         g1.threadCount=1\ng1.totalInvocationCount=5\ng1.operations=bad\n\
         g2.threadCount=1\ng2.totalInvocationCount=5\ng2.operations=good\n\
         bad.map=notamap\nbad.testCase=put\ngood.map=map2\ngood.testCase=put\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let err = run_group_test(
        &cfg,
        &*connect,
        "engine",
        dir.path(),
        &stop,
        &mut Vec::new(),
    )
    .expect_err("g1 fails");
    assert!(err.to_string().contains("group g1, operation bad"), "{err}");
    let files: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].starts_with("group-g2-"), "{files:?}");
    assert_eq!(query::<i64>(con.as_mut(), &["HLEN", "map2"]), 5);
}

#[test]
fn every_run_is_followed_by_the_interval_as_padogrids_threads_wait() {
    let engine = Engine::new();
    let connect = engine_connector(&engine);
    let cfg = config(
        "testCount=2\ntestIntervalInMsec=300\ngroupNames=g1\n\
         g1.threadCount=1\ng1.totalInvocationCount=3\ng1.operations=put1\nput1.map=m\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let runs = run_group_test(
        &cfg,
        &*connect,
        "engine",
        dir.path(),
        &AtomicBool::new(false),
        &mut Vec::new(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let run = &runs[0].0;
    assert_eq!(run.actual_invocations, 6);
    // Two runs, each followed by a 300 ms wait: Elapsed holds both waits.
    assert!(run.elapsed_ms >= 600, "{} ms", run.elapsed_ms);
}

#[test]
fn the_status_line_is_padogrids_and_comes_once_more_at_the_end() {
    let engine = Engine::new();
    let connect = engine_connector(&engine);
    let cfg = config(
        "printStatusIntervalInSec=1\ngroupNames=g1\n\
         g1.threadCount=1\ng1.totalInvocationCount=1\ng1.operations=nap\nnap.sleep=1300\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let mut status: Vec<u8> = Vec::new();
    run_group_test(
        &cfg,
        &*connect,
        "engine",
        dir.path(),
        &AtomicBool::new(false),
        &mut status,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let status = String::from_utf8(status).unwrap();
    let lines: Vec<&str> = status.lines().collect();
    // A line at each 1 s tick (the nap lasts 1.3 s: at least one), and the final one.
    assert!(lines.len() >= 2, "{status}");
    for line in &lines {
        let (secs, rest) = line
            .strip_prefix('[')
            .and_then(|l| l.split_once(" sec] "))
            .unwrap_or_else(|| panic!("not PadoGrid's status line: {line}"));
        assert!(secs.parse::<u64>().is_ok(), "{line}");
        assert!(rest.starts_with("Invocation Count (g1): "), "{line}");
    }
    assert!(
        lines[lines.len() - 1].ends_with("] Invocation Count (g1): 1"),
        "{status}"
    );
}

#[test]
fn each_thread_connects_once_for_all_runs_as_padogrids_client_is_made_before_the_start() {
    let engine = Engine::new();
    let opened = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let counter = opened.clone();
    let connect: Box<Connector> = Box::new(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Box::new(EngineConnection::new(engine.clone())) as Box<dyn ConnectionLike + Send>)
    });
    let cfg = config(
        "testCount=3\ngroupNames=g1\n\
         g1.threadCount=2\ng1.totalInvocationCount=10\ng1.operations=put1\nput1.map=m\n",
    );
    let dir = tempfile::tempdir().unwrap();
    let runs = run_group_test(
        &cfg,
        &*connect,
        "engine",
        dir.path(),
        &AtomicBool::new(false),
        &mut Vec::new(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(runs[0].0.actual_invocations, 30);
    assert_eq!(
        opened.load(std::sync::atomic::Ordering::Relaxed),
        2,
        "one connection per thread"
    );
}

//! `edgebench perf` configuration: every shipped `etc/` file parses as Java parses it and
//! into its typed config; scheduling, `ref` inheritance, defaults and bad input.

use std::path::{Path, PathBuf};

use edgebench::perf::{
    ConfigError, DataStructure, GroupTestConfig, PbmMap, PbmTest, PbmTestCase, PbmTestConfig,
    Properties, TestCase,
};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn etc(name: &str) -> PathBuf {
    root().join("etc").join(name)
}

const SHIPPED: [&str; 15] = [
    "group.properties",
    "group-put.properties",
    "group-get.properties",
    "group-put-sleep.properties",
    "group-mcache.properties",
    "group-queue.properties",
    "group-list.properties",
    "group-topic.properties",
    "group-rtopic.properties",
    "group-stopic.properties",
    "group-factory.properties",
    "group-factory-er.properties",
    "ingestion.properties",
    "tx.properties",
    "group-template.properties",
];

/// `key=value` lines sorted by key, escaped as the Java dump escapes them.
fn dump(p: &Properties) -> String {
    let esc = |s: &str| {
        s.replace('\\', "\\\\")
            .replace('\n', "\\n")
            .replace('\t', "\\t")
            .replace('\r', "\\r")
            .replace('\x0c', "\\f")
    };
    let mut v: Vec<(&str, &str)> = p.iter().collect();
    v.sort();
    v.iter()
        .map(|(k, val)| format!("{}={}\n", esc(k), esc(val)))
        .collect()
}

fn java_parsed(file: &Path) -> String {
    let name = file.file_name().expect("name").to_string_lossy();
    let p = root()
        .join("tests/fixtures/perf/java-parsed")
        .join(format!("{name}.txt"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn every_shipped_file_parses_exactly_as_java_does() {
    let mut files: Vec<PathBuf> = SHIPPED.iter().map(|f| etc(f)).collect();
    files.push(root().join("tests/fixtures/perf/edge-cases.properties"));
    files.push(root().join("tests/fixtures/perf/edge-cases-crlf.properties"));
    for f in files {
        let p = Properties::load(&f).expect("parses");
        assert_eq!(dump(&p), java_parsed(&f), "{}", f.display());
    }
}

#[test]
fn every_shipped_group_file_builds_its_config() {
    for f in SHIPPED.iter().filter(|f| f.starts_with("group")) {
        let cfg = GroupTestConfig::from_properties(&Properties::load(&etc(f)).expect("parses"), 4)
            .unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(cfg.warnings.is_empty(), "{f}: {:?}", cfg.warnings);
        assert_eq!(cfg.print_status_interval_sec, 10, "{f}");
        for g in cfg.groups.values() {
            assert!(!g.operations.is_empty(), "{f}: {}", g.id);
        }
    }
    for (f, test) in [
        ("ingestion.properties", PbmTest::Ingestion),
        ("tx.properties", PbmTest::Tx),
    ] {
        let cfg =
            PbmTestConfig::from_properties(&Properties::load(&etc(f)).expect("parses"), test, 4)
                .unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(cfg.warnings.is_empty(), "{f}: {:?}", cfg.warnings);
    }
}

fn load(name: &str) -> GroupTestConfig {
    GroupTestConfig::from_properties(&Properties::load(&etc(name)).expect("parses"), 4)
        .expect("valid")
}

#[test]
fn group_properties_values() {
    let cfg = load("group.properties");
    assert_eq!(cfg.test_count, 1);
    assert_eq!(cfg.test_interval_ms, 0);
    assert_eq!(
        cfg.schedule.stages,
        vec![
            vec!["g1".to_string(), "g2".into()],
            vec!["g3".into(), "g4".into()]
        ]
    );
    let g1 = &cfg.groups["g1"];
    assert_eq!(g1.name.as_deref(), Some("Put Test"));
    assert_eq!((g1.thread_count, g1.total_invocation_count), (8, 100000));
    assert_eq!(g1.invocation_count_per_thread(), 12500);
    assert_eq!(g1.comment, "Map.put() test (1 KiB payload in map1)");
    let put1 = &cfg.operations["put1"];
    assert_eq!(
        (put1.data_structure, put1.ds_name.as_str()),
        (DataStructure::Map, "map1")
    );
    assert_eq!(put1.test_case, TestCase::Put);
    assert_eq!(
        (put1.payload_size, put1.batch_size, put1.total_entry_count),
        (1024, 100, 10000)
    );
    assert_eq!((put1.key_prefix.as_str(), put1.key_start_num), ("a", 1));
    // get1.ref=put1: the map, payload and keys come from put1; its own keys win.
    let get1 = &cfg.operations["get1"];
    assert_eq!(
        (get1.ds_name.as_str(), get1.test_case),
        ("map1", TestCase::Get)
    );
    assert_eq!(
        (get1.total_entry_count, get1.key_prefix.as_str()),
        (100000, "a")
    );
    assert_eq!(get1.refs, vec!["put1".to_string()]);
    let getall1 = &cfg.operations["getall1"];
    assert_eq!(
        (
            getall1.ds_name.as_str(),
            getall1.batch_size,
            getall1.total_entry_count
        ),
        ("map2", 100, 100000)
    );
}

#[test]
fn operation_order_and_repeats_are_kept() {
    let cfg = load("group-put-sleep.properties");
    assert_eq!(
        cfg.groups["g1"].operations,
        vec![
            "put1",
            "sleep10",
            "put2",
            "sleep200",
            "put3",
            "sleep1000",
            "put4"
        ]
    );
    assert_eq!(
        cfg.operations["sleep200"].data_structure,
        DataStructure::Sleep
    );
    assert_eq!(cfg.operations["sleep200"].sleep_ms, 200);
    assert_eq!(cfg.operations["put3"].ds_name, "map3");
    assert_eq!(cfg.operations["put3"].total_entry_count, 1000000);

    let text =
        "groupNames=g1\ng1.operations=a, b ,a,z0\na.map=m\nb.ref=a\nb.testCase=get\nz0.sleep=0\n";
    let cfg =
        GroupTestConfig::from_properties(&Properties::parse(text, "t.properties").expect("ok"), 2)
            .expect("ok");
    assert_eq!(
        cfg.groups["g1"].operations,
        vec!["a", "b", "a"],
        "order kept, repeats kept, 0 ms sleep dropped"
    );
    assert_eq!(cfg.groups["g1"].operations_raw, "a, b ,a,z0");
    assert_eq!(cfg.groups["g1"].thread_count, 3, "default (int)(2 * 1.5)");
    assert_eq!(cfg.groups["g1"].total_invocation_count, 10000);
}

#[test]
fn schedule_comma_and_ampersand() {
    let cfg = load("group-template.properties");
    assert_eq!(cfg.schedule.stages.len(), 6);
    assert_eq!(
        cfg.schedule.stages[5],
        vec!["g11".to_string(), "g12".into()]
    );
    assert_eq!(cfg.groups.len(), 12);
    let g10 = &cfg.groups["g10"];
    assert_eq!(
        (
            g10.thread_count,
            g10.total_invocation_count,
            g10.operations_raw.as_str()
        ),
        (8, 1000, "putall3")
    );
    assert_eq!(cfg.operations["putall3"].payload_size, 10240);
    assert_eq!(cfg.operations["getall3"].total_entry_count, 50000);
    assert_eq!(cfg.operations["get2"].payload_size, 2048);
    assert_eq!(
        edgebench::perf::Schedule::stage_label(&cfg.schedule.stages[0]),
        "g01 & g02"
    );
    let s = edgebench::perf::Schedule::parse(" a & b ,c").expect("ok");
    assert_eq!(
        s.stages,
        vec![vec!["a".to_string(), "b".into()], vec!["c".into()]]
    ); // Java's split drops trailing empty pieces: PadoGrid runs `g1,g2,` as `g1,g2`.
    let s = edgebench::perf::Schedule::parse("g1,g2&g3&,").expect("ok");
    assert_eq!(
        s.stages,
        vec![vec!["g1".to_string()], vec!["g2".into(), "g3".into()]]
    );
    assert!(edgebench::perf::Schedule::parse("g1,,g2").is_err());
    assert!(edgebench::perf::Schedule::parse(",").is_err());
}

#[test]
fn data_structures_and_test_cases_of_the_shipped_files() {
    let q = load("group-queue.properties");
    let cases: Vec<(TestCase, u32, u64)> = ["g1", "g2", "g3", "g4"]
        .iter()
        .map(|g| {
            let grp = &q.groups[*g];
            (
                q.operations[&grp.operations[0]].test_case,
                grp.thread_count,
                grp.total_invocation_count,
            )
        })
        .collect();
    assert_eq!(
        cases,
        vec![
            (TestCase::Offer, 8, 100000),
            (TestCase::Peek, 8, 100000),
            (TestCase::Take, 1, 50000),
            (TestCase::Poll, 8, 50000)
        ]
    );
    let l = load("group-list.properties");
    assert_eq!(
        (
            l.operations["add1"].data_structure,
            l.operations["add1"].ds_name.as_str()
        ),
        (DataStructure::List, "list1")
    );
    assert_eq!(l.operations["addall1"].test_case, TestCase::AddAll);
    for (f, ds) in [
        ("group-topic.properties", DataStructure::Topic),
        ("group-rtopic.properties", DataStructure::RTopic),
        ("group-stopic.properties", DataStructure::STopic),
    ] {
        let c = load(f);
        assert_eq!(c.operations["publishall1"].data_structure, ds);
        assert_eq!(c.operations["publishall1"].ds_name, format!("{ds}2"));
        assert_eq!(c.operations["publishall1"].test_case, TestCase::PublishAll);
        assert_eq!(c.groups["g2"].thread_count, 10);
    }
    let m = load("group-mcache.properties");
    assert_eq!(
        (
            m.operations["get1"].data_structure,
            m.operations["get1"].ds_name.as_str()
        ),
        (DataStructure::MCache, "mcache1")
    );
    assert_eq!(m.operations["put1"].ttl_sec, 300);
    let p = load("group-put.properties");
    assert_eq!(p.groups["g1"].operations.len(), 22);
    assert_eq!(
        (
            p.operations["put14"].total_entry_count,
            p.operations["put14"].batch_size
        ),
        (500000, 1000)
    );
    assert_eq!(p.operations["put22"].ds_name, "map22");
    let g = load("group-get.properties");
    assert_eq!(
        (
            g.groups["g1"].thread_count,
            g.operations["get22"].random_seed
        ),
        (500, 1)
    );
}

#[test]
fn factories_and_er() {
    let f = load("group-factory.properties");
    let set2 = &f.operations["set2"];
    assert_eq!(
        (set2.ds_name.as_str(), set2.test_case, set2.key_start_num),
        ("nw/orders", TestCase::Set, 0)
    );
    let fac = set2.factory.as_ref().expect("factory");
    assert_eq!(fac.kind, edgebench::perf::data::FactoryKind::Order);
    assert_eq!(fac.key.key(5), "000000-0005");
    assert!(fac.er.is_none());
    assert_eq!(fac.props.get("factory.key.length"), Some("11"));

    let er = load("group-factory-er.properties");
    assert_eq!(
        er.groups["g1"].comment,
        "Stores Customer objects into customers and Order objects to orders with up to 5 customers ER-mapped per order object."
    );
    let e = er.operations["set1"]
        .factory
        .as_ref()
        .and_then(|f| f.er.clone())
        .expect("er");
    assert_eq!(
        (e.operation.as_str(), e.max_keys, e.is_random),
        ("set2", 5, true)
    );
    assert!(
        er.operations.contains_key("set2"),
        "ER child parsed though no group lists it"
    );
}

#[test]
fn pbm_configs() {
    let i = PbmTestConfig::from_properties(
        &Properties::load(&etc("ingestion.properties")).expect("ok"),
        PbmTest::Ingestion,
        4,
    )
    .expect("ok");
    assert_eq!(
        (i.test_count, i.member_set_size, i.prefix.as_str()),
        (1, 5, "x")
    );
    let p = i.map(PbmMap::Profile).expect("profile");
    assert_eq!(
        (
            p.total_entry_count,
            p.payload_size,
            p.batch_size,
            p.thread_count
        ),
        (10000, 10240, 100, 16)
    );
    assert_eq!(p.entry_count_per_thread(), 625);
    let t = PbmTestConfig::from_properties(
        &Properties::load(&etc("tx.properties")).expect("ok"),
        PbmTest::Tx,
        4,
    )
    .expect("ok");
    assert_eq!(t.test_count, 5);
    assert_eq!(
        t.map(PbmMap::Eligibility).expect("e").test_case,
        PbmTestCase::Tx
    );
    assert_eq!(
        t.map(PbmMap::Profile).expect("p").test_case,
        PbmTestCase::GetAll
    );
    // Code defaults.
    let d =
        PbmTestConfig::from_properties(&Properties::parse("", "d").expect("ok"), PbmTest::Tx, 4)
            .expect("ok");
    assert_eq!(
        (
            d.member_set_size,
            d.maps.len(),
            d.maps[0].total_entry_count,
            d.maps[0].batch_size,
            d.maps[0].thread_count
        ),
        (10, 1, 100000, 1000, 6)
    );
    assert_eq!(d.maps[0].test_case, PbmTestCase::GetAll);
    let w = PbmTestConfig::from_properties(
        &Properties::parse("mapNames=Profile,profile\nprofile.testCase=tx", "w").expect("ok"),
        PbmTest::Tx,
        4,
    )
    .expect("ok");
    assert_eq!(w.maps.len(), 1);
    assert_eq!(w.maps[0].test_case, PbmTestCase::GetAll);
    assert_eq!(w.warnings, vec!["w: profile.testCase=tx is not valid for profile here (valid: getall, get); using getall as PadoGrid does"]);
}

fn err(text: &str) -> String {
    let p = Properties::parse(text, "etc/bad.properties").expect("syntax ok");
    GroupTestConfig::from_properties(&p, 4)
        .expect_err("must fail")
        .to_string()
}

#[test]
fn bad_input_gets_one_line_naming_key_and_file() {
    assert_eq!(
        err("testCount=1\n"),
        "etc/bad.properties: missing groupNames (list the groups to run, ',' for one after another and '&' for at the same time, e.g. groupNames=g1&g2,g3)"
    );
    assert_eq!(
        err("groupNames=g1\ng1.operations=put1\ng1.threadCount=eight\nput1.map=m"),
        "etc/bad.properties:3: g1.threadCount=\"eight\" is not a whole number from 1 to 2147483647"
    );
    assert_eq!(
        err("groupNames=g1\ng1.operations=put1\nput1.map=m\nput1.payloadSize=1k"),
        "etc/bad.properties:4: put1.payloadSize=\"1k\" is not a whole number from 0 to 2147483647"
    );
    assert_eq!(
        err("groupNames=g1\ng1.operations=put1\nput1.hashmap=m"),
        "etc/bad.properties:3: put1.hashmap=\"m\" is not a known operation key: the data structure key is one of map, mcache, topic, rtopic, stopic, list, queue, sleep (e.g. put1.map=map1); other keys are ref, testCase, payloadSize, batchSize, totalEntryCount, randomSeed, ttlInSec, dataStructure, key.*, factory.*"
    );
    assert_eq!(
        err("groupNames=g1\ng1.operations=put1\nput1.dataStructure=hash"),
        "etc/bad.properties:3: put1.dataStructure=\"hash\" is not a data structure: one of map, mcache, topic, rtopic, stopic, list, queue, sleep"
    );
    assert_eq!(
        err("groupNames=g1\ng1.operations=get1\nget1.ref=put9\n"),
        "etc/bad.properties: get1.ref names put9, but no put9.* keys are defined (define put9.<data structure>=<name> and put9.testCase, or fix the name)"
    );
    assert_eq!(
        err("groupNames=g1\ng1.operations=a\na.ref=b\nb.ref=c\nc.ref=a\n"),
        "etc/bad.properties: c.ref makes a ref cycle a -> b -> c -> a (remove one of these ref keys)"
    );
    assert_eq!(
        err("groupNames=g1,g2\ng1.operations=a\na.map=m\n"),
        "etc/bad.properties: groupNames names g2, but no g2.* keys are defined (define g2.operations, g2.threadCount and g2.totalInvocationCount, or remove g2 from groupNames)"
    );
    assert_eq!(
        err("groupNames=g1,,g2\n"),
        "etc/bad.properties:1: groupNames=\"g1,,g2\" is not a list of group ids joined by ',' (one after another) and '&' (at the same time), with no empty names, e.g. g1&g2,g3"
    );
    // PadoGrid's broken group-list.properties: add1 has no keys.
    assert_eq!(
        err("groupNames=g1\ng1.operations=add1\npublish1.topic=list1\npublish1.testCase=add\n"),
        "etc/bad.properties: g1.operations names add1, but no add1.* keys are defined (define add1.<data structure>=<name> and add1.testCase, or fix the name)"
    );
    assert_eq!(
        err("groupNames=g1\ng1.operations=a\na.map=m\na.factory.class=com.acme.FooFactory\n"),
        "etc/bad.properties:4: a.factory.class=\"com.acme.FooFactory\" is not a built-in factory: a class named CustomerFactoryImpl or OrderFactoryImpl (e.g. org.redis.demo.nw.impl.CustomerFactoryImpl)"
    );
    let missing =
        GroupTestConfig::load(Path::new("/nonexistent/group.properties")).expect_err("missing");
    assert!(matches!(missing, ConfigError::Properties(_)));
    assert!(missing
        .to_string()
        .starts_with("cannot read properties file /nonexistent/group.properties: "));
}

#[test]
fn invalid_test_case_falls_back_with_a_warning() {
    let p = Properties::parse("groupNames=g1\ng1.operations=a,q\na.map=m\na.testCase=PREDICATE\nq.queue=q1\nq.testCase=Poll\n", "w.properties").expect("ok");
    let cfg = GroupTestConfig::from_properties(&p, 4).expect("ok");
    assert_eq!(cfg.operations["a"].test_case, TestCase::PutAll);
    assert_eq!(
        cfg.operations["q"].test_case,
        TestCase::Poll,
        "case-insensitive"
    );
    assert_eq!(
        cfg.warnings,
        vec!["w.properties: a.testCase=PREDICATE is not a map test case (valid: putall, set, put, fastput, get, getall); using putall as PadoGrid documents"]
    );
    // A structure's own default when testCase is absent.
    let p = Properties::parse(
        "groupNames=g1\ng1.operations=l,t\nl.list=l1\nt.stopic=s1\n",
        "d",
    )
    .expect("ok");
    let cfg = GroupTestConfig::from_properties(&p, 4).expect("ok");
    assert_eq!(
        (cfg.operations["l"].test_case, cfg.operations["t"].test_case),
        (TestCase::Add, TestCase::PublishAll)
    );
    // First structure key in PadoGrid's order wins; `cache` is mcache; no key is map1.
    let p = Properties::parse(
        "groupNames=g1\ng1.operations=a,b,c\na.queue=q\na.topic=t\nb.cache=c1\nc.testCase=get\n",
        "d",
    )
    .expect("ok");
    let cfg = GroupTestConfig::from_properties(&p, 4).expect("ok");
    assert_eq!(cfg.operations["a"].data_structure, DataStructure::Topic);
    assert_eq!(cfg.operations["b"].data_structure, DataStructure::MCache);
    assert_eq!(
        (
            cfg.operations["c"].data_structure,
            cfg.operations["c"].ds_name.as_str()
        ),
        (DataStructure::Map, "map1")
    );
}

#[test]
fn ref_chains_resolve_transitively() {
    let p = Properties::parse("groupNames=g1\ng1.operations=c\na.map=m\na.payloadSize=7\nb.ref=a\nb.batchSize=3\nc.ref=b\nc.testCase=getall\n", "r").expect("ok");
    let cfg = GroupTestConfig::from_properties(&p, 4).expect("ok");
    let c = &cfg.operations["c"];
    assert_eq!(
        (
            c.ds_name.as_str(),
            c.payload_size,
            c.batch_size,
            c.test_case
        ),
        ("m", 7, 3, TestCase::GetAll)
    );
    assert_eq!(c.refs, vec!["b".to_string(), "a".into()]);
}

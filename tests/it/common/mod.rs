//! Helpers shared by the integration tests: bringing up a backend under test and keeping it
//! alive for exactly one test.
//!
//! Every backend a test opens is its own: a spawned server on a free port or a private
//! socket, so tests run in parallel without seeing each other's data. The one exception is
//! the Redis Cluster of the conformance suites, which takes seconds to spawn: the tests take
//! turns on one shared cluster, emptied and checked empty before each
//! ([`cluster::SharedCluster`]). CI needs the servers
//! installed, and a missing server fails the test with the fix rather than skipping it.

pub mod cluster;
pub mod mongo;
pub mod postgres;
pub mod private_pg;
pub mod resp;
pub mod sqlite;

use std::any::Any;

use edgebench::engine::Engine;
use edgebench::store::engine::EngineStore;
use edgebench::store::CoreData;
use edgebench::target::{parse_targets, redis_server_on_path, Target};

/// A store under test, and whatever must outlive it (a spawned server, a temp directory).
pub struct Backend {
    // Declared first so it drops first: the connection closes before its server stops.
    store: Box<dyn CoreData>,
    _guard: Box<dyn Any>,
}

impl Backend {
    /// A backend whose `store` stays usable while `guard` lives.
    pub fn new(store: Box<dyn CoreData>, guard: impl Any) -> Self {
        Backend {
            store,
            _guard: Box::new(guard),
        }
    }

    /// The store; it starts empty.
    pub fn store(&mut self) -> &mut dyn CoreData {
        &mut *self.store
    }
}

/// A fresh `redis-server` started the way a run starts it (`target` is a `--target` item,
/// e.g. `redis-tcp`), with a store on it. Stopped when the backend drops.
pub fn spawned_redis(target: &str) -> Backend {
    require_redis_server();
    let target = start(target);
    let store = target.open_store().unwrap_or_else(|e| panic!("{e}"));
    Backend::new(store, target)
}

/// A store on the shared Redis Cluster ([`cluster::SharedCluster`]: three primaries, no
/// replicas, emptied for this test and held by it until the backend drops). Replicas change
/// nothing a store sees, and take time to sync.
pub fn shared_cluster() -> Backend {
    let cluster = cluster::SharedCluster::take();
    let target = start(&cluster.item());
    let store = target.open_store().unwrap_or_else(|e| panic!("{e}"));
    // Dropped in order: the store, then the target's connections, then the turn.
    Backend::new(store, (target, cluster))
}

/// A store on a fresh target that needs no external server (`embedded`, `embedded-tcp`,
/// `embedded-uds`: each its own engine). Stopped when the backend drops.
pub fn in_process(target: &str) -> Backend {
    let target = start(target);
    let store = target.open_store().unwrap_or_else(|e| panic!("{e}"));
    Backend::new(store, target)
}

/// The `Embedded_Direct` store on a fresh engine of its own (database 0).
pub fn engine_direct() -> Backend {
    let store = EngineStore::new(Engine::new(), 0);
    Backend::new(Box::new(store), ())
}

/// Starts the target that the `--target` item `item` names.
pub fn start(item: &str) -> Target {
    Target::start(&spec(item)).unwrap_or_else(|e| panic!("{e}"))
}

/// The one target the `--target` item `item` names.
fn spec(item: &str) -> edgebench::target::TargetSpec {
    let mut specs = parse_targets(&[item.to_string()]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(specs.len(), 1, "{item:?} names {} targets", specs.len());
    specs.remove(0)
}

/// The cells of the markdown row of `bench` in a results table, after the benchmark name.
pub fn markdown_row<'a>(md: &'a str, bench: &str) -> Vec<&'a str> {
    let line = md
        .lines()
        .find(|l| l.starts_with(&format!("| {bench} |")))
        .unwrap_or_else(|| panic!("no row {bench} in\n{md}"));
    line.trim_matches('|')
        .split('|')
        .skip(1)
        .map(str::trim)
        .collect()
}

/// Fails (CI must not silently skip the Redis suite) when no redis-server can be spawned.
pub fn require_redis_server() {
    assert!(
        redis_server_on_path(),
        "redis-server not found on PATH: install it (apt-get install redis-server) or set \
         EDGEBENCH_REDIS_SERVER to its path; these tests fail rather than skip without it"
    );
}

/// An EdgeX 3/4 store under test, and the target that must outlive it.
pub struct EdgexBackend {
    // Declared first so it drops first, then the target, then the cluster turn.
    store: Box<dyn edgebench::store::edgex::EventStore>,
    _target: Target,
    _cluster: Option<cluster::SharedCluster>,
    service: bool,
    secantus: bool,
}

impl EdgexBackend {
    /// The store; it starts empty.
    pub fn store(&mut self) -> &mut dyn edgebench::store::edgex::EventStore {
        &mut *self.store
    }

    /// Whether the store is a core-data service in front of the store (`--via http-…`).
    pub fn is_service(&self) -> bool {
        self.service
    }

    /// Whether the data lives in SecantusDB ([`mongo`]), the MongoDB stand-in CI runs, which
    /// differs from `mongod` where the conformance suite can see it: it reports every
    /// collection's size as 0, and a `$gte` bound on `origin` walking a compound index
    /// (`{deviceName: 1, origin: -1, _id: -1}`) leaves out the documents at the bound.
    pub fn is_on_secantus(&self) -> bool {
        self.secantus
    }
}

/// The `--target` item `item` in `--layout layout`, reached `--via via` (`direct`,
/// `http-tcp`, `http-uds`: the service started in this process in front of the store), as a
/// run starts it. Needs redis-server or PostgreSQL where the item does, and fails without.
/// `redis-cluster` is the shared cluster ([`cluster::SharedCluster`]), held until the backend
/// drops.
pub fn edgex(item: &str, layout: &str, via: &str) -> EdgexBackend {
    if item.starts_with("redis-") {
        require_redis_server();
    }
    let cluster = (item == "redis-cluster").then(cluster::SharedCluster::take);
    let mut spec = match &cluster {
        Some(cluster) => spec(&cluster.item()),
        None => spec(item),
    };
    spec.layout = edgebench::target::Layout::parse(layout)
        .and_then(|l| l.first().copied())
        .unwrap_or_else(|| panic!("unknown layout {layout}"));
    spec.via = edgebench::target::Via::parse(via)
        .and_then(|v| v.first().copied())
        .unwrap_or_else(|| panic!("unknown via {via}"));
    let target = Target::start(&spec).unwrap_or_else(|e| panic!("{e}"));
    let mut store = target.open_event_store().unwrap_or_else(|e| panic!("{e}"));
    // A target in a layout or service may be shared with nothing, but start clean anyway.
    store.scrub().unwrap_or_else(|e| panic!("{e}"));
    EdgexBackend {
        store,
        _target: target,
        _cluster: cluster,
        service: via != "direct",
        secantus: item.starts_with("mongodb://"),
    }
}

/// Reads a child's stderr to the end on a thread of its own (so the child never blocks on a
/// full pipe) and signals the receiver at the first line `wanted` accepts; the thread returns
/// everything read.
pub fn watch_lines(
    stderr: std::process::ChildStderr,
    wanted: impl Fn(&str) -> bool + Send + 'static,
) -> (
    std::sync::mpsc::Receiver<()>,
    std::thread::JoinHandle<String>,
) {
    use std::io::BufRead;
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut seen = String::new();
        for line in std::io::BufReader::new(stderr).lines() {
            let line = line.unwrap();
            if wanted(&line) {
                let _ = tx.send(());
            }
            seen.push_str(&line);
            seen.push('\n');
        }
        seen
    });
    (rx, reader)
}

/// `edgebench` as a child of this test that dies with the test process
/// (`PR_SET_PDEATHSIG`, [`child`]): an interrupted `cargo test` leaves no edgebench behind,
/// and so none of the servers edgebench spawned (they die with edgebench).
pub fn edgebench() -> std::process::Command {
    child(assert_cmd::cargo::cargo_bin("edgebench"))
}

/// `program` as a child that dies with the test process: every server and client a test
/// starts goes through here (or through edgebench's own spawns, which do the same), so
/// Ctrl-C or a SIGKILL of the test run reaps them all. The signal follows the spawning
/// thread: spawn from the test's own thread, which outlives the child.
pub fn child(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    edgebench::transport::child::die_with_parent(&mut cmd);
    cmd
}

/// GET over plain TCP with std only (`base` is `http://HOST:PORT` or `HOST:PORT`): the whole
/// answer, status line and headers included.
pub fn http_get(base: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let addr = base.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text
}

/// Runs `edgebench coredata ARGS --out OUT`: (exit code, stdout, stderr).
pub fn coredata(args: &[&str], out: &std::path::Path) -> (Option<i32>, String, String) {
    let output = edgebench()
        .arg("coredata")
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

/// `edgebench coredata --target TARGETS --layout 2018,edgex` with three benchmarks that store
/// and read back (AddEvent, EventById, EventCount, 5 times each), its results in `DIR/run`:
/// (the temp `DIR`, exit code, stdout, stderr).
pub fn store_and_read_back(targets: &str) -> (tempfile::TempDir, Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--target",
        targets,
        "--bench",
        "AddEvent|EventById|EventCount",
        "--benchtime",
        "5x",
        "--layout",
        "2018,edgex",
    ];
    let (code, stdout, stderr) = coredata(&args, &dir.path().join("run"));
    (dir, code, stdout, stderr)
}

/// The results of a [`store_and_read_back`] run in `dir`, after checking that each target in
/// `names` ran its three benchmarks without an error.
pub fn ran_all_three(dir: &std::path::Path, names: &[&str]) -> edgebench::results::RunResults {
    let text = std::fs::read_to_string(dir.join("run/results.json")).unwrap();
    let results: edgebench::results::RunResults = serde_json::from_str(&text).unwrap();
    for name in names {
        let target = results
            .targets
            .iter()
            .find(|t| t.name == *name)
            .unwrap_or_else(|| panic!("no target {name} in {:?}", results.targets));
        assert!(target.error.is_none(), "{name}: {:?}", target.error);
        assert_eq!(target.benchmarks.len(), 3, "{name}");
    }
    results
}

/// Runs the built edgebench with `args` in `dir`; its output when it succeeded.
pub fn edgebench_ok(dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    let out = edgebench().args(args).current_dir(dir).output().unwrap();
    assert!(
        out.status.success(),
        "edgebench {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

//! The MongoDB backend under test: one SecantusDB server (`secantusd-py`, a MongoDB
//! wire-protocol server CI installs with `pip install --pre SecantusDB`) per test binary, and
//! a private database per test.
//!
//! The server takes most of a second to start, so tests share one, started on first use;
//! each test's [`MongoDatabase`] is its own `edgebench_<random>` database, dropped when the
//! test's backend drops, so tests still run in parallel without seeing each other's data.
//!
//! The server never outlives the test process:
//! - it is spawned, with `PR_SET_PDEATHSIG`, by a keeper thread that lives as long as the
//!   process (PDEATHSIG follows the spawning *thread*), so any exit, a crash included,
//!   SIGKILLs it;
//! - on a normal exit an `atexit` hook stops it first with SIGTERM, SIGKILLs it when it has
//!   not exited after a short grace period (it can take seconds), and removes its storage
//!   directory. The directory is ours (a temp dir) rather than `--storage-path :memory:`,
//!   whose directory the server removes only when it exits on its own, so a SIGKILL left it
//!   behind.
//!
//! The keeper waits for the child without reaping it (`WNOWAIT`), so its pid cannot be
//! reused while the hook may still signal it.

use std::io;
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{mpsc, OnceLock};
use std::time::{Duration, Instant};

use edgebench::store::mongo::{Fidelity, MongoDatabase, MongoLayout};
use mongodb::bson::{doc, Bson, Document};

use super::resp::free_port;
use super::Backend;

const BINARY: &str = "secantusd-py";
/// It starts in ~0.7 s on an idle machine; leave room for a loaded CI box.
const START_TIMEOUT: Duration = Duration::from_secs(30);
const POLL_INTERVAL: Duration = Duration::from_millis(20);
/// SIGTERM → exit takes ~0.4 s when idle; then SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// Attempts on a fresh free port: another process can take the port between our probe and
/// the server's bind.
const ATTEMPTS: usize = 3;

/// The shared server's pid, 0 before it starts.
static PID: AtomicI32 = AtomicI32::new(0);
/// Set by the keeper thread once the server has exited.
static EXITED: AtomicBool = AtomicBool::new(false);
/// The server's storage directory, removed at exit.
static STORAGE: OnceLock<PathBuf> = OnceLock::new();

/// A store on a fresh private database of the shared server, with `layout` and `fidelity`.
pub fn mongo(layout: MongoLayout, fidelity: Fidelity) -> Backend {
    let db =
        MongoDatabase::create(&server_url(), layout, fidelity).unwrap_or_else(|e| panic!("{e}"));
    let store = db.open_store().unwrap_or_else(|e| panic!("{e}"));
    Backend::new(Box::new(store), db)
}

/// The default: readings embedded in their events.
pub fn embedded() -> Backend {
    mongo(MongoLayout::Embedded, Fidelity::Modern)
}

/// The 2018 layout, readings loaded with one `$in` query per event list.
pub fn referenced() -> Backend {
    mongo(MongoLayout::Referenced, Fidelity::Modern)
}

/// The 2018 layout and the 2018 N+1 reads.
pub fn referenced_2018() -> Backend {
    mongo(MongoLayout::Referenced, Fidelity::Y2018)
}

/// The EdgeX 4.0 document layout on a fresh private database of the shared server (`--target
/// mongodb://… --layout edgex4`), reached `via` (`direct`, `http-tcp`, `http-uds`).
pub fn edgex4(via: &str) -> super::EdgexBackend {
    super::edgex(&server_url(), "edgex4", via)
}

/// The stages of the plan the server chooses for the `find` command `find` (as a command
/// monitor saw it) in `database`, outermost first.
pub fn plan_of(client: &mongodb::sync::Client, database: &str, find: &Document) -> Vec<String> {
    let mut query = Document::new();
    for key in ["find", "filter", "sort", "skip", "limit"] {
        if let Some(value) = find.get(key) {
            query.insert(key, value.clone());
        }
    }
    let explained = client
        .database(database)
        .run_command(doc! { "explain": query, "verbosity": "queryPlanner" })
        .run()
        .unwrap_or_else(|e| panic!("explain {find}: {e}"));
    let plan = explained
        .get_document("queryPlanner")
        .and_then(|p| p.get_document("winningPlan"))
        .unwrap_or_else(|e| panic!("{e}: {explained}"));
    let mut stages = Vec::new();
    plan_stages(plan, &mut stages);
    stages
}

/// Whether a plan's stages are an index scan, with no collection scan anywhere.
pub fn is_index_scan(stages: &[String]) -> bool {
    stages.iter().any(|s| s == "IXSCAN") && !stages.iter().any(|s| s == "COLLSCAN")
}

fn plan_stages(plan: &Document, out: &mut Vec<String>) {
    if let Ok(stage) = plan.get_str("stage") {
        out.push(stage.to_string());
    }
    if let Ok(input) = plan.get_document("inputStage") {
        plan_stages(input, out);
    }
    if let Ok(inputs) = plan.get_array("inputStages") {
        for input in inputs {
            if let Bson::Document(input) = input {
                plan_stages(input, out);
            }
        }
    }
}

/// `mongodb://127.0.0.1:PORT` of the shared server, started on first call. Panics with the
/// fix when `secantusd-py` is missing or does not start: these tests fail, never skip.
pub fn server_url() -> String {
    static URL: OnceLock<Result<String, String>> = OnceLock::new();
    match URL.get_or_init(start_shared_server) {
        Ok(url) => url.clone(),
        Err(e) => panic!("{e}"),
    }
}

fn start_shared_server() -> Result<String, String> {
    if !on_path(BINARY) {
        return Err(format!(
            "{BINARY} not found on PATH: install it (pip install --pre SecantusDB); the \
             MongoDB tests fail rather than skip without it"
        ));
    }
    let mut last_error = String::new();
    for _ in 0..ATTEMPTS {
        match spawn_kept() {
            Ok(port) => {
                // SAFETY: registers a plain `extern "C" fn()`; it runs once, at exit.
                unsafe {
                    libc::atexit(stop_at_exit);
                }
                return Ok(format!("mongodb://127.0.0.1:{port}"));
            }
            Err(e) => last_error = e,
        }
    }
    Err(last_error)
}

/// Spawns the server from a keeper thread that lives until the process exits, and waits
/// until it accepts connections. Returns its port.
fn spawn_kept() -> Result<u16, String> {
    let port = free_port().map_err(|e| format!("cannot find a free port on 127.0.0.1: {e}"))?;
    let storage = tempfile::Builder::new()
        .prefix("edgebench-secantusd-")
        .tempdir()
        .map_err(|e| format!("cannot create a storage directory for {BINARY}: {e}"))?
        .keep();
    let (tx, rx) = mpsc::channel();
    let dir = storage.clone();
    let started = std::thread::Builder::new()
        .name("secantusd-keeper".into())
        .spawn(move || keep(port, &dir, &tx))
        .map_err(|e| format!("cannot start the {BINARY} keeper thread: {e}"));
    let ready = started.and_then(|_| {
        rx.recv()
            .map_err(|_| format!("the {BINARY} keeper thread ended before reporting"))?
    });
    match ready {
        Ok(()) => {
            let _ = STORAGE.set(storage);
            Ok(port)
        }
        Err(e) => {
            // The child is gone (the keeper reaped it, or it never started).
            let _ = std::fs::remove_dir_all(&storage);
            Err(e)
        }
    }
}

/// The keeper: spawns the server (PDEATHSIG tied to this thread), reports readiness on
/// `ready`, then blocks until the server exits, without reaping it.
fn keep(port: u16, storage: &Path, ready: &mpsc::Sender<Result<(), String>>) {
    let mut cmd = Command::new(BINARY);
    cmd.args(["--port", &port.to_string(), "--storage-path"])
        .arg(storage)
        .args(["--host", "127.0.0.1", "--log-level", "WARNING"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0);
    edgebench::transport::child::die_with_parent(&mut cmd);
    let mut child = match cmd.spawn() {
        Ok(child) => child,
        Err(e) => {
            let _ = ready.send(Err(format!("cannot start {BINARY}: {e}")));
            return;
        }
    };
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let _ = ready.send(Err(format!(
                "{BINARY} on port {port} exited during startup ({status}); run `{BINARY} \
                 --port {port} --storage-path :memory:` by hand to see why"
            )));
            return;
        }
        // Accepting a connection is not enough: between `free_port` and the server's bind,
        // another test's server may have taken the port. Ready means a Mongo ping answers
        // and our child is still alive (if it lost the port it exits, and the caller retries).
        if TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), POLL_INTERVAL).is_ok()
            && mongo_ping(port)
            && matches!(child.try_wait(), Ok(None))
        {
            break;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            let _ = ready.send(Err(format!(
                "{BINARY} on port {port} did not accept connections within {}s",
                START_TIMEOUT.as_secs()
            )));
            return;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
    let pid = child.id() as libc::pid_t;
    PID.store(pid, Ordering::SeqCst);
    let _ = ready.send(Ok(()));
    // Wait without reaping (WNOWAIT): the zombie keeps the pid ours until the process exits.
    // SAFETY: waitid writes only into `info`, which lives on this stack.
    unsafe {
        let mut info: libc::siginfo_t = std::mem::zeroed();
        while libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOWAIT,
        ) != 0
            && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
        {}
    }
    EXITED.store(true, Ordering::SeqCst);
}

/// `atexit` hook: SIGTERM, a short grace, SIGKILL, then the storage directory goes.
extern "C" fn stop_at_exit() {
    let pid = PID.load(Ordering::SeqCst);
    if pid > 0 {
        // SAFETY: `pid` is our unreaped child (see `keep`), so its process group (it leads
        // one) names no other process.
        unsafe {
            libc::kill(-pid, libc::SIGTERM);
        }
        if !exited_within(STOP_GRACE) {
            // SAFETY: as above.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
            exited_within(STOP_GRACE);
        }
    }
    if let Some(dir) = STORAGE.get() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

/// Whether the keeper saw the server exit within `grace`.
fn exited_within(grace: Duration) -> bool {
    let deadline = Instant::now() + grace;
    while !EXITED.load(Ordering::SeqCst) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
    true
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| is_file(&dir.join(program))))
}

fn is_file(path: &Path) -> bool {
    path.metadata().is_ok_and(|m| m.is_file())
}

/// Whether a MongoDB-wire server on `port` answers `ping`.
fn mongo_ping(port: u16) -> bool {
    ping(&format!(
        "mongodb://127.0.0.1:{port}/?serverSelectionTimeoutMS=2000"
    ))
}

/// A SecantusDB of one test's own that serves TLS only (`--tls-cert-file`, `--tls-key-file`,
/// with certificates from [`edgebench::transport::certs`]), on a free port. Stopped (its
/// process group: SIGTERM, then SIGKILL) when dropped, and spawned with `PR_SET_PDEATHSIG`,
/// so a killed test takes it along.
pub struct TlsServer {
    child: std::process::Child,
    port: u16,
    certs: edgebench::transport::certs::CertFiles,
    // Last: removed once the server has stopped.
    _dir: tempfile::TempDir,
}

impl TlsServer {
    /// Starts one and waits until a TLS `ping` answers. Panics with the fix when
    /// `secantusd-py` is missing: the test fails rather than skips.
    pub fn start() -> TlsServer {
        assert!(
            on_path(BINARY),
            "{BINARY} not found on PATH: install it (pip install --pre SecantusDB); the \
             MongoDB tests fail rather than skip without it"
        );
        let dir = tempfile::tempdir().unwrap();
        let certs = edgebench::transport::certs::PrivateCa::new()
            .unwrap()
            .write_files(dir.path())
            .unwrap();
        let port = free_port().unwrap();
        let child = super::child(BINARY)
            .args(["--port", &port.to_string(), "--host", "127.0.0.1"])
            .arg("--storage-path")
            .arg(dir.path().join("data"))
            .args(["--log-level", "WARNING", "--tls-cert-file"])
            .arg(&certs.server_cert)
            .arg("--tls-key-file")
            .arg(&certs.server_key)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut server = TlsServer {
            child,
            port,
            certs,
            _dir: dir,
        };
        let deadline = Instant::now() + START_TIMEOUT;
        while !ping(&server.url("serverSelectionTimeoutMS=2000")) {
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("{BINARY} with TLS on port {port} exited during startup ({status})");
            }
            assert!(
                Instant::now() < deadline,
                "{BINARY} with TLS on port {port} did not answer within {}s",
                START_TIMEOUT.as_secs()
            );
            std::thread::sleep(POLL_INTERVAL);
        }
        server
    }

    /// `mongodb://127.0.0.1:PORT/?tls=true&tlsCAFile=CA`, then `&` and `more` when given.
    pub fn url(&self, more: &str) -> String {
        let mut url = format!(
            "mongodb://127.0.0.1:{}/?tls=true&tlsCAFile={}",
            self.port,
            self.certs.ca_cert.display()
        );
        if !more.is_empty() {
            url.push('&');
            url.push_str(more);
        }
        url
    }

    /// Its port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for TlsServer {
    fn drop(&mut self) {
        let pid = self.child.id() as libc::pid_t;
        if matches!(self.child.try_wait(), Ok(None)) {
            // SAFETY: our unreaped child leads its own process group, which names no other
            // process.
            unsafe {
                libc::kill(-pid, libc::SIGTERM);
            }
        }
        edgebench::transport::child::stop(&mut self.child, STOP_GRACE);
    }
}

/// Whether the server at `url` answers `ping`.
fn ping(url: &str) -> bool {
    mongodb::sync::Client::with_uri_str(url).is_ok_and(|client| {
        client
            .database("admin")
            .run_command(doc! { "ping": 1 })
            .run()
            .is_ok()
    })
}

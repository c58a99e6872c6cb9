//! Persistence as redis-server 7.0 does it: RDB snapshots (SAVE, BGSAVE, the `save`
//! schedule, loaded on start) and the append-only file (`appendonly`, `appendfsync always |
//! everysec | no`, BGREWRITEAOF and the automatic rewrite, replayed on start), in Redis's
//! file formats and with its CONFIG names (`dir`, `dbfilename`, `appendfilename`,
//! `appenddirname`, `save`, `auto-aof-rewrite-percentage`, `auto-aof-rewrite-min-size`,
//! `aof-load-truncated`), so the engine and redis-server load each other's files.
//!
//! A background save forks, as Redis does: the snapshot is the child's copy-on-write view
//! of the keyspace at the instant of the fork, which happens with every shard of every
//! database locked (so no command is half done in it) and lasts as long as the fork call.
//! Forks run on the engine's background thread, the one parent a child outlives only by
//! being killed (`PR_SET_PDEATHSIG`), so no child survives the engine's process.
//!
//! The append-only file is fed under the locks of the commands that wrote
//! ([`super::feed`]); [`Engine::flush_aof`] writes what was fed, after each in-process
//! command or, for a server, once per batch of requests before their replies go out (Redis's
//! `beforeSleep`), and with `appendfsync always` syncs it before returning. `everysec` syncs
//! from the background thread, on a duplicate handle so that writers never wait for it.
//!
//! Lock order: shards, then the AOF state, then the jobs; never the other way.

pub mod aof;
pub mod rdb;

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{mpsc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::feed::Feed;
use super::handle::{Engine, DATABASES};
use super::keyspace::{Entry, Locked};

/// `appendfsync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fsync {
    /// Sync before any reply to a write goes out.
    Always,
    /// Sync once a second, from the background thread.
    Everysec,
    /// Leave syncing to the operating system.
    No,
}

impl Fsync {
    fn code(self) -> u8 {
        match self {
            Fsync::Always => 0,
            Fsync::Everysec => 1,
            Fsync::No => 2,
        }
    }

    fn from_code(c: u8) -> Fsync {
        match c {
            0 => Fsync::Always,
            2 => Fsync::No,
            _ => Fsync::Everysec,
        }
    }

    /// The CONFIG value's meaning.
    pub fn parse(s: &str) -> Option<Fsync> {
        match s {
            "always" => Some(Fsync::Always),
            "everysec" => Some(Fsync::Everysec),
            "no" => Some(Fsync::No),
            _ => None,
        }
    }
}

/// A persistence failure, as one line naming the file and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersistError(pub String);

impl std::fmt::Display for PersistError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PersistError {}

fn fail<T>(text: String) -> Result<T, PersistError> {
    Err(PersistError(text))
}

/// What [`Engine::load_from_disk`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Loaded {
    /// Nothing to load (no file yet).
    Nothing,
    /// Keys from the RDB file at this path.
    Rdb { path: PathBuf, keys: u64 },
    /// Commands from the append-only directory: keys in its base, commands replayed, and
    /// the bytes of a cut-short tail that were dropped.
    Aof {
        dir: PathBuf,
        base_keys: u64,
        commands: u64,
        truncated: u64,
    },
}

/// What [`Engine::replay`] did with a file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replayed {
    /// Keys in its RDB preamble.
    pub keys: u64,
    /// Commands run.
    pub commands: u64,
    /// Bytes to keep: the rest is a cut-short command or a transaction without its EXEC.
    pub keep: usize,
}

/// The engine's persistence state.
#[derive(Debug, Default)]
pub struct Persist {
    /// Writes since the engine started (Redis's `server.dirty`).
    pub(crate) dirty: AtomicU64,
    /// `dirty` when the last successful save began.
    dirty_at_save: AtomicU64,
    /// When the last successful save began, seconds since the epoch (LASTSAVE); 0 = at start.
    lastsave_s: AtomicU64,
    /// `appendfsync`, as [`Fsync::code`].
    fsync: AtomicU8,
    /// Whether a file is being loaded (INFO `loading`).
    loading: AtomicBool,
    /// Whether the background thread takes fork requests.
    cron: Mutex<Option<mpsc::Sender<Request>>>,
    aof: Mutex<Option<AofState>>,
    jobs: Mutex<Jobs>,
    /// Set by SHUTDOWN: the server serving the engine stops.
    shutdown: AtomicBool,
    shutdown_notify: tokio::sync::Notify,
    /// A script that had written was stopped half way by a shutdown: the keyspace holds
    /// part of its effects, so no RDB file is saved from it.
    half_done: AtomicBool,
    /// Set once [`Engine::persist_before_exit`] succeeded (SIGTERM after SHUTDOWN does not
    /// save twice).
    persisted_for_exit: AtomicBool,
}

/// The open append-only file.
#[derive(Debug)]
struct AofState {
    /// The AOF directory (`dir`/`appenddirname`).
    dir: PathBuf,
    /// `appendfilename`.
    stem: String,
    manifest: aof::Manifest,
    /// The incremental file commands go to.
    file: File,
    /// Bytes of every file in the manifest (INFO `aof_current_size`).
    size: u64,
    /// `size` after the last rewrite (INFO `aof_base_size`; the automatic rewrite compares).
    base_size: u64,
    /// Written since the last sync.
    unsynced: bool,
    last_sync: Instant,
    /// Whether the last write succeeded (INFO `aof_last_write_status`).
    write_ok: bool,
}

#[derive(Debug)]
struct Jobs {
    child: Option<Child>,
    bgsave_scheduled: bool,
    rewrite_scheduled: bool,
    last_bgsave_ok: bool,
    last_bgsave_at: Option<Instant>,
    last_bgsave_secs: i64,
    last_rewrite_ok: bool,
    last_rewrite_secs: i64,
    saves: u64,
    forks: u64,
    /// How long the last fork took, µs (INFO `latest_fork_usec`).
    latest_fork_us: u64,
    temp_seq: u64,
}

impl Default for Jobs {
    fn default() -> Self {
        Jobs {
            child: None,
            bgsave_scheduled: false,
            rewrite_scheduled: false,
            last_bgsave_ok: true,
            last_bgsave_at: None,
            last_bgsave_secs: -1,
            last_rewrite_ok: true,
            last_rewrite_secs: -1,
            saves: 0,
            forks: 0,
            latest_fork_us: 0,
            temp_seq: 0,
        }
    }
}

/// A child process writing a snapshot.
#[derive(Debug)]
struct Child {
    pid: libc::pid_t,
    kind: Job,
    started: Instant,
    started_s: u64,
    dirty_at_start: u64,
    /// Where it writes (renamed into place once it succeeds).
    temp: PathBuf,
}

/// What a child makes.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Job {
    /// An RDB file at this path.
    Rdb(PathBuf),
    /// A new base for the append-only file.
    Rewrite,
}

/// A request to the background thread, which forks.
pub(crate) struct Request {
    job: Job,
    done: mpsc::SyncSender<Result<(), String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Writes `bytes` to `path` through a temporary file in the same directory, synced and
/// renamed into place, so a crash leaves the old file or the new one, never half of one.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!("temp-{name}"));
    let mut f = File::create(&temp)?;
    f.write_all(bytes)?;
    f.sync_all()?;
    drop(f);
    fs::rename(&temp, path)?;
    sync_dir(dir);
    Ok(())
}

/// Syncs a directory, so a rename in it survives a crash (best effort).
fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}

impl Engine {
    pub(crate) fn persist_state(&self) -> &Persist {
        &self.inner().persist
    }

    /// The propagation feed (what the append-only file gets).
    pub fn feed(&self) -> &Feed {
        self.db(0).feed()
    }

    fn config_str(&self, name: &str) -> String {
        self.config_get(name).unwrap_or_default()
    }

    fn config_num(&self, name: &str) -> u64 {
        self.config_get(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    fn dir(&self) -> PathBuf {
        PathBuf::from(self.config_str("dir"))
    }

    /// The RDB file's path (`dir`/`dbfilename`).
    pub fn rdb_path(&self) -> PathBuf {
        self.dir().join(self.config_str("dbfilename"))
    }

    /// The append-only directory's path (`dir`/`appenddirname`).
    pub fn aof_dir(&self) -> PathBuf {
        self.dir().join(self.config_str("appenddirname"))
    }

    /// Whether the append-only file is on.
    pub fn aof_enabled(&self) -> bool {
        self.feed().on()
    }

    /// Writes the lines CONFIG `appendfsync` takes effect through.
    pub(crate) fn persistence_config_changed(&self) -> Result<(), PersistError> {
        let fsync = Fsync::parse(&self.config_str("appendfsync")).unwrap_or(Fsync::Everysec);
        self.persist_state()
            .fsync
            .store(fsync.code(), Ordering::Relaxed);
        let want = self.config_str("appendonly") == "yes";
        if want != self.aof_enabled() && !self.persist_state().loading.load(Ordering::Relaxed) {
            if want {
                self.start_aof()?;
            } else {
                self.stop_aof();
            }
        }
        Ok(())
    }

    fn fsync_policy(&self) -> Fsync {
        Fsync::from_code(self.persist_state().fsync.load(Ordering::Relaxed))
    }

    // ---- loading ----

    /// Loads what the configuration says to load, as redis-server does on start: the
    /// append-only directory when `appendonly` is on (creating it, with a base snapshot of
    /// the engine as it is, when it does not exist yet), else the RDB file if there is one;
    /// then opens the append-only file for writing. Call once, on an empty engine, before
    /// serving. An error says which file and what to do, and leaves the engine empty: no
    /// key or function library of a file that failed half way is kept (a file is read as
    /// it is applied, so its damage may show only after part of it was).
    pub fn load_from_disk(&self) -> Result<Loaded, PersistError> {
        let result = self.load_configured();
        if result.is_err() {
            self.forget_loaded();
        }
        result
    }

    fn load_configured(&self) -> Result<Loaded, PersistError> {
        let fsync = Fsync::parse(&self.config_str("appendfsync")).unwrap_or(Fsync::Everysec);
        self.persist_state()
            .fsync
            .store(fsync.code(), Ordering::Relaxed);
        let dir = self.dir();
        if !dir.is_dir() {
            return fail(format!(
                "dir {}: not a directory (create it, or give --dir an existing one)",
                dir.display()
            ));
        }
        if self.config_str("appendonly") == "yes" {
            let loaded = self.load_aof()?;
            self.open_aof()?;
            return Ok(loaded);
        }
        let path = self.rdb_path();
        match fs::read(&path) {
            Ok(data) => {
                let keys = self.load_rdb_bytes(&data, &path)?;
                self.persist_state()
                    .lastsave_s
                    .store(now_s(), Ordering::Relaxed);
                Ok(Loaded::Rdb { path, keys })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Loaded::Nothing),
            Err(e) => fail(format!("{}: {e} (check its permissions)", path.display())),
        }
    }

    /// After a failed load: drops every key and function library it brought, unfed (the
    /// append-only file is not open yet) and uncounted.
    fn forget_loaded(&self) {
        let now = self.now_ms();
        for i in 0..DATABASES {
            self.db(i).lock_all(now).clear();
        }
        let p = self.persist_state();
        let feed = self.feed();
        feed.set_loading(true);
        let mut client = self.loader_client();
        self.execute(&mut client, &[b"FUNCTION", b"FLUSH"]);
        feed.set_loading(false);
        p.dirty_at_save
            .store(p.dirty.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    /// Loads an RDB image from memory into the engine (keys already expired are skipped);
    /// returns its key count. A damaged image is refused and leaves the engine empty, as
    /// [`Engine::load_from_disk`] does. `name` names the image in errors.
    pub fn load_rdb(&self, data: &[u8], name: &Path) -> Result<u64, PersistError> {
        let result = self.load_rdb_bytes(data, name);
        if result.is_err() {
            self.forget_loaded();
        }
        result
    }

    /// Loads an RDB image; returns its key count.
    fn load_rdb_bytes(&self, data: &[u8], path: &Path) -> Result<u64, PersistError> {
        let p = self.persist_state();
        p.loading.store(true, Ordering::Relaxed);
        let r = self.load_rdb_image(data, path, false).map(|(s, _)| s.keys);
        p.loading.store(false, Ordering::Relaxed);
        r
    }

    /// Loads an RDB image into the engine: its keys and function libraries. An RDB file
    /// skips the keys already expired, as a Redis master does; an append-only file's base
    /// (`aof_base`) keeps them, since the commands after it may write them again (Redis's
    /// `RDBFLAGS_AOF_PREAMBLE`): they expire once the replay is over.
    fn load_rdb_image(
        &self,
        data: &[u8],
        path: &Path,
        aof_base: bool,
    ) -> Result<(rdb::Summary, usize), PersistError> {
        let now = self.now_ms();
        let summary = rdb::read(data, |k| {
            if k.db >= DATABASES {
                return Err("a key in a database beyond the engine's 16");
            }
            if !aof_base && k.expires_at_ms.is_some_and(|t| t <= now) {
                return Ok(());
            }
            let db = self.db(k.db);
            let mut ks = db.lock([k.key.as_slice()], now);
            ks.insert(&k.key, Entry::with_expiry(k.value, k.expires_at_ms));
            if let Some(idle) = k.idle_s {
                ks.set_accessed(&k.key, (now / 1000).saturating_sub(idle) as u32);
            }
            Ok(())
        })
        .map_err(|e| {
            PersistError(format!(
                "{}: {e} (the engine refuses to start with part of it; move the file away to start empty, or check it with redis-check-rdb)",
                path.display()
            ))
        })?;
        self.load_functions(&summary.functions, path)?;
        let length = summary.length;
        Ok((summary, length))
    }

    #[cfg(feature = "scripting")]
    fn load_functions(&self, codes: &[Vec<u8>], path: &Path) -> Result<(), PersistError> {
        let mut client = self.loader_client();
        for code in codes {
            let reply = self.execute(&mut client, &[b"FUNCTION", b"LOAD", b"REPLACE", code]);
            if let crate::resp::Reply::Error(e) = reply {
                return fail(format!(
                    "{}: a function library does not load: {e}",
                    path.display()
                ));
            }
        }
        Ok(())
    }

    #[cfg(not(feature = "scripting"))]
    fn load_functions(&self, codes: &[Vec<u8>], path: &Path) -> Result<(), PersistError> {
        if codes.is_empty() {
            return Ok(());
        }
        fail(format!(
            "{}: holds function libraries, and this engine was built without scripting",
            path.display()
        ))
    }

    /// The client a file's commands run as: authenticated, deferring nothing.
    fn loader_client(&self) -> super::client::Client {
        let mut c = self.client();
        c.authenticated = true;
        c
    }

    /// Replays the append-only directory, if it exists.
    fn load_aof(&self) -> Result<Loaded, PersistError> {
        let dir = self.aof_dir();
        let stem = self.config_str("appendfilename");
        let manifest_path = aof::manifest_path(&dir, &stem);
        let text = match fs::read_to_string(&manifest_path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                // redis-server 7.0 moves a Redis 6 file into a directory of its own; the
                // engine does not, and must not start empty beside it (its first save
                // would then stand for the data).
                let single = self.dir().join(&stem);
                if single.is_file() {
                    return fail(format!(
                        "{}: an append-only file in Redis 6's single-file layout, which the engine does not load (start redis-server 7 on it once to convert it to {}, or move it away to start empty)",
                        single.display(),
                        dir.display()
                    ));
                }
                return Ok(Loaded::Nothing);
            }
            Err(e) => {
                return fail(format!(
                    "{}: {e} (check its permissions)",
                    manifest_path.display()
                ))
            }
        };
        let manifest = aof::Manifest::parse(&text).map_err(|e| {
            PersistError(format!(
                "{}: {e} (repair the manifest, or move the directory away to start empty)",
                manifest_path.display()
            ))
        })?;
        let files: Vec<aof::FileInfo> = manifest.to_load().cloned().collect();
        let p = self.persist_state();
        p.loading.store(true, Ordering::Relaxed);
        self.feed().set_loading(true);
        let mut result = Ok((0, 0, 0));
        for (i, f) in files.iter().enumerate() {
            let last = i + 1 == files.len();
            let path = dir.join(&f.name);
            result = result.and_then(|(keys, cmds, cut)| {
                self.replay_file(&path, last)
                    .map(|(k, c, t)| (keys + k, cmds + c, cut + t))
            });
        }
        self.feed().set_loading(false);
        p.loading.store(false, Ordering::Relaxed);
        let (base_keys, commands, truncated) = result?;
        Ok(Loaded::Aof {
            dir,
            base_keys,
            commands,
            truncated,
        })
    }

    /// Replays one file of the append-only directory: an RDB preamble if it starts with
    /// one, then commands. Returns (keys, commands, bytes dropped from a cut tail).
    fn replay_file(&self, path: &Path, last: bool) -> Result<(u64, u64, u64), PersistError> {
        let data = match fs::read(path) {
            Ok(d) => d,
            Err(e) if e.kind() == io::ErrorKind::NotFound && !last => {
                return fail(format!(
                    "{}: missing, and the manifest names it (restore it, or move the directory away to start empty)",
                    path.display()
                ))
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((0, 0, 0)),
            Err(e) => return fail(format!("{}: {e} (check its permissions)", path.display())),
        };
        let cut_tail_ok = last && self.config_str("aof-load-truncated") == "yes";
        let Replayed {
            keys,
            commands,
            keep,
        } = self.replay(&data, path, cut_tail_ok)?;
        let dropped = (data.len() - keep) as u64;
        if dropped > 0 {
            let f = OpenOptions::new().write(true).open(path).and_then(|f| {
                f.set_len(keep as u64)?;
                f.sync_all()
            });
            if let Err(e) = f {
                return fail(format!(
                    "{}: cut short at byte {keep}, and truncating it failed: {e}",
                    path.display()
                ));
            }
        }
        Ok((keys, commands, dropped))
    }

    /// Replays the bytes of one file of the append-only directory (named `path` in errors):
    /// an RDB preamble if it starts with one, then commands. `cut_tail_ok`: the data may end
    /// inside a command or a transaction (Redis's `aof-load-truncated` on the last file);
    /// what is kept ends at [`Replayed::keep`]. Never panics on any bytes.
    pub fn replay(
        &self,
        data: &[u8],
        path: &Path,
        cut_tail_ok: bool,
    ) -> Result<Replayed, PersistError> {
        let (keys, mut pos) = if data.starts_with(b"REDIS") {
            let (s, len) = self.load_rdb_image(data, path, true)?;
            (s.keys, len)
        } else {
            (0, 0)
        };
        let mut client = self.loader_client();
        let mut commands = 0;
        let mut valid_before_multi = 0;
        let refuse_cut = |at: usize, what: &str| -> Result<Replayed, PersistError> {
            fail(format!(
                "{}: {what} at byte {at} (it is not the last file, or aof-load-truncated is no; redis-check-aof --fix repairs it)",
                path.display()
            ))
        };
        loop {
            match aof::next_command(data, pos) {
                Ok(None) => break,
                Ok(Some((args, next))) => {
                    if args[0].eq_ignore_ascii_case(b"multi") {
                        valid_before_multi = pos;
                    }
                    let name = String::from_utf8_lossy(&args[0][..args[0].len().min(64)]);
                    let Some(spec) = super::cmd::lookup(args[0]) else {
                        return fail(format!(
                            "{}: unknown command '{name}' at byte {pos} (a file from a newer Redis or with modules; the engine cannot replay it)",
                            path.display(),
                        ));
                    };
                    // An append-only file holds writes, the SELECTs and transactions around
                    // them, and function libraries: nothing else runs from one (no SAVE,
                    // SHUTDOWN or CONFIG from a damaged or planted file).
                    let replayable =
                        spec.write || matches!(spec.name, "select" | "multi" | "exec" | "function");
                    if !replayable {
                        return fail(format!(
                            "{}: '{name}' at byte {pos} is not a write, and an append-only file holds only writes (the file is damaged or not an AOF)",
                            path.display(),
                        ));
                    }
                    self.execute(&mut client, &args);
                    commands += 1;
                    pos = next;
                }
                Err(aof::ParseError::Truncated) if cut_tail_ok => break,
                Err(aof::ParseError::Truncated) => return refuse_cut(pos, "cut short"),
                Err(aof::ParseError::Bad) => {
                    return fail(format!(
                        "{}: bad format at byte {pos} (redis-check-aof --fix {} repairs it)",
                        path.display(),
                        path.display()
                    ))
                }
            }
        }
        // A transaction whose EXEC is not in the file never ran: it goes with the tail, as
        // Redis reverts it ("incomplete MULTI/EXEC transaction").
        let keep = if client.in_multi() {
            self.execute(&mut client, &[b"DISCARD"]);
            if !cut_tail_ok {
                return refuse_cut(valid_before_multi, "a transaction without its EXEC");
            }
            valid_before_multi
        } else {
            pos
        };
        Ok(Replayed {
            keys,
            commands,
            keep,
        })
    }

    // ---- the append-only file ----

    /// Opens the append-only directory for writing after a load: creates it with a base
    /// snapshot and a first incremental file when there is none.
    fn open_aof(&self) -> Result<(), PersistError> {
        let dir = self.aof_dir();
        let stem = self.config_str("appendfilename");
        fs::create_dir_all(&dir).map_err(|e| {
            PersistError(format!(
                "{}: cannot create the append-only directory: {e} (check --dir and its permissions)",
                dir.display()
            ))
        })?;
        let manifest_path = aof::manifest_path(&dir, &stem);
        let mut manifest = match fs::read_to_string(&manifest_path) {
            Ok(t) => aof::Manifest::parse(&t)
                .map_err(|e| PersistError(format!("{}: {e}", manifest_path.display())))?,
            Err(_) => aof::Manifest::default(),
        };
        if manifest.base.is_none() && manifest.incrs.is_empty() {
            let base = manifest.next_base(&stem);
            self.save_to(&dir.join(&base.name), true).map_err(|e| {
                PersistError(format!("{}: {e} (check the disk and --dir)", dir.display()))
            })?;
            manifest.base = Some(base);
        }
        if manifest.incrs.is_empty() {
            manifest.incrs.push(manifest.next_incr(&stem));
        }
        let incr = manifest
            .incrs
            .last()
            .map(|f| f.name.clone())
            .unwrap_or_default();
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(dir.join(&incr))
            .map_err(|e| {
                PersistError(format!(
                    "{}: {e} (check the disk and --dir)",
                    dir.join(&incr).display()
                ))
            })?;
        write_atomically(&manifest_path, manifest.text().as_bytes()).map_err(|e| {
            PersistError(format!(
                "{}: {e} (check the disk and --dir)",
                manifest_path.display()
            ))
        })?;
        self.install_aof(dir, stem, manifest, file);
        Ok(())
    }

    /// Makes `file` (the manifest's last incremental file) where commands go, and starts
    /// feeding.
    fn install_aof(&self, dir: PathBuf, stem: String, manifest: aof::Manifest, file: File) {
        let size = files_size(&dir, &manifest);
        *lock(&self.persist_state().aof) = Some(AofState {
            dir,
            stem,
            manifest,
            file,
            size,
            base_size: size,
            unsynced: false,
            last_sync: Instant::now(),
            write_ok: true,
        });
        self.feed().set_on(true);
    }

    /// CONFIG SET appendonly yes while running: a rewrite makes the directory's new base
    /// from the keyspace as it is, and commands go to a new incremental file from then on.
    fn start_aof(&self) -> Result<(), PersistError> {
        let dir = self.aof_dir();
        fs::create_dir_all(&dir).map_err(|e| PersistError(format!("{}: {e}", dir.display())))?;
        let stem = self.config_str("appendfilename");
        let manifest_path = aof::manifest_path(&dir, &stem);
        let mut manifest = match fs::read_to_string(&manifest_path) {
            Ok(t) => aof::Manifest::parse(&t).unwrap_or_default(),
            Err(_) => aof::Manifest::default(),
        };
        // What was there describes an older keyspace: every file of it goes.
        let old: Vec<aof::FileInfo> = manifest.to_load().cloned().collect();
        manifest.history.extend(old.into_iter().map(|mut f| {
            f.kind = aof::Kind::History;
            f
        }));
        manifest.base = None;
        manifest.incrs.clear();
        let seq = manifest.history.iter().map(|f| f.seq).max().unwrap_or(0);
        let base = aof::FileInfo {
            name: format!("{stem}.{}.base.rdb", seq + 1),
            seq: seq + 1,
            kind: aof::Kind::Base,
        };
        let incr = aof::FileInfo {
            name: format!("{stem}.{}.incr.aof", seq + 1),
            seq: seq + 1,
            kind: aof::Kind::Incr,
        };
        // The libraries before the shards' locks, as every snapshot takes them: a script
        // holds the VM while it waits for its database's locks.
        let functions = self.library_codes_if_any();
        // Locks every shard: the base and the start of the incremental file meet exactly.
        let now = self.now_ms();
        let dbs: Vec<(usize, Locked<'_>)> = (0..DATABASES)
            .map(|i| (i, self.db(i).lock_all(now)))
            .collect();
        self.write_snapshot(&dir.join(&base.name), &dbs, true, &functions)
            .map_err(|e| PersistError(format!("{}: {e}", dir.join(&base.name).display())))?;
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(dir.join(&incr.name))
            .map_err(|e| PersistError(format!("{}: {e}", dir.join(&incr.name).display())))?;
        manifest.base = Some(base);
        manifest.incrs.push(incr);
        write_atomically(&manifest_path, manifest.text().as_bytes())
            .map_err(|e| PersistError(format!("{}: {e}", manifest_path.display())))?;
        delete_history(&dir, &mut manifest);
        let _ = write_atomically(&manifest_path, manifest.text().as_bytes());
        self.install_aof(dir, stem, manifest, file);
        drop(dbs);
        Ok(())
    }

    /// CONFIG SET appendonly no: what was fed is written and synced, then nothing more.
    fn stop_aof(&self) {
        self.flush_aof_sync(true);
        self.feed().set_on(false);
        *lock(&self.persist_state().aof) = None;
    }

    /// Writes what was fed to the append-only file (and syncs it under `appendfsync
    /// always`). Cheap when nothing was fed.
    pub fn flush_aof(&self) {
        self.flush_aof_sync(self.fsync_policy() == Fsync::Always);
    }

    fn flush_aof_sync(&self, sync: bool) {
        if !self.feed().on() {
            return;
        }
        let mut guard = lock(&self.persist_state().aof);
        let Some(aof) = guard.as_mut() else { return };
        // Taken under the file's lock, so writes reach the file in the order fed.
        if let Some(bytes) = self.feed().take() {
            match aof.file.write_all(&bytes) {
                Ok(()) => {
                    aof.size += bytes.len() as u64;
                    aof.unsynced = true;
                    aof.write_ok = true;
                }
                Err(_) => aof.write_ok = false,
            }
        }
        if sync && aof.unsynced {
            if aof.file.sync_data().is_ok() {
                aof.unsynced = false;
                aof.last_sync = Instant::now();
            } else {
                aof.write_ok = false;
            }
        }
    }

    // ---- snapshots ----

    /// Writes a snapshot of locked databases and of `functions` (taken before the locks:
    /// a running script holds the VM while it waits for them) to `path` through a
    /// temporary file.
    fn write_snapshot(
        &self,
        path: &Path,
        dbs: &[(usize, Locked<'_>)],
        aof_base: bool,
        functions: &[Vec<u8>],
    ) -> io::Result<u64> {
        let extras = self.extras(aof_base, functions);
        let dir = path.parent().unwrap_or(Path::new("."));
        let temp = dir.join(format!("temp-{}-{}.rdb", std::process::id(), now_s()));
        let result = (|| {
            let mut w = BufWriter::with_capacity(1 << 20, File::create(&temp)?);
            let n = rdb::write(&mut w, dbs, &extras)?;
            let f = w.into_inner().map_err(|e| e.into_error())?;
            f.sync_all()?;
            fs::rename(&temp, path)?;
            sync_dir(dir);
            Ok(n)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result
    }

    fn extras<'a>(&self, aof_base: bool, functions: &'a [Vec<u8>]) -> rdb::Extras<'a> {
        rdb::Extras {
            functions,
            used_memory: 0,
            aof_base,
            list_fill: self
                .config_get("list-max-listpack-size")
                .and_then(|v| v.parse().ok())
                .unwrap_or(-2),
            now_s: now_s(),
        }
    }

    #[cfg(feature = "scripting")]
    fn library_codes_if_any(&self) -> Vec<Vec<u8>> {
        self.library_codes()
    }

    #[cfg(not(feature = "scripting"))]
    fn library_codes_if_any(&self) -> Vec<Vec<u8>> {
        Vec::new()
    }

    /// Saves every database to `path` now, with the keyspace locked while it writes.
    fn save_to(&self, path: &Path, aof_base: bool) -> io::Result<u64> {
        let functions = self.library_codes_if_any();
        let now = self.now_ms();
        let dbs: Vec<(usize, Locked<'_>)> = (0..DATABASES)
            .map(|i| (i, self.db(i).lock_all(now)))
            .collect();
        self.write_snapshot(path, &dbs, aof_base, &functions)
    }

    /// SAVE: writes the RDB file in the foreground (every command waits, as on
    /// redis-server). Refused while a background save runs.
    pub fn save(&self) -> Result<(), PersistError> {
        self.reap(false);
        let p = self.persist_state();
        if matches!(
            lock(&p.jobs).child.as_ref().map(|c| &c.kind),
            Some(Job::Rdb(_))
        ) {
            return fail("ERR Background save already in progress".into());
        }
        let path = self.rdb_path();
        let dirty = p.dirty.load(Ordering::Relaxed);
        let started = now_s();
        match self.save_to(&path, false) {
            Ok(_) => {
                p.dirty_at_save.store(dirty, Ordering::Relaxed);
                p.lastsave_s.store(started, Ordering::Relaxed);
                let mut jobs = lock(&p.jobs);
                jobs.saves += 1;
                jobs.last_bgsave_ok = true;
                Ok(())
            }
            Err(e) => fail(format!(
                "{}: {e} (check --dir, its permissions and free space)",
                path.display()
            )),
        }
    }

    /// LASTSAVE: when the last successful save began (the start, if none has).
    pub fn lastsave(&self) -> u64 {
        self.reap(false);
        self.lastsave_s()
    }

    /// [`Engine::lastsave`] without looking for a child's end (under the jobs' lock).
    fn lastsave_s(&self) -> u64 {
        match self.persist_state().lastsave_s.load(Ordering::Relaxed) {
            0 => self.server_started_unix_s(),
            t => t,
        }
    }

    /// Changes since the last successful save.
    pub fn changes_since_save(&self) -> u64 {
        let p = self.persist_state();
        p.dirty
            .load(Ordering::Relaxed)
            .saturating_sub(p.dirty_at_save.load(Ordering::Relaxed))
    }

    /// BGSAVE [SCHEDULE]: the reply's text, or its error.
    pub fn bgsave(&self, schedule: bool) -> Result<&'static str, String> {
        self.reap(false);
        let p = self.persist_state();
        {
            let mut jobs = lock(&p.jobs);
            match jobs.child.as_ref().map(|c| &c.kind) {
                Some(Job::Rdb(_)) => return Err("ERR Background save already in progress".into()),
                Some(Job::Rewrite) if schedule => {
                    jobs.bgsave_scheduled = true;
                    return Ok("Background saving scheduled");
                }
                Some(Job::Rewrite) => {
                    return Err("ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE SCHEDULE in order to schedule a BGSAVE whenever possible.".into())
                }
                None => {}
            }
        }
        self.start_job(Job::Rdb(self.rdb_path()))?;
        Ok("Background saving started")
    }

    /// BGREWRITEAOF: the reply's text, or its error.
    pub fn bgrewriteaof(&self) -> Result<&'static str, String> {
        self.reap(false);
        let p = self.persist_state();
        {
            let mut jobs = lock(&p.jobs);
            match jobs.child.as_ref().map(|c| &c.kind) {
                Some(Job::Rewrite) => {
                    return Err(
                        "ERR Background append only file rewriting already in progress".into(),
                    )
                }
                Some(Job::Rdb(_)) => {
                    jobs.rewrite_scheduled = true;
                    return Ok("Background append only file rewriting scheduled");
                }
                None => {}
            }
        }
        if !self.aof_enabled() {
            return Err(
                "ERR The append only file is off: turn it on with CONFIG SET appendonly yes".into(),
            );
        }
        self.start_job(Job::Rewrite)?;
        Ok("Background append only file rewriting started")
    }

    /// Forks a child for `job`, on the background thread when there is one (see the
    /// module's notes), else on this one.
    fn start_job(&self, job: Job) -> Result<(), String> {
        let sender = lock(&self.persist_state().cron).clone();
        if let Some(tx) = sender {
            let (done, rx) = mpsc::sync_channel(1);
            if tx
                .send(Request {
                    job: job.clone(),
                    done,
                })
                .is_ok()
            {
                return rx
                    .recv()
                    .unwrap_or_else(|_| Err("ERR the background thread is gone".into()));
            }
        }
        self.fork_job(job)
    }

    /// Serves a fork request (on the background thread).
    pub(crate) fn serve_request(&self, request: Request) {
        let result = self.fork_job(request.job);
        let _ = request.done.send(result);
    }

    /// Installs the background thread's request channel.
    pub(crate) fn set_cron(&self, tx: mpsc::Sender<Request>) {
        *lock(&self.persist_state().cron) = Some(tx);
    }

    /// Locks everything, prepares `job` (a rewrite switches to a new incremental file),
    /// forks the child that writes it, and unlocks.
    fn fork_job(&self, job: Job) -> Result<(), String> {
        let p = self.persist_state();
        let functions = self.library_codes_if_any();
        let now = self.now_ms();
        let dbs: Vec<(usize, Locked<'_>)> = (0..DATABASES)
            .map(|i| (i, self.db(i).lock_all(now)))
            .collect();
        let mut aof_guard = lock(&p.aof);
        let mut jobs = lock(&p.jobs);
        if jobs.child.is_some() {
            return Err("ERR Another child process is active".into());
        }
        jobs.temp_seq += 1;
        let temp = match &job {
            Job::Rdb(path) => path.parent().unwrap_or(Path::new(".")).join(format!(
                "temp-bg-{}-{}.rdb",
                std::process::id(),
                jobs.temp_seq
            )),
            Job::Rewrite => {
                let Some(aof) = aof_guard.as_mut() else {
                    return Err("ERR The append only file is off".into());
                };
                // What was fed goes to the old file; the child's base covers it.
                if let Some(bytes) = self.feed().take() {
                    if aof.file.write_all(&bytes).is_ok() {
                        aof.size += bytes.len() as u64;
                    }
                }
                let _ = aof.file.sync_data();
                let incr = aof.manifest.next_incr(&aof.stem);
                let file = OpenOptions::new()
                    .append(true)
                    .create(true)
                    .open(aof.dir.join(&incr.name))
                    .map_err(|e| format!("ERR cannot open {}: {e}", incr.name))?;
                aof.manifest.incrs.push(incr);
                write_atomically(
                    &aof::manifest_path(&aof.dir, &aof.stem),
                    aof.manifest.text().as_bytes(),
                )
                .map_err(|e| format!("ERR cannot write the manifest: {e}"))?;
                aof.file = file;
                self.feed().with_locked(true, |_| ());
                aof.dir.join(format!(
                    "temp-rewriteaof-bg-{}-{}.aof",
                    std::process::id(),
                    jobs.temp_seq
                ))
            }
        };
        let extras = self.extras(matches!(job, Job::Rewrite), &functions);
        let target = match &job {
            Job::Rdb(path) => Some(path.clone()),
            Job::Rewrite => None,
        };
        let started = Instant::now();
        let parent = unsafe { libc::getpid() };
        // SAFETY: the child runs only the snapshot writer over memory it has its own copy of
        // (every shard locked by this thread, which the child continues as), then `_exit`s
        // without running destructors or atexit handlers; it takes no lock another thread
        // could have held at the fork except the allocator's, which is fork-safe.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(format!("ERR fork failed: {}", io::Error::last_os_error()));
        }
        if pid == 0 {
            // The child.
            unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGPIPE] {
                    libc::signal(sig, libc::SIG_DFL);
                }
            }
            let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let written = (|| -> io::Result<()> {
                    let mut w = BufWriter::with_capacity(1 << 20, File::create(&temp)?);
                    rdb::write(&mut w, &dbs, &extras)?;
                    let f = w.into_inner().map_err(|e| e.into_error())?;
                    f.sync_all()?;
                    if let Some(target) = &target {
                        fs::rename(&temp, target)?;
                        sync_dir(target.parent().unwrap_or(Path::new(".")));
                    }
                    Ok(())
                })();
                written.is_ok()
            }))
            .unwrap_or(false);
            unsafe { libc::_exit(if ok { 0 } else { 1 }) }
        }
        jobs.latest_fork_us = started.elapsed().as_micros() as u64;
        jobs.forks += 1;
        jobs.child = Some(Child {
            pid,
            kind: job,
            started,
            started_s: now_s(),
            dirty_at_start: p.dirty.load(Ordering::Relaxed),
            temp,
        });
        drop(jobs);
        drop(aof_guard);
        drop(dbs);
        Ok(())
    }

    /// Whether a child has ended; handles its end if so. `block` waits for it. Called by
    /// the background thread's tick and by whatever asks about the child (INFO, SAVE,
    /// BGSAVE, BGREWRITEAOF, LASTSAVE), so an engine without that thread
    /// ([`Engine::with_clock`]) sees its children end too.
    fn reap(&self, block: bool) {
        let p = self.persist_state();
        if lock(&p.jobs).child.is_none() {
            return;
        }
        // The wait happens under the locks, so that of two threads reaping at once the
        // second finds no child rather than a wait that failed (ECHILD) for a save that
        // succeeded.
        let mut aof = lock(&p.aof);
        let mut jobs = lock(&p.jobs);
        let Some(pid) = jobs.child.as_ref().map(|c| c.pid) else {
            return;
        };
        let mut status = 0;
        let flags = if block { 0 } else { libc::WNOHANG };
        // SAFETY: waits for our own child; `status` is a valid pointer.
        let r = unsafe { libc::waitpid(pid, &mut status, flags) };
        if r == 0 {
            return;
        }
        let ok = r == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        let Some(child) = jobs.child.take() else {
            return;
        };
        let secs = child.started.elapsed().as_secs() as i64;
        match &child.kind {
            Job::Rdb(_) => {
                jobs.last_bgsave_ok = ok;
                jobs.last_bgsave_secs = secs;
                jobs.last_bgsave_at = Some(Instant::now());
                if ok {
                    jobs.saves += 1;
                    p.dirty_at_save
                        .store(child.dirty_at_start, Ordering::Relaxed);
                    p.lastsave_s.store(child.started_s, Ordering::Relaxed);
                } else {
                    let _ = fs::remove_file(&child.temp);
                }
            }
            Job::Rewrite => {
                jobs.last_rewrite_secs = secs;
                let done = ok
                    && aof
                        .as_mut()
                        .is_some_and(|a| finish_rewrite(a, &child.temp).is_ok());
                jobs.last_rewrite_ok = done;
                if !done {
                    let _ = fs::remove_file(&child.temp);
                }
            }
        }
    }

    /// What the background thread does every tick (Redis's `serverCron`): ends finished
    /// children, starts scheduled or due saves and rewrites, syncs the append-only file
    /// once a second under `everysec`.
    pub(crate) fn persistence_cron(&self) {
        self.reap(false);
        let p = self.persist_state();
        if self.fsync_policy() != Fsync::Always {
            self.flush_aof_sync(false);
        }
        if self.fsync_policy() == Fsync::Everysec {
            let handle = {
                let mut guard = lock(&p.aof);
                match guard.as_mut() {
                    Some(a) if a.unsynced && a.last_sync.elapsed() >= Duration::from_secs(1) => {
                        a.unsynced = false;
                        a.last_sync = Instant::now();
                        a.file.try_clone().ok()
                    }
                    _ => None,
                }
            };
            if let Some(f) = handle {
                if f.sync_data().is_err() {
                    if let Some(a) = lock(&p.aof).as_mut() {
                        a.write_ok = false;
                    }
                }
            }
        }
        let (busy, bgsave_scheduled, rewrite_scheduled, last_ok, last_at) = {
            let j = lock(&p.jobs);
            (
                j.child.is_some(),
                j.bgsave_scheduled,
                j.rewrite_scheduled,
                j.last_bgsave_ok,
                j.last_bgsave_at,
            )
        };
        if busy {
            return;
        }
        if rewrite_scheduled {
            lock(&p.jobs).rewrite_scheduled = false;
            if self.aof_enabled() {
                let _ = self.fork_job(Job::Rewrite);
                return;
            }
        }
        if bgsave_scheduled {
            lock(&p.jobs).bgsave_scheduled = false;
            let _ = self.fork_job(Job::Rdb(self.rdb_path()));
            return;
        }
        // The `save` schedule; after a failed save, retry no sooner than 5 s (Redis's
        // CONFIG_BGSAVE_RETRY_DELAY).
        let changes = self.changes_since_save();
        let since = now_s().saturating_sub(self.lastsave());
        let may_retry = last_ok || last_at.is_none_or(|t| t.elapsed() >= Duration::from_secs(5));
        if changes > 0 && may_retry {
            let points = save_points(&self.config_str("save"));
            if points
                .iter()
                .any(|&(secs, n)| changes >= n && since >= secs)
            {
                let _ = self.fork_job(Job::Rdb(self.rdb_path()));
                return;
            }
        }
        // The automatic rewrite.
        let percentage = self.config_num("auto-aof-rewrite-percentage");
        if percentage > 0 {
            let min = self.config_num("auto-aof-rewrite-min-size");
            let due = lock(&p.aof).as_ref().is_some_and(|a| {
                let base = a.base_size.max(1);
                a.size > min && a.size > base && (a.size - base) * 100 / base >= percentage
            });
            if due {
                let _ = self.fork_job(Job::Rewrite);
            }
        }
    }

    /// Before the engine's process ends (SHUTDOWN, SIGTERM): stops a child, writes and
    /// syncs the append-only file, and saves the RDB file if `save` is `Some(true)`, or if
    /// it is `None` and save points are configured (Redis's SHUTDOWN without arguments).
    pub fn persist_before_exit(&self, save: Option<bool>) -> Result<(), PersistError> {
        let p = self.persist_state();
        if p.persisted_for_exit.load(Ordering::Relaxed) {
            return Ok(());
        }
        let child = lock(&p.jobs).child.as_ref().map(|c| c.pid);
        if let Some(pid) = child {
            // SAFETY: signals our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
            self.reap(true);
        }
        self.flush_aof_sync(true);
        let save = save.unwrap_or_else(|| !save_points(&self.config_str("save")).is_empty());
        if save && p.half_done.load(Ordering::Relaxed) {
            return fail(
                "a script that had written was stopped by the shutdown: the RDB file is not saved from its half-done state (the append-only file, if on, holds everything before it)"
                    .into(),
            );
        }
        if save {
            self.save()?;
        }
        p.persisted_for_exit.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Marks the keyspace as holding part of a stopped script's effects (see
    /// [`Engine::stop_script_for_shutdown`]).
    #[cfg(feature = "scripting")]
    pub(crate) fn note_half_done_script(&self) {
        self.persist_state()
            .half_done
            .store(true, Ordering::Relaxed);
    }

    /// Whether a shutdown stopped a script that had written.
    #[cfg(feature = "scripting")]
    pub(crate) fn half_done_script(&self) -> bool {
        self.persist_state().half_done.load(Ordering::Relaxed)
    }

    /// Asks the server serving this engine to stop (SHUTDOWN).
    pub fn request_shutdown(&self) {
        let p = self.persist_state();
        p.shutdown.store(true, Ordering::SeqCst);
        p.shutdown_notify.notify_waiters();
    }

    /// Resolves once SHUTDOWN asked the server to stop.
    pub async fn shutdown_requested(&self) {
        let p = self.persist_state();
        loop {
            let notified = p.shutdown_notify.notified();
            if p.shutdown.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }

    /// INFO's persistence section.
    pub(crate) fn persistence_info(&self) -> Vec<(&'static str, String)> {
        self.reap(false);
        let p = self.persist_state();
        // The module's lock order: the AOF state, then the jobs.
        let aof = lock(&p.aof);
        let jobs = lock(&p.jobs);
        let child = jobs.child.as_ref();
        let bgsave = matches!(child.map(|c| &c.kind), Some(Job::Rdb(_)));
        let rewrite = matches!(child.map(|c| &c.kind), Some(Job::Rewrite));
        let ok = |b: bool| if b { "ok" } else { "err" }.to_string();
        let mut out = vec![
            (
                "loading",
                u8::from(p.loading.load(Ordering::Relaxed)).to_string(),
            ),
            ("async_loading", "0".into()),
            (
                "rdb_changes_since_last_save",
                self.changes_since_save().to_string(),
            ),
            ("rdb_bgsave_in_progress", u8::from(bgsave).to_string()),
            ("rdb_last_save_time", self.lastsave_s().to_string()),
            ("rdb_last_bgsave_status", ok(jobs.last_bgsave_ok)),
            (
                "rdb_last_bgsave_time_sec",
                jobs.last_bgsave_secs.to_string(),
            ),
            (
                "rdb_current_bgsave_time_sec",
                child
                    .filter(|_| bgsave)
                    .map_or(-1, |c| c.started.elapsed().as_secs() as i64)
                    .to_string(),
            ),
            ("rdb_saves", jobs.saves.to_string()),
            ("aof_enabled", u8::from(aof.is_some()).to_string()),
            ("aof_rewrite_in_progress", u8::from(rewrite).to_string()),
            (
                "aof_rewrite_scheduled",
                u8::from(jobs.rewrite_scheduled).to_string(),
            ),
            (
                "aof_last_rewrite_time_sec",
                jobs.last_rewrite_secs.to_string(),
            ),
            ("aof_last_bgrewrite_status", ok(jobs.last_rewrite_ok)),
            (
                "aof_last_write_status",
                ok(aof.as_ref().is_none_or(|a| a.write_ok)),
            ),
        ];
        if let Some(a) = aof.as_ref() {
            out.push(("aof_current_size", a.size.to_string()));
            out.push(("aof_base_size", a.base_size.to_string()));
        }
        out
    }

    /// INFO stats' `latest_fork_usec` and `total_forks`.
    pub(crate) fn fork_stats(&self) -> (u64, u64) {
        let jobs = lock(&self.persist_state().jobs);
        (jobs.latest_fork_us, jobs.forks)
    }
}

/// After a rewrite's child succeeded: its file becomes the base, the incremental file
/// opened at the fork the only one after it, and the files before go.
fn finish_rewrite(aof: &mut AofState, temp: &Path) -> io::Result<()> {
    let base = aof.manifest.next_base(&aof.stem);
    fs::rename(temp, aof.dir.join(&base.name))?;
    let mut next = aof.manifest.clone();
    let current = next.incrs.pop();
    let mut history: Vec<aof::FileInfo> = next.to_load().cloned().collect();
    for f in &mut history {
        f.kind = aof::Kind::History;
    }
    next.history.extend(history);
    next.base = Some(base);
    next.incrs = current.into_iter().collect();
    write_atomically(
        &aof::manifest_path(&aof.dir, &aof.stem),
        next.text().as_bytes(),
    )?;
    delete_history(&aof.dir, &mut next);
    write_atomically(
        &aof::manifest_path(&aof.dir, &aof.stem),
        next.text().as_bytes(),
    )?;
    aof.manifest = next;
    aof.size = files_size(&aof.dir, &aof.manifest);
    aof.base_size = aof.size;
    Ok(())
}

/// Deletes the manifest's history files and forgets them.
fn delete_history(dir: &Path, manifest: &mut aof::Manifest) {
    for f in manifest.history.drain(..) {
        let _ = fs::remove_file(dir.join(&f.name));
    }
}

/// The bytes of every file the manifest loads.
fn files_size(dir: &Path, manifest: &aof::Manifest) -> u64 {
    manifest
        .to_load()
        .filter_map(|f| fs::metadata(dir.join(&f.name)).ok())
        .map(|m| m.len())
        .sum()
}

/// `save`'s (seconds, changes) pairs.
fn save_points(value: &str) -> Vec<(u64, u64)> {
    let nums: Vec<u64> = value
        .split_whitespace()
        .filter_map(|n| n.parse().ok())
        .collect();
    nums.chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| (c[0], c[1]))
        .collect()
}

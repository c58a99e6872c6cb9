//! What the engine knows of all its clients at once: the registry of live clients (CLIENT
//! LIST, KILL, UNBLOCK), the pause state (CLIENT PAUSE / UNPAUSE) and the MONITOR feed.
//!
//! Cost on the command path, by design: nothing here is locked per command. A client
//! publishes its own state with relaxed stores into its [`ClientShared`]; the registry's
//! lock is taken when a client comes or goes and by CLIENT LIST/KILL/UNBLOCK. Whether the
//! server is paused and whether anyone monitors are each one relaxed atomic load.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::sync::{mpsc, Notify};

use super::meta;
use crate::engine::client::{Client, ClientShared};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock only means a panic elsewhere; the maps stay whole.
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The engine's live clients, by id (so CLIENT LIST lists them in connection order).
#[derive(Debug, Default)]
pub struct ClientRegistry {
    clients: Mutex<BTreeMap<u64, Weak<ClientShared>>>,
}

impl ClientRegistry {
    /// Registers a client; it leaves the registry when its last handle is dropped.
    pub(crate) fn add(self: &Arc<Self>, shared: &Arc<ClientShared>) {
        shared.bind_registry(Arc::downgrade(self));
        lock(&self.clients).insert(shared.id, Arc::downgrade(shared));
    }

    pub(crate) fn remove(&self, id: u64) {
        lock(&self.clients).remove(&id);
    }

    /// Every live client, in id order; a client killed and not yet gone is left out, as
    /// Redis frees it at once.
    pub(crate) fn all(&self) -> Vec<Arc<ClientShared>> {
        // Filtered after the lock is released: dropping the last handle of a client removes
        // it from the registry, which takes the lock.
        let live: Vec<Arc<ClientShared>> = lock(&self.clients)
            .values()
            .filter_map(Weak::upgrade)
            .collect();
        live.into_iter().filter(|c| !c.killed()).collect()
    }

    /// The live client with this id.
    pub(crate) fn get(&self, id: u64) -> Option<Arc<ClientShared>> {
        let client = lock(&self.clients).get(&id).and_then(Weak::upgrade);
        client.filter(|c| !c.killed())
    }
}

// ---- CLIENT PAUSE ----

/// What CLIENT PAUSE holds back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum PauseKind {
    /// Commands that may write (Redis's `write` and `may_replicate` flags).
    Write = 1,
    /// Every command.
    All = 2,
}

/// The pause: its kind and end, and a wake-up for the clients waiting on it.
#[derive(Debug, Default)]
pub struct Pause {
    /// 0 when not paused: the one load every command makes.
    active: AtomicU8,
    state: Mutex<Option<(PauseKind, Instant)>>,
    lifted: Notify,
}

impl Pause {
    /// Pauses until `end`; a pause in force is only extended or made stricter, as in Redis.
    pub(crate) fn pause(&self, kind: PauseKind, end: Instant) {
        let mut state = lock(&self.state);
        let next = match *state {
            Some((k, e)) => (k.max(kind), e.max(end)),
            None => (kind, end),
        };
        *state = Some(next);
        self.active.store(next.0 as u8, Ordering::Release);
    }

    /// CLIENT UNPAUSE.
    pub(crate) fn unpause(&self) {
        *lock(&self.state) = None;
        self.active.store(0, Ordering::Release);
        self.lifted.notify_waiters();
    }

    /// The pause in force, if any (a pause whose end passed is lifted here).
    fn current(&self) -> Option<(PauseKind, Instant)> {
        if self.active.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let state = *lock(&self.state);
        match state {
            Some((_, end)) if end <= Instant::now() => {
                self.unpause();
                None
            }
            other => other,
        }
    }
}

impl crate::engine::handle::Engine {
    /// When the command `args` of `client` may run, if CLIENT PAUSE holds it back now: the
    /// server waits until then, or until [`Engine::pause_lifted`](Self::pause_lifted) fires,
    /// and asks again. One relaxed load when nothing is paused.
    pub fn paused_until(&self, client: &Client, args: &[&[u8]]) -> Option<Instant> {
        let (kind, end) = self.server().pause.current()?;
        match kind {
            PauseKind::All => Some(end),
            PauseKind::Write => may_write(client, args).then_some(end),
        }
    }

    /// Resolves when CLIENT UNPAUSE runs.
    pub async fn pause_lifted(&self) {
        self.server().pause.lifted.notified().await;
    }

    /// The engine's live clients' shared state, in id order (CLIENT LIST).
    pub fn clients(&self) -> Vec<Arc<ClientShared>> {
        self.server().registry.all()
    }
}

/// Whether a command may write, as a WRITE pause sees it: the `write` or `may_replicate`
/// flag, or EXEC of a transaction queuing such a command.
fn may_write(client: &Client, args: &[&[u8]]) -> bool {
    let writes = |name: &[u8]| {
        meta::lookup(name).is_some_and(|m| m.has_flag("write") || m.has_flag("may_replicate"))
    };
    if args
        .first()
        .is_some_and(|a| a.eq_ignore_ascii_case(b"exec"))
    {
        return client
            .multi
            .as_ref()
            .is_some_and(|q| q.iter().any(|c| c.first().is_some_and(|n| writes(n))));
    }
    args.first().is_some_and(|n| writes(n))
}

// ---- MONITOR ----

/// A line for the monitors, shared by all of them.
pub type MonitorLine = Arc<[u8]>;

/// Lines a monitor may leave unread before it is cut off (its queue closes and the server
/// drops the connection), so a monitor that stops reading cannot grow the engine's memory
/// without bound.
pub const MONITOR_BACKLOG: usize = 1 << 16;

/// The clients in MONITOR mode: each gets every command's line through its own queue.
#[derive(Debug, Default)]
pub struct Monitors {
    /// How many monitors there are: the one load every command makes.
    count: AtomicUsize,
    senders: Mutex<Vec<mpsc::Sender<MonitorLine>>>,
}

impl Monitors {
    pub(crate) fn active(&self) -> bool {
        self.count.load(Ordering::Relaxed) > 0
    }

    fn add(&self) -> mpsc::Receiver<MonitorLine> {
        let (tx, rx) = mpsc::channel(MONITOR_BACKLOG);
        let mut senders = lock(&self.senders);
        senders.push(tx);
        self.count.store(senders.len(), Ordering::Relaxed);
        rx
    }

    /// Sends a line to every monitor; monitors that left or fell [`MONITOR_BACKLOG`] lines
    /// behind are dropped.
    fn feed(&self, line: MonitorLine) {
        let mut senders = lock(&self.senders);
        senders.retain(|tx| tx.try_send(Arc::clone(&line)).is_ok());
        self.count.store(senders.len(), Ordering::Relaxed);
    }
}

impl crate::engine::handle::Engine {
    /// MONITOR: from now on, every command any client runs arrives on the returned queue as
    /// redis-server writes it to monitors (a status line). Dropping the queue ends it; the
    /// queue closes when the monitor falls [`MONITOR_BACKLOG`] lines behind.
    pub fn monitor(&self) -> mpsc::Receiver<MonitorLine> {
        self.server().monitors.add()
    }

    /// Sends `args`, run by `client`, to the monitors, unless nobody monitors (one relaxed
    /// load) or the command is one Redis keeps from them (`admin`, `skip_monitor`).
    pub fn feed_monitors(&self, client: &Client, args: &[&[u8]]) {
        let monitors = &self.server().monitors;
        if !monitors.active() || args.is_empty() {
            return;
        }
        let hidden = meta::lookup_request(args)
            .is_some_and(|m| m.has_flag("admin") || m.has_flag("skip_monitor"));
        if hidden {
            return;
        }
        monitors.feed(monitor_line(client, args, SystemTime::now()).into());
    }
}

/// `+<secs>.<micros> [<db> <addr>] "arg" ...\r\n`: Unix-socket clients as `unix:<path>`,
/// in-process clients (no address) as `in-process`.
pub(crate) fn monitor_line(client: &Client, args: &[&[u8]], at: SystemTime) -> Vec<u8> {
    let since = at.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let addr = match client.addr.as_deref() {
        Some(a) if a.starts_with('/') => format!("unix:{}", a.strip_suffix(":0").unwrap_or(a)),
        Some(a) => a.to_string(),
        None => "in-process".to_string(),
    };
    let mut out = format!(
        "+{}.{:06} [{} {}] ",
        since.as_secs(),
        since.subsec_micros(),
        client.db,
        addr
    )
    .into_bytes();
    for (i, arg) in args.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        quote(arg, &mut out);
    }
    out.extend_from_slice(b"\r\n");
    out
}

/// Redis's `sdscatrepr`: a double-quoted string with C escapes and `\xNN` for other
/// unprintable bytes.
pub(crate) fn quote(arg: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for &b in arg {
        match b {
            b'\\' | b'"' => out.extend_from_slice(&[b'\\', b]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x07 => out.extend_from_slice(b"\\a"),
            0x08 => out.extend_from_slice(b"\\b"),
            b' '..=b'~' => out.push(b),
            _ => out.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_lines_quote_like_sdscatrepr() {
        let mut c = Client::new(1);
        c.set_addresses("127.0.0.1:5000".into(), "127.0.0.1:6379".into());
        c.db = 3;
        let at = UNIX_EPOCH + Duration::from_micros(1_700_000_000_000_042);
        let line = monitor_line(&c, &[b"SET", b"k \"q\"", b"a\r\n\x01\xff\\"], at);
        assert_eq!(
            String::from_utf8(line).expect("ascii"),
            "+1700000000.000042 [3 127.0.0.1:5000] \"SET\" \"k \\\"q\\\"\" \
             \"a\\r\\n\\x01\\xff\\\\\"\r\n"
        );
        c.addr = Some("/tmp/r.sock:0".into());
        let line = monitor_line(&c, &[b"PING"], at);
        assert!(line.starts_with(b"+1700000000.000042 [3 unix:/tmp/r.sock] \"PING\""));
    }

    #[test]
    fn a_monitor_that_falls_behind_is_cut_off() {
        let engine = crate::engine::handle::Engine::new();
        let client = engine.client();
        let mut rx = engine.monitor();
        for _ in 0..MONITOR_BACKLOG {
            engine.feed_monitors(&client, &[b"GET", b"k"]);
        }
        assert!(engine.server().monitors.active());
        engine.feed_monitors(&client, &[b"GET", b"k"]);
        assert!(
            !engine.server().monitors.active(),
            "the full queue was dropped"
        );
        let mut lines = 0;
        while let Ok(line) = rx.try_recv() {
            assert!(line.ends_with(b"\"GET\" \"k\"\r\n"));
            lines += 1;
        }
        assert_eq!(lines, MONITOR_BACKLOG);
        assert!(rx.is_closed());
    }

    #[test]
    fn a_pause_extends_and_lifts() {
        let pause = Pause::default();
        assert!(pause.current().is_none());
        let end = Instant::now() + Duration::from_secs(60);
        pause.pause(PauseKind::All, end);
        pause.pause(PauseKind::Write, end - Duration::from_secs(30));
        assert_eq!(pause.current(), Some((PauseKind::All, end)));
        pause.unpause();
        assert!(pause.current().is_none());
        pause.pause(PauseKind::Write, Instant::now());
        assert!(pause.current().is_none(), "an ended pause lifts itself");
    }
}

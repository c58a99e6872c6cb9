//! The readiness event loop: the second I/O model ([`IoModel::Loop`](super::IoModel)), as
//! redis-server runs its clients. Each loop thread owns a `mio::Poll` and the connections
//! the accept loop handed it (round-robin, over a channel and a [`Wake`]), and runs passes:
//!
//! 1. wait for readiness (at most [`TICK`], Redis's `serverCron` at hz 10), or a [`Wake`];
//! 2. for each readable connection, read once (one [`READ_CHUNK`] into the thread's buffer,
//!    or behind what the connection holds) and run every complete request it now has; the
//!    replies of every connection go into one buffer of the thread;
//! 3. write each connection's replies without waiting (Redis's `beforeSleep` /
//!    `handleClientsWithPendingWrites`): what a socket does not take stays with that
//!    connection, which then waits for WRITABLE and reads nothing more until it is drained.
//!
//! A read that filled its buffer may have left bytes in the socket; readiness is
//! edge-triggered, so that connection is read again in the next pass without waiting.
//!
//! Hand-off rule: a connection stays on its loop while each request is answered at once.
//! After a batch that leaves it blocked (BLPOP...), paused (CLIENT PAUSE), subscribed, a
//! monitor or tracking keys (CLIENT TRACKING: invalidations arrive while it is idle), and before a request that may run long (a script, or anything while a script
//! runs), it moves to the task design ([`Connection`]) with its unwritten replies, unread
//! input, parser, session, `maxclients` permit and the server's shutdown signals: waits and
//! wake-ups from other connections are that design's job, and a script must never hold a
//! loop thread that SCRIPT KILL would have to come through. Once it waits on nothing but its
//! socket again, its replies written, the task gives it back to this loop, so that requests
//! from every plain client run on one thread in the order they arrived (as on redis-server).
//!
//! Memory: an idle connection holds its stream, parser and session; input is read into the
//! thread's buffer and only what a batch leaves (part of a request) is kept, released once
//! empty. CLIENT KILL closes a connection after its batch or at the next tick.

use std::io::{self, Read, Write};
use std::net::Shutdown;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc as std_mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Buf, BytesMut};
use mio::event::Source;
use mio::{Events, Interest, Poll, Token};
use slab::Slab;
use tokio::runtime::Handle;
use tokio::sync::{broadcast, mpsc, OwnedSemaphorePermit};

use super::connection::{
    run_requests, write_now, Connection, Parts, Session, Socket, Stop, MAX_IDLE_BUFFER,
    MAX_READ_RESERVE, READ_CHUNK,
};
use crate::resp::RequestParser;

/// The longest a loop sleeps: how soon an idle connection's CLIENT KILL takes effect and a
/// shutdown that lost its wake-up is noticed (Redis's `serverCron` runs 10 times a second).
const TICK: Duration = Duration::from_millis(100);

/// The token of each loop's [`Wake`]; connections are numbered from 0 by their slab key.
const WAKER: Token = Token(usize::MAX);

/// Readiness events taken per poll.
const EVENTS_PER_POLL: usize = 1024;

/// An accepted stream on its way from the tokio accept loop to a loop thread.
pub(super) enum StdStream {
    Tcp(std::net::TcpStream),
    Unix(std::os::unix::net::UnixStream),
    /// A TCP client that speaks TLS, with its session (mid-handshake, perhaps).
    Tls(std::net::TcpStream, Box<rustls::ServerConnection>),
}

/// A new client for a loop: its stream, its session and its `maxclients` permit.
pub(super) struct Accepted {
    pub(super) stream: StdStream,
    pub(super) session: Session,
    pub(super) permit: OwnedSemaphorePermit,
}

/// A client its task gives back to the loop that handed it over: what [`Accepted`] holds,
/// and its parser and unread bytes.
struct Returned {
    parts: Parts,
    permit: OwnedSemaphorePermit,
}

/// How a handed-off connection's task reaches its loop again.
#[derive(Clone)]
struct GiveBack {
    to: std_mpsc::Sender<Returned>,
    waker: Arc<Wake>,
}

impl GiveBack {
    /// Sends `client` back; a loop that is gone (shutting down) drops it, which closes it.
    fn give(&self, client: Returned) {
        if self.to.send(client).is_ok() {
            self.waker.wake();
        }
    }
}

/// What every loop thread of a server needs from the server.
pub(super) struct LoopContext {
    /// The server's runtime, where handed-off connections run.
    pub(super) runtime: Handle,
    /// Closed when the server shuts down; each handed-off connection gets its own receiver.
    pub(super) shutdown: broadcast::Receiver<()>,
    /// Held by each loop thread and handed-off connection: the server's drain waits until
    /// every clone is gone.
    pub(super) done: mpsc::Sender<()>,
    /// `proto-max-bulk-len` for each connection's parser.
    pub(super) max_bulk_len: u64,
    /// [`ServerConfig::busy_poll`](super::ServerConfig::busy_poll).
    pub(super) busy_poll: Duration,
}

/// The server's loop threads. Dropping it tells every loop to write its replies, close its
/// connections and end.
pub(super) struct Loops {
    loops: Vec<LoopHandle>,
    next: AtomicUsize,
}

struct LoopHandle {
    incoming: std_mpsc::Sender<Accepted>,
    waker: Arc<Wake>,
}

/// Wakes a loop: a byte into a socket pair whose other end the loop polls and drains.
///
/// Not `mio::Waker`: its eventfd is never read, and on this machine's Linux (6.18) a second
/// wake-up while the first was still counted produced no new edge, so a loop missed new
/// clients and its shutdown until something else woke it. Draining makes every wake-up
/// after it a new edge.
struct Wake(mio::net::UnixStream);

impl Wake {
    fn wake(&self) {
        // WouldBlock: the socket is full of unread wake-ups, so one is pending anyway.
        let _ = (&self.0).write(&[1]);
    }
}

/// Reads every pending wake-up, before the loop looks at what they announce.
fn drain_wakes(wakes: &mio::net::UnixStream) {
    let mut buf = [0u8; 64];
    while let Ok(n) = (&*wakes).read(&mut buf) {
        if n == 0 {
            break;
        }
    }
}

impl Loops {
    /// Starts `threads` loop threads (at least one).
    pub(super) fn start(threads: usize, context: LoopContext) -> io::Result<Loops> {
        // Built first, so a thread that fails to start stops those started before it.
        let mut started = Loops {
            loops: Vec::with_capacity(threads),
            next: AtomicUsize::new(0),
        };
        for i in 0..threads.max(1) {
            let poll = Poll::new()?;
            let (wake_tx, mut wakes) = mio::net::UnixStream::pair()?;
            poll.registry()
                .register(&mut wakes, WAKER, Interest::READABLE)?;
            let (tx, rx) = std_mpsc::channel();
            let (back_tx, back_rx) = std_mpsc::channel();
            let waker = Arc::new(Wake(wake_tx));
            let event_loop = EventLoop {
                poll,
                wakes,
                incoming: rx,
                returned: back_rx,
                give_back: GiveBack {
                    to: back_tx,
                    waker: waker.clone(),
                },
                conns: Slab::new(),
                runtime: context.runtime.clone(),
                shutdown: context.shutdown.resubscribe(),
                done: context.done.clone(),
                max_bulk_len: context.max_bulk_len,
                busy_poll: context.busy_poll,
                read_buf: vec![0; READ_CHUNK],
                replies: Vec::new(),
                pending: Vec::new(),
                again: Vec::new(),
                finishing: Vec::new(),
            };
            std::thread::Builder::new()
                .name(format!("edgebench-loop-{i}"))
                .spawn(move || event_loop.run())?;
            started.loops.push(LoopHandle {
                incoming: tx,
                waker,
            });
        }
        Ok(started)
    }

    /// Gives `client` to the next loop. A loop that is gone (it can only have panicked)
    /// drops it, which closes the connection.
    pub(super) fn assign(&self, client: Accepted) {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.loops.len();
        let chosen = &self.loops[i];
        if chosen.incoming.send(client).is_ok() {
            chosen.waker.wake();
        }
    }
}

impl Drop for Loops {
    fn drop(&mut self) {
        // A loop sees its channel disconnected when it wakes: that is the shutdown.
        for LoopHandle { incoming, waker } in self.loops.drain(..) {
            drop(incoming);
            waker.wake();
        }
    }
}

/// A loop's stream: TCP, a Unix socket, or TCP with a TLS session, registered with its
/// `Poll`.
enum LoopStream {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
    Tls(mio::net::TcpStream, Box<rustls::ServerConnection>),
}

impl LoopStream {
    fn source(&mut self) -> &mut dyn Source {
        match self {
            LoopStream::Tcp(s) | LoopStream::Tls(s, _) => s,
            LoopStream::Unix(s) => s,
        }
    }

    /// Reads what the client sent: for TLS, the plaintext, as much as fits (so a full
    /// `buf` means more may wait, as for a plain socket).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            LoopStream::Tcp(s) => (&*s).read(buf),
            LoopStream::Unix(s) => (&*s).read(buf),
            LoopStream::Tls(s, tls) => super::tls::read_plain(tls, &mut &*s, buf),
        }
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            LoopStream::Tcp(s) => (&*s).write(buf),
            LoopStream::Unix(s) => (&*s).write(buf),
            LoopStream::Tls(s, tls) => super::tls::write_plain(tls, &mut &*s, buf),
        }
    }

    /// Writes what the socket takes without waiting; returns how many bytes it took.
    fn write_now(&mut self, bytes: &[u8]) -> io::Result<usize> {
        write_now(|b| self.write(b), bytes)
    }

    /// Ciphertext a TLS session holds that the socket did not take yet.
    fn holds_output(&self) -> bool {
        matches!(self, LoopStream::Tls(_, tls) if tls.wants_write())
    }

    /// Writes what [`LoopStream::holds_output`] holds, as far as the socket takes it; true
    /// when nothing is left.
    fn flush_held(&mut self) -> io::Result<bool> {
        match self {
            LoopStream::Tls(s, tls) => super::tls::flush_tls(tls, &mut &*s),
            _ => Ok(true),
        }
    }

    fn shutdown_write(&mut self) {
        let _ = match self {
            LoopStream::Tcp(s) => s.shutdown(Shutdown::Write),
            LoopStream::Unix(s) => s.shutdown(Shutdown::Write),
            LoopStream::Tls(s, tls) => {
                tls.send_close_notify();
                let _ = super::tls::flush_tls(tls, &mut &*s);
                s.shutdown(Shutdown::Write)
            }
        };
    }
}

/// What becomes of a connection at the end of the pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Stays on the loop.
    Serve,
    /// Closes once its replies are written (QUIT, a protocol error).
    CloseAfterWrite,
    /// Closes now (end of stream, an I/O error, CLIENT KILL).
    Close,
    /// Moves to the task design; `run_held`: it stopped before a request that may run long,
    /// which its task runs first.
    HandOff { run_held: bool },
}

/// A client on a loop.
struct LoopConn {
    stream: LoopStream,
    /// What a batch left: part of a request, or the requests behind one the task design
    /// runs. Empty (no allocation) otherwise.
    input: BytesMut,
    parser: RequestParser,
    /// Its `output` holds the replies the socket did not take (then the connection waits
    /// for WRITABLE); this pass's replies are in the loop's `replies`.
    session: Session,
    permit: OwnedSemaphorePermit,
    /// Registered for WRITABLE, with replies waiting in `session.output`.
    writing: bool,
    fate: Fate,
}

/// One loop thread.
struct EventLoop {
    poll: Poll,
    /// The loop's end of its [`Wake`].
    wakes: mio::net::UnixStream,
    incoming: std_mpsc::Receiver<Accepted>,
    /// Clients handed off earlier that need a task no more.
    returned: std_mpsc::Receiver<Returned>,
    give_back: GiveBack,
    conns: Slab<LoopConn>,
    runtime: Handle,
    shutdown: broadcast::Receiver<()>,
    done: mpsc::Sender<()>,
    max_bulk_len: u64,
    busy_poll: Duration,
    /// The bytes a connection with no held input reads, whatever connection it is.
    read_buf: Vec<u8>,
    /// This pass's replies of every connection that had none waiting, in `pending` order.
    replies: Vec<u8>,
    /// Connections with replies in `replies`, and where.
    pending: Vec<(usize, Range<usize>)>,
    /// Connections to read in the next pass without waiting for readiness.
    again: Vec<usize>,
    /// Connections whose [`Fate`] is decided at the end of this pass.
    finishing: Vec<usize>,
}

impl EventLoop {
    fn run(mut self) {
        let mut events = Events::with_capacity(EVENTS_PER_POLL);
        let mut ready = Vec::new();
        let mut last_tick = Instant::now();
        let mut stopping = false;
        // Until when a loop that served requests polls instead of sleeping (busy_poll).
        let mut spin_until: Option<Instant> = None;
        while !stopping {
            let spinning = spin_until.is_some_and(|t| Instant::now() < t);
            let timeout = if self.again.is_empty() && !spinning {
                TICK
            } else {
                Duration::ZERO
            };
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                break;
            }
            if !events.is_empty() && !self.busy_poll.is_zero() {
                spin_until = Some(Instant::now() + self.busy_poll);
            } else if !spinning {
                spin_until = None;
            }
            ready.append(&mut self.again);
            for event in &events {
                match event.token() {
                    WAKER => stopping = !self.take_incoming(),
                    Token(key) => {
                        if event.is_writable() {
                            self.write_held(key);
                        }
                        if event.is_readable() || event.is_read_closed() || event.is_error() {
                            ready.push(key);
                        }
                        if event.is_read_closed() {
                            // The client sent its last bytes: once they are answered, the
                            // next read sees the end of the stream (no edge will announce
                            // it again).
                            self.again.push(key);
                        }
                    }
                }
            }
            for key in ready.drain(..) {
                self.serve(key);
            }
            self.write_replies();
            self.finish();
            if last_tick.elapsed() >= TICK {
                last_tick = Instant::now();
                self.close_killed();
                self.hand_off_pushed();
            }
        }
        self.close_all();
    }

    /// Registers the clients the accept loop sent; false once the server shuts down.
    fn take_incoming(&mut self) -> bool {
        drain_wakes(&self.wakes);
        while let Ok(Returned { parts, permit }) = self.returned.try_recv() {
            let (stream, session, parser, input) = parts;
            let client = Accepted {
                stream,
                session,
                permit,
            };
            self.register(client, parser, input);
        }
        loop {
            match self.incoming.try_recv() {
                Ok(client) => {
                    let parser = RequestParser::new(self.max_bulk_len);
                    self.register(client, parser, BytesMut::new());
                }
                Err(std_mpsc::TryRecvError::Empty) => return true,
                Err(std_mpsc::TryRecvError::Disconnected) => return false,
            }
        }
    }

    /// Serves `client` on this loop, with `parser` and the bytes it read but has not run
    /// (a client given back: see [`Connection::serve_or_return`]). Registering a socket
    /// that holds unread bytes reports it readable at once.
    fn register(&mut self, client: Accepted, parser: RequestParser, input: BytesMut) {
        let mut stream = match client.stream {
            StdStream::Tcp(s) => LoopStream::Tcp(mio::net::TcpStream::from_std(s)),
            StdStream::Unix(s) => LoopStream::Unix(mio::net::UnixStream::from_std(s)),
            StdStream::Tls(s, tls) => LoopStream::Tls(mio::net::TcpStream::from_std(s), tls),
        };
        // A TLS session may hold plaintext its task did not read (no readiness announces
        // it), or a new client's handshake may be in the socket already: read it once now.
        let tls = matches!(stream, LoopStream::Tls(..));
        let entry = self.conns.vacant_entry();
        // Dropping the stream on failure closes the connection; the client sees it closed.
        if self
            .poll
            .registry()
            .register(stream.source(), Token(entry.key()), Interest::READABLE)
            .is_ok()
        {
            let key = entry.key();
            entry.insert(LoopConn {
                stream,
                input,
                parser,
                session: client.session,
                permit: client.permit,
                writing: false,
                fate: Fate::Serve,
            });
            if tls {
                self.again.push(key);
            }
        }
    }

    /// Reads a readable connection once and runs the requests it completes.
    fn serve(&mut self, key: usize) {
        let Some(conn) = self.conns.get_mut(key) else {
            return;
        };
        // Replies still waiting for the socket hold back reading: a client that sends
        // without reading must not grow its output without bound. Draining reads again.
        if conn.fate != Fate::Serve || conn.writing {
            return;
        }
        let read = if conn.input.is_empty() {
            conn.stream
                .read(&mut self.read_buf)
                .map(|n| (n, n == self.read_buf.len()))
        } else {
            read_behind(conn)
        };
        let (n, filled) = match read {
            Ok((0, _)) => return self.decide(key, Fate::Close),
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                // A TLS handshake's answer the socket did not take waits for WRITABLE.
                if conn.stream.holds_output() {
                    self.wait_writable(key);
                }
                return;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return self.again.push(key),
            Err(_) => return self.decide(key, Fate::Close),
        };
        if filled {
            self.again.push(key);
        }
        let conn = &mut self.conns[key];
        let start = self.replies.len();
        let stop = if conn.input.is_empty() {
            run_into(&mut conn.session, &mut self.replies, |session| {
                let input = &self.read_buf[..n];
                let (consumed, stop) = run_requests(session, &mut conn.parser, input, true);
                conn.input.extend_from_slice(&input[consumed..]);
                stop
            })
        } else {
            // A held request: its replies follow those of the batch before it.
            let input = &mut conn.input;
            run_into(&mut conn.session, &mut self.replies, |session| {
                let (consumed, stop) = run_requests(session, &mut conn.parser, input, true);
                input.advance(consumed);
                stop
            })
        };
        if conn.input.is_empty() {
            conn.input = BytesMut::new();
        }
        if self.replies.len() > start {
            self.pending.push((key, start..self.replies.len()));
        }
        let session = &conn.session;
        let fate = if session.client.shared.killed() {
            Fate::Close
        } else if stop == Stop::Close {
            Fate::CloseAfterWrite
        } else if stop == Stop::LongRequest {
            Fate::HandOff { run_held: true }
        } else if session.needs_task() {
            Fate::HandOff { run_held: false }
        } else {
            return;
        };
        self.decide(key, fate);
    }

    /// Sets what becomes of `key` at the end of this pass (a key listed twice is harmless:
    /// the first [`EventLoop::finish`] of it acts).
    fn decide(&mut self, key: usize, fate: Fate) {
        if let Some(conn) = self.conns.get_mut(key) {
            conn.fate = fate;
            self.finishing.push(key);
        }
    }

    /// Writes this pass's replies, each connection's as far as its socket takes them; the
    /// rest waits in the connection for WRITABLE.
    fn write_replies(&mut self) {
        // Taken out (and put back, to keep its room) so that `decide` can borrow the loop.
        let mut pending = std::mem::take(&mut self.pending);
        // Writes are in the append-only file (and synced, under `appendfsync always`)
        // before any reply to them goes out, as redis-server's `beforeSleep` does.
        if let Some(conn) = pending.first().and_then(|(key, _)| self.conns.get(*key)) {
            conn.session.engine.flush_aof();
        }
        for (key, range) in pending.drain(..) {
            let Some(conn) = self.conns.get_mut(key) else {
                continue;
            };
            if conn.fate == Fate::Close {
                continue;
            }
            let replies = &self.replies[range];
            let written = if conn.session.output.is_empty() {
                conn.stream.write_now(replies)
            } else {
                Ok(0)
            };
            match written {
                Ok(n) => conn.session.output.extend_from_slice(&replies[n..]),
                Err(_) => {
                    conn.fate = Fate::Close;
                    self.finishing.push(key);
                    continue;
                }
            }
            if !conn.session.output.is_empty() || conn.stream.holds_output() {
                self.wait_writable(key);
            }
        }
        self.pending = pending;
        self.replies.clear();
        if self.replies.capacity() > MAX_IDLE_BUFFER {
            // One huge reply must not pin its memory to the thread.
            self.replies = Vec::new();
        }
    }

    /// Registers `key` for WRITABLE: its replies (or a TLS session's ciphertext) wait for
    /// the socket, and it reads nothing more until they are out.
    fn wait_writable(&mut self, key: usize) {
        let Some(conn) = self.conns.get_mut(key) else {
            return;
        };
        if conn.writing {
            return;
        }
        conn.writing = true;
        let interest = Interest::READABLE | Interest::WRITABLE;
        if self
            .poll
            .registry()
            .reregister(conn.stream.source(), Token(key), interest)
            .is_err()
        {
            self.decide(key, Fate::Close);
        }
    }

    /// Writes the replies a connection holds, now that its socket takes more; once they are
    /// all out, it reads again.
    fn write_held(&mut self, key: usize) {
        let Some(conn) = self.conns.get_mut(key) else {
            return;
        };
        if !conn.writing || conn.fate == Fate::Close {
            return;
        }
        let written = conn
            .stream
            .flush_held()
            .and_then(|_| conn.stream.write_now(&conn.session.output));
        match written {
            Ok(n) => drop(conn.session.output.drain(..n)),
            Err(_) => return self.decide(key, Fate::Close),
        }
        if !conn.session.output.is_empty() || conn.stream.holds_output() {
            return;
        }
        conn.session.output = Vec::new();
        conn.writing = false;
        if conn.fate == Fate::CloseAfterWrite {
            return self.decide(key, Fate::Close);
        }
        if self
            .poll
            .registry()
            .reregister(conn.stream.source(), Token(key), Interest::READABLE)
            .is_err()
        {
            return self.decide(key, Fate::Close);
        }
        // Requests may have arrived while it wrote; readiness said so only once.
        self.again.push(key);
    }

    /// Closes or hands off the connections whose fate this pass decided.
    fn finish(&mut self) {
        for key in std::mem::take(&mut self.finishing) {
            let Some(conn) = self.conns.get(key) else {
                continue;
            };
            match conn.fate {
                Fate::Serve => {}
                Fate::CloseAfterWrite if conn.writing => {
                    // Closed by `write_held` once its replies are out.
                }
                Fate::CloseAfterWrite | Fate::Close => {
                    let mut conn = self.conns.remove(key);
                    let _ = self.poll.registry().deregister(conn.stream.source());
                    if conn.fate == Fate::CloseAfterWrite {
                        conn.stream.shutdown_write();
                    }
                }
                Fate::HandOff { run_held } => {
                    let conn = self.conns.remove(key);
                    self.hand_off(conn, run_held);
                }
            }
        }
    }

    /// Moves `conn` to the task design on the server's runtime (see the module doc).
    fn hand_off(&mut self, mut conn: LoopConn, run_held: bool) {
        let _ = self.poll.registry().deregister(conn.stream.source());
        let LoopConn {
            stream,
            input,
            parser,
            session,
            permit,
            ..
        } = conn;
        let shutdown = self.shutdown.resubscribe();
        let done = self.done.clone();
        let give_back = self.give_back.clone();
        self.runtime.spawn(async move {
            // A connection's I/O error ends that connection; nothing to report.
            let served = match stream {
                LoopStream::Tcp(s) => match tokio::net::TcpStream::from_std(s.into()) {
                    Ok(s) => {
                        let connection = Connection::handed_over(s, session, parser, input);
                        resume(connection, run_held, shutdown).await
                    }
                    Err(e) => Err(e),
                },
                LoopStream::Unix(s) => match tokio::net::UnixStream::from_std(s.into()) {
                    Ok(s) => {
                        let connection = Connection::handed_over(s, session, parser, input);
                        resume(connection, run_held, shutdown).await
                    }
                    Err(e) => Err(e),
                },
                LoopStream::Tls(s, tls) => match tokio::net::TcpStream::from_std(s.into()) {
                    Ok(s) => {
                        let s = super::tls::TlsSocket::new(s, tls);
                        let connection = Connection::handed_over(s, session, parser, input);
                        resume(connection, run_held, shutdown).await
                    }
                    Err(e) => Err(e),
                },
            };
            if let Ok(Some(parts)) = served {
                give_back.give(Returned { parts, permit });
            }
            drop(done);
        });
    }

    /// CLIENT KILL of a connection that sent nothing since: closed at the tick.
    fn close_killed(&mut self) {
        let killed: Vec<usize> = self
            .conns
            .iter()
            .filter(|(_, conn)| conn.session.client.shared.killed())
            .map(|(key, _)| key)
            .collect();
        for key in killed {
            let mut conn = self.conns.remove(key);
            let _ = self.poll.registry().deregister(conn.stream.source());
        }
    }

    /// Connections that were sent messages while idle (client-side caching invalidations):
    /// moved to the task design, which writes them at once and wakes for the next ones
    /// (a loop connection notices them at this tick, or before its next batch).
    fn hand_off_pushed(&mut self) {
        let pushed: Vec<usize> = self
            .conns
            .iter()
            .filter(|(_, c)| c.fate == Fate::Serve && c.session.client.shared.has_pushes())
            .map(|(key, _)| key)
            .collect();
        for key in pushed {
            self.decide(key, Fate::HandOff { run_held: false });
        }
        self.finish();
    }

    /// Shutdown: every batch has run (a pass runs whole); what the sockets take of their
    /// replies goes out, then every connection closes.
    fn close_all(&mut self) {
        for (_, conn) in self.conns.iter_mut() {
            if !conn.session.output.is_empty() {
                let _ = conn.stream.write_now(&conn.session.output);
            }
            conn.stream.shutdown_write();
        }
        self.conns.clear();
    }
}

/// Reads behind the part of a request `conn` holds, making room for the rest of a large
/// bulk string at once (as the task design does); returns the bytes read and whether they
/// filled the room.
fn read_behind(conn: &mut LoopConn) -> io::Result<(usize, bool)> {
    let missing = conn.parser.bytes_needed().saturating_sub(conn.input.len());
    let room = missing.clamp(READ_CHUNK, MAX_READ_RESERVE);
    let held = conn.input.len();
    // Zeroed: `Read` takes initialized bytes. This path runs only behind a partial request;
    // the common batch reads into the loop's buffer, zeroed once.
    conn.input.resize(held + room, 0);
    let read = conn.stream.read(&mut conn.input[held..]);
    conn.input.truncate(held + *read.as_ref().unwrap_or(&0));
    read.map(|n| (n, n == room))
}

/// Runs `batch` with `replies` as the session's output (the session has none waiting),
/// so every connection of the pass answers into the loop's one buffer.
fn run_into(
    session: &mut Session,
    replies: &mut Vec<u8>,
    batch: impl FnOnce(&mut Session) -> Stop,
) -> Stop {
    std::mem::swap(&mut session.output, replies);
    let stop = batch(session);
    std::mem::swap(&mut session.output, replies);
    stop
}

/// The connection's life in the task design: first the request it stopped before, when it
/// stopped before one, then [`Connection::serve`].
async fn resume<S: Socket>(
    mut connection: Connection<S>,
    run_held: bool,
    shutdown: broadcast::Receiver<()>,
) -> io::Result<Option<Parts>> {
    if run_held && connection.run_held_input() {
        // QUIT or a protocol error behind it: answer, then close.
        return connection.flush().await.map(|()| None);
    }
    connection.serve_or_return(shutdown).await
}

//! The propagation feed: the write commands the append-only file will hold, in the order
//! they took effect, as RESP (what Redis calls `aof_buf`).
//!
//! Order: a command is fed while it still holds its shards' locks, so two commands on one
//! key reach the feed in the order they ran, whatever threads they ran on; commands on
//! different keys may interleave, which replays to the same keyspace. A key that expires is
//! fed as `DEL` under the same lock, before the command that found it expired, so a replay
//! (during which nothing expires, as in Redis) sees what the command saw.
//!
//! The feed sits beside the keyspace (each [`super::keyspace::Db`] holds it, to feed expired
//! keys) and knows no files: `persist` writes what it takes from here.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use crate::resp::encode::{write_bulk, write_len};

/// The feed, shared by an engine's databases.
#[derive(Debug, Default)]
pub struct Feed {
    /// Whether commands are fed (the append-only file is on). Off, feeding costs one
    /// relaxed load per write.
    on: AtomicBool,
    /// While a file is replayed: nothing expires, nothing is fed back.
    loading: AtomicBool,
    buf: Mutex<Buf>,
}

#[derive(Debug, Default)]
struct Buf {
    bytes: Vec<u8>,
    /// The database the last fed command ran in (a `SELECT` is fed when it changes).
    db: Option<usize>,
}

impl Feed {
    /// Whether commands are fed.
    pub fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// Starts or stops feeding; either way what was fed and not taken is dropped, and the
    /// next command is fed with a `SELECT`.
    pub fn set_on(&self, on: bool) {
        let mut buf = self.lock();
        buf.bytes.clear();
        buf.db = None;
        self.on.store(on, Ordering::Relaxed);
    }

    /// Whether a file is being replayed (keys do not expire meanwhile).
    pub fn loading(&self) -> bool {
        self.loading.load(Ordering::Relaxed)
    }

    /// Marks a replay's start or end.
    pub fn set_loading(&self, loading: bool) {
        self.loading.store(loading, Ordering::Relaxed);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Buf> {
        self.buf.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Feeds commands run in database `db`, in order. The caller holds the locks of the
    /// keys they wrote.
    pub fn push<A: AsRef<[u8]>>(&self, db: usize, commands: &[&[A]]) {
        if !self.on() || self.loading() {
            return;
        }
        let mut encoded = Vec::new();
        for args in commands {
            encode(args, &mut encoded);
        }
        self.append(db, &encoded, db);
    }

    /// Feeds a transaction's commands, each with its database, as one block between MULTI
    /// and EXEC that no other command's bytes can split.
    pub fn push_transaction<A: AsRef<[u8]>>(&self, commands: &[(usize, Vec<A>)]) {
        if !self.on() || self.loading() || commands.is_empty() {
            return;
        }
        let first = commands[0].0;
        let mut encoded = Vec::new();
        encode(&[&b"MULTI"[..]], &mut encoded);
        let mut db = first;
        for (d, args) in commands {
            if *d != db {
                encode(&[&b"SELECT"[..], d.to_string().as_bytes()], &mut encoded);
                db = *d;
            }
            encode(args, &mut encoded);
        }
        encode(&[&b"EXEC"[..]], &mut encoded);
        self.append(first, &encoded, db);
    }

    /// Appends commands encoded for database `db`, which leave the file in `last_db`.
    fn append(&self, db: usize, encoded: &[u8], last_db: usize) {
        let mut buf = self.lock();
        if buf.db != Some(db) {
            let n = db.to_string();
            encode(&[&b"SELECT"[..], n.as_bytes()], &mut buf.bytes);
        }
        buf.db = Some(last_db);
        buf.bytes.extend_from_slice(encoded);
    }

    /// Feeds `DEL key` for a key that expired in database `db` (under its shard's lock).
    pub fn expired(&self, db: usize, key: &[u8]) {
        if self.on() {
            self.push(db, &[&[&b"DEL"[..], key]]);
        }
    }

    /// Takes what was fed since the last take; `None` if nothing was.
    pub fn take(&self) -> Option<Vec<u8>> {
        let mut buf = self.lock();
        if buf.bytes.is_empty() {
            return None;
        }
        Some(std::mem::take(&mut buf.bytes))
    }

    /// Runs `f` with the feed locked: nothing is fed meanwhile (a rewrite switches files
    /// under it). The next command is fed with a `SELECT` if `reselect`.
    pub fn with_locked<T>(&self, reselect: bool, f: impl FnOnce(&mut Vec<u8>) -> T) -> T {
        let mut buf = self.lock();
        if reselect {
            buf.db = None;
        }
        f(&mut buf.bytes)
    }
}

/// One command as a RESP array of bulk strings, as Redis writes it to its AOF (the reply
/// encoder's headers, without a `to_string` per argument).
pub fn encode<A: AsRef<[u8]>>(args: &[A], out: &mut Vec<u8>) {
    write_len(out, b'*', args.len());
    for a in args {
        write_bulk(out, a.as_ref());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feeds_a_select_when_the_database_changes_and_nothing_while_off() {
        let feed = Feed::default();
        feed.push(0, &[&["SET", "k", "v"]]);
        assert_eq!(feed.take(), None);
        feed.set_on(true);
        feed.push(0, &[&["SET", "k", "v"]]);
        feed.push(0, &[&["DEL", "k"]]);
        feed.expired(3, b"x");
        assert_eq!(
            feed.take().unwrap(),
            b"*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n\
              *2\r\n$3\r\nDEL\r\n$1\r\nk\r\n*2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n\
              *2\r\n$3\r\nDEL\r\n$1\r\nx\r\n"
                .to_vec()
        );
        assert_eq!(feed.take(), None);
        feed.set_loading(true);
        feed.push(3, &[&["SET", "k", "v"]]);
        assert_eq!(feed.take(), None);
    }
}

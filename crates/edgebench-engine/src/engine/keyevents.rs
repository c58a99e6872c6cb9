//! Keyspace notifications (CONFIG `notify-keyspace-events`): when a command changes a key,
//! a message on `__keyspace@<db>__:<key>` naming the event and one on
//! `__keyevent@<db>__:<event>` naming the key, as Redis 7.0 publishes them.
//!
//! The engine has no pub/sub of its own (a transport owns the subscribers), so the messages
//! go to a [`Publisher`] its server hands to [`Engine::set_publisher`]; without one they go
//! nowhere. Each command family calls [`Locked::notify`] itself, once per event, under the
//! locks of the key it changed and after the change, so the events are exactly the ones
//! Redis's command emits (none for a write refused with WRONGTYPE, `zincr` for ZADD INCR,
//! `lpush` then `lpop` for an LMOVE). Two events come from the keyspace instead, as they come
//! from Redis's `db.c`: `expired` when a key found past its deadline is removed (lazily or
//! by active expiry), and `new` when a key is added that did not exist.
//!
//! Invariants: the classes in force are one atomic, so a write with notifications off costs
//! one relaxed load and a branch. A message is handed to the publisher before the command
//! returns (and so before its reply is sent), keyspace channel first, as Redis delivers them.
//! The publisher runs under the command's shard locks: it must never call into the engine.
//!
//! Not emitted, because the engine has no such thing: `evicted` (no eviction), `keymiss`
//! (class `m`; read misses are not tracked), module events (`d`). The flags are still
//! accepted and shown, as Redis shows them.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, PoisonError, RwLock};

use super::handle::Engine;
use super::keyspace::Locked;

/// Where messages go: called with (channel, message) for each one, on the thread of the
/// command that caused it, under that command's shard locks.
pub type Publisher = Arc<dyn Fn(&[u8], &[u8]) + Send + Sync>;

/// A set of notification classes and channel kinds (Redis's `NOTIFY_*` bits, so a mask
/// reads the same in both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Classes(u32);

impl Classes {
    /// No class: nothing is published.
    pub const NONE: Classes = Classes(0);
    /// `K`: publish on `__keyspace@<db>__:<key>`.
    pub const KEYSPACE: Classes = Classes(1 << 0);
    /// `E`: publish on `__keyevent@<db>__:<event>`.
    pub const KEYEVENT: Classes = Classes(1 << 1);
    /// `g`: commands on any type (DEL, EXPIRE, RENAME, ...).
    pub const GENERIC: Classes = Classes(1 << 2);
    /// `$`: string commands.
    pub const STRING: Classes = Classes(1 << 3);
    /// `l`: list commands.
    pub const LIST: Classes = Classes(1 << 4);
    /// `s`: set commands.
    pub const SET: Classes = Classes(1 << 5);
    /// `h`: hash commands.
    pub const HASH: Classes = Classes(1 << 6);
    /// `z`: sorted set commands.
    pub const ZSET: Classes = Classes(1 << 7);
    /// `x`: a key expired.
    pub const EXPIRED: Classes = Classes(1 << 8);
    /// `e`: a key was evicted (never, here: the engine does not evict).
    pub const EVICTED: Classes = Classes(1 << 9);
    /// `t`: stream commands.
    pub const STREAM: Classes = Classes(1 << 10);
    /// `m`: a read missed its key (accepted, never emitted here).
    pub const KEY_MISS: Classes = Classes(1 << 11);
    /// `d`: module events (accepted, never emitted: there are no modules).
    pub const MODULE: Classes = Classes(1 << 13);
    /// `n`: a key was created.
    pub const NEW: Classes = Classes(1 << 14);
    /// `A`: every class but `m` and `n` (Redis's `NOTIFY_ALL`).
    pub const ALL: Classes = Classes(
        Classes::GENERIC.0
            | Classes::STRING.0
            | Classes::LIST.0
            | Classes::SET.0
            | Classes::HASH.0
            | Classes::ZSET.0
            | Classes::EXPIRED.0
            | Classes::EVICTED.0
            | Classes::STREAM.0
            | Classes::MODULE.0,
    );

    /// The letter of each flag but `A`, in the order CONFIG GET shows them (Redis's
    /// `keyspaceEventsFlagsToString`): the classes, then `K`, `E`, `m`.
    const LETTERS: [(u8, Classes); 14] = [
        (b'g', Classes::GENERIC),
        (b'$', Classes::STRING),
        (b'l', Classes::LIST),
        (b's', Classes::SET),
        (b'h', Classes::HASH),
        (b'z', Classes::ZSET),
        (b'x', Classes::EXPIRED),
        (b'e', Classes::EVICTED),
        (b't', Classes::STREAM),
        (b'd', Classes::MODULE),
        (b'n', Classes::NEW),
        (b'K', Classes::KEYSPACE),
        (b'E', Classes::KEYEVENT),
        (b'm', Classes::KEY_MISS),
    ];

    /// Flags as CONFIG SET takes them (`KEA`, `Ex`, `$lshzxeKE`, ""): `None` when a
    /// character names no flag. Letters may repeat and come in any order.
    pub fn parse(text: &[u8]) -> Option<Classes> {
        text.iter().try_fold(Classes::NONE, |acc, &c| {
            let flag = if c == b'A' {
                Classes::ALL
            } else {
                Classes::LETTERS.iter().find(|(l, _)| *l == c)?.1
            };
            Some(acc | flag)
        })
    }

    /// Whether any class of `other` is in this set.
    pub const fn intersects(self, other: Classes) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether every class of `other` is in this set.
    pub const fn contains(self, other: Classes) -> bool {
        self.0 & other.0 == other.0
    }
}

impl std::ops::BitOr for Classes {
    type Output = Classes;

    fn bitor(self, other: Classes) -> Classes {
        Classes(self.0 | other.0)
    }
}

/// The flags as CONFIG GET shows them: `A` for all of [`Classes::ALL`], else each class's
/// letter, then `K`, `E`, `m`. With `A`, Redis prints no other class letter, not even `n`
/// (which `A` does not include): `AnK` reads back as `AK` though `n` stays on. Shown the
/// same way here, since clients compare the text.
impl fmt::Display for Classes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let all = self.contains(Classes::ALL);
        if all {
            f.write_str("A")?;
        }
        let channel_kinds = Classes::KEYSPACE | Classes::KEYEVENT | Classes::KEY_MISS;
        for (letter, flag) in Classes::LETTERS {
            if (!all || channel_kinds.contains(flag)) && self.contains(flag) {
                write!(f, "{}", char::from(letter))?;
            }
        }
        Ok(())
    }
}

/// The engine's notification state, shared by its databases (each needs it for `expired`
/// and `new`, which the keyspace raises).
#[derive(Default)]
pub struct KeyEvents {
    /// The classes in force, as [`Classes`] bits: read on every notifying write.
    on: AtomicU32,
    /// Where messages go. Behind a lock only so a server can set it after the engine is
    /// shared; read only when some class is on.
    publisher: RwLock<Option<Publisher>>,
}

impl fmt::Debug for KeyEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyEvents")
            .field("on", &self.classes())
            .finish_non_exhaustive()
    }
}

impl KeyEvents {
    /// The classes in force.
    pub fn classes(&self) -> Classes {
        Classes(self.on.load(Ordering::Relaxed))
    }

    /// Sets the classes in force (CONFIG SET `notify-keyspace-events`).
    pub fn set_classes(&self, classes: Classes) {
        self.on.store(classes.0, Ordering::Relaxed);
    }

    /// Sets where messages go (`None`: nowhere).
    pub fn set_publisher(&self, publisher: Option<Publisher>) {
        *self
            .publisher
            .write()
            .unwrap_or_else(PoisonError::into_inner) = publisher;
    }

    /// Event `event` of class `class` happened to `key` of database `db`: publishes it on
    /// the channels in force, if its class is on. The common case, notifications off, is
    /// one relaxed load.
    #[inline]
    pub fn notify(&self, class: Classes, event: &str, key: &[u8], db: usize) {
        let on = self.classes();
        if on.intersects(class) {
            self.publish(on, event.as_bytes(), key, db);
        }
    }

    #[cold]
    fn publish(&self, on: Classes, event: &[u8], key: &[u8], db: usize) {
        // Cloned out of the lock, so a server replacing its publisher never waits on a
        // delivery.
        let Some(publisher) = self
            .publisher
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        else {
            return;
        };
        let db = db.to_string();
        let channel = |kind: &[u8], name: &[u8]| {
            let mut c = Vec::with_capacity(kind.len() + db.len() + 3 + name.len());
            c.extend_from_slice(kind);
            c.extend_from_slice(db.as_bytes());
            c.extend_from_slice(b"__:");
            c.extend_from_slice(name);
            c
        };
        if on.contains(Classes::KEYSPACE) {
            publisher(&channel(b"__keyspace@", key), event);
        }
        if on.contains(Classes::KEYEVENT) {
            publisher(&channel(b"__keyevent@", event), key);
        }
    }
}

impl Locked<'_> {
    /// Event `event` of class `class` happened to `key` of this database (see the module
    /// doc): call it once per event, after the change, with the key's shard still locked.
    #[inline]
    pub fn notify(&self, class: Classes, event: &str, key: &[u8]) {
        let db = self.db();
        db.events().notify(class, event, key, db.index());
    }

    /// After a command took elements from the collection at `key` (and announced that):
    /// removes the key if it is now empty, announcing `del`, as Redis's commands do.
    /// Whether it was removed.
    pub fn drop_emptied(&mut self, key: &[u8]) -> bool {
        let dropped = self.drop_if_empty(key);
        if dropped {
            self.notify(Classes::GENERIC, "del", key);
        }
        dropped
    }
}

impl Engine {
    /// Sends keyspace notifications to `publisher` (a server publishes them to its
    /// subscribers), replacing any earlier one. It is called synchronously, under the
    /// writing command's locks, so it must not call into the engine.
    pub fn set_publisher(&self, publisher: Publisher) {
        self.inner().events.set_publisher(Some(publisher));
    }

    /// The notification classes in force (CONFIG `notify-keyspace-events`).
    pub fn keyspace_events(&self) -> Classes {
        self.inner().events.classes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// (channel, message) pairs a test publisher received.
    type Received = Arc<Mutex<Vec<(Vec<u8>, Vec<u8>)>>>;

    fn shown(flags: &str) -> String {
        Classes::parse(flags.as_bytes())
            .map(|c| c.to_string())
            .unwrap_or_else(|| "invalid".into())
    }

    /// CONFIG GET shows what Redis 7.0 shows (its pubsub unit's flag round trips, and the
    /// `A` that hides `n`).
    #[test]
    fn flags_read_back_in_redis_order() {
        assert_eq!(shown("gKE"), "gKE");
        assert_eq!(shown("$lshzxeKE"), "$lshzxeKE");
        assert_eq!(shown("KA"), "AK");
        assert_eq!(shown("EA"), "AE");
        assert_eq!(shown("EKmndtexzhsl$g"), "AKEm");
        assert_eq!(shown("EKmndtexzhsl$"), "$lshzxetdnKEm");
        assert_eq!(shown("AnKEm"), "AKEm");
        assert_eq!(shown("gg"), "g");
        assert_eq!(shown(""), "");
        assert_eq!(shown("K"), "K");
        assert_eq!(shown("Kw"), "invalid");
        assert_eq!(shown("a"), "invalid");
        let an = Classes::parse(b"An").unwrap_or_default();
        assert!(an.contains(Classes::NEW) && an.contains(Classes::ALL));
    }

    /// Keyspace channel first, then keyevent; nothing for a class that is off, or without
    /// K and E.
    #[test]
    fn notify_publishes_on_the_channels_in_force() {
        let seen: Received = Arc::default();
        let events = KeyEvents::default();
        let sink = Arc::clone(&seen);
        events.set_publisher(Some(Arc::new(move |c: &[u8], m: &[u8]| {
            sink.lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push((c.to_vec(), m.to_vec()));
        })));
        let take = || std::mem::take(&mut *seen.lock().unwrap_or_else(PoisonError::into_inner));
        events.notify(Classes::STRING, "set", b"k", 3);
        assert!(take().is_empty(), "off by default");
        events.set_classes(Classes::parse(b"KEA").unwrap_or_default());
        events.notify(Classes::STRING, "set", b"k", 3);
        assert_eq!(
            take(),
            vec![
                (b"__keyspace@3__:k".to_vec(), b"set".to_vec()),
                (b"__keyevent@3__:set".to_vec(), b"k".to_vec()),
            ]
        );
        events.notify(Classes::NEW, "new", b"k", 0);
        assert!(take().is_empty(), "A leaves out n");
        events.set_classes(Classes::parse(b"Al").unwrap_or_default());
        events.notify(Classes::LIST, "lpush", b"k", 0);
        assert!(take().is_empty(), "neither K nor E");
    }
}

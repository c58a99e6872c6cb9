//! YCSB's `DB` interface as a store contract: the five calls YCSB's core workload makes
//! (insert, read, update, scan, delete), each backend answering them as YCSB's own binding
//! for that database does, so a run compares with published YCSB runs (the facts are in
//! `../shared/reference/ycsb.md`, §1.3):
//!
//! | binding | stores a record as | scans |
//! |-|-|-|
//! | [`Binding::Redis`] (YCSB's Jedis `RedisClient`) | one hash per key, `HMSET key field0 v0 …`, and the key in the sorted set `_indices` scored by Java's `String.hashCode()` | `ZRANGEBYSCORE _indices hash(start) +inf LIMIT 0 n`, then a read per key |
//! | [`Binding::GoYcsb`] (go-ycsb's `redis`, `redis.datatype=hash`) | one hash per key at `<table>/<key>` | none: "scan is not supported" |
//! | [`Binding::Jdbc`] (YCSB's `JdbcDBClient`) | `usertable(YCSB_KEY VARCHAR PRIMARY KEY, FIELD0 TEXT, …)` | `WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?` |
//! | [`Binding::PostgreNoSql`] (YCSB's `postgrenosql`) | `usertable(YCSB_KEY VARCHAR(255) PRIMARY KEY, YCSB_VALUE JSONB)` | as JDBC |
//! | [`Binding::MongoDb`] (YCSB's `MongoDbClient`) | `{_id: key, field0: Binary, …}` in collection `<table>` | `find({_id: {$gte: start}}).sort({_id: 1}).limit(n)` |
//!
//! The trait is synchronous and takes `&mut self`: one store value is one client connection,
//! used by one thread (YCSB's one `DB` instance per client thread). Reads and scans fill
//! buffers the caller owns and reuses ([`Record`], [`Records`]), so a read at steady state
//! allocates nothing the caller did not already have.

use std::sync::Arc;

pub(crate) mod jdbc;

/// YCSB's binding names, as `-db` takes them; each backend says which it has
/// ([`super::backend::Kind::ycsb_bindings`], its own binding first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Binding {
    /// YCSB's `redis` binding (Jedis): hashes plus the `_indices` sorted set.
    Redis,
    /// go-ycsb's `redis` binding: hashes at `<table>/<key>`, no scans.
    GoYcsb,
    /// YCSB's `jdbc` binding: one column per field.
    Jdbc,
    /// YCSB's `postgrenosql` binding: one JSONB document per record.
    PostgreNoSql,
    /// YCSB's `mongodb` binding.
    MongoDb,
}

/// Every binding's `-db` name, for error messages.
pub const BINDING_NAMES: &str = "redis, go-ycsb, jdbc, postgrenosql, mongodb";

impl Binding {
    /// Every binding, in the order columns are listed.
    pub const ALL: [Binding; 5] = [
        Binding::Redis,
        Binding::GoYcsb,
        Binding::Jdbc,
        Binding::PostgreNoSql,
        Binding::MongoDb,
    ];

    /// Parses a `-db` name (YCSB's binding name, or its class name).
    pub fn parse(name: &str) -> Option<Binding> {
        Some(match name {
            "redis" | "site.ycsb.db.RedisClient" => Binding::Redis,
            "go-ycsb" => Binding::GoYcsb,
            "jdbc" | "site.ycsb.db.JdbcDBClient" => Binding::Jdbc,
            "postgrenosql" | "site.ycsb.postgrenosql.PostgreNoSQLDBClient" => Binding::PostgreNoSql,
            "mongodb" | "site.ycsb.db.MongoDbClient" => Binding::MongoDb,
            _ => return None,
        })
    }

    /// Its `-db` name.
    pub fn name(self) -> &'static str {
        match self {
            Binding::Redis => "redis",
            Binding::GoYcsb => "go-ycsb",
            Binding::Jdbc => "jdbc",
            Binding::PostgreNoSql => "postgrenosql",
            Binding::MongoDb => "mongodb",
        }
    }

    /// Whether its layout can answer a scan (workload E).
    pub fn scans(self) -> bool {
        self != Binding::GoYcsb
    }
}

/// What a binding needs to lay out its records: the table and the field names
/// (`fieldnameprefix` + 0..`fieldcount`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Setup {
    /// The binding to store records as.
    pub binding: Binding,
    /// YCSB's `table` (`usertable`).
    pub table: String,
    /// Every field name, in order (`field0` … `field9`).
    pub fields: Vec<String>,
}

/// Why a YCSB call failed. YCSB reports a read of a missing record as `NOT_FOUND` (the JDBC
/// binding) or `ERROR` (Jedis: an empty `HGETALL`); edgebench reports [`YcsbError::NotFound`]
/// as `Return=NOT_FOUND` for every binding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum YcsbError {
    /// No record has this key.
    #[error("no record {0}")]
    NotFound(String),
    /// The binding has no such call (go-ycsb's Redis has no scan).
    #[error("{0}")]
    Unsupported(&'static str),
    /// The store failed (connection lost, server error); the message is the store's own.
    #[error("{0}")]
    Backend(String),
}

/// Shorthand for YCSB call results.
pub type YcsbResult<T> = Result<T, YcsbError>;

/// One record read back: field names and values, in the order the store gave them. Kept and
/// refilled by the caller: every field lives in one buffer, which [`Record::clear`] keeps, so
/// a read at steady state copies its bytes once and allocates nothing.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Record {
    /// Each field's name then value, back to back.
    data: Vec<u8>,
    /// Per field: where its name ends and where its value ends in `data` (each starts where
    /// the one before ends).
    ends: Vec<(u32, u32)>,
}

impl Record {
    /// Empties it, keeping its buffers.
    pub fn clear(&mut self) {
        self.data.clear();
        self.ends.clear();
    }

    /// Appends one field.
    #[inline]
    pub fn push(&mut self, name: &[u8], value: &[u8]) {
        self.data.extend_from_slice(name);
        let name_end = self.data.len() as u32;
        self.data.extend_from_slice(value);
        self.ends.push((name_end, self.data.len() as u32));
    }

    /// How many fields it holds.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether it holds no field.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Its fields, (name, value), in the order pushed.
    pub fn fields(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        let mut start = 0usize;
        self.ends.iter().map(move |&(name_end, value_end)| {
            let (n, v) = (name_end as usize, value_end as usize);
            let field = (&self.data[start..n], &self.data[n..v]);
            start = v;
            field
        })
    }

    /// The value of field `name`, if it was read.
    pub fn get(&self, name: &[u8]) -> Option<&[u8]> {
        self.fields().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    /// Its fields sorted by name, as owned strings (for tests and checks).
    pub fn to_sorted(&self) -> Vec<(String, Vec<u8>)> {
        let mut all: Vec<(String, Vec<u8>)> = self
            .fields()
            .map(|(n, v)| (String::from_utf8_lossy(n).into_owned(), v.to_vec()))
            .collect();
        all.sort();
        all
    }
}

/// The records a scan returned, in the store's order, with their keys; kept and refilled by
/// the caller like [`Record`].
#[derive(Debug, Default, Clone)]
pub struct Records {
    keys: Vec<Vec<u8>>,
    records: Vec<Record>,
    len: usize,
}

impl Records {
    /// Empties it, keeping its buffers.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// A cleared record to fill, for the record of `key`, appended after the others.
    pub fn next(&mut self, key: &[u8]) -> &mut Record {
        if self.len == self.records.len() {
            self.keys.push(Vec::new());
            self.records.push(Record::default());
        }
        let k = &mut self.keys[self.len];
        k.clear();
        k.extend_from_slice(key);
        let record = &mut self.records[self.len];
        record.clear();
        self.len += 1;
        record
    }

    /// Reads the record of each of `keys` in turn with `read` (which fills the record it is
    /// given and says whether it found one), keeping those found: a key an index listed but
    /// whose record was deleted before its read is skipped, as a scan's caller sees only
    /// what it read. Stops at the first error.
    pub fn read_each<K: AsRef<[u8]>>(
        &mut self,
        keys: &[K],
        mut read: impl FnMut(&[u8], &mut Record) -> YcsbResult<bool>,
    ) -> YcsbResult<()> {
        for key in keys {
            let key = key.as_ref();
            let record = self.next(key);
            if !read(key, record)? {
                self.pop();
            }
        }
        Ok(())
    }

    /// Drops the last record appended (a key the scan listed that was deleted before its read).
    pub fn pop(&mut self) {
        self.len = self.len.saturating_sub(1);
    }

    /// How many records it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// (key, record) in scan order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &Record)> {
        self.keys[..self.len]
            .iter()
            .zip(&self.records[..self.len])
            .map(|(k, r)| (k.as_slice(), r))
    }
}

/// YCSB's `DB`: one client connection of one binding, used by one thread.
pub trait YcsbStore: Send {
    /// Stores a new record (YCSB's `insert`; the key is new in a correct run, and a store may
    /// replace a record that exists).
    fn insert(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()>;

    /// Reads the record's `fields` (every field when `None`) into `out`, cleared first;
    /// [`YcsbError::NotFound`] when there is no such record.
    fn read(&mut self, key: &str, fields: Option<&[String]>, out: &mut Record) -> YcsbResult<()>;

    /// Replaces the given fields of a record, leaving the others.
    fn update(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()>;

    /// Reads up to `count` records from `start` on, in the binding's order (key order, or
    /// the Redis binding's hash order), each with `fields` (every field when `None`), into
    /// `out`, cleared first. [`YcsbError::Unsupported`] on a binding that cannot scan.
    fn scan(
        &mut self,
        start: &str,
        count: usize,
        fields: Option<&[String]>,
        out: &mut Records,
    ) -> YcsbResult<()>;

    /// Deletes a record.
    fn delete(&mut self, key: &str) -> YcsbResult<()>;

    /// How many records the table holds (to refuse a run before a load; may count the
    /// binding's index rather than every record).
    fn count(&mut self) -> YcsbResult<u64>;

    /// Removes every record of the table (a reload starts empty).
    fn clear(&mut self) -> YcsbResult<()>;
}

/// Opens one more YCSB store on a connection of its own; called once per client thread.
pub type YcsbOpener = Arc<dyn Fn() -> YcsbResult<Box<dyn YcsbStore>> + Send + Sync>;

/// The binding's message for a scan it cannot do.
pub const GO_YCSB_NO_SCAN: &str =
    "go-ycsb's Redis layout has no scan (\"scan is not supported\"): run workload E with \
     --ycsb-redis-layout ycsb (YCSB's _indices sorted set)";

/// Java's `String.hashCode()` of `s` (UTF-16 code units, `h = 31 * h + c`, wrapping in 32
/// bits): the score YCSB's Redis binding gives a key in `_indices`.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_string_hash_matches_javas() {
        // Values from Java: "".hashCode() == 0, "a" == 97, "user1" == 111578566,
        // "hello" == 99162322, "user6284781860667377211" (a YCSB key) overflows.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("hello"), 99_162_322);
        assert_eq!(java_string_hash("user1"), 111_578_566);
        // 31-step recurrence checked by hand for two characters: 'a'*31 + 'b'.
        assert_eq!(java_string_hash("ab"), 97 * 31 + 98);
    }

    #[test]
    fn record_buffers_are_reused_and_read_back_in_order() {
        let mut r = Record::default();
        r.push(b"field1", b"x");
        r.push(b"field0", b"yy");
        assert_eq!(r.len(), 2);
        assert_eq!(r.get(b"field0"), Some(&b"yy"[..]));
        assert_eq!(
            r.to_sorted(),
            vec![
                ("field0".to_string(), b"yy".to_vec()),
                ("field1".to_string(), b"x".to_vec())
            ]
        );
        r.clear();
        assert!(r.is_empty());
        r.push(b"a", b"b");
        assert_eq!(r.fields().collect::<Vec<_>>(), vec![(&b"a"[..], &b"b"[..])]);
        let mut all = Records::default();
        all.next(b"k1").push(b"f", b"1");
        all.next(b"k2");
        all.pop();
        assert_eq!(all.len(), 1);
        assert_eq!(all.iter().next().map(|(k, _)| k), Some(&b"k1"[..]));
    }
}

//! YCSB's Redis bindings on any Redis-protocol connection (a spawned `redis-server`, a URL, a
//! cluster, the engine served over RESP or called in process through redis-rs):
//!
//! - [`Binding::Redis`], YCSB's Jedis `RedisClient`: a record is the hash at its key
//!   (`HMSET key field0 v0 …`), and every key is also a member of the sorted set `_indices`,
//!   scored by Java's `String.hashCode()` of the key. Insert is two round trips (HMSET, then
//!   ZADD), as Jedis sends them; a read of every field is `HGETALL`, of some `HMGET`; a scan
//!   is `ZRANGEBYSCORE _indices <hash(start)> +inf LIMIT 0 <n>`, then a read per key; delete
//!   is `DEL` then `ZREM`.
//! - [`Binding::GoYcsb`], go-ycsb's `redis` binding (`redis.datatype=hash`): the hash at
//!   `<table>/<key>`, `HSET` to write, `HMGET` of the asked fields (every field by name when
//!   all are read), no index and no scan.

use redis::{Cmd, ConnectionLike, Value};

use crate::store::backend::{BackendError, Started};
use crate::store::ycsb::{
    java_string_hash, Binding, Record, Records, Setup, YcsbError, YcsbOpener, YcsbResult,
    YcsbStore, GO_YCSB_NO_SCAN,
};
use crate::transport::resp_client::RespClient;
use crate::transport::Connector;

/// The sorted set YCSB's Redis binding indexes every key in.
pub const INDEX_KEY: &str = "_indices";

/// The YCSB bindings every Redis-protocol kind has, its own (Jedis's) first.
pub const BINDINGS: &[Binding] = &[Binding::Redis, Binding::GoYcsb];

/// YCSB stores of `setup` on connections from `connector` (the started target's).
pub fn opener(connector: Box<Connector>, setup: &Setup) -> Result<YcsbOpener, BackendError> {
    if !BINDINGS.contains(&setup.binding) {
        return Err(crate::store::backend::no_ycsb(setup.binding));
    }
    let setup = setup.clone();
    Ok(std::sync::Arc::new(move || {
        let conn = connector().map_err(YcsbError::Backend)?;
        Ok(Box::new(RedisYcsb::new(Conn::Rs(conn), &setup)) as Box<dyn YcsbStore>)
    }))
}

/// [`opener`] for a started target that speaks the protocol: on the lean RESP client when it
/// is one server on a plain socket with nothing to do after a write (no TLS, no AUTH, no
/// `WAIT`), on redis-rs otherwise.
pub fn opener_of(started: &dyn Started, setup: &Setup) -> Result<YcsbOpener, BackendError> {
    let Some(redis) = started.redis() else {
        return Err(crate::store::backend::no_ycsb(setup.binding));
    };
    let plain = started
        .as_any()
        .downcast_ref::<super::backend::RedisTarget>()
        .filter(|t| t.wait() == 0 && *t.access() == crate::transport::Access::default());
    match (plain, redis.reach()) {
        (Some(_), crate::transport::RedisReach::Socket(endpoint, _)) if !redis.is_cluster() => {
            if !BINDINGS.contains(&setup.binding) {
                return Err(crate::store::backend::no_ycsb(setup.binding));
            }
            let setup = setup.clone();
            Ok(std::sync::Arc::new(move || {
                let c = RespClient::connect(&endpoint, std::time::Duration::from_secs(30))
                    .map_err(|e| YcsbError::Backend(format!("{endpoint}: {e}")))?;
                Ok(Box::new(RedisYcsb::new(Conn::Raw(c), &setup)) as Box<dyn YcsbStore>)
            }))
        }
        _ => opener(redis.connector()?, setup),
    }
}

/// How a client reaches its server: redis-rs (any target), or the lean RESP client on a
/// plain socket to one server ([`RespClient`]), which reads replies in place.
pub enum Conn {
    /// A redis-rs connection (TLS, AUTH, a cluster, WAIT, the engine in process).
    Rs(Box<dyn ConnectionLike + Send>),
    /// A plain TCP or Unix socket to one server.
    Raw(RespClient),
}

/// One YCSB client connection in one of the Redis layouts.
pub struct RedisYcsb {
    conn: Conn,
    binding: Binding,
    /// go-ycsb's key prefix, `<table>/`.
    prefix: String,
    /// Every field name, for go-ycsb's `HMGET` of every field.
    fields: Vec<String>,
    /// The key being built (go-ycsb's prefixed key).
    key: String,
    /// Keys a scan listed.
    scanned: Vec<Vec<u8>>,
    /// The command being built, kept so its buffers are reused.
    cmd: Cmd,
}

/// Runs `cmd` on `conn`, a server's error as the binding's.
fn request(conn: &mut Conn, cmd: &Cmd) -> YcsbResult<Value> {
    let value = match conn {
        Conn::Rs(c) => c
            .req_command(cmd)
            .map_err(|e| YcsbError::Backend(e.to_string()))?,
        Conn::Raw(c) => {
            let reply = c
                .call(cmd.args_iter().count(), args_of(cmd))
                .map_err(io_error)?;
            reply.value().map_err(io_error)?
        }
    };
    match value {
        Value::ServerError(e) => Err(YcsbError::Backend(format!("{e:?}"))),
        v => Ok(v),
    }
}

/// A command's arguments as bytes (the binding builds no cursor arguments).
fn args_of(cmd: &Cmd) -> impl Iterator<Item = &[u8]> {
    cmd.args_iter().map(|a| match a {
        redis::Arg::Simple(b) => b,
        _ => &b""[..],
    })
}

fn io_error(e: std::io::Error) -> YcsbError {
    YcsbError::Backend(e.to_string())
}

impl RedisYcsb {
    /// A client on `conn`, laid out as `setup` says.
    pub fn new(conn: Conn, setup: &Setup) -> RedisYcsb {
        RedisYcsb {
            conn,
            binding: setup.binding,
            prefix: format!("{}/", setup.table),
            fields: setup.fields.clone(),
            key: String::new(),
            scanned: Vec::new(),
            cmd: Cmd::new(),
        }
    }

    /// Sets `self.key` to go-ycsb's key of `key` (YCSB's layout stores at the key itself).
    fn prefix_key(&mut self, key: &str) {
        if self.binding == Binding::GoYcsb {
            self.key.clear();
            self.key.push_str(&self.prefix);
            self.key.push_str(key);
        }
    }

    /// The key a record lives at.
    fn key<'a>(&'a mut self, key: &'a str) -> &'a str {
        self.prefix_key(key);
        if self.binding == Binding::GoYcsb {
            &self.key
        } else {
            key
        }
    }

    fn run(&mut self, cmd: &Cmd) -> YcsbResult<Value> {
        request(&mut self.conn, cmd)
    }

    fn write(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        let go = self.binding == Binding::GoYcsb;
        self.prefix_key(key);
        let stored = if go { self.key.as_str() } else { key };
        self.cmd.clear();
        self.cmd.arg(if go { "HSET" } else { "HMSET" }).arg(stored);
        for (name, value) in values {
            self.cmd.arg(name.as_str()).arg(value.as_slice());
        }
        request(&mut self.conn, &self.cmd).map(drop)
    }

    /// Reads the hash at `stored` (a stored key) into `out`; `false` when it is missing.
    fn read_stored(
        &mut self,
        stored: &[u8],
        fields: Option<&[String]>,
        out: &mut Record,
    ) -> YcsbResult<bool> {
        out.clear();
        if fields.is_none() && self.binding == Binding::GoYcsb {
            // go-ycsb reads every field by name (HMGET of all of them).
            let all = std::mem::take(&mut self.fields);
            let found = self.read_stored(stored, Some(&all), out);
            self.fields = all;
            return found;
        }
        if let Conn::Raw(c) = &mut self.conn {
            return read_raw(c, stored, fields, out);
        }
        match fields {
            None => {
                self.cmd.clear();
                self.cmd.arg("HGETALL").arg(stored);
                match request(&mut self.conn, &self.cmd)? {
                    Value::Array(items) => {
                        for pair in items.chunks_exact(2) {
                            out.push(bytes(&pair[0]), bytes(&pair[1]));
                        }
                    }
                    Value::Map(pairs) => {
                        for (n, v) in &pairs {
                            out.push(bytes(n), bytes(v));
                        }
                    }
                    other => return Err(unexpected("HGETALL", &other)),
                }
                Ok(!out.is_empty())
            }
            Some(names) => {
                self.cmd.clear();
                self.cmd.arg("HMGET").arg(stored);
                for name in names {
                    self.cmd.arg(name.as_str());
                }
                match request(&mut self.conn, &self.cmd)? {
                    Value::Array(items) => {
                        for (name, value) in names.iter().zip(&items) {
                            if !matches!(value, Value::Nil) {
                                out.push(name.as_bytes(), bytes(value));
                            }
                        }
                    }
                    other => return Err(unexpected("HMGET", &other)),
                }
                Ok(!out.is_empty())
            }
        }
    }
}

/// A read on the lean client: `HGETALL` or `HMGET`, the reply's bulks copied straight into
/// `out`; `false` when the record is missing.
fn read_raw(
    c: &mut RespClient,
    stored: &[u8],
    fields: Option<&[String]>,
    out: &mut Record,
) -> YcsbResult<bool> {
    let walked = match fields {
        None => {
            let reply = c
                .call(2, [&b"HGETALL"[..], stored].into_iter())
                .map_err(io_error)?;
            let mut name: Option<&[u8]> = None;
            let walked = reply.bulks(|b| match name.take() {
                None => name = Some(b.unwrap_or_default()),
                Some(n) => out.push(n, b.unwrap_or_default()),
            });
            (walked, reply)
        }
        Some(names) => {
            let args = [&b"HMGET"[..], stored]
                .into_iter()
                .chain(names.iter().map(|n| n.as_bytes()));
            let reply = c.call(2 + names.len(), args).map_err(io_error)?;
            let mut at = 0;
            let walked = reply.bulks(|b| {
                if let (Some(v), Some(n)) = (b, names.get(at)) {
                    out.push(n.as_bytes(), v);
                }
                at += 1;
            });
            (walked, reply)
        }
    };
    match walked {
        (true, _) => Ok(!out.is_empty()),
        (false, reply) => {
            Err(YcsbError::Backend(reply.error().unwrap_or_else(|| {
                "the server answered a read with no array".to_string()
            })))
        }
    }
}

/// A bulk string's bytes (a status's text; nothing for anything else).
fn bytes(v: &Value) -> &[u8] {
    match v {
        Value::BulkString(b) => b,
        Value::SimpleString(s) => s.as_bytes(),
        _ => &[],
    }
}

fn unexpected(what: &str, v: &Value) -> YcsbError {
    YcsbError::Backend(format!("{what} answered {v:?}"))
}

impl YcsbStore for RedisYcsb {
    fn insert(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        self.write(key, values)?;
        if self.binding == Binding::Redis {
            self.cmd.clear();
            self.cmd
                .arg("ZADD")
                .arg(INDEX_KEY)
                .arg(f64::from(java_string_hash(key)))
                .arg(key);
            request(&mut self.conn, &self.cmd)?;
        }
        Ok(())
    }

    fn read(&mut self, key: &str, fields: Option<&[String]>, out: &mut Record) -> YcsbResult<()> {
        self.prefix_key(key);
        let found = if self.binding == Binding::GoYcsb {
            let stored = std::mem::take(&mut self.key);
            let found = self.read_stored(stored.as_bytes(), fields, out);
            self.key = stored;
            found
        } else {
            self.read_stored(key.as_bytes(), fields, out)
        };
        match found? {
            true => Ok(()),
            false => Err(YcsbError::NotFound(key.to_string())),
        }
    }

    fn update(&mut self, key: &str, values: &[(String, Vec<u8>)]) -> YcsbResult<()> {
        self.write(key, values)
    }

    fn scan(
        &mut self,
        start: &str,
        count: usize,
        fields: Option<&[String]>,
        out: &mut Records,
    ) -> YcsbResult<()> {
        out.clear();
        if self.binding == Binding::GoYcsb {
            return Err(YcsbError::Unsupported(GO_YCSB_NO_SCAN));
        }
        let mut cmd = redis::cmd("ZRANGEBYSCORE");
        cmd.arg(INDEX_KEY)
            .arg(f64::from(java_string_hash(start)))
            .arg("+inf")
            .arg("LIMIT")
            .arg(0)
            .arg(count);
        let mut keys = std::mem::take(&mut self.scanned);
        keys.clear();
        match self.run(&cmd)? {
            Value::Array(items) => keys.extend(items.iter().map(|k| bytes(k).to_vec())),
            other => return Err(unexpected("ZRANGEBYSCORE", &other)),
        }
        let result = out.read_each(&keys, |key, record| self.read_stored(key, fields, record));
        self.scanned = keys;
        result
    }

    fn delete(&mut self, key: &str) -> YcsbResult<()> {
        let mut cmd = redis::cmd("DEL");
        cmd.arg(self.key(key));
        let deleted = self.run(&cmd)?;
        let removed = if self.binding == Binding::Redis {
            let mut cmd = redis::cmd("ZREM");
            cmd.arg(INDEX_KEY).arg(key);
            self.run(&cmd)?
        } else {
            Value::Int(0)
        };
        match (deleted, removed) {
            (Value::Int(0), Value::Int(0)) => Err(YcsbError::NotFound(key.to_string())),
            _ => Ok(()),
        }
    }

    fn count(&mut self) -> YcsbResult<u64> {
        let cmd = if self.binding == Binding::Redis {
            let mut cmd = redis::cmd("ZCARD");
            cmd.arg(INDEX_KEY);
            cmd
        } else {
            // go-ycsb keeps no index: the keys of the database (one node's on a cluster).
            redis::cmd("DBSIZE")
        };
        match self.run(&cmd)? {
            Value::Int(n) => Ok(u64::try_from(n).unwrap_or(0)),
            other => Err(unexpected("count", &other)),
        }
    }

    fn clear(&mut self) -> YcsbResult<()> {
        if self.binding == Binding::GoYcsb {
            // Every key under the table's prefix, a SCAN page at a time.
            let pattern = format!("{}*", self.prefix);
            let mut cursor = b"0".to_vec();
            loop {
                let mut cmd = redis::cmd("SCAN");
                cmd.arg(&cursor[..])
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1000);
                let Value::Array(reply) = self.run(&cmd)? else {
                    return Err(YcsbError::Backend("SCAN answered no array".into()));
                };
                let (next, keys) = match reply.as_slice() {
                    [next, Value::Array(keys)] => (bytes(next).to_vec(), keys.clone()),
                    _ => return Err(YcsbError::Backend("SCAN answered no page".into())),
                };
                for key in &keys {
                    let mut del = redis::cmd("DEL");
                    del.arg(bytes(key));
                    self.run(&del)?;
                }
                if next == b"0" {
                    return Ok(());
                }
                cursor = next;
            }
        }
        // Every key the index lists, a page at a time, then the index.
        loop {
            let mut cmd = redis::cmd("ZRANGE");
            cmd.arg(INDEX_KEY).arg(0).arg(999);
            let Value::Array(keys) = self.run(&cmd)? else {
                return Err(YcsbError::Backend("ZRANGE answered no array".into()));
            };
            if keys.is_empty() {
                return Ok(());
            }
            for key in &keys {
                let mut del = redis::cmd("DEL");
                del.arg(bytes(key));
                self.run(&del)?;
                let mut zrem = redis::cmd("ZREM");
                zrem.arg(INDEX_KEY).arg(bytes(key));
                self.run(&zrem)?;
            }
        }
    }
}

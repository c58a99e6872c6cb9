//! The engine as a redis-rs connection: `redis::ConnectionLike` and
//! `redis::aio::ConnectionLike`, so code written against redis-rs (the Redis core-data store,
//! any `Commands` user) runs in-process, unchanged, with no socket.
//!
//! The sync `req_command` fast path reads the command's arguments straight from the `Cmd`
//! (`args_iter`) and converts the engine's reply straight into a `redis::Value`: no RESP is
//! written or parsed. Pipelines reach the sync trait as packed RESP bytes (redis-rs packs them
//! before it calls `req_packed_commands`), so those go through the RESP request parser (the
//! RESP server's own); atomic pipelines arrive as `MULTI … EXEC` and go through the engine's
//! transaction code like any client's. The async trait gets `&Cmd` and `&Pipeline` and never
//! sees bytes at all, and neither does [`EngineConnection::query_pipeline`], the sync
//! `Pipeline::query` without the packing (what the Redis core-data store calls). Either way
//! only the replies the caller keeps are converted into `redis::Value`s.
//!
//! One connection is one engine client (its SELECT, MULTI state, name). Errors come back as
//! `Value::ServerError` values, as the real connection returns them.
//!
//! This module is the whole redis-rs adapter (feature `redis-rs`): the connection, and
//! [`Reply::into_redis_value`], which turns a reply into the value redis-rs would have parsed.

use std::ops::Range;

use futures_util::future::{self, FutureExt as _};
use redis::{
    Arg, Cmd, ErrorKind, FromRedisValue, Pipeline, RedisError, RedisFuture, RedisResult, Value,
};

use super::client::Client;
use super::handle::Engine;
use crate::resp::reply::Reply;
use crate::resp::{ArgSlice, RequestParser};

/// An in-process connection to an [`Engine`].
#[derive(Debug)]
pub struct EngineConnection {
    engine: Engine,
    client: Client,
    /// Parses packed commands; kept, so its argument list is allocated once.
    parser: RequestParser,
}

impl EngineConnection {
    /// A new connection (a new client of `engine`).
    pub fn new(engine: Engine) -> Self {
        let client = engine.client();
        EngineConnection {
            engine,
            client,
            parser: RequestParser::default(),
        }
    }

    /// Runs every command packed in `bytes` (redis-rs packs pipelines as RESP before the sync
    /// trait sees them), parsed by the RESP server's own request parser, in order, handing
    /// each engine reply to `each` with the client's protocol then: the caller converts only
    /// the replies it keeps (a transaction's MULTI and QUEUED replies, which redis-rs drops,
    /// cost nothing more).
    fn exec_packed(&mut self, bytes: &[u8], mut each: impl FnMut(Reply, u8)) -> RedisResult<()> {
        let mut pos = 0;
        while pos < bytes.len() {
            let request = self
                .parser
                .parse(&bytes[pos..], true)
                .map_err(|e| {
                    RedisError::from((ErrorKind::Client, "malformed packed command", e.to_string()))
                })?
                .ok_or_else(|| {
                    RedisError::from((ErrorKind::Client, "incomplete packed command"))
                })?;
            pos += request.consumed();
            if request.is_empty() {
                continue;
            }
            let reply = self.engine.execute(&mut self.client, &request.arg_slice());
            each(reply, self.client.resp);
        }
        Ok(())
    }

    /// The last reply of the commands packed in `bytes` (`Nil` if there are none).
    fn exec_packed_last(&mut self, bytes: &[u8]) -> RedisResult<Value> {
        let mut last = Value::Nil;
        self.exec_packed(bytes, |reply, resp| last = reply.into_redis_value(resp))?;
        Ok(last)
    }

    /// Runs one command; its reply, converted for redis-rs.
    fn exec_cmd(&mut self, cmd: &Cmd) -> Value {
        let reply = self.exec_cmd_reply(cmd);
        reply.into_redis_value(self.client.resp)
    }

    /// Runs one command; the engine's reply.
    fn exec_cmd_reply(&mut self, cmd: &Cmd) -> Reply {
        // One walk over the arguments: a cursor argument (SCAN iterators) holds its value
        // only in the packed form, so a command with one takes the packed path instead.
        let mut has_cursor = false;
        let args = ArgSlice::new(cmd.args_iter().map(|a| match a {
            Arg::Simple(bytes) => bytes,
            _ => {
                has_cursor = true;
                &[][..]
            }
        }));
        if !has_cursor {
            return self.engine.execute(&mut self.client, &args);
        }
        let mut last = Reply::Nil;
        // A packed `Cmd` is well formed: the parse cannot fail.
        let _ = self.exec_packed(&cmd.get_packed_command(), |reply, _| last = reply);
        last
    }

    /// Runs a pipeline's commands as they are (no RESP packed or parsed), returning `count`
    /// replies from `offset` among those a socket would carry: MULTI's OK and each QUEUED
    /// before EXEC's array, when the pipeline is atomic.
    fn exec_pipeline(&mut self, pipeline: &Pipeline, offset: usize, count: usize) -> Vec<Value> {
        let atomic = pipeline.is_transaction();
        let mut kept = Kept::new(offset, count);
        if atomic {
            let reply = self.engine.execute(&mut self.client, &[b"MULTI"]);
            kept.offer(reply, self.client.resp);
        }
        for cmd in pipeline.cmd_iter() {
            let reply = self.exec_cmd_reply(cmd);
            kept.offer(reply, self.client.resp);
        }
        if atomic {
            let reply = self.engine.execute(&mut self.client, &[b"EXEC"]);
            kept.offer(reply, self.client.resp);
        }
        kept.replies
    }

    /// `pipeline.query(con)` without the RESP round trip: redis-rs's sync `Pipeline::query`
    /// packs the commands into RESP before the connection sees them (which the engine would
    /// then parse back), while its async `query_async` hands the connection the pipeline
    /// itself. The engine's async replies are ready at once, so one poll completes it; the
    /// result is redis-rs's own (its transaction and error handling), the commands the same.
    pub fn query_pipeline<T: FromRedisValue>(&mut self, pipeline: &Pipeline) -> RedisResult<T> {
        pipeline
            .query_async(self)
            .now_or_never()
            .unwrap_or_else(|| {
                Err(RedisError::from((
                    ErrorKind::Client,
                    "pipeline did not complete",
                )))
            })
    }
}

/// The replies a caller asked for, `count` from `offset` of a run of commands: only those
/// are converted into redis-rs values.
struct Kept {
    wanted: Range<usize>,
    next: usize,
    replies: Vec<Value>,
}

impl Kept {
    fn new(offset: usize, count: usize) -> Kept {
        Kept {
            wanted: offset..offset.saturating_add(count),
            next: 0,
            replies: Vec::with_capacity(count.min(1024)),
        }
    }

    /// Takes the next reply, converted for protocol `resp`, if it is wanted.
    fn offer(&mut self, reply: Reply, resp: u8) {
        if self.wanted.contains(&self.next) {
            self.replies.push(reply.into_redis_value(resp));
        }
        self.next += 1;
    }
}

impl redis::ConnectionLike for EngineConnection {
    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        Ok(self.exec_cmd(cmd))
    }

    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        self.exec_packed_last(cmd)
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let mut kept = Kept::new(offset, count);
        self.exec_packed(cmd, |reply, resp| kept.offer(reply, resp))?;
        Ok(kept.replies)
    }

    fn get_db(&self) -> i64 {
        self.client.db as i64
    }

    fn check_connection(&mut self) -> bool {
        true
    }

    fn is_open(&self) -> bool {
        true
    }
}

impl redis::aio::ConnectionLike for EngineConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        future::ready(Ok(self.exec_cmd(cmd))).boxed()
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        let out = self.exec_pipeline(pipeline, offset, count);
        future::ready(Ok(out)).boxed()
    }

    fn get_db(&self) -> i64 {
        self.client.db as i64
    }
}

// --- Replies as redis-rs values

impl Reply {
    /// The `redis::Value` a redis-rs connection would have parsed from this reply, as sent
    /// to a client speaking protocol `resp` (2 or 3). Used by the in-process connection,
    /// which skips RESP entirely.
    pub fn into_redis_value(self, resp: u8) -> redis::Value {
        use redis::Value as V;
        let resp3 = resp >= 3;
        match self {
            Reply::Status(s) if s == "OK" => V::Okay,
            Reply::Status(s) => V::SimpleString(s.into_owned()),
            Reply::Error(text) => error_value(&text),
            Reply::Int(n) => V::Int(n),
            Reply::Bulk(b) => V::BulkString(b),
            Reply::Nil | Reply::NilArray => V::Nil,
            Reply::Array(items) => V::Array(
                items
                    .into_iter()
                    .map(|r| r.into_redis_value(resp))
                    .collect(),
            ),
            Reply::Double(d) if resp3 => V::Double(d),
            Reply::Double(d) => V::BulkString(crate::resp::format_f64(d).into_bytes()),
            // RESP3's double, as redis-rs parses the text.
            Reply::HumanDouble(text) if resp3 => V::Double(text.parse().unwrap_or(f64::NAN)),
            Reply::HumanDouble(text) => V::BulkString(text.into_bytes()),
            Reply::Map(pairs) if resp3 => V::Map(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k.into_redis_value(resp), v.into_redis_value(resp)))
                    .collect(),
            ),
            Reply::Map(pairs) => {
                // Sized once: `flat_map` cannot tell `collect` how many, so the list grew
                // (and was copied) several times for a hash's fields.
                let mut flat = Vec::with_capacity(pairs.len() * 2);
                for (k, v) in pairs {
                    flat.push(k.into_redis_value(resp));
                    flat.push(v.into_redis_value(resp));
                }
                V::Array(flat)
            }
            Reply::Set(items) if resp3 => V::Set(
                items
                    .into_iter()
                    .map(|r| r.into_redis_value(resp))
                    .collect(),
            ),
            Reply::Set(items) => V::Array(
                items
                    .into_iter()
                    .map(|r| r.into_redis_value(resp))
                    .collect(),
            ),
            Reply::Bool(b) if resp3 => V::Boolean(b),
            Reply::Bool(b) => V::Int(i64::from(b)),
            Reply::Verbatim(text) if resp3 => V::VerbatimString {
                format: redis::VerbatimFormat::Text,
                text,
            },
            Reply::Verbatim(text) => V::BulkString(text.into_bytes()),
            Reply::Push(items) if resp3 => V::Push {
                kind: redis::PushKind::Message,
                data: items
                    .into_iter()
                    .map(|r| r.into_redis_value(resp))
                    .collect(),
            },
            Reply::Push(items) => V::Array(
                items
                    .into_iter()
                    .map(|r| r.into_redis_value(resp))
                    .collect(),
            ),
        }
    }
}

/// redis-rs has no public constructor for a server error: parse one from its RESP form, as
/// the real connection does. Only error replies pay for this.
fn error_value(text: &str) -> redis::Value {
    let line: String = text
        .chars()
        .map(|c| if c == '\r' || c == '\n' { ' ' } else { c })
        .collect();
    redis::parse_redis_value(format!("-{line}\r\n").as_bytes())
        .unwrap_or_else(|_| redis::Value::SimpleString(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_packed_pipelines_and_rejects_broken_ones() {
        use redis::ConnectionLike as _;
        let mut con = EngineConnection::new(Engine::new());
        let mut p = redis::pipe();
        p.cmd("SET").arg("k").arg("v\r\nx").cmd("GET").arg("k");
        let replies = con
            .req_packed_commands(&p.get_packed_pipeline(), 0, 2)
            .unwrap();
        assert_eq!(
            replies,
            vec![Value::Okay, Value::BulkString(b"v\r\nx".to_vec())]
        );
        assert!(con.req_packed_command(b"*1\r\n$5\r\nab").is_err());
        assert!(con.req_packed_command(b"*1\r\n$x\r\n").is_err());
    }

    #[test]
    fn query_pipeline_gives_what_the_packed_pipeline_gives() {
        let mut p = redis::pipe();
        p.atomic()
            .cmd("SET")
            .arg("k")
            .arg("1")
            .cmd("INCR")
            .arg("k")
            .cmd("GET")
            .arg("k");
        let mut con = EngineConnection::new(Engine::new());
        let direct: (String, i64, String) = con.query_pipeline(&p).unwrap();
        let mut con = EngineConnection::new(Engine::new());
        let packed: (String, i64, String) = p.query(&mut con).unwrap();
        assert_eq!(direct, ("OK".into(), 2, "2".into()));
        assert_eq!(direct, packed);
        // A failing command inside EXEC is an error either way.
        let mut bad = redis::pipe();
        bad.atomic()
            .cmd("INCR")
            .arg("k")
            .cmd("SET")
            .arg("k")
            .arg("x");
        bad.cmd("INCR").arg("k");
        assert!(con.query_pipeline::<()>(&bad).is_err());
        assert!(bad.query::<()>(&mut con).is_err());
    }
}

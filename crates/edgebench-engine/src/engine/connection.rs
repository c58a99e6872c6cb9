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
//! sees bytes at all.
//!
//! One connection is one engine client (its SELECT, MULTI state, name). Errors come back as
//! `Value::ServerError` values, as the real connection returns them.
//!
//! This module is the whole redis-rs adapter (feature `redis-rs`): the connection, and
//! [`Reply::into_redis_value`], which turns a reply into the value redis-rs would have parsed.

use futures_util::future::{self, FutureExt as _};
use redis::{Arg, Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, RedisResult, Value};

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

    /// Runs one command given as arguments.
    fn exec_args(&mut self, args: &[&[u8]]) -> Value {
        self.engine
            .execute(&mut self.client, args)
            .into_redis_value(self.client.resp)
    }

    /// Runs every command packed in `bytes` (redis-rs packs pipelines as RESP before the sync
    /// trait sees them), parsed by the RESP server's own request parser, in order, handing
    /// each reply to `each` with its index.
    fn exec_packed(&mut self, bytes: &[u8], mut each: impl FnMut(usize, Value)) -> RedisResult<()> {
        let mut pos = 0;
        let mut index = 0;
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
            each(index, reply.into_redis_value(self.client.resp));
            index += 1;
        }
        Ok(())
    }

    /// The last reply of the commands packed in `bytes` (`Nil` if there are none).
    fn exec_packed_last(&mut self, bytes: &[u8]) -> RedisResult<Value> {
        let mut last = Value::Nil;
        self.exec_packed(bytes, |_, v| last = v)?;
        Ok(last)
    }

    fn exec_cmd(&mut self, cmd: &Cmd) -> Value {
        if cmd.args_iter().any(|a| !matches!(a, Arg::Simple(_))) {
            // A cursor argument (SCAN iterators) holds its value only in the packed form.
            let packed = cmd.get_packed_command();
            return self.exec_packed_last(&packed).unwrap_or(Value::Nil);
        }
        let args = cmd.args_iter().map(|a| match a {
            Arg::Simple(bytes) => bytes,
            _ => &[][..],
        });
        self.exec_args(&ArgSlice::new(args))
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
        let mut replies = Vec::with_capacity(count);
        self.exec_packed(cmd, |i, v| {
            if (offset..offset + count).contains(&i) {
                replies.push(v);
            }
        })?;
        Ok(replies)
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
        // The same replies a socket would carry: MULTI's OK and each QUEUED before EXEC's
        // array, when the pipeline is atomic; the caller's offset/count pick from them.
        let mut replies = Vec::with_capacity(pipeline.len() + 2);
        if pipeline.is_transaction() {
            replies.push(self.exec_args(&[b"MULTI"]));
        }
        for cmd in pipeline.cmd_iter() {
            replies.push(self.exec_cmd(cmd));
        }
        if pipeline.is_transaction() {
            replies.push(self.exec_args(&[b"EXEC"]));
        }
        let out = replies.into_iter().skip(offset).take(count).collect();
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
            Reply::Map(pairs) => V::Array(
                pairs
                    .into_iter()
                    .flat_map(|(k, v)| [k.into_redis_value(resp), v.into_redis_value(resp)])
                    .collect(),
            ),
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
}

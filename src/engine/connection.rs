//! The engine as a redis-rs connection: `redis::ConnectionLike` and
//! `redis::aio::ConnectionLike`, so code written against redis-rs (the Redis core-data store,
//! any `Commands` user) runs in-process, unchanged, with no socket.
//!
//! The sync `req_command` fast path reads the command's arguments straight from the `Cmd`
//! (`args_iter`) and converts the engine's reply straight into a `redis::Value`: no RESP is
//! written or parsed. Pipelines reach the sync trait as packed RESP bytes (redis-rs packs them
//! before it calls `req_packed_commands`), so those are split here; atomic pipelines arrive as
//! `MULTI … EXEC` and go through the engine's transaction code like any client's. The async
//! trait gets `&Cmd` and `&Pipeline` and never sees bytes at all.
//!
//! One connection is one engine client (its SELECT, MULTI state, name). Errors come back as
//! `Value::ServerError` values, as the real connection returns them.

use futures_util::future::{self, FutureExt as _};
use redis::{Arg, Cmd, ErrorKind, Pipeline, RedisError, RedisFuture, RedisResult, Value};

use super::{Client, Engine};

/// An in-process connection to an [`Engine`].
#[derive(Debug)]
pub struct EngineConnection {
    engine: Engine,
    client: Client,
}

impl EngineConnection {
    /// A new connection (a new client of `engine`).
    pub fn new(engine: Engine) -> Self {
        let client = engine.client();
        EngineConnection { engine, client }
    }

    /// Runs one command given as arguments.
    fn exec_args(&mut self, args: &[&[u8]]) -> Value {
        self.engine
            .execute(&mut self.client, args)
            .into_redis_value(self.client.resp)
    }

    fn exec_cmd(&mut self, cmd: &Cmd) -> Value {
        if cmd.args_iter().any(|a| !matches!(a, Arg::Simple(_))) {
            // A cursor argument (SCAN iterators) holds its value only in the packed form.
            let packed = cmd.get_packed_command();
            return match split_packed(&packed) {
                Ok(commands) => commands
                    .iter()
                    .map(|args| self.exec_args(args))
                    .last()
                    .unwrap_or(Value::Nil),
                Err(_) => Value::Nil,
            };
        }
        let args: Vec<&[u8]> = cmd
            .args_iter()
            .map(|a| match a {
                Arg::Simple(bytes) => bytes,
                _ => &[][..],
            })
            .collect();
        self.exec_args(&args)
    }
}

impl redis::ConnectionLike for EngineConnection {
    fn req_command(&mut self, cmd: &Cmd) -> RedisResult<Value> {
        Ok(self.exec_cmd(cmd))
    }

    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        let commands = split_packed(cmd)?;
        let mut last = Value::Nil;
        for args in commands {
            last = self.exec_args(&args);
        }
        Ok(last)
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let commands = split_packed(cmd)?;
        let replies: Vec<Value> = commands.iter().map(|args| self.exec_args(args)).collect();
        Ok(replies.into_iter().skip(offset).take(count).collect())
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

/// Splits packed redis-rs commands (`*N\r\n$len\r\narg\r\n…`, one after another) into
/// their arguments, borrowing from `bytes`.
fn split_packed(bytes: &[u8]) -> RedisResult<Vec<Vec<&[u8]>>> {
    fn bad() -> RedisError {
        RedisError::from((ErrorKind::Client, "malformed packed command"))
    }
    fn line(bytes: &[u8], pos: &mut usize, marker: u8) -> RedisResult<usize> {
        if bytes.get(*pos) != Some(&marker) {
            return Err(bad());
        }
        let rest = &bytes[*pos + 1..];
        let end = rest.windows(2).position(|w| w == b"\r\n").ok_or_else(bad)?;
        let n = std::str::from_utf8(&rest[..end])
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
            .ok_or_else(bad)?;
        *pos += 1 + end + 2;
        Ok(n)
    }
    let mut commands = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let argc = line(bytes, &mut pos, b'*')?;
        let mut args = Vec::with_capacity(argc);
        for _ in 0..argc {
            let len = line(bytes, &mut pos, b'$')?;
            let arg = bytes.get(pos..pos + len).ok_or_else(bad)?;
            if bytes.get(pos + len..pos + len + 2) != Some(b"\r\n") {
                return Err(bad());
            }
            args.push(arg);
            pos += len + 2;
        }
        commands.push(args);
    }
    Ok(commands)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_packed_pipelines() {
        let mut p = redis::pipe();
        p.cmd("SET").arg("k").arg("v\r\nx").cmd("GET").arg("k");
        let packed = p.get_packed_pipeline();
        let cmds = split_packed(&packed).unwrap();
        assert_eq!(
            cmds,
            vec![vec![&b"SET"[..], b"k", b"v\r\nx"], vec![&b"GET"[..], b"k"]]
        );
        assert!(split_packed(b"*1\r\n$5\r\nab").is_err());
        assert!(split_packed(b"GET k\r\n").is_err());
    }
}

//! Differential testing: the same commands sent to a real, spawned `redis-server` and to the
//! engine; the replies must be equal, exactly (compared as the `redis::Value`s redis-rs
//! parses, errors included, so error texts must match byte for byte).

use edgebench::engine::{Client, Engine};
use edgebench::target::spawn::{Listen, RedisServer};
use redis::{ConnectionLike, RedisResult, Value};

/// A real redis-server and an engine, fed the same commands.
pub struct Diff {
    _server: RedisServer,
    redis: redis::Connection,
    /// The engine under test.
    pub engine: Engine,
    /// The engine-side client (its SELECT, MULTI state...).
    pub client: Client,
}

impl Default for Diff {
    fn default() -> Self {
        Self::new()
    }
}

impl Diff {
    /// Spawns a private redis-server (fails, not skips, without one).
    pub fn new() -> Diff {
        let server = RedisServer::spawn(Listen::Unix).unwrap_or_else(|e| panic!("{e}"));
        let redis =
            edgebench::target::connect(&server.endpoint(), std::time::Duration::from_secs(5))
                .unwrap_or_else(|e| panic!("{e}"));
        let engine = Engine::new();
        let client = engine.client();
        Diff {
            _server: server,
            redis,
            engine,
            client,
        }
    }

    /// (redis-server's reply, the engine's reply), normalised to comparable strings.
    pub fn both(&mut self, args: &[&str]) -> (String, String) {
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        let real = norm(self.redis.req_packed_command(&cmd.get_packed_command()));
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        let ours = self
            .engine
            .execute(&mut self.client, &argv)
            .into_redis_value(self.client.resp);
        (real, norm(Ok(ours)))
    }

    /// Runs every command of `script` on both; panics at the first difference.
    pub fn check(&mut self, script: &[&[&str]]) {
        for (i, args) in script.iter().enumerate() {
            let (real, ours) = self.both(args);
            assert_eq!(
                ours, real,
                "command #{i} {args:?}: engine (left) vs redis-server (right)"
            );
        }
    }

    /// Like [`Diff::check`] for one command whose reply is an array in no defined order
    /// (SMEMBERS, KEYS, HGETALL...): compares the sorted elements.
    pub fn check_unordered(&mut self, args: &[&str]) {
        let (real, ours) = self.both(args);
        assert_eq!(
            sorted(&ours),
            sorted(&real),
            "{args:?}: engine (left) vs redis-server (right)"
        );
    }
}

fn norm(v: RedisResult<Value>) -> String {
    match v {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("Err({:?} {:?})", e.code(), e.detail()),
    }
}

fn sorted(s: &str) -> String {
    // Values are Debug strings; split array elements at the top level.
    // redis-rs 1.x prints arrays as `array([...])`.
    let inner = s
        .strip_prefix("array([")
        .or_else(|| s.strip_prefix("Array(["))
        .and_then(|x| x.strip_suffix("])"));
    match inner {
        Some(body) => {
            let mut parts: Vec<&str> = split_top(body);
            parts.sort_unstable();
            parts.join(", ")
        }
        None => s.to_string(),
    }
}

fn split_top(body: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0i32, 0usize, Vec::new());
    let bytes = body.as_bytes();
    let mut in_str = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_str => i += 1,
            b'"' => in_str = !in_str,
            b'(' | b'[' | b'{' if !in_str => depth += 1,
            b')' | b']' | b'}' if !in_str => depth -= 1,
            b',' if !in_str && depth == 0 => {
                out.push(body[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    if start < body.len() {
        out.push(body[start..].trim());
    }
    out
}

//! Differential testing: the same commands sent to a real, spawned `redis-server`, to the
//! engine in-process, and to another engine served over a Unix socket by this crate's RESP
//! server; the replies must be equal, exactly (compared as the `redis::Value`s redis-rs
//! parses, errors included, so error texts must match byte for byte). The served leg checks
//! the RESP parser and encoder on every command the in-process leg checks.

use edgebench_engine::engine::{Client, Engine};
use edgebench_engine::server::{Bind, ServerHandle};
use redis::{ConnectionLike, RedisResult, Value};

use super::redis_server::RedisServer;

/// A real redis-server and an engine, fed the same commands.
pub struct Diff {
    _server: RedisServer,
    redis: redis::Connection,
    /// The third leg: an engine of its own behind the RESP server, and a connection to it
    /// (`None` for tests that drive the in-process engine directly as well).
    served: Option<(ServerHandle, redis::Connection)>,
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
    /// Spawns a private redis-server (fails, not skips, without one) and serves a second
    /// engine over a Unix socket.
    pub fn new() -> Diff {
        let mut d = Diff::in_process_only();
        let handle = super::served::spawn_in_background(Bind::TempUnixSocket, Engine::new())
            .unwrap_or_else(|e| panic!("cannot serve the engine: {e}"));
        let con = super::connect(&handle.endpoint(), std::time::Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("{e}"));
        d.served = Some((handle, con));
        d
    }

    /// Like [`Diff::new`] without the served leg, for tests that also run commands on
    /// [`Diff::engine`] alone (the served engine would then hold different data).
    pub fn in_process_only() -> Diff {
        let server = RedisServer::spawn();
        let redis = server.connect();
        let engine = Engine::new();
        let client = engine.client();
        Diff {
            _server: server,
            redis,
            served: None,
            engine,
            client,
        }
    }

    /// (redis-server's reply, the engine's reply), normalised to comparable strings.
    pub fn both(&mut self, args: &[&str]) -> (String, String) {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.both_bytes(&argv)
    }

    /// [`Diff::both`] with binary-safe arguments (a HyperLogLog's bytes, for one).
    pub fn both_bytes(&mut self, argv: &[&[u8]]) -> (String, String) {
        let args: Vec<String> = argv
            .iter()
            .map(|a| String::from_utf8_lossy(a).into())
            .collect();
        let mut cmd = redis::Cmd::new();
        for a in argv {
            cmd.arg(*a);
        }
        let packed = cmd.get_packed_command();
        let real = norm(self.redis.req_packed_command(&packed));
        let served = self
            .served
            .as_mut()
            .map(|(_, con)| norm(con.req_packed_command(&packed)));
        let ours = self
            .engine
            .execute(&mut self.client, argv)
            .into_redis_value(self.client.resp);
        let ours = norm(Ok(ours));
        // Where the in-process reply equals Redis's exactly, the served one must hold the same
        // elements. Order is the in-process leg's to check: the served engine is another
        // engine, whose hash-ordered replies (SMEMBERS, KEYS) may agree with Redis's order by
        // chance in one and not in the other. Where the in-process reply differs (random
        // picks, client ids), the caller compares in a way only the in-process leg follows.
        if let Some(served) = served {
            if ours == real {
                assert_eq!(
                    sorted(&served),
                    sorted(&real),
                    "{args:?}: engine through the RESP server (left) vs redis-server (right)"
                );
            }
        }
        (real, ours)
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
}

fn norm(v: RedisResult<Value>) -> String {
    match v {
        Ok(v) => format!("{v:?}"),
        Err(e) => format!("Err({:?} {:?})", e.code(), e.detail()),
    }
}

/// `s` with the elements of every array, at every depth, in sorted order.
fn sorted(s: &str) -> String {
    // redis-rs 1.x prints arrays as `array([...])`.
    if !s.starts_with("array([") {
        return s.to_string();
    }
    let mut parts: Vec<String> = elements(s).iter().map(|e| sorted(e)).collect();
    parts.sort_unstable();
    format!("array([{}])", parts.join(", "))
}

/// The top-level elements of a reply's text as [`Diff::both`] prints it (`array([...])`).
pub fn elements(reply: &str) -> Vec<String> {
    let Some(body) = reply
        .strip_prefix("array([")
        .and_then(|b| b.strip_suffix("])"))
    else {
        return Vec::new();
    };
    let (mut depth, mut start, mut in_str, mut escaped) = (0i32, 0usize, false, false);
    let mut out = Vec::new();
    for (i, c) in body.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_str => escaped = true,
            '"' => in_str = !in_str,
            '(' | '[' if !in_str => depth += 1,
            ')' | ']' if !in_str => depth -= 1,
            ',' if !in_str && depth == 0 => {
                out.push(body[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !body[start..].trim().is_empty() {
        out.push(body[start..].trim().to_string());
    }
    out
}

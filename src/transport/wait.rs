//! Synchronous replication for any Redis workload: a connection that follows every request
//! holding a write with `WAIT N 0`, in the same round trip.
//!
//! [`WaitConnection`] wraps a [`redis::ConnectionLike`]. When a request (one command, or a
//! pipeline / `MULTI … EXEC` as packed bytes) contains a command that may write, it appends
//! `WAIT N 0` to the same bytes, so the primary gets both in one write and answers both in
//! one round trip; WAIT's reply is taken off, and callers see exactly the replies they saw
//! without it. A WAIT reply below N (it cannot happen with timeout 0 unless the server is
//! not a primary any more) is an error for that request, counted like any failed operation.
//! Stores and workloads stay as they are: `--wait` is a property of the connection a target
//! hands out.
//!
//! Which commands write: every command that is not on the read-only list below
//! ([`may_write`], which the cluster connection and `edgebench kv` use too). A command
//! missing from the list gets a WAIT it did not need, which costs time but is never wrong.
//!
//! `WAIT N 0` blocks until N replicas acknowledged: the target refuses `--wait N` at start
//! when it has fewer than N replicas (see [`super::Target::start`]).
//!
//! [`Wait`] is the command and the check of its reply, shared with
//! [`super::cluster::ClusterConnection`], which appends WAIT per node itself (a pipeline may
//! be split over several primaries).

use std::sync::Arc;

use redis::{ConnectionLike, ErrorKind, RedisError, RedisResult, Value};

use crate::resp::RequestParser;
use crate::transport::StoreConnection;

/// Most replicas `--wait` asks for; WAIT takes any number, and more than this many replicas
/// of one server is a typo.
pub const MAX_WAIT: u32 = 100;

/// Commands that never write (upper case): requests made only of these get no WAIT.
const READ_ONLY: &[&[u8]] = &[
    b"GET",
    b"MGET",
    b"EXISTS",
    b"STRLEN",
    b"GETRANGE",
    b"HGET",
    b"HMGET",
    b"HGETALL",
    b"HEXISTS",
    b"HLEN",
    b"HKEYS",
    b"HVALS",
    b"HSCAN",
    b"ZRANGE",
    b"ZRANGEBYSCORE",
    b"ZREVRANGE",
    b"ZREVRANGEBYSCORE",
    b"ZRANGEBYLEX",
    b"ZCARD",
    b"ZCOUNT",
    b"ZSCORE",
    b"ZMSCORE",
    b"ZRANK",
    b"ZREVRANK",
    b"ZSCAN",
    b"SMEMBERS",
    b"SISMEMBER",
    b"SMISMEMBER",
    b"SCARD",
    b"SSCAN",
    b"LRANGE",
    b"LLEN",
    b"LINDEX",
    b"TYPE",
    b"TTL",
    b"PTTL",
    b"SCAN",
    b"KEYS",
    b"DBSIZE",
    b"PING",
    b"ECHO",
    b"INFO",
    b"TIME",
    b"MULTI",
    b"EXEC",
    b"DISCARD",
    b"WATCH",
    b"UNWATCH",
    b"SELECT",
    b"CLIENT",
    b"HELLO",
    b"COMMAND",
    b"CONFIG",
    b"WAIT",
    b"XRANGE",
    b"XREVRANGE",
    b"XLEN",
    b"XREAD",
];

/// Whether a command named `name` may write (it is not on [`READ_ONLY`]; case does not
/// matter). What every client that sends WAIT asks of each command: the connections here,
/// [`super::cluster::ClusterConnection`] and `edgebench kv`'s load.
pub fn may_write(name: &[u8]) -> bool {
    !READ_ONLY.iter().any(|ro| ro.eq_ignore_ascii_case(name))
}

/// `WAIT replicas 0`, packed once, and the check of its reply: what [`WaitConnection`] and
/// [`super::cluster::ClusterConnection`] append after a write and take off again. Cheap to
/// clone (the bytes are shared).
#[derive(Debug, Clone)]
pub(crate) struct Wait {
    replicas: u32,
    packed: Arc<[u8]>,
}

impl Wait {
    /// `WAIT replicas 0`.
    pub(crate) fn new(replicas: u32) -> Wait {
        Wait {
            replicas,
            packed: redis::cmd("WAIT")
                .arg(replicas)
                .arg(0)
                .get_packed_command()
                .into(),
        }
    }

    /// How many replicas it waits for.
    pub(crate) fn replicas(&self) -> u32 {
        self.replicas
    }

    /// The packed command.
    pub(crate) fn packed(&self) -> &[u8] {
        &self.packed
    }

    /// Checks WAIT's reply: at least `replicas` acknowledged, else an error for the request
    /// it followed (with timeout 0 it answers fewer only when the node is no longer a
    /// primary).
    pub(crate) fn check(&self, reply: Option<Value>) -> RedisResult<()> {
        let detail = match reply {
            Some(Value::Int(acked)) if acked >= i64::from(self.replicas) => return Ok(()),
            Some(Value::Int(acked)) => format!(
                "only {acked} of {} replicas acknowledged the write",
                self.replicas
            ),
            other => format!(
                "WAIT {} 0 answered {other:?}, not a count of replicas",
                self.replicas
            ),
        };
        Err(RedisError::from((ErrorKind::Client, "WAIT failed", detail)))
    }
}

/// A connection whose writes each wait for `replicas` replicas (`WAIT replicas 0`).
pub struct WaitConnection<C> {
    inner: C,
    wait: Wait,
    /// The request plus WAIT; reused, so a write allocates nothing once it has grown.
    buf: Vec<u8>,
    /// Reads the commands of each request, to tell writes from reads.
    parser: RequestParser,
}

impl<C: ConnectionLike> WaitConnection<C> {
    /// `inner`, with `WAIT replicas 0` after each write.
    pub fn new(inner: C, replicas: u32) -> WaitConnection<C> {
        WaitConnection {
            inner,
            wait: Wait::new(replicas),
            buf: Vec::new(),
            parser: RequestParser::default(),
        }
    }

    /// The request with WAIT appended, in `self.buf`.
    fn with_wait(&mut self, request: &[u8]) {
        self.buf.clear();
        self.buf.extend_from_slice(request);
        self.buf.extend_from_slice(self.wait.packed());
    }
}

impl<C: ConnectionLike> ConnectionLike for WaitConnection<C> {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        if !has_write(&mut self.parser, cmd) {
            return self.inner.req_packed_command(cmd);
        }
        self.with_wait(cmd);
        let mut replies = self.inner.req_packed_commands(&self.buf, 0, 2)?;
        self.wait.check(replies.pop())?;
        replies.pop().ok_or_else(|| {
            RedisError::from((
                ErrorKind::Client,
                "WAIT failed",
                "no reply to the command".into(),
            ))
        })
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        if !has_write(&mut self.parser, cmd) {
            return self.inner.req_packed_commands(cmd, offset, count);
        }
        self.with_wait(cmd);
        // WAIT's reply comes after the last one the caller reads (a transaction's EXEC).
        let mut replies = self
            .inner
            .req_packed_commands(&self.buf, offset, count + 1)?;
        self.wait.check(replies.pop())?;
        Ok(replies)
    }

    fn get_db(&self) -> i64 {
        self.inner.get_db()
    }

    fn supports_pipelining(&self) -> bool {
        self.inner.supports_pipelining()
    }

    fn check_connection(&mut self) -> bool {
        self.inner.check_connection()
    }

    fn is_open(&self) -> bool {
        self.inner.is_open()
    }
}

impl<C: ConnectionLike + Send> StoreConnection for WaitConnection<C> {}

/// Whether packed RESP `request` holds a command that [`may_write`], read with the engine's
/// request parser; anything that does not parse counts as a write (a WAIT too many is only
/// slower).
fn has_write(parser: &mut RequestParser, request: &[u8]) -> bool {
    let mut pos = 0;
    while pos < request.len() {
        let (consumed, write) = match parser.parse(&request[pos..], true) {
            Ok(Some(command)) => (
                command.consumed(),
                !command.is_empty() && may_write(command.arg(0)),
            ),
            Ok(None) => {
                // A partial command leaves the parser mid-request: start the next one afresh.
                *parser = RequestParser::default();
                return true;
            }
            Err(_) => return true,
        };
        if write {
            return true;
        }
        pos += consumed;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packed(cmds: &[&[&str]]) -> Vec<u8> {
        let mut pipe = redis::pipe();
        for args in cmds {
            let mut cmd = redis::cmd(args[0]);
            for a in &args[1..] {
                cmd.arg(*a);
            }
            pipe.add_command(cmd);
        }
        pipe.get_packed_pipeline()
    }

    fn has_write(request: &[u8]) -> bool {
        super::has_write(&mut RequestParser::default(), request)
    }

    /// A connection that answers from a script and keeps what it was sent.
    struct Scripted {
        sent: Vec<(Vec<u8>, usize, usize)>,
        replies: Vec<Value>,
    }

    impl ConnectionLike for Scripted {
        fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
            self.sent.push((cmd.to_vec(), 0, 1));
            Ok(self.replies.remove(0))
        }

        fn req_packed_commands(
            &mut self,
            cmd: &[u8],
            offset: usize,
            count: usize,
        ) -> RedisResult<Vec<Value>> {
            self.sent.push((cmd.to_vec(), offset, count));
            Ok(self.replies.drain(..count).collect())
        }

        fn get_db(&self) -> i64 {
            0
        }

        fn check_connection(&mut self) -> bool {
            true
        }

        fn is_open(&self) -> bool {
            true
        }
    }

    fn scripted(replies: Vec<Value>) -> WaitConnection<Scripted> {
        WaitConnection::new(
            Scripted {
                sent: Vec::new(),
                replies,
            },
            2,
        )
    }

    #[test]
    fn a_write_carries_wait_in_the_same_request_and_its_reply_is_taken_off() {
        let wait = packed(&[&["WAIT", "2", "0"]]);
        let mut conn = scripted(vec![Value::Okay, Value::Int(2)]);
        let reply: String = redis::cmd("SET")
            .arg("k")
            .arg("v")
            .query(&mut conn)
            .unwrap();
        assert_eq!(reply, "OK");
        let mut expected = packed(&[&["SET", "k", "v"]]);
        expected.extend_from_slice(&wait);
        assert_eq!(conn.inner.sent, [(expected, 0, 2)]);

        // A transaction: WAIT after EXEC, one more reply read past the caller's.
        let mut conn = scripted(vec![Value::Array(vec![Value::Int(1)]), Value::Int(3)]);
        let mut tx = redis::pipe();
        tx.atomic().cmd("ZADD").arg("z").arg(1).arg("m");
        let (added,): (i64,) = tx.query(&mut conn).unwrap();
        assert_eq!(added, 1);
        let (bytes, offset, count) = &conn.inner.sent[0];
        assert!(bytes.ends_with(&wait));
        // MULTI and ZADD are skipped; EXEC's reply and WAIT's are read.
        assert_eq!((*offset, *count), (2, 2));

        // A read goes as it is.
        let mut conn = scripted(vec![Value::Nil]);
        let got: Option<String> = redis::cmd("GET").arg("k").query(&mut conn).unwrap();
        assert_eq!(got, None);
        assert_eq!(conn.inner.sent, [(packed(&[&["GET", "k"]]), 0, 1)]);
    }

    #[test]
    fn too_few_acknowledgements_are_an_error_for_that_request() {
        let mut conn = scripted(vec![Value::Okay, Value::Int(1)]);
        let err = redis::cmd("SET")
            .arg("k")
            .arg("v")
            .query::<String>(&mut conn)
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "WAIT failed - Client: only 1 of 2 replicas acknowledged the write"
        );
    }

    #[test]
    fn commands_off_the_read_only_list_may_write_in_any_case() {
        for w in ["SET", "hset", "Zadd", "MULTI_UNKNOWN", "FLUSHDB", "del"] {
            assert!(may_write(w.as_bytes()), "{w}");
        }
        for r in ["GET", "hget", "Mget", "EXEC", "wait", "ZRANGE"] {
            assert!(!may_write(r.as_bytes()), "{r}");
        }
    }

    #[test]
    fn requests_with_any_write_are_writes() {
        assert!(!has_write(&packed(&[&["GET", "k"]])));
        assert!(!has_write(&packed(&[
            &["zrange", "event", "0", "-1"],
            &["MGET", "a", "b"]
        ])));
        assert!(has_write(&packed(&[&["SET", "k", "v"]])));
        assert!(has_write(&packed(&[
            &["GET", "k"],
            &["hset", "h", "f", "v"]
        ])));
        let mut tx = redis::pipe();
        tx.atomic().cmd("ZADD").arg("z").arg(1).arg("m");
        assert!(has_write(&tx.get_packed_pipeline()));
        let mut read_tx = redis::pipe();
        read_tx.atomic().cmd("ZCARD").arg("z");
        assert!(!has_write(&read_tx.get_packed_pipeline()));
        // A binary argument that looks like RESP is skipped by its length.
        assert!(!has_write(&packed(&[&["GET", "*1\r\n$3\r\nSET\r\n"]])));
        // What does not parse, or is cut short, counts as a write, and the parser starts the
        // next request afresh.
        let mut parser = RequestParser::default();
        assert!(super::has_write(&mut parser, b"*1\r\n$3\r\nGE"));
        assert!(!super::has_write(&mut parser, &packed(&[&["GET", "k"]])));
        assert!(has_write(b"*x\r\n"));
    }
}

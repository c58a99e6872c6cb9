//! [`ClusterConnection`]: one synchronous redis-rs connection per primary behind one
//! `redis::ConnectionLike`, routing each command by the hash slot of its key with the slot
//! map of [`super::slots`].
//!
//! What it does, as cluster clients (redis-rs's, memtier's) do:
//! - a command goes to the primary of its first key's slot; a command without a key goes to
//!   the node the previous command went to (so a `WAIT` follows its write);
//! - `-MOVED` reads the slot map again and resends; `-ASK` sends `ASKING` and the command to
//!   the node named, once; `-TRYAGAIN` and `-CLUSTERDOWN` wait a little, read the map again
//!   and resend (at most [`ATTEMPTS`] times in all);
//! - `MGET`, `DEL`, `UNLINK`, `EXISTS`, `TOUCH` and `MSET` whose keys span slots are split per
//!   slot and their replies put back together; `KEYS`, `DBSIZE`, `FLUSHDB` and `FLUSHALL` go
//!   to every primary and their replies are merged;
//! - a pipeline goes whole to one node when all its commands route there (a `MULTI … EXEC`
//!   always does: its keys must share a slot, as Redis requires), and otherwise is split per
//!   node with the replies put back in order;
//! - a connection that fails (a primary died) is dropped and the error returned to the caller,
//!   who counts it; the next command reads the slot map again first, from any node that
//!   answers, so once a replica has taken over the load goes on.
//!
//! Writes are not retried after an I/O error: whether they were applied is unknown.
//!
//! **Synchronous replication** ([`ClusterConnection::with_wait`]): every request that reaches
//! a primary with a command that may write ([`may_write`]) carries `WAIT N 0` after it, in
//! the same bytes to the same primary, and WAIT's reply is taken off again: a command, each
//! per-slot part of a split command, each primary's part of a scattered pipeline that
//! writes, a whole `MULTI … EXEC` (WAIT after EXEC), and every resend after a redirection.
//! A WAIT answering fewer than N fails the request, as on one server.

use std::time::Duration;

use redis::{ConnectionLike, ErrorKind, RedisError, RedisResult, ServerErrorKind, Value};

use super::slots::{self, hash_slot, Topology};
use crate::resp::RequestParser;
use crate::transport::Endpoint;
use crate::transport::{connect, connect_reason};
use crate::transport::{may_write, Wait};

/// Tries per command before a redirection or a down cluster is returned as the reply.
const ATTEMPTS: u32 = 5;
/// The wait before resending after `-TRYAGAIN` or `-CLUSTERDOWN`, times the attempt number.
const BACKOFF: Duration = Duration::from_millis(100);

/// Why a cluster could not be reached. One line each.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    /// No node given answered `CLUSTER SLOTS`.
    #[error("no node of the cluster answered ({tried}): {reason}")]
    Unreachable {
        /// The nodes tried.
        tried: String,
        /// The last node's error.
        reason: String,
    },
    /// A node answered but is not a cluster node with its slots assigned.
    #[error(
        "{node} is not a usable Redis Cluster node: {why} (for a single server, use \
         redis://HOST:PORT)"
    )]
    NotCluster {
        /// The node.
        node: Endpoint,
        /// What it answered.
        why: String,
    },
}

/// A cluster client over one connection per primary; see the module documentation.
pub struct ClusterConnection {
    /// The nodes the user gave (or the spawned primaries): where the map is read from when
    /// the known nodes do not answer.
    seeds: Vec<Endpoint>,
    topology: Topology,
    /// `conns[i]`: the connection to `topology.nodes[i]`, opened on first use.
    conns: Vec<Option<redis::Connection>>,
    timeout: Duration,
    /// Where the previous command went (keyless commands follow it).
    last: usize,
    /// A connection failed: read the slot map again before the next command.
    stale: bool,
    /// `WAIT N 0` after every request that writes (see [`ClusterConnection::with_wait`]).
    wait: Option<Wait>,
}

impl std::fmt::Debug for ClusterConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClusterConnection")
            .field("topology", &self.topology)
            .finish()
    }
}

impl ClusterConnection {
    /// Reads the slot map from the first of `seeds` that answers; connections to the
    /// primaries open as commands need them.
    pub fn connect(seeds: &[Endpoint], timeout: Duration) -> Result<Self, ClusterError> {
        let topology = read_topology(seeds, timeout)?;
        let conns = topology.nodes.iter().map(|_| None).collect();
        Ok(ClusterConnection {
            seeds: seeds.to_vec(),
            topology,
            conns,
            timeout,
            last: 0,
            stale: false,
            wait: None,
        })
    }

    /// This connection, with `WAIT replicas 0` after every request that writes, on the
    /// primary the write went to (0: no WAIT). Each primary needs `replicas` replicas, or
    /// WAIT blocks for ever: the target checks that at start.
    pub fn with_wait(mut self, replicas: u32) -> Self {
        self.wait = (replicas > 0).then(|| Wait::new(replicas));
        self
    }

    /// How many replicas each write waits for (0: no WAIT).
    pub fn wait(&self) -> u32 {
        self.wait.as_ref().map_or(0, Wait::replicas)
    }

    /// The primaries of the current slot map.
    pub fn primaries(&self) -> &[Endpoint] {
        &self.topology.nodes
    }

    /// Runs `f` on a connection to each primary in turn (what `SCAN` needs: it walks one
    /// node's keyspace).
    pub fn for_each_primary(
        &mut self,
        mut f: impl FnMut(&mut redis::Connection) -> RedisResult<()>,
    ) -> RedisResult<()> {
        self.refresh_if_stale()?;
        for i in 0..self.conns.len() {
            let conn = self.node(i)?;
            if let Err(e) = f(conn) {
                return Err(self.failed(i, e));
            }
        }
        Ok(())
    }

    /// Reads the slot map again: from the known primaries, then the seeds.
    fn refresh(&mut self) -> RedisResult<()> {
        let mut candidates = self.topology.nodes.clone();
        for seed in &self.seeds {
            if !candidates.contains(seed) {
                candidates.push(seed.clone());
            }
        }
        let topology = read_topology(&candidates, self.timeout)
            .map_err(|e| RedisError::from(std::io::Error::other(e.to_string())))?;
        let mut old: Vec<(Endpoint, Option<redis::Connection>)> = self
            .topology
            .nodes
            .drain(..)
            .zip(self.conns.drain(..))
            .collect();
        self.conns = topology
            .nodes
            .iter()
            .map(|node| {
                old.iter_mut()
                    .find(|(n, _)| n == node)
                    .and_then(|(_, c)| c.take())
            })
            .collect();
        self.topology = topology;
        self.last = 0;
        self.stale = false;
        Ok(())
    }

    fn refresh_if_stale(&mut self) -> RedisResult<()> {
        if self.stale {
            self.refresh()?;
        }
        Ok(())
    }

    /// The connection to primary `i`, opened if need be.
    fn node(&mut self, i: usize) -> RedisResult<&mut redis::Connection> {
        if self.conns[i].is_none() {
            let endpoint = &self.topology.nodes[i];
            let conn = connect(endpoint, self.timeout).map_err(|e| {
                self.stale = true;
                RedisError::from(std::io::Error::other(format!(
                    "{endpoint}: {}",
                    connect_reason(&e, endpoint)
                )))
            })?;
            self.conns[i] = Some(conn);
        }
        Ok(self.conns[i].as_mut().expect("opened above"))
    }

    /// Notes a failed request on node `i`: a broken connection is dropped and the map is read
    /// again before the next command.
    fn failed(&mut self, i: usize, e: RedisError) -> RedisError {
        if e.is_io_error() || e.is_connection_dropped() || e.is_unrecoverable_error() {
            self.conns[i] = None;
            self.stale = true;
        }
        e
    }

    /// The node a command goes to.
    fn route(&self, args: &[&[u8]]) -> usize {
        match route_key(args) {
            Some(key) => self.topology.node_of(hash_slot(key)).unwrap_or(0),
            None => self.last.min(self.conns.len().saturating_sub(1)),
        }
    }

    /// Sends one packed command to node `i` (after `ASKING` when `asking`; followed by
    /// WAIT when it `writes` and the connection waits).
    fn send(&mut self, i: usize, packed: &[u8], asking: bool, writes: bool) -> RedisResult<Value> {
        self.last = i;
        let wait = self.wait.clone().filter(|_| writes);
        let conn = self.node(i)?;
        if wait.is_none() && !asking {
            return conn
                .req_packed_command(packed)
                .map_err(|e| self.failed(i, e));
        }
        let mut bytes = if asking {
            pack(&[b"ASKING"])
        } else {
            Vec::new()
        };
        bytes.extend_from_slice(packed);
        if let Some(w) = &wait {
            bytes.extend_from_slice(w.packed());
        }
        let count = 1 + usize::from(wait.is_some());
        let mut replies = conn
            .req_packed_commands(&bytes, usize::from(asking), count)
            .map_err(|e| self.failed(i, e))?;
        let wait_reply = wait.as_ref().and_then(|_| replies.pop());
        let reply = replies.pop().unwrap_or(Value::Nil);
        match &wait {
            // A refused or redirected write wrote nothing here: its WAIT says nothing.
            Some(w) if !matches!(reply, Value::ServerError(_)) => w.check(wait_reply)?,
            _ => {}
        }
        Ok(reply)
    }

    /// One command, routed, with redirections followed.
    fn single(&mut self, packed: &[u8], args: &[&[u8]]) -> RedisResult<Value> {
        self.refresh_if_stale()?;
        let mut node = self.route(args);
        let mut asking = false;
        let writes = may_write(args[0]);
        for attempt in 1..=ATTEMPTS {
            let reply = self.send(node, packed, asking, writes)?;
            asking = false;
            let Value::ServerError(e) = &reply else {
                return Ok(reply);
            };
            if attempt == ATTEMPTS {
                return Ok(reply);
            }
            match e.kind() {
                Some(ServerErrorKind::Moved) => {
                    self.refresh()?;
                    node = self.route(args);
                }
                Some(ServerErrorKind::Ask) => match self.redirect_target(e.details()) {
                    Some(i) => {
                        node = i;
                        asking = true;
                    }
                    None => return Ok(reply),
                },
                Some(ServerErrorKind::TryAgain | ServerErrorKind::ClusterDown) => {
                    std::thread::sleep(BACKOFF * attempt);
                    self.refresh()?;
                    node = self.route(args);
                }
                _ => return Ok(reply),
            }
        }
        unreachable!("the last attempt returns")
    }

    /// The index of the node an `-ASK` names (`"3999 127.0.0.1:6381"`), reading the map
    /// again if it is not a known primary (an ASK can name a node being added).
    fn redirect_target(&mut self, details: Option<&str>) -> Option<usize> {
        let node = slots::node_at(details?.split(' ').nth(1)?)?;
        if let Some(i) = self.topology.nodes.iter().position(|n| *n == node) {
            return Some(i);
        }
        self.refresh().ok()?;
        self.topology.nodes.iter().position(|n| *n == node)
    }

    /// A multi-key command whose keys span slots: one command per slot, replies merged.
    fn split_keys(&mut self, args: &[&[u8]], step: usize) -> RedisResult<Value> {
        let name = args[0];
        let keys = &args[1..];
        // Group positions by slot, in first-seen order.
        let mut groups: Vec<(u16, Vec<usize>)> = Vec::new();
        for (i, chunk) in keys.chunks(step).enumerate() {
            let slot = hash_slot(chunk[0]);
            match groups.iter_mut().find(|(s, _)| *s == slot) {
                Some((_, positions)) => positions.push(i),
                None => groups.push((slot, vec![i])),
            }
        }
        let mut merged: Vec<Value> = vec![Value::Nil; keys.len() / step];
        let mut total: i64 = 0;
        for (_, positions) in &groups {
            let mut sub: Vec<&[u8]> = vec![name];
            for &p in positions {
                sub.extend_from_slice(&keys[p * step..p * step + step]);
            }
            let reply = self.single(&pack(&sub), &sub)?;
            match reply {
                Value::Array(values) if values.len() == positions.len() => {
                    for (&p, v) in positions.iter().zip(values) {
                        merged[p] = v;
                    }
                }
                Value::Int(n) => total += n,
                Value::Okay | Value::SimpleString(_) => {}
                other => return Ok(other),
            }
        }
        Ok(if name.eq_ignore_ascii_case(b"MGET") {
            Value::Array(merged)
        } else if name.eq_ignore_ascii_case(b"MSET") {
            Value::Okay
        } else {
            Value::Int(total)
        })
    }

    /// A keyless command that concerns every primary's keyspace, sent to each and merged.
    fn every_primary(&mut self, packed: &[u8], name: &[u8]) -> RedisResult<Value> {
        self.refresh_if_stale()?;
        let mut keys = Vec::new();
        let mut total = 0;
        let mut last = Value::Okay;
        let writes = may_write(name);
        for i in 0..self.conns.len() {
            match self.send(i, packed, false, writes)? {
                Value::Array(mut part) => keys.append(&mut part),
                Value::Int(n) => total += n,
                e @ Value::ServerError(_) => return Ok(e),
                other => last = other,
            }
        }
        Ok(if name.eq_ignore_ascii_case(b"KEYS") {
            Value::Array(keys)
        } else if name.eq_ignore_ascii_case(b"DBSIZE") {
            Value::Int(total)
        } else {
            last
        })
    }

    /// A pipeline: whole to one node when every command routes there, else split per node.
    fn pipeline(&mut self, packed: &[u8], offset: usize, count: usize) -> RedisResult<Vec<Value>> {
        self.refresh_if_stale()?;
        let commands = parse_packed(packed).ok_or_else(unparsable)?;
        let transaction = commands
            .first()
            .is_some_and(|c| c.args[0].eq_ignore_ascii_case(b"MULTI"));
        if transaction || offset > 0 {
            return self.transaction(packed, &commands, offset, count);
        }
        // A command without a key follows the one before it in the pipeline (a WAIT after
        // its write), the first one the previous request.
        let mut nodes: Vec<usize> = Vec::with_capacity(commands.len());
        for c in &commands {
            let node = match route_key(&c.args) {
                Some(_) => self.route(&c.args),
                None => nodes.last().copied().unwrap_or_else(|| self.route(&c.args)),
            };
            nodes.push(node);
        }
        let mut replies = if nodes.iter().all(|&n| n == nodes[0]) {
            let i = nodes[0];
            self.last = i;
            let wait = self
                .wait
                .clone()
                .filter(|_| commands.iter().any(|c| may_write(c.args[0])));
            let conn = self.node(i)?;
            let result = match &wait {
                None => conn.req_packed_commands(packed, offset, count),
                Some(w) => {
                    let mut bytes = packed.to_vec();
                    bytes.extend_from_slice(w.packed());
                    conn.req_packed_commands(&bytes, offset, count + 1)
                }
            };
            let mut replies = result.map_err(|e| self.failed(i, e))?;
            if let Some(w) = &wait {
                w.check(replies.pop())?;
            }
            replies
        } else {
            self.scatter(&commands, &nodes)?
        };
        // Redirected or refused items are resent one by one (the others have run).
        for (c, reply) in replies.iter_mut().enumerate() {
            if let Value::ServerError(e) = reply {
                if matches!(
                    e.kind(),
                    Some(
                        ServerErrorKind::Moved
                            | ServerErrorKind::Ask
                            | ServerErrorKind::TryAgain
                            | ServerErrorKind::ClusterDown
                    )
                ) {
                    *reply = self.single(commands[c].bytes, &commands[c].args)?;
                }
            }
        }
        Ok(replies)
    }

    /// A pipeline whose commands route to several nodes: each node's part is written first,
    /// then the replies are read, so the nodes work at once and the pipeline waits about one
    /// round trip, not one per node. Replies come back in the commands' order. When the
    /// connection waits, each part that writes ends with its own WAIT, whose reply is read
    /// after the part's and taken off; a WAIT that fails fails the pipeline once every reply
    /// is in.
    fn scatter(&mut self, commands: &[Packed<'_>], nodes: &[usize]) -> RedisResult<Vec<Value>> {
        let mut order: Vec<usize> = nodes.to_vec();
        order.sort_unstable();
        order.dedup();
        let parts: Vec<(usize, Vec<usize>)> = order
            .into_iter()
            .map(|i| (i, (0..commands.len()).filter(|&c| nodes[c] == i).collect()))
            .collect();
        let waits: Vec<Option<Wait>> = parts
            .iter()
            .map(|(_, mine)| {
                let writes = mine.iter().any(|&c| may_write(commands[c].args[0]));
                self.wait.clone().filter(|_| writes)
            })
            .collect();
        for ((i, mine), wait) in parts.iter().zip(&waits) {
            let mut sub = Vec::new();
            for &c in mine {
                sub.extend_from_slice(commands[c].bytes);
            }
            if let Some(w) = wait {
                sub.extend_from_slice(w.packed());
            }
            let sent = self
                .node(*i)
                .and_then(|conn| conn.send_packed_command(&sub));
            if let Err(e) = sent {
                return Err(self.abandon(&parts, e));
            }
        }
        let mut replies = vec![Value::Nil; commands.len()];
        let mut wait_failed = None;
        for ((i, mine), wait) in parts.iter().zip(&waits) {
            self.last = *i;
            for &c in mine {
                let read = self.node(*i).and_then(|conn| conn.recv_response());
                match read {
                    Ok(v) => replies[c] = v,
                    Err(e) => return Err(self.abandon(&parts, e)),
                }
            }
            if let Some(w) = wait {
                let read = self.node(*i).and_then(|conn| conn.recv_response());
                match read {
                    Ok(v) => {
                        if let Err(e) = w.check(Some(v)) {
                            wait_failed.get_or_insert(e);
                        }
                    }
                    Err(e) => return Err(self.abandon(&parts, e)),
                }
            }
        }
        match wait_failed {
            Some(e) => Err(e),
            None => Ok(replies),
        }
    }

    /// A scattered pipeline failed half way: replies may still be due on every connection it
    /// used, so all of them are dropped, and the map is read again before the next command.
    fn abandon(&mut self, parts: &[(usize, Vec<usize>)], e: RedisError) -> RedisError {
        for (i, _) in parts {
            self.conns[*i] = None;
        }
        self.stale = true;
        e
    }

    /// `MULTI … EXEC` (or any pipeline redis-rs reads with an offset): whole to the node of
    /// its first key, resent whole when a redirection aborted it.
    fn transaction(
        &mut self,
        packed: &[u8],
        commands: &[Packed<'_>],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        let first_keyed = commands
            .iter()
            .find(|c| route_key(&c.args).is_some())
            .map(|c| c.args.as_slice());
        let route = |me: &Self| first_keyed.map_or(me.last, |args| me.route(args));
        let mut node = route(self);
        // WAIT after EXEC, on the transaction's node; its reply follows EXEC's.
        let wait = self
            .wait
            .clone()
            .filter(|_| commands.iter().any(|c| may_write(c.args[0])));
        let with_wait;
        let (bytes, read) = match &wait {
            None => (packed, count),
            Some(w) => {
                with_wait = [packed, w.packed()].concat();
                (with_wait.as_slice(), count + 1)
            }
        };
        for attempt in 1..=ATTEMPTS {
            self.last = node;
            let conn = self.node(node)?;
            let result = conn.req_packed_commands(bytes, offset, read);
            let e = match result {
                Ok(mut values) => {
                    if let Some(w) = &wait {
                        w.check(values.pop())?;
                    }
                    return Ok(values);
                }
                Err(e) => e,
            };
            let redirected = e.kind() == ErrorKind::Server(ServerErrorKind::ExecAbort)
                && e.clone().into_server_errors().is_some_and(|errors| {
                    errors.iter().any(|(_, s)| {
                        matches!(
                            s.kind(),
                            Some(
                                ServerErrorKind::Moved
                                    | ServerErrorKind::Ask
                                    | ServerErrorKind::TryAgain
                                    | ServerErrorKind::ClusterDown
                            )
                        )
                    })
                });
            if !redirected || attempt == ATTEMPTS {
                return Err(self.failed(node, e));
            }
            std::thread::sleep(BACKOFF * (attempt - 1));
            self.refresh()?;
            node = route(self);
        }
        unreachable!("the last attempt returns")
    }
}

impl ConnectionLike for ClusterConnection {
    fn req_packed_command(&mut self, cmd: &[u8]) -> RedisResult<Value> {
        let commands = parse_packed(cmd).ok_or_else(unparsable)?;
        let [command] = commands.as_slice() else {
            return Err(unparsable());
        };
        let args = &command.args;
        let name = args[0];
        let multi_key = |names: &[&[u8]]| names.iter().any(|n| name.eq_ignore_ascii_case(n));
        if multi_key(&[b"MGET", b"DEL", b"UNLINK", b"EXISTS", b"TOUCH", b"MSET"]) && args.len() > 2
        {
            let step = if name.eq_ignore_ascii_case(b"MSET") {
                2
            } else {
                1
            };
            let first = hash_slot(args[1]);
            let spans = args[1..]
                .chunks(step)
                .any(|chunk| hash_slot(chunk[0]) != first);
            if spans && (args.len() - 1) % step == 0 {
                return self.split_keys(args, step);
            }
        }
        if multi_key(&[b"KEYS", b"DBSIZE", b"FLUSHDB", b"FLUSHALL"]) {
            return self.every_primary(cmd, name);
        }
        self.single(cmd, args)
    }

    fn req_packed_commands(
        &mut self,
        cmd: &[u8],
        offset: usize,
        count: usize,
    ) -> RedisResult<Vec<Value>> {
        self.pipeline(cmd, offset, count)
    }

    fn get_db(&self) -> i64 {
        0
    }

    fn check_connection(&mut self) -> bool {
        redis::cmd("PING").query::<String>(self).is_ok()
    }

    fn is_open(&self) -> bool {
        true
    }
}

/// Reads the slot map from the first of `nodes` that answers.
fn read_topology(nodes: &[Endpoint], timeout: Duration) -> Result<Topology, ClusterError> {
    let mut reason = "no node given".to_string();
    for node in nodes {
        let mut conn = match connect(node, timeout) {
            Ok(conn) => conn,
            Err(e) => {
                reason = format!("{node}: {}", connect_reason(&e, node));
                continue;
            }
        };
        match redis::cmd("CLUSTER").arg("SLOTS").query::<Value>(&mut conn) {
            Ok(reply) => {
                return Topology::from_cluster_slots(&slots_value(&reply), node).map_err(|why| {
                    ClusterError::NotCluster {
                        node: node.clone(),
                        why,
                    }
                })
            }
            Err(e) if e.kind() == ErrorKind::Server(ServerErrorKind::ResponseError) => {
                return Err(ClusterError::NotCluster {
                    node: node.clone(),
                    why: format!(
                        "CLUSTER SLOTS answered: {} {}",
                        e.code().unwrap_or("ERR"),
                        e.detail().unwrap_or_default()
                    ),
                })
            }
            Err(e) => reason = format!("{node}: {e}"),
        }
    }
    let tried = nodes
        .iter()
        .map(Endpoint::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    Err(ClusterError::Unreachable { tried, reason })
}

/// A redis-rs reply in the form [`Topology::from_cluster_slots`] reads.
fn slots_value(v: &Value) -> slots::Value {
    match v {
        Value::Int(n) => slots::Value::Int(*n),
        Value::BulkString(b) => slots::Value::Bulk(b.clone()),
        Value::SimpleString(s) => slots::Value::Simple(s.clone()),
        Value::Okay => slots::Value::Simple("OK".into()),
        Value::Array(items) | Value::Set(items) => {
            slots::Value::Array(items.iter().map(slots_value).collect())
        }
        Value::ServerError(e) => slots::Value::Error(e.to_string()),
        _ => slots::Value::Nil,
    }
}

fn unparsable() -> RedisError {
    RedisError::from(std::io::Error::other(
        "a command the cluster client cannot read (not an array of bulk strings)",
    ))
}

/// One command of a packed request: its bytes and its arguments.
struct Packed<'a> {
    bytes: &'a [u8],
    args: Vec<&'a [u8]>,
}

/// The commands in `packed`, read with the engine's request parser; `None` unless it is
/// whole commands in RESP arrays (what redis-rs writes).
fn parse_packed(packed: &[u8]) -> Option<Vec<Packed<'_>>> {
    let mut parser = RequestParser::default();
    let mut commands = Vec::new();
    let mut pos = 0;
    while pos < packed.len() {
        let rest = &packed[pos..];
        // Inline commands would be read into the parser's own buffer, not `packed`.
        if rest[0] != b'*' {
            return None;
        }
        // The arguments as ranges of `packed`, so they outlive the parser's borrow.
        let (consumed, ranges) = {
            let request = parser.parse(rest, true).ok()??;
            let ranges: Vec<std::ops::Range<usize>> = request
                .args()
                .map(|arg| {
                    let start = arg.as_ptr() as usize - packed.as_ptr() as usize;
                    start..start + arg.len()
                })
                .collect();
            (request.consumed(), ranges)
        };
        if ranges.is_empty() {
            return None;
        }
        commands.push(Packed {
            bytes: &packed[pos..pos + consumed],
            args: ranges.into_iter().map(|r| &packed[r]).collect(),
        });
        pos += consumed;
    }
    Some(commands)
}

/// Packs arguments as one RESP command.
fn pack(args: &[&[u8]]) -> Vec<u8> {
    let mut cmd = redis::Cmd::new();
    for arg in args {
        cmd.arg(*arg);
    }
    cmd.get_packed_command()
}

/// The key a command is routed by: its first key, or `None` for a command without one.
fn route_key<'a>(args: &[&'a [u8]]) -> Option<&'a [u8]> {
    let name = args[0];
    let is = |n: &[u8]| name.eq_ignore_ascii_case(n);
    let numkeys_at = |i: usize| -> Option<&'a [u8]> {
        let n: usize = std::str::from_utf8(args.get(i)?).ok()?.parse().ok()?;
        if n == 0 {
            None
        } else {
            args.get(i + 1).copied()
        }
    };
    const KEYLESS: [&[u8]; 31] = [
        b"PING",
        b"ECHO",
        b"INFO",
        b"MULTI",
        b"EXEC",
        b"DISCARD",
        b"WAIT",
        b"CLUSTER",
        b"CONFIG",
        b"CLIENT",
        b"COMMAND",
        b"TIME",
        b"DBSIZE",
        b"FLUSHALL",
        b"FLUSHDB",
        b"KEYS",
        b"SCAN",
        b"RANDOMKEY",
        b"SCRIPT",
        b"SELECT",
        b"AUTH",
        b"HELLO",
        b"READONLY",
        b"READWRITE",
        b"ASKING",
        b"SAVE",
        b"BGSAVE",
        b"LASTSAVE",
        b"SLOWLOG",
        b"UNWATCH",
        b"PUBLISH",
    ];
    if KEYLESS.iter().any(|k| is(k)) {
        return None;
    }
    if is(b"EVAL") || is(b"EVALSHA") || is(b"EVAL_RO") || is(b"EVALSHA_RO") || is(b"FCALL") {
        return numkeys_at(2);
    }
    if is(b"ZUNION")
        || is(b"ZINTER")
        || is(b"ZDIFF")
        || is(b"ZINTERCARD")
        || is(b"SINTERCARD")
        || is(b"LMPOP")
        || is(b"ZMPOP")
    {
        return numkeys_at(1);
    }
    if is(b"BLMPOP") || is(b"BZMPOP") {
        return numkeys_at(2);
    }
    if is(b"XREAD") || is(b"XREADGROUP") {
        let at = args
            .iter()
            .position(|a| a.eq_ignore_ascii_case(b"STREAMS"))?;
        return args.get(at + 1).copied();
    }
    if is(b"BITOP") || is(b"OBJECT") || is(b"MEMORY") || is(b"XINFO") {
        return args.get(2).copied();
    }
    args.get(1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn key_of(words: &[&str]) -> Option<String> {
        let owned = args(words);
        let refs: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
        route_key(&refs).map(|k| String::from_utf8_lossy(k).into_owned())
    }

    #[test]
    fn commands_route_by_their_first_key() {
        assert_eq!(key_of(&["SET", "a", "1"]).as_deref(), Some("a"));
        assert_eq!(key_of(&["zadd", "z", "1", "m"]).as_deref(), Some("z"));
        assert_eq!(
            key_of(&["EVAL", "return 1", "2", "k1", "k2"]).as_deref(),
            Some("k1")
        );
        assert_eq!(key_of(&["EVALSHA", "abc", "0"]), None);
        assert_eq!(key_of(&["ZUNION", "2", "x", "y"]).as_deref(), Some("x"));
        assert_eq!(
            key_of(&["BZMPOP", "0", "1", "q", "MIN"]).as_deref(),
            Some("q")
        );
        assert_eq!(
            key_of(&["XREAD", "COUNT", "1", "STREAMS", "s", "0"]).as_deref(),
            Some("s")
        );
        assert_eq!(key_of(&["OBJECT", "ENCODING", "k"]).as_deref(), Some("k"));
        for keyless in ["PING", "MULTI", "EXEC", "WAIT", "DBSIZE", "KEYS", "INFO"] {
            assert_eq!(key_of(&[keyless]), None, "{keyless}");
        }
    }

    #[test]
    fn packed_pipelines_are_split_into_commands() {
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("SET")
            .arg("{t}a")
            .arg(b"x\r\ny".as_slice())
            .cmd("GET")
            .arg("{t}a");
        let packed = pipe.get_packed_pipeline();
        let commands = parse_packed(&packed).expect("redis-rs packs arrays of bulk strings");
        let names: Vec<&[u8]> = commands.iter().map(|c| c.args[0]).collect();
        assert_eq!(names, [&b"MULTI"[..], b"SET", b"GET", b"EXEC"]);
        assert_eq!(commands[1].args[2], b"x\r\ny");
        let joined: Vec<u8> = commands.iter().flat_map(|c| c.bytes.to_vec()).collect();
        assert_eq!(joined, packed);
        assert!(parse_packed(b"PING\r\n").is_none());
        assert!(parse_packed(b"*1\r\n$4\r\nPIN").is_none());
        assert!(parse_packed(b"*0\r\n").is_none());
        assert_eq!(pack(&[b"GET", b"k"]), b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n");
    }
}

//! Redis Cluster for `--cluster-mode`: hash slots, the slot map (`CLUSTER SLOTS`) and the
//! redirections (`-MOVED`, `-ASK`), as memtier_benchmark's `cluster_client.cpp` uses them.
//!
//! A key's slot is [`hash_slot`] (the engine crate's `keyslot`: CRC16 of the key or of its
//! `{hash tag}`, modulo 16384). memtier hashes only the generated part of a key and
//! skips hash tags outside `--transaction`; edgebench always follows the server's rule, so a
//! `--key-prefix "{user}:"` sends every key to the one node that owns `user`.
//!
//! The slot map is read once per run from the given server and again by a client whenever a
//! node answers `-MOVED` (memtier: `handle_moved` sets the connection to send `CLUSTER SLOTS`).
//! Invariant: every slot maps to an index of [`Topology::nodes`], or to [`UNASSIGNED`].

use std::fmt;
use std::io;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::resp::scan::scan_reply;
use crate::transport::Endpoint;

pub use crate::keyslot::{hash_slot, SLOTS};

/// A slot no master serves (its requests go to the first node, which answers
/// `-CLUSTERDOWN`: counted as an error, as memtier counts it).
pub const UNASSIGNED: u16 = u16::MAX;

/// The masters of a cluster and which one serves each slot.
#[derive(Clone, PartialEq, Eq)]
pub struct Topology {
    /// Each master once, in the order `CLUSTER SLOTS` first names them.
    pub nodes: Vec<Endpoint>,
    /// `slots[s]`: index into `nodes` of slot `s`'s master, or [`UNASSIGNED`].
    slots: Vec<u16>,
}

impl fmt::Debug for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let served = self.slots.iter().filter(|&&n| n != UNASSIGNED).count();
        f.debug_struct("Topology")
            .field("nodes", &self.nodes)
            .field("slots_served", &served)
            .finish()
    }
}

impl Topology {
    /// The index in [`Topology::nodes`] of the master serving `slot`, if any.
    pub fn node_of(&self, slot: u16) -> Option<usize> {
        match self.slots.get(usize::from(slot)) {
            Some(&n) if n != UNASSIGNED => Some(usize::from(n)),
            _ => None,
        }
    }

    /// Builds the slot map from a `CLUSTER SLOTS` reply: `[[start, end, [host, port, id, …],
    /// replica…], …]`. An empty host means "the address you asked" (Redis sends it for a node
    /// that does not know its own address), so `asked` fills it in.
    pub fn from_cluster_slots(reply: &Value, asked: &Endpoint) -> Result<Topology, String> {
        let Value::Array(ranges) = reply else {
            return Err(format!("CLUSTER SLOTS answered {reply:?}, not an array"));
        };
        let mut nodes: Vec<Endpoint> = Vec::new();
        let mut slots = vec![UNASSIGNED; SLOTS];
        for range in ranges {
            let bad = || format!("unexpected CLUSTER SLOTS entry {range:?}");
            let Value::Array(parts) = range else {
                return Err(bad());
            };
            let (Some(Value::Int(start)), Some(Value::Int(end)), Some(Value::Array(master))) =
                (parts.first(), parts.get(1), parts.get(2))
            else {
                return Err(bad());
            };
            let (Some(Value::Bulk(host)), Some(Value::Int(port))) = (master.first(), master.get(1))
            else {
                return Err(bad());
            };
            let host = match (host.as_slice(), asked) {
                (b"" | b"?", Endpoint::Tcp { host, .. }) => host.clone(),
                _ => String::from_utf8_lossy(host).into_owned(),
            };
            let port = u16::try_from(*port).map_err(|_| bad())?;
            let node = Endpoint::Tcp { host, port };
            let index = match nodes.iter().position(|n| *n == node) {
                Some(i) => i,
                None => {
                    nodes.push(node);
                    nodes.len() - 1
                }
            };
            let (start, end) = (usize::try_from(*start), usize::try_from(*end));
            let (Ok(start), Ok(end)) = (start, end) else {
                return Err(bad());
            };
            if start > end || end >= SLOTS {
                return Err(bad());
            }
            for s in &mut slots[start..=end] {
                *s = index as u16;
            }
        }
        if nodes.is_empty() {
            return Err(
                "the cluster has no slots assigned (CLUSTER SLOTS is empty): assign \
                 them first, e.g. redis-cli --cluster create … --cluster-replicas 0"
                    .to_string(),
            );
        }
        Ok(Topology { nodes, slots })
    }
}

/// A reply, fully built: only the topology query needs one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `+…` or `:…` that is not a number.
    Simple(String),
    /// `-…`.
    Error(String),
    /// `:n`.
    Int(i64),
    /// `$n`.
    Bulk(Vec<u8>),
    /// `*n` (and RESP3 sets and pushes).
    Array(Vec<Value>),
    /// A nil, or a RESP3 map (not used by `CLUSTER SLOTS`).
    Nil,
}

/// Parses the one complete reply at the start of `buf` (already framed by [`scan_reply`]).
pub(crate) fn parse(buf: &[u8], pos: &mut usize, depth: usize) -> Result<Value, String> {
    let line_end = buf[*pos..]
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|i| *pos + i)
        .ok_or("a reply line without CRLF")?;
    let tag = buf[*pos];
    let line = String::from_utf8_lossy(&buf[*pos + 1..line_end]).into_owned();
    *pos = line_end + 2;
    let number = || {
        line.parse::<i64>()
            .map_err(|_| format!("bad length {line:?}"))
    };
    Ok(match tag {
        b'+' => Value::Simple(line),
        b'-' => Value::Error(line),
        b':' => Value::Int(number()?),
        b'$' => {
            let n = number()?;
            if n < 0 {
                Value::Nil
            } else {
                let n = n as usize;
                let body = buf.get(*pos..*pos + n).ok_or("a bulk reply cut short")?;
                *pos += n + 2;
                Value::Bulk(body.to_vec())
            }
        }
        b'*' | b'~' | b'>' => {
            let n = number()?;
            if n < 0 {
                Value::Nil
            } else if depth > 8 {
                return Err("a reply nested too deep".into());
            } else {
                let mut items = Vec::with_capacity(n.min(1024) as usize);
                for _ in 0..n {
                    items.push(parse(buf, pos, depth + 1)?);
                }
                Value::Array(items)
            }
        }
        b'%' => {
            let n = number()?;
            for _ in 0..2 * n.max(0) {
                parse(buf, pos, depth + 1)?;
            }
            Value::Nil
        }
        _ => Value::Nil,
    })
}

/// Why the slot map could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// The node could not be reached or the connection broke.
    #[error("cannot read the cluster slot map from {node}: {error}")]
    Io {
        /// The node asked.
        node: Endpoint,
        /// What went wrong.
        error: io::Error,
    },
    /// The server is not a cluster node, or has no slots.
    #[error(
        "--cluster-mode: {node} is not a usable Redis Cluster node ({why}); drop \
         --cluster-mode, or give -s/-p of a node of a cluster with its slots assigned"
    )]
    NotCluster {
        /// The node asked.
        node: Endpoint,
        /// What it answered.
        why: String,
    },
}

/// Connects to `node`, sends `prelude` (AUTH, HELLO…: each reply must not be an error) and
/// `CLUSTER SLOTS`, and returns the slot map.
pub async fn discover(
    node: &Endpoint,
    prelude: &[Vec<Vec<u8>>],
) -> Result<Topology, TopologyError> {
    let io_err = |error| TopologyError::Io {
        node: node.clone(),
        error,
    };
    let Endpoint::Tcp { host, port } = node else {
        return Err(TopologyError::NotCluster {
            node: node.clone(),
            why: "a Unix socket; cluster nodes are reached over TCP".into(),
        });
    };
    let mut stream = tokio::net::TcpStream::connect((host.as_str(), *port))
        .await
        .map_err(io_err)?;
    let mut input = Vec::new();
    for cmd in prelude {
        let reply = query(&mut stream, cmd, &mut input).await.map_err(io_err)?;
        if let Value::Error(e) = reply {
            return Err(io_err(io::Error::other(format!(
                "{} failed: {e}",
                String::from_utf8_lossy(&cmd[0])
            ))));
        }
    }
    let cmd = [b"CLUSTER".to_vec(), b"SLOTS".to_vec()];
    let reply = query(&mut stream, &cmd, &mut input).await.map_err(io_err)?;
    if let Value::Error(e) = &reply {
        return Err(TopologyError::NotCluster {
            node: node.clone(),
            why: format!("CLUSTER SLOTS answered: {e}"),
        });
    }
    Topology::from_cluster_slots(&reply, node).map_err(|why| TopologyError::NotCluster {
        node: node.clone(),
        why,
    })
}

/// Sends one command and reads its whole reply.
pub async fn query<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    cmd: &[Vec<u8>],
    input: &mut Vec<u8>,
) -> io::Result<Value> {
    let mut out = Vec::new();
    crate::resp::encode::write_len(&mut out, b'*', cmd.len());
    for arg in cmd {
        crate::resp::encode::write_bulk(&mut out, arg);
    }
    stream.write_all(&out).await?;
    // A TLS stream may hold the record's tail until flushed (a no-op on plain sockets).
    stream.flush().await?;
    loop {
        let scanned =
            scan_reply(input).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        if let Some(s) = scanned {
            let mut pos = 0;
            let value = parse(&input[..s.len], &mut pos, 0)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            input.drain(..s.len);
            return Ok(value);
        }
        if stream.read_buf(input).await? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
    }
}

/// The node of a redirection's `HOST:PORT`.
pub fn node_at(addr: &str) -> Option<Endpoint> {
    let (host, port) = addr.rsplit_once(':')?;
    Some(Endpoint::Tcp {
        host: host.to_string(),
        port: port.parse().ok()?,
    })
}

/// A redirection in an error reply: `-MOVED slot host:port` or `-ASK slot host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Redirect {
    /// The slot has moved for good: refresh the slot map.
    Moved(Endpoint),
    /// The slot is migrating: ask this node once, after `ASKING`.
    Ask(Endpoint),
}

/// Reads a redirection from a whole error reply (`-MOVED 3999 127.0.0.1:6381\r\n`); `None`
/// for any other reply.
pub fn redirect(reply: &[u8]) -> Option<Redirect> {
    let text = reply.strip_prefix(b"-")?;
    let text = std::str::from_utf8(text).ok()?.trim_end();
    let mut words = text.split(' ');
    let (kind, _slot, addr) = (words.next()?, words.next()?, words.next()?);
    let node = node_at(addr)?;
    match kind {
        "MOVED" => Some(Redirect::Moved(node)),
        "ASK" => Some(Redirect::Ask(node)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redirections_are_read_from_error_replies() {
        let node = |port| Endpoint::Tcp {
            host: "127.0.0.1".into(),
            port,
        };
        assert_eq!(
            redirect(b"-MOVED 3999 127.0.0.1:6381\r\n"),
            Some(Redirect::Moved(node(6381)))
        );
        assert_eq!(
            redirect(b"-ASK 3999 127.0.0.1:6382\r\n"),
            Some(Redirect::Ask(node(6382)))
        );
        assert_eq!(redirect(b"-ERR wrong number of arguments\r\n"), None);
        assert_eq!(redirect(b"+OK\r\n"), None);
    }

    #[test]
    fn a_slot_map_is_built_from_cluster_slots() {
        let reply = b"*2\r\n*3\r\n:0\r\n:8191\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n\
                      *4\r\n:8192\r\n:16383\r\n*2\r\n$0\r\n\r\n:7001\r\n*2\r\n$9\r\n127.0.0.1\r\n:7002\r\n";
        let mut pos = 0;
        let value = parse(reply, &mut pos, 0).unwrap();
        assert_eq!(pos, reply.len());
        let asked = Endpoint::Tcp {
            host: "10.0.0.1".into(),
            port: 7000,
        };
        let t = Topology::from_cluster_slots(&value, &asked).unwrap();
        assert_eq!(
            t.nodes,
            [
                Endpoint::Tcp {
                    host: "127.0.0.1".into(),
                    port: 7000
                },
                Endpoint::Tcp {
                    host: "10.0.0.1".into(),
                    port: 7001
                }
            ]
        );
        assert_eq!(t.node_of(0), Some(0));
        assert_eq!(t.node_of(8191), Some(0));
        assert_eq!(t.node_of(8192), Some(1));
        assert_eq!(t.node_of(16383), Some(1));
        let empty = Topology::from_cluster_slots(&Value::Array(vec![]), &asked);
        assert!(empty.unwrap_err().contains("no slots assigned"));
    }
}

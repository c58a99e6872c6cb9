//! [`ConnGen`], one connection's request generator: its keys ([`KeyGen`]), its values
//! ([`DataGen`]) and its operation mix, writing each request into a reused [`RequestBuf`].
//! Built by [`crate::kv::KvConfig::conn_gen`]; owned by one connection, never shared.
//!
//! Invariants: the hot path does not allocate (keys are formatted into the caller's buffer,
//! values are slices of the run's one value buffer); the key stream and the value-size
//! stream use separate generators, so changing value sizes never changes which keys are
//! sent.

use std::sync::Arc;

use super::command::{ArbitraryCommand, CommandMix, Op, OpMix, RequestBuf, WaitMix};
use super::data::DataGen;
use super::keys::KeyGen;

/// What [`ConnGen::next_request`] put into the [`RequestBuf`], for the engine's per-type statistics
/// (memtier's Sets / Gets rows, or one row per `--command`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// `SET key value`, or `SETEX key ttl value` with `--expiry-range` (memtier's
    /// `redis_protocol::write_command_set`).
    Set,
    /// `GET key`.
    Get,
    /// `MGET key…` with this many keys (`--multi-key-get`).
    MultiGet(u32),
    /// The arbitrary command at this index of [`crate::kv::KvConfig::commands`].
    Command(usize),
    /// `WAIT replicas timeout` of `--wait-ratio` (memtier's Waits row).
    Wait,
}

/// Everything one connection needs to produce its requests: its keys, its values and its
/// operation mix. Built by [`crate::kv::KvConfig::conn_gen`]; owned by one connection,
/// never shared.
#[derive(Debug, Clone)]
pub struct ConnGen {
    pub(crate) keys: KeyGen,
    pub(crate) data: DataGen,
    pub(crate) mode: Mode,
    /// `--wait-ratio`'s WAITs, between the SET/GET mix's requests.
    pub(crate) waits: Option<WaitMix>,
}

/// SET/GET by `--ratio`, or the `--command`s by their ratios.
#[derive(Debug, Clone)]
pub(crate) enum Mode {
    SetGet(OpMix),
    Commands {
        mix: CommandMix,
        commands: Arc<[ArbitraryCommand]>,
    },
}

/// Key stream numbers of the SET/GET mode (memtier's `OBJECT_GENERATOR_KEY_SET_ITER` and
/// `_GET_ITER` keep separate sequential positions, so `S:S` sets and gets walk the range
/// side by side). In `--command` mode, stream `i` belongs to command `i`.
pub const SET_STREAM: usize = 0;
/// See [`SET_STREAM`].
pub const GET_STREAM: usize = 1;

impl ConnGen {
    /// Writes the connection's next request into `out` (cleared first) and says what it is.
    pub fn next_request(&mut self, out: &mut RequestBuf) -> RequestKind {
        out.clear();
        match &mut self.mode {
            Mode::SetGet(_) if self.waits.as_ref().is_some_and(WaitMix::due) => {
                let (replicas, timeout) = self.waits.as_mut().expect("due").next_wait();
                out.push_arg(b"WAIT");
                out.push_u64_arg(replicas);
                out.push_u64_arg(timeout);
                RequestKind::Wait
            }
            Mode::SetGet(mix) => match mix.next_op() {
                Op::Set => {
                    if let Some(w) = &mut self.waits {
                        w.count_set();
                    }
                    let expiry = self.data.next_expiry();
                    out.push_arg(if expiry.is_some() { b"SETEX" } else { b"SET" });
                    out.begin_arg();
                    let index = self.keys.next_key(SET_STREAM, out.arg_bytes());
                    out.end_arg();
                    if let Some(ttl) = expiry {
                        out.push_u64_arg(u64::from(ttl));
                    }
                    let len = self.data.next_len(index);
                    out.push_arg(self.data.value(len));
                    RequestKind::Set
                }
                Op::Get => {
                    out.push_arg(b"GET");
                    out.begin_arg();
                    self.keys.next_key(GET_STREAM, out.arg_bytes());
                    out.end_arg();
                    RequestKind::Get
                }
                Op::MultiGet(n) => {
                    out.push_arg(b"MGET");
                    for _ in 0..n {
                        out.begin_arg();
                        self.keys.next_key(GET_STREAM, out.arg_bytes());
                        out.end_arg();
                    }
                    RequestKind::MultiGet(n)
                }
            },
            Mode::Commands { mix, commands } => {
                let i = mix.next_command();
                commands[i].render(i, &mut self.keys, &mut self.data, out);
                RequestKind::Command(i)
            }
        }
    }

    /// The connection's key generator (for tests and for the engine's own key checks).
    pub fn keys(&self) -> &KeyGen {
        &self.keys
    }
}

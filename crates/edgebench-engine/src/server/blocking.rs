//! Blocking commands over RESP: BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
//! BZPOPMAX, BZMPOP, XREAD BLOCK and XREADGROUP BLOCK wait on the server.
//!
//! The engine runs these commands without waiting: when nothing is there it gives Redis's
//! timeout reply, as Redis does inside MULTI. The server runs them through the engine first;
//! when the reply is that nil (and the client is not in MULTI, where the engine queues
//! them), it parks the connection instead of replying: it registers a [`BlockedCall`] with
//! the engine, which wakes and serves it when one of its keys is written (see
//! [`crate::engine::notify`]). A parked connection runs none of its pipelined requests until
//! the call is served, times out (`*-1`, or `_` in RESP3: what Redis 7.0 sends for every
//! one of them once it blocked, BRPOPLPUSH included, though its MULTI reply is `$-1`), the
//! client leaves (the call is forgotten) or the server shuts down (the connection closes).
//!
//! XREAD's `$` means "entries added after this call": each `$` is replaced by its stream's
//! last id before the first run, so the same command run again when the stream grows
//! returns just the new entries.

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use crate::engine::cmd::{is, keys_after_numkeys, list, stream};
use crate::engine::notify::{BlockKind, BlockedCall};
use crate::engine::{Client, Engine, Key, Reply};

/// The blocking command named `name`, if it is one. Every request asks, so most names are
/// turned away by their length alone.
pub(crate) fn lookup(name: &[u8]) -> Option<BlockKind> {
    if !(5..=10).contains(&name.len()) {
        return None;
    }
    if is(name, "blpop") || is(name, "brpop") || is(name, "bzpopmin") || is(name, "bzpopmax") {
        Some(BlockKind::Pop)
    } else if is(name, "blmpop") || is(name, "bzmpop") {
        Some(BlockKind::MultiPop)
    } else if is(name, "blmove") || is(name, "brpoplpush") {
        Some(BlockKind::Move)
    } else if is(name, "xread") {
        Some(BlockKind::Read)
    } else if is(name, "xreadgroup") {
        Some(BlockKind::ReadGroup)
    } else {
        None
    }
}

/// A blocking command about to run: its keys, its timeout, and the arguments to run.
pub(crate) struct Plan {
    kind: BlockKind,
    /// 0 = forever.
    timeout_ms: u64,
    keys: Range<usize>,
    /// XREAD's arguments with each `$` resolved; `None` = the request's own.
    rewritten: Option<Vec<Vec<u8>>>,
}

impl Plan {
    /// The plan for `args` of a `kind` command run by a client of database `db`; `None`
    /// when the command will not wait (invalid arguments, XREAD without BLOCK): the engine
    /// then replies at once.
    pub(crate) fn new(engine: &Engine, db: usize, kind: BlockKind, args: &[&[u8]]) -> Option<Plan> {
        let (timeout_ms, keys) = match kind {
            BlockKind::Pop if args.len() >= 3 => {
                let (timeout, _) = args.split_last()?;
                (list::parse_timeout_secs(timeout).ok()?, 1..args.len() - 1)
            }
            // BLMOVE src dst from to timeout, BRPOPLPUSH src dst timeout.
            BlockKind::Move if args.len() == 6 || args.len() == 4 => {
                let (timeout, _) = args.split_last()?;
                (list::parse_timeout_secs(timeout).ok()?, 1..2)
            }
            // Invalid arguments after the keys are the engine's to report.
            BlockKind::MultiPop if args.len() >= 3 => (
                list::parse_timeout_secs(args[1]).ok()?,
                keys_after_numkeys(args, 2),
            ),
            BlockKind::Read | BlockKind::ReadGroup => {
                let block = stream::xread_block(args)?;
                (block.timeout_ms, block.keys)
            }
            _ => return None,
        };
        if keys.is_empty() {
            return None;
        }
        let mut plan = Plan {
            kind,
            timeout_ms,
            keys,
            rewritten: None,
        };
        if kind == BlockKind::Read {
            plan.resolve_dollar_ids(engine, db, args);
        }
        Some(plan)
    }

    /// Replaces each `$` id by its stream's last id (0-0 for a missing stream). A key of
    /// another type keeps its `$`: the run reports WRONGTYPE.
    fn resolve_dollar_ids(&mut self, engine: &Engine, db: usize, args: &[&[u8]]) {
        let streams = self.keys.len();
        for i in self.keys.clone() {
            if args.get(i + streams) != Some(&&b"$"[..]) {
                continue;
            }
            let key = args[i];
            let mut locked = engine.db(db).lock(std::iter::once(key), engine.now_ms());
            if let Ok(last) = locked.xlast_id(key) {
                let rewritten = self
                    .rewritten
                    .get_or_insert_with(|| args.iter().map(|a| a.to_vec()).collect());
                rewritten[i + streams] = last.to_string().into_bytes();
            }
        }
    }

    /// The arguments to run: the request's, or XREAD's with `$` resolved.
    pub(crate) fn args<'a>(&'a self, request: &[&'a [u8]]) -> Vec<&'a [u8]> {
        match &self.rewritten {
            Some(args) => args.iter().map(Vec::as_slice).collect(),
            None => request.to_vec(),
        }
    }

    /// The call to register once `args` (from [`Plan::args`]) got the timeout reply: per
    /// key, the non-blocking command serving it from that key alone (Redis serves a blocked
    /// client from the key that became ready, and XREAD then replies with that stream only).
    pub(crate) fn call(&self, client: &Client, args: &[&[u8]]) -> Arc<BlockedCall> {
        let owned = |parts: &[&[u8]]| parts.iter().map(|a| a.to_vec()).collect::<Vec<_>>();
        let streams = self.keys.len();
        let calls = self
            .keys
            .clone()
            .map(|i| {
                let key: Key = args[i].into();
                let call = match self.kind {
                    BlockKind::Pop => owned(&[args[0], args[i], b"0"]),
                    BlockKind::Move => {
                        let mut call = owned(&args[..args.len() - 1]);
                        call.push(b"0".to_vec());
                        call
                    }
                    // `name 0 1 key <end> [COUNT n]`: the same command on one key.
                    BlockKind::MultiPop => {
                        let mut call = owned(&[args[0], b"0", b"1", args[i]]);
                        call.extend(owned(&args[self.keys.end..]));
                        call
                    }
                    BlockKind::Read | BlockKind::ReadGroup => {
                        let mut call = owned(&args[..self.keys.start]);
                        call.push(args[i].to_vec());
                        call.push(args[i + streams].to_vec());
                        call
                    }
                };
                (key, call)
            })
            .collect();
        BlockedCall::new(client, self.kind, calls)
    }

    /// When waiting ends; `None` = never.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        if self.timeout_ms == 0 {
            return None;
        }
        Instant::now().checked_add(Duration::from_millis(self.timeout_ms))
    }
}

/// A connection's registered blocked call. Dropping it (the client left, the connection
/// task ended) unregisters the call.
pub(crate) struct Parked {
    engine: Engine,
    call: Arc<BlockedCall>,
    deadline: Option<Instant>,
}

impl Parked {
    /// Registers `call` and checks it once more (a key may have been written since the
    /// command ran): `Err(reply)` when that served it.
    pub(crate) fn new(
        engine: &Engine,
        call: Arc<BlockedCall>,
        deadline: Option<Instant>,
    ) -> Result<Parked, Reply> {
        engine.block(&call);
        let parked = Parked {
            engine: engine.clone(),
            call,
            deadline,
        };
        parked.engine.serve_blocked_call(&parked.call);
        match parked.call.take_served() {
            Some(reply) => Err(reply),
            None => Ok(parked),
        }
    }

    /// When the call times out; `None` = never.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Resolves when the call may have been served (check [`Parked::served`]).
    pub(crate) async fn woken(&self) {
        self.call.woken().await;
    }

    /// The reply, if the call was served. A wake without a reply means a key was written
    /// by someone who does not serve (an in-process caller, a command on another database):
    /// this serves the ready keys, in FIFO order, and looks again.
    pub(crate) fn served(&self) -> Option<Reply> {
        if let Some(reply) = self.call.take_served() {
            return Some(reply);
        }
        self.engine.serve_blocked(self.call.db());
        self.call.take_served()
    }

    /// Stops waiting (timeout, shutdown): the reply if the call was served meanwhile.
    pub(crate) fn unblock(&self) -> Option<Reply> {
        self.engine.unblock(&self.call)
    }
}

impl Drop for Parked {
    fn drop(&mut self) {
        self.engine.unblock(&self.call);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_blocking_commands_are_looked_up() {
        assert_eq!(lookup(b"BLPOP"), Some(BlockKind::Pop));
        assert_eq!(lookup(b"brpop"), Some(BlockKind::Pop));
        assert_eq!(lookup(b"BlMove"), Some(BlockKind::Move));
        assert_eq!(lookup(b"xread"), Some(BlockKind::Read));
        assert_eq!(lookup(b"XREADGROUP"), Some(BlockKind::ReadGroup));
        assert_eq!(lookup(b"BZPOPMIN"), Some(BlockKind::Pop));
        assert_eq!(lookup(b"bzpopmax"), Some(BlockKind::Pop));
        assert_eq!(lookup(b"brpoplpush"), Some(BlockKind::Move));
        assert_eq!(lookup(b"BLMPOP"), Some(BlockKind::MultiPop));
        assert_eq!(lookup(b"bzmpop"), Some(BlockKind::MultiPop));
        for other in [
            &b"get"[..],
            b"lpop",
            b"zpopmin",
            b"lmpop",
            b"rpoplpush",
            b"xreadgrouP2",
        ] {
            assert_eq!(lookup(other), None, "{other:?}");
        }
    }

    #[test]
    fn plans_follow_the_argument_layouts() {
        let engine = Engine::new();
        let client = engine.client();
        let args: [&[u8]; 4] = [b"BLPOP", b"a", b"b", b"1.5"];
        let plan = Plan::new(&engine, 0, BlockKind::Pop, &args).expect("a plan");
        assert_eq!((plan.timeout_ms, plan.keys.clone()), (1500, 1..3));
        assert!(plan.deadline().is_some());
        let call = plan.call(&client, &plan.args(&args));
        assert_eq!(call.db(), 0);
        // Invalid timeouts and XREAD without BLOCK do not wait.
        let args: [&[u8]; 3] = [b"BLPOP", b"a", b"x"];
        assert!(Plan::new(&engine, 0, BlockKind::Pop, &args).is_none());
        let args: [&[u8]; 4] = [b"XREAD", b"STREAMS", b"s", b"$"];
        assert!(Plan::new(&engine, 0, BlockKind::Read, &args).is_none());
        let args: [&[u8]; 6] = [b"XREAD", b"BLOCK", b"0", b"STREAMS", b"s", b"$"];
        let plan = Plan::new(&engine, 0, BlockKind::Read, &args).expect("a plan");
        assert_eq!(plan.deadline(), None);
        assert_eq!(plan.args(&args)[5], b"0-0");
        // BLMPOP: the keys counted after the timeout; huge counts stop at the arguments.
        let args: [&[u8]; 7] = [b"BLMPOP", b"2", b"2", b"a", b"b", b"LEFT", b"COUNT"];
        let plan = Plan::new(&engine, 0, BlockKind::MultiPop, &args).expect("a plan");
        assert_eq!((plan.timeout_ms, plan.keys.clone()), (2000, 3..5));
        let args: [&[u8]; 5] = [b"BZMPOP", b"0", b"99999999999", b"a", b"MIN"];
        let plan = Plan::new(&engine, 0, BlockKind::MultiPop, &args).expect("a plan");
        assert_eq!(plan.keys, 3..5);
        let args: [&[u8]; 4] = [b"BRPOPLPUSH", b"a", b"b", b"0.5"];
        let plan = Plan::new(&engine, 0, BlockKind::Move, &args).expect("a plan");
        assert_eq!((plan.timeout_ms, plan.keys.clone()), (500, 1..2));
    }
}

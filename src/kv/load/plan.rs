//! What the run hands each driver: a [`ConnPlan`] per connection (its number, generator,
//! `-n` share and connect sequence) and the [`Stop`] flags every connection polls, with
//! [`fail`], which records the first failure and stops them all.
//!
//! Invariant: a connection stops sending on Ctrl-C, on another connection's failure, at its
//! `-n` share or at the `--test-time` deadline, whichever comes first.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::kv::conn_gen::ConnGen;
use crate::kv::options::{KvConfig, Protocol};

/// When to stop sending: Ctrl-C (the caller's flag) or a failed connection (the run's own).
#[derive(Debug, Clone, Default)]
pub(super) struct Stop {
    pub(super) interrupted: Arc<AtomicBool>,
    pub(super) failed: Arc<AtomicBool>,
}

impl Stop {
    pub(super) fn load(&self, order: Ordering) -> bool {
        self.interrupted.load(order) || self.failed.load(order)
    }
}

/// One connection's number, generator and `-n` share (`None`: until the deadline), and what
/// it sends before the load (HELLO 3, AUTH, SELECT: memtier's connect sequence).
pub(super) struct ConnPlan {
    pub(super) index: u64,
    pub(super) gen: ConnGen,
    pub(super) limit: Option<u64>,
    pub(super) prelude: Arc<Vec<Vec<Vec<u8>>>>,
}

/// The commands every connection sends once before its first request, in memtier's order
/// (`send_conn_setup_commands`): AUTH, SELECT, then HELLO, because Redis refuses HELLO from a
/// client that has not authenticated yet. Without `-a`, the target's own credentials
/// (`rediss://USER:PASSWORD@…`, `redis-tcp?user=…`) are the AUTH.
pub(super) fn prelude(
    cfg: &KvConfig,
    target: Option<&crate::transport::Credentials>,
) -> Vec<Vec<Vec<u8>>> {
    let mut cmds = Vec::new();
    if let (None, Some(credentials)) = (&cfg.authenticate, target) {
        let mut cmd = vec![b"AUTH".to_vec()];
        if let Some(user) = &credentials.user {
            cmd.push(user.as_bytes().to_vec());
        }
        cmd.push(credentials.password.as_bytes().to_vec());
        cmds.push(cmd);
    }
    if let Some(credentials) = &cfg.authenticate {
        // memtier: "USER:PASSWORD" authenticates an ACL user, anything else is a password.
        let mut cmd = vec![b"AUTH".to_vec()];
        match credentials.split_once(':') {
            Some((user, pass)) if !user.is_empty() => {
                cmd.push(user.as_bytes().to_vec());
                cmd.push(pass.as_bytes().to_vec());
            }
            _ => cmd.push(credentials.as_bytes().to_vec()),
        }
        cmds.push(cmd);
    }
    if cfg.select_db != 0 {
        cmds.push(vec![
            b"SELECT".to_vec(),
            cfg.select_db.to_string().into_bytes(),
        ]);
    }
    match cfg.protocol {
        Protocol::Resp3 => cmds.push(vec![b"HELLO".to_vec(), b"3".to_vec()]),
        Protocol::Resp2 => cmds.push(vec![b"HELLO".to_vec(), b"2".to_vec()]),
        Protocol::Redis => {}
    }
    cmds
}

impl ConnPlan {
    pub(super) fn may_send(&self, sent: u64, deadline: Option<Instant>, stop: &Stop) -> bool {
        !stop.load(Ordering::Relaxed)
            && self.limit.is_none_or(|l| sent < l)
            && deadline.is_none_or(|d| Instant::now() < d)
    }
}

/// Records the first failure and stops every connection.
pub(super) fn fail(why: &Mutex<Option<String>>, stop: &Stop, reason: String) {
    why.lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert(reason);
    stop.failed.store(true, Ordering::Relaxed);
}

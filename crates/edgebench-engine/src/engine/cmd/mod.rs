//! The command table and dispatch: one file per command family, each exporting
//! `COMMANDS: &[Spec]`.
//!
//! A [`Spec`] says what Redis's command table says: the name, the arity (positive = exactly,
//! negative = at least, counting the name), which arguments are keys (so [`execute`] locks
//! exactly their shards before `run`), and whether the command writes. `run` parses the
//! arguments, calls typed operations on [`Locked`](crate::engine::Locked) and returns the
//! reply; a `CmdError` becomes the error reply with Redis's exact text.

pub mod bits;
pub mod dump;
pub mod geo;
pub mod hash;
pub mod hll;
pub mod keys;
pub mod list;
pub mod object;
pub(crate) mod propagate;
#[cfg(feature = "scripting")]
pub mod script;
pub mod server;
pub mod set;
pub mod sort;
pub mod stream;
pub mod strings;
pub mod tx;
pub mod zset;

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::OnceLock;
use std::time::Duration;

use super::acl::{self, log::Context};
use super::client::Client;
use super::error::CmdError;
use super::handle::{Engine, EngineClock};
use super::keyspace::Locked;
use crate::resp::reply::Reply;

/// Commands format doubles as replies carry them (INCRBYFLOAT, ZSCORE in RESP2...).
pub use crate::resp::format_f64;

/// Which arguments of a command are keys.
#[derive(Debug, Clone, Copy)]
pub enum KeySpec {
    /// No key (PING, CLIENT, ...).
    None,
    /// Keys at `first`, `first + step`, ... up to `last` (negative counts from the end: -1 is
    /// the last argument), as in Redis's legacy key specs. Index 0 is the command name.
    Range {
        /// First key index.
        first: usize,
        /// Last key index; negative from the end.
        last: isize,
        /// Distance between keys (2 for MSET key value key value).
        step: usize,
    },
    /// The whole database (KEYS, SCAN, FLUSHDB, DBSIZE, RANDOMKEY).
    All,
    /// Computed from the arguments (ZUNIONSTORE's numkeys, XREAD's STREAMS, ...): returns
    /// the key arguments' indices.
    Custom(fn(&[&[u8]]) -> Vec<usize>),
    /// Like [`KeySpec::Custom`], and `true` with them when the command locks the whole
    /// database: for a command whose further keys come from values (SORT's BY and GET
    /// patterns), known only while it runs.
    CustomOrAll(fn(&[&[u8]]) -> KeysOrAll),
}

/// What a [`KeySpec::CustomOrAll`] function returns: the key arguments' indices, and
/// whether the command locks its whole database.
pub type KeysOrAll = (Vec<usize>, bool);

/// A command-table entry.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// Lowercase name.
    pub name: &'static str,
    /// Redis arity: `n` exactly n arguments (with the name), `-n` at least n.
    pub arity: i32,
    /// Which arguments are keys.
    pub keys: KeySpec,
    /// Whether it may modify the keyspace (COMMAND INFO's `write` flag).
    pub write: bool,
    /// Runs the command.
    pub run: fn(&mut Ctx<'_, '_>, &[&[u8]]) -> Result<Reply, CmdError>,
}

/// The key spec of commands whose only key is the first argument.
pub const ONE_KEY: KeySpec = KeySpec::Range {
    first: 1,
    last: 1,
    step: 1,
};

/// The key spec of commands whose first two arguments are keys (RENAME, LMOVE, ...).
pub const TWO_KEYS: KeySpec = KeySpec::Range {
    first: 1,
    last: 2,
    step: 1,
};

/// The key spec of commands whose every argument is a key (DEL, EXISTS, SINTER, ...).
pub const ALL_ARGS: KeySpec = KeySpec::Range {
    first: 1,
    last: -1,
    step: 1,
};

/// The keys of a `numkeys key [key ...]` command (ZUNION, LMPOP, SINTERCARD, ...) whose
/// count is argument `at`: at most the arguments there are, so a huge or bad count locks
/// nothing it was not given (the command then reports the error).
pub fn keys_after_numkeys(args: &[&[u8]], at: usize) -> std::ops::Range<usize> {
    let first = at + 1;
    let given = args.len().saturating_sub(first);
    let n = args
        .get(at)
        .and_then(|a| parse_i64(a).ok())
        .and_then(|n| usize::try_from(n).ok())
        .unwrap_or(0)
        .min(given);
    first..first + n
}

/// A table entry, positionally (the families' tables read best one line per command).
pub const fn spec(
    name: &'static str,
    arity: i32,
    keys: KeySpec,
    write: bool,
    run: fn(&mut Ctx<'_, '_>, &[&[u8]]) -> Result<Reply, CmdError>,
) -> Spec {
    Spec {
        name,
        arity,
        keys,
        write,
        run,
    }
}

impl Spec {
    /// The indices of the key arguments in `args`.
    pub fn key_indices(&self, args: &[&[u8]]) -> Vec<usize> {
        match self.keys {
            KeySpec::None | KeySpec::All => Vec::new(),
            KeySpec::Range { first, last, step } => {
                range_positions(args.len(), first, last, step).collect()
            }
            KeySpec::Custom(f) => f(args).into_iter().filter(|&i| i < args.len()).collect(),
            KeySpec::CustomOrAll(f) => f(args).0.into_iter().filter(|&i| i < args.len()).collect(),
        }
    }

    /// Whether this request locks its whole database.
    pub fn locks_all(&self, args: &[&[u8]]) -> bool {
        match self.keys {
            KeySpec::All => true,
            KeySpec::CustomOrAll(f) => f(args).1,
            _ => false,
        }
    }
}

/// The key positions of a [`KeySpec::Range`] in a request of `argc` arguments.
fn range_positions(
    argc: usize,
    first: usize,
    last: isize,
    step: usize,
) -> impl Iterator<Item = usize> {
    let last = if last < 0 { argc as isize + last } else { last };
    // An empty range when the request ends before `first`.
    let end = if last < first as isize {
        first
    } else {
        (last as usize + 1).min(argc).max(first)
    };
    (first..end).step_by(step.max(1))
}

/// What a running command sees.
pub struct Ctx<'e, 'l> {
    /// The engine (for INFO, the clock, other databases).
    pub engine: &'e Engine,
    /// The calling client.
    pub client: &'e mut Client,
    /// The shards the command holds.
    pub ks: Locked<'l>,
}

/// The command table: every spec once, and each name's position in it. The position is a
/// command's index into per-command arrays (INFO commandstats' call counters), so counting a
/// call is an array access rather than a second hash lookup.
struct Table {
    specs: Vec<&'static Spec>,
    by_name: NameIndex,
}

/// Command names to their position in [`Table::specs`], looked up by the request's bytes
/// in any case: no lowercase copy, no UTF-8 check, a short hash of the bytes and one
/// case-insensitive compare (every request of every client pays for this lookup).
///
/// Open addressing over a fixed set of names, filled once: slots hold `position + 1` (0 is
/// empty), the table is at least four times the number of names, so probe runs stay short,
/// and since nothing is inserted after the build no request can make them longer.
struct NameIndex {
    slots: Box<[u16]>,
    mask: usize,
}

impl NameIndex {
    fn new(names: &[&'static str]) -> NameIndex {
        let size = (names.len() * 4).next_power_of_two().max(16);
        let mut index = NameIndex {
            slots: vec![0; size].into_boxed_slice(),
            mask: size - 1,
        };
        for (position, name) in names.iter().enumerate() {
            let mut slot = Self::hash(name.as_bytes()) & index.mask;
            while index.slots[slot] != 0 {
                slot = (slot + 1) & index.mask;
            }
            index.slots[slot] = u16::try_from(position + 1).expect("fewer than 65,535 commands");
        }
        index
    }

    /// FNV-1a over the bytes with bit 5 set, so `GET`, `get` and `GeT` hash alike (it also
    /// folds some non-letters together, which the compare then tells apart).
    fn hash(name: &[u8]) -> usize {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in name {
            h = (h ^ u64::from(b | 0x20)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        h as usize
    }

    fn get(&self, specs: &[&'static Spec], name: &[u8]) -> Option<usize> {
        let mut slot = Self::hash(name) & self.mask;
        loop {
            let position = usize::from(self.slots[slot]).checked_sub(1)?;
            if specs[position].name.as_bytes().eq_ignore_ascii_case(name) {
                return Some(position);
            }
            slot = (slot + 1) & self.mask;
        }
    }
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let families: &[&'static [Spec]] = &[
            strings::COMMANDS,
            bits::COMMANDS,
            hll::COMMANDS,
            keys::COMMANDS,
            hash::COMMANDS,
            set::COMMANDS,
            zset::COMMANDS,
            geo::COMMANDS,
            list::COMMANDS,
            stream::COMMANDS,
            server::COMMANDS,
            tx::COMMANDS,
            object::COMMANDS,
            dump::COMMANDS,
            sort::COMMANDS,
            #[cfg(feature = "scripting")]
            script::COMMANDS,
        ];
        let mut specs: Vec<&'static Spec> = Vec::new();
        let mut first: HashMap<&'static str, usize> = HashMap::new();
        for spec in families.iter().flat_map(|f| f.iter()) {
            // A name listed twice keeps its last spec, as the name → spec map always did.
            match first.get(spec.name) {
                Some(&i) => specs[i] = spec,
                None => {
                    first.insert(spec.name, specs.len());
                    specs.push(spec);
                }
            }
        }
        let names: Vec<&'static str> = specs.iter().map(|spec| spec.name).collect();
        let by_name = NameIndex::new(&names);
        Table { specs, by_name }
    })
}

/// Every command in the table (COMMAND, COMMAND COUNT), in table order: the `n`th is the
/// command whose index [`lookup_indexed`] gives as `n`.
pub fn all_commands() -> impl Iterator<Item = &'static Spec> {
    table().specs.iter().copied()
}

/// The spec at `index` in [`all_commands`].
pub(crate) fn spec_at(index: usize) -> Option<&'static Spec> {
    table().specs.get(index).copied()
}

/// The spec of a command name, any case.
pub fn lookup(name: &[u8]) -> Option<&'static Spec> {
    lookup_indexed(name).map(|(_, spec)| spec)
}

/// The spec of a command name, any case, with its index in [`all_commands`].
pub(crate) fn lookup_indexed(name: &[u8]) -> Option<(usize, &'static Spec)> {
    let table = table();
    let i = table.by_name.get(&table.specs, name)?;
    Some((i, table.specs[i]))
}

pub(crate) fn arity_ok(arity: i32, argc: usize) -> bool {
    if arity >= 0 {
        argc == arity as usize
    } else {
        argc >= arity.unsigned_abs() as usize
    }
}

/// Redis's reply to a command it does not know.
pub fn unknown_command(args: &[&[u8]]) -> Reply {
    let name = String::from_utf8_lossy(&args[0][..args[0].len().min(128)]).into_owned();
    let mut rest = String::new();
    for a in &args[1..] {
        if rest.len() >= 128 {
            break;
        }
        let room = 128 - rest.len();
        let a = String::from_utf8_lossy(&a[..a.len().min(room)]).into_owned();
        rest.push('\'');
        rest.push_str(&a);
        rest.push_str("' ");
    }
    Reply::Error(format!("ERR unknown command '{name}', with args beginning with: {rest}").into())
}

/// Executes one command (see [`Engine::execute`]).
pub fn execute(engine: &Engine, client: &mut Client, args: &[&[u8]]) -> Reply {
    engine.inner().stats.commands.incr();
    if args.is_empty() {
        return Reply::err("ERR empty command");
    }
    let Some((index, spec)) = lookup_indexed(args[0]) else {
        if client.in_multi() {
            client.multi_dirty = true;
        }
        let reply = unknown_command(args);
        count_error(engine, &reply, None, true);
        return reply;
    };
    if !arity_ok(spec.arity, args.len()) {
        let arity = CmdError::Arity(spec.name.to_string()).into();
        return reject(engine, index, client, arity, Origin::Formatted);
    }
    // Redis checks authentication after the command's name and arity.
    if !client.authenticated
        && !server::runs_before_auth(spec)
        && engine.inner().server.requires_auth()
    {
        return reject(
            engine,
            index,
            client,
            Reply::err(server::NOAUTH),
            Origin::Shared,
        );
    }
    // ACL: a user with every permission pays one relaxed load and this branch.
    if client.acl_restricted() {
        let context = if client.in_multi() {
            Context::Multi
        } else {
            Context::Toplevel
        };
        if let Some((denied, id)) = acl::refusal(engine, client, index, args, context) {
            let name = &acl::catalog::Catalog::get().names[id];
            let noperm = Reply::Error(acl::noperm_text(denied, name).into());
            return reject(engine, index, client, noperm, Origin::Formatted);
        }
    }
    // Over `maxmemory`: keys go by the policy first; if that cannot make room, a command
    // that may grow memory is refused (Redis's `denyoom`). With `min-replicas-to-write`
    // asking for replicas the engine does not have, a write is refused. Both by the
    // command's Redis flags, looked up only when one of the two holds.
    let room = client.room.take().unwrap_or_else(|| engine.make_room());
    client.over_maxmemory = !room;
    let replicas = !engine.inner().server.replicas_lacking();
    if !room || !replicas {
        if let Some(refused) = refused_by_state(engine, client, spec, args, room, replicas) {
            return reject(engine, index, client, refused, Origin::Shared);
        }
    }
    // While a script runs, wait for it (or get BUSY) here rather than on its locks: one
    // relaxed load when none runs (see `script::gate`).
    #[cfg(feature = "scripting")]
    if !engine.inner().scripting.gate.quiet() {
        if let Some(busy) = script::wait_for_script(engine, spec, args) {
            return reject(engine, index, client, busy, Origin::Shared);
        }
    }
    // Redis's `no-multi` commands: refused while queuing, which dooms the transaction.
    if client.in_multi() && matches!(spec.name, "save" | "shutdown") {
        let refused = Reply::err("ERR Command not allowed inside a transaction");
        return reject(engine, index, client, refused, Origin::Formatted);
    }
    if client.in_multi() && !tx::runs_inside_multi(spec) {
        if let Some(queue) = client.multi.as_mut() {
            queue.push(args.iter().map(|a| a.to_vec()).collect());
        }
        client.publish_state();
        return Reply::queued();
    }
    engine.inner().server.count_call(index);
    note_command(client, index, args);
    run(engine, client, index, spec, args)
}

/// Counts an error reply in INFO's errorstats and, for a known command, in its
/// commandstats (`rejected_calls` if it never ran, else `failed_calls`). Not an error: nothing.
pub(crate) fn count_error(engine: &Engine, reply: &Reply, index: Option<usize>, rejected: bool) {
    if let Reply::Error(text) = reply {
        engine.inner().server.count_error(text, index, rejected);
    }
}

/// Where a refusal's text comes from, which decides how EXECABORT quotes it: Redis's
/// `rejectCommand` passes a shared error (`BUSY …`, `NOAUTH …`) whole, and
/// `rejectCommandFormat` a message that only its plain reply prefixes with `ERR`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    Shared,
    Formatted,
}

/// A known command refused before it runs (Redis's `rejectCommand`): inside MULTI it dooms
/// the transaction, and a refused EXEC ends the transaction with EXECABORT naming why (so an
/// EXEC that meets a busy script runs nothing and leaves MULTI).
fn reject(
    engine: &Engine,
    index: usize,
    client: &mut Client,
    reply: Reply,
    origin: Origin,
) -> Reply {
    // Counted in INFO: the command's `rejected_calls`, its error code.
    count_error(engine, &reply, Some(index), true);
    let Some(spec) = spec_at(index) else {
        return reply;
    };
    if !client.in_multi() {
        return reply;
    }
    if spec.name != "exec" {
        client.multi_dirty = true;
        return reply;
    }
    client.multi = None;
    client.multi_dirty = false;
    client.watched.clear();
    client.publish_state();
    match reply {
        Reply::Error(why) => {
            let why = match origin {
                Origin::Formatted => why.strip_prefix("ERR ").unwrap_or(&why),
                Origin::Shared => &why,
            };
            Reply::Error(format!("EXECABORT Transaction discarded because of: {why}").into())
        }
        other => other,
    }
}

/// Publishes which command the client runs (CLIENT LIST's `cmd`): one relaxed store, and a
/// lock only for commands with subcommands (`client|list`), which are rare.
fn note_command(client: &Client, index: usize, args: &[&[u8]]) {
    let shared = &client.shared;
    shared
        .last_command
        .store(u32::try_from(index).unwrap_or(u32::MAX), Ordering::Relaxed);
    if args.len() > 1 && server::has_subcommands(index) {
        let sub = String::from_utf8_lossy(&args[1][..args[1].len().min(64)]).to_lowercase();
        *shared
            .last_subcommand
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(sub);
    }
}

/// When a command starts, for the slow log, as time since the Unix epoch: `None` unless the
/// slow log or the latency monitor is on. Wall-clock time, as Redis's `ustime()`: a clock
/// step makes one duration wrong (a backwards step reads as 0), never the log's order. Kept
/// as a `Duration` so that the command's `now` and the slow log's check reuse it without
/// converting the clock reading again.
pub(crate) fn command_timer(engine: &Engine) -> Option<Duration> {
    let server = &engine.inner().server;
    (server.slowlog.timing() || server.histograms.on()).then(server::slowlog::since_epoch)
}

/// What every command that ran leaves behind: a slow log entry or latency sample if it
/// was slow, a line for the monitors if there are any, and the client's published state.
pub(crate) fn observe(
    engine: &Engine,
    client: &Client,
    index: usize,
    args: &[&[u8]],
    started: Option<Duration>,
    now_ms: u64,
) {
    let server = &engine.inner().server;
    if let Some(started) = started {
        if server.histograms.on() {
            // Timed exactly for the histogram; the slow log reads the same figure.
            let took = server::slowlog::since_epoch().saturating_sub(started);
            server.histograms.record(index, args, took);
            server.slowlog.record(client, args, took);
        } else if let Some(took) = server.slowlog.duration_if_slow(started) {
            server.slowlog.record(client, args, took);
        }
    }
    engine.feed_monitors(client, args);
    client
        .shared
        .last_interaction_ms
        .store(now_ms, Ordering::Relaxed);
    client.publish_state();
}

/// CLIENT TRACKING: after a read-only command, its keys are remembered for the client (as
/// Redis's `trackingRememberKeys`); after a script that called a read-only command, the
/// script's declared keys (EVAL_RO and FCALL_RO count only through what they call). Under
/// the command's locks, so no write slips between the read and the remembering.
pub(crate) fn remember_reads(ctx: &mut Ctx<'_, '_>, spec: &Spec, args: &[&[u8]], container: bool) {
    let read = if container {
        std::mem::take(&mut ctx.client.script_read)
    } else {
        is_readonly(spec)
    };
    if read && ctx.client.remembers_reads() {
        let keys = if container {
            script_keys(args)
        } else {
            spec.key_indices(args)
        };
        ctx.engine
            .tracking()
            .remember(ctx.client.id, keys.iter().map(|&i| args[i]));
    }
}

/// The declared keys of EVAL / EVALSHA / FCALL and their _RO forms (`name script|fn
/// numkeys key...`); none for EXEC. Their specs lock as the script goes, so they declare
/// no key positions of their own.
fn script_keys(args: &[&[u8]]) -> Vec<usize> {
    let n = args
        .get(2)
        .and_then(|a| std::str::from_utf8(a).ok())
        .and_then(|a| a.parse::<usize>().ok())
        .unwrap_or(0);
    (3..args.len().min(3usize.saturating_add(n))).collect()
}

/// Redis's reply to a command that may grow memory while memory is over `maxmemory`.
pub(crate) const OOM: &str = "OOM command not allowed when used memory > 'maxmemory'.";

/// Redis's reply to a write while `min-replicas-to-write` wants more replicas than there are.
pub(crate) const NOREPLICAS: &str = "NOREPLICAS Not enough good replicas to write.";

/// The refusal Redis's `processCommand` gives a request for the server's state: over
/// `maxmemory` (`room` false), a command that may grow memory, and inside MULTI any command
/// but those ending the transaction (queuing takes memory too); short of replicas
/// (`replicas` false), a write.
fn refused_by_state(
    engine: &Engine,
    client: &Client,
    spec: &Spec,
    args: &[&[u8]],
    room: bool,
    replicas: bool,
) -> Option<Reply> {
    let flags = request_flags(engine, client, spec, args);
    let queuing = client.in_multi() && !matches!(spec.name, "exec" | "discard" | "quit" | "reset");
    if !room && (flags.denyoom || queuing) {
        return Some(Reply::err(OOM));
    }
    if !replicas && flags.write {
        return Some(Reply::err(NOREPLICAS));
    }
    None
}

/// The Redis command flags the server's state refuses by.
#[derive(Debug, Clone, Copy, Default)]
struct StateFlags {
    /// `denyoom`: may grow memory.
    denyoom: bool,
    /// `write`: may change the keyspace.
    write: bool,
}

/// The flags of a request as Redis's `getCommandFlags` gives them: the (sub)command's own;
/// for a script that declared flags, what they say; for EXEC, those of every queued command.
fn request_flags(engine: &Engine, client: &Client, spec: &Spec, args: &[&[u8]]) -> StateFlags {
    if spec.name == "exec" {
        let queued = client.multi.iter().flatten();
        return queued.fold(StateFlags::default(), |all, command| {
            let argv: Vec<&[u8]> = command.iter().map(Vec::as_slice).collect();
            let one = argv
                .first()
                .and_then(|name| lookup(name))
                .filter(|queued| queued.name != "exec")
                .map(|queued| request_flags(engine, client, queued, &argv))
                .unwrap_or_default();
            StateFlags {
                denyoom: all.denyoom || one.denyoom,
                write: all.write || one.write,
            }
        });
    }
    #[cfg(feature = "scripting")]
    if let Some(declared) = script::declared_flags(engine, spec, args) {
        return StateFlags {
            denyoom: !(declared.no_writes || declared.allow_oom),
            write: !declared.no_writes,
        };
    }
    #[cfg(not(feature = "scripting"))]
    let _ = engine;
    let meta = server::meta::lookup_request(args);
    StateFlags {
        denyoom: meta.is_some_and(|m| m.has_flag("denyoom")),
        write: meta.is_some_and(|m| m.has_flag("write")),
    }
}

/// Whether `spec` has Redis's `readonly` flag (what client-side caching remembers).
pub(crate) fn is_readonly(spec: &Spec) -> bool {
    server::meta::lookup(spec.name.as_bytes()).is_some_and(|m| m.has_flag("readonly"))
}

/// Locks what `spec` declares and runs it; `index` is its place in [`all_commands`].
pub(crate) fn run(
    engine: &Engine,
    client: &mut Client,
    index: usize,
    spec: &Spec,
    args: &[&[u8]],
) -> Reply {
    let db = engine.db(client.db);
    // One clock read serves both the slow log's start and, on the system clock, the
    // command's time (Redis also times commands with the wall clock).
    let started = command_timer(engine);
    let now = match (started, &engine.inner().clock) {
        (Some(t), EngineClock::System) => t.as_millis() as u64,
        _ => engine.now_ms(),
    };
    let ks = match spec.keys {
        KeySpec::All => db.lock_all(now),
        KeySpec::None => db.lock_indices(&[], now),
        // The common case, without collecting the positions first.
        KeySpec::Range { first, last, step } => db.lock(
            range_positions(args.len(), first, last, step).map(|i| args[i]),
            now,
        ),
        KeySpec::CustomOrAll(_) if spec.locks_all(args) => db.lock_all(now),
        KeySpec::Custom(_) | KeySpec::CustomOrAll(_) => {
            let idx = spec.key_indices(args);
            db.lock(idx.iter().map(|&i| args[i]), now)
        }
    };
    let mut ctx = Ctx { engine, client, ks };
    let container = propagate::is_container(spec);
    if container {
        ctx.client.prop_hold += 1;
    }
    let mark = propagate::mark();
    let reply = (spec.run)(&mut ctx, args).unwrap_or_else(Reply::from);
    if std::mem::take(&mut ctx.client.error_counted) {
        engine.inner().server.count_failed(index);
    } else if reply.is_error() {
        count_error(engine, &reply, Some(index), false);
    }
    if container {
        ctx.client.prop_hold -= 1;
    }
    propagate::after(&mut ctx, spec, args, &reply, mark);
    if ctx.client.tracking_reads {
        remember_reads(&mut ctx, spec, args, container);
    }
    drop(ctx);
    observe(engine, client, index, args, started, now);
    reply
}

// ---- argument parsing shared by the families ----

/// Parses a Redis integer argument (`ERR value is not an integer or out of range`).
pub fn parse_i64(arg: &[u8]) -> Result<i64, CmdError> {
    std::str::from_utf8(arg)
        .ok()
        // Redis's string2ll: no sign but '-', no leading zeros, no "-0".
        .filter(|s| {
            !s.starts_with('+') && (s.len() == 1 || !s.starts_with('0')) && !s.starts_with("-0")
        })
        .and_then(|s| s.parse::<i64>().ok())
        .ok_or(CmdError::NotInteger)
}

/// Parses a Redis float argument as Redis's `string2d` does (`strtod` of the whole argument):
/// decimal or hexadecimal (`0x1p-2`), `inf`/`infinity` with a sign; not NaN, not leading or
/// trailing spaces, and not a value that overflows to infinity or underflows to zero (C's
/// ERANGE), which Redis rejects.
pub fn parse_f64(arg: &[u8]) -> Result<f64, CmdError> {
    let s = std::str::from_utf8(arg).map_err(|_| CmdError::NotFloat)?;
    // Rust's parser reads C's decimal and inf/infinity/nan forms (any case), correctly
    // rounded; strtod's hexadecimal form takes the slow path.
    let v = match s.parse::<f64>() {
        Ok(v) => {
            let body = s.trim_start_matches(['+', '-']);
            let literal_inf =
                body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity");
            let mantissa = body.split(['e', 'E']).next().unwrap_or("");
            let overflow = v.is_infinite() && !literal_inf;
            let underflow = v == 0.0 && mantissa.bytes().any(|c| matches!(c, b'1'..=b'9'));
            if v.is_nan() || overflow || underflow {
                return Err(CmdError::NotFloat);
            }
            v
        }
        // Rejects overflow and underflow itself.
        Err(_) => strings::cfloat::parse_c_double(arg).ok_or(CmdError::NotFloat)?,
    };
    Ok(v)
}

/// Case-insensitive comparison of an argument with an ASCII keyword.
pub fn is(arg: &[u8], keyword: &str) -> bool {
    arg.eq_ignore_ascii_case(keyword.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_found_by_its_name_in_any_case_and_nothing_else_is() {
        let specs: Vec<&Spec> = all_commands().collect();
        assert!(specs.len() > 200);
        for (i, spec) in specs.iter().enumerate() {
            let upper = spec.name.to_ascii_uppercase();
            let mixed: String = spec
                .name
                .chars()
                .enumerate()
                .map(|(j, c)| {
                    if j % 2 == 0 {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    }
                })
                .collect();
            for name in [spec.name, upper.as_str(), mixed.as_str()] {
                let (found, found_spec) = lookup_indexed(name.as_bytes()).unwrap();
                assert_eq!((found, found_spec.name), (i, spec.name), "{name}");
            }
            // One byte more, or a byte that only bit 5 tells apart: not a command.
            let longer = format!("{}\x01", spec.name);
            assert!(lookup(longer.as_bytes()).is_none(), "{longer}");
            let mut folded = spec.name.as_bytes().to_vec();
            if let Some(b) = folded.iter_mut().find(|b| **b == b'_' || **b == b'-') {
                *b ^= 0x20;
                assert!(
                    lookup(&folded).is_none(),
                    "{:?}",
                    String::from_utf8_lossy(&folded)
                );
            }
        }
        for junk in [&b""[..], b"\0", b"\xff\xfe", b"GET\0", &[b'g'; 4096]] {
            assert!(lookup(junk).is_none(), "{junk:?}");
        }
    }

    #[test]
    fn integers_parse_like_redis() {
        assert_eq!(parse_i64(b"42"), Ok(42));
        assert_eq!(parse_i64(b"-7"), Ok(-7));
        assert_eq!(parse_i64(b"0"), Ok(0));
        for bad in [
            &b"+1"[..],
            b"01",
            b"1.0",
            b"",
            b" 1",
            b"-0",
            b"9223372036854775808",
        ] {
            assert_eq!(parse_i64(bad), Err(CmdError::NotInteger), "{bad:?}");
        }
    }

    #[test]
    fn unknown_command_text_is_redis_7s() {
        assert_eq!(
            unknown_command(&[b"FOO", b"a", b"b"]),
            Reply::err("ERR unknown command 'FOO', with args beginning with: 'a' 'b' ")
        );
        assert_eq!(
            unknown_command(&[b"foo"]),
            Reply::err("ERR unknown command 'foo', with args beginning with: ")
        );
    }

    #[test]
    fn numkeys_key_specs_stop_at_the_arguments_given() {
        let args: [&[u8]; 5] = [b"zunion", b"2", b"a", b"b", b"WITHSCORES"];
        assert_eq!(keys_after_numkeys(&args, 1), 2..4);
        let huge: [&[u8]; 3] = [b"lmpop", b"9223372036854775807", b"a"];
        assert_eq!(keys_after_numkeys(&huge, 1), 2..3);
        for bad in [&b"-1"[..], b"x", b"0"] {
            let args: [&[u8]; 3] = [b"zunion", bad, b"a"];
            assert!(keys_after_numkeys(&args, 1).is_empty(), "{bad:?}");
        }
        let short: [&[u8]; 2] = [b"blmpop", b"0"];
        assert!(keys_after_numkeys(&short, 2).is_empty());
    }

    #[test]
    fn key_specs_pick_the_key_arguments() {
        let spec = Spec {
            name: "mset",
            arity: -3,
            keys: KeySpec::Range {
                first: 1,
                last: -1,
                step: 2,
            },
            write: true,
            run: |_, _| Ok(Reply::ok()),
        };
        let args: [&[u8]; 5] = [b"mset", b"a", b"1", b"b", b"2"];
        assert_eq!(spec.key_indices(&args), vec![1, 3]);
    }
}

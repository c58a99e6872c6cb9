//! Connection and server commands: what real clients send on connect and while running.
//!
//! PING, ECHO, SELECT, HELLO, AUTH, CLIENT, INFO, COMMAND, CONFIG, TIME, QUIT and RESET,
//! with Redis 7.0's replies and error texts (plus CLIENT SETINFO and CLIENT NO-TOUCH from 7.2,
//! which client libraries send on connect).
//!
//! The engine reports itself as `redis` version [`VERSION`] (HELLO's `version`, INFO's
//! `redis_version`): the Redis release whose replies the differential tests pin, so clients
//! that gate features on the server version pick the 7.0 behaviour the engine implements.
//! INFO's `edgebench_version` names the engine itself (this crate's version).
//!
//! Server-wide state lives in [`ServerState`], one per engine: the CONFIG parameters (behind
//! a `RwLock`: only CONFIG, INFO, AUTH and not-yet-authenticated clients read them, never a
//! data command), per-command call counts for INFO commandstats, and the count of live
//! clients. Nothing here takes a shard lock except INFO's keyspace section, which locks one
//! database at a time while holding nothing else.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use super::{all_commands, is, lookup, parse_i64, Ctx, KeySpec, Spec};
use crate::engine::client::LiveClient;
use crate::engine::{Client, CmdError, Engine, EngineClock, Reply, DATABASES};

/// The Redis version the engine reports (HELLO `version`, INFO `redis_version`).
pub const VERSION: &str = "7.0.15";

/// The commands of this family.
pub const COMMANDS: &[Spec] = &[
    keyless("ping", -1, ping),
    keyless("echo", 2, echo),
    // In-process there is no subscriber to deliver to (the RESP server answers these itself,
    // with its broker, before the engine sees them): the count of receivers is 0, as Redis
    // answers on a server with no subscribers.
    keyless("publish", 3, publish_in_process),
    // SPUBLISH's shard channel is its key in Redis's command table (it picks the slot).
    super::spec("spublish", 3, super::ONE_KEY, false, publish_in_process),
    keyless("select", 2, select),
    keyless("hello", -1, hello),
    keyless("auth", -2, auth),
    keyless("client", -2, client),
    keyless("info", -1, info),
    keyless("command", -1, command),
    keyless("config", -2, config),
    keyless("time", 1, time),
    keyless("quit", -1, quit),
    keyless("reset", 1, reset),
];

const fn keyless(
    name: &'static str,
    arity: i32,
    run: fn(&mut Ctx<'_, '_>, &[&[u8]]) -> Result<Reply, CmdError>,
) -> Spec {
    Spec {
        name,
        arity,
        keys: KeySpec::None,
        write: false,
        run,
    }
}

/// Commands a client may send before it authenticates (Redis's `no_auth` flag).
pub fn runs_before_auth(spec: &Spec) -> bool {
    matches!(spec.name, "auth" | "hello" | "quit" | "reset")
}

/// The reply to a command sent before AUTH while a password is required.
pub const NOAUTH: &str = "NOAUTH Authentication required.";

fn err(text: &'static str) -> CmdError {
    CmdError::Other(Cow::Borrowed(text))
}

fn err_owned(text: String) -> CmdError {
    CmdError::Other(Cow::Owned(text))
}

fn lossy(arg: &[u8]) -> String {
    String::from_utf8_lossy(arg).into_owned()
}

/// `ERR unknown subcommand 'x'. Try CLIENT HELP.` (the command as sent, uppercased).
fn unknown_subcommand(args: &[&[u8]]) -> CmdError {
    let sub = &args[1][..args[1].len().min(128)];
    err_owned(format!(
        "ERR unknown subcommand '{}'. Try {} HELP.",
        lossy(sub),
        lossy(args[0]).to_uppercase()
    ))
}

/// Redis's subcommand arity check: `n` exactly, `-n` at least.
fn sub_arity(args: &[&[u8]], arity: i32, full_name: &str) -> Result<(), CmdError> {
    let ok = if arity >= 0 {
        args.len() == arity as usize
    } else {
        args.len() >= arity.unsigned_abs() as usize
    };
    if ok {
        Ok(())
    } else {
        Err(CmdError::Arity(full_name.to_string()))
    }
}

/// A HELP reply in Redis's layout.
fn help(args: &[&[u8]], lines: &[&'static str]) -> Reply {
    let mut out = vec![Reply::Status(
        format!(
            "{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            lossy(args[0]).to_uppercase()
        )
        .into(),
    )];
    out.extend(lines.iter().map(|l| Reply::Status(Cow::Borrowed(l))));
    out.push(Reply::Status("HELP".into()));
    out.push(Reply::Status("    Prints this help.".into()));
    Reply::Array(out)
}

// ---- server-wide state ----

/// The engine's server-wide state: CONFIG parameters, command statistics, live clients.
#[derive(Debug)]
pub struct ServerState {
    config: RwLock<Vec<String>>,
    /// Calls per command, indexed as [`all_commands`] lists them.
    calls: Box<[AtomicU64]>,
    live_clients: Arc<AtomicU64>,
    peak_memory: AtomicU64,
    run_id: String,
    started_unix_s: u64,
}

impl Default for ServerState {
    fn default() -> Self {
        ServerState {
            config: RwLock::new(PARAMS.iter().map(|p| p.default.to_string()).collect()),
            calls: all_commands().map(|_| AtomicU64::new(0)).collect(),
            live_clients: Arc::new(AtomicU64::new(0)),
            peak_memory: AtomicU64::new(0),
            run_id: random_hex40(),
            started_unix_s: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        }
    }
}

impl ServerState {
    /// A new client, authenticated unless a password is required, counted as connected.
    pub(crate) fn new_client(&self, id: u64) -> Client {
        let mut client = Client::new(id);
        client.authenticated = !self.requires_auth();
        client.live = LiveClient::counted_in(&self.live_clients);
        client
    }

    /// Counts one call of the command at `index` in [`all_commands`] (INFO commandstats).
    pub(crate) fn count_call(&self, index: usize) {
        if let Some(n) = self.calls.get(index) {
            n.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Whether a password is set (`requirepass`).
    pub(crate) fn requires_auth(&self) -> bool {
        !self.read()[Param::REQUIREPASS].is_empty()
    }

    pub(crate) fn set_requirepass(&self, password: Option<String>) {
        self.put(Param::REQUIREPASS, password.unwrap_or_default());
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Vec<String>> {
        // A poisoned lock only means a panic elsewhere; the values are still whole strings.
        self.config.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Vec<String>> {
        self.config.write().unwrap_or_else(PoisonError::into_inner)
    }

    fn get(&self, index: usize) -> String {
        self.read()[index].clone()
    }

    fn put(&self, index: usize, value: String) {
        self.write()[index] = value;
    }

    fn number(&self, index: usize) -> u64 {
        self.read()[index].parse().unwrap_or(0)
    }
}

/// What kind of value a CONFIG parameter holds, and how CONFIG SET checks it (Redis 7.0's
/// config.c: `yesnotoi`, `string2ll`, `memtoull`, enum names, the `save` special case).
#[derive(Debug, Clone, Copy)]
enum Kind {
    Bool,
    /// A signed integer within bounds.
    Int {
        min: i64,
        max: i64,
    },
    /// An unsigned integer within bounds.
    UInt {
        min: u64,
        max: u64,
    },
    /// A memory value: digits with an optional unit (b, k, kb, m, mb, g, gb).
    Memory {
        min: u64,
        max: u64,
    },
    Enum(&'static [&'static str]),
    Str,
    /// `save`: pairs of "seconds changes".
    Save,
}

/// A CONFIG parameter: its name, kind, the engine's default, whether CONFIG SET may change it.
#[derive(Debug)]
struct Param {
    name: &'static str,
    kind: Kind,
    default: &'static str,
    mutable: bool,
}

const INT_MAX: i64 = i32::MAX as i64;

const fn param(name: &'static str, kind: Kind, default: &'static str, mutable: bool) -> Param {
    Param {
        name,
        kind,
        default,
        mutable,
    }
}

const fn int(min: i64, max: i64) -> Kind {
    Kind::Int { min, max }
}

/// The parameters CONFIG GET and CONFIG SET know: those redis-benchmark, memtier and client
/// libraries ask about. Defaults are a default redis-server's, except where the engine differs:
/// `save ""` and `appendonly no` (it persists nothing), `port 0` (the engine listens on nothing
/// until a server says otherwise) and `bind 127.0.0.1` (a local server's usual address). `port`,
/// `bind` and `unixsocket` are set by the server at startup ([`Engine::configure`]); CONFIG SET
/// cannot change them, since the engine cannot rebind its server's listeners. Values are
/// stored, not enforced, except where a server reads them (`maxclients`,
/// `proto-max-bulk-len`, `requirepass`).
const PARAMS: &[Param] = &[
    param(
        "appendfsync",
        Kind::Enum(&["everysec", "always", "no"]),
        "everysec",
        true,
    ),
    param("appendonly", Kind::Bool, "no", true),
    param("bind", Kind::Str, "127.0.0.1", false),
    param("cluster-enabled", Kind::Bool, "no", false),
    param("daemonize", Kind::Bool, "no", false),
    param("databases", int(1, INT_MAX), "16", false),
    param("hz", int(0, INT_MAX), "10", true),
    param("io-threads", int(1, 128), "1", false),
    param(
        "loglevel",
        Kind::Enum(&["debug", "verbose", "notice", "warning"]),
        "notice",
        true,
    ),
    param(
        "maxclients",
        Kind::UInt {
            min: 1,
            max: u32::MAX as u64,
        },
        "10000",
        true,
    ),
    param(
        "maxmemory",
        Kind::Memory {
            min: 0,
            max: u64::MAX,
        },
        "0",
        true,
    ),
    param(
        "maxmemory-policy",
        Kind::Enum(&[
            "volatile-lru",
            "volatile-lfu",
            "volatile-random",
            "volatile-ttl",
            "allkeys-lru",
            "allkeys-lfu",
            "allkeys-random",
            "noeviction",
        ]),
        "noeviction",
        true,
    ),
    param("maxmemory-samples", int(1, INT_MAX), "5", true),
    param("port", int(0, 65535), "0", false),
    param(
        "proto-max-bulk-len",
        Kind::Memory {
            min: 1024 * 1024,
            max: i64::MAX as u64,
        },
        "536870912",
        true,
    ),
    param("protected-mode", Kind::Bool, "yes", true),
    param("requirepass", Kind::Str, "", true),
    param("save", Kind::Save, "", true),
    param("tcp-keepalive", int(0, INT_MAX), "300", true),
    param("timeout", int(0, INT_MAX), "0", true),
    param("unixsocket", Kind::Str, "", false),
];

impl Param {
    const HZ: usize = 6;
    const MAXCLIENTS: usize = 9;
    const MAXMEMORY: usize = 10;
    const MAXMEMORY_POLICY: usize = 11;
    const PORT: usize = 13;
    const PROTO_MAX_BULK_LEN: usize = 14;
    const REQUIREPASS: usize = 16;

    /// The index of a parameter, any case.
    fn find(name: &[u8]) -> Option<usize> {
        PARAMS.iter().position(|p| is(name, p.name))
    }

    /// Checks `value` as CONFIG SET does; returns the value as CONFIG GET will show it.
    fn parse(&self, value: &[u8]) -> Result<String, Cow<'static, str>> {
        let not_integer = || Cow::Borrowed("argument couldn't be parsed into an integer");
        let bounds = |min: &dyn std::fmt::Display, max: &dyn std::fmt::Display| {
            Cow::Owned(format!(
                "argument must be between {min} and {max} inclusive"
            ))
        };
        match self.kind {
            Kind::Bool => {
                if is(value, "yes") {
                    Ok("yes".into())
                } else if is(value, "no") {
                    Ok("no".into())
                } else {
                    Err("argument must be 'yes' or 'no'".into())
                }
            }
            Kind::Int { min, max } => {
                let v = parse_i64(value).map_err(|_| not_integer())?;
                if v < min || v > max {
                    return Err(bounds(&min, &max));
                }
                // Redis clamps hz to 1..=500 (CONFIG_MIN_HZ, CONFIG_MAX_HZ).
                let v = if self.name == "hz" {
                    v.clamp(1, 500)
                } else {
                    v
                };
                Ok(v.to_string())
            }
            Kind::UInt { min, max } => {
                let v = parse_i64(value).map_err(|_| not_integer())?;
                match u64::try_from(v) {
                    Ok(u) if (min..=max).contains(&u) => Ok(u.to_string()),
                    _ => Err(bounds(&min, &max)),
                }
            }
            Kind::Memory { min, max } => {
                let v = memtoull(value).ok_or(Cow::Borrowed("argument must be a memory value"))?;
                if v < min || v > max {
                    return Err(bounds(&min, &max));
                }
                Ok(v.to_string())
            }
            Kind::Enum(names) => names
                .iter()
                .find(|n| is(value, n))
                .map(|n| n.to_string())
                .ok_or_else(|| {
                    format!(
                        "argument(s) must be one of the following: {}",
                        names.join(", ")
                    )
                    .into()
                }),
            Kind::Str => Ok(lossy(value)),
            Kind::Save => parse_save(value).ok_or(Cow::Borrowed("Invalid save parameters")),
        }
    }
}

/// Redis's `memtoull`: digits and an optional unit; `strtoull` saturates on overflow.
fn memtoull(value: &[u8]) -> Option<u64> {
    let digits = value.iter().take_while(|b| b.is_ascii_digit()).count();
    let (num, unit) = value.split_at(digits);
    let mul: u64 = match unit.to_ascii_lowercase().as_slice() {
        b"" | b"b" => 1,
        b"k" => 1000,
        b"kb" => 1024,
        b"m" => 1000 * 1000,
        b"mb" => 1024 * 1024,
        b"g" => 1000 * 1000 * 1000,
        b"gb" => 1024 * 1024 * 1024,
        _ => return None,
    };
    let n = num.iter().fold(0u64, |acc, d| {
        acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    });
    n.checked_mul(mul)
}

/// `save`: "" or pairs of integers separated by single spaces, seconds >= 1, changes >= 0
/// (Redis splits on every space, so an empty piece reads as 0, as `strtoll` reads it).
fn parse_save(value: &[u8]) -> Option<String> {
    if value.is_empty() {
        return Some(String::new());
    }
    let parts: Vec<&[u8]> = value.split(|&b| b == b' ').collect();
    if parts.len() % 2 == 1 {
        return None;
    }
    let mut numbers = Vec::with_capacity(parts.len());
    for (j, part) in parts.iter().enumerate() {
        let v = strtoll_whole(part)?;
        if (j % 2 == 0 && v < 1) || (j % 2 == 1 && v < 0) {
            return None;
        }
        numbers.push(v.to_string());
    }
    Some(numbers.join(" "))
}

/// `strtoll` that must consume the whole string (a sign allowed); an empty string reads as 0.
fn strtoll_whole(s: &[u8]) -> Option<i64> {
    if s.is_empty() {
        return Some(0);
    }
    std::str::from_utf8(s).ok()?.parse::<i64>().ok()
}

// ---- the engine's configuration API ----

impl Engine {
    fn server(&self) -> &ServerState {
        &self.inner().server
    }

    /// The password clients must send with AUTH, if any.
    pub fn requirepass(&self) -> Option<String> {
        Some(self.server().get(Param::REQUIREPASS)).filter(|p| !p.is_empty())
    }

    /// The value of one CONFIG parameter (exact name, any case), as CONFIG GET shows it.
    pub fn config_get(&self, name: &str) -> Option<String> {
        Param::find(name.as_bytes()).map(|i| self.server().get(i))
    }

    /// Sets CONFIG parameters as one CONFIG SET does: all or none, with Redis's errors.
    pub fn config_set(&self, pairs: &[(&[u8], &[u8])]) -> Result<(), CmdError> {
        let mut targets: Vec<usize> = Vec::with_capacity(pairs.len());
        for (name, _) in pairs {
            let Some(i) = Param::find(name) else {
                return Err(err_owned(format!(
                    "ERR Unknown option or number of arguments for CONFIG SET - '{}'",
                    lossy(name)
                )));
            };
            let problem = if !PARAMS[i].mutable {
                Some("can't set immutable config")
            } else if targets.contains(&i) {
                Some("duplicate parameter")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(set_failed(&lossy(name), problem));
            }
            targets.push(i);
        }
        let mut values = Vec::with_capacity(pairs.len());
        for (&i, (_, value)) in targets.iter().zip(pairs) {
            let v = PARAMS[i]
                .parse(value)
                .map_err(|e| set_failed(PARAMS[i].name, &e))?;
            values.push(v);
        }
        let mut config = self.server().write();
        for (i, v) in targets.into_iter().zip(values) {
            config[i] = v;
        }
        Ok(())
    }

    /// Sets one parameter at startup, as redis.conf or a command-line flag would: like
    /// CONFIG SET, but also the parameters only the server knows (`port`, `bind`,
    /// `unixsocket`); a program serving the engine calls this for its listeners and limits.
    pub fn configure(&self, name: &str, value: &str) -> Result<(), CmdError> {
        let Some(i) = Param::find(name.as_bytes()) else {
            return Err(err_owned(format!(
                "ERR Unknown option or number of arguments for CONFIG SET - '{name}'"
            )));
        };
        let v = PARAMS[i]
            .parse(value.as_bytes())
            .map_err(|e| set_failed(PARAMS[i].name, &e))?;
        self.server().put(i, v);
        Ok(())
    }

    /// CONFIG `maxclients`: how many connections the server should accept.
    pub fn maxclients(&self) -> u64 {
        self.server().number(Param::MAXCLIENTS)
    }

    /// CONFIG `proto-max-bulk-len`: the largest bulk string the server should accept.
    pub fn proto_max_bulk_len(&self) -> u64 {
        self.server().number(Param::PROTO_MAX_BULK_LEN)
    }

    /// How many clients exist now (INFO `connected_clients`).
    pub fn connected_clients(&self) -> u64 {
        self.server().live_clients.load(Ordering::Relaxed)
    }
}

fn set_failed(name: &str, problem: &str) -> CmdError {
    err_owned(format!(
        "ERR CONFIG SET failed (possibly related to argument '{name}') - {problem}"
    ))
}

// ---- PING, ECHO, SELECT, TIME, QUIT, RESET ----

fn ping(_: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    match args {
        [_] => Ok(Reply::Status("PONG".into())),
        [_, msg] => Ok(Reply::bulk(msg)),
        _ => Err(CmdError::Arity("ping".into())),
    }
}

fn publish_in_process(_: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::Int(0))
}

fn echo(_: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    Ok(Reply::bulk(args[1]))
}

fn select(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let db = parse_i64(args[1])?;
    match usize::try_from(db) {
        Ok(db) if db < DATABASES => {
            ctx.client.db = db;
            Ok(Reply::ok())
        }
        _ => Err(err("ERR DB index is out of range")),
    }
}

fn time(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    let micros: u64 = match &ctx.engine.inner().clock {
        EngineClock::System => SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0),
        // A manual clock has ms resolution; TIME follows it so tests see the engine's time.
        EngineClock::Manual(_) => ctx.engine.now_ms().saturating_mul(1000),
    };
    Ok(Reply::Array(vec![
        Reply::Bulk((micros / 1_000_000).to_string().into_bytes()),
        Reply::Bulk((micros % 1_000_000).to_string().into_bytes()),
    ]))
}

fn quit(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    ctx.client.closing = true;
    Ok(Reply::ok())
}

/// RESET: the connection's state as a new connection's (MULTI and WATCH dropped, db 0,
/// RESP2, no name, re-authentication required if a password is set). Subscriptions are
/// the server's to drop.
fn reset(ctx: &mut Ctx<'_, '_>, _: &[&[u8]]) -> Result<Reply, CmdError> {
    let requires_auth = ctx.engine.server().requires_auth();
    let c = &mut *ctx.client;
    c.multi = None;
    c.multi_dirty = false;
    c.watched.clear();
    c.db = 0;
    c.resp = 2;
    c.name = None;
    c.no_evict = false;
    c.no_touch = false;
    c.authenticated = !requires_auth;
    Ok(Reply::Status("RESET".into()))
}

// ---- AUTH and HELLO ----

/// Compares in time independent of where the first difference is.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

const WRONGPASS: &str = "WRONGPASS invalid username-password pair or user is disabled.";

/// Checks a username and password against the only user, `default`: with no
/// `requirepass`, any password is accepted (Redis's `nopass`).
fn check_credentials(engine: &Engine, user: &[u8], password: &[u8]) -> Result<(), CmdError> {
    if user != b"default" {
        return Err(err(WRONGPASS));
    }
    match engine.requirepass() {
        None => Ok(()),
        Some(pw) if same_secret(pw.as_bytes(), password) => Ok(()),
        Some(_) => Err(err(WRONGPASS)),
    }
}

fn auth(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let (user, password): (&[u8], &[u8]) = match args {
        [_, password] => {
            if ctx.engine.requirepass().is_none() {
                return Err(err(
                    "ERR AUTH <password> called without any password configured for the \
                     default user. Are you sure your configuration is correct?",
                ));
            }
            (b"default", password)
        }
        [_, user, password] => (user, password),
        _ => return Err(CmdError::Syntax),
    };
    // A failed AUTH leaves an authenticated client authenticated, as in Redis.
    check_credentials(ctx.engine, user, password)?;
    ctx.client.authenticated = true;
    Ok(Reply::ok())
}

/// HELLO [protover [AUTH user pass] [SETNAME name]]. As in Redis 7.0, options take effect
/// as they are read: a name set before a later option fails stays set.
fn hello(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let mut proto = None;
    if let Some(v) = args.get(1) {
        let v = parse_i64(v)
            .map_err(|_| err("ERR Protocol version is not an integer or out of range"))?;
        if !(2..=3).contains(&v) {
            return Err(err("NOPROTO unsupported protocol version"));
        }
        proto = Some(v as u8);
    }
    let mut j = 2;
    while j < args.len() {
        let more = args.len() - 1 - j;
        if is(args[j], "auth") && more >= 2 {
            check_credentials(ctx.engine, args[j + 1], args[j + 2])?;
            ctx.client.authenticated = true;
            j += 3;
        } else if is(args[j], "setname") && more >= 1 {
            set_name(ctx.client, args[j + 1])?;
            j += 2;
        } else {
            return Err(err_owned(format!(
                "ERR Syntax error in HELLO option '{}'",
                lossy(args[j])
            )));
        }
    }
    if !ctx.client.authenticated {
        return Err(err(
            "NOAUTH HELLO must be called with the client already authenticated, otherwise the \
             HELLO AUTH <user> <pass> option can be used to authenticate the client and select \
             the RESP protocol version at the same time",
        ));
    }
    if let Some(proto) = proto {
        ctx.client.resp = proto;
    }
    Ok(hello_reply(ctx.client))
}

/// HELLO's map: server, version, proto, id, mode, role, modules.
pub fn hello_reply(client: &Client) -> Reply {
    let field = |k: &str, v: Reply| (Reply::bulk(k.as_bytes()), v);
    Reply::Map(vec![
        field("server", Reply::bulk(b"redis")),
        field("version", Reply::bulk(VERSION.as_bytes())),
        field("proto", Reply::Int(i64::from(client.resp))),
        field("id", Reply::Int(client.id as i64)),
        field("mode", Reply::bulk(b"standalone")),
        field("role", Reply::bulk(b"master")),
        field("modules", Reply::Array(Vec::new())),
    ])
}

// ---- CLIENT ----

/// Client names and SETINFO values: printable ASCII without spaces, so CLIENT LIST stays
/// splittable on spaces.
fn valid_attr(value: &[u8]) -> bool {
    value.iter().all(|&b| (b'!'..=b'~').contains(&b))
}

fn set_name(client: &mut Client, name: &[u8]) -> Result<(), CmdError> {
    if !valid_attr(name) {
        return Err(err(
            "ERR Client names cannot contain spaces, newlines or special characters.",
        ));
    }
    client.name = (!name.is_empty()).then(|| name.to_vec());
    Ok(())
}

const CLIENT_HELP: &[&str] = &[
    "GETNAME",
    "    Return the name of the current connection.",
    "GETREDIR",
    "    Return the client ID we are redirecting to when tracking is enabled.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "LIST [options ...]",
    "    Return information about client connections. Options:",
    "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
    "      Return clients of specified type.",
    "    * ID <id> [<id> ...]",
    "      Return clients of specified IDs only.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
];

fn on_off(arg: &[u8]) -> Result<bool, CmdError> {
    if is(arg, "on") {
        Ok(true)
    } else if is(arg, "off") {
        Ok(false)
    } else {
        Err(CmdError::Syntax)
    }
}

fn client(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    let c = &mut *ctx.client;
    if is(sub, "id") {
        sub_arity(args, 2, "client|id")?;
        Ok(Reply::Int(c.id as i64))
    } else if is(sub, "getname") {
        sub_arity(args, 2, "client|getname")?;
        Ok(Reply::opt_bulk(c.name.as_deref()))
    } else if is(sub, "setname") {
        sub_arity(args, 3, "client|setname")?;
        set_name(c, args[2])?;
        Ok(Reply::ok())
    } else if is(sub, "info") {
        sub_arity(args, 2, "client|info")?;
        let mut line = client_info_line(c, "client|info");
        line.push('\n');
        Ok(Reply::Verbatim(line))
    } else if is(sub, "list") {
        sub_arity(args, -2, "client|list")?;
        client_list(c, args)
    } else if is(sub, "setinfo") {
        sub_arity(args, 4, "client|setinfo")?;
        client_setinfo(c, args[2], args[3])?;
        Ok(Reply::ok())
    } else if is(sub, "no-evict") {
        sub_arity(args, 3, "client|no-evict")?;
        c.no_evict = on_off(args[2])?;
        Ok(Reply::ok())
    } else if is(sub, "no-touch") {
        sub_arity(args, 3, "client|no-touch")?;
        c.no_touch = on_off(args[2])?;
        Ok(Reply::ok())
    } else if is(sub, "getredir") {
        sub_arity(args, 2, "client|getredir")?;
        Ok(Reply::Int(-1))
    } else if is(sub, "help") {
        sub_arity(args, 2, "client|help")?;
        Ok(help(args, CLIENT_HELP))
    } else {
        Err(unknown_subcommand(args))
    }
}

/// CLIENT SETINFO LIB-NAME|LIB-VER value (Redis 7.2); an empty value clears it.
fn client_setinfo(c: &mut Client, attr: &[u8], value: &[u8]) -> Result<(), CmdError> {
    let slot = if is(attr, "lib-name") {
        &mut c.lib_name
    } else if is(attr, "lib-ver") {
        &mut c.lib_ver
    } else {
        return Err(err_owned(format!(
            "ERR Unrecognized option '{}'",
            lossy(attr)
        )));
    };
    if !valid_attr(value) {
        return Err(err_owned(format!(
            "ERR {} cannot contain spaces, newlines or special characters.",
            lossy(attr)
        )));
    }
    *slot = (!value.is_empty()).then(|| value.to_vec());
    Ok(())
}

/// CLIENT LIST [TYPE type | ID id ...]. The engine keeps no registry of other clients, so
/// the list holds the calling client only.
fn client_list(c: &Client, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let include_self = if args.len() == 4 && is(args[2], "type") {
        let t = args[3];
        if is(t, "normal") {
            true
        } else if ["master", "replica", "slave", "pubsub"]
            .iter()
            .any(|n| is(t, n))
        {
            false
        } else {
            return Err(err_owned(format!("ERR Unknown client type '{}'", lossy(t))));
        }
    } else if args.len() > 3 && is(args[2], "id") {
        let mut found = false;
        for id in &args[3..] {
            let id = parse_i64(id).map_err(|_| err("ERR Invalid client ID"))?;
            found |= id == c.id as i64;
        }
        found
    } else if args.len() != 2 {
        return Err(CmdError::Syntax);
    } else {
        true
    };
    let mut out = String::new();
    if include_self {
        out.push_str(&client_info_line(c, "client|list"));
        out.push('\n');
    }
    Ok(Reply::Verbatim(out))
}

/// One CLIENT INFO / CLIENT LIST line (without the newline), in Redis 7.2's layout; `cmd` is
/// the command being run. The engine tracks no buffers or descriptors: those fields are 0
/// (`fd=-1`), and `idle` is 0 (the client is running this command).
pub fn client_info_line(c: &Client, cmd: &str) -> String {
    let text = |v: &Option<Vec<u8>>| v.as_deref().map(lossy).unwrap_or_default();
    let addr = c.addr.as_deref().unwrap_or("");
    let mut flags = String::new();
    if c.in_multi() {
        flags.push('x');
    }
    if c.closing {
        flags.push('c');
    }
    if addr.starts_with('/') {
        flags.push('U');
    }
    if c.no_evict {
        flags.push('e');
    }
    if c.no_touch {
        flags.push('T');
    }
    if flags.is_empty() {
        flags.push('N');
    }
    let multi = c.multi.as_ref().map_or(-1, |q| q.len() as i64);
    format!(
        "id={id} addr={addr} laddr={laddr} fd=-1 name={name} age={age} idle=0 flags={flags} \
         db={db} sub=0 psub=0 ssub=0 multi={multi} qbuf=0 qbuf-free=0 argv-mem=0 multi-mem=0 \
         rbs=0 rbp=0 obl=0 oll=0 omem=0 tot-mem=0 events=r cmd={cmd} user=default redir=-1 \
         resp={resp} lib-name={lib_name} lib-ver={lib_ver}",
        id = c.id,
        laddr = c.laddr.as_deref().unwrap_or(""),
        name = text(&c.name),
        age = c.created.elapsed().as_secs(),
        db = c.db,
        resp = c.resp,
        lib_name = text(&c.lib_name),
        lib_ver = text(&c.lib_ver),
    )
}

// ---- CONFIG ----

const CONFIG_HELP: &[&str] = &[
    "GET <pattern>",
    "    Return parameters matching the glob-like <pattern> and their values.",
    "SET <directive> <value>",
    "    Set the configuration <directive> to <value>.",
    "RESETSTAT",
    "    Reset statistics reported by the INFO command.",
    "REWRITE",
    "    Rewrite the configuration file.",
];

fn config(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    if is(sub, "get") {
        sub_arity(args, -3, "config|get")?;
        Ok(Reply::Map(
            config_matches(ctx.engine, &args[2..])
                .into_iter()
                .map(|(k, v)| (Reply::Bulk(k.into_bytes()), Reply::Bulk(v.into_bytes())))
                .collect(),
        ))
    } else if is(sub, "set") {
        sub_arity(args, -4, "config|set")?;
        if args.len() % 2 == 1 {
            return Err(CmdError::Syntax);
        }
        let pairs: Vec<(&[u8], &[u8])> = args[2..].chunks(2).map(|p| (p[0], p[1])).collect();
        ctx.engine.config_set(&pairs)?;
        Ok(Reply::ok())
    } else if is(sub, "resetstat") {
        sub_arity(args, 2, "config|resetstat")?;
        ctx.engine.reset_stats();
        Ok(Reply::ok())
    } else if is(sub, "rewrite") {
        sub_arity(args, 2, "config|rewrite")?;
        Err(err("ERR The server is running without a config file"))
    } else if is(sub, "help") {
        sub_arity(args, 2, "config|help")?;
        Ok(help(args, CONFIG_HELP))
    } else {
        Err(unknown_subcommand(args))
    }
}

/// CONFIG GET's pairs for these patterns: an exact name is reported as it was typed, a glob
/// match under its own name; each parameter once, in the order first matched.
fn config_matches(engine: &Engine, patterns: &[&[u8]]) -> Vec<(String, String)> {
    let values = engine.server().read();
    let mut seen = [false; PARAMS.len()];
    let mut out = Vec::new();
    for pattern in patterns {
        if !pattern.iter().any(|b| matches!(b, b'[' | b'*' | b'?')) {
            if let Some(i) = Param::find(pattern) {
                if !seen[i] {
                    seen[i] = true;
                    out.push((lossy(pattern), values[i].clone()));
                }
            }
            continue;
        }
        for (i, p) in PARAMS.iter().enumerate() {
            if !seen[i] && glob_match_nocase(pattern, p.name) {
                seen[i] = true;
                out.push((p.name.to_string(), values[i].clone()));
            }
        }
    }
    out
}

impl Engine {
    /// CONFIG RESETSTAT: zeroes the counters INFO stats and commandstats report.
    pub fn reset_stats(&self) {
        let stats = self.stats();
        stats.commands.store(0, Ordering::Relaxed);
        stats.connections.store(0, Ordering::Relaxed);
        stats.expired_keys.store(0, Ordering::Relaxed);
        for n in self.server().calls.iter() {
            n.store(0, Ordering::Relaxed);
        }
        self.server().peak_memory.store(0, Ordering::Relaxed);
    }
}

/// Redis's case-insensitive glob match (CONFIG GET, COMMAND LIST), for the lowercase names
/// of parameters and commands.
fn glob_match_nocase(pattern: &[u8], lowercase_name: &str) -> bool {
    super::keys::glob_match(&pattern.to_ascii_lowercase(), lowercase_name.as_bytes())
}

// ---- COMMAND ----

const COMMAND_HELP: &[&str] = &[
    "(no subcommand)",
    "    Return details about all Redis commands.",
    "COUNT",
    "    Return the total number of commands in this Redis server.",
    "LIST",
    "    Return a list of all commands in this Redis server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple Redis commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full Redis command.",
];

/// Every command, sorted by name (Redis's order is its hash table's).
fn sorted_commands() -> Vec<&'static Spec> {
    let mut specs: Vec<&'static Spec> = all_commands().collect();
    specs.sort_unstable_by_key(|s| s.name);
    specs
}

fn command(_: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let Some(&sub) = args.get(1) else {
        return Ok(Reply::Array(
            sorted_commands().into_iter().map(command_info).collect(),
        ));
    };
    if is(sub, "count") {
        sub_arity(args, 2, "command|count")?;
        Ok(Reply::Int(all_commands().count() as i64))
    } else if is(sub, "info") {
        sub_arity(args, -2, "command|info")?;
        if args.len() == 2 {
            return Ok(Reply::Array(
                sorted_commands().into_iter().map(command_info).collect(),
            ));
        }
        Ok(Reply::Array(
            args[2..]
                .iter()
                .map(|name| lookup(name).map_or(Reply::Nil, command_info))
                .collect(),
        ))
    } else if is(sub, "docs") {
        sub_arity(args, -2, "command|docs")?;
        let specs: Vec<&'static Spec> = if args.len() == 2 {
            sorted_commands()
        } else {
            args[2..].iter().filter_map(|n| lookup(n)).collect()
        };
        Ok(Reply::Map(
            specs
                .into_iter()
                .map(|s| (Reply::bulk(s.name.as_bytes()), command_docs()))
                .collect(),
        ))
    } else if is(sub, "list") {
        sub_arity(args, -2, "command|list")?;
        command_list(args)
    } else if is(sub, "getkeys") {
        sub_arity(args, -4, "command|getkeys")?;
        command_getkeys(&args[2..])
    } else if is(sub, "help") {
        sub_arity(args, 2, "command|help")?;
        Ok(help(args, COMMAND_HELP))
    } else {
        Err(unknown_subcommand(args))
    }
}

/// COMMAND INFO's ten fields: name, arity, flags, first key, last key, step, ACL
/// categories, tips, key specs, subcommands. Flags and categories say only what the table
/// knows (write, readonly, movablekeys); tips, key specs and subcommands are empty.
pub fn command_info(spec: &Spec) -> Reply {
    let status = |s: &'static str| Reply::Status(Cow::Borrowed(s));
    let mut flags = Vec::new();
    let mut categories = Vec::new();
    if spec.write {
        flags.push(status("write"));
        categories.push(status("@write"));
    } else if !matches!(spec.keys, KeySpec::None) {
        flags.push(status("readonly"));
        categories.push(status("@read"));
    }
    if matches!(spec.keys, KeySpec::Custom(_)) {
        flags.push(status("movablekeys"));
    }
    let (first, last, step) = match spec.keys {
        KeySpec::Range { first, last, step } => (first as i64, last as i64, step as i64),
        _ => (0, 0, 0),
    };
    Reply::Array(vec![
        Reply::bulk(spec.name.as_bytes()),
        Reply::Int(i64::from(spec.arity)),
        Reply::Set(flags),
        Reply::Int(first),
        Reply::Int(last),
        Reply::Int(step),
        Reply::Set(categories),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
        Reply::Array(Vec::new()),
    ])
}

/// COMMAND DOCS for one command: a minimal map with the fields redis-cli reads (summary,
/// since, group); the engine carries no documentation.
fn command_docs() -> Reply {
    let field = |k: &str, v: &str| (Reply::bulk(k.as_bytes()), Reply::bulk(v.as_bytes()));
    Reply::Map(vec![
        field("summary", ""),
        field("since", "1.0.0"),
        field("group", "generic"),
    ])
}

/// COMMAND LIST [FILTERBY MODULE name | ACLCAT category | PATTERN pattern].
fn command_list(args: &[&[u8]]) -> Result<Reply, CmdError> {
    let names = |keep: &dyn Fn(&Spec) -> bool| {
        Reply::Array(
            sorted_commands()
                .into_iter()
                .filter(|s| keep(s))
                .map(|s| Reply::bulk(s.name.as_bytes()))
                .collect(),
        )
    };
    match args {
        [_, _] => Ok(names(&|_| true)),
        [_, _, by, kind, value] if is(by, "filterby") => {
            if is(kind, "pattern") {
                Ok(names(&|s| glob_match_nocase(value, s.name)))
            } else if is(kind, "module") {
                Ok(Reply::Array(Vec::new()))
            } else if is(kind, "aclcat") {
                let (write, read) = (is(value, "write"), is(value, "read"));
                Ok(names(&|s| {
                    (write && s.write) || (read && !s.write && !matches!(s.keys, KeySpec::None))
                }))
            } else {
                Err(CmdError::Syntax)
            }
        }
        _ => Err(CmdError::Syntax),
    }
}

/// COMMAND GETKEYS command arg...: the key arguments, from the command's key spec.
fn command_getkeys(cmd: &[&[u8]]) -> Result<Reply, CmdError> {
    let Some(spec) = lookup(cmd[0]) else {
        return Err(err("ERR Invalid command specified"));
    };
    if matches!(spec.keys, KeySpec::None | KeySpec::All) {
        return Err(err("ERR The command has no key arguments"));
    }
    let arity_ok = if spec.arity >= 0 {
        cmd.len() == spec.arity as usize
    } else {
        cmd.len() >= spec.arity.unsigned_abs() as usize
    };
    if !arity_ok {
        return Err(err("ERR Invalid number of arguments specified for command"));
    }
    let keys = spec.key_indices(cmd);
    if keys.is_empty() {
        return Err(err("ERR Invalid arguments specified for command"));
    }
    Ok(Reply::Array(
        keys.into_iter().map(|i| Reply::bulk(cmd[i])).collect(),
    ))
}

// ---- INFO ----

/// INFO's sections, in the order Redis prints them, with their titles.
const SECTIONS: &[(&str, &str)] = &[
    ("server", "Server"),
    ("clients", "Clients"),
    ("memory", "Memory"),
    ("persistence", "Persistence"),
    ("stats", "Stats"),
    ("replication", "Replication"),
    ("cpu", "CPU"),
    ("modules", "Modules"),
    ("commandstats", "Commandstats"),
    ("errorstats", "Errorstats"),
    ("latencystats", "Latencystats"),
    ("cluster", "Cluster"),
    ("keyspace", "Keyspace"),
];

/// Sections INFO prints with no argument (or `default`).
fn is_default_section(name: &str) -> bool {
    !matches!(name, "commandstats" | "latencystats")
}

fn info(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let wanted: Vec<String> = args[1..]
        .iter()
        .map(|a| lossy(a).to_ascii_lowercase())
        .collect();
    let wanted: Vec<&str> = wanted.iter().map(String::as_str).collect();
    Ok(Reply::Verbatim(ctx.engine.info(&wanted)))
}

impl Engine {
    /// The text INFO replies with for these sections (lowercase names, or `default`, `all`,
    /// `everything`; none means `default`): Redis's layout, `# Title` then `key:value`
    /// lines, sections separated by a blank line, every line ending in CRLF. Unknown
    /// sections are ignored.
    ///
    /// What the engine cannot measure it reports as Redis reports an idle, fresh server
    /// (0, `ok`); `used_memory` is the process's resident set size, and commandstats count
    /// calls only (`usec=0`).
    pub fn info(&self, sections: &[&str]) -> String {
        let pick = |name: &str| {
            if sections.is_empty() {
                return is_default_section(name);
            }
            sections.iter().any(|&s| match s {
                "all" | "everything" => true,
                "default" => is_default_section(name),
                s => s == name,
            })
        };
        let mut out = String::new();
        for &(section, title) in SECTIONS.iter().filter(|(s, _)| pick(s)) {
            if !out.is_empty() {
                out.push_str("\r\n");
            }
            let _ = write!(out, "# {title}\r\n");
            for (k, v) in self.info_section(section) {
                let _ = write!(out, "{k}:{v}\r\n");
            }
        }
        out
    }

    fn info_section(&self, section: &str) -> Vec<(String, String)> {
        let mut lines: Vec<(String, String)> = Vec::new();
        let mut put = |k: &str, v: String| lines.push((k.to_string(), v));
        let server = self.server();
        match section {
            "server" => {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap_or_default();
                let uptime = self.inner().started.elapsed().as_secs();
                put("redis_version", VERSION.into());
                put("redis_git_sha1", "00000000".into());
                put("redis_git_dirty", "0".into());
                put("redis_build_id", "0".into());
                put("redis_mode", "standalone".into());
                put(
                    "os",
                    format!("{} {}", std::env::consts::OS, std::env::consts::ARCH),
                );
                put("arch_bits", usize::BITS.to_string());
                put("monotonic_clock", "POSIX clock_gettime".into());
                put("multiplexing_api", "tokio".into());
                put("atomicvar_api", "c11-builtin".into());
                put("gcc_version", "0.0.0".into());
                put("process_id", std::process::id().to_string());
                put("process_supervised", "no".into());
                put("run_id", server.run_id.clone());
                put("tcp_port", server.get(Param::PORT));
                put("server_time_usec", now.as_micros().to_string());
                put("uptime_in_seconds", uptime.to_string());
                put("uptime_in_days", (uptime / 86400).to_string());
                put("hz", server.get(Param::HZ));
                put("configured_hz", server.get(Param::HZ));
                // Redis's LRU clock: seconds, 24 bits.
                put("lru_clock", (now.as_secs() & ((1 << 24) - 1)).to_string());
                put(
                    "executable",
                    std::env::current_exe()
                        .map(|p| p.display().to_string())
                        .unwrap_or_default(),
                );
                put("config_file", String::new());
                put("io_threads_active", "0".into());
                put("edgebench_version", env!("CARGO_PKG_VERSION").into());
            }
            "clients" => {
                put("connected_clients", self.connected_clients().to_string());
                put("cluster_connections", "0".into());
                put("maxclients", server.get(Param::MAXCLIENTS));
                put("client_recent_max_input_buffer", "0".into());
                put("client_recent_max_output_buffer", "0".into());
                put("blocked_clients", self.blocked_clients().to_string());
                put("tracking_clients", "0".into());
                put(
                    "clients_in_timeout_table",
                    self.blocked_clients().to_string(),
                );
            }
            "memory" => {
                let rss = process_rss_bytes();
                let peak = server
                    .peak_memory
                    .fetch_max(rss, Ordering::Relaxed)
                    .max(rss);
                let total = total_system_memory();
                let maxmemory = server.number(Param::MAXMEMORY);
                put("used_memory", rss.to_string());
                put("used_memory_human", bytes_to_human(rss));
                put("used_memory_rss", rss.to_string());
                put("used_memory_rss_human", bytes_to_human(rss));
                put("used_memory_peak", peak.to_string());
                put("used_memory_peak_human", bytes_to_human(peak));
                put(
                    "used_memory_peak_perc",
                    format!("{:.2}%", percent(rss, peak)),
                );
                put("used_memory_overhead", "0".into());
                put("used_memory_startup", "0".into());
                put("used_memory_dataset", rss.to_string());
                put("used_memory_dataset_perc", "100.00%".into());
                put("total_system_memory", total.to_string());
                put("total_system_memory_human", bytes_to_human(total));
                put("used_memory_lua", "0".into());
                put("used_memory_scripts", "0".into());
                put("maxmemory", maxmemory.to_string());
                put("maxmemory_human", bytes_to_human(maxmemory));
                put("maxmemory_policy", server.get(Param::MAXMEMORY_POLICY));
                put("mem_fragmentation_ratio", "1.00".into());
                put("mem_fragmentation_bytes", "0".into());
                put("mem_allocator", "libc".into());
                put("lazyfree_pending_objects", "0".into());
            }
            "persistence" => {
                put("loading", "0".into());
                put("async_loading", "0".into());
                put("rdb_changes_since_last_save", "0".into());
                put("rdb_bgsave_in_progress", "0".into());
                put("rdb_last_save_time", server.started_unix_s.to_string());
                put("rdb_last_bgsave_status", "ok".into());
                put("rdb_saves", "0".into());
                put("aof_enabled", "0".into());
                put("aof_rewrite_in_progress", "0".into());
                put("aof_rewrite_scheduled", "0".into());
                put("aof_last_bgrewrite_status", "ok".into());
                put("aof_last_write_status", "ok".into());
            }
            "stats" => {
                let stats = self.stats();
                let n = |a: &AtomicU64| a.load(Ordering::Relaxed).to_string();
                put("total_connections_received", n(&stats.connections));
                put("total_commands_processed", n(&stats.commands));
                put("instantaneous_ops_per_sec", "0".into());
                put("total_net_input_bytes", "0".into());
                put("total_net_output_bytes", "0".into());
                put("rejected_connections", "0".into());
                put("expired_keys", n(&stats.expired_keys));
                put("evicted_keys", "0".into());
                put("keyspace_hits", "0".into());
                put("keyspace_misses", "0".into());
                put("pubsub_channels", "0".into());
                put("pubsub_patterns", "0".into());
                put("latest_fork_usec", "0".into());
                put("total_forks", "0".into());
                put("total_error_replies", "0".into());
            }
            "replication" => {
                put("role", "master".into());
                put("connected_slaves", "0".into());
                put("master_failover_state", "no-failover".into());
                put("master_replid", server.run_id.clone());
                put("master_replid2", "0".repeat(40));
                put("master_repl_offset", "0".into());
                put("second_repl_offset", "-1".into());
                put("repl_backlog_active", "0".into());
                put("repl_backlog_size", "1048576".into());
                put("repl_backlog_first_byte_offset", "0".into());
                put("repl_backlog_histlen", "0".into());
            }
            "cpu" => {
                let (user, sys) = cpu_seconds();
                put("used_cpu_sys", format!("{sys:.6}"));
                put("used_cpu_user", format!("{user:.6}"));
                put("used_cpu_sys_children", "0.000000".into());
                put("used_cpu_user_children", "0.000000".into());
            }
            "commandstats" => {
                let mut calls: Vec<(&str, u64)> = all_commands()
                    .zip(server.calls.iter())
                    .map(|(spec, n)| (spec.name, n.load(Ordering::Relaxed)))
                    .filter(|&(_, n)| n > 0)
                    .collect();
                calls.sort_unstable();
                for (name, n) in calls {
                    put(
                        &format!("cmdstat_{name}"),
                        format!(
                            "calls={n},usec=0,usec_per_call=0.00,rejected_calls=0,failed_calls=0"
                        ),
                    );
                }
            }
            "cluster" => put("cluster_enabled", "0".into()),
            "keyspace" => {
                for (i, (keys, expires)) in self.keyspace_counts().into_iter().enumerate() {
                    if keys > 0 {
                        put(
                            &format!("db{i}"),
                            format!("keys={keys},expires={expires},avg_ttl=0"),
                        );
                    }
                }
            }
            // modules, errorstats, latencystats: nothing to report.
            _ => {}
        }
        lines
    }

    /// (keys, keys with a TTL) of every database. Locks one whole database at a time while
    /// holding nothing else, so it cannot close a lock cycle with another caller. It must not
    /// run while the caller holds shards itself (inside an EXEC that locked the queue's keys).
    pub fn keyspace_counts(&self) -> Vec<(usize, usize)> {
        let now = self.now_ms();
        (0..DATABASES)
            .map(|i| {
                let mut ks = self.db(i).lock_all(now);
                let keys = ks.keys();
                let expires = keys
                    .iter()
                    .filter(|k| ks.get(k).is_some_and(|e| e.expires_at_ms.is_some()))
                    .count();
                (keys.len(), expires)
            })
            .collect()
    }
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// Redis's `bytesToHuman`: `1013.70K`, `11.63M`, `512B`.
pub fn bytes_to_human(n: u64) -> String {
    const UNITS: [(u64, &str); 5] = [
        (1 << 50, "P"),
        (1 << 40, "T"),
        (1 << 30, "G"),
        (1 << 20, "M"),
        (1 << 10, "K"),
    ];
    UNITS.iter().find(|(size, _)| n >= *size).map_or_else(
        || format!("{n}B"),
        |(size, unit)| format!("{:.2}{unit}", n as f64 / *size as f64),
    )
}

/// The process's resident set size: what INFO reports as `used_memory` (the engine does
/// not account memory per value). 0 where `/proc` is not available.
fn process_rss_bytes() -> u64 {
    let Ok(statm) = std::fs::read_to_string("/proc/self/statm") else {
        return 0;
    };
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    pages.saturating_mul(u64::try_from(page).unwrap_or(4096))
}

/// MemTotal from `/proc/meminfo`, in bytes; 0 where it is not available.
fn total_system_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb.saturating_mul(1024))
}

/// (user, system) CPU seconds of this process, from `getrusage`.
fn cpu_seconds() -> (f64, f64) {
    // SAFETY: `rusage` is plain data, valid when zeroed; getrusage writes only into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pointer is to a live, writable `rusage`.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return (0.0, 0.0);
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (secs(usage.ru_utime), secs(usage.ru_stime))
}

/// 40 random hex digits (the run id), from std's randomly keyed hasher.
fn random_hex40() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut out = String::with_capacity(48);
    for i in 0..3u64 {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(i);
        let _ = write!(out, "{:016x}", h.finish());
    }
    out.truncate(40);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_ignore_case() {
        assert!(glob_match_nocase(b"MAX*", "maxmemory"));
        assert!(glob_match_nocase(b"maxmemory-p?licy", "maxmemory-policy"));
        assert!(glob_match_nocase(b"[A-Z]z", "hz"));
        assert!(!glob_match_nocase(b"max*", "hz"));
    }

    #[test]
    fn memory_values_parse_like_memtoull() {
        assert_eq!(memtoull(b"0"), Some(0));
        assert_eq!(memtoull(b""), Some(0));
        assert_eq!(memtoull(b"1k"), Some(1000));
        assert_eq!(memtoull(b"1KB"), Some(1024));
        assert_eq!(memtoull(b"2mb"), Some(2 << 20));
        assert_eq!(memtoull(b"1g"), Some(1_000_000_000));
        assert_eq!(memtoull(b"-1"), None);
        assert_eq!(memtoull(b"1x"), None);
        assert_eq!(memtoull(b"99999999999999999999"), Some(u64::MAX));
        assert_eq!(memtoull(b"99999999999999999999gb"), None);
    }

    #[test]
    fn save_parses_like_redis() {
        assert_eq!(parse_save(b""), Some(String::new()));
        assert_eq!(parse_save(b"900 1"), Some("900 1".into()));
        assert_eq!(parse_save(b"1 "), Some("1 0".into()));
        assert_eq!(parse_save(b"1 2 3"), None);
        assert_eq!(parse_save(b"0 1"), None);
        assert_eq!(parse_save(b"1 -1"), None);
        assert_eq!(parse_save(b" 5  6 "), None);
    }

    #[test]
    fn bytes_print_like_bytes_to_human() {
        assert_eq!(bytes_to_human(0), "0B");
        assert_eq!(bytes_to_human(1023), "1023B");
        assert_eq!(bytes_to_human(1038032), "1013.70K");
        assert_eq!(bytes_to_human(12193792), "11.63M");
    }

    #[test]
    fn param_indices_name_their_params() {
        assert_eq!(PARAMS[Param::HZ].name, "hz");
        assert_eq!(PARAMS[Param::MAXCLIENTS].name, "maxclients");
        assert_eq!(PARAMS[Param::MAXMEMORY].name, "maxmemory");
        assert_eq!(PARAMS[Param::MAXMEMORY_POLICY].name, "maxmemory-policy");
        assert_eq!(PARAMS[Param::PORT].name, "port");
        assert_eq!(PARAMS[Param::PROTO_MAX_BULK_LEN].name, "proto-max-bulk-len");
        assert_eq!(PARAMS[Param::REQUIREPASS].name, "requirepass");
        for p in PARAMS {
            assert_eq!(
                p.parse(p.default.as_bytes()).as_deref(),
                Ok(p.default),
                "{}",
                p.name
            );
        }
    }

    #[test]
    fn run_ids_are_forty_hex_digits() {
        let id = random_hex40();
        assert_eq!(id.len(), 40);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(id, random_hex40());
    }
}

//! Lua scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO, SCRIPT, and Redis 7's functions
//! (FUNCTION, FCALL, FCALL_RO, in `function`), on Lua 5.1 as Redis embeds it.
//!
//! **One VM, one script at a time.** As in Redis, every script runs in one Lua VM per engine
//! (behind [`Scripting`]'s mutex), so scripts never run concurrently and the script cache and
//! function libraries live in that VM.
//!
//! **Atomicity.** A script may touch keys it did not declare (Redis only asks for them), so it
//! cannot lock by its key arguments. It locks every shard of its database for its whole run
//! (the VM first, then the shards, always in that order, so two scripts cannot deadlock), and
//! its `redis.call`s run each command's `run` directly on those held locks ([`Ctx`] of the
//! script): no command inside a script locks again. Commands that reach other databases
//! (SELECT, MOVE, SWAPDB, FLUSHALL, COPY ... DB, INFO) would have to lock more while holding
//! this database, so scripts get Redis's "not allowed from script" error for them; EXEC runs a
//! queued script outside the transaction's locks (see `tx`).
//!
//! **Busy scripts.** Other clients do not queue on the shard mutexes: a [`gate::Gate`] tells
//! every command, in one relaxed atomic load, whether a script runs; if so it waits for the
//! script, and once the script has run longer than `busy-reply-threshold` it gets `-BUSY`
//! (SCRIPT KILL, FUNCTION KILL and the other `allow-busy` commands pass). A Lua count hook,
//! every [`HOOK_INSTRUCTIONS`] instructions, marks the script busy when its time is up and
//! raises Redis's kill error once SCRIPT KILL or FUNCTION KILL asked, unless it wrote.
//!
//! Errors and conversions follow Redis 7.0.15 byte for byte: see [`convert`] and the Lua
//! prelude (`prelude.lua`), which builds the sandbox (read-only globals and libraries, no
//! `os`, `io`, `loadfile`, `dofile`, `print`) and the error handler that names the user's line.

pub mod convert;
mod function;
pub mod gate;
mod guard;
pub mod libs;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, TryLockError};
use std::time::{Duration, Instant};

use mlua::{Function, HookTriggers, Lua, LuaOptions, StdLib, Table, Value, Variadic, VmState};
use sha1::{Digest, Sha1};

use self::gate::{Gate, Pass};
use super::server::common::{err, err_owned, help, lossy, sub_arity, unknown_subcommand, VERSION};
use super::{is, lookup_indexed, parse_i64, spec, Ctx, KeySpec, Spec};
use crate::engine::acl;
use crate::engine::error::CmdError;
use crate::engine::handle::{Engine, DATABASES};
use crate::engine::keyspace::Locked;
use crate::resp::format_f64;
use crate::resp::reply::Reply;

/// The scripting commands.
pub const COMMANDS: &[Spec] = &[
    spec("eval", -3, KeySpec::None, false, eval),
    spec("evalsha", -3, KeySpec::None, false, evalsha),
    spec("eval_ro", -3, KeySpec::None, false, eval_ro),
    spec("evalsha_ro", -3, KeySpec::None, false, evalsha_ro),
    spec("script", -2, KeySpec::None, false, script),
    spec("function", -2, KeySpec::None, false, function::function),
    spec("fcall", -3, KeySpec::None, false, function::fcall),
    spec("fcall_ro", -3, KeySpec::None, false, function::fcall_ro),
];

/// How often (in Lua instructions) a script checks its time and the kill flag.
pub const HOOK_INSTRUCTIONS: u32 = 10_000;

const PRELUDE: &str = include_str!("prelude.lua");

/// The most memory the Lua VM may hold (scripts, cached scripts, libraries): past it an
/// allocation fails with Lua's "not enough memory" error, which the script's caller gets.
pub const LUA_MEMORY_LIMIT: usize = 1 << 30;

/// The engine's scripting state: the gate every command checks, and the VM.
#[derive(Default)]
pub struct Scripting {
    /// Whether a script runs, is busy, wrote, was asked to stop.
    pub gate: Arc<Gate>,
    /// The VM, made on first use (most engines never run a script).
    vm: Mutex<Option<Vm>>,
    /// FUNCTION STATS's figures.
    functions: Mutex<function::FunctionStatus>,
    /// INFO memory's figures, kept beside the VM as FUNCTION STATS's are (see [`Figures`]).
    figures: Figures,
}

/// What INFO memory reports of scripting, noted after each change to the script cache, so
/// INFO never waits for the VM.
#[derive(Debug, Default)]
struct Figures {
    /// EVAL scripts in the cache (`number_of_cached_scripts`).
    cached_scripts: AtomicUsize,
}

/// Scripting's counts for INFO memory: the script cache and the functions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScriptingMemory {
    /// EVAL scripts cached.
    pub cached_scripts: usize,
    /// Functions loaded.
    pub functions: usize,
    /// Function libraries loaded.
    pub libraries: usize,
}

impl std::fmt::Debug for Scripting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scripting").finish_non_exhaustive()
    }
}

/// The Lua VM with its script cache and function libraries.
pub(crate) struct Vm {
    lua: Lua,
    /// The prelude's private table (`run`, `compile`, `dispatch`, `resp`...).
    e: Table,
    /// EVAL's cache: sha1 (lowercase hex) → compiled script.
    scripts: HashMap<String, Cached>,
    /// FUNCTION's libraries.
    pub(crate) libraries: function::Libraries,
}

/// A compiled EVAL script and what its `#!lua` line said.
#[derive(Clone)]
struct Cached {
    f: Function,
    /// Its source mentions SELECT (see [`Run::selects`]).
    selects: bool,
    /// What its `#!lua` line declared; `None` without one (Redis's compatibility mode).
    declared: Option<Declared>,
}

/// The flags a script declared (a `#!lua flags=...` line, `redis.register_function`) that
/// change how the server treats the command running it (Redis's `scriptFlagsToCmdFlags`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Declared {
    /// `no-writes`: it may not write, so it is neither a write nor refused when over
    /// `maxmemory`.
    pub no_writes: bool,
    /// `allow-oom`: it runs even when over `maxmemory`.
    pub allow_oom: bool,
}

impl Declared {
    /// From a function's or a shebang's list of flag names.
    fn from_names<'a>(names: impl IntoIterator<Item = &'a str>) -> Declared {
        names
            .into_iter()
            .fold(Declared::default(), |d, name| Declared {
                no_writes: d.no_writes || name == "no-writes",
                allow_oom: d.allow_oom || name == "allow-oom",
            })
    }
}

/// The flags a `#!lua` line or `redis.register_function` may give.
pub(crate) const SCRIPT_FLAGS: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

/// An EVAL script's `#!lua flags=...` line: its length, and what it declared (`None`
/// without one).
fn shebang(body: &[u8]) -> Result<(usize, Option<Declared>), CmdError> {
    if !body.starts_with(b"#!") {
        return Ok((0, None));
    }
    let Some(end) = body.iter().position(|&c| c == b'\n') else {
        return Err(err("ERR Invalid script shebang"));
    };
    let line = lossy(&body[..end]);
    let mut parts = line.split_ascii_whitespace();
    let engine = parts.next().unwrap_or("");
    if engine != "#!lua" {
        return Err(err_owned(format!(
            "ERR Unexpected engine in script shebang: {engine}"
        )));
    }
    let mut names = Vec::new();
    for part in parts {
        let Some(flags) = part.strip_prefix("flags=") else {
            return Err(err_owned(format!("ERR Unknown lua shebang option: {part}")));
        };
        for flag in flags.split(',') {
            if !SCRIPT_FLAGS.contains(&flag) {
                return Err(err_owned(format!(
                    "ERR Unexpected flag in script shebang: {flag}"
                )));
            }
            names.push(flag);
        }
    }
    Ok((end, Some(Declared::from_names(names))))
}

impl Vm {
    fn new() -> mlua::Result<Vm> {
        // SAFETY: `debug` is loaded for the prelude's error handler only; the prelude keeps
        // `debug.getinfo` in a local and the global is removed below, out of scripts' reach.
        let lua = unsafe {
            Lua::unsafe_new_with(
                StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::DEBUG,
                LuaOptions::default(),
            )
        };
        let e = lua.create_table()?;
        let native = lua.create_table()?;
        native.raw_set("libs", libs::natives(&lua)?)?;
        native.raw_set("version", VERSION)?;
        native.raw_set("metatable_guards", lua.create_function(guard::closures)?)?;
        native.raw_set("version_num", version_num(VERSION))?;
        native.raw_set(
            "sha1hex",
            lua.create_function(|lua, v: Value| {
                let bytes = match &v {
                    Value::String(s) => s.as_bytes().to_vec(),
                    v => convert::number(v)
                        .map(|n| lua_number_text(n).into_bytes())
                        .unwrap_or_default(),
                };
                lua.create_string(sha1_hex(&bytes))
            })?,
        )?;
        for (name, trampoline) in [
            ("wrap", raise_or_return as mlua::ffi::lua_CFunction),
            (
                "wrap_where",
                raise_where_or_return as mlua::ffi::lua_CFunction,
            ),
        ] {
            native.raw_set(
                name,
                lua.create_function(move |lua, f: Function| {
                    // SAFETY: pushes one C closure over the one argument `exec_raw` put on
                    // the stack; the trampolines only use the Lua C API on their own stack.
                    unsafe {
                        lua.exec_raw::<Function>(f, |state| {
                            mlua::ffi::lua_pushcclosure(state, trampoline, 1);
                        })
                    }
                })?,
            )?;
        }
        lua.load(PRELUDE)
            .set_name("=edgebench")
            .call::<()>((e.clone(), native))?;
        // Scripts are arbitrary code: cap what they can allocate (string.rep('x', 1e10), a
        // table grown forever) so one cannot take the process's memory.
        lua.set_memory_limit(LUA_MEMORY_LIMIT)?;
        let globals = lua.globals();
        for name in [
            "debug", "loadfile", "dofile", "print", "setfenv", "getfenv", "newproxy", "module",
            "require", "package", "os", "io",
        ] {
            globals.raw_set(name, Value::Nil)?;
        }
        Ok(Vm {
            lua,
            e,
            scripts: HashMap::new(),
            libraries: function::Libraries::default(),
        })
    }

    /// Compiles `body` in the sandbox under `chunk` (`@user_script`...): the function, or
    /// Lua's message.
    fn compile(&self, body: &[u8], chunk: &str) -> Result<Function, String> {
        let compile: Function = self.e.raw_get("compile").map_err(|e| e.to_string())?;
        let body = self.lua.create_string(body).map_err(|e| e.to_string())?;
        let (f, msg): (Option<Function>, Option<String>) =
            compile.call((body, chunk)).map_err(|e| e.to_string())?;
        f.ok_or_else(|| msg.unwrap_or_default())
    }
}

/// The C closure `wrap` makes: calls its upvalue with the arguments; on `(true, ...)` returns
/// the rest, on `(false, e)` raises `e` (a C function raising keeps no Lua frame of its own
/// and no position in the message, as Redis's C functions).
unsafe extern "C-unwind" fn raise_or_return(
    state: *mut mlua::ffi::lua_State,
) -> std::os::raw::c_int {
    // SAFETY: called by Lua with `state` live.
    unsafe { call_upvalue(state, false) }
}

/// Like [`raise_or_return`], with the caller's position before a string error, as C
/// libraries' `luaL_error` gives it (`user_script:1: Cannot serialise ...`).
unsafe extern "C-unwind" fn raise_where_or_return(
    state: *mut mlua::ffi::lua_State,
) -> std::os::raw::c_int {
    // SAFETY: called by Lua with `state` live.
    unsafe { call_upvalue(state, true) }
}

/// The trampolines' body.
///
/// # Safety
/// `state` is a live Lua state running a C closure with the implementation as upvalue 1.
unsafe fn call_upvalue(state: *mut mlua::ffi::lua_State, position: bool) -> std::os::raw::c_int {
    use mlua::ffi;
    // SAFETY: the caller's contract; the stack holds the arguments.
    unsafe {
        let n = ffi::lua_gettop(state);
        ffi::lua_pushvalue(state, ffi::lua_upvalueindex(1));
        ffi::lua_insert(state, 1);
        ffi::lua_call(state, n, ffi::LUA_MULTRET);
        let results = ffi::lua_gettop(state);
        if results >= 1 && ffi::lua_toboolean(state, 1) == 0 {
            ffi::lua_settop(state, 2);
            if position && ffi::lua_type(state, 2) == ffi::LUA_TSTRING {
                ffi::luaL_where(state, 1);
                ffi::lua_insert(state, 2);
                ffi::lua_concat(state, 2);
            }
            // Does not return: unwinds to the protected call.
            ffi::lua_error(state)
        }
        if results == 0 {
            return 0;
        }
        ffi::lua_remove(state, 1);
        results - 1
    }
}

/// `redis.REDIS_VERSION_NUM`: the version as `0x00MMmmpp` (Redis's `REDIS_VERSION_NUM`).
fn version_num(version: &str) -> u32 {
    version.split('.').take(3).fold(0, |n, part| {
        (n << 8) | part.parse::<u32>().unwrap_or(0) & 0xff
    })
}

/// Lua's own text for a number (`%.14g`), as `tostring` gives it.
fn lua_number_text(n: f64) -> String {
    libs::format_g(n, 14)
}

/// SHA-1 of `bytes` in lowercase hex, as SCRIPT LOAD and `redis.sha1hex` give it.
pub fn sha1_hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let digest = Sha1::digest(bytes);
    let mut out = String::with_capacity(40);
    for b in digest {
        let _ = write!(out, "{b:02x}");
    }
    out
}

impl Scripting {
    /// The VM, once no script holds it. Waits at the gate like any command while a young
    /// script runs, and gets BUSY once it is old, rather than queueing on the VM's mutex
    /// where no BUSY reply could reach it.
    fn vm(&self) -> Result<MutexGuard<'_, Option<Vm>>, CmdError> {
        loop {
            match self.vm.try_lock() {
                Ok(guard) => return self.made(guard),
                Err(TryLockError::Poisoned(p)) => return self.made(p.into_inner()),
                Err(TryLockError::WouldBlock) => {
                    if let Pass::Busy(text) = self.gate.wait(false) {
                        return Err(err(text));
                    }
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        }
    }

    /// Notes the VM's figures for INFO (after the script cache changed).
    fn note(&self, vm: &Vm) {
        let figures = &self.figures;
        figures
            .cached_scripts
            .store(vm.scripts.len(), Ordering::Relaxed);
    }

    fn made<'a>(
        &self,
        mut guard: MutexGuard<'a, Option<Vm>>,
    ) -> Result<MutexGuard<'a, Option<Vm>>, CmdError> {
        if guard.is_none() {
            let vm = Vm::new().map_err(|e| err_owned(format!("ERR cannot start Lua: {e}")))?;
            *guard = Some(vm);
        }
        Ok(guard)
    }
}

impl Engine {
    /// The code of every function library, in load order (a snapshot's FUNCTION2 records).
    /// Waits for a running script like any command; empty if the VM was never made.
    pub(crate) fn library_codes(&self) -> Vec<Vec<u8>> {
        let scripting = &self.inner().scripting;
        loop {
            match scripting.vm.try_lock() {
                Ok(guard) => {
                    return guard
                        .as_ref()
                        .map(|vm| vm.libraries.codes())
                        .unwrap_or_default()
                }
                Err(TryLockError::Poisoned(p)) => {
                    return p
                        .into_inner()
                        .as_ref()
                        .map(|vm| vm.libraries.codes())
                        .unwrap_or_default()
                }
                Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_micros(200)),
            }
        }
    }

    /// Stops the running script, if any, because the server shuts down (SIGTERM, SHUTDOWN
    /// NOSAVE): as SCRIPT KILL, but also a script that wrote. What such a script did stays
    /// out of the append-only file (its writes are fed when it ends) and the engine will not
    /// save an RDB file of its half-done state. A script that runs without the kill hook
    /// (`busy-reply-threshold 0`) runs on.
    pub fn stop_script_for_shutdown(&self) {
        let gate = &self.inner().scripting.gate;
        if gate.quiet() {
            return;
        }
        if gate.wrote.load(Ordering::Relaxed) {
            self.note_half_done_script();
        }
        gate.kill.store(true, Ordering::Relaxed);
    }

    /// Scripting's figures for INFO memory, as last noted (see [`ScriptingMemory`]).
    pub fn scripting_memory(&self) -> ScriptingMemory {
        let scripting = &self.inner().scripting;
        let (functions, libraries) = scripting.functions_loaded();
        ScriptingMemory {
            cached_scripts: scripting.figures.cached_scripts.load(Ordering::Relaxed),
            functions,
            libraries,
        }
    }

    /// Whether a script runs now (one relaxed load).
    pub fn script_running(&self) -> bool {
        !self.inner().scripting.gate.quiet()
    }
}

/// The engine's scripting state.
pub(crate) fn scripting(engine: &Engine) -> &Scripting {
    &engine.inner().scripting
}

/// Commands Redis runs while a script is busy (`allow-busy`).
pub fn allowed_when_busy(spec: &Spec, args: &[&[u8]]) -> bool {
    match spec.name {
        "auth" | "hello" | "quit" | "reset" | "shutdown" | "discard" | "multi" | "unwatch"
        | "watch" => true,
        "script" => args.get(1).is_some_and(|s| is(s, "kill")),
        "function" => args.get(1).is_some_and(|s| is(s, "kill") || is(s, "stats")),
        _ => false,
    }
}

/// The gate's slow path for a command arriving while a script runs.
pub fn wait_for_script(engine: &Engine, spec: &Spec, args: &[&[u8]]) -> Option<Reply> {
    match scripting(engine).gate.wait(allowed_when_busy(spec, args)) {
        Pass::Go => None,
        Pass::Busy(text) => Some(Reply::err(text)),
    }
}

/// What the script or function an EVAL, EVALSHA, FCALL (or their _RO forms) request runs
/// declared, which decides whether the request is a write and may be refused when over
/// `maxmemory` (Redis's `evalGetCommandFlags`, `fcallGetCommandFlags`). `None` for a script
/// without a `#!lua` line, one not cached, a function not loaded, or another command: the
/// command's own flags hold. Takes the VM for EVALSHA and FCALL (waiting for a running
/// script as any command does), so the command path asks only when a refusal is possible.
pub(crate) fn declared_flags(engine: &Engine, spec: &Spec, args: &[&[u8]]) -> Option<Declared> {
    let body = args.get(1)?;
    match spec.name {
        "eval" | "eval_ro" => shebang(body).ok()?.1,
        "evalsha" | "evalsha_ro" | "fcall" | "fcall_ro" => {
            let guard = scripting(engine).vm().ok()?;
            let vm = guard.as_ref()?;
            if spec.name.starts_with("fcall") {
                vm.libraries.declared(&lossy(body))
            } else {
                let sha = lossy(body).to_ascii_lowercase();
                vm.scripts.get(&sha)?.declared
            }
        }
        _ => None,
    }
}

/// Commands Redis refuses inside scripts (`noscript`), and those the engine refuses because
/// they reach other databases (see the module doc).
fn not_allowed_in_script(name: &str, args: &[&[u8]]) -> bool {
    let sub = |list: &[&str]| args.get(1).is_some_and(|s| list.iter().any(|w| is(s, w)));
    match name {
        "auth" | "hello" | "quit" | "reset" | "wait" | "blmove" | "blpop" | "brpop"
        | "brpoplpush" | "bzpopmax" | "bzpopmin" | "eval" | "evalsha" | "evalsha_ro"
        | "eval_ro" | "fcall" | "fcall_ro" | "bgrewriteaof" | "bgsave" | "debug" | "failover"
        | "monitor" | "psync" | "replconf" | "replicaof" | "role" | "save" | "shutdown"
        | "slaveof" | "sync" | "discard" | "exec" | "multi" | "unwatch" | "watch" | "subscribe"
        | "psubscribe" | "ssubscribe" | "unsubscribe" | "punsubscribe" | "sunsubscribe" => true,
        "select" | "move" | "swapdb" | "flushall" | "info" => true,
        "copy" => args.iter().any(|a| is(a, "db")),
        // The engine has no CLUSTER command; Redis's `noscript` subcommand gets its answer.
        "cluster" => sub(&["reset"]),
        "client" => sub(&[
            "caching",
            "getname",
            "getredir",
            "id",
            "info",
            "kill",
            "list",
            "no-evict",
            "pause",
            "reply",
            "setname",
            "tracking",
            "trackinginfo",
            "unblock",
            "unpause",
        ]),
        "function" => sub(&[
            "delete", "dump", "flush", "kill", "list", "load", "restore", "stats",
        ]),
        "script" => sub(&["debug", "exists", "flush", "kill", "load"]),
        "config" => sub(&["get", "resetstat", "rewrite", "set"]),
        _ => false,
    }
}

// ---- running a script ----

/// What is running: an EVAL script (by sha) or a function (by name).
pub(crate) struct Run<'a> {
    /// The name errors give after "script:" (the sha, or the function's name).
    pub name: &'a str,
    /// A function (FCALL), not an EVAL script.
    pub function: bool,
    /// Write commands are refused (EVAL_RO, FCALL_RO, `no-writes`).
    pub read_only: bool,
    /// `allow-oom`: commands that may grow memory run even over `maxmemory`.
    pub allow_oom: bool,
    /// Its source mentions `select`: it runs holding every database, so that SELECT can
    /// switch among them (Redis 7.0 lets a script SELECT, for the rest of the script only).
    /// A script locks its own database's shards; one that may SELECT locks every database
    /// up front, in the one order every other caller takes them, which cannot deadlock,
    /// where locking another database in the middle of the script could. A script that
    /// builds the word at run time gets the engine's refusal.
    pub selects: bool,
}

/// Whether script or library code mentions `select` in any case.
pub(crate) fn mentions_select(code: &[u8]) -> bool {
    code.windows(6).any(|w| w.eq_ignore_ascii_case(b"select"))
}

/// Runs `f` with `keys` and `argv` as `run` says, atomically: see the module doc.
pub(crate) fn run_script(
    ctx: &mut Ctx<'_, '_>,
    vm: &Vm,
    f: &Function,
    keys: &[&[u8]],
    argv: &[&[u8]],
    run: &Run<'_>,
) -> Reply {
    let engine = ctx.engine;
    let gate = Arc::clone(&scripting(engine).gate);
    let threshold = engine
        .config_get("busy-reply-threshold")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(5000);
    gate.enter(run.function);
    // Declared before the locks, so it opens the gate after they are released.
    let _leave = Leave(&gate);
    let now = engine.now_ms();
    let caller_db = ctx.client.db;
    // Every database, locked in ascending order, for a script that may SELECT; else its own.
    let mut others: Option<Vec<Option<Locked<'_>>>> = run.selects.then(|| {
        (0..DATABASES)
            .map(|i| Some(engine.db(i).lock_all(now)))
            .collect()
    });
    let own = match others.as_mut() {
        Some(all) => all[caller_db].take(),
        None => None,
    };
    let mut inner = Ctx {
        engine,
        client: &mut *ctx.client,
        ks: own.unwrap_or_else(|| engine.db(caller_db).lock_all(now)),
    };
    let site = KillSite::default();
    if threshold > 0 {
        install_hook(&vm.lua, &gate, Duration::from_millis(threshold), &site);
    }
    let saved_resp = inner.client.resp;
    inner.client.in_script = true;
    let result = vm.lua.scope(|scope| {
        let e = vm.e.clone();
        let error_table: Function = vm.e.raw_get("error_table")?;
        let check_errors = error_table.clone();
        let user = inner.client.user.clone();
        let packed: Table = vm.e.raw_get("packed")?;
        let gate = &gate;
        let inner = &mut inner;
        let others = &mut others;
        let dispatch = scope.create_function_mut(move |lua, args: Variadic<Value>| {
            let mut args = args.into_iter();
            let resp = args
                .next()
                .as_ref()
                .and_then(convert::number)
                .unwrap_or(2.0);
            let mut args: Vec<Value> = args.collect();
            // Arguments past what a C call takes come packed in a table after the
            // prelude's marker (see `dispatch` in prelude.lua).
            if let [Value::Table(marker), Value::Table(all)] = &args[..] {
                if *marker == packed {
                    let n: usize = all.raw_get("n").unwrap_or(0);
                    args = (1..=n)
                        .map(|i| all.raw_get::<Value>(i))
                        .collect::<mlua::Result<_>>()?;
                }
            }
            redis_call(
                lua,
                Held { ctx: inner, others },
                gate,
                &error_table,
                run,
                resp as u8,
                &args,
            )
        })?;
        e.raw_set("dispatch", dispatch)?;
        let acl_check = scope.create_function(move |_, args: Variadic<Value>| {
            acl_check_cmd(user.as_deref(), &check_errors, &args)
        })?;
        e.raw_set("acl_check", acl_check)?;
        let keys_t = vm.lua.create_sequence_from(
            keys.iter()
                .map(|k| vm.lua.create_string(k))
                .collect::<mlua::Result<Vec<_>>>()?,
        )?;
        let argv_t = vm.lua.create_sequence_from(
            argv.iter()
                .map(|k| vm.lua.create_string(k))
                .collect::<mlua::Result<Vec<_>>>()?,
        )?;
        let runner: Function = e.raw_get("run")?;
        let outcome = runner.call::<(bool, Value)>((f.clone(), keys_t, argv_t, run.function));
        e.raw_set("dispatch", Value::Nil)?;
        e.raw_set("acl_check", Value::Nil)?;
        if gate.kill.load(Ordering::Relaxed) && !matches!(outcome, Ok((true, _))) {
            return Ok((killed(run.name, &site), false));
        }
        let (ok, value) = outcome?;
        let resp3 = e
            .raw_get::<Value>("resp")
            .ok()
            .as_ref()
            .and_then(convert::number)
            == Some(3.0);
        let reply = if ok {
            convert::lua_to_reply(&value, resp3)
        } else {
            failure(&value, run.name)
        };
        Ok((reply, counted_already(&value)))
    });
    vm.lua.remove_hook();
    inner.client.resp = saved_resp;
    inner.client.in_script = false;
    // A SELECT in the script does not change the caller's database.
    inner.client.db = caller_db;
    // Its writes go to the append-only file while its locks are still held; a script the
    // shutdown stopped half way leaves none, so the file replays to the state before it.
    if engine.half_done_script() {
        inner.client.prop.clear();
    }
    super::propagate::feed_held_if_outermost(&mut inner);
    // Keep the Lua heap in step with what scripts free (Redis steps its GC after scripts).
    let _ = vm.lua.gc_step();
    let (reply, counted) = result.unwrap_or_else(|e| {
        let text = format!("ERR Error running script {}, {e}", run.name);
        (Reply::Error(text.into()), false)
    });
    inner.client.error_counted = counted && reply.is_error();
    reply
}

/// The mark a command's error carries into the script (Redis's `ignore_error_stats_update`):
/// INFO counted it when the command failed or was refused, so the script's error reply made
/// of it counts only as the script's failed call.
const COUNTED: &str = "ignore_error_stats_update";

/// Whether a script's error value (raised, or returned as an error table) carries [`COUNTED`].
fn counted_already(value: &Value) -> bool {
    matches!(value, Value::Table(t) if matches!(t.raw_get::<Value>(COUNTED), Ok(Value::Boolean(true))))
}

/// Counts in INFO an error a command called by a script replied (`rejected`: refused before
/// it ran, as Redis's `scriptCall` checks), against the command if it exists: `text` is the
/// error as the script's error table takes it (`-CODE msg`, or a message that gets `ERR`).
fn count_in_script(engine: &Engine, text: &str, index: Option<usize>, rejected: bool) {
    let counted = match text.strip_prefix('-') {
        Some(coded) => coded.to_string(),
        None => format!("ERR {text}"),
    };
    engine.inner().server.count_error(&counted, index, rejected);
}

/// Opens the gate when the script ends, however it ends.
struct Leave<'a>(&'a Gate);

impl Drop for Leave<'_> {
    fn drop(&mut self) {
        self.0.leave();
    }
}

/// Where the count hook stopped a killed script: (chunk source, line), for its error reply.
type KillSite = Arc<Mutex<Option<(String, usize)>>>;

/// The count hook: marks the script busy past `threshold`; once a kill is asked, records
/// where the script was and raises, then raises on every instruction so a `pcall` in the
/// script cannot swallow it.
fn install_hook(lua: &Lua, gate: &Arc<Gate>, threshold: Duration, site: &KillSite) {
    let gate = Arc::clone(gate);
    let site = Arc::clone(site);
    let start = Instant::now();
    let _ = lua.set_hook(
        HookTriggers::new().every_nth_instruction(HOOK_INSTRUCTIONS),
        move |lua, debug| {
            if gate.kill.load(Ordering::Relaxed) {
                let source = debug.source().source.map(|s| s.into_owned());
                let line = debug.current_line();
                if let (Some(source), Some(line)) = (source, line) {
                    *site.lock().unwrap_or_else(PoisonError::into_inner) = Some((source, line));
                }
                let _ = lua.set_hook(HookTriggers::new().every_nth_instruction(1), |_, _| {
                    Err(mlua::Error::runtime("killed"))
                });
                return Err(mlua::Error::runtime("killed"));
            }
            if start.elapsed() >= threshold {
                gate.timed_out();
            }
            Ok(VmState::Continue)
        },
    );
}

/// The reply of a script SCRIPT KILL or FUNCTION KILL stopped (Redis gives the SCRIPT KILL
/// text for both).
fn killed(name: &str, site: &KillSite) -> Reply {
    let mut text = "ERR Script killed by user with SCRIPT KILL...".to_string();
    if let Some((source, line)) = &*site.lock().unwrap_or_else(PoisonError::into_inner) {
        text.push_str(&format!(" script: {name}, on {source}:{line}."));
    }
    Reply::Error(text.into())
}

/// The error reply of a failed script, from the table the prelude's handler made:
/// `<err> script: <name>, on <source>:<line>.`
fn failure(value: &Value, name: &str) -> Reply {
    let Value::Table(t) = value else {
        // Lua calls no handler for an out-of-memory error: the message comes as it is.
        let msg = match value {
            Value::String(s) => lossy(&s.as_bytes()),
            _ => "execution failure".into(),
        };
        let msg: String = msg.chars().take(100).collect();
        return Reply::Error(format!("ERR Error running script {name}, {msg}").into());
    };
    let field = |k: &str| -> Option<String> {
        match t.raw_get::<Value>(k).ok()? {
            Value::String(s) => Some(String::from_utf8_lossy(&s.as_bytes()).into_owned()),
            v => convert::number(&v).map(lua_number_text),
        }
    };
    let mut text = field("err").unwrap_or_default();
    if let (Some(source), Some(line)) = (field("source"), field("line")) {
        text.push_str(&format!(" script: {name}, on {source}:{line}."));
    }
    Reply::Error(text.replace(['\r', '\n'], " ").into())
}

/// What a running script holds: its context (its database's locks), and, for a script
/// that may SELECT, the other databases' locks (see [`Run::selects`]).
struct Held<'a, 'e, 'l> {
    ctx: &'a mut Ctx<'e, 'l>,
    others: &'a mut Option<Vec<Option<Locked<'l>>>>,
}

/// `redis.call` / `redis.pcall`: runs one command on the script's locks. Returns the Lua
/// value and whether it is an error (the prelude raises it for `redis.call`).
fn redis_call(
    lua: &Lua,
    held: Held<'_, '_, '_>,
    gate: &Gate,
    error_table: &Function,
    run: &Run<'_>,
    resp: u8,
    args: &[Value],
) -> mlua::Result<(Value, bool)> {
    let Held { ctx, others } = held;
    let engine = ctx.engine;
    // An error before the command is looked up (Redis's checks before `scriptCall`): not
    // counted in INFO.
    let fail = |text: &str| -> mlua::Result<(Value, bool)> {
        Ok((error_table.call::<Value>(text)?, true))
    };
    // The command at `index` (None: no such command) refused (`rejected`) or failed:
    // counted in INFO now, and marked so that the script's error reply is not counted again.
    let counted = |text: &str, index: Option<usize>, rejected: bool| {
        count_in_script(engine, text, index, rejected);
        let value = error_table.call::<Value>(text)?;
        if let Value::Table(t) = &value {
            t.raw_set(COUNTED, true)?;
        }
        Ok((value, true))
    };
    let argv = match lua_argv(args) {
        Ok(argv) => argv,
        Err(text) => return fail(text),
    };
    let argv: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
    if is(argv[0], "select") {
        if let Some(all) = others.as_mut() {
            return match select_in_script(ctx, all, &argv) {
                Ok(()) => Ok((convert::reply_to_lua(lua, &Reply::ok(), resp == 3)?, false)),
                Err((text, rejected)) => {
                    counted(text, lookup_indexed(b"select").map(|(i, _)| i), rejected)
                }
            };
        }
    }
    let Some((index, spec)) = lookup_indexed(argv[0]) else {
        // The server runs pub/sub itself; scripts get Redis's answers for them.
        let name = lossy(argv[0]).to_ascii_lowercase();
        if not_allowed_in_script(&name, &argv) {
            return counted("This Redis command is not allowed from script", None, true);
        }
        return counted("Unknown Redis command called from script", None, true);
    };
    if !super::arity_ok(spec.arity, argv.len()) {
        return counted(
            "Wrong number of args calling Redis command from script",
            Some(index),
            true,
        );
    }
    if not_allowed_in_script(spec.name, &argv) {
        return counted(
            "This Redis command is not allowed from script",
            Some(index),
            true,
        );
    }
    if ctx.client.acl_restricted() {
        let context = acl::log::Context::Lua;
        if let Some((denied, _)) = acl::refusal(ctx.engine, ctx.client, index, &argv, context) {
            let why = acl::script_text(denied);
            let text = format!("The user executing the script {why}");
            return counted(&text, Some(index), true);
        }
    }
    if matches!(spec.name, "xread" | "xreadgroup") && blocks(&argv) {
        return fail(&format!(
            "-ERR {} command is not allowed with BLOCK option from scripts",
            lossy(argv[0])
        ));
    }
    if spec.write {
        if run.read_only {
            let text = "Write commands are not allowed from read-only scripts.";
            return counted(text, Some(index), true);
        }
        // Short of replicas, the first write is refused; once the script wrote, it is not
        // stopped half way (Redis's `scriptVerifyWriteCommandAllow`).
        let wrote = gate.wrote.load(Ordering::Relaxed);
        if !wrote && ctx.engine.inner().server.replicas_lacking() {
            return counted(&format!("-{}", super::NOREPLICAS), Some(index), true);
        }
    }
    // Over `maxmemory` when the script was called, its first command that may grow memory
    // is refused, unless it declared `allow-oom` (Redis's `scriptVerifyOOM`).
    if ctx.client.over_maxmemory
        && !run.allow_oom
        && !gate.wrote.load(Ordering::Relaxed)
        && super::request_flags(ctx.engine, ctx.client, spec, &argv).denyoom
    {
        return counted(&format!("-{}", super::OOM), Some(index), true);
    }
    if spec.write {
        gate.wrote.store(true, Ordering::Relaxed);
    }
    ctx.engine.inner().server.count_call(index);
    let saved = ctx.client.resp;
    ctx.client.resp = resp;
    let mark = super::propagate::mark();
    let reply = (spec.run)(ctx, &argv).unwrap_or_else(Reply::from);
    super::propagate::after(ctx, spec, &argv, &reply, mark);
    if ctx.client.tracking_reads && super::is_readonly(spec) {
        // The script's declared keys are remembered when it ends (`remember_reads`).
        ctx.client.script_read = true;
    }
    ctx.client.resp = saved;
    match &reply {
        Reply::Error(text) => counted(&format!("-{text}"), Some(index), false),
        reply => Ok((convert::reply_to_lua(lua, reply, resp == 3)?, false)),
    }
}

/// The arguments of `redis.call` and its kin as bytes (numbers as Redis formats them), or
/// Redis's error for none or for one of another type.
fn lua_argv(args: &[Value]) -> Result<Vec<Vec<u8>>, &'static str> {
    if args.is_empty() {
        return Err("Please specify at least one argument for this redis lib call");
    }
    args.iter()
        .map(|a| match a {
            Value::String(s) => Ok(s.as_bytes().to_vec()),
            v => convert::number(v)
                .map(|n| format_f64(n).into_bytes())
                .ok_or("Lua redis lib command arguments must be strings or integers"),
        })
        .collect()
}

/// `redis.acl_check_cmd(...)`: whether the script's user may run the command with these
/// arguments, as (true, boolean), or (false, error) for a command that does not exist.
fn acl_check_cmd(
    user: Option<&acl::UserHandle>,
    error_table: &Function,
    args: &[Value],
) -> mlua::Result<(bool, Value)> {
    let fail = |text: &str| -> mlua::Result<(bool, Value)> {
        Ok((false, error_table.call::<Value>(text)?))
    };
    let argv = match lua_argv(args) {
        Ok(argv) => argv,
        Err(text) => return fail(text),
    };
    let argv: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
    let catalog = acl::catalog::Catalog::get();
    let arity = |id: usize| {
        super::server::meta::lookup(catalog.names[id].as_bytes())
            .is_some_and(|m| super::arity_ok(m.arity as i32, argv.len()))
    };
    let Some(id) = catalog.lookup_request(&argv).filter(|&id| arity(id)) else {
        return fail("Invalid command passed to redis.acl_check_cmd()");
    };
    let allowed = user.is_none_or(|u| u.unrestricted() || acl::check(&u.read(), id, &argv).is_ok());
    Ok((true, Value::Boolean(allowed)))
}

/// SELECT from a script that holds every database: its locks on the database asked for
/// become the script's, for the commands after it. Redis's errors otherwise, with whether
/// the call was refused before it ran (a wrong arity) rather than failed.
fn select_in_script<'l>(
    ctx: &mut Ctx<'_, 'l>,
    all: &mut [Option<Locked<'l>>],
    argv: &[&[u8]],
) -> Result<(), (&'static str, bool)> {
    if argv.len() != 2 {
        return Err((
            "Wrong number of args calling Redis command from script",
            true,
        ));
    }
    ctx.engine
        .inner()
        .server
        .count_call(lookup_indexed(b"select").map_or(0, |(i, _)| i));
    let failed = |text| (text, false);
    let n =
        parse_i64(argv[1]).map_err(|_| failed("-ERR value is not an integer or out of range"))?;
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n < DATABASES)
        .ok_or(failed("-ERR DB index is out of range"))?;
    if n != ctx.client.db {
        let Some(next) = all[n].take() else {
            return Err(failed("-ERR DB index is out of range"));
        };
        let previous = std::mem::replace(&mut ctx.ks, next);
        all[ctx.client.db] = Some(previous);
        ctx.client.db = n;
    }
    Ok(())
}

/// Whether an XREAD / XREADGROUP asks to BLOCK (an option before STREAMS; GROUP's two
/// arguments are names, not options).
fn blocks(argv: &[&[u8]]) -> bool {
    let mut i = 1;
    while i < argv.len() && !is(argv[i], "streams") {
        if is(argv[i], "block") {
            return true;
        }
        i += if is(argv[i], "group") { 3 } else { 1 };
    }
    false
}

// ---- EVAL, EVALSHA, EVAL_RO, EVALSHA_RO ----

/// A script's KEYS and ARGV.
pub(crate) type KeysAndArgs<'a> = (&'a [&'a [u8]], &'a [&'a [u8]]);

/// EVAL's `numkeys`: the keys and the other arguments.
pub(crate) fn split_keys<'a>(args: &'a [&'a [u8]]) -> Result<KeysAndArgs<'a>, CmdError> {
    let n = parse_i64(args[2])?;
    if n < 0 {
        return Err(err("ERR Number of keys can't be negative"));
    }
    let rest = &args[3..];
    if n as u64 > rest.len() as u64 {
        return Err(err(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    Ok(rest.split_at(n as usize))
}

fn eval(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    eval_generic(ctx, args, false, false)
}

fn evalsha(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    eval_generic(ctx, args, true, false)
}

fn eval_ro(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    eval_generic(ctx, args, false, true)
}

fn evalsha_ro(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    eval_generic(ctx, args, true, true)
}

const NOSCRIPT: &str = "NOSCRIPT No matching script. Please use EVAL.";

fn eval_generic(
    ctx: &mut Ctx<'_, '_>,
    args: &[&[u8]],
    by_sha: bool,
    read_only: bool,
) -> Result<Reply, CmdError> {
    let (keys, argv) = split_keys(args)?;
    let sha = if by_sha {
        if args[1].len() != 40 {
            return Err(err(NOSCRIPT));
        }
        lossy(args[1]).to_ascii_lowercase()
    } else {
        sha1_hex(args[1])
    };
    let scripting = scripting(ctx.engine);
    let mut guard = scripting.vm()?;
    let Some(vm) = guard.as_mut() else {
        return Err(err("ERR scripting is unavailable"));
    };
    let cached = match vm.scripts.get(&sha) {
        Some(c) => c.clone(),
        None if by_sha => return Err(err(NOSCRIPT)),
        None => {
            let c = compile_script(vm, args[1])?;
            vm.scripts.insert(sha.clone(), c.clone());
            scripting.note(vm);
            c
        }
    };
    let no_writes = cached.declared.is_some_and(|d| d.no_writes);
    if read_only && cached.declared.is_some() && !no_writes {
        return Err(err(
            "ERR Can not execute a script with write flag using *_ro command.",
        ));
    }
    let run = Run {
        name: &sha,
        function: false,
        read_only: read_only || no_writes,
        allow_oom: cached.declared.is_some_and(|d| d.allow_oom),
        selects: cached.selects,
    };
    Ok(run_script(ctx, vm, &cached.f, keys, argv, &run))
}

fn compile_script(vm: &Vm, body: &[u8]) -> Result<Cached, CmdError> {
    let (skip, declared) = shebang(body)?;
    // The `#!` line is skipped, its line feed kept, so line numbers stay the user's.
    let f = vm.compile(&body[skip..], "@user_script").map_err(|msg| {
        err_owned(format!(
            "ERR Error compiling script (new function): {}",
            msg.replace(['\r', '\n'], " ")
        ))
    })?;
    Ok(Cached {
        f,
        selects: mentions_select(body),
        declared,
    })
}

// ---- SCRIPT ----

const SCRIPT_HELP: &[&str] = &[
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
];

fn script(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    let scripting = scripting(ctx.engine);
    if is(sub, "kill") {
        sub_arity(args, 2, "script|kill")?;
        return kill(&scripting.gate, true);
    }
    if is(sub, "help") {
        sub_arity(args, 2, "script|help")?;
        return Ok(help(args, SCRIPT_HELP));
    }
    if is(sub, "load") {
        sub_arity(args, 3, "script|load")?;
        let mut guard = scripting.vm()?;
        let Some(vm) = guard.as_mut() else {
            return Err(err("ERR scripting is unavailable"));
        };
        let sha = sha1_hex(args[2]);
        if !vm.scripts.contains_key(&sha) {
            let f = compile_script(vm, args[2])?;
            vm.scripts.insert(sha.clone(), f);
            scripting.note(vm);
        }
        return Ok(Reply::Bulk(sha.into_bytes()));
    }
    if is(sub, "exists") {
        sub_arity(args, -3, "script|exists")?;
        let guard = scripting.vm()?;
        let known = |sha: &[u8]| {
            guard
                .as_ref()
                .is_some_and(|vm| vm.scripts.contains_key(&lossy(sha).to_ascii_lowercase()))
        };
        return Ok(Reply::Array(
            args[2..]
                .iter()
                .map(|sha| Reply::Int(i64::from(known(sha))))
                .collect(),
        ));
    }
    if is(sub, "flush") {
        sub_arity(args, -2, "script|flush")?;
        if args.len() > 3 || (args.len() == 3 && !is(args[2], "sync") && !is(args[2], "async")) {
            return Err(err("ERR SCRIPT FLUSH only support SYNC|ASYNC option"));
        }
        let mut guard = scripting.vm()?;
        if let Some(vm) = guard.as_mut() {
            vm.scripts.clear();
            let _ = vm.lua.gc_collect();
            scripting.note(vm);
        }
        return Ok(Reply::ok());
    }
    if is(sub, "debug") {
        sub_arity(args, 3, "script|debug")?;
        return Err(err("ERR SCRIPT DEBUG is not supported by this engine"));
    }
    Err(unknown_subcommand(args))
}

/// SCRIPT KILL (`eval`) or FUNCTION KILL: Redis's checks, in its order.
pub(crate) fn kill(gate: &Gate, eval: bool) -> Result<Reply, CmdError> {
    if gate.quiet() {
        return Err(err("NOTBUSY No scripts in execution right now."));
    }
    if gate.wrote.load(Ordering::Relaxed) {
        return Err(err(
            "UNKILLABLE Sorry the script already executed write commands against the dataset. \
             You can either wait the script termination or kill the server in a hard way using \
             the SHUTDOWN NOSAVE command.",
        ));
    }
    let function = gate.function.load(Ordering::Relaxed);
    if eval && function {
        return Err(err(gate::BUSY_FUNCTION));
    }
    if !eval && !function {
        return Err(err(gate::BUSY_EVAL));
    }
    gate.kill.store(true, Ordering::Relaxed);
    Ok(Reply::ok())
}

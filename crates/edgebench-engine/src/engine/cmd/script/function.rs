//! Redis 7 functions: FUNCTION LOAD, LIST, DELETE, FLUSH, DUMP, RESTORE, STATS, KILL, HELP,
//! and FCALL / FCALL_RO, in the scripting VM of [`super`].
//!
//! A library is Lua code whose first line is `#!lua name=<library>`; running it once (at
//! FUNCTION LOAD, under a time limit) registers its functions with `redis.register_function`.
//! A failed load leaves the libraries as they were.
//!
//! FUNCTION DUMP writes Redis's payload layout: per library the RDB function opcode (245) and
//! the code as an RDB string, then the RDB version (10, Redis 7.0's) and a CRC-64 (Jones, as
//! Redis's `crc64`) of all that. Strings are written uncompressed; RESTORE reads uncompressed
//! and LZF-compressed strings, so it accepts redis-server's own DUMP payloads too.

use std::sync::PoisonError;
use std::time::{Duration, Instant};

use mlua::{Function, HookTriggers, Table, Value, VmState};

use super::{kill, run_script, scripting, split_keys, Run, Vm, SCRIPT_FLAGS};
use crate::engine::cmd::keys::glob_match;
use crate::engine::cmd::server::common::{
    err, err_owned, help, lossy, sub_arity, sub_syntax, unknown_subcommand,
};
use crate::engine::cmd::{is, Ctx};
use crate::engine::error::CmdError;
use crate::resp::parse::split_args;
use crate::resp::reply::Reply;

/// How long a library's code may run at FUNCTION LOAD (Redis's 500 ms).
const LOAD_TIMEOUT: Duration = Duration::from_millis(500);
/// The RDB opcode of a function library (`RDB_OPCODE_FUNCTION2`).
const RDB_OPCODE_FUNCTION: u8 = 245;
/// The RDB version Redis 7.0 writes in DUMP payloads.
const RDB_VERSION: u16 = 10;

/// A registered function.
struct FunctionDef {
    name: String,
    description: Option<Vec<u8>>,
    flags: Vec<&'static str>,
    callback: Function,
}

/// A library: its code and its functions, in registration order.
struct Library {
    name: String,
    code: Vec<u8>,
    functions: Vec<FunctionDef>,
}

/// Every library, in load order.
#[derive(Default)]
pub(crate) struct Libraries {
    libs: Vec<Library>,
}

impl Libraries {
    /// Every library's code, in load order.
    pub(crate) fn codes(&self) -> Vec<Vec<u8>> {
        self.libs.iter().map(|l| l.code.clone()).collect()
    }

    /// The function FCALL names: Redis 7.0 keeps every library's functions in one dict that
    /// compares names without case (`functionDictType`), so `FCALL TEST` finds `test`.
    fn find(&self, name: &str) -> Option<&FunctionDef> {
        self.libs
            .iter()
            .flat_map(|l| l.functions.iter())
            .find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// The flags function `name` was registered with, if it exists.
    pub(crate) fn declared(&self, name: &str) -> Option<super::Declared> {
        let f = self.find(name)?;
        Some(super::Declared::from_names(f.flags.iter().copied()))
    }

    /// Whether the code of the library that defines function `name` mentions SELECT (see
    /// `Run::selects`).
    fn selects(&self, name: &str) -> bool {
        self.libs
            .iter()
            .find(|l| {
                l.functions
                    .iter()
                    .any(|f| f.name.eq_ignore_ascii_case(name))
            })
            .is_some_and(|l| super::mentions_select(&l.code))
    }

    fn library(&self, name: &str) -> Option<usize> {
        self.libs.iter().position(|l| l.name == name)
    }

    fn function_count(&self) -> usize {
        self.libs.iter().map(|l| l.functions.len()).sum()
    }
}

const FUNCTION_HELP: &[&str] = &[
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Library description",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
];

/// FUNCTION and its subcommands.
pub(super) fn function(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let sub = args[1];
    let scripting = scripting(ctx.engine);
    if is(sub, "kill") {
        sub_arity(args, 2, "function|kill")?;
        return kill(&scripting.gate, false);
    }
    if is(sub, "stats") {
        sub_arity(args, 2, "function|stats")?;
        return stats(ctx);
    }
    if is(sub, "help") {
        sub_arity(args, 2, "function|help")?;
        return Ok(help(args, FUNCTION_HELP));
    }
    let full = match lossy(sub).to_ascii_lowercase().as_str() {
        "load" => ("function|load", -3),
        "list" => ("function|list", -2),
        "delete" => ("function|delete", 3),
        "flush" => ("function|flush", -2),
        "dump" => ("function|dump", 2),
        "restore" => ("function|restore", -3),
        _ => return Err(unknown_subcommand(args)),
    };
    sub_arity(args, full.1, full.0)?;
    let mut guard = scripting.vm()?;
    let Some(vm) = guard.as_mut() else {
        return Err(err("ERR scripting is unavailable"));
    };
    let reply = match full.0 {
        "function|load" => load_command(vm, args),
        "function|list" => list(vm, args),
        "function|delete" => match vm.libraries.library(&lossy(args[2])) {
            Some(i) => {
                vm.libraries.libs.remove(i);
                Ok(Reply::ok())
            }
            None => Err(err("ERR Library not found")),
        },
        "function|flush" => {
            if args.len() > 3 {
                return Err(sub_syntax(args));
            }
            if args.len() == 3 && !is(args[2], "sync") && !is(args[2], "async") {
                return Err(err("ERR FUNCTION FLUSH only supports SYNC|ASYNC option"));
            }
            vm.libraries.libs.clear();
            Ok(Reply::ok())
        }
        "function|dump" => Ok(Reply::Bulk(dump(&vm.libraries))),
        _ => restore(vm, args),
    };
    let mut status = scripting
        .functions
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    status.libraries = vm.libraries.libs.len();
    status.functions = vm.libraries.function_count();
    reply
}

impl super::Scripting {
    /// Functions and libraries loaded, as last noted: (functions, libraries).
    pub(super) fn functions_loaded(&self) -> (usize, usize) {
        let status = self
            .functions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        (status.functions, status.libraries)
    }
}

/// What FUNCTION STATS reports, kept beside the VM: a running function holds the VM, and
/// STATS must answer while it runs.
#[derive(Debug, Default)]
pub(crate) struct FunctionStatus {
    libraries: usize,
    functions: usize,
    /// The running function: its name, the FCALL that runs it, since when.
    running: Option<(String, Vec<Vec<u8>>, Instant)>,
}

fn stats(ctx: &mut Ctx<'_, '_>) -> Result<Reply, CmdError> {
    let status = scripting(ctx.engine)
        .functions
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let running = match &status.running {
        None => Reply::Nil,
        Some((name, command, since)) => Reply::Map(vec![
            (Reply::bulk(b"name"), Reply::bulk(name.as_bytes())),
            (
                Reply::bulk(b"command"),
                Reply::Array(command.iter().map(|a| Reply::bulk(a)).collect()),
            ),
            (
                Reply::bulk(b"duration_ms"),
                Reply::Int(since.elapsed().as_millis() as i64),
            ),
        ]),
    };
    let lua = Reply::Map(vec![
        (
            Reply::bulk(b"libraries_count"),
            Reply::Int(status.libraries as i64),
        ),
        (
            Reply::bulk(b"functions_count"),
            Reply::Int(status.functions as i64),
        ),
    ]);
    Ok(Reply::Map(vec![
        (Reply::bulk(b"running_script"), running),
        (
            Reply::bulk(b"engines"),
            Reply::Map(vec![(Reply::bulk(b"LUA"), lua)]),
        ),
    ]))
}

fn load_command(vm: &mut Vm, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let mut replace = false;
    let mut i = 2;
    while i < args.len() - 1 {
        if is(args[i], "replace") {
            replace = true;
        } else {
            return Err(err_owned(format!(
                "ERR Unknown option given: {}",
                lossy(args[i])
            )));
        }
        i += 1;
    }
    if i >= args.len() {
        return Err(err("ERR Function code is missing"));
    }
    let name = load(vm, args[i], replace)?;
    Ok(Reply::Bulk(name.into_bytes()))
}

/// The library name in a `#!lua name=<lib>` first line, with Redis's errors. The line splits
/// as Redis's `sdssplitargs` splits it, so `name="foo"` names `foo`.
fn metadata(code: &[u8]) -> Result<String, CmdError> {
    if !code.starts_with(b"#!") {
        return Err(err("ERR Missing library metadata"));
    }
    let invalid = || err("ERR Invalid library metadata");
    let end = code.iter().position(|&c| c == b'\n').ok_or_else(invalid)?;
    let parts = split_args(&code[..end]).map_err(|_| invalid())?;
    let (first, parts) = parts.split_first().ok_or_else(invalid)?;
    let engine = lossy(first.get(2..).unwrap_or_default());
    let mut name: Option<String> = None;
    for part in parts {
        if part
            .get(..5)
            .is_some_and(|p| p.eq_ignore_ascii_case(b"name="))
        {
            if name.is_some() {
                return Err(err(
                    "ERR Invalid metadata value, name argument was given multiple times",
                ));
            }
            name = Some(lossy(&part[5..]));
            continue;
        }
        return Err(err_owned(format!(
            "ERR Invalid metadata value given: {}",
            lossy(part)
        )));
    }
    let Some(name) = name else {
        return Err(err("ERR Library name was not given"));
    };
    if !valid_name(&name) {
        return Err(err(NAME_RULE));
    }
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(err_owned(format!("ERR Engine '{engine}' not found")));
    }
    Ok(name)
}

/// Redis 7.0 gives this text for bad library and function names alike.
const NAME_RULE: &str = "ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Loads (or with `replace`, reloads) a library; returns its name.
fn load(vm: &mut Vm, code: &[u8], replace: bool) -> Result<String, CmdError> {
    let name = metadata(code)?;
    let existing = vm.libraries.library(&name);
    if existing.is_some() && !replace {
        return Err(err_owned(format!("ERR Library '{name}' already exists")));
    }
    // The first line is metadata: compile it as a comment, keeping the line numbers.
    let mut body = Vec::with_capacity(code.len() + 2);
    body.extend_from_slice(b"--");
    body.extend_from_slice(code);
    let chunk = vm.compile(&body, "@user_function").map_err(|msg| {
        err_owned(format!(
            "ERR Error compiling function: {}",
            msg.replace(['\r', '\n'], " ")
        ))
    })?;
    let functions = register(vm, &chunk)?;
    if functions.is_empty() {
        return Err(err("ERR No functions registered"));
    }
    for f in &functions {
        let clash = vm
            .libraries
            .libs
            .iter()
            .filter(|l| l.name != name)
            .flat_map(|l| l.functions.iter())
            .any(|g| g.name.eq_ignore_ascii_case(&f.name));
        if clash {
            return Err(err_owned(format!("ERR Function {} already exists", f.name)));
        }
    }
    let library = Library {
        name: name.clone(),
        code: code.to_vec(),
        functions,
    };
    match existing {
        Some(i) => vm.libraries.libs[i] = library,
        None => vm.libraries.libs.push(library),
    }
    Ok(name)
}

/// Runs a library's code with `redis.register_function` live, under [`LOAD_TIMEOUT`].
fn register(vm: &Vm, chunk: &Function) -> Result<Vec<FunctionDef>, CmdError> {
    let mut found: Vec<FunctionDef> = Vec::new();
    let start = Instant::now();
    let timed_out = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&timed_out);
    let _ = vm.lua.set_hook(
        HookTriggers::new().every_nth_instruction(super::HOOK_INSTRUCTIONS),
        move |_, _| {
            if start.elapsed() > LOAD_TIMEOUT {
                flag.store(true, std::sync::atomic::Ordering::Relaxed);
                Err(mlua::Error::runtime("FUNCTION LOAD timeout"))
            } else {
                Ok(VmState::Continue)
            }
        },
    );
    let outcome = vm.lua.scope(|scope| {
        let found = &mut found;
        let register = scope.create_function_mut(move |_, args: mlua::MultiValue| {
            Ok(register_one(found, &args).err())
        })?;
        vm.e.raw_set("register", register)?;
        vm.e.raw_set("loading", true)?;
        let runner: Function = vm.e.raw_get("run")?;
        let outcome = runner.call::<(bool, Value)>((chunk.clone(), Value::Nil, Value::Nil, true));
        vm.e.raw_set("register", Value::Nil)?;
        vm.e.raw_set("loading", Value::Nil)?;
        outcome
    });
    vm.lua.remove_hook();
    let failure = |msg: &str| {
        err_owned(format!("ERR Error registering functions: {msg}").replace(['\r', '\n'], " "))
    };
    if timed_out.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(failure("ERR FUNCTION LOAD timeout"));
    }
    let (ok, value) = outcome.map_err(|e| failure(&e.to_string()))?;
    if !ok {
        let msg = match &value {
            Value::Table(t) => match t.raw_get::<Value>("err") {
                Ok(Value::String(s)) => lossy(&s.as_bytes()),
                _ => String::new(),
            },
            _ => String::new(),
        };
        return Err(failure(&msg));
    }
    Ok(found)
}

/// One `redis.register_function` call: positional `(name, callback)` or a table of named
/// arguments. An error text is raised by the prelude.
fn register_one(found: &mut Vec<FunctionDef>, args: &mlua::MultiValue) -> Result<(), String> {
    let def = match args.len() {
        1 => named_args(&args[0])?,
        2 => {
            let Value::String(name) = &args[0] else {
                return Err("first argument to redis.register_function must be a string".into());
            };
            let Value::Function(callback) = &args[1] else {
                return Err("second argument to redis.register_function must be a function".into());
            };
            FunctionDef {
                name: lossy(&name.as_bytes()),
                description: None,
                flags: Vec::new(),
                callback: callback.clone(),
            }
        }
        _ => return Err("wrong number of arguments to redis.register_function".into()),
    };
    if !valid_name(&def.name) {
        return Err(NAME_RULE["ERR ".len()..].into());
    }
    if found.iter().any(|f| f.name == def.name) {
        return Err("Function already exists in the library".into());
    }
    found.push(def);
    Ok(())
}

fn named_args(v: &Value) -> Result<FunctionDef, String> {
    let Value::Table(t) = v else {
        return Err("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).".into());
    };
    let (mut name, mut description, mut callback, mut flags) = (None, None, None, Vec::new());
    for pair in t.pairs::<Value, Value>() {
        let (k, v) = pair.map_err(|e| e.to_string())?;
        let key = match &k {
            Value::String(s) => lossy(&s.as_bytes()).to_ascii_lowercase(),
            _ => {
                return Err(
                    "named argument key given to redis.register_function is not a string".into(),
                )
            }
        };
        match (key.as_str(), v) {
            ("function_name", Value::String(s)) => name = Some(lossy(&s.as_bytes())),
            ("function_name", _) => {
                return Err("function_name argument given to redis.register_function must be a string".into())
            }
            ("description", Value::String(s)) => description = Some(s.as_bytes().to_vec()),
            ("description", _) => {
                return Err("description argument given to redis.register_function must be a string".into())
            }
            ("callback", Value::Function(f)) => callback = Some(f),
            ("callback", _) => {
                return Err("callback argument given to redis.register_function must be a function".into())
            }
            ("flags", Value::Table(list)) => flags = read_flags(&list)?,
            ("flags", _) => {
                return Err("flags argument to redis.register_function must be a table representing function flags".into())
            }
            _ => return Err("unknown argument given to redis.register_function".into()),
        }
    }
    let Some(name) = name else {
        return Err("redis.register_function must get a function name argument".into());
    };
    let Some(callback) = callback else {
        return Err("redis.register_function must get a callback argument".into());
    };
    Ok(FunctionDef {
        name,
        description,
        flags,
        callback,
    })
}

fn read_flags(list: &Table) -> Result<Vec<&'static str>, String> {
    let mut flags = Vec::new();
    for v in list.sequence_values::<Value>() {
        let known = match v {
            Ok(Value::String(s)) => {
                let s = lossy(&s.as_bytes());
                SCRIPT_FLAGS.iter().copied().find(|f| *f == s)
            }
            _ => None,
        };
        match known {
            Some(f) => flags.push(f),
            None => return Err("unknown flag given".into()),
        }
    }
    Ok(flags)
}

fn list(vm: &Vm, args: &[&[u8]]) -> Result<Reply, CmdError> {
    let (mut pattern, mut with_code) = (None, false);
    let mut i = 2;
    while i < args.len() {
        // Each option counts once: a second one is an unknown argument, as in Redis.
        if !with_code && is(args[i], "withcode") {
            with_code = true;
        } else if pattern.is_none() && is(args[i], "libraryname") {
            let Some(p) = args.get(i + 1) else {
                return Err(err("ERR library name argument was not given"));
            };
            pattern = Some(*p);
            i += 1;
        } else {
            return Err(err_owned(format!(
                "ERR Unknown argument {}",
                lossy(args[i])
            )));
        }
        i += 1;
    }
    let libs = vm
        .libraries
        .libs
        .iter()
        .filter(|l| pattern.is_none_or(|p| glob_match(p, l.name.as_bytes())))
        .map(|l| {
            let functions = l
                .functions
                .iter()
                .map(|f| {
                    Reply::Map(vec![
                        (Reply::bulk(b"name"), Reply::bulk(f.name.as_bytes())),
                        (
                            Reply::bulk(b"description"),
                            Reply::opt_bulk(f.description.as_deref()),
                        ),
                        (
                            Reply::bulk(b"flags"),
                            Reply::Set(
                                f.flags.iter().map(|x| Reply::Status((*x).into())).collect(),
                            ),
                        ),
                    ])
                })
                .collect();
            let mut fields = vec![
                (Reply::bulk(b"library_name"), Reply::bulk(l.name.as_bytes())),
                (Reply::bulk(b"engine"), Reply::bulk(b"LUA")),
                (Reply::bulk(b"functions"), Reply::Array(functions)),
            ];
            if with_code {
                fields.push((Reply::bulk(b"library_code"), Reply::bulk(&l.code)));
            }
            Reply::Map(fields)
        })
        .collect();
    Ok(Reply::Array(libs))
}

// ---- FCALL ----

pub(super) fn fcall(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    fcall_generic(ctx, args, false)
}

pub(super) fn fcall_ro(ctx: &mut Ctx<'_, '_>, args: &[&[u8]]) -> Result<Reply, CmdError> {
    fcall_generic(ctx, args, true)
}

fn fcall_generic(ctx: &mut Ctx<'_, '_>, args: &[&[u8]], ro: bool) -> Result<Reply, CmdError> {
    let scripting = scripting(ctx.engine);
    let guard = scripting.vm()?;
    let Some(vm) = guard.as_ref() else {
        return Err(err("ERR scripting is unavailable"));
    };
    let name = lossy(args[1]);
    let Some(f) = vm.libraries.find(&name) else {
        return Err(err("ERR Function not found"));
    };
    if super::parse_i64(args[2]).is_err() {
        return Err(err("ERR Bad number of keys provided"));
    }
    let (keys, argv) = split_keys(args)?;
    let no_writes = f.flags.contains(&"no-writes");
    if ro && !no_writes {
        return Err(err(
            "ERR Can not execute a script with write flag using *_ro command.",
        ));
    }
    let callback = f.callback.clone();
    let run = Run {
        name: &f.name,
        function: true,
        read_only: ro || no_writes,
        allow_oom: f.flags.contains(&"allow-oom"),
        selects: vm.libraries.selects(&f.name),
    };
    let status = &scripting.functions;
    let command = args.iter().map(|a| a.to_vec()).collect();
    status
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .running = Some((f.name.clone(), command, Instant::now()));
    let reply = run_script(ctx, vm, &callback, keys, argv, &run);
    status
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .running = None;
    Ok(reply)
}

// ---- DUMP and RESTORE ----

/// Redis's `crc64` (Jones polynomial, reflected, no final xor).
fn crc64(bytes: &[u8]) -> u64 {
    const POLY: u64 = 0x95ac_9329_ac4b_c9b5;
    let mut crc = 0u64;
    for &b in bytes {
        crc ^= u64::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ POLY
            } else {
                crc >> 1
            };
        }
    }
    crc
}

fn rdb_len(len: usize, out: &mut Vec<u8>) {
    if len < 64 {
        out.push(len as u8);
    } else if len < 16384 {
        out.push(0x40 | (len >> 8) as u8);
        out.push(len as u8);
    } else if len <= u32::MAX as usize {
        out.push(0x80);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&(len as u64).to_be_bytes());
    }
}

fn dump(libs: &Libraries) -> Vec<u8> {
    let mut out = Vec::new();
    for l in &libs.libs {
        out.push(RDB_OPCODE_FUNCTION);
        rdb_len(l.code.len(), &mut out);
        out.extend_from_slice(&l.code);
    }
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// An RDB length: (value, whether it is the special LZF-string marker).
fn read_len(p: &[u8], pos: &mut usize) -> Option<(u64, bool)> {
    let first = *p.get(*pos)?;
    *pos += 1;
    Some(match first >> 6 {
        0 => (u64::from(first & 0x3f), false),
        1 => {
            let next = *p.get(*pos)?;
            *pos += 1;
            ((u64::from(first & 0x3f) << 8) | u64::from(next), false)
        }
        2 if first == 0x80 => {
            let b = p.get(*pos..*pos + 4)?;
            *pos += 4;
            (u64::from(u32::from_be_bytes(b.try_into().ok()?)), false)
        }
        2 if first == 0x81 => {
            let b = p.get(*pos..*pos + 8)?;
            *pos += 8;
            (u64::from_be_bytes(b.try_into().ok()?), false)
        }
        3 => (u64::from(first & 0x3f), true),
        _ => return None,
    })
}

fn read_string(p: &[u8], pos: &mut usize) -> Option<Vec<u8>> {
    let (len, special) = read_len(p, pos)?;
    if !special {
        let len = usize::try_from(len).ok()?;
        let s = p.get(*pos..pos.checked_add(len)?)?.to_vec();
        *pos += len;
        return Some(s);
    }
    // 3 = LZF; the integer encodings never hold library code.
    if len != 3 {
        return None;
    }
    let (clen, _) = read_len(p, pos)?;
    let (ulen, _) = read_len(p, pos)?;
    let clen = usize::try_from(clen).ok()?;
    let compressed = p.get(*pos..pos.checked_add(clen)?)?;
    *pos += clen;
    // The decompressed size is bounded by what LZF can expand `clen` bytes to.
    let ulen = usize::try_from(ulen).ok()?;
    if ulen > clen.saturating_mul(264) {
        return None;
    }
    lzf_decompress(compressed, ulen)
}

/// LZF decompression (liblzf's format).
fn lzf_decompress(input: &[u8], out_len: usize) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(out_len);
    let mut i = 0;
    while i < input.len() {
        let ctrl = usize::from(input[i]);
        i += 1;
        if ctrl < 32 {
            let run = ctrl + 1;
            out.extend_from_slice(input.get(i..i + run)?);
            i += run;
        } else {
            let mut len = ctrl >> 5;
            if len == 7 {
                len += usize::from(*input.get(i)?);
                i += 1;
            }
            let back = ((ctrl & 0x1f) << 8) + usize::from(*input.get(i)?) + 1;
            i += 1;
            let start = out.len().checked_sub(back)?;
            for k in 0..len + 2 {
                let b = out[start + k];
                out.push(b);
            }
        }
        if out.len() > out_len {
            return None;
        }
    }
    (out.len() == out_len).then_some(out)
}

fn restore(vm: &mut Vm, args: &[&[u8]]) -> Result<Reply, CmdError> {
    #[derive(PartialEq)]
    enum Policy {
        Flush,
        Append,
        Replace,
    }
    if args.len() > 4 {
        return Err(sub_syntax(args));
    }
    let policy =
        match args.get(3) {
            None => Policy::Append,
            Some(p) if is(p, "flush") => Policy::Flush,
            Some(p) if is(p, "append") => Policy::Append,
            Some(p) if is(p, "replace") => Policy::Replace,
            Some(_) => return Err(err(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            )),
        };
    let payload = args[2];
    let body_len = payload.len().checked_sub(10);
    let valid = body_len.is_some_and(|n| {
        let version = u16::from_le_bytes([payload[n], payload[n + 1]]);
        let crc = u64::from_le_bytes(payload[n + 2..].try_into().unwrap_or([0; 8]));
        version <= RDB_VERSION && crc64(&payload[..n + 2]) == crc
    });
    let Some(n) = body_len.filter(|_| valid) else {
        return Err(err("ERR DUMP payload version or checksum are wrong"));
    };
    let body = &payload[..n];
    let mut codes = Vec::new();
    let mut pos = 0;
    while pos < body.len() {
        if body[pos] != RDB_OPCODE_FUNCTION {
            return Err(err("ERR given type is not a function"));
        }
        pos += 1;
        let code = read_string(body, &mut pos)
            .ok_or_else(|| err("ERR failed loading the given functions payload"))?;
        codes.push(code);
    }
    // All or nothing: load into the current set, and put the old one back on failure.
    let saved = std::mem::take(&mut vm.libraries.libs);
    if policy != Policy::Flush {
        vm.libraries.libs = saved.iter().map(Library::shallow).collect();
    }
    for code in &codes {
        let name = metadata(code);
        if let (Ok(name), Policy::Append) = (&name, &policy) {
            if vm.libraries.library(name).is_some() {
                vm.libraries.libs = saved;
                return Err(err_owned(format!("ERR Library {name} already exists")));
            }
        }
        if let Err(e) = load(vm, code, true) {
            vm.libraries.libs = saved;
            return Err(e);
        }
    }
    Ok(Reply::ok())
}

impl Library {
    /// A copy sharing the compiled callbacks (handles into the same VM).
    fn shallow(&self) -> Library {
        Library {
            name: self.name.clone(),
            code: self.code.clone(),
            functions: self
                .functions
                .iter()
                .map(|f| FunctionDef {
                    name: f.name.clone(),
                    description: f.description.clone(),
                    flags: f.flags.clone(),
                    callback: f.callback.clone(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc64_is_redis_jones() {
        // Redis's crc64 test vector.
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn lzf_round_trip_of_a_back_reference() {
        // "abcabcabc": literal "abc", then a back reference of 6 bytes at distance 3.
        let compressed = [2, b'a', b'b', b'c', (4 << 5), 2];
        assert_eq!(
            lzf_decompress(&compressed, 9).as_deref(),
            Some(&b"abcabcabc"[..])
        );
    }

    #[test]
    fn metadata_errors_are_redis_texts() {
        assert_eq!(
            metadata(b"x").unwrap_err().text(),
            "ERR Missing library metadata"
        );
        assert_eq!(
            metadata(b"#!lua name=x").unwrap_err().text(),
            "ERR Invalid library metadata"
        );
        assert_eq!(
            metadata(b"#!js name=x\n").unwrap_err().text(),
            "ERR Engine 'js' not found"
        );
        assert_eq!(metadata(b"#!lua name=a-b\n").unwrap_err().text(), NAME_RULE);
        assert_eq!(metadata(b"#!lua name=ok\n").unwrap(), "ok");
        // Quotes as in Redis's sdssplitargs, a bad quote as an invalid line.
        assert_eq!(metadata(b"#!lua name=\"foo\"\n").unwrap(), "foo");
        assert_eq!(metadata(b"#!\"lua\" 'name=x'\n").unwrap(), "x");
        assert_eq!(
            metadata(b"#!lua name=\"foo\n").unwrap_err().text(),
            "ERR Invalid library metadata"
        );
        // Multi-byte text where a keyword would be: an error, not a panic.
        assert!(metadata("#!lua né=x\n".as_bytes()).is_err());
        assert!(metadata("#!\u{e9}\n".as_bytes()).is_err());
    }
}

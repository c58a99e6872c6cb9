//! Redis 7 functions where Redis 7.0.15's own `unit/functions` found the engine apart from
//! redis-server, differentially: what a library's code can reach while FUNCTION LOAD runs it
//! (only `redis.register_function`, `redis.log`, the log levels and the version), what a
//! function can reach when it runs (no `register_function`), the version fields, the library
//! line split as `sdssplitargs` splits it, and the subcommands' own argument checks.

use crate::support::diff::Diff;

/// A FUNCTION LOAD REPLACE of `body` under the library line `#!lua name=lib`.
fn load(body: &str) -> [String; 4] {
    [
        "FUNCTION".into(),
        "LOAD".into(),
        "REPLACE".into(),
        format!("#!lua name=lib\n{body}"),
    ]
}

/// Runs each command on both servers; panics at the first difference.
fn check(d: &mut Diff, script: &[&[String]]) {
    for (i, args) in script.iter().enumerate() {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (real, ours) = d.both(&args);
        assert_eq!(
            ours, real,
            "command #{i} {args:?}: engine (left) vs redis-server (right)"
        );
    }
}

fn cmd(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

#[test]
fn library_code_at_load_sees_only_the_load_api() {
    let mut d = Diff::new();
    let refused = [
        // Globals other than `redis` do not exist while the library loads...
        "return math.random()",
        "local s = tostring(1)",
        "mt = getmetatable(_G)",
        "local t = {} for k in pairs({}) do end",
        "local s = string.format('%d', 1)",
        "return _G",
        // ... nor `redis` fields other than the load API.
        "return redis.setresp(3)",
        "return redis.call('ping')",
        "return redis.pcall('ping')",
        "return redis.set_repl(redis.REPL_NONE)",
        "return redis.sha1hex('x')",
        "return redis.error_reply('x')",
        "return redis.REPL_ALL",
        "redis.log = 1",
        "x = 1",
    ];
    for body in refused {
        check(&mut d, &[&load(body)]);
    }
    // The load API itself works, and what it read at load time stays in the closures.
    check(
        &mut d,
        &[
            &load(
                "local n = redis.REDIS_VERSION_NUM + redis.LOG_WARNING\n\
                 local v = redis.REDIS_VERSION\n\
                 redis.log(redis.LOG_NOTICE, 'loading')\n\
                 redis.register_function('f', function() return {n, v} end)",
            ),
            &cmd(&["FCALL", "f", "0"]),
        ],
    );
}

#[test]
fn a_function_at_run_time_has_no_register_function() {
    let mut d = Diff::new();
    check(
        &mut d,
        &[
            // Redis 7.0.15's "register function inside a function".
            &load(
                "redis.register_function('f1', function(keys, args)\n\
                 redis.register_function('f2', function(key, args) return 2 end)\n\
                 return 1 end)",
            ),
            &cmd(&["FCALL", "f1", "0"]),
            &cmd(&["FCALL", "f2", "0"]),
            // The load-time `redis` kept in a local stays the load API.
            &load(
                "local r = redis\n\
                 redis.register_function('f1', function() return r.call('ping') end)",
            ),
            &cmd(&["FCALL", "f1", "0"]),
            // register_function kept from load time refuses to run outside FUNCTION LOAD.
            &load(
                "local reg = redis.register_function\n\
                 redis.register_function('f1', function() return reg('x', function() end) end)",
            ),
            &cmd(&["FCALL", "f1", "0"]),
            // The run-time table: the full API without EVAL's debugger stubs.
            &load(
                "redis.register_function('f1', function() return {type(redis.call), \
                 type(redis.setresp), type(redis.register_function), type(redis.breakpoint), \
                 type(redis.debug), type(redis.replicate_commands), type(math.random)} end)",
            ),
            &cmd(&["FCALL", "f1", "0"]),
            &cmd(&[
                "EVAL",
                "return {type(redis.call), type(redis.register_function), \
                 type(redis.breakpoint), type(redis.debug), type(redis.replicate_commands)}",
                "0",
            ]),
        ],
    );
}

#[test]
fn redis_version_fields_match_redis() {
    let mut d = Diff::new();
    check(
        &mut d,
        &[
            &cmd(&[
                "EVAL",
                "return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM, type(redis.REDIS_VERSION_NUM)}",
                "0",
            ]),
            // Redis 7.0.15's "redis version api".
            &load(
                "local version = redis.REDIS_VERSION_NUM\n\
                 redis.register_function{function_name='get_version_v1', callback=function()\n\
                   return string.format('%s.%s.%s',\n\
                     bit.band(bit.rshift(version, 16), 0x000000ff),\n\
                     bit.band(bit.rshift(version, 8), 0x000000ff),\n\
                     bit.band(version, 0x000000ff))\n\
                 end}\n\
                 redis.register_function{function_name='get_version_v2', callback=function() \
                 return redis.REDIS_VERSION end}",
            ),
            &cmd(&["FCALL", "get_version_v1", "0"]),
            &cmd(&["FCALL", "get_version_v2", "0"]),
        ],
    );
}

#[test]
fn the_library_line_splits_like_sdssplitargs() {
    let mut d = Diff::new();
    let f = "\nredis.register_function('foo', function() return 1 end)";
    d.check(&[
        &[
            "FUNCTION",
            "LOAD",
            "REPLACE",
            &format!("#!lua name=\"foo\"{f}"),
        ],
        &["FCALL", "foo", "0"],
        &[
            "FUNCTION",
            "LOAD",
            "REPLACE",
            &format!("#!\"lua\" 'name=bar'{f}"),
        ],
        &[
            "FUNCTION",
            "LOAD",
            "REPLACE",
            &format!("#!lua name=\"baz{f}"),
        ],
        &[
            "FUNCTION",
            "LOAD",
            "REPLACE",
            &format!("#!lua name=\"a\"b{f}"),
        ],
        &[
            "FUNCTION",
            "LOAD",
            "REPLACE",
            &format!("#!lua name=\"a b\"{f}"),
        ],
        &[
            "FUNCTION",
            "LOAD",
            "REPLACE",
            &format!("#!lua \"name=x\" name=y{f}"),
        ],
        &["FUNCTION", "LIST"],
    ]);
}

#[test]
fn subcommands_check_their_own_argument_counts_as_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["FUNCTION", "FLUSH", "bad_arg"],
        &["FUNCTION", "FLUSH", "sync", "extra_arg"],
        &["FUNCTION", "flush", "async", "extra_arg"],
        &["FUNCTION", "restore", "arg1", "args2", "arg3"],
        &["FUNCTION", "RESTORE", "arg1", "args2"],
        &["FUNCTION", "RESTORE", "arg1", "REPLACE"],
        &[
            "FUNCTION",
            "LOAD",
            "#!lua name=one\nredis.register_function('f', function() end)",
        ],
        // Each LIST option counts once; a second is an unknown argument.
        &["FUNCTION", "LIST", "withcode", "withcode"],
        &[
            "FUNCTION",
            "LIST",
            "withcode",
            "libraryname",
            "foo",
            "libraryname",
            "foo",
        ],
        &["FUNCTION", "LIST", "libraryname", "o*", "withcode"],
        &["FUNCTION", "LIST", "libraryname", "o*", "libraryname"],
    ]);
}

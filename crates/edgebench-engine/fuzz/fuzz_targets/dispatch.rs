//! Command dispatch: random argument vectors for every command in the engine's table, run
//! against a fresh engine. Nothing may panic or hang, and every reply must encode to RESP2
//! and RESP3 bytes that a client's scanner reads back as exactly one reply.
//!
//! Arguments are drawn mostly from what commands parse (a few key names, small and extreme
//! integers, floats, option keywords), so the fuzzer gets past argument parsing into the
//! data types, and partly as raw bytes.
//!
//! Left out, because a single-threaded harness cannot survive them and the server's tests
//! cover them: scripts and functions (a Lua `while true do end` runs until SCRIPT KILL from
//! another client), CLIENT PAUSE (waits for another client's UNPAUSE), SHUTDOWN, DEBUG and
//! MONITOR, and what writes files or forks (SAVE, BGSAVE, BGREWRITEAOF, CONFIG SET of the
//! persistence settings). PFSELFTEST too: it takes no input, and its fixed self-test of HyperLogLog runs for
//! seconds under the fuzzer's instrumentation, which on a busy machine crossed the run's
//! 10 s hang limit. Integers from 1 MiB to 8 GiB are replaced by 1 MiB: they are valid offsets and
//! counts (SETRANGE, SETBIT) that build values up to Redis's 512 MB on purpose, and a few of
//! those per input would only measure the machine's memory.

#![no_main]

use arbitrary::Arbitrary;
use edgebench_engine::engine::cmd;
use edgebench_engine::resp::{encode, scan::scan_reply, Protocol};
use edgebench_engine::Engine;
use libfuzzer_sys::fuzz_target;

#[derive(Debug, Arbitrary)]
struct Call {
    command: u16,
    args: Vec<Arg>,
}

#[derive(Debug, Arbitrary)]
enum Arg {
    Key(u8),
    Int(i8),
    Extreme(u8),
    Float(u8),
    Word(u8),
    /// A subcommand name of the command (CLIENT LIST...), through the word list.
    Raw(Vec<u8>),
}

const KEYS: &[&str] = &["k", "k2", "{k}3", "s", "h", "z", "l", "x"];

const EXTREMES: &[&str] = &[
    "0",
    "-1",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "4294967295",
    "4294967296",
    "2147483647",
    "-2147483648",
    "536870911",
    "536870912",
    "1048576",
    "99999999999999999999",
];

const FLOATS: &[&str] = &[
    "0.5",
    "-0.5",
    "inf",
    "-inf",
    "+inf",
    "nan",
    "1e308",
    "1e309",
    "-1e-320",
    "0x1p-2",
    "(1",
    "(1.5",
    "[a",
    "(a",
    "-",
    "+",
    "1.7976931348623157e308",
    "3.0",
    "",
];

const WORDS: &[&str] = &[
    "WITHSCORES",
    "LIMIT",
    "COUNT",
    "MATCH",
    "TYPE",
    "BYSCORE",
    "BYLEX",
    "REV",
    "NX",
    "XX",
    "GT",
    "LT",
    "CH",
    "INCR",
    "EX",
    "PX",
    "EXAT",
    "PXAT",
    "KEEPTTL",
    "GET",
    "LEFT",
    "RIGHT",
    "BEFORE",
    "AFTER",
    "WEIGHTS",
    "AGGREGATE",
    "SUM",
    "MIN",
    "MAX",
    "STREAMS",
    "BLOCK",
    "MAXLEN",
    "MINID",
    "~",
    "=",
    "*",
    "$",
    ">",
    "0-0",
    "1-1",
    "GROUP",
    "CREATE",
    "MKSTREAM",
    "IDLE",
    "JUSTID",
    "FORCE",
    "LEN",
    "IDX",
    "MINMATCHLEN",
    "WITHMATCHLEN",
    "BYTE",
    "BIT",
    "AND",
    "OR",
    "XOR",
    "NOT",
    "OVERFLOW",
    "WRAP",
    "SAT",
    "FAIL",
    "SET",
    "INCRBY",
    "i8",
    "u63",
    "i64",
    "#1",
    "BY",
    "ALPHA",
    "ASC",
    "DESC",
    "STORE",
    "REPLACE",
    "ABSTTL",
    "M",
    "KM",
    "FROMLONLAT",
    "FROMMEMBER",
    "BYRADIUS",
    "BYBOX",
    "WITHCOORD",
    "WITHDIST",
    "ANY",
    "ENCODING",
    "USAGE",
    "LIST",
    "INFO",
    "HELP",
    "DOCS",
    "GETKEYS",
    "ID",
    "SETNAME",
    "NOVALUE",
    "WITHVALUES",
    "RANK",
    "MAXLEN",
    "NOACK",
    "ENTRIESREAD",
    "FULL",
    "CONSUMERS",
    "GROUPS",
    "STREAM",
    "SETID",
    "DESTROY",
    "CREATECONSUMER",
    "DELCONSUMER",
    "RESETSTAT",
    "hash-max-listpack-entries",
    "set-max-intset-entries",
    "list-max-listpack-size",
    "zset-max-listpack-entries",
    "slowlog-log-slower-than",
    "SLOWLOG",
    "RESET",
    "3",
    "2",
];

/// Commands this harness does not run (see the module comment).
fn left_out(name: &str, args: &[Vec<u8>]) -> bool {
    let sub = |s: &str| {
        args.get(1)
            .is_some_and(|a| a.eq_ignore_ascii_case(s.as_bytes()))
    };
    matches!(
        name,
        "eval"
            | "evalsha"
            | "eval_ro"
            | "evalsha_ro"
            | "fcall"
            | "fcall_ro"
            | "function"
            | "script"
            | "shutdown"
            | "save"
            | "bgsave"
            | "bgrewriteaof"
            | "debug"
            | "monitor"
            | "pfselftest"
    ) || (name == "client" && (sub("pause") || sub("unpause")))
        || (name == "config" && sub("set") && args.iter().any(|a| persistence_setting(a)))
}

/// CONFIG SET of these would write files or fork snapshots from the fuzzer (the
/// `persist_files` target fuzzes the loaders instead).
fn persistence_setting(arg: &[u8]) -> bool {
    ["appendonly", "save", "dir", "dbfilename", "appendfsync"]
        .iter()
        .any(|s| arg.eq_ignore_ascii_case(s.as_bytes()))
}

fn arg_bytes(arg: &Arg) -> Vec<u8> {
    let pick = |list: &[&str], i: u8| list[usize::from(i) % list.len()].as_bytes().to_vec();
    match arg {
        Arg::Key(i) => pick(KEYS, *i),
        Arg::Int(i) => i.to_string().into_bytes(),
        Arg::Extreme(i) => pick(EXTREMES, *i),
        Arg::Float(i) => pick(FLOATS, *i),
        Arg::Word(i) => pick(WORDS, *i),
        Arg::Raw(bytes) => bytes.iter().take(64).copied().collect(),
    }
}

/// 1 MiB for an integer from 1 MiB to 8 GiB (see the module comment).
fn tame(arg: Vec<u8>) -> Vec<u8> {
    let big = std::str::from_utf8(&arg)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .is_some_and(|n| (1 << 20..8 << 30).contains(&n.unsigned_abs()));
    if big {
        b"1048576".to_vec()
    } else {
        arg
    }
}

fn check_encoding(reply: &edgebench_engine::Reply) {
    for protocol in [Protocol::Resp2, Protocol::Resp3] {
        let mut out = Vec::new();
        encode(reply, protocol, &mut out);
        match scan_reply(&out) {
            Ok(Some(scanned)) => assert_eq!(
                scanned.len,
                out.len(),
                "{protocol:?} encoding of {reply:?} is not one reply"
            ),
            other => panic!("{protocol:?} encoding of {reply:?} does not scan: {other:?}"),
        }
    }
}

fuzz_target!(|calls: Vec<Call>| {
    let names: Vec<&'static str> = cmd::all_commands().map(|spec| spec.name).collect();
    let engine = Engine::with_clock(Default::default());
    let mut client = engine.client();
    for call in calls.iter().take(32) {
        let name = names[usize::from(call.command) % names.len()];
        let mut args = vec![name.as_bytes().to_vec()];
        args.extend(call.args.iter().take(16).map(|a| tame(arg_bytes(a))));
        if left_out(name, &args) {
            continue;
        }
        let argv: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
        let reply = engine.execute(&mut client, &argv);
        check_encoding(&reply);
    }
});

//! Consumer groups, differentially against a real redis-server. Replies holding times
//! (idle, seen-time, delivery time) cannot match across two servers: those fields are
//! masked before comparing ([`masked`]) and checked exactly on a manual clock instead.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::support::diff::{elements, Diff};
use edgebench_engine::engine::{Client, Engine, Reply};

#[test]
fn xgroup_subcommands_and_errors() {
    let mut d = Diff::new();
    d.check(&[
        &["XGROUP", "CREATE", "s", "g", "$"],
        &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"],
        &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"],
        &["EXISTS", "s"],
        &["TYPE", "s"],
        &["XADD", "s", "1-1", "f", "v"],
        &["XADD", "s", "2-1", "f", "v"],
        &["XGROUP", "CREATE", "s", "g2", "0"],
        &["XGROUP", "CREATE", "s", "g3", "1-1", "ENTRIESREAD", "1"],
        &[
            "XGROUP",
            "CREATE",
            "s",
            "g4",
            "$",
            "ENTRIESREAD",
            "-1",
            "MKSTREAM",
        ],
        &["XGROUP", "CREATE", "s", "g5", "$", "ENTRIESREAD", "-2"],
        &["XGROUP", "CREATE", "s", "g5", "$", "ENTRIESREAD", "x"],
        &["XGROUP", "CREATE", "s", "g5", "$", "ENTRIESREAD"],
        &["XGROUP", "CREATE", "s", "g5", "-"],
        &["XGROUP", "CREATE", "s", "g5", "+"],
        &["XGROUP", "CREATE", "s", "g5", "bad"],
        &["XGROUP", "CREATE", "s", "g5", "5-*"],
        &["XGROUP", "CREATE", "s", "g5", "0", "FOO"],
        &[
            "XGROUP", "CREATE", "s", "g5", "0", "MKSTREAM", "MKSTREAM", "MKSTREAM", "MKSTREAM",
        ],
        &["XGROUP", "CREATE", "s", "g2", "0"],
        &["XGROUP", "CREATE", "nokey", "g", "0"],
        &["XGROUP", "CREATE", "nokey", "g", "bad", "MKSTREAM"],
        &["EXISTS", "nokey"],
        &["XGROUP", "CREATE", "s"],
        &["XGROUP", "CREATE", "s", "g"],
        &["XINFO", "GROUPS", "s"],
        &["XGROUP", "SETID", "s", "g", "0"],
        &["XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", "2"],
        &["XGROUP", "SETID", "s", "g", "-"],
        &["XGROUP", "SETID", "s", "g", "+"],
        &["XGROUP", "SETID", "s", "g", "1"],
        &["XGROUP", "SETID", "s", "g", "bad"],
        &["XGROUP", "SETID", "s", "g", "0", "MKSTREAM"],
        &["XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD"],
        &[
            "XGROUP",
            "SETID",
            "s",
            "g",
            "0",
            "ENTRIESREAD",
            "1",
            "ENTRIESREAD",
            "2",
        ],
        &["XGROUP", "SETID", "s", "nogroup", "0"],
        &["XGROUP", "SETID", "nokey", "g", "0"],
        &["XINFO", "GROUPS", "s"],
        &["XGROUP", "CREATECONSUMER", "s", "g", "alice"],
        &["XGROUP", "CREATECONSUMER", "s", "g", "alice"],
        &["XGROUP", "CREATECONSUMER", "s", "g", "bob"],
        &["XGROUP", "CREATECONSUMER", "s", "nogroup", "alice"],
        &["XGROUP", "CREATECONSUMER", "nokey", "g", "alice"],
        &["XGROUP", "CREATECONSUMER", "s", "g"],
        &["XGROUP", "DELCONSUMER", "s", "g", "bob"],
        &["XGROUP", "DELCONSUMER", "s", "g", "bob"],
        &["XGROUP", "DELCONSUMER", "s", "nogroup", "bob"],
        &["XGROUP", "DELCONSUMER", "s", "g", "bob", "x"],
        &["XGROUP", "DESTROY", "s", "g3"],
        &["XGROUP", "DESTROY", "s", "g3"],
        &["XGROUP", "DESTROY", "nokey", "g3"],
        &["XGROUP", "DESTROY", "s"],
        &["XGROUP", "HELP"],
        &["XGROUP", "help", "x"],
        &["XGROUP", "FOO"],
        &["XGROUP"],
        &["SET", "str", "x"],
        &["XGROUP", "CREATE", "str", "g", "0"],
        &["XGROUP", "CREATE", "str", "g", "0", "MKSTREAM"],
        &["XGROUP", "DESTROY", "str", "g"],
        &["XGROUP", "CREATE", "str", "g", "0", "BAD"],
        &["XINFO", "GROUPS", "s"],
    ]);
}

/// `reply` with its time fields replaced: epoch-ms integers, XINFO CONSUMERS' idle, and
/// the idle column of XPENDING's extended form.
fn masked(args: &[&str], reply: &str) -> String {
    let mut out = mask_after(reply, "bulk-string('\"idle\"'), int(");
    out = mask_epochs(&out);
    let extended_pending = args[0].eq_ignore_ascii_case("xpending") && args.len() >= 6;
    if extended_pending && out.starts_with("array([") {
        let rows: Vec<String> = elements(&out)
            .iter()
            .map(|row| {
                let mut cells = elements(row);
                if cells.len() == 4 {
                    cells[2] = "int(*)".into();
                }
                format!("array([{}])", cells.join(", "))
            })
            .collect();
        out = format!("array([{}])", rows.join(", "));
    }
    out
}

/// Replaces the digits after each `marker` by `*`.
fn mask_after(s: &str, marker: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find(marker) {
        let (head, tail) = rest.split_at(at + marker.len());
        out.push_str(head);
        out.push('*');
        rest = tail.trim_start_matches(|c: char| c.is_ascii_digit() || c == '-');
    }
    out.push_str(rest);
    out
}

/// Replaces integers of 12 digits or more (ms since the epoch) by `T`.
fn mask_epochs(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(at) = rest.find("int(") {
        let (head, tail) = rest.split_at(at + 4);
        out.push_str(head);
        let digits = tail.chars().take_while(char::is_ascii_digit).count();
        if digits >= 12 {
            out.push('T');
            rest = &tail[digits..];
        } else {
            rest = tail;
        }
    }
    out.push_str(rest);
    out
}

/// Like [`Diff::check`] with time fields masked (use an in-process-only [`Diff`]: the
/// served leg would compare unmasked).
fn check_masked(d: &mut Diff, script: &[&[&str]]) {
    for (i, args) in script.iter().enumerate() {
        let (real, ours) = d.both(args);
        assert_eq!(
            masked(args, &ours),
            masked(args, &real),
            "command #{i} {args:?}: engine (left) vs redis-server (right)"
        );
    }
}

#[test]
fn masking_hides_only_times() {
    let reply = "array([array([bulk-string('\"1-1\"'), bulk-string('\"c\"'), int(17), int(2)])])";
    assert_eq!(
        masked(&["XPENDING", "s", "g", "-", "+", "9"], reply),
        "array([array([bulk-string('\"1-1\"'), bulk-string('\"c\"'), int(*), int(2)])])"
    );
    assert_eq!(mask_epochs("int(1796201490962), int(5)"), "int(T), int(5)");
    assert_eq!(
        mask_after(
            "bulk-string('\"idle\"'), int(12)]",
            "bulk-string('\"idle\"'), int("
        ),
        "bulk-string('\"idle\"'), int(*)]"
    );
}

/// Five entries 1-0..5-0 in `s`, and group `g` at 0.
fn five_entries_and_a_group(d: &mut Diff) {
    d.check(&[
        &["XADD", "s", "1-0", "a", "1"],
        &["XADD", "s", "2-0", "b", "2"],
        &["XADD", "s", "3-0", "c", "3"],
        &["XADD", "s", "4-0", "d", "4"],
        &["XADD", "s", "5-0", "e", "5"],
        &["XGROUP", "CREATE", "s", "g", "0"],
    ]);
}

#[test]
fn xreadgroup_delivers_each_entry_once_and_reads_history() {
    let mut d = Diff::new();
    five_entries_and_a_group(&mut d);
    d.check(&[
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "COUNT",
            "2",
            "STREAMS",
            "s",
            ">",
        ],
        &["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"],
        &["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "COUNT",
            "1",
            "STREAMS",
            "s",
            "1-0",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "COUNT",
            "-5",
            "STREAMS",
            "s",
            "0-0",
        ],
        &["XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", "0"],
        &["XPENDING", "s", "g"],
        &["XINFO", "GROUPS", "s"],
        &["XDEL", "s", "2-0"],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "0"],
        &["XINFO", "GROUPS", "s"],
        &["XADD", "s", "6-0", "f", "6"],
        &["XINFO", "GROUPS", "s"],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "NOACK",
            "STREAMS",
            "s",
            ">",
        ],
        &["XPENDING", "s", "g"],
        &["XINFO", "GROUPS", "s"],
        // The greatest id is Redis's marker for `>`.
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "STREAMS",
            "s",
            "18446744073709551615-18446744073709551615",
        ],
        &["XADD", "s", "7-0", "g", "7"],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "dave",
            "STREAMS",
            "s",
            "18446744073709551615-18446744073709551615",
        ],
        // Several streams, a repeated one, and the order of checks per stream.
        &["XGROUP", "CREATE", "t", "g", "0", "MKSTREAM"],
        &["XADD", "t", "1-0", "x", "y"],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "STREAMS",
            "s",
            "t",
            "0",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "STREAMS",
            "t",
            "t",
            "0",
            "0",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "STREAMS",
            "s",
            "t",
            ">",
            ">",
        ],
        // Delivered again after SETID: entries change owner, counts restart.
        &["XGROUP", "SETID", "s", "g", "0"],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "bob",
            "COUNT",
            "3",
            "STREAMS",
            "s",
            ">",
        ],
        &["XPENDING", "s", "g"],
        &["XINFO", "GROUPS", "s"],
        &["XGROUP", "SETID", "s", "g", "$", "ENTRIESREAD", "3"],
        &["XINFO", "GROUPS", "s"],
        &["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"],
        &["MULTI"],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "bob",
            "BLOCK",
            "0",
            "STREAMS",
            "s",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "bob",
            "BLOCK",
            "10",
            "STREAMS",
            "s",
            "0",
        ],
        &["EXEC"],
    ]);
    // RESP3: a map per stream, as XREAD.
    let _ = d.both(&["HELLO", "3"]);
    d.check(&[
        &["XADD", "s", "8-0", "h", "8"],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "bob",
            "STREAMS",
            "s",
            "t",
            ">",
            "0",
        ],
        &["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"],
        &["XINFO", "GROUPS", "s"],
        &["XPENDING", "s", "nogroup"],
        &["XPENDING", "t", "g"],
    ]);
}

#[test]
fn xreadgroup_errors() {
    let mut d = Diff::new();
    five_entries_and_a_group(&mut d);
    d.check(&[
        &["SET", "str", "x"],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "$"],
        &[
            "XREADGROUP",
            "GROUP",
            "nogroup",
            "alice",
            "STREAMS",
            "s",
            ">",
        ],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "nokey", ">"],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "bad"],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "-"],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "+"],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", "1-*"],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "str", ">"],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "STREAMS",
            "s",
            "str",
            ">",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "STREAMS",
            "s",
            "str",
            "bad",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "STREAMS",
            "nokey",
            "str",
            ">",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "STREAMS",
            "s",
            "t",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "FOO",
            "STREAMS",
            "s",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "COUNT",
            "x",
            "STREAMS",
            "s",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "BLOCK",
            "-1",
            "STREAMS",
            "s",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "BLOCK",
            "x",
            "STREAMS",
            "s",
            ">",
        ],
        &[
            "XREADGROUP",
            "COUNT",
            "1",
            "BLOCK",
            "0",
            "STREAMS",
            "s",
            ">",
        ],
        &["XREADGROUP", "COUNT", "1", "BLOCK", "0", "NOACK", "s", ">"],
        &["XREADGROUP", "GROUP", "g", "STREAMS", "s", ">"],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s"],
        &["XREADGROUP", "STREAMS", "s", ">"],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "NOACK",
            "NOACK",
            "STREAMS",
            "s",
            ">",
        ],
        &["XREAD", "GROUP", "g", "alice", "STREAMS", "s", ">"],
        &["XREAD", "NOACK", "STREAMS", "s", "0"],
        // Nothing was delivered by the failed calls.
        &["XPENDING", "s", "g"],
        &["XINFO", "GROUPS", "s"],
    ]);
}

#[test]
fn xack_and_xpending() {
    let mut d = Diff::in_process_only();
    five_entries_and_a_group(&mut d);
    check_masked(
        &mut d,
        &[
            &["XPENDING", "s", "g"],
            &["XPENDING", "s", "g", "-", "+", "10"],
            &[
                "XREADGROUP",
                "GROUP",
                "g",
                "alice",
                "COUNT",
                "3",
                "STREAMS",
                "s",
                ">",
            ],
            &["XREADGROUP", "GROUP", "g", "bob", "STREAMS", "s", ">"],
            &["XPENDING", "s", "g"],
            &["XPENDING", "s", "g", "-", "+", "10"],
            &["XPENDING", "s", "g", "-", "+", "2"],
            &["XPENDING", "s", "g", "(1-0", "+", "10"],
            &["XPENDING", "s", "g", "2", "(4", "10"],
            &["XPENDING", "s", "g", "-", "+", "10", "bob"],
            &["XPENDING", "s", "g", "-", "+", "10", "nobody"],
            &["XPENDING", "s", "g", "-", "+", "0"],
            &["XPENDING", "s", "g", "-", "+", "-1"],
            &["XPENDING", "s", "g", "+", "-", "10"],
            &["XPENDING", "s", "g", "-", "+", "9223372036854775807"],
            &["XPENDING", "s", "g", "IDLE", "0", "-", "+", "10"],
            &["XPENDING", "s", "g", "IDLE", "-5", "-", "+", "10", "alice"],
            // An idle time nobody reached yet (an hour).
            &["XPENDING", "s", "g", "IDLE", "3600000", "-", "+", "10"],
            &["XPENDING", "s", "g", "IDLE", "10", "-", "+"],
            &["XPENDING", "s", "g", "IDLE", "x", "-", "+", "10"],
            &["XPENDING", "s", "g", "-", "+"],
            &["XPENDING", "s", "g", "-"],
            &["XPENDING", "s", "g", "-", "+", "x"],
            &["XPENDING", "s", "g", "bad", "+", "10"],
            &["XPENDING", "s", "g", "-", "bad", "10"],
            &["XPENDING", "s", "g", "(", "+", "10"],
            &[
                "XPENDING",
                "s",
                "g",
                "(18446744073709551615-18446744073709551615",
                "+",
                "1",
            ],
            &["XPENDING", "s", "g", "-", "(0-0", "1"],
            &["XPENDING", "s", "g", "-", "+", "10", "alice", "extra"],
            &[
                "XPENDING", "s", "g", "IDLE", "1", "-", "+", "10", "alice", "x",
            ],
            &["XPENDING", "s", "nogroup"],
            &["XPENDING", "nokey", "g"],
            &["XPENDING", "nokey", "g", "bad", "+", "10"],
            &["XPENDING", "s"],
            // XACK: only pending ids count; all ids are parsed before any is acked.
            &["XACK", "s", "g", "1-0", "1-0", "9-0"],
            &["XACK", "s", "g", "2-0", "bad"],
            &["XPENDING", "s", "g"],
            &["XACK", "s", "g", "2", "4-0", "5-0"],
            &["XPENDING", "s", "g"],
            &["XPENDING", "s", "g", "-", "+", "10"],
            &["XACK", "s", "nogroup", "3-0"],
            &["XACK", "nokey", "g", "bad"],
            &["XACK", "s", "g", "-"],
            &["XACK", "s", "g", "+"],
            &["XACK", "s", "g"],
            &["SET", "str", "x"],
            &["XACK", "str", "g", "1-0"],
            &["XPENDING", "str", "g"],
            &["XPENDING", "str", "g", "-", "+", "1"],
            &["XINFO", "CONSUMERS", "s", "g"],
        ],
    );
}

#[test]
fn xclaim_options_and_deleted_entries() {
    let mut d = Diff::in_process_only();
    five_entries_and_a_group(&mut d);
    check_masked(
        &mut d,
        &[
            &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"],
            // An hour of idle time is needed: nothing is claimed, bob is not created.
            &["XCLAIM", "s", "g", "bob", "3600000", "1-0", "2-0"],
            &["XINFO", "CONSUMERS", "s", "g"],
            &["XCLAIM", "s", "g", "bob", "0", "1-0", "2-0"],
            &["XPENDING", "s", "g", "-", "+", "10"],
            &["XCLAIM", "s", "g", "bob", "-5", "3-0", "JUSTID"],
            &[
                "XCLAIM",
                "s",
                "g",
                "bob",
                "0",
                "3-0",
                "3-0",
                "RETRYCOUNT",
                "7",
            ],
            &[
                "XCLAIM", "s", "g", "bob", "0", "4-0", "TIME", "1000", "JUSTID",
            ],
            &["XINFO", "STREAM", "s", "FULL"],
            &[
                "XCLAIM",
                "s",
                "g",
                "carol",
                "0",
                "4-0",
                "IDLE",
                "5000",
                "RETRYCOUNT",
                "-1",
            ],
            &["XPENDING", "s", "g", "-", "+", "10"],
            // A time in the future or before the epoch is taken as now.
            &[
                "XCLAIM",
                "s",
                "g",
                "carol",
                "0",
                "5-0",
                "TIME",
                "99999999999999",
                "JUSTID",
            ],
            &[
                "XCLAIM", "s", "g", "carol", "0", "5-0", "IDLE", "-100000", "JUSTID",
            ],
            &["XPENDING", "s", "g", "-", "+", "10"],
            // Deleted entries leave the PEL and are not replied.
            &["XDEL", "s", "1-0", "2-0"],
            &["XPENDING", "s", "g"],
            &["XCLAIM", "s", "g", "carol", "0", "1-0", "2-0", "3-0"],
            &["XPENDING", "s", "g"],
            // FORCE creates pending entries for entries that exist; LASTID moves the group.
            &["XACK", "s", "g", "3-0", "4-0", "5-0"],
            &["XCLAIM", "s", "g", "dave", "0", "4-0", "1-0"],
            &[
                "XCLAIM", "s", "g", "dave", "3600000", "4-0", "1-0", "9-0", "FORCE",
            ],
            &["XPENDING", "s", "g", "-", "+", "10"],
            &[
                "XCLAIM", "s", "g", "dave", "0", "5-0", "FORCE", "JUSTID", "LASTID", "9-0",
            ],
            &["XINFO", "GROUPS", "s"],
            &["XCLAIM", "s", "g", "dave", "0", "5-0", "LASTID", "1-0"],
            &["XINFO", "GROUPS", "s"],
            // Errors, in Redis's order.
            &["XCLAIM", "s", "g", "dave", "x", "5-0"],
            &["XCLAIM", "s", "nogroup", "dave", "x", "5-0"],
            &["XCLAIM", "nokey", "g", "dave", "x", "5-0"],
            &["XCLAIM", "s", "g", "dave", "0", "5-0", "FOO"],
            &["XCLAIM", "s", "g", "dave", "0", "5-0", "IDLE"],
            &["XCLAIM", "s", "g", "dave", "0", "5-0", "IDLE", "x"],
            &["XCLAIM", "s", "g", "dave", "0", "5-0", "TIME", "x"],
            &["XCLAIM", "s", "g", "dave", "0", "5-0", "RETRYCOUNT", "x"],
            &["XCLAIM", "s", "g", "dave", "0", "5-0", "LASTID", "bad"],
            &["XCLAIM", "s", "g", "dave", "0", "5-0", "LASTID", "-"],
            &["XCLAIM", "s", "g", "dave", "0", "5-0", "JUSTID", "4-0"],
            &["XCLAIM", "s", "g", "dave", "0", "bad"],
            &["XCLAIM", "s", "g", "dave", "0"],
            &["SET", "str", "x"],
            &["XCLAIM", "str", "g", "dave", "0", "1-0"],
            &["XPENDING", "s", "g", "-", "+", "10"],
            &["XINFO", "CONSUMERS", "s", "g"],
        ],
    );
}

#[test]
fn xautoclaim_cursors_and_deleted_ids() {
    let mut d = Diff::in_process_only();
    for i in 1..=12 {
        let id = format!("{i}-0");
        d.check(&[&["XADD", "s", &id, "f", "v"]]);
    }
    d.check(&[&["XGROUP", "CREATE", "s", "g", "0"]]);
    check_masked(
        &mut d,
        &[
            &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"],
            &["XAUTOCLAIM", "s", "g", "bob", "3600000", "0"],
            &["XINFO", "CONSUMERS", "s", "g"],
            &["XAUTOCLAIM", "s", "g", "bob", "0", "0", "COUNT", "3"],
            &[
                "XAUTOCLAIM",
                "s",
                "g",
                "bob",
                "0",
                "4-0",
                "COUNT",
                "3",
                "JUSTID",
            ],
            &["XAUTOCLAIM", "s", "g", "bob", "0", "(6-0", "COUNT", "2"],
            &["XPENDING", "s", "g", "-", "+", "20"],
            &["XDEL", "s", "9-0", "10-0", "11-0"],
            // Deleted ids count toward COUNT and are reported in the third element.
            &["XAUTOCLAIM", "s", "g", "carol", "0", "9-0", "COUNT", "2"],
            &["XAUTOCLAIM", "s", "g", "carol", "0", "11-0", "COUNT", "5"],
            &[
                "XAUTOCLAIM",
                "s",
                "g",
                "carol",
                "0",
                "-",
                "COUNT",
                "1",
                "JUSTID",
            ],
            &["XAUTOCLAIM", "s", "g", "carol", "0", "+"],
            &["XAUTOCLAIM", "s", "g", "carol", "0", "99", "COUNT", "1"],
            &["XPENDING", "s", "g"],
            // Attempts are capped at ten per COUNT: the cursor stops mid-way.
            &["XAUTOCLAIM", "s", "g", "dave", "3600000", "0", "COUNT", "1"],
            &[
                "XAUTOCLAIM",
                "s",
                "g",
                "dave",
                "0",
                "0",
                "COUNT",
                "100",
                "JUSTID",
                "JUSTID",
            ],
            &["XAUTOCLAIM", "s", "g", "dave", "0", "0", "COUNT", "0"],
            &["XAUTOCLAIM", "s", "g", "dave", "0", "0", "COUNT", "-1"],
            &["XAUTOCLAIM", "s", "g", "dave", "0", "0", "COUNT", "x"],
            &[
                "XAUTOCLAIM",
                "s",
                "g",
                "dave",
                "0",
                "0",
                "COUNT",
                "576460752303423488",
            ],
            &["XAUTOCLAIM", "s", "g", "dave", "0", "0", "COUNT"],
            &["XAUTOCLAIM", "s", "g", "dave", "0", "0", "FOO"],
            &["XAUTOCLAIM", "s", "g", "dave", "x", "0"],
            &["XAUTOCLAIM", "s", "g", "dave", "0", "bad"],
            &[
                "XAUTOCLAIM",
                "s",
                "g",
                "dave",
                "0",
                "(18446744073709551615-18446744073709551615",
            ],
            &["XAUTOCLAIM", "s", "nogroup", "dave", "0", "0"],
            &["XAUTOCLAIM", "nokey", "g", "dave", "0", "0"],
            &["XAUTOCLAIM", "nokey", "g", "dave", "0", "bad"],
            &["SET", "str", "x"],
            &["XAUTOCLAIM", "str", "g", "dave", "0", "0"],
            &["XAUTOCLAIM", "s", "g", "dave", "0"],
            &["XINFO", "CONSUMERS", "s", "g"],
        ],
    );
}

#[test]
fn xinfo_stream_counts_nodes_and_ids_as_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["XADD", "e", "1-0", "f", "v"],
        &["XDEL", "e", "1-0"],
        &["XINFO", "STREAM", "e"],
        &["XINFO", "STREAM", "e", "FULL"],
    ]);
    // Enough entries for several listpack nodes, then holes and trims.
    for i in 1..=350u64 {
        let id = format!("{}-{}", i / 3, i % 3);
        let v = if i % 7 == 0 {
            "x".repeat(200)
        } else {
            i.to_string()
        };
        d.check(&[&["XADD", "s", &id, "field", &v]]);
    }
    d.check(&[
        &["XINFO", "STREAM", "s"],
        &["XDEL", "s", "0-1", "50-0", "116-2"],
        &["XINFO", "STREAM", "s"],
        &["XTRIM", "s", "MAXLEN", "~", "200"],
        &["XINFO", "STREAM", "s"],
        &["XTRIM", "s", "MINID", "100-1"],
        &["XINFO", "STREAM", "s"],
        &["XINFO", "STREAM", "s", "FULL", "COUNT", "3"],
        &["XINFO", "STREAM", "s", "full", "count", "-1"],
        &["XINFO", "STREAM", "s", "FULL", "COUNT", "0"],
        &["XGROUP", "CREATE", "s", "g1", "0"],
        &["XGROUP", "CREATE", "s", "g0", "$"],
        &["XINFO", "STREAM", "s"],
        &["XINFO", "GROUPS", "s"],
        &["XINFO", "STREAM", "s", "FULL", "COUNT", "2"],
        &["XINFO", "CONSUMERS", "s", "g1"],
        &["XINFO", "CONSUMERS", "s", "nogroup"],
        &["XINFO", "CONSUMERS", "nokey", "g1"],
        &["XINFO", "CONSUMERS", "s"],
        &["XINFO", "GROUPS", "nokey"],
        &["XINFO", "GROUPS", "s", "x"],
        &["XINFO", "STREAM", "nokey"],
        &["XINFO", "STREAM", "nokey", "FULL", "COUNT"],
        &["XINFO", "STREAM", "s", "FULL", "COUNT"],
        &["XINFO", "STREAM", "s", "FULL", "COUNT", "x"],
        &["XINFO", "STREAM", "s", "FULL", "LIMIT", "1"],
        &["XINFO", "STREAM", "s", "PARTIAL"],
        &["XINFO", "STREAM", "s", "FULL", "COUNT", "1", "x"],
        &["XINFO", "STREAM"],
        &["XINFO", "HELP"],
        &["XINFO", "HELP", "x"],
        &["XINFO", "FOO", "s"],
        &["XINFO"],
        &["SET", "str", "x"],
        &["XINFO", "STREAM", "str"],
        &["XINFO", "GROUPS", "str"],
        &["XINFO", "CONSUMERS", "str", "g"],
    ]);
    let _ = d.both(&["HELLO", "3"]);
    d.check(&[
        &["XINFO", "STREAM", "s"],
        &["XINFO", "GROUPS", "s"],
        &["XINFO", "STREAM", "e", "FULL"],
    ]);
}

#[test]
fn lag_and_entries_read_follow_redis_estimates() {
    let mut d = Diff::new();
    five_entries_and_a_group(&mut d);
    d.check(&[
        &["XGROUP", "CREATE", "s", "mid", "3-0"],
        &["XGROUP", "CREATE", "s", "top", "$"],
        &["XGROUP", "CREATE", "s", "read", "0", "ENTRIESREAD", "2"],
        &["XGROUP", "CREATE", "s", "ahead", "9-0"],
        &["XINFO", "GROUPS", "s"],
        &[
            "XREADGROUP",
            "GROUP",
            "mid",
            "c",
            "COUNT",
            "1",
            "STREAMS",
            "s",
            ">",
        ],
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            "1",
            "STREAMS",
            "s",
            ">",
        ],
        &["XINFO", "GROUPS", "s"],
        &["XDEL", "s", "1-0"],
        &["XINFO", "GROUPS", "s"],
        &["XDEL", "s", "3-0"],
        &["XINFO", "GROUPS", "s"],
        &["XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"],
        &["XINFO", "GROUPS", "s"],
        &["XTRIM", "s", "MAXLEN", "0"],
        &["XINFO", "GROUPS", "s"],
        &["XADD", "s", "10-0", "f", "v"],
        &["XINFO", "GROUPS", "s"],
        &[
            "XSETID",
            "s",
            "20-0",
            "ENTRIESADDED",
            "50",
            "MAXDELETEDID",
            "15-0",
        ],
        &["XINFO", "GROUPS", "s"],
        &["XINFO", "STREAM", "s"],
    ]);
}

#[test]
fn xsetid_options_and_errors() {
    let mut d = Diff::new();
    d.check(&[
        &["XSETID", "s", "5-0"],
        &["XADD", "s", "1-0", "f", "v"],
        &["XADD", "s", "2-0", "f", "v"],
        &["XSETID", "s", "1-0"],
        &["XSETID", "s", "2-0"],
        &["XSETID", "s", "3"],
        &["XINFO", "STREAM", "s"],
        &["XADD", "s", "3-0", "f", "v"],
        &["XADD", "s", "3-*", "f", "v"],
        &["XDEL", "s", "3-1"],
        &["XINFO", "STREAM", "s"],
        &["XSETID", "s", "3-0", "ENTRIESADDED", "2"],
        &[
            "XSETID",
            "s",
            "3-0",
            "ENTRIESADDED",
            "3",
            "MAXDELETEDID",
            "3-0",
        ],
        &["XINFO", "STREAM", "s"],
        &["XSETID", "s", "3-0", "MAXDELETEDID", "4-0"],
        &["XSETID", "s", "3-0", "MAXDELETEDID", "0-0"],
        &["XSETID", "s", "3-0", "ENTRIESADDED", "-1"],
        &["XSETID", "s", "3-0", "ENTRIESADDED", "x"],
        &["XSETID", "s", "3-0", "ENTRIESADDED"],
        &["XSETID", "s", "3-0", "MAXDELETEDID", "bad"],
        &["XSETID", "s", "3-0", "FOO", "1"],
        &["XSETID", "s", "-"],
        &["XSETID", "s", "+"],
        &["XSETID", "s", "bad"],
        &["XSETID", "nokey", "1-0"],
        &["XSETID", "nokey", "bad"],
        &["XSETID", "nokey", "1-0", "FOO"],
        &["XSETID", "s"],
        &["SET", "str", "x"],
        &["XSETID", "str", "1-0"],
        &["XTRIM", "s", "MAXLEN", "0"],
        &["XSETID", "s", "0-0", "ENTRIESADDED", "0"],
        &["XINFO", "STREAM", "s"],
        &["XADD", "s", "0-*", "f", "v"],
        &["XLEN", "s"],
    ]);
}

#[test]
fn groups_live_in_the_value_del_rename_and_copy_carry_them() {
    let mut d = Diff::new();
    five_entries_and_a_group(&mut d);
    d.check(&[
        &[
            "XREADGROUP",
            "GROUP",
            "g",
            "alice",
            "COUNT",
            "2",
            "STREAMS",
            "s",
            ">",
        ],
        &["RENAME", "s", "t"],
        &["XPENDING", "t", "g"],
        &["XPENDING", "s", "g"],
        &["XINFO", "GROUPS", "t"],
        &["COPY", "t", "u"],
        &["XACK", "u", "g", "1-0"],
        &["XPENDING", "u", "g"],
        &["XPENDING", "t", "g"],
        &["DEL", "t"],
        &["XADD", "t", "9-0", "f", "v"],
        &["XINFO", "GROUPS", "t"],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "t", ">"],
        // Trimming and XDEL leave pending ids in place.
        &["XTRIM", "u", "MAXLEN", "0"],
        &["XPENDING", "u", "g"],
        &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "u", "0"],
        &["XINFO", "STREAM", "u"],
        &["TYPE", "u"],
    ]);
}

/// The engine alone on a manual clock: the time fields Redis's replies carry, exactly.
struct Clocked {
    clock: Arc<AtomicU64>,
    engine: Engine,
    client: Client,
}

impl Clocked {
    fn new(now_ms: u64) -> Clocked {
        let clock = Arc::new(AtomicU64::new(now_ms));
        let engine = Engine::with_clock(clock.clone());
        let client = engine.client();
        Clocked {
            clock,
            engine,
            client,
        }
    }

    fn advance(&self, ms: u64) {
        self.clock.fetch_add(ms, Ordering::SeqCst);
    }

    fn run(&mut self, args: &[&str]) -> Reply {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        self.engine.execute(&mut self.client, &argv)
    }
}

fn b(s: &str) -> Reply {
    Reply::Bulk(s.as_bytes().to_vec())
}

fn arr(items: Vec<Reply>) -> Reply {
    Reply::Array(items)
}

fn pending_row(id: &str, consumer: &str, idle: i64, count: i64) -> Reply {
    arr(vec![
        b(id),
        b(consumer),
        Reply::Int(idle),
        Reply::Int(count),
    ])
}

fn ids(list: &[&str]) -> Reply {
    arr(list.iter().map(|id| b(id)).collect())
}

#[test]
fn idle_times_and_claims_follow_the_engine_clock() {
    let start = 1_000_000;
    let mut e = Clocked::new(start);
    for id in ["1-0", "2-0", "3-0"] {
        assert_eq!(e.run(&["XADD", "s", id, "f", "v"]), b(id));
    }
    assert_eq!(e.run(&["XGROUP", "CREATE", "s", "g", "0"]), Reply::ok());
    assert!(matches!(
        e.run(&["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"]),
        Reply::Array(_)
    ));
    e.advance(5_000);
    assert_eq!(
        e.run(&["XPENDING", "s", "g", "-", "+", "10"]),
        arr(vec![
            pending_row("1-0", "alice", 5_000, 1),
            pending_row("2-0", "alice", 5_000, 1),
            pending_row("3-0", "alice", 5_000, 1),
        ])
    );
    assert_eq!(
        e.run(&["XPENDING", "s", "g", "IDLE", "5001", "-", "+", "10"]),
        arr(vec![])
    );
    assert_eq!(
        e.run(&["XINFO", "CONSUMERS", "s", "g"]),
        arr(vec![Reply::Map(vec![
            (b("name"), b("alice")),
            (b("pending"), Reply::Int(3)),
            (b("idle"), Reply::Int(5_000)),
        ])])
    );
    // Not idle long enough, then just enough.
    assert_eq!(
        e.run(&["XCLAIM", "s", "g", "bob", "5001", "1-0", "JUSTID"]),
        arr(vec![])
    );
    assert_eq!(
        e.run(&["XCLAIM", "s", "g", "bob", "5000", "1-0", "JUSTID"]),
        ids(&["1-0"])
    );
    e.advance(100);
    assert_eq!(
        e.run(&["XCLAIM", "s", "g", "bob", "0", "2-0", "IDLE", "300"]),
        arr(vec![arr(vec![b("2-0"), arr(vec![b("f"), b("v")])])])
    );
    let time = (start + 1_000).to_string();
    assert_eq!(
        e.run(&[
            "XCLAIM",
            "s",
            "g",
            "bob",
            "0",
            "3-0",
            "TIME",
            &time,
            "RETRYCOUNT",
            "9",
            "JUSTID"
        ]),
        ids(&["3-0"])
    );
    assert_eq!(
        e.run(&["XPENDING", "s", "g", "-", "+", "10"]),
        arr(vec![
            // JUSTID does not count a delivery.
            pending_row("1-0", "bob", 100, 1),
            pending_row("2-0", "bob", 300, 2),
            pending_row("3-0", "bob", 4_100, 9),
        ])
    );
    // XAUTOCLAIM takes only entries idle for at least min-idle-time.
    assert_eq!(
        e.run(&["XAUTOCLAIM", "s", "g", "carol", "200", "0", "JUSTID"]),
        arr(vec![b("0-0"), ids(&["2-0", "3-0"]), arr(vec![])])
    );
    e.advance(50);
    let seen = |ms: u64| Reply::Int((start + ms) as i64);
    let full = e.run(&["XINFO", "STREAM", "s", "FULL"]);
    let Reply::Map(fields) = full else {
        panic!("XINFO STREAM FULL: {full:?}");
    };
    let groups = &fields
        .iter()
        .find(|(k, _)| *k == b("groups"))
        .expect("groups")
        .1;
    let Reply::Array(groups) = groups else {
        panic!("groups: {groups:?}");
    };
    let Reply::Map(group) = &groups[0] else {
        panic!("group: {:?}", groups[0]);
    };
    let pel = &group
        .iter()
        .find(|(k, _)| *k == b("pending"))
        .expect("pel")
        .1;
    assert_eq!(
        *pel,
        arr(vec![
            arr(vec![b("1-0"), b("bob"), seen(5_000), Reply::Int(1)]),
            arr(vec![b("2-0"), b("carol"), seen(5_100), Reply::Int(2)]),
            arr(vec![b("3-0"), b("carol"), seen(5_100), Reply::Int(9)]),
        ])
    );
    let consumers = &group
        .iter()
        .find(|(k, _)| *k == b("consumers"))
        .expect("consumers")
        .1;
    let seen_times: Vec<Reply> = match consumers {
        Reply::Array(cs) => cs
            .iter()
            .map(|c| match c {
                Reply::Map(f) => f[1].1.clone(),
                other => panic!("consumer: {other:?}"),
            })
            .collect(),
        other => panic!("consumers: {other:?}"),
    };
    // alice read at the start; bob last claimed at +5100; carol at +5100.
    assert_eq!(seen_times, vec![seen(0), seen(5_100), seen(5_100)]);
    // A history read counts a delivery and restarts the idle time.
    e.run(&["XREADGROUP", "GROUP", "g", "carol", "STREAMS", "s", "0"]);
    e.advance(7);
    assert_eq!(
        e.run(&["XPENDING", "s", "g", "-", "+", "10", "carol"]),
        arr(vec![
            pending_row("2-0", "carol", 7, 3),
            pending_row("3-0", "carol", 7, 10),
        ])
    );
}

#[test]
fn huge_counts_allocate_only_what_exists() {
    let mut e = Clocked::new(1_000);
    e.run(&["XADD", "s", "1-0", "f", "v"]);
    e.run(&["XGROUP", "CREATE", "s", "g", "0"]);
    let huge = i64::MAX.to_string();
    let max_autoclaim = (i64::MAX / 16).to_string();
    let read = e.run(&[
        "XREADGROUP",
        "GROUP",
        "g",
        "c",
        "COUNT",
        &huge,
        "STREAMS",
        "s",
        ">",
    ]);
    assert_eq!(
        read,
        arr(vec![arr(vec![
            b("s"),
            arr(vec![arr(vec![b("1-0"), arr(vec![b("f"), b("v")])])])
        ])])
    );
    assert_eq!(
        e.run(&["XPENDING", "s", "g", "-", "+", &huge]),
        arr(vec![pending_row("1-0", "c", 0, 1)])
    );
    // Redis fails this one allocating COUNT slots up front; the engine needs none.
    assert_eq!(
        e.run(&[
            "XAUTOCLAIM",
            "s",
            "g",
            "c",
            "0",
            "0",
            "COUNT",
            &max_autoclaim,
            "JUSTID"
        ]),
        arr(vec![b("0-0"), ids(&["1-0"]), arr(vec![])])
    );
    assert!(matches!(
        e.run(&["XINFO", "STREAM", "s", "FULL", "COUNT", &huge]),
        Reply::Map(_)
    ));
    // Many ids: each is looked up, none is stored beyond the reply.
    let mut many = vec!["XCLAIM", "s", "g", "c", "0"];
    many.extend(std::iter::repeat_n("1-0", 10_000));
    many.push("JUSTID");
    match e.run(&many) {
        Reply::Array(claimed) => assert_eq!(claimed.len(), 10_000),
        other => panic!("XCLAIM: {other:?}"),
    }
}

/// Redis announces group bookkeeping to no WATCH (t_stream.c calls `signalModifiedKey`
/// only for XADD, XDEL, XTRIM and XGROUP CREATE MKSTREAM): a transaction watching the
/// stream still runs after another client's XREADGROUP, XACK, XCLAIM, SETID, XSETID, ...
/// (as redis-server 7.0.15 does for this sequence).
#[test]
fn group_bookkeeping_does_not_abort_a_watching_transaction() {
    let mut e = Clocked::new(1_000);
    let mut watcher = e.engine.client();
    let mut watcher_run = |engine: &Engine, args: &[&str]| {
        let argv: Vec<&[u8]> = args.iter().map(|a| a.as_bytes()).collect();
        engine.execute(&mut watcher, &argv)
    };
    e.run(&["XADD", "jobs", "1-1", "n", "1"]);
    e.run(&["XADD", "jobs", "2-1", "n", "2"]);
    e.run(&["XGROUP", "CREATE", "jobs", "g", "0"]);
    let engine = e.engine.clone();
    let transaction = |watcher_run: &mut dyn FnMut(&Engine, &[&str]) -> Reply| {
        watcher_run(&engine, &["MULTI"]);
        watcher_run(&engine, &["PING"]);
        watcher_run(&engine, &["EXEC"])
    };
    let committed = arr(vec![Reply::Status("PONG".into())]);
    assert_eq!(watcher_run(&engine, &["WATCH", "jobs"]), Reply::ok());
    for args in [
        &["XREADGROUP", "GROUP", "g", "d", "STREAMS", "jobs", ">"][..],
        &["XREADGROUP", "GROUP", "g", "d", "STREAMS", "jobs", "0"],
        &["XACK", "jobs", "g", "1-1"],
        &["XGROUP", "CREATECONSUMER", "jobs", "g", "zz"],
        &["XCLAIM", "jobs", "g", "zz", "0", "2-1"],
        &["XAUTOCLAIM", "jobs", "g", "d", "0", "0"],
        &["XGROUP", "DELCONSUMER", "jobs", "g", "zz"],
        &["XGROUP", "SETID", "jobs", "g", "0"],
        &["XSETID", "jobs", "9-9"],
        &["XGROUP", "CREATE", "jobs", "g2", "0"],
        &["XGROUP", "DESTROY", "jobs", "g2"],
    ] {
        assert!(!e.run(args).is_error(), "{args:?}");
    }
    assert_eq!(transaction(&mut watcher_run), committed);
    assert_eq!(watcher_run(&engine, &["WATCH", "jobs"]), Reply::ok());
    e.run(&["XDEL", "jobs", "1-1"]);
    assert_eq!(transaction(&mut watcher_run), Reply::NilArray);
}

/// A small deterministic generator (64-bit LCG, Knuth's MMIX constants), so the random
/// scripts below are the same on every run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// One random group command over stream `s` whose ids run 1-0 .. `top`-0.
fn random_group_command(r: &mut Lcg, top: &mut u64) -> Vec<String> {
    let consumers = ["alice", "bob", "carol"];
    let groups = ["g", "h"];
    let id = |r: &mut Lcg, top: u64| format!("{}-0", r.below(top + 2));
    let c = consumers[r.below(3) as usize].to_string();
    let g = groups[r.below(2) as usize].to_string();
    let words: Vec<String> = match r.below(20) {
        0..=2 => {
            *top += 1 + r.below(2);
            let mut cmd = vec!["XADD".into(), "s".into()];
            if r.below(6) == 0 {
                cmd.extend(["MAXLEN".into(), "~".into(), "20".into()]);
            }
            cmd.extend([format!("{top}-0"), "f".into(), top.to_string()]);
            cmd
        }
        3 => vec!["XDEL".into(), "s".into(), id(r, *top), id(r, *top)],
        4 => {
            let count = r.below(4).to_string();
            let from = if r.below(3) == 0 {
                id(r, *top)
            } else {
                ">".into()
            };
            let noack = if r.below(5) == 0 { "NOACK" } else { "COUNT" };
            let mut cmd: Vec<String> = ["XREADGROUP", "GROUP", &g, &c, "COUNT", &count]
                .map(String::from)
                .to_vec();
            if noack == "NOACK" {
                cmd.push("NOACK".into());
            }
            cmd.extend(["STREAMS".into(), "s".into(), from]);
            cmd
        }
        5 => vec!["XACK".into(), "s".into(), g, id(r, *top), id(r, *top)],
        6 => {
            let mut cmd = vec![
                "XCLAIM".into(),
                "s".into(),
                g,
                c,
                "0".into(),
                id(r, *top),
                id(r, *top),
            ];
            if r.below(3) == 0 {
                cmd.push("FORCE".into());
            }
            if r.below(2) == 0 {
                cmd.push("JUSTID".into());
            }
            cmd
        }
        7 => vec![
            "XAUTOCLAIM".into(),
            "s".into(),
            g,
            c,
            "0".into(),
            id(r, *top),
            "COUNT".into(),
            (1 + r.below(4)).to_string(),
        ],
        8 => vec!["XGROUP".into(), "SETID".into(), "s".into(), g, id(r, *top)],
        9 => {
            if r.below(2) == 0 {
                vec!["XGROUP".into(), "DESTROY".into(), "s".into(), g]
            } else {
                vec!["XGROUP".into(), "CREATE".into(), "s".into(), g, id(r, *top)]
            }
        }
        10 => vec!["XGROUP".into(), "DELCONSUMER".into(), "s".into(), g, c],
        11 => vec!["XPENDING".into(), "s".into(), g],
        12 => vec![
            "XPENDING".into(),
            "s".into(),
            g,
            "-".into(),
            "+".into(),
            "5".into(),
            c,
        ],
        13 => vec!["XINFO".into(), "GROUPS".into(), "s".into()],
        14 => vec!["XTRIM".into(), "s".into(), "MINID".into(), id(r, *top / 2)],
        15 => vec!["XINFO".into(), "STREAM".into(), "s".into(), "FULL".into()],
        16 => vec![
            "XGROUP".into(),
            "CREATE".into(),
            "s".into(),
            g,
            id(r, *top),
            "ENTRIESREAD".into(),
            r.below(*top + 2).to_string(),
        ],
        17 => vec![
            "XCLAIM".into(),
            "s".into(),
            g,
            c,
            "0".into(),
            id(r, *top),
            "LASTID".into(),
            id(r, *top),
            "RETRYCOUNT".into(),
            r.below(3).to_string(),
        ],
        18 => vec!["XINFO".into(), "CONSUMERS".into(), "s".into(), g],
        _ => vec!["XSETID".into(), "s".into(), format!("{top}-0")],
    };
    words
}

#[test]
fn random_group_scripts_match_redis() {
    for seed in 1..=8u64 {
        let mut d = Diff::in_process_only();
        if seed % 4 == 0 {
            let _ = d.both(&["HELLO", "3"]);
        }
        let mut r = Lcg(seed);
        let mut top = 0;
        check_masked(
            &mut d,
            &[
                &["XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"],
                &["XGROUP", "CREATE", "s", "h", "0"],
            ],
        );
        for _ in 0..300 {
            let words = random_group_command(&mut r, &mut top);
            let args: Vec<&str> = words.iter().map(String::as_str).collect();
            check_masked(&mut d, &[&args]);
        }
    }
}

#[test]
fn radix_tree_nodes_with_wide_ids_and_emptied_nodes() {
    let mut d = Diff::in_process_only();
    let base: u64 = 1_700_000_000_000;
    for i in 0..1_200u64 {
        let id = format!("{}-{}", base + i * 977 + (i % 13) * 65_537, i % 5);
        d.check(&[&["XADD", "s", &id, "f", "v"]]);
    }
    d.check(&[&["XINFO", "STREAM", "s"]]);
    // Empty the fourth node (entries 300..399) entry by entry, then one entry elsewhere.
    for i in 300..400u64 {
        let id = format!("{}-{}", base + i * 977 + (i % 13) * 65_537, i % 5);
        d.check(&[&["XDEL", "s", &id]]);
    }
    d.check(&[
        &["XINFO", "STREAM", "s"],
        &["XTRIM", "s", "MAXLEN", "~", "700"],
        &["XINFO", "STREAM", "s"],
        &["XADD", "s", "18446744073709551615-0", "f", "v"],
        &["XINFO", "STREAM", "s"],
    ]);
}

#[test]
fn xautoclaim_gives_up_after_ten_attempts_per_count() {
    let mut d = Diff::in_process_only();
    for i in 1..=30 {
        let id = format!("{i}-0");
        d.check(&[&["XADD", "s", &id, "f", "v"]]);
    }
    check_masked(
        &mut d,
        &[
            &["XGROUP", "CREATE", "s", "g", "0"],
            &["XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">"],
            // Nothing is idle for an hour: 2 x 10 attempts walk 20 entries, the cursor is
            // the 21st.
            &["XAUTOCLAIM", "s", "g", "bob", "3600000", "0", "COUNT", "2"],
            &[
                "XAUTOCLAIM",
                "s",
                "g",
                "bob",
                "3600000",
                "21-0",
                "COUNT",
                "1",
            ],
            &[
                "XAUTOCLAIM",
                "s",
                "g",
                "bob",
                "3600000",
                "(29-0",
                "COUNT",
                "1",
            ],
            &["XDEL", "s", "3-0", "4-0", "5-0"],
            &["XAUTOCLAIM", "s", "g", "bob", "3600000", "0", "COUNT", "2"],
            &["XAUTOCLAIM", "s", "g", "bob", "0", "0", "COUNT", "1"],
            &[
                "XAUTOCLAIM",
                "s",
                "g",
                "bob",
                "0",
                "2-0",
                "COUNT",
                "1",
                "JUSTID",
            ],
            &["XINFO", "CONSUMERS", "s", "g"],
            &["XPENDING", "s", "g"],
        ],
    );
}

//! Consumer groups, differentially against a real redis-server. Replies holding times
//! (idle, seen-time, delivery time) cannot match across two servers: those fields are
//! masked before comparing ([`masked`]) and checked exactly on a manual clock instead.

use crate::support::diff::{elements, Diff};

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

//! Transactions, differentially against a real redis-server.

mod common;

use common::diff::Diff;

#[test]
fn multi_exec_errors_match_redis() {
    let mut d = Diff::new();
    d.check(&[
        &["EXEC"],
        &["DISCARD"],
        &["MULTI"],
        &["MULTI"],
        &["NOSUCHCOMMAND", "a", "b"],
        &["EXEC"],
        &["MULTI"],
        &["WATCH", "k"],
        &["DISCARD"],
        &["UNWATCH"],
    ]);
}

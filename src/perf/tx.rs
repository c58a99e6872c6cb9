//! `test_tx` (PadoGrid's `TransactionTest`, reference §3.2 and §3.5), working on Redis where
//! PadoGrid's does not: the eligibility `tx` case reads a group's eligibility and profile
//! and writes its `GroupSummary` atomically; `getall`/`get` read what ingestion wrote.
//!
//! Invariants:
//! - A `tx` on group `G` is optimistic: `WATCH eligibility:{G} profile:{G}`, read both (one
//!   round trip with the WATCH), then `MULTI; HSET summary:{G} …; EXEC` (a second). If
//!   another client changed either key in between, EXEC aborts and the transaction runs
//!   again from the WATCH, so a summary always describes one consistent state of its group.
//!   All three keys carry the hash tag `{G}`, so this works on one Redis Cluster node.
//! - A group with no profile is "missing data", as PadoGrid's EligCallable counts it: no
//!   summary is written. A group with a profile but no eligibility gets a summary of 0
//!   members.
//! - Thread `t` runs `entries / threads` transactions on consecutive groups from
//!   `(t-1) × entries/threads / memberSetSize + 1`, as PadoGrid's
//!   `EligibilityGroupSummaryTestThread` does (so neighbouring threads overlap).
//! - `getall` reads every key, the last partial batch included (PadoGrid's
//!   `if (keys.size() < 0)` never reads it; docs/perf.md lists the difference).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use redis::{ConnectionLike, Value};

use super::config::{PbmMap, PbmTestCase, PbmTestConfig};
use super::data::{profile_keys, split_pbm_value, GroupSummary, MemberSets};
use super::ingest::batches;
use super::pbm::{hash_values, run_maps, write_run, MapOutcome, Worker};
use super::results::PbmRun;
use super::run::RunError;
use crate::target::Connector;

/// How many times in a row a group's transaction may be aborted by concurrent writers
/// before the run gives up (a livelock, not a benchmark).
pub const MAX_TX_ATTEMPTS: u64 = 1000;

/// What one `tx` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TxOutcome {
    /// The summary written, and how many aborted attempts came before it.
    Written {
        /// The summary stored in `summary:{G}`.
        summary: GroupSummary,
        /// Aborted attempts (EXEC returned nil) before the one that committed.
        retries: u64,
    },
    /// No profile for the group: nothing written.
    MissingProfile,
}

/// Runs `test_tx` and writes `tx-<map>-<product>-<stamp>_<prefix>.txt` per map into
/// `results_dir`. Returns each map's results, its outcome and its file.
pub fn run_tx(
    cfg: &PbmTestConfig,
    connect: &Connector,
    product: &str,
    results_dir: &Path,
    stop: &AtomicBool,
    status: &mut (dyn Write + Send),
) -> Result<Vec<(PbmRun, MapOutcome, PathBuf)>, RunError> {
    std::fs::create_dir_all(results_dir)?;
    let finish = |o: MapOutcome| write_run(cfg, product, results_dir, o);
    run_maps(
        cfg,
        connect,
        stop,
        status,
        "Transaction Count",
        &transact,
        &finish,
    )
}

/// One worker's run.
fn transact(w: &mut Worker<'_>, con: &mut dyn ConnectionLike) -> Result<(), String> {
    let per_thread = w.per_thread();
    let prefix = w.cfg.prefix.clone();
    let mss = u64::from(w.cfg.member_set_size.max(1));
    match (w.map.map, w.map.test_case) {
        (PbmMap::Eligibility, PbmTestCase::Tx) => {
            let first = (w.thread - 1) * per_thread / mss + 1;
            for g in first..first + per_thread {
                if w.stopped() {
                    break;
                }
                let group = format!("{prefix}{g}");
                let outcome = w.timed(|| group_summary_tx(con, &group, now_ms))?;
                match outcome {
                    TxOutcome::Written { retries, .. } => {
                        w.counters.retries.fetch_add(retries, Ordering::Relaxed);
                    }
                    TxOutcome::MissingProfile => {
                        w.counters.missing.fetch_add(1, Ordering::Relaxed);
                    }
                }
                w.counters.done.fetch_add(1, Ordering::Relaxed);
            }
        }
        (PbmMap::Eligibility, _) => {
            let mut sets = MemberSets::new(&prefix, w.thread, per_thread, mss as u32);
            for batch in batches(per_thread, w.map.batch_size as u64) {
                if w.stopped() {
                    break;
                }
                let mut pipe = redis::pipe();
                let mut keys = 0u64;
                for _ in 0..batch.div_ceil(mss) {
                    let set = sets.next_set();
                    let cmd = pipe.cmd("HMGET").arg(set[0].redis_key());
                    for key in &set {
                        cmd.arg(key.redis_field());
                    }
                    keys += set.len() as u64;
                }
                let replies: Vec<Vec<Option<Vec<u8>>>> =
                    w.timed(|| pipe.query(con)).map_err(|e| e.to_string())?;
                let found = replies.iter().flatten().filter(|v| v.is_some()).count() as u64;
                check_get_all(w, keys, found);
            }
        }
        (PbmMap::Profile, PbmTestCase::Get) => {
            let mut missing = 0u64;
            for key in profile_keys(&prefix, w.thread, per_thread) {
                if w.stopped() {
                    break;
                }
                let mut cmd = redis::cmd("GET");
                cmd.arg(key.redis_key());
                let v: Option<Vec<u8>> = w.timed(|| cmd.query(con)).map_err(|e| e.to_string())?;
                if v.is_none() {
                    missing += 1;
                    w.counters.missing.fetch_add(1, Ordering::Relaxed);
                }
                w.counters.done.fetch_add(1, Ordering::Relaxed);
            }
            if missing > 0 {
                (w.say)(&format!(
                    "[profile {}] get(): {missing} of {per_thread} profiles not found (Profile blob=null)",
                    w.thread
                ));
            }
        }
        (PbmMap::Profile, _) => {
            let keys = profile_keys(&prefix, w.thread, per_thread);
            // Every chunk, the last partial one included (PadoGrid skips that one).
            for chunk in keys.chunks(w.map.batch_size.max(1)) {
                if w.stopped() {
                    break;
                }
                let mut pipe = redis::pipe();
                for key in chunk {
                    pipe.cmd("GET").arg(key.redis_key());
                }
                let replies: Vec<Option<Vec<u8>>> =
                    w.timed(|| pipe.query(con)).map_err(|e| e.to_string())?;
                let found = replies.iter().filter(|v| v.is_some()).count() as u64;
                check_get_all(w, chunk.len() as u64, found);
            }
        }
    }
    Ok(())
}

/// PadoGrid's getAll bookkeeping: every key counts as an operation; a short answer prints
/// its message (and, in edgebench, counts the keys not found as missing data).
fn check_get_all(w: &mut Worker<'_>, keys: u64, found: u64) {
    w.counters.done.fetch_add(keys, Ordering::Relaxed);
    if found != keys {
        w.counters
            .missing
            .fetch_add(keys - found, Ordering::Relaxed);
        (w.say)(&format!(
            "[{} {}] getAll(): keySet does not match the returned map size: [keySet={keys}, map={found}]",
            w.map.map, w.thread
        ));
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// One PBM transaction on group `group` (e.g. `x1`): reads `eligibility:{x1}` and
/// `profile:{x1}` under WATCH and writes `summary:{x1}` in MULTI/EXEC, again from the WATCH
/// whenever EXEC aborts. `clock` gives `writtenTime` (ms since the epoch).
pub fn group_summary_tx(
    con: &mut dyn ConnectionLike,
    group: &str,
    clock: fn() -> i64,
) -> Result<TxOutcome, String> {
    let elig = format!("eligibility:{{{group}}}");
    let profile = format!("profile:{{{group}}}");
    let summary_key = format!("summary:{{{group}}}");
    for attempt in 0..MAX_TX_ATTEMPTS {
        let mut read = redis::pipe();
        read.cmd("WATCH").arg(&elig).arg(&profile).ignore();
        read.cmd("HGETALL").arg(&elig);
        read.cmd("GET").arg(&profile);
        let (members, profile_value): (Value, Option<Vec<u8>>) =
            read.query(con).map_err(|e| format!("{group}: {e}"))?;
        let Some(profile_value) = profile_value else {
            redis::cmd("UNWATCH")
                .query::<Value>(con)
                .map_err(|e| format!("{group}: {e}"))?;
            return Ok(TxOutcome::MissingProfile);
        };
        let members = hash_values(members);
        let (carrier, contract) = match split_pbm_value(&profile_value) {
            Some((key, _)) => {
                let mut f = key.split(',').skip(1);
                (
                    f.next().unwrap_or(group).to_string(),
                    f.next().unwrap_or(group).to_string(),
                )
            }
            None => (group.to_string(), group.to_string()),
        };
        let summary = GroupSummary {
            group_number: group.to_string(),
            carrier_number: carrier,
            contract_number: contract,
            member_count: members.len() as u32,
            total_blob_size: members
                .iter()
                .map(|v| split_pbm_value(v).map_or(v.len(), |(_, blob)| blob.len()) as u64)
                .sum(),
            written_time_ms: clock(),
        };
        let mut write = redis::pipe();
        write.cmd("MULTI");
        let hset = write.cmd("HSET").arg(&summary_key);
        for (field, value) in summary.fields() {
            hset.arg(field).arg(value);
        }
        write.cmd("EXEC");
        let replies: Vec<Value> = write.query(con).map_err(|e| format!("{group}: {e}"))?;
        match replies.last() {
            Some(Value::Nil) => continue, // a watched key changed: run it again
            Some(Value::Array(_)) => {
                return Ok(TxOutcome::Written {
                    summary,
                    retries: attempt,
                })
            }
            other => return Err(format!("{group}: unexpected EXEC reply {other:?}")),
        }
    }
    Err(format!(
        "{group}: the transaction was aborted {MAX_TX_ATTEMPTS} times in a row (another client keeps changing eligibility:{{{group}}} or profile:{{{group}}})"
    ))
}

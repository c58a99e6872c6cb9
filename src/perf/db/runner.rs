//! The timed `-db` run: every stage of a group test against the pool's database, one thread per
//! `threadCount` through the shared group runner (`perf::run`), one results file per group
//! (header `Group Test (Dababase)`).
//!
//! Invariants: each thread takes one pooled connection and holds it for its whole loop, as
//! PadoGrid's threads hold a Hibernate `Session`; reads that find no
//! row are counted per operation and reported in one status line each, not one per miss.

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use chrono::NaiveDateTime;

use super::error::DbError;
use super::pool::Pool;
use super::schema::{table_def, time_of};
use super::writes::{check_factories, tables, DbOp};
use crate::perf::config::{GroupTestConfig, Operation};
use crate::perf::factory::Writer;
use crate::perf::random::JavaRandom;
use crate::perf::results::GroupRun;
use crate::perf::run::{
    invocation_loop, run_group_threads, GroupContext, PutAllCursor, ThreadOutcome,
};

/// Reads that found nothing, per operation: (asked, found).
type Misses = Vec<(AtomicU64, AtomicU64)>;

/// Runs every stage of `cfg` against the pool's database and writes one results file per
/// group (header `Group Test (Dababase)`) into `results_dir`. Creates the tables first when
/// they are missing (one status line per table created). `now_ms` anchors the order dates.
pub fn run_db_group_test(
    cfg: &GroupTestConfig,
    pool: &Pool,
    product: &str,
    results_dir: &Path,
    now_ms: i64,
    stop: &AtomicBool,
    status: &mut (dyn Write + Send),
) -> Result<Vec<(GroupRun, PathBuf)>, DbError> {
    check_factories(cfg)?;
    {
        let mut conn = pool.take()?;
        for kind in tables(cfg) {
            if conn.create_table(kind)? {
                let _ = writeln!(status, "created table {}", table_def(kind).name);
            }
        }
    }
    let status = Mutex::new(status);
    crate::perf::run::run_stages(
        cfg,
        results_dir,
        stop,
        || DbError::Database("a group thread panicked".into()),
        |g, stage| run_group(cfg, g, stage, pool, product, now_ms, stop, &status),
    )
}

#[allow(clippy::too_many_arguments)]
fn run_group(
    cfg: &GroupTestConfig,
    group_id: &str,
    stage: &[String],
    pool: &Pool,
    product: &str,
    now_ms: i64,
    stop: &AtomicBool,
    status: &Mutex<&mut (dyn Write + Send)>,
) -> Result<GroupRun, DbError> {
    let ops: Vec<(&Operation, Writer)> = cfg.groups[group_id]
        .operations
        .iter()
        .map(|name| {
            let w = Writer::new(cfg, name, now_ms).expect("check_factories ran");
            (&cfg.operations[name], w)
        })
        .collect();
    let names: Vec<&str> = ops.iter().map(|(op, _)| op.name.as_str()).collect();
    let misses: Misses = ops
        .iter()
        .map(|_| (AtomicU64::new(0), AtomicU64::new(0)))
        .collect();
    let group = GroupContext {
        cfg,
        group_id,
        stage,
        product,
        db: true,
        stop,
    };
    let run = run_group_threads(
        &group,
        &names,
        status,
        || DbError::Database("a worker thread panicked".into()),
        // A pooled connection is taken inside each run (PadoGrid: threads block on the
        // HibernatePool until a Session is free, and that wait is timed).
        |_| Ok(()),
        |_, t, threads, per_thread, done| {
            run_thread(
                group_id, &ops, t, threads, per_thread, pool, stop, done, &misses,
            )
        },
    )?;
    if let Ok(mut w) = status.lock() {
        for ((op, _), (asked, found)) in ops.iter().zip(&misses) {
            let (asked, found) = (asked.load(Ordering::Relaxed), found.load(Ordering::Relaxed));
            if found < asked {
                // PadoGrid prints a line per miss; one line per operation says the same.
                let _ = writeln!(
                    w,
                    "[{group_id}.{}.{}] {} of {asked} keys read found no row",
                    op.name,
                    op.test_case,
                    asked - found
                );
            }
        }
    }
    Ok(run)
}

/// One thread: takes a pooled connection (waiting for one, before its clock starts, as
/// PadoGrid's threads take their Session), runs invocations `[(t-1)*cpt+1, t*cpt]`, and
/// returns the connection.
#[allow(clippy::too_many_arguments)]
fn run_thread(
    group: &str,
    ops: &[(&Operation, Writer)],
    t: u64,
    threads: u64,
    per_thread: u64,
    pool: &Pool,
    stop: &AtomicBool,
    done: &AtomicU64,
    misses: &Misses,
) -> Result<ThreadOutcome, DbError> {
    let mut conn = pool.take()?;
    let mut rngs: Vec<JavaRandom> = ops
        .iter()
        .map(|(op, _)| JavaRandom::new(crate::perf::run::thread_seed(op.random_seed, t)))
        .collect();
    let mut cursors: Vec<PutAllCursor> = ops
        .iter()
        .map(|(op, _)| PutAllCursor::new(op, t, threads))
        .collect();
    invocation_loop(t, per_thread, ops.len(), stop, done, |i, k| {
        let (op, writer) = &ops[k];
        let fail =
            |e: DbError| DbError::Database(format!("group {group}, operation {}: {e}", op.name));
        let bound = i32::try_from(op.total_entry_count.max(1)).unwrap_or(i32::MAX);
        match DbOp::of(op.test_case) {
            DbOp::Put => {
                let rows = writer.rows(op.key_start_num + i as i64 - 1);
                let now = time_now();
                // The entity in its own transaction, then each child in its own (§4.1).
                for row in rows {
                    conn.upsert(std::slice::from_ref(&row), now).map_err(fail)?;
                }
            }
            DbOp::PutAll => {
                let mut rows = Vec::with_capacity(op.batch_size);
                for _ in 0..op.batch_size {
                    rows.extend(writer.rows(cursors[k].next_id(op)));
                }
                conn.upsert(&rows, time_now()).map_err(fail)?;
            }
            DbOp::Get => {
                let v = i64::from(rngs[k].next_int_bound(bound));
                let key = writer.key(op.key_start_num + v);
                let found = conn.get(writer.kind(), &key).map_err(fail)?;
                misses[k].0.fetch_add(1, Ordering::Relaxed);
                misses[k]
                    .1
                    .fetch_add(u64::from(found.is_some()), Ordering::Relaxed);
            }
            DbOp::GetAll => {
                // PadoGrid: a HashSet of batchSize getKey(random) keys, without startNum.
                let keys: BTreeSet<String> = (0..op.batch_size)
                    .map(|_| writer.key(i64::from(rngs[k].next_int_bound(bound))))
                    .collect();
                let keys: Vec<String> = keys.into_iter().collect();
                let found = conn.get_all(writer.kind(), &keys).map_err(fail)?;
                misses[k].0.fetch_add(keys.len() as u64, Ordering::Relaxed);
                misses[k].1.fetch_add(found.len() as u64, Ordering::Relaxed);
            }
        }
        Ok(())
    })
}

/// Now in UTC, to the microsecond both servers store.
fn time_now() -> NaiveDateTime {
    let now = chrono::Utc::now();
    time_of(now.timestamp_millis())
        + chrono::Duration::microseconds(i64::from(now.timestamp_subsec_micros() % 1000))
}

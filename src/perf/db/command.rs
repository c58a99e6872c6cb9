//! `test_group -db` itself: resolve the settings, print where it would write, then `-list`,
//! `-delete` and `-run` in that order; and `-list`/`-delete` over the keys the groups write.
//!
//! Invariant: without `-run`, `-list` or `-delete` nothing connects; results go to
//! `perf_test_<product>/` (the database is the run's PadoGrid app, `perf::apps`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use super::connection::{Conn, Database};
use super::error::DbError;
use super::pool::Pool;
use super::runner::run_db_group_test;
use super::schema::table_def;
use super::settings::{DbSettings, DB_PROPERTIES};
use super::writes::{check_factories, tables, written_keys};
use crate::perf::config::GroupTestConfig;
use crate::perf::results::GroupRun;

/// `-list`: per table, its rows and how many of the keys the groups write are there.
pub fn list(cfg: &GroupTestConfig, conn: &mut Conn, out: &mut dyn Write) -> Result<(), DbError> {
    let keys = written_keys(cfg);
    for kind in tables(cfg) {
        let name = table_def(kind).name;
        let line = match conn.count(kind)? {
            None => format!("{name}: no table"),
            Some(rows) => {
                let mine = keys.get(name).cloned().unwrap_or_default();
                let present = if mine.is_empty() {
                    0
                } else {
                    conn.count_keys(kind, &mine)?
                };
                format!(
                    "{name}: {rows} rows; the groups write {} keys, {present} present",
                    mine.len()
                )
            }
        };
        let _ = writeln!(out, "{line}");
    }
    Ok(())
}

/// `-delete`: removes the rows of the keys the groups write, one line per table.
pub fn delete(cfg: &GroupTestConfig, conn: &mut Conn, out: &mut dyn Write) -> Result<(), DbError> {
    let keys = written_keys(cfg);
    for kind in tables(cfg) {
        let name = table_def(kind).name;
        if !conn.table_exists(kind)? {
            let _ = writeln!(out, "{name}: no table, nothing to delete");
            continue;
        }
        let mine = keys.get(name).cloned().unwrap_or_default();
        let n = if mine.is_empty() {
            0
        } else {
            conn.delete_keys(kind, &mine)?
        };
        let _ = writeln!(out, "{name}: deleted {n} rows");
    }
    Ok(())
}

/// Flags of `test_group -db`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DbFlags {
    /// `-run`.
    pub run: bool,
    /// `-list`.
    pub list: bool,
    /// `-delete`.
    pub delete: bool,
    /// `--db URL`.
    pub url: Option<String>,
    /// `--db-prop FILE` (default [`DB_PROPERTIES`]).
    pub prop: Option<PathBuf>,
}

/// `test_group -db`: without `-run`/`-list`/`-delete` prints where it would write; `-list`
/// and `-delete` act before `-run`. Results go to `results_root/perf_test_<product>/`. Returns
/// the runs (empty without `-run`) and the product.
pub fn test_group_db(
    cfg: &GroupTestConfig,
    flags: &DbFlags,
    results_root: &Path,
    stop: &AtomicBool,
    out: &mut (dyn Write + Send),
) -> Result<(Vec<(GroupRun, PathBuf)>, String), DbError> {
    check_factories(cfg)?;
    let file = flags
        .prop
        .clone()
        .unwrap_or_else(|| PathBuf::from(DB_PROPERTIES));
    let settings = DbSettings::resolve(&file, flags.prop.is_some(), flags.url.as_deref())?;
    let database = Database::from_url(&settings.url)?;
    let where_ = format!(
        "database: {} (pool_size {}, from {})",
        database.describe(),
        settings.pool_size,
        settings.source
    );
    let table_names: Vec<&str> = tables(cfg).into_iter().map(|k| table_def(k).name).collect();
    if !flags.run && !flags.list && !flags.delete {
        let _ = writeln!(out, "{where_}");
        let _ = writeln!(out, "tables: {}", table_names.join(", "));
        let _ = writeln!(out, "To run the test, specify the '-run' option.");
        return Ok((Vec::new(), String::new()));
    }
    let pool = Pool::new(database, settings.pool_size);
    let product = pool.take()?.product()?;
    let _ = writeln!(out, "{where_}");
    if flags.list || flags.delete {
        let mut conn = pool.take()?;
        if flags.list {
            list(cfg, &mut conn, out)?;
        }
        if flags.delete {
            delete(cfg, &mut conn, out)?;
        }
    }
    if !flags.run {
        return Ok((Vec::new(), product));
    }
    let _ = writeln!(out, "Group Test (Database)");
    let now_ms = chrono::Utc::now().timestamp_millis();
    // The database is this run's PadoGrid app (perf::apps): perf_test_<product>.
    let results_dir = crate::perf::apps::app_for(results_root, &product).results_dir;
    let runs = run_db_group_test(cfg, &pool, &product, &results_dir, now_ms, stop, out)?;
    Ok((runs, product))
}

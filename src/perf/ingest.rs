//! `test_ingestion` (PadoGrid's `DataIngestionTest`, reference §3.2 and §3.4): writes the
//! eligibility and profile maps of the PBM model with `put` (one entry per call) or `putall`
//! (`batchSize` entries per call), and one results file per map.
//!
//! Invariants:
//! - Keys follow PadoGrid's generation exactly ([`MemberSets`], [`profile_keys`]), including
//!   its rounding: a member set is written whole, so a thread writes
//!   `ceil(entries / memberSetSize) × memberSetSize` eligibility entries (`put`), and
//!   `putall` rounds each batch and the remainder up to whole member sets.
//! - Every eligibility entry of group `G` is a field of the one hash `eligibility:{G}`; a
//!   `putall` is one round trip: a pipeline of one `HSET` per group of the batch (each
//!   command touches one slot, so it works on Redis Cluster too).
//! - The "Actual Total Entry (Put) Count" is the number of entries sent, as PadoGrid's
//!   `putCount += map.size()`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use redis::{ConnectionLike, Value};

use super::config::{PbmMap, PbmTestCase, PbmTestConfig};
use super::data::{pbm_value, profile_keys, zero_blob, EligKey, MemberSets};
use super::pbm::{run_maps, write_run, MapOutcome, Worker};
use super::results::PbmRun;
use super::run::RunError;
use crate::target::Connector;

/// Runs `test_ingestion` and writes `ingestion-<map>-<product>-<stamp>_<prefix>.txt` per map
/// into `results_dir`. Returns each map's results, its outcome and its file.
pub fn run_ingestion(
    cfg: &PbmTestConfig,
    connect: &Connector,
    product: &str,
    results_dir: &Path,
    stop: &AtomicBool,
    status: &mut (dyn Write + Send),
) -> Result<Vec<(PbmRun, MapOutcome, PathBuf)>, RunError> {
    std::fs::create_dir_all(results_dir)?;
    let finish = |o: MapOutcome| write_run(cfg, product, results_dir, o);
    run_maps(cfg, connect, stop, status, "Entry Count", &ingest, &finish)
}

/// One worker's run: its share of one map.
fn ingest(w: &mut Worker<'_>, con: &mut dyn ConnectionLike) -> Result<(), String> {
    let blob = zero_blob(w.map.payload_size);
    let per_thread = w.per_thread();
    match (w.map.map, w.map.test_case) {
        (PbmMap::Eligibility, PbmTestCase::Put) => {
            let mss = u64::from(w.cfg.member_set_size.max(1));
            let mut sets = MemberSets::new(&w.cfg.prefix, w.thread, per_thread, mss as u32);
            let mut i = 0;
            while i < per_thread && !w.stopped() {
                for key in sets.next_set() {
                    let mut cmd = redis::cmd("HSET");
                    cmd.arg(key.redis_key())
                        .arg(key.redis_field())
                        .arg(pbm_value(&key.serialized(), &blob));
                    w.timed(|| cmd.query::<Value>(con))
                        .map_err(|e| e.to_string())?;
                    w.counters.done.fetch_add(1, Ordering::Relaxed);
                }
                i += mss;
            }
        }
        (PbmMap::Eligibility, _) => {
            let mss = u64::from(w.cfg.member_set_size.max(1));
            let mut sets = MemberSets::new(&w.cfg.prefix, w.thread, per_thread, mss as u32);
            for batch in batches(per_thread, w.map.batch_size as u64) {
                if w.stopped() {
                    break;
                }
                // PadoGrid fills whole member sets until the batch is full: ceil(n / mss).
                let groups = batch.div_ceil(mss);
                let mut pipe = redis::pipe();
                let mut entries = 0;
                for _ in 0..groups {
                    let set = sets.next_set();
                    let cmd = pipe.cmd("HSET").arg(set[0].redis_key());
                    for key in &set {
                        cmd.arg(key.redis_field())
                            .arg(pbm_value(&key.serialized(), &blob));
                    }
                    entries += set.len() as u64;
                }
                w.timed(|| pipe.query::<Value>(con))
                    .map_err(|e| e.to_string())?;
                w.counters.done.fetch_add(entries, Ordering::Relaxed);
            }
        }
        (PbmMap::Profile, PbmTestCase::Put) => {
            for key in profile_keys(&w.cfg.prefix, w.thread, per_thread) {
                if w.stopped() {
                    break;
                }
                let mut cmd = redis::cmd("SET");
                cmd.arg(key.redis_key())
                    .arg(pbm_value(&key.serialized(), &blob));
                w.timed(|| cmd.query::<Value>(con))
                    .map_err(|e| e.to_string())?;
                w.counters.done.fetch_add(1, Ordering::Relaxed);
            }
        }
        (PbmMap::Profile, _) => {
            let keys = profile_keys(&w.cfg.prefix, w.thread, per_thread);
            for chunk in keys.chunks(w.map.batch_size.max(1)) {
                if w.stopped() {
                    break;
                }
                let mut pipe = redis::pipe();
                for key in chunk {
                    pipe.cmd("SET")
                        .arg(key.redis_key())
                        .arg(pbm_value(&key.serialized(), &blob));
                }
                w.timed(|| pipe.query::<Value>(con))
                    .map_err(|e| e.to_string())?;
                w.counters
                    .done
                    .fetch_add(chunk.len() as u64, Ordering::Relaxed);
            }
        }
    }
    Ok(())
}

/// PadoGrid's batching of a thread's `n` entries: `n / batchSize` full batches, then the
/// remainder `n % batchSize` when it is not zero.
pub fn batches(n: u64, batch_size: u64) -> impl Iterator<Item = u64> {
    let b = batch_size.max(1);
    let rem = n % b;
    std::iter::repeat_n(b, (n / b) as usize).chain((rem > 0).then_some(rem))
}

/// The eligibility entries a `putall` thread writes, in write order (for tests and the
/// docs: PadoGrid's rounding to whole member sets).
pub fn putall_eligibility_keys(cfg: &PbmTestConfig, thread: u64) -> Vec<EligKey> {
    let Some(m) = cfg.map(PbmMap::Eligibility) else {
        return Vec::new();
    };
    let mss = u64::from(cfg.member_set_size.max(1));
    let per_thread = m.entry_count_per_thread();
    let mut sets = MemberSets::new(&cfg.prefix, thread, per_thread, mss as u32);
    let mut out = Vec::new();
    for batch in batches(per_thread, m.batch_size as u64) {
        for _ in 0..batch.div_ceil(mss) {
            out.extend(sets.next_set());
        }
    }
    out
}

/// Loads the data of `cfg` without writing results files: what `test_tx` runs first on a
/// target that lives only for one command (the in-process engine, a spawned redis-server).
/// Returns the entries written per map.
pub fn preload(
    cfg: &PbmTestConfig,
    connect: &Connector,
    stop: &AtomicBool,
    status: &mut (dyn Write + Send),
) -> Result<Vec<(PbmMap, u64)>, RunError> {
    let finish = |o: MapOutcome| Ok((o.map.map, o.count));
    run_maps(cfg, connect, stop, status, "Entry Count", &ingest, &finish)
}

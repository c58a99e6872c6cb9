//! What each operation writes in `-db` mode ([`DbOp`], reference §4.1), and from that the
//! tables a configuration uses and exactly the keys it writes — what `-list` counts and
//! `-delete` removes — plus the checks made before anything runs.
//!
//! Invariants: [`written_keys`] reproduces the runner's ids (put: `startNum + i - 1` per
//! invocation; putall: every thread's [`PutAllCursor`]) and [`Writer::rows`] (ER children
//! included), so it is the set a run writes; no key longer than the `varchar(20)` id columns
//! gets past [`check_factories`].

use std::collections::{BTreeMap, BTreeSet};

use super::error::{input, DbError};
use super::schema::table_def;
use crate::perf::config::{GroupTestConfig, TestCase};
use crate::perf::factory::{FactoryKind, Writer};
use crate::perf::run::PutAllCursor;

/// What an operation does in `-db` mode (§4.1: the switch is on the test case only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbOp {
    /// `put` (and `set`, `fastput`): one entity per transaction, then its ER children.
    Put,
    /// `get`: one entity by a random key.
    Get,
    /// `getall`: `batchSize` random keys in `IN` queries.
    GetAll,
    /// `putall` and every other case: `batchSize` entities in one transaction.
    PutAll,
}

impl DbOp {
    /// The `-db` behaviour of a test case. PadoGrid's switch sends `set` to its default
    /// (putall); edgebench follows its documentation (`set` writes one entry, with ER), as on
    /// Redis.
    pub fn of(tc: TestCase) -> DbOp {
        match tc {
            TestCase::Put | TestCase::Set | TestCase::FastPut => DbOp::Put,
            TestCase::Get => DbOp::Get,
            TestCase::GetAll => DbOp::GetAll,
            _ => DbOp::PutAll,
        }
    }
}

/// Every operation the groups run, and every ER child, must have a factory: PadoGrid's
/// one-line error otherwise.
pub fn check_factories(cfg: &GroupTestConfig) -> Result<(), DbError> {
    for stage in &cfg.schedule.stages {
        for g in stage {
            for name in &cfg.groups[g].operations {
                let op = &cfg.operations[name];
                let Some(f) = &op.factory else {
                    return Err(input(format!(
                        "ERROR: data object factory not set for group {g}, operation {name}. \
                         (set {name}.factory.class=org.redis.demo.nw.impl.CustomerFactoryImpl or OrderFactoryImpl in {})",
                        cfg.file
                    )));
                };
                if let Some(er) = &f.er {
                    if cfg
                        .operations
                        .get(&er.operation)
                        .and_then(|c| c.factory.as_ref())
                        .is_none()
                    {
                        return Err(input(format!(
                            "ERROR: data object factory not set for group {g}, operation {}. \
                             ({name}.factory.er.operation names it: set {}.factory.class in {})",
                            er.operation, er.operation, cfg.file
                        )));
                    }
                }
            }
        }
    }
    // The id columns are varchar(20) (PadoGrid's lengths): a longer key would fail the run
    // part-way on PostgreSQL, or be cut and merge rows on a non-strict MariaDB.
    for (table, keys) in written_keys(cfg) {
        if let Some(key) = keys.iter().find(|k| k.chars().count() > ID_LENGTH) {
            return Err(input(format!(
                "key {key:?} for table {table} is longer than its {ID_LENGTH}-character id \
                 column: shorten key.prefix or factory.key.length of its operation in {}",
                cfg.file
            )));
        }
    }
    Ok(())
}

/// The length of the `customers`/`orders` id columns (PadoGrid's `length = 20`).
const ID_LENGTH: usize = 20;

/// The tables the groups use (their factories' and their ER children's), in first-use order.
pub fn tables(cfg: &GroupTestConfig) -> Vec<FactoryKind> {
    let mut out = Vec::new();
    for stage in &cfg.schedule.stages {
        for g in stage {
            for name in &cfg.groups[g].operations {
                let Some(w) = Writer::new(cfg, name, 0) else {
                    continue;
                };
                for kind in w.kinds() {
                    if !out.contains(&kind) {
                        out.push(kind);
                    }
                }
            }
        }
    }
    out
}

/// Every key the groups of `cfg` write, per table name: what `-list` counts and `-delete` removes.
/// Reproduces the runner's ids (put: `startNum + i - 1` for every invocation `i`; putall: the
/// cursor of every thread) and [`Writer::rows`] (ER children included).
pub fn written_keys(cfg: &GroupTestConfig) -> BTreeMap<&'static str, BTreeSet<String>> {
    let mut out: BTreeMap<&'static str, BTreeSet<String>> = BTreeMap::new();
    // An operation run again with the same threads and invocations writes the same keys.
    let mut done: BTreeSet<(String, u32, u64)> = BTreeSet::new();
    for stage in &cfg.schedule.stages {
        for g in stage {
            let group = &cfg.groups[g];
            let threads = u64::from(group.thread_count.max(1));
            let per_thread = group.invocation_count_per_thread();
            for name in &group.operations {
                if !done.insert((name.clone(), group.thread_count, per_thread)) {
                    continue;
                }
                let op = &cfg.operations[name];
                let Some(w) = Writer::new(cfg, name, 0) else {
                    continue;
                };
                let mut add = |id: i64| {
                    for (kind, e) in w.rows(id) {
                        out.entry(table_def(kind).name).or_default().insert(e.key);
                    }
                };
                match DbOp::of(op.test_case) {
                    DbOp::Get | DbOp::GetAll => {}
                    DbOp::Put => {
                        for i in 1..=threads * per_thread {
                            add(op.key_start_num + i as i64 - 1);
                        }
                    }
                    DbOp::PutAll => {
                        let mut seen = BTreeSet::new();
                        for t in 1..=threads {
                            let mut cursor = PutAllCursor::new(op, t, threads);
                            'thread: for _ in 0..per_thread {
                                for _ in 0..op.batch_size {
                                    let id = cursor.next_id(op);
                                    if !seen.insert(id) {
                                        // The cursor wrapped: the rest repeats.
                                        break 'thread;
                                    }
                                    add(id);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::properties::Properties;

    #[test]
    fn keys_longer_than_the_id_column_are_refused_before_the_run() {
        let cfg = |prefix: &str| {
            let text = format!(
                "groupNames=g1\ng1.threadCount=1\ng1.totalInvocationCount=20\ng1.operations=set1\n\
                 set1.map=nw/customers\nset1.testCase=set\nset1.key.prefix={prefix}\n\
                 set1.factory.class=org.redis.demo.nw.impl.CustomerFactoryImpl\n\
                 set1.factory.key.length=5\nset1.factory.key.isRandom=false\n"
            );
            let props = Properties::parse(&text, "g.properties").expect("parses");
            GroupTestConfig::from_properties(&props, 2).expect("valid")
        };
        // 19 characters + a 1- or 2-digit id: 20 fits, 21 does not.
        assert!(check_factories(&cfg("customer-northwind")).is_ok());
        let err = check_factories(&cfg("customer-northwind-")).expect_err("21 characters");
        assert!(
            err.to_string()
                .contains("longer than its 20-character id column"),
            "{err}"
        );
    }

    #[test]
    fn written_keys_count_every_run_of_an_operation() {
        // set1 runs in g1 (96 invocations) and again in g2 (1000): -list/-delete cover 1000.
        let text = "groupNames=g1,g2\n\
                    g1.threadCount=8\ng1.totalInvocationCount=100\ng1.operations=set1\n\
                    g2.threadCount=8\ng2.totalInvocationCount=1000\ng2.operations=set1\n\
                    set1.map=nw/customers\nset1.testCase=set\n\
                    set1.factory.class=org.redis.demo.nw.impl.CustomerFactoryImpl\n\
                    set1.factory.key.length=10\nset1.factory.key.isRandom=false\n";
        let props = Properties::parse(text, "g.properties").expect("parses");
        let cfg = GroupTestConfig::from_properties(&props, 2).expect("valid");
        assert_eq!(written_keys(&cfg)["customers"].len(), 1000);
    }
}

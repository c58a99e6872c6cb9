//! `test_group -db` against the machine's real PostgreSQL and MariaDB, each test in a private
//! database (`edgebench_<random>`, dropped by a guard also when the test fails): rows read
//! back equal what was written, column by column; upserts are idempotent; every Order names
//! an existing Customer; the pool size bounds the server-side connections; `-list`/`-delete`;
//! bad input gets one line.
//!
//! PostgreSQL must answer (CI installs it). When no MariaDB answers on 127.0.0.1:3306, the
//! MariaDB tests print why and return; `.ci/run` installs and starts MariaDB so CI runs them.

use std::collections::BTreeSet;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use edgebench::perf::data::{Entity, FactoryKind};
use edgebench::perf::db::{self, Database, Pool, Writer};
use edgebench::perf::{GroupTestConfig, Properties};
use mysql::prelude::Queryable;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Server {
    Postgres,
    MariaDb,
}

/// An order's `(orderId, customerId, freight, orderDate in ms)`.
type OrderColumns = (String, String, f64, i64);

const PG_SOCKET: &str = "/var/run/postgresql";
const MARIADB: &str = "mysql://root@127.0.0.1:3306";

/// A private database, dropped when this drops.
struct PrivateDb {
    server: Server,
    name: String,
}

impl PrivateDb {
    /// A fresh database; None (with the reason printed) when MariaDB is not running.
    fn create(server: Server) -> Option<PrivateDb> {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        let name = format!("edgebench_{:012x}", h.finish() & 0xffff_ffff_ffff);
        match server {
            Server::Postgres => {
                admin_pg()
                    .batch_execute(&format!("CREATE DATABASE {name}"))
                    .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
            }
            Server::MariaDb => {
                let mut c = match mysql::Conn::new(mysql::Opts::from_url(MARIADB).unwrap()) {
                    Ok(c) => c,
                    Err(e) => {
                        // Straight to stderr: cargo test shows it even when the test passes.
                        let _ = writeln!(
                            std::io::stderr(),
                            "skipped: no MariaDB at {MARIADB} ({e}); .ci/run installs and starts one"
                        );
                        return None;
                    }
                };
                c.query_drop(format!("CREATE DATABASE {name} CHARACTER SET utf8mb4"))
                    .unwrap_or_else(|e| panic!("CREATE DATABASE {name}: {e}"));
            }
        }
        Some(PrivateDb { server, name })
    }

    fn url(&self) -> String {
        match self.server {
            Server::Postgres => format!("postgresql:///{}?host={PG_SOCKET}", self.name),
            Server::MariaDb => format!("{MARIADB}/{}", self.name),
        }
    }

    fn pool(&self, size: usize) -> Pool {
        Pool::new(Database::from_url(&self.url()).unwrap(), size)
    }

    /// The test's own PostgreSQL client on this database.
    fn pg(&self) -> postgres::Client {
        postgres::Config::new()
            .host(PG_SOCKET)
            .user(&whoami())
            .dbname(&self.name)
            .connect(postgres::NoTls)
            .unwrap()
    }

    /// The test's own MariaDB client on this database.
    fn my(&self) -> mysql::Conn {
        mysql::Conn::new(mysql::Opts::from_url(&self.url()).unwrap()).unwrap()
    }

    /// One number from `sql` on this database, through the test's own client.
    fn number(&self, sql: &str) -> i64 {
        match self.server {
            Server::Postgres => {
                let mut c = self.pg();
                c.query_one(sql, &[]).unwrap().get::<_, i64>(0)
            }
            Server::MariaDb => {
                let mut c = self.my();
                c.query_first::<i64, _>(sql).unwrap().unwrap()
            }
        }
    }

    /// `(key, city)` of every customer, `(key, customerId, freight, orderDate ms)` of every
    /// order: columns read by name with the test's own client.
    fn columns(&self) -> (Vec<(String, String)>, Vec<OrderColumns>) {
        let cust = "SELECT customerId, city FROM customers ORDER BY customerId";
        match self.server {
            Server::Postgres => {
                let mut c = self.pg();
                let customers = c
                    .query(cust, &[])
                    .unwrap()
                    .iter()
                    .map(|r| (r.get(0), r.get(1)))
                    .collect();
                let orders = c
                    .query(
                        "SELECT orderId, customerId, freight, \
                         (extract(epoch from orderDate) * 1000)::bigint FROM orders ORDER BY orderId",
                        &[],
                    )
                    .unwrap()
                    .iter()
                    .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
                    .collect();
                (customers, orders)
            }
            Server::MariaDb => {
                let mut c = self.my();
                c.query_drop("SET time_zone = '+00:00'").unwrap();
                let customers = c.query(cust).unwrap();
                let orders = c
                    .query_map(
                        "SELECT orderId, customerId, freight, \
                         CAST(UNIX_TIMESTAMP(orderDate) * 1000 AS SIGNED) FROM orders ORDER BY orderId",
                        |(a, b, f, t)| (a, b, f, t),
                    )
                    .unwrap();
                (customers, orders)
            }
        }
    }

    /// Connections the server has open to this database now.
    fn connections(&self) -> i64 {
        let sql = match self.server {
            Server::Postgres => format!(
                // Client backends only: an autovacuum worker may visit the fresh database.
                "SELECT count(*) FROM pg_stat_activity WHERE datname = '{}' \
                 AND backend_type = 'client backend'",
                self.name
            ),
            Server::MariaDb => format!(
                "SELECT count(*) FROM information_schema.PROCESSLIST WHERE DB = '{}'",
                self.name
            ),
        };
        match self.server {
            Server::Postgres => admin_pg().query_one(&sql, &[]).unwrap().get::<_, i64>(0),
            Server::MariaDb => {
                let mut c = mysql::Conn::new(mysql::Opts::from_url(MARIADB).unwrap()).unwrap();
                c.query_first::<i64, _>(sql).unwrap().unwrap()
            }
        }
    }
}

impl Drop for PrivateDb {
    fn drop(&mut self) {
        match self.server {
            Server::Postgres => {
                let _ = admin_pg().batch_execute(&format!(
                    "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                    self.name
                ));
            }
            Server::MariaDb => {
                if let Ok(mut c) = mysql::Conn::new(mysql::Opts::from_url(MARIADB).unwrap()) {
                    let _ = c.query_drop(format!("DROP DATABASE IF EXISTS {}", self.name));
                }
            }
        }
    }
}

fn whoami() -> String {
    std::env::var("USER").unwrap_or_else(|_| "root".into())
}

fn admin_pg() -> postgres::Client {
    postgres::Config::new()
        .host(PG_SOCKET)
        .user(&whoami())
        .dbname("postgres")
        .connect(postgres::NoTls)
        .unwrap_or_else(|e| {
            panic!("{e}: these tests need PostgreSQL on {PG_SOCKET} and fail rather than skip without one")
        })
}

fn config(text: &str) -> GroupTestConfig {
    let props = Properties::parse(text, "test.properties").unwrap_or_else(|e| panic!("{e}"));
    GroupTestConfig::from_properties(&props, 2).unwrap_or_else(|e| panic!("{e}"))
}

/// Customers with ER Orders (put), more Orders in batches (putall), then reads of every
/// customer (get, getall).
const NW: &str = "\
groupNames=g1,g2,g3
g1.threadCount=4
g1.totalInvocationCount=40
g1.operations=set1
g2.threadCount=3
g2.totalInvocationCount=6
g2.operations=putall2
g3.threadCount=2
g3.totalInvocationCount=20
g3.operations=get1,getall1
set1.map=nw/customers
set1.testCase=set
set1.key.startNum=0
set1.key.prefix=000000-
set1.factory.class=org.redis.demo.nw.impl.CustomerFactoryImpl
set1.factory.key.isRandom=false
set1.factory.key.length=11
set1.factory.key.isLeadingZeros=true
set1.factory.er.operation=set2
set1.factory.er.isRandom=true
set1.factory.er.maxKeys=5
set2.map=nw/orders
set2.ref=set1
set2.factory.class=org.redis.demo.nw.impl.OrderFactoryImpl
set2.factory.key.isRandom=false
set2.factory.key.length=11
set2.factory.key.isLeadingZeros=true
putall2.map=nw/orders
putall2.testCase=putall
putall2.batchSize=10
putall2.totalEntryCount=30
putall2.key.startNum=1
putall2.factory.class=org.hazelcast.demo.nw.impl.OrderFactoryImpl
putall2.factory.key.isRandom=false
putall2.factory.key.prefix=P-
putall2.factory.key.length=8
get1.map=nw/customers
get1.testCase=get
get1.key.startNum=0
get1.totalEntryCount=40
get1.factory.class=org.redis.demo.nw.impl.CustomerFactoryImpl
get1.factory.key.prefix=000000-
get1.factory.key.isRandom=false
get1.factory.key.length=11
get1.factory.key.isLeadingZeros=true
getall1.map=nw/customers
getall1.testCase=getall
getall1.batchSize=25
getall1.totalEntryCount=40
getall1.factory.class=org.redis.demo.nw.impl.CustomerFactoryImpl
getall1.factory.key.prefix=000000-
getall1.factory.key.isRandom=false
getall1.factory.key.length=11
getall1.factory.key.isLeadingZeros=true
";

const NOW_MS: i64 = 1_780_000_000_123;

fn run(
    cfg: &GroupTestConfig,
    pool: &Pool,
    dir: &Path,
) -> (Vec<edgebench::perf::results::GroupRun>, String) {
    let stop = AtomicBool::new(false);
    let mut status: Vec<u8> = Vec::new();
    let runs = db::run_db_group_test(cfg, pool, "test", dir, NOW_MS, &stop, &mut status)
        .unwrap_or_else(|e| panic!("{e}"));
    (
        runs.into_iter().map(|(r, _)| r).collect(),
        String::from_utf8(status).unwrap(),
    )
}

/// What the configuration writes, computed from the factories: (customers, orders).
fn expected(cfg: &GroupTestConfig) -> (Vec<Entity>, Vec<Entity>) {
    let mut customers = Vec::new();
    let mut orders = Vec::new();
    let set1 = Writer::new(cfg, "set1", NOW_MS).unwrap();
    let putall2 = Writer::new(cfg, "putall2", NOW_MS).unwrap();
    // set1: invocations 1..=40 write ids 0..=39; putall2: ids 1..=30 (3 threads x 10).
    let rows = (0..40)
        .flat_map(|id| set1.rows(id))
        .chain((1..=30).flat_map(|id| putall2.rows(id)));
    for (kind, e) in rows {
        match kind {
            FactoryKind::Customer => customers.push(e.value),
            FactoryKind::Order => orders.push(e.value),
        }
    }
    (customers, orders)
}

fn key_of(e: &Entity) -> String {
    match e {
        Entity::Customer(c) => c.customer_id.clone(),
        Entity::Order(o) => o.order_id.clone(),
    }
}

fn rows_read_back_equal_what_was_written(server: Server) {
    let Some(db) = PrivateDb::create(server) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(NW);
    let pool = db.pool(4);
    let (runs, status) = run(&cfg, &pool, dir.path());
    assert_eq!(
        runs.iter()
            .map(|r| r.actual_invocations)
            .collect::<Vec<_>>(),
        vec![40, 6, 20]
    );
    // Every key get/getall asked for was there.
    assert!(!status.contains("found no row"), "{status}");

    let (customers, orders) = expected(&cfg);
    assert_eq!(customers.len(), 40);
    assert!(
        orders.len() >= 40 + 30 && orders.len() <= 40 * 5 + 30,
        "{}",
        orders.len()
    );
    assert_eq!(db.number("SELECT count(*) FROM customers"), 40);
    assert_eq!(
        db.number("SELECT count(*) FROM orders"),
        orders.len() as i64
    );

    // Every column, through the library's read path...
    let mut conn = pool.take().unwrap();
    for (kind, want) in [
        (FactoryKind::Customer, &customers),
        (FactoryKind::Order, &orders),
    ] {
        let keys: Vec<String> = want.iter().map(key_of).collect();
        let mut got = conn.get_all(kind, &keys).unwrap();
        got.sort_by_key(key_of);
        let mut want = want.clone();
        want.sort_by_key(key_of);
        assert_eq!(got, want, "{kind:?}");
    }
    drop(conn);
    // ...and columns by name through the test's own client.
    let (cust_cols, order_cols) = db.columns();
    let mut want_c: Vec<(String, String)> = customers
        .iter()
        .map(|c| match c {
            Entity::Customer(c) => (c.customer_id.clone(), c.city.clone()),
            Entity::Order(_) => unreachable!(),
        })
        .collect();
    want_c.sort();
    assert_eq!(cust_cols, want_c);
    let mut want_o: Vec<OrderColumns> = orders
        .iter()
        .map(|o| match o {
            Entity::Order(o) => (
                o.order_id.clone(),
                o.customer_id.clone(),
                o.freight,
                o.order_date_ms,
            ),
            Entity::Customer(_) => unreachable!(),
        })
        .collect();
    want_o.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(order_cols, want_o);

    // ER: every order set1 wrote names an existing customer, and they are all there.
    let er_orders = db.number(
        "SELECT count(*) FROM orders o WHERE o.orderId LIKE '000000-%' \
         AND EXISTS (SELECT 1 FROM customers c WHERE c.customerId = o.customerId)",
    );
    let er_expected = orders.len() as i64 - 30;
    assert_eq!(er_orders, er_expected);
    assert_eq!(
        db.number("SELECT count(*) FROM orders WHERE orderId LIKE '000000-%'"),
        er_expected
    );
    // BaseEntity's stamps are set.
    for t in ["customers", "orders"] {
        assert_eq!(
            db.number(&format!(
                "SELECT count(*) FROM {t} WHERE created_on IS NULL OR updated_on < created_on"
            )),
            0
        );
    }
    // The results files say Dababase, as PadoGrid's do.
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(files.len(), 3);
    for f in files {
        let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
        assert!(
            text.starts_with("******************************************\nGroup Test (Dababase)\n")
        );
        assert!(
            text.contains("edgebench percentiles per operation"),
            "{text}"
        );
    }
}

fn upserts_are_idempotent(server: Server) {
    let Some(db) = PrivateDb::create(server) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(NW);
    let pool = db.pool(2);
    run(&cfg, &pool, dir.path());
    let customers = db.number("SELECT count(*) FROM customers");
    let orders = db.number("SELECT count(*) FROM orders");
    let created = |db: &PrivateDb, col: &str| {
        db.number(&match server {
            Server::Postgres => format!(
                "SELECT (extract(epoch from {col}) * 1000000)::bigint FROM customers WHERE customerId = '000000-0007'"
            ),
            Server::MariaDb => format!(
                "SELECT CAST(UNIX_TIMESTAMP({col}) * 1000000 AS SIGNED) FROM customers WHERE customerId = '000000-0007'"
            ),
        })
    };
    let (created1, updated1) = (created(&db, "created_on"), created(&db, "updated_on"));
    std::thread::sleep(Duration::from_millis(5));
    run(&cfg, &pool, dir.path());
    assert_eq!(db.number("SELECT count(*) FROM customers"), customers);
    assert_eq!(db.number("SELECT count(*) FROM orders"), orders);
    assert_eq!(created(&db, "created_on"), created1, "created_on is kept");
    assert!(created(&db, "updated_on") > updated1, "updated_on moves");
}

fn the_pool_size_bounds_the_connections(server: Server) {
    let Some(db) = PrivateDb::create(server) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(
        "groupNames=g1\ng1.threadCount=8\ng1.totalInvocationCount=2400\ng1.operations=put1\n\
         put1.testCase=put\nput1.factory.class=CustomerFactoryImpl\nput1.factory.key.isRandom=false\n\
         put1.factory.key.prefix=c\nput1.factory.key.length=10\n",
    );
    let pool = db.pool(3);
    let most = AtomicUsize::new(0);
    let done = AtomicBool::new(false);
    let runs = std::thread::scope(|s| {
        s.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                let n = db.connections() as usize;
                most.fetch_max(n, Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let r = run(&cfg, &pool, dir.path()).0;
        done.store(true, Ordering::Relaxed);
        r
    });
    // All 8 threads ran their share, through at most 3 connections.
    assert_eq!(runs[0].actual_invocations, 2400);
    assert_eq!(runs[0].thread_ms.len(), 8);
    assert_eq!(db.number("SELECT count(*) FROM customers"), 2400);
    let most = most.load(Ordering::Relaxed);
    assert!(
        (1..=3).contains(&most),
        "{most} connections seen, pool_size 3"
    );
}

fn reads_of_missing_keys_are_counted(server: Server) {
    let Some(db) = PrivateDb::create(server) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // Nothing written: the tables are created empty, every read misses.
    let cfg = config(
        "groupNames=g1\ng1.threadCount=2\ng1.totalInvocationCount=10\ng1.operations=get1,getall1\n\
         get1.testCase=get\nget1.factory.class=CustomerFactoryImpl\nget1.factory.key.isRandom=false\n\
         getall1.testCase=getall\ngetall1.batchSize=3\ngetall1.totalEntryCount=1\n\
         getall1.factory.class=CustomerFactoryImpl\n",
    );
    let (runs, status) = run(&cfg, &db.pool(2), dir.path());
    assert_eq!(runs[0].actual_invocations, 10);
    assert!(
        status.contains("[g1.get1.get] 10 of 10 keys read found no row\n"),
        "{status}"
    );
    // getall1: one distinct key per batch (totalEntryCount 1), so 10 keys asked in all.
    assert!(
        status.contains("[g1.getall1.getall] 10 of 10 keys read found no row\n"),
        "{status}"
    );
    assert_eq!(db.number("SELECT count(*) FROM customers"), 0);
}

fn cli(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = crate::common::edgebench()
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn the_cli_runs_lists_and_deletes(server: Server) {
    let Some(db) = PrivateDb::create(server) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let prop = dir.path().join("nw.properties");
    std::fs::write(&prop, NW).unwrap();
    let prop = prop.to_str().unwrap();
    let url = db.url();
    let base = ["perf", "test_group", "-db", "--db", &url, "-prop", prop];
    let with = |extra: &[&'static str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        cli(dir.path(), &a)
    };
    // Before anything is written: no tables.
    let (code, out, err) = with(&["-list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("customers: no table\norders: no table\n"),
        "{out}"
    );

    let (code, out, err) = with(&["-run"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("created table customers\ncreated table orders\n"),
        "{out}"
    );
    assert!(out.contains("| g1 | 4 | 40 |"), "{out}");
    let product = if server == Server::Postgres {
        "postgresql"
    } else {
        "mariadb"
    };
    // The database is the run's PadoGrid app: results/perf/perf_test_<product>/.
    let app = format!("results/perf/perf_test_{product}");
    let files: BTreeSet<String> = std::fs::read_dir(dir.path().join(app))
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for g in ["g1", "g2", "g3"] {
        let prefix = format!("group-{g}-{product}-");
        assert!(files.iter().any(|f| f.starts_with(&prefix)), "{files:?}");
    }

    let orders = db.number("SELECT count(*) FROM orders");
    // A row of someone else's, which -delete must leave alone.
    let other = "INSERT INTO customers (customerId, city) VALUES ('ALFKI', 'Berlin')";
    match server {
        Server::Postgres => db.pg().batch_execute(other).unwrap(),
        Server::MariaDb => db.my().query_drop(other).unwrap(),
    }
    let (code, out, err) = with(&["-list"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(&format!(
            "customers: 41 rows; the groups write 40 keys, 40 present\n\
             orders: {orders} rows; the groups write {orders} keys, {orders} present\n"
        )),
        "{out}"
    );
    let (code, out, err) = with(&["-delete"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains(&format!(
            "customers: deleted 40 rows\norders: deleted {orders} rows\n"
        )),
        "{out}"
    );
    assert_eq!(db.number("SELECT count(*) FROM customers"), 1);
    assert_eq!(db.number("SELECT count(*) FROM orders"), 0);
    let (_, out, _) = with(&["-list"]);
    assert!(
        out.contains("customers: 1 rows; the groups write 40 keys, 0 present\n"),
        "{out}"
    );
}

#[test]
fn bad_input_gets_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let nw = dir.path().join("nw.properties");
    std::fs::write(&nw, NW).unwrap();
    let nw = nw.to_str().unwrap();
    let no_factory = dir.path().join("plain.properties");
    std::fs::write(
        &no_factory,
        "groupNames=g1\ng1.operations=put1\nput1.map=map1\nput1.testCase=put\n",
    )
    .unwrap();
    let no_factory = no_factory.to_str().unwrap();
    for (args, code, want) in [
        (
            vec!["-db", "-run", "-prop", no_factory, "--db", "postgres:///x"],
            2,
            "edgebench: ERROR: data object factory not set for group g1, operation put1. (set put1.factory.class=",
        ),
        (
            vec!["-db", "-run", "-prop", nw, "--db", "redis://127.0.0.1:6379"],
            2,
            "edgebench: --db: unknown database URL scheme \"redis\"",
        ),
        (
            vec!["-db", "-run", "-prop", nw, "--db", "postgres://root@127.0.0.1:notaport/nw"],
            2,
            "edgebench: --db: invalid PostgreSQL URL",
        ),
        (
            vec!["-db", "-run", "-prop", nw, "--db", "mysql://root@127.0.0.1:3306"],
            2,
            "edgebench: --db: \"mysql://root@127.0.0.1:3306\" names no database",
        ),
        (
            vec!["-db", "-run", "-prop", nw],
            2,
            "edgebench: -db needs a database: give --db URL or create etc/db.properties",
        ),
        (
            vec!["-db", "-run", "-prop", nw, "--db", "postgres://root@127.0.0.1:1/nw"],
            1,
            "edgebench: cannot connect to postgres at 127.0.0.1:1, database nw, user root: ",
        ),
        (
            vec!["-db", "-run", "-prop", nw, "--db", "mysql://root@127.0.0.1:1/nw"],
            1,
            "edgebench: cannot connect to mysql at 127.0.0.1:1, database nw, user root: ",
        ),
    ] {
        let mut a = vec!["perf", "test_group"];
        a.extend(args.iter());
        let (got, _, err) = cli(dir.path(), &a);
        assert_eq!(got, Some(code), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with(want), "{args:?}: {err}");
    }
}

/// Each scenario runs on both servers, as `<scenario>::postgres` and `<scenario>::mariadb`.
macro_rules! on_both_servers {
    ($($scenario:ident),* $(,)?) => {
        $(
            mod $scenario {
                #[test]
                fn postgres() {
                    super::$scenario(super::Server::Postgres);
                }

                #[test]
                fn mariadb() {
                    super::$scenario(super::Server::MariaDb);
                }
            }
        )*
    };
}

on_both_servers!(
    rows_read_back_equal_what_was_written,
    upserts_are_idempotent,
    the_pool_size_bounds_the_connections,
    the_cli_runs_lists_and_deletes,
    reads_of_missing_keys_are_counted,
);

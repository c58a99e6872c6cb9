//! Unit tests of the PostgreSQL store: the pure parts (URLs, the environment, errors), then
//! against the machine's server (the private database, racing updates, and the EXPLAIN check
//! that every read, update and delete is served by an index without a sort).

use postgres::config::Host;

use std::time::Duration;

use postgres::types::Type;
use postgres::Client;

use super::config::passwd_user;
use super::errors::connect_error;
use super::schema::*;
use super::*;
use crate::store::{CoreData, StoreError};
use crate::v2018::{Event, Reading};

fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone())
}

fn tcp(name: &str) -> Host {
    Host::Tcp(name.into())
}

fn unix(dir: &str) -> Host {
    Host::Unix(dir.into())
}

fn message(e: StoreError) -> String {
    match e {
        StoreError::Backend { backend, message } => {
            assert_eq!(backend, "postgres");
            assert!(!message.contains('\n'), "one line: {message:?}");
            message
        }
        other => panic!("expected a postgres Backend error, got {other:?}"),
    }
}

// ---- pure parts ----

/// The connection config of a URL that parses.
fn url_config(url: &str) -> postgres::Config {
    config_from_url(url)
        .unwrap_or_else(|e| panic!("{e}"))
        .config()
        .clone()
}

#[test]
fn tcp_url_gives_host_port_user_and_database() {
    let c = url_config("postgres://bob@127.0.0.1:5433/db1");
    assert_eq!(c.get_hosts(), [tcp("127.0.0.1")]);
    assert_eq!(c.get_ports(), [5433]);
    assert_eq!(c.get_user(), Some("bob"));
    assert_eq!(c.get_dbname(), Some("db1"));
    assert_eq!(endpoint(&c), "127.0.0.1:5433");
}

#[test]
fn socket_url_gives_the_socket_directory_and_default_port() {
    let c = url_config("postgresql:///db2?host=/var/run/postgresql");
    assert_eq!(c.get_hosts(), [unix("/var/run/postgresql")]);
    assert_eq!(c.get_dbname(), Some("db2"));
    assert!(c.get_user().is_some(), "the OS user by default");
    assert_eq!(endpoint(&c), "/var/run/postgresql:5432");

    // No host at all: libpq's default socket directory; no database: left unset.
    let c = url_config("postgresql://");
    assert_eq!(c.get_hosts(), [unix(DEFAULT_SOCKET_DIR)]);
    assert_eq!(c.get_dbname(), None);
}

#[test]
fn bad_urls_name_the_url_and_the_forms_without_the_password() {
    let e = config_from_url("mysql://u@h/db").err();
    assert_eq!(
        e.as_deref(),
        Some(
            "invalid PostgreSQL URL \"mysql://u@h/db\": expected \
             postgres://user@127.0.0.1:5432/db or postgresql:///db?host=/var/run/postgresql"
        )
    );
    let e = config_from_url("postgres://u:secret@h:notaport/db")
        .err()
        .unwrap_or_default();
    assert!(
        e.starts_with("invalid PostgreSQL URL \"postgres://u:***@h:notaport/db\": "),
        "{e}"
    );
    assert!(e.ends_with(URL_FORMS), "{e}");
    assert!(!e.contains("secret") && !e.contains('\n'), "{e}");
}

#[test]
fn a_url_takes_pgpassword_and_pgsslrootcert_as_libpq_does_but_not_pgsslmode() {
    let dir = tempfile::tempdir().unwrap();
    let ca = crate::transport::certs::PrivateCa::new()
        .unwrap()
        .write_files(dir.path())
        .unwrap()
        .ca_cert;
    let ca_text = ca.display().to_string();
    let env = lookup(&[
        ("PGPASSWORD", "from-env"),
        ("PGSSLROOTCERT", ca_text.as_str()),
        ("PGSSLMODE", "verify-full"),
        ("USER", "u"),
    ]);
    let c = config_from_url_with("postgres://u@127.0.0.1/db", &env).unwrap();
    assert_eq!(c.config().get_password(), Some(&b"from-env"[..]));
    // PGSSLMODE is not read: a plain URL stays plain.
    assert_eq!(
        c.tls(),
        &PgTls {
            mode: SslMode::Disable,
            root_cert: Some(ca.clone())
        }
    );
    assert!(!c.encrypts());
    let c =
        config_from_url_with("postgres://u:given@127.0.0.1/db?sslmode=verify-full", &env).unwrap();
    assert_eq!(c.config().get_password(), Some(&b"given"[..]));
    assert_eq!(c.tls().root_cert.as_deref(), Some(ca.as_path()));
    assert!(c.encrypts());
    assert_eq!(c.describe_tls(), ", TLS (sslmode verify-full)");

    let e = config_from_url_with("postgres://u:pw@h/db?sslmode=allow", lookup(&[])).unwrap_err();
    assert!(
        e.contains("sslmode \"allow\": give disable, prefer, require"),
        "{e}"
    );
    assert!(!e.contains("pw@"), "{e}");
}

#[test]
fn env_defaults_are_libpqs_with_the_transports_host() {
    let env = lookup(&[("USER", "alice")]);
    let c = config_from_lookup(PgTransport::Tcp, &env).config().clone();
    assert_eq!(c.get_hosts(), [tcp("127.0.0.1")]);
    assert_eq!(c.get_ports(), [5432]);
    assert_eq!(c.get_user(), Some("alice"));
    assert_eq!(c.get_password(), None);
    assert_eq!(c.get_dbname(), None);
    assert_eq!(c.get_connect_timeout(), None);
    assert_eq!(c.get_application_name(), Some("edgebench"));
    let c = config_from_lookup(PgTransport::Uds, &env).config().clone();
    assert_eq!(c.get_hosts(), [unix("/var/run/postgresql")]);
    assert_eq!(endpoint(&c), "/var/run/postgresql:5432");

    // No USER: the password database's name for our uid.
    let c = config_from_lookup(PgTransport::Tcp, lookup(&[]))
        .config()
        .clone();
    assert_eq!(c.get_user().map(str::to_owned), passwd_user());
    assert!(c.get_user().is_some());
}

#[test]
fn env_variables_take_precedence_and_pghost_is_picked_by_kind() {
    let env = lookup(&[
        ("PGHOST", "/tmp/pgsock, db.example"),
        ("PGPORT", "6543"),
        ("PGUSER", "bob"),
        ("USER", "alice"),
        ("PGPASSWORD", "pw"),
        ("PGDATABASE", "mydb"),
        ("PGCONNECT_TIMEOUT", "3"),
        ("PGAPPNAME", "bench"),
    ]);
    let c = config_from_lookup(PgTransport::Tcp, &env).config().clone();
    assert_eq!(c.get_hosts(), [tcp("db.example")]);
    assert_eq!(c.get_ports(), [6543]);
    assert_eq!(c.get_user(), Some("bob"));
    assert_eq!(c.get_password(), Some(&b"pw"[..]));
    assert_eq!(c.get_dbname(), Some("mydb"));
    assert_eq!(c.get_connect_timeout(), Some(&Duration::from_secs(3)));
    assert_eq!(c.get_application_name(), Some("bench"));
    let c = config_from_lookup(PgTransport::Uds, &env).config().clone();
    assert_eq!(c.get_hosts(), [unix("/tmp/pgsock")]);

    // A PGHOST of the other kind is not used; empty and unparsable values are unset.
    let env = lookup(&[
        ("PGHOST", "db.example"),
        ("PGPORT", "bogus"),
        ("PGUSER", ""),
        ("USER", "alice"),
        ("PGCONNECT_TIMEOUT", "0"),
    ]);
    let c = config_from_lookup(PgTransport::Uds, &env).config().clone();
    assert_eq!(c.get_hosts(), [unix(DEFAULT_SOCKET_DIR)]);
    assert_eq!(c.get_ports(), [5432]);
    assert_eq!(c.get_user(), Some("alice"));
    assert_eq!(c.get_connect_timeout(), None);
    let c = config_from_lookup(PgTransport::Tcp, lookup(&[("PGHOST", "/tmp/pgsock")]))
        .config()
        .clone();
    assert_eq!(c.get_hosts(), [tcp(DEFAULT_TCP_HOST)]);
}

#[test]
fn no_server_fails_with_the_endpoint_and_the_fix() {
    // Port 1 on the loopback: nothing listens there, the connection is refused at once.
    let c = config_from_lookup(PgTransport::Tcp, lookup(&[("PGPORT", "1"), ("USER", "u")]));
    let m = message(
        PgDatabase::create(&c)
            .err()
            .unwrap_or_else(|| panic!("connected to port 1")),
    );
    assert_eq!(
        m,
        "cannot connect to the server at 127.0.0.1:1 as u: error connecting to server: \
         Connection refused (os error 111) (is PostgreSQL running? set PGHOST/PGPORT or \
         give a postgres:// URL)"
    );

    let env = lookup(&[("PGHOST", "/nonexistent/edgebench"), ("USER", "u")]);
    let c = config_from_lookup(PgTransport::Uds, env);
    let m = message(
        PgDatabase::create(&c)
            .err()
            .unwrap_or_else(|| panic!("connected")),
    );
    assert!(
        m.starts_with("cannot connect to the server at /nonexistent/edgebench:5432 as u: "),
        "{m}"
    );
    assert!(m.ends_with(&format!("({CONNECT_FIX})")), "{m}");
}

// ---- against the machine's server ----

/// A private database on the server the PG* variables name (the socket by default).
fn private_database() -> PgDatabase {
    PgDatabase::create(&config_from_env(PgTransport::Uds)).unwrap_or_else(|e| {
        panic!("{e}; this test needs a PostgreSQL server and fails rather than skip without one")
    })
}

fn admin_client() -> Client {
    let mut admin = config_from_env(PgTransport::Uds);
    if admin.config().get_dbname().is_none() {
        admin.config_mut().dbname(ADMIN_DATABASE);
    }
    admin
        .connect()
        .unwrap_or_else(|e| panic!("{}", connect_error(&admin, &e)))
}

fn database_exists(client: &mut Client, name: &str) -> bool {
    let row = client
        .query_one(
            "SELECT count(*) FROM pg_database WHERE datname = $1",
            &[&name],
        )
        .unwrap_or_else(|e| panic!("{e}"));
    row.get::<_, i64>(0) == 1
}

#[test]
fn dropping_the_private_database_drops_it_on_the_server() {
    let database = private_database();
    let name = database.name().to_string();
    assert!(
        name.starts_with("edgebench_") && name.len() == "edgebench_".len() + 12,
        "{name}"
    );
    assert!(
        database
            .describe()
            .contains(&format!(", database {name}, user ")),
        "{}",
        database.describe()
    );
    let mut admin = admin_client();
    assert!(database_exists(&mut admin, &name));
    // An open store does not keep the database alive.
    let mut store = database.open_store().unwrap_or_else(|e| panic!("{e}"));
    store.event_count().unwrap_or_else(|e| panic!("{e}"));
    drop(database);
    assert!(!database_exists(&mut admin, &name), "{name} is still there");
    assert!(
        store.event_count().is_err(),
        "the store's connection was closed"
    );
}

#[test]
fn racing_updates_of_one_reading_lose_no_field() {
    let database = private_database();
    let mut store = database.open_store().unwrap_or_else(|e| panic!("{e}"));
    let mut r = Reading {
        device: "d".into(),
        name: "n".into(),
        value: "v0".into(),
        ..Reading::default()
    };
    let id = store.add_reading(&mut r).unwrap_or_else(|e| panic!("{e}"));
    const ROUNDS: i64 = 200;
    // One worker sets `value`, the other `origin`: a write based on a stale read would put
    // back the other worker's old value.
    std::thread::scope(|scope| {
        for worker in 0..2 {
            let (id, database) = (id.clone(), &database);
            scope.spawn(move || {
                let mut store = database.open_store().unwrap_or_else(|e| panic!("{e}"));
                for i in 1..=ROUNDS {
                    let mut update = Reading {
                        id: id.clone(),
                        ..Reading::default()
                    };
                    if worker == 0 {
                        update.value = format!("v{i}");
                    } else {
                        update.origin = i;
                    }
                    store
                        .update_reading(&update)
                        .unwrap_or_else(|e| panic!("{e}"));
                }
            });
        }
    });
    let got = store.reading_by_id(&id).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((got.value.as_str(), got.origin), ("v200", ROUNDS));
}

/// Sample arguments of each read, update and delete, as the `EXECUTE` argument list.
fn sample_arguments(statement: &str) -> &'static str {
    const ID: &str = "'5b4f00000000000000000001'";
    match statement {
        "event_by_id" | "event_for_update" | "readings_of_event" | "delete_event"
        | "reading_by_id" | "reading_for_update" | "delete_reading" => {
            "('5b4f00000000000000000001')"
        }
        "update_event" => {
            "('5b4f00000000000000000001', '{\"id\":\"5b4f00000000000000000001\",\
             \"device\":\"d1\",\"created\":5,\"pushed\":0,\"readings\":[]}', '1')"
        }
        "update_reading" => {
            "('5b4f00000000000000000001', '{\"id\":\"5b4f00000000000000000001\",\
             \"device\":\"d1\",\"name\":\"n1\",\"created\":5}', '1')"
        }
        "readings_of_events" => "(ARRAY['5b4f00000000000000000001', '5b4f00000000000000000002'])",
        "event_count_by_device" => "('d1')",
        "events_by_device" | "readings_by_device" | "readings_by_name" => "('d1', 10)",
        "events_by_created" | "readings_by_created" => "(3, 7, 10)",
        "events_created_before" => "(7)",
        "readings_by_device_and_name" => "('d1', 'n1', 10)",
        "event_count" | "events" | "events_pushed" | "readings" | "reading_count" => "",
        other => panic!("add sample arguments for statement {other} ({ID} is an id)"),
    }
}

/// Every node type of an `EXPLAIN (FORMAT JSON)` plan, depth first.
fn node_types(plan: &serde_json::Value, out: &mut Vec<String>) {
    if let Some(node) = plan.get("Node Type").and_then(|n| n.as_str()) {
        out.push(node.to_string());
    }
    for child in plan
        .get("Plans")
        .and_then(|p| p.as_array())
        .into_iter()
        .flatten()
    {
        node_types(child, out);
    }
}

#[test]
fn every_read_update_and_delete_is_served_by_an_index_without_a_sort() {
    let database = private_database();
    let mut store = database.open_store().unwrap_or_else(|e| panic!("{e}"));
    // 1000 events of 50 devices, 5000 readings of 50 names, a few events pushed: each
    // sample argument selects a small part of a table, as in a benchmark's dataset.
    for i in 0..1000_i64 {
        let mut e = Event {
            device: format!("d{}", i % 50),
            created: i,
            pushed: if i % 20 == 0 { i } else { 0 },
            readings: (0..5)
                .map(|n| Reading {
                    name: format!("n{n}"),
                    ..Reading::default()
                })
                .collect(),
            ..Event::default()
        };
        store.add_event(&mut e).unwrap_or_else(|e| panic!("{e}"));
    }
    let mut client = database.connect().unwrap_or_else(|e| panic!("{e}"));
    // Tables this small would be read whole: forbid that, so the plan shows the index the
    // planner would use on a big table.
    client
        .batch_execute("ANALYZE; SET enable_seqscan = off")
        .unwrap_or_else(|e| panic!("{e}"));
    let explained: Vec<&str> = STATEMENTS
        .iter()
        .filter(|(_, sql, _)| {
            ["SELECT", "UPDATE", "DELETE", "WITH"]
                .iter()
                .any(|k| sql.starts_with(k))
                && !sql.contains("INSERT")
        })
        .map(|(name, _, _)| *name)
        .collect();
    assert_eq!(
        explained.len(),
        STATEMENTS.len() - 3,
        "all but 2 inserts and TRUNCATE"
    );
    for &(name, sql, types) in STATEMENTS {
        if !explained.contains(&name) {
            continue;
        }
        // An ORDER BY without a LIMIT returns every match. When the planner expects many
        // (a generic plan of `created < $1` guesses a third of the table), a bitmap scan
        // and a Sort can cost less than walking the index in order, and it may choose
        // that; with a LIMIT the index order must do (docs/stores/postgres.md).
        let may_sort = sql.contains("ORDER BY") && !sql.contains("LIMIT");
        let types: Vec<&str> = types.iter().map(Type::name).collect();
        let prepare = if types.is_empty() {
            format!("PREPARE {name} AS {sql}")
        } else {
            format!("PREPARE {name}({}) AS {sql}", types.join(", "))
        };
        client
            .batch_execute(&prepare)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        // Custom plans for the first executions of a prepared statement, then usually a
        // generic one: both must use the indexes.
        for mode in ["force_custom_plan", "force_generic_plan"] {
            client
                .batch_execute(&format!("SET plan_cache_mode = {mode}"))
                .unwrap_or_else(|e| panic!("{e}"));
            let explain = format!(
                "EXPLAIN (FORMAT JSON) EXECUTE {name}{}",
                sample_arguments(name)
            );
            let row = client
                .query_one(&explain, &[])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            let plan: serde_json::Value = row.get(0);
            let mut nodes = Vec::new();
            for root in plan.as_array().into_iter().flatten() {
                if let Some(p) = root.get("Plan") {
                    node_types(p, &mut nodes);
                }
            }
            assert!(!nodes.is_empty(), "{name}: no plan in {plan}");
            assert!(
                !nodes.iter().any(|n| n == "Seq Scan"),
                "{name} ({mode}) has a Seq Scan: {nodes:?}\n{plan:#}"
            );
            assert!(
                may_sort || !nodes.iter().any(|n| n == "Sort"),
                "{name} ({mode}) sorts: {nodes:?}\n{plan:#}"
            );
        }
    }
}

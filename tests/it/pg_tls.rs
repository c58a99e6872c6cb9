//! PostgreSQL in secure mode (issue 30): TLS with libpq's `sslmode` and a scram-sha-256
//! password, against a private server that takes only `hostssl` connections
//! ([`PrivatePg`]). A run over `verify-full` stores and reads back under the column
//! `PostgreSQL_TCP+TLS`; plain text, a wrong password and a certificate from another CA are
//! refused with one line that names the target and says what the server or the handshake
//! said.

use edgebench::store::postgres::{config_from_url, PgDatabase};
use edgebench::store::CoreData as _;
use edgebench::transport::certs::PrivateCa;

use crate::common::private_pg::{PrivatePg, PASSWORD, USER};

/// `sslmode=verify-full&sslrootcert=CA` for the server's own CA.
fn verify_full(pg: &PrivatePg) -> String {
    format!(
        "sslmode=verify-full&sslrootcert={}",
        pg.certs().ca_cert.display()
    )
}

/// The message of a store error, whole.
fn error_of<T>(result: Result<T, edgebench::store::StoreError>) -> String {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn coredata_over_verify_full_stores_and_reads_back_and_plain_text_is_refused() {
    let pg = PrivatePg::start();
    let secure = pg.url(&verify_full(&pg));
    let plain = pg.url("sslmode=disable");
    let targets = format!("{secure},plain={plain},sqlite");
    let (dir, code, stdout, stderr) = crate::common::store_and_read_back(&targets);
    // One target failed, so the run says so in its exit code; the others ran.
    assert_eq!(code, Some(1), "{stderr}");
    assert!(
        stdout.starts_with(
            "| Benchmark | PostgreSQL_TCP+TLS (micro/op) | PostgreSQL_TCP+TLS_EdgeX4 (micro/op) \
             | SQLite_Embedded (micro/op) | SQLite_Embedded_EdgeX4 (micro/op) |\n"
        ),
        "{stdout}"
    );
    let failures: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("edgebench: target plain:"))
        .collect();
    assert_eq!(failures.len(), 1, "{stderr}");
    let failure = failures[0];
    assert!(
        failure.contains(&format!(
            "cannot connect to the server at 127.0.0.1:{}",
            pg.port()
        )),
        "{failure}"
    );
    assert!(
        failure.contains("no encryption"),
        "the server's words: {failure}"
    );
    assert!(
        failure.contains("add sslmode=verify-full"),
        "the fix: {failure}"
    );
    assert!(!failure.contains(PASSWORD), "{failure}");

    let tls_columns = ["PostgreSQL_TCP+TLS", "PostgreSQL_TCP+TLS_EdgeX4"];
    let results = crate::common::ran_all_three(dir.path(), &tls_columns);
    let tls = &results.targets[0];
    assert!(
        tls.endpoint.contains("TLS (sslmode verify-full)"),
        "{}",
        tls.endpoint
    );
}

#[test]
fn a_verify_full_store_is_encrypted_stores_and_reads_back() {
    let pg = PrivatePg::start();
    let config = config_from_url(&pg.url(&verify_full(&pg))).unwrap();
    assert!(config.encrypts());
    let database = PgDatabase::create(&config).unwrap_or_else(|e| panic!("{e}"));

    // The server says this very connection is TLS, and the password was checked.
    let mut client = database.config().connect().unwrap();
    let row = client
        .query_one(
            "SELECT ssl, version FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .unwrap();
    assert!(row.get::<_, bool>(0));
    assert!(row.get::<_, String>(1).starts_with("TLSv1."));

    let mut store = database.open_store().unwrap_or_else(|e| panic!("{e}"));
    let mut event = edgebench::v2018::testing::event("tls-device", 1_000, &["a", "b", "c"]);
    let id = store.add_event(&mut event).unwrap();
    let back = store.event_by_id(&id).unwrap();
    assert_eq!(back.device, "tls-device");
    let values: Vec<&str> = back.readings.iter().map(|r| r.value.as_str()).collect();
    assert_eq!(values, ["a@0", "b@0", "c@0"]);
    assert_eq!(store.event_count().unwrap(), 1);
}

#[test]
fn a_wrong_password_gives_the_servers_error_and_another_ca_fails_the_handshake() {
    let pg = PrivatePg::start();
    let wrong = pg
        .url(&verify_full(&pg))
        .replace(&format!(":{PASSWORD}@"), ":wrong@");
    let e = error_of(PgDatabase::create(&config_from_url(&wrong).unwrap()));
    assert!(
        e.contains(&format!(
            "password authentication failed for user \"{USER}\""
        )),
        "{e}"
    );
    assert!(e.contains("check the role and its password"), "{e}");
    assert!(!e.contains('\n'), "{e}");

    let other = tempfile::tempdir().unwrap();
    let other_ca = PrivateCa::new().unwrap().write_files(other.path()).unwrap();
    let url = pg.url(&format!(
        "sslmode=verify-full&sslrootcert={}",
        other_ca.ca_cert.display()
    ));
    let e = error_of(PgDatabase::create(&config_from_url(&url).unwrap()));
    assert!(e.contains("invalid peer certificate"), "{e}");
    assert!(e.contains("does not verify against sslrootcert"), "{e}");
    assert!(!e.contains(PASSWORD), "{e}");

    // `require` encrypts without checking: the same foreign CA does not matter...
    let url = pg.url("sslmode=require");
    PgDatabase::create(&config_from_url(&url).unwrap()).unwrap_or_else(|e| panic!("{e}"));
    // ...and `verify-ca` checks the chain but not the name (the certificate does not name
    // 127.0.0.2, and 127.0.0.2 reaches the loopback all the same).
    let url = pg.url(&verify_full(&pg)).replace("127.0.0.1", "127.0.0.2");
    let e = error_of(PgDatabase::create(&config_from_url(&url).unwrap()));
    assert!(e.contains("invalid peer certificate"), "{e}");
    let url = url.replace("verify-full", "verify-ca");
    PgDatabase::create(&config_from_url(&url).unwrap()).unwrap_or_else(|e| panic!("{e}"));
}

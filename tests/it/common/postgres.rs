//! PostgreSQL backends for the conformance suite: a private database per test on the
//! machine's server, reached the way the `pg-tcp` / `pg-uds` shortcuts reach it (the PG*
//! variables and libpq's defaults), and dropped when the backend drops.

use edgebench::store::postgres::{config_from_env, PgDatabase, PgTransport};

use super::Backend;

/// A store on a fresh private database (`edgebench_<random>`). Fails, with the fix, when no
/// PostgreSQL answers: CI must run this suite, not skip it.
pub fn private_database(transport: PgTransport) -> Backend {
    let config = config_from_env(transport);
    let database = PgDatabase::create(&config).unwrap_or_else(|e| {
        panic!("{e}; these tests need a PostgreSQL server and fail rather than skip without one")
    });
    let store = database.open_store().unwrap_or_else(|e| panic!("{e}"));
    // The backend drops the store first, so its connection closes before the database goes.
    Backend::new(Box::new(store), database)
}

/// [`private_database`] over TCP (`pg-tcp`).
pub fn pg_tcp() -> Backend {
    private_database(PgTransport::Tcp)
}

/// [`private_database`] over the Unix socket (`pg-uds`).
pub fn pg_uds() -> Backend {
    private_database(PgTransport::Uds)
}

//! Errors: every failure of the PostgreSQL store as one-line [`StoreError::Backend`] text
//! that names the statement or the endpoint, and the fix that fits what the server said.

use postgres::error::SqlState;

use super::config::endpoint;
use super::schema::{BACKEND, CONNECT_FIX};
use super::tls::{PgConfig, PgConnectError};
use crate::store::shared::chain;
use crate::store::StoreError;

pub(super) fn backend_error(message: String) -> StoreError {
    StoreError::Backend {
        backend: BACKEND,
        message,
    }
}

/// A failed statement of the store, named by its [`Statements`](super::Statements) field.
pub(super) fn query_error(statement: &str, e: &postgres::Error) -> StoreError {
    let io = std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>());
    let fix = if e.is_closed() || io {
        " (connection lost: is PostgreSQL still running?)"
    } else {
        ""
    };
    backend_error(format!("{statement}: {}{fix}", chain(e)))
}

/// A connection to `config` that failed, with the fix that fits what the server (or the TLS
/// handshake) said.
pub(super) fn connect_error(config: &PgConfig, e: &PgConnectError) -> StoreError {
    let user = config.config().get_user().unwrap_or("(OS user)");
    let said = e.to_string();
    let fix = match e.code() {
        // pg_hba.conf's words when only `hostssl` lines match.
        Some(c)
            if *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
                && said.contains("no encryption") =>
        {
            "the server takes only TLS connections here: add sslmode=verify-full&sslrootcert=CA \
             (or sslmode=require) to the URL"
        }
        Some(c)
            if *c == SqlState::INVALID_PASSWORD
                || *c == SqlState::INVALID_AUTHORIZATION_SPECIFICATION =>
        {
            "check the role and its password: set PGUSER/PGPASSWORD or put user:password in the URL"
        }
        Some(c) if *c == SqlState::INVALID_CATALOG_NAME => {
            "the database does not exist: set PGDATABASE or the URL's /db to an existing one"
        }
        _ if said.contains("server does not support TLS") => {
            "the server has ssl = off: turn it on, or connect with sslmode=disable"
        }
        _ if said.contains("invalid peer certificate") => {
            "the server's certificate does not verify against sslrootcert: give the CA that \
             signed it, or sslmode=require to encrypt without checking"
        }
        _ => CONNECT_FIX,
    };
    let over = config
        .tls_words()
        .map_or_else(String::new, |w| format!(" over {w}"));
    backend_error(format!(
        "cannot connect to the server at {} as {user}{over}: {said} ({fix})",
        endpoint(config.config()),
    ))
}

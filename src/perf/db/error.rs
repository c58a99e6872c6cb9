//! Why `-db` could not run ([`DbError`]), and the pieces of its messages every stage shares.
//!
//! Invariant: an input error's one line names the input and the fix; a URL in a message never
//! shows its password.

/// The URL forms `--db` takes, for error messages.
pub(super) const URL_FORMS: &str = "use postgres://user@127.0.0.1:5432/db, \
                         postgresql:///db?host=/var/run/postgresql or mysql://root@127.0.0.1:3306/db";

/// Why `-db` could not run.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    /// Bad input (a URL, the settings file, a factory): the message names it and the fix.
    #[error("{0}")]
    Input(String),
    /// The database could not be reached or refused a statement.
    #[error("{0}")]
    Database(String),
    /// A results file could not be written.
    #[error("{0}")]
    Write(#[from] std::io::Error),
}

pub(super) fn input(message: String) -> DbError {
    DbError::Input(message)
}

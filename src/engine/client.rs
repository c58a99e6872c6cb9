//! One connection's state: what Redis keeps per client.

use super::Key;

/// A client: the selected database, MULTI queue, WATCHed keys, name and protocol.
#[derive(Debug, Clone)]
pub struct Client {
    /// CLIENT ID.
    pub id: u64,
    /// The selected database (SELECT).
    pub db: usize,
    /// Protocol version: 2 or 3 (HELLO).
    pub resp: u8,
    /// CLIENT SETNAME.
    pub name: Option<Vec<u8>>,
    /// CLIENT SETINFO lib-name / lib-ver.
    pub lib_name: Option<Vec<u8>>,
    /// CLIENT SETINFO lib-ver.
    pub lib_ver: Option<Vec<u8>>,
    /// Whether AUTH succeeded (or no password is required).
    pub authenticated: bool,
    /// Commands queued after MULTI; `None` outside a transaction.
    pub multi: Option<Vec<Vec<Vec<u8>>>>,
    /// A queued command was rejected (unknown, wrong arity): EXEC must fail with EXECABORT.
    pub multi_dirty: bool,
    /// WATCHed keys: (db, key, version when watched).
    pub watched: Vec<(usize, Key, u64)>,
    /// Set by QUIT: the server closes the connection after the reply.
    pub closing: bool,
}

impl Client {
    pub(crate) fn new(id: u64) -> Client {
        Client {
            id,
            db: 0,
            resp: 2,
            name: None,
            lib_name: None,
            lib_ver: None,
            authenticated: true,
            multi: None,
            multi_dirty: false,
            watched: Vec::new(),
            closing: false,
        }
    }

    /// Whether a MULTI is open.
    pub fn in_multi(&self) -> bool {
        self.multi.is_some()
    }
}

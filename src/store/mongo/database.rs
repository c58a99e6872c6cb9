//! [`MongoDatabase`], the private database of one run: it connects, creates
//! `edgebench_<random>` with its indexes, hands out one [`MongoStore`] per worker (clones of
//! one `Client`, so workers share its connection pool), and drops the database when it drops.
//!
//! The part that knows nothing of the 2018 layout ([`PrivateDatabase`]: connect, ping, name,
//! index creation, drop) is shared with the EdgeX 4.0 document layout
//! ([`crate::store::mongo::edgex4`]).

use mongodb::bson::{doc, Document, RawDocumentBuf};
use mongodb::options::ClientOptions;
use mongodb::sync::{Client, Collection, Database};
use mongodb::IndexModel;

use super::base::{
    backend_error, Fidelity, MongoLayout, MongoStore, EVENTS, READINGS, SERVER_SELECTION_TIMEOUT,
};
use crate::redact::redact_password;
use crate::store::shared::{one_line, private_name};
use crate::store::StoreResult;

/// A run's private `edgebench_<random>` database on a MongoDB server, whatever its layout:
/// created by [`PrivateDatabase::create`] once the server has answered a ping, dropped when
/// this value drops.
pub(crate) struct PrivateDatabase {
    client: Client,
    db: Database,
    /// The server, as messages name it (the URL without its password).
    server: String,
}

impl PrivateDatabase {
    /// Connects to `url` (`mongodb://HOST:PORT`) and names a fresh database. Fails within
    /// about 5 s (unless the URL sets `serverSelectionTimeoutMS`) when no server answers.
    pub(crate) fn create(url: &str) -> StoreResult<Self> {
        let server = redact_password(url);
        let mut options = ClientOptions::parse(url).run().map_err(|e| {
            backend_error(format!(
                "invalid MongoDB URL {server}: {} (expected mongodb://HOST:PORT)",
                one_line(&e.to_string(), " ")
            ))
        })?;
        if options.server_selection_timeout.is_none() {
            options.server_selection_timeout = Some(SERVER_SELECTION_TIMEOUT);
        }
        if options.connect_timeout.is_none() {
            options.connect_timeout = Some(SERVER_SELECTION_TIMEOUT);
        }
        Self::connect(options, server)
    }

    /// [`PrivateDatabase::create`] with options built by the caller (TLS, credentials, a
    /// command monitor, ...), used as given.
    pub(crate) fn create_with_options(options: ClientOptions) -> StoreResult<Self> {
        let hosts: Vec<String> = options.hosts.iter().map(|h| h.to_string()).collect();
        Self::connect(options, format!("mongodb://{}", hosts.join(",")))
    }

    fn connect(options: ClientOptions, server: String) -> StoreResult<Self> {
        let client = Client::with_options(options).map_err(|e| {
            backend_error(format!(
                "cannot set up a MongoDB client for {server}: {}",
                one_line(&e.to_string(), " ")
            ))
        })?;
        // The client connects lazily: ping first, so an unreachable server is reported as
        // such and not as a failed index creation.
        client
            .database("admin")
            .run_command(doc! { "ping": 1 })
            .run()
            .map_err(|e| {
                let said = one_line(&e.to_string(), " ");
                let fix = if said.contains("invalid peer certificate") {
                    "the server's certificate does not verify: give the CA that signed it, \
                     tlsCAFile=FILE"
                } else if said.contains("Connection reset by peer") && !server.contains("tls=") {
                    "a server that takes only TLS does that to a plain client: add \
                     tls=true&tlsCAFile=FILE to the URL"
                } else {
                    "start mongod there, or point the mongo target at a running server: \
                     mongo=mongodb://HOST:PORT"
                };
                backend_error(format!("cannot reach MongoDB at {server}: {said} ({fix})"))
            })?;
        let db = client.database(&private_name());
        Ok(PrivateDatabase { client, db, server })
    }

    /// Creates `indexes` (their keys) on `collection`, which creates the collection. An
    /// error leaves the database to this value's drop.
    pub(crate) fn create_indexes(&self, collection: &str, indexes: &[Document]) -> StoreResult<()> {
        let models = indexes
            .iter()
            .map(|keys| IndexModel::builder().keys(keys.clone()).build());
        self.db
            .collection::<Document>(collection)
            .create_indexes(models)
            .run()
            .map_err(|e| {
                backend_error(format!(
                    "cannot create the indexes of {}.{collection} at {}: {}",
                    self.db.name(),
                    self.server,
                    one_line(&e.to_string(), " ")
                ))
            })?;
        Ok(())
    }

    /// A collection of this database, its documents read and written raw.
    pub(crate) fn collection(&self, name: &str) -> Collection<RawDocumentBuf> {
        self.db.collection(name)
    }

    /// The database's name, `edgebench_<random>`.
    pub(crate) fn name(&self) -> &str {
        self.db.name()
    }

    /// The server, its password masked.
    pub(crate) fn server(&self) -> &str {
        &self.server
    }

    /// The client.
    pub(crate) fn client(&self) -> &Client {
        &self.client
    }
}

impl Drop for PrivateDatabase {
    fn drop(&mut self) {
        // Best effort: a server that is gone took the database with it, or its owner drops it.
        let _ = self.db.drop().run();
    }
}

/// The private database of one run: created with its indexes by [`MongoDatabase::create`],
/// dropped when this value drops.
pub struct MongoDatabase {
    database: PrivateDatabase,
    layout: MongoLayout,
    fidelity: Fidelity,
}

impl MongoDatabase {
    /// Connects to `url` (`mongodb://HOST:PORT`), creates a fresh database
    /// `edgebench_<random>` with the collections' indexes. Fails within about 5 s (unless the
    /// URL sets `serverSelectionTimeoutMS`) when no server answers.
    pub fn create(url: &str, layout: MongoLayout, fidelity: Fidelity) -> StoreResult<Self> {
        Self::with_indexes(PrivateDatabase::create(url)?, layout, fidelity)
    }

    /// [`MongoDatabase::create`] with options built by the caller (TLS, credentials, a
    /// command monitor, ...), used as given.
    pub fn create_with_options(
        options: ClientOptions,
        layout: MongoLayout,
        fidelity: Fidelity,
    ) -> StoreResult<Self> {
        Self::with_indexes(
            PrivateDatabase::create_with_options(options)?,
            layout,
            fidelity,
        )
    }

    fn with_indexes(
        database: PrivateDatabase,
        layout: MongoLayout,
        fidelity: Fidelity,
    ) -> StoreResult<Self> {
        // `_id` is indexed by MongoDB itself: by-id calls, "all" lists, `$in` loads and
        // deletes by id. The rest serve one query family each (see docs/stores/mongo.md).
        database.create_indexes(
            EVENTS,
            &[
                doc! { "device": 1, "created": 1, "_id": 1 },
                doc! { "created": 1, "_id": 1 },
                doc! { "pushed": 1, "_id": 1 },
            ],
        )?;
        database.create_indexes(
            READINGS,
            &[
                doc! { "device": 1, "created": 1, "_id": 1 },
                doc! { "name": 1, "created": 1, "_id": 1 },
                doc! { "device": 1, "name": 1, "created": 1, "_id": 1 },
                doc! { "created": 1, "_id": 1 },
            ],
        )?;
        Ok(MongoDatabase {
            database,
            layout,
            fidelity,
        })
    }

    /// A store on this database: one per worker. Stores share the client's connection pool.
    pub fn open_store(&self) -> StoreResult<MongoStore> {
        Ok(MongoStore {
            events: self.database.collection(EVENTS),
            readings: self.database.collection(READINGS),
            layout: self.layout,
            fidelity: self.fidelity,
        })
    }

    /// The database's name, `edgebench_<random>`.
    pub fn name(&self) -> &str {
        self.database.name()
    }

    /// One line for reports: server, database, layout, fidelity.
    pub fn describe(&self) -> String {
        let fidelity = match (self.layout, self.fidelity) {
            (MongoLayout::Embedded, Fidelity::Y2018) => {
                "2018 (no effect: embedded readings need no per-reading query)".to_string()
            }
            (_, fidelity) => fidelity.to_string(),
        };
        format!(
            "MongoDB {}, database {}, layout {}, fidelity {fidelity}",
            self.database.server(),
            self.database.name(),
            self.layout
        )
    }

    /// The client, e.g. to inspect the database in a test.
    pub fn client(&self) -> &Client {
        self.database.client()
    }
}

//! Why a target could not be parsed, started or reached.

use crate::store::backend::BackendError;
use crate::store::redis::spawn::SpawnError;
use crate::store::StoreError;

/// Why a target could not be parsed, started or reached. Each message is one line that names
/// the input and the fix.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TargetError {
    /// An empty item in a comma-separated list.
    #[error("empty target in {value:?}: remove the extra comma")]
    Empty {
        /// The whole value the item came from.
        value: String,
    },
    /// Neither a known target name nor a URL.
    #[error("unknown target {item:?}: use {forms} or NAME=any of these")]
    Unknown {
        /// The item as given.
        item: String,
        /// Every backend's item forms.
        forms: String,
    },
    /// A URL that does not parse.
    #[error("bad target URL {url:?}: {reason}")]
    BadUrl {
        /// The URL as given, its password (if any) shown as `***`.
        url: String,
        /// What is wrong with it, and the fix.
        reason: String,
    },
    /// A `?…` target option that is unknown, has a bad value, or is on a target that
    /// takes none.
    #[error("bad target option in {item:?}: {reason}")]
    BadOption {
        /// The whole `--target` item.
        item: String,
        /// What is wrong, and the fix.
        reason: String,
    },
    /// A `NAME=` that would break Go benchmark names.
    #[error(
        "bad target name {name:?} in {item:?}: use only letters, digits, '_' and '.' (the \
         name becomes part of Go benchmark names)"
    )]
    BadName {
        /// The name as given.
        name: String,
        /// The item it came from.
        item: String,
    },
    /// A cluster could not be spawned.
    #[error("target {name}: {error}")]
    SpawnCluster {
        /// The target's column name.
        name: String,
        /// Why.
        error: crate::store::redis::ClusterSpawnError,
    },
    /// A cluster could not be reached.
    #[error("target {name}: {error}")]
    Cluster {
        /// The target's column name.
        name: String,
        /// Why.
        error: crate::transport::cluster::ClusterError,
    },
    /// The server could not be spawned.
    #[error("target {name}: {error}")]
    Spawn {
        /// The target's column name.
        name: String,
        /// Why.
        error: SpawnError,
    },
    /// The server could not be reached.
    #[error("target {name} ({endpoint}): cannot connect: {reason}")]
    Connect {
        /// The target's column name.
        name: String,
        /// The endpoint URL.
        endpoint: String,
        /// The OS or client error, with a hint.
        reason: String,
    },
    /// A document store could not be opened (unreachable, refused, no rights to create a
    /// database, ...).
    #[error("target {name}: {error}")]
    Store {
        /// The target's column name.
        name: String,
        /// What the store said (it names the server and the fix).
        error: StoreError,
    },
    /// The target cannot run this workload (a document store for a Redis load, mini-redis
    /// for anything but GET/SET).
    #[error("target {name}: {why}")]
    Unsuitable {
        /// The target's column name.
        name: String,
        /// Why, and what to use instead.
        why: String,
    },
    /// Something answered, but not as a Redis server that we can use.
    #[error("target {name} ({endpoint}): connected, but PING failed: {reason}")]
    Ping {
        /// The target's column name.
        name: String,
        /// The endpoint URL.
        endpoint: String,
        /// The server's reply or error, with a hint.
        reason: String,
    },
}

impl TargetError {
    /// A backend's error, for the target named `name`.
    pub fn of(name: &str, error: BackendError) -> TargetError {
        let name = name.to_string();
        match error {
            BackendError::Unsuitable(why) => TargetError::Unsuitable { name, why },
            BackendError::Connect { endpoint, reason } => TargetError::Connect {
                name,
                endpoint,
                reason,
            },
            BackendError::Ping { endpoint, reason } => TargetError::Ping {
                name,
                endpoint,
                reason,
            },
            BackendError::Store(error) => TargetError::Store { name, error },
            BackendError::Spawn(error) => TargetError::Spawn { name, error },
            BackendError::SpawnCluster(error) => TargetError::SpawnCluster { name, error },
            BackendError::Cluster(error) => TargetError::Cluster { name, error },
        }
    }
}
